/*
** tree_layouts.h - what two forest kinds share of their tree layouts
** (tree_layouts.c): the multiway layout's JSON (matrix and RDT#) and binary
** trees' size in rdt_info (RDT and DiPriMe), so that no kind's file reaches
** into another's. No SQLite.
*/
#ifndef RDT_FORESTS_TREE_LAYOUTS_H
#define RDT_FORESTS_TREE_LAYOUTS_H

#include <stdint.h>

#include "forest.h"
#include "../json_io.h"

/* Appends the multiway members of an export: "layout", "bins", "nodes",
** "leaves". slot_start: RDT#'s first slot of each leaf (NULL: one slot a
** leaf). */
void rdt_multiway_json_export(const rdt_forest *f, const uint32_t *slot_start, rdt_bytes *out);
/* Reads them into a new f->matrix (and f->counts); *n_leaves and *n_slots:
** the leaves its nodes name and the slots its "leaves" hold. 1, or 0 with
** the error in r. */
int rdt_multiway_json_import(rdt_json_reader *r, const rdt_json *root, rdt_forest *f, uint64_t *n_leaves,
                             uint64_t *n_slots);
/* rdt_info's "trees", "depth" and "leaves_per_tree" of complete binary trees. */
void rdt_binary_info_structure(const rdt_forest *f, rdt_bytes *out);

#endif
