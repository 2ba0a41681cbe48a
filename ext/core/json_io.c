/*
** json_io.c - writing JSON into an rdt_bytes and reading typed members of a
** parsed document (json_io.h).
*/
#include "json_io.h"

#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rdt_json_putf(rdt_bytes *b, const char *fmt, ...) {
  char stack[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(stack, sizeof stack, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = 1; /* an encoding error: nothing sensible to write */
    return;
  }
  if ((size_t)n < sizeof stack) {
    rdt_bytes_put(b, stack, (size_t)n);
    return;
  }
  char *heap = malloc((size_t)n + 1);
  if (!heap) {
    b->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(heap, (size_t)n + 1, fmt, ap);
  va_end(ap);
  rdt_bytes_put(b, heap, (size_t)n);
  free(heap);
}

void rdt_json_put_char(rdt_bytes *b, char c) { rdt_bytes_put(b, &c, 1); }

void rdt_json_put_string(rdt_bytes *b, const char *s, size_t n) {
  rdt_json_put_char(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') rdt_json_putf(b, "\\%c", c);
    else if (c < 0x20) rdt_json_putf(b, "\\u%04x", c);
    else rdt_json_put_char(b, (char)c);
  }
  rdt_json_put_char(b, '"');
}

/* Contract 2, for lo..hi digits (hi: x rounded to hi digits when none reads back). */
void rdt_json_format_number(double x, int lo, int hi, char buf[RDT_JSON_NUMBER_MAX]) {
  if (!isfinite(x)) {
    snprintf(buf, RDT_JSON_NUMBER_MAX, "null");
    return;
  }
  for (int digits = lo; digits <= hi; digits++) {
    snprintf(buf, RDT_JSON_NUMBER_MAX, "%.*g", digits, x);
    if (strtod(buf, NULL) == x) break;
  }
  int has_point = 0;
  char *q = buf;
  for (; *q; q++) {
    if ((*q < '0' || *q > '9') && *q != '-' && *q != '+' && *q != 'e') *q = '.'; /* the locale's decimal point */
    if (*q == '.' || *q == 'e') has_point = 1;
  }
  if (!has_point) memcpy(q, ".0", 3); /* at most 25 characters before it: fits */
}

void rdt_json_put_double(rdt_bytes *b, double x) {
  char buf[RDT_JSON_NUMBER_MAX];
  rdt_json_format_number(x, 15, 17, buf);
  rdt_bytes_text(b, buf);
}

void rdt_json_put_hex(rdt_bytes *b, const unsigned char *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  rdt_json_put_char(b, '"');
  for (size_t i = 0; i < n; i++) {
    char pair[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
    rdt_bytes_put(b, pair, 2);
  }
  rdt_json_put_char(b, '"');
}

void rdt_json_put_u32_list(rdt_bytes *b, const uint32_t *v, uint32_t n) {
  rdt_json_put_char(b, '[');
  for (uint32_t i = 0; i < n; i++) rdt_json_putf(b, "%s%u", i ? "," : "", v[i]);
  rdt_json_put_char(b, ']');
}

void rdt_json_put_value(rdt_bytes *b, const rdt_value *v) {
  if (v->type == RDT_VALUE_INTEGER) rdt_json_putf(b, "%lld", v->integer);
  else rdt_json_put_string(b, v->text, v->text_len);
}

void rdt_json_put_tree(rdt_bytes *b, const rdt_json *v) {
  switch (v->type) {
    case RDT_JSON_NULL: rdt_bytes_text(b, "null"); break;
    case RDT_JSON_FALSE: rdt_bytes_text(b, "false"); break;
    case RDT_JSON_TRUE: rdt_bytes_text(b, "true"); break;
    case RDT_JSON_NUMBER:
      if (v->is_integer) rdt_json_putf(b, "%lld", v->integer);
      else rdt_json_put_double(b, v->number);
      break;
    case RDT_JSON_STRING: rdt_json_put_string(b, v->string, v->string_len); break;
    case RDT_JSON_ARRAY:
    case RDT_JSON_OBJECT: /* nesting is bounded by the parser (json.h) */
      rdt_json_put_char(b, v->type == RDT_JSON_ARRAY ? '[' : '{');
      for (size_t i = 0; i < v->n; i++) {
        if (i) rdt_json_put_char(b, ',');
        if (v->type == RDT_JSON_OBJECT) {
          rdt_json_put_string(b, v->items[i]->key, strlen(v->items[i]->key));
          rdt_json_put_char(b, ':');
        }
        rdt_json_put_tree(b, v->items[i]);
      }
      rdt_json_put_char(b, v->type == RDT_JSON_ARRAY ? ']' : '}');
      break;
  }
}

void rdt_json_put_classes(rdt_bytes *b, const rdt_schema *s) {
  rdt_json_put_char(b, '[');
  for (uint32_t k = 0; k < s->n_classes; k++) {
    if (k) rdt_json_put_char(b, ',');
    rdt_json_put_value(b, &s->classes[k]);
  }
  rdt_json_put_char(b, ']');
}

void rdt_json_put_features(rdt_bytes *b, const rdt_schema *s) {
  rdt_json_put_char(b, '[');
  for (uint32_t j = 0; j < s->n_features; j++) {
    const rdt_feature *ft = &s->features[j];
    if (j) rdt_json_put_char(b, ',');
    rdt_bytes_text(b, "{\"name\":");
    rdt_json_put_string(b, ft->name, strlen(ft->name));
    if (ft->type == RDT_FEATURE_NUMERIC) {
      rdt_bytes_text(b, ",\"type\":\"numeric\",\"min\":");
      rdt_json_put_double(b, ft->min);
      rdt_bytes_text(b, ",\"max\":");
      rdt_json_put_double(b, ft->max);
      rdt_json_put_char(b, '}');
    } else {
      rdt_bytes_text(b, ",\"type\":\"categorical\",\"values\":[");
      for (uint32_t k = 0; k < ft->n_values; k++) {
        if (k) rdt_json_put_char(b, ',');
        rdt_json_put_value(b, &ft->values[k]);
      }
      rdt_bytes_text(b, "]}");
    }
  }
  rdt_json_put_char(b, ']');
}

int rdt_json_bad(rdt_json_reader *r, const char *what) {
  if (!r->failed) snprintf(r->err, r->n, "%s", what);
  r->failed = 1;
  return 0;
}

const rdt_json *rdt_json_member(rdt_json_reader *r, const rdt_json *obj, const char *key, rdt_json_type type) {
  const rdt_json *v = rdt_json_get(obj, key);
  if (!v || v->type != type) {
    char msg[160];
    snprintf(msg, sizeof msg, "\"%s\" is missing or has the wrong type", key);
    rdt_json_bad(r, msg);
    return NULL;
  }
  return v;
}

int rdt_json_member_uint(rdt_json_reader *r, const rdt_json *obj, const char *key, uint64_t max, uint64_t *out) {
  const rdt_json *v = rdt_json_member(r, obj, key, RDT_JSON_NUMBER);
  if (!v) return 0;
  if (!v->is_integer || v->integer < 0 || (uint64_t)v->integer > max)
    return rdt_json_bad(r, "an integer field is out of range");
  *out = (uint64_t)v->integer;
  return 1;
}

int rdt_json_member_double(rdt_json_reader *r, const rdt_json *obj, const char *key, double *out) {
  const rdt_json *v = rdt_json_member(r, obj, key, RDT_JSON_NUMBER);
  if (!v) return 0;
  *out = v->number;
  return 1;
}

int rdt_json_hex(rdt_json_reader *r, const rdt_json *v, unsigned char *out, size_t n) {
  size_t got = 0;
  if (!v || v->type != RDT_JSON_STRING || v->string_len != 2 * n ||
      sodium_hex2bin(out, n, v->string, v->string_len, NULL, &got, NULL) != 0 || got != n)
    return rdt_json_bad(r, "a hex field is malformed");
  return 1;
}

int rdt_json_values(rdt_json_reader *r, const rdt_json *arr, rdt_value **out, uint32_t *count, uint32_t max) {
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n > max) return rdt_json_bad(r, "a value list is malformed");
  *count = 0;
  if (arr->n == 0) return 1;
  *out = calloc(arr->n, sizeof **out);
  if (!*out) return rdt_json_bad(r, "out of memory");
  for (size_t i = 0; i < arr->n; i++) {
    const rdt_json *v = arr->items[i];
    int ok = v->type == RDT_JSON_STRING ? rdt_value_set_text(&(*out)[i], v->string, v->string_len)
             : v->type == RDT_JSON_NUMBER && v->is_integer
                 ? rdt_value_set_int(&(*out)[i], v->integer)
                 : (rdt_json_bad(r, "values must be strings or integers"), 0);
    if (!ok) return rdt_json_bad(r, "out of memory"); /* keeps the message above when that one failed */
    (*count)++;
  }
  return 1;
}

int rdt_json_u32_list(rdt_json_reader *r, const rdt_json *arr, uint32_t max, uint32_t **out, uint32_t *n) {
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n > max) return rdt_json_bad(r, "an index list is malformed");
  *out = malloc((arr->n ? arr->n : 1) * sizeof **out);
  if (!*out) return rdt_json_bad(r, "out of memory");
  *n = (uint32_t)arr->n;
  for (size_t i = 0; i < arr->n; i++) {
    const rdt_json *v = arr->items[i];
    if (v->type != RDT_JSON_NUMBER || !v->is_integer || v->integer < 0 || (uint64_t)v->integer >= max)
      return rdt_json_bad(r, "an index is out of range");
    (*out)[i] = (uint32_t)v->integer;
  }
  return 1;
}

