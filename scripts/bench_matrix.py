#!/usr/bin/python3
"""Benchmark matrix forests end to end ("noise": "matrix").

Two workloads of issue 6, each timed 3 times (median), next to a plain scan of the same
training rows in the same run (the machine is shared: read the ratios):
  car    128 trees of depth 4, eps 2: draw the structure, choose the strategy, train,
         predict the 20% test rows; then DP batch prediction of the same rows from a
         non-private model.                                        (target: < 1 s end to end)
  adult  16 trees of depth 6, eps 1, 4 bins per numeric feature: train and predict the
         test rows.                                                 (target: < 5 s end to end)
Data: ../shared/datasets when present; car falls back to tests/data/car.csv; adult is
skipped without it.

Usage: /usr/bin/python3 scripts/bench_matrix.py [--data DIR]
"""
import argparse
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_accuracy import EXTENSION, load, quote  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 3


def median_time(fn):
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def workload(csv, trees, depth, eps, batch):
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(str(EXTENSION))
    features, domains, classes = load(db, csv)
    args = ", ".join(quote(f) for f in features)
    db.execute("CREATE TABLE train AS SELECT * FROM data WHERE rid % 5 <> 0")
    db.execute("CREATE TABLE test AS SELECT * FROM data WHERE rid % 5 = 0")
    (n_train,) = db.execute("SELECT count(*) FROM train").fetchone()
    (n_test,) = db.execute("SELECT count(*) FROM test").fetchone()
    base = {"noise": "matrix", "trees": trees, "depth": depth, "bins": 4, "classes": classes, "features": domains}
    private = json.dumps({**base, "epsilon": eps})
    exact = json.dumps({**base, "epsilon": None})
    scan_sql = f"SELECT count(*), {', '.join(f'max({quote(f)})' for f in features)} FROM train"

    def end_to_end():
        (model,) = db.execute(f"SELECT rdt_train(?, label, {args}) FROM train", (private,)).fetchone()
        db.execute(f"SELECT count(rdt_predict(?, {args})) FROM test", (model,)).fetchone()
        return model

    def batch_end_to_end():
        (model,) = db.execute(f"SELECT rdt_train(?, label, {args}) FROM train", (exact,)).fetchone()
        db.execute(f"SELECT rdt_predict_batch(?, ?, rid, {args}) FROM test", (model, eps)).fetchone()

    scan = median_time(lambda: db.execute(scan_sql).fetchone())
    total = median_time(end_to_end)
    model = end_to_end()
    (info,) = db.execute("SELECT rdt_info(?)", (model,)).fetchone()
    info = json.loads(info)
    out = {"rows": n_train, "test": n_test, "scan": scan, "total": total, "size": len(model),
           "leaves": info["leaves"], "strategy": info["matrix"]["strategy"]}
    if batch:
        out["batch"] = median_time(batch_end_to_end)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    data = Path(parser.parse_args().data)
    car = data / "car" / "car.csv"
    if not car.exists():
        car = ROOT / "tests" / "data" / "car.csv"
    (version,) = sqlite3.connect(":memory:").execute("SELECT sqlite_version()").fetchone()
    print(f"matrix forests, SQLite {version}; median of {REPEATS} runs")
    r = workload(car, 128, 4, 2, batch=True)
    print(f"car: {r['rows']} training rows, 128 trees of depth 4 ({r['leaves']:,} leaves, strategy "
          f"{r['strategy']}, model {r['size']:,} bytes)")
    print(f"  train + predict {r['test']} rows: {r['total']:.3f} s (target < 1 s) = "
          f"{r['total'] / r['scan']:.0f} x a scan of the training rows ({r['scan'] * 1000:.2f} ms)")
    print(f"  non-private train + DP batch prediction of {r['test']} rows: {r['batch']:.3f} s (target < 1 s)")
    adult = data / "adult" / "adult.csv"
    if not adult.exists():
        print("adult: skipped (no ../shared/datasets/adult/adult.csv)")
        return
    r = workload(adult, 16, 6, 1, batch=False)
    print(f"adult: {r['rows']} training rows, 16 trees of depth 6 ({r['leaves']:,} leaves, strategy "
          f"{r['strategy']}, model {r['size']:,} bytes)")
    print(f"  train + predict {r['test']} rows: {r['total']:.3f} s (target < 5 s) = "
          f"{r['total'] / r['scan']:.0f} x a scan of the training rows ({r['scan'] * 1000:.2f} ms)")


if __name__ == "__main__":
    main()
