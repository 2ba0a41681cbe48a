/*
** mask.h - the pairwise masks of federated mode: each site adds to its
** vector a mask that hides it from everyone else, and the masks of all the
** plan's sites cancel in their sum. No SQLite.
**
** Contract:
**   1. Keys are X25519 (libsodium crypto_scalarmult): 32-byte secret and
**      public keys. The roster is the sites' public keys, in the plan's
**      order; a site is its index there.
**   2. The mask key of sites i and j (i != j) is k_ij = BLAKE2b-256 of a
**      label, X25519(sk_i, pk_j) (= X25519(sk_j, pk_i)), the smaller and the
**      larger of pk_i and pk_j, and the context (the plan's digest and the
**      round): both sites compute it, nobody else can (Diffie-Hellman), and
**      it is fresh for every plan and round, so no mask is ever reused.
**   3. Its stream is XChaCha20 keyed by k_ij (zero nonce: the key is used
**      once), read as n little-endian u64.
**   4. Site i adds, modulo 2^64, the stream of k_ij for every j after it in
**      the roster and subtracts it for every j before it. Over all sites,
**      each stream is added once and subtracted once: the masks cancel
**      exactly, and only when every site's vector is in the sum (a missing
**      site leaves the others' masks in it: the sum is noise, not a result).
**   5. Without k_ij for some j, site i's masked vector cannot be told from
**      uniform (XChaCha20 as a PRF): the coordinator alone learns nothing
**      from one vector. A coalition holding every k_ij of site i (all the
**      other sites) removes its mask: hiding one site's vector needs a
**      second honest site.
**   6. Refused (0, the vector unchanged): a roster key that is a low-order
**      point (X25519 gives all zeros), a repeated roster key, and a secret
**      key whose public key is not the roster's entry `me`.
*/
#ifndef RDT_MASK_H
#define RDT_MASK_H

#include <stddef.h>
#include <stdint.h>

#define RDT_MASK_KEYBYTES 32
#define RDT_MASK_MAX_SITES 1024

/* A fresh X25519 key pair (OS randomness). */
void rdt_mask_keypair(unsigned char pk[RDT_MASK_KEYBYTES], unsigned char sk[RDT_MASK_KEYBYTES]);
/* The public key of a secret key. */
void rdt_mask_public(const unsigned char sk[RDT_MASK_KEYBYTES], unsigned char pk[RDT_MASK_KEYBYTES]);
/* The index of pk in the roster, or -1. */
long rdt_mask_find(const unsigned char *roster, uint32_t n_sites, const unsigned char pk[RDT_MASK_KEYBYTES]);
/* Contract 4: adds site me's mask to vec (n values, mod 2^64). 1, or 0
** (vec unchanged) on a refused key (contract 6) or when memory runs out. */
int rdt_mask_apply(uint64_t *vec, uint64_t n, const unsigned char *roster, uint32_t n_sites, uint32_t me,
                   const unsigned char sk[RDT_MASK_KEYBYTES], const unsigned char context[32], uint32_t round);

#endif
