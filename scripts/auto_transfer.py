#!/usr/bin/python3
"""Issue 33's measurement: `"algorithm": "auto"` against every learner it could pick, each trained alone,
on every data set of the data directory (the papers' eleven and the fourteen development sets), at a
small, the default and a large epsilon.

Protocol (scripts/learners_accuracy.py's loading and options): stratified 80/20 split seeded per split
(seeds 1..30; 1..10 above 2000 training rows, 1..3 above 20000: more than the issue's 10, 5 and 3, so
that the regret's standard error stays under the target's 4- and 2-point margins), public bounds and category lists from
the whole file. Classification: test accuracy; regression (the target scaled to [0, 1] by the whole
file's bounds): test MSE. Every call is seeded with its split's seed (reproducible; --unseeded draws
fresh noise). A learner that refuses a set (a classifier on a regression set, a model too large, over
--limit seconds) is n/a with its reason.

Writes a Markdown report (per epsilon: a classification and a regression table, targets and wall time)
and a JSON dump of every per-split score, so that later rules can be compared without re-running.

Usage: /usr/bin/python3 scripts/auto_transfer.py [--eps 0.25,1,4] [--datasets wine,zoo] [--quick]
           [--data DIR] [--out results/auto_transfer.md] [--json results/auto_transfer.json]
"""
import argparse
import datetime
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import learners_accuracy as la

LEARNERS = ["naive_bayes", "boost", "private_tree", "matrix_forest", "random_trees", "rdt", "constant"]
CANDIDATES = {"naive_bayes", "boost", "private_tree", "matrix_forest", "random_trees", "constant"}  # auto's
SHORT = {"naive_bayes": "nb", "boost": "boost", "private_tree": "tree", "matrix_forest": "matrix",
         "random_trees": "rtrees", "rdt": "rdt", "constant": "const"}
# Issue 33: the best of PrivaTree, DP-EBM and diffprivlib's random forest at epsilon 1.
PEERS = {"wine": .683, "digits": .464, "spam": .794, "german_credit": .704, "zoo": .576, "titanic": .785,
         "chile": .635, "wells": .585}
QUICK = ["iris", "wine", "zoo", "servo"]
TIMING_SETS = ["zoo", "iris", "wine", "servo"]


def splits_for(train_rows):
    """30 splits, 10 above 2000 training rows, 3 above 20000. The issue's protocol (10, 5, 3) left the
    paired regret's standard error at 4-7 points on the smallest sets, above the 4-point margin it is
    judged by, so a set's "met" or "missed" was the draw's; three times the splits bring it to about half
    the margin (the largest sets' splits are already precise, and slow)."""
    return 3 if train_rows > 20000 else 10 if train_rows > 2000 else 30


def dataset_names(data):
    """Every NAME/NAME.csv of the data directory: the papers' sets in learners_accuracy's order, then the
    others by name."""
    found = sorted(p.name for p in Path(data).iterdir() if (p / f"{p.name}.csv").is_file())
    known = [n for n in la.CLASSIFICATION + la.REGRESSION if n in found]
    return known + [n for n in found if n not in known]


def fit(db, features, options, limit):
    """(score, rdt_info's chosen and rule_picked, seconds) of one model, or raise sqlite3.Error; training
    is stopped through the progress handler after `limit` seconds."""
    started = time.monotonic()
    if limit:
        db.set_progress_handler(lambda: int(time.monotonic() - started > limit), 1000)
    try:
        model = la.train(db, features, options)
    except sqlite3.Error as e:
        if limit and time.monotonic() - started > limit and "interrupt" in str(e):
            raise sqlite3.OperationalError(f"training stopped after {limit:g} s (--limit)") from e
        raise
    finally:
        db.set_progress_handler(None, 0)
    trained = time.monotonic() - started
    (chosen, picked) = db.execute("SELECT json_extract(rdt_info(?1), '$.chosen'), "
                                  "json_extract(rdt_info(?1), '$.auto.rule_picked')", (model,)).fetchone()
    value = la.evaluate(db, features, model, options.get("task") == "regression")
    return value, chosen, picked, trained


