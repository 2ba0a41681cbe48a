/*
** sharp_kind.c - the RDT# forest kind ("algorithm": "rdt#"; forest_kind.h):
** public unlabeled rows shape the trees and are labelled by a private
** primary ensemble.
**
** Contract:
**   1. It reads the public rows before any private row: plan() sets the
**      depth and the primary trees from their count ("rows" if given) when
**      the options left them out, build() draws the trees and centres from
**      them (rdt_sharp_build), release() adds noise of scale p/epsilon to the
**      primary counters and labels the public rows for the secondary trees
**      (rdt_sharp_release): sharp.h's privacy contract. Neighbours: add or
**      remove one private (labeled) row; the centres are public rows.
**   2. JSON: the multiway layout (tree_layouts.h), one slot per centre, then
**      "rdt#": "primary_trees", "cells", "public_rows", "public_tables"
**      (absent in 1.0 exports) and "centres" per leaf (empty for a leaf
**      without coordinates): the SHRP / CNTR sections of sql/model-format.md.
**   3. describe() writes the "mechanism" (private models) and its
**      structure: "layout", trees, depth, leaves, "rdt#" (primary and
**      secondary trees, cells, bins, public rows, centres), "public_tables"
**      and the warning that the model contains public rows.
**   4. Model BLOB: PRIV mechanism 4, sensitivity p; the SHRP section follows
**      FRST (classification, no partition, no automatic depth).
*/
#include "kinds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "sharp.h"
#include "tree_layouts.h"

/* The depth and the primary trees from the public rows (sharp.h). */
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

/* PRIV's sensitivity: the primary trees' counters, 1 per primary tree. */
static uint32_t sharp_sensitivity(const rdt_forest *f) { return f->config.primary_trees; }

/* Classification, no partition, no automatic depth. */
static int sharp_stored_parameters_ok(const rdt_config *c) {
  return !c->auto_depth && !c->partition && c->task == RDT_TASK_CLASSIFICATION;
}

/* "rdt#": the rest of the SHRP / CNTR sections (sql/model-format.md). */
static void sharp_export_layout(const rdt_forest *f, rdt_bytes *o) {
  const rdt_sharp *sh = f->sharp;
  const rdt_config *c = &f->config;
  uint32_t nf = f->schema.n_features;
  rdt_multiway_json_export(f, sh->slot_start, o);
  rdt_json_putf(o, ",\"rdt#\":{\"primary_trees\":%u,\"cells\":%u,\"public_rows\":%llu", c->primary_trees, c->cells,
                (unsigned long long)sh->public_rows);
  if (f->format_minor >= 1) { /* a 1.0 model recorded none: its export says nothing rather than [] */
    rdt_bytes_text(o, ",\"public_tables\":[");
    for (uint32_t at = 0; at < c->public_tables_len; at += (uint32_t)strlen(c->public_tables + at) + 1) {
      if (at) rdt_json_put_char(o, ',');
      rdt_json_put_string(o, c->public_tables + at, strlen(c->public_tables + at));
    }
    rdt_json_put_char(o, ']');
  }
  rdt_bytes_text(o, ",\"centres\":[");
  for (uint64_t l = 0; l < rdt_matrix_leaves(f); l++) {
    rdt_bytes_text(o, l ? ",[" : "[");
    uint32_t a = sh->slot_start[l], b = sh->slot_start[l + 1];
    for (uint32_t k = a; k < b && !isnan(sh->centres[(size_t)a * nf]); k++) {
      rdt_bytes_text(o, k > a ? ",[" : "[");
      for (uint32_t j = 0; j < nf; j++) {
        if (j) rdt_json_put_char(o, ',');
        rdt_json_put_double(o, sh->centres[(size_t)k * nf + j]);
      }
      rdt_json_put_char(o, ']');
    }
    rdt_json_put_char(o, ']');
  }
  rdt_bytes_text(o, "]}");
}

