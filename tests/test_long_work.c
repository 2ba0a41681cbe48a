/*
** test_long_work.c - long work is visible and stoppable, and categorical
** features walk at a numeric feature's speed without changing a counter.
** Linked with the core and the SQL binding built with -DSQLITE_CORE (rdt
** registered by sqlite3_rdt_init, no extension loading) and the system SQLite.
**
**   1. cancel.h: NULL never stops, questions every RDT_CANCEL_UNITS units, a
**      stop is latched; drawing the trees, the noise and the encoding stop at
**      a question; a cancel that never stops changes no byte of the model;
**      the questions asked depend on the configuration, not on the rows; an
**      abandoned training worker counts nothing more.
**   2. The mixed walk (RDT_WALK_MIXED) counts exactly what the node-by-node
**      walk counts, for subset and one-code splits, codes up to 63, `other`,
**      and numeric values anywhere in their bounds; 64 codes fall back.
**   3. Through SQL: the progress handler advances during the C work; a
**      handler returning 1 and sqlite3_interrupt() from a second thread stop
**      training with SQLITE_INTERRUPT ("interrupted"), nothing released, at
**      the next question (no handler call after the request), during the
**      noise and during the encoding; an interrupted rdt_fit keeps its charge;
**      a learner is stopped at its questions; the options argument is read on
**      the first row only, and the scalar-subquery idiom reads a file once.
** No check depends on time: "at once" is counted in questions and handler calls.
*/
#include <math.h>
#include <pthread.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tests/check.h"
#include "core/forests/forest.h"
#include "core/forests/diprime.h"
#include "core/model.h"
#include "core/options.h"
#include "core/forests/train_worker.h"
#include "rdt.h"

/* ---- 1. the core's questions ------------------------------------------- */

typedef struct {
  uint64_t stop_at; /* answer 1 at this question (1-based); 0: never */
  uint64_t asked;
} stopper;

static int stop_answer(void *arg) {
  stopper *s = arg;
  s->asked++;
  return s->stop_at && s->asked >= s->stop_at;
}

static void cancel_with(rdt_cancel *c, stopper *s, uint64_t stop_at) {
  memset(c, 0, sizeof *c);
  memset(s, 0, sizeof *s);
  s->stop_at = stop_at;
  c->stop = stop_answer;
  c->arg = s;
}

/* A forest from options, with cancel (may be NULL) set before its trees are drawn. */
static int forest_with(rdt_forest *f, const char *json, rdt_cancel *cancel) {
  rdt_schema s;
  rdt_config c;
  char err[512];
  if (!rdt_options_parse(json, strlen(json), &s, &c, err, sizeof err)) {
    printf("# %s\n", err);
    return 0;
  }
  c.cancel = cancel;
  if (c.algorithm == RDT_ALGO_DIPRIME && !rdt_diprime_budget(&c, s.n_features)) { /* as the trainer does */
    rdt_schema_free(&s);
    return 0;
  }
  return rdt_forest_init(f, &s, &c);
}

static const char *BIG = "{\"epsilon\":1,\"trees\":8,\"depth\":12,\"seed\":5,\"classes\":[0,1],\"features\":["
                         "{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1},"
                         "{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\",\"c\"]}]}";

/* Questions asked over a whole training of BIG (structure, rows, noise,
** encoding) with `rows` rows; the model in *blob (NULL when cancel == NULL
** is not wanted). */
static uint64_t questions_for(uint32_t rows, unsigned char **blob, size_t *size) {
  rdt_cancel c;
  stopper s;
  cancel_with(&c, &s, 0);
  rdt_forest f;
  if (!forest_with(&f, BIG, &c)) return 0;
  rdt_rng rng;
  seeded(&rng, "long-work rows");
  for (uint32_t i = 0; i < rows; i++) {
    double xs[2] = {rdt_rng_unit(&rng), (double)rdt_rng_below(&rng, 4)};
    rdt_forest_train_row(&f, xs, xs[0] > 0.5);
  }
  rdt_rng_clear(&rng);
  seeded(&rng, "long-work noise");
  int ok = rdt_forest_add_noise(&f, &rng);
  rdt_rng_clear(&rng);
  unsigned char *b = ok ? rdt_model_encode(&f, size) : NULL;
  if (blob) *blob = b;
  else free(b);
  rdt_forest_free(&f);
  return ok && b ? s.asked : 0;
}

