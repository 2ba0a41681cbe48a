/*
** constant.c - the best constant model: the noisy majority class (with its
** noisy class frequencies as probabilities), or the noisy mean target.
** The floor no default may fall below; also a learner of its own.
**
** Privacy contract (neighbours: add or remove one row):
**   1. Classification: one row adds 1 to one class count, L1 sensitivity 1;
**      every count gets discrete Laplace of scale 1/ε: ε-DP.
**   2. Regression: the count (sensitivity 1) and the sum of targets clamped
**      into [min, max], centred on the range's middle and integerised on the
**      public grid R / 2^16 (each row adds round(2^16 u) - 2^15, u the
**      target scaled into [0, 1]: sensitivity 2^15 grid units, half what a
**      sum from min would need), each released with ε/2 (sequential
**      composition): ε-DP. After the noise the payload's sum is the centred
**      sum plus 2^15 max(n^, 0), n^ the noisy count (post-processing), so it
**      reads as a sum from min and the mean, post-processing with a
**      pseudo-count of half the count's noise scale at the range's middle,
**      is 1/2 + (centred sum) / (max(n^, 0) + pseudo): the count's noise
**      moves it by |mean - 1/2| / n^ per unit, not mean / n^.
**   3. Every counter gets its noise whatever its value (data-independent
**      work); no parameter failure releases anything (finish returns 0).
**   4. The state is its counters (learner.h contract 3): class counts, or
**      {count, sum}; unreleased states merge by addition when their digests
**      (classes, privacy, eps, target bounds) agree. finish() releases once;
**      a released state takes no rows and offers no counters.
**   5. Federated (learner.h contract 9): finish()'s noise is exactly one
**      discrete Laplace per counter (1: scale 1/ε; 2: 1/(ε/2) and
**      2^15/(ε/2)), so noise() describes it and finish_noised() marks the
**      sum of the sites' noisy shares released after 2's post-processing.
*/
#include "constant.h"

#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "../digest.h"

#define GRID_LOG2 16 /* regression sums: units of R / 2^16 */
#define HALF_RANGE ((int64_t)1 << (GRID_LOG2 - 1)) /* the centre, and a row's largest move */

typedef struct constant_state {
  uint32_t n_classes;   /* 0: regression */
  int is_private, released;
  rdt_eps eps;
  double lo, hi;        /* regression bounds */
  int64_t *counts;      /* n_classes counts, or {count, sum in grid units: centred until released} */
} constant_state;

static uint32_t slots(const constant_state *s) { return s->n_classes ? s->n_classes : 2; }

static void *constant_start(const rdt_json *opts, const rdt_schema *sc, const rdt_learn_common *c, char *err,
                            size_t en) {
  (void)opts;
  if (en) err[0] = 0; /* every failure here is memory */
  constant_state *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n_classes = c->regression ? 0 : sc->n_classes;
  s->is_private = c->is_private;
  s->eps = c->eps;
  s->lo = c->target_min;
  s->hi = c->target_max;
  if (!(s->counts = calloc(slots(s), sizeof *s->counts))) {
    free(s);
    return NULL;
  }
  return s;
}

static void constant_row(void *st, const double *x, uint32_t cls, double target) {
  (void)x;
  constant_state *s = st;
  if (s->released) return;
  if (s->n_classes) {
    if (cls < s->n_classes) s->counts[cls]++;
    return;
  }
  double u = (target - s->lo) / (s->hi - s->lo); /* the caller clamps into [lo, hi] */
  s->counts[0]++;
  s->counts[1] += (int64_t)nearbyint((u < 0 ? 0 : u > 1 ? 1 : u) * (1 << GRID_LOG2)) - HALF_RANGE; /* contract 2 */
}

/* Contract 4: what the counters mean. */
static void constant_digest(const constant_state *s, unsigned char out[32]) {
  rdt_digest d;
  rdt_digest_init(&d, "rdt-constant-state-v2"); /* v2: centred sums */
  rdt_digest_u64(&d, s->n_classes);
  rdt_digest_u64(&d, (uint64_t)s->is_private);
  rdt_digest_u64(&d, s->eps.num);
  rdt_digest_f64(&d, s->lo);
  rdt_digest_f64(&d, s->hi);
  rdt_digest_final(&d, out);
}

static uint32_t constant_counters(void *st, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  constant_state *s = st;
  if (s->released || max < 1) return 0;
  out[0] = (rdt_span){s->counts, slots(s)};
  constant_digest(s, digest);
  return 1;
}

static int constant_merge(void *into, const void *from) {
  constant_state *a = into;
  const constant_state *b = from;
  unsigned char da[32], db[32];
  constant_digest(a, da);
  constant_digest(b, db);
  if (a->released || b->released || memcmp(da, db, sizeof da) != 0) return 0;
  for (uint32_t k = 0; k < slots(a); k++) a->counts[k] += b->counts[k];
  return 1;
}

static rdt_eps share(const constant_state *s) {
  rdt_eps e = s->eps;
  if (!s->n_classes) e.num /= 2; /* Contract 2: count and sum */
  return e;
}

