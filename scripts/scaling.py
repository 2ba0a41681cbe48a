#!/usr/bin/python3
"""Scaling report: training cost against rows, trees and depth, as a ratio to a plain scan.

A synthetic table of 10 REAL features in [0, 1) and a 0/1 label. For each size, in one run:
the time of `SELECT count(*), sum(x1), ..., sum(x10)` (the scan), of RDT training (32 trees,
depth 10 unless varied), of DiPriMe training (10 trees, depth 5, K = 5), of a matrix forest (its
defaults, 4 bins) and of RDT# (its defaults, the public rows being every tenth row, features only);
the ratio of each to the scan; prediction throughput with the model bound as a parameter; model size; and the peak
memory of a separate sqlite3 process training the model. Writes results/scaling.md and plots.

Usage: /usr/bin/python3 scripts/scaling.py [--quick] [--out DIR]
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "dist" / "rdt"
FEATURES = [f"x{i}" for i in range(1, 11)]
COLS = ", ".join(FEATURES)


def fill(db, rows):
    db.execute("DROP TABLE IF EXISTS t")
    db.execute(f"CREATE TABLE t({', '.join(f + ' REAL' for f in FEATURES)}, label INTEGER)")
    u = "(abs(random()) % 1000000) / 1000000.0"
    db.execute(f"""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                   INSERT INTO t SELECT {', '.join([u] * 10)}, 0 FROM n""", (rows,))
    db.execute("UPDATE t SET label = (x1 + x2 > 1) <> (abs(random()) % 10 = 0)")
    db.commit()


def timed(db, sql, params=()):
    start = time.perf_counter()
    row = db.execute(sql, params).fetchone()
    return time.perf_counter() - start, row


def rdt_options(trees, depth):
    return json.dumps({"epsilon": 1, "trees": trees, "depth": depth, "classes": [0, 1],
                       "features": [{"name": f, "type": "numeric", "min": 0, "max": 1} for f in FEATURES]})


def diprime_options(rows):
    return json.dumps({"algorithm": "diprime", "epsilon": 1, "trees": 10, "depth": 5, "candidates": 5,
                       "max_rows": max(rows, 1), "classes": [0, 1],
                       "features": [{"name": f, "type": "numeric", "min": 0, "max": 1} for f in FEATURES]})


def matrix_options():
    return json.dumps({"noise": "matrix", "epsilon": 1, "classes": [0, 1],
                       "features": [{"name": f, "type": "numeric", "min": 0, "max": 1} for f in FEATURES]})


def sharp_options():
    return json.dumps({"algorithm": "rdt#", "epsilon": 1, "public_tables": ["t"], "public_query": f"SELECT {COLS} FROM t WHERE rowid % 10 = 0",
                       "classes": [0, 1],
                       "features": [{"name": f, "type": "numeric", "min": 0, "max": 1} for f in FEATURES]})


def peak_rss_kib(path, options):
    """Peak RSS of a fresh process training with these options (KiB, Linux)."""
    code = (f"import resource, sqlite3\nc = sqlite3.connect({str(path)!r})\nc.enable_load_extension(True)\n"
            f"c.load_extension({str(EXTENSION)!r})\n"
            f"c.execute('SELECT length(rdt_train(?, label, {COLS})) FROM t', ({options!r},)).fetchone()\n"
            # VmHWM belongs to this process's own address space; ru_maxrss would carry over
            # the high-water mark of the (large) parent across fork and exec.
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])\n")
    out = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def measure(db, rows, trees, depth):
    scan, _ = timed(db, f"SELECT count(*), {', '.join(f'sum({f})' for f in FEATURES)} FROM t")
    train, (model,) = timed(db, f"SELECT rdt_train(?, label, {COLS}) FROM t", (rdt_options(trees, depth),))
    predict, _ = timed(db, f"SELECT count(rdt_predict(?, {COLS})) FROM t", (model,))
    return {"rows": rows, "trees": trees, "depth": depth, "scan": scan, "train": train, "ratio": train / scan,
            "predict_per_s": rows / predict, "model_bytes": len(model)}


def plot(out, name, title, xlabel, data, logx):
    if not shutil.which("gnuplot"):
        return False
    dat = out / f"{name}.dat"
    dat.write_text("".join(" ".join(str(v) for v in d) + "\n" for d in data))
    extra = [(3, "DiPriMe (10 trees, depth 5)"), (4, "matrix forest (defaults)"), (5, "RDT# (defaults)")]
    script = "\n".join([
        "set terminal pngcairo size 700,420", f"set output '{out / (name + '.png')}'", f"set title '{title}'",
        "set logscale x" if logx else "", f"set xlabel '{xlabel}'", "set ylabel 'training time / scan time'",
        "set grid", "set key top left",
        f"plot '{dat}' using 1:2 with linespoints title 'RDT (32 trees, depth 10)'" +
        "".join(f", '{dat}' using 1:{col} with linespoints title '{title_}'" for col, title_ in extra
                if len(data[0]) >= col and any(d[col - 1] for d in data))])
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    dat.unlink()
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="up to 10^6 rows")
    parser.add_argument("--out", default=str(ROOT / "results"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [10**4, 10**5, 10**6] + ([] if args.quick else [10**7])
    lines = ["| rows | scan s | RDT train s | RDT / scan | DiPriMe train s | DiPriMe / scan | matrix / scan | "
             "RDT# / scan | predictions/s (bound) | model bytes | peak RSS RDT MiB | peak RSS DiPriMe MiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows_plot = []
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "scaling.db"
        db = sqlite3.connect(path)
        db.enable_load_extension(True)
        db.load_extension(str(EXTENSION))
        # RDT#'s public rows are every tenth row of t (synthetic rows: what is timed is the work, not
        # whose rows they are), so t is declared public.
        db.execute("CREATE TABLE rdt_public_tables(name TEXT PRIMARY KEY)")
        db.execute("INSERT INTO rdt_public_tables VALUES ('t')")
        db.commit()
        for rows in sizes:
            fill(db, rows)
            m = measure(db, rows, 32, 10)
            dip, _ = timed(db, f"SELECT length(rdt_train(?, label, {COLS})) FROM t", (diprime_options(rows),))
            mat, _ = timed(db, f"SELECT length(rdt_train(?, label, {COLS})) FROM t", (matrix_options(),))
            sharp, _ = timed(db, f"SELECT length(rdt_train(?, label, {COLS})) FROM t WHERE rowid % 10 <> 0",
                             (sharp_options(),))
            rss = peak_rss_kib(path, rdt_options(32, 10)) / 1024
            rss_d = peak_rss_kib(path, diprime_options(rows)) / 1024
            lines.append(f"| {rows:,} | {m['scan']:.3f} | {m['train']:.3f} | {m['ratio']:.2f} | {dip:.3f} | "
                         f"{dip / m['scan']:.2f} | {mat / m['scan']:.2f} | {sharp / m['scan']:.2f} | "
                         f"{m['predict_per_s']:,.0f} | {m['model_bytes']:,} | {rss:.0f} | {rss_d:.0f} |")
            rows_plot.append((rows, m["ratio"], dip / m["scan"], mat / m["scan"], sharp / m["scan"]))
            print(lines[-1], flush=True)
        fill(db, 10**6)
        tree_lines = ["| trees (depth 10, 10^6 rows) | RDT / scan | predictions/s | model bytes |", "|---|---|---|---|"]
        trees_plot = []
        for trees in (8, 32, 128):
            m = measure(db, 10**6, trees, 10)
            tree_lines.append(f"| {trees} | {m['ratio']:.2f} | {m['predict_per_s']:,.0f} | {m['model_bytes']:,} |")
            trees_plot.append((trees, m["ratio"], 0))
        depth_lines = ["| depth (32 trees, 10^6 rows) | RDT / scan | predictions/s | model bytes |", "|---|---|---|---|"]
        depth_plot = []
        for depth in (4, 8, 12, 16):
            m = measure(db, 10**6, 32, depth)
            depth_lines.append(f"| {depth} | {m['ratio']:.2f} | {m['predict_per_s']:,.0f} | {m['model_bytes']:,} |")
            depth_plot.append((depth, m["ratio"], 0))
        db.close()
    text = "\n".join(lines + [""] + tree_lines + [""] + depth_lines) + "\n"
    figures = []
    if plot(out, "scaling_rows", "Training cost against rows", "rows", rows_plot, True):
        figures.append("![rows](scaling_rows.png)")
    if plot(out, "scaling_trees", "RDT training cost against trees (10^6 rows)", "trees", trees_plot, True):
        figures.append("![trees](scaling_trees.png)")
    if plot(out, "scaling_depth", "RDT training cost against depth (10^6 rows)", "depth", depth_plot, False):
        figures.append("![depth](scaling_depth.png)")
    (out / "scaling.md").write_text(text + "\n" + "\n".join(figures) + "\n")
    print(text)


if __name__ == "__main__":
    main()
