/*
** diprime.h - DiPriMe forests (Differentially Private Median forests,
** classification and regression), with the accounting done right.
**
** Privacy contract:
**   1. Neighbouring relation: add or remove one row (of the input; the trees
**      grow on a sample of it, item 6).
**   2. Each tree gets eps_tree = eps / 2 (item 6) (partition: true, every
**      row reaches one tree chosen uniformly at random, independently of its
**      values: parallel composition) or eps / (2 trees) (partition: false,
**      every tree sees every row: sequential composition). Items 2-5 make the growing of the
**      trees on a given set of rows (eps/2)-DP under add/remove one row.
**   3. Splits get rho * eps_tree, divided equally over the `depth` levels
**      (nodes of one level hold disjoint rows: parallel composition; levels
**      compose sequentially). At a node, K = min(candidates, features) DP
**      medians / balanced subsets and one selection query run on the same
**      rows: they compose sequentially, so each gets eps_q =
**      rho * eps_tree / (depth * (K + 1)).
**        - numeric candidate: dp median (median.h) of the node's rows within
**          the interval its ancestors leave, on a 1024-cell public grid;
**        - categorical candidate: permute-and-flip over 8 random subsets that
**          separate the reachable codes, utility -|N_left - N_right|,
**          sensitivity 1;
**        - selection: permute-and-flip over the candidates with utility
**          -(count-weighted Gini) (sensitivity 2) for classification or
**          -(SSE_left + SSE_right) (sensitivity R^2, R = target range,
**          monotone) for regression, scaled to integers with 2 units of slack.
**   4. Leaves get (1 - rho) * eps_tree: classification counts (sensitivity 1)
**      with discrete Laplace 1/eps_leaf; regression releases a noisy count
**      (eps_leaf / 2, sensitivity 1) and a noisy sum of targets clamped to
**      [min, max], centred on the range's middle and integerised on the
**      public grid R / 2^16 (a row adds round(2^16 u) - 2^15, u in [0, 1]:
**      eps_leaf / 2, sensitivity 2^15 grid units). After the noise each
**      leaf's sum gets 2^15 max(n^, 0) added, n^ its released count, so it
**      reads as a sum from min (forest.c). The mean is post-processing: no
**      sensitivity ever depends on a private count.
**   5. Every query runs whatever the data (an empty node still draws its
**      median and selection), so the control flow does not depend on rows.
**      The result's distribution depends on the rows as a multiset: their
**      order only says which independent uniform tree each row draws (and,
**      for regression, how the floating-point sums of the selection's
**      utility round before they are scaled to integers; classification
**      utilities are exact integers).
**   6. The trees grow on a uniform sample of at most max_rows rows
**      (row_sample.h, bottom-k of random priorities, its own random stream).
**      Coupling: the rows two neighbouring inputs share get the same
**      priorities; then the two samples differ by at most one added and one
**      removed row (row_sample.h item 3), i.e. they are at distance <= 2
**      (the order of the sampled rows in the buffer is arbitrary: item 5).
**      Group privacy of size 2 turns the (eps/2)-DP of items 2-5 into eps-DP
**      for every coupled pair, hence for the inputs: P[M(S(D)) in O] =
**      E[P[M(S(D)) in O | priorities]] <= e^eps E[P[M(S(D')) in O | same
**      priorities]]. The halving applies always, also when no row was
**      dropped: whether sampling happened depends on the private row count.
**   Total: 2 * eps_tree * (partition ? 1 : trees), eps_tree = rho part + leaf
**   part, each sub-budget rounded down to the 2^-32 grid; the model records
**   the sub-budgets the samplers used (eps_query, eps_leaf) and as eps twice
**   their sum over the queries: what is charged, <= the request.
**
** Why this differs from the paper: its median (rank chosen ignoring interval
** lengths) is not eps-DP (median.h); its per-node split budget eps*rho/(2 d)
** is spent K + 1 times on the same rows, and its regression leaves add noise
** of scale R / (N_i * eps) whose sensitivity depends on the private count N_i.
*/
#ifndef RDT_DIPRIME_H
#define RDT_DIPRIME_H

#include <stdint.h>

#include "forest.h"
#include "../rng.h"

#define RDT_DIPRIME_MEDIAN_CELLS 1024
#define RDT_DIPRIME_SUBSETS 8

/* Fill f->config.eps_query, eps_leaf (from half the requested
** f->config.eps, item 6) and eps (the total charged: twice what the queries
** spend). Returns 0 if a share rounds to 0. */
int rdt_diprime_budget(rdt_config *c, uint32_t n_features);

/* Grow and release a DiPriMe forest (f from rdt_forest_init with algorithm
** diprime: nodes empty, counters zero) on n buffered rows: xs row-major
** (n * n_features, already cleaned), cls (classification) or y (regression,
** raw targets: clamped here). `rng` drives every choice and every noise draw.
** Returns 0 on allocation failure or when a noise parameter does not fit;
** then f's counters are wiped and nothing may be released (fail closed). */
int rdt_diprime_train(rdt_forest *f, const double *xs, const uint32_t *cls, const double *y, uint64_t n,
                      rdt_rng *rng);

#endif
