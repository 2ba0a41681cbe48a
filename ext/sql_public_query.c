/*
** sql_public_query.c - RDT#'s public rows: what is public is the curator's
** standing statement, and "public_query" can read nothing else.
**
** Contract:
**   1. A table is public only when the curator declares it in its own
**      schema's rdt_public_tables(name) (main's for main, an attached
**      database's for its own; the temp schema declares nothing: a TEMP
**      table lasts one connection and whoever runs SQL there can make it).
**      Every entry of "public_tables" must be declared, for every call,
**      charged or not, private or not (an uncharged private model is
**      releasable); the options cannot declare anything.
**   2. public_query must be one read-only SELECT (first keyword SELECT,
**      WITH or VALUES: a PRAGMA tells about tables without opening them)
**      whose compiled program (EXPLAIN) opens only b-trees of tables that
**      are both listed and declared, no virtual table, not the schema
**      table, and calls only SQLite's own built-in functions known to run
**      no SQL (BUILTIN_FUNCTIONS, not redefined on the connection): any
**      other function can run SQL of its own over any table.
**   3. The check leaves the application's authorizer in place (SQLite
**      cannot restore a replaced one): every statement of the check is
**      authorized as the application says, and a refusal fails closed.
**   4. Collations are the application's code: they are not checked.
*/
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/options.h"
#include "sql_public_query.h"

/* SQLite's own functions known to run no SQL and to read nothing but their
** arguments (and the clock or fresh randomness): core scalar, aggregate,
** window, date and time, math and JSON functions. Left out: load_extension
** (loads code), sqlite_log (writes the error log), and changes(),
** total_changes() and last_insert_rowid(), which tell what this connection
** wrote (to private tables too). Any other function (an extension's, rdt's,
** the application's, the shell's readfile or sha3_query) can run SQL of its
** own, or read outside the database. */
static const char *const BUILTIN_FUNCTIONS[] = {
    "->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg", "ceil", "ceiling", "char",
    "coalesce", "concat", "concat_ws", "cos", "cosh", "count", "cume_dist", "current_date", "current_time",
    "current_timestamp", "date", "datetime", "degrees", "dense_rank", "exp", "first_value", "floor", "format", "glob",
    "group_concat", "hex", "if", "ifnull", "iif", "instr", "json", "json_array", "json_array_length",
    "json_error_position", "json_extract", "json_group_array", "json_group_object", "json_insert", "json_object",
    "json_patch", "json_pretty", "json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid",
    "jsonb", "jsonb_array", "jsonb_extract", "jsonb_group_array", "jsonb_group_object", "jsonb_insert",
    "jsonb_object", "jsonb_patch", "jsonb_remove", "jsonb_replace", "jsonb_set", "julianday", "lag", "last_value",
    "lead", "length", "like", "likelihood", "likely", "ln", "log", "log10", "log2", "lower", "ltrim", "max", "min",
    "mod", "nth_value", "ntile", "nullif", "octet_length", "percent_rank", "pi", "pow", "power", "printf", "quote",
    "radians", "random", "randomblob", "rank", "replace", "round", "row_number", "rtrim", "sign", "sin", "sinh",
    "soundex", "sqlite_compileoption_get", "sqlite_compileoption_used", "sqlite_source_id", "sqlite_version", "sqrt",
    "strftime", "string_agg", "substr", "substring", "subtype", "sum", "tan", "tanh", "time", "timediff", "total",
    "trim", "trunc", "typeof", "unhex", "unicode", "unixepoch", "unlikely", "upper", "zeroblob", NULL};

static int builtin_listed(const char *name) {
  for (const char *const *f = BUILTIN_FUNCTIONS; *f; f++)
    if (sqlite3_stricmp(*f, name) == 0) return 1;
  return 0;
}

/* Runs sql (NULL: out of memory), binding text (if any) to ?1: 1 with
** *found when it returns a row, 0 with err (what: the thing being checked)
** when it cannot run. None of the check's statements calls a function, so
** an application's authorizer that refuses functions leaves them alone. */
static int lookup(sqlite3 *db, const char *sql, const char *text, int *found, const char *what, char *err, size_t en) {
  sqlite3_stmt *q = NULL;
  int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &q, NULL) : SQLITE_NOMEM;
  if (rc == SQLITE_OK && text) rc = sqlite3_bind_text(q, 1, text, -1, SQLITE_TRANSIENT);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(q);
    *found = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK)
    snprintf(err, en, "%s cannot be checked: %s", what, sql ? sqlite3_errmsg(db) : "out of memory");
  sqlite3_finalize(q);
  return rc == SQLITE_OK;
}

