/*
** sql_shard.c - shard mode: one model over the rows of many databases of one
** curator, trained where the rows are and released once.
**
**   SELECT rdt_plan(options);                     -- coordinator: public plan, ledger charged once
**   SELECT rdt_partial(plan, 'SELECT ...');       -- each site: its exact partial state
**   SELECT rdt_merge(p) FROM partials;            -- coordinator: their sum
**   SELECT rdt_finish(plan, merged);              -- coordinator: the noise, once; the model
**
** Contract:
**   1. rdt_plan checks the options as rdt_fit does, refuses what shard mode
**      cannot do (a learner without counters: learner.h contract 3; a
**      privacy unit or private bounds, item 7), builds the learner once
**      from the canonical options (plan.h: the structure key, fresh or the
**      seed's, separate from the noise) to learn the length and digest of
**      its state, and only then charges the ledger, once, before any row of
**      any site is read; the charge stays pending, its request ending with
**      the plan's digest. Every error before it is a parameter error.
**   2. rdt_partial(plan, query) reads the plan (an edited one is refused:
**      plan.h contract 4), configures from its options, prepares the query
**      and builds the learner; if this build's state differs from the
**      plan's (length or digest: another structure, other bounds) it fails
**      before any row. It then counts its rows by rdt_fit's rules and
**      returns them as a partial state (partial.h): exact, never noised,
**      never a model. It charges nothing: the plan did.
**   3. rdt_merge(partial) is an aggregate: the sum of partial states of one
**      plan and round, each summed once (partial.h contract 5). No input is
**      an error: it would train on no site.
**   4. rdt_finish(plan, merged) checks that merged is a sum of this plan's
**      partial states, rebuilds the learner from the plan, adds the sum to
**      its empty state and finishes it: the learner's own noise, once, and
**      its model. With a ledger it first takes over the plan's pending
**      charge (rdt_ledger_resume) and records the outcome there: a plan
**      releases one model; a second rdt_finish is refused before any work.
**      Without a ledger each call releases anew, as rdt_fit does.
**   5. Privacy. Neighbouring relation: add or remove one row of the union
**      of the sites' inputs. The merged state is the union's exact state
**      (exact integer addition over one structure, each site's rows counted
**      once), so rdt_finish's output has exactly the distribution of
**      rdt_fit with the plan's options over the union: the learner's
**      sensitivity and its ε, charged once by rdt_plan. Seeded plans give
**      the union's model byte for byte. Partials, like rdt_check's output,
**      are exact facts for the curator only; their transport is the
**      curator's (federated mode is for sites that must not show theirs).
**   6. A row in two sites' inputs is two rows: each site's rows must be
**      disjoint from the others'. A person with rows at several sites
**      weighs as many rows; a privacy unit's cap (unit.h) is per database,
**      so item 7 refuses it.
**   7. "privacy_unit" and "bounds": "private" are refused by all four: a
**      unit spread over k sites would escape its cap k times, and private
**      bounds need a round of their own before the plan is final.
**   8. Federated mode (sql_federated.c has the sites' rdt_site_keypair and
**      rdt_share): options with "federated": {"sites": [public keys]} make
**      rdt_plan write a federated plan (plan.h) for a learner whose release
**      is one discrete Laplace per counter (learner.h contract 9; others are
**      refused, saying why) and a private ε. rdt_merge sums the sites' masked
**      shares modulo 2^64; rdt_finish releases only a sum that holds every
**      site's share once (a dropout leaves masks in it: refused, nothing
**      released) by finish_noised(): the noise is in the shares already,
**      none is added. Privacy: share.h (ε-DP per share, whatever the
**      coalition; the noise's variance n times one release's).
**   9. Rounds (learner.h contract 10: boost, naive Bayes's "readout":
**      "auto", auto; round.h): for a
**      learner whose release reads its rows more than once, the plan's
**      "rounds" is the most rounds its release takes, and its state is
**      round 0's vector. rdt_partial(plan, query, message) opens the round
**      the message opens (none, or NULL: round 0), counts the site's rows
**      into that round's vector and returns it as a partial state carrying
**      the message; rdt_merge adds only partials of one round and message;
**      rdt_finish opens the same round from the message the sum carries,
**      adds the sum and releases the round: its noise and post-processing,
**      once, then either the model or the next round's message (round.h),
**      public. A seeded plan's noise stream goes on where the last round
**      left it (the message says where), so the rounds give rdt_fit's model
**      over the union byte for byte. A site holds nothing between rounds:
**      each round reads its query again, which must return the same rows
**      (their order does not matter: every round's vector is a sum of
**      integers). With a ledger the plan's charge moves through "round 1",
**      "round 2", ... (sql_ledger.c contract 10): each round is released
**      once, and only from the message released before it, so the rounds
**      spend exactly the ε the plan charged. Privacy: every round's release
**      is the learner's own at that point over the union's rows (the
**      merged vector is the union's exact vector), so the model and every
**      message are the learner's mechanism with the plan's ε. Federated
**      mode refuses learners of rounds (their selections read exact sums,
**      or, boost, this build does not federate them).
** rdt_plan, rdt_partial and rdt_finish are SQLITE_DIRECTONLY; so is
** rdt_merge (it handles exact partial states).
*/
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_shard.h"

