/*
** check.h - the assertions of the C unit-test programs (test_core,
** test_learners, test_boost): "ok - name" / "not ok - name" lines, counted
** for the final "N passed, N failed", and seeded streams by label.
*/
#ifndef RDT_TESTS_CHECK_H
#define RDT_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

#include "core/rng.h"

static int n_pass, n_fail;

static void check(int cond, const char *name) {
  if (cond) n_pass++;
  else n_fail++;
  printf("%s - %s\n", cond ? "ok" : "not ok", name);
}

static void seeded(rdt_rng *rng, const char *label) {
  unsigned char key[RDT_RNG_KEYBYTES];
  rdt_rng_derive_key(key, label, strlen(label), "test");
  rdt_rng_init_seeded(rng, key);
}

#endif
