-- Matrix forests, DP batch prediction and RDT#, on the shipped Car and congressional voting data.
-- Run from the repository root after `make`:   sqlite3 < examples/matrix_and_sharp.sql

.bail on
.headers on
.mode box
.load ./dist/rdt

-- 1. Car: six categorical attributes, four classes. Every fifth row is a test query.
CREATE TABLE car(buying TEXT, maint TEXT, doors TEXT, persons TEXT, lug_boot TEXT, safety TEXT, label TEXT);
.import --csv --skip 1 tests/data/car.csv car
CREATE VIEW train AS SELECT rowid AS id, * FROM car WHERE rowid % 5 <> 0;
CREATE VIEW queries AS SELECT rowid AS id, * FROM car WHERE rowid % 5 = 0;
CREATE TABLE schema(o TEXT);
INSERT INTO schema VALUES ('"classes": ["unacc", "acc", "good", "vgood"], "features": [
  {"name": "buying", "type": "categorical", "values": ["vhigh", "high", "med", "low"]},
  {"name": "maint", "type": "categorical", "values": ["vhigh", "high", "med", "low"]},
  {"name": "doors", "type": "categorical", "values": ["2", "3", "4", "5more"]},
  {"name": "persons", "type": "categorical", "values": ["2", "4", "more"]},
  {"name": "lug_boot", "type": "categorical", "values": ["small", "med", "big"]},
  {"name": "safety", "type": "categorical", "values": ["low", "med", "high"]}]');

-- 2. A matrix forest with the defaults: multiway trees of depth 4, their number (128 here) and the
--    noise strategy chosen from the structure alone; rdt_info shows every candidate's expected error (× 2/ε²).
CREATE TABLE models AS
SELECT 'matrix' AS name, rdt_train('{"noise": "matrix", "epsilon": 2, ' || (SELECT o FROM schema) || '}',
       label, buying, maint, doors, persons, lug_boot, safety) AS model FROM train;
SELECT json_extract(i, '$.matrix.strategy') AS strategy,
       round(json_extract(i, '$.matrix.expected_error.identity'), 1) AS identity,
       json_extract(i, '$.matrix.expected_error.leaf') AS per_leaf_laplace,
       round(json_extract(i, '$.matrix.expected_leaf_variance'), 2) AS leaf_variance
FROM (SELECT rdt_info(model) AS i FROM models WHERE name = 'matrix');
SELECT 'matrix-eps2' AS model, round(avg(rdt_predict(m.model, buying, maint, doors, persons, lug_boot, safety) = label), 3) AS accuracy
FROM queries, models m WHERE m.name = 'matrix';

-- 2b. Most random trees split on attributes that barely matter for Car (doors, lug_boot). With
--     "keep_trees" only the best quarter votes, scored on their own released counters: post-processing,
--     so the same epsilon. rdt_trees marks the voting trees.
INSERT INTO models SELECT 'matrix-keep', rdt_train('{"noise": "matrix", "epsilon": 2, "vote": "weight", "keep_trees": 0.25, ' ||
       (SELECT o FROM schema) || '}', label, buying, maint, doors, persons, lug_boot, safety) FROM train;
SELECT json_extract(rdt_info(m.model), '$.voting_trees') AS voting_trees, json_extract(rdt_info(m.model), '$.epsilon') AS epsilon,
       (SELECT round(avg(rdt_predict(m.model, buying, maint, doors, persons, lug_boot, safety) = label), 3) FROM queries) AS accuracy
FROM models m WHERE m.name = 'matrix-keep';

-- 3. DP batch prediction: keep a NON-private model in the curator's database (never publish it:
--    rdt_sign refuses it) and answer the whole batch of queries under epsilon 2.
INSERT INTO models SELECT 'exact', rdt_train('{"noise": "matrix", "epsilon": null, ' || (SELECT o FROM schema) || '}',
       label, buying, maint, doors, persons, lug_boot, safety) FROM train;
CREATE TABLE answer AS
SELECT rdt_predict_batch(m.model, 2, q.id, buying, maint, doors, persons, lug_boot, safety) AS r
FROM queries q, models m WHERE m.name = 'exact';
SELECT json_extract(r, '$.strategy') AS batch_strategy, json_extract(r, '$.queries') AS queries,
       (SELECT round(avg(p.value = q.label), 3) FROM json_each(r, '$.predictions') p JOIN queries q ON q.id = CAST(p.key AS INTEGER)) AS batch_accuracy
FROM answer;

-- 4. RDT#: a small private labeled table plus a larger public table without labels.
CREATE TABLE vote(infants TEXT, water TEXT, budget TEXT, physician TEXT, salvador TEXT, religious TEXT, satellite TEXT,
  nicaragua TEXT, missile TEXT, immigration TEXT, synfuels TEXT, education TEXT, superfund TEXT, crime TEXT,
  exports TEXT, southafrica TEXT, label TEXT);
.import --csv --skip 1 tests/data/congressional_voting.csv vote
CREATE TABLE private_votes AS SELECT * FROM vote WHERE rowid % 3 = 0;
CREATE TABLE public_votes AS SELECT infants, water, budget, physician, salvador, religious, satellite, nicaragua, missile,
  immigration, synfuels, education, superfund, crime, exports, southafrica FROM vote WHERE rowid % 3 <> 0;
-- The curator declares which tables are public (the options' "public_tables" may name only these).
CREATE TABLE IF NOT EXISTS rdt_public_tables(name TEXT PRIMARY KEY);
INSERT INTO rdt_public_tables VALUES ('public_votes');
INSERT INTO schema SELECT '"classes": ["democrat", "republican"], "features": [' ||
  (SELECT group_concat('{"name": "' || name || '", "type": "categorical", "values": ["y", "n"]}', ', ')
   FROM pragma_table_info('public_votes')) || ']';
INSERT INTO models SELECT 'rdt#', rdt_train('{"algorithm": "rdt#", "epsilon": 1, "public_query": "SELECT * FROM public_votes", "public_tables": ["public_votes"], ' ||
  (SELECT o FROM schema WHERE o LIKE '%democrat%') || '}', label, infants, water, budget, physician, salvador, religious,
  satellite, nicaragua, missile, immigration, synfuels, education, superfund, crime, exports, southafrica) FROM private_votes;
SELECT json_extract(i, '$.rdt#.primary_trees') AS primary_trees, json_extract(i, '$.rdt#.secondary_trees') AS secondary_trees,
       json_extract(i, '$.rdt#.centres') AS centres, json_extract(i, '$.contains_public_rows') AS warning
FROM (SELECT rdt_info(model) AS i FROM models WHERE name = 'rdt#');
SELECT 'rdt#-eps1' AS model, round(avg(rdt_predict(m.model, infants, water, budget, physician, salvador, religious, satellite,
  nicaragua, missile, immigration, synfuels, education, superfund, crime, exports, southafrica) = v.label), 3) AS accuracy_on_public_rows
FROM vote v, models m WHERE v.rowid % 3 <> 0 AND m.name = 'rdt#';
