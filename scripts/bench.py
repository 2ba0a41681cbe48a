#!/usr/bin/python3
"""Benchmark rdt_train and rdt_predict against a plain table scan.

Builds a temporary database with N rows of 10 REAL features uniform in [0,1) and a 0/1 label
(x1 + x2 > 1, flipped for about one row in ten), then times, interleaved, 3 times each
(the median is reported):
  scan   SELECT count(*), sum(x1), ..., sum(x10) FROM t
  train  rdt_train, epsilon 1, 32 trees, depth 10, vote threshold   (target: train/scan <= 2)
         with the default "threads": 2 (a second thread counts while SQLite reads) and with 1
and then prediction over every row, the model given as a bound parameter, as a scalar
subquery on a models table, and through a join with it (target: >= 1,000,000 predictions/s), and
rdt_predictions((SELECT model FROM models WHERE name = ...), 'SELECT * FROM t'), the table-valued
form that binds by name (target: at least 2/3 of the bound positional form's rate, in the same run).
A mixed schema on a second table of N rows (8 REAL features as above, c1 INTEGER 0..11 and
c2 TEXT 'a'..'f', categorical with 10 and 5 listed values, the rest `other`), timed the same way:
  scan   SELECT count(*), sum(x1), ..., sum(x8), sum(c1), max(c2) FROM tm
  train  the same forest on the 10 mixed features        (target: train/scan <= 2)

Usage: /usr/bin/python3 scripts/bench.py [--rows N]
"""
import argparse
import json
import os
import resource
import subprocess
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "dist" / "rdt"
FEATURES = [f"x{i}" for i in range(1, 11)]
COLUMNS = ", ".join(FEATURES)
REPEATS = 3


SLOW_ROWS = 20_000


def timed(db, sql, params=()):
    start = time.perf_counter()
    result = db.execute(sql, params).fetchone()
    return time.perf_counter() - start, result


def fill(db, rows):
    # random() & (2^53 - 1) / 2^53 is uniform in [0, 1) with every bit a double can hold.
    uniform = "(random() & 9007199254740991) / 9007199254740992.0"
    db.execute(f"CREATE TABLE t({', '.join(f + ' REAL' for f in FEATURES)}, label INTEGER)")
    db.execute(f"""
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO t({COLUMNS}) SELECT {', '.join([uniform] * 10)} FROM n""", (rows,))
    # A separate pass, so that x1 and x2 are the stored values and not fresh random() calls.
    db.execute("UPDATE t SET label = ((x1 + x2 > 1) <> (random() % 10 = 0))")
    db.commit()


MIXED_NUMERIC = FEATURES[:8]
MIXED_COLUMNS = ", ".join(MIXED_NUMERIC + ["c1", "c2"])


def fill_mixed(db, rows):
    """The mixed-schema table: 8 numeric features, an INTEGER and a TEXT categorical one."""
    uniform = "(random() & 9007199254740991) / 9007199254740992.0"
    db.execute(f"CREATE TABLE tm({', '.join(f + ' REAL' for f in MIXED_NUMERIC)}, c1 INTEGER, c2 TEXT, "
               "label INTEGER)")
    db.execute(f"""
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO tm({MIXED_COLUMNS}) SELECT {', '.join([uniform] * 8)}, abs(random()) % 12,
          char(97 + abs(random()) % 6) FROM n""", (rows,))
    db.execute("UPDATE tm SET label = ((x1 + x2 > 1) <> (c1 = 3) <> (random() % 10 = 0))")
    db.commit()


