/*
** test_learners.c - unit tests of the learners behind learner.h (no SQLite):
** the registry, and each learner's options, training, release, codec and
** prediction. Prints one "ok - name" / "not ok - name" line per check and a
** closing "N passed, N failed".
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forests/forest.h"
#include "core/learner.h"
#include "core/forests/matrix.h"
#include "core/moment_fit.h"
#include "core/learners/matrix_forest.h"
#include "core/learners/naive_bayes.h"
#include "core/learners/random_trees.h"
#include "core/learners/private_tree.h"
#include "core/options.h"

#include "../tests/check.h"

/* ---- fixtures ------------------------------------------------------------ */

/* Three classes; x informative (class k lives in [k/3, (k+1)/3)), y noise,
** c informative (mostly the class's code). */
static const char *SCHEMA_OPTS =
    "{\"epsilon\": null, \"classes\": [0, 1, 2], \"features\": ["
    "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
    "{\"name\": \"y\", \"type\": \"numeric\", \"min\": -5, \"max\": 5},"
    "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"a\", \"b\", \"c\"]}]}";
#define NF 3
#define NC 3

static int make_schema(const char *opts, rdt_schema *s) {
  rdt_config c;
  char err[256];
  memset(s, 0, sizeof *s);
  int ok = rdt_options_parse(opts, strlen(opts), s, &c, err, sizeof err);
  if (!ok) printf("# schema: %s\n", err);
  return ok;
}

static rdt_learn_common common(int is_private, double eps) {
  rdt_learn_common c;
  memset(&c, 0, sizeof c);
  c.is_private = is_private;
  if (is_private) rdt_eps_from_double(eps, &c.eps);
  return c;
}

/* n synthetic rows into x (n * NF) and cls. */
static void make_rows(rdt_rng *rng, size_t n, double *x, uint32_t *cls) {
  for (size_t i = 0; i < n; i++) {
    uint32_t k = (uint32_t)rdt_rng_below(rng, NC);
    cls[i] = k;
    x[i * NF + 0] = (k + 0.05 + 0.9 * rdt_rng_unit(rng)) / 3;
    x[i * NF + 1] = -5 + 10 * rdt_rng_unit(rng);
    x[i * NF + 2] = rdt_rng_below(rng, 10) ? k : (double)rdt_rng_below(rng, 4);
  }
}

/* A learner state from a learner-options document (NULL: none). */
static void *start(const rdt_learner *l, const char *opts, const rdt_schema *s, const rdt_learn_common *c,
                   char *err, size_t en) {
  char e2[256];
  rdt_json *o = NULL;
  if (opts) {
    o = rdt_json_parse(opts, strlen(opts), e2, sizeof e2);
    if (!o) {
      snprintf(err, en, "json: %.200s", e2);
      return NULL;
    }
  }
  void *st = l->start(o, s, c, err, en);
  rdt_json_free(o);
  return st;
}

static void train(const rdt_learner *l, void *st, const double *x, const uint32_t *cls, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) l->row(st, x + i * NF, cls[i], 0);
}

static int encode(const rdt_learner *l, const void *st, rdt_bytes *b) {
  memset(b, 0, sizeof *b);
  l->encode(st, b);
  return !b->oom && b->n > 0;
}

/* Decoded, and the whole payload consumed. */
static void *decode(const rdt_learner *l, const unsigned char *p, size_t n, const rdt_schema *s,
                    const rdt_learn_common *c) {
  rdt_reader r = {p, n, 0, 0};
  void *st = l->decode(&r, s, c);
  if (st && (r.bad || r.pos != n)) {
    l->free(st);
    return NULL;
  }
  return st;
}

/* Probabilities finite, in [0, 1] and adding up to 1 at a few points,
** including ones outside the bounds and unknown codes. */
static int predictions_sane(const rdt_learner *l, const void *st, uint32_t n_classes) {
  static const double pts[][NF] = {{0.1, 0, 0}, {0.5, 4.9, 1}, {0.9, -5, 2}, {-3, 99, 3}, {7, -99, -1}, {0.5, 0, 1e9}};
  double out[16];
  for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
    l->predict(st, pts[i], out);
    double sum = 0;
    for (uint32_t k = 0; k < n_classes; k++) {
      if (!isfinite(out[k]) || out[k] < 0 || out[k] > 1) return 0;
      sum += out[k];
    }
    if (fabs(sum - 1) > 1e-9) return 0;
  }
  return 1;
}

static double accuracy(const rdt_learner *l, const void *st, const double *x, const uint32_t *cls, size_t n) {
  size_t right = 0;
  double out[NC];
  for (size_t i = 0; i < n; i++) {
    l->predict(st, x + i * NF, out);
    uint32_t best = 0;
    for (uint32_t k = 1; k < NC; k++)
      if (out[k] > out[best]) best = k;
    right += best == cls[i];
  }
  return (double)right / n;
}

/* ---- registry ------------------------------------------------------------ */

static void test_registry(void) {
  check(rdt_learner_find("naive_bayes") == &rdt_learner_naive_bayes &&
            rdt_learner_by_id(RDT_NB_ID) == &rdt_learner_naive_bayes && rdt_learner_naive_bayes.id == 2,
        "registry: naive_bayes found by name and by id 2");
  check(rdt_learner_find("naive bayes") == NULL && rdt_learner_find("") == NULL && rdt_learner_by_id(0) == NULL &&
            rdt_learner_by_id(1) == rdt_learner_find("constant") && rdt_learner_by_id(99) == NULL,
        "registry: unknown names and ids are NULL; id 1 is constant");
  check(rdt_learner_naive_bayes.tasks == RDT_LEARN_CLASSIFICATION && rdt_learner_naive_bayes.options[0] &&
            strcmp(rdt_learner_naive_bayes.options[0], "bins") == 0 && rdt_learner_naive_bayes.options[1] &&
            strcmp(rdt_learner_naive_bayes.options[1], "readout") == 0 && rdt_learner_naive_bayes.options[2] == NULL,
        "registry: naive_bayes classifies and reads the options \"bins\" and \"readout\" only");
  /* learner.h contract 8: the classic forests are the table's whole-model
  ** learner, reached only through rdt_learner_for_forests: no name or id
  ** lookup finds it, so no model is decoded as its payload and auto never
  ** takes it as a candidate. */
  const rdt_learner *f = rdt_learner_for_forests();
  check(f && f->whole_model && f->configure && f->build && f->encode && f->finish &&
            rdt_learner_find(f->name) == NULL && rdt_learner_by_id(f->id) != f && rdt_learner_find("rdt") == NULL &&
            rdt_learner_find("auto") && !rdt_learner_find("auto")->whole_model,
        "registry: the classic forests' whole-model learner is reachable only through rdt_learner_for_forests");
}

/* ---- naive Bayes ----------------------------------------------------------- */

#define NTRAIN 3000
#define NTEST 600

static void test_nb_options(const rdt_schema *s) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_learn_common c = common(0, 0);
  char err[256];
  rdt_bytes d = {0};
  void *st = start(l, NULL, s, &c, err, sizeof err);
  if (st) l->describe(st, &d);
  rdt_bytes_put(&d, "", 1);
  check(st && !d.oom && strstr((char *)d.p, "\"bins\":96,\"bins_rule\":\"auto\"") && strstr((char *)d.p, "not private"),
        "naive_bayes: no options -> \"auto\" bins, rows binned at 96 until finish, described as not private");
  l->free(st);
  rdt_bytes_free(&d);
  st = start(l, "{\"bins\": 1024, \"trees\": 3}", s, &c, err, sizeof err);
  check(st != NULL, "naive_bayes: bins 1024 accepted, other keys left to the caller");
  l->free(st);
  const char *bad[] = {"{\"bins\": 1}", "{\"bins\": 1025}", "{\"bins\": 2.5}", "{\"bins\": \"8\"}",
                       "{\"bins\": true}", "{\"bins\": null}", "{\"bins\": -3}", "{\"bins\": 1e3}", "{\"bins\": \"Auto\"}"};
  int all = 1;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = 0;
    st = start(l, bad[i], s, &c, err, sizeof err);
    all &= st == NULL && strstr(err, "\"bins\"") != NULL;
    if (st) l->free(st);
  }
  check(all, "naive_bayes: 9 bad \"bins\" refused, the message names the option");
  rdt_schema big = *s; /* a shallow copy: only the class count changes, nothing is freed */
  big.n_classes = RDT_MAX_CLASSES;
  err[0] = 0;
  st = start(l, "{\"bins\": 1024}", &big, &c, err, sizeof err);
  check(st == NULL && strstr(err, "counters") != NULL,
        "naive_bayes: 65534 classes x 1024 bins (over 2^26 counters) refused before any allocation");
  if (st) l->free(st);
  rdt_learn_common r = common(0, 0);
  r.regression = 1;
  err[0] = 0;
  st = start(l, NULL, s, &r, err, sizeof err);
  check(st == NULL && err[0], "naive_bayes: a regression task is refused");
  if (st) l->free(st);
}

/* encode -> decode -> encode of a released naive Bayes state: 1 when the two
** encodings are byte-identical (the first left in *e1 for the caller to free);
** *same: the decoded model predicts exactly as the original on 50 rows. */
static int nb_round_trip(const rdt_learner *l, void *st, const rdt_schema *s, const rdt_learn_common *c,
                         const double *tx, rdt_bytes *e1, int *same) {
  rdt_bytes e2 = {0};
  int ok = encode(l, st, e1);
  void *back = ok ? decode(l, e1->p, e1->n, s, c) : NULL;
  ok = back && encode(l, back, &e2) && e1->n == e2.n && memcmp(e1->p, e2.p, e1->n) == 0;
  *same = back != NULL;
  double o1[NC], o2[NC];
  for (size_t i = 0; *same && i < 50; i++) {
    l->predict(st, tx + i * NF, o1);
    l->predict(back, tx + i * NF, o2);
    *same &= memcmp(o1, o2, sizeof o1) == 0;
  }
  if (back) l->free(back);
  rdt_bytes_free(&e2);
  return ok;
}

