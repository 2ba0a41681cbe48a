/*
** learner.h - the interface every learner implements (the data-adaptive
** ones, and through contract 8 the classic forests), and the registry that
** lists them (learners/registry.c). No SQLite.
**
** Contract of a learner (each learner file states its own privacy facts):
**   1. start() sees the options, the public schema and the common facts
**      (ε, task, bounds, seed) before any row, and fails only on parameter
**      mistakes; it says how ε is divided (describe).
**   2. row() takes one cleaned row (schema order: numeric values clamped
**      into their bounds, categorical codes 0 .. n_values, n_values being
**      `other`) with its class index or clamped target; it never fails
**      (a learner that buffers rows may run out of memory: row_failed, 8).
**   3. Merging, before noise, of states built from the same options (and
**      the same structure key) on disjoint rows. A learner whose state is
**      counters says so with counters(): spans of int64 counters (partial.h)
**      whose number and meaning the options, the schema and the structure
**      key fix before any row, with a digest of all that meaning; merging is
**      adding them, and two states add only when their digests are equal.
**      That is shard mode (rdt_plan, rdt_partial, rdt_merge, rdt_finish):
**      the sum of the sites' counters is the union's state, so finish() on
**      it releases what one training on the union would, with the noise
**      added once. A learner that keeps its rows (boost, private_tree, naive
**      Bayes's "readout": "auto", auto) offers no counters() in one pass;
**      its merge() appends rows, which pools them. Over several sites it
**      runs in rounds instead (contract 10). merge() refuses a state of
**      other options or a released one.
**   4. finish() adds all the noise (exact discrete samplers, noise.h), wipes
**      the exact state, and returns 0 without releasing anything if the
**      noise cannot be set up. After it, only released values remain.
**   5. encode()/decode() write and read the released state only; decode
**      validates everything (the bytes may be hostile) and never crashes.
**   6. predict() and describe() are post-processing of the release.
**   7. free() wipes before it frees.
**   8. The optional hooks after set_readout (NULL for a learner without
**      them) serve a learner that writes whole models: the classic forests
**      (learners/forest_algorithms.c). It reads its whole options document
**      (configure), may read public rows before it is built (public_row),
**      is built rather than started (build), may fail on a row only for
**      memory (row_failed), polls the caller's stop request itself (cancel.h)
**      and says what it will train and what it trained (about, trained).
**      It needs no merge, decode, predict or describe (NULL): its rows pass
**      through one session (or, in shard mode, several whose counters() add
**      up), and model.c decodes its models. Its encode() writes a complete model BLOB (model.c), which the caller
**      returns as it is: no learner envelope, no learner id, and the registry
**      never finds it by name or id (rdt_learner_find, rdt_learner_by_id),
**      so no caller decodes a model as its payload or picks it as a candidate.
**   9. Federated mode (noise(), finish_noised()): each site adds noise()'s
**      whole noise to its own counters (its share, ε-DP on its rows alone,
**      the learner's own proof applied to them), the masked shares are
**      summed, and finish_noised() releases the sum as finish() would have
**      released noisy counters: post-processing only. Counters of a block
**      with s = 0 are never released: a site sends 0 for them.
**  10. Rounds (rounds(), round_open(), round_release(); shard mode): a
**      learner whose release reads its rows more than once (boosting's
**      visits, a tree's levels, a readout's choice) cuts it at its
**      releases. Round r's exact vector is what finish() would read from
**      every row between release r - 1 and release r: a site opens round r
**      with the public message of release r - 1 (round.h; none for r = 0),
**      and row() then adds each row's contribution to that vector, which
**      counters() offers as spans (their digest the options' meaning, the
**      same in every round; their length the round's), keeping no row. The
**      coordinator opens the same round with the same message, adds the
**      sites' summed vectors to its spans and round_release() draws exactly
**      the noise and runs exactly the post-processing finish() would at that
**      release, from the same stream: given the same rows and a seeded
**      stream at the same position, the rounds release the same values and
**      the same model as finish() on the union. Everything a message holds
**      is released or public. A row's contribution to a round depends on the
**      row and the message only (integer sums: no order), so a site keeps
**      nothing between rounds but its rows. A learner that draws a coin per
**      row (auto's validation side) draws it in rounds from a keyed hash of
**      the row instead, the same in every round: its rounds then equal
**      finish() up to which rows the coins chose (auto.c step 7).
** Neighbouring relation for every learner: add or remove one row.
*/
#ifndef RDT_LEARNER_H
#define RDT_LEARNER_H

#include <stddef.h>
#include <stdint.h>

#include "cancel.h"
#include "json.h"
#include "noise.h"
#include "partial.h"
#include "rng.h"
#include "schema.h"
#include "unit.h"

