/*
** rdt_sql.h - internals shared by the SQLite binding files (ext/sql_*.c).
** The binding is thin: it turns SQL values into the core's inputs and the
** core's outputs into SQL results. All privacy logic lives in ext/core/.
*/
#ifndef RDT_SQL_H
#define RDT_SQL_H

#ifdef SQLITE_CORE
#include <sqlite3.h>
#else
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#endif

#include "core/forests/forest.h"
#include "core/model.h"
#include "core/rng.h"

#ifndef RDT_VERSION_STRING
#error "RDT_VERSION_STRING must be defined by the build (from the VERSION file)"
#endif

#define RDT_CACHE_SLOTS 4

/* A decoded model, shared by the cache and by auxdata (reference counted). */
typedef struct rdt_model_handle {
  int refs;
  size_t size;
  unsigned char *bytes;   /* the BLOB itself: a cache hit must be the same model */
  rdt_forest forest;       /* a forest model ... */
  int is_learned;          /* ... or a learner model (core/model.h) */
  rdt_learned learned;
} rdt_model_handle;

struct rdt_ledger;

/* Per-connection state, the user data of every function. */
typedef struct rdt_conn {
  int refs;                                  /* one per registered function */
  unsigned long tick;
  rdt_model_handle *cache[RDT_CACHE_SLOTS];
  unsigned long used[RDT_CACHE_SLOTS];
  rdt_rng coin;                              /* probabilistic vote at predict */
  struct rdt_ledger *ledgers;                /* rdt_ledger tables open in this connection */
} rdt_conn;

/* Register the rdt_ledger module (holds a reference on conn, dropped by release). */
int rdt_register_ledger(sqlite3 *db, rdt_conn *conn, void (*release)(void *));
/* What a charge leaves for recording its outcome (rdt_ledger_record). */
typedef struct rdt_ledger_receipt {
  sqlite3_int64 id; /* the charge's row in the ledger file; 0: nothing to record */
  char *file;       /* the ledger's file (canonical) and name */
  char *name;
  char outcome[24]; /* the outcome the record replaces: "round N" (a plan's rounds), "" for "pending" */
} rdt_ledger_receipt;
/* Charge eps to the ledger `name` ("table" or "schema.table"; a bare name must
** name a ledger in one schema only) of this connection, atomically and
** durably, with outcome "pending" (sql_ledger.c). request says what the call
** asks for; note is the caller's "note" (NULL or "": none). Returns 0 with a
** message when over budget or on error (then receipt->id is 0). The caller
** frees the receipt with rdt_ledger_receipt_free in every case. */
int rdt_ledger_charge(sqlite3 *db, rdt_conn *conn, const char *name, rdt_eps eps, const char *function,
                      const char *request, const char *note, rdt_ledger_receipt *receipt, char *err,
                      size_t err_size);
/* The outcome of a charged call: released or failed; for a released model
** (model: its BLOB, else NULL) its id and SHA-256, and trained (JSON: what
** was actually trained, or NULL). A no-op for an empty receipt; clears it.
** Returns 0 with a message when the outcome could not be recorded. */
int rdt_ledger_record(rdt_ledger_receipt *r, int released, const unsigned char *model, size_t size,
                      const char *trained, char *err, size_t err_size);
void rdt_ledger_receipt_free(rdt_ledger_receipt *r);
/* The receipt of a charge an earlier call made and left pending (a plan's,
** recorded when rdt_finish releases): charge `id` of the ledger `name` of
** this connection, made by `function` with a request ending in `tail`, at
** round `round`: 0, the charge must be pending; r >= 1, its outcome must be
** "round r" with the SHA-256 of `message` (the round message the caller
** resumes from, as rdt_ledger_record_round recorded it). Returns 0 with a
** message when there is no such charge, or it is not at that point (a plan
** releases each round and its model once), or it is another call's. */
int rdt_ledger_resume(sqlite3 *db, rdt_conn *conn, const char *name, sqlite3_int64 id, const char *function,
                      const char *tail, uint32_t round, const unsigned char *message, size_t message_len,
                      rdt_ledger_receipt *receipt, char *err, size_t err_size);
/* A round of a plan released (sql_shard.c): the resumed charge's outcome
** becomes "round <next>" and its model_sha256 the SHA-256 of the message
** released (the receipt stays, now expecting that outcome). Returns 0 with
** a message when it could not be recorded: the caller then releases
** nothing. */
int rdt_ledger_record_round(rdt_ledger_receipt *r, uint32_t next, const unsigned char *message, size_t size,
                            char *err, size_t err_size);

