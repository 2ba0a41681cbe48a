/*
** sql_features.c - rdt_features(table_or_query, label): a skeleton of the
** options of rdt_fit, written from the declared types and the distinct
** values, so a dozen features are not typed by hand.
**
** Contract:
**   1. NOT PRIVATE. It reads the private rows, and the lists it writes
**      ("classes", every categorical "values") are copied from them: each
**      is written as {"copied_from_rows": [...]}, which options.c reads as
**      the list but marks, so that a model trained on it is flagged NOT FOR
**      RELEASE (rdt_info), refused with a ledger and by rdt_sign, and
**      warned of by rdt_check; "_warning" says so. sql/reference.md too.
**   2. Numeric bounds are never taken from the rows: "min" and "max" are
**      null placeholders (an error in rdt_fit until filled) with the reason
**      in "_note". "epsilon" is a placeholder string, never null: null is a
**      legal value (a non-private model), a forgotten placeholder must fail.
**   3. Filled in, the skeleton is valid options for rdt_fit(options,
**      'SELECT * FROM table'): keys starting with "_" are comments
**      (options.c), "label" names the label column, every other column is a
**      feature, by its name, in the column order.
**   4. Distinct values are told apart by the categorical rule training
**      applies (rdt_sql_feature, sql_values.c): two values training would
**      take for one are listed once, so the list never repeats a value.
**   5. Types (sql/reference.md, "rdt_features"): a declared type naming
**      CATEG, ENUM or BOOL is categorical; INTEGER or REAL affinity is
**      numeric; any other column (TEXT, NUMERIC or no declared type) is
**      numeric when every non-NULL value is a number or TEXT that looks
**      like one, categorical otherwise. A label holding non-integer numbers
**      gets no class list but a note on regression.
**   6. Parameter mistakes (argument types, a name that is neither a table
**      nor a SELECT, no label column, a name twice, too many columns) are
**      errors raised before any row is read; row values never are.
**   7. Memory is bounded: at most FEATURES_MAX_VALUES distinct values of
**      at most FEATURES_VALUE_BYTES bytes per column, FEATURES_TOTAL_BYTES in
**      all; a column beyond them gets a null list and a note.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "rdt_sql.h"

#define FEATURES_MAX_VALUES 1000
#define FEATURES_VALUE_BYTES 256
#define FEATURES_TOTAL_BYTES (16u << 20)

typedef enum { TYPED_BY_VALUES = 0, TYPED_NUMERIC, TYPED_CATEGORICAL } declared_kind;

typedef struct column {
  const char *name;
  char decl[64];          /* the declared type, "" for none */
  declared_kind declared;
  uint64_t nonnull, numbers, text_numeric, not_numbers, blobs;
  uint64_t fractional;    /* numbers (stored or TEXT) that are not integers */
  int track;              /* distinct values are collected */
  int overflow;           /* ... but there were too many, or too long */
  rdt_feature domain;     /* the distinct values so far, with the categorical rule's index */
  rdt_value *examples;    /* not_numbers of a numeric column: the first one, for the note */
} column;

static int contains_ci(const char *s, const char *what) {
  size_t n = strlen(what);
  for (; *s; s++)
    if (sqlite3_strnicmp(s, what, (int)n) == 0) return 1;
  return 0;
}

/* Contract item 5 on the declared type (SQLite's affinity rules, in order). */
static declared_kind declared_kind_of(const char *decl) {
  if (!decl || !decl[0]) return TYPED_BY_VALUES;
  if (contains_ci(decl, "CATEG") || contains_ci(decl, "ENUM") || contains_ci(decl, "BOOL")) return TYPED_CATEGORICAL;
  if (contains_ci(decl, "INT")) return TYPED_NUMERIC;
  if (contains_ci(decl, "CHAR") || contains_ci(decl, "CLOB") || contains_ci(decl, "TEXT") || contains_ci(decl, "BLOB"))
    return TYPED_BY_VALUES;
  if (contains_ci(decl, "REAL") || contains_ci(decl, "FLOA") || contains_ci(decl, "DOUB")) return TYPED_NUMERIC;
  return TYPED_BY_VALUES; /* NUMERIC affinity: DECIMAL, DATE, ... decide by the values */
}

static void column_free(column *c) {
  if (c->domain.values)
    for (uint32_t i = 0; i < c->domain.n_values; i++) rdt_value_free(&c->domain.values[i]);
  free(c->domain.values);
  rdt_value_index_free(&c->domain.index);
  memset(&c->domain, 0, sizeof c->domain);
}