int rdt_json_int_array(rdt_json_reader *r, const rdt_json *arr, int64_t *out, size_t n) {
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n != n) return rdt_json_bad(r, "a value array has the wrong length");
  for (size_t i = 0; i < n; i++) {
    if (arr->items[i]->type != RDT_JSON_NUMBER || !arr->items[i]->is_integer)
      return rdt_json_bad(r, "values must be integers");
    out[i] = arr->items[i]->integer;
  }
  return 1;
}

/* ---- an export against the model it carries (contract 5) ---------------- */

typedef enum { DIFF_VALUE, DIFF_MISSING, DIFF_EXTRA, DIFF_REPEATED } json_diff_kind;

typedef struct {
  char path[128]; /* "privacy.epsilon", "features[0].min"; a path too long to show ends in "..." */
  size_t len;
  json_diff_kind kind;
  const rdt_json *given, *want; /* the values that differ (given NULL: missing) */
} json_diff;

/* Bytes of s[0..n) to show, at most max, not cutting a UTF-8 sequence. */
static size_t show_len(const char *s, size_t n, size_t max) {
  if (n <= max) return n;
  while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
  return max;
}

static void path_add(json_diff *d, const char *seg, size_t n) {
  size_t cap = sizeof d->path;
  if (d->len + 3 >= cap) return; /* already cut */
  if (d->len + n + 4 > cap) {
    memcpy(d->path + d->len, "...", 4);
    d->len = cap - 1; /* full: later segments are not shown */
    return;
  }
  memcpy(d->path + d->len, seg, n);
  d->len += n;
  d->path[d->len] = 0;
}

