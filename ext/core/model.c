/* model.c - encode and validate model BLOBs; see model.h. */
#include "model.h"

#include "forests/forest_kind.h"
#include "forests/matrix.h"
#include "options.h"
#include "round.h"
#include "forests/sharp.h"
#include "forests/tree_selection.h"

#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define TAG_PRIVACY TAG('P', 'R', 'I', 'V')
#define TAG_SCHEMA TAG('S', 'C', 'H', 'M')
#define TAG_FOREST TAG('F', 'R', 'S', 'T')
#define TAG_NODES TAG('N', 'O', 'D', 'E')
#define TAG_LEAVES TAG('L', 'E', 'A', 'F')
#define TAG_SIGNATURE TAG('S', 'I', 'G', 'N')
#define TAG_MATRIX TAG('M', 'T', 'R', 'X')
#define TAG_CELLS TAG('C', 'E', 'L', 'L')
#define TAG_SHARP TAG('S', 'H', 'R', 'P')
#define TAG_CENTRES TAG('C', 'N', 'T', 'R')
#define TAG_KEPT TAG('K', 'E', 'P', 'T')
#define TAG_LEARNER TAG('L', 'R', 'N', 'R')
#define TAG_UNIT TAG('U', 'N', 'I', 'T')
#define TAG_LABEL TAG('L', 'A', 'B', 'L')
#define SECTION_REQUIRED 1u
#define SECTION_HEADER_BYTES 16
#define N_SECTIONS 5

/* PRIV's mechanism ids: the forest kinds' (forest_kind.h), and two more. */
#define MECH_DISCRETE_LAPLACE_LEAVES RDT_MECH_LEAF_LAPLACE
#define MECH_DIPRIME RDT_MECH_DIPRIME
#define MECH_MATRIX RDT_MECH_MATRIX
#define MECH_SHARP RDT_MECH_SHARP
#define MECH_NONE 0
#define MECH_LEARNER 5 /* the learner states its mechanism (learner.h) */
#define RELATION_ADD_REMOVE_ONE 1
#define LAYOUT_COMPLETE_BINARY 1
#define LAYOUT_MULTIWAY 2
#define LEAF_ENCODING_INT64 1

/* ---- writer ----------------------------------------------------------- */

typedef struct {
  unsigned char *p;
  size_t n;  /* bytes written (or that would be, when p is NULL) */
  rdt_cancel *cancel; /* the trainer's stop request (cancel.h), or NULL */
} writer;

/* Whether encoding must stop, asked every 1024 entries of a long table
** (about 32 noise draws' worth of copying, cancel.h). The sizing pass never
** stops. */
static int write_stopped(writer *w, size_t i) {
  return w->p && (i & 1023) == 0 && rdt_cancel_poll(w->cancel, 32);
}

static void put_bytes(writer *w, const void *src, size_t len) {
  if (w->p) memcpy(w->p + w->n, src, len);
  w->n += len;
}
static void put_u8(writer *w, uint8_t v) { put_bytes(w, &v, 1); }
static void put_u32(writer *w, uint32_t v) {
  unsigned char b[4];
  for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
  put_bytes(w, b, 4);
}
static void put_u64(writer *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  put_bytes(w, b, 8);
}
static void put_f64(writer *w, double d) {
  uint64_t v;
  memcpy(&v, &d, 8);
  put_u64(w, v);
}
static void put_str(writer *w, const char *s, size_t len) {
  put_u32(w, (uint32_t)len);
  put_bytes(w, s, len);
}
static void put_value(writer *w, const rdt_value *v) {
  put_u8(w, (uint8_t)v->type);
  if (v->type == RDT_VALUE_INTEGER) put_u64(w, (uint64_t)v->integer);
  else put_str(w, v->text, v->text_len);
}

static void section_begin_flags(writer *w, uint32_t tag, uint32_t flags, size_t *len_at) {
  put_u32(w, tag);
  put_u32(w, flags);
  *len_at = w->n;
  put_u64(w, 0); /* patched by section_end */
}
static void section_begin(writer *w, uint32_t tag, size_t *len_at) {
  put_u32(w, tag);
  put_u32(w, SECTION_REQUIRED);
  *len_at = w->n;
  put_u64(w, 0); /* patched by section_end */
}
static void section_end(writer *w, size_t len_at) {
  if (w->p) {
    uint64_t len = w->n - len_at - 8;
    for (int i = 0; i < 8; i++) w->p[len_at + i] = (unsigned char)(len >> (8 * i));
  }
}

/* The PRIV section's sensitivity, the algorithm's kind's (forest_kind.h):
** 0 for a kind that states none (DiPriMe). */
static uint32_t privacy_sensitivity(const rdt_forest *f) {
  const rdt_forest_kind *k = rdt_forest_kind_of(f->config.algorithm);
  return k->sensitivity ? k->sensitivity(f) : 0;
}

/* The section that follows FRST in a model of c's algorithm (MTRX, SHRP),
** or 0: which of them a decoder may read. */
static uint32_t kind_section(const rdt_config *c) {
  const char *t = rdt_forest_kind_of(c->algorithm)->section;
  return t ? TAG(t[0], t[1], t[2], t[3]) : 0;
}

static void write_matrix(writer *w, const rdt_forest *f) {
  const rdt_matrix *m = f->matrix;
  put_u32(w, f->config.bins);
  put_u32(w, m->strategy);
  for (int k = 0; k < RDT_N_STRATEGIES; k++) put_f64(w, m->factor[k]);
  put_f64(w, m->expected_variance);
  put_u32(w, m->n_tables);
  for (uint32_t g = 0; g < m->n_tables; g++) {
    put_u64(w, m->tables[g].eps.num);
    put_f64(w, m->tables[g].weight);
    put_u32(w, m->tables[g].n_attrs);
    for (uint32_t i = 0; i < m->tables[g].n_attrs; i++) put_u32(w, m->tables[g].attrs[i]);
  }
}

static void write_schema(writer *w, const rdt_schema *s) {
  size_t at;
  section_begin(w, TAG_SCHEMA, &at);
  put_u32(w, s->n_features);
  for (uint32_t i = 0; i < s->n_features; i++) {
    const rdt_feature *ft = &s->features[i];
    put_str(w, ft->name, strlen(ft->name));
    put_u8(w, (uint8_t)ft->type);
    if (ft->type == RDT_FEATURE_NUMERIC) {
      put_f64(w, ft->min);
      put_f64(w, ft->max);
    } else {
      put_u32(w, ft->n_values);
      for (uint32_t k = 0; k < ft->n_values; k++) put_value(w, &ft->values[k]);
    }
  }
  put_u32(w, s->n_classes);
  for (uint32_t k = 0; k < s->n_classes; k++) put_value(w, &s->classes[k]);
  section_end(w, at);
}

/* UNIT (unit.h): the privacy unit and the division of ε, required, right
** after SCHM, only in a release with unit facts (so every other model's
** bytes are unchanged): u64 eps_total_num, u64 eps_bounds_num, u64
** eps_quantile_num, u32 max_rows_per_unit, str column ("": a row), u32 m,
** then the m features with private bounds, ascending. A reader that does
** not know it refuses the model: without it, PRIV's ε would be read as the
** whole release's ε for one row. */
static void write_unit(writer *w, const rdt_unit *u) {
  if (!rdt_unit_active(u)) return;
  size_t at;
  section_begin(w, TAG_UNIT, &at);
  put_u64(w, u->eps_total.num);
  put_u64(w, u->eps_bounds.num);
  put_u64(w, u->eps_quantile.num);
  put_u32(w, u->max_rows);
  put_str(w, u->column, strlen(u->column));
  put_u32(w, u->n_private);
  for (uint32_t j = 0; j < RDT_MAX_FEATURES; j++)
    if (rdt_unit_is_private(u, j)) put_u32(w, j);
  section_end(w, at);
}

