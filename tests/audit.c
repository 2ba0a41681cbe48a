/*
** audit.c - statistical privacy audits. Each audit runs a mechanism many
** times (fixed seeds) on two neighbouring inputs, counts events fixed in
** advance, and turns the counts into a lower confidence bound on the privacy
** loss with Clopper-Pearson intervals (overall alpha 1e-6, Bonferroni over
** the events and both directions). The audit fails if that lower bound
** exceeds the claimed epsilon. Every audit is paired with a deliberately
** broken twin that the same audit must reject: the proof that it has power.
**
** Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed".
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forests/batch.h"
#include "core/learners/auto.h"
#include "core/forests/diprime.h"
#include "core/forests/forest.h"
#include "core/learner.h"
#include "core/learners/matrix_forest.h"
#include "core/learners/naive_bayes.h"
#include "core/learners/private_tree.h"
#include "core/learners/boost.h"
#include "core/forests/matrix.h"
#include "core/median.h"
#include "core/noise.h"
#include "core/options.h"
#include "core/mask.h"
#include "core/partial.h"
#include "core/share.h"
#include "core/row_sample.h"
#include "core/select.h"
#include "core/forests/sharp.h"
#include "core/forests/tree_selection.h"
#include "core/unit.h"

#define SAMPLES 100000
#define ALPHA 1e-6

static int n_pass, n_fail;

static void check(int cond, const char *name) {
  if (cond) n_pass++;
  else n_fail++;
  printf("%s - %s\n", cond ? "ok" : "not ok", name);
}

static void seeded(rdt_rng *rng, const char *label, unsigned run) {
  unsigned char key[RDT_RNG_KEYBYTES];
  char buf[128];
  int n = snprintf(buf, sizeof buf, "%s/%u", label, run);
  rdt_rng_derive_key(key, buf, (size_t)n, "audit");
  rdt_rng_init_seeded(rng, key);
}

/* A forest from an options string; f is zeroed first, so rdt_forest_free is
** safe on it whether or not this succeeds. */
static int forest_from_options(const char *opts, rdt_forest *f) {
  rdt_schema schema;
  rdt_config config;
  char err[256];
  memset(f, 0, sizeof *f);
  return rdt_options_parse(opts, strlen(opts), &schema, &config, err, sizeof err) &&
         rdt_forest_init(f, &schema, &config);
}

/* ---- Clopper-Pearson -------------------------------------------------- */

/* Continued fraction of the regularised incomplete beta (Lentz). */
static double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m < 100000; m++) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < 1e-15) break;
  }
  return h;
}

/* I_x(a, b). */
static double beta_inc(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return exp(lbt) * beta_cf(a, b, x) / a;
  return 1 - exp(lbt) * beta_cf(b, a, 1 - x) / b;
}

/* x with I_x(a, b) = q, by bisection (monotone in x). */
static double beta_quantile(double a, double b, double q) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 200; i++) {
    double mid = (lo + hi) / 2;
    if (beta_inc(a, b, mid) < q) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/* One-sided Clopper-Pearson bounds at level a for k successes in n. */
static double cp_lower(long k, long n, double a) { return k == 0 ? 0 : beta_quantile(k, n - k + 1, a); }
static double cp_upper(long k, long n, double a) { return k == n ? 1 : beta_quantile(k + 1, n - k, 1 - a); }

/* Lower confidence bound on the privacy loss from event counts k0[e] (input
** D) and k1[e] (input D'), n runs each, n_events events. */
static double eps_lower_bound(const long *k0, const long *k1, long n, int n_events) {
  double a = ALPHA / (4.0 * n_events), best = 0;
  for (int e = 0; e < n_events; e++) {
    double l0 = cp_lower(k0[e], n, a), u0 = cp_upper(k0[e], n, a);
    double l1 = cp_lower(k1[e], n, a), u1 = cp_upper(k1[e], n, a);
    if (l0 > 0 && u1 > 0 && log(l0 / u1) > best) best = log(l0 / u1);
    if (l1 > 0 && u0 > 0 && log(l1 / u0) > best) best = log(l1 / u0);
  }
  return best;
}

/* report() for an audit of `runs` runs per side. */
static void report_runs(const char *name, const long *k0, const long *k1, int n_events, long runs, double claimed,
                        int expect_pass) {
  double lb = eps_lower_bound(k0, k1, runs, n_events);
  char line[256];
  snprintf(line, sizeof line, "%s: privacy loss >= %.3f (99.9999%% lower bound), claimed %.3f%s", name, lb,
           claimed, expect_pass ? "" : " -> rejected as it must be");
  check(expect_pass ? lb <= claimed : lb > claimed, line);
}

static void report(const char *name, const long *k0, const long *k1, int n_events, double claimed,
                   int expect_pass) {
  report_runs(name, k0, k1, n_events, SAMPLES, claimed, expect_pass);
}

/* ---- mechanism 1: one leaf counter ------------------------------------ */
/* Neighbours: the counter is 0 (row absent) or 1 (row present). Released:
** counter + discrete Laplace. Events: the outcome lands at or above / at or
** below a few thresholds chosen in advance. */
#define COUNTER_EVENTS 6
static void counter_events(int64_t out, long *k) {
  static const int64_t th[3] = {-1, 1, 3};
  for (int i = 0; i < 3; i++) {
    k[2 * i] += out >= th[i];
    k[2 * i + 1] += out <= th[i] - 1;
  }
}

static void audit_counter(double eps, int broken) {
  rdt_eps e;
  uint64_t s, t;
  rdt_eps_from_double(eps, &e);
  rdt_laplace_params(e, 1, &s, &t);
  if (broken) s *= 2; /* the twin: half the noise scale */
  long k0[COUNTER_EVENTS] = {0}, k1[COUNTER_EVENTS] = {0};
  rdt_rng rng;
  seeded(&rng, broken ? "counter-broken" : "counter", 0);
  for (long i = 0; i < SAMPLES; i++) {
    counter_events(0 + rdt_discrete_laplace(&rng, s, t), k0);
    counter_events(1 + rdt_discrete_laplace(&rng, s, t), k1);
  }
  rdt_rng_clear(&rng);
  char name[128];
  snprintf(name, sizeof name, "leaf counter, discrete Laplace%s, eps %g", broken ? " at half scale" : "", eps);
  report(name, k0, k1, COUNTER_EVENTS, rdt_eps_to_double(e), !broken);
}

/* ---- mechanism 2: the whole RDT forest on tiny data ------------------- */
/* Neighbours: D = {3 rows} and D' = D plus one row (x = 0.9, class 1).
** The structure is fixed (seeded; it does not depend on the data), the
** noise is fresh per run. Released: the model's counters; events on them
** and on the prediction at x = 0.9, both fixed in advance. */
static const char *FOREST_OPTS =
    "{\"epsilon\": 1, \"trees\": 2, \"depth\": 1, \"seed\": 5, \"classes\": [0, 1],"
    " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
#define FOREST_EVENTS 5

static void forest_events(const rdt_forest *f, long *k) {
  double xs[1] = {0.9}, proba[4];
  uint32_t C = f->schema.n_classes;
  /* the class-1 counters of the leaves that x = 0.9 reaches */
  int64_t a = f->counts[(0 * (size_t)f->n_leaves + rdt_forest_leaf(f, 0, xs)) * C + 1];
  int64_t b = f->counts[(1 * (size_t)f->n_leaves + rdt_forest_leaf(f, 1, xs)) * C + 1];
  k[0] += a >= 1 && b >= 1;
  k[1] += a <= 0 && b <= 0;
  k[2] += a + b >= 2;
  uint32_t cls = rdt_forest_predict(f, xs, proba, NULL);
  k[3] += cls == 1;
  k[4] += proba[1] > 0.6;
}

static void audit_forest(int broken) {
  rdt_forest base, f;
  if (!forest_from_options(FOREST_OPTS, &base)) {
    check(0, "forest audit setup");
    rdt_forest_free(&base);
    return;
  }
  double rows[3] = {0.1, 0.5, 0.8};
  uint32_t cls[3] = {0, 0, 1};
  rdt_forest_train_batch(&base, rows, cls, 3);
  size_t nc = (size_t)base.config.trees * base.n_leaves * base.schema.n_classes;
  int64_t *with = malloc(nc * sizeof *with), *without = malloc(nc * sizeof *without);
  memcpy(without, base.counts, nc * sizeof *without);
  double extra = 0.9;
  rdt_forest_train_row(&base, &extra, 1);
  memcpy(with, base.counts, nc * sizeof *with);
  if (broken) base.config.trees = 1; /* the twin: eps not divided over the trees */
  long k[2][FOREST_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "forest-broken" : "forest", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      memcpy(base.counts, side ? with : without, nc * sizeof *with);
      if (broken) {
        uint64_t s, t;
        rdt_laplace_params(base.config.eps, 1, &s, &t);
        for (size_t c = 0; c < nc; c++) base.counts[c] += rdt_discrete_laplace(&rng, s, t);
      } else {
        rdt_forest_add_noise(&base, &rng);
      }
      rdt_forest_prepare(&base);
      forest_events(&base, k[side]);
    }
  }
  rdt_rng_clear(&rng);
  report(broken ? "RDT forest (2 trees) with eps not divided over the trees"
                : "RDT forest (2 trees, depth 1) on 3 vs 4 rows, counters and prediction",
         k[0], k[1], FOREST_EVENTS, rdt_eps_to_double(base.config.eps), !broken);
  free(with);
  free(without);
  rdt_forest_free(&base);
  (void)f;
}

/* ---- mechanism 3: real-valued release on a lattice -------------------- */
/* Neighbours: value 0 vs 1, sensitivity 1. Events: thresholds, and "the
** output is not a multiple of 2^-53" -- the least-significant-bit event that
** separates inputs under naive floating-point Laplace (Mironov 2012). */
#define REAL_EVENTS 4
static void real_events(double y, long *k) {
  k[0] += y >= 0.5;
  k[1] += y >= 2;
  k[2] += y <= -1;
  k[3] += fabs(y) < 0.5 && ldexp(y, 53) != floor(ldexp(y, 53));
}

/* The broken twin: textbook floating-point Laplace, x - b * sign * log(U). */
static double float_laplace(rdt_rng *rng, double x, double b) {
  double u = ((double)(rdt_rng_u64(rng) >> 11) + 0.5) * 0x1.0p-53;
  double sign = (rdt_rng_u64(rng) & 1) ? 1 : -1;
  return x + sign * b * -log(u);
}

static void audit_real(int broken) {
  rdt_eps e;
  rdt_eps_from_double(1.0, &e);
  long k[2][REAL_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "real-broken" : "real", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      double y;
      if (broken) y = float_laplace(&rng, side, 1.0);
      else if (!rdt_lattice_laplace(&rng, side, 1.0, e, -10, &y)) y = NAN;
      real_events(y, k[side]);
    }
  }
  rdt_rng_clear(&rng);
  report(broken ? "real release with floating-point Laplace (least-significant-bit event)"
                : "real release with lattice Laplace (grid 2^-10), eps 1",
         k[0], k[1], REAL_EVENTS, 1.0, !broken);
}

/* ---- mechanism 4: selection by permute-and-flip ----------------------- */
/* Neighbours: utilities (0, 1, 3) vs (1, 0, 2) (each moves by at most 1).
** Events: which candidate is chosen. */
static void audit_selection(int broken) {
  rdt_eps e;
  rdt_eps_from_double(1.0, &e);
  int64_t u[2][3] = {{0, 1, 3}, {1, 0, 2}};
  long k[2][3] = {{0}};
  size_t order[3];
  rdt_rng rng;
  seeded(&rng, broken ? "pf-broken" : "pf", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      /* the twin treats non-monotone utilities as monotone: twice the eps */
      long c = rdt_permute_and_flip(&rng, u[side], 3, e, 1, broken, order);
      if (c >= 0) k[side][c]++;
    }
  }
  rdt_rng_clear(&rng);
  report(broken ? "permute-and-flip with the monotone shortcut on non-monotone utilities"
                : "permute-and-flip over 3 candidates, sensitivity 1, eps 1",
         k[0], k[1], 3, 1.0, !broken);
}

/* ---- mechanism 5: dp_median_split ----------------------------------- */
/* Neighbours on [0, 1]: D = {0.5} and D' = {0.5, 0.5 + 2^-10}. Events: the
** output lands in (0.5, 0.5 + 2^-10], below 0.25, above 0.75. The broken
** twin is the rule printed in the DiPriMe paper: a rank j with probability
** proportional to exp(-eps |N - 2j| / 2), then a uniform value between the
** j-th and (j+1)-th sorted values (the bounds padding the ends), which ignores
** the interval lengths. */
#define MEDIAN_EVENTS 3
static void median_events(double y, long *k) {
  k[0] += y > 0.5 && y <= 0.5 + 0x1p-10;
  k[1] += y < 0.25;
  k[2] += y > 0.75;
}

static double paper_median(rdt_rng *rng, const double *sorted, int n, double eps) {
  /* intervals j = 0..n between lo=0, x_1..x_n, hi=1; rank weights exp(-eps|n-2j|/2) */
  double w[8], total = 0;
  for (int j = 0; j <= n; j++) total += w[j] = exp(-eps * fabs((double)n - 2.0 * j) / 2);
  double u = rdt_rng_unit(rng) * total;
  int j = 0;
  while (j < n && u >= w[j]) u -= w[j++];
  double a = j == 0 ? 0 : sorted[j - 1], b = j == n ? 1 : sorted[j];
  return a + (b - a) * rdt_rng_unit(rng);
}

static void audit_median(int broken) {
  rdt_eps e;
  rdt_eps_from_double(1.0, &e);
  double data[2][2] = {{0.5, 0}, {0.5, 0.5 + 0x1p-10}};
  int size[2] = {1, 2};
  long k[2][MEDIAN_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "median-broken" : "median", 0);
  rdt_median m[2];
  for (int side = 0; side < 2; side++) {
    rdt_median_init(&m[side], 0, 1, 256);
    for (int i = 0; i < size[side]; i++) rdt_median_add(&m[side], data[side][i]);
  }
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      double y = NAN;
      if (broken) y = paper_median(&rng, data[side], size[side], 1.0);
      else rdt_median_release(&m[side], &rng, e, RDT_QUANTILE_ONE / 2, &y);
      median_events(y, k[side]);
    }
  }
  rdt_median_free(&m[0]);
  rdt_median_free(&m[1]);
  rdt_rng_clear(&rng);
  report(broken ? "median by the paper's rank rule (interval lengths ignored)"
                : "dp_median_split on a 256-cell grid, {0.5} vs {0.5, 0.5 + 2^-10}, eps 1",
         k[0], k[1], MEDIAN_EVENTS, 1.0, !broken);
}

/* ---- mechanism 6: a whole DiPriMe tree on tiny data ------------------- */
/* Neighbours: D = {0.2 (class 0), 0.3 (0), 0.7 (1)} and D' = D + {0.8 (1)}; one
** numeric feature, one tree of depth 1, K = 1: a private median (the split)
** and noisy leaf counts. Released: threshold and counters; events on both.
** The broken twin spends four times the leaf budget it reports. */
#define DIPRIME_EVENTS 5
#define DIPRIME_SAMPLES (SAMPLES / 5)
static const char *DIPRIME_OPTS =
    "{\"algorithm\": \"diprime\", \"epsilon\": 1, \"trees\": 1, \"depth\": 1, \"candidates\": 1,"
    " \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

