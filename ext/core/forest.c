/* forest.c - RDT structure, training state, noise, prediction; see forest.h. */
#include "forest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t rdt_forest_counters(const rdt_config *c, uint32_t n_classes) {
  if (c->depth > RDT_MAX_DEPTH || c->trees > RDT_MAX_TREES) return 0;
  uint64_t n = (uint64_t)c->trees << c->depth;
  if (n > RDT_MAX_COUNTERS) return 0;
  n *= n_classes;
  if (n > RDT_MAX_COUNTERS) return 0;
  return n;
}

double rdt_numeric_clean(const rdt_feature *ft, double x, int missing) {
  /* Data-independent rules: missing (NULL, NaN, non-numeric) -> midpoint of
  ** the public bounds; everything else clamped into [min, max]. */
  if (missing || x != x) return ft->min / 2 + ft->max / 2; /* no overflow */
  if (x < ft->min) return ft->min;
  if (x > ft->max) return ft->max;
  return x;
}

/* ---- structure -------------------------------------------------------- */

typedef struct {
  uint32_t feature;
  uint32_t code;
  int fixed;          /* 1: path went left on code (feature fixed), 0: excluded code */
} path_step;

typedef struct {
  rdt_forest *f;
  rdt_rng *rng;
  double *lo, *hi;    /* current numeric interval per feature */
  path_step *path;    /* categorical decisions on the current path */
  uint32_t path_len;
  uint32_t *cand;     /* scratch: splittable features */
  uint32_t *excl;     /* scratch: excluded codes of one feature */
} builder;

/* Number of reachable codes of categorical feature j on the current path, or
** 0 if a left branch fixed it. Fills b->excl with its excluded codes sorted. */
static uint32_t reachable_codes(builder *b, uint32_t j, uint32_t *n_excl) {
  const rdt_feature *ft = &b->f->schema.features[j];
  uint32_t n = 0;
  for (uint32_t i = 0; i < b->path_len; i++) {
    if (b->path[i].feature != j) continue;
    if (b->path[i].fixed) return 0;
    /* insertion sort: at most depth entries */
    uint32_t c = b->path[i].code, k = n++;
    while (k > 0 && b->excl[k - 1] > c) { b->excl[k] = b->excl[k - 1]; k--; }
    b->excl[k] = c;
  }
  *n_excl = n;
  return ft->n_values + 1 - n;
}

static void build_node(builder *b, uint32_t tree, uint32_t idx, uint32_t level) {
  rdt_forest *f = b->f;
  if (level == f->config.depth) return;
  rdt_node *node = &f->nodes[(size_t)tree * f->n_internal + idx];
  uint32_t nc = 0, n_excl;
  int global = f->config.splits == RDT_SPLITS_GLOBAL;
  for (uint32_t j = 0; j < f->schema.n_features; j++) {
    if (global) { b->cand[nc++] = j; continue; }
    const rdt_feature *ft = &f->schema.features[j];
    if (ft->type == RDT_FEATURE_NUMERIC ? b->lo[j] < b->hi[j] : reachable_codes(b, j, &n_excl) >= 2)
      b->cand[nc++] = j;
  }
  if (nc == 0) {
    node->kind = RDT_SPLIT_NONE;
    node->feature = 0;
    node->value = 0;
    build_node(b, tree, 2 * idx + 1, level + 1);
    build_node(b, tree, 2 * idx + 2, level + 1);
    return;
  }
  uint32_t j = b->cand[rdt_rng_below(b->rng, nc)];
  const rdt_feature *ft = &f->schema.features[j];
  node->feature = j;
  if (global) {
    /* Drawn from the public domain alone; the path is not consulted. */
    node->kind = ft->type == RDT_FEATURE_NUMERIC ? RDT_SPLIT_NUMERIC : RDT_SPLIT_CATEGORY_EQ;
    if (ft->type == RDT_FEATURE_NUMERIC) {
      double u = rdt_rng_unit(b->rng), w = ft->max - ft->min;
      double t = isfinite(w) ? ft->min + w * u : ft->min * (1 - u) + ft->max * u;
      node->value = t >= ft->max ? ft->min : t;
    } else {
      node->value = (double)rdt_rng_below(b->rng, (uint64_t)ft->n_values + 1);
    }
    build_node(b, tree, 2 * idx + 1, level + 1);
    build_node(b, tree, 2 * idx + 2, level + 1);
  } else if (ft->type == RDT_FEATURE_NUMERIC) {
    double lo = b->lo[j], hi = b->hi[j];
    double u = rdt_rng_unit(b->rng), w = hi - lo;
    /* hi - lo overflows when the bounds span most of the double range. */
    double t = isfinite(w) ? lo + w * u : lo * (1 - u) + hi * u;
    if (t >= hi) t = lo; /* rounding guard: keep t in [lo, hi) */
    node->kind = RDT_SPLIT_NUMERIC;
    node->value = t;
    b->hi[j] = t;
    build_node(b, tree, 2 * idx + 1, level + 1);
    b->hi[j] = hi;
    b->lo[j] = t;
    build_node(b, tree, 2 * idx + 2, level + 1);
    b->lo[j] = lo;
  } else {
    uint32_t reach = reachable_codes(b, j, &n_excl);
    uint32_t code = (uint32_t)rdt_rng_below(b->rng, reach);
    for (uint32_t i = 0; i < n_excl; i++) if (b->excl[i] <= code) code++;
    node->kind = RDT_SPLIT_CATEGORY_EQ;
    node->value = (double)code;
    path_step *s = &b->path[b->path_len++];
    s->feature = j;
    s->code = code;
    s->fixed = 1;
    build_node(b, tree, 2 * idx + 1, level + 1);
    s->fixed = 0;
    build_node(b, tree, 2 * idx + 2, level + 1);
    b->path_len--;
  }
}

