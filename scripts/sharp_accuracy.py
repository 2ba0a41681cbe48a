#!/usr/bin/python3
"""RDT# against the labeled-only private RDT forest (Jagannathan, Monteleoni and Pillaipakkamnatt,
"A semi-supervised learning approach to differential privacy", Figures 6-8).

Protocol of the paper: nursery with 20% of the training rows labeled, mushroom with 2%,
congressional_voting with 30%. Per run r (r = 1..10): shuffle the rows with seed r, hold out the
last 10% as the test set; of the remaining 90%, the first fraction is the private labeled table,
the rest the public unlabeled table (features only: its labels are never used). Both algorithms
see the same split and the same model seed r; ε runs from 0.5 to 1.0 in steps of 0.1.
congressional_voting (435 rows: a 43-row test set) runs a 10-fold cross-validation per run instead
(every tenth of the shuffled rows is the test set once, the labeled fraction taken from the rest).

  * RDT#: "algorithm": "rdt#", "public_query" = the unlabeled table, "rows" = the number of
    labeled rows (the paper's public n in its depth rule), everything else at the defaults
    (the primary trees p and the depth are chosen by the extension; rdt_info reports them).
  * the labeled-only private RDT: the extension's defaults (depth from a noisy row count).

Missing values as in the paper: mushroom drops stalk_root (the one attribute with missing
entries); congressional_voting replaces a missing vote by the majority vote on that bill,
computed over the whole CSV. Every feature is categorical; the value lists come from the whole CSV.

Writes results/sharp.md and, when gnuplot is installed, results/sharp_<name>.png.

Usage: /usr/bin/python3 scripts/sharp_accuracy.py [--data DIR] [--quick | --runs N] [--datasets a,b]
                                                  [--out FILE]
"""
import argparse
import csv
import json
import math
import random
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path

from paper_accuracy import EXTENSION, FULL_DATA_NOTE, available, data_csv, dataset_names, quote
from plotting import errorbar_plot

ROOT = Path(__file__).resolve().parent.parent
# dataset -> labeled fraction of the training part (the paper's)
SETTINGS = {"nursery": 0.20, "mushroom": 0.02, "congressional_voting": 0.30}
# dataset -> test folds per run. congressional_voting's 10% test set would have 43 rows (one row =
# 2.3 points of error), so each of its runs is a 10-fold cross-validation: every row is tested once
# per run, with the same labeled fraction of the other 90% as training. The others: one 10% test set.
FOLDS = {"nursery": 1, "mushroom": 1, "congressional_voting": 10}
EPSILONS, QUICK_EPSILONS = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0], [0.5, 1.0]
ALGORITHMS = ("RDT#", "RDT")


