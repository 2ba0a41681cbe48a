#!/usr/bin/env python3
"""Make the privacy-budget ledger binding: analysts reach the private rows only through
rdt_fit / dp_quantile, charged before they read a row, over queries the curator wrote.

    make && /usr/bin/python3 examples/binding_ledger.py [path/to/extension]
    (from the repository root; /usr/bin/python3 because its sqlite3 module can load
    extensions; the extension defaults to $RDT_EXT, else dist/rdt)

The ledger is cooperative accounting: whoever can run arbitrary SQL on the connection can
read the private table directly. Nor is it enough to let analysts write only the query
inside rdt_fit: a query's own running time, and whether it fails, can encode any private
value it reads (a LIMIT whose subquery yields a non-integer fails on some data and not on
other; a join evaluated only when a private predicate holds takes seconds instead of
milliseconds), after the charge and outside the noise. So the ledger binds only when every
query that reads private rows is the curator's. The application owns the connection and
gives analysts only this:
  - fit(options, name) / quantile(options, name): name is one of the curator's queries
    (QUERIES); the application runs its own fixed statement, "SELECT rdt_fit(?, ?)", with
    the analyst's options (ledger forced to ours) and that query's SQL as parameters. An
    analyst passes no SQL text: anything but a known name is refused before anything runs.
  - RDT#'s public rows likewise: the options' "public_query" must name one of the curator's
    public queries (PUBLIC_QUERIES) and is replaced by its SQL. "public_tables" is passed on
    as the analyst wrote it, and rdt_fit itself refuses, before the charge, any table the
    curator has not declared public in rdt_public_tables.
  - sql(text): SQL of their own, reading only the tables the curator declared public (the
    same rdt_public_tables, as it stood when the gateway opened), that declaration and the
    ledger, calling a few functions, writing nothing.
SQLite calls the authorizer while a statement is *prepared*. It lets the private table be
read only while the application runs one of its fixed statements: every statement prepared
then is the application's, the curator's query, or rdt's own (the ledger, RDT#'s checks).
The statement cache is off, so every statement is authorized in the mode it runs in.

The curator's queries read whole tables and cannot fail on any value; their running time
follows the row count, which is not protected (docs/privacy.md, "Timing threat model"). And ε is per
row of a query's result, so a query that repeats one person in many rows (a join, a table
of visits) spends more than ε on them: "privacy_unit" bounds that.
"""
import json
import os
import sqlite3
import sys
import tempfile

# The curator's queries, by name: the only SQL that reads private rows.
QUERIES = {"fit": {"diagnosis_by_age": "SELECT age, diagnosis FROM patients"},
           "quantile": {"ages": "SELECT age FROM patients"}}
PUBLIC_QUERIES = {"survey_ages": "SELECT age FROM survey"}  # RDT#'s public rows, by name
ENTRY = {"fit": ("rdt_fit", "SELECT rdt_fit(?, ?)"), "quantile": ("dp_quantile", "SELECT dp_quantile(?, ?)")}
# What analysts' own SQL may call.
PUBLIC_FUNCTIONS = {"count", "min", "max", "round", "rdt_predict", "rdt_info"}


