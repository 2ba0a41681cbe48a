/*
** rng.h - the one source of randomness of rdt.
**
** Contract:
**   1. Every random bit used by rdt (tree structure, noise, coins at prediction)
**      comes from an rdt_rng, and every rdt_rng reads libsodium only.
**   2. RDT_RNG_OS reads the operating system's CSPRNG (randombytes_buf).
**   3. RDT_RNG_SEEDED is a ChaCha20 stream (randombytes_buf_deterministic) whose
**      block i is keyed by BLAKE2b(key || i); it exists only for reproducible
**      tests and is refused unless a caller asks for it with an explicit key.
**   4. Bytes are drawn through a buffer; every byte handed out is wiped from the
**      buffer, and rdt_rng_clear() wipes the whole state.
**   5. Uniform integers are drawn by rejection: no modulo bias, any 64-bit bound.
**   6. A seeded stream's position is the count of bytes handed out since its
**      key; rdt_rng_seek puts a fresh seeded stream of the same key at such a
**      position, so that a release cut into rounds (shard mode) draws exactly
**      the bytes one uncut release would.
*/
#ifndef RDT_RNG_H
#define RDT_RNG_H

#include <stddef.h>
#include <stdint.h>

#define RDT_RNG_BLOCK 1024
#define RDT_RNG_KEYBYTES 32

typedef enum { RDT_RNG_OS = 1, RDT_RNG_SEEDED = 2 } rdt_rng_mode;

typedef struct rdt_rng {
  rdt_rng_mode mode;
  size_t pos;                       /* next unused byte of buf */
  uint64_t block;                   /* seeded mode: index of the next block */
  unsigned char key[RDT_RNG_KEYBYTES];
  unsigned char buf[RDT_RNG_BLOCK];
} rdt_rng;

void rdt_rng_init_os(rdt_rng *rng);
void rdt_rng_init_seeded(rdt_rng *rng, const unsigned char key[RDT_RNG_KEYBYTES]);
void rdt_rng_clear(rdt_rng *rng);

/* Derive a 32-byte key from arbitrary bytes and a purpose label, so that one
** user seed gives independent streams (structure, noise, ...). */
void rdt_rng_derive_key(unsigned char out[RDT_RNG_KEYBYTES],
                        const void *seed, size_t seed_len, const char *purpose);

/* A stream for one purpose. With a seed key (seed_key not NULL): the seeded
** stream of the key derived from it and `purpose`, reproducible. Without:
** the OS CSPRNG, or when `replayable`, a ChaCha20 stream keyed by fresh OS
** bytes (so that the stream can be copied and drawn again). */
void rdt_rng_init_for(rdt_rng *rng, const unsigned char *seed_key, const char *purpose, int replayable);
/* The key a structure is drawn from (forest.h item 1, a shard plan's
** "structure_key"): derived from the seed key for the purpose "structure"
** (reproducible), or fresh OS bytes when seed_key is NULL. */
void rdt_rng_structure_key(unsigned char out[RDT_RNG_KEYBYTES], const unsigned char *seed_key);
void rdt_rng_bytes(rdt_rng *rng, void *out, size_t n);
uint64_t rdt_rng_u64(rdt_rng *rng);
/* Uniform in [0, n) for n >= 1, by rejection. */
uint64_t rdt_rng_below(rdt_rng *rng, uint64_t n);
/* Uniform double in [0, 1) with 53 random bits (only for public choices,
** e.g. thresholds drawn from public bounds; never on a noise path). */
double rdt_rng_unit(rdt_rng *rng);
/* Contract 6 (seeded streams; an OS stream has no position: 0, no-op). */
uint64_t rdt_rng_tell(const rdt_rng *rng);
void rdt_rng_seek(rdt_rng *rng, uint64_t at);

#endif
