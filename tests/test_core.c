/*
** test_core.c - unit tests of the core (no SQLite). Prints one
** "ok - name" / "not ok - name" line per check and a closing
** "N passed, N failed" line.
**
**   build/test_core                    run all tests
**   build/test_core --write-golden F   (re)write the golden model BLOB
*/
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/forests/batch.h"
#include "core/bounds.h"
#include "core/forests/diprime.h"
#include "core/forests/forest_json.h"
#include "core/json.h"
#include "core/json_io.h"
#include "core/mask.h"
#include "core/forests/matrix.h"
#include "core/median.h"
#include "core/model.h"
#include "core/noise.h"
#include "core/options.h"
#include "core/partial.h"
#include "core/plan.h"
#include "core/round.h"
#include "core/row_sample.h"
#include "core/select.h"
#include "core/forests/sharp.h"
#include "core/share.h"
#include "core/sign.h"
#include "core/forests/train_worker.h"
#include "core/forests/tree_selection.h"
#include "core/unit.h"

#include "../tests/check.h"

/* ---- json --------------------------------------------------------------- */

static int json_ok(const char *s) {
  char err[128];
  rdt_json *v = rdt_json_parse(s, strlen(s), err, sizeof err);
  rdt_json_free(v);
  return v != NULL;
}

static void test_json(void) {
  char err[128];
  const char *doc = "{\"a\": [1, -2.5e1, \"x\\u00e9\\n\", true, false, null], \"b\": {}}";
  rdt_json *v = rdt_json_parse(doc, strlen(doc), err, sizeof err);
  const rdt_json *a = rdt_json_get(v, "a");
  check(v && a && a->n == 6 && a->items[0]->is_integer && a->items[0]->integer == 1 &&
            a->items[1]->number == -25.0 && !a->items[1]->is_integer &&
            strcmp(a->items[2]->string, "x\xc3\xa9\n") == 0 && a->items[5]->type == RDT_JSON_NULL,
        "json: parses every value type with escapes");
  rdt_json_free(v);
  check(json_ok("[\"\\ud83d\\ude00\"]"), "json: surrogate pair");
  check(json_ok("[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]") && !json_ok("[\"\xc3\"]") &&
            !json_ok("[\"\xc0\xaf\"]") && !json_ok("[\"\xed\xa0\x80\"]") && !json_ok("[\"\xff\"]"),
        "json: raw UTF-8 accepted when well formed, refused when truncated, overlong, a surrogate or invalid");
  const char *bad[] = {"", "{", "{\"a\":}", "[1,]", "{\"a\" 1}", "01", "1.", "-", "\"\\x\"", "\"abc",
                       "[1] x", "nul", "\"\\ud800\"", "\"\\u0000\"", "{\"a\":1,}", "\"\x01\""};
  int all_rejected = 1;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) all_rejected &= !json_ok(bad[i]);
  check(all_rejected, "json: rejects 16 malformed documents");
  char deep[200];
  memset(deep, '[', 100);
  memset(deep + 100, ']', 100);
  v = rdt_json_parse(deep, 200, err, sizeof err);
  check(v == NULL && strstr(err, "deep") != NULL, "json: nesting depth is limited");
}

/* ---- rng ---------------------------------------------------------------- */

static void test_rng(void) {
  rdt_rng a, b, c;
  unsigned char x[3000], y[3000], z[3000];
  seeded(&a, "k1");
  seeded(&b, "k1");
  seeded(&c, "k2");
  rdt_rng_bytes(&a, x, sizeof x);
  rdt_rng_bytes(&b, y, 1000);
  rdt_rng_bytes(&b, y + 1000, 2000); /* chunking must not matter */
  rdt_rng_bytes(&c, z, sizeof z);
  check(memcmp(x, y, sizeof x) == 0, "rng: seeded stream is reproducible across chunkings");
  check(memcmp(x, z, sizeof x) != 0, "rng: different keys give different streams");
  rdt_rng_init_os(&a);
  rdt_rng_init_os(&b);
  rdt_rng_bytes(&a, x, 64);
  rdt_rng_bytes(&b, y, 64);
  check(memcmp(x, y, 64) != 0, "rng: OS mode is not reproducible");
  int wiped = 1;
  for (size_t i = 0; i < 64; i++) wiped &= a.buf[i] == 0;
  check(wiped, "rng: bytes handed out are wiped from the buffer");

  /* Uniformity of rdt_rng_below(7): chi-square with 6 dof, 70k draws. */
  seeded(&a, "below");
  long cnt[7] = {0};
  for (int i = 0; i < 70000; i++) cnt[rdt_rng_below(&a, 7)]++;
  double chi = 0;
  for (int i = 0; i < 7; i++) chi += (cnt[i] - 10000.0) * (cnt[i] - 10000.0) / 10000.0;
  check(chi < 22.46, "rng: below(7) uniform (chi2 < 22.46, p=0.001)");
  /* Two-byte draws: below(1000) in 10 bins of 100, chi-square with 9 dof. */
  long bins[10] = {0};
  for (int i = 0; i < 100000; i++) bins[rdt_rng_below(&a, 1000) / 100]++;
  chi = 0;
  for (int i = 0; i < 10; i++) chi += (bins[i] - 10000.0) * (bins[i] - 10000.0) / 10000.0;
  check(chi < 27.88, "rng: below(1000) uniform over 10 bins (chi2 < 27.88, p=0.001)");
  /* 64-bit bound: 2^63 + 1 has a rejection zone of almost half the range. */
  uint64_t n = ((uint64_t)1 << 63) + 1, hi = 0;
  int in_range = 1;
  for (int i = 0; i < 1000; i++) {
    uint64_t r = rdt_rng_below(&a, n);
    in_range &= r < n;
    if (r > hi) hi = r;
  }
  check(in_range && hi > ((uint64_t)1 << 62), "rng: below(2^63+1) stays in range and reaches the top half");
  rdt_rng_clear(&a);
  check(a.mode == 0 && a.key[0] == 0, "rng: clear wipes the state");

  /* Contract 6: a fresh stream sought to a position goes on with the same bytes. */
  int same = 1;
  static const uint64_t at[] = {0, 1, 1023, 1024, 1025, 2047, 2500};
  for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
    seeded(&a, "seek");
    rdt_rng_bytes(&a, x, (size_t)at[i]);
    (void)rdt_rng_below(&a, 1000); /* a draw of its own size, too */
    uint64_t pos = rdt_rng_tell(&a);
    rdt_rng_bytes(&a, y, 500);
    seeded(&b, "seek");
    rdt_rng_seek(&b, pos);
    rdt_rng_bytes(&b, z, 500);
    same &= memcmp(y, z, 500) == 0 && rdt_rng_tell(&b) == pos + 500;
  }
  check(same, "rng: tell then seek on a fresh seeded stream goes on with the same bytes, across block edges");
  rdt_rng_init_os(&a);
  rdt_rng_seek(&a, 5);
  check(rdt_rng_tell(&a) == 0 && a.mode == RDT_RNG_OS, "rng: an OS stream has no position (seek is a no-op)");
  rdt_rng_clear(&a);
  rdt_rng_clear(&b);
}

/* ---- noise -------------------------------------------------------------- */

/* Chi-square of the exact discrete Laplace PMF (P(z) ∝ exp(-|z| s/t)) against
** `draws` samples, on bins -K..K plus two tails. Returns the statistic;
** *dof receives the degrees of freedom. */
static double dlap_chi2(rdt_rng *rng, uint64_t s, uint64_t t, int draws, int K, int *dof) {
  double q = exp(-(double)s / (double)t), norm = (1 - q) / (1 + q);
  long *obs = calloc(2 * K + 3, sizeof *obs);
  for (int i = 0; i < draws; i++) {
    int64_t z = rdt_discrete_laplace(rng, s, t);
    if (z < -K) obs[0]++;
    else if (z > K) obs[2 * K + 2]++;
    else obs[z + K + 1]++;
  }
  double chi = 0, tail = norm * pow(q, K + 1) / (1 - q);
  for (int b = 0; b < 2 * K + 3; b++) {
    double p = (b == 0 || b == 2 * K + 2) ? tail : norm * pow(q, fabs((double)(b - K - 1)));
    double e = p * draws;
    chi += (obs[b] - e) * (obs[b] - e) / e;
  }
  free(obs);
  *dof = 2 * K + 2;
  return chi;
}

static void test_noise(void) {
  rdt_rng rng;
  seeded(&rng, "noise");
  int ones = 0, N = 200000;
  for (int i = 0; i < N; i++) ones += rdt_bernoulli_exp(&rng, 1, 2);
  double p = exp(-0.5), sd = sqrt(p * (1 - p) / N);
  check(fabs((double)ones / N - p) < 5 * sd, "noise: Bernoulli(exp(-1/2)) frequency within 5 sd");
  ones = 0;
  for (int i = 0; i < N; i++) ones += rdt_bernoulli_exp(&rng, 7, 3);
  p = exp(-7.0 / 3);
  sd = sqrt(p * (1 - p) / N);
  check(fabs((double)ones / N - p) < 5 * sd, "noise: Bernoulli(exp(-7/3)) frequency within 5 sd");

  int dof;
  /* Critical values of chi-square at p = 0.001: dof 12 -> 32.91, 22 -> 48.27. */
  double chi = dlap_chi2(&rng, 1, 2, 200000, 5, &dof);
  check(dof == 12 && chi < 32.91, "noise: discrete Laplace scale 2 matches the exact PMF (chi2)");
  chi = dlap_chi2(&rng, 3, 2, 200000, 5, &dof);
  check(chi < 32.91, "noise: discrete Laplace scale 2/3 matches the exact PMF (chi2)");
  chi = dlap_chi2(&rng, 4294967296ULL, 10 * 4294967296ULL + 12345, 100000, 10, &dof);
  check(dof == 22 && chi < 48.27, "noise: discrete Laplace with 2^32-denominator scale ~10 (chi2)");
  /* Power: the same test rejects a sampler with the wrong scale. */
  double q = exp(-1.0 / 2), wrong = 0;
  (void)q;
  rdt_rng r2;
  seeded(&r2, "power");
  {
    /* draw from scale 2.5 but test against scale 2 */
    long obs[13] = {0};
    int draws = 200000, K = 5;
    for (int i = 0; i < draws; i++) {
      int64_t z = rdt_discrete_laplace(&r2, 2, 5);
      if (z < -K) obs[0]++;
      else if (z > K) obs[12]++;
      else obs[z + K + 1]++;
    }
    double qq = exp(-0.5), norm = (1 - qq) / (1 + qq), tail = norm * pow(qq, K + 1) / (1 - qq);
    for (int b = 0; b < 13; b++) {
      double pp = (b == 0 || b == 12) ? tail : norm * pow(qq, fabs((double)(b - K - 1)));
      wrong += (obs[b] - pp * draws) * (obs[b] - pp * draws) / (pp * draws);
    }
  }
  check(wrong > 32.91, "noise: the chi2 check rejects a sampler with scale 2.5 instead of 2");

  /* rdt_geometric: P(Y = k) = (1 - q) q^k with q = exp(-s/t), bins 0..K and
  ** a tail, chi2 with K + 1 dof (critical values at p = 0.001: 11 -> 31.26). */
  const uint64_t gst[3][2] = {{1, 2}, {3, 2}, {4294967296ULL, 10 * 4294967296ULL + 12345}};
  const char *gname[3] = {"noise: geometric exp(-1/2) matches P(Y >= k) = exp(-k/2) (chi2, 11 dof)",
                          "noise: geometric exp(-3/2) matches P(Y >= k) = exp(-3k/2) (chi2, 11 dof)",
                          "noise: geometric with a 2^32-denominator exponent ~1/10 matches its law (chi2, 11 dof)"};
  for (int c = 0; c < 3; c++) {
    enum { K = 10 };
    long obs[K + 2] = {0};
    int draws = 200000;
    double qg = exp(-(double)gst[c][0] / (double)gst[c][1]), chig = 0;
    for (int i = 0; i < draws; i++) {
      uint64_t y = rdt_geometric(&rng, gst[c][0], gst[c][1]);
      obs[y > K ? K + 1 : y]++;
    }
    for (int b = 0; b <= K + 1; b++) {
      double pb = b <= K ? (1 - qg) * pow(qg, b) : pow(qg, K + 1), eb = pb * draws;
      chig += (obs[b] - eb) * (obs[b] - eb) / eb;
    }
    check(chig < 31.26, gname[c]);
  }
  /* Seeded discrete Laplace draws are pinned (the first six and an FNV-1a
  ** hash of 1000 draws per scale, then the stream's next word): a change to
  ** the sampler's coins, e.g. in rdt_geometric, which it signs, shows here. */
  {
    rdt_rng r3;
    seeded(&r3, "dlap-stream");
    const int64_t first[3][6] = {{0, 0, -4, 6, -2, -4}, {-1, 0, 0, 0, 1, 0}, {-5, -4, 31, 7, -13, -7}};
    const uint64_t hash[3] = {5639667248708860322ULL, 14506339295503599617ULL, 5465168966456696815ULL};
    int same = 1;
    for (int c = 0; c < 3; c++) {
      uint64_t h = 1469598103934665603ULL;
      for (int i = 0; i < 1000; i++) {
        int64_t z = rdt_discrete_laplace(&r3, gst[c][0], gst[c][1]);
        if (i < 6) same &= z == first[c][i];
        h = (h ^ (uint64_t)z) * 1099511628211ULL;
      }
      same &= h == hash[c];
    }
    same &= rdt_rng_u64(&r3) == 4296753121771933592ULL;
    check(same, "noise: seeded discrete Laplace draws are pinned (six and a hash of 1000 at each of three scales)");
    rdt_rng_clear(&r3);
  }

  rdt_eps e;
  check(rdt_eps_from_double(1.0, &e) && rdt_eps_to_double(e) == 1.0, "eps: 1.0 is exact");
  check(rdt_eps_from_double(0.1, &e) && rdt_eps_to_double(e) <= 0.1 && rdt_eps_to_double(e) > 0.1 - 1e-9,
        "eps: 0.1 rounds down by less than 2^-32");
  check(!rdt_eps_from_double(0, &e) && !rdt_eps_from_double(-1, &e) && !rdt_eps_from_double(NAN, &e) &&
            !rdt_eps_from_double(INFINITY, &e) && !rdt_eps_from_double(1e-7, &e),
        "eps: rejects 0, negative, NaN, inf and below 1e-6");
  uint64_t s, t;
  rdt_eps_from_double(0.5, &e);
  check(rdt_laplace_params(e, 10, &s, &t) && s == 1 && t == 20, "noise: scale k/eps = 10/0.5 gives s/t = 1/20");
  rdt_rng_clear(&rng);
  rdt_rng_clear(&r2);
}

/* ---- selection and real-valued releases --------------------------------- */

/* Exact permute-and-flip probabilities by enumerating the n! orders. */
static void pf_exact(const int64_t *u, int n, double eps, int monotone, double *p) {
  int64_t best = u[0];
  for (int i = 1; i < n; i++) if (u[i] > best) best = u[i];
  double q[8];
  for (int i = 0; i < n; i++) q[i] = exp(-eps * (double)(best - u[i]) / (monotone ? 1 : 2));
  int perm[8], c[8] = {0}, count = 0;
  for (int i = 0; i < n; i++) { perm[i] = i; p[i] = 0; }
  for (int k = 0;;) { /* Heap's algorithm over all orders */
    double reach = 1;
    for (int j = 0; j < n; j++) { p[perm[j]] += reach * q[perm[j]]; reach *= 1 - q[perm[j]]; }
    count++;
    while (k < n && c[k] >= k) c[k++] = 0;
    if (k >= n) break;
    int a = k % 2 ? c[k] : 0, tmp = perm[a];
    perm[a] = perm[k]; perm[k] = tmp;
    c[k]++;
    k = 0;
  }
  for (int i = 0; i < n; i++) p[i] /= count;
}

static void test_selection(void) {
  rdt_rng rng;
  seeded(&rng, "selection");
  int64_t u[4] = {5, 3, 0, 4};
  double p[4], eps = 1.0;
  rdt_eps e;
  rdt_eps_from_double(eps, &e);
  size_t order[4];
  for (int monotone = 0; monotone <= 1; monotone++) {
    pf_exact(u, 4, eps, monotone, p);
    long cnt[4] = {0};
    int draws = 200000;
    for (int i = 0; i < draws; i++) cnt[rdt_permute_and_flip(&rng, u, 4, e, 1, monotone, order)]++;
    double chi = 0;
    for (int i = 0; i < 4; i++) chi += (cnt[i] - p[i] * draws) * (cnt[i] - p[i] * draws) / (p[i] * draws);
    check(chi < 16.27, monotone ? "select: permute-and-flip (monotone) matches its exact law (chi2, 3 dof)"
                                : "select: permute-and-flip matches its exact law (chi2, 3 dof)");
  }
  /* A far candidate keeps its exact, tiny probability: gap 40 at eps 1 is
  ** exp(-20) = 2e-9 per visit, which a 53-bit Gumbel draw would round to 0. */
  int64_t far[2] = {40, 0};
  long hits = 0;
  for (int i = 0; i < 20000; i++) hits += rdt_permute_and_flip(&rng, far, 2, e, 1, 0, order) == 1;
  check(hits == 0, "select: a candidate 40 below the best is (almost) never chosen at eps 1");
  check(rdt_permute_and_flip(&rng, far, 2, e, 0, 0, order) == -1 &&
            rdt_permute_and_flip(&rng, far, 0, e, 1, 0, order) == -1,
        "select: sensitivity 0 or no candidates is refused");
  /* Huge gaps do not overflow: the coin is exp(-gap * eps / 2). */
  int64_t huge[2] = {INT64_MAX, INT64_MIN};
  check(rdt_permute_and_flip(&rng, huge, 2, e, 1, 0, order) == 0, "select: extreme utilities do not overflow");

  /* Three candidates at a rational exponent with a large denominator (eps
  ** 0.7, sensitivity 3): the closed form of the law over the 6 orders,
  ** P(i) = q_i (1/3 + ((1 - q_j) + (1 - q_k)) / 6 + (1 - q_j)(1 - q_k) / 3)
  ** with q = exp(-gap * s / t), each frequency within 5 standard errors. */
  rdt_eps e7;
  rdt_eps_from_double(0.7, &e7);
  int64_t u3[3] = {10, 8, 3};
  for (int monotone = 0; monotone <= 1; monotone++) {
    uint64_t s3, t3;
    rdt_laplace_params(e7, monotone ? 3 : 6, &s3, &t3);
    double q3[3];
    for (int i = 0; i < 3; i++) q3[i] = exp(-(double)(10 - u3[i]) * (double)s3 / (double)t3);
    long cnt3[3] = {0};
    int draws = 200000, within = 1;
    for (int i = 0; i < draws; i++) cnt3[rdt_permute_and_flip(&rng, u3, 3, e7, 3, monotone, order)]++;
    for (int i = 0; i < 3; i++) {
      double a = 1 - q3[(i + 1) % 3], b = 1 - q3[(i + 2) % 3];
      double pi = q3[i] * (1.0 / 3 + (a + b) / 6 + a * b / 3), se = sqrt(pi * (1 - pi) / draws);
      within &= fabs((double)cnt3[i] / draws - pi) < 5 * se;
    }
    check(within, monotone ? "select: 3 candidates (monotone), eps 0.7, sensitivity 3: each frequency within 5 se "
                             "of the closed-form law"
                           : "select: 3 candidates, eps 0.7, sensitivity 3: each frequency within 5 se of the "
                             "closed-form law");
  }

  /* Timing (select.h item 4): the random draws do not depend on the
  ** utilities. From one seed, 200 selections over 6 candidates whose
  ** utilities are all tied, widely spread, or one far ahead of the rest
  ** leave the stream at the same place, and each selection made exactly 6
  ** geometric draws. */
  {
    const int64_t shapes[4][6] = {{0, 0, 0, 0, 0, 0},
                                  {0, -3, -10, -40, -1000, -1000000},
                                  {1000000, 0, 0, 0, 0, 0},
                                  {INT64_MIN, 0, INT64_MAX, 5, -5, 1}};
    size_t order6[6];
    uint64_t next[4], geometric[4] = {0};
    long first_pick[4];
    for (int c = 0; c < 4; c++) {
      rdt_rng r6;
      seeded(&r6, "select-work");
#ifdef RDT_COUNT_WORK
      uint64_t before = rdt_geometric_draws;
#endif
      first_pick[c] = rdt_permute_and_flip(&r6, shapes[c], 6, e, 1, 0, order6);
      for (int i = 1; i < 200; i++) rdt_permute_and_flip(&r6, shapes[c], 6, e, 1, 0, order6);
#ifdef RDT_COUNT_WORK
      geometric[c] = rdt_geometric_draws - before;
#endif
      next[c] = rdt_rng_u64(&r6);
      rdt_rng_clear(&r6);
    }
    check(next[1] == next[0] && next[2] == next[0] && next[3] == next[0],
          "select: tied, spread, one far best and extreme utilities consume the same random stream");
#ifdef RDT_COUNT_WORK
    char gname6[200];
    snprintf(gname6, sizeof gname6,
             "select: exactly n geometric draws per selection whatever the utilities (%llu, %llu, %llu, %llu for "
             "200 x 6)",
             (unsigned long long)geometric[0], (unsigned long long)geometric[1], (unsigned long long)geometric[2],
             (unsigned long long)geometric[3]);
    check(geometric[0] == 1200 && geometric[1] == 1200 && geometric[2] == 1200 && geometric[3] == 1200, gname6);
#else
    check(0, "select: geometric draw counts need build/test_core compiled with -DRDT_COUNT_WORK");
#endif
    check(first_pick[2] == 0 && first_pick[3] == 2, "select: a far best (and INT64_MAX among extremes) is chosen");
  }
  check(!rdt_bernoulli_exp_times(&rng, 1000, 1, 1) && rdt_bernoulli_exp_times(&rng, 0, 1, 1),
        "noise: Bernoulli(exp(-m n/d)) is 0 for m = 1000 and 1 for m = 0");

  /* Lattice Laplace: every output is on the grid; the noise is discrete
  ** Laplace in grid units with sensitivity floor(1 / 2^-3) + 1 = 9 steps. */
  int on_grid = 1;
  double sum = 0, y;
  for (int i = 0; i < 20000; i++) {
    if (!rdt_lattice_laplace(&rng, 0.3, 1.0, e, -3, &y)) { on_grid = 0; break; }
    on_grid &= ldexp(y, 3) == floor(ldexp(y, 3));
    sum += y;
  }
  check(on_grid, "noise: lattice Laplace outputs are multiples of the grid");
  check(fabs(sum / 20000 - 0.25) < 0.15, "noise: lattice Laplace is centred on the rounded value");
  check(!rdt_lattice_laplace(&rng, 1e300, 1.0, e, -3, &y) && !rdt_lattice_laplace(&rng, 0, 1e6, e, -3, &y) &&
            !rdt_lattice_laplace(&rng, NAN, 1.0, e, 0, &y),
        "noise: lattice Laplace refuses values off the grid's range and too coarse a sensitivity");
  rdt_rng_clear(&rng);
}

