/*
** forest_kind.c - the table of forest algorithms (forest_kind.h).
*/
#include "forest_kind.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "diprime.h"
#include "matrix.h"
#include "sharp.h"

static int rdt_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  (void)in;
  return (!f->config.auto_depth || rdt_forest_choose_depth(f, noise)) && rdt_forest_add_noise(f, noise);
}

/* Its per-query shares must not round to 0 (a parameter mistake); it
** rounds its per-row eps down to what its queries spend, so a release with
** unit facts states (and a ledger is charged) exactly that much. */
static int diprime_check(rdt_config *c, const rdt_schema *s, char *err, size_t en) {
  if (!rdt_diprime_budget(c, s->n_features)) {
    snprintf(err, en, "\"epsilon\" is too small for this DiPriMe configuration: a per-query share rounds to 0");
    return 0;
  }
  if (rdt_unit_active(&c->unit)) c->unit.eps_total.num = c->unit.eps_bounds.num + (uint64_t)c->unit.max_rows * c->eps.num;
  return 1;
}

static int diprime_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  return rdt_diprime_train(f, in->rows_x, in->rows_c, in->rows_y, in->n_rows, noise);
}

/* DiPriMe: with "partition" each tree sees its own rows (ε each), else ε / trees. */
static double diprime_tree_epsilon(const rdt_config *c) {
  return c->partition ? rdt_eps_to_double(c->eps) : rdt_eps_to_double(c->eps) / c->trees;
}

static int matrix_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  (void)in;
  return rdt_matrix_release(f, noise);
}

/* RDT#: the depth and the primary trees from the public rows (sharp.h). */
static void sharp_plan(rdt_config *c, const rdt_schema *s, const rdt_forest_input *in) {
  double n = (double)(in->public_n ? in->public_n : in->n_pub);
  if (c->depth == 0) c->depth = rdt_sharp_depth(s, c->bins, n);
  if (c->primary_trees == 0) {
    c->primary_trees = rdt_sharp_primary(s, c->bins, c->depth, n, rdt_eps_to_double(c->eps));
    c->trees += c->primary_trees;
  }
}

static int sharp_build(rdt_forest *f, const rdt_forest_input *in, char *err, size_t en) {
  return rdt_sharp_build(f, in->pub, in->n_pub, err, en);
}

static int sharp_release(rdt_forest *f, const rdt_forest_input *in, rdt_rng *noise) {
  return rdt_sharp_release(f, in->pub, in->n_pub, noise);
}

static const rdt_forest_kind kinds[] = {
    {RDT_ALGO_RDT, "rdt", "rdt", NULL, "rdt", 0, 0, 0, 1, NULL, NULL, NULL, rdt_release, NULL},
    {RDT_ALGO_DIPRIME, "diprime", "diprime", NULL, "diprime", 0, 1, 0, 0, diprime_check, NULL, NULL,
     diprime_release, diprime_tree_epsilon},
    {RDT_ALGO_MATRIX, "matrix", "rdt", "matrix", "rdt, matrix noise", 1, 0, 0, 1, NULL, NULL, NULL, matrix_release,
     NULL},
    {RDT_ALGO_SHARP, "rdt#", "rdt#", NULL, "rdt#", 1, 0, 1, 0, NULL, sharp_plan, sharp_build, sharp_release, NULL},
};

const rdt_forest_kind *rdt_forest_kind_of(rdt_algorithm algorithm) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (kinds[i].algorithm == algorithm) return &kinds[i];
  return &kinds[0];
}

void rdt_forest_wipe_counters(rdt_forest *f) {
  size_t slots = rdt_forest_slots(f);
  if (f->counts) sodium_memzero(f->counts, (size_t)rdt_forest_total_leaves(f) * slots * sizeof *f->counts);
  rdt_matrix *mx = f->matrix;
  if (mx && mx->cells) sodium_memzero(mx->cells, (size_t)mx->n_cells * slots * sizeof *mx->cells);
  if (mx && mx->exact_cells) sodium_memzero(mx->exact_cells, (size_t)mx->exact.cells * slots * sizeof *mx->exact_cells);
}

const rdt_forest_kind *rdt_forest_kind_named(const char *name) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
  return NULL;
}
