/*
** registry.c - every learner behind the learner.h interface, in one table.
** Adding a learner: its own file, and one line here.
**
** The classic forests (forest_algorithms.c) are the table's whole-model
** learner (learner.h, contract 8): they have no learner id and are never
** found by name or id, so model decoding, "auto"'s candidates and
** options.c's learner lookup see exactly the learners they saw before; the
** caller reaches them through rdt_learner_for_forests().
*/
#include <string.h>

#include "../learner.h"
#include "auto.h"
#include "boost.h"
#include "constant.h"
#include "forest_algorithms.h"
#include "naive_bayes.h"
#include "private_tree.h"
#include "matrix_forest.h"
#include "random_trees.h"

static const rdt_learner *const learners[] = {
    &rdt_learner_constant,
    &rdt_learner_naive_bayes,
    &rdt_learner_boost,
    &rdt_learner_random_trees,
    &rdt_learner_auto,
    &rdt_learner_private_tree,
    &rdt_learner_matrix_forest,
    &rdt_learner_forest_algorithms,
    NULL,
};

const rdt_learner *rdt_learner_find(const char *name) {
  for (size_t i = 0; learners[i]; i++)
    if (!learners[i]->whole_model && strcmp(learners[i]->name, name) == 0) return learners[i];
  return NULL;
}

const rdt_learner *rdt_learner_at(size_t i) {
  for (size_t j = 0; learners[j]; j++)
    if (!learners[j]->whole_model && i-- == 0) return learners[j];
  return NULL;
}

const rdt_learner *rdt_learner_by_id(uint32_t id) {
  for (size_t i = 0; learners[i]; i++)
    if (!learners[i]->whole_model && learners[i]->id == id) return learners[i];
  return NULL;
}

const rdt_learner *rdt_learner_for_forests(void) {
  for (size_t i = 0; learners[i]; i++)
    if (learners[i]->whole_model) return learners[i];
  return NULL;
}
