/* select.c - permute-and-flip with exact coins; see select.h. */
#include "select.h"

long rdt_permute_and_flip(rdt_rng *rng, const int64_t *utility, size_t n, rdt_eps eps, uint64_t sensitivity,
                          int monotone, size_t *order) {
  if (n == 0 || n > ((size_t)1 << 40) || sensitivity == 0 || sensitivity > ((uint64_t)1 << 16)) return -1;
  /* 2 * sensitivity <= 2^17 is within rdt_laplace_params' range. */
  int64_t best = utility[0];
  for (size_t i = 1; i < n; i++) if (utility[i] > best) best = utility[i];
  /* Coin for a gap g: exp(-g * eps / (c * sensitivity)), c = 2 or 1, with
  ** eps = num / 2^32: exp(-g * num / (c * sensitivity * 2^32)). */
  uint64_t s, t;
  if (!rdt_laplace_params(eps, monotone ? sensitivity : 2 * sensitivity, &s, &t)) return -1;
  for (size_t i = 0; i < n; i++) order[i] = i;
  for (size_t i = n; i > 1; i--) { /* Fisher-Yates, unbiased draws */
    size_t j = (size_t)rdt_rng_below(rng, i);
    size_t tmp = order[i - 1];
    order[i - 1] = order[j];
    order[j] = tmp;
  }
  for (size_t k = 0; k < n; k++) {
    size_t i = order[k];
    uint64_t gap = (uint64_t)best - (uint64_t)utility[i]; /* two's complement: exact for any int64 pair */
    /* exp(-gap * s / t) in one exact coin when gap * s fits (its cost is
    ** then O(1) expected); otherwise gap coins of exp(-s / t). */
    int accept = gap == 0 ? 1
                 : gap <= UINT64_MAX / s ? rdt_bernoulli_exp(rng, gap * s, t)
                                         : rdt_bernoulli_exp_times(rng, gap, s, t);
    if (accept) return (long)i;
  }
  return -1; /* unreachable: the best candidate's coin is exp(0) = 1 */
}
