/* tree_selection.c - keep the best trees of a released forest; see tree_selection.h. */
#include "tree_selection.h"

#include <math.h>
#include <stdlib.h>

#include "matrix.h"
#include "sharp.h"

uint32_t rdt_keep_count(uint32_t trees, double fraction) {
  double k = floor(fraction * trees + 0.5);
  if (k < 1) return 1;
  if (k > trees) return trees;
  return (uint32_t)k;
}

uint64_t rdt_forest_tree_slots(const rdt_forest *f, uint32_t t, uint64_t *first) {
  if (f->sharp) {
    const uint32_t *ls = f->matrix->leaf_start, *ss = f->sharp->slot_start;
    *first = ss[ls[t]];
    return (uint64_t)ss[ls[t + 1]] - ss[ls[t]];
  }
  if (f->matrix) {
    *first = f->matrix->leaf_start[t];
    return (uint64_t)f->matrix->leaf_start[t + 1] - f->matrix->leaf_start[t];
  }
  *first = (uint64_t)t * f->n_leaves;
  return f->n_leaves;
}

double rdt_tree_loo_accuracy(const int64_t *counts, uint64_t n_slots, uint32_t C) {
  double right = 0, total = 0;
  for (uint64_t l = 0; l < n_slots; l++) {
    const int64_t *n = counts + l * C;
    /* The two largest clamped counters (b1 >= b2) and the top class, which
    ** is the lowest index holding b1. */
    int64_t b1 = -1, b2 = -1;
    uint32_t top = 0;
    for (uint32_t c = 0; c < C; c++) {
      int64_t v = n[c] > 0 ? n[c] : 0;
      total += (double)v;
      if (v > b1) { b2 = b1; b1 = v; top = c; }
      else if (v > b2) b2 = v;
    }
    if (b1 <= 0) continue;
    /* Removing one row of class c: only the top class can still win, and it
    ** does when its count minus one beats every other class, or equals the
    ** best of them while no lower index holds that value. */
    int64_t left = b1 - 1;
    if (left > b2) { right += (double)b1; continue; }
    if (left < b2) continue;
    int lower_tie = 0;
    for (uint32_t c = 0; c < top; c++) if ((n[c] > 0 ? n[c] : 0) == b2) lower_tie = 1;
    if (!lower_tie) right += (double)b1;
  }
  return total > 0 ? right / total : 0;
}

typedef struct {
  double score;
  uint32_t tree;
} scored_tree;

static int by_score(const void *a, const void *b) {
  const scored_tree *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return x->tree < y->tree ? -1 : x->tree > y->tree;
}

int rdt_select_trees(const rdt_forest *f, const int64_t *counts, uint32_t keep, uint8_t *kept) {
  uint32_t k = f->config.trees, C = f->schema.n_classes;
  scored_tree *s = malloc((size_t)k * sizeof *s);
  if (!s) return 0;
  for (uint32_t t = 0; t < k; t++) {
    uint64_t first, n = rdt_forest_tree_slots(f, t, &first);
    s[t].score = rdt_tree_loo_accuracy(counts + first * C, n, C);
    s[t].tree = t;
  }
  qsort(s, k, sizeof *s, by_score);
  for (uint32_t t = 0; t < k; t++) kept[t] = 0;
  for (uint32_t i = 0; i < keep && i < k; i++) kept[s[i].tree] = 1;
  free(s);
  return 1;
}

int rdt_forest_select_trees(rdt_forest *f) {
  double fraction = f->config.keep_trees;
  free(f->tree_kept);
  f->tree_kept = NULL;
  f->n_kept = f->config.trees;
  if (!(fraction > 0 && fraction < 1) || f->config.task != RDT_TASK_CLASSIFICATION) return 1;
  uint32_t keep = rdt_keep_count(f->config.trees, fraction);
  uint8_t *kept = malloc(f->config.trees);
  if (!kept || !rdt_select_trees(f, f->counts, keep, kept)) {
    free(kept);
    return 0;
  }
  f->tree_kept = kept;
  f->n_kept = keep;
  return 1;
}
