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
**     header flag bits, reserved word, section flags, skipped empty optional
**     sections, section order, the epsilon of a non-private model); any
**     other difference means the decoder changed what the model says;
**   - a signed model goes through rdt_model_verify (no crash);
**   - the re-encoded bytes decode again and re-encode to themselves;
**   - rdt_forest_proba / rdt_forest_predict on fixed feature vectors give
**     probability vectors (fuzz_common.h);
**   - rdt_forest_free releases everything (leaks are reported by ASan).
** An input with the magic of a partial state (RDTPART1) also goes through
** rdt_partial_decode, as it is and with its checksum recomputed: accepted
** only if it re-encodes to itself. One with the magic of a round message
** (RDTROUND) goes through rdt_round_decode, as it is and with its length
** and checksum repaired; a decoded payload is opened (round_open) by every
** learner of rounds under fixed options (ROUND_OPTIONS), which either
** refuses it with a message or takes rows, offers counters and releases the
** round from a seeded stream (no crash, no leak).
** Build with -DRDT_FUZZ_STRICT_CANONICAL to report non-canonical inputs that
** decode as crashes too.
*/
#include <stddef.h>
#include <stdint.h>

#include "core/learner.h"
#include "core/options.h"
#include "core/partial.h"
#include "core/round.h"
#include "core/sign.h"
#include "../tests/fuzz/fuzz_common.h"

#define TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

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