static int build_structure(rdt_forest *f, rdt_rng *rng) {
  uint32_t nf = f->schema.n_features;
  builder b = {f, rng, NULL, NULL, NULL, 0, NULL, NULL};
  b.lo = malloc(nf * sizeof *b.lo);
  b.hi = malloc(nf * sizeof *b.hi);
  b.cand = malloc(nf * sizeof *b.cand);
  b.path = malloc((f->config.depth + 1) * sizeof *b.path);
  b.excl = malloc((f->config.depth + 1) * sizeof *b.excl);
  int ok = b.lo && b.hi && b.cand && b.path && b.excl;
  if (ok) {
    for (uint32_t t = 0; t < f->config.trees; t++) {
      for (uint32_t j = 0; j < nf; j++) {
        b.lo[j] = f->schema.features[j].min;
        b.hi[j] = f->schema.features[j].max;
      }
      b.path_len = 0;
      build_node(&b, t, 0, 0);
    }
  }
  free(b.lo);
  free(b.hi);
  free(b.cand);
  free(b.path);
  free(b.excl);
  return ok;
}

int rdt_forest_init(rdt_forest *f, rdt_schema *schema, const rdt_config *config) {
  memset(f, 0, sizeof *f);
  f->schema = *schema;
  memset(schema, 0, sizeof *schema);
  f->config = *config;
  f->n_leaves = (uint32_t)1 << config->depth;
  f->n_internal = f->n_leaves - 1;
  uint64_t counters = rdt_forest_counters(config, f->schema.n_classes);
  if (counters == 0) return 0;
  f->nodes = calloc((size_t)config->trees * f->n_internal + 1, sizeof *f->nodes);
  f->counts = calloc((size_t)counters, sizeof *f->counts);
  if (!f->nodes || !f->counts) return 0;

  /* Structure key: from the seed when seeded, else fresh from the OS. The
  ** model id is derived from it, so seeded runs are byte-identical. */
  unsigned char skey[RDT_RNG_KEYBYTES];
  rdt_rng rng;
  if (config->seeded) {
    rdt_rng_derive_key(skey, config->seed_key, RDT_RNG_KEYBYTES, "structure");
  } else {
    rdt_rng_init_os(&rng);
    rdt_rng_bytes(&rng, skey, sizeof skey);
    rdt_rng_clear(&rng);
  }
  /* The id names structure and configuration: the same seed with another
  ** epsilon or vote rule gives another id. */
  unsigned char id[RDT_RNG_KEYBYTES], idin[RDT_RNG_KEYBYTES + 24];
  memcpy(idin, skey, RDT_RNG_KEYBYTES);
  uint64_t cfg[3] = {config->is_private ? config->eps.num : 0, config->vote, config->algorithm};
  memcpy(idin + RDT_RNG_KEYBYTES, cfg, sizeof cfg);
  rdt_rng_derive_key(id, idin, sizeof idin, "model-id");
  memcpy(f->model_id, id, sizeof f->model_id);
  rdt_rng_init_seeded(&rng, skey);
  int ok = build_structure(f, &rng);
  rdt_rng_clear(&rng);
  memset(skey, 0, sizeof skey);
  return ok && rdt_forest_index(f);
}

void rdt_forest_free(rdt_forest *f) {
  rdt_schema_free(&f->schema);
  free(f->nodes);
  free(f->splits);
  free(f->counts);
  free(f->theta);
  free(f->leaf_vote);
  memset(f, 0, sizeof *f);
}

/* ---- training --------------------------------------------------------- */

