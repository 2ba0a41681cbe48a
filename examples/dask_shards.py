#!/usr/bin/env python3
"""One private model over four SQLite databases, trained on a Dask cluster without moving a row.

    /usr/bin/python3 examples/dask_shards.py [extension without suffix]   (default dist/rdt)

Needs dask.distributed (Debian: apt-get install python3-distributed). The four "sites" are four
database files holding a quarter of the banknote data each; the curator's own database holds the
privacy-budget ledger. A LocalCluster of two worker processes stands in for a real cluster: with
one, give Client the scheduler's address instead and put each database where its worker can open
it. What crosses the network: the public plan to every site, each site's exact counters back
(private: keep that network trusted). Then the same in federated mode, where each site adds the
noise itself and masks its share. docs/scale-out.md explains it; make test runs this file.
"""
import csv
import os
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))  # the checkout's sqlite_rdt
import sqlite_rdt  # noqa: E402
import sqlite_rdt.dask  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402

OPTIONS = """{"algorithm": "rdt", "epsilon": 1, "ledger": "budget",
  "note": "banknotes, four sites, one model",
  "classes": [0, 1],
  "features": [{"name": "variance", "type": "numeric", "min": -8, "max": 8},
               {"name": "skewness", "type": "numeric", "min": -14, "max": 14},
               {"name": "curtosis", "type": "numeric", "min": -6, "max": 18},
               {"name": "entropy", "type": "numeric", "min": -9, "max": 3}]}"""
QUERY = "SELECT label, variance, skewness, curtosis, entropy FROM notes"


def make_sites(directory):
    rows = list(csv.DictReader(open(os.path.join(os.path.dirname(HERE), "tests", "data", "banknote.csv"))))
    paths = []
    for site in range(4):
        path = os.path.join(directory, "site%d.db" % site)
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE notes(variance REAL, skewness REAL, curtosis REAL, entropy REAL, label INTEGER)")
        db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?, ?)",
                       [(r["variance"], r["skewness"], r["curtosis"], r["entropy"], r["label"])
                        for i, r in enumerate(rows) if i % 4 == site])
        db.commit()
        db.close()
        paths.append(path)
    return paths


def main():
    ext = sys.argv[1] if len(sys.argv) > 1 else None
    directory = tempfile.mkdtemp()
    sites = make_sites(directory)

    # The curator's database: the ledger that rdt_plan charges once, before any site reads a row.
    curator = sqlite3.connect(os.path.join(directory, "curator.db"))
    sqlite_rdt.load(curator, ext)
    curator.execute("CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=3)")

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        stats = {}
        model = sqlite_rdt.dask.fit(client, sites, OPTIONS, QUERY, coordinator=curator, extension=ext,
                                    stats=stats)
        # Federated mode: the same four sites, now as if of four owners who show nothing: each
        # actor keeps its own key, adds the noise itself and masks its share. A fixed depth: an
        # automatic one needs a noisy count of the merged rows first. Depth 8: with every site's noise in
        # the sum, it scores higher and steadier here than depth 6 (CHANGELOG.md has the runs).
        federated = sqlite_rdt.dask.fit(client, sites, OPTIONS.replace('"algorithm": "rdt",', '"algorithm": "rdt", "depth": 8,'),
                                        QUERY, federated=True, coordinator=curator, extension=ext)

    info = curator.execute("SELECT json_extract(rdt_info(?), '$.epsilon'), json_extract(rdt_info(?), '$.release')",
                           (model, model)).fetchone()
    print("model: %d bytes, epsilon %s, release %s" % (len(model), info[0], info[1]))
    print("plan %.3f s, partials of %d sites %.3f s (%d bytes of counters), merge %.3f s, finish %.3f s"
          % (stats["plan"], len(sites), stats["partials"], stats["partial_bytes"], stats["merge"], stats["finish"]))
    for row in curator.execute("SELECT function, epsilon, outcome, note FROM budget WHERE id > 0"):
        print("ledger: %s charged %s, %s (%s)" % row)

    # The curator scores the model on every site's rows (not private: for the curator's eyes).
    for name, m in (("", model), ("federated model: ", federated)):
        right = total = 0
        for path in sites:
            db = sqlite3.connect(path)
            sqlite_rdt.load(db, ext)
            r, n = db.execute("SELECT sum(rdt_predict(?, variance, skewness, curtosis, entropy) = label), count(*) "
                              "FROM notes", (m,)).fetchone()
            right += r
            total += n
            db.close()
        print("%saccuracy over the four sites' %d rows: %.3f" % (name, total, right / total))


if __name__ == "__main__":
    main()
