/*
** sql_evaluate.c - how well a released model does on the caller's own
** labelled rows (the row-by-row metrics are shared through sql_evaluate.h
** with the tables of sql_eval_tables.c):
**
**   rdt_evaluate(model, label, x1, ..., xk)   aggregate, features by position
**   rdt_evaluate(model, query)                the query's columns bound by name
**   rdt_importance(model, query [, options])  permutation importance, by name
**
** Contract:
**   1. Not a DP mechanism. The answer is an exact function of the rows the
**      caller passes (it reads no training data and spends no budget): it is
**      for the curator's eyes, or for publication only when those rows may
**      be published. Every document says "private": false.
**   2. Predictions follow rdt_predict and rdt_predict_proba exactly, for
**      every model kind (sql_scoring.c), and feature values their row-value
**      rules (rdt_sql_features); so does the label (rdt_sql_class). A row
**      whose label is NULL or not among the classes (regression: NULL,
**      non-numeric, NaN or infinite) is skipped and counted in "skipped".
**   3. Classification: accuracy (of rdt_predict's class), the confusion
**      matrix (rows: true class, columns: predicted, in the order of
**      "classes", as "confusion_axes" says; null above EVAL_MAX_CONFUSION
**      classes), per class its rows, the rows predicted as it, precision
**      (null when never predicted), recall (null without a row of it) and
**      F1 = 2 tp / (rows + predicted), and their macro averages over the
**      classes where each is defined, log-loss (of
**      rdt_predict_proba's probability of the true class, floored at
**      1e-15), the Brier score, a reliability table (EVAL_BINS equal bins
**      of the top class's probability: its mean against the share of rows
**      where that class is right) with its expected calibration error, and
**      for two classes the AUC of the second class's probability (ties
**      count one half; null without rows of both classes). Regression: MSE,
**      RMSE, MAE and R² (null when the labels are constant). A metric
**      without any evaluated row is null.
**   4. The query forms take one read-only query (rdt_sql_prepare_select).
**      Every feature the model records is the column of its name (ASCII
**      case ignored, as rdt_fit: sql_columns.c), the true label is the
**      column the model records as its label (its "label" option at
**      training; "label" when it records none; rdt_importance's
**      options.label overrides it); a missing one is an error naming it
**      before any row is read; any other column is ignored and listed in
**      "ignored_columns". A model with a feature named like the label
**      column needs the aggregate form.
**   5. rdt_importance keeps the evaluated rows (cleaned, n x k doubles) and,
**      per feature and repeat, shuffles that feature's column among them
**      (uniformly, libsodium via rdt_rng; "seed" makes it reproducible) and
**      scores again: importance = mean over the repeats of the loss in
**      accuracy (classification) or the rise in MSE (regression), with its
**      standard deviation. Its cost is repeats x k x n predictions.
**   6. The aggregate evaluates one model: a model argument that changes
**      between rows of one group is an error. An empty input gives NULL,
**      as SQL aggregates do; the query form gives its document with
**      "evaluated": 0.
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/model.h"
#include "core/options.h"
#include "sql_evaluate.h"

#define EVAL_LOG_FLOOR 1e-15
#define IMPORTANCE_DEFAULT_REPEATS 5
#define IMPORTANCE_MAX_REPEATS 100

/* ---- the metrics, row by row ----------------------------------------------- */


/* sql_evaluate.h. */
int rdt_eval_start(eval_acc *a, rdt_model_handle *h) {
  memset(a, 0, sizeof *a);
  a->h = h;
  a->regression = rdt_score_is_regression(h);
  a->nf = rdt_score_schema(h)->n_features;
  a->C = rdt_score_schema(h)->n_classes;
  a->xs = malloc((a->nf + rdt_score_scratch(h)) * sizeof *a->xs);
  if (!a->xs) return 0;
  if (!a->regression) {
    a->per_class = calloc(3 * (size_t)a->C, sizeof *a->per_class);
    if (!a->per_class) return 0;
  }
  if (!a->regression && a->C <= EVAL_MAX_CONFUSION) {
    a->confusion = calloc((size_t)a->C * a->C, sizeof *a->confusion);
    if (!a->confusion) return 0;
  }
  return 1;
}

