/*
** forest_init.c - rdt_forest_init for every forest algorithm: it asks the
** forest's kind (forest_kind.h) which structure to make, so forest.c needs
** neither the kinds nor matrix.c nor sharp.c. RDT draws complete binary
** trees and DiPriMe allocates them (forest.c), a matrix forest draws its
** multiway trees (matrix.c); RDT# draws its trees from the public rows later.
*/
#include "forest.h"
#include "forest_kind.h"

int rdt_forest_init(rdt_forest *f, rdt_schema *schema, const rdt_config *config) {
  return rdt_forest_init_with(f, schema, config, rdt_forest_kind_of(config->algorithm)->structure);
}