void rdt_model_release(void *handle);
/* The decoded model of argument v (auxdata slot `arg`, then the cache, then
** a fresh decode). On failure sets an error "<fn>: ..." and returns NULL. */
rdt_model_handle *rdt_model_get(sqlite3_context *ctx, sqlite3_value *v, int arg, const char *fn);
/* The same without a function context (virtual tables): the decoded model
** of v from the connection's cache or a fresh decode, with a reference the
** caller drops with rdt_model_release. NULL with *rc SQLITE_NOMEM, or
** SQLITE_ERROR and a message (no prefix) in err. */
rdt_model_handle *rdt_model_lookup(rdt_conn *conn, sqlite3_value *v, int *rc, char *err, size_t en);

/* Scoring a decoded model of any kind (sql_scoring.c): post-processing of
** the release, the same rules as rdt_predict and rdt_predict_proba. */
const rdt_schema *rdt_score_schema(const rdt_model_handle *h);
int rdt_score_is_regression(const rdt_model_handle *h);
/* The label column's name the model records ("label" when it records none). */
const char *rdt_score_label(const rdt_model_handle *h);
/* Doubles of scratch that rdt_score_class and rdt_score_proba need. */
size_t rdt_score_scratch(const rdt_model_handle *h);
/* Class probabilities (rdt_predict_proba's) into scratch[0 .. n_classes). */
void rdt_score_proba(const rdt_model_handle *h, const double *xs, double *scratch);
/* rdt_predict's class (coin: the probabilistic vote's draws) and, in
** scratch[0 .. n_classes), the same probabilities as rdt_score_proba. */
uint32_t rdt_score_class(const rdt_model_handle *h, const double *xs, double *scratch, rdt_rng *coin);
/* rdt_predict's value of a regression model. */
double rdt_score_value(const rdt_model_handle *h, const double *xs, double *scratch);

/* Row values -> core inputs (the data-independent rules of sql/reference.md). */
/* A SQL value as a number (TEXT with numeric affinity): 0 for NULL, BLOB,
** non-numeric TEXT and NaN, which every caller treats as missing. */
int rdt_sql_number(sqlite3_value *v, double *x);
/* How rdt_sql_match matched a value (for diagnostics; training and
** prediction need only the code). */
typedef enum {
  RDT_MATCH_AS_IS = 1,    /* INTEGER or REAL, or TEXT spelled as a listed value */
  RDT_MATCH_BY_VALUE = 2, /* TEXT that SQLite reads as a number, e.g. '1.0' for 1 */
  RDT_MATCH_UNKNOWN = 3,  /* a value that is not listed: `other`, or a dropped label */
  RDT_MATCH_MISSING = 4   /* NULL or BLOB */
} rdt_match;
/* The index of v among values[] (categories or classes, hashed in ix), or
** -1: THE rule by which every function matches categories and labels
** (sql_values.c, contract item 3). how may be NULL. */
long rdt_sql_match(const rdt_value *values, const rdt_value_index *ix, sqlite3_value *v, rdt_match *how);
double rdt_sql_feature(const rdt_feature *ft, sqlite3_value *v);
/* Class index of a label, or -1 (NULL / unknown label: the row is dropped). */
long rdt_sql_class(const rdt_schema *s, sqlite3_value *v);
/* Map argv[0..n_features) into xs. */
void rdt_sql_features(const rdt_schema *s, sqlite3_value **argv, double *xs);
/* The features' names, "a, b, c" (a long list cut after about 300 bytes),
** for arity errors; sqlite3_free it. NULL when memory runs out. */
char *rdt_sql_feature_names(const rdt_schema *s);
/* Set a class label as the SQL result, keeping its type. */
void rdt_sql_result_class(sqlite3_context *ctx, const rdt_value *cls);
/* Prepares sql (len bytes, -1: to its NUL) as one read-only statement, or
** returns NULL with "<what> does not prepare: ..." or "<what> must be one
** read-only SELECT" in err. */
sqlite3_stmt *rdt_sql_prepare_select(sqlite3 *db, const char *sql, int len, const char *what, char *err, size_t en);
/* stmt's result columns bound by name (sql_columns.c): roles[r] (NULL or
** "": unused) to role_col[r] (-1: absent), feature j to col[j] (a missing
** feature is an error); every other column ignored, listed in *ignored, a
** JSON array of their names (sqlite3_free it), and counted in *n_ignored
** (may be NULL). 0 with err, and nothing to free, on a mistake. */
int rdt_sql_bind_columns(sqlite3_stmt *stmt, const rdt_schema *s, const char *const *roles, int n_roles, int *role_col,
                         int *col, char **ignored, int *n_ignored, char *err, size_t en);
