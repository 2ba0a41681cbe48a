/*
** moment_fit.c - additive softmax scores fitted to released class x bin
** tables by matching moments on a synthetic population: post-processing.
**
** Contract:
**   1. Input: released counters only (noisy class counts and class x bin
**      tables, naive Bayes's layout, moment_fit.h) and a random stream. The
**      output is a function of them: post-processing, no privacy cost.
**   2. Model: p(k | x) = softmax_k(w[k] + sum_f w_f[k][bin_f(x)]), the
**      multinomial logistic model on one-hot bins. Its log-likelihood
**      reaches the rows through the class x bin tables (its sufficient
**      statistics: released) and through the rows' joint feature
**      distribution (not released). The fit puts in that distribution's
**      place Q, the product of each feature's released marginal (its table
**      summed over the classes, clamped at 0), and maximises
**        sum_i counts_i w_i - n^ E_Q[log sum_k exp z_k(x)] - ridge/2 |cells|^2
**      (n^: the clamped class counts' sum, at least 1; the biases carry no
**      penalty). With independent features (designed experiments) this is
**      the logistic fit itself, free of naive Bayes's double counting of
**      features that interact in the class; with dependent features naive
**      Bayes may do better, so a caller with held-out rows chooses (auto.c).
**   2b. Q's marginals are the noisy tables' column sums, whose noise (C
**      cells, variance C v for a cell's v) biases the fit as much as the
**      cells' own noise does. Given v > 0, the first n_shrunk[f] bins of
**      every feature (the caller's choice: a categorical feature's `other`
**      bin, empty by design, stays out) are shrunk toward their feature's
**      mean by one pooled positive-part James-Stein factor, min(1, (m - 2)
**      C v / S), S the squared deviations from the means and m the degrees
**      of freedom (sum of n_shrunk[f] - 1; none below 3): the estimate of
**      the marginals of least risk, near the uniform ones when their
**      differences are mostly noise and unchanged when they stand out.
**      Bins outside it keep the clamped sum of their cells; without noise
**      every bin does (the sums are exact).
**   2c. The cells the fit matches are shrunk too, toward independence of
**      class and bin. For each feature with noise (v > 0) and a C x R block
**      of (C - 1)(R - 1) >= 3 degrees of freedom (R = n_shrunk[f] bins, as
**      in 2b), e[k][b] = r_k c_b / t (its noisy class sums, bin sums and
**      total; none when t <= 0) is the block's fit under independence and
**      every cell moves to e + (1 - a_f)(cell - e), a_f = min(1, ((C - 1)
**      (R - 1) - 2) v / S_f), S_f the squared residuals: the positive-part
**      James-Stein estimate of the class x bin association, whose noise
**      is (C - 1)(R - 1) v in expectation. A feature whose association is
**      mostly noise is drawn to carry none; a strong one is kept (a_f near
**      0). The block's class sums and bin sums are unchanged, so the class
**      counts and Q's marginals are those of 2b. Cells outside the block (a
**      categorical `other` bin) and fits without noise are matched as
**      released.
**   3. A cell whose bin has no mass under Q keeps score 0: no evidence, so a
**      value there moves no class (rather than a score driven by noise).
**   4. E_Q is a mean over S synthetic rows drawn from Q with `rng` (S =
**      rdt_moment_samples(C, d, n^): RDT_MOMENT_MAX_SAMPLES, fewer for wide
**      schemas so that S (d + 1) C <= 2^22, and at most 8 n^, never below
**      1024). Why 8 n^: the fit matches each cell's count to n^ times a
**      mean over S draws, whose Monte Carlo variance, n^^2 q / S for a cell
**      of probability q, is then at most 1/8 of the count's own sampling
**      variance, n^ q: more draws cannot make the fit much more accurate
**      than the rows are, and a table of a hundred rows fits in
**      milliseconds.
**      The objective is concave; Adam (step 0.1) runs RDT_MOMENT_ITERATIONS
**      iterations from cell scores 0 and biases at the log class
**      frequencies. Work and memory (four arrays of the counters' size, S d
**      bin indices) follow C, d, the bins and the released n^ only.
**   5. It returns 0, leaving w untouched, when memory fails, when there are
**      more than RDT_MOMENT_MAX_COUNTERS counters, or when a score is not
**      finite.
*/
#include "moment_fit.h"