def measure_set(name, args, eps_list, log):
    """Every learner and auto on one set at every epsilon: {eps: record} (record as in the JSON dump)."""
    db = la.connect()
    features, domains, classes, n = la.load(db, Path(args.data) / name / f"{name}.csv", name)
    regression = classes is None
    common = la.task_options(domains, classes)
    la.split(db, 1, regression)
    (train_rows,) = db.execute("SELECT count(*) FROM train").fetchone()
    runs = args.runs or splits_for(train_rows)
    seeds = list(range(1, runs + 1))
    out = {}
    for eps in eps_list:
        rec = {"rows": n, "features": len(features), "classes": None if regression else len(classes),
               "task": "regression" if regression else "classification", "train_rows": train_rows,
               "seeds": seeds, "baseline": [], "learners": {}}
        for alg in ["auto"] + LEARNERS:
            why = la.refusal(db, dict(common, algorithm=alg, epsilon=eps))
            rec["learners"][alg] = {"scores": [], "seconds": [], "error": why}
            if alg == "auto":
                rec["learners"][alg].update(chosen=[], rule_picked=[])
        out[eps] = rec
    started = time.monotonic()
    for seed in seeds:
        la.split(db, seed, regression)
        base = la.baseline(db, regression)
        for eps in eps_list:
            rec = out[eps]
            rec["baseline"].append(base)
            at = time.monotonic()
            for alg, r in rec["learners"].items():
                if r["error"]:
                    continue
                o = dict(common, algorithm=alg, epsilon=eps)
                if not args.unseeded:
                    o["seed"] = seed
                try:
                    value, chosen, picked, secs = fit(db, features, o, args.limit)
                except sqlite3.Error as e:  # refused (too large, stopped): n/a with the reason, go on
                    r["error"] = str(e)
                    log(f"  {name} eps {eps:g} {alg}: {e}")
                    continue
                r["scores"].append(value)
                r["seconds"].append(round(secs, 4))
                if alg == "auto":
                    r["chosen"].append(chosen)
                    r["rule_picked"].append(picked)
            rec["wall_seconds"] = round(rec.get("wall_seconds", 0) + time.monotonic() - at, 2)
        log(f"  {name} split {seed}/{runs}: {time.monotonic() - started:.0f} s")
    db.close()
    return out


# -- the report ---------------------------------------------------------------------------------------------

def mean_se(values):
    m = statistics.mean(values)
    return m, (statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0)


def num(x, regression):
    """.683 (accuracy) or .01234 (MSE): no leading zero, to keep the tables narrow."""
    text = f"{x:.5f}" if regression else f"{x:.3f}"
    return text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) else text


def complete(r, k):
    return not r["error"] and len(r["scores"]) == k


def summarize(rec):
    """The figures of one (epsilon, set): best single learner, regret with its paired SE, target."""
    regression = rec["task"] == "regression"
    k = len(rec["seeds"])
    L = rec["learners"]
    auto = L["auto"]
    better = min if regression else max
    singles = {a: statistics.mean(L[a]["scores"]) for a in LEARNERS if complete(L[a], k)}
    s = {"regression": regression, "singles": singles}
    if not complete(auto, k) or not singles:
        return s
    best = better(singles, key=singles.get)
    cands = {a: v for a, v in singles.items() if a in CANDIDATES}
    best_cand = better(cands, key=cands.get) if cands else None

    def regret(a):  # paired per split; points (accuracy) or MSE excess
        d = [(x - y) if not regression else (y - x) for x, y in zip(L[a]["scores"], auto["scores"])]
        return mean_se(d)

    s.update(best=best, regret=regret(best), best_cand=best_cand,
             regret_cand=regret(best_cand) if best_cand else None)
    auto_m = statistics.mean(auto["scores"])
    base_m = statistics.mean(rec["baseline"])
    if regression:
        ref = min(base_m, statistics.mean(L["boost"]["scores"])) if complete(L["boost"], k) else base_m
        s["target"] = auto_m <= 1.05 * ref
        s["target_text"] = f"≤ {num(1.05 * ref, True)}"
    else:
        allowed = 0.02 if rec["train_rows"] >= 2000 else 0.04
        s["target"] = s["regret"][0] <= allowed + 1e-12 and auto_m >= base_m - 0.01 - 1e-12
        s["target_text"] = f"regret ≤ {allowed * 100:g}"
        if auto_m < base_m - 0.01:
            s["target_text"] += ", under majority"
    return s


