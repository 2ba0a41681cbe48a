/*
** matrix.h - matrix random forests: multiway random trees whose leaf counts
** are answered all together by the matrix mechanism (Tajima, Wu and
** Houmansadr, AAAI 2025), so that more trees cost no extra noise.
**
** Privacy contract of a matrix forest ("noise": "matrix"):
**   1. Structure: every node draws, uniformly, one attribute not used on its
**      path and has one child per bin of it (numeric: "bins" equal-width
**      public bins; categorical: one per listed value). Drawn from the schema
**      and a structure key only; no row is read.
**   2. Neighbouring relation: add or remove one row.
**   3. The noise strategy is chosen from the structure alone, by the expected
**      per-leaf variance of each candidate (rdt_matrix_choose), so the choice
**      costs no privacy.
**   4. Strategy LEAF: one tree's leaf counters have L1 sensitivity 1; all
**      trees see every row, so the forest's sensitivity is k and every leaf
**      counter gets discrete Laplace noise of scale k/eps. With "partition"
**      every row is counted in one tree drawn at random (independently of the
**      row), the sensitivity is 1 and the scale 1/eps.
**   5. Table strategies (IDENTITY, MARGINALS, GROUPED): tables g = 1..G, each
**      the contingency table (cell x class) of the rows over an attribute set
**      A_g. A row adds 1 to one counter of each table: L1 sensitivity 1 per
**      table. Table g gets discrete Laplace noise of scale 1/eps_g with
**      sum_g eps_g = eps exactly (budgets on the 2^-32 grid, noise.h), so
**      releasing all tables is eps-DP by sequential composition.
**   6. Every leaf whose path fixes attribute set S is answered by a table
**      with A_g containing S, as the sum of the noisy cells that agree with
**      the path: post-processing. The tables themselves are not stored.
**   7. Training state (tables or leaf counters) is additive: two states on
**      the same structure merge by adding counters, before noise.
**
** Default trees (no "trees", private model): the tau in {128, 64, 32, 16,
** 10} with the largest tau / (expected error of its best strategy), all
** computed from the structure (no privacy cost; see matrix.c).
**
** Expected error, in units of 2/eps^2 (the variance of a Laplace counter of
** scale 1/eps), averaged over the L leaves of the forest (per class counter):
**   LEAF       k^2 (1 with partition);
**   IDENTITY   mean over leaves of m_l, the number of cells of the table over
**              every used attribute that lie inside leaf l;
**   MARGINALS  one table per distinct path set S (L_S leaves), eps_S
**              proportional to L_S^(1/3): (sum_S L_S^(1/3))^3 / L;
**   GROUPED    path sets merged greedily into tables over their union while
**              that lowers the error: with W_g = sum of m_l over the leaves
**              of table g, eps_g proportional to W_g^(1/3), the error is
**              (sum_g W_g^(1/3))^3 / L. IDENTITY and MARGINALS are its two
**              extremes (one table; one table per set).
*/
#ifndef RDT_MATRIX_H
#define RDT_MATRIX_H

#include <stdint.h>

#include "../digest.h"
#include "forest.h"

#define RDT_MNODE_LEAF 0xFFFFFFFFu
#define RDT_MATRIX_ROW_BINS RDT_MAX_FEATURES
#define RDT_MATRIX_DEFAULT_BINS 4
#define RDT_MATRIX_MAX_BINS 1024
#define RDT_MATRIX_DEFAULT_TREES 128
#define RDT_MATRIX_DEFAULT_DEPTH 4
/* Leaf counters (leaves x classes) of a matrix forest: 256 MiB at most. */
#define RDT_MATRIX_MAX_COUNTERS ((uint64_t)1 << 25)
/* Counters of all tables together (cells x classes), so 1 GiB at most. */
#define RDT_MATRIX_MAX_TABLE_COUNTERS ((uint64_t)1 << 27)
/* Exact tables kept in non-private models: 32 MiB at most. */
#define RDT_MATRIX_MAX_EXACT_COUNTERS ((uint64_t)1 << 22)
/* Greedy grouping is tried when there are at most this many path sets. */
#define RDT_MATRIX_MAX_GREEDY_SETS 256

typedef enum {
  RDT_STRATEGY_AUTO = 0,
  RDT_STRATEGY_LEAF = 1,
  RDT_STRATEGY_IDENTITY = 2,
  RDT_STRATEGY_MARGINALS = 3,
  RDT_STRATEGY_GROUPED = 4
} rdt_strategy;
#define RDT_N_STRATEGIES 4

const char *rdt_strategy_name(uint32_t strategy);

/* One node of a multiway tree. Nodes of a tree are in breadth-first order;
** the children of an internal node are consecutive, one per bin of its
** attribute, starting at `next`. A leaf has feature RDT_MNODE_LEAF and
** `next` = its index among the tree's leaves. */
typedef struct rdt_mnode {
  uint32_t feature;
  uint32_t next;
} rdt_mnode;

/* One measured table: the contingency table over attrs (sorted). */
typedef struct rdt_mtable {
  uint32_t n_attrs;
  uint32_t *attrs;
  uint64_t *stride;    /* cells between consecutive bins of attrs[i] */
  uint64_t cells;      /* product of the attributes' bins */
  uint64_t offset;     /* first cell in rdt_matrix.cells */
  rdt_eps eps;
  double weight;       /* W_g: sum over its leaves of the cells inside them */
} rdt_mtable;

