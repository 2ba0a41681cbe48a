/* matrix.c - matrix random forests; see matrix.h for the privacy contract. */
#include "matrix.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rdt_strategy_name(uint32_t strategy) {
  switch (strategy) {
    case RDT_STRATEGY_LEAF: return "leaf";
    case RDT_STRATEGY_IDENTITY: return "identity";
    case RDT_STRATEGY_MARGINALS: return "marginals";
    case RDT_STRATEGY_GROUPED: return "grouped";
    default: return "auto";
  }
}

uint64_t rdt_matrix_leaves(const rdt_forest *f) {
  return f->matrix ? f->matrix->leaf_start[f->config.trees] : 0;
}

int rdt_matrix_domains(rdt_forest *f) {
  rdt_matrix *m = f->matrix;
  free(m->domain);
  m->domain = malloc(f->schema.n_features * sizeof *m->domain);
  if (!m->domain) return 0;
  for (uint32_t j = 0; j < f->schema.n_features; j++) {
    const rdt_feature *ft = &f->schema.features[j];
    m->domain[j] = ft->type == RDT_FEATURE_NUMERIC ? f->config.bins : ft->n_values;
  }
  return 1;
}

uint32_t rdt_matrix_bin(const rdt_forest *f, uint32_t j, double x) {
  const rdt_feature *ft = &f->schema.features[j];
  uint32_t d = f->matrix->domain[j];
  if (ft->type == RDT_FEATURE_CATEGORICAL) return x >= 0 && x < d ? (uint32_t)x : 0;
  /* x is already clean (forest.h: clamped, missing at the midpoint). */
  double u = (x - ft->min) / (ft->max - ft->min) * d;
  if (!(u >= 0)) return 0;
  return u >= d ? d - 1 : (uint32_t)u;
}

void rdt_matrix_row_bins(const rdt_forest *f, const double *xs, uint32_t *bins) {
  for (uint32_t j = 0; j < f->schema.n_features; j++) bins[j] = rdt_matrix_bin(f, j, xs[j]);
}

uint32_t rdt_matrix_leaf(const rdt_forest *f, uint32_t t, const uint32_t *bins) {
  const rdt_matrix *m = f->matrix;
  const rdt_mnode *nodes = m->nodes + m->node_start[t];
  uint32_t i = 0;
  while (nodes[i].feature != RDT_MNODE_LEAF) i = nodes[i].next + bins[nodes[i].feature];
  return m->leaf_start[t] + nodes[i].next;
}

/* ---- structure -------------------------------------------------------- */

typedef struct {
  rdt_mnode *nodes;
  uint32_t *parent, *depth; /* tree-relative parent; depth */
  uint32_t *lo, *hi;        /* with rows: the node's range of the row index array */
  uint64_t n, cap;
} node_buf;

static int node_push(node_buf *b, int with_rows, uint32_t parent, uint32_t depth, uint32_t lo, uint32_t hi) {
  if (b->n == b->cap) {
    uint64_t cap = b->cap ? b->cap * 2 : 1024;
    rdt_mnode *nn = realloc(b->nodes, cap * sizeof *nn);
    if (nn) b->nodes = nn;
    uint32_t *arrays[4] = {b->parent, b->depth, b->lo, b->hi};
    int ok = nn != NULL;
    for (int k = 0; k < (with_rows ? 4 : 2); k++) {
      uint32_t *q = realloc(arrays[k], cap * sizeof *q);
      if (q) arrays[k] = q;
      ok &= q != NULL;
    }
    b->parent = arrays[0];
    b->depth = arrays[1];
    b->lo = arrays[2];
    b->hi = arrays[3];
    if (!ok) return 0;
    b->cap = cap;
  }
  b->nodes[b->n].feature = RDT_MNODE_LEAF;
  b->nodes[b->n].next = 0;
  b->parent[b->n] = parent;
  b->depth[b->n] = depth;
  if (with_rows) {
    b->lo[b->n] = lo;
    b->hi[b->n] = hi;
  }
  b->n++;
  return 1;
}

static int on_path(const node_buf *b, uint64_t i, uint32_t start, uint32_t feature) {
  while (i != start) {
    i = start + b->parent[i];
    if (b->nodes[i].feature == feature) return 1;
  }
  return 0;
}

/* Stable counting sort of idx[lo, hi) by the rows' bins of attribute a;
** on return count[c] is the end of child c's range (relative to lo). */
static int split_rows(const rdt_forest *f, const rdt_mrows *rows, uint32_t a, uint32_t *idx, uint32_t *tmp,
                      uint32_t lo, uint32_t hi, uint32_t **count_out) {
  uint32_t children = f->matrix->domain[a], nf = f->schema.n_features;
  uint32_t *count = calloc(children + 1, sizeof *count);
  if (!count) return 0;
  for (uint32_t k = lo; k < hi; k++) count[rdt_matrix_bin(f, a, rows->x[(size_t)idx[k] * nf + a]) + 1]++;
  for (uint32_t c = 0; c < children; c++) count[c + 1] += count[c];
  for (uint32_t k = lo; k < hi; k++) tmp[lo + count[rdt_matrix_bin(f, a, rows->x[(size_t)idx[k] * nf + a])]++] = idx[k];
  memcpy(idx + lo, tmp + lo, (size_t)(hi - lo) * sizeof *idx);
  *count_out = count;
  return 1;
}

