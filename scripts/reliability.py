#!/usr/bin/python3
"""How far rdt_predict_proba's probabilities are from calibrated, measured with rdt_evaluate on
held-out rows: for each classification data set of ../shared/datasets, stratified 80/20 splits
seeded 1..runs (the protocol of scripts/learners_accuracy.py: public bounds and categories from
the whole file), a model trained at one epsilon on the 80 % and evaluated on the 20 % with
rdt_evaluate(model, query). Reported per algorithm: mean accuracy, log-loss, Brier score and
expected calibration error (ECE, 10 equal bins of the top class's probability) per data set, and
the reliability table pooled over every data set and run (rows, mean confidence, accuracy per bin).

Usage: /usr/bin/python3 scripts/reliability.py [--eps 1] [--runs 5] [--datasets adult,car]
           [--algorithms rdt,matrix,naive_bayes,boost,auto] [--data DIR] [--out results/reliability.md]
"""
import argparse
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learners_accuracy import CLASSIFICATION, EXTENSION, ROOT, load, split  # noqa: E402

# name -> options added to the schema (and epsilon).
ALGORITHMS = {
    "rdt": {"algorithm": "rdt"},
    "rdt-nonprivate": {"algorithm": "rdt", "epsilon": None},
    "matrix": {"noise": "matrix"},
    "naive_bayes": {"algorithm": "naive_bayes"},
    "boost": {"algorithm": "boost"},
    "auto": {"algorithm": "auto"},
}
BINS = 10


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--datasets", help="comma-separated subset")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    names = [n.strip() for n in args.datasets.split(",")] if args.datasets else CLASSIFICATION
    algos = [a.strip() for a in args.algorithms.split(",")]
    lines = []

    def emit(line=""):
        lines.append(line)
        print(line, flush=True)

    per_set = {a: {} for a in algos}             # algo -> data set -> metric -> [values]
    pooled = {a: [[0, 0.0, 0.0] for _ in range(BINS)] for a in algos}  # rows, sum conf, sum hits
    started = time.time()
    for name in names:
        db = sqlite3.connect(":memory:")
        db.enable_load_extension(True)
        db.load_extension(str(EXTENSION))
        features, domains, classes, _ = load(db, Path(args.data) / name / f"{name}.csv", name)
        train_query = "SELECT " + ", ".join('"' + f.replace('"', '""') + '"' for f in features) + ", y FROM train"
        for seed in range(1, args.runs + 1):
            split(db, seed, False)
            for a in algos:
                options = dict({"epsilon": args.eps, "seed": seed, "label": "y", "classes": classes,
                                "features": domains}, **ALGORITHMS[a])
                (doc,) = db.execute("SELECT rdt_evaluate(rdt_fit(?, ?), 'SELECT *, y AS label FROM test')",
                                    (json.dumps(options), train_query)).fetchone()
                e = json.loads(doc)
                m = per_set[a].setdefault(name, {"accuracy": [], "log_loss": [], "brier": [], "ece": []})
                for k in ("accuracy", "log_loss", "brier"):
                    m[k].append(e[k])
                m["ece"].append(e["calibration"]["ece"])
                for b, row in enumerate(e["calibration"]["bins"]):
                    if row["rows"]:
                        pooled[a][b][0] += row["rows"]
                        pooled[a][b][1] += row["confidence"] * row["rows"]
                        pooled[a][b][2] += row["accuracy"] * row["rows"]
        db.close()
        print(f"# {name} done ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)

    emit(f"# Reliability of the class probabilities (ε = {args.eps:g})")
    emit()
    emit(f"Made by `scripts/reliability.py --eps {args.eps:g} --runs {args.runs}`: stratified 80/20 splits "
         f"(seeds 1..{args.runs}) of each data set, the model trained at ε = {args.eps:g} with default options "
         "on the 80 % and scored with `rdt_evaluate(model, query)` on the 20 %. The confidence of a row is "
         "the top class's probability (`rdt_predict_proba`); ECE is the expected calibration error over "
         f"{BINS} equal bins of it (Σ rows_b / N · |accuracy_b − confidence_b|). `rdt-nonprivate` is the "
         "same forest with `\"epsilon\": null` (exact counts), for comparison only.")
    emit()
    emit("## Pooled reliability table (every data set and run)")
    emit()
    emit("Each cell: rows in the bin, then mean confidence → observed accuracy.")
    emit()
    emit("| confidence bin | " + " | ".join(algos) + " |")
    emit("|---|" + "---|" * len(algos))
    for b in range(BINS):
        cells = []
        for a in algos:
            n, conf, hit = pooled[a][b]
            cells.append(f"{n}: {conf / n:.2f} → {hit / n:.2f}" if n else "–")
        emit(f"| {b / BINS:.1f}–{(b + 1) / BINS:.1f} | " + " | ".join(cells) + " |")
    ece_row = []
    for a in algos:
        total = sum(p[0] for p in pooled[a])
        ece = sum(abs(p[2] - p[1]) for p in pooled[a]) / total if total else float("nan")
        ece_row.append(f"**{ece:.3f}**")
    emit("| pooled ECE | " + " | ".join(ece_row) + " |")
    emit()
    emit("## Per data set (mean over the runs)")
    emit()
    emit("accuracy / log-loss / Brier / ECE")
    emit()
    emit("| data set | " + " | ".join(algos) + " |")
    emit("|---|" + "---|" * len(algos))
    for name in names:
        cells = []
        for a in algos:
            m = per_set[a].get(name)
            cells.append(" / ".join(f"{statistics.mean(m[k]):.3f}" for k in ("accuracy", "log_loss", "brier", "ece"))
                         if m else "–")
        emit(f"| {name} | " + " | ".join(cells) + " |")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