static void stop_tracking(column *c) {
  column_free(c);
  c->overflow = 1;
}

/* The listed form of v, as the categorical rule's canonical text has it:
** INTEGER and integral REAL as integers, other REAL as text, TEXT as stored. */
static int value_of(rdt_value *out, sqlite3_value *v) {
  memset(out, 0, sizeof *out);
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER: return rdt_value_set_int(out, sqlite3_value_int64(v));
    case SQLITE_FLOAT: {
      double d = sqlite3_value_double(v);
      if (d == floor(d) && fabs(d) < 9e15) return rdt_value_set_int(out, (long long)d);
      char buf[32];
      int n = snprintf(buf, sizeof buf, "%.17g", d);
      return rdt_value_set_text(out, buf, (size_t)n);
    }
    default: {
      const char *t = (const char *)sqlite3_value_text(v);
      return t && rdt_value_set_text(out, t, (size_t)sqlite3_value_bytes(v));
    }
  }
}

/* Adds v to the column's distinct values unless the categorical rule
** already maps it to one of them (contract item 4). 0: out of memory. */
static int track(column *c, sqlite3_value *v, size_t *total) {
  if (rdt_sql_feature(&c->domain, v) < (double)c->domain.n_values) return 1;
  if (c->domain.n_values == FEATURES_MAX_VALUES ||
      (sqlite3_value_type(v) == SQLITE_TEXT && sqlite3_value_bytes(v) > FEATURES_VALUE_BYTES) ||
      *total + FEATURES_VALUE_BYTES > FEATURES_TOTAL_BYTES) {
    stop_tracking(c);
    return 1;
  }
  rdt_value *vals = realloc(c->domain.values, (c->domain.n_values + 1) * sizeof *vals);
  if (!vals) return 0;
  c->domain.values = vals;
  if (!value_of(&vals[c->domain.n_values], v)) return 0;
  *total += vals[c->domain.n_values].text_len + sizeof *vals;
  c->domain.n_values++;
  rdt_value_index_free(&c->domain.index);
  uint32_t dup;
  int rc = rdt_value_index_build(&c->domain.index, c->domain.values, c->domain.n_values, &dup);
  if (rc == 0) return 0;
  if (rc < 0) stop_tracking(c); /* the rule and the listed form disagree: list nothing rather than a repeat */
  return 1;
}

/* One value of a column, before its numeric look is tested (which converts
** it in place: the categorical rule must see it as stored). */
static int observe(column *c, sqlite3_value *v, size_t *total) {
  int t = sqlite3_value_type(v);
  if (t == SQLITE_NULL) return 1;
  c->nonnull++;
  if (t == SQLITE_BLOB) {
    c->blobs++; /* always `other`: never listed */
    c->not_numbers++;
    return 1;
  }
  if (c->track && !c->overflow && !track(c, v, total)) return 0;
  if (t == SQLITE_TEXT) {
    if (!c->examples && !(c->examples = calloc(1, sizeof *c->examples))) return 0;
    int nt = sqlite3_value_numeric_type(v);
    if (nt == SQLITE_INTEGER || nt == SQLITE_FLOAT) {
      c->numbers++;
      c->text_numeric++;
      double d = sqlite3_value_double(v);
      c->fractional += (uint64_t)(nt == SQLITE_FLOAT && d != floor(d));
    } else {
      if (!c->examples->text && !value_of(c->examples, v)) return 0;
      c->not_numbers++;
    }
    return 1;
  }
  double d = sqlite3_value_double(v);
  if (t == SQLITE_FLOAT && isnan(d)) c->not_numbers++;
  else c->numbers++;
  c->fractional += (uint64_t)(t == SQLITE_FLOAT && d == d && d != floor(d));
  return 1;
}

static int is_numeric(const column *c) {
  if (c->declared != TYPED_BY_VALUES) return c->declared == TYPED_NUMERIC;
  return c->nonnull > 0 && c->numbers == c->nonnull;
}

static int value_cmp(const void *a, const void *b) {
  const rdt_value *x = a, *y = b;
  if (x->type != y->type) return x->type == RDT_VALUE_INTEGER ? -1 : 1;
  if (x->type == RDT_VALUE_INTEGER) return x->integer < y->integer ? -1 : x->integer > y->integer;
  size_t n = x->text_len < y->text_len ? x->text_len : y->text_len;
  int c = memcmp(x->text, y->text, n);
  return c ? c : (x->text_len > y->text_len) - (x->text_len < y->text_len);
}

