/*
** sql_export.c - rdt_export(model) -> JSON and rdt_import(json) -> the same
** BLOB, byte for byte. The JSON holds everything needed to predict without
** SQLite (schema, trees, released leaf values, privacy facts); its layout is
** documented in sql/model-format.md. Doubles are written with 17 significant
** digits, so they read back exactly; subset masks and keys are hex.
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forest_kind.h"
#include "core/json.h"
#include "core/matrix.h"
#include "core/model.h"
#include "core/sharp.h"
#include "rdt_sql.h"

#define EXPORT_FORMAT "rdt-model-json"
#define EXPORT_VERSION 1

static void put_hex(sqlite3_str *o, const unsigned char *b, size_t n) {
  sqlite3_str_appendchar(o, 1, '"');
  for (size_t i = 0; i < n; i++) sqlite3_str_appendf(o, "%02x", b[i]);
  sqlite3_str_appendchar(o, 1, '"');
}

/* Complete binary trees: "nodes", per tree in heap order [kind, feature,
** value] (a subset's value is its mask in hex); "leaves", per tree and
** leaf, the released values (classes, or count and sum). */
static void export_binary(sqlite3_str *o, const rdt_forest *f) {
  const rdt_config *c = &f->config;
  sqlite3_str_appendall(o, ",\"nodes\":[");
  for (uint32_t t = 0; t < c->trees; t++) {
    sqlite3_str_appendall(o, t ? ",[" : "[");
    for (uint32_t i = 0; i < f->n_internal; i++) {
      const rdt_node *n = &f->nodes[(size_t)t * f->n_internal + i];
      sqlite3_str_appendf(o, "%s[\"%s\",%u,", i ? "," : "", rdt_sql_split_kind_name(n->kind), n->feature);
      if (n->kind == RDT_SPLIT_CATEGORY_SUBSET)
        sqlite3_str_appendf(o, "\"%016llx\"", (unsigned long long)rdt_value_to_mask(n->value));
      else
        rdt_sql_json_double(o, n->value);
      sqlite3_str_appendchar(o, 1, ']');
    }
    sqlite3_str_appendchar(o, 1, ']');
  }
  /* leaves: per tree, per leaf, the released values (classes, or count and sum) */
  uint32_t slots = rdt_forest_slots(f);
  sqlite3_str_appendall(o, "],\"leaves\":[");
  for (uint32_t t = 0; t < c->trees; t++) {
    sqlite3_str_appendall(o, t ? ",[" : "[");
    for (uint32_t l = 0; l < f->n_leaves; l++) {
      const int64_t *v = f->counts + ((size_t)t * f->n_leaves + l) * slots;
      sqlite3_str_appendall(o, l ? ",[" : "[");
      for (uint32_t k = 0; k < slots; k++) sqlite3_str_appendf(o, "%s%lld", k ? "," : "", (long long)v[k]);
      sqlite3_str_appendchar(o, 1, ']');
    }
    sqlite3_str_appendchar(o, 1, ']');
  }
  sqlite3_str_appendchar(o, 1, ']');
}

static void put_u32_list(sqlite3_str *o, const uint32_t *v, uint32_t n) {
  sqlite3_str_appendchar(o, 1, '[');
  for (uint32_t i = 0; i < n; i++) sqlite3_str_appendf(o, "%s%u", i ? "," : "", v[i]);
  sqlite3_str_appendchar(o, 1, ']');
}