/* Runs sql (NULL: out of memory) binding number to ?1, copying its first
** row's first column to out ("" without a row); 0 with err. */
static int lookup_name(sqlite3 *db, const char *sql, sqlite3_int64 number, char *out, size_t on, char *err, size_t en) {
  sqlite3_stmt *q = NULL;
  int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &q, NULL) : SQLITE_NOMEM;
  out[0] = 0;
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(q, 1, number);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW && sqlite3_column_text(q, 0))
      snprintf(out, on, "%s", (const char *)sqlite3_column_text(q, 0));
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK)
    snprintf(err, en, "\"public_query\" cannot be checked: %s", sql ? sqlite3_errmsg(db) : "out of memory");
  sqlite3_finalize(q);
  return rc == SQLITE_OK;
}

/* Whether the table is declared public: listed in rdt_public_tables of its
** own schema, the curator's standing statement, which no option changes.
** The temp schema declares nothing: it lasts one connection and whoever
** runs SQL on the connection can write it. */
static int declared_public(sqlite3 *db, const char *schema, const char *table, int *declared, char *err, size_t en) {
  *declared = 0;
  if (sqlite3_stricmp(schema, "temp") == 0) return 1;
  char *has = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE type = 'table' AND name = "
                              "'rdt_public_tables' COLLATE NOCASE", schema);
  int exists = 0, ok = lookup(db, has, NULL, &exists, "\"public_tables\"", err, en);
  sqlite3_free(has);
  if (!ok || !exists) return ok;
  char *q = sqlite3_mprintf("SELECT 1 FROM \"%w\".rdt_public_tables WHERE name = ?1 COLLATE NOCASE", schema);
  ok = lookup(db, q, table, declared, "\"public_tables\"", err, en);
  sqlite3_free(q);
  return ok;
}

/* How to declare a table, for the errors. */
static void declare_hint(char *out, size_t n, const char *schema, const char *table) {
  int plain = !isdigit((unsigned char)schema[0]);
  for (const char *p = schema; *p; p++) plain = plain && (isalnum((unsigned char)*p) || *p == '_');
  char s[300];
  sqlite3_snprintf((int)sizeof s, s, plain ? "%s" : "\"%w\"", schema);
  sqlite3_snprintf((int)n, out,
                   "the curator declares a public table in its schema's rdt_public_tables: CREATE TABLE IF NOT "
                   "EXISTS %s.rdt_public_tables(name TEXT PRIMARY KEY); INSERT INTO %s.rdt_public_tables VALUES ('%q')",
                   s, s, table);
}

/* Every entry of "public_tables" is declared public: "schema.table" in that
** schema, "table" in main's or an attached database's declarations. */
static int public_tables_declared(sqlite3 *db, const rdt_learn_about *c, char *err, size_t en) {
  char hint[1400];
  for (uint32_t at = 0; at < c->public_tables_len; at += (uint32_t)strlen(c->public_tables + at) + 1) {
    const char *name = c->public_tables + at, *dot = strchr(name, '.');
    const char *table = dot ? dot + 1 : name;
    int declared = 0, seen = 0, ok = 1, rc = SQLITE_ROW;
    sqlite3_stmt *dbs = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list", -1, &dbs, NULL) != SQLITE_OK) rc = SQLITE_ERROR;
    while (rc == SQLITE_ROW && ok && !declared && (rc = sqlite3_step(dbs)) == SQLITE_ROW) {
      const char *schema = (const char *)sqlite3_column_text(dbs, 0);
      if (!schema || sqlite3_stricmp(schema, "temp") == 0) continue;
      if (dot && !((size_t)(dot - name) == strlen(schema) && sqlite3_strnicmp(schema, name, (int)(dot - name)) == 0))
        continue;
      seen = 1;
      ok = declared_public(db, schema, table, &declared, err, en);
    }
    if (ok && rc != SQLITE_ROW && rc != SQLITE_DONE) {
      snprintf(err, en, "\"public_tables\" cannot be checked: %s", sqlite3_errmsg(db));
      ok = 0;
    }
    sqlite3_finalize(dbs);
    if (!ok) return 0;
    if (declared) continue;
    if (dot && (size_t)(dot - name) == 4 && sqlite3_strnicmp(name, "temp", 4) == 0) {
      snprintf(err, en, "\"public_tables\" names \"%.200s\": a TEMP table is never public (it lasts one connection, "
               "and whoever runs SQL on the connection can write it); declare tables of main or of an attached "
               "database in that schema's rdt_public_tables", name);
    } else if (dot && !seen) {
      snprintf(err, en, "\"public_tables\" names \"%.200s\", but no database \"%.*s\" is attached", name,
               (int)(dot - name > 100 ? 100 : dot - name), name);
    } else {
      char schema[128];
      snprintf(schema, sizeof schema, "%.*s", dot ? (int)(dot - name > 100 ? 100 : dot - name) : 4,
               dot ? name : "main");
      declare_hint(hint, sizeof hint, schema, table);
      snprintf(err, en, "\"public_tables\" names \"%.200s\", which is not declared public; %s", name, hint);
    }
    return 0;
  }
  return 1;
}

