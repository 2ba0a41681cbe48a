/*
** sql_check_report.c - rdt_check_report(options, query): rdt_check's report
** as rows, readable in the shell (.mode box) where the JSON is one line:
**
**   SELECT * FROM rdt_check_report((SELECT o FROM opts), 'SELECT * FROM patients');
**
** Contract:
**   1. NOT PRIVATE, never charged, direct use only: exactly rdt_check's
**      (sql_check.c): the rows are made from the JSON report of
**      rdt_check(options, query) (rdt_check_run), so the two never disagree.
**   2. Columns: kind, name, type, missing, clamped, other, detail. Rows, in
**      this order:
**        kind 'rows'     type the task; detail: read, kept, dropped and why;
**        kind 'unit'     (with "privacy_unit") name the column; detail: the
**                        units, the rows the cap drops, epsilon per row;
**        kind 'label'    name the label column, type 'classes' or 'target';
**                        detail: rows per class, or the clamped targets;
**        kind 'feature'  one per feature, in the options' order: type
**                        numeric or categorical; missing = missing_share
**                        (numeric: NULL or not a number) or null_share
**                        (categorical), clamped = clamped_share (numeric,
**                        public bounds), other = other_share (categorical);
**                        detail: TEXT that looks numeric, the commonest odd
**                        values, private bounds (NULL when nothing to say);
**        kind 'ignored'  one per query column training ignores, by name;
**        kind 'warning'  one per warning, its sentence in detail (each kind
**                        of feature warning said once, sql_check.c item 7).
**      Shares are REAL over the kept rows (4 decimals), NULL where they do
**      not apply.
**   3. Errors are rdt_check's, named "rdt_check_report: ...", raised before
**      any row is read (and a query failing while it runs); a missing
**      argument is an error.
**   4. SQLITE_VTAB_DIRECTONLY, as rdt_check itself: it reads private rows
**      and prepares the caller's query outside the statement naming it.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "rdt_sql.h"

enum { COL_KIND, COL_NAME, COL_TYPE, COL_MISSING, COL_CLAMPED, COL_OTHER, COL_DETAIL, COL_OPTIONS, COL_QUERY };
#define ARG_OPTIONS 1
#define ARG_QUERY 2
#define SHOWN_VALUES 3 /* odd values shown in a feature's detail */

typedef struct {
  const char *kind;
  char *name, *type, *detail; /* sqlite3_malloc'd or NULL */
  double share[3];            /* missing, clamped, other; NaN: NULL */
} report_row;

typedef struct {
  sqlite3_vtab base;
  sqlite3 *db;
} report_vtab;

typedef struct {
  sqlite3_vtab_cursor base;
  report_row *rows;
  sqlite3_int64 n, cap, at;
  int oom;
} report_cursor;

static int report_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)aux;
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(kind TEXT, name TEXT, type TEXT, missing REAL, clamped REAL, "
                                    "other REAL, detail TEXT, options HIDDEN, query HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  report_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->db = db;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY); /* contract 4 */
  *out = &v->base;
  return SQLITE_OK;
}

static int report_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int report_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  return rdt_sql_two_args_best_index(info, COL_OPTIONS, 20);
}

static int report_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  report_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(report_cursor *c) {
  for (sqlite3_int64 i = 0; i < c->n; i++) {
    sqlite3_free(c->rows[i].name);
    sqlite3_free(c->rows[i].type);
    sqlite3_free(c->rows[i].detail);
  }
  free(c->rows);
  c->rows = NULL;
  c->n = c->cap = c->at = 0;
  c->oom = 0;
}

