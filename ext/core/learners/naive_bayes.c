/*
** naive_bayes.c - differentially private naive Bayes ("algorithm":
** "naive_bayes", id 2, classification only), behind learner.h.
**
** Contract:
**   1. Options: "bins" (integer 2..1024, or "auto", the default):
**      equal-width public bins of every numeric feature over its public
**      [min, max] (rdt_learn_bin); a categorical feature bins by its code
**      (n_values + 1 bins, `other` last). A fixed count comes from the
**      options. "auto" bins the rows at a fine resolution F (96, or the
**      largest of 48, 24, 12, 6 whose tables fit RDT_NB_MAX_COUNTERS: from the
**      schema) and finish() coarsens every numeric table to B bins, B a
**      divisor of F (bin j of F goes to j / (F / B)), chosen from the
**      released noisy class counts alone (contract 3b). A schema without
**      a numeric feature has nothing to choose: "auto" is then 10 bins and
**      the payload version 1.
**   2. State: C class counts and, per feature f, a C x B_f table of counts
**      (int64). A row of class k adds 1 to count k and 1 to the cell
**      (k, bin_f(x_f)) of each of the d tables.
**   3. Privacy. Neighbouring relation: add or remove one row. L1 sensitivity:
**      1 for the class counts, 1 per table, d for the d tables together, d+1
**      for the whole state. The budget eps = num / 2^32 (noise.h) is split
**      exactly (models without a feature, and private models written before
**      3c, which are still read; the others follow 3c): per = floor(num / (d+1)), eps_tables = d * per, eps_class =
**      num - eps_tables, so eps_class + eps_tables = eps and eps_class >=
**      eps/(d+1). The class counts get discrete Laplace noise of scale
**      1/eps_class, every table cell of scale d/eps_tables = 1/per, about
**      (d+1)/eps: each release is pure DP for its sensitivity, and together
**      they are eps-DP by sequential composition.
**   3b. "auto" bins: a released count comes first (3c: the row count; in
**      the split of 3, the class counts), n^ = it (their sum) clamped at 0
**      is post-processing of that release. B is
**      the divisor of F nearest (in ratio) to sqrt(n^ eps / K): the
**      square-root rule of histograms applied to a class's rows, shrunk by
**      the budget (fewer, fuller cells when the noise is larger). The
**      tables are coarsened exactly (a sum of exact counts keeps
**      sensitivity d) and then noised as in 3 or 3c. Non-private: sqrt(n / K).
**      The choice depends on released values only.
**   3c. Models written now (every private one with a feature) derive the
**      class counts instead of releasing them: all of eps goes to the d
**      tables (scale d/eps_tables), except, with "auto" bins, eps_row =
**      floor(eps / (4 (d+1))) for one row count (sensitivity 1, discrete
**      Laplace 1/eps_row) whose clamped value is the n^ of 3b; eps_row +
**      eps_tables = eps (sequential composition: eps-DP). Each class count
**      is then the rounded mean over the d noisy tables of that class's row
**      sum (post-processing; its noise variance, about 2 d B / eps^2 for B
**      bins per table, is below the 2 (d+1)^2 / eps^2 of a direct release
**      whenever B < (d+1)^2 / d), and the tables' scale drops from (d+1)/eps
**      to about d/eps. The payload stores eps_row in the eps_class field
**      (0 with fixed bins); decode() tells the two splits apart (3's class
**      share is at least eps/(d+1), 3c's below it) and reads both. The
**      class counts' pseudo-count is then a table cell's (contract 5).
**   4. finish() draws the noise of every counter whatever its value (the
**      work does not depend on the rows) and the noisy counter replaces the
**      exact one, so nothing exact remains. If the noise cannot be set up
**      (a share it needs rounds to 0: eps below 4 (d+1) / 2^32 with "auto"
**      bins, d / 2^32 otherwise) it returns 0 having drawn and changed
**      nothing. Non-private ("epsilon": null): no noise, both shares 0.
**   5. predict() is post-processing of the released counters: each is
**      clamped at 0 and given a pseudo-count (half its noise scale; 1 when
**      not private), class counts and each class's row of each table are
**      normalised, log P(k) + sum_f log P(bin_f | k) goes through a softmax
**      that subtracts the maximum. Every released value gives finite
**      probabilities adding up to 1. Before finish() it predicts uniformly.
**   6. Payload (little-endian): u32 version (1), u32 bins, u32 private
**      (0 or 1), u64 eps_class num, u64 eps_tables num, u32 C, u32 d, then
**      every counter as u64 (two's complement): the C class counts, then
**      table 0 class by class, table 1, ... Version 2 ("auto" bins) adds
**      u32 F after the bins: predict() bins a value at F and maps it to B as
**      training did. decode() checks each field against the schema and the
**      common facts (C, d, bins in 2..1024, F one of the fine resolutions
**      and a multiple of the bins, the private flag, the shares equal to the
**      split of eps in 3) and the payload's length before it allocates.
**   6b. "readout" (option): "bayes" (the default) predicts as in 5;
**      "moments" also fits, at finish() and from the released counters
**      alone (post-processing), the additive softmax scores of
**      moment_fit.c (ridge: a tenth of a table cell's noise scale, 0.01
**      without noise; the marginals and the class x bin associations shrunk
**      by its contracts 2b and 2c, with a cell's
**      noise variance 2 (d / eps_tables)^2 and every bin but a categorical
**      feature's `other`; the synthetic sample drawn from the finish stream)
**      and predicts softmax(w_k + sum_f w_f[k][bin_f(x)]); "both" fits them
**      too but predicts as "bayes" until a caller holding rows the model
**      never saw picks a readout (set_readout: auto.c). "moments" needs at
**      most RDT_MOMENT_MAX_COUNTERS counters (checked before any row);
**      "both" offers the second readout only within that bound. A state
**      whose chosen readout is "moments" is written as version 3 (fixed
**      bins) or 4 ("auto" bins): version 1 or 2 followed by every counter's
**      score as f64 in the counters' order (class biases, then the
**      tables); decode() checks that each is finite and at most 1e9 in
**      magnitude. A "bayes" readout is written as version 1 or 2.
**   6c. "readout": "auto" chooses between the two readouts by the rows
**      themselves, as a mechanism of its own: eps_readout = floor(eps /
**      NB_READOUT_SHARE) is set aside before the split of 3c, which divides
**      the rest. row() also keeps every row's bins (at the resolution it
**      counts them: 2 bytes per feature and per row, and its class) until
**      finish(). After the release and the fit of 6b, each readout's
**      correct predictions over the kept rows are counting queries (one row
**      adds 0 or 1 to each: sensitivity 1, monotone), and permute-and-flip
**      (select.h, monotone) with eps_readout picks one, ties being the
**      coins' business [eps_readout-DP given the release; with it eps-DP
**      by sequential composition]. Without noise the larger count wins,
**      "bayes" on a tie. The kept rows are wiped; if they did not fit in
**      memory finish() fails before any draw. The model is written as
**      version 5: u32 5, u64 eps_readout num, then the chosen readout's
**      payload of 6 / 6b (version 1 to 4) for the budget eps - eps_readout;
**      decode() checks eps_readout against the split. The choice runs only
**      where it can resolve what matters (nb_choice_resolves, on the
**      released class counts n^ and eps_readout): a readout differing by
**      NB_READOUT_GAP (2 points of accuracy) from the other is picked over
**      it with probability above 3/4, (1/2) exp(-eps_readout GAP n^) < 1/4;
**      elsewhere the model keeps "bayes", which needs fewer rows, fits
**      nothing and draws nothing more (eps_readout is then set aside
**      unspent; rdt_info says so).
**   6e. use_row_count (learner.h): a caller holding a released noisy count
**      of the rows (auto's n^) hands it over before finish() (in rounds:
**      before round_open(0), at every party alike). Where 6c's gate on that
**      count, (1/2) exp(-eps_readout GAP n^) < 1/4, fails, the choice could
**      not resolve what matters: the state drops it before any release, its
**      kept rows wiped, and becomes the "bayes" readout's with all of eps
**      (3c's split, nothing set aside; payload version 1 or 2). The gate is
**      post-processing of the caller's release; the model is 3c's, eps-DP.
**   7. encode() writes released states only: on an unreleased one it writes
**      nothing and marks the buffer failed (oom). merge() takes unreleased
**      states of the same shape only (the digest of counters(): shares,
**      bins and every feature's bounds); row() ignores a released state.
**      counters() (learner.h contract 3) offers the C class counts and the
**      tables, at the fine resolution with "auto" bins, as one span; a
**      state that keeps its rows (6c) offers none.
**   6d. Rounds (learner.h contract 10; shard mode), "readout": "auto"
**      only (rounds() 2; every other readout is one round of counters()).
**      Round 0's vector is the state of 2 without kept rows (the class
**      counts and the tables, at F with "auto" bins); its release is
**      finish()'s up to the choice (the noise of 3 / 3c, the bins of 3b,
**      the fit of 6b, from the same stream in the same order). Where 6c's
**      gate lets the choice run, the message is public: the released
**      bins, counters and moment scores (round 1 payload: u32 1, u32
**      bins, the counters as u64, the scores as f64; decoded and checked
**      as 6 does); else round 0 released the model ("bayes"). Round 1's
**      vector is the two readouts' correct predictions over a site's rows
**      (every row of the query: those rdt_fit keeps), each a counting query
**      of the row and the message alone (sensitivity 1 each, monotone);
**      the coordinator draws permute-and-flip with eps_readout from the
**      stream where round 0 left it, as finish() does. So the rounds
**      release exactly what finish() releases over the union (seeded: byte
**      for byte), with the neighbouring relation, sensitivities and shares
**      of 3 to 6c: eps - eps_readout in round 0, eps_readout in round 1,
**      eps in all (sequential composition).
**   7b. Federated (learner.h contract 9): with fixed bins (no noisy row
**      count chooses them) and a readout that keeps no rows, finish()'s
**      noise is one discrete Laplace per table cell (scale d/eps_tables;
**      the class counts, derived from the tables, are never released), or
**      per class count without a feature (1/eps_class): nb_noise() says
**      so and nb_finish_noised() runs the same release drawing nothing.
*/
#include "naive_bayes.h"