#define RDT_LEARN_CLASSIFICATION 1u
#define RDT_LEARN_REGRESSION 2u

/* Facts every learner gets, parsed by the caller (options.c). */
typedef struct rdt_learn_common {
  int is_private;   /* 0: "epsilon": null, no noise (never published) */
  rdt_eps eps;      /* total budget of this learner */
  int regression;   /* task */
  double target_min, target_max; /* regression: public bounds of the target */
  int seeded;
  unsigned char seed_key[RDT_RNG_KEYBYTES];
  /* "structure_key": a drawn structure comes from it (forest.h's config). */
  int keyed;
  unsigned char structure_key[RDT_RNG_KEYBYTES];
  /* The privacy unit and private bounds (unit.h), set by the caller: with
  ** them, eps is this learner's per-row share. Learners need not read it. */
  rdt_unit unit;
} rdt_learn_common;

/* A growing byte buffer (encode, describe). oom is set, and further writes
** ignored, once an allocation fails. */
typedef struct rdt_bytes {
  unsigned char *p;
  size_t n, cap;
  int oom;
} rdt_bytes;
void rdt_bytes_put(rdt_bytes *b, const void *p, size_t n);
void rdt_bytes_u32(rdt_bytes *b, uint32_t v);
void rdt_bytes_u64(rdt_bytes *b, uint64_t v);
void rdt_bytes_f64(rdt_bytes *b, double v);
void rdt_bytes_text(rdt_bytes *b, const char *s); /* raw text, no length, no NUL */
void rdt_bytes_free(rdt_bytes *b);

/* Reading a payload: never past n; `bad` once anything is out of bounds. */
typedef struct rdt_reader {
  const unsigned char *p;
  size_t n, pos;
  int bad;
} rdt_reader;
uint32_t rdt_read_u32(rdt_reader *r);
uint64_t rdt_read_u64(rdt_reader *r);
double rdt_read_f64(rdt_reader *r);

/* A started learner's public plan for a noisy row count n^: what its model
** would look like, from its options, the schema and its drawn structure (no
** row): post-processing of n^, which auto's rule reads. */
typedef struct rdt_learn_plan {
  double cells;         /* cells one model splits the rows into (a forest: leaves per tree, mean) */
  double path_features; /* features one row's path tests (a tree's depth) */
  double noise_sd;      /* sd of the noise on one released class count of a cell (0: none) */
  double state_bytes;   /* memory its training state holds whatever the rows (0: grows with them) */
  double table_cells;   /* a forest whose paths each leave one of the d features out: the cells of
                        ** the table over all of them (0: cells) ... */
  double table_noise_sd; /* ... and the noise sd of one cell of that table (0: noise_sd) */
} rdt_learn_plan;

/* Contract 8: options.c's reader of a whole options document (its
** rdt_options_parse), handed to configure() by the caller: options.c finds
** learners through the registry, so a learner may not call it itself. */
struct rdt_config;
typedef int (*rdt_learn_options_reader)(const rdt_json *root, rdt_schema *schema, struct rdt_config *config,
                                        char *err, size_t err_size);

/* Contract 8: what a configured learner will train, before any row (public:
** the options' consequences). */
typedef struct rdt_learn_about {
  const char *algorithm;     /* how rdt_check and the ledger's request name it */
  uint64_t max_rows;         /* the rows it buffers and samples down to; 0: it buffers none */
  /* The SELECT of its public rows (NULL: none), and the tables it may read,
  ** each NUL-terminated, public_tables_len bytes in all. The caller checks
  ** it (sql_train.c, contract 4: declared public tables only, no function
  ** that runs SQL), runs it and passes each cleaned row to public_row()
  ** before build(). */
  const char *public_query;
  const char *public_tables;
  uint32_t public_tables_len;
  char request[400];         /* the ledger's request: what is known before the rows */
} rdt_learn_about;