void rdt_eval_free(eval_acc *a) {
  rdt_model_release(a->h);
  free(a->xs);
  free(a->confusion);
  free(a->per_class);
  free(a->score[0]);
  free(a->score[1]);
  memset(a, 0, sizeof *a);
}

static void push_score(eval_acc *a, int k, double x) {
  if (a->n_score[k] == a->cap_score[k]) {
    size_t cap = a->cap_score[k] ? 2 * a->cap_score[k] : 1024;
    double *p = cap < ((size_t)-1) / sizeof *p ? realloc(a->score[k], cap * sizeof *p) : NULL;
    if (!p) {
      a->oom = 1;
      return;
    }
    a->score[k] = p;
    a->cap_score[k] = cap;
  }
  a->score[k][a->n_score[k]++] = x;
}

/* One row whose features are already in a->xs. */
void rdt_eval_row(eval_acc *a, sqlite3_value *label, rdt_rng *coin) {
  a->rows++;
  double *scratch = a->xs + a->nf;
  if (a->regression) {
    double y;
    if (!rdt_sql_number(label, &y) || !isfinite(y)) {
      a->skipped++;
      return;
    }
    double e = rdt_score_value(a->h, a->xs, scratch) - y;
    a->n++;
    a->sum_abs += fabs(e);
    a->sum_sq += e * e;
    double d = y - a->mean_y; /* Welford: the labels' spread, for R² */
    a->mean_y += d / (double)a->n;
    a->m2_y += d * (y - a->mean_y);
    return;
  }
  long cls = rdt_sql_class(rdt_score_schema(a->h), label);
  if (cls < 0) {
    a->skipped++;
    return;
  }
  uint32_t pred = rdt_score_class(a->h, a->xs, scratch, coin); /* scratch: the probabilities too */
  a->n++;
  a->correct += pred == (uint32_t)cls;
  if (a->confusion) a->confusion[(size_t)cls * a->C + pred]++;
  a->per_class[3 * (size_t)cls]++;      /* rows of the class */
  a->per_class[3 * (size_t)pred + 1]++; /* rows predicted as it */
  a->per_class[3 * (size_t)cls + 2] += pred == (uint32_t)cls;
  double p = scratch[cls];
  a->log_loss -= log(p > EVAL_LOG_FLOOR ? p : EVAL_LOG_FLOOR);
  uint32_t top = 0;
  for (uint32_t k = 0; k < a->C; k++) {
    double d = scratch[k] - (k == (uint32_t)cls);
    a->brier += d * d;
    if (scratch[k] > scratch[top]) top = k;
  }
  double conf = scratch[top];
  int bin = conf >= 1 ? EVAL_BINS - 1 : conf <= 0 ? 0 : (int)(conf * EVAL_BINS);
  if (bin >= EVAL_BINS) bin = EVAL_BINS - 1;
  a->bin_n[bin] += 1;
  a->bin_conf[bin] += conf;
  a->bin_hit[bin] += top == (uint32_t)cls;
  if (a->C == 2) push_score(a, cls == 1, scratch[1]);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

void rdt_eval_sort_scores(eval_acc *a) {
  for (int k = 0; k < 2; k++)
    if (a->n_score[k]) qsort(a->score[k], a->n_score[k], sizeof(double), cmp_double);
}

/* P(score of a positive > score of a negative) + P(equal) / 2 (Mann-Whitney). */
static double auc(eval_acc *a) {
  size_t np = a->n_score[1], nn = a->n_score[0];
  if (!np || !nn) return NAN;
  rdt_eval_sort_scores(a);
  double wins = 0;
  size_t below = 0, upto = 0; /* negatives < s, negatives <= s */
  for (size_t i = 0; i < np; i++) {
    double s = a->score[1][i];
    while (below < nn && a->score[0][below] < s) below++;
    if (upto < below) upto = below;
    while (upto < nn && a->score[0][upto] <= s) upto++;
    wins += (double)below + 0.5 * (double)(upto - below);
  }
  return wins / ((double)np * (double)nn);
}

static void json_number(sqlite3_str *o, double x) { rdt_sql_json_double(o, x); } /* null unless finite */

static double ratio(double num, sqlite3_int64 den) { return den > 0 ? num / (double)den : NAN; }

/* ,"confusion_axes" and, per class and macro-averaged over the classes where
** each is defined, precision (null: never predicted), recall (null: no row
** of the class) and F1 = 2 tp / (rows + predicted) (null: neither). */
static void per_class_json(sqlite3_str *o, const eval_acc *a, const rdt_schema *s) {
  double sum[3] = {0, 0, 0};
  uint32_t defined[3] = {0, 0, 0};
  sqlite3_str_appendall(o, ",\"confusion_axes\":[\"actual\",\"predicted\"],\"per_class\":[");
  for (uint32_t c = 0; c < a->C; c++) {
    const uint64_t *k = a->per_class + 3 * (size_t)c; /* rows, predicted, true positives */
    double m[3] = {k[1] ? (double)k[2] / (double)k[1] : NAN, k[0] ? (double)k[2] / (double)k[0] : NAN,
                   k[0] + k[1] ? 2.0 * (double)k[2] / (double)(k[0] + k[1]) : NAN};
    sqlite3_str_appendall(o, c ? ",{\"class\":" : "{\"class\":");
    rdt_sql_json_value(o, &s->classes[c]);
    sqlite3_str_appendf(o, ",\"rows\":%llu,\"predicted\":%llu", (unsigned long long)k[0], (unsigned long long)k[1]);
    static const char *const name[3] = {"precision", "recall", "f1"};
    for (int i = 0; i < 3; i++) {
      sqlite3_str_appendf(o, ",\"%s\":", name[i]);
      json_number(o, m[i]);
      if (m[i] == m[i]) {
        sum[i] += m[i];
        defined[i]++;
      }
    }
    sqlite3_str_appendchar(o, 1, '}');
  }
  sqlite3_str_appendall(o, "],\"macro\":{\"precision\":");
  json_number(o, defined[0] ? sum[0] / defined[0] : NAN);
  sqlite3_str_appendall(o, ",\"recall\":");
  json_number(o, defined[1] ? sum[1] / defined[1] : NAN);
  sqlite3_str_appendall(o, ",\"f1\":");
  json_number(o, defined[2] ? sum[2] / defined[2] : NAN);
  sqlite3_str_appendchar(o, 1, '}');
}

/* The document of contract 3; `extra` (may be NULL) is appended as members. */
static void acc_result(sqlite3_context *ctx, eval_acc *a, const char *extra) {
  if (a->oom) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  const rdt_schema *s = rdt_score_schema(a->h);
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendf(o, "{\"task\":\"%s\",\"private\":false,\"rows\":%lld,\"evaluated\":%lld,\"skipped\":%lld",
                      a->regression ? "regression" : "classification", a->rows, a->n, a->skipped);
  if (a->regression) {
    double mse = ratio(a->sum_sq, a->n);
    sqlite3_str_appendall(o, ",\"mse\":");
    json_number(o, mse);
    sqlite3_str_appendall(o, ",\"rmse\":");
    json_number(o, sqrt(mse));
    sqlite3_str_appendall(o, ",\"mae\":");
    json_number(o, ratio(a->sum_abs, a->n));
    sqlite3_str_appendall(o, ",\"r2\":");
    json_number(o, a->m2_y > 0 ? 1 - a->sum_sq / a->m2_y : NAN);
  } else {
    sqlite3_str_appendall(o, ",\"accuracy\":");
    json_number(o, ratio((double)a->correct, a->n));
    sqlite3_str_appendall(o, ",\"log_loss\":");
    json_number(o, ratio(a->log_loss, a->n));
    sqlite3_str_appendall(o, ",\"brier\":");
    json_number(o, ratio(a->brier, a->n));
    if (a->C == 2) {
      sqlite3_str_appendall(o, ",\"auc\":");
      json_number(o, auc(a));
      sqlite3_str_appendall(o, ",\"positive_class\":");
      rdt_sql_json_value(o, &s->classes[1]);
    }
    sqlite3_str_appendall(o, ",\"classes\":");
    rdt_sql_json_classes(o, s);
    sqlite3_str_appendall(o, ",\"confusion\":");
    if (!a->confusion) {
      sqlite3_str_appendall(o, "null");
    } else {
      sqlite3_str_appendchar(o, 1, '[');
      for (uint32_t t = 0; t < a->C; t++) {
        sqlite3_str_appendall(o, t ? ",[" : "[");
        for (uint32_t p = 0; p < a->C; p++)
          sqlite3_str_appendf(o, "%s%llu", p ? "," : "", (unsigned long long)a->confusion[(size_t)t * a->C + p]);
        sqlite3_str_appendchar(o, 1, ']');
      }
      sqlite3_str_appendchar(o, 1, ']');
    }
    per_class_json(o, a, s);
    double ece = 0;
    for (int b = 0; b < EVAL_BINS; b++)
      if (a->bin_n[b] > 0) ece += fabs(a->bin_hit[b] - a->bin_conf[b]); /* n_b |acc_b - conf_b| */
    sqlite3_str_appendall(o, ",\"calibration\":{\"ece\":");
    json_number(o, ratio(ece, a->n));
    sqlite3_str_appendall(o, ",\"bins\":[");
    for (int b = 0; b < EVAL_BINS; b++) {
      sqlite3_str_appendf(o, "%s{\"from\":", b ? "," : "");
      json_number(o, (double)b / EVAL_BINS);
      sqlite3_str_appendall(o, ",\"to\":");
      json_number(o, (double)(b + 1) / EVAL_BINS);
      sqlite3_str_appendf(o, ",\"rows\":%.0f,\"confidence\":", a->bin_n[b]);
      json_number(o, a->bin_n[b] > 0 ? a->bin_conf[b] / a->bin_n[b] : NAN);
      sqlite3_str_appendall(o, ",\"accuracy\":");
      json_number(o, a->bin_n[b] > 0 ? a->bin_hit[b] / a->bin_n[b] : NAN);
      sqlite3_str_appendchar(o, 1, '}');
    }
    sqlite3_str_appendall(o, "]}");
  }
  if (extra) sqlite3_str_appendall(o, extra);
  sqlite3_str_appendchar(o, 1, '}');
  int len = sqlite3_str_length(o);
  char *text = sqlite3_str_finish(o);
  if (!text) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, text, len, sqlite3_free);
}

