/*
** json.h - a small, strict JSON reader for rdt's options (RFC 8259 subset:
** no duplicate-key detection beyond what callers check, depth limited).
** Parsing never reads past len bytes and never recurses deeper than
** RDT_JSON_MAX_DEPTH, so hostile options cannot crash or exhaust the stack.
*/
#ifndef RDT_JSON_H
#define RDT_JSON_H

#include <stddef.h>

#define RDT_JSON_MAX_DEPTH 32

typedef enum {
  RDT_JSON_NULL, RDT_JSON_FALSE, RDT_JSON_TRUE, RDT_JSON_NUMBER,
  RDT_JSON_STRING, RDT_JSON_ARRAY, RDT_JSON_OBJECT
} rdt_json_type;

typedef struct rdt_json rdt_json;
struct rdt_json {
  rdt_json_type type;
  double number;
  int is_integer;          /* number written without fraction/exponent and fits int64 */
  long long integer;
  char *string;            /* NUL-terminated, UTF-8; for strings and for object keys */
  size_t string_len;
  char *key;               /* member name when this value sits in an object */
  size_t n;                /* number of children (array/object) */
  rdt_json **items;
};

/* Parse text[0..len). On success returns a tree owned by the caller (free
** with rdt_json_free). On failure returns NULL and writes a message into
** err (err_size bytes). */
rdt_json *rdt_json_parse(const char *text, size_t len, char *err, size_t err_size);
void rdt_json_free(rdt_json *v);
/* Member of an object by name, or NULL. */
const rdt_json *rdt_json_get(const rdt_json *obj, const char *key);

#endif
