/*
** private_tree.c - a differentially private decision tree on public bins
** ("algorithm": "private_tree", id 6, classification only), in the spirit of
** PrivaTree (Vos et al. 2023), behind learner.h. It captures interactions
** between a few features, which additive learners (naive Bayes, boosting
** on single features) cannot.
**
** Contract:
**   1. Options: "bins" (integer 2..64, default 32): equal-width public bins
**      of every numeric feature over its public [min, max] (rdt_learn_bin); a
**      categorical feature bins by its code (n_values + 1 bins, `other`
**      last). "depth" (integer 1..8, or "auto", the default): the levels of
**      splits; "auto" chooses it in finish() from a noisy row count (3b).
**      Candidates, all public (schema and options only): every (numeric
**      feature f, threshold t) for t = 0 .. B_f - 2, the left side holding
**      bins <= t; every (categorical feature f with B_f >= 2, code v), the
**      left side holding code v, the right side the rest. When there is no
**      candidate at all (no feature, or only categorical features with one
**      bin), the public rule makes the tree a single leaf (used depth 0);
**      otherwise the used depth is "depth" (or the one "auto" chooses) and
**      the tree is complete and oblivious: every internal node has a split,
**      whatever the rows, and all the nodes of one level share the same one
**      (one selection per level, 3).
**   2. State before finish() (in rounds, contract 8's vector instead): a
**      compact binned copy of the rows, one record
**      per row: the bin of every feature (one byte each when every feature
**      has at most 256 bins, else two) and the class (two bytes). Memory:
**      n * (d * w + 2) bytes (w = 1 or 2) for n rows, grown by doubling,
**      plus 8n bytes of row order during finish(). A failed allocation in
**      row() or merge() marks the state failed: finish() then returns 0 and
**      releases nothing.
**   3. Privacy. Neighbouring relation: add or remove one row. The budget
**      eps = num / 2^32 (noise.h) is split exactly with D the used depth:
**      per = floor(num / (2D)) for each level (0 when D = 0), eps_leaf =
**      num - D * per >= num / 2, so D * per + eps_leaf = num: the total is
**      exactly eps.
**      - Level l (0 <= l < D): one split for all its 2^l nodes, chosen by
**        permute-and-flip (select.h) at eps `per` over the utilities
**          u(f, t) = sum over the level's nodes, over the two sides of the
**                    candidate, of M * max_k n_k + floor(M * ||n||_2),
**        n the side's vector of class counts, M = 256 (the nodes' rows are
**        fixed by the splits released at earlier levels: adaptive
**        composition). Adding a row adds 1 to one class count of one side
**        of each candidate in exactly one node: max_k n_k moves by 0 or 1,
**        ||n||_2 by a value in [0, 1] (triangle inequality; counts are
**        non-negative), so floor(M ||n||_2) by 0 .. M, and u by 0 .. 2M,
**        always upward: sensitivity 2M = 512, monotone (select.h contract
**        2). Each level is `per`-DP, the D levels D * per-DP (sequential
**        composition). Why this utility: the majority term (rows a
**        majority-vote stump gets right) is flat when one class leads on
**        both sides of every candidate, so the selection is then uniform;
**        the norm term is not (||a||_2 + ||b||_2 = ||a + b||_2 only for
**        proportional class counts), so a split that separates the classes
**        still wins. Why one split per level: the selection sees every row,
**        so the utilities' gaps do not shrink by 2^l with depth while the
**        noise of permute-and-flip stays 2M / per. floor(M sqrt(.)) is
**        computed with integers only (exact: every side holds < 2^32 rows,
**        so the sum of squares fits 64 bits).
**      - Leaves: the 2^D leaves hold disjoint rows; each releases its C class
**        counts plus discrete Laplace noise of scale 1/eps_leaf. Adding a
**        row moves one count of one leaf by 1: L1 sensitivity 1, eps_leaf-DP.
**      Together: D * per + eps_leaf = eps. The utility's sensitivity does
**      not depend on any private count (no Gini ratio with a private
**      denominator). Models of payload version 1 (earlier releases) chose
**      one split per node by the majority term alone (sensitivity 1, the
**      level's nodes disjoint: parallel composition), with the same shares;
**      they still decode and predict.
**   3b. "depth": "auto": eps_count = floor(num / 20) goes first to the row
**      count plus discrete Laplace of scale 1/eps_count (sensitivity 1);
**      D = floor(log2(n^ eps / 12)) clamped into 1..8 (0 without a
**      candidate) is post-processing of it: each of the 2^D leaves then
**      expects at least 12 / eps rows, about 6 noise scales (1/eps_leaf,
**      eps_leaf >= eps/2) for its majority class count, whatever the number
**      of classes K: a leaf worth its label is mostly one class, so what its
**      label needs does not grow with K. The 12 was chosen leaving one data
**      set out (scripts/private_tree_depth_lodo.py).
**      The levels and the leaves share eps - eps_count exactly as in 3, so
**      the total is eps. start() refuses an eps too small for 8 levels;
**      finish() sets up the noise of every possible D before the count's
**      draw. An allocation failure after that draw releases nothing and
**      marks the state failed (no second draw); what it could reveal is a
**      function of the noisy count, already paid for.
**   3c. use_row_count (learner.h): a caller that holds a released noisy
**      count of the rows (auto's n^) hands it over before finish() (in
**      rounds: before round_open(0), at every party alike); an
**      "auto" depth then takes D from it by 3b's rule with the whole eps,
**      and the state becomes the tree of that fixed depth: the levels and
**      the leaves share all of eps as in 3, no count is drawn. D is
**      post-processing of the caller's release; the model is 3's tree of
**      depth D (its payload's depth is D) and eps-DP as such.
**   4. finish() runs one selection per level, whatever the rows (an empty
**      node adds zeros to the level's utilities), and draws the noise of
**      every leaf count: the control flow does not depend on the rows, nor
**      do the draws of each selection (one coin per candidate, select.h
**      item 4). Everything that can fail (noise parameters, every
**      allocation) comes before the first draw; it returns 0 without
**      releasing anything otherwise. Afterwards the row copy and every
**      scratch histogram are wiped and freed; only the splits and the noisy
**      leaf counts remain. Non-private ("epsilon": null): the best split at
**      each level (first in candidate order), exact leaf counts, shares 0.
**   5. predict() walks the tree with the row's public bins; the leaf's class
**      probabilities are its counts clamped at 0 plus a pseudo-count of half
**      the noise scale (0.5 / eps_leaf; 1 when not private), normalised: they
**      are finite and add up to 1. Before finish() it predicts uniformly.
**   6. Payload (little-endian): u32 version (2; 1 is still read), u32 bins, u32 depth (the
**      option; 0 for "auto", whose count share is then implied), u32 used
**      depth D, u32 private (0 or 1), u64 per-level eps
**      num, u64 eps_leaf num, u32 C, u32 d, then the 2^D - 1 internal nodes
**      in heap order (node i has children 2i+1 left and 2i+2 right) as
**      (u32 feature, u32 threshold or code), then the 2^D * C leaf counts as
**      u64 (two's complement), leaf by leaf. decode() checks every field
**      against the schema, the options' ranges and the common facts (the
**      used depth and the shares recomputed from them, each split a
**      candidate of contract 1, in version 2 the same split at every node of
**      a level) and the payload's length before it allocates; re-encoding
**      gives the same bytes (the version read is kept).
**   7. encode() writes released states only: on an unreleased one it writes
**      nothing and marks the buffer failed. merge() appends the rows of an
**      unreleased state of the same shape (never one in rounds: partial.h
**      adds those); row() ignores a released state.
**   8. Rounds (learner.h contract 10; shard mode, sql_shard.c contract 9):
**      the releases of 3 and 3b in finish()'s order, one round per level.
**      Round r (0 <= r < D) is level r: for each of its 2^r nodes, in heap
**      order, a block of (B + 1) C counters (B: every bin of every feature):
**      the node's C class totals, then its histogram of bin x class, as
**      finish() counts them. A row adds 1 to d + 1 counters of one block,
**      its node found by the message's splits of levels 0 .. r - 1: the row
**      and the message decide it alone, and no row is kept. The coordinator,
**      given the sum: in round 0 of "auto" first the noisy count of 3b (the
**      root's class totals summed) and the depth; then the level's one
**      selection, the same utilities summed over the level's nodes and the
**      same permute-and-flip at eps_level (pt_utilities, pt_select: finish()'s
**      own code, from the stream where the previous round left it); after
**      level D - 1 the leaves, no extra round: each node's two sides under
**      the chosen split are its histogram's left bins of that feature and
**      its totals less them, exactly finish()'s leaf counts, then their noise
**      leaf by leaf (pt_noise_leaves). Without a candidate there is one
**      round, the root's totals being the one leaf. rounds() is "depth" (1
**      without a candidate) or, for "auto", 8, the most it may choose (the
**      options' and the schema's, never the rows'); an "auto" tree's model
**      comes after its D rounds. The message (u32 the round it opens, u32 D,
**      then the splits of the levels so far as (u32 feature, u32 threshold or
**      code)) holds released values only: D and every split are in the model.
**      Privacy. Neighbouring relation: add or remove one row of the union of
**      the sites' rows. The merged vector is the union's exact per-node
**      histograms (integer sums), so every release is 3's and 3b's on the
**      union: the count (sensitivity 1, eps_count), level r's selection
**      (sensitivity 2M = 512, monotone, eps_level; its nodes fixed by the
**      splits released before it: adaptive composition over the rounds) and
**      the leaves (L1 sensitivity 1, eps_leaf). Total: eps_count + D *
**      eps_level + eps_leaf = eps, finish()'s, each round released once (the
**      ledger, sql_ledger.c contract 10). The histograms are exact and
**      unnoised: only the curator's coordinator sees them (shard mode; the
**      utilities are not linear, so masked noisy shares cannot carry them,
**      and federated mode refuses this learner). A sum with a counter outside
**      [0, 2^32) is no sum of this plan's partials: round_release() refuses
**      it before any draw. A round's vector holds at most 2^27 counters (the
**      deepest level's is checked when round 0 opens: a parameter error).
*/
#include "private_tree.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../digest.h"
#include "../select.h"

