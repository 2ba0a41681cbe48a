/*
** sql_federated.c - the sites' side of federated mode: sites that must not
** show their counters to anyone, the coordinator included.
**
**   SELECT rdt_site_keypair();                          -- each site, once: {"public_key", "secret_key"}
**   -- the coordinator: rdt_plan('{..., "federated": {"sites": [public keys]}}')  (sql_shard.c)
**   SELECT rdt_share(plan, 'SELECT ...', '{"secret_key": "...", "ledger": "budget"}');  -- each site
**   -- the coordinator: rdt_finish(plan, (SELECT rdt_merge(share) FROM shares))
**
** Contract:
**   1. rdt_site_keypair() returns a fresh X25519 key pair (mask.h) as JSON
**      hex. The secret key stays at its site: it is never in a plan, a
**      share or a table rdt writes.
**   2. rdt_share(plan, query, site) reads a federated plan (shard plans are
**      refused: their sites call rdt_partial), finds the site by the public
**      key of "secret_key" in the plan's roster, configures, prepares the
**      query and builds the learner, checks the state against the plan and
**      its noise blocks (learner.h contract 9) — all before any row — then,
**      with the site's "ledger", charges the plan's ε there (the rows are
**      this site's; "note" is recorded with it; a seeded plan cannot be
**      charged), counts its rows, and returns its share (share.h): its
**      counters plus the release's whole noise, under its pairwise mask, as
**      a partial state flagged MASKED whose id is its public key. With a
**      ledger the outcome is recorded before the share is returned.
**   3. Privacy (share.h): neighbouring relation, add or remove one row of
**      the site's input; sensitivity and noise the learner's; each share is
**      ε-DP on its own before the mask is added, so the guarantee holds
**      against any coalition of the coordinator and other sites. The mask
**      hides the share itself from the coordinator unless every other site
**      colludes with it (two honest sites keep each one's share hidden).
**      Nothing unmasked leaves the call. Each call draws fresh noise: a site
**      that answers one plan twice releases twice (its ledger counts both).
**   4. Dropout: the coordinator's rdt_finish needs every site's share once;
**      without one the masks do not cancel and nothing is released. The
**      plan's charge stays spent (a share already given could be unmasked
**      by whoever later holds the missing site's key: each is ε-DP, so
**      counting it spent is the safe side); a new plan has fresh masks.
** Both functions are SQLITE_DIRECTONLY.
*/
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/mask.h"
#include "core/options.h"
#include "core/share.h"
#include "sql_shard.h"

void rdt_site_keypair_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  unsigned char pk[RDT_MASK_KEYBYTES], sk[RDT_MASK_KEYBYTES];
  char pk_hex[2 * RDT_MASK_KEYBYTES + 1], sk_hex[2 * RDT_MASK_KEYBYTES + 1], out[200];
  rdt_mask_keypair(pk, sk);
  sodium_bin2hex(pk_hex, sizeof pk_hex, pk, sizeof pk);
  sodium_bin2hex(sk_hex, sizeof sk_hex, sk, sizeof sk);
  snprintf(out, sizeof out, "{\"public_key\":\"%s\",\"secret_key\":\"%s\"}", pk_hex, sk_hex);
  sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
  sodium_memzero(sk, sizeof sk);
  sodium_memzero(sk_hex, sizeof sk_hex);
  sodium_memzero(out, sizeof out);
}

/* The site document: {"secret_key": 64 hex digits [, "ledger": name [, "note": text]]}. */
typedef struct site_options {
  unsigned char sk[RDT_MASK_KEYBYTES];
  char ledger[129];
  char note[1025];
} site_options;

static int read_site(sqlite3_value *v, site_options *o, char *err, size_t en) {
  char jerr[64];
  memset(o, 0, sizeof *o);
  rdt_json *root = sqlite3_value_type(v) == SQLITE_TEXT && sqlite3_value_text(v)
                       ? rdt_json_parse((const char *)sqlite3_value_text(v), (size_t)sqlite3_value_bytes(v), jerr,
                                        sizeof jerr)
                       : NULL;
  const rdt_json *sk = root ? rdt_json_get(root, "secret_key") : NULL, *l = root ? rdt_json_get(root, "ledger") : NULL;
  const rdt_json *note = root ? rdt_json_get(root, "note") : NULL;
  size_t got = 0;
  int ok = root && root->type == RDT_JSON_OBJECT && sk && sk->type == RDT_JSON_STRING && sk->string_len == 64 &&
           sodium_hex2bin(o->sk, sizeof o->sk, sk->string, 64, NULL, &got, NULL) == 0 && got == sizeof o->sk;
  for (size_t i = 0; ok && i < root->n; i++) {
    const char *k = root->items[i]->key;
    ok = !strcmp(k, "secret_key") || !strcmp(k, "ledger") || !strcmp(k, "note");
  }
  if (ok && l) ok = l->type == RDT_JSON_STRING && l->string_len > 0 && l->string_len < sizeof o->ledger;
  if (ok && note) ok = l && note->type == RDT_JSON_STRING && note->string_len > 0 && note->string_len < sizeof o->note;
  if (ok && l) memcpy(o->ledger, l->string, l->string_len + 1);
  if (ok && note) memcpy(o->note, note->string, note->string_len + 1);
  rdt_json_free(root); /* the parsed copy of the secret key goes with it */
  if (!ok)
    snprintf(err, en, "the site must be a JSON object {\"secret_key\": the site's X25519 secret key (64 hex digits, "
                      "rdt_site_keypair), \"ledger\": the site's ledger (optional), \"note\": recorded with its charge "
                      "(optional, with \"ledger\")}");
  return ok;
}

