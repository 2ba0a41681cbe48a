/* share.c - a site's noisy, masked share (share.h). */
#include "share.h"

#include <sodium.h>

int rdt_share_make(uint64_t *out, const int64_t *counters, uint64_t n, const rdt_noise_block *blocks, uint32_t k,
                   rdt_rng *noise, const unsigned char *roster, uint32_t n_sites, uint32_t me,
                   const unsigned char sk[RDT_MASK_KEYBYTES], const unsigned char context[32], uint32_t round) {
  uint64_t covered = 0;
  for (uint32_t b = 0; b < k; b++) {
    if (blocks[b].n > n - covered) return 0;
    covered += blocks[b].n;
  }
  if (covered != n) return 0; /* contract 4 */
  uint64_t at = 0;
  for (uint32_t b = 0; b < k; b++)
    for (uint64_t i = 0; i < blocks[b].n; i++, at++)
      out[at] = blocks[b].s ? (uint64_t)counters[at] + (uint64_t)rdt_discrete_laplace(noise, blocks[b].s, blocks[b].t)
                            : 0; /* contract 1: mod 2^64 */
  if (rdt_mask_apply(out, n, roster, n_sites, me, sk, context, round)) return 1;
  sodium_memzero(out, (size_t)n * sizeof *out); /* contract 2 */
  return 0;
}
