/*
** sql_ledger.c - a privacy-budget ledger: cooperative accounting of ε.
**
**   CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=3.0 [, file='path']);
**   SELECT rdt_fit('{"epsilon": 1, "ledger": "budget", ...}', 'SELECT ... FROM patients');
**   SELECT * FROM budget;   -- the budget row, then every charge with running totals
**
** What it guarantees: a function given "ledger" charges its ε, and commits
** the charge, before it reads any row, and is refused (nothing charged) when
** the ledger has less left. It binds only callers who can reach the private
** rows solely through the charging functions, over queries the curator
** wrote: a query's own running time, and whether it fails, can encode any
** private value it reads (an application that owns the connection, names
** the curator's queries and keeps the analyst's SQL off the private tables
** with an authorizer: examples/binding_ledger.py). Whoever can run
** arbitrary SQL on the connection can read the rows directly, or edit the
** records below: for them the ledger is a record, not a limit.
**
** Contract:
**   1. The charges live in a separate SQLite file (default: the database file
**      name + "-rdt-ledger"), written through a connection of the ledger's
**      own. A charge commits there before the function reads its first row,
**      so the caller's ROLLBACK cannot undo it (a model already seen cannot be
**      un-seen), and a write transaction the caller holds on its own database
**      cannot block it.
**   2. Check and charge are one BEGIN IMMEDIATE transaction on the ledger
**      file: two connections or processes charging at once are serialised by
**      SQLite's write lock, so together they never exceed the budget.
**   3. Amounts are exact: ε is kept as integer numerators over 2^32, the
**      same rationals the samplers use; budgets are rounded down.
**   4. The ledger file must be durable: an empty name, ':memory:' and 'file:'
**      URIs are refused (their charges could vanish with the connection).
**   5. The database holding the virtual table records, in its table
**      rdt_ledger_files(name, file), the canonical (realpath'd) file of each
**      ledger created in it. Dropping the virtual table keeps the ledger file
**      and that row: spent budget is never forgotten. Re-creating a ledger of
**      the same name (ASCII case ignored, as SQL names) must name the same
**      file and the same budget; connecting one whose file now resolves
**      elsewhere (a relative path from another directory, a moved database)
**      is refused. A ledger is created outside BEGIN ... COMMIT, so that its
**      row cannot be rolled back while its charges stand.
**   6. No ledger lives in the temp schema (it would last one connection and
**      shadow a durable ledger of the same name); ledger names hold no '.'.
**   7. "ledger" names a table as "name" or "schema.name". A bare name that
**      names ledgers in two schemas (main and an attached database) is
**      refused as ambiguous rather than charged to either.
**   8. An audit log: a charge is recorded with its outcome "pending",
**      committed before any row is read (item 1); when the call ends, one
**      more statement sets the outcome, "released" or "failed", and for a
**      released model its id, the SHA-256 of its BLOB and what was actually
**      trained (rdt_ledger_record). None of these is a row value: each is the
**      released model or a function of it, except the outcome itself, which
**      says whether the call failed after reading rows (a residual channel,
**      docs/privacy.md, "Residual channels"). A call cut short (the process killed)
**      stays "pending". A release whose outcome cannot be recorded is not
**      released (the caller fails closed).
**   9. A charge may carry the caller's "note" (public text, the caller's).
**      Ledger files written before items 8-9 gain their columns when next
**      opened; their old charges show a NULL outcome.
**  10. A plan (rdt_plan, sql_shard.c) is charged once, pending, with its
**      digest at the end of its request; rdt_finish takes the charge over
**      (rdt_ledger_resume) and records its outcome there. Only a pending
**      charge can be taken over, so a plan releases one model. A plan of
**      several rounds moves its charge from "pending" through "round 1",
**      "round 2", ... (each with the SHA-256 of the round message released,
**      in model_sha256) to "released" or "failed": every update names the
**      outcome it replaces, so each round releases once, and a round resumes
**      only from the message its predecessor released.
** A charge is made when training starts; if training then fails, the budget
** stays spent (the safe direction).
*/
#define _XOPEN_SOURCE 700 /* realpath (XSI) */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/noise.h"
#include "rdt_sql.h"

typedef struct rdt_ledger {
  struct rdt_ledger *next;
  char *schema;      /* the database holding the virtual table (main or attached) */
  char *name;        /* the virtual table's name */
  char *file;        /* the ledger file, canonical */
  sqlite3 *store;    /* the ledger file's own connection */
  uint64_t budget;   /* numerator over 2^32 */
} rdt_ledger;

typedef struct {
  sqlite3_vtab base;
  rdt_conn *conn;
  rdt_ledger *ledger;
} ledger_vtab;

/* The columns of a charge read back from the file, in the order of
** CHARGE_COLUMNS; NULL where the file holds NULL. */
enum { C_TIME, C_FUNCTION, C_NOTE, C_OUTCOME, C_MODEL_ID, C_MODEL_SHA256, C_TRAINED, C_REQUEST, C_TEXTS };

typedef struct {
  sqlite3_int64 id;
  char *text[C_TEXTS];
  uint64_t eps;
  uint64_t spent; /* this charge and every one before it */
} charge_row;

typedef struct {
  sqlite3_vtab_cursor base;
  charge_row *rows;
  sqlite3_int64 n, at;
  uint64_t budget;
} ledger_cursor;

