#!/usr/bin/env python3
"""RDT#'s public query on a connection an application configures (what the sqlite3 shell cannot
set up): a function the application defines under a built-in's name is not the built-in, an
application's authorizer stays installed, and every statement the check runs that an authorizer
refuses makes the call fail closed, before any charge.

    /usr/bin/python3 tests/public_query_test.py [extension without suffix]   (default $RDT_EXT, dist/rdt)

Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
"""
import json
import os
import sqlite3
import sys
import tempfile

counts = {"passed": 0, "failed": 0}
OPTIONS = {"algorithm": "rdt#", "epsilon": 1, "public_query": "SELECT x FROM public",
           "public_tables": ["public"], "classes": [0, 1],
           "features": [{"name": "x", "type": "numeric", "min": 0, "max": 10}]}


def check(name, condition, detail=""):
    print(("ok - " if condition else "not ok - ") + name)
    if not condition:
        print("#   " + str(detail))
    counts["passed" if condition else "failed"] += 1


def connect(extension):
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(extension)
    conn.enable_load_extension(False)
    conn.executescript("""
        CREATE TABLE public(x REAL);
        INSERT INTO public SELECT value FROM json_each('[1, 2, 3, 4, 5, 6, 7, 8]');
        CREATE TABLE private(x REAL, label INTEGER);
        INSERT INTO private VALUES (1, 0), (2, 0), (8, 1), (9, 1);
        CREATE TABLE rdt_public_tables(name TEXT PRIMARY KEY);
        INSERT INTO rdt_public_tables VALUES ('public');
    """)
    return conn


def fit(conn, **changes):
    return conn.execute("SELECT rdt_fit(?, 'SELECT x, label FROM private')",
                        (json.dumps(dict(OPTIONS, **changes)),)).fetchone()[0]


def error_of(call):
    try:
        call()
    except sqlite3.DatabaseError as e:
        return str(e)
    return None


def main():
    extension = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RDT_EXT", "dist/rdt")
    with tempfile.TemporaryDirectory() as tmp:
        run(extension, tmp)
    print("%d passed, %d failed" % (counts["passed"], counts["failed"]))
    return 1 if counts["failed"] else 0


def run(extension, tmp):

    conn = connect(extension)
    check("a public query calling SQLite's lower() trains",
          isinstance(fit(conn, public_query="SELECT CAST(lower(x) AS REAL) FROM public"), bytes))
    conn.create_function("lower", 1, lambda v: v)  # the application's own: it could run any SQL
    got = error_of(lambda: fit(conn, public_query="SELECT CAST(lower(x) AS REAL) FROM public"))
    check("a function of the connection's own under a built-in's name is refused",
          got is not None and got.startswith('rdt_fit: "public_query" calls lower(), which this connection defines '
                                             'itself (an application\'s or an extension\'s function)'), got)

    # An application's authorizer: consulted by the check's statements, and still installed after.
    conn = connect(extension)
    seen = []

    def audit(action, arg1, arg2, db, source):
        seen.append((action, arg1))
        if action == sqlite3.SQLITE_READ and arg1 == "private" and source is None and not inside[0]:
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK
    inside = [False]
    conn.set_authorizer(audit)
    inside[0] = True
    model = fit(conn)
    inside[0] = False
    check("under an application's authorizer RDT# trains", isinstance(model, bytes))
    check("... and the check's own statements were put to it (PRAGMA database_list)",
          (sqlite3.SQLITE_PRAGMA, "database_list") in seen, seen[:10])
    check("... which stays installed after the call",
          "prohibited" in (error_of(lambda: conn.execute("SELECT x FROM private").fetchall()) or ""))

    # Each statement of the check refused in turn: the call fails closed, naming why, before any charge.
    # With "public_tables": [] the declarations are not looked up, so the program's own lookups are
    # the first to be refused (the query then fails the table check, which it never reaches).
    pragma = sqlite3.SQLITE_PRAGMA
    for what, tables, refuse, expected in (
            ("PRAGMA database_list", ["public"], lambda a, b: a == pragma and b == "database_list",
             'rdt_fit: "public_tables" cannot be checked: not authorized'),
            ("reading rdt_public_tables", ["public"], lambda a, b: a == sqlite3.SQLITE_READ and b == "rdt_public_tables",
             'rdt_fit: "public_tables" cannot be checked: access to rdt_public_tables.name is prohibited'),
            ("PRAGMA function_list", ["public"], lambda a, b: a == pragma and b == "function_list",
             'rdt_fit: "public_query" cannot be checked: not authorized'),
            ("PRAGMA database_list, for a table the program opens", [], lambda a, b: a == pragma and b == "database_list",
             'rdt_fit: "public_query" cannot be checked: not authorized'),
            ("reading sqlite_master, for a table the program opens", [],
             lambda a, b: a == sqlite3.SQLITE_READ and b == "sqlite_master",
             'rdt_fit: "public_query" cannot be checked: access to sqlite_master.')):
        conn = connect(extension)
        conn.execute("CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=5, file='%s')"
                     % os.path.join(tmp, "ledger-%d" % len(os.listdir(tmp))))
        conn.set_authorizer(lambda a, b, c, d, e, refuse=refuse: sqlite3.SQLITE_DENY if refuse(a, b) else sqlite3.SQLITE_OK)
        got = error_of(lambda: fit(conn, ledger="main.budget", public_tables=tables,
                                   public_query="SELECT abs(x) FROM public"))
        check("an authorizer refusing %s: RDT# fails closed" % what, (got or "").startswith(expected), got)
        conn.set_authorizer(None)
        check("... before the charge", conn.execute("SELECT count(*) FROM budget WHERE id > 0").fetchone()[0] == 0)


if __name__ == "__main__":
    sys.exit(main())