/* A DiPriMe audit's options parsed and budgeted (unsampled: one charge);
** 0 after reporting the failure as "<what> setup". */
static int diprime_audit_config(const char *opts, rdt_schema *schema, rdt_config *config, const char *what) {
  char err[256], name[96];
  if (rdt_options_parse(opts, strlen(opts), schema, config, err, sizeof err) && rdt_diprime_budget(config, 1)) return 1;
  snprintf(name, sizeof name, "%s setup", what);
  check(0, name);
  return 0;
}

static void audit_diprime(int broken) {
  double xs[4] = {0.2, 0.3, 0.7, 0.8};
  uint32_t cls[4] = {0, 0, 1, 1};
  long k[2][DIPRIME_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "diprime-broken" : "diprime", 0);
  double claimed = 0;
  for (long i = 0; i < DIPRIME_SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      rdt_schema schema;
      rdt_config config;
      rdt_forest f;
      if (!diprime_audit_config(DIPRIME_OPTS, &schema, &config, "diprime audit")) return;
      /* On a given set of rows (no sampling) the mechanism claims half the
      ** eps it charges (diprime.h items 2-6); the sampled audit below covers the rest. */
      claimed = rdt_eps_to_double(config.eps) / 2;
      if (broken) config.eps_leaf.num *= 4;
      if (!rdt_forest_init(&f, &schema, &config) || !rdt_diprime_train(&f, xs, cls, NULL, side ? 4 : 3, &rng)) {
        check(0, "diprime audit training");
        return;
      }
      double t = f.nodes[0].value;
      int64_t *c = f.counts; /* leaf 0: c[0], c[1]; leaf 1: c[2], c[3] */
      k[side][0] += t < 0.5;
      k[side][1] += c[3] >= 2;
      k[side][2] += c[3] <= 0;
      k[side][3] += c[3] >= 1 && c[2] <= 0;
      k[side][4] += c[1] + c[3] >= 2;
      rdt_forest_free(&f);
    }
  }
  rdt_rng_clear(&rng);
  report_runs(broken ? "DiPriMe tree spending four times the leaf budget it accounts for"
                     : "DiPriMe tree (median split + leaf counts) on 3 vs 4 rows, unsampled: half the eps charged",
              k[0], k[1], DIPRIME_EVENTS, DIPRIME_SAMPLES, claimed, !broken);
}

/* ---- mechanism 6c: DiPriMe's regression leaves (diprime.h item 4) -------
** One tree of depth 1 on one numeric feature, target in [0, 1]; D = three rows
** at target 1/2 (x = 0.2, 0.3, 0.7), D' = D plus a row at target 1 (x = 0.8).
** Released: the two leaves' {n^, S}; the centred total
** C = sum over leaves of S - 2^15 max(n^, 0) is post-processing of the leaf
** sums alone, which item 4 releases with eps_leaf / 2 (parallel over the
** leaves): whichever leaf the added row reaches, C's true value moves by
** 2^15 and its noise is the same. Events on C, claimed eps_leaf / 2. The
** broken twin is the sum from min that item 4 replaced (a row at the top of
** the range moved a leaf's sum by 2^16, the noise assumed 2^15): emulated as
** D' = D plus two such rows. epsilon 8 so that the share is near 1. */
#define DIPRIME_REG_EVENTS 4
#define DIPRIME_REG_SAMPLES (SAMPLES * 2 / 5) /* a tree per run: 40,000 keep the audit's time */
static const char *DIPRIME_REG_OPTS =
    "{\"algorithm\": \"diprime\", \"epsilon\": 8, \"trees\": 1, \"depth\": 1, \"candidates\": 1,"
    " \"task\": \"regression\", \"target\": {\"min\": 0, \"max\": 1},"
    " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

static void audit_diprime_regression(int broken) {
  double xs[5] = {0.2, 0.3, 0.7, 0.8, 0.9}, ys[5] = {0.5, 0.5, 0.5, 1, 1};
  const int64_t half = (int64_t)1 << 15;
  int n1 = broken ? 5 : 4;
  long k[2][DIPRIME_REG_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "diprime-reg-broken" : "diprime-reg", 0);
  double claimed = 0;
  for (long i = 0; i < DIPRIME_REG_SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      rdt_schema schema;
      rdt_config config;
      rdt_forest f;
      if (!diprime_audit_config(DIPRIME_REG_OPTS, &schema, &config, "diprime regression audit")) return;
      claimed = rdt_eps_to_double(config.eps_leaf) / 2;
      if (!rdt_forest_init(&f, &schema, &config) ||
          !rdt_diprime_train(&f, xs, NULL, ys, (uint64_t)(side ? n1 : 3), &rng)) {
        check(0, "diprime regression audit training");
        return;
      }
      int64_t *c = f.counts, cs = 0; /* leaf l: c[2l] count, c[2l + 1] sum */
      for (int l = 0; l < 2; l++) cs += c[2 * l + 1] - (c[2 * l] > 0 ? c[2 * l] : 0) * half;
      k[side][0] += cs >= half;
      k[side][1] += cs <= 0;
      k[side][2] += cs >= 2 * half;
      k[side][3] += cs <= -half;
      rdt_forest_free(&f);
    }
  }
  rdt_rng_clear(&rng);
  report_runs(broken ? "DiPriMe regression leaves whose sums are not centred (a row moves one by 2^16 grid units; "
                       "broken twin)"
                     : "DiPriMe regression leaves: the centred sums (eps_leaf/2), 3 vs 4 rows, 40,000 runs",
              k[0], k[1], DIPRIME_REG_EVENTS, DIPRIME_REG_SAMPLES, claimed, !broken);
}

/* ---- mechanism 6b: DiPriMe on a bottom-k row sample ------------------- */
/* The sampler (row_sample.h, max_rows = 20) and the mechanism together.
** Neighbours: D = 24 identical rows (x = 0.2, class 0) and D' = D plus the
** row (x = 0.2, class 1) offered in the middle. D's sample is 20 class-0
** rows; D' keeps the new row with probability 20/25, and then drops a
** class-0 row: the leaf counters move by (-1, +1), a distance-2 change that
** only the halving of diprime.h item 6 pays for. Every row sits at x = 0.2,
** so the split's distribution is the same on both sides; rho is small so
** that most of eps is in the leaves, where the events look (the leaf the
** rows reach, read off the released threshold). The broken twin computes
** its shares from the whole eps (no halving) and claims the same total. */
#define SAMPLED_EVENTS 4
#define SAMPLED_K 20
#define SAMPLED_N 24
#define SAMPLED_RUNS (SAMPLES / 10)
static const char *SAMPLED_OPTS =
    "{\"algorithm\": \"diprime\", \"epsilon\": 1, \"trees\": 1, \"depth\": 1, \"candidates\": 1, \"rho\": 0.05,"
    " \"max_rows\": 20, \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0,"
    " \"max\": 1}]}";

static void audit_diprime_sampled(int broken) {
  rdt_schema schema;
  rdt_config config;
  char err[256];
  if (!rdt_options_parse(SAMPLED_OPTS, strlen(SAMPLED_OPTS), &schema, &config, err, sizeof err) ||
      !rdt_diprime_budget(&config, 1) || config.max_rows != SAMPLED_K) {
    check(0, "sampled DiPriMe audit setup");
    return;
  }
  rdt_schema_free(&schema);
  double claimed = rdt_eps_to_double(config.eps);
  long k[2][SAMPLED_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "diprime-sampled-broken" : "diprime-sampled", 0);
  for (long i = 0; i < SAMPLED_RUNS; i++) {
    for (int side = 0; side < 2; side++) {
      double xs[SAMPLED_K];
      uint32_t cls[SAMPLED_K];
      unsigned char key[RDT_RNG_KEYBYTES];
      rdt_row_sample sample;
      rdt_rng_bytes(&rng, key, sizeof key); /* a fresh priority stream per run */
      int ok = rdt_row_sample_init(&sample, SAMPLED_K, key, "audit-sample");
      for (int r = 0; ok && r < SAMPLED_N + side; r++) {
        uint64_t slot;
        int added = side && r == SAMPLED_N / 2; /* D' inserts its row in the middle */
        rdt_row_sample_result res = rdt_row_sample_offer(&sample, &slot);
        ok = res != RDT_ROW_SAMPLE_NOMEM;
        if (res == RDT_ROW_SAMPLE_KEEP) {
          xs[slot] = 0.2;
          cls[slot] = (uint32_t)added;
        }
      }
      uint64_t n = sample.size;
      rdt_row_sample_free(&sample);
      rdt_forest f;
      memset(&f, 0, sizeof f);
      if (ok && rdt_options_parse(SAMPLED_OPTS, strlen(SAMPLED_OPTS), &schema, &config, err, sizeof err)) {
        ok = rdt_diprime_budget(&config, 1);
        if (broken) { /* the twin: shares from the whole eps */
          config.eps_query.num *= 2;
          config.eps_leaf.num *= 2;
        }
        ok = ok && rdt_forest_init(&f, &schema, &config) && rdt_diprime_train(&f, xs, cls, NULL, n, &rng);
      } else {
        ok = 0;
      }
      if (!ok) {
        check(0, "sampled DiPriMe audit training");
        rdt_forest_free(&f);
        rdt_rng_clear(&rng);
        return;
      }
      int64_t *c = f.counts + (0.2 < f.nodes[0].value ? 0 : 2); /* the rows' leaf: class 0, class 1 */
      k[side][0] += c[1] >= 1 && c[0] <= SAMPLED_K - 1;
      k[side][1] += c[1] >= 2 && c[0] <= SAMPLED_K - 2;
      k[side][2] += c[1] >= 1;
      k[side][3] += c[0] <= SAMPLED_K - 1;
      rdt_forest_free(&f);
    }
  }
  rdt_rng_clear(&rng);
  report_runs(broken ? "DiPriMe on a bottom-k sample without the halving (shares from the whole eps)"
                     : "DiPriMe on a bottom-k sample (max_rows 20) of 24 vs 25 rows, leaf counters, 10,000 runs",
              k[0], k[1], SAMPLED_EVENTS, SAMPLED_RUNS, claimed, !broken);
}

/* ---- mechanism 7: a matrix forest's tables ---------------------------- */
/* Neighbours: D = {3 rows} and D' = D plus the row (a = 1, b = 1, class 1).
** Strategy "marginals": several contingency tables share epsilon. The
** structure is fixed (seeded); the noise is fresh per run. Released: the
** leaf counters derived from the noisy tables; events on the class-1 votes
** of the added row's point summed over the trees, fixed in advance. The
** broken twin noises every table with the whole epsilon (no composition). */
static const char *MATRIX_OPTS =
    "{\"epsilon\": 1, \"trees\": 4, \"depth\": 1, \"noise\": \"matrix\", \"strategy\": \"marginals\", \"seed\": 2,"
    " \"classes\": [0, 1], \"features\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [0, 1]},"
    " {\"name\": \"b\", \"type\": \"categorical\", \"values\": [0, 1]}]}";
#define MATRIX_EVENTS 4

static void audit_matrix(int broken) {
  rdt_forest f;
  if (!forest_from_options(MATRIX_OPTS, &f) || f.matrix->n_tables < 2) {
    check(0, "matrix audit setup (two or more tables)");
    rdt_forest_free(&f);
    return;
  }
  rdt_matrix *m = f.matrix;
  double rows[6] = {0, 0, 1, 0, 0, 1}, extra[2] = {1, 1};
  uint32_t cls[3] = {0, 0, 1}, bins[2] = {1, 1};
  rdt_forest_train_batch(&f, rows, cls, 3);
  size_t nc = (size_t)m->n_cells * f.schema.n_classes;
  int64_t *with = malloc(nc * sizeof *with), *without = malloc(nc * sizeof *without);
  memcpy(without, m->cells, nc * sizeof *without);
  rdt_forest_train_row(&f, extra, 1);
  memcpy(with, m->cells, nc * sizeof *with);
  rdt_eps saved[8];
  for (uint32_t g = 0; g < m->n_tables && g < 8; g++) {
    saved[g] = m->tables[g].eps;
    if (broken) m->tables[g].eps = f.config.eps;
  }
  long k[2][MATRIX_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "matrix-broken" : "matrix", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      memcpy(m->cells, side ? with : without, nc * sizeof *with);
      rdt_matrix_release(&f, &rng);
      int64_t v = 0;
      for (uint32_t t = 0; t < f.config.trees; t++) v += f.counts[(size_t)rdt_matrix_leaf(&f, t, bins) * 2 + 1];
      k[side][0] += v >= 4;
      k[side][1] += v >= 8;
      k[side][2] += v <= 0;
      k[side][3] += v <= -4;
    }
  }
  rdt_rng_clear(&rng);
  char name[200];
  snprintf(name, sizeof name, "matrix forest (%u marginal tables%s) on 3 vs 4 rows, summed class-1 votes",
           m->n_tables, broken ? ", each with the whole eps" : ", eps split");
  report(name, k[0], k[1], MATRIX_EVENTS, rdt_eps_to_double(f.config.eps), !broken);
  for (uint32_t g = 0; g < m->n_tables && g < 8; g++) m->tables[g].eps = saved[g];
  free(with);
  free(without);
  rdt_forest_free(&f);
}

/* ---- mechanism 8: an RDT# model ------------------------------------------ */
/* Neighbours: private D = {3 rows} and D' = D plus the row (a = 1, class 1);
** the public rows are the same on both sides. Released: the whole model
** (noisy primary counters, secondary counters from the pseudo-labels);
** events on the class-1 primary counters at a = 1 summed over the primary
** trees and on the model's prediction there. The broken twin draws the
** noise with p times the eps it reports (eps not divided over the trees). */
static const char *SHARP_OPTS =
    "{\"algorithm\": \"rdt#\", \"public_query\": \"SELECT 1\", \"public_tables\": [], \"epsilon\": 1, \"trees\": 3, \"secondary_trees\": 2,"
    " \"depth\": 1, \"cells\": 2, \"seed\": 4, \"classes\": [0, 1],"
    " \"features\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [0, 1]}]}";
#define SHARP_EVENTS 4

static void audit_sharp(int broken) {
  rdt_forest f;
  char err[256];
  double pub[6] = {0, 1, 0, 1, 1, 0};
  if (!forest_from_options(SHARP_OPTS, &f) || !rdt_sharp_build(&f, pub, 6, err, sizeof err)) {
    check(0, "rdt# audit setup");
    rdt_forest_free(&f);
    return;
  }
  double rows[3] = {0, 0, 1}, extra = 1, x = 1, proba[4];
  uint32_t cls[3] = {0, 0, 1}, bins[1] = {1};
  size_t nc = (size_t)rdt_sharp_slots(&f) * 2;
  int64_t *with = malloc(nc * sizeof *with), *without = malloc(nc * sizeof *without);
  rdt_forest_train_batch(&f, rows, cls, 3);
  memcpy(without, f.counts, nc * sizeof *without);
  rdt_forest_train_row(&f, &extra, 1);
  memcpy(with, f.counts, nc * sizeof *with);
  rdt_eps claimed = f.config.eps;
  if (broken) f.config.eps.num *= f.config.primary_trees;
  long k[2][SHARP_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "sharp-broken" : "sharp", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      memcpy(f.counts, side ? with : without, nc * sizeof *with);
      rdt_sharp_release(&f, pub, 6, &rng);
      int64_t v = 0;
      for (uint32_t t = 0; t < f.config.primary_trees; t++) v += f.counts[rdt_sharp_slot(&f, t, &x, bins) * 2 + 1];
      rdt_forest_prepare(&f);
      k[side][0] += v >= 2;
      k[side][1] += v >= 5;
      k[side][2] += v <= -2;
      k[side][3] += rdt_forest_predict(&f, &x, proba, NULL) == 1;
    }
  }
  rdt_rng_clear(&rng);
  report(broken ? "RDT# model (3 primary trees) with eps not divided over the primary trees"
                : "RDT# model (3 primary + 2 secondary trees) on 3 vs 4 private rows, counters and prediction",
         k[0], k[1], SHARP_EVENTS, rdt_eps_to_double(claimed), !broken);
  free(with);
  free(without);
  rdt_forest_free(&f);
}

