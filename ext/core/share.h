/*
** share.h - a site's share in federated mode: its exact counters, the whole
** noise of the learner's release added to them (learner.h contract 9), and
** its pairwise mask (mask.h), which is all that leaves the site. No SQLite.
**
** Contract:
**   1. Privacy of one share. Neighbouring relation: add or remove one row
**      of the site's input. The counters have the learner's sensitivity over
**      those rows (its contract); each gets the independent exact discrete
**      Laplace its block names (noise.h), so the noisy vector is ε-DP for
**      the plan's ε by the learner's own proof, whoever sees it and whatever
**      the other sites do: the guarantee holds against the coordinator and
**      any coalition of the other sites. Counters of a block with s = 0 are
**      sent as 0 (never released).
**   2. Nothing unmasked leaves: the noisy vector is built in the caller's
**      buffer and masked there (mask.h contract 4) before the call returns;
**      if masking fails, the buffer is wiped and 0 returned.
**   3. The sum of every site's share, modulo 2^64, is the union's counters
**      plus n independent draws of the mechanism's noise per counter (n
**      sites): ε-DP as post-processing of any single share, at n times the
**      variance of one release (the noise's sd grows by √n). That is the
**      cost of each site adding its whole noise: no site relies on another's
**      noise, so no threshold of honest sites is needed for privacy.
**   4. The blocks must cover the n counters exactly; otherwise 0, nothing
**      drawn.
*/
#ifndef RDT_SHARE_H
#define RDT_SHARE_H

#include <stdint.h>

#include "mask.h"
#include "noise.h"
#include "rng.h"

int rdt_share_make(uint64_t *out, const int64_t *counters, uint64_t n, const rdt_noise_block *blocks, uint32_t k,
                   rdt_rng *noise, const unsigned char *roster, uint32_t n_sites, uint32_t me,
                   const unsigned char sk[RDT_MASK_KEYBYTES], const unsigned char context[32], uint32_t round);

#endif
