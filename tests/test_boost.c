/*
** test_boost.c - unit tests of the "boost" learner (ext/core/learners/boost.c)
** through the learner interface, without SQLite: the codec (encode, decode,
** encode gives the same bytes; hostile payloads refused), merge = training
** on the union, the released per-bin vectors, and finish failing closed.
** Prints "ok - name" / "not ok - name" lines and "N passed, N failed".
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/learner.h"
#include "core/learners/boost.h"
#include "core/model.h"
#include "core/options.h"

#include "../tests/check.h"

static const rdt_learner *L = &rdt_learner_boost;

/* Options parsed as rdt_fit parses them. */
typedef struct setup {
  rdt_json *opts;
  rdt_schema schema;
  rdt_learn_common common;
  int ok;
} setup;

static void setup_parse(setup *s, const char *json) {
  char ledger[160], label[RDT_MAX_NAME + 1], err[256];
  s->ok = rdt_options_parse_learner(json, strlen(json), L, &s->opts, &s->schema, &s->common, ledger, sizeof ledger,
                                    label, err, sizeof err);
  if (!s->ok) printf("# options: %s\n", err);
}

static void setup_free(setup *s) {
  if (!s->ok) return;
  rdt_json_free(s->opts);
  rdt_schema_free(&s->schema);
}

static void *start(setup *s) {
  char err[256];
  return s->ok ? L->start(s->opts, &s->schema, &s->common, err, sizeof err) : NULL;
}

#define CLS_OPTS                                                                                                  \
  "{\"algorithm\": \"boost\", \"epsilon\": %s, \"classes\": [\"a\", \"b\", \"c\"], \"features\": ["                \
  "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"                                              \
  "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"u\", \"v\"]}]%s}"
#define REG_OPTS                                                                                                  \
  "{\"algorithm\": \"boost\", \"epsilon\": %s, \"task\": \"regression\", \"target\": {\"min\": -1, \"max\": 3},"   \
  " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"                              \
  "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"u\", \"v\"]}]%s}"

/* Row i of a small data set with some signal: x in [0, 1), c in {0, 1, 2}. */
static void data_row(int i, double *x, uint32_t *cls, double *y) {
  x[0] = (i * 37 % 100) / 100.0;
  x[1] = i % 3;
  *cls = x[0] < 0.4 ? 0 : x[1] == 1 ? 1 : 2;
  if (i % 7 == 0) *cls = (*cls + 1) % 3;
  *y = -1 + 3 * x[0] + (x[1] == 0 ? 0.5 : 0);
}

static void feed(void *st, int from, int to) {
  for (int i = from; i < to; i++) {
    double x[2], y;
    uint32_t c;
    data_row(i, x, &c, &y);
    L->row(st, x, c, y);
  }
}

static int encode(const void *st, rdt_bytes *b) {
  memset(b, 0, sizeof *b);
  L->encode(st, b);
  return !b->oom;
}

/* Trains rows [0, n) in one state, finishes with the named seed; NULL when
** finish refused. */
static void *trained(setup *s, int n, const char *seed) {
  void *st = start(s);
  if (!st) return NULL;
  feed(st, 0, n);
  rdt_rng rng;
  seeded(&rng, seed);
  int ok = L->finish(st, &rng);
  rdt_rng_clear(&rng);
  if (!ok) {
    L->free(st);
    return NULL;
  }
  return st;
}

static void test_codec(const char *fmt, const char *eps, const char *extra, const char *what) {
  char json[1024], name[200];
  snprintf(json, sizeof json, fmt, eps, extra);
  setup s;
  setup_parse(&s, json);
  void *st = trained(&s, 300, "codec");
  rdt_bytes a, b = {0};
  int ok = st && encode(st, &a);
  void *back = NULL;
  if (ok) {
    rdt_reader r = {a.p, a.n, 0, 0};
    back = L->decode(&r, &s.schema, &s.common);
    ok = back && !r.bad && r.pos == r.n && encode(back, &b) && a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
  }
  snprintf(name, sizeof name, "boost %s: encode -> decode -> encode gives the same bytes", what);
  check(ok, name);
  /* Predictions of the decoded model: probabilities sum to 1, regression in bounds. */
  int good = back != NULL;
  for (int i = 0; good && i < 50; i++) {
    double x[2], y, out[3];
    uint32_t c;
    data_row(i, x, &c, &y);
    x[0] = i % 10 == 0 ? 1e300 : i % 10 == 1 ? -1e300 : x[0];
    L->predict(back, x, out);
    if (s.common.regression) {
      good = out[0] >= -1 && out[0] <= 3;
    } else {
      double sum = out[0] + out[1] + out[2];
      good = isfinite(sum) && fabs(sum - 1) < 1e-12 && out[0] >= 0 && out[1] >= 0 && out[2] >= 0;
    }
  }
  snprintf(name, sizeof name, "boost %s: predictions are probabilities summing to 1 / inside the target bounds", what);
  check(good, name);

  /* The whole model BLOB round-trips too. */
  if (ok) {
    rdt_learned m;
    memset(&m, 0, sizeof m);
    m.learner = L;
    m.state = st;
    m.schema = s.schema;
    m.common = s.common;
    size_t n1 = 0, n2 = 0;
    unsigned char *blob = rdt_learned_encode(&m, &n1), *blob2 = NULL;
    rdt_learned d;
    char err[256];
    int dec = blob && rdt_learned_decode(blob, n1, rdt_learner_by_id, &d, err, sizeof err);
    if (dec) {
      blob2 = rdt_learned_encode(&d, &n2);
      rdt_learned_free(&d);
    }
    snprintf(name, sizeof name, "boost %s: the model BLOB decodes and re-encodes to the same bytes", what);
    check(dec && blob2 && n1 == n2 && memcmp(blob, blob2, n1) == 0, name);
    free(blob);
    free(blob2);
  }
  if (back) L->free(back);
  if (st) L->free(st);
  rdt_bytes_free(&a);
  rdt_bytes_free(&b);
  setup_free(&s);
}

