/*
** sql_cancel.h - sqlite3_interrupt() and the progress handler during rdt's
** own long C work (sql_cancel.c): the binding's answer to the core's stop
** question (core/cancel.h).
*/
#ifndef RDT_SQL_CANCEL_H
#define RDT_SQL_CANCEL_H

#include "core/cancel.h"
#include "rdt_sql.h"

typedef struct rdt_sql_cancel {
  rdt_cancel core;     /* hand &core to the core (config.cancel) */
  sqlite3_stmt *probe; /* NULL: the probe could not be prepared, never stops */
  int rc;              /* what stopped the work: SQLITE_INTERRUPT, or the probe's error */
} rdt_sql_cancel;

/* Prepares the probe on db (the calling connection). Never fails: without a
** probe (no memory, an authorizer that refuses it) the work runs to its end,
** as it did before this existed. */
void rdt_sql_cancel_init(rdt_sql_cancel *c, sqlite3 *db);
/* Finalizes the probe. Safe on a zeroed or already freed rdt_sql_cancel. */
void rdt_sql_cancel_free(rdt_sql_cancel *c);
/* Whether the core was stopped; then sets ctx's error (SQLITE_INTERRUPT:
** "interrupted") and returns 1. */
int rdt_sql_cancel_report(const rdt_sql_cancel *c, sqlite3_context *ctx);

#endif