/* Whether "public_tables" lists the table (a bare name: in any schema). */
static int table_listed(const rdt_learn_about *c, const char *schema, const char *table) {
  for (uint32_t at = 0; at < c->public_tables_len; at += (uint32_t)strlen(c->public_tables + at) + 1) {
    const char *name = c->public_tables + at, *dot = strchr(name, '.');
    if (dot) { /* "schema.table" */
      size_t k = (size_t)(dot - name);
      if (strlen(schema) == k && sqlite3_strnicmp(schema, name, (int)k) == 0 && rdt_name_equal(dot + 1, table))
        return 1;
    } else if (rdt_name_equal(name, table)) {
      return 1;
    }
  }
  return 0;
}

/* One b-tree the program opens (P2 its root page, P3 its database): the
** table owning it must be listed in "public_tables" and declared public in
** its own schema. */
static int btree_public(sqlite3 *db, const rdt_learn_about *c, sqlite3_int64 root, sqlite3_int64 seq, char *err,
                        size_t en) {
  char schema[256] = "", table[1100] = "";
  if (!lookup_name(db, "SELECT name FROM pragma_database_list WHERE seq = ?1", seq, schema, sizeof schema, err, en))
    return 0;
  if (!schema[0]) {
    snprintf(err, en, "\"public_query\" cannot be checked: it opens a database that is not attached");
    return 0;
  }
  char *q = sqlite3_mprintf("SELECT tbl_name FROM \"%w\".sqlite_schema WHERE rootpage = ?1", schema);
  int ok = lookup_name(db, q, root, table, sizeof table, err, en);
  sqlite3_free(q);
  if (!ok) return 0;
  if (!table[0]) { /* sqlite_schema itself */
    snprintf(err, en, "\"public_query\" reads the schema table of \"%.100s\"; it may read only the tables of "
             "\"public_tables\"", schema);
    return 0;
  }
  if (!table_listed(c, schema, table)) {
    snprintf(err, en, "\"public_query\" reads table \"%.100s\", which is not in \"public_tables\"; it may read only "
             "the tables listed there", table);
    return 0;
  }
  int declared = 0;
  if (!declared_public(db, schema, table, &declared, err, en)) return 0;
  if (declared) return 1;
  if (sqlite3_stricmp(schema, "temp") == 0) {
    snprintf(err, en, "\"public_query\" reads table \"%.100s\" of the temp schema: a TEMP table is never public", table);
  } else {
    char hint[1400];
    declare_hint(hint, sizeof hint, schema, table);
    snprintf(err, en, "\"public_query\" reads table \"%.100s\" of schema \"%.100s\", which is not declared public; %s",
             table, schema, hint);
  }
  return 0;
}

/* One function the program calls (P4 "name(nArg)"): one of SQLite's own
** listed above, and not replaced by one this connection defines (SQLite
** calls a connection's function before a built-in of the same name;
** pragma_function_list says which are built in). */
static int function_builtin(sqlite3 *db, const char *p4, char *err, size_t en) {
  const char *paren = p4 ? strrchr(p4, '(') : NULL;
  char name[128];
  if (!paren || (size_t)(paren - p4) >= sizeof name || paren == p4) {
    snprintf(err, en, "\"public_query\" calls a function rdt cannot identify (%.60s); it may call only SQLite's own "
             "built-in functions that run no SQL", p4 ? p4 : "no name");
    return 0;
  }
  snprintf(name, sizeof name, "%.*s", (int)(paren - p4), p4);
  int defined = 0;
  if (builtin_listed(name) &&
      !lookup(db, "SELECT 1 FROM pragma_function_list WHERE builtin = 0 AND name = ?1 COLLATE NOCASE", name, &defined,
              "\"public_query\"", err, en))
    return 0;
  if (builtin_listed(name) && !defined) return 1;
  snprintf(err, en, "\"public_query\" calls %s(), which %s; it may call only SQLite's own built-in scalar, aggregate, "
           "window, date and time, math and JSON functions, which run no SQL (any other function can run SQL of "
           "its own over any table)",
           name, defined ? "this connection defines itself (an application's or an extension's function)"
                         : "is not one of SQLite's built-in functions known to run no SQL");
  return 0;
}