static void test_cancel_core(void) {
  rdt_cancel c;
  stopper s;
  check(!rdt_cancel_poll(NULL, 1000000) && !rdt_cancel_stopped(NULL), "cancel: NULL never stops");
  cancel_with(&c, &s, 3);
  int first = rdt_cancel_poll(&c, 1); /* the first poll asks */
  uint64_t after_first = s.asked;
  for (uint32_t i = 0; i < RDT_CANCEL_UNITS - 1; i++) rdt_cancel_poll(&c, 1);
  uint64_t before_due = s.asked;
  rdt_cancel_poll(&c, 1);
  check(!first && after_first == 1 && before_due == 1 && s.asked == 2,
        "cancel: asks at the first poll, then once per RDT_CANCEL_UNITS units");
  int stopped = rdt_cancel_poll(&c, RDT_CANCEL_UNITS);
  int latched = rdt_cancel_poll(&c, 1) && rdt_cancel_poll(&c, RDT_CANCEL_UNITS) && rdt_cancel_stopped(&c);
  check(stopped && latched && s.asked == 3, "cancel: a stop is latched without asking again");

  /* Drawing the trees stops at the first question. */
  rdt_forest f;
  cancel_with(&c, &s, 1);
  int built = forest_with(&f, BIG, &c);
  check(!built && s.asked == 1 && strstr(f.error, "interrupted") != NULL,
        "cancel: drawing the trees stops at a question, with an error that says so");
  rdt_forest_free(&f);

  /* The noise stops half-way: 0, and the caller releases nothing. */
  cancel_with(&c, &s, 0);
  built = forest_with(&f, BIG, &c);
  uint64_t structure = s.asked;
  uint64_t counters = (uint64_t)f.config.trees * f.n_leaves * 2;
  s.stop_at = structure + counters / RDT_CANCEL_UNITS / 2;
  rdt_rng rng;
  seeded(&rng, "long-work noise");
  int noised = built && rdt_forest_add_noise(&f, &rng);
  check(built && !noised && s.asked == s.stop_at && rdt_cancel_stopped(&c),
        "cancel: the noise stops at a question and reports failure");
  /* Encoding a stopped forest gives nothing. */
  size_t size = 0;
  unsigned char *blob = built ? rdt_model_encode(&f, &size) : NULL;
  check(built && blob == NULL, "cancel: a stopped forest is not encoded");
  rdt_rng_clear(&rng);
  if (built) rdt_forest_free(&f);

  /* Encoding stops at a question of its own (after a noise that finished). */
  uint64_t total = questions_for(300, NULL, &size);
  cancel_with(&c, &s, 0);
  built = forest_with(&f, BIG, &c);
  seeded(&rng, "long-work noise");
  noised = built && rdt_forest_add_noise(&f, &rng);
  rdt_rng_clear(&rng);
  uint64_t before_encoding = s.asked;
  s.stop_at = before_encoding + 2;
  blob = noised ? rdt_model_encode(&f, &size) : NULL;
  check(noised && total > before_encoding + 2 && blob == NULL && s.asked == before_encoding + 2,
        "cancel: encoding stops at a question and returns NULL");
  if (built) rdt_forest_free(&f);

  /* Asking changes nothing: the same seeded model with and without a cancel. */
  unsigned char *asked_blob = NULL, *plain = NULL;
  size_t asked_size = 0, plain_size = 0;
  questions_for(300, &asked_blob, &asked_size);
  if (forest_with(&f, BIG, NULL)) {
    seeded(&rng, "long-work rows");
    for (uint32_t i = 0; i < 300; i++) {
      double xs[2] = {rdt_rng_unit(&rng), (double)rdt_rng_below(&rng, 4)};
      rdt_forest_train_row(&f, xs, xs[0] > 0.5);
    }
    rdt_rng_clear(&rng);
    seeded(&rng, "long-work noise");
    if (rdt_forest_add_noise(&f, &rng)) plain = rdt_model_encode(&f, &plain_size);
    rdt_rng_clear(&rng);
    rdt_forest_free(&f);
  }
  check(asked_blob && plain && asked_size == plain_size && memcmp(asked_blob, plain, plain_size) == 0,
        "cancel: a cancel that never stops leaves the model byte for byte the same");
  free(asked_blob);
  free(plain);

  /* Contract 2: where the questions fall depends on the configuration only. */
  uint64_t q0 = questions_for(0, NULL, &size), q1 = questions_for(1, NULL, &size),
           q2 = questions_for(5000, NULL, &size);
  check(q0 > 0 && q0 == q1 && q1 == q2 && q2 == total,
        "cancel: the same questions for 0, 1, 300 and 5000 rows (they depend on the configuration only)");

  /* DiPriMe grows from the rows: its questions still do not depend on them. */
  const char *dip = "{\"algorithm\":\"diprime\",\"epsilon\":1,\"trees\":4,\"depth\":6,\"seed\":2,\"classes\":[0,1],"
                    "\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1},"
                    "{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\",\"c\"]}]}";
  uint64_t dq[2] = {0, 0};
  uint32_t dn[2] = {10, 2000};
  for (int k = 0; k < 2; k++) {
    cancel_with(&c, &s, 0);
    if (!forest_with(&f, dip, &c)) continue;
    double *xs = malloc(2 * sizeof *xs * dn[k]);
    uint32_t *cls = malloc(sizeof *cls * dn[k]);
    seeded(&rng, "long-work diprime rows");
    for (uint32_t i = 0; xs && cls && i < dn[k]; i++) {
      xs[2 * i] = rdt_rng_unit(&rng);
      xs[2 * i + 1] = (double)rdt_rng_below(&rng, 4);
      cls[i] = xs[2 * i] > 0.3;
    }
    if (xs && cls && rdt_diprime_train(&f, xs, cls, NULL, dn[k], &rng)) dq[k] = s.asked;
    rdt_rng_clear(&rng);
    free(xs);
    free(cls);
    rdt_forest_free(&f);
  }
  check(dq[0] > 0 && dq[0] == dq[1], "cancel: DiPriMe asks the same questions for 10 and 2000 rows");
}