/* The sorted list of a tracked column, or null; and its note, under the
** key note_key. */
static void write_values(sqlite3_str *o, column *c, int is_label, const char *note_key) {
  const char *what = is_label ? "labels" : "values";
  if (is_label && c->fractional) { /* a regression target, most likely: no class list */
    sqlite3_str_appendf(o, "null,\"%s\":", note_key);
    char *m = sqlite3_mprintf("%llu labels are numbers that are not integers: for a regression, replace \"classes\" by "
                              "\"task\": \"regression\" and \"target\": {\"min\": ..., \"max\": ...} (public bounds): "
                              "the default algorithm, auto, does regression (so do diprime, boost and constant); for a classification, "
                              "list the public classes", (unsigned long long)c->fractional);
    rdt_sql_json_string(o, m ? m : "", m ? strlen(m) : 0);
    sqlite3_free(m);
    return;
  }
  if (c->overflow || c->domain.n_values == 0) {
    sqlite3_str_appendf(o, "null,\"%s\":", note_key);
    char *m = c->overflow
                  ? sqlite3_mprintf("more than %d distinct %s (or one longer than %d bytes): list the public domain "
                                    "yourself; an identifier or free text is rarely a useful feature",
                                    FEATURES_MAX_VALUES, what, FEATURES_VALUE_BYTES)
                  : sqlite3_mprintf("no non-NULL value to copy: list the public domain yourself");
    rdt_sql_json_string(o, m ? m : "", m ? strlen(m) : 0);
    sqlite3_free(m);
    return;
  }
  /* The copy is marked as one (contract item 1): options.c reads the same
  ** list from {"copied_from_rows": [...]}, and a model trained on it can
  ** be neither charged nor signed until the curator writes the public list
  ** in its place. */
  qsort(c->domain.values, c->domain.n_values, sizeof *c->domain.values, value_cmp);
  sqlite3_str_appendall(o, "{\"copied_from_rows\":[");
  for (uint32_t i = 0; i < c->domain.n_values; i++) {
    if (i) sqlite3_str_appendchar(o, 1, ',');
    rdt_sql_json_value(o, &c->domain.values[i]);
  }
  sqlite3_str_appendall(o, "]}");
  if (!c->text_numeric && !c->blobs) return; /* the marker says the rest */
  sqlite3_str_appendf(o, ",\"%s\":", note_key);
  sqlite3_str *m = sqlite3_str_new(NULL);
  if (c->text_numeric && is_label)
    sqlite3_str_appendf(m, "%llu labels are TEXT that looks numeric (e.g. from .import), listed as stored",
                        (unsigned long long)c->text_numeric);
  else if (c->text_numeric)
    sqlite3_str_appendf(m, "%llu values are TEXT that looks numeric (e.g. from .import): if this is a number, make it "
                           "numeric with public bounds, non-numbers then count as missing",
                        (unsigned long long)c->text_numeric);
  if (c->blobs)
    sqlite3_str_appendf(m, "%s%llu BLOBs are not listed (a BLOB always goes to `other`)", c->text_numeric ? "; " : "",
                        (unsigned long long)c->blobs);
  int n = sqlite3_str_length(m);
  char *t = sqlite3_str_finish(m);
  rdt_sql_json_string(o, t ? t : "", t ? (size_t)n : 0);
  sqlite3_free(t);
}

static void write_numeric(sqlite3_str *o, const column *c) {
  sqlite3_str_appendall(o, ",\"type\":\"numeric\",\"min\":null,\"max\":null,\"_note\":");
  sqlite3_str *m = sqlite3_str_new(NULL);
  if (c->declared == TYPED_NUMERIC) sqlite3_str_appendf(m, "declared %s", c->decl);
  else sqlite3_str_appendf(m, "every value is a number%s", c->decl[0] ? " (declared " : "");
  if (c->declared != TYPED_NUMERIC && c->decl[0]) sqlite3_str_appendf(m, "%s)", c->decl);
  sqlite3_str_appendall(m, ". Fill \"min\" and \"max\" with PUBLIC bounds (a codebook, the instrument's range, common "
                           "knowledge), never the data's own extremes: they are private; values outside are clamped");
  if (c->text_numeric)
    sqlite3_str_appendf(m, ". %llu values are TEXT that looks numeric (e.g. from .import), converted by SQLite's numeric "
                           "affinity; if they are codes, make this categorical with public values",
                        (unsigned long long)c->text_numeric);
  if (c->not_numbers) {
    sqlite3_str_appendf(m, ". %llu non-NULL values are not numbers", (unsigned long long)c->not_numbers);
    if (c->examples && c->examples->text) sqlite3_str_appendf(m, " (e.g. '%.40s')", c->examples->text);
    sqlite3_str_appendall(m, " and count as missing (the midpoint of the bounds)");
  }
  int n = sqlite3_str_length(m);
  char *t = sqlite3_str_finish(m);
  rdt_sql_json_string(o, t ? t : "", t ? (size_t)n : 0);
  sqlite3_free(t);
}