/* Multiway trees (matrix, RDT#): "layout": "multiway"; "nodes", per tree in
** breadth-first order [feature, next] (feature -1: a leaf, next its index);
** "leaves", per tree, the released values of each slot (a leaf, or for
** RDT# each centre of each leaf in order); "matrix" or "rdt#" the rest of
** the model's MTRX / CELL or SHRP / CNTR sections (sql/model-format.md). */
static void export_multiway(sqlite3_str *o, const rdt_forest *f) {
  const rdt_config *c = &f->config;
  const rdt_matrix *m = f->matrix;
  uint32_t slots = rdt_forest_slots(f), nf = f->schema.n_features;
  sqlite3_str_appendf(o, ",\"layout\":\"multiway\",\"bins\":%u,\"nodes\":[", c->bins);
  for (uint32_t t = 0; t < c->trees; t++) {
    sqlite3_str_appendall(o, t ? ",[" : "[");
    for (uint32_t i = m->node_start[t]; i < m->node_start[t + 1]; i++) {
      const rdt_mnode *nd = &m->nodes[i];
      if (nd->feature == RDT_MNODE_LEAF) sqlite3_str_appendf(o, "%s[-1,%u]", i > m->node_start[t] ? "," : "", nd->next);
      else sqlite3_str_appendf(o, "%s[%u,%u]", i > m->node_start[t] ? "," : "", nd->feature, nd->next);
    }
    sqlite3_str_appendchar(o, 1, ']');
  }
  sqlite3_str_appendall(o, "],\"leaves\":[");
  for (uint32_t t = 0; t < c->trees; t++) {
    uint64_t a = m->leaf_start[t], b = m->leaf_start[t + 1];
    if (f->sharp) { a = f->sharp->slot_start[a]; b = f->sharp->slot_start[b]; }
    sqlite3_str_appendall(o, t ? ",[" : "[");
    for (uint64_t l = a; l < b; l++) {
      const int64_t *v = f->counts + l * slots;
      sqlite3_str_appendall(o, l > a ? ",[" : "[");
      for (uint32_t k = 0; k < slots; k++) sqlite3_str_appendf(o, "%s%lld", k ? "," : "", (long long)v[k]);
      sqlite3_str_appendchar(o, 1, ']');
    }
    sqlite3_str_appendchar(o, 1, ']');
  }
  sqlite3_str_appendchar(o, 1, ']');
  if (f->sharp) {
    const rdt_sharp *sh = f->sharp;
    sqlite3_str_appendf(o, ",\"rdt#\":{\"primary_trees\":%u,\"cells\":%u,\"public_rows\":%llu,\"public_tables\":[",
                        f->config.primary_trees, f->config.cells, (unsigned long long)sh->public_rows);
    for (uint32_t at = 0; at < f->config.public_tables_len; at += (uint32_t)strlen(f->config.public_tables + at) + 1) {
      if (at) sqlite3_str_appendchar(o, 1, ',');
      rdt_sql_json_string(o, f->config.public_tables + at, strlen(f->config.public_tables + at));
    }
    sqlite3_str_appendall(o, "],\"centres\":[");
    for (uint64_t l = 0; l < rdt_matrix_leaves(f); l++) {
      sqlite3_str_appendall(o, l ? ",[" : "[");
      uint32_t a = sh->slot_start[l], b = sh->slot_start[l + 1];
      for (uint32_t k = a; k < b && !isnan(sh->centres[(size_t)a * nf]); k++) {
        sqlite3_str_appendall(o, k > a ? ",[" : "[");
        for (uint32_t j = 0; j < nf; j++) {
          if (j) sqlite3_str_appendchar(o, 1, ',');
          rdt_sql_json_double(o, sh->centres[(size_t)k * nf + j]);
        }
        sqlite3_str_appendchar(o, 1, ']');
      }
      sqlite3_str_appendchar(o, 1, ']');
    }
    sqlite3_str_appendall(o, "]}");
    return;
  }
  sqlite3_str_appendf(o, ",\"matrix\":{\"strategy\":%u,\"expected_error\":[", m->strategy);
  for (int k = 0; k < RDT_N_STRATEGIES; k++) {
    if (k) sqlite3_str_appendchar(o, 1, ',');
    rdt_sql_json_double(o, m->factor[k]); /* null when not available */
  }
  sqlite3_str_appendall(o, "],\"expected_leaf_variance\":");
  rdt_sql_json_double(o, m->expected_variance);
  sqlite3_str_appendall(o, ",\"tables\":[");
  for (uint32_t g = 0; g < m->n_tables; g++) {
    sqlite3_str_appendf(o, "%s{\"epsilon_num\":%llu,\"weight\":", g ? "," : "", (unsigned long long)m->tables[g].eps.num);
    rdt_sql_json_double(o, m->tables[g].weight);
    sqlite3_str_appendall(o, ",\"attributes\":");
    put_u32_list(o, m->tables[g].attrs, m->tables[g].n_attrs);
    sqlite3_str_appendchar(o, 1, '}');
  }
  sqlite3_str_appendall(o, "],\"cells\":");
  if (m->exact_cells) {
    sqlite3_str_appendall(o, "{\"attributes\":");
    put_u32_list(o, m->exact.attrs, m->exact.n_attrs);
    sqlite3_str_appendall(o, ",\"values\":[");
    for (uint64_t i = 0; i < m->exact.cells * slots; i++)
      sqlite3_str_appendf(o, "%s%lld", i ? "," : "", (long long)m->exact_cells[i]);
    sqlite3_str_appendall(o, "]}}");
  } else {
    sqlite3_str_appendall(o, "null}");
  }
}

/* A learner model: its public description for people, and the model itself
** as hex ("model_hex") for rdt_import, which re-validates it as a BLOB. The
** learner's state has no JSON codec of its own yet. */
static void export_learned(sqlite3_context *ctx, const rdt_model_handle *h) {
  const rdt_learned *m = &h->learned;
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendf(o, "{\"format\":\"%s\",\"format_version\":%d,\"model_format\":\"%d.%d\",\"learner\":\"%s\","
                         "\"task\":\"%s\",\"epsilon\":",
                      EXPORT_FORMAT, EXPORT_VERSION, RDT_FORMAT_MAJOR, m->format_minor, m->learner->name,
                      m->common.regression ? "regression" : "classification");
  if (m->common.is_private) rdt_sql_json_double(o, rdt_eps_to_double(m->common.eps));
  else sqlite3_str_appendall(o, "null");
  sqlite3_str_appendall(o, ",\"classes\":");
  rdt_sql_json_classes(o, &m->schema);
  sqlite3_str_appendall(o, ",\"features\":");
  rdt_sql_json_features(o, &m->schema);
  sqlite3_str_appendall(o, ",\"model_hex\":\"");
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < h->size; i++) {
    char pair[2] = {hex[h->bytes[i] >> 4], hex[h->bytes[i] & 15]};
    sqlite3_str_append(o, pair, 2);
  }
  sqlite3_str_appendall(o, "\"}");
  int n = sqlite3_str_length(o);
  char *text = sqlite3_str_finish(o);
  if (!text) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, text, n, sqlite3_free);
}

