/*
** sql_shard.h - what shard mode's functions (sql_shard.c) and federated
** mode's site functions (sql_federated.c) share: reading a plan, a session
** built from it and checked against it, and counting a site's rows.
*/
#ifndef RDT_SQL_SHARD_H
#define RDT_SQL_SHARD_H

#include "core/partial.h"
#include "core/plan.h"
#include "core/round.h"
#include "sql_train.h"

/* The plan argument, read and checked (plan.h contract 4); 0 with err and
** nothing to free. */
int rdt_shard_read_plan(sqlite3_value *v, rdt_plan *p, char *err, size_t en);
/* A session configured from the plan's options and built (no row read),
** whose state is the plan's (same digest; in round 0 the same length): its
** spans in out and their number in *k. A learner of several rounds
** (learner.h contract 10) has round `round` opened with `payload`, its
** previous round message's (NULL, 0 for round 0); any other takes round 0
** only. NULL with err. */
rdt_train_session *rdt_shard_session(sqlite3 *db, const rdt_plan *p, uint32_t round, const unsigned char *payload,
                                     size_t payload_len, rdt_span *out, uint32_t *k, char *err, size_t en);
/* Binds stmt's columns to s's schema by name (rdt_fit's rule) and counts
** every row it returns into s; the statement is finalized. 0 with err
** (*rc: SQLite's code when the query itself failed, SQLITE_INTERRUPT
** included). */
int rdt_shard_count_rows(sqlite3 *db, rdt_train_session *s, sqlite3_stmt *stmt, int *rc, char *err, size_t en);
/* The refusal of a privacy unit or private bounds (sql_shard.c, item 7);
** 1 when the session has neither. */
int rdt_shard_refuse_units(const rdt_train_session *s, char *err, size_t en);
/* "; shard plan <digest>" or "; federated plan <digest>", the tail a
** charge's request ends with (out: 96 bytes). */
void rdt_shard_charge_tail(const rdt_plan *p, char out[96]);

#endif