def bench_mixed(db, rows):
    """Training on the mixed schema against its own plain scan; returns (scan, train, train1)."""
    fill_mixed(db, rows)
    features = ([{"name": f, "type": "numeric", "min": 0, "max": 1} for f in MIXED_NUMERIC] +
                [{"name": "c1", "type": "categorical", "values": list(range(10))},
                 {"name": "c2", "type": "categorical", "values": list("abcde")}])
    options = json.dumps({"epsilon": 1, "trees": 32, "depth": 10, "vote": "threshold", "classes": [0, 1],
                          "features": features})
    one_thread = json.dumps({**json.loads(options), "threads": 1})
    scan_sql = f"SELECT count(*), {', '.join(f'sum({f})' for f in MIXED_NUMERIC)}, sum(c1), max(c2) FROM tm"
    train_sql = f"SELECT rdt_train(?, label, {MIXED_COLUMNS}) FROM tm"
    scans, trains, trains1 = [], [], []
    for _ in range(REPEATS):
        scans.append(timed(db, scan_sql)[0])
        trains.append(timed(db, train_sql, (options,))[0])
        trains1.append(timed(db, train_sql, (one_thread,))[0])
    scan, train, train1 = statistics.median(scans), statistics.median(trains), statistics.median(trains1)
    print(f"mixed scan  {scan:.3f} s  (runs: {', '.join(f'{s:.3f}' for s in scans)})")
    print(f"mixed train {train:.3f} s  (runs: {', '.join(f'{s:.3f}' for s in trains)})")
    print(f"mixed train, threads 1 {train1:.3f} s  (runs: {', '.join(f'{s:.3f}' for s in trains1)})")
    print(f"mixed train/scan = {train / scan:.2f}, with one thread {train1 / scan:.2f}  (target <= 2.0)")
    return scan, train, train1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the table")
    rows = parser.parse_args().rows
    with tempfile.TemporaryDirectory(prefix="rdt-bench-") as workdir:
        bench(rows, os.path.join(workdir, "bench.db"))