#define SHARD_LEARNERS                                                                                              \
  "shard mode trains \"constant\", \"naive_bayes\", \"random_trees\", \"matrix_forest\", the forests of "         \
  "\"algorithm\": \"rdt\" (\"noise\": \"leaf\", or \"matrix\" without \"partition\") and \"rdt#\" (its public " \
  "tables at every site) in one round, and \"boost\", \"naive_bayes\" with \"readout\": \"auto\" and "  \
  "\"auto\" (when every candidate it may pick has rounds) in rounds; train the others with rdt_fit over the "     \
  "shards ATTACHed and combined with UNION ALL"
#define FEDERATED_LEARNERS                                                                                           \
  "federated mode trains the learners whose release is one discrete Laplace per counter: \"constant\", "            \
  "\"naive_bayes\" with a fixed \"bins\" (\"readout\": \"bayes\", \"moments\" or \"both\") and the RDT forest "     \
  "(\"algorithm\": \"rdt\") with a fixed \"depth\" or \"rows\""

/* The options argument as TEXT, or NULL with err. */
static const char *options_text(sqlite3_value *v, char *err, size_t en) {
  if (sqlite3_value_type(v) == SQLITE_TEXT && sqlite3_value_text(v)) return (const char *)sqlite3_value_text(v);
  snprintf(err, en, "the first argument must be the options, a JSON object as TEXT%s", rdt_sql_blob_hint(v, 0));
  return NULL;
}

/* Contract 7. */
int rdt_shard_refuse_units(const rdt_train_session *s, char *err, size_t en) {
  if (!rdt_unit_active(rdt_train_unit(s))) return 1;
  snprintf(err, en, "\"privacy_unit\" and \"bounds\": \"private\" are not available in shard mode: a unit's rows are "
                    "capped per database, so a unit spread over several shards would escape its cap, and private "
                    "bounds need a pass of their own before the plan; train with rdt_fit over the shards ATTACHed "
                    "and combined with UNION ALL");
  return 0;
}

int rdt_shard_read_plan(sqlite3_value *v, rdt_plan *p, char *err, size_t en) {
  if (sqlite3_value_type(v) != SQLITE_TEXT || !sqlite3_value_text(v)) {
    memset(p, 0, sizeof *p);
    snprintf(err, en, "the plan must be the TEXT rdt_plan returned");
    return 0;
  }
  return rdt_plan_read((const char *)sqlite3_value_text(v), (size_t)sqlite3_value_bytes(v), p, err, en);
}

void rdt_shard_charge_tail(const rdt_plan *p, char out[96]) {
  char hex[65];
  sodium_bin2hex(hex, sizeof hex, p->digest, sizeof p->digest);
  snprintf(out, 96, "; %s plan %s", p->federated ? "federated" : "shard", hex);
}