/* LABL (1.2): the label column's name, optional (flags 0: it changes no
** prediction), right after SCHM and UNIT, only for a label other than the
** default "label" (so every other model's bytes are unchanged, and it is a
** 1.1 model). The query forms of evaluation find the true labels under it. */
int rdt_model_has_label(const char *label) { return label && label[0] && !rdt_name_equal(label, "label"); }

static uint32_t format_version(const char *label) {
  return RDT_FORMAT_MAJOR << 16 | (rdt_model_has_label(label) ? 2u : 1u);
}

static void write_label(writer *w, const char *label) {
  if (!rdt_model_has_label(label)) return;
  size_t at;
  section_begin_flags(w, TAG_LABEL, 0, &at);
  put_str(w, label, strlen(label));
  section_end(w, at);
}

static void write_model(writer *w, const rdt_forest *f, uint64_t total) {
  const rdt_config *c = &f->config;
  const rdt_schema *s = &f->schema;
  size_t at;
  uint32_t flags = (c->seeded ? RDT_MODEL_FLAG_SEEDED : 0) | (c->is_private ? 0 : RDT_MODEL_FLAG_NONPRIVATE) |
                   (f->is_signed ? RDT_MODEL_FLAG_SIGNED : 0) |
                   (rdt_config_structure_from_rows(c) ? RDT_MODEL_FLAG_STRUCTURE_FROM_ROWS : 0) |
                   (f->schema.from_rows ? RDT_MODEL_FLAG_DOMAIN_FROM_ROWS : 0);
  put_bytes(w, RDT_MODEL_MAGIC, 8);
  put_u32(w, format_version(c->label));
  put_bytes(w, f->model_id, 16);
  put_u32(w, flags);
  put_u64(w, total);
  int cells = f->matrix && f->matrix->exact_cells;
  int kept = f->tree_kept != NULL;
  put_u32(w, N_SECTIONS + (f->matrix ? 1 : 0) + (f->sharp ? 1 : 0) + kept + cells + (f->is_signed ? 1 : 0) +
                 rdt_unit_active(&c->unit) + rdt_model_has_label(c->label));
  put_u32(w, 0);

  section_begin(w, TAG_PRIVACY, &at);
  uint32_t mech = c->is_private ? rdt_forest_kind_of(c->algorithm)->mechanism : MECH_NONE;
  put_u32(w, mech);
  put_u32(w, RELATION_ADD_REMOVE_ONE);
  put_u64(w, c->is_private ? c->eps.num : 0);
  put_u32(w, RDT_EPS_DEN_LOG2);
  put_u32(w, privacy_sensitivity(f));
  if (mech == MECH_DIPRIME) { /* the two sub-budgets actually used */
    put_u64(w, c->eps_query.num);
    put_u64(w, c->eps_leaf.num);
  }
  section_end(w, at);

  write_schema(w, s);
  write_unit(w, &c->unit);
  write_label(w, c->label);

  section_begin(w, TAG_FOREST, &at);
  put_u32(w, c->algorithm);
  put_u32(w, f->matrix ? LAYOUT_MULTIWAY : LAYOUT_COMPLETE_BINARY);
  put_u32(w, c->trees);
  put_u32(w, c->depth);
  put_u32(w, c->vote);
  put_u32(w, c->splits);
  put_u32(w, c->categorical);
  put_u32(w, c->task);
  put_f64(w, c->rho);
  put_u32(w, c->candidates);
  put_u32(w, (uint32_t)c->partition);
  put_f64(w, c->target_min);
  put_f64(w, c->target_max);
  put_u32(w, (uint32_t)c->auto_depth);      /* depth chosen from a row count ... */
  put_u64(w, c->eps_count.num);             /* ... paid with this much eps (part of the total) */
  put_u64(w, (uint64_t)c->noisy_rows);      /* ... and that released count */
  section_end(w, at);

  if (f->sharp) { /* RDT#: bins, p, N_CELLS, the public row count */
    section_begin(w, TAG_SHARP, &at);
    put_u32(w, f->config.bins);
    put_u32(w, f->config.primary_trees);
    put_u32(w, f->config.cells);
    put_u64(w, f->sharp->public_rows);
    /* 1.1: the tables public_query was allowed to read (NUL-terminated names). */
    put_str(w, f->config.public_tables, f->config.public_tables_len);
    section_end(w, at);
  } else if (f->matrix) {
    section_begin(w, TAG_MATRIX, &at);
    write_matrix(w, f);
    section_end(w, at);
  }

  section_begin(w, TAG_NODES, &at);
  if (f->matrix) { /* per tree: u32 node count, then (u32 feature, u32 next) */
    const rdt_matrix *m = f->matrix;
    for (uint32_t t = 0; t < c->trees; t++) {
      uint32_t a = m->node_start[t], b = m->node_start[t + 1];
      put_u32(w, b - a);
      if (!w->p) w->n += (size_t)(b - a) * 8;
      else for (uint32_t i = a; i < b; i++) {
        put_u32(w, m->nodes[i].feature);
        put_u32(w, m->nodes[i].next);
      }
    }
  } else {
    size_t nn = (size_t)c->trees * f->n_internal;
    if (!w->p) w->n += nn * 16; /* sizing pass: no need to walk the nodes */
    else for (size_t i = 0; i < nn; i++) {
      if (write_stopped(w, i)) return;
      put_u32(w, f->nodes[i].feature);
      put_u32(w, f->nodes[i].kind);
      put_f64(w, f->nodes[i].value);
    }
  }
  section_end(w, at);

  if (f->sharp) { /* per leaf: its centres (0: one centre without coordinates), each n_features f64 */
    const rdt_sharp *sh = f->sharp;
    uint32_t nf = s->n_features;
    section_begin(w, TAG_CENTRES, &at);
    for (uint64_t l = 0; l < rdt_matrix_leaves(f); l++) {
      uint32_t a = sh->slot_start[l], b = sh->slot_start[l + 1];
      int empty = isnan(sh->centres[(size_t)a * nf]);
      put_u32(w, empty ? 0 : b - a);
      if (empty) continue;
      if (!w->p) w->n += (size_t)(b - a) * nf * 8;
      else for (size_t i = (size_t)a * nf; i < (size_t)b * nf; i++) put_f64(w, sh->centres[i]);
    }
    section_end(w, at);
  }

  section_begin(w, TAG_LEAVES, &at);
  put_u32(w, LEAF_ENCODING_INT64);
  size_t nc = (size_t)rdt_forest_total_leaves(f) * rdt_config_slots(c, s->n_classes);
  if (!w->p) w->n += nc * 8;
  else for (size_t i = 0; i < nc; i++) {
    if (write_stopped(w, i)) return;
    put_u64(w, (uint64_t)f->counts[i]);
  }
  section_end(w, at);

  if (kept) { /* "keep_trees": the share asked for, then the voting trees in ascending order */
    section_begin(w, TAG_KEPT, &at);
    put_f64(w, c->keep_trees);
    put_u32(w, f->n_kept);
    for (uint32_t t = 0; t < c->trees; t++)
      if (f->tree_kept[t]) put_u32(w, t);
    section_end(w, at);
  }

  if (cells) { /* optional: a non-private matrix forest's exact table (DP batch prediction) */
    const rdt_mtable *tb = &f->matrix->exact;
    section_begin_flags(w, TAG_CELLS, 0, &at);
    put_u32(w, tb->n_attrs);
    for (uint32_t i = 0; i < tb->n_attrs; i++) put_u32(w, tb->attrs[i]);
    size_t n = (size_t)tb->cells * rdt_config_slots(c, s->n_classes);
    if (!w->p) w->n += n * 8;
    else for (size_t i = 0; i < n; i++) {
      if (write_stopped(w, i)) return;
      put_u64(w, (uint64_t)f->matrix->exact_cells[i]);
    }
    section_end(w, at);
  }

  if (f->is_signed) { /* last: the signature covers every byte before its own 64 */
    size_t note_len = f->note ? strlen(f->note) : 0;
    section_begin(w, TAG_SIGNATURE, &at);
    put_str(w, f->note ? f->note : "", note_len);
    put_bytes(w, f->public_key, 32);
    put_bytes(w, f->signature, RDT_SIGNATURE_BYTES);
    section_end(w, at);
  }
}

