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
