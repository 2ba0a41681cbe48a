/*
** sql_info.c - rdt_info(model): what a released model is, as JSON, for the
** curator about to publish it and for whoever receives it.
**
** Contract:
**   1. Post-processing only: it reads the model and nothing else (no rows,
**      no budget).
**   2. "release" is the model's privacy status, in this order: NOT PRIVATE
**      (epsilon null), NOT FOR RELEASE (seeded, or a class or category list
**      copied from the rows by rdt_features), WEAK (epsilon above 10), ok.
**   3. "warnings" lists what a curator should know before publishing a
**      model that is private as claimed (the array is empty otherwise):
**      each is a rule on released values and public parameters.
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bounds.h"
#include "core/json.h"
#include "core/forests/forest_kind.h"
#include "core/model.h"
#include "core/sign.h"
#include "rdt_sql.h"

static const char *vote_name(rdt_vote v) {
  switch (v) {
    case RDT_VOTE_MAJORITY: return "majority";
    case RDT_VOTE_PROBABILISTIC: return "probabilistic";
    case RDT_VOTE_WEIGHT: return "weight";
    default: return "threshold";
  }
}

/* What the end of an rdt_info document says besides the facts written so
** far (finish_info). */
typedef struct info_facts {
  int is_private, seeded;
  rdt_eps eps;                     /* the stated epsilon */
  const unsigned char *public_key; /* NULL: unsigned */
  const char *note;
  const rdt_schema *schema;
  const rdt_unit *unit;
  double noisy_rows;               /* a row count the model released, or NAN */
  const char *constant;            /* the model is the constant model: why; else NULL */
} info_facts;

/* One warning: plain text, written as a JSON string (NULL: out of memory,
** which sqlite3_str then reports). */
static void warn(sqlite3_str *o, int *n, char *text) {
  if (*n) sqlite3_str_appendchar(o, 1, ',');
  (*n)++;
  if (text) rdt_sql_json_string(o, text, strlen(text));
  else sqlite3_str_appendall(o, "null");
  sqlite3_free(text);
}

/* "warnings" (contract item 3): what a curator should see before
** publishing. Each rule reads released values and public parameters only. */
static void append_warnings(sqlite3_str *o, const info_facts *x) {
  int n = 0;
  sqlite3_str_appendall(o, "\"warnings\":[");
  if (x->constant)
    warn(o, &n, sqlite3_mprintf("the model is the constant model: it gives every row the same prediction and ignores "
                                "every feature (%s)", x->constant));
  const rdt_unit *u = x->unit;
  if (u->n_private) {
    double needed = rdt_bounds_rows_needed(u->eps_quantile);
    if (isfinite(x->noisy_rows) && x->noisy_rows < needed)
      warn(o, &n, sqlite3_mprintf("private bounds: the model's noisy row count (%.0f) is below the %.0f rows with a "
                                  "number that their quartiles need at this epsilon to stay on the data (95%%): they "
                                  "may have exploded (landed anywhere on the grid); declare public bounds, or raise "
                                  "epsilon or bounds_share", x->noisy_rows, needed));
    for (uint32_t j = 0; j < x->schema->n_features; j++) {
      const rdt_feature *ft = &x->schema->features[j];
      if (rdt_unit_is_private(u, j) && rdt_bounds_quartile_cells(ft->min, ft->max) <= 2)
        warn(o, &n, sqlite3_mprintf("private bounds of feature \"%s\" collapsed to [%!.6g, %!.6g]: both quartiles "
                                    "fell within two grid cells (about 3%% of the values each), so most rows share "
                                    "one value and clamping squeezes the rest onto the edges; declare public bounds "
                                    "if that feature matters", ft->name, ft->min, ft->max));
    }
  }
  sqlite3_str_appendall(o, "],");
}

