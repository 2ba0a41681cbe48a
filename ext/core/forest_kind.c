/*
** forest_kind.c - the table of forest algorithms (forest_kind.h): each
** kind's training hooks, its part of the JSON codec (forest_json.c calls
** them) and its rdt_info description.
*/
#include "forest_kind.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diprime.h"
#include "matrix.h"
#include "sharp.h"

static int rdt_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  (void)in;
  return (!f->config.auto_depth || rdt_forest_choose_depth(f, noise)) && rdt_forest_add_noise(f, noise);
}

/* Its per-query shares must not round to 0 (a parameter mistake); it
** rounds its per-row eps down to what its queries spend, so a release with
** unit facts states (and a ledger is charged) exactly that much. */
static int diprime_check(rdt_config *c, const rdt_schema *s, char *err, size_t en) {
  if (!rdt_diprime_budget(c, s->n_features)) {
    snprintf(err, en, "\"epsilon\" is too small for this DiPriMe configuration: a per-query share rounds to 0");
    return 0;
  }
  if (rdt_unit_active(&c->unit)) c->unit.eps_total.num = c->unit.eps_bounds.num + (uint64_t)c->unit.max_rows * c->eps.num;
  return 1;
}

static int diprime_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  return rdt_diprime_train(f, in->rows_x, in->rows_c, in->rows_y, in->n_rows, noise);
}

/* DiPriMe: with "partition" each tree sees its own rows (ε each), else ε / trees. */
static double diprime_tree_epsilon(const rdt_config *c) {
  return c->partition ? rdt_eps_to_double(c->eps) : rdt_eps_to_double(c->eps) / c->trees;
}

static int matrix_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  (void)in;
  return rdt_matrix_release(f, noise);
}

/* RDT#: the depth and the primary trees from the public rows (sharp.h). */
static void sharp_plan(rdt_config *c, const rdt_schema *s, const rdt_forest_input *in) {
  double n = (double)(in->public_n ? in->public_n : in->n_pub);
  if (c->depth == 0) c->depth = rdt_sharp_depth(s, c->bins, n);
  if (c->primary_trees == 0) {
    c->primary_trees = rdt_sharp_primary(s, c->bins, c->depth, n, rdt_eps_to_double(c->eps));
    c->trees += c->primary_trees;
  }
}

static int sharp_build(rdt_forest *f, const rdt_forest_input *in, char *err, size_t en) {
  return rdt_sharp_build(f, in->pub, in->n_pub, err, en);
}

static int sharp_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  return rdt_sharp_release(f, in->pub, in->n_pub, noise);
}

/* ---- the JSON codec's and rdt_info's parts (contracts 4, 5) ---------------- */

/* DiPriMe: the two sub-budgets its queries and leaves spend. */
static void diprime_export_privacy(const rdt_forest *f, rdt_bytes *out) {
  rdt_json_putf(out, ",\"epsilon_query_num\":%llu,\"epsilon_leaf_num\":%llu", (unsigned long long)f->config.eps_query.num,
                (unsigned long long)f->config.eps_leaf.num);
}

static int diprime_import_privacy(rdt_json_reader *r, const rdt_json *priv, rdt_config *c) {
  return rdt_json_member_uint(r, priv, "epsilon_query_num", UINT64_MAX >> 1, &c->eps_query.num) &&
         rdt_json_member_uint(r, priv, "epsilon_leaf_num", UINT64_MAX >> 1, &c->eps_leaf.num);
}