uint64_t rdt_model_size(const rdt_forest *f) {
  writer w = {NULL, 0, NULL}; /* a writer without memory only counts */
  write_model(&w, f, 0);
  return (uint64_t)w.n + RDT_CHECKSUM_BYTES;
}

/* BLAKE2b of buf[0..n) into out, a MiB at a time so that a stop request is
** seen (the same digest as one call). Returns 0 when stopped. */
#define CHECKSUM_STEP ((size_t)1 << 20)
static int checksum(unsigned char *out, const unsigned char *buf, size_t n, rdt_cancel *cancel) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, NULL, 0, RDT_CHECKSUM_BYTES);
  for (size_t at = 0; at < n; at += CHECKSUM_STEP) {
    if (rdt_cancel_poll(cancel, RDT_CANCEL_UNITS)) return 0; /* a MiB hashes in about a millisecond */
    crypto_generichash_update(&st, buf + at, n - at < CHECKSUM_STEP ? n - at : CHECKSUM_STEP);
  }
  crypto_generichash_final(&st, out, RDT_CHECKSUM_BYTES);
  return 1;
}

unsigned char *rdt_model_encode(const rdt_forest *f, size_t *size) {
  uint64_t total = rdt_model_size(f);
  if (total > SIZE_MAX) return NULL;
  unsigned char *buf = malloc((size_t)total);
  if (!buf) return NULL;
  writer w = {buf, 0, f->config.cancel};
  write_model(&w, f, total);
  if (rdt_cancel_stopped(w.cancel) || !checksum(buf + w.n, buf, w.n, w.cancel)) {
    free(buf); /* stopped: no model leaves (cancel.h, item 4) */
    return NULL;
  }
  *size = (size_t)total;
  return buf;
}

/* ---- reader ----------------------------------------------------------- */

typedef struct {
  const unsigned char *p;
  size_t n, pos;
  int bad;
} reader;

static int need(reader *r, size_t len) {
  if (r->bad || r->n - r->pos < len) {
    r->bad = 1;
    return 0;
  }
  return 1;
}
static uint8_t get_u8(reader *r) { return need(r, 1) ? r->p[r->pos++] : 0; }
static uint32_t get_u32(reader *r) {
  if (!need(r, 4)) return 0;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)r->p[r->pos + i] << (8 * i);
  r->pos += 4;
  return v;
}
static uint64_t get_u64(reader *r) {
  if (!need(r, 8)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)r->p[r->pos + i] << (8 * i);
  r->pos += 8;
  return v;
}
static double get_f64(reader *r) {
  uint64_t v = get_u64(r);
  double d;
  memcpy(&d, &v, 8);
  return d;
}
/* Returns a malloc'd NUL-terminated copy; rejects embedded NULs. */
static char *get_str(reader *r, size_t *len) {
  uint32_t n = get_u32(r);
  if (!need(r, n)) return NULL;
  if (memchr(r->p + r->pos, 0, n)) { r->bad = 1; return NULL; }
  char *s = malloc((size_t)n + 1);
  if (!s) { r->bad = 1; return NULL; }
  memcpy(s, r->p + r->pos, n);
  s[n] = 0;
  r->pos += n;
  *len = n;
  return s;
}
static int get_value(reader *r, rdt_value *v) {
  uint8_t type = get_u8(r);
  if (type == RDT_VALUE_INTEGER) return rdt_value_set_int(v, (long long)get_u64(r)) && !r->bad;
  if (type == RDT_VALUE_TEXT) {
    size_t len;
    char *s = get_str(r, &len);
    if (!s) return 0;
    v->type = RDT_VALUE_TEXT;
    v->text = s;
    v->text_len = len;
    return 1;
  }
  r->bad = 1;
  return 0;
}

/* The LABL section's name into label (RDT_MAX_NAME + 1 bytes): 1 to
** RDT_MAX_NAME bytes without NUL, never the default (one encoding per model). */
static int read_label(reader *r, char *label) {
  size_t len = 0;
  char *s = get_str(r, &len);
  int ok = s && len >= 1 && len <= RDT_MAX_NAME && rdt_model_has_label(s);
  if (ok) memcpy(label, s, len + 1);
  free(s);
  return ok;
}

static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return 0;
}

static int read_values(reader *r, rdt_value **out, uint32_t *count, uint32_t min, uint32_t max) {
  uint32_t n = get_u32(r);
  if (r->bad || n < min || n > max || n > r->n - r->pos) { r->bad = 1; return 0; }
  if (n == 0) return 1;
  *out = calloc(n, sizeof **out);
  if (!*out) { r->bad = 1; return 0; }
  *count = n;
  for (uint32_t i = 0; i < n; i++) {
    if (!get_value(r, &(*out)[i])) { r->bad = 1; return 0; }
  }
  return 1;
}

static int read_schema(reader *r, rdt_schema *s) {
  uint32_t nf = get_u32(r);
  if (r->bad || nf == 0 || nf > RDT_MAX_FEATURES) return 0;
  s->features = calloc(nf, sizeof *s->features);
  if (!s->features) return 0;
  s->n_features = nf;
  for (uint32_t i = 0; i < nf; i++) {
    rdt_feature *ft = &s->features[i];
    size_t len;
    ft->name = get_str(r, &len);
    if (!ft->name || len == 0 || len > RDT_MAX_NAME) return 0;
    ft->type = (rdt_feature_type)get_u8(r);
    if (ft->type == RDT_FEATURE_NUMERIC) {
      ft->min = get_f64(r);
      ft->max = get_f64(r);
      if (r->bad || !isfinite(ft->min) || !isfinite(ft->max) || !(ft->min < ft->max)) return 0;
    } else if (ft->type == RDT_FEATURE_CATEGORICAL) {
      if (!read_values(r, &ft->values, &ft->n_values, 1, RDT_MAX_VALUES)) return 0;
    } else {
      return 0;
    }
  }
  /* 0 classes: a regression model (checked against the task below). */
  if (!read_values(r, &s->classes, &s->n_classes, 0, RDT_MAX_CLASSES)) return 0;
  long what;
  uint32_t dup;
  for (uint32_t i = 0; i < nf; i++) /* as the options parser: feature names are unique */
    for (uint32_t k = 0; k < i; k++)
      if (strcmp(s->features[i].name, s->features[k].name) == 0) return 0;
  return rdt_schema_build_indexes(s, &what, &dup) == 1;
}

/* MTRX: bins, strategy, expected errors, measured tables (matrix.h). */
static int read_matrix(reader *r, rdt_forest *f) {
  rdt_matrix *m = calloc(1, sizeof *m);
  if (!m) return 0;
  f->matrix = m;
  f->multiway = &rdt_matrix_multiway;
  f->config.bins = get_u32(r);
  m->strategy = get_u32(r);
  for (int k = 0; k < RDT_N_STRATEGIES; k++) {
    m->factor[k] = get_f64(r);
    if (!(m->factor[k] >= 0)) return 0; /* NaN or negative; +inf: not available */
  }
  m->expected_variance = get_f64(r);
  uint32_t G = get_u32(r);
  uint32_t nf = f->schema.n_features;
  if (r->bad || f->config.bins < 2 || f->config.bins > RDT_MATRIX_MAX_BINS || m->strategy < RDT_STRATEGY_LEAF ||
      m->strategy > RDT_N_STRATEGIES || !isfinite(m->expected_variance) || m->expected_variance < 0 ||
      G > (r->n - r->pos) / 16)
    return 0;
  if (G && !(m->tables = calloc(G, sizeof *m->tables))) return 0;
  m->n_tables = G;
  for (uint32_t g = 0; g < G; g++) {
    rdt_mtable *tb = &m->tables[g];
    tb->eps.num = get_u64(r);
    tb->weight = get_f64(r);
    uint32_t n = get_u32(r);
    if (r->bad || n > nf || !isfinite(tb->weight) || tb->weight < 0 || tb->eps.num == 0) return 0;
    if (!(tb->attrs = malloc((n ? n : 1) * sizeof *tb->attrs))) return 0;
    tb->n_attrs = n;
    for (uint32_t i = 0; i < n; i++) {
      tb->attrs[i] = get_u32(r);
      if (r->bad || tb->attrs[i] >= nf || (i && tb->attrs[i] <= tb->attrs[i - 1])) return 0;
    }
  }
  return !r->bad && rdt_matrix_domains(f);
}

