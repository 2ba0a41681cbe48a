/*
** sql_proba.c - rdt_proba(model, x1, ..., xk): an eponymous, read-only
** table-valued function with one row (class, p) per class of the model,
** in the order of its classes:
**
**   SELECT class, p FROM rdt_proba(@m, 0.5, 'red') ORDER BY p DESC LIMIT 1;
**
** Contract:
**   1. Post-processing of a released model: no training rows, no budget.
**      p is exactly the probability rdt_predict_proba computes for the
**      class (its JSON prints it with 15 significant digits), for every
**      model kind (forests and learner models), and class has the type of
**      the model's classes.
**   2. The arguments are the hidden columns model, x1, x2, ... in order;
**      x1..xk follow rdt_predict's row-value rules (rdt_sql_features).
**   3. A NULL model gives no rows (as the inspection tables); a non-BLOB,
**      corrupted or foreign model, a regression model, or a number of
**      feature arguments other than the model's is an error "rdt_proba: ...".
**   4. At most RDT_MAX_FEATURES feature arguments, fewer when the
**      connection's column limit is lower (the hidden columns are declared).
** The model is found in the connection's cache (rdt_model_lookup), so a
** join that calls it once per row decodes it once; SQLite still hands a
** non-constant BLOB over on every row, compared byte for byte.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdt_sql.h"

/* class, p, model: the x columns start after them. */
#define PROBA_FIRST_X 3

typedef struct {
  sqlite3_vtab base;
  rdt_conn *conn;
  int n_x; /* hidden feature columns declared */
} proba_vtab;

typedef struct {
  sqlite3_vtab_cursor base;
  rdt_model_handle *h; /* a reference, while rows remain */
  double *proba;
  sqlite3_int64 row, rows;
} proba_cursor;

static int proba_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  int limit = sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1) - PROBA_FIRST_X;
  int n_x = limit < RDT_MAX_FEATURES ? limit : RDT_MAX_FEATURES;
  if (n_x < 1) n_x = 1;
  sqlite3_str *s = sqlite3_str_new(db);
  sqlite3_str_appendall(s, "CREATE TABLE x(class, p REAL, model HIDDEN");
  for (int i = 1; i <= n_x; i++) sqlite3_str_appendf(s, ", x%d HIDDEN", i);
  sqlite3_str_appendchar(s, 1, ')');
  char *sql = sqlite3_str_finish(s);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_declare_vtab(db, sql);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) return rc;
  proba_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->conn = aux;
  v->n_x = n_x;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *out = &v->base;
  return SQLITE_OK;
}

static int proba_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

/* idxNum: 0 without a model (no rows), else 1 + the number of features. */
static int proba_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  int model = -1, n = 0, last = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->iColumn < PROBA_FIRST_X - 1 || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c->usable) return SQLITE_CONSTRAINT; /* an argument is not known yet: try another plan */
    int k = c->iColumn - (PROBA_FIRST_X - 1); /* 0: model, i: x_i */
    if (k == 0) {
      if (model < 0) model = i;
      continue;
    }
    int dup = 0;
    for (int q = 0; q < i; q++)
      dup |= info->aConstraint[q].iColumn == c->iColumn && info->aConstraint[q].op == SQLITE_INDEX_CONSTRAINT_EQ;
    if (dup) continue; /* x = a AND x = b: SQLite checks the second */
    info->aConstraintUsage[i].argvIndex = 1 + k;
    info->aConstraintUsage[i].omit = 1;
    n++;
    if (k > last) last = k;
  }
  if (last != n) { /* only by WHERE x3 = ... without x1, x2 */
    sqlite3_free(tab->zErrMsg);
    tab->zErrMsg = sqlite3_mprintf("rdt_proba: the feature arguments must be x1, x2, ... without a gap");
    return SQLITE_ERROR;
  }
  if (model >= 0) {
    info->aConstraintUsage[model].argvIndex = 1;
    info->aConstraintUsage[model].omit = 1;
    info->estimatedCost = 100;
    info->estimatedRows = 10;
    info->idxNum = 1 + n;
  } else {
    for (int i = 0; i < info->nConstraint; i++) {
      info->aConstraintUsage[i].argvIndex = 0;
      info->aConstraintUsage[i].omit = 0;
    }
    info->estimatedCost = 1e12; /* no model: no rows */
    info->idxNum = 0;
  }
  return SQLITE_OK;
}

