/*
** sql_fit.c - rdt_fit(options, query) and dp_quantile(options, query): the
** mechanisms that see their options before, and independently of, the rows.
**
** Contract:
**   1. Both arguments are parameters. Mistakes in them (options, a query
**      that does not prepare, is not one read-only statement, lacks a column
**      or returns one twice) are errors raised before any row is read.
**   2. The ledger named in the options is charged, and the charge committed,
**      after those checks and before the query's first step: an empty result,
**      a result of any size and an error while the query runs all cost the
**      same ε.
**   3. An empty result is not an error: rdt_fit returns a model of noise
**      alone, dp_quantile a draw of the mechanism.
**   4. rdt_fit binds result columns by name (sql_columns.c): "label" (or
**      options.label) is the label, and every feature is the column of its
**      name (case ignored, as SQL does), in any order. Any other column is
**      ignored, as rdt_check and rdt_evaluate ignore it, and named in the
**      ledger's request ("ignored_columns"), so one SELECT * with an id
**      serves all three; a feature without its column is still an error.
**      What is ignored follows from the column names, before any row.
**      dp_quantile reads the query's only column.
**   5. Row values follow the data-independent rules of sql/reference.md;
**      they never cause an error.
**   6. With "privacy_unit" (both functions) the unit column is bound by name
**      too, is not a feature, and the rows are read bounded: at most
**      "max_rows_per_unit" per unit, the rest dropped at random (sql_unit.c,
**      unit.h); every mechanism runs with ε divided by that cap.
**   7. With "bounds": "private" (rdt_fit), the query runs twice after the
**      charge: once for the private bounds (bounds.h, their share of ε),
**      then for the model, built on those bounds.
**   8. After a charge, the call's outcome is recorded in the ledger
**      (sql_ledger.c, item 8) before the result is returned: a release whose
**      outcome cannot be recorded is not returned.
** An interrupt (sql_cancel.h) stops it like an error: nothing is released
** and a committed charge stands.
** Residual channel: the query is run as given. Its running time, and whether
** it fails while it runs (an integer overflow on some row, say), can depend
** on any value it reads, after the charge; the charge stands. So a ledger
** binds only when the queries are the curator's (docs/privacy.md,
** "Residual channels"); a caller who can run SQL can read the rows anyway.
**
** The statement runs on the calling connection, whose mutex this thread
** holds for the whole call, so its column values are read in place (the
** protection sqlite3_value_dup would add is that same mutex).
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bounds.h"
#include "core/json.h"
#include "core/median.h"
#include "core/options.h"
#include "sql_train.h"
#include "sql_unit.h"

/* Prepares one read-only statement; 0 with a message otherwise (sql_train.h). */
sqlite3_stmt *rdt_fit_prepare_query(sqlite3 *db, sqlite3_value *arg, char *err, size_t en) {
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_value_type(arg) != SQLITE_TEXT) {
    snprintf(err, en, "the second argument must be the query, one SELECT as TEXT");
    return NULL;
  }
  const char *sql = (const char *)sqlite3_value_text(arg);
  if (!sql) {
    snprintf(err, en, "out of memory");
    return NULL;
  }
  if (!(stmt = rdt_sql_prepare_select(db, sql, sqlite3_value_bytes(arg), "the query", err, en))) return NULL;
  if (sqlite3_column_count(stmt) == 0) { /* e.g. a PRAGMA that returns nothing */
    snprintf(err, en, "the query must be one read-only SELECT");
    sqlite3_finalize(stmt);
    return NULL;
  }
  return stmt;
}

/* ---- rdt_fit ---------------------------------------------------------------- */

/* Maps result columns to the label (*label_col), the features (col[j]) and
** the unit column (*unit_col; unit "": none, -1) by name (sql_columns.c);
** the other columns are ignored and listed in *ignored (contract 4). */
int rdt_fit_bind_columns(sqlite3_stmt *stmt, const rdt_schema *s, const char *label, const char *unit, int *label_col,
                         int *unit_col, int *col, char **ignored, char *err, size_t en) {
  const char *roles[2] = {label, unit};
  int at[2];
  if (!rdt_sql_bind_columns(stmt, s, roles, 2, at, col, ignored, NULL, err, en)) return 0;
  *label_col = at[0];
  *unit_col = unit[0] ? at[1] : -1;
  if (*label_col < 0)
    snprintf(err, en, "the query returns no label column \"%.100s\" (name it with AS, or set \"label\")", label);
  else if (unit[0] && *unit_col < 0)
    snprintf(err, en, "the query returns no column \"%.100s\" for \"privacy_unit\" (name it with AS)", unit);
  else
    return 1;
  sqlite3_free(*ignored);
  *ignored = NULL;
  return 0;
}