/* The statement of table_or_query: a SELECT as given, or every column of a
** table or view ("name" or "schema.name"). NULL with err. */
static sqlite3_stmt *prepare_source(sqlite3 *db, sqlite3_value *arg, char *err, size_t en) {
  if (sqlite3_value_type(arg) != SQLITE_TEXT || !sqlite3_value_text(arg)) {
    snprintf(err, en, "the first argument must be a table name or a SELECT, as TEXT");
    return NULL;
  }
  const char *src = (const char *)sqlite3_value_text(arg);
  const char *p = src;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  static const char *const starts[] = {"SELECT", "WITH", "VALUES"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(starts[i]);
    unsigned char after = (unsigned char)p[n];
    if (sqlite3_strnicmp(p, starts[i], (int)n) == 0 && !(after == '_' || after >= 0x80 || (after >= '0' && after <= '9') ||
                                                          ((after | 0x20) >= 'a' && (after | 0x20) <= 'z')))
      return rdt_sql_prepare_select(db, src, sqlite3_value_bytes(arg), "the query", err, en);
  }
  sqlite3_stmt *stmt = NULL;
  char *sql = sqlite3_mprintf("SELECT * FROM \"%w\"", src);
  int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) : SQLITE_NOMEM;
  sqlite3_free(sql);
  const char *dot = strchr(src, '.');
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM && dot) { /* schema.table */
    sqlite3_finalize(stmt);
    stmt = NULL;
    char *schema = sqlite3_mprintf("%.*s", (int)(dot - src), src);
    sql = schema ? sqlite3_mprintf("SELECT * FROM \"%w\".\"%w\"", schema, dot + 1) : NULL;
    sqlite3_free(schema);
    rc = SQLITE_NOMEM;
    if (sql) {
      rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
      sqlite3_free(sql);
    }
  }
  if (rc == SQLITE_NOMEM) snprintf(err, en, "out of memory");
  else if (rc != SQLITE_OK)
    snprintf(err, en, "\"%.100s\" is neither a table or view nor a SELECT: %s", src, sqlite3_errmsg(db));
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return NULL;
  }
  return stmt;
}

