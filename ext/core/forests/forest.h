/*
** forest.h - random decision tree (RDT) forests: structure, training state,
** noise and prediction. No SQLite here.
**
** Privacy contract of an RDT forest (Bojarski et al., Algorithm 2):
**   1. The structure (attributes, thresholds, categories at every node) is
**      drawn from the public schema and a structure key only; no row is read.
**   2. Neighbouring relation: add or remove one row.
**   3. A row adds 1 to exactly one class counter of one leaf in each tree, so
**      one tree's counters have L1 sensitivity 1 and the whole forest's k.
**   4. Every counter gets discrete Laplace noise of scale k/eps (noise.h),
**      so releasing all counters is eps-DP; the training state before noise
**      is never released.
**   5. Training state is additive: two states built on the same structure
**      from disjoint row sets merge by adding counters, before noise. Same
**      structure means same digest (rdt_forest_digest: the drawn nodes, the
**      schema with its bounds, every option the counters depend on), not
**      merely the same model id.
**   6. Prediction is post-processing of the released counters.
*/
#ifndef RDT_FOREST_H
#define RDT_FOREST_H

#include <stdint.h>
#include <string.h>

#include "../cancel.h"
#include "../noise.h"
#include "../partial.h"
#include "../rng.h"
#include "../schema.h"
#include "../unit.h"

#define RDT_MAX_TREES 1024
#define RDT_MAX_DEPTH 30
#define RDT_MAX_COUNTERS ((uint64_t)1 << 28)
#define RDT_DEFAULT_TREES 10
#define RDT_DEFAULT_DEPTH 8
/* Automatic depth (no "depth", no "rows"): trees are grown to this depth and
** cut back after the pass to the depth a noisy row count calls for. */
#define RDT_AUTO_MAX_DEPTH 14
#define RDT_AUTO_MIN_DEPTH 2
/* A non-private RDT model without "depth" or "rows": a fixed depth (its
** structure must not depend on the rows: batch prediction's proof). */
#define RDT_NONPRIVATE_DEFAULT_DEPTH 10
#define RDT_AUTO_COUNT_SHARE 20 /* 1/20 of epsilon pays for the noisy count */
#define RDT_DIPRIME_DEFAULT_RHO 0.5
#define RDT_DIPRIME_DEFAULT_CANDIDATES 5
#define RDT_DIPRIME_DEFAULT_MAX_ROWS 2000000
#define RDT_DIPRIME_MAX_ROWS 100000000

/* MATRIX: multiway random trees with matrix-mechanism noise (matrix.h). */
/* SHARP: RDT# (sharp.h), multiway trees with centres from public rows. */
typedef enum { RDT_ALGO_RDT = 1, RDT_ALGO_DIPRIME = 2, RDT_ALGO_MATRIX = 3, RDT_ALGO_SHARP = 4 } rdt_algorithm;
typedef enum { RDT_TASK_CLASSIFICATION = 1, RDT_TASK_REGRESSION = 2 } rdt_task;
/* Where a numeric split draws its threshold (both data-independent):
** REACHABLE: in the interval the node's ancestors leave;
** GLOBAL: the paper's rule, anywhere in the public [min, max]; a threshold
**   outside the node's interval sends every row one way, which makes the
**   effective trees shallower (useful at the paper's large depths).
** Categorical splits are drawn among the codes that can reach the node in
** both modes. */
typedef enum { RDT_SPLITS_REACHABLE = 1, RDT_SPLITS_GLOBAL = 2 } rdt_split_domain;
/* WEIGHT: the class with the largest sum of leaf counters over the trees
** (the matrix paper's weight voting). */
typedef enum {
  RDT_VOTE_MAJORITY = 1,
  RDT_VOTE_THRESHOLD = 2,
  RDT_VOTE_PROBABILISTIC = 3,
  RDT_VOTE_WEIGHT = 4
} rdt_vote;

/* Node kinds of a complete binary tree. */
typedef enum {
  RDT_SPLIT_NONE = 0,        /* nothing splittable: every row goes left */
  RDT_SPLIT_NUMERIC = 1,     /* x < value left, x >= value right */
  RDT_SPLIT_CATEGORY_EQ = 2, /* code == value left, anything else right */
  RDT_SPLIT_CATEGORY_SUBSET = 3 /* value holds the bits of a 64-bit mask:
                                 ** code left iff rdt_subset_member(mask, code) */
} rdt_split_kind;