static void test_median(void) {
  /* 8 cells on [0, 8); rows 1.5, 2.5, 2.7, 6.1: exact law of the chosen cell
  ** from the permute-and-flip enumeration, against 100k draws. */
  rdt_median m;
  int ok = rdt_median_init(&m, 0, 8, 8);
  double rows[4] = {1.5, 2.5, 2.7, 6.1};
  for (int i = 0; ok && i < 4; i++) rdt_median_add(&m, rows[i]);
  int64_t u[8];
  int64_t left = 0;
  for (int c = 0; ok && c < 8; c++) {
    int64_t right = 4 - left - m.hist[c];
    u[c] = -llabs(left - right) * 32768; /* median: (2^15 L - 2^15 R) */
    left += m.hist[c];
  }
  double p[8];
  /* The median's sensitivity is 2^15 in these units: the coin for a gap g is
  ** exp(-eps * g / (2 * 2^15)); with eps = 1 pass gaps in units of 2^15. */
  int64_t uu[8];
  for (int c = 0; c < 8; c++) uu[c] = u[c] / 32768;
  pf_exact(uu, 8, 1.0, 0, p);
  rdt_rng rng;
  seeded(&rng, "median");
  rdt_eps e;
  rdt_eps_from_double(1.0, &e);
  long cnt[8] = {0};
  int inside = 1, draws = 100000;
  for (int i = 0; ok && i < draws; i++) {
    double y;
    if (!rdt_median_release(&m, &rng, e, RDT_QUANTILE_ONE / 2, &y)) { ok = 0; break; }
    inside &= y >= 0 && y <= 8;
    cnt[(int)floor(y)]++;
  }
  double chi = 0;
  for (int c = 0; c < 8; c++) chi += (cnt[c] - p[c] * draws) * (cnt[c] - p[c] * draws) / (p[c] * draws);
  check(ok && chi < 24.32, "median: the chosen cell follows the exact permute-and-flip law (chi2, 7 dof)");
  check(ok && inside, "median: outputs are cell centres inside [lo, hi]");
  rdt_median_free(&m);
  check(!rdt_median_init(&m, 1, 1, 8) && !rdt_median_init(&m, 0, INFINITY, 8) && !rdt_median_init(&m, 0, 1, 0),
        "median: bad bounds or cell counts are refused");
  rdt_rng_clear(&rng);
}

/* ---- options ------------------------------------------------------------ */

static const char *OPTS =
    "{\"epsilon\": 1, \"trees\": 4, \"depth\": 5, \"vote\": \"majority\", \"seed\": 7,"
    " \"classes\": [\"no\", \"yes\"],"
    " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 10},"
    "                {\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"a\", \"b\", 3]}]}";

static int opts_error(const char *json, const char *needle) {
  rdt_schema s;
  rdt_config c;
  char err[512];
  int ok = rdt_options_parse(json, strlen(json), &s, &c, err, sizeof err);
  if (ok) {
    rdt_schema_free(&s);
    return 0;
  }
  if (!strstr(err, needle)) {
    printf("# expected \"%s\" in \"%s\"\n", needle, err);
    return 0;
  }
  return 1;
}

static void test_options(void) {
  rdt_schema s;
  rdt_config c;
  char err[512];
  int ok = rdt_options_parse(OPTS, strlen(OPTS), &s, &c, err, sizeof err);
  check(ok && c.trees == 4 && c.depth == 5 && c.vote == RDT_VOTE_MAJORITY && c.seeded && c.is_private &&
            s.n_features == 2 && s.n_classes == 2 && s.features[1].n_values == 3,
        "options: a full valid document");
  if (ok) rdt_schema_free(&s);
  check(opts_error("{\"epsilon\":1,\"classes\":[1],\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}],\"foo\":1}", "unknown option \"foo\""),
        "options: unknown key named");
  check(opts_error("{\"classes\":[1]}", "\"epsilon\" is required"), "options: epsilon required");
  check(opts_error("{\"epsilon\":0,\"classes\":[1]}", "\"epsilon\" must be a number > 0"), "options: epsilon 0");
  check(opts_error("{\"epsilon\":1,\"classes\":[1,1],\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}", "lists \"1\" twice"),
        "options: duplicate class");
  check(opts_error("{\"epsilon\":1,\"classes\":[1],\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":1,\"max\":1}]}", "min < max"),
        "options: min < max");
  check(opts_error("{\"epsilon\":1,\"trees\":1024,\"depth\":30,\"classes\":[1],\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}", "model too large"),
        "options: oversized model refused");
  check(opts_error("{\"algorithm\":\"diprime\",\"task\":\"regression\",\"target\":{\"min\":-1e154,\"max\":1e154},\"epsilon\":1,\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}", "its square overflows") &&
            opts_error("{\"algorithm\":\"diprime\",\"task\":\"regression\",\"target\":{\"min\":0,\"max\":1e-155},\"epsilon\":1,\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}", "its square underflows"),
        "options: DiPriMe regression bounds whose R^2 overflows or underflows are refused");
  check(opts_error("{\"epsilon\":1", "not valid JSON"), "options: invalid JSON");
  check(opts_error("[]", "must be a JSON object"), "options: not an object");
}

/* ---- forest ------------------------------------------------------------- */

static int make_forest(rdt_forest *f, const char *json) {
  rdt_schema s;
  rdt_config c;
  char err[512];
  if (!rdt_options_parse(json, strlen(json), &s, &c, err, sizeof err)) {
    printf("# %s\n", err);
    return 0;
  }
  return rdt_forest_init(f, &s, &c);
}

/* Walk every path and check each numeric threshold lies in the interval its
** ancestors leave, and no categorical split repeats a fixed feature. */
static int check_paths(const rdt_forest *f, uint32_t t, uint32_t idx, uint32_t level, double *lo, double *hi,
                       int *fixed) {
  if (level == f->config.depth) return 1;
  const rdt_node *n = &f->nodes[(size_t)t * f->n_internal + idx];
  int ok = 1;
  if (n->kind == RDT_SPLIT_NUMERIC) {
    double l = lo[n->feature], h = hi[n->feature];
    if (!(n->value >= l && n->value < h)) return 0;
    hi[n->feature] = n->value;
    ok &= check_paths(f, t, 2 * idx + 1, level + 1, lo, hi, fixed);
    hi[n->feature] = h;
    lo[n->feature] = n->value;
    ok &= check_paths(f, t, 2 * idx + 2, level + 1, lo, hi, fixed);
    lo[n->feature] = l;
  } else if (n->kind == RDT_SPLIT_CATEGORY_EQ) {
    if (fixed[n->feature]) return 0;
    fixed[n->feature] = 1;
    ok &= check_paths(f, t, 2 * idx + 1, level + 1, lo, hi, fixed);
    fixed[n->feature] = 0;
    ok &= check_paths(f, t, 2 * idx + 2, level + 1, lo, hi, fixed);
  } else {
    ok &= check_paths(f, t, 2 * idx + 1, level + 1, lo, hi, fixed);
    ok &= check_paths(f, t, 2 * idx + 2, level + 1, lo, hi, fixed);
  }
  return ok;
}

static void test_forest(void) {
  rdt_forest f, g;
  int ok = make_forest(&f, OPTS);
  check(ok, "forest: builds from options");
  if (!ok) return;
  double lo[2], hi[2];
  int fixed[2] = {0, 0}, paths = 1;
  for (uint32_t t = 0; t < f.config.trees; t++) {
    lo[0] = 0, hi[0] = 10;
    paths &= check_paths(&f, t, 0, 0, lo, hi, fixed);
  }
  check(paths, "forest: thresholds inside the reachable interval; fixed categories never re-split");

  /* A categorical-only forest deeper than its domain: NONE nodes appear and
  ** every row still lands in a leaf. */
  rdt_forest h;
  ok = make_forest(&h, "{\"epsilon\":null,\"depth\":6,\"trees\":2,\"seed\":1,\"classes\":[0,1],\"features\":"
                       "[{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\"]}]}");
  int none = 0;
  for (uint32_t i = 0; ok && i < h.config.trees * h.n_internal; i++) none += h.nodes[i].kind == RDT_SPLIT_NONE;
  check(ok && none > 0, "forest: exhausted categorical domains give pass-through nodes");
  if (ok) rdt_forest_free(&h);

  /* Reachable subset splits always separate the codes that reach them: with
  ** one categorical feature, walking every code visits every split node. */
  ok = make_forest(&h, "{\"epsilon\":null,\"depth\":5,\"trees\":8,\"seed\":2,\"classes\":[0,1],\"features\":"
                       "[{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}]}");
  int separated = ok, subsets = 0;
  for (uint32_t t = 0; ok && t < h.config.trees; t++) {
    uint8_t seen[31] = {0};
    for (uint32_t code = 0; code <= 5; code++) {
      uint32_t idx = 0;
      for (uint32_t d = 0; d < h.config.depth; d++) {
        const rdt_node *nd = &h.nodes[t * h.n_internal + idx];
        seen[idx] = 1;
        uint32_t left = nd->kind == RDT_SPLIT_CATEGORY_SUBSET ? rdt_subset_member(rdt_value_to_mask(nd->value), code) : 1;
        idx = 2 * idx + 2 - left;
      }
    }
    for (uint32_t i = 0; i < h.n_internal; i++) {
      subsets += h.nodes[t * h.n_internal + i].kind == RDT_SPLIT_CATEGORY_SUBSET;
      if (h.nodes[t * h.n_internal + i].kind != RDT_SPLIT_NONE && !seen[i]) separated = 0;
    }
  }
  check(separated && subsets > 0, "forest: every reachable subset split is reached and separates its codes");
  if (ok) rdt_forest_free(&h);
  check(rdt_subset_member(0x5, 0) == 1 && rdt_subset_member(0x5, 1) == 0 && rdt_subset_member(0x5, 2) == 1,
        "forest: subset membership of small codes is the mask's bit");
  int ones = 0;
  for (uint32_t code = 64; code < 64 + 4000; code++) ones += (int)rdt_subset_member(0x123456789ULL, code);
  check(ones > 1800 && ones < 2200, "forest: subset membership of large codes is balanced");

  /* Majority rule: a leaf votes only when its lead exceeds 2 * trees/eps. */
  ok = make_forest(&h, "{\"epsilon\":0.5,\"depth\":1,\"trees\":2,\"seed\":1,\"classes\":[0,1,2],\"features\":"
                       "[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}");
  if (ok) {
    /* b = 2/0.5 = 4 is the bar: leads 4 (abstain), 5 (vote), all <= 0 (empty) */
    int64_t counts[12] = {16, 12, 3, 17, 12, 0, -1, -5, 0, 0, 0, 0};
    memcpy(h.counts, counts, sizeof counts);
    ok = rdt_forest_prepare(&h);
  }
  check(ok && h.leaf_vote[0] == RDT_LEAF_EMPTY && h.leaf_vote[1] == 0 && h.leaf_vote[2] == RDT_LEAF_EMPTY &&
            fabs(h.theta[0] - 18.0 / 37) < 1e-12 && fabs(h.theta[6] - 1.0 / 3) < 1e-12,
        "forest: majority abstains unless the lead beats the noise scale; theta has pseudo-count b/2");
  if (ok) rdt_forest_free(&h);

  /* Batched training (chunks, full and partial groups, the column-major fast
  ** path of numeric forests) counts exactly what row-by-row training counts. */
  for (int numeric = 1; numeric >= 0; numeric--) {
    rdt_forest one, many;
    const char *opts = numeric
        ? "{\"epsilon\":null,\"depth\":7,\"trees\":5,\"seed\":4,\"classes\":[0,1,2],\"features\":"
          "[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1},{\"name\":\"y\",\"type\":\"numeric\",\"min\":-5,\"max\":5}]}"
        : OPTS;
    int built = make_forest(&one, opts) & make_forest(&many, opts);
    rdt_rng r;
    seeded(&r, "batch rows");
    enum { N = 1000 };
    static double xs[N * 2];
    static uint32_t cls[N];
    for (int i = 0; i < N; i++) {
      xs[2 * i] = numeric ? rdt_rng_unit(&r) : rdt_rng_unit(&r) * 10;
      xs[2 * i + 1] = numeric ? rdt_rng_unit(&r) * 10 - 5 : (double)rdt_rng_below(&r, 4);
      cls[i] = (uint32_t)rdt_rng_below(&r, numeric ? 3 : 2);
      if (built) rdt_forest_train_row(&one, xs + 2 * i, cls[i]);
    }
    if (built) rdt_forest_train_batch(&many, xs, cls, N);
    size_t n = built ? (size_t)one.config.trees * one.n_leaves * one.schema.n_classes : 0;
    check(built && (one.walk_mode == RDT_WALK_NUMERIC) == numeric &&
              memcmp(one.counts, many.counts, n * sizeof *one.counts) == 0,
          numeric ? "forest: batched training = row-by-row training (numeric fast path)"
                  : "forest: batched training = row-by-row training (categorical forest)");
    rdt_forest_free(&one);
    rdt_forest_free(&many);
    rdt_rng_clear(&r);
  }

  /* Automatic depth (private models only): grown to 14, cut back after the
  ** pass. With epsilon 3.2 (0.16 for the count, 3.04 for 3 trees' leaves)
  ** and about 1000 rows the depth is round(log2(4 * 1000 * 3.04 / 3)) = 12;
  ** a cut tree's leaf j holds the sum of its depth-14 descendants, and rows
  ** reach leaf (depth-14 leaf) >> 2. */
  {
    rdt_forest full, cut;
    const char *auto_opts = "{\"epsilon\":3.2,\"trees\":3,\"seed\":9,\"classes\":[0,1],\"features\":"
                            "[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1},"
                            "{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\",\"c\"]}]}";
    int built = make_forest(&full, auto_opts) & make_forest(&cut, auto_opts);
    rdt_rng r;
    seeded(&r, "auto rows");
    static double rows[2000];
    static uint32_t labels[1000];
    for (int i = 0; i < 1000; i++) {
      rows[2 * i] = rdt_rng_unit(&r);
      rows[2 * i + 1] = (double)rdt_rng_below(&r, 4);
      labels[i] = (uint32_t)(rows[2 * i] > 0.5);
    }
    if (built) {
      rdt_forest_train_batch(&full, rows, labels, 1000);
      rdt_forest_train_batch(&cut, rows, labels, 1000);
    }
    check(built && full.config.auto_depth && full.config.depth == 14, "forest: automatic depth grows to 14 first");
    int ok2 = built && rdt_forest_choose_depth(&cut, &r);
    check(ok2 && cut.config.depth == 12 && cut.config.noisy_rows != 1000 && cut.config.noisy_rows > 900 &&
              cut.config.noisy_rows < 1100,
          "forest: ... then cuts back to 12 for a noisy count of 1000 rows (noise seen: not the exact count)");
    int consistent = ok2;
    for (int i = 0; consistent && i < 1000; i++)
      for (uint32_t t = 0; t < 3; t++)
        consistent &= rdt_forest_leaf(&cut, t, rows + 2 * i) == rdt_forest_leaf(&full, t, rows + 2 * i) >> 2;
    for (uint32_t t = 0; consistent && t < 3; t++)
      for (uint32_t l = 0; l < cut.n_leaves; l++)
        for (uint32_t k = 0; k < 2; k++) {
          int64_t sum = 0;
          for (uint32_t d = 0; d < 4; d++) sum += full.counts[((size_t)t * full.n_leaves + 4 * l + d) * 2 + k];
          consistent &= sum == cut.counts[((size_t)t * cut.n_leaves + l) * 2 + k];
        }
    check(consistent, "forest: a cut leaf holds its descendants' counts and rows reach it through the same top levels");
    if (built) {
      rdt_forest_free(&full);
      rdt_forest_free(&cut);
    }
    rdt_rng_clear(&r);
  }

  /* Fail closed (issue 19): noise parameters that cannot be set up add
  ** nothing and say so, so the caller releases nothing. */
  {
    rdt_forest fc;
    int built = make_forest(&fc, "{\"epsilon\":1,\"trees\":2,\"depth\":2,\"classes\":[0,1],\"features\":"
                                 "[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}");
    double x = 0.3;
    if (built) rdt_forest_train_row(&fc, &x, 1);
    rdt_rng r;
    seeded(&r, "fail closed");
    if (built) fc.config.eps_count.num = fc.config.eps.num; /* leaves' share 0: no valid scale */
    int64_t before = 0, after = 0;
    for (uint32_t i = 0; built && i < fc.config.trees * fc.n_leaves * 2; i++) before += fc.counts[i] * (int64_t)(i + 1);
    int refused = built && !rdt_forest_add_noise(&fc, &r);
    for (uint32_t i = 0; built && i < fc.config.trees * fc.n_leaves * 2; i++) after += fc.counts[i] * (int64_t)(i + 1);
    check(refused && before == after, "forest: noise that cannot be set up adds nothing and fails (fail closed)");
    if (built) rdt_forest_free(&fc);
    rdt_rng_clear(&r);
  }

  /* A non-private model's structure never depends on the rows (issue 19):
  ** without "depth" its depth is fixed, and nothing is chosen after the pass. */
  {
    rdt_forest np;
    int built = make_forest(&np, "{\"epsilon\":null,\"trees\":3,\"classes\":[0,1],\"features\":"
                                 "[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}");
    check(built && !np.config.auto_depth && np.config.depth == RDT_NONPRIVATE_DEFAULT_DEPTH &&
              !rdt_config_structure_from_rows(&np.config),
          "forest: a non-private model without depth has the fixed default depth and a row-independent structure");
    if (built) rdt_forest_free(&np);
  }

  /* Determinism of seeded structure, and merge = training on the union. */
  ok = make_forest(&g, OPTS);
  check(ok && memcmp(f.nodes, g.nodes, (size_t)f.config.trees * f.n_internal * sizeof *f.nodes) == 0 &&
            memcmp(f.model_id, g.model_id, 16) == 0,
        "forest: the same seed gives the same structure and model id");
  rdt_forest all;
  make_forest(&all, OPTS);
  rdt_rng rng;
  seeded(&rng, "rows");
  for (int i = 0; i < 1000; i++) {
    double xs[2] = {rdt_rng_unit(&rng) * 10, (double)rdt_rng_below(&rng, 4)};
    uint32_t cls = (uint32_t)(xs[0] > 5);
    rdt_forest_train_row(i % 2 ? &f : &g, xs, cls);
    rdt_forest_train_row(&all, xs, cls);
  }
  size_t nc = (size_t)f.config.trees * f.n_leaves * f.schema.n_classes;
  int64_t total = 0;
  for (size_t i = 0; i < nc; i++) total += all.counts[i];
  check(total == 1000 * (int64_t)f.config.trees, "forest: each row adds exactly one count per tree");
  check(rdt_forest_merge(&f, &g) && memcmp(f.counts, all.counts, nc * sizeof *f.counts) == 0,
        "forest: merging two partial states equals training on all rows");
  rdt_forest other;
  make_forest(&other, "{\"epsilon\":1,\"trees\":4,\"depth\":5,\"seed\":8,\"classes\":[\"no\",\"yes\"],\"features\":"
                      "[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":10},{\"name\":\"c\",\"type\":"
                      "\"categorical\",\"values\":[\"a\",\"b\",3]}]}");
  check(!rdt_forest_merge(&f, &other), "forest: states from different structures refuse to merge");

  /* Noise: integer, changes counts, and its mean absolute value matches the
  ** scale k/eps = 4 (E|Z| for discrete Laplace = 2q/(1-q^2), q = e^-1/4). */
  int64_t *before = malloc(nc * sizeof *before);
  memcpy(before, all.counts, nc * sizeof *before);
  rdt_forest_add_noise(&all, &rng);
  double mad = 0;
  for (size_t i = 0; i < nc; i++) mad += fabs((double)(all.counts[i] - before[i]));
  mad /= (double)nc;
  double q = exp(-0.25), expect = 2 * q / (1 - q * q);
  check(fabs(mad - expect) < 0.25 * expect, "forest: noise magnitude matches scale trees/epsilon");
  free(before);

  check(rdt_forest_prepare(&all), "forest: prediction tables");
  double xs[2] = {9.0, 0}, proba[4];
  rdt_forest_proba(&all, xs, proba);
  check(fabs(proba[0] + proba[1] - 1) < 1e-9, "forest: probabilities sum to 1");
  rdt_forest_free(&f);
  rdt_forest_free(&g);
  rdt_forest_free(&all);
  rdt_forest_free(&other);
  rdt_rng_clear(&rng);
}