/* rdt_import of a learner export: the hex back to the BLOB, decoded as any
** BLOB is (Contract of model.h), so a hand-edited export is refused. */
static unsigned char *import_learned(const rdt_json *root, size_t *size, char *err, size_t en) {
  const rdt_json *f = rdt_json_get(root, "format"), *v = rdt_json_get(root, "format_version"),
                 *x = rdt_json_get(root, "model_hex");
  if (!f || f->type != RDT_JSON_STRING || strcmp(f->string, EXPORT_FORMAT) != 0 || !v || v->type != RDT_JSON_NUMBER ||
      !v->is_integer || v->integer != EXPORT_VERSION || !x || x->type != RDT_JSON_STRING || x->string_len % 2 ||
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
  if (h->is_learned) {
    export_learned(ctx, h);
    return;
  }
  const rdt_forest *f = &h->forest;
  const rdt_config *c = &f->config;
  int diprime = c->algorithm == RDT_ALGO_DIPRIME, regression = c->task == RDT_TASK_REGRESSION;
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendf(o, "{\"format\":\"%s\",\"format_version\":%d,\"model_format\":\"%d.%d\",\"model_id\":",
                      EXPORT_FORMAT, EXPORT_VERSION, RDT_FORMAT_MAJOR, f->format_minor);
  put_hex(o, f->model_id, 16);
  sqlite3_str_appendf(o, ",\"seeded\":%s,\"privacy\":{\"private\":%s,\"neighbouring\":\"%s\"",
                      c->seeded ? "true" : "false", c->is_private ? "true" : "false",
                      c->unit.column[0] ? "add/remove one unit" : "add/remove one row");
  if (rdt_unit_active(&c->unit)) { /* the UNIT section (unit.h): epsilon_num below is the model's per-row share */
    const rdt_unit *u = &c->unit;
    sqlite3_str_appendall(o, ",\"unit\":{\"column\":");
    rdt_sql_json_string(o, u->column, strlen(u->column));
    sqlite3_str_appendf(o, ",\"max_rows_per_unit\":%u,\"epsilon_total_num\":%llu,\"epsilon_bounds_num\":%llu,"
                           "\"epsilon_quantile_num\":%llu,\"private_bounds\":[",
                        u->max_rows, (unsigned long long)u->eps_total.num, (unsigned long long)u->eps_bounds.num,
                        (unsigned long long)u->eps_quantile.num);
    for (uint32_t j = 0, n = 0; j < f->schema.n_features; j++)
      if (rdt_unit_is_private(u, j)) sqlite3_str_appendf(o, "%s%u", n++ ? "," : "", j);
    sqlite3_str_appendall(o, "]}");
  }
  if (c->is_private) {
    sqlite3_str_appendall(o, ",\"epsilon\":");
    rdt_sql_json_double(o, rdt_eps_to_double(c->eps));
    sqlite3_str_appendf(o, ",\"epsilon_num\":%llu,\"epsilon_den\":4294967296", (unsigned long long)c->eps.num);
    if (diprime)
      sqlite3_str_appendf(o, ",\"epsilon_query_num\":%llu,\"epsilon_leaf_num\":%llu", (unsigned long long)c->eps_query.num,
                          (unsigned long long)c->eps_leaf.num);
  }
  sqlite3_str_appendf(o,
                      "},\"algorithm\":\"%s\",\"task\":\"%s\",\"trees\":%u,\"depth\":%u,\"vote\":%d,\"splits\":%d,"
                      "\"categorical\":%d,\"auto_depth\":%d,\"epsilon_count_num\":%llu,\"row_count\":%lld,"
                      "\"candidates\":%u,\"partition\":%s,\"rho\":",
                      rdt_forest_kind_of(c->algorithm)->name,
                      regression ? "regression" : "classification", c->trees, c->depth,
                      (int)c->vote, (int)c->splits, (int)c->categorical, c->auto_depth,
                      (unsigned long long)c->eps_count.num, (long long)c->noisy_rows, c->candidates,
                      c->partition ? "true" : "false");
  rdt_sql_json_double(o, c->rho);
  sqlite3_str_appendall(o, ",\"target\":{\"min\":");
  rdt_sql_json_double(o, c->target_min);
  sqlite3_str_appendall(o, ",\"max\":");
  rdt_sql_json_double(o, c->target_max);
  sqlite3_str_appendall(o, "},\"noise_scale\":");
  rdt_sql_json_double(o, rdt_forest_leaf_scale(f));
  sqlite3_str_appendall(o, ",\"features\":");
  rdt_sql_json_features(o, &f->schema);
  sqlite3_str_appendall(o, ",\"classes\":");
  rdt_sql_json_classes(o, &f->schema);
  if (f->matrix) {
    export_multiway(o, f);
  } else {
    export_binary(o, f);
  }
  if (f->tree_kept) { /* "keep_trees": the share asked for and the trees that vote, ascending */
    sqlite3_str_appendall(o, ",\"voting_trees\":{\"share\":");
    rdt_sql_json_double(o, c->keep_trees);
    sqlite3_str_appendall(o, ",\"trees\":[");
    for (uint32_t t = 0, i = 0; t < c->trees; t++)
      if (f->tree_kept[t]) sqlite3_str_appendf(o, "%s%u", i++ ? "," : "", t);
    sqlite3_str_appendall(o, "]}");
  }
  sqlite3_str_appendall(o, ",\"signature\":");

  if (f->is_signed) {
    sqlite3_str_appendall(o, "{\"note\":");
    rdt_sql_json_string(o, f->note ? f->note : "", f->note ? strlen(f->note) : 0);
    sqlite3_str_appendall(o, ",\"public_key\":");
    put_hex(o, f->public_key, 32);
    sqlite3_str_appendall(o, ",\"signature\":");
    put_hex(o, f->signature, RDT_SIGNATURE_BYTES);
    sqlite3_str_appendchar(o, 1, '}');
  } else {
    sqlite3_str_appendall(o, "null");
  }
  sqlite3_str_appendchar(o, 1, '}');
  int len = sqlite3_str_length(o);
  char *s = sqlite3_str_finish(o);
  if (!s) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, s, len, sqlite3_free);
}

/* ---- import ----------------------------------------------------------- */

typedef struct {
  char *err;
  size_t n;
  int failed;
} importer;

static int bad(importer *im, const char *what) {
  if (!im->failed) snprintf(im->err, im->n, "%s", what);
  im->failed = 1;
  return 0;
}

static const rdt_json *member(importer *im, const rdt_json *obj, const char *key, rdt_json_type type) {
  const rdt_json *v = rdt_json_get(obj, key);
  if (!v || v->type != type) {
    char msg[160];
    snprintf(msg, sizeof msg, "\"%s\" is missing or has the wrong type", key);
    bad(im, msg);
    return NULL;
  }
  return v;
}