/* rdt_charges.note holds what the call asked for (the table's `request`:
** its name predates the audit columns); curator_note is the caller's note. */
static const char *const LEDGER_SCHEMA =
    "CREATE TABLE IF NOT EXISTS rdt_ledgers(name TEXT PRIMARY KEY, budget_num INTEGER NOT NULL, created TEXT);"
    "CREATE TABLE IF NOT EXISTS rdt_charges(id INTEGER PRIMARY KEY, ledger TEXT NOT NULL, time TEXT NOT NULL,"
    " function TEXT NOT NULL, epsilon_num INTEGER NOT NULL, note TEXT);";
/* The audit columns (contract item 8), added to files that lack them. */
static const char *const AUDIT_COLUMNS[] = {"outcome", "model_id", "model_sha256", "trained", "curator_note"};
#define N_AUDIT_COLUMNS (sizeof AUDIT_COLUMNS / sizeof AUDIT_COLUMNS[0])
/* What the cursor reads, in the order of the C_ enum. */
#define CHARGE_COLUMNS "time, function, curator_note, outcome, model_id, model_sha256, trained, note"

/* 1 if rdt_charges has the column, 0 if not; an SQLite code < 0 on error. */
static int has_column(sqlite3 *store, const char *column) {
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(store, "SELECT 1 FROM pragma_table_info('rdt_charges') WHERE name = ?1", -1, &q, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 1, column, -1, SQLITE_STATIC);
    rc = sqlite3_step(q);
  }
  sqlite3_finalize(q);
  return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -(rc ? rc : SQLITE_ERROR);
}

/* Adds the audit columns a ledger file lacks, in one IMMEDIATE transaction
** (two connections opening an old file at once add them once). A file that
** has them all is only read: a read-only ledger file can still be listed. */
static int add_audit_columns(sqlite3 *store) {
  int missing = 0, has;
  for (size_t i = 0; i < N_AUDIT_COLUMNS; i++) {
    if ((has = has_column(store, AUDIT_COLUMNS[i])) < 0) return -has;
    missing |= !has;
  }
  if (!missing) return SQLITE_OK;
  int rc = sqlite3_exec(store, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  for (size_t i = 0; rc == SQLITE_OK && i < N_AUDIT_COLUMNS; i++) {
    if ((has = has_column(store, AUDIT_COLUMNS[i])) < 0) rc = -has; /* again, under the lock */
    if (rc == SQLITE_OK && !has) {
      char *sql = sqlite3_mprintf("ALTER TABLE rdt_charges ADD COLUMN %s TEXT", AUDIT_COLUMNS[i]);
      rc = sql ? sqlite3_exec(store, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
      sqlite3_free(sql);
    }
  }
  if (rc == SQLITE_OK) rc = sqlite3_exec(store, "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK) sqlite3_exec(store, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

/* Parse "key=value" arguments; each key at most once. */
static int ledger_args(int argc, const char *const *argv, double *budget, char **file, char **err) {
  *budget = -1;
  *file = NULL;
  int seen_budget = 0;
  for (int i = 3; i < argc; i++) {
    const char *a = argv[i], *eq = strchr(a, '=');
    if (!eq) {
      *err = sqlite3_mprintf("rdt_ledger: expected key=value arguments, got %s", a);
      goto fail;
    }
    size_t klen = (size_t)(eq - a);
    while (klen && a[klen - 1] == ' ') klen--;
    const char *v = eq + 1;
    while (*v == ' ') v++;
    int is_budget = klen == 14 && strncmp(a, "epsilon_budget", 14) == 0;
    int is_file = klen == 4 && strncmp(a, "file", 4) == 0;
    if (!is_budget && !is_file) {
      *err = sqlite3_mprintf("rdt_ledger: unknown argument %.*s (epsilon_budget, file)", (int)klen, a);
      goto fail;
    }
    if (is_budget ? seen_budget : *file != NULL) {
      *err = sqlite3_mprintf("rdt_ledger: %.*s is given twice", (int)klen, a);
      goto fail;
    }
    if (is_budget) {
      char *end;
      seen_budget = 1;
      *budget = strtod(v, &end);
      if (end == v) *budget = -1;
    } else {
      size_t n = strlen(v);
      if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
        v++;
        n -= 2;
      }
      *file = sqlite3_mprintf("%.*s", (int)n, v);
      if (!*file) goto fail; /* NULL *err: out of memory */
    }
  }
  return 1;
fail:
  sqlite3_free(*file);
  *file = NULL;
  return 0;
}

/* 0 for a name SQLite gives a special meaning: ':memory:', '' (a temporary
** file) and, in builds with URIs on (the common case), 'file:...', which can
** name an in-memory database. Their charges would vanish with the connection. */
static int durable_file_name(const char *file) {
  return *file && strcmp(file, ":memory:") != 0 && sqlite3_strnicmp(file, "file:", 5) != 0;
}

/* The canonical absolute path of file (which need not exist yet: then its
** directory is resolved). NULL with *err set, or NULL alone on no memory. */
static char *canonical_path(const char *file, char **err) {
  char *r = realpath(file, NULL), *out = NULL;
  if (r) {
    out = sqlite3_mprintf("%s", r);
    free(r);
    return out;
  }
  const char *slash = strrchr(file, '/'), *base = slash ? slash + 1 : file;
  if (errno == ENOENT && *base && strcmp(base, ".") != 0 && strcmp(base, "..") != 0) {
    char *dir = slash ? sqlite3_mprintf("%.*s", (int)(slash == file ? 1 : slash - file), file) : sqlite3_mprintf(".");
    if (!dir) return NULL;
    r = realpath(dir, NULL);
    sqlite3_free(dir);
    if (r) {
      out = sqlite3_mprintf("%s%s%s", r, strcmp(r, "/") == 0 ? "" : "/", base);
      free(r);
      return out;
    }
  }
  *err = sqlite3_mprintf("rdt_ledger: cannot resolve the ledger file '%s': %s", file, strerror(errno));
  return NULL;
}

/* The file recorded for ledger `name` in schema's rdt_ledger_files, into
** *recorded (NULL: none, or no such table yet). 0 on error (*err or no memory). */
static int recorded_file(sqlite3 *db, const char *schema, const char *name, char **recorded, char **err) {
  *recorded = NULL;
  sqlite3_stmt *q = NULL;
  /* No SQL functions here: an application's authorizer may allow few (this
  ** runs on its connection, from within a charging function). */
  char *sql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_master WHERE type = 'table' AND name = 'rdt_ledger_files'",
                              schema);
  int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &q, NULL) : SQLITE_NOMEM;
  sqlite3_free(sql);
  int exists = rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW;
  if (rc == SQLITE_OK) rc = sqlite3_finalize(q);
  q = NULL;
  if (rc == SQLITE_OK && exists) {
    sql = sqlite3_mprintf("SELECT file FROM \"%w\".rdt_ledger_files WHERE name = ?1 COLLATE NOCASE", schema);
    rc = sql ? sqlite3_prepare_v2(db, sql, -1, &q, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc == SQLITE_OK) {
      sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
      int step = sqlite3_step(q);
      if (step == SQLITE_ROW) {
        *recorded = sqlite3_mprintf("%s", sqlite3_column_text(q, 0));
        if (!*recorded) rc = SQLITE_NOMEM;
      } else if (step != SQLITE_DONE) {
        rc = step;
      }
      sqlite3_finalize(q);
    }
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
    *err = sqlite3_mprintf("rdt_ledger: cannot read %s.rdt_ledger_files: %s", schema, sqlite3_errmsg(db));
  return rc == SQLITE_OK;
}

/* Create: make sure schema's rdt_ledger_files exists (in the same database as
** the virtual table, so it travels with it). */
static int record_table(sqlite3 *db, const char *schema, char **err) {
  char *sql = sqlite3_mprintf("CREATE TABLE IF NOT EXISTS \"%w\".rdt_ledger_files("
                              "name TEXT PRIMARY KEY COLLATE NOCASE, file TEXT NOT NULL)", schema);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  sqlite3_free(sql);
  if (rc != SQLITE_OK)
    *err = sqlite3_mprintf("rdt_ledger: cannot create %s.rdt_ledger_files: %s", schema, sqlite3_errmsg(db));
  return rc;
}

static int record_insert(sqlite3 *db, const char *schema, const char *name, const char *file, char **err) {
  sqlite3_stmt *q = NULL;
  char *sql = sqlite3_mprintf("INSERT INTO \"%w\".rdt_ledger_files(name, file) VALUES (?1, ?2)", schema);
  int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &q, NULL) : SQLITE_NOMEM;
  sqlite3_free(sql);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, file, -1, SQLITE_STATIC);
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(q);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM)
    *err = sqlite3_mprintf("rdt_ledger: cannot record the ledger in %s.rdt_ledger_files: %s", schema,
                           sqlite3_errmsg(db));
  return rc;
}

