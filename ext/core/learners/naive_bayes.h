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

#endif