#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

uint32_t rdt_moment_samples(uint32_t C, uint32_t d, double n_hat) {
  double s = (double)(1u << 22) / (((double)d + 1) * (C ? C : 1));
  if (s > RDT_MOMENT_MAX_SAMPLES) s = RDT_MOMENT_MAX_SAMPLES;
  if (s > RDT_MOMENT_SAMPLES_PER_ROW * n_hat) s = RDT_MOMENT_SAMPLES_PER_ROW * n_hat;
  if (s < 1024) s = 1024;
  return (uint32_t)s;
}

static double clamped(int64_t c) { return c > 0 ? (double)c : 0; }

/* Contract 4: S rows from the product of the clamped marginals; each value
** is the index of its class-0 cell (offset[f] + bin). Marks in `live` the
** cells (every class) of bins with mass. Returns 0 when memory fails. */
/* A bin's column sum over the classes (unclamped: unbiased under noise). */
static double column_sum(uint32_t C, const int64_t *counts, size_t at, uint32_t B) {
  double m = 0;
  for (uint32_t k = 0; k < C; k++) m += (double)counts[at + (size_t)k * B];
  return m;
}

/* Contract 2b: the pooled shrinkage factor (0: none). */
double rdt_moment_shrink(uint32_t C, uint32_t d, const uint32_t *n_bins, const size_t *offset, const int64_t *counts,
                              const uint32_t *n_shrunk, double cell_var) {
  if (!n_shrunk || !(cell_var > 0)) return 0;
  double dev = 0, dof = 0;
  for (uint32_t f = 0; f < d; f++) {
    uint32_t R = n_shrunk[f] < n_bins[f] ? n_shrunk[f] : n_bins[f];
    if (R < 2) continue;
    double mean = 0;
    for (uint32_t b = 0; b < R; b++) mean += column_sum(C, counts, offset[f] + b, n_bins[f]);
    mean /= R;
    for (uint32_t b = 0; b < R; b++) {
      double e = column_sum(C, counts, offset[f] + b, n_bins[f]) - mean;
      dev += e * e;
    }
    dof += R - 1;
  }
  if (dof < 3 || !(dev > 0)) return 0;
  double k = (dof - 2) * C * cell_var / dev;
  return k < 1 ? k : 1;
}

/* Contract 2c: feature f's factor a_f in [0, 1] (0: no shrinkage). */
/* Contract 2c's block of feature f: its first R bins (as in 2b), its total,
** and a cell's fit under independence of class and bin. */
static uint32_t block_bins(const uint32_t *n_bins, const uint32_t *n_shrunk, uint32_t f) {
  return n_shrunk[f] < n_bins[f] ? n_shrunk[f] : n_bins[f];
}

static double class_sum(const int64_t *blk, uint32_t B, uint32_t R, uint32_t k) {
  double r = 0;
  for (uint32_t b = 0; b < R; b++) r += (double)blk[(size_t)k * B + b];
  return r;
}

static double block_total(uint32_t C, const int64_t *blk, uint32_t B, uint32_t R) {
  double t = 0;
  for (uint32_t k = 0; k < C; k++) t += class_sum(blk, B, R, k);
  return t;
}

/* A cell's fit under independence, r_k c_b / t (r: its class's sum). */
static double independence_fit(uint32_t C, const int64_t *counts, size_t at, uint32_t B, uint32_t b, double r,
                               double t) {
  return r * column_sum(C, counts, at + b, B) / t;
}

