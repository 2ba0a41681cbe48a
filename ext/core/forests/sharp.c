/* sharp.c - RDT# trees; see sharp.h for the privacy contract. */
#include "sharp.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"

static double mean_bins(const rdt_schema *s, uint32_t bins);

uint32_t rdt_sharp_depth(const rdt_schema *s, uint32_t bins, double n) {
  double b = mean_bins(s, bins);
  uint32_t half = s->n_features / 2, h = half;
  if (b > 1 && n >= 1) {
    double logb = floor(log(n) / log(b) + 1e-9) + 1;
    if (logb < h) h = (uint32_t)logb;
  }
  if (h < 1) h = 1;
  if (h > RDT_MAX_DEPTH) h = RDT_MAX_DEPTH;
  return h;
}

static double mean_bins(const rdt_schema *s, uint32_t bins) {
  double b = 0;
  for (uint32_t j = 0; j < s->n_features; j++)
    b += s->features[j].type == RDT_FEATURE_NUMERIC ? bins : s->features[j].n_values;
  return b / s->n_features;
}

uint32_t rdt_sharp_primary(const rdt_schema *s, uint32_t bins, uint32_t depth, double n, double eps) {
  double leaves = pow(mean_bins(s, bins), depth);
  double p = floor(eps * n / (RDT_SHARP_SIGNAL_TO_NOISE * leaves) + 0.5);
  if (!(p >= 1)) p = 1;
  if (p > RDT_SHARP_MAX_AUTO_TREES) p = RDT_SHARP_MAX_AUTO_TREES;
  return (uint32_t)p;
}

uint64_t rdt_sharp_slots(const rdt_forest *f) {
  return f->sharp ? f->sharp->slot_start[rdt_matrix_leaves(f)] : 0;
}

void rdt_sharp_free(rdt_sharp *s) {
  if (!s) return;
  free(s->slot_start);
  free(s->centres);
  free(s);
}

/* ---- distance and slots ---------------------------------------------- */

#ifdef RDT_COUNT_WORK
_Atomic uint64_t rdt_sharp_distance_evals;
#endif

static double distance(const rdt_schema *s, const double *x, const double *c) {
#ifdef RDT_COUNT_WORK
  rdt_sharp_distance_evals++;
#endif
  double d = 0;
  for (uint32_t j = 0; j < s->n_features; j++) {
    const rdt_feature *ft = &s->features[j];
    if (ft->type == RDT_FEATURE_NUMERIC) d += fabs(x[j] - c[j]) / (ft->max - ft->min);
    else d += x[j] != c[j];
  }
  return d;
}

uint64_t rdt_sharp_slot(const rdt_forest *f, uint32_t t, const double *xs, const uint32_t *bins) {
  const rdt_sharp *sh = f->sharp;
  uint32_t nf = f->schema.n_features;
  uint64_t leaf = rdt_matrix_leaf(f, t, bins);
  uint64_t a = sh->slot_start[leaf], b = sh->slot_start[leaf + 1], best = a;
  if (b - a > 1) {
    double bd = distance(&f->schema, xs, sh->centres + a * nf);
    for (uint64_t k = a + 1; k < b; k++) {
      double d = distance(&f->schema, xs, sh->centres + k * nf);
      if (d < bd) {
        bd = d;
        best = k;
      }
    }
  }
  return best;
}

/* a where mask is all ones, b where it is 0: no branch on the mask. */
static double pick(uint64_t mask, double a, double b) {
  uint64_t x, y;
  memcpy(&x, &a, sizeof x);
  memcpy(&y, &b, sizeof y);
  x = (x & mask) | (y & ~mask);
  memcpy(&a, &x, sizeof a);
  return a;
}

