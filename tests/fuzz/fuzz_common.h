/*
** fuzz_common.h - helpers shared by the libFuzzer targets in tests/fuzz/.
**
** CHECK aborts with a message: libFuzzer (and tests/fuzz/replay.c) report an
** abort as a crash, so every property below is a finding when it fails.
*/
#ifndef RDT_FUZZ_COMMON_H
#define RDT_FUZZ_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/forests/forest.h"
#include "core/model.h"

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

/* Every target is its own program (with libFuzzer or tests/fuzz/replay.c), so
** this header defines the entry points' shared part once per program. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (sodium_init() < 0) abort();
  return 0;
}

#define FUZZ_N_VECTORS 5

/* Feature vector number v (0 <= v < FUZZ_N_VECTORS) for forest f, as the SQL
** layer would build it: numeric values cleaned into [min, max], categorical
** codes in [0, n_values] (n_values is `other`). Vector 4 puts every numeric
** feature exactly on the first threshold that splits it (a boundary case). */
static inline void fuzz_vector(const rdt_forest *f, int v, double *xs) {
  for (uint32_t j = 0; j < f->schema.n_features; j++) {
    const rdt_feature *ft = &f->schema.features[j];
    if (ft->type == RDT_FEATURE_CATEGORICAL) {
      uint32_t codes[FUZZ_N_VECTORS] = {0, ft->n_values, ft->n_values / 2, ft->n_values - 1, 1};
      uint32_t c = codes[v];
      xs[j] = (double)(c > ft->n_values ? ft->n_values : c);
      continue;
    }
    switch (v) {
      case 0: xs[j] = ft->min; break;
      case 1: xs[j] = ft->max; break;
      case 2: xs[j] = rdt_numeric_clean(ft, 0, 1); break;         /* missing: midpoint */
      case 3: xs[j] = rdt_numeric_clean(ft, -0.25, 0); break;     /* clamped */
      default: {
        xs[j] = rdt_numeric_clean(ft, HUGE_VAL, 0);                /* +inf: max */
        size_t nn = (size_t)f->config.trees * f->n_internal;
        for (size_t i = 0; i < nn; i++)
          if (f->nodes[i].kind == RDT_SPLIT_NUMERIC && f->nodes[i].feature == j) {
            xs[j] = rdt_numeric_clean(ft, f->nodes[i].value, 0);
            break;
          }
      }
    }
  }
}

/* Runs the predictions of a prepared forest on every fixed vector:
** classification: rdt_forest_proba / rdt_forest_predict give a probability
** vector and a class; regression: rdt_forest_regress gives a finite value in
** the public target range. */
static inline void fuzz_check_predictions(const rdt_forest *f) {
  uint32_t C = f->schema.n_classes;
  double *xs = malloc(((size_t)f->schema.n_features + 1) * sizeof *xs);
  double *proba = malloc((2 * (size_t)C + 1) * sizeof *proba);
  CHECK(xs && proba);
  for (int v = 0; v < FUZZ_N_VECTORS; v++) {
    fuzz_vector(f, v, xs);
    if (f->config.task == RDT_TASK_REGRESSION) {
      /* [min, max] up to rounding: min + (max - min) * 1 and the average
      ** over the trees may land an ulp or so outside (see the README). */
      double y = rdt_forest_regress(f, xs), lo = f->config.target_min, hi = f->config.target_max;
      double tol = 1e-12 * (fabs(lo) + fabs(hi));
      CHECK(isfinite(y) && y >= lo - tol && y <= hi + tol);
      continue;
    }
    CHECK(C >= 1);
    rdt_forest_proba(f, xs, proba);
    double sum = 0;
    for (uint32_t c = 0; c < C; c++) {
      CHECK(proba[c] >= 0 && proba[c] <= 1 + 1e-9); /* also rejects NaN */
      sum += proba[c];
    }
    CHECK(fabs(sum - 1) < 1e-6);
    CHECK(rdt_forest_predict(f, xs, proba, NULL) < C);
  }
  free(xs);
  free(proba);
}

#endif
