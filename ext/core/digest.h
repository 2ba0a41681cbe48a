/*
** digest.h - the digest of what an exact training state means, so that two
** states are added only when their counters count the same things. No
** SQLite.
**
** Contract:
**   1. A digest is BLAKE2b-256 (libsodium) over a label, then fields in the
**      order the caller writes them: integers as 8 bytes little-endian,
**      doubles by their bits, texts and byte strings with their length
**      first, so that no two sequences of fields give the same bytes.
**   2. rdt_digest_schema writes every fact of a schema that cleaning a row
**      depends on: the classes, and per feature its name, type, bounds
**      (bits) and listed values (their canonical texts), in order.
**   3. A digest names, it does not authenticate: whoever can edit a state
**      can recompute it. It catches mistakes (another plan, another
**      structure, other bounds); secrecy and authenticity are the channel's.
*/
#ifndef RDT_DIGEST_H
#define RDT_DIGEST_H

#include <sodium.h>
#include <stddef.h>
#include <stdint.h>

#include "schema.h"

#define RDT_DIGEST_BYTES 32

typedef struct rdt_digest {
  crypto_generichash_state st;
} rdt_digest;

void rdt_digest_init(rdt_digest *d, const char *label);
void rdt_digest_u64(rdt_digest *d, uint64_t v);
void rdt_digest_f64(rdt_digest *d, double v);
/* n bytes, after their length. */
void rdt_digest_bytes(rdt_digest *d, const void *p, size_t n);
void rdt_digest_schema(rdt_digest *d, const rdt_schema *s);
void rdt_digest_final(rdt_digest *d, unsigned char out[RDT_DIGEST_BYTES]);

#endif
