/* noise.c - exact integer samplers; see noise.h for the contract. */
#include "noise.h"

#include <math.h>

int rdt_eps_from_double(double eps, rdt_eps *out) {
  if (!(eps >= RDT_EPS_MIN && eps <= RDT_EPS_MAX)) return 0; /* also rejects NaN */
  /* eps * 2^32 is exact in binary floating point; floor rounds toward the
  ** smaller budget (the safe direction). */
  double scaled = floor(ldexp(eps, RDT_EPS_DEN_LOG2));
  if (scaled < 1.0) return 0;
  out->num = (uint64_t)scaled;
  return 1;
}

double rdt_eps_to_double(rdt_eps e) { return ldexp((double)e.num, -RDT_EPS_DEN_LOG2); }

int rdt_bernoulli_rational(rdt_rng *rng, uint64_t n, uint64_t d) {
  if (n >= d) return 1;
  return rdt_rng_below(rng, d) < n;
}

/* exp(-g) for g = n/d in [0, 1]: CKS Algorithm 1. Draw A_k ~ Bern(g/k) for
** k = 1, 2, ... until one is 0; the answer is 1 iff that k is odd.
** Bern(g/k) = Bern(n/d) AND Bern(1/k): no product d*k, so nothing overflows. */
static int bernoulli_exp_unit(rdt_rng *rng, uint64_t n, uint64_t d) {
  uint64_t k = 1;
  for (;;) {
    int a = rdt_bernoulli_rational(rng, n, d) && rdt_bernoulli_rational(rng, 1, k);
    if (!a) return (int)(k & 1);
    k++;
  }
}

int rdt_bernoulli_exp(rdt_rng *rng, uint64_t n, uint64_t d) {
  /* exp(-n/d) = exp(-1)^floor(n/d) * exp(-(n mod d)/d) */
  uint64_t whole = n / d;
  for (uint64_t i = 0; i < whole; i++) {
    if (!bernoulli_exp_unit(rng, 1, 1)) return 0;
  }
  return bernoulli_exp_unit(rng, n % d, d);
}

#ifdef RDT_COUNT_WORK
_Atomic uint64_t rdt_geometric_draws;
#endif

/* min(floor((t*v + u) / s), 2^64 - 1) without overflow: the 128-bit
** product in 32-bit halves, then (when it does not fit 64 bits) a long
** division of fixed length. */
static uint64_t floor_div_sat(uint64_t t, uint64_t v, uint64_t u, uint64_t s) {
  uint64_t t0 = t & 0xffffffffu, t1 = t >> 32, v0 = v & 0xffffffffu, v1 = v >> 32;
  uint64_t p00 = t0 * v0, p01 = t0 * v1, p10 = t1 * v0, p11 = t1 * v1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  uint64_t lo = (p00 & 0xffffffffu) | (mid << 32);
  uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  lo += u;
  hi += lo < u; /* t*v + u < 2^128: no carry out of hi */
  if (hi == 0) return lo / s;
  if (hi >= s) return UINT64_MAX; /* the quotient is at least 2^64 */
  uint64_t q = 0, r = hi;         /* r < s throughout */
  for (int b = 63; b >= 0; b--) {
    uint64_t top = r >> 63;
    r = (r << 1) | ((lo >> b) & 1);
    q <<= 1;
    if (top || r >= s) { /* with top set the true remainder is 2^64 + r >= s */
      r -= s;
      q |= 1;
    }
  }
  return q;
}

/* CKS Algorithm 2, one-sided. With U uniform in [0, t) accepted w.p.
** exp(-U/t) and V ~ Geometric(1 - exp(-1)), X = U + t*V is geometric with
** parameter exp(-1/t); Y = floor(X / s) is geometric with parameter
** exp(-s/t). The only restart is U's rejection, so the law is exact; V
** would need 2^64 successes in a row (probability exp(-2^64)) to wrap. */
uint64_t rdt_geometric(rdt_rng *rng, uint64_t s, uint64_t t) {
#ifdef RDT_COUNT_WORK
  rdt_geometric_draws++;
#endif
  for (;;) {
    uint64_t u = rdt_rng_below(rng, t);
    if (!rdt_bernoulli_exp(rng, u, t)) continue;
    uint64_t v = 0;
    while (rdt_bernoulli_exp(rng, 1, 1)) v++;
    return floor_div_sat(t, v, u, s);
  }
}

/* A random sign on rdt_geometric's magnitude, rejecting "-0", gives the
** two-sided law; magnitudes beyond int64 are rejected too (probability
** below exp(-2^63 * s / t)). */
int64_t rdt_discrete_laplace(rdt_rng *rng, uint64_t s, uint64_t t) {
  for (;;) {
    uint64_t y = rdt_geometric(rng, s, t);
    int negative = (int)rdt_rng_below(rng, 2);
    if (negative && y == 0) continue;
    if (y > (uint64_t)INT64_MAX) continue;
    return negative ? -(int64_t)y : (int64_t)y;
  }
}

int rdt_bernoulli_exp_times(rdt_rng *rng, uint64_t m, uint64_t n, uint64_t d) {
  for (uint64_t i = 0; i < m; i++) {
    if (!rdt_bernoulli_exp(rng, n, d)) return 0;
  }
  return 1;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

int rdt_laplace_params(rdt_eps eps, uint64_t sensitivity, uint64_t *s, uint64_t *t) {
  /* scale = sensitivity / eps = sensitivity * 2^32 / num, so the exponent is
  ** |z| * num / (sensitivity * 2^32). */
  if (eps.num == 0 || sensitivity == 0 || sensitivity > ((uint64_t)1 << RDT_MAX_SENSITIVITY_LOG2)) return 0;
  uint64_t tt = sensitivity << RDT_EPS_DEN_LOG2;
  uint64_t ss = eps.num;
  uint64_t g = gcd_u64(ss, tt);
  *s = ss / g;
  *t = tt / g;
  return 1;
}

int rdt_lattice_laplace(rdt_rng *rng, double value, double sensitivity, rdt_eps eps, int grid_log2, double *out) {
  if (!isfinite(value) || !isfinite(sensitivity) || sensitivity < 0 || grid_log2 < -1000 || grid_log2 > 1000)
    return 0;
  double scaled = ldexp(value, -grid_log2); /* exact: a power-of-two scaling */
  if (!(fabs(scaled) < 0x1p52)) return 0;
  double steps = floor(ldexp(sensitivity, -grid_log2)) + 1;
  if (steps > 65536) return 0;
  uint64_t s, t;
  if (!rdt_laplace_params(eps, (uint64_t)steps, &s, &t)) return 0;
  int64_t n = (int64_t)nearbyint(scaled) + rdt_discrete_laplace(rng, s, t);
  *out = ldexp((double)n, grid_log2); /* exact while |n| < 2^53 */
  return 1;
}
