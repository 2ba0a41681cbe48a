#!/usr/bin/env bash
# The sqlite3 shell under valgrind, for the SQL suite (make test-valgrind):
#   SQLITE3=$PWD/tests/valgrind-sqlite3.sh RDT_CASE_TIMEOUT=1800 bash tests/sql_runner.sh
#
# How a valgrind finding fails a case, whatever the case expects:
#   valgrind runs with --error-exitcode=99, so when it reports any error
#   (invalid read or write, use of uninitialised memory, bad free, or a
#   definitely lost block: --errors-for-leak-kinds=definite) the process exits
#   99 instead of the shell's own status. The sqlite3 shell itself exits only
#   0 (success), 1 (an SQL error, what expect-error cases see) or 2 (usage),
#   never 99, so tests/sql_runner.sh fails every case, expect-error ones
#   included, whose shell exits 99 (and a setup that exits 99 fails the whole
#   file). Greping stderr would be weaker: with -q valgrind prints its reports
#   but no "ERROR SUMMARY" line, and its warnings are not errors.
#   Still-reachable and possibly-lost blocks are not errors: the shell keeps
#   memory until exit on purpose.
#
# Environment: VALGRIND (default valgrind), RDT_REAL_SQLITE3 (default sqlite3).
exec "${VALGRIND:-valgrind}" -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  "${RDT_REAL_SQLITE3:-sqlite3}" "$@"