rdt_train_session *rdt_shard_session(sqlite3 *db, const rdt_plan *p, uint32_t round, const unsigned char *payload,
                                     size_t payload_len, rdt_span *out, uint32_t *k, char *err, size_t en) {
  rdt_train_session *s = rdt_train_session_new();
  unsigned char digest[32];
  if (!s) {
    snprintf(err, en, "out of memory");
    return NULL;
  }
  if (!rdt_train_configure(s, db, p->options, p->options_len, err, en) || !rdt_shard_refuse_units(s, err, en) ||
      !rdt_train_build(s, db, err, en)) {
    rdt_train_session_free(s);
    return NULL;
  }
  /* Contract 9: a learner of rounds opens this one; any other has round 0 only. */
  int rounds = rdt_train_rounds(s) > 0;
  if ((round && !rounds) || round >= p->rounds) {
    snprintf(err, en, "the round message opens round %u, and this plan has %u round%s", round + 1, p->rounds,
             p->rounds == 1 ? "" : "s");
    rdt_train_session_free(s);
    return NULL;
  }
  if (rounds && !rdt_train_round_open(s, round, payload, payload_len, err, en)) {
    rdt_train_session_free(s);
    return NULL;
  }
  *k = rdt_train_counters(s, out, RDT_MAX_SPANS, digest);
  if (*k == 0 || (round == 0 && rdt_spans_count(out, *k) != p->counters) ||
      sodium_memcmp(digest, p->state_digest, 32) != 0) {
    snprintf(err, en, "this build's training state is not the plan's (%s): the plan's structure could not be "
             "drawn here the same way", *k == 0 ? "it has no counters" : "another length or digest");
    rdt_train_session_free(s);
    return NULL;
  }
  return s;
}