/* "bounds": "private" (bounds.h): one pass over the (bounded) rows counts
** every such feature's numbers on the public grid; then two quantile
** releases each set its bounds. After the charge, before the build. */
static int estimate_bounds(rdt_train_session *s, rdt_unit_reader *rd, sqlite3 *db, const int *col, char *err,
                           size_t en) {
  const rdt_unit *u = rdt_train_unit(s);
  uint32_t m = u->n_private, at = 0;
  rdt_median *h = calloc(m, sizeof *h);
  uint32_t *feature = calloc(m, sizeof *feature);
  int ok = h && feature;
  for (uint32_t j = 0; ok && j < rdt_train_schema(s)->n_features; j++)
    if (rdt_unit_is_private(u, j)) {
      feature[at] = j;
      ok = rdt_bounds_init(&h[at++]);
    }
  if (!ok) snprintf(err, en, "out of memory while counting for the private bounds");
  if (ok) rdt_unit_reader_start(rd, rdt_train_seed_key(s), "unit-bound-bounds");
  while (ok && rdt_unit_reader_step(rd, db, err, en))
    for (uint32_t i = 0; i < m; i++) {
      double x; /* NULL, BLOB, non-numeric TEXT, NaN: not counted (bounds.h, rule 5) */
      if (rdt_sql_number(sqlite3_column_value(rd->stmt, col[feature[i]]), &x)) rdt_bounds_add(&h[i], x);
    }
  if (ok && rd->rc != SQLITE_DONE) ok = 0;
  if (ok) {
    rdt_rng rng;
    rdt_rng_init_for(&rng, rdt_train_seed_key(s), "private-bounds", 0);
    for (uint32_t i = 0; ok && i < m; i++) {
      double lo, hi;
      ok = rdt_bounds_release(&h[i], &rng, u->eps_quantile, &lo, &hi) && rdt_train_set_bounds(s, feature[i], lo, hi);
    }
    rdt_rng_clear(&rng);
    if (!ok) snprintf(err, en, "the noise of the private bounds could not be set up; nothing was released");
  }
  for (uint32_t i = 0; h && i < m; i++) { /* exact counts are private */
    if (h[i].hist) sodium_memzero(h[i].hist, (size_t)h[i].cells * sizeof *h[i].hist);
    rdt_median_free(&h[i]);
  }
  free(h);
  free(feature);
  return ok;
}

void rdt_fit_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char err[512] = "";
  sqlite3_stmt *stmt = NULL;
  sqlite3_value **vals = NULL;
  rdt_unit_reader rd;
  memset(&rd, 0, sizeof rd);
  int *col = NULL, label_col = -1, unit_col = -1, ok = 0, rc = SQLITE_DONE;
  char *ignored = NULL;
  unsigned char *blob = NULL;
  size_t size = 0;
  rdt_train_session *s = rdt_train_session_new();
  if (!s) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT || !sqlite3_value_text(argv[0])) {
    snprintf(err, sizeof err, "the first argument must be the options, a JSON object as TEXT%s",
             rdt_sql_blob_hint(argv[0], 0));
    goto done;
  }
  if (!rdt_train_configure(s, db, (const char *)sqlite3_value_text(argv[0]), (size_t)sqlite3_value_bytes(argv[0]),
                           err, sizeof err) ||
      !(stmt = rdt_fit_prepare_query(db, argv[1], err, sizeof err)))
    goto done;
  uint32_t nf = rdt_train_schema(s)->n_features;
  col = malloc(nf * sizeof *col);
  vals = malloc(nf * sizeof *vals);
  if (!col || !vals) {
    snprintf(err, sizeof err, "out of memory");
    goto done;
  }
  const rdt_unit *unit = rdt_train_unit(s);
  if (!rdt_fit_bind_columns(stmt, rdt_train_schema(s), rdt_train_label_name(s), unit->column, &label_col, &unit_col,
                            col, &ignored, err, sizeof err))
    goto done;
  ok = rdt_unit_reader_open(&rd, db, stmt, unit_col, unit->max_rows, err, sizeof err);
  stmt = NULL; /* the reader's now */
  if (!ok || !rdt_train_charge(s, db, sqlite3_user_data(ctx), "rdt_fit", ignored, NULL, err, sizeof err) ||
      (unit->n_private && !estimate_bounds(s, &rd, db, col, err, sizeof err)) ||
      !rdt_train_build(s, db, err, sizeof err)) {
    ok = 0;
    rc = rd.rc;
    goto done;
  }
  rdt_unit_reader_start(&rd, rdt_train_seed_key(s), "unit-bound-model");
  while (ok && rdt_unit_reader_step(&rd, db, err, sizeof err)) {
    for (uint32_t j = 0; j < nf; j++) vals[j] = sqlite3_column_value(rd.stmt, col[j]);
    ok = rdt_train_row(s, sqlite3_column_value(rd.stmt, label_col), vals, err, sizeof err);
  }
  rc = rd.rc;
  if (ok && rc != SQLITE_DONE) ok = 0; /* the reader said why */
  rdt_unit_reader_close(&rd); /* before the noise: the statement holds its read */
  if (ok) blob = rdt_train_finish(s, &size, err, sizeof err);
