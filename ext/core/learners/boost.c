/*
** boost.c - cyclic additive boosting on public per-feature histograms
** (EBM-like), pure epsilon. The model is an additive score per class per
** (feature, bin) plus a per-class intercept; classification predicts the
** softmax of the summed scores, regression the summed score (in units of
** the target range) clamped into the public target bounds.
**
** Bins are public: numeric features in "bins" equal-width bins of their
** bounds (option "bins", 2..255, or "auto", the default), categorical ones by
** code (their n_values + 1 bins, `other` last; at most 65536 bins, the
** schema's limit). "auto" (when the schema has a numeric feature; else 10
** bins) keeps the rows binned at F = 120 (or the largest of 60, 30, 15
** whose scores fit: from the schema) and, after the intercept's release,
** uses B bins, the divisor of F nearest (in ratio) to
** max(10, sqrt(n^ eps / (K d))) (K = 1 for regression): the square-root rule
** of histograms on a class's rows, shrunk by the per-visit budget eps / d,
** never coarser than the fixed default 10 (coarser bins lost 3 to 6 points
** on wall_following, balance_scale and banknote: results/learners.md). n^ is the intercept's noisy
** row count (the sum of the noisy class counts clamped at 0; regression: the
** noisy count), so the choice is post-processing; non-private, the exact
** count. Bin j of F is bin j / (F / B), in training and in predict().
** Options: "bins", "rounds" (1..4, default 1), "learning_rate" (0 < lr <= 10,
** default 1.0; regression's steps are shrunk by their noise instead, Contract 4).
**
** Training needs the current model's prediction for every row while it
** visits the features in turn, so row() keeps a compact binned copy.
** Memory bound: d * w + 2 bytes per row for classification (the class as a
** uint16), d * w + 8 for regression (the scaled target as a double), where
** w = 1 if every feature has at most 256 bins, else 2; finish() needs n * K
** (regression: n) doubles more for the rows' current scores, plus O(bins)
** scratch. An allocation failure in row() or merge() sets a flag and finish()
** then fails closed (returns 0, releases nothing).
**
** Privacy contract (neighbours: add or remove one row; K classes, d features,
** R rounds; grid G = 2^12 gradient units per 1.0, count weight C = 2^9 grid
** units per row; all epsilons rationals num / 2^32, shares rounded down):
**   1. The budget: eps_0 = floor(eps / 10) for the intercept, and
**      eps_q = floor((eps - eps_0) / (R * d)) for each of the R * d feature
**      visits. Total spent: eps_0 + R * d * eps_q <= eps (sequential
**      composition, adaptive: each query below is computed with the model
**      released so far, which is fixed given the earlier outputs, so its
**      sensitivity is the one row's own contribution).
**   2. The intercept. Classification: the K class counts; one row changes one
**      count by 1, L1 sensitivity 1, discrete Laplace of scale 1/eps_0 each:
**      eps_0-DP. Regression: the row count (sensitivity 1) and the centred
**      sum of the targets u scaled into [0, 1], sum of round(2^16 (u - 1/2))
**      (sensitivity 2^15 grid units, as |u - 1/2| <= 1/2); the intercept is
**      m = 1/2 + sum / (max(count, 0) + 1.5 / eps_0 pseudo rows) clamped
**      into [0, 1] (centring halves the sum's noise, and the count's noise
**      weighs only |m - 1/2|); then, given m, the spread: the 13 band counts of |u - m|, band k between
**      the public edges 2^(-(k+1)/2) and 2^(-k/2) (k = 0 .. 11), band 12
**      below 2^-6; one row lies in one band, L1 sensitivity 1. Each of the
**      three releases has eps_0 / 3 (adaptive composition): eps_0-DP.
**   3. A feature visit releases, for every bin of the feature, the vector
**      (C * count, g_1, ..., g_K) in grid units, g_k the sum over the bin's
**      rows of round(G * (onehot(y)_k - p_k)), p the softmax of the row's
**      current scores (regression: the vector (C_r * count, g), g the sum of
**      round(G * r), r = the target minus the clamped current prediction, both
**      scaled into [0, 1] by the public range, clipped into [-c, c] below).
**      One row lies in exactly one
**      bin and changes only that bin's vector: by C in the count, and by
**      sum_k |round(G * g_k)| <= G * sum_k |g_k| + K / 2 <= 2G + K in the
**      gradients, since sum_k |onehot_k - p_k| = 2 (1 - p_y) <= 2 (a guard
**      drops a row's gradient should floating point ever exceed it).
**      So the whole release of a visit (all bins) has L1 sensitivity
**      S = C + 2G + K grid units (two classes: 3b), and every component of every bin gets
**      discrete Laplace of scale S / eps_q: eps_q-DP per visit.
**      Regression: the clip c (grid units, a multiple of 4 in [G/64, G]) is
**      the edge 2^(-k/2) G rounded up, k the largest (<= 12) such that for
**      every j <= k the noisy rows in bands below j plus sqrt(j) times a
**      band's noise sd stay within n^ / 10 (n^ the noisy count): at most a
**      tenth of the rows, with a noise sd of margin, lie beyond the clip.
**      It is post-processing of Contract 2's release, so public to the
**      visits. The count weight is C_r = c / 4 grid units per row (about
**      the best of c/2, c/4, c/8, c/16, and what minimising the step's
**      error (count and sum noise) gives for bin means near c / 4). A row
**      moves its bin's vector by C_r in the count and by |round(G r)| <= c
**      (c is an integer), so S_r = c + c / 4 = rdt_boost_regression_
**      sensitivity(c), with discrete Laplace of scale S_r / eps_q on every
**      component: eps_q-DP per visit. Clipping spends the visits' budget on
**      the residuals' typical range instead of the whole target range.
**   3b. Two classes: a row's gradients are (g, -g) with g = onehot(y)_1 -
**      p_1 in [-1, 1], so a visit releases per bin (C * count, g_1) only, g_1
**      the sum of round(G * g) (|round(G g)| <= G, G an integer): L1
**      sensitivity S_2 = C + G, discrete Laplace of scale S_2 / eps_q on both
**      components, eps_q-DP per visit; class 0's sum is taken as -g_1
**      (post-processing). Half the gradient's bound of 3 for the same
**      information.
**      Such models set bit 24 of the payload's first word; binary models
**      written before it (without the bit) released both sums under 3, and
**      are still read and described so.
**   4. The step is post-processing of the noisy vectors. Classification:
**      score[f][b][k] +=
**      lr * (g_k / G) / (h * max(count, 0) + ridge), with the public per-row
**      Hessian bound h = (1/K)(1 - 1/K) (1/4 for binary; 1 for regression)
**      and ridge = 2h times the count's noise scale S / (C eps_q) (non-
**      private: h), which shrinks the steps of bins whose sums are mostly
**      noise. (C = G/8 and the factor 2 were the best of C in {G/16, G/8,
**      G/4, G/2, G} and 1, 2, 4 scales on the ten classification sets of
**      ../shared/datasets: a small count weight leaves the gradients more of
**      the budget, and the count is only needed roughly.) Regression, per
**      visit, empirical Bayes: with n_b = max(count_b, 0), s_b = g_b / G and
**      v = 2 (S_r / (G eps_q))^2, w = 2 (S_r / (C_r eps_q))^2 (a sum's and a
**      count's noise variance; 0 non-private), the bins' mean residuals are
**      taken as drawn with variance tau^2 = (sum_b (s_b^2 - v) - 2 sqrt(5 B)
**      v) / sum_b (n_b^2 - w) (moments over the B bins, less two sds of the
**      numerator under pure noise; 0 unless both parts are positive), at
**      most (c/G)^2,
**      and each bin steps by lr times their posterior mean s_b n_b tau^2 /
**      (n_b^2 tau^2 + k v), clamped into +-c/G (a mean of clipped residuals
**      lies there): a feature whose sums are mostly noise gets tau^2 near 0
**      and barely moves, one with signal steps nearly to its bin means
**      (non-private: s_b / n_b). A numeric feature's (s_b, n_b) are first
**      smoothed over its neighbouring bins (weights 1, w, w^2 at distance
**      0, 1, 2, truncated at the ends and normalised; k = the sum of the
**      squared weights, 1 unsmoothed), w of {0, 1/4, 1/2, 1} with the least
**      Stein unbiased risk estimate of the smoothed sums, |Hs - s|^2 +
**      2 v tr(H), valid for any noise of known variance (no smoothing
**      non-private or below 3 bins). Scores are clamped
**      into +-1e6. With pure epsilon more rounds cost more noise:
**      every visit's share shrinks as R grows (the measured best is R = 1,
**      results/boost_eps1.md).
**   5. Every counter of every bin gets its noise whatever its value and
**      whether or not a row reached it (data-independent work); if any noise
**      parameter cannot be set up (e.g. a share rounds to 0) or memory runs
**      out, finish() returns 0 and nothing is released. Afterwards the row
**      copy and all exact sums are wiped and freed: only the scores remain.
**   6. Rounds (learner.h contract 10; shard mode). The releases of 1 to 5
**      in finish()'s order, one per round: round 0 the class counts
**      (regression: the count and the centred sum; round 1 the 13 spread
**      bands around the released mean), then one round per feature visit,
**      R * d of them, whose vector is exactly the visit's per-bin vectors
**      of Contract 3 (vec_width components per bin: the count, then the
**      gradient sums released, or the residual sum). A site's row adds to
**      round r what finish() would add at release r: its scores are
**      replayed from the message as finish() accumulates them (the
**      intercept, then each earlier visit's change, snapshot j's score less
**      snapshot j - 1's, in visit order), so the merged vector is the
**      union's exact vector bit for bit. The coordinator draws the same
**      noise in the same order (visit_release, release_*: finish()'s own
**      code) and the message carries only released values (the intercept,
**      n^, the bins and clip chosen from them, the score snapshots): the
**      neighbouring relation, every sensitivity and every share of eps are
**      1 to 5's, and the rounds spend eps_0 + R d eps_q <= eps.
** Non-private ("epsilon": null): the same steps without noise.
*/
#include "boost.h"

