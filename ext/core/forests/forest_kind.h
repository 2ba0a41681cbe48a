/*
** forest_kind.h - the forest algorithms (RDT, DiPriMe, matrix, RDT#) in one
** table (forests/registry.c; each kind in its own file there), so that the
** SQLite binding, options.c, model.c and forest_init.c ask a forest's kind
** what they need (its names, its structure, whether it buffers or reads
** public rows, how it releases, its part of the model BLOB, of the JSON codec
** and of rdt_info) instead of switching on the algorithm enum, which stays
** the stored identity. No SQLite.
**
** Contract:
**   1. Every rdt_algorithm value has exactly one kind; rdt_forest_kind_of()
**      never returns NULL for a forest built by rdt_forest_init or decoded
**      by model.c (an unknown value gets the RDT kind's entry only if the
**      caller validated it first: model.c does).
**   2. release() adds all the noise of the kind's mechanism (its own
**      contract in forest.h, diprime.h, matrix.h, sharp.h) and returns 0
**      without releasing anything when the noise cannot be set up or memory
**      runs out. It reads the rows the kind asked to keep (buffers_rows) or
**      the public rows (reads_public_rows) from `in`.
**   3. plan() and build() run before any private row: plan() completes the
**      configuration from public facts (RDT#: depth and trees from the
**      public rows), build() draws what depends on them.
**   4. The JSON hooks (forest_json.c calls them) write and read only the
**      kind's own members, in the places rdt_export has always put them
**      (sql/model-format.md): export_privacy the members that follow
**      "epsilon_den" in "privacy" (a private model only), export_layout
**      everything from "layout" (or "nodes") to the last member before
**      "voting_trees". Import hooks record the first error in their reader
**      and leave whatever they allocated in f, which rdt_forest_free frees.
**   5. describe() writes rdt_info members, each followed by a comma, for one
**      part of the document (rdt_forest_info_part); numbers of rdt_info's
**      own format go through `real`, the caller's, so that a kind's text
**      and the rest of the document print numbers alike. It is
**      post-processing of the released model.
**   6. rdt_forest_kind_held() is the kind whose parts a forest holds: the
**      algorithm's kind for every model built here or decoded from an honest
**      BLOB. A hostile BLOB may name RDT# while holding binary trees (the
**      decoder accepts the shape); it is then written and described as the
**      binary trees it holds, never through a kind whose state is absent.
**   7. The model codec's facts (mechanism, sensitivity, section, the check
**      of its stored parameters) are those sql/model-format.md states for
**      the kind; stored_parameters_ok() reads the configuration only and
**      accepts every value its own writer stores.
*/
#ifndef RDT_FOREST_KIND_H
#define RDT_FOREST_KIND_H

#include "forest.h"
#include "../json_io.h"

/* What a release may read besides the forest's counters. */
typedef struct rdt_forest_input {
  const double *rows_x;     /* buffered private rows (buffers_rows), row-major */
  const uint32_t *rows_c;   /* their classes */
  const double *rows_y;     /* their targets (regression) */
  uint64_t n_rows;
  const double *pub;        /* public rows (reads_public_rows), row-major */
  uint64_t n_pub;
  uint64_t public_n;        /* the public row count its rules use ("rows", else n_pub) */
} rdt_forest_input;

/* The parts of an rdt_info document a kind writes (contract 5), in order. */
typedef enum {
  RDT_FOREST_INFO_MECHANISM,  /* a private model, after "neighbouring": "mechanism" and the ε of its parts */
  RDT_FOREST_INFO_PARAMETERS, /* after the privacy unit: the kind's own parameters */
  RDT_FOREST_INFO_STRUCTURE,  /* after the target: the trees, their size and layout */
  RDT_FOREST_INFO_SPLITS      /* after the vote and the voting trees: how binary trees split */
} rdt_forest_info_part;

/* A number in rdt_info's format (the caller's). */
typedef void (*rdt_info_real)(rdt_bytes *out, double x);

/* The PRIV section's mechanism id of each kind's private models
** (sql/model-format.md; model.c adds 0, none, and 5, a learner's). */
enum { RDT_MECH_LEAF_LAPLACE = 1, RDT_MECH_DIPRIME = 2, RDT_MECH_MATRIX = 3, RDT_MECH_SHARP = 4 };