/* Naive Bayes's "moments" readout (naive_bayes.c 6b, moment_fit.c): the
** fit, its payload (versions 3), hostile scores, and "both" with the
** readout choice a caller makes. */
static void test_nb_moments(const rdt_schema *s, const double *x, const uint32_t *cls, const double *tx,
                            const uint32_t *tcls) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_learn_common c = common(0, 0);
  char err[256], name[160];
  rdt_rng rng;
  seeded(&rng, "nb-moments");
  void *st = start(l, "{\"bins\": 8, \"readout\": \"moments\"}", s, &c, err, sizeof err);
  void *both = start(l, "{\"bins\": 8, \"readout\": \"both\"}", s, &c, err, sizeof err);
  if (!st || !both) {
    check(0, "naive_bayes moments: start");
    if (st) l->free(st);
    if (both) l->free(both);
    return;
  }
  train(l, st, x, cls, 0, NTRAIN);
  train(l, both, x, cls, 0, NTRAIN);
  check(l->readouts(both) == 1, "naive_bayes moments: an unreleased state offers one readout");
  int fin = l->finish(st, &rng) && l->finish(both, &rng);
  double acc = fin ? accuracy(l, st, tx, tcls, NTEST) : 0;
  snprintf(name, sizeof name, "naive_bayes moments: non-private, separable data: accuracy %.3f >= 0.97", acc);
  check(acc >= 0.97, name);
  check(fin && predictions_sane(l, st, NC), "naive_bayes moments: probabilities finite and adding up to 1");
  size_t counters = NC + NC * (8 + 8 + 4);
  rdt_bytes e1 = {0}, e3 = {0};
  int same = 0, ok = fin && nb_round_trip(l, st, s, &c, tx, &e1, &same);
  check(ok && e1.n == 36 + 16 * counters && e1.p[0] == 3,
        "naive_bayes moments: version 3, counters then scores, encode -> decode -> encode byte-identical");
  check(same, "naive_bayes moments: the decoded model predicts exactly as the original");
  double o1[NC], o2[NC];
  /* hostile scores: a NaN, an infinity, a huge one, each refused */
  int refused = ok;
  const double bad[3] = {NAN, INFINITY, 2e9};
  unsigned char *q = ok ? malloc(e1.n) : NULL;
  for (int i = 0; q && i < 3; i++) {
    memcpy(q, e1.p, e1.n);
    memcpy(q + 36 + 8 * counters + 8 * 5, &bad[i], 8); /* little-endian hosts: the f64 as written */
    rdt_reader r = {q, e1.n, 0, 0};
    void *t = l->decode(&r, s, &c);
    refused &= t == NULL && r.bad;
    if (t) l->free(t);
  }
  free(q);
  check(refused && q != NULL, "naive_bayes moments: decode refuses a NaN, infinite or 2e9 score");
  /* "both": two readouts; the Bayes one is written as version 1, the other as version 3 */
  l->predict(both, tx, o1);
  uint32_t nr = l->readouts(both);
  l->set_readout(both, 1);
  l->predict(both, tx, o2);
  int v3 = encode(l, both, &e3) && e3.n == e1.n && e3.p[0] == 3;
  rdt_bytes_free(&e3);
  l->set_readout(both, 7); /* unknown: the default */
  int v1 = encode(l, both, &e3) && e3.n == 36 + 8 * counters && e3.p[0] == 1;
  check(nr == 2 && v3 && v1 && memcmp(o1, o2, sizeof o1) != 0,
        "naive_bayes both: two readouts with different predictions; readout 1 written as version 3, an unknown one as 0 (version 1)");
  rdt_bytes_free(&e1);
  rdt_bytes_free(&e3);
  l->free(st);
  l->free(both);
  st = start(l, "{\"readout\": \"logistic\"}", s, &c, err, sizeof err);
  check(st == NULL && strstr(err, "\"readout\"") != NULL, "naive_bayes: an unknown \"readout\" is refused, naming the option");
  if (st) l->free(st);
}

/* Naive Bayes's "readout": "auto" (naive_bayes.c 6c): the rows kept for the
** choice survive a merge, the choice is the better readout without noise,
** version 5 round-trips and decode checks its share. */
static void test_nb_readout_auto(const rdt_schema *s, const double *x, const uint32_t *cls, const double *tx) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_learn_common c = common(1, 1.0), np = common(0, 0);
  char err[256];
  rdt_rng r1, r2, r3;
  seeded(&r1, "nb-readout-auto");
  seeded(&r2, "nb-readout-auto");
  seeded(&r3, "nb-readout-both");
  const char *o = "{\"bins\": 8, \"readout\": \"auto\"}";
  void *one = start(l, o, s, &c, err, sizeof err), *a = start(l, o, s, &c, err, sizeof err),
       *b = start(l, o, s, &c, err, sizeof err), *exact = start(l, o, s, &np, err, sizeof err),
       *both = start(l, "{\"bins\": 8, \"readout\": \"both\"}", s, &np, err, sizeof err);
  if (!one || !a || !b || !exact || !both) {
    check(0, "naive_bayes readout auto: start");
    goto done;
  }
  train(l, one, x, cls, 0, NTRAIN);
  train(l, a, x, cls, 0, NTRAIN / 3);
  train(l, b, x, cls, NTRAIN / 3, NTRAIN);
  rdt_bytes e1 = {0}, e2 = {0};
  int merged = l->merge(a, b) && l->finish(one, &r1) && l->finish(a, &r2) && encode(l, one, &e1) && encode(l, a, &e2);
  check(merged && e1.n == e2.n && memcmp(e1.p, e2.p, e1.n) == 0,
        "naive_bayes readout auto: two partial states merged (kept rows too) give the one-state model byte for byte");
  uint32_t v = 0, inner = 0;
  uint64_t share = 0;
  if (merged && e1.n >= 16) {
    memcpy(&v, e1.p, 4); /* little-endian hosts */
    memcpy(&share, e1.p + 4, 8);
    memcpy(&inner, e1.p + 12, 4);
  }
  check(v == 5 && share == c.eps.num / 20 && (inner == 1 || inner == 3),
        "naive_bayes readout auto: payload version 5, the choice's share eps / 20, then a version 1 or 3 payload");
  int same = 0;
  rdt_bytes e3 = {0};
  check(merged && nb_round_trip(l, one, s, &c, tx, &e3, &same) && same,
        "naive_bayes readout auto: encode -> decode -> encode byte-identical, same predictions");
  rdt_bytes_free(&e3);
  /* decode refuses another share, a nested version 5, and a private model read as not private */
  int refused = merged;
  unsigned char *q = merged ? malloc(e1.n) : NULL;
  for (int i = 0; q && i < 3; i++) {
    memcpy(q, e1.p, e1.n);
    if (i == 0) {
      uint64_t other = share + 1;
      memcpy(q + 4, &other, 8);
    }
    if (i == 1) q[12] = 5;
    void *t = decode(l, q, e1.n, s, i == 2 ? &np : &c);
    refused &= t == NULL;
    if (t) l->free(t);
  }
  free(q);
  check(refused && q, "naive_bayes readout auto: decode refuses a share other than eps / 20, a nested version 5, and "
                      "a private payload under a non-private model");
  rdt_bytes_free(&e1);
  rdt_bytes_free(&e2);
  /* without noise: the readout with more correct training rows ("both" gives both on the same tables) */
  train(l, exact, x, cls, 0, NTRAIN);
  train(l, both, x, cls, 0, NTRAIN);
  if (l->finish(exact, &r3) && l->finish(both, &r3)) {
    double right[2] = {0, 0};
    for (uint32_t r = 0; r < 2; r++) {
      l->set_readout(both, r);
      right[r] = accuracy(l, both, x, cls, NTRAIN);
    }
    l->set_readout(both, right[1] > right[0]);
    double o1[NC], o2[NC];
    int agree = right[0] != right[1];
    for (size_t i = 0; agree && i < 50; i++) {
      l->predict(exact, tx + i * NF, o1);
      l->predict(both, tx + i * NF, o2);
      agree &= memcmp(o1, o2, sizeof o1) == 0;
    }
    check(agree, "naive_bayes readout auto: without noise it predicts as the readout with more correct training rows");
  } else {
    check(0, "naive_bayes readout auto: finish without noise");
  }
  rdt_learn_common tiny = common(1, 1e-9); /* eps / 20 rounds to 0 at 2^-32 */
  void *t = start(l, o, s, &tiny, err, sizeof err);
  check(t == NULL && strstr(err, "\"readout\": \"auto\"") != NULL,
        "naive_bayes readout auto: an epsilon whose share rounds to 0 is refused before any row");
  if (t) l->free(t);
done:
  if (one) l->free(one);
  if (a) l->free(a);
  if (b) l->free(b);
  if (exact) l->free(exact);
  if (both) l->free(both);
  rdt_rng_clear(&r1);
  rdt_rng_clear(&r2);
  rdt_rng_clear(&r3);
}

