/*
** sql_export.c - rdt_export(model) -> JSON and rdt_import(json) -> the same
** BLOB, byte for byte: the SQL surface.
**
** Contract:
**   1. rdt_export writes a forest with the core's JSON codec
**      (core/forests/forest_json.h, layout in sql/model-format.md) and a learner
**      model as its public description (learner, task, epsilon, classes,
**      features) beside its BLOB in lowercase hex ("model_hex"); the
**      learner's state has no JSON codec of its own.
**   2. rdt_import builds the BLOB (a forest from its members, a learner
**      model from "model_hex") and decodes it as any BLOB is (model.h), so
**      a model that is corrupt or inconsistent is refused.
**   3. The BLOB is the authority: rdt_import then regenerates the export
**      from it and refuses a document that is not that export as JSON
**      values (core/json_io.h contract 5), naming the first member that
**      differs, so no readable member (a learner's "epsilon", "learner",
**      "classes", a forest's "privacy.epsilon", ...) can say what the model
**      does not. Key order, whitespace and number spelling are free.
**   4. A signed document whose signature does not verify under the key it
**      carries is refused (core/forests/forest_json.h contract 5): an edit of what
**      the BLOB holds gives another model, which only the signature can
**      tell from the publisher's.
**   5. Errors are SQL errors prefixed "rdt_import: "; hostile documents are
**      refused, never crash (the parser bounds depth; every allocation is
**      checked).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forests/forest_json.h"
#include "core/json.h"
#include "core/json_io.h"
#include "core/model.h"
#include "core/sign.h"
#include "rdt_sql.h"

/* Contract 1: written with the core's JSON writers (core/json_io.h), as
** forests are; bytes[0..size) is the model's BLOB. */
static void export_learned(rdt_bytes *o, const rdt_learned *m, const unsigned char *bytes, size_t size) {
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
  rdt_json_put_hex(o, bytes, size);
  rdt_json_put_char(o, '}');
}

/* rdt_import of a learner export: the hex back to the BLOB, decoded as any
** BLOB is (contract 2), then the document checked against the export of
** what it decoded (contract 3): the readable members are not read at all. */
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
  rdt_bytes o = {0};
  export_learned(&o, &m, blob, n);
  int same = !o.oom && rdt_json_same_export(root, o.p, o.n, err, en);
  if (o.oom) snprintf(err, en, "out of memory");
  rdt_bytes_free(&o);
  if (same && m.is_signed && !rdt_model_verify(blob, n, m.public_key)) { /* contract 4 */
    snprintf(err, en, "%s", RDT_EXPORT_UNSIGNED_EDIT);
    same = 0;
  }
  rdt_learned_free(&m);
  if (!same) {
    free(blob);
    return NULL;
  }
  *size = n;
  return blob;
}

void rdt_export_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  rdt_model_handle *h = rdt_model_get(ctx, argv[0], 0, "rdt_export");
  if (!h) return;
  rdt_bytes o = {0};
  if (h->is_learned) export_learned(&o, &h->learned, h->bytes, h->size);
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
  char err[512] = "", jerr[128]; /* room for a JSON path and two values (json_io.h contract 5) */
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    int blob = sqlite3_value_type(argv[0]) == SQLITE_BLOB;
    int model = blob && sqlite3_value_bytes(argv[0]) >= 8 && memcmp(sqlite3_value_blob(argv[0]), "RDTMODEL", 8) == 0;
    sqlite3_result_error(ctx,
                         model  ? "rdt_import: expected the JSON text made by rdt_export; this BLOB is already a model "
                                  "(no import needed)"
                         : blob ? "rdt_import: expected the JSON text made by rdt_export; it is a BLOB (readfile() "
                                  "returns one): pass CAST(readfile('model.json') AS TEXT)"
                                : "rdt_import: expected the JSON text made by rdt_export",
                         -1);
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
  /* A learner export carries its BLOB, a forest export never does (as examples/rdt_reader.py tells them apart). */
  unsigned char *blob = root->type == RDT_JSON_OBJECT && rdt_json_get(root, "model_hex")
                            ? import_learned(root, &n, err, sizeof err)
                            : rdt_forest_json_import(root, &n, err, sizeof err);
  rdt_json_free(root);
  if (!blob) rdt_sql_error(ctx, "rdt_import", err);
  else sqlite3_result_blob64(ctx, blob, n, free);
}
