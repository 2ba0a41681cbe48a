/*
** sql_inspect.c - read-only, eponymous table-valued functions over a model:
**
**   SELECT * FROM rdt_trees(model);              one row per tree
**   SELECT * FROM rdt_nodes(model);              one row per node (internal and leaf)
**   SELECT * FROM rdt_feature_importance(model); one row per feature
**
** They read only the released model (structure and noisy leaf values): no
** data access, no privacy budget. The model argument is the hidden column
** `model`; without it the table is empty.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forests/forest_json.h"
#include "core/forests/forest_kind.h"
#include "core/forests/matrix.h"
#include "core/model.h"
#include "core/forests/sharp.h"
#include "rdt_sql.h"

typedef enum { INSPECT_TREES, INSPECT_NODES, INSPECT_IMPORTANCE } inspect_kind;

static const char *const SCHEMAS[] = {
    "CREATE TABLE x(tree INTEGER, depth INTEGER, leaves INTEGER, splits INTEGER, empty_leaves INTEGER, "
    "epsilon REAL, algorithm TEXT, votes INTEGER, model HIDDEN)",
    "CREATE TABLE x(tree INTEGER, node INTEGER, depth INTEGER, parent INTEGER, is_leaf INTEGER, feature TEXT, "
    "kind TEXT, threshold REAL, categories TEXT, left INTEGER, right INTEGER, value TEXT, model HIDDEN)",
    "CREATE TABLE x(feature TEXT, splits INTEGER, share_of_splits REAL, weighted_share REAL, model HIDDEN)",
};
static const int MODEL_COLUMN[] = {8, 12, 4};

typedef struct {
  sqlite3_vtab base;
  inspect_kind kind;
} inspect_vtab;

typedef struct {
  sqlite3_vtab_cursor base;
  int loaded;
  rdt_forest f;
  sqlite3_int64 row, rows;
  double *importance; /* per feature: splits, weighted (importance table) */
  /* Multiway forests (matrix, RDT#): per node of the whole forest. */
  double *node_rows;   /* noisy rows under it (leaf values clamped at 0, summed) */
  uint32_t *parent, *depth; /* tree-relative parent (root: itself), depth */
} inspect_cursor;

static int inspect_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                           char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  inspect_kind kind = (inspect_kind)(intptr_t)aux;
  int rc = sqlite3_declare_vtab(db, SCHEMAS[kind]);
  if (rc != SQLITE_OK) return rc;
  inspect_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->kind = kind;
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *out = &v->base;
  return SQLITE_OK;
}

static int inspect_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int inspect_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  inspect_vtab *v = (inspect_vtab *)tab;
  int model = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->iColumn == MODEL_COLUMN[v->kind] && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
      if (!c->usable) return SQLITE_CONSTRAINT; /* try another plan */
      model = i;
    }
  }
  if (model >= 0) {
    info->aConstraintUsage[model].argvIndex = 1;
    info->aConstraintUsage[model].omit = 1;
    info->estimatedCost = 1000;
    info->idxNum = 1;
  } else {
    info->estimatedCost = 1e12; /* no model: no rows */
    info->idxNum = 0;
  }
  return SQLITE_OK;
}

static int inspect_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  inspect_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(inspect_cursor *c) {
  if (c->loaded) rdt_forest_free(&c->f);
  free(c->importance);
  free(c->node_rows);
  free(c->parent);
  free(c->depth);
  c->importance = c->node_rows = NULL;
  c->parent = c->depth = NULL;
  c->loaded = 0;
  c->row = c->rows = 0;
}

