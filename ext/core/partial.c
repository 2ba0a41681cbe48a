/* partial.c - shard mode's exact partial states and their BLOB (partial.h). */
#include "partial.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le_bytes.h"
#include "rng.h"

uint64_t rdt_spans_count(const rdt_span *s, uint32_t k) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < k; i++) n += s[i].n;
  return n;
}

void rdt_spans_read(const rdt_span *s, uint32_t k, int64_t *out) {
  for (uint32_t i = 0; i < k; i++) {
    if (s[i].n) memcpy(out, s[i].p, (size_t)s[i].n * sizeof *out);
    out += s[i].n;
  }
}

/* a + b into *out; 0 on overflow. */
static int add_exact(int64_t a, int64_t b, int64_t *out) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
  *out = a + b;
  return 1;
}

int rdt_spans_add(rdt_span *s, uint32_t k, const int64_t *in) {
  for (uint32_t i = 0; i < k; i++)
    for (uint64_t j = 0; j < s[i].n; j++)
      if (!add_exact(s[i].p[j], *in++, &s[i].p[j])) return 0;
  return 1;
}

int rdt_partial_from_spans(rdt_partial *p, const unsigned char plan[RDT_PARTIAL_DIGEST_BYTES], uint32_t round,
                           const rdt_span *s, uint32_t k, const unsigned char *message, size_t message_len) {
  memset(p, 0, sizeof *p);
  p->flags = RDT_PARTIAL_EXACT;
  memcpy(p->plan, plan, RDT_PARTIAL_DIGEST_BYTES);
  p->round = round;
  p->n = rdt_spans_count(s, k);
  p->n_ids = 1;
  p->ids = malloc(RDT_PARTIAL_ID_BYTES);
  p->counters = malloc((size_t)(p->n ? p->n : 1) * sizeof *p->counters);
  if (!p->ids || !p->counters) return 0;
  if (message_len) {
    if ((uint64_t)message_len > RDT_PARTIAL_MAX_MESSAGE || !(p->message = malloc(message_len))) return 0;
    memcpy(p->message, message, message_len);
    p->message_len = message_len;
  }
  rdt_rng os;
  rdt_rng_init_os(&os);
  rdt_rng_bytes(&os, p->ids, RDT_PARTIAL_ID_BYTES);
  rdt_rng_clear(&os);
  rdt_spans_read(s, k, p->counters);
  return 1;
}

int rdt_partial_from_masked(rdt_partial *p, const unsigned char plan[RDT_PARTIAL_DIGEST_BYTES], uint32_t round,
                            const uint64_t *vec, uint64_t n, const unsigned char id[RDT_PARTIAL_ID_BYTES]) {
  memset(p, 0, sizeof *p);
  p->flags = RDT_PARTIAL_MASKED;
  memcpy(p->plan, plan, RDT_PARTIAL_DIGEST_BYTES);
  p->round = round;
  p->n = n;
  p->n_ids = 1;
  p->ids = malloc(RDT_PARTIAL_ID_BYTES);
  p->counters = malloc((size_t)(n ? n : 1) * sizeof *p->counters);
  if (!p->ids || !p->counters) return 0;
  memcpy(p->ids, id, RDT_PARTIAL_ID_BYTES);
  for (uint64_t i = 0; i < n; i++) p->counters[i] = (int64_t)vec[i]; /* two's complement: mod 2^64 */
  return 1;
}

/* Bytes of a partial with n_ids ids, an m-byte message and n counters; 0
** when too large. */
static uint64_t blob_size(uint32_t n_ids, uint64_t m, uint64_t n) {
  if (n_ids > RDT_PARTIAL_MAX_IDS || n > RDT_PARTIAL_MAX_COUNTERS || m > RDT_PARTIAL_MAX_MESSAGE) return 0;
  return RDT_PARTIAL_HEADER + (uint64_t)n_ids * RDT_PARTIAL_ID_BYTES + m + 8 * n + RDT_PARTIAL_DIGEST_BYTES;
}

