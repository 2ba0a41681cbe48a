/*
** sql_values.c - SQL values -> core inputs, by fixed data-independent rules
** (sql/reference.md, "Rules for row values"), and the shared pieces of every
** function's output (errors, JSON).
**
** Contract:
**   1. Nothing here can fail on a row value: a value that breaks a rule is
**      clamped, routed or bucketed, never reported.
**   2. A numeric feature reads INTEGER and REAL as they are and TEXT through
**      SQLite's own numeric affinity (sqlite3_value_numeric_type: what a
**      NUMERIC column would store, surrounding spaces allowed); anything
**      else is missing.
**   3. Categories and labels match by one rule, rdt_sql_match, used by
**      training, prediction and diagnostics alike (examples/rdt_reader.py
**      implements the same rule): TEXT spelled exactly as a listed value is
**      that value; any other value that is a finite number (INTEGER, REAL,
**      or TEXT such as '1.0', ' 1 ', '1e0' in the grammar of rule 2)
**      matches by its number, written canonically (decimal digits for an
**      integral value, 17 significant digits otherwise); the rest (NULL,
**      BLOB, other TEXT, ±Inf) matches nothing. The text part is the
**      core's (schema.h) and leaves the value unconverted.
*/
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_io.h"
#include "rdt_sql.h"

int rdt_sql_number(sqlite3_value *v, double *x) {
  int t = sqlite3_value_type(v);
  /* Only TEXT needs numeric affinity ('1.5' becomes 1.5); the common
  ** INTEGER/REAL case skips the conversion call. */
  if (t == SQLITE_TEXT) t = sqlite3_value_numeric_type(v);
  if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) return 0;
  *x = sqlite3_value_double(v);
  return *x == *x;
}

long rdt_sql_match(const rdt_value *values, const rdt_value_index *ix, sqlite3_value *v, rdt_match *how) {
  char buf[40];
  size_t len;
  long code;
  int by_value = 0;
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      len = rdt_int_text(sqlite3_value_int64(v), buf);
      code = rdt_value_index_find(ix, values, buf, len);
      break;
    case SQLITE_FLOAT:
      len = rdt_real_text(sqlite3_value_double(v), buf, sizeof buf);
      code = len ? rdt_value_index_find(ix, values, buf, len) : -1;
      break;
    case SQLITE_TEXT: {
      /* The core's rule (schema.h) on the text as stored: the value is not
      ** converted in place, so whoever reads it next sees it as it came. */
      const char *text = (const char *)sqlite3_value_text(v);
      if (!text) { /* out of memory: as NULL, never an error */
        if (how) *how = RDT_MATCH_MISSING;
        return -1;
      }
      code = rdt_value_match_text(ix, values, text, (size_t)sqlite3_value_bytes(v), &by_value);
      break;
    }
    default: /* NULL, BLOB */
      if (how) *how = RDT_MATCH_MISSING;
      return -1;
  }
  if (how) *how = code < 0 ? RDT_MATCH_UNKNOWN : by_value ? RDT_MATCH_BY_VALUE : RDT_MATCH_AS_IS;
  return code;
}

double rdt_sql_feature(const rdt_feature *ft, sqlite3_value *v) {
  if (ft->type == RDT_FEATURE_NUMERIC) {
    double x;
    return rdt_sql_number(v, &x) ? rdt_numeric_clean(ft, x, 0) : rdt_numeric_clean(ft, 0, 1);
  }
  long code = rdt_sql_match(ft->values, &ft->index, v, NULL);
  return code < 0 ? (double)ft->n_values : (double)code; /* code n_values: the `other` bucket */
}