def child(path, sql):
    """Run sql in a fresh sqlite3 shell with the extension; return (seconds, peak RSS in KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(["sqlite3", path], input=f".load {EXTENSION}\n{sql}\n", text=True, check=True,
                   stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    # ru_maxrss of children is the largest child so far: run the small one first.
    return seconds, max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)


def bench(rows, path):
    db = sqlite3.connect(path)
    db.enable_load_extension(True)
    db.load_extension(str(EXTENSION))
    (version,) = db.execute("SELECT rdt_version()").fetchone()
    print(f"rdt {version}, SQLite {sqlite3.sqlite_version}, {rows:,} rows in {path}")

    start = time.perf_counter()
    fill(db, rows)
    print(f"generated in {time.perf_counter() - start:.2f} s "
          f"({os.path.getsize(path) / 2**20:.0f} MiB)")

    options = json.dumps({
        "epsilon": 1, "trees": 32, "depth": 10, "vote": "threshold", "classes": [0, 1],
        "features": [{"name": f, "type": "numeric", "min": 0, "max": 1} for f in FEATURES]})
    scan_sql = f"SELECT count(*), {', '.join(f'sum({f})' for f in FEATURES)} FROM t"
    one_thread = json.dumps({**json.loads(options), "threads": 1})
    train_sql = f"SELECT rdt_train(?, label, {COLUMNS}) FROM t"
    scans, trains, trains1 = [], [], []
    for _ in range(REPEATS):
        seconds, _ = timed(db, scan_sql)
        scans.append(seconds)
        seconds, (model,) = timed(db, train_sql, (options,))
        trains.append(seconds)
        seconds, (model1,) = timed(db, train_sql, (one_thread,))
        trains1.append(seconds)
    scan, train, train1 = statistics.median(scans), statistics.median(trains), statistics.median(trains1)
    print(f"scan  {scan:.3f} s  (runs: {', '.join(f'{s:.3f}' for s in scans)})")
    print(f"train {train:.3f} s  (runs: {', '.join(f'{s:.3f}' for s in trains)})")
    print(f"train, threads 1 {train1:.3f} s  (runs: {', '.join(f'{s:.3f}' for s in trains1)})")
    print(f"train/scan = {train / scan:.2f}, with one thread {train1 / scan:.2f}  (target <= 2.0)")

    db.execute("CREATE TABLE models(name TEXT PRIMARY KEY, model BLOB NOT NULL)")
    db.execute("INSERT INTO models VALUES ('bench', ?)", (model,))
    db.commit()
    (size,) = db.execute("SELECT length(model) FROM models").fetchone()
    print(f"model size {size:,} bytes")

    # The subquery and join forms copy the BLOB into every call (SQLite's doing), so they are
    # O(model size) per row: measure them on the first SLOW_ROWS rows and report the rate.
    slow = min(rows, SLOW_ROWS)
    ways = {
        "bound parameter": (f"SELECT count(rdt_predict(?, {COLUMNS})) FROM t", (model,), rows),
        "scalar subquery": (f"SELECT count(rdt_predict((SELECT model FROM models "
                            f"WHERE name = 'bench'), {COLUMNS})) FROM (SELECT * FROM t LIMIT {slow})",
                            (), slow),
        "join": (f"SELECT count(rdt_predict(m.model, {COLUMNS})) FROM (SELECT * FROM t LIMIT {slow}), "
                 f"models m WHERE m.name = 'bench'", (), slow),
        # The table-valued form decodes the model once per statement, whatever the argument.
        "rdt_predictions": ("SELECT count(predicted) FROM rdt_predictions((SELECT model FROM models "
                            "WHERE name = 'bench'), 'SELECT * FROM t')", (), rows),
    }
    results = []
    for way, (sql, params, n) in ways.items():
        runs = []
        for _ in range(REPEATS):
            seconds, (count,) = timed(db, sql, params)
            assert count == n, f"{way}: {count} predictions for {n} rows"
            runs.append(seconds)
        seconds = statistics.median(runs) * rows / n  # per `rows` predictions
        results.append((way, seconds, rows / seconds))
        target = "target: 2/3 of the bound form's rate" if way == "rdt_predictions" else "target >= 1,000,000/s"
        print(f"predict ({way}, {n:,} rows) {rows / seconds:,.0f} predictions/s, "
              f"{seconds / scan:.2f} x scan  ({target})")
    rate = {way: r for way, _, r in results}
    by_name = rate["rdt_predictions"] / rate["bound parameter"]
    print(f"rdt_predictions / bound rdt_predict = {by_name:.2f}  (target >= 0.67); "
          f"rdt_predictions / join = {rate['rdt_predictions'] / rate['join']:.1f}")

    mixed = bench_mixed(db, rows)
    db.close()

    # DiPriMe buffers its rows: time and peak memory of a separate sqlite3 process, next to the
    # same process doing the plain scan (ru_maxrss of the children, in KiB on Linux).
    dip = json.dumps({
        "algorithm": "diprime", "epsilon": 1, "trees": 10, "depth": 5, "candidates": 5,
        "classes": [0, 1], "features": [{"name": f, "type": "numeric", "min": 0, "max": 1} for f in FEATURES]})
    dip_sql = f"SELECT length(rdt_train('{dip}', label, {COLUMNS})) FROM t;"
    scan_child = child(path, scan_sql + ";")
    dip_child = child(path, dip_sql)
    print(f"diprime train (10 trees, depth 5, K 5) {dip_child[0]:.3f} s = {dip_child[0] / scan:.2f} x scan; "
          f"peak RSS {dip_child[1] / 1024:.0f} MiB (a plain scan process: {scan_child[1] / 1024:.0f} MiB)")

    print(f"\n| measure ({rows:,} rows, median of {REPEATS}) | seconds | ratio to scan | target |")
    print("|---|---|---|---|")
    print(f"| scan: count + 10 sums | {scan:.3f} | 1.00 | |")
    print(f"| rdt_train ε=1, 32 trees, depth 10 | {train:.3f} | {train / scan:.2f} | ≤ 2.0 |")
    print(f"| the same, `\"threads\": 1` | {train1:.3f} | {train1 / scan:.2f} | |")
    print(f"| mixed schema (8 numeric, 2 categorical): scan | {mixed[0]:.3f} | 1.00 | |")
    print(f"| mixed schema: rdt_train, the same forest | {mixed[1]:.3f} | {mixed[1] / mixed[0]:.2f} | ≤ 2.0 |")
    print(f"| mixed schema, `\"threads\": 1` | {mixed[2]:.3f} | {mixed[2] / mixed[0]:.2f} | |")
    for way, seconds, r in results:
        what = "rdt_predictions, model from a subquery" if way == "rdt_predictions" else f"rdt_predict, {way}"
        target = "≥ 2/3 of the bound form's" if way == "rdt_predictions" else "≥ 1,000,000/s"
        print(f"| {what}: {r:,.0f}/s | {seconds:.3f} | {seconds / scan:.2f} | {target} |")
    print(f"| rdt_predictions / bound rdt_predict | {by_name:.2f} | | ≥ 0.67 |")
    print(f"| model size | {size:,} bytes | | |")
    print(f"| DiPriMe rdt_train, 10 trees, depth 5, K 5 | {dip_child[0]:.3f} | {dip_child[0] / scan:.2f} | |")
    print(f"| DiPriMe peak memory (sqlite3 process) | {dip_child[1] / 1024:.0f} MiB "
          f"(plain scan: {scan_child[1] / 1024:.0f} MiB) | | |")


if __name__ == "__main__":
    main()