int rdt_forest_index(rdt_forest *f) {
  size_t n = (size_t)f->config.trees * f->n_internal;
  free(f->splits);
  f->splits = malloc((n + 1) * sizeof *f->splits);
  if (!f->splits) return 0;
  f->numeric_only = 1;
  for (size_t i = 0; i < n; i++) {
    const rdt_node *nd = &f->nodes[i];
    rdt_split *sp = &f->splits[i];
    sp->feature = nd->feature;
    if (nd->kind == RDT_SPLIT_NUMERIC) {
      sp->lo = -INFINITY;
      sp->hi = nd->value;
    } else if (nd->kind == RDT_SPLIT_CATEGORY_EQ) {
      f->numeric_only = 0;
      sp->lo = (float)(nd->value - 0.5);
      sp->hi = nd->value + 0.5;
    } else {
      sp->lo = -INFINITY;
      sp->hi = INFINITY;
      sp->feature = 0;
    }
  }
  return 1;
}

/* One step down, branch-free, so random data costs no mispredictions. */
static inline uint32_t next_index(const rdt_split *sp, const double *xs, uint32_t idx) {
  const rdt_split *s = sp + idx;
  double x = xs[s->feature];
  uint32_t left = (x >= (double)s->lo) & (x < s->hi);
  return 2 * idx + 2 - left;
}

/* Trees are walked in groups, level by level: the loads of different trees
** are independent, so their cache misses overlap instead of queueing. */
#define WALK_GROUP 16

/* Leaves reached by xs in trees [t0, t0 + n), n <= WALK_GROUP. */
static inline void walk_group(const rdt_forest *f, uint32_t t0, uint32_t n, const double *xs, uint32_t *leaf) {
  size_t stride = f->n_internal;
  const rdt_split *sp = f->splits + (size_t)t0 * stride;
  uint32_t idx[WALK_GROUP] = {0};
  for (uint32_t d = 0; d < f->config.depth; d++) {
    for (uint32_t j = 0; j < n; j++) idx[j] = next_index(sp + j * stride, xs, idx[j]);
  }
  for (uint32_t j = 0; j < n; j++) leaf[j] = idx[j] - f->n_internal;
}

uint32_t rdt_forest_leaf(const rdt_forest *f, uint32_t t, const double *xs) {
  uint32_t leaf;
  walk_group(f, t, 1, xs, &leaf);
  return leaf;
}

void rdt_forest_train_row(rdt_forest *f, const double *xs, uint32_t cls) {
  rdt_forest_train_batch(f, xs, &cls, 1);
}

/* Walk rows[0..n) down the tree at sp; NUMERIC_ONLY drops the lower bound
** test (every lo is -inf then), which is most of the work on numeric data. */
#define WALK_ROWS(NUMERIC_ONLY)                                                 \
  for (uint32_t d = 0; d < depth; d++) {                                         \
    for (uint32_t j = 0; j < n; j++) {                                           \
      const rdt_split *s = sp + idx[j];                                          \
      double x = rows[j][s->feature];                                            \
      uint32_t left = NUMERIC_ONLY ? (x < s->hi) : (x >= (double)s->lo) & (x < s->hi); \
      idx[j] = 2 * idx[j] + 2 - left;                                            \
    }                                                                            \
  }

void rdt_forest_train_batch(rdt_forest *f, const double *xs, const uint32_t *cls, uint32_t n_rows) {
  /* Tree-major: one tree's nodes stay in L1 while every row of the batch
  ** walks it, WALK_GROUP rows at a time so their loads overlap. */
  uint32_t C = f->schema.n_classes, nf = f->schema.n_features, depth = f->config.depth;
  for (uint32_t t = 0; t < f->config.trees; t++) {
    const rdt_split *sp = f->splits + (size_t)t * f->n_internal;
    int64_t *counts = f->counts + (size_t)t * f->n_leaves * C;
    for (uint32_t r0 = 0; r0 < n_rows; r0 += WALK_GROUP) {
      uint32_t n = n_rows - r0 < WALK_GROUP ? n_rows - r0 : WALK_GROUP;
      uint32_t idx[WALK_GROUP] = {0};
      const double *rows[WALK_GROUP];
      for (uint32_t j = 0; j < n; j++) rows[j] = xs + (size_t)(r0 + j) * nf;
      if (f->numeric_only) WALK_ROWS(1) else WALK_ROWS(0)
      for (uint32_t j = 0; j < n; j++) counts[(size_t)(idx[j] - f->n_internal) * C + cls[r0 + j]]++;
    }
  }
}

int rdt_forest_merge(rdt_forest *a, const rdt_forest *b) {
  if (memcmp(a->model_id, b->model_id, sizeof a->model_id) != 0 ||
      a->config.trees != b->config.trees || a->config.depth != b->config.depth ||
      a->schema.n_classes != b->schema.n_classes)
    return 0;
  size_t n = (size_t)a->config.trees * a->n_leaves * a->schema.n_classes;
  for (size_t i = 0; i < n; i++) a->counts[i] += b->counts[i];
  return 1;
}

