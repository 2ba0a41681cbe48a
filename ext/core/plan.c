/* plan.c - shard mode's plan document (plan.h). */
#include "plan.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "json.h"
#include "json_io.h"

/* The options text as a JSON object, or NULL with the error said. */
static rdt_json *parse_options(const char *json, size_t len, char *err, size_t en) {
  char jerr[128];
  rdt_json *root = rdt_json_parse(json, len, jerr, sizeof jerr);
  if (root && root->type == RDT_JSON_OBJECT) return root;
  snprintf(err, en, "options must be a JSON object%s%s", root ? "" : ": ", root ? "" : jerr);
  rdt_json_free(root);
  return NULL;
}

int rdt_plan_canonical_options(const char *json, size_t len, const unsigned char key[32], rdt_bytes *out, char *err,
                               size_t en) {
  memset(out, 0, sizeof *out);
  rdt_json *root = parse_options(json, len, err, en);
  if (!root) return 0;
  rdt_json_put_char(out, '{');
  int first = 1;
  for (size_t i = 0; i < root->n; i++) {
    const rdt_json *v = root->items[i];
    if (v->key[0] == '_' || !strcmp(v->key, "ledger") || !strcmp(v->key, "note") || !strcmp(v->key, "structure_key") ||
        !strcmp(v->key, "federated"))
      continue;
    if (!first) rdt_json_put_char(out, ',');
    first = 0;
    rdt_json_put_string(out, v->key, strlen(v->key));
    rdt_json_put_char(out, ':');
    rdt_json_put_tree(out, v);
  }
  if (!first) rdt_json_put_char(out, ',');
  rdt_bytes_text(out, "\"structure_key\":");
  rdt_json_put_hex(out, key, 32);
  rdt_json_put_char(out, '}');
  rdt_json_free(root);
  if (out->oom) {
    rdt_bytes_free(out);
    snprintf(err, en, "out of memory");
    return 0;
  }
  return 1;
}

/* Contract 6: a roster of n distinct valid X25519 public keys. */
static int roster_ok(const unsigned char *sites, uint32_t n) {
  unsigned char q[crypto_scalarmult_BYTES], one[crypto_scalarmult_SCALARBYTES] = {1};
  if (n < 2 || n > RDT_MASK_MAX_SITES) return 0;
  for (uint32_t i = 0; i < n; i++) {
    if (crypto_scalarmult(q, one, sites + (size_t)i * 32) != 0) return 0; /* a low-order point */
    for (uint32_t j = 0; j < i; j++)
      if (memcmp(sites + (size_t)i * 32, sites + (size_t)j * 32, 32) == 0) return 0;
  }
  return 1;
}

/* The hex keys of a JSON array into a new roster. */
static int read_roster(const rdt_json *arr, unsigned char **sites, uint32_t *n) {
  *sites = NULL;
  *n = 0;
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n < 2 || arr->n > RDT_MASK_MAX_SITES) return 0;
  unsigned char *keys = malloc(arr->n * 32);
  if (!keys) return 0;
  for (size_t i = 0; i < arr->n; i++) {
    const rdt_json *v = arr->items[i];
    size_t got = 0;
    if (v->type != RDT_JSON_STRING || v->string_len != 64 ||
        sodium_hex2bin(keys + i * 32, 32, v->string, 64, NULL, &got, NULL) != 0 || got != 32) {
      free(keys);
      return 0;
    }
  }
  if (!roster_ok(keys, (uint32_t)arr->n)) {
    free(keys);
    return 0;
  }
  *sites = keys;
  *n = (uint32_t)arr->n;
  return 1;
}

int rdt_plan_federated(const char *json, size_t len, rdt_bytes *out, unsigned char **sites, uint32_t *n_sites,
                       char *err, size_t en) {
  memset(out, 0, sizeof *out);
  *sites = NULL;
  *n_sites = 0;
  rdt_json *root = parse_options(json, len, err, en);
  if (!root) return 0;
  const rdt_json *f = rdt_json_get(root, "federated");
  int ok = 1;
  if (f && (f->type != RDT_JSON_OBJECT || f->n != 1 || !read_roster(rdt_json_get(f, "sites"), sites, n_sites))) {
    snprintf(err, en, "\"federated\" must be {\"sites\": [...]}: the sites' X25519 public keys (rdt_site_keypair), 64 "
             "hex digits each, 2 to %d of them, all different", RDT_MASK_MAX_SITES);
    ok = 0;
  }
  if (ok) {
    rdt_json_put_char(out, '{');
    int first = 1;
    for (size_t i = 0; i < root->n; i++) {
      const rdt_json *v = root->items[i];
      if (!strcmp(v->key, "federated")) continue;
      if (!first) rdt_json_put_char(out, ',');
      first = 0;
      rdt_json_put_string(out, v->key, strlen(v->key));
      rdt_json_put_char(out, ':');
      rdt_json_put_tree(out, v);
    }
    rdt_json_put_char(out, '}');
    if (out->oom) {
      snprintf(err, en, "out of memory");
      ok = 0;
    }
  }
  rdt_json_free(root);
  if (!ok) {
    rdt_bytes_free(out);
    free(*sites);
    *sites = NULL;
    *n_sites = 0;
  }
  return ok;
}