int rdt_matrix_draw(rdt_forest *f, rdt_rng *rng, uint64_t max_leaves, const rdt_mrows *rows, char *err, size_t en) {
  rdt_matrix *m = f->matrix;
  uint32_t nf = f->schema.n_features, k = f->config.trees, h = f->config.depth;
  const char *what = f->sharp ? "RDT# forest" : "matrix forest";
  int with_rows = rows != NULL;
  uint64_t n_rows = with_rows ? rows->n : 0;
  uint32_t *eligible = malloc(nf * sizeof *eligible), ne = 0;
  uint32_t *idx = with_rows ? malloc((size_t)(n_rows ? n_rows : 1) * sizeof *idx) : NULL;
  uint32_t *tmp = with_rows ? malloc((size_t)(n_rows ? n_rows : 1) * sizeof *tmp) : NULL;
  node_buf b = {0};
  m->node_start = malloc((k + 1) * sizeof *m->node_start);
  m->leaf_start = malloc((k + 1) * sizeof *m->leaf_start);
  int ok = eligible && m->node_start && m->leaf_start && (!with_rows || (idx && tmp));
  for (uint32_t j = 0; ok && j < nf; j++)
    if (m->domain[j] >= 2) eligible[ne++] = j;
  uint64_t leaves = 0;
  for (uint32_t t = 0; ok && t < k; t++) {
    uint32_t start = (uint32_t)b.n, tree_leaves = 0;
    m->node_start[t] = start;
    m->leaf_start[t] = (uint32_t)leaves;
    for (uint64_t r = 0; r < n_rows; r++) idx[r] = (uint32_t)r;
    ok = node_push(&b, with_rows, 0, 0, 0, (uint32_t)n_rows);
    for (uint64_t i = start; ok && i < b.n; i++) {
      uint32_t d = b.depth[i];
      if (d < h && d < ne) {
        /* Uniform over the eligible attributes not on the path, by
        ** rejection (the path holds d < ne of them). */
        uint32_t a;
        do a = eligible[rdt_rng_below(rng, ne)]; while (on_path(&b, i, start, a));
        uint32_t children = m->domain[a];
        if (b.n - start + children > UINT32_MAX / 2) {
          snprintf(err, en, "%s too large: one tree has more than 2^31 nodes; lower \"depth\" or \"bins\"", what);
          ok = 0;
          break;
        }
        b.nodes[i].feature = a;
        b.nodes[i].next = (uint32_t)(b.n - start);
        uint32_t lo = with_rows ? b.lo[i] : 0, hi = with_rows ? b.hi[i] : 0, *count = NULL;
        if (with_rows && !(ok = split_rows(f, rows, a, idx, tmp, lo, hi, &count))) break;
        for (uint32_t c = 0; ok && c < children; c++) /* with rows, child c has [count[c-1], count[c]) */
          ok = node_push(&b, with_rows, (uint32_t)(i - start), d + 1, count && c ? lo + count[c - 1] : lo,
                         count ? lo + count[c] : 0);
        free(count);
      } else {
        b.nodes[i].next = tree_leaves++;
        if (++leaves > max_leaves) {
          snprintf(err, en,
                   "%s too large: its trees have more than %llu leaves (x %u classes) in all; lower "
                   "\"trees\", \"depth\" or \"bins\"",
                   what, (unsigned long long)max_leaves, rdt_forest_slots(f));
          ok = 0;
          break;
        }
        if (with_rows && !(ok = rows->leaf(rows->ctx, rng, idx + b.lo[i], b.hi[i] - b.lo[i]))) break;
      }
    }
  }
  if (ok) {
    m->node_start[k] = (uint32_t)b.n;
    m->leaf_start[k] = (uint32_t)leaves;
    m->nodes = b.nodes;
    b.nodes = NULL;
  } else if (!err[0]) {
    snprintf(err, en, "out of memory while drawing the %s", what);
  }
  free(b.nodes);
  free(b.parent);
  free(b.depth);
  free(b.lo);
  free(b.hi);
  free(eligible);
  free(idx);
  free(tmp);
  return ok;
}

/* ---- strategies ------------------------------------------------------- */

/* parent[i] = the tree-relative parent of node i of tree t (the root's is
** left unset); returns the tree's node count. */
static uint32_t tree_parents(const rdt_matrix *m, uint32_t t, uint32_t *parent) {
  const rdt_mnode *nd = m->nodes + m->node_start[t];
  uint32_t n = m->node_start[t + 1] - m->node_start[t];
  for (uint32_t i = 0; i < n; i++)
    if (nd[i].feature != RDT_MNODE_LEAF)
      for (uint32_t c = 0; c < m->domain[nd[i].feature]; c++) parent[nd[i].next + c] = i;
  return n;
}

/* Distinct attribute sets fixed by root-to-leaf paths. */
typedef struct {
  uint32_t n_sets, cap, width;  /* width: depth, max attributes per set */
  uint32_t *attrs;              /* n_sets * width, sorted, padded */
  uint32_t *len;
  double *leaves;               /* L_S */
  double *cells;                /* product of domains of S */
  uint32_t *hash_slots;         /* set index + 1 */
  uint32_t hash_mask;
  uint32_t *leaf_set;           /* per leaf */
} path_sets;

static void path_sets_free(path_sets *p) {
  free(p->attrs);
  free(p->len);
  free(p->leaves);
  free(p->cells);
  free(p->hash_slots);
  free(p->leaf_set);
  memset(p, 0, sizeof *p);
}

static uint64_t set_hash(const uint32_t *a, uint32_t n) {
  uint64_t z = 0x9E3779B97F4A7C15ULL ^ n;
  for (uint32_t i = 0; i < n; i++) {
    z ^= a[i] + 0x9E3779B97F4A7C15ULL + (z << 6) + (z >> 2);
    z *= 0xBF58476D1CE4E5B9ULL;
  }
  return z ^ (z >> 31);
}