/* ".key" (no dot at the top), a key of more than 40 bytes cut with "...". */
static void path_key(json_diff *d, const char *key) {
  char seg[48];
  size_t n = strlen(key), k = show_len(key, n, 40), o = 0;
  if (d->len) seg[o++] = '.';
  memcpy(seg + o, key, k);
  o += k;
  if (k < n) memcpy(seg + o, "...", 3), o += 3;
  path_add(d, seg, o);
}

static void path_index(json_diff *d, size_t i) {
  char seg[32];
  int n = snprintf(seg, sizeof seg, "[%zu]", i);
  path_add(d, seg, (size_t)n);
}

static void path_back(json_diff *d, size_t len) {
  d->len = len;
  d->path[len] = 0;
}

/* Numbers by value: an integer and a fraction are equal only when the
** fraction is exactly that integer (no rounding through a double). */
static int same_number(const rdt_json *a, const rdt_json *b) {
  if (a->is_integer && b->is_integer) return a->integer == b->integer;
  if (a->is_integer || b->is_integer) {
    const rdt_json *i = a->is_integer ? a : b, *x = a->is_integer ? b : a;
    return x->number >= -0x1p63 && x->number < 0x1p63 && x->number == floor(x->number) &&
           (long long)x->number == i->integer;
  }
  return a->number == b->number;
}

/* Index of the first member of o named key at or after from, or o->n. */
static size_t member_at(const rdt_json *o, const char *key, size_t from) {
  for (size_t k = from; k < o->n; k++)
    if (strcmp(o->items[k]->key, key) == 0) return k;
  return o->n;
}

/* Index of the member of o that is the (nth+1)-th named key, or o->n. */
static size_t nth_member(const rdt_json *o, const char *key, size_t nth) {
  size_t k = member_at(o, key, 0);
  while (nth-- > 0 && k < o->n) k = member_at(o, key, k + 1);
  return k;
}

/* How many of o's first `upto` members are named key. */
static size_t count_members(const rdt_json *o, const char *key, size_t upto) {
  size_t n = 0;
  for (size_t k = 0; k < upto; k++) n += strcmp(o->items[k]->key, key) == 0;
  return n;
}

static int same_value(json_diff *d, const rdt_json *g, const rdt_json *w);

/* The export's members in its order, then members it lacks, then repeats.
** The n-th member of a name in w is matched with the n-th of that name in g
** (an export names each member once; this keeps the rule an equivalence). */
static int same_object(json_diff *d, const rdt_json *g, const rdt_json *w) {
  size_t at = d->len;
  for (size_t i = 0; i < w->n; i++) {
    const rdt_json *wm = w->items[i];
    path_key(d, wm->key);
    size_t k = nth_member(g, wm->key, count_members(w, wm->key, i));
    if (k == g->n) {
      d->kind = DIFF_MISSING, d->given = NULL, d->want = wm;
      return 0;
    }
    if (!same_value(d, g->items[k], wm)) return 0;
    path_back(d, at);
  }
  if (g->n == w->n) return 1; /* every member of w matched, none left over */
  for (size_t k = 0; k < g->n; k++)
    if (member_at(w, g->items[k]->key, 0) == w->n) {
      path_key(d, g->items[k]->key);
      d->kind = DIFF_EXTRA, d->given = g->items[k], d->want = NULL;
      return 0;
    }
  for (size_t i = 0; i < w->n; i++)
    if (count_members(g, w->items[i]->key, g->n) > count_members(w, w->items[i]->key, w->n)) {
      path_key(d, w->items[i]->key);
      d->kind = DIFF_REPEATED, d->given = d->want = w->items[i];
      return 0;
    }
  return 1; /* not reached: g has more members than w, each of a name w has */
}