void rdt_forest_add_noise(rdt_forest *f, rdt_rng *noise) {
  uint64_t s, t;
  if (!f->config.is_private) return;
  /* Sensitivity k: one counter per tree changes by 1 (forest.h, item 3). */
  if (!rdt_laplace_params(f->config.eps, f->config.trees, &s, &t)) return;
  size_t n = (size_t)f->config.trees * f->n_leaves * f->schema.n_classes;
  for (size_t i = 0; i < n; i++) f->counts[i] += rdt_discrete_laplace(noise, s, t);
}

/* ---- prediction (post-processing) ------------------------------------- */

int rdt_forest_prepare(rdt_forest *f) {
  uint32_t C = f->schema.n_classes;
  size_t leaves = (size_t)f->config.trees * f->n_leaves;
  free(f->theta);
  free(f->leaf_vote);
  f->theta = malloc(leaves * C * sizeof *f->theta);
  f->leaf_vote = malloc(leaves * sizeof *f->leaf_vote);
  if (!f->theta || !f->leaf_vote) return 0;
  for (size_t l = 0; l < leaves; l++) {
    const int64_t *n = f->counts + l * C;
    double *th = f->theta + l * C;
    double total = 0;
    uint32_t best = 0;
    for (uint32_t c = 0; c < C; c++) {
      if (n[c] > 0) total += (double)n[c];
      if (n[c] > n[best]) best = c;
    }
    if (total <= 0) {
      for (uint32_t c = 0; c < C; c++) th[c] = 1.0 / C;
      f->leaf_vote[l] = RDT_LEAF_EMPTY;
    } else {
      for (uint32_t c = 0; c < C; c++) th[c] = n[c] > 0 ? (double)n[c] / total : 0.0;
      f->leaf_vote[l] = (uint16_t)best;
    }
  }
  return 1;
}

/* Sums theta (always) and votes (majority rule) over the trees. */
static void accumulate(const rdt_forest *f, const double *xs, double *theta_sum, double *votes,
                       uint32_t *voters) {
  uint32_t C = f->schema.n_classes;
  for (uint32_t c = 0; c < C; c++) theta_sum[c] = votes[c] = 0;
  *voters = 0;
  uint32_t leaf[WALK_GROUP];
  for (uint32_t t0 = 0; t0 < f->config.trees; t0 += WALK_GROUP) {
    uint32_t n = f->config.trees - t0 < WALK_GROUP ? f->config.trees - t0 : WALK_GROUP;
    walk_group(f, t0, n, xs, leaf);
    for (uint32_t j = 0; j < n; j++) {
      size_t l = (size_t)(t0 + j) * f->n_leaves + leaf[j];
      const double *th = f->theta + l * C;
      for (uint32_t c = 0; c < C; c++) theta_sum[c] += th[c];
      if (f->leaf_vote[l] != RDT_LEAF_EMPTY) {
        votes[f->leaf_vote[l]] += 1;
        (*voters)++;
      }
    }
  }
}

static uint32_t argmax(const double *v, uint32_t n) {
  uint32_t best = 0;
  for (uint32_t c = 1; c < n; c++) if (v[c] > v[best]) best = c;
  return best;
}

/* proba must hold 2 * n_classes doubles (second half is scratch). */
static uint32_t forest_eval(const rdt_forest *f, const double *xs, double *proba) {
  uint32_t C = f->schema.n_classes, voters;
  double *votes = proba + C;
  accumulate(f, xs, proba, votes, &voters);
  if (f->config.vote == RDT_VOTE_MAJORITY) {
    /* Winner: most votes, then higher summed theta, then lowest index. */
    uint32_t best = 0;
    for (uint32_t c = 1; c < C; c++)
      if (votes[c] > votes[best] || (votes[c] == votes[best] && proba[c] > proba[best])) best = c;
    for (uint32_t c = 0; c < C; c++) proba[c] = voters ? votes[c] / voters : 1.0 / C;
    return best;
  }
  for (uint32_t c = 0; c < C; c++) proba[c] /= f->config.trees;
  return argmax(proba, C);
}

void rdt_forest_proba(const rdt_forest *f, const double *xs, double *proba) {
  (void)forest_eval(f, xs, proba);
}

uint32_t rdt_forest_predict(const rdt_forest *f, const double *xs, double *proba, rdt_rng *rng) {
  uint32_t best = forest_eval(f, xs, proba);
  if (f->config.vote != RDT_VOTE_PROBABILISTIC || !rng) return best;
  /* Sample from the averaged distribution (public post-processing). */
  double u = rdt_rng_unit(rng), acc = 0;
  uint32_t C = f->schema.n_classes;
  for (uint32_t c = 0; c < C; c++) {
    acc += proba[c];
    if (u < acc) return c;
  }
  return C - 1;
}
