/*
** sql_train.c - the training session (sql_train.h) and the rdt_train
** aggregate, its exploratory form.
**
** Every algorithm is a learner (core/learner.h, found in one table,
** core/learners/registry.c): this file knows the interface, not the
** learners. The classic forests are the table's whole-model learner; the
** optional hooks of learner.h's contract 8 are what the binding does for
** them besides the common steps (their public rows, their ledger request).
**
** Contract:
**   1. Options are validated, the model size checked against the
**      connection's length limit and the ledger charged before any private
**      row is used; the charge commits first (sql_ledger.c).
**   2. Every row is cleaned here (the rules of sql/reference.md: a row's
**      values never cause an error) and handed to the learner, which counts
**      it (rows are never stored, except DiPriMe's bounded buffer); memory is
**      the only failure.
**   3. The final step adds the noise, encodes the model and wipes the exact
**      counts; if the noise cannot be set up, nothing is released. A model
**      above the connection's SQLITE_LIMIT_LENGTH (a learner's size is
**      known only once it is trained) is not released either: the error
**      says its size, and a ledger records the call as failed.
**   4. RDT#'s public rows come from "public_query", checked before the
**      charge and again just before it runs (sql_public_query.c): it reads
**      only tables the curator declared public and calls no function that
**      could run SQL of its own.
**   5. The aggregate sees its options only with its first row: an empty
**      input is an error, which reveals emptiness (and with GROUP BY the
**      groups) for free. So the aggregate refuses "ledger": charged training
**      goes through rdt_fit (sql_fit.c), which sees its options first.
**   6. sqlite3_interrupt() and the progress handler reach the steps that run
**      in C after the rows (and the structure's draw before them) through
**      sql_cancel.h: a training stopped there fails with SQLITE_INTERRUPT,
**      releases nothing and wipes its state like any failure. A learner
**      built with build() polls the stop request itself; any other is asked
**      about before its finish() and after it.
*/
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/learner.h"
#include "core/model.h"
#include "core/options.h"
#include "sql_cancel.h"
#include "sql_public_query.h"
#include "sql_train.h"

struct rdt_train_session {
  const rdt_learner *learner; /* set by configure */
  int configured;             /* schema, common, ledger and label hold the parsed options */
  int started;                /* build ran: the bounds are fixed */
  rdt_schema schema;
  rdt_learn_common common;
  rdt_json *opts;             /* the options, parsed once: a learner's start() reads its own from them */
  void *state;                /* the learner's state: from configure() or start() */
  double *x;                  /* one cleaned row */
  char ledger[129];
  char label[RDT_MAX_NAME + 1];
  uint64_t max_bytes;         /* the connection's SQLITE_LIMIT_LENGTH */
  /* The ledger charge (its outcome is recorded after the call) and its note. */
  rdt_ledger_receipt receipt;
  char note[RDT_NOTE_MAX + 1];
  /* sqlite3_interrupt() and the progress handler while the structure is
  ** drawn, the noise added and the model encoded (sql_cancel.h). */
  rdt_sql_cancel cancel;
};

typedef struct rdt_train_session train_state;

rdt_train_session *rdt_train_session_new(void) { return calloc(1, sizeof(rdt_train_session)); }

const rdt_schema *rdt_train_schema(const rdt_train_session *s) { return &s->schema; }
const char *rdt_train_label_name(const rdt_train_session *s) { return s->label; }
const char *rdt_train_ledger(const rdt_train_session *s) { return s->ledger; }
const rdt_json *rdt_train_options(const rdt_train_session *s) { return s->opts; }

/* ---- RDT#'s public rows (contract 4) ------------------------------------- */

