/* schema.c - public domain of a model and fast value lookup. */
#include "schema.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t rdt_int_text(long long v, char *buf) {
  /* Hand-rolled: this runs once per row for integer labels and categories. */
  char tmp[24];
  size_t n = 0, k = 0;
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) buf[k++] = '-';
  while (n) buf[k++] = tmp[--n];
  buf[k] = 0;
  return k;
}

int rdt_value_set_int(rdt_value *v, long long x) {
  char buf[24];
  size_t n = rdt_int_text(x, buf);
  v->type = RDT_VALUE_INTEGER;
  v->integer = x;
  v->text = malloc(n + 1);
  if (!v->text) return 0;
  memcpy(v->text, buf, n + 1);
  v->text_len = n;
  return 1;
}

int rdt_value_set_text(rdt_value *v, const char *text, size_t len) {
  v->type = RDT_VALUE_TEXT;
  v->integer = 0;
  v->text = malloc(len + 1);
  if (!v->text) return 0;
  memcpy(v->text, text, len);
  v->text[len] = 0;
  v->text_len = len;
  return 1;
}

void rdt_value_free(rdt_value *v) {
  free(v->text);
  v->text = NULL;
}

static uint32_t hash_text(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
  return (uint32_t)(h ^ (h >> 32));
}

int rdt_value_index_build(rdt_value_index *ix, const rdt_value *values, uint32_t n, uint32_t *dup) {
  uint32_t cap = 8;
  while (cap < 2 * n) cap *= 2;
  ix->slots = calloc(cap, sizeof *ix->slots);
  if (!ix->slots) return 0;
  ix->mask = cap - 1;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t h = hash_text(values[i].text, values[i].text_len) & ix->mask;
    while (ix->slots[h]) {
      const rdt_value *o = &values[ix->slots[h] - 1];
      if (o->text_len == values[i].text_len && memcmp(o->text, values[i].text, o->text_len) == 0) {
        if (dup) *dup = i;
        return -1;
      }
      h = (h + 1) & ix->mask;
    }
    ix->slots[h] = i + 1;
  }
  return 1;
}

void rdt_value_index_free(rdt_value_index *ix) {
  free(ix->slots);
  ix->slots = NULL;
}

long rdt_value_index_find(const rdt_value_index *ix, const rdt_value *values, const char *text,
                          size_t len) {
  uint32_t h = hash_text(text, len) & ix->mask;
  while (ix->slots[h]) {
    const rdt_value *o = &values[ix->slots[h] - 1];
    if (o->text_len == len && memcmp(o->text, text, len) == 0) return (long)ix->slots[h] - 1;
    h = (h + 1) & ix->mask;
  }
  return -1;
}

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); } /* SQLite's sqlite3Isspace */
static int is_digit(char c) { return c >= '0' && c <= '9'; }

int rdt_text_number(const char *s, size_t n, long long *i, double *d) {
  /* The grammar first, by hand: strtod would also take hex, "inf", "nan"
  ** and the locale's decimal point, none of which SQLite reads. */
  size_t a = 0, e = n;
  while (a < e && is_space(s[a])) a++;
  while (e > a && is_space(s[e - 1])) e--;
  size_t p = a, digits = 0;
  int integral = 1;
  if (p < e && (s[p] == '+' || s[p] == '-')) p++;
  while (p < e && is_digit(s[p])) p++, digits++;
  if (p < e && s[p] == '.') {
    integral = 0;
    for (p++; p < e && is_digit(s[p]); p++) digits++;
  }
  if (!digits) return 0;
  if (p < e && (s[p] == 'e' || s[p] == 'E')) {
    integral = 0;
    p++;
    if (p < e && (s[p] == '+' || s[p] == '-')) p++;
    if (p == e || !is_digit(s[p])) return 0;
    while (p < e && is_digit(s[p])) p++;
  }
  if (p != e) return 0;
  /* Then the value, from a NUL-terminated copy in C's notation. */
  char stack[401], *buf = e - a < sizeof stack ? stack : malloc(e - a + 1);
  if (!buf) return 0;
  memcpy(buf, s + a, e - a);
  buf[e - a] = 0;
  int kind = 2;
  char *end;
  if (integral) {
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno == 0 && *end == 0) {
      *i = v;
      kind = 1;
    }
  }
  if (kind == 2) {
    /* strtod reads the locale's decimal point: an application may have set
    ** a comma (as json.c, translate). */
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] && dp[0] != '.' && !dp[1])
      for (char *q = buf; *q; q++)
        if (*q == '.') *q = dp[0];
    *d = strtod(buf, NULL);
  }
  if (buf != stack) free(buf);
  return kind;
}