/* Multiway trees (matrix, RDT#): "layout": "multiway"; "nodes", per tree in
** breadth-first order [feature, next] (feature -1: a leaf, next its index);
** "leaves", per tree, the released values of each slot (a leaf, or for
** RDT# each centre of each leaf in order: slot_start, NULL for one slot a
** leaf). The kind's own object ("matrix", "rdt#") follows. */
static void multiway_export(const rdt_forest *f, const uint32_t *slot_start, rdt_bytes *o) {
  const rdt_config *c = &f->config;
  const rdt_matrix *m = f->matrix;
  uint32_t slots = rdt_forest_slots(f);
  rdt_json_putf(o, ",\"layout\":\"multiway\",\"bins\":%u,\"nodes\":[", c->bins);
  for (uint32_t t = 0; t < c->trees; t++) {
    rdt_bytes_text(o, t ? ",[" : "[");
    for (uint32_t i = m->node_start[t]; i < m->node_start[t + 1]; i++) {
      const rdt_mnode *nd = &m->nodes[i];
      if (nd->feature == RDT_MNODE_LEAF) rdt_json_putf(o, "%s[-1,%u]", i > m->node_start[t] ? "," : "", nd->next);
      else rdt_json_putf(o, "%s[%u,%u]", i > m->node_start[t] ? "," : "", nd->feature, nd->next);
    }
    rdt_json_put_char(o, ']');
  }
  rdt_bytes_text(o, "],\"leaves\":[");
  for (uint32_t t = 0; t < c->trees; t++) {
    uint64_t a = m->leaf_start[t], b = m->leaf_start[t + 1];
    if (slot_start) {
      a = slot_start[a];
      b = slot_start[b];
    }
    rdt_bytes_text(o, t ? ",[" : "[");
    for (uint64_t l = a; l < b; l++) {
      const int64_t *v = f->counts + l * slots;
      rdt_bytes_text(o, l > a ? ",[" : "[");
      for (uint32_t k = 0; k < slots; k++) rdt_json_putf(o, "%s%lld", k ? "," : "", (long long)v[k]);
      rdt_json_put_char(o, ']');
    }
    rdt_json_put_char(o, ']');
  }
  rdt_json_put_char(o, ']');
}

/* The multiway part of an export (multiway_export) into a new f->matrix;
** *n_leaves and *n_slots: the leaves its nodes name and the slots its
** "leaves" hold. The decoder validates the result as it does any BLOB. */
static int multiway_import(rdt_json_reader *r, const rdt_json *root, rdt_forest *f, uint64_t *n_leaves,
                           uint64_t *n_slots) {
  rdt_config *c = &f->config;
  uint32_t nf = f->schema.n_features, slots = rdt_forest_slots(f);
  rdt_matrix *m = f->matrix = calloc(1, sizeof *f->matrix);
  f->multiway = &rdt_matrix_multiway;
  if (!m) return rdt_json_bad(r, "out of memory");
  uint64_t u;
  if (!rdt_json_member_uint(r, root, "bins", RDT_MATRIX_MAX_BINS, &u)) return 0;
  c->bins = (uint32_t)u;
  m->strategy = RDT_STRATEGY_LEAF;
  if (!rdt_matrix_domains(f)) return rdt_json_bad(r, "out of memory");
  const rdt_json *nodes = rdt_json_member(r, root, "nodes", RDT_JSON_ARRAY),
                 *leaves = rdt_json_member(r, root, "leaves", RDT_JSON_ARRAY);
  if (!nodes || !leaves) return 0;
  if (nodes->n != c->trees || leaves->n != c->trees)
    return rdt_json_bad(r, "\"nodes\" and \"leaves\" need one entry per tree");
  uint64_t n_nodes = 0, n_slot = 0;
  for (uint32_t t = 0; t < c->trees; t++) {
    if (nodes->items[t]->type != RDT_JSON_ARRAY || leaves->items[t]->type != RDT_JSON_ARRAY)
      return rdt_json_bad(r, "a tree is malformed");
    n_nodes += nodes->items[t]->n;
    n_slot += leaves->items[t]->n;
  }
  /* No slot per leaf (a classifier without classes) counts as no room, as
  ** rdt_forest_counters() says for binary trees; and no division by 0. */
  if (slots == 0 || n_nodes > UINT32_MAX / 2 || n_slot > RDT_MAX_COUNTERS / slots)
    return rdt_json_bad(r, "the model is too large");
  m->node_start = malloc((c->trees + 1) * sizeof *m->node_start);
  m->leaf_start = malloc((c->trees + 1) * sizeof *m->leaf_start);
  m->nodes = malloc((size_t)(n_nodes ? n_nodes : 1) * sizeof *m->nodes);
  f->counts = calloc((size_t)(n_slot ? n_slot : 1) * slots, sizeof *f->counts);
  if (!m->node_start || !m->leaf_start || !m->nodes || !f->counts) return rdt_json_bad(r, "out of memory");
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
        return rdt_json_bad(r, "a node is malformed");
      m->nodes[at].feature = n->items[0]->integer < 0 ? RDT_MNODE_LEAF : (uint32_t)n->items[0]->integer;
      m->nodes[at].next = (uint32_t)n->items[1]->integer;
      leaf_no += m->nodes[at].feature == RDT_MNODE_LEAF;
    }
    for (size_t l = 0; l < tl->n; l++, slot_no++)
      if (!rdt_json_int_array(r, tl->items[l], f->counts + slot_no * slots, slots)) return 0;
  }
  m->node_start[c->trees] = (uint32_t)at;
  m->leaf_start[c->trees] = (uint32_t)leaf_no;
  *n_leaves = leaf_no;
  *n_slots = n_slot;
  return 1;
}

