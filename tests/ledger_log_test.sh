#!/usr/bin/env bash
# The ledger as an audit log (sql/reference.md, "The privacy-budget ledger"): every charge records
# its outcome (pending, then released or failed), the released model's id and SHA-256 (as rdt_info
# shows them), what was actually trained, the caller's "note"; a release whose outcome cannot be
# recorded is not released; a killed call stays pending; old ledger files gain the columns; the
# IF NOT EXISTS one-liner; what .backup and VACUUM INTO copy; rdt_info's signature_valid.
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ext=${RDT_EXT:-./dist/rdt}
shell=${SQLITE3:-sqlite3}
tmp=$(mktemp -d)
bg=
trap '[ -n "$bg" ] && kill -9 "$bg" 2>/dev/null; rm -rf "$tmp"' EXIT
. tests/tap.sh
db=$tmp/clinic.db
q() { "$shell" "$db" ".load $ext" "$@" 2>&1; }
feat='"classes": [0, 1], "features": [{"name": "x", "type": "numeric", "min": 0, "max": 1}]'
last() { # last <columns>: of the newest charge
  q "SELECT $1 FROM budget WHERE kind = 'charge' ORDER BY id DESC LIMIT 1"
}

q "CREATE TABLE t(x, y)" \
  "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1999) INSERT INTO t SELECT i / 2000.0, i % 3 > 0 FROM n" \
  "CREATE VIRTUAL TABLE IF NOT EXISTS budget USING rdt_ledger(epsilon_budget=20)" >/dev/null

# ---- outcomes ------------------------------------------------------------------------------------
q "CREATE TABLE models AS SELECT 'auto_depth' AS name, rdt_fit('{\"algorithm\": \"rdt\", \"epsilon\": 1, \"ledger\": \"budget\", \"note\": \"cohort 2026, v1\", $feat}',
     'SELECT x, y AS label FROM t') AS model" >/dev/null
expect "a released model: outcome, the curator's note, the request before the rows" \
  "released|cohort 2026, v1|rdt, 10 trees, depth chosen from a noisy row count (14 at most)" "$(last "outcome, note, request")"
expect "... its model_id and model_sha256 are those rdt_info shows for the model returned" "1|1|64" \
  "$(q "SELECT c.model_id = json_extract(rdt_info(m.model), '\$.model_id'), c.model_sha256 = json_extract(rdt_info(m.model), '\$.sha256'),
        length(c.model_sha256) FROM models m, (SELECT * FROM budget WHERE kind = 'charge' ORDER BY id DESC LIMIT 1) c")"
expect "... trained: the depth the noisy row count chose (rdt_info's depth), not the 14 requested" "rdt|10|1|noisy row count" \
  "$(q "SELECT json_extract(c.trained, '\$.algorithm'), json_extract(c.trained, '\$.trees'),
        json_extract(c.trained, '\$.depth') = json_extract(rdt_info(m.model), '\$.depth'), json_extract(c.trained, '\$.depth_from')
        FROM models m, (SELECT * FROM budget WHERE kind = 'charge' ORDER BY id DESC LIMIT 1) c")"
expect "... and rdt_info's depth is below the 14 the request allowed (so the log shows what was trained)" "1" \
  "$(q "SELECT json_extract(rdt_info(model), '\$.depth') < 14 FROM models")"

q "SELECT length(rdt_fit('{\"algorithm\": \"constant\", \"epsilon\": 0.25, \"ledger\": \"budget\", $feat}',
     'SELECT rowid AS id, x, y AS label, ''n'' AS note FROM t'))" >/dev/null
expect "a query's columns that are neither label nor feature are named in the request (ignored_columns), before the rows" \
  'released|constant, ignored_columns ["id","note"]' "$(last "outcome, request")"

out=$(q "SELECT rdt_fit('{\"epsilon\": 0.5, \"ledger\": \"budget\", $feat}', 'SELECT x, abs(-9223372036854775808) AS label FROM t')")
expect "a query that fails while it runs: an error, the charge stands, outcome failed, no model recorded" \
  "1|failed|0.5|||" "$(grep -c 'integer overflow' <<<"$out")|$(last "outcome, epsilon, model_id, model_sha256, trained" | tr -d '\n')"