/* A payload edited at byte `at` (or cut to `cut` bytes) must be refused. */
static int refused(setup *s, const rdt_bytes *good, size_t at, const void *patch, size_t len, size_t cut) {
  unsigned char *p = malloc(good->n);
  memcpy(p, good->p, good->n);
  if (patch) memcpy(p + at, patch, len);
  rdt_reader r = {p, cut ? cut : good->n, 0, 0};
  void *st = L->decode(&r, &s->schema, &s->common);
  int bad = !st || r.bad || r.pos != r.n;
  if (st) L->free(st);
  free(p);
  return bad;
}

static void test_hostile(void) {
  char json[1024];
  snprintf(json, sizeof json, CLS_OPTS, "1", "");
  setup s;
  setup_parse(&s, json);
  void *st = trained(&s, 100, "hostile");
  rdt_bytes a;
  int ok = st && encode(st, &a);
  if (!ok) {
    check(0, "boost: hostile payloads (setup)");
    if (st) L->free(st);
    setup_free(&s);
    return;
  }
  uint32_t one = 1, five = 5, big = 256;
  double nan = NAN, inf = INFINITY, huge = 2e6, zero = 0, eleven = 11;
  size_t score0 = 16 + 3 * 8; /* bins, rounds, lr, 3 intercepts */
  check(refused(&s, &a, 0, &one, 4, 0) && refused(&s, &a, 0, &big, 4, 0), "boost: decode refuses bins 1 and 256");
  check(refused(&s, &a, 4, &five, 4, 0), "boost: decode refuses 5 rounds");
  check(refused(&s, &a, 8, &nan, 8, 0) && refused(&s, &a, 8, &zero, 8, 0) && refused(&s, &a, 8, &eleven, 8, 0),
        "boost: decode refuses a learning rate that is NaN, 0 or above 10");
  check(refused(&s, &a, 16, &inf, 8, 0) && refused(&s, &a, score0, &nan, 8, 0) &&
            refused(&s, &a, a.n - 8, &huge, 8, 0),
        "boost: decode refuses infinite, NaN and out-of-range scores");
  check(refused(&s, &a, 0, NULL, 0, a.n - 1) && refused(&s, &a, 0, NULL, 0, 10),
        "boost: decode refuses a truncated payload");
  unsigned char *longer = malloc(a.n + 8);
  memcpy(longer, a.p, a.n);
  memset(longer + a.n, 0, 8);
  rdt_reader r = {longer, a.n + 8, 0, 0};
  void *t = L->decode(&r, &s.schema, &s.common);
  check(t && r.pos != r.n, "boost: decode leaves trailing bytes unread (the caller refuses them)");
  if (t) L->free(t);
  free(longer);
  L->free(st);
  rdt_bytes_free(&a);
  setup_free(&s);

  snprintf(json, sizeof json, REG_OPTS, "1", "");
  setup_parse(&s, json);
  st = trained(&s, 100, "hostile-reg");
  ok = st && encode(st, &a);
  double above = 1.5;
  check(ok && refused(&s, &a, 16, &above, 8, 0) && refused(&s, &a, 16, &nan, 8, 0),
        "boost regression: decode refuses an intercept outside [0, 1]");
  if (st) L->free(st);
  if (ok) rdt_bytes_free(&a);
  setup_free(&s);
}