void rdt_plan_seal(rdt_plan *p) {
  rdt_digest d;
  rdt_digest_init(&d, "rdt-plan-v1");
  rdt_digest_u64(&d, RDT_PLAN_FORMAT);
  rdt_digest_bytes(&d, p->version, strlen(p->version));
  rdt_digest_bytes(&d, p->federated ? "federated" : "shard", p->federated ? 9 : 5);
  rdt_digest_bytes(&d, p->sites, (size_t)p->n_sites * 32);
  rdt_digest_bytes(&d, p->learner, strlen(p->learner));
  rdt_digest_u64(&d, p->rounds);
  rdt_digest_bytes(&d, p->options, p->options_len);
  rdt_digest_u64(&d, p->counters);
  rdt_digest_bytes(&d, p->state_digest, sizeof p->state_digest);
  rdt_digest_bytes(&d, p->ledger, strlen(p->ledger));
  rdt_digest_final(&d, p->digest);
}

void rdt_plan_write(const rdt_plan *p, rdt_bytes *out) {
  rdt_json_putf(out, "{\"rdt_plan\":%u,\"rdt_version\":", RDT_PLAN_FORMAT);
  rdt_json_put_string(out, p->version, strlen(p->version));
  rdt_bytes_text(out, p->federated ? ",\"mode\":\"federated\",\"learner\":" : ",\"mode\":\"shard\",\"learner\":");
  rdt_json_put_string(out, p->learner, strlen(p->learner));
  rdt_json_putf(out, ",\"rounds\":%u,\"options\":", p->rounds);
  rdt_bytes_put(out, p->options, p->options_len);
  rdt_json_putf(out, ",\"counters\":%llu,\"state_digest\":", (unsigned long long)p->counters);
  rdt_json_put_hex(out, p->state_digest, sizeof p->state_digest);
  if (p->federated) {
    rdt_bytes_text(out, ",\"sites\":[");
    for (uint32_t i = 0; i < p->n_sites; i++) {
      if (i) rdt_json_put_char(out, ',');
      rdt_json_put_hex(out, p->sites + (size_t)i * 32, 32);
    }
    rdt_bytes_text(out, "],\"noise\":\"laplace_each\"");
  }
  rdt_bytes_text(out, ",\"ledger\":");
  if (p->ledger[0]) rdt_json_put_string(out, p->ledger, strlen(p->ledger));
  else rdt_bytes_text(out, "null");
  if (p->charge) rdt_json_putf(out, ",\"charge\":%lld", (long long)p->charge);
  else rdt_bytes_text(out, ",\"charge\":null");
  rdt_bytes_text(out, ",\"digest\":");
  rdt_json_put_hex(out, p->digest, sizeof p->digest);
  rdt_json_put_char(out, '}');
}

/* A string member of at most size - 1 bytes into out. */
static int read_text(rdt_json_reader *r, const rdt_json *root, const char *key, char *out, size_t size) {
  const rdt_json *v = rdt_json_member(r, root, key, RDT_JSON_STRING);
  if (!v) return 0;
  if (v->string_len >= size || strlen(v->string) != v->string_len) return rdt_json_bad(r, "a text field is too long");
  memcpy(out, v->string, v->string_len + 1);
  return 1;
}