static void test_nb_nonprivate(const rdt_schema *s, const double *x, const uint32_t *cls, const double *tx,
                               const uint32_t *tcls) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_learn_common c = common(0, 0);
  char err[256];
  rdt_rng rng;
  seeded(&rng, "nb-nonprivate");
  void *st = start(l, "{\"bins\": 8}", s, &c, err, sizeof err);
  if (!st) {
    check(0, "naive_bayes: start");
    return;
  }
  train(l, st, x, cls, 0, NTRAIN);
  double out[NC];
  l->predict(st, tx, out);
  check(out[0] == 1.0 / 3 && out[1] == 1.0 / 3 && out[2] == 1.0 / 3, "naive_bayes: before finish it predicts uniformly");
  rdt_bytes b;
  l->encode(st, (memset(&b, 0, sizeof b), &b));
  check(b.oom && b.n == 0, "naive_bayes: encode refuses an unreleased state");
  rdt_bytes_free(&b);
  rdt_rng before = rng;
  check(l->finish(st, &rng) == 1 && memcmp(&before, &rng, sizeof rng) == 0,
        "naive_bayes: non-private finish draws no noise");
  double acc = accuracy(l, st, tx, tcls, NTEST);
  char name[128];
  snprintf(name, sizeof name, "naive_bayes: non-private, separable data: accuracy %.3f >= 0.97", acc);
  check(acc >= 0.97, name);
  check(predictions_sane(l, st, NC), "naive_bayes: probabilities finite and adding up to 1");

  /* codec */
  rdt_bytes e1 = {0};
  int same = 0, ok = nb_round_trip(l, st, s, &c, tx, &e1, &same);
  check(ok && e1.n == 36 + 8 * (NC + NC * (8 + 8 + 4)),
        "naive_bayes: encode -> decode -> encode is byte-identical (36-byte header + counters)");
  check(same, "naive_bayes: the decoded model predicts exactly as the original");

  int all = 1;
  for (size_t n = 0; n < e1.n; n++) {
    rdt_reader r = {e1.p, n, 0, 0};
    void *t = l->decode(&r, s, &c);
    all &= t == NULL && r.bad;
    if (t) l->free(t);
  }
  check(all, "naive_bayes: decode rejects every truncation");

  /* Every single-bit flip: rejected or decoded into a sane model. Flips of
  ** the version, private flag, shares, C and d must all be rejected. */
  int safe = 1, strict = 1;
  long rejected = 0;
  unsigned char *p = malloc(e1.n);
  for (size_t bit = 0; p && bit < 8 * e1.n; bit++) {
    memcpy(p, e1.p, e1.n);
    p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    rdt_reader r = {p, e1.n, 0, 0};
    void *t = l->decode(&r, s, &c);
    if (t) {
      safe &= predictions_sane(l, t, NC);
      l->free(t);
    } else {
      rejected++;
    }
    size_t byte = bit / 8;
    if (byte < 36 && !(byte >= 4 && byte < 8)) strict &= t == NULL;
  }
  free(p);
  snprintf(name, sizeof name, "naive_bayes: %zu single-bit flips: no crash, every decoded one sane (%ld rejected)",
           8 * e1.n, rejected);
  check(safe, name);
  check(strict, "naive_bayes: every flip of version, private flag, shares, classes or features is rejected");

  /* crafted headers: bins outside 2..1024, a foreign schema */
  unsigned char h[36];
  memcpy(h, e1.p, 36);
  int refused = 1;
  for (uint32_t bins = 0; bins < 3; bins++) {
    uint32_t v = bins == 0 ? 1 : bins == 1 ? 1025 : 0;
    for (int i = 0; i < 4; i++) h[4 + i] = (unsigned char)(v >> (8 * i));
    unsigned char *q = malloc(36 + 8 * 100000);
    if (!q) continue;
    memcpy(q, h, 36);
    memset(q + 36, 0, 8 * 100000);
    rdt_reader r = {q, 36 + 8 * 100000, 0, 0};
    void *t = l->decode(&r, s, &c);
    refused &= t == NULL && r.bad;
    if (t) l->free(t);
    free(q);
  }
  check(refused, "naive_bayes: decode refuses bins 0, 1 and 1025");
  rdt_schema other;
  if (make_schema("{\"epsilon\": null, \"classes\": [0, 1], \"features\": ["
                  "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
                  "{\"name\": \"y\", \"type\": \"numeric\", \"min\": -5, \"max\": 5},"
                  "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"a\", \"b\", \"c\"]}]}",
                  &other)) {
    void *t = decode(l, e1.p, e1.n, &other, &c);
    check(t == NULL, "naive_bayes: decode refuses a payload of another schema (2 classes, not 3)");
    if (t) l->free(t);
    rdt_schema_free(&other);
  }
  rdt_learn_common pc = common(1, 1.0);
  void *t = decode(l, e1.p, e1.n, s, &pc);
  check(t == NULL, "naive_bayes: a non-private payload is refused where a private model is expected");
  if (t) l->free(t);

  /* hostile counters: extreme values still give sane probabilities */
  p = malloc(e1.n);
  if (p) {
    memcpy(p, e1.p, e1.n);
    for (size_t i = 36; i + 8 <= e1.n; i += 8) {
      uint64_t v = (i / 8) % 3 == 0 ? (uint64_t)INT64_MAX : (i / 8) % 3 == 1 ? (uint64_t)INT64_MIN : 0;
      for (int j = 0; j < 8; j++) p[i + j] = (unsigned char)(v >> (8 * j));
    }
    t = decode(l, p, e1.n, s, &c);
    check(t && predictions_sane(l, t, NC), "naive_bayes: counters at INT64_MAX / INT64_MIN still predict sanely");
    if (t) l->free(t);
    free(p);
  }
  rdt_bytes_free(&e1);

  /* merge: two halves equal the whole */
  void *a = start(l, "{\"bins\": 8}", s, &c, err, sizeof err), *bb = start(l, "{\"bins\": 8}", s, &c, err, sizeof err);
  void *w = start(l, "{\"bins\": 9}", s, &c, err, sizeof err);
  if (a && bb && w) {
    train(l, a, x, cls, 0, NTRAIN / 3);
    train(l, bb, x, cls, NTRAIN / 3, NTRAIN);
    check(l->merge(w, a) == 0, "naive_bayes: merge refuses a state of other options (bins 9 vs 8)");
    int merged = l->merge(a, bb) == 1 && l->finish(a, &rng) == 1;
    rdt_bytes m1, m2;
    merged = merged && encode(l, a, &m1);
    merged = merged && encode(l, st, &m2);
    check(merged && m1.n == m2.n && memcmp(m1.p, m2.p, m1.n) == 0,
          "naive_bayes: merge of two parts equals training on their union (byte-identical)");
    check(l->merge(a, bb) == 0 && l->merge(bb, a) == 0, "naive_bayes: merge refuses a released state");
    if (merged) {
      rdt_bytes_free(&m1);
      rdt_bytes_free(&m2);
    }
  }
  if (a) l->free(a);
  if (bb) l->free(bb);
  if (w) l->free(w);
  rdt_rng_clear(&rng);
  l->free(st);
}

static void test_nb_private(const rdt_schema *s, const double *x, const uint32_t *cls, const double *tx,
                            const uint32_t *tcls) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_learn_common c = common(1, 1.0);
  char err[256], name[160];
  rdt_rng rng;
  seeded(&rng, "nb-private");
  void *st = start(l, "{\"bins\": 8}", s, &c, err, sizeof err);
  if (!st) {
    check(0, "naive_bayes: private start");
    return;
  }
  train(l, st, x, cls, 0, NTRAIN);
  check(l->finish(st, &rng) == 1, "naive_bayes: private finish");
  check(l->finish(st, &rng) == 0, "naive_bayes: a second finish is refused (noise is added once)");
  double acc = accuracy(l, st, tx, tcls, NTEST);
  snprintf(name, sizeof name, "naive_bayes: eps 1, %d rows: accuracy %.3f >= 0.9", NTRAIN, acc);
  check(acc >= 0.9, name);
  check(predictions_sane(l, st, NC), "naive_bayes: private probabilities finite and adding up to 1");

  rdt_bytes e1, e2, d = {0};
  int ok = encode(l, st, &e1);
  uint64_t ec = 0, et = 0;
  for (int i = 0; ok && i < 8; i++) {
    ec |= (uint64_t)e1.p[12 + i] << (8 * i);
    et |= (uint64_t)e1.p[20 + i] << (8 * i);
  }
  check(ok && et == c.eps.num && ec == 0,
        "naive_bayes: fixed bins: all of eps to the tables, none to a row count (contract 3c)");
  uint64_t per = c.eps.num / (NF + 1);
  /* contract 3c: each class count is the rounded mean of its row sums over the tables (bins 8, 8, 4) */
  int derived_ok = ok;
  static const int nbins[NF] = {8, 8, 4};
  for (int k = 0; derived_ok && k < NC; k++) {
    double m = 0;
    size_t at = NC;
    for (int f = 0; f < NF; f++) {
      for (int b = 0; b < nbins[f]; b++) {
        int64_t v = 0;
        for (int i = 0; i < 8; i++) v |= (int64_t)((uint64_t)e1.p[36 + 8 * (at + (size_t)k * nbins[f] + b) + i] << (8 * i));
        m += (double)v;
      }
      at += (size_t)NC * nbins[f];
    }
    int64_t got = 0;
    for (int i = 0; i < 8; i++) got |= (int64_t)((uint64_t)e1.p[36 + 8 * k + i] << (8 * i));
    derived_ok = got == (int64_t)llround(m / NF);
  }
  check(derived_ok, "naive_bayes: each released class count is its rows' mean sum over the noisy tables");
  l->describe(st, &d);
  rdt_bytes_put(&d, "", 1);
  check(!d.oom && strstr((char *)d.p, "\"mechanism\":\"naive Bayes: discrete Laplace noise of scale d/epsilon_tables") &&
            strstr((char *)d.p, "\"epsilon_class_counts\":0,\"epsilon_row_count\":0,\"epsilon_tables\":1,") &&
            strstr((char *)d.p, "\"bins\":8,") && d.p[d.n - 2] == ',',
        "naive_bayes: describe reports the mechanism, bins and the shares, members ending in a comma");
  rdt_bytes_free(&d);
  /* A model written before contract 3c (the old split, class counts released) still reads. */
  unsigned char *old = ok ? malloc(e1.n) : NULL;
  if (old) {
    memcpy(old, e1.p, e1.n);
    uint64_t oc = c.eps.num - NF * per, ot = NF * per;
    for (int i = 0; i < 8; i++) {
      old[12 + i] = (unsigned char)(oc >> (8 * i));
      old[20 + i] = (unsigned char)(ot >> (8 * i));
    }
    void *t = decode(l, old, e1.n, s, &c);
    rdt_bytes od = {0};
    if (t) l->describe(t, &od);
    rdt_bytes_put(&od, "", 1);
    check(t && predictions_sane(l, t, NC) && strstr((char *)od.p, "scale (d+1)/epsilon on every class count"),
          "naive_bayes: a model with the older split (class counts released) still decodes and says so");
    rdt_bytes_free(&od);
    if (t) l->free(t);
    free(old);
  }
  void *back = ok ? decode(l, e1.p, e1.n, s, &c) : NULL;
  ok = back && encode(l, back, &e2);
  check(ok && e1.n == e2.n && memcmp(e1.p, e2.p, e1.n) == 0, "naive_bayes: private encode -> decode -> encode identical");
  if (back) l->free(back);
  if (ok) rdt_bytes_free(&e2);
  rdt_learn_common c2 = common(1, 2.0), np = common(0, 0);
  void *t1 = decode(l, e1.p, e1.n, s, &c2), *t2 = decode(l, e1.p, e1.n, s, &np);
  check(!t1 && !t2, "naive_bayes: decode refuses shares not split from the model's eps, and a non-private reading");
  if (t1) l->free(t1);
  if (t2) l->free(t2);
  int safe = 1;
  unsigned char *p = malloc(e1.n);
  for (size_t bit = 0; p && bit < 8 * 36; bit++) {
    memcpy(p, e1.p, e1.n);
    p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    rdt_reader r = {p, e1.n, 0, 0};
    void *t = l->decode(&r, s, &c);
    if (t) {
      safe &= predictions_sane(l, t, NC) && bit / 8 >= 4 && bit / 8 < 8; /* only bins may change */
      l->free(t);
    }
  }
  free(p);
  check(safe, "naive_bayes: private header flips are rejected (bins flips may decode, sanely)");
  rdt_bytes_free(&e1);
  l->free(st);

  /* eps too small to split over d + 1 counters: nothing drawn, nothing released */
  rdt_learn_common tiny = common(1, 1.0);
  tiny.eps.num = NF; /* floor(3 / 4) = 0 for the tables */
  st = start(l, NULL, s, &tiny, err, sizeof err);
  if (st) {
    train(l, st, x, cls, 0, 10);
    rdt_rng before = rng;
    rdt_bytes b;
    int fin = l->finish(st, &rng);
    l->encode(st, (memset(&b, 0, sizeof b), &b));
    check(fin == 0 && memcmp(&before, &rng, sizeof rng) == 0 && b.oom && b.n == 0,
          "naive_bayes: finish with eps below 4(d+1)/2^32 (auto bins) returns 0, draws nothing, releases nothing");
    rdt_bytes_free(&b);
    l->free(st);
  } else {
    check(0, "naive_bayes: start with a tiny eps");
  }
  rdt_rng_clear(&rng);
}