/* ---- model BLOB --------------------------------------------------------- */

static unsigned char *golden_model(size_t *size) {
  rdt_forest f;
  if (!make_forest(&f, OPTS)) return NULL;
  rdt_rng rng;
  seeded(&rng, "golden rows");
  for (int i = 0; i < 200; i++) {
    double xs[2] = {rdt_rng_unit(&rng) * 10, (double)rdt_rng_below(&rng, 4)};
    rdt_forest_train_row(&f, xs, (uint32_t)(xs[0] > 5));
  }
  seeded(&rng, "golden noise");
  rdt_forest_add_noise(&f, &rng);
  unsigned char *blob = rdt_model_encode(&f, size);
  rdt_forest_free(&f);
  rdt_rng_clear(&rng);
  return blob;
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)n + 1);
  *size = fread(buf, 1, (size_t)n, fp);
  fclose(fp);
  return buf;
}

/* ---- matrix forests ------------------------------------------------------ */

/* 4 features with 3, 2, 2 and 2 bins: 24 full cells, small enough to check
** every formula against brute force. */
static const char *MATRIX_OPTS =
    "{\"epsilon\": 1, \"trees\": 6, \"depth\": 2, \"noise\": \"matrix\", \"bins\": 2, \"seed\": 11, %s"
    " \"classes\": [0, 1], \"features\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [\"x\", \"y\", \"z\"]},"
    " {\"name\": \"b\", \"type\": \"categorical\", \"values\": [0, 1]}, {\"name\": \"c\", \"type\": \"categorical\","
    " \"values\": [0, 1]}, {\"name\": \"d\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
#define MX_FULL 24

static int matrix_forest(rdt_forest *f, const char *extra) {
  char opts[1024], err[256];
  rdt_schema schema;
  rdt_config config;
  snprintf(opts, sizeof opts, MATRIX_OPTS, extra);
  if (!rdt_options_parse(opts, strlen(opts), &schema, &config, err, sizeof err)) {
    printf("# %s\n", err);
    return 0;
  }
  if (!rdt_forest_init(f, &schema, &config)) {
    printf("# %s\n", f->error);
    rdt_forest_free(f);
    return 0;
  }
  return 1;
}

/* Bins of full cell i (mixed radix 3, 2, 2, 2) and a feature vector that
** falls in them (numeric d: bin 0 = [0, 0.5), bin 1 = [0.5, 1]). */
static void full_cell(uint32_t i, uint32_t *bins, double *xs) {
  bins[0] = i % 3;
  bins[1] = i / 3 % 2;
  bins[2] = i / 6 % 2;
  bins[3] = i / 12 % 2;
  for (int j = 0; j < 3; j++) xs[j] = bins[j];
  xs[3] = bins[3] ? 0.75 : 0.25;
}

/* inside[l * MX_FULL + i]: full cell i lies in leaf l. */
static uint8_t *leaf_membership(const rdt_forest *f) {
  uint64_t L = rdt_forest_total_leaves(f);
  uint8_t *in = calloc((size_t)L * MX_FULL, 1);
  uint32_t bins[4];
  double xs[4];
  for (uint32_t i = 0; in && i < MX_FULL; i++) {
    full_cell(i, bins, xs);
    for (uint32_t t = 0; t < f->config.trees; t++) in[(size_t)rdt_matrix_leaf(f, t, bins) * MX_FULL + i] = 1;
  }
  return in;
}

/* Full cells projecting onto cell `cell` of table tb. */
static int table_cell_holds(const rdt_mtable *tb, uint64_t cell, uint32_t full) {
  uint32_t bins[4];
  double xs[4];
  full_cell(full, bins, xs);
  return rdt_matrix_cell(tb, bins) == cell;
}

/* Does table cell `cell` lie inside leaf l (every full cell projecting onto
** it is in the leaf, and there is one)? */
static int table_cell_inside(const rdt_mtable *tb, uint64_t cell, const uint8_t *in, uint64_t l) {
  int all = 1, any = 0;
  for (uint32_t i = 0; i < MX_FULL; i++)
    if (table_cell_holds(tb, cell, i)) {
      any = 1;
      all &= in[l * MX_FULL + i];
    }
  return any && all;
}

/* Brute force for a table strategy: every leaf is the sum of the table cells
** inside it (their union must be the leaf exactly), its variance is that
** number times 2/eps_t^2, and W_t is the sum of those numbers. */
static int brute_force_tables(const rdt_forest *f, double *mean_var, double *factor) {
  const rdt_matrix *m = f->matrix;
  uint64_t L = rdt_forest_total_leaves(f);
  uint8_t *in = leaf_membership(f);
  double *w = calloc(m->n_tables, sizeof *w), var = 0;
  int ok = in && w;
  for (uint64_t l = 0; ok && l < L; l++) {
    const rdt_mtable *tb = &m->tables[m->leaf_table[l]];
    uint8_t covered[MX_FULL] = {0};
    uint32_t inside = 0;
    for (uint64_t cell = tb->offset; cell < tb->offset + tb->cells; cell++) {
      if (table_cell_inside(tb, cell, in, l)) {
        inside++;
        for (uint32_t i = 0; i < MX_FULL; i++)
          if (table_cell_holds(tb, cell, i)) covered[i] = 1;
      }
    }
    for (uint32_t i = 0; i < MX_FULL; i++) ok &= covered[i] == in[l * MX_FULL + i];
    double e = rdt_eps_to_double(tb->eps);
    var += inside * 2 / (e * e);
    w[m->leaf_table[l]] += inside;
  }
  double sum = 0;
  for (uint32_t g = 0; ok && g < m->n_tables; g++) {
    ok &= fabs(w[g] - m->tables[g].weight) < 1e-9;
    sum += cbrt(w[g]);
  }
  *mean_var = var / (double)L;
  *factor = sum * sum * sum / (double)L;
  free(in);
  free(w);
  return ok;
}

static void test_matrix(void) {
  const char *names[] = {"identity", "marginals", "grouped"};
  double factors[RDT_N_STRATEGIES] = {0};
  for (int k = 0; k < 3; k++) {
    rdt_forest f;
    char extra[64], name[160];
    snprintf(extra, sizeof extra, "\"strategy\": \"%s\",", names[k]);
    if (!matrix_forest(&f, extra)) {
      check(0, "matrix: forest builds");
      continue;
    }
    double var, factor;
    int ok = brute_force_tables(&f, &var, &factor);
    snprintf(name, sizeof name, "matrix %s: every leaf is exactly the sum of its table cells (brute force over 24 cells)",
             names[k]);
    check(ok, name);
    snprintf(name, sizeof name, "matrix %s: expected leaf variance (%.4f) matches brute force (%.4f)", names[k],
             f.matrix->expected_variance, var);
    check(fabs(var - f.matrix->expected_variance) < 1e-9 * var, name);
    snprintf(name, sizeof name, "matrix %s: expected error formula (%.4f) matches brute force (%.4f)", names[k],
             f.matrix->factor[k + 1], factor);
    check(fabs(factor - f.matrix->factor[k + 1]) < 1e-9 * factor, name);
    uint64_t sum = 0;
    for (uint32_t g = 0; g < f.matrix->n_tables; g++) sum += f.matrix->tables[g].eps.num;
    snprintf(name, sizeof name, "matrix %s: the %u tables' budgets add up to epsilon exactly", names[k],
             f.matrix->n_tables);
    check(sum == f.config.eps.num && f.matrix->n_tables >= 1, name);
    memcpy(factors, f.matrix->factor, sizeof factors);

    /* Derivation with arbitrary cell values against brute force. */
    rdt_rng rng;
    seeded(&rng, "matrix-derive");
    uint32_t C = f.schema.n_classes;
    uint64_t L = rdt_forest_total_leaves(&f);
    for (uint64_t i = 0; i < f.matrix->n_cells * C; i++) f.matrix->cells[i] = (int64_t)rdt_rng_below(&rng, 21) - 10;
    int64_t *out = malloc((size_t)L * C * sizeof *out);
    uint8_t *in = leaf_membership(&f);
    ok = out && in && rdt_matrix_derive(&f, f.matrix->tables, f.matrix->leaf_table, f.matrix->cells, out);
    for (uint64_t l = 0; ok && l < L; l++) {
      const rdt_mtable *tb = &f.matrix->tables[f.matrix->leaf_table[l]];
      for (uint32_t c = 0; c < C; c++) {
        int64_t want = 0;
        for (uint64_t cell = tb->offset; cell < tb->offset + tb->cells; cell++)
          if (table_cell_inside(tb, cell, in, l)) want += f.matrix->cells[cell * C + c];
        ok &= out[l * C + c] == want;
      }
    }
    snprintf(name, sizeof name, "matrix %s: derived leaf counters equal brute-force sums of arbitrary cells", names[k]);
    check(ok, name);
    free(out);
    free(in);
    rdt_rng_clear(&rng);
    rdt_forest_free(&f);
  }
  check(factors[RDT_STRATEGY_LEAF - 1] == 36, "matrix leaf: expected error is trees^2 (6 trees: 36)");

  /* Non-private: leaves derived from the exact table equal direct counts. */
  rdt_forest np;
  const char *np_opts =
      "{\"epsilon\": null, \"trees\": 6, \"depth\": 3, \"noise\": \"matrix\", \"bins\": 2, \"seed\": 11,"
      " \"classes\": [0, 1], \"features\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [\"x\", \"y\", \"z\"]},"
      " {\"name\": \"b\", \"type\": \"categorical\", \"values\": [0, 1]}, {\"name\": \"c\", \"type\": \"categorical\","
      " \"values\": [0, 1]}, {\"name\": \"d\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}";
  rdt_schema schema;
  rdt_config config;
  char err[256];
  int ok = rdt_options_parse(np_opts, strlen(np_opts), &schema, &config, err, sizeof err) &&
           rdt_forest_init(&np, &schema, &config);
  check(ok && np.matrix->exact_cells && np.matrix->n_tables == 0,
        "matrix non-private: keeps the exact table over the used attributes, measures no noisy table");
  if (ok) {
    uint32_t C = 2;
    uint64_t L = rdt_forest_total_leaves(&np);
    int64_t *direct = calloc((size_t)L * C, sizeof *direct);
    rdt_rng rng;
    seeded(&rng, "matrix-rows");
    for (int r = 0; r < 500; r++) {
      uint32_t bins[4];
      double xs[4];
      full_cell((uint32_t)rdt_rng_below(&rng, MX_FULL), bins, xs);
      xs[3] = rdt_rng_unit(&rng); /* anywhere in d's bin range */
      bins[3] = xs[3] >= 0.5;
      uint32_t cls = (uint32_t)rdt_rng_below(&rng, 2);
      rdt_forest_train_row(&np, xs, cls);
      for (uint32_t t = 0; t < np.config.trees; t++) direct[(size_t)rdt_matrix_leaf(&np, t, bins) * C + cls]++;
    }
    ok = direct && rdt_matrix_release(&np, &rng) && memcmp(direct, np.counts, (size_t)L * C * sizeof *direct) == 0;
    check(ok, "matrix non-private: leaf counters summed from the exact table equal counting every row down every tree");
    /* The model round-trips, CELL section included. */
    size_t size, size2;
    unsigned char *blob = rdt_model_encode(&np, &size), *again = NULL;
    rdt_forest back;
    ok = blob && rdt_model_decode(blob, size, &back, err, sizeof err);
    if (ok) {
      again = rdt_model_encode(&back, &size2);
      ok = again && size2 == size && memcmp(blob, again, size) == 0 && back.matrix->exact_cells &&
           memcmp(back.matrix->exact_cells, np.matrix->exact_cells,
                  (size_t)np.matrix->exact.cells * C * sizeof *np.matrix->exact_cells) == 0;
      rdt_forest_free(&back);
    }
    check(ok, "matrix model: decode then encode gives the same bytes (multiway nodes, matrix and cell sections)");
    /* Hostile but re-checksummed edits of the node table are refused. */
    int refused = 1;
    for (size_t at = 0; blob && at + 4 <= size - RDT_CHECKSUM_BYTES; at++) {
      if (memcmp(blob + at, "NODE", 4) != 0) continue;
      size_t first = at + 16 + 4; /* section header, then tree 0's node count */
      for (int field = 0; field < 8; field++) { /* feature out of range, or next off by one */
        unsigned char *m = malloc(size);
        memcpy(m, blob, size);
        if (field % 2 == 0) m[first + 4 * (size_t)field + 1] = 0x7F;
        else m[first + 4 * (size_t)field] ^= 1;
        crypto_generichash(m + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, m, size - RDT_CHECKSUM_BYTES, NULL, 0);
        if (rdt_model_decode(m, size, &back, err, sizeof err)) {
          refused = 0;
          rdt_forest_free(&back);
        }
        free(m);
      }
      break;
    }
    check(refused, "matrix model: re-checksummed, an out-of-range feature or a child index off by one in any of the first 4 nodes is refused");
    free(blob);
    free(again);
    free(direct);
    rdt_rng_clear(&rng);
  }
  rdt_forest_free(&np);

  /* Mergeable state: two partial states on the same seeded structure add up
  ** to the state of all their rows (tables of a private forest, before noise). */
  rdt_forest whole, part_a, part_b;
  if (matrix_forest(&whole, "\"strategy\": \"marginals\",") && matrix_forest(&part_a, "\"strategy\": \"marginals\",") &&
      matrix_forest(&part_b, "\"strategy\": \"marginals\",")) {
    rdt_rng rows_rng;
    seeded(&rows_rng, "matrix-merge");
    for (int r = 0; r < 200; r++) {
      uint32_t bins[4];
      double xs[4];
      full_cell((uint32_t)rdt_rng_below(&rows_rng, MX_FULL), bins, xs);
      uint32_t cls = (uint32_t)rdt_rng_below(&rows_rng, 2);
      rdt_forest_train_row(&whole, xs, cls);
      rdt_forest_train_row(r % 3 ? &part_a : &part_b, xs, cls);
    }
    size_t n = (size_t)whole.matrix->n_cells * 2;
    int merged = rdt_forest_merge(&part_a, &part_b) &&
                 memcmp(part_a.matrix->cells, whole.matrix->cells, n * sizeof *whole.matrix->cells) == 0;
    check(merged, "matrix: partial table states on one seeded structure merge into the state of all rows");
    rdt_rng_clear(&rows_rng);
  } else {
    check(0, "matrix: merge setup");
  }
  rdt_forest_free(&whole);
  rdt_forest_free(&part_a);
  rdt_forest_free(&part_b);

  /* Batch prediction: the identity factor of a query is sum over cells of
  ** w(cell)^2, w = the number of trees whose leaf holds both the query and
  ** the cell; checked against that definition cell by cell. */
  rdt_forest bt;
  const char *bt_opts =
      "{\"epsilon\": null, \"trees\": 5, \"depth\": 2, \"noise\": \"matrix\", \"seed\": 3, \"classes\": [0, 1],"
      " \"features\": [{\"name\": \"a\", \"type\": \"categorical\", \"values\": [0, 1, 2]},"
      " {\"name\": \"b\", \"type\": \"categorical\", \"values\": [0, 1]},"
      " {\"name\": \"c\", \"type\": \"categorical\", \"values\": [0, 1, 2, 3]}]}";
  ok = rdt_options_parse(bt_opts, strlen(bt_opts), &schema, &config, err, sizeof err) &&
       rdt_forest_init(&bt, &schema, &config);
  if (ok) {
    const rdt_mtable *tb = &bt.matrix->exact;
    double queries[6] = {1, 0, 3, 2, 1, 0}, factor[RDT_BATCH_N_STRATEGIES], want = 0;
    uint32_t qb[3], cb[3];
    for (int q = 0; q < 2; q++) {
      for (int j = 0; j < 3; j++) qb[j] = (uint32_t)queries[3 * q + j];
      for (uint64_t cell = 0; cell < tb->cells; cell++) {
        memcpy(cb, qb, sizeof cb); /* attributes outside the table: the query's */
        for (uint32_t i = 0; i < tb->n_attrs; i++) cb[tb->attrs[i]] = (uint32_t)(cell / tb->stride[i] % bt.matrix->domain[tb->attrs[i]]);
        double w = 0;
        for (uint32_t t = 0; t < bt.config.trees; t++) w += rdt_matrix_leaf(&bt, t, cb) == rdt_matrix_leaf(&bt, t, qb);
        want += w * w;
      }
    }
    want /= 2;
    ok = rdt_batch_plan(&bt, queries, 2, factor);
    char name[200];
    snprintf(name, sizeof name, "batch plan: identity factor %.3f = mean over queries of sum of w(cell)^2 (%.3f); "
             "query n^2 k^2 = 100; leaf k^3 = 125", ok ? factor[RDT_BATCH_IDENTITY - 1] : -1, want);
    check(ok && fabs(factor[RDT_BATCH_IDENTITY - 1] - want) < 1e-9 && factor[RDT_BATCH_QUERY - 1] == 100 &&
              factor[RDT_BATCH_LEAF - 1] == 125, name);
  }
  rdt_forest_free(&bt);
}

