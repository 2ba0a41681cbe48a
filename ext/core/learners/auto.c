/*
** auto.c - "algorithm": "auto": one learner chosen for the data at hand,
** never worse than the best constant model, with all of ε accounted.
**
** How (every step's privacy is in brackets; neighbours: add or remove one
** row; every row is either a training row or a validation row, by a coin of
** the randomness alone, so the two parts are disjoint):
**   1. Rows: one in AUTO_VALIDATION_SHARE goes to the validation slice (kept
**      in memory: 8 (d + 1) bytes per row); the others train every
**      candidate the rule could pick at once (one pass) and the constant
**      model. Where step 4a finds no guard, the slice's rows train the pick
**      too, before its release.
**   2. The constant model is released with ε_k = ε / AUTO_CONSTANT_SHARE on
**      the training rows [constant.c: ε_k-DP]; its noisy total is the noisy
**      row count n^ (post-processing).
**   3. A rule on public facts, the candidates' plans (learner.h: what each
**      would build for n^ rows, from its options and drawn structure) and n^
**      picks one candidate (post-processing). Regression: boosting where
**      n^ ε_m >= 530 (AUTO_REG_BOOST_MIN: its intercept's noise sd at most
**      1/25 of the target range), else the constant model trained as a
**      candidate with ε_m, which is then kept without step 4 (and, as in
**      4a, trained on the slice's rows too). For
**      classification, in order (K classes, d features):
**      a. the matrix forest, trained only where its trees test at least
**         half of the features on every path (d <= 2 x path) and its
**         counters fit in AUTO_MATRIX_BYTES (32 MiB), when a cell's
**         class count expects n^ / (cells K) >= 1 row and at least the sd
**         of its noise: its cells then carry signal (where its paths each
**         leave one of d <= 4 features out, the cells of the table over
**         all of them and one such cell's noise: learner.h's plan);
**      b. boosting, when its per-feature share eps / d is at least the
**         private tree's per-level share eps / (2 D) (D: the depth the tree
**         would grow on n^) and s = n^ eps_m / ((d + 1) K b) >= 42, b the
**         mean bins per feature: a bin's gradient sum stands out of its
**         noise (learners.md: boosting led above about 30 in its units,
**         42 in ours);
**      c. the private tree, when its 2^D leaves give every class one and it
**         has the larger share per query (d > 2 D: the signal may sit in a
**         few of many features, which it selects) or two classes (one
**         boundary to draw);
**      d. boosting when s >= 42, else naive Bayes (robust at low signal);
**      random trees only when none of those is registered (rule_clause();
**      rdt_info's rule_reason names the clause and the facts it read). The constants
**      were chosen on the papers' data sets, not derived: a family of such
**      rules chosen on all but one set misses on the one left out
**      (results/auto_rule_lodo.md).
**      Only the chosen candidate is released, with ε_m = ε - ε_k on the
**      training rows [its own contract]; the others are wiped unreleased,
**      so they spend nothing. A pick that would spend a share of its own on
**      a row count for its structure takes n^ instead (learner.h
**      use_row_count: the private tree's depth by its own rule, so it builds
**      what the rule planned; naive Bayes's readout gate, dropping the
**      choice where it could not resolve) and spends that share on the rest
**      (post-processing of n^).
**   4. The guard: on the validation slice, the chosen model's correct
**      predictions minus the constant model's (classification: sensitivity
**      1) or the constant's absolute error minus the chosen model's, over
**      the target range (regression: each in [0, 1], sensitivity 1, lattice
**      Laplace; absolute rather than squared errors, whose per-row
**      differences are several times smaller than the noise allows), released with ε [ε-DP on the validation rows]. A
**      regression row's gain is at most |p(x) - q| / range, q the
**      constant's prediction, so at most D = the largest distance from q
**      to the span of the pick's predictions (learner.h span; 1 without
**      one) over the range: a function of the two released models, so the
**      lattice Laplace noise has sensitivity D [for every D the guard is
**      ε-DP on the validation rows, which the training rows' releases do
**      not read: parallel composition with adaptivity]. The chosen
**      model is kept unless that noisy gain is below minus one noise scale
**      (-D/ε, -1/ε for classification: the constant clearly ahead), else
**      the constant model (post-processing; a public margin).
**   4a. Classification runs the guard only where its slice can resolve what
**      it is for: a pick AUTO_GUARD_RESOLVES (G, the target's one point of
**      accuracy) under the constant. The slice holds about n^ / (SHARE - 1)
**      rows (n^ counts the training rows), where such a pick's expected
**      gain, -G n^ / (SHARE - 1), reaches the margin -1/eps only when
**      n^ eps G >= SHARE - 1 (n^ eps >= 1900). Below that the guard only
**      drops good picks at random (half exp(-1) of the time when the pick
**      ties the constant), so there is none: the slice's rows are fed to the
**      pick before its release, the model stores no gain (rdt_info: null)
**      and says why. A function of n^ and eps (post-processing). Boosting's
**      regression guard and non-private runs always run (the regression
**      rule's constant has none, step 3, and its slice trains it too).
**   4b. Naive Bayes is trained with "readout": "auto": it chooses between
**      its two readouts on its own training rows, within its ε_m
**      [naive_bayes.c, contract 6c]. Models written before that chose on
**      the validation slice by one report-noisy-max over the readouts and
**      the constant model (no gain released: stored as NaN); they are
**      still read and described.
**   Training rows spend ε_k + ε_m = ε, validation rows ε (the guard) or ε_m
**   (4a: the pick), and the parts are disjoint: ε-DP in total (parallel
**   composition). Whether the slice feeds the guard or the pick is a
**   function of n^, released from the training rows alone: a row added to
**   the slice leaves n^ and that choice unchanged and meets one release of
**   at most ε; a row added to the training rows meets the constant's and
**   the pick's (ε_k + ε_m) whatever the choice, and the guard reads the
**   training rows only through released models. The released model is one
**   of two released models, picked by a released number.
**   5. Memory: the candidates' states (boosting and the private tree keep a
**      binned copy of the training rows, naive Bayes their bins for its
**      readout choice) and the validation slice.
**   7. Rounds (learner.h contract 10; shard mode). Every step's release
**      in finish()'s order, one per round, from the same stream: round 0
**      the constant model on the training rows (step 2); its message
**      carries the constant's released payload and n^, from which every
**      party applies step 3's rule (public); then the pick's own rounds
**      (its contract-10 hooks; a candidate of one round of counters, the
**      constant or the matrix forest, in one round: its counters summed,
**      its finish()), each message carrying the constant's payload, n^,
**      the pick and the pick's own message (4a: without a guard the pick's
**      rounds read the validation rows too and there is no guard round;
**      every party applies 4a to the released n^); then the guard round, whose
**      message carries the pick's released payload: each site sums, over
**      its validation rows, the pick's correct predictions minus the
**      constant's (classification), or each row's gain in units of
**      2^-AUTO_GUARD_FIX of the range rounded and clamped to
**      +-floor(D 2^AUTO_GUARD_FIX) (regression: |.| <= D, D from the two
**      released models as in step 4), and the coordinator releases the sum
**      with step 4's noise and margin. The regression pick "constant" has
**      no guard round (as step 4). Everything a message holds is released
**      (the constant, n^, the pick's messages and model) or public.
**      The coins: a site reads its query anew each round and keeps
**      nothing, so a row's side cannot come from a stream in arrival
**      order. In rounds a row is a validation row when a keyed hash
**      (SipHash-2-4, crypto_shorthash) of its cleaned values and class
**      (or target), keyed by a key derived from the plan's structure key
**      (seeded: from the seed) is 0 modulo AUTO_VALIDATION_SHARE: the
**      same in every round and at every site, and a fixed function of the
**      row alone, chosen before any row. Privacy of the rounds.
**      Neighbouring relation: add or remove one row of the union of the
**      sites' inputs. The partition by a fixed function of the row is
**      parallel composition: the added row lands on one side, and every
**      other row's side is unchanged (its coin reads that row alone), so
**      the training side's releases see one row more or the validation
**      side's does, never both. Training side: round 0, the constant's
**      class counts (count and sum), its own sensitivity, eps_k; the
**      pick's rounds, each its own contract's sensitivity and share,
**      eps_m in all (naive_bayes.c 6d, boost.c 6, constant.c, the matrix
**      forest's one release), each round's query a function of released
**      values: adaptive sequential composition, eps_k + eps_m = eps. The
**      validation side: the guard's sum, sensitivity 1 (classification:
**      one row moves the difference of two counting queries by at most 1)
**      or D (regression: one row's rounded, clamped gain), discrete or
**      lattice Laplace with eps: eps-DP given the released models; or,
**      without a guard (4a, decided on the released n^, which the
**      validation rows do not touch), the pick's rounds, eps_m. In all
**      eps-DP. Identical rows share a coin (all on one side): the guarantee
**      is unchanged; only a data set of few distinct rows may see its
**      validation slice lumpier than 1 in 20. A seeded shard run is
**      reproducible and equals the same rounds over the union at one site
**      byte for byte, not rdt_fit's (whose coins follow arrival order).
**      Every candidate the rule may pick must run in rounds or in one
**      round of counters: round_open(0) refuses, before any row, when one
**      cannot (data-independent: the candidates are the options' and the
**      schema's), naming it.
**   6. Payload: chosen id, picked id (bit 31: D follows; bit 30: no guard,
**      4a; bit 29: the rule's facts follow), n^, s, gain (0 without a
**      guard), the constant's share, D (f64 in [0, 1]; 1 for
**      classification), for classification the rule's facts (auto_why: the
**      clause, which candidates were there, the matrix forest's rows per
**      cell and class and noise sd, the tree's depth and leaves; all
**      post-processing of n^ and the drawn structures), the chosen learner's
**      payload. Models written before D have no flag and no D, and read as
**      D = 1; before the facts, no bit 29 (rule_reason null). decode()
**      takes bit 30 only where 4a holds on the stored n^ and eps (a
**      classification pick kept, gain 0, bit 31 set), and bit 29 only where
**      the stored clause is the rule's on the stored facts and names the
**      learner picked (why_consistent()).
*/
#include "auto.h"

