/*
** median.h - an eps-DP quantile (median by default) of one numeric column
** within public bounds, on a public grid.
**
** Privacy contract:
**   1. Neighbouring relation: add or remove one row.
**   2. Values are clamped into the public [lo, hi]; the range is cut into
**      `cells` equal cells. The output is the centre of one cell: a point of
**      a public lattice, so no low-order bit depends on the data.
**   3. Cell c scores u(c) = -|(1-q)*L(c) - q*R(c)|, L(c) = rows left of the
**      cell, R(c) = rows right of it (q = a / 2^16). One row moves L or R of
**      any cell by at most 1, so the sensitivity is max(a, 2^16 - a) in these
**      integer units (2^15 for the median, i.e. 1/2 in row units).
**   4. The cell is chosen by permute-and-flip with exact coins (select.h):
**      eps-DP. With equal-length cells this is the exponential mechanism
**      whose base measure weights every interval by its length (Smith 2011),
**      discretised on the public grid.
**   5. Memory is O(cells), independent of the number of rows (one pass).
**
** Why not the rule printed in the DiPriMe paper (pick rank j with
** probability ∝ exp(-eps |N - 2j| / 2), then a uniform value between the j-th
** and (j+1)-th sorted values): it ignores the lengths of the intervals, so it
** is not eps-DP for any eps. With D = {0.5} and D' = {0.5, 0.5 + d} in
** [0, 1], the output lands in (0.5, 0.5 + d) with probability about d/2 on
** D but at least about 1/6 on D' (the short interval is picked with a
** rank probability that does not shrink with d): a ratio >= 1/(3d), unbounded
** as d -> 0. tests/audit.c runs that rule as the broken twin of this one.
*/
#ifndef RDT_MEDIAN_H
#define RDT_MEDIAN_H

#include <stdint.h>

#include "noise.h"
#include "rng.h"

#define RDT_MEDIAN_MAX_CELLS (1u << 24)
#define RDT_QUANTILE_ONE 65536u

typedef struct rdt_median {
  double lo, hi;
  uint32_t cells;
  int64_t *hist;   /* rows per cell */
} rdt_median;

/* Returns 0 on bad parameters (lo >= hi, not finite, cells out of range) or
** allocation failure. */
int rdt_median_init(rdt_median *m, double lo, double hi, uint32_t cells);
void rdt_median_free(rdt_median *m);
/* Count one value (NaN must be filtered by the caller; others are clamped). */
void rdt_median_add(rdt_median *m, double x);
/* Cell index of a (clamped) value. */
uint32_t rdt_median_cell(const rdt_median *m, double x);
/* The chosen cell's centre; quantile = a / 2^16 with 0 < a < 2^16.
** Returns 0 if the parameters do not fit or memory runs out. */
int rdt_median_release(const rdt_median *m, rdt_rng *rng, rdt_eps eps, uint32_t quantile_a, double *out);
/* The same release as the chosen cell's index (the centre is its function). */
int rdt_median_release_cell(const rdt_median *m, rdt_rng *rng, rdt_eps eps, uint32_t quantile_a, uint32_t *cell);

#endif