static int set_find_or_add(path_sets *p, const rdt_matrix *m, const uint32_t *a, uint32_t n, uint32_t *id) {
  uint64_t hv = set_hash(a, n);
  for (uint32_t s = (uint32_t)hv & p->hash_mask; p->hash_slots; s = (s + 1) & p->hash_mask) {
    uint32_t v = p->hash_slots[s];
    if (v == 0) break;
    uint32_t q = v - 1;
    if (p->len[q] == n && memcmp(p->attrs + (size_t)q * p->width, a, n * sizeof *a) == 0) {
      *id = q;
      return 1;
    }
  }
  if (p->n_sets == p->cap || (uint64_t)(p->n_sets + 1) * 2 > (uint64_t)p->hash_mask + 1) {
    uint32_t cap = p->cap ? p->cap * 2 : 64;
    uint32_t *na = realloc(p->attrs, (size_t)cap * p->width * sizeof *na);
    if (na) p->attrs = na;
    uint32_t *nl = realloc(p->len, cap * sizeof *nl);
    if (nl) p->len = nl;
    double *nv = realloc(p->leaves, cap * sizeof *nv);
    if (nv) p->leaves = nv;
    double *nc = realloc(p->cells, cap * sizeof *nc);
    if (nc) p->cells = nc;
    uint32_t *hs = calloc((size_t)cap * 2, sizeof *hs);
    if (!na || !nl || !nv || !nc || !hs) { free(hs); return 0; }
    p->cap = cap;
    free(p->hash_slots);
    p->hash_slots = hs;
    p->hash_mask = cap * 2 - 1;
    for (uint32_t q = 0; q < p->n_sets; q++) {
      uint32_t s = (uint32_t)set_hash(p->attrs + (size_t)q * p->width, p->len[q]) & p->hash_mask;
      while (p->hash_slots[s]) s = (s + 1) & p->hash_mask;
      p->hash_slots[s] = q + 1;
    }
  }
  uint32_t q = p->n_sets++;
  memcpy(p->attrs + (size_t)q * p->width, a, n * sizeof *a);
  p->len[q] = n;
  p->leaves[q] = 0;
  double c = 1;
  for (uint32_t i = 0; i < n; i++) c *= m->domain[a[i]];
  p->cells[q] = c;
  uint32_t s = (uint32_t)set_hash(a, n) & p->hash_mask;
  while (p->hash_slots[s]) s = (s + 1) & p->hash_mask;
  p->hash_slots[s] = q + 1;
  *id = q;
  return 1;
}

static void sort_u32(uint32_t *a, uint32_t n) {
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = i; j > 0 && a[j - 1] > a[j]; j--) {
      uint32_t t = a[j];
      a[j] = a[j - 1];
      a[j - 1] = t;
    }
}

/* Path set of every leaf (walking each leaf up to its root). */
static int collect_path_sets(const rdt_forest *f, path_sets *p) {
  const rdt_matrix *m = f->matrix;
  uint64_t L = rdt_matrix_leaves(f);
  p->width = f->config.depth ? f->config.depth : 1;
  p->leaf_set = malloc((size_t)(L ? L : 1) * sizeof *p->leaf_set);
  uint32_t *parent = malloc((size_t)m->node_start[f->config.trees] * sizeof *parent + 1);
  uint32_t *buf = malloc(p->width * sizeof *buf);
  int ok = p->leaf_set && parent && buf;
  for (uint32_t t = 0; ok && t < f->config.trees; t++) {
    const rdt_mnode *nd = m->nodes + m->node_start[t];
    uint32_t n = tree_parents(m, t, parent);
    for (uint32_t i = 0; ok && i < n; i++) {
      if (nd[i].feature != RDT_MNODE_LEAF) continue;
      uint32_t len = 0;
      for (uint32_t v = i; v != 0 && len < p->width;) {
        v = parent[v];
        buf[len++] = nd[v].feature;
      }
      sort_u32(buf, len);
      uint32_t id;
      ok = set_find_or_add(p, m, buf, len, &id);
      if (ok) {
        p->leaf_set[m->leaf_start[t] + nd[i].next] = id;
        p->leaves[id] += 1;
      }
    }
  }
  free(parent);
  free(buf);
  return ok;
}

/* A group of path sets measured by one table over the union of their
** attributes (a bitset). */
typedef struct {
  uint64_t *bits;
  double cells;  /* product of domains over bits */
  double v;      /* sum over member sets of L_S / cells(S) */
  int alive;
} group;

static double group_weight(const group *g) { return g->cells * g->v; }

/* Greedy grouping (GROUPED): start from one group per path set and merge
** the pair that lowers sum_g W_g^(1/3) most, while any merge helps and the
** tables fit. Fills set_group; returns the number of groups, 0 on failure. */
static uint32_t greedy_groups(const rdt_forest *f, const path_sets *p, uint32_t classes, uint32_t *set_group,
                              double *factor) {
  const rdt_matrix *m = f->matrix;
  uint32_t K = p->n_sets, nf = f->schema.n_features, words = (nf + 63) / 64;
  group *g = calloc(K, sizeof *g);
  uint64_t *bits = calloc((size_t)K * words + words, sizeof *bits);
  uint64_t *u = bits + (size_t)K * words;
  if (!g || !bits) { free(g); free(bits); return 0; }
  double total_cells = 0;
  for (uint32_t q = 0; q < K; q++) {
    g[q].bits = bits + (size_t)q * words;
    for (uint32_t i = 0; i < p->len[q]; i++) {
      uint32_t a = p->attrs[(size_t)q * p->width + i];
      g[q].bits[a / 64] |= (uint64_t)1 << (a % 64);
    }
    g[q].cells = p->cells[q];
    g[q].v = p->leaves[q] / p->cells[q];
    g[q].alive = 1;
    total_cells += g[q].cells;
    set_group[q] = q;
  }
  double budget = (double)RDT_MATRIX_MAX_TABLE_COUNTERS / classes;
  for (;;) {
    double best = -1e-12;
    uint32_t bi = 0, bj = 0;
    double best_cells = 0;
    for (uint32_t i = 0; i < K; i++) {
      if (!g[i].alive) continue;
      double wi = cbrt(group_weight(&g[i]));
      for (uint32_t j = i + 1; j < K; j++) {
        if (!g[j].alive) continue;
        double c = 1;
        for (uint32_t w = 0; w < words; w++) u[w] = g[i].bits[w] | g[j].bits[w];
        for (uint32_t w = 0; w < words; w++)
          for (uint64_t x = u[w]; x; x &= x - 1) c *= m->domain[w * 64 + (uint32_t)__builtin_ctzll(x)];
        if (total_cells - g[i].cells - g[j].cells + c > budget) continue;
        double delta = cbrt(c * (g[i].v + g[j].v)) - wi - cbrt(group_weight(&g[j]));
        if (delta < best) {
          best = delta;
          bi = i;
          bj = j;
          best_cells = c;
        }
      }
    }
    if (best >= -1e-12) break;
    for (uint32_t w = 0; w < words; w++) g[bi].bits[w] |= g[bj].bits[w];
    total_cells += best_cells - g[bi].cells - g[bj].cells;
    g[bi].cells = best_cells;
    g[bi].v += g[bj].v;
    g[bj].alive = 0;
    for (uint32_t q = 0; q < K; q++)
      if (set_group[q] == bj) set_group[q] = bi;
  }
  /* Renumber the surviving groups densely. */
  uint32_t *id = malloc(K * sizeof *id), n = 0;
  if (!id) { free(g); free(bits); return 0; }
  double sum = 0, L = 0;
  for (uint32_t q = 0; q < K; q++) {
    L += p->leaves[q];
    if (g[q].alive) {
      id[q] = n++;
      sum += cbrt(group_weight(&g[q]));
    }
  }
  for (uint32_t q = 0; q < K; q++) set_group[q] = id[set_group[q]];
  *factor = sum * sum * sum / L;
  free(id);
  free(g);
  free(bits);
  return n;
}

