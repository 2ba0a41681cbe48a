/*
** sql_batch.c - the rdt_predict_batch(model, params, id, x1, ..., xk)
** aggregate: DP batch prediction from a NON-private model (core: batch.h).
**
** params is epsilon (a number) or a JSON object {"epsilon", "strategy",
** "seed", "ledger", "keep_trees", "note"}; model and params are validated (and a ledger charged)
** on the first query row, before the queries are used. "seed" is refused
** with "ledger": seeded noise makes the answer a deterministic function of
** the training rows, which no charge can make private. The queries are the
** analyst's: they are buffered (features cleaned as in rdt_predict) and the
** strategy is chosen from them and the model's structure. The result is a
** JSON object with the strategy, its expected vote variance and
** "predictions": {id: label}.
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forests/forest_kind.h"
#include "core/forests/batch.h"
#include "core/json.h"
#include "core/forests/matrix.h"
#include "core/model.h"
#include "core/options.h"
#include "rdt_sql.h"

typedef struct batch_state {
  int started, failed;
  rdt_forest forest;
  int have_forest;
  unsigned char checksum[RDT_CHECKSUM_BYTES];
  rdt_eps eps;
  uint32_t strategy;
  int seeded;
  unsigned char seed_key[RDT_RNG_KEYBYTES];
  char ledger[129];  /* charged in the final step, before any noise is drawn */
  char note[RDT_NOTE_MAX + 1]; /* recorded with that charge */
  double keep_trees; /* share of trees that vote, chosen from the noisy leaves (1: all) */
  double *xs;
  sqlite3_value **ids;
  uint32_t n, cap;
} batch_state;

static void batch_error(sqlite3_context *ctx, batch_state *st, const char *msg) {
  rdt_sql_error(ctx, "rdt_predict_batch", msg);
  st->failed = 1;
}

static int batch_params(sqlite3_context *ctx, batch_state *st, sqlite3_value *v) {
  char err[300], ledger[129] = "";
  int t = sqlite3_value_type(v);
  double eps = NAN;
  if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
    eps = sqlite3_value_double(v);
  } else if (t == SQLITE_BLOB) {
    snprintf(err, sizeof err, "the second argument must be epsilon (a number) or a JSON object with \"epsilon\"%s",
             rdt_sql_blob_hint(v, 1));
    batch_error(ctx, st, err);
    return 0;
  } else if (t == SQLITE_TEXT) {
    rdt_json *root = rdt_json_parse((const char *)sqlite3_value_text(v), (size_t)sqlite3_value_bytes(v), err,
                                    sizeof err);
    if (!root || root->type != RDT_JSON_OBJECT) {
      rdt_json_free(root);
      batch_error(ctx, st, "the second argument must be epsilon (a number) or a JSON object with \"epsilon\"");
      return 0;
    }
    for (size_t i = 0; i < root->n; i++) {
      const char *k = root->items[i]->key;
      if (strcmp(k, "epsilon") && strcmp(k, "strategy") && strcmp(k, "seed") && strcmp(k, "ledger") &&
          strcmp(k, "keep_trees") && strcmp(k, "note")) {
        snprintf(err, sizeof err,
                 "unknown option \"%.100s\" (known: epsilon, strategy, seed, ledger, keep_trees, note)", k);
        rdt_json_free(root);
        batch_error(ctx, st, err);
        return 0;
      }
    }
    const rdt_json *j = rdt_json_get(root, "epsilon");
    if (j && j->type == RDT_JSON_NUMBER) eps = j->number;
    j = rdt_json_get(root, "strategy");
    const char *names[] = {"auto", "query", "leaf", "identity"};
    int found = !j;
    for (uint32_t s = 0; j && s < 4; s++)
      if (j->type == RDT_JSON_STRING && strcmp(j->string, names[s]) == 0) {
        st->strategy = s;
        found = 1;
      }
    j = rdt_json_get(root, "seed");
    st->seeded = j != NULL;
    int seed_ok = !j || rdt_options_seed_key(j, "rdt_predict_batch", st->seed_key);
    j = rdt_json_get(root, "ledger");
    int ledger_ok = !j || (j->type == RDT_JSON_STRING && j->string_len > 0 && j->string_len < sizeof ledger);
    if (j && ledger_ok) memcpy(ledger, j->string, j->string_len + 1);
    j = rdt_json_get(root, "keep_trees");
    int keep_ok = !j || (j->type == RDT_JSON_NUMBER && j->number > 0 && j->number <= 1);
    if (j && keep_ok) st->keep_trees = j->number;
    int note_ok = rdt_options_note(root, st->note, sizeof st->note, err, sizeof err);
    rdt_json_free(root);
    if (!note_ok) {
      batch_error(ctx, st, err);
      return 0;
    }
    if (!found) {
      batch_error(ctx, st, "\"strategy\" must be \"auto\", \"query\", \"leaf\" or \"identity\"");
      return 0;
    }
    if (!seed_ok) {
      batch_error(ctx, st, "\"seed\" must be an integer or a string");
      return 0;
    }
    if (!ledger_ok) {
      batch_error(ctx, st, "\"ledger\" must be the name of an rdt_ledger table (1 to 128 characters)");
      return 0;
    }
    if (st->seeded && ledger[0]) { /* a seeded answer is a deterministic function of the training rows */
      batch_error(ctx, st, rdt_seed_with_ledger_error);
      return 0;
    }
    if (!keep_ok) {
      batch_error(ctx, st, "\"keep_trees\" must be a number in (0, 1]: the share of trees that vote");
      return 0;
    }
    if (st->keep_trees < 1 && st->strategy == RDT_BATCH_QUERY) {
      batch_error(ctx, st, "\"keep_trees\" needs noisy leaves to choose trees from: use the \"leaf\" or "
                           "\"identity\" strategy (\"query\" noises only the votes)");
      return 0;
    }
  }
  if (!(eps > 0) || !rdt_eps_from_double(eps, &st->eps)) {
    snprintf(err, sizeof err, "epsilon must be a number from %g to %g", RDT_EPS_MIN, RDT_EPS_MAX);
    batch_error(ctx, st, err);
    return 0;
  }
  memcpy(st->ledger, ledger, sizeof ledger);
  return 1;
}