#include "../digest.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID RDT_BOOST_GRID                 /* G: gradient grid units per 1.0 */
#define COUNT_WEIGHT RDT_BOOST_COUNT_WEIGHT /* C: count grid units per row */
#define SUM_GRID_LOG2 16                    /* regression intercept sum: units of 2^-16 */
#define INTERCEPT_SHARE 10                  /* eps_0 = eps / 10 */
#define RIDGE_SCALES 2               /* ridge: h times this many count noise scales */
#define CLIP_BANDS 13                /* regression spread bands: edges 2^(-j/2), j = 0 .. 12 */
#define CLIP_TAIL (1.0 / 10)         /* the clip leaves at most this fraction of rows beyond it */
#define CLIP_MIN (GRID / 64)         /* 2^-6 = the last edge */
#define CLIP_COUNT_SHARE 4           /* regression count weight: the clip's grid units / 4 */
#define SCORE_LIMIT 1e6
#define MAX_ROUNDS 4
#define MAX_LR 10.0
#define MAX_CELLS ((uint64_t)1 << 24) /* score cells (bins x classes): 128 MiB of doubles */
#define AUTO_FINE 120u /* "auto" bins: divisible by 10, 12, 15, 20, 24, 30, 40, 60 */

/* What every visit needs (Contracts 3 and 4), from the released clip. */
typedef struct visit_params {
  uint64_t aq, bq;          /* the noise of every component */
  int64_t cw;               /* count weight, grid units per row */
  double h, ridge, vs, vn;  /* the step's Hessian bound, ridge, noise variances */
  double cmax;              /* regression: the clip in units of 1.0 */
} visit_params;

typedef struct boost_state {
  uint32_t n_classes;    /* K; 0: regression */
  uint32_t nk;           /* score components per bin: K, or 1 */
  uint32_t nf;           /* features */
  uint32_t bins, rounds;
  uint32_t fine;         /* "auto": the resolution rows are kept at (0: fixed bins) */
  double lr;
  int is_private;
  rdt_eps eps;
  double lo, hi;         /* regression: public target bounds */
  rdt_feature *feat;     /* public facts only (type, bounds, n_values) */
  uint32_t *nb, *off;    /* bins per feature, first bin's index */
  uint32_t total_bins, max_bins;
  double *intercept;     /* nk */
  double *scores;        /* total_bins * nk */
  /* the binned row copy (exact, private), gone after finish */
  unsigned char *rows;
  size_t n_rows, cap_rows, row_size;
  uint32_t width;        /* bytes per bin index: 1 or 2 */
  int oom;
  int one_gradient;      /* Contract 3b: two classes, class 1's gradient sums only */
  /* Contract 6, rounds: the open round, its exact vector and what the last
  ** round message released */
  int in_rounds;
  uint32_t round;
  int64_t *vec;
  size_t n_vec;
  double n_released;     /* the intercept's n^ (regression: the noisy count, not clamped) */
  uint32_t clip;         /* regression: the released clip, grid units */
  double *snap;          /* n_snap released score snapshots of total_bins * nk */
  uint32_t n_snap;
  double *z, *p;         /* a row's scores and probabilities (nk each) */
  uint32_t *rb;          /* a row's bins (nf) */
  visit_params vp;       /* the open round's count weight and clip */
} boost_state;

static double clamp01(double u) { return u < 0 ? 0 : u > 1 ? 1 : u; }

static double clamp_score(double v) {
  if (!(v == v)) return 0;
  return v < -SCORE_LIMIT ? -SCORE_LIMIT : v > SCORE_LIMIT ? SCORE_LIMIT : v;
}

/* Contract 1: the shares (zero when not private or impossible). */
static rdt_eps eps_intercept(const boost_state *s) {
  rdt_eps e = {s->is_private ? s->eps.num / INTERCEPT_SHARE : 0};
  return e;
}
static rdt_eps eps_visit(const boost_state *s) {
  rdt_eps e = {0};
  uint64_t visits = (uint64_t)s->rounds * s->nf;
  if (s->is_private && visits) e.num = (s->eps.num - eps_intercept(s).num) / visits;
  return e;
}

/* Contract 3: the count and all K gradient sums of a bin. */
static uint64_t all_sums_sensitivity(uint32_t n_classes) {
  return (uint64_t)COUNT_WEIGHT + 2 * (uint64_t)GRID + n_classes;
}

uint64_t rdt_boost_sensitivity(uint32_t n_classes) {
  if (n_classes == 2) return (uint64_t)COUNT_WEIGHT + (uint64_t)GRID; /* Contract 3b */
  return n_classes ? all_sums_sensitivity(n_classes) : (uint64_t)GRID + GRID / CLIP_COUNT_SHARE;
}

/* A classifier's per-visit sensitivity as its model was released: 3b, or 3
** for binary models written before 3b. */
static uint64_t visit_sensitivity(const boost_state *s) {
  if (s->n_classes == 2 && !s->one_gradient) return all_sums_sensitivity(2);
  return rdt_boost_sensitivity(s->n_classes);
}

static double hessian_bound(const boost_state *s) {
  if (!s->n_classes) return 1;
  if (s->n_classes < 2) return 0.25;
  double k = s->n_classes;
  return (1 / k) * (1 - 1 / k);
}

/* Regression spread band edge j: 2^(-j/2) of the target range. */
static double clip_edge(uint32_t j) { return ldexp(j % 2 ? sqrt(0.5) : 1.0, -(int)(j / 2)); }

static void wipe_rows(boost_state *s) {
  if (s->rows) sodium_memzero(s->rows, s->cap_rows * s->row_size);
  free(s->rows);
  s->rows = NULL;
  s->n_rows = s->cap_rows = 0;
}

static void boost_free(void *st) {
  boost_state *s = st;
  if (!s) return;
  wipe_rows(s);
  if (s->vec) sodium_memzero(s->vec, s->n_vec * sizeof *s->vec);
  if (s->z) sodium_memzero(s->z, s->nk * sizeof *s->z);
  if (s->p) sodium_memzero(s->p, s->nk * sizeof *s->p);
  if (s->rb) sodium_memzero(s->rb, (s->nf ? s->nf : 1) * sizeof *s->rb);
  free(s->vec);
  free(s->snap);
  free(s->z);
  free(s->p);
  free(s->rb);
  if (s->scores) sodium_memzero(s->scores, (size_t)s->total_bins * s->nk * sizeof *s->scores);
  if (s->intercept) sodium_memzero(s->intercept, s->nk * sizeof *s->intercept);
  free(s->scores);
  free(s->intercept);
  free(s->feat);
  free(s->nb);
  free(s->off);
  sodium_memzero(s, sizeof *s);
  free(s);
}

