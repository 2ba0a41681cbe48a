#!/usr/bin/python3
"""Shard mode on Dask against one rdt_fit over the union (make bench; docs/scale-out.md).

Builds 4 shard databases of N rows each (10 REAL features uniform in [0, 1) and a 0/1 label, as
scripts/bench.py), then times, 3 times each (the median is reported):
  scan    a plain scan of the union (the 4 files ATTACHed, UNION ALL), for scale
  union   rdt_fit over that union: one process, epsilon 1, 32 trees of depth 10
  shards  sqlite_rdt.dask.fit over the 4 files on a LocalCluster of W worker processes (one
          actor per shard), the same options: plan, partials, merge, finish (the ratio shards/union)
  federated  the same in federated mode: each site adds the noise to its counters and masks them
          (X25519 per pair of sites, XChaCha20 over its counters) before they leave
  round   the same over 4 empty shards: the fixed cost of one round (actors started, the plan
          sent, 4 partial states of 32 x 1024 x 2 counters returned and summed, the noise added)
  boost, private_tree, auto  learners of rounds (every site re-reads its rows each round; boost:
          1 + 10 rounds, the private tree a round per level, auto its pick's and two more), against
          rdt_fit of the same options over the union (which reads the rows once, keeping a binned copy)
and reports each site's worker memory: resident before rdt_partial and at its peak.
The machine's cores are shared by the workers, the scheduler and the client: on 2 cores, 4
workers cannot all run at once.

Usage: /usr/bin/python3 scripts/bench_shards.py [--rows N] [--workers W]
"""
import argparse
import os
import statistics
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
import sqlite_rdt  # noqa: E402

EXTENSION = str(ROOT / "dist" / "rdt")
FEATURES = [f"x{i}" for i in range(1, 11)]
COLUMNS = ", ".join(FEATURES)
QUERY = f"SELECT label, {COLUMNS} FROM t"
SCHEMA = ('"classes": [0, 1], "features": ['
          + ", ".join(f'{{"name": "{f}", "type": "numeric", "min": 0, "max": 1}}' for f in FEATURES) + "]")
OPTIONS = '{"algorithm": "rdt", "epsilon": 1, "trees": 32, "depth": 10, ' + SCHEMA + "}"
ROUND_LEARNERS = {name: '{"algorithm": "%s", "epsilon": 1, %s}' % (name, SCHEMA) for name in ("boost", "private_tree", "auto")}
REPEATS = 3
SHARDS = 4


def fill(path, rows):
    db = sqlite3.connect(path)
    uniform = "(random() & 9007199254740991) / 9007199254740992.0"
    db.execute(f"CREATE TABLE t({', '.join(f + ' REAL' for f in FEATURES)}, label INTEGER)")
    db.execute(f"""
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO t({COLUMNS}) SELECT {', '.join([uniform] * 10)} FROM n""", (rows,))
    db.execute("UPDATE t SET label = ((x1 + x2 > 1) <> (random() % 10 = 0))")
    db.commit()
    db.close()


def median_time(fn):
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows per shard")
    ap.add_argument("--workers", type=int, default=SHARDS)
    args = ap.parse_args()
    try:
        from dask.distributed import Client, LocalCluster
        import sqlite_rdt.dask as sd
    except ImportError as e:
        print("bench_shards: skipped, dask.distributed is not installed (%s)" % e)
        return 0
    tmp = tempfile.mkdtemp()
    paths = [os.path.join(tmp, "shard%d.db" % i) for i in range(SHARDS)]
    empty = [os.path.join(tmp, "empty%d.db" % i) for i in range(SHARDS)]
    for p in paths:
        fill(p, args.rows)
    for p in empty:
        fill(p, 0)

    union = sqlite3.connect(":memory:")
    sqlite_rdt.load(union, EXTENSION)
    for i, p in enumerate(paths):
        union.execute("ATTACH ? AS s%d" % i, (p,))
    union_query = " UNION ALL ".join(f"SELECT label, {COLUMNS} FROM s{i}.t" for i in range(SHARDS))
    scan_sql = f"SELECT count(*), {', '.join(f'sum({f})' for f in FEATURES)} FROM ({union_query})"
    scan = median_time(lambda: union.execute(scan_sql).fetchone())
    whole = median_time(lambda: union.execute("SELECT rdt_fit(?, ?)", (OPTIONS, union_query)).fetchone())
    whole_rounds = {name: median_time(lambda o=o: union.execute("SELECT rdt_fit(?, ?)", (o, union_query)).fetchone())
                    for name, o in ROUND_LEARNERS.items()}

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        sd.fit(client, paths, OPTIONS, QUERY, extension=EXTENSION)  # warm: the workers import and load once
        runs = []
        for _ in range(REPEATS):
            stats = {}
            sd.fit(client, paths, OPTIONS, QUERY, extension=EXTENSION, stats=stats)
            runs.append(stats)
        rounds = []
        for _ in range(REPEATS):
            stats = {}
            sd.fit(client, empty, OPTIONS, QUERY, extension=EXTENSION, stats=stats)
            rounds.append(stats)
        federated = []
        for _ in range(REPEATS):
            stats = {}
            sd.fit(client, paths, OPTIONS, QUERY, federated=True, extension=EXTENSION, stats=stats)
            federated.append(stats)
        in_rounds = {}
        for name, o in ROUND_LEARNERS.items():
            in_rounds[name] = []
            for _ in range(REPEATS):
                stats = {}
                sd.fit(client, paths, o, QUERY, extension=EXTENSION, stats=stats)
                in_rounds[name].append(stats)

    def med(rs, key):
        return statistics.median(r[key] for r in rs)

    shards = med(runs, "total")
    rss = runs[-1]["site_rss"]
    mib = 1024 * 1024
    print(f"# shard mode: {SHARDS} shards x {args.rows:,} rows, {args.workers} worker processes, "
          f"{os.cpu_count()} CPUs; medians of {REPEATS}")
    print("| measurement | result |")
    print("|---|---|")
    print(f"| scan of the union ({SHARDS} files ATTACHed, UNION ALL) | {scan:.3f} s |")
    print(f"| rdt_fit over the union, one process | {whole:.3f} s = {whole / scan:.2f} x the scan |")
    print(f"| sqlite_rdt.dask.fit over the {SHARDS} shards | {shards:.3f} s = **{shards / whole:.2f} x rdt_fit over "
          f"the union** |")
    print(f"| ... of which plan / partials / merge / finish | {med(runs, 'plan'):.3f} / {med(runs, 'partials'):.3f} / "
          f"{med(runs, 'merge'):.3f} / {med(runs, 'finish'):.3f} s |")
    fed = med(federated, "total")
    print(f"| federated mode, the same forest (each site noises and masks its share) | {fed:.3f} s = "
          f"{fed / shards:.2f} x shard mode |")
    print(f"| a round on {SHARDS} empty shards (the fixed cost) | {med(rounds, 'total'):.3f} s "
          f"({runs[-1]['partial_bytes'] / SHARDS / 1e6:.2f} MB of counters per site) |")
    for name, rs in in_rounds.items():
        t = med(rs, "total")
        print(f"| {name} in rounds over the {SHARDS} shards ({med(rs, 'rounds'):.0f} rounds) | {t:.3f} s = "
              f"{t / whole_rounds[name]:.2f} x rdt_fit over the union ({whole_rounds[name]:.3f} s); "
              f"{t / med(rs, 'rounds'):.3f} s a round |")
    print(f"| a site's worker process, resident before / at its peak | "
          f"{statistics.median(r[0] for r in rss) / mib:.0f} / {statistics.median(r[1] for r in rss) / mib:.0f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
