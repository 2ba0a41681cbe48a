/* sign.c - Ed25519 signatures over model BLOBs; see sign.h. */
#include "sign.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learner.h"
#include "model.h"

/* The checks of Contract 4, for either kind of model. */
static int publishable(int is_signed, int is_private, int seeded, int from_rows, size_t note_len, const char *note,
                       char *err, size_t err_size) {
  if (is_signed) {
    snprintf(err, err_size, "the model is already signed");
    return 0;
  }
  if (!is_private) { /* signing is publishing: exact counts are never published */
    snprintf(err, err_size, "refusing to sign a non-private model (trained with \"epsilon\": null): its counts are "
                            "exact and must not be published");
    return 0;
  }
  if (seeded) {
    snprintf(err, err_size, "refusing to sign a seeded model: whoever knows the seed can remove its noise, so it is "
                            "not a private release; train it without \"seed\"");
    return 0;
  }
  if (from_rows) {
    snprintf(err, err_size, "refusing to sign a model whose classes or category values are the lists rdt_features "
                            "copied from the private rows (\"copied_from_rows\"): publishing it publishes them; "
                            "retrain with the public lists");
    return 0;
  }
  if (note_len > RDT_MAX_NOTE || (note_len && memchr(note, 0, note_len))) {
    snprintf(err, err_size, "the publisher note must be text of at most %d bytes", RDT_MAX_NOTE);
    return 0;
  }
  return 1;
}

/* Fills the signature of an encoded signed model, then its checksum. */
static unsigned char *seal(unsigned char *out, size_t n, const unsigned char secret_key[64], size_t *out_size) {
  size_t sig_at = n - RDT_CHECKSUM_BYTES - RDT_SIGNATURE_BYTES;
  crypto_sign_detached(out + sig_at, NULL, out, sig_at, secret_key);
  crypto_generichash(out + n - RDT_CHECKSUM_BYTES, RDT_CHECKSUM_BYTES, out, n - RDT_CHECKSUM_BYTES, NULL, 0);
  *out_size = n;
  return out;
}

static unsigned char *sign_learned(const unsigned char *model, size_t size, const unsigned char secret_key[64],
                                   const char *note, size_t note_len, size_t *out_size, char *err, size_t err_size) {
  rdt_learned m;
  if (!rdt_learned_decode(model, size, rdt_learner_by_id, &m, err, err_size)) return NULL;
  if (!publishable(m.is_signed, m.common.is_private, m.common.seeded, m.schema.from_rows, note_len, note, err, err_size)) {
    rdt_learned_free(&m);
    return NULL;
  }
  if (!(m.note = malloc(note_len + 1))) {
    snprintf(err, err_size, "out of memory");
    rdt_learned_free(&m);
    return NULL;
  }
  if (note_len) memcpy(m.note, note, note_len);
  m.note[note_len] = 0;
  crypto_sign_ed25519_sk_to_pk(m.public_key, secret_key);
  m.is_signed = 1; /* signature bytes zero for now: filled by seal */
  size_t n;
  unsigned char *out = rdt_learned_encode(&m, &n);
  rdt_learned_free(&m);
  if (!out) {
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  return seal(out, n, secret_key, out_size);
}

unsigned char *rdt_model_sign(const unsigned char *model, size_t size, const unsigned char secret_key[64],
                              const char *note, size_t note_len, size_t *out_size, char *err, size_t err_size) {
  rdt_forest f;
  if (rdt_model_is_learned(model, size)) return sign_learned(model, size, secret_key, note, note_len, out_size, err, err_size);
  if (!rdt_model_decode(model, size, &f, err, err_size)) return NULL;
  if (!publishable(f.is_signed, f.config.is_private, f.config.seeded, f.schema.from_rows, note_len, note, err, err_size)) {
    rdt_forest_free(&f);
    return NULL;
  }
  f.note = malloc(note_len + 1);
  if (!f.note) {
    rdt_forest_free(&f);
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  if (note_len) memcpy(f.note, note, note_len);
  f.note[note_len] = 0;
  crypto_sign_ed25519_sk_to_pk(f.public_key, secret_key);
  f.is_signed = 1; /* signature bytes zero for now: filled below */
  size_t n;
  unsigned char *out = rdt_model_encode(&f, &n);
  rdt_forest_free(&f);
  if (!out) {
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  return seal(out, n, secret_key, out_size);
}

int rdt_model_verify(const unsigned char *model, size_t size, const unsigned char public_key[32]) {
  rdt_forest f;
  char err[256];
  int ok;
  if (rdt_model_is_learned(model, size)) {
    rdt_learned m;
    if (!rdt_learned_decode(model, size, rdt_learner_by_id, &m, err, sizeof err)) return 0;
    ok = m.is_signed && sodium_memcmp(m.public_key, public_key, 32) == 0;
    rdt_learned_free(&m);
  } else {
    if (!rdt_model_decode(model, size, &f, err, sizeof err)) return 0;
    ok = f.is_signed && sodium_memcmp(f.public_key, public_key, 32) == 0;
    rdt_forest_free(&f);
  }
  if (!ok) return 0;
  size_t sig_at = size - RDT_CHECKSUM_BYTES - RDT_SIGNATURE_BYTES;
  return crypto_sign_verify_detached(model + sig_at, model, sig_at, public_key) == 0;
}
