/*
** forest_algorithms.c - the classic forests (RDT, DiPriMe, matrix noise,
** RDT#; forest_kind.h) as one learner that writes whole models (learner.h,
** contract 8), so that the SQL binding trains them through the learner
** interface like every other learner.
**
** Contract:
**   1. configure() parses the options with the caller's reader (options.c's
**      forest parser) and checks, before any row, the model's size against
**      max_bytes (binary trees: known from the options) and the kind's own
**      parameters (forest_kind.h, check).
**   2. RDT#'s public rows come in through public_row() before build(); they
**      are public and kept (cleaned) until the release labels them.
**   3. build() completes the configuration from public facts (the kind's
**      plan), draws the structure (polling the stop request), checks a
**      multiway forest's size once its structure is known, and starts the
**      counting thread for "threads": 2 when there is more than one CPU (no
**      thread is not an error: the rows are then counted here; same model).
**   4. Rows are counted in batches of RDT_TRAIN_CHUNK, tree by tree; they are
**      never stored, except DiPriMe's: a uniform sample of at most
**      "max_rows" of them (row_sample.h), whose buffer only memory can fail.
**   5. finish() asks the stop request first (an interrupted training drops
**      the rows not yet counted and releases nothing), then adds the kind's
**      noise, and selects the voting trees ("keep_trees", post-processing);
**      it fails closed. encode() writes the classic model BLOB (model.c).
**   6. free() stops the thread and wipes every private intermediate: the
**      counters (exact or released), the row buffers and the seed key.
**   7. counters() (learner.h contract 3) gives the built forest's state once
**      every row given is counted: RDT's leaf counters, a matrix forest's
**      tables and counters, RDT#'s centre counters (its digest covers the
**      centres drawn from the public rows); DiPriMe, whose trees grow from
**      its buffered rows, and a partitioned matrix forest have none. The
**      classic forests merge only through it: merge() stays NULL.
**   8. Federated (learner.h contract 9): an RDT forest of fixed depth (not
**      automatic: that needs a noisy count of the merged rows) releases one
**      discrete Laplace of scale trees/eps per counter, which noise()
**      describes; finish_noised() then only selects the voting trees. The
**      other kinds offer none.
*/
#include "forest_algorithms.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../forests/forest_kind.h"
#include "../forests/forest_learner.h"
#include "../forests/matrix.h"
#include "../model.h"
#include "../row_sample.h"
#include "../forests/sharp.h"
#include "../forests/train_worker.h"
#include "../forests/tree_selection.h"

typedef struct forest_algorithms {
  rdt_config config; /* the parsed options; the forest holds its copy once built */
  int built;         /* the forest is built (rdt_forest_free owes it), even on failure */
  int released;      /* finish() (or finish_noised()) has run: no more rows, no counters */
  rdt_forest forest;
  const rdt_forest_kind *kind;
  uint32_t n_features;
  double *xs; /* RDT_TRAIN_CHUNK rows of features */
  uint32_t cls[RDT_TRAIN_CHUNK];
  uint32_t pending;
  rdt_train_worker *worker; /* NULL: the rows are counted here */
  double *fill_xs;          /* the buffer rows go to: the worker's current one, or xs/cls */
  uint32_t *fill_cls;
  uint32_t fill_cap;
  /* RDT#: the public rows (cleaned), kept to label them at the end */
  double *pub;
  uint64_t n_pub, cap_pub;
  int depth_from_public; /* RDT#: the depth was chosen from the public rows */
  /* DiPriMe: a uniform sample of at most "max_rows" rows, buffered */
  double *rows_x, *rows_y;
  uint32_t *rows_c;
  uint64_t n_rows, cap_rows;
  rdt_row_sample sample; /* which DiPriMe rows are kept (k == 0: not started) */
  char row_error[96];    /* a row's failure (memory only), "" for none */
} forest_algorithms;

