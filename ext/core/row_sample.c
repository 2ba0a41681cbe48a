/* row_sample.c - bottom-k row sampling; see row_sample.h for the contract. */
#include "row_sample.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

int rdt_row_sample_init(rdt_row_sample *s, uint64_t k, const unsigned char *seed_key, const char *purpose) {
  memset(s, 0, sizeof *s);
  if (k < 1 || k > RDT_ROW_SAMPLE_MAX_K) return 0;
  s->k = k;
  rdt_rng_init_for(&s->rng, seed_key, purpose, 0);
  return 1;
}

/* Key of heap position a is larger than that of b: (priority, arrival). */
static int above(const rdt_row_sample *s, uint64_t a, uint64_t b) {
  return s->prio[a] > s->prio[b] || (s->prio[a] == s->prio[b] && s->seq[a] > s->seq[b]);
}

static void swap(rdt_row_sample *s, uint64_t a, uint64_t b) {
  uint64_t p = s->prio[a], q = s->seq[a];
  uint32_t l = s->slot[a];
  s->prio[a] = s->prio[b];
  s->seq[a] = s->seq[b];
  s->slot[a] = s->slot[b];
  s->prio[b] = p;
  s->seq[b] = q;
  s->slot[b] = l;
}

static void sift_up(rdt_row_sample *s, uint64_t i) {
  while (i > 0 && above(s, i, (i - 1) / 2)) {
    swap(s, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static void sift_down(rdt_row_sample *s, uint64_t i) {
  for (;;) {
    uint64_t l = 2 * i + 1, r = l + 1, top = i;
    if (l < s->size && above(s, l, top)) top = l;
    if (r < s->size && above(s, r, top)) top = r;
    if (top == i) return;
    swap(s, i, top);
    i = top;
  }
}

static int grow(rdt_row_sample *s) {
  uint64_t cap = s->cap ? s->cap * 2 : 1024;
  if (cap > s->k) cap = s->k;
  /* Each array keeps its old block if a later one fails: freed once, in rdt_row_sample_free. */
  uint64_t *p = realloc(s->prio, (size_t)cap * sizeof *p);
  if (p) s->prio = p;
  uint64_t *q = realloc(s->seq, (size_t)cap * sizeof *q);
  if (q) s->seq = q;
  uint32_t *l = realloc(s->slot, (size_t)cap * sizeof *l);
  if (l) s->slot = l;
  if (!p || !q || !l) return 0;
  s->cap = cap;
  return 1;
}

rdt_row_sample_result rdt_row_sample_offer(rdt_row_sample *s, uint64_t *slot) {
  return rdt_row_sample_offer_priority(s, rdt_rng_u64(&s->rng), slot);
}

rdt_row_sample_result rdt_row_sample_offer_priority(rdt_row_sample *s, uint64_t p, uint64_t *slot) {
  uint64_t seq = s->offered++;
  if (s->size < s->k) {
    if (s->size == s->cap && !grow(s)) return RDT_ROW_SAMPLE_NOMEM;
    uint64_t i = s->size++;
    s->prio[i] = p;
    s->seq[i] = seq;
    s->slot[i] = (uint32_t)i;
    *slot = i;
    sift_up(s, i);
    return RDT_ROW_SAMPLE_KEEP;
  }
  /* Full: the new key (p, seq) has the largest arrival number, so it is
  ** smaller than the top's only with a strictly smaller priority. */
  if (p >= s->prio[0]) return RDT_ROW_SAMPLE_SKIP;
  *slot = s->slot[0];
  s->prio[0] = p;
  s->seq[0] = seq;
  sift_down(s, 0);
  return RDT_ROW_SAMPLE_KEEP;
}

void rdt_row_sample_free(rdt_row_sample *s) {
  if (s->prio) sodium_memzero(s->prio, (size_t)s->cap * sizeof *s->prio);
  if (s->seq) sodium_memzero(s->seq, (size_t)s->cap * sizeof *s->seq);
  if (s->slot) sodium_memzero(s->slot, (size_t)s->cap * sizeof *s->slot);
  free(s->prio);
  free(s->seq);
  free(s->slot);
  s->prio = s->seq = NULL;
  s->slot = NULL;
  s->cap = s->size = 0;
  rdt_rng_clear(&s->rng);
}