int rdt_shard_count_rows(sqlite3 *db, rdt_train_session *s, sqlite3_stmt *stmt, int *rc, char *err, size_t en) {
  uint32_t nf = rdt_train_schema(s)->n_features;
  int *col = malloc((nf ? nf : 1) * sizeof *col), label_col = -1, unit_col = -1, ok = col != NULL;
  sqlite3_value **vals = malloc((nf ? nf : 1) * sizeof *vals);
  *rc = SQLITE_DONE;
  if (!ok || !vals) {
    snprintf(err, en, "out of memory");
    ok = 0;
  }
  char *ignored = NULL; /* columns neither label nor feature: ignored, as rdt_fit ignores them */
  ok = ok && rdt_fit_bind_columns(stmt, rdt_train_schema(s), rdt_train_label_name(s), "", &label_col, &unit_col, col,
                                  &ignored, err, en);
  sqlite3_free(ignored);
  while (ok && (*rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (uint32_t j = 0; j < nf; j++) vals[j] = sqlite3_column_value(stmt, col[j]);
    ok = rdt_train_row(s, sqlite3_column_value(stmt, label_col), vals, err, en);
  }
  if (ok && *rc != SQLITE_DONE) {
    snprintf(err, en, "the query failed while it ran: %s", sqlite3_errmsg(db));
    ok = 0;
  }
  sqlite3_finalize(stmt);
  free(vals);
  free(col);
  return ok;
}

/* ---- rdt_plan(options) -------------------------------------------------- */

void rdt_plan_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char err[900] = "";
  rdt_plan plan;
  memset(&plan, 0, sizeof plan);
  rdt_bytes options = {0}, canonical = {0}, text = {0};
  rdt_train_session *user = rdt_train_session_new(), *built = NULL;
  unsigned char key[32], digest[32];
  rdt_span spans[RDT_MAX_SPANS];
  rdt_noise_block blocks[RDT_MAX_SPANS];
  int ok = 0;
  const char *json = options_text(argv[0], err, sizeof err);
  if (!user) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  /* Contract 8: "federated" is the plan's, not the learner's. */
  if (!json || !rdt_plan_federated(json, (size_t)sqlite3_value_bytes(argv[0]), &options, &plan.sites,
                                   &plan.n_sites, err, sizeof err))
    goto done;
  plan.federated = plan.sites != NULL;
  if (!rdt_train_configure(user, db, (const char *)options.p, options.n, err, sizeof err) ||
      !rdt_shard_refuse_units(user, err, sizeof err))
    goto done;
  rdt_train_facts facts;
  rdt_train_get_facts(user, &facts);
  if (!rdt_train_has_counters(user)) { /* neither counters nor rounds */
    snprintf(err, sizeof err, "\"%s\" has no partial state to add up (it keeps its rows until it finishes%s); %s",
             facts.algorithm, strcmp(facts.algorithm, "auto") == 0 ? ", and it is the default when the options name "
             "no \"algorithm\"" : "", plan.federated ? FEDERATED_LEARNERS : SHARD_LEARNERS);
    goto done;
  }
  if (plan.federated && !facts.is_private) {
    snprintf(err, sizeof err, "a federated plan needs a private \"epsilon\": its sites send noisy shares");
    goto done;
  }
  /* Contract 1: the key the structure is drawn from, never the noise's. */
  if (rdt_train_structure_key(user)) memcpy(key, rdt_train_structure_key(user), sizeof key);
  else rdt_rng_structure_key(key, rdt_train_seed_key(user));
  if (!rdt_plan_canonical_options((const char *)options.p, options.n, key, &canonical, err, sizeof err)) goto done;
  /* The canonical options, built as every site will build them. */
  if (!(built = rdt_train_session_new())) {
    snprintf(err, sizeof err, "out of memory");
    goto done;
  }
  if (!rdt_train_configure(built, db, (const char *)canonical.p, canonical.n, err, sizeof err) ||
      !rdt_train_build(built, db, err, sizeof err))
    goto done;
  /* Contract 9: a learner of rounds; round 0's vector is the plan's state. */
  uint32_t rounds = rdt_train_rounds(built);
  if (rounds && plan.federated) {
    snprintf(err, sizeof err, "\"%s\" with these options runs in rounds, which federated mode does not: %s; %s",
             facts.algorithm, strcmp(facts.algorithm, "boost") == 0
                 ? "its rounds release noisy linear statistics that masked shares could carry, but this build "
                   "federates one-round learners only"
             : strcmp(facts.algorithm, "auto") == 0
                 ? "it runs its pick's rounds (boosting's, which this build does not federate; naive Bayes's "
                   "readout choice, a permute-and-flip on the exact sum of the sites' counts) and its guard's"
                 : "it selects (permute-and-flip) on the exact sum of the sites' counts, which no site may see",
             FEDERATED_LEARNERS);
    goto done;
  }
  if (rounds && !rdt_train_round_open(built, 0, NULL, 0, err, sizeof err)) goto done;
  uint32_t k = rdt_train_counters(built, spans, RDT_MAX_SPANS, digest);
  if (k == 0) {
    snprintf(err, sizeof err, "\"%s\" with these options has no partial state to add up (it keeps rows, or draws a "
             "coin per row); %s", facts.algorithm, plan.federated ? FEDERATED_LEARNERS : SHARD_LEARNERS);
    goto done;
  }
  if (plan.federated) { /* contract 8: one discrete Laplace per counter, covering them all */
    uint32_t kb = rdt_train_noise(built, blocks, RDT_MAX_SPANS);
    uint64_t covered = 0;
    for (uint32_t b = 0; b < kb; b++) covered += blocks[b].n;
    if (kb == 0 || covered != rdt_spans_count(spans, k)) {
      snprintf(err, sizeof err, "\"%s\" with these options cannot be federated: its release is not one discrete "
               "Laplace per counter fixed before the rows (an automatic depth or \"auto\" bins choose from a noisy "
               "count of the merged rows, tables or labels derive from them); %s", facts.algorithm,
               FEDERATED_LEARNERS);
      goto done;
    }
  }
  snprintf(plan.version, sizeof plan.version, "%s", RDT_VERSION_STRING);
  snprintf(plan.learner, sizeof plan.learner, "%s", facts.algorithm);
  plan.rounds = rounds ? rounds : 1;
  plan.options = (char *)canonical.p;
  plan.options_len = canonical.n;
  plan.counters = rdt_spans_count(spans, k);
  memcpy(plan.state_digest, digest, sizeof digest);
  snprintf(plan.ledger, sizeof plan.ledger, "%s", rdt_train_ledger(user));
  rdt_plan_seal(&plan);
  if (plan.ledger[0]) { /* Contract 1: once, pending, naming the plan's digest */
    char tail[96];
    rdt_shard_charge_tail(&plan, tail);
    sqlite3_int64 id = 0;
    if (!rdt_train_charge(user, db, sqlite3_user_data(ctx), "rdt_plan", NULL, tail, err, sizeof err) ||
        !(id = rdt_train_charge_id(user)))
      goto done;
    plan.charge = id;
  }
  rdt_plan_write(&plan, &text);
  ok = !text.oom && text.n <= (size_t)sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  if (!ok) snprintf(err, sizeof err, "out of memory while writing the plan");
done:
  rdt_train_session_free(built);
  rdt_train_session_free(user); /* the charge stays pending: rdt_finish records it */
  plan.options = NULL; /* canonical's */
  rdt_plan_free(&plan);
  rdt_bytes_free(&options);
  rdt_bytes_free(&canonical);
  if (ok) sqlite3_result_text64(ctx, (const char *)text.p, text.n, free, SQLITE_UTF8);
  else {
    rdt_bytes_free(&text);
    rdt_sql_error(ctx, "rdt_plan", err);
  }
}

