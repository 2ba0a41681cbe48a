#!/usr/bin/env bash
# The privacy-budget ledger: arithmetic, refusal when over budget (nothing charged), durability
# across the caller's ROLLBACK and across connections, errors, two processes racing for the
# last of a budget, and every way found to a fresh budget under an old name (a temp table
# shadowing it, an ambiguous name, DROP and re-create with another file or another spelling, a
# non-durable file, a relative path read from elsewhere). Prints "ok - ..." / "not ok - ..." and
# "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ext=${RDT_EXT:-./dist/rdt}
shell=${SQLITE3:-sqlite3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/tap.sh
db=$tmp/curator.db
opts() { # opts <epsilon> [ledger] -> rdt_fit options charging that ledger (default "budget")
  echo "{\"epsilon\": $1, \"ledger\": \"${2:-budget}\", \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 1}]}"
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
expect "rdt_predict_batch charges its epsilon, its request naming the batch" "rdt_predict_batch|0.125|0.125|batch prediction of 100 queries" \
  "$(q "SELECT json_extract(rdt_predict_batch(m, '{\"epsilon\": 0.125, \"ledger\": \"budget\"}', t.rowid, x), '\$.epsilon') FROM t, exact" >/dev/null;
     q "SELECT function || '|' || epsilon || '|' || remaining || '|' || request FROM budget WHERE kind = 'charge' ORDER BY rowid DESC LIMIT 1")"
expect "... and is refused over budget, charging nothing" "1|6" \
  "$(q "SELECT rdt_predict_batch(m, '{\"epsilon\": 0.25, \"ledger\": \"budget\"}', t.rowid, x) FROM t, exact" | grep -c 'over budget')|$(q "SELECT count(*) FROM budget WHERE kind = 'charge'")"


# ---- Names, schemas and files: each case below was a way to a fresh budget under an old name.
# A second curator database with a ledger "budget" of 1, spent in full.
d=$tmp/names
mkdir -p "$d/sub"
d=$(cd "$d" && pwd -P) # canonical, as the ledger records it
db2=$d/curator.db
ext_abs=$(cd "$(dirname "$ext")" && pwd)/$(basename "$ext")
q2() { "$shell" "$db2" ".load $ext_abs" "$@" 2>&1; }
# s2 <sql>...: one connection reading the statements from stdin, going on after an error
s2() { printf '%s\n' ".load $ext_abs" "$@" | "$shell" "$db2" 2>&1; }
fit() { echo "SELECT 'trained' FROM (SELECT rdt_fit('$(opts "$2" "$1")', 'SELECT x, y AS label FROM t'));"; }
err() { grep -o "$1: .*" | head -1; } # err <function>: the first error message of that function
q2 "CREATE TABLE t(x, y)" "INSERT INTO t VALUES (0.25, 0), (0.75, 1)" \
  "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=1)" "$(fit budget 1)" >/dev/null
expect "the database records the ledger's canonical file in rdt_ledger_files" "budget|$db2-rdt-ledger" \
  "$(q2 "SELECT name, file FROM rdt_ledger_files")"

TEMP_ERR="rdt_ledger: a ledger cannot live in the temp schema: a temp table lasts one connection and would shadow a durable ledger of the same name; create it in main or an attached database"
expect "a ledger cannot be created in the temp schema" "$TEMP_ERR" \
  "$(q2 "CREATE VIRTUAL TABLE temp.budget USING rdt_ledger(epsilon_budget=3, file='$d/temp-ledger')" | err rdt_ledger)"
expect "... so a temp table cannot shadow the spent main.budget: the charge is still refused" \
  'rdt_fit: over budget: ledger "budget" has 0 of epsilon left, 1 was requested; nothing was charged' \
  "$(s2 "CREATE VIRTUAL TABLE temp.budget USING rdt_ledger(epsilon_budget=3, file='$d/temp-ledger');" "$(fit budget 1)" | err rdt_fit)"

# An attached database with its own ledger "budget" of 5.
aux="ATTACH '$d/aux.db' AS aux"
q2 "$aux" "CREATE VIRTUAL TABLE aux.budget USING rdt_ledger(epsilon_budget=5)" >/dev/null
expect "a bare name naming ledgers in two schemas is refused as ambiguous" \
  'rdt_fit: the ledger name "budget" is ambiguous: main and aux each hold an rdt_ledger table of that name; name one with its schema, e.g. "main.budget"' \
  "$(q2 "$aux" "$(fit budget 1)" | err rdt_fit)"
expect "... charging neither" "1|0" \
  "$(q2 "$aux" "SELECT (SELECT count(*) FROM main.budget WHERE kind = 'charge') || '|' || (SELECT count(*) FROM aux.budget WHERE kind = 'charge')")"
expect "a schema-qualified name charges that schema's ledger" "trained|1|1|3.0" \
  "$(q2 "$aux" "$(fit aux.budget 2)" "SELECT (SELECT count(*) FROM main.budget WHERE kind = 'charge') || '|' || count(*) || '|' || min(remaining) FROM aux.budget WHERE kind = 'charge'" | paste -sd'|')"
expect "... and main.budget is the spent one (names ignore ASCII case, as SQL's do)" \
  'rdt_fit: over budget: ledger "Main.Budget" has 0 of epsilon left, 1 was requested; nothing was charged' \
  "$(q2 "$aux" "$(fit Main.Budget 1)" | err rdt_fit)"
expect "an unknown schema or table in a qualified name is an error" \
  'rdt_fit: no rdt_ledger table named "nope.budget" in this connection (CREATE VIRTUAL TABLE nope.budget USING rdt_ledger(epsilon_budget=...))' \
  "$(q2 "$(fit nope.budget 1)" | err rdt_fit)"
expect "a bare name held by one schema only needs no qualification" "trained" \
  "$(q2 "$aux" "CREATE VIRTUAL TABLE aux.solo USING rdt_ledger(epsilon_budget=1)" "$(fit solo 0.5)")"

expect "DROP and re-create with another file is refused, naming both files" \
  "rdt_ledger: the ledger \"budget\" was created in this database with file '$db2-rdt-ledger' (recorded in main.rdt_ledger_files); it cannot be re-created with file '$d/other-ledger', which would start a fresh budget" \
  "$(q2 "DROP TABLE budget" "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=1, file='$d/other-ledger')" | err rdt_ledger)"
