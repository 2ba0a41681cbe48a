#!/usr/bin/python3
"""Reproduce Table 1 of Bojarski et al. (dpRFMV and dpRFTA) with the rdt extension.

Protocol of the paper: a random 90/10 train/test split per run, epsilon = 1000 / n_train,
10 runs, the paper's k (trees) and h (depth); the error is the mean test error over all runs
with a binomial symmetric 95% interval over all test rows of all runs.
The paper rows use the extension's default split rules ("splits": "reachable", default
"categorical") unless --splits (global is the paper's rule) or --categorical say otherwise.
A last row per data set trains at epsilon = 1 with the extension's defaults.

Usage: /usr/bin/python3 scripts/paper_accuracy.py [--data DIR] [--quick | --runs N] [--datasets a,b]
                                                  [--splits global|reachable]
                                                  [--categorical subset|one_vs_rest] [--keep-trees S]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "dist" / "rdt"

# dataset -> rule -> (k, h, paper error %, paper 95% half-width)
PAPER = {
    "banknote": {"majority": (21, 11, 5.44, 1.20), "threshold": (7, 12, 5.22, 1.18)},
    "congressional_voting": {"majority": (15, 9, 8.10, 2.56), "threshold": (15, 9, 6.90, 2.38)},
    "mushroom": {"majority": (3, 13, 4.69, 0.46), "threshold": (3, 15, 4.16, 0.43)},
    "adult": {"majority": (3, 11, 22.18, 0.45), "threshold": (7, 11, 21.72, 0.45)},
}
PAPER_NAME = {"majority": "dpRFMV", "threshold": "dpRFTA"}


TESTS_DATA = ROOT / "tests" / "data"


def data_csv(data_dir, name):
    """NAME.csv under data_dir (the ../shared/datasets layout: NAME/NAME.csv), else the small copy
    shipped in tests/data (flat: NAME.csv); None when neither exists."""
    for path in (Path(data_dir) / name / f"{name}.csv", TESTS_DATA / f"{name}.csv"):
        if path.exists():
            return path
    return None


# available()'s note when every data set came from ../shared/datasets.
FULL_DATA_NOTE = "data from ../shared/datasets"


def available(names, data_dir):
    """(the names whose CSV data_csv finds, a note on where the data came from and what was skipped)."""
    found = [n for n in names if data_csv(data_dir, n)]
    skipped = [n for n in names if n not in found]
    note = FULL_DATA_NOTE if Path(data_dir).exists() else "data from tests/data (../shared/datasets absent)"
    return found, note + (f"; skipped, no CSV: {', '.join(skipped)}" if skipped else "")


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def as_number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# Data sets whose empty categorical cells stand for a value, not for a missing one. UCI's
# house-votes-84.names: "?" "does not mean that the value of the attribute is unknown. It means
# simply, that the value is not 'yea' or 'nay'"; the CSV left those cells empty, and loading them
# as NULL would send them to the `other` bucket of every split instead of a category of their own.
EMPTY_IS_VALUE = {"congressional_voting": "?"}


def load(db, csv_path):
    """Load the CSV into table `data`; return (feature names, feature domains, classes)."""
    empty_value = EMPTY_IS_VALUE.get(Path(csv_path).stem)
    with open(csv_path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [row for row in reader if row]
    if empty_value is not None:  # features only: an empty label stays a dropped row
        rows = [[c if c != "" else empty_value for c in row[:-1]] + row[-1:] for row in rows]
    assert header[-1] == "label", f"{csv_path}: last column must be 'label'"
    columns = list(zip(*rows))
    features, domains, converters = header[:-1], [], []
    for name, cells in zip(features, columns):
        present = [c for c in cells if c != ""]
        numbers = [as_number(c) for c in present]
        if present and all(n is not None for n in numbers):
            lo, hi = min(numbers), max(numbers)  # public bounds, as in the paper
            domains.append({"name": name, "type": "numeric", "min": lo, "max": max(hi, lo + 1)})
            converters.append((float, "REAL"))
        else:
            domains.append({"name": name, "type": "categorical", "values": sorted(set(present))})
            converters.append((str, "TEXT"))
    labels = set(columns[-1]) - {""}
    if all(l.lstrip("-").isdigit() for l in labels):
        converters.append((int, "INTEGER"))
        classes = sorted(int(l) for l in labels)
    else:
        converters.append((str, "TEXT"))
        classes = sorted(labels)
    decls = ", ".join(f"{quote(n)} {t}" for n, (_, t) in zip(header, converters))
    db.execute(f"CREATE TABLE data(rid INTEGER PRIMARY KEY, {decls})")
    marks = ", ".join("?" * (len(header) + 1))
    db.executemany(
        f"INSERT INTO data VALUES ({marks})",
        ([i] + [conv(c) if c != "" else None for (conv, _), c in zip(converters, row)]
         for i, row in enumerate(rows)))
    return features, domains, classes


def split(db, n_rows, seed):
    """Fill tables train and test with a random 90/10 split; return (n_train, n_test)."""
    ids = list(range(n_rows))
    random.Random(seed).shuffle(ids)
    n_train = round(0.9 * n_rows)
    db.execute("DROP TABLE IF EXISTS part")
    db.execute("CREATE TABLE part(rid INTEGER PRIMARY KEY, test INTEGER)")
    db.executemany("INSERT INTO part VALUES (?, ?)",
                   ((rid, int(i >= n_train)) for i, rid in enumerate(ids)))
    for table, test in (("train", 0), ("test", 1)):
        db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute(f"CREATE TABLE {table} AS SELECT data.* FROM data JOIN part USING (rid) "
                   f"WHERE part.test = {test} ORDER BY rid")
    return n_train, n_rows - n_train


def dataset_names(parser, text, known):
    """The comma-separated data sets of --datasets, each one of `known` (else a usage error)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error("unknown data set(s): " + ", ".join(unknown))
    return names