#include "../digest.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_VALIDATION_SHARE 20
#define AUTO_CONSTANT_SHARE 20
#define AUTO_BOOST_SNR 42.0
#define AUTO_BINS 10
#define AUTO_MAX_CANDIDATES 6
#define AUTO_PICKED_SENSITIVITY 0x80000000u /* step 6: a guard sensitivity follows the constant's share */
#define AUTO_PICKED_UNGUARDED 0x40000000u   /* step 6: no guard; the slice's rows trained the pick (4a) */
#define AUTO_PICKED_REASON 0x20000000u      /* step 6: the facts step 3's classification rule read follow */
/* Step 4a: the classification guard is there to catch a pick under the
** constant model by the target's one point: a fraction G of the rows. */
#define AUTO_GUARD_RESOLVES 0.01
/* Regression: boosting's intercept (ε_m/10 over three releases, boost.c
** contract 2) has noise sd 15 sqrt(2) / (n^ ε_m) of the target range, 7.5
** times the constant model's at the same ε; boosting is picked where that sd
** is at most 1/25 of the range (n^ ε_m >= 530), where its squared noise
** (0.0016 of the range squared) stays below what one round of boosting
** gained on the regression tasks measured; else the constant model with ε_m. */
#define AUTO_REG_BOOST_MIN (15.0 * 1.4142135623730951 * 25)
#define AUTO_MATRIX_COVER 2 /* matrix forest: d <= 2 x the features a path tests */
#define AUTO_MATRIX_BYTES (32.0 * 1024 * 1024) /* ... and its counters fit in 32 MiB */
#define AUTO_TREE_BUDGET 2 /* private tree: d > 2 D (its per-level share beats eps / d) */
#define AUTO_GUARD_FIX 24  /* step 7: a regression row's gain in units of 2^-24 of the range */
#define AUTO_ROUND_TAG 0x41555431u /* step 7: "AUT1", a round payload's first word */

/* Step 3's classification clauses (a)-(d), and the fallback; what rdt_info
** names as the reason of the pick. */
enum { WHY_MATRIX = 1, WHY_BOOST_SHARE, WHY_TREE, WHY_BOOST, WHY_NAIVE_BAYES, WHY_FALLBACK };
/* The facts the rule read (all post-processing of n^ and public facts):
** which candidates were there (bit 0 the matrix forest with its plan, 1 the
** private tree with its plan, 2 boosting, 3 naive Bayes), the matrix
** forest's expected rows per cell and class and its noise sd, the tree's
** depth D and leaves on n^. */
#define WHY_HAS_MATRIX 1u
#define WHY_HAS_TREE 2u
#define WHY_HAS_BOOST 4u
#define WHY_HAS_NAIVE_BAYES 8u
typedef struct auto_why {
  uint32_t clause, has;
  double matrix_rows, matrix_sd, tree_depth, tree_leaves;
} auto_why;

enum { CAND_BOOST, CAND_NAIVE_BAYES, CAND_PRIVATE_TREE, CAND_MATRIX_FOREST, CAND_RANDOM_TREES, CAND_CONSTANT };
static const char *const candidate_names[AUTO_MAX_CANDIDATES] = {"boost", "naive_bayes", "private_tree",
                                                                 "matrix_forest", "random_trees", "constant"};

typedef struct auto_state {
  rdt_learn_common c;
  rdt_learn_common cm;           /* the candidates' facts: ε_m */
  uint32_t d, K, n_classes;      /* K: classes, 1 for regression */
  double mean_bins;
  const rdt_learner *cand[AUTO_MAX_CANDIDATES];
  void *cst[AUTO_MAX_CANDIDATES];
  const rdt_learner *konst;
  void *kst;
  rdt_rng coin;                  /* row -> validation or training */
  double *vx, *vy;               /* validation rows: features, target or class */
  uint64_t nv, capv;
  int oom;                       /* a validation row could not be kept: fail closed */
  double *scratch;               /* two predictions */
  /* the release */
  const rdt_learner *chosen;
  void *chosen_state;
  double n_hat, snr, gain;       /* gain NaN: step 4b of older models (not released) */
  double sensitivity;            /* step 4: the gain's sensitivity (1, or regression's bound) */
  int stores_sensitivity;        /* step 6's flag: written since the bound (1 in models trained now) */
  uint32_t picked;               /* id of the candidate the rule picked */
  int unguarded;                 /* step 4a: no guard; the validation rows trained the pick */
  int stores_why;                /* step 6's flag: the rule's facts are stored (classification, models trained now) */
  auto_why why;                  /* step 3: the clause that picked, and the facts it read */
  /* step 7, rounds */
  const rdt_schema *schema;      /* the caller's, alive as long as the state (decoding releases) */
  rdt_learn_common ck;           /* the constant's facts: eps_k */
  int in_rounds, phase, pick, pick_rounds; /* phase 0: the constant; 1: the pick's rounds; 2: the guard */
  uint32_t round, sub;           /* the round open, and the pick's own */
  int coin_keyed;
  unsigned char coin_key[crypto_shorthash_KEYBYTES];
  unsigned char *coin_buf;       /* a row's encoding */
  double *x0;                    /* d zeros: the constant's prediction */
  int64_t guard;                 /* phase 2's vector */
  unsigned char digest[32];      /* what the round vectors mean: the same in every round */
} auto_state;

/* Step 7: the rounds a started candidate takes: its contract-10 rounds, 1
** for one round of counters, 0 when it can do neither. */
static uint32_t candidate_rounds(const rdt_learner *l, void *st) {
  if (l->rounds && l->round_open && l->round_release && l->counters) {
    uint32_t r = l->rounds(st);
    if (r) return r;
  }
  rdt_span sp[RDT_MAX_SPANS];
  unsigned char dg[32];
  return l->counters && l->counters(st, sp, RDT_MAX_SPANS, dg) > 0 ? 1 : 0;
}

static void auto_free(void *st);

/* A candidate's learner id, through the registry (learners never include
** each other); 0, an id no learner has, if it is not registered. */
static uint32_t candidate_id(int i) {
  const rdt_learner *l = rdt_learner_find(candidate_names[i]);
  return l ? l->id : 0;
}

/* The constant learner's id, likewise. */
static uint32_t constant_id(void) {
  const rdt_learner *k = rdt_learner_find("constant");
  return k ? k->id : 0;
}

