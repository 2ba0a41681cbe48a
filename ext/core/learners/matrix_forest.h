/* matrix_forest.h - a matrix random forest behind the learner interface (matrix_forest.c). */
#ifndef RDT_LEARNER_MATRIX_FOREST_H
#define RDT_LEARNER_MATRIX_FOREST_H

#include "../learner.h"

extern const rdt_learner rdt_learner_matrix_forest;

#endif