uint64_t rdt_sharp_private_slot(const rdt_forest *f, uint32_t t, const double *xs, const uint32_t *bins) {
  const rdt_sharp *sh = f->sharp;
  uint32_t nf = f->schema.n_features;
  uint64_t leaf = rdt_matrix_leaf(f, t, bins);
  uint64_t a = sh->slot_start[leaf], n = sh->slot_start[leaf + 1] - a, total = rdt_sharp_slots(f);
  uint64_t width = sh->scan_width > n ? sh->scan_width : n; /* scan_width >= n in a built forest */
  /* Entry i reads slot a + i, wrapped into the forest's slots: past the
  ** leaf's n centres it reads other centres (as much distinct memory, the
  ** same arithmetic) whose distance the mask then ignores. The strict < keeps
  ** the first nearest centre, as rdt_sharp_slot. */
  uint64_t best = 0;
  double bd = distance(&f->schema, xs, sh->centres + a * nf);
  for (uint64_t i = 1; i < width; i++) {
    uint64_t k = a + i;
    k -= total & (0 - (uint64_t)(k >= total));
    double d = distance(&f->schema, xs, sh->centres + k * nf);
    uint64_t take = (0 - (uint64_t)(d < bd)) & (0 - (uint64_t)(i < n));
    best = (i & take) | (best & ~take);
    bd = pick(take, d, bd);
  }
  return a + best;
}

/* ---- structure -------------------------------------------------------- */

/* The centres chosen while rdt_matrix_draw carries the public rows down. */
typedef struct {
  uint64_t n_pub;                     /* N */
  uint32_t cells;                     /* N_CELLS */
  uint32_t *centre_rows;              /* rows chosen as centres, leaf after leaf */
  uint64_t n_centres, ccap;
  uint32_t *leaf_centres;             /* centres per leaf */
  uint64_t n_leaves, lcap;
  uint64_t max_slots;
  int too_many;
} centre_picker;

static int grow(void **p, uint64_t *cap, uint64_t need, size_t elem) {
  if (need <= *cap) return 1;
  uint64_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * elem);
  if (!q) return 0;
  *p = q;
  *cap = c;
  return 1;
}

/* Leaf: ceil(cells * k / N) centres, uniformly among its k public rows
** (partial Fisher-Yates; contract item 2). */
static int pick_centres(void *ctx, rdt_rng *rng, uint32_t *rows, uint32_t k) {
  centre_picker *p = ctx;
  uint64_t want = k ? ((uint64_t)p->cells * k + p->n_pub - 1) / p->n_pub : 0;
  if (want > k) want = k;
  if (!grow((void **)&p->centre_rows, &p->ccap, p->n_centres + want, sizeof *p->centre_rows) ||
      !grow((void **)&p->leaf_centres, &p->lcap, p->n_leaves + 1, sizeof *p->leaf_centres))
    return 0;
  for (uint32_t c = 0; c < want; c++) {
    uint32_t pick = c + (uint32_t)rdt_rng_below(rng, k - c);
    uint32_t t = rows[c];
    rows[c] = rows[pick];
    rows[pick] = t;
    p->centre_rows[p->n_centres++] = rows[c];
  }
  p->leaf_centres[p->n_leaves++] = (uint32_t)want;
  if (p->n_leaves + p->n_centres > p->max_slots) { /* an upper bound on the slots */
    p->too_many = 1;
    return 0;
  }
  return 1;
}

