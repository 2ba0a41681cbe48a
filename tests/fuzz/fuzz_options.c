/*
** fuzz_options.c - libFuzzer target for rdt_options_parse (hostile options
** JSON: the bytes are passed with their length, no NUL terminator, so an
** over-read is caught by ASan).
**
** On failure: a NUL-terminated, non-empty message and nothing left to free.
** On success: the schema and configuration satisfy the documented limits;
** and when the forest is small (fewer than 2^16 counters and a bounded
** building cost) it is built as rdt_train builds it, with a fixed seed when
** the options have none (so runs are reproducible): RDT: rdt_forest_init,
** node checks, a few fixed rows counted row by row and batched, noise;
** DiPriMe: rdt_diprime_budget, rdt_forest_init, rdt_diprime_train on the
** same rows; then prepared, asked for predictions, encoded, decoded, and
** re-encoded to the same bytes, then freed.
*/
#include <stddef.h>
#include <stdint.h>

#include "core/forests/diprime.h"
#include "core/forests/matrix.h"
#include "core/model.h"
#include "core/options.h"
#include "core/rng.h"
#include "core/forests/sharp.h"
#include "core/forests/tree_selection.h"
#include "../tests/fuzz/fuzz_common.h"

#define MAX_COUNTERS_BUILT ((uint64_t)1 << 16)
#define MAX_BUILD_WORK ((uint64_t)1 << 22)

static void check_values(const rdt_value *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    CHECK(v[i].type == RDT_VALUE_INTEGER || v[i].type == RDT_VALUE_TEXT);
    CHECK(v[i].text != NULL && strlen(v[i].text) == v[i].text_len);
  }
}

static void check_schema(const rdt_schema *s, const rdt_config *c) {
  int regression = c->task == RDT_TASK_REGRESSION;
  CHECK(s->n_features >= 1 && s->n_features <= RDT_MAX_FEATURES);
  CHECK(c->task == RDT_TASK_CLASSIFICATION || (regression && c->algorithm == RDT_ALGO_DIPRIME));
  CHECK(regression ? s->n_classes == 0 : s->n_classes >= 1 && s->n_classes <= RDT_MAX_CLASSES);
  if (regression)
    CHECK(isfinite(c->target_min) && isfinite(c->target_max) && c->target_min < c->target_max);
  int sharp = c->algorithm == RDT_ALGO_SHARP, multiway = sharp || c->algorithm == RDT_ALGO_MATRIX;
  /* RDT#: p and the depth may still be 0 (chosen once the public rows are counted). */
  CHECK(c->trees <= RDT_MAX_TREES && (c->trees >= 1 || (sharp && c->primary_trees == 0)));
  CHECK(c->depth <= RDT_MAX_DEPTH && (c->depth >= 1 || sharp));
  CHECK(c->algorithm == RDT_ALGO_RDT || c->algorithm == RDT_ALGO_DIPRIME || multiway);
  if (multiway) CHECK(c->bins >= 2 && c->bins <= RDT_MATRIX_MAX_BINS);
  if (sharp) CHECK(c->public_query[0] && c->cells >= 1 && c->primary_trees <= c->trees);
  if (c->algorithm == RDT_ALGO_DIPRIME)
    CHECK(c->rho > 0 && c->rho < 1 && c->candidates >= 1 && (c->partition == 0 || c->partition == 1));
  CHECK(c->vote >= RDT_VOTE_MAJORITY && c->vote <= RDT_VOTE_WEIGHT);
  CHECK(c->keep_trees > 0 && c->keep_trees <= 1);
  CHECK(c->splits == RDT_SPLITS_REACHABLE || c->splits == RDT_SPLITS_GLOBAL);
  CHECK(c->categorical == RDT_CATEGORICAL_SUBSET || c->categorical == RDT_CATEGORICAL_ONE_VS_REST);
  CHECK(!c->is_private || c->eps.num > 0);
  if (!multiway) CHECK(rdt_forest_counters(c, rdt_config_slots(c, s->n_classes)) > 0);
  check_values(s->classes, s->n_classes);
  for (uint32_t j = 0; j < s->n_features; j++) {
    const rdt_feature *ft = &s->features[j];
    CHECK(ft->name && ft->name[0] && strlen(ft->name) <= RDT_MAX_NAME);
    for (uint32_t k = 0; k < j; k++) CHECK(strcmp(ft->name, s->features[k].name) != 0);
    if (ft->type == RDT_FEATURE_NUMERIC) {
      CHECK(isfinite(ft->min) && isfinite(ft->max) && ft->min < ft->max);
    } else {
      CHECK(ft->type == RDT_FEATURE_CATEGORICAL);
      CHECK(ft->n_values >= 1 && ft->n_values <= RDT_MAX_VALUES);
      check_values(ft->values, ft->n_values);
    }
  }
}

