#!/usr/bin/env python3
"""The accuracy distribution of examples/dask_shards.py's models, without Dask, to size its check.

    /usr/bin/python3 scripts/dask_example_tail.py DEPTH RUNS fed|shard [extension]   (default dist/rdt)

Trains the example's forest over its four site databases RUNS times in this process, through the
same functions the Dask actors call (rdt_plan, rdt_share or rdt_partial, rdt_merge, rdt_finish),
unseeded and without the ledger, and scores each model on the 1372 rows as the example does. DEPTH
0 keeps the automatic depth (shard mode only). Prints the 15 lowest accuracies, the mean, sd, the
lowest and the 5th percentile: tests/run_all.sh's threshold comes from this tail.
"""
import json
import os
import sqlite3
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import sqlite_rdt  # noqa: E402
import dask_shards as example  # noqa: E402  (its data and options; it imports dask.distributed, unused here)


def main():
    if len(sys.argv) < 4 or sys.argv[3] not in ("fed", "shard"):
        sys.exit(__doc__)
    depth, runs, federated = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "fed"
    ext = sys.argv[4] if len(sys.argv) > 4 else os.path.join(ROOT, "dist", "rdt")
    sites = example.make_sites(tempfile.mkdtemp())
    coordinator = sqlite3.connect(":memory:")
    sqlite_rdt.load(coordinator, ext)
    conns = []
    for path in sites:
        conns.append(sqlite3.connect(path))
        sqlite_rdt.load(conns[-1], ext)
    options = json.loads(example.OPTIONS)
    del options["ledger"], options["note"]
    if depth:
        options["depth"] = depth
    accuracies = []
    for _ in range(runs):
        if federated:
            pairs = [json.loads(c.execute("SELECT rdt_site_keypair()").fetchone()[0]) for c in conns]
            doc = dict(options, federated={"sites": [p["public_key"] for p in pairs]})
            plan = coordinator.execute("SELECT rdt_plan(?)", (json.dumps(doc),)).fetchone()[0]
            parts = [c.execute("SELECT rdt_share(?, ?, ?)", (plan, example.QUERY,
                                                             json.dumps({"secret_key": p["secret_key"]}))).fetchone()[0]
                     for c, p in zip(conns, pairs)]
        else:
            plan = coordinator.execute("SELECT rdt_plan(?)", (json.dumps(options),)).fetchone()[0]
            parts = [c.execute("SELECT rdt_partial(?, ?)", (plan, example.QUERY)).fetchone()[0] for c in conns]
        merged = coordinator.execute("SELECT rdt_merge(column1) FROM (VALUES %s)" % ",".join("(?)" for _ in parts),
                                     parts).fetchone()[0]
        model = coordinator.execute("SELECT rdt_finish(?, ?)", (plan, merged)).fetchone()[0]
        right = total = 0
        for c in conns:
            r, n = c.execute("SELECT sum(rdt_predict(?, variance, skewness, curtosis, entropy) = label), count(*) "
                             "FROM notes", (model,)).fetchone()
            right += r
            total += n
        accuracies.append(right / total)
    accuracies.sort()
    print("lowest:", " ".join("%.3f" % a for a in accuracies[:15]))
    print("depth %s, %s, %d runs: mean %.3f, sd %.3f, lowest %.3f, 5th percentile %.3f"
          % (depth or "auto", "federated" if federated else "shard mode", runs, statistics.mean(accuracies),
             statistics.stdev(accuracies) if runs > 1 else 0.0, accuracies[0], accuracies[runs // 20]))


if __name__ == "__main__":
    main()
