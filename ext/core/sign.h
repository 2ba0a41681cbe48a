/*
** sign.h - publisher signatures on model BLOBs (Ed25519, libsodium).
**
** Contract:
**   1. A signed model is the model with a last section holding a publisher
**      note, the signer's Ed25519 public key and a detached signature over
**      every byte of the BLOB before the signature itself: header (with the
**      "signed" flag and final length), privacy facts, schema, trees, leaves,
**      note and key. The checksum then covers the signature too.
**   2. Verification decodes the BLOB (any corruption fails there), checks that
**      the embedded key is the one given, and verifies the signature.
**   3. Nothing is hand-rolled: crypto_sign_detached / _verify_detached.
**   4. Signing is publishing: a non-private model ("epsilon": null), a
**      seeded one (its noise is known to whoever knows the seed) and one
**      whose class or category lists were copied from the rows by
**      rdt_features ("copied_from_rows") are refused.
**   5. Forest models and learner models (learner.h) alike: the same last
**      section, the same header flag.
*/
#ifndef RDT_SIGN_H
#define RDT_SIGN_H

#include <stddef.h>
#include <stdint.h>

/* Sign an unsigned model. Returns a malloc'd BLOB (size in *out_size), or
** NULL with a message in err. */
unsigned char *rdt_model_sign(const unsigned char *model, size_t size, const unsigned char secret_key[64],
                              const char *note, size_t note_len, size_t *out_size, char *err, size_t err_size);
/* 1 if the model decodes, is signed, carries public_key and the signature
** verifies; 0 otherwise. */
int rdt_model_verify(const unsigned char *model, size_t size, const unsigned char public_key[32]);

#endif