/* Contract 2's post-processing: the released centred sum becomes a sum from
** min by the released (noisy) count, so predict() and every reader of the
** payload see one meaning. */
static int release(constant_state *s) {
  if (!s->n_classes) s->counts[1] += (s->counts[0] > 0 ? s->counts[0] : 0) * HALF_RANGE;
  return s->released = 1;
}

static int constant_finish(void *st, rdt_rng *noise) {
  constant_state *s = st;
  if (s->released) return 0;
  if (!s->is_private) return release(s);
  uint64_t a, b, a2 = 0, b2 = 0;
  rdt_eps e = share(s);
  if (e.num == 0 || !rdt_laplace_params(e, 1, &a, &b)) return 0;
  if (!s->n_classes && !rdt_laplace_params(e, (uint64_t)HALF_RANGE, &a2, &b2)) return 0;
  if (s->n_classes) {
    for (uint32_t k = 0; k < s->n_classes; k++) s->counts[k] += rdt_discrete_laplace(noise, a, b);
  } else {
    s->counts[0] += rdt_discrete_laplace(noise, a, b);
    s->counts[1] += rdt_discrete_laplace(noise, a2, b2);
  }
  return release(s);
}

/* Contract 5: finish()'s noise as blocks (learner.h contract 9). */
static uint32_t constant_noise(const void *st, rdt_noise_block *out, uint32_t max) {
  const constant_state *s = st;
  uint64_t a, b, a2, b2;
  rdt_eps e = share(s);
  if (!s->is_private || s->released || max < 2 || e.num == 0 || !rdt_laplace_params(e, 1, &a, &b)) return 0;
  if (s->n_classes) {
    out[0] = (rdt_noise_block){s->n_classes, a, b};
    return 1;
  }
  if (!rdt_laplace_params(e, (uint64_t)HALF_RANGE, &a2, &b2)) return 0;
  out[0] = (rdt_noise_block){1, a, b};
  out[1] = (rdt_noise_block){1, a2, b2};
  return 2;
}

static int constant_finish_noised(void *st, rdt_rng *post) {
  constant_state *s = st;
  (void)post;
  if (s->released) return 0;
  return release(s);
}

static void constant_encode(const void *st, rdt_bytes *out) {
  const constant_state *s = st;
  for (uint32_t k = 0; k < slots(s); k++) rdt_bytes_u64(out, (uint64_t)s->counts[k]);
}

static void *constant_decode(rdt_reader *in, const rdt_schema *sc, const rdt_learn_common *c) {
  char err[8];
  constant_state *s = constant_start(NULL, sc, c, err, sizeof err);
  if (!s) return NULL;
  for (uint32_t k = 0; k < slots(s); k++) s->counts[k] = (int64_t)rdt_read_u64(in);
  s->released = 1;
  return s;
}

static double noise_scale(const constant_state *s) {
  return s->is_private ? 1.0 / rdt_eps_to_double(share(s)) : 0.0;
}

static void constant_predict(const void *st, const double *x, double *out) {
  (void)x;
  const constant_state *s = st;
  double pseudo = noise_scale(s) / 2;
  if (s->n_classes) {
    rdt_learn_frequencies(s->counts, s->n_classes, pseudo, out); /* uniform when all is noise */
    return;
  }
  double mean_u = rdt_learn_noisy_mean((double)s->counts[0], (double)s->counts[1] / (1 << GRID_LOG2), pseudo);
  out[0] = s->lo + mean_u * (s->hi - s->lo);
  if (out[0] > s->hi) out[0] = s->hi; /* rounding can step just past a bound */
  if (out[0] < s->lo) out[0] = s->lo;
}

static void constant_describe(const void *st, rdt_bytes *json) {
  const constant_state *s = st;
  char buf[320];
  if (s->n_classes)
    snprintf(buf, sizeof buf, "\"mechanism\":\"constant: discrete Laplace of scale 1/epsilon on every class count "
                              "(L1 sensitivity 1); predicts the noisy class frequencies\",");
  else
    snprintf(buf, sizeof buf, "\"mechanism\":\"constant: the noisy mean; count (sensitivity 1) and integerised "
                              "clamped sum centred on the range's middle (sensitivity 2^15 grid units of "
                              "(max-min)/2^16), each with epsilon/2\",");
  rdt_bytes_text(json, buf);
}

static void constant_free(void *st) {
  constant_state *s = st;
  if (!s) return;
  sodium_memzero(s->counts, slots(s) * sizeof *s->counts);
  free(s->counts);
  free(s);
}

static const char *const constant_options[] = {NULL};

const rdt_learner rdt_learner_constant = {
    .name = "constant",
    .id = 1,
    .tasks = RDT_LEARN_CLASSIFICATION | RDT_LEARN_REGRESSION,
    .options = constant_options,
    .start = constant_start,
    .row = constant_row,
    .merge = constant_merge,
    .counters = constant_counters,
    .noise = constant_noise,
    .finish_noised = constant_finish_noised,
    .finish = constant_finish,
    .encode = constant_encode,
    .decode = constant_decode,
    .predict = constant_predict,
    .describe = constant_describe,
    .free = constant_free,
};
