/* json.c - strict recursive-descent JSON reader; see json.h. */
#include "json.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *s;
  size_t len, pos;
  char *err;
  size_t err_size;
  int failed;
} json_parser;

static void json_fail(json_parser *p, const char *what) {
  if (p->failed) return;
  p->failed = 1;
  snprintf(p->err, p->err_size, "%s at offset %zu", what, p->pos);
}

static void skip_ws(json_parser *p) {
  while (p->pos < p->len) {
    char c = p->s[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    p->pos++;
  }
}

static rdt_json *json_new(json_parser *p, rdt_json_type t) {
  rdt_json *v = calloc(1, sizeof *v);
  if (!v) json_fail(p, "out of memory");
  else v->type = t;
  return v;
}

static int append_item(json_parser *p, rdt_json *parent, rdt_json *child) {
  if ((parent->n & (parent->n - 1)) == 0) { /* grow at powers of two */
    size_t cap = parent->n ? parent->n * 2 : 4;
    rdt_json **items = realloc(parent->items, cap * sizeof *items);
    if (!items) {
      json_fail(p, "out of memory");
      return 0;
    }
    parent->items = items;
  }
  parent->items[parent->n++] = child;
  return 1;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
  }
  o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F)); return 4;
}

static int read_hex4(json_parser *p, unsigned *out) {
  if (p->len - p->pos < 4) return 0;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(p->s[p->pos + i]);
    if (d < 0) return 0;
    v = v * 16 + (unsigned)d;
  }
  p->pos += 4;
  *out = v;
  return 1;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
** no surrogates, at most U+10FFFF), or 0. */
static size_t utf8_sequence(const unsigned char *s, size_t avail) {
  unsigned c = s[0];
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || n > avail) return 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (n == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F))) return 0; /* overlong, surrogate */
  if (n == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))) return 0;  /* overlong, > U+10FFFF */
  return n;
}

/* Reads a string starting at the opening quote; returns a malloc'd copy. */
static char *parse_string(json_parser *p, size_t *out_len) {
  p->pos++; /* opening quote */
  /* The decoded string is never longer than the encoded one. */
  size_t start = p->pos, cap = 1;
  while (start + cap - 1 < p->len && p->s[start + cap - 1] != '"') {
    cap += (p->s[start + cap - 1] == '\\') ? 2 : 1;
  }
  char *o = malloc(cap + 4);
  if (!o) { json_fail(p, "out of memory"); return NULL; }
  size_t n = 0;
  for (;;) {
    if (p->pos >= p->len) { json_fail(p, "unterminated string"); free(o); return NULL; }
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c == '"') { p->pos++; break; }
    if (c < 0x20) { json_fail(p, "control character in string"); free(o); return NULL; }
    if (c >= 0x80) { /* raw UTF-8: copy one well-formed sequence or refuse */
      size_t k = utf8_sequence((const unsigned char *)p->s + p->pos, p->len - p->pos);
      if (!k) { json_fail(p, "invalid UTF-8 in string"); free(o); return NULL; }
      memcpy(o + n, p->s + p->pos, k);
      n += k;
      p->pos += k;
      continue;
    }
    if (c != '\\') { o[n++] = (char)c; p->pos++; continue; }
    p->pos++;
    if (p->pos >= p->len) { json_fail(p, "unterminated string"); free(o); return NULL; }
    char e = p->s[p->pos++];
    switch (e) {
      case '"': o[n++] = '"'; break;
      case '\\': o[n++] = '\\'; break;
      case '/': o[n++] = '/'; break;
      case 'b': o[n++] = '\b'; break;
      case 'f': o[n++] = '\f'; break;
      case 'n': o[n++] = '\n'; break;
      case 'r': o[n++] = '\r'; break;
      case 't': o[n++] = '\t'; break;
      case 'u': {
        unsigned cp;
        if (!read_hex4(p, &cp)) { json_fail(p, "bad \\u escape"); free(o); return NULL; }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          unsigned lo;
          if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
            json_fail(p, "unpaired surrogate"); free(o); return NULL;
          }
          p->pos += 2;
          if (!read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
            json_fail(p, "unpaired surrogate"); free(o); return NULL;
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          json_fail(p, "unpaired surrogate"); free(o); return NULL;
        }
        if (cp == 0) { json_fail(p, "NUL character in string"); free(o); return NULL; }
        n += put_utf8(o + n, cp);
        break;
      }
      default: json_fail(p, "bad escape"); free(o); return NULL;
    }
  }
  o[n] = 0;
  *out_len = n;
  return o;
}

static rdt_json *parse_value(json_parser *p, int depth);