static int inspect_close(sqlite3_vtab_cursor *cur) {
  cursor_reset((inspect_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Noisy rows under every node of tree t (sum of its leaves' values, each
** clamped at 0): post-processing of released values. */
static double leaf_rows(const rdt_forest *f, size_t leaf) {
  uint32_t slots = rdt_forest_slots(f);
  const int64_t *n = f->counts + leaf * slots;
  if (f->config.task == RDT_TASK_REGRESSION) return n[0] > 0 ? (double)n[0] : 0;
  double total = 0;
  for (uint32_t k = 0; k < slots; k++) total += n[k] > 0 ? (double)n[k] : 0;
  return total;
}

static double subtree_rows(const rdt_forest *f, uint32_t t, uint32_t node) {
  uint32_t first = node, last = node;
  while (first < f->n_internal) {
    first = 2 * first + 1;
    last = 2 * last + 2;
  }
  double total = 0;
  for (uint32_t l = first; l <= last; l++) total += leaf_rows(f, (size_t)t * f->n_leaves + (l - f->n_internal));
  return total;
}

/* Multiway trees: parents, depths and rows under every node, bottom-up
** (children follow their parent in breadth-first order). An RDT# leaf
** holds the rows of all its centres. */
static int index_multiway(inspect_cursor *c) {
  const rdt_forest *f = &c->f;
  const rdt_matrix *m = f->matrix;
  size_t n = m->node_start[f->config.trees];
  c->node_rows = calloc(n + 1, sizeof *c->node_rows);
  c->parent = malloc((n + 1) * sizeof *c->parent);
  c->depth = malloc((n + 1) * sizeof *c->depth);
  if (!c->node_rows || !c->parent || !c->depth) return 0;
  for (uint32_t t = 0; t < f->config.trees; t++) {
    uint32_t a = m->node_start[t], b = m->node_start[t + 1];
    c->parent[a] = 0;
    c->depth[a] = 0;
    for (uint32_t i = a; i < b; i++) {
      const rdt_mnode *nd = &m->nodes[i];
      if (nd->feature == RDT_MNODE_LEAF) continue;
      for (uint32_t k = 0; k < m->domain[nd->feature]; k++) {
        c->parent[a + nd->next + k] = i - a;
        c->depth[a + nd->next + k] = c->depth[i] + 1;
      }
    }
    for (uint32_t i = b; i-- > a;) {
      const rdt_mnode *nd = &m->nodes[i];
      if (nd->feature == RDT_MNODE_LEAF) {
        uint64_t l = m->leaf_start[t] + nd->next;
        if (f->sharp)
          for (uint64_t k = f->sharp->slot_start[l]; k < f->sharp->slot_start[l + 1]; k++) c->node_rows[i] += leaf_rows(f, k);
        else
          c->node_rows[i] = leaf_rows(f, l);
      }
      if (i > a) c->node_rows[a + c->parent[i]] += c->node_rows[i];
    }
  }
  return 1;
}

/* Splits and weighted splits per feature, over the trees that vote (all of
** them unless "keep_trees" dropped some: a dropped tree predicts nothing). */
static int compute_importance(inspect_cursor *c) {
  const rdt_forest *f = &c->f;
  uint32_t nf = f->schema.n_features;
  c->importance = calloc(2 * (size_t)nf, sizeof *c->importance);
  if (!c->importance) return 0;
  for (uint32_t t = 0; t < f->config.trees; t++) {
    if (f->tree_kept && !f->tree_kept[t]) continue;
    if (f->matrix) {
      for (size_t i = f->matrix->node_start[t]; i < f->matrix->node_start[t + 1]; i++) {
        const rdt_mnode *nd = &f->matrix->nodes[i];
        if (nd->feature == RDT_MNODE_LEAF) continue;
        c->importance[2 * nd->feature] += 1;
        c->importance[2 * nd->feature + 1] += c->node_rows[i];
      }
      continue;
    }
    for (uint32_t i = 0; i < f->n_internal; i++) {
      const rdt_node *n = &f->nodes[(size_t)t * f->n_internal + i];
      if (n->kind == RDT_SPLIT_NONE) continue;
      c->importance[2 * n->feature] += 1;
      c->importance[2 * n->feature + 1] += subtree_rows(f, t, i);
    }
  }
  return 1;
}

static int inspect_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_str;
  inspect_cursor *c = (inspect_cursor *)cur;
  inspect_vtab *v = (inspect_vtab *)cur->pVtab;
  cursor_reset(c);
  if (idx != 1 || argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;
  char err[256];
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB ||
      !rdt_model_decode(sqlite3_value_blob(argv[0]), (size_t)sqlite3_value_bytes(argv[0]), &c->f, err, sizeof err)) {
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = sqlite3_mprintf("%s: %s", v->kind == INSPECT_TREES   ? "rdt_trees"
                                                    : v->kind == INSPECT_NODES ? "rdt_nodes"
                                                                               : "rdt_feature_importance",
                                          sqlite3_value_type(argv[0]) != SQLITE_BLOB ? "the model must be a BLOB" : err);
    return SQLITE_ERROR;
  }
  c->loaded = 1;
  const rdt_forest *f = &c->f;
  if (f->matrix && !index_multiway(c)) return SQLITE_NOMEM;
  if (v->kind == INSPECT_TREES) c->rows = f->config.trees;
  else if (v->kind == INSPECT_NODES)
    c->rows = f->matrix ? (sqlite3_int64)f->matrix->node_start[f->config.trees]
                        : (sqlite3_int64)f->config.trees * (f->n_internal + f->n_leaves);
  else {
    c->rows = f->schema.n_features;
    if (!compute_importance(c)) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

static int inspect_next(sqlite3_vtab_cursor *cur) {
  ((inspect_cursor *)cur)->row++;
  return SQLITE_OK;
}

static int inspect_eof(sqlite3_vtab_cursor *cur) {
  inspect_cursor *c = (inspect_cursor *)cur;
  return c->row >= c->rows;
}

static int inspect_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((inspect_cursor *)cur)->row;
  return SQLITE_OK;
}

/* The privacy budget one tree's release accounts for. */
static double tree_epsilon(const rdt_forest *f, uint32_t t) {
  const rdt_config *c = &f->config;
  if (!c->is_private) return NAN;
  /* RDT#: the primary trees share eps; the secondary ones spend none. */
  if (f->sharp) return t < c->primary_trees ? rdt_eps_to_double(c->eps) / c->primary_trees : 0;
  /* Matrix: per-leaf noise splits eps over the trees (not with partition);
  ** the tables' eps is shared by every tree derived from them. */
  if (f->matrix)
    return f->matrix->strategy == RDT_STRATEGY_LEAF && !c->partition ? rdt_eps_to_double(c->eps) / c->trees
                                                                       : rdt_eps_to_double(c->eps);
  const rdt_forest_kind *kind = rdt_forest_kind_of(c->algorithm);
  if (kind->tree_epsilon) return kind->tree_epsilon(c);
  /* Automatic depth: the noisy row count's share (rdt_info's
  ** epsilon_row_count) is spent once for the forest, not by a tree. */
  return (rdt_eps_to_double(c->eps) - rdt_eps_to_double(c->eps_count)) / c->trees;
}

/* {"<class>": count, ...} of C class counters. */
static void result_class_counts(sqlite3_context *ctx, const rdt_forest *f, const int64_t *n) {
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendchar(o, 1, '{');
  for (uint32_t k = 0; k < f->schema.n_classes; k++) {
    if (k) sqlite3_str_appendchar(o, 1, ',');
    rdt_sql_json_string(o, f->schema.classes[k].text, f->schema.classes[k].text_len);
    sqlite3_str_appendf(o, ":%lld", (long long)n[k]);
  }
  sqlite3_str_appendchar(o, 1, '}');
  int len = sqlite3_str_length(o);
  char *s = sqlite3_str_finish(o);
  if (!s) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, s, len, sqlite3_free);
}

static void result_leaf_value(sqlite3_context *ctx, const rdt_forest *f, size_t leaf) {
  const int64_t *n = f->counts + leaf * rdt_forest_slots(f);
  if (f->config.task != RDT_TASK_REGRESSION) {
    result_class_counts(ctx, f, n);
    return;
  }
  double r = f->config.target_max - f->config.target_min;
  char *s = sqlite3_mprintf("{\"count\":%lld,\"sum\":%!.17g,\"mean\":%!.17g}", (long long)n[0],
                            f->config.target_min * (double)n[0] + r * ldexp((double)n[1], -RDT_TARGET_GRID_LOG2),
                            f->theta ? f->theta[leaf] : NAN);
  if (!s) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, s, -1, sqlite3_free);
}

static void result_categories(sqlite3_context *ctx, const rdt_forest *f, const rdt_node *n) {
  const rdt_feature *ft = &f->schema.features[n->feature];
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendchar(o, 1, '[');
  int first = 1;
  for (uint32_t code = 0; code <= ft->n_values; code++) {
    int left = n->kind == RDT_SPLIT_CATEGORY_EQ ? code == (uint32_t)n->value
                                                : (int)rdt_subset_member(rdt_value_to_mask(n->value), code);
    if (!left) continue;
    if (!first) sqlite3_str_appendchar(o, 1, ',');
    first = 0;
    if (code == ft->n_values) sqlite3_str_appendall(o, "null"); /* the `other` bucket */
    else if (ft->values[code].type == RDT_VALUE_INTEGER) sqlite3_str_appendf(o, "%lld", ft->values[code].integer);
    else rdt_sql_json_string(o, ft->values[code].text, ft->values[code].text_len);
  }
  sqlite3_str_appendchar(o, 1, ']');
  int len = sqlite3_str_length(o);
  char *s = sqlite3_str_finish(o);
  if (!s) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, s, len, sqlite3_free);
}