typedef struct rdt_forest_kind {
  rdt_algorithm algorithm;
  const char *name;           /* rdt_info, rdt_export, inspection: "rdt", "diprime", "matrix", "rdt#" */
  const char *option;         /* the "algorithm" option that asks for it ("rdt" for matrix noise) */
  const char *noise;          /* the "noise" option, or NULL */
  const char *note;           /* the ledger's request: "rdt", "diprime", "rdt, matrix noise", "rdt#" */
  int multiway;               /* trees sized by their drawn structure (model size known after build) */
  int buffers_rows;           /* keeps its rows until release (no counting thread) */
  int reads_public_rows;      /* needs the public rows before any private row */
  int batch_prediction;       /* rdt_predict_batch answers from its non-private models */
  /* Without "depth": its depth from "rows", else (private) from a noisy
  ** row count after the pass, else a fixed depth (options.c, forest.h). */
  int auto_depth;
  /* Its structure, made by rdt_forest_init (forest.h; NULL: nothing before
  ** the public rows). */
  rdt_structure_fn structure;
  /* Its part of the model BLOB (model.c, sql/model-format.md), contract 7:
  ** PRIV's mechanism of a private model, PRIV's sensitivity (NULL: 0), the
  ** section that follows FRST ("MTRX", "SHRP"; NULL: none), and the check
  ** of the FRST parameters that are its own (1: a model of it may hold them). */
  uint32_t mechanism;
  uint32_t (*sensitivity)(const rdt_forest *f);
  const char *section;
  int (*stored_parameters_ok)(const rdt_config *c);
  /* The kind's own parameter checks once the options parsed, before any
  ** row (NULL: none): 1, or 0 with err. DiPriMe: its budget's shares. */
  int (*check)(rdt_config *c, const rdt_schema *s, char *err, size_t en);
  /* Contract 3 (NULL: nothing to do). plan() cannot fail (public
  ** arithmetic); build() returns 1, or 0 with err (empty: out of memory). */
  void (*plan)(rdt_config *c, const rdt_schema *s, const rdt_forest_input *in);
  int (*build)(rdt_forest *f, const rdt_forest_input *in, char *err, size_t en);
  int (*release)(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise); /* contract 2 */
  /* The ε one tree's release accounts for (inspection); NULL: ε / trees. */
  double (*tree_epsilon)(const rdt_config *c);
  /* rdt_info's neighbouring relation of a private model without a privacy unit. */
  const char *neighbouring;
  /* Contract 4 (NULL: no members of its own; no layout: binary trees). */
  void (*export_privacy)(const rdt_forest *f, rdt_bytes *out);
  int (*import_privacy)(rdt_json_reader *r, const rdt_json *privacy, rdt_config *c);
  void (*export_layout)(const rdt_forest *f, rdt_bytes *out);
  /* "layout": "multiway" (NULL: a kind without one refuses it). */
  int (*import_layout)(rdt_json_reader *r, const rdt_json *root, rdt_forest *f);
  void (*describe)(const rdt_forest *f, rdt_forest_info_part part, rdt_bytes *out, rdt_info_real real); /* contract 5 */
} rdt_forest_kind;

const rdt_forest_kind *rdt_forest_kind_of(rdt_algorithm algorithm);
/* The kind of a stored algorithm value; NULL if none (a decoder's check). */
const rdt_forest_kind *rdt_forest_kind_find(uint32_t algorithm);
/* The i-th kind of the table (0 the first, the default); NULL past the end. */
const rdt_forest_kind *rdt_forest_kind_at(size_t i);
/* The kind asked for by its "algorithm" option and a "noise" option; NULL if none. */
const rdt_forest_kind *rdt_forest_kind_with_noise(const char *option, const char *noise);
/* Contract 6: the kind whose codec and description fit what f holds. */
const rdt_forest_kind *rdt_forest_kind_held(const rdt_forest *f);
/* Wipes every counter of f in place, whatever its kind: the leaves' counts
** and a matrix forest's tables (exact or released; the private part of a
** training state). */
void rdt_forest_wipe_counters(rdt_forest *f);
/* By rdt_info/export name ("rdt", "diprime", "matrix", "rdt#"); NULL if none. */
const rdt_forest_kind *rdt_forest_kind_named(const char *name);

#endif
