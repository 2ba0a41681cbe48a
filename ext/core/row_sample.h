/*
** row_sample.h - a uniform sample of at most k rows of a stream (bottom-k).
**
** Contract:
**   1. Every offered row gets an independent uniform 64-bit priority from the
**      sampler's own stream (rng.h; seeded from the caller's seed key and a
**      purpose label, or the OS CSPRNG). The sample is the k rows with the
**      smallest keys (priority, arrival number): a strict total order, so
**      equal priorities (probability < n^2 / 2^65) are ordered too, the row
**      offered first being smaller. While fewer than k rows were offered,
**      every row is kept.
**   2. Hence the sample is a uniformly random subset of min(n, k) of the n
**      offered rows (up to that tie rule), whatever their values.
**   3. Coupling (used by diprime.h): insert one row x anywhere into an input
**      and give the rows both inputs have in common the same priorities; their
**      keys keep their relative order. The k smallest keys then change by at
**      most one added row (x) and one removed row (the one that was k-th):
**      the two samples are at distance <= 2 under add/remove-one-row.
**      Removing a row is the same pair read the other way.
**   4. The caller stores the rows: each offer says in which slot (0 .. k-1)
**      the row goes, overwriting the row evicted from that slot, or that it is
**      not kept. Slots fill in order 0, 1, 2, ...: `size` slots are in use.
**   5. Memory: 20 bytes per kept row (priority, arrival number, slot), grown
**      by doubling up to k. Priorities and the stream are wiped by rdt_row_sample_free: with
**      the sample, they would tell how many rows were offered.
**   6. No SQLite; no floating point.
*/
#ifndef RDT_ROW_SAMPLE_H
#define RDT_ROW_SAMPLE_H

#include <stdint.h>

#include "rng.h"

#define RDT_ROW_SAMPLE_MAX_K UINT32_MAX

typedef struct rdt_row_sample {
  uint64_t k;        /* at most k rows are kept */
  uint64_t size;     /* rows kept so far (<= k): slots 0 .. size - 1 */
  uint64_t cap;      /* heap entries allocated (<= k) */
  uint64_t offered;  /* rows offered so far: the next arrival number */
  uint64_t *prio;    /* max-heap on (prio, seq): position 0 holds the largest kept key */
  uint64_t *seq;     /* arrival number at each heap position */
  uint32_t *slot;    /* slot of the row at each heap position */
  rdt_rng rng;       /* the priorities' stream */
} rdt_row_sample;

typedef enum { RDT_ROW_SAMPLE_SKIP = 0, RDT_ROW_SAMPLE_KEEP = 1, RDT_ROW_SAMPLE_NOMEM = -1 } rdt_row_sample_result;

/* k in [1, RDT_ROW_SAMPLE_MAX_K]. seed_key: as rdt_rng_init_for (NULL: the
** OS CSPRNG). Returns 0 if k is out of range. Allocates nothing. */
int rdt_row_sample_init(rdt_row_sample *s, uint64_t k, const unsigned char *seed_key, const char *purpose);
/* Offer the next row. KEEP: store it in *slot: the next unused slot while
** fewer than k rows are kept, else the slot of the row it evicts. SKIP: drop
** it. NOMEM: the sampler could not grow; nothing is kept (an error for the
** caller: the sample is no longer the contract's). */
rdt_row_sample_result rdt_row_sample_offer(rdt_row_sample *s, uint64_t *slot);
/* The same with a given priority instead of a draw (tests: ties, coupling). */
rdt_row_sample_result rdt_row_sample_offer_priority(rdt_row_sample *s, uint64_t priority, uint64_t *slot);
/* Wipe and free; safe on a zeroed or initialised sampler, and twice. */
void rdt_row_sample_free(rdt_row_sample *s);

#endif