/* "matrix": the rest of the MTRX / CELL sections (sql/model-format.md). */
static void matrix_export_layout(const rdt_forest *f, rdt_bytes *o) {
  const rdt_matrix *m = f->matrix;
  uint32_t slots = rdt_forest_slots(f);
  multiway_export(f, NULL, o);
  rdt_json_putf(o, ",\"matrix\":{\"strategy\":%u,\"expected_error\":[", m->strategy);
  for (int k = 0; k < RDT_N_STRATEGIES; k++) {
    if (k) rdt_json_put_char(o, ',');
    rdt_json_put_double(o, m->factor[k]); /* null when not available */
  }
  rdt_bytes_text(o, "],\"expected_leaf_variance\":");
  rdt_json_put_double(o, m->expected_variance);
  rdt_bytes_text(o, ",\"tables\":[");
  for (uint32_t g = 0; g < m->n_tables; g++) {
    rdt_json_putf(o, "%s{\"epsilon_num\":%llu,\"weight\":", g ? "," : "", (unsigned long long)m->tables[g].eps.num);
    rdt_json_put_double(o, m->tables[g].weight);
    rdt_bytes_text(o, ",\"attributes\":");
    rdt_json_put_u32_list(o, m->tables[g].attrs, m->tables[g].n_attrs);
    rdt_json_put_char(o, '}');
  }
  rdt_bytes_text(o, "],\"cells\":");
  if (m->exact_cells) {
    rdt_bytes_text(o, "{\"attributes\":");
    rdt_json_put_u32_list(o, m->exact.attrs, m->exact.n_attrs);
    rdt_bytes_text(o, ",\"values\":[");
    for (uint64_t i = 0; i < m->exact.cells * slots; i++)
      rdt_json_putf(o, "%s%lld", i ? "," : "", (long long)m->exact_cells[i]);
    rdt_bytes_text(o, "]}}");
  } else {
    rdt_bytes_text(o, "null}");
  }
}