/* merge = training on the union: the same bytes with the same noise seed. */
static void test_merge(const char *fmt, const char *eps, const char *what) {
  char json[1024], name[200];
  snprintf(json, sizeof json, fmt, eps, "");
  setup s;
  setup_parse(&s, json);
  void *all = start(&s), *a = start(&s), *b = start(&s);
  int ok = all && a && b;
  if (ok) {
    feed(all, 0, 3000); /* past the first growth of the row copy */
    feed(a, 0, 1234);
    feed(b, 1234, 3000);
    ok = L->merge(a, b);
    rdt_rng r1, r2;
    seeded(&r1, "merge");
    seeded(&r2, "merge");
    ok = ok && L->finish(all, &r1) && L->finish(a, &r2);
    rdt_rng_clear(&r1);
    rdt_rng_clear(&r2);
    rdt_bytes x, y;
    ok = ok && encode(all, &x) && encode(a, &y) && x.n == y.n && memcmp(x.p, y.p, x.n) == 0;
    if (x.p) rdt_bytes_free(&x);
    if (y.p) rdt_bytes_free(&y);
  }
  snprintf(name, sizeof name, "boost %s: merge of two partial states = training on the union", what);
  check(ok, name);
  if (all) L->free(all);
  if (a) L->free(a);
  if (b) L->free(b);
  /* A state built with other options is refused. */
  char json2[1024];
  snprintf(json2, sizeof json2, fmt, eps, ", \"bins\": 5");
  setup s2;
  setup_parse(&s2, json2);
  void *p = start(&s), *q = start(&s2);
  snprintf(name, sizeof name, "boost %s: merge refuses a state with other options", what);
  check(p && q && !L->merge(p, q), name);
  if (p) L->free(p);
  if (q) L->free(q);
  setup_free(&s2);
  setup_free(&s);
}

/* learner.h contract 10: rows [0, n) over `sites` sites (equal ranges), in
** rounds: every round opened on a fresh state at each site and at the
** coordinator with the last payload, the sites' vectors added to the
** coordinator's, released from one seeded stream. The released state, or
** NULL; *n_rounds the rounds run; keep (when not NULL) receives a copy of
** the payload that opens round keep_round. */
static void *rounds_trained(setup *s, int n, int sites, const char *seed, uint32_t *n_rounds, rdt_bytes *keep,
                            uint32_t keep_round) {
  rdt_rng rng;
  seeded(&rng, seed);
  rdt_bytes msg = {0};
  char err[256];
  void *done = NULL;
  for (uint32_t r = 0; !done; r++) {
    void *coord = start(s);
    rdt_span sp[RDT_MAX_SPANS], ss[RDT_MAX_SPANS];
    unsigned char d1[32], d2[32];
    uint32_t k = 0;
    int ok = coord && L->round_open(coord, r, msg.p, msg.n, err, sizeof err) &&
             (k = L->counters(coord, sp, RDT_MAX_SPANS, d1)) > 0;
    for (int i = 0; ok && i < sites; i++) {
      void *st = start(s);
      ok = st && L->round_open(st, r, msg.p, msg.n, err, sizeof err);
      if (ok) feed(st, n * i / sites, n * (i + 1) / sites);
      uint32_t k2 = ok ? L->counters(st, ss, RDT_MAX_SPANS, d2) : 0;
      ok = ok && k2 == k && memcmp(d1, d2, 32) == 0 && rdt_spans_count(ss, k2) == rdt_spans_count(sp, k);
      int64_t *v = ok ? malloc(rdt_spans_count(ss, k2) * sizeof *v + 8) : NULL;
      if (v) {
        rdt_spans_read(ss, k2, v);
        ok = rdt_spans_add(sp, k, v);
        free(v);
      } else {
        ok = 0;
      }
      if (st) L->free(st);
    }
    if (keep && r == keep_round && ok) rdt_bytes_put(keep, msg.p, msg.n);
    rdt_bytes next = {0};
    int step = ok ? L->round_release(coord, &rng, &next) : 0;
    rdt_bytes_free(&msg);
    msg = next;
    if (step == 2) {
      done = coord;
      *n_rounds = r + 1;
    } else {
      if (coord) L->free(coord);
      if (step != 1) break;
    }
  }
  rdt_bytes_free(&msg);
  rdt_rng_clear(&rng);
  return done;
}