static void *fail_start(boost_state *s, char *err, size_t en, const char *msg) {
  if (en) snprintf(err, en, "%s", msg);
  boost_free(s);
  return NULL;
}

/* The state for a schema and parameters (start and decode). NULL with err
** (empty: out of memory). */
static boost_state *alloc_state(const rdt_schema *sc, const rdt_learn_common *c, uint32_t bins, uint32_t rounds,
                                double lr, char *err, size_t en) {
  if (en) err[0] = 0;
  boost_state *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n_classes = c->regression ? 0 : sc->n_classes;
  s->nk = s->n_classes ? s->n_classes : 1;
  s->nf = sc->n_features;
  s->bins = bins;
  s->rounds = rounds;
  s->lr = lr;
  s->is_private = c->is_private;
  s->eps = c->eps;
  s->lo = c->target_min;
  s->hi = c->target_max;
  size_t nf1 = s->nf ? s->nf : 1;
  s->feat = calloc(nf1, sizeof *s->feat);
  s->nb = calloc(nf1, sizeof *s->nb);
  s->off = calloc(nf1, sizeof *s->off);
  if (!s->feat || !s->nb || !s->off) return fail_start(s, err, 0, "");
  uint64_t total = 0;
  s->width = 1;
  for (uint32_t f = 0; f < s->nf; f++) {
    const rdt_feature *ft = &sc->features[f];
    if (ft->type != RDT_FEATURE_NUMERIC && ft->n_values > RDT_MAX_VALUES)
      return fail_start(s, err, en, "boost: a categorical feature has more than 65535 values");
    s->feat[f].type = ft->type;
    s->feat[f].min = ft->min;
    s->feat[f].max = ft->max;
    s->feat[f].n_values = ft->n_values;
    s->nb[f] = rdt_learn_bins(&s->feat[f], bins);
    s->off[f] = (uint32_t)total;
    total += s->nb[f];
    if (s->nb[f] > 256) s->width = 2;
    if (s->nb[f] > s->max_bins) s->max_bins = s->nb[f];
    if (total * s->nk > MAX_CELLS) {
      char msg[200];
      snprintf(msg, sizeof msg, "boost: too many scores (bins x classes above %llu); use fewer bins, features "
               "or classes", (unsigned long long)MAX_CELLS);
      return fail_start(s, err, en, msg);
    }
  }
  s->total_bins = (uint32_t)total;
  s->row_size = (size_t)s->nf * s->width + (s->n_classes ? 2 : sizeof(double));
  s->intercept = calloc(s->nk, sizeof *s->intercept);
  s->scores = calloc(total ? (size_t)total * s->nk : 1, sizeof *s->scores);
  if (!s->intercept || !s->scores) return fail_start(s, err, 0, "");
  return s;
}

/* Score cells of the schema at `bins` (saturating above MAX_CELLS). */
static uint64_t cells_at(const rdt_schema *sc, const rdt_learn_common *c, uint32_t bins) {
  uint64_t total = 0, nk = c->regression || !sc->n_classes ? 1 : sc->n_classes;
  for (uint32_t f = 0; f < sc->n_features && total <= MAX_CELLS; f++) total += rdt_learn_bins(&sc->features[f], bins) * nk;
  return total;
}

static void *boost_start(const rdt_json *opts, const rdt_schema *sc, const rdt_learn_common *c, char *err,
                         size_t en) {
  uint32_t bins = 0, rounds = 1; /* bins 0: "auto" */
  double lr = 1.0;
  const rdt_json *j = rdt_json_get(opts, "bins");
  if (en) err[0] = 0;
  if (j && !(j->type == RDT_JSON_STRING && strcmp(j->string, "auto") == 0)) {
    if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < 2 || j->integer > 255) {
      snprintf(err, en, "\"bins\" must be \"auto\" or an integer from 2 to 255");
      return NULL;
    }
    bins = (uint32_t)j->integer;
  }
  uint32_t fine = !bins && rdt_learn_has_numeric(sc) ? AUTO_FINE : 0;
  /* the finest of 120, 60, 30, 15 whose scores fit MAX_CELLS: from the schema alone */
  while (fine > 15 && cells_at(sc, c, fine) > MAX_CELLS) fine /= 2;
  if (!bins) bins = fine ? fine : 10;
  if ((j = rdt_json_get(opts, "rounds"))) {
    if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < 1 || j->integer > MAX_ROUNDS) {
      snprintf(err, en, "\"rounds\" must be an integer from 1 to %d (with pure epsilon every round divides it)",
               MAX_ROUNDS);
      return NULL;
    }
    rounds = (uint32_t)j->integer;
  }
  if ((j = rdt_json_get(opts, "learning_rate"))) {
    if (j->type != RDT_JSON_NUMBER || !(j->number > 0 && j->number <= MAX_LR)) {
      snprintf(err, en, "\"learning_rate\" must be a number > 0 and at most %g", MAX_LR);
      return NULL;
    }
    lr = j->number;
  }
  boost_state *s = alloc_state(sc, c, bins, rounds, lr, err, en);
  if (s) {
    s->fine = fine;
    s->one_gradient = s->n_classes == 2; /* Contract 3b */
  }
  return s;
}

/* ---- rows ---------------------------------------------------------------- */

/* A kept bin (at F when "auto") at the current bins. */
static uint32_t to_bins(const boost_state *s, uint32_t f, uint32_t b) {
  return s->fine && s->feat[f].type == RDT_FEATURE_NUMERIC ? b / (s->fine / s->bins) : b;
}

/* The bin of value x of feature f at the current bins. */
static uint32_t value_bin(const boost_state *s, uint32_t f, double x) {
  return to_bins(s, f, rdt_learn_bin(&s->feat[f], s->fine ? s->fine : s->bins, x));
}

static uint32_t row_bin(const boost_state *s, const unsigned char *row, uint32_t f) {
  if (s->width == 1) return row[f];
  uint16_t v;
  memcpy(&v, row + 2 * (size_t)f, 2);
  return v;
}

static uint32_t row_class(const boost_state *s, const unsigned char *row) {
  uint16_t v;
  memcpy(&v, row + (size_t)s->nf * s->width, 2);
  return v;
}

static double row_target(const boost_state *s, const unsigned char *row) {
  double v;
  memcpy(&v, row + (size_t)s->nf * s->width, sizeof v);
  return v;
}

/* Room for `more` rows; 0 (and the flag) when memory runs out. */
static int reserve(boost_state *s, size_t more) {
  if (s->oom) return 0;
  if (s->cap_rows - s->n_rows >= more) return 1;
  size_t cap = s->cap_rows ? s->cap_rows : 1024;
  while (cap - s->n_rows < more) {
    if (cap > SIZE_MAX / 2 / s->row_size) { s->oom = 1; return 0; }
    cap *= 2;
  }
  /* A fresh block, not realloc: the old one is wiped before it is freed. */
  unsigned char *p = malloc(cap * s->row_size);
  if (!p) { s->oom = 1; return 0; }
  if (s->rows) memcpy(p, s->rows, s->n_rows * s->row_size);
  size_t n = s->n_rows;
  wipe_rows(s);
  s->rows = p;
  s->n_rows = n;
  s->cap_rows = cap;
  return 1;
}

static void round_row(boost_state *s, const double *x, uint32_t cls, double target);