/* ---- mechanism 9: the voting trees of "keep_trees" ------------------------ */
/* Neighbours: D = two class-1 rows between the two trees' thresholds, and
** D' = D plus a class-0 row placed so that, on EXACT counters, the other
** tree scores best (on D the trees tie and tree 0 is kept; on D' tree 1).
** Released: which tree votes, chosen from the noisy counters (post-
** processing: the loss must stay within eps). The broken twin chooses from
** the exact counters before the noise, which gives the rows away. */
static const char *KEEP_OPTS =
    "{\"epsilon\": 1, \"trees\": 2, \"depth\": 1, \"seed\": 5, \"keep_trees\": 0.5, \"vote\": \"weight\","
    " \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
#define KEEP_EVENTS 2

static void audit_keep_trees(int broken) {
  rdt_forest f;
  if (!forest_from_options(KEEP_OPTS, &f) || f.nodes[0].kind != RDT_SPLIT_NUMERIC ||
      f.nodes[1].kind != RDT_SPLIT_NUMERIC || f.nodes[0].value == f.nodes[1].value) {
    check(0, "keep_trees audit setup (two distinct numeric thresholds)");
    rdt_forest_free(&f);
    return;
  }
  double t0 = f.nodes[0].value, t1 = f.nodes[1].value;
  double lo = t0 < t1 ? t0 : t1, hi = t0 < t1 ? t1 : t0;
  double rows[2] = {(lo + hi) / 2, (lo + hi) / 2};
  uint32_t cls[2] = {1, 1};
  /* The extra class-0 row falls on the far side of tree 1's threshold, in
  ** the leaf tree 0 shares with the two class-1 rows: tree 0's lead breaks,
  ** tree 1 gains a pure leaf. */
  double extra = t1 > t0 ? (hi + 1) / 2 : lo / 2;
  rdt_forest_train_batch(&f, rows, cls, 2);
  size_t nc = (size_t)f.config.trees * f.n_leaves * f.schema.n_classes;
  int64_t *with = malloc(nc * sizeof *with), *without = malloc(nc * sizeof *without);
  memcpy(without, f.counts, nc * sizeof *without);
  rdt_forest_train_row(&f, &extra, 0);
  memcpy(with, f.counts, nc * sizeof *with);
  long k[2][KEEP_EVENTS] = {{0}};
  int exact_flips = 1;
  rdt_rng rng;
  seeded(&rng, broken ? "keep-broken" : "keep", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      memcpy(f.counts, side ? with : without, nc * sizeof *with);
      if (broken) rdt_forest_select_trees(&f); /* on the exact counters */
      if (i == 0) { /* the construction: exact selection keeps tree 0 on D, tree 1 on D' */
        uint8_t kept[2];
        rdt_select_trees(&f, f.counts, 1, kept);
        exact_flips &= kept[side] == 1;
      }
      rdt_forest_add_noise(&f, &rng); /* the counters only; tree_kept is untouched */
      if (!broken) rdt_forest_select_trees(&f); /* on the released counters */
      k[side][0] += f.tree_kept && f.tree_kept[1];
      k[side][1] += f.tree_kept && f.tree_kept[0];
    }
  }
  rdt_rng_clear(&rng);
  check(exact_flips, "keep_trees audit: on exact counters tree 0 wins on D and tree 1 on D' (the construction)");
  report(broken ? "voting trees chosen from the exact counters (broken twin)"
                : "voting trees (keep_trees 0.5 of 2) chosen from the noisy counters, 2 vs 3 rows",
         k[0], k[1], KEEP_EVENTS, rdt_eps_to_double(f.config.eps), !broken);
  free(with);
  free(without);
  rdt_forest_free(&f);
}

/* ---- mechanism 10: DP batch prediction on a non-private model ------------
** Neighbours: 1448 training rows vs 1449 (one more, like the others). Released:
** the noisy votes at one query x (strategy QUERY, eps 0.1). The model is
** non-private without "depth": its depth is fixed, so the structure is the
** same on both sides and only the counters differ by one row (batch.h).
** The broken twin is issue 19's leak: the depth chosen from the EXACT row
** count, round(log2(4 n)): 12 for 1448 rows, 13 for 1449. The 1448 rows sit
** at a point p that shares x's depth-12 leaf but not its depth-13 leaf, so
** one more row flips x's vote from about 1448 to about 0. */
#define BATCH_ROWS 1448
#define BATCH_EVENTS 3
static const char *BATCH_OPTS =
    "{\"epsilon\": null, \"trees\": 1, \"seed\": 19, \"classes\": [0, 1],"
    " \"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

/* The forest of BATCH_OPTS with the given depth (0: the options' own). */
static int batch_forest(rdt_forest *f, uint32_t depth) {
  char opts[512];
  if (!depth) return forest_from_options(BATCH_OPTS, f);
  snprintf(opts, sizeof opts, "{\"depth\": %u, %s", depth, BATCH_OPTS + 1);
  return forest_from_options(opts, f);
}

static void audit_batch(int broken) {
  rdt_forest f[2];
  memset(f, 0, sizeof f);
  double x = 0.5, p = -1;
  int ok = 1;
  for (int side = 0; side < 2 && ok; side++) {
    /* Honest: the options' fixed depth. Twin: the old rule on the exact count. */
    uint32_t depth = 0;
    if (broken) {
      rdt_config c;
      memset(&c, 0, sizeof c);
      c.trees = 1; /* non-private: only the row count matters */
      depth = rdt_depth_for_rows(&c, BATCH_ROWS + side, 2, RDT_AUTO_MAX_DEPTH);
    }
    ok = batch_forest(&f[side], depth);
  }
  /* p: in x's leaf of side 0's tree, outside x's leaf of side 1's tree. */
  for (int i = 0; ok && i <= 100000 && p < 0; i++) {
    double q = i / 100000.0;
    if (rdt_forest_leaf(&f[0], 0, &q) == rdt_forest_leaf(&f[0], 0, &x) &&
        (!broken || rdt_forest_leaf(&f[1], 0, &q) != rdt_forest_leaf(&f[1], 0, &x)))
      p = q;
  }
  ok = ok && p >= 0 && f[0].config.depth == (broken ? 12u : RDT_NONPRIVATE_DEFAULT_DEPTH) &&
       f[1].config.depth == (broken ? 13u : RDT_NONPRIVATE_DEFAULT_DEPTH);
  if (!ok) {
    check(0, "batch prediction audit setup");
    rdt_forest_free(&f[0]);
    rdt_forest_free(&f[1]);
    return;
  }
  for (int side = 0; side < 2; side++)
    for (int i = 0; i < BATCH_ROWS + side; i++) rdt_forest_train_row(&f[side], &p, 1);
  rdt_eps eps;
  rdt_eps_from_double(0.1, &eps);
  long k[2][BATCH_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "batch-broken" : "batch", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      int64_t votes[2];
      if (!rdt_batch_answer(&f[side], &x, 1, RDT_BATCH_QUERY, eps, 1, &rng, votes)) votes[1] = 0;
      k[side][0] += votes[1] > BATCH_ROWS / 2;
      k[side][1] += votes[1] > votes[0];
      k[side][2] += votes[1] > BATCH_ROWS; /* where the honest sides differ by one row */
    }
  }
  rdt_rng_clear(&rng);
  report(broken ? "batch prediction on a model whose depth came from the exact row count (1448 vs 1449 rows)"
                : "batch prediction on a non-private model of fixed depth, 1448 vs 1449 rows",
         k[0], k[1], BATCH_EVENTS, 0.1, !broken);
  rdt_forest_free(&f[0]);
  rdt_forest_free(&f[1]);
}

/* ---- mechanism 10b: batch prediction must not be seeded ------------------
** Issue 32's pair: a non-private model (4 trees, depth 3), D = 6 rows at
** a = 0.45 (three of each class), D' = D plus one row of class 1 there;
** the query x = 0.45, strategy QUERY, eps 0.5. Released: the label. Honest:
** fresh noise on every call. The broken twin is a "seed" on every call (the
** same stream each time, as rdt_predict_batch with "seed" gave before it
** refused one with "ledger"): the answer is then a deterministic threshold
** of the exact counters, and a seed where D and D' answer differently is
** found in the setup (an adversary chooses the seed). */
#define BATCH_SEED_EVENTS 2
static const char *BATCH_SEED_OPTS =
    "{\"epsilon\": null, \"trees\": 4, \"depth\": 3, \"seed\": 19, \"classes\": [0, 1],"
    " \"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

static int batch_label(const rdt_forest *f, double x, rdt_eps eps, rdt_rng *rng) {
  int64_t votes[2];
  if (!rdt_batch_answer(f, &x, 1, RDT_BATCH_QUERY, eps, 1, rng, votes)) return -1;
  return votes[1] > votes[0];
}

/* Whether the seeded stream `seed` gives the two sides different labels. */
static int seed_splits(const rdt_forest *f, double x, rdt_eps eps, unsigned seed) {
  int l[2];
  for (int side = 0; side < 2; side++) {
    rdt_rng rng;
    seeded(&rng, "batch-seed", seed);
    l[side] = batch_label(&f[side], x, eps, &rng);
    rdt_rng_clear(&rng);
  }
  return l[0] >= 0 && l[1] >= 0 && l[0] != l[1];
}

static void audit_batch_seeded(int broken) {
  rdt_forest f[2];
  double x = 0.45;
  int ok = forest_from_options(BATCH_SEED_OPTS, &f[0]) && forest_from_options(BATCH_SEED_OPTS, &f[1]);
  for (int side = 0; ok && side < 2; side++) {
    for (int i = 0; i < 6; i++) rdt_forest_train_row(&f[side], &x, (uint32_t)(i % 2));
    if (side) rdt_forest_train_row(&f[side], &x, 1);
  }
  rdt_eps eps;
  rdt_eps_from_double(0.5, &eps);
  unsigned seed = 0; /* the twin's seed: one where the two sides answer differently */
  while (ok && broken && !seed_splits(f, x, eps, seed)) ok = ++seed <= 1000;
  rdt_rng rng;
  if (!ok) {
    check(0, "seeded batch prediction audit setup");
    rdt_forest_free(&f[0]);
    rdt_forest_free(&f[1]);
    return;
  }
  long k[2][BATCH_SEED_EVENTS] = {{0}};
  seeded(&rng, "batch-fresh", 0);
  for (long i = 0; i < SAMPLES; i++)
    for (int side = 0; side < 2; side++) {
      if (broken) { /* the same seed, hence the same noise, on every call */
        rdt_rng_clear(&rng);
        seeded(&rng, "batch-seed", seed);
      }
      int label = batch_label(&f[side], x, eps, &rng);
      k[side][0] += label == 1;
      k[side][1] += label == 0;
    }
  rdt_rng_clear(&rng);
  report(broken ? "batch prediction with a seed on every call (6 vs 7 rows): broken twin"
                : "batch prediction with fresh noise on every call, 6 vs 7 rows (issue 32's pair)",
         k[0], k[1], BATCH_SEED_EVENTS, 0.5, !broken);
  rdt_forest_free(&f[0]);
  rdt_forest_free(&f[1]);
}

/* ---- mechanism 11: the naive Bayes learner ------------------------------
** Neighbours: D = {3 rows} and D' = D plus the row (0.9, 0.9, 0.9) of class 1;
** d = 3 numeric features of 2 bins each, so the row moves cell (class 1,
** bin 1) of every table by 1, and class count 1, which (naive_bayes.c 3c)
** is the tables' mean row sum: post-processing of the tables.
** Released: the whole payload (encode), read back as counters; events on
** the four moved counters together (all at least their D' value, all at
** most their D value: for the honest mechanism these have a loss of
** exactly eps), on S, their sum, and on the prediction at the added row
** (post-processing). The broken twin adds noise of scale 1/eps to every counter,
** ignoring the tables' sensitivity d. */
static const char *NB_SCHEMA =
    "{\"epsilon\": 1, \"classes\": [0, 1], \"features\": ["
    "{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
    "{\"name\": \"b\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
    "{\"name\": \"c\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
#define NB_EVENTS 7
#define NB_HEADER 36                   /* the payload's header (naive_bayes.c, contract 6) */
#define NB_COUNTERS 14                 /* 2 class counts, then 3 tables of 2 classes x 2 bins */
static const int NB_MOVED[4] = {1, 5, 9, 13}; /* class count 1; cell (1, bin 1) of each table */

static int64_t nb_counter(const unsigned char *p, int i) {
  uint64_t v = 0;
  for (int j = 0; j < 8; j++) v |= (uint64_t)p[NB_HEADER + 8 * i + j] << (8 * j);
  return (int64_t)v;
}

static void nb_set_counter(unsigned char *p, int i, int64_t x) {
  for (int j = 0; j < 8; j++) p[NB_HEADER + 8 * i + j] = (unsigned char)((uint64_t)x >> (8 * j));
}

