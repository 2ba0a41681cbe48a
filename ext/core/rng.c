/* rng.c - buffered libsodium randomness; see rng.h for the contract. */
#include "rng.h"

#include <sodium.h>
#include <string.h>

static void rng_refill(rdt_rng *rng) {
  if (rng->mode == RDT_RNG_SEEDED) {
    /* Per-block seed = BLAKE2b(key || block index), so the stream is
    ** reproducible and any block can be recomputed on its own. */
    unsigned char in[RDT_RNG_KEYBYTES + 8];
    unsigned char seed[randombytes_SEEDBYTES];
    memcpy(in, rng->key, RDT_RNG_KEYBYTES);
    for (int i = 0; i < 8; i++) in[RDT_RNG_KEYBYTES + i] = (unsigned char)(rng->block >> (8 * i));
    crypto_generichash(seed, sizeof seed, in, sizeof in, NULL, 0);
    randombytes_buf_deterministic(rng->buf, RDT_RNG_BLOCK, seed);
    sodium_memzero(in, sizeof in);
    sodium_memzero(seed, sizeof seed);
    rng->block++;
  } else {
    randombytes_buf(rng->buf, RDT_RNG_BLOCK);
  }
  rng->pos = 0;
}

void rdt_rng_init_os(rdt_rng *rng) {
  memset(rng, 0, sizeof *rng);
  rng->mode = RDT_RNG_OS;
  rng->pos = RDT_RNG_BLOCK;
}

void rdt_rng_init_seeded(rdt_rng *rng, const unsigned char key[RDT_RNG_KEYBYTES]) {
  memset(rng, 0, sizeof *rng);
  rng->mode = RDT_RNG_SEEDED;
  memcpy(rng->key, key, RDT_RNG_KEYBYTES);
  rng->pos = RDT_RNG_BLOCK;
}

void rdt_rng_clear(rdt_rng *rng) { sodium_memzero(rng, sizeof *rng); }

void rdt_rng_derive_key(unsigned char out[RDT_RNG_KEYBYTES], const void *seed, size_t seed_len,
                        const char *purpose) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, (const unsigned char *)"rdt-seed-v1", 11, RDT_RNG_KEYBYTES);
  crypto_generichash_update(&st, (const unsigned char *)purpose, strlen(purpose) + 1);
  crypto_generichash_update(&st, (const unsigned char *)seed, seed_len);
  crypto_generichash_final(&st, out, RDT_RNG_KEYBYTES);
}

void rdt_rng_init_for(rdt_rng *rng, const unsigned char *seed_key, const char *purpose, int replayable) {
  unsigned char key[RDT_RNG_KEYBYTES];
  if (seed_key) {
    rdt_rng_derive_key(key, seed_key, RDT_RNG_KEYBYTES, purpose);
  } else if (replayable) {
    rdt_rng_init_os(rng);
    rdt_rng_bytes(rng, key, sizeof key);
    rdt_rng_clear(rng);
  } else {
    rdt_rng_init_os(rng);
    return;
  }
  rdt_rng_init_seeded(rng, key);
  sodium_memzero(key, sizeof key);
}

void rdt_rng_structure_key(unsigned char out[RDT_RNG_KEYBYTES], const unsigned char *seed_key) {
  if (seed_key) {
    rdt_rng_derive_key(out, seed_key, RDT_RNG_KEYBYTES, "structure");
    return;
  }
  rdt_rng os;
  rdt_rng_init_os(&os);
  rdt_rng_bytes(&os, out, RDT_RNG_KEYBYTES);
  rdt_rng_clear(&os);
}

void rdt_rng_bytes(rdt_rng *rng, void *out, size_t n) {
  unsigned char *o = out;
  while (n > 0) {
    if (rng->pos == RDT_RNG_BLOCK) rng_refill(rng);
    size_t take = RDT_RNG_BLOCK - rng->pos;
    if (take > n) take = n;
    memcpy(o, rng->buf + rng->pos, take);
    /* Wipe what was handed out. A plain memset cannot be elided here: the
    ** buffer lives on in *rng and is read again after the next refill. */
    memset(rng->buf + rng->pos, 0, take);
    rng->pos += take;
    o += take;
    n -= take;
  }
}

uint64_t rdt_rng_u64(rdt_rng *rng) {
  unsigned char b[8];
  uint64_t v = 0;
  rdt_rng_bytes(rng, b, 8);
  for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
  return v;
}

uint64_t rdt_rng_below(rdt_rng *rng, uint64_t n) {
  if (n <= 1) return 0;
  /* Draw only as many bytes as n needs (the noise samplers make many small
  ** draws), and accept r only below the largest multiple of n that fits. */
  unsigned width = 1;
  while (width < 8 && (n - 1) >> (8 * width)) width++;
  uint64_t range = width == 8 ? 0 : (uint64_t)1 << (8 * width); /* 0 stands for 2^64 */
  uint64_t limit = range ? range - range % n - 1 : UINT64_MAX - (UINT64_MAX % n + 1) % n;
  for (;;) {
    unsigned char b[8];
    uint64_t r = 0;
    rdt_rng_bytes(rng, b, width);
    for (unsigned i = 0; i < width; i++) r |= (uint64_t)b[i] << (8 * i);
    if (r <= limit) return r % n;
  }
}

double rdt_rng_unit(rdt_rng *rng) {
  return (double)(rdt_rng_u64(rng) >> 11) * 0x1.0p-53;
}

uint64_t rdt_rng_tell(const rdt_rng *rng) {
  if (rng->mode != RDT_RNG_SEEDED || rng->block == 0) return 0;
  return (rng->block - 1) * RDT_RNG_BLOCK + rng->pos;
}

void rdt_rng_seek(rdt_rng *rng, uint64_t at) {
  if (rng->mode != RDT_RNG_SEEDED) return;
  rng->block = at / RDT_RNG_BLOCK;
  rng_refill(rng); /* block at / BLOCK, then the next index */
  rng->pos = (size_t)(at % RDT_RNG_BLOCK);
  memset(rng->buf, 0, rng->pos); /* bytes before the position were handed out before */
}
