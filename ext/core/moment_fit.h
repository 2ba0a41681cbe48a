/* moment_fit.h - additive softmax scores fitted to released (noisy) class x
** bin tables: post-processing shared by learners (naive Bayes's "moments"
** readout). Contract in moment_fit.c. No SQLite. */
#ifndef RDT_MOMENT_FIT_H
#define RDT_MOMENT_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/* Most counters a fit takes: its three working arrays of doubles stay
** under 3 x 8 MiB. */
#define RDT_MOMENT_MAX_COUNTERS ((size_t)1 << 20)
/* Iterations of the fit and the largest synthetic sample (public). */
#define RDT_MOMENT_ITERATIONS 200u
#define RDT_MOMENT_MAX_SAMPLES 8192u
/* Synthetic rows per released row, at most (contract 4: Monte Carlo
** variance at most 1/8 of the rows' own sampling variance). */
#define RDT_MOMENT_SAMPLES_PER_ROW 8.0

/* The layout naive Bayes uses: counts[0 .. C) are class counts, and feature
** f's table starts at offset[f] with C rows of n_bins[f] cells (class k's
** row at offset[f] + k n_bins[f]); offset[d] is the number of counters.
** Fits w (same layout: w[k] a class's bias, the table cells a class's score
** for a bin) so that z_k(x) = w[k] + sum_f w[offset[f] + k n_bins[f] +
** bin_f(x)] goes through a softmax. ridge: the L2 penalty on the cell
** scores (not the biases), in counts. n_shrunk, cell_var: contract 2b (the
** bins per feature whose marginals are shrunk, and a cell's noise variance;
** NULL or 0: none). rng: the synthetic sample's randomness. Returns 1, or 0 (w untouched) when out of memory, when the
** counters exceed RDT_MOMENT_MAX_COUNTERS or when the fit is not finite. */
int rdt_moment_fit(uint32_t C, uint32_t d, const uint32_t *n_bins, const size_t *offset, const int64_t *counts,
                   const uint32_t *n_shrunk, double cell_var, double ridge, rdt_rng *rng, double *w);

/* Contract 2b's pooled James-Stein factor in [0, 1] by which the first
** n_shrunk[f] bins' column sums move toward their feature's mean (0: none,
** also without noise or below 3 degrees of freedom). Exposed for tests. */
double rdt_moment_shrink(uint32_t C, uint32_t d, const uint32_t *n_bins, const size_t *offset, const int64_t *counts,
                         const uint32_t *n_shrunk, double cell_var);

/* Contract 2c's James-Stein factor for feature f's class x bin association
** (0: none: no noise, under 3 degrees of freedom, or no positive total).
** Exposed for tests. */
double rdt_moment_association_shrink(uint32_t C, const uint32_t *n_bins, const size_t *offset, const int64_t *counts,
                                     const uint32_t *n_shrunk, double cell_var, uint32_t f);

/* The synthetic sample size for C classes, d features and n_hat rows (the
** released class counts' clamped sum): contract 4. */
uint32_t rdt_moment_samples(uint32_t C, uint32_t d, double n_hat);

#endif
