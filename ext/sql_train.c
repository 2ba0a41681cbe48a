/*
** sql_train.c - the rdt_train aggregate.
**
** The first step validates the options, checks the model size against the
** connection's length limit and draws the tree structure, all before any
** row is used. Every step then counts one row (rows are never stored).
** The final step adds the noise, encodes the model and wipes the exact
** counts. Errors are raised only for parameters, never for row values.
**
** DiPriMe ("algorithm": "diprime") grows its trees from the data, so its rows
** are buffered (cleaned features and label or target) up to "max_rows"; the
** one data-dependent error is the documented refusal to buffer more.
*/
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/diprime.h"
#include "core/matrix.h"
#include "core/model.h"
#include "core/options.h"
#include "core/row_sample.h"
#include "core/sharp.h"
#include "core/train_worker.h"
#include "core/tree_selection.h"
#include "rdt_sql.h"

/* Rows are counted in batches of RDT_TRAIN_CHUNK, tree by tree (cache-friendly);
** the buffer is the only per-row memory and its size is fixed. With "threads"
** 2 on a machine with more than one CPU, a worker thread counts one buffer
** while the steps fill the other (train_worker.h); the model is the same. */

typedef struct train_state {
  int started;   /* options parsed and forest built */
  int failed;    /* a parameter error was raised */
  rdt_forest forest;
  double *xs;    /* RDT_TRAIN_CHUNK rows of features */
  uint32_t cls[RDT_TRAIN_CHUNK];
  uint32_t pending;
  rdt_train_worker *worker; /* NULL: the steps count the rows themselves */
  double *fill_xs;          /* the buffer the steps fill: the worker's current one, or xs/cls */
  uint32_t *fill_cls;
  uint32_t fill_cap;
  /* RDT#: the public rows (cleaned), kept to label them at the end */
  double *pub;
  uint64_t n_pub;
  /* DiPriMe: a uniform sample of at most "max_rows" rows, buffered */
  double *rows_x, *rows_y;
  uint32_t *rows_c;
  uint64_t n_rows, cap_rows;
  rdt_row_sample sample;    /* which rows are kept (k == 0: not started) */
} train_state;

static void train_error(sqlite3_context *ctx, train_state *st, const char *msg) {
  rdt_sql_error(ctx, "rdt_train", msg);
  st->failed = 1;
}

/* RDT#: run "public_query" on this connection and keep its rows, cleaned
** by the row rules of the features. Its mistakes (not a read-only SELECT,
** wrong column count, no rows, too many) are parameter errors: the public
** rows are public. */
static int read_public_rows(sqlite3_context *ctx, train_state *st, const rdt_schema *schema, const char *sql,
                            char *err, size_t en) {
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *stmt = NULL;
  const char *tail = NULL;
  uint32_t nf = schema->n_features;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, &tail) != SQLITE_OK || !stmt) {
    snprintf(err, en, "\"public_query\" does not prepare: %s", stmt ? "empty statement" : sqlite3_errmsg(db));
    sqlite3_finalize(stmt);
    return 0;
  }
  while (tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == '\r' || *tail == ';')) tail++;
  if (!sqlite3_stmt_readonly(stmt) || (tail && *tail)) {
    snprintf(err, en, "\"public_query\" must be one read-only SELECT");
    sqlite3_finalize(stmt);
    return 0;
  }
  if ((uint32_t)sqlite3_column_count(stmt) != nf) {
    snprintf(err, en, "\"public_query\" returns %d columns; it must return one per feature (%u), in order",
             sqlite3_column_count(stmt), nf);
    sqlite3_finalize(stmt);
    return 0;
  }
  sqlite3_value **vals = calloc(nf, sizeof *vals);
  uint64_t cap = 0;
  int rc = SQLITE_ROW, ok = vals != NULL;
  if (!ok) snprintf(err, en, "out of memory");
  while (ok && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (st->n_pub == RDT_SHARP_MAX_PUBLIC_ROWS) {
      snprintf(err, en, "\"public_query\" returns more than %d rows", RDT_SHARP_MAX_PUBLIC_ROWS);
      ok = 0;
      break;
    }
    if (st->n_pub == cap) {
      uint64_t c = cap ? cap * 2 : 1024;
      double *p = realloc(st->pub, (size_t)c * nf * sizeof *p);
      if (!p) { snprintf(err, en, "out of memory while reading the public rows"); ok = 0; break; }
      st->pub = p;
      cap = c;
    }
    /* Protected copies: column values may only be read through a dup. */
    for (uint32_t j = 0; ok && j < nf; j++) ok = (vals[j] = sqlite3_value_dup(sqlite3_column_value(stmt, (int)j))) != NULL;
    if (ok) rdt_sql_features(schema, vals, st->pub + (size_t)st->n_pub++ * nf);
    else snprintf(err, en, "out of memory while reading the public rows");
    for (uint32_t j = 0; j < nf; j++) {
      sqlite3_value_free(vals[j]);
      vals[j] = NULL;
    }
  }
  if (ok && rc != SQLITE_DONE) {
    snprintf(err, en, "\"public_query\" failed: %s", sqlite3_errmsg(db));
    ok = 0;
  }
  if (ok && st->n_pub == 0) {
    snprintf(err, en, "\"public_query\" returned no rows; RDT# needs public unlabeled rows");
    ok = 0;
  }
  free(vals);
  sqlite3_finalize(stmt);
  return ok;
}