#include "../digest.h"
#include "../moment_fit.h"
#include "../select.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NB_VERSION 1u
#define NB_VERSION_AUTO 2u
#define NB_VERSION_MOMENTS 3u      /* version 1 + moment scores */
#define NB_VERSION_AUTO_MOMENTS 4u /* version 2 + moment scores */
#define NB_MAX_SCORE 1e9

#define NB_VERSION_CHOSEN 5u        /* eps_readout, then a version 1..4 payload */
#define NB_READOUT_SHARE 20u        /* "readout": "auto": eps / 20 for the choice */
#define NB_READOUT_GAP 0.02          /* contract 6c: the accuracy difference the choice must resolve */

enum { NB_READOUT_BAYES, NB_READOUT_MOMENTS, NB_READOUT_BOTH, NB_READOUT_AUTO };
#define NB_AUTO_FINE 96u /* divisible by 2, 3, 4, 6, 8, 12, 16, 24, 32, 48 */

typedef struct nb_state {
  uint32_t n_classes, n_features, bins;
  uint32_t fine; /* "auto": the resolution rows are binned at (bins = fine until finish); 0: fixed bins */
  int is_private, released;
  rdt_eps eps_class, eps_tables;
  int derived;           /* contract 3c: class counts derived from the tables (eps_class: the row count's) */
  rdt_feature *features; /* binning facts only (type, min, max, n_values): no pointers */
  uint32_t *n_bins;      /* per feature */
  size_t *offset;        /* per feature: its table's first counter; offset[d] = n_counts */
  size_t n_counts;
  int64_t *counts;       /* C class counts, then the tables */
  double *logp;          /* released: log-probability of every counter's event */
  uint32_t readout_opt;  /* NB_READOUT_*: what finish() fits */
  uint32_t readout;      /* what predict() uses: bayes or moments */
  double *w;             /* released "moments" scores (counters' layout), or NULL */
  /* contract 6c */
  int chosen;            /* the readout was (or will be) chosen by the rows */
  rdt_eps eps_readout;   /* that choice's share (0 without noise) */
  uint16_t *kept;        /* unreleased: every row's d bins then its class */
  uint64_t n_kept, cap_kept;
  int kept_oom;          /* a row could not be kept: finish() fails closed */
  /* contract 6d: the open round (in_rounds), round 1's two correct counts
  ** and a row's bins, and the digest of round 0's shape */
  int in_rounds;
  uint32_t round;
  int64_t correct[2];
  uint16_t *row_bins;
  unsigned char round_digest[32];
} nb_state;

static void nb_wipe_kept(nb_state *st) {
  if (st->kept) sodium_memzero(st->kept, (size_t)st->cap_kept * (st->n_features + 1) * sizeof *st->kept);
  free(st->kept);
  st->kept = NULL;
  st->n_kept = st->cap_kept = 0;
}

static void nb_free(void *p) {
  nb_state *st = p;
  if (!st) return;
  if (st->counts) sodium_memzero(st->counts, st->n_counts * sizeof *st->counts);
  if (st->logp) sodium_memzero(st->logp, st->n_counts * sizeof *st->logp);
  if (st->w) sodium_memzero(st->w, st->n_counts * sizeof *st->w);
  nb_wipe_kept(st);
  if (st->row_bins) sodium_memzero(st->row_bins, ((size_t)st->n_features + 1) * sizeof *st->row_bins);
  free(st->row_bins);
  free(st->counts);
  free(st->logp);
  free(st->w);
  free(st->features);
  free(st->n_bins);
  free(st->offset);
  free(st);
}

