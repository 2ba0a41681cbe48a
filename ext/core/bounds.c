/* bounds.c - private bounds on a grid of every scale; see bounds.h. */
#include "bounds.h"

#include <math.h>

double rdt_bounds_to_grid(double x) {
  double a = fabs(x), g;
  if (a < ldexp(1, RDT_BOUNDS_E0)) {
    g = ldexp(a, -RDT_BOUNDS_E0);
  } else if (!(a < ldexp(1, RDT_BOUNDS_E1))) {
    g = RDT_BOUNDS_G;
  } else {
    int e;
    double f = 2 * frexp(a, &e); /* a = f·2^(e-1), 1 <= f < 2: exact */
    g = (double)(e - 1 - RDT_BOUNDS_E0 + 1) + (f - 1);
  }
  return x < 0 ? -g : g;
}

double rdt_bounds_from_grid(double t) {
  double u = fabs(t), a;
  if (u >= RDT_BOUNDS_G) u = RDT_BOUNDS_G;
  if (u < 1) {
    a = ldexp(u, RDT_BOUNDS_E0);
  } else if (u >= RDT_BOUNDS_G) {
    a = ldexp(1, RDT_BOUNDS_E1);
  } else {
    double whole = floor(u);
    a = ldexp(1 + (u - whole), (int)whole - 1 + RDT_BOUNDS_E0);
  }
  return t < 0 ? -a : a;
}

int rdt_bounds_init(rdt_median *m) {
  return rdt_median_init(m, -RDT_BOUNDS_G, RDT_BOUNDS_G, 2u * RDT_BOUNDS_G * RDT_BOUNDS_CELLS_PER_BINADE);
}

void rdt_bounds_add(rdt_median *m, double x) { rdt_median_add(m, rdt_bounds_to_grid(x)); }

int rdt_bounds_release(const rdt_median *m, rdt_rng *rng, rdt_eps eps_quantile, double *min, double *max) {
  uint32_t lo, hi;
  if (!rdt_median_release_cell(m, rng, eps_quantile, RDT_BOUNDS_LOW, &lo) ||
      !rdt_median_release_cell(m, rng, eps_quantile, RDT_BOUNDS_HIGH, &hi))
    return 0;
  if (lo > hi) { /* rule 4: the draws crossed */
    uint32_t c = lo;
    lo = hi;
    hi = c;
  }
  /* Cell edges are multiples of 1/32 in t: exact doubles, mapped exactly;
  ** b > a, so max > min (finite: |a|, |b| <= 2^48). */
  double width = 1.0 / RDT_BOUNDS_CELLS_PER_BINADE;
  double a = rdt_bounds_from_grid(-RDT_BOUNDS_G + lo * width);
  double b = rdt_bounds_from_grid(-RDT_BOUNDS_G + (hi + 1) * width);
  double ext = RDT_BOUNDS_FENCE * (b - a); /* rule 4: Tukey's fences */
  *min = a - ext;
  *max = b + ext;
  return 1;
}

double rdt_bounds_rows_needed(rdt_eps eps_quantile) {
  double q = (double)RDT_BOUNDS_LOW / RDT_QUANTILE_ONE, delta = q > 0.5 ? q : 1 - q, beta = 0.05;
  double cells = 2.0 * RDT_BOUNDS_G * RDT_BOUNDS_CELLS_PER_BINADE;
  return 2 * delta * log(2 * cells / beta) / (q * rdt_eps_to_double(eps_quantile));
}

double rdt_bounds_quartile_cells(double min, double max) {
  /* min = a - f w, max = b + f w, w = b - a: so w = (max - min) / (1 + 2 f). */
  double w = (max - min) / (1 + 2 * RDT_BOUNDS_FENCE), a = min + RDT_BOUNDS_FENCE * w, b = max - RDT_BOUNDS_FENCE * w;
  return round((rdt_bounds_to_grid(b) - rdt_bounds_to_grid(a)) * RDT_BOUNDS_CELLS_PER_BINADE);
}
