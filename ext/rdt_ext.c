/*
** rdt_ext.c - entry point of the rdt extension: registers every SQL function
** from one table and owns the per-connection state.
*/
#ifdef SQLITE_CORE
#include <sqlite3.h>
#else
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#endif

#include <sodium.h>
#include <stdlib.h>

#include "rdt.h"
#include "rdt_sql.h"

static void conn_release(void *p) {
  rdt_conn *c = p;
  if (--c->refs > 0) return;
  for (int i = 0; i < RDT_CACHE_SLOTS; i++) {
    if (c->cache[i]) rdt_model_release(c->cache[i]);
  }
  rdt_rng_clear(&c->coin);
  free(c);
}

#define RDT_PURE (SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS)

static const struct {
  const char *name;
  int n_arg;
  int flags;
  void (*func)(sqlite3_context *, int, sqlite3_value **);
  void (*step)(sqlite3_context *, int, sqlite3_value **);
  void (*final)(sqlite3_context *);
} rdt_functions[] = {
    /* Training reads private rows: never from triggers or views, never
    ** deterministic (it draws fresh noise). */
    {"rdt_fit", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_fit_func, NULL, NULL},
    {"dp_quantile", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_quantile_func, NULL, NULL},
    {"rdt_train", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, rdt_train_step, rdt_train_final},
    {"rdt_predict_batch", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, rdt_predict_batch_step, rdt_predict_batch_final},
    /* Shard mode (sql_shard.c): a plan charges, partials are exact private
    ** states, the finish releases: direct calls only. */
    {"rdt_plan", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_plan_func, NULL, NULL},
    {"rdt_partial", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_partial_func, NULL, NULL},
    {"rdt_partial", 3, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_partial_func, NULL, NULL},
    {"rdt_merge", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, rdt_merge_step, rdt_merge_final},
    {"rdt_finish", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_finish_func, NULL, NULL},
    /* Federated mode's sites (sql_federated.c): fresh keys; a share reads
    ** private rows and handles a secret key. */
    {"rdt_site_keypair", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_site_keypair_func, NULL, NULL},
    {"rdt_share", 3, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_share_func, NULL, NULL},
    /* Not private (their output is exact facts of the rows, for the
    ** curator's eyes) and they read private rows: direct calls only. */
    {"rdt_check", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_check_func, NULL, NULL},
    {"rdt_check", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, rdt_check_step, rdt_check_final},
    {"rdt_features", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_features_func, NULL, NULL},
    {"dp_median_split", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, rdt_median_step, rdt_median_final},
    /* Not deterministic: a probabilistic-vote model draws a coin per call. */
    {"rdt_predict", -1, SQLITE_UTF8 | SQLITE_INNOCUOUS, rdt_predict_func, NULL, NULL},
    {"rdt_predict_proba", -1, RDT_PURE, rdt_predict_proba_func, NULL, NULL},
    {"rdt_info", 1, RDT_PURE, rdt_info_func, NULL, NULL},
    {"rdt_version", 0, RDT_PURE, rdt_version_func, NULL, NULL},
    /* Fresh keys every call; signing handles a secret key: keep it out of
    ** views and triggers. Verification is a pure function. */
    {"rdt_keypair", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_keypair_func, NULL, NULL},
    {"rdt_sign", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_sign_func, NULL, NULL},
    {"rdt_verify", 2, RDT_PURE, rdt_verify_func, NULL, NULL},
    {"rdt_export", 1, RDT_PURE, rdt_export_func, NULL, NULL},
    {"rdt_import", 1, RDT_PURE, rdt_import_func, NULL, NULL},
    /* By name (sql_named.c): as rdt_predict and rdt_predict_proba. */
    {"rdt_predict_named", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, rdt_predict_named_func, NULL, NULL},
    {"rdt_predict_proba_named", 2, RDT_PURE, rdt_predict_proba_named_func, NULL, NULL},
    /* Evaluation on the caller's rows (sql_evaluate.c). The query forms run
    ** the SQL text they are given, so never from triggers or views (as
    ** rdt_fit); the aggregate form shares its name, hence its flags. */
    {"rdt_evaluate", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, rdt_evaluate_step, rdt_evaluate_final},
    {"rdt_evaluate", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_evaluate_query_func, NULL, NULL},
    {"rdt_importance", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, rdt_importance_func, NULL, NULL},
};

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_rdt_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
#ifndef SQLITE_CORE
  SQLITE_EXTENSION_INIT2(pApi);
#else
  (void)pApi;
#endif
  if (sodium_init() < 0) {
    if (pzErrMsg) *pzErrMsg = sqlite3_mprintf("rdt: libsodium failed to initialise (sodium_init)");
    return SQLITE_ERROR;
  }
  rdt_conn *conn = calloc(1, sizeof *conn);
  if (!conn) return SQLITE_NOMEM;
  rdt_rng_init_os(&conn->coin);
  conn->refs = 1; /* held by this function until registration is done */
  int rc = SQLITE_OK;
  for (size_t i = 0; i < sizeof rdt_functions / sizeof rdt_functions[0] && rc == SQLITE_OK; i++) {
    conn->refs++;
    rc = sqlite3_create_function_v2(db, rdt_functions[i].name, rdt_functions[i].n_arg, rdt_functions[i].flags,
                                    conn, rdt_functions[i].func, rdt_functions[i].step, rdt_functions[i].final,
                                    conn_release);
    /* On failure SQLite has already called conn_release for this one. */
    if (rc != SQLITE_OK && pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("rdt: cannot register %s: %s", rdt_functions[i].name, sqlite3_errmsg(db));
  }
  if (rc == SQLITE_OK) {
    conn->refs++;
    rc = rdt_register_ledger(db, conn, conn_release);
    if (rc != SQLITE_OK && pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("rdt: cannot register rdt_ledger: %s", sqlite3_errmsg(db));
  }
  if (rc == SQLITE_OK) {
    conn->refs++;
    rc = rdt_register_proba(db, conn, conn_release);
    if (rc != SQLITE_OK && pzErrMsg) *pzErrMsg = sqlite3_mprintf("rdt: cannot register rdt_proba: %s", sqlite3_errmsg(db));
  }
  if (rc == SQLITE_OK) {
    conn->refs++;
    rc = rdt_register_predictions(db, conn, conn_release);
    if (rc != SQLITE_OK && pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("rdt: cannot register rdt_predictions: %s", sqlite3_errmsg(db));
  }
  if (rc == SQLITE_OK) {
    conn->refs++;
    rc = rdt_register_eval_tables(db, conn, conn_release);
    if (rc != SQLITE_OK && pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("rdt: cannot register rdt_confusion and rdt_roc: %s", sqlite3_errmsg(db));
  }
  if (rc == SQLITE_OK) {
    rc = rdt_register_check_report(db);
    if (rc != SQLITE_OK && pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("rdt: cannot register rdt_check_report: %s", sqlite3_errmsg(db));
  }
  if (rc == SQLITE_OK) {
    rc = rdt_register_inspection(db);
    if (rc != SQLITE_OK && pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("rdt: cannot register the inspection tables: %s", sqlite3_errmsg(db));
  }
  conn_release(conn);
  return rc;
}