static rdt_eps constant_eps(rdt_eps eps) {
  rdt_eps e = {eps.num / AUTO_CONSTANT_SHARE};
  return e;
}

/* A state with the public facts filled in, or NULL (memory). */
static auto_state *auto_new(const rdt_schema *s, const rdt_learn_common *c) {
  auto_state *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->c = *c;
  a->d = s->n_features;
  a->n_classes = c->regression ? 0 : s->n_classes;
  a->K = c->regression ? 1 : s->n_classes;
  a->sensitivity = 1; /* step 4: models written before step 6's flag */
  return a;
}

static void *auto_start(const rdt_json *opts, const rdt_schema *s, const rdt_learn_common *c, char *err, size_t en) {
  (void)opts;
  if (en) err[0] = 0;
  auto_state *a = auto_new(s, c);
  if (!a) return NULL;
  a->stores_sensitivity = 1;
  for (uint32_t j = 0; j < s->n_features; j++) a->mean_bins += rdt_learn_bins(&s->features[j], AUTO_BINS);
  a->mean_bins /= s->n_features ? s->n_features : 1;
  rdt_learn_common ck = *c, cm = *c;
  if (c->is_private) {
    ck.eps = constant_eps(c->eps);
    cm.eps.num = c->eps.num - ck.eps.num;
    if (ck.eps.num == 0) {
      snprintf(err, en, "\"epsilon\" is too small for \"auto\" (its constant model's share rounds to 0)");
      free(a);
      return NULL;
    }
  }
  /* Each part gets its own stream (seeded: reproducible, and distinct). */
  if (c->seeded) {
    rdt_rng_derive_key(ck.seed_key, c->seed_key, RDT_RNG_KEYBYTES, "auto-constant");
    rdt_rng_derive_key(cm.seed_key, c->seed_key, RDT_RNG_KEYBYTES, "auto-model");
  }
  a->cm = cm;
  rdt_rng_init_for(&a->coin, c->seeded ? c->seed_key : NULL, "auto-validation", 0);
  a->konst = rdt_learner_find("constant");
  a->scratch = malloc(2 * (a->K + 1) * sizeof *a->scratch);
  if (!a->konst || !a->scratch || !(a->kst = a->konst->start(NULL, s, &ck, err, en))) {
    auto_free(a);
    return NULL;
  }
  for (int i = 0; i < AUTO_MAX_CANDIDATES; i++) {
    /* Only the candidates the rule could pick for this task are trained:
    ** boosting; for classification also naive Bayes, the private tree and
    ** the matrix forest (gated below); random trees as the last resort when
    ** none of the others is registered. */
    if (c->regression ? i != CAND_BOOST && i != CAND_CONSTANT : i == CAND_CONSTANT) continue;
    if (i == CAND_RANDOM_TREES && (a->cst[CAND_BOOST] || a->cst[CAND_NAIVE_BAYES] || a->cst[CAND_PRIVATE_TREE])) continue;
    const rdt_learner *l = rdt_learner_find(candidate_names[i]);
    if (!l || !(l->tasks & (c->regression ? RDT_LEARN_REGRESSION : RDT_LEARN_CLASSIFICATION))) continue;
    char cerr[200] = "";
    /* Naive Bayes chooses its readout on its rows (step 4b). */
    rdt_json *copts = NULL;
    if (i == CAND_NAIVE_BAYES) {
      static const char chosen[] = "{\"readout\": \"auto\"}";
      if (!(copts = rdt_json_parse(chosen, sizeof chosen - 1, cerr, sizeof cerr))) {
        auto_free(a);
        return NULL;
      }
    }
    void *st = l->start(copts, s, &cm, cerr, sizeof cerr);
    rdt_json_free(copts);
    if (!st && !cerr[0]) { /* memory */
      auto_free(a);
      return NULL;
    }
    rdt_learn_plan plan;
    memset(&plan, 0, sizeof plan);
    /* The matrix forest only where its random trees test at least half of
    ** the features on every path, and its counters fit in AUTO_MATRIX_BYTES
    ** (its structure is drawn: public; a table so large would need as many
    ** rows before rule (a) could pick it). */
    if (st && i == CAND_MATRIX_FOREST &&
        !(l->plan && l->plan(st, 0, &plan) && a->d <= AUTO_MATRIX_COVER * plan.path_features &&
          plan.state_bytes <= AUTO_MATRIX_BYTES)) {
      l->free(st);
      st = NULL;
    }
    if (st) { /* a candidate that cannot take this schema is simply not a candidate */
      a->cand[i] = l;
      a->cst[i] = st;
    }
  }
  /* Step 7: the coins' key (the plan's structure key, or the seed's), a
  ** row's buffer, and the digest of what the rounds' vectors mean. */
  a->schema = s;
  a->ck = ck;
  sodium_memzero(&ck, sizeof ck);
  if (c->keyed || c->seeded) {
    unsigned char k[RDT_RNG_KEYBYTES];
    rdt_rng_derive_key(k, c->keyed ? c->structure_key : c->seed_key, RDT_RNG_KEYBYTES, "auto-validation-row");
    memcpy(a->coin_key, k, sizeof a->coin_key);
    sodium_memzero(k, sizeof k);
    a->coin_keyed = 1;
  }
  a->coin_buf = malloc(8 * ((size_t)a->d + 1));
  a->x0 = calloc((size_t)a->d + 1, sizeof *a->x0);
  if (!a->coin_buf || !a->x0) {
    auto_free(a);
    return NULL;
  }
  rdt_digest dg;
  rdt_digest_init(&dg, "rdt-auto-rounds-v1");
  const uint64_t facts[] = {a->d, a->K, a->n_classes, (uint64_t)c->is_private, c->eps.num, (uint64_t)c->regression};
  for (size_t i = 0; i < sizeof facts / sizeof *facts; i++) rdt_digest_u64(&dg, facts[i]);
  rdt_digest_f64(&dg, c->target_min);
  rdt_digest_f64(&dg, c->target_max);
  for (uint32_t f = 0; f < a->d; f++) {
    rdt_digest_u64(&dg, s->features[f].type);
    rdt_digest_f64(&dg, s->features[f].min);
    rdt_digest_f64(&dg, s->features[f].max);
    rdt_digest_u64(&dg, s->features[f].n_values);
  }
  rdt_span sp[RDT_MAX_SPANS];
  unsigned char part[32];
  for (int i = -1; i < AUTO_MAX_CANDIDATES; i++) { /* the constant's and each one-round candidate's meaning */
    const rdt_learner *l = i < 0 ? a->konst : a->cand[i];
    void *st = i < 0 ? a->kst : a->cst[i];
    rdt_digest_u64(&dg, st ? (uint64_t)(i + 2) : 0);
    if (st && l->counters && l->counters(st, sp, RDT_MAX_SPANS, part) > 0) rdt_digest_bytes(&dg, part, sizeof part);
  }
  rdt_digest_final(&dg, a->digest);
  return a;
}

static void round_row(auto_state *a, const double *x, uint32_t cls, double target);
static int apply_rule(auto_state *a);

static void auto_row(void *st, const double *x, uint32_t cls, double target) {
  auto_state *a = st;
  if (a->in_rounds) { /* step 7: the row's coin from the row, into the round's vector */
    round_row(a, x, cls, target);
    return;
  }
  if (rdt_rng_below(&a->coin, AUTO_VALIDATION_SHARE) == 0) {
    if (a->oom) return;
    if (a->nv == a->capv) {
      uint64_t cap = a->capv ? a->capv * 2 : 256;
      double *vx = realloc(a->vx, (size_t)cap * (a->d ? a->d : 1) * sizeof *vx);
      if (vx) a->vx = vx;
      double *vy = realloc(a->vy, (size_t)cap * sizeof *vy);
      if (vy) a->vy = vy;
      if (!vx || !vy) {
        a->oom = 1;
        return;
      }
      a->capv = cap;
    }
    memcpy(a->vx + (size_t)a->nv * a->d, x, a->d * sizeof *x);
    a->vy[a->nv++] = a->n_classes ? (double)cls : target;
    return;
  }
  a->konst->row(a->kst, x, cls, target);
  for (int i = 0; i < AUTO_MAX_CANDIDATES; i++)
    if (a->cst[i]) a->cand[i]->row(a->cst[i], x, cls, target);
}