static int batch_start(sqlite3_context *ctx, batch_state *st, int argc, sqlite3_value **argv) {
  char err[640];
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
    batch_error(ctx, st, "the model must be a BLOB made by rdt_train");
    return 0;
  }
  const unsigned char *blob = sqlite3_value_blob(argv[0]);
  size_t size = (size_t)sqlite3_value_bytes(argv[0]);
  if (!rdt_model_decode(blob ? blob : (const unsigned char *)"", blob ? size : 0, &st->forest, err, sizeof err)) {
    batch_error(ctx, st, err);
    return 0;
  }
  st->have_forest = 1;
  memcpy(st->checksum, blob + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES);
  const rdt_forest *f = &st->forest;
  if (f->config.is_private) {
    batch_error(ctx, st, "the model is already private (its counters carry noise): predict with rdt_predict; "
                         "batch prediction answers from a non-private model (\"epsilon\": null)");
    return 0;
  }
  if (f->config.task != RDT_TASK_CLASSIFICATION || !rdt_forest_kind_of(f->config.algorithm)->batch_prediction) {
    batch_error(ctx, st, "batch prediction needs an RDT classification model (binary or matrix)");
    return 0;
  }
  if (rdt_config_structure_from_rows(&f->config)) {
    /* Batch prediction's proof assumes trees drawn without the rows; an
    ** automatic depth was chosen from the exact row count (issue 19). */
    batch_error(ctx, st, "the model's depth was chosen from its rows (a model trained without \"depth\" by an "
                         "older version): retrain it with an explicit \"depth\" for batch prediction");
    return 0;
  }
  if ((uint32_t)(argc - 3) != f->schema.n_features) {
    char *names = rdt_sql_feature_names(&f->schema);
    snprintf(err, sizeof err, "expected %u feature arguments (%s) after the model, params and id, got %d",
             f->schema.n_features, names ? names : "...", argc - 3);
    sqlite3_free(names);
    batch_error(ctx, st, err);
    return 0;
  }
  if (f->tree_kept) { /* its voting trees were chosen from EXACT counters: not private */
    batch_error(ctx, st, "the model chose its voting trees from exact counters (\"keep_trees\"); train it without "
                         "\"keep_trees\" and pass \"keep_trees\" to rdt_predict_batch instead");
    return 0;
  }
  st->keep_trees = 1;
  if (!batch_params(ctx, st, argv[1])) return 0;
  if (st->strategy == RDT_BATCH_IDENTITY && !(f->matrix && f->matrix->exact_cells)) {
    batch_error(ctx, st, "the \"identity\" strategy needs a non-private matrix forest that kept its cell table "
                         "(\"noise\": \"matrix\", no \"partition\", small enough)");
    return 0;
  }
  st->started = 1;
  return 1;
}

