/* diprime.c - DiPriMe forests; see diprime.h for the privacy contract. */
#include "diprime.h"

#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "../median.h"
#include "../noise.h"
#include "../select.h"

#define CENTRE ((int64_t)1 << (RDT_TARGET_GRID_LOG2 - 1)) /* the range's middle and a row's largest move */

#define GINI_SCALE 256.0   /* Gini utility units per row; sensitivity 2 -> 2*256 + 2 */
#define SSE_UNITS 1024.0   /* SSE utility units per R^2; sensitivity R^2 -> 1024 + 2 */

static uint32_t candidate_count(const rdt_config *c, uint32_t n_features) {
  return c->candidates < n_features ? c->candidates : n_features;
}

int rdt_diprime_budget(rdt_config *c, uint32_t n_features) {
  if (!c->is_private) return 1;
  /* Contract item 6: the trees grow on a row sample that one neighbouring
  ** row changes by up to two rows, so every share comes from eps / 2, always
  ** (whether the sample dropped rows must not show). */
  uint64_t half = c->eps.num / 2;
  uint64_t tree = c->partition ? half : half / c->trees;
  uint64_t k = candidate_count(c, n_features);
  /* Each share rounded down (the safe direction), in units of 2^-32. */
  c->eps_query.num = (uint64_t)floor((double)tree * c->rho / ((double)c->depth * (double)(k + 1)));
  c->eps_leaf.num = (uint64_t)floor((double)tree * (1 - c->rho));
  uint64_t leaf_spent = c->task == RDT_TASK_REGRESSION ? 2 * (c->eps_leaf.num / 2) : c->eps_leaf.num;
  if (c->eps_query.num == 0 || leaf_spent == 0) return 0;
  uint64_t per_tree = (uint64_t)c->depth * (k + 1) * c->eps_query.num + leaf_spent;
  /* What is charged: twice what the queries spend (group privacy of size 2), <= requested. */
  c->eps.num = 2 * per_tree * (c->partition ? 1 : c->trees);
  return 1;
}

/* ---- growing one tree ------------------------------------------------- */

typedef struct {
  uint32_t feature;
  uint64_t mask;
  uint32_t left;
} cat_step;

typedef struct {
  rdt_forest *f;
  const double *xs;
  const uint32_t *cls;
  const double *y;   /* targets clamped and shifted into [0, R] */
  uint32_t nf, C, tree;
  rdt_rng *rng;
  double *lo, *hi;
  cat_step *path;
  uint32_t path_len;
  uint32_t *cand, *codes;
  rdt_median med;
  int64_t *util;
  size_t *order;
  int64_t *side;     /* per-side class counts, 2 * C */
  uint32_t *kinds;   /* per candidate: split kind and value */
  double *values;
} grower;

static double value(const grower *g, uint64_t row, uint32_t feature) { return g->xs[row * g->nf + feature]; }

static uint32_t reachable(grower *g, uint32_t j) {
  const rdt_feature *ft = &g->f->schema.features[j];
  uint32_t n = 0;
  for (uint32_t c = 0; c <= ft->n_values; c++) {
    uint32_t ok = 1;
    for (uint32_t i = 0; ok && i < g->path_len; i++)
      if (g->path[i].feature == j) ok = rdt_subset_member(g->path[i].mask, c) == g->path[i].left;
    if (ok) g->codes[n++] = c;
  }
  return n;
}

/* Pick among utilities: permute-and-flip when private, else the best. */
static long choose(grower *g, const int64_t *u, size_t n, uint64_t sensitivity, int monotone) {
  if (!g->f->config.is_private) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++) if (u[i] > u[best]) best = i;
    return (long)best;
  }
  return rdt_permute_and_flip(g->rng, u, n, g->f->config.eps_query, sensitivity, monotone, g->order);
}

