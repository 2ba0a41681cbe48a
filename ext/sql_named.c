/*
** sql_named.c - rdt_predict_named(model, json) and
** rdt_predict_proba_named(model, json): prediction with the features bound
** by name, from a JSON object such as json_object('age', age, 'sex', sex).
**
** Contract:
**   1. Post-processing of a released model: no training rows, no budget.
**      The answer is exactly rdt_predict's / rdt_predict_proba's for the
**      same values passed by position.
**   2. Every feature the model records is looked up by name among the
**      object's keys, without regard to ASCII case (as SQL names and rdt_fit
**      do). A feature without a key is an error naming it; a feature given
**      twice is an error; keys that name no feature are ignored (the object
**      may carry an id or the label), and a misspelt key still shows up as
**      the feature it fails to name.
**   3. The values are read by SQLite's own json_each, so a JSON string is
**      TEXT, an integer INTEGER, a real REAL, null NULL, true/false 1/0
**      (what json_object was given), and then follow the row-value rules of
**      rdt_predict through the same helper (rdt_sql_feature).
**   4. The second argument must be TEXT holding a JSON object; anything
**      else (NULL, a number, an array, malformed JSON) is an error.
** The decoded model and the prepared json_each statement are kept for the
** statement when the model argument is constant (auxdata of argument 0).
*/
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "rdt_sql.h"

typedef struct named_state {
  rdt_model_handle *h;   /* a reference */
  sqlite3_stmt *each;    /* SELECT key, value FROM json_each(?1) */
  unsigned char *seen;   /* per feature: a key named it in this call */
  double *xs;            /* n_features values, then the scoring scratch */
} named_state;

static void named_free(void *p) {
  named_state *st = p;
  if (!st) return;
  sqlite3_finalize(st->each);
  rdt_model_release(st->h);
  free(st->seen);
  free(st->xs);
  free(st);
}

static named_state *named_state_get(sqlite3_context *ctx, sqlite3_value *model, const char *fn) {
  named_state *st = sqlite3_get_auxdata(ctx, 0);
  if (st) return st;
  char err[256];
  int rc;
  st = calloc(1, sizeof *st);
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return NULL;
  }
  st->h = rdt_model_lookup(sqlite3_user_data(ctx), model, &rc, err, sizeof err);
  if (!st->h) {
    free(st);
    if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(ctx);
    else rdt_sql_error(ctx, fn, err);
    return NULL;
  }
  const rdt_schema *s = rdt_score_schema(st->h);
  st->seen = malloc(s->n_features);
  st->xs = malloc((s->n_features + rdt_score_scratch(st->h)) * sizeof *st->xs);
  if (!st->seen || !st->xs) {
    named_free(st);
    sqlite3_result_error_nomem(ctx);
    return NULL;
  }
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM json_each(?1)", -1, &st->each, NULL) != SQLITE_OK) {
    char *m = sqlite3_mprintf("%s: needs SQLite's JSON functions (json_each): %s", fn, sqlite3_errmsg(db));
    named_free(st);
    sqlite3_result_error(ctx, m ? m : "out of memory", -1);
    sqlite3_free(m);
    return NULL;
  }
  sqlite3_set_auxdata(ctx, 0, st, named_free);
  /* On out of memory SQLite has already freed it. */
  st = sqlite3_get_auxdata(ctx, 0);
  if (!st) sqlite3_result_error_nomem(ctx);
  return st;
}

