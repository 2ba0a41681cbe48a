/*
** sql_export.c - rdt_export(model) -> JSON and rdt_import(json) -> the same
** BLOB, byte for byte: the SQL surface. The JSON codec of forest models is
** the core's (core/forest_json.h, layout in sql/model-format.md); a learner
** model is exported as its public description and its BLOB in hex.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forest_json.h"
#include "core/json.h"
#include "core/json_io.h"
#include "core/model.h"
#include "rdt_sql.h"

/* A learner model: its public description for people, and the model itself
** as hex ("model_hex") for rdt_import, which re-validates it as a BLOB. The
** learner's state has no JSON codec of its own yet. */
/* Written with the core's JSON writers (core/json_io.h), as forests are. */
static void export_learned(rdt_bytes *o, const rdt_model_handle *h) {
  const rdt_learned *m = &h->learned;
  rdt_json_putf(o, "{\"format\":\"%s\",\"format_version\":%d,\"model_format\":\"%d.%d\",\"learner\":\"%s\","
                   "\"task\":\"%s\",\"epsilon\":",
                RDT_EXPORT_FORMAT, RDT_EXPORT_VERSION, RDT_FORMAT_MAJOR, m->format_minor, m->learner->name,
                m->common.regression ? "regression" : "classification");
  if (m->common.is_private) rdt_json_put_double(o, rdt_eps_to_double(m->common.eps));
  else rdt_bytes_text(o, "null");
  rdt_bytes_text(o, ",\"classes\":");
  rdt_json_put_classes(o, &m->schema);
  rdt_bytes_text(o, ",\"features\":");
  rdt_json_put_features(o, &m->schema);
  if (rdt_model_has_label(m->label)) { /* for people: the model_hex holds it */
    rdt_bytes_text(o, ",\"label\":");
    rdt_json_put_string(o, m->label, strlen(m->label));
  }
  rdt_bytes_text(o, ",\"model_hex\":");
  rdt_json_put_hex(o, h->bytes, h->size);
  rdt_json_put_char(o, '}');
}

/* rdt_import of a learner export: the hex back to the BLOB, decoded as any
** BLOB is (Contract of model.h), so a hand-edited export is refused. */
static unsigned char *import_learned(const rdt_json *root, size_t *size, char *err, size_t en) {
  const rdt_json *f = rdt_json_get(root, "format"), *v = rdt_json_get(root, "format_version"),
                 *x = rdt_json_get(root, "model_hex");
  if (!f || f->type != RDT_JSON_STRING || strcmp(f->string, RDT_EXPORT_FORMAT) != 0 || !v || v->type != RDT_JSON_NUMBER ||
      !v->is_integer || v->integer != RDT_EXPORT_VERSION || !x || x->type != RDT_JSON_STRING || x->string_len % 2 ||
      x->string_len == 0) {
    snprintf(err, en, "not an rdt learner model export (\"format\", \"format_version\", \"model_hex\")");
    return NULL;
  }
  size_t n = x->string_len / 2;
  unsigned char *blob = malloc(n);
  if (!blob) {
    snprintf(err, en, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    int d[2];
    for (int k = 0; k < 2; k++) {
      char c = x->string[2 * i + k];
      d[k] = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    }
    if (d[0] < 0 || d[1] < 0) {
      free(blob);
      snprintf(err, en, "\"model_hex\" must be lowercase hexadecimal");
      return NULL;
    }
    blob[i] = (unsigned char)(d[0] << 4 | d[1]);
  }
  rdt_learned m;
  char derr[180];
  if (!rdt_model_is_learned(blob, n) || !rdt_learned_decode(blob, n, rdt_learner_by_id, &m, derr, sizeof derr)) {
    snprintf(err, en, "the export holds an invalid learner model (%s)", rdt_model_is_learned(blob, n) ? derr : "not one");
    free(blob);
    return NULL;
  }
  rdt_learned_free(&m);
  *size = n;
  return blob;
}

void rdt_export_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  rdt_model_handle *h = rdt_model_get(ctx, argv[0], 0, "rdt_export");
  if (!h) return;
  rdt_bytes o = {0};
  if (h->is_learned) export_learned(&o, h);
  else rdt_forest_json_export(&h->forest, &o);
  if (o.oom) {
    rdt_bytes_free(&o);
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text64(ctx, (const char *)o.p, o.n, free, SQLITE_UTF8); /* SQLite owns o.p now */
}

void rdt_import_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  char err[256] = "", jerr[128];
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    sqlite3_result_error(ctx, "rdt_import: expected the JSON text made by rdt_export", -1);
    return;
  }
  rdt_json *root = rdt_json_parse((const char *)sqlite3_value_text(argv[0]), (size_t)sqlite3_value_bytes(argv[0]), jerr,
                                  sizeof jerr);
  if (!root) {
    snprintf(err, sizeof err, "not valid JSON: %s", jerr);
    rdt_sql_error(ctx, "rdt_import", err);
    return;
  }
  size_t n = 0;
  unsigned char *blob = root->type == RDT_JSON_OBJECT && rdt_json_get(root, "learner")
                            ? import_learned(root, &n, err, sizeof err)
                            : rdt_forest_json_import(root, &n, err, sizeof err);
  rdt_json_free(root);
  if (!blob) rdt_sql_error(ctx, "rdt_import", err);
  else sqlite3_result_blob64(ctx, blob, n, free);
}
