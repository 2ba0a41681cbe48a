/*
** forest_algorithms.h - the classic forest algorithms ("algorithm": "rdt",
** "diprime", "rdt#", and "noise": "matrix"; forest_kind.h) behind the
** learner interface (learner.h, contract 8): one learner that writes the
** forest's own model BLOB (model.c), registered in learners/registry.c.
*/
#ifndef RDT_FOREST_ALGORITHMS_H
#define RDT_FOREST_ALGORITHMS_H

#include "../learner.h"

extern const rdt_learner rdt_learner_forest_algorithms;

#endif
