/*
** sql_cancel.c - sqlite3_interrupt() and the progress handler during rdt's
** own long C work (drawing the trees, adding the noise, encoding the model).
**
** Why: SQLite looks at the interrupt flag and counts instructions for the
** progress handler only while its virtual machine runs. A function's C code
** runs outside it, so a training that spends seconds in noise and encoding
** would ignore sqlite3_interrupt() and freeze the progress handler until it
** returns. SQLite has no call that lets a function ask for either (before
** 3.41 not even for the flag), but a statement stepped on the same
** connection does both: its loop opcodes check the flag and advance the
** handler's instruction count.
**
** Contract:
**   1. The core asks (core/cancel.h) about every quarter of a millisecond of
**      work; the answer steps the probe, a prepared statement of about 90
**      virtual-machine instructions that reads no table and writes nothing,
**      on the calling connection. It costs well under a microsecond.
**   2. The probe ends in SQLITE_INTERRUPT when sqlite3_interrupt() was called
**      on the connection (SQLite keeps the flag set while the calling
**      statement runs) or when the progress handler returned non-zero; any
**      result but a row stops the work, and rc keeps why.
**   3. A progress handler registered for N instructions is therefore called
**      about once every N / 90 questions during the C work, as well as by
**      SQLite while it reads rows: it advances, more slowly than during a
**      scan, and returning non-zero from it stops rdt as it stops SQL.
**   4. The questions are asked at points fixed by public sizes (cancel.h),
**      so the probe's runs, visible to sqlite3_trace_v2 and the progress
**      handler, depend on the configuration, not on the rows.
**   5. Without a probe (it could not be prepared) nothing stops: the old
**      behaviour, never an error.
*/
#include "sql_cancel.h"

/* A comment first, so that a trace (sqlite3_trace_v2, the shell's .trace)
** says what the statement is. Sixteen VALUES rows: about 90 instructions. */
#define PROBE_SQL                                                                   \
  "/* rdt: checking for sqlite3_interrupt and the progress handler */ "             \
  "SELECT count(*) FROM (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10),(11),(12)," \
  "(13),(14),(15),(16))"

static int probe_stop(void *arg) {
  rdt_sql_cancel *c = arg;
  int rc = sqlite3_step(c->probe);
  sqlite3_reset(c->probe);
  if (rc == SQLITE_ROW) return 0;
  c->rc = rc;
  return 1;
}

void rdt_sql_cancel_init(rdt_sql_cancel *c, sqlite3 *db) {
  c->probe = NULL;
  c->rc = SQLITE_OK;
  c->core.stop = NULL;
  c->core.arg = c;
  c->core.due = 0;
  c->core.stopped = 0;
  c->core.asked = 0;
  if (sqlite3_prepare_v2(db, PROBE_SQL, -1, &c->probe, NULL) != SQLITE_OK) {
    sqlite3_finalize(c->probe);
    c->probe = NULL;
  }
  if (c->probe) c->core.stop = probe_stop;
}

void rdt_sql_cancel_free(rdt_sql_cancel *c) {
  sqlite3_finalize(c->probe); /* NULL is a no-op */
  c->probe = NULL;
  c->core.stop = NULL;
}

int rdt_sql_cancel_report(const rdt_sql_cancel *c, sqlite3_context *ctx) {
  if (!rdt_cancel_stopped(&c->core)) return 0;
  /* SQLITE_INTERRUPT reads "interrupted", as SQLite's own; a probe that
  ** failed otherwise (it cannot, short of memory) keeps its code. */
  sqlite3_result_error_code(ctx, c->rc == SQLITE_OK ? SQLITE_INTERRUPT : c->rc);
  return 1;
}
