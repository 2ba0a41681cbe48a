/*
** forest_learner.c - the parts of a forest-holding learner that random
** trees and matrix forests share (forest_learner.h).
*/
#include "forest_learner.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest_kind.h"
#include "../model.h"

int rdt_forest_learner_config(rdt_config *config, rdt_algorithm algorithm, const rdt_json *opts, uint32_t max_trees,
                              const rdt_learn_common *c, char *err, size_t en) {
  const rdt_json *t = opts ? rdt_json_get(opts, "trees") : NULL;
  memset(config, 0, sizeof *config);
  if (en) err[0] = 0;
  if (t && (t->type != RDT_JSON_NUMBER || !t->is_integer || t->integer < 1 || t->integer > max_trees)) {
    snprintf(err, en, "\"trees\" must be an integer from 1 to %u", max_trees);
    return 0;
  }
  config->algorithm = algorithm;
  config->task = RDT_TASK_CLASSIFICATION;
  config->is_private = c->is_private;
  config->eps = c->eps;
  config->trees = t ? (uint32_t)t->integer : 0;
  config->vote = RDT_VOTE_THRESHOLD;
  config->splits = RDT_SPLITS_REACHABLE;
  config->categorical = RDT_CATEGORICAL_SUBSET;
  config->keep_trees = 1;
  config->threads = 1;
  config->seeded = c->seeded;
  memcpy(config->seed_key, c->seed_key, sizeof config->seed_key);
  config->keyed = c->keyed;
  memcpy(config->structure_key, c->structure_key, sizeof config->structure_key);
  return 1;
}

rdt_forest *rdt_forest_learner_new(const rdt_schema *s, const rdt_config *config, char *err, size_t en) {
  rdt_schema copy;
  rdt_forest *f = calloc(1, sizeof *f);
  if (en) err[0] = 0;
  if (!f || !rdt_schema_copy(&copy, s)) {
    free(f);
    return NULL;
  }
  if (!rdt_forest_init(f, &copy, config)) { /* the forest owns the copy from here */
    if (f->error[0]) snprintf(err, en, "%s", f->error);
    rdt_forest_free(f);
    free(f);
    return NULL;
  }
  return f;
}

void rdt_forest_learner_row(void *st, const double *x, uint32_t cls, double target) {
  (void)target;
  rdt_forest_train_row(st, x, cls);
}

int rdt_forest_learner_finish(void *st, rdt_rng *noise) {
  rdt_forest *f = st;
  rdt_forest_input none;
  memset(&none, 0, sizeof none); /* these kinds count their rows; no buffer, no public rows */
  int ok = rdt_forest_kind_of(f->config.algorithm)->release(f, &none, noise) && rdt_forest_prepare(f);
  if (!ok) rdt_forest_wipe_counters(f); /* nothing exact may remain, released or not */
  return ok;
}

int rdt_forest_learner_merge(void *into, const void *from) { return rdt_forest_merge(into, from); }

uint32_t rdt_forest_learner_counters(void *st, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  rdt_forest *f = st;
  if (f->theta) return 0; /* prepared: released */
  rdt_forest_digest(f, digest);
  return rdt_forest_state(f, out, max);
}

void rdt_forest_learner_encode(const void *st, rdt_bytes *out) {
  size_t n = 0;
  unsigned char *blob = rdt_model_encode(st, &n);
  if (!blob) {
    out->oom = 1;
    return;
  }
  if (!out->p && !out->oom) { /* an empty buffer takes the BLOB itself: a model may be as large as SQLite allows */
    out->p = blob;
    out->n = out->cap = n;
    return;
  }
  rdt_bytes_put(out, blob, n);
  free(blob);
}

void *rdt_forest_learner_decode(rdt_reader *in, rdt_algorithm algorithm) {
  rdt_forest *f = calloc(1, sizeof *f);
  char err[64];
  if (!f) return NULL;
  if (!rdt_model_decode(in->p + in->pos, in->n - in->pos, f, err, sizeof err)) {
    free(f);
    in->bad = 1;
    return NULL;
  }
  /* One encoding per model: a nested forest must be exactly what the encoder writes. */
  size_t n = 0;
  unsigned char *again = rdt_model_encode(f, &n);
  int same = again && n == in->n - in->pos && memcmp(again, in->p + in->pos, n) == 0;
  free(again);
  if (!same || f->config.algorithm != algorithm || f->config.task != RDT_TASK_CLASSIFICATION) {
    rdt_forest_learner_free(f);
    in->bad = 1;
    return NULL;
  }
  in->pos = in->n;
  return f;
}

/* rdt_forest_proba needs 2 K doubles (the second half is scratch); the
** interface gives K. */
void rdt_forest_learner_predict(const void *st, const double *x, double *out) {
  const rdt_forest *f = st;
  uint32_t C = f->schema.n_classes;
  double stack[256], *p = 2 * (size_t)C <= 256 ? stack : malloc(2 * (size_t)C * sizeof *p);
  if (!p) {
    for (uint32_t c = 0; c < C; c++) out[c] = 1.0 / C;
    return;
  }
  rdt_forest_proba(f, x, p);
  memcpy(out, p, C * sizeof *out);
  if (p != stack) free(p);
}

void rdt_forest_learner_free(void *st) {
  rdt_forest *f = st;
  if (!f) return;
  rdt_forest_wipe_counters(f);
  rdt_forest_free(f);
  free(f);
}