void rdt_predict_batch_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  batch_state *st = sqlite3_aggregate_context(ctx, sizeof *st);
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (st->failed) return;
  if (!st->started) {
    if (argc < 4) {
      batch_error(ctx, st, "expected rdt_predict_batch(model, epsilon, id, x1, ..., xk)");
      return;
    }
    if (!batch_start(ctx, st, argc, argv)) return;
  }
  /* One model per batch: the budget is spent once, on that model. */
  size_t size = (size_t)sqlite3_value_bytes(argv[0]);
  const unsigned char *blob = sqlite3_value_blob(argv[0]);
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB || size < RDT_CHECKSUM_BYTES || !blob ||
      memcmp(blob + size - RDT_CHECKSUM_BYTES, st->checksum, RDT_CHECKSUM_BYTES) != 0) {
    batch_error(ctx, st, "every row of a batch must use the same model");
    return;
  }
  uint32_t nf = st->forest.schema.n_features;
  if (st->n == st->cap) {
    if (st->n >= RDT_BATCH_MAX_QUERIES) {
      char m[120];
      snprintf(m, sizeof m, "a batch holds at most %d queries", RDT_BATCH_MAX_QUERIES);
      batch_error(ctx, st, m);
      return;
    }
    uint32_t cap = st->cap ? st->cap * 2 : 256;
    double *xs = realloc(st->xs, (size_t)cap * nf * sizeof *xs);
    if (xs) st->xs = xs;
    sqlite3_value **ids = realloc(st->ids, (size_t)cap * sizeof *ids);
    if (ids) st->ids = ids;
    if (!xs || !ids) {
      batch_error(ctx, st, "out of memory while buffering the queries");
      return;
    }
    st->cap = cap;
  }
  sqlite3_value *id = sqlite3_value_dup(argv[2]);
  if (!id) {
    batch_error(ctx, st, "out of memory while buffering the queries");
    return;
  }
  rdt_sql_features(&st->forest.schema, argv + 3, st->xs + (size_t)st->n * nf);
  st->ids[st->n++] = id;
}

static void batch_cleanup(batch_state *st) {
  for (uint32_t i = 0; i < st->n; i++) sqlite3_value_free(st->ids[i]);
  free(st->ids);
  free(st->xs);
  if (st->have_forest) {
    /* The exact counters and cells are private: wipe them. */
    const rdt_forest *f = &st->forest;
    uint32_t C = rdt_forest_slots(f);
    sodium_memzero(f->counts, (size_t)rdt_forest_total_leaves(f) * C * sizeof *f->counts);
    if (f->matrix && f->matrix->exact_cells)
      sodium_memzero(f->matrix->exact_cells, (size_t)f->matrix->exact.cells * C * sizeof *f->matrix->exact_cells);
    rdt_forest_free(&st->forest);
  }
  sodium_memzero(st->seed_key, sizeof st->seed_key);
}

static int cmp_text(const void *a, const void *b) {
  sqlite3_value *x = *(sqlite3_value *const *)a, *y = *(sqlite3_value *const *)b;
  const unsigned char *tx = sqlite3_value_text(x), *ty = sqlite3_value_text(y);
  int nx = sqlite3_value_bytes(x), ny = sqlite3_value_bytes(y);
  int c = memcmp(tx ? tx : (const unsigned char *)"", ty ? ty : (const unsigned char *)"", (size_t)(nx < ny ? nx : ny));
  return c ? c : (nx > ny) - (nx < ny);
}

/* Ids are the result's keys (as text): they must be distinct. */
static int unique_ids(batch_state *st) {
  sqlite3_value **sorted = malloc((st->n + 1) * sizeof *sorted);
  if (!sorted) return 0;
  memcpy(sorted, st->ids, st->n * sizeof *sorted);
  qsort(sorted, st->n, sizeof *sorted, cmp_text);
  int ok = 1;
  for (uint32_t i = 1; ok && i < st->n; i++) ok = cmp_text(&sorted[i - 1], &sorted[i]) != 0;
  free(sorted);
  return ok;
}

