/*
** sql_predictions.c - rdt_predictions(model, query): an eponymous, read-only
** table-valued function with one row per row of the caller's query, the
** way ML.PREDICT returns predictions beside the input:
**
**   SELECT key, predicted, probabilities
**   FROM rdt_predictions((SELECT model FROM models WHERE name = 'v1'), 'SELECT * FROM visits');
**
** Contract:
**   1. Post-processing of a released model: no training rows, no budget,
**      no noise. predicted is exactly rdt_predict's for the row's features,
**      probabilities exactly rdt_predict_proba's JSON (NULL for a
**      regression model), for every model kind (sql_scoring.c); a
**      probabilistic vote draws one coin per row, shared by both columns.
**   2. The query is the caller's: one read-only statement, prepared on this
**      connection (rdt_sql_prepare_select) when the table is filtered, and
**      run once, its rows in its order. Its columns bind by name as
**      rdt_fit's (sql_columns.c, case ignored): every feature the model
**      records must be a column (an error naming it, before any row); any
**      other column is ignored, so SELECT * of a table with an id and the
**      label works, at any width up to SQLite's column limit.
**   3. key is the query's first column, as it is (type and value), to join
**      the predictions back to the input; rowid counts the rows from 0.
**   4. The model is decoded once per filter (rdt_model_lookup: the
**      connection's cache, compared byte for byte once), never per row, so
**      a model from a subquery costs what a bound one costs.
**   5. Errors are "rdt_predictions: ...": the model's (NULL, not a BLOB,
**      corrupted or foreign, as rdt_predict's), the query's (not TEXT, does
**      not prepare, not one read-only SELECT, a missing or repeated
**      column), a missing argument, and a query that fails while it runs.
**      Row values never cause one (the row rules of rdt_predict).
**   6. SQLITE_VTAB_DIRECTONLY: the query text is prepared here, outside the
**      statement that names the table, so SQLite's own guards for views and
**      triggers (a DIRECTONLY function such as writefile()) would not apply
**      to it; a schema-borne view or trigger must not run caller SQL.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdt_sql.h"

enum { COL_KEY, COL_PREDICTED, COL_PROBABILITIES, COL_MODEL, COL_QUERY };
#define ARG_MODEL 1 /* idxNum bits: the arguments given */
#define ARG_QUERY 2

typedef struct {
  sqlite3_vtab base;
  sqlite3 *db;
  rdt_conn *conn;
} pred_vtab;

typedef struct {
  sqlite3_vtab_cursor base;
  rdt_model_handle *h;    /* a reference, while the query runs */
  sqlite3_stmt *stmt;     /* the caller's query */
  int *col;               /* per feature: its column */
  sqlite3_value **vals;   /* per feature: this row's value */
  double *xs;             /* the cleaned features, then the scoring scratch */
  int regression, eof, scored;
  uint32_t cls;           /* this row's class (classification) ... */
  double value;           /* ... or value (regression), once scored */
  sqlite3_int64 row;
} pred_cursor;

static int pred_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(key, predicted, probabilities, model HIDDEN, query HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  pred_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->db = db;
  v->conn = aux;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY); /* contract 6 */
  *out = &v->base;
  return SQLITE_OK;
}

static int pred_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int pred_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  /* One pass over the query: costly enough to stay the outer loop of a
  ** join back to the input (which then looks the key up). */
  return rdt_sql_two_args_best_index(info, COL_MODEL, 1000000);
}

static int pred_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  pred_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  c->eof = 1;
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(pred_cursor *c) {
  sqlite3_finalize(c->stmt);
  rdt_model_release(c->h);
  free(c->col);
  free(c->vals);
  free(c->xs);
  c->stmt = NULL;
  c->h = NULL;
  c->col = NULL;
  c->vals = NULL;
  c->xs = NULL;
  c->regression = c->scored = 0;
  c->eof = 1;
  c->row = 0;
}