static void boost_row(void *st, const double *x, uint32_t cls, double target) {
  boost_state *s = st;
  if (s->n_classes && cls >= s->n_classes) return;
  if (s->in_rounds) { /* Contract 6: into the round's vector, no row kept */
    round_row(s, x, cls, target);
    return;
  }
  if (!reserve(s, 1)) return;
  unsigned char *row = s->rows + s->n_rows * s->row_size;
  for (uint32_t f = 0; f < s->nf; f++) {
    uint32_t b = rdt_learn_bin(&s->feat[f], s->fine ? s->fine : s->bins, x[f]); /* kept at F when "auto" */
    if (s->width == 1) {
      row[f] = (unsigned char)b;
    } else {
      uint16_t v = (uint16_t)b;
      memcpy(row + 2 * (size_t)f, &v, 2);
    }
  }
  if (s->n_classes) {
    uint16_t v = (uint16_t)cls;
    memcpy(row + (size_t)s->nf * s->width, &v, 2);
  } else {
    double u = clamp01((target - s->lo) / (s->hi - s->lo));
    memcpy(row + (size_t)s->nf * s->width, &u, sizeof u);
  }
  s->n_rows++;
}

static int boost_merge(void *into, const void *from) {
  boost_state *a = into;
  const boost_state *b = from;
  if (a->n_classes != b->n_classes || a->one_gradient != b->one_gradient || a->nf != b->nf || a->bins != b->bins ||
      a->fine != b->fine || a->rounds != b->rounds ||
      a->row_size != b->row_size || a->width != b->width || a->lr != b->lr)
    return 0;
  if (b->oom) a->oom = 1;
  if (!reserve(a, b->n_rows)) return 0;
  if (b->n_rows) memcpy(a->rows + a->n_rows * a->row_size, b->rows, b->n_rows * b->row_size);
  a->n_rows += b->n_rows;
  return 1;
}

/* ---- finish -------------------------------------------------------------- */

typedef struct noise_sink {
  rdt_rng *rng;
  int64_t *trace;
  size_t trace_len, at;
} noise_sink;

/* v plus discrete Laplace (s, t) when private; recorded in the trace. */
static int64_t release(noise_sink *ns, int is_private, int64_t v, uint64_t s, uint64_t t) {
  if (is_private) v += rdt_discrete_laplace(ns->rng, s, t);
  if (ns->trace && ns->at < ns->trace_len) ns->trace[ns->at] = v;
  ns->at++;
  return v;
}

/* Contract 2, classification: the K exact class counts released into the
** intercept; returns n^, the sum of the noisy counts clamped at 0. */
static double release_class_counts(boost_state *s, noise_sink *ns, uint64_t a, uint64_t b, const int64_t *counts) {
  double scale0 = s->is_private ? 1.0 / rdt_eps_to_double(eps_intercept(s)) : 0;
  double pseudo = s->is_private ? scale0 / 2 : 0.5, n_hat = 0;
  for (uint32_t k = 0; k < s->n_classes; k++) {
    int64_t v = release(ns, s->is_private, counts[k], a, b);
    s->intercept[k] = clamp_score(log((v > 0 ? (double)v : 0) + pseudo));
    n_hat += v > 0 ? (double)v : 0;
  }
  return n_hat;
}

/* Contract 2, regression: the exact row count and centred sum released
** into the intercept m; returns the noisy count (not clamped). */
static int64_t release_count_sum(boost_state *s, noise_sink *ns, uint64_t a, uint64_t b, uint64_t a2, uint64_t b2,
                                 int64_t n, int64_t sum) {
  double scale0 = s->is_private ? 1.0 / rdt_eps_to_double(eps_intercept(s)) : 0;
  const double unit = 1 << SUM_GRID_LOG2;
  n = release(ns, s->is_private, n, a, b);
  sum = release(ns, s->is_private, sum, a2, b2);
  /* the mean 1/2 + centred sum / count: the count's noise only weighs |mean - 1/2| */
  /* each of the three releases has eps_0 / 3: the count's noise scale is 3 / eps_0 */
  double pseudo = 1.5 * scale0; /* half the count's noise scale, as constant.c */
  s->intercept[0] = clamp01(0.5 + (double)sum / unit / ((n > 0 ? (double)n : 0) + pseudo + (s->is_private ? 0 : n > 0 ? 0 : 1)));
  return n;
}

/* Contract 2, regression: a row's centred target on the 2^-16 grid, and its
** spread band around the released mean m. */
static int64_t centred_target(double u) { return (int64_t)nearbyint((u - 0.5) * (double)(1 << SUM_GRID_LOG2)); }
static uint32_t spread_band(double u, double m) {
  double r = fabs(u - m);
  uint32_t k = 0;
  for (uint32_t j = 1; j < CLIP_BANDS; j++) k += r <= clip_edge(j); /* every edge for every row: the same work */
  return k;
}

/* Contract 2, regression: the 13 exact band counts released (in place);
** returns the clip (Contract 3) from them and the noisy count n. */
static uint32_t release_bands(boost_state *s, noise_sink *ns, uint64_t a, uint64_t b, int64_t *counts, double n) {
  double scale0 = s->is_private ? 1.0 / rdt_eps_to_double(eps_intercept(s)) : 0;
  for (uint32_t k = 0; k < CLIP_BANDS; k++) counts[k] = release(ns, s->is_private, counts[k], a, b);
  /* a band's noise sd: sqrt(2) times its scale 3 / eps_0 */
  return rdt_boost_clip_units(n, counts, s->is_private ? sqrt(2.0) * 3 * scale0 : 0);
}

/* Contract 2: the intercept into s->intercept from the kept rows; returns
** n^. Regression: also the spread bands, and from them the clip (Contract 3)
** into *clip. */
static double fit_intercept(boost_state *s, noise_sink *ns, uint64_t a, uint64_t b, uint64_t a2, uint64_t b2,
                            int64_t *counts, uint32_t *clip) {
  if (s->n_classes) {
    for (size_t i = 0; i < s->n_rows; i++) counts[row_class(s, s->rows + i * s->row_size)]++;
    return release_class_counts(s, ns, a, b, counts);
  }
  int64_t n = 0, sum = 0;
  for (size_t i = 0; i < s->n_rows; i++) {
    n++;
    sum += centred_target(row_target(s, s->rows + i * s->row_size)); /* centred: |.| <= 1/2 */
  }
  n = release_count_sum(s, ns, a, b, a2, b2, n, sum);
  /* The spread: how many rows lie in each band of |target - released mean|. */
  memset(counts, 0, CLIP_BANDS * sizeof *counts);
  for (size_t i = 0; i < s->n_rows; i++) counts[spread_band(row_target(s, s->rows + i * s->row_size), s->intercept[0])]++;
  *clip = release_bands(s, ns, a, b, counts, (double)n);
  return n > 0 ? (double)n : 0;
}

uint32_t rdt_boost_clip_units(double n_hat, const int64_t *bands, double sd) {
  uint32_t k = 0;
  double tail = 0;
  for (uint32_t j = 1; n_hat > 0 && j < CLIP_BANDS; j++) { /* no rows released: no clip */
    tail += (double)bands[j - 1]; /* rows beyond edge j */
    if (!(tail + sqrt((double)j) * sd <= CLIP_TAIL * n_hat)) break; /* one noise sd of margin */
    k = j;
  }
  double units = ceil(clip_edge(k) * GRID / CLIP_COUNT_SHARE) * CLIP_COUNT_SHARE;
  return units < CLIP_MIN ? CLIP_MIN : units > GRID ? GRID : (uint32_t)units;
}

uint64_t rdt_boost_regression_sensitivity(uint32_t clip) { return (uint64_t)clip + clip / CLIP_COUNT_SHARE; }

/* "auto" bins (top of the file): B from the released n^, then the features'
** bins and offsets at B. The score array was sized at F and is still all
** zeros: only its prefix is used. */
static void set_bins(boost_state *s, uint32_t bins) {
  s->bins = bins;
  uint32_t total = 0;
  for (uint32_t f = 0; f < s->nf; f++) {
    s->nb[f] = rdt_learn_bins(&s->feat[f], bins);
    s->off[f] = total;
    total += s->nb[f];
  }
  s->total_bins = total; /* <= the total at F */
}

static void choose_bins(boost_state *s, double n_hat) {
  double eps = s->is_private ? rdt_eps_to_double(s->eps) : 1;
  double want = sqrt(n_hat * eps / ((double)s->nk * (s->nf ? s->nf : 1)));
  set_bins(s, rdt_learn_nearest_divisor(s->fine, want < 10 ? 10 : want));
}

/* Contract 4, regression: the smoothing kernels' neighbour weights w (the
** bins at distance 1 weigh w, at distance 2 w^2; 0: no smoothing). */
static const double smooth_widths[] = {0, 0.25, 0.5, 1};