static void audit_naive_bayes(int broken) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_schema schema;
  rdt_config config;
  char err[256];
  rdt_json *opts = rdt_json_parse("{\"bins\": 2}", 11, err, sizeof err);
  if (!opts || !rdt_options_parse(NB_SCHEMA, strlen(NB_SCHEMA), &schema, &config, err, sizeof err)) {
    check(0, "naive Bayes audit setup");
    rdt_json_free(opts);
    return;
  }
  rdt_learn_common c, plain;
  memset(&c, 0, sizeof c);
  c.is_private = 1;
  rdt_eps_from_double(1.0, &c.eps);
  memset(&plain, 0, sizeof plain); /* the twin trains exactly, then adds its own noise */
  uint64_t s1, t1;
  rdt_laplace_params(c.eps, 1, &s1, &t1);
  double rows[4][3] = {{0.1, 0.1, 0.1}, {0.9, 0.9, 0.9}, {0.2, 0.8, 0.3}, {0.9, 0.9, 0.9}};
  uint32_t cls[4] = {0, 1, 0, 1};
  long k[2][NB_EVENTS] = {{0}};
  int ok = 1;
  rdt_rng rng;
  seeded(&rng, broken ? "nb-broken" : "nb", 0);
  for (long i = 0; ok && i < SAMPLES; i++) {
    for (int side = 0; ok && side < 2; side++) {
      void *st = l->start(opts, &schema, broken ? &plain : &c, err, sizeof err);
      rdt_bytes b = {0};
      if (st) {
        for (int r = 0; r < 3 + side; r++) l->row(st, rows[r], cls[r], 0);
        ok = l->finish(st, &rng);
        if (ok) l->encode(st, &b);
      }
      ok = ok && st && !b.oom && b.n == NB_HEADER + 8 * NB_COUNTERS;
      if (ok && broken) { /* the twin: scale 1/eps on every counter */
        for (int j = 0; j < NB_COUNTERS; j++)
          nb_set_counter(b.p, j, nb_counter(b.p, j) + rdt_discrete_laplace(&rng, s1, t1));
        rdt_reader r = {b.p, b.n, 0, 0};
        l->free(st);
        st = l->decode(&r, &schema, &plain);
        ok = st != NULL;
      }
      if (ok) {
        int64_t v = 0, lo = INT64_MAX, hi = INT64_MIN;
        for (int j = 0; j < 4; j++) {
          int64_t x = nb_counter(b.p, NB_MOVED[j]);
          v += x;
          if (x < lo) lo = x;
          if (x > hi) hi = x;
        }
        double proba[2];
        l->predict(st, rows[3], proba);
        /* exact: each moved counter 1 on D, 2 on D'; S 4 on D, 8 on D' */
        k[side][0] += lo >= 2; /* all four at least their D' value: the loss is exactly eps */
        k[side][1] += hi <= 1;
        k[side][2] += v >= 10;
        k[side][3] += v >= 14;
        k[side][4] += v <= 2;
        k[side][5] += v <= -2;
        k[side][6] += proba[1] > 0.8;
      }
      if (st) l->free(st);
      rdt_bytes_free(&b);
    }
  }
  rdt_rng_clear(&rng);
  if (!ok) check(0, "naive Bayes audit: training, release or codec failed");
  else
    report(broken ? "naive Bayes with noise of scale 1/eps on every counter (sensitivity d ignored)"
                  : "naive Bayes (3 features, 2 bins) on 3 vs 4 rows, the 4 moved counters and the prediction",
           k[0], k[1], NB_EVENTS, rdt_eps_to_double(c.eps), !broken);
}

/* ---- mechanism 12: the boost learner (learners/boost.c) ------------------ */
/* Neighbours: D = BOOST_ROWS rows of class 0 at x = 0.2 (bin 0 of 2) and
** D' = D plus one row of class 1 at x = 0.7 (bin 1). The intercept (class
** counts, eps/10) makes class 1 unlikely, so the added row's softmax
** gradient is nearly (-1, +1): close to the worst case of Contract 3b (two
** classes: only class 1's sum is released). The released quantities: the
** intercept's noisy class-1 count and bin 1's noisy vector (C * count, g_1)
** of the one feature visit (eps 0.9), read from the trace; in D that bin is
** empty. Events, fixed in advance: each component beyond its shift toward
** D' (or at/below 0 toward D), jointly, which is where the privacy loss of a
** Laplace vector is largest. The broken twin states class 1's gradient bound
** as 1/2 instead of 1 (S = C + G/2): noise too small for the vector. */
#define BOOST_ROWS 100
#define BOOST_EVENTS 5
static const char *BOOST_OPTS =
    "{\"algorithm\": \"boost\", \"epsilon\": 1, \"bins\": 2, \"classes\": [0, 1],"
    " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

static void audit_boost(int broken) {
  char ledger[160], label[RDT_MAX_NAME + 1], err[256];
  rdt_json *opts = NULL;
  rdt_schema schema;
  rdt_learn_common common;
  const rdt_learner *L = &rdt_learner_boost;
  if (!rdt_options_parse_learner(BOOST_OPTS, strlen(BOOST_OPTS), L, &opts, &schema, &common, ledger, sizeof ledger,
                                 label, err, sizeof err)) {
    check(0, "boost audit setup");
    return;
  }
  const int64_t G = RDT_BOOST_GRID, C = RDT_BOOST_COUNT_WEIGHT, shift = G * 9 / 10; /* the row's gradient >= 0.9 */
  uint64_t S = broken ? (uint64_t)(C + G / 2) : 0; /* 0: the true sensitivity */
  long k[2][BOOST_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "boost-broken" : "boost", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      void *st = L->start(opts, &schema, &common, err, sizeof err);
      if (!st) { ok = 0; break; }
      double lo = 0.2, hi = 0.7;
      for (int r = 0; r < BOOST_ROWS; r++) L->row(st, &lo, 0, 0);
      if (side) L->row(st, &hi, 1, 0);
      int64_t t[6]; /* intercept c0, c1; bin 0: n, g1; bin 1: n, g1 */
      ok = rdt_boost_finish_traced(st, &rng, S, t, 6);
      L->free(st);
      int64_t c1 = t[1], n = t[4], g1 = t[5];
      k[side][0] += c1 >= 1 && n >= C && g1 >= shift;
      k[side][1] += c1 <= 0 && n <= 0 && g1 <= 0;
      k[side][2] += n >= C && g1 >= shift;
      k[side][3] += g1 <= 0;
      k[side][4] += c1 >= 1 && g1 >= shift;
    }
  }
  rdt_rng_clear(&rng);
  if (!ok) check(0, "boost audit: the learner refused to start or finish");
  else
    report(broken ? "boost learner with class 1's gradient bound stated as 1/2 instead of 1"
                  : "boost learner (intercept + one feature visit) on 100 vs 101 rows, bin vector and intercept",
           k[0], k[1], BOOST_EVENTS, rdt_eps_to_double(common.eps), !broken);
  rdt_json_free(opts);
  rdt_schema_free(&schema);
}

/* ---- mechanism 12c: the boost learner in shard mode's rounds -------------
** (learners/boost.c Contract 6, sql_shard.c contract 9) Mechanism 12's
** neighbours split over two sites: site A holds the BOOST_ROWS rows of class
** 0, site B nothing on D and the added row of class 1 on D'. Each round,
** both sites open it with the last message, count their rows, and send their
** vectors as partial BLOBs carrying the message (encoded, decoded, merged as
** rdt_merge does); the coordinator opens the round with the message the sum
** carries, adds the sum and releases it (round 0: the class counts; round 1:
** the one feature visit), drawing its noise once. Released (traced): the
** noisy class-1 count and bin 1's (C * count, g_1); events: mechanism 12's.
** The broken twin releases the visit round twice (a round finished again,
** which the ledger refuses) and its events read both releases jointly: the
** visit's eps spent twice. */
#define BOOST_ROUND_EVENTS 4

/* One round of the protocol over the sites' row sets (rows[i] of class
** cls[i] at x = at[i] for site i); the coordinator's state after its
** release, its traced releases in t and the next payload in next. */
static int boost_round(const rdt_learn_common *common, const rdt_json *opts, const rdt_schema *schema, uint32_t r,
                       const rdt_bytes *msg, const int *rows, const uint32_t *cls, const double *at, rdt_rng *rng,
                       int64_t *t, size_t nt, rdt_bytes *next) {
  const rdt_learner *L = &rdt_learner_boost;
  char err[256];
  unsigned char plan[32], digest[32];
  memset(plan, 0x3c, sizeof plan);
  rdt_partial sum;
  memset(&sum, 0, sizeof sum);
  int ok = 1;
  for (int i = 0; ok && i < 2; i++) {
    void *st = L->start(opts, schema, common, err, sizeof err);
    rdt_span sp[RDT_MAX_SPANS];
    uint32_t k = 0;
    ok = st && L->round_open(st, r, msg->p, msg->n, err, sizeof err);
    for (int j = 0; ok && j < rows[i]; j++) L->row(st, &at[i], cls[i], 0);
    rdt_partial p, q;
    size_t size = 0;
    unsigned char *blob = NULL;
    ok = ok && (k = L->counters(st, sp, RDT_MAX_SPANS, digest)) && rdt_partial_from_spans(&p, plan, r, sp, k, msg->p, msg->n) &&
         (blob = rdt_partial_encode(&p, &size)) && rdt_partial_decode(blob, size, &q, err, sizeof err);
    if (k) rdt_partial_free(&p);
    free(blob);
    if (st) L->free(st);
    if (!ok) break;
    if (i == 0) sum = q;
    else {
      ok = rdt_partial_merge(&sum, &q, err, sizeof err);
      rdt_partial_free(&q);
    }
  }
  void *coord = ok ? L->start(opts, schema, common, err, sizeof err) : NULL;
  rdt_span sp[RDT_MAX_SPANS];
  uint32_t k = 0;
  ok = coord && L->round_open(coord, r, sum.message, sum.message_len, err, sizeof err) &&
       (k = L->counters(coord, sp, RDT_MAX_SPANS, digest)) && rdt_spans_count(sp, k) == sum.n &&
       rdt_spans_add(sp, k, sum.counters) && rdt_boost_round_release_traced(coord, rng, t, nt, next) > 0;
  rdt_partial_free(&sum);
  if (coord) L->free(coord);
  return ok;
}

static void audit_boost_rounds(int broken) {
  char ledger[160], label[RDT_MAX_NAME + 1], err[256];
  rdt_json *opts = NULL;
  rdt_schema schema;
  rdt_learn_common common;
  if (!rdt_options_parse_learner(BOOST_OPTS, strlen(BOOST_OPTS), &rdt_learner_boost, &opts, &schema, &common, ledger,
                                 sizeof ledger, label, err, sizeof err)) {
    check(0, "boost rounds audit setup");
    return;
  }
  const int64_t G = RDT_BOOST_GRID, C = RDT_BOOST_COUNT_WEIGHT, shift = G * 9 / 10;
  long k[2][BOOST_ROUND_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "boost-rounds-broken" : "boost-rounds", 0);
  const uint32_t cls[2] = {0, 1};
  const double at[2] = {0.2, 0.7};
  int ok = 1;
  for (long i = 0; i < SAMPLES / 2 && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      const int rows[2] = {BOOST_ROWS, side};
      rdt_bytes none = {0}, m1 = {0}, m2 = {0}, m3 = {0};
      int64_t t0[2], t1[4], t2[4]; /* c0, c1; bin 0: n, g1; bin 1: n, g1 */
      ok = boost_round(&common, opts, &schema, 0, &none, rows, cls, at, &rng, t0, 2, &m1) &&
           boost_round(&common, opts, &schema, 1, &m1, rows, cls, at, &rng, t1, 4, &m2) &&
           (!broken || boost_round(&common, opts, &schema, 1, &m1, rows, cls, at, &rng, t2, 4, &m3));
      rdt_bytes_free(&m1);
      rdt_bytes_free(&m2);
      rdt_bytes_free(&m3);
      int64_t c1 = t0[1], n = t1[2], g1 = t1[3];
      int once = n >= C && g1 >= shift, none_b = n <= 0 && g1 <= 0;
      if (broken) { /* the replayed visit: both releases, jointly */
        once &= t2[2] >= C && t2[3] >= shift;
        none_b &= t2[2] <= 0 && t2[3] <= 0;
      }
      k[side][0] += c1 >= 1 && once;
      k[side][1] += c1 <= 0 && none_b;
      k[side][2] += once;
      k[side][3] += none_b;
    }
  }
  rdt_rng_clear(&rng);
  if (!ok) check(0, "boost rounds audit: a round failed");
  else
    report_runs(broken ? "boost rounds with the visit round released twice (no ledger; broken twin)"
                       : "boost in rounds over 2 sites (partials with the message, merged; intercept + one visit), 100 vs 101 rows",
                k[0], k[1], BOOST_ROUND_EVENTS, SAMPLES / 2, rdt_eps_to_double(common.eps), !broken);
  rdt_json_free(opts);
  rdt_schema_free(&schema);
}

/* ---- mechanism 12b: the boost learner's regression (learners/boost.c) ----- */
/* Neighbours: D = BOOST_ROWS rows with target 0 at x = 0.2 (bin 0 of 2) and
** D' = D plus one row with target 1 at x = 0.7 (bin 1). The released
** quantities (trace): the intercept's noisy count, sum and 13 spread bands,
** then bin 1's noisy vector (C_r * count, g) of the one feature visit. The
** clip c (grid units) is recomputed from the released intercept with the
** contract's rule (rdt_boost_clip_units), so the events below are fixed
** functions of the output. The added row's residual is 1 minus the noisy
** mean (about 0.07), clipped at c: near the worst case of Contract 3 (the
** vector moves by C_r = c/4 and by min(c, 0.93 G)). Events: bin 1's
** components beyond 0.9 of that shift toward D' (or at/below 0 toward D),
** with and without the intercept's count. The broken twin states the
** per-bin sensitivity as 2^11 whatever the released clip (up to 5 * 2^10):
** noise too small for the vector when the clip is wide. */
#define BOOST_REG_EVENTS 5
static const char *BOOST_REG_OPTS =
    "{\"algorithm\": \"boost\", \"epsilon\": 1, \"bins\": 2, \"task\": \"regression\","
    " \"target\": {\"min\": 0, \"max\": 1},"
    " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

static void audit_boost_regression(int broken) {
  char ledger[160], label[RDT_MAX_NAME + 1], err[256];
  rdt_json *opts = NULL;
  rdt_schema schema;
  rdt_learn_common common;
  const rdt_learner *L = &rdt_learner_boost;
  if (!rdt_options_parse_learner(BOOST_REG_OPTS, strlen(BOOST_REG_OPTS), L, &opts, &schema, &common, ledger,
                                 sizeof ledger, label, err, sizeof err)) {
    check(0, "boost regression audit setup");
    return;
  }
  /* a band's noise sd, as boost.c: sqrt(2) times 3 / eps_0, eps_0 = floor(eps / 10) */
  rdt_eps e0 = {common.eps.num / 10};
  const double sd = sqrt(2.0) * 3 / rdt_eps_to_double(e0);
  uint64_t S = broken ? (uint64_t)RDT_BOOST_GRID / 2 : 0; /* 0: the true sensitivity at the released clip */
  long k[2][BOOST_REG_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "boost-reg-broken" : "boost-reg", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      void *st = L->start(opts, &schema, &common, err, sizeof err);
      if (!st) { ok = 0; break; }
      double lo = 0.2, hi = 0.7;
      for (int r = 0; r < BOOST_ROWS; r++) L->row(st, &lo, 0, 0);
      if (side) L->row(st, &hi, 0, 1);
      int64_t t[19]; /* intercept n, sum, 13 bands; bin 0: n, g; bin 1: n, g */
      ok = rdt_boost_finish_traced(st, &rng, S, t, 19);
      L->free(st);
      int64_t c = rdt_boost_clip_units((double)t[0], t + 2, sd), cw = c / 4, n = t[17], g = t[18];
      int64_t shift = (c < RDT_BOOST_GRID * 93 / 100 ? c : RDT_BOOST_GRID * 93 / 100) * 9 / 10;
      k[side][0] += n >= cw && g >= shift;
      k[side][1] += n <= 0 && g <= 0;
      k[side][2] += g >= shift;
      k[side][3] += g <= 0;
      k[side][4] += t[0] >= BOOST_ROWS + 1 && n >= cw && g >= shift;
    }
  }
  rdt_rng_clear(&rng);
  if (!ok) check(0, "boost regression audit: the learner refused to start or finish");
  else
    report(broken ? "boost regression with the per-bin sensitivity stated as 2^11 whatever the released clip"
                  : "boost regression (intercept, spread bands, clip + one visit) on 100 vs 101 rows",
           k[0], k[1], BOOST_REG_EVENTS, rdt_eps_to_double(common.eps), !broken);
  rdt_json_free(opts);
  rdt_schema_free(&schema);
}