/* The buffer the steps fill next: the worker's current one, or our own. */
static void point_at_buffer(train_state *st) {
  if (st->worker) {
    st->fill_xs = rdt_train_worker_rows(st->worker);
    st->fill_cls = rdt_train_worker_classes(st->worker);
    st->fill_cap = rdt_train_worker_capacity(st->worker);
  } else {
    st->fill_xs = st->xs;
    st->fill_cls = st->cls;
    st->fill_cap = RDT_TRAIN_CHUNK;
  }
}

/* Counts the buffered rows: hands them to the worker, or walks them here. */
static void count_buffered(train_state *st) {
  if (st->worker) rdt_train_worker_submit(st->worker, st->pending);
  else rdt_forest_train_batch(&st->forest, st->xs, st->cls, st->pending);
  st->pending = 0;
  point_at_buffer(st);
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
  /* Size check before any allocation proportional to the model (a matrix
  ** forest's size is known once its structure is drawn: checked below). */
  rdt_forest sizing;
  memset(&sizing, 0, sizeof sizing);
  sizing.schema = schema;
  sizing.config = config;
  sizing.n_leaves = (uint32_t)1 << config.depth;
  sizing.n_internal = sizing.n_leaves - 1;
  int multiway = config.algorithm == RDT_ALGO_MATRIX || config.algorithm == RDT_ALGO_SHARP;
  uint64_t size = multiway ? 0 : rdt_model_size(&sizing);
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
  if (config.algorithm == RDT_ALGO_DIPRIME && !rdt_diprime_budget(&config, schema.n_features)) {
    rdt_schema_free(&schema);
    train_error(ctx, st, "\"epsilon\" is too small for this DiPriMe configuration: a per-query share rounds to 0");
    return 0;
  }
  if (config.ledger[0]) { /* charge before any row is used (sql_ledger.c) */
    char note[160];
    if (!config.is_private) {
      rdt_schema_free(&schema);
      train_error(ctx, st, "a non-private model (\"epsilon\": null) cannot be charged to a ledger");
      return 0;
    }
    snprintf(note, sizeof note, config.trees_auto ? "%s, trees chosen from the structure (%u at most), depth %u%s"
                                                  : "%s, %u trees, depth %u%s",
             config.algorithm == RDT_ALGO_DIPRIME  ? "diprime"
             : config.algorithm == RDT_ALGO_MATRIX ? "rdt, matrix noise"
             : config.algorithm == RDT_ALGO_SHARP  ? "rdt#"
                                                   : "rdt",
             config.trees, config.depth, config.seeded ? ", seeded" : "");
    if (!rdt_ledger_charge(sqlite3_context_db_handle(ctx), sqlite3_user_data(ctx), config.ledger, config.eps, "rdt_train", note, err, sizeof err)) {
      rdt_schema_free(&schema);
      train_error(ctx, st, err);
      return 0;
    }
  }
  if (config.algorithm == RDT_ALGO_SHARP) {
    /* The public rows, before any private row is used. */
    if (!read_public_rows(ctx, st, &schema, config.public_query, err, sizeof err)) {
      rdt_schema_free(&schema);
      train_error(ctx, st, err);
      return 0;
    }
    double n = (double)(config.public_n ? config.public_n : st->n_pub);
    if (config.depth == 0) config.depth = rdt_sharp_depth(&schema, config.bins, n);
    if (config.primary_trees == 0) { /* no "trees": from public facts (sharp.h) */
      config.primary_trees = rdt_sharp_primary(&schema, config.bins, config.depth, n, rdt_eps_to_double(config.eps));
      config.trees += config.primary_trees;
    }
  }
  if (!rdt_forest_init(&st->forest, &schema, &config) ||
      !(st->xs = malloc((size_t)RDT_TRAIN_CHUNK * st->forest.schema.n_features * sizeof *st->xs))) {
    rdt_schema_free(&schema);
    train_error(ctx, st, st->forest.error[0] ? st->forest.error : "out of memory while building the forest");
    return 0;
  }
  if (config.algorithm == RDT_ALGO_SHARP && !rdt_sharp_build(&st->forest, st->pub, st->n_pub, err, sizeof err)) {
    train_error(ctx, st, err[0] ? err : "out of memory while drawing the RDT# trees");
    return 0;
  }
  if (multiway && (size = rdt_model_size(&st->forest)) > (uint64_t)limit) {
    snprintf(err, sizeof err,
             "model too large: %u multiway trees of depth %u with %llu leaves and %u classes need %llu bytes, above "
             "this connection's SQLITE_LIMIT_LENGTH of %d; use fewer trees, a smaller depth or fewer bins",
             config.trees, config.depth, (unsigned long long)rdt_forest_total_leaves(&st->forest),
             st->forest.schema.n_classes, (unsigned long long)size, limit);
    train_error(ctx, st, err);
    return 0;
  }
  /* No worker (no memory, no thread, one CPU) is not an error: the steps
  ** then count the rows themselves, with the same result. */
  if (config.threads == 2 && config.algorithm != RDT_ALGO_DIPRIME && sysconf(_SC_NPROCESSORS_ONLN) > 1)
    st->worker = rdt_train_worker_start(&st->forest);
  point_at_buffer(st);
  st->started = 1;
  return 1;
}