static const char *algorithm_name(const rdt_forest *f) { return rdt_forest_kind_of(f->config.algorithm)->name; }

/* The branch a multiway node hangs on: its parent's value (categorical) or
** the [lo, hi] bounds of its bin (numeric), as JSON. */
static void result_branch(sqlite3_context *ctx, const rdt_forest *f, uint32_t feature, uint32_t bin) {
  const rdt_feature *ft = &f->schema.features[feature];
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  if (ft->type == RDT_FEATURE_NUMERIC) {
    double w = (ft->max - ft->min) / f->config.bins;
    sqlite3_str_appendf(o, "[%!.17g,%!.17g]", ft->min + w * bin,
                        bin + 1 == f->config.bins ? ft->max : ft->min + w * (bin + 1));
  } else {
    sqlite3_str_appendchar(o, 1, '[');
    rdt_sql_json_value(o, &ft->values[bin]);
    sqlite3_str_appendchar(o, 1, ']');
  }
  int len = sqlite3_str_length(o);
  char *s = sqlite3_str_finish(o);
  if (!s) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, s, len, sqlite3_free);
}

/* rdt_nodes for multiway trees: kind "multiway" with left/right the first
** and last child; a leaf's value sums its centres (RDT#). */
static void column_nodes_multiway(inspect_cursor *c, sqlite3_context *ctx, int col) {
  const rdt_forest *f = &c->f;
  const rdt_matrix *m = f->matrix;
  uint32_t g = (uint32_t)c->row, t = 0;
  while (m->node_start[t + 1] <= g) t++;
  uint32_t a = m->node_start[t], id = g - a;
  const rdt_mnode *nd = &m->nodes[g];
  int leaf = nd->feature == RDT_MNODE_LEAF;
  const rdt_mnode *up = id ? &m->nodes[a + c->parent[g]] : NULL;
  switch (col) {
    case 0: sqlite3_result_int64(ctx, t); break;
    case 1: sqlite3_result_int64(ctx, id); break;
    case 2: sqlite3_result_int64(ctx, c->depth[g]); break;
    case 3: if (id == 0) sqlite3_result_null(ctx); else sqlite3_result_int64(ctx, c->parent[g]); break;
    case 4: sqlite3_result_int(ctx, leaf); break;
    case 5:
      if (leaf) sqlite3_result_null(ctx);
      else sqlite3_result_text(ctx, f->schema.features[nd->feature].name, -1, SQLITE_TRANSIENT);
      break;
    case 6: sqlite3_result_text(ctx, leaf ? "leaf" : "multiway", -1, SQLITE_STATIC); break;
    case 8:
      if (up) result_branch(ctx, f, up->feature, id - up->next);
      else sqlite3_result_null(ctx);
      break;
    case 9: if (leaf) sqlite3_result_null(ctx); else sqlite3_result_int64(ctx, nd->next); break;
    case 10:
      if (leaf) sqlite3_result_null(ctx);
      else sqlite3_result_int64(ctx, (sqlite3_int64)nd->next + m->domain[nd->feature] - 1);
      break;
    case 11:
      if (!leaf) {
        sqlite3_result_null(ctx);
      } else if (f->sharp) { /* the centres' counters, summed */
        uint64_t l = m->leaf_start[t] + nd->next;
        uint32_t C = f->schema.n_classes;
        int64_t *sum = calloc(C, sizeof *sum);
        if (!sum) {
          sqlite3_result_error_nomem(ctx);
          break;
        }
        for (uint64_t q = f->sharp->slot_start[l]; q < f->sharp->slot_start[l + 1]; q++)
          for (uint32_t k = 0; k < C; k++) sum[k] += f->counts[q * C + k];
        result_class_counts(ctx, f, sum);
        free(sum);
      } else {
        result_leaf_value(ctx, f, m->leaf_start[t] + nd->next);
      }
      break;
    default: sqlite3_result_null(ctx);
  }
}