static int auto_merge(void *into, const void *from) {
  auto_state *a = into;
  const auto_state *b = from;
  if (!a->konst->merge(a->kst, b->kst)) return 0;
  for (int i = 0; i < AUTO_MAX_CANDIDATES; i++)
    if ((a->cst[i] != NULL) != (b->cst[i] != NULL) || (a->cst[i] && !a->cand[i]->merge(a->cst[i], b->cst[i])))
      return 0;
  for (uint64_t v = 0; v < b->nv; v++) {
    uint32_t cls = a->n_classes ? (uint32_t)b->vy[v] : 0;
    /* re-enter as validation rows, whatever the coin says */
    if (a->nv == a->capv) {
      uint64_t cap = a->capv ? a->capv * 2 : 256;
      double *vx = realloc(a->vx, (size_t)cap * (a->d ? a->d : 1) * sizeof *vx), *vy;
      if (!vx) return 0;
      a->vx = vx;
      if (!(vy = realloc(a->vy, (size_t)cap * sizeof *vy))) return 0;
      a->vy = vy;
      a->capv = cap;
    }
    memcpy(a->vx + (size_t)a->nv * a->d, b->vx + (size_t)v * b->d, a->d * sizeof *a->vx);
    a->vy[a->nv++] = a->n_classes ? (double)cls : b->vy[v];
  }
  return !b->oom;
}

int rdt_auto_guard(double gain, int regression, double sensitivity, rdt_eps eps, rdt_rng *noise, double *noisy) {
  if (!regression) { /* an integer count difference */
    uint64_t s, t;
    if (!rdt_laplace_params(eps, 1, &s, &t)) return 0;
    *noisy = gain + (double)rdt_discrete_laplace(noise, s, t);
    return 1;
  }
  if (!(sensitivity >= 0 && sensitivity <= 1)) return 0;
  return rdt_lattice_laplace(noise, gain, sensitivity, eps, -10, noisy);
}

static uint32_t argmax(const double *p, uint32_t k) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < k; i++)
    if (p[i] > p[best]) best = i;
  return best;
}

/* Classification: a model's correct predictions on the validation slice
** (p: scratch for K probabilities). */
static double validation_correct(const auto_state *a, const rdt_learner *l, const void *st, double *p) {
  double correct = 0;
  for (uint64_t v = 0; v < a->nv; v++) {
    l->predict(st, a->vx + (size_t)v * a->d, p);
    correct += (double)(argmax(p, a->K) == (uint32_t)a->vy[v]);
  }
  return correct;
}

static void wipe_validation(auto_state *a) {
  if (a->vx) sodium_memzero(a->vx, (size_t)a->capv * (a->d ? a->d : 1) * sizeof *a->vx);
  if (a->vy) sodium_memzero(a->vy, (size_t)a->capv * sizeof *a->vy);
  free(a->vx);
  free(a->vy);
  a->vx = a->vy = NULL;
  a->nv = a->capv = 0;
}

/* Step 3's clause for classification from the facts the rule read, in
** order (n^, s and public facts only); decode() checks a stored one by it. */
static uint32_t rule_clause(const auto_why *w, double snr, uint32_t d, uint32_t K) {
  /* (a) The matrix forest where a cell's class count expects at least one
  ** row and at least its noise's sd. */
  if ((w->has & WHY_HAS_MATRIX) && w->matrix_rows >= 1 && w->matrix_rows >= w->matrix_sd) return WHY_MATRIX;
  /* The private tree's plan: D levels, 2^D leaves, on n^ (0 without it). */
  double D = (w->has & WHY_HAS_TREE) ? w->tree_depth : 0;
  /* (b) Boosting where the additive learners' per-feature share eps / d is
  ** at least the tree's per-level share eps / (2 D) and a bin's gradient
  ** sum stands out of its noise (s). */
  if ((w->has & WHY_HAS_BOOST) && snr >= AUTO_BOOST_SNR && d <= AUTO_TREE_BUDGET * D) return WHY_BOOST_SHARE;
  /* (c) The private tree where its 2^D leaves give every class one, and it
  ** has the larger share per query (d > 2 D) or only one boundary to draw
  ** (two classes). */
  if ((w->has & WHY_HAS_TREE) && w->tree_leaves >= K && (d > AUTO_TREE_BUDGET * D || K <= 2)) return WHY_TREE;
  /* (d) Boosting where its bins stand out, else naive Bayes; then whatever
  ** is there. */
  if ((w->has & WHY_HAS_BOOST) && snr >= AUTO_BOOST_SNR) return WHY_BOOST;
  return (w->has & WHY_HAS_NAIVE_BAYES) ? WHY_NAIVE_BAYES : WHY_FALLBACK;
}

/* Each clause's candidate; the fallback's, in order. */
static const int clause_candidate[] = {-1, CAND_MATRIX_FOREST, CAND_BOOST, CAND_PRIVATE_TREE, CAND_BOOST, CAND_NAIVE_BAYES};
static const int fallback_candidates[] = {CAND_PRIVATE_TREE, CAND_BOOST, CAND_MATRIX_FOREST, CAND_RANDOM_TREES};

/* Step 3's rule for classification: the facts, their clause, its candidate. */
static int pick_classifier(auto_state *a) {
  double n = a->n_hat > 0 ? a->n_hat : 0;
  rdt_learn_plan plan;
  memset(&plan, 0, sizeof plan);
  auto_why *w = &a->why;
  memset(w, 0, sizeof *w);
  const rdt_learner *m = a->cand[CAND_MATRIX_FOREST], *t = a->cand[CAND_PRIVATE_TREE];
  if (a->cst[CAND_MATRIX_FOREST] && m->plan(a->cst[CAND_MATRIX_FOREST], n, &plan) && plan.cells > 0) {
    w->has |= WHY_HAS_MATRIX;
    /* its paths may each leave a feature out (matrix_forest.c): the cells of
    ** the table over all of them and one cell's noise, as when every path
    ** tested every feature */
    w->matrix_rows = n / ((plan.table_cells > 0 ? plan.table_cells : plan.cells) * a->K);
    w->matrix_sd = plan.table_noise_sd > 0 ? plan.table_noise_sd : plan.noise_sd;
  }
  if (a->cst[CAND_PRIVATE_TREE] && t->plan && t->plan(a->cst[CAND_PRIVATE_TREE], n, &plan)) {
    w->has |= WHY_HAS_TREE;
    w->tree_depth = plan.path_features;
    w->tree_leaves = plan.cells;
  }
  if (a->cst[CAND_BOOST]) w->has |= WHY_HAS_BOOST;
  if (a->cst[CAND_NAIVE_BAYES]) w->has |= WHY_HAS_NAIVE_BAYES;
  w->clause = rule_clause(w, a->snr, a->d, a->K);
  a->stores_why = 1;
  if (w->clause != WHY_FALLBACK) return clause_candidate[w->clause];
  for (size_t i = 0; i < sizeof fallback_candidates / sizeof *fallback_candidates; i++)
    if (a->cst[fallback_candidates[i]]) return fallback_candidates[i];
  return -1;
}

/* Step 3's rule for regression: boosting where its intercept's noise is
** small enough (AUTO_REG_BOOST_MIN), else the constant model at ε_m. */
static int pick_regressor(const auto_state *a, double eps_m) {
  if (a->cst[CAND_BOOST] && (a->n_hat * eps_m >= AUTO_REG_BOOST_MIN || !a->cst[CAND_CONSTANT])) return CAND_BOOST;
  return a->cst[CAND_CONSTANT] ? CAND_CONSTANT : -1;
}

/* Steps 3 and 4a: the pick has no guard (the regression rule's constant,
** or a guard that cannot resolve its point), so the slice's rows train it. */
static int slice_trains_pick(const auto_state *a, int pick) { return pick == CAND_CONSTANT || a->unguarded; }

/* Step 4's margin: the chosen model is dropped only when the constant is
** ahead by more than one noise scale of the guard (1 / eps; 0 without
** noise). A model the rule picked is rarely worse than the constant, and
** dropping a good one costs far more than keeping one that is slightly
** worse (a public rule, post-processing). */
static double guard_margin(const auto_state *a) {
  return a->c.is_private ? a->sensitivity / rdt_eps_to_double(a->c.eps) : 0;
}