/* ---- the aggregate: rdt_evaluate(model, label, x1, ..., xk) ------------------ */

/* Whether the BLOB v is the model of h: length, id and checksum, O(1) per
** row (a different model with the same checksum would need a BLAKE2b
** collision; a copy of the model is the same model). */
static int same_blob(const rdt_model_handle *h, sqlite3_value *v) {
  const unsigned char *b = sqlite3_value_type(v) == SQLITE_BLOB ? sqlite3_value_blob(v) : NULL;
  size_t n = b ? (size_t)sqlite3_value_bytes(v) : 0;
  return b && n == h->size && memcmp(b + RDT_MODEL_ID_OFFSET, h->bytes + RDT_MODEL_ID_OFFSET, 16) == 0 &&
         memcmp(b + n - RDT_CHECKSUM_BYTES, h->bytes + n - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES) == 0;
}

void rdt_evaluate_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  eval_acc **slot = sqlite3_aggregate_context(ctx, sizeof *slot);
  if (!slot) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  eval_acc *a = *slot;
  rdt_conn *conn = sqlite3_user_data(ctx);
  if (!a) {
    if (argc < 3) {
      rdt_sql_error(ctx, "rdt_evaluate", "expected rdt_evaluate(model, label, x1, ..., xk) or "
                                         "rdt_evaluate(model, query)");
      return;
    }
    char err[256];
    int rc;
    rdt_model_handle *h = rdt_model_lookup(conn, argv[0], &rc, err, sizeof err);
    if (!h) {
      if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(ctx);
      else rdt_sql_error(ctx, "rdt_evaluate", err);
      return;
    }
    a = malloc(sizeof *a);
    if (!a) {
      rdt_model_release(h);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    *slot = a;
    if (!rdt_eval_start(a, h)) {
      a->oom = 1;
      return;
    }
    if ((uint32_t)(argc - 2) != a->nf) {
      char *names = rdt_sql_feature_names(rdt_score_schema(a->h));
      char *m = names ? sqlite3_mprintf("rdt_evaluate: this model takes %u feature%s (%s) after the model and the "
                                        "label, got %d", a->nf, a->nf == 1 ? "" : "s", names, argc - 2)
                      : NULL;
      sqlite3_result_error(ctx, m ? m : "out of memory", -1);
      sqlite3_free(m);
      sqlite3_free(names);
      return;
    }
  } else if (a->oom) {
    return;
  } else if (!same_blob(a->h, argv[0])) {
    rdt_sql_error(ctx, "rdt_evaluate", "the model changed between rows; evaluate one model per group (GROUP BY)");
    return;
  }
  rdt_sql_features(rdt_score_schema(a->h), argv + 2, a->xs);
  rdt_eval_row(a, argv[1], &conn->coin);
}

