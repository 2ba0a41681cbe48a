/*
** sql_train.h - one training session, shared by the rdt_fit function
** (sql_fit.c) and the rdt_train aggregate (sql_train.c).
**
** A session runs in this order, and each step happens before the next:
**   1. configure: the options are parsed and checked (size limits, budget
**      shares, option conflicts; RDT#'s public query against the curator's
**      declared public tables, sql_train.c contract 4). Errors are parameter
**      errors: no row exists.
**   2. charge: the ledger named in the options is charged and the charge
**      committed (sql_ledger.c).
**   3. build: the learner's public rows (RDT#'s) are read, their query
**      checked once more, and the learner started or built (a forest's
**      structure drawn).
**   4. row: one private row at a time; never an error for a row's values
**      (the data-independent rules of sql/reference.md).
**   5. finish: the noise is added (failing closed: no noise, no model), the
**      model encoded, and every private intermediate wiped.
**   6. record: after a charge, its outcome goes into the ledger.
** Steps 3 and 5 can run for seconds in C; sqlite3_interrupt() and the
** progress handler reach them (sql_cancel.h), and a stopped step fails
** like any other: nothing is released.
** rdt_train_session_free wipes and frees at any point.
*/
#ifndef RDT_SQL_TRAIN_H
#define RDT_SQL_TRAIN_H

#include "rdt_sql.h"

typedef struct rdt_train_session rdt_train_session;

rdt_train_session *rdt_train_session_new(void);
void rdt_train_session_free(rdt_train_session *s);

/* Step 1. Returns 0 with a message in err. */
int rdt_train_configure(rdt_train_session *s, sqlite3 *db, const char *json, size_t len, char *err, size_t en);
/* After step 1: the schema (feature names, in the order rows pass them), the
** label column's name ("label" unless the options say otherwise), and the
** ledger named by the options ("" for none). */
const rdt_schema *rdt_train_schema(const rdt_train_session *s);
const char *rdt_train_label_name(const rdt_train_session *s);
const char *rdt_train_ledger(const rdt_train_session *s);
/* The options document as parsed by configure (NULL before), for callers
** that ask more of it (rdt_check). */
const rdt_json *rdt_train_options(const rdt_train_session *s);
/* After step 1: what the row rules depend on, for rdt_check (sql_check.c),
** which applies them without training. */
typedef struct rdt_train_facts {
  const char *algorithm;          /* as the ledger's request names it, or the learner's name */
  int is_private, seeded;
  int regression;                 /* the label is a target in [target_min, target_max] */
  double target_min, target_max;
  uint64_t max_rows;              /* DiPriMe: the kept rows it samples down to; 0: no sampling */
} rdt_train_facts;
void rdt_train_get_facts(const rdt_train_session *s, rdt_train_facts *out);
/* After step 1: the unit facts (unit.h: a unit column, private bounds; the
** ledger is charged their eps_total), and the seed key (NULL: not seeded). */
const rdt_unit *rdt_train_unit(const rdt_train_session *s);
const unsigned char *rdt_train_seed_key(const rdt_train_session *s);
/* Between steps 1 and 3: a numeric feature's bounds, estimated privately
** (bounds.h). 0 if the feature is not numeric or the bounds not finite
** min < max. */
int rdt_train_set_bounds(rdt_train_session *s, uint32_t feature, double min, double max);
/* Step 2 (a no-op without a ledger). fn names the caller in the ledger;
** ignored (NULL or a JSON array: the query's columns training ignores) is
** added to its request as ", ignored_columns [...]" when not empty, then
** tail (NULL: none; rdt_plan: the plan's digest). */
int rdt_train_charge(rdt_train_session *s, sqlite3 *db, rdt_conn *conn, const char *fn, const char *ignored,
                     const char *tail, char *err, size_t en);
/* Step 2 for a charge an earlier call made (rdt_finish, sql_shard.c):
** takes over the pending charge `id` of `ledger`, made by fn with a request
** ending in tail, so that step 6 records this call's outcome there; at
** round r >= 1 of a plan, the charge must be at that round, resumed from
** `message` (rdt_ledger_resume). */
int rdt_train_resume_charge(rdt_train_session *s, sqlite3 *db, rdt_conn *conn, const char *ledger, sqlite3_int64 id,
                            const char *fn, const char *tail, uint32_t round, const unsigned char *message,
                            size_t message_len, char *err, size_t en);