/* NODE of a multiway forest: per tree a node count and its nodes. */
static int read_multiway_nodes(reader *r, rdt_forest *f) {
  rdt_matrix *m = f->matrix;
  uint32_t k = f->config.trees, C = rdt_forest_slots(f);
  uint64_t total = (r->n - r->pos) / 8; /* an upper bound on the nodes */
  m->node_start = malloc((k + 1) * sizeof *m->node_start);
  m->leaf_start = malloc((k + 1) * sizeof *m->leaf_start);
  m->nodes = malloc((size_t)(total ? total : 1) * sizeof *m->nodes);
  if (!m->node_start || !m->leaf_start || !m->nodes) return 0;
  uint64_t n_nodes = 0, n_leaves = 0;
  for (uint32_t t = 0; t < k; t++) {
    uint32_t n = get_u32(r);
    if (r->bad || n == 0 || n > total - n_nodes) return 0;
    m->node_start[t] = (uint32_t)n_nodes;
    m->leaf_start[t] = (uint32_t)n_leaves;
    for (uint32_t i = 0; i < n; i++) {
      rdt_mnode *nd = &m->nodes[n_nodes + i];
      nd->feature = get_u32(r);
      nd->next = get_u32(r);
      n_leaves += nd->feature == RDT_MNODE_LEAF;
    }
    n_nodes += n;
    if (r->bad || n_nodes > UINT32_MAX / 2 || n_leaves > RDT_MAX_COUNTERS / C) return 0;
  }
  m->node_start[k] = (uint32_t)n_nodes;
  m->leaf_start[k] = (uint32_t)n_leaves;
  return rdt_matrix_check_structure(f);
}

/* CELL: the exact table over attributes; only in non-private models. */
static int read_cells(reader *r, rdt_forest *f) {
  rdt_matrix *m = f->matrix;
  uint32_t nf = f->schema.n_features, n = get_u32(r), C = rdt_forest_slots(f);
  if (r->bad || n > nf) return 0;
  uint8_t *in = calloc(nf, 1);
  if (!in) return 0;
  uint32_t prev = 0;
  for (uint32_t i = 0; i < n && !r->bad; i++) {
    uint32_t a = get_u32(r);
    if (a >= nf || (i && a <= prev)) r->bad = 1;
    else in[a] = 1;
    prev = a;
  }
  int ok = !r->bad && rdt_matrix_table_init(f, &m->exact, in, RDT_MATRIX_MAX_EXACT_COUNTERS / C);
  free(in);
  if (!ok || (r->n - r->pos) / 8 != m->exact.cells * C || (r->n - r->pos) % 8) return 0;
  if (!(m->exact_cells = malloc((size_t)m->exact.cells * C * sizeof *m->exact_cells))) return 0;
  for (uint64_t i = 0; i < m->exact.cells * C; i++) m->exact_cells[i] = (int64_t)get_u64(r);
  return !r->bad;
}

/* SHRP: bins, primary trees, N_CELLS, public rows (sharp.h). */
static int read_sharp(reader *r, rdt_forest *f) {
  f->matrix = calloc(1, sizeof *f->matrix);
  f->sharp = calloc(1, sizeof *f->sharp);
  f->multiway = &rdt_sharp_multiway;
  if (!f->matrix || !f->sharp) return 0;
  f->config.bins = get_u32(r);
  f->matrix->strategy = RDT_STRATEGY_LEAF;
  f->config.primary_trees = get_u32(r);
  f->config.cells = get_u32(r);
  f->sharp->public_rows = get_u64(r);
  if (f->format_minor >= 1) { /* the public tables: names, each NUL-terminated, none empty */
    uint32_t n = get_u32(r);
    if (!need(r, n) || n >= sizeof f->config.public_tables || (n && r->p[r->pos + n - 1] != 0)) return 0;
    for (uint32_t i = 0; i < n; i++)
      if (r->p[r->pos + i] == 0 && (i == 0 || r->p[r->pos + i - 1] == 0)) return 0;
    memcpy(f->config.public_tables, r->p + r->pos, n);
    f->config.public_tables_len = n;
    r->pos += n;
  }
  if (r->bad || f->config.bins < 2 || f->config.bins > RDT_MATRIX_MAX_BINS || f->config.primary_trees < 1 ||
      f->config.primary_trees > f->config.trees || f->config.cells < 1 || f->config.cells > RDT_SHARP_MAX_CELLS ||
      f->sharp->public_rows < 1 || f->sharp->public_rows > RDT_SHARP_MAX_PUBLIC_ROWS)
    return 0;
  return rdt_matrix_domains(f);
}

/* CNTR: per leaf a centre count (0: one centre without coordinates) and
** the centres' cleaned feature values. */
static int read_centres(reader *r, rdt_forest *f) {
  rdt_sharp *sh = f->sharp;
  uint32_t nf = f->schema.n_features, C = rdt_forest_slots(f);
  uint64_t L = rdt_matrix_leaves(f);
  sh->slot_start = malloc((size_t)(L + 1) * sizeof *sh->slot_start);
  if (!sh->slot_start) return 0;
  /* First pass: the counts, to size the centres; a centre takes 8 nf bytes. */
  size_t save = r->pos;
  uint64_t slots = 0;
  for (uint64_t l = 0; l < L; l++) {
    uint32_t n = get_u32(r);
    if (r->bad || n > (r->n - r->pos) / ((size_t)8 * nf)) return 0;
    r->pos += (size_t)n * nf * 8;
    sh->slot_start[l] = (uint32_t)slots;
    slots += n ? n : 1;
    if (slots > RDT_MAX_COUNTERS / C) return 0;
  }
  sh->slot_start[L] = (uint32_t)slots;
  r->pos = save;
  if (!(sh->centres = malloc((size_t)(slots ? slots : 1) * nf * sizeof *sh->centres))) return 0;
  for (uint64_t l = 0; l < L; l++) {
    uint32_t n = get_u32(r);
    double *dst = sh->centres + (size_t)sh->slot_start[l] * nf;
    if (n == 0) {
      for (uint32_t j = 0; j < nf; j++) dst[j] = NAN;
      continue;
    }
    for (size_t i = 0; i < (size_t)n * nf; i++) {
      dst[i] = get_f64(r);
      if (isnan(dst[i])) return 0; /* NaN marks the coordinate-less centre only */
    }
  }
  return !r->bad;
}

/* Table strategies: the tables' budgets add up to eps; otherwise none. */
static int matrix_budget_ok(const rdt_forest *f) {
  const rdt_matrix *m = f->matrix;
  int tables = f->config.is_private && m->strategy != RDT_STRATEGY_LEAF;
  if (!tables) return m->n_tables == 0 && (f->config.is_private || m->expected_variance == 0);
  if (m->n_tables == 0 || f->config.partition) return 0;
  uint64_t sum = 0;
  for (uint32_t g = 0; g < m->n_tables; g++) {
    if (m->tables[g].eps.num > f->config.eps.num - sum) return 0;
    sum += m->tables[g].eps.num;
  }
  return sum == f->config.eps.num;
}