#define PT_VERSION 2u /* 2: one split per level (contract 3); 1: one per node, still read */
#define PT_M 256u     /* the utility's scale: sensitivity 2 * PT_M (contract 3) */

#define PT_COUNT_SHARE 20 /* "depth": "auto": eps / 20 for the noisy row count */
#define PT_MAX_ROUND_COUNTERS ((uint64_t)1 << 27) /* shard mode: the largest round's vector (1 GiB) */

typedef struct pt_state {
  uint32_t version;      /* of the payload: PT_VERSION, or the one decoded */
  uint32_t n_classes, n_features, bins, depth, depth_eff; /* depth 0: "auto" */
  int is_private, released, failed;
  rdt_eps eps_level, eps_leaf;
  rdt_eps eps_count, eps_rest; /* "auto": the count's share, and what the tree shares */
  rdt_feature *features; /* binning facts only (type, min, max, n_values): no pointers */
  uint32_t *n_bins;      /* per feature */
  uint32_t *n_cand;      /* per feature: its candidates (contract 1) */
  size_t *hoff;          /* per feature: its first bin in a node histogram; hoff[d] = all bins */
  size_t total_cand;
  int wide;              /* two bytes per bin */
  size_t rec;            /* bytes per row record */
  unsigned char *rows;
  size_t n_rows, cap_rows;
  uint32_t *split_f, *split_t; /* released: 2^D - 1 internal nodes */
  int64_t *leaf;               /* released: 2^D * C counts */
  double *proba;               /* released: leaf probabilities */
  /* Contract 8, rounds: the open round, its exact vector, and the splits of
  ** the levels before it (from the round message) */
  int in_rounds;
  uint32_t round;
  int64_t *vec;
  size_t n_vec;
  uint32_t msg_f[RDT_PT_MAX_DEPTH], msg_t[RDT_PT_MAX_DEPTH];
} pt_state;

static size_t pt_internal(const pt_state *st) { return ((size_t)1 << st->depth_eff) - 1; }
static size_t pt_leaves(const pt_state *st) { return (size_t)1 << st->depth_eff; }

static void pt_free_rows(pt_state *st) {
  if (st->rows) sodium_memzero(st->rows, st->cap_rows * st->rec);
  free(st->rows);
  st->rows = NULL;
  st->n_rows = st->cap_rows = 0;
}

/* Back to the unreleased state after a release that failed: the leaves
** (cells of them) are exact until noised, so they are wiped. */
static void pt_unrelease(pt_state *st, size_t cells) {
  if (st->leaf) sodium_memzero(st->leaf, cells * sizeof *st->leaf);
  free(st->split_f);
  free(st->split_t);
  free(st->leaf);
  free(st->proba);
  st->split_f = st->split_t = NULL;
  st->leaf = NULL;
  st->proba = NULL;
}

static void pt_free(void *p) {
  pt_state *st = p;
  if (!st) return;
  pt_free_rows(st);
  if (st->vec) sodium_memzero(st->vec, st->n_vec * sizeof *st->vec);
  free(st->vec);
  size_t nl = pt_leaves(st) * st->n_classes;
  if (st->leaf) sodium_memzero(st->leaf, nl * sizeof *st->leaf);
  if (st->proba) sodium_memzero(st->proba, nl * sizeof *st->proba);
  free(st->leaf);
  free(st->proba);
  free(st->split_f);
  free(st->split_t);
  free(st->features);
  free(st->n_bins);
  free(st->n_cand);
  free(st->hoff);
  free(st);
}

/* Contract 3: the exact split of eps over the levels and the leaves. */
static void pt_split(rdt_eps eps, uint32_t depth_eff, rdt_eps *level, rdt_eps *leaf) {
  uint64_t per = depth_eff ? eps.num / (2 * (uint64_t)depth_eff) : 0;
  level->num = per;
  leaf->num = eps.num - per * depth_eff; /* per * D <= num / 2: no overflow */
}

