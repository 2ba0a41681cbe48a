/*
** train_worker.h - a second thread that walks buffered rows through the trees
** while the caller (SQLite's xStep) reads the next rows.
**
** Contract:
**   1. Counting is exact integer addition in the order of hand-over, so the
**      counters, and the model, are the same with or without a worker; only the
**      time differs. Nothing here draws randomness or touches the noise.
**   2. The forest is lent to the worker from rdt_train_worker_start to
**      rdt_train_worker_free: in between the caller must not read or write its
**      counters (it may read the schema and the configuration, which nobody writes).
**   3. The worker owns two row buffers. The caller fills one while the thread
**      counts the other; rdt_train_worker_submit hands the full one over and
**      waits, if need be, until the thread has finished with the other.
**   4. The buffers hold private rows: rdt_train_worker_free wipes them.
**   5. No error is data-dependent: start fails (returns NULL) only for want of
**      memory or of a thread, before any row is handed over, and the caller then
**      counts the rows itself.
**   6. rdt_train_worker_abandon is for a training that will release nothing
**      (it was interrupted): the thread stops within one walk chunk
**      (RDT_TRAIN_CHUNK rows) and the rows not yet counted are dropped, so
**      an interrupt does not wait for a full buffer of large trees.
*/
#ifndef RDT_TRAIN_WORKER_H
#define RDT_TRAIN_WORKER_H

#include <stdint.h>

#include "forest.h"

typedef struct rdt_train_worker rdt_train_worker;

/* Starts the thread for f (RDT, matrix and RDT# forests: the ones counted by
** rdt_forest_train_batch). NULL when memory or a thread cannot be had. */
rdt_train_worker *rdt_train_worker_start(rdt_forest *f);

/* The buffer to fill next: room for rdt_train_worker_capacity() rows of
** f->schema.n_features cleaned features, and as many class indexes. */
double *rdt_train_worker_rows(rdt_train_worker *w);
uint32_t *rdt_train_worker_classes(rdt_train_worker *w);
uint32_t rdt_train_worker_capacity(const rdt_train_worker *w);

/* Hands the first n rows of the current buffer to the thread; the other
** buffer becomes current once the thread is done with it. */
void rdt_train_worker_submit(rdt_train_worker *w, uint32_t n);

/* Drops the rows not yet counted (Contract 6); later submits are dropped too.
** NULL is a no-op. */
void rdt_train_worker_abandon(rdt_train_worker *w);

/* Waits until every handed-over row is counted, stops and joins the thread,
** wipes and frees the buffers. Rows left in the current buffer and not
** submitted are not counted. NULL is a no-op. */
void rdt_train_worker_free(rdt_train_worker *w);

#endif