# matrix_forest, a learner whose size is known once trained: 14 kB here whatever the noise (the default,
# auto, fell back to its 288-byte constant model in 3 of 20 runs, which fit the limit).
out=$(q ".limit length 5000" "SELECT length(rdt_fit('{\"algorithm\": \"matrix_forest\", \"epsilon\": 0.5, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t'))")
expect "a learner's model above SQLITE_LIMIT_LENGTH: an error saying so, recorded as failed, no model id or hash" \
  "1|failed|0.5||" "$(grep -c 'rdt_fit: the trained model is [0-9]* bytes, above this connection.s SQLITE_LIMIT_LENGTH of 5000, so nothing was released' <<<"$out")|$(last "outcome, epsilon, model_id, model_sha256" | tr -d '\n')"

q "INSERT INTO models SELECT 'auto', rdt_fit('{\"algorithm\": \"auto\", \"epsilon\": 1, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t')" >/dev/null
expect "auto: trained names the learner auto chose (rdt_info's chosen), and the sha256 matches" "auto|1|1" \
  "$(q "SELECT json_extract(c.trained, '\$.algorithm'), json_extract(c.trained, '\$.chosen') = json_extract(rdt_info(m.model), '\$.chosen'),
        c.model_sha256 = json_extract(rdt_info(m.model), '\$.sha256')
        FROM models m, (SELECT * FROM budget WHERE kind = 'charge' ORDER BY id DESC LIMIT 1) c WHERE m.name = 'auto'")"
q "INSERT INTO models SELECT 'tree', rdt_fit('{\"algorithm\": \"private_tree\", \"depth\": 6, \"epsilon\": 1, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t')" >/dev/null
expect "private_tree: trained holds the depth used (rdt_info's depth_used), beside the depth asked" "private_tree|6|1" \
  "$(q "SELECT json_extract(c.trained, '\$.algorithm'), json_extract(c.trained, '\$.depth'),
        json_extract(c.trained, '\$.depth_used') = json_extract(rdt_info(m.model), '\$.depth_used')
        FROM models m, (SELECT * FROM budget WHERE kind = 'charge' ORDER BY id DESC LIMIT 1) c WHERE m.name = 'tree'")"
q "INSERT INTO models SELECT 'matrix', rdt_fit('{\"noise\": \"matrix\", \"epsilon\": 1, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t')" >/dev/null
expect "a matrix forest: trained holds the trees it chose and its strategy (rdt_info's)" "1|1|trees chosen from the structure" \
  "$(q "SELECT json_extract(c.trained, '\$.trees') = json_extract(rdt_info(m.model), '\$.trees'),
        json_extract(c.trained, '\$.strategy') = json_extract(rdt_info(m.model), '\$.matrix.strategy'), substr(c.request, 20, 31)
        FROM models m, (SELECT * FROM budget WHERE kind = 'charge' ORDER BY id DESC LIMIT 1) c WHERE m.name = 'matrix'")"

q "SELECT dp_quantile('{\"epsilon\": 0.25, \"lo\": 0, \"hi\": 1, \"ledger\": \"budget\", \"note\": \"median x for the bounds\"}', 'SELECT x FROM t')" >/dev/null
expect "dp_quantile: released, with its note; no model" "dp_quantile|released|median x for the bounds||" "$(last "function, outcome, note, model_id, trained" | tr -d '\n')"
q "CREATE TABLE exact AS SELECT rdt_fit('{\"epsilon\": null, \"trees\": 4, \"depth\": 3, $feat}', 'SELECT x, y AS label FROM t') AS m" >/dev/null
q "SELECT length(rdt_predict_batch(m, '{\"epsilon\": 0.25, \"ledger\": \"budget\", \"note\": \"ward 3 triage\"}', t.rowid, x)) FROM t, exact" >/dev/null
expect "rdt_predict_batch: released, with its note" "rdt_predict_batch|released|ward 3 triage" "$(last "function, outcome, note")"