/* Step 4a: whether the classification guard can resolve a pick one point
** (G) under the constant. Its slice holds about n^ / (SHARE - 1) rows (n^
** counts the training rows), where such a pick's expected gain is -G n^ /
** (SHARE - 1); it reaches the margin -1/eps (the noise's median then drops
** the pick) only when n^ eps G >= SHARE - 1. Regression and non-private
** runs always run the guard (post-processing of n^). */
static int guard_resolves(const auto_state *a) {
  if (!a->n_classes || !a->c.is_private) return 1;
  return a->n_hat * rdt_eps_to_double(a->c.eps) * AUTO_GUARD_RESOLVES >= AUTO_VALIDATION_SHARE - 1;
}

/* Step 4's bound on a regression row's gain, in units of the target range:
** | |q - y| - |p(x) - y| | <= |p(x) - q| <= the largest distance from the
** constant's prediction q to the pick's span (learner.h), a function of the
** two released models; 1 when the pick states no span. */
static double regression_sensitivity(const auto_state *a, const rdt_learner *l, const void *st, double q) {
  double lo, hi, range = a->c.target_max - a->c.target_min;
  if (!l->span || !l->span(st, &lo, &hi) || !(range > 0) || !isfinite(lo) || !isfinite(hi)) return 1;
  /* 2^-30 above it: a row's gain is computed in floating point, a few ulps
  ** from its exact value, which the bound must cover */
  double d = (hi - q > q - lo ? hi - q : q - lo) / range + 0x1p-30;
  return d >= 0 && d <= 1 ? d : d > 1 ? 1 : 0;
}

/* The model auto hands back: the pick when `keep`, else the constant model
** (the other one is wiped). */
static void release(auto_state *a, int pick, int keep) {
  if (keep) {
    a->chosen = a->cand[pick];
    a->chosen_state = a->cst[pick];
    a->cst[pick] = NULL;
    return;
  }
  if (pick >= 0) {
    a->cand[pick]->free(a->cst[pick]);
    a->cst[pick] = NULL;
  }
  a->chosen = a->konst;
  a->chosen_state = a->kst;
  a->kst = NULL;
}

static int auto_finish(void *st, rdt_rng *noise) {
  auto_state *a = st;
  int ok = !a->oom && a->konst->finish(a->kst, noise);
  /* Step 2: the noisy row count, from the released constant model. */
  double *p = a->scratch, *q = a->scratch + a->K + 1;
  if (ok) {
    rdt_bytes b = {0};
    a->konst->encode(a->kst, &b); /* released counts: class counts, or count then sum */
    rdt_reader r = {b.p, b.n, 0, 0};
    a->n_hat = 0;
    for (uint32_t k = 0; k < (a->n_classes ? a->n_classes : 1); k++) a->n_hat += (double)(int64_t)rdt_read_u64(&r);
    ok = !b.oom && !r.bad;
    rdt_bytes_free(&b);
  }
  /* Steps 3 and 4a on n^, as every party of the rounds applies them. */
  int pick = apply_rule(a);
  /* Where there is no guard, the slice's rows train the pick (before its release). */
  if (ok && slice_trains_pick(a, pick)) {
    for (uint64_t v = 0; v < a->nv; v++)
      a->cand[pick]->row(a->cst[pick], a->vx + (size_t)v * a->d, a->n_classes ? (uint32_t)a->vy[v] : 0,
                         a->n_classes ? 0 : a->vy[v]);
    wipe_validation(a);
  }
  if (ok && pick >= 0) ok = a->cand[pick]->finish(a->cst[pick], noise);
  /* The rule picked the constant model itself (regression), or the guard
  ** cannot resolve its point: no guard. */
  if (ok && slice_trains_pick(a, pick)) {
    a->picked = a->cand[pick]->id;
    wipe_validation(a);
    a->gain = 0;
    release(a, pick, 1);
    return 1;
  }
  /* Step 4: the guard on the validation slice. */
  double gain = 0;
  if (ok && pick >= 0) {
    a->picked = a->cand[pick]->id;
    double range = a->c.target_max - a->c.target_min;
    if (a->n_classes) /* integer counts: exact in any order */
      gain = validation_correct(a, a->cand[pick], a->cst[pick], p) - validation_correct(a, a->konst, a->kst, p);
    else
      for (uint64_t v = 0; v < a->nv; v++) {
        const double *x = a->vx + (size_t)v * a->d;
        a->cand[pick]->predict(a->cst[pick], x, p);
        a->konst->predict(a->kst, x, q);
        double ep = (p[0] - a->vy[v]) / range, eq = (q[0] - a->vy[v]) / range;
        /* absolute errors, each in [0, 1]: sensitivity 1, and a per-row
        ** signal several times the squared errors' (targets scaled to [0, 1]) */
        gain += fabs(eq) - fabs(ep);
      }
    if (!a->n_classes) {
      a->konst->predict(a->kst, a->vx, q); /* any input: the constant ignores it */
      a->sensitivity = regression_sensitivity(a, a->cand[pick], a->cst[pick], q[0]);
    }
    if (a->c.is_private) ok = rdt_auto_guard(gain, !a->n_classes, a->sensitivity, a->c.eps, noise, &gain);
  }
  wipe_validation(a);
  if (!ok) return 0;
  a->gain = gain;
  release(a, pick, pick >= 0 && gain >= -guard_margin(a));
  return 1;
}

/* Step 6: stored facts are only those of a classification pick written
** with the guard's flag; they must be what the rule reads (finite, a
** matrix forest's and a tree's only with their bits), give the stored
** clause by the rule itself, and the clause the candidate picked. */
static int why_consistent(const auto_state *a) {
  const auto_why *w = &a->why;
  int finite = isfinite(w->matrix_rows) && isfinite(w->matrix_sd) && isfinite(w->tree_depth) &&
               isfinite(w->tree_leaves) && w->matrix_rows >= 0 && w->matrix_sd >= 0 && w->tree_depth >= 0 &&
               w->tree_leaves >= 0;
  if (!a->n_classes || !a->stores_sensitivity || !finite || (w->has & ~15u) || w->clause < WHY_MATRIX ||
      w->clause > WHY_FALLBACK || rule_clause(w, a->snr, a->d, a->K) != w->clause)
    return 0;
  if (!(w->has & WHY_HAS_MATRIX) && (w->matrix_rows != 0 || w->matrix_sd != 0)) return 0;
  if (!(w->has & WHY_HAS_TREE) && (w->tree_depth != 0 || w->tree_leaves != 0)) return 0;
  if (w->clause != WHY_FALLBACK) return a->picked == candidate_id(clause_candidate[w->clause]);
  for (size_t i = 0; i < sizeof fallback_candidates / sizeof *fallback_candidates; i++)
    if (a->picked == candidate_id(fallback_candidates[i])) return 1;
  return 0;
}

/* Payload: chosen id, picked id, n^, s, gain, then the chosen model's payload. */
static void auto_encode(const void *st, rdt_bytes *out) {
  const auto_state *a = st;
  rdt_bytes_u32(out, a->chosen->id);
  rdt_bytes_u32(out, a->picked | (a->stores_sensitivity ? AUTO_PICKED_SENSITIVITY : 0) |
                         (a->unguarded ? AUTO_PICKED_UNGUARDED : 0) | (a->stores_why ? AUTO_PICKED_REASON : 0));
  rdt_bytes_f64(out, a->n_hat);
  rdt_bytes_f64(out, a->snr);
  rdt_bytes_f64(out, a->gain);
  rdt_bytes_u64(out, a->c.eps.num / AUTO_CONSTANT_SHARE);
  if (a->stores_sensitivity) rdt_bytes_f64(out, a->sensitivity);
  if (a->stores_why) {
    rdt_bytes_u32(out, a->why.clause);
    rdt_bytes_u32(out, a->why.has);
    rdt_bytes_f64(out, a->why.matrix_rows);
    rdt_bytes_f64(out, a->why.matrix_sd);
    rdt_bytes_f64(out, a->why.tree_depth);
    rdt_bytes_f64(out, a->why.tree_leaves);
  }
  a->chosen->encode(a->chosen_state, out);
}

