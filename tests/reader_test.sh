#!/usr/bin/env bash
# rdt_export / rdt_import round trips, and the stand-alone Python reader (examples/rdt_reader.py)
# agrees with rdt_predict on every test row, for RDT (threshold and majority votes, numeric and
# categorical data, a forest with "keep_trees", categories given as TEXT such as '1.0' or ' 4 ') and
# DiPriMe (classification and regression); and for learner models (their export's "model_hex"): every
# learner, naive_bayes choosing each readout on its rows, boost's one-gradient flag refused where it cannot be, auto choosing each of naive_bayes, private_tree, boost (regression),
# matrix_forest and its constant, and corrupted or edited exports refused with a message.
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
-- 2100 rows whose label carries no signal: enough rows for auto's classification guard (n^ eps >= 1900)
CREATE TABLE noise AS SELECT (value % 97) * 1.0 AS x, (value * 7919) % 13 > 6 AS label FROM generate_series(1, 2100);
CREATE TABLE models(name TEXT, model BLOB);
INSERT INTO models SELECT 'bank_threshold', rdt_train('{"epsilon": 1, "trees": 7, "depth": 6, "features": [
  {"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}],
  "classes": [0, 1]}', label, variance, skewness, curtosis, entropy) FROM bank;
INSERT INTO models SELECT 'bank_copied', rdt_train('{"epsilon": 1, "trees": 7, "depth": 6, "features": [
  {"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}],
  "classes": {"copied_from_rows": [0, 1]}}', label, variance, skewness, curtosis, entropy) FROM bank;
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
INSERT INTO models SELECT 'car_coded', rdt_fit('{"epsilon": 2, "seed": 21, "trees": 12, "depth": 6, "classes": [1, 2, 3, 4], "features": [
  {"name": "buying", "type": "categorical", "values": [1, 2, 3, 4]}, {"name": "maint", "type": "categorical", "values": [1, 2, 3, 4]},
  {"name": "doors", "type": "categorical", "values": [2, 3, 4, 5]}, {"name": "persons", "type": "categorical", "values": [2, 4, 6]},
  {"name": "lug_boot", "type": "categorical", "values": [1, 2, 3]}, {"name": "safety", "type": "categorical", "values": [1, 2, 3]}]}',
  'SELECT label, buying, maint, doors, persons, lug_boot, safety FROM car_raw');
CREATE TABLE bank_spelled(variance, skewness, curtosis, entropy, label);  -- no affinity: TEXT stays TEXT
INSERT INTO bank_spelled SELECT * FROM bank;
UPDATE bank_spelled SET variance = CASE rowid % 8 WHEN 0 THEN ' ' || variance || ' ' WHEN 1 THEN variance || 'e0'
  WHEN 2 THEN 'inf' WHEN 3 THEN 'nan' WHEN 4 THEN '1e999' WHEN 5 THEN '' WHEN 6 THEN 'abc' ELSE CAST(variance AS TEXT) END;
SQL

for name in bank_threshold bank_copied bank_majority bank_diprime bank_regression votes bank_kept car_coded; do
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
check_reader bank_copied "$bank_cols" bank "a forest whose classes were copied from the rows"
expect "a copied domain survives the forest export: domain_from_rows, and NOT FOR RELEASE after import" \
  "true|NOT FOR RELEASE" \
  "$(python3 -c 'import json,sys; print(str(json.load(open(sys.argv[1]))["domain_from_rows"]).lower())' "$tmp/bank_copied.json")|$(
     "$shell" "$tmp/db" ".load $ext" "SELECT substr(json_extract(rdt_info(rdt_import(CAST(readfile('$tmp/bank_copied.json') AS TEXT))), '\$.release'), 1, 15)")"
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

# ---- Learner models (their export carries the BLOB as "model_hex") -------------------------------
# Every learner the reader predicts with, and "auto" where it chooses each of them (asserted from
# rdt_info below, so the rows test what they say), trained with a seed on the shipped data.
bank_feats='{"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}'
bank3_feats='{"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13},
  {"name": "curtosis", "type": "numeric", "min": -6, "max": 18}'
car_feats='{"name": "buying", "type": "categorical", "values": ["vhigh", "high", "med", "low"]},
  {"name": "maint", "type": "categorical", "values": ["vhigh", "high", "med", "low"]},
  {"name": "doors", "type": "categorical", "values": ["2", "3", "4", "5more"]}, {"name": "persons", "type": "categorical", "values": ["2", "4", "more"]},
  {"name": "lug_boot", "type": "categorical", "values": ["small", "med", "big"]}, {"name": "safety", "type": "categorical", "values": ["low", "med", "high"]}'
car_classes='"classes": ["unacc", "acc", "good", "vgood"]'
votes_feats='{"name": "handicapped_infants", "type": "categorical", "values": ["n", "y"]},
  {"name": "physician_fee_freeze", "type": "categorical", "values": ["n", "y"]}, {"name": "el_salvador_aid", "type": "categorical", "values": ["n", "y"]},
  {"name": "water_project_cost_sharing", "type": "categorical", "values": ["n", "y"]},
  {"name": "adoption_of_the_budget_resolution", "type": "categorical", "values": ["n", "y"]},
  {"name": "religious_groups_in_schools", "type": "categorical", "values": ["n", "y"]},
  {"name": "anti_satellite_test_ban", "type": "categorical", "values": ["n", "y"]}, {"name": "aid_to_nicaraguan_contras", "type": "categorical", "values": ["n", "y"]},
  {"name": "mx_missile", "type": "categorical", "values": ["n", "y"]}, {"name": "immigration", "type": "categorical", "values": ["n", "y"]},
  {"name": "crime", "type": "categorical", "values": ["n", "y"]}'
