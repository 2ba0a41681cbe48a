/* auto.h - "algorithm": "auto", the default learner (learners/auto.c). */
#ifndef RDT_LEARNER_AUTO_H
#define RDT_LEARNER_AUTO_H

#include "../learner.h"

extern const rdt_learner rdt_learner_auto;

/* Step 4 of auto.c: the validation gain released with eps: discrete
** Laplace on the integer count difference (sensitivity 1), or lattice
** Laplace on the regression gain with the given sensitivity in [0, 1].
** Returns 0 when the noise cannot be set up. */
int rdt_auto_guard(double gain, int regression, double sensitivity, rdt_eps eps, rdt_rng *noise, double *noisy);

/* Tests only (auto.c step 7): on, auto_start drops every candidate that can
** run neither in rounds nor in one round of counters, as if unregistered,
** so that auto's rounds can be tested before every candidate has them. No
** caller of the extension ever sets it. */
void rdt_auto_test_drop_unrounded(int on);

#endif
