/*
** forest_json.c - the JSON codec of forest models (forest_json.h): the
** members every forest has; each kind's own through its hooks.
*/
#include "forest_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest_kind.h"
#include "../json_io.h"
#include "../model.h"
#include "../sign.h"

/* ---- export ------------------------------------------------------------- */

const char *rdt_split_kind_name(uint32_t kind) {
  switch (kind) {
    case RDT_SPLIT_NUMERIC: return "numeric";
    case RDT_SPLIT_CATEGORY_EQ: return "equals";
    case RDT_SPLIT_CATEGORY_SUBSET: return "subset";
    default: return "none";
  }
}

/* Complete binary trees (RDT, DiPriMe): "nodes", per tree in heap order
** [kind, feature, value] (a subset's value is its mask in hex); "leaves",
** per tree and leaf, the released values (classes, or count and sum). */
static void export_binary(const rdt_forest *f, rdt_bytes *o) {
  const rdt_config *c = &f->config;
  rdt_bytes_text(o, ",\"nodes\":[");
  for (uint32_t t = 0; t < c->trees; t++) {
    rdt_bytes_text(o, t ? ",[" : "[");
    for (uint32_t i = 0; i < f->n_internal; i++) {
      const rdt_node *n = &f->nodes[(size_t)t * f->n_internal + i];
      rdt_json_putf(o, "%s[\"%s\",%u,", i ? "," : "", rdt_split_kind_name(n->kind), n->feature);
      if (n->kind == RDT_SPLIT_CATEGORY_SUBSET)
        rdt_json_putf(o, "\"%016llx\"", (unsigned long long)rdt_value_to_mask(n->value));
      else
        rdt_json_put_double(o, n->value);
      rdt_json_put_char(o, ']');
    }
    rdt_json_put_char(o, ']');
  }
  uint32_t slots = rdt_forest_slots(f);
  rdt_bytes_text(o, "],\"leaves\":[");
  for (uint32_t t = 0; t < c->trees; t++) {
    rdt_bytes_text(o, t ? ",[" : "[");
    for (uint32_t l = 0; l < f->n_leaves; l++) {
      const int64_t *v = f->counts + ((size_t)t * f->n_leaves + l) * slots;
      rdt_bytes_text(o, l ? ",[" : "[");
      for (uint32_t k = 0; k < slots; k++) rdt_json_putf(o, "%s%lld", k ? "," : "", (long long)v[k]);
      rdt_json_put_char(o, ']');
    }
    rdt_json_put_char(o, ']');
  }
  rdt_json_put_char(o, ']');
}