/* A state of the schema's shape: NULL with err set, or with err empty when
** out of memory. */
static pt_state *pt_alloc(const rdt_schema *s, uint32_t bins, uint32_t depth, int is_private, char *err, size_t en) {
  if (en) err[0] = 0;
  uint32_t C = s->n_classes, d = s->n_features;
  pt_state *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->version = PT_VERSION;
  st->n_classes = C;
  st->n_features = d;
  st->bins = bins;
  st->depth = depth;
  st->is_private = is_private;
  st->features = calloc((size_t)d + 1, sizeof *st->features);
  st->n_bins = calloc((size_t)d + 1, sizeof *st->n_bins);
  st->n_cand = calloc((size_t)d + 1, sizeof *st->n_cand);
  st->hoff = calloc((size_t)d + 1, sizeof *st->hoff);
  if (!st->features || !st->n_bins || !st->n_cand || !st->hoff) {
    pt_free(st);
    return NULL;
  }
  size_t total = 0; /* <= 1000 features * 65536 bins */
  for (uint32_t f = 0; f < d; f++) {
    const rdt_feature *ft = &s->features[f];
    st->features[f].type = ft->type;
    st->features[f].min = ft->min;
    st->features[f].max = ft->max;
    st->features[f].n_values = ft->n_values;
    uint32_t B = rdt_learn_bins(ft, bins);
    st->n_bins[f] = B;
    st->n_cand[f] = ft->type == RDT_FEATURE_CATEGORICAL ? (B >= 2 ? B : 0) : B - 1;
    st->total_cand += st->n_cand[f];
    if (B > 256) st->wide = 1;
    st->hoff[f] = total;
    total += B;
  }
  st->hoff[d] = total;
  st->depth_eff = st->total_cand ? depth : 0;
  st->rec = (size_t)d * (st->wide ? 2 : 1) + 2;
  if ((uint64_t)total * C > RDT_PT_MAX_COUNTERS || (uint64_t)pt_leaves(st) * C > RDT_PT_MAX_COUNTERS) {
    if (en) snprintf(err, en, "private_tree: %u classes and these features need more than %llu counters; "
                              "use fewer \"bins\", a smaller \"depth\", fewer classes or values",
                     C, (unsigned long long)RDT_PT_MAX_COUNTERS);
    pt_free(st);
    return NULL;
  }
  return st;
}

/* Contract 3b: the shares of an "auto" depth. */
static void pt_auto_shares(rdt_eps eps, rdt_eps *count, rdt_eps *rest) {
  count->num = eps.num / PT_COUNT_SHARE;
  rest->num = eps.num - count->num;
}

/* Contract 3b: the depth for a (noisy) row count. */
static uint32_t pt_auto_depth(double n_hat, double eps) {
  double leaves = n_hat * eps / RDT_LEARN_TREE_LEAF_ROWS;
  uint32_t D = 1;
  while (D < RDT_PT_MAX_DEPTH && leaves >= (double)(2u << D)) D++; /* 2^(D+1) <= leaves: one more level */
  return D;
}

/* An integer option in lo..hi, or (when auto_ok) "auto", read as 0. */
static int pt_int_option(const rdt_json *opts, const char *key, uint32_t lo, uint32_t hi, int auto_ok, uint32_t *out,
                         char *err, size_t en) {
  const rdt_json *v = opts ? rdt_json_get(opts, key) : NULL;
  if (!v) return 1;
  if (auto_ok && v->type == RDT_JSON_STRING && strcmp(v->string, "auto") == 0) {
    *out = 0;
    return 1;
  }
  if (v->type != RDT_JSON_NUMBER || !v->is_integer || v->integer < lo || v->integer > hi) {
    if (en) snprintf(err, en, "option \"%s\" must be %san integer from %u to %u", key, auto_ok ? "\"auto\" or " : "", lo, hi);
    return 0;
  }
  *out = (uint32_t)v->integer;
  return 1;
}

static void *pt_start(const rdt_json *opts, const rdt_schema *s, const rdt_learn_common *c, char *err, size_t en) {
  if (en) err[0] = 0;
  if (c->regression) {
    if (en) snprintf(err, en, "private_tree is a classifier: it needs \"classes\", not a regression target");
    return NULL;
  }
  if (s->n_classes < 1) {
    if (en) snprintf(err, en, "private_tree needs at least one class");
    return NULL;
  }
  uint32_t bins = RDT_PT_DEFAULT_BINS, depth = 0; /* 0: "auto" */
  if (!pt_int_option(opts, "bins", 2, RDT_PT_MAX_BINS, 0, &bins, err, en) ||
      !pt_int_option(opts, "depth", 1, RDT_PT_MAX_DEPTH, 1, &depth, err, en))
    return NULL;
  /* "auto": the counters are checked for the deepest tree it may choose */
  pt_state *st = pt_alloc(s, bins, depth ? depth : RDT_PT_MAX_DEPTH, c->is_private != 0, err, en);
  if (!st) return NULL;
  if (!depth) {
    st->depth = 0;
    st->depth_eff = 0; /* chosen in finish() */
    if (st->is_private) {
      pt_auto_shares(c->eps, &st->eps_count, &st->eps_rest);
      if (st->eps_count.num == 0 || st->eps_rest.num < 2 * (uint64_t)RDT_PT_MAX_DEPTH) {
        if (en) snprintf(err, en, "private_tree: epsilon is too small for an \"auto\" depth");
        pt_free(st);
        return NULL;
      }
    }
  } else if (st->is_private) {
    pt_split(c->eps, st->depth_eff, &st->eps_level, &st->eps_leaf);
    if (st->depth_eff && st->eps_level.num == 0) {
      if (en) snprintf(err, en, "private_tree: epsilon is too small to divide over %u levels", st->depth_eff);
      pt_free(st);
      return NULL;
    }
  }
  return st;
}

static uint32_t pt_get_bin(const pt_state *st, const unsigned char *r, uint32_t f) {
  return st->wide ? (uint32_t)r[2 * f] | (uint32_t)r[2 * f + 1] << 8 : r[f];
}

static uint32_t pt_get_class(const pt_state *st, const unsigned char *r) {
  const unsigned char *c = r + st->rec - 2;
  return (uint32_t)c[0] | (uint32_t)c[1] << 8;
}

/* Room for `more` rows; 0 (and the state failed) when it cannot grow. */
static int pt_reserve(pt_state *st, size_t more) {
  if (st->failed) return 0;
  if (more > UINT32_MAX - st->n_rows) { /* row indices are u32 in finish() */
    st->failed = 1;
    return 0;
  }
  size_t need = st->n_rows + more;
  if (need <= st->cap_rows) return 1;
  size_t cap = st->cap_rows ? st->cap_rows : 64;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  if (cap > SIZE_MAX / st->rec) {
    st->failed = 1;
    return 0;
  }
  /* a new block, so that the old one can be wiped before it is freed */
  unsigned char *p = malloc(cap * st->rec);
  if (!p) {
    st->failed = 1;
    return 0;
  }
  if (st->rows) memcpy(p, st->rows, st->n_rows * st->rec);
  size_t n = st->n_rows;
  pt_free_rows(st);
  st->rows = p;
  st->n_rows = n;
  st->cap_rows = cap;
  return 1;
}