/* Contract 1. */
static void *fa_configure(const rdt_json *root, rdt_learn_options_reader read, uint64_t max_bytes,
                          rdt_schema *schema, rdt_learn_common *c, char *ledger, size_t ledger_size, char *label,
                          char *err, size_t en) {
  forest_algorithms *fa = calloc(1, sizeof *fa);
  if (en) err[0] = 0;
  if (!fa) return NULL;
  rdt_config *config = &fa->config;
  if (!read(root, schema, config, err, en)) {
    sodium_memzero(config, sizeof *config); /* holds the seed key */
    free(fa);
    return NULL;
  }
  fa->kind = rdt_forest_kind_of(config->algorithm);
  /* Size check before any allocation proportional to the model (a multiway
  ** forest's size is known once its structure is drawn: checked in build). */
  rdt_forest sizing;
  memset(&sizing, 0, sizeof sizing);
  sizing.schema = *schema;
  sizing.config = *config;
  sizing.n_leaves = (uint32_t)1 << config->depth;
  sizing.n_internal = sizing.n_leaves - 1;
  uint64_t size = fa->kind->multiway ? 0 : rdt_model_size(&sizing);
  sodium_memzero(&sizing.config, sizeof sizing.config);
  int ok = 1;
  if (size > max_bytes) {
    snprintf(err, en,
             "model too large: %u trees of depth %u with %u classes need %llu bytes, above this connection's "
             "SQLITE_LIMIT_LENGTH of %llu; use fewer trees or a smaller depth",
             config->trees, config->depth, schema->n_classes, (unsigned long long)size,
             (unsigned long long)max_bytes);
    ok = 0;
  }
  if (ok && fa->kind->check && !fa->kind->check(config, schema, err, en)) ok = 0;
  if (!ok) {
    rdt_schema_free(schema);
    sodium_memzero(config, sizeof *config);
    free(fa);
    return NULL;
  }
  memset(c, 0, sizeof *c);
  c->is_private = config->is_private;
  c->eps = config->eps;
  c->regression = config->task == RDT_TASK_REGRESSION;
  c->target_min = config->target_min;
  c->target_max = config->target_max;
  c->seeded = config->seeded;
  memcpy(c->seed_key, config->seed_key, sizeof c->seed_key);
  c->keyed = config->keyed;
  memcpy(c->structure_key, config->structure_key, sizeof c->structure_key);
  c->unit = config->unit;
  snprintf(ledger, ledger_size, "%s", config->ledger);
  memcpy(label, config->label, sizeof config->label);
  fa->n_features = schema->n_features;
  return fa;
}

static void fa_about(const void *st, rdt_learn_about *out) {
  const forest_algorithms *fa = st;
  const rdt_config *config = &fa->config;
  const char *note = fa->kind->note;
  memset(out, 0, sizeof *out);
  out->algorithm = note;
  out->max_rows = fa->kind->buffers_rows ? config->max_rows : 0;
  if (fa->kind->reads_public_rows) {
    out->public_query = config->public_query;
    out->public_tables = config->public_tables;
    out->public_tables_len = config->public_tables_len;
  }
  /* The request states what is known before the rows: an automatic depth
  ** is the largest the trees may keep. What was trained is recorded after. */
  if (config->trees_auto)
    snprintf(out->request, sizeof out->request, "%s, trees chosen from the structure (%u at most), depth %u", note,
             config->trees, config->depth);
  else if (config->auto_depth)
    snprintf(out->request, sizeof out->request, "%s, %u trees, depth chosen from a noisy row count (%u at most)",
             note, config->trees, config->depth);
  else if (fa->kind->reads_public_rows && (!config->depth || !config->primary_trees))
    snprintf(out->request, sizeof out->request, "%s, trees and depth chosen from the public rows", note);
  else
    snprintf(out->request, sizeof out->request, "%s, %u trees, depth %u", note, config->trees, config->depth);
}

/* Contract 2. */
static int fa_public_row(void *st, const double *x, char *err, size_t en) {
  forest_algorithms *fa = st;
  uint32_t nf = fa->n_features;
  if (fa->n_pub == RDT_SHARP_MAX_PUBLIC_ROWS) {
    snprintf(err, en, "\"public_query\" returns more than %d rows", RDT_SHARP_MAX_PUBLIC_ROWS);
    return 0;
  }
  if (fa->n_pub == fa->cap_pub) {
    uint64_t cap = fa->cap_pub ? fa->cap_pub * 2 : 1024;
    double *p = realloc(fa->pub, (size_t)cap * nf * sizeof *p);
    if (!p) {
      snprintf(err, en, "out of memory while reading the public rows");
      return 0;
    }
    fa->pub = p;
    fa->cap_pub = cap;
  }
  if (nf) memcpy(fa->pub + (size_t)fa->n_pub * nf, x, nf * sizeof *x);
  fa->n_pub++;
  return 1;
}

/* What the kind's plan, build and release read: the buffered or public rows. */
static rdt_forest_input forest_input(const forest_algorithms *fa) {
  rdt_forest_input in = {fa->rows_x, fa->rows_c, fa->rows_y, fa->n_rows, fa->pub, fa->n_pub, 0};
  in.public_n = fa->config.public_n;
  return in;
}

