/*
** round.h - the public message between two rounds of a multi-pass learner
** in shard mode (learner.h contract 10). No SQLite.
**
** Contract:
**   1. A round message is public: it holds the releases of the rounds so
**      far (noisy statistics, each paid for in the plan's ε, and their
**      post-processing: a tree's splits, boosting's scores) and public
**      facts (the plan's digest, the round, and a seeded plan's noise
**      position, which the plan's seed makes public anyway). rdt_finish
**      writes it, every site reads it (rdt_partial), and each partial state
**      carries it back (partial.h), so that rdt_finish resumes from it.
**   2. The BLOB (little-endian): magic "RDTROUND", u32 format 1, the plan's
**      32-byte digest, u32 round (the round it opens, >= 1), u64 noise
**      position (rng.h contract 6; 0 without a seed), u64 payload length,
**      the learner's payload, and a BLAKE2b-256 checksum of everything
**      before it. Its magic is neither a model's nor a partial's.
**   3. rdt_round_decode checks the length, the format and the checksum
**      before it points at the payload (no copy): hostile bytes give an
**      error, never a crash. The learner checks its payload (learner.h
**      contract 10). A checksum names, it does not authenticate: with a
**      ledger, rdt_finish accepts only the message it released last
**      (sql_shard.c).
*/
#ifndef RDT_ROUND_H
#define RDT_ROUND_H

#include <stddef.h>
#include <stdint.h>

#define RDT_ROUND_MAGIC "RDTROUND"
#define RDT_ROUND_FORMAT 1u
#define RDT_ROUND_HEADER 64
#define RDT_ROUND_MAX_PAYLOAD ((uint64_t)1 << 30)

typedef struct rdt_round_msg {
  unsigned char plan[32];
  uint32_t round;
  uint64_t noise_at;
  const unsigned char *payload; /* into the decoded buffer */
  size_t payload_len;
} rdt_round_msg;

/* Contract 2: the BLOB (malloc'd) or NULL when memory runs out or the
** payload is too long. */
unsigned char *rdt_round_encode(const unsigned char plan[32], uint32_t round, uint64_t noise_at,
                                const unsigned char *payload, size_t n, size_t *size);
/* Contract 3: 1, or 0 with a message (no prefix). */
int rdt_round_decode(const unsigned char *buf, size_t size, rdt_round_msg *m, char *err, size_t en);
/* Whether buf starts as a round message does (for the decoders' messages). */
int rdt_round_magic(const unsigned char *buf, size_t size);

#endif
