/* forest.c - RDT structure, training state, noise, prediction; see forest.h. */
#include "forest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../digest.h"

/* The budget the leaf counters get: eps less what a noisy row count took. */
static rdt_eps leaf_eps(const rdt_config *c) {
  rdt_eps e = {c->eps.num - c->eps_count.num};
  return e;
}

uint64_t rdt_forest_counters(const rdt_config *c, uint32_t slots) {
  if (c->depth > RDT_MAX_DEPTH || c->trees > RDT_MAX_TREES) return 0;
  uint64_t n = (uint64_t)c->trees << c->depth;
  if (n > RDT_MAX_COUNTERS) return 0;
  n *= slots;
  if (n > RDT_MAX_COUNTERS) return 0;
  return n;
}

/* ---- structure -------------------------------------------------------- */

uint32_t rdt_subset_member(uint64_t mask, uint32_t code) {
  if (code < 64) return (uint32_t)(mask >> code) & 1;
  /* Larger domains: one bit of a keyed mix (splitmix64 finaliser) per code. */
  uint64_t z = mask ^ ((uint64_t)code * 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (uint32_t)((z ^ (z >> 31)) & 1);
}

double rdt_mask_to_value(uint64_t mask) {
  double d;
  memcpy(&d, &mask, sizeof d);
  return d;
}

uint64_t rdt_value_to_mask(double value) {
  uint64_t m;
  memcpy(&m, &value, sizeof m);
  return m;
}

/* Does categorical code c go left at a node of this kind and value? */
static uint32_t category_left(uint32_t kind, double value, uint32_t code) {
  if (kind == RDT_SPLIT_CATEGORY_EQ) return code == (uint32_t)value;
  return rdt_subset_member(rdt_value_to_mask(value), code);
}

typedef struct {
  uint32_t feature;
  uint32_t kind;      /* RDT_SPLIT_CATEGORY_EQ or RDT_SPLIT_CATEGORY_SUBSET */
  double value;
  uint32_t left;      /* 1: the path went left at this node */
} path_step;

typedef struct {
  rdt_forest *f;
  rdt_rng *rng;
  double *lo, *hi;    /* current numeric interval per feature */
  path_step *path;    /* categorical decisions on the current path */
  uint32_t path_len;
  uint32_t *cand;     /* scratch: splittable features */
  uint32_t *codes;    /* scratch: reachable codes of one feature */
  int stopped;        /* the caller's cancel stopped the draw */
} builder;

/* Codes of categorical feature j (its values and `other`) that rows can
** still have at this node; fills b->codes and returns how many. */
static uint32_t reachable_codes(builder *b, uint32_t j) {
  const rdt_feature *ft = &b->f->schema.features[j];
  uint32_t n = 0, constrained = 0;
  for (uint32_t i = 0; i < b->path_len; i++) constrained |= b->path[i].feature == j;
  for (uint32_t c = 0; c <= ft->n_values; c++) {
    uint32_t ok = 1;
    for (uint32_t i = 0; constrained && ok && i < b->path_len; i++) {
      const path_step *st = &b->path[i];
      if (st->feature == j) ok = category_left(st->kind, st->value, c) == st->left;
    }
    if (ok) b->codes[n++] = c;
  }
  return n;
}

uint64_t rdt_subset_separating_mask(rdt_rng *rng, const uint32_t *codes, uint32_t r) {
  for (int tries = 0; tries < 64; tries++) {
    uint64_t mask = rdt_rng_u64(rng);
    uint32_t left = 0;
    for (uint32_t i = 0; i < r; i++) left += rdt_subset_member(mask, codes[i]);
    if (left > 0 && left < r) return mask;
  }
  /* 64 failures have probability < 2^-64: fall back to "first code left". */
  return codes[0] < 64 ? (uint64_t)1 << codes[0] : 0;
}

static void build_node(builder *b, uint32_t tree, uint32_t idx, uint32_t level) {
  rdt_forest *f = b->f;
  if (level == f->config.depth || b->stopped) return;
  /* One unit a node (cancel.h): a node costs a fraction of a noise draw. */
  if (rdt_cancel_poll(f->config.cancel, 1)) {
    b->stopped = 1;
    return;
  }
  rdt_node *node = &f->nodes[(size_t)tree * f->n_internal + idx];
  uint32_t nc = 0;
  int global = f->config.splits == RDT_SPLITS_GLOBAL;
  int subset = f->config.categorical == RDT_CATEGORICAL_SUBSET;
  for (uint32_t j = 0; j < f->schema.n_features; j++) {
    const rdt_feature *ft = &f->schema.features[j];
    if (ft->type == RDT_FEATURE_NUMERIC ? global || b->lo[j] < b->hi[j] : reachable_codes(b, j) >= 2)
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
  if (ft->type == RDT_FEATURE_NUMERIC) {
    /* global: the whole public range; reachable: what the ancestors leave. */
    double lo = global ? ft->min : b->lo[j], hi = global ? ft->max : b->hi[j];
    double u = rdt_rng_unit(b->rng), w = hi - lo;
    /* hi - lo overflows when the bounds span most of the double range. */
    double t = isfinite(w) ? lo + w * u : lo * (1 - u) + hi * u;
    if (t >= hi) t = lo; /* rounding guard: keep t in [lo, hi) */
    node->kind = RDT_SPLIT_NUMERIC;
    node->value = t;
    double save_lo = b->lo[j], save_hi = b->hi[j];
    if (!global) b->hi[j] = t;
    build_node(b, tree, 2 * idx + 1, level + 1);
    b->hi[j] = save_hi;
    if (!global) b->lo[j] = t;
    build_node(b, tree, 2 * idx + 2, level + 1);
    b->lo[j] = save_lo;
    return;
  }
  uint32_t r = reachable_codes(b, j);
  node->kind = subset ? RDT_SPLIT_CATEGORY_SUBSET : RDT_SPLIT_CATEGORY_EQ;
  node->value = subset ? rdt_mask_to_value(rdt_subset_separating_mask(b->rng, b->codes, r))
                       : (double)b->codes[rdt_rng_below(b->rng, r)];
  path_step *st = &b->path[b->path_len++];
  st->feature = j;
  st->kind = node->kind;
  st->value = node->value;
  st->left = 1;
  build_node(b, tree, 2 * idx + 1, level + 1);
  st->left = 0;
  build_node(b, tree, 2 * idx + 2, level + 1);
  b->path_len--;
}

static int build_structure(rdt_forest *f, rdt_rng *rng) {
  uint32_t nf = f->schema.n_features, max_codes = 1;
  for (uint32_t j = 0; j < nf; j++)
    if (f->schema.features[j].type == RDT_FEATURE_CATEGORICAL && f->schema.features[j].n_values + 1 > max_codes)
      max_codes = f->schema.features[j].n_values + 1;
  builder b = {f, rng, NULL, NULL, NULL, 0, NULL, NULL, 0};
  b.lo = malloc(nf * sizeof *b.lo);
  b.hi = malloc(nf * sizeof *b.hi);
  b.cand = malloc(nf * sizeof *b.cand);
  b.path = malloc((f->config.depth + 1) * sizeof *b.path);
  b.codes = malloc(max_codes * sizeof *b.codes);
  int ok = b.lo && b.hi && b.cand && b.path && b.codes;
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
  if (b.stopped) {
    snprintf(f->error, sizeof f->error, "stopped while drawing the trees (interrupted)");
    ok = 0;
  }
  free(b.lo);
  free(b.hi);
  free(b.cand);
  free(b.path);
  free(b.codes);
  return ok;
}

int rdt_forest_alloc_binary(rdt_forest *f, rdt_rng *structure, char *err, size_t err_size) {
  (void)structure;
  (void)err;
  (void)err_size;
  f->n_leaves = (uint32_t)1 << f->config.depth;
  f->n_internal = f->n_leaves - 1;
  uint64_t counters = rdt_forest_counters(&f->config, rdt_forest_slots(f));
  if (counters == 0) return 0;
  f->nodes = calloc((size_t)f->config.trees * f->n_internal + 1, sizeof *f->nodes);
  f->counts = calloc((size_t)counters, sizeof *f->counts);
  return f->nodes && f->counts;
}

int rdt_forest_draw_binary(rdt_forest *f, rdt_rng *structure, char *err, size_t err_size) {
  if (!rdt_forest_alloc_binary(f, structure, err, err_size) || !build_structure(f, structure)) return 0;
  /* Training scratch for the one-pass walk: a decoded model never trains,
  ** so it is not allocated there. NULL selects the slow path. */
  f->cols = malloc((size_t)f->schema.n_features * RDT_TRAIN_CHUNK * sizeof *f->cols);
  return 1;
}

int rdt_forest_init_with(rdt_forest *f, rdt_schema *schema, const rdt_config *config, rdt_structure_fn draw) {
  memset(f, 0, sizeof *f);
  f->schema = *schema;
  memset(schema, 0, sizeof *schema);
  f->config = *config;

  /* Structure key: the one the options give ("structure_key", a shard
  ** plan's), else from the seed when seeded, else fresh from the OS. The
  ** model id is derived from it, so seeded runs are byte-identical. */
  unsigned char skey[RDT_RNG_KEYBYTES];
  rdt_rng rng;
  if (config->keyed) memcpy(skey, config->structure_key, sizeof skey);
  else rdt_rng_structure_key(skey, config->seeded ? config->seed_key : NULL);
  /* The id names structure and configuration: the same seed with another
  ** epsilon or vote rule gives another id. */
  unsigned char id[RDT_RNG_KEYBYTES], idin[RDT_RNG_KEYBYTES + 24];
  memcpy(idin, skey, RDT_RNG_KEYBYTES);
  uint64_t cfg[3] = {config->is_private ? config->eps.num : 0,
                     config->vote | (uint64_t)config->strategy << 8 | (uint64_t)config->bins << 16, config->algorithm};
  memcpy(idin + RDT_RNG_KEYBYTES, cfg, sizeof cfg);
  rdt_rng_derive_key(id, idin, sizeof idin, "model-id");
  memcpy(f->model_id, id, sizeof f->model_id);
  rdt_rng_init_seeded(&rng, skey);
  /* The kind's structure (forest_kind.h): RDT draws binary trees now,
  ** DiPriMe allocates them and grows them from the rows (diprime.c), a
  ** matrix forest draws its multiway trees (matrix.c), RDT# has nothing to
  ** draw before its public rows (sharp.c, called by the trainer). */
  int ok = !draw || draw(f, &rng, f->error, sizeof f->error);
  rdt_rng_clear(&rng);
  memset(skey, 0, sizeof skey);
  return ok && rdt_forest_index(f);
}

void rdt_forest_free(rdt_forest *f) {
  rdt_schema_free(&f->schema);
  free(f->nodes);
  free(f->splits);
  free(f->msplits);
  free(f->cols);
  free(f->counts);
  free(f->theta);
  free(f->leaf_vote);
  free(f->tree_kept);
  free(f->note);
  if (f->multiway) f->multiway->free(f);
  memset(f, 0, sizeof *f);
}

/* ---- training --------------------------------------------------------- */

uint64_t rdt_forest_total_leaves(const rdt_forest *f) {
  return f->multiway ? f->multiway->total_leaves(f) : (uint64_t)f->config.trees * f->n_leaves;
}

/* The mixed walk needs every categorical split on a feature whose codes
** (its values and `other`) fit the 64 bits of a mask. */
static int mixed_walk_fits(const rdt_forest *f, const rdt_node *nd) {
  return nd->feature < f->schema.n_features && f->schema.features[nd->feature].n_values < 64;
}

int rdt_forest_index(rdt_forest *f) {
  if (f->matrix) return 1; /* multiway trees are walked from their nodes */
  size_t n = (size_t)f->config.trees * f->n_internal;
  free(f->splits);
  free(f->msplits);
  f->splits = NULL;
  f->msplits = NULL;
  /* The cheapest walk every node allows: numeric splits only, else the
  ** mixed test when every categorical split fits a mask, else an interval
  ** test (one-code splits), else the generic one. */
  int categorical = 0, subset = 0, fits = 1;
  for (size_t i = 0; i < n; i++) {
    const rdt_node *nd = &f->nodes[i];
    if (nd->kind != RDT_SPLIT_CATEGORY_EQ && nd->kind != RDT_SPLIT_CATEGORY_SUBSET) continue;
    categorical = 1;
    subset |= nd->kind == RDT_SPLIT_CATEGORY_SUBSET;
    fits &= mixed_walk_fits(f, nd);
  }
  f->walk_mode = !categorical ? RDT_WALK_NUMERIC : fits ? RDT_WALK_MIXED : subset ? RDT_WALK_GENERIC : RDT_WALK_INTERVAL;
  rdt_cancel *cancel = f->config.cancel; /* a unit per 16 nodes (cancel.h); NULL for a decoded model */
  if (f->walk_mode == RDT_WALK_MIXED) {
    f->msplits = malloc((n + 1) * sizeof *f->msplits);
    if (!f->msplits) return 0;
    for (size_t i = 0; i < n; i++) {
      if ((i & 15) == 0 && rdt_cancel_poll(cancel, 1)) return 0;
      const rdt_node *nd = &f->nodes[i];
      rdt_msplit *sp = &f->msplits[i];
      sp->feature = nd->feature;
      sp->hi = INFINITY;
      sp->mask = ~(uint64_t)0;
      if (nd->kind == RDT_SPLIT_NUMERIC) {
        sp->hi = nd->value;
      } else if (nd->kind == RDT_SPLIT_CATEGORY_SUBSET) {
        sp->mask = rdt_value_to_mask(nd->value); /* codes < 64: rdt_subset_member is bit `code` */
      } else if (nd->kind == RDT_SPLIT_CATEGORY_EQ) {
        /* Decoding checks the code is an integer in [0, n_values]; any other
        ** value would match no code, as x == value would not. */
        double v = nd->value;
        sp->mask = v >= 0 && v < 64 && v == floor(v) ? (uint64_t)1 << (uint32_t)v : 0;
      } else {
        sp->feature = 0;
      }
    }
    return 1;
  }
  f->splits = malloc((n + 1) * sizeof *f->splits);
  if (!f->splits) return 0;
  for (size_t i = 0; i < n; i++) {
    if ((i & 15) == 0 && rdt_cancel_poll(cancel, 1)) return 0;
    const rdt_node *nd = &f->nodes[i];
    rdt_split *sp = &f->splits[i];
    sp->feature = nd->feature;
    if (nd->kind == RDT_SPLIT_NUMERIC) {
      sp->lo = -INFINITY;
      sp->hi = nd->value;
    } else if (nd->kind == RDT_SPLIT_CATEGORY_SUBSET) {
      sp->lo = NAN; /* never used: generic walks read f->nodes */
      sp->hi = NAN;
    } else if (nd->kind == RDT_SPLIT_CATEGORY_EQ) {
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

/* One step down from node base + idx for the row xs. The numeric and
** interval tests are branch-free, so random data costs no mispredictions;
** the generic test reads the node's kind. The mode is fixed per forest, so
** the switch below is resolved outside the hot loops. */
static inline uint32_t next_index(const rdt_forest *f, int mode, size_t base, const double *xs, uint32_t idx) {
  uint32_t left;
  if (mode == RDT_WALK_NUMERIC) {
    const rdt_split *s = f->splits + base + idx;
    left = xs[s->feature] < s->hi;
  } else if (mode == RDT_WALK_INTERVAL) {
    const rdt_split *s = f->splits + base + idx;
    double x = xs[s->feature];
    left = (x >= (double)s->lo) & (x < s->hi);
  } else if (mode == RDT_WALK_MIXED) {
    const rdt_msplit *s = f->msplits + base + idx;
    double x = xs[s->feature];
    left = (x < s->hi) & (uint32_t)(s->mask >> rdt_mixed_code(x));
  } else {
    const rdt_node *n = f->nodes + base + idx;
    double x = xs[n->feature];
    switch (n->kind) {
      case RDT_SPLIT_NUMERIC: left = x < n->value; break;
      case RDT_SPLIT_CATEGORY_EQ: left = x == n->value; break;
      case RDT_SPLIT_CATEGORY_SUBSET: left = rdt_subset_member(rdt_value_to_mask(n->value), (uint32_t)x); break;
      default: left = 1; break;
    }
  }
  return 2 * idx + 2 - left;
}

/* Trees (or rows) are walked in groups, level by level: the loads of
** different walks are independent, so their cache misses overlap. */
#define WALK_GROUP 16

/* Leaves reached by xs in trees [t0, t0 + n), n <= WALK_GROUP. */
#define WALK_TREES(MODE)                                                              \
  for (uint32_t d = 0; d < f->config.depth; d++)                                      \
    for (uint32_t j = 0; j < n; j++) idx[j] = next_index(f, MODE, (t0 + j) * stride, xs, idx[j]);

static void walk_group(const rdt_forest *f, uint32_t t0, uint32_t n, const double *xs, uint32_t *leaf) {
  size_t stride = f->n_internal;
  uint32_t idx[WALK_GROUP] = {0};
  switch (f->walk_mode) {
    case RDT_WALK_NUMERIC: WALK_TREES(RDT_WALK_NUMERIC) break;
    case RDT_WALK_INTERVAL: WALK_TREES(RDT_WALK_INTERVAL) break;
    case RDT_WALK_MIXED: WALK_TREES(RDT_WALK_MIXED) break;
    default: WALK_TREES(RDT_WALK_GENERIC) break;
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

/* Rows rows[0..n) down the tree starting at node `base`. */
#define WALK_ROWS(MODE)                                                              \
  for (uint32_t d = 0; d < depth; d++)                                               \
    for (uint32_t j = 0; j < n; j++) idx[j] = next_index(f, MODE, base, rows[j], idx[j]);

/* Numeric forests, one full group: values are column-major in cols, so a
** row's value sits at a fixed offset (j) from its feature's column and
** needs no per-row pointer. */
static void walk_numeric_group(const rdt_split *sp, uint32_t depth, const double *cols, uint32_t *idx) {
  for (uint32_t d = 0; d < depth; d++) {
#pragma GCC unroll 16
    for (uint32_t j = 0; j < WALK_GROUP; j++) {
      const rdt_split *s = sp + idx[j];
      idx[j] = 2 * idx[j] + 2 - (cols[(size_t)s->feature * RDT_TRAIN_CHUNK + j] < s->hi);
    }
  }
}

/* Mixed forests, one full group: the same column walk with the mixed test
** (rdt_msplit): a few integer operations more per level than the numeric
** walk (about 1.3 times its time), where the generic walk branches on every
** node's kind, mispredicting on random trees. */
static void walk_mixed_group(const rdt_msplit *sp, uint32_t depth, const double *cols, uint32_t *idx) {
  for (uint32_t d = 0; d < depth; d++) {
#pragma GCC unroll 16
    for (uint32_t j = 0; j < WALK_GROUP; j++) {
      const rdt_msplit *s = sp + idx[j];
      double x = cols[(size_t)s->feature * RDT_TRAIN_CHUNK + j];
      idx[j] = 2 * idx[j] + 2 - ((x < s->hi) & (uint32_t)(s->mask >> rdt_mixed_code(x)));
    }
  }
}

static void train_chunk(rdt_forest *f, const double *xs, const uint32_t *cls, uint32_t n_rows) {
  uint32_t C = rdt_forest_slots(f), nf = f->schema.n_features, depth = f->config.depth;
  int mixed = f->walk_mode == RDT_WALK_MIXED && f->cols;
  int numeric = (f->walk_mode == RDT_WALK_NUMERIC || mixed) && f->cols;
  if (numeric) /* transpose once; every tree then reads columns */
    for (uint32_t r = 0; r < n_rows; r++)
      for (uint32_t q = 0; q < nf; q++) f->cols[(size_t)q * RDT_TRAIN_CHUNK + r] = xs[(size_t)r * nf + q];
  /* Tree-major: one tree's nodes stay in L1 while every row of the chunk
  ** walks it, WALK_GROUP rows at a time so their loads overlap. */
  for (uint32_t t = 0; t < f->config.trees; t++) {
    size_t base = (size_t)t * f->n_internal;
    int64_t *counts = f->counts + (size_t)t * f->n_leaves * C;
    for (uint32_t r0 = 0; r0 < n_rows; r0 += WALK_GROUP) {
      uint32_t n = n_rows - r0 < WALK_GROUP ? n_rows - r0 : WALK_GROUP;
      uint32_t idx[WALK_GROUP] = {0};
      if (mixed && n == WALK_GROUP) {
        walk_mixed_group(f->msplits + base, depth, f->cols + r0, idx);
      } else if (numeric && n == WALK_GROUP) {
        walk_numeric_group(f->splits + base, depth, f->cols + r0, idx);
      } else {
        const double *rows[WALK_GROUP] = {NULL};
        for (uint32_t j = 0; j < n; j++) rows[j] = xs + (size_t)(r0 + j) * nf;
        switch (f->walk_mode) {
          case RDT_WALK_NUMERIC: WALK_ROWS(RDT_WALK_NUMERIC) break;
          case RDT_WALK_INTERVAL: WALK_ROWS(RDT_WALK_INTERVAL) break;
          case RDT_WALK_MIXED: WALK_ROWS(RDT_WALK_MIXED) break;
          default: WALK_ROWS(RDT_WALK_GENERIC) break;
        }
      }
      for (uint32_t j = 0; j < n; j++) counts[(size_t)(idx[j] - f->n_internal) * C + cls[r0 + j]]++;
    }
  }
}

void rdt_forest_train_batch(rdt_forest *f, const double *xs, const uint32_t *cls, uint32_t n_rows) {
  if (f->multiway) {
    for (uint32_t i = 0; i < n_rows; i++) f->multiway->train_row(f, xs + (size_t)i * f->schema.n_features, cls[i]);
    return;
  }
  for (uint32_t r0 = 0; r0 < n_rows; r0 += RDT_TRAIN_CHUNK) {
    uint32_t n = n_rows - r0 < RDT_TRAIN_CHUNK ? n_rows - r0 : RDT_TRAIN_CHUNK;
    train_chunk(f, xs + (size_t)r0 * f->schema.n_features, cls + r0, n);
  }
}

uint32_t rdt_depth_for_rows(const rdt_config *c, double rows, uint32_t n_classes, uint32_t max_depth) {
  /* A leaf's rows spread over its classes, and each class count carries its
  ** own noise of scale trees/eps: aim for 8/classes noise scales of rows per
  ** leaf (4 for two classes, the constant chosen on the paper data sets;
  ** the class factor was chosen on the multi-class sets of the reproduction). */
  double classes = c->task == RDT_TASK_REGRESSION || n_classes < 2 ? 2.0 : (double)n_classes;
  double scale = c->is_private ? rdt_eps_to_double(leaf_eps(c)) / c->trees * (2.0 / classes) : 1.0;
  double x = 4.0 * (rows > 1 ? rows : 1) * scale;
  double d = floor(log2(x) + 0.5);
  if (!(d >= RDT_AUTO_MIN_DEPTH)) d = RDT_AUTO_MIN_DEPTH;
  if (d > max_depth) d = max_depth;
  return (uint32_t)d;
}

int rdt_forest_choose_depth(rdt_forest *f, rdt_rng *noise) {
  uint32_t C = rdt_forest_slots(f), D = f->config.depth;
  /* Every row adds one count to tree 0: its total is the row count, a query
  ** of sensitivity 1 under add/remove (Contract 4 of noise.h). */
  int64_t rows = 0;
  for (size_t i = 0; i < (size_t)f->n_leaves * C; i++) rows += f->counts[i];
  if (f->config.is_private) {
    uint64_t s, t;
    if (!rdt_laplace_params(f->config.eps_count, 1, &s, &t)) return 0;
    rows += rdt_discrete_laplace(noise, s, t);
  }
  f->config.noisy_rows = rows;
  uint32_t h = rdt_depth_for_rows(&f->config, (double)rows, f->schema.n_classes, D);
  if (h == D) return 1;
  /* Heap order: the first 2^h - 1 nodes of a tree are its top h levels, and
  ** the descendants at depth D of a depth-h leaf j are contiguous. */
  uint32_t leaves = (uint32_t)1 << h, internal = leaves - 1, group = (uint32_t)1 << (D - h);
  rdt_node *nodes = malloc(((size_t)f->config.trees * internal + 1) * sizeof *nodes);
  int64_t *counts = calloc((size_t)f->config.trees * leaves * C + 1, sizeof *counts);
  if (!nodes || !counts) {
    free(nodes);
    free(counts);
    return 0;
  }
  for (uint32_t t = 0; t < f->config.trees; t++) {
    memcpy(nodes + (size_t)t * internal, f->nodes + (size_t)t * f->n_internal, internal * sizeof *nodes);
    for (uint32_t l = 0; l < f->n_leaves; l++)
      for (uint32_t k = 0; k < C; k++)
        counts[((size_t)t * leaves + l / group) * C + k] += f->counts[((size_t)t * f->n_leaves + l) * C + k];
  }
  memset(f->counts, 0, (size_t)f->config.trees * f->n_leaves * C * sizeof *f->counts); /* exact counts */
  free(f->nodes);
  free(f->counts);
  f->nodes = nodes;
  f->counts = counts;
  f->config.depth = h;
  f->n_leaves = leaves;
  f->n_internal = internal;
  return rdt_forest_index(f);
}

uint32_t rdt_forest_state(rdt_forest *f, rdt_span *out, uint32_t max) {
  if (f->multiway) return f->multiway->state(f, out, max);
  /* Binary trees add up only when drawn from the key (RDT; DiPriMe grows
  ** them from the rows). The kinds build on forest.c, so it names the
  ** algorithm here instead of asking them (forest_kind.h would be a cycle). */
  if (f->config.algorithm != RDT_ALGO_RDT || max < 1 || !f->counts) return 0;
  out[0] = (rdt_span){f->counts, (uint64_t)f->config.trees * f->n_leaves * rdt_forest_slots(f)};
  return 1;
}

void rdt_forest_digest(const rdt_forest *f, unsigned char out[32]) {
  const rdt_config *c = &f->config;
  rdt_digest d;
  rdt_digest_init(&d, "rdt-forest-state-v1");
  rdt_digest_bytes(&d, f->model_id, sizeof f->model_id);
  const uint64_t facts[] = {c->algorithm, c->task, (uint64_t)c->is_private, c->eps.num, c->eps_count.num,
                            (uint64_t)c->auto_depth, c->trees, c->depth, c->vote, c->splits, c->categorical,
                            c->bins, c->strategy, (uint64_t)c->trees_auto, (uint64_t)c->partition,
                            c->primary_trees, c->cells, c->eps_query.num, c->eps_leaf.num, c->candidates};
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) rdt_digest_u64(&d, facts[i]);
  rdt_digest_f64(&d, c->target_min);
  rdt_digest_f64(&d, c->target_max);
  rdt_digest_f64(&d, c->rho);
  rdt_digest_f64(&d, c->keep_trees);
  rdt_digest_schema(&d, &f->schema);
  if (f->multiway) {
    f->multiway->digest(f, &d);
  } else if (f->nodes) { /* the drawn nodes, field by field (no padding bytes) */
    size_t n = (size_t)c->trees * f->n_internal;
    rdt_digest_u64(&d, n);
    for (size_t i = 0; i < n; i++) {
      rdt_digest_f64(&d, f->nodes[i].value);
      rdt_digest_u64(&d, (uint64_t)f->nodes[i].feature << 32 | f->nodes[i].kind);
    }
  }
  rdt_digest_final(&d, out);
}

int rdt_forest_merge(rdt_forest *a, const rdt_forest *b) {
  rdt_span sa[RDT_MAX_SPANS], sb[RDT_MAX_SPANS];
  unsigned char da[32], db[32];
  uint32_t ka = rdt_forest_state(a, sa, RDT_MAX_SPANS), kb = rdt_forest_state((rdt_forest *)b, sb, RDT_MAX_SPANS);
  rdt_forest_digest(a, da);
  rdt_forest_digest(b, db);
  if (!ka || ka != kb || memcmp(da, db, sizeof da) != 0) return 0;
  for (uint32_t i = 0; i < ka; i++)
    if (sa[i].n != sb[i].n) return 0;
  /* Checked first, so that a refused merge leaves a unchanged. */
  for (uint32_t i = 0; i < ka; i++)
    for (uint64_t j = 0; j < sa[i].n; j++) {
      int64_t x = sa[i].p[j], y = sb[i].p[j];
      if ((y > 0 && x > INT64_MAX - y) || (y < 0 && x < INT64_MIN - y)) return 0;
    }
  for (uint32_t i = 0; i < ka; i++)
    for (uint64_t j = 0; j < sa[i].n; j++) sa[i].p[j] += sb[i].p[j];
  return 1;
}

int rdt_forest_add_noise(rdt_forest *f, rdt_rng *noise) {
  uint64_t s, t;
  if (!f->config.is_private || f->matrix) return 1; /* matrix forests: rdt_matrix_release */
  /* Sensitivity k: one counter per tree changes by 1 (forest.h, item 3).
  ** No parameters, no noise, no release: fail closed. */
  if (!rdt_laplace_params(leaf_eps(&f->config), f->config.trees, &s, &t)) return 0;
  size_t n = (size_t)f->config.trees * f->n_leaves * rdt_forest_slots(f);
  for (size_t i = 0; i < n; i++) {
    if (rdt_cancel_poll(f->config.cancel, 1)) return 0; /* the caller releases nothing (cancel.h) */
    f->counts[i] += rdt_discrete_laplace(noise, s, t);
  }
  return 1;
}

/* ---- prediction (post-processing) ------------------------------------- */

double rdt_forest_leaf_scale(const rdt_forest *f) {
  const rdt_config *c = &f->config;
  if (!c->is_private) return 0;
  /* DiPriMe's binary leaves have their own budget (named, as in merge). */
  if (c->algorithm == RDT_ALGO_DIPRIME)
    return (c->task == RDT_TASK_REGRESSION ? 2.0 : 1.0) / rdt_eps_to_double(c->eps_leaf);
  if (f->multiway) return f->multiway->leaf_scale(f);
  return c->trees / rdt_eps_to_double(leaf_eps(c));
}

/* Regression leaves: the mean of the released sum over the released count,
** both post-processed: a pseudo-count of half the count's noise scale at the
** middle of the target range shrinks leaves whose count is of the order of
** the noise; the result is clamped into [min, max]. */
static int prepare_regression(rdt_forest *f) {
  size_t leaves = (size_t)f->config.trees * f->n_leaves;
  double lo = f->config.target_min, r = f->config.target_max - lo, pseudo = rdt_forest_leaf_scale(f) / 2;
  free(f->theta);
  f->theta = malloc(leaves * sizeof *f->theta);
  if (!f->theta) return 0;
  for (size_t l = 0; l < leaves; l++) {
    double count = f->counts[2 * l] > 0 ? (double)f->counts[2 * l] : 0;
    double sum = f->counts[2 * l + 1] > 0 ? ldexp((double)f->counts[2 * l + 1], -RDT_TARGET_GRID_LOG2) : 0;
    double unit = count + pseudo > 0 ? (sum + 0.5 * pseudo) / (count + pseudo) : 0.5;
    if (unit > 1) unit = 1;
    double mean = lo + r * unit; /* lo + r can round past the maximum: clamp */
    f->theta[l] = mean > f->config.target_max ? f->config.target_max : mean < lo ? lo : mean;
  }
  return 1;
}

double rdt_forest_regress(const rdt_forest *f, const double *xs) {
  uint32_t leaf[WALK_GROUP];
  double total = 0;
  for (uint32_t t0 = 0; t0 < f->config.trees; t0 += WALK_GROUP) {
    uint32_t n = f->config.trees - t0 < WALK_GROUP ? f->config.trees - t0 : WALK_GROUP;
    walk_group(f, t0, n, xs, leaf);
    for (uint32_t j = 0; j < n; j++) total += f->theta[(size_t)(t0 + j) * f->n_leaves + leaf[j]];
  }
  return total / f->config.trees;
}

int rdt_forest_prepare(rdt_forest *f) {
  if (f->config.task == RDT_TASK_REGRESSION) return prepare_regression(f);
  uint32_t C = f->schema.n_classes;
  /* b = trees/eps, the scale of the noise on every counter (0 without noise).
  ** Majority rule: a tree votes only when its leaf's top class leads the
  ** runner-up by more than b; a smaller lead is mostly noise (the difference
  ** of two noisy counters has standard deviation 2b), so the tree abstains.
  ** For a non-private model only exact ties abstain. */
  double scale = rdt_forest_leaf_scale(f);
  /* Leaf distributions add a pseudo-count of half the noise scale b to every
  ** class: a leaf whose counters are of the order of the noise is shrunk
  ** towards uniform instead of swinging to 0 or 1, so it weighs little in
  ** the average, while a full leaf is barely changed. 0 without noise. */
  double pseudo = scale / 2;
  size_t leaves = (size_t)rdt_forest_total_leaves(f);
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
      int64_t second = INT64_MIN;
      for (uint32_t c = 0; c < C; c++) {
        th[c] = ((n[c] > 0 ? (double)n[c] : 0.0) + pseudo) / (total + C * pseudo);
        if (c != best && n[c] > second) second = n[c];
      }
      /* A single class always leads by its count. */
      double lead = C == 1 ? (double)n[best] : (double)n[best] - (double)second;
      f->leaf_vote[l] = lead > scale ? (uint16_t)best : RDT_LEAF_EMPTY;
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
  uint32_t all[RDT_MAX_TREES]; /* multiway: every tree's leaf at once */
  if (f->multiway) f->multiway->leaves(f, xs, all);
  int weight = f->config.vote == RDT_VOTE_WEIGHT;
  for (uint32_t t0 = 0; t0 < f->config.trees; t0 += WALK_GROUP) {
    uint32_t n = f->config.trees - t0 < WALK_GROUP ? f->config.trees - t0 : WALK_GROUP;
    if (f->multiway) {
      for (uint32_t j = 0; j < n; j++) leaf[j] = all[t0 + j];
    } else {
      walk_group(f, t0, n, xs, leaf);
      for (uint32_t j = 0; j < n; j++) leaf[j] += (t0 + j) * f->n_leaves;
    }
    for (uint32_t j = 0; j < n; j++) {
      if (f->tree_kept && !f->tree_kept[t0 + j]) continue; /* dropped by "keep_trees" */
      size_t l = leaf[j];
      if (weight) { /* raw released counters, negative ones included */
        const int64_t *cnt = f->counts + l * C;
        for (uint32_t c = 0; c < C; c++) votes[c] += (double)cnt[c];
      }
      const double *th = f->theta + l * C;
      for (uint32_t c = 0; c < C; c++) theta_sum[c] += th[c];
      if (f->leaf_vote[l] != RDT_LEAF_EMPTY) {
        if (!weight) votes[f->leaf_vote[l]] += 1;
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
  if (f->config.vote == RDT_VOTE_WEIGHT) {
    /* Winner: largest summed counter, then higher summed theta; the
    ** probabilities are the positive sums, normalised. */
    uint32_t best = 0;
    double total = 0;
    for (uint32_t c = 1; c < C; c++)
      if (votes[c] > votes[best] || (votes[c] == votes[best] && proba[c] > proba[best])) best = c;
    for (uint32_t c = 0; c < C; c++) total += votes[c] > 0 ? votes[c] : 0;
    for (uint32_t c = 0; c < C; c++) proba[c] = total > 0 ? (votes[c] > 0 ? votes[c] : 0) / total : 1.0 / C;
    return best;
  }
  uint32_t voting = f->tree_kept ? f->n_kept : f->config.trees;
  for (uint32_t c = 0; c < C; c++) proba[c] /= voting;
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