int rdt_matrix_table_init(const rdt_forest *f, rdt_mtable *tb, const uint8_t *in, uint64_t max_cells) {
  const rdt_matrix *m = f->matrix;
  uint32_t nf = f->schema.n_features, n = 0;
  for (uint32_t j = 0; j < nf; j++) n += in[j] != 0;
  tb->attrs = malloc((n ? n : 1) * sizeof *tb->attrs);
  tb->stride = malloc((n ? n : 1) * sizeof *tb->stride);
  if (!tb->attrs || !tb->stride) {
    free(tb->attrs);
    free(tb->stride);
    tb->attrs = NULL;
    tb->stride = NULL;
    return 0;
  }
  tb->n_attrs = n;
  n = 0;
  for (uint32_t j = 0; j < nf; j++)
    if (in[j]) tb->attrs[n++] = j;
  uint64_t cells = 1;
  for (uint32_t i = n; i-- > 0;) { /* the last attribute varies fastest */
    tb->stride[i] = cells;
    cells *= m->domain[tb->attrs[i]];
    if (cells > max_cells) break;
  }
  tb->cells = cells;
  return cells <= max_cells;
}

uint64_t rdt_matrix_cell(const rdt_mtable *tb, const uint32_t *bins) {
  uint64_t idx = tb->offset;
  for (uint32_t i = 0; i < tb->n_attrs; i++) idx += bins[tb->attrs[i]] * tb->stride[i];
  return idx;
}

/* Make the tables of groups 0..G-1 (set_group maps path sets to groups),
** split eps among them in proportion to W_g^(1/3) and assign each leaf. */
static int make_tables(rdt_forest *f, const path_sets *p, const uint32_t *set_group, uint32_t G, char *err,
                       size_t en) {
  rdt_matrix *m = f->matrix;
  uint32_t nf = f->schema.n_features, C = rdt_forest_slots(f);
  m->tables = calloc(G, sizeof *m->tables);
  uint8_t *in = calloc((size_t)G * nf, 1);
  double *v = calloc(G, sizeof *v);
  if (!m->tables || !in || !v) { free(in); free(v); snprintf(err, en, "out of memory"); return 0; }
  m->n_tables = G;
  for (uint32_t q = 0; q < p->n_sets; q++) {
    uint32_t gq = set_group[q];
    for (uint32_t i = 0; i < p->len[q]; i++) in[(size_t)gq * nf + p->attrs[(size_t)q * p->width + i]] = 1;
    v[gq] += p->leaves[q] / p->cells[q];
  }
  uint64_t offset = 0;
  double wsum = 0;
  int ok = 1;
  for (uint32_t g = 0; ok && g < G; g++) {
    rdt_mtable *tb = &m->tables[g];
    if (!rdt_matrix_table_init(f, tb, in + (size_t)g * nf, RDT_MATRIX_MAX_TABLE_COUNTERS) && !tb->attrs) {
      ok = 0;
      break;
    }
    uint64_t cells = tb->cells;
    tb->offset = offset;
    offset += cells;
    if (cells > RDT_MATRIX_MAX_TABLE_COUNTERS || offset * C > RDT_MATRIX_MAX_TABLE_COUNTERS) {
      snprintf(err, en,
               "the \"%s\" strategy's tables need more than %llu counters; choose another \"strategy\" or "
               "lower \"bins\" or \"depth\"",
               rdt_strategy_name(m->strategy), (unsigned long long)RDT_MATRIX_MAX_TABLE_COUNTERS);
      free(in);
      free(v);
      return 0;
    }
    tb->weight = (double)cells * v[g];
    wsum += cbrt(tb->weight);
  }
  free(in);
  free(v);
  if (!ok) { snprintf(err, en, "out of memory"); return 0; }
  m->n_cells = offset;
  /* Budgets: eps_g = floor(eps * W_g^(1/3) / sum), at least one grid step;
  ** the last table takes the remainder, so they add up to eps exactly. */
  if (f->config.is_private) {
    uint64_t total = f->config.eps.num, used = 0;
    for (uint32_t g = 0; g < G; g++) {
      uint64_t e = g + 1 == G ? 0 : (uint64_t)floor((double)total * (cbrt(m->tables[g].weight) / wsum));
      if (g + 1 < G) {
        if (e == 0) e = 1;
        m->tables[g].eps.num = e;
        used += e;
      } else {
        if (used >= total) {
          snprintf(err, en, "\"epsilon\" is too small to split among the %u tables of the \"%s\" strategy", G,
                   rdt_strategy_name(m->strategy));
          return 0;
        }
        m->tables[g].eps.num = total - used;
      }
    }
    double var = 0;
    for (uint32_t g = 0; g < G; g++) {
      double e = rdt_eps_to_double(m->tables[g].eps);
      var += m->tables[g].weight * 2 / (e * e);
    }
    m->expected_variance = var / (double)rdt_matrix_leaves(f);
  }
  uint64_t L = rdt_matrix_leaves(f);
  m->leaf_table = malloc((size_t)(L ? L : 1) * sizeof *m->leaf_table);
  m->cells = calloc((size_t)(m->n_cells ? m->n_cells * C : 1), sizeof *m->cells);
  if (!m->leaf_table || !m->cells) { snprintf(err, en, "out of memory for the strategy's tables"); return 0; }
  for (uint64_t l = 0; l < L; l++) m->leaf_table[l] = set_group[p->leaf_set[l]];
  return 1;
}

