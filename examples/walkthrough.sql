-- A curator's walk-through of rdt: train a differentially private forest on the banknote
-- data, keep it in a table, inspect it, use it, and compare it with a non-private model.
-- Run from the repository root after `make`:   sqlite3 < examples/walkthrough.sql

.bail on
.headers on
.mode box

-- 1. Load the extension (the shell adds the .so suffix).
.load ./dist/rdt
SELECT rdt_version() AS rdt_version;

-- 2. The data: 1372 banknotes, four numeric measurements and a 0/1 class.
--    Declaring the columns first makes .import store numbers as REAL and INTEGER, not text.
CREATE TABLE notes(variance REAL, skewness REAL, curtosis REAL, entropy REAL, label INTEGER);
.import --csv --skip 1 tests/data/banknote.csv notes
SELECT count(*) AS notes, sum(label = 0) AS class_0, sum(label = 1) AS class_1 FROM notes;

-- 3. A deterministic split: every tenth row is held out for testing, the rest is for training.
--    (A view has no rowid of its own, so the row number is passed on as `note`.)
CREATE VIEW train AS SELECT rowid AS note, * FROM notes WHERE rowid % 10 <> 0;
CREATE VIEW test  AS SELECT rowid AS note, * FROM notes WHERE rowid % 10 =  0;

-- 4. Train a private model and keep it. The options are the whole public description:
--    - epsilon 1: the privacy budget that this one training spends on the training rows;
--    - trees and depth: the size of the forest (10 trees, 2^8 = 256 leaves each);
--    - vote "threshold": predictions average the trees' class frequencies;
--    - classes and features: the public domain. The min/max bounds must come from public
--      knowledge (documentation, the instrument's range), never from min()/max() of the
--      private table; here they are wide round numbers. Values outside are clamped and
--      missing values go to the midpoint.
--    No "seed": a seeded model is reproducible, which makes it unfit for release.
CREATE TABLE models(name TEXT PRIMARY KEY, model BLOB NOT NULL,
                    created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);

--    rdt_fit takes the options first and the query as text: it checks both, charges the ledger
--    if the options name one ("ledger": "budget", an rdt_ledger table kept in a file beside a
--    database file), and only then runs the query. The query's columns are bound by name:
--    "label" and one column per feature. An empty result would still give a model (noise only).
INSERT INTO models(name, model)
SELECT 'banknote-eps1',
       rdt_fit('{"epsilon": 1, "trees": 10, "depth": 8, "vote": "threshold",
                 "classes": [0, 1],
                 "features": [
                   {"name": "variance", "type": "numeric", "min": -8,  "max": 8},
                   {"name": "skewness", "type": "numeric", "min": -14, "max": 14},
                   {"name": "curtosis", "type": "numeric", "min": -6,  "max": 18},
                   {"name": "entropy",  "type": "numeric", "min": -9,  "max": 3}]}',
               'SELECT label, variance, skewness, curtosis, entropy FROM train');

-- 5. What was released: rdt_info describes the model, including the epsilon actually spent
--    and whether it is fit for release ("release": "ok").
SELECT key, iif(type IN ('true', 'false', 'null'), type, value) AS value
FROM models, json_each(rdt_info(model))
WHERE name = 'banknote-eps1';

-- 6. Use it: predicted class and class probabilities for a few held-out notes.
--    rdt_predictions(model, query) returns one row per row of the query, its first column as
--    key, the features taken by name; it decodes the model once, even from a subquery.
SELECT key AS note, predicted, probabilities
FROM rdt_predictions((SELECT model FROM models WHERE name = 'banknote-eps1'), 'SELECT * FROM test ORDER BY note')
LIMIT 5;
--    Or by position, one call per row: fetch the model once into the shell parameter @m (a bound
--    model is decoded once per statement; one read from a table inside the query is copied by
--    SQLite into every call).
.parameter init
.parameter set @m "(SELECT model FROM models WHERE name = 'banknote-eps1')"
SELECT note, label, rdt_predict(@m, variance, skewness, curtosis, entropy) AS predicted
FROM test
ORDER BY note
LIMIT 5;

-- 7. How good is it? Accuracy on the held-out rows, in plain SQL, then rdt_evaluate's metrics
--    (its query's columns bound by name, as training's) and the confusion matrix as rows.
SELECT count(*) AS test_rows,
       round(avg(rdt_predict(@m, variance, skewness, curtosis, entropy) = label), 3) AS accuracy
FROM test;
SELECT round(json_extract(e, '$.accuracy'), 3) AS accuracy, round(json_extract(e, '$.macro.f1'), 3) AS macro_f1,
       round(json_extract(e, '$.auc'), 3) AS auc
FROM (SELECT rdt_evaluate(@m, 'SELECT * FROM test') AS e);
SELECT actual, predicted, n FROM rdt_confusion(@m, 'SELECT * FROM test');

-- 8. For comparison only: "epsilon": null trains a NON-PRIVATE model on the exact counts.
--    It shows what the privacy noise costs, but it protects nobody: never release it.
INSERT INTO models(name, model)
SELECT 'banknote-exact',
       rdt_train('{"epsilon": null, "trees": 10, "depth": 8, "vote": "threshold",
                   "classes": [0, 1],
                   "features": [
                     {"name": "variance", "type": "numeric", "min": -8,  "max": 8},
                     {"name": "skewness", "type": "numeric", "min": -14, "max": 14},
                     {"name": "curtosis", "type": "numeric", "min": -6,  "max": 18},
                     {"name": "entropy",  "type": "numeric", "min": -9,  "max": 3}]}',
                 label, variance, skewness, curtosis, entropy)
FROM train;

--    rdt_info says so loudly:
SELECT name,
       json_extract(rdt_info(model), '$.private') AS private,
       json_extract(rdt_info(model), '$.epsilon') AS epsilon,
       json_extract(rdt_info(model), '$.release') AS release
FROM models
ORDER BY name;

-- 9. Both models side by side on the same held-out rows (one rdt_evaluate per model).
SELECT name AS model, json_extract(e, '$.evaluated') AS test_rows, round(json_extract(e, '$.accuracy'), 3) AS accuracy,
       length(model) AS model_bytes
FROM (SELECT name, model, rdt_evaluate(model, 'SELECT * FROM test') AS e FROM models)
ORDER BY name;