void rdt_forest_json_export(const rdt_forest *f, rdt_bytes *o) {
  const rdt_config *c = &f->config;
  const rdt_forest_kind *held = rdt_forest_kind_held(f);
  rdt_json_putf(o, "{\"format\":\"%s\",\"format_version\":%d,\"model_format\":\"%d.%d\",\"model_id\":", RDT_EXPORT_FORMAT,
                RDT_EXPORT_VERSION, RDT_FORMAT_MAJOR, (int)f->format_minor);
  rdt_json_put_hex(o, f->model_id, 16);
  /* Written only when set: exports of other models are as they were. */
  if (f->schema.from_rows) rdt_bytes_text(o, ",\"domain_from_rows\":true");
  rdt_json_putf(o, ",\"seeded\":%s,\"privacy\":{\"private\":%s,\"neighbouring\":\"%s\"", c->seeded ? "true" : "false",
                c->is_private ? "true" : "false", c->unit.column[0] ? "add/remove one unit" : "add/remove one row");
  if (rdt_unit_active(&c->unit)) { /* the UNIT section (unit.h): epsilon_num below is the model's per-row share */
    const rdt_unit *u = &c->unit;
    rdt_bytes_text(o, ",\"unit\":{\"column\":");
    rdt_json_put_string(o, u->column, strlen(u->column));
    rdt_json_putf(o, ",\"max_rows_per_unit\":%u,\"epsilon_total_num\":%llu,\"epsilon_bounds_num\":%llu,"
                     "\"epsilon_quantile_num\":%llu,\"private_bounds\":[",
                  u->max_rows, (unsigned long long)u->eps_total.num, (unsigned long long)u->eps_bounds.num,
                  (unsigned long long)u->eps_quantile.num);
    for (uint32_t j = 0, n = 0; j < f->schema.n_features; j++)
      if (rdt_unit_is_private(u, j)) rdt_json_putf(o, "%s%u", n++ ? "," : "", j);
    rdt_bytes_text(o, "]}");
  }
  if (c->is_private) {
    rdt_bytes_text(o, ",\"epsilon\":");
    rdt_json_put_double(o, rdt_eps_to_double(c->eps));
    rdt_json_putf(o, ",\"epsilon_num\":%llu,\"epsilon_den\":4294967296", (unsigned long long)c->eps.num);
    if (held->export_privacy) held->export_privacy(f, o);
  }
  rdt_json_putf(o,
                "},\"algorithm\":\"%s\",\"task\":\"%s\",\"trees\":%u,\"depth\":%u,\"vote\":%d,\"splits\":%d,"
                "\"categorical\":%d,\"auto_depth\":%d,\"epsilon_count_num\":%llu,\"row_count\":%lld,"
                "\"candidates\":%u,\"partition\":%s,\"rho\":",
                rdt_forest_kind_of(c->algorithm)->name, c->task == RDT_TASK_REGRESSION ? "regression" : "classification",
                c->trees, c->depth, (int)c->vote, (int)c->splits, (int)c->categorical, c->auto_depth,
                (unsigned long long)c->eps_count.num, (long long)c->noisy_rows, c->candidates,
                c->partition ? "true" : "false");
  rdt_json_put_double(o, c->rho);
  rdt_bytes_text(o, ",\"target\":{\"min\":");
  rdt_json_put_double(o, c->target_min);
  rdt_bytes_text(o, ",\"max\":");
  rdt_json_put_double(o, c->target_max);
  rdt_bytes_text(o, "},\"noise_scale\":");
  rdt_json_put_double(o, rdt_forest_leaf_scale(f));
  rdt_bytes_text(o, ",\"features\":");
  rdt_json_put_features(o, &f->schema);
  rdt_bytes_text(o, ",\"classes\":");
  rdt_json_put_classes(o, &f->schema);
  if (rdt_model_has_label(c->label)) { /* format 1.2's LABL; absent: "label" */
    rdt_bytes_text(o, ",\"label\":");
    rdt_json_put_string(o, c->label, strlen(c->label));
  }
  if (held->export_layout) held->export_layout(f, o);
  else export_binary(f, o);
  if (f->tree_kept) { /* "keep_trees": the share asked for and the trees that vote, ascending */
    rdt_bytes_text(o, ",\"voting_trees\":{\"share\":");
    rdt_json_put_double(o, c->keep_trees);
    rdt_bytes_text(o, ",\"trees\":[");
    for (uint32_t t = 0, i = 0; t < c->trees; t++)
      if (f->tree_kept[t]) rdt_json_putf(o, "%s%u", i++ ? "," : "", t);
    rdt_bytes_text(o, "]}");
  }
  rdt_bytes_text(o, ",\"signature\":");
  if (f->is_signed) {
    rdt_bytes_text(o, "{\"note\":");
    rdt_json_put_string(o, f->note ? f->note : "", f->note ? strlen(f->note) : 0);
    rdt_bytes_text(o, ",\"public_key\":");
    rdt_json_put_hex(o, f->public_key, 32);
    rdt_bytes_text(o, ",\"signature\":");
    rdt_json_put_hex(o, f->signature, RDT_SIGNATURE_BYTES);
    rdt_json_put_char(o, '}');
  } else {
    rdt_bytes_text(o, "null");
  }
  rdt_json_put_char(o, '}');
}

/* ---- import ------------------------------------------------------------- */