# ---- "note" is a parameter: its mistakes are errors before anything is charged -------------------
n=$(last "count(*) OVER ()")
expect "a note without a ledger is an error" 'rdt_fit: "note" is recorded with a ledger charge: it needs "ledger"' \
  "$(q "SELECT rdt_fit('{\"epsilon\": 1, \"note\": \"x\", $feat}', 'SELECT x, y AS label FROM t')" | grep -o 'rdt_fit: .*')"
expect "a note that is not a string is an error (a learner's options too)" 1 \
  "$(q "SELECT rdt_fit('{\"algorithm\": \"naive_bayes\", \"epsilon\": 1, \"ledger\": \"budget\", \"note\": 7, $feat}', 'SELECT x, y AS label FROM t')" |
     grep -c 'rdt_fit: "note" must be a string of 1 to 1024 bytes')"
expect "a note above 1024 bytes is an error (dp_quantile)" 1 \
  "$(q "SELECT dp_quantile('{\"epsilon\": 1, \"lo\": 0, \"hi\": 1, \"ledger\": \"budget\", \"note\": \"' || printf('%.*c', 1025, 'a') || '\"}', 'SELECT x FROM t')" |
     grep -c 'dp_quantile: "note" must be a string of 1 to 1024 bytes')"
expect "a note holding a NUL is an error (the JSON reader refuses it)" 1 \
  "$(q "SELECT rdt_fit('{\"epsilon\": 1, \"ledger\": \"budget\", \"note\": \"a\\u0000b\", $feat}', 'SELECT x, y AS label FROM t')" |
     grep -c 'rdt_fit: options are not valid JSON: NUL character in string')"
expect "rdt_predict_batch: a note without a ledger is an error" 1 \
  "$(q "SELECT rdt_predict_batch(m, '{\"epsilon\": 1, \"note\": \"x\"}', t.rowid, x) FROM t, exact" | grep -c 'rdt_predict_batch: "note" is recorded with a ledger charge')"
expect "rdt_predict_batch: a seed with a ledger is refused (a seeded answer is a deterministic function of the rows)" 1 \
  "$(q "SELECT rdt_predict_batch(m, '{\"epsilon\": 0.5, \"strategy\": \"query\", \"seed\": 4, \"ledger\": \"budget\"}', t.rowid, x) FROM t, exact" |
     grep -c 'rdt_predict_batch: "seed" cannot be combined with "ledger"')"
expect "... and none of them charged anything" "$n" "$(last "count(*) OVER ()")"

# ---- fail closed: a release whose outcome cannot be recorded is not released ----------------------
"$shell" "$db-rdt-ledger" "CREATE TRIGGER no_outcome BEFORE UPDATE ON rdt_charges BEGIN SELECT RAISE(ABORT, 'outcomes refused'); END" 2>&1
out=$(q "SELECT length(rdt_fit('{\"epsilon\": 0.5, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t'))")
expect "rdt_fit: the outcome cannot be written: an error, no model, the charge stands (pending)" \
  "rdt_fit: the model was trained but not released: cannot record the outcome in ledger \"budget\": outcomes refused (the charge stands)|pending|0.5" \
  "$(grep -o 'rdt_fit: .*' <<<"$out")|$(last "outcome, epsilon" | tr -d '\n')"
out=$(q "SELECT dp_quantile('{\"epsilon\": 0.25, \"lo\": 0, \"hi\": 1, \"ledger\": \"budget\"}', 'SELECT x FROM t')")
expect "dp_quantile: likewise, no number" 1 "$(grep -c 'dp_quantile: the quantile was drawn but not released' <<<"$out")"
out=$(q "SELECT rdt_predict_batch(m, '{\"epsilon\": 0.25, \"ledger\": \"budget\"}', t.rowid, x) FROM t, exact")
expect "rdt_predict_batch: likewise, no answers" 1 "$(grep -c 'rdt_predict_batch: cannot record the outcome in ledger "budget": outcomes refused' <<<"$out")"
"$shell" "$db-rdt-ledger" "DROP TRIGGER no_outcome"
"$shell" "$db-rdt-ledger" "CREATE TRIGGER edited AFTER INSERT ON rdt_charges BEGIN UPDATE rdt_charges SET outcome = 'edited' WHERE id = new.id; END"
out=$(q "SELECT length(rdt_fit('{\"epsilon\": 0.25, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t'))")
expect "a charge row edited while the call runs (no longer pending): an error, no model" 1 \
  "$(grep -c 'rdt_fit: the model was trained but not released: the charge [0-9]* is no longer pending in ledger "budget" (its row was edited)' <<<"$out")"
