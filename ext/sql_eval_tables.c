/*
** sql_eval_tables.c - evaluation as tables, the way ML.CONFUSION_MATRIX and
** ML.ROC_CURVE return them: two eponymous, read-only table-valued functions
** over the caller's labelled rows.
**
**   SELECT actual, predicted, n FROM rdt_confusion(@m, 'SELECT * FROM test');
**   SELECT threshold, tpr, fpr FROM rdt_roc(@m, 'SELECT * FROM test');
**
** Contract:
**   1. Not a DP mechanism (as rdt_evaluate, sql_evaluate.c contract 1): an
**      exact function of the caller's rows, for the curator's eyes.
**   2. The query is rdt_evaluate(model, query)'s, run the same way by the
**      same code (rdt_eval_query): features and the true label (the model's
**      recorded label column) bound by name, other columns ignored, the
**      label rules and predictions of rdt_evaluate; skipped rows count in
**      neither table.
**   3. rdt_confusion: one row per (actual, predicted) pair of classes, zero
**      counts too, actual major, both in the order of the model's classes
**      and with their type; n sums to rdt_evaluate's "evaluated" and
**      equals its "confusion"[actual][predicted]. A regression model, or
**      more than EVAL_MAX_CONFUSION classes, is an error.
**   4. rdt_roc (two classes only; the positive class is the second listed,
**      as rdt_evaluate's AUC): a row is predicted positive when its
**      probability of the positive class (rdt_predict_proba's) is at least
**      threshold. One row per distinct probability seen, from the highest
**      down, after a first row at threshold +Inf (no row positive: the
**      point (0, 0)); the last row has every row positive. Columns: tpr =
**      tp / positives and fpr = fp / negatives (NULL without rows of that
**      class), and the counts tp, fp, tn, fn. The trapezoids under (fpr,
**      tpr) add up to rdt_evaluate's AUC (ties counting one half). A model
**      of another number of classes, or a regression model, is an error.
**   5. Everything is computed when the table is filtered (one pass of the
**      query); the rows are then read from memory. Errors are
**      "rdt_confusion: ..." / "rdt_roc: ...": the model's, the query's, a
**      missing argument, and a query that fails while it runs.
**   6. SQLITE_VTAB_DIRECTONLY, as rdt_predictions (sql_predictions.c,
**      contract 6): the query text is prepared outside the statement that
**      names the table.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sql_evaluate.h"

#define ARG_MODEL 1
#define ARG_QUERY 2

typedef enum { TABLE_CONFUSION, TABLE_ROC } table_kind;

typedef struct {
  sqlite3_vtab base;
  sqlite3 *db;
  rdt_conn *conn;
  table_kind kind;
} eval_vtab;

typedef struct {
  sqlite3_vtab_cursor base;
  rdt_model_handle *h;  /* a reference: the classes' values */
  sqlite3_int64 row, rows;
  uint32_t C;
  uint64_t *counts;     /* confusion: C x C, actual major */
  double *threshold;    /* roc: per point */
  uint64_t *tp, *fp;
  uint64_t positives, negatives;
} eval_cursor;

static const char *table_name(const eval_vtab *v) { return v->kind == TABLE_ROC ? "rdt_roc" : "rdt_confusion"; }

/* The first hidden column (model; query follows). */
static int first_hidden(const eval_vtab *v) { return v->kind == TABLE_ROC ? 7 : 3; }

static int eval_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err,
                        table_kind kind) {
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(db, kind == TABLE_ROC ? "CREATE TABLE x(threshold REAL, tpr REAL, fpr REAL, tp INTEGER, "
                                                       "fp INTEGER, tn INTEGER, fn INTEGER, model HIDDEN, query HIDDEN)"
                                                     : "CREATE TABLE x(actual, predicted, n INTEGER, model HIDDEN, "
                                                       "query HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  eval_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->db = db;
  v->conn = aux;
  v->kind = kind;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY); /* contract 6 */
  *out = &v->base;
  return SQLITE_OK;
}

static int confusion_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  return eval_connect(db, aux, argc, argv, out, err, TABLE_CONFUSION);
}