done:
  rdt_unit_reader_close(&rd);
  sqlite3_finalize(stmt);
  sqlite3_free(ignored);
  free(vals);
  free(col);
  {
    char rerr[400];
    if (!rdt_train_record(s, blob, size, rerr, sizeof rerr) && blob) {
      free(blob); /* Contract item 8 */
      blob = NULL;
      rc = SQLITE_DONE;
      snprintf(err, sizeof err, "the model was trained but not released: %s (the charge stands)", rerr);
    }
  }
  /* Interrupted while drawing the trees, adding the noise or encoding
  ** (sql_cancel.h): nothing was released, the charge stands. */
  int interrupted = !blob && rdt_train_interrupted(s, ctx);
  rdt_train_session_free(s);
  if (blob) sqlite3_result_blob64(ctx, blob, size, free);
  else if (interrupted) return;
  else if (rc == SQLITE_INTERRUPT) sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else rdt_sql_error(ctx, "rdt_fit", err);
}

/* ---- dp_quantile ------------------------------------------------------------- */

#define QUANTILE_DEFAULT_CELLS 65536u

typedef struct quantile_options {
  rdt_eps eps, eps_row; /* eps_row: per row, eps / max_rows_per_unit (unit.h) */
  char unit[RDT_MAX_NAME + 1];
  uint32_t max_rows;
  double lo, hi;
  uint32_t quantile_a, cells;
  char ledger[129];
  char note[RDT_NOTE_MAX + 1];
  int seeded;
  unsigned char seed_key[RDT_RNG_KEYBYTES];
} quantile_options;