/* Split score of "row goes left" for the node's rows (utility, larger is
** better): -(weighted Gini) * GINI_SCALE or -SSE * SSE_UNITS / R^2. */
static int64_t split_utility(grower *g, const uint64_t *rows, uint64_t n, uint32_t feature, uint32_t kind,
                             double v) {
  int regression = g->f->config.task == RDT_TASK_REGRESSION;
  double cnt[2] = {0, 0}, sum[2] = {0, 0}, sq[2] = {0, 0};
  if (!regression) memset(g->side, 0, 2 * g->C * sizeof *g->side);
  for (uint64_t i = 0; i < n; i++) {
    double x = value(g, rows[i], feature);
    int left = kind == RDT_SPLIT_NUMERIC ? x < v : (int)rdt_subset_member(rdt_value_to_mask(v), (uint32_t)x);
    int s = left ? 0 : 1;
    if (regression) {
      double t = g->y[rows[i]];
      cnt[s] += 1;
      sum[s] += t;
      sq[s] += t * t;
    } else {
      g->side[s * g->C + g->cls[rows[i]]]++;
    }
  }
  double score = 0;
  if (regression) {
    double r = g->f->config.target_max - g->f->config.target_min;
    for (int s = 0; s < 2; s++)
      if (cnt[s] > 0) score += sq[s] - sum[s] * sum[s] / cnt[s];
    return -(int64_t)llround(score * SSE_UNITS / (r * r));
  }
  for (int s = 0; s < 2; s++) {
    double total = 0, squares = 0;
    for (uint32_t c = 0; c < g->C; c++) {
      double k = (double)g->side[s * g->C + c];
      total += k;
      squares += k * k;
    }
    if (total > 0) score += total - squares / total;
  }
  return -(int64_t)llround(score * GINI_SCALE);
}

/* Candidate split of one attribute (numeric: a private median; categorical:
** a private balanced subset). Fills *kind and *v. */
static int candidate_split(grower *g, const uint64_t *rows, uint64_t n, uint32_t j, uint32_t *kind, double *v) {
  const rdt_feature *ft = &g->f->schema.features[j];
  if (ft->type == RDT_FEATURE_NUMERIC) {
    rdt_median *m = &g->med;
    m->lo = g->lo[j];
    m->hi = g->hi[j];
    memset(m->hist, 0, (size_t)m->cells * sizeof *m->hist);
    if (!(m->hi > m->lo) || !isfinite(m->hi - m->lo)) { /* cannot happen: not a candidate */
      *kind = RDT_SPLIT_NONE;
      *v = 0;
      return 1;
    }
    for (uint64_t i = 0; i < n; i++) rdt_median_add(m, value(g, rows[i], j));
    double t;
    if (g->f->config.is_private) {
      if (!rdt_median_release(m, g->rng, g->f->config.eps_query, RDT_QUANTILE_ONE / 2, &t)) return 0;
    } else {
      /* exact median cell: the first cell where the rows to its left reach half */
      int64_t left = 0;
      uint32_t c = 0;
      while (c + 1 < m->cells && 2 * (left + m->hist[c]) < (int64_t)n) left += m->hist[c++];
      t = m->lo + (m->hi - m->lo) * (((double)c + 0.5) / m->cells);
    }
    *kind = RDT_SPLIT_NUMERIC;
    *v = t;
    return 1;
  }
  uint32_t r = reachable(g, j);
  uint64_t masks[RDT_DIPRIME_SUBSETS];
  int64_t u[RDT_DIPRIME_SUBSETS];
  for (int s = 0; s < RDT_DIPRIME_SUBSETS; s++) {
    masks[s] = rdt_subset_separating_mask(g->rng, g->codes, r);
    int64_t left = 0;
    for (uint64_t i = 0; i < n; i++) left += rdt_subset_member(masks[s], (uint32_t)value(g, rows[i], j));
    int64_t d = left - ((int64_t)n - left);
    u[s] = d < 0 ? d : -d;
  }
  long pick = choose(g, u, RDT_DIPRIME_SUBSETS, 1, 0);
  if (pick < 0) return 0;
  *kind = RDT_SPLIT_CATEGORY_SUBSET;
  *v = rdt_mask_to_value(masks[pick]);
  return 1;
}

static void count_leaf(grower *g, uint32_t leaf, const uint64_t *rows, uint64_t n) {
  rdt_forest *f = g->f;
  uint32_t slots = rdt_forest_slots(f);
  int64_t *out = f->counts + ((size_t)g->tree * f->n_leaves + leaf) * slots;
  for (uint64_t i = 0; i < n; i++) {
    if (f->config.task == RDT_TASK_REGRESSION) {
      double r = f->config.target_max - f->config.target_min;
      out[0]++;
      out[1] += (int64_t)llround(ldexp(g->y[rows[i]] / r, RDT_TARGET_GRID_LOG2)) - CENTRE; /* diprime.h 4: centred */
    } else {
      out[g->cls[rows[i]]]++;
    }
  }
}