/* Contract 3c: the split of models that derive their class counts: with a
** feature, eps_row = floor(eps / (NB_ROW_COUNT_SHARE (d+1))) for the row
** count when "auto" bins need one (else 0), the tables the rest; without a
** feature, everything to the class counts (as contract 3). */
#define NB_ROW_COUNT_SHARE 4u
static void nb_split_derived(rdt_eps eps, uint32_t d, int fine, rdt_eps *row, rdt_eps *tables) {
  if (d == 0) {
    row->num = eps.num;
    tables->num = 0;
    return;
  }
  row->num = fine ? eps.num / (NB_ROW_COUNT_SHARE * ((uint64_t)d + 1)) : 0;
  tables->num = eps.num - row->num;
}

/* Contract 3: the exact split of eps over the class counts and the tables
** (models written before 3c; still read). */
static void nb_split(rdt_eps eps, uint32_t d, rdt_eps *cls, rdt_eps *tables) {
  uint64_t per = eps.num / ((uint64_t)d + 1);
  tables->num = per * d; /* <= eps.num: no overflow */
  cls->num = eps.num - tables->num;
}

/* The bin of value x of feature f (contract 1): numeric values of an "auto"
** state are binned at the fine resolution and mapped to the current bins. */
static uint32_t nb_bin(const nb_state *st, uint32_t f, double x) {
  const rdt_feature *ft = &st->features[f];
  if (!st->fine || ft->type != RDT_FEATURE_NUMERIC) return rdt_learn_bin(ft, st->bins, x);
  return rdt_learn_bin(ft, st->fine, x) / (st->fine / st->bins);
}

/* Counters of the schema's shape with these bins: class counts plus every
** table; RDT_NB_MAX_COUNTERS + 1 when more than that. */
static uint64_t nb_counters(const rdt_schema *s, uint32_t bins) {
  uint64_t total = s->n_classes; /* <= RDT_MAX_CLASSES; each table adds <= 65534 * 65536 */
  for (uint32_t f = 0; f < s->n_features && total <= RDT_NB_MAX_COUNTERS; f++)
    total += (uint64_t)s->n_classes * rdt_learn_bins(&s->features[f], bins);
  return total <= RDT_NB_MAX_COUNTERS ? total : RDT_NB_MAX_COUNTERS + 1;
}

/* A state of the schema's shape with zero counters; NULL with err set, or
** with err empty when out of memory. */
static nb_state *nb_alloc(const rdt_schema *s, uint32_t bins, int is_private, char *err, size_t en) {
  if (en) err[0] = 0;
  uint32_t C = s->n_classes, d = s->n_features;
  if (nb_counters(s, bins) > RDT_NB_MAX_COUNTERS) {
    if (en) snprintf(err, en, "naive_bayes: %u classes and these features need more than %llu counters; "
                              "use fewer \"bins\", classes or values", C, (unsigned long long)RDT_NB_MAX_COUNTERS);
    return NULL;
  }
  nb_state *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->n_classes = C;
  st->n_features = d;
  st->bins = bins;
  st->is_private = is_private;
  /* d + 1 entries so that d = 0 never asks malloc for 0 bytes */
  st->features = calloc((size_t)d + 1, sizeof *st->features);
  st->n_bins = calloc((size_t)d + 1, sizeof *st->n_bins);
  st->offset = calloc((size_t)d + 1, sizeof *st->offset);
  if (!st->features || !st->n_bins || !st->offset) {
    nb_free(st);
    return NULL;
  }
  size_t total = C; /* fits: nb_counters above */
  for (uint32_t f = 0; f < d; f++) {
    const rdt_feature *ft = &s->features[f];
    st->features[f].type = ft->type;
    st->features[f].min = ft->min;
    st->features[f].max = ft->max;
    st->features[f].n_values = ft->n_values;
    st->n_bins[f] = rdt_learn_bins(ft, bins);
    st->offset[f] = total;
    total += (size_t)C * st->n_bins[f];
  }
  st->offset[d] = total;
  st->n_counts = total;
  st->counts = calloc(st->n_counts ? st->n_counts : 1, sizeof *st->counts);
  if (!st->counts) {
    nb_free(st);
    return NULL;
  }
  return st;
}

static void *nb_start(const rdt_json *opts, const rdt_schema *s, const rdt_learn_common *c, char *err, size_t en) {
  if (en) err[0] = 0;
  if (c->regression) {
    if (en) snprintf(err, en, "naive_bayes is a classifier: it needs \"classes\", not a regression target");
    return NULL;
  }
  if (s->n_classes < 1) {
    if (en) snprintf(err, en, "naive_bayes needs at least one class");
    return NULL;
  }
  uint32_t bins = 0; /* "auto" */
  const rdt_json *b = opts ? rdt_json_get(opts, "bins") : NULL;
  if (b && !(b->type == RDT_JSON_STRING && strcmp(b->string, "auto") == 0)) {
    if (b->type != RDT_JSON_NUMBER || !b->is_integer || b->integer < 2 || b->integer > RDT_NB_MAX_BINS) {
      if (en) snprintf(err, en, "option \"bins\" must be \"auto\" or an integer from 2 to %u", RDT_NB_MAX_BINS);
      return NULL;
    }
    bins = (uint32_t)b->integer;
  }
  int is_auto = !bins && rdt_learn_has_numeric(s);
  if (!bins) bins = RDT_NB_DEFAULT_BINS; /* no numeric feature: nothing to choose, version 1 */
  if (is_auto) { /* the finest resolution whose tables fit: from the schema alone */
    bins = NB_AUTO_FINE;
    while (bins > 6 && nb_counters(s, bins) > RDT_NB_MAX_COUNTERS) bins /= 2;
  }
  uint32_t readout = NB_READOUT_BAYES;
  const rdt_json *r = opts ? rdt_json_get(opts, "readout") : NULL;
  if (r) {
    if (r->type == RDT_JSON_STRING && strcmp(r->string, "bayes") == 0) readout = NB_READOUT_BAYES;
    else if (r->type == RDT_JSON_STRING && strcmp(r->string, "moments") == 0) readout = NB_READOUT_MOMENTS;
    else if (r->type == RDT_JSON_STRING && strcmp(r->string, "both") == 0) readout = NB_READOUT_BOTH;
    else if (r->type == RDT_JSON_STRING && strcmp(r->string, "auto") == 0) readout = NB_READOUT_AUTO;
    else {
      if (en) snprintf(err, en, "option \"readout\" must be \"bayes\", \"moments\", \"both\" or \"auto\"");
      return NULL;
    }
  }
  if ((readout == NB_READOUT_MOMENTS || readout == NB_READOUT_AUTO) && nb_counters(s, bins) > RDT_MOMENT_MAX_COUNTERS) {
    if (en) snprintf(err, en, "naive_bayes: \"readout\": \"%s\" takes at most %llu counters; use fewer \"bins\"",
                     readout == NB_READOUT_AUTO ? "auto" : "moments", (unsigned long long)RDT_MOMENT_MAX_COUNTERS);
    return NULL;
  }
  rdt_eps eps = c->eps;
  rdt_eps eps_readout = {0};
  if (readout == NB_READOUT_AUTO && c->is_private) { /* contract 6c: set aside before the split */
    eps_readout.num = eps.num / NB_READOUT_SHARE;
    eps.num -= eps_readout.num;
    if (eps_readout.num == 0) {
      if (en) snprintf(err, en, "naive_bayes: \"epsilon\" is too small for \"readout\": \"auto\" (its share rounds to 0)");
      return NULL;
    }
  }
  nb_state *st = nb_alloc(s, bins, c->is_private != 0, err, en);
  if (!st) return NULL;
  st->readout_opt = readout;
  st->chosen = readout == NB_READOUT_AUTO;
  st->eps_readout = eps_readout;
  if (is_auto) st->fine = bins;
  if (st->is_private) {
    st->derived = st->n_features > 0;
    nb_split_derived(eps, st->n_features, st->fine != 0, &st->eps_class, &st->eps_tables);
  }
  return st;
}