static int member_uint(importer *im, const rdt_json *obj, const char *key, uint64_t max, uint64_t *out) {
  const rdt_json *v = member(im, obj, key, RDT_JSON_NUMBER);
  if (!v) return 0;
  if (!v->is_integer || v->integer < 0 || (uint64_t)v->integer > max) return bad(im, "an integer field is out of range");
  *out = (uint64_t)v->integer;
  return 1;
}

static int member_double(importer *im, const rdt_json *obj, const char *key, double *out) {
  const rdt_json *v = member(im, obj, key, RDT_JSON_NUMBER);
  if (!v) return 0;
  *out = v->number;
  return 1;
}

static int hex_field(importer *im, const rdt_json *v, unsigned char *out, size_t n) {
  size_t got = 0;
  if (!v || v->type != RDT_JSON_STRING || v->string_len != 2 * n ||
      sodium_hex2bin(out, n, v->string, v->string_len, NULL, &got, NULL) != 0 || got != n)
    return bad(im, "a hex field is malformed");
  return 1;
}

static int values_from(importer *im, const rdt_json *arr, rdt_value **out, uint32_t *count, uint32_t max) {
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n > max) return bad(im, "a value list is malformed");
  *count = 0;
  if (arr->n == 0) return 1;
  *out = calloc(arr->n, sizeof **out);
  if (!*out) return bad(im, "out of memory");
  for (size_t i = 0; i < arr->n; i++) {
    const rdt_json *v = arr->items[i];
    int ok = v->type == RDT_JSON_STRING ? rdt_value_set_text(&(*out)[i], v->string, v->string_len)
             : v->type == RDT_JSON_NUMBER && v->is_integer ? rdt_value_set_int(&(*out)[i], v->integer)
                                                            : (bad(im, "values must be strings or integers"), 0);
    if (!ok) return bad(im, "out of memory");
    (*count)++;
  }
  return 1;
}

static int import_signature(importer *im, const rdt_json *root, rdt_forest *f);

static int u32_list(importer *im, const rdt_json *arr, uint32_t max, uint32_t **out, uint32_t *n) {
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n > max) return bad(im, "an index list is malformed");
  *out = malloc((arr->n ? arr->n : 1) * sizeof **out);
  if (!*out) return bad(im, "out of memory");
  *n = (uint32_t)arr->n;
  for (size_t i = 0; i < arr->n; i++) {
    const rdt_json *v = arr->items[i];
    if (v->type != RDT_JSON_NUMBER || !v->is_integer || v->integer < 0 || (uint64_t)v->integer >= max)
      return bad(im, "an index is out of range");
    (*out)[i] = (uint32_t)v->integer;
  }
  return 1;
}

static int int_array(importer *im, const rdt_json *arr, int64_t *out, size_t n) {
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n != n) return bad(im, "a value array has the wrong length");
  for (size_t i = 0; i < n; i++) {
    if (arr->items[i]->type != RDT_JSON_NUMBER || !arr->items[i]->is_integer) return bad(im, "values must be integers");
    out[i] = arr->items[i]->integer;
  }
  return 1;
}