/* An abandoned worker counts nothing more (train_worker.h, Contract 6); its
** buffer is sized so that one hand-over stays a few milliseconds of walks. */
static void test_worker_abandon(void) {
  rdt_forest f, g;
  int ok_f = forest_with(&f, BIG, NULL), ok_g = forest_with(&g, BIG, NULL);
  rdt_train_worker *w = ok_f ? rdt_train_worker_start(&f) : NULL;
  rdt_train_worker *v = ok_g ? rdt_train_worker_start(&g) : NULL;
  check(w && v && rdt_train_worker_capacity(w) == 10752,
        "worker: a buffer holds at most 2^20 node visits in whole walk chunks (8 trees of depth 12: 10,752 rows)");
  if (!w || !v) {
    rdt_train_worker_free(w);
    rdt_train_worker_free(v);
    if (ok_f) rdt_forest_free(&f);
    if (ok_g) rdt_forest_free(&g);
    return;
  }
  uint32_t cap = rdt_train_worker_capacity(w);
  rdt_train_worker *both[2] = {w, v};
  for (int k = 0; k < 2; k++) {
    if (k == 0) rdt_train_worker_abandon(w); /* before the rows: none may be counted */
    for (int round = 0; round < 3; round++) {
      for (uint32_t i = 0; i < cap; i++) {
        double *x = rdt_train_worker_rows(both[k]) + (size_t)i * 2;
        x[0] = (i % 97) / 97.0;
        x[1] = (double)(i % 4);
        rdt_train_worker_classes(both[k])[i] = i % 2;
      }
      rdt_train_worker_submit(both[k], cap);
    }
  }
  rdt_train_worker_abandon(NULL);
  rdt_train_worker_free(w);
  rdt_train_worker_free(v);
  int64_t counted_f = 0, counted_g = 0;
  for (size_t i = 0; i < (size_t)f.config.trees * f.n_leaves * 2; i++) {
    counted_f += f.counts[i];
    counted_g += g.counts[i];
  }
  check(counted_f == 0 && counted_g == (int64_t)3 * cap * f.config.trees,
        "worker: abandoned, it counts no row handed over after; not abandoned, every row in every tree");
  rdt_forest_free(&f);
  rdt_forest_free(&g);
}