/* Expected errors of every strategy (units 2/eps^2, matrix.h), and the
** choice; then the chosen strategy's tables. */
static int choose_strategy(rdt_forest *f, char *err, size_t en, double *chosen_factor, int allocate) {
  rdt_matrix *m = f->matrix;
  const rdt_config *c = &f->config;
  uint32_t C = rdt_forest_slots(f);
  double L = (double)rdt_matrix_leaves(f);
  double budget = (double)RDT_MATRIX_MAX_TABLE_COUNTERS / C;
  path_sets p = {0};
  uint32_t *set_group = NULL, *greedy = NULL;
  int ok = collect_path_sets(f, &p);
  if (!ok) { snprintf(err, en, "out of memory while choosing the noise strategy"); goto done; }
  set_group = calloc(p.n_sets + 1, sizeof *set_group);
  greedy = calloc(p.n_sets + 1, sizeof *greedy);
  if (!set_group || !greedy) { ok = 0; snprintf(err, en, "out of memory while choosing the noise strategy"); goto done; }

  m->factor[RDT_STRATEGY_LEAF - 1] = c->partition ? 1.0 : (double)c->trees * c->trees;
  /* IDENTITY: one table over every used attribute. */
  double cells_u = 1, mean_m = 0;
  {
    uint8_t *used = calloc(f->schema.n_features, 1);
    if (!used) { ok = 0; snprintf(err, en, "out of memory"); goto done; }
    for (uint32_t q = 0; q < p.n_sets; q++)
      for (uint32_t i = 0; i < p.len[q]; i++) used[p.attrs[(size_t)q * p.width + i]] = 1;
    for (uint32_t j = 0; j < f->schema.n_features; j++)
      if (used[j]) cells_u *= m->domain[j];
    free(used);
    for (uint32_t q = 0; q < p.n_sets; q++) mean_m += p.leaves[q] * (cells_u / p.cells[q]);
    mean_m /= L;
  }
  m->factor[RDT_STRATEGY_IDENTITY - 1] = cells_u <= budget ? mean_m : INFINITY;
  /* MARGINALS: one table per path set. */
  double sum3 = 0, cells_s = 0;
  for (uint32_t q = 0; q < p.n_sets; q++) {
    sum3 += cbrt(p.leaves[q]);
    cells_s += p.cells[q];
  }
  m->factor[RDT_STRATEGY_MARGINALS - 1] = cells_s <= budget ? sum3 * sum3 * sum3 / L : INFINITY;
  /* GROUPED: greedy merging, when the path sets are few enough. */
  m->factor[RDT_STRATEGY_GROUPED - 1] = INFINITY;
  uint32_t greedy_n = 0;
  if (cells_s <= budget && p.n_sets <= RDT_MATRIX_MAX_GREEDY_SETS) {
    double fg;
    greedy_n = greedy_groups(f, &p, C, greedy, &fg);
    if (greedy_n == 0) { ok = 0; snprintf(err, en, "out of memory while choosing the noise strategy"); goto done; }
    m->factor[RDT_STRATEGY_GROUPED - 1] = fg;
  }

  uint32_t s = c->partition ? RDT_STRATEGY_LEAF : c->strategy; /* partition: leaf noise only */
  if (s == RDT_STRATEGY_AUTO) {
    s = RDT_STRATEGY_LEAF;
    for (uint32_t k = RDT_STRATEGY_IDENTITY; k <= RDT_N_STRATEGIES; k++)
      if (m->factor[k - 1] < m->factor[s - 1] * (1 - 1e-9)) s = k;
  } else if (!isfinite(m->factor[s - 1])) {
    ok = 0;
    if (s == RDT_STRATEGY_GROUPED && p.n_sets > RDT_MATRIX_MAX_GREEDY_SETS)
      snprintf(err, en, "the \"grouped\" strategy is tried for at most %d distinct path sets and this forest has %u",
               RDT_MATRIX_MAX_GREEDY_SETS, p.n_sets);
    else
      snprintf(err, en,
               "the \"%s\" strategy's tables would need more than %llu counters; choose another \"strategy\" or "
               "lower \"bins\" or \"depth\"",
               rdt_strategy_name(s), (unsigned long long)RDT_MATRIX_MAX_TABLE_COUNTERS);
    goto done;
  }
  m->strategy = s;
  if (chosen_factor) *chosen_factor = m->factor[s - 1];
  if (!allocate) goto done;
  if (!c->is_private) {
    /* Exact leaf counters; and the exact table over every used attribute,
    ** when small enough, for DP batch prediction (CELL section). */
    if (cells_u * C <= (double)RDT_MATRIX_MAX_EXACT_COUNTERS && !c->partition) {
      uint8_t *used = calloc(f->schema.n_features, 1);
      if (!used) { ok = 0; snprintf(err, en, "out of memory"); goto done; }
      for (uint32_t q = 0; q < p.n_sets; q++)
        for (uint32_t i = 0; i < p.len[q]; i++) used[p.attrs[(size_t)q * p.width + i]] = 1;
      ok = rdt_matrix_table_init(f, &m->exact, used, RDT_MATRIX_MAX_EXACT_COUNTERS) &&
           (m->exact_cells = calloc((size_t)m->exact.cells * C, sizeof *m->exact_cells)) != NULL;
      free(used);
      if (!ok) snprintf(err, en, "out of memory for the exact cell table");
    }
    goto done;
  }
  if (s == RDT_STRATEGY_LEAF) {
    double b = (c->partition ? 1.0 : (double)c->trees) / rdt_eps_to_double(c->eps);
    m->expected_variance = 2 * b * b;
    goto done;
  }
  uint32_t G;
  if (s == RDT_STRATEGY_IDENTITY) {
    for (uint32_t q = 0; q < p.n_sets; q++) set_group[q] = 0;
    G = 1;
  } else if (s == RDT_STRATEGY_MARGINALS) {
    for (uint32_t q = 0; q < p.n_sets; q++) set_group[q] = q;
    G = p.n_sets;
  } else {
    memcpy(set_group, greedy, p.n_sets * sizeof *set_group);
    G = greedy_n;
  }
  ok = make_tables(f, &p, set_group, G, err, en);
done:
  free(set_group);
  free(greedy);
  path_sets_free(&p);
  return ok;
}