unsigned char *rdt_partial_encode(const rdt_partial *p, size_t *size) {
  uint64_t total = blob_size(p->n_ids, p->message_len, p->n);
  unsigned char *b = total && total <= SIZE_MAX ? malloc((size_t)total) : NULL;
  if (!b) return NULL;
  memcpy(b, RDT_PARTIAL_MAGIC, 8);
  rdt_le_put_u32(b + 8, RDT_PARTIAL_FORMAT);
  rdt_le_put_u32(b + 12, p->flags);
  memcpy(b + 16, p->plan, RDT_PARTIAL_DIGEST_BYTES);
  rdt_le_put_u32(b + 48, p->round);
  rdt_le_put_u32(b + 52, p->n_ids);
  rdt_le_put_u64(b + 56, p->n);
  rdt_le_put_u64(b + 64, (uint64_t)p->message_len);
  unsigned char *at = b + RDT_PARTIAL_HEADER;
  if (p->n_ids) memcpy(at, p->ids, (size_t)p->n_ids * RDT_PARTIAL_ID_BYTES);
  at += (size_t)p->n_ids * RDT_PARTIAL_ID_BYTES;
  if (p->message_len) memcpy(at, p->message, p->message_len);
  at += p->message_len;
  for (uint64_t i = 0; i < p->n; i++, at += 8) rdt_le_put_u64(at, (uint64_t)p->counters[i]);
  crypto_generichash(at, RDT_PARTIAL_DIGEST_BYTES, b, (size_t)(at - b), NULL, 0);
  *size = (size_t)total;
  return b;
}

int rdt_partial_magic(const unsigned char *buf, size_t size) {
  return size >= 8 && memcmp(buf, RDT_PARTIAL_MAGIC, 8) == 0;
}

static int fail(char *err, size_t en, const char *msg) {
  snprintf(err, en, "%s", msg);
  return 0;
}

int rdt_partial_decode(const unsigned char *buf, size_t size, rdt_partial *p, char *err, size_t en) {
  memset(p, 0, sizeof *p);
  if (!rdt_partial_magic(buf, size)) return fail(err, en, "not a partial training state of rdt_partial");
  if (size < RDT_PARTIAL_HEADER + RDT_PARTIAL_DIGEST_BYTES) return fail(err, en, "the partial state is truncated");
  if (rdt_le_get_u32(buf + 8) != RDT_PARTIAL_FORMAT) return fail(err, en, "unsupported partial state format");
  uint32_t flags = rdt_le_get_u32(buf + 12);
  if (flags != RDT_PARTIAL_EXACT && flags != RDT_PARTIAL_MASKED) return fail(err, en, "the partial state has unknown flags");
  uint32_t n_ids = rdt_le_get_u32(buf + 52);
  uint64_t n = rdt_le_get_u64(buf + 56), m = rdt_le_get_u64(buf + 64), total = blob_size(n_ids, m, n);
  if (n_ids == 0 || total == 0 || total != size)
    return fail(err, en, "the partial state's length disagrees with its header (truncated or edited)");
  unsigned char sum[RDT_PARTIAL_DIGEST_BYTES];
  crypto_generichash(sum, sizeof sum, buf, size - RDT_PARTIAL_DIGEST_BYTES, NULL, 0);
  if (sodium_memcmp(sum, buf + size - RDT_PARTIAL_DIGEST_BYTES, sizeof sum) != 0)
    return fail(err, en, "the partial state's checksum does not match (corrupted or edited)");
  const unsigned char *ids = buf + RDT_PARTIAL_HEADER;
  for (uint32_t i = 1; i < n_ids; i++)
    if (memcmp(ids + (size_t)(i - 1) * RDT_PARTIAL_ID_BYTES, ids + (size_t)i * RDT_PARTIAL_ID_BYTES,
               RDT_PARTIAL_ID_BYTES) >= 0)
      return fail(err, en, "the partial state's ids are not in order (edited)");
  p->flags = flags;
  memcpy(p->plan, buf + 16, RDT_PARTIAL_DIGEST_BYTES);
  p->round = rdt_le_get_u32(buf + 48);
  p->n_ids = n_ids;
  p->n = n;
  p->ids = malloc((size_t)n_ids * RDT_PARTIAL_ID_BYTES);
  p->counters = malloc((size_t)(n ? n : 1) * sizeof *p->counters);
  p->message = m ? malloc((size_t)m) : NULL;
  if (!p->ids || !p->counters || (m && !p->message)) {
    rdt_partial_free(p);
    return fail(err, en, "out of memory");
  }
  memcpy(p->ids, ids, (size_t)n_ids * RDT_PARTIAL_ID_BYTES);
  const unsigned char *at = ids + (size_t)n_ids * RDT_PARTIAL_ID_BYTES;
  if (m) memcpy(p->message, at, (size_t)m);
  p->message_len = (size_t)m;
  at += m;
  for (uint64_t i = 0; i < n; i++, at += 8) p->counters[i] = (int64_t)rdt_le_get_u64(at);
  return 1;
}