long rdt_sql_class(const rdt_schema *s, sqlite3_value *v) {
  if (sqlite3_value_type(v) == SQLITE_INTEGER && s->n_classes <= 16) {
    /* Fast path for the usual few integer classes: compare integers, which
    ** is what the canonical-text rule amounts to for them. */
    long long x = sqlite3_value_int64(v);
    for (uint32_t c = 0; c < s->n_classes; c++)
      if (s->classes[c].type == RDT_VALUE_INTEGER && s->classes[c].integer == x) return (long)c;
    /* An integer can still match a TEXT class such as "7": fall through. */
  }
  /* A label follows the categorical rule; no match means "drop the row". */
  return rdt_sql_match(s->classes, &s->class_index, v, NULL);
}

void rdt_sql_features(const rdt_schema *s, sqlite3_value **argv, double *xs) {
  for (uint32_t j = 0; j < s->n_features; j++) xs[j] = rdt_sql_feature(&s->features[j], argv[j]);
}

/* Whether sql (len bytes, -1: to its NUL) is one bare name, such as a
** table's: letters, digits, '_', '$', '.' and quotes, blanks around it. */
static int bare_name(const char *sql, int len, const char **start, int *n) {
  const char *p = sql, *end = len < 0 ? sql + strlen(sql) : sql + len;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == ';')) end--;
  *start = p;
  *n = (int)(end - p);
  if (p == end || end - p > 200) return 0;
  for (const char *q = p; q < end; q++)
    if (!(isalnum((unsigned char)*q) || *q == '_' || *q == '$' || *q == '.' || *q == '"' || *q == '`' ||
          (unsigned char)*q >= 0x80))
      return 0;
  return 1;
}

sqlite3_stmt *rdt_sql_prepare_select(sqlite3 *db, const char *sql, int len, const char *what, char *err, size_t en) {
  sqlite3_stmt *stmt = NULL;
  const char *tail = NULL, *name;
  int name_len;
  if (sqlite3_prepare_v2(db, sql, len, &stmt, &tail) != SQLITE_OK || !stmt) {
    if (!stmt && bare_name(sql, len, &name, &name_len))
      snprintf(err, en, "%s must be a SELECT, not a name: for the table or view %.*s, pass 'SELECT * FROM %.*s' (its "
                        "columns are bound by name)", what, name_len, name, name_len, name);
    else
      snprintf(err, en, "%s does not prepare: %s", what, stmt ? "empty statement" : sqlite3_errmsg(db));
    sqlite3_finalize(stmt);
    return NULL;
  }
  while (tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == '\r' || *tail == ';')) tail++;
  if (!sqlite3_stmt_readonly(stmt) || (tail && *tail)) {
    snprintf(err, en, "%s must be one read-only SELECT", what);
    sqlite3_finalize(stmt);
    return NULL;
  }
  return stmt;
}

int rdt_sql_two_args_best_index(sqlite3_index_info *info, int first, double rows) {
  int at[2] = {-1, -1}, given = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->iColumn < first || c->iColumn > first + 1 || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c->usable) return SQLITE_CONSTRAINT;
    if (at[c->iColumn - first] < 0) at[c->iColumn - first] = i;
  }
  for (int k = 0, n = 0; k < 2; k++) {
    if (at[k] < 0) continue;
    info->aConstraintUsage[at[k]].argvIndex = ++n;
    info->aConstraintUsage[at[k]].omit = 1;
    given |= 1 << k;
  }
  info->idxNum = given;
  info->estimatedCost = given == 3 ? 1e6 : 1e18;
  info->estimatedRows = (sqlite3_int64)rows;
  return SQLITE_OK;
}

void rdt_sql_error(sqlite3_context *ctx, const char *fn, const char *msg) {
  char *m = sqlite3_mprintf("%s: %s", fn, msg);
  if (!m) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_error(ctx, m, -1);
  sqlite3_free(m);
}

char *rdt_sql_feature_names(const rdt_schema *s) {
  /* Long lists are cut: an error message names enough to spot the shift. */
  sqlite3_str *o = sqlite3_str_new(NULL);
  for (uint32_t j = 0; j < s->n_features; j++) {
    if (j && sqlite3_str_length(o) > 300) {
      sqlite3_str_appendf(o, ", ... and %u more", s->n_features - j);
      break;
    }
    sqlite3_str_appendf(o, "%s%.100s", j ? ", " : "", s->features[j].name);
  }
  if (sqlite3_str_errcode(o)) {
    sqlite3_free(sqlite3_str_finish(o));
    return NULL;
  }
  char *out = sqlite3_str_finish(o);
  return out ? out : sqlite3_mprintf(""); /* no features: an empty list */
}

