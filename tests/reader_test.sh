#!/usr/bin/env bash
# rdt_export / rdt_import round trips, and the stand-alone Python reader (examples/rdt_reader.py)
# agrees with rdt_predict on every test row, for RDT (threshold and majority votes, numeric and
# categorical data, a forest with "keep_trees", categories given as TEXT such as '1.0' or ' 4 ') and
# DiPriMe (classification and regression).
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ext=${RDT_EXT:-./dist/rdt}
shell=${SQLITE3:-sqlite3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/tap.sh

# Each car_spelled column in seven spellings, row by row: ' 4 ', 4e0, +4.0, 04.0, 4.0x (unknown), '' and 4.0.
spell= k=0
for c in buying maint doors persons lug_boot safety; do
  n="CAST(CAST($c AS REAL) AS INTEGER)" k=$((k + 1))
  spell+="UPDATE car_spelled SET $c = CASE (rowid + $k) % 7 WHEN 0 THEN ' ' || $n || ' ' WHEN 1 THEN $n || 'e0'
    WHEN 2 THEN '+' || $c WHEN 3 THEN '0' || $c WHEN 4 THEN $c || 'x' WHEN 5 THEN '' ELSE $c END;
"
done

"$shell" "$tmp/db" >/dev/null <<SQL
.load $ext
.bail on
CREATE TABLE bank(variance REAL, skewness REAL, curtosis REAL, entropy REAL, label INTEGER);
.import --csv --skip 1 tests/data/banknote.csv bank
CREATE TABLE votes(handicapped_infants, water_project_cost_sharing, adoption_of_the_budget_resolution,
  physician_fee_freeze, el_salvador_aid, religious_groups_in_schools, anti_satellite_test_ban,
  aid_to_nicaraguan_contras, mx_missile, immigration, synfuels_corporation_cutback, education_spending,
  superfund_right_to_sue, crime, duty_free_exports, export_administration_act_south_africa, label);
.import --csv --skip 1 tests/data/congressional_voting.csv votes
UPDATE votes SET handicapped_infants = NULLIF(handicapped_infants, ''), physician_fee_freeze = NULLIF(physician_fee_freeze, '');
CREATE TABLE models(name TEXT, model BLOB);
INSERT INTO models SELECT 'bank_threshold', rdt_train('{"epsilon": 1, "trees": 7, "depth": 6, "features": [
  {"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}],
  "classes": [0, 1]}', label, variance, skewness, curtosis, entropy) FROM bank;
INSERT INTO models SELECT 'bank_majority', rdt_train('{"epsilon": 2, "trees": 9, "depth": 5, "vote": "majority", "features": [
  {"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}],
  "classes": [0, 1]}', label, variance, skewness, curtosis, entropy) FROM bank;
INSERT INTO models SELECT 'bank_diprime', rdt_train('{"algorithm": "diprime", "epsilon": 2, "trees": 5, "depth": 4, "features": [
  {"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}],
  "classes": [0, 1]}', label, variance, skewness, curtosis, entropy) FROM bank;
INSERT INTO models SELECT 'bank_regression', rdt_train('{"algorithm": "diprime", "task": "regression", "target": {"min": -9, "max": 3},
  "epsilon": 2, "trees": 5, "depth": 4, "features": [
  {"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}]}', entropy, variance, skewness, curtosis) FROM bank;
INSERT INTO models SELECT 'votes', rdt_train('{"epsilon": 1, "trees": 11, "depth": 7, "classes": ["democrat", "republican"],
  "features": [{"name": "handicapped_infants", "type": "categorical", "values": ["n", "y"]},
               {"name": "physician_fee_freeze", "type": "categorical", "values": ["n", "y"]},
               {"name": "el_salvador_aid", "type": "categorical", "values": ["n", "y"]}]}',
  label, handicapped_infants, physician_fee_freeze, el_salvador_aid) FROM votes;
INSERT INTO models SELECT 'bank_kept', rdt_train('{"epsilon": 2, "trees": 12, "depth": 5, "vote": "majority", "keep_trees": 0.25,
  "features": [
  {"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}],
  "classes": [0, 1]}', label, variance, skewness, curtosis, entropy) FROM bank;
-- Numeric-looking TEXT (sql/reference.md, "Rules for row values"): the Car data with codes written
-- 1.0, as the shell's .import leaves them (TEXT), and the same rows spelled in other ways.
.import --csv tests/data/car_coded.csv car_raw
CREATE TABLE car_spelled AS SELECT * FROM car_raw;
$spell
INSERT INTO models SELECT 'car_coded', rdt_fit('{"epsilon": 2, "trees": 12, "depth": 6, "classes": [1, 2, 3, 4], "features": [
  {"name": "buying", "type": "categorical", "values": [1, 2, 3, 4]}, {"name": "maint", "type": "categorical", "values": [1, 2, 3, 4]},
  {"name": "doors", "type": "categorical", "values": [2, 3, 4, 5]}, {"name": "persons", "type": "categorical", "values": [2, 4, 6]},
  {"name": "lug_boot", "type": "categorical", "values": [1, 2, 3]}, {"name": "safety", "type": "categorical", "values": [1, 2, 3]}]}',
  'SELECT label, buying, maint, doors, persons, lug_boot, safety FROM car_raw');
CREATE TABLE bank_spelled(variance, skewness, curtosis, entropy, label);  -- no affinity: TEXT stays TEXT
INSERT INTO bank_spelled SELECT * FROM bank;
UPDATE bank_spelled SET variance = CASE rowid % 8 WHEN 0 THEN ' ' || variance || ' ' WHEN 1 THEN variance || 'e0'
  WHEN 2 THEN 'inf' WHEN 3 THEN 'nan' WHEN 4 THEN '1e999' WHEN 5 THEN '' WHEN 6 THEN 'abc' ELSE CAST(variance AS TEXT) END;
SQL

for name in bank_threshold bank_majority bank_diprime bank_regression votes bank_kept car_coded; do
  "$shell" "$tmp/db" ".load $ext" "SELECT rdt_export(model) FROM models WHERE name = '$name'" >"$tmp/$name.json"
  if [ "$("$shell" "$tmp/db" ".load $ext" \
      "SELECT rdt_import(CAST(readfile('$tmp/$name.json') AS TEXT)) = model FROM models WHERE name = '$name'")" = 1 ]; then
    ok "rdt_import(rdt_export(model)) gives the identical BLOB ($name)"
  else
    nok "rdt_import(rdt_export(model)) gives the identical BLOB ($name)"
  fi
done

check_reader() { # name, feature columns, table [, what the rows are]
  local name=$1 cols=$2 table=$3 what=${4:-$1}
  "$shell" -csv -header "$tmp/db" "SELECT $cols FROM $table" >"$tmp/$name.rows.csv"
  "$shell" "$tmp/db" ".load $ext" \
    "SELECT rdt_predict((SELECT model FROM models WHERE name = '$name'), $cols) FROM $table" >"$tmp/$name.sql.out"
  python3 examples/rdt_reader.py "$tmp/$name.json" "$tmp/$name.rows.csv" >"$tmp/$name.py.out" 2>"$tmp/$name.err"
  if python3 - "$tmp/$name.sql.out" "$tmp/$name.py.out" <<'PY'
import sys
a = open(sys.argv[1]).read().split("\n")
b = open(sys.argv[2]).read().split("\n")
assert len(a) == len(b) and len(a) > 100, (len(a), len(b))
for x, y in zip(a, b):
    try:
        assert abs(float(x) - float(y)) <= 1e-12 * max(1.0, abs(float(x))), (x, y)
    except ValueError:
        assert x == y, (x, y)
PY
  then ok "the Python reader agrees with rdt_predict on every row ($what)"
  else
    tail -3 "$tmp/$name.err" | sed 's/^/#   /'
    nok "the Python reader agrees with rdt_predict on every row ($what)"
  fi
}
bank_cols="variance, skewness, curtosis, entropy"
check_reader bank_threshold "$bank_cols" bank
check_reader bank_majority "$bank_cols" bank
check_reader bank_diprime "$bank_cols" bank
check_reader bank_regression "variance, skewness, curtosis" bank
check_reader votes "handicapped_infants, physician_fee_freeze, el_salvador_aid" votes
check_reader bank_kept "$bank_cols" bank  # only the 3 trees "keep_trees" chose vote
car_cols="buying, maint, doors, persons, lug_boot, safety"
check_reader car_coded "$car_cols" car_raw "car_coded: TEXT codes written 1.0"
check_reader car_coded "$car_cols" car_spelled "car_coded: codes written ' 4 ', 4e0, +4.0, 04.0, 4.0x, empty"
check_reader bank_threshold "$bank_cols" bank_spelled "bank_threshold: numbers written ' 3.6 ', 3.6e0, inf, nan, 1e999, empty, abc"
expect "the model trained on TEXT codes learned the codes (its predictions are not all one class)" 1 \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT count(DISTINCT rdt_predict(m.model, $car_cols)) > 1 FROM car_raw, models m WHERE m.name = 'car_coded'")"

if "$shell" "$tmp/db" ".load $ext" "SELECT rdt_import('{\"format\": \"rdt-model-json\", \"format_version\": 1}')" 2>&1 |
   grep -q 'rdt_import: '; then ok "rdt_import rejects an incomplete export with a clear error"
else nok "rdt_import rejects an incomplete export with a clear error"; fi
if "$shell" "$tmp/db" ".load $ext" "SELECT rdt_import(replace(rdt_export(model), '\"depth\":6', '\"depth\":5')) FROM models WHERE name = 'bank_threshold'" 2>&1 |
   grep -q 'rdt_import: '; then ok "rdt_import rejects an export whose tables do not match its depth"
else nok "rdt_import rejects an export whose tables do not match its depth"; fi

# The reader refuses what it cannot predict with (multiway trees), instead of guessing.
"$shell" "$tmp/db" ".load $ext" "SELECT rdt_export(rdt_train('{\"noise\": \"matrix\", \"epsilon\": 1, \"trees\": 2, \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": -8, \"max\": 7}]}', label, variance)) FROM bank" >"$tmp/matrix.json"
if /usr/bin/python3 examples/rdt_reader.py "$tmp/matrix.json" /dev/null 2>&1 | grep -q "multiway forests (matrix, rdt#)"; then
  ok "the Python reader refuses a matrix forest's export with a clear message"
else
  nok "the Python reader refuses a matrix forest's export with a clear message"
fi

tap_summary