votes_cols="handicapped_infants, physician_fee_freeze, el_salvador_aid, water_project_cost_sharing, adoption_of_the_budget_resolution,
  religious_groups_in_schools, anti_satellite_test_ban, aid_to_nicaraguan_contras, mx_missile, immigration, crime"
bank3_cols="variance, skewness, curtosis"
learner_models=""
learner() { # name, options (without braces), query
  learner_models+="$1 "
  printf "INSERT INTO models SELECT '%s', rdt_fit('{%s}', '%s');\n" "$1" "$2" "$3"
}
{
  echo ".load $ext"
  echo ".bail on"
  echo ".import --csv tests/data/car.csv car"
  car_q="SELECT label, $car_cols FROM car" bank_q="SELECT label, $bank_cols FROM bank" reg_q="SELECT entropy AS label, $bank3_cols FROM bank"
  votes_q="SELECT label, $votes_cols FROM votes"
  learner car_constant "\"algorithm\": \"constant\", \"epsilon\": 1, \"seed\": 1, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner bank_constant_regression "\"algorithm\": \"constant\", \"task\": \"regression\", \"target\": {\"min\": -9, \"max\": 3}, \"epsilon\": 1, \"seed\": 2, \"features\": [$bank3_feats]" "$reg_q"
  learner car_nb_bayes "\"algorithm\": \"naive_bayes\", \"readout\": \"bayes\", \"epsilon\": 1, \"seed\": 3, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner car_nb_moments "\"algorithm\": \"naive_bayes\", \"readout\": \"moments\", \"epsilon\": 1, \"seed\": 4, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner bank_nb_auto_bins "\"algorithm\": \"naive_bayes\", \"epsilon\": 1, \"seed\": 5, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner bank_nb_moments "\"algorithm\": \"naive_bayes\", \"readout\": \"moments\", \"epsilon\": 0.5, \"seed\": 6, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner bank_nb_exact "\"algorithm\": \"naive_bayes\", \"bins\": 7, \"epsilon\": null, \"seed\": 7, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner car_boost "\"algorithm\": \"boost\", \"epsilon\": 2, \"seed\": 8, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner bank_boost "\"algorithm\": \"boost\", \"epsilon\": 1, \"seed\": 9, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner bank_boost_bins "\"algorithm\": \"boost\", \"bins\": 16, \"rounds\": 2, \"learning_rate\": 0.5, \"epsilon\": 3, \"seed\": 10, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner bank_boost_regression "\"algorithm\": \"boost\", \"task\": \"regression\", \"target\": {\"min\": -9, \"max\": 3}, \"epsilon\": 1, \"seed\": 11, \"features\": [$bank3_feats]" "$reg_q"
  learner car_tree "\"algorithm\": \"private_tree\", \"epsilon\": 1, \"seed\": 12, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner bank_tree "\"algorithm\": \"private_tree\", \"depth\": 5, \"bins\": 16, \"epsilon\": 2, \"seed\": 13, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner votes_tree_exact "\"algorithm\": \"private_tree\", \"depth\": 3, \"epsilon\": null, \"seed\": 14, \"classes\": [\"democrat\", \"republican\"], \"features\": [$votes_feats]" "$votes_q"
  learner car_auto_moments "\"epsilon\": 1, \"seed\": 1, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner bank_nb_chosen_bayes "\"algorithm\": \"naive_bayes\", \"readout\": \"auto\", \"epsilon\": 1, \"seed\": 2, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner bank_nb_chosen_moments "\"algorithm\": \"naive_bayes\", \"readout\": \"auto\", \"epsilon\": 1, \"seed\": 3, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner bank_auto_tree "\"epsilon\": 0.3, \"seed\": 1, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner noise_auto_constant "\"epsilon\": 1, \"seed\": 14, \"classes\": [0, 1], \"features\": [{\"name\": \"x\", \"type\": \"numeric\", \"min\": 0, \"max\": 100}]" "SELECT label, x FROM noise"
  learner bank_auto_regression "\"task\": \"regression\", \"target\": {\"min\": -9, \"max\": 3}, \"epsilon\": 1, \"seed\": 15, \"features\": [$bank3_feats]" "$reg_q"
  learner bank_auto_constant_regression "\"task\": \"regression\", \"target\": {\"min\": -9, \"max\": 3}, \"epsilon\": 1, \"seed\": 15, \"features\": [$bank3_feats]" "$reg_q WHERE rowid <= 100"
  learner bank_nb_copied "\"algorithm\": \"naive_bayes\", \"epsilon\": 1, \"seed\": 19, \"classes\": {\"copied_from_rows\": [0, 1]}, \"features\": [$bank_feats]" "$bank_q"
  learner bank_random_trees "\"algorithm\": \"random_trees\", \"epsilon\": 1, \"seed\": 16, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner car_random_trees_exact "\"algorithm\": \"random_trees\", \"trees\": 5, \"epsilon\": null, \"seed\": 17, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner car_matrix_forest "\"algorithm\": \"matrix_forest\", \"epsilon\": 2, \"seed\": 18, $car_classes, \"features\": [$car_feats]" "$car_q"
  learner bank_auto_matrix "\"epsilon\": 1, \"seed\": 1, \"classes\": [0, 1], \"features\": [$bank_feats]" "$bank_q"
  learner car_auto_matrix "\"epsilon\": 2, \"seed\": 1, $car_classes, \"features\": [$car_feats]" "$car_q"
} >"$tmp/learners.sql"
"$shell" "$tmp/db" <"$tmp/learners.sql" >/dev/null

info() { "$shell" "$tmp/db" ".load $ext" "SELECT json_extract(rdt_info(model), '\$.$2') FROM models WHERE name = '$1'"; }
expect "a learner model's copied domain survives its export (NOT FOR RELEASE after import)" "NOT FOR RELEASE" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT substr(json_extract(rdt_info(rdt_import(rdt_export(model))), '\$.release'), 1, 15) FROM models WHERE name = 'bank_nb_copied'")"
expect "auto chose naive_bayes with the moments readout (car, seed 1)" "naive_bayes moments" \
  "$(info car_auto_moments chosen) $(info car_auto_moments readout | cut -d: -f1)"
