/* boost.h - cyclic additive boosting on public per-feature histograms
** (learners/boost.c). */
#ifndef RDT_LEARNER_BOOST_H
#define RDT_LEARNER_BOOST_H

#include "../learner.h"

extern const rdt_learner rdt_learner_boost;

/* For the privacy audit (tests/audit.c) and unit tests only: finish() with
** the per-bin L1 sensitivity (in grid units) replaced by `sensitivity`
** (0: the true one, rdt_boost_sensitivity, or for regression the one at the
** released clip), copying the released noisy integers into trace[0 ..
** trace_len) in release order: the intercept's counters (regression: count,
** sum, the 13 spread bands), then for every round and feature, bin by bin,
** the bin's count (in grid units) and its gradient (residual) sums (two
** classes: class 1's sum only, Contract 3b).
** finish() is this with 0, NULL, 0. */
int rdt_boost_finish_traced(void *st, rdt_rng *noise, uint64_t sensitivity, int64_t *trace, size_t trace_len);
/* For the audit only: round_release() (boost.c, Contract 6) copying the
** round's released noisy integers into trace[0 .. trace_len), in the order
** rdt_boost_finish_traced records them. round_release() is this with NULL, 0. */
int rdt_boost_round_release_traced(void *st, rdt_rng *noise, int64_t *trace, size_t trace_len, rdt_bytes *next);
/* The true per-bin L1 sensitivity in grid units: classification with K > 2
** classes 2*2^12 + K + 2^9 (boost.c, Contract 3), two classes 2^12 + 2^9
** (Contract 3b); regression (0) its largest,
** at the clip 2^12: 2^12 + 2^10 (the actual one follows the released clip,
** rdt_boost_regression_sensitivity below). */
uint64_t rdt_boost_sensitivity(uint32_t n_classes);
/* Regression (boost.c, Contract 3): the residual clip in grid units from the
** intercept's released row count and the 13 released spread bands (rows whose
** |target - mean| lies between edges 2^(-(k+1)/2) and 2^(-k/2), the last band
** below 2^-6), sd: one band's noise sd (0 non-private); and the per-bin L1
** sensitivity at that clip (clip + clip / 4, the count weight). */
uint32_t rdt_boost_clip_units(double n_hat, const int64_t *bands, double sd);
uint64_t rdt_boost_regression_sensitivity(uint32_t clip);
/* The components of a grid: gradient units per 1.0, count units per row. */
#define RDT_BOOST_GRID 4096
#define RDT_BOOST_COUNT_WEIGHT 512

/* Contract 4, regression: the smoothing weight w in {0, 1/4, 1/2, 1} of one
** numeric feature's released (count, sum) pairs nz[2 b], nz[2 b + 1] (nb
** bins), the one of least Stein unbiased risk for sums of noise variance vs;
** 0 without noise or below 3 bins. Post-processing; exposed for tests. */
double rdt_boost_smooth_width(const double *nz, uint32_t nb, double vs);

#endif