def evaluate(db, features, options):
    """Train on `train`, test on `test`; return (errors, n_test, rdt_info of the model)."""
    args = ", ".join(quote(f) for f in features)
    (model,) = db.execute(f"SELECT rdt_train(?, label, {args}) FROM train",
                          (json.dumps(options),)).fetchone()
    # IS NOT rather than <>: a NULL prediction would count as an error instead of vanishing.
    errors, n = db.execute(f"SELECT total(rdt_predict(?, {args}) IS NOT label), count(*) "
                           f"FROM test", (model,)).fetchone()
    (info,) = db.execute("SELECT rdt_info(?)", (model,)).fetchone()
    return int(errors), n, json.loads(info)


def pooled(errors, n):
    p = errors / n
    return 100 * p, 100 * 1.96 * math.sqrt(p * (1 - p) / n)


def verdict(ours, ours_ci, paper, paper_ci):
    """Within when the difference is inside its 95% interval, else better (lower) or worse."""
    if abs(ours - paper) <= math.hypot(ours_ci, paper_ci):
        return "within"
    return "better" if ours < paper else "worse"


def run_dataset(name, csv_path, runs, structure):
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(str(EXTENSION))
    features, domains, classes = load(db, csv_path)
    (n_rows,) = db.execute("SELECT count(*) FROM data").fetchone()
    n_train = round(0.9 * n_rows)
    base = {"classes": classes, "features": domains}
    settings = [(rule, {**base, "epsilon": 1000 / n_train, "trees": k, "depth": h, "vote": rule,
                        **structure}, True) for rule, (k, h, _, _) in PAPER[name].items()]
    settings.append(("default", {**base, "algorithm": "rdt", "epsilon": 1.0}, False))
    totals = {rule: [0, 0, None] for rule, _, _ in settings}
    for seed in range(1, runs + 1):
        split(db, n_rows, seed)
        for rule, options, seeded in settings:
            errors, n, info = evaluate(db, features, {**options, "seed": seed} if seeded else options)
            totals[rule][0] += errors
            totals[rule][1] += n
            totals[rule][2] = info
    rows = []
    for rule, options, _ in settings:
        errors, n, info = totals[rule]
        ours, ours_ci = pooled(errors, n)
        eps = options["epsilon"]
        row = [name, str(n_train), f"{eps:.4g}" if eps < 1 else f"{eps:g}",
               PAPER_NAME.get(rule, f"default ({info['vote']})"),
               str(info["trees"]), str(info["depth"]),
               f"{info['splits']}, {info.get('categorical', '?')}", str(runs),
               f"{ours:.2f} ± {ours_ci:.2f}"]
        if rule in PAPER[name]:
            _, _, paper, paper_ci = PAPER[name][rule]
            row += [f"{paper:.2f} ± {paper_ci:.2f}", verdict(ours, ours_ci, paper, paper_ci)]
        else:
            row += ["—", "—"]
        rows.append(row)
    db.close()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"),
                        help="directory holding NAME/NAME.csv (default: ../shared/datasets)")
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 10")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per setting (default 10, the paper's; more gives a steadier mean)")
    parser.add_argument("--datasets", default=",".join(PAPER),
                        help="comma-separated subset of " + ",".join(PAPER))
    parser.add_argument("--splits", choices=["global", "reachable"], default="reachable",
                        help="split rule of the paper rows (default: reachable, the extension default; global is the paper rule)")
    parser.add_argument("--categorical", choices=["subset", "one_vs_rest"],
                        help="categorical split of the paper rows (default: the extension's)")
    parser.add_argument("--keep-trees", type=float, default=None,
                        help='"keep_trees" for the paper rows: the share of trees that vote (default: all)')
    parser.add_argument("--out", help="also write the Markdown table to this file")
    args = parser.parse_args()
    names = dataset_names(parser, args.datasets, PAPER)
    runs = args.runs if args.runs else (3 if args.quick else 10)
    structure = {"splits": args.splits}
    if args.categorical:
        structure["categorical"] = args.categorical
    if args.keep_trees is not None:
        structure["keep_trees"] = args.keep_trees

    header = ["dataset", "n_train", "ε", "rule", "k", "h", "splits, categorical", "runs",
              "test error % (ours)", "paper", "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    started = time.monotonic()
    for name in names:
        t0 = time.monotonic()
        for row in run_dataset(name, Path(args.data) / name / f"{name}.csv", runs, structure):
            lines.append("| " + " | ".join(row) + " |")
        print(f"{name}: {time.monotonic() - t0:.1f} s", file=sys.stderr)
    lines += ["", f"Error: mean over {runs} runs (seeds 1..{runs} for the split and the model) "
              "± binomial 95% half-width over all test rows. Verdict: within when "
              "|ours − paper| ≤ √(ci_ours² + ci_paper²), else better/worse. "
              "The default rows use unseeded models.",
              f"Total time: {time.monotonic() - started:.1f} s."]
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.out:
        Path(args.out).write_text(table)


if __name__ == "__main__":
    main()