/* "auto" bins (naive_bayes.c contract 3b): the table is coarsened exactly
** from the fine resolution, the count follows the square-root rule on the
** (noisy) row count, and version 2 round-trips and is checked on decode. */
static void test_nb_auto_bins(const rdt_schema *s, const double *x, const uint32_t *cls, const double *tx) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_learn_common c = common(0, 0);
  char err[256];
  rdt_rng rng;
  seeded(&rng, "nb-auto");
  /* not private: sqrt(3000 / 3) = 31.6 -> 32 bins; the same model as fixed 32 bins */
  void *a = start(l, "{\"bins\": \"auto\"}", s, &c, err, sizeof err), *f = start(l, "{\"bins\": 32}", s, &c, err, sizeof err);
  if (!a || !f) {
    check(0, "naive_bayes auto: start");
    if (a) l->free(a);
    if (f) l->free(f);
    return;
  }
  train(l, a, x, cls, 0, NTRAIN);
  train(l, f, x, cls, 0, NTRAIN);
  int ok = l->finish(a, &rng) == 1 && l->finish(f, &rng) == 1;
  rdt_bytes d = {0};
  l->describe(a, &d);
  rdt_bytes_put(&d, "", 1);
  check(ok && !d.oom && strstr((char *)d.p, "\"bins\":32,\"bins_rule\":\"auto\""),
        "naive_bayes auto, not private: 3000 rows of 3 classes -> sqrt(1000) -> 32 bins");
  rdt_bytes_free(&d);
  double o1[NC], o2[NC], worst = 0;
  for (size_t i = 0; ok && i < NTEST; i++) {
    l->predict(a, tx + i * NF, o1);
    l->predict(f, tx + i * NF, o2);
    for (int k = 0; k < NC; k++) worst = fmax(worst, fabs(o1[k] - o2[k]));
  }
  check(ok && worst < 1e-12, "naive_bayes auto: tables coarsened from 96 bins predict as tables counted at 32");
  l->free(a);
  l->free(f);

  /* private, eps 0.12: sqrt(n^ 0.12 / 3) ~ 11 -> 12 bins (n^ is within a few % of 3000) */
  rdt_learn_common pc = common(1, 0.12);
  a = start(l, NULL, s, &pc, err, sizeof err);
  rdt_bytes e1 = {0}, e2 = {0};
  ok = a != NULL;
  if (ok) {
    train(l, a, x, cls, 0, NTRAIN);
    ok = l->finish(a, &rng) == 1 && encode(l, a, &e1);
  }
  memset(&d, 0, sizeof d);
  if (ok) l->describe(a, &d);
  rdt_bytes_put(&d, "", 1);
  check(ok && !d.oom && strstr((char *)d.p, "\"bins\":12,\"bins_rule\":\"auto"),
        "naive_bayes auto, eps 0.12: 12 bins from the noisy row count");
  rdt_bytes_free(&d);
  /* version 2: u32 version, u32 bins, u32 fine, ...; 2 numeric tables of 12 bins, 1 of 4 codes */
  uint32_t ver = ok ? (uint32_t)e1.p[0] : 0, fine = ok ? (uint32_t)e1.p[8] : 0;
  void *back = ok ? decode(l, e1.p, e1.n, s, &pc) : NULL;
  int same = back && encode(l, back, &e2) && e1.n == e2.n && memcmp(e1.p, e2.p, e1.n) == 0;
  for (size_t i = 0; same && i < NTEST; i++) {
    l->predict(a, tx + i * NF, o1);
    l->predict(back, tx + i * NF, o2);
    same &= memcmp(o1, o2, sizeof o1) == 0;
  }
  check(same && ver == 2 && fine == 96 && e1.n == 40 + 8 * (NC + NC * (12 + 12 + 4)),
        "naive_bayes auto: version 2 (fine 96) round-trips byte-identical and predicts identically");
  if (back) l->free(back);
  int refused = ok;
  static const uint32_t bad_fine[] = {95, 0, 192, 7};
  for (size_t i = 0; ok && i < sizeof bad_fine / sizeof bad_fine[0]; i++) {
    unsigned char *m = malloc(e1.n);
    if (!m) break;
    memcpy(m, e1.p, e1.n);
    m[8] = (unsigned char)bad_fine[i];
    m[9] = (unsigned char)(bad_fine[i] >> 8);
    void *t = decode(l, m, e1.n, s, &pc);
    refused &= t == NULL;
    if (t) l->free(t);
    free(m);
  }
  if (ok) { /* bins 7: not a divisor of 96 */
    unsigned char *m = malloc(e1.n);
    if (m) {
      memcpy(m, e1.p, e1.n);
      m[4] = 7;
      void *t = decode(l, m, e1.n, s, &pc);
      refused &= t == NULL;
      if (t) l->free(t);
      free(m);
    }
  }
  check(refused, "naive_bayes auto: decode refuses a fine resolution outside 96/48/24/12/6 and bins that do not divide it");
  rdt_bytes_free(&e1);
  rdt_bytes_free(&e2);
  if (a) l->free(a);
  rdt_rng_clear(&rng);
}

/* private_tree "depth": "auto" (contract 3b): 3000 rows, 3 classes, eps 1:
** n^ / 12 is about 250 leaves' worth of rows -> depth 7 (8K/eps, the rule
** before, would give 6: the classes no longer shrink it); the shares add up to
** eps exactly; the payload round-trips and its used depth is checked. */
static void test_pt_auto_depth(const rdt_schema *s, const double *x, const uint32_t *cls) {
  const rdt_learner *l = &rdt_learner_private_tree;
  rdt_learn_common c = common(1, 1.0);
  char err[256];
  rdt_rng rng;
  seeded(&rng, "pt-auto");
  void *st = start(l, NULL, s, &c, err, sizeof err);
  rdt_bytes e = {0}, e2 = {0}, d = {0};
  int ok = st != NULL;
  if (ok) {
    train(l, st, x, cls, 0, NTRAIN);
    ok = l->finish(st, &rng) == 1 && encode(l, st, &e);
  }
  if (ok) l->describe(st, &d);
  rdt_bytes_put(&d, "", 1);
  check(ok && !d.oom && strstr((char *)d.p, "\"depth\":\"auto\",\"depth_used\":7,\"bins\":32,"),
        "private_tree auto depth: 3000 rows of 3 classes at eps 1 -> depth 7 (bins 32 by default)");
  rdt_bytes_free(&d);
  /* header: version, bins, depth 0 (auto), used depth, private, per-level num, leaf num */
  uint32_t depth = 0, used = 0;
  uint64_t lev = 0, leaf = 0;
  for (int i = 0; ok && i < 4; i++) {
    depth |= (uint32_t)e.p[8 + i] << (8 * i);
    used |= (uint32_t)e.p[12 + i] << (8 * i);
  }
  for (int i = 0; ok && i < 8; i++) {
    lev |= (uint64_t)e.p[20 + i] << (8 * i);
    leaf |= (uint64_t)e.p[28 + i] << (8 * i);
  }
  check(ok && depth == 0 && used == 7 && c.eps.num / 20 + 7 * lev + leaf == c.eps.num && lev > 0,
        "private_tree auto depth: eps / 20 for the count, 7 levels and the leaves add up to eps exactly");
  void *back = ok ? decode(l, e.p, e.n, s, &c) : NULL;
  check(back && encode(l, back, &e2) && e2.n == e.n && memcmp(e.p, e2.p, e.n) == 0,
        "private_tree auto depth: encode -> decode -> encode is byte-identical");
  if (back) l->free(back);
  rdt_bytes_free(&e2);
  int refused = ok;
  for (uint32_t bad = 0; ok && bad <= 9; bad += 9) { /* used depth 0 (with candidates) or 9 */
    unsigned char *m = malloc(e.n);
    if (!m) break;
    memcpy(m, e.p, e.n);
    m[12] = (unsigned char)bad;
    void *t = decode(l, m, e.n, s, &c);
    refused &= t == NULL;
    if (t) l->free(t);
    free(m);
  }
  check(refused, "private_tree auto depth: decode refuses a used depth of 0 or 9");
  rdt_bytes_free(&e);
  if (st) l->free(st);
  /* the counted rows decide: 60 rows, read on the noisy count n^ = 60 + Z,
  ** Z the first draw of finish (discrete Laplace of scale 20 at eps / 20),
  ** replayed from a copy of the stream (this stream: n^ = 42, 42 / 12 = 3.5
  ** -> depth 1). A stream of its own, so Z does not depend on the first
  ** training's draws. */
  rdt_rng_clear(&rng);
  seeded(&rng, "pt-auto-60");
  rdt_rng probe = rng;
  rdt_eps count_eps = {c.eps.num / 20};
  uint64_t cs = 0, ct = 1;
  rdt_laplace_params(count_eps, 1, &cs, &ct);
  double n_hat = 60 + (double)rdt_discrete_laplace(&probe, cs, ct);
  rdt_rng_clear(&probe);
  uint32_t want = 1;
  while (want < RDT_PT_MAX_DEPTH && n_hat / 12 >= (double)(2u << want)) want++;
  st = start(l, NULL, s, &c, err, sizeof err);
  memset(&d, 0, sizeof d);
  if (st) {
    train(l, st, x, cls, 0, 60);
    if (l->finish(st, &rng) == 1) l->describe(st, &d);
  }
  rdt_bytes_put(&d, "", 1);
  char name[160], used_s[32];
  snprintf(used_s, sizeof used_s, "\"depth_used\":%u,", want);
  snprintf(name, sizeof name, "private_tree auto depth: 60 rows (noisy count %.0f) -> depth %u, the rule's", n_hat,
           want);
  check(st && !d.oom && want == 1 && strstr((char *)d.p, used_s), name);
  rdt_bytes_free(&d);
  if (st) l->free(st);
  rdt_rng_clear(&rng);
}