/* Bin b's released (sum, count) smoothed by the kernel of weight w, the
** weights truncated at the feature's ends and normalised; *k2 = sum of the
** squared normalised weights (the smoothed sum's noise variance over a
** bin's), *hbb = the normalised centre weight (the smoother's diagonal). */
static void smooth_bin(const double *nz, uint32_t nb, uint32_t b, double w, double *sum, double *rows,
                       double *k2, double *hbb) {
  double ws = 0, wn = 0, wt = 0, w2 = 0;
  for (int j = -2; j <= 2; j++) {
    long bb = (long)b + j;
    if (bb < 0 || bb >= (long)nb) continue;
    double k = j == 0 ? 1 : j == 1 || j == -1 ? w : w * w;
    double n = nz[2 * (size_t)bb] > 0 ? nz[2 * (size_t)bb] : 0;
    ws += k * nz[2 * (size_t)bb + 1];
    wn += k * n;
    wt += k;
    w2 += k * k;
  }
  *sum = ws / wt;
  *rows = wn / wt;
  *k2 = w2 / (wt * wt);
  *hbb = 1 / wt;
}

double rdt_boost_smooth_width(const double *nz, uint32_t nb, double vs) {
  double w = 0, best = 0;
  if (!(vs > 0) || nb < 3) return 0;
  for (size_t c = 0; c < sizeof smooth_widths / sizeof *smooth_widths; c++) {
    double r = 0;
    for (uint32_t b = 0; b < nb; b++) {
      double sum, rows, k2, hbb;
      smooth_bin(nz, nb, b, smooth_widths[c], &sum, &rows, &k2, &hbb);
      /* Stein: E|Hs - theta|^2 = E|Hs - s|^2 + 2 v tr(H) - nb v, for any noise of variance v */
      r += (sum - nz[2 * (size_t)b + 1]) * (sum - nz[2 * (size_t)b + 1]) + 2 * vs * hbb;
    }
    if (c == 0 || r < best) {
      best = r;
      w = smooth_widths[c];
    }
  }
  return w;
}

/* Contract 4, regression: the empirical-Bayes steps of one visit from its
** released (count, sum) pairs nz[2 b], nz[2 b + 1] (rows, units of 1.0),
** into delta[b] and the scores. vs, vn: a sum's and a count's noise variance
** (0 non-private); cmax: the clip in units of 1.0. */
static void regression_steps(boost_state *s, uint32_t f, const double *nz, double vs, double vn, double cmax,
                             double *delta) {
  uint32_t nb = s->nb[f];
  double num = 0, den = 0;
  for (uint32_t b = 0; b < nb; b++) {
    double n = nz[2 * (size_t)b] > 0 ? nz[2 * (size_t)b] : 0, g = nz[2 * (size_t)b + 1];
    num += g * g - vs;
    den += n * n - vn;
  }
  /* tau^2: the spread of the bins' mean residuals, by moments, in [0, cmax^2] */
  /* pure noise gives num about 0 with sd sqrt(5 nb) vs (a Laplace square's
  ** variance is 5 times its squared variance): trust two sds beyond it only */
  num -= 2 * sqrt(5.0 * nb) * vs;
  double tau2 = num > 0 && den > 0 ? num / den : 0;
  if (!(tau2 <= cmax * cmax)) tau2 = cmax * cmax;
  double *sc = s->scores + s->off[f];
  /* A numeric feature's neighbouring bins hold neighbouring values: the
  ** kernel width whose smoothed sums have the least unbiased risk estimate
  ** (post-processing; no smoothing without noise or below 3 bins). */
  double w = s->feat[f].type == RDT_FEATURE_NUMERIC ? rdt_boost_smooth_width(nz, nb, vs) : 0;
  for (uint32_t b = 0; b < nb; b++) {
    double n, g, k2, hbb;
    smooth_bin(nz, nb, b, w, &g, &n, &k2, &hbb);
    double q = n * n * tau2 + vs * k2;
    double step = q > 0 ? g * n * tau2 / q : 0;
    step = step < -cmax ? -cmax : step > cmax ? cmax : step;
    double next = clamp_score(sc[b] + s->lr * step);
    delta[b] = next - sc[b];
    sc[b] = next;
  }
}

/* Components of a bin's visit vector (Contract 3): the count, then the
** gradient sums released (3b: class 1's only), or the residual sum. */
static uint32_t vec_width(const boost_state *s) {
  return 1 + (s->n_classes && !s->one_gradient ? s->n_classes : 1);
}

/* Contract 1: the intercept's noise parameters, checked before any draw. */
static int intercept_params(const boost_state *s, uint64_t *a0, uint64_t *b0, uint64_t *a1, uint64_t *b1) {
  rdt_eps e0 = eps_intercept(s);
  *a0 = *b0 = *a1 = *b1 = 0;
  if (!s->is_private) return 1;
  if (!s->n_classes) e0.num /= 3; /* regression: count, sum, spread bands */
  return rdt_laplace_params(e0, 1, a0, b0) &&
         (s->n_classes || rdt_laplace_params(e0, 1u << (SUM_GRID_LOG2 - 1), a1, b1)) &&
         (!s->nf || eps_visit(s).num > 0);
}

/* 0 when the noise cannot be set up. sensitivity: 0 for the true one. */
static int visit_setup(const boost_state *s, uint32_t clip, uint64_t sensitivity, visit_params *vp) {
  const uint32_t K = s->n_classes;
  rdt_eps eq = eps_visit(s);
  memset(vp, 0, sizeof *vp);
  vp->cw = K ? COUNT_WEIGHT : (int64_t)(clip / CLIP_COUNT_SHARE);
  uint64_t S = sensitivity ? sensitivity : K ? visit_sensitivity(s) : rdt_boost_regression_sensitivity(clip);
  vp->h = hessian_bound(s);
  vp->ridge = vp->h;
  vp->cmax = (double)clip / GRID;
  if (!s->is_private || !s->nf) return 1;
  double scale = (double)S / rdt_eps_to_double(eq); /* grid units */
  vp->ridge = RIDGE_SCALES * vp->h * scale / COUNT_WEIGHT;
  vp->vs = 2 * (scale / GRID) * (scale / GRID); /* a discrete Laplace of scale b has variance about 2 b^2 */
  vp->vn = 2 * (scale / (double)vp->cw) * (scale / (double)vp->cw);
  return rdt_laplace_params(eq, S, &vp->aq, &vp->bq);
}

/* Contract 3: one row's exact contribution to its bin's vector v, from its
** current scores z (class y, or scaled target u); p: K doubles of scratch. */
static void visit_add(const boost_state *s, int64_t *v, const visit_params *vp, const double *z, uint32_t y, double u,
                      double *p) {
  const uint32_t K = s->n_classes;
  v[0] += vp->cw;
  if (!K) {
    double res = u - clamp01(z[0]);
    res = res < -vp->cmax ? -vp->cmax : res > vp->cmax ? vp->cmax : res;
    v[1] += (int64_t)nearbyint(GRID * res); /* |.| <= clip: an integer bound */
    return;
  }
  rdt_learn_softmax(z, K, p);
  int64_t l1 = 0;
  for (uint32_t k = 0; k < K; k++) l1 += llabs((long long)(int64_t)nearbyint(GRID * ((k == y ? 1.0 : 0.0) - p[k])));
  if (l1 > 2 * (int64_t)GRID + (int64_t)K) return; /* the guard of Contract 3; never taken */
  if (s->one_gradient) v[1] += (int64_t)nearbyint(GRID * ((y == 1 ? 1.0 : 0.0) - p[1])); /* Contract 3b */
  else
    for (uint32_t k = 0; k < K; k++) v[1 + k] += (int64_t)nearbyint(GRID * ((k == y ? 1.0 : 0.0) - p[k]));
}