/* The learner's public rows (RDT#): run "public_query" on this connection
** and hand its rows, cleaned by the row rules of the features, to the
** learner. Its mistakes (prepare_public_query's, no rows, too many) are
** parameter errors: the public rows are public. */
static int read_public_rows(sqlite3 *db, train_state *st, const rdt_learn_about *about, char *err, size_t en) {
  const rdt_schema *schema = &st->schema;
  uint32_t nf = schema->n_features;
  sqlite3_stmt *stmt = rdt_public_query_prepare(db, about, nf, err, en);
  if (!stmt) return 0;
  sqlite3_value **vals = calloc(nf ? nf : 1, sizeof *vals);
  double *x = malloc((nf ? nf : 1) * sizeof *x);
  int rc = SQLITE_ROW, ok = vals && x;
  if (!ok) snprintf(err, en, "out of memory");
  while (ok && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    /* Protected copies: column values may only be read through a dup. */
    for (uint32_t j = 0; ok && j < nf; j++) ok = (vals[j] = sqlite3_value_dup(sqlite3_column_value(stmt, (int)j))) != NULL;
    if (ok) {
      rdt_sql_features(schema, vals, x);
      ok = st->learner->public_row(st->state, x, err, en);
    } else {
      snprintf(err, en, "out of memory while reading the public rows");
    }
    for (uint32_t j = 0; j < nf; j++) {
      sqlite3_value_free(vals[j]);
      vals[j] = NULL;
    }
  }
  if (ok && rc != SQLITE_DONE) {
    snprintf(err, en, "\"public_query\" failed: %s", sqlite3_errmsg(db));
    ok = 0;
  }
  free(vals);
  free(x);
  sqlite3_finalize(stmt);
  return ok;
}

/* The options, parsed once for the whole call (the session keeps the
** document: a learner's start() reads its own options from it, the note
** and rdt_check's questions come from it too). Options naming a registered
** learner are read by options.c's learner parser (the common options; the
** learner's own go to start()); any other options are the forests', which
** their learner reads itself (configure). */
static int configure_options(train_state *st, sqlite3 *db, const char *json, size_t len, char *err, size_t en) {
  char jerr[128];
  if (!(st->opts = rdt_json_parse(json, len, jerr, sizeof jerr))) {
    snprintf(err, en, "options are not valid JSON: %s", jerr);
    return 0;
  }
  const rdt_learner *l;
  if (!rdt_options_learner_of(st->opts, &l)) l = rdt_learner_for_forests();
  st->learner = l;
  st->max_bytes = (uint64_t)sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  if (l->configure) {
    err[0] = 0;
    st->state = l->configure(st->opts, rdt_options_parse_tree, st->max_bytes, &st->schema, &st->common, st->ledger,
                             sizeof st->ledger, st->label, err, en);
    if (!st->state) {
      if (!err[0]) snprintf(err, en, "out of memory");
      return 0;
    }
  } else if (!rdt_options_parse_learner_tree(st->opts, l, &st->schema, &st->common, st->ledger, sizeof st->ledger,
                                             st->label, err, en)) {
    return 0;
  }
  st->configured = 1;
  if (st->ledger[0] && !st->common.is_private) {
    snprintf(err, en, "a non-private model (\"epsilon\": null) cannot be charged to a ledger");
    return 0;
  }
  return rdt_options_note(st->opts, st->note, sizeof st->note, err, en);
}

/* What the configured learner will train (learner.h's about; without it,
** its name). */
static void about_learner(const train_state *st, rdt_learn_about *out) {
  if (st->learner->about) {
    st->learner->about(st->state, out);
    return;
  }
  memset(out, 0, sizeof *out);
  out->algorithm = st->learner->name;
  snprintf(out->request, sizeof out->request, "%s", st->learner->name);
}

int rdt_train_configure(rdt_train_session *st, sqlite3 *db, const char *json, size_t len, char *err, size_t en) {
  if (!configure_options(st, db, json, len, err, en)) return 0;
  /* Contract 4: the public rows' query is a parameter, checked with the
  ** options, before any charge. */
  rdt_learn_about about;
  about_learner(st, &about);
  if (!about.public_query) return 1;
  sqlite3_stmt *stmt = rdt_public_query_prepare(db, &about, st->schema.n_features, err, en);
  sqlite3_finalize(stmt);
  return stmt != NULL;
}