static void pt_round_row(pt_state *st, const double *x, uint32_t cls);

static void pt_row(void *p, const double *x, uint32_t cls, double target) {
  (void)target;
  pt_state *st = p;
  if (st->released || cls >= st->n_classes) return;
  if (st->in_rounds) { /* Contract 8: into the round's vector, no row kept */
    pt_round_row(st, x, cls);
    return;
  }
  if (!pt_reserve(st, 1)) return;
  unsigned char *r = st->rows + st->n_rows * st->rec;
  for (uint32_t f = 0; f < st->n_features; f++) {
    uint32_t b = rdt_learn_bin(&st->features[f], st->bins, x[f]);
    if (st->wide) {
      r[2 * f] = (unsigned char)(b & 0xff);
      r[2 * f + 1] = (unsigned char)(b >> 8);
    } else {
      r[f] = (unsigned char)b;
    }
  }
  r[st->rec - 2] = (unsigned char)(cls & 0xff);
  r[st->rec - 1] = (unsigned char)(cls >> 8);
  st->n_rows++;
}

static int pt_same_shape(const pt_state *a, const pt_state *b) {
  if (a->n_classes != b->n_classes || a->n_features != b->n_features || a->bins != b->bins ||
      a->depth != b->depth || a->depth_eff != b->depth_eff || a->is_private != b->is_private ||
      a->eps_level.num != b->eps_level.num || a->eps_leaf.num != b->eps_leaf.num || a->rec != b->rec ||
      a->eps_count.num != b->eps_count.num ||
      a->wide != b->wide)
    return 0;
  for (uint32_t f = 0; f < a->n_features; f++)
    if (a->n_bins[f] != b->n_bins[f] || a->features[f].type != b->features[f].type) return 0;
  return 1;
}

static int pt_merge(void *into, const void *from) {
  pt_state *a = into;
  const pt_state *b = from;
  if (a->released || b->released || a->in_rounds || b->in_rounds || !pt_same_shape(a, b)) return 0;
  if (b->failed) {
    a->failed = 1;
    return 0;
  }
  if (!b->n_rows) return 1;
  if (!pt_reserve(a, b->n_rows)) return 0;
  memcpy(a->rows + a->n_rows * a->rec, b->rows, b->n_rows * b->rec);
  a->n_rows += b->n_rows;
  return 1;
}

/* Contract 5: the leaf probabilities of the released counts. */
static void pt_prepare(pt_state *st) {
  uint32_t C = st->n_classes;
  double a = 1;
  if (st->is_private) {
    a = 0.5 / rdt_eps_to_double(st->eps_leaf);
    if (!(a > 0 && isfinite(a))) a = 1;
  }
  for (size_t j = 0; j < pt_leaves(st); j++) rdt_learn_frequencies(st->leaf + j * C, C, a, st->proba + j * C);
}

static int pt_left(const pt_state *st, uint32_t f, uint32_t t, uint32_t bin) {
  return st->features[f].type == RDT_FEATURE_CATEGORICAL ? bin == t : bin <= t;
}

/* floor(PT_M * sqrt(S)) in integers only: r = floor(sqrt(S)) bit by bit
** (S < 2^64, so r < 2^32), then the largest j < PT_M with
** (PT_M r + j)^2 <= PT_M^2 S, i.e. 2 PT_M r j + j^2 <= PT_M^2 (S - r^2),
** where S - r^2 <= 2r: every term stays below 2^50. A fixed number of steps. */
static int64_t pt_scaled_sqrt(uint64_t S) {
  uint64_t r = 0;
  for (int b = 31; b >= 0; b--) {
    uint64_t c = r | (uint64_t)1 << b;
    if (c * c <= S) r = c;
  }
  uint64_t e = S - r * r, j = 0;
  for (uint64_t c = PT_M / 2; c >= 1; c /= 2)
    if (2 * PT_M * r * (j + c) + (j + c) * (j + c) <= PT_M * PT_M * e) j += c;
  return (int64_t)(PT_M * r + j);
}

/* Contract 3: one side's term, M * max_k n_k + floor(M * ||n||_2), from
** exact non-negative counts (of fewer than 2^32 rows). */
static int64_t pt_side(const int64_t *v, uint32_t n) {
  int64_t m = 0;
  uint64_t S = 0;
  for (uint32_t k = 0; k < n; k++) {
    if (v[k] > m) m = v[k];
    S += (uint64_t)v[k] * (uint64_t)v[k];
  }
  return (int64_t)PT_M * m + pt_scaled_sqrt(S);
}

/* Contract 3: adds to u the utility of every candidate at a node with
** histogram h (bin-major, C classes per bin) and class totals tot. */
static void pt_utilities(const pt_state *st, const int64_t *h, const int64_t *tot, int64_t *left, int64_t *right,
                         int64_t *u) {
  uint32_t C = st->n_classes;
  size_t i = 0;
  for (uint32_t f = 0; f < st->n_features; f++) {
    const int64_t *hf = h + st->hoff[f] * C;
    if (st->features[f].type == RDT_FEATURE_CATEGORICAL) {
      for (uint32_t t = 0; t < st->n_cand[f]; t++) {
        for (uint32_t k = 0; k < C; k++) right[k] = tot[k] - hf[(size_t)t * C + k];
        u[i++] += pt_side(hf + (size_t)t * C, C) + pt_side(right, C);
      }
    } else {
      memset(left, 0, C * sizeof *left);
      for (uint32_t t = 0; t < st->n_cand[f]; t++) {
        for (uint32_t k = 0; k < C; k++) {
          left[k] += hf[(size_t)t * C + k];
          right[k] = tot[k] - left[k];
        }
        u[i++] += pt_side(left, C) + pt_side(right, C);
      }
    }
  }
}

/* Contract 3: the level's split from its utilities (nc of them; pf: nc of
** scratch): permute-and-flip at eps_level, or the first best when not
** private; as (feature, threshold or code). 0 when the parameters do not fit
** (nothing drawn). */
static int pt_select(const pt_state *st, rdt_rng *noise, const int64_t *util, size_t *pf, uint32_t *f, uint32_t *t) {
  size_t nc = st->total_cand;
  long c = 0;
  if (st->is_private) {
    c = rdt_permute_and_flip(noise, util, nc, st->eps_level, 2 * PT_M, 1, pf);
  } else {
    for (size_t i = 1; i < nc; i++)
      if (util[i] > util[c]) c = (long)i;
  }
  if (c < 0) return 0;
  uint32_t g = 0;
  size_t cc = (size_t)c;
  while (cc >= st->n_cand[g]) cc -= st->n_cand[g++];
  *f = g;
  *t = (uint32_t)cc;
  return 1;
}

/* Contract 3: the noise of every leaf count, leaf by leaf, class by class
** (st->leaf holds the exact counts). */
static void pt_noise_leaves(pt_state *st, rdt_rng *noise, uint64_t ls, uint64_t lt) {
  if (!st->is_private) return;
  size_t n = pt_leaves(st) * st->n_classes;
  for (size_t i = 0; i < n; i++) st->leaf[i] = rdt_learn_add_sat(st->leaf[i], rdt_discrete_laplace(noise, ls, lt));
}