static void *auto_decode(rdt_reader *in, const rdt_schema *s, const rdt_learn_common *c) {
  auto_state *a = auto_new(s, c);
  if (!a) return NULL;
  uint32_t chosen = rdt_read_u32(in);
  a->picked = rdt_read_u32(in);
  a->stores_sensitivity = (a->picked & AUTO_PICKED_SENSITIVITY) != 0;
  a->unguarded = (a->picked & AUTO_PICKED_UNGUARDED) != 0;
  a->stores_why = (a->picked & AUTO_PICKED_REASON) != 0;
  a->picked &= ~(AUTO_PICKED_SENSITIVITY | AUTO_PICKED_UNGUARDED | AUTO_PICKED_REASON);
  a->n_hat = rdt_read_f64(in);
  a->snr = rdt_read_f64(in);
  a->gain = rdt_read_f64(in);
  uint64_t eps_k = rdt_read_u64(in);
  if (a->stores_sensitivity) a->sensitivity = rdt_read_f64(in);
  if (a->stores_why) {
    a->why.clause = rdt_read_u32(in);
    a->why.has = rdt_read_u32(in);
    a->why.matrix_rows = rdt_read_f64(in);
    a->why.matrix_sd = rdt_read_f64(in);
    a->why.tree_depth = rdt_read_f64(in);
    a->why.tree_leaves = rdt_read_f64(in);
  }
  a->chosen = rdt_learner_by_id(chosen);
  const rdt_learner *picked = rdt_learner_by_id(a->picked);
  /* Never nested autos; the constant model's share is the one auto spends. */
  if (in->bad || !a->chosen || a->chosen == &rdt_learner_auto || (a->picked && (!picked || picked == &rdt_learner_auto)) ||
      eps_k != c->eps.num / AUTO_CONSTANT_SHARE || !(a->sensitivity >= 0 && a->sensitivity <= 1) ||
      (a->n_classes && a->sensitivity != 1) || !isfinite(a->n_hat) || !(isfinite(a->snr) || (!c->is_private && a->snr == INFINITY)) ||
      !(isfinite(a->gain) || isnan(a->gain)) || /* without noise the rule's s is infinite; NaN: step 4b */
      (a->unguarded && (!a->stores_sensitivity || !a->n_classes || a->gain != 0 || a->chosen->id != a->picked ||
                        a->picked == constant_id() || guard_resolves(a))) || /* 4a: only where it is the rule */
      (a->stores_why && !why_consistent(a))) {
    in->bad = 1;
    free(a);
    return NULL;
  }
  rdt_learn_common cc = *c;
  if (c->is_private) {
    cc.eps = constant_eps(c->eps);
    /* the constant fallback has ε_k; any pick, the constant too, ε_m */
    if (a->chosen->id != constant_id() || a->picked == constant_id())
      cc.eps.num = c->eps.num - cc.eps.num;
  }
  a->chosen_state = a->chosen->decode(in, s, &cc);
  if (!a->chosen_state) {
    in->bad = 1;
    free(a);
    return NULL;
  }
  return a;
}

static void auto_predict(const void *st, const double *x, double *out) {
  const auto_state *a = st;
  a->chosen->predict(a->chosen_state, x, out);
}

/* rdt_info's rule_reason: the clause of step 3 that picked, with the facts
** it read (stored for classification; regression's from n^ and eps); a JSON
** string, or null for a classification model written before the facts. */
static void rule_reason(const auto_state *a, char *out, size_t n) {
  const auto_why *w = &a->why;
  double eps_m = a->c.is_private ? rdt_eps_to_double(a->c.eps) - rdt_eps_to_double(constant_eps(a->c.eps)) : INFINITY;
  if (!a->n_classes) {
    if (a->picked == constant_id())
      snprintf(out, n, "\"constant: noisy_rows x epsilon_model = %.4g < %.4g (boosting's intercept noise would exceed 1/25 "
               "of the target range)\"", a->n_hat * eps_m, AUTO_REG_BOOST_MIN);
    else if (!a->c.is_private)
      snprintf(out, n, "\"boost: no noise\"");
    else
      snprintf(out, n, "\"boost: noisy_rows x epsilon_model = %.4g >= %.4g (its intercept's noise sd at most 1/25 of "
               "the target range)\"", a->n_hat * eps_m, AUTO_REG_BOOST_MIN);
    return;
  }
  if (!a->stores_why) {
    snprintf(out, n, "null");
    return;
  }
  double D = w->tree_depth, two_d = AUTO_TREE_BUDGET * D;
  char matrix[160], boost[120], tree[160];
  if (w->has & WHY_HAS_MATRIX)
    snprintf(matrix, sizeof matrix, "the matrix forest's cells expect %.3g rows per class (at least 1 and its noise sd %.3g wanted)",
             w->matrix_rows, w->matrix_sd);
  else
    snprintf(matrix, sizeof matrix, "the matrix forest is not a candidate (its paths test under half of the d = %u features, or its counters are too large)", a->d);
  if (!(w->has & WHY_HAS_BOOST))
    snprintf(boost, sizeof boost, "boosting is not a candidate");
  else
    snprintf(boost, sizeof boost, "s = %.3g %s %g", a->snr, a->snr >= AUTO_BOOST_SNR ? ">=" : "<", AUTO_BOOST_SNR);
  if (!(w->has & WHY_HAS_TREE))
    snprintf(tree, sizeof tree, "the private tree is not a candidate");
  else if (w->tree_leaves < a->K)
    snprintf(tree, sizeof tree, "the private tree's %.6g leaves (depth %g) are fewer than the %u classes", w->tree_leaves, D, a->K);
  else
    snprintf(tree, sizeof tree, "the private tree (depth %g) has d = %u <= 2 x %g and %u classes", D, a->d, D, a->K);
  switch (w->clause) {
  case WHY_MATRIX:
    snprintf(out, n, "\"(a) matrix_forest: its cells expect %.3g rows per class (noisy_rows / (cells x classes)), at least 1 "
             "and at least their noise sd %.3g\"", w->matrix_rows, w->matrix_sd);
    break;
  case WHY_BOOST_SHARE:
    snprintf(out, n, "\"(b) boost: s = %.3g >= %g and d = %u <= 2 x %g (the private tree's depth on noisy_rows): its share "
             "per feature is at least the tree's per level; %s\"", a->snr, AUTO_BOOST_SNR, a->d, D, matrix);
    break;
  case WHY_TREE:
    if (a->d > two_d)
      snprintf(out, n, "\"(c) private_tree: its %.6g leaves (depth %g) cover the %u classes and d = %u > 2 x %g: its share "
               "per level is larger than a share per feature; %s; %s\"", w->tree_leaves, D, a->K, a->d, D, matrix, boost);
    else
      snprintf(out, n, "\"(c) private_tree: its %.6g leaves (depth %g) cover the %u classes, one boundary to draw; %s; %s\"",
               w->tree_leaves, D, a->K, matrix, boost);
    break;
  case WHY_BOOST:
    snprintf(out, n, "\"(d) boost: s = %.3g >= %g; %s; %s\"", a->snr, AUTO_BOOST_SNR, matrix, tree);
    break;
  case WHY_NAIVE_BAYES:
    snprintf(out, n, "\"(d) naive_bayes: no earlier clause holds: %s; %s; %s\"", matrix, boost, tree);
    break;
  default:
    snprintf(out, n, "\"no clause's learner is registered: the first of private_tree, boost, matrix_forest and random_trees that is\"");
  }
}

