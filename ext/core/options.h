/*
** options.h - rdt_train's JSON options -> schema + configuration.
** All validation happens here, before any row is read; messages name the
** offending key and never mention row values.
*/
#ifndef RDT_OPTIONS_H
#define RDT_OPTIONS_H

#include <stddef.h>

#include "forest.h"
#include "schema.h"

/* Returns 1 on success (caller owns *schema, free with rdt_schema_free),
** 0 on error with a message in err (no prefix). */
int rdt_options_parse(const char *json, size_t len, rdt_schema *schema, rdt_config *config,
                      char *err, size_t err_size);

#endif