/* Contract 3b: the noisy count and the depth; 0 when the noise cannot be set
** up (nothing drawn). */
static int pt_choose_depth(pt_state *st, rdt_rng *noise, const rdt_eps *count_eps, double n_exact) {
  uint64_t cs = 0, ct = 0, a, b;
  if (st->is_private) {
    if (!rdt_laplace_params(count_eps ? *count_eps : st->eps_count, 1, &cs, &ct)) return 0;
    for (uint32_t D = 1; D <= RDT_PT_MAX_DEPTH; D++) { /* every D it may choose, before the draw */
      rdt_eps l, f;
      pt_split(st->eps_rest, D, &l, &f);
      if (!rdt_laplace_params(l, 2 * PT_M, &a, &b) || !rdt_laplace_params(f, 1, &a, &b)) return 0;
    }
    if (!rdt_laplace_params(st->eps_rest, 1, &a, &b)) return 0;
  }
  double n_hat = n_exact;
  if (st->is_private) n_hat += (double)rdt_discrete_laplace(noise, cs, ct);
  double eps = st->is_private ? rdt_eps_to_double(st->eps_count) + rdt_eps_to_double(st->eps_rest) : 1;
  st->depth_eff = st->total_cand ? pt_auto_depth(n_hat > 0 ? n_hat : 0, eps) : 0;
  if (st->is_private) pt_split(st->eps_rest, st->depth_eff, &st->eps_level, &st->eps_leaf);
  return 1;
}

static int pt_finish_impl(void *p, rdt_rng *noise, const rdt_eps *count_eps) {
  pt_state *st = p;
  if (st->released || st->failed || st->in_rounds) return 0;
  if (!st->depth) {
    if (!pt_choose_depth(st, noise, count_eps, (double)st->n_rows)) return 0;
    st->failed = 1; /* the count is drawn: never a second draw; cleared on success below */
  }
  uint32_t C = st->n_classes;
  uint64_t ls = 0, lt = 0, ss, stt;
  if (st->is_private) {
    /* Everything that can fail comes before the first draw (contract 4). */
    if (!rdt_laplace_params(st->eps_leaf, 1, &ls, &lt)) return 0;
    if (st->depth_eff && !rdt_laplace_params(st->eps_level, 2 * PT_M, &ss, &stt)) return 0; /* select.c's coins */
  }
  size_t n = st->n_rows, ni = pt_internal(st), nl = pt_leaves(st), hn = st->hoff[st->n_features] * C;
  size_t nc = st->total_cand;
  uint32_t *order = malloc((n + 1) * sizeof *order), *tmp = malloc((n + 1) * sizeof *tmp);
  size_t *seg = malloc((nl + 1) * sizeof *seg), *seg2 = malloc((nl + 1) * sizeof *seg2);
  size_t *pf = malloc((nc + 1) * sizeof *pf);
  int64_t *hist = malloc((hn + 1) * sizeof *hist), *tot = malloc(C * sizeof *tot);
  int64_t *left = malloc(C * sizeof *left), *right = malloc(C * sizeof *right);
  int64_t *util = malloc((nc + 1) * sizeof *util);
  st->split_f = calloc(ni + 1, sizeof *st->split_f);
  st->split_t = calloc(ni + 1, sizeof *st->split_t);
  st->leaf = calloc(nl * C, sizeof *st->leaf);
  st->proba = calloc(nl * C, sizeof *st->proba);
  int ok = order && tmp && seg && seg2 && pf && hist && tot && left && right && util && st->split_f && st->split_t &&
           st->leaf && st->proba;
  if (ok) {
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    seg[0] = 0;
    seg[1] = n;
    for (uint32_t l = 0; ok && l < st->depth_eff; l++) {
      size_t nn = (size_t)1 << l;
      /* the level's utilities: the sum over its nodes (contract 3) */
      memset(util, 0, nc * sizeof *util);
      for (size_t j = 0; j < nn; j++) {
        memset(hist, 0, hn * sizeof *hist);
        memset(tot, 0, C * sizeof *tot);
        for (size_t i = seg[j]; i < seg[j + 1]; i++) {
          const unsigned char *r = st->rows + (size_t)order[i] * st->rec;
          uint32_t k = pt_get_class(st, r);
          tot[k]++;
          for (uint32_t f = 0; f < st->n_features; f++) hist[(st->hoff[f] + pt_get_bin(st, r, f)) * C + k]++;
        }
        pt_utilities(st, hist, tot, left, right, util);
      }
      uint32_t f = 0, cc = 0;
      if (!pt_select(st, noise, util, pf, &f, &cc)) { /* unreachable: the parameters were checked above */
        ok = 0;
        break;
      }
      for (size_t j = 0; j < nn; j++) {
        size_t a = seg[j], b = seg[j + 1];
        st->split_f[nn - 1 + j] = f;
        st->split_t[nn - 1 + j] = (uint32_t)cc;
        /* stable partition of the node's rows: left side first */
        size_t m = a;
        for (size_t i = a; i < b; i++)
          if (pt_left(st, f, (uint32_t)cc, pt_get_bin(st, st->rows + (size_t)order[i] * st->rec, f)))
            tmp[m++] = order[i];
        size_t mid = m;
        for (size_t i = a; i < b; i++)
          if (!pt_left(st, f, (uint32_t)cc, pt_get_bin(st, st->rows + (size_t)order[i] * st->rec, f)))
            tmp[m++] = order[i];
        memcpy(order + a, tmp + a, (b - a) * sizeof *order);
        seg2[2 * j] = a;
        seg2[2 * j + 1] = mid;
        seg2[2 * j + 2] = b;
      }
      memcpy(seg, seg2, (2 * nn + 1) * sizeof *seg);
    }
  }
  if (ok) {
    for (size_t j = 0; j < nl; j++) {
      int64_t *cnt = st->leaf + j * C;
      for (size_t i = seg[j]; i < seg[j + 1]; i++) cnt[pt_get_class(st, st->rows + (size_t)order[i] * st->rec)]++;
    }
    pt_noise_leaves(st, noise, ls, lt);
  }
  /* wipe every exact intermediate */
  if (order) sodium_memzero(order, (n + 1) * sizeof *order);
  if (tmp) sodium_memzero(tmp, (n + 1) * sizeof *tmp);
  if (seg) sodium_memzero(seg, (nl + 1) * sizeof *seg);
  if (seg2) sodium_memzero(seg2, (nl + 1) * sizeof *seg2);
  if (hist) sodium_memzero(hist, (hn + 1) * sizeof *hist);
  if (tot) sodium_memzero(tot, C * sizeof *tot);
  if (left) sodium_memzero(left, C * sizeof *left);
  if (right) sodium_memzero(right, C * sizeof *right);
  if (util) sodium_memzero(util, (nc + 1) * sizeof *util);
  free(order);
  free(tmp);
  free(seg);
  free(seg2);
  free(pf);
  free(hist);
  free(tot);
  free(left);
  free(right);
  free(util);
  if (!ok) { /* nothing released: back to the unreleased state */
    pt_unrelease(st, nl * C);
    return 0;
  }
  pt_free_rows(st);
  st->released = 1;
  st->failed = 0;
  pt_prepare(st);
  return 1;
}

