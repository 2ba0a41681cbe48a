/*
** random_trees.c - the default RDT forest (forest.h) behind the learner
** interface, so that "auto" can hold it as a candidate; its model is the
** forest's own BLOB (model.c), nested in the learner payload.
**
** Privacy contract: forest.h's. Neighbours: add or remove one row. With
** "epsilon" given, the trees are grown to RDT_AUTO_MAX_DEPTH and cut back
** after the pass to the depth a noisy row count calls for (ε/20, sensitivity
** 1); the leaves get discrete Laplace of scale trees/(19ε/20). Without it
** (non-private) the depth is RDT_NONPRIVATE_DEFAULT_DEPTH. The structure is
** drawn from the schema and a structure key only.
** Options: "trees" (1 .. 64, default 10).
*/
#include "random_trees.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../forests/forest_learner.h"

static void *rt_start(const rdt_json *opts, const rdt_schema *s, const rdt_learn_common *c, char *err, size_t en) {
  rdt_config config;
  if (!rdt_forest_learner_config(&config, RDT_ALGO_RDT, opts, 64, c, err, en)) return NULL;
  if (!config.trees) config.trees = RDT_DEFAULT_TREES;
  if (c->is_private) {
    config.auto_depth = 1;
    config.depth = RDT_AUTO_MAX_DEPTH;
    config.eps_count.num = c->eps.num / RDT_AUTO_COUNT_SHARE;
    if (config.eps_count.num == 0) config.eps_count.num = 1;
    if (config.eps_count.num >= config.eps.num) {
      snprintf(err, en, "\"epsilon\" is too small to pay for the noisy row count");
      sodium_memzero(&config, sizeof config);
      return NULL;
    }
  } else {
    config.depth = RDT_NONPRIVATE_DEFAULT_DEPTH;
  }
  if (rdt_forest_counters(&config, rdt_config_slots(&config, s->n_classes)) == 0) {
    snprintf(err, en, "too many classes for random trees (%u trees x 2^%u leaves x %u classes)", config.trees,
             config.depth, s->n_classes);
    sodium_memzero(&config, sizeof config);
    return NULL;
  }
  rdt_forest *f = rdt_forest_learner_new(s, &config, err, en);
  sodium_memzero(&config, sizeof config); /* the seed key */
  return f;
}

static void *rt_decode(rdt_reader *in, const rdt_schema *s, const rdt_learn_common *c) {
  (void)s;
  (void)c;
  return rdt_forest_learner_decode(in, RDT_ALGO_RDT);
}

static void rt_describe(const void *st, rdt_bytes *json) {
  const rdt_forest *f = st;
  char buf[400];
  snprintf(buf, sizeof buf,
           "\"mechanism\":\"random decision trees: discrete Laplace noise of scale trees/epsilon_leaves on every "
           "leaf class counter (L1 sensitivity 1 per tree)%s\",\"trees\":%u,\"depth\":%u,",
           f->config.auto_depth ? "; depth cut back from a noisy row count" : "", f->config.trees, f->config.depth);
  rdt_bytes_text(json, buf);
}

static const char *const rt_options[] = {"trees", NULL};

const rdt_learner rdt_learner_random_trees = {
    .name = "random_trees",
    .id = 4,
    .tasks = RDT_LEARN_CLASSIFICATION,
    .options = rt_options,
    .start = rt_start,
    .row = rdt_forest_learner_row,
    .merge = rdt_forest_learner_merge,
    .counters = rdt_forest_learner_counters,
    .finish = rdt_forest_learner_finish,
    .encode = rdt_forest_learner_encode,
    .decode = rt_decode,
    .predict = rdt_forest_learner_predict,
    .describe = rt_describe,
    .free = rdt_forest_learner_free,
};