/* ---- rdt_partial(plan, query [, message]) ------------------------------- */

/* Contract 9: the round message argument (NULL: round 0), decoded into m
** (pointing into v's BLOB); 0 with err. */
static int read_message(sqlite3_value *v, const rdt_plan *p, rdt_round_msg *m, char *err, size_t en) {
  memset(m, 0, sizeof *m);
  if (sqlite3_value_type(v) == SQLITE_NULL) return 1;
  const unsigned char *b = sqlite3_value_blob(v);
  if (sqlite3_value_type(v) != SQLITE_BLOB || !b) {
    snprintf(err, en, "the round message must be the BLOB rdt_finish returned (or NULL for the first round)");
    return 0;
  }
  size_t n = (size_t)sqlite3_value_bytes(v);
  if (n >= 8 && memcmp(b, "RDTMODEL", 8) == 0) {
    snprintf(err, en, "not a round message of rdt_finish (the rounds are over when rdt_finish returns the model)");
    return 0;
  }
  if (!rdt_round_decode(b, n, m, err, en)) return 0;
  if (sodium_memcmp(m->plan, p->digest, sizeof m->plan) != 0) {
    snprintf(err, en, "the round message was not made for this plan");
    return 0;
  }
  return 1;
}

void rdt_partial_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char err[600] = "";
  rdt_plan plan;
  rdt_partial part;
  memset(&part, 0, sizeof part);
  rdt_train_session *s = NULL;
  sqlite3_stmt *stmt = NULL;
  int ok = 0, rc = SQLITE_DONE;
  unsigned char *blob = NULL, digest[32];
  size_t size = 0;
  rdt_span spans[RDT_MAX_SPANS];
  uint32_t k = 0;
  rdt_round_msg msg;
  memset(&msg, 0, sizeof msg);
  if (!rdt_shard_read_plan(argv[0], &plan, err, sizeof err)) goto done;
  if (plan.federated) {
    snprintf(err, sizeof err, "this plan is federated: each of its sites calls rdt_share(plan, query, site), which "
                              "adds its noise and its mask");
    goto done;
  }
  /* Parameter errors first: the message, the query, the plan's structure, the columns. */
  if ((argc > 2 && !read_message(argv[2], &plan, &msg, err, sizeof err)) ||
      !(stmt = rdt_fit_prepare_query(db, argv[1], err, sizeof err)) ||
      !(s = rdt_shard_session(db, &plan, msg.round, msg.payload, msg.payload_len, spans, &k, err, sizeof err)))
    goto done;
  ok = rdt_shard_count_rows(db, s, stmt, &rc, err, sizeof err);
  stmt = NULL; /* finalized */
  if (ok && rdt_train_counters(s, spans, RDT_MAX_SPANS, digest) != k) {
    snprintf(err, sizeof err, "the training state changed its shape while counting");
    ok = 0;
  }
  /* Contract 9: the partial carries the message it answers back to rdt_finish. */
  const unsigned char *mb = msg.round ? sqlite3_value_blob(argv[2]) : NULL;
  size_t ml = msg.round ? (size_t)sqlite3_value_bytes(argv[2]) : 0;
  if (ok && (!rdt_partial_from_spans(&part, plan.digest, msg.round, spans, k, mb, ml) ||
             !(blob = rdt_partial_encode(&part, &size)))) {
    snprintf(err, sizeof err, "out of memory while writing the partial state");
    ok = 0;
  }
  if (ok && size > (size_t)sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1)) {
    snprintf(err, sizeof err, "the partial state is %llu bytes, above this connection's SQLITE_LIMIT_LENGTH",
             (unsigned long long)size);
    ok = 0;
  }
