/*
** fuzz_model.c - libFuzzer target for rdt_model_decode (hostile model BLOBs).
**
** Each input is decoded twice:
**   1. as it is (magic, size, version, declared length, checksum checks);
**   2. when it starts with the magic and is long enough: a copy whose
**      declared length is set to its size and whose BLAKE2b checksum is
**      recomputed, so that mutations reach the section parser behind the
**      checksum (a checksum is no defence against a hostile encoder).
** When a decode succeeds:
**   - rdt_model_encode must give back the input, up to the leniencies the
**     decoder has on purpose (canonical() below: minor version, unknown
**     header flag bits, reserved word, section flags, skipped optional
**     sections, section order, the epsilon of a non-private model); any
**     other difference means the decoder changed what the model says;
**   - the re-encoded bytes decode again and re-encode to themselves;
**   - rdt_forest_proba / rdt_forest_predict on fixed feature vectors give
**     probability vectors (fuzz_common.h);
**   - rdt_forest_free releases everything (leaks are reported by ASan).
** Build with -DRDT_FUZZ_STRICT_CANONICAL to report non-canonical inputs that
** decode as crashes too.
** Build with -DRDT_FUZZ_MASK_NONE_FEATURE to skip the predictions of a model
** in which a "none" node names a feature out of range (the known crash
** tests/fuzz/crashes/model-none-node-feature-out-of-range.blob), so that a
** long run looks for other bugs instead of finding that one again.
*/
#include <sodium.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

#define TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (sodium_init() < 0) abort();
  return 0;
}

static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void wr64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* The canonical form of a BLOB that rdt_model_decode accepted: what a
** format-1.0 encoder writes for the same model. Mirrors the decoder's
** section walk (which sections it uses, which it skips). Returns a malloc'd
** buffer of *out_size bytes. */
static unsigned char *canonical(const unsigned char *buf, size_t size, size_t *out_size) {
  static const uint32_t order[5] = {TAG('P', 'R', 'I', 'V'), TAG('S', 'C', 'H', 'M'), TAG('F', 'R', 'S', 'T'),
                                    TAG('N', 'O', 'D', 'E'), TAG('L', 'E', 'A', 'F')};
  size_t at[5] = {0}, len[5] = {0};
  int seen[5] = {0};
  size_t end = size - RDT_CHECKSUM_BYTES, pos = RDT_HEADER_BYTES;
  uint32_t n_sections = rd32(buf + 40);
  for (uint32_t i = 0; i < n_sections; i++) {
    CHECK(end - pos >= 16);
    uint32_t tag = rd32(buf + pos);
    uint64_t l = rd64(buf + pos + 8);
    pos += 16;
    CHECK(l <= end - pos);
    for (int k = 0; k < 5; k++) {
      int usable = tag == order[k] && !seen[k];
      if (k == 3) usable = usable && seen[1] && seen[2]; /* NODE after SCHM and FRST */
      if (k == 4) usable = usable && seen[3];            /* LEAF after NODE */
      if (usable) { seen[k] = 1; at[k] = pos; len[k] = (size_t)l; }
    }
    pos += (size_t)l;
  }
  size_t total = RDT_HEADER_BYTES + RDT_CHECKSUM_BYTES;
  for (int k = 0; k < 5; k++) {
    CHECK(seen[k]);
    total += 16 + len[k];
  }
  unsigned char *out = malloc(total);
  CHECK(out);
  memcpy(out, buf, 28);                 /* magic, version, model id */
  wr32(out + 8, 0x00010000);            /* version 1.0 */
  wr32(out + 28, rd32(buf + 28) & 3u);  /* defined flags only */
  wr64(out + 32, total);
  wr32(out + 40, 5);
  wr32(out + 44, 0);
  size_t o = RDT_HEADER_BYTES;
  for (int k = 0; k < 5; k++) {
    wr32(out + o, order[k]);
    wr32(out + o + 4, 1); /* required */
    wr64(out + o + 8, len[k]);
    memcpy(out + o + 16, buf + at[k], len[k]);
    if (k == 0 && len[k] >= 16 && rd32(out + o + 16) == 0) wr64(out + o + 24, 0); /* no mechanism: eps 0 */
    o += 16 + len[k];
  }
  crypto_generichash(out + o, RDT_CHECKSUM_BYTES, out, o, NULL, 0);
  *out_size = total;
  return out;
}

static void try_decode(const unsigned char *buf, size_t size) {
  rdt_forest f;
  char err[256];
  err[0] = 0;
  if (!rdt_model_decode(buf, size, &f, err, sizeof err)) {
    /* Nothing to free: anything still allocated here is a leak (ASan). */
    CHECK(err[0] != 0 && memchr(err, 0, sizeof err) != NULL);
    return;
  }
  CHECK(f.schema.n_features >= 1 && f.schema.n_classes >= 1 && f.config.trees >= 1);
  int predict = 1;
#ifdef RDT_FUZZ_MASK_NONE_FEATURE
  for (size_t i = 0; i < (size_t)f.config.trees * f.n_internal; i++)
    if (f.nodes[i].kind == RDT_SPLIT_NONE && f.nodes[i].feature >= f.schema.n_features) predict = 0;
#endif
  if (predict) fuzz_check_predictions(&f);

  size_t out_size = 0;
  unsigned char *out = rdt_model_encode(&f, &out_size);
  CHECK(out != NULL);
  CHECK(out_size == rdt_model_size(&f));
  if (out_size != size || memcmp(out, buf, size) != 0) {
#ifdef RDT_FUZZ_STRICT_CANONICAL
    CHECK(!"a non-canonical model BLOB decoded");
#endif
    size_t cs;
    unsigned char *canon = canonical(buf, size, &cs);
    CHECK(cs == out_size && memcmp(canon, out, cs) == 0);
    free(canon);
  }
  rdt_forest_free(&f);

  /* The encoder's output is a model again, and a fixed point. */
  rdt_forest g;
  CHECK(rdt_model_decode(out, out_size, &g, err, sizeof err));
  size_t again_size = 0;
  unsigned char *again = rdt_model_encode(&g, &again_size);
  CHECK(again && again_size == out_size && memcmp(again, out, out_size) == 0);
  free(again);
  rdt_forest_free(&g);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try_decode(data, size);
  if (size >= RDT_HEADER_BYTES + RDT_CHECKSUM_BYTES && memcmp(data, RDT_MODEL_MAGIC, 8) == 0) {
    unsigned char *copy = malloc(size);
    CHECK(copy);
    memcpy(copy, data, size);
    wr64(copy + 32, (uint64_t)size);
    crypto_generichash(copy + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, copy, size - RDT_CHECKSUM_BYTES,
                       NULL, 0);
    if (memcmp(copy, data, size) != 0) try_decode(copy, size);
    free(copy);
  }
  return 0;
}