static int quantile_parse(sqlite3_value *v, quantile_options *o, char *err, size_t en) {
  static const char *const keys[] = {"epsilon", "lo", "hi", "quantile", "cells", "ledger", "seed", "privacy_unit",
                                     "max_rows_per_unit", "note", NULL};
  o->quantile_a = RDT_QUANTILE_ONE / 2;
  o->cells = QUANTILE_DEFAULT_CELLS;
  if (sqlite3_value_type(v) != SQLITE_TEXT || !sqlite3_value_text(v)) {
    snprintf(err, en, "the first argument must be the options, a JSON object as TEXT%s", rdt_sql_blob_hint(v, 0));
    return 0;
  }
  char jerr[128];
  rdt_json *root = rdt_json_parse((const char *)sqlite3_value_text(v), (size_t)sqlite3_value_bytes(v), jerr, sizeof jerr);
  if (!root || root->type != RDT_JSON_OBJECT) {
    snprintf(err, en, "options must be a JSON object%s%s", root ? "" : ": ", root ? "" : jerr);
    rdt_json_free(root);
    return 0;
  }
  int ok = 1;
  for (size_t i = 0; ok && i < root->n; i++) {
    int known = 0;
    for (const char *const *k = keys; *k; k++) known |= strcmp(root->items[i]->key, *k) == 0;
    if (!known) {
      snprintf(err, en, "unknown option \"%.100s\" (epsilon, lo, hi, quantile, cells, ledger, seed, privacy_unit, "
               "max_rows_per_unit, note)", root->items[i]->key);
      ok = 0;
    }
  }
  const rdt_json *j = rdt_json_get(root, "epsilon");
  if (ok && (!j || j->type != RDT_JSON_NUMBER || !rdt_eps_from_double(j->number, &o->eps))) {
    snprintf(err, en, "\"epsilon\" is required: a number from %g to %g", RDT_EPS_MIN, RDT_EPS_MAX);
    ok = 0;
  }
  const rdt_json *lo = rdt_json_get(root, "lo"), *hi = rdt_json_get(root, "hi");
  if (ok && (!lo || !hi || lo->type != RDT_JSON_NUMBER || hi->type != RDT_JSON_NUMBER || !isfinite(lo->number) ||
             !isfinite(hi->number) || !(lo->number < hi->number) || !isfinite(hi->number - lo->number))) {
    snprintf(err, en, "\"lo\" and \"hi\" are required: finite numbers with lo < hi (the public bounds of the values)");
    ok = 0;
  }
  if (ok) {
    o->lo = lo->number;
    o->hi = hi->number;
  }
  if (ok && (j = rdt_json_get(root, "quantile"))) {
    double q = j->type == RDT_JSON_NUMBER ? j->number : -1, a = nearbyint(q * RDT_QUANTILE_ONE);
    if (!(q > 0 && q < 1) || a < 1 || a >= RDT_QUANTILE_ONE) {
      snprintf(err, en, "\"quantile\" must be a number strictly between 0 and 1");
      ok = 0;
    } else {
      o->quantile_a = (uint32_t)a;
    }
  }
  if (ok && (j = rdt_json_get(root, "cells"))) {
    if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < 2 || j->integer > RDT_MEDIAN_MAX_CELLS) {
      snprintf(err, en, "\"cells\" must be an integer from 2 to %u", RDT_MEDIAN_MAX_CELLS);
      ok = 0;
    } else {
      o->cells = (uint32_t)j->integer;
    }
  }
  if (ok && (j = rdt_json_get(root, "ledger"))) {
    if (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len >= sizeof o->ledger) {
      snprintf(err, en, "\"ledger\" must be the name of an rdt_ledger table (1 to 128 characters)");
      ok = 0;
    } else {
      memcpy(o->ledger, j->string, j->string_len + 1);
    }
  }
  /* The privacy unit (unit.h): the mechanism runs with eps / k per row. */
  const rdt_json *u = rdt_json_get(root, "privacy_unit"), *k = rdt_json_get(root, "max_rows_per_unit");
  o->max_rows = 1;
  if (ok && u && (u->type != RDT_JSON_STRING || u->string_len == 0 || u->string_len > RDT_MAX_NAME ||
                  strlen(u->string) != u->string_len)) {
    snprintf(err, en, "\"privacy_unit\" must be the name of the column that identifies a unit (a non-empty string)");
    ok = 0;
  } else if (ok && u && !k) {
    snprintf(err, en, "\"privacy_unit\" needs \"max_rows_per_unit\": the most rows one unit may contribute (rows "
                      "beyond it are dropped at random)");
    ok = 0;
  } else if (ok && k && !u) {
    snprintf(err, en, "\"max_rows_per_unit\" applies with \"privacy_unit\" only");
    ok = 0;
  } else if (ok && k && (k->type != RDT_JSON_NUMBER || !k->is_integer || k->integer < 1 ||
                         k->integer > RDT_UNIT_MAX_ROWS)) {
    snprintf(err, en, "\"max_rows_per_unit\" must be an integer from 1 to %d", RDT_UNIT_MAX_ROWS);
    ok = 0;
  } else if (ok && u) {
    memcpy(o->unit, u->string, u->string_len + 1);
    o->max_rows = (uint32_t)k->integer;
  }
  o->eps_row.num = o->eps.num / o->max_rows;
  if (ok && o->eps_row.num == 0) {
    snprintf(err, en, "\"epsilon\" is too small for %u rows per unit", o->max_rows);
    ok = 0;
  }
  if (ok && (j = rdt_json_get(root, "seed"))) {
    o->seeded = 1;
    if (!rdt_options_seed_key(j, "median-seed", o->seed_key)) {
      snprintf(err, en, "\"seed\" must be an integer or a string");
      ok = 0;
    } else if (o->ledger[0]) {
      snprintf(err, en, "%s", rdt_seed_with_ledger_error);
      ok = 0;
    }
  }
  if (ok) ok = rdt_options_note(root, o->note, sizeof o->note, err, en);
  rdt_json_free(root);
  return ok;
}

