/*
** sql_scoring.c - one decoded model of any kind (a forest: rdt, matrix,
** rdt#, diprime; or a learner model) scored on one row of cleaned features,
** for the functions that need every kind behind one call (rdt_evaluate,
** rdt_importance, rdt_proba, the by-name predictions).
**
** Contract:
**   1. Post-processing of a released model only: no rows of the training
**      data, no privacy budget, no error.
**   2. The same rules as rdt_predict and rdt_predict_proba (sql_predict.c):
**      a forest's class is its vote rule's (a probabilistic vote draws from
**      `coin`), a learner's class the first most probable one; probabilities
**      are rdt_predict_proba's.
**   3. xs holds n_features cleaned values (rdt_sql_features); scratch holds
**      rdt_score_scratch(h) doubles, and the probabilities land in its first
**      n_classes.
**   4. The label column's name is the one the model records (its "label"
**      option at training, format 1.2), else "label".
*/
#include "rdt_sql.h"

const rdt_schema *rdt_score_schema(const rdt_model_handle *h) {
  return h->is_learned ? &h->learned.schema : &h->forest.schema;
}

const char *rdt_score_label(const rdt_model_handle *h) {
  const char *l = h->is_learned ? h->learned.label : h->forest.config.label;
  return rdt_model_has_label(l) ? l : "label";
}

int rdt_score_is_regression(const rdt_model_handle *h) {
  return h->is_learned ? h->learned.common.regression : h->forest.config.task == RDT_TASK_REGRESSION;
}

size_t rdt_score_scratch(const rdt_model_handle *h) {
  /* rdt_forest_proba's 2 * C, and one value for a regression learner. */
  return 2 * (size_t)rdt_score_schema(h)->n_classes + 1;
}

void rdt_score_proba(const rdt_model_handle *h, const double *xs, double *scratch) {
  if (h->is_learned) h->learned.learner->predict(h->learned.state, xs, scratch);
  else rdt_forest_proba(&h->forest, xs, scratch);
}

uint32_t rdt_score_class(const rdt_model_handle *h, const double *xs, double *scratch, rdt_rng *coin) {
  if (!h->is_learned) return rdt_forest_predict(&h->forest, xs, scratch, coin);
  h->learned.learner->predict(h->learned.state, xs, scratch);
  uint32_t best = 0; /* ties: the first class listed, as rdt_predict */
  for (uint32_t c = 1; c < h->learned.schema.n_classes; c++)
    if (scratch[c] > scratch[best]) best = c;
  return best;
}

double rdt_score_value(const rdt_model_handle *h, const double *xs, double *scratch) {
  if (!h->is_learned) return rdt_forest_regress(&h->forest, xs);
  h->learned.learner->predict(h->learned.state, xs, scratch);
  return scratch[0];
}