/* Default trees (no "trees" option, private model): each candidate forest
** is drawn from the same structure stream and its best strategy's expected
** error found, all from the structure alone; the weight vote sums tau
** leaves, so its signal grows with tau and its noise variance with tau times
** that error: keep the candidate with the largest tau / error (ties: more
** trees). Identity keeps 128 trees where the table is small; per-leaf noise
** (error tau^2) ends at the fewest. */
static const uint32_t TREE_CANDIDATES[] = {128, 64, 32, 16, 10};

static void drop_structure(rdt_matrix *m) {
  free(m->node_start);
  free(m->leaf_start);
  free(m->nodes);
  m->node_start = m->leaf_start = NULL;
  m->nodes = NULL;
}

/* Leaves the best candidate's trees in f->matrix (each drawn from a copy of
** the structure stream, so it is the forest a fixed count would give). */
static int choose_trees(rdt_forest *f, const rdt_rng *structure, uint64_t max_leaves, char *err, size_t en) {
  rdt_matrix *m = f->matrix, kept = {0};
  uint32_t best = 0;
  double best_score = -1;
  char first_err[256] = "";
  for (size_t k = 0; k < sizeof TREE_CANDIDATES / sizeof *TREE_CANDIDATES; k++) {
    uint32_t tau = TREE_CANDIDATES[k];
    rdt_rng rng = *structure;
    f->config.trees = tau;
    double factor = INFINITY;
    int ok = rdt_matrix_draw(f, &rng, max_leaves, NULL, err, en) && choose_strategy(f, err, en, &factor, 0);
    rdt_rng_clear(&rng);
    double score = ok && isfinite(factor) && factor > 0 ? tau / factor : 0;
    if (ok && score > best_score * (1 + 1e-9)) { /* keep these trees, drop the previous best */
      drop_structure(&kept);
      kept.node_start = m->node_start;
      kept.leaf_start = m->leaf_start;
      kept.nodes = m->nodes;
      m->node_start = m->leaf_start = NULL;
      m->nodes = NULL;
      best_score = score;
      best = tau;
    }
    drop_structure(m);
    if (!ok) { /* e.g. too large at this size: a smaller forest may fit */
      if (!first_err[0]) snprintf(first_err, sizeof first_err, "%s", err);
      err[0] = 0;
    }
  }
  if (!best) {
    snprintf(err, en, "%s", first_err[0] ? first_err : "out of memory while choosing the number of trees");
    return 0;
  }
  m->node_start = kept.node_start;
  m->leaf_start = kept.leaf_start;
  m->nodes = kept.nodes;
  f->config.trees = best;
  return 1;
}

int rdt_matrix_init(rdt_forest *f, rdt_rng *structure, char *err, size_t en) {
  err[0] = 0;
  f->matrix = calloc(1, sizeof *f->matrix);
  f->multiway = &rdt_matrix_multiway;
  if (!f->matrix) { snprintf(err, en, "out of memory"); return 0; }
  rdt_matrix *m = f->matrix;
  uint32_t C = rdt_forest_slots(f);
  if (!rdt_matrix_domains(f)) { snprintf(err, en, "out of memory"); return 0; }
  /* Every tree has at least the product of the h smallest domains as
  ** leaves (fewer when it runs out of attributes): refuse a forest that is
  ** certainly too large before drawing it; rdt_matrix_draw refuses the others. */
  uint64_t max_leaves = RDT_MATRIX_MAX_COUNTERS / C;
  {
    uint32_t nf = f->schema.n_features, h = f->config.depth, taken = 0;
    uint8_t *used = calloc(nf, 1);
    if (!used) { snprintf(err, en, "out of memory"); return 0; }
    double least = 1;
    for (; taken < h; taken++) {
      uint32_t best = UINT32_MAX, at = 0;
      for (uint32_t j = 0; j < nf; j++)
        if (!used[j] && m->domain[j] >= 2 && m->domain[j] < best) { best = m->domain[j]; at = j; }
      if (best == UINT32_MAX) break;
      used[at] = 1;
      least *= best;
    }
    free(used);
    uint32_t fewest = f->config.trees_auto ? TREE_CANDIDATES[sizeof TREE_CANDIDATES / sizeof *TREE_CANDIDATES - 1]
                                           : f->config.trees;
    if (least * fewest > (double)max_leaves) {
      snprintf(err, en,
               "matrix forest too large: %u trees of depth %u have at least %.0f leaves (x %u classes), more than "
               "%llu counters; lower \"trees\", \"depth\" or \"bins\"",
               fewest, h, least * fewest, C, (unsigned long long)RDT_MATRIX_MAX_COUNTERS);
      return 0;
    }
  }
  if (f->config.trees_auto ? !choose_trees(f, structure, max_leaves, err, en)
                            : !rdt_matrix_draw(f, structure, max_leaves, NULL, err, en))
    return 0;
  if (!choose_strategy(f, err, en, NULL, 1)) return 0;
  uint64_t L = rdt_matrix_leaves(f);
  f->counts = calloc((size_t)(L ? L * C : 1), sizeof *f->counts);
  m->row_bins = malloc(f->schema.n_features * sizeof *m->row_bins);
  if (!f->counts || !m->row_bins) { snprintf(err, en, "out of memory for the leaf counters"); return 0; }
  if (f->config.partition) {
    /* The tree of each row: a stream of its own, independent of the rows. */
    rdt_rng_init_for(&m->partition_rng, f->config.seeded ? f->config.seed_key : NULL, "partition", 1);
    m->has_partition_rng = 1;
  }
  return 1;
}

