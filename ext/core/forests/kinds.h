/*
** kinds.h - the forest kinds (forest_kind.h), one file each in this folder:
** rdt_kind.c, diprime_kind.c, matrix_kind.c, sharp_kind.c. The table in
** registry.c lists them; nothing else names one. Adding a kind: its own
** file, a line here and a line in that table.
*/
#ifndef RDT_FORESTS_KINDS_H
#define RDT_FORESTS_KINDS_H

#include "forest_kind.h"

extern const rdt_forest_kind rdt_forest_kind_rdt;
extern const rdt_forest_kind rdt_forest_kind_diprime;
extern const rdt_forest_kind rdt_forest_kind_matrix;
extern const rdt_forest_kind rdt_forest_kind_sharp;

#endif