/* Rough count of the steps building the forest takes: every internal node
** scans every feature, a categorical one costs its codes times the path
** length; a DiPriMe node also releases up to `candidates` medians on a
** 1024-cell grid or draws 8 subsets, and a selection. */
static uint64_t build_work(const rdt_schema *s, const rdt_config *c) {
  uint64_t per_node = 0, codes = 0;
  for (uint32_t j = 0; j < s->n_features; j++) {
    const rdt_feature *ft = &s->features[j];
    uint64_t k = ft->type == RDT_FEATURE_CATEGORICAL ? (uint64_t)ft->n_values + 1 : 0;
    per_node += 1 + k * (c->depth + 1);
    codes += k;
  }
  if (c->algorithm == RDT_ALGO_DIPRIME)
    per_node += ((uint64_t)c->candidates + 1) * (RDT_DIPRIME_MEDIAN_CELLS + RDT_DIPRIME_SUBSETS * (codes + 64));
  return ((uint64_t)c->trees << c->depth) * per_node;
}

/* Build only forests that stay cheap: binary trees by their counters and
** building work; multiway trees by a bound on their leaves (trees x the
** largest bin count to the depth) and RDT# also by its secondary trees. */
static int small_enough(const rdt_schema *s, const rdt_config *c) {
  if (c->algorithm == RDT_ALGO_MATRIX || c->algorithm == RDT_ALGO_SHARP) {
    double widest = 2, leaves;
    for (uint32_t j = 0; j < s->n_features; j++) {
      const rdt_feature *ft = &s->features[j];
      double d = ft->type == RDT_FEATURE_NUMERIC ? c->bins : ft->n_values;
      if (d > widest) widest = d;
    }
    uint32_t depth = c->depth ? c->depth : (s->n_features / 2 ? s->n_features / 2 : 1);
    uint32_t trees = c->trees + (c->primary_trees == 0 && c->algorithm == RDT_ALGO_SHARP ? RDT_SHARP_MAX_AUTO_TREES : 0);
    leaves = trees * pow(widest, depth < s->n_features ? depth : s->n_features);
    return leaves * rdt_config_slots(c, s->n_classes) < (double)MAX_COUNTERS_BUILT && trees <= 64;
  }
  return rdt_forest_counters(c, rdt_config_slots(c, s->n_classes)) < MAX_COUNTERS_BUILT &&
         build_work(s, c) < MAX_BUILD_WORK;
}

/* RDT: the structure invariants that the model decoder checks too. */
static void check_nodes(const rdt_forest *f) {
  size_t nn = (size_t)f->config.trees * f->n_internal;
  for (size_t i = 0; i < nn; i++) {
    const rdt_node *nd = &f->nodes[i];
    if (nd->kind == RDT_SPLIT_NONE) continue;
    CHECK(nd->feature < f->schema.n_features);
    const rdt_feature *ft = &f->schema.features[nd->feature];
    if (nd->kind == RDT_SPLIT_NUMERIC) {
      CHECK(ft->type == RDT_FEATURE_NUMERIC && nd->value >= ft->min && nd->value <= ft->max);
    } else if (nd->kind == RDT_SPLIT_CATEGORY_EQ) {
      CHECK(ft->type == RDT_FEATURE_CATEGORICAL && nd->value >= 0 && nd->value <= ft->n_values);
    } else {
      CHECK(nd->kind == RDT_SPLIT_CATEGORY_SUBSET && ft->type == RDT_FEATURE_CATEGORICAL);
    }
  }
}