/* How categorical attributes split (both data-independent):
** SUBSET: a uniformly random subset of the codes goes left (in reachable
**   mode redrawn until it separates the codes still reachable);
** ONE_VS_REST: one code goes left, every other right (the binary split of a
**   one-hot attribute). */
typedef enum { RDT_CATEGORICAL_SUBSET = 1, RDT_CATEGORICAL_ONE_VS_REST = 2 } rdt_categorical;

/* Membership of a code in the subset named by a 64-bit mask: bit `code` for
** codes below 64, one bit of a keyed mix above. */
uint32_t rdt_subset_member(uint64_t mask, uint32_t code);
double rdt_mask_to_value(uint64_t mask);
/* A uniformly random mask that sends at least one and not all of the r >= 2
** codes (a node's reachable codes) left. */
uint64_t rdt_subset_separating_mask(rdt_rng *rng, const uint32_t *codes, uint32_t r);
uint64_t rdt_value_to_mask(double value);

typedef struct rdt_node {
  double value;
  uint32_t feature;
  uint32_t kind;
} rdt_node;

/* A node prepared for branch-free traversal, 16 bytes so four share a cache
** line: a row goes LEFT iff lo <= x < hi. Numeric threshold t: [-inf, t);
** category code v: [v - 0.5, v + 0.5) (exact in float: codes < 2^16);
** no split: [-inf, +inf). */
typedef struct rdt_split {
  double hi;
  float lo;
  uint32_t feature;
} rdt_split;

/* A node prepared for the mixed walk, when every categorical split is on a
** feature of at most 64 codes: a row goes LEFT iff x < hi and bit
** rdt_mixed_code(x) of mask is set. Numeric threshold t: hi = t, mask all
** ones; categorical (one code or a subset): hi = +inf, mask = the codes that
** go left; no split: hi = +inf, mask all ones. One test for both kinds, no
** branch on the node's kind, so one categorical feature no longer sends the
** whole forest to the generic walk (24 bytes a node: depth-10 trees still
** fit in L1). */
typedef struct rdt_msplit {
  double hi;
  uint64_t mask;
  uint32_t feature;
} rdt_msplit;

/* The code of a cleaned value for the mixed walk: x itself for a
** categorical value (an integer code below 64); some value in [0, 63] for a
** numeric one, whose node mask is all ones. Branch-free and defined for
** every double: adding 2^52 puts an integer in [0, 2^52) in the low bits
** of the mantissa, and the low 6 bits are kept (no float-to-int conversion,
** which is undefined out of range). */
static inline uint32_t rdt_mixed_code(double x) {
  double y = x + 0x1p52;
  uint64_t bits;
  memcpy(&bits, &y, sizeof bits);
  return (uint32_t)bits & 63;
}