/* UNIT (write_unit); its agreement with PRIV and SCHM is checked once both
** are read (rdt_unit_check). */
static int read_unit(reader *s, rdt_unit *u) {
  memset(u, 0, sizeof *u);
  u->eps_total.num = get_u64(s);
  u->eps_bounds.num = get_u64(s);
  u->eps_quantile.num = get_u64(s);
  u->max_rows = get_u32(s);
  size_t len = 0;
  char *column = get_str(s, &len);
  if (!column || len > RDT_MAX_NAME) {
    free(column);
    return 0;
  }
  memcpy(u->column, column, len + 1);
  free(column);
  uint32_t m = get_u32(s);
  if (s->bad || m > RDT_MAX_FEATURES || !need(s, (size_t)m * 4)) return 0;
  for (uint32_t i = 0, prev = 0; i < m; i++) {
    uint32_t j = get_u32(s);
    if (j >= RDT_MAX_FEATURES || (i && j <= prev)) return 0;
    rdt_unit_set_private(u, j);
    prev = j;
  }
  return u->n_private == m && rdt_unit_active(u);
}

/* KEPT: f64 share in (0, 1), u32 n, then n ascending tree indexes; n must
** be the count the share gives (tree_selection.h). */
static int read_kept(reader *s, rdt_forest *f) {
  uint32_t k = f->config.trees;
  double share = get_f64(s);
  uint32_t n = get_u32(s);
  if (s->bad || !(share > 0 && share < 1) || n != rdt_keep_count(k, share) || !need(s, (size_t)n * 4)) return 0;
  if (!(f->tree_kept = calloc(k, 1))) return 0;
  uint32_t prev = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t t = get_u32(s);
    if (t >= k || (i && t <= prev)) return 0;
    f->tree_kept[t] = 1;
    prev = t;
  }
  f->config.keep_trees = share;
  f->n_kept = n;
  return 1;
}

/* Whether the last 32 bytes are the checksum of the rest. A version this
** build does not read is told apart from a flipped bit by it: a model whose
** bytes were corrupted says so, whatever its version field reads. */
static int sums_up(const unsigned char *buf, size_t size) {
  unsigned char sum[RDT_CHECKSUM_BYTES];
  crypto_generichash(sum, sizeof sum, buf, size - RDT_CHECKSUM_BYTES, NULL, 0);
  return sodium_memcmp(sum, buf + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES) == 0;
}

/* A BLOB that is no model; a partial state (partial.h) is named, so that
** nobody mistakes it for one. */
static int not_a_model(const unsigned char *buf, size_t size, char *err, size_t en) {
  if (rdt_partial_magic(buf, size) && size >= 16 && buf[12] == RDT_PARTIAL_MASKED)
    return fail(err, en, "not an rdt model but a masked share of federated mode (RDTPART1, made by rdt_share or "
                         "rdt_merge): meaningless alone; rdt_finish(plan, the sum of every site's share) releases "
                         "the model");
  if (rdt_partial_magic(buf, size))
    return fail(err, en, "not an rdt model but an exact partial training state (RDTPART1, made by rdt_partial or "
                         "rdt_merge): private data of the sites' rows, never to be published; rdt_finish(plan, "
                         "merged) adds the noise and releases the model");
  if (rdt_round_magic(buf, size))
    return fail(err, en, "not an rdt model but a round message of shard mode (RDTROUND, made by rdt_finish): "
                         "public, for the sites' next rdt_partial(plan, query, message); the last round's "
                         "rdt_finish returns the model");
  return fail(err, en, "not an rdt model");
}

