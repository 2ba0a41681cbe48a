/*
** options.h - rdt_train's JSON options -> schema + configuration.
** All validation happens here, before any row is read; messages name the
** offending key and never mention row values.
*/
#ifndef RDT_OPTIONS_H
#define RDT_OPTIONS_H

#include <stddef.h>

#include "forest.h"
#include "json.h"
#include "schema.h"

/* Returns 1 on success (caller owns *schema, free with rdt_schema_free),
** 0 on error with a message in err (no prefix). */
int rdt_options_parse(const char *json, size_t len, rdt_schema *schema, rdt_config *config,
                      char *err, size_t err_size);

/* A "seed" option (integer or string) -> the key of a reproducible stream;
** `domain` keeps the streams of different functions apart. 0 if the JSON
** value is neither. */
int rdt_options_seed_key(const rdt_json *seed, const char *domain, unsigned char key[RDT_RNG_KEYBYTES]);

/* Names compare as SQL names do: ASCII letters without regard to case. */
int rdt_name_equal(const char *a, const char *b);

#endif
