#!/usr/bin/python3
"""Issue 33, measured and not adopted: private selection among auto's candidates by disjoint pilots (the
issue's first known direction), simulated through the SQL API. The training rows of a split go 1 in 20 to
a validation part V, the rest R to a pilot P (a fraction p of R, dealt evenly among the five candidates)
and a final part F. Each candidate trains on its pilot share with eps; report noisy max over their
correct counts on V (counting queries, Laplace 1/eps; Dwork and Roth, claim 3.9) picks one, which trains
on F with eps: every row meets one release of eps (parallel composition). Compared with auto trained on
all the training rows, on the same stratified 80/20 splits (seeds 1..runs), every call seeded.

Usage: /usr/bin/python3 scripts/auto_pilot_selection.py SETS EPSILONS P RUNS [--data ../shared/datasets]
  e.g. scripts/auto_pilot_selection.py digits,car,wine 1,4 0.3 6"""
import math
import random
import statistics as st
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import learners_accuracy as la
DATA = sys.argv[sys.argv.index('--data') + 1] if '--data' in sys.argv else str(Path(__file__).resolve().parent.parent.parent / 'shared' / 'datasets')
sets = sys.argv[1].split(','); eps_list = [float(e) for e in sys.argv[2].split(',')]; p = float(sys.argv[3]); runs = int(sys.argv[4])
CANDS = ['naive_bayes', 'private_tree', 'random_trees', 'matrix_forest', 'boost']
def lap(rng, b):
    u = rng.random() - 0.5
    return -b * math.copysign(1, u) * math.log(1 - 2 * abs(u))
for name in sets:
    db = la.connect()
    features, domains, classes, n = la.load(db, Path(DATA) / name / f'{name}.csv', name)
    common = la.task_options(domains, classes)
    args = ", ".join(la.quote(f) for f in features)
    for eps in eps_list:
        res = {'auto': [], 'sel': []}; picks = []
        alone = {c: [] for c in CANDS}
        for seed in range(1, runs + 1):
            la.split(db, seed, False)
            rng = random.Random(seed * 7919 + int(eps * 100))
            ids = [r for (r,) in db.execute("SELECT rowid FROM train")]
            db.execute("DROP TABLE IF EXISTS full"); db.execute("ALTER TABLE train RENAME TO full")
            def train_on(rows, alg):
                db.execute("DROP TABLE IF EXISTS train")
                db.execute("CREATE TABLE train AS SELECT * FROM full WHERE rowid IN (%s)" % ",".join(map(str, rows)))
                return la.train(db, features, dict(common, algorithm=alg, epsilon=eps, seed=seed))
            def correct(m, table, how='avg'):  # accuracy on test, or (how='sum') the correct count on val
                return db.execute(f"SELECT {how}(rdt_predict(?, {args}) = y) FROM {table}", (m,)).fetchone()[0] or 0
            res['auto'].append(correct(train_on(ids, 'auto'), 'test'))
            for c in CANDS:
                alone[c].append(correct(train_on(ids, c), 'test'))
            rng.shuffle(ids)
            V = [r for i, r in enumerate(ids) if i % 20 == 0]; R = [r for i, r in enumerate(ids) if i % 20 != 0]
            npilot = int(len(R) * p); P, F = R[:npilot], R[npilot:]
            db.execute("DROP TABLE IF EXISTS val"); db.execute("CREATE TABLE val AS SELECT * FROM full WHERE rowid IN (%s)" % ",".join(map(str, V)))
            scores = []
            for j, c in enumerate(CANDS):
                part = P[j::len(CANDS)]
                scores.append(correct(train_on(part, c), 'val', 'sum') + lap(rng, 1 / eps))
            win = CANDS[max(range(len(CANDS)), key=lambda j: scores[j])]; picks.append(win)
            res['sel'].append(correct(train_on(F, win), 'test'))
            db.execute("DROP TABLE train"); db.execute("ALTER TABLE full RENAME TO train")
        best = max(CANDS, key=lambda c: st.mean(alone[c]))
        print(f"{name:14s} eps {eps:4g} p {p}: auto {st.mean(res['auto']):.3f} selection {st.mean(res['sel']):.3f} "
              f"(diff {100*(st.mean(res['sel'])-st.mean(res['auto'])):+.1f} ± {100*st.stdev([a-b for a,b in zip(res['sel'],res['auto'])])/runs**.5:.1f}) "
              f"best alone {best} {st.mean(alone[best]):.3f}; picks {dict((c, picks.count(c)) for c in set(picks))}", flush=True)