expect "... creating no file, and the record survives the DROP" "no file|budget|$db2-rdt-ledger" \
  "$([ -e "$d/other-ledger" ] && echo file || echo no file)|$(q2 "SELECT name, file FROM rdt_ledger_files")"
expect "re-creating it with the same file, spelled another way, is accepted and keeps the charges" "1|0.0" \
  "$(q2 "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=1, file='$d/sub/../curator.db-rdt-ledger')" \
        "SELECT count(*), min(remaining) FROM budget WHERE kind = 'charge'")"
expect "re-creating it as BUDGET (another case, the same SQL name) keeps the charges" "1|0.0" \
  "$(q2 "DROP TABLE budget" "CREATE VIRTUAL TABLE BUDGET USING rdt_ledger(epsilon_budget=1)" \
        "SELECT count(*), min(remaining) FROM budget WHERE kind = 'charge'")"

DURABLE_ERR="is not a durable file; give a plain file path (an empty name, ':memory:' and 'file:' URIs are refused: their charges could vanish with the connection)"
for f in ":memory:" "" "file:ledger?mode=memory" "FILE:ledger.db"; do
  expect "file='$f' is refused" "rdt_ledger: file='$f' $DURABLE_ERR" \
    "$(q2 "CREATE VIRTUAL TABLE volatile USING rdt_ledger(epsilon_budget=1, file='$f')" | err rdt_ledger)"
done
expect "... and so is file='' from an in-memory database" "rdt_ledger: file='' $DURABLE_ERR" \
  "$("$shell" :memory: ".load $ext" "CREATE VIRTUAL TABLE b USING rdt_ledger(epsilon_budget=1, file='')" 2>&1 | err rdt_ledger)"