/* No features (d = 0; the options always have one, so the schema is cut
** down by hand): the class counts alone, with the whole eps. */
static void test_nb_no_features(void) {
  const rdt_learner *l = &rdt_learner_naive_bayes;
  rdt_schema s;
  if (!make_schema("{\"epsilon\": null, \"classes\": [\"a\", \"b\"], \"features\": ["
                   "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
                   &s)) {
    check(0, "naive_bayes: no-feature schema");
    return;
  }
  s.n_features = 0;
  rdt_learn_common c = common(1, 0.5);
  char err[256];
  rdt_rng rng;
  seeded(&rng, "nb-nofeatures");
  void *st = start(l, NULL, &s, &c, err, sizeof err);
  double out[2] = {0, 0};
  rdt_bytes b = {0};
  int ok = st && (l->row(st, NULL, 1, 0), l->finish(st, &rng) == 1) && encode(l, st, &b);
  if (ok) l->predict(st, NULL, out);
  uint64_t ec = 0, et = 0;
  for (int i = 0; ok && i < 8; i++) {
    ec |= (uint64_t)b.p[12 + i] << (8 * i);
    et |= (uint64_t)b.p[20 + i] << (8 * i);
  }
  void *back = ok ? decode(l, b.p, b.n, &s, &c) : NULL;
  check(ok && back && ec == c.eps.num && et == 0 && b.n == 36 + 2 * 8 && fabs(out[0] + out[1] - 1) < 1e-12,
        "naive_bayes: no features: the class counts alone get the whole eps, and decode");
  if (back) l->free(back);
  rdt_bytes_free(&b);
  if (st) l->free(st);
  rdt_rng_clear(&rng);
  s.n_features = 1;
  rdt_schema_free(&s);
}

/* ---- private_tree ---------------------------------------------------------- */

static void test_pt(const rdt_schema *s, const double *x, const uint32_t *cls, const double *tx,
                    const uint32_t *tcls) {
  const rdt_learner *l = &rdt_learner_private_tree;
  char err[256], name[160];
  check(rdt_learner_find("private_tree") == l && rdt_learner_by_id(RDT_PT_ID) == l && l->id == 6 &&
            l->tasks == RDT_LEARN_CLASSIFICATION,
        "registry: private_tree found by name and by id 6, classification only");
  rdt_learn_common c = common(1, 1.0), plain = common(0, 0);
  static const char *bad[] = {"{\"depth\": 0}", "{\"depth\": 9}", "{\"bins\": 1}", "{\"bins\": 65}",
                              "{\"depth\": 2.5}", "{\"bins\": \"8\"}"};
  int refused = 1;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    void *st = start(l, bad[i], s, &c, err, sizeof err);
    refused &= st == NULL && strstr(err, "option \"") != NULL;
    if (st) l->free(st);
  }
  check(refused, "private_tree: 6 bad \"depth\"/\"bins\" refused, the message names the option");

  /* non-private */
  rdt_rng rng;
  seeded(&rng, "pt-nonprivate");
  void *st = start(l, NULL, s, &plain, err, sizeof err);
  if (!st) {
    check(0, "private_tree: start");
    return;
  }
  train(l, st, x, cls, 0, NTRAIN);
  double out[NC];
  l->predict(st, tx, out);
  check(out[0] == 1.0 / 3 && out[1] == 1.0 / 3 && out[2] == 1.0 / 3, "private_tree: before finish it predicts uniformly");
  rdt_bytes b;
  l->encode(st, (memset(&b, 0, sizeof b), &b));
  check(b.oom && b.n == 0, "private_tree: encode refuses an unreleased state");
  rdt_bytes_free(&b);
  rdt_rng before = rng;
  check(l->finish(st, &rng) == 1 && memcmp(&before, &rng, sizeof rng) == 0,
        "private_tree: non-private finish draws no noise");
  check(l->finish(st, &rng) == 0, "private_tree: a second finish is refused");
  double acc = accuracy(l, st, tx, tcls, NTEST);
  snprintf(name, sizeof name, "private_tree: non-private, separable data: accuracy %.3f >= 0.95", acc);
  check(acc >= 0.95, name);
  l->free(st);
  rdt_rng_clear(&rng);

  /* private; merge of two halves = one state with every row (a fixed shape: bins 8, depth 4) */
  const char *fixed = "{\"bins\": 8, \"depth\": 4}";
  void *a = start(l, fixed, s, &c, err, sizeof err), *h2 = start(l, fixed, s, &c, err, sizeof err);
  void *all = start(l, fixed, s, &c, err, sizeof err);
  if (!a || !h2 || !all) {
    check(0, "private_tree: private start");
    if (a) l->free(a);
    if (h2) l->free(h2);
    if (all) l->free(all);
    return;
  }
  train(l, a, x, cls, 0, NTRAIN / 3);
  train(l, h2, x, cls, NTRAIN / 3, NTRAIN);
  train(l, all, x, cls, 0, NTRAIN);
  int merged = l->merge(a, h2);
  rdt_rng r1, r2;
  seeded(&r1, "pt-private");
  seeded(&r2, "pt-private");
  int fin = l->finish(a, &r1) && l->finish(all, &r2);
  rdt_bytes e1, e2, e3;
  int ok = fin && encode(l, a, &e1) && encode(l, all, &e2);
  check(merged && ok && e1.n == e2.n && memcmp(e1.p, e2.p, e1.n) == 0,
        "private_tree: merging two partial states gives the model of one state with every row");
  if (ok) rdt_bytes_free(&e2);
  acc = fin ? accuracy(l, a, tx, tcls, NTEST) : 0;
  snprintf(name, sizeof name, "private_tree: eps 1, %d rows: accuracy %.3f >= 0.9", NTRAIN, acc);
  check(acc >= 0.9, name);
  check(fin && predictions_sane(l, a, NC), "private_tree: probabilities finite and adding up to 1");
  /* 3 features, 8 bins for x and y, 4 codes for c: 7 + 7 + 4 candidates; depth 4: 15 nodes, 16 leaves */
  check(ok && e1.n == 44 + 8 * 15 + 8 * 16 * NC, "private_tree: payload of 44 bytes, 15 nodes and 16 x 3 counts");
  void *back = ok ? decode(l, e1.p, e1.n, s, &c) : NULL;
  int ok3 = back && encode(l, back, &e3);
  check(ok3 && e3.n == e1.n && memcmp(e1.p, e3.p, e1.n) == 0, "private_tree: encode -> decode -> encode is byte-identical");
  int same = back != NULL;
  double o1[NC], o2[NC];
  for (size_t i = 0; same && i < 50; i++) {
    l->predict(a, tx + i * NF, o1);
    l->predict(back, tx + i * NF, o2);
    same &= memcmp(o1, o2, sizeof o1) == 0;
  }
  check(same, "private_tree: the decoded model predicts exactly as the original");
  if (ok3) rdt_bytes_free(&e3);
  if (back) l->free(back);
  check(ok && decode(l, e1.p, e1.n, s, &plain) == NULL, "private_tree: decode refuses a private payload as non-private");
  if (ok) {
    int trunc = 1;
    for (size_t n = 0; n < e1.n; n++) {
      rdt_reader r = {e1.p, n, 0, 0};
      void *t = l->decode(&r, s, &c);
      trunc &= t == NULL && r.bad;
      if (t) l->free(t);
    }
    check(trunc, "private_tree: decode rejects every truncation");
    int safe = 1, strict = 1;
    long rejected = 0;
    unsigned char *p = malloc(e1.n);
    for (size_t bit = 0; p && bit < 8 * e1.n; bit++) {
      memcpy(p, e1.p, e1.n);
      p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
      rdt_reader r = {p, e1.n, 0, 0};
      void *t = l->decode(&r, s, &c);
      if (t) {
        safe &= predictions_sane(l, t, NC);
        l->free(t);
      } else {
        rejected++;
      }
      if (bit / 8 < 44 && !(bit / 8 >= 4 && bit / 8 < 12)) strict &= t == NULL; /* bins, depth may be valid */
    }
    free(p);
    snprintf(name, sizeof name, "private_tree: %zu single-bit flips: no crash, every decoded one sane (%ld rejected)",
             8 * e1.n, rejected);
    check(safe, name);
    check(strict, "private_tree: every flip of version, used depth, private flag, shares, classes or features is rejected");
    /* a split on feature 3 (there are 3) or a threshold past the last candidate */
    unsigned char *q = malloc(e1.n);
    int crafted = q != NULL;
    for (int v = 0; q && v < 2; v++) {
      memcpy(q, e1.p, e1.n);
      uint32_t f = v == 0 ? 3 : 2, t = v == 0 ? 0 : 4; /* feature c has codes 0..3 */
      for (int i = 0; i < 4; i++) {
        q[44 + i] = (unsigned char)(f >> (8 * i));
        q[48 + i] = (unsigned char)(t >> (8 * i));
      }
      rdt_reader r = {q, e1.n, 0, 0};
      void *t2 = l->decode(&r, s, &c);
      crafted &= t2 == NULL && r.bad;
      if (t2) l->free(t2);
    }
    free(q);
    check(crafted, "private_tree: decode refuses a split that is not a candidate");
    /* version 2: one split per level (contract 3), nodes in heap order from byte 44 */
    int shared = 1;
    for (size_t i = 1; i < 15; i++) {
      size_t first = i < 3 ? 1 : i < 7 ? 3 : 7;
      shared &= memcmp(e1.p + 44 + 8 * i, e1.p + 44 + 8 * first, 8) == 0;
    }
    check(shared, "private_tree: all the nodes of a level carry the level's one split");
    unsigned char *w = malloc(e1.n);
    int mixed = w != NULL, v1 = w != NULL;
    if (w) {
      /* node 2 split differently from node 1: refused in version 2, read in version 1 */
      memcpy(w, e1.p, e1.n);
      uint32_t f = w[44 + 8] == 0 ? 1 : 0;
      memset(w + 44 + 16, 0, 8);
      w[44 + 16] = (unsigned char)f;
      void *t2 = decode(l, w, e1.n, s, &c);
      mixed = t2 == NULL;
      if (t2) l->free(t2);
      w[0] = 1;
      t2 = decode(l, w, e1.n, s, &c);
      rdt_bytes e4 = {0}, dj = {0};
      v1 = t2 && encode(l, t2, &e4) && e4.n == e1.n && memcmp(e4.p, w, e1.n) == 0 && predictions_sane(l, t2, NC);
      if (t2) l->describe(t2, &dj);
      rdt_bytes_put(&dj, "", 1);
      v1 = v1 && !dj.oom && strstr((char *)dj.p, "at every node of each level") != NULL;
      rdt_bytes_free(&dj);
      if (v1) rdt_bytes_free(&e4);
      if (t2) l->free(t2);
      free(w);
    }
    check(mixed, "private_tree: decode refuses a version 2 payload whose level has two splits");
    check(v1, "private_tree: a version 1 payload (one split per node) decodes, re-encodes as itself, and says so");
    rdt_bytes_free(&e1);
  }
  rdt_rng_clear(&r1);
  rdt_rng_clear(&r2);
  l->free(a);
  l->free(h2);
  l->free(all);
}

