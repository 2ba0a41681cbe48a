#!/usr/bin/env bash
# Regenerates the seed corpus of the fuzz targets (tests/fuzz/corpus/):
#   bash tests/fuzz/make-seeds.sh        (needs make's dist/rdt, sqlite3, python3)
#   bash tests/fuzz/make-seeds.sh import (only import/, from the committed model/ seeds)
# model/: seeded models of several shapes trained through the sqlite3 shell, the
#   golden BLOB, and models derived from them (truncated, corrupted, foreign,
#   re-checksummed with a bad field, or accepted but not canonical);
# options/: valid and invalid option documents (ok-*, json-*, opt-*);
# import/: rdt_export documents of the model seeds (ok-*: every forest, one
#   learner export, the 1.0 golden model's), re-spelled ones that must still
#   import (same-*), edited ones that must be refused as edited (edit-*) and documents that are
#   no export at all (bad-*).
# The files are committed; re-running rewrites them (seeded, so the trained
# models come out identical except unseeded.blob).
set -eu
REPO=$(cd "$(dirname "$0")/../.." && pwd)
M=$REPO/tests/fuzz/corpus/model
O=$REPO/tests/fuzz/corpus/options
I=$REPO/tests/fuzz/corpus/import
mkdir -p "$M" "$O" "$I"
cd "$M"
if [ "${1:-}" != import ]; then
sqlite3 -batch -bail :memory: >/dev/null <<SQL
.load $REPO/dist/rdt
.import --csv $REPO/tests/data/banknote.csv bank
.import --csv $REPO/tests/data/congressional_voting.csv vote
-- The RDT# seeds take their public rows from these same tables (their privacy is not what a seed is for),
-- so they are declared public here.
CREATE TABLE rdt_public_tables(name TEXT PRIMARY KEY);
INSERT INTO rdt_public_tables VALUES ('vote'), ('bank');
SELECT writefile('numeric-threshold.blob', rdt_train('{"epsilon": 1, "trees": 3, "depth": 3, "seed": 1, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('numeric-global-majority.blob', rdt_train('{"epsilon": 0.5, "trees": 2, "depth": 4, "seed": 2, "vote": "majority", "splits": "global", "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}]}', label, variance, entropy)) FROM bank;
SELECT writefile('categorical-subset-text-classes.blob', rdt_train('{"epsilon": 2, "trees": 3, "depth": 3, "seed": "abc", "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "water", "type": "categorical", "values": ["y", "n"]}, {"name": "budget", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, water_project_cost_sharing, adoption_of_the_budget_resolution)) FROM vote;
SELECT writefile('categorical-one-vs-rest-probabilistic.blob', rdt_train('{"epsilon": 2, "trees": 2, "depth": 4, "seed": 7, "vote": "probabilistic", "categorical": "one_vs_rest", "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "crime", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, crime)) FROM vote;
SELECT writefile('three-int-classes-mixed.blob', rdt_train('{"epsilon": 1, "trees": 2, "depth": 3, "seed": 3, "vote": "majority", "classes": [1, 2, 3], "features": [{"name": "x", "type": "numeric", "min": 0, "max": 1}, {"name": "c", "type": "categorical", "values": [10, 20, -30, "forty"]}]}', 1 + value % 3, value / 10.0, value % 5 * 10)) FROM generate_series(1, 30);
SELECT writefile('three-text-classes-nonprivate.blob', rdt_train('{"epsilon": null, "trees": 2, "depth": 2, "seed": 4, "classes": ["a", "b", "c"], "features": [{"name": "x", "type": "numeric", "min": -1e300, "max": 1e300}]}', char(97 + value % 3), value)) FROM generate_series(1, 30);
SELECT writefile('unseeded.blob', rdt_train('{"epsilon": 3, "trees": 1, "depth": 2, "classes": [0, 1], "features": [{"name": "x", "type": "numeric", "min": 0, "max": 10}]}', value % 2, value)) FROM generate_series(1, 10);
SELECT writefile('one-class-depth1.blob', rdt_train('{"epsilon": 1000000, "trees": 1, "depth": 1, "seed": 5, "classes": ["only"], "features": [{"name": "x", "type": "numeric", "min": 0, "max": 1}]}', 'only', 0.5));
SELECT writefile('categorical-70-values.blob', rdt_train('{"epsilon": 1, "trees": 2, "depth": 5, "seed": 6, "classes": [0, 1], "features": [{"name": "wide", "type": "categorical", "values": [' || (SELECT group_concat(value, ',') FROM generate_series(0, 69)) || ']}, {"name": "yn", "type": "categorical", "values": ["y"]}]}', value % 2, value % 75, 'y')) FROM generate_series(1, 40);
SELECT writefile('unicode-names-min-eps.blob', rdt_train('{"epsilon": 0.000001, "trees": 1, "depth": 2, "seed": "\u00e9\ud83d\ude00", "classes": ["\u00fcber", "\u65e5\u672c"], "features": [{"name": "\u0394x", "type": "numeric", "min": -0.5, "max": 0.5}, {"name": "k", "type": "categorical", "values": ["\ud83d\ude00", 9223372036854775807, -9223372036854775808]}]}', NULL, 0, 'k'));
SELECT writefile('categorical-none-nodes.blob', rdt_train('{"epsilon": 1, "trees": 2, "depth": 3, "seed": 8, "classes": [0, 1], "features": [{"name": "yn", "type": "categorical", "values": ["y", "n"]}]}', value % 2, CASE WHEN value % 3 THEN 'y' END)) FROM generate_series(1, 20);
SELECT writefile('diprime-classification.blob', rdt_train('{"algorithm": "diprime", "epsilon": 2, "trees": 2, "depth": 3, "seed": 9, "candidates": 2, "rho": 0.25, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}, {"name": "bucket", "type": "categorical", "values": ["lo", "hi"]}]}', label, variance, skewness, CASE WHEN curtosis < 0 THEN 'lo' ELSE 'hi' END)) FROM bank;
SELECT writefile('diprime-regression.blob', rdt_train('{"algorithm": "diprime", "task": "regression", "target": {"min": -8, "max": 8}, "epsilon": 1, "trees": 2, "depth": 2, "seed": 10, "partition": false, "max_rows": 5000, "features": [{"name": "skewness", "type": "numeric", "min": -14, "max": 14}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}]}', variance, skewness, entropy)) FROM bank;
SELECT writefile('diprime-nonprivate-categorical.blob', rdt_train('{"algorithm": "diprime", "epsilon": null, "trees": 1, "depth": 3, "seed": 11, "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "crime", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, crime)) FROM vote;
SELECT writefile('matrix-identity.blob', rdt_train('{"noise": "matrix", "epsilon": 2, "trees": 3, "depth": 2, "seed": 12, "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "water", "type": "categorical", "values": ["y", "n"]}, {"name": "crime", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, water_project_cost_sharing, crime)) FROM vote;
SELECT writefile('matrix-marginals-bins.blob', rdt_train('{"noise": "matrix", "strategy": "marginals", "bins": 3, "vote": "weight", "epsilon": 1, "trees": 4, "depth": 2, "seed": 13, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}]}', label, variance, skewness, entropy)) FROM bank;
SELECT writefile('matrix-nonprivate-cells.blob', rdt_train('{"noise": "matrix", "epsilon": null, "trees": 2, "depth": 2, "seed": 14, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "c", "type": "categorical", "values": ["a", "b", "c"]}]}', label, variance, CASE WHEN skewness < 0 THEN 'a' WHEN skewness < 5 THEN 'b' ELSE 'c' END)) FROM bank;
SELECT writefile('matrix-leaf-partition-majority.blob', rdt_train('{"noise": "matrix", "strategy": "leaf", "partition": true, "vote": "majority", "epsilon": 1, "trees": 3, "depth": 3, "seed": 15, "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "water", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, water_project_cost_sharing)) FROM vote;
SELECT writefile('sharp-categorical.blob', rdt_train('{"algorithm": "rdt#", "public_query": "SELECT handicapped_infants, crime FROM vote WHERE rowid % 2", "public_tables": ["vote"], "epsilon": 1, "trees": 2, "secondary_trees": 2, "depth": 2, "cells": 3, "seed": 16, "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "crime", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, crime)) FROM vote WHERE rowid % 2 = 0;
SELECT writefile('sharp-numeric-nonprivate.blob', rdt_train('{"algorithm": "rdt#", "public_query": "SELECT variance, skewness FROM bank WHERE rowid % 10 = 0", "public_tables": ["bank"], "epsilon": null, "trees": 1, "secondary_trees": 2, "depth": 2, "bins": 3, "cells": 4, "seed": 17, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank WHERE rowid % 10 = 1;
SELECT writefile('kept-binary-majority.blob', rdt_train('{"epsilon": 1, "trees": 5, "depth": 2, "seed": 18, "vote": "majority", "keep_trees": 0.4, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('matrix-kept-weight.blob', rdt_train('{"noise": "matrix", "epsilon": 2, "trees": 4, "depth": 2, "seed": 19, "keep_trees": 0.5, "vote": "weight", "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "water", "type": "categorical", "values": ["y", "n"]}, {"name": "crime", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, water_project_cost_sharing, crime)) FROM vote;
SELECT writefile('boost-classification.blob', rdt_train('{"algorithm": "boost", "epsilon": 1, "seed": 20, "bins": 4, "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}, {"name": "crime", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants, crime)) FROM vote;
SELECT writefile('boost-regression-nonprivate.blob', rdt_train('{"algorithm": "boost", "task": "regression", "target": {"min": -8, "max": 8}, "epsilon": null, "seed": 21, "bins": 3, "rounds": 2, "features": [{"name": "skewness", "type": "numeric", "min": -14, "max": 14}, {"name": "entropy", "type": "numeric", "min": -9, "max": 3}]}', variance, skewness, entropy)) FROM bank;
SELECT writefile('constant-classification.blob', rdt_train('{"algorithm": "constant", "epsilon": 1, "seed": 22, "classes": ["democrat", "republican"], "features": [{"name": "infants", "type": "categorical", "values": ["y", "n"]}]}', label, handicapped_infants)) FROM vote;
SELECT writefile('constant-regression.blob', rdt_train('{"algorithm": "constant", "task": "regression", "target": {"min": -8, "max": 8}, "epsilon": 1, "seed": 23, "features": [{"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', variance, skewness)) FROM bank;
SELECT writefile('naive-bayes.blob', rdt_train('{"algorithm": "naive_bayes", "epsilon": 1, "seed": 24, "bins": 3, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "c", "type": "categorical", "values": ["a", "b"]}]}', label, variance, CASE WHEN skewness < 0 THEN 'a' ELSE 'b' END)) FROM bank;
SELECT writefile('label-named-forest.blob', rdt_fit('{"algorithm": "rdt", "label": "diagnosis", "epsilon": 1, "trees": 2, "depth": 2, "seed": 40, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}]}', 'SELECT label AS diagnosis, variance FROM bank'));
SELECT writefile('label-named-learner.blob', rdt_fit('{"algorithm": "naive_bayes", "label": "y", "epsilon": 1, "seed": 41, "bins": 3, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}]}', 'SELECT label AS y, variance FROM bank'));
SELECT writefile('naive-bayes-moments.blob', rdt_train('{"algorithm": "naive_bayes", "epsilon": 1, "seed": 35, "readout": "moments", "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "c", "type": "categorical", "values": ["a", "b"]}]}', label, variance, CASE WHEN skewness < 0 THEN 'a' ELSE 'b' END)) FROM bank;
SELECT writefile('naive-bayes-auto-bins.blob', rdt_train('{"algorithm": "naive_bayes", "epsilon": 1, "seed": 29, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "c", "type": "categorical", "values": ["a", "b"]}]}', label, variance, CASE WHEN skewness < 0 THEN 'a' ELSE 'b' END)) FROM bank;
SELECT writefile('boost-auto-bins.blob', rdt_train('{"algorithm": "boost", "epsilon": 1, "seed": 30, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('private-tree-auto-depth.blob', rdt_train('{"algorithm": "private_tree", "epsilon": 1, "seed": 31, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('matrix-forest.blob', rdt_train('{"algorithm": "matrix_forest", "epsilon": 1, "seed": 32, "trees": 3, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('private-tree-v2.blob', rdt_train('{"algorithm": "private_tree", "epsilon": 1, "seed": 33, "bins": 4, "depth": 3, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('auto-default-matrix.blob', rdt_train('{"epsilon": 1, "seed": 34, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('random-trees.blob', rdt_train('{"algorithm": "random_trees", "epsilon": 1, "seed": 25, "trees": 2, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}]}', label, variance)) FROM bank;
SELECT writefile('auto-classification.blob', rdt_train('{"algorithm": "auto", "epsilon": 1, "seed": 26, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
-- a model that stores the rule's facts (auto.c step 6, bit 29), four classes (clause (d): naive Bayes)
SELECT writefile('auto-reason-four-classes.blob', rdt_train('{"algorithm": "auto", "epsilon": 1, "seed": 42, "classes": [0, 1, 2, 3], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label + 2 * (curtosis > 0), variance, skewness)) FROM bank WHERE rowid % 10 = 0;
SELECT writefile('auto-regression.blob', rdt_train('{"algorithm": "auto", "task": "regression", "target": {"min": -8, "max": 8}, "epsilon": 1, "seed": 27, "features": [{"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', variance, skewness)) FROM bank;
SELECT writefile('private-tree.blob', rdt_train('{"algorithm": "private_tree", "epsilon": 1, "seed": 28, "bins": 4, "depth": 2, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', label, variance, skewness)) FROM bank;
SELECT writefile('unit-private-bounds.blob', rdt_fit('{"epsilon": 1, "trees": 2, "depth": 3, "seed": 29, "privacy_unit": "u", "max_rows_per_unit": 3, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "bounds": "private"}, {"name": "skewness", "type": "numeric", "min": -14, "max": 14}]}', 'SELECT rowid % 50 AS u, variance, skewness, label FROM bank'));
SELECT writefile('unit-naive-bayes.blob', rdt_fit('{"algorithm": "naive_bayes", "epsilon": 1, "seed": 30, "bins": 3, "bounds_share": 0.2, "classes": [0, 1], "features": [{"name": "variance", "type": "numeric", "bounds": "private"}]}', 'SELECT variance, label FROM bank'));
SELECT writefile('signed-note.blob', rdt_sign(readfile('three-int-classes-mixed.blob'), json_extract(k, '$.secret_key'), 'published by the fuzz seeds, note with unicode: é')) FROM (SELECT rdt_keypair() AS k);
SELECT writefile('signed-regression.blob', rdt_sign(readfile('diprime-regression.blob'), json_extract(k, '$.secret_key'))) FROM (SELECT rdt_keypair() AS k);
SQL
cp "$REPO/tests/golden/model_v1_1.blob" golden-model_v1_1.blob

python3 - "$M" <<'PY'
import hashlib, struct, os, sys
def fix(b, length=True):
    b = bytearray(b)
    if length: b[32:40] = struct.pack('<Q', len(b))
    b[-32:] = hashlib.blake2b(bytes(b[:-32]), digest_size=32).digest()
    return bytes(b)
def sections(b):
    n = struct.unpack_from('<I', b, 40)[0]; pos = 48; out = []
    for i in range(n):
        tag, fl, ln = struct.unpack_from('<IIQ', b, pos); out.append((b[pos:pos+4].decode(), fl, b[pos+16:pos+16+ln])); pos += 16+ln
    return out
def build(hdr, secs):
    body = b''.join(t.encode() + struct.pack('<IQ', fl, len(d)) + d for t, fl, d in secs)
    h = bytearray(hdr[:48]); h[40:44] = struct.pack('<I', len(secs))
    return fix(bytes(h) + body + b'\0'*32)
out = sys.argv[1]
def w(name, data): open(os.path.join(out, name), 'wb').write(data)
num = open('numeric-threshold.blob','rb').read()
w('bad-truncated-100.blob', num[:100])
w('bad-truncated-minus-1.blob', num[:-1])
x = bytearray(num); x[-1] ^= 1; w('bad-checksum-bit.blob', bytes(x))
x = bytearray(num); x[8:12] = struct.pack('<I', 2 << 16); w('bad-version-2.0.blob', fix(x))
x = bytearray(num + b'\0'); w('bad-declared-length.blob', fix(x, length=False))
w('bad-foreign-sqlite.blob', b'SQLite format 3\0' + b'\0'*84)
w('bad-empty.blob', b'')
w('bad-magic-only.blob', b'RDTMODEL')
w('bad-header-only.blob', fix(num[:48] + b'\0'*32))
s = sections(num)
w('bad-unknown-required-section.blob', build(num, s + [('XTRA', 1, b'abc')]))
x = bytearray(s[3][2]); x[0:4] = struct.pack('<I', 99)  # NODE 0: feature 99 on a numeric split
w('bad-node-feature.blob', build(num, s[:3] + [(s[3][0], s[3][1], bytes(x))] + s[4:]))
x = bytearray(s[2][2]); x[12:16] = struct.pack('<I', 31)  # FRST depth 31
w('bad-depth-31.blob', build(num, s[:2] + [(s[2][0], s[2][1], bytes(x))] + s[3:]))
x = bytearray(s[4][2]); w('bad-leaf-short.blob', build(num, s[:4] + [(s[4][0], s[4][1], bytes(x[:-8]))]))
# accepted but not canonical (the decoder's deliberate leniencies)
h = bytearray(num[:48]); h[8:12] = struct.pack('<I', 1 << 16 | 7); h[28:32] = struct.pack('<I', 1 | 0x80); h[44:48] = b'\xff\xff\xff\xff'
w('lenient-minor-flags-reserved.blob', build(bytes(h), s))
w('lenient-empty-optional-section-reordered.blob', build(num, [s[2], ('XTRA', 0, b''), s[1], s[0], s[3], s[4]]))
# model-format.md: "unknown optional sections are skipped"; the decoder rejects a non-empty one
w('optional-section-nonempty.blob', build(num, s + [('XTRA', 0, b'optional')]))
# once a crash (fuzz_model): a pass-through node naming a feature out of range, read by the generic walk
cn = open('categorical-none-nodes.blob','rb').read(); cs = sections(cn); x = bytearray(cs[3][2])
for i in range(len(x) // 16):
    if struct.unpack_from('<I', x, 16 * i + 4)[0] == 0: struct.pack_into('<I', x, 16 * i, 0x40000000)
w('bad-none-node-feature-out-of-range.blob', build(cn, cs[:3] + [(cs[3][0], cs[3][1], bytes(x))] + cs[4:]))
# once a failed property (fuzz_model): a regression target range that overflows (predictions Inf)
rg = open('diprime-regression.blob','rb').read(); rs = sections(rg); x = bytearray(rs[2][2])
struct.pack_into('<dd', x, 48, -1.7e308, 1.7e308)
w('bad-regression-target-range-overflow.blob', build(rg, rs[:2] + [(rs[2][0], rs[2][1], bytes(x))] + rs[3:]))
sg = open('signed-note.blob','rb').read(); ss = sections(sg)
w('bad-signature-not-last.blob', build(sg, ss[:4] + [ss[5], ss[4]]))
x = bytearray(sg); x[-40] ^= 1; w('signed-bad-signature-rechecksummed.blob', fix(x))
h = bytearray(sg[:48]); h[28:32] = struct.pack('<I', struct.unpack_from('<I', sg, 28)[0] & ~4)
w('bad-signed-section-without-flag.blob', build(bytes(h), ss))
np = open('three-text-classes-nonprivate.blob','rb').read(); sn = sections(np)
x = bytearray(sn[0][2]); x[8:16] = struct.pack('<Q', 12345)
w('lenient-nonprivate-eps-ignored.blob', build(np, [(sn[0][0], sn[0][1] | 6, bytes(x))] + sn[1:]))
# LABL (format 1.2): optional (flags 0), never the default name, only in a 1.2 model
lf = open('label-named-forest.blob','rb').read(); lfs = sections(lf)
w('bad-label-default-name-forest.blob', build(lf, lfs[:2] + [('LABL', 0, struct.pack('<I', 5) + b'label')] + lfs[3:]))
ll = open('label-named-learner.blob','rb').read(); lls = sections(ll)
w('bad-label-required-learner.blob', build(ll, lls[:2] + [('LABL', 1, lls[2][2])] + lls[3:]))
h = bytearray(ll[:48]); h[8:12] = struct.pack('<I', 1 << 16 | 1)
w('bad-label-in-format-1.1-learner.blob', build(bytes(h), lls))
w('bad-label-after-lrnr-learner.blob', build(ll, lls[:2] + [lls[3], lls[2]]))
w('bad-label-empty-learner.blob', build(ll, lls[:2] + [('LABL', 0, struct.pack('<I', 0))] + lls[3:]))
PY

python3 - "$O" <<'PY'
import json, os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
docs = {}
F_NUM = '{"name": "x", "type": "numeric", "min": 0, "max": 1}'
def base(extra='', features=F_NUM, classes='[0, 1]', eps='1'):
    return '{"epsilon": %s, "classes": %s, "features": [%s]%s}' % (eps, classes, features, extra)
docs['ok-minimal'] = base()
docs['ok-every-key'] = ('{"epsilon": 0.75, "trees": 4, "depth": 3, "vote": "majority", "classes": ["no", "yes"],\n'
  ' "features": [{"name": "age", "type": "numeric", "min": 18, "max": 99},\n'
  '              {"name": "colour", "type": "categorical", "values": ["red", "green", 3, -4]}],\n'
  ' "seed": 42, "algorithm": "rdt", "splits": "global", "categorical": "one_vs_rest"}')
docs['ok-subset-probabilistic-text-seed'] = base(', "vote": "probabilistic", "categorical": "subset", "splits": "reachable", "seed": "s\\u00e9ed", "trees": 3, "depth": 4',
  features=F_NUM + ', {"name": "c", "type": "categorical", "values": [' + ','.join(str(i) for i in range(70)) + ']}, {"name": "one", "type": "categorical", "values": ["only"]}')
docs['ok-keep-trees-weight'] = base(', "trees": 6, "depth": 3, "vote": "weight", "keep_trees": 0.34, "seed": 3', classes='["a", "b", "c"]')
docs['ok-matrix-keep-trees'] = base(', "noise": "matrix", "trees": 5, "depth": 1, "keep_trees": 0.5, "seed": 4')
docs['ok-threads-one'] = base(', "threads": 1, "trees": 3, "depth": 2')
docs['opt-threads-three'] = base(', "threads": 3')
docs['ok-epsilon-null-three-classes'] = base(', "trees": 2, "depth": 2', classes='[1, 2, 3]', eps='null')
docs['ok-unicode'] = ('{"epsilon": 1e-6, "classes": ["\\u00fcber", "\\u65e5\\u672c", "\\ud83d\\ude00", "tab\\tnew\\nline\\/\\\\\\"q\\b\\f\\r", "raw \u00e9\u65e5\U0001F600"],'
  ' "features": [{"name": "\\u0394x", "type": "numeric", "min": -1.5e-300, "max": 2.5E+300}], "seed": "\\uD834\\uDD1E"}')
docs['ok-extreme-values'] = ('{"epsilon": 1000000, "trees": 1024, "depth": 1, "classes": [9223372036854775807, -9223372036854775808, 0],'
  ' "features": [{"name": "x", "type": "numeric", "min": -1.7976931348623157e308, "max": 1.7976931348623157e308},'
  ' {"name": "k", "type": "categorical", "values": [-0, "-0", "00"]}], "seed": -9223372036854775808}')
docs['ok-whitespace'] = ' \t\r\n{ "epsilon" : 2 , "depth" : 28 , "trees" : 1 , "classes" : [ "a" ] , "features" : [ { "type" : "numeric" , "name" : "x" , "max" : 1 , "min" : -1 } ] } \n\t '
docs['ok-many-features'] = base(', "trees": 1, "depth": 6', features=', '.join('{"name": "f%d", "type": "%s", %s}' % (i, 'numeric' if i % 2 else 'categorical', '"min": %d, "max": %d' % (-i, i) if i % 2 else '"values": ["a", "b", %d]' % i) for i in range(120)))
docs['ok-diprime-every-key'] = ('{"algorithm": "diprime", "epsilon": 3, "trees": 2, "depth": 3, "rho": 0.3, "candidates": 2, "partition": false,'
  ' "task": "classification", "max_rows": 100, "vote": "majority", "seed": "d", "rows": 50, "ledger": "budget",'
  ' "classes": ["a", "b", "c"], "features": [' + F_NUM + ', {"name": "c", "type": "categorical", "values": [1, 2, 3, 4]}]}')
docs['ok-diprime-regression'] = ('{"algorithm": "diprime", "task": "regression", "target": {"min": -1e3, "max": 2.5e3}, "epsilon": 0.5,'
  ' "trees": 3, "depth": 2, "features": [' + F_NUM + ', {"name": "k", "type": "categorical", "values": ["p", "q"]}]}')
docs['ok-diprime-regression-nonprivate'] = ('{"algorithm": "diprime", "task": "regression", "target": {"min": 0, "max": 1}, "epsilon": null,'
  ' "trees": 1, "depth": 4, "partition": true, "features": [' + F_NUM + ']}')
docs['ok-rows-default-depth'] = base(', "rows": 1000, "trees": 3', eps='0.5')
docs['ok-rows-epsilon-null'] = base(', "rows": 1125899906842624, "ledger": "l\\u00e9dger"', eps='null')
docs['opt-rows-too-many'] = base(', "rows": 1125899906842625')
docs['opt-ledger-empty'] = base(', "ledger": ""')
docs['opt-ledger-too-long'] = base(', "ledger": "%s"' % ('x' * 129))
docs['opt-diprime-rdt-key'] = base(', "algorithm": "diprime", "splits": "global"')
docs['opt-rows-zero'] = base(', "rows": 0')
docs['opt-rows-float'] = base(', "rows": 1e3')
docs['opt-diprime-key-on-rdt'] = base(', "rho": 0.5')
docs['opt-diprime-rho-one'] = base(', "algorithm": "diprime", "rho": 1')
docs['opt-diprime-candidates-zero'] = base(', "algorithm": "diprime", "candidates": 0')
docs['opt-diprime-partition-number'] = base(', "algorithm": "diprime", "partition": 1')
docs['opt-diprime-task-bad'] = base(', "algorithm": "diprime", "task": "ranking"')
docs['opt-diprime-regression-no-target'] = '{"algorithm": "diprime", "task": "regression", "epsilon": 1, "features": [' + F_NUM + ']}'
docs['opt-diprime-regression-with-classes'] = base(', "algorithm": "diprime", "task": "regression", "target": {"min": 0, "max": 1}')
docs['opt-diprime-regression-vote'] = '{"algorithm": "diprime", "task": "regression", "target": {"min": 0, "max": 1}, "vote": "majority", "epsilon": 1, "features": [' + F_NUM + ']}'
docs['opt-diprime-target-inverted'] = '{"algorithm": "diprime", "task": "regression", "target": {"min": 1, "max": 0}, "epsilon": 1, "features": [' + F_NUM + ']}'
docs['opt-diprime-target-on-classification'] = base(', "algorithm": "diprime", "target": {"min": 0, "max": 1}')
docs['opt-diprime-max-rows-zero'] = base(', "algorithm": "diprime", "max_rows": 0')
docs['opt-diprime-eps-share-rounds-to-zero'] = base(', "algorithm": "diprime", "trees": 1024, "depth": 8, "candidates": 1000, "partition": false', eps='0.000001')
# JSON errors
for name, text in {
    'json-empty': '', 'json-space': '   ', 'json-null': 'null', 'json-array': '[]', 'json-string': '"epsilon"',
    'json-trailing-comma': '{"epsilon": 1,}', 'json-trailing-chars': base() + ' x', 'json-two-docs': base() + base(),
    'json-unterminated-string': '{"epsilon": 1, "seed": "abc', 'json-bad-escape': '{"seed": "\\x41"}',
    'json-short-unicode': '{"seed": "\\u00"}', 'json-unpaired-high': '{"seed": "\\ud800"}', 'json-unpaired-low': '{"seed": "\\udc00x"}',
    'json-high-then-bad': '{"seed": "\\ud800\\u0041"}', 'json-nul-escape': '{"seed": "a\\u0000b"}', 'json-control-char': '{"seed": "a\x01b"}',
    'json-raw-nul': '{"seed": "a\x00b"}', 'json-backslash-end': '{"seed": "\\', 'json-no-colon': '{"epsilon" 1}',
    'json-bare-word': '{"epsilon": tru}', 'json-leading-zero': '{"epsilon": 01}', 'json-lone-minus': '{"epsilon": -}',
    'json-dot': '{"epsilon": 1.}', 'json-exp': '{"epsilon": 1e}', 'json-plus': '{"epsilon": +1}', 'json-nan': '{"epsilon": NaN}',
    'json-number-63-chars': '{"epsilon": 0.' + '1' * 61 + '}', 'json-number-64-chars': '{"epsilon": 0.' + '1' * 62 + '}',
    'json-depth-32': '{"seed": ' + '[' * 32 + ']' * 32 + '}', 'json-depth-33': '{"seed": ' + '[' * 33 + ']' * 33 + '}',
    'json-depth-2000': '[' * 2000, 'json-depth-objects': '{"a":' * 40 + '1' + '}' * 40,
    'ok-invalid-utf8': '{"epsilon": 1, "classes": ["\udcff"], "features": [' + F_NUM + ']}',
}.items():
    docs[name] = text
# option errors
errs = {
    'opt-unknown-key': base(', "epsilom": 1'), 'opt-duplicate-key': base(', "epsilon": 2'),
    'opt-no-epsilon': '{"classes": [0], "features": [' + F_NUM + ']}', 'opt-epsilon-zero': base(eps='0'),
    'opt-epsilon-negative': base(eps='-1'), 'opt-epsilon-huge': base(eps='1e309'), 'opt-epsilon-tiny': base(eps='1e-400'),
    'opt-epsilon-too-big': base(eps='1000001'), 'opt-epsilon-too-small': base(eps='9.9e-7'), 'opt-epsilon-string': base(eps='"1"'),
    'opt-epsilon-true': base(eps='true'), 'opt-trees-zero': base(', "trees": 0'), 'opt-trees-1025': base(', "trees": 1025'),
    'opt-trees-float': base(', "trees": 2.0'), 'opt-trees-int64-overflow': base(', "trees": 123456789012345678901234567890'),
    'opt-trees-neg': base(', "trees": -9223372036854775809'), 'opt-depth-31': base(', "depth": 31'),
    'opt-vote-bad': base(', "vote": "Majority"'), 'opt-splits-bad': base(', "splits": 1'), 'opt-categorical-bad': base(', "categorical": null'),
    'opt-algorithm-bad': base(', "algorithm": "forest"'), 'opt-seed-float': base(', "seed": 1.5'), 'opt-seed-object': base(', "seed": {}'),
    'opt-no-classes': '{"epsilon": 1, "features": [' + F_NUM + ']}', 'opt-classes-empty': base(classes='[]'),
    'opt-classes-dup-text': base(classes='[1, "1"]'), 'opt-classes-float': base(classes='[1.5]'), 'opt-classes-nested': base(classes='[[1]]'),
    'opt-classes-object': base(classes='{"a": 1}'), 'opt-no-features': '{"epsilon": 1, "classes": [0]}',
    'opt-features-empty': base(features=''), 'opt-features-not-array': '{"epsilon": 1, "classes": [0], "features": {}}',
    'opt-feature-not-object': base(features='"x"'), 'opt-feature-unknown-key': base(features='{"name": "x", "type": "numeric", "min": 0, "max": 1, "mean": 0}'),
    'opt-feature-dup-key': base(features='{"name": "x", "name": "y", "type": "numeric", "min": 0, "max": 1}'),
    'opt-feature-no-name': base(features='{"type": "numeric", "min": 0, "max": 1}'), 'opt-feature-empty-name': base(features='{"name": "", "type": "numeric", "min": 0, "max": 1}'),
    'opt-feature-long-name': base(features='{"name": "%s", "type": "numeric", "min": 0, "max": 1}' % ('n' * 1025)),
    'opt-feature-no-type': base(features='{"name": "x", "min": 0, "max": 1}'), 'opt-feature-bad-type': base(features='{"name": "x", "type": "ordinal"}'),
    'opt-numeric-min-eq-max': base(features='{"name": "x", "type": "numeric", "min": 1, "max": 1}'),
    'opt-numeric-inf': base(features='{"name": "x", "type": "numeric", "min": -1e999, "max": 1}'),
    'opt-numeric-with-values': base(features='{"name": "x", "type": "numeric", "min": 0, "max": 1, "values": [1]}'),
    'opt-numeric-string-bound': base(features='{"name": "x", "type": "numeric", "min": "0", "max": 1}'),
    'opt-categorical-no-values': base(features='{"name": "c", "type": "categorical"}'),
    'opt-categorical-empty-values': base(features='{"name": "c", "type": "categorical", "values": []}'),
    'opt-categorical-with-min': base(features='{"name": "c", "type": "categorical", "values": [1], "min": 0}'),
    'opt-categorical-dup-values': base(features='{"name": "c", "type": "categorical", "values": ["a", "b", "a"]}'),
    'opt-categorical-bad-value': base(features='{"name": "c", "type": "categorical", "values": ["a", true]}'),
    'opt-dup-feature-names': base(features=F_NUM + ', ' + F_NUM),
    'opt-too-many-features': base(features=', '.join('{"name":"f%d","type":"numeric","min":0,"max":1}' % i for i in range(1001))),
    'opt-model-too-large': base(', "trees": 1024, "depth": 30'), 'opt-model-too-large-classes': base(', "trees": 1024, "depth": 18', classes='[1,2,3,4,5]'),
}
docs.update(errs)
docs['ok-unit-private-bounds'] = base(', "privacy_unit": "patient", "max_rows_per_unit": 5, "bounds_share": 0.25',
                                      features='{"name": "x", "type": "numeric", "bounds": "private"}')
docs['opt-unit-without-cap'] = base(', "privacy_unit": "patient"')
docs['opt-bounds-private-with-min'] = base(features='{"name": "x", "type": "numeric", "bounds": "private", "min": 0}')
for name, text in docs.items():
    with open(os.path.join(out, name + '.json'), 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(text)
print(len(docs))
PY

fi

# import/: the exports of the forest seeds (and of one learner: refused by the forest importer),
# then re-spelled and edited copies of two of them.
rm -f "$I"/ok-*.json "$I"/same-*.json "$I"/edit-*.json "$I"/bad-*.json # fuzz-found-* stay
for blob in "$M"/*.blob; do
  name=$(basename "$blob" .blob)
  case $name in bad-* | lenient-* | optional-* | signed-bad-*) continue ;; esac
  sqlite3 -batch :memory: ".load $REPO/dist/rdt" "SELECT writefile('$I/ok-$name.json', rdt_export(readfile('$blob')))" \
    >/dev/null 2>&1 || true
done
# (Seeds a decoder of today refuses export nothing.) The golden models, and an unsigned model signed
# with a fresh key (so ok-signed.json changes on every run, like model/unseeded.blob).
sqlite3 -batch -bail :memory: >/dev/null <<SQL
.load $REPO/dist/rdt
SELECT writefile('$I/ok-golden-model_v1_0.json', rdt_export(readfile('$REPO/tests/golden/model_v1_0.blob')));
SELECT writefile('$I/ok-golden-model_v1_1.json', rdt_export(readfile('$REPO/tests/golden/model_v1_1.blob')));
SELECT writefile('$I/ok-signed.json', rdt_export(rdt_sign(rdt_train('{"epsilon": 1, "trees": 2, "depth": 2, "classes": [0, 1],
  "features": [{"name": "x", "type": "numeric", "min": 0, "max": 10}]}', value % 2, value), json_extract(k, '\$.secret_key'), 'fuzz seed')))
FROM generate_series(1, 20), (SELECT rdt_keypair() AS k);
SQL
# Keep the corpus small: the forests, one learner (auto) and the golden exports.
for f in "$I"/ok-*.json; do
  case $(basename "$f") in
    ok-boost-* | ok-constant-* | ok-naive-bayes* | ok-private-tree* | ok-random-trees* | ok-matrix-forest* | \
    ok-auto-regression* | ok-auto-default-matrix* | ok-unit-naive-bayes*) rm -f "$f" ;;
  esac
done
python3 - "$I" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name): return open(os.path.join(out, 'ok-%s.json' % name), encoding='utf-8').read()
def w(name, text): open(os.path.join(out, name + '.json'), 'w', encoding='utf-8').write(text)
t = load('golden-model_v1_1')
d = json.loads(t)
w('same-indent-sorted', json.dumps(d, indent=2, sort_keys=True))
w('same-spaced', t.replace(',', ' ,\n ').replace(':', ' : '))
w('same-number-spellings', t.replace('"epsilon":1.0,', '"epsilon":1e0,').replace('"epsilon_den":4294967296', '"epsilon_den":4.294967296e9'))
w('edit-privacy-epsilon', t.replace('"epsilon":1.0,', '"epsilon":0.1,'))
w('edit-noise-scale', t.replace('"noise_scale":', '"noise_scale":1,"x":'))
w('edit-extra-member', t[:-1] + ',"learner":"naive_bayes"}')
w('edit-missing-member', t.replace('"neighbouring":"add/remove one row",', ''))
w('edit-repeated-member', t.replace('"seeded":true', '"seeded":true,"seeded":true'))
w('edit-integer-as-fraction', t.replace('"epsilon_den":4294967296', '"epsilon_den":4294967296.5'))
w('edit-model-format-newer', t.replace('"model_format":"1.1"', '"model_format":"1.2"'))
w('same-model-format-older', t.replace('"model_format":"1.1"', '"model_format":"1.0"'))
w('edit-uppercase-model-id', t.replace(d['model_id'], d['model_id'].upper()))
w('edit-long-key', t[:-1] + ',"%s":{"%s":[1,{"b":"%s"}]}}' % ('k' * 300, 'q' * 60, '\u00e9' * 50))
w('edit-deep-extra', t[:-1] + ',"deep":' + '[' * 30 + ']' * 30 + '}')
s = load('signed')
e = json.loads(s); e['classes'] = e['classes'][::-1]
w('edit-signed-classes', json.dumps(e))
m = load('matrix-identity')
w('edit-matrix-epsilon-den', m.replace('"epsilon_den":4294967296', '"epsilon_den":1'))
w('bad-not-object', '[1]')
w('bad-empty-object', '{}')
w('bad-nested', '{"format":"rdt-model-json","format_version":1,"x":' + '{"a":' * 30 + '1' + '}' * 30 + '}')
PY
echo "import: $(ls "$I" | wc -l) documents"
