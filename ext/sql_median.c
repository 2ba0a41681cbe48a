/*
** sql_median.c - the dp_median_split(x, epsilon, lo, hi [, options])
** aggregate: an eps-DP quantile of x within public bounds (core: median.h).
**
** Parameters (epsilon, lo, hi, options) are read and validated on the first
** row; a mistake there is an error before any value is used. Row rules: NULL
** and non-numeric values are skipped (as SQL aggregates skip NULL); numbers
** are clamped into [lo, hi]. One pass, memory O(cells).
** The aggregate is the exploratory form: with no rows it never sees its
** parameters and fails, which reveals emptiness, so it refuses "ledger"
** (charged quantiles go through dp_quantile, sql_fit.c, which sees its
** options first and answers an empty input with a draw).
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/median.h"
#include "core/options.h"
#include "rdt_sql.h"

#define MEDIAN_DEFAULT_CELLS 65536u

typedef struct median_state {
  int started, failed;
  char ledger[129];
  rdt_eps eps;
  uint32_t quantile_a;
  int seeded;
  unsigned char seed_key[RDT_RNG_KEYBYTES];
  rdt_median m;
} median_state;

static void median_error(sqlite3_context *ctx, median_state *st, const char *msg) {
  rdt_sql_error(ctx, "dp_median_split", msg);
  st->failed = 1;
}

static int number_arg(sqlite3_value *v, double *out) {
  int t = sqlite3_value_numeric_type(v);
  if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) return 0;
  *out = sqlite3_value_double(v);
  return isfinite(*out);
}

static int median_options(sqlite3_context *ctx, median_state *st, sqlite3_value *v, uint32_t *cells) {
  char err[256];
  *cells = MEDIAN_DEFAULT_CELLS;
  st->quantile_a = RDT_QUANTILE_ONE / 2;
  if (!v || sqlite3_value_type(v) == SQLITE_NULL) return 1;
  if (sqlite3_value_type(v) != SQLITE_TEXT) {
    snprintf(err, sizeof err, "options must be a JSON object as TEXT%s", rdt_sql_blob_hint(v, 1));
    median_error(ctx, st, err);
    return 0;
  }
  rdt_json *root = rdt_json_parse((const char *)sqlite3_value_text(v), (size_t)sqlite3_value_bytes(v), err,
                                  sizeof err);
  if (!root || root->type != RDT_JSON_OBJECT) {
    char msg[300];
    snprintf(msg, sizeof msg, "options must be a JSON object%s%s", root ? "" : ": ", root ? "" : err);
    rdt_json_free(root);
    median_error(ctx, st, msg);
    return 0;
  }
  const char *problem = NULL;
  char buf[200];
  for (size_t i = 0; i < root->n && !problem; i++) {
    const rdt_json *j = root->items[i];
    if (strcmp(j->key, "quantile") == 0) {
      double q = j->type == RDT_JSON_NUMBER ? j->number : -1;
      double a = nearbyint(q * RDT_QUANTILE_ONE);
      if (!(q > 0 && q < 1) || a < 1 || a >= RDT_QUANTILE_ONE) problem = "\"quantile\" must be a number strictly between 0 and 1";
      else st->quantile_a = (uint32_t)a;
    } else if (strcmp(j->key, "cells") == 0) {
      if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < 2 || j->integer > RDT_MEDIAN_MAX_CELLS)
        problem = "\"cells\" must be an integer from 2 to 16777216";
      else *cells = (uint32_t)j->integer;
    } else if (strcmp(j->key, "ledger") == 0) {
      if (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len >= sizeof st->ledger)
        problem = "\"ledger\" must be the name of an rdt_ledger table (1 to 128 characters)";
      else memcpy(st->ledger, j->string, j->string_len + 1);
    } else if (strcmp(j->key, "seed") == 0) {
      if (!rdt_options_seed_key(j, "median-seed", st->seed_key)) problem = "\"seed\" must be an integer or a string";
      st->seeded = 1;
    } else {
      snprintf(buf, sizeof buf, "unknown option \"%.100s\"", j->key);
      problem = buf;
    }
  }
  rdt_json_free(root);
  if (problem) {
    median_error(ctx, st, problem);
    return 0;
  }
  return 1;
}

static int median_start(sqlite3_context *ctx, median_state *st, int argc, sqlite3_value **argv) {
  double eps, lo, hi;
  uint32_t cells;
  if (argc != 4 && argc != 5) {
    median_error(ctx, st, "expected dp_median_split(x, epsilon, lo, hi [, options])");
    return 0;
  }
  if (!number_arg(argv[1], &eps) || !rdt_eps_from_double(eps, &st->eps)) {
    median_error(ctx, st, "epsilon must be a number from 1e-06 to 1e+06");
    return 0;
  }
  if (!number_arg(argv[2], &lo) || !number_arg(argv[3], &hi) || !(lo < hi) || !isfinite(hi - lo)) {
    median_error(ctx, st, "lo and hi must be finite numbers with lo < hi (the public bounds of x)");
    return 0;
  }
  if (!median_options(ctx, st, argc == 5 ? argv[4] : NULL, &cells)) return 0;
  if (st->ledger[0]) { /* header: an aggregate cannot be charged for an empty input */
    median_error(ctx, st, "\"ledger\" needs dp_quantile(options, query): the dp_median_split aggregate sees its "
                          "options only with its first row, so an empty input could never be charged; dp_quantile "
                          "charges first");
    return 0;
  }
  if (!rdt_median_init(&st->m, lo, hi, cells)) {
    median_error(ctx, st, "out of memory");
    return 0;
  }
  st->started = 1;
  return 1;
}

void rdt_median_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  median_state *st = sqlite3_aggregate_context(ctx, sizeof *st);
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (st->failed) return;
  if (!st->started && !median_start(ctx, st, argc, argv)) return;
  double x;
  if (!rdt_sql_number(argv[0], &x)) return; /* NULL, BLOB, non-numeric TEXT, NaN: skipped */
  rdt_median_add(&st->m, x);
}

void rdt_median_final(sqlite3_context *ctx) {
  median_state *st = sqlite3_aggregate_context(ctx, 0);
  if (!st || (!st->started && !st->failed)) {
    sqlite3_result_error(ctx,
                         "dp_median_split: no rows reached dp_median_split, so its parameters were never seen; "
                         "write FROM (SELECT 1) LEFT JOIN t ON 1 to take the median of a possibly empty table",
                         -1);
    return;
  }
  if (st->failed) {
    rdt_median_free(&st->m);
    return;
  }
  rdt_rng rng;
  if (st->seeded) rdt_rng_init_seeded(&rng, st->seed_key);
  else rdt_rng_init_os(&rng);
  double out;
  int ok = rdt_median_release(&st->m, &rng, st->eps, st->quantile_a, &out);
  rdt_rng_clear(&rng);
  sodium_memzero(st->m.hist, (size_t)st->m.cells * sizeof *st->m.hist); /* exact counts are private */
  rdt_median_free(&st->m);
  sodium_memzero(st->seed_key, sizeof st->seed_key);
  if (!ok) sqlite3_result_error(ctx, "dp_median_split: out of memory", -1);
  else sqlite3_result_double(ctx, out);
}