int rdt_sharp_build(rdt_forest *f, const double *pub, uint64_t n_pub, char *err, size_t en) {
  uint32_t nf = f->schema.n_features, C = rdt_forest_slots(f);
  err[0] = 0;
  f->matrix = calloc(1, sizeof *f->matrix);
  f->sharp = calloc(1, sizeof *f->sharp);
  f->multiway = &rdt_sharp_multiway;
  if (!f->matrix || !f->sharp) { snprintf(err, en, "out of memory"); return 0; }
  rdt_matrix *m = f->matrix;
  rdt_sharp *sh = f->sharp;
  m->strategy = RDT_STRATEGY_LEAF;
  sh->public_rows = n_pub;
  if (n_pub == 0 || n_pub > RDT_SHARP_MAX_PUBLIC_ROWS) {
    snprintf(err, en, "the public query must return between 1 and %d rows", RDT_SHARP_MAX_PUBLIC_ROWS);
    return 0;
  }
  if (!rdt_matrix_domains(f)) { snprintf(err, en, "out of memory"); return 0; }
  /* The structure stream: from the seed, or fresh from the OS. */
  rdt_rng rng;
  rdt_rng_init_for(&rng, f->config.seeded ? f->config.seed_key : NULL, "rdt#-structure", 1);
  centre_picker p = {.n_pub = n_pub, .cells = f->config.cells, .max_slots = RDT_MATRIX_MAX_COUNTERS / C};
  rdt_mrows rows = {pub, n_pub, pick_centres, &p};
  int ok = rdt_matrix_draw(f, &rng, p.max_slots, &rows, err, en);
  rdt_rng_clear(&rng);
  if (!ok && p.too_many)
    snprintf(err, en, "RDT# forest too large: more than %llu centres (x %u classes); lower \"trees\", "
             "\"secondary_trees\", \"depth\", \"bins\" or \"cells\"", (unsigned long long)p.max_slots, C);
  if (ok) {
    sh->slot_start = malloc((size_t)(p.n_leaves + 1) * sizeof *sh->slot_start);
    ok = sh->slot_start != NULL;
  }
  uint64_t slots = 0;
  if (ok) {
    for (uint64_t l = 0; l < p.n_leaves; l++) {
      sh->slot_start[l] = (uint32_t)slots;
      slots += p.leaf_centres[l] ? p.leaf_centres[l] : 1;
    }
    sh->slot_start[p.n_leaves] = (uint32_t)slots;
    sh->centres = malloc((size_t)slots * nf * sizeof *sh->centres);
    f->counts = calloc((size_t)slots * C, sizeof *f->counts);
    m->row_bins = malloc(nf * sizeof *m->row_bins);
    ok = sh->centres && f->counts && m->row_bins;
    if (!ok) snprintf(err, en, "out of memory for the RDT# centres");
  }
  if (ok) { /* contract item 6: the most centres of any leaf a private row can reach */
    sh->scan_width = 1;
    for (uint64_t l = 0; l < f->matrix->leaf_start[f->config.primary_trees]; l++)
      if (sh->slot_start[l + 1] - sh->slot_start[l] > sh->scan_width) sh->scan_width = sh->slot_start[l + 1] - sh->slot_start[l];
  }
  if (ok) {
    uint64_t c = 0;
    for (uint64_t l = 0; l < p.n_leaves; l++) {
      double *dst = sh->centres + (size_t)sh->slot_start[l] * nf;
      if (!p.leaf_centres[l]) {
        for (uint32_t j = 0; j < nf; j++) dst[j] = NAN;
        continue;
      }
      for (uint32_t q = 0; q < p.leaf_centres[l]; q++, c++)
        memcpy(dst + (size_t)q * nf, pub + (size_t)p.centre_rows[c] * nf, nf * sizeof *dst);
    }
  }
  free(p.centre_rows);
  free(p.leaf_centres);
  return ok;
}

/* ---- training ------------------------------------------------------------ */

void rdt_sharp_train_row(rdt_forest *f, const double *xs, uint32_t cls) {
  uint32_t C = rdt_forest_slots(f);
  uint32_t *bins = f->matrix->row_bins;
  rdt_matrix_row_bins(f, xs, bins);
  for (uint32_t t = 0; t < f->config.primary_trees; t++) f->counts[rdt_sharp_private_slot(f, t, xs, bins) * C + cls]++;
}

int rdt_sharp_release(rdt_forest *f, const double *pub, uint64_t n_pub, rdt_rng *noise) {
  const rdt_sharp *sh = f->sharp;
  uint32_t C = rdt_forest_slots(f), nf = f->schema.n_features, p = f->config.primary_trees;
  uint64_t primary_slots = sh->slot_start[f->matrix->leaf_start[p]];
  if (f->config.is_private) { /* contract item 3 */
    uint64_t s, t;
    if (!rdt_laplace_params(f->config.eps, p, &s, &t)) return 0;
    for (uint64_t i = 0; i < primary_slots * C; i++) {
      if (rdt_cancel_poll(f->config.cancel, 1)) return 0; /* nothing is released (cancel.h) */
      f->counts[i] += rdt_discrete_laplace(noise, s, t);
    }
  }
  /* Contract item 4: Classify (Figure 4) with the primary trees: the class
  ** with the largest summed counter of the nearest centres. */
  uint32_t *bins = malloc(nf * sizeof *bins);
  double *sum = malloc(C * sizeof *sum);
  if (!bins || !sum) { free(bins); free(sum); return 0; }
  for (uint64_t r = 0; r < n_pub; r++) {
    if (rdt_cancel_poll(f->config.cancel, 1 + f->config.trees / 16)) break; /* a public row through every tree */
    const double *x = pub + (size_t)r * nf;
    rdt_matrix_row_bins(f, x, bins);
    for (uint32_t c = 0; c < C; c++) sum[c] = 0;
    for (uint32_t t = 0; t < p; t++) {
      const int64_t *cnt = f->counts + rdt_sharp_slot(f, t, x, bins) * C;
      for (uint32_t c = 0; c < C; c++) sum[c] += (double)cnt[c];
    }
    uint32_t label = 0;
    for (uint32_t c = 1; c < C; c++)
      if (sum[c] > sum[label]) label = c;
    for (uint32_t t = p; t < f->config.trees; t++) f->counts[rdt_sharp_slot(f, t, x, bins) * C + label]++;
  }
  free(bins);
  free(sum);
  return !rdt_cancel_stopped(f->config.cancel);
}