def load(db, csv_path, name):
    """Load the cleaned CSV into table `data`; return (features, domains, classes, note)."""
    with open(csv_path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [row for row in reader if row]
    assert header[-1] == "label", f"{csv_path}: last column must be 'label'"
    columns = [list(c) for c in zip(*rows)]
    features = header[:-1]
    notes = []
    if name == "mushroom" and "stalk_root" in features:
        i = features.index("stalk_root")
        missing = sum(c == "" for c in columns[i])
        del features[i], columns[i]
        notes.append(f"dropped stalk_root ({missing} missing entries)")
    filled = 0
    for j, cells in enumerate(columns[:-1]):
        if "" in cells:
            if name != "congressional_voting":
                raise SystemExit(f"{name}: column {features[j]} has missing entries")
            majority = Counter(c for c in cells if c != "").most_common(1)[0][0]
            filled += sum(c == "" for c in cells)
            columns[j] = [majority if c == "" else c for c in cells]
    if filled:
        notes.append(f"{filled} missing votes replaced by the bill's majority vote over the whole CSV")
    domains = [{"name": f, "type": "categorical", "values": sorted(set(c))}
               for f, c in zip(features, columns[:-1])]
    classes = sorted(set(columns[-1]))
    decls = ", ".join(f"{quote(f)} TEXT" for f in features)
    db.execute(f"CREATE TABLE data(rid INTEGER PRIMARY KEY, {decls}, label TEXT)")
    marks = ", ".join("?" * (len(features) + 2))
    db.executemany(f"INSERT INTO data VALUES ({marks})",
                   ([i] + list(row) for i, row in enumerate(zip(*columns))))
    return features, domains, classes, "; ".join(notes) or "no missing values"


def split(db, features, n_rows, fraction, seed, fold=0):
    """Fill labeled, unlabeled (features only) and test; return (n_labeled, n_unlabeled, n_test).
    The test set is the fold-th tenth of the shuffled rows (fold 9, the last tenth, by default
    layout: the first 90% train); the labeled rows are the first `fraction` of the rest."""
    ids = list(range(n_rows))
    random.Random(seed).shuffle(ids)
    lo, hi = round(fold * n_rows / 10), round((fold + 1) * n_rows / 10)
    test, rest = ids[lo:hi], ids[:lo] + ids[hi:]
    ids = rest + test
    n_train = len(rest)
    n_labeled = round(fraction * n_train)
    part = [(rid, 0 if i < n_labeled else 1 if i < n_train else 2) for i, rid in enumerate(ids)]
    db.execute("DROP TABLE IF EXISTS part")
    db.execute("CREATE TABLE part(rid INTEGER PRIMARY KEY, kind INTEGER)")
    db.executemany("INSERT INTO part VALUES (?, ?)", part)
    cols = ", ".join(f"data.{quote(f)}" for f in features)
    for table, kind, select in (("labeled", 0, "data.*"), ("unlabeled", 1, cols), ("test", 2, "data.*")):
        db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute(f"CREATE TABLE {table} AS SELECT {select} FROM data JOIN part USING (rid) "
                   f"WHERE part.kind = {kind} ORDER BY rid")
    return n_labeled, n_train - n_labeled, n_rows - n_train


def evaluate(db, features, options):
    """Train on `labeled`, test on `test`; return (test error, rdt_info of the model)."""
    args = ", ".join(quote(f) for f in features)
    (model,) = db.execute(f"SELECT rdt_train(?, label, {args}) FROM labeled",
                          (json.dumps(options),)).fetchone()
    # IS NOT rather than <>: a NULL prediction counts as an error instead of vanishing.
    (error,) = db.execute(f"SELECT avg(rdt_predict(?, {args}) IS NOT label) FROM test",
                          (model,)).fetchone()
    (info,) = db.execute("SELECT rdt_info(?)", (model,)).fetchone()
    return error, json.loads(info)


def mean_sd(xs):
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return mean, sd


def run_dataset(name, csv_path, runs, epsilons):
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(str(EXTENSION))
    features, domains, classes, note = load(db, csv_path, name)
    # The curator's declaration: RDT#'s public rows come from the unlabeled table.
    db.execute("CREATE TABLE rdt_public_tables(name TEXT PRIMARY KEY)")
    db.execute("INSERT INTO rdt_public_tables VALUES ('unlabeled')")
    (n_rows,) = db.execute("SELECT count(*) FROM data").fetchone()
    fraction = SETTINGS[name]
    base = {"classes": classes, "features": domains}
    public_query = f"SELECT {', '.join(quote(f) for f in features)} FROM unlabeled"
    errors = {(a, e): [] for a in ALGORITHMS for e in epsilons}
    choices = {e: Counter() for e in epsilons}  # (p, depth, secondary trees) chosen by RDT#
    rdt_depths = {e: Counter() for e in epsilons}
    folds = FOLDS[name]
    for seed in range(1, runs + 1):
        fold_errors = {key: [] for key in errors}
        # One 10% test set (the last tenth), or every tenth in turn (cross-validation).
        for fold in (range(10) if folds > 1 else [9]):
            n_labeled, n_unlabeled, n_test = split(db, features, n_rows, fraction, seed, fold)
            for eps in epsilons:
                sharp = {**base, "epsilon": eps, "seed": seed, "algorithm": "rdt#",
                         "public_query": public_query, "public_tables": ["unlabeled"], "rows": n_labeled}
                error, info = evaluate(db, features, sharp)
                fold_errors["RDT#", eps].append(error * n_test)
                s = info.get("rdt#", {})
                choices[eps][s.get("primary_trees"), info.get("depth"), s.get("secondary_trees")] += 1
                error, info = evaluate(db, features, {**base, "epsilon": eps, "seed": seed})
                fold_errors["RDT", eps].append(error * n_test)
                rdt_depths[eps][info.get("trees"), info.get("depth")] += 1
        tested = n_rows if folds > 1 else n_test
        for key, wrong in fold_errors.items():
            errors[key].append(sum(wrong) / tested)
    db.close()
    return {"features": len(features), "note": note, "sizes": (n_labeled, n_unlabeled, n_test),
            "errors": errors, "choices": choices, "rdt": rdt_depths}


def describe(counter):
    return ", ".join(f"{'/'.join(map(str, k))}" + (f" (×{c})" if len(counter) > 1 else "")
                     for k, c in counter.most_common())


def plot(out, name, title, epsilons, series):
    """Test error against ε with ±sd error bars; series: [(title, [(mean, sd) per ε])]."""
    return errorbar_plot(out / f"sharp_{name}.png", title, "epsilon", "test error (mean ± sd over runs)", epsilons,
                         series, ["set key top right", "set xrange [0.45:1.05]", "set yrange [0:*]"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"),
                        help="directory holding NAME/NAME.csv (default: ../shared/datasets)")
    parser.add_argument("--quick", action="store_true", help="2 runs, ε in {0.5, 1.0}")
    parser.add_argument("--runs", type=int, default=None, help="runs per setting (default 10, the paper's)")
    parser.add_argument("--datasets", default=",".join(SETTINGS), help="comma-separated subset of " + ",".join(SETTINGS))
    parser.add_argument("--out", default=str(ROOT / "results" / "sharp.md"))
    args = parser.parse_args()
    names, data_note = available(dataset_names(parser, args.datasets, SETTINGS), args.data)
    if not names:
        parser.error(data_note)
    runs = args.runs if args.runs else (2 if args.quick else 10)
    epsilons = QUICK_EPSILONS if args.quick else EPSILONS
    out_md = Path(args.out)
    out_md.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    lines = ["# RDT# against the labeled-only private RDT forest", ""]
    if data_note != FULL_DATA_NOTE:
        lines += [data_note[0].upper() + data_note[1:] + ".", ""]
    lines += [
             "Protocol of Jagannathan, Monteleoni and Pillaipakkamnatt (RDT#, Figures 6-8). Per run r "
             f"(r = 1..{runs}): shuffle the rows with seed r, hold out the last 10% as the test set; of the "
             "other 90%, the first fraction is the private labeled table and the rest the public unlabeled "
             "table (features only; its labels are never read). Both algorithms use the same split and model "
             "seed r. congressional_voting, whose 10% test set has only 43 rows, runs a 10-fold "
             "cross-validation per run instead (each tenth of the shuffled rows is the test set once; the "
             "labeled fraction comes from the other nine tenths), so every row is tested once per run. "
             "RDT#: `\"algorithm\": \"rdt#\"`, `public_query` over the unlabeled table, `\"rows\"` = the "
             "number of labeled rows (public, as in the paper's depth rule), all else default. RDT: the "
             "extension's default private forest on the labeled table alone. Every feature is categorical with "
             "its value list from the whole CSV. Error: mean ± sd over the runs of the test error (fraction "
             "of test rows mispredicted); Δ = RDT# − RDT (negative: RDT# better), ± sd of the paired "
             "differences.", ""]
    summary = []
    all_better = True
    timings = {}
    for name in names:
        t0 = time.monotonic()
        res = run_dataset(name, data_csv(args.data, name), runs, epsilons)
        timings[name] = time.monotonic() - t0
        print(f"{name}: {timings[name]:.1f} s", file=sys.stderr)
        n_lab, n_unlab, n_test = res["sizes"]
        if FOLDS[name] > 1:
            tested = n_test * FOLDS[name]
            test_note = (f"about {n_test} test rows per fold, 10-fold cross-validation per run (every row tested "
                         f"once per run); one row is {1 / tested:.4f} of a run's error")
        else:
            test_note = f"{n_test} test rows; one test row is {1 / n_test:.4f} of the error"
        lines += [f"## {name}", "",
                  f"{SETTINGS[name]:.0%} labeled: {n_lab} labeled, {n_unlab} unlabeled, {test_note}; "
                  f"{res['features']} features; {res['note']}.", "",
                  "| ε | RDT# error | RDT error | Δ (RDT# − RDT) | RDT# better | RDT# p / depth / secondary | "
                  "RDT trees / depth |",
                  "|---|---|---|---|---|---|---|"]
        better_all, series = True, {a: [] for a in ALGORITHMS}
        for eps in epsilons:
            s, r = res["errors"]["RDT#", eps], res["errors"]["RDT", eps]
            (ms, ss), (mr, sr) = mean_sd(s), mean_sd(r)
            md, sd = mean_sd([a - b for a, b in zip(s, r)])
            better = ms < mr
            better_all &= better
            series["RDT#"].append((ms, ss))
            series["RDT"].append((mr, sr))
            lines.append(f"| {eps:g} | {ms:.4f} ± {ss:.4f} | {mr:.4f} ± {sr:.4f} | {md:+.4f} ± {sd:.4f} | "
                         f"{'yes' if better else 'no'} | {describe(res['choices'][eps])} | "
                         f"{describe(res['rdt'][eps])} |")
        all_better &= better_all
        wins = sum(mean_sd(res["errors"]["RDT#", e])[0] < mean_sd(res["errors"]["RDT", e])[0] for e in epsilons)
        line = (f"**{name}**: RDT# has the lower mean test error at {wins} of {len(epsilons)} ε values"
                + (" (every ε)." if better_all else "."))
        summary.append(line)
        lines += ["", line, ""]
        if plot(out_md.parent, name, f"{name}, {SETTINGS[name]:.0%} labeled, {runs} runs", epsilons,
                [(a, series[a]) for a in ALGORITHMS]):
            lines += [f"![{name}: test error against ε](sharp_{name}.png)", ""]
    lines += ["## Summary", ""] + [f"- {s}" for s in summary]
    lines += ["", "RDT# better than the labeled-only private RDT at every ε on every data set: "
              + ("**yes**." if all_better else "**no**."), "",
              "Time per data set: " + ", ".join(f"{n} {t:.1f} s" for n, t in timings.items())
              + f"; total {time.monotonic() - started:.1f} s."]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    out_md.write_text(text)


if __name__ == "__main__":
    main()
