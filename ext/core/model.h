/*
** model.h - the model BLOB (format documented in sql/model-format.md).
**
** Contract:
**   1. Encoding is deterministic: the same forest gives the same bytes.
**   2. Decoding never reads outside the buffer, checks every length, count,
**      index and enum, verifies the BLAKE2b checksum before anything else is
**      trusted, and fails with a message instead of crashing on any input.
*/
#ifndef RDT_MODEL_H
#define RDT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "forests/forest.h"
#include "learner.h"

#define RDT_FORMAT_MAJOR 1
/* The newest minor version written: 1.2 for a model that records its label
** column's name (LABL), 1.1 for every other. */
#define RDT_FORMAT_MINOR 2
#define RDT_MODEL_MAGIC "RDTMODEL"
#define RDT_HEADER_BYTES 48
#define RDT_CHECKSUM_BYTES 32
#define RDT_MODEL_ID_OFFSET 12

#define RDT_MODEL_FLAG_SEEDED 1u
#define RDT_MODEL_FLAG_NONPRIVATE 2u
#define RDT_MODEL_FLAG_SIGNED 4u
/* 1.1: the structure depends on the private rows (rdt_config_structure_from_rows). */
#define RDT_MODEL_FLAG_STRUCTURE_FROM_ROWS 8u
/* 1.1: a model of a registered learner (learner.h), not a forest. */
#define RDT_MODEL_FLAG_LEARNER 16u
/* 1.1: a class or category list was copied from the private rows
** (rdt_features' "copied_from_rows"): not for release. */
#define RDT_MODEL_FLAG_DOMAIN_FROM_ROWS 32u
#define RDT_MAX_NOTE 4096
/* A signed model ends with its signature then the checksum. */
#define RDT_SIGNATURE_BYTES 64

/* Whether a label column's name is recorded in the model (LABL, format
** 1.2): any name but the default "label" (ASCII case ignored). A forest's
** is its config.label, a learner model's its label. */
int rdt_model_has_label(const char *label);

/* Exact encoded size, computable before training (for size checks). */
uint64_t rdt_model_size(const rdt_forest *f);
/* Encode into a malloc'd buffer. Returns NULL on allocation failure, or
** when f->config.cancel stops the encoding. */
unsigned char *rdt_model_encode(const rdt_forest *f, size_t *size);
/* Decode and validate. Returns 1 and fills *f (prepared for prediction), or
** 0 with a message in err. */
int rdt_model_decode(const unsigned char *buf, size_t size, rdt_forest *f, char *err, size_t err_size);

/* A model of a registered learner (learner.h): its released state with the
** schema and the common facts. */
typedef struct rdt_learned {
  const rdt_learner *learner;
  void *state;
  rdt_schema schema;
  rdt_learn_common common;
  unsigned char model_id[16];
  uint32_t format_minor;
  /* The label column's name at training ("" or "label": the default). */
  char label[RDT_MAX_NAME + 1];
  /* Publisher's signature (sign.h), as for forests: a last SIGN section. */
  int is_signed;
  char *note;
  unsigned char public_key[32];
  unsigned char signature[64];
} rdt_learned;

/* Whether a BLOB's header says it holds a learner model (no validation). */
int rdt_model_is_learned(const unsigned char *buf, size_t size);
/* Encode (malloc'd; NULL when memory runs out) / decode and validate. */
unsigned char *rdt_learned_encode(const rdt_learned *m, size_t *size);
/* by_id finds a learner by its stored id (the registry, rdt_learner_by_id):
** the container knows no learner itself. */
typedef const rdt_learner *(*rdt_learner_lookup)(uint32_t id);
int rdt_learned_decode(const unsigned char *buf, size_t size, rdt_learner_lookup by_id, rdt_learned *m, char *err,
                       size_t err_size);
/* Frees (the learner wipes its state) and zeroes m. */
void rdt_learned_free(rdt_learned *m);

#endif
