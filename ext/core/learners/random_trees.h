/* random_trees.h - the RDT forest behind the learner interface (random_trees.c). */
#ifndef RDT_LEARNER_RANDOM_TREES_H
#define RDT_LEARNER_RANDOM_TREES_H

#include "../learner.h"

extern const rdt_learner rdt_learner_random_trees;

#endif