class Refused(Exception):
    """The gateway refused a call before running anything."""


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
        # What analysts may read: the tables the curator declared public (as the declaration
        # stands when the gateway opens), the declaration itself and the ledger they spend.
        self.readable = {name.lower() for (name,) in self.conn.execute("SELECT name FROM main.rdt_public_tables")}
        self.readable |= {"rdt_public_tables", ledger.split(".")[-1].lower()}
        self.conn.set_authorizer(self._authorize)

    def _authorize(self, action, arg1, arg2, db, source):
        ok, deny = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_SELECT:
            return ok
        if action == sqlite3.SQLITE_READ:  # arg1: table (a view's reads name the tables under it)
            return ok if self.entry or (arg1 or "").lower() in self.readable else deny
        if action == sqlite3.SQLITE_FUNCTION:  # arg2: function name
            if self.entry:  # the fixed statement's call; the curator's queries call none
                first, self.entry_authorized = not self.entry_authorized, True
                return ok if first and arg2 == self.entry else deny
            return ok if arg2 in PUBLIC_FUNCTIONS else deny
        if action == sqlite3.SQLITE_PRAGMA and arg1 in ("database_list", "function_list") and arg2 is None:
            return ok  # read-only lists: the ledger looks a bare name up in every schema, and RDT#'s
            #            check of a public query asks which functions are SQLite's own
        if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
            return ok  # SQLite asks this whenever it connects a virtual table (the ledger); sqlite_master
            #            itself refuses writes without PRAGMA writable_schema, refused here
        return deny

    def _call(self, kind, options, name):
        fn, statement = ENTRY[kind]
        if not isinstance(name, str) or name not in QUERIES[kind]:
            raise Refused(f"{kind}(): {name!r} is not one of the curator's queries ({', '.join(QUERIES[kind])}); "
                          "analysts name a query, they do not write one")
        options = dict(options, ledger=self.ledger)  # always charged, always to our ledger
        if "public_query" in options:
            public = options["public_query"]
            if not isinstance(public, str) or public not in PUBLIC_QUERIES:
                raise Refused(f"{kind}(): \"public_query\" {public!r} is not one of the curator's public queries "
                              f"({', '.join(PUBLIC_QUERIES)})")
            options["public_query"] = PUBLIC_QUERIES[public]
        self.entry, self.entry_authorized = fn, False
        try:
            return self.conn.execute(statement, (json.dumps(options), QUERIES[kind][name])).fetchone()[0]
        finally:
            self.entry = None

    def fit(self, options, name):
        return self._call("fit", options, name)

    def quantile(self, options, name):
        return self._call("quantile", options, name)

    def sql(self, text, params=()):
        return self.conn.execute(text, params).fetchall()


def refused(message):  # SQLite's texts for an authorizer's SQLITE_DENY
    return message is not None and ("not authorized" in message or "is prohibited" in message)


def error_of(call):
    try:
        call()
    except (sqlite3.DatabaseError, Refused) as e:
        return str(e)
    return None


