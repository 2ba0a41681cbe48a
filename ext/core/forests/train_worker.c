/*
** train_worker.c - see train_worker.h for the contract.
**
** Why: a training pass costs SQLite's row decoding plus the tree walks, about
** the same time each; on two cores they overlap. One mutex and one condition
** variable guard a single slot ("job"): the caller waits for the slot to be
** empty before filling it, the thread waits for it to be full, so at most one
** buffer is being counted while the other is being filled.
*/
#include "train_worker.h"

#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>

/* Rows per hand-over: large enough that a hand-over (a few microseconds) is
** small next to counting the rows, small enough that both buffers stay in L2
** and that one buffer's walks (rows x trees x depth node visits) take a few
** milliseconds at most: the caller waits for a buffer before SQLite reads on
** and sees an interrupt, so a buffer of rows through large trees (hundreds of
** trees of depth 16, whose nodes miss the caches) must not take a second. */
#define WORKER_BUFFER_BYTES (256u * 1024u)
#define WORKER_BUFFER_VISITS ((uint64_t)1 << 20)

struct rdt_train_worker {
  rdt_forest *f;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  double *xs[2];
  uint32_t *cls[2];
  uint32_t cap, n_features;
  int fill;          /* the buffer the caller fills */
  int job;           /* the buffer the thread counts, or -1 */
  uint32_t job_rows;
  int stop;
  int abandon;       /* Contract 6: drop what is not counted yet */
};

/* Whether the caller abandoned the rows (read under the mutex: once per walk
** chunk, small next to the chunk's walks). */
static int abandoned(rdt_train_worker *w) {
  pthread_mutex_lock(&w->mu);
  int a = w->abandon;
  pthread_mutex_unlock(&w->mu);
  return a;
}

static void *worker_main(void *arg) {
  rdt_train_worker *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (w->job < 0 && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
    if (w->job < 0) break; /* stopped, nothing left */
    int b = w->job;
    uint32_t n = w->job_rows;
    pthread_mutex_unlock(&w->mu);
    for (uint32_t r0 = 0; r0 < n && !abandoned(w); r0 += RDT_TRAIN_CHUNK)
      rdt_forest_train_batch(w->f, w->xs[b] + (size_t)r0 * w->f->schema.n_features, w->cls[b] + r0,
                             n - r0 < RDT_TRAIN_CHUNK ? n - r0 : RDT_TRAIN_CHUNK);
    pthread_mutex_lock(&w->mu);
    w->job = -1;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static void free_buffers(rdt_train_worker *w) {
  for (int b = 0; b < 2; b++) {
    if (w->xs[b]) sodium_memzero(w->xs[b], (size_t)w->cap * w->n_features * sizeof *w->xs[b]);
    if (w->cls[b]) sodium_memzero(w->cls[b], (size_t)w->cap * sizeof *w->cls[b]);
    free(w->xs[b]);
    free(w->cls[b]);
  }
}

rdt_train_worker *rdt_train_worker_start(rdt_forest *f) {
  rdt_train_worker *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  uint32_t nf = f->schema.n_features ? f->schema.n_features : 1;
  size_t rows = WORKER_BUFFER_BYTES / ((size_t)nf * sizeof(double));
  uint64_t visits = (uint64_t)(f->config.trees ? f->config.trees : 1) * (f->config.depth ? f->config.depth : 1);
  if (rows > WORKER_BUFFER_VISITS / visits) rows = (size_t)(WORKER_BUFFER_VISITS / visits);
  /* A whole number of the forest's walk chunks, at least one. */
  rows = rows / RDT_TRAIN_CHUNK * RDT_TRAIN_CHUNK;
  w->cap = rows ? (uint32_t)rows : RDT_TRAIN_CHUNK;
  w->n_features = nf;
  w->f = f;
  w->job = -1;
  int ok = 1;
  for (int b = 0; b < 2 && ok; b++) {
    w->xs[b] = malloc((size_t)w->cap * nf * sizeof *w->xs[b]);
    w->cls[b] = malloc((size_t)w->cap * sizeof *w->cls[b]);
    ok = w->xs[b] && w->cls[b];
  }
  if (ok && pthread_mutex_init(&w->mu, NULL) != 0) ok = 0;
  else if (ok && pthread_cond_init(&w->cv, NULL) != 0) {
    pthread_mutex_destroy(&w->mu);
    ok = 0;
  } else if (ok && pthread_create(&w->thread, NULL, worker_main, w) != 0) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    ok = 0;
  }
  if (!ok) {
    free_buffers(w);
    free(w);
    return NULL;
  }
  return w;
}

double *rdt_train_worker_rows(rdt_train_worker *w) { return w->xs[w->fill]; }

uint32_t *rdt_train_worker_classes(rdt_train_worker *w) { return w->cls[w->fill]; }

uint32_t rdt_train_worker_capacity(const rdt_train_worker *w) { return w->cap; }

void rdt_train_worker_submit(rdt_train_worker *w, uint32_t n) {
  pthread_mutex_lock(&w->mu);
  while (w->job >= 0) pthread_cond_wait(&w->cv, &w->mu); /* the other buffer is free */
  w->job = w->fill;
  w->job_rows = n;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  w->fill ^= 1;
}

void rdt_train_worker_abandon(rdt_train_worker *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->abandon = 1;
  pthread_mutex_unlock(&w->mu);
}

void rdt_train_worker_free(rdt_train_worker *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  while (w->job >= 0) pthread_cond_wait(&w->cv, &w->mu);
  w->stop = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free_buffers(w);
  free(w);
}
