/*
** schema.h - the public domain of a model: features, their bounds or value
** lists, and the class labels. Everything here is public by contract: it comes
** from the options, never from the rows — except a list the curator left as
** rdt_features copied it ({"copied_from_rows": [...]}), which makes the
** model not for release (from_rows).
*/
#ifndef RDT_SCHEMA_H
#define RDT_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#define RDT_MAX_FEATURES 1000
#define RDT_MAX_VALUES 65535
#define RDT_MAX_CLASSES 65534
#define RDT_MAX_NAME 1024

typedef enum { RDT_VALUE_INTEGER = 1, RDT_VALUE_TEXT = 3 } rdt_value_type;

/* A class label or a category value. `text` is the canonical text used for
** matching (decimal digits for integers) and is always set. */
typedef struct rdt_value {
  rdt_value_type type;
  long long integer;
  char *text;
  size_t text_len;
} rdt_value;

/* Open-addressing hash from canonical text to index. */
typedef struct rdt_value_index {
  uint32_t mask;     /* capacity - 1 */
  uint32_t *slots;   /* index + 1, or 0 when free */
} rdt_value_index;

typedef enum { RDT_FEATURE_NUMERIC = 1, RDT_FEATURE_CATEGORICAL = 2 } rdt_feature_type;

typedef struct rdt_feature {
  char *name;
  rdt_feature_type type;
  double min, max;           /* numeric: public bounds, min < max, finite */
  uint32_t n_values;         /* categorical: listed values; code n_values is `other` */
  rdt_value *values;
  rdt_value_index index;
  int copied;                /* options only: "values" is rdt_features' {"copied_from_rows": [...]} */
} rdt_feature;

typedef struct rdt_schema {
  uint32_t n_features;
  rdt_feature *features;
  uint32_t n_classes;
  rdt_value *classes;
  rdt_value_index class_index;
  int classes_copied;        /* options only: "classes" is {"copied_from_rows": [...]} */
  /* Some list of the domain was copied from the private rows (rdt_features):
  ** the model is not for release. Stored in the model (header flag). */
  int from_rows;
} rdt_schema;

void rdt_schema_free(rdt_schema *s);
/* A deep copy with its indexes; 0 (dst empty) when memory runs out. */
int rdt_schema_copy(rdt_schema *dst, const rdt_schema *src);

/* Canonical text of an integer (for matching). buf must hold 24 bytes. */
size_t rdt_int_text(long long v, char *buf);
/* Fill v from an integer / text; returns 0 on allocation failure. */
int rdt_value_set_int(rdt_value *v, long long x);
int rdt_value_set_text(rdt_value *v, const char *text, size_t len);
void rdt_value_free(rdt_value *v);

/* Build the hash over values[0..n). Returns 1 on success, 0 on allocation
** failure, -1 if two values share a canonical text (*dup gets the second). */
int rdt_value_index_build(rdt_value_index *ix, const rdt_value *values, uint32_t n, uint32_t *dup);
void rdt_value_index_free(rdt_value_index *ix);
/* Index of text among values, or -1. */
long rdt_value_index_find(const rdt_value_index *ix, const rdt_value *values, const char *text,
                          size_t len);

/* The categorical rule for text and numbers (sql/reference.md, "Rules for
** row values"); the SQL binding dispatches a value to one of these by type.
**
** The number a text spells under the grammar of SQLite's numeric affinity
** (what a NUMERIC column converts): optional spaces, a sign, digits with an
** optional decimal point (or a point and digits), an optional exponent,
** optional spaces. Returns 1 with *i for an integer that fits 64 bits (no
** point, no exponent), 2 with *d for any other number (correctly rounded,
** possibly infinite), 0 for text that is not a number. Nothing is allocated
** for texts up to 400 bytes; 0 also when memory runs out beyond that. */
int rdt_text_number(const char *s, size_t n, long long *i, double *d);
/* The canonical text of a number into buf (>= 32 bytes): decimal digits when
** it is integral and below 9e15 in magnitude, else 17 significant digits in
** C's notation; 0 when it is not finite (no category is infinite). */
size_t rdt_real_text(double d, char *buf, size_t n);
/* Index of text among values: spelled as a listed value's canonical text,
** else by the number it spells (*by_value set to 1); -1 if neither. */
long rdt_value_match_text(const rdt_value_index *ix, const rdt_value *values, const char *text, size_t len,
                          int *by_value);

/* Build all indexes of a schema (after values are filled). Same returns as
** rdt_value_index_build; on -1, *what is the feature index or -1 for classes. */
int rdt_schema_build_indexes(rdt_schema *s, long *what, uint32_t *dup);

#endif
