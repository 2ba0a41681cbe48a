/*
** noise.h - exact samplers for differential privacy.
**
** Contract:
**   1. All samplers use integer arithmetic on rationals only: no log(), no
**      floating point on any path that touches a private value, so there is
**      no least-significant-bit leak (Mironov 2012).
**   2. rdt_bernoulli_exp(n/d) returns 1 with probability exactly exp(-n/d).
**   3. rdt_discrete_laplace(s, t) returns Z with P(Z = z) exactly
**      proportional to exp(-|z| * s / t) over |z| <= 2^63 - 1 (Canonne,
**      Kamath, Steinke 2020). Adding it to an integer query of L1
**      sensitivity D is (D*s/t)-DP under the query's neighbouring relation.
**   3b. rdt_geometric(s, t) returns min(Y, 2^64 - 1) where Y is geometric
**      with P(Y >= k) exactly exp(-k * s / t) for every integer k >= 0; so
**      for any k <= 2^64 - 1 the comparison "result >= k" is a coin of
**      probability exactly exp(-k * s / t). It is the magnitude that
**      rdt_discrete_laplace signs, drawn with the same coins.
**   4. Privacy budgets are rationals rdt_eps = num / 2^32, rounded DOWN from
**      the caller's request, so what is spent never exceeds what was asked
**      and the reported value is exactly the one the sampler used.
**   5. Running time depends only on the random draws and the parameters, not
**      on the value the noise is added to. In particular rdt_geometric's
**      running time is a function of its coins and the public s, t alone.
*/
#ifndef RDT_NOISE_H
#define RDT_NOISE_H

#include <stdint.h>
#include "rng.h"

#define RDT_EPS_DEN_LOG2 32
#define RDT_EPS_MIN 1e-6
#define RDT_EPS_MAX 1e6
/* Above this, rdt_info labels a release weak: e^10 ~ 22000 is no guarantee. */
#define RDT_WEAK_EPSILON 10
#define RDT_MAX_SENSITIVITY_LOG2 20 /* integer sensitivities up to 2^20 */

typedef struct rdt_eps {
  uint64_t num;   /* epsilon = num / 2^32 */
} rdt_eps;

/* Round a requested epsilon down onto the 2^-32 grid. Returns 0 if the
** request is not a finite number in [RDT_EPS_MIN, RDT_EPS_MAX]. */
int rdt_eps_from_double(double eps, rdt_eps *out);
double rdt_eps_to_double(rdt_eps e);  /* exact: num < 2^53 */

/* 1 with probability n/d (d >= 1, n <= d). */
int rdt_bernoulli_rational(rdt_rng *rng, uint64_t n, uint64_t d);
/* 1 with probability exp(-n/d) (d >= 1). */
int rdt_bernoulli_exp(rdt_rng *rng, uint64_t n, uint64_t d);
/* Discrete Laplace: P(z) proportional to exp(-|z| * s / t), s, t >= 1. */
int64_t rdt_discrete_laplace(rdt_rng *rng, uint64_t s, uint64_t t);
/* One-sided geometric (Contract 3b): min(Y, 2^64 - 1) with
** P(Y >= k) = exp(-k * s / t), s, t >= 1. */
uint64_t rdt_geometric(rdt_rng *rng, uint64_t s, uint64_t t);
#ifdef RDT_COUNT_WORK
/* Tests only: calls of rdt_geometric so far (also those made by
** rdt_discrete_laplace). */
extern _Atomic uint64_t rdt_geometric_draws;
#endif

/* Noise for counters of L1 sensitivity `sensitivity` (an integer) spending
** budget `eps`: scale sensitivity/eps, i.e. s = eps.num, t = sensitivity*2^32
** (reduced by their gcd). Returns 0 if the parameters overflow. */
int rdt_laplace_params(rdt_eps eps, uint64_t sensitivity, uint64_t *s, uint64_t *t);

/* A run of n counters and the noise a release adds to each: discrete
** Laplace P(z) proportional to exp(-|z| s / t) (Contract 3; s, t as
** rdt_laplace_params gives them), or, with s = 0, none because the
** counters are not released at all (a release that derives them from
** others). The description of a mechanism, public before any row. */
typedef struct rdt_noise_block {
  uint64_t n, s, t;
} rdt_noise_block;

/* 1 with probability exp(-m * n / d): m independent Bernoulli(exp(-n/d)),
** stopping at the first 0, so the expected work is at most
** min(m, 1 / (1 - exp(-n/d))) draws and nothing overflows. */
int rdt_bernoulli_exp_times(rdt_rng *rng, uint64_t m, uint64_t n, uint64_t d);

/* Lattice Laplace release of a real value (Contract 3 extended to reals).
**   Neighbouring relation: the caller's; sensitivity: |value - value'| <=
**   `sensitivity` (a public bound); privacy: eps-DP for that pair.
**   The value is rounded to the public grid g = 2^grid_log2 (x -> round(x/g)),
**   which moves neighbouring values at most floor(sensitivity/g) + 1 grid
**   steps apart; that integer is the sensitivity of the discrete Laplace
**   noise added in grid units. The output is (round(x/g) + Z) * g: a multiple
**   of g, and every multiple of g is reachable from every input, so no low
**   bit can tell inputs apart (Mironov 2012).
** Returns 0 (and leaves *out unset) when the parameters do not fit: value or
** sensitivity not finite, |value/g| >= 2^52, or more than 2^16 grid steps
** of sensitivity (choose a coarser grid). */
int rdt_lattice_laplace(rdt_rng *rng, double value, double sensitivity, rdt_eps eps, int grid_log2,
                        double *out);

#endif
