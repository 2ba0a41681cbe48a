#!/usr/bin/env bash
# Publishing a model, end to end: the curator makes a key pair once, trains, checks rdt_info,
# signs and exports the model to a file; the consumer verifies it against the published
# public key and predicts. Run from the repository root after `make`: bash examples/publish.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ext=${RDT_EXT:-./dist/rdt}
sqlite3() { command ${SQLITE3:-sqlite3} "$@"; } # SQLITE3: another shell or a wrapper

# 1. Once, by the curator: a key pair. The secret key goes to a file only the curator can
#    read; it is never stored in a table (a signed model carries only the public key).
(umask 077 && sqlite3 :memory: ".load $ext" "SELECT rdt_keypair()" > "$work/publisher-key.json")
public_key=$(sqlite3 :memory: "SELECT json_extract(readfile('$work/publisher-key.json'), '\$.public_key')")
echo "public key to publish: $public_key"

# 2. Train, check what would be released, sign with the key read from the file into a shell
#    parameter (it lives only in this process), and export the signed BLOB to a file.
sqlite3 "$work/curator.db" <<SQL
.load $ext
.bail on
CREATE TABLE notes(variance REAL, skewness REAL, curtosis REAL, entropy REAL, label INTEGER);
.import --csv --skip 1 tests/data/banknote.csv notes
CREATE TABLE models AS SELECT rdt_fit('{"epsilon": 1, "classes": [0, 1], "features": [
    {"name": "variance", "type": "numeric", "min": -8, "max": 8},
    {"name": "skewness", "type": "numeric", "min": -14, "max": 14},
    {"name": "curtosis", "type": "numeric", "min": -6, "max": 18},
    {"name": "entropy", "type": "numeric", "min": -9, "max": 3}]}',
  'SELECT label, variance, skewness, curtosis, entropy FROM notes') AS model;
SELECT 'epsilon ' || json_extract(rdt_info(model), '\$.epsilon') || ', release: ' ||
       json_extract(rdt_info(model), '\$.release') FROM models;
.parameter init
.parameter set @sk "(SELECT json_extract(readfile('$work/publisher-key.json'), '\$.secret_key'))"
SELECT writefile('$work/banknote-v1.rdt', rdt_sign(model, @sk, 'Example Clinic, banknote model v1')) FROM models;
.parameter clear
SQL

# 3. The consumer has only the file and the published public key.
sqlite3 :memory: <<SQL
.load $ext
.bail on
SELECT 'verified: ' || rdt_verify(readfile('$work/banknote-v1.rdt'), '$public_key');
SELECT 'signed: ' || json_extract(rdt_info(readfile('$work/banknote-v1.rdt')), '\$.signed') || ', note: ' ||
       json_extract(rdt_info(readfile('$work/banknote-v1.rdt')), '\$.publisher_note');
SELECT 'prediction for (0.5, 2.0, -1.0, 0.3): ' || rdt_predict(readfile('$work/banknote-v1.rdt'), 0.5, 2.0, -1.0, 0.3);
SQL

# 4. Any change to the file, even one bit, and the signature no longer verifies.
printf '\x01' | dd of="$work/banknote-v1.rdt" bs=1 seek=200 conv=notrunc status=none
echo "after flipping a byte, verified: $(sqlite3 :memory: ".load $ext" \
  "SELECT rdt_verify(readfile('$work/banknote-v1.rdt'), '$public_key')")"