size_t rdt_real_text(double d, char *buf, size_t n) {
  if (!isfinite(d)) return 0;
  /* Integral values below 9e15 are exact in a double and print as integers;
  ** -0.0 is 0. */
  if (d == floor(d) && fabs(d) < 9e15) return rdt_int_text((long long)d, buf);
  int k = snprintf(buf, n, "%.17g", d);
  for (char *q = buf; *q; q++)
    if (*q == ',') *q = '.'; /* a locale's decimal comma: the text is always C's */
  return k > 0 && (size_t)k < n ? (size_t)k : 0;
}

long rdt_value_match_text(const rdt_value_index *ix, const rdt_value *values, const char *text, size_t len,
                          int *by_value) {
  *by_value = 0;
  long code = rdt_value_index_find(ix, values, text, len);
  if (code >= 0) return code;
  long long i;
  double d;
  char buf[40];
  size_t k;
  switch (rdt_text_number(text, len, &i, &d)) {
    case 1: k = rdt_int_text(i, buf); break;
    case 2: k = rdt_real_text(d, buf, sizeof buf); break;
    default: return -1;
  }
  *by_value = 1;
  return k ? rdt_value_index_find(ix, values, buf, k) : -1;
}

int rdt_schema_build_indexes(rdt_schema *s, long *what, uint32_t *dup) {
  int rc;
  for (uint32_t f = 0; f < s->n_features; f++) {
    rdt_feature *ft = &s->features[f];
    if (ft->type != RDT_FEATURE_CATEGORICAL) continue;
    rc = rdt_value_index_build(&ft->index, ft->values, ft->n_values, dup);
    if (rc != 1) { *what = (long)f; return rc; }
  }
  rc = rdt_value_index_build(&s->class_index, s->classes, s->n_classes, dup);
  if (rc != 1) *what = -1;
  return rc;
}

void rdt_schema_free(rdt_schema *s) {
  if (s->features) {
    for (uint32_t f = 0; f < s->n_features; f++) {
      rdt_feature *ft = &s->features[f];
      free(ft->name);
      if (ft->values) {
        for (uint32_t i = 0; i < ft->n_values; i++) rdt_value_free(&ft->values[i]);
        free(ft->values);
      }
      rdt_value_index_free(&ft->index);
    }
    free(s->features);
  }
  if (s->classes) {
    for (uint32_t i = 0; i < s->n_classes; i++) rdt_value_free(&s->classes[i]);
    free(s->classes);
  }
  rdt_value_index_free(&s->class_index);
  memset(s, 0, sizeof *s);
}

static int copy_values(rdt_value **out, const rdt_value *in, uint32_t n) {
  if (n == 0) return 1;
  if (!(*out = calloc(n, sizeof **out))) return 0;
  for (uint32_t i = 0; i < n; i++) {
    int ok = in[i].type == RDT_VALUE_INTEGER ? rdt_value_set_int(&(*out)[i], in[i].integer)
                                             : rdt_value_set_text(&(*out)[i], in[i].text, in[i].text_len);
    if (!ok) return 0;
  }
  return 1;
}

int rdt_schema_copy(rdt_schema *dst, const rdt_schema *src) {
  memset(dst, 0, sizeof *dst);
  long what;
  uint32_t dup;
  int ok = (dst->features = calloc(src->n_features ? src->n_features : 1, sizeof *dst->features)) != NULL;
  dst->n_features = ok ? src->n_features : 0;
  for (uint32_t f = 0; ok && f < src->n_features; f++) {
    const rdt_feature *a = &src->features[f];
    rdt_feature *b = &dst->features[f];
    b->type = a->type;
    b->min = a->min;
    b->max = a->max;
    ok = (b->name = strdup(a->name)) != NULL && copy_values(&b->values, a->values, a->n_values);
    b->n_values = a->n_values;
  }
  ok = ok && copy_values(&dst->classes, src->classes, src->n_classes);
  dst->n_classes = src->n_classes;
  dst->classes_copied = src->classes_copied;
  dst->from_rows = src->from_rows;
  for (uint32_t f = 0; ok && f < src->n_features; f++) dst->features[f].copied = src->features[f].copied;
  ok = ok && rdt_schema_build_indexes(dst, &what, &dup) == 1;
  if (!ok) rdt_schema_free(dst);
  return ok;
}