/* The buffer rows go to next: the worker's current one, or our own. */
static void point_at_buffer(forest_algorithms *fa) {
  if (fa->worker) {
    fa->fill_xs = rdt_train_worker_rows(fa->worker);
    fa->fill_cls = rdt_train_worker_classes(fa->worker);
    fa->fill_cap = rdt_train_worker_capacity(fa->worker);
  } else {
    fa->fill_xs = fa->xs;
    fa->fill_cls = fa->cls;
    fa->fill_cap = RDT_TRAIN_CHUNK;
  }
}

/* Counts the buffered rows: hands them to the worker, or walks them here. */
static void count_buffered(forest_algorithms *fa) {
  if (fa->worker) rdt_train_worker_submit(fa->worker, fa->pending);
  else rdt_forest_train_batch(&fa->forest, fa->xs, fa->cls, fa->pending);
  fa->pending = 0;
  point_at_buffer(fa);
}

/* Contract 3. */
static int fa_build(void *st, const rdt_schema *s, rdt_cancel *cancel, uint64_t max_bytes, char *err, size_t en) {
  forest_algorithms *fa = st;
  rdt_config *config = &fa->config;
  const rdt_forest_kind *kind = fa->kind;
  if (en) err[0] = 0;
  config->cancel = cancel;
  if (kind->reads_public_rows) {
    if (fa->n_pub == 0) {
      snprintf(err, en, "\"public_query\" returned no rows; RDT# needs public unlabeled rows");
      return 0;
    }
    fa->depth_from_public = config->depth == 0;
  }
  rdt_forest_input in = forest_input(fa);
  if (kind->plan) kind->plan(config, s, &in); /* from public facts only */
  rdt_schema copy;
  if (!rdt_schema_copy(&copy, s)) {
    snprintf(err, en, "out of memory while building the forest");
    return 0;
  }
  fa->built = 1; /* the forest owns the copy from here, even on failure */
  if (!rdt_forest_init(&fa->forest, &copy, config) ||
      !(fa->xs = malloc((size_t)RDT_TRAIN_CHUNK * fa->n_features * sizeof *fa->xs))) {
    snprintf(err, en, "%s", fa->forest.error[0] ? fa->forest.error : "out of memory while building the forest");
    return 0;
  }
  if (kind->build && !kind->build(&fa->forest, &in, err, en)) {
    if (!err[0]) snprintf(err, en, "out of memory while drawing the %s trees", kind->name);
    return 0;
  }
  uint64_t size;
  if (kind->multiway && (size = rdt_model_size(&fa->forest)) > max_bytes) {
    snprintf(err, en,
             "model too large: %u multiway trees of depth %u with %llu leaves and %u classes need %llu bytes, above "
             "this connection's SQLITE_LIMIT_LENGTH of %llu; use fewer trees, a smaller depth or fewer bins",
             config->trees, config->depth, (unsigned long long)rdt_forest_total_leaves(&fa->forest),
             fa->forest.schema.n_classes, (unsigned long long)size, (unsigned long long)max_bytes);
    return 0;
  }
  if (config->threads == 2 && !kind->buffers_rows && sysconf(_SC_NPROCESSORS_ONLN) > 1)
    fa->worker = rdt_train_worker_start(&fa->forest);
  point_at_buffer(fa);
  return 1;
}

/* Buffers one DiPriMe row (contract 4): the caller dropped the rows the row
** rules drop and clamped the target (diprime.h clamps it again, the same).
** Beyond "max_rows" rows a uniform sample of max_rows of them is kept
** (bottom-k of random priorities), so the row count never causes an error;
** diprime.h charges for the sampling whether or not it happens. Running out
** of memory while growing the buffer is an error about max_rows (a parameter). */
static int buffer_row(forest_algorithms *fa, const double *x, uint32_t cls, double target) {
  const rdt_config *c = &fa->forest.config;
  uint32_t nf = fa->n_features;
  if (fa->sample.k == 0 && /* the first kept row: the priorities' own stream, seeded with the model */
      !rdt_row_sample_init(&fa->sample, c->max_rows, c->seeded ? c->seed_key : NULL, "diprime-row-sample")) {
    snprintf(fa->row_error, sizeof fa->row_error, "\"max_rows\" is out of range"); /* options.c checks it */
    return 0;
  }
  if (fa->sample.size == fa->cap_rows && fa->cap_rows < c->max_rows) { /* room for a new slot */
    uint64_t cap = fa->cap_rows ? fa->cap_rows * 2 : 1024;
    if (cap > c->max_rows) cap = c->max_rows;
    double *rx = realloc(fa->rows_x, (size_t)cap * nf * sizeof *rx);
    if (rx) fa->rows_x = rx;
    double *ry = realloc(fa->rows_y, (size_t)cap * sizeof *ry);
    if (ry) fa->rows_y = ry;
    uint32_t *rc = realloc(fa->rows_c, (size_t)cap * sizeof *rc);
    if (rc) fa->rows_c = rc;
    if (!rx || !ry || !rc) {
      snprintf(fa->row_error, sizeof fa->row_error, "out of memory while buffering rows for DiPriMe; lower \"max_rows\"");
      return 0;
    }
    fa->cap_rows = cap;
  }
  uint64_t slot;
  rdt_row_sample_result r = rdt_row_sample_offer(&fa->sample, &slot);
  if (r == RDT_ROW_SAMPLE_NOMEM) {
    snprintf(fa->row_error, sizeof fa->row_error, "out of memory while buffering rows for DiPriMe; lower \"max_rows\"");
    return 0;
  }
  if (r == RDT_ROW_SAMPLE_SKIP) return 1;
  if (nf) memcpy(fa->rows_x + (size_t)slot * nf, x, nf * sizeof *x);
  fa->rows_y[slot] = target;
  fa->rows_c[slot] = cls;
  fa->n_rows = fa->sample.size; /* slots 0 .. size - 1 hold the sample */
  return 1;
}