/* Contract 6: the rounds over three sites release finish()'s model on the
** union, byte for byte; a payload that is not the state's is refused,
** whatever its bytes (never a crash). */
static void test_rounds(const char *fmt, const char *eps, const char *extra, const char *what, uint32_t want_rounds) {
  char json[1024], name[240];
  snprintf(json, sizeof json, fmt, eps, extra);
  setup s;
  setup_parse(&s, json);
  void *one = trained(&s, 900, "rounds");
  uint32_t n_rounds = 0;
  rdt_bytes keep = {0};
  void *many = rounds_trained(&s, 900, 3, "rounds", &n_rounds, &keep, want_rounds - 1);
  rdt_bytes x = {0}, y = {0};
  int same = one && many && encode(one, &x) && encode(many, &y) && x.n == y.n && memcmp(x.p, y.p, x.n) == 0;
  snprintf(name, sizeof name, "boost %s: %u rounds over 3 sites release finish()'s model on the union, byte for byte",
           what, want_rounds);
  check(same && n_rounds == want_rounds, name);
  rdt_bytes_free(&x);
  rdt_bytes_free(&y);
  /* the last payload, every byte flipped and every length cut: refused or read, never a crash */
  char err[256];
  int sane = keep.n > 0, accepted = 0;
  for (size_t i = 0; sane && i <= keep.n; i++) {
    for (int mode = 0; mode < 2; mode++) {
      if (mode == 0 && i == keep.n) continue;
      if (mode == 0) keep.p[i] ^= 0x5a;
      void *st = start(&s);
      err[0] = 0;
      int opened = st && L->round_open(st, want_rounds - 1, keep.p, mode ? i : keep.n, err, sizeof err);
      if (opened) {
        accepted++;
        feed(st, 0, 10);
      } else {
        sane &= err[0] != 0;
      }
      if (st) L->free(st);
      if (mode == 0) keep.p[i] ^= 0x5a;
    }
  }
  snprintf(name, sizeof name, "boost %s: an edited or cut round payload is refused with a message, never a crash", what);
  check(sane, name);
  void *st = start(&s);
  snprintf(name, sizeof name, "boost %s: a round beyond the last, or round 0 with a payload, is refused", what);
  check(st && !L->round_open(st, want_rounds, keep.p, keep.n, err, sizeof err) &&
            !L->round_open(st, 0, keep.p, keep.n, err, sizeof err),
        name);
  if (st) L->free(st);
  st = start(&s);
  feed(st, 0, 5);
  snprintf(name, sizeof name, "boost %s: a state with rows opens no round; one in rounds never finishes in one pass",
           what);
  int refused_rows = st && !L->round_open(st, 0, NULL, 0, err, sizeof err);
  if (st) L->free(st);
  st = start(&s);
  rdt_rng rng;
  seeded(&rng, "x");
  check(refused_rows && st && L->round_open(st, 0, NULL, 0, err, sizeof err) && !L->finish(st, &rng), name);
  rdt_rng_clear(&rng);
  if (st) L->free(st);
  rdt_bytes_free(&keep);
  if (one) L->free(one);
  if (many) L->free(many);
  setup_free(&s);
}

/* finish fails closed when a share of epsilon rounds to 0 (epsilon set
** below what the options accept, as only a direct caller can). */
static int finish_with(setup *s, uint64_t eps_num, int rows) {
  s->common.eps.num = eps_num;
  void *st = start(s);
  if (!st) return -1;
  double x[3] = {0.5, 1, 0.5};
  for (int i = 0; i < rows; i++) L->row(st, x, (uint32_t)i % 2, 0);
  rdt_rng rng;
  seeded(&rng, "closed");
  int released = L->finish(st, &rng);
  rdt_rng_clear(&rng);
  rdt_bytes b;
  int zero = encode(st, &b); /* nothing released: every intercept and score is 0 */
  for (size_t k = 16; zero && k < b.n; k++) zero = b.p[k] == 0;
  rdt_bytes_free(&b);
  L->free(st);
  return released ? 1 : zero ? 0 : -1;
}

static void test_fail_closed(void) {
  char json[1024];
  snprintf(json, sizeof json, CLS_OPTS, "1", ", \"rounds\": 4"); /* 2 features x 4 rounds = 8 visits */
  setup s;
  setup_parse(&s, json);
  /* eps.num 1 and 9: eps_0 = floor(eps / 10) = 0; 17: eps_0 = 1, eps_q = 16 / 8 = 2 */
  check(s.ok && finish_with(&s, 1, 50) == 0 && finish_with(&s, 9, 50) == 0 && finish_with(&s, 17, 50) == 1,
        "boost: finish fails closed (returns 0, scores wiped) when the intercept's share rounds to 0");
  setup_free(&s);
  snprintf(json, sizeof json,
           "{\"algorithm\": \"boost\", \"epsilon\": 1, \"rounds\": 4, \"classes\": [0, 1], \"features\": ["
           "{\"name\": \"a\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
           "{\"name\": \"b\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
           "{\"name\": \"c\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}");
  setup_parse(&s, json);
  /* 12 visits; eps.num 12: eps_0 = 1, eps_q = 11 / 12 = 0; 24: eps_0 = 2, eps_q = 22 / 12 = 1 */
  check(s.ok && finish_with(&s, 12, 5) == 0 && finish_with(&s, 24, 5) == 1,
        "boost: finish fails closed when the intercept has a share but a feature visit has none");
  setup_free(&s);
}