static int pt_finish(void *p, rdt_rng *noise) { return pt_finish_impl(p, noise, NULL); }

int rdt_private_tree_finish_count_eps(void *st, rdt_rng *noise, rdt_eps count_eps) {
  return pt_finish_impl(st, noise, &count_eps);
}

/* ---- rounds (Contract 8) -------------------------------------------------- */
/* Round payload (little-endian): u32 the round r it opens (>= 1), u32 the
** used depth D (1 .. 8), then the r splits of levels 0 .. r - 1 as (u32
** feature, u32 threshold or code). Nothing else: D is post-processing of the
** noisy count ("auto") or the options', the splits are released with the
** model. */

/* Most rounds: one per level, the last one's release also the leaves'; one
** when there is no candidate (the root is the only leaf). */
static uint32_t pt_rounds(const void *p) {
  const pt_state *st = p;
  if (!st->total_cand) return 1;
  return st->depth ? st->depth_eff : RDT_PT_MAX_DEPTH;
}

/* Counters of one node's block: its C class totals, then its histogram. */
static size_t pt_block(const pt_state *st) { return (st->hoff[st->n_features] + 1) * (size_t)st->n_classes; }

static int pt_round_fail(char *err, size_t en, const char *msg) {
  if (en) snprintf(err, en, "private_tree: %s", msg);
  return 0;
}

static int pt_round_open(void *p, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en) {
  pt_state *st = p;
  if (en) err[0] = 0;
  if (st->in_rounds || st->n_rows || st->released || st->failed)
    return pt_round_fail(err, en, "a round opens on a fresh state only");
  uint32_t R = pt_rounds(st);
  if (r >= R) return pt_round_fail(err, en, "the round message opens a round beyond the tree's last level");
  if (r == 0 && n != 0) return pt_round_fail(err, en, "the first round has no message");
  /* the deepest level's round is the largest: a parameter error at round 0 */
  if ((uint64_t)pt_block(st) << (R - 1) > PT_MAX_ROUND_COUNTERS) {
    if (en) snprintf(err, en, "private_tree: in shard mode the deepest level's round sends %llu counters (each of its "
                              "%u nodes a histogram of every bin and class), more than %llu; use fewer \"bins\", a "
                              "smaller \"depth\", fewer classes or values",
                     (unsigned long long)((uint64_t)pt_block(st) << (R - 1)), 1u << (R - 1),
                     (unsigned long long)PT_MAX_ROUND_COUNTERS);
    return 0;
  }
  if (r > 0) {
    rdt_reader in = {msg, n, 0, 0};
    uint32_t at = rdt_read_u32(&in), D = rdt_read_u32(&in);
    int bad = in.bad || at != r || n != 8 + 8 * (size_t)r || r >= D ||
              (st->depth ? D != st->depth_eff : D < 1 || D > RDT_PT_MAX_DEPTH);
    for (uint32_t l = 0; !bad && l < r; l++) {
      uint32_t f = rdt_read_u32(&in), t = rdt_read_u32(&in);
      bad = in.bad || f >= st->n_features || t >= st->n_cand[f];
      if (!bad) {
        st->msg_f[l] = f;
        st->msg_t[l] = t;
      }
    }
    if (bad) return pt_round_fail(err, en, "the round message is not one of this plan's rounds");
    if (!st->depth) { /* "auto": the depth the count chose, and the shares it implies (Contract 3b) */
      st->depth_eff = D;
      if (st->is_private) pt_split(st->eps_rest, D, &st->eps_level, &st->eps_leaf);
    }
  }
  st->n_vec = pt_block(st) << r;
  st->vec = calloc(st->n_vec ? st->n_vec : 1, sizeof *st->vec);
  if (!st->vec) return 0;
  st->round = r;
  st->in_rounds = 1;
  return 1;
}

/* Contract 8: a row's contribution, from the row and the message alone: its
** node at the open level (the message's splits), then 1 in its class total
** and in every feature's bin of that node's block. */
static void pt_round_row(pt_state *st, const double *x, uint32_t cls) {
  const uint32_t C = st->n_classes;
  size_t j = 0;
  for (uint32_t l = 0; l < st->round; l++) {
    uint32_t f = st->msg_f[l];
    j = 2 * j + (pt_left(st, f, st->msg_t[l], rdt_learn_bin(&st->features[f], st->bins, x[f])) ? 0 : 1);
  }
  int64_t *b = st->vec + j * pt_block(st);
  b[cls]++;
  for (uint32_t f = 0; f < st->n_features; f++)
    b[C + (st->hoff[f] + rdt_learn_bin(&st->features[f], st->bins, x[f])) * C + cls]++;
}

static uint32_t pt_counters(void *p, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  pt_state *st = p;
  if (!st->in_rounds || max < 1) return 0;
  out[0] = (rdt_span){st->vec, st->n_vec};
  rdt_digest d;
  rdt_digest_init(&d, "rdt-private-tree-rounds-v1");
  const uint64_t facts[] = {st->n_classes, st->n_features, st->bins, st->depth, (uint64_t)st->is_private,
                            st->depth ? st->eps_level.num : 0, st->depth ? st->eps_leaf.num : 0, st->eps_count.num,
                            st->eps_rest.num};
  for (size_t i = 0; i < sizeof facts / sizeof *facts; i++) rdt_digest_u64(&d, facts[i]);
  for (uint32_t f = 0; f < st->n_features; f++) {
    rdt_digest_u64(&d, st->features[f].type);
    rdt_digest_f64(&d, st->features[f].min);
    rdt_digest_f64(&d, st->features[f].max);
    rdt_digest_u64(&d, st->features[f].n_values);
  }
  rdt_digest_final(&d, digest);
  return 1;
}