"$shell" "$db-rdt-ledger" "DROP TRIGGER edited"

# ---- a call that never ends stays pending ----------------------------------------------------------
# An endless query: the charge commits before its first row, then the process is killed.
"$shell" "$db" ".load $ext" "SELECT rdt_fit('{\"epsilon\": 0.125, \"ledger\": \"budget\", \"note\": \"killed\", $feat}',
  'WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n) SELECT 0.5 AS x, 1 AS label FROM n')" >/dev/null 2>&1 &
bg=$!
for _ in $(seq 600); do [ "$(last "note")" = killed ] && break; sleep 0.1; done
kill -9 "$bg" 2>/dev/null; wait "$bg" 2>/dev/null; bg=
expect "a call killed after its charge: the charge stands, outcome pending" "killed|pending|0.125" "$(last "note, outcome, epsilon" | tr -d '\n')"

# ---- a ledger file from before the audit columns ---------------------------------------------------
old=$tmp/old.db
"$shell" "$old" "CREATE TABLE t(x, y)" "INSERT INTO t VALUES (0.2, 0), (0.8, 1)" \
  "CREATE TABLE rdt_ledger_files(name TEXT PRIMARY KEY COLLATE NOCASE, file TEXT NOT NULL)" \
  "INSERT INTO rdt_ledger_files VALUES ('budget', '$old-rdt-ledger')" \
  "PRAGMA writable_schema = ON" \
  "INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) VALUES ('table', 'budget', 'budget', 0, 'CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=3.0)')" >/dev/null
"$shell" "$old-rdt-ledger" "CREATE TABLE rdt_ledgers(name TEXT PRIMARY KEY, budget_num INTEGER NOT NULL, created TEXT)" \
  "CREATE TABLE rdt_charges(id INTEGER PRIMARY KEY, ledger TEXT NOT NULL, time TEXT NOT NULL, function TEXT NOT NULL, epsilon_num INTEGER NOT NULL, note TEXT)" \
  "INSERT INTO rdt_ledgers VALUES ('budget', 12884901888, '2026-01-01T00:00:00.000Z')" \
  "INSERT INTO rdt_charges VALUES (1, 'budget', '2026-01-02T00:00:00.000Z', 'rdt_fit', 4294967296, 'rdt, 10 trees, depth 8')"
"$shell" "$old" ".load $ext" "SELECT length(rdt_fit('{\"algorithm\": \"rdt\", \"epsilon\": 0.5, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t'))" >/dev/null 2>&1
expect "an old ledger file: its charge reads back (request, no outcome), a new one is recorded in full, the sums hold" \
  "1|rdt_fit|1.0||rdt, 10 trees, depth 8|1.0,2|rdt_fit|0.5|released|rdt, 10 trees, depth chosen from a noisy row count (14 at most)|1.5" \
  "$("$shell" "$old" ".load $ext" "SELECT group_concat(id || '|' || function || '|' || epsilon || '|' || ifnull(outcome, '') || '|' || request || '|' || spent, ',')
     FROM budget WHERE kind = 'charge'" 2>&1)"

# ---- the one-liner that gives a database its ledger --------------------------------------------------
before=$(q "SELECT count(*), max(spent) FROM budget")
q "CREATE VIRTUAL TABLE IF NOT EXISTS budget USING rdt_ledger(epsilon_budget=1000)" >/dev/null
expect "CREATE VIRTUAL TABLE IF NOT EXISTS again: no error, the budget and the charges as they were" "20.0|$before" \
  "$(q "SELECT epsilon FROM budget WHERE kind = 'budget'")|$(q "SELECT count(*), max(spent) FROM budget")"