/* ---- 2. the mixed walk ---------------------------------------------------- */

/* The leaf of xs in tree t, node by node from f->nodes (the reference). */
static uint32_t reference_leaf(const rdt_forest *f, uint32_t t, const double *xs) {
  uint32_t idx = 0;
  for (uint32_t d = 0; d < f->config.depth; d++) {
    const rdt_node *n = &f->nodes[(size_t)t * f->n_internal + idx];
    double x = xs[n->feature];
    uint32_t left = n->kind == RDT_SPLIT_NUMERIC           ? x < n->value
                    : n->kind == RDT_SPLIT_CATEGORY_EQ     ? x == n->value
                    : n->kind == RDT_SPLIT_CATEGORY_SUBSET ? rdt_subset_member(rdt_value_to_mask(n->value), (uint32_t)x)
                                                           : 1;
    idx = 2 * idx + 2 - left;
  }
  return idx - f->n_internal;
}

/* Options with numeric x in [lo, hi] and categorical c with n values. */
static char *walk_options(const char *extra, double lo, double hi, uint32_t n) {
  size_t cap = 512 + 8 * (size_t)n;
  char *s = malloc(cap);
  if (!s) return NULL;
  int k = snprintf(s, cap, "{\"epsilon\":null,\"trees\":12,\"depth\":9,\"seed\":3,%s\"classes\":[0,1,2],\"features\":["
                   "{\"name\":\"x\",\"type\":\"numeric\",\"min\":%.17g,\"max\":%.17g},"
                   "{\"name\":\"c\",\"type\":\"categorical\",\"values\":[", extra, lo, hi);
  for (uint32_t v = 0; v < n; v++) k += snprintf(s + k, cap - (size_t)k, "%s%u", v ? "," : "", v);
  snprintf(s + k, cap - (size_t)k, "]},{\"name\":\"y\",\"type\":\"numeric\",\"min\":-3,\"max\":-1}]}");
  return s;
}

/* Trains 2000 rows through rdt_forest_train_batch (the column walk, the
** row walk for the tail) and compares every counter with the reference. */
static int walk_matches(const char *extra, double lo, double hi, uint32_t n, int *mode) {
  char *json = walk_options(extra, lo, hi, n);
  rdt_forest f;
  int ok = json && forest_with(&f, json, NULL);
  free(json);
  if (!ok) return 0;
  *mode = f.walk_mode;
  uint32_t C = 3, rows = 2000;
  int64_t *want = calloc((size_t)f.config.trees * f.n_leaves * C, sizeof *want);
  double *xs = malloc((size_t)rows * 3 * sizeof *xs);
  uint32_t *cls = malloc(rows * sizeof *cls);
  rdt_rng rng;
  seeded(&rng, "mixed walk rows");
  for (uint32_t i = 0; want && xs && cls && i < rows; i++) {
    double u = rdt_rng_unit(&rng);
    /* the bounds themselves, the midpoint, and anything between */
    double x = i % 7 == 0 ? lo : i % 7 == 1 ? hi : i % 7 == 2 ? lo / 2 + hi / 2 : lo * (1 - u) + hi * u;
    xs[3 * i] = x;
    xs[3 * i + 1] = (double)rdt_rng_below(&rng, n + 1); /* n is `other` */
    xs[3 * i + 2] = -3 + 2 * rdt_rng_unit(&rng);
    cls[i] = (uint32_t)rdt_rng_below(&rng, C);
    for (uint32_t t = 0; t < f.config.trees; t++)
      want[((size_t)t * f.n_leaves + reference_leaf(&f, t, xs + 3 * i)) * C + cls[i]]++;
  }
  rdt_rng_clear(&rng);
  ok = want && xs && cls;
  if (ok) rdt_forest_train_batch(&f, xs, cls, rows - 5); /* then a short tail, row by row */
  for (uint32_t i = rows - 5; ok && i < rows; i++) rdt_forest_train_row(&f, xs + 3 * i, cls[i]);
  for (uint32_t t = 0; ok && t < f.config.trees; t++) /* prediction's walk too */
    for (uint32_t i = 0; i < 50; i++) ok &= rdt_forest_leaf(&f, t, xs + 3 * i) == reference_leaf(&f, t, xs + 3 * i);
  ok = ok && memcmp(want, f.counts, (size_t)f.config.trees * f.n_leaves * C * sizeof *want) == 0;
  free(want);
  free(xs);
  free(cls);
  rdt_forest_free(&f);
  return ok;
}