/* Contract 8, at the coordinator: the summed vector of the open level is
** released as finish() releases that level: for round 0 of "auto" first the
** noisy count and the depth, then the level's selection over the utilities
** summed over its nodes, and after the last level the leaves' exact counts
** (each node's split sides, from its histogram) and their noise. */
static int pt_round_release(void *p, rdt_rng *noise, rdt_bytes *next) {
  pt_state *st = p;
  if (!st->in_rounds || st->released || st->failed) return 0;
  const uint32_t C = st->n_classes, r = st->round;
  const size_t blk = pt_block(st), nn = (size_t)1 << r, nc = st->total_cand;
  /* Exact counts of fewer than 2^32 rows (finish()'s bound); anything else
  ** is no sum of this plan's partials: refused before any draw. */
  for (size_t i = 0; i < st->n_vec; i++)
    if (st->vec[i] < 0 || st->vec[i] > (int64_t)UINT32_MAX) return 0;
  uint64_t ls = 0, lt = 0, ss, stt;
  int64_t *util = malloc((nc + 1) * sizeof *util), *left = malloc(C * sizeof *left), *right = malloc(C * sizeof *right);
  size_t *pf = malloc((nc + 1) * sizeof *pf);
  int ok = util && left && right && pf, step = 0;
  if (ok && !st->depth && r == 0) { /* Contract 3b: the count first; its parameters and every D's checked */
    double n = 0;
    for (uint32_t k = 0; k < C; k++) n += (double)st->vec[k];
    ok = pt_choose_depth(st, noise, NULL, n);
  }
  /* what this release draws: checked before its first draw (for "auto", for every depth, before the count's) */
  int last = ok && r + 1 >= (st->depth_eff ? st->depth_eff : 1);
  if (ok && st->is_private) {
    ok = (!last || rdt_laplace_params(st->eps_leaf, 1, &ls, &lt)) &&
         (!st->depth_eff || rdt_laplace_params(st->eps_level, 2 * PT_M, &ss, &stt));
  }
  size_t ni = pt_internal(st), nl = pt_leaves(st);
  if (ok && last) {
    st->split_f = calloc(ni + 1, sizeof *st->split_f);
    st->split_t = calloc(ni + 1, sizeof *st->split_t);
    st->leaf = calloc(nl * C, sizeof *st->leaf);
    st->proba = calloc(nl * C, sizeof *st->proba);
    ok = st->split_f && st->split_t && st->leaf && st->proba;
  }
  uint32_t f = 0, t = 0;
  if (ok && st->depth_eff) { /* the level's one split (Contract 3) */
    memset(util, 0, nc * sizeof *util);
    for (size_t j = 0; j < nn; j++) pt_utilities(st, st->vec + j * blk + C, st->vec + j * blk, left, right, util);
    ok = pt_select(st, noise, util, pf, &f, &t);
  }
  if (ok && last) {
    if (!st->depth_eff) { /* no candidate: the root is the leaf */
      memcpy(st->leaf, st->vec, C * sizeof *st->leaf);
    } else {
      for (uint32_t l = 0; l < st->depth_eff; l++)
        for (size_t j = 0; j < ((size_t)1 << l); j++) {
          st->split_f[((size_t)1 << l) - 1 + j] = l < r ? st->msg_f[l] : f;
          st->split_t[((size_t)1 << l) - 1 + j] = l < r ? st->msg_t[l] : t;
        }
      for (size_t j = 0; j < nn; j++) { /* node j's two sides: leaves 2j and 2j + 1 */
        const int64_t *tot = st->vec + j * blk, *hf = tot + C + st->hoff[f] * C;
        int64_t *lc = st->leaf + 2 * j * C, *rc = lc + C;
        for (uint32_t b = 0; b < st->n_bins[f]; b++)
          if (pt_left(st, f, t, b))
            for (uint32_t k = 0; k < C; k++) lc[k] += hf[(size_t)b * C + k];
        for (uint32_t k = 0; k < C; k++) rc[k] = tot[k] - lc[k];
      }
    }
    pt_noise_leaves(st, noise, ls, lt);
    st->released = 1;
    st->in_rounds = 0;
    pt_prepare(st);
    step = 2;
  } else if (ok) { /* the next level's message */
    rdt_bytes_u32(next, r + 1);
    rdt_bytes_u32(next, st->depth_eff);
    for (uint32_t l = 0; l <= r; l++) {
      rdt_bytes_u32(next, l < r ? st->msg_f[l] : f);
      rdt_bytes_u32(next, l < r ? st->msg_t[l] : t);
    }
    step = next->oom ? 0 : 1;
  }
  if (util) sodium_memzero(util, (nc + 1) * sizeof *util);
  if (left) sodium_memzero(left, C * sizeof *left);
  if (right) sodium_memzero(right, C * sizeof *right);
  free(util);
  free(left);
  free(right);
  free(pf);
  sodium_memzero(st->vec, st->n_vec * sizeof *st->vec); /* released: the exact vector goes */
  if (!step && !st->released) { /* nothing (more) released */
    pt_unrelease(st, nl * C);
    st->failed = 1;
  }
  return step;
}

static void pt_encode(const void *p, rdt_bytes *out) {
  const pt_state *st = p;
  if (!st->released) { /* contract 7: exact rows never leave */
    out->oom = 1;
    return;
  }
  rdt_bytes_u32(out, st->version);
  rdt_bytes_u32(out, st->bins);
  rdt_bytes_u32(out, st->depth);
  rdt_bytes_u32(out, st->depth_eff);
  rdt_bytes_u32(out, (uint32_t)st->is_private);
  rdt_bytes_u64(out, st->eps_level.num);
  rdt_bytes_u64(out, st->eps_leaf.num);
  rdt_bytes_u32(out, st->n_classes);
  rdt_bytes_u32(out, st->n_features);
  for (size_t i = 0; i < pt_internal(st); i++) {
    rdt_bytes_u32(out, st->split_f[i]);
    rdt_bytes_u32(out, st->split_t[i]);
  }
  for (size_t i = 0; i < pt_leaves(st) * st->n_classes; i++) rdt_bytes_u64(out, (uint64_t)st->leaf[i]);
}

static void *pt_decode(rdt_reader *in, const rdt_schema *s, const rdt_learn_common *c) {
  uint32_t version = rdt_read_u32(in), bins = rdt_read_u32(in), depth = rdt_read_u32(in);
  uint32_t depth_eff = rdt_read_u32(in), priv = rdt_read_u32(in);
  rdt_eps el = {rdt_read_u64(in)}, ef = {rdt_read_u64(in)};
  uint32_t C = rdt_read_u32(in), d = rdt_read_u32(in);
  if (in->bad) return NULL;
  int ok = (version == PT_VERSION || version == 1) && bins >= 2 && bins <= RDT_PT_MAX_BINS && depth <= RDT_PT_MAX_DEPTH &&
           priv <= 1 && C == s->n_classes && C >= 1 && d == s->n_features && (int)priv == (c->is_private != 0) &&
           !c->regression && (depth || (depth_eff >= 1 && depth_eff <= RDT_PT_MAX_DEPTH) || depth_eff == 0);
  char err[8];
  /* "auto" (depth 0): the used depth is the one allocated; 0 only without a candidate (pt_alloc's rule) */
  pt_state *st = ok ? pt_alloc(s, bins, depth ? depth : (depth_eff ? depth_eff : 1), (int)priv, err, sizeof err) : NULL;
  ok = st && st->depth_eff == depth_eff;
  if (ok) {
    st->depth = depth;
    st->version = version;
  }
  rdt_eps split_from = c->eps;
  if (ok && priv && !depth) {
    pt_auto_shares(c->eps, &st->eps_count, &st->eps_rest);
    split_from = st->eps_rest;
  }
  if (ok && priv) {
    rdt_eps want_l, want_f;
    pt_split(split_from, depth_eff, &want_l, &want_f);
    ok = el.num == want_l.num && ef.num == want_f.num && ef.num > 0 && (depth_eff == 0 || el.num > 0);
  } else if (ok) {
    ok = el.num == 0 && ef.num == 0;
  }
  /* the payload must hold every node and count before anything more is allocated */
  if (ok) {
    size_t ni = pt_internal(st), nl = pt_leaves(st);
    ok = (in->n - in->pos) / 8 >= ni + nl * C;
  }
  if (ok) {
    st->eps_level = el;
    st->eps_leaf = ef;
    size_t ni = pt_internal(st), nl = pt_leaves(st);
    st->split_f = calloc(ni + 1, sizeof *st->split_f);
    st->split_t = calloc(ni + 1, sizeof *st->split_t);
    st->leaf = calloc(nl * C, sizeof *st->leaf);
    st->proba = calloc(nl * C, sizeof *st->proba);
    ok = st->split_f && st->split_t && st->leaf && st->proba;
    for (size_t i = 0; ok && i < ni; i++) {
      uint32_t f = rdt_read_u32(in), t = rdt_read_u32(in);
      ok = !in->bad && f < d && t < st->n_cand[f];
      /* version 2: node i's level starts at node 2^l - 1 <= i, whose split it repeats */
      size_t first = 0;
      while (2 * first + 1 <= i) first = 2 * first + 1;
      if (ok && version == PT_VERSION && i != first) ok = f == st->split_f[first] && t == st->split_t[first];
      if (ok) {
        st->split_f[i] = f;
        st->split_t[i] = t;
      }
    }
    for (size_t i = 0; ok && i < nl * C; i++) st->leaf[i] = (int64_t)rdt_read_u64(in);
    ok = ok && !in->bad;
  }
  if (!ok) {
    in->bad = 1;
    pt_free(st);
    return NULL;
  }
  st->released = 1;
  pt_prepare(st);
  return st;
}