static void nb_round_row(nb_state *st, const double *x, uint32_t cls);

static void nb_row(void *p, const double *x, uint32_t cls, double target) {
  (void)target;
  nb_state *st = p;
  /* The caller's contract gives a valid class; a bad one must not write out of bounds. */
  if (st->released || cls >= st->n_classes) return;
  if (st->in_rounds && st->round == 1) { /* contract 6d: the two readouts scored, no row kept */
    nb_round_row(st, x, cls);
    return;
  }
  uint16_t *keep = NULL;
  if (st->chosen && !st->in_rounds && !st->kept_oom) { /* contract 6c: the row's bins, for the choice */
    if (st->n_kept == st->cap_kept) {
      uint64_t cap = st->cap_kept ? st->cap_kept * 2 : 256;
      uint16_t *k = cap <= SIZE_MAX / sizeof *k / (st->n_features + 1)
                        ? realloc(st->kept, (size_t)cap * (st->n_features + 1) * sizeof *k)
                        : NULL;
      if (k) {
        st->kept = k;
        st->cap_kept = cap;
      } else {
        st->kept_oom = 1;
      }
    }
    if (!st->kept_oom) keep = st->kept + (size_t)st->n_kept++ * (st->n_features + 1);
  }
  st->counts[cls]++;
  for (uint32_t f = 0; f < st->n_features; f++) {
    uint32_t b = nb_bin(st, f, x[f]); /* < 65536: at most 1024 bins or RDT_MAX_VALUES + 1 codes */
    st->counts[st->offset[f] + (size_t)cls * st->n_bins[f] + b]++;
    if (keep) keep[f] = (uint16_t)b;
  }
  if (keep) keep[st->n_features] = (uint16_t)cls; /* < RDT_MAX_CLASSES */
}

/* Contract 7: what the counters mean (shape, shares, binning facts). */
static void nb_digest(const nb_state *st, unsigned char out[32]) {
  rdt_digest d;
  rdt_digest_init(&d, "rdt-naive-bayes-state-v1");
  const uint64_t facts[] = {st->n_classes, st->n_features, st->bins, st->fine, (uint64_t)st->is_private,
                            (uint64_t)st->derived, st->eps_class.num, st->eps_tables.num, st->n_counts,
                            st->readout_opt, (uint64_t)st->chosen, st->eps_readout.num};
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) rdt_digest_u64(&d, facts[i]);
  for (uint32_t f = 0; f < st->n_features; f++) {
    const rdt_feature *ft = &st->features[f];
    rdt_digest_u64(&d, (uint64_t)ft->type << 32 | st->n_bins[f]);
    rdt_digest_f64(&d, ft->min);
    rdt_digest_f64(&d, ft->max);
    rdt_digest_u64(&d, ft->n_values);
  }
  rdt_digest_final(&d, out);
}

/* Same options and schema: same shape, shares and bounds. */
static int nb_same_shape(const nb_state *a, const nb_state *b) {
  unsigned char da[32], db[32];
  nb_digest(a, da);
  nb_digest(b, db);
  return memcmp(da, db, sizeof da) == 0;
}

/* Contract 7: the counters, unless the state keeps its rows (6c) or has
** been released. */
static uint32_t nb_state_counters(void *p, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  nb_state *st = p;
  if (st->in_rounds && !st->released && max >= 1) { /* contract 6d: the open round's vector */
    out[0] = st->round == 0 ? (rdt_span){st->counts, st->n_counts} : (rdt_span){st->correct, 2};
    memcpy(digest, st->round_digest, 32);
    return 1;
  }
  if (st->released || st->chosen || max < 1) return 0;
  out[0] = (rdt_span){st->counts, st->n_counts};
  nb_digest(st, digest);
  return 1;
}

static int nb_merge(void *into, const void *from) {
  nb_state *a = into;
  const nb_state *b = from;
  if (a->released || b->released || !nb_same_shape(a, b)) return 0;
  for (size_t i = 0; i < a->n_counts; i++) a->counts[i] = rdt_learn_add_sat(a->counts[i], b->counts[i]);
  if (!a->chosen) return 1;
  /* contract 6c: b's kept rows too */
  size_t w = a->n_features + 1;
  if (b->kept_oom || a->kept_oom || b->n_kept > (SIZE_MAX / sizeof *a->kept / w) - a->n_kept) {
    a->kept_oom = 1;
    return 0;
  }
  if (a->n_kept + b->n_kept > a->cap_kept) {
    uint16_t *k = realloc(a->kept, (size_t)(a->n_kept + b->n_kept) * w * sizeof *k);
    if (!k) {
      a->kept_oom = 1;
      return 0;
    }
    a->kept = k;
    a->cap_kept = a->n_kept + b->n_kept;
  }
  if (b->n_kept) memcpy(a->kept + (size_t)a->n_kept * w, b->kept, (size_t)b->n_kept * w * sizeof *a->kept);
  a->n_kept += b->n_kept;
  return 1;
}

/* Contract 5: the log-probabilities of the released counters. */
static void nb_prepare(nb_state *st) {
  uint32_t C = st->n_classes;
  double a_class = 1, a_table = 1;
  if (st->is_private) {
    /* half the noise scale: 1/eps_class and d/eps_tables (contract 3) */
    if (st->n_features) a_table = 0.5 * st->n_features / rdt_eps_to_double(st->eps_tables);
    /* derived class counts (3c): a table cell's pseudo-count */
    a_class = st->derived ? a_table : 0.5 / rdt_eps_to_double(st->eps_class);
    if (!(a_class > 0 && isfinite(a_class))) a_class = 1;
    if (!(a_table > 0 && isfinite(a_table))) a_table = 1;
  }
  double total = 0;
  for (uint32_t k = 0; k < C; k++) total += st->counts[k] > 0 ? (double)st->counts[k] : 0;
  for (uint32_t k = 0; k < C; k++) {
    double n = st->counts[k] > 0 ? (double)st->counts[k] : 0;
    st->logp[k] = log((n + a_class) / (total + C * a_class));
  }
  for (uint32_t f = 0; f < st->n_features; f++) {
    uint32_t B = st->n_bins[f];
    for (uint32_t k = 0; k < C; k++) {
      size_t row = st->offset[f] + (size_t)k * B;
      double sum = 0;
      for (uint32_t b = 0; b < B; b++) sum += st->counts[row + b] > 0 ? (double)st->counts[row + b] : 0;
      for (uint32_t b = 0; b < B; b++) {
        double n = st->counts[row + b] > 0 ? (double)st->counts[row + b] : 0;
        st->logp[row + b] = log((n + a_table) / (sum + B * a_table));
      }
    }
  }
}

