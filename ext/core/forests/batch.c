/* batch.c - DP batch prediction; see batch.h for the privacy contract. */
#include "batch.h"

#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "tree_selection.h"

const char *rdt_batch_strategy_name(uint32_t s) {
  switch (s) {
    case RDT_BATCH_QUERY: return "query";
    case RDT_BATCH_LEAF: return "leaf";
    case RDT_BATCH_IDENTITY: return "identity";
    default: return "auto";
  }
}

/* Leaf (forest-wide index) of tree t for the row xs (bins: its matrix bins). */
static uint64_t global_leaf(const rdt_forest *f, uint32_t t, const double *xs, const uint32_t *bins) {
  if (f->matrix) return rdt_matrix_leaf(f, t, bins);
  return (uint64_t)t * f->n_leaves + rdt_forest_leaf(f, t, xs);
}

/* The exact table's attributes fixed on the path of tree t for these bins,
** as a bit mask over positions in the table (at most 64 attributes). */
static uint64_t path_mask(const rdt_forest *f, uint32_t t, const uint32_t *bins, const uint8_t *pos) {
  const rdt_matrix *m = f->matrix;
  const rdt_mnode *nodes = m->nodes + m->node_start[t];
  uint64_t mask = 0;
  uint32_t i = 0;
  while (nodes[i].feature != RDT_MNODE_LEAF) {
    mask |= (uint64_t)1 << pos[nodes[i].feature];
    i = nodes[i].next + bins[nodes[i].feature];
  }
  return mask;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Mean over the queries of sum_{t,t'} |leaf_t(q) & leaf_t'(q)| (cells):
** two leaves containing q intersect in the cells that agree with q on the
** union of their paths' attributes. Trees are grouped by path mask. */
static int identity_factor(const rdt_forest *f, const double *xs, uint32_t n, double *out) {
  const rdt_matrix *m = f->matrix;
  uint32_t k = f->config.trees, nf = f->schema.n_features;
  const rdt_mtable *tb = &m->exact;
  if (tb->n_attrs > 64) return 0;
  uint8_t *pos = calloc(nf, 1);
  uint64_t *masks = malloc(k * sizeof *masks);
  double *mult = malloc(k * sizeof *mult);
  uint32_t *bins = malloc(nf * sizeof *bins);
  int ok = pos && masks && mult && bins;
  double total = 0;
  for (uint32_t i = 0; ok && i < tb->n_attrs; i++) pos[tb->attrs[i]] = (uint8_t)i;
  for (uint32_t q = 0; ok && q < n; q++) {
    rdt_matrix_row_bins(f, xs + (size_t)q * nf, bins);
    for (uint32_t t = 0; t < k; t++) masks[t] = path_mask(f, t, bins, pos);
    qsort(masks, k, sizeof *masks, cmp_u64);
    uint32_t u = 0;
    for (uint32_t t = 0; t < k; t++) {
      if (u && masks[u - 1] == masks[t]) { mult[u - 1] += 1; continue; }
      masks[u] = masks[t];
      mult[u++] = 1;
    }
    double sum = 0;
    for (uint32_t a = 0; a < u; a++)
      for (uint32_t b = 0; b < u; b++) {
        double cells = 1; /* cells of the table not fixed by either path */
        uint64_t fixed = masks[a] | masks[b];
        for (uint32_t i = 0; i < tb->n_attrs; i++)
          if (!(fixed >> i & 1)) cells *= m->domain[tb->attrs[i]];
        sum += mult[a] * mult[b] * cells;
      }
    total += sum;
  }
  *out = n ? total / n : 0;
  free(pos);
  free(masks);
  free(mult);
  free(bins);
  return ok;
}

int rdt_batch_plan(const rdt_forest *f, const double *xs, uint32_t n, double factor[RDT_BATCH_N_STRATEGIES]) {
  double k = f->config.trees, part = f->config.partition && f->matrix;
  /* A row counts in every tree, or in one (partition). */
  double per_row = part ? 1 : k;
  factor[RDT_BATCH_QUERY - 1] = (double)n * n * per_row * per_row;
  factor[RDT_BATCH_LEAF - 1] = k * per_row * per_row;
  factor[RDT_BATCH_IDENTITY - 1] = INFINITY;
  if (f->matrix && f->matrix->exact_cells) {
    double v;
    if (!identity_factor(f, xs, n, &v)) return 0;
    factor[RDT_BATCH_IDENTITY - 1] = v;
  }
  return 1;
}

int rdt_batch_answer(const rdt_forest *f, const double *xs, uint32_t n, uint32_t strategy, rdt_eps eps,
                     double keep_trees, rdt_rng *noise, int64_t *votes) {
  uint32_t k = f->config.trees, nf = f->schema.n_features, C = f->schema.n_classes;
  uint64_t per_row = f->config.partition && f->matrix ? 1 : k;
  uint64_t L = rdt_forest_total_leaves(f), s, t;
  const int64_t *leaves = f->counts;
  int64_t *noisy = NULL;
  uint32_t *bins = malloc(nf * sizeof *bins);
  if (!bins) return 0;
  int ok = 1;
  if (strategy == RDT_BATCH_LEAF) { /* contract item 2, LEAF */
    noisy = malloc((size_t)(L * C) * sizeof *noisy);
    ok = noisy && rdt_laplace_params(eps, per_row, &s, &t);
    for (uint64_t i = 0; ok && i < L * C; i++) noisy[i] = f->counts[i] + rdt_discrete_laplace(noise, s, t);
    leaves = noisy;
  } else if (strategy == RDT_BATCH_IDENTITY) { /* contract item 2, IDENTITY */
    const rdt_matrix *m = f->matrix;
    uint64_t nc = m->exact.cells * C;
    int64_t *cells = malloc((size_t)nc * sizeof *cells);
    noisy = malloc((size_t)(L * C) * sizeof *noisy);
    ok = cells && noisy && rdt_laplace_params(eps, 1, &s, &t);
    for (uint64_t i = 0; ok && i < nc; i++) cells[i] = m->exact_cells[i] + rdt_discrete_laplace(noise, s, t);
    ok = ok && rdt_matrix_derive(f, &m->exact, NULL, cells, noisy);
    if (cells) sodium_memzero(cells, (size_t)nc * sizeof *cells);
    free(cells);
    leaves = noisy;
  }
  /* Contract item 4: the voting trees, chosen from the noisy leaves. */
  uint8_t *kept = NULL;
  if (ok && keep_trees < 1 && strategy != RDT_BATCH_QUERY) {
    kept = malloc(k);
    ok = kept && rdt_select_trees(f, leaves, rdt_keep_count(k, keep_trees), kept);
  }
  for (uint32_t q = 0; ok && q < n; q++) {
    const double *x = xs + (size_t)q * nf;
    int64_t *v = votes + (size_t)q * C;
    memset(v, 0, C * sizeof *v);
    if (f->matrix) rdt_matrix_row_bins(f, x, bins);
    for (uint32_t tr = 0; tr < k; tr++) {
      if (kept && !kept[tr]) continue;
      const int64_t *cnt = leaves + global_leaf(f, tr, x, bins) * C;
      for (uint32_t c = 0; c < C; c++) v[c] += cnt[c];
    }
  }
  if (ok && strategy == RDT_BATCH_QUERY) { /* contract item 2, QUERY */
    ok = rdt_laplace_params(eps, (uint64_t)n * per_row, &s, &t);
    for (uint64_t i = 0; ok && i < (uint64_t)n * C; i++) votes[i] += rdt_discrete_laplace(noise, s, t);
  }
  if (noisy) sodium_memzero(noisy, (size_t)(L * C) * sizeof *noisy);
  free(noisy);
  free(kept);
  free(bins);
  return ok;
}