static int matrix_import_layout(rdt_json_reader *r, const rdt_json *root, rdt_forest *f) {
  uint64_t leaf_no, n_slots, u;
  if (!multiway_import(r, root, f, &leaf_no, &n_slots)) return 0;
  rdt_matrix *m = f->matrix;
  uint32_t nf = f->schema.n_features, slots = rdt_forest_slots(f);
  if (n_slots != leaf_no) return rdt_json_bad(r, "\"leaves\" needs one entry per leaf");
  const rdt_json *mj = rdt_json_member(r, root, "matrix", RDT_JSON_OBJECT);
  if (!mj) return 0;
  if (!rdt_json_member_uint(r, mj, "strategy", RDT_N_STRATEGIES, &u) ||
      !rdt_json_member_double(r, mj, "expected_leaf_variance", &m->expected_variance))
    return 0;
  m->strategy = (uint32_t)u;
  const rdt_json *fa = rdt_json_member(r, mj, "expected_error", RDT_JSON_ARRAY);
  if (!fa) return 0;
  if (fa->n != RDT_N_STRATEGIES) return rdt_json_bad(r, "\"expected_error\" needs one entry per strategy");
  for (int k = 0; k < RDT_N_STRATEGIES; k++) {
    const rdt_json *e = fa->items[k];
    if (e->type == RDT_JSON_NULL) m->factor[k] = INFINITY;
    else if (e->type == RDT_JSON_NUMBER) m->factor[k] = e->number;
    else return rdt_json_bad(r, "\"expected_error\" entries must be numbers or null");
  }
  const rdt_json *tables = rdt_json_member(r, mj, "tables", RDT_JSON_ARRAY);
  if (!tables) return 0;
  if (tables->n > RDT_MAX_COUNTERS) return rdt_json_bad(r, "too many tables");
  if (tables->n && !(m->tables = calloc(tables->n, sizeof *m->tables))) return rdt_json_bad(r, "out of memory");
  m->n_tables = (uint32_t)tables->n;
  for (size_t g = 0; g < tables->n; g++) {
    const rdt_json *tj = tables->items[g];
    if (tj->type != RDT_JSON_OBJECT ||
        !rdt_json_member_uint(r, tj, "epsilon_num", UINT64_MAX >> 1, &m->tables[g].eps.num) ||
        !rdt_json_member_double(r, tj, "weight", &m->tables[g].weight) ||
        !rdt_json_u32_list(r, rdt_json_get(tj, "attributes"), nf, &m->tables[g].attrs, &m->tables[g].n_attrs))
      return rdt_json_bad(r, "a table is malformed");
  }
  const rdt_json *cells = rdt_json_get(mj, "cells");
  if (cells && cells->type == RDT_JSON_OBJECT) {
    uint32_t *attrs = NULL, n_attrs = 0;
    if (!rdt_json_u32_list(r, rdt_json_get(cells, "attributes"), nf, &attrs, &n_attrs)) {
      free(attrs);
      return 0;
    }
    uint8_t *in = calloc(nf, 1);
    int ok = in != NULL;
    for (uint32_t i = 0; ok && i < n_attrs; i++) in[attrs[i]] = 1;
    ok = ok && rdt_matrix_table_init(f, &m->exact, in, RDT_MATRIX_MAX_EXACT_COUNTERS / slots);
    free(in);
    free(attrs);
    if (!ok) return rdt_json_bad(r, "the cell table is malformed or too large");
    if (!(m->exact_cells = malloc((size_t)m->exact.cells * slots * sizeof *m->exact_cells)))
      return rdt_json_bad(r, "out of memory");
    if (!rdt_json_int_array(r, rdt_json_get(cells, "values"), m->exact_cells, (size_t)m->exact.cells * slots)) return 0;
  } else if (!cells || cells->type != RDT_JSON_NULL) {
    return rdt_json_bad(r, "\"cells\" must be an object or null");
  }
  return 1;
}

/* "rdt#": the rest of the SHRP / CNTR sections (sql/model-format.md). */
static void sharp_export_layout(const rdt_forest *f, rdt_bytes *o) {
  const rdt_sharp *sh = f->sharp;
  const rdt_config *c = &f->config;
  uint32_t nf = f->schema.n_features;
  multiway_export(f, sh->slot_start, o);
  rdt_json_putf(o, ",\"rdt#\":{\"primary_trees\":%u,\"cells\":%u,\"public_rows\":%llu,\"public_tables\":[",
                c->primary_trees, c->cells, (unsigned long long)sh->public_rows);
  for (uint32_t at = 0; at < c->public_tables_len; at += (uint32_t)strlen(c->public_tables + at) + 1) {
    if (at) rdt_json_put_char(o, ',');
    rdt_json_put_string(o, c->public_tables + at, strlen(c->public_tables + at));
  }
  rdt_bytes_text(o, "],\"centres\":[");
  for (uint64_t l = 0; l < rdt_matrix_leaves(f); l++) {
    rdt_bytes_text(o, l ? ",[" : "[");
    uint32_t a = sh->slot_start[l], b = sh->slot_start[l + 1];
    for (uint32_t k = a; k < b && !isnan(sh->centres[(size_t)a * nf]); k++) {
      rdt_bytes_text(o, k > a ? ",[" : "[");
      for (uint32_t j = 0; j < nf; j++) {
        if (j) rdt_json_put_char(o, ',');
        rdt_json_put_double(o, sh->centres[(size_t)k * nf + j]);
      }
      rdt_json_put_char(o, ']');
    }
    rdt_json_put_char(o, ']');
  }
  rdt_bytes_text(o, "]}");
}