/* Contract 3b: the bins of an "auto" state, from the released (noisy) class
** counts only. */
static uint32_t nb_auto_bins(const nb_state *st, double n) {
  double eps = st->is_private ? rdt_eps_to_double(st->eps_class) + rdt_eps_to_double(st->eps_tables) : 1;
  return rdt_learn_nearest_divisor(st->fine, sqrt(n * eps / st->n_classes));
}

/* Contract 1: every numeric table from the fine resolution to `bins` (a
** divisor), in place: a destination never lies beyond a source not yet read
** (offsets shrink, and a row is summed into `row` before it is written). */
static void nb_coarsen(nb_state *st, uint32_t bins) {
  uint32_t C = st->n_classes, m = st->fine / bins;
  int64_t row[NB_AUTO_FINE];
  size_t at = C;
  for (uint32_t f = 0; f < st->n_features; f++) {
    uint32_t B = st->n_bins[f], nb = st->features[f].type == RDT_FEATURE_NUMERIC ? bins : B;
    size_t from = st->offset[f];
    st->offset[f] = at;
    for (uint32_t k = 0; k < C; k++) {
      if (nb == B) {
        memmove(st->counts + at, st->counts + from + (size_t)k * B, B * sizeof *st->counts);
      } else {
        memset(row, 0, sizeof row);
        for (uint32_t j = 0; j < B; j++) row[j / m] = rdt_learn_add_sat(row[j / m], st->counts[from + (size_t)k * B + j]);
        memcpy(st->counts + at, row, nb * sizeof *st->counts);
      }
      at += nb;
    }
    st->n_bins[f] = nb;
  }
  /* the cells beyond the new end held exact counts: wipe them */
  sodium_memzero(st->counts + at, (st->n_counts - at) * sizeof *st->counts);
  st->offset[st->n_features] = at;
  st->n_counts = at;
  st->bins = bins;
}

/* The class a released readout predicts for a kept row (contract 6c):
** `table` is logp ("bayes") or w ("moments"), both in the counters' layout;
** the largest score wins, the first on a tie (softmax keeps the order). */
static uint32_t nb_kept_class(const nb_state *st, const double *table, const uint16_t *row) {
  uint32_t m = st->fine ? st->fine / st->bins : 1, best = 0;
  double top = 0;
  for (uint32_t k = 0; k < st->n_classes; k++) {
    double z = table[k];
    for (uint32_t f = 0; f < st->n_features; f++) {
      uint32_t b = row[f];
      if (st->fine && st->features[f].type == RDT_FEATURE_NUMERIC) b /= m; /* fine bin -> released bin */
      z += table[st->offset[f] + (size_t)k * st->n_bins[f] + b];
    }
    if (k == 0 || z > top) {
      top = z;
      best = k;
    }
  }
  return best;
}

/* Contract 6c's gate, on released values and public parameters only: the
** choice runs where permute-and-flip, monotone with eps_readout, picks the
** worse readout with probability below 1/4 when the two differ by
** NB_READOUT_GAP of the rows: (1/2) exp(-eps_readout GAP n^) < 1/4. */
static int nb_choice_resolves(const nb_state *st) {
  if (!st->is_private) return 1;
  double n = 0;
  for (uint32_t k = 0; k < st->n_classes; k++) n += st->counts[k] > 0 ? (double)st->counts[k] : 0;
  return rdt_eps_to_double(st->eps_readout) * NB_READOUT_GAP * n >= log(2.0);
}

long rdt_nb_choose_readout(const int64_t correct[2], int is_private, rdt_eps eps, rdt_rng *rng) {
  if (!is_private) return correct[1] > correct[0];
  size_t order[2];
  return rdt_permute_and_flip(rng, correct, 2, eps, 1, 1, order);
}

/* Contract 6c: each readout's correct predictions over the kept rows, and
** permute-and-flip between them (exact comparison without noise); the kept
** rows are wiped whatever happens. */
static int nb_choose_readout(nb_state *st, rdt_rng *noise) {
  int64_t correct[2] = {0, 0};
  size_t w = st->n_features + 1;
  for (uint64_t i = 0; i < st->n_kept; i++) {
    const uint16_t *row = st->kept + (size_t)i * w;
    correct[0] += nb_kept_class(st, st->logp, row) == row[st->n_features];
    correct[1] += nb_kept_class(st, st->w, row) == row[st->n_features];
  }
  nb_wipe_kept(st);
  long pick = rdt_nb_choose_readout(correct, st->is_private, st->eps_readout, noise);
  sodium_memzero(correct, sizeof correct);
  if (pick < 0) return 0;
  st->readout = pick == 1 ? NB_READOUT_MOMENTS : NB_READOUT_BAYES;
  return 1;
}