/* Contract 2c: feature f's factor a_f in [0, 1] (0: no shrinkage). */
double rdt_moment_association_shrink(uint32_t C, const uint32_t *n_bins, const size_t *offset, const int64_t *counts,
                                     const uint32_t *n_shrunk, double cell_var, uint32_t f) {
  if (!n_shrunk || !(cell_var > 0) || C < 2) return 0;
  uint32_t B = n_bins[f], R = block_bins(n_bins, n_shrunk, f);
  double dof = (double)(C - 1) * (R ? R - 1 : 0);
  if (dof < 3) return 0;
  const int64_t *blk = counts + offset[f];
  double t = block_total(C, blk, B, R), dev = 0;
  if (!(t > 0)) return 0;
  for (uint32_t k = 0; k < C; k++) {
    double r = class_sum(blk, B, R, k);
    for (uint32_t b = 0; b < R; b++) {
      double x = (double)blk[(size_t)k * B + b] - independence_fit(C, counts, offset[f], B, b, r, t);
      dev += x * x;
    }
  }
  if (!(dev > 0)) return 0; /* the cells are their independence fit already */
  double a = (dof - 2) * cell_var / dev;
  return a < 1 ? a : 1;
}

/* Contract 2c: the cells the fit matches (class counts and cells outside
** the blocks as released). */
static void association_targets(uint32_t C, uint32_t d, const uint32_t *n_bins, const size_t *offset,
                                const int64_t *counts, const uint32_t *n_shrunk, double cell_var, double *target) {
  for (size_t i = 0; i < offset[d]; i++) target[i] = (double)counts[i];
  for (uint32_t f = 0; f < d; f++) {
    double a = rdt_moment_association_shrink(C, n_bins, offset, counts, n_shrunk, cell_var, f);
    if (!(a > 0)) continue; /* also: no block, or a total <= 0 */
    uint32_t B = n_bins[f], R = block_bins(n_bins, n_shrunk, f);
    double t = block_total(C, counts + offset[f], B, R);
    for (uint32_t k = 0; k < C; k++) {
      double *cell = target + offset[f] + (size_t)k * B, r = class_sum(counts + offset[f], B, R, k);
      for (uint32_t b = 0; b < R; b++) {
        double e = independence_fit(C, counts, offset[f], B, b, r, t);
        cell[b] = e + (1 - a) * (cell[b] - e);
      }
    }
  }
}

static int draw_population(uint32_t C, uint32_t d, const uint32_t *n_bins, const size_t *offset, const int64_t *counts,
                           const uint32_t *n_shrunk, double shrink, uint32_t S, rdt_rng *rng, uint32_t *xs,
                           unsigned char *live) {
  for (uint32_t f = 0; f < d; f++) {
    uint32_t B = n_bins[f];
    uint32_t R = shrink > 0 && n_shrunk ? (n_shrunk[f] < B ? n_shrunk[f] : B) : 0;
    double *cum = malloc((B ? B : 1) * sizeof *cum);
    if (!cum) return 0;
    double total = 0, mean = 0;
    for (uint32_t b = 0; b < R; b++) mean += cum[b] = column_sum(C, counts, offset[f] + b, B); /* cum: scratch */
    if (R) mean /= R;
    for (uint32_t b = 0; b < B; b++) {
      double m = 0;
      if (b < R) { /* contract 2b */
        m = mean + (1 - shrink) * (cum[b] - mean);
        if (!(m > 0)) m = 0;
      } else {
        for (uint32_t k = 0; k < C; k++) m += clamped(counts[offset[f] + (size_t)k * B + b]);
      }
      if (m > 0)
        for (uint32_t k = 0; k < C; k++) live[offset[f] + (size_t)k * B + b] = 1;
      total += m;
      cum[b] = total;
    }
    for (uint32_t s = 0; s < S; s++) {
      uint32_t b;
      if (total > 0) { /* the first bin whose cumulative mass exceeds u */
        double u = rdt_rng_unit(rng) * total;
        uint32_t lo = 0, hi = B - 1;
        while (lo < hi) {
          uint32_t mid = lo + (hi - lo) / 2;
          if (cum[mid] > u) hi = mid;
          else lo = mid + 1;
        }
        b = lo;
      } else { /* no mass anywhere: uniform */
        b = (uint32_t)rdt_rng_below(rng, B);
      }
      xs[(size_t)s * d + f] = (uint32_t)offset[f] + b;
    }
    free(cum);
  }
  return 1;
}