static int same_value(json_diff *d, const rdt_json *g, const rdt_json *w) {
  d->kind = DIFF_VALUE, d->given = g, d->want = w;
  if (g->type != w->type) return 0;
  switch (w->type) {
    case RDT_JSON_NUMBER: return same_number(g, w);
    case RDT_JSON_STRING: return g->string_len == w->string_len && memcmp(g->string, w->string, w->string_len) == 0;
    case RDT_JSON_ARRAY: {
      if (g->n != w->n) return 0;
      size_t at = d->len;
      for (size_t i = 0; i < w->n; i++) {
        path_index(d, i);
        if (!same_value(d, g->items[i], w->items[i])) return 0;
        path_back(d, at);
      }
      return 1;
    }
    case RDT_JSON_OBJECT: return same_object(d, g, w);
    default: return 1; /* null, true, false: the type is the value */
  }
}

/* A value as the message shows it: scalars as JSON (a string cut at 40
** bytes), containers by their size. */
static void show_value(const rdt_json *v, char *buf, size_t n) {
  switch (v->type) {
    case RDT_JSON_NULL: snprintf(buf, n, "null"); break;
    case RDT_JSON_TRUE: snprintf(buf, n, "true"); break;
    case RDT_JSON_FALSE: snprintf(buf, n, "false"); break;
    case RDT_JSON_NUMBER:
      if (v->is_integer) {
        snprintf(buf, n, "%lld", v->integer);
      } else if (!isfinite(v->number)) {
        snprintf(buf, n, "a number out of range");
      } else {
        char num[RDT_JSON_NUMBER_MAX];
        rdt_json_format_number(v->number, 15, 17, num);
        snprintf(buf, n, "%s", num);
      }
      break;
    case RDT_JSON_STRING: {
      size_t k = show_len(v->string, v->string_len, 40), o = 0;
      char s[100];
      s[o++] = '"';
      for (size_t i = 0; i < k; i++) { /* '"' and '\' escaped, control bytes shown as '?' */
        char c = v->string[i];
        if (c == '"' || c == '\\') s[o++] = '\\';
        s[o++] = (unsigned char)c < 0x20 ? '?' : c;
      }
      if (k < v->string_len) memcpy(s + o, "...", 3), o += 3;
      s[o++] = '"';
      s[o] = 0;
      snprintf(buf, n, "%s", s);
      break;
    }
    case RDT_JSON_ARRAY: snprintf(buf, n, "an array of %zu", v->n); break;
    case RDT_JSON_OBJECT: snprintf(buf, n, "an object of %zu members", v->n); break;
  }
}

int rdt_json_same_export(const rdt_json *doc, const unsigned char *want, size_t n, char *err, size_t en) {
  char jerr[128];
  rdt_json *w = rdt_json_parse((const char *)want, n, jerr, sizeof jerr);
  if (!w) { /* the model's own export: only memory can fail here */
    snprintf(err, en, "cannot compare the document with the model it carries (%s)", jerr);
    return 0;
  }
  json_diff d;
  memset(&d, 0, sizeof d);
  int same = same_value(&d, doc, w);
  if (!same) {
    static const char tail[] = ": an edited export; import the document rdt_export wrote";
    char g[72] = "", v[72] = "", where[sizeof d.path + 24];
    if (d.given) show_value(d.given, g, sizeof g);
    if (d.want) show_value(d.want, v, sizeof v);
    if (d.len) snprintf(where, sizeof where, "the document's \"%s\"", d.path);
    else snprintf(where, sizeof where, "the document");
    switch (d.kind) {
      case DIFF_VALUE: snprintf(err, en, "%s (%s) disagrees with the model it carries (%s)%s", where, g, v, tail); break;
      case DIFF_MISSING: snprintf(err, en, "the document lacks \"%s\", which the model it carries has (%s)%s", d.path, v, tail); break;
      case DIFF_EXTRA: snprintf(err, en, "%s (%s) is not in the model it carries%s", where, g, tail); break;
      case DIFF_REPEATED: snprintf(err, en, "%s appears more than once%s", where, tail); break;
    }
  }
  rdt_json_free(w);
  return same;
}
