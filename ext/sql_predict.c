/*
** sql_predict.c - rdt_predict, rdt_predict_proba, rdt_info, rdt_version.
** All of them are post-processing of a released model: they read no private
** rows and spend no privacy budget.
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bounds.h"
#include "core/forest_kind.h"
#include "core/model.h"
#include "core/sign.h"
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

static const char *vote_name(rdt_vote v) {
  switch (v) {
    case RDT_VOTE_MAJORITY: return "majority";
    case RDT_VOTE_PROBABILISTIC: return "probabilistic";
    case RDT_VOTE_WEIGHT: return "weight";
    default: return "threshold";
  }
}

/* The end of every rdt_info document: seeded, the signature (public_key
** NULL: unsigned) and whether it verifies against the key the model
** carries, the release status, the size and SHA-256 of the BLOB (what an
** rdt_ledger records for the model it released); then the result. */
static void finish_info(sqlite3_context *ctx, sqlite3_str *o, const rdt_model_handle *h, int is_private, int seeded,
                        rdt_eps eps, const unsigned char *public_key, const char *note) {
  sqlite3_str_appendf(o, ",\"seeded\":%s,\"signed\":%s,", seeded ? "true" : "false", public_key ? "true" : "false");
  /* Checked, not assumed: a decoded model's checksum can be recomputed by
  ** whoever edits it; only the signature ties its bytes to the key. Which
  ** key that is, is for rdt_verify(model, the publisher's key) to say. */
  sqlite3_str_appendf(o, "\"signature_valid\":%s,",
                      !public_key ? "null" : rdt_model_verify(h->bytes, h->size, public_key) ? "true" : "false");
  if (public_key) {
    char pk[65];
    sodium_bin2hex(pk, sizeof pk, public_key, 32);
    sqlite3_str_appendf(o, "\"public_key\":\"%s\",\"publisher_note\":", pk);
    rdt_sql_json_string(o, note ? note : "", note ? strlen(note) : 0);
    sqlite3_str_appendchar(o, 1, ',');
  }
  sqlite3_str_appendall(o, "\"release\":");
  if (!is_private)
    sqlite3_str_appendall(o, "\"NOT PRIVATE: trained with epsilon null, the counts are exact; never publish this "
                             "model\"");
  else if (seeded)
    sqlite3_str_appendall(o, "\"NOT FOR RELEASE: trained with a seed, so anyone who learns the seed can remove "
                             "the noise; for tests and reproducibility only\"");
  else if (rdt_eps_to_double(eps) > RDT_WEAK_EPSILON)
    sqlite3_str_appendf(o, "\"WEAK: epsilon above %d is not a meaningful privacy guarantee (the noise hides "
                           "little); publish only if that is acceptable\"", RDT_WEAK_EPSILON);
  else
    sqlite3_str_appendall(o, "\"ok\"");
  unsigned char sha[crypto_hash_sha256_BYTES];
  char sha_hex[2 * sizeof sha + 1];
  crypto_hash_sha256(sha, h->bytes, h->size);
  sodium_bin2hex(sha_hex, sizeof sha_hex, sha, sizeof sha);
  sqlite3_str_appendf(o, ",\"size_bytes\":%llu,\"sha256\":\"%s\"}", (unsigned long long)h->size, sha_hex);
  int n = sqlite3_str_length(o);
  char *s = sqlite3_str_finish(o);
  if (!s) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, s, n, sqlite3_free);
}

/* The relation a model's "neighbouring" states: its unit's (unit.h), or
** `row` (the mechanism's own wording for one row). */
static const char *neighbouring(const rdt_unit *u, const char *row) {
  return u->column[0] ? "add/remove one unit: every row with one value of the privacy_unit column (at most "
                        "max_rows_per_unit of them kept)"
                      : row;
}

/* The ε a model states: the whole release's (unit.h), or its mechanism's. */
static rdt_eps stated_epsilon(const rdt_unit *u, rdt_eps mechanism) {
  return rdt_unit_active(u) ? u->eps_total : mechanism;
}