/* Contract 3's utility where the majority term alone is flat: class 0 leads
** on both sides of every candidate (class 1 is 40% of code "c" and absent
** elsewhere), so the majority counts tie everywhere; the L2 term still makes
** "c is code 2" the non-private root split (before it, the first candidate in
** order, x <= bin 0, won the tie). */
static void test_pt_flat_majority(const rdt_schema *s) {
  const rdt_learner *l = &rdt_learner_private_tree;
  rdt_learn_common plain = common(0, 0);
  char err[256];
  void *st = start(l, "{\"depth\": 1, \"bins\": 8}", s, &plain, err, sizeof err);
  rdt_bytes b = {0};
  int ok = st != NULL;
  for (int i = 0; ok && i < 300; i++) {
    double x[NF] = {(i % 17) / 17.0, -5 + (i % 13) * 0.7, (double)(i % 3)};
    l->row(st, x, i % 3 == 2 && i % 5 < 2, 0);
  }
  rdt_rng rng;
  seeded(&rng, "pt-flat");
  ok = ok && l->finish(st, &rng) && encode(l, st, &b) && b.n >= 52;
  check(ok && b.p[44] == 2 && b.p[48] == 2, "private_tree: with one class leading everywhere the root still splits on "
                                             "the informative code (non-private)");
  rdt_bytes_free(&b);
  if (st) l->free(st);
  rdt_rng_clear(&rng);
}

/* The forest learners (forest_learner.h): matrix_forest trains and predicts,
** plans from its structure, refuses bad "trees", round-trips, and neither
** forest learner decodes the other's payload. */
static void test_forest_learners(const rdt_schema *s, const double *x, const uint32_t *cls, const double *tx,
                                 const uint32_t *tcls) {
  const rdt_learner *m = &rdt_learner_matrix_forest, *r = &rdt_learner_random_trees;
  rdt_learn_common c = common(1, 1.0), np = common(0, 0);
  c.seeded = np.seeded = 1;
  rdt_rng_derive_key(c.seed_key, "forest-learners", strlen("forest-learners"), "test");
  memcpy(np.seed_key, c.seed_key, sizeof np.seed_key);
  char err[256] = "";
  void *bad0 = start(m, "{\"trees\": 0}", s, &c, err, sizeof err);
  check(!bad0 && strstr(err, "\"trees\" must be an integer from 1 to 128"), "matrix_forest: \"trees\": 0 is refused");
  void *bad1 = start(m, "{\"trees\": 129}", s, &c, err, sizeof err);
  check(!bad1 && strstr(err, "from 1 to 128"), "matrix_forest: \"trees\": 129 is refused");
  void *mf = start(m, NULL, s, &c, err, sizeof err), *mn = start(m, "{\"trees\": 16}", s, &np, err, sizeof err);
  void *rt = start(r, NULL, s, &c, err, sizeof err);
  if (!mf || !mn || !rt) {
    check(0, "forest learners: start");
    m->free(mf), m->free(mn), r->free(rt);
    return;
  }
  rdt_learn_plan pm, pn;
  int planned = m->plan(mf, 1000, &pm) && m->plan(mn, 1000, &pn);
  /* 3 features: depth 2, a path leaves one out (matrix_forest.c mf_depth); the table over all three
  ** has 4 bins x 4 bins x 3 listed values = 48 cells, a leaf sums 3 or 4 of them (fewer cells per tree),
  ** and one cell's noise sd is a leaf's scaled by sqrt(cells / 48) */
  check(planned && pm.path_features == 2 && pm.table_cells == 48 && pm.cells >= 12 && pm.cells <= 16 &&
            pm.noise_sd > 0 && fabs(pm.table_noise_sd - pm.noise_sd * sqrt(pm.cells / 48)) < 1e-12 &&
            pn.noise_sd == 0 && pn.table_noise_sd == 0 && pn.table_cells == 48,
        "matrix_forest: with 3 features plans depth 2, the 48 cells of the table over all three and one cell's noise");
  /* its state: 3 class counters per leaf of every tree, plus its tables' cells (auto caps it) */
  const rdt_forest *ff = mf;
  check(planned && pm.state_bytes == 8.0 * 3 * ((double)rdt_forest_total_leaves(ff) + (double)ff->matrix->n_cells) &&
            pm.state_bytes > 0,
        "matrix_forest: plans the bytes of its counters (leaves and table cells)");
  check(r->plan == NULL, "random_trees: has no plan (auto never needs one)");
  /* merge: two halves on the same seeded structure equal the whole, byte for byte */
  void *h1 = start(m, NULL, s, &c, err, sizeof err), *h2 = start(m, NULL, s, &c, err, sizeof err),
       *whole = start(m, NULL, s, &c, err, sizeof err);
  int merged = h1 && h2 && whole;
  if (merged) {
    train(m, h1, x, cls, 0, NTRAIN / 2);
    train(m, h2, x, cls, NTRAIN / 2, NTRAIN);
    train(m, whole, x, cls, 0, NTRAIN);
    rdt_rng n1, n2;
    seeded(&n1, "forest-merge");
    seeded(&n2, "forest-merge");
    rdt_bytes e1 = {0}, e2 = {0};
    merged = m->merge(h1, h2) == 1 && m->finish(h1, &n1) && m->finish(whole, &n2) && encode(m, h1, &e1) &&
             encode(m, whole, &e2);
    merged = merged && e1.n == e2.n && memcmp(e1.p, e2.p, e1.n) == 0;
    rdt_bytes_free(&e1);
    rdt_bytes_free(&e2);
    rdt_rng_clear(&n1);
    rdt_rng_clear(&n2);
  }
  check(merged, "matrix_forest: merge of two halves equals training on their union (byte-identical)");
  m->free(h1);
  m->free(h2);
  m->free(whole);
  train(m, mf, x, cls, 0, NTRAIN);
  train(m, mn, x, cls, 0, NTRAIN);
  train(r, rt, x, cls, 0, NTRAIN);
  rdt_rng noise;
  seeded(&noise, "forest-learners-noise");
  int ok = m->finish(mf, &noise) && m->finish(mn, &noise) && r->finish(rt, &noise);
  rdt_rng_clear(&noise);
  check(ok, "forest learners: finish releases");
  double am = ok ? accuracy(m, mf, tx, tcls, NTEST) : 0, an = ok ? accuracy(m, mn, tx, tcls, NTEST) : 0;
  check(ok && am > 0.8 && an > 0.8 && predictions_sane(m, mf, NC),
        "matrix_forest: learns the informative features (accuracy above 0.8, private and not), sane probabilities");
  rdt_bytes bm, br, again;
  memset(&again, 0, sizeof again);
  int enc = ok && encode(m, mf, &bm) && encode(r, rt, &br);
  void *back = enc ? decode(m, bm.p, bm.n, s, &c) : NULL;
  int same = back && encode(m, back, &again) && again.n == bm.n && memcmp(again.p, bm.p, bm.n) == 0 &&
             accuracy(m, back, tx, tcls, NTEST) == am;
  check(same, "matrix_forest: decode(encode) re-encodes byte-identical and predicts identically");
  void *cross1 = enc ? decode(m, br.p, br.n, s, &c) : NULL, *cross2 = enc ? decode(r, bm.p, bm.n, s, &c) : NULL;
  check(enc && !cross1 && !cross2, "forest learners: neither decodes the other's forest");
  rdt_bytes d;
  memset(&d, 0, sizeof d);
  m->describe(mf, &d);
  rdt_bytes_put(&d, "", 1);
  check(!d.oom && strstr((char *)d.p, "\"leaves\":") && strstr((char *)d.p, "\"leaf_noise_sd\":") &&
            strstr((char *)d.p, "matrix mechanism"),
        "matrix_forest: describe names the mechanism, its leaves and their noise");
  rdt_bytes_free(&d);
  if (back) m->free(back);
  if (enc) {
    rdt_bytes_free(&bm);
    rdt_bytes_free(&br);
  }
  rdt_bytes_free(&again);
  m->free(mf);
  m->free(mn);
  r->free(rt);
}

/* auto.c step 4 and 6: the regression guard's sensitivity is the bound the
** two released models put on a row's gain (boost's span around the
** constant's prediction, over the target range), stored after the
** constant's share behind bit 31 of the picked id; the margin is one noise
** scale, sensitivity / eps. A payload without the flag (written before)
** reads as sensitivity 1; a sensitivity outside [0, 1], or other than 1 on
** a classifier, is refused. */
static double json_number(const rdt_bytes *d, const char *key) {
  const char *m = strstr((const char *)d->p, key);
  return m ? strtod(m + strlen(key), NULL) : -1;
}

