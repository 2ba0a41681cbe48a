/* round.c - shard mode's round messages (round.h). */
#include "round.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le_bytes.h"

unsigned char *rdt_round_encode(const unsigned char plan[32], uint32_t round, uint64_t noise_at,
                                const unsigned char *payload, size_t n, size_t *size) {
  if ((uint64_t)n > RDT_ROUND_MAX_PAYLOAD) return NULL;
  size_t total = RDT_ROUND_HEADER + n + crypto_generichash_BYTES;
  unsigned char *b = malloc(total);
  if (!b) return NULL;
  memcpy(b, RDT_ROUND_MAGIC, 8);
  rdt_le_put_u32(b + 8, RDT_ROUND_FORMAT);
  memcpy(b + 12, plan, 32);
  rdt_le_put_u32(b + 44, round);
  rdt_le_put_u64(b + 48, noise_at);
  rdt_le_put_u64(b + 56, (uint64_t)n);
  if (n) memcpy(b + RDT_ROUND_HEADER, payload, n);
  crypto_generichash(b + RDT_ROUND_HEADER + n, crypto_generichash_BYTES, b, RDT_ROUND_HEADER + n, NULL, 0);
  *size = total;
  return b;
}

int rdt_round_magic(const unsigned char *buf, size_t size) {
  return size >= 8 && memcmp(buf, RDT_ROUND_MAGIC, 8) == 0;
}

static int fail(char *err, size_t en, const char *msg) {
  snprintf(err, en, "%s", msg);
  return 0;
}

int rdt_round_decode(const unsigned char *buf, size_t size, rdt_round_msg *m, char *err, size_t en) {
  memset(m, 0, sizeof *m);
  if (!rdt_round_magic(buf, size)) return fail(err, en, "not a round message of rdt_finish");
  if (size < RDT_ROUND_HEADER + crypto_generichash_BYTES) return fail(err, en, "the round message is truncated");
  if (rdt_le_get_u32(buf + 8) != RDT_ROUND_FORMAT) return fail(err, en, "unsupported round message format");
  uint64_t n = rdt_le_get_u64(buf + 56);
  if (n > RDT_ROUND_MAX_PAYLOAD || n != size - RDT_ROUND_HEADER - crypto_generichash_BYTES)
    return fail(err, en, "the round message's length disagrees with its header (truncated or edited)");
  unsigned char sum[crypto_generichash_BYTES];
  crypto_generichash(sum, sizeof sum, buf, size - sizeof sum, NULL, 0);
  if (sodium_memcmp(sum, buf + size - sizeof sum, sizeof sum) != 0)
    return fail(err, en, "the round message's checksum does not match (corrupted or edited)");
  uint32_t round = rdt_le_get_u32(buf + 44);
  if (round == 0) return fail(err, en, "the round message opens round 0 (the first round has no message)");
  memcpy(m->plan, buf + 12, 32);
  m->round = round;
  m->noise_at = rdt_le_get_u64(buf + 48);
  m->payload = buf + RDT_ROUND_HEADER;
  m->payload_len = (size_t)n;
  return 1;
}