/* The canonical form of a BLOB that rdt_model_decode accepted: what the
** encoder writes for the same model. Mirrors the decoder's section walk
** (which sections it uses, which it skips): PRIV, SCHM, LABL (optional:
** the label's name, in a 1.2 model), FRST, MTRX (matrix
** forests) or SHRP (RDT#) before NODE, NODE, CNTR (RDT# centres, before
** LEAF), LEAF, KEPT (classification: the voting trees), CELL (optional: a non-private, unpartitioned matrix forest's
** cell table, after LEAF) and, when it is the last one and follows LEAF,
** SIGN; written in that order, each flagged required except CELL. Returns
** a malloc'd buffer of *out_size bytes. */
static unsigned char *canonical(const unsigned char *buf, size_t size, size_t *out_size) {
  enum { N_KINDS = 13, K_PRIV = 0, K_SCHM, K_UNIT, K_LABL, K_FRST, K_MTRX, K_SHRP, K_NODE, K_CNTR, K_LEAF, K_KEPT, K_CELL, K_SIGN };
  static const uint32_t order[N_KINDS] = {TAG('P', 'R', 'I', 'V'), TAG('S', 'C', 'H', 'M'), TAG('U', 'N', 'I', 'T'),
                                          TAG('L', 'A', 'B', 'L'),
                                          TAG('F', 'R', 'S', 'T'),
                                          TAG('M', 'T', 'R', 'X'), TAG('S', 'H', 'R', 'P'), TAG('N', 'O', 'D', 'E'),
                                          TAG('C', 'N', 'T', 'R'), TAG('L', 'E', 'A', 'F'), TAG('K', 'E', 'P', 'T'),
                                          TAG('C', 'E', 'L', 'L'),
                                          TAG('S', 'I', 'G', 'N')};
  size_t at[N_KINDS] = {0}, len[N_KINDS] = {0};
  int seen[N_KINDS] = {0};
  size_t end = size - RDT_CHECKSUM_BYTES, pos = RDT_HEADER_BYTES;
  uint32_t n_sections = rd32(buf + 40);
  for (uint32_t i = 0; i < n_sections; i++) {
    CHECK(end - pos >= 16);
    uint32_t tag = rd32(buf + pos);
    uint64_t l = rd64(buf + pos + 8);
    pos += 16;
    CHECK(l <= end - pos);
    uint32_t algorithm = seen[K_FRST] && len[K_FRST] >= 4 ? rd32(buf + at[K_FRST]) : 0;
    int nonprivate = seen[K_PRIV] && len[K_PRIV] >= 4 && rd32(buf + at[K_PRIV]) == 0;
    int unpartitioned = seen[K_FRST] && len[K_FRST] >= 48 && rd32(buf + at[K_FRST] + 44) == 0;
    int multiway = seen[K_MTRX] || seen[K_SHRP];
    int classification = seen[K_FRST] && len[K_FRST] >= 32 && rd32(buf + at[K_FRST] + 28) == 1;
    for (int k = 0; k < N_KINDS; k++) {
      int usable = tag == order[k] && !seen[k];
      if (k == K_UNIT) usable = usable && seen[K_SCHM] && !seen[K_LABL] && !seen[K_FRST];
      if (k == K_LABL) usable = usable && seen[K_SCHM] && !seen[K_FRST] && rd32(buf + pos - 12) == 0 && (rd32(buf + 8) & 0xFFFF) >= 2;
      if (k == K_MTRX) usable = usable && seen[K_SCHM] && algorithm == 3 && !multiway && !seen[K_NODE];
      if (k == K_SHRP) usable = usable && seen[K_SCHM] && algorithm == 4 && !multiway && !seen[K_NODE];
      if (k == K_NODE) usable = usable && (multiway || (seen[K_SCHM] && seen[K_FRST] && algorithm != 3 && algorithm != 4));
      if (k == K_CNTR) usable = usable && seen[K_SHRP] && seen[K_NODE] && !seen[K_LEAF];
      if (k == K_LEAF) usable = usable && seen[K_NODE] && (!seen[K_SHRP] || seen[K_CNTR]);
      if (k == K_KEPT) usable = usable && seen[K_LEAF] && classification;
      if (k == K_CELL) usable = usable && seen[K_LEAF] && seen[K_MTRX] && nonprivate && unpartitioned;
      if (k == K_SIGN) usable = usable && seen[K_LEAF] && pos + (size_t)l == end;
      if (usable) { seen[k] = 1; at[k] = pos; len[k] = (size_t)l; }
    }
    pos += (size_t)l;
  }
  size_t total = RDT_HEADER_BYTES + RDT_CHECKSUM_BYTES;
  uint32_t n_out = 0;
  for (int k = 0; k < N_KINDS; k++) {
    CHECK(seen[k] || k == K_UNIT || k == K_LABL || k == K_MTRX || k == K_SHRP || k == K_CNTR || k == K_KEPT || k == K_CELL || k == K_SIGN);
    if (seen[k]) { total += 16 + len[k]; n_out++; }
  }
  unsigned char *out = malloc(total);
  CHECK(out);
  memcpy(out, buf, 28);                 /* magic, version, model id */
  wr32(out + 8, RDT_FORMAT_MAJOR << 16 | (seen[K_LABL] ? 2u : 1u)); /* the version the encoder writes: 1.2 with LABL */
  /* defined flags only: seeded, non-private, signed, structure from the rows, domain from the rows */
  wr32(out + 28, rd32(buf + 28) & (15u | 32u));
  wr64(out + 32, total);
  wr32(out + 40, n_out);
  wr32(out + 44, 0);
  size_t o = RDT_HEADER_BYTES;
  for (int k = 0; k < N_KINDS; k++) {
    if (!seen[k]) continue;
    wr32(out + o, order[k]);
    wr32(out + o + 4, k == K_CELL || k == K_LABL ? 0 : 1); /* required, except the cell table and the label */
    wr64(out + o + 8, len[k]);
    memcpy(out + o + 16, buf + at[k], len[k]);
    if (k == 0 && len[k] >= 16 && rd32(out + o + 16) == 0) wr64(out + o + 24, 0); /* no mechanism: eps 0 */
    o += 16 + len[k];
  }
  crypto_generichash(out + o, RDT_CHECKSUM_BYTES, out, o, NULL, 0);
  *out_size = total;
  return out;
}