static void test_auto_regression_guard(const rdt_schema *cls_schema, const double *cx, const uint32_t *ccls) {
  static const char opts[] = "{\"algorithm\": \"auto\", \"epsilon\": 1, \"task\": \"regression\", "
                             "\"target\": {\"min\": 0, \"max\": 4}, \"features\": ["
                             "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
                             "{\"name\": \"z\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  const rdt_learner *l = rdt_learner_find("auto");
  rdt_json *o = NULL;
  rdt_schema s;
  rdt_learn_common c;
  char ledger[160], label[RDT_MAX_NAME + 1], err[256];
  memset(&s, 0, sizeof s);
  int parsed = rdt_options_parse_learner(opts, strlen(opts), l, &o, &s, &c, ledger, sizeof ledger, label, err, sizeof err);
  void *a = parsed ? l->start(o, &s, &c, err, sizeof err) : NULL;
  rdt_rng r, data;
  seeded(&r, "auto-reg-guard");
  seeded(&data, "auto-reg-rows");
  for (int i = 0; a && i < 4000; i++) {
    double x[2] = {rdt_rng_unit(&data), rdt_rng_unit(&data)};
    l->row(a, x, 0, 1 + 2 * x[0] + 0.5 * rdt_rng_unit(&data));
  }
  rdt_bytes e = {0}, d = {0};
  int ok = a && l->finish(a, &r) && encode(l, a, &e) && e.n > 48;
  if (ok) l->describe(a, &d);
  rdt_bytes_put(&d, "", 1);
  uint32_t picked = 0;
  double sens = -1;
  if (ok) {
    memcpy(&picked, e.p + 4, 4); /* little-endian hosts */
    memcpy(&sens, e.p + 40, 8);
  }
  double ds = ok ? json_number(&d, "\"guard_sensitivity\":") : -1, dm = ok ? json_number(&d, "\"guard_margin\":") : -1;
  check(ok && (picked & 0x80000000u) && sens > 0 && sens < 1 && ds == sens && fabs(dm - sens) < 1e-15 &&
            strstr((const char *)d.p, "\"chosen\":\"boost\""),
        "auto regression: the guard's sensitivity is the released models' bound (below 1), stored and described");
  rdt_bytes_free(&d);
  /* written before: no flag, no sensitivity field */
  unsigned char *old = ok ? malloc(e.n - 8) : NULL;
  void *back = NULL;
  if (old) {
    memcpy(old, e.p, 40);
    memcpy(old + 40, e.p + 48, e.n - 48);
    old[7] &= 0x7f;
    back = decode(l, old, e.n - 8, &s, &c);
  }
  rdt_bytes d2 = {0};
  if (back) l->describe(back, &d2);
  rdt_bytes_put(&d2, "", 1);
  check(back && json_number(&d2, "\"guard_sensitivity\":") == 1 && json_number(&d2, "\"guard_margin\":") == 1,
        "auto regression: a model written before the stored sensitivity reads as sensitivity 1, margin 1/eps");
  rdt_bytes_free(&d2);
  if (back) l->free(back);
  free(old);
  int refused = ok;
  const double bad[3] = {1.5, -0.25, NAN};
  for (int i = 0; ok && i < 3; i++) {
    memcpy(e.p + 40, &bad[i], 8);
    void *t = decode(l, e.p, e.n, &s, &c);
    refused &= t == NULL;
    if (t) l->free(t);
  }
  /* a classifier's sensitivity is 1 */
  rdt_learn_common cc = common(1, 1.0);
  void *k = l->start(NULL, cls_schema, &cc, err, sizeof err);
  rdt_bytes ek = {0};
  rdt_rng rk;
  seeded(&rk, "auto-cls-sens");
  if (k) train(l, k, cx, ccls, 0, NTRAIN);
  int kok = k && l->finish(k, &rk) && encode(l, k, &ek) && ek.n > 48;
  double half = 0.5, one = 0;
  if (kok) memcpy(&one, ek.p + 40, 8);
  void *kb = NULL;
  if (kok) {
    memcpy(ek.p + 40, &half, 8);
    kb = decode(l, ek.p, ek.n, cls_schema, &cc);
  }
  check(refused && kok && one == 1 && kb == NULL,
        "auto: a stored sensitivity outside [0, 1], or other than 1 on a classifier, is refused");
  if (kb) l->free(kb);
  if (k) l->free(k);
  rdt_bytes_free(&ek);
  rdt_bytes_free(&e);
  if (a) l->free(a);
  rdt_json_free(o);
  if (parsed) rdt_schema_free(&s);
}

/* moment_fit.c 2b: the pooled James-Stein factor of the marginals. Two
** classes, two features of 3 values plus an `other` bin (left out). Column
** sums that differ by about their noise shrink nearly fully; sums far apart
** hardly; none without noise, below 3 degrees of freedom, or when the
** columns are equal; the `other` bin's size changes nothing. */
static void test_moment_shrink(void) {
  const uint32_t n_bins[2] = {4, 4}, shrunk[2] = {3, 3}, one[2] = {2, 1};
  const size_t offset[3] = {2, 10, 18};
  /* class counts, then per feature class 0's 4 bins, class 1's 4 bins */
  int64_t near[18] = {300, 300, 100, 95, 105, 0, 100, 102, 98, 0, 97, 103, 100, 0, 101, 99, 100, 0};
  int64_t far[18] = {300, 300, 200, 60, 40, 0, 190, 70, 40, 0, 20, 80, 200, 0, 30, 70, 200, 0};
  double v = 2 * 6.0 * 6.0; /* a cell's variance at scale 6 */
  double kn = rdt_moment_shrink(2, 2, n_bins, offset, near, shrunk, v);
  double kf = rdt_moment_shrink(2, 2, n_bins, offset, far, shrunk, v);
  check(kn == 1 && kf > 0 && kf < 0.05, "moment_fit 2b: marginals within their noise shrink fully, distinct ones hardly");
  check(rdt_moment_shrink(2, 2, n_bins, offset, far, shrunk, 0) == 0 &&
            rdt_moment_shrink(2, 2, n_bins, offset, near, NULL, v) == 0 &&
            rdt_moment_shrink(2, 2, n_bins, offset, far, one, v) == 0,
        "moment_fit 2b: no shrinkage without noise, without bins to shrink, or below 3 degrees of freedom");
  int64_t equal[18] = {300, 300, 100, 100, 100, 0, 100, 100, 100, 0, 100, 100, 100, 0, 100, 100, 100, 0};
  int64_t big_other[18];
  memcpy(big_other, far, sizeof far);
  big_other[5] = big_other[9] = 5000;
  check(rdt_moment_shrink(2, 2, n_bins, offset, equal, shrunk, v) == 0 &&
            rdt_moment_shrink(2, 2, n_bins, offset, big_other, shrunk, v) == kf,
        "moment_fit 2b: equal columns need none; the `other` bins stay out of the factor");
}

/* moment_fit.c 2c: the James-Stein factor of each feature's class x bin
** association. Three classes, two features of 3 values plus an `other` bin
** (left out): feature 0 is strongly associated with the class (hardly
** shrunk), feature 1 within its noise of independence (fully shrunk, so the
** fit gives its bins the same score in every class, where the fit without
** noise does not). None without noise, below 3 degrees of freedom or with a
** total <= 0; the `other` bins change nothing. */
static void test_moment_association(void) {
  const uint32_t n_bins[2] = {4, 4}, shrunk[2] = {3, 3};
  const size_t offset[3] = {3, 15, 27};
  int64_t t[27] = {300, 300, 300,
                   /* feature 0: class 0, 1, 2 over bins a b c other */
                   250, 30, 20, 0, 20, 260, 20, 0, 30, 20, 250, 0,
                   /* feature 1: near independence */
                   104, 97, 99, 0, 96, 106, 98, 0, 100, 97, 103, 0};
  double v = 2 * 6.0 * 6.0;
  double a0 = rdt_moment_association_shrink(3, n_bins, offset, t, shrunk, v, 0);
  double a1 = rdt_moment_association_shrink(3, n_bins, offset, t, shrunk, v, 1);
  check(a0 > 0 && a0 < 0.01 && a1 == 1, "moment_fit 2c: a strong association is kept, one within its noise dropped");
  int64_t other[27], neg[27];
  memcpy(other, t, sizeof t);
  other[18] = other[22] = other[26] = 4000;
  memcpy(neg, t, sizeof t);
  for (int i = 15; i < 27; i++) neg[i] = -neg[i];
  const uint32_t two_bins[2] = {2, 2}; /* (3 - 1)(2 - 1) = 2 degrees of freedom */
  check(rdt_moment_association_shrink(3, n_bins, offset, t, shrunk, 0, 1) == 0 &&
            rdt_moment_association_shrink(3, n_bins, offset, t, NULL, v, 1) == 0 &&
            rdt_moment_association_shrink(3, n_bins, offset, t, two_bins, v, 1) == 0 &&
            rdt_moment_association_shrink(3, n_bins, offset, neg, shrunk, v, 1) == 0 &&
            rdt_moment_association_shrink(3, n_bins, offset, other, shrunk, v, 1) == a1 &&
            rdt_moment_association_shrink(3, n_bins, offset, other, shrunk, v, 0) == a0,
        "moment_fit 2c: none without noise, bins, 3 degrees of freedom or a positive total; `other` stays out");
  /* Feature 1's class and bin sums are all 300: its independence fit is 100
  ** in every cell, so with noise the fit matches the table `flat` (those
  ** cells at 100) exactly, and without noise it does not. */
  int64_t flat[27];
  memcpy(flat, t, sizeof t);
  for (int i = 15; i < 27; i++) flat[i] = i % 4 == 2 ? 0 : 100;
  double w[4][27];
  unsigned char key[RDT_RNG_KEYBYTES] = {7};
  int ok = 1;
  for (int i = 0; i < 4; i++) {
    rdt_rng r;
    rdt_rng_init_seeded(&r, key);
    ok &= rdt_moment_fit(3, 2, n_bins, offset, i % 2 ? flat : t, shrunk, i < 2 ? v : 0, 0.6, &r, w[i]);
  }
  check(ok && memcmp(w[0], w[1], sizeof w[0]) == 0 && memcmp(w[2], w[3], sizeof w[2]) != 0,
        "moment_fit 2c: the fit matches a dropped association as if the table had none");
}