static void auto_describe(const void *st, rdt_bytes *json) {
  const auto_state *a = st;
  const rdt_learner *picked = rdt_learner_by_id(a->picked);
  char buf[2400], snr[32], gain[32], reason[900];
  double eps = rdt_eps_to_double(a->c.eps), ek = rdt_eps_to_double(constant_eps(a->c.eps));
  /* JSON has no infinity: without noise s is infinite, shown as null */
  if (isfinite(a->snr)) snprintf(snr, sizeof snr, "%.17g", a->snr);
  else snprintf(snr, sizeof snr, "null");
  /* step 4b releases only its winner: no gain */
  if (isnan(a->gain) || a->unguarded) snprintf(gain, sizeof gain, "null");
  else snprintf(gain, sizeof gain, "%.17g", a->gain);
  rule_reason(a, reason, sizeof reason);
  /* 4a: the slice's rows trained the pick (no guard; the regression rule's constant too) */
  int fed = a->unguarded || (a->picked == constant_id() && !isnan(a->gain));
  char unguarded[200];
  snprintf(unguarded, sizeof unguarded,
           "none: its slice cannot resolve a pick one point under the constant (noisy_rows x epsilon below %g), so "
           "its rows trained the pick", (AUTO_VALIDATION_SHARE - 1) / AUTO_GUARD_RESOLVES);
  snprintf(buf, sizeof buf,
           "\"chosen\":\"%s\",\"auto\":{\"rule_picked\":\"%s\",\"rule_reason\":%s,\"noisy_rows\":%.17g,\"signal_to_noise\":%s,"
           "\"boost_above\":%g,\"guard_sensitivity\":%.17g,\"guard_margin\":%.17g,\"validation_gain\":%s,\"validation_choice\":\"%s\",\"validation_share\":%g,\"epsilon_constant\":%.17g,"
           "\"epsilon_model\":%.17g,\"epsilon_validation\":%.17g,\"why_private\":\"training and validation rows "
           "are disjoint (a coin per row); training rows spend epsilon_constant + epsilon_model, validation rows "
           "epsilon_validation (%s), each at most epsilon\"},",
           a->chosen->name, picked ? picked->name : "none", reason, a->n_hat, snr, AUTO_BOOST_SNR, a->sensitivity, guard_margin(a), gain,
           isnan(a->gain) ? "report noisy max over the readouts and the constant (a model written before naive Bayes chose its own readout)"
           : a->picked == constant_id() ? "none: the rule picked the constant model (epsilon_model)"
           : a->unguarded ? unguarded : "noisy gain over the constant",
           1.0 / AUTO_VALIDATION_SHARE, a->c.is_private ? ek : 0, a->c.is_private ? eps - ek : 0,
           a->c.is_private ? (fed ? eps - ek : eps) : 0, fed ? "they trained the pick" : "the guard");
  rdt_bytes_text(json, buf);
  a->chosen->describe(a->chosen_state, json);
}

static void auto_free(void *st) {
  auto_state *a = st;
  if (!a) return;
  for (int i = 0; i < AUTO_MAX_CANDIDATES; i++)
    if (a->cst[i]) a->cand[i]->free(a->cst[i]);
  if (a->kst) a->konst->free(a->kst);
  if (a->chosen_state) a->chosen->free(a->chosen_state);
  wipe_validation(a);
  rdt_rng_clear(&a->coin);
  if (a->coin_buf) sodium_memzero(a->coin_buf, 8 * ((size_t)a->d + 1));
  free(a->coin_buf);
  free(a->x0);
  free(a->scratch);
  sodium_memzero(a, sizeof *a);
  free(a);
}

/* ---- rounds (step 7) ------------------------------------------------------ */
/* Round payload (little-endian): u32 AUTO_ROUND_TAG, u32 the round it opens,
** u32 phase (1: the pick's rounds, 2: the guard), u32 the pick (candidate
** index), u32 the pick's own round it opens (phase 1), f64 n^, u64 length
** and the constant's released payload, u64 length and the pick's message
** payload (phase 1; empty for its round 0) or its released payload (phase 2). */

static uint32_t auto_rounds(const void *st) {
  const auto_state *a = st;
  uint32_t most = 1;
  for (int i = 0; i < AUTO_MAX_CANDIDATES; i++) {
    uint32_t r = a->cst[i] ? candidate_rounds(a->cand[i], a->cst[i]) : 0;
    if (r > most) most = r;
  }
  return 1 + most + 1; /* the constant, the pick's, the guard */
}

static int round_fail(char *err, size_t en, const char *msg) {
  if (en) snprintf(err, en, "auto: %s", msg);
  return 0;
}

/* Step 7's coin: a validation row when the keyed hash of its encoding is 0
** modulo AUTO_VALIDATION_SHARE. */
static int validation_coin(auto_state *a, const double *x, uint32_t cls, double target) {
  unsigned char *b = a->coin_buf, h[crypto_shorthash_BYTES];
  for (uint32_t f = 0; f <= a->d; f++) {
    double v = f < a->d ? x[f] + 0.0 : a->n_classes ? (double)cls : target + 0.0; /* + 0.0: -0 as 0 */
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (int i = 0; i < 8; i++) b[8 * (size_t)f + i] = (unsigned char)(u >> (8 * i));
  }
  crypto_shorthash(h, b, 8 * ((size_t)a->d + 1), a->coin_key);
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u |= (uint64_t)h[i] << (8 * i);
  return u % AUTO_VALIDATION_SHARE == 0;
}

/* Step 7's regression gain of one row in grid units, clamped to the bound. */
static int64_t fixed_gain(const auto_state *a, double g) {
  const double unit = (double)((int64_t)1 << AUTO_GUARD_FIX);
  double lim = floor(a->sensitivity * unit), v = nearbyint(g * unit);
  return (int64_t)(v > lim ? lim : v < -lim ? -lim : v);
}

static void round_row(auto_state *a, const double *x, uint32_t cls, double target) {
  if (a->n_classes && cls >= a->n_classes) return;
  int validation = validation_coin(a, x, cls, target);
  if (a->phase == 0) {
    if (!validation) a->konst->row(a->kst, x, cls, target);
    return;
  }
  if (a->phase == 1) { /* step 4a: without a guard the slice trains the pick too */
    if (!validation || slice_trains_pick(a, a->pick)) a->cand[a->pick]->row(a->cst[a->pick], x, cls, target);
    return;
  }
  if (!validation) return;
  double *p = a->scratch, *q = a->scratch + a->K + 1;
  const rdt_learner *l = a->cand[a->pick];
  l->predict(a->cst[a->pick], x, p);
  a->konst->predict(a->kst, x, q);
  if (a->n_classes) {
    a->guard += (int64_t)(argmax(p, a->K) == cls) - (int64_t)(argmax(q, a->K) == cls);
    return;
  }
  double range = a->c.target_max - a->c.target_min;
  a->guard += fixed_gain(a, fabs((q[0] - target) / range) - fabs((p[0] - target) / range));
}

/* A released payload of n bytes decoded by l with facts c, which must use
** every byte; NULL otherwise. */
static void *decode_exact(const rdt_learner *l, const unsigned char *p, size_t n, const rdt_schema *s,
                          const rdt_learn_common *c) {
  rdt_reader in = {p, n, 0, 0};
  void *st = l->decode(&in, s, c);
  if (st && (in.bad || in.pos != n)) {
    l->free(st);
    return NULL;
  }
  return in.bad ? NULL : st;
}

/* Step 3 from n^ (post-processing); frees every candidate but the pick. */
static int apply_rule(auto_state *a) {
  double eps_m = a->c.is_private ? rdt_eps_to_double(a->cm.eps) : INFINITY;
  a->snr = a->n_hat > 0 ? a->n_hat * eps_m / ((a->d + 1) * a->K * a->mean_bins) : 0;
  int pick = a->n_classes == 0 ? pick_regressor(a, eps_m) : pick_classifier(a);
  for (int i = 0; i < AUTO_MAX_CANDIDATES; i++) {
    if (i == pick || !a->cst[i]) continue;
    a->cand[i]->free(a->cst[i]);
    a->cst[i] = NULL;
  }
  if (pick >= 0 && a->cand[pick]->use_row_count) a->cand[pick]->use_row_count(a->cst[pick], a->n_hat); /* step 3 */
  a->unguarded = pick >= 0 && pick != CAND_CONSTANT && !guard_resolves(a); /* step 4a */
  return pick;
}

