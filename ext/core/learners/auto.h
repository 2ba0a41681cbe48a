/* auto.h - "algorithm": "auto", the default learner (learners/auto.c). */
#ifndef RDT_LEARNER_AUTO_H
#define RDT_LEARNER_AUTO_H

#include "../learner.h"

extern const rdt_learner rdt_learner_auto;

#endif
