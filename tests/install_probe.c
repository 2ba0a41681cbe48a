/* install_probe.c - compiled against an installed rdt (header + pkg-config),
** registers rdt statically and prints rdt_version(). */
#include <rdt.h>
#include <sqlite3.h>
#include <stdio.h>

int main(void) {
  sqlite3 *db;
  char *err = NULL;
  sqlite3_stmt *q;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 1;
  if (sqlite3_rdt_init(db, &err, NULL) != SQLITE_OK) {
    fprintf(stderr, "sqlite3_rdt_init: %s\n", err ? err : "?");
    return 1;
  }
  if (sqlite3_prepare_v2(db, "SELECT rdt_version()", -1, &q, NULL) != SQLITE_OK || sqlite3_step(q) != SQLITE_ROW)
    return 1;
  printf("%s\n", (const char *)sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(db);
  return 0;
}