int rdt_moment_fit(uint32_t C, uint32_t d, const uint32_t *n_bins, const size_t *offset, const int64_t *counts,
                   const uint32_t *n_shrunk, double cell_var, double ridge, rdt_rng *rng, double *w) {
  size_t n = offset[d];
  if (C == 0 || n > RDT_MOMENT_MAX_COUNTERS) return 0;
  double nh = 0;
  for (uint32_t k = 0; k < C; k++) nh += clamped(counts[k]);
  uint32_t S = rdt_moment_samples(C, d, nh);
  uint32_t *xs = malloc((size_t)S * (d ? d : 1) * sizeof *xs);
  double *v = calloc(n, sizeof *v), *m1 = calloc(n, sizeof *m1), *m2 = calloc(n, sizeof *m2);
  double *e = calloc(n, sizeof *e), *z = malloc(C * sizeof *z), *target = malloc(n * sizeof *target);
  unsigned char *live = calloc(n, 1);
  int ok = xs && v && m1 && m2 && e && z && target && live &&
           draw_population(C, d, n_bins, offset, counts, n_shrunk,
                           rdt_moment_shrink(C, d, n_bins, offset, counts, n_shrunk, cell_var), S, rng, xs, live);
  if (ok) {
    association_targets(C, d, n_bins, offset, counts, n_shrunk, cell_var, target);
    for (uint32_t k = 0; k < C; k++) {
      v[k] = log((clamped(counts[k]) + 1) / (nh + C));
      live[k] = 1;
    }
    if (nh < 1) nh = 1;
    double scale = nh / S, b1 = 1, b2 = 1;
    for (uint32_t it = 0; it < RDT_MOMENT_ITERATIONS; it++) {
      memset(e, 0, n * sizeof *e);
      for (uint32_t s = 0; s < S; s++) {
        const uint32_t *x = xs + (size_t)s * d;
        double top = -INFINITY, sum = 0;
        for (uint32_t k = 0; k < C; k++) {
          double t = v[k];
          for (uint32_t f = 0; f < d; f++) t += v[x[f] + (size_t)k * n_bins[f]];
          z[k] = t;
          if (t > top) top = t;
        }
        for (uint32_t k = 0; k < C; k++) sum += (z[k] = exp(z[k] - top));
        for (uint32_t k = 0; k < C; k++) {
          double p = z[k] / sum;
          e[k] += p;
          for (uint32_t f = 0; f < d; f++) e[x[f] + (size_t)k * n_bins[f]] += p;
        }
      }
      b1 *= 0.9;
      b2 *= 0.999;
      for (size_t i = 0; i < n; i++) {
        if (!live[i]) continue; /* contract 3 */
        double g = target[i] - scale * e[i] - (i >= C ? ridge * v[i] : 0);
        m1[i] = 0.9 * m1[i] + 0.1 * g;
        m2[i] = 0.999 * m2[i] + 0.001 * g * g;
        v[i] += 0.1 * (m1[i] / (1 - b1)) / (sqrt(m2[i] / (1 - b2)) + 1e-8);
      }
    }
    for (size_t i = 0; i < n && ok; i++) ok = isfinite(v[i]);
    if (ok) memcpy(w, v, n * sizeof *w);
  }
  if (xs) sodium_memzero(xs, (size_t)S * (d ? d : 1) * sizeof *xs);
  free(xs);
  free(v);
  free(m1);
  free(m2);
  free(e);
  free(z);
  free(target);
  free(live);
  return ok;
}