done:
  sqlite3_finalize(stmt);
  rdt_partial_free(&part);
  rdt_train_session_free(s); /* wipes the exact state */
  rdt_plan_free(&plan);
  if (ok) {
    sqlite3_result_blob64(ctx, blob, size, free);
    return;
  }
  if (blob) sodium_memzero(blob, size);
  free(blob);
  if (rc == SQLITE_INTERRUPT) sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
  else rdt_sql_error(ctx, "rdt_partial", err);
}

/* ---- rdt_merge(partial): the sum ------------------------------------------ */

typedef struct merge_agg {
  int started, failed;
  rdt_partial sum;
} merge_agg;

static void merge_fail(sqlite3_context *ctx, merge_agg *a, const char *msg) {
  rdt_sql_error(ctx, "rdt_merge", msg);
  a->failed = 1;
  rdt_partial_free(&a->sum);
}

void rdt_merge_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  merge_agg *a = sqlite3_aggregate_context(ctx, sizeof *a);
  char err[300], msg[400];
  if (!a) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (a->failed) return;
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
    merge_fail(ctx, a, sqlite3_value_type(argv[0]) == SQLITE_NULL
                           ? "a partial state is NULL (did a site's rdt_partial fail?): the sum would miss its rows"
                           : "expected the BLOBs rdt_partial, rdt_share or rdt_merge returned");
    return;
  }
  rdt_partial p;
  const unsigned char *b = sqlite3_value_blob(argv[0]);
  size_t n = (size_t)sqlite3_value_bytes(argv[0]);
  if (!rdt_partial_decode(b ? b : (const unsigned char *)"", b ? n : 0, &p, err, sizeof err)) {
    snprintf(msg, sizeof msg, "%s", err);
    merge_fail(ctx, a, msg);
    return;
  }
  if (!a->started) {
    a->sum = p;
    a->started = 1;
    return;
  }
  int ok = rdt_partial_merge(&a->sum, &p, err, sizeof err);
  rdt_partial_free(&p);
  if (!ok) merge_fail(ctx, a, err);
}

void rdt_merge_final(sqlite3_context *ctx) {
  merge_agg *a = sqlite3_aggregate_context(ctx, 0);
  if (a && a->failed) return;
  if (!a || !a->started) {
    rdt_sql_error(ctx, "rdt_merge", "no partial states to sum (no rows reached it)");
    return;
  }
  size_t size = 0;
  unsigned char *blob = rdt_partial_encode(&a->sum, &size);
  rdt_partial_free(&a->sum);
  a->started = 0;
  if (blob) sqlite3_result_blob64(ctx, blob, size, free);
  else sqlite3_result_error_nomem(ctx);
}

/* ---- rdt_finish(plan, merged) --------------------------------------------- */

/* Contract 8: a federated sum holds exactly one share of every site (ids:
** the sites' public keys cut to 16 bytes, in order). */
static int every_site(const rdt_plan *p, const rdt_partial *sum, char *err, size_t en) {
  uint32_t found = 0;
  for (uint32_t i = 0; i < p->n_sites; i++)
    for (uint32_t j = 0; j < sum->n_ids; j++)
      found += memcmp(p->sites + (size_t)i * 32, sum->ids + (size_t)j * RDT_PARTIAL_ID_BYTES, RDT_PARTIAL_ID_BYTES) == 0;
  if (found == p->n_sites && sum->n_ids == p->n_sites) return 1;
  snprintf(err, en, "the sum holds the shares of %u of the plan's %u sites%s: a site's mask cancels only against "
           "every other site's, so nothing can be released; make a new plan for the sites that remain (this one's "
           "charge stays spent)", found, p->n_sites, sum->n_ids > found ? " and shares of no site of the plan" : "");
  return 0;
}

