#!/usr/bin/python3
"""Issue 33: naive Bayes's automatic bins, a family chosen leaving one data set out.

naive_bayes with "bins": "auto" coarsens its tables to the divisor of 96 nearest sqrt(n^ eps / K)
(naive_bayes.c, contract 3b). The family here: c sqrt(n^ eps / K) / d^a; a = 1/2 is the shape of the
histogram optimum under the tables' noise of scale d/eps, and a = 0, c = 1 is today's rule.
This script trains naive Bayes at every fixed bin count of {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96} on each
classification set of ../shared/datasets with a numeric feature, at eps 0.25, 1 and 4 (stratified 80/20,
splits 1..10, 5 above 2000 training rows, 3 above 20000), then, for each held-out set, chooses (c, a) on the
others and reports its regret to the best bin count on the held-out set, beside today's rule.

Usage: /usr/bin/python3 scripts/nb_bins_lodo.py [--data DIR] [--grid JSON] [--out MD]
"""
import argparse
import itertools
import math
import statistics
from pathlib import Path

import learners_accuracy as la
from lodo import cached_grid, leave_one_out

ROOT = Path(__file__).resolve().parent.parent
EPS = (0.25, 1.0, 4.0)
BINS = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96]
C_GRID = [0.25, 0.35, 0.5, 0.7, 1, 1.4, 2, 2.8, 4]
A_GRID = [0, 0.25, 0.5, 0.75, 1]
TODAY = (1, 0)


def measure(data):
    out = {}
    for path in sorted(Path(data).iterdir()):
        csv = path / f"{path.name}.csv"
        if not csv.is_file():
            continue
        db = la.connect()
        features, domains, classes, n = la.load(db, csv, path.name)
        if not classes or not any(f["type"] == "numeric" for f in domains):
            db.close()
            continue
        common = la.task_options(domains, classes)
        train = int(n * 0.8)
        splits = 10 if train < 2000 else 5 if train < 20000 else 3
        for eps in EPS:
            acc = {b: [] for b in BINS}
            for s in range(1, splits + 1):
                la.split(db, s, False)
                for b in BINS:
                    o = dict(common, epsilon=eps, seed=s, algorithm="naive_bayes", bins=b)
                    acc[b].append(la.score(db, features, o, False))
            out[f"{path.name}|{eps}"] = {"n": train, "d": len(features), "K": len(classes),
                                         "acc": {b: statistics.mean(v) for b, v in acc.items()}}
            print(path.name, eps, " ".join(f"{b}:{statistics.mean(v):.3f}" for b, v in acc.items()), flush=True)
        db.close()
    return out


def bins(case, c, a):
    """The family's bin count: the divisor of 96 nearest (in ratio) c sqrt(n eps / K) / d^a, at least 2."""
    want = max(c * math.sqrt(case["n"] * case["eps"] / case["K"]) / case["d"] ** a, 1)
    return min(BINS, key=lambda b: abs(math.log(b / want)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--grid", default=str(ROOT / "build" / "nb_bins_grid.json"))
    ap.add_argument("--out", default=str(ROOT / "build" / "nb_bins_lodo.md"))
    args = ap.parse_args()
    grid = cached_grid(args.grid, lambda: measure(args.data))
    cases = []
    for key, v in grid.items():
        name, eps = key.split("|")
        cases.append({"set": name, "eps": float(eps), "n": v["n"], "d": v["d"], "K": v["K"],
                      "acc": {int(b): x for b, x in v["acc"].items()}})

    def regret(case, p):
        return max(case["acc"].values()) - case["acc"][bins(case, *p)]

    family = list(itertools.product(C_GRID, A_GRID))
    lines = ["| held-out set (d, K) | (c, a) chosen on the others | regret at ε 0.25, 1, 4 (points) | today's rule |",
             "|---|---|---|---|"]
    held, today, chosen = [], [], []
    for h, best, test in leave_one_out(cases, family, regret):
        test.sort(key=lambda c: c["eps"])
        chosen.append(best)
        r = [regret(c, best) for c in test]
        r0 = [regret(c, TODAY) for c in test]
        held += r
        today += r0
        lines.append(f"| {h} ({test[0]['d']}, {test[0]['K']}) | c {best[0]:g}, a {best[1]:g} | "
                     f"{', '.join(f'{100 * x:.1f}' for x in r)} | {', '.join(f'{100 * x:.1f}' for x in r0)} |")
    mode = max(set(chosen), key=chosen.count)
    lines += ["", f"Held-out regret to the best bin count: **{100 * statistics.mean(held):.2f} points**; today's "
                  f"rule {100 * statistics.mean(today):.2f}. Most folds chose c {mode[0]:g}, a {mode[1]:g} "
                  f"({chosen.count(mode)} of {len(chosen)})."]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