void rdt_matrix_free(rdt_matrix *m) {
  if (!m) return;
  free(m->domain);
  free(m->node_start);
  free(m->leaf_start);
  free(m->nodes);
  for (uint32_t g = 0; g < m->n_tables; g++) {
    free(m->tables[g].attrs);
    free(m->tables[g].stride);
  }
  free(m->tables);
  free(m->exact.attrs);
  free(m->exact.stride);
  free(m->exact_cells);
  free(m->leaf_table);
  free(m->cells);
  free(m->row_bins);
  if (m->has_partition_rng) rdt_rng_clear(&m->partition_rng);
  free(m);
}

/* ---- training and release --------------------------------------------- */

void rdt_matrix_train_row(rdt_forest *f, const double *xs, uint32_t cls) {
  rdt_matrix *m = f->matrix;
  uint32_t C = rdt_forest_slots(f);
  uint32_t *bins = m->row_bins;
  rdt_matrix_row_bins(f, xs, bins);
  if (m->n_tables) {
    for (uint32_t g = 0; g < m->n_tables; g++) m->cells[rdt_matrix_cell(&m->tables[g], bins) * C + cls]++;
    return;
  }
  if (m->exact_cells) { /* non-private: leaves are derived from it at release */
    m->exact_cells[rdt_matrix_cell(&m->exact, bins) * C + cls]++;
    return;
  }
  if (f->config.partition) {
    uint32_t t = (uint32_t)rdt_rng_below(&m->partition_rng, f->config.trees);
    f->counts[(size_t)rdt_matrix_leaf(f, t, bins) * C + cls]++;
    return;
  }
  for (uint32_t t = 0; t < f->config.trees; t++) f->counts[(size_t)rdt_matrix_leaf(f, t, bins) * C + cls]++;
}

/* Contract 7: the tables' cells, the exact table of a non-private model and
** the leaf counters (all zero but the ones this strategy counts in). A
** partitioned forest's coins make it no sum of its parts' states (a row's
** tree is drawn where it is counted), so it has none. */
uint32_t rdt_matrix_state(rdt_forest *f, rdt_span *out, uint32_t max) {
  rdt_matrix *m = f->matrix;
  uint64_t C = rdt_forest_slots(f);
  if (!m || f->config.partition || max < 3) return 0;
  out[0] = (rdt_span){m->cells, m->n_tables ? m->n_cells * C : 0};
  out[1] = (rdt_span){m->exact_cells, m->exact_cells ? m->exact.cells * C : 0};
  out[2] = (rdt_span){f->counts, rdt_matrix_leaves(f) * C};
  return 3;
}

void rdt_matrix_digest(const rdt_forest *f, rdt_digest *d) {
  const rdt_matrix *m = f->matrix;
  uint32_t T = f->config.trees, nf = f->schema.n_features;
  rdt_digest_u64(d, m->strategy);
  rdt_digest_bytes(d, m->domain, (size_t)nf * sizeof *m->domain);
  rdt_digest_bytes(d, m->node_start, (size_t)(T + 1) * sizeof *m->node_start);
  rdt_digest_bytes(d, m->leaf_start, (size_t)(T + 1) * sizeof *m->leaf_start);
  rdt_digest_bytes(d, m->nodes, (size_t)m->node_start[T] * sizeof *m->nodes);
  rdt_digest_u64(d, m->n_tables);
  for (uint32_t g = 0; g < m->n_tables; g++) {
    rdt_digest_bytes(d, m->tables[g].attrs, (size_t)m->tables[g].n_attrs * sizeof *m->tables[g].attrs);
    rdt_digest_u64(d, m->tables[g].eps.num);
  }
  rdt_digest_u64(d, m->exact_cells ? m->exact.cells : 0);
}

/* Leaf l (path: attributes path_a fixed to bins path_b) = sum of the cells
** of table tb that agree with the path. */
static void derive_leaf(const rdt_forest *f, const rdt_mtable *tb, const int64_t *cells, int64_t *out,
                        const uint32_t *path_a, const uint32_t *path_b, uint32_t len, uint64_t *free_stride,
                        uint32_t *free_dom, uint32_t *odo) {
  const rdt_matrix *m = f->matrix;
  uint32_t C = rdt_forest_slots(f);
  uint64_t base = tb->offset;
  uint32_t nfree = 0;
  for (uint32_t i = 0; i < tb->n_attrs; i++) {
    uint32_t a = tb->attrs[i], k;
    for (k = 0; k < len && path_a[k] != a; k++) {}
    if (k < len) {
      base += path_b[k] * tb->stride[i];
    } else {
      free_stride[nfree] = tb->stride[i];
      free_dom[nfree] = m->domain[a];
      odo[nfree++] = 0;
    }
  }
  uint64_t idx = base;
  for (;;) {
    const int64_t *cell = cells + idx * C;
    for (uint32_t c = 0; c < C; c++) out[c] += cell[c];
    uint32_t i = 0;
    while (i < nfree && ++odo[i] == free_dom[i]) {
      idx -= (uint64_t)(free_dom[i] - 1) * free_stride[i];
      odo[i++] = 0;
    }
    if (i == nfree) break;
    idx += free_stride[i];
  }
}

int rdt_matrix_derive(const rdt_forest *f, const rdt_mtable *tables, const uint32_t *leaf_table,
                      const int64_t *cells, int64_t *out) {
  const rdt_matrix *m = f->matrix;
  const rdt_config *c = &f->config;
  uint32_t C = rdt_forest_slots(f);
  uint64_t L = rdt_matrix_leaves(f);
  uint32_t nf = f->schema.n_features, h = c->depth + 1;
  uint32_t *path_a = malloc(h * sizeof *path_a), *path_b = malloc(h * sizeof *path_b);
  uint32_t *free_dom = malloc(nf * sizeof *free_dom), *odo = malloc(nf * sizeof *odo);
  uint64_t *free_stride = malloc(nf * sizeof *free_stride);
  uint32_t *parent = malloc(((size_t)m->node_start[c->trees] + 1) * sizeof *parent);
  int ok = path_a && path_b && free_dom && odo && free_stride && parent;
  if (ok) memset(out, 0, (size_t)(L * C) * sizeof *out);
  for (uint32_t tr = 0; ok && tr < c->trees; tr++) {
    const rdt_mnode *nd = m->nodes + m->node_start[tr];
    uint32_t n = tree_parents(m, tr, parent);
    for (uint32_t i = 0; i < n; i++) {
      if (nd[i].feature != RDT_MNODE_LEAF) continue;
      uint32_t len = 0;
      for (uint32_t v = i; v != 0 && len < h;) {
        uint32_t up = parent[v];
        path_a[len] = nd[up].feature;
        path_b[len++] = v - nd[up].next;
        v = up;
      }
      uint64_t l = m->leaf_start[tr] + nd[i].next;
      derive_leaf(f, &tables[leaf_table ? leaf_table[l] : 0], cells, out + l * C, path_a, path_b, len, free_stride,
                  free_dom, odo);
    }
  }
  free(path_a);
  free(path_b);
  free(free_dom);
  free(odo);
  free(free_stride);
  free(parent);
  return ok;
}