/* Buffer one DiPriMe row. Row rules as for RDT; a regression target that is
** NULL or not a number drops the row (it is clamped into the target bounds
** later). Beyond "max_rows" rows, a uniform sample of max_rows of them is
** kept (row_sample.h: bottom-k of random priorities), so the row count never
** causes an error; diprime.h charges for the sampling whether or not it
** happens. Running out of memory while growing the buffer is an error about
** max_rows (a parameter). */
static void diprime_buffer_row(sqlite3_context *ctx, train_state *st, sqlite3_value **argv) {
  rdt_forest *f = &st->forest;
  uint32_t nf = f->schema.n_features;
  double target = 0;
  long cls = 0;
  if (f->config.task == RDT_TASK_REGRESSION) {
    if (!rdt_sql_number(argv[1], &target)) return;
  } else {
    cls = rdt_sql_class(&f->schema, argv[1]);
    if (cls < 0) return;
  }
  if (st->sample.k == 0 && /* the first kept row: the priorities' own stream, seeded with the model */
      !rdt_row_sample_init(&st->sample, f->config.max_rows, f->config.seeded ? f->config.seed_key : NULL,
                           "diprime-row-sample")) {
    train_error(ctx, st, "\"max_rows\" is out of range"); /* cannot happen: options.c checks it */
    return;
  }
  if (st->sample.size == st->cap_rows && st->cap_rows < f->config.max_rows) { /* room for a new slot */
    uint64_t cap = st->cap_rows ? st->cap_rows * 2 : 1024;
    if (cap > f->config.max_rows) cap = f->config.max_rows;
    double *x = realloc(st->rows_x, (size_t)cap * nf * sizeof *x);
    if (x) st->rows_x = x;
    double *y = realloc(st->rows_y, (size_t)cap * sizeof *y);
    if (y) st->rows_y = y;
    uint32_t *c = realloc(st->rows_c, (size_t)cap * sizeof *c);
    if (c) st->rows_c = c;
    if (!x || !y || !c) {
      train_error(ctx, st, "out of memory while buffering rows for DiPriMe; lower \"max_rows\"");
      return;
    }
    st->cap_rows = cap;
  }
  uint64_t slot;
  rdt_row_sample_result r = rdt_row_sample_offer(&st->sample, &slot);
  if (r == RDT_ROW_SAMPLE_NOMEM) {
    train_error(ctx, st, "out of memory while buffering rows for DiPriMe; lower \"max_rows\"");
    return;
  }
  if (r == RDT_ROW_SAMPLE_SKIP) return;
  rdt_sql_features(&f->schema, argv + 2, st->rows_x + (size_t)slot * nf);
  st->rows_y[slot] = target;
  st->rows_c[slot] = (uint32_t)cls;
  st->n_rows = st->sample.size; /* slots 0 .. size - 1 hold the sample */
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
  if (st->forest.config.algorithm == RDT_ALGO_DIPRIME) {
    diprime_buffer_row(ctx, st, argv);
    return;
  }
  /* Rows whose label is NULL or not in "classes" are dropped (documented). */
  long cls = rdt_sql_class(&st->forest.schema, argv[1]);
  if (cls < 0) return;
  rdt_sql_features(&st->forest.schema, argv + 2, st->fill_xs + (size_t)st->pending * st->forest.schema.n_features);
  st->fill_cls[st->pending++] = (uint32_t)cls;
  if (st->pending == st->fill_cap) count_buffered(st);
}

