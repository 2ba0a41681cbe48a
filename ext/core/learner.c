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
