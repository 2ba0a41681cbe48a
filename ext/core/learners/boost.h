/* boost.h - cyclic additive boosting on public per-feature histograms
** (learners/boost.c). */
#ifndef RDT_LEARNER_BOOST_H
#define RDT_LEARNER_BOOST_H

#include "../learner.h"

extern const rdt_learner rdt_learner_boost;

/* For the privacy audit (tests/audit.c) and unit tests only: finish() with
** the per-bin L1 sensitivity (in grid units) replaced by `sensitivity`
** (0: the true one, rdt_boost_sensitivity), copying the released noisy
** integers into trace[0 .. trace_len) in release order: the intercept's
** counters, then for every round and feature, bin by bin, the bin's count
** (in grid units) and its gradient sums. finish() is this with 0, NULL, 0. */
int rdt_boost_finish_traced(void *st, rdt_rng *noise, uint64_t sensitivity, int64_t *trace, size_t trace_len);
/* The true per-bin L1 sensitivity in grid units: classification with K
** classes 2*2^12 + K + 2^9, regression 2^12 + 2^9 (boost.c, Contract 2). */
uint64_t rdt_boost_sensitivity(uint32_t n_classes);
/* The components of a grid: gradient units per 1.0, count units per row. */
#define RDT_BOOST_GRID 4096
#define RDT_BOOST_COUNT_WEIGHT 512

#endif
