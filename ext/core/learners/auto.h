/* auto.h - "algorithm": "auto", the default learner (learners/auto.c). */
#ifndef RDT_LEARNER_AUTO_H
#define RDT_LEARNER_AUTO_H

#include "../learner.h"

extern const rdt_learner rdt_learner_auto;

/* Step 4 of auto.c: the validation gain released with eps (sensitivity 1:
** discrete Laplace on the integer count difference, or lattice Laplace on
** the regression gain). Returns 0 when the noise cannot be set up. */
int rdt_auto_guard(double gain, int regression, rdt_eps eps, rdt_rng *noise, double *noisy);

#endif
