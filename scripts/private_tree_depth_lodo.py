#!/usr/bin/python3
"""Issue 33: the private tree's automatic depth, chosen leaving one data set out.

private_tree's "depth": "auto" grows floor(log2(n^ eps / (c K^a))) levels (1..8): each leaf expects
c K^a / eps rows. This script trains the private tree at every fixed depth 1..8 on every classification set
of ../shared/datasets at eps 0.25, 1 and 4 (the protocol of scripts/auto_transfer.py: stratified 80/20,
splits 1..10, 5 above 2000 training rows, 3 above 20000; eps x 0.95, the share an automatic depth leaves after
its row count), then, for each held-out set, chooses (c, a) on the other sets (the mean, over their (set, eps)
pairs, of the best depth's accuracy minus the accuracy at the depth the rule gives for n = 0.95 x the training
rows) and reports what that choice does on the held-out set, beside the rule 8 K / eps.

Usage: /usr/bin/python3 scripts/private_tree_depth_lodo.py [--data DIR] [--grid JSON] [--out MD]
  --grid: a cache of the per-depth accuracies (written when absent, read when present).
"""
import argparse
import itertools
import statistics
from pathlib import Path

import learners_accuracy as la
from lodo import cached_grid, leave_one_out

ROOT = Path(__file__).resolve().parent.parent
EPS = (0.25, 1.0, 4.0)
DEPTHS = range(1, 9)
C_GRID = [1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
A_GRID = [0, 0.5, 1]
TODAY_BEFORE = (8, 1)


def measure(data):
    """{"set|eps": {n, d, K, acc: {depth: mean test accuracy}}} over the protocol's splits."""
    out = {}
    for path in sorted(Path(data).iterdir()):
        csv = path / f"{path.name}.csv"
        if not csv.is_file():
            continue
        db = la.connect()
        features, domains, classes, n = la.load(db, csv, path.name)
        if not classes:
            db.close()
            continue
        common = la.task_options(domains, classes)
        train = int(n * 0.8)
        splits = 10 if train < 2000 else 5 if train < 20000 else 3
        for eps in EPS:
            acc = {d: [] for d in DEPTHS}
            for s in range(1, splits + 1):
                la.split(db, s, False)
                for d in DEPTHS:
                    o = dict(common, epsilon=eps * 0.95, seed=s, algorithm="private_tree", depth=d)
                    acc[d].append(la.score(db, features, o, False))
            out[f"{path.name}|{eps}"] = {"n": train, "d": len(features), "K": len(classes),
                                         "acc": {d: statistics.mean(v) for d, v in acc.items()}}
            print(path.name, eps, " ".join(f"{d}:{statistics.mean(v):.3f}" for d, v in acc.items()), flush=True)
        db.close()
    return out


def depth(case, c, a):
    """The rule's depth for a case: floor(log2(n eps_m / (c K^a))) in 1..8 (private_tree.c pt_auto_depth)."""
    leaves = case["n"] * case["eps"] * 0.95 / (c * case["K"] ** a)
    d = 1
    while d < 8 and leaves >= 2 ** (d + 1):
        d += 1
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--grid", default=str(ROOT / "build" / "private_tree_depth_grid.json"))
    ap.add_argument("--out", default=str(ROOT / "results" / "private_tree_depth.md"))
    args = ap.parse_args()
    grid = cached_grid(args.grid, lambda: measure(args.data))
    cases = []
    for key, v in grid.items():
        name, eps = key.split("|")
        cases.append({"set": name, "eps": float(eps), "n": 0.95 * v["n"], "K": v["K"],
                      "acc": {int(d): x for d, x in v["acc"].items()}})

    def regret(case, p):
        return max(case["acc"].values()) - case["acc"][depth(case, *p)]

    family = list(itertools.product(C_GRID, A_GRID))
    lines = ["# The private tree's automatic depth, chosen leaving one data set out (issue 33)", "",
             "Written by `/usr/bin/python3 scripts/private_tree_depth_lodo.py`. The private tree trained at every "
             "fixed depth 1..8 on each classification set at ε = 0.25, 1 and 4 (0.95 ε, the share an automatic "
             "depth leaves after its row count; stratified 80/20, splits 1..10, 5 above 2000 training rows, 3 above "
             "20000). The rule: floor(log2(n̂·ε/(c·K^a))) levels, each leaf expecting c·K^a/ε rows; "
             f"c in {C_GRID}, a in {A_GRID}. Regret: the best depth's mean accuracy minus the rule's depth's "
             "(n̂ = 0.95 × the training rows). For each held-out set, (c, a) is chosen on the other sets.", "",
             "| held-out set (K) | (c, a) chosen on the others | regret at ε 0.25, 1, 4 (points) | "
             "rule 8K/ε (the previous one) |", "|---|---|---|---|"]
    held, before, chosen = [], [], []
    for h, best, test in leave_one_out(cases, family, regret):
        test.sort(key=lambda c: c["eps"])
        chosen.append(best)
        r = [regret(c, best) for c in test]
        r0 = [regret(c, TODAY_BEFORE) for c in test]
        held += r
        before += r0
        lines.append(f"| {h} ({test[0]['K']}) | c {best[0]:g}, a {best[1]:g} | "
                     f"{', '.join(f'{100 * x:.1f}' for x in r)} | {', '.join(f'{100 * x:.1f}' for x in r0)} |")
    mode = max(set(chosen), key=chosen.count)
    lines += ["", f"Held-out regret of the depth chosen on the other sets: **{100 * statistics.mean(held):.2f} "
                  f"points**; the rule 8K/ε: {100 * statistics.mean(before):.2f} points.", "",
              "Regret of fixed rules over all sets (points): " +
              ", ".join(f"c {c:g}, a {a:g}: {100 * statistics.mean(regret(x, (c, a)) for x in cases):.2f}"
                        for c, a in [(8, 1), (4, 1), (8, 0.5), (8, 0), (12, 0), (16, 0)]) + ".", "",
              f"private_tree.c takes the choice most folds made: c {mode[0]:g}, a {mode[1]:g} "
              f"({chosen.count(mode)} of {len(chosen)} folds), a leaf size that does not grow with the classes."]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