static void ledger_free(rdt_ledger *l) {
  if (!l) return;
  if (l->store) sqlite3_close_v2(l->store);
  sqlite3_free(l->schema);
  sqlite3_free(l->name);
  sqlite3_free(l->file);
  sqlite3_free(l);
}

static void ledger_unregister(rdt_conn *conn, rdt_ledger *l) {
  for (rdt_ledger **p = &conn->ledgers; *p; p = &(*p)->next) {
    if (*p == l) {
      *p = l->next;
      break;
    }
  }
  ledger_free(l);
}

/* Open the ledger file, check or record the budget row (names compared as
** SQL compares table names, so "Budget" cannot start a fresh budget). */
static int store_open(rdt_ledger *l, int create, rdt_eps b, char **err) {
  int rc = sqlite3_open_v2(l->file, &l->store, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_busy_timeout(l->store, 30000);
  if (rc == SQLITE_OK) rc = sqlite3_exec(l->store, LEDGER_SCHEMA, NULL, NULL, NULL);
  if (rc == SQLITE_OK) rc = add_audit_columns(l->store);
  sqlite3_stmt *q = NULL;
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(l->store, "SELECT budget_num FROM rdt_ledgers WHERE name = ?1 COLLATE NOCASE "
                            "ORDER BY budget_num LIMIT 1", -1, &q, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 1, l->name, -1, SQLITE_STATIC);
    int step = sqlite3_step(q);
    if (step == SQLITE_ROW) {
      l->budget = (uint64_t)sqlite3_column_int64(q, 0);
      if (create && l->budget != b.num) {
        *err = sqlite3_mprintf("rdt_ledger: the ledger \"%s\" already exists in this file with epsilon_budget=%.17g; "
                               "a budget cannot be changed by re-creating its table",
                               l->name, rdt_eps_to_double((rdt_eps){l->budget}));
        rc = SQLITE_ERROR;
      }
    } else if (step == SQLITE_DONE && create) {
      l->budget = b.num;
      sqlite3_stmt *ins;
      rc = sqlite3_prepare_v2(l->store, "INSERT INTO rdt_ledgers VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ'))", -1,
                              &ins, NULL);
      if (rc == SQLITE_OK) {
        sqlite3_bind_text(ins, 1, l->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 2, (sqlite3_int64)b.num);
        rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_finalize(ins);
      }
    } else if (step == SQLITE_DONE) {
      *err = sqlite3_mprintf("rdt_ledger: the ledger \"%s\" is missing from its file %s", l->name, l->file);
      rc = SQLITE_ERROR;
    } else {
      rc = step;
    }
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_OK && !*err)
    *err = sqlite3_mprintf("rdt_ledger: %s: %s", l->file,
                           l->store ? sqlite3_errmsg(l->store) : "cannot open the ledger file");
  return rc;
}