/* ---- RDT# ---------------------------------------------------------------- */

/* Public rows have x in [0, 0.5) and c in {a, b}; private rows x in [0.5, 1]
** and c = "c": no private row can equal a public one. */
static int sharp_forest(rdt_forest *f, const char *extra, double *pub, uint64_t n_pub) {
  char opts[1024], err[256];
  rdt_schema schema;
  rdt_config config;
  snprintf(opts, sizeof opts,
           "{\"algorithm\": \"rdt#\", \"public_query\": \"SELECT 1\", \"public_tables\": [], \"epsilon\": 1, \"seed\": 21, %s"
           " \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"
           " {\"name\": \"c\", \"type\": \"categorical\", \"values\": [\"a\", \"b\", \"c\"]}]}", extra);
  if (!rdt_options_parse(opts, strlen(opts), &schema, &config, err, sizeof err)) {
    printf("# %s\n", err);
    return 0;
  }
  if (config.depth == 0) config.depth = rdt_sharp_depth(&schema, config.bins, (double)n_pub);
  if (config.primary_trees == 0) {
    config.primary_trees = rdt_sharp_primary(&schema, config.bins, config.depth, (double)n_pub, rdt_eps_to_double(config.eps));
    config.trees += config.primary_trees;
  }
  if (!rdt_forest_init(f, &schema, &config) || !rdt_sharp_build(f, pub, n_pub, err, sizeof err)) {
    printf("# %s\n", err);
    rdt_forest_free(f);
    return 0;
  }
  return 1;
}

static void test_sharp(void) {
  enum { N_PUB = 400, N_PRIV = 300 };
  double pub[N_PUB * 2], priv[N_PRIV * 2];
  uint32_t cls[N_PRIV];
  rdt_rng rng;
  seeded(&rng, "sharp-rows");
  for (int i = 0; i < N_PUB; i++) {
    pub[2 * i] = rdt_rng_unit(&rng) * 0.5;
    pub[2 * i + 1] = (double)rdt_rng_below(&rng, 2);
  }
  for (int i = 0; i < N_PRIV; i++) {
    priv[2 * i] = 0.5 + rdt_rng_unit(&rng) * 0.5;
    priv[2 * i + 1] = 2;
    cls[i] = priv[2 * i] > 0.75;
  }
  rdt_forest f;
  if (!sharp_forest(&f, "\"trees\": 3, \"secondary_trees\": 7, \"cells\": 20, \"depth\": 2, \"bins\": 3,", pub, N_PUB)) {
    check(0, "rdt#: forest builds");
    rdt_rng_clear(&rng);
    return;
  }
  const rdt_sharp *sh = f.sharp;
  uint64_t slots = rdt_sharp_slots(&f);
  int from_public = 1, lone_ok = 1;
  for (uint64_t k = 0; k < slots; k++) {
    const double *c = sh->centres + k * 2;
    if (isnan(c[0])) continue;
    int found = 0;
    for (int i = 0; i < N_PUB && !found; i++) found = pub[2 * i] == c[0] && pub[2 * i + 1] == c[1];
    from_public &= found;
  }
  for (uint64_t l = 0; l < rdt_matrix_leaves(&f); l++)
    if (isnan(sh->centres[(size_t)sh->slot_start[l] * 2])) lone_ok &= sh->slot_start[l + 1] - sh->slot_start[l] == 1;
  check(from_public && slots > f.config.trees, "rdt#: every centre is a public row, verbatim (private rows never become centres)");
  check(lone_ok, "rdt#: a leaf no public row reaches has exactly one centre, without coordinates");
  /* Each tree has at least one centre per leaf and about "cells" centres in all. */
  int centres_ok = 1;
  for (uint32_t t = 0; t < f.config.trees; t++) {
    uint64_t a = sh->slot_start[f.matrix->leaf_start[t]], b = sh->slot_start[f.matrix->leaf_start[t + 1]];
    uint64_t leaves = f.matrix->leaf_start[t + 1] - f.matrix->leaf_start[t];
    centres_ok &= b - a >= leaves && b - a <= leaves + 20;
  }
  check(centres_ok, "rdt#: every tree has between its leaf count and leaves + cells centres (ceil per leaf)");

  /* Exact counts (no noise): a primary tree counts every private row once,
  ** a secondary tree every public row once; nothing else is counted. */
  f.config.is_private = 0;
  rdt_forest_train_batch(&f, priv, cls, N_PRIV);
  int ok = rdt_sharp_release(&f, pub, N_PUB, &rng);
  int totals = ok;
  for (uint32_t t = 0; t < f.config.trees; t++) {
    uint64_t a = sh->slot_start[f.matrix->leaf_start[t]], b = sh->slot_start[f.matrix->leaf_start[t + 1]];
    int64_t sum = 0;
    for (uint64_t k = a * 2; k < b * 2; k++) sum += f.counts[k];
    totals &= sum == (t < f.config.primary_trees ? N_PRIV : N_PUB);
  }
  check(totals, "rdt#: primary trees count each private row once, secondary trees each public row once");
  f.config.is_private = 1;
  /* Round trip: the centres and counters come back identical. */
  size_t size, size2;
  unsigned char *blob = rdt_model_encode(&f, &size), *again = NULL;
  rdt_forest back;
  char err[256];
  ok = blob && rdt_model_decode(blob, size, &back, err, sizeof err);
  if (!ok) printf("# %s\n", blob ? err : "encode failed");
  if (ok) {
    again = rdt_model_encode(&back, &size2);
    double xs[2] = {0.7, 2}, pa[4], pb[4];
    ok = rdt_forest_prepare(&f);
    rdt_forest_proba(&f, xs, pa);
    rdt_forest_proba(&back, xs, pb);
    ok = ok && again && size2 == size && memcmp(again, blob, size) == 0 && pa[0] == pb[0] && pa[1] == pb[1];
    rdt_forest_free(&back);
  }
  check(ok, "rdt# model: decode then encode gives the same bytes, and the same predictions");
  /* A centre outside the schema's bounds is refused even when re-checksummed. */
  int refused = 0;
  if (blob) {
    for (size_t at = 0; at + 4 <= size; at++) {
      if (memcmp(blob + at, "CNTR", 4) != 0) continue;
      size_t first = at + 16; /* the first leaf's centre count, then its centres */
      uint32_t n = (uint32_t)blob[first] | (uint32_t)blob[first + 1] << 8;
      if (n == 0) break;
      double bad = 2.0; /* x in [0, 1] */
      memcpy(blob + first + 4, &bad, 8);
      crypto_generichash(blob + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, blob, size - RDT_CHECKSUM_BYTES, NULL, 0);
      refused = !rdt_model_decode(blob, size, &back, err, sizeof err) && strstr(err, "centres");
      break;
    }
  }
  check(refused, "rdt# model: a centre outside the public bounds is refused (re-checksummed)");
  free(blob);
  free(again);
  rdt_forest_free(&f);

  /* The default primary tree count follows the public rule. */
  rdt_schema s = {0};
  rdt_feature ft[2] = {{.type = RDT_FEATURE_CATEGORICAL, .n_values = 3}, {.type = RDT_FEATURE_CATEGORICAL, .n_values = 3}};
  s.n_features = 2;
  s.features = ft;
  check(rdt_sharp_depth(&s, 4, 100) == 1 && rdt_sharp_primary(&s, 4, 2, 450, 1) == 10 &&
            rdt_sharp_primary(&s, 4, 2, 90, 1) == 2 && rdt_sharp_primary(&s, 4, 2, 10, 0.5) == 1,
        "rdt#: depth min(k/2, log_b n + 1) and default p = round(eps n / (5 b^h)) in [1, 10]");
  rdt_rng_clear(&rng);
}

/* RDT# contract item 6: every private row costs the same work. Public rows
** crowd into one corner (dense leaves) and a few sit in the other (sparse
** leaves, and leaves without public rows); their x values repeat, so centres
** tie. Work is counted in distance evaluations (build/test_core is compiled
** with RDT_COUNT_WORK). */
static void test_sharp_constant_work(void) {
#ifndef RDT_COUNT_WORK
  check(0, "rdt#: constant work needs build/test_core compiled with -DRDT_COUNT_WORK");
#else
  enum { N_PUB = 400 };
  double pub[N_PUB * 2];
  rdt_rng rng;
  seeded(&rng, "sharp-work");
  for (int i = 0; i < N_PUB; i++) {
    int dense = i < 380;
    pub[2 * i] = dense ? 0.05 * (double)rdt_rng_below(&rng, 5) : 0.5 + 0.05 * (double)rdt_rng_below(&rng, 10);
    pub[2 * i + 1] = dense ? 0 : 1;
  }
  rdt_forest f;
  if (!sharp_forest(&f, "\"trees\": 3, \"secondary_trees\": 2, \"cells\": 60, \"depth\": 2, \"bins\": 2,", pub, N_PUB)) {
    check(0, "rdt# constant work: forest builds");
    rdt_rng_clear(&rng);
    return;
  }
  const rdt_sharp *sh = f.sharp;
  uint32_t p = f.config.primary_trees, bins[2];
  /* The rows reaching the most and the fewest centres over the primary trees. */
  double dense_row[2] = {0, 0}, sparse_row[2] = {0, 0};
  uint64_t most = 0, fewest = UINT64_MAX;
  for (int xi = 0; xi <= 20; xi++) {
    for (int c = 0; c < 3; c++) {
      double x[2] = {xi / 20.0, c};
      uint64_t centres = 0;
      rdt_matrix_row_bins(&f, x, bins);
      for (uint32_t t = 0; t < p; t++) {
        uint64_t l = rdt_matrix_leaf(&f, t, bins);
        centres += sh->slot_start[l + 1] - sh->slot_start[l];
      }
      if (centres > most) { most = centres; memcpy(dense_row, x, sizeof x); }
      if (centres < fewest) { fewest = centres; memcpy(sparse_row, x, sizeof x); }
    }
  }
  char name[256];
  snprintf(name, sizeof name, "rdt# constant work: the densest row reaches %llu centres over the %u primary trees, "
           "the sparsest %llu (the test's premise)", (unsigned long long)most, p, (unsigned long long)fewest);
  check(most >= 4 * fewest && sh->scan_width >= 10, name);
  uint64_t before = rdt_sharp_distance_evals;
  rdt_sharp_train_row(&f, dense_row, 1);
  uint64_t dense_work = rdt_sharp_distance_evals - before;
  before = rdt_sharp_distance_evals;
  rdt_sharp_train_row(&f, sparse_row, 1);
  uint64_t sparse_work = rdt_sharp_distance_evals - before;
  snprintf(name, sizeof name, "rdt# constant work: a private row in the densest and in the sparsest leaves costs the "
           "same distance evaluations (%llu, %llu) = primary trees x the widest primary leaf (%u x %llu)",
           (unsigned long long)dense_work, (unsigned long long)sparse_work, p, (unsigned long long)sh->scan_width);
  check(dense_work == sparse_work && dense_work == p * sh->scan_width, name);
  /* Same model: the padded, branch-free scan picks rdt_sharp_slot's centre
  ** (ties to the first), on this forest and on one whose public rows spread
  ** over every leaf (there the padding's foreign centres are often nearer). */
  int same = 1;
  for (int forest = 0; forest < 2 && same; forest++) {
    if (forest == 1) {
      rdt_forest_free(&f);
      for (int i = 0; i < N_PUB; i++) {
        pub[2 * i] = 0.05 * (double)rdt_rng_below(&rng, 21);
        pub[2 * i + 1] = (double)rdt_rng_below(&rng, 3);
      }
      if (!sharp_forest(&f, "\"trees\": 4, \"secondary_trees\": 2, \"cells\": 60, \"depth\": 2, \"bins\": 3,", pub, N_PUB)) {
        check(0, "rdt# constant work: the second forest builds");
        rdt_rng_clear(&rng);
        return;
      }
    }
    for (int i = 0; i < 3000 && same; i++) {
      double x[2] = {i < 1500 ? 0.05 * (double)rdt_rng_below(&rng, 21) : rdt_rng_unit(&rng), (double)rdt_rng_below(&rng, 3)};
      rdt_matrix_row_bins(&f, x, bins);
      for (uint32_t t = 0; t < f.config.trees; t++)
        same &= rdt_sharp_private_slot(&f, t, x, bins) == rdt_sharp_slot(&f, t, x, bins);
    }
  }
  check(same, "rdt# constant work: the padded scan chooses the same centre as the plain one on every tree, ties included");
  rdt_forest_free(&f);
  rdt_rng_clear(&rng);
#endif
}

/* ---- DiPriMe: fail closed ----------------------------------------------- */

/* Train a seeded DiPriMe forest on 60 rows; `impossible` sets a leaf budget
** the noise samplers refuse (classification: 0; regression: 2^-32, whose
** halves round to 0). Returns rdt_diprime_train's result; *nonzero: counters
** left non-zero. */
static int diprime_run(int regression, int impossible, int *nonzero) {
  char opts[512], err[256];
  snprintf(opts, sizeof opts,
           "{\"algorithm\": \"diprime\", \"epsilon\": 4, \"trees\": 2, \"depth\": 2, \"candidates\": 1, \"seed\": 3, %s"
           " \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
           regression ? "\"task\": \"regression\", \"target\": {\"min\": 0, \"max\": 1}," : "\"classes\": [0, 1],");
  rdt_schema schema;
  rdt_config config;
  rdt_forest f;
  memset(&f, 0, sizeof f);
  if (!rdt_options_parse(opts, strlen(opts), &schema, &config, err, sizeof err) || !rdt_diprime_budget(&config, 1)) {
    printf("# %s\n", err);
    return -1;
  }
  if (impossible) config.eps_leaf.num = regression ? 1 : 0;
  double xs[60], ys[60];
  uint32_t cls[60];
  for (int i = 0; i < 60; i++) {
    xs[i] = (i % 10) / 10.0;
    ys[i] = xs[i];
    cls[i] = xs[i] > 0.5;
  }
  rdt_rng rng;
  seeded(&rng, "diprime-fail");
  int r = rdt_forest_init(&f, &schema, &config) ? rdt_diprime_train(&f, xs, cls, regression ? ys : NULL, 60, &rng) : -1;
  *nonzero = 0;
  for (size_t i = 0; f.counts && i < (size_t)f.config.trees * f.n_leaves * rdt_forest_slots(&f); i++) *nonzero |= f.counts[i] != 0;
  rdt_forest_free(&f);
  rdt_rng_clear(&rng);
  return r;
}

static void test_diprime(void) {
  for (int regression = 0; regression < 2; regression++) {
    int nz_ok, nz_bad;
    int ok = diprime_run(regression, 0, &nz_ok), bad = diprime_run(regression, 1, &nz_bad);
    char name[200];
    snprintf(name, sizeof name, "diprime %s: a leaf noise scale the sampler refuses fails the whole training and "
             "wipes the counters (nothing to release); the same forest with its real budget trains",
             regression ? "regression" : "classification");
    check(ok == 1 && nz_ok && bad == 0 && !nz_bad, name);
  }
}

/* ---- row sample (bottom-k) ---------------------------------------------- */

/* Offer n rows with the given priorities; who[slot] = arrival index of the
** row each slot holds. Returns the sample size, or -1 on failure. */
static long sample_rows(uint64_t k, const uint64_t *prio, uint64_t n, uint64_t *who) {
  rdt_row_sample s;
  if (!rdt_row_sample_init(&s, k, NULL, "test")) return -1;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t slot;
    rdt_row_sample_result r = rdt_row_sample_offer_priority(&s, prio[i], &slot);
    if (r == RDT_ROW_SAMPLE_NOMEM || (r == RDT_ROW_SAMPLE_KEEP && slot >= k)) {
      rdt_row_sample_free(&s);
      return -1;
    }
    if (r == RDT_ROW_SAMPLE_KEEP) who[slot] = i;
  }
  long size = (long)s.size;
  rdt_row_sample_free(&s);
  return size;
}

/* in[i] = 1 iff row i is among the k smallest keys (prio, i): the contract, by brute force. */
static void bottom_k(uint64_t k, const uint64_t *prio, uint64_t n, uint8_t *in) {
  for (uint64_t i = 0; i < n; i++) {
    uint64_t below = 0;
    for (uint64_t j = 0; j < n; j++) below += prio[j] < prio[i] || (prio[j] == prio[i] && j < i);
    in[i] = below < k;
  }
}

