/*
** sql_train.c - the training session (sql_train.h) and the rdt_train
** aggregate, its exploratory form.
**
** Contract:
**   1. Options are validated, the model size checked against the
**      connection's length limit and the ledger charged before any private
**      row is used; the charge commits first (sql_ledger.c).
**   2. Every row is counted (rows are never stored, except DiPriMe's
**      bounded buffer); a row's values never cause an error (the rules of
**      sql/reference.md), and memory is the only other failure.
**   3. The final step adds the noise, encodes the model and wipes the exact
**      counts; if the noise cannot be set up, nothing is released.
**   4. RDT#'s public rows come from "public_query", which may read only
**      the tables listed in "public_tables" (checked on its compiled
**      program before it runs).
**   5. The aggregate sees its options only with its first row: an empty
**      input is an error, which reveals emptiness (and with GROUP BY the
**      groups) for free. So the aggregate refuses "ledger": charged training
**      goes through rdt_fit (sql_fit.c), which sees its options first.
**   6. sqlite3_interrupt() and the progress handler reach the steps that run
**      in C after the rows (and the structure's draw before them) through
**      sql_cancel.h: a training stopped there fails with SQLITE_INTERRUPT,
**      releases nothing and wipes its state like any failure; the rows the
**      training thread has not counted yet are dropped (train_worker.h).
*/
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/diprime.h"
#include "core/forest_kind.h"
#include "core/matrix.h"
#include "core/model.h"
#include "core/options.h"
#include "core/row_sample.h"
#include "core/sharp.h"
#include "core/train_worker.h"
#include "core/tree_selection.h"
#include "sql_cancel.h"
#include "sql_train.h"

/* Rows are counted in batches of RDT_TRAIN_CHUNK, tree by tree (cache-friendly);
** the buffer is the only per-row memory and its size is fixed. With "threads"
** 2 on a machine with more than one CPU, a worker thread counts one buffer
** while the steps fill the other (train_worker.h); the model is the same. */

struct rdt_train_session {
  int configured; /* schema and config hold the parsed options */
  int built;      /* the forest is built: schema and config moved into it */
  rdt_schema schema;
  rdt_config config;
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
  rdt_row_sample sample;    /* which DiPriMe rows are kept (k == 0: not started) */
  /* A registered learner (learner.h) instead of a forest: */
  const rdt_learner *learner;
  rdt_json *lopts;           /* its options, for start() */
  rdt_learn_common lcommon;
  void *lstate;              /* NULL until build */
  double *lx;                /* one cleaned row */
  char lledger[129];
  char llabel[RDT_MAX_NAME + 1];
  /* The ledger charge (its outcome is recorded after the call) and its note. */
  rdt_ledger_receipt receipt;
  char note[RDT_NOTE_MAX + 1];
  int depth_from_public; /* RDT#: the depth was chosen from the public rows */
  /* sqlite3_interrupt() and the progress handler while the structure is
  ** drawn, the noise added and the model encoded (sql_cancel.h). */
  rdt_sql_cancel cancel;
};

typedef struct rdt_train_session train_state;

rdt_train_session *rdt_train_session_new(void) { return calloc(1, sizeof(rdt_train_session)); }

const rdt_schema *rdt_train_schema(const rdt_train_session *s) { return s->built ? &s->forest.schema : &s->schema; }
const char *rdt_train_label_name(const rdt_train_session *s) { return s->learner ? s->llabel : s->config.label; }
const char *rdt_train_ledger(const rdt_train_session *s) { return s->learner ? s->lledger : s->config.ledger; }

/* Whether public_query reads only the listed tables: every b-tree its
** compiled program opens (OpenRead, on a table or an index) must belong to
** a table of "public_tables"; a virtual table cannot be identified and is
** refused. Checked on EXPLAIN's listing, so an application's authorizer is
** left alone (SQLite cannot restore one that is replaced). */
static int table_is_public(const rdt_config *c, const char *schema, const char *table) {
  for (uint32_t at = 0; at < c->public_tables_len; at += (uint32_t)strlen(c->public_tables + at) + 1) {
    const char *name = c->public_tables + at, *dot = strchr(name, '.');
    if (dot) { /* "schema.table" */
      size_t k = (size_t)(dot - name);
      if (strlen(schema) == k && sqlite3_strnicmp(schema, name, (int)k) == 0 && rdt_name_equal(dot + 1, table))
        return 1;
    } else if (rdt_name_equal(name, table)) {
      return 1;
    }
  }
  return 0;
}

