/*
** tree_selection.h - keep the best trees of a released forest ("keep_trees").
**
** Privacy contract:
**   1. Input: leaf counters that are already released (noisy for a private
**      model, exact for a non-private one). Nothing else about the rows is
**      read.
**   2. The score of a tree, its leave-one-out accuracy on those counters, and
**      the choice of the best trees are functions of the released counters
**      only: post-processing, so no epsilon is spent and the model's
**      neighbouring relation and epsilon are unchanged.
**
** Why: the trees of a random forest are drawn blind to the data, so many of
** them split on attributes that do not matter. Their released counters say
** which ones do: a tree whose leaves are pure classifies its own rows well.
** Leave-one-out accuracy instead of plain training accuracy, so that a tree
** is not rewarded for leaves too small to generalise.
**
** Score of a tree (classification only): with every counter clamped at 0,
**   sum over leaves l and classes c with n_lc > 0 of
**     n_lc * [c is the top class of leaf l once one row of class c is removed]
**   divided by the sum of the clamped counters (0 for an empty tree). "Top"
**   breaks ties towards the lower class index, as prediction does.
** Kept: the max(1, round(fraction * trees)) trees of highest score, ties to
** the lower tree index.
*/
#ifndef RDT_TREE_SELECTION_H
#define RDT_TREE_SELECTION_H

#include <stdint.h>

#include "forest.h"

/* Trees kept for a fraction in (0, 1] of `trees`. */
uint32_t rdt_keep_count(uint32_t trees, double fraction);
/* Counter slots of tree t in a forest's counters: returns their number and
** sets *first to the first one. */
uint64_t rdt_forest_tree_slots(const rdt_forest *f, uint32_t t, uint64_t *first);
/* Leave-one-out accuracy of one tree's slots (n_slots x n_classes counters). */
double rdt_tree_loo_accuracy(const int64_t *counts, uint64_t n_slots, uint32_t n_classes);
/* kept[t] = 1 for the `keep` best trees of f under `counts` (a counter
** array laid out as f->counts), 0 for the others. Returns 0 on allocation
** failure. */
int rdt_select_trees(const rdt_forest *f, const int64_t *counts, uint32_t keep, uint8_t *kept);
/* Apply f->config.keep_trees to f->counts: set f->tree_kept and f->n_kept
** (all trees: tree_kept stays NULL). Returns 0 on allocation failure. */
int rdt_forest_select_trees(rdt_forest *f);

#endif
