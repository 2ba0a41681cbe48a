/*
** matrix_kind.c - the matrix forest kind ("noise": "matrix"; forest_kind.h):
** multiway random trees whose leaf counts the matrix mechanism answers.
**
** Contract:
**   1. release() is rdt_matrix_release: the noise of the strategy chosen
**      from the structure alone (leaf counters, or contingency tables whose
**      epsilon_t add up to epsilon), as matrix.h's privacy contract says.
**      Neighbours: add or remove one row. It reads its counters only; its
**      model size is known after its structure is drawn (multiway); it
**      answers rdt_predict_batch from its non-private models.
**   2. JSON: the multiway layout (tree_layouts.h), then "matrix": "strategy",
**      "expected_error" (null where not available), "expected_leaf_variance",
**      "tables" (their epsilon_num, weight, attributes) and "cells" (the
**      exact table of a non-private model, or null): the MTRX / CELL
**      sections of sql/model-format.md.
**   3. describe() writes the "mechanism" of its strategy (private models),
**      and its structure: "noise", "layout", trees, depth, leaves and
**      "matrix" (bins, strategy, partition, expected leaf variance, every
**      strategy's expected error, the tables with their ε and attributes).
**   4. Model BLOB: PRIV mechanism 3 with the sensitivity of the noised
**      counters; the MTRX section follows FRST (classification, partition 0
**      or 1, no automatic depth).
*/
#include "kinds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "tree_layouts.h"

static int matrix_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  (void)in;
  return rdt_matrix_release(f, noise);
}

/* PRIV's sensitivity, that of the noised counters: of all leaves (trees, or
** 1 with partition) for the leaf strategy, of each table (1) otherwise. */
static uint32_t matrix_sensitivity(const rdt_forest *f) {
  return f->matrix->strategy != RDT_STRATEGY_LEAF || f->config.partition ? 1 : f->config.trees;
}

/* Classification, partition 0 or 1, no automatic depth. */
static int matrix_stored_parameters_ok(const rdt_config *c) {
  return !c->auto_depth && c->partition >= 0 && c->partition <= 1 && c->task == RDT_TASK_CLASSIFICATION;
}

/* "matrix": the rest of the MTRX / CELL sections (sql/model-format.md). */
static void matrix_export_layout(const rdt_forest *f, rdt_bytes *o) {
  const rdt_matrix *m = f->matrix;
  uint32_t slots = rdt_forest_slots(f);
  rdt_multiway_json_export(f, NULL, o);
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
  if (!rdt_multiway_json_import(r, root, f, &leaf_no, &n_slots)) return 0;
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

const rdt_forest_kind rdt_forest_kind_matrix = {
    .algorithm = RDT_ALGO_MATRIX,
    .name = "matrix",
    .option = "rdt",
    .noise = "matrix",
    .note = "rdt, matrix noise",
    .multiway = 1,
    .batch_prediction = 1,
    .structure = rdt_matrix_init,
    .mechanism = RDT_MECH_MATRIX,
    .sensitivity = matrix_sensitivity,
    .section = "MTRX",
    .stored_parameters_ok = matrix_stored_parameters_ok,
    .release = matrix_release,
    .neighbouring = "add/remove one row",
    .export_layout = matrix_export_layout,
    .import_layout = matrix_import_layout,
    .describe = matrix_describe,
};
