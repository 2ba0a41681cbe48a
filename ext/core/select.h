/*
** select.h - private selection among candidates: permute-and-flip
** (McKenna & Sheldon 2020) with exact coins.
**
** Contract:
**   1. Neighbouring relation: the caller's; every utility changes by at most
**      `sensitivity` (an integer) between neighbours.
**   2. Candidate i is examined in a uniformly random order and accepted with
**      probability exp(-eps * (u_max - u_i) / (2 * sensitivity)), or
**      exp(-eps * (u_max - u_i) / sensitivity) when `monotone` (all
**      utilities move in the same direction between neighbours); the best
**      candidate is always accepted, so one pass suffices. This is eps-DP,
**      and never worse in expected utility than the exponential mechanism.
**   3. Every coin is an exact Bernoulli(exp(-x)) on rationals (noise.h): no
**      floating point, no Gumbel trick, so far candidates keep their exact,
**      non-zero probability.
**   4. Timing: the work depends on the utilities (how many candidates are
**      examined before one is accepted); callers treat that as the timing
**      threat documented in the README.
*/
#ifndef RDT_SELECT_H
#define RDT_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "noise.h"
#include "rng.h"

/* Index of the chosen candidate among n >= 1 utilities, or -1 when the
** parameters do not fit (sensitivity 0 or above 2^16, n too large). `order`
** is caller scratch of n entries. */
long rdt_permute_and_flip(rdt_rng *rng, const int64_t *utility, size_t n, rdt_eps eps, uint64_t sensitivity,
                          int monotone, size_t *order);

#endif
