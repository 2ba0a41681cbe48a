/*
** sql_columns.c - a query's result columns bound by name to a model's
** features and to the other roles a function reads (the label, the privacy
** unit): the one rule of rdt_fit, rdt_check, rdt_evaluate, rdt_importance
** and the table-valued functions that take a query.
**
** Contract:
**   1. Names match without regard to ASCII case (rdt_name_equal), as SQL
**      names do. A column is a role's when it carries the role's name (roles
**      first, in the order given), else the feature's of its name.
**   2. Every feature must have a column: a missing one is an error naming
**      it. A column that names a role or a feature twice is an error. A
**      missing role is not an error here: each caller says what it needs.
**   3. Any other column is ignored and listed, by name and in query order,
**      as a JSON array (*ignored, "[]" when none): what is ignored follows
**      from the query's column names alone, before any row is read, so it
**      is a public fact and never depends on the data.
**   4. Nothing is read from the rows; the statement is not stepped.
*/
#include <stdio.h>
#include <string.h>

#include "core/options.h"
#include "rdt_sql.h"

int rdt_sql_bind_columns(sqlite3_stmt *stmt, const rdt_schema *s, const char *const *roles, int n_roles, int *role_col,
                         int *col, char **ignored, int *n_ignored, char *err, size_t en) {
  int n = sqlite3_column_count(stmt), count = 0, ok = 1;
  *ignored = NULL;
  if (n_ignored) *n_ignored = 0;
  for (int r = 0; r < n_roles; r++) role_col[r] = -1;
  for (uint32_t j = 0; j < s->n_features; j++) col[j] = -1;
  sqlite3_str *ig = sqlite3_str_new(NULL);
  sqlite3_str_appendchar(ig, 1, '[');
  for (int i = 0; ok && i < n; i++) {
    const char *name = sqlite3_column_name(stmt, i);
    if (!name) {
      snprintf(err, en, "out of memory");
      ok = 0;
      break;
    }
    int *slot = NULL;
    for (int r = 0; !slot && r < n_roles; r++)
      if (roles[r] && roles[r][0] && rdt_name_equal(name, roles[r])) slot = &role_col[r];
    for (uint32_t j = 0; !slot && j < s->n_features; j++)
      if (rdt_name_equal(name, s->features[j].name)) slot = &col[j];
    if (!slot) { /* contract 3 */
      if (count++) sqlite3_str_appendchar(ig, 1, ',');
      rdt_sql_json_string(ig, name, strlen(name));
      continue;
    }
    if (*slot >= 0) {
      snprintf(err, en, "the query returns the column \"%.100s\" twice", name);
      ok = 0;
      break;
    }
    *slot = i;
  }
  for (uint32_t j = 0; ok && j < s->n_features; j++)
    if (col[j] < 0) {
      snprintf(err, en, "the query returns no column for feature \"%.100s\" (name it with AS)", s->features[j].name);
      ok = 0;
    }
  sqlite3_str_appendchar(ig, 1, ']');
  int oom = sqlite3_str_errcode(ig) != SQLITE_OK;
  char *text = sqlite3_str_finish(ig);
  if (ok && (oom || !text)) {
    snprintf(err, en, "out of memory");
    ok = 0;
  }
  if (!ok) {
    sqlite3_free(text);
    return 0;
  }
  *ignored = text;
  if (n_ignored) *n_ignored = count;
  return 1;
}
