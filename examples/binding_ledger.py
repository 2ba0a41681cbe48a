#!/usr/bin/env python3
"""Make the privacy-budget ledger binding: analysts reach the private rows only through
rdt_fit / dp_quantile, which charge the ledger before they read a row.

    make && /usr/bin/python3 examples/binding_ledger.py [path/to/extension]
    (from the repository root; /usr/bin/python3 because its sqlite3 module can load
    extensions; the extension defaults to $RDT_EXT, else dist/rdt)

The ledger is cooperative accounting: whoever can run arbitrary SQL on the connection can
read the private table directly. It binds when the application owns the connection and
gives analysts only this:
  - fit(options, query) / quantile(options, query): the application runs its own fixed
    statement, "SELECT rdt_fit(?, ?)", with the analyst's options (ledger forced to ours)
    and query text as parameters;
  - sql(text): SQL of their own, over public tables.
SQLite calls the authorizer while a statement is *prepared*, and rdt_fit prepares the
analyst's query itself, on this same connection (before it charges the ledger and runs
it). So the authorizer lets the private table be read only while the application runs
one of its fixed statements: their text reads nothing private, which leaves the query
prepared inside rdt_fit as the only reader. The entry function is allowed once per call,
in the fixed statement; the query inside may call no function. Writes, ATTACH, most
pragmas and unlisted functions are refused throughout; the statement cache is off, so
every statement is authorized in the mode it runs in.

Still the analyst's SQL: ε is per row of the query's result, so a query that repeats one
person in many rows (a join, a subquery) spends more than ε on them. An application that
does not trust its analysts' queries offers fixed ones (views it wrote) instead of text.
"""
import json
import os
import sqlite3
import sys
import tempfile

PRIVATE = {"patients"}
# What analysts' own SQL may call. Their query inside fit()/quantile() may call nothing:
# abs(), sum() or json() fail on some rows and not others, after the charge, and whether
# a query failed would then tell something about the rows.
PUBLIC_FUNCTIONS = {"count", "min", "max", "round", "rdt_predict", "rdt_info"}
ENTRY = {"fit": ("rdt_fit", "SELECT rdt_fit(?, ?)"), "quantile": ("dp_quantile", "SELECT dp_quantile(?, ?)")}


class Gateway:
    """The application's side: owns the connection; analysts get fit, quantile and sql."""

    def __init__(self, path, extension, ledger="main.budget"):
        self.ledger = ledger
        self.entry = None  # the entry function running now, or None
        self.entry_authorized = False  # its one use, in the fixed statement, is authorized
        self.conn = sqlite3.connect(path, isolation_level=None, cached_statements=0)
        self.conn.enable_load_extension(True)
        self.conn.load_extension(extension)
        self.conn.enable_load_extension(False)  # analysts' SQL cannot load code
        self.conn.set_authorizer(self._authorize)

    def _authorize(self, action, arg1, arg2, db, source):
        ok, deny = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_SELECT:
            return ok
        if action == sqlite3.SQLITE_READ:  # arg1: table (a view's reads name the tables under it)
            return ok if arg1 not in PRIVATE or self.entry else deny
        if action == sqlite3.SQLITE_FUNCTION:  # arg2: function name
            if self.entry:  # the fixed statement comes first; after it, the analyst's query
                first, self.entry_authorized = not self.entry_authorized, True
                return ok if first and arg2 == self.entry else deny
            return ok if arg2 in PUBLIC_FUNCTIONS else deny
        if action == sqlite3.SQLITE_PRAGMA and arg1 == "database_list" and arg2 is None:
            return ok  # read-only; the ledger looks a bare name up in every schema
        if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
            return ok  # SQLite asks this whenever it connects a virtual table (the ledger); sqlite_master
            #            itself refuses writes without PRAGMA writable_schema, refused here
        return deny

    def _call(self, kind, options, query):
        fn, statement = ENTRY[kind]
        options = dict(options, ledger=self.ledger)  # always charged, always to our ledger
        self.entry, self.entry_authorized = fn, False
        try:
            return self.conn.execute(statement, (json.dumps(options), query)).fetchone()[0]
        finally:
            self.entry = None

    def fit(self, options, query):
        return self._call("fit", options, query)

    def quantile(self, options, query):
        return self._call("quantile", options, query)

    def sql(self, text, params=()):
        return self.conn.execute(text, params).fetchall()


