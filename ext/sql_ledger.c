/*
** sql_ledger.c - a privacy-budget ledger that cannot be overspent.
**
**   CREATE VIRTUAL TABLE budget USING rdt_ledger(epsilon_budget=3.0 [, file='path']);
**   SELECT rdt_train('{"epsilon": 1, "ledger": "budget", ...}', ...) FROM patients;
**   SELECT * FROM budget;   -- the budget row, then every charge with running totals
**
** Design (why it is durable and race-free):
**   1. The charges live in a separate SQLite file (default: the main database's
**      file name + "-rdt-ledger"), written through a connection of the
**      ledger's own. A charge commits there before the function reads its
**      first row, so the caller's ROLLBACK cannot undo it (a model already
**      seen cannot be un-seen), and a write transaction the caller holds on
**      its own database cannot block it.
**   2. Check and charge are one BEGIN IMMEDIATE transaction on the ledger
**      file: two connections or processes charging at once are serialised by
**      SQLite's write lock, so together they never exceed the budget.
**   3. Amounts are exact: ε is kept as integer numerators over 2^32, the
**      same rationals the samplers use; budgets are rounded down.
**   4. Dropping the virtual table keeps the ledger file: spent budget is
**      never forgotten. Re-creating a ledger of the same name reuses it
**      (its budget must match).
** A charge is made when training starts; if training then fails, the budget
** stays spent (the safe direction).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/noise.h"
#include "rdt_sql.h"

typedef struct rdt_ledger {
  struct rdt_ledger *next;
  char *name;        /* the virtual table's name */
  sqlite3 *store;    /* the ledger file's own connection */
  uint64_t budget;   /* numerator over 2^32 */
} rdt_ledger;

typedef struct {
  sqlite3_vtab base;
  rdt_conn *conn;
  rdt_ledger *ledger;
} ledger_vtab;

typedef struct {
  sqlite3_int64 id;
  char *time, *function, *note;
  uint64_t eps;
  uint64_t spent; /* this charge and every one before it */
} charge_row;

typedef struct {
  sqlite3_vtab_cursor base;
  charge_row *rows;
  sqlite3_int64 n, at;
  uint64_t budget;
} ledger_cursor;

static const char *const LEDGER_SCHEMA =
    "CREATE TABLE IF NOT EXISTS rdt_ledgers(name TEXT PRIMARY KEY, budget_num INTEGER NOT NULL, created TEXT);"
    "CREATE TABLE IF NOT EXISTS rdt_charges(id INTEGER PRIMARY KEY, ledger TEXT NOT NULL, time TEXT NOT NULL,"
    " function TEXT NOT NULL, epsilon_num INTEGER NOT NULL, note TEXT);";

/* Parse "key=value" arguments. */
static int ledger_args(int argc, const char *const *argv, double *budget, char **file, char **err) {
  *budget = -1;
  *file = NULL;
  for (int i = 3; i < argc; i++) {
    const char *a = argv[i], *eq = strchr(a, '=');
    if (!eq) {
      *err = sqlite3_mprintf("rdt_ledger: expected key=value arguments, got %s", a);
      return 0;
    }
    size_t klen = (size_t)(eq - a);
    while (klen && a[klen - 1] == ' ') klen--;
    const char *v = eq + 1;
    while (*v == ' ') v++;
    if (klen == 14 && strncmp(a, "epsilon_budget", 14) == 0) {
      char *end;
      *budget = strtod(v, &end);
      if (end == v) *budget = -1;
    } else if (klen == 4 && strncmp(a, "file", 4) == 0) {
      size_t n = strlen(v);
      if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
        v++;
        n -= 2;
      }
      *file = sqlite3_mprintf("%.*s", (int)n, v);
    } else {
      *err = sqlite3_mprintf("rdt_ledger: unknown argument %.*s (epsilon_budget, file)", (int)klen, a);
      return 0;
    }
  }
  return 1;
}