void rdt_share_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char err[600] = "";
  rdt_plan plan;
  site_options site;
  rdt_partial part;
  memset(&part, 0, sizeof part);
  memset(&plan, 0, sizeof plan);
  rdt_train_session *s = NULL;
  sqlite3_stmt *stmt = NULL;
  int ok = 0, charged = 0, rc = SQLITE_DONE;
  unsigned char *blob = NULL, digest[32], pk[RDT_MASK_KEYBYTES];
  size_t size = 0;
  rdt_span spans[RDT_MAX_SPANS];
  rdt_noise_block blocks[RDT_MAX_SPANS];
  uint32_t k = 0, kb = 0;
  uint64_t n = 0;
  int64_t *counters = NULL;
  uint64_t *out = NULL;
  long me = -1;
  if (!rdt_shard_read_plan(argv[0], &plan, err, sizeof err) || !read_site(argv[2], &site, err, sizeof err)) goto done;
  if (!plan.federated) {
    snprintf(err, sizeof err, "this plan is not federated: its sites call rdt_partial(plan, query)");
    goto done;
  }
  rdt_mask_public(site.sk, pk);
  if ((me = rdt_mask_find(plan.sites, plan.n_sites, pk)) < 0) {
    snprintf(err, sizeof err, "this site's key is not among the plan's sites (its public key must be in "
                              "\"federated\": {\"sites\": [...]} of the plan)");
    goto done;
  }
  /* Contract 2: every parameter before any row. */
  if (!(stmt = rdt_fit_prepare_query(db, argv[1], err, sizeof err)) ||
      !(s = rdt_shard_session(db, &plan, 0, NULL, 0, spans, &k, err, sizeof err)))
    goto done;
  kb = rdt_train_noise(s, blocks, RDT_MAX_SPANS);
  n = rdt_spans_count(spans, k);
  if (kb == 0) {
    snprintf(err, sizeof err, "this build cannot add the plan's noise at a site");
    goto done;
  }
  counters = malloc((size_t)(n ? n : 1) * sizeof *counters);
  out = malloc((size_t)(n ? n : 1) * sizeof *out);
  if (!counters || !out) {
    snprintf(err, sizeof err, "out of memory");
    goto done;
  }
  if (site.ledger[0]) {
    char tail[96], request[160];
    rdt_shard_charge_tail(&plan, tail);
    snprintf(request, sizeof request, "%s, site %ld of %u", tail, me + 1, plan.n_sites);
    if (rdt_train_seed_key(s)) {
      snprintf(err, sizeof err, "%s", rdt_seed_with_ledger_error);
      goto done;
    }
    if (!rdt_train_set_ledger(s, site.ledger, site.note) ||
        !rdt_train_charge(s, db, sqlite3_user_data(ctx), "rdt_share", NULL, request, err, sizeof err))
      goto done;
    charged = 1;
  }
  ok = rdt_shard_count_rows(db, s, stmt, &rc, err, sizeof err);
  stmt = NULL; /* finalized */
  if (ok && rdt_train_counters(s, spans, RDT_MAX_SPANS, digest) != k) {
    snprintf(err, sizeof err, "the training state changed its shape while counting");
    ok = 0;
  }
  if (ok) {
    rdt_spans_read(spans, k, counters);
    rdt_rng noise;
    char purpose[48];
    snprintf(purpose, sizeof purpose, "federated-noise-%ld", me); /* seeded: one stream per site */
    rdt_rng_init_for(&noise, rdt_train_seed_key(s), purpose, 0);
    ok = rdt_share_make(out, counters, n, blocks, kb, &noise, plan.sites, plan.n_sites, (uint32_t)me, site.sk,
                        plan.digest, 0);
    rdt_rng_clear(&noise);
    if (!ok) snprintf(err, sizeof err, "the share could not be masked (a roster key is not a valid X25519 key)");
  }
  if (ok && (!rdt_partial_from_masked(&part, plan.digest, 0, out, n, pk) || !(blob = rdt_partial_encode(&part, &size)))) {
    snprintf(err, sizeof err, "out of memory while writing the share");
    ok = 0;
  }
  if (ok && size > (size_t)sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1)) {
    snprintf(err, sizeof err, "the share is %llu bytes, above this connection's SQLITE_LIMIT_LENGTH",
             (unsigned long long)size);
    ok = 0;
  }
done:
  if (charged) { /* contract 2: recorded before anything is returned */
    char rerr[400];
    if (!rdt_train_record_unmodelled(s, ok, rerr, sizeof rerr) && ok) {
      ok = 0;
      snprintf(err, sizeof err, "the share was made but not released: %s (the charge stands)", rerr);
    }
  }
  sqlite3_finalize(stmt);
  if (counters) sodium_memzero(counters, (size_t)(n ? n : 1) * sizeof *counters);
  free(counters);
  free(out); /* masked, or wiped by rdt_share_make */
  rdt_partial_free(&part);
  rdt_train_session_free(s); /* wipes the exact state */
  rdt_plan_free(&plan);
  sodium_memzero(&site, sizeof site);
  if (ok) {
    sqlite3_result_blob64(ctx, blob, size, free);
    return;
  }
  free(blob);
  if (rc == SQLITE_INTERRUPT) sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else rdt_sql_error(ctx, "rdt_share", err);
}