static void fa_row(void *st, const double *x, uint32_t cls, double target) {
  forest_algorithms *fa = st;
  if (fa->row_error[0]) return; /* the caller stops at the failed row */
  if (fa->kind->buffers_rows) {
    buffer_row(fa, x, cls, target);
    return;
  }
  uint32_t nf = fa->n_features;
  if (nf) memcpy(fa->fill_xs + (size_t)fa->pending * nf, x, nf * sizeof *x);
  fa->fill_cls[fa->pending++] = cls;
  if (fa->pending == fa->fill_cap) count_buffered(fa);
}

static int fa_row_failed(const void *st, char *err, size_t en) {
  const forest_algorithms *fa = st;
  if (!fa->row_error[0]) return 0;
  snprintf(err, en, "%s", fa->row_error);
  return 1;
}

/* Private rows, buffered: wiped before they are freed. */
static void wipe_rows(forest_algorithms *fa) {
  if (fa->rows_x) {
    sodium_memzero(fa->rows_x, (size_t)fa->cap_rows * fa->n_features * sizeof *fa->rows_x);
    sodium_memzero(fa->rows_y, (size_t)fa->cap_rows * sizeof *fa->rows_y);
    sodium_memzero(fa->rows_c, (size_t)fa->cap_rows * sizeof *fa->rows_c);
  }
  if (fa->xs) sodium_memzero(fa->xs, (size_t)RDT_TRAIN_CHUNK * fa->n_features * sizeof *fa->xs);
  sodium_memzero(fa->cls, sizeof fa->cls);
}

/* Contract 5. */
static int fa_finish(void *st, rdt_rng *noise) {
  forest_algorithms *fa = st;
  rdt_forest *f = &fa->forest;
  rdt_cancel *cancel = fa->config.cancel;
  /* One question before the last rows are counted: an interrupt during the
  ** row pass (or the statement's cleanup after one, which still finishes)
  ** must not wait for the worker to walk its buffers through large trees. */
  if (rdt_cancel_poll(cancel, RDT_CANCEL_UNITS)) rdt_train_worker_abandon(fa->worker);
  else if (fa->pending) count_buffered(fa);
  rdt_train_worker_free(fa->worker); /* waits until every row is counted, or abandoned */
  fa->worker = NULL;
  if (rdt_cancel_stopped(cancel)) return 0;
  rdt_forest_input in = forest_input(fa);
  fa->released = 1;
  int released = fa->kind->release(f, &in, noise);
  if (released) released = rdt_forest_select_trees(f); /* "keep_trees": post-processing of the release */
  wipe_rows(fa); /* the release has read them; the counters are wiped by free() on failure */
  return released;
}

/* Contract 8: RDT's release without an automatic depth is one discrete
** Laplace of scale trees/eps per leaf counter (forest.h item 4), nothing
** else; the other kinds' releases do more (a noisy count, tables, labels). */
static uint32_t fa_noise(const void *st, rdt_noise_block *out, uint32_t max) {
  const forest_algorithms *fa = st;
  const rdt_forest *f = &fa->forest;
  uint64_t s, t;
  if (!fa->built || fa->released || max < 1 || f->config.algorithm != RDT_ALGO_RDT || f->multiway ||
      f->config.auto_depth || !f->config.is_private || !rdt_laplace_params(f->config.eps, f->config.trees, &s, &t))
    return 0;
  out[0] = (rdt_noise_block){(uint64_t)f->config.trees * f->n_leaves * rdt_forest_slots(f), s, t};
  return 1;
}