void rdt_train_get_facts(const rdt_train_session *st, rdt_train_facts *out) {
  rdt_learn_about about;
  about_learner(st, &about);
  memset(out, 0, sizeof *out);
  out->algorithm = about.algorithm;
  out->is_private = st->common.is_private;
  out->seeded = st->common.seeded;
  out->regression = st->common.regression;
  out->target_min = st->common.target_min;
  out->target_max = st->common.target_max;
  out->max_rows = about.max_rows;
}

/* The ledger note's tail for a release with unit facts (unit.h). */
static void unit_note(const rdt_unit *u, char *out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  if (u->column[0])
    used = (size_t)snprintf(out, n, ", unit \"%.60s\" (at most %u rows each)", u->column, u->max_rows);
  if (u->n_private && used < n)
    snprintf(out + used, n - used, ", private bounds on %u features (epsilon %.6g)", u->n_private,
             rdt_eps_to_double(u->eps_bounds));
}

const rdt_unit *rdt_train_unit(const rdt_train_session *s) { return &s->common.unit; }

const unsigned char *rdt_train_seed_key(const rdt_train_session *s) {
  return s->common.seeded ? s->common.seed_key : NULL;
}

int rdt_train_set_bounds(rdt_train_session *s, uint32_t feature, double min, double max) {
  if (s->started || feature >= s->schema.n_features || s->schema.features[feature].type != RDT_FEATURE_NUMERIC ||
      !isfinite(min) || !isfinite(max) || !(min < max) || !isfinite(max - min))
    return 0;
  s->schema.features[feature].min = min;
  s->schema.features[feature].max = max;
  return 1;
}

sqlite3_int64 rdt_train_charge_id(const rdt_train_session *s) { return s->receipt.id; }

const unsigned char *rdt_train_structure_key(const rdt_train_session *s) {
  return s->common.keyed ? s->common.structure_key : NULL;
}

int rdt_train_has_counters(const rdt_train_session *s) { return s->learner->counters != NULL; }

uint32_t rdt_train_counters(rdt_train_session *s, rdt_span *out, uint32_t max, unsigned char digest[32]) {
  return s->started && s->state && s->learner->counters ? s->learner->counters(s->state, out, max, digest) : 0;
}

int rdt_train_resume_charge(rdt_train_session *st, sqlite3 *db, rdt_conn *conn, const char *ledger, sqlite3_int64 id,
                            const char *fn, const char *tail, uint32_t round, const unsigned char *message,
                            size_t message_len, char *err, size_t en) {
  return rdt_ledger_resume(db, conn, ledger, id, fn, tail, round, message, message_len, &st->receipt, err, en);
}

int rdt_train_charge(rdt_train_session *st, sqlite3 *db, rdt_conn *conn, const char *fn, const char *ignored,
                     const char *tail, char *err, size_t en) {
  if (!st->ledger[0]) return 1;
  /* With unit facts the ledger is charged the whole ε (unit.h); the model's
  ** own eps is then its per-row share. The request states what is known
  ** before the rows (the query's ignored columns too: its column names are
  ** known then); what was trained is recorded after. */
  const rdt_unit *u = rdt_train_unit(st);
  char unit_tail[160];
  unit_note(u, unit_tail, sizeof unit_tail);
  rdt_learn_about about;
  about_learner(st, &about);
  char *request = sqlite3_mprintf("%s%s%s%s%s", about.request, unit_tail,
                                  ignored && strcmp(ignored, "[]") != 0 ? ", ignored_columns " : "",
                                  ignored && strcmp(ignored, "[]") != 0 ? ignored : "", tail ? tail : "");
  if (!request) {
    snprintf(err, en, "out of memory");
    return 0;
  }
  int ok = rdt_ledger_charge(db, conn, st->ledger, rdt_unit_active(u) ? u->eps_total : st->common.eps, fn, request,
                             st->note, &st->receipt, err, en);
  sqlite3_free(request);
  return ok;
}