static int grow(grower *g, uint32_t idx, uint32_t level, uint64_t *rows, uint64_t n) {
  rdt_forest *f = g->f;
  /* A fixed share of a question per node, whatever its rows (cancel.h,
  ** item 2): the questions asked depend on trees and depth only. */
  if (rdt_cancel_poll(f->config.cancel, RDT_CANCEL_UNITS / 16)) return 0;
  if (level == f->config.depth) {
    count_leaf(g, idx - f->n_internal, rows, n);
    return 1;
  }
  rdt_node *node = &f->nodes[(size_t)g->tree * f->n_internal + idx];
  uint32_t nc = 0;
  for (uint32_t j = 0; j < g->nf; j++) {
    const rdt_feature *ft = &f->schema.features[j];
    if (ft->type == RDT_FEATURE_NUMERIC ? g->lo[j] < g->hi[j] : reachable(g, j) >= 2) g->cand[nc++] = j;
  }
  uint32_t k = f->config.candidates < nc ? f->config.candidates : nc;
  for (uint32_t i = 0; i < k; i++) { /* K attributes without replacement (public coins) */
    uint32_t pick = i + (uint32_t)rdt_rng_below(g->rng, nc - i);
    uint32_t tmp = g->cand[i];
    g->cand[i] = g->cand[pick];
    g->cand[pick] = tmp;
  }
  if (k == 0) {
    node->kind = RDT_SPLIT_NONE;
    node->feature = 0;
    node->value = 0;
    return grow(g, 2 * idx + 1, level + 1, rows, n) && grow(g, 2 * idx + 2, level + 1, rows + n, 0);
  }
  uint32_t *kinds = g->kinds; /* shared: read before recursing */
  double *values = g->values;
  int64_t *u = g->util;
  for (uint32_t i = 0; i < k; i++) {
    if (!candidate_split(g, rows, n, g->cand[i], &kinds[i], &values[i])) return 0;
    u[i] = split_utility(g, rows, n, g->cand[i], kinds[i], values[i]);
  }
  int regression = f->config.task == RDT_TASK_REGRESSION;
  long pick = choose(g, u, k, regression ? (uint64_t)SSE_UNITS + 2 : (uint64_t)(2 * GINI_SCALE) + 2, regression);
  if (pick < 0) return 0;
  uint32_t j = g->cand[pick];
  node->feature = j;
  node->kind = kinds[pick];
  node->value = values[pick];
  /* Partition the rows in place: left first. */
  uint64_t nl = 0;
  for (uint64_t i = 0; i < n; i++) {
    double x = value(g, rows[i], j);
    int left = node->kind == RDT_SPLIT_NUMERIC ? x < node->value
                                               : (int)rdt_subset_member(rdt_value_to_mask(node->value), (uint32_t)x);
    if (left) {
      uint64_t tmp = rows[nl];
      rows[nl++] = rows[i];
      rows[i] = tmp;
    }
  }
  int ok;
  if (node->kind == RDT_SPLIT_NUMERIC) {
    double lo = g->lo[j], hi = g->hi[j];
    g->hi[j] = node->value;
    ok = grow(g, 2 * idx + 1, level + 1, rows, nl);
    g->hi[j] = hi;
    g->lo[j] = node->value;
    ok = ok && grow(g, 2 * idx + 2, level + 1, rows + nl, n - nl);
    g->lo[j] = lo;
  } else {
    cat_step *st = &g->path[g->path_len++];
    st->feature = j;
    st->mask = rdt_value_to_mask(node->value);
    st->left = 1;
    ok = grow(g, 2 * idx + 1, level + 1, rows, nl);
    st->left = 0;
    ok = ok && grow(g, 2 * idx + 2, level + 1, rows + nl, n - nl);
    g->path_len--;
  }
  return ok;
}

/* diprime.h 4's post-processing: a leaf's released centred sum becomes a sum
** from min by its released count, the meaning forest.c's readers give it. */
static void uncentre_sums(rdt_forest *f) {
  size_t leaves = (size_t)f->config.trees * f->n_leaves;
  for (size_t l = 0; l < leaves; l++) f->counts[2 * l + 1] += (f->counts[2 * l] > 0 ? f->counts[2 * l] : 0) * CENTRE;
}

/* Returns 0 when a noise parameter does not fit: the caller then releases
** nothing (fail closed: never a leaf without its noise). */
static int add_leaf_noise(rdt_forest *f, rdt_rng *rng) {
  if (!f->config.is_private) {
    if (f->config.task == RDT_TASK_REGRESSION) uncentre_sums(f);
    return 1;
  }
  size_t leaves = (size_t)f->config.trees * f->n_leaves;
  uint64_t s, t, s2, t2;
  if (f->config.task == RDT_TASK_REGRESSION) {
    rdt_eps half = {f->config.eps_leaf.num / 2};
    if (!rdt_laplace_params(half, 1, &s, &t) ||                                   /* count */
        !rdt_laplace_params(half, (uint64_t)CENTRE, &s2, &t2)) /* centred sum of grid units */
      return 0;
    for (size_t l = 0; l < leaves; l++) {
      if (rdt_cancel_poll(f->config.cancel, 2)) return 0;
      f->counts[2 * l] += rdt_discrete_laplace(rng, s, t);
      f->counts[2 * l + 1] += rdt_discrete_laplace(rng, s2, t2);
    }
    uncentre_sums(f);
  } else {
    if (!rdt_laplace_params(f->config.eps_leaf, 1, &s, &t)) return 0;
    for (size_t i = 0; i < leaves * f->schema.n_classes; i++) {
      if (rdt_cancel_poll(f->config.cancel, 1)) return 0;
      f->counts[i] += rdt_discrete_laplace(rng, s, t);
    }
  }
  return 1;
}