typedef struct rdt_learner {
  const char *name;             /* the "algorithm" option's value */
  uint32_t id;                  /* stored in the model (LRNR section) */
  uint32_t tasks;               /* RDT_LEARN_* bits */
  const char *const *options;   /* the option keys it reads, NULL-terminated */
  /* Contract 1. Returns a state, or NULL with err (empty err: out of memory). */
  void *(*start)(const rdt_json *opts, const rdt_schema *s, const rdt_learn_common *c, char *err, size_t en);
  void (*row)(void *st, const double *x, uint32_t cls, double target); /* Contract 2 */
  int (*merge)(void *into, const void *from);                           /* Contract 3 */
  int (*finish)(void *st, rdt_rng *noise);                             /* Contract 4 */
  void (*encode)(const void *st, rdt_bytes *out);                      /* Contract 5 */
  void *(*decode)(rdt_reader *in, const rdt_schema *s, const rdt_learn_common *c);
  /* Classification: out[k] = probability of class k (sums to 1);
  ** regression: out[0] = the prediction, inside the target bounds. */
  void (*predict)(const void *st, const double *x, double *out);
  /* JSON members for rdt_info, each followed by a comma, e.g.
  ** "\"mechanism\":\"...\",\"epsilon_tables\":0.9,". */
  void (*describe)(const void *st, rdt_bytes *json);
  void (*free)(void *st);                                              /* Contract 7 */
  /* Contract 3, optional (NULL: no partial state). After the last row (and
  ** before any: the shape is the options'), the exact state as at most max
  ** spans of counters, and into digest a BLAKE2b-256 (digest.h) of what
  ** they mean: structure, bins and bounds, shares of eps. Returns the number
  ** of spans, 0 when this state is not counters (it keeps rows, or was
  ** released). The caller may read the spans and add to them; finish()
  ** then releases the sum. */
  uint32_t (*counters)(void *st, rdt_span *out, uint32_t max, unsigned char digest[32]);
  /* Contract 9, optional (NULL: not in federated mode). When finish() adds
  ** one independent discrete Laplace to each counter of counters() and
  ** nothing else is drawn from the noisy or exact state (no noisy count
  ** that picks a depth or bins, no selection), that noise as blocks in the
  ** counters' order, fixed by the options before any row: their number.
  ** 0 otherwise, or for a non-private state. */
  uint32_t (*noise)(const void *st, rdt_noise_block *out, uint32_t max);
  /* Contract 9: finish() for counters that already carry noise()'s noise
  ** (the sum of the sites' shares): the same release, drawing no noise;
  ** `post` serves post-processing only (a readout's synthetic sample). 0
  ** when memory runs out. */
  int (*finish_noised)(void *st, rdt_rng *post);
  /* Contract 10, optional (NULL: no rounds). The most rounds this started
  ** state's release takes (from its options and schema; the actual count
  ** may be smaller, as released values decide), 0 when it needs none (its
  ** counters() suffice). */
  uint32_t (*rounds)(const void *st);
  /* Contract 10: opens round r on a started state without rows: msg (n
  ** bytes, NULL for r = 0) is the learner's payload of the previous
  ** release's message. Afterwards row() adds to the round's vector and
  ** counters() offers it. 1, or 0 with err (empty: out of memory): a
  ** payload that is not this state's, or a round vector too large (named
  ** in err, a parameter error at r = 0). */
  int (*round_open)(void *st, uint32_t r, const unsigned char *msg, size_t n, char *err, size_t en);
  /* Contract 10, at the coordinator, after the summed vector was added to
  ** counters()' spans: release r. 1: the next round's payload is in next;
  ** 2: the state is released (encode() writes the model); 0: the noise
  ** could not be set up or memory ran out, nothing more is released. */
  int (*round_release)(void *st, rdt_rng *noise, rdt_bytes *next);
  /* Optional (NULL: no plan): the plan for n^ rows; returns 0 when none. */
  int (*plan)(const void *st, double n_hat, rdt_learn_plan *out);
  /* Optional (NULL: one): the readouts a released state offers, different
  ** post-processings of one release (naive Bayes: its own, and scores fitted
  ** by moment_fit.h), and the choice of the one predict() and encode() use
  ** (0: the learner's default; an unknown one selects 0). Choosing by rows
  ** is a mechanism with a cost: a caller holding rows the release never saw
  ** may choose; naive Bayes's "readout": "auto" chooses inside the learner
  ** and pays for it (naive_bayes.c 6c), which is what auto.c uses. */
  uint32_t (*readouts)(const void *st);
  void (*set_readout)(void *st, uint32_t r);
  /* Optional (NULL: unknown): regression, the least and the greatest value
  ** predict() returns over every input, in target units (post-processing
  ** of the release, read after finish(); auto's guard bounds a row's gain
  ** by it). 1, or 0 when unknown (classification). */
  int (*span)(const void *st, double *lo, double *hi);
  /* Optional (NULL: none): a released noisy count of rows the state trains
  ** on (auto's n^, of its training side), handed before finish() or
  ** round_open(0). A learner that would spend a share of its own on such a
  ** count for a structural choice (private_tree's "depth": "auto") makes
  ** the choice from this one instead, by the same rule, and spends that
  ** share on the rest; its model is then the one it would be with that
  ** choice as an option. Post-processing of the caller's release. */
  void (*use_row_count)(void *st, double n_hat);
  /* ---- Contract 8: a learner that writes whole models ------------------- */
  int whole_model; /* encode() writes a complete model BLOB and may hand its buffer over (out empty) */
  /* Reads the whole options document with `read` (in place of options.c's
  ** rdt_options_parse_learner and start's opts) into the schema, the common
  ** facts, the ledger's name ("" for none) and the label's; checks that the
  ** model can fit in max_bytes as far as the options tell (the SQL binding:
  ** SQLITE_LIMIT_LENGTH, which the message names). Returns the configured
  ** state, or NULL with err (empty: out of memory) and nothing to free. */
  void *(*configure)(const rdt_json *root, rdt_learn_options_reader read, uint64_t max_bytes, rdt_schema *s,
                     rdt_learn_common *c, char *ledger, size_t ledger_size, char *label, char *err, size_t en);
  /* What the configured state will train (NULL: the learner's name is its
  ** algorithm and its request; it buffers no rows and reads no public rows). */
  void (*about)(const void *st, rdt_learn_about *out);
  /* One cleaned public row (about's public_query), before build(); 0 with
  ** err when there are too many or memory runs out. */
  int (*public_row)(void *st, const double *x, char *err, size_t en);
  /* In place of start(): builds the configured state for the schema s (its
  ** bounds may have been set since configure), before any private row, and
  ** checks the model's size once its structure is drawn. `cancel` (cancel.h)
  ** is polled here and in finish(): the caller asks nothing around them.
  ** 1, or 0 with err; the state is freed by free() either way. */
  int (*build)(void *st, const rdt_schema *s, rdt_cancel *cancel, uint64_t max_bytes, char *err, size_t en);
  /* Whether a row() ran out of memory (rows are never otherwise an error):
  ** 1 with err, and the caller stops. */
  int (*row_failed)(const void *st, char *err, size_t en);
  /* After finish(): what was trained, a JSON object for the ledger (all of
  ** it in the released model). */
  void (*trained)(const void *st, rdt_bytes *json);
} rdt_learner;