static void column_trees(inspect_cursor *c, sqlite3_context *ctx, int col) {
  const rdt_forest *f = &c->f;
  uint32_t t = (uint32_t)c->row;
  sqlite3_int64 leaves = 0, splits = 0, empty = 0;
  if (col >= 2 && col <= 4) {
    if (f->matrix) { /* multiway: counted over the tree's breadth-first nodes */
      const rdt_matrix *m = f->matrix;
      for (uint32_t i = m->node_start[t]; i < m->node_start[t + 1]; i++) {
        int leaf = m->nodes[i].feature == RDT_MNODE_LEAF;
        leaves += leaf;
        splits += !leaf;
        empty += leaf && c->node_rows[i] <= 0;
      }
    } else {
      leaves = f->n_leaves;
      for (uint32_t i = 0; i < f->n_internal; i++) splits += f->nodes[(size_t)t * f->n_internal + i].kind != RDT_SPLIT_NONE;
      for (uint32_t l = 0; l < f->n_leaves; l++) empty += leaf_rows(f, (size_t)t * f->n_leaves + l) <= 0;
    }
  }
  switch (col) {
    case 0: sqlite3_result_int64(ctx, t); break;
    case 1: sqlite3_result_int64(ctx, f->config.depth); break;
    case 2: sqlite3_result_int64(ctx, leaves); break;
    case 3: sqlite3_result_int64(ctx, splits); break;
    case 4: sqlite3_result_int64(ctx, empty); break;
    case 5: {
      double e = tree_epsilon(f, t);
      if (e != e) sqlite3_result_null(ctx);
      else sqlite3_result_double(ctx, e);
      break;
    }
    case 6: sqlite3_result_text(ctx, algorithm_name(f), -1, SQLITE_STATIC); break;
    case 7: sqlite3_result_int(ctx, !f->tree_kept || f->tree_kept[t]); break; /* 0: dropped by "keep_trees" */
    default: sqlite3_result_null(ctx);
  }
}