static void test_mixed_walk(void) {
  int mode = 0;
  check(walk_matches("", 0, 1, 5, &mode) && mode == RDT_WALK_MIXED,
        "mixed walk: subset splits on 6 codes count as the node-by-node walk");
  check(walk_matches("\"categorical\":\"one_vs_rest\",", 0, 1, 5, &mode) && mode == RDT_WALK_MIXED,
        "mixed walk: one-code splits count as the node-by-node walk");
  check(walk_matches("\"splits\":\"global\",", -50, 70, 20, &mode) && mode == RDT_WALK_MIXED,
        "mixed walk: global thresholds, negative bounds");
  check(walk_matches("", -1e300, 1e300, 63, &mode) && mode == RDT_WALK_MIXED,
        "mixed walk: 63 values and `other` (64 codes), numeric values across the double range");
  check(walk_matches("", 0, 1, 64, &mode) && mode == RDT_WALK_GENERIC,
        "mixed walk: 65 codes fall back to the generic walk, which counts the same");
  check(walk_matches("\"categorical\":\"one_vs_rest\",", 0, 1, 64, &mode) && mode == RDT_WALK_INTERVAL,
        "mixed walk: one-code splits on 65 codes keep the interval walk");
  check(rdt_mixed_code(0) == 0 && rdt_mixed_code(63) == 63 && rdt_mixed_code(17) == 17 && rdt_mixed_code(-1e308) < 64 &&
            rdt_mixed_code(1e308) < 64 && rdt_mixed_code(0.5) < 64,
        "mixed walk: a code is itself, any other finite value some code below 64");
}

/* ---- 3. through SQL -------------------------------------------------------- */

static sqlite3 *open_db(const char *path) {
  sqlite3 *db = NULL;
  char *err = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_rdt_init(db, &err, NULL) != SQLITE_OK) {
    printf("# open %s: %s\n", path, err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

static int exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK) printf("# %s: %s\n", sql, err ? err : "?");
  sqlite3_free(err);
  return rc == SQLITE_OK;
}

/* One row, 16 trees of depth 16: about 2 million counters of noise, a 33 MB
** model; the C work is nearly all of the statement. */
#define LONG_OPTS                                                                                     \
  "{\"epsilon\": 1, \"trees\": 16, \"depth\": 16, \"classes\": [0, 1], \"features\": [{\"name\": \"x\", " \
  "\"type\": \"numeric\", \"min\": 0, \"max\": 1}]}"
#define LONG_SQL "SELECT length(rdt_train('" LONG_OPTS "', label, x)) FROM one"

typedef struct {
  sqlite3 *db;
  long calls;     /* progress handler calls */
  long stop_at;   /* return 1 at this call (0: never) */
  long wake_at;   /* at this call, hand over to the interrupting thread and wait (0: never) */
  long at_interrupt;
  int in_probe;   /* the trace saw the probe start */
  int stop_in_probe;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int ready, done, abandoned;
} watch;

static int progress(void *arg) {
  watch *w = arg;
  w->calls++;
  if (w->stop_in_probe && w->in_probe) return 1;
  if (w->wake_at && w->calls == w->wake_at) {
    pthread_mutex_lock(&w->mu);
    w->ready = 1;
    pthread_cond_broadcast(&w->cv);
    while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
  }
  return w->stop_at && w->calls >= w->stop_at;
}

static int trace(unsigned type, void *arg, void *p, void *x) {
  watch *w = arg;
  (void)p;
  if (type == SQLITE_TRACE_STMT) w->in_probe = strstr((const char *)x, "rdt: checking for sqlite3_interrupt") != NULL;
  return 0;
}

static void *interrupter(void *arg) {
  watch *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->ready) pthread_cond_wait(&w->cv, &w->mu);
  w->at_interrupt = w->calls;
  if (!w->abandoned) sqlite3_interrupt(w->db); /* from this thread, while the other runs the noise */
  w->done = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Runs sql with the watch as progress handler (every `every` instructions);
