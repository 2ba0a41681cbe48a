#!/usr/bin/python3
"""Defaults against fixed configurations: RDT with only epsilon, classes and features (automatic
depth from a noisy row count, 10 trees) against a grid of fixed depths and tree counts. 90/10
split, seeds 1..runs, threshold vote (the default).

Without --all: the four paper data sets at eps 0.1 and 1, depths 4..12, 10 trees (the table in docs/results.md).
With --all: every classification data set of the reproduction at eps 0.1 .. 5, depths 1..14 with
10 trees or even depths 2..12 with 32 trees, reporting the gap between the defaults and the best grid point (issue 10's
3-point rule).

With --holdout N (and --all): the defaults and each cell's chosen best grid point measured again on
N fresh seeds, since the minimum over 20 noisy estimates flatters the best grid point.

Usage: /usr/bin/python3 scripts/defaults.py [--data DIR] [--runs N] [--all [--holdout N]] [--datasets a,b]
                                            [--out FILE]
"""
import argparse
import sqlite3
from pathlib import Path

import paper_accuracy as pa

PAPER_SETS = ["banknote", "congressional_voting", "mushroom", "adult"]
ALL_SETS = ["banknote", "congressional_voting", "mushroom", "adult", "balance_scale", "car",
            "credit_default", "iris", "nursery", "wall_following"]


def measure(data, name, seeds, plan):
    """Test errors over `seeds` of every configuration plan[eps] ("auto", "rows" or (depth, trees))."""
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(str(pa.EXTENSION))
    features, domains, classes = pa.load(db, Path(data) / name / f"{name}.csv")
    (n,) = db.execute("SELECT count(*) FROM data").fetchone()
    res = {}
    for seed in seeds:
        pa.split(db, n, seed)
        for eps, configs in plan.items():
            for cfg in configs:
                o = {"algorithm": "rdt", "epsilon": eps, "classes": classes, "features": domains, "seed": seed}
                if cfg == "rows":
                    o["rows"] = round(0.9 * n)
                elif cfg != "auto":
                    o["depth"], o["trees"] = cfg
                errors, m, info = pa.evaluate(db, features, o)
                r = res.setdefault((eps, cfg), [0, 0, set()])
                r[0] += errors
                r[1] += m
                r[2].add(info["depth"])
    return res


def error_pct(res, eps, cfg):
    """Test error % of configuration cfg at eps in a measure() result."""
    errors, rows, _ = res[(eps, cfg)]
    return 100 * errors / rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--holdout", type=int, default=0,
                        help="with --all: measure the defaults and each cell's chosen best grid point "
                             "again on this many fresh seeds (after 1..runs), free of selection bias")
    parser.add_argument("--datasets", help="comma-separated subset of the data sets")
    parser.add_argument("--out", help="also write the Markdown table to this file")
    args = parser.parse_args()
    lines = []

    def emit(line):
        lines.append(line)
        print(line, flush=True)

    if args.all:
        sets, epsilons = ALL_SETS, (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
        grid = [(h, 10) for h in range(1, 15)] + [(h, 32) for h in (2, 4, 6, 8, 10, 12)]
    else:
        sets, epsilons = PAPER_SETS, (0.1, 1.0)
        grid = [(h, 10) for h in (4, 6, 8, 10, 12)]
    if args.datasets:
        sets = [n.strip() for n in args.datasets.split(",") if n.strip()]
    if args.all:
        held = (f" held out ({args.holdout} runs): defaults | best | gap |" if args.holdout else "")
        emit("| data set | ε | defaults (depths chosen) | best grid point (depth, trees) | gap |" + held)
        emit("|---|---|---|---|---|" + "---|---|---|" * bool(args.holdout))
    else:
        emit("| data set | ε | defaults (depths chosen) | with rows | "
             + " | ".join(f"depth {h}" for h, _ in grid) + " |")
        emit("|---|---|---|---|" + "---|" * len(grid))
    worst, behind, held_behind = 0.0, 0, 0
    for name in sets:
        res = measure(args.data, name, range(1, args.runs + 1), {e: ["auto", "rows"] + grid for e in epsilons})
        best_of = {e: min(grid, key=lambda c, e=e: error_pct(res, e, c)) for e in epsilons}
        fresh = {}
        if args.all and args.holdout:
            fresh = measure(args.data, name, range(args.runs + 1, args.runs + args.holdout + 1),
                            {e: ["auto", best_of[e]] for e in epsilons})
        for eps in epsilons:
            def err(cfg, res=res):
                return error_pct(res, eps, cfg)
            chosen = sorted(res[(eps, "auto")][2])
            depths = f"{chosen[0]}{'–' + str(chosen[-1]) if len(chosen) > 1 else ''}"
            if args.all:
                best = best_of[eps]
                gap = err("auto") - err(best)
                worst = max(worst, gap)
                behind += gap > 3
                held = ""
                if fresh:
                    d, b = err("auto", fresh), err(best, fresh)
                    held = f" {d:.2f} | {b:.2f} | {d - b:+.2f} |"
                    held_behind += d - b > 3
                emit(f"| {name} | {eps:g} | {err('auto'):.2f} ({depths}) | {err(best):.2f} {best} | {gap:+.2f} |"
                     + held)
            else:
                emit(f"| {name} | {eps:g} | {err('auto'):.2f} ({depths}) | {err('rows'):.2f} | "
                     + " | ".join(f"{err(c):.2f}" for c in grid) + " |")
    if args.all:
        emit(f"\nlargest gap: {worst:.2f} points; cells more than 3 points behind: {behind}"
             + (f" ({held_behind} on the held-out seeds)" if args.holdout else ""))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