static int public_query_reads_public_tables(sqlite3 *db, const rdt_config *c, char *err, size_t en) {
  char *sql = sqlite3_mprintf("EXPLAIN %s", c->public_query);
  sqlite3_stmt *ex = NULL, *look = NULL;
  int ok = sql != NULL, rc = SQLITE_OK;
  if (!ok) snprintf(err, en, "out of memory");
  if (ok && sqlite3_prepare_v2(db, sql, -1, &ex, NULL) != SQLITE_OK) {
    snprintf(err, en, "\"public_query\" cannot be checked against \"public_tables\": %s", sqlite3_errmsg(db));
    ok = 0;
  }
  sqlite3_free(sql);
  while (ok && (rc = sqlite3_step(ex)) == SQLITE_ROW) {
    const char *op = (const char *)sqlite3_column_text(ex, 1);
    if (!op) continue;
    if (strcmp(op, "VOpen") == 0) {
      snprintf(err, en, "\"public_query\" reads a virtual table; it may read only the tables of \"public_tables\"");
      ok = 0;
      break;
    }
    if (strcmp(op, "OpenRead") != 0 && strcmp(op, "ReopenIdx") != 0) continue;
    sqlite3_int64 root = sqlite3_column_int64(ex, 3);
    /* The database by its index (P3), then the table owning the b-tree. */
    char schema[256] = "";
    ok = sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE seq = ?1", -1, &look, NULL) == SQLITE_OK;
    if (ok) {
      sqlite3_bind_int64(look, 1, sqlite3_column_int64(ex, 4));
      if (sqlite3_step(look) == SQLITE_ROW && sqlite3_column_text(look, 0))
        snprintf(schema, sizeof schema, "%s", (const char *)sqlite3_column_text(look, 0));
      sqlite3_finalize(look);
      look = NULL;
    }
    char *q = ok && schema[0]
                  ? sqlite3_mprintf("SELECT tbl_name FROM \"%w\".sqlite_schema WHERE rootpage = ?1", schema)
                  : NULL;
    ok = q && sqlite3_prepare_v2(db, q, -1, &look, NULL) == SQLITE_OK;
    sqlite3_free(q);
    if (!ok) {
      snprintf(err, en, "\"public_query\" cannot be checked against \"public_tables\": %s",
               schema[0] ? sqlite3_errmsg(db) : "unknown database");
      break;
    }
    sqlite3_bind_int64(look, 1, root);
    const char *table = sqlite3_step(look) == SQLITE_ROW ? (const char *)sqlite3_column_text(look, 0) : NULL;
    if (!table || !table_is_public(c, schema, table)) {
      snprintf(err, en, "\"public_query\" reads %s%.100s%s, which is not in \"public_tables\"; it may read only the "
               "tables listed there", table ? "table \"" : "a table of schema \"", table ? table : schema, "\"");
      ok = 0;
    }
    sqlite3_finalize(look);
    look = NULL;
  }
  if (ok && rc != SQLITE_DONE) {
    snprintf(err, en, "\"public_query\" cannot be checked against \"public_tables\": %s", sqlite3_errmsg(db));
    ok = 0;
  }
  sqlite3_finalize(ex);
  return ok;
}

