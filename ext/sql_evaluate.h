/*
** sql_evaluate.h - the metrics of a released model on the caller's labelled
** rows, row by row (sql_evaluate.c), shared by rdt_evaluate and the tables
** rdt_confusion and rdt_roc (sql_eval_tables.c). Not a DP mechanism: exact
** functions of the caller's rows (sql_evaluate.c, contract 1).
*/
#ifndef RDT_SQL_EVALUATE_H
#define RDT_SQL_EVALUATE_H

#include "rdt_sql.h"

#define EVAL_BINS 10
#define EVAL_MAX_CONFUSION 256

typedef struct eval_acc {
  rdt_model_handle *h; /* a reference */
  int regression;
  uint32_t nf, C;
  double *xs; /* nf values, then the scoring scratch */
  sqlite3_int64 rows, skipped, n;
  /* classification */
  uint64_t correct;
  uint64_t *confusion; /* C x C, actual major, or NULL above EVAL_MAX_CONFUSION */
  uint64_t *per_class; /* per class: rows of it, rows predicted as it, true positives */
  double log_loss, brier;
  double bin_n[EVAL_BINS], bin_conf[EVAL_BINS], bin_hit[EVAL_BINS];
  double *score[2]; /* two classes: the second class's probability, by true class (0: first, 1: second) */
  size_t n_score[2], cap_score[2];
  /* regression */
  double sum_abs, sum_sq, mean_y, m2_y;
  int oom;
} eval_acc;

/* Takes the reference h. Returns 0 when memory runs out (free it still). */
int rdt_eval_start(eval_acc *a, rdt_model_handle *h);
/* One row whose cleaned features are in a->xs; label by the training rule. */
void rdt_eval_row(eval_acc *a, sqlite3_value *label, rdt_rng *coin);
/* Runs the query forms' query (sql_evaluate.c, contract 4: bound by name,
** the label under the model's own name) over a, row by row. SQLITE_OK with
** *ignored the member ,"ignored_columns":[...] (sqlite3_free it);
** SQLITE_ERROR with err ("<problem>", no function name); SQLITE_NOMEM or
** SQLITE_INTERRUPT. */
int rdt_eval_query(sqlite3 *db, rdt_conn *conn, eval_acc *a, sqlite3_value *query, char **ignored, char *err,
                   size_t en);
/* Sorts score[0] and score[1] ascending (the AUC and the ROC curve). */
void rdt_eval_sort_scores(eval_acc *a);
/* Releases everything, the model reference too; a is zeroed. */
void rdt_eval_free(eval_acc *a);

#endif
