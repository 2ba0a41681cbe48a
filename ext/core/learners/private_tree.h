/* private_tree.h - the differentially private decision tree on public bins
** ("private_tree", id 6, classification); its privacy contract and payload
** layout open private_tree.c. */
#ifndef RDT_LEARNER_PRIVATE_TREE_H
#define RDT_LEARNER_PRIVATE_TREE_H

#include "../learner.h"

#define RDT_PT_ID 6u
#define RDT_PT_DEFAULT_BINS 32u
#define RDT_PT_MAX_BINS 64u
#define RDT_PT_MAX_DEPTH 8u
/* Counters of one node's histogram (every bin of every feature, times the
** classes) and of all leaves together, at most: a schema that would need
** more is a parameter mistake, refused by start(). */
#define RDT_PT_MAX_COUNTERS ((uint64_t)1 << 26)

extern const rdt_learner rdt_learner_private_tree;

/* finish() with the "auto" depth's row count noised at count_eps instead of
** the share the model records: for the audit's broken twin only (a count
** less noisy than claimed). */
int rdt_private_tree_finish_count_eps(void *st, rdt_rng *noise, rdt_eps count_eps);

#endif