def picks(auto):
    """'boost 7, nb 3': what auto's models hold over the splits; 'guard k' when its guard replaced the
    rule's pick by the constant model."""
    counts = {}
    for c in auto["chosen"]:
        counts[SHORT.get(c, c)] = counts.get(SHORT.get(c, c), 0) + 1
    text = ", ".join(f"{a} {v}" for a, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    guard = sum(c == "constant" and p not in (None, "constant") for c, p in zip(auto["chosen"], auto["rule_picked"]))
    return text + (f" (guard {guard})" if guard else "")


def cell(r, k, regression):
    if not complete(r, k):
        return "n/a"
    m, se = mean_se(r["scores"])
    return f"{num(m, regression)} ± {num(se, regression)}"


def table(results, eps, names, task):
    regression = task == "regression"
    rows, notes, met, total = [], {}, [], 0
    head = ["data set (n, d, K)", "mean MSE" if regression else "majority"] + [SHORT[a] for a in LEARNERS] + \
        ["**auto**", "auto holds", "best single", "regret" + (" (MSE, % of best)" if regression else " (points)"),
         "target"]
    if eps == 1 and not regression:
        head.append("best peer")
    rows.append("| " + " | ".join(head) + " |")
    rows.append("|" + "---|" * len(head))
    for name in names:
        rec = results.get(name, {}).get(eps)
        if not rec or rec["task"] != task:
            continue
        k = len(rec["seeds"])
        L = rec["learners"]
        s = summarize(rec)
        total += rec["wall_seconds"]
        dims = f"{name} ({rec['rows']}, {rec['features']}, {'–' if regression else rec['classes']}; {k} splits)"
        base = mean_se(rec["baseline"])
        line = [dims, f"{num(base[0], regression)} ± {num(base[1], regression)}"]
        for a in LEARNERS:
            line.append(cell(L[a], k, regression))
            if L[a]["error"]:
                notes.setdefault((a, L[a]["error"]), []).append(name)
        line.append(f"**{cell(L['auto'], k, regression)}**")
        if L["auto"]["error"]:
            notes.setdefault(("auto", L["auto"]["error"]), []).append(name)
        line.append(picks(L["auto"]) if L["auto"]["chosen"] else "–")
        if "best" in s:
            best = SHORT[s["best"]] + ("\\*" if s["best"] not in CANDIDATES else "")
            line.append(best)
            rm, rse = s["regret"]
            if regression:
                bm = s["singles"][s["best"]]
                text = f"{num(rm, True)} ± {num(rse, True)} ({100 * rm / bm:+.0f}%)" if bm > 0 else f"{num(rm, True)}"
            else:
                text = f"{100 * rm:.1f} ± {100 * rse:.1f}"
                if s["best"] != s["best_cand"] and s["regret_cand"]:
                    text += f" (cand. {100 * s['regret_cand'][0]:.1f})"
            line.append(text)
            line.append(("met" if s["target"] else "**missed**") + f" ({s['target_text']})")
            met.append((name, s["target"]))
        else:
            line += ["–", "–", "–"]
        if eps == 1 and not regression:
            if name in PEERS and L["auto"]["scores"] and complete(L["auto"], k):
                ahead = statistics.mean(L["auto"]["scores"]) > PEERS[name]
                line.append(f"{PEERS[name]:.3f}".lstrip("0") + (" (auto ahead)" if ahead else " (auto behind)"))
            else:
                line.append("–")
        rows.append("| " + " | ".join(line) + " |")
    return rows, notes, met, total


def report(results, eps_list, names, meta):
    lines = [
        "# `auto` against every candidate on all data sets (issue 33)",
        "",
        f"Written by `{meta['command']}` on commit {meta['commit'][:10]} ({meta['date']}); "
        f"per-split scores in {meta['json']}.",
        "",
        "Protocol: stratified 80/20 split seeded per split (seeds 1..30; 1..10 above 2000 training rows; "
        "1..3 above 20000: the issue's protocol has 10, 5 and 3, which left the regret's standard error above "
        "the target's margin on the smallest sets), public bounds and category lists from the whole file, every learner with its "
        "defaults and `\"algorithm\"` set, "
        + ("every call unseeded (fresh noise). " if meta["unseeded"] else
           "every call seeded with its split's seed (`\"seed\": s`: reproducible; a seeded twin of a real "
           "release, the noise is the same distribution). ")
        + "Classification: test accuracy; regression: test MSE with the target scaled to [0, 1] by the whole "
        "file's bounds. Cells: mean ± standard error over the splits. n/a: the learner refused the set (the "
        "reasons are listed under each table).",
        "",
        "Columns: nb naive_bayes, tree private_tree, matrix matrix_forest, rtrees random_trees, rdt the RDT "
        "forest (`\"algorithm\": \"rdt\"`, not one of auto's candidates: marked \\* when it is the best), "
        "const constant. *auto holds*: the learner in auto's model over the splits (rdt_info's `chosen`; "
        "guard k: its guard replaced the rule's pick by the constant model k times). *Regret*: best single "
        "learner − auto, mean ± SE of the paired per-split differences (cand.: against the best of auto's "
        "candidates when rdt is the best). *Target* (issue 33): classification, regret ≤ 2 points where the "
        "training rows are ≥ 2000, ≤ 4 below, and auto's mean accuracy at most 1 point under the majority "
        "rate; regression, auto's MSE within 5% of the better of boost and the training mean. "
        "*Best peer* (ε = 1): the best published figure of PrivaTree, DP-EBM and diffprivlib's random "
        "forest, from the issue. A candidate inside auto is not the column: auto trains it with ε − ε/20 "
        "on the rows its coin keeps for training (about 95%), and naive Bayes with `\"readout\": \"auto\"`.",
        "",
    ]
    same = [n for n in results for e in eps_list if e in results[n]
            and results[n][e]["learners"]["rdt"]["scores"]
            and results[n][e]["learners"]["rdt"]["scores"] == results[n][e]["learners"]["random_trees"]["scores"]]
    runs = [n for n in results for e in eps_list if e in results[n] and results[n][e]["learners"]["rdt"]["scores"]]
    if runs and not meta["unseeded"]:
        lines += [f"rdt scored exactly as random_trees on every split in {len(same)} of the {len(runs)} (set, ε) "
                  "pairs where both ran: random_trees is the RDT forest with its defaults, and a seeded call "
                  "gives the same predictions.", ""]
    elif runs:
        lines += ["rdt and random_trees are the same forest (random_trees is the RDT forest with its defaults); "
                  "unseeded, their columns are two independent draws of it.", ""]
    summary = []
    for eps in eps_list:
        lines += [f"## ε = {eps:g}", ""]
        wall = 0.0
        for task, title in (("classification", "Classification (test accuracy)"),
                            ("regression", "Regression (test MSE, target in [0, 1])")):
            rows, notes, met, secs = table(results, eps, names, task)
            wall += secs
            if len(rows) == 2:
                continue
            lines += [f"### {title}", ""] + rows + [""]
            for (alg, why), sets in notes.items():
                lines.append(f"- n/a, {alg} on {', '.join(sets)}: {why}")
            lines += [""] if notes else []
            ok = [n for n, t in met if t]
            missed = [n for n, t in met if not t]
            text = (f"**ε = {eps:g}, {task}: target met on {len(ok)} of {len(met)} sets**"
                    + (f" (missed: {', '.join(missed)})" if missed else "") + ".")
            if task == "classification" and eps == 1:
                peers = [n for n in PEERS if n in results and eps in results[n]
                         and complete(results[n][eps]["learners"]["auto"], len(results[n][eps]["seeds"]))]
                ahead = [n for n in peers
                         if statistics.mean(results[n][eps]["learners"]["auto"]["scores"]) > PEERS[n]]
                if peers:
                    text += f" Auto ahead of the best peer on {len(ahead)} of {len(peers)} development sets."
            lines += [text, ""]
            summary.append(text)
        lines += [f"Wall time at ε = {eps:g}: {wall / 60:.1f} min (training and scoring every learner on every set).", ""]
    if meta.get("timing"):
        lines += timing_report(meta["timing"])
    lines += [f"Total wall time of the run: {meta['wall_seconds'] / 60:.1f} min (nice -n 19 on 2 shared cores "
              "with other work running; seconds are indicative).", ""]
    return lines, summary


# -- auto on a small table ----------------------------------------------------------------------------------

def time_small(args, log, rows=100, reps=5):
    """Seconds of rdt_train at epsilon 1 (unseeded) on the first `rows` rows of a few small sets, auto and
    each learner, against a plain scan of the same table: median and min of `reps` calls."""
    out = {}
    for name in TIMING_SETS:
        path = Path(args.data) / name / f"{name}.csv"
        if not path.is_file():
            continue
        db = la.connect()
        features, domains, classes, n = la.load(db, path, name)
        db.execute(f"CREATE TABLE train AS SELECT * FROM data WHERE rid < {rows}")
        common = la.task_options(domains, classes)
        cols = ", ".join(la.quote(f) for f in features)
        res = {"rows": min(rows, n)}

        def clock(sql, params=()):
            t = []
            for _ in range(reps):
                started = time.perf_counter()
                db.execute(sql, params).fetchall()
                t.append(time.perf_counter() - started)
            return {"median": statistics.median(t), "min": min(t)}

        res["scan"] = clock(f"SELECT count(*), max(json_array({cols}, y)) FROM train")
        # auto trains naive Bayes with "readout": "auto" (auto.c, step 4b): timed apart
        for alg, extra in [("auto", {}), ("nb_readout_auto", {"algorithm": "naive_bayes", "readout": "auto"})] + \
                [(a, {}) for a in LEARNERS]:
            o = json.dumps(dict(common, algorithm=alg, epsilon=1) | extra)
            try:
                res[alg] = clock(f"SELECT rdt_train(?, y, {cols}) FROM train", (o,))
            except sqlite3.Error as e:
                res[alg] = {"error": str(e)}
        log(f"  timing {name}: auto {res['auto'].get('median', float('nan')):.3f} s")
        out[name] = res
        db.close()
    return out


def timing_report(timing):
    lines = ["## `auto` on a table of 100 rows", "",
             "Milliseconds of one `rdt_train` at ε = 1 (unseeded, defaults) on the first 100 rows of each set, median "
             "(min) of 5 calls, against a plain scan of the same table (`SELECT count(*), max(json_array(...))`).",
             "nb readout auto: naive Bayes with `\"readout\": \"auto\"`, as auto trains it (auto.c, step 4b).",
             "", "| data set (rows) | scan | **auto** | nb readout auto | " + " | ".join(SHORT[a] for a in LEARNERS) + " |",
             "|" + "---|" * (4 + len(LEARNERS))]
    for name, r in timing.items():
        def c(a):
            x = r.get(a, {})
            return "n/a" if "median" not in x else f"{1000 * x['median']:.1f} ({1000 * x['min']:.1f})"
        lines.append(f"| {name} ({r['rows']}) | {c('scan')} | **{c('auto')}** | {c('nb_readout_auto')} | "
                     + " | ".join(c(a) for a in LEARNERS) + " |")
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(la.ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--eps", help="comma-separated epsilons (default 0.25,1,4; --quick: 1)")
    parser.add_argument("--datasets", help="comma-separated subset (default: every set of --data)")
    parser.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK)}, 2 splits, ε = 1, under build/")
    parser.add_argument("--runs", type=int, help="splits per set (default: the protocol's 10, 5 or 3)")
    parser.add_argument("--unseeded", action="store_true", help="fresh noise in every call (default: seeded)")
    parser.add_argument("--limit", type=float, default=600, help="seconds one training may take (0: no limit)")
    parser.add_argument("--no-timing", action="store_true", help="skip the 100-row timing of auto")
    parser.add_argument("--out", help="Markdown report (default results/auto_transfer.md; --quick: build/)")
    parser.add_argument("--json", help="per-split dump (default beside --out, .json)")
    args = parser.parse_args()
    eps_list = [float(e) for e in (args.eps or ("1" if args.quick else "0.25,1,4")).split(",")]
    if not Path(args.data).is_dir():
        sys.exit(f"auto_transfer.py: no data directory {args.data} (the shared data sets; --data DIR)")
    names = dataset_names(args.data)
    if args.quick:
        names = [n for n in QUICK if n in names]
        args.runs = args.runs or 2
    if args.datasets:
        names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    out = Path(args.out or (la.ROOT / ("build/auto_transfer_quick.md" if args.quick else "results/auto_transfer.md")))
    dump = Path(args.json or out.with_suffix(".json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=la.ROOT, capture_output=True, text=True).stdout.strip()
    shown = [os.path.relpath(a, la.ROOT) if os.path.isdir(a) else a for a in sys.argv[1:]]  # no home paths
    meta = {"command": " ".join(["/usr/bin/python3 scripts/auto_transfer.py"] + shown),
            "commit": commit or "unknown",
            "date": datetime.date.today().isoformat(), "json": os.path.relpath(dump, la.ROOT),
            "unseeded": args.unseeded, "limit_seconds": args.limit, "eps": eps_list, "learners": ["auto"] + LEARNERS}

    def log(text):
        print(text, flush=True)

    started = time.monotonic()
    results = {}

    def write():
        meta["wall_seconds"] = round(time.monotonic() - started, 1)
        lines, summary = report(results, eps_list, names, meta)
        out.write_text("\n".join(lines).rstrip() + "\n")
        dump.write_text(json.dumps({"meta": meta, "results": {str(e): {n: results[n][e] for n in results if e in results[n]}
                                                               for e in eps_list}}, indent=1) + "\n")
        return summary

    for name in names:
        log(f"{name}:")
        results[name] = measure_set(name, args, eps_list, log)
        write()
    if not args.no_timing:
        meta["timing"] = time_small(args, log)
    for line in write():
        log(line)
    log(f"wrote {out} and {dump} ({meta['wall_seconds'] / 60:.1f} min)")


if __name__ == "__main__":
    main()