static rdt_json *parse_number(json_parser *p) {
  size_t start = p->pos;
  int integral = 1;
  if (p->pos < p->len && p->s[p->pos] == '-') p->pos++;
  if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
    json_fail(p, "bad number");
    return NULL;
  }
  if (p->s[p->pos] == '0') p->pos++;
  else while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  if (p->pos < p->len && p->s[p->pos] == '.') {
    integral = 0;
    p->pos++;
    size_t d = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    if (d == p->pos) { json_fail(p, "bad number"); return NULL; }
  }
  if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
    integral = 0;
    p->pos++;
    if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
    size_t d = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    if (d == p->pos) { json_fail(p, "bad number"); return NULL; }
  }
  char buf[64];
  size_t n = p->pos - start;
  if (n >= sizeof buf) { json_fail(p, "number too long"); return NULL; }
  memcpy(buf, p->s + start, n);
  buf[n] = 0;
  rdt_json *v = json_new(p, RDT_JSON_NUMBER);
  if (!v) return NULL;
  /* strtod reads the C locale's decimal point; an application may have set
  ** another (a comma): JSON's '.' is translated to it first. */
  const char *dp = localeconv()->decimal_point;
  if (dp && dp[0] && dp[0] != '.' && !dp[1])
    for (char *q = buf; *q; q++) if (*q == '.') *q = dp[0];
  v->number = strtod(buf, NULL);
  if (integral) {
    errno = 0;
    long long ll = strtoll(buf, NULL, 10);
    if (errno == 0) { v->is_integer = 1; v->integer = ll; }
  }
  return v;
}

static int match_word(json_parser *p, const char *w) {
  size_t n = strlen(w);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return 0;
  p->pos += n;
  return 1;
}

static rdt_json *parse_container(json_parser *p, int depth, int is_object) {
  rdt_json *v = json_new(p, is_object ? RDT_JSON_OBJECT : RDT_JSON_ARRAY);
  if (!v) return NULL;
  char close = is_object ? '}' : ']';
  p->pos++;
  skip_ws(p);
  if (p->pos < p->len && p->s[p->pos] == close) { p->pos++; return v; }
  for (;;) {
    char *key = NULL;
    size_t key_len = 0;
    if (is_object) {
      skip_ws(p);
      if (p->pos >= p->len || p->s[p->pos] != '"') { json_fail(p, "expected a member name"); break; }
      key = parse_string(p, &key_len);
      if (!key) break;
      skip_ws(p);
      if (p->pos >= p->len || p->s[p->pos] != ':') { json_fail(p, "expected ':'"); free(key); break; }
      p->pos++;
    }
    rdt_json *child = parse_value(p, depth + 1);
    if (!child) { free(key); break; }
    child->key = key;
    if (!append_item(p, v, child)) { rdt_json_free(child); break; }
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ',') { p->pos++; continue; }
    if (p->pos < p->len && p->s[p->pos] == close) { p->pos++; return v; }
    json_fail(p, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
    break;
  }
  rdt_json_free(v);
  return NULL;
}

static rdt_json *parse_value(json_parser *p, int depth) {
  if (depth > RDT_JSON_MAX_DEPTH) { json_fail(p, "nested too deeply"); return NULL; }
  skip_ws(p);
  if (p->pos >= p->len) { json_fail(p, "unexpected end of text"); return NULL; }
  char c = p->s[p->pos];
  if (c == '{') return parse_container(p, depth, 1);
  if (c == '[') return parse_container(p, depth, 0);
  if (c == '"') {
    rdt_json *v = json_new(p, RDT_JSON_STRING);
    if (!v) return NULL;
    v->string = parse_string(p, &v->string_len);
    if (!v->string) { free(v); return NULL; }
    return v;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p);
  if (match_word(p, "true")) return json_new(p, RDT_JSON_TRUE);
  if (match_word(p, "false")) return json_new(p, RDT_JSON_FALSE);
  if (match_word(p, "null")) return json_new(p, RDT_JSON_NULL);
  json_fail(p, "unexpected character");
  return NULL;
}

rdt_json *rdt_json_parse(const char *text, size_t len, char *err, size_t err_size) {
  json_parser p = {text, len, 0, err, err_size, 0};
  if (err_size) err[0] = 0;
  rdt_json *v = parse_value(&p, 0);
  if (v) {
    skip_ws(&p);
    if (p.pos != p.len) {
      json_fail(&p, "trailing characters");
      rdt_json_free(v);
      return NULL;
    }
  }
  return v;
}

void rdt_json_free(rdt_json *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) rdt_json_free(v->items[i]);
  free(v->items);
  free(v->string);
  free(v->key);
  free(v);
}

const rdt_json *rdt_json_get(const rdt_json *obj, const char *key) {
  if (!obj || obj->type != RDT_JSON_OBJECT) return NULL;
  for (size_t i = 0; i < obj->n; i++) {
    if (strcmp(obj->items[i]->key, key) == 0) return obj->items[i];
  }
  return NULL;
}