void rdt_predict_batch_final(sqlite3_context *ctx) {
  batch_state *st = sqlite3_aggregate_context(ctx, 0);
  if (!st || (!st->started && !st->failed)) {
    sqlite3_result_error(ctx, "rdt_predict_batch: the batch is empty (no query rows)", -1);
    return;
  }
  if (st->failed) {
    batch_cleanup(st);
    return;
  }
  const rdt_forest *f = &st->forest;
  uint32_t C = f->schema.n_classes;
  double factor[RDT_BATCH_N_STRATEGIES];
  int64_t *votes = malloc((size_t)st->n * C * sizeof *votes + 1);
  if (!votes || !rdt_batch_plan(f, st->xs, st->n, factor)) {
    free(votes);
    batch_cleanup(st);
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if ((double)st->n * (f->config.partition && f->matrix ? 1 : f->config.trees) >
      (double)((uint64_t)1 << RDT_MAX_SENSITIVITY_LOG2))
    factor[RDT_BATCH_QUERY - 1] = INFINITY; /* its sensitivity is beyond the sampler's range */
  if (!unique_ids(st)) {
    free(votes);
    batch_cleanup(st);
    sqlite3_result_error(ctx, "rdt_predict_batch: two queries share an id (ids are the keys of the result)", -1);
    return;
  }
  uint32_t s = st->strategy;
  if (st->keep_trees < 1) factor[RDT_BATCH_QUERY - 1] = INFINITY; /* no noisy leaves to choose from */
  if (s == RDT_BATCH_AUTO) {
    s = RDT_BATCH_QUERY;
    for (uint32_t k = RDT_BATCH_LEAF; k <= RDT_BATCH_N_STRATEGIES; k++)
      if (factor[k - 1] < factor[s - 1]) s = k;
  }
  if (!isfinite(factor[s - 1])) {
    free(votes);
    batch_cleanup(st);
    sqlite3_result_error(ctx, "rdt_predict_batch: the \"query\" strategy cannot answer this many queries "
                              "(sensitivity queries x trees above 2^20); use \"leaf\" or \"identity\"", -1);
    return;
  }
  rdt_ledger_receipt receipt = {0};
  char err[400];
  if (st->ledger[0]) { /* every check is done: charge, then release */
    char request[96];
    snprintf(request, sizeof request, "batch prediction of %u queries%s", st->n, st->seeded ? ", seeded" : "");
    if (!rdt_ledger_charge(sqlite3_context_db_handle(ctx), sqlite3_user_data(ctx), st->ledger, st->eps,
                           "rdt_predict_batch", request, st->note, &receipt, err, sizeof err)) {
      rdt_ledger_receipt_free(&receipt);
      free(votes);
      batch_cleanup(st);
      rdt_sql_error(ctx, "rdt_predict_batch", err);
      return;
    }
  }
  rdt_rng noise;
  rdt_rng_init_for(&noise, st->seeded ? st->seed_key : NULL, "batch-noise", 0);
  int ok = rdt_batch_answer(f, st->xs, st->n, s, st->eps, st->keep_trees, &noise, votes);
  rdt_rng_clear(&noise);
  /* The outcome goes into the ledger before anything is released. */
  int recorded = rdt_ledger_record(&receipt, ok, NULL, 0, NULL, err, sizeof err);
  rdt_ledger_receipt_free(&receipt);
  if (!ok || !recorded) {
    free(votes);
    batch_cleanup(st);
    if (!ok) sqlite3_result_error(ctx, "rdt_predict_batch: out of memory while answering the batch", -1);
    else rdt_sql_error(ctx, "rdt_predict_batch", err);
    return;
  }
  double e = rdt_eps_to_double(st->eps);
  sqlite3_str *o = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  sqlite3_str_appendf(o, "{\"epsilon\":%!.17g,\"strategy\":\"%s\",\"queries\":%u,\"expected_vote_variance\":%!.17g,"
                         "\"expected_error\":{",
                      e, rdt_batch_strategy_name(s), st->n, factor[s - 1] * 2 / (e * e));
  for (uint32_t k = 1; k <= RDT_BATCH_N_STRATEGIES; k++) {
    sqlite3_str_appendf(o, "%s\"%s\":", k > 1 ? "," : "", rdt_batch_strategy_name(k));
    if (isfinite(factor[k - 1])) sqlite3_str_appendf(o, "%!.17g", factor[k - 1]);
    else sqlite3_str_appendall(o, "null");
  }
  sqlite3_str_appendf(o, "},\"seeded\":%s,\"predictions\":{", st->seeded ? "true" : "false");
  for (uint32_t q = 0; q < st->n; q++) {
    const int64_t *v = votes + (size_t)q * C;
    uint32_t best = 0;
    for (uint32_t c = 1; c < C; c++)
      if (v[c] > v[best]) best = c;
    const char *id = (const char *)sqlite3_value_text(st->ids[q]);
    if (q) sqlite3_str_appendchar(o, 1, ',');
    rdt_sql_json_string(o, id ? id : "", id ? (size_t)sqlite3_value_bytes(st->ids[q]) : 0);
    sqlite3_str_appendchar(o, 1, ':');
    rdt_sql_json_value(o, &f->schema.classes[best]);
  }
  sqlite3_str_appendall(o, "}}");
  free(votes);
  batch_cleanup(st);
  int n = sqlite3_str_length(o);
  char *out = sqlite3_str_finish(o);
  if (!out) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, out, n, sqlite3_free);
}