/* ---- mechanism: auto's guard (learners/auto.c, step 4) --------------------
** Neighbours: one validation row more, which moves the exact gain (the
** picked model's correct predictions minus the constant model's) by at most
** 1: gains 2 and 3. Released: the noisy gain; events: the decision (kept
** when > 0) and two thresholds. The broken twin noises with twice the eps
** it claims. */
#define AUTO_EVENTS 3
static void audit_auto_guard(int broken) {
  rdt_eps eps, used;
  rdt_eps_from_double(1.0, &eps);
  used = eps;
  if (broken) used.num *= 2;
  long k[2][AUTO_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "auto-broken" : "auto", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2; side++) {
      double g;
      ok = rdt_auto_guard(2.0 + side, 0, 1, used, &rng, &g);
      k[side][0] += g > 0;
      k[side][1] += g > 4;
      k[side][2] += g <= -1;
    }
  }
  rdt_rng_clear(&rng);
  if (!ok) {
    check(0, "auto guard audit setup");
    return;
  }
  report(broken ? "auto's guard noised with twice the eps it claims (broken twin)"
                : "auto's guard: noisy validation gain, gains 2 vs 3",
         k[0], k[1], AUTO_EVENTS, 1.0, !broken);
}

/* ---- mechanism: auto's regression guard (learners/auto.c, step 4) --------
** Neighbours: one validation row more, whose gain (the constant's absolute
** error minus the pick's, over the target range) is at most the bound the
** two released models give, here 0.25: gains 0.5 and 0.75. Released: the
** noisy gain (lattice Laplace, grid 2^-10); events: kept (> 0) and two
** thresholds. The broken twin states the bound as 0.125. */
static void audit_auto_guard_regression(int broken) {
  rdt_eps eps;
  rdt_eps_from_double(1.0, &eps);
  long k[2][AUTO_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "auto-reg-broken" : "auto-reg", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2; side++) {
      double g;
      ok = rdt_auto_guard(0.5 + 0.25 * side, 1, broken ? 0.125 : 0.25, eps, &rng, &g);
      k[side][0] += g > 0;
      k[side][1] += g > 1;
      k[side][2] += g <= 0.25;
    }
  }
  rdt_rng_clear(&rng);
  if (!ok) {
    check(0, "auto regression guard audit setup");
    return;
  }
  report(broken ? "auto's regression guard with its gain's bound stated as half (broken twin)"
                : "auto's regression guard: noisy gain bounded by the models' span, gains 0.5 vs 0.75",
         k[0], k[1], AUTO_EVENTS, 1.0, !broken);
}

/* ---- mechanism: naive Bayes's readout choice (naive_bayes.c, 6c) -------
** Permute-and-flip over counting queries on the training rows, given the
** release. Neighbours: one row more, which adds 1 to the correct count of
** the second readout only: counts {0, 0} and {0, 1}. Released: the winner;
** events: each readout wins. With the claimed eps the likelihood ratio is e
** exactly (monotone permute-and-flip is tight here); the broken twin
** compares the exact counts (the noise forgotten: ratio infinite). */
#define SELECT_EVENTS 2
static void audit_nb_readout_choice(int broken) {
  rdt_eps eps;
  rdt_eps_from_double(1.0, &eps);
  long k[2][SELECT_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "nb-readout-broken" : "nb-readout", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2; side++) {
      int64_t correct[2] = {0, side};
      long w = rdt_nb_choose_readout(correct, !broken, eps, &rng);
      ok = w == 0 || w == 1;
      k[side][w == 1]++;
    }
  }
  rdt_rng_clear(&rng);
  if (!ok) {
    check(0, "naive Bayes readout choice audit setup");
    return;
  }
  report(broken ? "naive Bayes's readout choice on the exact counts (broken twin)"
                : "naive Bayes's readout choice: permute-and-flip, counts {0, 0} vs {0, 1}",
         k[0], k[1], SELECT_EVENTS, 1.0, !broken);
}

/* A learner's options parsed for an audit as rdt_fit parses them; on
** failure a failed check names the audit's setup and 0 is returned. */
static int parse_learner_for_audit(const rdt_learner *l, const char *opts, rdt_json **root, rdt_schema *schema,
                                   rdt_learn_common *c, const char *what) {
  char ledger[129], label[RDT_MAX_NAME + 1], err[256], name[160];
  if (l && rdt_options_parse_learner(opts, strlen(opts), l, root, schema, c, ledger, sizeof ledger, label, err,
                                     sizeof err))
    return 1;
  snprintf(name, sizeof name, "%s audit setup", what);
  check(0, name);
  return 0;
}

/* One release for a learner audit: a fresh state from the options, rows
** 0 .. n-1 of `rows` (d values each) with their classes, finished with rng
** and encoded into *out (left empty when anything fails). Returns 1 when
** all of it succeeded. */
static int learner_release(const rdt_learner *l, const rdt_json *root, const rdt_schema *schema,
                           const rdt_learn_common *c, const double *rows, uint32_t d, const uint32_t *cls, int n,
                           rdt_rng *rng, rdt_bytes *out) {
  char err[256];
  memset(out, 0, sizeof *out);
  void *st = l->start(root, schema, c, err, sizeof err);
  if (!st) return 0;
  for (int r = 0; r < n; r++) l->row(st, rows + (size_t)r * d, cls[r], 0);
  int ok = l->finish(st, rng);
  if (ok) l->encode(st, out);
  l->free(st);
  return ok && !out->oom;
}

/* ---- mechanism: naive Bayes's "auto" bins (naive_bayes.c 3b, 3c) -----------
** One numeric feature, two classes, eps 1: the row count gets eps/8 and
** picks the bins as the divisor of 96 nearest sqrt(n^/2), so 12 rows give 2
** bins and 13 give 3 when the count is exact. Neighbours: 12 vs 13 rows.
** Released: the payload; events on its bins. The broken twin picks the bins
** from the exact row count (trained without noise, same rule), which the
** bins reveal. */
#define NB_BINS_EVENTS 3
static void audit_nb_auto_bins(int broken) {
  const char *opts = "{\"epsilon\": 1, \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", "
                     "\"min\": 0, \"max\": 1}]}";
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  const rdt_learner *l = rdt_learner_find("naive_bayes");
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "naive Bayes auto bins")) return;
  if (broken) c.is_private = 0;
  double rows[13];
  uint32_t cls[13];
  for (int r = 0; r < 13; r++) {
    rows[r] = (r + 0.5) / 13;
    cls[r] = (uint32_t)(r % 2);
  }
  long k[2][NB_BINS_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "nb-bins-broken" : "nb-bins", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      rdt_bytes b;
      ok = learner_release(l, root, &schema, &c, rows, 1, cls, 12 + side, &rng, &b);
      rdt_reader r = {b.p, b.n, 0, 0};
      uint32_t version = rdt_read_u32(&r), bins = rdt_read_u32(&r);
      ok = ok && !r.bad && version == 2;
      rdt_bytes_free(&b);
      k[side][0] += bins >= 3;
      k[side][1] += bins >= 4;
      k[side][2] += bins == 2;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "naive Bayes auto bins audit setup");
    return;
  }
  report(broken ? "naive Bayes auto bins picked from the exact row count (broken twin)"
                : "naive Bayes auto bins (the row count's share picks them), 12 vs 13 rows",
         k[0], k[1], NB_BINS_EVENTS, 1.0, !broken);
}

/* ---- mechanism: the constant learner (learners/constant.c) ----------------
** Neighbours: rows {0, 0, 1} and one more row of class 1. Released: the
** noisy class counts through the learner interface; events on class 1's
** count. The broken twin trains with twice the eps its model claims. */
#define CONSTANT_EVENTS 3
static void audit_constant(int broken) {
  const char *opts = "{\"epsilon\": 1, \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", "
                     "\"min\": 0, \"max\": 1}]}";
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  const rdt_learner *l = rdt_learner_find("constant");
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "constant")) return;
  if (broken) c.eps.num *= 2;
  long k[2][CONSTANT_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "constant-broken" : "constant", 0);
  double x[4] = {0.5, 0.5, 0.5, 0.5};
  uint32_t cls[4] = {0, 0, 1, 1};
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      rdt_bytes b;
      ok = learner_release(l, root, &schema, &c, x, 1, cls, 3 + side, &rng, &b);
      rdt_reader r = {b.p, b.n, 0, 0};
      (void)rdt_read_u64(&r);
      int64_t v = (int64_t)rdt_read_u64(&r); /* class 1's released count */
      ok = ok && !r.bad;
      rdt_bytes_free(&b);
      k[side][0] += v >= 2;
      k[side][1] += v >= 4;
      k[side][2] += v <= 0;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "constant audit setup");
    return;
  }
  report(broken ? "constant learner trained with twice the eps it claims (broken twin)"
                : "constant learner: noisy class counts, 3 vs 4 rows",
         k[0], k[1], CONSTANT_EVENTS, 1.0, !broken);
}

/* ---- mechanism: the constant learner's regression (learners/constant.c 2) --
** Target in [0, 1]; D = 3 rows at u = 1/2 (each adds 0 to the centred sum),
** D' = D plus one row at u = 1 (adds 2^15 grid units, the sensitivity, and 1
** to the count). Released: the payload {n^, S}; the centred sum
** C = S - 2^15 max(n^, 0) is post-processing of it. Events: joint ones on
** (n^, S), whose loss reaches the whole eps (and 1.5 eps if the rows were
** summed from min: caught, shown by mutating constant.c), and ones on C
** alone, which is released with eps/2 (reported against eps/2). The broken twin is the sum
** from min that contract 2 replaced: a row at u = 1 moved it by 2^16 while
** the noise assumed 2^15; it is emulated as D' = D plus two rows at u = 1
** (C moves by 2^16) and caught on C's events against eps/2. */
#define CONSTANT_REG_EVENTS 6 /* 0-2 joint, 3-5 on C alone */
static void audit_constant_regression(int broken) {
  const char *opts = "{\"epsilon\": 1, \"task\": \"regression\", \"target\": {\"min\": 0, \"max\": 1}, "
                     "\"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  const rdt_learner *l = rdt_learner_find("constant");
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "constant regression")) return;
  const int64_t half = (int64_t)1 << 15, added = broken ? 2 : 1;
  long k[2][CONSTANT_REG_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "constant-reg-broken" : "constant-reg", 0);
  double x = 0.5;
  int ok = 1;
  char err[256];
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      void *st = l->start(root, &schema, &c, err, sizeof err);
      if (!st) {
        ok = 0;
        break;
      }
      for (int r = 0; r < 3; r++) l->row(st, &x, 0, 0.5);
      for (int r = 0; side && r < added; r++) l->row(st, &x, 0, 1.0);
      rdt_bytes b;
      memset(&b, 0, sizeof b);
      ok = l->finish(st, &rng);
      if (ok) l->encode(st, &b);
      l->free(st);
      rdt_reader r = {b.p, b.n, 0, 0};
      int64_t n = (int64_t)rdt_read_u64(&r), sum = (int64_t)rdt_read_u64(&r);
      ok = ok && !b.oom && !r.bad;
      rdt_bytes_free(&b);
      int64_t cs = sum - (n > 0 ? n : 0) * half;
      k[side][0] += n >= 4 && sum >= 5 * half;
      k[side][1] += n <= 3 && sum <= 3 * half;
      k[side][2] += n >= 5 && sum >= 7 * half;
      k[side][3] += cs >= added * half;
      k[side][4] += cs <= 0;
      k[side][5] += cs >= 3 * half;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "constant regression audit setup");
    return;
  }
  if (broken) {
    report("constant regression whose sum is not centred (a row moves it by 2^16 grid units; broken twin)", k[0] + 3,
           k[1] + 3, 3, 0.5, 0);
    return;
  }
  report("constant regression: noisy count and centred sum, 3 vs 4 rows", k[0], k[1], 3, 1.0, 1);
  report("constant regression: the centred sum alone (eps/2), 3 vs 4 rows", k[0] + 3, k[1] + 3, 3, 0.5, 1);
}

/* ---- mechanism: the private_tree learner (learners/private_tree.c) --------
** Depth 1, 2 bins: two candidates (feature a or b at threshold 0), one
** selection at eps/2 (permute-and-flip, monotone, sensitivity 2M = 512) and
** 2 leaves x 2 classes of counts at eps/2. A side with class counts n scores
** M max n + floor(M |n|_2), M = 256. Neighbours: D = {(a0, b0, class 0),
** (a1, b1, class 1)} (utilities 1024 and 1024) and D' = D plus (a0, b1,
** class 0) (utilities 1536 and 1130: the gap moves by 406 of the 512 the
** sensitivity allows). Released: the split and the leaf counts, read from
** the payload. When the split is b the added row lands in the right leaf's
** class-0 count (0 on D, 1 on D'); the event "split b and that count <= 0"
** has a privacy loss of 406/512 eps/2 + eps/2 = 0.90 eps. The broken twin
** trains with twice the eps its model claims. */
#define PT_EVENTS 4
#define PT_HEADER 44 /* the payload's header (private_tree.c, contract 6) */
static void audit_private_tree(int broken) {
  const char *opts = "{\"algorithm\": \"private_tree\", \"epsilon\": 1, \"bins\": 2, \"depth\": 1, \"classes\": [0, 1], "
                     "\"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}, "
                     "{\"name\": \"b\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  const rdt_learner *l = &rdt_learner_private_tree;
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "private_tree")) return;
  double claimed = rdt_eps_to_double(c.eps);
  if (broken) c.eps.num *= 2;
  double rows[3][2] = {{0.2, 0.2}, {0.8, 0.8}, {0.2, 0.8}};
  uint32_t cls[3] = {0, 1, 0};
  long k[2][PT_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "ptree-broken" : "ptree", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      rdt_bytes b;
      ok = learner_release(l, root, &schema, &c, rows[0], 2, cls, 2 + side, &rng, &b);
      rdt_reader r = {b.p, b.n, PT_HEADER, 0};
      uint32_t f = rdt_read_u32(&r);
      (void)rdt_read_u32(&r);
      int64_t cnt[4];
      for (int j = 0; j < 4; j++) cnt[j] = (int64_t)rdt_read_u64(&r); /* left 0, 1; right 0, 1 */
      ok = ok && !r.bad && r.pos == b.n && f <= 1;
      rdt_bytes_free(&b);
      k[side][0] += f == 1;
      k[side][1] += f == 1 && cnt[2] <= 0;
      k[side][2] += f == 0 && cnt[0] >= 2;
      k[side][3] += f == 0;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "private_tree audit: training or release failed");
    return;
  }
  report(broken ? "private_tree trained with twice the eps it claims (broken twin)"
                : "private_tree (depth 1, 2 candidates): split selection and leaf counts, 2 vs 3 rows",
         k[0], k[1], PT_EVENTS, claimed, !broken);
}

