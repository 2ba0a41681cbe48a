/*
** cancel.h - a caller's request to stop long work. No SQLite here: the
** binding supplies the question (ext/sql_cancel.c asks SQLite whether the
** statement was interrupted), the core only asks it.
**
** Contract:
**   1. Long loops of the core (drawing a forest's structure, adding the
**      noise, encoding a model) report their work to rdt_cancel_poll, which
**      asks the caller's `stop` every RDT_CANCEL_UNITS units. A unit is about
**      one noise draw (a few hundred nanoseconds); a loop whose step is
**      cheaper reports a unit per block of steps.
**   2. Where the core polls depends only on public sizes (trees, depth,
**      counters), never on a row or a noise value: whether and where work
**      stops is the caller's action, not a data-dependent branch.
**   3. Once `stop` has returned 1 the request is latched: every later poll
**      returns 1 without asking again, so a stopped computation winds down
**      through its ordinary failure path (returning 0 or NULL).
**   4. Work that stopped releases nothing: a function that polls and sees the
**      request returns its failure, and its caller must not encode, return
**      or keep a partial result (a half-noised table is never a release).
**   5. A NULL rdt_cancel, or one without `stop`, never stops.
*/
#ifndef RDT_CANCEL_H
#define RDT_CANCEL_H

#include <stdint.h>

/* Units between two questions: about 1024 noise draws, a quarter of a
** millisecond, so a stop request is seen at once and asking (well under a
** microsecond for the SQL binding) costs nothing measurable. */
#define RDT_CANCEL_UNITS 1024u

typedef struct rdt_cancel {
  int (*stop)(void *arg); /* the caller's question: 1 to stop now */
  void *arg;
  uint64_t due;           /* units left before the next question */
  int stopped;            /* latched (Contract 3) */
  uint64_t asked;         /* how many times stop was asked (for tests) */
} rdt_cancel;

/* Records `units` of work and asks the caller when enough has accumulated.
** Returns 1 when the work must stop. */
static inline int rdt_cancel_poll(rdt_cancel *c, uint64_t units) {
  if (!c || !c->stop) return 0;
  if (c->stopped) return 1;
  if (units < c->due) {
    c->due -= units;
    return 0;
  }
  c->due = RDT_CANCEL_UNITS;
  c->asked++;
  c->stopped = c->stop(c->arg) ? 1 : 0;
  return c->stopped;
}

/* Whether a stop was requested (without asking again). */
static inline int rdt_cancel_stopped(const rdt_cancel *c) { return c && c->stopped; }

#endif