/* The release (contracts 3 to 6c). noised: the counters already carry the
** noise of nb_noise (the sum of federated shares): nothing is drawn, the
** rest is the same post-processing (`noise` then serves the fit's sample). */
static int nb_release_counts(nb_state *st, rdt_rng *noise, int noised, int *choose) {
  *choose = 0;
  if (st->released || (noised && (st->fine || st->chosen))) return 0; /* nb_noise offers no such state */
  uint64_t cs = 0, ct = 0, ts = 0, tt = 0;
  if (st->is_private) {
    /* Everything that can fail comes before the first draw (contract 4). */
    if ((!st->derived || st->fine) && !rdt_laplace_params(st->eps_class, 1, &cs, &ct)) return 0;
    if (st->n_features && !rdt_laplace_params(st->eps_tables, st->n_features, &ts, &tt)) return 0;
    uint64_t rs, rt; /* contract 6c's choice: its coins' parameters */
    if (st->chosen && !rdt_laplace_params(st->eps_readout, 1, &rs, &rt)) return 0;
  }
  if (st->chosen && st->kept_oom) return 0; /* contract 6c: fail closed, nothing drawn */
  st->logp = malloc((st->n_counts ? st->n_counts : 1) * sizeof *st->logp);
  if (!st->logp) return 0;
  uint32_t C = st->n_classes;
  double n_hat = 0; /* contract 3b/3c: the released row count */
  if (st->is_private && st->derived) {
    if (st->fine) { /* the one row count the bins need */
      int64_t n = 0;
      for (uint32_t k = 0; k < C; k++) n = rdt_learn_add_sat(n, st->counts[k]);
      n_hat = (double)rdt_learn_add_sat(n, rdt_discrete_laplace(noise, cs, ct));
    }
  } else {
    for (uint32_t k = 0; k < C; k++) {
      if (st->is_private && !noised) st->counts[k] = rdt_learn_add_sat(st->counts[k], rdt_discrete_laplace(noise, cs, ct));
      n_hat += st->counts[k] > 0 ? (double)st->counts[k] : 0;
    }
  }
  if (st->fine) nb_coarsen(st, nb_auto_bins(st, n_hat > 0 ? n_hat : 0));
  if (st->is_private && !noised)
    for (size_t i = C; i < st->n_counts; i++) st->counts[i] = rdt_learn_add_sat(st->counts[i], rdt_discrete_laplace(noise, ts, tt));
  if (st->derived) /* contract 3c: every exact class count replaced by its tables' mean row sum */
    for (uint32_t k = 0; k < C; k++) {
      double m = 0;
      for (uint32_t f = 0; f < st->n_features; f++)
        for (uint32_t b = 0; b < st->n_bins[f]; b++) m += (double)st->counts[st->offset[f] + (size_t)k * st->n_bins[f] + b];
      m /= st->n_features;
      st->counts[k] = m >= 9.2e18 ? (int64_t)9.2e18 : m <= -9.2e18 ? -(int64_t)9.2e18 : (int64_t)llround(m);
    }
  st->released = 1;
  nb_prepare(st);
  if (st->chosen && !nb_choice_resolves(st)) { /* contract 6c: Bayes, no fit, no draw */
    nb_wipe_kept(st);
    st->readout = NB_READOUT_BAYES;
    return 1;
  }
  if (st->readout_opt != NB_READOUT_BAYES && st->n_counts <= RDT_MOMENT_MAX_COUNTERS) {
    /* Contract 6b: post-processing of the counters just released. */
    /* A table cell's noise scale sets the ridge (a tenth of it) and, for
    ** moment_fit.c 2b, the cell's noise variance (about 2 scale^2 for
    ** discrete Laplace); a numeric feature's bins and a categorical one's
    ** values (not its `other` bin) have their marginals shrunk. */
    double ridge = 0.01, cell_var = 0;
    if (st->is_private) {
      double scale = st->n_features ? st->n_features / rdt_eps_to_double(st->eps_tables)
                                    : 1 / rdt_eps_to_double(st->eps_class);
      ridge = 0.1 * scale;
      if (st->n_features) cell_var = 2 * scale * scale;
    }
    uint32_t *shrunk = malloc((st->n_features ? st->n_features : 1) * sizeof *shrunk);
    for (uint32_t f = 0; shrunk && f < st->n_features; f++)
      shrunk[f] = st->features[f].type == RDT_FEATURE_NUMERIC ? st->n_bins[f] : st->features[f].n_values;
    st->w = malloc(st->n_counts * sizeof *st->w);
    int fitted = st->w && shrunk &&
                 rdt_moment_fit(C, st->n_features, st->n_bins, st->offset, st->counts, shrunk, cell_var, ridge, noise,
                                st->w);
    free(shrunk);
    if (!fitted) {
      free(st->w);
      st->w = NULL;
      if (st->readout_opt != NB_READOUT_BOTH) return 0; /* memory (the size was checked at start) */
    }
    if (st->readout_opt == NB_READOUT_MOMENTS) st->readout = NB_READOUT_MOMENTS;
  }
  *choose = st->chosen;
  return 1;
}

static int nb_release(nb_state *st, rdt_rng *noise, int noised) {
  int choose = 0;
  if (!nb_release_counts(st, noise, noised, &choose)) return 0;
  return choose ? nb_choose_readout(st, noise) : 1;
}

static int nb_finish(void *p, rdt_rng *noise) { return nb_release(p, noise, 0); }

/* ---- rounds (contract 6d) ------------------------------------------------ */

static uint32_t nb_rounds(const void *p) {
  const nb_state *st = p;
  return st->chosen ? 2 : 0;
}

static int nb_round_fail(char *err, size_t en, const char *msg) {
  if (en) snprintf(err, en, "naive_bayes: %s", msg);
  return 0;
}

/* Round 1's payload: the released bins, counters and moment scores (every
** value checked as decode() checks a model's), into the fresh state. */
static int nb_read_round(nb_state *st, const unsigned char *msg, size_t n, char *err, size_t en) {
  rdt_reader in = {msg, n, 0, 0};
  uint32_t at = rdt_read_u32(&in), bins = rdt_read_u32(&in);
  if (in.bad || at != 1 || bins < 2 || bins > RDT_NB_MAX_BINS || (st->fine ? st->fine % bins != 0 : bins != st->bins))
    return nb_round_fail(err, en, "the round message is not one of this plan's rounds");
  if (st->fine) nb_coarsen(st, bins); /* the shape the release had: the counters are all 0 here */
  if ((in.n - in.pos) != st->n_counts * 16)
    return nb_round_fail(err, en, "the round message's counters have another length than its bins give");
  st->logp = malloc((st->n_counts ? st->n_counts : 1) * sizeof *st->logp);
  st->w = malloc((st->n_counts ? st->n_counts : 1) * sizeof *st->w);
  if (!st->logp || !st->w) return 0;
  for (size_t i = 0; i < st->n_counts; i++) st->counts[i] = (int64_t)rdt_read_u64(&in);
  int bad = 0;
  for (size_t i = 0; i < st->n_counts; i++) {
    st->w[i] = rdt_read_f64(&in);
    bad |= !(isfinite(st->w[i]) && fabs(st->w[i]) <= NB_MAX_SCORE);
  }
  if (bad || in.bad) return nb_round_fail(err, en, "the round message holds a score out of range");
  nb_prepare(st);
  if (!nb_choice_resolves(st)) return nb_round_fail(err, en, "the round message opens a choice its counts do not run");
  return 1;
}

static int nb_round_open(void *p, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en) {
  nb_state *st = p;
  if (en) err[0] = 0;
  if (!st->chosen || st->in_rounds || st->released || st->n_kept) return nb_round_fail(err, en, "a round opens on a fresh state only");
  if (r > 1) return nb_round_fail(err, en, "the round message opens a round beyond the readout's choice");
  if (r == 0 && n != 0) return nb_round_fail(err, en, "the first round has no message");
  nb_digest(st, st->round_digest); /* round 0's shape: the same digest in every round */
  if (r == 1) {
    if (!nb_read_round(st, msg, n, err, en)) return 0;
    if (!(st->row_bins = calloc((size_t)st->n_features + 1, sizeof *st->row_bins))) return 0;
  }
  st->round = r;
  st->in_rounds = 1;
  return 1;
}

/* Round 1: a row's bins at the resolution rows are kept at (nb_row's), and
** each readout's prediction against its class. */
static void nb_round_row(nb_state *st, const double *x, uint32_t cls) {
  for (uint32_t f = 0; f < st->n_features; f++) {
    const rdt_feature *ft = &st->features[f];
    st->row_bins[f] = (uint16_t)(st->fine && ft->type == RDT_FEATURE_NUMERIC ? rdt_learn_bin(ft, st->fine, x[f])
                                                                             : rdt_learn_bin(ft, st->bins, x[f]));
  }
  st->correct[0] += nb_kept_class(st, st->logp, st->row_bins) == cls;
  st->correct[1] += nb_kept_class(st, st->w, st->row_bins) == cls;
}