static void pt_predict(const void *p, const double *x, double *out) {
  const pt_state *st = p;
  uint32_t C = st->n_classes;
  if (!st->released) { /* contract 5: nothing released, nothing learnt */
    for (uint32_t k = 0; k < C; k++) out[k] = 1.0 / C;
    return;
  }
  size_t node = 0;
  for (uint32_t l = 0; l < st->depth_eff; l++) {
    uint32_t f = st->split_f[node];
    node = pt_left(st, f, st->split_t[node], rdt_learn_bin(&st->features[f], st->bins, x[f])) ? 2 * node + 1
                                                                                               : 2 * node + 2;
  }
  memcpy(out, st->proba + (node - pt_internal(st)) * C, C * sizeof *out);
}

static void pt_describe(const void *p, rdt_bytes *json) {
  const pt_state *st = p;
  char buf[1200], depth[16];
  if (st->depth)
    snprintf(depth, sizeof depth, "%u", st->depth);
  else
    snprintf(depth, sizeof depth, "\"auto\"");
  /* version 1 payloads (earlier releases) chose a split per node by the majority term alone */
  const char *how = st->version == 1
                        ? "at every node of each level a split chosen by permute-and-flip over every (feature, "
                          "threshold or code) candidate, utility = rows classified correctly by the majority class "
                          "of each side (sensitivity 1, monotone; the nodes of a level hold disjoint rows)"
                        : "at each level one split shared by all its nodes, chosen by permute-and-flip over every "
                          "(feature, threshold or code) candidate, utility = sum over the level's nodes and the two "
                          "sides of 256 * (majority class count) + floor(256 * L2 norm of the class counts) "
                          "(sensitivity 512, monotone)";
  if (st->is_private)
    snprintf(buf, sizeof buf,
             "\"mechanism\":\"private decision tree on public bins: %s, then discrete Laplace noise of scale "
             "1/epsilon_leaves on every leaf class count (the leaves are disjoint); epsilon_count + depth * "
             "epsilon_per_level + epsilon_leaves = epsilon\","
             "\"depth\":%s,\"depth_used\":%u,\"bins\":%u,\"epsilon_count\":%.17g,\"epsilon_per_level\":%.17g,"
             "\"epsilon_leaves\":%.17g,",
             how, depth, st->depth_eff, st->bins, rdt_eps_to_double(st->eps_count),
             rdt_eps_to_double(st->eps_level), rdt_eps_to_double(st->eps_leaf));
  else
    snprintf(buf, sizeof buf,
             "\"mechanism\":\"decision tree on public bins, not private: the best split at every %s, exact leaf "
             "counts\",\"depth\":%s,\"depth_used\":%u,\"bins\":%u,\"epsilon_count\":null,"
             "\"epsilon_per_level\":null,\"epsilon_leaves\":null,",
             st->version == 1 ? "node" : "level", depth, st->depth_eff, st->bins);
  rdt_bytes_text(json, buf);
}

/* learner.h's use_row_count (contract 3c): an "auto" depth taken from the
** caller's released count by 3b's rule, then the state of that fixed depth
** with the whole eps (3's split; no count of its own). */
static void pt_use_row_count(void *p, double n_hat) {
  pt_state *st = p;
  if (st->depth || st->released || st->in_rounds) return;
  rdt_eps total = {st->eps_count.num + st->eps_rest.num};
  uint32_t D = pt_auto_depth(n_hat > 0 ? n_hat : 0, st->is_private ? rdt_eps_to_double(total) : 1);
  st->depth = D;
  st->depth_eff = st->total_cand ? D : 0;
  if (st->is_private) {
    pt_split(total, st->depth_eff, &st->eps_level, &st->eps_leaf);
    st->eps_count.num = st->eps_rest.num = 0;
  }
}

/* learner.h's plan: the depth "auto" would grow on n^ (contract 3b) or the
** fixed one, 2^D leaves, and the leaf counts' noise. */
static int pt_plan(const void *state, double n_hat, rdt_learn_plan *out) {
  const pt_state *st = state;
  rdt_eps total = st->depth ? st->eps_leaf : st->eps_rest, level, leaf;
  if (st->depth) total.num += st->eps_level.num * st->depth_eff;
  double eps = st->depth ? rdt_eps_to_double(total) : rdt_eps_to_double(st->eps_count) + rdt_eps_to_double(total);
  uint32_t D = st->depth ? st->depth_eff
                         : st->total_cand ? pt_auto_depth(n_hat > 0 ? n_hat : 0, st->is_private ? eps : 1)
                                          : 0;
  pt_split(total, D, &level, &leaf);
  out->cells = (double)((uint64_t)1 << D);
  out->path_features = D;
  out->noise_sd = st->is_private && leaf.num ? sqrt(2.0) / rdt_eps_to_double(leaf) : 0;
  out->state_bytes = 0; /* a copy of the rows: grows with them */
  return 1;
}

static const char *const pt_options[] = {"bins", "depth", NULL};

const rdt_learner rdt_learner_private_tree = {
    .name = "private_tree",
    .id = RDT_PT_ID,
    .tasks = RDT_LEARN_CLASSIFICATION,
    .options = pt_options,
    .start = pt_start,
    .row = pt_row,
    .merge = pt_merge,
    .finish = pt_finish,
    .encode = pt_encode,
    .decode = pt_decode,
    .predict = pt_predict,
    .describe = pt_describe,
    .free = pt_free,
    .plan = pt_plan,
    .use_row_count = pt_use_row_count,
    .counters = pt_counters,
    .rounds = pt_rounds,
    .round_open = pt_round_open,
    .round_release = pt_round_release,
};
