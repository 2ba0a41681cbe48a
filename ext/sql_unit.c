/*
** sql_unit.c - a query's rows under a privacy unit (sql_unit.h; the privacy
** facts are unit.h's).
**
** Contract:
**   1. Without a unit, the rows are the query's, in its order.
**   2. With a unit column u, the query runs as the bounded form
**        SELECT *, row_number() OVER w, count(*) OVER w FROM (<query>)
**        WHERE u IS NOT NULL WINDOW w AS (PARTITION BY u)
**      SQLite's window pass sorts the rows by unit and emits each unit's rows
**      together, numbered 1 .. n, with the unit's row count n (units are u's
**      values as PARTITION BY compares them, that is as GROUP BY does: the
**      column's collation, 1 and 1.0 one unit, '1' and 1 two); rows whose u
**      is NULL are dropped (unit.h, contract 1). Selection sampling (unit.h)
**      then keeps min(n, k) of each unit's rows, uniformly at random. No
**      ORDER BY is added: it would sort the rows a second time (measured:
**      1.6 times the work), and the grouping is checked on every row (item 4).
**   3. Memory: SQLite's sorter holds the rows while it groups them (it spills
**      to temporary files past its cache: PRAGMA temp_store, cache_size);
**      the extension keeps two counters, whatever the number of units.
**   4. The bounded form is prepared before any row is read: a query that
**      cannot be a subquery is a parameter error. Every row's position and
**      count must continue its unit's run 1 .. n (rdt_unit_bound_row): if the
**      rows ever arrived otherwise, the pass fails closed (nothing is
**      released) rather than let a unit exceed k rows.
*/
#include <stdio.h>
#include <string.h>

#include "sql_unit.h"

/* The query's own text as a subquery's, without the semicolons and spaces
** that may end it (a trailing comment is closed by the newline after it):
** the length to print of sqlite3_sql(query), or -1 (no text, too long). */
static int subquery_length(sqlite3_stmt *query) {
  const char *sql = sqlite3_sql(query);
  size_t len = sql ? strlen(sql) : 0;
  while (len && (sql[len - 1] == ';' || sql[len - 1] == ' ' || sql[len - 1] == '\n' || sql[len - 1] == '\t' ||
                 sql[len - 1] == '\r'))
    len--;
  return sql && len < (size_t)1 << 30 ? (int)len : -1;
}

int rdt_unit_reader_open(rdt_unit_reader *r, sqlite3 *db, sqlite3_stmt *query, int unit_col, uint32_t k, char *err,
                         size_t en) {
  memset(r, 0, sizeof *r);
  r->n_columns = sqlite3_column_count(query);
  r->k = k;
  if (unit_col < 0) {
    r->stmt = query;
    return 1;
  }
  const char *name = sqlite3_column_name(query, unit_col);
  int len = subquery_length(query);
  char *bounded = name && len >= 0
                      ? sqlite3_mprintf("SELECT *, row_number() OVER rdt_unit, count(*) OVER rdt_unit FROM (\n%.*s\n) "
                                        "WHERE \"%w\" IS NOT NULL WINDOW rdt_unit AS (PARTITION BY \"%w\")",
                                        len, sqlite3_sql(query), name, name)
                      : NULL;
  sqlite3_finalize(query);
  if (!bounded) {
    snprintf(err, en, "out of memory");
    return 0;
  }
  r->stmt = rdt_sql_prepare_select(db, bounded, -1, "with \"privacy_unit\", the query (run as a subquery that groups "
                                   "its rows by unit)", err, en);
  sqlite3_free(bounded);
  if (!r->stmt) return 0;
  if (sqlite3_column_count(r->stmt) != r->n_columns + 2) { /* cannot happen: SELECT * keeps the columns */
    snprintf(err, en, "with \"privacy_unit\", the query's columns could not be kept as they are");
    sqlite3_finalize(r->stmt);
    r->stmt = NULL;
    return 0;
  }
  r->bounded = 1;
  return 1;
}

int rdt_unit_count_null(sqlite3 *db, sqlite3_stmt *query, int unit_col, uint64_t *out, char *err, size_t en) {
  const char *name = sqlite3_column_name(query, unit_col);
  int len = subquery_length(query);
  char *q = name && len >= 0 ? sqlite3_mprintf("SELECT count(*) FROM (\n%.*s\n) WHERE \"%w\" IS NULL", len,
                                               sqlite3_sql(query), name)
                             : NULL;
  sqlite3_stmt *stmt = NULL;
  int ok = q && sqlite3_prepare_v2(db, q, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW;
  if (ok) *out = (uint64_t)sqlite3_column_int64(stmt, 0);
  else snprintf(err, en, "the query failed while it ran: %s", q ? sqlite3_errmsg(db) : "out of memory");
  sqlite3_finalize(stmt);
  sqlite3_free(q);
  return ok;
}

void rdt_unit_reader_start(rdt_unit_reader *r, const unsigned char *seed_key, const char *purpose) {
  sqlite3_reset(r->stmt);
  rdt_unit_bound_clear(&r->bound);
  rdt_unit_bound_init(&r->bound, r->k, seed_key, purpose);
  r->units = r->over = r->capped = 0;
}

int rdt_unit_reader_step(rdt_unit_reader *r, sqlite3 *db, char *err, size_t en) {
  for (;;) {
    r->rc = sqlite3_step(r->stmt);
    if (r->rc == SQLITE_DONE) return 0;
    if (r->rc != SQLITE_ROW) {
      snprintf(err, en, "the query failed while it ran (the ledger charge stands): %s", sqlite3_errmsg(db));
      return 0;
    }
    if (!r->bounded) return 1;
    sqlite3_int64 position = sqlite3_column_int64(r->stmt, r->n_columns);
    sqlite3_int64 rows = sqlite3_column_int64(r->stmt, r->n_columns + 1);
    int keep = position < 1 || rows < 1 ? -1 : rdt_unit_bound_row(&r->bound, (uint64_t)position, (uint64_t)rows);
    if (keep < 0) { /* Contract item 4 */
      r->rc = SQLITE_INTERNAL;
      snprintf(err, en, "the rows did not arrive grouped by unit, so a unit could exceed \"max_rows_per_unit\"; "
                        "nothing was released (the ledger charge stands)");
      return 0;
    }
    r->units += position == 1;
    r->over += position == 1 && (uint64_t)rows > r->k;
    if (keep) return 1;
    r->capped++;
  }
}

void rdt_unit_reader_close(rdt_unit_reader *r) {
  sqlite3_finalize(r->stmt);
  r->stmt = NULL;
  rdt_unit_bound_clear(&r->bound);
}