/* Contract 8: the counters carry fa_noise's noise already (the sites'
** shares): the release's post-processing alone, "keep_trees". */
static int fa_finish_noised(void *st, rdt_rng *post) {
  forest_algorithms *fa = st;
  rdt_noise_block b;
  (void)post;
  if (fa_noise(st, &b, 1) != 1 || fa->pending || fa->worker) return 0; /* counters() has counted every row */
  fa->released = 1;
  int released = rdt_forest_select_trees(&fa->forest);
  wipe_rows(fa);
  return released;
}

/* Contract 7: the rows still buffered are counted (and the counting thread
** joined) first; then the forest's state (forest.h item 5). DiPriMe keeps
** rows: none. */
static uint32_t fa_counters(void *st, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  forest_algorithms *fa = st;
  if (!fa->built || fa->released || fa->kind->buffers_rows) return 0;
  if (fa->pending) count_buffered(fa);
  rdt_train_worker_free(fa->worker); /* waits until every row is counted */
  fa->worker = NULL;
  point_at_buffer(fa);
  rdt_forest_digest(&fa->forest, digest);
  return rdt_forest_state(&fa->forest, out, max);
}

/* The classic model BLOB (model.c), as the forest learners write theirs. */
static void fa_encode(const void *st, rdt_bytes *out) {
  const forest_algorithms *fa = st;
  rdt_forest_learner_encode(&fa->forest, out);
}

static void fa_trained(const void *st, rdt_bytes *json) {
  const forest_algorithms *fa = st;
  const rdt_forest *f = &fa->forest;
  const rdt_config *c = &f->config;
  char part[160];
  snprintf(part, sizeof part, "{\"algorithm\":\"%s\"", fa->kind->option);
  rdt_bytes_text(json, part);
  if (f->matrix) {
    snprintf(part, sizeof part, ",\"noise\":\"matrix\",\"strategy\":\"%s\"", rdt_strategy_name(f->matrix->strategy));
    rdt_bytes_text(json, part);
  }
  snprintf(part, sizeof part, ",\"trees\":%u,\"depth\":%u,\"depth_from\":\"%s\"", c->trees, c->depth,
           c->auto_depth ? "noisy row count" : fa->depth_from_public ? "public rows" : "options");
  rdt_bytes_text(json, part);
  if (f->sharp) {
    snprintf(part, sizeof part, ",\"primary_trees\":%u", c->primary_trees);
    rdt_bytes_text(json, part);
  }
  if (f->tree_kept) {
    snprintf(part, sizeof part, ",\"voting_trees\":%u", f->n_kept);
    rdt_bytes_text(json, part);
  }
  if (c->task == RDT_TASK_REGRESSION) rdt_bytes_text(json, ",\"task\":\"regression\"");
  rdt_bytes_text(json, "}");
}

/* Contract 6. */
static void fa_free(void *st) {
  forest_algorithms *fa = st;
  if (!fa) return;
  rdt_train_worker_abandon(fa->worker); /* nothing more will be released: no need to count on */
  rdt_train_worker_free(fa->worker);    /* joins the thread before the forest goes */
  fa->worker = NULL;
  wipe_rows(fa);
  free(fa->pub); /* public rows: nothing to wipe */
  free(fa->rows_x);
  free(fa->rows_y);
  free(fa->rows_c);
  rdt_row_sample_free(&fa->sample); /* its priorities would tell the row count */
  free(fa->xs);
  if (fa->built) {
    rdt_forest_wipe_counters(&fa->forest); /* exact counts and tables are the private part of the state */
    rdt_forest_free(&fa->forest);
  }
  sodium_memzero(&fa->config, sizeof fa->config); /* holds the seed key */
  free(fa);
}

static const char *const no_options[] = {NULL}; /* configure() reads them all */

const rdt_learner rdt_learner_forest_algorithms = {
    .name = "rdt",
    .id = 0, /* none: its models are whole forest models, not learner payloads */
    .tasks = RDT_LEARN_CLASSIFICATION | RDT_LEARN_REGRESSION,
    .options = no_options,
    .row = fa_row,
    .finish = fa_finish,
    .encode = fa_encode,
    .free = fa_free,
    .whole_model = 1,
    .configure = fa_configure,
    .about = fa_about,
    .public_row = fa_public_row,
    .build = fa_build,
    .row_failed = fa_row_failed,
    .counters = fa_counters,
    .noise = fa_noise,
    .finish_noised = fa_finish_noised,
    .trained = fa_trained,
};