/* Contracts 3 and 4: feature f's exact vectors (vec_width per bin) released
** bin by bin, then the step: s->scores of f move, and delta receives each
** bin's change (nk per bin; scratch of 3 per bin for regression). */
static void visit_release(boost_state *s, uint32_t f, const int64_t *sums, noise_sink *ns, const visit_params *vp,
                          double *delta) {
  const uint32_t nb = s->nb[f], nk = s->nk, w = vec_width(s);
  if (!s->n_classes) {
    double *nz = delta + (size_t)nb; /* (count, sum) pairs after the nb deltas */
    for (uint32_t bin = 0; bin < nb; bin++) {
      const int64_t *v = sums + (size_t)bin * w;
      nz[2 * (size_t)bin] = (double)release(ns, s->is_private, v[0], vp->aq, vp->bq) / (double)vp->cw;
      nz[2 * (size_t)bin + 1] = (double)release(ns, s->is_private, v[1], vp->aq, vp->bq) / GRID;
    }
    regression_steps(s, f, nz, vp->vs, vp->vn, vp->cmax, delta);
    return;
  }
  for (uint32_t bin = 0; bin < nb; bin++) {
    const int64_t *v = sums + (size_t)bin * w;
    double count = (double)release(ns, s->is_private, v[0], vp->aq, vp->bq) / COUNT_WEIGHT;
    double den = vp->h * (count > 0 ? count : 0) + vp->ridge;
    double *sc = s->scores + ((size_t)s->off[f] + bin) * nk;
    /* Contract 3b: class 1's sum alone, class 0's its negative */
    double g1 = s->one_gradient ? (double)release(ns, s->is_private, v[1], vp->aq, vp->bq) / GRID : 0;
    for (uint32_t k = 0; k < nk; k++) {
      double g = s->one_gradient ? (k ? g1 : -g1) : (double)release(ns, s->is_private, v[1 + k], vp->aq, vp->bq) / GRID;
      double next = clamp_score(sc[k] + s->lr * g / den);
      delta[(size_t)bin * nk + k] = next - sc[k];
      sc[k] = next;
    }
  }
}

int rdt_boost_finish_traced(void *st, rdt_rng *noise, uint64_t sensitivity, int64_t *trace, size_t trace_len) {
  boost_state *s = st;
  const uint32_t nk = s->nk, K = s->n_classes, w = vec_width(s);
  uint64_t a0 = 0, b0 = 0, a1 = 0, b1 = 0;
  int ok = !s->oom && !s->in_rounds && intercept_params(s, &a0, &b0, &a1, &b1);
  double *F = NULL, *delta = NULL, *p = NULL;
  int64_t *sums = NULL;
  /* a visit's vectors, or the class counts, or the spread bands */
  const size_t n_sums = (size_t)s->max_bins * w + K + 1 + CLIP_BANDS;
  const size_t n_delta = ((size_t)s->max_bins + 1) * (K ? nk : 3); /* regression: deltas, then (count, sum) pairs */
  if (ok) {
    F = malloc((s->n_rows ? s->n_rows : 1) * nk * sizeof *F);
    sums = malloc(n_sums * sizeof *sums);
    delta = malloc(n_delta * sizeof *delta);
    p = malloc(nk * sizeof *p);
    ok = F && sums && delta && p;
  }
  if (ok) {
    noise_sink ns = {noise, trace, trace_len, 0};
    memset(sums, 0, n_sums * sizeof *sums);
    uint32_t clip = GRID; /* regression: the residual clip in grid units (Contract 3) */
    double n_hat = fit_intercept(s, &ns, a0, b0, a1, b1, sums, &clip);
    visit_params vp;
    ok = visit_setup(s, clip, sensitivity, &vp);
    if (s->fine) choose_bins(s, n_hat);
    for (size_t i = 0; ok && i < s->n_rows; i++) memcpy(F + i * nk, s->intercept, nk * sizeof *F);
    for (uint32_t r = 0; ok && r < s->rounds; r++) {
      for (uint32_t f = 0; f < s->nf; f++) {
        memset(sums, 0, (size_t)s->nb[f] * w * sizeof *sums);
        /* Contract 3: the exact per-bin vectors. */
        for (size_t i = 0; i < s->n_rows; i++) {
          const unsigned char *row = s->rows + i * s->row_size;
          visit_add(s, sums + (size_t)to_bins(s, f, row_bin(s, row, f)) * w, &vp, F + i * nk,
                    K ? row_class(s, row) : 0, K ? 0 : row_target(s, row), p);
        }
        visit_release(s, f, sums, &ns, &vp, delta); /* noise on every component, then the step (Contract 4) */
        for (size_t i = 0; i < s->n_rows; i++) {
          const double *d = delta + (size_t)to_bins(s, f, row_bin(s, s->rows + i * s->row_size, f)) * nk;
          for (uint32_t k = 0; k < nk; k++) F[i * nk + k] += d[k];
        }
      }
    }
  }
  /* Contract 5: the exact state goes, released or not. */
  if (F) sodium_memzero(F, (s->n_rows ? s->n_rows : 1) * nk * sizeof *F);
  if (sums) sodium_memzero(sums, n_sums * sizeof *sums);
  if (delta) sodium_memzero(delta, n_delta * sizeof *delta);
  if (p) sodium_memzero(p, nk * sizeof *p);
  free(F);
  free(sums);
  free(delta);
  free(p);
  wipe_rows(s);
  if (!ok) { /* nothing released: no score may survive either */
    sodium_memzero(s->scores, (size_t)s->total_bins * nk * sizeof *s->scores);
    sodium_memzero(s->intercept, nk * sizeof *s->intercept);
  }
  return ok;
}

static int boost_finish(void *st, rdt_rng *noise) { return rdt_boost_finish_traced(st, noise, 0, NULL, 0); }

/* ---- codec --------------------------------------------------------------- */
/* Payload: u32 bins (with "auto" bins: B + 65536 F), u32 rounds, f64
** learning_rate, nk f64 intercepts, then
** total_bins * nk f64 scores (feature by feature, bin by bin, class by
** class). Everything else follows from the schema and the common facts. */

static void boost_encode(const void *st, rdt_bytes *out) {
  const boost_state *s = st;
  rdt_bytes_u32(out, s->bins + (s->fine << 16) + ((uint32_t)s->one_gradient << 24));
  rdt_bytes_u32(out, s->rounds);
  rdt_bytes_f64(out, s->lr);
  for (uint32_t k = 0; k < s->nk; k++) rdt_bytes_f64(out, s->intercept[k]);
  for (size_t i = 0; i < (size_t)s->total_bins * s->nk; i++) rdt_bytes_f64(out, s->scores[i]);
}

static int score_ok(double v) { return isfinite(v) && v >= -SCORE_LIMIT && v <= SCORE_LIMIT; }

static void *boost_decode(rdt_reader *in, const rdt_schema *sc, const rdt_learn_common *c) {
  char err[8];
  uint32_t bins = rdt_read_u32(in), rounds = rdt_read_u32(in);
  uint32_t fine = (bins >> 16) & 0xff, one_gradient = bins >> 24;
  bins &= 0xffff;
  double lr = rdt_read_f64(in);
  if (in->bad || one_gradient > 1 || (one_gradient && (c->regression || sc->n_classes != 2)) || bins < 2 || bins > 255 || (fine && ((fine != 120 && fine != 60 && fine != 30 && fine != 15) || fine % bins)) || rounds < 1 || rounds > MAX_ROUNDS || !(lr > 0 && lr <= MAX_LR) ||
      (!c->regression && sc->n_classes == 0) || (c->regression && sc->n_classes != 0))
    return NULL;
  boost_state *s = alloc_state(sc, c, bins, rounds, lr, err, sizeof err);
  if (!s) return NULL;
  s->fine = fine;
  s->one_gradient = (int)one_gradient;
  /* Refuse before reading what the payload cannot hold. */
  size_t cells = (size_t)s->total_bins * s->nk;
  if ((in->n - in->pos) / 8 < cells + s->nk) {
    in->bad = 1;
    boost_free(s);
    return NULL;
  }
  int bad = 0;
  for (uint32_t k = 0; k < s->nk; k++) {
    double v = rdt_read_f64(in);
    bad |= s->n_classes ? !score_ok(v) : !(v >= 0 && v <= 1);
    s->intercept[k] = v;
  }
  for (size_t i = 0; i < cells; i++) {
    double v = rdt_read_f64(in);
    bad |= !score_ok(v);
    s->scores[i] = v;
  }
  if (bad || in->bad) {
    boost_free(s);
    return NULL;
  }
  return s;
}

