/*
** select.h - private selection among candidates: permute-and-flip
** (McKenna & Sheldon 2020) with exact coins.
**
** Contract:
**   1. Neighbouring relation: the caller's; every utility changes by at most
**      `sensitivity` (an integer) between neighbours.
**   2. The candidates are put in a uniformly random order (a Fisher-Yates
**      shuffle); candidate i is accepted with probability
**      exp(-eps * (u_max - u_i) / (2 * sensitivity)), or
**      exp(-eps * (u_max - u_i) / sensitivity) when `monotone` (all
**      utilities move in the same direction between neighbours),
**      independently; the result is the first accepted candidate in that
**      order. The best candidate is always accepted. This is eps-DP, and
**      never worse in expected utility than the exponential mechanism.
**   3. Exact coins: with (s, t) = rdt_laplace_params(eps, 2 * sensitivity),
**      or (eps, sensitivity) when monotone, candidate i is accepted iff
**      Y_i >= u_max - u_i (an integer comparison), Y_i = rdt_geometric(s, t)
**      with P(Y_i >= k) exactly exp(-k * s / t) (noise.h 3b): no floating
**      point, no Gumbel trick, so far candidates keep their exact, non-zero
**      probability.
**   4. Timing: one call makes n - 1 uniform draws for the shuffle (bounds n,
**      n - 1, ..., 2) and then exactly n draws of rdt_geometric(s, t), one
**      per candidate, whatever is accepted; the scan visits every candidate
**      and never stops early. So the number and kind of draws depend only on
**      n, eps, the sensitivity and `monotone`, the time of each draw only on
**      its own coins and the public (s, t) (noise.h 5): from a given stream
**      state, the state after the call is the same for any utilities. The
**      utilities enter only through their maximum and, per candidate, a
**      subtraction and the comparison with Y_i, whose result picks the
**      candidate through masks, not branches.
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