/* Contract 3b's flag (bit 24 of the payload's first word): set by binary
** models, which describe one gradient's sensitivity; a binary payload
** without it (written before 3b) still decodes and is described with both
** sums' sensitivity; the flag on three classes, or any other value, is
** refused. */
static int described_with(const void *st, unsigned long long S) {
  rdt_bytes d = {0};
  L->describe(st, &d);
  char want[64];
  snprintf(want, sizeof want, "L1 sensitivity %llu grid units", S);
  rdt_bytes_put(&d, "", 1); /* a C string for strstr */
  int ok = !d.oom && d.n > 1 && strstr((const char *)d.p, want) != NULL;
  rdt_bytes_free(&d);
  return ok;
}

static void test_one_gradient_flag(void) {
  const char *bin = "{\"algorithm\": \"boost\", \"epsilon\": 1, \"classes\": [0, 1], \"features\": ["
                    "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  setup s;
  setup_parse(&s, bin);
  void *st = start(&s);
  int ok = st != NULL;
  rdt_bytes a = {0};
  if (ok) {
    double x = 0.3;
    for (int i = 0; i < 50; i++) L->row(st, &x, (uint32_t)(i % 2), 0);
    rdt_rng rng;
    seeded(&rng, "flag");
    ok = L->finish(st, &rng) && encode(st, &a) && a.n > 4;
    rdt_rng_clear(&rng);
  }
  const unsigned long long G = RDT_BOOST_GRID, C = RDT_BOOST_COUNT_WEIGHT;
  check(ok && a.p[3] == 1 && described_with(st, G + C), "boost: a two-class model sets the flag of contract 3b and states C + G");
  if (ok) {
    unsigned char old = 0, two = 2;
    a.p[3] = old;
    rdt_reader r = {a.p, a.n, 0, 0};
    void *back = L->decode(&r, &s.schema, &s.common);
    check(back && !r.bad && r.pos == r.n && described_with(back, 2 * G + 2 + C),
          "boost: a binary payload written before 3b decodes and states C + 2G + 2");
    if (back) L->free(back);
    check(refused(&s, &a, 3, &two, 1, 0), "boost: decode refuses a flag word of 2");
  }
  if (st) L->free(st);
  rdt_bytes_free(&a);
  setup_free(&s);

  char json[1024];
  snprintf(json, sizeof json, CLS_OPTS, "1", "");
  setup_parse(&s, json);
  st = trained(&s, 100, "flag3");
  ok = st && encode(st, &a);
  unsigned char one = 1;
  check(ok && a.p[3] == 0 && described_with(st, 2 * G + 3 + C) && refused(&s, &a, 3, &one, 1, 0),
        "boost: three classes keep both sums (C + 2G + K) and refuse the flag");
  if (st) L->free(st);
  if (ok) rdt_bytes_free(&a);
  setup_free(&s);
}

/* The released vectors without noise: with balanced binary classes the
** intercept is uniform, so each row's gradient is exactly +-G/2 and the
** count C; the trace shows those sums bin by bin: two classes release the
** count and class 1's sum only (Contract 3b). */
static void test_trace(void) {
  const char *json = "{\"algorithm\": \"boost\", \"epsilon\": null, \"bins\": 2, \"classes\": [0, 1], \"features\": ["
                     "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  setup s;
  setup_parse(&s, json);
  void *st = start(&s);
  int ok = st != NULL;
  if (ok) {
    /* bin 0: 3 rows of class 0, 1 of class 1; bin 1: 1 of class 0, 3 of class 1 */
    double lo = 0.2, hi = 0.7;
    for (int i = 0; i < 3; i++) L->row(st, &lo, 0, 0);
    L->row(st, &lo, 1, 0);
    L->row(st, &hi, 0, 0);
    for (int i = 0; i < 3; i++) L->row(st, &hi, 1, 0);
    int64_t t[2 + 2 * 2 + 1];
    memset(t, 0x55, sizeof t);
    rdt_rng rng;
    seeded(&rng, "trace");
    ok = rdt_boost_finish_traced(st, &rng, 0, t, 7);
    rdt_rng_clear(&rng);
    const int64_t G = RDT_BOOST_GRID, C = RDT_BOOST_COUNT_WEIGHT;
    ok = ok && t[0] == 4 && t[1] == 4 && t[2] == 4 * C && t[3] == -G && t[4] == 4 * C && t[5] == G &&
         t[6] == 0x5555555555555555LL;
    double x = 0.2, p[2];
    L->predict(st, &x, p);
    ok = ok && p[0] > 0.5 && p[1] < 0.5;
  }
  check(ok, "boost: the released per-bin vectors are (C * count, sum of round(G * class 1's gradient)) (no noise)");
  check(rdt_boost_sensitivity(2) == RDT_BOOST_GRID + RDT_BOOST_COUNT_WEIGHT &&
            rdt_boost_sensitivity(3) == 2 * RDT_BOOST_GRID + 3 + RDT_BOOST_COUNT_WEIGHT &&
            rdt_boost_sensitivity(0) == RDT_BOOST_GRID + RDT_BOOST_GRID / 4 &&
            rdt_boost_regression_sensitivity(512) == 640,
        "boost: the stated sensitivities (two classes C + G, K > 2 C + 2G + K; regression clip + clip / 4, at most 5G/4)");
  if (st) L->free(st);
  setup_free(&s);
}

