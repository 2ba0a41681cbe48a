/* digest.c - digests of what a training state means (digest.h). */
#include "digest.h"

#include <string.h>

void rdt_digest_init(rdt_digest *d, const char *label) {
  crypto_generichash_init(&d->st, NULL, 0, RDT_DIGEST_BYTES);
  rdt_digest_bytes(d, label, strlen(label));
}

void rdt_digest_u64(rdt_digest *d, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  crypto_generichash_update(&d->st, b, sizeof b);
}

void rdt_digest_f64(rdt_digest *d, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  rdt_digest_u64(d, u);
}

void rdt_digest_bytes(rdt_digest *d, const void *p, size_t n) {
  rdt_digest_u64(d, (uint64_t)n);
  if (n) crypto_generichash_update(&d->st, (const unsigned char *)p, n);
}

static void digest_value(rdt_digest *d, const rdt_value *v) {
  rdt_digest_u64(d, (uint64_t)v->type);
  rdt_digest_bytes(d, v->text, v->text_len);
}

void rdt_digest_schema(rdt_digest *d, const rdt_schema *s) {
  rdt_digest_u64(d, s->n_classes);
  for (uint32_t k = 0; k < s->n_classes; k++) digest_value(d, &s->classes[k]);
  rdt_digest_u64(d, s->n_features);
  for (uint32_t j = 0; j < s->n_features; j++) {
    const rdt_feature *ft = &s->features[j];
    rdt_digest_bytes(d, ft->name, ft->name ? strlen(ft->name) : 0);
    rdt_digest_u64(d, (uint64_t)ft->type);
    if (ft->type == RDT_FEATURE_NUMERIC) {
      rdt_digest_f64(d, ft->min);
      rdt_digest_f64(d, ft->max);
    } else {
      rdt_digest_u64(d, ft->n_values);
      for (uint32_t v = 0; v < ft->n_values; v++) digest_value(d, &ft->values[v]);
    }
  }
}

void rdt_digest_final(rdt_digest *d, unsigned char out[RDT_DIGEST_BYTES]) {
  crypto_generichash_final(&d->st, out, RDT_DIGEST_BYTES);
  sodium_memzero(d, sizeof *d);
}
