/*
** sql_predict.c - rdt_predict, rdt_predict_proba, rdt_version.
** All of them are post-processing of a released model: they read no private
** rows and spend no privacy budget.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdt_sql.h"

/* Scratch for features and class scores; small models stay on the stack. */
#define STACK_DOUBLES 256

/* Model + features of a predict call; sets an error and returns NULL on a
** parameter mistake. *xs is `stack` or a malloc'd buffer (free_scratch). */
static const rdt_model_handle *predict_args(sqlite3_context *ctx, int argc, sqlite3_value **argv, const char *fn,
                                            double *stack, double **xs) {
  if (argc < 1) {
    char *m = sqlite3_mprintf("%s: expected %s(model, x1, ..., xk)", fn, fn);
    sqlite3_result_error(ctx, m, -1);
    sqlite3_free(m);
    return NULL;
  }
  rdt_model_handle *h = rdt_model_get(ctx, argv[0], 0, fn);
  if (!h) return NULL;
  const rdt_schema *schema = h->is_learned ? &h->learned.schema : &h->forest.schema;
  if ((uint32_t)(argc - 1) != schema->n_features) {
    char *names = rdt_sql_feature_names(schema);
    char *m = names ? sqlite3_mprintf("%s: this model takes %u feature%s (%s) after the model, got %d", fn,
                                      schema->n_features, schema->n_features == 1 ? "" : "s", names, argc - 1)
                    : NULL;
    if (m) sqlite3_result_error(ctx, m, -1);
    else sqlite3_result_error_nomem(ctx);
    sqlite3_free(m);
    sqlite3_free(names);
    return NULL;
  }
  size_t need = schema->n_features + 2 * (size_t)schema->n_classes + 1;
  *xs = need <= STACK_DOUBLES ? stack : malloc(need * sizeof **xs);
  if (!*xs) {
    sqlite3_result_error_nomem(ctx);
    return NULL;
  }
  rdt_sql_features(schema, argv + 1, *xs);
  return h;
}

/* A learner model's prediction into out (classes, or one value). */
static void learned_predict(const rdt_learned *m, const double *xs, double *out) {
  m->learner->predict(m->state, xs, out);
}

static void free_scratch(double *xs, double *stack) {
  if (xs != stack) free(xs);
}

void rdt_predict_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  double stack[STACK_DOUBLES], *xs;
  const rdt_model_handle *h = predict_args(ctx, argc, argv, "rdt_predict", stack, &xs);
  if (!h) return;
  if (h->is_learned) {
    const rdt_learned *m = &h->learned;
    double *out = xs + m->schema.n_features;
    learned_predict(m, xs, out);
    if (m->common.regression) {
      sqlite3_result_double(ctx, out[0]);
    } else {
      uint32_t best = 0; /* ties: the first class listed */
      for (uint32_t c = 1; c < m->schema.n_classes; c++)
        if (out[c] > out[best]) best = c;
      rdt_sql_result_class(ctx, &m->schema.classes[best]);
    }
    free_scratch(xs, stack);
    return;
  }
  const rdt_forest *f = &h->forest;
  if (f->config.task == RDT_TASK_REGRESSION) {
    sqlite3_result_double(ctx, rdt_forest_regress(f, xs));
    free_scratch(xs, stack);
    return;
  }
  rdt_conn *conn = sqlite3_user_data(ctx);
  uint32_t c = rdt_forest_predict(f, xs, xs + f->schema.n_features, &conn->coin);
  rdt_sql_result_class(ctx, &f->schema.classes[c]);
  free_scratch(xs, stack);
}

void rdt_predict_proba_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  double stack[STACK_DOUBLES], *xs;
  const rdt_model_handle *h = predict_args(ctx, argc, argv, "rdt_predict_proba", stack, &xs);
  if (!h) return;
  const rdt_schema *schema = h->is_learned ? &h->learned.schema : &h->forest.schema;
  if (h->is_learned ? h->learned.common.regression : h->forest.config.task == RDT_TASK_REGRESSION) {
    free_scratch(xs, stack);
    sqlite3_result_error(ctx, "rdt_predict_proba: a regression model has no class probabilities; use rdt_predict",
                         -1);
    return;
  }
  double *proba = xs + schema->n_features;
  if (h->is_learned) learned_predict(&h->learned, xs, proba);
  else rdt_forest_proba(&h->forest, xs, proba);
  rdt_sql_result_proba(ctx, schema, proba);
  free_scratch(xs, stack);
}

void rdt_sql_result_proba(sqlite3_context *ctx, const rdt_schema *schema, const double *proba) {
  sqlite3_str *out = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendchar(out, 1, '{');
  for (uint32_t c = 0; c < schema->n_classes; c++) {
    if (c) sqlite3_str_appendchar(out, 1, ',');
    rdt_sql_json_string(out, schema->classes[c].text, schema->classes[c].text_len);
    sqlite3_str_appendchar(out, 1, ':');
    rdt_sql_json_probability(out, proba[c]);
  }
  sqlite3_str_appendchar(out, 1, '}');
  int n = sqlite3_str_length(out);
  char *s = sqlite3_str_finish(out);
  if (!s) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, s, n, sqlite3_free);
}

void rdt_version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, RDT_VERSION_STRING, -1, SQLITE_STATIC);
}