/* Regression's clip from the released bands (Contract 3): the smallest edge
** 2^(-k/2) with at most n^/10 rows beyond every edge up to k, with a noise
** sd of margin per band summed. */
static void test_clip(void) {
  int64_t b[13] = {0};
  b[12] = 100; /* all within 2^-6: the floor G/64 */
  int ok = rdt_boost_clip_units(100, b, 0) == RDT_BOOST_GRID / 64;
  b[12] = 80;
  b[0] = 20; /* a fifth beyond 2^-0.5: no clip */
  ok = ok && rdt_boost_clip_units(100, b, 0) == RDT_BOOST_GRID;
  b[0] = 0;
  b[3] = 11; /* 11 rows in (2^-2, 2^-1.5]: the clip stays at 2^-1.5 G = 1448.2 -> 1452 */
  b[12] = 89;
  ok = ok && rdt_boost_clip_units(100, b, 0) == 1452;
  b[3] = 9; /* 9 rows beyond: within a tenth, down to the floor */
  ok = ok && rdt_boost_clip_units(100, b, 0) == RDT_BOOST_GRID / 64;
  int64_t z[13] = {0};
  z[12] = 100; /* noise sd 5: sqrt(j) 5 <= 10 up to j = 4, so 2^-2 G */
  ok = ok && rdt_boost_clip_units(100, z, 5) == RDT_BOOST_GRID / 4;
  ok = ok && rdt_boost_clip_units(-3, z, 0) == RDT_BOOST_GRID && rdt_boost_clip_units(0, z, 0) == RDT_BOOST_GRID;
  check(ok, "boost regression: the clip from the spread bands (tenth beyond, noise margin, floor G/64, empty)");
}

/* The regression release without noise: 10 rows with target 0.4 in bin 0,
** 10 with 0.6 in bin 1 (bounds [0, 1]): mean 0.5, every |target - mean| =
** 0.1 in band 6 (2^-3.5 .. 2^-3), so the clip is 2^-3 G = 512 and the count
** weight 128; the centred sum is 0; each bin's residual sum is 10 round(+-0.1 G) = +-4100; the
** steps are the bins' mean residuals. */
static void test_trace_regression(void) {
  const char *json = "{\"algorithm\": \"boost\", \"epsilon\": null, \"bins\": 2, \"task\": \"regression\","
                     " \"target\": {\"min\": 0, \"max\": 1},"
                     " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  setup s;
  setup_parse(&s, json);
  void *st = start(&s);
  int ok = st != NULL;
  if (ok) {
    double lo = 0.2, hi = 0.7;
    for (int i = 0; i < 10; i++) L->row(st, &lo, 0, 0.4);
    for (int i = 0; i < 10; i++) L->row(st, &hi, 0, 0.6);
    int64_t t[2 + 13 + 4 + 1];
    memset(t, 0x55, sizeof t);
    rdt_rng rng;
    seeded(&rng, "trace-regression");
    ok = rdt_boost_finish_traced(st, &rng, 0, t, 19);
    rdt_rng_clear(&rng);
    ok = ok && t[0] == 20 && t[1] == 10 * (-6554 + 6554); /* the centred sum */
    for (int k = 0; k < 13; k++) ok = ok && t[2 + k] == (k == 6 ? 20 : 0);
    ok = ok && t[15] == 10 * 128 && t[16] == -4100 && t[17] == 10 * 128 && t[18] == 4100 &&
         t[19] == 0x5555555555555555LL;
    double x = 0.2, y0, y1;
    L->predict(st, &x, &y0);
    x = 0.7;
    L->predict(st, &x, &y1);
    ok = ok && fabs(y0 - (0.5 - 4100.0 / 4096 / 10)) < 1e-12 && fabs(y1 - (0.5 + 4100.0 / 4096 / 10)) < 1e-12;
  }
  check(ok, "boost regression: the released count, sum, spread bands and per-bin (C_r * count, residual sum) (no noise)");
  if (st) L->free(st);
  setup_free(&s);
}

