/*
** sql_public_query.h - RDT#'s public rows: which tables are public (the
** curator's declaration) and the check of "public_query" before it runs.
*/
#ifndef RDT_SQL_PUBLIC_QUERY_H
#define RDT_SQL_PUBLIC_QUERY_H

#include <stdint.h>

#include "core/learner.h"
#include "rdt_sql.h"

/* c->public_query prepared and checked (sql_public_query.c, contract): its
** tables declared and listed, its program public, one read-only SELECT
** returning one column per feature (nf). NULL with err. Called before the
** charge and again just before its rows are read, so the program checked
** is the one that runs. */
sqlite3_stmt *rdt_public_query_prepare(sqlite3 *db, const rdt_learn_about *c, uint32_t nf, char *err, size_t en);

#endif