/* ---- shard mode: counters() (learner.h contract 3) ------------------------
** For every learner with counters: two sites' counters added into an empty
** state equal the union's, with one digest, and finishing that sum with the
** union's noise stream releases the union's model byte for byte. */
static void test_counters(const rdt_schema *s, const double *x, const uint32_t *cls) {
  static const struct {
    const char *name, *opts;
    int is_private;
  } cases[] = {
      {"constant", NULL, 1},
      {"naive_bayes", NULL, 1},
      {"naive_bayes", "{\"bins\": 7, \"readout\": \"moments\"}", 1},
      {"naive_bayes", "{\"bins\": 5}", 0},
      {"random_trees", "{\"trees\": 3}", 1},
      {"matrix_forest", "{\"trees\": 4}", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const rdt_learner *l = rdt_learner_find(cases[i].name);
    rdt_learn_common c = common(cases[i].is_private, 1.0);
    c.seeded = 1; /* one structure for every state, one noise stream for both releases */
    rdt_rng_derive_key(c.seed_key, "counters", 8, "test");
    char err[256], name[200];
    void *a = start(l, cases[i].opts, s, &c, err, sizeof err), *b = start(l, cases[i].opts, s, &c, err, sizeof err);
    void *sum = start(l, cases[i].opts, s, &c, err, sizeof err), *all = start(l, cases[i].opts, s, &c, err, sizeof err);
    int ok = a && b && sum && all && l->counters;
    if (ok) {
      train(l, a, x, cls, 0, 300);
      train(l, b, x, cls, 300, NTRAIN);
      train(l, all, x, cls, 0, NTRAIN);
    }
    rdt_span sa[RDT_MAX_SPANS], sb[RDT_MAX_SPANS], ss[RDT_MAX_SPANS], su[RDT_MAX_SPANS];
    unsigned char da[32], db[32], ds[32], du[32];
    uint32_t ka = ok ? l->counters(a, sa, RDT_MAX_SPANS, da) : 0, kb = ok ? l->counters(b, sb, RDT_MAX_SPANS, db) : 0;
    uint32_t ks = ok ? l->counters(sum, ss, RDT_MAX_SPANS, ds) : 0, ku = ok ? l->counters(all, su, RDT_MAX_SPANS, du) : 0;
    uint64_t n = ka ? rdt_spans_count(sa, ka) : 0;
    int64_t *va = n ? malloc(n * sizeof *va) : NULL, *vb = n ? malloc(n * sizeof *vb) : NULL;
    int64_t *vs = n ? malloc(n * sizeof *vs) : NULL, *vu = n ? malloc(n * sizeof *vu) : NULL;
    ok = ka && ka == kb && ka == ks && ka == ku && va && vb && vs && vu && !memcmp(da, db, 32) && !memcmp(da, ds, 32) &&
         !memcmp(da, du, 32);
    if (ok) {
      rdt_spans_read(sa, ka, va);
      rdt_spans_read(sb, kb, vb);
      ok = rdt_spans_add(ss, ks, va) && rdt_spans_add(ss, ks, vb);
      rdt_spans_read(ss, ks, vs);
      rdt_spans_read(su, ku, vu);
      ok = ok && memcmp(vs, vu, n * sizeof *vs) == 0;
    }
    snprintf(name, sizeof name, "%s %s: two sites' counters add up to the union's, one digest", cases[i].name,
             cases[i].opts ? cases[i].opts : "(defaults)");
    check(ok, name);
    rdt_rng r1, r2;
    rdt_rng_init_for(&r1, c.seed_key, "noise", 0);
    rdt_rng_init_for(&r2, c.seed_key, "noise", 0);
    rdt_bytes e1 = {0}, e2 = {0};
    int same = ok && l->finish(sum, &r1) && l->finish(all, &r2) && encode(l, sum, &e1) && encode(l, all, &e2) &&
               e1.n == e2.n && memcmp(e1.p, e2.p, e1.n) == 0;
    snprintf(name, sizeof name, "%s %s: finishing the summed counters releases the union's model byte for byte",
             cases[i].name, cases[i].opts ? cases[i].opts : "(defaults)");
    check(same, name);
    rdt_span none[RDT_MAX_SPANS];
    unsigned char dn[32];
    snprintf(name, sizeof name, "%s: a released state has no counters", cases[i].name);
    check(same && l->counters(sum, none, RDT_MAX_SPANS, dn) == 0, name);
    rdt_rng_clear(&r1);
    rdt_rng_clear(&r2);
    rdt_bytes_free(&e1);
    rdt_bytes_free(&e2);
    free(va);
    free(vb);
    free(vs);
    free(vu);
    if (a) l->free(a);
    if (b) l->free(b);
    if (sum) l->free(sum);
    if (all) l->free(all);
  }
  /* The learners that keep their rows have none in one pass; boost,
  ** private_tree, naive Bayes' readout choice and auto offer their rounds'
  ** (learner.h contract 10). */
  const rdt_learner *nb = rdt_learner_find("naive_bayes"), *bo = rdt_learner_find("boost");
  const rdt_learner *au = rdt_learner_find("auto");
  rdt_learn_common c = common(1, 1.0);
  char err[256];
  {
    const rdt_learner *pt = rdt_learner_find("private_tree");
    uint64_t block = 1;
    for (uint32_t f = 0; f < s->n_features; f++) block += rdt_learn_bins(&s->features[f], 32);
    block *= s->n_classes;
    void *pst = start(pt, NULL, s, &c, err, sizeof err), *fixed = start(pt, "{\"depth\": 3}", s, &c, err, sizeof err);
    rdt_span psp[RDT_MAX_SPANS];
    unsigned char pd[32], pd2[32];
    check(pst && fixed && pt->counters(pst, psp, RDT_MAX_SPANS, pd) == 0 && pt->rounds(pst) == 8 && pt->rounds(fixed) == 3 &&
              pt->round_open(pst, 0, NULL, 0, err, sizeof err) && pt->counters(pst, psp, RDT_MAX_SPANS, pd) == 1 &&
              psp[0].n == block,
          "private_tree: no counters in one pass; in rounds, one per level (8 for \"auto\"), round 0's the root's "
          "class totals and histogram");
    /* hostile payloads: another round, a depth above the options', a split that is no candidate, a short one */
    const unsigned char bad[][16] = {{2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                     {1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                     {1, 0, 0, 0, 3, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0},
                                     {1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}};
    int refused = 1;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
      void *t = start(pt, "{\"depth\": 3}", s, &c, err, sizeof err);
      err[0] = 0;
      refused &= t && !pt->round_open(t, 1, bad[i], 16, err, sizeof err) && strstr(err, "private_tree:") != NULL;
      if (t) pt->free(t);
    }
    void *t = start(pt, "{\"depth\": 3}", s, &c, err, sizeof err);
    refused &= t && !pt->round_open(t, 1, bad[0], 12, err, sizeof err);
    if (t) pt->free(t);
    check(refused, "private_tree: a round payload of another round, depth or split, or of the wrong length, is refused");
    /* a sum no site could have sent (a negative count) is refused before any draw; the digest is the same every round */
    rdt_rng rng;
    rdt_rng_init_for(&rng, c.seeded ? c.seed_key : NULL, "noise", 0);
    uint64_t at = rdt_rng_tell(&rng);
    rdt_bytes next = {0};
    int ok = fixed && pt->round_open(fixed, 0, NULL, 0, err, sizeof err) && pt->counters(fixed, psp, RDT_MAX_SPANS, pd2) == 1;
    if (ok) psp[0].p[0] = -1;
    check(ok && pt->round_release(fixed, &rng, &next) == 0 && rdt_rng_tell(&rng) == at && memcmp(pd, pd2, 32) != 0,
          "private_tree: a round sum with a negative count releases nothing and draws nothing; the digest names the "
          "options (\"auto\" and depth 3 differ)");
    rdt_bytes_free(&next);
    rdt_rng_clear(&rng);
    if (pst) pt->free(pst);
    if (fixed) pt->free(fixed);
  }
  void *ast = start(au, NULL, s, &c, err, sizeof err);
  rdt_span asp[RDT_MAX_SPANS];
  unsigned char ad[32];
  check(ast && au->counters(ast, asp, RDT_MAX_SPANS, ad) == 0, "auto keeps rows: no counters() in one pass");
  err[0] = 0;
  check(ast && !au->round_open(ast, 0, NULL, 0, err, sizeof err) && strstr(err, "structure key"),
        "auto's rounds need a key for the validation coins (the plan's structure key or a seed): refused without");
  if (ast) au->free(ast);
  rdt_learn_common kc = c;
  kc.keyed = 1;
  memset(kc.structure_key, 7, sizeof kc.structure_key);
  ast = start(au, NULL, s, &kc, err, sizeof err);
  check(ast && au->rounds(ast) >= 3 && au->round_open(ast, 0, NULL, 0, err, sizeof err) &&
            au->counters(ast, asp, RDT_MAX_SPANS, ad) >= 1,
        "auto for classification, keyed, opens its first round: every candidate it may pick runs in rounds");
  if (ast) au->free(ast);
  void *bst = start(bo, NULL, s, &c, err, sizeof err);
  rdt_span bsp[RDT_MAX_SPANS];
  unsigned char bd[32];
  check(bst && bo->counters(bst, bsp, RDT_MAX_SPANS, bd) == 0 && bo->rounds(bst) == 1 + s->n_features &&
            bo->round_open(bst, 0, NULL, 0, err, sizeof err) && bo->counters(bst, bsp, RDT_MAX_SPANS, bd) == 1 &&
            bsp[0].n == s->n_classes,
        "boost: no counters in one pass; in rounds, 1 + d of them, round 0's the class counts");
  if (bst) bo->free(bst);
  void *st = start(nb, "{\"readout\": \"auto\"}", s, &c, err, sizeof err);
  rdt_span sp[RDT_MAX_SPANS];
  unsigned char d[32];
  check(st && nb->counters(st, sp, RDT_MAX_SPANS, d) == 0 && nb->rounds(st) == 2 &&
            nb->round_open(st, 0, NULL, 0, err, sizeof err) && nb->counters(st, sp, RDT_MAX_SPANS, d) == 1,
        "naive_bayes \"readout\": \"auto\" keeps its rows' bins: no counters in one pass; 2 rounds, round 0's the tables");
  if (st) nb->free(st);
  /* Merge checks the digest: other bounds, or another eps, are refused. */
  rdt_schema wide;
  const char *wide_opts = "{\"epsilon\": null, \"classes\": [0, 1, 2], \"features\": ["
                          "{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
                          "{\"name\": \"y\", \"type\": \"numeric\", \"min\": -5, \"max\": 6},"
                          "{\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"a\", \"b\", \"c\"]}]}";
  if (make_schema(wide_opts, &wide)) {
    void *p = start(nb, "{\"bins\": 4}", s, &c, err, sizeof err), *q = start(nb, "{\"bins\": 4}", &wide, &c, err, sizeof err);
    check(p && q && nb->merge(p, q) == 0, "naive_bayes: merge refuses a state whose feature bounds differ (y max 5 vs 6)");
    if (p) nb->free(p);
    if (q) nb->free(q);
    rdt_schema_free(&wide);
  } else {
    check(0, "naive_bayes: wide schema");
  }
  const rdt_learner *k = rdt_learner_find("constant");
  rdt_learn_common c2 = common(1, 2.0);
  void *p = start(k, NULL, s, &c, err, sizeof err), *q = start(k, NULL, s, &c2, err, sizeof err);
  check(p && q && k->merge(p, q) == 0, "constant: merge refuses a state of another epsilon");
  if (p) k->free(p);
  if (q) k->free(q);
}

int main(void) {
  if (sodium_init() < 0) return 1;
  test_registry();
  test_moment_shrink();
  test_moment_association();
  rdt_schema s;
  double *x = malloc(sizeof(double) * NF * NTRAIN), *tx = malloc(sizeof(double) * NF * NTEST);
  uint32_t *cls = malloc(sizeof(uint32_t) * NTRAIN), *tcls = malloc(sizeof(uint32_t) * NTEST);
  if (!x || !tx || !cls || !tcls || !make_schema(SCHEMA_OPTS, &s)) {
    check(0, "fixtures");
  } else {
    rdt_rng rng;
    seeded(&rng, "nb-data");
    make_rows(&rng, NTRAIN, x, cls);
    make_rows(&rng, NTEST, tx, tcls);
    rdt_rng_clear(&rng);
    test_nb_options(&s);
    test_nb_nonprivate(&s, x, cls, tx, tcls);
    test_nb_moments(&s, x, cls, tx, tcls);
    test_nb_readout_auto(&s, x, cls, tx);
    test_auto_regression_guard(&s, x, cls);
    test_nb_private(&s, x, cls, tx, tcls);
    test_nb_no_features();
    test_nb_auto_bins(&s, x, cls, tx);
    test_pt_auto_depth(&s, x, cls);
    test_pt(&s, x, cls, tx, tcls);
    test_forest_learners(&s, x, cls, tx, tcls);
    test_pt_flat_majority(&s);
    test_counters(&s, x, cls);
    rdt_schema_free(&s);
  }
  free(x);
  free(tx);
  free(cls);
  free(tcls);
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail != 0;
}