static int proba_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  proba_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(proba_cursor *c) {
  rdt_model_release(c->h);
  free(c->proba);
  c->h = NULL;
  c->proba = NULL;
  c->row = c->rows = 0;
}

static int proba_close(sqlite3_vtab_cursor *cur) {
  cursor_reset((proba_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int filter_error(sqlite3_vtab_cursor *cur, char *msg) {
  sqlite3_free(cur->pVtab->zErrMsg);
  cur->pVtab->zErrMsg = msg;
  return msg ? SQLITE_ERROR : SQLITE_NOMEM;
}

static int proba_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_str;
  proba_cursor *c = (proba_cursor *)cur;
  proba_vtab *v = (proba_vtab *)cur->pVtab;
  cursor_reset(c);
  if (idx < 1 || argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;
  char err[256];
  int rc;
  c->h = rdt_model_lookup(v->conn, argv[0], &rc, err, sizeof err);
  if (!c->h) return rc == SQLITE_NOMEM ? SQLITE_NOMEM : filter_error(cur, sqlite3_mprintf("rdt_proba: %s", err));
  const rdt_schema *s = rdt_score_schema(c->h);
  if (rdt_score_is_regression(c->h))
    return filter_error(cur, sqlite3_mprintf("rdt_proba: a regression model has no class probabilities; use "
                                             "rdt_predict"));
  if ((uint32_t)(argc - 1) != s->n_features) {
    char *names = rdt_sql_feature_names(s);
    char *m = names ? sqlite3_mprintf("rdt_proba: this model takes %u feature%s (%s) after the model, got %d",
                                      s->n_features, s->n_features == 1 ? "" : "s", names, argc - 1)
                    : NULL;
    sqlite3_free(names);
    return m ? filter_error(cur, m) : SQLITE_NOMEM;
  }
  double *xs = malloc((s->n_features + rdt_score_scratch(c->h)) * sizeof *xs);
  c->proba = malloc(s->n_classes * sizeof *c->proba);
  if (!xs || !c->proba) {
    free(xs);
    return SQLITE_NOMEM;
  }
  rdt_sql_features(s, argv + 1, xs);
  rdt_score_proba(c->h, xs, xs + s->n_features);
  memcpy(c->proba, xs + s->n_features, s->n_classes * sizeof *c->proba);
  free(xs);
  c->rows = s->n_classes;
  return SQLITE_OK;
}

static int proba_next(sqlite3_vtab_cursor *cur) {
  ((proba_cursor *)cur)->row++;
  return SQLITE_OK;
}

static int proba_eof(sqlite3_vtab_cursor *cur) {
  proba_cursor *c = (proba_cursor *)cur;
  return c->row >= c->rows;
}

static int proba_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((proba_cursor *)cur)->row;
  return SQLITE_OK;
}

static int proba_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  proba_cursor *c = (proba_cursor *)cur;
  if (col == 0) rdt_sql_result_class(ctx, &rdt_score_schema(c->h)->classes[c->row]);
  else if (col == 1) sqlite3_result_double(ctx, c->proba[c->row]);
  else sqlite3_result_null(ctx); /* the hidden arguments are not echoed */
  return SQLITE_OK;
}

static sqlite3_module proba_module = {
    .iVersion = 0,
    .xConnect = proba_connect,
    .xBestIndex = proba_best_index,
    .xDisconnect = proba_disconnect,
    .xOpen = proba_open,
    .xClose = proba_close,
    .xFilter = proba_filter,
    .xNext = proba_next,
    .xEof = proba_eof,
    .xColumn = proba_column,
    .xRowid = proba_rowid,
};

int rdt_register_proba(sqlite3 *db, rdt_conn *conn, void (*release)(void *)) {
  return sqlite3_create_module_v2(db, "rdt_proba", &proba_module, conn, release);
}