void rdt_sql_result_class(sqlite3_context *ctx, const rdt_value *cls) {
  if (cls->type == RDT_VALUE_INTEGER) sqlite3_result_int64(ctx, cls->integer);
  else sqlite3_result_text(ctx, cls->text, (int)cls->text_len, SQLITE_TRANSIENT);
}

/* x with the fewest digits, from lo to hi, that read back as x (json_io.h:
** libc's correctly rounded conversions; SQLite's own %g may round through
** long double, which is not always wider than double). */
static void json_number(sqlite3_str *out, double x, int lo, int hi) {
  char buf[RDT_JSON_NUMBER_MAX];
  rdt_json_format_number(x, lo, hi, buf);
  sqlite3_str_appendall(out, buf);
}

void rdt_sql_json_double(sqlite3_str *out, double x) { json_number(out, x, 15, 17); }

/* DBL_DIG = 15 digits: what a double holds of any decimal, so the noise of
** floating-point arithmetic beyond them (0.1 + 0.2 = 0.30000000000000004)
** is not printed; a probability read back is within 1e-15 of the computed
** one, far below the noise of any private model. */
void rdt_sql_json_probability(sqlite3_str *out, double p) { json_number(out, p, 15, 15); }

void rdt_sql_json_string(sqlite3_str *out, const char *s, size_t n) {
  sqlite3_str_appendchar(out, 1, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') sqlite3_str_appendf(out, "\\%c", c);
    else if (c < 0x20) sqlite3_str_appendf(out, "\\u%04x", c);
    else sqlite3_str_appendchar(out, 1, (char)c);
  }
  sqlite3_str_appendchar(out, 1, '"');
}

void rdt_sql_json_value(sqlite3_str *out, const rdt_value *v) {
  if (v->type == RDT_VALUE_INTEGER) sqlite3_str_appendf(out, "%lld", v->integer);
  else rdt_sql_json_string(out, v->text, v->text_len);
}

void rdt_sql_json_classes(sqlite3_str *out, const rdt_schema *s) {
  sqlite3_str_appendchar(out, 1, '[');
  for (uint32_t k = 0; k < s->n_classes; k++) {
    if (k) sqlite3_str_appendchar(out, 1, ',');
    rdt_sql_json_value(out, &s->classes[k]);
  }
  sqlite3_str_appendchar(out, 1, ']');
}

void rdt_sql_json_features(sqlite3_str *out, const rdt_schema *s) {
  sqlite3_str_appendchar(out, 1, '[');
  for (uint32_t j = 0; j < s->n_features; j++) {
    const rdt_feature *ft = &s->features[j];
    if (j) sqlite3_str_appendchar(out, 1, ',');
    sqlite3_str_appendall(out, "{\"name\":");
    rdt_sql_json_string(out, ft->name, strlen(ft->name));
    if (ft->type == RDT_FEATURE_NUMERIC) {
      sqlite3_str_appendall(out, ",\"type\":\"numeric\",\"min\":");
      rdt_sql_json_double(out, ft->min);
      sqlite3_str_appendall(out, ",\"max\":");
      rdt_sql_json_double(out, ft->max);
      sqlite3_str_appendchar(out, 1, '}');
    } else {
      sqlite3_str_appendall(out, ",\"type\":\"categorical\",\"values\":[");
      for (uint32_t k = 0; k < ft->n_values; k++) {
        if (k) sqlite3_str_appendchar(out, 1, ',');
        rdt_sql_json_value(out, &ft->values[k]);
      }
      sqlite3_str_appendall(out, "]}");
    }
  }
  sqlite3_str_appendchar(out, 1, ']');
}