int rdt_plan_read(const char *json, size_t len, rdt_plan *p, char *err, size_t en) {
  char jerr[128];
  memset(p, 0, sizeof *p);
  rdt_json *root = rdt_json_parse(json, len, jerr, sizeof jerr);
  if (!root || root->type != RDT_JSON_OBJECT || !rdt_json_get(root, "rdt_plan")) {
    snprintf(err, en, "not a plan of rdt_plan (a JSON object with \"rdt_plan\")%s%s", root ? "" : ": ",
             root ? "" : jerr);
    rdt_json_free(root);
    return 0;
  }
  char msg[200] = "";
  rdt_json_reader r = {msg, sizeof msg, 0};
  uint64_t format = 0, rounds = 0;
  char mode[16] = "";
  unsigned char digest[32];
  const rdt_json *options = NULL, *ledger = rdt_json_get(root, "ledger"), *charge = rdt_json_get(root, "charge");
  int ok = rdt_json_member_uint(&r, root, "rdt_plan", UINT32_MAX, &format) &&
           read_text(&r, root, "rdt_version", p->version, sizeof p->version) &&
           read_text(&r, root, "mode", mode, sizeof mode) &&
           read_text(&r, root, "learner", p->learner, sizeof p->learner) &&
           rdt_json_member_uint(&r, root, "rounds", UINT32_MAX, &rounds) &&
           (options = rdt_json_member(&r, root, "options", RDT_JSON_OBJECT)) != NULL &&
           rdt_json_member_uint(&r, root, "counters", RDT_PARTIAL_MAX_COUNTERS, &p->counters) &&
           rdt_json_hex(&r, rdt_json_get(root, "state_digest"), p->state_digest, 32) &&
           rdt_json_hex(&r, rdt_json_get(root, "digest"), digest, 32);
  if (ok && ledger && ledger->type != RDT_JSON_NULL) ok = read_text(&r, root, "ledger", p->ledger, sizeof p->ledger);
  else if (ok && !ledger) ok = rdt_json_bad(&r, "\"ledger\" is missing");
  if (ok && (!charge || (charge->type != RDT_JSON_NULL &&
                         (charge->type != RDT_JSON_NUMBER || !charge->is_integer || charge->integer < 1))))
    ok = rdt_json_bad(&r, "\"charge\" is missing or not a charge's id");
  if (ok && charge->type == RDT_JSON_NUMBER) p->charge = charge->integer;
  if (ok && (p->charge != 0) != (p->ledger[0] != 0)) ok = rdt_json_bad(&r, "\"ledger\" and \"charge\" disagree");
  if (ok && format != RDT_PLAN_FORMAT) ok = rdt_json_bad(&r, "unsupported plan format");
  p->federated = ok && strcmp(mode, "federated") == 0;
  if (ok && !p->federated && strcmp(mode, "shard") != 0)
    ok = rdt_json_bad(&r, "unsupported plan mode (this build writes \"shard\" and \"federated\")");
  if (ok && p->federated) {
    const rdt_json *noise = rdt_json_get(root, "noise");
    if (!read_roster(rdt_json_get(root, "sites"), &p->sites, &p->n_sites))
      ok = rdt_json_bad(&r, "\"sites\" is not a roster of 2 or more distinct X25519 public keys");
    else if (!noise || noise->type != RDT_JSON_STRING || strcmp(noise->string, "laplace_each") != 0)
      ok = rdt_json_bad(&r, "\"noise\" must be \"laplace_each\"");
  } else if (ok && (rdt_json_get(root, "sites") || rdt_json_get(root, "noise"))) {
    ok = rdt_json_bad(&r, "a shard plan has no \"sites\" or \"noise\"");
  }
  if (ok && (rounds < 1 || rounds > RDT_PLAN_MAX_ROUNDS)) ok = rdt_json_bad(&r, "\"rounds\" is out of range");
  p->rounds = (uint32_t)rounds;
  rdt_bytes text = {0};
  if (ok) {
    rdt_json_put_tree(&text, options);
    rdt_json_put_char(&text, 0);
    if (text.oom) ok = rdt_json_bad(&r, "out of memory");
  }
  rdt_json_free(root);
  if (!ok) {
    snprintf(err, en, "not a plan of rdt_plan: %s", msg);
    rdt_bytes_free(&text);
    free(p->sites);
    memset(p, 0, sizeof *p);
    return 0;
  }
  p->options = (char *)text.p;
  p->options_len = text.n - 1;
  if (strcmp(p->version, RDT_VERSION_STRING) != 0) {
    snprintf(err, en, "the plan was written by rdt %s and this is rdt %s: the coordinator and every site must run one "
             "version (the same key must draw the same structure everywhere)", p->version, RDT_VERSION_STRING);
    rdt_plan_free(p);
    return 0;
  }
  rdt_plan_seal(p);
  if (sodium_memcmp(digest, p->digest, sizeof digest) != 0) {
    snprintf(err, en, "the plan's digest does not match its contents: it was edited (or is not from rdt_plan)");
    rdt_plan_free(p);
    return 0;
  }
  return 1;
}

void rdt_plan_free(rdt_plan *p) {
  free(p->options);
  free(p->sites);
  memset(p, 0, sizeof *p);
}