static int nb_round_release(void *p, rdt_rng *noise, rdt_bytes *next) {
  nb_state *st = p;
  if (!st->in_rounds || st->released) return 0;
  if (st->round == 1) { /* 6c's choice, from the stream where round 0 left it */
    long pick = rdt_nb_choose_readout(st->correct, st->is_private, st->eps_readout, noise);
    sodium_memzero(st->correct, sizeof st->correct);
    if (pick < 0) return 0;
    st->readout = pick == 1 ? NB_READOUT_MOMENTS : NB_READOUT_BAYES;
    st->released = 1;
    return 2;
  }
  int choose = 0;
  if (!nb_release_counts(st, noise, 0, &choose)) return 0;
  if (!choose) return 2; /* 6c's gate kept "bayes": released */
  /* the choice is pending: its message holds only released values */
  rdt_bytes_u32(next, 1);
  rdt_bytes_u32(next, st->bins);
  for (size_t i = 0; i < st->n_counts; i++) rdt_bytes_u64(next, (uint64_t)st->counts[i]);
  for (size_t i = 0; i < st->n_counts; i++) rdt_bytes_f64(next, st->w[i]);
  return next->oom ? 0 : 1;
}

/* Contract 7b: the noise of a fixed-bins release, as blocks. */
static uint32_t nb_noise(const void *p, rdt_noise_block *out, uint32_t max) {
  const nb_state *st = p;
  uint64_t s, t;
  if (!st->is_private || st->released || st->fine || st->chosen || max < 2) return 0;
  if (!st->derived) { /* no feature: the class counts, released */
    if (!rdt_laplace_params(st->eps_class, 1, &s, &t)) return 0;
    out[0] = (rdt_noise_block){st->n_classes, s, t};
    return 1;
  }
  if (!rdt_laplace_params(st->eps_tables, st->n_features, &s, &t)) return 0;
  out[0] = (rdt_noise_block){st->n_classes, 0, 0}; /* derived from the tables: never released */
  out[1] = (rdt_noise_block){st->n_counts - st->n_classes, s, t};
  return 2;
}

static int nb_finish_noised(void *p, rdt_rng *post) { return nb_release(p, post, 1); }

static void nb_encode(const void *p, rdt_bytes *out) {
  const nb_state *st = p;
  if (!st->released) { /* contract 7: exact counters never leave */
    out->oom = 1;
    return;
  }
  int moments = st->readout == NB_READOUT_MOMENTS && st->w;
  if (st->chosen) { /* contract 6c */
    rdt_bytes_u32(out, NB_VERSION_CHOSEN);
    rdt_bytes_u64(out, st->eps_readout.num);
  }
  rdt_bytes_u32(out, moments ? (st->fine ? NB_VERSION_AUTO_MOMENTS : NB_VERSION_MOMENTS)
                             : (st->fine ? NB_VERSION_AUTO : NB_VERSION));
  rdt_bytes_u32(out, st->bins);
  if (st->fine) rdt_bytes_u32(out, st->fine);
  rdt_bytes_u32(out, (uint32_t)st->is_private);
  rdt_bytes_u64(out, st->eps_class.num);
  rdt_bytes_u64(out, st->eps_tables.num);
  rdt_bytes_u32(out, st->n_classes);
  rdt_bytes_u32(out, st->n_features);
  for (size_t i = 0; i < st->n_counts; i++) rdt_bytes_u64(out, (uint64_t)st->counts[i]);
  if (moments)
    for (size_t i = 0; i < st->n_counts; i++) rdt_bytes_f64(out, st->w[i]);
}

/* A payload of versions 1 to 4 (version already read) for the budget in c. */
static nb_state *nb_decode_payload(rdt_reader *in, const rdt_schema *s, const rdt_learn_common *c, uint32_t version) {
  uint32_t bins = rdt_read_u32(in);
  int moments = version == NB_VERSION_MOMENTS || version == NB_VERSION_AUTO_MOMENTS;
  if (version == NB_VERSION_MOMENTS) version = NB_VERSION;
  if (version == NB_VERSION_AUTO_MOMENTS) version = NB_VERSION_AUTO;
  uint32_t fine = version == NB_VERSION_AUTO ? rdt_read_u32(in) : 0, priv = rdt_read_u32(in);
  rdt_eps ec = {rdt_read_u64(in)}, et = {rdt_read_u64(in)};
  uint32_t C = rdt_read_u32(in), d = rdt_read_u32(in);
  if (in->bad) return NULL;
  int fine_ok = version == NB_VERSION ||
                (version == NB_VERSION_AUTO && (fine == 96 || fine == 48 || fine == 24 || fine == 12 || fine == 6) &&
                 bins >= 2 && fine % bins == 0);
  int ok = fine_ok && bins >= 2 && bins <= RDT_NB_MAX_BINS && priv <= 1 && C == s->n_classes &&
           C >= 1 && d == s->n_features && (int)priv == (c->is_private != 0) && !c->regression;
  int derived = 0;
  if (ok && priv) {
    /* contract 3c's split, or contract 3's (older models); they never
    ** coincide (3's class share is at least eps/(d+1), 3c's row share below) */
    rdt_eps want_c, want_t, row, tables;
    nb_split(c->eps, d, &want_c, &want_t);
    nb_split_derived(c->eps, d, fine != 0, &row, &tables);
    if (d > 0 && ec.num == row.num && et.num == tables.num && et.num > 0 && (fine == 0 || ec.num > 0)) derived = 1;
    else ok = ec.num == want_c.num && et.num == want_t.num && ec.num > 0 && (d == 0 || et.num > 0);
  } else if (ok) {
    ok = ec.num == 0 && et.num == 0;
  }
  /* the payload must hold every counter before anything is allocated */
  uint64_t n = ok ? nb_counters(s, bins) : 0;
  if (!ok || n > RDT_NB_MAX_COUNTERS || (moments && n > RDT_MOMENT_MAX_COUNTERS) ||
      (in->n - in->pos) / 8 / (moments ? 2 : 1) < n) {
    in->bad = 1;
    return NULL;
  }
  char err[8];
  nb_state *st = nb_alloc(s, bins, (int)priv, err, sizeof err);
  if (!st) {
    in->bad = 1;
    return NULL;
  }
  st->fine = fine;
  st->derived = derived;
  st->eps_class = ec;
  st->eps_tables = et;
  for (size_t i = 0; i < st->n_counts; i++) st->counts[i] = (int64_t)rdt_read_u64(in);
  st->logp = malloc((st->n_counts ? st->n_counts : 1) * sizeof *st->logp);
  int scores_ok = 1;
  if (moments && st->logp) {
    st->w = malloc((st->n_counts ? st->n_counts : 1) * sizeof *st->w);
    scores_ok = st->w != NULL;
    for (size_t i = 0; i < st->n_counts && scores_ok; i++) {
      double v = rdt_read_f64(in);
      scores_ok = isfinite(v) && fabs(v) <= NB_MAX_SCORE;
      st->w[i] = v;
    }
    st->readout = NB_READOUT_MOMENTS;
  }
  if (in->bad || !st->logp || !scores_ok) {
    in->bad = 1;
    nb_free(st);
    return NULL;
  }
  st->released = 1;
  nb_prepare(st);
  return st;
}