expect "naive_bayes chose each readout on its rows (payload version 5: banknote, seeds 2 and 3)" "bayes moments auto auto" \
  "$(info bank_nb_chosen_bayes readout) $(info bank_nb_chosen_moments readout | cut -d: -f1) $(info bank_nb_chosen_bayes readout_rule | cut -d: -f1) $(info bank_nb_chosen_moments readout_rule | cut -d: -f1)"
expect "auto chose private_tree (banknote, epsilon 0.3)" private_tree "$(info bank_auto_tree chosen)"
expect "auto's guard fell back to its constant model (2100 rows without signal, epsilon 1)" "constant matrix_forest" \
  "$(info noise_auto_constant chosen) $(info noise_auto_constant auto.rule_picked)"
expect "auto without a guard (n^ eps < 1900: car at epsilon 1, banknote at 0.3): no gain, the slice trained the pick" "null null 1 1" \
  "$(info car_auto_moments auto.validation_gain | sed 's/^$/null/') $(info bank_auto_tree auto.validation_gain | sed 's/^$/null/') $("$shell" "$tmp/db" ".load $ext" "SELECT sum(json_extract(rdt_info(model), '\$.auto.validation_choice') LIKE 'none: its slice%') FROM models WHERE name = 'car_auto_moments'") $("$shell" "$tmp/db" ".load $ext" "SELECT sum(json_extract(rdt_info(model), '\$.auto.validation_choice') LIKE 'none: its slice%') FROM models WHERE name = 'bank_auto_tree'")"
expect "auto chose boost (regression)" boost "$(info bank_auto_regression chosen)"
expect "auto's rule picked the constant model itself (regression on 100 rows), at its larger share" "constant constant" \
  "$(info bank_auto_constant_regression chosen) $(info bank_auto_constant_regression auto.rule_picked)"
expect "auto chose matrix_forest (banknote, epsilon 1; car, epsilon 2)" "matrix_forest matrix_forest" \
  "$(info bank_auto_matrix chosen) $(info car_auto_matrix chosen)"
expect "the naive_bayes models are of payload versions 1 (bayes), 3 (moments), 2 and 4 (auto bins)" \
  "fixed moments auto moments fixed" \
  "$(info car_nb_bayes bins_rule) $(info car_nb_moments readout | cut -d: -f1) $(info bank_nb_auto_bins bins_rule | cut -d: -f1) $(info bank_nb_moments readout | cut -d: -f1) $(info bank_nb_exact bins_rule)"

for name in $learner_models; do
  "$shell" "$tmp/db" ".load $ext" "SELECT rdt_export(model) FROM models WHERE name = '$name'" >"$tmp/$name.json"
done
for name in $learner_models; do
  case $name in
    car_*) check_reader "$name" "$car_cols" car "learner: $name" ;;
    votes_*) check_reader "$name" "$votes_cols" votes "learner: $name" ;;
    noise_*) check_reader "$name" x noise "learner: $name" ;;
    *_regression) check_reader "$name" "$bank3_cols" bank "learner: $name" ;;
    *) check_reader "$name" "$bank_cols" bank "learner: $name" ;;
  esac
done
check_reader bank_nb_moments "$bank_cols" bank_spelled "learner: bank_nb_moments, numbers written ' 3.6 ', 3.6e0, inf, nan, 1e999, empty, abc"
check_reader bank_boost "$bank_cols" bank_spelled "learner: bank_boost, numbers written ' 3.6 ', 3.6e0, inf, nan, 1e999, empty, abc"
check_reader car_tree "$car_cols" car_spelled "learner: car_tree on coded rows (every value \`other\` or missing)"
check_reader car_matrix_forest "$car_cols" car_spelled "learner: car_matrix_forest on coded rows (every value \`other\` or missing)"