static void column_nodes(inspect_cursor *c, sqlite3_context *ctx, int col) {
  const rdt_forest *f = &c->f;
  if (f->matrix) {
    column_nodes_multiway(c, ctx, col);
    return;
  }
  uint32_t per_tree = f->n_internal + f->n_leaves;
  uint32_t t = (uint32_t)(c->row / per_tree), id = (uint32_t)(c->row % per_tree);
  int leaf = id >= f->n_internal;
  const rdt_node *n = leaf ? NULL : &f->nodes[(size_t)t * f->n_internal + id];
  uint32_t depth = 0;
  for (uint32_t k = id; k > 0; k = (k - 1) / 2) depth++;
  switch (col) {
    case 0: sqlite3_result_int64(ctx, t); break;
    case 1: sqlite3_result_int64(ctx, id); break;
    case 2: sqlite3_result_int64(ctx, depth); break;
    case 3: if (id == 0) sqlite3_result_null(ctx); else sqlite3_result_int64(ctx, (id - 1) / 2); break;
    case 4: sqlite3_result_int(ctx, leaf); break;
    case 5:
      if (!n || n->kind == RDT_SPLIT_NONE) sqlite3_result_null(ctx);
      else sqlite3_result_text(ctx, f->schema.features[n->feature].name, -1, SQLITE_TRANSIENT);
      break;
    case 6:
      sqlite3_result_text(ctx, leaf ? "leaf" : rdt_split_kind_name(n->kind), -1, SQLITE_STATIC);
      break;
    case 7: if (n && n->kind == RDT_SPLIT_NUMERIC) sqlite3_result_double(ctx, n->value); else sqlite3_result_null(ctx); break;
    case 8:
      if (n && (n->kind == RDT_SPLIT_CATEGORY_EQ || n->kind == RDT_SPLIT_CATEGORY_SUBSET)) result_categories(ctx, f, n);
      else sqlite3_result_null(ctx);
      break;
    case 9: if (leaf) sqlite3_result_null(ctx); else sqlite3_result_int64(ctx, 2 * (sqlite3_int64)id + 1); break;
    case 10: if (leaf) sqlite3_result_null(ctx); else sqlite3_result_int64(ctx, 2 * (sqlite3_int64)id + 2); break;
    case 11:
      if (leaf) result_leaf_value(ctx, f, (size_t)t * f->n_leaves + (id - f->n_internal));
      else sqlite3_result_null(ctx);
      break;
    default: sqlite3_result_null(ctx);
  }
}