static int report_close(sqlite3_vtab_cursor *cur) {
  cursor_reset((report_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* ---- the rows, from the report's JSON ---------------------------------------- */

static const rdt_json *member(const rdt_json *o, const char *key) { return o ? rdt_json_get(o, key) : NULL; }

static double number(const rdt_json *o, const char *key) {
  const rdt_json *v = member(o, key);
  return v && v->type == RDT_JSON_NUMBER ? v->number : NAN;
}

static long long count(const rdt_json *o, const char *key) {
  const rdt_json *v = member(o, key);
  return v && v->type == RDT_JSON_NUMBER ? (long long)v->number : 0;
}

static const char *text(const rdt_json *o, const char *key) {
  const rdt_json *v = member(o, key);
  return v && v->type == RDT_JSON_STRING ? v->string : NULL;
}

/* Appends a row (strings copied; detail taken over: a finished sqlite3_str or NULL). */
static void add_row(report_cursor *c, const char *kind, const char *name, const char *type, double missing,
                    double clamped, double other, char *detail) {
  if (c->n == c->cap) {
    sqlite3_int64 cap = c->cap ? 2 * c->cap : 16;
    report_row *r = realloc(c->rows, (size_t)cap * sizeof *r);
    if (!r) {
      c->oom = 1;
      sqlite3_free(detail);
      return;
    }
    c->rows = r;
    c->cap = cap;
  }
  report_row *r = &c->rows[c->n++];
  r->kind = kind;
  r->name = name ? sqlite3_mprintf("%s", name) : NULL;
  r->type = type ? sqlite3_mprintf("%s", type) : NULL;
  r->detail = detail;
  r->share[0] = missing;
  r->share[1] = clamped;
  r->share[2] = other;
  if ((name && !r->name) || (type && !r->type)) c->oom = 1;
}

/* A finished sqlite3_str's text, NULL when empty; c->oom when memory ran out. */
static char *finish(report_cursor *c, sqlite3_str *s) {
  if (sqlite3_str_errcode(s) == SQLITE_NOMEM) c->oom = 1;
  return sqlite3_str_finish(s);
}

/* "; <head> 'a' (3 rows), 7 (1 row)" for the first SHOWN_VALUES of a list of odd values. */
static void odd_values(sqlite3_str *d, const rdt_json *list, const char *head) {
  if (!list || list->type != RDT_JSON_ARRAY || list->n == 0) return;
  sqlite3_str_appendf(d, "%s%s ", sqlite3_str_length(d) ? "; " : "", head);
  for (size_t i = 0; i < list->n && i < SHOWN_VALUES; i++) {
    const rdt_json *v = member(list->items[i], "value");
    const char *type = text(list->items[i], "type");
    long long rows = count(list->items[i], "rows");
    if (i) sqlite3_str_appendall(d, ", ");
    if (type && strcmp(type, "blob") == 0) sqlite3_str_appendall(d, "a BLOB");
    else if (v && v->type == RDT_JSON_STRING) sqlite3_str_appendf(d, "'%s'", v->string);
    else if (v && v->type == RDT_JSON_NUMBER && v->is_integer) sqlite3_str_appendf(d, "%lld", v->integer);
    else if (v && v->type == RDT_JSON_NUMBER) sqlite3_str_appendf(d, "%!.15g", v->number);
    sqlite3_str_appendf(d, " (%lld row%s)", rows, rows == 1 ? "" : "s");
  }
  if (list->n > SHOWN_VALUES) sqlite3_str_appendf(d, ", ... (%lld listed)", (long long)list->n);
}

static void rows_from_report(report_cursor *c, const rdt_json *r) {
  const rdt_json *rows = member(r, "rows"), *label = member(r, "label"), *unit = member(r, "privacy_unit");
  int regression = text(r, "task") && strcmp(text(r, "task"), "regression") == 0;
  sqlite3_str *d = sqlite3_str_new(NULL);
  sqlite3_str_appendf(d, "%lld read, %lld kept, %lld dropped", count(rows, "read"), count(rows, "kept"),
                      count(rows, "dropped"));
  if (regression)
    sqlite3_str_appendf(d, " (target NULL: %lld, not a number: %lld)", count(rows, "dropped_target_null"),
                        count(rows, "dropped_target_not_a_number"));
  else
    sqlite3_str_appendf(d, " (label NULL: %lld, not in \"classes\": %lld)", count(rows, "dropped_label_null"),
                        count(rows, "dropped_label_not_in_classes"));
  if (member(rows, "diprime_sample")) sqlite3_str_appendf(d, "; DiPriMe trains on %lld", count(rows, "diprime_sample"));
  sqlite3_str_appendf(d, "; algorithm %s", text(r, "algorithm") ? text(r, "algorithm") : "?");
  add_row(c, "rows", NULL, text(r, "task"), NAN, NAN, NAN, finish(c, d));

  if (unit && unit->type == RDT_JSON_OBJECT) {
    d = sqlite3_str_new(NULL);
    sqlite3_str_appendf(d, "%lld units, at most %lld rows each: the cap drops %lld of %lld rows, %lld rows have a NULL "
                           "unit; epsilon %!.6g, per kept row ", count(unit, "units"), count(unit, "max_rows_per_unit"),
                        count(unit, "dropped_by_cap"), count(unit, "rows_in_units"), count(unit, "dropped_unit_null"),
                        number(unit, "epsilon"));
    double per_row = number(unit, "epsilon_per_row");
    if (per_row == per_row) sqlite3_str_appendf(d, "%!.6g", per_row);
    else sqlite3_str_appendall(d, "none (not private)");
    add_row(c, "unit", text(unit, "column"), NULL, NAN, NAN, NAN, finish(c, d));
  }

  d = sqlite3_str_new(NULL);
  if (regression) {
    sqlite3_str_appendf(d, "target in [%!.15g, %!.15g]: %lld clamped (below: %lld, above: %lld)", number(label, "min"),
                        number(label, "max"), count(label, "clamped"), count(label, "below_min"),
                        count(label, "above_max"));
    odd_values(d, member(label, "values_not_numbers"), "not numbers:");
  } else {
    const rdt_json *per = member(label, "rows_per_class");
    sqlite3_str_appendall(d, "kept rows per class:");
    for (size_t i = 0; per && per->type == RDT_JSON_ARRAY && i < per->n; i++) {
      const rdt_json *cls = member(per->items[i], "class");
      if (cls && cls->type == RDT_JSON_STRING) sqlite3_str_appendf(d, "%s '%s': %lld", i ? "," : "", cls->string,
                                                                   count(per->items[i], "rows"));
      else if (cls) sqlite3_str_appendf(d, "%s %lld: %lld", i ? "," : "", cls->integer, count(per->items[i], "rows"));
    }
    odd_values(d, member(label, "values_not_in_classes"), "not in \"classes\":");
  }
  if (count(label, "text_numeric"))
    sqlite3_str_appendf(d, "; TEXT that looks numeric: %lld", count(label, "text_numeric"));
  add_row(c, "label", text(label, "name"), regression ? "target" : "classes", NAN, NAN, NAN, finish(c, d));

  const rdt_json *features = member(r, "features");
  for (size_t j = 0; features && features->type == RDT_JSON_ARRAY && j < features->n; j++) {
    const rdt_json *f = features->items[j];
    int numeric = text(f, "type") && strcmp(text(f, "type"), "numeric") == 0;
    d = sqlite3_str_new(NULL);
    if (count(f, "text_numeric")) sqlite3_str_appendf(d, "TEXT that looks numeric: %lld", count(f, "text_numeric"));
    odd_values(d, member(f, numeric ? "values_not_numbers" : "values_not_in_values"),
               numeric ? "not numbers:" : "not in \"values\":");
    const rdt_json *pb = member(f, "private_bounds");
    if (pb)
      sqlite3_str_appendf(d, "%sprivate bounds: %lld rows with a number (reliable from %lld)",
                          sqlite3_str_length(d) ? "; " : "", count(pb, "rows_with_a_number"),
                          count(pb, "reliable_from_rows"));
    char *detail = finish(c, d);
    add_row(c, "feature", text(f, "name"), text(f, "type"), number(f, numeric ? "missing_share" : "null_share"),
            numeric ? number(f, "clamped_share") : NAN, numeric ? NAN : number(f, "other_share"), detail);
  }

  const rdt_json *ignored = member(r, "ignored_columns");
  for (size_t i = 0; ignored && ignored->type == RDT_JSON_ARRAY && i < ignored->n; i++)
    if (ignored->items[i]->type == RDT_JSON_STRING)
      add_row(c, "ignored", ignored->items[i]->string, NULL, NAN, NAN, NAN,
              sqlite3_mprintf("neither the label, a feature nor the unit: training ignores it"));

  const rdt_json *warnings = member(r, "warnings");
  for (size_t i = 0; warnings && warnings->type == RDT_JSON_ARRAY && i < warnings->n; i++)
    if (warnings->items[i]->type == RDT_JSON_STRING)
      add_row(c, "warning", NULL, NULL, NAN, NAN, NAN, sqlite3_mprintf("%s", warnings->items[i]->string));
}

static int fail(sqlite3_vtab_cursor *cur, char *msg) {
  sqlite3_free(cur->pVtab->zErrMsg);
  cur->pVtab->zErrMsg = msg ? sqlite3_mprintf("rdt_check_report: %s", msg) : NULL;
  sqlite3_free(msg);
  return cur->pVtab->zErrMsg ? SQLITE_ERROR : SQLITE_NOMEM;
}

static int report_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv) {
  (void)idx_str;
  (void)argc;
  report_cursor *c = (report_cursor *)cur;
  report_vtab *v = (report_vtab *)cur->pVtab;
  cursor_reset(c);
  if (idx != (ARG_OPTIONS | ARG_QUERY))
    return fail(cur, sqlite3_mprintf("expected rdt_check_report(options, query), as rdt_check(options, query)"));
  char err[512] = "";
  int rc;
  char *json = rdt_check_run(v->db, argv[0], argv[1], &rc, err, sizeof err);
  if (!json) return rc == SQLITE_ERROR ? fail(cur, sqlite3_mprintf("%s", err)) : rc;
  char jerr[64];
  rdt_json *report = rdt_json_parse(json, strlen(json), jerr, sizeof jerr);
  sqlite3_free(json);
  if (!report) return SQLITE_NOMEM; /* our own JSON: only memory can fail */
  rows_from_report(c, report);
  rdt_json_free(report);
  return c->oom ? SQLITE_NOMEM : SQLITE_OK;
}

static int report_next(sqlite3_vtab_cursor *cur) {
  ((report_cursor *)cur)->at++;
  return SQLITE_OK;
}

static int report_eof(sqlite3_vtab_cursor *cur) {
  report_cursor *c = (report_cursor *)cur;
  return c->at >= c->n;
}

static int report_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((report_cursor *)cur)->at;
  return SQLITE_OK;
}

static void result_text(sqlite3_context *ctx, const char *s) {
  if (s) sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
  else sqlite3_result_null(ctx);
}

static int report_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  report_cursor *c = (report_cursor *)cur;
  const report_row *r = &c->rows[c->at];
  switch (col) {
    case COL_KIND: result_text(ctx, r->kind); break;
    case COL_NAME: result_text(ctx, r->name); break;
    case COL_TYPE: result_text(ctx, r->type); break;
    case COL_MISSING:
    case COL_CLAMPED:
    case COL_OTHER: {
      double x = r->share[col - COL_MISSING];
      if (x == x) sqlite3_result_double(ctx, x);
      else sqlite3_result_null(ctx);
      break;
    }
    case COL_DETAIL: result_text(ctx, r->detail); break;
    default: sqlite3_result_null(ctx); break; /* the hidden arguments are not echoed */
  }
  return SQLITE_OK;
}

static sqlite3_module report_module = {
    .iVersion = 0,
    .xConnect = report_connect,
    .xBestIndex = report_best_index,
    .xDisconnect = report_disconnect,
    .xOpen = report_open,
    .xClose = report_close,
    .xFilter = report_filter,
    .xNext = report_next,
    .xEof = report_eof,
    .xColumn = report_column,
    .xRowid = report_rowid,
};

int rdt_register_check_report(sqlite3 *db) { return sqlite3_create_module(db, "rdt_check_report", &report_module, NULL); }