/* The features of the object in argv[1] into st->xs; 0 with the error set. */
static int bind_named(sqlite3_context *ctx, named_state *st, sqlite3_value *obj, const char *fn) {
  const rdt_schema *s = rdt_score_schema(st->h);
  const char *text = sqlite3_value_type(obj) == SQLITE_TEXT ? (const char *)sqlite3_value_text(obj) : NULL;
  const char *p = text;
  while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  if (!p || *p != '{') {
    if (sqlite3_value_type(obj) == SQLITE_TEXT && !text) {
      sqlite3_result_error_nomem(ctx);
      return 0;
    }
    rdt_sql_error(ctx, fn, "the second argument must be a JSON object of feature values, e.g. "
                           "json_object('age', age, 'sex', sex)");
    return 0;
  }
  memset(st->seen, 0, s->n_features);
  sqlite3_bind_text(st->each, 1, text, sqlite3_value_bytes(obj), SQLITE_STATIC);
  uint32_t hint = 0; /* keys usually come in the model's order: try the next feature first */
  int rc, ok = 1;
  while (ok && (rc = sqlite3_step(st->each)) == SQLITE_ROW) {
    const char *key = (const char *)sqlite3_column_text(st->each, 0);
    if (!key) continue; /* not reachable for an object, whose keys are TEXT */
    uint32_t j = hint < s->n_features && rdt_name_equal(key, s->features[hint].name) ? hint : s->n_features;
    for (uint32_t k = 0; j == s->n_features && k < s->n_features; k++)
      if (rdt_name_equal(key, s->features[k].name)) j = k;
    if (j == s->n_features) continue; /* not a feature: ignored (contract 2) */
    if (st->seen[j]) {
      char *m = sqlite3_mprintf("%s: the JSON object gives feature \"%s\" twice", fn, s->features[j].name);
      sqlite3_result_error(ctx, m ? m : "out of memory", -1);
      sqlite3_free(m);
      ok = 0;
      break;
    }
    st->seen[j] = 1;
    st->xs[j] = rdt_sql_feature(&s->features[j], sqlite3_column_value(st->each, 1));
    hint = j + 1;
  }
  if (ok && rc != SQLITE_DONE) {
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    if (rc == SQLITE_INTERRUPT) {
      sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
    } else if (rc == SQLITE_NOMEM) {
      sqlite3_result_error_nomem(ctx);
    } else {
      char *m = sqlite3_mprintf("%s: the second argument is not a valid JSON object: %s", fn, sqlite3_errmsg(db));
      sqlite3_result_error(ctx, m ? m : "out of memory", -1);
      sqlite3_free(m);
    }
    ok = 0;
  }
  sqlite3_reset(st->each);
  sqlite3_clear_bindings(st->each); /* the text belongs to this call */
  for (uint32_t j = 0; ok && j < s->n_features; j++)
    if (!st->seen[j]) {
      char *m = sqlite3_mprintf("%s: the JSON object has no value for feature \"%s\" (keys match the model's "
                                "feature names without regard to case)", fn, s->features[j].name);
      sqlite3_result_error(ctx, m ? m : "out of memory", -1);
      sqlite3_free(m);
      ok = 0;
    }
  return ok;
}

void rdt_predict_named_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  named_state *st = named_state_get(ctx, argv[0], "rdt_predict_named");
  if (!st || !bind_named(ctx, st, argv[1], "rdt_predict_named")) return;
  const rdt_schema *s = rdt_score_schema(st->h);
  double *scratch = st->xs + s->n_features;
  if (rdt_score_is_regression(st->h)) {
    sqlite3_result_double(ctx, rdt_score_value(st->h, st->xs, scratch));
    return;
  }
  rdt_conn *conn = sqlite3_user_data(ctx);
  rdt_sql_result_class(ctx, &s->classes[rdt_score_class(st->h, st->xs, scratch, &conn->coin)]);
}

void rdt_predict_proba_named_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  named_state *st = named_state_get(ctx, argv[0], "rdt_predict_proba_named");
  if (!st) return;
  if (rdt_score_is_regression(st->h)) {
    rdt_sql_error(ctx, "rdt_predict_proba_named", "a regression model has no class probabilities; use "
                                                  "rdt_predict_named");
    return;
  }
  if (!bind_named(ctx, st, argv[1], "rdt_predict_proba_named")) return;
  const rdt_schema *s = rdt_score_schema(st->h);
  double *scratch = st->xs + s->n_features;
  rdt_score_proba(st->h, st->xs, scratch);
  rdt_sql_result_proba(ctx, s, scratch);
}