def refused(message):  # SQLite's texts for an authorizer's SQLITE_DENY
    return message is not None and ("not authorized" in message or "is prohibited" in message)


def error_of(call):
    try:
        call()
    except sqlite3.DatabaseError as e:
        return str(e)
    return None


def main():
    extension = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RDT_EXT", "dist/rdt")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "clinic.db")
        # The curator sets up the data and a ledger of ε = 2, with full access.
        curator = sqlite3.connect(path, isolation_level=None)
        curator.enable_load_extension(True)
        curator.load_extension(extension)
        curator.execute("CREATE TABLE patients(age REAL, diagnosis INTEGER)")
        curator.executemany("INSERT INTO patients VALUES (?, ?)", [(20 + i % 60, int(i % 60 > 35)) for i in range(600)])
        curator.execute("CREATE TABLE clinics(name TEXT)")
        curator.execute("INSERT INTO clinics VALUES ('north'), ('south')")
        curator.execute("CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=2)")

        gw = Gateway(path, extension)
        options = {"epsilon": 1, "label": "diagnosis", "classes": [0, 1],
                   "features": [{"name": "age", "type": "numeric", "min": 0, "max": 100}]}
        checks = []

        def check(what, got, expected):
            good = got == expected if not callable(expected) else expected(got)
            checks.append(good)
            print(f"{'ok' if good else 'FAILED'}: {what}: {got!r}")

        model = gw.fit(options, "SELECT age, diagnosis FROM patients")
        check("fit() trains through rdt_fit, charged first", isinstance(model, bytes), True)
        check("the model predicts in the analyst's own SQL", gw.sql("SELECT rdt_predict(?, 70)", (model,))[0][0],
              lambda p: p in (0, 1))
        median = gw.quantile({"epsilon": 0.5, "lo": 0, "hi": 100, "ledger": "elsewhere"}, "SELECT age FROM patients")
        check("quantile() too, charged to our ledger whatever the options say", 0 <= median <= 100, True)
        check("the ledger after ε 1 + 0.5", gw.sql("SELECT kind, epsilon, remaining FROM budget"),
              [("budget", 2.0, 2.0), ("charge", 1.0, 1.0), ("charge", 0.5, 0.5)])
        check("fit() over budget is refused, nothing charged",
              error_of(lambda: gw.fit(options, "SELECT age, diagnosis FROM patients")),
              'rdt_fit: over budget: ledger "main.budget" has 0.5 of epsilon left, 1 was requested; nothing was charged')

        # The analyst's own SQL: no private rows, no other way to a model, no way to touch the ledger.
        for text in ("SELECT * FROM patients", "SELECT count(*) FROM patients",
                     "SELECT rdt_fit('{}', 'SELECT age, diagnosis FROM patients')",
                     "SELECT rdt_train('{}', diagnosis, age) FROM clinics",
                     "DROP TABLE budget", "DELETE FROM rdt_ledger_files",
                     "CREATE TEMP VIEW p AS SELECT * FROM patients", "ATTACH 'other.db' AS other"):
            check(f"refused: {text}", error_of(lambda: gw.sql(text)), refused)
        check("public tables are readable", gw.sql("SELECT count(*) FROM clinics"), [(2,)])
        check("the query inside fit() may call no function (refused before any charge)",
              error_of(lambda: gw.fit(dict(options, epsilon=0.25), "SELECT abs(age) AS age, diagnosis FROM patients")),
              refused)
        check("... nor the entry function again (an uncharged rdt_fit inside)",
              error_of(lambda: gw.fit(dict(options, epsilon=0.25), "SELECT age, rdt_fit('{}', 'SELECT 1') AS diagnosis "
                                      "FROM patients")), refused)
        check("... so the ledger still has 0.5", gw.sql("SELECT min(remaining) FROM budget")[0][0], 0.5)
        print(f"binding ledger example: {sum(checks)} of {len(checks)} checks passed")
        return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