/* The end of every rdt_info document: seeded, the signature (public_key
** NULL: unsigned) and whether it verifies against the key the model
** carries, the release status, the warnings, the size and SHA-256 of the
** BLOB (what an rdt_ledger records for the model it released); then the
** result. */
static void finish_info(sqlite3_context *ctx, sqlite3_str *o, const rdt_model_handle *h, const info_facts *x) {
  sqlite3_str_appendf(o, ",\"seeded\":%s,\"domain_from_rows\":%s,\"signed\":%s,", x->seeded ? "true" : "false",
                      x->schema->from_rows ? "true" : "false", x->public_key ? "true" : "false");
  /* Checked, not assumed: a decoded model's checksum can be recomputed by
  ** whoever edits it; only the signature ties its bytes to the key. Which
  ** key that is, is for rdt_verify(model, the publisher's key) to say. */
  sqlite3_str_appendf(o, "\"signature_valid\":%s,",
                      !x->public_key ? "null" : rdt_model_verify(h->bytes, h->size, x->public_key) ? "true" : "false");
  if (x->public_key) {
    char pk[65];
    sodium_bin2hex(pk, sizeof pk, x->public_key, 32);
    sqlite3_str_appendf(o, "\"public_key\":\"%s\",\"publisher_note\":", pk);
    rdt_sql_json_string(o, x->note ? x->note : "", x->note ? strlen(x->note) : 0);
    sqlite3_str_appendchar(o, 1, ',');
  }
  sqlite3_str_appendall(o, "\"release\":");
  if (!x->is_private)
    sqlite3_str_appendall(o, "\"NOT PRIVATE: trained with epsilon null, the counts are exact; never publish this "
                             "model\"");
  else if (x->seeded)
    sqlite3_str_appendall(o, "\"NOT FOR RELEASE: trained with a seed, so anyone who learns the seed can remove "
                             "the noise; for tests and reproducibility only\"");
  else if (x->schema->from_rows)
    sqlite3_str_appendall(o, "\"NOT FOR RELEASE: its classes or category values are the lists rdt_features copied "
                             "from the private rows (\\\"copied_from_rows\\\"), which the model would publish; retrain "
                             "with the public lists\"");
  else if (rdt_eps_to_double(x->eps) > RDT_WEAK_EPSILON)
    sqlite3_str_appendf(o, "\"WEAK: epsilon above %d is not a meaningful privacy guarantee (the noise hides "
                           "little); publish only if that is acceptable\"", RDT_WEAK_EPSILON);
  else
    sqlite3_str_appendall(o, "\"ok\"");
  sqlite3_str_appendchar(o, 1, ',');
  append_warnings(o, x);
  unsigned char sha[crypto_hash_sha256_BYTES];
  char sha_hex[2 * sizeof sha + 1];
  crypto_hash_sha256(sha, h->bytes, h->size);
  sodium_bin2hex(sha_hex, sizeof sha_hex, sha, sizeof sha);
  sqlite3_str_appendf(o, "\"size_bytes\":%llu,\"sha256\":\"%s\"}", (unsigned long long)h->size, sha_hex);
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
                         "higher); min = a - 1.5 (b - a), max = b + 1.5 (b - a)\",\"reliable_from_rows\":%.0f,"
                         "\"reliable_from_rows_rule\":\"with at least this many rows with a number, both quartiles "
                         "land on the data with probability 95%% (ext/core/bounds.h, rule 7); below it they may "
                         "explode\"},",
                      (double)RDT_BOUNDS_LOW / RDT_QUANTILE_ONE, (double)RDT_BOUNDS_HIGH / RDT_QUANTILE_ONE,
                      rdt_eps_to_double(u->eps_quantile), ceil(rdt_bounds_rows_needed(u->eps_quantile)));
}

