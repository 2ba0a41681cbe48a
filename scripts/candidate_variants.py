#!/usr/bin/python3
"""Issue 33: variants of auto's candidates measured against the learner as it is, each by one question.

  tree-backoff  private_tree's leaf readout: today's (the leaf's noisy counts clamped at 0 plus half the
                leaf noise scale per class, toward uniform) against the same pseudo-mass a * C * b
                (b = 1 / eps_leaf; a in 0.5, 1, 2, 4) toward the parent node's readout, recursively
                (parent counts: the sum of its children's noisy counts). Post-processing of the release.
  nb-shrink     naive_bayes's tables: today's Bayes readout against each feature's table shrunk toward
                the pooled bin frequencies by the James-Stein factor max(0, 1 - (K-1)(B-1) v / S),
                S the squared deviations of the noisy counts from independence, v a cell's noise
                variance. Post-processing of the release.
  matrix-depth  the matrix forest's depth (its learner fixes 4) at 1 to 6 ("noise": "matrix", 4 bins,
                the same seed) on the sets with d <= 8, where auto holds it, beside the private tree.
  boost-bins    regression boosting's bins: "auto" (the divisor of 120 nearest sqrt(n^ eps / d))
                against fixed 10, 30, 60 and 120 bins.

Protocol (scripts/auto_transfer.py's loading): stratified 80/20 splits, seeds 1..R (20 at or below 2000
training rows, 6 below 20000, 2 above; --runs overrides the first), every call seeded with its split's
seed, so a variant and today's learner see the same split and, for the readouts, the same release.
Prints per set and epsilon the mean test accuracy (regression: MSE) and the paired difference to today's
with its standard error. The readouts are decoded with examples/rdt_reader.py (the independent reader).

Usage: /usr/bin/python3 scripts/candidate_variants.py QUESTION [--data DIR] [--datasets a,b]
           [--eps 0.25,1,4] [--runs N]
"""
import argparse
import math
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
import auto_transfer as at  # noqa: E402
import learners_accuracy as la  # noqa: E402
import rdt_reader as rr  # noqa: E402

BACKOFF = [0.5, 1.0, 2.0, 4.0]
DEPTHS = [1, 2, 3, 4, 5, 6]
BOOST_BINS = [10, 30, 60, 120]
REGRESSION_SETS = ["parkinsons_telemonitoring", "cps1985", "diabetes", "house_prices", "ozone", "servo"]
MATRIX_SETS = ["car", "nursery", "chile", "banknote", "balance_scale", "iris", "wells", "titanic"]  # d <= 8


def runs_for(train_rows, small):
    return small if train_rows <= 2000 else 6 if train_rows <= 20000 else 2


def paired(xs, base):
    d = [x - y for x, y in zip(xs, base)]
    se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else 0.0
    return statistics.mean(d), se


# -- private_tree's leaves ----------------------------------------------------------------------------------

def tree_leaves(blob):
    """(model, tree, the 2^D leaves' noisy counts, eps_leaf) of a private_tree BLOB."""
    m = rr.LearnerModel(blob=blob)
    r = rr.decode_learner_blob(blob)["payload"]
    r.u32(), r.u32(), r.u32()
    depth = r.u32()
    r.u32(), r.u64()
    eps_leaf = rr._eps(r.u64())
    classes = r.u32()
    r.u32()
    for _ in range((1 << depth) - 1):
        r.u32(), r.u32()
    return m, m.impl, [[r.i64() for _ in range(classes)] for _ in range(1 << depth)], eps_leaf


