-- The curator's workflow, on the banknote data: import, a skeleton of the options (rdt_features),
-- public lists and bounds, rdt_check_report, a ledger, rdt_fit with the default learner ("auto"),
-- rdt_info, rdt_evaluate and rdt_confusion, rdt_sign, rdt_predictions. The same path as the README's
-- and docs/guide.md's, which explain each step.
-- Run it with `bash examples/demo.sh`, or from the repository root after `make`:
--     scratch=$(mktemp -d); sqlite3 "$scratch/demo.db" < examples/walkthrough.sql
-- It needs a database file, not :memory:: the ledger keeps its charges in a file beside it.

.bail on
.headers on
.mode box

-- 1. Load the extension (the shell adds the .so suffix).
.load ./dist/rdt
SELECT rdt_version() AS rdt_version;

-- 2. Import: 1372 banknotes, four numeric measurements and a 0/1 class. Declaring the columns
--    first makes .import store numbers as REAL and INTEGER; into a new table it would make every
--    column TEXT, which your own WHERE clauses then compare as text ('3.6' > '10').
CREATE TABLE notes(variance REAL, skewness REAL, curtosis REAL, entropy REAL, label INTEGER);
.import --csv --skip 1 tests/data/banknote.csv notes
SELECT count(*) AS notes, sum(label = 0) AS class_0, sum(label = 1) AS class_1 FROM notes;

--    Every fifth row is held out for evaluation.
CREATE VIEW train AS SELECT * FROM notes WHERE rowid % 5 <> 0;
CREATE VIEW test  AS SELECT * FROM notes WHERE rowid % 5 =  0;

-- 3. A skeleton of the options, written from the table by rdt_features. It reads the private
--    rows and is for your eyes only. The class list it COPIED from the rows is marked
--    {"copied_from_rows": [...]}: a model trained on a marked list is NOT FOR RELEASE. Numeric
--    bounds are left null: they must come from public knowledge, never from the data.
SELECT json_extract(rdt_features('train', 'label'), '$.classes') AS classes_copied_from_rows,
       json_extract(rdt_features('train', 'label'), '$.features[0].min') AS variance_min;

-- 4. Fill it: the budget (epsilon 1), the public class list, and public bounds (here wide round
--    numbers; values outside are clamped, missing ones take the midpoint). No "algorithm": the
--    default, "auto", picks the learner privately. No "seed": a seeded model is not for release.
CREATE TABLE opts AS SELECT json_set(rdt_features('train', 'label'),
  '$.epsilon', 1,
  '$.classes', json('[0, 1]'),
  '$.features[0].min', -8,  '$.features[0].max', 8,
  '$.features[1].min', -14, '$.features[1].max', 14,
  '$.features[2].min', -6,  '$.features[2].max', 18,
  '$.features[3].min', -9,  '$.features[3].max', 3) AS o;

-- 5. What training will do with the rows: read, kept, dropped, missing, clamped, and warnings
--    (none here). Exact facts about the private rows: for your eyes only, never published.
SELECT kind, name, missing, clamped, detail
FROM rdt_check_report((SELECT o FROM opts), 'SELECT * FROM train');

-- 6. A privacy budget. The ledger records every epsilon charged to it and refuses to overspend;
--    its charges live in a file beside the database (<database>-rdt-ledger).
CREATE VIRTUAL TABLE IF NOT EXISTS budget USING rdt_ledger(epsilon_budget=3.0);

-- 7. Train, charged. rdt_fit checks the options and the query, commits the charge, and only then
--    reads the rows; the query's columns are bound by name. The model is a BLOB kept in a table.
CREATE TABLE models(name TEXT PRIMARY KEY, model BLOB NOT NULL,
                    created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
INSERT INTO models(name, model)
SELECT 'notes-v1', rdt_fit(json_set(o, '$.ledger', 'budget', '$.note', 'walk-through, v1'), 'SELECT * FROM train')
FROM opts;
--    The ledger says what was charged, released, and what auto chose.
SELECT function, epsilon, outcome, json_extract(trained, '$.chosen') AS auto_chose, note, remaining
FROM budget WHERE kind = 'charge';

-- 8. Check the release: "release" must be "ok" (not seeded, not epsilon null, no copied list),
--    with no warnings you did not expect; rdt_info also shows the epsilon actually spent.
SELECT json_extract(i, '$.release') AS release, json_extract(i, '$.warnings') AS warnings,
       json_extract(i, '$.epsilon') AS epsilon, json_extract(i, '$.chosen') AS chosen,
       json_extract(i, '$.mechanism') AS mechanism
FROM (SELECT rdt_info(model) AS i FROM models WHERE name = 'notes-v1');

-- 9. Evaluate on the held-out rows: rdt_evaluate's metrics (its query's columns bound by name, as
--    training's) and the confusion matrix as rows. Computed from private rows without noise: for
--    you, not for publication. The model is bound once as the shell parameter @m.
.parameter init
.parameter set @m "(SELECT model FROM models WHERE name = 'notes-v1')"
SELECT json_extract(e, '$.evaluated') AS test_rows, round(json_extract(e, '$.accuracy'), 3) AS accuracy,
       round(json_extract(e, '$.macro.f1'), 3) AS macro_f1, round(json_extract(e, '$.auc'), 3) AS auc
FROM (SELECT rdt_evaluate(@m, 'SELECT * FROM test') AS e);
SELECT actual, predicted, n FROM rdt_confusion(@m, 'SELECT * FROM test');

-- 10. Sign. A real curator keeps the secret key in a file only they can read (docs/guide.md,
--     step 10); this demo makes a throwaway pair and keeps it only in this shell process (a
--     parameter), never in a table of the database. The signed model goes to the table you publish.
.parameter set @keys "(SELECT rdt_keypair())"
CREATE TABLE published AS
SELECT name, rdt_sign(model, json_extract(@keys, '$.secret_key'), 'Example Clinic, walk-through, v1') AS model
FROM models WHERE name = 'notes-v1';
--     The user checks it against the published public key: 1 only if signed by it and unchanged.
SELECT rdt_verify(model, json_extract(@keys, '$.public_key')) AS verified,
       json_extract(rdt_info(model), '$.signed') AS signed, json_extract(rdt_info(model), '$.publisher_note') AS note
FROM published;
.parameter unset @keys

-- 11. Predict, the fast way: rdt_predictions takes the model once per statement (even from a
--     subquery) and the features by name, and returns each row's key (the query's first column),
--     predicted class and class probabilities.
SELECT key AS note, predicted, probabilities
FROM rdt_predictions((SELECT model FROM published), 'SELECT rowid AS id, * FROM notes WHERE rowid % 5 = 0')
LIMIT 5;

-- 12. For comparison only: "epsilon": null trains a NON-PRIVATE model on the exact counts. It
--     shows what the privacy noise costs, but it protects nobody: rdt_info says so, and neither a
--     ledger nor rdt_sign takes it. Never release it.
INSERT INTO models(name, model)
SELECT 'notes-exact', rdt_fit(json_set(o, '$.epsilon', json('null')), 'SELECT * FROM train') FROM opts;
SELECT name, json_extract(rdt_info(model), '$.private') AS private,
       json_extract(rdt_info(model), '$.release') AS release,
       json_extract(e, '$.evaluated') AS test_rows, round(json_extract(e, '$.accuracy'), 3) AS accuracy,
       length(model) AS model_bytes
FROM (SELECT name, model, rdt_evaluate(model, 'SELECT * FROM test') AS e FROM models)
ORDER BY name;