void rdt_evaluate_final(sqlite3_context *ctx) {
  eval_acc **slot = sqlite3_aggregate_context(ctx, 0);
  if (!slot || !*slot) { /* no rows: NULL, as SQL aggregates */
    sqlite3_result_null(ctx);
    return;
  }
  eval_acc *a = *slot;
  if (a->h && a->xs) acc_result(ctx, a, NULL);
  else sqlite3_result_error_nomem(ctx);
  rdt_eval_free(a);
  free(a);
}

/* ---- the query forms ---------------------------------------------------------- */

/* The query, bound by name (contract 4; sql_columns.c): col[j] for feature
** j, *label_col (whose: where the name comes from, for the error), and the
** other columns as the member ,"ignored_columns":[...]
** (*ignored, sqlite3_malloc'd). Returns the statement, or NULL with err. */
static sqlite3_stmt *bind_query(sqlite3 *db, sqlite3_value *q, const rdt_schema *s, const char *label, const char *whose,
                                int *col, int *label_col, char **ignored, char *err, size_t en) {
  *ignored = NULL;
  if (sqlite3_value_type(q) != SQLITE_TEXT || !sqlite3_value_text(q)) {
    snprintf(err, en, "the second argument must be the query, one SELECT as TEXT");
    return NULL;
  }
  for (uint32_t j = 0; j < s->n_features; j++)
    if (rdt_name_equal(s->features[j].name, label)) {
      snprintf(err, en, "the model has a feature named \"%.100s\", like the label column; use "
               "rdt_evaluate(model, label, x1, ..., xk)%s", s->features[j].name,
               strcmp(label, "label") == 0 ? "" : " or another \"label\"");
      return NULL;
    }
  sqlite3_stmt *stmt = rdt_sql_prepare_select(db, (const char *)sqlite3_value_text(q), sqlite3_value_bytes(q),
                                              "the query", err, en);
  if (!stmt) return NULL;
  char *list = NULL;
  if (!rdt_sql_bind_columns(stmt, s, &label, 1, label_col, col, &list, NULL, err, en)) {
    sqlite3_finalize(stmt);
    return NULL;
  }
  if (*label_col < 0) {
    snprintf(err, en, "the query returns no column \"%.100s\" with the true labels (%sname it with AS)", label, whose);
    sqlite3_free(list);
    sqlite3_finalize(stmt);
    return NULL;
  }
  *ignored = sqlite3_mprintf(",\"ignored_columns\":%s", list);
  sqlite3_free(list);
  if (!*ignored) {
    snprintf(err, en, "out of memory");
    sqlite3_finalize(stmt);
    return NULL;
  }
  return stmt;
}