/* ---- validation of decoded centres ------------------------------------- */

int rdt_sharp_check(const rdt_forest *f) {
  const rdt_sharp *sh = f->sharp;
  uint32_t nf = f->schema.n_features;
  uint64_t L = rdt_matrix_leaves(f);
  if (f->config.primary_trees < 1 || f->config.primary_trees > f->config.trees || f->config.cells < 1 ||
      sh->public_rows < 1)
    return 0;
  for (uint64_t l = 0; l < L; l++) {
    uint64_t a = sh->slot_start[l], b = sh->slot_start[l + 1];
    if (b <= a) return 0;
    for (uint64_t s = a; s < b; s++) {
      const double *c = sh->centres + s * nf;
      int empty = isnan(c[0]);
      if (empty && b - a != 1) return 0; /* only a lone centre may lack coordinates */
      for (uint32_t j = 0; j < nf; j++) {
        const rdt_feature *ft = &f->schema.features[j];
        if (empty) {
          if (!isnan(c[j])) return 0;
        } else if (ft->type == RDT_FEATURE_NUMERIC) {
          if (!(c[j] >= ft->min && c[j] <= ft->max)) return 0;
        } else if (!(c[j] >= 0 && c[j] <= ft->n_values && c[j] == floor(c[j]))) {
          return 0;
        }
      }
    }
  }
  return 1;
}

/* ---- the forest's view of RDT# forests (forest.h: rdt_multiway) ---------- */

static void multiway_free(rdt_forest *f) {
  rdt_matrix_free(f->matrix);
  rdt_sharp_free(f->sharp);
  f->matrix = NULL;
  f->sharp = NULL;
}

/* The centre counters; the same public rows and key give the same trees
** and centres (the digest says whether they did). */
static uint32_t multiway_state(rdt_forest *f, rdt_span *out, uint32_t max) {
  if (!f->sharp || max < 1) return 0;
  out[0] = (rdt_span){f->counts, rdt_sharp_slots(f) * rdt_forest_slots(f)};
  return 1;
}

static void multiway_digest(const rdt_forest *f, rdt_digest *d) {
  rdt_matrix_digest(f, d);
  uint64_t leaves = rdt_matrix_leaves(f), slots = rdt_sharp_slots(f);
  rdt_digest_u64(d, f->sharp->public_rows);
  rdt_digest_bytes(d, f->sharp->slot_start, (size_t)(leaves + 1) * sizeof *f->sharp->slot_start);
  rdt_digest_bytes(d, f->sharp->centres, (size_t)slots * f->schema.n_features * sizeof *f->sharp->centres);
}

static double multiway_leaf_scale(const rdt_forest *f) {
  return f->config.primary_trees / rdt_eps_to_double(f->config.eps); /* the primary counters' scale */
}

static void multiway_leaves(const rdt_forest *f, const double *xs, uint32_t *leaf) {
  uint32_t bins[RDT_MATRIX_ROW_BINS];
  rdt_matrix_row_bins(f, xs, bins);
  for (uint32_t t = 0; t < f->config.trees; t++) leaf[t] = (uint32_t)rdt_sharp_slot(f, t, xs, bins);
}

const rdt_multiway rdt_sharp_multiway = {
    .free = multiway_free,
    .total_leaves = rdt_sharp_slots,
    .train_row = rdt_sharp_train_row,
    .state = multiway_state,
    .digest = multiway_digest,
    .leaf_scale = multiway_leaf_scale,
    .leaves = multiway_leaves,
};
