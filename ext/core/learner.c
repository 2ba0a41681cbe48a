/* learner.c - the pieces every learner shares: byte buffers, a bounded
** reader and public binning (learner.h). */
#include "learner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rdt_bytes_put(rdt_bytes *b, const void *p, size_t n) {
  if (b->oom || n == 0) return;
  if (b->cap - b->n < n) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < n) {
      if (cap > SIZE_MAX / 2) { b->oom = 1; return; }
      cap *= 2;
    }
    unsigned char *q = realloc(b->p, cap);
    if (!q) { b->oom = 1; return; }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

void rdt_bytes_u32(rdt_bytes *b, uint32_t v) {
  unsigned char x[4];
  for (int i = 0; i < 4; i++) x[i] = (unsigned char)(v >> (8 * i));
  rdt_bytes_put(b, x, 4);
}

void rdt_bytes_u64(rdt_bytes *b, uint64_t v) {
  unsigned char x[8];
  for (int i = 0; i < 8; i++) x[i] = (unsigned char)(v >> (8 * i));
  rdt_bytes_put(b, x, 8);
}

void rdt_bytes_f64(rdt_bytes *b, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  rdt_bytes_u64(b, u);
}

void rdt_bytes_text(rdt_bytes *b, const char *s) { rdt_bytes_put(b, s, strlen(s)); }

void rdt_bytes_free(rdt_bytes *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

static int need(rdt_reader *r, size_t k) {
  if (r->bad || r->n - r->pos < k) {
    r->bad = 1;
    return 0;
  }
  return 1;
}

uint64_t rdt_read_u64(rdt_reader *r) {
  uint64_t v = 0;
  if (!need(r, 8)) return 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)r->p[r->pos + i] << (8 * i);
  r->pos += 8;
  return v;
}

uint32_t rdt_read_u32(rdt_reader *r) {
  uint32_t v = 0;
  if (!need(r, 4)) return 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)r->p[r->pos + i] << (8 * i);
  r->pos += 4;
  return v;
}

double rdt_read_f64(rdt_reader *r) {
  uint64_t u = rdt_read_u64(r);
  double v;
  memcpy(&v, &u, 8);
  return v;
}

uint32_t rdt_learn_bins(const rdt_feature *ft, uint32_t bins) {
  return ft->type == RDT_FEATURE_NUMERIC ? bins : ft->n_values + 1;
}

uint32_t rdt_learn_bin(const rdt_feature *ft, uint32_t bins, double x) {
  if (ft->type != RDT_FEATURE_NUMERIC) {
    /* Codes are 0 .. n_values (cleaned); anything else is `other`. */
    return x >= 0 && x < ft->n_values ? (uint32_t)x : ft->n_values;
  }
  double u = (x - ft->min) / (ft->max - ft->min) * bins;
  if (!(u >= 0)) return 0; /* also NaN: cleaned rows carry none */
  return u >= bins ? bins - 1 : (uint32_t)u;
}

/* ---- post-processing shared by the learners (learner.h) ------------------ */

void rdt_learn_softmax(const double *z, uint32_t n, double *p) {
  double m = z[0], sum = 0;
  for (uint32_t k = 1; k < n; k++)
    if (z[k] > m) m = z[k];
  for (uint32_t k = 0; k < n; k++) sum += (p[k] = exp(z[k] - m));
  for (uint32_t k = 0; k < n; k++) p[k] /= sum; /* sum >= 1: the maximum gives exp(0) */
}

void rdt_learn_frequencies(const int64_t *counts, uint32_t n, double pseudo, double *p) {
  double total = 0;
  for (uint32_t k = 0; k < n; k++) total += (p[k] = (counts[k] > 0 ? (double)counts[k] : 0) + pseudo);
  for (uint32_t k = 0; k < n; k++) p[k] = total > 0 ? p[k] / total : 1.0 / n;
}

double rdt_learn_noisy_mean(double n, double sum, double pseudo) {
  double mean = (sum + pseudo * 0.5) / ((n > 0 ? n : 0) + pseudo);
  if (!(mean == mean)) return 0.5; /* no rows and no noise */
  return mean < 0 ? 0 : mean > 1 ? 1 : mean;
}

int64_t rdt_learn_add_sat(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
  if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
  return a + b;
}

uint32_t rdt_learn_nearest_divisor(uint32_t fine, double want) {
  uint32_t best = fine;
  double best_gap = INFINITY, w = want > 1 ? want : 1;
  for (uint32_t b = 2; b <= fine; b++) {
    if (fine % b) continue;
    double gap = fabs(log((double)b / w));
    if (gap < best_gap) {
      best_gap = gap;
      best = b;
    }
  }
  return best;
}

int rdt_learn_has_numeric(const rdt_schema *s) {
  for (uint32_t f = 0; f < s->n_features; f++)
    if (s->features[f].type == RDT_FEATURE_NUMERIC) return 1;
  return 0;
}