/* Appends one scalar member of a learner's rdt_info facts as JSON. */
static void append_scalar(sqlite3_str *o, const rdt_json *v) {
  sqlite3_str_appendchar(o, 1, ',');
  rdt_sql_json_string(o, v->key, strlen(v->key));
  sqlite3_str_appendchar(o, 1, ':');
  switch (v->type) {
    case RDT_JSON_STRING: rdt_sql_json_string(o, v->string, v->string_len); break;
    case RDT_JSON_NUMBER:
      if (v->is_integer) sqlite3_str_appendf(o, "%lld", v->integer);
      else rdt_sql_json_double(o, v->number);
      break;
    case RDT_JSON_TRUE: sqlite3_str_appendall(o, "true"); break;
    case RDT_JSON_FALSE: sqlite3_str_appendall(o, "false"); break;
    default: sqlite3_str_appendall(o, "null"); break;
  }
}

/* What the session actually trained, as a JSON object for the ledger, read
** from the trained state after finish: the depth an automatic depth chose,
** the trees a matrix forest chose, auto's pick, a tree's depth used. All of
** it is in the released model (rdt_info), so the ledger tells no more. */
static char *trained_json(const train_state *st) {
  sqlite3_str *o = sqlite3_str_new(NULL);
  if (st->learner->trained) { /* the learner's own object */
    rdt_bytes t = {0};
    st->learner->trained(st->state, &t);
    int oom = t.oom || t.n > INT32_MAX;
    if (!oom) sqlite3_str_append(o, (const char *)t.p, (int)t.n);
    rdt_bytes_free(&t);
    if (oom) {
      sqlite3_free(sqlite3_str_finish(o));
      return NULL;
    }
  } else {
    sqlite3_str_appendall(o, "{\"algorithm\":");
    rdt_sql_json_string(o, st->learner->name, strlen(st->learner->name));
    /* The learner's own facts (learner.h, describe): its scalar members
    ** but the long "mechanism" text. */
    rdt_bytes d = {0};
    rdt_bytes_text(&d, "{");
    st->learner->describe(st->state, &d);
    rdt_bytes_text(&d, "\"\":null}");
    char jerr[16];
    rdt_json *facts = d.oom ? NULL : rdt_json_parse((const char *)d.p, d.n, jerr, sizeof jerr);
    for (size_t i = 0; facts && i < facts->n; i++) {
      const rdt_json *v = facts->items[i];
      if (v->key[0] && strcmp(v->key, "mechanism") != 0 && v->type != RDT_JSON_OBJECT && v->type != RDT_JSON_ARRAY)
        append_scalar(o, v);
    }
    rdt_json_free(facts);
    rdt_bytes_free(&d);
    sqlite3_str_appendchar(o, 1, '}');
  }
  if (sqlite3_str_errcode(o)) {
    sqlite3_free(sqlite3_str_finish(o));
    return NULL;
  }
  return sqlite3_str_finish(o);
}

int rdt_train_record(rdt_train_session *st, const unsigned char *blob, size_t size, char *err,
                     size_t en) {
  if (!st->receipt.id) return 1;
  char *trained = blob ? trained_json(st) : NULL;
  if (blob && !trained) {
    snprintf(err, en, "out of memory while describing the model for the ledger");
    rdt_ledger_record(&st->receipt, 0, NULL, 0, NULL, err, 0); /* failed, then */
    return 0;
  }
  int ok = rdt_ledger_record(&st->receipt, blob != NULL, blob, size, trained, err, en);
  sqlite3_free(trained);
  return ok;
}

int rdt_train_build(rdt_train_session *st, sqlite3 *db, char *err, size_t en) {
  const rdt_learner *l = st->learner;
  rdt_sql_cancel_init(&st->cancel, db);
  st->started = 1;
  err[0] = 0;
  rdt_learn_about about;
  about_learner(st, &about);
  /* The public rows, before any private row is used. */
  if (about.public_query && !read_public_rows(db, st, &about, err, en)) return 0;
  if (l->build) {
    if (!l->build(st->state, &st->schema, &st->cancel.core, st->max_bytes, err, en)) {
      if (!err[0]) snprintf(err, en, "out of memory while starting \"%s\"", l->name);
      return 0;
    }
  } else if (!(st->state = l->start(st->opts, &st->schema, &st->common, err, en))) {
    if (!err[0]) snprintf(err, en, "out of memory while starting \"%s\"", l->name);
    return 0;
  }
  st->x = malloc((st->schema.n_features ? st->schema.n_features : 1) * sizeof *st->x);
  if (!st->x) {
    snprintf(err, en, "out of memory while starting \"%s\"", l->name);
    return 0;
  }
  return 1;
}

