/* select.c - permute-and-flip with exact coins; see select.h. */
#include "select.h"

long rdt_permute_and_flip(rdt_rng *rng, const int64_t *utility, size_t n, rdt_eps eps, uint64_t sensitivity,
                          int monotone, size_t *order) {
  if (n == 0 || n > ((size_t)1 << 40) || sensitivity == 0 || sensitivity > ((uint64_t)1 << 16)) return -1;
  /* 2 * sensitivity <= 2^17 is within rdt_laplace_params' range. */
  int64_t best = utility[0];
  for (size_t i = 1; i < n; i++) best = utility[i] > best ? utility[i] : best;
  /* Coin for a gap g: exp(-g * eps / (c * sensitivity)), c = 2 or 1, with
  ** eps = num / 2^32: exp(-g * s / t) for (s, t) = rdt_laplace_params(eps,
  ** c * sensitivity). */
  uint64_t s, t;
  if (!rdt_laplace_params(eps, monotone ? sensitivity : 2 * sensitivity, &s, &t)) return -1;
  for (size_t i = 0; i < n; i++) order[i] = i;
  for (size_t i = n; i > 1; i--) { /* Fisher-Yates, unbiased draws */
    size_t j = (size_t)rdt_rng_below(rng, i);
    size_t tmp = order[i - 1];
    order[i - 1] = order[j];
    order[j] = tmp;
  }
  /* The inverse of a uniform permutation is uniform, so order[i] serves as
  ** candidate i's position in a random order, and the scan runs over i
  ** (sequential memory). Every candidate gets its coin, Y >= gap with
  ** P(Y >= gap) = exp(-gap * s / t) (noise.h 3b), whether or not another was
  ** accepted: the draws are the same whatever the utilities. The accepted
  ** candidate of smallest position is the first accepted in that order;
  ** it is kept by masks, not branches, and the scan never stops early. */
  uint64_t chosen = 0, position = UINT64_MAX;
  for (size_t i = 0; i < n; i++) {
    uint64_t gap = (uint64_t)best - (uint64_t)utility[i]; /* two's complement: exact for any int64 pair */
    uint64_t take = (uint64_t)(rdt_geometric(rng, s, t) >= gap) & (uint64_t)((uint64_t)order[i] < position);
    uint64_t mask = 0 - take;
    chosen = (chosen & ~mask) | ((uint64_t)i & mask);
    position = (position & ~mask) | ((uint64_t)order[i] & mask);
  }
  return position != UINT64_MAX ? (long)chosen : -1; /* the best candidate's gap is 0: always found */
}