/* Where the label column's name came from, for a missing label's error. */
static const char *model_label_whose(const rdt_model_handle *h) {
  return strcmp(rdt_score_label(h), "label") == 0 ? "the model records no other label column; "
                                                   : "the label column the model was trained with; ";
}

/* Sets the error of a query that failed while it ran. */
static void query_failed(sqlite3_context *ctx, const char *fn, int rc) {
  if (rc == SQLITE_INTERRUPT) {
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
    return;
  }
  if (rc == SQLITE_NOMEM) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  char *m = sqlite3_mprintf("%s: the query failed while it ran: %s", fn,
                            sqlite3_errmsg(sqlite3_context_db_handle(ctx)));
  sqlite3_result_error(ctx, m ? m : "out of memory", -1);
  sqlite3_free(m);
}

int rdt_eval_query(sqlite3 *db, rdt_conn *conn, eval_acc *a, sqlite3_value *query, char **ignored, char *err,
                   size_t en) {
  const rdt_schema *s = rdt_score_schema(a->h);
  int *col = malloc((a->nf ? a->nf : 1) * sizeof *col), label_col = -1, rc = SQLITE_NOMEM;
  sqlite3_value **vals = malloc((a->nf ? a->nf : 1) * sizeof *vals);
  sqlite3_stmt *stmt = NULL;
  *ignored = NULL;
  if (!col || !vals) goto done;
  stmt = bind_query(db, query, s, rdt_score_label(a->h), model_label_whose(a->h), col, &label_col, ignored, err, en);
  if (!stmt) {
    rc = SQLITE_ERROR;
    goto done;
  }
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW && !a->oom) {
    for (uint32_t j = 0; j < a->nf; j++) vals[j] = sqlite3_column_value(stmt, col[j]);
    rdt_sql_features(s, vals, a->xs);
    rdt_eval_row(a, sqlite3_column_value(stmt, label_col), &conn->coin);
  }
  if (a->oom) rc = SQLITE_NOMEM;
  else if (rc == SQLITE_DONE) rc = SQLITE_OK;
  else if (rc != SQLITE_INTERRUPT && rc != SQLITE_NOMEM) {
    snprintf(err, en, "the query failed while it ran: %s", sqlite3_errmsg(db));
    rc = SQLITE_ERROR;
  }