expect "an in-memory database with a file ledger: a second connection sees the first one's charge" "trained|0.5" \
  "$("$shell" :memory: ".load $ext" "CREATE TABLE t(x, y)" "CREATE VIRTUAL TABLE b USING rdt_ledger(epsilon_budget=1, file='$d/mem-ledger')" \
       "SELECT 'trained' FROM (SELECT rdt_fit('$(opts 0.5 b)', 'SELECT x, y AS label FROM t'))" 2>&1)|$("$shell" :memory: ".load $ext" \
       "CREATE VIRTUAL TABLE b USING rdt_ledger(epsilon_budget=1, file='$d/mem-ledger')" "SELECT min(remaining) FROM b" 2>&1)"

expect "a ledger cannot be created inside BEGIN ... COMMIT (a ROLLBACK would forget its file)" \
  "rdt_ledger: create the ledger outside BEGIN ... COMMIT: its row in main.rdt_ledger_files must not be rolled back while its charges stand (a transaction is open on this connection; Python's sqlite3 opens one by itself before INSERT, UPDATE or DELETE: commit() first, or connect with isolation_level=None)|0" \
  "$(q2 "BEGIN" "CREATE VIRTUAL TABLE intx USING rdt_ledger(epsilon_budget=1, file='$d/intx-ledger')" | err rdt_ledger)|$(q2 "SELECT count(*) FROM rdt_ledger_files WHERE name = 'intx'")"

# A relative file= resolves against the current directory: read from another one, it would be a
# fresh file. The recorded canonical file refuses that.
(cd "$d" && q2 "CREATE VIRTUAL TABLE rel USING rdt_ledger(epsilon_budget=1, file='rel-ledger')" "$(fit rel 1)" >/dev/null)
expect "a ledger whose relative file resolves elsewhere is refused, not started afresh" \
  "rdt_fit: cannot open the ledger \"rel\": rdt_ledger: the ledger \"rel\" is recorded in main.rdt_ledger_files with file '$d/rel-ledger', but its table now resolves to file '$d/sub/rel-ledger' (a relative path read from another directory, or a moved database: update that row to move a ledger)|no file" \
  "$(cd "$d/sub" && q2 "$(fit rel 1)" | err rdt_fit)|$([ -e "$d/sub/rel-ledger" ] && echo file || echo no file)"
expect "... and from its own directory it is the spent ledger" \
  'rdt_fit: over budget: ledger "rel" has 0 of epsilon left, 1 was requested; nothing was charged' \
  "$(cd "$d" && q2 "$(fit rel 1)" | err rdt_fit)"

# Argument and record errors, each refused with its own text.
expect "a ledger's name cannot contain a dot" \
  "rdt_ledger: a ledger's name cannot contain '.' (\"ledger\" options read \"schema.name\")" \
  "$(q2 "CREATE VIRTUAL TABLE \"a.b\" USING rdt_ledger(epsilon_budget=1)" | err rdt_ledger)"
expect "an argument given twice is an error" "rdt_ledger: file is given twice|rdt_ledger: epsilon_budget is given twice" \
  "$(q2 "CREATE VIRTUAL TABLE twice USING rdt_ledger(epsilon_budget=1, file='$d/a', file='$d/b')" | err rdt_ledger)|$(q2 "CREATE VIRTUAL TABLE twice USING rdt_ledger(epsilon_budget=1, epsilon_budget=9)" | err rdt_ledger)"
expect "a file in a missing directory cannot be resolved" \
  "rdt_ledger: cannot resolve the ledger file '$d/missing/ledger': No such file or directory" \
  "$(q2 "CREATE VIRTUAL TABLE lost USING rdt_ledger(epsilon_budget=1, file='$d/missing/ledger')" | err rdt_ledger)"
expect "arguments are key=value, from a known set" \
  "rdt_ledger: expected key=value arguments, got 3|rdt_ledger: unknown argument budget (epsilon_budget, file)" \
  "$(q2 "CREATE VIRTUAL TABLE args USING rdt_ledger(3)" | err rdt_ledger)|$(q2 "CREATE VIRTUAL TABLE args USING rdt_ledger(budget=3)" | err rdt_ledger)"