/* The end of an "options must be TEXT" error for an options argument v: a
** BLOB (readfile() returns one) is told how to CAST it, and for an
** aggregate (per_row) to do it in a scalar subquery, which SQLite evaluates
** once where it evaluates an aggregate's argument on every row. "" for
** anything else. */
static inline const char *rdt_sql_blob_hint(sqlite3_value *v, int per_row) {
  if (sqlite3_value_type(v) != SQLITE_BLOB) return "";
  return per_row ? "; it is a BLOB (readfile() returns one): pass (SELECT CAST(readfile('options.json') AS TEXT)), a "
                   "scalar subquery, which SQLite evaluates once instead of on every row"
                 : "; it is a BLOB (readfile() returns one): pass CAST(readfile('options.json') AS TEXT)";
}
/* xBestIndex of a table-valued function whose two arguments are the hidden
** columns first and first + 1: an equality on each becomes argv, in column
** order; idxNum gets bit 1 for the first given, bit 2 for the second. A
** plan without both costs 1e18 (its filter only fails), one with both a
** pass over a query (1e6) of `rows` rows; an argument not known yet is
** SQLITE_CONSTRAINT (another plan). */
int rdt_sql_two_args_best_index(sqlite3_index_info *info, int first, double rows);
/* The SQL error "<fn>: <msg>" (every function's error format). */
void rdt_sql_error(sqlite3_context *ctx, const char *fn, const char *msg);
/* Append s as a JSON string literal. */
void rdt_sql_json_string(sqlite3_str *out, const char *s, size_t n);
/* A finite double as the shortest JSON number that reads back as exactly
** it (".0" kept on integral values), in any locale; not finite: null. */
void rdt_sql_json_double(sqlite3_str *out, double x);
/* A probability (or a share) with 15 significant digits: 0.1 + 0.2 prints as
** 0.3, not 0.30000000000000004 (".0" kept on 0 and 1); not finite: null. */
void rdt_sql_json_probability(sqlite3_str *out, double p);
/* Append a class or category value (integer or string) as JSON. */
void rdt_sql_json_value(sqlite3_str *out, const rdt_value *v);
/* Append the classes, or the features with their domains, as JSON arrays. */
void rdt_sql_json_classes(sqlite3_str *out, const rdt_schema *s);
void rdt_sql_json_features(sqlite3_str *out, const rdt_schema *s);

void rdt_train_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* rdt_fit(options, query) and dp_quantile(options, query) (sql_fit.c). */
void rdt_fit_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_quantile_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_train_final(sqlite3_context *ctx);
/* Shard mode (sql_shard.c): rdt_plan, rdt_partial, the rdt_merge aggregate, rdt_finish. */
void rdt_plan_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_partial_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_merge_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_merge_final(sqlite3_context *ctx);
void rdt_finish_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* Federated mode's sites (sql_federated.c): rdt_site_keypair, rdt_share. */
void rdt_site_keypair_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_share_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* rdt_check(options, query) and its aggregate form (sql_check.c);
** rdt_features(table_or_query, label) (sql_features.c). */
void rdt_check_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_check_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_check_final(sqlite3_context *ctx);
/* rdt_check(options, query)'s report, JSON text (sqlite3_free it), or NULL
** with *rc SQLITE_ERROR (err: "<problem>", no function name), SQLITE_NOMEM
** or SQLITE_INTERRUPT (sql_check.c). */
char *rdt_check_run(sqlite3 *db, sqlite3_value *options, sqlite3_value *query, int *rc, char *err, size_t en);
void rdt_features_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_predict_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_predict_proba_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* {"<class>": p, ...}, rdt_predict_proba's result, as the SQL result. */
void rdt_sql_result_proba(sqlite3_context *ctx, const rdt_schema *s, const double *proba);
/* Prediction with the features bound by name from a JSON object (sql_named.c). */
void rdt_predict_named_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_predict_proba_named_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* Evaluation on the caller's labelled rows (sql_evaluate.c). */
void rdt_evaluate_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_evaluate_final(sqlite3_context *ctx);
void rdt_evaluate_query_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_importance_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* The rdt_proba table (sql_proba.c); holds a reference on conn, dropped by release. */
int rdt_register_proba(sqlite3 *db, rdt_conn *conn, void (*release)(void *));
/* The rdt_predictions table (sql_predictions.c); holds a reference on conn, dropped by release. */
int rdt_register_predictions(sqlite3 *db, rdt_conn *conn, void (*release)(void *));
/* The rdt_confusion and rdt_roc tables (sql_eval_tables.c); the caller holds
** one reference on conn for them, they take a second. */
int rdt_register_eval_tables(sqlite3 *db, rdt_conn *conn, void (*release)(void *));
void rdt_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_predict_batch_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_predict_batch_final(sqlite3_context *ctx);
void rdt_median_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_median_final(sqlite3_context *ctx);
int rdt_register_inspection(sqlite3 *db);
/* The rdt_check_report table (sql_check_report.c). */
int rdt_register_check_report(sqlite3 *db);
void rdt_export_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_import_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_keypair_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_sign_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void rdt_verify_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif
