/*
** le_bytes.h - fixed-width little-endian integers in a byte buffer, for the
** formats shard mode exchanges (partial states, round messages).
**
**   1. rdt_le_put_u32/u64 write v at b in little-endian order, whatever the
**      host's; rdt_le_get_u32/u64 read it back.
**   2. The caller has checked that b holds 4 (8) bytes: these never check.
*/
#ifndef RDT_LE_BYTES_H
#define RDT_LE_BYTES_H

#include <stdint.h>

static inline void rdt_le_put_u32(unsigned char *b, uint32_t v) {
  for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static inline void rdt_le_put_u64(unsigned char *b, uint64_t v) {
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t rdt_le_get_u32(const unsigned char *b) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)b[i] << (8 * i);
  return v;
}

static inline uint64_t rdt_le_get_u64(const unsigned char *b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
  return v;
}

#endif