int rdt_model_decode(const unsigned char *buf, size_t size, rdt_forest *f, char *err, size_t en) {
  memset(f, 0, sizeof *f);
  if (size < 8 || memcmp(buf, RDT_MODEL_MAGIC, 8) != 0) return not_a_model(buf, size, err, en);
  if (size < RDT_HEADER_BYTES + RDT_CHECKSUM_BYTES) return fail(err, en, "model is truncated");
  reader r = {buf, size - RDT_CHECKSUM_BYTES, 8, 0};
  uint32_t version = get_u32(&r);
  if (version >> 16 != RDT_FORMAT_MAJOR)
    return sums_up(buf, size) ? fail(err, en, "unsupported model format version %u.%u (this build reads %u.x)",
                                     version >> 16, version & 0xFFFF, RDT_FORMAT_MAJOR)
                              : fail(err, en, "model checksum mismatch (corrupted or edited)");
  f->format_minor = version & 0xFFFF;
  memcpy(f->model_id, buf + r.pos, 16);
  r.pos += 16;
  uint32_t flags = get_u32(&r);
  uint64_t total = get_u64(&r);
  if (flags & RDT_MODEL_FLAG_LEARNER) /* rdt_info names its algorithm */
    return fail(err, en, "this model is not a forest but a learner model: it has no trees, nodes or batch answers");
  if (total > size) return fail(err, en, "model is truncated (%zu of %llu bytes)", size, (unsigned long long)total);
  if (total < size)
    return fail(err, en, "invalid model: %zu bytes where its header says %llu (corrupted or edited)", size,
                (unsigned long long)total);
  unsigned char sum[RDT_CHECKSUM_BYTES];
  crypto_generichash(sum, sizeof sum, buf, size - RDT_CHECKSUM_BYTES, NULL, 0);
  if (sodium_memcmp(sum, buf + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES) != 0)
    return fail(err, en, "model checksum mismatch (corrupted or edited)");

  /* From here on the bytes are what an encoder wrote, but an encoder may be
  ** hostile (checksums are not signatures): keep validating everything. */
  uint32_t n_sections = get_u32(&r);
  (void)get_u32(&r);
  rdt_config *c = &f->config;
  c->unit.max_rows = 1; /* the unit is a row unless a UNIT section says otherwise */
  int seen_priv = 0, seen_schema = 0, seen_forest = 0, seen_nodes = 0, seen_leaves = 0, seen_centres = 0;
  int seen_unit = 0, seen_label = 0;
  uint32_t mech = 0, sensitivity = 0;
  const char *why = "malformed section";
  for (uint32_t i = 0; i < n_sections && !r.bad; i++) {
    uint32_t tag = get_u32(&r), sflags = get_u32(&r);
    uint64_t len = get_u64(&r);
    if (r.bad || len > r.n - r.pos) {
      why = "section length out of bounds";
      r.bad = 1;
      break;
    }
    reader s = {buf, r.pos + (size_t)len, r.pos, 0};
    r.pos += (size_t)len;
    if (tag == TAG_PRIVACY && !seen_priv) {
      seen_priv = 1;
      mech = get_u32(&s);
      uint32_t relation = get_u32(&s);
      c->eps.num = get_u64(&s);
      uint32_t den = get_u32(&s);
      sensitivity = get_u32(&s);
      if (relation != RELATION_ADD_REMOVE_ONE || den != RDT_EPS_DEN_LOG2) { why = "unknown privacy facts"; s.bad = 1; }
      if (mech == MECH_DISCRETE_LAPLACE_LEAVES) {
        if (c->eps.num == 0 || rdt_eps_to_double(c->eps) > RDT_EPS_MAX) s.bad = 1;
        c->is_private = 1;
      } else if (mech == MECH_DIPRIME) {
        c->eps_query.num = get_u64(&s);
        c->eps_leaf.num = get_u64(&s);
        if (c->eps.num == 0 || rdt_eps_to_double(c->eps) > RDT_EPS_MAX || c->eps_query.num == 0 ||
            c->eps_leaf.num == 0 || c->eps_query.num > c->eps.num || c->eps_leaf.num > c->eps.num)
          s.bad = 1;
        c->is_private = 1;
      } else if (mech == MECH_MATRIX || mech == MECH_SHARP) {
        if (c->eps.num == 0 || rdt_eps_to_double(c->eps) > RDT_EPS_MAX) s.bad = 1;
        c->is_private = 1;
      } else if (mech == MECH_NONE) {
        c->is_private = 0;
      } else {
        why = "unknown privacy mechanism";
        s.bad = 1;
      }
    } else if (tag == TAG_SCHEMA && !seen_schema) {
      seen_schema = 1;
      if (!read_schema(&s, &f->schema)) { why = "malformed schema"; s.bad = 1; }
    } else if (tag == TAG_UNIT && !seen_unit && !seen_label && seen_schema && !seen_forest) {
      seen_unit = 1;
      if (!read_unit(&s, &c->unit)) { why = "malformed privacy unit"; s.bad = 1; }
    } else if (tag == TAG_LABEL && !seen_label && seen_schema && !seen_forest && sflags == 0 &&
               f->format_minor >= 2) {
      seen_label = 1;
      if (!read_label(&s, c->label)) { why = "malformed label section"; s.bad = 1; }
    } else if (tag == TAG_FOREST && !seen_forest) {
      seen_forest = 1;
      c->algorithm = (rdt_algorithm)get_u32(&s);
      uint32_t layout = get_u32(&s);
      c->trees = get_u32(&s);
      c->depth = get_u32(&s);
      c->vote = (rdt_vote)get_u32(&s);
      c->splits = (rdt_split_domain)get_u32(&s);
      c->categorical = (rdt_categorical)get_u32(&s);
      c->task = (rdt_task)get_u32(&s);
      c->rho = get_f64(&s);
      c->candidates = get_u32(&s);
      c->partition = (int)get_u32(&s);
      c->target_min = get_f64(&s);
      c->target_max = get_f64(&s);
      c->auto_depth = (int)get_u32(&s);
      c->eps_count.num = get_u64(&s);
      c->noisy_rows = (int64_t)get_u64(&s);
      /* The stored value is the algorithm's identity: one with a kind
      ** (forest_kind.h), whose own parameters it checks. */
      const rdt_forest_kind *kind = rdt_forest_kind_find(c->algorithm);
      if (!kind || layout != (kind->multiway ? LAYOUT_MULTIWAY : LAYOUT_COMPLETE_BINARY) || c->trees < 1 ||
          c->task < RDT_TASK_CLASSIFICATION || c->task > RDT_TASK_REGRESSION || c->auto_depth < 0 ||
          c->auto_depth > 1 || (!c->auto_depth && (c->eps_count.num || c->noisy_rows)) ||
          !kind->stored_parameters_ok(c) ||
          (c->task == RDT_TASK_REGRESSION &&
           !(isfinite(c->target_min) && isfinite(c->target_max) && c->target_min < c->target_max &&
             isfinite(c->target_max - c->target_min))) ||
          c->trees > RDT_MAX_TREES || c->depth < 1 || c->depth > RDT_MAX_DEPTH || c->vote < RDT_VOTE_MAJORITY ||
          c->vote > RDT_VOTE_WEIGHT || c->splits < RDT_SPLITS_REACHABLE || c->splits > RDT_SPLITS_GLOBAL ||
          c->categorical < RDT_CATEGORICAL_SUBSET || c->categorical > RDT_CATEGORICAL_ONE_VS_REST) { why = "malformed forest parameters"; s.bad = 1; }
    } else if (tag == TAG_MATRIX && !f->matrix && seen_forest && seen_schema && !seen_nodes &&
               kind_section(c) == TAG_MATRIX) {
      if (!read_matrix(&s, f)) { why = "malformed matrix section"; s.bad = 1; }
    } else if (tag == TAG_SHARP && !f->matrix && seen_forest && seen_schema && !seen_nodes &&
               kind_section(c) == TAG_SHARP) {
      if (!read_sharp(&s, f)) { why = "malformed RDT# section"; s.bad = 1; }
    } else if (tag == TAG_NODES && !seen_nodes && f->matrix) {
      seen_nodes = 1;
      if (!read_multiway_nodes(&s, f)) { why = "malformed multiway node table"; s.bad = 1; }
    } else if (tag == TAG_CENTRES && f->sharp && seen_nodes && !seen_centres && !seen_leaves) {
      seen_centres = 1;
      if (!read_centres(&s, f)) { why = "malformed RDT# centres"; s.bad = 1; }
    } else if (tag == TAG_NODES && !seen_nodes && seen_forest && seen_schema && kind_section(c) != TAG_MATRIX) {
      seen_nodes = 1;
      f->n_leaves = (uint32_t)1 << c->depth;
      f->n_internal = f->n_leaves - 1;
      uint64_t nn = (uint64_t)c->trees * f->n_internal;
      const char *node_why = "malformed node";
      if (nn * 16 != len || rdt_forest_counters(c, rdt_forest_slots(f)) == 0) { node_why = "node table has the wrong size"; s.bad = 1; nn = 0; }
      else if (!(f->nodes = calloc((size_t)nn + 1, sizeof *f->nodes))) { node_why = "out of memory"; s.bad = 1; nn = 0; }
      for (uint64_t k = 0; k < nn && !s.bad; k++) {
        rdt_node *nd = &f->nodes[k];
        nd->feature = get_u32(&s);
        nd->kind = get_u32(&s);
        nd->value = get_f64(&s);
        if (nd->kind == RDT_SPLIT_NONE) { /* canonical: a walk may read xs[feature] */
          if (nd->feature != 0 || nd->value != 0) s.bad = 1;
          continue;
        }
        if (nd->feature >= f->schema.n_features) { s.bad = 1; break; }
        const rdt_feature *ft = &f->schema.features[nd->feature];
        if (nd->kind == RDT_SPLIT_NUMERIC) {
          if (ft->type != RDT_FEATURE_NUMERIC || !isfinite(nd->value)) s.bad = 1;
        } else if (nd->kind == RDT_SPLIT_CATEGORY_SUBSET) {
          if (ft->type != RDT_FEATURE_CATEGORICAL) s.bad = 1; /* any 64 mask bits are valid */
        } else if (nd->kind == RDT_SPLIT_CATEGORY_EQ) {
          if (ft->type != RDT_FEATURE_CATEGORICAL || !(nd->value >= 0 && nd->value <= ft->n_values) ||
              nd->value != floor(nd->value)) s.bad = 1;
        } else {
          s.bad = 1;
        }
      }
      if (s.bad) why = node_why;
    } else if (tag == TAG_LEAVES && !seen_leaves && seen_nodes && (!f->sharp || seen_centres)) {
      seen_leaves = 1;
      uint32_t enc = get_u32(&s);
      uint64_t nc = rdt_forest_total_leaves(f) * rdt_forest_slots(f);
      if (enc != LEAF_ENCODING_INT64 || len != 4 + nc * 8) { why = "leaf table has the wrong size"; s.bad = 1; }
      else if (!(f->counts = malloc((size_t)nc * sizeof *f->counts))) { why = "out of memory"; s.bad = 1; }
      else for (uint64_t k = 0; k < nc; k++) f->counts[k] = (int64_t)get_u64(&s);
    } else if (tag == TAG_KEPT && !f->tree_kept && seen_leaves && c->task == RDT_TASK_CLASSIFICATION) {
      if (!read_kept(&s, f)) { why = "malformed list of voting trees"; s.bad = 1; }
    } else if (tag == TAG_CELLS && f->matrix && !f->sharp && !f->matrix->exact_cells && seen_leaves && !c->is_private &&
               !c->partition) {
      if (!read_cells(&s, f)) { why = "malformed cell table"; s.bad = 1; }
    } else if (tag == TAG_SIGNATURE && !f->is_signed && seen_leaves && s.n == r.n) { /* must be last */
      size_t note_len;
      f->note = get_str(&s, &note_len);
      if (!f->note || note_len > RDT_MAX_NOTE || !need(&s, 32 + RDT_SIGNATURE_BYTES)) {
        why = "malformed signature";
        s.bad = 1;
      } else {
        memcpy(f->public_key, buf + s.pos, 32);
        memcpy(f->signature, buf + s.pos + 32, RDT_SIGNATURE_BYTES);
        s.pos += 32 + RDT_SIGNATURE_BYTES;
        f->is_signed = 1;
      }
    } else if (sflags & SECTION_REQUIRED) {
      why = "unknown or misplaced required section";
      s.bad = 1;
    } else {
      s.pos = s.n; /* an optional section this version does not know: skipped */
    }
    if (s.bad || s.pos != s.n) { r.bad = 1; if (!s.bad) why = "section has trailing bytes"; }
  }
  if (!r.bad && r.pos != r.n) { r.bad = 1; why = "trailing bytes after the last section"; }
  if (!r.bad && !(seen_priv && seen_schema && seen_forest && seen_nodes && seen_leaves)) {
    r.bad = 1;
    why = "a required section is missing";
  }
  if (!r.bad && seen_unit && (!c->is_private || !rdt_unit_check(&c->unit, c->eps, &f->schema))) {
    r.bad = 1;
    why = "the privacy unit's budgets disagree with the privacy facts";
  }
  if (!r.bad && sensitivity != privacy_sensitivity(f)) {
    r.bad = 1;
    why = "privacy facts disagree with the forest";
  }
  if (!r.bad && f->sharp && !rdt_sharp_check(f)) {
    r.bad = 1;
    why = "RDT# centres disagree with the schema";
  }
  if (!r.bad && f->matrix && !f->sharp && !matrix_budget_ok(f)) {
    r.bad = 1;
    why = "the matrix tables' budgets disagree with the privacy facts";
  }
  if (!r.bad && c->is_private && mech != rdt_forest_kind_of(c->algorithm)->mechanism) {
    r.bad = 1;
    why = "privacy mechanism disagrees with the algorithm";
  }
  if (!r.bad && (c->eps_count.num != 0) != (c->auto_depth && c->is_private)) {
    r.bad = 1;
    why = "the row count's budget disagrees with the privacy facts";
  }
  if (!r.bad && c->is_private && c->eps_count.num >= c->eps.num) {
    r.bad = 1;
    why = "the row count's budget exceeds the total";
  }
  if (!r.bad && (f->schema.n_classes == 0) != (c->task == RDT_TASK_REGRESSION)) {
    r.bad = 1;
    why = "classes disagree with the task";
  }
  if (!r.bad && ((flags & RDT_MODEL_FLAG_NONPRIVATE) != 0) == (c->is_private != 0)) {
    r.bad = 1;
    why = "privacy flag disagrees with the privacy section";
  }
  /* 1.0 models carry no structure flag: it is derived, as for 1.1. */
  if (!r.bad && f->format_minor >= 1 &&
      ((flags & RDT_MODEL_FLAG_STRUCTURE_FROM_ROWS) != 0) != (rdt_config_structure_from_rows(c) != 0)) {
    r.bad = 1;
    why = "structure flag disagrees with the forest section";
  }
  if (!r.bad && ((flags & RDT_MODEL_FLAG_SIGNED) != 0) != (f->is_signed != 0)) {
    r.bad = 1;
    why = "signature flag disagrees with the sections";
  }
  if (r.bad) {
    rdt_forest_free(f);
    return fail(err, en, "invalid model: %s", why);
  }
  c->seeded = (flags & RDT_MODEL_FLAG_SEEDED) != 0;
  f->schema.from_rows = (flags & RDT_MODEL_FLAG_DOMAIN_FROM_ROWS) != 0;
  if (!rdt_forest_index(f) || !rdt_forest_prepare(f)) {
    rdt_forest_free(f);
    return fail(err, en, "out of memory");
  }
  return 1;
}