void rdt_features_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char err[512] = "";
  column *cols = NULL;
  int n = 0, label = -1, rc = SQLITE_DONE, ok = 0;
  size_t total = 0;
  sqlite3_str *o = NULL;
  char *out = NULL;
  sqlite3_stmt *stmt = NULL;
  const char *lname = (const char *)sqlite3_value_text(argv[1]);
  if (sqlite3_value_type(argv[1]) != SQLITE_TEXT || !lname || !lname[0]) {
    snprintf(err, sizeof err, "the second argument must be the label column's name (TEXT)");
    goto done;
  }
  if (!(stmt = prepare_source(db, argv[0], err, sizeof err))) goto done;
  n = sqlite3_column_count(stmt);
  if (n == 0) {
    snprintf(err, sizeof err, "the query must be one read-only SELECT");
    goto done;
  }
  if (n - 1 > RDT_MAX_FEATURES) {
    snprintf(err, sizeof err, "%d columns besides the label; at most %d features are allowed", n - 1, RDT_MAX_FEATURES);
    goto done;
  }
  if (!(cols = calloc((size_t)n, sizeof *cols))) {
    snprintf(err, sizeof err, "out of memory");
    goto done;
  }
  for (int i = 0; i < n; i++) {
    column *c = &cols[i];
    if (!(c->name = sqlite3_column_name(stmt, i))) {
      snprintf(err, sizeof err, "out of memory");
      goto done;
    }
    if (!c->name[0] || strlen(c->name) > RDT_MAX_NAME) {
      snprintf(err, sizeof err, "column %d has an empty name or one longer than %d bytes; name it with AS", i + 1,
               RDT_MAX_NAME);
      goto done;
    }
    for (int k = 0; k < i; k++)
      if (rdt_name_equal(cols[k].name, c->name)) {
        snprintf(err, sizeof err, "the column \"%.100s\" appears twice (names match without regard to case); name "
                 "them apart with AS", c->name);
        goto done;
      }
    const char *decl = sqlite3_column_decltype(stmt, i);
    snprintf(c->decl, sizeof c->decl, "%s", decl ? decl : "");
    c->declared = declared_kind_of(decl);
    c->domain.type = RDT_FEATURE_CATEGORICAL;
    if (rdt_value_index_build(&c->domain.index, NULL, 0, NULL) != 1) {
      snprintf(err, sizeof err, "out of memory");
      goto done;
    }
    if (rdt_name_equal(c->name, lname)) label = i;
    c->track = label == i || c->declared != TYPED_NUMERIC;
  }
  if (label < 0) {
    snprintf(err, sizeof err, "no column \"%.100s\" (the label) among the columns", lname);
    goto done;
  }
  if (n == 1) {
    snprintf(err, sizeof err, "no column besides the label \"%.100s\": the features are the other columns", lname);
    goto done;
  }
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (int i = 0; i < n; i++)
      if (!observe(&cols[i], sqlite3_column_value(stmt, i), &total)) {
        snprintf(err, sizeof err, "out of memory");
        goto done;
      }
  }
  if (rc != SQLITE_DONE) {
    snprintf(err, sizeof err, "the query failed while it ran: %s", sqlite3_errmsg(db));
    goto done;
  }

  o = sqlite3_str_new(NULL);
  sqlite3_str_appendall(
      o, "{\"_warning\":\"NOT PRIVATE: rdt_features read the private rows. \\\"classes\\\" and every \\\"values\\\" list "
         "below were COPIED FROM THEM, marked {\\\"copied_from_rows\\\": [...]}: copying values from private data is "
         "itself a release (a rare category can identify a person). A model trained on a marked list says NOT FOR "
         "RELEASE and cannot be charged to a ledger or signed: replace each marked list with the public domain (a "
         "codebook, the form's choices, a standard), a plain array. Numeric bounds were not taken from the rows: fill "
         "them from public knowledge.\",\"_todo\":\"Fill \\\"epsilon\\\" (your privacy budget, a number > 0) and every numeric feature's "
         "\\\"min\\\" and \\\"max\\\"; remove identifiers and columns that must not be used; then run rdt_check(options, "
         "query) and rdt_fit(options, query). Keys starting with _ are comments.\",\"epsilon\":\"REQUIRED: your privacy "
         "budget, a number > 0\",\"label\":");
  rdt_sql_json_string(o, cols[label].name, strlen(cols[label].name));
  sqlite3_str_appendall(o, ",\"classes\":");
  write_values(o, &cols[label], 1, "_classes");
  sqlite3_str_appendall(o, ",\"features\":[");
  for (int i = 0, first = 1; i < n; i++) {
    if (i == label) continue;
    column *c = &cols[i];
    sqlite3_str_appendall(o, first ? "{\"name\":" : ",{\"name\":");
    first = 0;
    rdt_sql_json_string(o, c->name, strlen(c->name));
    if (is_numeric(c)) {
      write_numeric(o, c);
    } else {
      sqlite3_str_appendall(o, ",\"type\":\"categorical\",\"values\":");
      write_values(o, c, 0, "_note");
    }
    sqlite3_str_appendchar(o, 1, '}');
  }
  sqlite3_str_appendall(o, "]}");
  ok = sqlite3_str_errcode(o) == SQLITE_OK;
  out = sqlite3_str_finish(o);
  if (!ok) snprintf(err, sizeof err, "out of memory");
done:
  sqlite3_finalize(stmt); /* after the names are used: they belong to it */
  for (int i = 0; cols && i < n; i++) {
    column_free(&cols[i]);
    if (cols[i].examples) rdt_value_free(cols[i].examples);
    free(cols[i].examples);
  }
  free(cols);
  if (ok) sqlite3_result_text(ctx, out, -1, sqlite3_free);
  else {
    sqlite3_free(out);
    if (rc == SQLITE_INTERRUPT) sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
    else rdt_sql_error(ctx, "rdt_features", err);
  }
}
