/*
** sql_unit.h - reading a query's rows under a privacy unit (core: unit.h),
** shared by rdt_fit and dp_quantile (sql_fit.c).
*/
#ifndef RDT_SQL_UNIT_H
#define RDT_SQL_UNIT_H

#include "core/unit.h"
#include "rdt_sql.h"

typedef struct rdt_unit_reader {
  sqlite3_stmt *stmt; /* the query, or with a unit its bounded form */
  int n_columns;      /* the query's columns: 0 .. n_columns - 1 of stmt, as in the query */
  int bounded;        /* stmt adds each row's position in its unit and the unit's row count */
  uint64_t k;
  rdt_unit_bound bound;
  int rc; /* the last sqlite3_step result */
  /* This pass, for rdt_check's report: units seen, those with more than k
  ** rows, rows the cap dropped. */
  uint64_t units, over, capped;
} rdt_unit_reader;

/* Takes over `query` (one validated read-only statement; the caller has
** checked its columns). unit_col: the unit column's index in it, or -1 for
** no unit (one row is one unit). With a unit, prepares the bounded form, so
** its mistakes are parameter errors raised before any row is read. Returns
** 0 with a message (query finalized). */
int rdt_unit_reader_open(rdt_unit_reader *r, sqlite3 *db, sqlite3_stmt *query, int unit_col, uint32_t k, char *err,
                         size_t en);
/* Starts a pass over the rows (the query runs from its start): the coins
** that drop a unit's extra rows come from seed_key and purpose (rng.h). */
void rdt_unit_reader_start(rdt_unit_reader *r, const unsigned char *seed_key, const char *purpose);
/* The next kept row: 1 (read columns 0 .. n_columns - 1 of r->stmt); 0 at
** the end (r->rc == SQLITE_DONE) or on a failure, with err said and r->rc
** the failing code (SQLITE_INTERRUPT for an interrupt). */
int rdt_unit_reader_step(rdt_unit_reader *r, sqlite3 *db, char *err, size_t en);
/* The rows of `query` whose unit column (unit_col) is NULL, which the
** bounded form drops unseen: counted by one more pass (rdt_check). Returns
** 0 with a message. */
int rdt_unit_count_null(sqlite3 *db, sqlite3_stmt *query, int unit_col, uint64_t *out, char *err, size_t en);
/* Finalizes the statement (releases its read) and wipes the coins; safe twice. */
void rdt_unit_reader_close(rdt_unit_reader *r);

#endif
