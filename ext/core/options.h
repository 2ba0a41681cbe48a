/*
** options.h - rdt_train's JSON options -> schema + configuration.
** All validation happens here, before any row is read; messages name the
** offending key and never mention row values.
*/
#ifndef RDT_OPTIONS_H
#define RDT_OPTIONS_H

#include <stddef.h>

#include "forests/forest.h"
#include "learner.h"
#include "json.h"
#include "schema.h"

/* Returns 1 on success (caller owns *schema, free with rdt_schema_free),
** 0 on error with a message in err (no prefix).
** Both parsers also read "privacy_unit", "max_rows_per_unit", "bounds_share"
** and a numeric feature's "bounds": "private" into config->unit (learners:
** common->unit; unit.h): eps is then the model's per-row share, and a
** private feature holds the placeholder bounds [0, 1] until its caller sets
** the estimates (rdt_fit does, sql_fit.c; the rdt_train aggregate refuses). */
int rdt_options_parse(const char *json, size_t len, rdt_schema *schema, rdt_config *config,
                      char *err, size_t err_size);
/* The same from a parsed document (the binding parses the options once
** per call, sql_train.c). */
int rdt_options_parse_tree(const rdt_json *root, rdt_schema *schema, rdt_config *config, char *err, size_t err_size);

/* A "seed" option (integer or string) -> the key of a reproducible stream;
** `domain` keeps the streams of different functions apart. 0 if the JSON
** value is neither. */
int rdt_options_seed_key(const rdt_json *seed, const char *domain, unsigned char key[RDT_RNG_KEYBYTES]);

/* The refusal of "seed" together with "ledger", one text for every charged
** function: a seeded result is a deterministic function of the rows. */
extern const char rdt_seed_with_ledger_error[];

/* Whether "algorithm" names a registered learner (learner.h); 0 for the
** forests of rdt_options_parse, and for options that do not parse. */
int rdt_options_learner(const char *json, size_t len, const rdt_learner **out);
int rdt_options_learner_of(const rdt_json *root, const rdt_learner **out);
/* Options without "algorithm" that name a forest option (trees, depth,
** ...) train the RDT forest, not "auto": 1 with that option's name in key
** (rdt_check says so), else 0. */
int rdt_options_forest_key(const rdt_json *root, char *key, size_t n);
/* The options of learner l: the common facts, the schema, the ledger and
** label names, and the parsed tree (*opts, for the learner's start; caller
** frees it). Returns 0 with a message (nothing to free). */
int rdt_options_parse_learner(const char *json, size_t len, const rdt_learner *l, rdt_json **opts,
                              rdt_schema *schema, rdt_learn_common *common, char *ledger, size_t ledger_size,
                              char *label, char *err, size_t err_size);
/* The same from a parsed document, which stays the caller's. */
int rdt_options_parse_learner_tree(const rdt_json *root, const rdt_learner *l, rdt_schema *schema,
                                   rdt_learn_common *common, char *ledger, size_t ledger_size, char *label, char *err,
                                   size_t err_size);

/* "note": the caller's text, recorded with a ledger charge (public, like
** every option). Checks root's "note" (absent, or a string of 1 to
** RDT_NOTE_MAX bytes, given with "ledger") and copies it into
** out (size > RDT_NOTE_MAX; out may be NULL to check only; "" when absent).
** Returns 0 with a message. */
#define RDT_NOTE_MAX 1024
int rdt_options_note(const rdt_json *root, char *out, size_t size, char *err, size_t n);

/* Names compare as SQL names do: ASCII letters without regard to case. */
int rdt_name_equal(const char *a, const char *b);

#endif