# A corrupted or edited export is refused with a clear message: non-zero exit, no traceback.
refused() { # name, expected message part, export file
  local out rc
  out=$(python3 examples/rdt_reader.py "$3" "$tmp/car_nb_moments.rows.csv" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && printf '%s' "$out" | grep -qF "$2" && ! printf '%s' "$out" | grep -q Traceback; then ok "$1"
  else printf '#   exit %s: %s\n' "$rc" "$(printf '%s' "$out" | tail -2)"; nok "$1"; fi
}
edit_export() { # source export, output file, python edit of bytearray b (the BLOB)
  python3 - "$1" "$2" "$3" <<'PY'
import hashlib, json, struct, sys
doc = json.load(open(sys.argv[1]))
b = bytearray(bytes.fromhex(doc["model_hex"]))
def fix(b):  # tests/fuzz/make-seeds.sh: the checksum of an edited model, recomputed
    b[-32:] = hashlib.blake2b(bytes(b[:-32]), digest_size=32).digest()
exec(sys.argv[3])
doc["model_hex"] = b.hex() if isinstance(b, (bytes, bytearray)) else b
json.dump(doc, open(sys.argv[2], "w"))
PY
}
edit_export "$tmp/car_nb_moments.json" "$tmp/bad_bit.json" 'b[len(b) // 2] ^= 4'
refused "the reader refuses a model_hex with one bit flipped (checksum)" "model checksum mismatch (corrupted or edited)" "$tmp/bad_bit.json"
edit_export "$tmp/car_nb_moments.json" "$tmp/bad_short.json" 'b = b[:-1]'
refused "the reader refuses a truncated model_hex" "model is truncated" "$tmp/bad_short.json"
edit_export "$tmp/car_nb_moments.json" "$tmp/bad_upper.json" 'b = b.hex().upper()'
refused "the reader refuses a model_hex that is not lowercase hexadecimal" "lowercase hexadecimal" "$tmp/bad_upper.json"
edit_export "$tmp/car_nb_moments.json" "$tmp/bad_magic.json" 'b[0:8] = b"NOTMODEL"'
refused "the reader refuses a BLOB that is not an rdt model" "not an rdt model" "$tmp/bad_magic.json"
# Edited and re-checksummed: the payload's checks still catch it (naive_bayes version 9; a score made NaN).
edit_export "$tmp/car_nb_moments.json" "$tmp/bad_version.json" '
i = b.find(b"LRNR") + 16 + 24; b[i:i + 4] = struct.pack("<I", 9); fix(b)'
refused "the reader refuses a re-checksummed BLOB with an unknown naive_bayes payload version" "malformed learner state" "$tmp/bad_version.json"
edit_export "$tmp/car_nb_moments.json" "$tmp/bad_score.json" 'b[-40:-32] = struct.pack("<d", float("nan")); fix(b)'
refused "the reader refuses a re-checksummed BLOB with a NaN score" "malformed learner state" "$tmp/bad_score.json"
edit_export "$tmp/bank_nb_chosen_bayes.json" "$tmp/bad_share.json" '
i = b.find(b"LRNR") + 16 + 24; assert struct.unpack_from("<I", b, i)[0] == 5
struct.pack_into("<Q", b, i + 4, struct.unpack_from("<Q", b, i + 4)[0] + 1); fix(b)'
refused "the reader refuses a re-checksummed naive_bayes whose readout share is not epsilon / 20" "malformed learner state" "$tmp/bad_share.json"
edit_export "$tmp/car_tree.json" "$tmp/bad_split.json" '
i = b.find(b"LRNR") + 16 + 24 + 44; b[i:i + 4] = struct.pack("<I", 99); fix(b)'
refused "the reader refuses a re-checksummed private_tree whose split names feature 99" "malformed learner state" "$tmp/bad_split.json"
edit_export "$tmp/car_boost.json" "$tmp/bad_trailing.json" '
n = struct.unpack_from("<I", b, 40)[0]; p = 48
for _ in range(n):
    tag, fl, ln = struct.unpack_from("<4sIQ", b, p)
    if tag == b"LRNR": struct.pack_into("<Q", b, p + 8, ln + 8); b[p + 16 + ln:p + 16 + ln] = bytes(8); break
    p += 16 + ln
struct.pack_into("<Q", b, 32, len(b)); fix(b)'
refused "the reader refuses a re-checksummed boost payload with trailing bytes" "malformed learner state" "$tmp/bad_trailing.json"
# boost's flag of contract 3b (bit 24 of its first word): only a two-class model may set it, and only to 1.
edit_export "$tmp/car_boost.json" "$tmp/bad_flag4.json" '
i = b.find(b"LRNR") + 16 + 24; assert b[i + 3] == 0; b[i + 3] = 1; fix(b)'
refused "the reader refuses a re-checksummed four-class boost claiming one gradient per bin" "malformed learner state" "$tmp/bad_flag4.json"
edit_export "$tmp/bank_boost.json" "$tmp/bad_flag2.json" '
i = b.find(b"LRNR") + 16 + 24; assert b[i + 3] == 1; b[i + 3] = 2; fix(b)'
refused "the reader refuses a re-checksummed two-class boost whose flag word is 2" "malformed learner state" "$tmp/bad_flag2.json"
# A learner forest's own BLOB is checked too: a byte of the nested forest changed, the outer checksum fixed.
edit_export "$tmp/car_matrix_forest.json" "$tmp/bad_nested.json" 'b[b.find(b"RDTMODEL", 8) + 60] ^= 1; fix(b)'
refused "the reader refuses a learner forest whose nested forest was edited" "malformed learner state" "$tmp/bad_nested.json"
# auto's "no guard" flag (bit 30 of the picked id, auto.c step 4a) only where its n^ eps is below 1900, with a gain of 0.
edit_export "$tmp/car_auto_matrix.json" "$tmp/bad_unguarded.json" '
i = b.find(b"LRNR") + 16 + 24; picked = struct.unpack_from("<I", b, i + 4)[0]; assert picked & 0xC0000000 == 0x80000000
assert struct.unpack_from("<d", b, i + 8)[0] * 2 >= 1900
struct.pack_into("<I", b, i + 4, picked | 0x40000000); struct.pack_into("<d", b, i + 24, 0.0); fix(b)'
refused "the reader refuses a re-checksummed auto claiming no guard where n^ eps >= 1900 (car, epsilon 2)" "malformed learner state" "$tmp/bad_unguarded.json"
edit_export "$tmp/car_auto_moments.json" "$tmp/bad_gain.json" '
i = b.find(b"LRNR") + 16 + 24; assert struct.unpack_from("<I", b, i + 4)[0] & 0x40000000
struct.pack_into("<d", b, i + 24, 3.0); fix(b)'
refused "the reader refuses a re-checksummed auto without a guard that states a gain" "malformed learner state" "$tmp/bad_gain.json"
# auto's stored reason (bit 29 of the picked id, auto.c step 6): its clause must be the rule's on its facts,
# and the facts must give the clause: a matrix pick claimed as clause (c), and its cells' rows made 0.5.
edit_export "$tmp/car_auto_matrix.json" "$tmp/bad_clause.json" '
i = b.find(b"LRNR") + 16 + 24; assert struct.unpack_from("<I", b, i + 4)[0] & 0x20000000
assert struct.unpack_from("<I", b, i + 48)[0] == 1; struct.pack_into("<I", b, i + 48, 3); fix(b)'
refused "the reader refuses a re-checksummed auto whose stored clause is not the rule's on its facts" "malformed learner state" "$tmp/bad_clause.json"
edit_export "$tmp/car_auto_matrix.json" "$tmp/bad_facts.json" '
i = b.find(b"LRNR") + 16 + 24; assert struct.unpack_from("<I", b, i + 48)[0] == 1
struct.pack_into("<d", b, i + 56, 0.5); fix(b)'
refused "the reader refuses a re-checksummed auto whose stored facts do not give its clause" "malformed learner state" "$tmp/bad_facts.json"
# Facts the rule accepts are the trainer's statement, not checked against the rows: extreme ones (a tree of
# 1e300 leaves) still give rdt_info valid JSON, the reason naming them.
edit_export "$tmp/bank_auto_tree.json" "$tmp/big_leaves.json" '
i = b.find(b"LRNR") + 16 + 24; assert struct.unpack_from("<I", b, i + 48)[0] == 3
struct.pack_into("<d", b, i + 80, 1e300); fix(b)'
expect "rdt_info of a stored reason with extreme facts is valid JSON" "1 1" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT json_valid(i) || ' ' || (json_extract(i, '\$.auto.rule_reason') LIKE '(c) private_tree: its 1e+300 leaves%') FROM (SELECT rdt_info(rdt_import(CAST(readfile('$tmp/big_leaves.json') AS TEXT))) AS i)")"
# A classification auto written before the reason (no bit 29, no facts) is still read: rule_reason null.
edit_export "$tmp/car_auto_matrix.json" "$tmp/old_reason.json" '
i = b.find(b"LRNR") + 16 + 24; picked = struct.unpack_from("<I", b, i + 4)[0]; assert picked & 0x20000000
struct.pack_into("<I", b, i + 4, picked & ~0x20000000); del b[i + 48:i + 88]
n = struct.unpack_from("<I", b, 40)[0]; p = 48
for _ in range(n):
    tag, fl, ln = struct.unpack_from("<4sIQ", b, p)
    if tag == b"LRNR": struct.pack_into("<Q", b, p + 8, ln - 40); break
    p += 16 + ln
struct.pack_into("<Q", b, 32, len(b)); fix(b)'
if python3 examples/rdt_reader.py "$tmp/old_reason.json" "$tmp/car_nb_moments.rows.csv" >"$tmp/old_reason.out" 2>&1 &&
   python3 examples/rdt_reader.py "$tmp/car_auto_matrix.json" "$tmp/car_nb_moments.rows.csv" | cmp -s - "$tmp/old_reason.out"; then
  ok "the reader reads an auto written before its stored reason, with the same predictions"
else nok "the reader reads an auto written before its stored reason, with the same predictions"; fi
expect "rdt_import reads it too: rule_reason null, the same pick" "null matrix_forest" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT json_type(i, '\$.auto.rule_reason') || ' ' || json_extract(i, '\$.auto.rule_picked') FROM (SELECT rdt_info(rdt_import(CAST(readfile('$tmp/old_reason.json') AS TEXT))) AS i)")"
# The edits really are refused by the extension too (the reader is no laxer than rdt_import).
for bad in bad_bit bad_version bad_score bad_share bad_split bad_trailing bad_flag4 bad_flag2 bad_nested bad_unguarded bad_gain bad_clause bad_facts; do
  if "$shell" "$tmp/db" ".load $ext" "SELECT rdt_import(CAST(readfile('$tmp/$bad.json') AS TEXT))" 2>&1 |
     grep -q 'rdt_import: the export holds an invalid learner model'; then
    ok "rdt_import refuses it too ($bad)"
  else nok "rdt_import refuses it too ($bad)"; fi
done

# ---- An export whose readable members lie is refused (issue 32, item 6) --------------------------
# The BLOB is the authority: rdt_import regenerates the export from what it built and refuses any
# other document, naming the first member that differs; the reader checks a learner export against
# its model_hex and a forest export's redundant members against the rest. Models: an RDT forest, a
# DiPriMe regression forest, naive_bayes and auto learners, and the same signed (unseeded, so that
# rdt_sign takes them).
bank_f='"features": [{"name": "variance", "type": "numeric", "min": -8, "max": 7}, {"name": "skewness", "type": "numeric", "min": -14, "max": 13}]'
"$shell" "$tmp/db" >/dev/null <<SQL
.load $ext
.bail on
CREATE TABLE keys AS SELECT rdt_keypair() AS kp;
INSERT INTO models SELECT 'signed_forest', rdt_sign(rdt_fit('{"algorithm": "rdt", "epsilon": 1, "trees": 5, "depth": 4, "classes": [0, 1], $bank_f}',
  'SELECT label, variance, skewness FROM bank'), json_extract(kp, '\$.secret_key'), 'a publisher') FROM keys;
INSERT INTO models SELECT 'signed_nb', rdt_sign(rdt_fit('{"algorithm": "naive_bayes", "epsilon": 1, "classes": [0, 1], $bank_f}',
  'SELECT label, variance, skewness FROM bank'), json_extract(kp, '\$.secret_key'), 'a publisher') FROM keys;
INSERT INTO models SELECT 'signed_auto', rdt_sign(rdt_fit('{"epsilon": 1, "classes": [0, 1], $bank_f}',
  'SELECT label, variance, skewness FROM bank'), json_extract(kp, '\$.secret_key')) FROM keys;
SQL
for name in signed_forest signed_nb signed_auto; do
  "$shell" "$tmp/db" ".load $ext" "SELECT rdt_export(model) FROM models WHERE name = '$name'" >"$tmp/$name.json"
done
edit_doc() { # source export, output file, python statements editing the parsed document d
  python3 - "$1" "$2" "$3" <<'PY'
import hashlib, json, struct, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
n_edit=0
lie() { # model, python edit of d, what both must say (after "rdt_import: " / "rdt_reader: ")
  local src=$tmp/$1.json out rc
  n_edit=$((n_edit + 1))
  local doc=$tmp/lie$n_edit.json
  edit_doc "$src" "$doc" "$2"
  out=$("$shell" "$tmp/db" ".load $ext" "SELECT length(rdt_import(CAST(readfile('$doc') AS TEXT)))" 2>&1)
  if printf '%s' "$out" | grep -qF "rdt_import: $3: an edited export; import the document rdt_export wrote"; then
    ok "rdt_import refuses $1 with $2"
  else printf '#   %s\n' "$out"; nok "rdt_import refuses $1 with $2"; fi
  out=$(python3 examples/rdt_reader.py "$doc" "$tmp/bank.rows.csv" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && printf '%s' "$out" | grep -qF "rdt_reader: $3: an edited export" && ! printf '%s' "$out" | grep -q Traceback; then
    ok "the reader refuses $1 with $2"
  else printf '#   exit %s: %s\n' "$rc" "$(printf '%s' "$out" | tail -2)"; nok "the reader refuses $1 with $2"; fi
}
"$shell" -csv -header "$tmp/db" "SELECT $bank_cols FROM bank" >"$tmp/bank.rows.csv"
# A forest: its redundant members, and members it does not have.
lie bank_threshold 'd["privacy"]["epsilon"] = 0.1' 'the document'"'"'s "privacy.epsilon" (0.1) disagrees with the model it carries (1.0)'
lie bank_threshold 'd["privacy"]["epsilon_den"] = 2**31' 'the document'"'"'s "privacy.epsilon_den" (2147483648) disagrees with the model it carries (4294967296)'
lie bank_threshold 'd["noise_scale"] = 1.0' 'the document'"'"'s "noise_scale" (1.0) disagrees with the model it carries (7.0)'
lie bank_threshold 'd["privacy"]["neighbouring"] = "add/remove one unit"' 'the document'"'"'s "privacy.neighbouring" ("add/remove one unit") disagrees with the model it carries ("add/remove one row")'
lie bank_threshold 'd["model_format"] = "1.7"' 'the document'"'"'s "model_format" ("1.7") disagrees with the model it carries ("1.1")'
lie bank_threshold 'd["epsilon"] = 0.1' 'the document'"'"'s "epsilon" (0.1) is not in the model it carries'
lie bank_threshold 'd["learner"] = "naive_bayes"' 'the document'"'"'s "learner" ("naive_bayes") is not in the model it carries'
lie bank_threshold 'del d["privacy"]["epsilon"]' 'the document lacks "privacy.epsilon", which the model it carries has (1.0)'
lie bank_regression 'd["noise_scale"] = d["noise_scale"] / 2' 'the document'"'"'s "noise_scale" (2.0) disagrees with the model it carries (4.0)'
lie bank_regression 'd["privacy"]["epsilon"] = 20.0' 'the document'"'"'s "privacy.epsilon" (20.0) disagrees with the model it carries (2.0)'
# Learner models: every readable member against model_hex.
lie car_nb_moments 'd["epsilon"] = 0.1' 'the document'"'"'s "epsilon" (0.1) disagrees with the model it carries (1.0)'
lie car_nb_moments 'd["learner"] = "boost"' 'the document'"'"'s "learner" ("boost") disagrees with the model it carries ("naive_bayes")'
lie car_nb_moments 'd["classes"] = ["acc", "unacc", "good", "vgood"]' 'the document'"'"'s "classes[0]" ("acc") disagrees with the model it carries ("unacc")'
lie car_nb_moments 'd["features"][0]["values"][0] = "cheap"' 'the document'"'"'s "features[0].values[0]" ("cheap") disagrees with the model it carries ("vhigh")'
lie car_nb_moments 'd["task"] = "regression"' 'the document'"'"'s "task" ("regression") disagrees with the model it carries ("classification")'
lie car_nb_moments 'del d["learner"]' 'the document lacks "learner", which the model it carries has ("naive_bayes")'
lie car_nb_moments 'd["noise_scale"] = 1' 'the document'"'"'s "noise_scale" (1) is not in the model it carries'
lie bank_nb_exact 'd["epsilon"] = 1.0' 'the document'"'"'s "epsilon" (1.0) disagrees with the model it carries (null)'
lie bank_auto_tree 'd["epsilon"] = 0.3' 'the document'"'"'s "epsilon" (0.3) disagrees with the model it carries (0.2999999998137355)'
lie bank_auto_tree 'd["learner"] = "naive_bayes"' 'the document'"'"'s "learner" ("naive_bayes") disagrees with the model it carries ("auto")'
lie bank_auto_tree 'd["classes"] = [1, 0]' 'the document'"'"'s "classes[0]" (1) disagrees with the model it carries (0)'
lie bank_auto_tree 'd["features"][2]["min"] = -60' 'the document'"'"'s "features[2].min" (-60) disagrees with the model it carries (-6.0)'
lie bank_auto_tree 'd["model_format"] = "1.0"' 'the document'"'"'s "model_format" ("1.0") disagrees with the model it carries ("1.1")'
# Signed models: an edited readable member is refused as above ...
lie signed_forest 'd["privacy"]["epsilon"] = 0.1' 'the document'"'"'s "privacy.epsilon" (0.1) disagrees with the model it carries (1.0)'
lie signed_nb 'd["epsilon"] = 0.1' 'the document'"'"'s "epsilon" (0.1) disagrees with the model it carries (1.0)'
lie signed_auto 'd["classes"] = [1, 0]' 'the document'"'"'s "classes[0]" (1) disagrees with the model it carries (0)'
lie signed_auto 'd["features"][0]["max"] = 70' 'the document'"'"'s "features[0].max" (70) disagrees with the model it carries (7.0)'

# ... and so is an edit of what a signed model's BLOB holds (a forest's class or bound, a learner's
# counter with the checksum recomputed): the signature no longer verifies under the key it carries.
# (Unsigned, such an edit is another model, self-consistent: only a signature can tell; the reader
# does not verify signatures, rdt_verify does.)
signed_edit() { # model, what is edited, python edit of d
  n_edit=$((n_edit + 1))
  local doc=$tmp/lie$n_edit.json out
  edit_doc "$tmp/$1.json" "$doc" "$3"
  out=$("$shell" "$tmp/db" ".load $ext" "SELECT length(rdt_import(CAST(readfile('$doc') AS TEXT)))" 2>&1)
  if printf '%s' "$out" | grep -qF "rdt_import: the document is signed but its signature does not verify under the key it carries: edited after signing"; then
    ok "rdt_import refuses $1 with $2 edited (the signature no longer verifies)"
  else printf '#   %s\n' "$out"; nok "rdt_import refuses $1 with $2 edited (the signature no longer verifies)"; fi
}
signed_edit signed_forest "its classes" 'd["classes"] = [1, 0]'
signed_edit signed_forest "a feature's bound" 'd["features"][0]["max"] = 70.0'
signed_edit signed_forest "epsilon_num with every view of it" 'd["privacy"]["epsilon_num"] //= 10; d["privacy"]["epsilon"] = d["privacy"]["epsilon_num"] / 2**32; d["noise_scale"] = 5 / d["privacy"]["epsilon"]'
signed_edit signed_nb "a counter of model_hex, re-checksummed" '
b = bytearray(bytes.fromhex(d["model_hex"])); i = b.find(b"LRNR") + 16 + 24 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 4
b[i] ^= 1; b[-32:] = hashlib.blake2b(bytes(b[:-32]), digest_size=32).digest(); d["model_hex"] = b.hex()'
for pair in "bank_threshold:classes" "bank_threshold:bound"; do
  n_edit=$((n_edit + 1))
  case $pair in *classes) e='d["classes"] = [1, 0]' ;; *) e='d["features"][0]["max"] = 70.0' ;; esac
  edit_doc "$tmp/bank_threshold.json" "$tmp/lie$n_edit.json" "$e"
  expect "unsigned, a forest's ${pair#*:} edited imports as another model (not the BLOB exported)" 0 \
    "$("$shell" "$tmp/db" ".load $ext" "SELECT rdt_import(CAST(readfile('$tmp/lie$n_edit.json') AS TEXT)) = model FROM models WHERE name = 'bank_threshold'")"
done

# The unedited exports, re-serialised (Python's indent=2 with sorted keys; SQLite's json()), still
# import to the identical BLOB and read; the signed ones still verify.
for name in bank_threshold bank_regression bank_diprime car_nb_moments bank_auto_tree bank_nb_exact car_matrix_forest signed_forest signed_nb signed_auto; do
  python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2, sort_keys=True))' \
    "$tmp/$name.json" >"$tmp/$name.pretty.json"
  expect "an export re-serialised (indent 2, keys sorted; json()) imports to the identical BLOB ($name)" "1|1" \
    "$("$shell" "$tmp/db" ".load $ext" "SELECT rdt_import(CAST(readfile('$tmp/$name.pretty.json') AS TEXT)) = model,
       rdt_import(json(CAST(readfile('$tmp/$name.json') AS TEXT))) = model FROM models WHERE name = '$name'")"
