/*
** embed.c - an application that links SQLite and rdt statically, with no
** extension loading: it registers rdt for every connection, trains a private
** model on the banknote CSV, predicts, and reports accuracy and rdt_info.
**
**   make static && cc examples/embed.c dist/librdt.a -Iext -lsqlite3 -lsodium -lm -o build/embed
**   build/embed tests/data/banknote.csv
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "rdt.h"

static int fail(sqlite3 *db, const char *what) {
  fprintf(stderr, "embed: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s banknote.csv\n", argv[0]);
    return 2;
  }
  /* Every connection opened from now on gets the rdt functions. */
  if (sqlite3_auto_extension((void (*)(void))sqlite3_rdt_init) != SQLITE_OK) return fail(NULL, "auto_extension");
  sqlite3 *db;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return fail(db, "open");
  if (sqlite3_exec(db, "CREATE TABLE notes(v REAL, s REAL, c REAL, e REAL, label INTEGER)", NULL, NULL, NULL))
    return fail(db, "create");

  FILE *fp = fopen(argv[1], "r");
  if (!fp) {
    perror(argv[1]);
    return 1;
  }
  sqlite3_stmt *ins;
  if (sqlite3_prepare_v2(db, "INSERT INTO notes VALUES (?, ?, ?, ?, ?)", -1, &ins, NULL)) return fail(db, "prepare");
  char line[512];
  double v, s, c, e;
  int label, rows = 0;
  if (!fgets(line, sizeof line, fp)) return fail(db, "empty file"); /* header */
  while (fgets(line, sizeof line, fp)) {
    if (sscanf(line, "%lf,%lf,%lf,%lf,%d", &v, &s, &c, &e, &label) != 5) continue;
    sqlite3_bind_double(ins, 1, v);
    sqlite3_bind_double(ins, 2, s);
    sqlite3_bind_double(ins, 3, c);
    sqlite3_bind_double(ins, 4, e);
    sqlite3_bind_int(ins, 5, label);
    if (sqlite3_step(ins) != SQLITE_DONE) return fail(db, "insert");
    sqlite3_reset(ins);
    rows++;
  }
  fclose(fp);
  sqlite3_finalize(ins);

  /* Train on 90% of the rows, keep the model, score the rest. */
  const char *train =
      "CREATE TABLE models AS SELECT rdt_train('{\"epsilon\": 1, \"classes\": [0, 1], \"features\": ["
      "{\"name\": \"v\", \"type\": \"numeric\", \"min\": -8, \"max\": 8},"
      "{\"name\": \"s\", \"type\": \"numeric\", \"min\": -14, \"max\": 14},"
      "{\"name\": \"c\", \"type\": \"numeric\", \"min\": -6, \"max\": 18},"
      "{\"name\": \"e\", \"type\": \"numeric\", \"min\": -9, \"max\": 3}]}', label, v, s, c, e) AS model "
      "FROM notes WHERE rowid % 10 <> 0";
  if (sqlite3_exec(db, train, NULL, NULL, NULL)) return fail(db, "train");
  sqlite3_stmt *q;
  if (sqlite3_prepare_v2(db,
                         "SELECT avg(rdt_predict(m.model, v, s, c, e) = label), rdt_version(), "
                         "json_extract(rdt_info(m.model), '$.epsilon') FROM notes, models m WHERE notes.rowid % 10 = 0",
                         -1, &q, NULL))
    return fail(db, "prepare predict");
  if (sqlite3_step(q) != SQLITE_ROW) return fail(db, "predict");
  double accuracy = sqlite3_column_double(q, 0);
  printf("rdt %s embedded in SQLite %s: %d rows, epsilon %.3f, held-out accuracy %.3f\n",
         (const char *)sqlite3_column_text(q, 1), sqlite3_libversion(), rows, sqlite3_column_double(q, 2), accuracy);
  sqlite3_finalize(q);
  sqlite3_close(db);
  return accuracy > 0.8 ? 0 : 1;
}