static void train_cleanup(train_state *st) {
  rdt_train_worker_free(st->worker); /* joins the thread before the forest goes */
  st->worker = NULL;
  if (st->rows_x) { /* buffered rows are private */
    sodium_memzero(st->rows_x, (size_t)st->cap_rows * st->forest.schema.n_features * sizeof *st->rows_x);
    sodium_memzero(st->rows_y, (size_t)st->cap_rows * sizeof *st->rows_y);
    sodium_memzero(st->rows_c, (size_t)st->cap_rows * sizeof *st->rows_c);
  }
  free(st->pub); /* public rows: nothing to wipe */
  st->pub = NULL;
  free(st->rows_x);
  free(st->rows_y);
  free(st->rows_c);
  rdt_row_sample_free(&st->sample); /* its priorities would tell the row count */
  st->rows_x = st->rows_y = NULL;
  st->rows_c = NULL;
  if (st->xs) /* buffered rows are private too */
    sodium_memzero(st->xs, (size_t)RDT_TRAIN_CHUNK * st->forest.schema.n_features * sizeof *st->xs);
  if (st->forest.counts) {
    /* Exact counts are the private part of the state: wipe them. */
    sodium_memzero(st->forest.counts, (size_t)rdt_forest_total_leaves(&st->forest) * rdt_forest_slots(&st->forest) *
                                          sizeof *st->forest.counts);
  }
  rdt_matrix *mx = st->forest.matrix;
  if (mx && mx->cells) /* so are a matrix forest's tables */
    sodium_memzero(mx->cells, (size_t)mx->n_cells * rdt_forest_slots(&st->forest) * sizeof *mx->cells);
  if (mx && mx->exact_cells)
    sodium_memzero(mx->exact_cells, (size_t)mx->exact.cells * rdt_forest_slots(&st->forest) * sizeof *mx->exact_cells);
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
  if (st->pending) count_buffered(st);
  rdt_train_worker_free(st->worker); /* waits until every row is counted */
  st->worker = NULL;
  rdt_rng noise;
  rdt_rng_init_for(&noise, f->config.seeded ? f->config.seed_key : NULL, "noise", 0);
  int grown = 1;
  if (f->config.algorithm == RDT_ALGO_DIPRIME) {
    grown = rdt_diprime_train(f, st->rows_x, st->rows_c, st->rows_y, st->n_rows, &noise);
  } else if (f->config.algorithm == RDT_ALGO_MATRIX) {
    grown = rdt_matrix_release(f, &noise);
  } else if (f->config.algorithm == RDT_ALGO_SHARP) {
    grown = rdt_sharp_release(f, st->pub, st->n_pub, &noise);
  } else {
    if (f->config.auto_depth) grown = rdt_forest_choose_depth(f, &noise);
    if (grown) rdt_forest_add_noise(f, &noise);
  }
  rdt_rng_clear(&noise);
  if (grown) grown = rdt_forest_select_trees(f); /* "keep_trees": post-processing of the release */
  if (!grown) {
    train_cleanup(st);
    sqlite3_result_error(ctx, f->config.algorithm != RDT_ALGO_DIPRIME
                                  ? "rdt_train: out of memory while releasing the forest"
                                  : "rdt_train: out of memory while growing the DiPriMe trees", -1);
    return;
  }
  size_t size;
  unsigned char *blob = rdt_model_encode(f, &size);
  train_cleanup(st);
  if (!blob) {
    sqlite3_result_error(ctx, "rdt_train: out of memory while encoding the model", -1);
    return;
  }
  sqlite3_result_blob64(ctx, blob, size, free);
}