/* ---- rounds (Contract 6) -------------------------------------------------- */
/* Round payload (little-endian): u32 the round it opens, nk f64 intercepts,
** f64 n^ (regression: the noisy count), u32 bins, u32 clip (grid units;
** 2^12 before it is released and for classification), u32 n_snap, then
** n_snap snapshots of total_bins * nk f64 scores at those bins: snapshot j
** holds the scores after visit (j, f) for every feature f visited in
** boosting round j so far, and round j - 1's for the others. */

/* The round of the first visit: after the intercept's one (classification)
** or two (regression) rounds. */
static uint32_t first_visit(const boost_state *s) { return s->n_classes ? 1 : 2; }

static uint32_t boost_rounds(const void *st) {
  const boost_state *s = st;
  return first_visit(s) + s->rounds * s->nf;
}

/* Snapshots a message opening visit v carries: one per boosting round
** begun before it. */
static uint32_t snaps_before(const boost_state *s, uint64_t v) { return v ? (uint32_t)((v - 1) / s->nf + 1) : 0; }

static int round_fail(char *err, size_t en, const char *msg) {
  if (en) snprintf(err, en, "boost: %s", msg);
  return 0;
}

/* The message's payload into the state (every value checked), and the bins
** it names. */
static int read_payload(boost_state *s, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en) {
  rdt_reader in = {msg, n, 0, 0};
  const size_t cells = (size_t)s->total_bins * s->nk; /* at the finest bins: an upper bound */
  uint32_t at = rdt_read_u32(&in);
  int bad = at != r;
  for (uint32_t k = 0; k < s->nk; k++) {
    double v = rdt_read_f64(&in);
    bad |= s->n_classes ? !score_ok(v) : !(v >= 0 && v <= 1);
    s->intercept[k] = v;
  }
  s->n_released = rdt_read_f64(&in);
  uint32_t bins = rdt_read_u32(&in), clip = rdt_read_u32(&in), n_snap = rdt_read_u32(&in);
  bad |= !isfinite(s->n_released) || (s->n_classes && s->n_released < 0);
  bad |= s->fine ? bins < 2 || s->fine % bins != 0 : bins != s->bins;
  bad |= s->n_classes || r < first_visit(s)
             ? clip != GRID
             : clip % CLIP_COUNT_SHARE != 0 || clip < CLIP_MIN || clip > GRID;
  bad |= n_snap != (r < first_visit(s) ? 0 : snaps_before(s, r - first_visit(s)));
  if (in.bad || bad) return round_fail(err, en, "the round message is not one of this plan's rounds");
  set_bins(s, bins);
  size_t now = (size_t)s->total_bins * s->nk;
  if (now > cells || (in.n - in.pos) / 8 / (now ? now : 1) < n_snap || (in.n - in.pos) != (size_t)n_snap * now * 8)
    return round_fail(err, en, "the round message's scores have another length than its bins give");
  s->clip = clip;
  if (n_snap && !(s->snap = malloc((size_t)n_snap * now * sizeof *s->snap))) return 0;
  for (size_t i = 0; i < (size_t)n_snap * now; i++) {
    s->snap[i] = rdt_read_f64(&in);
    bad |= !score_ok(s->snap[i]);
  }
  if (bad || in.bad) return round_fail(err, en, "the round message holds a score out of range");
  s->n_snap = n_snap;
  if (n_snap) memcpy(s->scores, s->snap + (size_t)(n_snap - 1) * now, now * sizeof *s->scores); /* the latest */
  return 1;
}

static int boost_round_open(void *st, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en) {
  boost_state *s = st;
  if (en) err[0] = 0;
  if (s->in_rounds || s->n_rows || s->oom) return round_fail(err, en, "a round opens on a fresh state only");
  if (r >= boost_rounds(s)) return round_fail(err, en, "the round message opens a round beyond the last visit");
  if (r == 0 && n != 0) return round_fail(err, en, "the first round has no message");
  if (r > 0 && !read_payload(s, r, msg, n, err, en)) return 0;
  visit_setup(s, s->clip, 0, &s->vp); /* a site's count weight and clip; the noise is the coordinator's */
  /* the round's vector: class counts; count and sum; the bands; a visit's bins */
  s->n_vec = r == 0 ? (s->n_classes ? s->n_classes : 2)
             : r < first_visit(s) ? CLIP_BANDS
                                  : (size_t)s->nb[(r - first_visit(s)) % s->nf] * vec_width(s);
  s->vec = calloc(s->n_vec ? s->n_vec : 1, sizeof *s->vec);
  s->z = malloc(s->nk * sizeof *s->z);
  s->p = malloc(s->nk * sizeof *s->p);
  s->rb = malloc((s->nf ? s->nf : 1) * sizeof *s->rb);
  if (!s->vec || !s->z || !s->p || !s->rb) return 0;
  s->round = r;
  s->in_rounds = 1;
  return 1;
}

/* Contract 6: a row's contribution to the open round, from the row and the
** message alone. Its scores are replayed as finish() accumulates them: the
** intercept plus every earlier visit's change, in visit order. */
static void round_row(boost_state *s, const double *x, uint32_t cls, double target) {
  const uint32_t K = s->n_classes, nk = s->nk, r = s->round;
  double u = K ? 0 : clamp01((target - s->lo) / (s->hi - s->lo)); /* boost_row's */
  if (r == 0) {
    if (K) s->vec[cls]++;
    else {
      s->vec[0]++;
      s->vec[1] += centred_target(u);
    }
    return;
  }
  if (r < first_visit(s)) {
    s->vec[spread_band(u, s->intercept[0])]++;
    return;
  }
  const uint64_t v = r - first_visit(s);
  const size_t now = (size_t)s->total_bins * nk;
  for (uint32_t f = 0; f < s->nf; f++) s->rb[f] = value_bin(s, f, x[f]);
  memcpy(s->z, s->intercept, nk * sizeof *s->z);
  for (uint64_t q = 0; q < v; q++) {
    uint32_t j = (uint32_t)(q / s->nf), f = (uint32_t)(q % s->nf);
    const double *cur = s->snap + (size_t)j * now + ((size_t)s->off[f] + s->rb[f]) * nk, *prev = j ? cur - now : NULL;
    for (uint32_t k = 0; k < nk; k++) s->z[k] += cur[k] - (prev ? prev[k] : 0.0); /* finish()'s delta */
  }
  uint32_t f = (uint32_t)(v % s->nf);
  visit_add(s, s->vec + (size_t)s->rb[f] * vec_width(s), &s->vp, s->z, cls, u, s->p);
}

static uint32_t boost_counters(void *st, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  boost_state *s = st;
  if (!s->in_rounds || max < 1) return 0;
  out[0] = (rdt_span){s->vec, s->n_vec};
  rdt_digest d;
  rdt_digest_init(&d, "rdt-boost-rounds-v1");
  const uint64_t facts[] = {s->n_classes, s->nf, s->fine ? s->fine : s->bins, s->fine, s->rounds,
                            (uint64_t)s->is_private, s->eps.num, (uint64_t)s->one_gradient};
  for (size_t i = 0; i < sizeof facts / sizeof *facts; i++) rdt_digest_u64(&d, facts[i]);
  rdt_digest_f64(&d, s->lr);
  rdt_digest_f64(&d, s->lo);
  rdt_digest_f64(&d, s->hi);
  for (uint32_t f = 0; f < s->nf; f++) {
    rdt_digest_u64(&d, s->feat[f].type);
    rdt_digest_f64(&d, s->feat[f].min);
    rdt_digest_f64(&d, s->feat[f].max);
    rdt_digest_u64(&d, s->feat[f].n_values);
  }
  rdt_digest_final(&d, digest);
  return 1;
}