done
expect "the signed exports, re-serialised and imported, verify under the publisher's key" "1|1|1" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT group_concat(rdt_verify(rdt_import(CAST(readfile('$tmp/' || name || '.pretty.json') AS TEXT)),
     json_extract(kp, '\$.public_key')), '|') FROM models, keys WHERE name LIKE 'signed_%' ORDER BY name")"
python3 - "$tmp" <<'PY' && ok "the reader reads the re-serialised exports and predicts as from the originals" || nok "the reader reads the re-serialised exports and predicts as from the originals"
import subprocess, sys
t = sys.argv[1]
for name, rows in (("bank_threshold", "bank"), ("car_nb_moments", "car_nb_moments"), ("bank_auto_tree", "bank")):
    run = lambda f: subprocess.run([sys.executable, "examples/rdt_reader.py", f, "%s/%s.rows.csv" % (t, rows)],
                                   capture_output=True, text=True, check=True).stdout
    a, b = run("%s/%s.json" % (t, name)), run("%s/%s.pretty.json" % (t, name))
    assert a == b and len(a.split()) > 100, name
PY
# A repeated member is refused by both, even when both copies agree (json.load would keep the last).
n_edit=$((n_edit + 1))
sed 's/"learner":/"learner":"auto","learner":/' "$tmp/bank_auto_tree.json" >"$tmp/lie$n_edit.json"
expect "a repeated member is refused (rdt_import, the reader)" "1 1" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT rdt_import(CAST(readfile('$tmp/lie$n_edit.json') AS TEXT))" 2>&1 | grep -c 'the document.s "learner" appears more than once') $(
     python3 examples/rdt_reader.py "$tmp/lie$n_edit.json" "$tmp/bank.rows.csv" 2>&1 | grep -c 'the document.s "learner" appears more than once')"

