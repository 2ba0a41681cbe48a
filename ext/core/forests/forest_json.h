/*
** forest_json.h - the JSON codec of forest models (RDT, DiPriMe, matrix,
** RDT#): rdt_export's document and rdt_import's way back to the same BLOB,
** byte for byte. The layout is documented in sql/model-format.md. No SQLite:
** the binding parses the text (json.h) and hands over the result.
**
** Contract:
**   1. The export holds everything needed to predict without SQLite (schema,
**      trees, released leaf values, privacy facts) and nothing the model does
**      not hold: it is post-processing of a released model. Doubles are
**      written with the fewest of 15 to 17 digits that read back exactly
**      (json_io.h), subset masks and keys in hex, so that importing an
**      export gives back the model's BLOB.
**   2. The common members are written and read here; each kind's own members
**      (DiPriMe's ε shares, the multiway layout with "matrix" or "rdt#") are
**      reached through its entry in the kind table (forest_kind.h), never by
**      naming an algorithm.
**   3. Import trusts nothing: it builds a forest from the document, encodes
**      it (model.h) and decodes the result, so everything an imported model
**      claims is validated exactly as for a BLOB. It returns the BLOB, or
**      NULL with a message in err; it never crashes on hostile documents it
**      can hold in memory.
**   4. The BLOB is the authority, the readable members its views: import
**      then exports the model it built and refuses a document that is not
**      that export as JSON values (json_io.h contract 5: key order, spacing
**      and number spelling free; a member edited, missing or added refused,
**      named by its path). So "epsilon", "noise_scale", "neighbouring" or
**      any member the builder does not read cannot disagree with the model.
**      The one leniency: a document whose "model_format" names an older
**      minor version (an export of a 1.0 model) is compared with the export
**      at that version, and the BLOB it gives is of the current version.
**   5. The members the builder reads are the model itself: an edit of one
**      (a class, a feature's bound, "epsilon_num") gives another model, which
**      only a signature can tell from the publisher's. So a signed export
**      whose signature does not verify under the key it carries (sign.h) is
**      refused; an unsigned one is what rdt_verify(model, key) is for.
*/
#ifndef RDT_FOREST_JSON_H
#define RDT_FOREST_JSON_H

#include <stddef.h>

#include "forest.h"
#include "../json.h"
#include "../learner.h"

/* The "format" and "format_version" of every export, forest or learner. */
#define RDT_EXPORT_FORMAT "rdt-model-json"
#define RDT_EXPORT_VERSION 1
/* The refusal of contract 5, for forests and learner models alike. */
#define RDT_EXPORT_UNSIGNED_EDIT                                                                                    \
  "the document is signed but its signature does not verify under the key it carries: edited after signing; "   \
  "import the document rdt_export wrote"

/* Appends f's export to out; out->oom says whether memory ran out. */
void rdt_forest_json_export(const rdt_forest *f, rdt_bytes *out);
/* A split kind as exports and rdt_nodes spell it: "numeric", "equals", "subset" or "none". */
const char *rdt_split_kind_name(uint32_t kind);
/* The BLOB (malloc'd, *n bytes) a forest export describes; NULL with err. */
unsigned char *rdt_forest_json_import(const rdt_json *root, size_t *n, char *err, size_t en);

#endif