/* The optional "unit" of "privacy" (unit.h); the decoder checks it against
** the rest. */
static int import_unit(rdt_json_reader *r, const rdt_json *priv, rdt_unit *u) {
  memset(u, 0, sizeof *u);
  u->max_rows = 1;
  const rdt_json *j = rdt_json_get(priv, "unit");
  if (!j) return 1;
  uint64_t k;
  uint32_t *list = NULL, n = 0;
  if (j->type != RDT_JSON_OBJECT) return rdt_json_bad(r, "\"unit\" is malformed");
  const rdt_json *col = rdt_json_member(r, j, "column", RDT_JSON_STRING);
  if (!col || col->string_len > RDT_MAX_NAME || strlen(col->string) != col->string_len ||
      !rdt_json_member_uint(r, j, "max_rows_per_unit", RDT_UNIT_MAX_ROWS, &k) ||
      !rdt_json_member_uint(r, j, "epsilon_total_num", UINT64_MAX >> 1, &u->eps_total.num) ||
      !rdt_json_member_uint(r, j, "epsilon_bounds_num", UINT64_MAX >> 1, &u->eps_bounds.num) ||
      !rdt_json_member_uint(r, j, "epsilon_quantile_num", UINT64_MAX >> 1, &u->eps_quantile.num) ||
      !rdt_json_u32_list(r, rdt_json_get(j, "private_bounds"), RDT_MAX_FEATURES, &list, &n)) {
    free(list);
    return rdt_json_bad(r, "\"unit\" is malformed");
  }
  memcpy(u->column, col->string, col->string_len + 1);
  u->max_rows = (uint32_t)k;
  for (uint32_t i = 0; i < n; i++) rdt_unit_set_private(u, list[i]);
  free(list);
  return 1;
}

/* Complete binary trees (export_binary). */
static int import_binary(rdt_json_reader *r, const rdt_json *root, rdt_forest *f) {
  rdt_config *c = &f->config;
  f->n_leaves = (uint32_t)1 << c->depth;
  f->n_internal = f->n_leaves - 1;
  uint32_t slots = rdt_forest_slots(f);
  if (rdt_forest_counters(c, slots) == 0) return rdt_json_bad(r, "the model is too large");
  const rdt_json *nodes = rdt_json_member(r, root, "nodes", RDT_JSON_ARRAY),
                 *leaves = rdt_json_member(r, root, "leaves", RDT_JSON_ARRAY);
  if (!nodes || !leaves) return 0;
  if (nodes->n != c->trees || leaves->n != c->trees)
    return rdt_json_bad(r, "\"nodes\" and \"leaves\" need one entry per tree");
  f->nodes = calloc((size_t)c->trees * f->n_internal + 1, sizeof *f->nodes);
  f->counts = calloc((size_t)c->trees * f->n_leaves * slots + 1, sizeof *f->counts);
  if (!f->nodes || !f->counts) return rdt_json_bad(r, "out of memory");
  for (uint32_t t = 0; t < c->trees; t++) {
    const rdt_json *tn = nodes->items[t], *tl = leaves->items[t];
    if (tn->type != RDT_JSON_ARRAY || tn->n != f->n_internal || tl->type != RDT_JSON_ARRAY || tl->n != f->n_leaves)
      return rdt_json_bad(r, "a tree has the wrong number of nodes or leaves");
    for (uint32_t i = 0; i < f->n_internal; i++) {
      const rdt_json *n = tn->items[i];
      rdt_node *nd = &f->nodes[(size_t)t * f->n_internal + i];
      if (n->type != RDT_JSON_ARRAY || n->n != 3 || n->items[0]->type != RDT_JSON_STRING ||
          n->items[1]->type != RDT_JSON_NUMBER || !n->items[1]->is_integer || n->items[1]->integer < 0 ||
          n->items[1]->integer >= RDT_MAX_FEATURES)
        return rdt_json_bad(r, "a node is malformed");
      const char *k = n->items[0]->string;
      nd->kind = strcmp(k, "numeric") == 0   ? RDT_SPLIT_NUMERIC
                 : strcmp(k, "equals") == 0  ? RDT_SPLIT_CATEGORY_EQ
                 : strcmp(k, "subset") == 0  ? RDT_SPLIT_CATEGORY_SUBSET
                                             : RDT_SPLIT_NONE;
      nd->feature = (uint32_t)n->items[1]->integer;
      if (nd->kind == RDT_SPLIT_CATEGORY_SUBSET) {
        const rdt_json *m = n->items[2];
        char *end;
        if (m->type != RDT_JSON_STRING || m->string_len != 16) return rdt_json_bad(r, "a subset mask is malformed");
        unsigned long long mask = strtoull(m->string, &end, 16);
        if (*end) return rdt_json_bad(r, "a subset mask is malformed");
        nd->value = rdt_mask_to_value((uint64_t)mask);
      } else if (n->items[2]->type == RDT_JSON_NUMBER) {
        nd->value = n->items[2]->number;
      } else {
        return rdt_json_bad(r, "a node value is malformed");
      }
    }
    for (uint32_t l = 0; l < f->n_leaves; l++) {
      const rdt_json *lv = tl->items[l];
      if (lv->type != RDT_JSON_ARRAY || lv->n != slots) return rdt_json_bad(r, "a leaf has the wrong number of values");
      for (uint32_t k = 0; k < slots; k++) {
        if (lv->items[k]->type != RDT_JSON_NUMBER || !lv->items[k]->is_integer)
          return rdt_json_bad(r, "leaf values must be integers");
        f->counts[((size_t)t * f->n_leaves + l) * slots + k] = lv->items[k]->integer;
      }
    }
  }
  return 1;
}

