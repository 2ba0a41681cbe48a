/*
** diprime_kind.c - the DiPriMe forest kind ("algorithm": "diprime";
** forest_kind.h): binary trees grown on private medians, classification and
** regression.
**
** Contract:
**   1. check() refuses a budget whose per-query shares round to 0, and under
**      a privacy unit states the ε a release spends exactly (diprime.h's
**      accounting: eps_query, eps_leaf).
**   2. It buffers its rows (a uniform sample of at most max_rows); release()
**      grows and releases the trees from them (rdt_diprime_train, diprime.h's
**      privacy contract). Neighbours: add or remove one row. One tree
**      accounts for ε (partition) or ε / trees.
**   3. JSON: "epsilon_query_num" and "epsilon_leaf_num" after "epsilon_den"
**      in "privacy"; its binary trees are forest_json.c's.
**   4. describe() writes the "mechanism" with "epsilon_per_query" and
**      "epsilon_leaves" of a private model, "rho", "candidates" and
**      "partition", and the binary trees' size.
**   5. Model BLOB: PRIV mechanism 2 with sensitivity 0 (its budget is split
**      per level and node) and the two sub-budgets; FRST rho, candidates,
**      partition, classification or regression, no automatic depth.
*/
#include "kinds.h"

#include <stdio.h>

#include "diprime.h"
#include "tree_layouts.h"

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

/* Its own FRST parameters: rho in (0, 1), candidates, partition 0 or 1; no
** automatic depth (its trees grow from the rows). */
static int diprime_stored_parameters_ok(const rdt_config *c) {
  return !c->auto_depth && c->rho > 0 && c->rho < 1 && c->candidates >= 1 && c->partition >= 0 && c->partition <= 1;
}

static int diprime_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  return rdt_diprime_train(f, in->rows_x, in->rows_c, in->rows_y, in->n_rows, noise);
}

/* With "partition" each tree sees its own rows (ε each), else ε / trees. */
static double diprime_tree_epsilon(const rdt_config *c) {
  return c->partition ? rdt_eps_to_double(c->eps) : rdt_eps_to_double(c->eps) / c->trees;
}

/* The two sub-budgets its queries and leaves spend. */
static void diprime_export_privacy(const rdt_forest *f, rdt_bytes *out) {
  rdt_json_putf(out, ",\"epsilon_query_num\":%llu,\"epsilon_leaf_num\":%llu", (unsigned long long)f->config.eps_query.num,
                (unsigned long long)f->config.eps_leaf.num);
}

static int diprime_import_privacy(rdt_json_reader *r, const rdt_json *priv, rdt_config *c) {
  return rdt_json_member_uint(r, priv, "epsilon_query_num", UINT64_MAX >> 1, &c->eps_query.num) &&
         rdt_json_member_uint(r, priv, "epsilon_leaf_num", UINT64_MAX >> 1, &c->eps_leaf.num);
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
    case RDT_FOREST_INFO_STRUCTURE: rdt_binary_info_structure(f, o); break;
    case RDT_FOREST_INFO_SPLITS: break;
  }
}

const rdt_forest_kind rdt_forest_kind_diprime = {
    .algorithm = RDT_ALGO_DIPRIME,
    .name = "diprime",
    .option = "diprime",
    .note = "diprime",
    .buffers_rows = 1,
    .structure = rdt_forest_alloc_binary,
    .check = diprime_check,
    .mechanism = RDT_MECH_DIPRIME, /* PRIV sensitivity 0: its budget is split per level and node (diprime.h) */
    .stored_parameters_ok = diprime_stored_parameters_ok,
    .release = diprime_release,
    .tree_epsilon = diprime_tree_epsilon,
    .neighbouring = "add/remove one row",
    .export_privacy = diprime_export_privacy,
    .import_privacy = diprime_import_privacy,
    .describe = diprime_describe,
};