int rdt_matrix_release(rdt_forest *f, rdt_rng *noise) {
  rdt_matrix *m = f->matrix;
  const rdt_config *c = &f->config;
  uint32_t C = rdt_forest_slots(f);
  uint64_t L = rdt_matrix_leaves(f);
  uint64_t s, t;
  if (!c->is_private) /* exact leaves: counted directly, or summed from the exact table */
    return m->exact_cells ? rdt_matrix_derive(f, &m->exact, NULL, m->exact_cells, f->counts) : 1;
  if (!m->n_tables) { /* LEAF: contract item 4 */
    if (!rdt_laplace_params(c->eps, c->partition ? 1 : c->trees, &s, &t)) return 0;
    for (uint64_t i = 0; i < L * C; i++) {
      if (rdt_cancel_poll(c->cancel, 1)) return 0; /* nothing is released (cancel.h) */
      f->counts[i] += rdt_discrete_laplace(noise, s, t);
    }
    return 1;
  }
  /* Tables: contract item 5, then item 6 (post-processing). */
  for (uint32_t g = 0; g < m->n_tables; g++) {
    const rdt_mtable *tb = &m->tables[g];
    if (!rdt_laplace_params(tb->eps, 1, &s, &t)) return 0;
    int64_t *cell = m->cells + tb->offset * C;
    for (uint64_t i = 0; i < tb->cells * C; i++) {
      if (rdt_cancel_poll(c->cancel, 1)) return 0; /* the caller wipes the cells */
      cell[i] += rdt_discrete_laplace(noise, s, t);
    }
  }
  int ok = rdt_matrix_derive(f, m->tables, m->leaf_table, m->cells, f->counts);
  /* The noisy tables are not released: wipe them like the exact state. */
  sodium_memzero(m->cells, (size_t)(m->n_cells * C) * sizeof *m->cells);
  return ok;
}

/* ---- validation of a decoded structure --------------------------------- */

int rdt_matrix_check_structure(const rdt_forest *f) {
  const rdt_matrix *m = f->matrix;
  uint32_t k = f->config.trees, nf = f->schema.n_features;
  if (m->node_start[0] != 0 || m->leaf_start[0] != 0) return 0;
  uint32_t max_nodes = 0;
  for (uint32_t t = 0; t < k; t++) {
    if (m->node_start[t + 1] <= m->node_start[t] || m->leaf_start[t + 1] <= m->leaf_start[t]) return 0;
    if (m->node_start[t + 1] - m->node_start[t] > max_nodes) max_nodes = m->node_start[t + 1] - m->node_start[t];
  }
  uint32_t *parent = malloc((size_t)max_nodes * sizeof *parent), *depth = malloc((size_t)max_nodes * sizeof *depth);
  int ok = parent && depth;
  for (uint32_t t = 0; ok && t < k; t++) {
    const rdt_mnode *nd = m->nodes + m->node_start[t];
    uint32_t n = m->node_start[t + 1] - m->node_start[t];
    uint32_t leaves = m->leaf_start[t + 1] - m->leaf_start[t];
    uint64_t expect_next = 1;
    uint32_t leaf_no = 0;
    depth[0] = 0;
    for (uint32_t i = 0; ok && i < n; i++) {
      if (i >= expect_next) { ok = 0; break; } /* unreachable node */
      if (nd[i].feature == RDT_MNODE_LEAF) {
        ok = nd[i].next == leaf_no++;
        continue;
      }
      uint32_t a = nd[i].feature;
      if (a >= nf || m->domain[a] < 2 || depth[i] >= f->config.depth || nd[i].next != expect_next) { ok = 0; break; }
      for (uint32_t v = i; v != 0 && ok;) { /* attribute not used above */
        v = parent[v];
        if (nd[v].feature == a) ok = 0;
      }
      if (expect_next + m->domain[a] > n) { ok = 0; break; }
      for (uint32_t c = 0; c < m->domain[a]; c++) {
        parent[expect_next + c] = i;
        depth[expect_next + c] = depth[i] + 1;
      }
      expect_next += m->domain[a];
    }
    if (ok && (expect_next != n || leaf_no != leaves)) ok = 0;
  }
  free(parent);
  free(depth);
  return ok;
}

/* ---- the forest's view of matrix forests (forest.h: rdt_multiway) -------- */

static void multiway_free(rdt_forest *f) {
  rdt_matrix_free(f->matrix);
  f->matrix = NULL;
}

static double multiway_leaf_scale(const rdt_forest *f) {
  return sqrt(f->matrix->expected_variance / 2); /* the Laplace scale of the same mean variance (2 b^2) */
}

static void multiway_leaves(const rdt_forest *f, const double *xs, uint32_t *leaf) {
  uint32_t bins[RDT_MATRIX_ROW_BINS];
  rdt_matrix_row_bins(f, xs, bins);
  for (uint32_t t = 0; t < f->config.trees; t++) leaf[t] = rdt_matrix_leaf(f, t, bins);
}

const rdt_multiway rdt_matrix_multiway = {
    .free = multiway_free,
    .total_leaves = rdt_matrix_leaves,
    .train_row = rdt_matrix_train_row,
    .state = rdt_matrix_state,
    .digest = rdt_matrix_digest,
    .leaf_scale = multiway_leaf_scale,
    .leaves = multiway_leaves,
};