static int ledger_open(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err,
                       int create) {
  rdt_conn *conn = aux;
  double budget;
  char *file = NULL, *recorded = NULL;
  const char *schema = argv[1], *name = argv[2];
  if (!ledger_args(argc, argv, &budget, &file, err)) return *err ? SQLITE_ERROR : SQLITE_NOMEM;
  rdt_eps b = {0};
  int rc = SQLITE_OK;
  if (create && (!(budget > 0) || !rdt_eps_from_double(budget, &b))) {
    *err = sqlite3_mprintf("rdt_ledger: epsilon_budget=<number from 1e-06 to 1e+06> is required");
  } else if (sqlite3_stricmp(schema, "temp") == 0) {
    *err = sqlite3_mprintf("rdt_ledger: a ledger cannot live in the temp schema: a temp table lasts one connection "
                           "and would shadow a durable ledger of the same name; create it in main or an attached "
                           "database");
  } else if (strchr(name, '.')) {
    *err = sqlite3_mprintf("rdt_ledger: a ledger's name cannot contain '.' (\"ledger\" options read "
                           "\"schema.name\")");
  } else if (file && !durable_file_name(file)) {
    *err = sqlite3_mprintf("rdt_ledger: file='%s' is not a durable file; give a plain file path (an empty name, "
                           "':memory:' and 'file:' URIs are refused: their charges could vanish with the connection)",
                           file);
  } else if (!file) {
    const char *main = sqlite3_db_filename(db, schema);
    if (!main || !*main)
      *err = sqlite3_mprintf("rdt_ledger: an in-memory or temporary database needs file='path' for its ledger "
                             "(the charges must outlive the connection)");
    else if (!(file = sqlite3_mprintf("%s-rdt-ledger", main)))
      rc = SQLITE_NOMEM;
  }
  if (!*err && rc == SQLITE_OK && create && !sqlite3_get_autocommit(db))
    *err = sqlite3_mprintf("rdt_ledger: create the ledger outside BEGIN ... COMMIT: its row in %s.rdt_ledger_files "
                           "must not be rolled back while its charges stand (a transaction is open on this "
                           "connection; Python's sqlite3 opens one by itself before INSERT, UPDATE or DELETE: "
                           "commit() first, or connect with isolation_level=None)", schema);
  if (*err) rc = SQLITE_ERROR;

  rdt_ledger *l = NULL;
  ledger_vtab *v = NULL;
  if (rc == SQLITE_OK) {
    l = sqlite3_malloc(sizeof *l);
    v = sqlite3_malloc(sizeof *v);
    if (l) memset(l, 0, sizeof *l);
    if (v) memset(v, 0, sizeof *v);
    if (l) l->schema = sqlite3_mprintf("%s", schema);
    if (l) l->name = sqlite3_mprintf("%s", name);
    if (l) l->file = canonical_path(file, err);
    if (!l || !v || !l->schema || !l->name || !l->file) rc = *err ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  /* The recorded file wins over a re-created or re-resolved one: checked
  ** before the ledger file is opened, so a refusal creates no stray file. */
  if (rc == SQLITE_OK && create) rc = record_table(db, schema, err);
  if (rc == SQLITE_OK && !recorded_file(db, schema, name, &recorded, err)) rc = *err ? SQLITE_ERROR : SQLITE_NOMEM;
  if (rc == SQLITE_OK && recorded && strcmp(recorded, l->file) != 0) {
    if (create)
      *err = sqlite3_mprintf("rdt_ledger: the ledger \"%s\" was created in this database with file '%s' (recorded in "
                             "%s.rdt_ledger_files); it cannot be re-created with file '%s', which would start a fresh "
                             "budget", name, recorded, schema, l->file);
    else
      *err = sqlite3_mprintf("rdt_ledger: the ledger \"%s\" is recorded in %s.rdt_ledger_files with file '%s', but its "
                             "table now resolves to file '%s' (a relative path read from another directory, or a moved "
                             "database: update that row to move a ledger)", name, schema, recorded, l->file);
    rc = SQLITE_ERROR;
  }
  if (rc == SQLITE_OK) rc = store_open(l, create, b, err);
  if (rc == SQLITE_OK)
    rc = sqlite3_declare_vtab(db, "CREATE TABLE x(id INTEGER, kind TEXT, time TEXT, function TEXT, epsilon REAL, "
                                  "note TEXT, spent REAL, remaining REAL, outcome TEXT, model_id TEXT, "
                                  "model_sha256 TEXT, trained TEXT, request TEXT)");
  if (rc != SQLITE_OK && rc != SQLITE_NOMEM && !*err) *err = sqlite3_mprintf("rdt_ledger: %s", sqlite3_errmsg(db));
  if (rc == SQLITE_OK && create && !recorded) rc = record_insert(db, schema, name, l->file, err);
  sqlite3_free(file);
  sqlite3_free(recorded);
  if (rc != SQLITE_OK) {
    ledger_free(l);
    sqlite3_free(v);
    return rc;
  }
  l->next = conn->ledgers;
  conn->ledgers = l;
  v->conn = conn;
  v->ledger = l;
  *out = &v->base;
  return SQLITE_OK;
}

static int ledger_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  return ledger_open(db, aux, argc, argv, out, err, 1);
}