/* The multiway part of an export (export_multiway); the decoder validates
** the result as it does any BLOB. */
static int import_multiway(importer *im, const rdt_json *root, rdt_forest *f) {
  rdt_config *c = &f->config;
  uint32_t nf = f->schema.n_features, slots = rdt_forest_slots(f);
  if (!rdt_forest_kind_of(c->algorithm)->multiway)
    return bad(im, "a multiway layout needs \"algorithm\" \"matrix\" or \"rdt#\"");
  rdt_matrix *m = f->matrix = calloc(1, sizeof *f->matrix);
  f->multiway = &rdt_matrix_multiway;
  if (!m) return bad(im, "out of memory");
  uint64_t u;
  if (!member_uint(im, root, "bins", RDT_MATRIX_MAX_BINS, &u)) return 0;
  c->bins = (uint32_t)u;
  m->strategy = RDT_STRATEGY_LEAF;
  if (!rdt_matrix_domains(f)) return bad(im, "out of memory");
  const rdt_json *nodes = member(im, root, "nodes", RDT_JSON_ARRAY), *leaves = member(im, root, "leaves", RDT_JSON_ARRAY);
  if (!nodes || !leaves) return 0;
  if (nodes->n != c->trees || leaves->n != c->trees) return bad(im, "\"nodes\" and \"leaves\" need one entry per tree");
  uint64_t n_nodes = 0, n_slots = 0;
  for (uint32_t t = 0; t < c->trees; t++) {
    if (nodes->items[t]->type != RDT_JSON_ARRAY || leaves->items[t]->type != RDT_JSON_ARRAY)
      return bad(im, "a tree is malformed");
    n_nodes += nodes->items[t]->n;
    n_slots += leaves->items[t]->n;
  }
  if (n_nodes > UINT32_MAX / 2 || n_slots > RDT_MAX_COUNTERS / slots) return bad(im, "the model is too large");
  m->node_start = malloc((c->trees + 1) * sizeof *m->node_start);
  m->leaf_start = malloc((c->trees + 1) * sizeof *m->leaf_start);
  m->nodes = malloc((size_t)(n_nodes ? n_nodes : 1) * sizeof *m->nodes);
  f->counts = calloc((size_t)(n_slots ? n_slots : 1) * slots, sizeof *f->counts);
  if (!m->node_start || !m->leaf_start || !m->nodes || !f->counts) return bad(im, "out of memory");
  uint64_t at = 0, leaf_no = 0, slot_no = 0;
  for (uint32_t t = 0; t < c->trees; t++) {
    const rdt_json *tn = nodes->items[t], *tl = leaves->items[t];
    m->node_start[t] = (uint32_t)at;
    m->leaf_start[t] = (uint32_t)leaf_no;
    for (size_t i = 0; i < tn->n; i++, at++) {
      const rdt_json *n = tn->items[i];
      if (n->type != RDT_JSON_ARRAY || n->n != 2 || n->items[0]->type != RDT_JSON_NUMBER || !n->items[0]->is_integer ||
          n->items[0]->integer < -1 || n->items[0]->integer >= (long long)nf || n->items[1]->type != RDT_JSON_NUMBER ||
          !n->items[1]->is_integer || n->items[1]->integer < 0 || n->items[1]->integer > UINT32_MAX / 2)
        return bad(im, "a node is malformed");
      m->nodes[at].feature = n->items[0]->integer < 0 ? RDT_MNODE_LEAF : (uint32_t)n->items[0]->integer;
      m->nodes[at].next = (uint32_t)n->items[1]->integer;
      leaf_no += m->nodes[at].feature == RDT_MNODE_LEAF;
    }
    for (size_t l = 0; l < tl->n; l++, slot_no++)
      if (!int_array(im, tl->items[l], f->counts + slot_no * slots, slots)) return 0;
  }
  m->node_start[c->trees] = (uint32_t)at;
  m->leaf_start[c->trees] = (uint32_t)leaf_no;
  if (c->algorithm == RDT_ALGO_SHARP) {
    const rdt_json *sj = member(im, root, "rdt#", RDT_JSON_OBJECT);
    if (!sj) return 0;
    rdt_sharp *sh = f->sharp = calloc(1, sizeof *f->sharp);
    f->multiway = &rdt_sharp_multiway;
    if (!sh) return bad(im, "out of memory");
    uint64_t primary, cells, public_rows;
    if (!member_uint(im, sj, "primary_trees", c->trees, &primary) || !member_uint(im, sj, "cells", RDT_SHARP_MAX_CELLS, &cells) ||
        !member_uint(im, sj, "public_rows", RDT_SHARP_MAX_PUBLIC_ROWS, &public_rows))
      return 0;
    c->primary_trees = (uint32_t)primary;
    c->cells = (uint32_t)cells;
    sh->public_rows = public_rows;
    const rdt_json *pt = rdt_json_get(sj, "public_tables"); /* absent in exports of 1.0 models */
    if (pt && pt->type != RDT_JSON_ARRAY) return bad(im, "\"public_tables\" must be an array of names");
    for (size_t i = 0; pt && i < pt->n; i++) {
      const rdt_json *t = pt->items[i];
      if (t->type != RDT_JSON_STRING || t->string_len == 0 || strlen(t->string) != t->string_len ||
          c->public_tables_len + t->string_len + 1 >= sizeof c->public_tables)
        return bad(im, "\"public_tables\" must be an array of names");
      memcpy(c->public_tables + c->public_tables_len, t->string, t->string_len + 1);
      c->public_tables_len += (uint32_t)t->string_len + 1;
    }
    const rdt_json *centres = member(im, sj, "centres", RDT_JSON_ARRAY);
    if (!centres) return 0;
    if (centres->n != leaf_no) return bad(im, "\"centres\" needs one entry per leaf");
    sh->slot_start = malloc((size_t)(leaf_no + 1) * sizeof *sh->slot_start);
    sh->centres = malloc((size_t)(n_slots ? n_slots : 1) * nf * sizeof *sh->centres);
    if (!sh->slot_start || !sh->centres) return bad(im, "out of memory");
    uint64_t k = 0;
    for (uint64_t l = 0; l < leaf_no; l++) {
      const rdt_json *cl = centres->items[l];
      if (cl->type != RDT_JSON_ARRAY) return bad(im, "a leaf's centres are malformed");
      sh->slot_start[l] = (uint32_t)k;
      uint64_t n = cl->n ? cl->n : 1;
      if (k + n > n_slots) return bad(im, "\"centres\" and \"leaves\" disagree");
      for (uint64_t q = 0; q < n; q++, k++) {
        double *dst = sh->centres + (size_t)k * nf;
        if (!cl->n) {
          for (uint32_t j = 0; j < nf; j++) dst[j] = NAN;
          continue;
        }
        const rdt_json *cv = cl->items[q];
        if (cv->type != RDT_JSON_ARRAY || cv->n != nf) return bad(im, "a centre is malformed");
        for (uint32_t j = 0; j < nf; j++) {
          if (cv->items[j]->type != RDT_JSON_NUMBER) return bad(im, "a centre is malformed");
          dst[j] = cv->items[j]->number;
        }
      }
    }
    if (k != n_slots) return bad(im, "\"centres\" and \"leaves\" disagree");
    sh->slot_start[leaf_no] = (uint32_t)k;
    return 1;
  }
  if (n_slots != leaf_no) return bad(im, "\"leaves\" needs one entry per leaf");
  const rdt_json *mj = member(im, root, "matrix", RDT_JSON_OBJECT);
  if (!mj) return 0;
  if (!member_uint(im, mj, "strategy", RDT_N_STRATEGIES, &u) || !member_double(im, mj, "expected_leaf_variance", &m->expected_variance))
    return 0;
  m->strategy = (uint32_t)u;
  const rdt_json *fa = member(im, mj, "expected_error", RDT_JSON_ARRAY);
  if (!fa) return 0;
  if (fa->n != RDT_N_STRATEGIES) return bad(im, "\"expected_error\" needs one entry per strategy");
  for (int k = 0; k < RDT_N_STRATEGIES; k++) {
    const rdt_json *e = fa->items[k];
    if (e->type == RDT_JSON_NULL) m->factor[k] = INFINITY;
    else if (e->type == RDT_JSON_NUMBER) m->factor[k] = e->number;
    else return bad(im, "\"expected_error\" entries must be numbers or null");
  }
  const rdt_json *tables = member(im, mj, "tables", RDT_JSON_ARRAY);
  if (!tables) return 0;
  if (tables->n > RDT_MAX_COUNTERS) return bad(im, "too many tables");
  if (tables->n && !(m->tables = calloc(tables->n, sizeof *m->tables))) return bad(im, "out of memory");
  m->n_tables = (uint32_t)tables->n;
  for (size_t g = 0; g < tables->n; g++) {
    const rdt_json *tj = tables->items[g];
    if (tj->type != RDT_JSON_OBJECT || !member_uint(im, tj, "epsilon_num", UINT64_MAX >> 1, &m->tables[g].eps.num) ||
        !member_double(im, tj, "weight", &m->tables[g].weight) ||
        !u32_list(im, rdt_json_get(tj, "attributes"), nf, &m->tables[g].attrs, &m->tables[g].n_attrs))
      return bad(im, "a table is malformed");
  }
  const rdt_json *cells = rdt_json_get(mj, "cells");
  if (cells && cells->type == RDT_JSON_OBJECT) {
    uint32_t *attrs = NULL, n_attrs = 0;
    if (!u32_list(im, rdt_json_get(cells, "attributes"), nf, &attrs, &n_attrs)) { free(attrs); return 0; }
    uint8_t *in = calloc(nf, 1);
    int ok = in != NULL;
    for (uint32_t i = 0; ok && i < n_attrs; i++) in[attrs[i]] = 1;
    ok = ok && rdt_matrix_table_init(f, &m->exact, in, RDT_MATRIX_MAX_EXACT_COUNTERS / slots);
    free(in);
    free(attrs);
    if (!ok) return bad(im, "the cell table is malformed or too large");
    if (!(m->exact_cells = malloc((size_t)m->exact.cells * slots * sizeof *m->exact_cells))) return bad(im, "out of memory");
    if (!int_array(im, rdt_json_get(cells, "values"), m->exact_cells, (size_t)m->exact.cells * slots)) return 0;
  } else if (!cells || cells->type != RDT_JSON_NULL) {
    return bad(im, "\"cells\" must be an object or null");
  }
  return 1;
}