static int sharp_import_layout(rdt_json_reader *r, const rdt_json *root, rdt_forest *f) {
  uint64_t leaf_no, n_slots;
  if (!multiway_import(r, root, f, &leaf_no, &n_slots)) return 0;
  rdt_config *c = &f->config;
  uint32_t nf = f->schema.n_features;
  const rdt_json *sj = rdt_json_member(r, root, "rdt#", RDT_JSON_OBJECT);
  if (!sj) return 0;
  rdt_sharp *sh = f->sharp = calloc(1, sizeof *f->sharp);
  f->multiway = &rdt_sharp_multiway;
  if (!sh) return rdt_json_bad(r, "out of memory");
  uint64_t primary, cells, public_rows;
  if (!rdt_json_member_uint(r, sj, "primary_trees", c->trees, &primary) ||
      !rdt_json_member_uint(r, sj, "cells", RDT_SHARP_MAX_CELLS, &cells) ||
      !rdt_json_member_uint(r, sj, "public_rows", RDT_SHARP_MAX_PUBLIC_ROWS, &public_rows))
    return 0;
  c->primary_trees = (uint32_t)primary;
  c->cells = (uint32_t)cells;
  sh->public_rows = public_rows;
  const rdt_json *pt = rdt_json_get(sj, "public_tables"); /* absent in exports of 1.0 models */
  if (pt && pt->type != RDT_JSON_ARRAY) return rdt_json_bad(r, "\"public_tables\" must be an array of names");
  for (size_t i = 0; pt && i < pt->n; i++) {
    const rdt_json *t = pt->items[i];
    if (t->type != RDT_JSON_STRING || t->string_len == 0 || strlen(t->string) != t->string_len ||
        c->public_tables_len + t->string_len + 1 >= sizeof c->public_tables)
      return rdt_json_bad(r, "\"public_tables\" must be an array of names");
    memcpy(c->public_tables + c->public_tables_len, t->string, t->string_len + 1);
    c->public_tables_len += (uint32_t)t->string_len + 1;
  }
  const rdt_json *centres = rdt_json_member(r, sj, "centres", RDT_JSON_ARRAY);
  if (!centres) return 0;
  if (centres->n != leaf_no) return rdt_json_bad(r, "\"centres\" needs one entry per leaf");
  sh->slot_start = malloc((size_t)(leaf_no + 1) * sizeof *sh->slot_start);
  sh->centres = malloc((size_t)(n_slots ? n_slots : 1) * nf * sizeof *sh->centres);
  if (!sh->slot_start || !sh->centres) return rdt_json_bad(r, "out of memory");
  uint64_t k = 0;
  for (uint64_t l = 0; l < leaf_no; l++) {
    const rdt_json *cl = centres->items[l];
    if (cl->type != RDT_JSON_ARRAY) return rdt_json_bad(r, "a leaf's centres are malformed");
    sh->slot_start[l] = (uint32_t)k;
    uint64_t n = cl->n ? cl->n : 1;
    if (k + n > n_slots) return rdt_json_bad(r, "\"centres\" and \"leaves\" disagree");
    for (uint64_t q = 0; q < n; q++, k++) {
      double *dst = sh->centres + (size_t)k * nf;
      if (!cl->n) {
        for (uint32_t j = 0; j < nf; j++) dst[j] = NAN;
        continue;
      }
      const rdt_json *cv = cl->items[q];
      if (cv->type != RDT_JSON_ARRAY || cv->n != nf) return rdt_json_bad(r, "a centre is malformed");
      for (uint32_t j = 0; j < nf; j++) {
        if (cv->items[j]->type != RDT_JSON_NUMBER) return rdt_json_bad(r, "a centre is malformed");
        dst[j] = cv->items[j]->number;
      }
    }
  }
  if (k != n_slots) return rdt_json_bad(r, "\"centres\" and \"leaves\" disagree");
  sh->slot_start[leaf_no] = (uint32_t)k;
  return 1;
}

