/* naive_bayes.h - the differentially private naive Bayes learner ("naive_bayes",
** id 2); its privacy contract and payload layout open naive_bayes.c. */
#ifndef RDT_LEARNER_NAIVE_BAYES_H
#define RDT_LEARNER_NAIVE_BAYES_H

#include "../learner.h"

#define RDT_NB_ID 2u
#define RDT_NB_DEFAULT_BINS 10u
#define RDT_NB_MAX_BINS 1024u
/* Counters of one state at most (class counts plus every table cell): a
** schema whose tables would not fit is a parameter mistake, refused by start(). */
#define RDT_NB_MAX_COUNTERS ((uint64_t)1 << 26)

extern const rdt_learner rdt_learner_naive_bayes;

/* Contract 6c of naive_bayes.c: the readout (0 "bayes", 1 "moments") chosen
** from their correct predictions on the training rows, by permute-and-flip
** with eps (sensitivity 1, monotone) when private, else the larger count
** ("bayes" on a tie); -1 when the coins cannot be set up. */
long rdt_nb_choose_readout(const int64_t correct[2], int is_private, rdt_eps eps, rdt_rng *rng);

#endif