/* The next round's payload (read_payload's layout); after visit v (or
** before the first, v = -1) the snapshots are updated first. */
static void write_payload(boost_state *s, uint32_t next, rdt_bytes *out) {
  const size_t now = (size_t)s->total_bins * s->nk;
  uint32_t n_snap = next < first_visit(s) ? 0 : snaps_before(s, next - first_visit(s));
  rdt_bytes_u32(out, next);
  for (uint32_t k = 0; k < s->nk; k++) rdt_bytes_f64(out, s->intercept[k]);
  rdt_bytes_f64(out, s->n_released);
  rdt_bytes_u32(out, s->bins);
  rdt_bytes_u32(out, s->clip);
  rdt_bytes_u32(out, n_snap);
  for (uint32_t j = 0; j < n_snap; j++) /* every one but the latest as received, the latest the scores now */
    for (size_t i = 0; i < now; i++) rdt_bytes_f64(out, j + 1 < n_snap ? s->snap[(size_t)j * now + i] : s->scores[i]);
}

int rdt_boost_round_release_traced(void *st, rdt_rng *noise, int64_t *trace, size_t trace_len, rdt_bytes *next) {
  boost_state *s = st;
  const uint32_t r = s->round, K = s->n_classes;
  noise_sink ns = {noise, trace, trace_len, 0};
  uint64_t a0, b0, a1, b1;
  if (!s->in_rounds || !intercept_params(s, &a0, &b0, &a1, &b1)) return 0;
  int done = 0;
  if (r == 0 && K) { /* Contract 2: the class counts; then the bins (finish()'s order) */
    s->clip = GRID;
    s->n_released = release_class_counts(s, &ns, a0, b0, s->vec);
    visit_params vp;
    if (!visit_setup(s, s->clip, 0, &vp)) return 0;
    if (s->fine) choose_bins(s, s->n_released);
    done = s->nf == 0;
  } else if (r == 0) { /* regression: the count and the sum */
    s->clip = GRID;
    s->n_released = (double)release_count_sum(s, &ns, a0, b0, a1, b1, s->vec[0], s->vec[1]);
  } else if (r < first_visit(s)) { /* regression: the bands, the clip, then the bins */
    double n = s->n_released;
    s->clip = release_bands(s, &ns, a0, b0, s->vec, n);
    visit_params vp;
    if (!visit_setup(s, s->clip, 0, &vp)) return 0;
    if (s->fine) choose_bins(s, n > 0 ? n : 0);
    done = s->nf == 0;
  } else { /* a visit: its noise and its step */
    uint32_t v = r - first_visit(s);
    visit_params vp;
    double *delta = malloc(((size_t)s->max_bins + 1) * (K ? s->nk : 3) * sizeof *delta);
    if (!delta || !visit_setup(s, s->clip, 0, &vp)) {
      free(delta);
      return 0;
    }
    visit_release(s, v % s->nf, s->vec, &ns, &vp, delta);
    free(delta);
    done = r + 1 == boost_rounds(s);
  }
  sodium_memzero(s->vec, s->n_vec * sizeof *s->vec); /* released: the exact vector goes */
  if (done) return 2;
  write_payload(s, r + 1, next);
  return next->oom ? 0 : 1;
}

static int boost_round_release(void *st, rdt_rng *noise, rdt_bytes *next) {
  return rdt_boost_round_release_traced(st, noise, NULL, 0, next);
}

/* ---- post-processing ----------------------------------------------------- */

static void boost_predict(const void *st, const double *x, double *out) {
  const boost_state *s = st;
  for (uint32_t k = 0; k < s->nk; k++) out[k] = s->intercept[k];
  for (uint32_t f = 0; f < s->nf; f++) {
    const double *sc = s->scores + ((size_t)s->off[f] + value_bin(s, f, x[f])) * s->nk;
    for (uint32_t k = 0; k < s->nk; k++) out[k] += sc[k];
  }
  if (s->n_classes) {
    /* |sum| <= (d + 1) 1e6: finite; the largest term is exp(0) = 1. */
    rdt_learn_softmax(out, s->nk, out);
    return;
  }
  out[0] = s->lo + clamp01(out[0]) * (s->hi - s->lo);
  if (out[0] > s->hi) out[0] = s->hi;
}

/* learner.h's span: every combination of bins is some input (each
** feature's bins are all reachable, and features vary independently), so
** the additive score's extremes are the intercept plus each feature's
** extreme score, then clamped and scaled as predict() does. */
static int boost_span(const void *st, double *lo, double *hi) {
  const boost_state *s = st;
  if (s->n_classes || !s->scores || !s->intercept) return 0;
  double a = s->intercept[0], b = s->intercept[0];
  for (uint32_t f = 0; f < s->nf; f++) {
    double mn = s->scores[s->off[f]], mx = mn;
    for (uint32_t j = 1; j < s->nb[f]; j++) {
      double v = s->scores[s->off[f] + j];
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
    }
    a += mn;
    b += mx;
  }
  *lo = s->lo + clamp01(a) * (s->hi - s->lo);
  *hi = s->lo + clamp01(b) * (s->hi - s->lo);
  if (*hi > s->hi) *hi = s->hi;
  if (*lo > s->hi) *lo = s->hi;
  return 1;
}

static void boost_describe(const void *st, rdt_bytes *json) {
  const boost_state *s = st;
  char buf[1100];
  unsigned long long S = (unsigned long long)visit_sensitivity(s);
  if (s->n_classes)
    snprintf(buf, sizeof buf,
             "\"mechanism\":\"boost: cyclic additive boosting on public per-feature histograms (EBM-like); the "
             "intercept from noisy class counts; every feature visit releases per bin the row count (%d grid units "
             "a row) and %s; %d grid units per 1.0) as one vector of L1 sensitivity %llu grid units with discrete Laplace of scale %llu/epsilon_per_visit "
             "on every component; the step divides by a public Hessian bound times the noisy count plus a ridge\",",
             COUNT_WEIGHT,
             s->one_gradient ? "class 1's softmax gradient sum (class 0's is its negative: at most 1 per row"
                             : "the softmax gradient sums (L1 at most 2 per row, + K for rounding",
             GRID, S, S);
  else
    snprintf(buf, sizeof buf,
             "\"mechanism\":\"boost: cyclic additive boosting on public per-feature histograms (EBM-like); the "
             "intercept from a noisy count and sum, then noisy counts of |target - mean| in 13 public bands, "
             "epsilon_intercept/3 each; from them the clip c (grid units of %d per 1.0 of the target range, at "
             "most %llu) beyond which at most a tenth of the rows lie; every feature visit releases per bin the row "
             "count (c/4 grid units a row) and the sum of the residuals clipped into +-c as one vector of L1 "
             "sensitivity 5c/4 grid units with discrete Laplace of scale (5c/4)/epsilon_per_visit on every "
             "component; each step is the posterior mean of its bin's mean residual under the feature's "
             "moment-estimated spread and the known noise (empirical Bayes)\",",
             GRID, (unsigned long long)GRID);
  rdt_bytes_text(json, buf);
  snprintf(buf, sizeof buf, "\"rounds\":%u,\"bins\":%u,\"bins_rule\":\"%s\",\"learning_rate\":%.17g,",
           s->rounds, s->bins,
           s->fine ? "auto: the square-root rule on the noisy row count per visit budget" : "fixed", s->lr);
  rdt_bytes_text(json, buf);
  if (s->is_private)
    snprintf(buf, sizeof buf, "\"epsilon_intercept\":%.17g,\"epsilon_per_visit\":%.17g,\"visits\":%llu,",
             rdt_eps_to_double(eps_intercept(s)), rdt_eps_to_double(eps_visit(s)),
             (unsigned long long)s->rounds * s->nf);
  else
    snprintf(buf, sizeof buf, "\"epsilon_intercept\":null,\"epsilon_per_visit\":null,\"visits\":%llu,",
             (unsigned long long)s->rounds * s->nf);
  rdt_bytes_text(json, buf);
}

static const char *const boost_options[] = {"bins", "rounds", "learning_rate", NULL};

const rdt_learner rdt_learner_boost = {
    .name = "boost",
    .id = 3,
    .tasks = RDT_LEARN_CLASSIFICATION | RDT_LEARN_REGRESSION,
    .options = boost_options,
    .start = boost_start,
    .row = boost_row,
    .merge = boost_merge,
    .finish = boost_finish,
    .encode = boost_encode,
    .decode = boost_decode,
    .predict = boost_predict,
    .span = boost_span,
    .describe = boost_describe,
    .free = boost_free,
    .counters = boost_counters,
    .rounds = boost_rounds,
    .round_open = boost_round_open,
    .round_release = boost_round_release,
};