/* rdt_info: complete binary trees' size (RDT, DiPriMe). */
static void binary_structure(const rdt_forest *f, rdt_bytes *o) {
  rdt_json_putf(o, "\"trees\":%u,\"depth\":%u,\"leaves_per_tree\":%u,", f->config.trees, f->config.depth, f->n_leaves);
}

static void rdt_describe(const rdt_forest *f, rdt_forest_info_part part, rdt_bytes *o, rdt_info_real real) {
  const rdt_config *c = &f->config;
  (void)real;
  switch (part) {
    case RDT_FOREST_INFO_MECHANISM:
      rdt_bytes_text(o, "\"mechanism\":\"discrete Laplace noise of scale trees/epsilon on every leaf class counter "
                        "(L1 sensitivity 1 per tree)\",");
      break;
    case RDT_FOREST_INFO_PARAMETERS: break;
    case RDT_FOREST_INFO_STRUCTURE: binary_structure(f, o); break;
    case RDT_FOREST_INFO_SPLITS:
      rdt_json_putf(o, "\"splits\":\"%s\",\"categorical\":\"%s\",", c->splits == RDT_SPLITS_GLOBAL ? "global" : "reachable",
                    c->categorical == RDT_CATEGORICAL_ONE_VS_REST ? "one_vs_rest" : "subset");
      break;
  }
}

static void diprime_describe(const rdt_forest *f, rdt_forest_info_part part, rdt_bytes *o, rdt_info_real real) {
  const rdt_config *c = &f->config;
  int regression = c->task == RDT_TASK_REGRESSION;
  switch (part) {
    case RDT_FOREST_INFO_MECHANISM: {
      double q = rdt_eps_to_double(c->eps_query), leaf = rdt_eps_to_double(c->eps_leaf);
      rdt_json_putf(o, "\"mechanism\":\"DiPriMe: per node, %u private medians or balanced subsets and one "
                       "permute-and-flip selection of eps ",
                    c->candidates < f->schema.n_features ? c->candidates : f->schema.n_features);
      real(o, q);
      rdt_json_putf(o, " each (sequential), levels sequential, nodes of a level parallel; leaves: discrete Laplace %s "
                       "with eps ",
                    regression ? "on the count and on the integerised sum, each" : "on every class counter");
      real(o, regression ? leaf / 2 : leaf);
      rdt_json_putf(o, "; trees %s; grown on a uniform sample of at most max_rows rows, which one row changes by one "
                       "row in and one out, so epsilon is twice what these queries spend\",\"epsilon_per_query\":",
                    c->partition ? "on disjoint random parts of the rows (parallel)" : "on all rows (sequential)");
      real(o, q);
      rdt_bytes_text(o, ",\"epsilon_leaves\":");
      real(o, leaf);
      rdt_json_put_char(o, ',');
      break;
    }
    case RDT_FOREST_INFO_PARAMETERS:
      rdt_bytes_text(o, "\"rho\":");
      real(o, c->rho);
      rdt_json_putf(o, ",\"candidates\":%u,\"partition\":%s,", c->candidates, c->partition ? "true" : "false");
      break;
    case RDT_FOREST_INFO_STRUCTURE: binary_structure(f, o); break;
    case RDT_FOREST_INFO_SPLITS: break;
  }
}