/* ---- mechanism: private_tree's one split per level (private_tree.c, 3) ----
** Depth 2, 2 bins, features a and b: each level's one split (a or b at
** threshold 0) by permute-and-flip at eps/4 over the utilities summed over
** the level's nodes. Neighbours: D = {(a0, b0, class 0), (a1, b1, class 1)}
** (every utility of both levels ties, whatever the root) and D' = D plus
** (a0, b1, class 0): the root's gap moves by 406 (of 512) towards a, and
** after a root split on b the level below's too (in the node the row lands
** in; the other node adds the same to both candidates). Released: the two
** levels' splits, read from the payload; the four events (root, level 1)
** are functions of the splits alone, which the contract makes 2 eps/4 =
** eps/2-DP, so the audit holds them to that share (the leaves' eps/2 is
** audited above); "b then b" has a loss of 2 * 406/512 * eps/4 = 0.40 eps.
** The broken twin trains with twice the eps its model claims (a selection
** sensitivity stated at half its value does the same). */
#define PT_LEVEL_EVENTS 4
static void audit_private_tree_levels(int broken) {
  const char *opts = "{\"algorithm\": \"private_tree\", \"epsilon\": 1, \"bins\": 2, \"depth\": 2, \"classes\": [0, 1], "
                     "\"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}, "
                     "{\"name\": \"b\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  const rdt_learner *l = &rdt_learner_private_tree;
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "private_tree levels")) return;
  rdt_eps share = {c.eps.num / 4 * 2}; /* the two levels' selections (contract 3) */
  if (broken) c.eps.num *= 2;
  double rows[3][2] = {{0.2, 0.2}, {0.8, 0.8}, {0.2, 0.8}};
  uint32_t cls[3] = {0, 1, 0};
  long k[2][PT_LEVEL_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "ptree-levels-broken" : "ptree-levels", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      rdt_bytes b;
      ok = learner_release(l, root, &schema, &c, rows[0], 2, cls, 2 + side, &rng, &b);
      rdt_reader r = {b.p, b.n, PT_HEADER, 0};
      uint32_t f0 = rdt_read_u32(&r);
      (void)rdt_read_u32(&r);
      uint32_t f1 = rdt_read_u32(&r); /* node 1; node 2 carries the same split */
      ok = ok && !r.bad && f0 <= 1 && f1 <= 1;
      rdt_bytes_free(&b);
      k[side][2 * f0 + f1]++;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "private_tree levels audit: training or release failed");
    return;
  }
  report(broken ? "private_tree levels trained with twice the eps the model claims (broken twin)"
                : "private_tree (depth 2): the two levels' shared splits, 2 vs 3 rows",
         k[0], k[1], PT_LEVEL_EVENTS, rdt_eps_to_double(share), !broken);
}

/* ---- mechanism: private_tree in shard mode's rounds -----------------------
** (learners/private_tree.c contract 8, sql_shard.c contract 9) The levels
** audit's neighbours split over two sites: site A holds D = {(a0, b0, class
** 0), (a1, b1, class 1)}, site B nothing on D and the added row (a0, b1,
** class 0) on D'. Depth 2, 2 bins, eps 1: each level's selection at eps/4,
** the leaves at eps/2. Each round both sites open it with the last message,
** count their rows into their nodes' histograms and send them as partial
** BLOBs carrying the message (encoded, decoded, merged as rdt_merge does);
** the coordinator opens the round with the message the sum carries, adds
** the sum and releases it: round 0 level 0's split (in the message), round 1
** level 1's split and the leaves (the model). Released and read: both
** splits and leaf 3's class-0 count (the leaf the added row reaches under
** "b then b": 0 on D, 1 on D'). "b, b and that count <= 0" has a privacy
** loss of about 2 * 406/512 * eps/4 + eps/2 = 0.90 eps. The broken twin
** releases round 1 twice (a round finished again, which the ledger refuses)
** and its events read both releases jointly: level 1 and the leaves' eps
** spent twice, about 1.59 eps. */
#define PT_ROUND_EVENTS 4
static const char *PT_ROUND_OPTS =
    "{\"algorithm\": \"private_tree\", \"epsilon\": 1, \"bins\": 2, \"depth\": 2, \"classes\": [0, 1], "
    "\"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}, "
    "{\"name\": \"b\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

/* One round of learner L's protocol over two sites: site i holds n[i] rows
** of d values each (rows[i]) with classes cls[i]; the coordinator releases
** the merged sum. Returns round_release's step (0: a failure); the next
** payload in next, and after the last round the model's payload in model;
** the merged vector's total in *total when total is not NULL. */
static int sites_round(const rdt_learner *L, const rdt_learn_common *common, const rdt_json *opts,
                       const rdt_schema *schema, uint32_t r, const rdt_bytes *msg, uint32_t d,
                       const double *const *rows, const uint32_t *const *cls, const int *n, rdt_rng *rng,
                       rdt_bytes *next, rdt_bytes *model, int64_t *total) {
  char err[256];
  unsigned char plan[32], digest[32];
  memset(plan, 0x5a, sizeof plan);
  rdt_partial sum;
  memset(&sum, 0, sizeof sum);
  int ok = 1, step = 0;
  for (int i = 0; ok && i < 2; i++) {
    void *st = L->start(opts, schema, common, err, sizeof err);
    rdt_span sp[RDT_MAX_SPANS];
    uint32_t k = 0;
    ok = st && L->round_open(st, r, msg->p, msg->n, err, sizeof err);
    for (int j = 0; ok && j < n[i]; j++) L->row(st, rows[i] + (size_t)d * j, cls[i][j], 0);
    rdt_partial p, q;
    size_t size = 0;
    unsigned char *blob = NULL;
    ok = ok && (k = L->counters(st, sp, RDT_MAX_SPANS, digest)) && rdt_partial_from_spans(&p, plan, r, sp, k, msg->p, msg->n) &&
         (blob = rdt_partial_encode(&p, &size)) && rdt_partial_decode(blob, size, &q, err, sizeof err);
    if (k) rdt_partial_free(&p);
    free(blob);
    if (st) L->free(st);
    if (!ok) break;
    if (i == 0) sum = q;
    else {
      ok = rdt_partial_merge(&sum, &q, err, sizeof err);
      rdt_partial_free(&q);
    }
  }
  if (ok && total) {
    *total = 0;
    for (size_t i = 0; i < sum.n; i++) *total += sum.counters[i];
  }
  void *coord = ok ? L->start(opts, schema, common, err, sizeof err) : NULL;
  rdt_span sp[RDT_MAX_SPANS];
  uint32_t k = 0;
  ok = coord && L->round_open(coord, r, sum.message, sum.message_len, err, sizeof err) &&
       (k = L->counters(coord, sp, RDT_MAX_SPANS, digest)) && rdt_spans_count(sp, k) == sum.n &&
       rdt_spans_add(sp, k, sum.counters);
  if (ok) step = L->round_release(coord, rng, next);
  if (step == 2) L->encode(coord, model);
  rdt_partial_free(&sum);
  if (coord) L->free(coord);
  return ok && !(step == 2 && model->oom) ? step : 0;
}

/* Every round of L's protocol over the two sites, each opened with the last
** round's message, to the model (in model, which starts empty). Returns the
** rounds taken, 0 on a failure. */
static int sites_run(const rdt_learner *L, const rdt_learn_common *common, const rdt_json *opts,
                     const rdt_schema *schema, uint32_t d, const double *const *rows, const uint32_t *const *cls,
                     const int *n, rdt_rng *rng, rdt_bytes *model) {
  rdt_bytes msg = {0};
  memset(model, 0, sizeof *model);
  for (uint32_t r = 0; r < 64; r++) {
    rdt_bytes next = {0};
    int step = sites_round(L, common, opts, schema, r, &msg, d, rows, cls, n, rng, &next, model, NULL);
    rdt_bytes_free(&msg);
    msg = next;
    if (step != 1) {
      rdt_bytes_free(&msg);
      return step == 2 ? (int)r + 1 : 0;
    }
  }
  rdt_bytes_free(&msg);
  return 0;
}

/* The model's level-1 split feature and leaf 3's class-0 count (payload:
** the header, 3 internal nodes, 4 leaves x 2 classes). */
static int tree_read(const rdt_bytes *model, uint32_t *f1, int64_t *leaf3c0) {
  rdt_reader rd = {model->p, model->n, PT_HEADER + 8, 0};
  *f1 = rdt_read_u32(&rd);
  rd.pos = PT_HEADER + 3 * 8 + 6 * 8;
  *leaf3c0 = (int64_t)rdt_read_u64(&rd);
  return !rd.bad && *f1 <= 1;
}

static void audit_private_tree_rounds(int broken) {
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  const rdt_learner *L = &rdt_learner_private_tree;
  if (!parse_learner_for_audit(L, PT_ROUND_OPTS, &root, &schema, &c, "private_tree rounds")) return;
  const double site_a[4] = {0.2, 0.2, 0.8, 0.8}, site_b[2] = {0.2, 0.8};
  const uint32_t cls_a[2] = {0, 1}, cls_b[1] = {0};
  const double *rows[2] = {site_a, site_b};
  const uint32_t *cls[2] = {cls_a, cls_b};
  long k[2][PT_ROUND_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "ptree-rounds-broken" : "ptree-rounds", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES / 2 && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      const int n[2] = {2, side};
      rdt_bytes none = {0}, m1 = {0}, m2 = {0}, m3 = {0}, t1 = {0}, t2 = {0}, unused = {0};
      ok = sites_round(L, &c, root, &schema, 0, &none, 2, rows, cls, n, &rng, &m1, &unused, NULL) == 1 &&
           sites_round(L, &c, root, &schema, 1, &m1, 2, rows, cls, n, &rng, &m2, &t1, NULL) == 2 &&
           (!broken || sites_round(L, &c, root, &schema, 1, &m1, 2, rows, cls, n, &rng, &m3, &t2, NULL) == 2);
      uint32_t f0 = 2, f1 = 2, g1 = 2;
      int64_t c3 = 0, d3 = 0;
      if (ok) {
        rdt_reader rd = {m1.p, m1.n, 8, 0}; /* round 1's message: u32 round, u32 depth, level 0's split */
        f0 = rdt_read_u32(&rd);
        ok = !rd.bad && f0 <= 1 && tree_read(&t1, &f1, &c3) && (!broken || tree_read(&t2, &g1, &d3));
      }
      rdt_bytes_free(&m1);
      rdt_bytes_free(&m2);
      rdt_bytes_free(&m3);
      rdt_bytes_free(&t1);
      rdt_bytes_free(&t2);
      rdt_bytes_free(&unused);
      int bb = f0 == 1 && f1 == 1, low = c3 <= 0;
      if (broken) { /* the replayed round: both releases, jointly */
        bb &= g1 == 1;
        low &= d3 <= 0;
      }
      k[side][0] += bb && low;
      k[side][1] += bb;
      k[side][2] += low;
      k[side][3] += f0 == 0;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "private_tree rounds audit: a round failed");
    return;
  }
  report_runs(broken ? "private_tree rounds with the last round (level 1 and the leaves) released twice (no ledger; broken twin)"
                     : "private_tree in rounds over 2 sites (partials with the message, merged; depth 2: two rounds), 2 vs 3 rows",
              k[0], k[1], PT_ROUND_EVENTS, SAMPLES / 2, rdt_eps_to_double(c.eps), !broken);
}

/* ---- mechanism: naive Bayes "readout": "auto" in shard mode's rounds -------
** (naive_bayes.c contract 6d, sql_shard.c contract 9) One numeric feature of
** 2 fixed bins, eps 2.5: the tables get eps_tables = 19/20 eps (a cell's
** discrete Laplace of scale d / eps_tables, d = 1), the readout choice
** eps/20. Site A holds NBR_ROWS rows (a third of class 1 at x > 1/2, the
** rest of class 0 at x < 1/2: n^ about 340 opens the choice's gate, which
** needs n^ > ln 2 / (0.02 eps/20) = 277, so always two rounds); site B
** nothing on D, the added row (0.9, class 1) on D'. Each round end to end
** as above: round 0 both sites' tables, summed and released (its message:
** the released counters and moment scores); round 1 each site's two
** readouts' correct counts over its rows, summed, and the coordinator's
** permute-and-flip. Released and read: the model's cell (class 1, bin 1),
** which the added row moves by 1; its events have a privacy loss of
** eps_tables = 2.375 (the choice's eps/20 may add to it: eps in all). The
** broken twin holds the added row at both sites (a row counted twice,
** which no site can see): the cell moves by 2, a loss of 4.75. The moment
** fit of round 0's release (about 12 ms) bounds the runs. */
#define NBR_ROWS 340
#define NBR_RUNS 800
#define NBR_EVENTS 4
#define NBR_CELL (48 + 5 * 8) /* version 5's u32 + u64, contract 6's 36 bytes; counter 5 */
static void audit_nb_rounds(int broken) {
  static const char *opts_text =
      "{\"algorithm\": \"naive_bayes\", \"readout\": \"auto\", \"bins\": 2, \"epsilon\": 2.5, \"classes\": [0, 1], "
      "\"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  const rdt_learner *L = &rdt_learner_naive_bayes;
  rdt_json *root = NULL;
  rdt_schema schema;
  rdt_learn_common c;
  if (!parse_learner_for_audit(L, opts_text, &root, &schema, &c, "naive Bayes rounds")) return;
  static double site_a[NBR_ROWS + 1];
  static uint32_t cls_a[NBR_ROWS + 1];
  const double site_b[1] = {0.9};
  const uint32_t cls_b[1] = {1};
  int64_t base = 0; /* cell (class 1, bin 1) on D */
  for (int j = 0; j < NBR_ROWS; j++) {
    cls_a[j] = j % 3 == 0;
    site_a[j] = cls_a[j] ? 0.6 + 0.3 * j / NBR_ROWS : 0.1 + 0.3 * j / NBR_ROWS;
    base += cls_a[j];
  }
  site_a[NBR_ROWS] = site_b[0]; /* the twin's copy of the added row at site A */
  cls_a[NBR_ROWS] = cls_b[0];
  const double *rows[2] = {site_a, site_b};
  const uint32_t *cls[2] = {cls_a, cls_b};
  long k[2][NBR_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "nb-rounds-broken" : "nb-rounds", 0);
  int ok = 1;
  for (long i = 0; i < NBR_RUNS && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      const int n[2] = {NBR_ROWS + (broken && side), side};
      rdt_bytes m;
      ok = sites_run(L, &c, root, &schema, 1, rows, cls, n, &rng, &m) == 2 && m.n >= NBR_CELL + 8;
      if (ok) {
        rdt_reader rd = {m.p, m.n, NBR_CELL, 0};
        int64_t cell = (int64_t)rdt_read_u64(&rd);
        k[side][0] += cell >= base + 1;
        k[side][1] += cell >= base + 2;
        k[side][2] += cell <= base;
        k[side][3] += cell <= base - 1;
      }
      rdt_bytes_free(&m);
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "naive Bayes rounds audit: a round failed, or the choice's round did not run");
    return;
  }
  report_runs(broken ? "naive Bayes readout auto in rounds with the added row at both sites (a row counted twice; broken twin)"
                     : "naive Bayes readout auto in 2 rounds over 2 sites (the tables, then the readouts' correct counts), 340 vs 341 rows",
              k[0], k[1], NBR_EVENTS, NBR_RUNS, rdt_eps_to_double(c.eps), !broken);
}