static void test_row_sample(void) {
  enum { MAXN = 3000 };
  static uint64_t prio[MAXN + 1], who[MAXN + 1], who2[MAXN + 1];
  static uint8_t in[MAXN + 1], got[MAXN + 1], got2[MAXN + 1];
  rdt_rng rng;
  seeded(&rng, "row-sample");
  /* Exactly the bottom-k, with many ties (priorities in [0, 8)) or none. */
  int exact = 1, in_order = 1;
  for (int trial = 0; trial < 600 && exact; trial++) {
    uint64_t n = trial < 590 ? 1 + rdt_rng_below(&rng, 60) : MAXN, k = 1 + rdt_rng_below(&rng, trial < 590 ? 20 : 2500);
    int ties = trial % 2;
    for (uint64_t i = 0; i < n; i++) prio[i] = ties ? rdt_rng_below(&rng, 8) : rdt_rng_u64(&rng);
    long size = sample_rows(k, prio, n, who);
    exact &= size == (long)(n < k ? n : k);
    if (!exact) break;
    bottom_k(k, prio, n, in);
    memset(got, 0, n);
    for (long q = 0; q < size; q++) got[who[q]]++;
    exact &= memcmp(got, in, n) == 0;
    if (n <= k)
      for (long q = 0; q < size; q++) in_order &= who[q] == (uint64_t)q;
  }
  check(exact, "row sample: the kept rows are the k smallest (priority, arrival) keys, ties to the earlier row, "
               "across growths of the buffers");
  check(in_order, "row sample: up to k rows, every row is kept, in slot order");
  /* Coupling (contract item 3): one inserted row, same priorities for the others. */
  int coupled = 1;
  for (int trial = 0; trial < 2000 && coupled; trial++) {
    uint64_t n = 1 + rdt_rng_below(&rng, 40), k = 1 + rdt_rng_below(&rng, 12), j = rdt_rng_below(&rng, n + 1);
    for (uint64_t i = 0; i <= n; i++) prio[i] = trial % 2 ? rdt_rng_below(&rng, 6) : rdt_rng_u64(&rng);
    long a = sample_rows(k, prio, n + 1, who); /* D' = D with row j inserted */
    uint64_t d[MAXN];
    for (uint64_t i = 0, m = 0; i <= n; i++)
      if (i != j) d[m++] = prio[i];
    long b = sample_rows(k, d, n, who2);
    coupled &= a >= 0 && b >= 0;
    if (!coupled) break;
    memset(got, 0, n + 1); /* by identity: D' index */
    memset(got2, 0, n + 1);
    for (long q = 0; q < a; q++) got[who[q]] = 1;
    for (long q = 0; q < b; q++) got2[who2[q] < j ? who2[q] : who2[q] + 1] = 1;
    int added = 0, removed = 0;
    for (uint64_t i = 0; i <= n; i++) {
      added += got[i] && !got2[i];
      removed += got2[i] && !got[i];
    }
    coupled &= added <= 1 && removed <= 1 && (added == 0 || got[j]);
  }
  check(coupled, "row sample: inserting one row changes the sample by at most that row in and one row out "
                 "(same priorities for the others, with and without ties)");
  /* Uniformity with the sampler's own stream: every 3-subset of 8 rows equally likely. */
  enum { RUNS = 28000, SUBSETS = 56 };
  long hist[256] = {0};
  int drawn = 1;
  for (int run = 0; run < RUNS && drawn; run++) {
    unsigned char key[RDT_RNG_KEYBYTES];
    rdt_row_sample s;
    rdt_rng_bytes(&rng, key, sizeof key);
    drawn = rdt_row_sample_init(&s, 3, key, "test-uniform");
    unsigned mask = 0;
    uint64_t row_in_slot[3] = {0, 0, 0};
    for (uint64_t i = 0; drawn && i < 8; i++) {
      uint64_t slot;
      rdt_row_sample_result r = rdt_row_sample_offer(&s, &slot);
      drawn = r != RDT_ROW_SAMPLE_NOMEM;
      if (r == RDT_ROW_SAMPLE_KEEP) row_in_slot[slot] = i;
    }
    for (int q = 0; q < 3; q++) mask |= 1u << row_in_slot[q];
    drawn = drawn && s.size == 3;
    hist[mask]++;
    rdt_row_sample_free(&s);
  }
  double chi2 = 0, expect = (double)RUNS / SUBSETS;
  int cells = 0;
  for (unsigned m = 0; m < 256; m++) {
    unsigned bits = 0;
    for (unsigned b = m; b; b >>= 1) bits += b & 1;
    if (bits != 3) {
      drawn &= hist[m] == 0;
      continue;
    }
    cells++;
    chi2 += (hist[m] - expect) * (hist[m] - expect) / expect;
  }
  /* 55 degrees of freedom: mean 55, sd 10.5; 120 is beyond 6 sd. */
  check(drawn && cells == SUBSETS && chi2 < 120, "row sample: with its own stream, every 3-subset of 8 rows is "
                                                 "equally likely (chi-square, 56 subsets)");
  /* Seeded streams: the same key and purpose give the same sample, another purpose another. */
  unsigned char key[RDT_RNG_KEYBYTES] = {1};
  rdt_row_sample s1, s2, s3;
  int same = rdt_row_sample_init(&s1, 5, key, "p") && rdt_row_sample_init(&s2, 5, key, "p") &&
             rdt_row_sample_init(&s3, 5, key, "q");
  int differs = 0;
  for (int i = 0; same && i < 200; i++) {
    uint64_t a = 99, b = 99, c = 99;
    rdt_row_sample_result ra = rdt_row_sample_offer(&s1, &a), rb = rdt_row_sample_offer(&s2, &b);
    rdt_row_sample_result rc = rdt_row_sample_offer(&s3, &c);
    same &= ra == rb && a == b;
    differs |= ra != rc || a != c;
  }
  check(same && differs, "row sample: the same seed key and purpose give the same sample; another purpose another");
  rdt_row_sample_free(&s1);
  rdt_row_sample_free(&s2);
  rdt_row_sample_free(&s3);
  rdt_row_sample_free(&s3); /* twice: safe */
  rdt_row_sample z;
  check(!rdt_row_sample_init(&z, 0, NULL, "t") && !rdt_row_sample_init(&z, (uint64_t)RDT_ROW_SAMPLE_MAX_K + 1, NULL, "t"),
        "row sample: k = 0 and k above 2^32 - 1 are refused");
  rdt_row_sample_free(&z);
  rdt_rng_clear(&rng);
}

