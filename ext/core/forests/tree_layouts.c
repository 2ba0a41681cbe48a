/*
** tree_layouts.c - the parts of the tree layouts two forest kinds share
** (tree_layouts.h).
**
** Contract:
**   1. The multiway layout (matrix_kind.c, sharp_kind.c) is written and read
**      as sql/model-format.md documents it: "layout": "multiway", "bins";
**      "nodes", per tree in breadth-first order [feature, next] (feature -1:
**      a leaf, next its index); "leaves", per tree, the released values of
**      each slot (a leaf, or for RDT# each centre of each leaf in order).
**      The kind's own object ("matrix", "rdt#") follows, written by the kind.
**   2. Import sets f->matrix and its multiway operations first, records the
**      first error in the reader and leaves what it allocated in f for
**      rdt_forest_free (forest_kind.h contract 4); a classifier without
**      classes or counters beyond RDT_MAX_COUNTERS are "too large", never a
**      division by 0. The decoder (model.c) validates the result as it does
**      any BLOB.
**   3. Binary trees' structure (rdt_kind.c, diprime_kind.c) in rdt_info is
**      their size only: public facts of the configuration.
*/
#include "tree_layouts.h"

#include <stdlib.h>

#include "matrix.h"

void rdt_multiway_json_export(const rdt_forest *f, const uint32_t *slot_start, rdt_bytes *o) {
  const rdt_config *c = &f->config;
  const rdt_matrix *m = f->matrix;
  uint32_t slots = rdt_forest_slots(f);
  rdt_json_putf(o, ",\"layout\":\"multiway\",\"bins\":%u,\"nodes\":[", c->bins);
  for (uint32_t t = 0; t < c->trees; t++) {
    rdt_bytes_text(o, t ? ",[" : "[");
    for (uint32_t i = m->node_start[t]; i < m->node_start[t + 1]; i++) {
      const rdt_mnode *nd = &m->nodes[i];
      if (nd->feature == RDT_MNODE_LEAF) rdt_json_putf(o, "%s[-1,%u]", i > m->node_start[t] ? "," : "", nd->next);
      else rdt_json_putf(o, "%s[%u,%u]", i > m->node_start[t] ? "," : "", nd->feature, nd->next);
    }
    rdt_json_put_char(o, ']');
  }
  rdt_bytes_text(o, "],\"leaves\":[");
  for (uint32_t t = 0; t < c->trees; t++) {
    uint64_t a = m->leaf_start[t], b = m->leaf_start[t + 1];
    if (slot_start) {
      a = slot_start[a];
      b = slot_start[b];
    }
    rdt_bytes_text(o, t ? ",[" : "[");
    for (uint64_t l = a; l < b; l++) {
      const int64_t *v = f->counts + l * slots;
      rdt_bytes_text(o, l > a ? ",[" : "[");
      for (uint32_t k = 0; k < slots; k++) rdt_json_putf(o, "%s%lld", k ? "," : "", (long long)v[k]);
      rdt_json_put_char(o, ']');
    }
    rdt_json_put_char(o, ']');
  }
  rdt_json_put_char(o, ']');
}

int rdt_multiway_json_import(rdt_json_reader *r, const rdt_json *root, rdt_forest *f, uint64_t *n_leaves,
                             uint64_t *n_slots) {
  rdt_config *c = &f->config;
  uint32_t nf = f->schema.n_features, slots = rdt_forest_slots(f);
  rdt_matrix *m = f->matrix = calloc(1, sizeof *f->matrix);
  f->multiway = &rdt_matrix_multiway;
  if (!m) return rdt_json_bad(r, "out of memory");
  uint64_t u;
  if (!rdt_json_member_uint(r, root, "bins", RDT_MATRIX_MAX_BINS, &u)) return 0;
  c->bins = (uint32_t)u;
  m->strategy = RDT_STRATEGY_LEAF;
  if (!rdt_matrix_domains(f)) return rdt_json_bad(r, "out of memory");
  const rdt_json *nodes = rdt_json_member(r, root, "nodes", RDT_JSON_ARRAY),
                 *leaves = rdt_json_member(r, root, "leaves", RDT_JSON_ARRAY);
  if (!nodes || !leaves) return 0;
  if (nodes->n != c->trees || leaves->n != c->trees)
    return rdt_json_bad(r, "\"nodes\" and \"leaves\" need one entry per tree");
  uint64_t n_nodes = 0, n_slot = 0;
  for (uint32_t t = 0; t < c->trees; t++) {
    if (nodes->items[t]->type != RDT_JSON_ARRAY || leaves->items[t]->type != RDT_JSON_ARRAY)
      return rdt_json_bad(r, "a tree is malformed");
    n_nodes += nodes->items[t]->n;
    n_slot += leaves->items[t]->n;
  }
  /* No slot per leaf (a classifier without classes) counts as no room, as
  ** rdt_forest_counters() says for binary trees; and no division by 0. */
  if (slots == 0 || n_nodes > UINT32_MAX / 2 || n_slot > RDT_MAX_COUNTERS / slots)
    return rdt_json_bad(r, "the model is too large");
  m->node_start = malloc((c->trees + 1) * sizeof *m->node_start);
  m->leaf_start = malloc((c->trees + 1) * sizeof *m->leaf_start);
  m->nodes = malloc((size_t)(n_nodes ? n_nodes : 1) * sizeof *m->nodes);
  f->counts = calloc((size_t)(n_slot ? n_slot : 1) * slots, sizeof *f->counts);
  if (!m->node_start || !m->leaf_start || !m->nodes || !f->counts) return rdt_json_bad(r, "out of memory");
  uint64_t at = 0, leaf_no = 0, slot_no = 0;
  for (uint32_t t = 0; t < c->trees; t++) {
    const rdt_json *tn = nodes->items[t], *tl = leaves->items[t];
    m->node_start[t] = (uint32_t)at;
    m->leaf_start[t] = (uint32_t)leaf_no;
    for (size_t i = 0; i < tn->n; i++, at++) {
      const rdt_json *n = tn->items[i];
      if (n->type != RDT_JSON_ARRAY || n->n != 2 || n->items[0]->type != RDT_JSON_NUMBER || !n->items[0]->is_integer ||
          n->items[0]->integer < -1 || n->items[0]->integer >= (long long)nf || n->items[1]->type != RDT_JSON_NUMBER ||
          !n->items[1]->is_integer || n->items[1]->integer < 0 || n->items[1]->integer > UINT32_MAX / 2)
        return rdt_json_bad(r, "a node is malformed");
      m->nodes[at].feature = n->items[0]->integer < 0 ? RDT_MNODE_LEAF : (uint32_t)n->items[0]->integer;
      m->nodes[at].next = (uint32_t)n->items[1]->integer;
      leaf_no += m->nodes[at].feature == RDT_MNODE_LEAF;
    }
    for (size_t l = 0; l < tl->n; l++, slot_no++)
      if (!rdt_json_int_array(r, tl->items[l], f->counts + slot_no * slots, slots)) return 0;
  }
  m->node_start[c->trees] = (uint32_t)at;
  m->leaf_start[c->trees] = (uint32_t)leaf_no;
  *n_leaves = leaf_no;
  *n_slots = n_slot;
  return 1;
}

void rdt_binary_info_structure(const rdt_forest *f, rdt_bytes *o) {
  rdt_json_putf(o, "\"trees\":%u,\"depth\":%u,\"leaves_per_tree\":%u,", f->config.trees, f->config.depth, f->n_leaves);
}
