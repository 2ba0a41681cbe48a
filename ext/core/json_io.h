/*
** json_io.h - the small pieces every JSON codec of the core shares: writing
** JSON text into a growing byte buffer (rdt_bytes, learner.h) and reading
** typed members of a parsed document (json.h) with one error message. No
** SQLite; knows no model kind.
**
** Contract:
**   1. The writers append to an rdt_bytes and never fail by themselves: once
**      an allocation fails the buffer's oom is set and further writes are
**      ignored (learner.h), so a caller checks oom once, at the end.
**   2. rdt_json_put_double writes the fewest digits (15 to 17) that read back
**      as exactly the double, with ".0" kept on integral values, in C's
**      notation whatever the locale; a value that is not finite is null.
**      libc's conversions are correctly rounded, so the text does not depend
**      on the SQLite (or anything else) that hosts the core.
**   3. The readers record the first error only: after one has failed, later
**      failures keep its message, so the caller reports the first problem
**      met. Every reader returns 0 (or NULL) when it fails and 1 otherwise;
**      they read only what the parsed tree holds (json.h bounds it).
**   4. A reader that allocates (rdt_json_values, rdt_json_u32_list) leaves
**      what it allocated in *out on failure too; the caller frees it.
**   5. rdt_json_same_export compares a document with the export that the
**      model it carries regenerates, as JSON values: members by name in any
**      order, numbers by value (1, 1.0 and 1e0 are one number; an integer
**      and a fraction are equal only when exactly so), strings by their
**      decoded bytes, arrays element by element. A member missing, extra or
**      repeated is a difference (the n-th member of a name is matched with
**      the n-th of that name, so the rule is an equivalence). The first
**      difference (in the export's order; extra and repeated members after
**      the rest) is named by its JSON path ("privacy.epsilon",
**      "features[0].min") with both values. Work is at most the export's
**      size times the width of its and the document's widest objects, and
**      recursion follows the export's nesting, so a hostile document cannot
**      make it slow or deep.
*/
#ifndef RDT_JSON_IO_H
#define RDT_JSON_IO_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "learner.h"
#include "schema.h"

#if defined(__GNUC__) || defined(__clang__)
#define RDT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RDT_PRINTF(f, a)
#endif

/* ---- writing (contract 1, 2) ---- */
/* printf into b (C's formats: integers and strings print as everywhere). */
void rdt_json_putf(rdt_bytes *b, const char *fmt, ...) RDT_PRINTF(2, 3);
void rdt_json_put_char(rdt_bytes *b, char c);
/* s[0..n) as a JSON string literal: '"' and '\' escaped, control bytes as \u00XX. */
void rdt_json_put_string(rdt_bytes *b, const char *s, size_t n);
void rdt_json_put_double(rdt_bytes *b, double x);
/* The text rdt_json_put_double writes, with lo..hi digits instead of 15..17. */
#define RDT_JSON_NUMBER_MAX 48
void rdt_json_format_number(double x, int lo, int hi, char buf[RDT_JSON_NUMBER_MAX]);
/* n bytes as a string of lowercase hex digits, quoted. */
void rdt_json_put_hex(rdt_bytes *b, const unsigned char *p, size_t n);
/* [v0,v1,...] */
void rdt_json_put_u32_list(rdt_bytes *b, const uint32_t *v, uint32_t n);
/* A class or category value: an integer, or a string. */
void rdt_json_put_value(rdt_bytes *b, const rdt_value *v);
/* A parsed value written back as compact JSON: members in their order,
** integers as written, other numbers as rdt_json_put_double writes them.
** Parsing what it writes and writing that again gives the same text. */
void rdt_json_put_tree(rdt_bytes *b, const rdt_json *v);
/* The classes, and the features with their domains, as JSON arrays. */
void rdt_json_put_classes(rdt_bytes *b, const rdt_schema *s);
void rdt_json_put_features(rdt_bytes *b, const rdt_schema *s);

/* ---- reading (contract 3, 4) ---- */
typedef struct rdt_json_reader {
  char *err; /* the first error's message */
  size_t n;  /* bytes at err */
  int failed;
} rdt_json_reader;

/* Records `what` (if nothing failed before) and returns 0. */
int rdt_json_bad(rdt_json_reader *r, const char *what);
/* obj's member `key` if it has `type`; else NULL and "\"key\" is missing or has the wrong type". */
const rdt_json *rdt_json_member(rdt_json_reader *r, const rdt_json *obj, const char *key, rdt_json_type type);
/* An integer member in [0, max]. */
int rdt_json_member_uint(rdt_json_reader *r, const rdt_json *obj, const char *key, uint64_t max, uint64_t *out);
int rdt_json_member_double(rdt_json_reader *r, const rdt_json *obj, const char *key, double *out);
/* Exactly n bytes written as 2n hex digits. v may be NULL (missing). */
int rdt_json_hex(rdt_json_reader *r, const rdt_json *v, unsigned char *out, size_t n);
/* At most max strings or integers into a new array *out of *count values. */
int rdt_json_values(rdt_json_reader *r, const rdt_json *arr, rdt_value **out, uint32_t *count, uint32_t max);
/* Indices below max (at most max of them) into a new array *out of *n. */
int rdt_json_u32_list(rdt_json_reader *r, const rdt_json *arr, uint32_t max, uint32_t **out, uint32_t *n);
/* Exactly n integers into out. */
int rdt_json_int_array(rdt_json_reader *r, const rdt_json *arr, int64_t *out, size_t n);

/* ---- an export against the model it carries (contract 5) ---- */
/* 1 when doc equals the export text want[0..n) as JSON values; else 0 and
** in err "the document's \"epsilon\" (0.1) disagrees with the model it
** carries (1.0): an edited export; ..." (or "out of memory"). */
int rdt_json_same_export(const rdt_json *doc, const unsigned char *want, size_t n, char *err, size_t en);

#endif