/* The optional "unit" of "privacy" (unit.h); the decoder checks it against
** the rest. */
static int import_unit(importer *im, const rdt_json *priv, rdt_unit *u) {
  memset(u, 0, sizeof *u);
  u->max_rows = 1;
  const rdt_json *j = rdt_json_get(priv, "unit");
  if (!j) return 1;
  uint64_t k;
  uint32_t *list = NULL, n = 0;
  if (j->type != RDT_JSON_OBJECT) return bad(im, "\"unit\" is malformed");
  const rdt_json *col = member(im, j, "column", RDT_JSON_STRING);
  if (!col || col->string_len > RDT_MAX_NAME || strlen(col->string) != col->string_len ||
      !member_uint(im, j, "max_rows_per_unit", RDT_UNIT_MAX_ROWS, &k) ||
      !member_uint(im, j, "epsilon_total_num", UINT64_MAX >> 1, &u->eps_total.num) ||
      !member_uint(im, j, "epsilon_bounds_num", UINT64_MAX >> 1, &u->eps_bounds.num) ||
      !member_uint(im, j, "epsilon_quantile_num", UINT64_MAX >> 1, &u->eps_quantile.num) ||
      !u32_list(im, rdt_json_get(j, "private_bounds"), RDT_MAX_FEATURES, &list, &n)) {
    free(list);
    return bad(im, "\"unit\" is malformed");
  }
  memcpy(u->column, col->string, col->string_len + 1);
  u->max_rows = (uint32_t)k;
  for (uint32_t i = 0; i < n; i++) rdt_unit_set_private(u, list[i]);
  free(list);
  return 1;
}

