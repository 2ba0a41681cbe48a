/* median.c - private quantile on a public grid; see median.h. */
#include "median.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"

int rdt_median_init(rdt_median *m, double lo, double hi, uint32_t cells) {
  memset(m, 0, sizeof *m);
  if (!isfinite(lo) || !isfinite(hi) || !(lo < hi) || !isfinite(hi - lo) || cells < 1 ||
      cells > RDT_MEDIAN_MAX_CELLS)
    return 0;
  m->hist = calloc(cells, sizeof *m->hist);
  if (!m->hist) return 0;
  m->lo = lo;
  m->hi = hi;
  m->cells = cells;
  return 1;
}

void rdt_median_free(rdt_median *m) {
  free(m->hist);
  memset(m, 0, sizeof *m);
}

uint32_t rdt_median_cell(const rdt_median *m, double x) {
  if (!(x > m->lo)) return 0; /* also NaN, defensively */
  if (x >= m->hi) return m->cells - 1;
  double c = floor((x - m->lo) / (m->hi - m->lo) * m->cells);
  return c >= m->cells ? m->cells - 1 : (uint32_t)c;
}

void rdt_median_add(rdt_median *m, double x) { m->hist[rdt_median_cell(m, x)]++; }

int rdt_median_release_cell(const rdt_median *m, rdt_rng *rng, rdt_eps eps, uint32_t quantile_a, uint32_t *cell) {
  if (quantile_a == 0 || quantile_a >= RDT_QUANTILE_ONE) return 0;
  uint32_t n = m->cells;
  int64_t *u = malloc((size_t)n * sizeof *u);
  size_t *order = malloc((size_t)n * sizeof *order);
  if (!u || !order) {
    free(u);
    free(order);
    return 0;
  }
  int64_t total = 0;
  for (uint32_t c = 0; c < n; c++) total += m->hist[c];
  /* Integer utilities: -|(2^16 - a) * L - a * R| (median.h, item 3). */
  int64_t left = 0, b = (int64_t)RDT_QUANTILE_ONE - (int64_t)quantile_a, a = (int64_t)quantile_a;
  for (uint32_t c = 0; c < n; c++) {
    int64_t right = total - left - m->hist[c];
    int64_t d = b * left - a * right;
    u[c] = d < 0 ? d : -d;
    left += m->hist[c];
  }
  uint64_t sensitivity = (uint64_t)(a > b ? a : b);
  long pick = rdt_permute_and_flip(rng, u, n, eps, sensitivity, 0, order);
  free(u);
  free(order);
  if (pick < 0) return 0;
  *cell = (uint32_t)pick;
  return 1;
}

int rdt_median_release(const rdt_median *m, rdt_rng *rng, rdt_eps eps, uint32_t quantile_a, double *out) {
  uint32_t pick;
  if (!rdt_median_release_cell(m, rng, eps, quantile_a, &pick)) return 0;
  /* Centre of the cell: a public lattice point. */
  *out = m->lo + (m->hi - m->lo) * (((double)pick + 0.5) / m->cells);
  return 1;
}