/* ---- mechanism: auto in shard mode's rounds (learners/auto.c, steps 4a, 7) -
** (sql_shard.c contract 9) Classification, one numeric feature, the plan's
** structure key keying the validation coins. Every round end to end over two
** sites as above: the constant's round, the pick's own rounds, and the
** guard's round where it runs. Site A holds its rows, every one a training
** row by its coin (rows whose coin says validation are skipped): 3/4 of
** class 0 at x in [0.05, 0.35), the rest of class 1 at x in [0.6, 0.9); site
** B nothing on D, and on D' the added row, of class 1 at x >= 0.75 and a
** validation row by its coin (each coin read by running round 0 on the row
** alone: a training row adds 1 to the constant's counts). So the constant's
** release (and with it n^, the pick and whether the guard runs) is the same
** on D and D'.
** Guarded (eps 2, 1200 rows: n^ eps about 2400 >= 1900): the training side's
** releases are the same on D and D', and the guard's exact sum is 0 on D and,
** on D', the pick's correct prediction of the added row minus the constant's
** (majority class 0): 1 when the pick gets it right, nearly always. Released
** and read: the model's noisy gain (discrete Laplace of scale 1/eps around
** that sum). The broken twin holds the added row at both sites (a row counted
** twice, which no site can see; identical rows share a coin): the gain moves
** by 2, a loss of up to 2 eps.
** Unguarded (step 4a; eps 1, 400 rows, all of class 0: n^ eps about 400 <
** 1900): the slice's rows train the pick, so the added row reaches the pick's
** release (the matrix forest here, with eps_m). Released and read: the
** model's probability of class 1 at the added row's x, where no other row
** lies. The broken twin holds AURU_COPIES copies of
** the added row at each site (a row counted 2 x AURU_COPIES times): the leaf's
** class count moves by that many, beyond what eps allows. */
#define AUR_ROWS 1200
#define AURU_ROWS 400
#define AURU_COPIES 3
#define AUR_RUNS (SAMPLES / 40)
#define AUR_EVENTS 4
static const char *AUR_OPTS = "{\"algorithm\": \"auto\", \"epsilon\": 2, \"classes\": [0, 1], "
                              "\"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
static const char *AURU_OPTS = "{\"algorithm\": \"auto\", \"epsilon\": 1, \"classes\": [0, 1], "
                               "\"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";

/* Whether the row (x, cls) alone is a training row: round 0 at one site. */
static int aur_training(const rdt_learn_common *c, const rdt_json *root, const rdt_schema *schema, double x,
                        uint32_t cls, rdt_rng *rng, int *training) {
  const double *rows[2] = {&x, &x};
  const uint32_t *cl[2] = {&cls, &cls};
  const int n[2] = {1, 0};
  rdt_bytes none = {0}, next = {0}, model = {0};
  int64_t total = -1;
  int ok = sites_round(&rdt_learner_auto, c, root, schema, 0, &none, 1, rows, cl, n, rng, &next, &model, &total) == 1;
  rdt_bytes_free(&next);
  rdt_bytes_free(&model);
  *training = total == 1;
  return ok && (total == 0 || total == 1);
}

static void audit_auto_rounds(int guarded, int broken) {
  const rdt_learner *L = &rdt_learner_auto;
  rdt_json *root = NULL;
  rdt_schema schema;
  rdt_learn_common c;
  if (!parse_learner_for_audit(L, guarded ? AUR_OPTS : AURU_OPTS, &root, &schema, &c, "auto rounds")) return;
  c.keyed = 1;
  memset(c.structure_key, 0x5a, sizeof c.structure_key);
  const int rows_a = guarded ? AUR_ROWS : AURU_ROWS, copies = guarded ? 1 : AURU_COPIES;
  double site_a[AUR_ROWS + AURU_COPIES], site_b[AURU_COPIES];
  uint32_t cls_a[AUR_ROWS + AURU_COPIES], cls_b[AURU_COPIES];
  rdt_rng rng;
  seeded(&rng, guarded ? "auto-rounds-coins" : "auto-rounds-unguarded-coins", 0);
  int ok = 1, found = 0, training = 0;
  /* site A: training rows only; the added row: a validation row */
  for (int j = 0, t = 0; ok && j < rows_a; t++) {
    cls_a[j] = guarded && j % 4 == 3; /* unguarded: class 0 only, so the added row's cells hold no other row */
    double x = (cls_a[j] ? 0.6 : 0.05) + 0.3 * t / (1.25 * rows_a);
    ok = aur_training(&c, root, &schema, x, cls_a[j], &rng, &training);
    if (training) site_a[j++] = x;
  }
  for (int t = 0; ok && !found && t < 1000; t++) {
    site_b[0] = 0.75 + t * 1e-4;
    cls_b[0] = 1;
    ok = aur_training(&c, root, &schema, site_b[0], cls_b[0], &rng, &training);
    found = !training;
  }
  rdt_rng_clear(&rng);
  for (int i = 0; i < copies; i++) { /* the twin's copies of the added row (at both sites) */
    site_b[i] = site_a[rows_a + i] = site_b[0];
    cls_b[i] = cls_a[rows_a + i] = 1;
  }
  const double *rows[2] = {site_a, site_b};
  const uint32_t *cls[2] = {cls_a, cls_b};
  long k[2][AUR_EVENTS] = {{0}};
  seeded(&rng, guarded ? (broken ? "auto-rounds-broken" : "auto-rounds") : (broken ? "auto-rounds-u-broken" : "auto-rounds-u"), 0);
  ok = ok && found;
  for (long i = 0; i < AUR_RUNS && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      const int n[2] = {rows_a + (broken && side ? copies : 0), side ? (broken ? copies : 1) : 0};
      rdt_bytes m;
      int taken = sites_run(L, &c, root, &schema, 1, rows, cls, n, &rng, &m);
      ok = m.n >= 48;
      if (ok && guarded) { /* the constant's round, the pick's (one or more), the guard's */
        rdt_reader rd = {m.p, m.n, 24, 0}; /* chosen id, picked id, n^, s, then the gain */
        double gain = rdt_read_f64(&rd);
        ok = taken >= 3 && !rd.bad;
        k[side][0] += gain >= 1;
        k[side][1] += gain >= 2;
        k[side][2] += gain <= 0;
        k[side][3] += gain <= -1;
      } else if (ok) { /* no guard round; the model's probability of class 1 at the added row */
        rdt_reader rd = {m.p, m.n, 0, 0};
        void *st = L->decode(&rd, &schema, &c);
        double p[3] = {0};
        ok = taken >= 2 && st && !rd.bad && rd.pos == m.n && (rdt_read_u32(&(rdt_reader){m.p, m.n, 4, 0}) & 0x40000000u);
        if (st) {
          L->predict(st, site_b, p);
          L->free(st);
        }
        k[side][0] += p[1] >= 0.6;
        k[side][1] += p[1] >= 0.8;
        k[side][2] += p[1] <= 0.4;
        k[side][3] += p[1] <= 0.2;
      }
      rdt_bytes_free(&m);
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, guarded ? "auto rounds audit: a round failed, or no row had the coin it needs"
                     : "auto unguarded rounds audit: a round failed, the guard ran, or no row had the coin it needs");
    return;
  }
  if (guarded)
    report_runs(broken ? "auto in rounds with the added validation row at both sites (a row counted twice; broken twin)"
                       : "auto in rounds over 2 sites (the constant, the pick's rounds, the guard), 1200 training rows vs one validation row more",
                k[0], k[1], AUR_EVENTS, AUR_RUNS, rdt_eps_to_double(c.eps), !broken);
  else
    report_runs(broken ? "auto without a guard in rounds, the added validation row 6 times (broken twin)"
                       : "auto without a guard in rounds (step 4a: the slice trains the pick), 400 training rows vs one validation row more",
                k[0], k[1], AUR_EVENTS, AUR_RUNS, rdt_eps_to_double(c.eps), !broken);
}

/* ---- mechanism: the matrix_forest learner (learners/matrix_forest.c) ------
** The learner end to end (options, structure, release through matrix.c,
** prediction): 2 trees over one categorical feature of 2 values, seeded
** structure, fresh noise per run. Neighbours: D = {(0, class 0), (1, class
** 1), (0, class 0)} and D' = D plus (1, class 1). Released: the model; events
** on its probability of class 1 at a = 1, fixed in advance. The broken twin
** trains with twice the eps its model claims. */
#define MF_EVENTS 4
static void audit_matrix_forest(int broken) {
  const char *opts = "{\"algorithm\": \"matrix_forest\", \"epsilon\": 1, \"trees\": 2, \"seed\": 7, \"classes\": [0, 1], "
                     "\"features\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [0, 1]}]}";
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  char err[256];
  const rdt_learner *l = &rdt_learner_matrix_forest;
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "matrix_forest")) return;
  double claimed = rdt_eps_to_double(c.eps);
  if (broken) c.eps.num *= 2;
  double rows[4] = {0, 1, 0, 1}, at[1] = {1}, p[2];
  uint32_t cls[4] = {0, 1, 0, 1};
  long k[2][MF_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "mforest-broken" : "mforest", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      void *st = l->start(root, &schema, &c, err, sizeof err);
      ok = st != NULL;
      if (!ok) break;
      for (int r = 0; r < 3 + side; r++) l->row(st, &rows[r], cls[r], 0);
      ok = l->finish(st, &rng);
      if (ok) l->predict(st, at, p);
      l->free(st);
      k[side][0] += p[1] >= 0.6;
      k[side][1] += p[1] >= 0.8;
      k[side][2] += p[1] <= 0.4;
      k[side][3] += p[1] <= 0.2;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "matrix_forest audit: training or release failed");
    return;
  }
  report(broken ? "matrix_forest trained with twice the eps it claims (broken twin)"
                : "matrix_forest learner (2 trees, 1 feature): its probability of class 1, 3 vs 4 rows",
         k[0], k[1], MF_EVENTS, claimed, !broken);
}

/* ---- mechanism: private_tree's "auto" depth (private_tree.c, 3b) ---------
** One numeric feature, 2 bins, 2 classes, eps 1: the count gets eps/20 and
** D = floor(log2(n^ / 12)) (at least 1), so D >= 2 exactly when n^ >= 48.
** Neighbours: 47 and 48 rows (all of class 0 at a = 0.2). Released: the
** used depth, read from the payload; the event "D >= 2" moves by at most
** the count's eps/20 (the rest of the model is released too, but only this
** event is counted: the bound is checked against the whole claimed eps).
** The broken twin draws the count with 10^4 times the eps the model records:
** the depth is then nearly the exact count's, and the event's loss far
** above eps. */
static void audit_private_tree_depth(int broken) {
  const char *opts = "{\"algorithm\": \"private_tree\", \"epsilon\": 1, \"bins\": 2, \"classes\": [0, 1], "
                     "\"features\": [{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  char err[256];
  const rdt_learner *l = &rdt_learner_private_tree;
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "private_tree depth")) return;
  double claimed = rdt_eps_to_double(c.eps);
  rdt_eps loud = {c.eps.num / 20 * 10000};
  double x[1] = {0.2};
  long k[2][2] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "ptree-depth-broken" : "ptree-depth", 0);
  int ok = 1;
  for (long i = 0; i < SAMPLES && ok; i++) {
    for (int side = 0; side < 2 && ok; side++) {
      void *st = l->start(root, &schema, &c, err, sizeof err);
      ok = st != NULL;
      if (!ok) break;
      for (int r = 0; r < 47 + side; r++) l->row(st, x, 0, 0);
      ok = broken ? rdt_private_tree_finish_count_eps(st, &rng, loud) : l->finish(st, &rng);
      rdt_bytes b = {0};
      if (ok) l->encode(st, &b);
      rdt_reader r = {b.p, b.n, 12, 0};
      uint32_t used = rdt_read_u32(&r);
      ok = ok && !b.oom && !r.bad && used >= 1 && used <= 8;
      rdt_bytes_free(&b);
      l->free(st);
      k[side][0] += used >= 2;
      k[side][1] += used < 2;
    }
  }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "private_tree depth audit: training or release failed");
    return;
  }
  report(broken ? "private_tree auto depth from a count 10^4 times less noisy than claimed (broken twin)"
                : "private_tree auto depth: the used depth, 47 vs 48 rows",
         k[0], k[1], 2, claimed, !broken);
}

/* ---- the privacy unit: contribution bounding + group privacy (unit.h) ---
** Neighbours differ by one whole unit: D has units A (2 rows) and B (5 rows),
** D' adds unit V (6 rows: 3 at x = 0.9, 3 at x = 0.1, all class 1). Rows pass
** through the unit bound (k = 3: a random 3 of B's and of V's rows are kept,
** fresh coins every run) into an RDT forest of 1 tree whose options claim
** eps 1 for the unit, so the forest runs with eps 1/3 per row. Released: the
** leaf counters; events on the class-1 counters of the leaves of 0.9 and
** 0.1. V moves their sum by exactly 3: the loss is 1, tight. Broken twins:
** no cap (V's 6 rows all counted: loss 2), and the cap without dividing eps
** (noise for eps 1 per row: loss 3). */
static const char *UNIT_OPTS =
    "{\"epsilon\": 1, \"trees\": 1, \"depth\": 1, \"seed\": 5, \"privacy_unit\": \"u\", \"max_rows_per_unit\": 3,"
    " \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
#define UNIT_EVENTS 6

static void audit_unit(int broken) { /* 0: as built; 1: no cap; 2: eps not divided by the cap */
  rdt_forest f;
  if (!forest_from_options(UNIT_OPTS, &f)) {
    check(0, "privacy unit audit setup");
    rdt_forest_free(&f);
    return;
  }
  double claimed = rdt_eps_to_double(f.config.unit.eps_total);
  if (broken == 2) f.config.eps = f.config.unit.eps_total;
  uint64_t k = broken == 1 ? 1000 : f.config.unit.max_rows;
  static const double ux[3][6] = {{0.1, 0.9}, {0.1, 0.9, 0.9, 0.1, 0.5}, {0.9, 0.9, 0.9, 0.1, 0.1, 0.1}};
  static const uint32_t uc[3][6] = {{0, 1}, {1, 0, 1, 1, 0}, {1, 1, 1, 1, 1, 1}};
  static const uint64_t un[3] = {2, 5, 6};
  double hi = 0.9, lo = 0.1;
  uint32_t C = f.schema.n_classes, l9 = rdt_forest_leaf(&f, 0, &hi), l1 = rdt_forest_leaf(&f, 0, &lo);
  size_t nc = (size_t)f.n_leaves * C;
  long ev[2][UNIT_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken == 1 ? "unit-nocap" : broken == 2 ? "unit-undivided" : "unit", 0);
  for (long i = 0; i < SAMPLES; i++) {
    for (int side = 0; side < 2; side++) {
      memset(f.counts, 0, nc * sizeof *f.counts);
      unsigned char key[RDT_RNG_KEYBYTES];
      rdt_rng_bytes(&rng, key, sizeof key);
      rdt_unit_bound b;
      rdt_unit_bound_init(&b, k, key, "audit");
      for (int u = 0; u < 2 + side; u++)
        for (uint64_t r = 0; r < un[u]; r++)
          if (rdt_unit_bound_row(&b, r + 1, un[u]) == 1) rdt_forest_train_row(&f, &ux[u][r], uc[u][r]);
      rdt_unit_bound_clear(&b);
      rdt_forest_add_noise(&f, &rng);
      int64_t a = f.counts[(size_t)l9 * C + 1], c = f.counts[(size_t)l1 * C + 1];
      int64_t s = l9 == l1 ? a : a + c;
      long *e = ev[side];
      e[0] += s >= 4;
      e[1] += s >= 6;
      e[2] += s >= 8;
      e[3] += s <= 2;
      e[4] += a >= 4;
      e[5] += s >= 10;
    }
  }
  rdt_rng_clear(&rng);
  report(broken == 1   ? "privacy unit without the cap (a unit's 6 rows all counted): broken twin"
         : broken == 2 ? "privacy unit capped but eps not divided by the cap: broken twin"
                       : "privacy unit (k = 3): 7 rows in 2 units vs a third unit of 6 rows, RDT at eps/k per row",
         ev[0], ev[1], UNIT_EVENTS, claimed, !broken);
  rdt_forest_free(&f);
}

