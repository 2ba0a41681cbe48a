/*
** rdt_kind.c - the RDT forest kind ("algorithm": "rdt"; forest_kind.h):
** complete binary random trees with discrete Laplace noise on every leaf
** counter.
**
** Contract:
**   1. release() is forest.h's mechanism (its privacy contract, items 1-6):
**      with automatic depth it first chooses the depth from a noisy row count
**      (rdt_forest_choose_depth, 1/RDT_AUTO_COUNT_SHARE of epsilon), then
**      adds the noise of scale trees/epsilon to every counter. Neighbours:
**      add or remove one row.
**   2. It reads its counters only (no buffered and no public rows), needs no
**      plan or build, and answers rdt_predict_batch from its non-private
**      models.
**   3. JSON: no members of its own; its binary trees are forest_json.c's.
**   4. Model BLOB: PRIV mechanism 1, sensitivity trees; FRST classification
**      only, automatic depth allowed.
**   5. describe() writes the "mechanism" of a private model, the binary
**      trees' size, and "splits" and "categorical".
*/
#include "kinds.h"

#include "tree_layouts.h"

static int rdt_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  (void)in;
  return (!f->config.auto_depth || rdt_forest_choose_depth(f, noise)) && rdt_forest_add_noise(f, noise);
}

/* PRIV's sensitivity: all counters together, 1 per tree. */
static uint32_t rdt_sensitivity(const rdt_forest *f) { return f->config.trees; }

/* Classification only; automatic depth is its own (its writer stores
** "partition" as 0, which the decoder has never checked). */
static int rdt_stored_parameters_ok(const rdt_config *c) { return c->task == RDT_TASK_CLASSIFICATION; }

static void rdt_describe(const rdt_forest *f, rdt_forest_info_part part, rdt_bytes *o, rdt_info_real real) {
  const rdt_config *c = &f->config;
  (void)real;
  switch (part) {
    case RDT_FOREST_INFO_MECHANISM:
      rdt_bytes_text(o, "\"mechanism\":\"discrete Laplace noise of scale trees/epsilon on every leaf class counter "
                        "(L1 sensitivity 1 per tree)\",");
      break;
    case RDT_FOREST_INFO_PARAMETERS: break;
    case RDT_FOREST_INFO_STRUCTURE: rdt_binary_info_structure(f, o); break;
    case RDT_FOREST_INFO_SPLITS:
      rdt_json_putf(o, "\"splits\":\"%s\",\"categorical\":\"%s\",", c->splits == RDT_SPLITS_GLOBAL ? "global" : "reachable",
                    c->categorical == RDT_CATEGORICAL_ONE_VS_REST ? "one_vs_rest" : "subset");
      break;
  }
}

const rdt_forest_kind rdt_forest_kind_rdt = {
    .algorithm = RDT_ALGO_RDT,
    .name = "rdt",
    .option = "rdt",
    .note = "rdt",
    .batch_prediction = 1,
    .auto_depth = 1,
    .structure = rdt_forest_draw_binary,
    .mechanism = RDT_MECH_LEAF_LAPLACE, /* discrete Laplace on every leaf counter */
    .sensitivity = rdt_sensitivity,
    .stored_parameters_ok = rdt_stored_parameters_ok,
    .release = rdt_release,
    .neighbouring = "add/remove one row",
    .describe = rdt_describe,
};
