#!/usr/bin/python3
"""Benchmark the learners against a plain table scan, in one process.

Builds an in-memory table of N rows (default 1,000,000) of 10 REAL features uniform in [0,1) and a
0/1 label (x1 + x2 > 1, flipped for about one row in ten), then times, interleaved, 3 times each
(the median is reported):
  scan     SELECT count(*), sum(x1), ..., sum(x10), sum(label) FROM t
  auto     rdt_fit with "algorithm": "auto" and the defaults (target: auto / scan <= 5, issue 33)
and prediction over every row, the model bound as a parameter, for the constant learner (the call
floor: argument cleaning and model lookup), naive Bayes, boosting, the private tree, and the RDT
forest (target: a learner within 2 x the constant learner's time).

Usage: /usr/bin/python3 scripts/bench_learners.py [--rows N]
"""
import argparse
import json
import random
import sqlite3
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FEATURES = [f"x{i}" for i in range(1, 11)]
COLUMNS = ", ".join(FEATURES)


def median_time(fn, repeats=3):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(str(ROOT / "dist" / "rdt"))
    db.execute(f"CREATE TABLE t({', '.join(f + ' REAL' for f in FEATURES)}, label INTEGER)")
    rng = random.Random(1)

    def row():
        x = [rng.random() for _ in FEATURES]
        return x + [int((x[0] + x[1] > 1) != (rng.random() < 0.1))]
    db.executemany(f"INSERT INTO t VALUES ({', '.join('?' * 11)})", (row() for _ in range(args.rows)))
    features = [{"name": f, "type": "numeric", "min": 0, "max": 1} for f in FEATURES]
    base = {"epsilon": 1, "classes": [0, 1], "features": features}
    query = f"SELECT {COLUMNS}, label FROM t"
    scan = median_time(lambda: db.execute(f"SELECT count(*), {', '.join(f'sum({f})' for f in FEATURES)}, "
                                          "sum(label) FROM t").fetchone())
    auto = median_time(lambda: db.execute("SELECT rdt_fit(?, ?)", (json.dumps(dict(base, algorithm="auto")),
                                                                   query)).fetchone())
    print(f"scan {scan:.3f} s; auto training {auto:.3f} s = {auto / scan:.2f} x the scan (target <= 5)")
    # On 8 features auto also trains the matrix forest (its trees then test half the features).
    base8 = dict(base, features=features[:8])
    query8 = f"SELECT {', '.join(FEATURES[:8])}, label FROM t"
    scan8 = median_time(lambda: db.execute(f"SELECT count(*), {', '.join(f'sum({f})' for f in FEATURES[:8])}, "
                                           "sum(label) FROM t").fetchone())
    auto8 = median_time(lambda: db.execute("SELECT rdt_fit(?, ?)", (json.dumps(dict(base8, algorithm="auto")),
                                                                    query8)).fetchone())
    print(f"8 features: scan {scan8:.3f} s; auto training {auto8:.3f} s = {auto8 / scan8:.2f} x the scan "
          "(the matrix forest among its candidates; target <= 5)")
    floor = None
    for algo in ["constant", "naive_bayes", "naive_bayes moments", "boost", "private_tree", "matrix_forest", "rdt"]:
        name, _, readout = algo.partition(" ")  # "naive_bayes moments": its "readout": "moments"
        opts = dict(base, algorithm=name, **({"readout": readout} if readout else {}))
        (model,) = db.execute("SELECT rdt_fit(?, ?)", (json.dumps(opts), query)).fetchone()
        t = median_time(lambda: db.execute(f"SELECT count(rdt_predict(?, {COLUMNS})) FROM t", (model,)).fetchone())
        floor = floor or t
        print(f"predict {algo}: {args.rows / t:,.0f} predictions/s = {t / floor:.2f} x the constant learner "
              f"(target <= 2 for the learners)")


if __name__ == "__main__":
    main()