static void test_model(const char *golden_path) {
  size_t size, gsize;
  unsigned char *blob = golden_model(&size);
  rdt_forest f;
  char err[256];
  int ok = blob && rdt_model_decode(blob, size, &f, err, sizeof err);
  check(ok, "model: encode then decode");
  if (!ok) return;
  size_t size2;
  unsigned char *again = rdt_model_encode(&f, &size2);
  check(size2 == size && memcmp(again, blob, size) == 0, "model: decode then encode gives the same bytes");
  check(rdt_model_size(&f) == size, "model: size is known before encoding");
  free(again);
  rdt_forest_free(&f);

  unsigned char *golden = read_file(golden_path, &gsize);
  check(golden && gsize == size && memcmp(golden, blob, size) == 0,
        "model: seeded training reproduces the golden BLOB (format 1.1) byte for byte");
  ok = golden && rdt_model_decode(golden, gsize, &f, err, sizeof err);
  check(ok, "model: the golden BLOB decodes");
  if (ok) rdt_forest_free(&f);
  free(golden);
  /* A format 1.0 model (written before the structure flag) still decodes,
  ** reports its own version, and derives the flag. */
  golden = read_file(getenv("RDT_GOLDEN_1_0") ? getenv("RDT_GOLDEN_1_0") : "tests/golden/model_v1_0.blob", &gsize);
  ok = golden && rdt_model_decode(golden, gsize, &f, err, sizeof err);
  check(ok && f.format_minor == 0 && !rdt_config_structure_from_rows(&f.config),
        "model: a format 1.0 BLOB decodes as 1.0 with a row-independent structure");
  if (ok) rdt_forest_free(&f);
  free(golden);

  /* The version field: a flipped bit is a checksum mismatch; a model of
  ** another major version, its checksum intact, is an unsupported version. */
  {
    unsigned char *m = malloc(size);
    if (m) {
      memcpy(m, blob, size);
      m[10] ^= 1; /* byte 10: the major version's low byte */
      int refused = !rdt_model_decode(m, size, &f, err, sizeof err);
      check(refused && strstr(err, "model checksum mismatch") != NULL,
            "model: one flipped bit in the version field reads as a checksum mismatch, not another version");
      crypto_generichash(m + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, m, size - RDT_CHECKSUM_BYTES, NULL, 0);
      refused = !rdt_model_decode(m, size, &f, err, sizeof err);
      check(refused && strstr(err, "unsupported model format version 0.1") != NULL,
            "model: another major version with its checksum intact is an unsupported version");
      free(m);
    }
  }

  int all_fail = 1;
  for (size_t n = 0; n < size; n++) {
    if (rdt_model_decode(blob, n, &f, err, sizeof err)) {
      rdt_forest_free(&f);
      all_fail = 0;
    }
  }
  check(all_fail, "model: every truncation is rejected");
  all_fail = 1;
  for (size_t bit = 0; bit < size * 8; bit++) {
    blob[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    if (rdt_model_decode(blob, size, &f, err, sizeof err)) {
      rdt_forest_free(&f);
      all_fail = 0;
    }
    blob[bit / 8] ^= (unsigned char)(1u << (bit % 8));
  }
  check(all_fail, "model: every single-bit flip is rejected");
  rdt_model_decode(blob, size, &f, err, sizeof err);
  rdt_forest_free(&f);

  /* A hostile encoder can fix the checksum: mutate and re-sign, the decoder
  ** must still never crash (run under ASan) and reject inconsistent tables. */
  rdt_rng rng;
  seeded(&rng, "mutations");
  unsigned char *m = malloc(size);
  int decoded = 0;
  for (int i = 0; i < 3000; i++) {
    memcpy(m, blob, size);
    int flips = 1 + (int)rdt_rng_below(&rng, 4);
    for (int k = 0; k < flips; k++) {
      size_t at = RDT_HEADER_BYTES - 20 + rdt_rng_below(&rng, size - RDT_CHECKSUM_BYTES - RDT_HEADER_BYTES + 20);
      m[at] = (unsigned char)rdt_rng_u64(&rng);
    }
    crypto_generichash(m + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, m, size - RDT_CHECKSUM_BYTES, NULL, 0);
    if (rdt_model_decode(m, size, &f, err, sizeof err)) {
      decoded++;
      rdt_forest_free(&f);
    }
  }
  check(1, "model: 3000 re-checksummed mutations decode or fail without crashing");
  printf("# %d of 3000 re-checksummed mutations still decoded (counter or threshold bytes)\n", decoded);
  check(!rdt_model_decode((const unsigned char *)"SQLite format 3", 15, &f, err, sizeof err) &&
            strstr(err, "not an rdt model"),
        "model: foreign bytes are 'not an rdt model'");
  free(m);
  free(blob);
  rdt_rng_clear(&rng);
}

/* ---- forest JSON codec (forest_json.h) ----------------------------------- */

/* The BLOB rdt_forest_json_import makes of text, or NULL with err. */
static unsigned char *import_text(const char *text, size_t *n, char *err, size_t en) {
  char jerr[128];
  rdt_json *root = rdt_json_parse(text, strlen(text), jerr, sizeof jerr);
  if (!root) {
    snprintf(err, en, "not JSON: %s", jerr);
    return NULL;
  }
  unsigned char *blob = rdt_forest_json_import(root, n, err, en);
  rdt_json_free(root);
  return blob;
}

/* text with its first `from` replaced by `to` (malloc'd), or NULL. */
static char *replaced(const char *text, const char *from, const char *to) {
  const char *at = text ? strstr(text, from) : NULL;
  char *o = at ? malloc(strlen(text) - strlen(from) + strlen(to) + 1) : NULL;
  if (!o) return NULL;
  size_t k = (size_t)(at - text);
  memcpy(o, text, k);
  strcpy(o + k, to);
  strcat(o, at + strlen(from));
  return o;
}

/* import_text of text edited once: the BLOB (freed here) or NULL, with err. */
static int imports_edited(const char *text, const char *from, const char *to, char *err, size_t en) {
  char *edited = replaced(text, from, to);
  size_t n;
  unsigned char *b = edited ? import_text(edited, &n, err, en) : NULL;
  if (!edited) snprintf(err, en, "(the edit's text was not found)");
  free(edited);
  free(b);
  return b != NULL;
}

/* json_io.h contract 5 on small documents: 1 when equal, else err. */
static int same_export(const char *doc, const char *want, char *err, size_t en) {
  char jerr[128];
  rdt_json *d = rdt_json_parse(doc, strlen(doc), jerr, sizeof jerr);
  int same = d && rdt_json_same_export(d, (const unsigned char *)want, strlen(want), err, en);
  if (!d) snprintf(err, en, "not JSON: %s", jerr);
  rdt_json_free(d);
  return same;
}

/* A readable member that disagrees with the BLOB is refused (forest_json.h
** contract 4); key order, spacing and number spelling are free. */
static void test_export_views(const char *text, const unsigned char *blob, size_t size) {
  char err[512];
  size_t n = 0;
  check(!imports_edited(text, "\"epsilon\":1.0,", "\"epsilon\":0.1,", err, sizeof err) &&
            strcmp(err, "the document's \"privacy.epsilon\" (0.1) disagrees with the model it carries (1.0): an edited "
                        "export; import the document rdt_export wrote") == 0,
        "forest json: an edited privacy.epsilon is refused, named by its path");
  check(!imports_edited(text, "\"noise_scale\":", "\"noise_scale\":1,\"x\":", err, sizeof err) &&
            strstr(err, "the document's \"noise_scale\" (1) disagrees with the model it carries (") != NULL,
        "forest json: an edited noise_scale is refused");
  check(!imports_edited(text, "\"neighbouring\":\"add/remove one row\"", "\"neighbouring\":\"add/remove one unit\"", err,
                        sizeof err) &&
            strstr(err, "\"privacy.neighbouring\" (\"add/remove one unit\") disagrees") != NULL,
        "forest json: an edited neighbouring relation is refused");
  check(!imports_edited(text, "\"seeded\":true,", "\"seeded\":true,\"comment\":\"hi\",", err, sizeof err) &&
            strstr(err, "the document's \"comment\" (\"hi\") is not in the model it carries") != NULL,
        "forest json: a member the model does not have is refused");
  check(!imports_edited(text, "\"epsilon\":1.0,", "", err, sizeof err) &&
            strstr(err, "the document lacks \"privacy.epsilon\", which the model it carries has (1.0)") != NULL,
        "forest json: a missing readable member is refused");
  check(!imports_edited(text, "\"seeded\":true,", "\"seeded\":true,\"seeded\":true,", err, sizeof err) &&
            strstr(err, "the document's \"seeded\" appears more than once") != NULL,
        "forest json: a repeated member is refused, even with the same value");
  check(imports_edited(text, "\"epsilon\":1.0,", "\"epsilon\":1e0,", err, sizeof err) &&
            imports_edited(text, "\"epsilon\":1.0,", "\"epsilon\":1,", err, sizeof err) &&
            imports_edited(text, "\"epsilon_den\":4294967296", "\"epsilon_den\":4.294967296e9", err, sizeof err),
        "forest json: numbers compare by value (1.0, 1e0, 1; 4294967296, 4.294967296e9)");
  check(!imports_edited(text, "\"epsilon_den\":4294967296", "\"epsilon_den\":4294967296.5", err, sizeof err),
        "forest json: an integer and a fraction near it differ");
  /* The same document spaced out and with "format" moved last: the same BLOB. */
  rdt_bytes spaced = {0};
  for (const char *p = text; *p; p++) { /* no string of the golden model holds ',' or ':' */
    rdt_json_put_char(&spaced, *p);
    if (*p == ',' || *p == ':') rdt_bytes_text(&spaced, "\n  ");
  }
  rdt_bytes_put(&spaced, "", 1);
  char *moved = spaced.oom ? NULL : replaced((char *)spaced.p, "\"format\":\n  \"rdt-model-json\",", "");
  char *last = moved ? replaced(moved, "\"signature\":", "\"format\": \"rdt-model-json\", \"signature\":") : NULL;
  unsigned char *back = last ? import_text(last, &n, err, sizeof err) : NULL;
  check(back && n == size && memcmp(back, blob, size) == 0,
        "forest json: the export re-spaced, its members reordered, gives the same BLOB");
  free(back);
  free(last);
  free(moved);
  rdt_bytes_free(&spaced);
  /* The comparison itself: paths, exact numbers, decoded strings, bounds. */
  check(same_export("{\"a\":\"\\u0041\",\"b\":[1,{\"c\":null}]}", "{\"b\":[1.0,{\"c\":null}],\"a\":\"A\"}", err,
                    sizeof err),
        "same_export: escapes decoded, member order and number spelling free");
  check(!same_export("{\"a\":9007199254740993}", "{\"a\":9007199254740992.0}", err, sizeof err) &&
            strstr(err, "\"a\" (9007199254740993) disagrees with the model it carries (9007199254740992.0)") != NULL,
        "same_export: an integer differs from a double that rounds to it");
  check(!same_export("{\"a\":[1,{\"b\":[true,2]}]}", "{\"a\":[1,{\"b\":[false,2]}]}", err, sizeof err) &&
            strstr(err, "\"a[1].b[0]\" (true) disagrees with the model it carries (false)") != NULL,
        "same_export: a nested difference is named by its path");
  check(!same_export("{\"a\":[1,2,3]}", "{\"a\":[1,2]}", err, sizeof err) &&
            strstr(err, "\"a\" (an array of 3) disagrees with the model it carries (an array of 2)") != NULL,
        "same_export: arrays of different lengths differ");
  check(!same_export("[1]", "{}", err, sizeof err) && strncmp(err, "the document (an array of 1) disagrees", 38) == 0,
        "same_export: a document of another type differs");
  char doc[600] = "{\"", want[600];
  for (int i = 0; i < 8; i++) strcat(doc, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\":{\"");
  strcat(doc, "z\":1");
  strcpy(want, doc);
  strcat(doc, "}}}}}}}}}");
  strcat(want, ".5}}}}}}}}}");
  check(!same_export(doc, want, err, sizeof err) && strstr(err, "...\" (1) disagrees with the model it carries (1.5)") != NULL &&
            strlen(err) < 300,
        "same_export: a long path is cut with \"...\"");
  check(!same_export("{\"s\":\"\\\"\\n\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}",
                     "{\"s\":\"x\"}", err, sizeof err) &&
            strstr(err, "\"s\" (\"\\\"?\xc3\xa9") != NULL && strstr(err, "\xc3\xa9...\") disagrees") != NULL,
        "same_export: a long string is shown cut at a character, quotes escaped, control bytes as ?");
  check(same_export("{\"a\":1,\"b\":0,\"a\":2}", "{\"a\":1,\"a\":2,\"b\":0}", err, sizeof err) &&
            !same_export("{\"a\":2,\"a\":1}", "{\"a\":1,\"a\":2}", err, sizeof err) &&
            strstr(err, "\"a\" (2) disagrees with the model it carries (1)") != NULL,
        "same_export: the n-th member of a name is matched with the n-th (reflexive with repeated names)");
  check(!same_export("{\"a\":1,\"a\":1,\"a\":1}", "{\"a\":1,\"a\":1}", err, sizeof err) &&
            strstr(err, "\"a\" appears more than once") != NULL,
        "same_export: a name more often than in the export is refused as repeated");
  check(!same_export("{\"a\":1e999}", "{\"a\":1.0}", err, sizeof err) && strstr(err, "(a number out of range)") != NULL,
        "same_export: an overflowing number is shown as out of range");
  /* Wide objects: the work is the export's size times the document's width. */
  rdt_bytes wide = {0};
  rdt_bytes_text(&wide, "{");
  for (int i = 0; i < 100000; i++) rdt_json_putf(&wide, "\"k%d\":%d,", i, i);
  rdt_bytes_text(&wide, "\"a\":1}");
  char jerr[128];
  rdt_json *w = wide.oom ? NULL : rdt_json_parse((const char *)wide.p, wide.n, jerr, sizeof jerr);
  check(w && !rdt_json_same_export(w, (const unsigned char *)"{\"a\":1}", 7, err, sizeof err) &&
            strstr(err, "the document's \"k0\" (0) is not in the model it carries") != NULL,
        "same_export: 100000 members beside the export's one are refused at the first");
  rdt_json_free(w);
  rdt_bytes_free(&wide);
  /* The golden 1.0 model's export keeps "model_format": "1.0" and imports
  ** (to a 1.1 BLOB: a model that records no label is written as 1.1); no
  ** other version passes. */
  unsigned char *old = read_file(getenv("RDT_GOLDEN_1_0") ? getenv("RDT_GOLDEN_1_0") : "tests/golden/model_v1_0.blob", &n);
  rdt_forest f;
  rdt_bytes o = {0};
  if (old && rdt_model_decode(old, n, &f, err, sizeof err)) {
    rdt_forest_json_export(&f, &o);
    rdt_bytes_put(&o, "", 1);
    rdt_forest_free(&f);
  }
  const char *t0 = o.oom ? NULL : (const char *)o.p;
  back = t0 ? import_text(t0, &n, err, sizeof err) : NULL;
  check(back && strstr(t0, "\"model_format\":\"1.0\"") && rdt_model_decode(back, n, &f, err, sizeof err) &&
            f.format_minor == 1,
        "forest json: a 1.0 model's export imports, to a BLOB of the current version (1.1 without a label)");
  if (back) rdt_forest_free(&f);
  free(back);
  check(t0 && imports_edited(t0, "\"model_format\":\"1.0\"", "\"model_format\":\"1.1\"", err, sizeof err) &&
            !imports_edited(t0, "\"model_format\":\"1.0\"", "\"model_format\":\"1.2\"", err, sizeof err) &&
            strstr(err, "\"model_format\" (\"1.2\") disagrees with the model it carries (\"1.1\")") != NULL &&
            !imports_edited(t0, "\"model_format\":\"1.0\"", "\"model_format\":\"0.9\"", err, sizeof err),
        "forest json: \"model_format\" may name an older minor version, never a newer or another major");
  rdt_bytes_free(&o);
  free(old);
}

static void test_forest_json(void) {
  size_t size, n = 0;
  char err[256];
  unsigned char *blob = golden_model(&size);
  rdt_forest f;
  int ok = blob && rdt_model_decode(blob, size, &f, err, sizeof err);
  check(ok, "forest json: the golden model decodes");
  if (!ok) {
    free(blob);
    return;
  }
  rdt_bytes out = {0};
  rdt_forest_json_export(&f, &out);
  rdt_bytes_put(&out, "", 1); /* NUL-terminated, for the edits below */
  rdt_forest_free(&f);
  check(!out.oom, "forest json: export");
  char *text = (char *)out.p;
  unsigned char *back = text ? import_text(text, &n, err, sizeof err) : NULL;
  check(back && n == size && memcmp(back, blob, size) == 0, "forest json: import of the export gives the BLOB back");
  free(back);
  if (text) test_export_views(text, blob, size);
  /* Hostile documents are refused, never crash: binary trees named matrix
  ** (the encoder would read a matrix that is not there). */
  char *edited = text ? malloc(strlen(text) + 16) : NULL;
  const char *at = text ? strstr(text, "\"algorithm\":\"rdt\"") : NULL;
  if (edited && at) {
    size_t k = (size_t)(at - text);
    memcpy(edited, text, k);
    strcpy(edited + k, "\"algorithm\":\"matrix\"");
    strcat(edited, at + strlen("\"algorithm\":\"rdt\""));
    back = import_text(edited, &n, err, sizeof err);
    check(!back && strstr(err, "need \"layout\": \"multiway\"") != NULL,
          "forest json: binary trees under the name matrix are refused");
    free(back);
  } else {
    check(0, "forest json: binary trees under the name matrix are refused");
  }
  free(edited);
  rdt_bytes_free(&out);
  free(blob);
  /* A multiway classifier without classes: no slot per leaf, no division by 0. */
  back = import_text("{\"format\":\"rdt-model-json\",\"format_version\":1,\"model_id\":\"00000000000000000000000000000000\","
                     "\"seeded\":false,\"privacy\":{\"private\":false,\"neighbouring\":\"add/remove one row\"},"
                     "\"algorithm\":\"matrix\",\"task\":\"classification\",\"trees\":1,\"depth\":1,\"vote\":2,\"splits\":1,"
                     "\"categorical\":1,\"auto_depth\":0,\"epsilon_count_num\":0,\"row_count\":0,\"candidates\":0,"
                     "\"partition\":false,\"rho\":0.0,\"target\":{\"min\":0.0,\"max\":0.0},\"features\":[{\"name\":\"x\","
                     "\"type\":\"numeric\",\"min\":0.0,\"max\":1.0}],\"classes\":[],\"layout\":\"multiway\",\"bins\":2,"
                     "\"nodes\":[[[-1,0]]],\"leaves\":[[[]]],\"signature\":null}",
                     &n, err, sizeof err);
  check(!back && strcmp(err, "the model is too large") == 0, "forest json: a multiway classifier without classes is refused");
  free(back);
}

static void test_sign(void) {
  size_t size, ssize;
  unsigned char *blob = golden_model(&size);
  unsigned char pk[32], sk[64], pk2[32], sk2[64];
  crypto_sign_keypair(pk, sk);
  crypto_sign_keypair(pk2, sk2);
  char err[256];
  const char *note = "Example Clinic, release 2026-11";
  /* A seeded model is refused (its noise is known to whoever knows the
  ** seed); the rest of these tests sign the golden model marked unseeded. */
  check(!rdt_model_sign(blob, size, sk, note, strlen(note), &ssize, err, sizeof err) && strstr(err, "seeded"),
        "sign: a seeded model is refused");
  {
    rdt_forest u;
    if (blob && rdt_model_decode(blob, size, &u, err, sizeof err)) {
      u.config.seeded = 0;
      free(blob);
      blob = rdt_model_encode(&u, &size);
      rdt_forest_free(&u);
    }
  }
  unsigned char *sm = rdt_model_sign(blob, size, sk, note, strlen(note), &ssize, err, sizeof err);
  check(sm && rdt_model_verify(sm, ssize, pk), "sign: a signed model verifies with the signer's key");
  check(sm && !rdt_model_verify(sm, ssize, pk2), "sign: ... and not with another key");
  check(!rdt_model_verify(blob, size, pk), "sign: an unsigned model does not verify");
  rdt_forest f;
  int ok = sm && rdt_model_decode(sm, ssize, &f, err, sizeof err);
  check(ok && f.is_signed && strcmp(f.note, note) == 0 && memcmp(f.public_key, pk, 32) == 0,
        "sign: the signed model decodes with its note and key");
  if (ok) {
    size_t n2;
    unsigned char *again = rdt_model_encode(&f, &n2);
    check(again && n2 == ssize && memcmp(again, sm, ssize) == 0, "sign: a signed model re-encodes byte for byte");
    free(again);
    rdt_forest_free(&f);
  }
  size_t n3;
  check(sm && !rdt_model_sign(sm, ssize, sk, "", 0, &n3, err, sizeof err) && strstr(err, "already signed"),
        "sign: signing twice is refused");
  /* Every single flipped bit fails verification, also when the attacker
  ** recomputes the checksum afterwards. */
  int all_fail = 1, all_fail_rechecked = 1;
  for (size_t bit = 0; sm && bit < ssize * 8; bit++) {
    sm[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    all_fail &= !rdt_model_verify(sm, ssize, pk);
    if (bit / 8 < ssize - RDT_CHECKSUM_BYTES) {
      unsigned char saved[RDT_CHECKSUM_BYTES];
      memcpy(saved, sm + ssize - RDT_CHECKSUM_BYTES, sizeof saved);
      crypto_generichash(sm + ssize - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, sm, ssize - RDT_CHECKSUM_BYTES, NULL, 0);
      all_fail_rechecked &= !rdt_model_verify(sm, ssize, pk);
      memcpy(sm + ssize - RDT_CHECKSUM_BYTES, saved, sizeof saved);
    }
    sm[bit / 8] ^= (unsigned char)(1u << (bit % 8));
  }
  check(all_fail, "sign: every single-bit flip of a signed model fails verification");
  check(all_fail_rechecked, "sign: ... also with the checksum recomputed after the flip");
  check(sm && rdt_model_verify(sm, ssize, pk), "sign: the restored model verifies again");
  /* Its export imports to itself; edited where the BLOB holds it (a
  ** class), it is another model whose signature fails: refused
  ** (forest_json.h contract 5). */
  rdt_bytes out = {0};
  ok = sm && rdt_model_decode(sm, ssize, &f, err, sizeof err);
  if (ok) {
    rdt_forest_json_export(&f, &out);
    rdt_bytes_put(&out, "", 1);
    rdt_forest_free(&f);
  }
  const char *text = ok && !out.oom ? (const char *)out.p : NULL;
  size_t n4 = 0;
  unsigned char *back = text ? import_text(text, &n4, err, sizeof err) : NULL;
  check(back && n4 == ssize && memcmp(back, sm, ssize) == 0 && rdt_model_verify(back, n4, pk),
        "sign: a signed model's export imports to the same BLOB, which verifies");
  free(back);
  check(text && !imports_edited(text, "\"classes\":[\"no\",\"yes\"]", "\"classes\":[\"yes\",\"no\"]", err, sizeof err) &&
            strcmp(err, RDT_EXPORT_UNSIGNED_EDIT) == 0,
        "sign: a signed export whose classes were swapped is refused (its signature fails)");
  check(text && imports_edited(text, "\"epsilon\":1.0", "\"epsilon\":1", err, sizeof err),
        "sign: ... while the same export respelled imports");
  rdt_bytes_free(&out);
  free(sm);
  free(blob);
}

/* ---- tree selection ("keep_trees") -------------------------------------- */

/* The definition in tree_selection.h, literally: remove one row, re-take the
** argmax (lowest index on ties). */
static double loo_brute(const int64_t *counts, uint32_t leaves, uint32_t C) {
  double right = 0, total = 0;
  for (uint32_t l = 0; l < leaves; l++) {
    int64_t n[8];
    for (uint32_t c = 0; c < C; c++) n[c] = counts[l * C + c] > 0 ? counts[l * C + c] : 0;
    for (uint32_t c = 0; c < C; c++) total += (double)n[c];
    for (uint32_t c = 0; c < C; c++) {
      if (n[c] <= 0) continue;
      n[c]--;
      uint32_t top = 0;
      for (uint32_t k = 1; k < C; k++) if (n[k] > n[top]) top = k;
      n[c]++;
      if (top == c) right += (double)n[c];
    }
  }
  return total > 0 ? right / total : 0;
}

static void test_tree_selection(void) {
  rdt_rng rng;
  seeded(&rng, "tree-selection");
  int same = 1;
  for (int trial = 0; trial < 2000; trial++) {
    uint32_t C = 1 + (uint32_t)(rdt_rng_below(&rng, 4)), leaves = 1 + (uint32_t)rdt_rng_below(&rng, 6);
    int64_t counts[6 * 4];
    /* small values so that ties and leads of one are common; some negative */
    for (uint32_t i = 0; i < leaves * C; i++) counts[i] = (int64_t)rdt_rng_below(&rng, 7) - 2;
    same &= rdt_tree_loo_accuracy(counts, leaves, C) == loo_brute(counts, leaves, C);
  }
  check(same, "tree selection: leave-one-out accuracy equals removing each row and re-voting (2000 random trees)");
  int64_t tie[3] = {3, 3, 0}, lead1[3] = {0, 4, 3}, lower[3] = {3, 4, 0}, empty[2] = {-3, 0};
  check(rdt_tree_loo_accuracy(tie, 1, 3) == 0 && rdt_tree_loo_accuracy(lead1, 1, 3) == 4.0 / 7 &&
            rdt_tree_loo_accuracy(lower, 1, 3) == 0 && rdt_tree_loo_accuracy(empty, 1, 2) == 0,
        "tree selection: a tie scores nothing; a lead of one scores only when no lower class catches up; "
        "an empty tree scores 0");
  check(rdt_keep_count(10, 0.25) == 3 && rdt_keep_count(8, 0.01) == 1 && rdt_keep_count(4, 1) == 4 &&
            rdt_keep_count(128, 0.25) == 32,
        "tree selection: kept trees = max(1, round(share x trees))");

  rdt_forest f;
  int ok = make_forest(&f, "{\"epsilon\":null,\"depth\":2,\"trees\":6,\"seed\":1,\"vote\":\"weight\",\"classes\":[0,1,2],"
                           "\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}");
  check(ok, "tree selection: test forest builds");
  if (!ok) return;
  int picked = 1;
  for (int trial = 0; trial < 200; trial++) {
    for (uint32_t i = 0; i < 6 * 4 * 3; i++) f.counts[i] = (int64_t)rdt_rng_below(&rng, 9) - 1;
    uint32_t keep = 1 + (uint32_t)rdt_rng_below(&rng, 6);
    uint8_t kept[6];
    double score[6];
    if (!rdt_select_trees(&f, f.counts, keep, kept)) { picked = 0; break; }
    uint32_t n = 0;
    for (uint32_t t = 0; t < 6; t++) { score[t] = loo_brute(f.counts + t * 12, 4, 3); n += kept[t]; }
    picked &= n == keep;
    /* every kept tree beats (or ties from a lower index) every dropped one */
    for (uint32_t a = 0; a < 6; a++)
      for (uint32_t b = 0; b < 6; b++)
        if (kept[a] && !kept[b]) picked &= score[a] > score[b] || (score[a] == score[b] && a < b);
  }
  check(picked, "tree selection: the kept trees are the best by score, ties to the lower index (200 draws)");

  /* Only the kept trees vote: tree 3 is pure class 2, the others lean to
  ** class 0 (5 against 4) and outvote it when all trees vote. */
  for (uint32_t i = 0; i < 6 * 4 * 3; i++) f.counts[i] = i % 3 == 0 ? 5 : i % 3 == 1 ? 4 : 0;
  for (uint32_t l = 12; l < 16; l++) { f.counts[l * 3] = 0; f.counts[l * 3 + 1] = 0; f.counts[l * 3 + 2] = 9; }
  double all_proba[6], x0 = 0.3;
  uint32_t all_vote = rdt_forest_prepare(&f) ? rdt_forest_predict(&f, &x0, all_proba, NULL) : 99;
  f.config.keep_trees = 1.0 / 6;
  ok = rdt_forest_select_trees(&f) && rdt_forest_prepare(&f);
  double proba[6], x = 0.3;
  uint32_t one = ok ? rdt_forest_predict(&f, &x, proba, NULL) : 99;
  check(ok && all_vote == 0 && f.n_kept == 1 && f.tree_kept[3] == 1 && one == 2 && proba[2] == 1.0,
        "tree selection: a pure tree beats the others; only the kept tree's leaves vote");
  /* Round trip through the model format. */
  size_t size = 0;
  unsigned char *blob = ok ? rdt_model_encode(&f, &size) : NULL;
  rdt_forest back;
  char err[256];
  int same_kept = blob && rdt_model_decode(blob, size, &back, err, sizeof err);
  if (same_kept) {
    same_kept = back.tree_kept && back.n_kept == f.n_kept && back.config.keep_trees == f.config.keep_trees &&
                memcmp(back.tree_kept, f.tree_kept, 6) == 0;
    rdt_forest_free(&back);
  }
  check(same_kept, "tree selection: the voting trees survive encode/decode");
  free(blob);
  rdt_forest_free(&f);
}

/* ---- train worker --------------------------------------------------------- */

/* The worker (a second thread) must count exactly the rows the forest counts
** itself: several full buffers, a partial last one, and an empty hand-over. */
static void test_train_worker(void) {
  const char *opts = "{\"epsilon\":null,\"depth\":8,\"trees\":6,\"seed\":4,\"classes\":[0,1,2],\"features\":"
                     "[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1},"
                     "{\"name\":\"y\",\"type\":\"numeric\",\"min\":-1,\"max\":1},"
                     "{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\",\"c\"]}]}";
  rdt_forest direct, threaded;
  int ok = make_forest(&direct, opts);
  ok = make_forest(&threaded, opts) && ok;
  check(ok, "train worker: two identical forests");
  if (!ok) return;
  rdt_train_worker *w = rdt_train_worker_start(&threaded);
  check(w != NULL, "train worker: starts");
  if (!w) return;
  uint32_t cap = rdt_train_worker_capacity(w), n_rows = 5 * cap / 2 + 17, filled = 0;
  check(cap >= RDT_TRAIN_CHUNK && cap % RDT_TRAIN_CHUNK == 0, "train worker: buffer is whole walk chunks");
  rdt_rng rng;
  seeded(&rng, "train-worker");
  for (uint32_t i = 0; i < n_rows; i++) {
    double x[3] = {rdt_rng_unit(&rng), 2 * rdt_rng_unit(&rng) - 1, (double)rdt_rng_below(&rng, 4)};
    uint32_t cls = rdt_rng_below(&rng, 3);
    rdt_forest_train_batch(&direct, x, &cls, 1);
    memcpy(rdt_train_worker_rows(w) + (size_t)filled * 3, x, sizeof x);
    rdt_train_worker_classes(w)[filled++] = cls;
    if (filled == cap) {
      rdt_train_worker_submit(w, filled);
      filled = 0;
    }
  }
  rdt_train_worker_submit(w, filled);
  rdt_train_worker_submit(w, 0);
  rdt_train_worker_free(w);
  rdt_train_worker_free(NULL);
  rdt_rng_clear(&rng);
  size_t n = (size_t)direct.config.trees * direct.n_leaves * rdt_forest_slots(&direct);
  int64_t total = 0;
  for (size_t i = 0; i < (size_t)direct.n_leaves * rdt_forest_slots(&direct); i++) total += threaded.counts[i];
  check(memcmp(direct.counts, threaded.counts, n * sizeof *direct.counts) == 0 && total == (int64_t)n_rows,
        "train worker: the same counters as counting in the caller, every row once");
  rdt_forest_free(&direct);
  rdt_forest_free(&threaded);
}


/* ---- privacy unit and private bounds (unit.h, bounds.h) ----------------- */

#define UNIT_FEATURES                                                                                               \
  "\"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1},"          \
  " {\"name\": \"y\", \"type\": \"numeric\", \"bounds\": \"private\"}, {\"name\": \"z\", \"type\": \"numeric\","  \
  " \"bounds\": \"private\"}]"

/* The position of the first section with tag `tag` in a model, or 0. */
static size_t section_at(const unsigned char *b, size_t n, const char *tag) {
  for (size_t at = RDT_HEADER_BYTES; at + 16 <= n; at++)
    if (memcmp(b + at, tag, 4) == 0) return at;
  return 0;
}

static void test_unit(void) {
  rdt_schema s;
  rdt_config c;
  char err[512];
  /* Options: the whole eps is divided (unit.h, contract 5). */
  const char *opts = "{\"epsilon\": 1, \"privacy_unit\": \"patient\", \"max_rows_per_unit\": 3, \"seed\": 1, "
                     UNIT_FEATURES "}";
  int ok = rdt_options_parse(opts, strlen(opts), &s, &c, err, sizeof err);
  const rdt_unit *u = &c.unit;
  uint64_t one = (uint64_t)1 << 32;
  check(ok && strcmp(u->column, "patient") == 0 && u->max_rows == 3 && u->n_private == 2 &&
            rdt_unit_is_private(u, 1) && rdt_unit_is_private(u, 2) && !rdt_unit_is_private(u, 0) &&
            u->eps_total.num == one && u->eps_quantile.num == (uint64_t)floor(one * 0.1) / 12 &&
            u->eps_bounds.num == u->eps_quantile.num * 12 && c.eps.num == (one - u->eps_bounds.num) / 3,
        "unit: options divide eps: 2m quantiles of share/(2mk) each, the model (eps - bounds)/k per row");
  check(ok && rdt_unit_check(u, c.eps, &s) && s.features[1].min == 0 && s.features[1].max == 1,
        "unit: the division passes the decoder's check; private bounds hold placeholders until estimated");
  if (ok) {
    rdt_unit t = *u;
    t.eps_bounds.num++;
    int r1 = rdt_unit_check(&t, c.eps, &s);
    t = *u;
    t.max_rows = 2;
    int r2 = rdt_unit_check(&t, c.eps, &s);
    t = *u;
    t.private_bounds[0] = 1; /* a third private feature: m disagrees */
    int r3 = rdt_unit_check(&t, c.eps, &s);
    rdt_eps more = {c.eps.num + 1};
    int r4 = rdt_unit_check(u, more, &s);
    check(!r1 && !r2 && !r3 && !r4, "unit: the check refuses budgets, caps, features or a per-row eps that disagree");
    rdt_schema_free(&s);
  }
  ok = rdt_options_parse("{\"epsilon\": 2, \"privacy_unit\": \"p\", \"max_rows_per_unit\": 4, \"classes\": [0], "
                         "\"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}",
                         strlen("{\"epsilon\": 2, \"privacy_unit\": \"p\", \"max_rows_per_unit\": 4, \"classes\": [0], "
                                "\"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}"),
                         &s, &c, err, sizeof err);
  check(ok && c.eps.num == one / 2 && c.unit.eps_total.num == 2 * one && c.unit.eps_bounds.num == 0,
        "unit: without private bounds the model gets eps/k per row");
  if (ok) rdt_schema_free(&s);
  ok = rdt_options_parse(OPTS, strlen(OPTS), &s, &c, err, sizeof err);
  check(ok && !rdt_unit_active(&c.unit) && c.unit.max_rows == 1 && c.eps.num == one,
        "unit: by default the unit is a row and eps is untouched");
  if (ok) rdt_schema_free(&s);
#define F1 "\"classes\": [0], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]"
  check(opts_error("{\"epsilon\": 1, \"privacy_unit\": \"p\", " F1 "}", "needs \"max_rows_per_unit\"") &&
            opts_error("{\"epsilon\": 1, \"max_rows_per_unit\": 2, " F1 "}", "applies with \"privacy_unit\" only") &&
            opts_error("{\"epsilon\": 1, \"privacy_unit\": \"p\", \"max_rows_per_unit\": 0, " F1 "}", "from 1 to 100000") &&
            opts_error("{\"epsilon\": 1, \"privacy_unit\": \"\", \"max_rows_per_unit\": 1, " F1 "}", "a non-empty string") &&
            opts_error("{\"epsilon\": 1, \"privacy_unit\": \"X\", \"max_rows_per_unit\": 1, " F1 "}", "names the feature") &&
            opts_error("{\"epsilon\": 1, \"privacy_unit\": \"Label\", \"max_rows_per_unit\": 1, " F1 "}", "names the label") &&
            opts_error("{\"epsilon\": null, \"privacy_unit\": \"p\", \"max_rows_per_unit\": 1, " F1 "}", "needs a private model") &&
            opts_error("{\"epsilon\": 1e-6, \"privacy_unit\": \"p\", \"max_rows_per_unit\": 100000, " F1 "}", "too small") &&
            opts_error("{\"epsilon\": 1, \"bounds_share\": 0.2, " F1 "}", "only when a feature has"),
        "unit: option mistakes are named (cap missing, misplaced or out of range, unit is the label or a feature, "
        "non-private, eps too small, a share without private bounds)");
  check(opts_error("{\"epsilon\": 1, \"classes\": [0], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"bounds\": "
                   "\"public\"}]}", "must be \"private\"") &&
            opts_error("{\"epsilon\": 1, \"classes\": [0], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"bounds\": "
                       "\"private\", \"min\": 0}]}", "not both") &&
            opts_error("{\"epsilon\": 1, \"classes\": [0], \"features\": [{\"name\": \"x\", \"type\": \"categorical\", "
                       "\"values\": [1], \"bounds\": \"private\"}]}", "numeric features only") &&
            opts_error("{\"epsilon\": null, \"classes\": [0], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", "
                       "\"bounds\": \"private\"}]}", "needs a private model") &&
            opts_error("{\"epsilon\": 1, \"bounds_share\": 0.95, \"classes\": [0], \"features\": [{\"name\": \"x\", "
                       "\"type\": \"numeric\", \"bounds\": \"private\"}]}", "from 0.01 to 0.9"),
        "unit: \"bounds\" mistakes are named (not \"private\", with min, categorical, non-private, share out of range)");
#undef F1

  /* Selection sampling: exactly min(n, k) kept per unit, every subset equally likely. */
  rdt_unit_bound b;
  rdt_rng rng;
  seeded(&rng, "unit-bound");
  unsigned char key[RDT_RNG_KEYBYTES];
  rdt_rng_bytes(&rng, key, sizeof key);
  rdt_unit_bound_init(&b, 2, key, "test");
  long pairs[5][5] = {{0}};
  int exact = 1, draws = 50000;
  for (int i = 0; i < draws; i++) {
    int kept[5], n = 0;
    for (int pos = 1; pos <= 5; pos++)
      if (rdt_unit_bound_row(&b, (uint64_t)pos, 5) == 1) kept[n++] = pos - 1;
    exact &= n == 2;
    if (n == 2) pairs[kept[0]][kept[1]]++;
    int small = 0; /* a unit below the cap keeps every row */
    for (int pos = 1; pos <= 2; pos++) small += rdt_unit_bound_row(&b, (uint64_t)pos, 2);
    exact &= small == 2;
  }
  double chi = 0, e = draws / 10.0;
  for (int x = 0; x < 5; x++)
    for (int y = x + 1; y < 5; y++) chi += (pairs[x][y] - e) * (pairs[x][y] - e) / e;
  check(exact, "unit: every unit keeps exactly min(n, k) rows");
  check(chi < 27.88, "unit: the kept pair of a 5-row unit is uniform over the 10 pairs (chi2, 9 dof, p = 0.001)");
  rdt_unit_bound_clear(&b);
  rdt_unit_bound_init(&b, 2, key, "test");
  int r1 = rdt_unit_bound_row(&b, 2, 3); /* a unit must start at position 1 */
  rdt_unit_bound_clear(&b);
  rdt_unit_bound_init(&b, 2, key, "test");
  rdt_unit_bound_row(&b, 1, 3);
  int r2 = rdt_unit_bound_row(&b, 3, 3); /* a position skipped */
  rdt_unit_bound_clear(&b);
  rdt_unit_bound_init(&b, 2, key, "test");
  rdt_unit_bound_row(&b, 1, 3);
  int r3 = rdt_unit_bound_row(&b, 2, 4); /* the count changed inside a unit */
  rdt_unit_bound_clear(&b);
  rdt_unit_bound_init(&b, 2, key, "test");
  rdt_unit_bound_row(&b, 1, 2);
  int r4 = rdt_unit_bound_row(&b, 1, 2); /* a new unit before the last ended */
  int r5 = rdt_unit_bound_row(&b, 1, 0);
  rdt_unit_bound_clear(&b);
  check(r1 < 0 && r2 < 0 && r3 < 0 && r4 < 0 && r5 < 0,
        "unit: rows not grouped as promised (a unit not starting at 1, a skip, a changing count, a cut-short unit) "
        "fail closed");

  /* The grid of private bounds. */
  int inverse = 1, monotone = 1;
  double prev = -INFINITY;
  for (int i = -2000; i <= 2000; i++) {
    double x = i == 0 ? 0 : (i < 0 ? -1 : 1) * ldexp(1 + (abs(i) % 7) / 8.0, abs(i) / 30 - 22);
    double t = rdt_bounds_to_grid(x);
    inverse &= rdt_bounds_from_grid(t) == x || fabs(x) >= ldexp(1, RDT_BOUNDS_E1);
  }
  for (double t = -RDT_BOUNDS_G; t <= RDT_BOUNDS_G; t += 1.0 / 64) {
    double x = rdt_bounds_from_grid(t);
    monotone &= x > prev && rdt_bounds_to_grid(x) == t;
    prev = x;
  }
  check(inverse && monotone, "bounds: the grid map is exact both ways and strictly increasing");
  check(rdt_bounds_to_grid(INFINITY) == RDT_BOUNDS_G && rdt_bounds_to_grid(-1e300) == -RDT_BOUNDS_G &&
            rdt_bounds_to_grid(0) == 0,
        "bounds: infinities and huge values clamp to the grid's ends");
  rdt_median h;
  ok = rdt_bounds_init(&h);
  for (int i = 0; ok && i < 20000; i++) rdt_bounds_add(&h, 1000 + (i % 1000) * 0.1); /* 1000 .. 1099.9 */
  rdt_eps eq;
  rdt_eps_from_double(0.5, &eq);
  double lo = 0, hi = 0;
  int good = ok;
  for (int i = 0; good && i < 20; i++) {
    good = rdt_bounds_release(&h, &rng, eq, &lo, &hi);
    /* quartiles 1025 and 1075 within a cell (32 per binade: 16 wide here), fences 1.5 IQR */
    good = good && lo < 1000 && lo > 900 && hi > 1100 && hi < 1200;
  }
  check(good, "bounds: 20,000 values in [1000, 1100) at eps 0.5 give fences around the data");
  rdt_median_free(&h);
  ok = rdt_bounds_init(&h);
  int empty_ok = ok;
  for (int i = 0; empty_ok && i < 200; i++)
    empty_ok = rdt_bounds_release(&h, &rng, eq, &lo, &hi) && isfinite(lo) && isfinite(hi) && lo < hi;
  check(empty_ok, "bounds: on an empty input the rule still gives finite min < max (200 draws)");
  rdt_median_free(&h);

  /* The UNIT section: written only with unit facts, decoded, refused when edited. */
  rdt_forest f;
  ok = make_forest(&f, opts);
  size_t size = 0;
  unsigned char *blob = ok ? rdt_model_encode(&f, &size) : NULL;
  rdt_forest g;
  ok = blob && rdt_model_decode(blob, size, &g, err, sizeof err);
  check(ok && strcmp(g.config.unit.column, "patient") == 0 && g.config.unit.max_rows == 3 &&
            g.config.unit.eps_total.num == one && g.config.unit.n_private == 2,
        "unit: the model carries the unit, its cap and the division of eps");
  if (ok) {
    size_t size2;
    unsigned char *again = rdt_model_encode(&g, &size2);
    check(again && size2 == size && memcmp(again, blob, size) == 0, "unit: decode then encode gives the same bytes");
    free(again);
    rdt_forest_free(&g);
  }
  size_t at = blob ? section_at(blob, size, "UNIT") : 0;
  if (at) { /* hostile but re-checksummed bytes in and around UNIT: refused or decoded, never a crash */
    unsigned char *m = malloc(size);
    int survived = 0;
    for (int i = 0; m && i < 2000; i++) {
      memcpy(m, blob, size);
      size_t where = at + rdt_rng_below(&rng, 16 + 8 * 3 + 4 + 4 + 7 + 4 + 8 + 8);
      m[where] = (unsigned char)rdt_rng_u64(&rng);
      crypto_generichash(m + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, m, size - RDT_CHECKSUM_BYTES, NULL, 0);
      if (rdt_model_decode(m, size, &g, err, sizeof err)) {
        survived += rdt_unit_check(&g.config.unit, g.config.eps, &g.schema);
        rdt_forest_free(&g);
      } else {
        survived++;
      }
    }
    check(m && survived == 2000, "unit: 2000 re-checksummed edits of the UNIT section are refused or decode consistent");
    free(m);
  }
  if (at) {
    blob[at + 16 + 3]++; /* eps_total, re-checksummed: the budgets no longer add up */
    crypto_generichash(blob + size - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, blob, size - RDT_CHECKSUM_BYTES, NULL, 0);
    ok = rdt_model_decode(blob, size, &g, err, sizeof err);
    if (ok) rdt_forest_free(&g);
    check(!ok && strstr(err, "privacy unit"), "unit: an edited UNIT section is refused even when re-checksummed");
  } else {
    check(0, "unit: an edited UNIT section is refused even when re-checksummed");
  }
  free(blob);
  rdt_forest_free(&f);
  ok = make_forest(&f, OPTS);
  blob = ok ? rdt_model_encode(&f, &size) : NULL;
  check(blob && !section_at(blob, size, "UNIT"), "unit: a model without unit facts has no UNIT section");
  free(blob);
  rdt_forest_free(&f);
  rdt_rng_clear(&rng);
}

/* ---- shard mode: what may be added, the partial BLOB, the plan ---------- */


static void test_shard(void) {
  /* forest.h item 5: merge compares the digest of what the counters mean,
  ** not the model id, which one seed gives to trees that differ. */
  static const char *pairs[][2] = {
      {"{\"epsilon\":1,\"trees\":3,\"depth\":4,\"seed\":3,\"splits\":\"reachable\",\"classes\":[0,1],\"features\":"
       "[{\"name\":\"age\",\"type\":\"numeric\",\"min\":0,\"max\":90}]}",
       "{\"epsilon\":1,\"trees\":3,\"depth\":4,\"seed\":3,\"splits\":\"global\",\"classes\":[0,1],\"features\":"
       "[{\"name\":\"age\",\"type\":\"numeric\",\"min\":0,\"max\":90}]}"},
      {"{\"epsilon\":1,\"trees\":3,\"depth\":4,\"seed\":3,\"classes\":[0,1],\"features\":"
       "[{\"name\":\"age\",\"type\":\"numeric\",\"min\":0,\"max\":90},{\"name\":\"b\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}",
       "{\"epsilon\":1,\"trees\":3,\"depth\":4,\"seed\":3,\"classes\":[0,1],\"features\":"
       "[{\"name\":\"age\",\"type\":\"numeric\",\"min\":0,\"max\":200},{\"name\":\"b\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}"},
      {"{\"epsilon\":1,\"trees\":3,\"depth\":4,\"seed\":3,\"categorical\":\"subset\",\"classes\":[0,1],\"features\":"
       "[{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\",\"c\",\"d\"]}]}",
       "{\"epsilon\":1,\"trees\":3,\"depth\":4,\"seed\":3,\"categorical\":\"one_vs_rest\",\"classes\":[0,1],\"features\":"
       "[{\"name\":\"c\",\"type\":\"categorical\",\"values\":[\"a\",\"b\",\"c\",\"d\"]}]}"},
  };
  static const char *what[] = {"splits reachable vs global", "age max 90 vs 200", "categorical subset vs one_vs_rest"};
  for (int i = 0; i < 3; i++) {
    rdt_forest a, b;
    int built = make_forest(&a, pairs[i][0]) & make_forest(&b, pairs[i][1]);
    char name[200];
    snprintf(name, sizeof name, "forest: one seed, %s: same model id, but merge refuses (digests differ)", what[i]);
    check(built && memcmp(a.model_id, b.model_id, 16) == 0 && !rdt_forest_merge(&a, &b), name);
    rdt_forest_free(&a);
    rdt_forest_free(&b);
  }

  /* "structure_key": the structure comes from it, whatever the seed; the
  ** noise does not (two seeds, one key: same trees and digest). */
  const char *k1 = "{\"epsilon\":1,\"trees\":3,\"depth\":5,\"seed\":1,\"structure_key\":"
                   "\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\",\"classes\":[0,1],"
                   "\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}";
  const char *k2 = "{\"epsilon\":1,\"trees\":3,\"depth\":5,\"structure_key\":"
                   "\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\",\"classes\":[0,1],"
                   "\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}";
  const char *k3 = "{\"epsilon\":1,\"trees\":3,\"depth\":5,\"seed\":1,\"classes\":[0,1],"
                   "\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}";
  rdt_forest a, b, c;
  int built = make_forest(&a, k1) & make_forest(&b, k2) & make_forest(&c, k3);
  unsigned char da[32], db[32], dc[32];
  if (built) {
    rdt_forest_digest(&a, da);
    rdt_forest_digest(&b, db);
    rdt_forest_digest(&c, dc);
  }
  check(built && memcmp(a.nodes, b.nodes, (size_t)a.config.trees * a.n_internal * sizeof *a.nodes) == 0 &&
            memcmp(da, db, 32) == 0 && memcmp(da, dc, 32) != 0,
        "forest: \"structure_key\" fixes the structure with or without a seed; the seed alone draws another");
  double x = 0.3;
  for (int i = 0; built && i < 5; i++) rdt_forest_train_row(&a, &x, 1);
  for (int i = 0; built && i < 3; i++) rdt_forest_train_row(&b, &x, 0);
  check(built && rdt_forest_merge(&a, &b) && a.counts[rdt_forest_leaf(&a, 0, &x) * 2 + 1] == 5 &&
            a.counts[rdt_forest_leaf(&a, 0, &x) * 2] == 3,
        "forest: states of one structure key merge by adding their counters");
  rdt_forest_free(&a);
  rdt_forest_free(&b);
  rdt_forest_free(&c);
  rdt_schema sch;
  rdt_config cfg;
  char err[400];
  const char *bad = "{\"epsilon\":1,\"structure_key\":\"00ff\",\"classes\":[0,1],"
                    "\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}";
  check(!rdt_options_parse(bad, strlen(bad), &sch, &cfg, err, sizeof err) && strstr(err, "\"structure_key\" must be 64"),
        "options: a malformed \"structure_key\" is refused, naming it");

  /* Matrix forests: another strategy on the same seed is another state. */
  rdt_forest m1, m2;
  const char *mo = "{\"epsilon\":1,\"noise\":\"matrix\",\"trees\":4,\"seed\":2,\"strategy\":\"%s\",\"classes\":[0,1],"
                   "\"features\":[{\"name\":\"x\",\"type\":\"numeric\",\"min\":0,\"max\":1},"
                   "{\"name\":\"y\",\"type\":\"numeric\",\"min\":0,\"max\":1}]}";
  char o1[400], o2[400];
  snprintf(o1, sizeof o1, mo, "leaf");
  snprintf(o2, sizeof o2, mo, "identity");
  built = make_forest(&m1, o1) & make_forest(&m2, o2);
  check(built && !rdt_forest_merge(&m1, &m2), "matrix: one seed, leaf vs identity strategy: merge refuses");
  rdt_forest_free(&m1);
  rdt_forest_free(&m2);

  /* partial.h: the BLOB round-trips, and every byte matters. */
  int64_t c0[5] = {0, 1, -7, INT64_MAX, 3}, c1[2] = {4, 5};
  rdt_span spans[2] = {{c0, 5}, {c1, 2}};
  unsigned char plan_digest[32];
  for (int i = 0; i < 32; i++) plan_digest[i] = (unsigned char)i;
  rdt_partial p, q, r;
  int made = rdt_partial_from_spans(&p, plan_digest, 0, spans, 2, NULL, 0);
  size_t size = 0;
  unsigned char *blob = made ? rdt_partial_encode(&p, &size) : NULL;
  int ok = blob && rdt_partial_decode(blob, size, &q, err, sizeof err) && q.n == 7 && q.counters[3] == INT64_MAX &&
           q.counters[6] == 5 && q.n_ids == 1 && memcmp(q.ids, p.ids, 16) == 0;
  check(ok && size == 72 + 16 + 7 * 8 + 32, "partial: a state's BLOB decodes to the same counters, ids and plan");
  int refused = 1;
  for (size_t i = 0; blob && i < size; i++) {
    blob[i] ^= 0x01;
    rdt_partial t;
    if (rdt_partial_decode(blob, size, &t, err, sizeof err)) {
      refused = 0;
      rdt_partial_free(&t);
    }
    blob[i] ^= 0x01;
  }
  for (size_t n = 0; blob && n < size; n++) {
    rdt_partial t;
    if (rdt_partial_decode(blob, n, &t, err, sizeof err)) {
      refused = 0;
      rdt_partial_free(&t);
    }
  }
  check(blob && refused, "partial: every flipped bit and every truncation is refused (checksum, lengths)");
  /* contract 5: the same partial twice, another plan, round or length */
  check(ok && !rdt_partial_merge(&q, &p, err, sizeof err) && strstr(err, "summed twice"),
        "partial: the same partial summed twice is refused (its rows would count twice)");
  int64_t one[7] = {1, 1, 1, 1, 1, 1, 1};
  rdt_span s1 = {one, 7};
  made = rdt_partial_from_spans(&r, plan_digest, 0, &s1, 1, NULL, 0);
  check(made && !rdt_partial_merge(&q, &r, err, sizeof err) && strstr(err, "overflows"),
        "partial: a sum that overflows int64 is refused, not wrapped");
  one[3] = -1;
  rdt_partial_free(&r);
  made = rdt_partial_from_spans(&r, plan_digest, 0, &s1, 1, NULL, 0);
  int merged = made && rdt_partial_merge(&q, &r, err, sizeof err);
  check(merged && q.n_ids == 2 && q.counters[3] == INT64_MAX - 1 && q.counters[2] == -6 &&
            memcmp(q.ids, q.ids + 16, 16) < 0,
        "partial: two partials of one plan sum counter by counter, their ids kept in order");
  rdt_partial other;
  plan_digest[0] ^= 1;
  made = rdt_partial_from_spans(&other, plan_digest, 0, &s1, 1, NULL, 0);
  check(made && !rdt_partial_merge(&q, &other, err, sizeof err) && strstr(err, "different plans"),
        "partial: a partial of another plan is refused");
  rdt_partial_free(&other);
  plan_digest[0] ^= 1;
  made = rdt_partial_from_spans(&other, plan_digest, 1, &s1, 1, NULL, 0);
  check(made && !rdt_partial_merge(&q, &other, err, sizeof err) && strstr(err, "different rounds"),
        "partial: a partial of another round is refused");
  rdt_partial_free(&other);
  made = rdt_partial_from_spans(&other, plan_digest, 0, spans + 1, 1, NULL, 0);
  check(made && !rdt_partial_merge(&q, &other, err, sizeof err) && strstr(err, "different lengths"),
        "partial: a partial of another length is refused");
  rdt_partial_free(&other);
  size_t size2 = 0;
  unsigned char *blob2 = merged ? rdt_partial_encode(&q, &size2) : NULL;
  if (blob2) { /* ids out of order, checksum recomputed */
    unsigned char tmp[16];
    memcpy(tmp, blob2 + 72, 16);
    memcpy(blob2 + 72, blob2 + 88, 16);
    memcpy(blob2 + 88, tmp, 16);
    crypto_generichash(blob2 + size2 - 32, 32, blob2, size2 - 32, NULL, 0);
  }
  rdt_partial t;
  check(blob2 && !rdt_partial_decode(blob2, size2, &t, err, sizeof err) && strstr(err, "not in order"),
        "partial: ids out of order are refused even with a recomputed checksum");
  int64_t big[1] = {INT64_MAX}, inc[1] = {1};
  rdt_span sb = {big, 1};
  check(!rdt_spans_add(&sb, 1, inc) && big[0] == INT64_MAX, "partial: adding into spans refuses an overflow");
  unsigned char model_like[80] = "RDTPART1";
  rdt_forest dummy;
  check(!rdt_model_decode(model_like, sizeof model_like, &dummy, err, sizeof err) &&
            strstr(err, "exact partial training state") && strstr(err, "never to be published"),
        "model: the decoder names a partial state as such, never as a model");
  free(blob);
  free(blob2);
  rdt_partial_free(&p);
  rdt_partial_free(&q);
  rdt_partial_free(&r);

  /* round.h: the message round-trips, and every byte matters. */
  unsigned char payload[5] = {1, 2, 3, 4, 5};
  size_t msize = 0;
  unsigned char *msg = rdt_round_encode(plan_digest, 3, 777, payload, sizeof payload, &msize);
  rdt_round_msg rm;
  ok = msg && rdt_round_decode(msg, msize, &rm, err, sizeof err) && rm.round == 3 && rm.noise_at == 777 &&
       rm.payload_len == 5 && memcmp(rm.payload, payload, 5) == 0 && memcmp(rm.plan, plan_digest, 32) == 0;
  check(ok && msize == 64 + 5 + 32, "round: a message decodes to its plan, round, noise position and payload");
  refused = 1;
  for (size_t i = 0; msg && i < msize; i++) {
    msg[i] ^= 0x01;
    refused &= !rdt_round_decode(msg, msize, &rm, err, sizeof err) && err[0];
    msg[i] ^= 0x01;
  }
  for (size_t n = 0; msg && n < msize; n++) refused &= !rdt_round_decode(msg, n, &rm, err, sizeof err);
  check(msg && refused, "round: every flipped bit and every truncation is refused (checksum, lengths)");
  unsigned char *zero = rdt_round_encode(plan_digest, 0, 0, NULL, 0, &msize);
  check(zero && !rdt_round_decode(zero, msize, &rm, err, sizeof err) && strstr(err, "round 0"),
        "round: a message opening round 0 is refused (the first round has none)");
  free(zero);
  check(!rdt_model_decode(msg, 80, &dummy, err, sizeof err) && strstr(err, "round message of shard mode"),
        "model: the decoder names a round message as such, never as a model");
  /* partial.h: a partial carries the message it answers; another message does not add */
  rdt_partial pm1, pm2, pm3;
  int64_t cm[2] = {1, 2};
  rdt_span sm = {cm, 2};
  ok = rdt_partial_from_spans(&pm1, plan_digest, 3, &sm, 1, msg, 64 + 5 + 32) &&
       rdt_partial_from_spans(&pm2, plan_digest, 3, &sm, 1, msg, 64 + 5 + 32);
  size_t psize = 0;
  unsigned char *pblob = ok ? rdt_partial_encode(&pm1, &psize) : NULL;
  ok = pblob && rdt_partial_decode(pblob, psize, &pm3, err, sizeof err) && pm3.message_len == 101 &&
       memcmp(pm3.message, msg, 101) == 0 && psize == 72 + 16 + 101 + 16 + 32;
  check(ok, "partial: the round message it answers round-trips with it");
  check(ok && rdt_partial_merge(&pm1, &pm2, err, sizeof err) && pm1.counters[1] == 4,
        "partial: two partials answering one message add");
  if (ok) pm3.message[70] ^= 1;
  check(ok && !rdt_partial_merge(&pm1, &pm3, err, sizeof err) && strstr(err, "different round messages"),
        "partial: partials answering different messages of one round are refused");
  free(pblob);
  free(msg);
  rdt_partial_free(&pm1);
  rdt_partial_free(&pm2);
  rdt_partial_free(&pm3);

  /* plan.h: canonical options, the digest, edits refused. */
  const char *user = "{\"_why\": \"test\", \"epsilon\": 1, \"ledger\": \"budget\", \"note\": \"n\", \"trees\": 2, "
                     "\"eps_like\": 0.1, \"classes\": [0, 1], \"structure_key\": \"ab\"}";
  unsigned char key[32];
  memset(key, 0xab, sizeof key);
  rdt_bytes canon;
  ok = rdt_plan_canonical_options(user, strlen(user), key, &canon, err, sizeof err);
  const char *want = "{\"epsilon\":1,\"trees\":2,\"eps_like\":0.1,\"classes\":[0,1],\"structure_key\":\""
                     "abababababababababababababababababababababababababababababababab\"}";
  check(ok && canon.n == strlen(want) && memcmp(canon.p, want, canon.n) == 0,
        "plan: canonical options drop ledger, note, comments and any structure_key, then add the plan's key");
  rdt_plan pl, back;
  memset(&pl, 0, sizeof pl);
  snprintf(pl.version, sizeof pl.version, "%s", RDT_VERSION_STRING);
  snprintf(pl.learner, sizeof pl.learner, "rdt");
  pl.rounds = 1;
  pl.options = ok ? (char *)canon.p : NULL;
  pl.options_len = canon.n;
  pl.counters = 42;
  memset(pl.state_digest, 7, 32);
  snprintf(pl.ledger, sizeof pl.ledger, "budget");
  pl.charge = 12;
  rdt_plan_seal(&pl);
  rdt_bytes text = {0};
  rdt_plan_write(&pl, &text);
  rdt_json_put_char(&text, 0);
  ok = ok && !text.oom && rdt_plan_read((const char *)text.p, text.n - 1, &back, err, sizeof err);
  check(ok && back.counters == 42 && back.charge == 12 && !strcmp(back.ledger, "budget") &&
            memcmp(back.digest, pl.digest, 32) == 0 && back.options_len == canon.n,
        "plan: written and read back, digest and fields intact");
  if (ok) rdt_plan_free(&back);
  struct {
    const char *from, *to, *what;
  } edits[] = {
      {"\"epsilon\":1,", "\"epsilon\":2,", "an option edited"},
      {"\"counters\":42", "\"counters\":43", "the state's length edited"},
      {"\"ledger\":\"budget\",\"charge\":12", "\"ledger\":null,\"charge\":null", "the ledger dropped"},
      {"\"learner\":\"rdt\"", "\"learner\":\"auto\"", "the learner edited"},
  };
  for (size_t e = 0; ok && e < sizeof edits / sizeof edits[0]; e++) {
    char *doc = strdup((const char *)text.p), *at = doc ? strstr(doc, edits[e].from) : NULL;
    char name[160];
    int refused_edit = 0;
    if (at) {
      size_t lf = strlen(edits[e].from), lt = strlen(edits[e].to);
      char *copy = malloc(strlen(doc) + lt + 1);
      if (copy) {
        memcpy(copy, doc, (size_t)(at - doc));
        memcpy(copy + (at - doc), edits[e].to, lt);
        strcpy(copy + (at - doc) + lt, at + lf);
        refused_edit = !rdt_plan_read(copy, strlen(copy), &back, err, sizeof err) && strstr(err, "edited");
        free(copy);
      }
    }
    free(doc);
    snprintf(name, sizeof name, "plan: %s is refused (the digest no longer matches)", edits[e].what);
    check(refused_edit, name);
  }
  const char *odd[] = {"{}", "[]", "{\"rdt_plan\":1}", "not json",
                       "{\"rdt_plan\":1,\"rdt_version\":\"9.9.9\",\"mode\":\"shard\",\"learner\":\"rdt\",\"rounds\":1,"
                       "\"options\":{},\"counters\":1,\"state_digest\":\"00\",\"ledger\":null,\"charge\":null,"
                       "\"digest\":\"00\"}"};
  int all_refused = 1;
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    if (rdt_plan_read(odd[i], strlen(odd[i]), &back, err, sizeof err)) {
      all_refused = 0;
      rdt_plan_free(&back);
    }
  check(all_refused, "plan: documents rdt_plan could not have written are refused");
  rdt_bytes_free(&text);
  rdt_bytes_free(&canon);
}

/* ---- federated mode: masks, shares, the plan's roster -------------------- */

static void test_federated(void) {
  enum { SITES = 4, N = 1000 };
  unsigned char pk[SITES * 32], sk[SITES][32], ctx[32];
  static uint64_t v[SITES][N], m[SITES][N];
  memset(ctx, 9, sizeof ctx);
  rdt_rng r;
  seeded(&r, "federated vectors");
  for (int i = 0; i < SITES; i++) {
    rdt_mask_keypair(pk + 32 * i, sk[i]);
    for (int j = 0; j < N; j++) v[i][j] = m[i][j] = rdt_rng_below(&r, 1000);
  }
  rdt_rng_clear(&r);
  int ok = 1;
  for (int i = 0; i < SITES; i++) ok &= rdt_mask_apply(m[i], N, pk, SITES, (uint32_t)i, sk[i], ctx, 0);
  int cancel = ok, hidden = ok, partial_cancel = 1;
  for (int j = 0; j < N; j++) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (int i = 0; i < SITES; i++) {
      a += v[i][j];
      b += m[i][j];
      if (i) {
        c += v[i][j];
        d += m[i][j];
      }
    }
    cancel &= a == b;
    hidden &= m[0][j] != v[0][j] && m[0][j] > 1000000;
    partial_cancel &= c != d;
  }
  check(cancel, "mask: the masks of all 4 sites cancel exactly in the sum (mod 2^64)");
  check(hidden, "mask: a masked vector shows none of its values (every masked value differs and is far from them)");
  check(partial_cancel, "mask: without one site's vector the others' masks do not cancel (a dropout leaves noise)");
  /* Fresh per plan and round: another context or round gives another mask. */
  uint64_t x[4] = {0, 0, 0, 0}, y[4] = {0, 0, 0, 0}, z[4] = {0, 0, 0, 0};
  unsigned char ctx2[32];
  memset(ctx2, 8, sizeof ctx2);
  ok = rdt_mask_apply(x, 4, pk, SITES, 1, sk[1], ctx, 0) && rdt_mask_apply(y, 4, pk, SITES, 1, sk[1], ctx2, 0) &&
       rdt_mask_apply(z, 4, pk, SITES, 1, sk[1], ctx, 1);
  check(ok && memcmp(x, y, sizeof x) != 0 && memcmp(x, z, sizeof x) != 0,
        "mask: another plan digest or round gives another mask (never reused)");
  /* Contract 6: refusals leave the vector unchanged. */
  uint64_t w[4] = {1, 2, 3, 4};
  unsigned char dup[3 * 32], low[2 * 32];
  memcpy(dup, pk, 64);
  memcpy(dup + 64, pk, 32);
  memcpy(low, pk, 32);
  memset(low + 32, 0, 32); /* the all-zero point: low order */
  int refused = !rdt_mask_apply(w, 4, pk, SITES, 1, sk[0], ctx, 0) && !rdt_mask_apply(w, 4, dup, 3, 1, sk[1], ctx, 0) &&
                !rdt_mask_apply(w, 4, low, 2, 0, sk[0], ctx, 0) && !rdt_mask_apply(w, 4, pk, 1, 0, sk[0], ctx, 0);
  check(refused && w[0] == 1 && w[3] == 4,
        "mask: another site's secret key, a repeated roster key, a low-order key, one site: refused, vector unchanged");
  /* share.h: blocks cover the counters; s = 0 counters are sent as 0; the shares sum to counters + noise. */
  int64_t counts[SITES][6];
  uint64_t sh[SITES][6];
  rdt_noise_block blocks[2] = {{2, 0, 0}, {4, 1, 1}}, wrong[1] = {{5, 1, 1}};
  rdt_rng noise;
  seeded(&noise, "federated noise");
  for (int i = 0; i < SITES; i++)
    for (int j = 0; j < 6; j++) counts[i][j] = 10 * i + j;
  ok = !rdt_share_make(sh[0], counts[0], 6, wrong, 1, &noise, pk, SITES, 0, sk[0], ctx, 0);
  check(ok, "share: noise blocks that do not cover the counters are refused, nothing drawn");
  ok = 1;
  for (int i = 0; i < SITES; i++) ok &= rdt_share_make(sh[i], counts[i], 6, blocks, 2, &noise, pk, SITES, (uint32_t)i, sk[i], ctx, 0);
  uint64_t total[6] = {0};
  for (int i = 0; i < SITES; i++)
    for (int j = 0; j < 6; j++) total[j] += sh[i][j];
  int noisy = 0, near = 1;
  for (int j = 2; j < 6; j++) {
    int64_t exact = 0;
    for (int i = 0; i < SITES; i++) exact += counts[i][j];
    noisy |= (int64_t)total[j] != exact; /* 4 draws of scale 1 per counter: all zero almost never */
    near &= llabs((int64_t)total[j] - exact) < 100;
  }
  check(ok && total[0] == 0 && total[1] == 0 && noisy && near,
        "share: summed shares are 0 where nothing is released and the exact sum plus noise elsewhere");
  rdt_rng_clear(&noise);
  /* partial.h: masked shares add modulo 2^64 and never with exact states. */
  unsigned char plan_digest[32], id1[16], id2[16];
  memset(plan_digest, 3, 32);
  memset(id1, 1, 16);
  memset(id2, 2, 16);
  uint64_t big[1] = {UINT64_MAX}, one[1] = {2};
  rdt_partial a, b, e;
  char err[200];
  int64_t zero[1] = {0};
  rdt_span zs = {zero, 1};
  ok = rdt_partial_from_masked(&a, plan_digest, 0, big, 1, id1) && rdt_partial_from_masked(&b, plan_digest, 0, one, 1, id2) &&
       rdt_partial_merge(&a, &b, err, sizeof err) && a.counters[0] == 1;
  check(ok, "partial: masked shares add modulo 2^64 (UINT64_MAX + 2 = 1), not refused as an overflow");
  ok = rdt_partial_from_spans(&e, plan_digest, 0, &zs, 1, NULL, 0) && !rdt_partial_merge(&e, &b, err, sizeof err) &&
       strstr(err, "do not add") != NULL;
  check(ok, "partial: an exact partial and a masked share do not add");
  rdt_partial_free(&a);
  rdt_partial_free(&b);
  rdt_partial_free(&e);
  /* plan.h: "federated" leaves the options; the roster is in the digest. */
  char opts[600], hex[65];
  size_t at = (size_t)snprintf(opts, sizeof opts, "{\"epsilon\": 1, \"federated\": {\"sites\": [");
  for (int i = 0; i < 2; i++) {
    sodium_bin2hex(hex, sizeof hex, pk + 32 * i, 32);
    at += (size_t)snprintf(opts + at, sizeof opts - at, "%s\"%s\"", i ? "," : "", hex);
  }
  snprintf(opts + at, sizeof opts - at, "]}, \"ledger\": \"b\"}");
  rdt_bytes rest;
  unsigned char *sites = NULL;
  uint32_t n_sites = 0;
  ok = rdt_plan_federated(opts, strlen(opts), &rest, &sites, &n_sites, err, sizeof err);
  check(ok && n_sites == 2 && memcmp(sites, pk, 64) == 0 && rest.n == strlen("{\"epsilon\":1,\"ledger\":\"b\"}") &&
            memcmp(rest.p, "{\"epsilon\":1,\"ledger\":\"b\"}", rest.n) == 0,
        "plan: \"federated\" gives the roster and leaves the rest of the options");
  rdt_bytes_free(&rest);
  free(sites);
  const char *bad[] = {"{\"federated\": {\"sites\": [\"00\"]}}", "{\"federated\": 1}", "{\"federated\": {\"sites\": []}}",
                       "{\"federated\": {\"sites\": [\"0000000000000000000000000000000000000000000000000000000000000000\","
                       "\"0100000000000000000000000000000000000000000000000000000000000000\"]}}"};
  int all_bad = 1;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (rdt_plan_federated(bad[i], strlen(bad[i]), &rest, &sites, &n_sites, err, sizeof err)) {
      all_bad = 0;
      rdt_bytes_free(&rest);
      free(sites);
    }
  }
  check(all_bad, "plan: a roster of one site, no object, no sites, or low-order keys is refused");
}

int main(int argc, char **argv) {
  if (sodium_init() < 0) {
    printf("not ok - sodium_init\n");
    return 1;
  }
  if (argc == 3 && strcmp(argv[1], "--write-golden") == 0) {
    size_t size;
    unsigned char *blob = golden_model(&size);
    FILE *fp = fopen(argv[2], "wb");
    if (!blob || !fp || fwrite(blob, 1, size, fp) != size) return 1;
    fclose(fp);
    free(blob);
    return 0;
  }
  const char *golden = getenv("RDT_GOLDEN") ? getenv("RDT_GOLDEN") : "tests/golden/model_v1_1.blob";
  test_json();
  test_rng();
  test_noise();
  test_selection();
  test_median();
  test_options();
  test_forest();
  test_matrix();
  test_sharp();
  test_sharp_constant_work();
  test_diprime();
  test_row_sample();
  test_tree_selection();
  test_train_worker();
  test_model(golden);
  test_forest_json();
  test_sign();
  test_unit();
  test_shard();
  test_federated();
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail != 0;
}
