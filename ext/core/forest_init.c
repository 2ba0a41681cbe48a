/*
** forest_init.c - rdt_forest_init for every forest algorithm: the one place
** that knows which structure each draws (forest.h), so forest.c needs
** neither matrix.c nor sharp.c. RDT draws complete binary trees (forest.c),
** a matrix forest its multiway trees (matrix.c); DiPriMe grows its trees
** from the rows and RDT# from the public rows later.
*/
#include "forest.h"
#include "matrix.h"

int rdt_forest_init(rdt_forest *f, rdt_schema *schema, const rdt_config *config) {
  return rdt_forest_init_with(f, schema, config, config->algorithm == RDT_ALGO_MATRIX ? rdt_matrix_init : NULL);
}
