/*
** forest_learner.h - what every learner that holds a random forest
** (forest.h) as its state shares: taking rows, merging, the nested model
** BLOB, prediction and wiping. A shared piece under the learners (random
** trees, matrix forests), so that neither depends on the other.
**
** Contract:
**   1. rdt_forest_learner_new() builds the forest from a copy of the schema
**      and a complete config (the caller's public choices); it reads no row.
**   2. The encoded payload is the forest's own model BLOB (model.c; into an
**      empty rdt_bytes, the encoder's own buffer, not a copy); decode
**      accepts exactly what the encoder writes (one encoding per model) and
**      only a classification forest of the expected algorithm.
**   3. predict() is post-processing of the released counts; out of memory
**      it predicts uniformly (no row is involved).
**   4. free() wipes every counter (exact or released) before freeing.
**   5. merge() and counters() are the forest's (forest.h item 5): states of
**      one digest add; a released forest has none.
*/
#ifndef RDT_FOREST_LEARNER_H
#define RDT_FOREST_LEARNER_H

#include "forest.h"
#include "../learner.h"

/* The configuration every forest learner starts from: `algorithm`, the
** common facts (privacy, ε, seed), classification, the threshold vote and
** the forests' other defaults; one thread (the learner is fed row by row).
** `trees` is read from opts ("trees": an integer 1 .. max_trees, absent:
** 0); returns 0 with err on a bad value. The caller wipes the config (it
** holds the seed key). */
int rdt_forest_learner_config(rdt_config *config, rdt_algorithm algorithm, const rdt_json *opts, uint32_t max_trees,
                              const rdt_learn_common *c, char *err, size_t en);
/* A forest for `config`, or NULL with err (empty err: out of memory). */
rdt_forest *rdt_forest_learner_new(const rdt_schema *s, const rdt_config *config, char *err, size_t en);
/* finish(): the forest kind's release (forest_kind.h; RDT: the depth from
** the noisy count, then the leaf noise; matrix: the tables), then the walk's
** preparation; on failure every counter is wiped and nothing released. */
int rdt_forest_learner_finish(void *st, rdt_rng *noise);
void rdt_forest_learner_row(void *st, const double *x, uint32_t cls, double target);
int rdt_forest_learner_merge(void *into, const void *from);
/* learner.h's counters(): the forest's state and digest (forest.h item 5). */
uint32_t rdt_forest_learner_counters(void *st, rdt_span *out, uint32_t max, unsigned char digest[32]);
void rdt_forest_learner_encode(const void *st, rdt_bytes *out);
void *rdt_forest_learner_decode(rdt_reader *in, rdt_algorithm algorithm);
void rdt_forest_learner_predict(const void *st, const double *x, double *out);
void rdt_forest_learner_free(void *st);

#endif