static int sharp_import_layout(rdt_json_reader *r, const rdt_json *root, rdt_forest *f) {
  uint64_t leaf_no, n_slots;
  if (!rdt_multiway_json_import(r, root, f, &leaf_no, &n_slots)) return 0;
  rdt_config *c = &f->config;
  uint32_t nf = f->schema.n_features;
  const rdt_json *sj = rdt_json_member(r, root, "rdt#", RDT_JSON_OBJECT);
  if (!sj) return 0;
  rdt_sharp *sh = f->sharp = calloc(1, sizeof *f->sharp);
  f->multiway = &rdt_sharp_multiway;
  if (!sh) return rdt_json_bad(r, "out of memory");
  uint64_t primary, cells, public_rows;
  if (!rdt_json_member_uint(r, sj, "primary_trees", c->trees, &primary) ||
      !rdt_json_member_uint(r, sj, "cells", RDT_SHARP_MAX_CELLS, &cells) ||
      !rdt_json_member_uint(r, sj, "public_rows", RDT_SHARP_MAX_PUBLIC_ROWS, &public_rows))
    return 0;
  c->primary_trees = (uint32_t)primary;
  c->cells = (uint32_t)cells;
  sh->public_rows = public_rows;
  const rdt_json *pt = rdt_json_get(sj, "public_tables"); /* absent in exports of 1.0 models */
  if (pt && pt->type != RDT_JSON_ARRAY) return rdt_json_bad(r, "\"public_tables\" must be an array of names");
  for (size_t i = 0; pt && i < pt->n; i++) {
    const rdt_json *t = pt->items[i];
    if (t->type != RDT_JSON_STRING || t->string_len == 0 || strlen(t->string) != t->string_len ||
        c->public_tables_len + t->string_len + 1 >= sizeof c->public_tables)
      return rdt_json_bad(r, "\"public_tables\" must be an array of names");
    memcpy(c->public_tables + c->public_tables_len, t->string, t->string_len + 1);
    c->public_tables_len += (uint32_t)t->string_len + 1;
  }
  const rdt_json *centres = rdt_json_member(r, sj, "centres", RDT_JSON_ARRAY);
  if (!centres) return 0;
  if (centres->n != leaf_no) return rdt_json_bad(r, "\"centres\" needs one entry per leaf");
  sh->slot_start = malloc((size_t)(leaf_no + 1) * sizeof *sh->slot_start);
  sh->centres = malloc((size_t)(n_slots ? n_slots : 1) * nf * sizeof *sh->centres);
  if (!sh->slot_start || !sh->centres) return rdt_json_bad(r, "out of memory");
  uint64_t k = 0;
  for (uint64_t l = 0; l < leaf_no; l++) {
    const rdt_json *cl = centres->items[l];
    if (cl->type != RDT_JSON_ARRAY) return rdt_json_bad(r, "a leaf's centres are malformed");
    sh->slot_start[l] = (uint32_t)k;
    uint64_t n = cl->n ? cl->n : 1;
    if (k + n > n_slots) return rdt_json_bad(r, "\"centres\" and \"leaves\" disagree");
    for (uint64_t q = 0; q < n; q++, k++) {
      double *dst = sh->centres + (size_t)k * nf;
      if (!cl->n) {
        for (uint32_t j = 0; j < nf; j++) dst[j] = NAN;
        continue;
      }
      const rdt_json *cv = cl->items[q];
      if (cv->type != RDT_JSON_ARRAY || cv->n != nf) return rdt_json_bad(r, "a centre is malformed");
      for (uint32_t j = 0; j < nf; j++) {
        if (cv->items[j]->type != RDT_JSON_NUMBER) return rdt_json_bad(r, "a centre is malformed");
        dst[j] = cv->items[j]->number;
      }
    }
  }
  if (k != n_slots) return rdt_json_bad(r, "\"centres\" and \"leaves\" disagree");
  sh->slot_start[leaf_no] = (uint32_t)k;
  return 1;
}

static void sharp_describe(const rdt_forest *f, rdt_forest_info_part part, rdt_bytes *o, rdt_info_real real) {
  const rdt_config *c = &f->config;
  const rdt_sharp *sh = f->sharp;
  (void)real;
  switch (part) {
    case RDT_FOREST_INFO_MECHANISM:
      rdt_json_putf(o, "\"mechanism\":\"RDT#: discrete Laplace noise of scale %u/epsilon on every class counter of every "
                       "centre of the %u primary trees (L1 sensitivity 1 per tree); the %u secondary trees count public "
                       "rows labelled by the primary trees (post-processing)\",",
                    c->primary_trees, c->primary_trees, c->trees - c->primary_trees);
      break;
    case RDT_FOREST_INFO_PARAMETERS: break;
    case RDT_FOREST_INFO_STRUCTURE: {
      rdt_json_putf(o, "\"layout\":\"multiway\",\"trees\":%u,\"depth\":%u,\"leaves\":%llu,", c->trees, c->depth,
                    (unsigned long long)rdt_matrix_leaves(f));
      uint64_t centres = 0;
      for (uint64_t k = 0; k < rdt_sharp_slots(f); k++) centres += !isnan(sh->centres[k * f->schema.n_features]);
      rdt_json_putf(o, "\"rdt#\":{\"primary_trees\":%u,\"secondary_trees\":%u,\"cells\":%u,\"bins\":%u,"
                       "\"public_rows\":%llu,\"centres\":%llu},",
                    c->primary_trees, c->trees - c->primary_trees, c->cells, c->bins,
                    (unsigned long long)sh->public_rows, (unsigned long long)centres);
      rdt_bytes_text(o, "\"public_tables\":[");
      for (uint32_t at = 0; at < c->public_tables_len; at += (uint32_t)strlen(c->public_tables + at) + 1) {
        if (at) rdt_json_put_char(o, ',');
        rdt_json_put_string(o, c->public_tables + at, strlen(c->public_tables + at));
      }
      rdt_bytes_text(o, f->format_minor >= 1 ? "]," : "],\"public_tables_recorded\":false,");
      rdt_bytes_text(o, "\"contains_public_rows\":\"YES: the centres are rows of public_query, stored verbatim; "
                        "publish this model only if those rows really are public\",");
      break;
    }
    case RDT_FOREST_INFO_SPLITS: break;
  }
}

const rdt_forest_kind rdt_forest_kind_sharp = {
    .algorithm = RDT_ALGO_SHARP,
    .name = "rdt#",
    .option = "rdt#",
    .note = "rdt#",
    .multiway = 1,
    .reads_public_rows = 1,
    .mechanism = RDT_MECH_SHARP,
    .sensitivity = sharp_sensitivity,
    .section = "SHRP",
    .stored_parameters_ok = sharp_stored_parameters_ok,
    .plan = sharp_plan,
    .build = sharp_build,
    .release = sharp_release,
    .neighbouring = "add/remove one private (labeled) row",
    .export_layout = sharp_export_layout,
    .import_layout = sharp_import_layout,
    .describe = sharp_describe,
};