int rdt_train_row(rdt_train_session *st, sqlite3_value *label, sqlite3_value **features, char *err, size_t en) {
  /* A class outside "classes" or a NULL label drops the row; a target that
  ** is not a number drops it, one outside the bounds is clamped. */
  double target = 0;
  long cls = 0;
  if (st->common.regression) {
    if (!rdt_sql_number(label, &target)) return 1;
    target = target < st->common.target_min ? st->common.target_min
             : target > st->common.target_max ? st->common.target_max : target;
  } else if ((cls = rdt_sql_class(&st->schema, label)) < 0) {
    return 1;
  }
  rdt_sql_features(&st->schema, features, st->x);
  st->learner->row(st->state, st->x, (uint32_t)cls, target);
  return !(st->learner->row_failed && st->learner->row_failed(st->state, err, en));
}

int rdt_train_interrupted(const rdt_train_session *s, sqlite3_context *ctx) {
  return s && rdt_sql_cancel_report(&s->cancel, ctx);
}

void rdt_train_session_free(rdt_train_session *st) {
  if (!st) return;
  rdt_ledger_receipt_free(&st->receipt);
  if (st->state) st->learner->free(st->state); /* the learner wipes its own state (and stops its thread) */
  rdt_sql_cancel_free(&st->cancel);
  if (st->x) sodium_memzero(st->x, (st->schema.n_features ? st->schema.n_features : 1) * sizeof *st->x);
  free(st->x);
  rdt_json_free(st->opts);
  if (st->configured) rdt_schema_free(&st->schema);
  sodium_memzero(&st->common, sizeof st->common); /* holds the seed key */
  free(st);
}

/* The kinds of step 5: finish(), finish_noised() (federated mode, learner.h
** contract 9: the counters carry their noise already, none is drawn), or a
** round's release (contract 10). */
enum { FINISH_NOISE, FINISH_NOISED, FINISH_ROUND };