static int pred_close(sqlite3_vtab_cursor *cur) {
  pred_cursor *c = (pred_cursor *)cur;
  cursor_reset(c);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* Sets the table's error "rdt_predictions: <msg>" (msg from sqlite3_mprintf,
** NULL when memory ran out). */
static int fail(sqlite3_vtab_cursor *cur, char *msg) {
  sqlite3_free(cur->pVtab->zErrMsg);
  cur->pVtab->zErrMsg = msg ? sqlite3_mprintf("rdt_predictions: %s", msg) : NULL;
  sqlite3_free(msg);
  return cur->pVtab->zErrMsg ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* The next row of the query, or eof; an error of the query while it runs
** is the table's (contract 5). */
static int step(pred_cursor *c) {
  int rc = sqlite3_step(c->stmt);
  c->scored = 0;
  if (rc == SQLITE_ROW) return SQLITE_OK;
  c->eof = 1;
  if (rc == SQLITE_DONE) return SQLITE_OK;
  if (rc == SQLITE_INTERRUPT || rc == SQLITE_NOMEM) return rc;
  pred_vtab *v = (pred_vtab *)c->base.pVtab;
  return fail(&c->base, sqlite3_mprintf("the query failed while it ran: %s", sqlite3_errmsg(v->db)));
}

static int pred_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_str;
  (void)argc;
  pred_cursor *c = (pred_cursor *)cur;
  pred_vtab *v = (pred_vtab *)cur->pVtab;
  cursor_reset(c);
  if (idx != (ARG_MODEL | ARG_QUERY))
    return fail(cur, sqlite3_mprintf("expected rdt_predictions(model, query): the model BLOB and a SELECT as TEXT"));
  char err[300];
  int rc;
  if (!(c->h = rdt_model_lookup(v->conn, argv[0], &rc, err, sizeof err)))
    return rc == SQLITE_NOMEM ? SQLITE_NOMEM : fail(cur, sqlite3_mprintf("%s", err));
  sqlite3_value *q = argv[1];
  const char *sql = sqlite3_value_type(q) == SQLITE_TEXT ? (const char *)sqlite3_value_text(q) : NULL;
  if (!sql) {
    if (sqlite3_value_type(q) == SQLITE_TEXT) return SQLITE_NOMEM;
    return fail(cur, sqlite3_mprintf("the second argument must be the query, one SELECT as TEXT"));
  }
  if (!(c->stmt = rdt_sql_prepare_select(v->db, sql, sqlite3_value_bytes(q), "the query", err, sizeof err)))
    return fail(cur, sqlite3_mprintf("%s", err));
  const rdt_schema *s = rdt_score_schema(c->h);
  c->regression = rdt_score_is_regression(c->h);
  c->col = malloc((s->n_features ? s->n_features : 1) * sizeof *c->col);
  c->vals = malloc((s->n_features ? s->n_features : 1) * sizeof *c->vals);
  c->xs = malloc((s->n_features + rdt_score_scratch(c->h)) * sizeof *c->xs);
  if (!c->col || !c->vals || !c->xs) return SQLITE_NOMEM;
  char *ignored = NULL;
  if (!rdt_sql_bind_columns(c->stmt, s, NULL, 0, NULL, c->col, &ignored, NULL, err, sizeof err))
    return fail(cur, sqlite3_mprintf("%s", err));
  sqlite3_free(ignored); /* nothing to report them in: a query column is the caller's to keep */
  c->eof = 0;
  return step(c);
}

static int pred_next(sqlite3_vtab_cursor *cur) {
  pred_cursor *c = (pred_cursor *)cur;
  c->row++;
  return step(c);
}

static int pred_eof(sqlite3_vtab_cursor *cur) { return ((pred_cursor *)cur)->eof; }

static int pred_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((pred_cursor *)cur)->row;
  return SQLITE_OK;
}

/* This row's prediction, computed on the first column that needs it. */
static void score(pred_cursor *c) {
  if (c->scored) return;
  const rdt_schema *s = rdt_score_schema(c->h);
  for (uint32_t j = 0; j < s->n_features; j++) c->vals[j] = sqlite3_column_value(c->stmt, c->col[j]);
  rdt_sql_features(s, c->vals, c->xs);
  double *scratch = c->xs + s->n_features; /* the probabilities land here */
  if (c->regression) c->value = rdt_score_value(c->h, c->xs, scratch);
  else c->cls = rdt_score_class(c->h, c->xs, scratch, &((pred_vtab *)c->base.pVtab)->conn->coin);
  c->scored = 1;
}

static int pred_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  pred_cursor *c = (pred_cursor *)cur;
  const rdt_schema *s = rdt_score_schema(c->h);
  switch (col) {
    case COL_KEY: sqlite3_result_value(ctx, sqlite3_column_value(c->stmt, 0)); break;
    case COL_PREDICTED:
      score(c);
      if (c->regression) sqlite3_result_double(ctx, c->value);
      else rdt_sql_result_class(ctx, &s->classes[c->cls]);
      break;
    case COL_PROBABILITIES:
      if (c->regression) {
        sqlite3_result_null(ctx);
        break;
      }
      score(c);
      rdt_sql_result_proba(ctx, s, c->xs + s->n_features);
      break;
    default: sqlite3_result_null(ctx); break; /* the hidden arguments are not echoed */
  }
  return SQLITE_OK;
}

static sqlite3_module pred_module = {
    .iVersion = 0,
    .xConnect = pred_connect,
    .xBestIndex = pred_best_index,
    .xDisconnect = pred_disconnect,
    .xOpen = pred_open,
    .xClose = pred_close,
    .xFilter = pred_filter,
    .xNext = pred_next,
    .xEof = pred_eof,
    .xColumn = pred_column,
    .xRowid = pred_rowid,
};

int rdt_register_predictions(sqlite3 *db, rdt_conn *conn, void (*release)(void *)) {
  return sqlite3_create_module_v2(db, "rdt_predictions", &pred_module, conn, release);
}