printf 'not a database, just text\n' >"$d/text-file" # SQLITE_NOTADB: the shell appends " (26)"
expect "a file= that is not an SQLite database is refused" "rdt_ledger: $d/text-file: file is not a database" \
  "$(q2 "CREATE VIRTUAL TABLE text USING rdt_ledger(epsilon_budget=1, file='$d/text-file')" | err rdt_ledger | sed 's/ (26)$//')"
q2 "CREATE VIRTUAL TABLE erased USING rdt_ledger(epsilon_budget=1, file='$d/erased-ledger')" >/dev/null
"$shell" "$d/erased-ledger" "DELETE FROM rdt_ledgers"
expect "a ledger whose row was deleted from its file is refused, not restarted" \
  "rdt_ledger: the ledger \"erased\" is missing from its file $d/erased-ledger" \
  "$(q2 "SELECT * FROM erased" | err rdt_ledger)"
bad=$d/bad.db
expect "a database where rdt_ledger_files cannot be created refuses the ledger" \
  "rdt_ledger: cannot create main.rdt_ledger_files: there is already an index named rdt_ledger_files" \
  "$("$shell" "$d/index.db" ".load $ext_abs" "CREATE TABLE z(a)" "CREATE INDEX rdt_ledger_files ON z(a)" "CREATE VIRTUAL TABLE b USING rdt_ledger(epsilon_budget=1)" 2>&1 | err rdt_ledger)"
expect "an unreadable rdt_ledger_files is an error" \
  "rdt_ledger: cannot read main.rdt_ledger_files: no such column: file" \
  "$("$shell" "$bad" ".load $ext_abs" "CREATE TABLE rdt_ledger_files(name)" "CREATE VIRTUAL TABLE b USING rdt_ledger(epsilon_budget=1)" 2>&1 | err rdt_ledger)"
expect "a record that cannot be written refuses the ledger" \
  "rdt_ledger: cannot record the ledger in main.rdt_ledger_files: no new ledgers here|0" \
  "$("$shell" "$bad" ".load $ext_abs" "DROP TABLE rdt_ledger_files" "CREATE TABLE rdt_ledger_files(name TEXT PRIMARY KEY COLLATE NOCASE, file TEXT NOT NULL)" \
       "CREATE TRIGGER no_new BEFORE INSERT ON rdt_ledger_files BEGIN SELECT RAISE(ABORT, 'no new ledgers here'); END" \
       "CREATE VIRTUAL TABLE b USING rdt_ledger(epsilon_budget=1)" 2>&1 | err rdt_ledger)|$("$shell" "$bad" "SELECT count(*) FROM sqlite_master WHERE name = 'b'")"

# An application's authorizer that refuses PRAGMA: a bare name cannot be looked up in every
# schema (refused, nothing charged); a qualified one needs no lookup.
python_ext=(/usr/bin/python3)
if [ "${RDT_SANITIZE:-0}" = 1 ]; then
  python_ext=(env LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)" /usr/bin/python3)
fi
expect "a bare name under an authorizer refusing PRAGMA database_list is an error; a qualified name works" \
  "rdt_fit: cannot list the databases of this connection: not authorized|trained|1" \
  "$("${python_ext[@]}" - "$ext_abs" "$d/py.db" "$(opts 0.5 pybudget)" 2>&1 <<'PY'
import sqlite3, sys
ext, path, opts = sys.argv[1:]
c = sqlite3.connect(path, isolation_level=None)
c.enable_load_extension(True)
c.load_extension(ext)
c.execute("CREATE TABLE t(x, y)")
c.execute("CREATE VIRTUAL TABLE pybudget USING rdt_ledger(epsilon_budget=1)")
c.set_authorizer(lambda action, *rest: sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_PRAGMA else sqlite3.SQLITE_OK)
fit = "SELECT 'trained' FROM (SELECT rdt_fit(?, 'SELECT x, y AS label FROM t'))"
try:
    c.execute(fit, (opts,)).fetchall()
    out = ["charged"]
except sqlite3.OperationalError as e:
    out = [str(e)]
out.append(c.execute(fit, (opts.replace('"pybudget"', '"main.pybudget"'),)).fetchone()[0])
out.append(str(c.execute("SELECT count(*) FROM pybudget WHERE kind = 'charge'").fetchone()[0]))
print("|".join(out))
PY
)"

tap_summary
