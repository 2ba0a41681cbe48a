#!/usr/bin/env python3
"""`auto` (the default learner) on synthetic data sets that the shipped ones do not cover: a weak
signal in imbalanced classes, many classes, many features, tiny inputs, and regression with and
without a signal. Each line: the mean test accuracy (or MSE, targets in [0, 1]) over seeded runs,
beside the majority rate (or the training mean's MSE), and the learner each run's model holds.

Usage: /usr/bin/python3 scripts/auto_synthetic.py [--eps 1] [--runs 5]
"""
import argparse
import json
import os
import random
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = os.environ.get("RDT_EXT", str(ROOT / "dist" / "rdt"))


def clip01(v):
    return min(1.0, max(0.0, v))


def case(db, name, n, d, gen, classes, eps, runs):
    """Train auto on 80% of n generated rows per seed, test on the rest."""
    cols = ", ".join(f"x{j}" for j in range(d))
    marks = ",".join("?" * (d + 1))
    scores, bases, picks = [], [], []
    for seed in range(1, runs + 1):
        rng = random.Random(seed)
        rows = [gen(rng) for _ in range(n)]
        cut = int(0.8 * n)
        train, test = rows[:cut], rows[cut:]
        for table, part in (("train", train), ("test", test)):
            db.execute(f"DROP TABLE IF EXISTS {table}")
            db.execute(f"CREATE TABLE {table}({cols}, y)")
            db.executemany(f"INSERT INTO {table} VALUES ({marks})", part)
        opts = {"epsilon": eps, "seed": seed, "label": "y",
                "features": [{"name": f"x{j}", "type": "numeric", "min": 0, "max": 1} for j in range(d)]}
        if classes:
            opts["classes"] = list(range(classes))
        else:
            opts.update({"task": "regression", "target": {"min": 0, "max": 1}})
        (model,) = db.execute("SELECT rdt_fit(?, 'SELECT * FROM train')", (json.dumps(opts),)).fetchone()
        (pick,) = db.execute("SELECT json_extract(rdt_info(?), '$.chosen')", (model,)).fetchone()
        picks.append(pick)
        if classes:
            (s,) = db.execute(f"SELECT avg(rdt_predict(?, {cols}) = y) FROM test", (model,)).fetchone()
            top = max(range(classes), key=lambda k: sum(1 for r in train if r[-1] == k))
            base = sum(1 for r in test if r[-1] == top) / len(test)
        else:
            (s,) = db.execute(f"SELECT avg((rdt_predict(?, {cols}) - y) * (rdt_predict(?, {cols}) - y)) FROM test",
                              (model, model)).fetchone()
            mean = sum(r[-1] for r in train) / len(train)
            base = sum((r[-1] - mean) ** 2 for r in test) / len(test)
        scores.append(s)
        bases.append(base)
    what = "accuracy" if classes else "MSE"
    ref = "majority" if classes else "mean"
    counts = {p: picks.count(p) for p in sorted(set(picks))}
    print(f"| {name} | {what} {sum(scores) / runs:.4f} | {ref} {sum(bases) / runs:.4f} | "
          f"{', '.join(f'{k} {v}' for k, v in counts.items())} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(EXTENSION)
    u = lambda r, d: [r.random() for _ in range(d)]
    print(f"`auto` at ε = {args.eps:g}, seeds 1..{args.runs}, 80/20 splits of generated rows\n")
    print("| case | auto | constant reference | auto's models |")
    print("|---|---|---|---|")
    e, k = args.eps, args.runs
    case(db, "imbalanced 95/5, no signal (2000 × 5)", 2000, 5, lambda r: u(r, 5) + [int(r.random() < 0.05)], 2, e, k)
    case(db, "imbalanced 90/10, the minority never likelier (3000 × 8)", 3000, 8,
         lambda r: (lambda x: x + [int(r.random() < (0.3 if x[0] > 0.8 else 0.05))])(u(r, 8)), 2, e, k)
    case(db, "20 classes from x0 (4000 × 4)", 4000, 4, lambda r: (lambda x: x + [min(19, int(x[0] * 20))])(u(r, 4)), 20, e, k)
    case(db, "100 features, signal x0 + x1 > 1 (3000)", 3000, 100, lambda r: (lambda x: x + [int(x[0] + x[1] > 1)])(u(r, 100)), 2, e, k)
    case(db, "tiny: 60 rows, x0 > 0.5", 60, 3, lambda r: (lambda x: x + [int(x[0] > 0.5)])(u(r, 3)), 2, e, k)
    case(db, "regression, linear in x0 (5000 × 5)", 5000, 5,
         lambda r: (lambda x: x + [clip01(0.5 * x[0] + 0.25 + r.gauss(0, 0.1))])(u(r, 5)), 0, e, k)
    case(db, "regression, no signal (5000 × 5)", 5000, 5, lambda r: u(r, 5) + [clip01(0.5 + r.gauss(0, 0.2))], 0, e, k)
    case(db, "regression, tiny: 100 rows linear in x0", 100, 3,
         lambda r: (lambda x: x + [clip01(0.5 * x[0] + 0.25 + r.gauss(0, 0.1))])(u(r, 3)), 0, e, k)
    case(db, "regression, x0 · x1 (5000 × 4)", 5000, 4, lambda r: (lambda x: x + [clip01(x[0] * x[1] + r.gauss(0, 0.05))])(u(r, 4)), 0, e, k)
    case(db, "regression, 50 features, signal in x0 (5000)", 5000, 50,
         lambda r: (lambda x: x + [clip01(0.5 * x[0] + 0.25 + r.gauss(0, 0.1))])(u(r, 50)), 0, e, k)


if __name__ == "__main__":
    main()
