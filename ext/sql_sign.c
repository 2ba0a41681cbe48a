/*
** sql_sign.c - rdt_keypair(), rdt_sign(model, secret_key [, note]),
** rdt_verify(model, public_key): publisher signatures (core: sign.h).
** Keys are BLOBs (64-byte secret, 32-byte public) or the same as hex TEXT.
*/
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/sign.h"
#include "rdt_sql.h"

/* Read a key of n bytes from a BLOB or hex TEXT argument. */
static int key_arg(sqlite3_value *v, unsigned char *out, size_t n) {
  if (sqlite3_value_type(v) == SQLITE_BLOB) {
    if ((size_t)sqlite3_value_bytes(v) != n) return 0;
    memcpy(out, sqlite3_value_blob(v), n);
    return 1;
  }
  if (sqlite3_value_type(v) == SQLITE_TEXT) {
    const char *hex = (const char *)sqlite3_value_text(v);
    size_t len = (size_t)sqlite3_value_bytes(v), got = 0;
    return hex && len == 2 * n && sodium_hex2bin(out, n, hex, len, NULL, &got, NULL) == 0 && got == n;
  }
  return 0;
}

void rdt_keypair_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  char pk_hex[2 * sizeof pk + 1], sk_hex[2 * sizeof sk + 1];
  crypto_sign_keypair(pk, sk);
  sodium_bin2hex(pk_hex, sizeof pk_hex, pk, sizeof pk);
  sodium_bin2hex(sk_hex, sizeof sk_hex, sk, sizeof sk);
  char *json = sqlite3_mprintf("{\"public_key\":\"%s\",\"secret_key\":\"%s\"}", pk_hex, sk_hex);
  sodium_memzero(sk, sizeof sk);
  sodium_memzero(sk_hex, sizeof sk_hex);
  if (!json) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, json, -1, SQLITE_TRANSIENT);
  sodium_memzero(json, strlen(json));
  sqlite3_free(json);
}

void rdt_sign_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  char err[256];
  if (argc != 2 && argc != 3) {
    sqlite3_result_error(ctx, "rdt_sign: expected rdt_sign(model, secret_key [, note])", -1);
    return;
  }
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
    sqlite3_result_error(ctx, "rdt_sign: the model must be a BLOB made by rdt_train", -1);
    return;
  }
  if (!key_arg(argv[1], sk, sizeof sk)) {
    sqlite3_result_error(ctx, "rdt_sign: the secret key must be the 64-byte Ed25519 secret key, as a BLOB or 128 hex "
                              "digits (the \"secret_key\" of rdt_keypair())", -1);
    return;
  }
  const char *note = "";
  size_t note_len = 0;
  if (argc == 3 && sqlite3_value_type(argv[2]) != SQLITE_NULL) {
    if (sqlite3_value_type(argv[2]) != SQLITE_TEXT) {
      sodium_memzero(sk, sizeof sk);
      sqlite3_result_error(ctx, "rdt_sign: the publisher note must be TEXT", -1);
      return;
    }
    note = (const char *)sqlite3_value_text(argv[2]);
    note_len = (size_t)sqlite3_value_bytes(argv[2]);
  }
  size_t n;
  unsigned char *signed_model = rdt_model_sign(sqlite3_value_blob(argv[0]), (size_t)sqlite3_value_bytes(argv[0]), sk,
                                               note ? note : "", note ? note_len : 0, &n, err, sizeof err);
  sodium_memzero(sk, sizeof sk);
  if (!signed_model) {
    rdt_sql_error(ctx, "rdt_sign", err);
    return;
  }
  sqlite3_result_blob64(ctx, signed_model, n, free);
}

void rdt_verify_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  if (!key_arg(argv[1], pk, sizeof pk)) {
    sqlite3_result_error(ctx, "rdt_verify: the public key must be the 32-byte Ed25519 public key, as a BLOB or 64 "
                              "hex digits (the \"public_key\" of rdt_keypair())", -1);
    return;
  }
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
    sqlite3_result_int(ctx, 0); /* not a model: certainly not one this key signed */
    return;
  }
  sqlite3_result_int(ctx, rdt_model_verify(sqlite3_value_blob(argv[0]), (size_t)sqlite3_value_bytes(argv[0]), pk));
}