/* Private regression beats the noisy mean on data_row's signal (y = -1 + 3x
** + 0.5 [c = 0], bounds [-1, 3]): 3000 rows, epsilon 1, MSE on 300 rows. */
static void test_learns_regression(void) {
  char json[1024];
  snprintf(json, sizeof json, REG_OPTS, "1", "");
  setup s;
  setup_parse(&s, json);
  void *st = trained(&s, 3000, "learns-regression");
  double mean = 0, mse = 0, mse0 = 0;
  for (int i = 0; i < 3000; i++) {
    double x[2], y;
    uint32_t c;
    data_row(i, x, &c, &y);
    mean += y / 3000;
  }
  for (int i = 0; st && i < 300; i++) {
    double x[2], y, p;
    uint32_t c;
    data_row(i, x, &c, &y);
    L->predict(st, x, &p);
    mse += (p - y) * (p - y) / 300;
    mse0 += (mean - y) * (mean - y) / 300;
  }
  check(st && mse < 0.25 * mse0, "boost private regression: learns a two-feature signal (MSE below a quarter of the mean's)");
  if (st) L->free(st);
  setup_free(&s);
}

/* learner.h's span (boost_span): the least and greatest prediction over
** every input are reached on a grid that visits every bin of both features
** (x below, inside and above its bounds; every code and `other`); none for
** classification. */
static void test_span(void) {
  char json[1024];
  snprintf(json, sizeof json, REG_OPTS, "1", "");
  setup s;
  setup_parse(&s, json);
  void *st = trained(&s, 3000, "span");
  double lo = 0, hi = 0, mn = 1e300, mx = -1e300;
  int ok = st && L->span && L->span(st, &lo, &hi);
  for (int i = -20; ok && i <= 1020; i++)
    for (int c = 0; c <= 2; c++) {
      double x[2] = {i / 1000.0, c}, p;
      L->predict(st, x, &p);
      mn = p < mn ? p : mn;
      mx = p > mx ? p : mx;
    }
  check(ok && fabs(lo - mn) < 1e-12 && fabs(hi - mx) < 1e-12 && lo < hi && lo >= -1 && hi <= 3,
        "boost span: the least and greatest prediction over every bin combination, inside the target bounds");
  if (st) L->free(st);
  setup_free(&s);
  snprintf(json, sizeof json, CLS_OPTS, "1", "");
  setup_parse(&s, json);
  st = trained(&s, 300, "span-cls");
  check(st && !L->span(st, &lo, &hi), "boost span: none for classification");
  if (st) L->free(st);
  setup_free(&s);
}

/* Non-private and private models learn the signal of data_row. */
static void test_learns(void) {
  char json[1024];
  snprintf(json, sizeof json, CLS_OPTS, "null", "");
  setup s;
  setup_parse(&s, json);
  void *st = trained(&s, 3000, "learns");
  int right = 0;
  for (int i = 0; st && i < 300; i++) {
    double x[2], y, p[3];
    uint32_t c;
    data_row(i, x, &c, &y);
    L->predict(st, x, p);
    uint32_t best = p[1] > p[0] ? 1 : 0;
    if (p[2] > p[best]) best = 2;
    right += best == c;
  }
  check(st && right > 240, "boost non-private: learns a two-feature signal (accuracy > 0.8)");
  if (st) L->free(st);
  setup_free(&s);
}