done:
  if (rc != SQLITE_OK) {
    sqlite3_free(*ignored);
    *ignored = NULL;
  }
  sqlite3_finalize(stmt);
  free(col);
  free(vals);
  return rc;
}

void rdt_evaluate_query_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  rdt_model_handle *h = rdt_model_get(ctx, argv[0], 0, "rdt_evaluate");
  if (!h) return;
  h->refs++; /* the accumulator's own reference */
  eval_acc a;
  char err[512] = "", *ignored = NULL;
  int rc = rdt_eval_start(&a, h)
               ? rdt_eval_query(sqlite3_context_db_handle(ctx), sqlite3_user_data(ctx), &a, argv[1], &ignored, err,
                                sizeof err)
               : SQLITE_NOMEM;
  if (rc == SQLITE_OK) acc_result(ctx, &a, ignored);
  else if (rc == SQLITE_ERROR) rdt_sql_error(ctx, "rdt_evaluate", err);
  else if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_error_code(ctx, rc);
  sqlite3_free(ignored);
  rdt_eval_free(&a);
}

/* ---- rdt_importance(model, query [, options]) ---------------------------------- */

typedef struct importance_options {
  uint32_t repeats;
  char label[RDT_MAX_NAME + 1];
  int label_given;
  int seeded;
  unsigned char seed_key[RDT_RNG_KEYBYTES];
} importance_options;

static int importance_parse(int argc, sqlite3_value **argv, importance_options *o, char *err, size_t en) {
  o->repeats = IMPORTANCE_DEFAULT_REPEATS;
  o->label[0] = 0; /* none given: the model's own (rdt_score_label) */
  if (argc < 3) return 1;
  if (sqlite3_value_type(argv[2]) != SQLITE_TEXT || !sqlite3_value_text(argv[2])) {
    snprintf(err, en, "the third argument must be the options, a JSON object as TEXT%s", rdt_sql_blob_hint(argv[2], 0));
    return 0;
  }
  char jerr[128];
  rdt_json *root = rdt_json_parse((const char *)sqlite3_value_text(argv[2]), (size_t)sqlite3_value_bytes(argv[2]),
                                  jerr, sizeof jerr);
  if (!root || root->type != RDT_JSON_OBJECT) {
    snprintf(err, en, "options must be a JSON object%s%s", root ? "" : ": ", root ? "" : jerr);
    rdt_json_free(root);
    return 0;
  }
  int ok = 1;
  for (size_t i = 0; ok && i < root->n; i++) {
    const char *k = root->items[i]->key;
    if (strcmp(k, "repeats") != 0 && strcmp(k, "seed") != 0 && strcmp(k, "label") != 0) {
      snprintf(err, en, "unknown option \"%.100s\" (repeats, seed, label)", k);
      ok = 0;
    }
  }
  const rdt_json *j;
  if (ok && (j = rdt_json_get(root, "repeats"))) {
    if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < 1 || j->integer > IMPORTANCE_MAX_REPEATS) {
      snprintf(err, en, "\"repeats\" must be an integer from 1 to %d", IMPORTANCE_MAX_REPEATS);
      ok = 0;
    } else {
      o->repeats = (uint32_t)j->integer;
    }
  }
  if (ok && (j = rdt_json_get(root, "label"))) {
    if (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len > RDT_MAX_NAME) {
      snprintf(err, en, "\"label\" must be the name of the query's label column");
      ok = 0;
    } else {
      memcpy(o->label, j->string, j->string_len + 1);
      o->label_given = 1;
    }
  }
  if (ok && (j = rdt_json_get(root, "seed"))) {
    o->seeded = 1;
    if (!rdt_options_seed_key(j, "importance-seed", o->seed_key)) {
      snprintf(err, en, "\"seed\" must be an integer or a string");
      ok = 0;
    }
  }
  rdt_json_free(root);
  return ok;
}