/* A learner model (learner.h): decode, predict on fixed rows, re-encode
** to the same bytes, free. */
static void try_learned(const unsigned char *buf, size_t size) {
  rdt_learned m;
  char err[256];
  err[0] = 0;
  if (!rdt_learned_decode(buf, size, rdt_learner_by_id, &m, err, sizeof err)) {
    CHECK(err[0] != 0 && memchr(err, 0, sizeof err) != NULL);
    return;
  }
  double xs[RDT_MAX_FEATURES], out[RDT_MAX_CLASSES + 1];
  for (uint32_t j = 0; j < m.schema.n_features; j++) xs[j] = 0;
  m.learner->predict(m.state, xs, out);
  if (m.common.regression) {
    CHECK(out[0] >= m.common.target_min && out[0] <= m.common.target_max);
  } else {
    double sum = 0;
    for (uint32_t k = 0; k < m.schema.n_classes; k++) {
      CHECK(out[k] >= 0 && out[k] <= 1);
      sum += out[k];
    }
    CHECK(sum > 0.999 && sum < 1.001);
  }
  size_t n = 0;
  unsigned char *again = rdt_learned_encode(&m, &n);
  CHECK(again);
  /* Another minor format re-encodes as the current one (the decoder's
  ** leniency, as for forests); the re-encoding must then be a fixed point. */
  if (m.format_minor == (rdt_model_has_label(m.label) ? 2u : 1u)) CHECK(n == size && memcmp(again, buf, size) == 0);
  rdt_learned_free(&m);
  rdt_learned g;
  CHECK(rdt_learned_decode(again, n, rdt_learner_by_id, &g, err, sizeof err));
  size_t n2 = 0;
  unsigned char *twice = rdt_learned_encode(&g, &n2);
  CHECK(twice && n2 == n && memcmp(twice, again, n) == 0);
  free(twice);
  free(again);
  rdt_learned_free(&g);
}