static int import_forest(importer *im, const rdt_json *root, rdt_forest *f) {
  rdt_config *c = &f->config;
  const rdt_json *v = member(im, root, "format", RDT_JSON_STRING);
  if (!v || strcmp(v->string, EXPORT_FORMAT) != 0) return bad(im, "not an rdt model export (\"format\")");
  uint64_t u;
  if (!member_uint(im, root, "format_version", 1000, &u)) return 0;
  if (u != EXPORT_VERSION) return bad(im, "unsupported export format_version");
  if (!hex_field(im, rdt_json_get(root, "model_id"), f->model_id, 16)) return 0;
  const rdt_json *seeded = rdt_json_get(root, "seeded");
  if (!seeded || (seeded->type != RDT_JSON_TRUE && seeded->type != RDT_JSON_FALSE)) return bad(im, "\"seeded\" must be a boolean");
  c->seeded = seeded->type == RDT_JSON_TRUE;
  const rdt_json *priv = member(im, root, "privacy", RDT_JSON_OBJECT);
  if (!priv) return 0;
  const rdt_json *p = rdt_json_get(priv, "private");
  if (!p || (p->type != RDT_JSON_TRUE && p->type != RDT_JSON_FALSE)) return bad(im, "\"private\" must be a boolean");
  c->is_private = p->type == RDT_JSON_TRUE;
  if (!import_unit(im, priv, &c->unit)) return 0;
  v = member(im, root, "algorithm", RDT_JSON_STRING);
  if (!v) return 0;
  const rdt_forest_kind *kind = rdt_forest_kind_named(v->string);
  c->algorithm = kind ? kind->algorithm : RDT_ALGO_RDT;
  v = member(im, root, "task", RDT_JSON_STRING);
  if (!v) return 0;
  c->task = strcmp(v->string, "regression") == 0 ? RDT_TASK_REGRESSION : RDT_TASK_CLASSIFICATION;
  if (c->is_private) {
    if (!member_uint(im, priv, "epsilon_num", UINT64_MAX >> 1, &c->eps.num)) return 0;
    if (c->algorithm == RDT_ALGO_DIPRIME && (!member_uint(im, priv, "epsilon_query_num", UINT64_MAX >> 1, &c->eps_query.num) ||
                                             !member_uint(im, priv, "epsilon_leaf_num", UINT64_MAX >> 1, &c->eps_leaf.num)))
      return 0;
  }
  uint64_t trees, depth, vote, splits, categorical, candidates, auto_depth;
  const rdt_json *rc = rdt_json_get(root, "row_count");
  if (!member_uint(im, root, "auto_depth", 1, &auto_depth) ||
      !member_uint(im, root, "epsilon_count_num", UINT64_MAX >> 1, &c->eps_count.num) || !rc ||
      rc->type != RDT_JSON_NUMBER || !rc->is_integer)
    return bad(im, "\"auto_depth\", \"epsilon_count_num\" or \"row_count\" is malformed");
  c->auto_depth = (int)auto_depth;
  c->noisy_rows = rc->integer;
  if (!member_uint(im, root, "trees", RDT_MAX_TREES, &trees) || !member_uint(im, root, "depth", RDT_MAX_DEPTH, &depth) ||
      !member_uint(im, root, "vote", RDT_VOTE_WEIGHT, &vote) || !member_uint(im, root, "splits", 2, &splits) ||
      !member_uint(im, root, "categorical", 2, &categorical) ||
      !member_uint(im, root, "candidates", RDT_MAX_FEATURES, &candidates) || !member_double(im, root, "rho", &c->rho))
    return 0;
  if (trees < 1 || depth < 1) return bad(im, "\"trees\" and \"depth\" must be at least 1");
  c->trees = (uint32_t)trees;
  c->depth = (uint32_t)depth;
  c->vote = (rdt_vote)vote;
  c->splits = (rdt_split_domain)splits;
  c->categorical = (rdt_categorical)categorical;
  c->candidates = (uint32_t)candidates;
  const rdt_json *part = rdt_json_get(root, "partition");
  if (!part || (part->type != RDT_JSON_TRUE && part->type != RDT_JSON_FALSE)) return bad(im, "\"partition\" must be a boolean");
  c->partition = part->type == RDT_JSON_TRUE;
  const rdt_json *target = member(im, root, "target", RDT_JSON_OBJECT);
  if (!target || !member_double(im, target, "min", &c->target_min) || !member_double(im, target, "max", &c->target_max))
    return 0;
  /* schema */
  rdt_schema *s = &f->schema;
  const rdt_json *feats = member(im, root, "features", RDT_JSON_ARRAY);
  if (!feats) return 0;
  if (feats->n < 1 || feats->n > RDT_MAX_FEATURES) return bad(im, "\"features\" has a wrong length");
  s->features = calloc(feats->n, sizeof *s->features);
  if (!s->features) return bad(im, "out of memory");
  s->n_features = (uint32_t)feats->n;
  for (size_t j = 0; j < feats->n; j++) {
    rdt_feature *ft = &s->features[j];
    const rdt_json *fj = feats->items[j], *name = rdt_json_get(fj, "name"), *type = rdt_json_get(fj, "type");
    if (!name || name->type != RDT_JSON_STRING || !type || type->type != RDT_JSON_STRING) return bad(im, "a feature is malformed");
    ft->name = strdup(name->string);
    if (!ft->name) return bad(im, "out of memory");
    if (strcmp(type->string, "numeric") == 0) {
      ft->type = RDT_FEATURE_NUMERIC;
      if (!member_double(im, fj, "min", &ft->min) || !member_double(im, fj, "max", &ft->max)) return 0;
    } else {
      ft->type = RDT_FEATURE_CATEGORICAL;
      if (!values_from(im, rdt_json_get(fj, "values"), &ft->values, &ft->n_values, RDT_MAX_VALUES)) return 0;
    }
  }
  if (!values_from(im, rdt_json_get(root, "classes"), &s->classes, &s->n_classes, RDT_MAX_CLASSES)) return 0;
  const rdt_json *layout = rdt_json_get(root, "layout");
  if (layout) {
    if (layout->type != RDT_JSON_STRING || strcmp(layout->string, "multiway") != 0)
      return bad(im, "\"layout\" must be \"multiway\" when present");
    if (!import_multiway(im, root, f)) return 0;
    return import_signature(im, root, f);
  }
  /* sizes, then nodes and leaves */
  f->n_leaves = (uint32_t)1 << c->depth;
  f->n_internal = f->n_leaves - 1;
  uint32_t slots = rdt_forest_slots(f);
  if (rdt_forest_counters(c, slots) == 0) return bad(im, "the model is too large");
  const rdt_json *nodes = member(im, root, "nodes", RDT_JSON_ARRAY), *leaves = member(im, root, "leaves", RDT_JSON_ARRAY);
  if (!nodes || !leaves) return 0;
  if (nodes->n != c->trees || leaves->n != c->trees) return bad(im, "\"nodes\" and \"leaves\" need one entry per tree");
  f->nodes = calloc((size_t)c->trees * f->n_internal + 1, sizeof *f->nodes);
  f->counts = calloc((size_t)c->trees * f->n_leaves * slots + 1, sizeof *f->counts);
  if (!f->nodes || !f->counts) return bad(im, "out of memory");
  for (uint32_t t = 0; t < c->trees; t++) {
    const rdt_json *tn = nodes->items[t], *tl = leaves->items[t];
    if (tn->type != RDT_JSON_ARRAY || tn->n != f->n_internal || tl->type != RDT_JSON_ARRAY || tl->n != f->n_leaves)
      return bad(im, "a tree has the wrong number of nodes or leaves");
    for (uint32_t i = 0; i < f->n_internal; i++) {
      const rdt_json *n = tn->items[i];
      rdt_node *nd = &f->nodes[(size_t)t * f->n_internal + i];
      if (n->type != RDT_JSON_ARRAY || n->n != 3 || n->items[0]->type != RDT_JSON_STRING ||
          n->items[1]->type != RDT_JSON_NUMBER || !n->items[1]->is_integer || n->items[1]->integer < 0 ||
          n->items[1]->integer >= RDT_MAX_FEATURES)
        return bad(im, "a node is malformed");
      const char *k = n->items[0]->string;
      nd->kind = strcmp(k, "numeric") == 0 ? RDT_SPLIT_NUMERIC
                 : strcmp(k, "equals") == 0 ? RDT_SPLIT_CATEGORY_EQ
                 : strcmp(k, "subset") == 0 ? RDT_SPLIT_CATEGORY_SUBSET
                                            : RDT_SPLIT_NONE;
      nd->feature = (uint32_t)n->items[1]->integer;
      if (nd->kind == RDT_SPLIT_CATEGORY_SUBSET) {
        const rdt_json *m = n->items[2];
        char *end;
        if (m->type != RDT_JSON_STRING || m->string_len != 16) return bad(im, "a subset mask is malformed");
        unsigned long long mask = strtoull(m->string, &end, 16);
        if (*end) return bad(im, "a subset mask is malformed");
        nd->value = rdt_mask_to_value((uint64_t)mask);
      } else if (n->items[2]->type == RDT_JSON_NUMBER) {
        nd->value = n->items[2]->number;
      } else {
        return bad(im, "a node value is malformed");
      }
    }
    for (uint32_t l = 0; l < f->n_leaves; l++) {
      const rdt_json *lv = tl->items[l];
      if (lv->type != RDT_JSON_ARRAY || lv->n != slots) return bad(im, "a leaf has the wrong number of values");
      for (uint32_t k = 0; k < slots; k++) {
        if (lv->items[k]->type != RDT_JSON_NUMBER || !lv->items[k]->is_integer) return bad(im, "leaf values must be integers");
        f->counts[((size_t)t * f->n_leaves + l) * slots + k] = lv->items[k]->integer;
      }
    }
  }
  return import_signature(im, root, f);
}