def main():
    extension = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RDT_EXT", "dist/rdt")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "clinic.db")
        # The curator sets up the data, declares what is public and creates a ledger of ε = 2,
        # with full access.
        curator = sqlite3.connect(path, isolation_level=None)
        curator.enable_load_extension(True)
        curator.load_extension(extension)
        curator.execute("CREATE TABLE patients(age REAL, diagnosis INTEGER)")
        curator.executemany("INSERT INTO patients VALUES (?, ?)", [(20 + i % 60, int(i % 60 > 35)) for i in range(600)])
        curator.execute("CREATE TABLE clinics(name TEXT)")
        curator.execute("INSERT INTO clinics VALUES ('north'), ('south')")
        curator.execute("CREATE TABLE survey(age REAL)")  # public rows without a diagnosis, for RDT#
        curator.executemany("INSERT INTO survey VALUES (?)", [(18 + i % 70,) for i in range(300)])
        curator.execute("CREATE TABLE rdt_public_tables(name TEXT PRIMARY KEY)")
        curator.execute("INSERT INTO rdt_public_tables VALUES ('clinics'), ('survey')")
        curator.execute("CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=2)")

        gw = Gateway(path, extension)
        options = {"epsilon": 1, "label": "diagnosis", "classes": [0, 1],
                   "features": [{"name": "age", "type": "numeric", "min": 0, "max": 100}]}
        sharp = dict(options, algorithm="rdt#", epsilon=0.25, public_query="survey_ages", public_tables=["survey"])
        checks = []

        def check(what, got, expected):
            good = got == expected if not callable(expected) else expected(got)
            checks.append(good)
            print(f"{'ok' if good else 'FAILED'}: {what}: {got!r}")

        model = gw.fit(options, "diagnosis_by_age")
        check("fit() trains on a curator's query through rdt_fit, charged first", isinstance(model, bytes), True)
        check("the model predicts in the analyst's own SQL", gw.sql("SELECT rdt_predict(?, 70)", (model,))[0][0],
              lambda p: p in (0, 1))
        median = gw.quantile({"epsilon": 0.5, "lo": 0, "hi": 100, "ledger": "elsewhere"}, "ages")
        check("quantile() too, charged to our ledger whatever the options say", 0 <= median <= 100, True)
        model = gw.fit(sharp, "diagnosis_by_age")
        check("RDT# takes its public rows from a curator's public query over a declared table",
              json.loads(gw.sql("SELECT rdt_info(?)", (model,))[0][0])["public_tables"], ["survey"])
        check("the ledger after ε 1 + 0.5 + 0.25", gw.sql("SELECT kind, epsilon, remaining FROM budget"),
              [("budget", 2.0, 2.0), ("charge", 1.0, 1.0), ("charge", 0.5, 0.5), ("charge", 0.25, 0.25)])
        check("fit() over budget is refused, nothing charged",
              error_of(lambda: gw.fit(options, "diagnosis_by_age")),
              'rdt_fit: over budget: ledger "main.budget" has 0.25 of epsilon left, 1 was requested; nothing was charged')

        # SQL text from the analyst is refused before anything runs, whatever it is: a plain query,
        # one that fails on some private values (a LIMIT that is not an integer), one whose time
        # tells a private predicate (a three-way self-join run only when it holds).
        for kind, text in (("fit", "SELECT age, diagnosis FROM patients"),
                           ("fit", "SELECT age, diagnosis FROM patients LIMIT (SELECT age / 7.0 FROM patients "
                                   "WHERE rowid = 1)"),
                           ("quantile", "SELECT age FROM patients WHERE (SELECT age FROM patients WHERE rowid = 1) "
                                        "< 40 AND (SELECT count(*) FROM patients a, patients b, patients c) > 0")):
            check(f"{kind}() takes no SQL text: {text[:50]}...",
                  error_of(lambda: getattr(gw, kind)(dict(options, epsilon=0.1), text)),
                  lambda e: e is not None and "is not one of the curator's queries" in e)
        # The review's RDT# attack: the caller declaring the private table public.
        check("refused: RDT# with public_query text over the private table",
              error_of(lambda: gw.fit(dict(sharp, epsilon=0.1, public_query="SELECT age FROM patients",
                                           public_tables=["patients"]), "diagnosis_by_age")),
              lambda e: e is not None and "is not one of the curator's public queries" in e)
        check("refused by rdt_fit, before any charge: public_tables naming an undeclared table",
              error_of(lambda: gw.fit(dict(sharp, epsilon=0.1, public_tables=["survey", "patients"]),
                                      "diagnosis_by_age")),
              lambda e: e is not None and e.startswith('rdt_fit: "public_tables" names "patients", which is not '
                                                       'declared public'))

        # The analyst's own SQL: no private rows, no other way to a model, no way to touch the
        # ledger or the declaration.
        for text in ("SELECT * FROM patients", "SELECT count(*) FROM patients",
                     "WITH p AS (SELECT age FROM patients) SELECT count(*) FROM p",
                     "SELECT name FROM clinics LIMIT (SELECT age / 7.0 FROM patients WHERE rowid = 1)",
                     "SELECT rdt_fit('{}', 'SELECT age, diagnosis FROM patients')",
                     "SELECT rdt_train('{}', diagnosis, age) FROM clinics",
                     "SELECT rdt_features('patients', 'diagnosis')",
                     "INSERT INTO rdt_public_tables VALUES ('patients')",
                     "CREATE TEMP TABLE rdt_public_tables(name TEXT)",
                     "DROP TABLE budget", "DELETE FROM rdt_ledger_files",
                     "CREATE TEMP VIEW p AS SELECT * FROM patients", "ATTACH 'other.db' AS other"):
            check(f"refused: {text}", error_of(lambda: gw.sql(text)), refused)
        check("declared public tables are readable", gw.sql("SELECT count(*) FROM clinics, survey"), [(600,)])
        check("... so the ledger still has 0.25", gw.sql("SELECT min(remaining) FROM budget")[0][0], 0.25)
        print(f"binding ledger example: {sum(checks)} of {len(checks)} checks passed")
        return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