/* Whether public_query's compiled program reads only public tables and runs
** no SQL of its own: every b-tree it opens (OpenRead, ReopenIdx) belongs to
** a listed, declared table (btree_public); it opens no virtual table (one
** cannot be identified; table-valued functions are virtual tables); every
** function it calls is built in (function_builtin). Checked on EXPLAIN's
** listing, so an application's authorizer is left alone (SQLite cannot
** restore one that is replaced). */
static int program_public(sqlite3 *db, const rdt_learn_about *c, char *err, size_t en) {
  char *sql = sqlite3_mprintf("EXPLAIN %s", c->public_query);
  sqlite3_stmt *ex = NULL;
  int ok = sql != NULL, rc = SQLITE_OK;
  if (!ok) snprintf(err, en, "out of memory");
  if (ok && sqlite3_prepare_v2(db, sql, -1, &ex, NULL) != SQLITE_OK) {
    snprintf(err, en, "\"public_query\" cannot be checked: %s", sqlite3_errmsg(db));
    ok = 0;
  }
  sqlite3_free(sql);
  while (ok && (rc = sqlite3_step(ex)) == SQLITE_ROW) {
    const char *op = (const char *)sqlite3_column_text(ex, 1);
    if (!op) continue;
    if (strcmp(op, "VOpen") == 0) {
      snprintf(err, en, "\"public_query\" reads a virtual table (or a table-valued function); it may read only "
               "the tables of \"public_tables\"");
      ok = 0;
    } else if (strcmp(op, "OpenRead") == 0 || strcmp(op, "ReopenIdx") == 0) {
      ok = btree_public(db, c, sqlite3_column_int64(ex, 3), sqlite3_column_int64(ex, 4), err, en);
    } else if (strncmp(op, "Agg", 3) == 0 || strstr(op, "Func")) { /* Function, PureFunc, AggStep, AggFinal, ... */
      ok = function_builtin(db, (const char *)sqlite3_column_text(ex, 5), err, en);
    }
  }
  if (ok && rc != SQLITE_DONE) {
    snprintf(err, en, "\"public_query\" cannot be checked: %s", sqlite3_errmsg(db));
    ok = 0;
  }
  sqlite3_finalize(ex);
  return ok;
}

/* Whether the SQL's first keyword (after blanks and comments) is SELECT,
** WITH or VALUES: a read-only PRAGMA (page_count, say) tells about every
** table without opening one, and EXPLAIN's rows are a program's. */
static int starts_as_select(const char *s) {
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f') s++;
    if (s[0] == '-' && s[1] == '-') {
      while (*s && *s != '\n') s++;
    } else if (s[0] == '/' && s[1] == '*') {
      const char *end = strstr(s + 2, "*/");
      if (!end) return 0;
      s = end + 2;
    } else {
      break;
    }
  }
  static const char *const first[] = {"select", "with", "values", NULL};
  for (const char *const *k = first; *k; k++) {
    size_t n = strlen(*k);
    if (sqlite3_strnicmp(s, *k, (int)n) == 0 && !(isalnum((unsigned char)s[n]) || s[n] == '_')) return 1;
  }
  return 0;
}

/* public_query, prepared and checked: its tables declared and listed, its
** program public (program_public), one read-only SELECT returning one
** column per feature. NULL with err. Run before the charge (configure) and
** again just before its rows are read (build), so the program checked is
** the one that runs. */
sqlite3_stmt *rdt_public_query_prepare(sqlite3 *db, const rdt_learn_about *c, uint32_t nf, char *err, size_t en) {
  if (!public_tables_declared(db, c, err, en)) return NULL;
  sqlite3_stmt *stmt = rdt_sql_prepare_select(db, c->public_query, -1, "\"public_query\"", err, en);
  if (!stmt) return NULL;
  if (!starts_as_select(c->public_query)) {
    snprintf(err, en, "\"public_query\" must be one read-only SELECT");
    sqlite3_finalize(stmt);
    return NULL;
  }
  if (!program_public(db, c, err, en)) {
    sqlite3_finalize(stmt);
    return NULL;
  }
  if ((uint32_t)sqlite3_column_count(stmt) != nf) {
    snprintf(err, en, "\"public_query\" returns %d columns; it must return one per feature (%u), in order",
             sqlite3_column_count(stmt), nf);
    sqlite3_finalize(stmt);
    return NULL;
  }
  return stmt;
}

