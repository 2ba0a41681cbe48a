/* mask.c - federated mode's pairwise masks (mask.h). */
#include "mask.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_CHUNK 4096 /* u64 values per XChaCha20 call: 32 KiB, a whole number of 64-byte blocks */

void rdt_mask_keypair(unsigned char pk[RDT_MASK_KEYBYTES], unsigned char sk[RDT_MASK_KEYBYTES]) {
  randombytes_buf(sk, RDT_MASK_KEYBYTES);
  crypto_scalarmult_base(pk, sk);
}

void rdt_mask_public(const unsigned char sk[RDT_MASK_KEYBYTES], unsigned char pk[RDT_MASK_KEYBYTES]) {
  crypto_scalarmult_base(pk, sk);
}

long rdt_mask_find(const unsigned char *roster, uint32_t n_sites, const unsigned char pk[RDT_MASK_KEYBYTES]) {
  for (uint32_t i = 0; i < n_sites; i++)
    if (sodium_memcmp(roster + (size_t)i * RDT_MASK_KEYBYTES, pk, RDT_MASK_KEYBYTES) == 0) return (long)i;
  return -1;
}

/* Contract 2: k_ij; 0 for a low-order public key. */
static int pair_key(unsigned char out[32], const unsigned char sk[32], const unsigned char *mine,
                    const unsigned char *theirs, const unsigned char context[32], uint32_t round) {
  unsigned char shared[crypto_scalarmult_BYTES], r[4];
  if (crypto_scalarmult(shared, sk, theirs) != 0) return 0;
  int lower = memcmp(mine, theirs, RDT_MASK_KEYBYTES) < 0;
  for (int i = 0; i < 4; i++) r[i] = (unsigned char)(round >> (8 * i));
  crypto_generichash_state st;
  crypto_generichash_init(&st, NULL, 0, 32);
  crypto_generichash_update(&st, (const unsigned char *)"rdt-mask-v1", 11);
  crypto_generichash_update(&st, shared, sizeof shared);
  crypto_generichash_update(&st, lower ? mine : theirs, RDT_MASK_KEYBYTES);
  crypto_generichash_update(&st, lower ? theirs : mine, RDT_MASK_KEYBYTES);
  crypto_generichash_update(&st, context, 32);
  crypto_generichash_update(&st, r, sizeof r);
  crypto_generichash_final(&st, out, 32);
  sodium_memzero(shared, sizeof shared);
  sodium_memzero(&st, sizeof st);
  return 1;
}

int rdt_mask_apply(uint64_t *vec, uint64_t n, const unsigned char *roster, uint32_t n_sites, uint32_t me,
                   const unsigned char sk[RDT_MASK_KEYBYTES], const unsigned char context[32], uint32_t round) {
  unsigned char pk[RDT_MASK_KEYBYTES];
  if (n_sites < 2 || n_sites > RDT_MASK_MAX_SITES || me >= n_sites) return 0;
  rdt_mask_public(sk, pk);
  const unsigned char *mine = roster + (size_t)me * RDT_MASK_KEYBYTES;
  if (sodium_memcmp(pk, mine, RDT_MASK_KEYBYTES) != 0) return 0;
  for (uint32_t j = 0; j < n_sites; j++)
    for (uint32_t k = j + 1; k < n_sites; k++)
      if (memcmp(roster + (size_t)j * RDT_MASK_KEYBYTES, roster + (size_t)k * RDT_MASK_KEYBYTES, RDT_MASK_KEYBYTES) == 0)
        return 0;
  /* Every key first (contract 6: nothing added on a refusal). */
  unsigned char *keys = sodium_malloc((size_t)n_sites * 32);
  uint64_t *mask = calloc((size_t)(n ? n : 1), sizeof *mask);
  unsigned char *stream = malloc(STREAM_CHUNK * 8);
  int ok = keys && mask && stream;
  for (uint32_t j = 0; ok && j < n_sites; j++)
    if (j != me) ok = pair_key(keys + (size_t)j * 32, sk, mine, roster + (size_t)j * RDT_MASK_KEYBYTES, context, round);
  static const unsigned char nonce[crypto_stream_xchacha20_NONCEBYTES];
  for (uint32_t j = 0; ok && j < n_sites; j++) {
    if (j == me) continue;
    for (uint64_t at = 0; at < n; at += STREAM_CHUNK) {
      uint64_t m = n - at < STREAM_CHUNK ? n - at : STREAM_CHUNK;
      memset(stream, 0, (size_t)m * 8);
      /* block counter: 64-byte blocks, STREAM_CHUNK * 8 / 64 per chunk */
      crypto_stream_xchacha20_xor_ic(stream, stream, (unsigned long long)m * 8, nonce, at / 8,
                                     keys + (size_t)j * 32);
      for (uint64_t i = 0; i < m; i++) {
        uint64_t v = 0;
        for (int b = 0; b < 8; b++) v |= (uint64_t)stream[i * 8 + (uint64_t)b] << (8 * b);
        mask[at + i] += j > me ? v : (uint64_t)0 - v; /* contract 4 */
      }
    }
  }
  if (ok)
    for (uint64_t i = 0; i < n; i++) vec[i] += mask[i];
  if (stream) sodium_memzero(stream, STREAM_CHUNK * 8);
  if (mask) sodium_memzero(mask, (size_t)(n ? n : 1) * sizeof *mask);
  free(stream);
  free(mask);
  sodium_free(keys); /* wipes */
  return ok;
}