/* RDT#: run "public_query" on this connection and keep its rows, cleaned
** by the row rules of the features. Its mistakes (not a read-only SELECT,
** a table outside "public_tables", wrong column count, no rows, too many)
** are parameter errors: the public rows are public. */
static int read_public_rows(sqlite3 *db, train_state *st, const rdt_schema *schema, const char *sql,
                            char *err, size_t en) {
  uint32_t nf = schema->n_features;
  sqlite3_stmt *stmt = rdt_sql_prepare_select(db, sql, -1, "\"public_query\"", err, en);
  if (!stmt) return 0;
  if (!public_query_reads_public_tables(db, &st->config, err, en)) {
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

static const char *algorithm_note(const rdt_config *c) { return rdt_forest_kind_of(c->algorithm)->note; }

/* What the kind's plan, build and release read: the buffered or public rows. */
static rdt_forest_input forest_input(const train_state *st) {
  rdt_forest_input in = {st->rows_x, st->rows_c, st->rows_y, st->n_rows, st->pub, st->n_pub, 0};
  in.public_n = st->config.public_n;
  return in;
}

/* The "note" of options that parsed: read once more, here, so that the
** core's structures need not carry it. */
static int read_note(train_state *st, const char *json, size_t len, char *err, size_t en) {
  char jerr[16];
  rdt_json *root = rdt_json_parse(json, len, jerr, sizeof jerr);
  int ok = root && rdt_options_note(root, st->note, sizeof st->note, err, en);
  if (!root) snprintf(err, en, "out of memory");
  rdt_json_free(root);
  return ok;
}

static int configure_options(train_state *st, sqlite3 *db, const char *json, size_t len, char *err, size_t en) {
  rdt_schema *schema = &st->schema;
  rdt_config *config = &st->config;
  if (rdt_options_learner(json, len, &st->learner)) { /* a registered learner: its own options */
    if (!rdt_options_parse_learner(json, len, st->learner, &st->lopts, schema, &st->lcommon, st->lledger,
                                   sizeof st->lledger, st->llabel, err, en))
      return 0;
    st->configured = 1;
    if (st->lledger[0] && !st->lcommon.is_private) {
      snprintf(err, en, "a non-private model (\"epsilon\": null) cannot be charged to a ledger");
      return 0;
    }
    return 1;
  }
  if (!rdt_options_parse(json, len, schema, config, err, en)) return 0;
  st->configured = 1;
  /* Size check before any allocation proportional to the model (a matrix
  ** forest's size is known once its structure is drawn: checked in build). */
  rdt_forest sizing;
  memset(&sizing, 0, sizeof sizing);
  sizing.schema = *schema;
  sizing.config = *config;
  sizing.n_leaves = (uint32_t)1 << config->depth;
  sizing.n_internal = sizing.n_leaves - 1;
  const rdt_forest_kind *kind = rdt_forest_kind_of(config->algorithm);
  uint64_t size = kind->multiway ? 0 : rdt_model_size(&sizing);
  int limit = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  if (size > (uint64_t)limit) {
    snprintf(err, en,
             "model too large: %u trees of depth %u with %u classes need %llu bytes, above this connection's "
             "SQLITE_LIMIT_LENGTH of %d; use fewer trees or a smaller depth",
             config->trees, config->depth, schema->n_classes, (unsigned long long)size, limit);
    return 0;
  }
  if (kind->check && !kind->check(config, schema, err, en)) return 0;
  if (config->ledger[0] && !config->is_private) {
    snprintf(err, en, "a non-private model (\"epsilon\": null) cannot be charged to a ledger");
    return 0;
  }
  return 1;
}

int rdt_train_configure(rdt_train_session *st, sqlite3 *db, const char *json, size_t len, char *err, size_t en) {
  return configure_options(st, db, json, len, err, en) && read_note(st, json, len, err, en);
}

void rdt_train_get_facts(const rdt_train_session *st, rdt_train_facts *out) {
  memset(out, 0, sizeof *out);
  if (st->learner) {
    out->algorithm = st->learner->name;
    out->is_private = st->lcommon.is_private;
    out->seeded = st->lcommon.seeded;
    out->regression = st->lcommon.regression;
    out->target_min = st->lcommon.target_min;
    out->target_max = st->lcommon.target_max;
    return;
  }
  const rdt_config *c = &st->config;
  out->algorithm = algorithm_note(c);
  out->is_private = c->is_private;
  out->seeded = c->seeded;
  out->regression = c->task == RDT_TASK_REGRESSION;
  out->target_min = c->target_min;
  out->target_max = c->target_max;
  out->max_rows = rdt_forest_kind_of(c->algorithm)->buffers_rows ? c->max_rows : 0;
}

/* The ledger note's tail for a release with unit facts (unit.h). */
static void unit_note(const rdt_unit *u, char *out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  if (u->column[0])
    used = (size_t)snprintf(out, n, ", unit \"%.60s\" (at most %u rows each)", u->column, u->max_rows);
  if (u->n_private && used < n)
    snprintf(out + used, n - used, ", private bounds on %u features (epsilon %.6g)", u->n_private,
             rdt_eps_to_double(u->eps_bounds));
}

const rdt_unit *rdt_train_unit(const rdt_train_session *s) { return s->learner ? &s->lcommon.unit : &s->config.unit; }

const unsigned char *rdt_train_seed_key(const rdt_train_session *s) {
  if (s->learner) return s->lcommon.seeded ? s->lcommon.seed_key : NULL;
  return s->config.seeded ? s->config.seed_key : NULL;
}

int rdt_train_set_bounds(rdt_train_session *s, uint32_t feature, double min, double max) {
  if (s->built || feature >= s->schema.n_features || s->schema.features[feature].type != RDT_FEATURE_NUMERIC ||
      !isfinite(min) || !isfinite(max) || !(min < max) || !isfinite(max - min))
    return 0;
  s->schema.features[feature].min = min;
  s->schema.features[feature].max = max;
  return 1;
}

int rdt_train_charge(rdt_train_session *st, sqlite3 *db, rdt_conn *conn, const char *fn, char *err, size_t en) {
  const rdt_config *config = &st->config;
  /* With unit facts the ledger is charged the whole ε (unit.h); the model's
  ** own eps is then its per-row share. */
  const rdt_unit *u = rdt_train_unit(st);
  char tail[160];
  unit_note(u, tail, sizeof tail);
  if (st->learner) {
    char lrequest[200];
    snprintf(lrequest, sizeof lrequest, "%s%s", st->learner->name, tail);
    return !st->lledger[0] || rdt_ledger_charge(db, conn, st->lledger, rdt_unit_active(u) ? u->eps_total :
                                                st->lcommon.eps, fn, lrequest, st->note, &st->receipt, err, en);
  }
  if (!config->ledger[0]) return 1;
  /* The request states what is known before the rows: an automatic depth
  ** is the largest the trees may keep. What was trained is recorded after. */
  char request[400];
  if (config->trees_auto)
    snprintf(request, sizeof request, "%s, trees chosen from the structure (%u at most), depth %u",
             algorithm_note(config), config->trees, config->depth);
  else if (config->auto_depth)
    snprintf(request, sizeof request, "%s, %u trees, depth chosen from a noisy row count (%u at most)",
             algorithm_note(config), config->trees, config->depth);
  else if (rdt_forest_kind_of(config->algorithm)->reads_public_rows && (!config->depth || !config->primary_trees))
    snprintf(request, sizeof request, "%s, trees and depth chosen from the public rows", algorithm_note(config));
  else
    snprintf(request, sizeof request, "%s, %u trees, depth %u", algorithm_note(config), config->trees,
             config->depth);
  size_t used = strlen(request);
  snprintf(request + used, sizeof request - used, "%s", tail);
  return rdt_ledger_charge(db, conn, config->ledger, rdt_unit_active(u) ? u->eps_total : config->eps, fn, request,
                           st->note, &st->receipt, err, en);
}

/* Appends one scalar member of a learner's rdt_info facts as JSON. */
static void append_scalar(sqlite3_str *o, const rdt_json *v) {
  sqlite3_str_appendchar(o, 1, ',');
  rdt_sql_json_string(o, v->key, strlen(v->key));
  sqlite3_str_appendchar(o, 1, ':');
  switch (v->type) {
    case RDT_JSON_STRING: rdt_sql_json_string(o, v->string, v->string_len); break;
    case RDT_JSON_NUMBER:
      if (v->is_integer) sqlite3_str_appendf(o, "%lld", v->integer);
      else rdt_sql_json_double(o, v->number);
      break;
    case RDT_JSON_TRUE: sqlite3_str_appendall(o, "true"); break;
    case RDT_JSON_FALSE: sqlite3_str_appendall(o, "false"); break;
    default: sqlite3_str_appendall(o, "null"); break;
  }
}

/* What the session actually trained, as a JSON object for the ledger, read
** from the trained state after finish: the depth an automatic depth chose,
** the trees a matrix forest chose, auto's pick, a tree's depth used. All of
** it is in the released model (rdt_info), so the ledger tells no more. */
static char *trained_json(const train_state *st) {
  sqlite3_str *o = sqlite3_str_new(NULL);
  if (st->learner) {
    sqlite3_str_appendall(o, "{\"algorithm\":");
    rdt_sql_json_string(o, st->learner->name, strlen(st->learner->name));
    /* The learner's own facts (learner.h, describe): its scalar members
    ** but the long "mechanism" text. */
    rdt_bytes d = {0};
    rdt_bytes_text(&d, "{");
    st->learner->describe(st->lstate, &d);
    rdt_bytes_text(&d, "\"\":null}");
    char jerr[16];
    rdt_json *facts = d.oom ? NULL : rdt_json_parse((const char *)d.p, d.n, jerr, sizeof jerr);
    for (size_t i = 0; facts && i < facts->n; i++) {
      const rdt_json *v = facts->items[i];
      if (v->key[0] && strcmp(v->key, "mechanism") != 0 && v->type != RDT_JSON_OBJECT && v->type != RDT_JSON_ARRAY)
        append_scalar(o, v);
    }
    rdt_json_free(facts);
    rdt_bytes_free(&d);
  } else {
    const rdt_forest *f = &st->forest;
    const rdt_config *c = &f->config;
    sqlite3_str_appendf(o, "{\"algorithm\":\"%s\"", rdt_forest_kind_of(c->algorithm)->option);
    if (f->matrix)
      sqlite3_str_appendf(o, ",\"noise\":\"matrix\",\"strategy\":\"%s\"", rdt_strategy_name(f->matrix->strategy));
    sqlite3_str_appendf(o, ",\"trees\":%u,\"depth\":%u,\"depth_from\":\"%s\"", c->trees, c->depth,
                        c->auto_depth ? "noisy row count" : st->depth_from_public ? "public rows" : "options");
    if (f->sharp) sqlite3_str_appendf(o, ",\"primary_trees\":%u", c->primary_trees);
    if (f->tree_kept) sqlite3_str_appendf(o, ",\"voting_trees\":%u", f->n_kept);
    if (c->task == RDT_TASK_REGRESSION) sqlite3_str_appendall(o, ",\"task\":\"regression\"");
  }
  sqlite3_str_appendchar(o, 1, '}');
  if (sqlite3_str_errcode(o)) {
    sqlite3_free(sqlite3_str_finish(o));
    return NULL;
  }
  return sqlite3_str_finish(o);
}

int rdt_train_record(rdt_train_session *st, const unsigned char *blob, size_t size, char *err,
                     size_t en) {
  if (!st->receipt.id) return 1;
  char *trained = blob ? trained_json(st) : NULL;
  if (blob && !trained) {
    snprintf(err, en, "out of memory while describing the model for the ledger");
    rdt_ledger_record(&st->receipt, 0, NULL, 0, NULL, err, 0); /* failed, then */
    return 0;
  }
  int ok = rdt_ledger_record(&st->receipt, blob != NULL, blob, size, trained, err, en);
  sqlite3_free(trained);
  return ok;
}

int rdt_train_build(rdt_train_session *st, sqlite3 *db, char *err, size_t en) {
  rdt_config *config = &st->config;
  rdt_sql_cancel_init(&st->cancel, db);
  config->cancel = &st->cancel.core;
  if (st->learner) {
    err[0] = 0;
    st->lstate = st->learner->start(st->lopts, &st->schema, &st->lcommon, err, en);
    st->lx = malloc((st->schema.n_features ? st->schema.n_features : 1) * sizeof *st->lx);
    if (!st->lstate || !st->lx) {
      if (!err[0] || st->lstate) snprintf(err, en, "out of memory while starting \"%s\"", st->learner->name);
      return 0;
    }
    return 1;
  }
  const rdt_forest_kind *kind = rdt_forest_kind_of(config->algorithm);
  if (kind->reads_public_rows) {
    /* The public rows, before any private row is used. */
    if (!read_public_rows(db, st, &st->schema, config->public_query, err, en)) return 0;
    st->depth_from_public = config->depth == 0;
  }
  rdt_forest_input in = forest_input(st);
  if (kind->plan) kind->plan(config, &st->schema, &in); /* from public facts only */
  st->built = 1; /* the forest owns the schema from here, even on failure */
  if (!rdt_forest_init(&st->forest, &st->schema, config) ||
      !(st->xs = malloc((size_t)RDT_TRAIN_CHUNK * st->forest.schema.n_features * sizeof *st->xs))) {
    snprintf(err, en, "%s", st->forest.error[0] ? st->forest.error : "out of memory while building the forest");
    return 0;
  }
  if (kind->build && !kind->build(&st->forest, &in, err, en)) {
    if (!err[0]) snprintf(err, en, "out of memory while drawing the %s trees", kind->name);
    return 0;
  }
  uint64_t size;
  int limit = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  if (kind->multiway && (size = rdt_model_size(&st->forest)) > (uint64_t)limit) {
    snprintf(err, en,
             "model too large: %u multiway trees of depth %u with %llu leaves and %u classes need %llu bytes, above "
             "this connection's SQLITE_LIMIT_LENGTH of %d; use fewer trees, a smaller depth or fewer bins",
             config->trees, config->depth, (unsigned long long)rdt_forest_total_leaves(&st->forest),
             st->forest.schema.n_classes, (unsigned long long)size, limit);
    return 0;
  }
  /* No worker (no memory, no thread, one CPU) is not an error: the steps
  ** then count the rows themselves, with the same result. */
  if (config->threads == 2 && !kind->buffers_rows && sysconf(_SC_NPROCESSORS_ONLN) > 1)
    st->worker = rdt_train_worker_start(&st->forest);
  point_at_buffer(st);
  return 1;
}

/* Buffer one DiPriMe row. Row rules as for RDT; a regression target that is
** NULL or not a number drops the row (it is clamped into the target bounds
** later). Beyond "max_rows" rows, a uniform sample of max_rows of them is
** kept (row_sample.h: bottom-k of random priorities), so the row count never
** causes an error; diprime.h charges for the sampling whether or not it
** happens. Running out of memory while growing the buffer is an error about
** max_rows (a parameter). */
static int diprime_buffer_row(train_state *st, sqlite3_value *label, sqlite3_value **features, char *err,
                              size_t en) {
  rdt_forest *f = &st->forest;
  uint32_t nf = f->schema.n_features;
  double target = 0;
  long cls = 0;
  if (f->config.task == RDT_TASK_REGRESSION) {
    if (!rdt_sql_number(label, &target)) return 1;
  } else {
    cls = rdt_sql_class(&f->schema, label);
    if (cls < 0) return 1;
  }
  if (st->sample.k == 0 && /* the first kept row: the priorities' own stream, seeded with the model */
      !rdt_row_sample_init(&st->sample, f->config.max_rows, f->config.seeded ? f->config.seed_key : NULL,
                           "diprime-row-sample")) {
    snprintf(err, en, "\"max_rows\" is out of range"); /* cannot happen: options.c checks it */
    return 0;
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
      snprintf(err, en, "out of memory while buffering rows for DiPriMe; lower \"max_rows\"");
      return 0;
    }
    st->cap_rows = cap;
  }
  uint64_t slot;
  rdt_row_sample_result r = rdt_row_sample_offer(&st->sample, &slot);
  if (r == RDT_ROW_SAMPLE_NOMEM) {
    snprintf(err, en, "out of memory while buffering rows for DiPriMe; lower \"max_rows\"");
    return 0;
  }
  if (r == RDT_ROW_SAMPLE_SKIP) return 1;
  rdt_sql_features(&f->schema, features, st->rows_x + (size_t)slot * nf);
  st->rows_y[slot] = target;
  st->rows_c[slot] = (uint32_t)cls;
  st->n_rows = st->sample.size; /* slots 0 .. size - 1 hold the sample */
  return 1;
}

/* A learner's row: the same rules as a forest's. A class outside "classes"
** or a NULL label drops the row; a target that is not a number drops it,
** one outside the bounds is clamped. */
static void learner_row(train_state *st, sqlite3_value *label, sqlite3_value **features) {
  double target = 0;
  long cls = 0;
  if (st->lcommon.regression) {
    if (!rdt_sql_number(label, &target)) return;
    target = target < st->lcommon.target_min ? st->lcommon.target_min
             : target > st->lcommon.target_max ? st->lcommon.target_max : target;
  } else if ((cls = rdt_sql_class(&st->schema, label)) < 0) {
    return;
  }
  rdt_sql_features(&st->schema, features, st->lx);
  st->learner->row(st->lstate, st->lx, (uint32_t)cls, target);
}

int rdt_train_row(rdt_train_session *st, sqlite3_value *label, sqlite3_value **features, char *err, size_t en) {
  if (st->learner) {
    learner_row(st, label, features);
    return 1;
  }
  if (rdt_forest_kind_of(st->forest.config.algorithm)->buffers_rows) return diprime_buffer_row(st, label, features, err, en);
  /* Rows whose label is NULL or not in "classes" are dropped (documented). */
  long cls = rdt_sql_class(&st->forest.schema, label);
  if (cls < 0) return 1;
  rdt_sql_features(&st->forest.schema, features, st->fill_xs + (size_t)st->pending * st->forest.schema.n_features);
  st->fill_cls[st->pending++] = (uint32_t)cls;
  if (st->pending == st->fill_cap) count_buffered(st);
  return 1;
}

int rdt_train_interrupted(const rdt_train_session *s, sqlite3_context *ctx) {
  return s && rdt_sql_cancel_report(&s->cancel, ctx);
}

void rdt_train_session_free(rdt_train_session *st) {
  if (!st) return;
  rdt_ledger_receipt_free(&st->receipt);
  rdt_sql_cancel_free(&st->cancel);
  if (st->learner) { /* the learner wipes its own state */
    if (st->lstate) st->learner->free(st->lstate);
    if (st->lx) sodium_memzero(st->lx, (st->schema.n_features ? st->schema.n_features : 1) * sizeof *st->lx);
    free(st->lx);
    rdt_json_free(st->lopts);
    if (st->configured) rdt_schema_free(&st->schema);
    sodium_memzero(&st->lcommon, sizeof st->lcommon); /* holds the seed key */
    free(st);
    return;
  }
  rdt_train_worker_free(st->worker); /* joins the thread before the forest goes */
  st->worker = NULL;
  uint32_t nf = rdt_train_schema(st)->n_features;
  if (st->rows_x) { /* buffered rows are private */
    sodium_memzero(st->rows_x, (size_t)st->cap_rows * nf * sizeof *st->rows_x);
    sodium_memzero(st->rows_y, (size_t)st->cap_rows * sizeof *st->rows_y);
    sodium_memzero(st->rows_c, (size_t)st->cap_rows * sizeof *st->rows_c);
  }
  free(st->pub); /* public rows: nothing to wipe */
  free(st->rows_x);
  free(st->rows_y);
  free(st->rows_c);
  rdt_row_sample_free(&st->sample); /* its priorities would tell the row count */
  if (st->xs) /* buffered rows are private too */
    sodium_memzero(st->xs, (size_t)RDT_TRAIN_CHUNK * nf * sizeof *st->xs);
  free(st->xs);
  rdt_forest_wipe_counters(&st->forest); /* exact counts and tables are the private part of the state */
  if (st->built) rdt_forest_free(&st->forest);
  else if (st->configured) rdt_schema_free(&st->schema);
  sodium_memzero(&st->config, sizeof st->config); /* holds the seed key */
  free(st);
}

static unsigned char *learner_finish(train_state *st, size_t *size, char *err, size_t en) {
  rdt_rng noise;
  rdt_rng_init_for(&noise, st->lcommon.seeded ? st->lcommon.seed_key : NULL, "noise", 0);
  rdt_learned m;
  memset(&m, 0, sizeof m);
  m.learner = st->learner;
  m.state = st->lstate;
  m.schema = st->schema; /* borrowed: the session frees it */
  m.common = st->lcommon;
  /* A learner's own finishing step (ext/core/learners/) does not poll:
  ** the stop request is asked for before it and after it, and an
  ** interrupted finish releases nothing. */
  int released = !rdt_cancel_poll(&st->cancel.core, RDT_CANCEL_UNITS) && st->learner->finish(st->lstate, &noise) &&
                 !rdt_cancel_poll(&st->cancel.core, RDT_CANCEL_UNITS);
  rdt_rng_bytes(&noise, m.model_id, sizeof m.model_id); /* a fresh id (seeded: reproducible) */
  rdt_rng_clear(&noise);
  unsigned char *blob = released ? rdt_learned_encode(&m, size) : NULL;
  sodium_memzero(&m.common, sizeof m.common);
  if (!released)
    snprintf(err, en, "the noise could not be set up or memory ran out while releasing the model; nothing was "
                      "released");
  else if (!blob)
    snprintf(err, en, "out of memory while encoding the model");
  return blob;
}

unsigned char *rdt_train_finish(rdt_train_session *st, size_t *size, char *err, size_t en) {
  if (st->learner) return learner_finish(st, size, err, en);
  rdt_forest *f = &st->forest;
  /* One question before the last rows are counted: an interrupt during the
  ** row pass (or the statement's cleanup after one, which still calls this)
  ** must not wait for the worker to walk its buffers through large trees. */
  if (rdt_cancel_poll(&st->cancel.core, RDT_CANCEL_UNITS)) rdt_train_worker_abandon(st->worker);
  else if (st->pending) count_buffered(st);
  rdt_train_worker_free(st->worker); /* waits until every row is counted, or abandoned */
  st->worker = NULL;
  if (rdt_cancel_stopped(&st->cancel.core)) {
    snprintf(err, en, "interrupted; nothing was released");
    return NULL;
  }
  rdt_rng noise;
  rdt_rng_init_for(&noise, f->config.seeded ? f->config.seed_key : NULL, "noise", 0);
  rdt_forest_input in = forest_input(st);
  int released = rdt_forest_kind_of(f->config.algorithm)->release(f, &in, &noise);
  rdt_rng_clear(&noise);
  if (released) released = rdt_forest_select_trees(f); /* "keep_trees": post-processing of the release */
  if (!released) {
    /* Fail closed: a release whose noise could not be set up (or whose
    ** memory ran out) is never encoded. */
    snprintf(err, en, "the noise could not be set up or memory ran out while releasing the model; nothing was "
                      "released");
    return NULL;
  }
  unsigned char *blob = rdt_model_encode(f, size);
  if (!blob) snprintf(err, en, "out of memory while encoding the model");
  return blob;
}

/* ---- the rdt_train aggregate --------------------------------------------- */

typedef struct train_agg {
  rdt_train_session *session; /* NULL until the first row */
  int failed;                 /* an error was raised: later steps do nothing */
} train_agg;

static void agg_error(sqlite3_context *ctx, train_agg *a, const char *msg) {
  rdt_sql_error(ctx, "rdt_train", msg);
  a->failed = 1;
}

static int agg_start(sqlite3_context *ctx, train_agg *a, int argc, sqlite3_value **argv) {
  char err[640];
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  if (argc < 2) {
    agg_error(ctx, a, "expected rdt_train(options, label, x1, ..., xk)");
    return 0;
  }
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    snprintf(err, sizeof err, "the first argument must be the options, a JSON object as TEXT%s",
             rdt_sql_blob_hint(argv[0], 1));
    agg_error(ctx, a, err);
    return 0;
  }
  const char *json = (const char *)sqlite3_value_text(argv[0]);
  if (!json || !(a->session = rdt_train_session_new())) {
    sqlite3_result_error_nomem(ctx);
    a->failed = 1;
    return 0;
  }
  err[0] = 0;
  if (!rdt_train_configure(a->session, db, json, (size_t)sqlite3_value_bytes(argv[0]), err, sizeof err)) {
    agg_error(ctx, a, err);
    return 0;
  }
  const rdt_schema *schema = rdt_train_schema(a->session);
  if ((uint32_t)(argc - 2) != schema->n_features) {
    char *names = rdt_sql_feature_names(schema);
    snprintf(err, sizeof err,
             "expected %u feature arguments (%s: one per entry of \"features\", in order) after the options and "
             "the label, got %d", schema->n_features, names ? names : "...", argc - 2);
    sqlite3_free(names);
    agg_error(ctx, a, err);
    return 0;
  }
  if (rdt_unit_active(rdt_train_unit(a->session))) { /* they need the query form: sorting, a second pass */
    agg_error(ctx, a, "\"privacy_unit\" and \"bounds\": \"private\" need rdt_fit(options, query): a unit's rows "
                      "are bounded after sorting the query by unit, and private bounds read the rows once more before "
                      "training");
    return 0;
  }
  if (rdt_train_ledger(a->session)[0]) { /* Contract item 5 */
    agg_error(ctx, a, "\"ledger\" needs rdt_fit(options, query): the rdt_train aggregate sees its options only "
                      "with its first row, so an empty input could never be charged; rdt_fit charges first");
    return 0;
  }
  if (!rdt_train_build(a->session, db, err, sizeof err)) {
    if (rdt_train_interrupted(a->session, ctx)) a->failed = 1;
    else agg_error(ctx, a, err);
    return 0;
  }
  return 1;
}

void rdt_train_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  train_agg *a = sqlite3_aggregate_context(ctx, sizeof *a);
  char err[300];
  if (!a) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (a->failed) return;
  if (!a->session && !agg_start(ctx, a, argc, argv)) return;
  if (!rdt_train_row(a->session, argv[1], argv + 2, err, sizeof err)) agg_error(ctx, a, err);
}

void rdt_train_final(sqlite3_context *ctx) {
  train_agg *a = sqlite3_aggregate_context(ctx, 0);
  char err[300];
  if (!a || (!a->session && !a->failed)) {
    sqlite3_result_error(ctx,
                         "rdt_train: no rows reached rdt_train, so its options were never seen; use rdt_fit(options, "
                         "query), which trains on an empty input too",
                         -1);
    return;
  }
  if (!a->failed) {
    size_t size = 0;
    unsigned char *blob = rdt_train_finish(a->session, &size, err, sizeof err);
    if (blob) sqlite3_result_blob64(ctx, blob, size, free);
    else if (!rdt_train_interrupted(a->session, ctx)) rdt_sql_error(ctx, "rdt_train", err);
  }
  rdt_train_session_free(a->session);
  a->session = NULL;
}