/* "auto" bins (boost.c, top): 2400 rows of 3 classes, 2 features, eps 1:
** sqrt(n^ / 6) is within 19.5 .. 20.5 for any plausible n^ -> 20 bins. The
** rows kept at 120 and mapped to 20 must give exactly the model counted at
** 20 bins with the same noise. */
static void test_auto_bins(void) {
  char json[1024];
  setup a, f;
  snprintf(json, sizeof json, CLS_OPTS, "1", "");
  setup_parse(&a, json);
  snprintf(json, sizeof json, CLS_OPTS, "1", ", \"bins\": 20");
  setup_parse(&f, json);
  void *sa = trained(&a, 2400, "auto-bins"), *sf = trained(&f, 2400, "auto-bins");
  rdt_bytes ba = {0}, bf = {0};
  int ok = sa && sf && encode(sa, &ba) && encode(sf, &bf) && ba.n == bf.n && ba.n > 8;
  uint32_t wa = 0, wf = 0;
  for (int i = 0; ok && i < 4; i++) {
    wa |= (uint32_t)ba.p[i] << (8 * i);
    wf |= (uint32_t)bf.p[i] << (8 * i);
  }
  check(ok && wa == 20 + (120u << 16) && wf == 20 && memcmp(ba.p + 4, bf.p + 4, ba.n - 4) == 0,
        "boost auto bins: 2400 rows -> 20 bins, scores identical to fixed 20 bins with the same noise");
  int same = ok;
  for (int i = 0; same && i < 200; i++) {
    double x[2] = {i / 199.0, i % 3}, pa[3], pf[3];
    L->predict(sa, x, pa);
    L->predict(sf, x, pf);
    same &= memcmp(pa, pf, sizeof pa) == 0;
  }
  check(same, "boost auto bins: predictions identical to fixed 20 bins, at and between bin edges");
  /* decode refuses a fine resolution that is not 96/48/24/12/6 or not a multiple of the bins */
  int refused = ok;
  static const uint32_t bad[] = {20 + (96u << 16), 7 + (120u << 16), 20 + (240u << 16), 1 + (15u << 16)};
  for (size_t k = 0; ok && k < sizeof bad / sizeof bad[0]; k++) {
    unsigned char *m = malloc(ba.n);
    if (!m) break;
    memcpy(m, ba.p, ba.n);
    for (int i = 0; i < 4; i++) m[i] = (unsigned char)(bad[k] >> (8 * i));
    rdt_reader r = {m, ba.n, 0, 0};
    void *t = L->decode(&r, &a.schema, &a.common);
    refused &= t == NULL;
    if (t) L->free(t);
    free(m);
  }
  check(refused, "boost auto bins: decode refuses a bad fine resolution or bins that do not divide it");
  /* few rows: never coarser than 10 bins */
  void *sm = trained(&a, 300, "auto-bins-small");
  rdt_bytes bm = {0};
  uint32_t wm = 0;
  if (sm && encode(sm, &bm) && bm.n >= 4)
    for (int i = 0; i < 4; i++) wm |= (uint32_t)bm.p[i] << (8 * i);
  check(wm == 10 + (120u << 16), "boost auto bins: 300 rows (sqrt(50) = 7) -> 10 bins, the floor");
  rdt_bytes_free(&bm);
  if (sm) L->free(sm);
  rdt_bytes_free(&ba);
  rdt_bytes_free(&bf);
  if (sa) L->free(sa);
  if (sf) L->free(sf);
  setup_free(&a);
  setup_free(&f);
}

/* Regression smoothing (boost.c contract 4): the risk estimate keeps bins
** apart when their sums differ far beyond the noise, smooths a smooth trend
** drowned in noise, and never smooths without noise or below 3 bins. */
static void test_smooth_width(void) {
  double jagged[2 * 8], smooth[2 * 8];
  for (int b = 0; b < 8; b++) {
    jagged[2 * b] = smooth[2 * b] = 100;               /* counts */
    jagged[2 * b + 1] = b % 2 ? 40 : -40;              /* sums: alternating far apart */
    smooth[2 * b + 1] = 2.0 * b + (b % 2 ? 3 : -3);    /* a slow trend plus small wiggles */
  }
  check(rdt_boost_smooth_width(jagged, 8, 1.0) == 0, "boost regression smoothing: alternating bins far beyond the noise stay apart (w 0)");
  check(rdt_boost_smooth_width(smooth, 8, 400.0) == 1, "boost regression smoothing: a trend in noise of variance 400 is smoothed fully (w 1)");
  check(rdt_boost_smooth_width(smooth, 8, 0) == 0 && rdt_boost_smooth_width(smooth, 2, 400.0) == 0,
        "boost regression smoothing: none without noise or below 3 bins");
}

int main(void) {
  if (sodium_init() < 0) {
    printf("not ok - sodium_init\n");
    return 1;
  }
  test_codec(CLS_OPTS, "1", "", "classification");
  test_codec(CLS_OPTS, "null", ", \"rounds\": 2, \"bins\": 7", "non-private classification");
  test_codec(REG_OPTS, "1", "", "regression");
  test_codec(REG_OPTS, "0.5", ", \"learning_rate\": 0.7", "regression, own learning rate");
  test_hostile();
  test_merge(CLS_OPTS, "1", "classification");
  test_merge(REG_OPTS, "null", "non-private regression");
  test_rounds(CLS_OPTS, "1", "", "classification", 1 + 2);
  test_rounds(CLS_OPTS, "2", ", \"rounds\": 3, \"bins\": 4", "classification, 3 rounds", 1 + 3 * 2);
  test_rounds(CLS_OPTS, "null", ", \"rounds\": 2", "non-private classification", 1 + 2 * 2);
  test_rounds(REG_OPTS, "1", ", \"rounds\": 2", "regression", 2 + 2 * 2);
  test_rounds(REG_OPTS, "null", "", "non-private regression", 2 + 2);
  test_fail_closed();
  test_trace();
  test_one_gradient_flag();
  test_clip();
  test_trace_regression();
  test_learns_regression();
  test_span();
  test_learns();
  test_auto_bins();
  test_smooth_width();
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail != 0;
}
