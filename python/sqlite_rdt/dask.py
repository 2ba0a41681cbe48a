"""sqlite_rdt.dask - one rdt model over many SQLite databases, on a dask.distributed cluster.

    import sqlite3
    from dask.distributed import Client, LocalCluster
    import sqlite_rdt, sqlite_rdt.dask

    client = Client(LocalCluster(n_workers=4))
    coordinator = sqlite3.connect("curator.db")          # holds the ledger, if any
    sqlite_rdt.load(coordinator)
    model = sqlite_rdt.dask.fit(client, ["site1.db", "site2.db"], options,
                                "SELECT label, age, sex FROM visits", coordinator=coordinator)

It drives shard mode (sql/reference.md, "Shard mode"; docs/scale-out.md): rdt_plan on the
coordinator, rdt_partial in every database where it lies, rdt_merge and rdt_finish on the
coordinator, round after round for the learners that release in rounds (boost, private_tree). The
model is the one rdt_fit trains over the union of the databases' rows, with the same epsilon,
charged once.

Contract:
  1. fit(client, shards, options, query, federated=False, coordinator=None, extension=None,
     stats=None) returns the model BLOB (bytes). `shards` lists database paths, or (path, query)
     pairs for a database whose query differs; `query` is every other shard's. `options` is the
     JSON text of rdt_fit's options, or a dict.
  2. The plan is made first, on `coordinator` (a sqlite3 connection with rdt loaded; None: a
     fresh in-memory one, which has no ledger): its checks and its one ledger charge happen
     before any actor is started (federated: before any actor reads a row) or any row of any
     shard is read. Its errors are raised as they are (sqlite3.OperationalError, "rdt_plan: ...").
  3. One dask actor per shard (a SQLite connection cannot be pickled), placed round-robin over
     the client's workers. Each opens its database read-only (mode=ro), loads rdt (`extension`:
     the file to load on the workers; None: each worker's own sqlite_rdt.load search), and runs
     rdt_partial(plan, query). Only the plan (public), the query text and each site's partial
     state (exact, private: the cluster's network must be trusted) cross between processes; no
     row does.
  4. The client sums the partial states on the coordinator (rdt_merge, a chunk of at most
     MERGE_CHUNK at a time) and finishes there (rdt_finish): the noise is added once. With a
     ledger, the plan's charge records the release; a plan releases one model. When rdt_finish
     returns a round message (RDTROUND: public, the release of that round) rather than the model,
     every actor runs rdt_partial(plan, query, message) on its same connection, and so on until
     the model: the actors live until the last round, and hold nothing between rounds but their
     connection (each round reads the query again).
  5. A shard that fails raises ShardError naming it, and nothing more is finished: the plan's
     charge stays where it is, pending or at its last round (what was charged stays spent; make
     a new plan for the next attempt).
  6. federated=True: federated mode, for sites that must not show their counters to anyone,
     the coordinator included (sql/reference.md, "Federated mode"). Each actor makes its own
     X25519 key pair (rdt_site_keypair) and keeps the secret key in its worker; the client puts
     the public keys in the plan ("federated": {"sites": [...]}), so the actors start before
     rdt_plan here, but no row is read before it. Each site returns rdt_share: its counters
     plus the release's whole noise, under its pairwise mask; the coordinator sums them and
     rdt_finish adds no noise. Every site must answer: one that fails raises ShardError and
     nothing is released (its mask would not cancel); the plan's charge stays spent.
  7. stats, a dict when given, receives the time of each step in seconds ("plan", "partials",
     "merge", "finish", "total"; summed over the rounds), the bytes of partial states received
     ("partial_bytes", all rounds), the rounds run ("rounds"), per round its seconds and the bytes
     of its partials and of the message it released ("round_seconds", "round_partial_bytes",
     "round_message_bytes"), and per site its process's resident memory before and at its peak,
     in bytes ("site_rss").
"""
import json
import os
import sqlite3
import time
import urllib.parse

from . import load

__all__ = ["fit", "ShardError"]

MERGE_CHUNK = 500


class ShardError(RuntimeError):
    """A shard's rdt_partial failed; the plan was not finished."""


def _rss():
    """(current, peak) resident memory of this process in bytes (Linux; (0, 0) elsewhere)."""
    now = peak = 0
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    now = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) * 1024
    except OSError:
        pass
    return now, peak


class _Site:
    """A dask actor: one shard database, opened read-only, with rdt loaded (contract 3)."""

    def __init__(self, path, extension):
        uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(path))
        self.path = path
        self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        load(self.conn, extension)
        self.rss_before = _rss()[0]

    def keypair(self):
        """Contract 6: a fresh X25519 pair; the secret key stays in this actor."""
        pair = json.loads(self.conn.execute("SELECT rdt_site_keypair()").fetchone()[0])
        self.secret_key = pair["secret_key"]
        return pair["public_key"]

    def share(self, plan, query):
        site = json.dumps({"secret_key": self.secret_key})
        try:
            row = self.conn.execute("SELECT rdt_share(?, ?, ?)", (plan, query, site)).fetchone()
        except sqlite3.Error as e:
            raise ShardError("shard %s: %s" % (self.path, e)) from None
        return row[0]

    def partial(self, plan, query, message=None):
        try:
            row = self.conn.execute("SELECT rdt_partial(?, ?, ?)", (plan, query, message)).fetchone()
        except sqlite3.Error as e:
            raise ShardError("shard %s: %s" % (self.path, e)) from None
        return row[0]

    def rss(self):
        return (self.rss_before, _rss()[1])

    def close(self):
        self.secret_key = None
        self.conn.close()