static void *nb_decode(rdt_reader *in, const rdt_schema *s, const rdt_learn_common *c) {
  uint32_t version = rdt_read_u32(in);
  if (version != NB_VERSION_CHOSEN) return nb_decode_payload(in, s, c, version);
  /* contract 6c: the choice's share, then the payload for the rest */
  rdt_eps er = {rdt_read_u64(in)};
  uint32_t inner = rdt_read_u32(in);
  if (in->bad || inner == NB_VERSION_CHOSEN ||
      !(c->is_private ? er.num > 0 && er.num == c->eps.num / NB_READOUT_SHARE : er.num == 0)) {
    in->bad = 1;
    return NULL;
  }
  rdt_learn_common cc = *c;
  cc.eps.num -= er.num;
  nb_state *st = nb_decode_payload(in, s, &cc, inner);
  sodium_memzero(&cc, sizeof cc);
  if (!st) return NULL;
  st->chosen = 1;
  st->readout_opt = NB_READOUT_AUTO;
  st->eps_readout = er;
  return st;
}

static void nb_predict(const void *p, const double *x, double *out) {
  const nb_state *st = p;
  uint32_t C = st->n_classes;
  if (!st->released) { /* contract 5: nothing released, nothing learnt */
    for (uint32_t k = 0; k < C; k++) out[k] = 1.0 / C;
    return;
  }
  /* contract 6b: the moments scores, else the log-probabilities (one layout) */
  const double *table = st->readout == NB_READOUT_MOMENTS && st->w ? st->w : st->logp;
  for (uint32_t k = 0; k < C; k++) {
    double z = table[k];
    for (uint32_t f = 0; f < st->n_features; f++)
      z += table[st->offset[f] + (size_t)k * st->n_bins[f] + nb_bin(st, f, x[f])];
    out[k] = z;
  }
  rdt_learn_softmax(out, C, out);
}

static void nb_describe(const void *p, rdt_bytes *json) {
  const nb_state *st = p;
  char buf[768];
  if (st->is_private && st->derived)
    snprintf(buf, sizeof buf,
             "\"mechanism\":\"naive Bayes: discrete Laplace noise of scale d/epsilon_tables on every table cell "
             "(d = %u features, L1 sensitivity d); each class count is the mean of its row sums over the d tables "
             "(post-processing)%s\",\"bins\":%u,\"bins_rule\":\"%s\",\"epsilon_class_counts\":0,"
             "\"epsilon_row_count\":%.17g,\"epsilon_tables\":%.17g,",
             st->n_features, st->fine ? "; the bins from a row count with discrete Laplace of scale 1/epsilon_row_count" : "",
             st->bins, st->fine ? "auto: the square-root rule on the noisy row count" : "fixed",
             rdt_eps_to_double(st->eps_class), rdt_eps_to_double(st->eps_tables));
  else if (st->is_private)
    snprintf(buf, sizeof buf,
             "\"mechanism\":\"naive Bayes: discrete Laplace noise of scale (d+1)/epsilon on every class count and "
             "table cell (d = %u features; L1 sensitivity 1 for the class counts, d for the tables; epsilon split "
             "exactly between them)\",\"bins\":%u,\"bins_rule\":\"%s\",\"epsilon_class_counts\":%.17g,"
             "\"epsilon_tables\":%.17g,",
             st->n_features, st->bins, st->fine ? "auto: the square-root rule on the noisy row count" : "fixed", rdt_eps_to_double(st->eps_class), rdt_eps_to_double(st->eps_tables));
  else
    snprintf(buf, sizeof buf,
             "\"mechanism\":\"naive Bayes, not private: exact class counts and tables\",\"bins\":%u,"
             "\"bins_rule\":\"%s\",\"epsilon_class_counts\":null,\"epsilon_tables\":null,",
             st->bins, st->fine ? "auto" : "fixed");
  rdt_bytes_text(json, buf);
  rdt_bytes_text(json, st->readout == NB_READOUT_MOMENTS
                           ? "\"readout\":\"moments: additive softmax scores fitted to the released tables "
                             "(post-processing)\","
                           : "\"readout\":\"bayes\",");
  if (st->chosen) { /* contract 6c */
    char e[40] = "null";
    if (st->is_private) snprintf(e, sizeof e, "%.17g", rdt_eps_to_double(st->eps_readout));
    if (nb_choice_resolves(st))
      snprintf(buf, sizeof buf,
               "\"readout_rule\":\"auto: %s between the two readouts' correct predictions on the training rows\","
               "\"epsilon_readout\":%s,",
               st->is_private ? "permute-and-flip with epsilon_readout (sensitivity 1, monotone)" : "the larger count", e);
    else
      snprintf(buf, sizeof buf,
               "\"readout_rule\":\"auto: bayes without a choice: at epsilon_readout times the noisy row count, "
               "permute-and-flip could not resolve a difference of %g of the rows\",\"epsilon_readout\":%s,"
               "\"epsilon_readout_spent\":0,", NB_READOUT_GAP, e);
    rdt_bytes_text(json, buf);
  }
}

/* Contract 6b: the readouts a released state offers, and the choice. */
static uint32_t nb_readouts(const void *p) {
  const nb_state *st = p;
  return st->released && st->w ? 2 : 1;
}

static void nb_set_readout(void *p, uint32_t r) {
  nb_state *st = p;
  st->readout = r == 1 && st->released && st->w ? NB_READOUT_MOMENTS : NB_READOUT_BAYES;
}

/* learner.h's use_row_count (contract 6e): where the readout choice could
** not resolve on the caller's count, the state becomes the Bayes readout's
** with all of eps (no share set aside, nothing kept). */
static void nb_use_row_count(void *p, double n_hat) {
  nb_state *st = p;
  if (!st->chosen || !st->is_private || st->released || st->in_rounds) return;
  if (rdt_eps_to_double(st->eps_readout) * NB_READOUT_GAP * (n_hat > 0 ? n_hat : 0) >= log(2.0)) return;
  rdt_eps eps = {st->eps_class.num + st->eps_tables.num + st->eps_readout.num};
  nb_wipe_kept(st);
  st->chosen = 0;
  st->readout_opt = NB_READOUT_BAYES;
  st->eps_readout.num = 0;
  nb_split_derived(eps, st->n_features, st->fine != 0, &st->eps_class, &st->eps_tables);
}

static const char *const nb_options[] = {"bins", "readout", NULL};

const rdt_learner rdt_learner_naive_bayes = {
    .name = "naive_bayes",
    .id = RDT_NB_ID,
    .tasks = RDT_LEARN_CLASSIFICATION,
    .options = nb_options,
    .start = nb_start,
    .row = nb_row,
    .merge = nb_merge,
    .counters = nb_state_counters,
    .noise = nb_noise,
    .finish_noised = nb_finish_noised,
    .finish = nb_finish,
    .encode = nb_encode,
    .decode = nb_decode,
    .predict = nb_predict,
    .describe = nb_describe,
    .free = nb_free,
    .readouts = nb_readouts,
    .set_readout = nb_set_readout,
    .use_row_count = nb_use_row_count,
    .rounds = nb_rounds,
    .round_open = nb_round_open,
    .round_release = nb_round_release,
};