/* Optional "voting_trees" ("keep_trees"); the decoder checks the count
** against the share and the order. */
static int import_voting_trees(importer *im, const rdt_json *root, rdt_forest *f) {
  const rdt_json *vt = rdt_json_get(root, "voting_trees");
  if (!vt) return 1;
  uint32_t *list = NULL, n = 0;
  double share;
  if (vt->type != RDT_JSON_OBJECT || !member_double(im, vt, "share", &share) ||
      !u32_list(im, rdt_json_get(vt, "trees"), f->config.trees, &list, &n)) {
    free(list);
    return bad(im, "\"voting_trees\" is malformed");
  }
  f->tree_kept = calloc(f->config.trees, 1);
  if (!f->tree_kept) {
    free(list);
    return bad(im, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++) f->tree_kept[list[i]] = 1;
  free(list);
  f->config.keep_trees = share;
  f->n_kept = n;
  return 1;
}

static int import_signature(importer *im, const rdt_json *root, rdt_forest *f) {
  if (!import_voting_trees(im, root, f)) return 0;
  const rdt_json *sig = rdt_json_get(root, "signature");
  if (sig && sig->type == RDT_JSON_OBJECT) {
    const rdt_json *note = member(im, sig, "note", RDT_JSON_STRING);
    if (!note) return 0;
    if (note->string_len > RDT_MAX_NOTE) return bad(im, "the note is too long");
    f->note = strdup(note->string);
    if (!f->note) return bad(im, "out of memory");
    if (!hex_field(im, rdt_json_get(sig, "public_key"), f->public_key, 32) ||
        !hex_field(im, rdt_json_get(sig, "signature"), f->signature, RDT_SIGNATURE_BYTES))
      return 0;
    f->is_signed = 1;
  } else if (!sig || sig->type != RDT_JSON_NULL) {
    return bad(im, "\"signature\" must be an object or null");
  }
  return 1;
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
  if (root->type == RDT_JSON_OBJECT && rdt_json_get(root, "learner")) {
    size_t ln = 0;
    unsigned char *lb = import_learned(root, &ln, err, sizeof err);
    rdt_json_free(root);
    if (!lb) rdt_sql_error(ctx, "rdt_import", err);
    else sqlite3_result_blob64(ctx, lb, ln, free);
    return;
  }
  rdt_forest f;
  memset(&f, 0, sizeof f);
  importer im = {err, sizeof err, 0};
  int ok = root->type == RDT_JSON_OBJECT ? import_forest(&im, root, &f) : bad(&im, "expected a JSON object");
  rdt_json_free(root);
  size_t n = 0;
  unsigned char *blob = ok ? rdt_model_encode(&f, &n) : NULL;
  rdt_forest_free(&f);
  if (ok && !blob) snprintf(err, sizeof err, "out of memory");
  /* The encoder trusts its input: decode the result so that everything an
  ** imported model claims is validated exactly as for a BLOB. */
  rdt_forest check;
  char derr[180];
  if (blob && !rdt_model_decode(blob, n, &check, derr, sizeof derr)) {
    snprintf(err, sizeof err, "the export describes an invalid model (%s)", derr);
    free(blob);
    blob = NULL;
  } else if (blob) {
    rdt_forest_free(&check);
  }
  if (!blob) {
    rdt_sql_error(ctx, "rdt_import", err);
    return;
  }
  sqlite3_result_blob64(ctx, blob, n, free);
}