** returns the final step's code; *rows gets the rows returned. */
static int run_watched(sqlite3 *db, const char *sql, watch *w, int every, int *rows) {
  sqlite3_stmt *st = NULL;
  *rows = 0;
  w->calls = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    printf("# prepare: %s\n", sqlite3_errmsg(db));
    return SQLITE_ERROR;
  }
  sqlite3_progress_handler(db, every, progress, w);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) (*rows)++;
  sqlite3_progress_handler(db, 0, NULL, NULL);
  sqlite3_finalize(st);
  return rc;
}

static void watch_init(watch *w, sqlite3 *db) {
  memset(w, 0, sizeof *w);
  w->db = db;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
}

static void watch_free(watch *w) {
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
}

static void test_sql_interrupt(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/long.db", dir);
  sqlite3 *db = open_db(path);
  check(db != NULL, "sql: a database with rdt registered");
  if (!db) return;
  int ok = exec(db, "CREATE TABLE one(x REAL, label INTEGER); INSERT INTO one VALUES (0.5, 1);");
  watch w;
  watch_init(&w, db);
  int rows = 0;

  /* The progress handler advances during the C work: without the probe it
  ** saw only the statement's few dozen instructions. */
  int rc = ok ? run_watched(db, LONG_SQL, &w, 100, &rows) : SQLITE_ERROR;
  long full = w.calls;
  check(rc == SQLITE_DONE && rows == 1 && full > 1000,
        "sql: the progress handler advances while the trees are drawn, noised and encoded");
  printf("# progress handler (every 100 instructions): %ld calls over one training\n", full);
  rc = run_watched(db, LONG_SQL, &w, 100, &rows);
  check(rc == SQLITE_DONE && w.calls == full, "sql: the same number of progress calls on a second run");

  /* A handler returning 1 half-way (in the noise) stops it at once. */
  w.stop_at = full / 2;
  rc = run_watched(db, LONG_SQL, &w, 100, &rows);
  check(rc == SQLITE_INTERRUPT && rows == 0 && strcmp(sqlite3_errmsg(db), "interrupted") == 0 && w.calls == full / 2,
        "sql: a progress handler returning 1 during the noise stops training: SQLITE_INTERRUPT, \"interrupted\", "
        "no model, no question after it");
  /* ... and near the end, in the encoding. */
  w.stop_at = full - 10;
  rc = run_watched(db, LONG_SQL, &w, 100, &rows);
  check(rc == SQLITE_INTERRUPT && rows == 0 && w.calls == full - 10,
        "sql: a progress handler returning 1 during the encoding stops it the same way");
  w.stop_at = 0;

  /* sqlite3_interrupt() from a second thread during the noise. */
  pthread_t th;
  w.wake_at = full / 2;
  w.ready = w.done = 0;
  int started = pthread_create(&th, NULL, interrupter, &w) == 0;
  rc = started ? run_watched(db, LONG_SQL, &w, 100, &rows) : SQLITE_ERROR;
  pthread_mutex_lock(&w.mu); /* a training that never reached wake_at (a bug) must not hang the test */
  if (!w.ready) w.ready = w.abandoned = 1;
  pthread_cond_broadcast(&w.cv);
  pthread_mutex_unlock(&w.mu);
  if (started) pthread_join(th, NULL);
  check(started && !w.abandoned && rc == SQLITE_INTERRUPT && rows == 0 &&
            strcmp(sqlite3_errmsg(db), "interrupted") == 0 && w.at_interrupt == full / 2 && w.calls == w.at_interrupt,
        "sql: sqlite3_interrupt() from another thread during the noise stops training at the next question");
  w.wake_at = 0;
  rc = run_watched(db, "SELECT count(*) FROM one", &w, 100, &rows);
  check(rc == SQLITE_DONE && rows == 1, "sql: the connection works normally after the interrupt");

  /* An interrupted rdt_fit keeps its ledger charge and releases nothing. */
  ok = exec(db, "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=10)");
  w.stop_at = full / 2;
  rc = ok ? run_watched(db,
                        "SELECT length(rdt_fit('{\"epsilon\": 1, \"ledger\": \"budget\", \"trees\": 16, \"depth\": 16, "
                        "\"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, "
                        "\"max\": 1}]}', 'SELECT x, label FROM one'))",
                        &w, 100, &rows)
          : SQLITE_ERROR;
  w.stop_at = 0;
  sqlite3_stmt *q = NULL;
  int charges = -1;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM budget WHERE id > 0", -1, &q, NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW)
    charges = sqlite3_column_int(q, 0);
  sqlite3_finalize(q);
  check(rc == SQLITE_INTERRUPT && rows == 0 && charges == 1,
        "sql: an interrupted rdt_fit releases nothing and its charge stands");

  /* A learner's own finish does not poll; it is asked before and after. The
  ** trace tells the probe's first run, and the handler stops it there. */
  sqlite3_trace_v2(db, SQLITE_TRACE_STMT, trace, &w);
  w.stop_in_probe = 1;
  rc = run_watched(db,
                   "SELECT rdt_train('{\"algorithm\": \"naive_bayes\", \"epsilon\": 1, \"classes\": [0, 1], "
                   "\"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}', label, x) FROM one",
                   &w, 1, &rows);
  check(rc == SQLITE_INTERRUPT && rows == 0, "sql: a learner is stopped at its first question, nothing released");
  /* The same trace shows what the probe is; forests are stopped at theirs too. */
  rc = run_watched(db, LONG_SQL, &w, 1, &rows);
  check(rc == SQLITE_INTERRUPT && rows == 0, "sql: the probe is traced with a comment saying what it is");
  sqlite3_trace_v2(db, 0, NULL, NULL);
  w.stop_in_probe = w.in_probe = 0;

  watch_free(&w);
  sqlite3_close(db);
}