typedef struct rdt_config {
  rdt_algorithm algorithm;
  int is_private;          /* 0: epsilon null, exact counts */
  rdt_eps eps;
  uint32_t trees, depth;
  rdt_vote vote;
  rdt_split_domain splits;
  rdt_categorical categorical;
  rdt_task task;
  /* DiPriMe (algorithm 2) only; zero for RDT. */
  double rho;                /* share of each tree's eps spent on splits, in (0, 1) */
  uint32_t candidates;       /* K attributes tried per node */
  int partition;             /* 1: each tree on a disjoint random part of the rows */
  double target_min, target_max; /* regression: public bounds of the target */
  uint64_t max_rows;         /* rows DiPriMe may buffer (not stored in the model) */
  char ledger[129];          /* rdt_ledger table to charge, or "" (not stored in the model) */
  int auto_depth;            /* RDT: depth chosen after the pass from a noisy row count */
  rdt_eps eps_count;         /* ... the eps spent on that count (part of eps) */
  int64_t noisy_rows;        /* ... the released count (private) or exact count (non-private) */
  rdt_eps eps_query;         /* DiPriMe: eps of each median / selection query */
  rdt_eps eps_leaf;          /* DiPriMe: eps of each leaf release (half each for count and sum) */
  uint32_t bins;             /* matrix: equal-width bins of numeric attributes */
  uint32_t strategy;         /* matrix: requested noise strategy (rdt_strategy, 0 = auto) */
  int trees_auto;            /* matrix: no "trees": chosen from the structure (matrix.h) */
  uint32_t primary_trees;    /* RDT#: p, the trees with private counters (trees = p + secondary) */
  uint32_t cells;            /* RDT#: N_CELLS */
  char public_query[4096];   /* RDT#: the public rows' SELECT (not stored in the model) */
  /* RDT#: the tables public_query may read, each NUL-terminated, back to
  ** back (stored in the model from format 1.1). */
  char public_tables[1024];
  uint32_t public_tables_len;  /* bytes used, NULs included */
  char label[RDT_MAX_NAME + 1]; /* the label column's name (stored in the model unless "label": model.h) */
  uint64_t public_n;         /* RDT#: the "rows" option, n of the depth rule (0: count the public rows) */
  double keep_trees;         /* share of trees that vote (tree_selection.h); 1, or 0 in a model without KEPT: all */
  uint32_t threads;          /* training threads: 1, or 2 (train_worker.h); not stored in the model */
  /* The caller's stop request (cancel.h), polled while the structure is
  ** drawn, the noise added and the model encoded; NULL: never. Set by the
  ** trainer, not an option, not stored in the model. */
  rdt_cancel *cancel;
  int seeded;
  unsigned char seed_key[RDT_RNG_KEYBYTES]; /* master key derived from the seed */
  /* "structure_key" (a shard plan's): the structure is drawn from this key
  ** instead of the seed's or fresh OS bytes; the noise is not touched. */
  int keyed;
  unsigned char structure_key[RDT_RNG_KEYBYTES];
  /* The privacy unit and private bounds (unit.h): with them, eps above is
  ** the model's per-row share and unit.eps_total the whole release's ε. */
  rdt_unit unit;
} rdt_config;

struct rdt_matrix;
struct rdt_sharp;
struct rdt_digest;

typedef struct rdt_forest {
  rdt_schema schema;
  rdt_config config;
  unsigned char model_id[16];
  uint32_t n_internal;       /* per tree: 2^depth - 1, heap order */
  uint32_t n_leaves;         /* per tree: 2^depth */
  rdt_node *nodes;           /* trees * n_internal */
  rdt_split *splits;         /* the same nodes prepared (rdt_forest_index), NUMERIC/INTERVAL/GENERIC walks */
  rdt_msplit *msplits;       /* ... or prepared for the MIXED walk (then splits is NULL) */
  int walk_mode;             /* RDT_WALK_*: the cheapest node test this forest allows */
  double *cols;              /* training scratch: one group of rows, column-major (RDT training only) */
  int64_t *counts;           /* trees * n_leaves * n_classes (matrix: all leaves * n_classes) */
  struct rdt_matrix *matrix; /* multiway trees of a matrix or RDT# forest (matrix.h), else NULL */
  struct rdt_sharp *sharp;   /* RDT# centres (sharp.h), else NULL */
  const struct rdt_multiway *multiway; /* their operations, set with them; NULL for binary trees */
  char error[256];           /* why rdt_forest_init failed, when it was not memory */
  uint32_t format_minor;     /* decoded models: the minor format version read */
  /* Publisher's signature (sign.h): the last section of a signed model. */
  int is_signed;
  char *note;                /* publisher note, NUL-terminated (may be empty) */
  unsigned char public_key[32];
  unsigned char signature[64];
  /* Trees that vote (tree_selection.h): NULL when all do. */
  uint8_t *tree_kept;        /* per tree: 1 kept, 0 dropped */
  uint32_t n_kept;           /* trees that vote */
  /* Prediction tables derived from counts (rdt_forest_prepare). */
  double *theta;             /* trees * n_leaves * n_classes */
  uint16_t *leaf_vote;       /* argmax class, or RDT_LEAF_EMPTY */
} rdt_forest;

#define RDT_WALK_NUMERIC 1   /* numeric splits only: x < hi */
#define RDT_WALK_INTERVAL 2  /* no subset split: lo <= x < hi */
#define RDT_WALK_GENERIC 3   /* subset splits on features of more than 64 codes: test each node by its kind */
#define RDT_WALK_MIXED 4     /* categorical splits on features of at most 64 codes: rdt_msplit */