void rdt_quantile_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char err[512] = "";
  quantile_options o;
  rdt_median m;
  memset(&o, 0, sizeof o);
  memset(&m, 0, sizeof m);
  sqlite3_stmt *stmt = NULL;
  rdt_ledger_receipt receipt = {0};
  rdt_unit_reader rd;
  memset(&rd, 0, sizeof rd);
  int ok = 0, rc = SQLITE_DONE, value_col = 0, unit_col = -1;
  double out = 0;
  if (!quantile_parse(argv[0], &o, err, sizeof err) || !(stmt = rdt_fit_prepare_query(db, argv[1], err, sizeof err)))
    goto done;
  if (!o.unit[0] && sqlite3_column_count(stmt) != 1) {
    snprintf(err, sizeof err, "the query must return one column (the values), not %d", sqlite3_column_count(stmt));
    goto done;
  }
  if (o.unit[0]) { /* the values and the unit, bound by the unit's name */
    const char *a = sqlite3_column_count(stmt) == 2 ? sqlite3_column_name(stmt, 0) : NULL;
    const char *b = a ? sqlite3_column_name(stmt, 1) : NULL;
    unit_col = b && rdt_name_equal(a, o.unit) != rdt_name_equal(b, o.unit) ? rdt_name_equal(b, o.unit) : -1;
    if (unit_col < 0) {
      snprintf(err, sizeof err, "with \"privacy_unit\", the query must return two columns: the values and the unit "
               "column \"%.100s\", named once", o.unit);
      goto done;
    }
    value_col = 1 - unit_col;
  }
  ok = rdt_unit_reader_open(&rd, db, stmt, unit_col, o.max_rows, err, sizeof err);
  stmt = NULL; /* the reader's now */
  if (!ok) goto done;
  ok = 0;
  if (!rdt_median_init(&m, o.lo, o.hi, o.cells)) {
    snprintf(err, sizeof err, "out of memory");
    goto done;
  }
  if (o.ledger[0]) {
    char note[200];
    snprintf(note, sizeof note, "quantile %g, %u cells", (double)o.quantile_a / RDT_QUANTILE_ONE, o.cells);
    if (o.unit[0])
      snprintf(note + strlen(note), sizeof note - strlen(note), ", unit \"%.60s\" (at most %u rows each)", o.unit,
               o.max_rows);
    if (!rdt_ledger_charge(db, sqlite3_user_data(ctx), o.ledger, o.eps, "dp_quantile", note, o.note, &receipt, err,
                           sizeof err))
      goto done;
  }
  /* NULL, BLOB, non-numeric TEXT and NaN are skipped (as SQL aggregates
  ** skip NULL); numbers are clamped into [lo, hi] (median.h). */
  rdt_unit_reader_start(&rd, o.seeded ? o.seed_key : NULL, "unit-bound-quantile");
  while (rdt_unit_reader_step(&rd, db, err, sizeof err)) {
    double x;
    if (rdt_sql_number(sqlite3_column_value(rd.stmt, value_col), &x)) rdt_median_add(&m, x);
  }
  rc = rd.rc;
  if (rc != SQLITE_DONE) goto done; /* the reader said why */
  rdt_unit_reader_close(&rd);
  rdt_rng rng;
  if (o.seeded) rdt_rng_init_seeded(&rng, o.seed_key);
  else rdt_rng_init_os(&rng);
  ok = rdt_median_release(&m, &rng, o.eps_row, o.quantile_a, &out);
  rdt_rng_clear(&rng);
  if (!ok) snprintf(err, sizeof err, "the noise could not be set up or memory ran out; nothing was released");
done:
  rdt_unit_reader_close(&rd);
  sqlite3_finalize(stmt);
  {
    char rerr[400];
    if (!rdt_ledger_record(&receipt, ok, NULL, 0, NULL, rerr, sizeof rerr) && ok) {
      ok = 0; /* Contract item 8 */
      rc = SQLITE_DONE;
      snprintf(err, sizeof err, "the quantile was drawn but not released: %s (the charge stands)", rerr);
    }
  }
  rdt_ledger_receipt_free(&receipt);
  if (m.hist) sodium_memzero(m.hist, (size_t)m.cells * sizeof *m.hist); /* exact counts are private */
  rdt_median_free(&m);
  sodium_memzero(&o, sizeof o);
  if (ok) sqlite3_result_double(ctx, out);
  else if (rc == SQLITE_INTERRUPT) sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else rdt_sql_error(ctx, "dp_quantile", err);
}