/* Accuracy (classification) or MSE (regression) of the n kept rows, with
** feature j's column replaced by perm (NULL: the rows as they are). */
static double score_rows(const rdt_model_handle *h, const double *rows, const double *y, size_t n, uint32_t nf,
                         uint32_t j, const double *perm, double *x, rdt_rng *coin) {
  double *scratch = x + nf, total = 0;
  int regression = rdt_score_is_regression(h);
  for (size_t i = 0; i < n; i++) {
    memcpy(x, rows + i * nf, nf * sizeof *x);
    if (perm) x[j] = perm[i];
    if (regression) {
      double e = rdt_score_value(h, x, scratch) - y[i];
      total += e * e;
    } else {
      total += rdt_score_class(h, x, scratch, coin) == (uint32_t)y[i];
    }
  }
  return total / (double)n;
}

void rdt_importance_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  if (argc != 2 && argc != 3) {
    rdt_sql_error(ctx, "rdt_importance", "expected rdt_importance(model, query [, options])");
    return;
  }
  importance_options o;
  char err[512] = "", *ignored = NULL;
  memset(&o, 0, sizeof o);
  if (!importance_parse(argc, argv, &o, err, sizeof err)) {
    rdt_sql_error(ctx, "rdt_importance", err);
    return;
  }
  rdt_model_handle *h = rdt_model_get(ctx, argv[0], 0, "rdt_importance");
  if (!h) return;
  if (!o.label[0]) snprintf(o.label, sizeof o.label, "%s", rdt_score_label(h));
  const rdt_schema *s = rdt_score_schema(h);
  uint32_t nf = s->n_features;
  int regression = rdt_score_is_regression(h);
  sqlite3_stmt *stmt = NULL;
  sqlite3_value **vals = NULL;
  int *col = NULL, label_col = -1, rc = SQLITE_DONE;
  double *rows = NULL, *y = NULL, *x = NULL, *perm = NULL, *imp = NULL;
  size_t n = 0, cap = 0;
  sqlite3_int64 read = 0, skipped = 0;
  rdt_rng rng;
  rdt_rng_init_for(&rng, o.seeded ? o.seed_key : NULL, "importance", 0);
  col = malloc(nf * sizeof *col);
  vals = malloc(nf * sizeof *vals);
  x = malloc((nf + rdt_score_scratch(h)) * sizeof *x);
  imp = calloc(2 * (size_t)nf, sizeof *imp);
  if (!col || !vals || !x || !imp) goto nomem;
  stmt = bind_query(db, argv[1], s, o.label, o.label_given ? "" : model_label_whose(h), col, &label_col, &ignored,
                    err, sizeof err);
  if (!stmt) {
    rdt_sql_error(ctx, "rdt_importance", err);
    goto done;
  }
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    read++;
    sqlite3_value *label = sqlite3_column_value(stmt, label_col);
    double target;
    if (regression) {
      if (!rdt_sql_number(label, &target) || !isfinite(target)) {
        skipped++;
        continue;
      }
    } else {
      long c = rdt_sql_class(s, label);
      if (c < 0) {
        skipped++;
        continue;
      }
      target = (double)c;
    }
    if (n == cap) {
      size_t ncap = cap ? 2 * cap : 1024;
      if (ncap > ((size_t)-1) / sizeof(double) / nf) goto nomem;
      double *r2 = realloc(rows, ncap * nf * sizeof *r2);
      if (r2) rows = r2;
      double *y2 = r2 ? realloc(y, ncap * sizeof *y2) : NULL;
      if (y2) y = y2;
      if (!r2 || !y2) goto nomem;
      cap = ncap;
    }
    for (uint32_t j = 0; j < nf; j++) vals[j] = sqlite3_column_value(stmt, col[j]);
    rdt_sql_features(s, vals, rows + n * nf);
    y[n++] = target;
  }
  if (rc != SQLITE_DONE) {
    query_failed(ctx, "rdt_importance", rc);
    goto done;
  }
  sqlite3_finalize(stmt); /* the rows are kept: release the read */
  stmt = NULL;
  double base = NAN;
  if (n > 0) {
    if (!(perm = malloc(n * sizeof *perm))) goto nomem;
    base = score_rows(h, rows, y, n, nf, 0, NULL, x, &rng);
    for (uint32_t j = 0; j < nf; j++) {
      double sum = 0, sum_sq = 0;
      for (uint32_t r = 0; r < o.repeats; r++) {
        for (size_t i = 0; i < n; i++) perm[i] = rows[i * nf + j];
        for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
          size_t k = (size_t)rdt_rng_below(&rng, (uint64_t)i + 1);
          double t = perm[i];
          perm[i] = perm[k];
          perm[k] = t;
        }
        double m = score_rows(h, rows, y, n, nf, j, perm, x, &rng);
        double drop = regression ? m - base : base - m; /* how much worse without feature j */
        sum += drop;
        sum_sq += drop * drop;
      }
      imp[2 * j] = sum / o.repeats;
      double var = sum_sq / o.repeats - imp[2 * j] * imp[2 * j];
      imp[2 * j + 1] = o.repeats > 1 && var > 0 ? sqrt(var * o.repeats / (o.repeats - 1)) : 0;
    }
  }
  sqlite3_str *out = sqlite3_str_new(db);
  sqlite3_str_appendf(out, "{\"metric\":\"%s\",\"private\":false,\"rows\":%lld,\"evaluated\":%lld,\"skipped\":%lld,"
                           "\"repeats\":%u,\"baseline\":",
                      regression ? "mse" : "accuracy", read, (sqlite3_int64)n, skipped, o.repeats);
  rdt_sql_json_double(out, base);
  sqlite3_str_appendall(out, ",\"features\":[");
  for (uint32_t j = 0; j < nf; j++) {
    sqlite3_str_appendall(out, j ? ",{\"name\":" : "{\"name\":");
    rdt_sql_json_string(out, s->features[j].name, strlen(s->features[j].name));
    sqlite3_str_appendall(out, ",\"importance\":");
    rdt_sql_json_double(out, n ? imp[2 * j] : NAN);
    sqlite3_str_appendall(out, ",\"std\":");
    rdt_sql_json_double(out, n ? imp[2 * j + 1] : NAN);
    sqlite3_str_appendchar(out, 1, '}');
  }
  sqlite3_str_appendchar(out, 1, ']');
  sqlite3_str_appendall(out, ignored);
  sqlite3_str_appendchar(out, 1, '}');
  int len = sqlite3_str_length(out);
  char *text = sqlite3_str_finish(out);
  if (!text) goto nomem;
  sqlite3_result_text(ctx, text, len, sqlite3_free);
  goto done;
nomem:
  sqlite3_result_error_nomem(ctx);
done:
  /* The kept rows are the caller's labelled data: wiped like training state. */
  if (rows) sodium_memzero(rows, cap * nf * sizeof *rows);
  if (y) sodium_memzero(y, cap * sizeof *y);
  if (perm) sodium_memzero(perm, n * sizeof *perm);
  free(rows);
  free(y);
  free(perm);
  free(x);
  free(imp);
  free(col);
  free(vals);
  sqlite3_free(ignored);
  sqlite3_finalize(stmt);
  rdt_rng_clear(&rng);
  sodium_memzero(&o, sizeof o);
}