#define RDT_TRAIN_CHUNK 256 /* rows walked together by rdt_forest_train_batch */

#define RDT_LEAF_EMPTY 0xFFFF /* hence at most 65534 classes */

/* Released values per leaf: one counter per class, or for regression a
** noisy count and a noisy sum (in units of the target grid). */
#define RDT_REGRESSION_SLOTS 2
/* 2^-16 of the target range: the public grid of regression sums. */
#define RDT_TARGET_GRID_LOG2 16

static inline uint32_t rdt_config_slots(const rdt_config *c, uint32_t n_classes) {
  return c->task == RDT_TASK_REGRESSION ? RDT_REGRESSION_SLOTS : n_classes;
}
#define rdt_forest_slots(f) rdt_config_slots(&(f)->config, (f)->schema.n_classes)

/* Whether a configuration's structure (depth, splits) depends on the
** private rows: DiPriMe grows from them, automatic depth cuts back from a
** noisy count. Batch prediction needs a structure independent of them. */
static inline int rdt_config_structure_from_rows(const rdt_config *c) {
  return c->algorithm == RDT_ALGO_DIPRIME || c->auto_depth;
}

/* Counters a configuration needs, for checks made before any row is read.
** Returns 0 when it exceeds RDT_MAX_COUNTERS. */
uint64_t rdt_forest_counters(const rdt_config *c, uint32_t slots);

/* Multiway trees (matrix.c; RDT#: sharp.c) plug into the forest through
** this table, set by whoever allocates f->matrix / f->sharp, so forest.c
** calls them without knowing them (no include cycle). */
typedef struct rdt_multiway {
  void (*free)(rdt_forest *f);                         /* f->matrix, f->sharp */
  uint64_t (*total_leaves)(const rdt_forest *f);       /* counter slots, forest-wide */
  void (*train_row)(rdt_forest *f, const double *xs, uint32_t cls);
  /* The training state as spans of counters (rdt_forest_state), and the
  ** kind's structure into a digest (rdt_forest_digest). */
  uint32_t (*state)(rdt_forest *f, rdt_span *out, uint32_t max);
  void (*digest)(const rdt_forest *f, struct rdt_digest *d);
  double (*leaf_scale)(const rdt_forest *f);           /* Laplace scale of a leaf counter */
  /* The forest-wide leaf of every tree for the cleaned row xs. */
  void (*leaves)(const rdt_forest *f, const double *xs, uint32_t *leaf);
} rdt_multiway;

/* Makes a forest kind's structure from the structure key, once f holds its
** schema, configuration and model id; returns 0 on failure (err set, or
** empty for memory). Each kind names its own (forest_kind.h). */
typedef int (*rdt_structure_fn)(rdt_forest *f, rdt_rng *structure, char *err, size_t err_size);
/* rdt_forest_init with the structure made by `draw` (NULL: none yet, RDT#'s
** comes from the public rows). rdt_forest_init (forest_init.c) asks the
** kind for it. */
int rdt_forest_init_with(rdt_forest *f, rdt_schema *schema, const rdt_config *config, rdt_structure_fn draw);
/* RDT's structure: complete binary trees drawn from the structure key, and
** the scratch of the one-pass training walk (forest.h item 1). */
int rdt_forest_draw_binary(rdt_forest *f, rdt_rng *structure, char *err, size_t err_size);
/* DiPriMe's: complete binary trees allocated, their nodes grown from the
** rows later (diprime.c); the key is not used. */
int rdt_forest_alloc_binary(rdt_forest *f, rdt_rng *structure, char *err, size_t err_size);

/* Takes ownership of *schema (zeroed on return). Draws the structure.
** Returns 0 on failure (forest left freeable) with f->error set, or empty
** for an allocation failure; config->cancel can stop the draw (then
** f->error says so). */
int rdt_forest_init(rdt_forest *f, rdt_schema *schema, const rdt_config *config);
void rdt_forest_free(rdt_forest *f);