def backoff_readout(leaves, depth, classes, mass):
    """Each node's readout: its clamped counts plus `mass` toward its parent's readout (uniform at the root)."""
    first = (1 << depth) - 1
    counts = [None] * (2 * first + 1)
    for j, leaf in enumerate(leaves):
        counts[first + j] = [float(v) for v in leaf]
    for i in range(first - 1, -1, -1):
        counts[i] = [a + b for a, b in zip(counts[2 * i + 1], counts[2 * i + 2])]
    p = [None] * len(counts)
    for i, c in enumerate(counts):
        prior = [1.0 / classes] * classes if i == 0 else p[(i - 1) // 2]
        c = [v if v > 0 else 0.0 for v in c]
        total = sum(c) + mass
        p[i] = [(c[k] + mass * prior[k]) / total if total > 0 else prior[k] for k in range(classes)]
    return p[first:]


def tree_leaf_of(m, tree, xs):
    node = 0
    for _ in range(tree.depth_eff):
        f, t = tree.split[node]
        ft = tree.features[f]
        b = rr._learn_bin(ft, tree.bins, xs[f])
        node = 2 * node + (1 if (b == t if ft["type"] != "numeric" else b <= t) else 2)
    return node - ((1 << tree.depth_eff) - 1)


def argmax(p):
    return max(range(len(p)), key=lambda k: (p[k], -k))


def tree_backoff(db, features, common, test, seed, eps):
    blob = la.train(db, features, dict(common, algorithm="private_tree", epsilon=eps, seed=seed))
    m, tree, leaves, eps_leaf = tree_leaves(blob)
    tables = {"today": tree.proba}
    for a in BACKOFF:
        tables[f"parent {a:g}"] = backoff_readout(leaves, tree.depth_eff, tree.C, a * tree.C / eps_leaf)
    hits = dict.fromkeys(tables, 0)
    for row in test:
        xs = rr.clean_row(m.features, m.codes, list(row[:-1]))
        leaf = tree_leaf_of(m, tree, xs)
        for k, table in tables.items():
            hits[k] += m.classes[argmax(table[leaf])] == row[-1]
    return {k: v / len(test) for k, v in hits.items()}


# -- naive Bayes's tables -----------------------------------------------------------------------------------

def nb_counts(nb, blob):
    """The noisy counters of a naive_bayes model as the reader decoded them (re-read from the payload)."""
    r = rr.decode_learner_blob(blob)["payload"]
    version = r.u32()
    if version == 5:
        r.u64()
        version = r.u32()
    r.u32()
    if version in (2, 4):
        r.u32()
    r.u32(), r.u64()
    eps_tables = rr._eps(r.u64())
    r.u32(), r.u32()
    total = nb.offset[-1] + nb.C * nb.n_bins[-1] if nb.offset else nb.C
    return [r.i64() for _ in range(total)], eps_tables


def nb_shrunk_logp(nb, counts, eps_tables):
    d, C = len(nb.features), nb.C
    scale = d / eps_tables  # a table cell's discrete Laplace scale (naive_bayes.c contract 3c)
    pseudo = 0.5 * scale
    var = 2 * scale * scale
    logp = list(nb.logp)
    for f in range(d):
        B = nb.n_bins[f]
        t = [[float(counts[nb.offset[f] + k * B + b]) for b in range(B)] for k in range(C)]
        rows = [sum(r) for r in t]
        n = sum(rows)
        col = [sum(t[k][b] for k in range(C)) for b in range(B)]
        s = sum((t[k][b] - rows[k] * col[b] / n) ** 2 for k in range(C) for b in range(B)) if n > 0 else 0.0
        lam = max(0.0, 1 - (C - 1) * (B - 1) * var / s) if s > 0 else 0.0
        q = [max(c, 0.0) + pseudo for c in col]
        q = [v / sum(q) for v in q]
        for k in range(C):
            at_ = nb.offset[f] + k * B
            for b in range(B):
                logp[at_ + b] = math.log(lam * math.exp(nb.logp[at_ + b]) + (1 - lam) * q[b])
    return logp


def nb_class(nb, logp, xs):
    """The reader's own naive Bayes prediction with the log-probabilities `logp` in place of its own."""
    own, nb.logp = nb.logp, logp
    try:
        return argmax(nb.predict(xs))
    finally:
        nb.logp = own


def nb_shrink(db, features, common, test, seed, eps):
    blob = la.train(db, features, dict(common, algorithm="naive_bayes", epsilon=eps, seed=seed))
    m = rr.LearnerModel(blob=blob)
    nb = m.impl
    counts, eps_tables = nb_counts(nb, blob)
    shrunk = nb_shrunk_logp(nb, counts, eps_tables)
    hits = {"today": 0, "shrunk": 0}
    for row in test:
        xs = rr.clean_row(m.features, m.codes, list(row[:-1]))
        hits["today"] += m.classes[nb_class(nb, nb.logp, xs)] == row[-1]
        hits["shrunk"] += m.classes[nb_class(nb, shrunk, xs)] == row[-1]
    return {k: v / len(test) for k, v in hits.items()}


# -- options ------------------------------------------------------------------------------------------------

def matrix_depth(db, features, common, test, seed, eps):
    out = {"today": la.evaluate(db, features, la.train(db, features, dict(
        common, algorithm="matrix_forest", epsilon=eps, seed=seed)), False)}
    for depth in DEPTHS:
        model = la.train(db, features, dict(common, noise="matrix", depth=depth, bins=4, epsilon=eps, seed=seed))
        out[f"depth {depth}"] = la.evaluate(db, features, model, False)
    out["private_tree"] = la.evaluate(db, features, la.train(db, features, dict(
        common, algorithm="private_tree", epsilon=eps, seed=seed)), False)
    return out


def boost_bins(db, features, common, test, seed, eps):
    out = {"today": la.evaluate(db, features, la.train(db, features, dict(
        common, algorithm="boost", epsilon=eps, seed=seed)), True)}
    for bins in BOOST_BINS:
        model = la.train(db, features, dict(common, algorithm="boost", bins=bins, epsilon=eps, seed=seed))
        out[f"{bins} bins"] = la.evaluate(db, features, model, True)
    return out


QUESTIONS = {"tree-backoff": (tree_backoff, None, False), "nb-shrink": (nb_shrink, None, False),
             "matrix-depth": (matrix_depth, MATRIX_SETS, False), "boost-bins": (boost_bins, REGRESSION_SETS, True)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("question", choices=sorted(QUESTIONS))
    ap.add_argument("--data", default=str(HERE.parent.parent / "shared" / "datasets"))
    ap.add_argument("--datasets")
    ap.add_argument("--eps", default="0.25,1,4")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    measure, default_sets, regression = QUESTIONS[args.question]
    names = args.datasets.split(",") if args.datasets else default_sets or at.dataset_names(args.data)
    eps_list = [float(e) for e in args.eps.split(",")]
    overall = {e: [] for e in eps_list}
    for name in names:
        db = la.connect()
        features, domains, classes, _ = la.load(db, Path(args.data) / name / f"{name}.csv", name)
        if (classes is None) != regression:
            continue
        common = la.task_options(domains, classes)
        la.split(db, 1, regression)
        (train_rows,) = db.execute("SELECT count(*) FROM train").fetchone()
        cols = ", ".join(la.quote(f) for f in features)
        scores = {e: {} for e in eps_list}
        for seed in range(1, runs_for(train_rows, args.runs) + 1):
            la.split(db, seed, regression)
            test = db.execute(f"SELECT {cols}, y FROM test").fetchall()
            for e in eps_list:
                for k, v in measure(db, features, common, test, seed, e).items():
                    scores[e].setdefault(k, []).append(v)
        db.close()
        for e in eps_list:
            base = scores[e]["today"]
            cells = []
            for k, v in scores[e].items():
                if k == "today":
                    continue
                mean, se = paired(v, base)
                if regression:
                    cells.append(f"{k} {statistics.mean(v):.5f} ({100 * mean / statistics.mean(base):+.1f}% "
                                 f"± {100 * se / statistics.mean(base):.1f})")
                else:
                    cells.append(f"{k} {statistics.mean(v):.3f} ({100 * mean:+.1f} ± {100 * se:.1f})")
                overall[e].append((k, mean / statistics.mean(base) if regression else mean))
            unit = "MSE" if regression else "accuracy"
            print(f"{name} eps {e:g} ({len(base)} splits): today {statistics.mean(base):.5g} {unit}; "
                  + "; ".join(cells), flush=True)
    for e in eps_list:
        by = {}
        for k, m in overall[e]:
            by.setdefault(k, []).append(m)
        print(f"eps {e:g}, mean paired difference over the sets: "
              + ", ".join(f"{k} {100 * statistics.mean(v):+.2f}{'%' if regression else ' points'}"
                          for k, v in by.items()))


if __name__ == "__main__":
    main()