/* ---- options are read once ----------------------------------------------- */

static int opts_calls;
static void opts_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  opts_calls++;
  sqlite3_result_text(ctx,
                      "{\"epsilon\": 1, \"seed\": 1, \"trees\": 4, \"depth\": 4, \"classes\": [0, 1], \"features\": "
                      "[{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
                      -1, SQLITE_STATIC);
}

static int count_calls(sqlite3 *db, const char *sql, const unsigned char **model, int *bytes) {
  sqlite3_stmt *st = NULL;
  opts_calls = 0;
  int ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
  if (ok && model) {
    *bytes = sqlite3_column_bytes(st, 0);
    unsigned char *copy = malloc((size_t)*bytes + 1);
    if (copy) memcpy(copy, sqlite3_column_blob(st, 0), (size_t)*bytes);
    *model = copy;
  }
  if (!ok) printf("# %s\n", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return ok ? opts_calls : -1;
}

static void test_options_once(void) {
  sqlite3 *db = open_db(":memory:");
  if (!db) return;
  /* Not deterministic, like readfile(): SQLite cannot hoist it out of the loop. */
  int ok = sqlite3_create_function(db, "opts", 0, SQLITE_UTF8, NULL, opts_func, NULL, NULL) == SQLITE_OK &&
           exec(db, "CREATE TABLE t(x REAL, label INTEGER);"
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) "
                    "INSERT INTO t SELECT (i % 100) / 100.0, i % 3 = 0 FROM n;");
  const unsigned char *a = NULL, *b = NULL;
  int na = 0, nb = 0;
  int per_row = ok ? count_calls(db, "SELECT rdt_train(opts(), label, x) FROM t", &a, &na) : -1;
  int once = ok ? count_calls(db, "SELECT rdt_train((SELECT opts()), label, x) FROM t", &b, &nb) : -1;
  check(per_row == 500 && once == 1 && a && b && na == nb && memcmp(a, b, (size_t)na) == 0,
        "options: SQLite evaluates an aggregate's options argument on every row (500 calls), a scalar subquery "
        "once; the same model");
  free((void *)a);
  free((void *)b);
  sqlite3_close(db);
}

int main(void) {
  if (sodium_init() < 0) {
    printf("not ok - sodium_init\n");
    return 1;
  }
  char dir[] = "/tmp/rdt-long-work-XXXXXX";
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  test_cancel_core();
  test_worker_abandon();
  test_mixed_walk();
  test_sql_interrupt(dir);
  test_options_once();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("# could not remove %s\n", dir);
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail != 0;
}