typedef struct rdt_matrix {
  uint32_t *domain;            /* per feature: number of bins */
  uint32_t *node_start;        /* trees + 1 offsets into nodes */
  uint32_t *leaf_start;        /* trees + 1 offsets into the forest's leaves */
  rdt_mnode *nodes;
  uint32_t strategy;           /* the strategy used */
  double factor[RDT_N_STRATEGIES]; /* expected error of each, units 2/eps^2; INFINITY: not available */
  double expected_variance;    /* of one released leaf counter, with the exact budgets; 0 without noise */
  uint32_t n_tables;
  rdt_mtable *tables;
  /* Non-private models only: the exact table over every used attribute,
  ** kept (section CELL) for DP batch prediction when it has at most
  ** RDT_MATRIX_MAX_EXACT_COUNTERS counters; exact_cells NULL otherwise. */
  rdt_mtable exact;
  int64_t *exact_cells;
  /* Training only (not stored in the model). */
  uint32_t *leaf_table;        /* per leaf: the table answering it */
  int64_t *cells;              /* exact counters of every table, cell-major then class */
  uint64_t n_cells;
  uint32_t *row_bins;          /* scratch: one row's bins */
  int has_partition_rng;
  rdt_rng partition_rng;       /* chooses each row's tree under "partition" */
} rdt_matrix;

/* Rows carried down the trees while they are drawn (RDT#): `leaf` gets,
** at every leaf in breadth-first order, the indexes of the rows of x that
** reach it (it may reorder them); returning 0 stops the drawing. */
typedef struct rdt_mrows {
  const double *x;   /* n cleaned feature vectors */
  uint64_t n;
  int (*leaf)(void *ctx, rdt_rng *rng, uint32_t *rows, uint32_t k);
  void *ctx;
} rdt_mrows;

/* Draw f->config.trees multiway trees breadth-first (children of a node
** consecutive; contract item 1) into f->matrix, whose bins and domains are
** set: at most max_leaves leaves in all; rows may be NULL. Returns 1, or 0
** with a message in err (empty: the leaf callback failed and says why). */
int rdt_matrix_draw(rdt_forest *f, rdt_rng *rng, uint64_t max_leaves, const rdt_mrows *rows, char *err, size_t en);
/* Leaves of the whole forest. */
uint64_t rdt_matrix_leaves(const rdt_forest *f);
/* Draw the structure, choose the strategy (or check the requested one) and
** allocate the training state. Called by rdt_forest_init for matrix
** forests. Returns 1, or 0 with a message in err (too large, out of
** memory, budget too small for the tables). */
/* The forest's view of matrix forests (forest.h); set with f->matrix. */
extern const rdt_multiway rdt_matrix_multiway;

int rdt_matrix_init(rdt_forest *f, rdt_rng *structure, char *err, size_t err_size);
void rdt_matrix_free(rdt_matrix *m);
/* Bin of every attribute for a cleaned feature vector (rdt_sql_features):
** numeric: floor((x - min) / (max - min) * bins), the maximum in the last
** bin; categorical: the value's code, and an unlisted value or NULL counts
** as the first listed value (a documented, data-independent rule). */
void rdt_matrix_row_bins(const rdt_forest *f, const double *xs, uint32_t *bins);
/* The bin of feature j's cleaned value x (the rule above). */
uint32_t rdt_matrix_bin(const rdt_forest *f, uint32_t j, double x);
/* Leaf (forest-wide index) of tree t for a row's bins. */
uint32_t rdt_matrix_leaf(const rdt_forest *f, uint32_t t, const uint32_t *bins);
/* Count one row of class cls in the training state. */
void rdt_matrix_train_row(rdt_forest *f, const double *xs, uint32_t cls);
/* Contract 7 (forest.h's rdt_forest_state): the training state as spans of
** counters (3), or 0 when it has none that add ("partition"). */
uint32_t rdt_matrix_state(rdt_forest *f, rdt_span *out, uint32_t max);
/* The drawn structure and the strategy's tables, into a digest (forest.h's
** rdt_forest_digest). */
void rdt_matrix_digest(const rdt_forest *f, rdt_digest *d);
/* Noise the strategy's counters (private models) and derive every leaf's
** counters from them into f->counts. Returns 0 on allocation failure. */
int rdt_matrix_release(rdt_forest *f, rdt_rng *noise);
/* out (all leaves x classes) = every leaf's sum of the cells of its table
** that agree with its path: tables[leaf_table[l]] (tables[0] when
** leaf_table is NULL) over cells. Returns 0 on allocation failure. */
int rdt_matrix_derive(const rdt_forest *f, const rdt_mtable *tables, const uint32_t *leaf_table,
                      const int64_t *cells, int64_t *out);
/* Fill a table's attributes (those with in[j] set), strides and size.
** Returns 0 on allocation failure or when it exceeds max_cells cells. */
int rdt_matrix_table_init(const rdt_forest *f, rdt_mtable *tb, const uint8_t *in, uint64_t max_cells);
/* Cell of a table for a row's bins. */
uint64_t rdt_matrix_cell(const rdt_mtable *tb, const uint32_t *bins);
/* Validate a decoded structure (breadth-first order, bins, paths). */
int rdt_matrix_check_structure(const rdt_forest *f);
/* Recompute per-feature domains from the schema and bins. */
int rdt_matrix_domains(rdt_forest *f);

#endif