static int ledger_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  return ledger_open(db, aux, argc, argv, out, err, 0);
}

static int ledger_disconnect(sqlite3_vtab *tab) {
  ledger_vtab *v = (ledger_vtab *)tab;
  ledger_unregister(v->conn, v->ledger);
  sqlite3_free(v);
  return SQLITE_OK;
}

static int ledger_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  info->estimatedCost = 1000;
  return SQLITE_OK;
}

static int ledger_open_cursor(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  ledger_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_clear(ledger_cursor *c) {
  for (sqlite3_int64 i = 0; i < c->n; i++)
    for (int k = 0; k < C_TEXTS; k++) sqlite3_free(c->rows[i].text[k]);
  sqlite3_free(c->rows);
  c->rows = NULL;
  c->n = c->at = 0;
}

static int ledger_close(sqlite3_vtab_cursor *cur) {
  cursor_clear((ledger_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int ledger_filter(sqlite3_vtab_cursor *cur, int idx, const char *s, int argc, sqlite3_value **argv) {
  (void)idx;
  (void)s;
  (void)argc;
  (void)argv;
  ledger_cursor *c = (ledger_cursor *)cur;
  rdt_ledger *l = ((ledger_vtab *)cur->pVtab)->ledger;
  cursor_clear(c);
  c->budget = l->budget;
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(l->store,
                              "SELECT id, epsilon_num, " CHARGE_COLUMNS " FROM rdt_charges "
                              "WHERE ledger = ?1 COLLATE NOCASE ORDER BY id", -1, &q, NULL);
  if (rc != SQLITE_OK) return rc;
  sqlite3_bind_text(q, 1, l->name, -1, SQLITE_STATIC);
  sqlite3_int64 cap = 0;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    if (c->n == cap) {
      cap = cap ? 2 * cap : 16;
      charge_row *r = sqlite3_realloc64(c->rows, (sqlite3_uint64)cap * sizeof *r);
      if (!r) {
        sqlite3_finalize(q);
        return SQLITE_NOMEM;
      }
      c->rows = r;
    }
    charge_row *r = &c->rows[c->n++];
    r->id = sqlite3_column_int64(q, 0);
    r->eps = (uint64_t)sqlite3_column_int64(q, 1);
    r->spent = r->eps + (c->n > 1 ? c->rows[c->n - 2].spent : 0);
    int nomem = 0;
    for (int k = 0; k < C_TEXTS; k++) {
      int null = sqlite3_column_type(q, 2 + k) == SQLITE_NULL;
      r->text[k] = null ? NULL : sqlite3_mprintf("%s", sqlite3_column_text(q, 2 + k));
      nomem |= !null && !r->text[k];
    }
    if (nomem) {
      sqlite3_finalize(q);
      return SQLITE_NOMEM; /* the row is counted: cursor_clear frees what was allocated */
    }
  }
  sqlite3_finalize(q);
  c->at = -1; /* the budget row first */
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int ledger_next(sqlite3_vtab_cursor *cur) {
  ((ledger_cursor *)cur)->at++;
  return SQLITE_OK;
}

static int ledger_eof(sqlite3_vtab_cursor *cur) {
  ledger_cursor *c = (ledger_cursor *)cur;
  return c->at >= c->n;
}

static void result_text(sqlite3_context *ctx, const char *text) {
  if (text) sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
  else sqlite3_result_null(ctx);
}

static int ledger_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ledger_cursor *c = (ledger_cursor *)cur;
  const charge_row *r = c->at >= 0 ? &c->rows[c->at] : NULL;
  uint64_t spent = r ? r->spent : 0;
  /* The text columns after the first eight, in declaration order. */
  static const int audit[] = {C_OUTCOME, C_MODEL_ID, C_MODEL_SHA256, C_TRAINED, C_REQUEST};
  switch (col) {
    case 0: sqlite3_result_int64(ctx, r ? r->id : 0); break;
    case 1: sqlite3_result_text(ctx, r ? "charge" : "budget", -1, SQLITE_STATIC); break;
    case 2: result_text(ctx, r ? r->text[C_TIME] : NULL); break;
    case 3: result_text(ctx, r ? r->text[C_FUNCTION] : NULL); break;
    case 4: sqlite3_result_double(ctx, rdt_eps_to_double((rdt_eps){r ? r->eps : c->budget})); break;
    case 5: result_text(ctx, r ? r->text[C_NOTE] : NULL); break;
    case 6: sqlite3_result_double(ctx, rdt_eps_to_double((rdt_eps){spent})); break;
    case 7: sqlite3_result_double(ctx, rdt_eps_to_double((rdt_eps){c->budget - spent})); break;
    default:
      if (col - 8 < (int)(sizeof audit / sizeof audit[0])) result_text(ctx, r ? r->text[audit[col - 8]] : NULL);
      break;
  }
  return SQLITE_OK;
}

static int ledger_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((ledger_cursor *)cur)->at + 1;
  return SQLITE_OK;
}

static sqlite3_module ledger_module = {
    .iVersion = 0,
    .xCreate = ledger_create,
    .xConnect = ledger_connect,
    .xBestIndex = ledger_best_index,
    .xDisconnect = ledger_disconnect,
    .xDestroy = ledger_disconnect, /* the ledger file keeps its charges */
    .xOpen = ledger_open_cursor,
    .xClose = ledger_close,
    .xFilter = ledger_filter,
    .xNext = ledger_next,
    .xEof = ledger_eof,
    .xColumn = ledger_column,
    .xRowid = ledger_rowid,
};

int rdt_register_ledger(sqlite3 *db, rdt_conn *conn, void (*release)(void *)) {
  return sqlite3_create_module_v2(db, "rdt_ledger", &ledger_module, conn, release);
}

static rdt_ledger *find_ledger(rdt_conn *conn, const char *schema, const char *name) {
  rdt_ledger *l = conn->ledgers;
  while (l && (sqlite3_stricmp(l->schema, schema) != 0 || sqlite3_stricmp(l->name, name) != 0)) l = l->next;
  return l;
}

/* SQLite connects a virtual table the first time a statement names it: name
** schema.name once so that a ledger created by another connection is found.
** Returns 0 with a message when the table exists but cannot be connected (its
** file was refused, say); a missing table is not an error here. */
static int connect_table(sqlite3 *db, const char *schema, const char *name, const char *option, char *err,
                         size_t err_size) {
  char *sql = sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" LIMIT 0", schema, name);
  if (!sql) {
    snprintf(err, err_size, "out of memory");
    return 0;
  }
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
  sqlite3_free(sql);
  sqlite3_finalize(q);
  if (rc == SQLITE_OK || strncmp(sqlite3_errmsg(db), "no such table", 13) == 0) return 1;
  snprintf(err, err_size, "cannot open the ledger \"%.100s\": %.300s", option, sqlite3_errmsg(db));
  return 0;
}

/* The ledger named by the option: "schema.name", or a bare name, which must
** name a ledger in exactly one schema (temp, main or attached). */
static rdt_ledger *resolve_ledger(sqlite3 *db, rdt_conn *conn, const char *option, char *err, size_t err_size) {
  const char *dot = strrchr(option, '.');
  char *schema = dot ? sqlite3_mprintf("%.*s", (int)(dot - option), option) : NULL, *found = NULL;
  const char *name = dot ? dot + 1 : option;
  rdt_ledger *l = NULL;
  int matches = 0, ok = 1;
  sqlite3_str *where = sqlite3_str_new(NULL);
  if ((dot && !schema) || sqlite3_str_errcode(where)) {
    snprintf(err, err_size, "out of memory");
    ok = 0;
  } else if (schema) {
    ok = connect_table(db, schema, name, option, err, err_size);
    if (ok) l = find_ledger(conn, schema, name);
  } else {
    sqlite3_stmt *dbs = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &dbs, NULL);
    while (ok && rc == SQLITE_OK && (rc = sqlite3_step(dbs)) == SQLITE_ROW) {
      const char *s = (const char *)sqlite3_column_text(dbs, 1);
      if (!s) continue;
      ok = connect_table(db, s, name, option, err, err_size);
      if (ok && find_ledger(conn, s, name)) {
        if (matches++) sqlite3_str_appendall(where, " and ");
        sqlite3_str_appendall(where, s);
        if (!found) found = sqlite3_mprintf("%s", s);
        if (!found) {
          snprintf(err, err_size, "out of memory");
          ok = 0;
        }
      }
      rc = SQLITE_OK;
    }
    if (ok && rc != SQLITE_DONE && rc != SQLITE_OK) {
      snprintf(err, err_size, "cannot list the databases of this connection: %.300s", sqlite3_errmsg(db));
      ok = 0;
    }
    sqlite3_finalize(dbs);
    if (ok && sqlite3_str_errcode(where)) {
      snprintf(err, err_size, "out of memory");
      ok = 0;
    }
    if (ok && matches > 1) {
      snprintf(err, err_size, "the ledger name \"%.100s\" is ambiguous: %.300s each hold an rdt_ledger table of that "
               "name; name one with its schema, e.g. \"%.100s.%.100s\"", option, sqlite3_str_value(where), found, name);
      ok = 0;
    }
    /* Looked up again after every statement above: none may keep a pointer
    ** into the registry while SQLite might disconnect a table. */
    if (ok && matches == 1) l = find_ledger(conn, found, name);
  }
  if (ok && !l)
    snprintf(err, err_size, "no rdt_ledger table named \"%.100s\" in this connection (CREATE VIRTUAL TABLE %.100s "
             "USING rdt_ledger(epsilon_budget=...))", option, option);
  sqlite3_free(sqlite3_str_finish(where));
  sqlite3_free(schema);
  sqlite3_free(found);
  return ok ? l : NULL;
}