static void build_and_check(rdt_schema *s, rdt_config *c) {
  if (!c->seeded) { /* reproducible runs: a fixed structure key */
    c->seeded = 1;
    memset(c->seed_key, 0x5A, sizeof c->seed_key);
  }
  int diprime = c->algorithm == RDT_ALGO_DIPRIME, matrix = c->algorithm == RDT_ALGO_MATRIX;
  int sharp = c->algorithm == RDT_ALGO_SHARP;
  if (diprime && !rdt_diprime_budget(c, s->n_features)) { /* rdt_train's error: a share rounds to 0 */
    rdt_schema_free(s);
    return;
  }
  if (sharp) { /* what rdt_train does once it has counted the public rows */
    if (c->depth == 0) c->depth = rdt_sharp_depth(s, c->bins, FUZZ_N_VECTORS);
    if (c->primary_trees == 0) {
      c->primary_trees = rdt_sharp_primary(s, c->bins, c->depth, FUZZ_N_VECTORS, rdt_eps_to_double(c->eps));
      c->trees += c->primary_trees;
    }
  }
  rdt_forest f;
  uint32_t nf = s->n_features;
  double *pub = NULL;
  char err[256];
  if (!rdt_forest_init(&f, s, c)) { /* takes the schema; a matrix forest may refuse its size */
    CHECK(matrix && f.error[0] != 0);
    rdt_forest_free(&f);
    return;
  }
  if (sharp) { /* the fixed vectors are the public rows too */
    pub = malloc((size_t)FUZZ_N_VECTORS * nf * sizeof *pub);
    CHECK(pub);
    for (int v = 0; v < FUZZ_N_VECTORS; v++) fuzz_vector(&f, v, pub + (size_t)v * nf);
    if (!rdt_sharp_build(&f, pub, FUZZ_N_VECTORS, err, sizeof err)) {
      CHECK(err[0] != 0);
      free(pub);
      rdt_forest_free(&f);
      return;
    }
  }
  uint32_t C = f.schema.n_classes, slots = rdt_forest_slots(&f);
  if (!diprime && !f.matrix) check_nodes(&f);

  /* A few rows: every fixed vector, classes (or targets) in turn. */
  double *rows = malloc((size_t)FUZZ_N_VECTORS * nf * sizeof *rows);
  uint32_t cls[FUZZ_N_VECTORS];
  double y[FUZZ_N_VECTORS];
  CHECK(rows);
  for (int v = 0; v < FUZZ_N_VECTORS; v++) {
    fuzz_vector(&f, v, rows + (size_t)v * nf);
    cls[v] = C ? (uint32_t)v % C : 0;
    y[v] = v == 0 ? f.config.target_min : v == 1 ? f.config.target_max : v == 2 ? NAN : (double)v;
  }
  unsigned char key[RDT_RNG_KEYBYTES];
  memset(key, 0xA5, sizeof key);
  rdt_rng noise;
  rdt_rng_init_seeded(&noise, key);
  if (diprime) {
    CHECK(rdt_diprime_train(&f, rows, f.config.task == RDT_TASK_REGRESSION ? NULL : cls, y, FUZZ_N_VECTORS, &noise));
    check_nodes(&f);
  } else {
    for (int v = 0; v < FUZZ_N_VECTORS; v++) rdt_forest_train_row(&f, rows + (size_t)v * nf, cls[v]);
    rdt_forest_train_batch(&f, rows, cls, FUZZ_N_VECTORS);
    if (!f.matrix) {
      int64_t total = 0;
      for (size_t i = 0; i < (size_t)f.config.trees * f.n_leaves * slots; i++) total += f.counts[i];
      CHECK(total == (int64_t)2 * FUZZ_N_VECTORS * f.config.trees);
      rdt_forest_add_noise(&f, &noise);
    } else if (sharp) {
      CHECK(rdt_sharp_release(&f, pub, FUZZ_N_VECTORS, &noise));
    } else {
      CHECK(rdt_matrix_release(&f, &noise));
    }
  }
  free(pub);
  rdt_rng_clear(&noise);
  free(rows);
  CHECK(rdt_forest_select_trees(&f)); /* "keep_trees", as rdt_train does after the release */
  if (f.tree_kept) {
    uint32_t kept = 0;
    for (uint32_t t = 0; t < f.config.trees; t++) kept += f.tree_kept[t];
    CHECK(kept == f.n_kept && kept == rdt_keep_count(f.config.trees, f.config.keep_trees));
  }
  CHECK(rdt_forest_prepare(&f));
  fuzz_check_predictions(&f);

  size_t size = 0, size2 = 0;
  unsigned char *blob = rdt_model_encode(&f, &size);
  CHECK(blob && size == rdt_model_size(&f));
  rdt_forest g;
  if (!rdt_model_decode(blob, size, &g, err, sizeof err)) {
    fprintf(stderr, "decode of a fresh model failed: %s\n", err);
    CHECK(!"a freshly encoded model decodes");
  }
  unsigned char *blob2 = rdt_model_encode(&g, &size2);
  CHECK(blob2 && size2 == size && memcmp(blob, blob2, size) == 0);
  fuzz_check_predictions(&g);
  free(blob);
  free(blob2);
  rdt_forest_free(&g);
  rdt_forest_free(&f);
}