static void ledger_free(rdt_ledger *l) {
  if (!l) return;
  if (l->store) sqlite3_close_v2(l->store);
  sqlite3_free(l->name);
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

static int ledger_open(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err,
                       int create) {
  rdt_conn *conn = aux;
  double budget;
  char *file = NULL;
  if (!ledger_args(argc, argv, &budget, &file, err)) return SQLITE_ERROR;
  rdt_eps b = {0};
  if (create && (!(budget > 0) || !rdt_eps_from_double(budget, &b))) {
    sqlite3_free(file);
    *err = sqlite3_mprintf("rdt_ledger: epsilon_budget=<number from 1e-06 to 1e+06> is required");
    return SQLITE_ERROR;
  }
  if (!file) {
    const char *main = sqlite3_db_filename(db, argv[1]);
    if (!main || !*main) {
      *err = sqlite3_mprintf("rdt_ledger: an in-memory or temporary database needs file='path' for its ledger "
                             "(the charges must outlive the connection)");
      return SQLITE_ERROR;
    }
    file = sqlite3_mprintf("%s-rdt-ledger", main);
  }
  rdt_ledger *l = sqlite3_malloc(sizeof *l);
  ledger_vtab *v = sqlite3_malloc(sizeof *v);
  if (!l || !v || !file) {
    sqlite3_free(l);
    sqlite3_free(v);
    sqlite3_free(file);
    return SQLITE_NOMEM;
  }
  memset(l, 0, sizeof *l);
  memset(v, 0, sizeof *v);
  l->name = sqlite3_mprintf("%s", argv[2]);
  int rc = sqlite3_open_v2(file, &l->store, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  sqlite3_free(file);
  if (rc == SQLITE_OK) rc = sqlite3_busy_timeout(l->store, 30000);
  if (rc == SQLITE_OK) rc = sqlite3_exec(l->store, LEDGER_SCHEMA, NULL, NULL, NULL);
  sqlite3_stmt *q = NULL;
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(l->store, "SELECT budget_num FROM rdt_ledgers WHERE name = ?1", -1, &q, NULL);
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
      *err = sqlite3_mprintf("rdt_ledger: the ledger \"%s\" is missing from its file", l->name);
      rc = SQLITE_ERROR;
    } else {
      rc = step;
    }
  }
  sqlite3_finalize(q);
  if (rc == SQLITE_OK)
    rc = sqlite3_declare_vtab(db, "CREATE TABLE x(id INTEGER, kind TEXT, time TEXT, function TEXT, epsilon REAL, "
                                  "note TEXT, spent REAL, remaining REAL)");
  if (rc != SQLITE_OK) {
    if (!*err) *err = sqlite3_mprintf("rdt_ledger: %s", l->store ? sqlite3_errmsg(l->store) : "cannot open the ledger file");
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
  for (sqlite3_int64 i = 0; i < c->n; i++) {
    sqlite3_free(c->rows[i].time);
    sqlite3_free(c->rows[i].function);
    sqlite3_free(c->rows[i].note);
  }
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
                              "SELECT id, time, function, epsilon_num, note FROM rdt_charges WHERE ledger = ?1 ORDER BY id",
                              -1, &q, NULL);
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
    r->time = sqlite3_mprintf("%s", sqlite3_column_text(q, 1));
    r->function = sqlite3_mprintf("%s", sqlite3_column_text(q, 2));
    r->eps = (uint64_t)sqlite3_column_int64(q, 3);
    r->spent = r->eps + (c->n > 1 ? c->rows[c->n - 2].spent : 0);
    r->note = sqlite3_column_type(q, 4) == SQLITE_NULL ? NULL : sqlite3_mprintf("%s", sqlite3_column_text(q, 4));
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

static int ledger_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ledger_cursor *c = (ledger_cursor *)cur;
  const charge_row *r = c->at >= 0 ? &c->rows[c->at] : NULL;
  uint64_t spent = r ? r->spent : 0;
  switch (col) {
    case 0: sqlite3_result_int64(ctx, r ? r->id : 0); break;
    case 1: sqlite3_result_text(ctx, r ? "charge" : "budget", -1, SQLITE_STATIC); break;
    case 2: if (r) sqlite3_result_text(ctx, r->time, -1, SQLITE_TRANSIENT); else sqlite3_result_null(ctx); break;
    case 3: if (r) sqlite3_result_text(ctx, r->function, -1, SQLITE_TRANSIENT); else sqlite3_result_null(ctx); break;
    case 4: sqlite3_result_double(ctx, rdt_eps_to_double((rdt_eps){r ? r->eps : c->budget})); break;
    case 5: if (r && r->note) sqlite3_result_text(ctx, r->note, -1, SQLITE_TRANSIENT); else sqlite3_result_null(ctx); break;
    case 6: sqlite3_result_double(ctx, rdt_eps_to_double((rdt_eps){spent})); break;
    case 7: sqlite3_result_double(ctx, rdt_eps_to_double((rdt_eps){c->budget - spent})); break;
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

static rdt_ledger *find_ledger(rdt_conn *conn, const char *name) {
  rdt_ledger *l = conn->ledgers;
  while (l && strcmp(l->name, name) != 0) l = l->next;
  return l;
}

int rdt_ledger_charge(sqlite3 *db, rdt_conn *conn, const char *name, rdt_eps eps, const char *function,
                      const char *note, char *err, size_t err_size) {
  rdt_ledger *l = find_ledger(conn, name);
  if (!l) {
    /* SQLite connects a virtual table the first time a statement names it:
    ** name it once so that a ledger created by another connection is found. */
    char *sql = sqlite3_mprintf("SELECT 1 FROM \"%w\" LIMIT 0", name);
    sqlite3_stmt *q = NULL;
    if (sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) sqlite3_step(q);
    sqlite3_finalize(q);
    sqlite3_free(sql);
    l = find_ledger(conn, name);
  }
  if (!l) {
    snprintf(err, err_size, "no rdt_ledger table named \"%.100s\" in this connection (CREATE VIRTUAL TABLE %.100s "
             "USING rdt_ledger(epsilon_budget=...))", name, name);
    return 0;
  }
  /* Check and charge in one IMMEDIATE transaction: the write lock serialises
  ** every connection and process that charges this ledger. */
  int rc = sqlite3_exec(l->store, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    snprintf(err, err_size, "cannot lock the ledger \"%.100s\": %s", name, sqlite3_errmsg(l->store));
    return 0;
  }
  sqlite3_stmt *q;
  uint64_t spent = 0;
  rc = sqlite3_prepare_v2(l->store, "SELECT coalesce(sum(epsilon_num), 0) FROM rdt_charges WHERE ledger = ?1", -1, &q, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
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
    rc = sqlite3_prepare_v2(l->store, "INSERT INTO rdt_charges(ledger, time, function, epsilon_num, note) "
                                      "VALUES (?1, strftime('%Y-%m-%dT%H:%M:%fZ'), ?2, ?3, ?4)", -1, &q, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, function, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 3, (sqlite3_int64)eps.num);
    sqlite3_bind_text(q, 4, note, -1, SQLITE_STATIC);
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(q);
  }
  if (rc == SQLITE_OK) rc = sqlite3_exec(l->store, "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    snprintf(err, err_size, "cannot record the charge in ledger \"%.100s\": %s", name, sqlite3_errmsg(l->store));
    sqlite3_exec(l->store, "ROLLBACK", NULL, NULL, NULL);
    return 0;
  }
  return 1;
}
