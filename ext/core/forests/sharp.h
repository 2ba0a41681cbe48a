/*
** sharp.h - RDT#: public unlabeled rows shape and strengthen a private forest
** (Jagannathan, Monteleoni and Pillaipakkamnatt, Figures 3-5).
**
** Privacy contract of an RDT# model ("algorithm": "rdt#"):
**   1. Neighbouring relation: add or remove one PRIVATE labeled row (a row of
**      the aggregate's input). The public rows (the rows of "public_query")
**      are not protected: they are public by the curator's declaration, and
**      the model contains some of them verbatim (the centres).
**   2. Structure: every tree draws, per node, an attribute not used on its
**      path (multiway: one child per bin, as matrix.h); at each leaf,
**      ceil(cells * |public rows at the leaf| / |public rows|) centres are
**      drawn uniformly among the public rows reaching it; a leaf no public row
**      reaches gets one centre without coordinates. Schema, public rows and a
**      structure key only: no private row is read.
**   3. Primary ensemble (trees [0, p)): a private row adds 1 to one class
**      counter of one centre (the nearest, in its leaf) in each of the p
**      trees: L1 sensitivity p. Every primary counter gets discrete Laplace
**      noise of scale p/eps: eps-DP.
**   4. The public rows are labelled by the noisy primary ensemble and the t
**      secondary trees count those labels exactly: post-processing of (3)
**      and public data, so no further eps.
**   5. Prediction is post-processing.
**   6. Timing: every private row costs the same work whatever leaf it
**      reaches. In each primary tree its nearest centre is searched over
**      scan_width entries, the most centres of any primary leaf (public:
**      structure and centres come from public rows only); entries past the
**      leaf's own centres read other centres with the same arithmetic and are
**      masked out of a branch-free minimum. Same centre chosen as
**      rdt_sharp_slot (the first nearest).
**
** Distance to a centre (documented rule): the sum over features of
** |x - c| / (max - min) for numeric features and [x != c] for categorical
** ones, on cleaned values (forest.h); ties go to the first centre.
*/
#ifndef RDT_SHARP_H
#define RDT_SHARP_H

#include <stdint.h>

#include "forest.h"

#define RDT_SHARP_DEFAULT_TREES 5
#define RDT_SHARP_MAX_AUTO_TREES 10
#define RDT_SHARP_SIGNAL_TO_NOISE 5.0
#define RDT_SHARP_DEFAULT_SECONDARY 200
#define RDT_SHARP_DEFAULT_CELLS 10
#define RDT_SHARP_MAX_CELLS 1000000
#define RDT_SHARP_MAX_PUBLIC_ROWS 10000000
#define RDT_SHARP_MAX_QUERY 4096

typedef struct rdt_sharp {
  uint64_t public_rows;   /* rows of the public query that shaped the trees */
  uint64_t scan_width;    /* most centres of any primary leaf (contract item 6; set by rdt_sharp_build, not stored) */
  uint32_t *slot_start;   /* per leaf (forest-wide) + 1: its centres' slots */
  double *centres;        /* per slot, n_features cleaned values; NaN for a leaf without public rows */
} rdt_sharp;

/* The paper's depth rule h = min(floor(k/2), floor(log_b n) + 1), k the
** number of features, b their mean number of bins, n a public row count;
** at least 1. */
uint32_t rdt_sharp_depth(const rdt_schema *s, uint32_t bins, double n);
/* Default p (no "trees"): the paper fixes p = 5, but a primary counter
** has noise of scale p/eps while a tree's leaves share about n rows, so on
** small labeled sets fewer trees win (measured in scripts/sharp_accuracy.py).
** p = round(eps * n / (RDT_SHARP_SIGNAL_TO_NOISE * b^depth)) in
** [1, RDT_SHARP_MAX_AUTO_TREES], b the mean number of bins, n public: the
** rows of the leaves then hold about RDT_SHARP_SIGNAL_TO_NOISE noise scales.
** Non-private models take RDT_SHARP_DEFAULT_TREES. */
uint32_t rdt_sharp_primary(const rdt_schema *s, uint32_t bins, uint32_t depth, double n, double eps);
/* Draw the p + t trees and their centres from the public rows (pub: n_pub
** cleaned feature vectors) and allocate the counters. Returns 1, or 0 with
** a message in err. */
/* The forest's view of RDT# forests (forest.h); set with f->sharp. */
extern const rdt_multiway rdt_sharp_multiway;

int rdt_sharp_build(rdt_forest *f, const double *pub, uint64_t n_pub, char *err, size_t err_size);
void rdt_sharp_free(rdt_sharp *s);
/* Counter slot (forest-wide) of tree t for a cleaned row (bins: its bins). */
uint64_t rdt_sharp_slot(const rdt_forest *f, uint32_t t, const double *xs, const uint32_t *bins);
/* The same slot for a private row, with the same work for every leaf
** (contract item 6; needs a forest from rdt_sharp_build). */
uint64_t rdt_sharp_private_slot(const rdt_forest *f, uint32_t t, const double *xs, const uint32_t *bins);
/* Count one private labeled row in the primary trees (rdt_sharp_private_slot). */
void rdt_sharp_train_row(rdt_forest *f, const double *xs, uint32_t cls);
/* Contract items 3 and 4: noise on the primary counters (private models),
** then pseudo-label the public rows with the primary ensemble and count
** them in the secondary trees. Returns 0 on allocation failure. */
int rdt_sharp_release(rdt_forest *f, const double *pub, uint64_t n_pub, rdt_rng *noise);
/* Validate decoded centres against the schema. */
int rdt_sharp_check(const rdt_forest *f);
/* Slots (centres) of the whole forest. */
uint64_t rdt_sharp_slots(const rdt_forest *f);

#ifdef RDT_COUNT_WORK
/* Tests only: distances to centres computed so far. */
extern _Atomic uint64_t rdt_sharp_distance_evals;
#endif

#endif