/* "privacy_unit" ("row", or the unit column and its cap) and, for a release
** with unit facts, how ε was divided (unit.h, contract 5) and which bounds
** are private (bounds.h). model_row: the mechanism's per-row ε. */
static void unit_info(sqlite3_str *o, const rdt_unit *u, rdt_eps model_row, const rdt_schema *s) {
  if (!u->column[0]) {
    sqlite3_str_appendall(o, "\"privacy_unit\":\"row\",");
  } else {
    sqlite3_str_appendall(o, "\"privacy_unit\":{\"column\":");
    rdt_sql_json_string(o, u->column, strlen(u->column));
    sqlite3_str_appendf(o, ",\"max_rows_per_unit\":%u,\"bounding\":\"of a unit's rows at most max_rows_per_unit "
                           "are kept, a uniformly random subset; rows whose unit is NULL are dropped\","
                           "\"accounting\":\"group privacy: every mechanism ran with its share of epsilon divided "
                           "by max_rows_per_unit per row\"},", u->max_rows);
  }
  if (!rdt_unit_active(u)) return;
  uint64_t model = u->eps_total.num - u->eps_bounds.num;
  sqlite3_str_appendf(o, "\"epsilon_division\":{\"bounds\":%!.17g,\"model\":%!.17g,\"bounds_rational\":"
                         "\"%llu/4294967296\",\"model_rational\":\"%llu/4294967296\",\"model_per_row\":%!.17g,"
                         "\"composition\":\"sequential: bounds + model = epsilon\"},",
                      rdt_eps_to_double(u->eps_bounds), rdt_eps_to_double((rdt_eps){model}),
                      (unsigned long long)u->eps_bounds.num, (unsigned long long)model, rdt_eps_to_double(model_row));
  if (!u->n_private) return;
  sqlite3_str_appendall(o, "\"private_bounds\":{\"features\":[");
  for (uint32_t j = 0, n = 0; j < s->n_features; j++)
    if (rdt_unit_is_private(u, j)) {
      if (n++) sqlite3_str_appendchar(o, 1, ',');
      rdt_sql_json_string(o, s->features[j].name, strlen(s->features[j].name));
    }
  sqlite3_str_appendf(o, "],\"quantiles\":[%!.17g,%!.17g],\"epsilon_per_quantile_per_row\":%!.17g,\"rule\":"
                         "\"the quartiles' cells span [a, b] (the lower edge of the lower cell, the upper edge of the "
                         "higher); min = a - 1.5 (b - a), max = b + 1.5 (b - a)\"},",
                      (double)RDT_BOUNDS_LOW / RDT_QUANTILE_ONE, (double)RDT_BOUNDS_HIGH / RDT_QUANTILE_ONE,
                      rdt_eps_to_double(u->eps_quantile));
}

