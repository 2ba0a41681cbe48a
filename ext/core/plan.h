/*
** plan.h - the plan of shard mode: the public document from which every
** site counts its rows and the coordinator releases the model. No SQLite.
**
** Contract:
**   1. A plan is JSON: {"rdt_plan": 1, "rdt_version", "mode", "learner",
**      "rounds", "options", "counters", "state_digest", "ledger", "charge",
**      "digest"}, and in federated mode "sites" and "noise". "mode" is
**      "shard" (sites send exact partial states) or "federated" (each site
**      of "sites", X25519 public keys in order, sends a noisy masked share:
**      share.h; "noise" is "laplace_each", each site adding the release's
**      whole noise). "options" are the canonical options
**      (rdt_plan_canonical_options): what every party configures its
**      session from. "counters" and "state_digest" are the length and the
**      meaning of the learner's exact state (learner.h contract 3), as the
**      coordinator's own build drew it. "ledger" names the ledger charged
**      (null: none), "charge" the charge's id there.
**   2. "digest" is BLAKE2b-256 (digest.h) of every field but "charge" and
**      itself, the options as rdt_json_put_tree writes them. The charge's id
**      exists only once the digest is charged; the ledger row carries the
**      digest instead (sql_shard.c), which binds the two.
**   3. Everything in a plan is public: the options and the structure key
**      are data-independent (the structure is released with the model);
**      "seed", if the options give one, makes the plan a test's (the model
**      is flagged, the ledger refuses it).
**   4. rdt_plan_read refuses whatever rdt_plan_write could not have written
**      (a missing or mistyped field, a digest that does not match, another
**      mode, "rounds" outside 1 .. RDT_PLAN_MAX_ROUNDS, a roster that
**      rdt_plan_federated would refuse) and a plan of another rdt version
**      (sites and coordinator must draw the same structure from the same
**      key). "rounds" is the most rounds the learner's release takes
**      (learner.h contract 10; 1 for a one-pass learner), and "counters" and
**      "state_digest" are then those of round 0.
**   6. rdt_plan_federated takes the caller's "federated" option, {"sites":
**      [64 hex digits, ...]}: 2 to RDT_MASK_MAX_SITES distinct keys, none a
**      low-order point; the options without it go on to be checked as
**      rdt_fit's. The canonical options never hold it.
**   5. The canonical options are the caller's options without "ledger",
**      "note" (the coordinator's charge, not the sites'), comments ("_"
**      keys) and "structure_key", followed by "structure_key": the key the
**      structure is drawn from (rng.h), separate from the noise.
*/
#ifndef RDT_PLAN_H
#define RDT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "learner.h"
#include "mask.h"

#define RDT_PLAN_FORMAT 1u
#define RDT_PLAN_MAX_ROUNDS ((uint32_t)1 << 20)

typedef struct rdt_plan {
  char version[32];      /* the rdt that wrote it */
  char learner[64];      /* the configured learner's algorithm name */
  uint32_t rounds;       /* 1: one-pass learners; else the most rounds (learner.h contract 10) */
  char *options;         /* canonical options, NUL-terminated (owned) */
  size_t options_len;
  uint64_t counters;     /* length of the exact state */
  unsigned char state_digest[32];
  int federated;         /* mode "federated" (else "shard") */
  uint32_t n_sites;      /* federated: the roster, n_sites X25519 public keys (owned) */
  unsigned char *sites;
  char ledger[129];      /* "" for none */
  int64_t charge;        /* the charge's id in that ledger (0: none); outside the digest */
  unsigned char digest[32];
} rdt_plan;

/* Contract 5: into out (a fresh buffer). 0 with a message. */
int rdt_plan_canonical_options(const char *json, size_t len, const unsigned char key[32], rdt_bytes *out, char *err,
                               size_t en);
/* Contract 6: the options in out without "federated" (a fresh buffer), and
** its roster in *sites (malloc'd; NULL and *n_sites 0 when the options
** have no "federated"). 0 with a message. */
int rdt_plan_federated(const char *json, size_t len, rdt_bytes *out, unsigned char **sites, uint32_t *n_sites,
                       char *err, size_t en);
/* Contract 2: computes p->digest from the other fields. */
void rdt_plan_seal(rdt_plan *p);
/* Contract 1: the JSON text into out. */
void rdt_plan_write(const rdt_plan *p, rdt_bytes *out);
/* Contract 4: 1, or 0 with a message (nothing to free). */
int rdt_plan_read(const char *json, size_t len, rdt_plan *p, char *err, size_t en);
void rdt_plan_free(rdt_plan *p);

#endif