static void column_importance(inspect_cursor *c, sqlite3_context *ctx, int col) {
  const rdt_forest *f = &c->f;
  uint32_t j = (uint32_t)c->row;
  double splits = 0, weighted = 0;
  for (uint32_t k = 0; k < f->schema.n_features; k++) {
    splits += c->importance[2 * k];
    weighted += c->importance[2 * k + 1];
  }
  switch (col) {
    case 0: sqlite3_result_text(ctx, f->schema.features[j].name, -1, SQLITE_TRANSIENT); break;
    case 1: sqlite3_result_int64(ctx, (sqlite3_int64)c->importance[2 * j]); break;
    case 2: sqlite3_result_double(ctx, splits > 0 ? c->importance[2 * j] / splits : 0); break;
    case 3: sqlite3_result_double(ctx, weighted > 0 ? c->importance[2 * j + 1] / weighted : 0); break;
    default: sqlite3_result_null(ctx);
  }
}

static int inspect_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  inspect_cursor *c = (inspect_cursor *)cur;
  switch (((inspect_vtab *)cur->pVtab)->kind) {
    case INSPECT_TREES: column_trees(c, ctx, col); break;
    case INSPECT_NODES: column_nodes(c, ctx, col); break;
    default: column_importance(c, ctx, col); break;
  }
  return SQLITE_OK;
}

static sqlite3_module inspect_module = {
    .iVersion = 0,
    .xConnect = inspect_connect,
    .xBestIndex = inspect_best_index,
    .xDisconnect = inspect_disconnect,
    .xOpen = inspect_open,
    .xClose = inspect_close,
    .xFilter = inspect_filter,
    .xNext = inspect_next,
    .xEof = inspect_eof,
    .xColumn = inspect_column,
    .xRowid = inspect_rowid,
};

int rdt_register_inspection(sqlite3 *db) {
  static const char *const names[] = {"rdt_trees", "rdt_nodes", "rdt_feature_importance"};
  for (int k = 0; k < 3; k++) {
    int rc = sqlite3_create_module(db, names[k], &inspect_module, (void *)(intptr_t)k);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