/* The registry (learners/registry.c): NULL when unknown. find and by_id
** know only the learners whose models are payloads (contract 8). */
const rdt_learner *rdt_learner_find(const char *name);
/* The i-th learner find() knows, in the table's order; NULL past the last
** (messages that list every "algorithm"). */
const rdt_learner *rdt_learner_at(size_t i);
const rdt_learner *rdt_learner_by_id(uint32_t id);
/* The learner of options that name no learner find() knows: the table's
** whole-model learner (the classic forests, options.c's rdt_options_parse). */
const rdt_learner *rdt_learner_for_forests(void);

/* Shared binning: the public bin of a cleaned value. Numeric features use
** `bins` equal-width bins of [min, max]; categorical ones their code (their
** n_values + 1 bins, `other` last). */
uint32_t rdt_learn_bins(const rdt_feature *ft, uint32_t bins);
uint32_t rdt_learn_bin(const rdt_feature *ft, uint32_t bins, double x);

/* Post-processing every learner may share (public functions of released
** values). p = softmax(z) over n components (z and p may be the same). */
void rdt_learn_softmax(const double *z, uint32_t n, double *p);
/* p[k] = (max(counts[k], 0) + pseudo) / total: noisy counts clamped and
** smoothed into frequencies; uniform when every term is 0. */
void rdt_learn_frequencies(const int64_t *counts, uint32_t n, double pseudo, double *p);
/* A noisy mean in [0, 1] from a noisy count n and a noisy sum of values in
** [0, 1]: (sum + pseudo / 2) / (max(n, 0) + pseudo), 0.5 when undefined. */
double rdt_learn_noisy_mean(double n, double sum, double pseudo);
/* A tree grown on a noisy row count n^ expects RDT_LEARN_TREE_LEAF_ROWS / eps
** rows per leaf, whatever the number of classes: private_tree's "depth":
** "auto" grows floor(log2(n^ eps / this)) levels, and auto's rule asks the
** same (private_tree.c contract 3b says why). */
#define RDT_LEARN_TREE_LEAF_ROWS 12.0
/* Whether the schema has a numeric feature (only those have bins to choose). */
int rdt_learn_has_numeric(const rdt_schema *s);
/* "auto" bins (naive_bayes.c, boost.c): the divisor of `fine` >= 2 nearest
** to `want` in ratio (want below 1 counts as 1); ties to the smaller. */
uint32_t rdt_learn_nearest_divisor(uint32_t fine, double want);
/* a + b, saturating at the int64 bounds (noise added to a counter). */
int64_t rdt_learn_add_sat(int64_t a, int64_t b);

#endif
