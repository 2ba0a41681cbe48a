/*
** fuzz_import.c - libFuzzer target for rdt_import's core: a hostile export
** document (the bytes with their length, no NUL terminator, so an over-read
** is caught by ASan) through rdt_json_parse, rdt_forest_json_import and
** rdt_json_same_export (json_io.h contract 5, forest_json.h contracts 3-5).
**
** Properties beyond "no crash, no sanitizer report, no leak":
**   1. A refusal has a non-empty message.
**   2. An accepted document gives a BLOB that decodes, and the export of the
**      decoded model imports back to the same bytes (a fixed point).
**   3. The comparison is reflexive: every parsed document equals the text it
**      was parsed from, repeated members included.
**   4. Compared with a fixed export it is either equal or refused with a
**      message that names the document.
*/
#include <stddef.h>
#include <stdint.h>

#include "core/forests/forest_json.h"
#include "core/json.h"
#include "core/json_io.h"
#include "../tests/fuzz/fuzz_common.h"

/* A small, complete forest export (one tree of depth 1, non-private). */
static const char fixed_export[] =
    "{\"format\":\"rdt-model-json\",\"format_version\":1,\"model_format\":\"1.1\",\"model_id\":"
    "\"00000000000000000000000000000000\",\"seeded\":false,\"privacy\":{\"private\":false,\"neighbouring\":"
    "\"add/remove one row\"},\"algorithm\":\"rdt\",\"task\":\"classification\",\"trees\":1,\"depth\":1,\"vote\":2,"
    "\"splits\":1,\"categorical\":1,\"auto_depth\":0,\"epsilon_count_num\":0,\"row_count\":0,\"candidates\":0,"
    "\"partition\":false,\"rho\":0.0,\"target\":{\"min\":0.0,\"max\":0.0},\"noise_scale\":0.0,\"features\":[{\"name\":"
    "\"x\",\"type\":\"numeric\",\"min\":0.0,\"max\":1.0}],\"classes\":[0,1],\"nodes\":[[[\"numeric\",0,0.5]]],"
    "\"leaves\":[[[1,0],[0,1]]],\"signature\":null}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char jerr[128], err[512];
  rdt_json *doc = rdt_json_parse((const char *)data, size, jerr, sizeof jerr);
  if (!doc) {
    CHECK(jerr[0] != 0);
    return 0;
  }
  err[0] = 0;
  CHECK(rdt_json_same_export(doc, data, size, err, sizeof err)); /* 3 */
  err[0] = 0;
  if (!rdt_json_same_export(doc, (const unsigned char *)fixed_export, sizeof fixed_export - 1, err, sizeof err)) /* 4 */
    CHECK(strncmp(err, "the document", 12) == 0);
  size_t n = 0;
  err[0] = 0;
  unsigned char *blob = rdt_forest_json_import(doc, &n, err, sizeof err);
  rdt_json_free(doc);
  if (!blob) {
    CHECK(err[0] != 0); /* 1 */
    return 0;
  }
  rdt_forest f; /* 2 */
  CHECK(rdt_model_decode(blob, n, &f, err, sizeof err));
  rdt_bytes o = {0};
  rdt_forest_json_export(&f, &o);
  rdt_forest_free(&f);
  CHECK(!o.oom);
  rdt_json *again = rdt_json_parse((const char *)o.p, o.n, jerr, sizeof jerr);
  CHECK(again);
  size_t n2 = 0;
  unsigned char *blob2 = rdt_forest_json_import(again, &n2, err, sizeof err);
  CHECK(blob2 && n2 == n && memcmp(blob2, blob, n) == 0);
  rdt_json_free(again);
  rdt_bytes_free(&o);
  free(blob2);
  free(blob);
  return 0;
}