static void matrix_describe(const rdt_forest *f, rdt_forest_info_part part, rdt_bytes *o, rdt_info_real real) {
  const rdt_config *c = &f->config;
  const rdt_matrix *m = f->matrix;
  switch (part) {
    case RDT_FOREST_INFO_MECHANISM:
      if (m->strategy == RDT_STRATEGY_LEAF)
        rdt_json_putf(o, "\"mechanism\":\"matrix forest, leaf strategy: discrete Laplace noise of scale %s/epsilon on "
                         "every leaf class counter (L1 sensitivity %s)\",",
                      c->partition ? "1" : "trees", c->partition ? "1: every row counted in one random tree" : "1 per tree");
      else
        rdt_json_putf(o, "\"mechanism\":\"matrix forest, %s strategy: discrete Laplace noise of scale 1/epsilon_t on "
                         "every cell class counter of %u contingency table%s (L1 sensitivity 1 each, epsilon_t adding "
                         "up to epsilon); every leaf counter is the sum of its cells\",",
                      rdt_strategy_name(m->strategy), m->n_tables, m->n_tables == 1 ? "" : "s");
      break;
    case RDT_FOREST_INFO_PARAMETERS: break;
    case RDT_FOREST_INFO_STRUCTURE:
      rdt_json_putf(o, "\"noise\":\"matrix\",\"layout\":\"multiway\",\"trees\":%u,\"depth\":%u,\"leaves\":%llu,", c->trees,
                    c->depth, (unsigned long long)rdt_forest_total_leaves(f));
      rdt_json_putf(o, "\"matrix\":{\"bins\":%u,\"strategy\":\"%s\",\"partition\":%s,", c->bins,
                    rdt_strategy_name(m->strategy), c->partition ? "true" : "false");
      if (c->is_private) {
        rdt_bytes_text(o, "\"expected_leaf_variance\":");
        real(o, m->expected_variance);
        rdt_json_put_char(o, ',');
      } else {
        rdt_bytes_text(o, "\"expected_leaf_variance\":0,");
      }
      /* Every candidate's expected error in units of 2/epsilon^2 (matrix.h):
      ** what the choice was made from. */
      rdt_bytes_text(o, "\"expected_error\":{");
      for (uint32_t k = 1; k <= RDT_N_STRATEGIES; k++) {
        rdt_json_putf(o, "%s\"%s\":", k > 1 ? "," : "", rdt_strategy_name(k));
        if (isfinite(m->factor[k - 1])) real(o, m->factor[k - 1]);
        else rdt_bytes_text(o, "null");
      }
      rdt_bytes_text(o, "},\"tables\":[");
      for (uint32_t g = 0; g < m->n_tables; g++) {
        const rdt_mtable *tb = &m->tables[g];
        rdt_bytes_text(o, g ? ",{\"epsilon\":" : "{\"epsilon\":");
        real(o, rdt_eps_to_double(tb->eps));
        rdt_bytes_text(o, ",\"attributes\":[");
        for (uint32_t i = 0; i < tb->n_attrs; i++) {
          if (i) rdt_json_put_char(o, ',');
          const char *nm = f->schema.features[tb->attrs[i]].name;
          rdt_json_put_string(o, nm, strlen(nm));
        }
        rdt_bytes_text(o, "]}");
      }
      rdt_bytes_text(o, "]},");
      break;
    case RDT_FOREST_INFO_SPLITS: break;
  }
}

static void sharp_describe(const rdt_forest *f, rdt_forest_info_part part, rdt_bytes *o, rdt_info_real real) {
  const rdt_config *c = &f->config;
  const rdt_sharp *sh = f->sharp;
  (void)real;
  switch (part) {
    case RDT_FOREST_INFO_MECHANISM:
      rdt_json_putf(o, "\"mechanism\":\"RDT#: discrete Laplace noise of scale %u/epsilon on every class counter of every "
                       "centre of the %u primary trees (L1 sensitivity 1 per tree); the %u secondary trees count public "
                       "rows labelled by the primary trees (post-processing)\",",
                    c->primary_trees, c->primary_trees, c->trees - c->primary_trees);
      break;
    case RDT_FOREST_INFO_PARAMETERS: break;
    case RDT_FOREST_INFO_STRUCTURE: {
      rdt_json_putf(o, "\"layout\":\"multiway\",\"trees\":%u,\"depth\":%u,\"leaves\":%llu,", c->trees, c->depth,
                    (unsigned long long)rdt_matrix_leaves(f));
      uint64_t centres = 0;
      for (uint64_t k = 0; k < rdt_sharp_slots(f); k++) centres += !isnan(sh->centres[k * f->schema.n_features]);
      rdt_json_putf(o, "\"rdt#\":{\"primary_trees\":%u,\"secondary_trees\":%u,\"cells\":%u,\"bins\":%u,"
                       "\"public_rows\":%llu,\"centres\":%llu},",
                    c->primary_trees, c->trees - c->primary_trees, c->cells, c->bins,
                    (unsigned long long)sh->public_rows, (unsigned long long)centres);
      rdt_bytes_text(o, "\"public_tables\":[");
      for (uint32_t at = 0; at < c->public_tables_len; at += (uint32_t)strlen(c->public_tables + at) + 1) {
        if (at) rdt_json_put_char(o, ',');
        rdt_json_put_string(o, c->public_tables + at, strlen(c->public_tables + at));
      }
      rdt_bytes_text(o, f->format_minor >= 1 ? "]," : "],\"public_tables_recorded\":false,");
      rdt_bytes_text(o, "\"contains_public_rows\":\"YES: the centres are rows of public_query, stored verbatim; "
                        "publish this model only if those rows really are public\",");
      break;
    }
    case RDT_FOREST_INFO_SPLITS: break;
  }
}