/* Step 5. A round's release (kind FINISH_ROUND) starts the seeded noise
** stream at *noise_at (rng.h contract 6) and leaves its end there; when it
** is not the last, *next receives the next round's payload and NULL is
** returned with err empty. */
static unsigned char *finish(rdt_train_session *st, int kind, uint64_t *noise_at, rdt_bytes *next, size_t *size,
                             char *err, size_t en) {
  const rdt_learner *l = st->learner;
  rdt_rng noise;
  rdt_rng_init_for(&noise, st->common.seeded ? st->common.seed_key : NULL, "noise", 0);
  if (kind == FINISH_ROUND) rdt_rng_seek(&noise, *noise_at);
  /* A learner built with build() polls the stop request in its finish; any
  ** other's finishing step (ext/core/learners/) does not: the stop request
  ** is asked for before it and after it. An interrupted finish releases
  ** nothing. */
  int asks = !l->build, step = 0;
  if (!(asks && rdt_cancel_poll(&st->cancel.core, RDT_CANCEL_UNITS))) {
    if (kind == FINISH_ROUND) step = l->round_release ? l->round_release(st->state, &noise, next) : 0;
    else if (kind == FINISH_NOISED) step = l->finish_noised && l->finish_noised(st->state, &noise);
    else step = l->finish(st->state, &noise);
  }
  if (step && asks && rdt_cancel_poll(&st->cancel.core, RDT_CANCEL_UNITS)) step = 0;
  if (kind == FINISH_ROUND) *noise_at = rdt_rng_tell(&noise);
  if (step == 1 && kind == FINISH_ROUND) { /* a round's message, not the model */
    rdt_rng_clear(&noise);
    err[0] = 0;
    if (next->oom) snprintf(err, en, "out of memory while writing the round message");
    return NULL;
  }
  int released = step != 0;
  unsigned char *blob = NULL;
  if (released && l->whole_model) { /* the learner's encode writes the whole model */
    rdt_bytes b = {0};
    l->encode(st->state, &b);
    if (b.oom) rdt_bytes_free(&b);
    blob = b.p;
    *size = b.n;
  } else if (released) { /* a payload, in the learner envelope (model.c) */
    rdt_learned m;
    memset(&m, 0, sizeof m);
    m.learner = l;
    m.state = st->state;
    m.schema = st->schema; /* borrowed: the session frees it */
    m.common = st->common;
    memcpy(m.label, st->label, sizeof m.label); /* recorded unless "label" (model.h) */
    rdt_rng_bytes(&noise, m.model_id, sizeof m.model_id); /* a fresh id (seeded: reproducible) */
    blob = rdt_learned_encode(&m, size);
    sodium_memzero(&m.common, sizeof m.common);
  }
  rdt_rng_clear(&noise);
  /* A model SQLite cannot return is not released (nor recorded so): its
  ** size is a function of the model (the learner's public options and its
  ** DP choices, such as auto's pick), so telling it is post-processing. */
  if (blob && *size > st->max_bytes) {
    sodium_memzero(blob, *size);
    free(blob);
    blob = NULL;
    snprintf(err, en,
             "the trained model is %llu bytes, above this connection's SQLITE_LIMIT_LENGTH of %llu, so nothing was "
             "released; raise the limit (sqlite3_limit) or ask for a smaller model (a named \"algorithm\" with fewer "
             "trees, bins or depth)",
             (unsigned long long)*size, (unsigned long long)st->max_bytes);
    return NULL;
  }
  if (!released)
    snprintf(err, en, "the noise could not be set up or memory ran out while releasing the model; nothing was "
                      "released");
  else if (!blob)
    snprintf(err, en, "out of memory while encoding the model");
  return blob;
}

unsigned char *rdt_train_finish(rdt_train_session *st, size_t *size, char *err, size_t en) {
  return finish(st, FINISH_NOISE, NULL, NULL, size, err, en);
}

unsigned char *rdt_train_finish_noised(rdt_train_session *st, size_t *size, char *err, size_t en) {
  return finish(st, FINISH_NOISED, NULL, NULL, size, err, en);
}

uint32_t rdt_train_rounds(const rdt_train_session *s) {
  return s->started && s->state && s->learner->rounds && s->learner->round_open && s->learner->round_release
             ? s->learner->rounds(s->state)
             : 0;
}

int rdt_train_round_open(rdt_train_session *s, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en) {
  err[0] = 0;
  if (!rdt_train_rounds(s)) {
    snprintf(err, en, "\"%s\" with these options has no rounds", s->learner->name);
    return 0;
  }
  if (s->learner->round_open(s->state, r, msg, n, err, en)) return 1;
  if (!err[0]) snprintf(err, en, "out of memory while opening round %u", r);
  return 0;
}

unsigned char *rdt_train_round_finish(rdt_train_session *s, uint64_t *noise_at, rdt_bytes *next, size_t *size,
                                      char *err, size_t en) {
  return finish(s, FINISH_ROUND, noise_at, next, size, err, en);
}

uint32_t rdt_train_noise(const rdt_train_session *s, rdt_noise_block *out, uint32_t max) {
  return s->started && s->state && s->learner->noise ? s->learner->noise(s->state, out, max) : 0;
}

int rdt_train_set_ledger(rdt_train_session *s, const char *ledger, const char *note) {
  if (strlen(ledger) >= sizeof s->ledger || strlen(note) >= sizeof s->note) return 0;
  snprintf(s->ledger, sizeof s->ledger, "%s", ledger);
  snprintf(s->note, sizeof s->note, "%s", note);
  return 1;
}

int rdt_train_record_round(rdt_train_session *s, uint32_t next, const unsigned char *message, size_t size, char *err,
                           size_t en) {
  return rdt_ledger_record_round(&s->receipt, next, message, size, err, en);
}