/* Optional "voting_trees" ("keep_trees"); the decoder checks the count
** against the share and the order. */
static int import_voting_trees(rdt_json_reader *r, const rdt_json *root, rdt_forest *f) {
  const rdt_json *vt = rdt_json_get(root, "voting_trees");
  if (!vt) return 1;
  uint32_t *list = NULL, n = 0;
  double share;
  if (vt->type != RDT_JSON_OBJECT || !rdt_json_member_double(r, vt, "share", &share) ||
      !rdt_json_u32_list(r, rdt_json_get(vt, "trees"), f->config.trees, &list, &n)) {
    free(list);
    return rdt_json_bad(r, "\"voting_trees\" is malformed");
  }
  f->tree_kept = calloc(f->config.trees, 1);
  if (!f->tree_kept) {
    free(list);
    return rdt_json_bad(r, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++) f->tree_kept[list[i]] = 1;
  free(list);
  f->config.keep_trees = share;
  f->n_kept = n;
  return 1;
}

/* The members after the trees: "voting_trees" and "signature". */
static int import_signature(rdt_json_reader *r, const rdt_json *root, rdt_forest *f) {
  if (!import_voting_trees(r, root, f)) return 0;
  const rdt_json *sig = rdt_json_get(root, "signature");
  if (sig && sig->type == RDT_JSON_OBJECT) {
    const rdt_json *note = rdt_json_member(r, sig, "note", RDT_JSON_STRING);
    if (!note) return 0;
    if (note->string_len > RDT_MAX_NOTE) return rdt_json_bad(r, "the note is too long");
    f->note = strdup(note->string);
    if (!f->note) return rdt_json_bad(r, "out of memory");
    if (!rdt_json_hex(r, rdt_json_get(sig, "public_key"), f->public_key, 32) ||
        !rdt_json_hex(r, rdt_json_get(sig, "signature"), f->signature, RDT_SIGNATURE_BYTES))
      return 0;
    f->is_signed = 1;
  } else if (!sig || sig->type != RDT_JSON_NULL) {
    return rdt_json_bad(r, "\"signature\" must be an object or null");
  }
  return 1;
}

/* Fills f (zeroed) from an export; 0 at the first problem, f freeable. */
static int import_forest(rdt_json_reader *r, const rdt_json *root, rdt_forest *f) {
  rdt_config *c = &f->config;
  const rdt_json *v = rdt_json_member(r, root, "format", RDT_JSON_STRING);
  if (!v || strcmp(v->string, RDT_EXPORT_FORMAT) != 0) return rdt_json_bad(r, "not an rdt model export (\"format\")");
  uint64_t u;
  if (!rdt_json_member_uint(r, root, "format_version", 1000, &u)) return 0;
  if (u != RDT_EXPORT_VERSION) return rdt_json_bad(r, "unsupported export format_version");
  if (!rdt_json_hex(r, rdt_json_get(root, "model_id"), f->model_id, 16)) return 0;
  const rdt_json *seeded = rdt_json_get(root, "seeded");
  if (!seeded || (seeded->type != RDT_JSON_TRUE && seeded->type != RDT_JSON_FALSE))
    return rdt_json_bad(r, "\"seeded\" must be a boolean");
  c->seeded = seeded->type == RDT_JSON_TRUE;
  const rdt_json *priv = rdt_json_member(r, root, "privacy", RDT_JSON_OBJECT);
  if (!priv) return 0;
  const rdt_json *p = rdt_json_get(priv, "private");
  if (!p || (p->type != RDT_JSON_TRUE && p->type != RDT_JSON_FALSE)) return rdt_json_bad(r, "\"private\" must be a boolean");
  c->is_private = p->type == RDT_JSON_TRUE;
  if (!import_unit(r, priv, &c->unit)) return 0;
  v = rdt_json_member(r, root, "algorithm", RDT_JSON_STRING);
  if (!v) return 0;
  /* An unknown name reads as RDT's: the decoder's checks decide. */
  const rdt_forest_kind *kind = rdt_forest_kind_named(v->string);
  if (!kind) kind = rdt_forest_kind_named("rdt");
  c->algorithm = kind->algorithm;
  v = rdt_json_member(r, root, "task", RDT_JSON_STRING);
  if (!v) return 0;
  c->task = strcmp(v->string, "regression") == 0 ? RDT_TASK_REGRESSION : RDT_TASK_CLASSIFICATION;
  if (c->is_private) {
    if (!rdt_json_member_uint(r, priv, "epsilon_num", UINT64_MAX >> 1, &c->eps.num)) return 0;
    if (kind->import_privacy && !kind->import_privacy(r, priv, c)) return 0;
  }
  uint64_t trees, depth, vote, splits, categorical, candidates, auto_depth;
  const rdt_json *rc = rdt_json_get(root, "row_count");
  if (!rdt_json_member_uint(r, root, "auto_depth", 1, &auto_depth) ||
      !rdt_json_member_uint(r, root, "epsilon_count_num", UINT64_MAX >> 1, &c->eps_count.num) || !rc ||
      rc->type != RDT_JSON_NUMBER || !rc->is_integer)
    return rdt_json_bad(r, "\"auto_depth\", \"epsilon_count_num\" or \"row_count\" is malformed");
  c->auto_depth = (int)auto_depth;
  c->noisy_rows = rc->integer;
  if (!rdt_json_member_uint(r, root, "trees", RDT_MAX_TREES, &trees) ||
      !rdt_json_member_uint(r, root, "depth", RDT_MAX_DEPTH, &depth) ||
      !rdt_json_member_uint(r, root, "vote", RDT_VOTE_WEIGHT, &vote) ||
      !rdt_json_member_uint(r, root, "splits", 2, &splits) ||
      !rdt_json_member_uint(r, root, "categorical", 2, &categorical) ||
      !rdt_json_member_uint(r, root, "candidates", RDT_MAX_FEATURES, &candidates) ||
      !rdt_json_member_double(r, root, "rho", &c->rho))
    return 0;
  if (trees < 1 || depth < 1) return rdt_json_bad(r, "\"trees\" and \"depth\" must be at least 1");
  c->trees = (uint32_t)trees;
  c->depth = (uint32_t)depth;
  c->vote = (rdt_vote)vote;
  c->splits = (rdt_split_domain)splits;
  c->categorical = (rdt_categorical)categorical;
  c->candidates = (uint32_t)candidates;
  const rdt_json *part = rdt_json_get(root, "partition");
  if (!part || (part->type != RDT_JSON_TRUE && part->type != RDT_JSON_FALSE))
    return rdt_json_bad(r, "\"partition\" must be a boolean");
  c->partition = part->type == RDT_JSON_TRUE;
  const rdt_json *target = rdt_json_member(r, root, "target", RDT_JSON_OBJECT);
  if (!target || !rdt_json_member_double(r, target, "min", &c->target_min) ||
      !rdt_json_member_double(r, target, "max", &c->target_max))
    return 0;
  /* schema */
  rdt_schema *s = &f->schema;
  const rdt_json *copied = rdt_json_get(root, "domain_from_rows"); /* absent: false */
  if (copied && copied->type != RDT_JSON_TRUE) return rdt_json_bad(r, "\"domain_from_rows\" must be true or absent");
  s->from_rows = copied != NULL;
  const rdt_json *feats = rdt_json_member(r, root, "features", RDT_JSON_ARRAY);
  if (!feats) return 0;
  if (feats->n < 1 || feats->n > RDT_MAX_FEATURES) return rdt_json_bad(r, "\"features\" has a wrong length");
  s->features = calloc(feats->n, sizeof *s->features);
  if (!s->features) return rdt_json_bad(r, "out of memory");
  s->n_features = (uint32_t)feats->n;
  for (size_t j = 0; j < feats->n; j++) {
    rdt_feature *ft = &s->features[j];
    const rdt_json *fj = feats->items[j], *name = rdt_json_get(fj, "name"), *type = rdt_json_get(fj, "type");
    if (!name || name->type != RDT_JSON_STRING || !type || type->type != RDT_JSON_STRING)
      return rdt_json_bad(r, "a feature is malformed");
    ft->name = strdup(name->string);
    if (!ft->name) return rdt_json_bad(r, "out of memory");
    if (strcmp(type->string, "numeric") == 0) {
      ft->type = RDT_FEATURE_NUMERIC;
      if (!rdt_json_member_double(r, fj, "min", &ft->min) || !rdt_json_member_double(r, fj, "max", &ft->max)) return 0;
    } else {
      ft->type = RDT_FEATURE_CATEGORICAL;
      if (!rdt_json_values(r, rdt_json_get(fj, "values"), &ft->values, &ft->n_values, RDT_MAX_VALUES)) return 0;
    }
  }
  if (!rdt_json_values(r, rdt_json_get(root, "classes"), &s->classes, &s->n_classes, RDT_MAX_CLASSES)) return 0;
  const rdt_json *label = rdt_json_get(root, "label"); /* absent: the default, "label" */
  if (label && (label->type != RDT_JSON_STRING || label->string_len == 0 || label->string_len > RDT_MAX_NAME ||
                strlen(label->string) != label->string_len))
    return rdt_json_bad(r, "\"label\" must be the label column's name");
  if (label) memcpy(f->config.label, label->string, label->string_len + 1);
  const rdt_json *layout = rdt_json_get(root, "layout");
  if (layout) {
    if (layout->type != RDT_JSON_STRING || strcmp(layout->string, "multiway") != 0)
      return rdt_json_bad(r, "\"layout\" must be \"multiway\" when present");
    if (!kind->import_layout) return rdt_json_bad(r, "a multiway layout needs \"algorithm\" \"matrix\" or \"rdt#\"");
    if (!kind->import_layout(r, root, f)) return 0;
  } else if (!import_binary(r, root, f)) {
    return 0;
  } else if (kind->import_layout) {
    /* Binary trees under a multiway kind's name would reach the encoder
    ** without the kind's state (it reads f->matrix). */
    return rdt_json_bad(r, "\"algorithm\" \"matrix\" and \"rdt#\" need \"layout\": \"multiway\"");
  }
  return import_signature(r, root, f);
}

/* Contract 4: the document must be the export of the model it built, so
** that no member the import does not read (epsilon, noise_scale, ...) can
** say what the model does not. A document of an older minor format (an
** export of a 1.0 model) is compared with the export of the model at that
** version: the import upgrades the BLOB, the document keeps its version. */
static int same_as_export(const rdt_json *root, rdt_forest *f, char *err, size_t en) {
  const rdt_json *mf = rdt_json_get(root, "model_format");
  for (uint32_t minor = 0; mf && mf->type == RDT_JSON_STRING && minor < f->format_minor; minor++) {
    char v[32];
    snprintf(v, sizeof v, "%d.%u", RDT_FORMAT_MAJOR, minor);
    if (strcmp(mf->string, v) == 0) f->format_minor = minor;
  }
  rdt_bytes o = {0};
  rdt_forest_json_export(f, &o);
  int same = !o.oom && rdt_json_same_export(root, o.p, o.n, err, en);
  if (o.oom) snprintf(err, en, "out of memory");
  rdt_bytes_free(&o);
  return same;
}

unsigned char *rdt_forest_json_import(const rdt_json *root, size_t *n, char *err, size_t en) {
  rdt_forest f;
  memset(&f, 0, sizeof f);
  rdt_json_reader r = {err, en, 0};
  int ok = root->type == RDT_JSON_OBJECT ? import_forest(&r, root, &f) : rdt_json_bad(&r, "expected a JSON object");
  unsigned char *blob = ok ? rdt_model_encode(&f, n) : NULL;
  rdt_forest_free(&f);
  if (ok && !blob) snprintf(err, en, "out of memory");
  /* The encoder trusts its input: decode the result so that everything an
  ** imported model claims is validated exactly as for a BLOB. */
  rdt_forest check;
  char derr[180];
  if (blob && !rdt_model_decode(blob, *n, &check, derr, sizeof derr)) {
    snprintf(err, en, "the export describes an invalid model (%s)", derr);
    free(blob);
    blob = NULL;
  } else if (blob) {
    if (!same_as_export(root, &check, err, en)) {
      free(blob);
      blob = NULL;
    } else if (check.is_signed && !rdt_model_verify(blob, *n, check.public_key)) { /* contract 5 */
      snprintf(err, en, "%s", RDT_EXPORT_UNSIGNED_EDIT);
      free(blob);
      blob = NULL;
    }
    rdt_forest_free(&check);
  }
  return blob;
}
