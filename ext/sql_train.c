/*
** sql_train.c - the rdt_train aggregate.
**
** The first step validates the options, checks the model size against the
** connection's length limit and draws the tree structure, all before any
** row is used. Every step then counts one row (rows are never stored).
** The final step adds the noise, encodes the model and wipes the exact
** counts. Errors are raised only for parameters, never for row values.
*/
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/options.h"
#include "rdt_sql.h"

/* Rows are counted in batches of this many, tree by tree (cache-friendly);
** the buffer is the only per-row memory and its size is fixed. */
#define TRAIN_BATCH 256

typedef struct train_state {
  int started;   /* options parsed and forest built */
  int failed;    /* a parameter error was raised */
  rdt_forest forest;
  double *xs;    /* TRAIN_BATCH rows of features */
  uint32_t cls[TRAIN_BATCH];
  uint32_t pending;
} train_state;

static void train_error(sqlite3_context *ctx, train_state *st, const char *msg) {
  char *m = sqlite3_mprintf("rdt_train: %s", msg);
  sqlite3_result_error(ctx, m, -1);
  sqlite3_free(m);
  st->failed = 1;
}

static int train_start(sqlite3_context *ctx, train_state *st, int argc, sqlite3_value **argv) {
  char err[512];
  rdt_schema schema;
  rdt_config config;
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    train_error(ctx, st, "the first argument must be the options, a JSON object as TEXT");
    return 0;
  }
  const char *json = (const char *)sqlite3_value_text(argv[0]);
  if (!json) {
    sqlite3_result_error_nomem(ctx);
    st->failed = 1;
    return 0;
  }
  if (!rdt_options_parse(json, (size_t)sqlite3_value_bytes(argv[0]), &schema, &config, err, sizeof err)) {
    train_error(ctx, st, err);
    return 0;
  }
  if ((uint32_t)(argc - 2) != schema.n_features) {
    snprintf(err, sizeof err,
             "expected %u feature arguments after options and label (one per entry of \"features\"), got %d",
             schema.n_features, argc - 2);
    rdt_schema_free(&schema);
    train_error(ctx, st, err);
    return 0;
  }
  /* Size check before any allocation proportional to the model. */
  rdt_forest sizing;
  memset(&sizing, 0, sizeof sizing);
  sizing.schema = schema;
  sizing.config = config;
  sizing.n_leaves = (uint32_t)1 << config.depth;
  sizing.n_internal = sizing.n_leaves - 1;
  uint64_t size = rdt_model_size(&sizing);
  int limit = sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);
  if (size > (uint64_t)limit) {
    snprintf(err, sizeof err,
             "model too large: %u trees of depth %u with %u classes need %llu bytes, above this connection's "
             "SQLITE_LIMIT_LENGTH of %d; use fewer trees or a smaller depth",
             config.trees, config.depth, schema.n_classes, (unsigned long long)size, limit);
    rdt_schema_free(&schema);
    train_error(ctx, st, err);
    return 0;
  }
  if (!rdt_forest_init(&st->forest, &schema, &config) ||
      !(st->xs = malloc((size_t)TRAIN_BATCH * st->forest.schema.n_features * sizeof *st->xs))) {
    rdt_schema_free(&schema);
    train_error(ctx, st, "out of memory while building the forest");
    return 0;
  }
  st->started = 1;
  return 1;
}

void rdt_train_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  train_state *st = sqlite3_aggregate_context(ctx, sizeof *st);
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (st->failed) return;
  if (!st->started) {
    if (argc < 2) {
      train_error(ctx, st, "expected rdt_train(options, label, x1, ..., xk)");
      return;
    }
    if (!train_start(ctx, st, argc, argv)) return;
  }
  /* Rows whose label is NULL or not in "classes" are dropped (documented). */
  long cls = rdt_sql_class(&st->forest.schema, argv[1]);
  if (cls < 0) return;
  rdt_sql_features(&st->forest.schema, argv + 2, st->xs + (size_t)st->pending * st->forest.schema.n_features);
  st->cls[st->pending++] = (uint32_t)cls;
  if (st->pending == TRAIN_BATCH) {
    rdt_forest_train_batch(&st->forest, st->xs, st->cls, st->pending);
    st->pending = 0;
  }
}

static void train_cleanup(train_state *st) {
  if (st->xs) /* buffered rows are private too */
    sodium_memzero(st->xs, (size_t)TRAIN_BATCH * st->forest.schema.n_features * sizeof *st->xs);
  if (st->forest.counts) {
    /* Exact counts are the private part of the state: wipe them. */
    sodium_memzero(st->forest.counts, (size_t)st->forest.config.trees * st->forest.n_leaves *
                                          st->forest.schema.n_classes * sizeof *st->forest.counts);
  }
  rdt_forest_free(&st->forest);
  free(st->xs);
  st->xs = NULL;
}

void rdt_train_final(sqlite3_context *ctx) {
  train_state *st = sqlite3_aggregate_context(ctx, 0);
  if (!st || (!st->started && !st->failed)) {
    sqlite3_result_error(ctx,
                         "rdt_train: no rows reached rdt_train, so its options were never seen; write "
                         "FROM (SELECT 1) LEFT JOIN t ON 1 to train on a possibly empty table",
                         -1);
    return;
  }
  if (st->failed) {
    train_cleanup(st);
    return;
  }
  rdt_forest *f = &st->forest;
  rdt_forest_train_batch(f, st->xs, st->cls, st->pending);
  st->pending = 0;
  rdt_rng noise;
  if (f->config.seeded) {
    unsigned char key[RDT_RNG_KEYBYTES];
    rdt_rng_derive_key(key, f->config.seed_key, RDT_RNG_KEYBYTES, "noise");
    rdt_rng_init_seeded(&noise, key);
    sodium_memzero(key, sizeof key);
  } else {
    rdt_rng_init_os(&noise);
  }
  rdt_forest_add_noise(f, &noise);
  rdt_rng_clear(&noise);
  size_t size;
  unsigned char *blob = rdt_model_encode(f, &size);
  train_cleanup(st);
  if (!blob) {
    sqlite3_result_error(ctx, "rdt_train: out of memory while encoding the model", -1);
    return;
  }
  sqlite3_result_blob64(ctx, blob, size, free);
}