/* ---- learner models (learner.h) ------------------------------------------
** Header as above with flag RDT_MODEL_FLAG_LEARNER; three sections: PRIV
** (mechanism MECH_LEARNER, sensitivity 0: the learner states its own),
** SCHM, and LRNR: u32 learner id, u32 task (1 classification, 2
** regression), f64 target_min, f64 target_max, then the learner's payload
** (its encode()), to the end of the section; UNIT (unit facts) and LABL (a
** label name) may stand between SCHM and LRNR, SIGN last. */

static void write_learned(writer *w, const rdt_learned *m, const rdt_bytes *payload, uint64_t total) {
  const rdt_learn_common *c = &m->common;
  size_t at;
  put_bytes(w, RDT_MODEL_MAGIC, 8);
  put_u32(w, format_version(m->label));
  put_bytes(w, m->model_id, 16);
  put_u32(w, RDT_MODEL_FLAG_LEARNER | (c->seeded ? RDT_MODEL_FLAG_SEEDED : 0) |
                 (c->is_private ? 0 : RDT_MODEL_FLAG_NONPRIVATE) | (m->is_signed ? RDT_MODEL_FLAG_SIGNED : 0) |
                 (m->schema.from_rows ? RDT_MODEL_FLAG_DOMAIN_FROM_ROWS : 0));
  put_u64(w, total);
  put_u32(w, 3 + (m->is_signed ? 1 : 0) + rdt_unit_active(&c->unit) + rdt_model_has_label(m->label));
  put_u32(w, 0);
  section_begin(w, TAG_PRIVACY, &at);
  put_u32(w, c->is_private ? MECH_LEARNER : MECH_NONE);
  put_u32(w, RELATION_ADD_REMOVE_ONE);
  put_u64(w, c->is_private ? c->eps.num : 0);
  put_u32(w, RDT_EPS_DEN_LOG2);
  put_u32(w, 0);
  section_end(w, at);
  write_schema(w, &m->schema);
  write_unit(w, &c->unit);
  write_label(w, m->label);
  section_begin(w, TAG_LEARNER, &at);
  put_u32(w, m->learner->id);
  put_u32(w, c->regression ? RDT_TASK_REGRESSION : RDT_TASK_CLASSIFICATION);
  put_f64(w, c->target_min);
  put_f64(w, c->target_max);
  put_bytes(w, payload->p, payload->n);
  section_end(w, at);
  if (m->is_signed) { /* last: the signature covers every byte before it */
    section_begin(w, TAG_SIGNATURE, &at);
    put_str(w, m->note ? m->note : "", m->note ? strlen(m->note) : 0);
    put_bytes(w, m->public_key, 32);
    put_bytes(w, m->signature, RDT_SIGNATURE_BYTES);
    section_end(w, at);
  }
}

unsigned char *rdt_learned_encode(const rdt_learned *m, size_t *size) {
  rdt_bytes payload = {0};
  m->learner->encode(m->state, &payload);
  if (payload.oom) {
    rdt_bytes_free(&payload);
    return NULL;
  }
  writer count = {NULL, 0, NULL};
  write_learned(&count, m, &payload, 0);
  uint64_t total = (uint64_t)count.n + RDT_CHECKSUM_BYTES;
  unsigned char *buf = total <= SIZE_MAX ? malloc((size_t)total) : NULL;
  if (buf) {
    writer w = {buf, 0, NULL};
    write_learned(&w, m, &payload, total);
    crypto_generichash(buf + w.n, RDT_CHECKSUM_BYTES, buf, w.n, NULL, 0);
    *size = (size_t)total;
  }
  rdt_bytes_free(&payload);
  return buf;
}

int rdt_model_is_learned(const unsigned char *buf, size_t size) {
  if (size < RDT_HEADER_BYTES || memcmp(buf, RDT_MODEL_MAGIC, 8) != 0) return 0;
  uint32_t flags = 0;
  for (int i = 0; i < 4; i++) flags |= (uint32_t)buf[28 + i] << (8 * i);
  return (flags & RDT_MODEL_FLAG_LEARNER) != 0;
}