static void try_decode(const unsigned char *buf, size_t size) {
  rdt_forest f;
  char err[256];
  err[0] = 0;
  if (rdt_model_is_learned(buf, size)) {
    try_learned(buf, size);
    return;
  }
  if (!rdt_model_decode(buf, size, &f, err, sizeof err)) {
    /* Nothing to free: anything still allocated here is a leak (ASan). */
    CHECK(err[0] != 0 && memchr(err, 0, sizeof err) != NULL);
    return;
  }
  CHECK(f.schema.n_features >= 1 && f.config.trees >= 1);
  CHECK((f.schema.n_classes == 0) == (f.config.task == RDT_TASK_REGRESSION));
  fuzz_check_predictions(&f);
  if (f.is_signed) (void)rdt_model_verify(buf, size, f.public_key); /* must not crash; usually fails */

  size_t out_size = 0;
  unsigned char *out = rdt_model_encode(&f, &out_size);
  CHECK(out != NULL);
  CHECK(out_size == rdt_model_size(&f));
  /* An older minor format re-encodes as the current one (a different
  ** BLOB); the fixed-point check below still applies to it. */
  if (f.format_minor == (rdt_model_has_label(f.config.label) ? 2u : 1u) && (out_size != size || memcmp(out, buf, size) != 0)) {
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

/* A partial state (partial.h) is no model: the model decoders refuse it,
** and its own decoder either refuses it or accepts exactly what its encoder
** writes. Behind the checksum too: a copy with the checksum recomputed. */
static void try_partial(const unsigned char *buf, size_t size) {
  rdt_partial p;
  char err[256];
  if (!rdt_partial_decode(buf, size, &p, err, sizeof err)) {
    CHECK(err[0] != 0);
    return;
  }
  size_t n = 0;
  unsigned char *again = rdt_partial_encode(&p, &n);
  CHECK(again && n == size && memcmp(again, buf, size) == 0);
  free(again);
  rdt_partial_free(&p);
}

/* The learners of rounds under fixed options (learner.h contract 10): a
** hostile payload opens in them or is refused with a message. */
static const char *const ROUND_OPTIONS[] = {
    "{\"algorithm\": \"boost\", \"epsilon\": 1, \"classes\": [0, 1], \"features\": ["
    "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
    "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"u\", \"v\"]}]}",
    "{\"algorithm\": \"boost\", \"epsilon\": 1, \"rounds\": 2, \"bins\": 4, \"task\": \"regression\","
    " \"target\": {\"min\": 0, \"max\": 1}, \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
    "{\"algorithm\": \"boost\", \"epsilon\": null, \"classes\": [0, 1, 2], \"features\": ["
    "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
    "{\"algorithm\": \"private_tree\", \"epsilon\": 1, \"classes\": [0, 1], \"features\": ["
    "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
    "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"u\", \"v\"]}]}",
    "{\"algorithm\": \"private_tree\", \"epsilon\": null, \"depth\": 3, \"bins\": 4, \"classes\": [0, 1, 2],"
    " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
    "{\"algorithm\": \"naive_bayes\", \"readout\": \"auto\", \"epsilon\": 1, \"classes\": [0, 1], \"features\": ["
    "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
    "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"u\", \"v\"]}]}",
    /* auto's rounds need a coin key: the seed stands in for the plan's structure key */
    "{\"epsilon\": 1, \"seed\": 1, \"classes\": [0, 1], \"features\": ["
    "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
    "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"u\", \"v\"]}]}",
    "{\"epsilon\": 1, \"seed\": 2, \"task\": \"regression\", \"target\": {\"min\": 0, \"max\": 1},"
    " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
};

static void open_round(const char *opts, uint32_t round, const unsigned char *payload, size_t n) {
  char ledger[160], label[RDT_MAX_NAME + 1], err[256];
  rdt_json *root = NULL;
  rdt_schema schema;
  rdt_learn_common common;
  const rdt_learner *l = NULL;
  rdt_json *probe = rdt_json_parse(opts, strlen(opts), err, sizeof err);
  CHECK(probe && rdt_options_learner_of(probe, &l) && l && l->round_open);
  rdt_json_free(probe);
  CHECK(rdt_options_parse_learner(opts, strlen(opts), l, &root, &schema, &common, ledger, sizeof ledger, label, err,
                                  sizeof err));
  void *st = l->start(root, &schema, &common, err, sizeof err);
  CHECK(st);
  err[0] = 0;
  if (l->round_open(st, round, payload, n, err, sizeof err)) {
    double x[2] = {0.3, 1};
    for (int i = 0; i < 4; i++) l->row(st, x, (uint32_t)i % 2, 0.5);
    rdt_span sp[RDT_MAX_SPANS];
    unsigned char digest[32];
    CHECK(l->counters(st, sp, RDT_MAX_SPANS, digest) > 0);
    rdt_rng rng;
    unsigned char key[RDT_RNG_KEYBYTES] = {1};
    rdt_rng_init_seeded(&rng, key);
    rdt_bytes next = {0};
    int step = l->round_release(st, &rng, &next);
    CHECK(step >= 0 && step <= 2 && (step != 1 || next.n > 0));
    rdt_bytes_free(&next);
    rdt_rng_clear(&rng);
  } else {
    CHECK(err[0] != 0);
  }
  l->free(st);
  rdt_json_free(root);
  rdt_schema_free(&schema);
}

static void try_round(const unsigned char *buf, size_t size) {
  rdt_round_msg m;
  char err[256];
  if (!rdt_round_decode(buf, size, &m, err, sizeof err)) {
    CHECK(err[0] != 0);
    return;
  }
  for (size_t i = 0; i < sizeof ROUND_OPTIONS / sizeof *ROUND_OPTIONS; i++)
    open_round(ROUND_OPTIONS[i], m.round, m.payload, m.payload_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try_decode(data, size);
  if (rdt_round_magic(data, size)) {
    try_round(data, size);
    if (size >= RDT_ROUND_HEADER + 32) { /* the length and checksum repaired: the payload reaches the learners */
      unsigned char *copy = malloc(size);
      CHECK(copy);
      memcpy(copy, data, size);
      wr64(copy + 56, (uint64_t)(size - RDT_ROUND_HEADER - 32));
      crypto_generichash(copy + size - 32, 32, copy, size - 32, NULL, 0);
      try_round(copy, size);
      free(copy);
    }
  }
  if (rdt_partial_magic(data, size)) {
    try_partial(data, size);
    if (size >= RDT_PARTIAL_HEADER + RDT_PARTIAL_DIGEST_BYTES) {
      unsigned char *copy = malloc(size);
      CHECK(copy);
      memcpy(copy, data, size);
      crypto_generichash(copy + size - RDT_PARTIAL_DIGEST_BYTES, RDT_PARTIAL_DIGEST_BYTES, copy,
                         size - RDT_PARTIAL_DIGEST_BYTES, NULL, 0);
      try_partial(copy, size);
      free(copy);
    }
  }
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