static int roc_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  return eval_connect(db, aux, argc, argv, out, err, TABLE_ROC);
}

static int eval_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int eval_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  return rdt_sql_two_args_best_index(info, first_hidden((eval_vtab *)tab), 100);
}

static int eval_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  eval_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(eval_cursor *c) {
  rdt_model_release(c->h);
  free(c->counts);
  free(c->threshold);
  free(c->tp);
  free(c->fp);
  sqlite3_vtab_cursor base = c->base;
  memset(c, 0, sizeof *c);
  c->base = base;
}

static int eval_close(sqlite3_vtab_cursor *cur) {
  cursor_reset((eval_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* The table's error "<table>: <msg>" (msg from sqlite3_mprintf; NULL: no memory). */
static int fail(sqlite3_vtab_cursor *cur, char *msg) {
  sqlite3_free(cur->pVtab->zErrMsg);
  cur->pVtab->zErrMsg = msg ? sqlite3_mprintf("%s: %s", table_name((eval_vtab *)cur->pVtab), msg) : NULL;
  sqlite3_free(msg);
  return cur->pVtab->zErrMsg ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Contract 4: the points of the curve from the sorted scores. */
static int roc_points(eval_cursor *c, eval_acc *a) {
  rdt_eval_sort_scores(a);
  const double *neg = a->score[0], *pos = a->score[1];
  size_t nn = a->n_score[0], np = a->n_score[1], most = nn + np + 1;
  c->threshold = malloc(most * sizeof *c->threshold);
  c->tp = malloc(most * sizeof *c->tp);
  c->fp = malloc(most * sizeof *c->fp);
  if (!c->threshold || !c->tp || !c->fp) return 0;
  c->positives = np;
  c->negatives = nn;
  size_t i = np, j = nn, k = 0; /* scores above index i (j) are counted */
  uint64_t tp = 0, fp = 0;
  c->threshold[k] = INFINITY;
  c->tp[k] = c->fp[k] = 0;
  k++;
  while (i > 0 || j > 0) {
    double t = i == 0 ? neg[j - 1] : j == 0 ? pos[i - 1] : pos[i - 1] > neg[j - 1] ? pos[i - 1] : neg[j - 1];
    while (i > 0 && pos[i - 1] >= t) i--, tp++;
    while (j > 0 && neg[j - 1] >= t) j--, fp++;
    c->threshold[k] = t;
    c->tp[k] = tp;
    c->fp[k] = fp;
    k++;
  }
  c->rows = (sqlite3_int64)k;
  return 1;
}

static int eval_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_str;
  (void)argc;
  eval_cursor *c = (eval_cursor *)cur;
  eval_vtab *v = (eval_vtab *)cur->pVtab;
  cursor_reset(c);
  if (idx != (ARG_MODEL | ARG_QUERY))
    return fail(cur, sqlite3_mprintf("expected %s(model, query): the model BLOB and a SELECT as TEXT", table_name(v)));
  char err[512];
  int rc;
  rdt_model_handle *h = rdt_model_lookup(v->conn, argv[0], &rc, err, sizeof err);
  if (!h) return rc == SQLITE_NOMEM ? SQLITE_NOMEM : fail(cur, sqlite3_mprintf("%s", err));
  uint32_t C = rdt_score_schema(h)->n_classes;
  const char *refuse = NULL;
  if (rdt_score_is_regression(h))
    refuse = v->kind == TABLE_ROC ? "a regression model has no ROC curve; use rdt_evaluate (MSE, MAE, R²)"
                                  : "a regression model has no confusion matrix; use rdt_evaluate (MSE, MAE, R²)";
  else if (v->kind == TABLE_ROC && C != 2)
    refuse = "a ROC curve needs a model of two classes; for more, use rdt_confusion or rdt_evaluate's per_class";
  else if (v->kind == TABLE_CONFUSION && C > EVAL_MAX_CONFUSION)
    refuse = "the model has more than 256 classes; use rdt_evaluate's per_class";
  if (refuse) {
    rdt_model_release(h);
    return fail(cur, sqlite3_mprintf("%s", refuse));
  }
  c->h = h;
  h->refs++; /* the accumulator's own reference */
  eval_acc a;
  char *ignored = NULL;
  rc = rdt_eval_start(&a, h) ? rdt_eval_query(v->db, v->conn, &a, argv[1], &ignored, err, sizeof err) : SQLITE_NOMEM;
  sqlite3_free(ignored);
  if (rc == SQLITE_OK && v->kind == TABLE_CONFUSION) {
    c->C = C;
    c->rows = (sqlite3_int64)C * C;
    c->counts = a.confusion; /* taken over */
    a.confusion = NULL;
  } else if (rc == SQLITE_OK && !roc_points(c, &a)) {
    rc = SQLITE_NOMEM;
  }
  rdt_eval_free(&a);
  if (rc == SQLITE_ERROR) return fail(cur, sqlite3_mprintf("%s", err));
  return rc;
}

static int eval_next(sqlite3_vtab_cursor *cur) {
  ((eval_cursor *)cur)->row++;
  return SQLITE_OK;
}

static int eval_eof(sqlite3_vtab_cursor *cur) {
  eval_cursor *c = (eval_cursor *)cur;
  return c->row >= c->rows;
}

static int eval_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((eval_cursor *)cur)->row;
  return SQLITE_OK;
}

static void result_share(sqlite3_context *ctx, uint64_t part, uint64_t whole) {
  if (whole) sqlite3_result_double(ctx, (double)part / (double)whole);
  else sqlite3_result_null(ctx);
}

static int eval_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  eval_cursor *c = (eval_cursor *)cur;
  eval_vtab *v = (eval_vtab *)cur->pVtab;
  if (col >= first_hidden(v)) { /* the hidden arguments are not echoed */
    sqlite3_result_null(ctx);
    return SQLITE_OK;
  }
  if (v->kind == TABLE_CONFUSION) {
    const rdt_value *cls = rdt_score_schema(c->h)->classes;
    uint32_t actual = (uint32_t)(c->row / c->C), predicted = (uint32_t)(c->row % c->C);
    if (col == 0) rdt_sql_result_class(ctx, &cls[actual]);
    else if (col == 1) rdt_sql_result_class(ctx, &cls[predicted]);
    else sqlite3_result_int64(ctx, (sqlite3_int64)c->counts[c->row]);
    return SQLITE_OK;
  }
  uint64_t tp = c->tp[c->row], fp = c->fp[c->row];
  switch (col) {
    case 0: sqlite3_result_double(ctx, c->threshold[c->row]); break;
    case 1: result_share(ctx, tp, c->positives); break;
    case 2: result_share(ctx, fp, c->negatives); break;
    case 3: sqlite3_result_int64(ctx, (sqlite3_int64)tp); break;
    case 4: sqlite3_result_int64(ctx, (sqlite3_int64)fp); break;
    case 5: sqlite3_result_int64(ctx, (sqlite3_int64)(c->negatives - fp)); break;
    default: sqlite3_result_int64(ctx, (sqlite3_int64)(c->positives - tp)); break;
  }
  return SQLITE_OK;
}

#define EVAL_MODULE(connect)                                                                                      \
  {                                                                                                               \
    .iVersion = 0, .xConnect = connect, .xBestIndex = eval_best_index, .xDisconnect = eval_disconnect,            \
    .xOpen = eval_open, .xClose = eval_close, .xFilter = eval_filter, .xNext = eval_next, .xEof = eval_eof,      \
    .xColumn = eval_column, .xRowid = eval_rowid,                                                                 \
  }

static sqlite3_module confusion_module = EVAL_MODULE(confusion_connect);
static sqlite3_module roc_module = EVAL_MODULE(roc_connect);

int rdt_register_eval_tables(sqlite3 *db, rdt_conn *conn, void (*release)(void *)) {
  conn->refs++; /* the caller's reference is the first module's; this one the second's */
  int rc = sqlite3_create_module_v2(db, "rdt_confusion", &confusion_module, conn, release);
  if (rc != SQLITE_OK) { /* SQLite released the first; the second is never registered */
    release(conn);
    return rc;
  }
  return sqlite3_create_module_v2(db, "rdt_roc", &roc_module, conn, release);
}