int rdt_train_record_unmodelled(rdt_train_session *s, int released, char *err, size_t en) {
  return rdt_ledger_record(&s->receipt, released, NULL, 0, NULL, err, en);
}

/* ---- the rdt_train aggregate --------------------------------------------- */

typedef struct train_agg {
  rdt_train_session *session; /* NULL until the first row */
  int failed;                 /* an error was raised: later steps do nothing */
} train_agg;

static void agg_error(sqlite3_context *ctx, train_agg *a, const char *msg) {
  rdt_sql_error(ctx, "rdt_train", msg);
  a->failed = 1;
}

static int agg_start(sqlite3_context *ctx, train_agg *a, int argc, sqlite3_value **argv) {
  char err[640];
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  if (argc < 2) {
    agg_error(ctx, a, "expected rdt_train(options, label, x1, ..., xk)");
    return 0;
  }
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    snprintf(err, sizeof err, "the first argument must be the options, a JSON object as TEXT%s",
             rdt_sql_blob_hint(argv[0], 1));
    agg_error(ctx, a, err);
    return 0;
  }
  const char *json = (const char *)sqlite3_value_text(argv[0]);
  if (!json || !(a->session = rdt_train_session_new())) {
    sqlite3_result_error_nomem(ctx);
    a->failed = 1;
    return 0;
  }
  err[0] = 0;
  if (!rdt_train_configure(a->session, db, json, (size_t)sqlite3_value_bytes(argv[0]), err, sizeof err)) {
    agg_error(ctx, a, err);
    return 0;
  }
  const rdt_schema *schema = rdt_train_schema(a->session);
  if ((uint32_t)(argc - 2) != schema->n_features) {
    char *names = rdt_sql_feature_names(schema);
    snprintf(err, sizeof err,
             "expected %u feature arguments (%s: one per entry of \"features\", in order) after the options and "
             "the label, got %d", schema->n_features, names ? names : "...", argc - 2);
    sqlite3_free(names);
    agg_error(ctx, a, err);
    return 0;
  }
  if (rdt_unit_active(rdt_train_unit(a->session))) { /* they need the query form: sorting, a second pass */
    agg_error(ctx, a, "\"privacy_unit\" and \"bounds\": \"private\" need rdt_fit(options, query): a unit's rows "
                      "are bounded after sorting the query by unit, and private bounds read the rows once more before "
                      "training");
    return 0;
  }
  if (rdt_train_ledger(a->session)[0]) { /* Contract item 5 */
    agg_error(ctx, a, "\"ledger\" needs rdt_fit(options, query): the rdt_train aggregate sees its options only "
                      "with its first row, so an empty input could never be charged; rdt_fit charges first");
    return 0;
  }
  if (!rdt_train_build(a->session, db, err, sizeof err)) {
    if (rdt_train_interrupted(a->session, ctx)) a->failed = 1;
    else agg_error(ctx, a, err);
    return 0;
  }
  return 1;
}

void rdt_train_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  train_agg *a = sqlite3_aggregate_context(ctx, sizeof *a);
  char err[300];
  if (!a) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (a->failed) return;
  if (!a->session && !agg_start(ctx, a, argc, argv)) return;
  if (!rdt_train_row(a->session, argv[1], argv + 2, err, sizeof err)) agg_error(ctx, a, err);
}

void rdt_train_final(sqlite3_context *ctx) {
  train_agg *a = sqlite3_aggregate_context(ctx, 0);
  char err[300];
  if (!a || (!a->session && !a->failed)) {
    sqlite3_result_error(ctx,
                         "rdt_train: no rows reached rdt_train, so its options were never seen; use rdt_fit(options, "
                         "query), which trains on an empty input too",
                         -1);
    return;
  }
  if (!a->failed) {
    size_t size = 0;
    unsigned char *blob = rdt_train_finish(a->session, &size, err, sizeof err);
    if (blob) sqlite3_result_blob64(ctx, blob, size, free);
    else if (!rdt_train_interrupted(a->session, ctx)) rdt_sql_error(ctx, "rdt_train", err);
  }
  rdt_train_session_free(a->session);
  a->session = NULL;
}