int rdt_diprime_train(rdt_forest *f, const double *xs, const uint32_t *cls, const double *y, uint64_t n,
                      rdt_rng *rng) {
  uint32_t nf = f->schema.n_features, max_codes = 1;
  for (uint32_t j = 0; j < nf; j++)
    if (f->schema.features[j].type == RDT_FEATURE_CATEGORICAL && f->schema.features[j].n_values + 1 > max_codes)
      max_codes = f->schema.features[j].n_values + 1;
  grower g;
  memset(&g, 0, sizeof g);
  g.f = f;
  g.xs = xs;
  g.cls = cls;
  g.nf = nf;
  g.C = f->schema.n_classes;
  g.rng = rng;
  double *shifted = NULL;
  uint64_t *rows = malloc((n + 1) * sizeof *rows);
  uint32_t *tree_of = NULL;
  g.lo = malloc(nf * sizeof *g.lo);
  g.hi = malloc(nf * sizeof *g.hi);
  g.path = malloc((f->config.depth + 1) * sizeof *g.path);
  g.cand = malloc(nf * sizeof *g.cand);
  g.codes = malloc(max_codes * sizeof *g.codes);
  g.util = malloc((nf + RDT_DIPRIME_SUBSETS) * sizeof *g.util);
  g.order = malloc((nf + RDT_DIPRIME_SUBSETS + 1) * sizeof *g.order);
  g.side = malloc((2 * (size_t)g.C + 2) * sizeof *g.side);
  g.kinds = malloc(nf * sizeof *g.kinds);
  g.values = malloc(nf * sizeof *g.values);
  int ok = rows && g.lo && g.hi && g.path && g.cand && g.codes && g.util && g.order && g.side && g.kinds && g.values &&
           rdt_median_init(&g.med, 0, 1, RDT_DIPRIME_MEDIAN_CELLS);
  if (ok && f->config.task == RDT_TASK_REGRESSION) {
    /* Clamp into the public [min, max] and shift to [0, R] (data-independent rule). */
    shifted = malloc((n + 1) * sizeof *shifted);
    ok = shifted != NULL;
    for (uint64_t i = 0; ok && i < n; i++) {
      double t = y[i];
      if (!(t >= f->config.target_min)) t = f->config.target_min; /* also NaN: the documented rule */
      if (t > f->config.target_max) t = f->config.target_max;
      shifted[i] = t - f->config.target_min;
    }
    g.y = shifted;
  }
  if (ok && f->config.partition) {
    /* Each row to one tree, uniformly and independently of its values. */
    tree_of = malloc((n + 1) * sizeof *tree_of);
    ok = tree_of != NULL;
    for (uint64_t i = 0; ok && i < n; i++) tree_of[i] = (uint32_t)rdt_rng_below(rng, f->config.trees);
  }
  for (uint32_t t = 0; ok && t < f->config.trees; t++) {
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++)
      if (!tree_of || tree_of[i] == t) rows[m++] = i;
    for (uint32_t j = 0; j < nf; j++) {
      g.lo[j] = f->schema.features[j].min;
      g.hi[j] = f->schema.features[j].max;
    }
    g.path_len = 0;
    g.tree = t;
    ok = grow(&g, 0, 0, rows, m);
  }
  if (ok) ok = add_leaf_noise(f, rng);
  if (!ok && f->counts) /* fail closed: no exact count survives a failed release */
    sodium_memzero(f->counts, (size_t)f->config.trees * f->n_leaves * rdt_forest_slots(f) * sizeof *f->counts);
  if (shifted) memset(shifted, 0, n * sizeof *shifted); /* private values */
  free(shifted);
  free(rows);
  free(tree_of);
  free(g.lo);
  free(g.hi);
  free(g.path);
  free(g.cand);
  free(g.codes);
  free(g.util);
  free(g.order);
  free(g.side);
  free(g.kinds);
  free(g.values);
  rdt_median_free(&g.med);
  return ok && rdt_forest_index(f);
}
