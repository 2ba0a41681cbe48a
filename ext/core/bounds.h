/*
** bounds.h - private bounds of a numeric feature ("bounds": "private"):
** two DP quantiles on a public grid that spans every scale. No SQLite.
**
** Privacy contract:
**   1. Neighbouring relation: add or remove one row of the input the caller
**      hands in (with a privacy unit, the bounded rows: unit.h turns this
**      into add/remove one unit).
**   2. The public grid. A value x maps to t = sign(x)·g(|x|), g piecewise
**      linear and increasing: g(a) = a / 2^E0 below 2^E0, and for
**      a = f·2^e (1 <= f < 2, E0 <= e < E1) g(a) = e - E0 + 1 + (f - 1);
**      |x| >= 2^E1 (infinities too) clamps to g = E1 - E0 + 1 = G. The
**      t-range [-G, G] is cut into RDT_BOUNDS_CELLS_PER_BINADE equal cells
**      per unit of t: each cell is an equal-width interval of x inside one
**      binade (about 3% of |x| wide), so one grid serves ages, incomes and
**      concentrations alike. The grid is fixed: it never depends on the rows.
**   3. Two quantile releases of median.h on that grid (permute-and-flip,
**      sensitivity max(a, 2^16 - a) in its integer units: ε_q-DP each,
**      audited in tests/audit.c): the quartiles, RDT_BOUNDS_LOW and
**      RDT_BOUNDS_HIGH. Both read the same counts: 2·ε_q for the pair
**      (sequential composition), 2m·ε_q for m private features (unit.h,
**      contract 5). Quartiles, not extreme quantiles: a quantile q is found
**      among the grid's thousands of empty cells only when about q·n rows
**      outweigh log(cells)/ε_q, and at q = 0.05 that failed on 20,000 rows
**      (measured during development), at q = 0.25 it did not.
**   4. From the two chosen cells (a data-independent rule on released
**      values only): a = the lower edge of the lower cell, b = the upper
**      edge of the higher one (so b > a, also when the draws cross or
**      coincide, e.g. on an empty input), then Tukey's fences: min = a -
**      1.5 (b - a), max = b + 1.5 (b - a) (about ±2.7 σ for normal data).
**   5. Values the caller has no number for (NULL, BLOB, non-numeric TEXT,
**      NaN) are not counted; every number is (clamped by rule 2).
**   6. Memory: 2·G·RDT_BOUNDS_CELLS_PER_BINADE counters (35 KB) per feature.
**   7. When to trust them (for the curator; no ε). A quartile q lands off
**      the data (in a cell below every value or above every value) only if
**      permute-and-flip picks a cell whose utility gap is at least q·n rows
**      (n: rows with a number); a cell of gap g is accepted with probability
**      exp(-ε_q g / (2Δ)), Δ = max(q, 1 - q) rows, and is chosen at most
**      that often, so P(off the data) <= K exp(-ε_q q n / (2Δ)) over the K
**      cells. Both quartiles stay on the data with probability >= 1 - β
**      once n >= 2Δ ln(2K/β) / (q ε_q): rdt_bounds_rows_needed, β = 0.05.
**      Below it the bounds may "explode" (land anywhere on the grid).
**   8. A release is "collapsed" when its quartiles fell in one cell or two
**      adjacent ones (rdt_bounds_quartile_cells <= 2): half the rows lie
**      within about 6% of one value (a 0/1 column mostly 0, say), and
**      clamping to [min, max] squeezes the rest onto the edges.
*/
#ifndef RDT_BOUNDS_H
#define RDT_BOUNDS_H

#include <stdint.h>

#include "median.h"
#include "noise.h"
#include "rng.h"

#define RDT_BOUNDS_E0 (-20) /* below 2^-20 (about 1e-6) the grid is linear down to 0 */
#define RDT_BOUNDS_E1 48    /* |x| >= 2^48 (about 2.8e14) is clamped */
#define RDT_BOUNDS_G (RDT_BOUNDS_E1 - RDT_BOUNDS_E0 + 1)
#define RDT_BOUNDS_CELLS_PER_BINADE 32
/* The quantiles, in the units of median.h (a / 2^16): 0.25 and 0.75. */
#define RDT_BOUNDS_LOW 16384u
#define RDT_BOUNDS_HIGH (RDT_QUANTILE_ONE - RDT_BOUNDS_LOW)
#define RDT_BOUNDS_FENCE 1.5 /* Tukey's fences: the quartile range widened by 1.5 of it each way */

/* t of rule 2 (x not NaN), and back. */
double rdt_bounds_to_grid(double x);
double rdt_bounds_from_grid(double t);

/* The counts of one feature on the grid (median.h's histogram). 0 when
** memory runs out. */
int rdt_bounds_init(rdt_median *m);
void rdt_bounds_add(rdt_median *m, double x);
/* Rules 3 and 4: 0 when the noise cannot be set up (nothing released). */
int rdt_bounds_release(const rdt_median *m, rdt_rng *rng, rdt_eps eps_quantile, double *min, double *max);

/* Rule 7: the rows with a number from which a feature's two quartiles stay
** on the data with probability at least 95% (a public function of eps). */
double rdt_bounds_rows_needed(rdt_eps eps_quantile);
/* Rule 8: how many grid cells the quartiles of a release [min, max] span
** (1: one cell; read back from the fences of rule 4, post-processing). */
double rdt_bounds_quartile_cells(double min, double max);

#endif
