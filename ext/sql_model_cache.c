/*
** sql_model_cache.c - decode a model BLOB once per statement (auxdata, for a
** constant model) or once per connection (a small cache keyed by model id,
** length and checksum, for a model coming from a subquery or a join).
** Released models are wiped before they are freed: a non-private model's
** counters are exact.
*/
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forests/matrix.h"
#include "core/model.h"
#include "rdt_sql.h"

void rdt_model_release(void *p) {
  rdt_model_handle *h = p;
  if (!h || --h->refs > 0) return;
  /* A non-private model holds exact counts: wipe every decoded model like
  ** training state, whatever it holds (the same rule for all, no branch). */
  if (h->is_learned) { /* the learner wipes its own state */
    rdt_learned_free(&h->learned);
    if (h->bytes) sodium_memzero(h->bytes, h->size);
    free(h->bytes);
    free(h);
    return;
  }
  rdt_forest *f = &h->forest;
  if (f->counts) sodium_memzero(f->counts, (size_t)rdt_forest_total_leaves(f) * rdt_forest_slots(f) * sizeof *f->counts);
  size_t per_leaf = f->config.task == RDT_TASK_REGRESSION ? 1 : f->schema.n_classes; /* rdt_forest_prepare */
  if (f->theta) sodium_memzero(f->theta, (size_t)rdt_forest_total_leaves(f) * per_leaf * sizeof *f->theta);
  if (f->matrix && f->matrix->exact_cells)
    sodium_memzero(f->matrix->exact_cells,
                   (size_t)f->matrix->exact.cells * rdt_forest_slots(f) * sizeof *f->matrix->exact_cells);
  if (h->bytes) sodium_memzero(h->bytes, h->size);
  rdt_forest_free(f);
  free(h->bytes);
  free(h);
}

/* Id and checksum find the candidate cheaply; the full comparison makes a
** hit exact, so an edited copy that kept header and checksum is decoded
** (and rejected) on its own. It costs one pass over the BLOB, which SQLite
** has already spent copying a non-constant argument. */
static int same_model(const rdt_model_handle *h, const unsigned char *blob, size_t n) {
  return h->size == n && memcmp(h->bytes + RDT_MODEL_ID_OFFSET, blob + RDT_MODEL_ID_OFFSET, 16) == 0 &&
         memcmp(h->bytes + n - RDT_CHECKSUM_BYTES, blob + n - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES) == 0 &&
         memcmp(h->bytes, blob, n) == 0;
}

rdt_model_handle *rdt_model_lookup(rdt_conn *conn, sqlite3_value *v, int *rc, char *err, size_t en) {
  *rc = SQLITE_ERROR;
  int t = sqlite3_value_type(v);
  if (t != SQLITE_BLOB) {
    const char *text = t == SQLITE_TEXT ? (const char *)sqlite3_value_text(v) : NULL;
    int json = text && text[strspn(text, " \t\r\n")] == '{';
    snprintf(err, en, "the model must be the BLOB rdt_fit or rdt_train returned (got %s)%s",
             t == SQLITE_NULL ? "NULL: no such model?" : t == SQLITE_INTEGER ? "an INTEGER" : t == SQLITE_FLOAT ? "a REAL"
             : "TEXT",
             json ? "; a JSON document from rdt_export turns back into the model with rdt_import(document)"
             : t == SQLITE_TEXT ? "; a model stored as hex text must be decoded back to a BLOB first (unhex() from "
                                  "SQLite 3.41), one in a file is read with readfile('model.rdt')" : "");
    return NULL;
  }
  const unsigned char *blob = sqlite3_value_blob(v);
  size_t n = (size_t)sqlite3_value_bytes(v);
  rdt_model_handle *h = NULL;
  conn->tick++;
  if (blob && n >= RDT_HEADER_BYTES + RDT_CHECKSUM_BYTES) {
    for (int i = 0; i < RDT_CACHE_SLOTS; i++) {
      if (conn->cache[i] && same_model(conn->cache[i], blob, n)) {
        conn->used[i] = conn->tick;
        h = conn->cache[i];
        break;
      }
    }
  }
  if (!h) {
    h = calloc(1, sizeof *h);
    if (!h) {
      *rc = SQLITE_NOMEM;
      return NULL;
    }
    const unsigned char *b = blob ? blob : (const unsigned char *)"";
    h->is_learned = rdt_model_is_learned(b, blob ? n : 0);
    if (h->is_learned ? !rdt_learned_decode(b, blob ? n : 0, rdt_learner_by_id, &h->learned, err, en)
                      : !rdt_model_decode(b, blob ? n : 0, &h->forest, err, en)) {
      free(h);
      return NULL;
    }
    h->refs = 1;
    h->size = n;
    h->bytes = malloc(n);
    if (!h->bytes) {
      rdt_model_release(h);
      *rc = SQLITE_NOMEM;
      return NULL;
    }
    memcpy(h->bytes, blob, n);
    int slot = 0;
    for (int i = 1; i < RDT_CACHE_SLOTS; i++) {
      if (!conn->cache[slot]) break;
      if (!conn->cache[i] || conn->used[i] < conn->used[slot]) slot = i;
    }
    if (conn->cache[slot]) rdt_model_release(conn->cache[slot]);
    conn->cache[slot] = h;
    conn->used[slot] = conn->tick;
  }
  h->refs++; /* the caller's reference: the cache may evict meanwhile */
  *rc = SQLITE_OK;
  return h;
}

rdt_model_handle *rdt_model_get(sqlite3_context *ctx, sqlite3_value *v, int arg, const char *fn) {
  rdt_model_handle *h = sqlite3_get_auxdata(ctx, arg);
  if (h) return h;
  char err[256];
  int rc;
  h = rdt_model_lookup(sqlite3_user_data(ctx), v, &rc, err, sizeof err);
  if (!h) {
    if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(ctx);
    else rdt_sql_error(ctx, fn, err);
    return NULL;
  }
  /* auxdata keeps the lookup's reference. */
  sqlite3_set_auxdata(ctx, arg, h, rdt_model_release);
  /* set_auxdata may have released it already (out of memory): re-read. */
  rdt_model_handle *kept = sqlite3_get_auxdata(ctx, arg);
  return kept ? kept : h;
}
