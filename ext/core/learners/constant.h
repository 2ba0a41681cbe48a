/* constant.h - the best constant model (learners/constant.c). */
#ifndef RDT_LEARNER_CONSTANT_H
#define RDT_LEARNER_CONSTANT_H

#include "../learner.h"

extern const rdt_learner rdt_learner_constant;

#endif