void rdt_learned_free(rdt_learned *m) {
  if (m->learner && m->state) m->learner->free(m->state);
  free(m->note);
  rdt_schema_free(&m->schema);
  memset(m, 0, sizeof *m);
}

int rdt_learned_decode(const unsigned char *buf, size_t size, rdt_learner_lookup by_id, rdt_learned *m, char *err,
                       size_t en) {
  memset(m, 0, sizeof *m);
  if (size < 8 || memcmp(buf, RDT_MODEL_MAGIC, 8) != 0) return not_a_model(buf, size, err, en);
  if (size < RDT_HEADER_BYTES + RDT_CHECKSUM_BYTES) return fail(err, en, "model is truncated");
  reader r = {buf, size - RDT_CHECKSUM_BYTES, 8, 0};
  uint32_t version = get_u32(&r);
  if (version >> 16 != RDT_FORMAT_MAJOR || (version & 0xFFFF) < 1)
    return sums_up(buf, size) ? fail(err, en, "unsupported model format version %u.%u for a learner model",
                                     version >> 16, version & 0xFFFF)
                              : fail(err, en, "model checksum mismatch (corrupted or edited)");
  m->format_minor = version & 0xFFFF;
  memcpy(m->model_id, buf + r.pos, 16);
  r.pos += 16;
  uint32_t flags = get_u32(&r);
  uint64_t total = get_u64(&r);
  if (total != size) return fail(err, en, "model is truncated or has trailing bytes (corrupted or edited)");
  unsigned char sum[RDT_CHECKSUM_BYTES];
  crypto_generichash(sum, sizeof sum, buf, size - RDT_CHECKSUM_BYTES, NULL, 0);
  if (sodium_memcmp(sum, buf + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES) != 0)
    return fail(err, en, "model checksum mismatch (corrupted or edited)");
  uint32_t n_sections = get_u32(&r);
  uint32_t reserved = get_u32(&r);
  const char *why = "malformed section";
  rdt_learn_common *c = &m->common;
  /* One encoding per model: re-encoding a decoded model gives its bytes back. */
  if (reserved != 0) return fail(err, en, "invalid model: reserved header field is not 0");
  int is_signed = (flags & RDT_MODEL_FLAG_SIGNED) != 0;
  c->unit.max_rows = 1; /* the unit is a row unless a UNIT section says otherwise */
  int seen_unit = 0, seen_label = 0, seen = 0,
      bad = n_sections < 3u + (uint32_t)is_signed || n_sections > 5u + (uint32_t)is_signed ||
                      (flags & ~(RDT_MODEL_FLAG_LEARNER | RDT_MODEL_FLAG_SEEDED | RDT_MODEL_FLAG_NONPRIVATE |
                                 RDT_MODEL_FLAG_SIGNED | RDT_MODEL_FLAG_DOMAIN_FROM_ROWS)) != 0;
  for (uint32_t i = 0; i < n_sections && !bad && !r.bad; i++) {
    uint32_t tag = get_u32(&r), sflags = get_u32(&r);
    uint64_t len = get_u64(&r);
    if (r.bad || len > r.n - r.pos) { why = "section length out of bounds"; bad = 1; break; }
    /* Every section is required but LABL, which is optional (flags 0). */
    if (sflags != (tag == TAG_LABEL ? 0u : SECTION_REQUIRED)) { why = "section flags"; bad = 1; break; }
    reader s = {buf, r.pos + (size_t)len, r.pos, 0};
    r.pos += (size_t)len;
    uint32_t after = 2u + (uint32_t)seen_unit + (uint32_t)seen_label; /* LRNR's place */
    if (i == 0 && tag == TAG_PRIVACY) {
      uint32_t mech = get_u32(&s), relation = get_u32(&s);
      c->eps.num = get_u64(&s);
      uint32_t den = get_u32(&s), sens = get_u32(&s);
      c->is_private = mech == MECH_LEARNER;
      if (relation != RELATION_ADD_REMOVE_ONE || den != RDT_EPS_DEN_LOG2 || sens != 0 ||
          (mech != MECH_LEARNER && mech != MECH_NONE) || (c->is_private ? c->eps.num == 0 : c->eps.num != 0) ||
          ((flags & RDT_MODEL_FLAG_NONPRIVATE) != 0) == c->is_private) { why = "unknown privacy facts"; bad = 1; }
    } else if (i == 1 && tag == TAG_SCHEMA) {
      if (!read_schema(&s, &m->schema)) { why = "malformed schema"; bad = 1; }
      m->schema.from_rows = (flags & RDT_MODEL_FLAG_DOMAIN_FROM_ROWS) != 0;
    } else if (i == 2 && tag == TAG_UNIT) { /* optional: between SCHM and LRNR */
      seen_unit = 1;
      if (!read_unit(&s, &c->unit)) { why = "malformed privacy unit"; bad = 1; }
    } else if (i == 2u + (uint32_t)seen_unit && tag == TAG_LABEL && m->format_minor >= 2) {
      seen_label = 1; /* optional: after SCHM (and UNIT), before LRNR */
      if (!read_label(&s, m->label)) { why = "malformed label section"; bad = 1; }
    } else if (i == after && tag == TAG_LEARNER) {
      m->learner = by_id(get_u32(&s));
      uint32_t task = get_u32(&s);
      c->target_min = get_f64(&s);
      c->target_max = get_f64(&s);
      c->regression = task == RDT_TASK_REGRESSION;
      c->seeded = (flags & RDT_MODEL_FLAG_SEEDED) != 0;
      if (s.bad || !m->learner || (task != RDT_TASK_REGRESSION && task != RDT_TASK_CLASSIFICATION) ||
          !(m->learner->tasks & (c->regression ? RDT_LEARN_REGRESSION : RDT_LEARN_CLASSIFICATION)) ||
          (m->schema.n_classes == 0) != c->regression ||
          (c->regression && !(isfinite(c->target_min) && isfinite(c->target_max) && c->target_min < c->target_max &&
                              isfinite(c->target_max - c->target_min)))) {
        why = "unknown learner or task";
        bad = 1;
      } else {
        rdt_reader lr = {buf, s.n, s.pos, 0};
        m->state = m->learner->decode(&lr, &m->schema, c);
        if (!m->state || lr.bad || lr.pos != lr.n) { why = "malformed learner state"; bad = 1; }
      }
      seen = 1;
      s.pos = s.n; /* the learner's reader checked it read the payload to its end */
    } else if (i == after + 1 && seen && tag == TAG_SIGNATURE && is_signed) {
      size_t note_len = 0;
      m->note = get_str(&s, &note_len);
      if (!m->note || note_len > RDT_MAX_NOTE || !need(&s, 32 + RDT_SIGNATURE_BYTES)) {
        why = "malformed signature section";
        bad = 1;
      } else {
        memcpy(m->public_key, buf + s.pos, 32);
        memcpy(m->signature, buf + s.pos + 32, RDT_SIGNATURE_BYTES);
        s.pos += 32 + RDT_SIGNATURE_BYTES;
        m->is_signed = 1;
      }
    } else {
      bad = 1;
    }
    if (s.bad) bad = 1;
    if (!bad && s.pos != s.n) { why = "section has trailing bytes"; bad = 1; } /* one encoding per model */
  }
  if (!bad && !r.bad && n_sections != 3u + (uint32_t)is_signed + (uint32_t)seen_unit + (uint32_t)seen_label) {
    why = "wrong number of sections";
    bad = 1;
  }
  if (!bad && !r.bad && seen_unit && (!c->is_private || !rdt_unit_check(&c->unit, c->eps, &m->schema))) {
    why = "the privacy unit's budgets disagree with the privacy facts";
    bad = 1;
  }
  if (bad || r.bad || !seen || r.pos != r.n) {
    rdt_learned_free(m);
    return fail(err, en, "invalid model: %s", why);
  }
  return 1;
}