static int read_round(auto_state *a, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en) {
  rdt_reader in = {msg, n, 0, 0};
  uint32_t tag = rdt_read_u32(&in), at = rdt_read_u32(&in), phase = rdt_read_u32(&in), pick = rdt_read_u32(&in),
           sub = rdt_read_u32(&in);
  a->n_hat = rdt_read_f64(&in);
  uint64_t kn = rdt_read_u64(&in);
  if (in.bad || tag != AUTO_ROUND_TAG || at != r || (phase != 1 && phase != 2) || pick >= AUTO_MAX_CANDIDATES ||
      !isfinite(a->n_hat) || kn > in.n - in.pos)
    return round_fail(err, en, "the round message is not one of this plan's rounds");
  const unsigned char *kp = in.p + in.pos;
  in.pos += (size_t)kn;
  uint64_t pn = rdt_read_u64(&in);
  if (in.bad || pn != in.n - in.pos) return round_fail(err, en, "the round message's parts have other lengths");
  const unsigned char *pp = in.p + in.pos;
  void *k = decode_exact(a->konst, kp, (size_t)kn, a->schema, &a->ck);
  if (!k) return round_fail(err, en, "the round message's constant model does not decode");
  a->konst->free(a->kst);
  a->kst = k;
  int want = apply_rule(a); /* every party applies the rule to the released n^ */
  if (want < 0 || (uint32_t)want != pick || !a->cst[pick])
    return round_fail(err, en, "the round message names another pick than the rule's on its n^");
  a->pick = want;
  a->phase = (int)phase;
  a->sub = sub;
  a->picked = a->cand[pick]->id;
  const rdt_learner *l = a->cand[pick];
  if (phase == 1) {
    uint32_t most = candidate_rounds(l, a->cst[pick]);
    a->pick_rounds = l->rounds && l->round_open && l->round_release && l->rounds(a->cst[pick]) > 0;
    if (sub >= most || r != 1 + sub || (sub == 0 && pn != 0))
      return round_fail(err, en, "the round message opens a round its pick does not have");
    if (a->pick_rounds && !l->round_open(a->cst[pick], sub, sub ? pp : NULL, (size_t)pn, err, en)) return 0;
    return 1;
  }
  if (sub != 0 || r < 2 || (!a->n_classes && pick == CAND_CONSTANT) || a->unguarded)
    return round_fail(err, en, "the round message opens a guard this pick does not have");
  void *m = decode_exact(l, pp, (size_t)pn, a->schema, &a->cm);
  if (!m) return round_fail(err, en, "the round message's picked model does not decode");
  l->free(a->cst[pick]);
  a->cst[pick] = m;
  if (!a->n_classes) {
    double *q = a->scratch + a->K + 1;
    a->konst->predict(a->kst, a->x0, q); /* any input: the constant ignores it */
    a->sensitivity = regression_sensitivity(a, l, m, q[0]);
  }
  return 1;
}

static int auto_round_open(void *st, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en) {
  auto_state *a = st;
  if (en) err[0] = 0;
  if (a->in_rounds || a->nv || a->chosen) return round_fail(err, en, "a round opens on a fresh state only");
  if (r == 0) { /* every candidate the rule may pick must run in rounds: before any row */
    for (int i = 0; i < AUTO_MAX_CANDIDATES; i++)
      if (a->cst[i] && candidate_rounds(a->cand[i], a->cst[i]) == 0) {
        if (en)
          snprintf(err, en, "auto: \"%s\", a candidate auto may pick for this task, has no rounds in this build (its "
                   "release reads its rows more than once, and it cannot do so in shard mode yet); shard mode trains "
                   "\"auto\" only when every candidate it may pick runs in rounds or in one round of counters: name "
                   "an \"algorithm\", or train with rdt_fit over the shards ATTACHed and combined with UNION ALL",
                   a->cand[i]->name);
        return 0;
      }
    if (!a->coin_keyed)
      return round_fail(err, en, "rounds need the plan's structure key (or a seed) for the validation coins");
    if (n != 0) return round_fail(err, en, "the first round has no message");
    a->phase = 0;
  } else if (!a->coin_keyed) {
    return round_fail(err, en, "rounds need the plan's structure key (or a seed) for the validation coins");
  } else if (!read_round(a, r, msg, n, err, en)) {
    return 0;
  }
  a->round = r;
  a->in_rounds = 1;
  return 1;
}

static uint32_t auto_counters(void *st, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  auto_state *a = st;
  unsigned char ignored[32];
  uint32_t k = 0;
  if (!a->in_rounds || max < 1) return 0;
  if (a->phase == 0) k = a->konst->counters(a->kst, out, max, ignored);
  else if (a->phase == 1) k = a->cand[a->pick]->counters(a->cst[a->pick], out, max, ignored);
  else {
    out[0] = (rdt_span){&a->guard, 1};
    k = 1;
  }
  if (k) memcpy(digest, a->digest, 32);
  return k;
}

/* The next round's payload; `pick_part` the pick's message or model. */
static void write_round(auto_state *a, uint32_t phase, uint32_t sub, const rdt_bytes *pick_part, rdt_bytes *next) {
  rdt_bytes kb = {0};
  a->konst->encode(a->kst, &kb);
  rdt_bytes_u32(next, AUTO_ROUND_TAG);
  rdt_bytes_u32(next, a->round + 1);
  rdt_bytes_u32(next, phase);
  rdt_bytes_u32(next, (uint32_t)a->pick);
  rdt_bytes_u32(next, sub);
  rdt_bytes_f64(next, a->n_hat);
  rdt_bytes_u64(next, kb.n);
  rdt_bytes_put(next, kb.p, kb.n);
  rdt_bytes_u64(next, pick_part ? pick_part->n : 0);
  if (pick_part) rdt_bytes_put(next, pick_part->p, pick_part->n);
  if (kb.oom || (pick_part && pick_part->oom)) next->oom = 1;
  rdt_bytes_free(&kb);
}

/* The pick is released: the guard's round next, or (the regression rule's
** constant) the model. */
static int after_pick(auto_state *a, rdt_bytes *next) {
  if (slice_trains_pick(a, a->pick)) { /* steps 4 and 4a: no guard */
    a->gain = 0;
    release(a, a->pick, 1);
    return 2;
  }
  rdt_bytes mb = {0};
  a->cand[a->pick]->encode(a->cst[a->pick], &mb);
  write_round(a, 2, 0, &mb, next);
  rdt_bytes_free(&mb);
  return next->oom ? 0 : 1;
}

static int auto_round_release(void *st, rdt_rng *noise, rdt_bytes *next) {
  auto_state *a = st;
  if (!a->in_rounds || a->chosen) return 0;
  if (a->phase == 0) { /* step 2, then step 3's rule on n^ */
    if (!a->konst->finish(a->kst, noise)) return 0;
    rdt_bytes b = {0};
    a->konst->encode(a->kst, &b);
    rdt_reader r = {b.p, b.n, 0, 0};
    a->n_hat = 0;
    for (uint32_t k = 0; k < (a->n_classes ? a->n_classes : 1); k++) a->n_hat += (double)(int64_t)rdt_read_u64(&r);
    int ok = !b.oom && !r.bad;
    rdt_bytes_free(&b);
    if (!ok || (a->pick = apply_rule(a)) < 0) return 0;
    write_round(a, 1, 0, NULL, next);
    return next->oom ? 0 : 1;
  }
  if (a->phase == 1) { /* the pick's own release at this point */
    const rdt_learner *l = a->cand[a->pick];
    if (!a->pick_rounds) return l->finish(a->cst[a->pick], noise) ? after_pick(a, next) : 0;
    rdt_bytes sub = {0};
    int step = l->round_release(a->cst[a->pick], noise, &sub);
    if (step == 1) write_round(a, 1, a->sub + 1, &sub, next);
    rdt_bytes_free(&sub);
    if (step == 1) return next->oom ? 0 : 1;
    return step == 2 ? after_pick(a, next) : 0;
  }
  /* step 4: the guard */
  double gain = a->n_classes ? (double)a->guard : (double)a->guard / (double)((int64_t)1 << AUTO_GUARD_FIX);
  a->guard = 0;
  if (a->c.is_private && !rdt_auto_guard(gain, !a->n_classes, a->sensitivity, a->c.eps, noise, &gain)) return 0;
  a->gain = gain;
  release(a, a->pick, gain >= -guard_margin(a));
  return 2;
}

static const char *const auto_options[] = {NULL};

const rdt_learner rdt_learner_auto = {
    .name = "auto",
    .id = 5,
    .tasks = RDT_LEARN_CLASSIFICATION | RDT_LEARN_REGRESSION,
    .options = auto_options,
    .start = auto_start,
    .row = auto_row,
    .merge = auto_merge,
    .finish = auto_finish,
    .encode = auto_encode,
    .decode = auto_decode,
    .predict = auto_predict,
    .describe = auto_describe,
    .free = auto_free,
    .counters = auto_counters,
    .rounds = auto_rounds,
    .round_open = auto_round_open,
    .round_release = auto_round_release,
};