/* Options of a registered learner (learner.h): parsed, and when small
** enough started, fed a few fixed rows, finished with a fixed seed, encoded,
** decoded, re-encoded to the same bytes and asked for a prediction. */
static void learner_options(const uint8_t *data, size_t size, const rdt_learner *l) {
  rdt_schema s;
  rdt_learn_common c;
  rdt_json *opts = NULL;
  char ledger[129], label[RDT_MAX_NAME + 1], err[256];
  err[0] = 0;
  if (!rdt_options_parse_learner((const char *)data, size, l, &opts, &s, &c, ledger, sizeof ledger, label, err,
                                 sizeof err)) {
    CHECK(err[0] != 0 && memchr(err, 0, sizeof err) != NULL && opts == NULL);
    return;
  }
  CHECK(s.n_features >= 1 && (s.n_classes == 0) == (c.regression != 0));
  uint64_t cells = 1;
  for (uint32_t j = 0; j < s.n_features; j++) cells += s.features[j].type == RDT_FEATURE_NUMERIC ? 64 : s.features[j].n_values + 1;
  if (cells * (s.n_classes + 1) < MAX_COUNTERS_BUILT && s.n_features <= 16 && s.n_classes <= 16) {
    if (!c.seeded) { /* reproducible runs */
      c.seeded = 1;
      memset(c.seed_key, 7, sizeof c.seed_key);
    }
    err[0] = 0;
    void *st = l->start(opts, &s, &c, err, sizeof err);
    if (!st) {
      CHECK(memchr(err, 0, sizeof err) != NULL);
    } else {
      double x[16];
      for (int r = 0; r < 8; r++) {
        for (uint32_t j = 0; j < s.n_features; j++) {
          const rdt_feature *ft = &s.features[j];
          x[j] = ft->type == RDT_FEATURE_NUMERIC ? ft->min + (ft->max - ft->min) * (r % 4) / 3.0 : (double)(r % (ft->n_values + 1));
        }
        l->row(st, x, s.n_classes ? (uint32_t)r % s.n_classes : 0, c.regression ? c.target_min : 0);
      }
      rdt_rng rng;
      rdt_rng_init_seeded(&rng, c.seed_key);
      if (l->finish(st, &rng)) {
        rdt_learned m;
        memset(&m, 0, sizeof m);
        m.learner = l;
        m.state = st;
        m.schema = s; /* borrowed */
        m.common = c;
        size_t n = 0;
        unsigned char *blob = rdt_learned_encode(&m, &n);
        CHECK(blob != NULL);
        rdt_learned d;
        CHECK(rdt_learned_decode(blob, n, rdt_learner_by_id, &d, err, sizeof err));
        size_t n2 = 0;
        unsigned char *again = rdt_learned_encode(&d, &n2);
        CHECK(again && n2 == n && memcmp(again, blob, n) == 0);
        double out[17];
        d.learner->predict(d.state, x, out);
        free(again);
        free(blob);
        rdt_learned_free(&d);
      }
      rdt_rng_clear(&rng);
      l->free(st);
    }
  }
  rdt_json_free(opts);
  rdt_schema_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rdt_schema s;
  rdt_config c;
  char err[256];
  err[0] = 0;
  const rdt_learner *l;
  if (rdt_options_learner((const char *)data, size, &l)) {
    learner_options(data, size, l);
    return 0;
  }
  if (!rdt_options_parse((const char *)data, size, &s, &c, err, sizeof err)) {
    /* Nothing to free: anything still allocated here is a leak (ASan). */
    CHECK(err[0] != 0 && memchr(err, 0, sizeof err) != NULL);
    return 0;
  }
  check_schema(&s, &c);
  if (small_enough(&s, &c))
    build_and_check(&s, &c);
  else
    rdt_schema_free(&s);
  return 0;
}
