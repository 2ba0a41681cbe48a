/*
** unit.h - the privacy unit of a release: contribution bounding (at most k
** rows per unit, the rest dropped at random), group privacy, and how one ε is
** divided between private bounds (bounds.h) and the model. No SQLite.
**
** Privacy contract:
**   1. Neighbouring relation. Without "privacy_unit" the unit is one row:
**      add or remove one row. With "privacy_unit": u, add or remove one unit:
**      every row whose u is one value (values equal as SQL's GROUP BY compares
**      them). A row whose u is NULL is dropped: it cannot be attributed to a
**      unit, and counting each as its own unit would let one person's
**      unattributed rows escape the cap.
**   2. Contribution bounding. Of a unit's n rows, min(n, k) are kept ("k" is
**      "max_rows_per_unit"): a uniformly random subset, drawn by selection
**      sampling (Knuth's Algorithm S: keep the next row with probability
**      room / rows left, exact rational coins from rng.h), independently of
**      the values and of every other unit.
**   3. Coupling. Let D' be D plus one unit v. Give every unit of D the same
**      coins in both; the bounded inputs then differ by exactly v's kept
**      rows: at most k rows added.
**   4. Group privacy. A mechanism that is ε_r-DP under add/remove one row is
**      k·ε_r-DP under add/remove k rows, so by (3) bounding then running it is
**      k·ε_r-DP under add/remove one unit. Every mechanism of a release
**      therefore runs with its unit-level budget divided by k (rounded down
**      on the 2^-32 grid of noise.h): the sensitivity of every query it makes
**      is scaled by k. This holds whatever the mechanism (Laplace counters,
**      permute-and-flip, DiPriMe's sampling), which is why it is the route
**      taken rather than rescaling each sensitivity by hand.
**   5. Division of ε (sequential composition over the passes of a release).
**      With m features of private bounds, each of their 2m quantile releases
**      gets ε_q = floor(share·ε / (2mk)) per row, so the bounds spend
**      ε_bounds = 2mk·ε_q at the unit level; the model gets ε_model =
**      ε − ε_bounds, i.e. floor(ε_model / k) per row. ε_bounds + ε_model = ε
**      exactly (rdt_info's epsilon_division), and what is spent is at most ε.
**   6. Memory: two counters, whatever the number of units; the caller hands
**      the rows grouped by unit with each unit's row count and each row's
**      position in it (SQLite sorts them: sql_unit.c).
*/
#ifndef RDT_UNIT_H
#define RDT_UNIT_H

#include <stdint.h>

#include "noise.h"
#include "rng.h"
#include "schema.h"

#define RDT_UNIT_MAX_ROWS 100000 /* largest "max_rows_per_unit" */
#define RDT_BOUNDS_DEFAULT_SHARE 0.1 /* "bounds_share": ε share of the private bounds */
#define RDT_BOUNDS_MIN_SHARE 0.01
#define RDT_BOUNDS_MAX_SHARE 0.9

/* The unit facts of a release (stored in the model's UNIT section). All
** zero except max_rows = 1 when the unit is a row and no bound is private. */
typedef struct rdt_unit {
  char column[RDT_MAX_NAME + 1]; /* the unit column; "": one row */
  uint32_t max_rows;             /* k, rows kept per unit (1 for a row) */
  uint32_t n_private;            /* numeric features whose bounds are estimated privately */
  uint8_t private_bounds[(RDT_MAX_FEATURES + 7) / 8]; /* bit j: feature j */
  rdt_eps eps_total;             /* the release's ε at the unit level (what a ledger is charged) */
  rdt_eps eps_bounds;            /* the part spent on private bounds, unit level */
  rdt_eps eps_quantile;          /* per row: each of the 2m quantile releases */
} rdt_unit;

/* Whether a release has unit facts: a unit column or a private bound. */
int rdt_unit_active(const rdt_unit *u);
int rdt_unit_is_private(const rdt_unit *u, uint32_t feature);
void rdt_unit_set_private(rdt_unit *u, uint32_t feature);

/* Contract 5: from the whole ε (unit level), u's k and m, and the share of
** the bounds (ignored when m = 0), fills u's budgets and *model_row, the
** model's ε per row. Returns 0 when a budget rounds to 0 (ε too small). */
int rdt_unit_divide(rdt_unit *u, rdt_eps total, double share, rdt_eps *model_row);
/* Whether stored facts agree with contract 5 and a model's per-row ε, and
** name numeric features of the schema only (decoders: the bytes may be
** hostile). */
int rdt_unit_check(const rdt_unit *u, rdt_eps model_row, const rdt_schema *s);

/* Contract 2: selection sampling over units handed in order. */
typedef struct rdt_unit_bound {
  uint64_t k;
  uint64_t rows; /* the current unit's row count */
  uint64_t left; /* its rows not seen yet */
  uint64_t room; /* rows it may still keep */
  rdt_rng rng;
} rdt_unit_bound;

/* k >= 1; seed_key and purpose as rdt_rng_init_for (NULL: the OS CSPRNG). */
void rdt_unit_bound_init(rdt_unit_bound *b, uint64_t k, const unsigned char *seed_key, const char *purpose);
/* The row at `position` (1, 2, ...) of a unit of `rows` rows. Returns 1
** (keep), 0 (drop), or -1 when the positions do not run 1 .. rows unit after
** unit: the rows are not grouped as promised, and the caller must fail
** closed (a unit could otherwise contribute more than k rows). */
int rdt_unit_bound_row(rdt_unit_bound *b, uint64_t position, uint64_t rows);
/* Wipes the coins' stream. */
void rdt_unit_bound_clear(rdt_unit_bound *b);

#endif