void rdt_ledger_receipt_free(rdt_ledger_receipt *r) {
  sqlite3_free(r->file);
  sqlite3_free(r->name);
  memset(r, 0, sizeof *r);
}

/* Keeps the ledger's file and name in the receipt, to record the outcome in
** the same file once the call ends; 0 (receipt emptied) without memory. */
static int receipt_keep(rdt_ledger_receipt *receipt, const rdt_ledger *l, char *err, size_t err_size) {
  receipt->file = sqlite3_mprintf("%s", l->file);
  receipt->name = sqlite3_mprintf("%s", l->name);
  if (receipt->file && receipt->name) return 1;
  rdt_ledger_receipt_free(receipt);
  snprintf(err, err_size, "out of memory");
  return 0;
}

int rdt_ledger_charge(sqlite3 *db, rdt_conn *conn, const char *option, rdt_eps eps, const char *function,
                      const char *request, const char *note, rdt_ledger_receipt *receipt, char *err, size_t err_size) {
  rdt_ledger_receipt_free(receipt);
  rdt_ledger *l = resolve_ledger(db, conn, option, err, err_size);
  if (!l) return 0;
  if (!receipt_keep(receipt, l, err, err_size)) return 0;
  const char *name = option; /* for messages; the file is keyed by l->name */
  /* Check and charge in one IMMEDIATE transaction: the write lock serialises
  ** every connection and process that charges this ledger. */
  int rc = sqlite3_exec(l->store, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    snprintf(err, err_size, "cannot lock the ledger \"%.100s\": %s", name, sqlite3_errmsg(l->store));
    return 0;
  }
  sqlite3_stmt *q;
  uint64_t spent = 0;
  rc = sqlite3_prepare_v2(l->store, "SELECT coalesce(sum(epsilon_num), 0) FROM rdt_charges WHERE ledger = ?1 "
                          "COLLATE NOCASE", -1, &q, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 1, l->name, -1, SQLITE_STATIC);
    rc = sqlite3_step(q) == SQLITE_ROW ? SQLITE_OK : SQLITE_ERROR;
    spent = (uint64_t)sqlite3_column_int64(q, 0); /* exact: integer numerators */
    sqlite3_finalize(q);
  }
  if (rc == SQLITE_OK && (spent > l->budget || eps.num > l->budget - spent)) {
    sqlite3_exec(l->store, "ROLLBACK", NULL, NULL, NULL);
    snprintf(err, err_size, "over budget: ledger \"%.100s\" has %.17g of epsilon left, %.17g was requested; "
             "nothing was charged", name, rdt_eps_to_double((rdt_eps){l->budget - (spent > l->budget ? l->budget : spent)}),
             rdt_eps_to_double(eps));
    return 0;
  }
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(l->store, "INSERT INTO rdt_charges(ledger, time, function, epsilon_num, note, outcome, "
                                      "curator_note) VALUES (?1, strftime('%Y-%m-%dT%H:%M:%fZ'), ?2, ?3, ?4, "
                                      "'pending', ?5)", -1, &q, NULL);
  sqlite3_int64 id = 0;
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 1, l->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, function, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 3, (sqlite3_int64)eps.num);
    sqlite3_bind_text(q, 4, request, -1, SQLITE_STATIC);
    if (note && *note) sqlite3_bind_text(q, 5, note, -1, SQLITE_STATIC);
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    id = sqlite3_last_insert_rowid(l->store);
    sqlite3_finalize(q);
  }
  if (rc == SQLITE_OK) rc = sqlite3_exec(l->store, "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    snprintf(err, err_size, "cannot record the charge in ledger \"%.100s\": %s", name, sqlite3_errmsg(l->store));
    sqlite3_exec(l->store, "ROLLBACK", NULL, NULL, NULL);
    rdt_ledger_receipt_free(receipt);
    return 0;
  }
  receipt->id = id;
  return 1;
}