/* ---- mechanism: shard mode (sql_shard.c, partial.h) ----------------------
** The RDT forest of mechanism 2 trained at two sites: site A holds {0.1 c0,
** 0.5 c0}, site B {0.8 c1} on D and {0.8 c1, 0.9 c1} on D' (the neighbour
** adds one row, at site B). Each site's counters go through the partial
** BLOB (encode, decode), the coordinator sums them (rdt_partial_merge) and
** adds the forest's noise once. Released: the counters and the prediction
** at 0.9, the events of mechanism 2. The broken twin is the failure the
** contract warns about: site B's rows in two partials (two rdt_partial calls,
** two ids, so the sum cannot tell), i.e. a row counted twice: the added
** row moves two counters per tree and the noise is set for one. */
static int shard_sum(rdt_forest *site[], int n, const unsigned char plan[32], int64_t *out, size_t nc) {
  rdt_partial sum, p, q;
  char err[200];
  int ok = 1, started = 0;
  memset(&sum, 0, sizeof sum);
  for (int i = 0; ok && i < n; i++) {
    rdt_span sp[RDT_MAX_SPANS];
    uint32_t k = rdt_forest_state(site[i], sp, RDT_MAX_SPANS);
    size_t size = 0;
    unsigned char *blob = NULL;
    ok = k && rdt_partial_from_spans(&p, plan, 0, sp, k, NULL, 0) && (blob = rdt_partial_encode(&p, &size)) &&
         rdt_partial_decode(blob, size, &q, err, sizeof err); /* what crosses the wire */
    rdt_partial_free(&p);
    free(blob);
    if (!ok) break;
    if (!started) {
      sum = q;
      started = 1;
    } else {
      ok = rdt_partial_merge(&sum, &q, err, sizeof err);
      rdt_partial_free(&q);
    }
  }
  ok = ok && sum.n == nc;
  if (ok) memcpy(out, sum.counters, nc * sizeof *out);
  rdt_partial_free(&sum);
  return ok;
}

static void audit_shard(int broken) {
  rdt_forest base, a, b, b2;
  int built = forest_from_options(FOREST_OPTS, &base) & forest_from_options(FOREST_OPTS, &a) &
              forest_from_options(FOREST_OPTS, &b) & forest_from_options(FOREST_OPTS, &b2);
  size_t nc = built ? (size_t)base.config.trees * base.n_leaves * base.schema.n_classes : 0;
  int64_t *sums[2] = {built ? malloc(nc * sizeof(int64_t)) : NULL, built ? malloc(nc * sizeof(int64_t)) : NULL};
  unsigned char plan[32];
  memset(plan, 0x5a, sizeof plan);
  int ok = built && sums[0] && sums[1];
  if (ok) {
    double ra[2] = {0.1, 0.5}, rb[2] = {0.8, 0.9};
    uint32_t ca[2] = {0, 0}, cb[2] = {1, 1};
    rdt_forest_train_batch(&a, ra, ca, 2);
    rdt_forest_train_batch(&b, rb, cb, 1);  /* D: site B holds 0.8 */
    rdt_forest_train_batch(&b2, rb, cb, 2); /* D': and 0.9 */
    rdt_forest *d0[3] = {&a, &b, &b}, *d1[3] = {&a, &b2, &b2};
    ok = shard_sum(d0, broken ? 3 : 2, plan, sums[0], nc) && shard_sum(d1, broken ? 3 : 2, plan, sums[1], nc);
  }
  long k[2][FOREST_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "shard-broken" : "shard", 0);
  for (long i = 0; ok && i < SAMPLES; i++)
    for (int side = 0; side < 2; side++) {
      memcpy(base.counts, sums[side], nc * sizeof *base.counts);
      ok = rdt_forest_add_noise(&base, &rng) && rdt_forest_prepare(&base);
      forest_events(&base, k[side]);
    }
  rdt_rng_clear(&rng);
  if (ok)
    report(broken ? "shard mode with site B's rows in two partials (a row counted twice; broken twin)"
                  : "shard mode: RDT forest (2 trees) summed from 2 sites' partials, 3 vs 4 rows",
           k[0], k[1], FOREST_EVENTS, rdt_eps_to_double(base.config.eps), !broken);
  else
    check(0, "shard audit setup");
  free(sums[0]);
  free(sums[1]);
  rdt_forest_free(&base);
  rdt_forest_free(&a);
  rdt_forest_free(&b);
  rdt_forest_free(&b2);
}

/* ---- federated mode (share.h, mask.h) --------------------------------------
** The constant learner (two classes, eps 1) at 2 sites: site A holds {c0, c1}
** on D and {c0, c1, c1} on D' (one row added at A), site B {c1}. Each site
** builds its share as rdt_share does: its counters (counters()), the whole
** noise of the release (noise(): discrete Laplace 1/eps per class count)
** and its pairwise mask; a coordinator sums the shares modulo 2^64 and
** releases them with finish_noised(). FEDERATED_RUNS runs per side (each
** share costs an X25519 product). */
#define FEDERATED_RUNS (SAMPLES / 5)
#define FEDERATED_EVENTS 3

/* One site's share of the constant learner over n rows of cls. */
static int federated_share(const rdt_learner *l, const rdt_json *root, const rdt_schema *schema,
                           const rdt_learn_common *c, const uint32_t *cls, int n, int noise_div, rdt_rng *rng,
                           const unsigned char *roster, uint32_t me, const unsigned char *sk,
                           const unsigned char ctx[32], uint64_t out[2]) {
  char err[128];
  double x = 0.5;
  void *st = l->start(root, schema, c, err, sizeof err);
  if (!st) return 0;
  for (int r = 0; r < n; r++) l->row(st, &x, cls[r], 0);
  rdt_span sp[RDT_MAX_SPANS];
  rdt_noise_block b[RDT_MAX_SPANS];
  unsigned char d[32];
  int64_t v[2];
  int ok = l->counters(st, sp, RDT_MAX_SPANS, d) == 1 && sp[0].n == 2 && l->noise(st, b, RDT_MAX_SPANS) == 1;
  if (ok) {
    rdt_spans_read(sp, 1, v);
    b[0].s *= (uint64_t)noise_div; /* the broken twin: a share of the scale instead of the whole noise */
    ok = rdt_share_make(out, v, 2, b, 1, rng, roster, 2, me, sk, ctx, 0);
  }
  l->free(st);
  return ok;
}

/* Mechanism: the released sum. Its noise is two whole draws, so it is at
** least as private as the claim; the broken twin has each site add the
** noise at half the scale, hoping the two halves make one: they do not (the
** sum of two discrete Laplace of scale b/2 has pure-DP loss 2/b). */
static void audit_federated_sum(int broken) {
  const char *opts = "{\"algorithm\": \"constant\", \"epsilon\": 1, \"classes\": [0, 1], \"features\": "
                     "[{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  const rdt_learner *l = rdt_learner_find("constant");
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "federated sum")) return;
  unsigned char roster[64], sk[2][32], ctx[32];
  rdt_mask_keypair(roster, sk[0]);
  rdt_mask_keypair(roster + 32, sk[1]);
  memset(ctx, 1, sizeof ctx);
  uint32_t a_rows[3] = {0, 1, 1}, b_rows[1] = {1};
  long k[2][FEDERATED_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "federated-sum-broken" : "federated-sum", 0);
  int ok = 1;
  for (long i = 0; ok && i < FEDERATED_RUNS; i++)
    for (int side = 0; side < 2 && ok; side++) {
      uint64_t sa[2], sb[2];
      ok = federated_share(l, root, &schema, &c, a_rows, 2 + side, broken ? 2 : 1, &rng, roster, 0, sk[0], ctx, sa) &&
           federated_share(l, root, &schema, &c, b_rows, 1, broken ? 2 : 1, &rng, roster, 1, sk[1], ctx, sb);
      char err[64];
      void *st = ok ? l->start(root, &schema, &c, err, sizeof err) : NULL;
      rdt_span sp[RDT_MAX_SPANS];
      unsigned char d[32];
      int64_t sum[2] = {(int64_t)(sa[0] + sb[0]), (int64_t)(sa[1] + sb[1])}; /* the masks cancel mod 2^64 */
      rdt_bytes out = {0};
      ok = st && l->counters(st, sp, RDT_MAX_SPANS, d) == 1 && rdt_spans_add(sp, 1, sum) && l->finish_noised(st, &rng);
      if (ok) l->encode(st, &out);
      rdt_reader r = {out.p, out.n, 0, 0};
      (void)rdt_read_u64(&r);
      int64_t v = (int64_t)rdt_read_u64(&r); /* class 1's released count: 2 on D, 3 on D' before noise */
      ok = ok && !r.bad;
      k[side][0] += v >= 3;
      k[side][1] += v >= 5;
      k[side][2] += v <= 1;
      rdt_bytes_free(&out);
      if (st) l->free(st);
    }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "federated sum audit setup");
    return;
  }
  report_runs(broken ? "federated: each site's noise at half the scale, two halves for one (broken twin)"
                     : "federated: constant learner, 2 sites' masked noisy shares summed, 3 vs 4 rows",
              k[0], k[1], FEDERATED_EVENTS, FEDERATED_RUNS, 1.0, !broken);
}

/* Mechanism: what the coordinator sees of one site alone, its masked share
** (fresh masks per plan: a fresh context each run). Claimed: nothing, a
** privacy loss of at most 0.05 (the share is uniform without the other
** site's key). The broken twin sends the share unmasked: its noise makes it
** 1-DP, which is not nothing. Events on class 1's value as an int64. */
static void audit_federated_masked(int broken) {
  const char *opts = "{\"algorithm\": \"constant\", \"epsilon\": 1, \"classes\": [0, 1], \"features\": "
                     "[{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  const rdt_learner *l = rdt_learner_find("constant");
  rdt_schema schema;
  rdt_learn_common c;
  rdt_json *root = NULL;
  if (!parse_learner_for_audit(l, opts, &root, &schema, &c, "federated masked share")) return;
  unsigned char roster[64], sk[2][32], ctx[32];
  rdt_mask_keypair(roster, sk[0]);
  rdt_mask_keypair(roster + 32, sk[1]);
  uint32_t a_rows[3] = {0, 1, 1};
  long k[2][FEDERATED_EVENTS] = {{0}};
  rdt_rng rng;
  seeded(&rng, broken ? "federated-masked-broken" : "federated-masked", 0);
  int ok = 1;
  for (long i = 0; ok && i < FEDERATED_RUNS; i++)
    for (int side = 0; side < 2 && ok; side++) {
      uint64_t sa[2];
      rdt_rng_bytes(&rng, ctx, sizeof ctx); /* a fresh plan */
      ok = federated_share(l, root, &schema, &c, a_rows, 1 + side, 1, &rng, roster, 0, sk[0], ctx, sa);
      if (broken) { /* the twin: the mask taken off again, as if never added */
        uint64_t mask[2] = {0, 0};
        ok = ok && rdt_mask_apply(mask, 2, roster, 2, 0, sk[0], ctx, 0);
        sa[0] -= mask[0];
        sa[1] -= mask[1];
      }
      int64_t v = (int64_t)sa[1];
      k[side][0] += v >= 1;
      k[side][1] += v >= 3;
      k[side][2] += v <= 0;
    }
  rdt_rng_clear(&rng);
  rdt_json_free(root);
  rdt_schema_free(&schema);
  if (!ok) {
    check(0, "federated masked share audit setup");
    return;
  }
  report_runs(broken ? "federated: one site's share sent unmasked (broken twin)"
                     : "federated: one site's masked share alone (fresh masks), 1 vs 2 rows: the coordinator learns nothing",
              k[0], k[1], FEDERATED_EVENTS, FEDERATED_RUNS, 0.05, !broken);
}

int main(void) {
  if (sodium_init() < 0) return 1;
  /* The bound itself: a fair test of Clopper-Pearson on known numbers. */
  check(fabs(cp_upper(0, 100000, 0.5e-6) - 1.45e-4) < 1e-5 && cp_lower(50000, 100000, 1e-3) > 0.494,
        "Clopper-Pearson bounds on known counts");
  audit_counter(1.0, 0);
  audit_counter(0.25, 0);
  audit_counter(1.0, 1);
  audit_forest(0);
  audit_forest(1);
  audit_real(0);
  audit_real(1);
  audit_selection(0);
  audit_selection(1);
  audit_median(0);
  audit_median(1);
  audit_diprime(0);
  audit_diprime(1);
  audit_diprime_sampled(0);
  audit_diprime_sampled(1);
  audit_matrix(0);
  audit_matrix(1);
  audit_matrix_forest(0);
  audit_matrix_forest(1);
  audit_sharp(0);
  audit_sharp(1);
  audit_keep_trees(0);
  audit_keep_trees(1);
  audit_batch(0);
  audit_batch(1);
  audit_batch_seeded(0);
  audit_batch_seeded(1);
  audit_naive_bayes(0);
  audit_naive_bayes(1);
  audit_nb_auto_bins(0);
  audit_nb_auto_bins(1);
  audit_auto_guard(0);
  audit_auto_guard(1);
  audit_auto_guard_regression(0);
  audit_auto_guard_regression(1);
  audit_nb_readout_choice(0);
  audit_nb_readout_choice(1);
  audit_constant(0);
  audit_constant(1);
  audit_constant_regression(0);
  audit_constant_regression(1);
  audit_diprime_regression(0);
  audit_diprime_regression(1);
  audit_boost(0);
  audit_boost(1);
  audit_boost_rounds(0);
  audit_boost_rounds(1);
  audit_boost_regression(0);
  audit_boost_regression(1);
  audit_private_tree(0);
  audit_private_tree(1);
  audit_private_tree_levels(0);
  audit_private_tree_levels(1);
  audit_private_tree_rounds(0);
  audit_private_tree_rounds(1);
  audit_nb_rounds(0);
  audit_nb_rounds(1);
  audit_auto_rounds(1, 0);
  audit_auto_rounds(1, 1);
  audit_auto_rounds(0, 0);
  audit_auto_rounds(0, 1);
  audit_private_tree_depth(0);
  audit_private_tree_depth(1);
  audit_unit(0);
  audit_unit(1);
  audit_unit(2);
  audit_shard(0);
  audit_shard(1);
  audit_federated_sum(0);
  audit_federated_sum(1);
  audit_federated_masked(0);
  audit_federated_masked(1);
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail != 0;
}