/* rdt_info of a learner model: the common facts, then the learner's own. */
static void learned_info(sqlite3_context *ctx, const rdt_model_handle *h) {
  const rdt_learned *m = &h->learned;
  const rdt_learn_common *c = &m->common;
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendf(o, "{\"format\":\"rdt-model\",\"format_version\":\"%d.%d\",\"extension_version\":\"%s\",",
                      RDT_FORMAT_MAJOR, m->format_minor, RDT_VERSION_STRING);
  sqlite3_str_appendall(o, "\"model_id\":\"");
  for (int i = 0; i < 16; i++) sqlite3_str_appendf(o, "%02x", m->model_id[i]);
  sqlite3_str_appendf(o, "\",\"algorithm\":\"%s\",\"task\":\"%s\",", m->learner->name,
                      c->regression ? "regression" : "classification");
  rdt_eps stated = stated_epsilon(&c->unit, c->eps);
  if (c->is_private)
    sqlite3_str_appendf(o, "\"private\":true,\"epsilon\":%!.17g,\"epsilon_rational\":\"%llu/4294967296\",",
                        rdt_eps_to_double(stated), (unsigned long long)stated.num);
  else
    sqlite3_str_appendall(o, "\"private\":false,\"epsilon\":null,\"epsilon_rational\":null,");
  sqlite3_str_appendf(o, "\"neighbouring\":\"%s\",", neighbouring(&c->unit, "add/remove one row"));
  unit_info(o, &c->unit, c->eps, &m->schema);
  rdt_bytes d = {0};
  m->learner->describe(m->state, &d);
  if (d.oom) {
    rdt_bytes_free(&d);
    sqlite3_free(sqlite3_str_finish(o));
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_str_append(o, (const char *)d.p, (int)d.n);
  rdt_bytes_free(&d);
  if (c->regression)
    sqlite3_str_appendf(o, "\"target\":{\"min\":%!.17g,\"max\":%!.17g},", c->target_min, c->target_max);
  sqlite3_str_appendall(o, "\"classes\":");
  rdt_sql_json_classes(o, &m->schema);
  sqlite3_str_appendall(o, ",\"features\":");
  rdt_sql_json_features(o, &m->schema);
  finish_info(ctx, o, h, c->is_private, c->seeded, stated, m->is_signed ? m->public_key : NULL, m->note);
}

/* rdt_info's numbers: SQLite's %!.17g, as every other number of the document. */
static void info_real(rdt_bytes *out, double x) {
  char buf[64];
  sqlite3_snprintf((int)sizeof buf, buf, "%!.17g", x);
  rdt_bytes_text(out, buf);
}

/* One part of a forest's rdt_info that its kind writes (forest_kind.h),
** through the scratch d; d->oom stays set once memory ran out. */
static void info_part(sqlite3_str *o, const rdt_forest *f, const rdt_forest_kind *kind, rdt_forest_info_part part,
                      rdt_bytes *d) {
  d->n = 0;
  kind->describe(f, part, d, info_real);
  if (!d->oom && d->n) sqlite3_str_append(o, (const char *)d->p, (int)d->n);
}

void rdt_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  rdt_model_handle *h = rdt_model_get(ctx, argv[0], 0, "rdt_info");
  if (!h) return;
  if (h->is_learned) {
    learned_info(ctx, h);
    return;
  }
  const rdt_forest *f = &h->forest;
  const rdt_config *c = &f->config;
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendf(o, "{\"format\":\"rdt-model\",\"format_version\":\"%d.%d\",\"extension_version\":\"%s\",",
                      RDT_FORMAT_MAJOR, f->format_minor, RDT_VERSION_STRING);
  sqlite3_str_appendall(o, "\"model_id\":\"");
  for (int i = 0; i < 16; i++) sqlite3_str_appendf(o, "%02x", f->model_id[i]);
  int regression = c->task == RDT_TASK_REGRESSION;
  const rdt_forest_kind *kind = rdt_forest_kind_held(f); /* its mechanism, parameters and layout */
  sqlite3_str_appendf(o, "\",\"algorithm\":\"%s\",\"task\":\"%s\",", rdt_forest_kind_of(c->algorithm)->option,
                      regression ? "regression" : "classification");
  /* With unit facts, "epsilon" is the whole release's and the mechanism
  ** below spends epsilon_division.model_per_row per row (unit.h). */
  rdt_eps stated = stated_epsilon(&c->unit, c->eps);
  rdt_bytes d = {0};
  if (c->is_private) {
    sqlite3_str_appendf(o,
                        "\"private\":true,\"epsilon\":%!.17g,\"epsilon_rational\":\"%llu/4294967296\","
                        "\"neighbouring\":\"%s\",",
                        rdt_eps_to_double(stated), (unsigned long long)stated.num,
                        neighbouring(&c->unit, kind->neighbouring));
    info_part(o, f, kind, RDT_FOREST_INFO_MECHANISM, &d);
  } else {
    sqlite3_str_appendall(o, "\"private\":false,\"epsilon\":null,\"epsilon_rational\":null,"
                             "\"neighbouring\":\"add/remove one row\",\"mechanism\":\"none: exact counts\",");
  }
  unit_info(o, &c->unit, c->eps, &f->schema);
  info_part(o, f, kind, RDT_FOREST_INFO_PARAMETERS, &d);
  if (c->auto_depth) {
    sqlite3_str_appendf(o, "\"depth_from\":\"%s\",\"row_count\":%lld,", c->is_private ? "noisy row count" : "row count",
                        (long long)c->noisy_rows);
    if (c->is_private)
      sqlite3_str_appendf(o, "\"epsilon_row_count\":%!.17g,\"epsilon_leaves\":%!.17g,", rdt_eps_to_double(c->eps_count),
                          rdt_eps_to_double(c->eps) - rdt_eps_to_double(c->eps_count));
  }
  if (regression)
    sqlite3_str_appendf(o, "\"target\":{\"min\":%!.17g,\"max\":%!.17g},", c->target_min, c->target_max);
  info_part(o, f, kind, RDT_FOREST_INFO_STRUCTURE, &d);
  if (!regression) sqlite3_str_appendf(o, "\"vote\":\"%s\",", vote_name(c->vote));
  if (f->tree_kept) /* "keep_trees": chosen from the released counters, no eps (tree_selection.h) */
    sqlite3_str_appendf(o, "\"keep_trees\":%!.17g,\"voting_trees\":%u,", c->keep_trees, f->n_kept);
  info_part(o, f, kind, RDT_FOREST_INFO_SPLITS, &d);
  int oom = d.oom;
  rdt_bytes_free(&d);
  if (oom) {
    sqlite3_free(sqlite3_str_finish(o));
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_str_appendall(o, "\"classes\":");
  rdt_sql_json_classes(o, &f->schema);
  sqlite3_str_appendall(o, ",\"features\":");
  rdt_sql_json_features(o, &f->schema);
  sqlite3_str_appendf(o, ",\"structure_from_rows\":%s", rdt_config_structure_from_rows(c) ? "true" : "false");
  finish_info(ctx, o, h, c->is_private, c->seeded, stated, f->is_signed ? f->public_key : NULL, f->note);
}

void rdt_version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, RDT_VERSION_STRING, -1, SQLITE_STATIC);
}