/* The SHA-256 of a BLOB, in hex. */
static void sha256_hex(const unsigned char *p, size_t n, char out[2 * crypto_hash_sha256_BYTES + 1]) {
  unsigned char sha[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(sha, p, n);
  sodium_bin2hex(out, 2 * crypto_hash_sha256_BYTES + 1, sha, sizeof sha);
}

int rdt_ledger_resume(sqlite3 *db, rdt_conn *conn, const char *option, sqlite3_int64 id, const char *function,
                      const char *tail, uint32_t round, const unsigned char *message, size_t message_len,
                      rdt_ledger_receipt *receipt, char *err, size_t err_size) {
  rdt_ledger_receipt_free(receipt);
  rdt_ledger *l = resolve_ledger(db, conn, option, err, err_size);
  if (!l) return 0;
  char want[24] = "pending", sha[2 * crypto_hash_sha256_BYTES + 1] = "";
  if (round) {
    snprintf(want, sizeof want, "round %u", round);
    sha256_hex(message, message_len, sha);
  }
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(l->store, "SELECT function, note, outcome, model_sha256 FROM rdt_charges WHERE id = ?1 "
                                        "AND ledger = ?2 COLLATE NOCASE", -1, &q, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_text(q, 2, l->name, -1, SQLITE_STATIC);
    rc = sqlite3_step(q);
  }
  int ok = 0;
  if (rc == SQLITE_ROW) {
    const char *fn = (const char *)sqlite3_column_text(q, 0), *request = (const char *)sqlite3_column_text(q, 1);
    const char *outcome = (const char *)sqlite3_column_text(q, 2), *hash = (const char *)sqlite3_column_text(q, 3);
    size_t n = request ? strlen(request) : 0, t = strlen(tail);
    if (!fn || strcmp(fn, function) != 0 || n < t || strcmp(request + n - t, tail) != 0)
      snprintf(err, err_size, "the charge %lld in ledger \"%.100s\" is not this plan's (it names another call)",
               (long long)id, option);
    else if (!outcome || strcmp(outcome, want) != 0)
      snprintf(err, err_size, "the plan's charge %lld in ledger \"%.100s\" is \"%.20s\", not %s: a plan "
               "releases each round and its model once (its epsilon was charged once); %s", (long long)id, option,
               outcome ? outcome : "NULL", round ? want : "pending",
               outcome && strncmp(outcome, "round ", 6) == 0 ? "go on from its last round message"
                                                             : "make a new plan");
    else if (round && (!hash || strcmp(hash, sha) != 0))
      snprintf(err, err_size, "the round message is not the one the plan's charge %lld in ledger \"%.100s\" "
               "recorded for round %u: rdt_finish goes on only from the message it released last", (long long)id,
               option, round);
    else
      ok = 1;
  } else if (rc == SQLITE_DONE) {
    snprintf(err, err_size, "the plan's charge %lld is not in ledger \"%.100s\" (another ledger of that name, or a "
             "replaced file)", (long long)id, option);
  } else {
    snprintf(err, err_size, "cannot read ledger \"%.100s\": %s", option, sqlite3_errmsg(l->store));
  }
  sqlite3_finalize(q);
  if (!ok) return 0;
  if (!receipt_keep(receipt, l, err, err_size)) return 0;
  receipt->id = id;
  if (round) snprintf(receipt->outcome, sizeof receipt->outcome, "%s", want);
  return 1;
}

/* The UPDATE of a charge's outcome, guarded by the outcome it replaces;
** binds ?1 (id) and ?5 (that outcome). */
static int update_charge(rdt_ledger_receipt *r, sqlite3 **store, const char *sql, sqlite3_stmt **q) {
  int rc = sqlite3_open_v2(r->file, store, SQLITE_OPEN_READWRITE, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_busy_timeout(*store, 30000);
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(*store, sql, -1, q, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(*q, 1, r->id);
    sqlite3_bind_text(*q, 5, r->outcome[0] ? r->outcome : "pending", -1, SQLITE_STATIC);
  }
  return rc;
}

int rdt_ledger_record_round(rdt_ledger_receipt *r, uint32_t next, const unsigned char *message, size_t size,
                            char *err, size_t err_size) {
  if (!r->id) return 1;
  char outcome[24], sha[2 * crypto_hash_sha256_BYTES + 1];
  snprintf(outcome, sizeof outcome, "round %u", next);
  sha256_hex(message, size, sha);
  sqlite3 *store = NULL;
  sqlite3_stmt *q = NULL;
  int rc = update_charge(r, &store, "UPDATE rdt_charges SET outcome = ?2, model_sha256 = ?3 WHERE id = ?1 AND "
                                    "outcome = ?5", &q);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 2, outcome, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, sha, -1, SQLITE_STATIC);
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    if (rc == SQLITE_OK && sqlite3_changes(store) != 1) {
      snprintf(err, err_size, "the charge %lld is no longer at %s in ledger \"%.100s\" (another rdt_finish took "
               "this round, or its row was edited)", (long long)r->id, r->outcome[0] ? r->outcome : "pending",
               r->name);
      rc = SQLITE_CONSTRAINT;
    }
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_OK && rc != SQLITE_CONSTRAINT)
    snprintf(err, err_size, "cannot record the round in ledger \"%.100s\": %s", r->name,
             store ? sqlite3_errmsg(store) : "out of memory");
  sqlite3_close_v2(store);
  if (rc != SQLITE_OK) return 0;
  snprintf(r->outcome, sizeof r->outcome, "%s", outcome);
  return 1;
}

