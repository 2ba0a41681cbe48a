/*
** registry.c - the table of forest algorithms (the interface is
** ../forest_kind.h): one line per kind, each defined in its own file here
** (kinds.h), and the lookups over it, as learners/registry.c is for the
** learners. Adding a forest kind: its own file, and one line here. What
** every forest needs whatever its kind (wiping its counters) lives here too.
*/
#include "forest_kind.h"

#include <sodium.h>
#include <string.h>

#include "matrix.h"
#include "kinds.h"

/* The first entry answers for binary trees (rdt_forest_kind_held). */
static const rdt_forest_kind *const kinds[] = {
    &rdt_forest_kind_rdt,
    &rdt_forest_kind_diprime,
    &rdt_forest_kind_matrix,
    &rdt_forest_kind_sharp,
};

const rdt_forest_kind *rdt_forest_kind_find(uint32_t algorithm) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if ((uint32_t)kinds[i]->algorithm == algorithm) return kinds[i];
  return NULL;
}

const rdt_forest_kind *rdt_forest_kind_at(size_t i) { return i < sizeof kinds / sizeof *kinds ? kinds[i] : NULL; }

const rdt_forest_kind *rdt_forest_kind_with_noise(const char *option, const char *noise) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (kinds[i]->noise && strcmp(kinds[i]->option, option) == 0 && strcmp(kinds[i]->noise, noise) == 0) return kinds[i];
  return NULL;
}

const rdt_forest_kind *rdt_forest_kind_of(rdt_algorithm algorithm) {
  const rdt_forest_kind *k = rdt_forest_kind_find((uint32_t)algorithm);
  return k ? k : kinds[0];
}

void rdt_forest_wipe_counters(rdt_forest *f) {
  size_t slots = rdt_forest_slots(f);
  if (f->counts) sodium_memzero(f->counts, (size_t)rdt_forest_total_leaves(f) * slots * sizeof *f->counts);
  rdt_matrix *mx = f->matrix;
  if (mx && mx->cells) sodium_memzero(mx->cells, (size_t)mx->n_cells * slots * sizeof *mx->cells);
  if (mx && mx->exact_cells) sodium_memzero(mx->exact_cells, (size_t)mx->exact.cells * slots * sizeof *mx->exact_cells);
}

/* Contract 6. A decoded forest holds f->sharp exactly for RDT# trees, and
** f->matrix for matrix or RDT# trees (model.c); a kind is chosen by what it
** holds, as rdt_export and rdt_info always did. */
const rdt_forest_kind *rdt_forest_kind_held(const rdt_forest *f) {
  if (f->sharp) return rdt_forest_kind_of(RDT_ALGO_SHARP);
  if (f->matrix) return rdt_forest_kind_of(RDT_ALGO_MATRIX);
  const rdt_forest_kind *k = rdt_forest_kind_of(f->config.algorithm);
  return k->multiway ? kinds[0] : k;
}

const rdt_forest_kind *rdt_forest_kind_named(const char *name) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (strcmp(kinds[i]->name, name) == 0) return kinds[i];
  return NULL;
}
