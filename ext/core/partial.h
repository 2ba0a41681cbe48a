/*
** partial.h - the exact partial training state of shard mode: a site's
** counters over its own rows (or the sum of several sites'), as one BLOB
** that is never a model. No SQLite.
**
** Contract:
**   1. A training state that merges is a list of spans of int64 counters
**      (learner.h, contract 3): its length and meaning are fixed by the plan
**      (the options, the schema, the structure key), never by the rows.
**      Merging two states of one plan adds them counter by counter.
**   2. The BLOB (little-endian): magic "RDTPART1", u32 format 2, u32 flags
**      (RDT_PARTIAL_EXACT or RDT_PARTIAL_MASKED, exactly one), the plan's
**      32-byte digest, u32 round, u32 n_ids, u64 n, u64 m, then n_ids ids of
**      16 bytes in increasing order (one per rdt_partial call summed into
**      it; a masked share's is its site's public key, cut to 16 bytes), the
**      m bytes of the round message the partial answers (round.h; none in
**      round 0), n counters as two's-complement u64, and a BLAKE2b-256
**      checksum of everything before it. Its magic is not a model's
**      ("RDTMODEL"): every model decoder refuses it, and model.c names it.
**   3. EXACT (shard mode): the counters are exact functions of the rows,
**      private data, never a release; no ε, no noise. MASKED (federated
**      mode, share.h): a site's noisy counters under its pairwise mask,
**      uniform to whoever lacks the other sites' keys; only the sum of
**      every site's share means anything.
**   4. rdt_partial_decode validates everything (length, checksum, flags,
**      ids in order, sizes within RDT_PARTIAL_MAX_*) before it allocates
**      what the header asks for; hostile bytes give an error, never a crash.
**   5. rdt_partial_merge refuses a partial of another plan, another round
**      or round message, another length or the other kind, and one whose
**      ids meet the other's:
**      the same partial summed twice would count its rows twice, doubling
**      every row's weight beyond the sensitivity the noise is set for. An
**      exact sum is exact: a counter that would overflow int64 is an error,
**      not a wrap. Masked shares add modulo 2^64 (their masks cancel only
**      so, mask.h).
**   6. rdt_partial_free wipes the counters before it frees them.
*/
#ifndef RDT_PARTIAL_H
#define RDT_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

#define RDT_PARTIAL_MAGIC "RDTPART1"
#define RDT_PARTIAL_FORMAT 2u
#define RDT_PARTIAL_EXACT 1u
#define RDT_PARTIAL_MASKED 2u
#define RDT_PARTIAL_ID_BYTES 16
#define RDT_PARTIAL_DIGEST_BYTES 32
#define RDT_PARTIAL_HEADER 72
#define RDT_PARTIAL_MAX_MESSAGE ((uint64_t)1 << 31)
#define RDT_PARTIAL_MAX_IDS ((uint32_t)1 << 20)
#define RDT_PARTIAL_MAX_COUNTERS ((uint64_t)1 << 32)
#define RDT_MAX_SPANS 4

/* Contract 1: one run of a state's counters, in place. */
typedef struct rdt_span {
  int64_t *p;
  uint64_t n;
} rdt_span;

/* The counters of k spans together. */
uint64_t rdt_spans_count(const rdt_span *s, uint32_t k);
/* Copies the spans' counters, in order, into out (rdt_spans_count of them). */
void rdt_spans_read(const rdt_span *s, uint32_t k, int64_t *out);
/* Adds in[] to the spans' counters, in order; 0 (having added a prefix) if
** one would overflow. */
int rdt_spans_add(rdt_span *s, uint32_t k, const int64_t *in);

typedef struct rdt_partial {
  uint32_t flags; /* RDT_PARTIAL_EXACT or RDT_PARTIAL_MASKED */
  unsigned char plan[RDT_PARTIAL_DIGEST_BYTES];
  uint32_t round;
  uint32_t n_ids;
  unsigned char *ids; /* n_ids x RDT_PARTIAL_ID_BYTES, increasing */
  uint64_t n;
  int64_t *counters;
  unsigned char *message; /* the round message answered (owned), or NULL */
  size_t message_len;
} rdt_partial;

/* A partial of one call: fresh id (OS), n counters copied from the spans,
** and a copy of the round message it answers (NULL, 0: round 0). 0 when
** memory runs out (p left freeable). */
int rdt_partial_from_spans(rdt_partial *p, const unsigned char plan[RDT_PARTIAL_DIGEST_BYTES], uint32_t round,
                           const rdt_span *s, uint32_t k, const unsigned char *message, size_t message_len);
/* A masked share (contract 3): n values of vec (mod 2^64), the given id.
** 0 when memory runs out (p left freeable). */
int rdt_partial_from_masked(rdt_partial *p, const unsigned char plan[RDT_PARTIAL_DIGEST_BYTES], uint32_t round,
                            const uint64_t *vec, uint64_t n, const unsigned char id[RDT_PARTIAL_ID_BYTES]);
/* Contract 2: the BLOB (malloc'd) or NULL when memory runs out. */
unsigned char *rdt_partial_encode(const rdt_partial *p, size_t *size);
/* Contract 4: 1, or 0 with a message (no prefix) and nothing to free. */
int rdt_partial_decode(const unsigned char *buf, size_t size, rdt_partial *p, char *err, size_t en);
/* Contract 5: into += from; 0 with a message, into unchanged. */
int rdt_partial_merge(rdt_partial *into, const rdt_partial *from, char *err, size_t en);
/* Whether buf starts as a partial does (for the decoders' messages). */
int rdt_partial_magic(const unsigned char *buf, size_t size);
void rdt_partial_free(rdt_partial *p);

#endif