int rdt_ledger_record(rdt_ledger_receipt *r, int released, const unsigned char *model, size_t size,
                      const char *trained, char *err, size_t err_size) {
  if (!r->id) return 1; /* nothing was charged */
  /* A connection of its own to the file the charge went to: the table's
  ** connection may be gone if SQLite disconnected the table meanwhile, and
  ** one path, always taken, is one path tested. */
  sqlite3 *store = NULL;
  /* A model's id sits in its header (sql/model-format.md), as
  ** rdt_info shows it; the hash covers the whole BLOB as released. */
  char id_hex[33] = "", sha_hex[2 * crypto_hash_sha256_BYTES + 1] = "";
  if (released && model && size >= RDT_MODEL_ID_OFFSET + 16) {
    sodium_bin2hex(id_hex, sizeof id_hex, model + RDT_MODEL_ID_OFFSET, 16);
    sha256_hex(model, size, sha_hex);
  }
  sqlite3_stmt *q = NULL;
  /* ?5: the outcome this record replaces (contract 10) */
  int rc = update_charge(r, &store, "UPDATE rdt_charges SET outcome = ?2, model_id = ?3, model_sha256 = ?4, "
                                    "trained = ?6 WHERE id = ?1 AND outcome = ?5", &q);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 2, released ? "released" : "failed", -1, SQLITE_STATIC);
    if (id_hex[0]) sqlite3_bind_text(q, 3, id_hex, -1, SQLITE_STATIC);
    if (sha_hex[0]) sqlite3_bind_text(q, 4, sha_hex, -1, SQLITE_STATIC);
    if (released && trained) sqlite3_bind_text(q, 6, trained, -1, SQLITE_STATIC);
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    if (rc == SQLITE_OK && sqlite3_changes(store) != 1) {
      snprintf(err, err_size, "the charge %lld is no longer %s in ledger \"%.100s\" (its row was edited%s)",
               (long long)r->id, r->outcome[0] ? r->outcome : "pending", r->name,
               r->outcome[0] ? ", or another rdt_finish took this round" : "");
      rc = SQLITE_CONSTRAINT;
    }
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_OK && rc != SQLITE_CONSTRAINT)
    snprintf(err, err_size, "cannot record the outcome in ledger \"%.100s\": %s", r->name,
             store ? sqlite3_errmsg(store) : "out of memory");
  sqlite3_close_v2(store); /* NULL: a no-op */
  r->id = 0; /* recorded (or not) once */
  return rc == SQLITE_OK;
}