/* Map a row to the dense feature vector used by the trees. */
static inline double rdt_numeric_clean(const rdt_feature *ft, double x, int missing) {
  /* Data-independent rules: missing (NULL, NaN, non-numeric) -> midpoint of
  ** the public bounds (computed without overflow); everything else clamped
  ** into [min, max]. */
  if (missing || x != x) return ft->min / 2 + ft->max / 2;
  if (x < ft->min) return ft->min;
  if (x > ft->max) return ft->max;
  return x;
}

/* Derive f->splits or f->msplits (and f->walk_mode) from f->nodes.
** Returns 0 on allocation failure or when config.cancel stops it. */
int rdt_forest_index(rdt_forest *f);
/* Leaves of the whole forest (all trees). */
uint64_t rdt_forest_total_leaves(const rdt_forest *f);
/* Leaf index (within its tree) reached by xs in tree t. */
uint32_t rdt_forest_leaf(const rdt_forest *f, uint32_t t, const double *xs);
/* Count one row of class `cls` (0-based) in every tree. */
void rdt_forest_train_row(rdt_forest *f, const double *xs, uint32_t cls);
/* Count n_rows rows at once: xs holds n_rows * n_features values (row-major)
** and cls their classes. Same result as n_rows calls of train_row, faster. */
void rdt_forest_train_batch(rdt_forest *f, const double *xs, const uint32_t *cls, uint32_t n_rows);
/* Item 5: the exact training state as at most max spans of counters (RDT:
** the leaf counters; a multiway kind: its own), or 0 for a forest whose
** state does not add up (DiPriMe grows its trees from the rows; a
** partitioned matrix forest draws a tree per row). */
uint32_t rdt_forest_state(rdt_forest *f, rdt_span *out, uint32_t max);
/* Item 5: BLAKE2b-256 (digest.h) of everything the state's counters mean:
** the model id (hence the structure key), the options that shape or count
** (algorithm, task, privacy, eps and its shares, trees, depth, vote, splits,
** categorical, bins, strategy, partition), the schema with its bounds and
** the drawn structure itself. */
void rdt_forest_digest(const rdt_forest *f, unsigned char out[32]);
/* Add b's counters into a when both have states of the same digest.
** Returns 0, a unchanged, if they do not (or a counter would overflow). */
int rdt_forest_merge(rdt_forest *a, const rdt_forest *b);
/* Replace counters by counters + discrete Laplace(trees / eps_leaves), where
** eps_leaves = eps - eps_count. Returns 0, adding nothing, if the noise
** parameters cannot be set up, and 0 with part of the noise added if
** config.cancel stops it: the caller must then release nothing. */
int rdt_forest_add_noise(rdt_forest *f, rdt_rng *noise);
/* Depth for a row count, from public facts only:
** round(log2(8 * rows * eps_leaves / (trees * max(classes, 2)))), i.e.
** 4 * rows * eps / trees for two classes (rows * 4 without noise), clamped to
** [RDT_AUTO_MIN_DEPTH, max_depth]. */
uint32_t rdt_depth_for_rows(const rdt_config *c, double rows, uint32_t n_classes, uint32_t max_depth);
/* Automatic depth: release a noisy row count (discrete Laplace, sensitivity
** 1, eps_count), choose the depth from it and cut every tree back to it: a
** leaf at the new depth gets the sum of its descendants' exact counters.
** Returns 0 on allocation failure. */
int rdt_forest_choose_depth(rdt_forest *f, rdt_rng *noise);

/* Scale of the noise on one released leaf counter (0 without noise). */
double rdt_forest_leaf_scale(const rdt_forest *f);
/* Regression prediction: the average of the trees' leaf means. */
double rdt_forest_regress(const rdt_forest *f, const double *xs);
/* Build the prediction tables. Returns 0 on allocation failure. */
int rdt_forest_prepare(rdt_forest *f);
/* Class probabilities under the model's vote rule. proba must hold
** 2 * n_classes doubles: the first n_classes receive the answer, the rest is
** scratch. */
void rdt_forest_proba(const rdt_forest *f, const double *xs, double *proba);
/* Predicted class index; `rng` is used only by the probabilistic rule. */
uint32_t rdt_forest_predict(const rdt_forest *f, const double *xs, double *proba_scratch,
                            rdt_rng *rng);

#endif