# The fuzz corpus of exports (tests/fuzz/corpus/import/, replayed through the core by make test):
# through the extension, ok-* and same-* import, edit-* are refused with a message naming the document,
# bad-* and the fuzzer's finds (fuzz-found-*) with a message.
for f in tests/fuzz/corpus/import/*.json; do
  name=$(basename "$f" .json)
  out=$("$shell" :memory: ".load $ext" "SELECT length(rdt_import(CAST(readfile('$f') AS TEXT))) > 0" 2>&1)
  case $name in
    edit-*) want="rdt_import: the document" ;;
    bad-* | fuzz-found-*) want="rdt_import: " ;;
    *) want=1 ;;
  esac
  if [ "${out#*"$want"}" != "$out" ] && { [ "$want" != 1 ] || [ "$out" = 1 ]; }; then
    ok "fuzz corpus export $name: ${want/#1/imports}"
  else printf '#   %s\n' "$out"; nok "fuzz corpus export $name: ${want/#1/imports}"; fi
done

# ---- A 500-feature table end to end (issue 34): rdt_fit on SELECT * (an id besides the label, which is named
# "diagnosis"), rdt_predictions, rdt_evaluate, rdt_check_report, rdt_export / rdt_import and the reader, for a
# forest, a learner and auto; 40 rows, so it stays quick. Values are sixteenths, exact in the CSV the reader reads.
python3 - "$tmp/wide.sql" "$tmp/wide.opts" <<'PY'
import json, sys
k = 499
cols = ", ".join("f%d REAL" % j for j in range(1, k + 1))
rows = []
for i in range(1, 41):
    fs = [((i * 7 + j * 3) % 17) / 16.0 for j in range(1, k + 1)]
    colour = ["red", "green", "blue", "grey"][i % 4]
    diagnosis = int(fs[0] + fs[1] > 1) if i % 5 else 1 - int(fs[0] + fs[1] > 1)
    rows.append("(%d, %d, %s, '%s')" % (i, diagnosis, ", ".join(repr(x) for x in fs), colour))
with open(sys.argv[1], "w") as f:
    f.write("CREATE TABLE wide(id INTEGER PRIMARY KEY, diagnosis INTEGER, %s, colour TEXT);\n" % cols)
    f.write("INSERT INTO wide VALUES %s;\n" % ", ".join(rows))
features = [{"name": "f%d" % j, "type": "numeric", "min": 0, "max": 1} for j in range(1, k + 1)]
features.append({"name": "colour", "type": "categorical", "values": ["red", "green", "blue"]})
json.dump({"epsilon": 1, "seed": 34, "label": "diagnosis", "classes": [0, 1], "features": features},
          open(sys.argv[2], "w"))
PY
"$shell" "$tmp/db" ".load $ext" ".read $tmp/wide.sql" \
  "CREATE TABLE wide_models AS SELECT a.name, rdt_fit(json_set(CAST(readfile('$tmp/wide.opts') AS TEXT), '\$.algorithm', a.name),
     'SELECT * FROM wide') AS model FROM (SELECT 'rdt' AS name UNION ALL SELECT 'naive_bayes' UNION ALL SELECT 'auto') a" \
  >"$tmp/wide.err" 2>&1
expect "wide: rdt_fit trains a 500-feature table from SELECT * (the id ignored), a forest, a learner and auto" "3|3|diagnosis|500" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT count(*), sum(typeof(model) = 'blob'), min(json_extract(rdt_info(model), '\$.label')),
     min(json_array_length(rdt_info(model), '\$.features')) FROM wide_models" 2>&1)"
expect "wide: rdt_predictions gives a row per input row, its predicted and probabilities well formed, for each" "120|120|120" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT count(*), sum(p.predicted IN (0, 1)),
     sum(abs(json_extract(p.probabilities, '\$.\"0\"') + json_extract(p.probabilities, '\$.\"1\"') - 1) < 1e-12)
     FROM wide_models m, rdt_predictions(m.model, 'SELECT * FROM wide') p JOIN wide w ON w.id = p.key" 2>&1)"
expect "wide: rdt_evaluate finds the label \"diagnosis\" and scores the 40 rows as rdt_predictions predicts them" "3|[\"id\"]" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT sum(json_extract(e, '\$.evaluated') = 40 AND json_extract(e, '\$.accuracy')
       = (SELECT avg(p.predicted = w.diagnosis) FROM rdt_predictions(m.model, 'SELECT * FROM wide') p JOIN wide w ON w.id = p.key)),
       min(json_extract(e, '\$.ignored_columns'))
     FROM (SELECT model, rdt_evaluate(model, 'SELECT * FROM wide') AS e FROM wide_models) m" 2>&1)"
expect "wide: rdt_check_report has a row per feature and names the ignored id" "500|id" \
  "$("$shell" "$tmp/db" ".load $ext" "SELECT count(*) FILTER (WHERE kind = 'feature'), max(name) FILTER (WHERE kind = 'ignored')
     FROM rdt_check_report(CAST(readfile('$tmp/wide.opts') AS TEXT), 'SELECT * FROM wide')" 2>&1)"
"$shell" -csv -header "$tmp/db" "SELECT $(python3 -c 'print(", ".join("f%d" % j for j in range(1, 500)))'), colour FROM wide ORDER BY id" \
  >"$tmp/wide.rows.csv"
for name in rdt naive_bayes auto; do
  "$shell" "$tmp/db" ".load $ext" "SELECT rdt_export(model) FROM wide_models WHERE name = '$name'" >"$tmp/wide_$name.json"
  expect "wide: rdt_import(rdt_export(model)) gives the identical BLOB ($name, 500 features)" 1 \
    "$("$shell" "$tmp/db" ".load $ext" "SELECT rdt_import(CAST(readfile('$tmp/wide_$name.json') AS TEXT)) = model
       FROM wide_models WHERE name = '$name'" 2>&1)"
  "$shell" "$tmp/db" ".load $ext" "SELECT p.predicted FROM rdt_predictions((SELECT model FROM wide_models WHERE name = '$name'),
     'SELECT * FROM wide ORDER BY id') p" >"$tmp/wide_$name.sql.out" 2>&1
  python3 examples/rdt_reader.py "$tmp/wide_$name.json" "$tmp/wide.rows.csv" >"$tmp/wide_$name.py.out" 2>&1
  expect "wide: the Python reader predicts every row as rdt_predictions does ($name, 500 features)" "40|same" \
    "$(wc -l <"$tmp/wide_$name.py.out" | tr -d ' ')|$(cmp -s "$tmp/wide_$name.sql.out" "$tmp/wide_$name.py.out" && echo same ||
       (head -3 "$tmp/wide_$name.py.out"; echo differs))"
done

tap_summary