def _shard_list(shards, query):
    out = []
    for s in shards:
        if isinstance(s, (tuple, list)):
            if len(s) != 2:
                raise ValueError("sqlite_rdt.dask.fit: a shard is a path or a (path, query) pair, not %r" % (s,))
            out.append((os.fspath(s[0]), s[1]))
        else:
            out.append((os.fspath(s), query))
    if not out:
        raise ValueError("sqlite_rdt.dask.fit: no shards")
    for path, q in out:
        if not isinstance(q, str):
            raise ValueError("sqlite_rdt.dask.fit: the query of shard %s must be SQL text" % path)
    return out


def _merge(conn, parts):
    """rdt_merge over the parts, MERGE_CHUNK at a time, each sum folded into the next chunk."""
    merged = None
    rest = list(parts)
    while rest:
        chunk = ([merged] if merged is not None else []) + rest[:MERGE_CHUNK - 1]
        rest = rest[MERGE_CHUNK - 1:]
        sql = "SELECT rdt_merge(column1) FROM (VALUES %s)" % ",".join("(?)" for _ in chunk)
        merged = conn.execute(sql, chunk).fetchone()[0]
    return merged


def fit(client, shards, options, query=None, federated=False, coordinator=None, extension=None, stats=None):
    """The model BLOB of shard mode over `shards` (module contract)."""
    t0 = time.perf_counter()
    options_doc = None
    if federated or not isinstance(options, str):  # the text goes to rdt_plan as it is otherwise
        options_doc = json.loads(options) if isinstance(options, str) else options
        if not isinstance(options_doc, dict):
            raise ValueError("sqlite_rdt.dask.fit: the options must be a JSON object")
    sites = _shard_list(shards, query)
    own = coordinator is None
    if own:
        coordinator = sqlite3.connect(":memory:")
        load(coordinator, extension)
    try:
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise RuntimeError("sqlite_rdt.dask.fit: the client's cluster has no workers")

        def start_actors():
            actors = [client.submit(_Site, path, extension, actor=True, workers=[workers[i % len(workers)]],
                                    pure=False)
                      for i, (path, _) in enumerate(sites)]
            handles = []
            for (path, _), a in zip(sites, actors):
                try:
                    handles.append(a.result())
                except Exception as e:  # the actor could not open its database or load rdt
                    client.cancel(actors)
                    raise ShardError("shard %s: %s" % (path, e)) from None
            return actors, handles

        actors = handles = None
        if federated:  # contract 6: the sites' keys go into the plan
            actors, handles = start_actors()
        try:
            if federated:
                keys = [h.keypair().result() for h in handles]
                options = json.dumps(dict(options_doc, federated={"sites": keys}))
            elif not isinstance(options, str):
                options = json.dumps(options_doc)
            # Contract 2: checks and the one charge, before any site reads a row.
            plan = coordinator.execute("SELECT rdt_plan(?)", (options,)).fetchone()[0]
            t_plan = time.perf_counter()
            if not federated:
                actors, handles = start_actors()
            message = None
            t_parts = t_merge = t_finish = 0.0
            round_seconds, round_bytes, message_bytes = [], [], []
            while True:  # contract 4: one pass per round, until rdt_finish returns the model
                t_round = time.perf_counter()
                calls = [h.share(plan, q) if federated else h.partial(plan, q, message)
                         for h, (_, q) in zip(handles, sites)]
                parts = []
                for (path, _), c in zip(sites, calls):
                    try:
                        parts.append(c.result())
                    except ShardError:
                        raise
                    except Exception as e:
                        raise ShardError("shard %s: %s" % (path, e)) from None
                t1 = time.perf_counter()
                merged = _merge(coordinator, parts)
                t2 = time.perf_counter()
                out = coordinator.execute("SELECT rdt_finish(?, ?)", (plan, merged)).fetchone()[0]
                t3 = time.perf_counter()
                t_parts += t1 - t_round
                t_merge += t2 - t1
                t_finish += t3 - t2
                round_seconds.append(t3 - t_round)
                round_bytes.append(sum(len(p) for p in parts))
                if bytes(out[:8]) != b"RDTROUND":
                    model = out
                    break
                message = out
                message_bytes.append(len(out))
            site_rss = [h.rss().result() for h in handles] if stats is not None else []
            for h in handles:
                h.close().result()
        finally:
            handles = None
            if actors:
                client.cancel(actors)
        t_end = time.perf_counter()
    finally:
        if own:
            coordinator.close()
    if stats is not None:
        stats.update(plan=t_plan - t0, partials=t_parts, merge=t_merge, finish=t_finish, total=t_end - t0,
                     partial_bytes=sum(round_bytes), rounds=len(round_seconds), round_seconds=round_seconds,
                     round_partial_bytes=round_bytes, round_message_bytes=message_bytes, site_rss=site_rss)
    return model
