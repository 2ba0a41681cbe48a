# tap.sh - the pass/fail bookkeeping shared by the shell test scripts (sourced, not run).
# Each test prints "ok - <name>" or "not ok - <name>"; tap_summary prints the line
# "N passed, N failed" that tests/run_all.sh and CI count, and fails if anything failed.
passed=0
failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
nok() { echo "not ok - $1"; failed=$((failed + 1)); }
expect() { # expect <name> <expected> <actual>
  if [ "$2" = "$3" ]; then ok "$1"
  else printf '#   expected: %s\n#   actual:   %s\n' "$2" "$3"; nok "$1"; fi
}
check() { # check <name> <command...>: passes when the command succeeds
  local name=$1
  shift
  if out=$("$@" 2>&1); then ok "$name"
  else printf '%s\n' "$out" | tail -5 | sed 's/^/#   /'; nok "$name"; fi
}
tap_summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