/* From a learner's own facts (describe; learner.h): the constant model that
** "auto" ended with, and why; the noisy row count auto released. */
static int learned_facts(const rdt_bytes *d, info_facts *x) {
  char jerr[16];
  sqlite3_str *w = sqlite3_str_new(NULL);
  sqlite3_str_appendchar(w, 1, '{');
  sqlite3_str_append(w, (const char *)d->p, (int)d->n);
  sqlite3_str_appendall(w, "\"\":null}");
  int len = sqlite3_str_length(w);
  char *text = sqlite3_str_finish(w);
  rdt_json *facts = text ? rdt_json_parse(text, (size_t)len, jerr, sizeof jerr) : NULL;
  sqlite3_free(text);
  const rdt_json *chosen = facts ? rdt_json_get(facts, "chosen") : NULL, *a = facts ? rdt_json_get(facts, "auto") : NULL;
  const rdt_json *picked = a ? rdt_json_get(a, "rule_picked") : NULL, *rows = a ? rdt_json_get(a, "noisy_rows") : NULL;
  if (rows && rows->type == RDT_JSON_NUMBER) x->noisy_rows = rows->number;
  if (chosen && chosen->type == RDT_JSON_STRING && strcmp(chosen->string, "constant") == 0)
    x->constant = picked && picked->type == RDT_JSON_STRING && strcmp(picked->string, "constant") == 0
                      ? "auto's rule picked it: at this epsilon and row count no learner was expected to beat it"
                      : "auto's guard fell back to it: the learner its rule picked did no better on the validation rows";
  rdt_json_free(facts);
  return facts != NULL; /* the facts are the learner's own JSON: only memory can fail */
}

/* The start of every rdt_info document: the format, the versions and the
** model's id (its closing quote is the caller's). */
static sqlite3_str *info_head(sqlite3_context *ctx, uint32_t minor, const unsigned char model_id[16]) {
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendf(o, "{\"format\":\"rdt-model\",\"format_version\":\"%d.%d\",\"extension_version\":\"%s\",",
                      RDT_FORMAT_MAJOR, (int)minor, RDT_VERSION_STRING);
  sqlite3_str_appendall(o, "\"model_id\":\"");
  for (int i = 0; i < 16; i++) sqlite3_str_appendf(o, "%02x", model_id[i]);
  return o;
}

/* rdt_info of a learner model: the common facts, then the learner's own. */
static void learned_info(sqlite3_context *ctx, const rdt_model_handle *h) {
  const rdt_learned *m = &h->learned;
  const rdt_learn_common *c = &m->common;
  sqlite3_str *o = info_head(ctx, m->format_minor, m->model_id);
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
  info_facts x = {c->is_private, c->seeded, stated, m->is_signed ? m->public_key : NULL, m->note, &m->schema,
                  &c->unit, NAN, NULL};
  int ok = learned_facts(&d, &x);
  rdt_bytes_free(&d);
  if (!ok) {
    sqlite3_free(sqlite3_str_finish(o));
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (c->regression)
    sqlite3_str_appendf(o, "\"target\":{\"min\":%!.17g,\"max\":%!.17g},", c->target_min, c->target_max);
  sqlite3_str_appendall(o, "\"label\":");
  rdt_sql_json_string(o, rdt_score_label(h), strlen(rdt_score_label(h)));
  sqlite3_str_appendall(o, ",\"classes\":");
  rdt_sql_json_classes(o, &m->schema);
  sqlite3_str_appendall(o, ",\"features\":");
  rdt_sql_json_features(o, &m->schema);
  finish_info(ctx, o, h, &x);
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
  sqlite3_str *o = info_head(ctx, f->format_minor, f->model_id);
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
  sqlite3_str_appendall(o, "\"label\":");
  rdt_sql_json_string(o, rdt_score_label(h), strlen(rdt_score_label(h)));
  sqlite3_str_appendall(o, ",\"classes\":");
  rdt_sql_json_classes(o, &f->schema);
  sqlite3_str_appendall(o, ",\"features\":");
  rdt_sql_json_features(o, &f->schema);
  sqlite3_str_appendf(o, ",\"structure_from_rows\":%s", rdt_config_structure_from_rows(c) ? "true" : "false");
  info_facts x = {c->is_private, c->seeded, stated, f->is_signed ? f->public_key : NULL, f->note, &f->schema,
                  &c->unit, c->auto_depth && c->is_private ? (double)c->noisy_rows : NAN, NULL};
  finish_info(ctx, o, h, &x);
}

