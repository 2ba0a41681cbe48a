#!/usr/bin/python3
"""Defaults against fixed depths: RDT with only epsilon, classes and features (automatic depth from
a noisy row count), with the public "rows" hint, and with fixed depths 4..12, on the paper data
sets at eps 0.1 and 1. 90/10 split, 10 runs (seeds 1..10), 10 trees, threshold vote.

Usage: /usr/bin/python3 scripts/defaults.py [--data DIR] [--runs N]
"""
import argparse
from pathlib import Path

import paper_accuracy as pa

DATASETS = ["banknote", "congressional_voting", "mushroom", "adult"]
DEPTHS = [4, 6, 8, 10, 12]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"))
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print("| data set | ε | defaults (depths chosen) | with rows | " + " | ".join(f"depth {h}" for h in DEPTHS) + " |")
    print("|---|---|---|---|" + "---|" * len(DEPTHS))
    for name in DATASETS:
        import sqlite3
        db = sqlite3.connect(":memory:")
        db.enable_load_extension(True)
        db.load_extension(str(pa.EXTENSION))
        features, domains, classes = pa.load(db, Path(args.data) / name / f"{name}.csv")
        (n,) = db.execute("SELECT count(*) FROM data").fetchone()
        res = {}
        for seed in range(1, args.runs + 1):
            pa.split(db, n, seed)
            for eps in (0.1, 1.0):
                for cfg in ["auto", "rows"] + DEPTHS:
                    o = {"epsilon": eps, "classes": classes, "features": domains, "seed": seed}
                    if cfg == "rows":
                        o["rows"] = round(0.9 * n)
                    elif cfg != "auto":
                        o["depth"] = cfg
                    errors, m, info = pa.evaluate(db, features, o)
                    r = res.setdefault((eps, cfg), [0, 0, set()])
                    r[0] += errors
                    r[1] += m
                    r[2].add(info["depth"])
        for eps in (0.1, 1.0):
            def err(cfg):
                e, m, _ = res[(eps, cfg)]
                return f"{100 * e / m:.2f}"
            chosen = sorted(res[(eps, "auto")][2])
            print(f"| {name} | {eps:g} | {err('auto')} ({chosen[0]}{'–' + str(chosen[-1]) if len(chosen) > 1 else ''}) | "
                  f"{err('rows')} | " + " | ".join(err(h) for h in DEPTHS) + " |")


if __name__ == "__main__":
    main()