int rdt_partial_merge(rdt_partial *into, const rdt_partial *from, char *err, size_t en) {
  if (sodium_memcmp(into->plan, from->plan, RDT_PARTIAL_DIGEST_BYTES) != 0)
    return fail(err, en, "the partial states come from different plans");
  if (into->round != from->round) return fail(err, en, "the partial states come from different rounds");
  if (into->message_len != from->message_len ||
      (into->message_len && sodium_memcmp(into->message, from->message, into->message_len) != 0))
    return fail(err, en, "the partial states answer different round messages");
  if (into->n != from->n) return fail(err, en, "the partial states have different lengths");
  if (into->flags != from->flags) return fail(err, en, "exact partial states and masked shares do not add");
  uint64_t n_ids = (uint64_t)into->n_ids + from->n_ids;
  if (n_ids > RDT_PARTIAL_MAX_IDS) return fail(err, en, "too many partial states in one sum");
  /* The ids in order, merged; a repeat is the same partial summed twice. */
  unsigned char *ids = malloc((size_t)n_ids * RDT_PARTIAL_ID_BYTES);
  int64_t *sum = malloc((size_t)(into->n ? into->n : 1) * sizeof *sum);
  if (!ids || !sum) {
    free(ids);
    free(sum);
    return fail(err, en, "out of memory");
  }
  uint32_t a = 0, b = 0, k = 0;
  int repeat = 0;
  while (a < into->n_ids || b < from->n_ids) {
    const unsigned char *x = a < into->n_ids ? into->ids + (size_t)a * RDT_PARTIAL_ID_BYTES : NULL;
    const unsigned char *y = b < from->n_ids ? from->ids + (size_t)b * RDT_PARTIAL_ID_BYTES : NULL;
    int c = !x ? 1 : !y ? -1 : memcmp(x, y, RDT_PARTIAL_ID_BYTES);
    if (c == 0) {
      repeat = 1;
      break;
    }
    memcpy(ids + (size_t)k++ * RDT_PARTIAL_ID_BYTES, c < 0 ? x : y, RDT_PARTIAL_ID_BYTES);
    if (c < 0) a++;
    else b++;
  }
  int ok = !repeat;
  if (into->flags == RDT_PARTIAL_MASKED) /* modulo 2^64: the masks cancel only so (mask.h) */
    for (uint64_t i = 0; ok && i < into->n; i++)
      sum[i] = (int64_t)((uint64_t)into->counters[i] + (uint64_t)from->counters[i]);
  else
    for (uint64_t i = 0; ok && i < into->n; i++) ok = add_exact(into->counters[i], from->counters[i], &sum[i]);
  if (!ok) {
    sodium_memzero(sum, (size_t)(into->n ? into->n : 1) * sizeof *sum);
    free(sum);
    free(ids);
    return fail(err, en, repeat ? "the same partial state is summed twice (its rows would count twice, beyond the "
                                  "sensitivity the noise is set for)"
                                : "a counter overflows: these are not partial states of one plan");
  }
  sodium_memzero(into->counters, (size_t)(into->n ? into->n : 1) * sizeof *into->counters);
  free(into->counters);
  free(into->ids);
  into->counters = sum;
  into->ids = ids;
  into->n_ids = (uint32_t)n_ids;
  return 1;
}

void rdt_partial_free(rdt_partial *p) {
  if (p->counters) sodium_memzero(p->counters, (size_t)(p->n ? p->n : 1) * sizeof *p->counters);
  free(p->counters);
  free(p->ids);
  free(p->message);
  memset(p, 0, sizeof *p);
}