# ---- .backup and VACUUM INTO copy the database, not its ledger file ----------------------------------
q ".backup $tmp/backup.db" "VACUUM INTO '$tmp/vacuumed.db'" >/dev/null
for copy in backup vacuumed; do
  out=$("$shell" "$tmp/$copy.db" ".load $ext" "SELECT rdt_fit('{\"epsilon\": 0.5, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t')" 2>&1)
  expect "a $copy copy (default ledger file) refuses to charge: its table resolves to a file the record does not name" 1 \
    "$(grep -c "is recorded in main.rdt_ledger_files with file '$db-rdt-ledger', but its table now resolves to file '$tmp/$copy.db-rdt-ledger'" <<<"$out")"
done
expect "... and creates no ledger file beside it" "no file" "$([ -e "$tmp/backup.db-rdt-ledger" ] || [ -e "$tmp/vacuumed.db-rdt-ledger" ] || echo no file)"
shared=$tmp/shared.db
"$shell" "$shared" ".load $ext" "CREATE TABLE t(x, y)" "INSERT INTO t VALUES (0.2, 0), (0.8, 1)" \
  "CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=2, file='$tmp/shared-ledger')" ".backup $tmp/shared-copy.db" >/dev/null 2>&1
"$shell" "$tmp/shared-copy.db" ".load $ext" "SELECT length(rdt_fit('{\"epsilon\": 1.5, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t'))" >/dev/null 2>&1
expect "a copy of a database whose ledger names its file charges that same ledger: one budget for both" \
  "1.5|0.5|1" "$("$shell" "$shared" ".load $ext" "SELECT max(spent), min(remaining) FROM budget" 2>&1)|$("$shell" "$shared" ".load $ext" \
    "SELECT rdt_fit('{\"epsilon\": 1, \"ledger\": \"budget\", $feat}', 'SELECT x, y AS label FROM t')" 2>&1 | grep -c 'over budget')"

# ---- rdt_info: signature_valid -----------------------------------------------------------------------
q "CREATE TABLE keys AS SELECT rdt_keypair() AS k" \
  "CREATE TABLE signed AS SELECT rdt_sign(model, json_extract(k, '\$.secret_key'), 'v1') AS model FROM models, keys WHERE name = 'auto_depth'" >/dev/null
expect "unsigned: signature_valid null; signed: true, and the signed BLOB has its own sha256" "null|1|1" \
  "$(q "SELECT json_type(rdt_info(model), '\$.signature_valid') FROM models WHERE name = 'auto_depth'")|$(q \
     "SELECT json_extract(rdt_info(model), '\$.signature_valid'), json_extract(rdt_info(model), '\$.sha256') <> (SELECT model_sha256 FROM budget WHERE id = 1) FROM signed" | tr '\n' '|' | sed 's/|$//')"
q "SELECT writefile('$tmp/signed.rdt', model) FROM signed" >/dev/null
# Flip a bit of the signature (64 bytes before the 32-byte checksum) and recompute the checksum
# (BLAKE2b-256 of everything before it), as an editor would: the model still decodes.
/usr/bin/python3 - "$tmp/signed.rdt" "$tmp/forged.rdt" <<'PY'
import hashlib, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-32 - 10] ^= 1
b[-32:] = hashlib.blake2b(bytes(b[:-32]), digest_size=32).digest()
open(sys.argv[2], "wb").write(bytes(b))
PY
expect "a forged signature (checksum recomputed): still decodes and says signed, but signature_valid is false" "1|0|0" \
  "$(q "SELECT json_extract(i, '\$.signed'), json_extract(i, '\$.signature_valid'), rdt_verify(m, json_extract(k, '\$.public_key'))
        FROM (SELECT readfile('$tmp/forged.rdt') AS m), keys, (SELECT rdt_info(readfile('$tmp/forged.rdt')) AS i)" | tr -d '\n')"

tap_summary
