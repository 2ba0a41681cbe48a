#!/usr/bin/env bash
# Runs every test suite and ends with one line "N passed, N failed".
#   RDT_TEST_CORE  the core unit-test binary (default build/test_core)
#   RDT_FUZZ_REPLAY_MODEL, RDT_FUZZ_REPLAY_OPTIONS  the fuzz targets built with
#                  tests/fuzz/replay.c (default build/fuzz-replay-model, -options)
#   RDT_EXT        the extension to load, without suffix (default dist/rdt)
#   RDT_SANITIZE=1 the extension is an ASan build: preload the ASan runtime
#                  into the (uninstrumented) sqlite3 shell.
set -u
cd "$(dirname "$0")/.."
core=${RDT_TEST_CORE:-build/test_core}
passed=0
failed=0

tally() { # reads a suite's output, echoes it, adds its closing counts
  local out=$1 line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
  if [ -z "$line" ]; then
    echo "not ok - a suite ended without its summary line (crash?)"
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + $(cut -d' ' -f1 <<<"$line")))
  failed=$((failed + $(cut -d' ' -f3 <<<"$line")))
}

if [ "${RDT_SANITIZE:-0}" = 1 ]; then
  asan=$(cc -print-file-name=libasan.so)
  ubsan=$(cc -print-file-name=libubsan.so)
  export RDT_SQL_PRELOAD="$asan $ubsan"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:halt_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi

echo "# core unit tests ($core)"
out=$("$core" 2>&1); rc=$?
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
[ $rc -gt 1 ] && { echo "not ok - $core exited with status $rc"; failed=$((failed + 1)); }
tally "$out"

echo "# privacy audits (${RDT_AUDIT:-build/audit})"
out=$("${RDT_AUDIT:-build/audit}" 2>&1); rc=$?
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
[ $rc -gt 1 ] && { echo "not ok - ${RDT_AUDIT:-build/audit} exited with status $rc"; failed=$((failed + 1)); }
tally "$out"

echo "# SQL tests through the sqlite3 shell"
out=$(LD_PRELOAD="${RDT_SQL_PRELOAD:-}" bash tests/sql_runner.sh 2>&1)
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
tally "$out"

# The seed corpus of the fuzz targets (tests/fuzz/) replayed through them,
# built without libFuzzer: every model BLOB and options document must be
# handled without a crash, a sanitizer report or a failed property.
for target in model options; do
  var=RDT_FUZZ_REPLAY_$(tr a-z A-Z <<<"$target")
  replay=${!var:-build/fuzz-replay-$target}
  echo "# fuzz corpus replay ($replay tests/fuzz/corpus/$target)"
  if [ "${RDT_SANITIZE:-0}" = 1 ]; then # plain binaries: leaks are checked here
    out=$(ASAN_OPTIONS=${RDT_FUZZ_ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1} "$replay" "tests/fuzz/corpus/$target" 2>&1); rc=$?
  else
    out=$("$replay" "tests/fuzz/corpus/$target" 2>&1); rc=$?
  fi
  printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
  [ $rc -gt 1 ] && { echo "not ok - $replay exited with status $rc"; failed=$((failed + 1)); }
  tally "$out"
done

echo "# rdt_export / rdt_import and the stand-alone Python reader"
rshell=sqlite3
if [ -n "${RDT_SQL_PRELOAD:-}" ]; then
  rshell=$(mktemp)
  printf '#!/bin/sh\nLD_PRELOAD="%s" exec sqlite3 "$@"\n' "$RDT_SQL_PRELOAD" >"$rshell"
  chmod +x "$rshell"
fi
out=$(RDT_EXT="${RDT_EXT:-./dist/rdt}" SQLITE3="$rshell" bash tests/reader_test.sh 2>&1)
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
tally "$out"

echo "# the privacy-budget ledger (two processes, ROLLBACK, overspending)"
out=$(RDT_EXT="${RDT_EXT:-./dist/rdt}" SQLITE3="$rshell" bash tests/ledger_test.sh 2>&1)
[ "$rshell" = sqlite3 ] || rm -f "$rshell"
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
tally "$out"

echo "# embedding and installation"
out=$(bash tests/install_test.sh 2>&1)
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
tally "$out"

echo "# publishing a model (examples/publish.sh): sign, export, verify, tamper"
# Only the sqlite3 shell gets the sanitizer runtime, not dd and friends.
shell=sqlite3
if [ -n "${RDT_SQL_PRELOAD:-}" ]; then
  shell=$(mktemp)
  printf '#!/bin/sh\nLD_PRELOAD="%s" exec sqlite3 "$@"\n' "$RDT_SQL_PRELOAD" >"$shell"
  chmod +x "$shell"
fi
if out=$(RDT_EXT="${RDT_EXT:-./dist/rdt}" SQLITE3="$shell" bash examples/publish.sh 2>&1) &&
   grep -q '^verified: 1$' <<<"$out" && grep -q 'after flipping a byte, verified: 0$' <<<"$out"; then
  echo "ok - examples/publish.sh"
  passed=$((passed + 1))
else
  printf '%s\n' "$out" | tail -5
  echo "not ok - examples/publish.sh"
  failed=$((failed + 1))
fi
[ "$shell" = sqlite3 ] || rm -f "$shell"

echo "# the curator's walk-through (examples/walkthrough.sql) runs to the end"
ext=${RDT_EXT:-dist/rdt}
if out=$(sed "s#^\.load ./dist/rdt#.load $ext#" examples/walkthrough.sql | LD_PRELOAD="${RDT_SQL_PRELOAD:-}" sqlite3 2>&1) &&
   grep -q "banknote-eps1" <<<"$out" && grep -q "NOT PRIVATE" <<<"$out"; then
  echo "ok - examples/walkthrough.sql"
  passed=$((passed + 1))
else
  printf '%s\n' "$out" | tail -5
  echo "not ok - examples/walkthrough.sql"
  failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
