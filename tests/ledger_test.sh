#!/usr/bin/env bash
# The privacy-budget ledger: arithmetic, refusal when over budget (nothing charged), durability
# across the caller's ROLLBACK and across connections, errors, and two processes racing for the
# last of a budget. Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ext=${RDT_EXT:-./dist/rdt}
shell=${SQLITE3:-sqlite3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/tap.sh
db=$tmp/curator.db
opts() { # opts <epsilon> -> rdt_fit options charging the ledger "budget"
  echo "{\"epsilon\": $1, \"ledger\": \"budget\", \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}"
}
q() { "$shell" "$db" ".load $ext" "$@" 2>&1; }

q "CREATE TABLE t(x, y)" "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99) INSERT INTO t SELECT i / 100.0, i > 50 FROM n" \
  "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=3.0)" >/dev/null
expect "a new ledger shows its budget, nothing spent" "budget|3.0|0.0|3.0" \
  "$(q "SELECT kind, epsilon, spent, remaining FROM budget")"
expect "the ledger lives in its own file beside the database" "yes" "$([ -f "$db-rdt-ledger" ] && echo yes)"

q "SELECT length(rdt_fit('$(opts 1)', 'SELECT x, y AS label FROM t'))" >/dev/null
q "SELECT dp_quantile('{\"epsilon\": 0.25, \"lo\": 0, \"hi\": 1, \"ledger\": \"budget\"}', 'SELECT x FROM t')" >/dev/null
expect "charges are recorded with running totals (rdt_fit 1, dp_quantile 0.25)" \
  "rdt_fit|1.0|1.0|2.0,dp_quantile|0.25|1.25|1.75" \
  "$(q "SELECT group_concat(function || '|' || epsilon || '|' || spent || '|' || remaining, ',') FROM budget WHERE kind = 'charge'")"

out=$(q "SELECT rdt_fit('$(opts 2)', 'SELECT x, y AS label FROM t')")
expect "overspending is an error naming the requested and remaining epsilon" \
  'Error: stepping, rdt_fit: over budget: ledger "budget" has 1.75 of epsilon left, 2 was requested; nothing was charged' \
  "$(grep -o 'Error.*' <<<"$out")"
expect "... and charges nothing" "2" "$(q "SELECT count(*) FROM budget WHERE kind = 'charge'")"

q "BEGIN" "SELECT length(rdt_fit('$(opts 0.5)', 'SELECT x, y AS label FROM t'))" "ROLLBACK" >/dev/null
expect "a charge survives the caller's ROLLBACK" "3|1.25" \
  "$(q "SELECT count(*), min(remaining) FROM budget WHERE kind = 'charge'")"

q "BEGIN IMMEDIATE" "CREATE TABLE held(x)" "SELECT length(rdt_fit('$(opts 0.25)', 'SELECT x, y AS label FROM t'))" "COMMIT" >/dev/null
expect "charging works while the caller holds a write transaction on its own database" "4" \
  "$(q "SELECT count(*) FROM budget WHERE kind = 'charge'")"

expect "a non-private model cannot be charged" \
  'rdt_fit: a non-private model ("epsilon": null) cannot be charged to a ledger' \
  "$(q "SELECT rdt_fit('$(opts null)', 'SELECT x, y AS label FROM t')" | grep -o 'rdt_fit: .*')"
expect "an unknown ledger name is an error" "1" \
  "$(q "SELECT rdt_fit(replace('$(opts 0.1)', '\"budget\"', '\"nope\"'), 'SELECT x, y AS label FROM t')" | grep -c 'no rdt_ledger table named "nope"')"
expect "a ledger needs a budget" "1" \
  "$(q "CREATE VIRTUAL TABLE b2 USING rdt_ledger()" | grep -c 'epsilon_budget=<number from 1e-06 to 1e+06> is required')"
expect "an in-memory database needs an explicit ledger file" "1" \
  "$("$shell" :memory: ".load $ext" "CREATE VIRTUAL TABLE b USING rdt_ledger(epsilon_budget=1)" 2>&1 | grep -c "needs file='path'")"
expect "re-creating a ledger cannot reset or change its budget" "1" \
  "$(q "DROP TABLE budget" "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=100)" | grep -c 'already exists in this file with epsilon_budget=3')"
q "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=3.0)" >/dev/null
expect "dropping and re-creating the table keeps every charge" "4|1.0" \
  "$(q "SELECT count(*), min(remaining) FROM budget WHERE kind = 'charge'")"

# Two processes race for the last 1.0: each asks 0.75 at the same time; exactly one may win.
for i in 1 2; do
  ("$shell" "$db" ".load $ext" "SELECT 'won' FROM (SELECT rdt_fit('$(opts 0.75)', 'SELECT x, y AS label FROM t') AS m)" >"$tmp/race$i" 2>&1) &
done
wait
wins=$(cat "$tmp/race1" "$tmp/race2" | grep -c '^won$')
refusals=$(cat "$tmp/race1" "$tmp/race2" | grep -c 'over budget')
expect "two processes racing for the last of the budget: one wins, one is refused" "1|1" "$wins|$refusals"
expect "... and the ledger never goes below zero" "5|0.25" \
  "$(q "SELECT count(*), min(remaining) FROM budget WHERE kind = 'charge'")"

# DP batch prediction spends its epsilon from the same ledger.
q "CREATE TABLE exact AS SELECT rdt_train('{\"epsilon\": null, \"trees\": 4, \"depth\": 3, \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}', y, x) AS m FROM t" >/dev/null
expect "rdt_predict_batch charges its epsilon with a note naming the batch" "rdt_predict_batch|0.125|0.125|batch prediction of 100 queries" \
  "$(q "SELECT json_extract(rdt_predict_batch(m, '{\"epsilon\": 0.125, \"ledger\": \"budget\"}', t.rowid, x), '\$.epsilon') FROM t, exact" >/dev/null;
     q "SELECT function || '|' || epsilon || '|' || remaining || '|' || note FROM budget WHERE kind = 'charge' ORDER BY rowid DESC LIMIT 1")"
expect "... and is refused over budget, charging nothing" "1|6" \
  "$(q "SELECT rdt_predict_batch(m, '{\"epsilon\": 0.25, \"ledger\": \"budget\"}', t.rowid, x) FROM t, exact" | grep -c 'over budget')|$(q "SELECT count(*) FROM budget WHERE kind = 'charge'")"

tap_summary