#define ROW "add/remove one row"

static const rdt_forest_kind kinds[] = {
    {.algorithm = RDT_ALGO_RDT, .name = "rdt", .option = "rdt", .note = "rdt", .batch_prediction = 1,
     .release = rdt_release, .neighbouring = ROW, .describe = rdt_describe},
    {.algorithm = RDT_ALGO_DIPRIME, .name = "diprime", .option = "diprime", .note = "diprime", .buffers_rows = 1,
     .check = diprime_check, .release = diprime_release, .tree_epsilon = diprime_tree_epsilon, .neighbouring = ROW,
     .export_privacy = diprime_export_privacy, .import_privacy = diprime_import_privacy, .describe = diprime_describe},
    {.algorithm = RDT_ALGO_MATRIX, .name = "matrix", .option = "rdt", .noise = "matrix", .note = "rdt, matrix noise",
     .multiway = 1, .batch_prediction = 1, .release = matrix_release, .neighbouring = ROW,
     .export_layout = matrix_export_layout, .import_layout = matrix_import_layout, .describe = matrix_describe},
    {.algorithm = RDT_ALGO_SHARP, .name = "rdt#", .option = "rdt#", .note = "rdt#", .multiway = 1,
     .reads_public_rows = 1, .plan = sharp_plan, .build = sharp_build, .release = sharp_release,
     .neighbouring = "add/remove one private (labeled) row", .export_layout = sharp_export_layout,
     .import_layout = sharp_import_layout, .describe = sharp_describe},
};

#undef ROW

const rdt_forest_kind *rdt_forest_kind_of(rdt_algorithm algorithm) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (kinds[i].algorithm == algorithm) return &kinds[i];
  return &kinds[0];
}

void rdt_forest_wipe_counters(rdt_forest *f) {
  size_t slots = rdt_forest_slots(f);
  if (f->counts) sodium_memzero(f->counts, (size_t)rdt_forest_total_leaves(f) * slots * sizeof *f->counts);
  rdt_matrix *mx = f->matrix;
  if (mx && mx->cells) sodium_memzero(mx->cells, (size_t)mx->n_cells * slots * sizeof *mx->cells);
  if (mx && mx->exact_cells) sodium_memzero(mx->exact_cells, (size_t)mx->exact.cells * slots * sizeof *mx->exact_cells);
}

/* Contract 6. A decoded forest holds f->sharp exactly for RDT# trees, and
** f->matrix for matrix or RDT# trees (model.c); a kind is chosen by what it
** holds, as rdt_export and rdt_info always did. */
const rdt_forest_kind *rdt_forest_kind_held(const rdt_forest *f) {
  if (f->sharp) return rdt_forest_kind_of(RDT_ALGO_SHARP);
  if (f->matrix) return rdt_forest_kind_of(RDT_ALGO_MATRIX);
  const rdt_forest_kind *k = rdt_forest_kind_of(f->config.algorithm);
  return k->multiway ? &kinds[0] : k;
}

const rdt_forest_kind *rdt_forest_kind_named(const char *name) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
  return NULL;
}
