/*
** matrix_forest.c - a matrix random forest (matrix.h: multiway random trees
** whose leaf counts are answered together by the matrix mechanism) behind
** the learner interface ("algorithm": "matrix_forest", id 7), so that
** "auto" can hold it as a candidate. Its model is the forest's own BLOB
** (model.c), nested in the learner payload (forest_learner.h).
**
** Privacy contract: matrix.h's, with the defaults of "noise": "matrix":
** neighbours add or remove one row; "bins" 4 equal-width public bins per
** numeric feature, depth 4, or d - 1 for d = 2 .. 4 features (public:
** mf_depth), the noise strategy and (private, no "trees")
** the number of trees chosen from the structure alone (no privacy cost);
** the released tables (or leaf counters) spend exactly eps. The structure
** is drawn from the schema and a structure key only; no row is read before
** finish() adds the noise.
** Options: "trees" (1 .. 128; default: chosen from the structure).
*/
#include "matrix_forest.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "../forests/forest_learner.h"
#include "../forests/matrix.h"

/* The depth, from the schema alone: 4, but never every feature on a path
** while there are two or more. A path that tests all d features makes
** every tree the same partition (the forest one contingency table of all
** of them); leaving one out gives d different trees whose cells hold a
** bin's worth more rows each (results/candidate_variants.md: alone, on the
** sets with d <= 4, balance_scale +10 to +19 points, iris +4 to +6, none
** worse by more than 0.2). */
static uint32_t mf_depth(const rdt_schema *s) {
  uint32_t d = s->n_features;
  return d >= 2 && d - 1 < RDT_MATRIX_DEFAULT_DEPTH ? d - 1 : RDT_MATRIX_DEFAULT_DEPTH;
}

static void *mf_start(const rdt_json *opts, const rdt_schema *s, const rdt_learn_common *c, char *err, size_t en) {
  rdt_config config;
  if (!rdt_forest_learner_config(&config, RDT_ALGO_MATRIX, opts, RDT_MATRIX_DEFAULT_TREES, c, err, en)) return NULL;
  config.trees_auto = !config.trees && c->is_private; /* chosen from the structure (matrix.h) */
  if (!config.trees) config.trees = RDT_MATRIX_DEFAULT_TREES;
  config.depth = mf_depth(s);
  config.bins = RDT_MATRIX_DEFAULT_BINS;
  config.strategy = RDT_STRATEGY_AUTO;
  rdt_forest *f = rdt_forest_learner_new(s, &config, err, en);
  sodium_memzero(&config, sizeof config); /* the seed key */
  return f;
}

static void *mf_decode(rdt_reader *in, const rdt_schema *s, const rdt_learn_common *c) {
  (void)s;
  (void)c;
  return rdt_forest_learner_decode(in, RDT_ALGO_MATRIX);
}

static void mf_describe(const void *st, rdt_bytes *json) {
  const rdt_forest *f = st;
  char buf[400];
  snprintf(buf, sizeof buf,
           "\"mechanism\":\"matrix random forest: multiway random trees, leaf counts answered together by the "
           "matrix mechanism (discrete Laplace on contingency tables or leaf counters, strategy %s)\","
           "\"trees\":%u,\"depth\":%u,\"bins\":%u,\"leaves\":%llu,\"leaf_noise_sd\":%.6g,",
           rdt_strategy_name(f->matrix ? f->matrix->strategy : 0), f->config.trees, f->config.depth,
           f->config.bins, (unsigned long long)rdt_forest_total_leaves(f),
           f->matrix ? sqrt(f->matrix->expected_variance) : 0.0);
  rdt_bytes_text(json, buf);
}

/* learner.h's plan: from the drawn structure alone (matrix.h contract 3). */
static int mf_plan(const void *st, double n_hat, rdt_learn_plan *out) {
  const rdt_forest *f = st;
  (void)n_hat;
  if (!f->matrix || !f->config.trees) return 0;
  out->cells = (double)rdt_forest_total_leaves(f) / f->config.trees;
  /* a path tests each feature at most once (matrix.h contract 1) */
  out->path_features = f->config.depth < f->schema.n_features ? f->config.depth : f->schema.n_features;
  out->noise_sd = f->config.is_private ? sqrt(f->matrix->expected_variance) : 0;
  /* mf_depth's paths leave one feature out: the table over all of them, and
  ** the noise of one of its cells (a leaf sums about table_cells / cells of
  ** them, each with its own noise) */
  out->table_cells = out->table_noise_sd = 0;
  if (f->config.depth < f->schema.n_features && f->schema.n_features <= RDT_MATRIX_DEFAULT_DEPTH) {
    out->table_cells = 1;
    for (uint32_t j = 0; j < f->schema.n_features; j++) out->table_cells *= f->matrix->domain[j];
    if (out->cells > 0) out->table_noise_sd = out->noise_sd * sqrt(out->cells / out->table_cells);
  }
  /* every leaf's counters, and the tables' cells it counts into */
  out->state_bytes = 8.0 * rdt_forest_slots(f) * ((double)rdt_forest_total_leaves(f) + (double)f->matrix->n_cells);
  return 1;
}

static const char *const mf_options[] = {"trees", NULL};

const rdt_learner rdt_learner_matrix_forest = {
    .name = "matrix_forest",
    .id = 7,
    .tasks = RDT_LEARN_CLASSIFICATION,
    .options = mf_options,
    .start = mf_start,
    .row = rdt_forest_learner_row,
    .merge = rdt_forest_learner_merge,
    .counters = rdt_forest_learner_counters,
    .finish = rdt_forest_learner_finish,
    .encode = rdt_forest_learner_encode,
    .decode = mf_decode,
    .predict = rdt_forest_learner_predict,
    .describe = mf_describe,
    .free = rdt_forest_learner_free,
    .plan = mf_plan,
};