/* After a round's release (shard mode): records it in the resumed charge
** (rdt_ledger_record_round); 0 with err: the message must not be
** released. */
int rdt_train_record_round(rdt_train_session *s, uint32_t next, const unsigned char *message, size_t size, char *err,
                           size_t en);
/* After step 2: the id of the charge it made in the ledger (0: none). */
sqlite3_int64 rdt_train_charge_id(const rdt_train_session *s);
/* After step 1: the "structure_key" the options give (NULL: none). */
const unsigned char *rdt_train_structure_key(const rdt_train_session *s);
/* After step 1: whether the learner can say its state as counters
** (learner.h contract 3); after step 3 (and step 4's rows), that state and
** its digest: the number of spans, 0 when it has none. */
int rdt_train_has_counters(const rdt_train_session *s);
uint32_t rdt_train_counters(rdt_train_session *s, rdt_span *out, uint32_t max, unsigned char digest[32]);
/* Step 3. */
int rdt_train_build(rdt_train_session *s, sqlite3 *db, char *err, size_t en);
/* Step 4: features[j] is the value of schema feature j. Returns 0 only when
** memory runs out (err says so). */
int rdt_train_row(rdt_train_session *s, sqlite3_value *label, sqlite3_value **features, char *err, size_t en);
/* Step 5: the model BLOB (malloc'd, caller frees) or NULL with err. */
unsigned char *rdt_train_finish(rdt_train_session *s, size_t *size, char *err, size_t en);
/* Federated mode (learner.h contract 9). After step 3: the noise finish()
** would add, as blocks over the counters (0: not one discrete Laplace per
** counter). Step 5 for counters that already carry it: the model, no noise
** drawn. */
uint32_t rdt_train_noise(const rdt_train_session *s, rdt_noise_block *out, uint32_t max);
unsigned char *rdt_train_finish_noised(rdt_train_session *s, size_t *size, char *err, size_t en);
/* Shard mode's rounds (learner.h contract 10). After step 3: the most
** rounds the learner's release takes, 0 when it has none (its counters()
** suffice). Between steps 3 and 4: opens round r with the learner's payload
** of the previous round's message (NULL, 0 for r = 0); rdt_train_counters
** then offers the round's vector. Step 5 for one round, the seeded noise
** stream started at *noise_at and its end left there: the model (the last
** round), or NULL with err empty and the next round's payload in next, or
** NULL with err. */
uint32_t rdt_train_rounds(const rdt_train_session *s);
int rdt_train_round_open(rdt_train_session *s, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en);
unsigned char *rdt_train_round_finish(rdt_train_session *s, uint64_t *noise_at, rdt_bytes *next, size_t *size,
                                      char *err, size_t en);
/* Before step 2: the ledger (and note) to charge, for a call whose options
** name none (a federated site's own ledger). 0 when too long. */
int rdt_train_set_ledger(rdt_train_session *s, const char *ledger, const char *note);
/* Step 6 for a release that is no model (a federated share): its outcome,
** without a model id or hash. */
int rdt_train_record_unmodelled(rdt_train_session *s, int released, char *err, size_t en);
/* After step 2 charged a ledger, whatever happened next: records the
** outcome, "released" with the model's id, hash and what was trained (blob:
** the model), or "failed" (blob NULL). A no-op without a charge. Returns 0
** with a message when it cannot be recorded: the caller then releases
** nothing (an audit log must not miss a release). */
int rdt_train_record(rdt_train_session *s, const unsigned char *blob, size_t size, char *err,
                     size_t en);
/* After a failed step 3 or 5: whether sqlite3_interrupt() or the progress
** handler stopped it (sql_cancel.h); then ctx gets SQLITE_INTERRUPT
** ("interrupted") and 1 is returned, nothing having been released. */
int rdt_train_interrupted(const rdt_train_session *s, sqlite3_context *ctx);

/* rdt_fit's query (sql_fit.c), shared with rdt_check: the one read-only
** statement of arg (NULL with err), and its result columns bound by name to
** the label (*label_col), the features (col[j]) and the unit column
** (*unit_col; unit "": none, -1), the others ignored and listed in
** *ignored (a JSON array, sqlite3_free it); 0 with err (nothing to free). */
sqlite3_stmt *rdt_fit_prepare_query(sqlite3 *db, sqlite3_value *arg, char *err, size_t en);
int rdt_fit_bind_columns(sqlite3_stmt *stmt, const rdt_schema *s, const char *label, const char *unit, int *label_col,
                         int *unit_col, int *col, char **ignored, char *err, size_t en);

#endif
