/*
** batch.h - DP batch prediction: a curator holds a NON-private model (exact
** leaf counters, "epsilon": null) and answers one batch of queries under
** epsilon (Tajima, Wu and Houmansadr, AAAI 2025, DP batch prediction).
**
** Privacy contract of one batch answer:
**   1. Neighbouring relation: add or remove one TRAINING row of the model.
**      The queries are the analyst's and public to this mechanism; the
**      strategy may depend on them but never on the training rows.
**   2. What is released: for every query its weight vote, the per-class sum
**      of its leaves' counters over the trees, noised by one of:
**      QUERY     discrete Laplace on every vote, sensitivity n*k for n
**                queries and k trees (n with "partition": a row is in one
**                tree), scale sensitivity/eps (subsample-and-aggregate);
**      LEAF      discrete Laplace on every leaf counter once, sensitivity k
**                (1 with partition), then votes are sums of noisy leaves;
**      IDENTITY  discrete Laplace of scale 1/eps on every cell counter of the
**                model's exact table over the used attributes (sensitivity
**                1; matrix forests trained without partition only), then
**                leaves and votes are sums of noisy cells.
**      Each is eps-DP; labels (argmax of the noisy votes) are
**      post-processing. One call spends eps once.
**   4. "keep_trees" (LEAF and IDENTITY only): the votes sum only the best
**      trees, scored on the noisy leaf counters (tree_selection.h):
**      post-processing of item 2's release, no further eps.
**   3. Expected variance of one vote counter, in units of 2/eps^2:
**      QUERY n^2 k^2 (n^2); LEAF k^3 (k); IDENTITY the mean over queries of
**      sum over tree pairs (t, t') of |leaf_t(q) intersect leaf_t'(q)| in
**      cells. The smallest is chosen unless one is asked for.
*/
#ifndef RDT_BATCH_H
#define RDT_BATCH_H

#include <stdint.h>

#include "forest.h"

typedef enum {
  RDT_BATCH_AUTO = 0,
  RDT_BATCH_QUERY = 1,
  RDT_BATCH_LEAF = 2,
  RDT_BATCH_IDENTITY = 3
} rdt_batch_strategy;
#define RDT_BATCH_N_STRATEGIES 3
#define RDT_BATCH_MAX_QUERIES 10000000

const char *rdt_batch_strategy_name(uint32_t s);

/* Expected variance factor of each strategy for the n queries xs (n x
** n_features, cleaned); INFINITY when a strategy is not available.
** Returns 0 on allocation failure. */
int rdt_batch_plan(const rdt_forest *f, const double *xs, uint32_t n, double factor[RDT_BATCH_N_STRATEGIES]);
/* Noisy weight votes (n x n_classes) under `strategy` spending eps, over
** the best keep_trees share of the trees (1: all; not with QUERY).
** Returns 0 on allocation failure or parameter overflow. */
int rdt_batch_answer(const rdt_forest *f, const double *xs, uint32_t n, uint32_t strategy, rdt_eps eps,
                     double keep_trees, rdt_rng *noise, int64_t *votes);

#endif