void rdt_finish_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char err[600] = "";
  rdt_plan plan;
  rdt_partial sum;
  memset(&sum, 0, sizeof sum);
  rdt_train_session *s = NULL;
  rdt_span spans[RDT_MAX_SPANS];
  uint32_t k = 0;
  unsigned char *blob = NULL;
  size_t size = 0;
  int tried = 0, is_message = 0;
  rdt_round_msg msg;
  memset(&msg, 0, sizeof msg);
  rdt_bytes next = {0};
  if (!rdt_shard_read_plan(argv[0], &plan, err, sizeof err)) goto done;
  const unsigned char *b = sqlite3_value_blob(argv[1]);
  if (sqlite3_value_type(argv[1]) != SQLITE_BLOB) {
    snprintf(err, sizeof err, "the second argument must be the partial states' sum, the BLOB rdt_merge returned");
    goto done;
  }
  if (!rdt_partial_decode(b ? b : (const unsigned char *)"", b ? (size_t)sqlite3_value_bytes(argv[1]) : 0, &sum, err,
                          sizeof err))
    goto done;
  if (sodium_memcmp(sum.plan, plan.digest, sizeof plan.digest) != 0 ||
      sum.flags != (plan.federated ? RDT_PARTIAL_MASKED : RDT_PARTIAL_EXACT) || (sum.round == 0 && sum.n != plan.counters) ||
      (sum.round == 0) != (sum.message_len == 0)) {
    snprintf(err, sizeof err, "the partial state was not made from this plan");
    goto done;
  }
  /* Contract 9: a later round resumes from the message its partials answer. */
  if (sum.round && (!rdt_round_decode(sum.message, sum.message_len, &msg, err, sizeof err) ||
                    sodium_memcmp(msg.plan, plan.digest, sizeof plan.digest) != 0 || msg.round != sum.round)) {
    snprintf(err, sizeof err, "the partial state was not made from this plan (its round message is another's)");
    goto done;
  }
  if (plan.federated && !every_site(&plan, &sum, err, sizeof err)) goto done;
  if (!(s = rdt_shard_session(db, &plan, sum.round, msg.payload, msg.payload_len, spans, &k, err, sizeof err)))
    goto done;
  if (rdt_spans_count(spans, k) != sum.n) {
    snprintf(err, sizeof err, "the partial state was not made from this plan (its round's length differs)");
    goto done;
  }
  if (plan.ledger[0]) { /* Contracts 4 and 9: the plan's own charge, still pending or at this round */
    char tail[96];
    rdt_shard_charge_tail(&plan, tail);
    if (!rdt_train_resume_charge(s, db, sqlite3_user_data(ctx), plan.ledger, plan.charge, "rdt_plan", tail, sum.round,
                                 sum.message, sum.message_len, err, sizeof err))
      goto done;
  }
  if (!rdt_spans_add(spans, k, sum.counters)) { /* empty state + sum: cannot overflow, but checked */
    snprintf(err, sizeof err, "a counter overflows");
    goto done;
  }
  tried = 1;
  if (rdt_train_rounds(s)) { /* contract 9: this round's release: the next message, or the model */
    uint64_t noise_at = msg.noise_at;
    blob = rdt_train_round_finish(s, &noise_at, &next, &size, err, sizeof err);
    if (!blob && !err[0]) {
      if (sum.round + 1 >= plan.rounds || next.oom ||
          !(blob = rdt_round_encode(plan.digest, sum.round + 1, noise_at, next.p, next.n, &size))) {
        snprintf(err, sizeof err, sum.round + 1 >= plan.rounds ? "the learner asked for more rounds than the plan's"
                                                                : "out of memory while writing the round message");
      } else {
        is_message = 1;
        char rerr[400];
        if (!rdt_train_record_round(s, sum.round + 1, blob, size, rerr, sizeof rerr)) {
          free(blob);
          blob = NULL;
          is_message = 0;
          snprintf(err, sizeof err, "the round's message was not released, as the ledger could not record it: %s", rerr);
          tried = 0; /* nothing more to record: the charge is at this round still */
        }
      }
    }
  } else {
    blob = plan.federated ? rdt_train_finish_noised(s, &size, err, sizeof err) : rdt_train_finish(s, &size, err, sizeof err);
  }
done:
  rdt_bytes_free(&next);
  if (tried && !is_message) {
    char rerr[400];
    if (!rdt_train_record(s, blob, size, rerr, sizeof rerr) && blob) {
      free(blob);
      blob = NULL;
      snprintf(err, sizeof err, "the model was trained but not released: %s (the charge stands)", rerr);
    }
  }
  int interrupted = tried && !blob && rdt_train_interrupted(s, ctx);
  rdt_train_session_free(s);
  rdt_partial_free(&sum);
  rdt_plan_free(&plan);
  if (blob) sqlite3_result_blob64(ctx, blob, size, free);
  else if (!interrupted) rdt_sql_error(ctx, "rdt_finish", err);
}
