/*
** sql_check.c - rdt_check(options, query) and the aggregate
** rdt_check(options, label, x1, ..., xk): what training would do with each
** row, told to the curator before anything is trained.
**
** Contract:
**   1. NOT PRIVATE. The result is exact counts (and some values) of the
**      private rows, with no noise: a diagnostic for the curator's own eyes,
**      never to be published. The JSON says so ("private": false,
**      "releasable": false) and sql/reference.md too.
**   2. Never charged: nothing is written to any ledger. "ledger" and "seed"
**      in the options are accepted and ignored (so the very options meant
**      for rdt_fit can be checked) and listed in "ignored_options".
**   3. The same parameters as training, with the same errors, raised before
**      any row is read: the options go through rdt_train_configure, the
**      query through rdt_fit's own preparation and by-name binding
**      (sql_fit.c: a column that is neither the label, a feature nor the
**      unit is ignored, listed in "ignored_columns" and warned about), the
**      aggregate's arity as rdt_train's. Nothing is built:
**      RDT#'s public query is checked as training checks it (its declared
**      tables, its program: sql_train.c, contract 4) but not run.
**   4. Every row is judged by the helpers training calls (rdt_sql_class,
**      rdt_sql_number, rdt_sql_feature of sql_values.c), on the values as
**      training receives them, so "kept", "dropped", "other", "clamped" and
**      "missing" are exactly training's. The heuristics (numeric-looking
**      TEXT, swapped columns) read copies taken before those helpers run,
**      because SQLite's numeric affinity converts a TEXT value in place.
**   5. Row values never cause an error; memory is bounded by the schema
**      (at most CHECK_LISTED distinct odd values per column, each cut to
**      CHECK_VALUE_BYTES), and running out of memory is the only failure.
**   6. The aggregate sees its options with its first row, as rdt_train: an
**      empty input is an error pointing to the query form.
**   7. Each kind of per-feature warning (missing, clamped, `other`, TEXT
**      that looks numeric) is said once: in its own sentence for one
**      feature, in one sentence naming the features (the first
**      GROUP_NAMED, then how many more) for several; each feature's counts
**      stay in "features".
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bounds.h"
#include "core/options.h"
#include "sql_train.h"
#include "sql_unit.h"

#define CHECK_LISTED 20      /* distinct odd values listed per column */
#define CHECK_VALUE_BYTES 64 /* longer values are listed cut (UTF-8 safe); their rows counted together */

/* Thresholds of the swap heuristic (sql/reference.md, "rdt_check"). */
#define SWAP_OWN_BELOW 0.5
#define SWAP_FIT_ABOVE 0.9

/* A set of feature indexes. */
typedef struct bit_set {
  uint8_t bits[(RDT_MAX_FEATURES + 7) / 8];
} bit_set;

static int in_set(const bit_set *b, uint32_t j) { return j < RDT_MAX_FEATURES && (b->bits[j / 8] >> (j % 8)) & 1; }

/* One distinct value seen where training does not want it. */
typedef struct odd_value {
  int type;           /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT or SQLITE_BLOB (all BLOBs together) */
  char *text;         /* TEXT: its bytes (cut); INTEGER/REAL: NULL */
  size_t len;
  sqlite3_int64 i;
  double r;
  uint64_t rows;
  uint32_t seq; /* order of first sight: ties keep it */
} odd_value;

typedef struct odd_list {
  odd_value v[CHECK_LISTED];
  uint32_t n;
  uint64_t unlisted; /* rows whose value did not fit in the list */
} odd_list;

typedef struct column_stats {
  /* Over the kept rows (features) or every row read (label): */
  uint64_t null, not_number, below, above, other, text, text_numeric, text_numeric_odd;
  odd_list odd;
  /* Swap heuristic, over every row read, non-NULL values only: */
  uint64_t nonnull, fits_own;  /* label: its value fits its own rule */
  uint64_t fits_label;         /* feature: its value fits the label's rule */
  uint64_t label_fits;                    /* the label's value fits this feature's domain */
} column_stats;

typedef struct check_state {
  rdt_train_session *session;
  rdt_train_facts facts;
  const rdt_schema *schema;
  int aggregate;
  uint64_t read, kept;
  uint64_t *per_class;
  column_stats label;
  column_stats *f;
  sqlite3_value **copy; /* copies of this row's TEXT values (label last), NULL for the others */
  int oom;
  /* "privacy_unit" (the query form): units seen, rows the cap dropped, rows
  ** whose unit is NULL (dropped too); training's bounded reading. */
  int has_unit;
  uint64_t units, units_over, capped, unit_null;
  /* The query form's columns that are neither the label, a feature nor the
  ** unit: a JSON array (sql_columns.c), NULL for the aggregate. */
  char *ignored;
  int n_ignored;
  rdt_median *grid; /* per feature with "bounds": "private": its numbers on bounds.h's grid, else unused */
  char forest_key[64]; /* a forest option that selected the RDT forest over "auto", or "" */
  bit_set unfilled;    /* numeric features without their bounds yet (fill_placeholders) */
} check_state;

static void odd_list_free(odd_list *l) {
  for (uint32_t i = 0; i < l->n; i++) free(l->v[i].text);
  l->n = 0;
}

static void check_free(check_state *st) {
  if (!st) return;
  uint32_t nf = st->schema ? st->schema->n_features : 0;
  if (st->f)
    for (uint32_t j = 0; j < nf; j++) odd_list_free(&st->f[j].odd);
  odd_list_free(&st->label.odd);
  if (st->copy)
    for (uint32_t j = 0; j <= nf; j++) sqlite3_value_free(st->copy[j]);
  free(st->copy);
  for (uint32_t j = 0; st->grid && j < nf; j++) rdt_median_free(&st->grid[j]);
  free(st->grid);
  free(st->f);
  free(st->per_class);
  sqlite3_free(st->ignored);
  rdt_train_session_free(st->session);
  free(st);
}

/* Numeric features still without their public bounds (rdt_features'
** skeleton leaves them null): the report looks at the rows anyway, with
** placeholder bounds [0, 1] that no count depends on, and says which are
** unfilled (rdt_fit refuses them). Returns the options with the
** placeholders (sqlite3_malloc'd) and their indexes in *unfilled, or NULL
** when nothing needs filling or the options do not parse as JSON (training's
** own parse then says why). */
static char *fill_placeholders(sqlite3 *db, sqlite3_value *options, bit_set *unfilled) {
  sqlite3_stmt *q = NULL;
  char *out = NULL;
  memset(unfilled, 0, sizeof *unfilled);
  if (sqlite3_prepare_v2(db,
                         "SELECT key FROM json_each(?1, '$.features') WHERE json_extract(value, '$.type') = 'numeric' "
                         "AND json_type(value, '$.bounds') IS NULL AND (json_type(value, '$.min') IS NULL OR "
                         "json_type(value, '$.min') IN ('null') OR json_type(value, '$.max') IS NULL OR "
                         "json_type(value, '$.max') IN ('null'))",
                         -1, &q, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_value(q, 1, options);
  sqlite3_str *set = sqlite3_str_new(NULL);
  sqlite3_str_appendall(set, "SELECT json_set(?1");
  int n = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    sqlite3_int64 i = sqlite3_column_int64(q, 0);
    if (i < 0 || i >= RDT_MAX_FEATURES) continue;
    unfilled->bits[i / 8] |= (uint8_t)(1u << (i % 8));
    sqlite3_str_appendf(set, ", '$.features[%lld].min', 0, '$.features[%lld].max', 1", i, i);
    n++;
  }
  sqlite3_finalize(q);
  sqlite3_str_appendall(set, ")");
  char *sql = sqlite3_str_finish(set);
  if (n && sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
    sqlite3_bind_value(q, 1, options);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
      out = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
  }
  sqlite3_free(sql);
  if (!out) memset(unfilled, 0, sizeof *unfilled);
  return out;
}

/* Parses the options exactly as training does and allocates the counters.
** NULL with err on a parameter mistake or no memory. */
static check_state *check_new(sqlite3 *db, sqlite3_value *options, char *err, size_t en) {
  if (sqlite3_value_type(options) != SQLITE_TEXT || !sqlite3_value_text(options)) {
    snprintf(err, en, "the first argument must be the options, a JSON object as TEXT%s", rdt_sql_blob_hint(options, 0));
    return NULL;
  }
  check_state *st = calloc(1, sizeof *st);
  if (!st || !(st->session = rdt_train_session_new())) {
    free(st);
    snprintf(err, en, "out of memory");
    return NULL;
  }
  char *filled = fill_placeholders(db, options, &st->unfilled);
  const char *text = filled ? filled : (const char *)sqlite3_value_text(options);
  int configured = rdt_train_configure(st->session, db, text, filled ? strlen(filled) : (size_t)sqlite3_value_bytes(options),
                                       err, en);
  sqlite3_free(filled);
  if (!configured) {
    check_free(st);
    return NULL;
  }
  rdt_train_get_facts(st->session, &st->facts);
  if (!rdt_options_forest_key(rdt_train_options(st->session), st->forest_key, sizeof st->forest_key))
    st->forest_key[0] = 0;
  st->schema = rdt_train_schema(st->session);
  uint32_t nf = st->schema->n_features;
  st->f = calloc(nf, sizeof *st->f);
  st->copy = calloc(nf + 1, sizeof *st->copy);
  st->per_class = calloc(st->schema->n_classes ? st->schema->n_classes : 1, sizeof *st->per_class);
  st->grid = calloc(nf, sizeof *st->grid);
  int ok = st->f && st->copy && st->per_class && st->grid;
  for (uint32_t j = 0; ok && j < nf; j++)
    if (rdt_unit_is_private(rdt_train_unit(st->session), j)) ok = rdt_bounds_init(&st->grid[j]);
  if (!ok) {
    check_free(st);
    snprintf(err, en, "out of memory");
    return NULL;
  }
  return st;
}

/* ---- one row ------------------------------------------------------------------ */

/* Counts v (a value training did not take) in l: the same value adds to its
** entry, a new one gets an entry while there is room. */
static void odd_add(check_state *st, odd_list *l, sqlite3_value *v, int type) {
  const char *text = NULL;
  size_t len = 0;
  sqlite3_int64 i = 0;
  double r = 0;
  if (type == SQLITE_TEXT) {
    text = (const char *)sqlite3_value_text(v);
    len = (size_t)sqlite3_value_bytes(v);
    if (!text) {
      st->oom = 1;
      return;
    }
    if (len > CHECK_VALUE_BYTES) { /* cut on a UTF-8 character boundary */
      len = CHECK_VALUE_BYTES;
      while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80) len--;
    }
  } else if (type == SQLITE_INTEGER) {
    i = sqlite3_value_int64(v);
  } else if (type == SQLITE_FLOAT) {
    r = sqlite3_value_double(v);
  }
  for (uint32_t k = 0; k < l->n; k++) {
    odd_value *o = &l->v[k];
    if (o->type != type) continue;
    if ((type == SQLITE_TEXT && o->len == len && memcmp(o->text, text, len) == 0) ||
        (type == SQLITE_INTEGER && o->i == i) || (type == SQLITE_FLOAT && (o->r == r || (o->r != o->r && r != r))) ||
        type == SQLITE_BLOB) {
      o->rows++;
      return;
    }
  }
  if (l->n == CHECK_LISTED) {
    l->unlisted++;
    return;
  }
  odd_value *o = &l->v[l->n];
  memset(o, 0, sizeof *o);
  if (type == SQLITE_TEXT) {
    if (!(o->text = malloc(len + 1))) {
      st->oom = 1;
      return;
    }
    memcpy(o->text, text, len);
    o->text[len] = 0;
  }
  o->type = type;
  o->len = len;
  o->i = i;
  o->r = r;
  o->rows = 1;
  o->seq = l->n;
  l->n++;
}

/* Whether a TEXT value looks like a number to SQLite: its numeric affinity,
** applied to a throwaway copy (it converts the value it is given). */
static int looks_numeric(check_state *st, sqlite3_value *v) {
  sqlite3_value *d = sqlite3_value_dup(v);
  if (!d) {
    st->oom = 1;
    return 0;
  }
  int t = sqlite3_value_numeric_type(d);
  sqlite3_value_free(d);
  return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

/* Whether a non-NULL value fits the label's rule: a class, or a number
** inside the target bounds. */
static int fits_label(const check_state *st, sqlite3_value *v) {
  if (!st->facts.regression) return rdt_sql_class(st->schema, v) >= 0;
  double y;
  return rdt_sql_number(v, &y) && y >= st->facts.target_min && y <= st->facts.target_max;
}

/* Whether a non-NULL value fits feature ft's domain: a listed value, or a
** number inside the bounds. */
static int fits_feature(const rdt_feature *ft, sqlite3_value *v) {
  if (ft->type == RDT_FEATURE_CATEGORICAL) return rdt_sql_feature(ft, v) < (double)ft->n_values;
  double x;
  return rdt_sql_number(v, &x) && x >= ft->min && x <= ft->max;
}

static void check_row(check_state *st, sqlite3_value *label, sqlite3_value **x) {
  const rdt_schema *s = st->schema;
  uint32_t nf = s->n_features;
  int tl = sqlite3_value_type(label);
  /* Contract item 4: copies of the TEXT values first (slot nf: the label). */
  for (uint32_t j = 0; j <= nf; j++) {
    sqlite3_value *v = j < nf ? x[j] : label;
    sqlite3_value_free(st->copy[j]);
    st->copy[j] = NULL;
    if (sqlite3_value_type(v) == SQLITE_TEXT && !(st->copy[j] = sqlite3_value_dup(v))) st->oom = 1;
  }
  if (st->oom) return;
  st->read++;

  /* The label, by training's rule (rdt_train_row, sql_train.c). */
  column_stats *L = &st->label;
  int kept, label_fits;
  if (tl == SQLITE_TEXT) L->text++;
  if (st->facts.regression) {
    double y;
    kept = rdt_sql_number(label, &y);
    label_fits = kept && y >= st->facts.target_min && y <= st->facts.target_max;
    if (!kept && tl == SQLITE_NULL) L->null++;
    else if (!kept) L->not_number++, odd_add(st, &L->odd, st->copy[nf] ? st->copy[nf] : label, tl);
    else if (y < st->facts.target_min) L->below++;
    else if (y > st->facts.target_max) L->above++;
    if (tl == SQLITE_TEXT && kept) L->text_numeric++;
  } else {
    long cls = rdt_sql_class(s, label);
    kept = label_fits = cls >= 0;
    if (kept) st->per_class[cls]++;
    else if (tl == SQLITE_NULL) L->null++;
    else L->other++, odd_add(st, &L->odd, st->copy[nf] ? st->copy[nf] : label, tl);
    if (tl == SQLITE_TEXT && looks_numeric(st, st->copy[nf])) {
      L->text_numeric++;
      if (!kept) L->text_numeric_odd++;
    }
  }
  if (tl != SQLITE_NULL) {
    L->nonnull++;
    L->fits_own += (uint64_t)label_fits;
  }

  /* Private bounds count every row's number, whatever its label, as
  ** rdt_fit's estimate does (sql_fit.c): on the grid of their quartiles. */
  for (uint32_t j = 0; j < nf; j++) {
    double v;
    if (st->grid[j].hist && rdt_sql_number(x[j], &v)) rdt_bounds_add(&st->grid[j], v);
  }

  /* The features, by training's rule, over the kept rows. */
  if (kept) {
    st->kept++;
    for (uint32_t j = 0; j < nf; j++) {
      const rdt_feature *ft = &s->features[j];
      column_stats *F = &st->f[j];
      int t = sqlite3_value_type(x[j]);
      sqlite3_value *orig = st->copy[j] ? st->copy[j] : x[j]; /* as stored, for the lists */
      if (t == SQLITE_TEXT) F->text++;
      if (ft->type == RDT_FEATURE_NUMERIC) {
        double v;
        (void)rdt_sql_feature(ft, x[j]); /* training's call: converts a numeric-looking TEXT in place */
        if (!rdt_sql_number(x[j], &v)) {
          if (t == SQLITE_NULL) F->null++;
          else F->not_number++, odd_add(st, &F->odd, orig, t);
        } else {
          if (t == SQLITE_TEXT) F->text_numeric++;
          /* "bounds": "private": estimated only when rdt_fit trains (its [0, 1] is a placeholder) */
          if (rdt_unit_is_private(rdt_train_unit(st->session), j)) {
          } else if (v < ft->min) F->below++;
          else if (v > ft->max) F->above++;
        }
      } else {
        int other = rdt_sql_feature(ft, x[j]) >= (double)ft->n_values;
        if (other) {
          F->other++;
          if (t == SQLITE_NULL) F->null++;
          else odd_add(st, &F->odd, orig, t);
        }
        if (t == SQLITE_TEXT && looks_numeric(st, st->copy[j])) {
          F->text_numeric++;
          F->text_numeric_odd += (uint64_t)other;
        }
      }
    }
  }

  /* The swap heuristic, over every row read, on the copies: categorical
  ** rules before numeric ones on each (a numeric rule converts a copy). */
  sqlite3_value *lv = tl == SQLITE_TEXT ? st->copy[nf] : label;
  for (int pass = 0; pass < 2 && tl != SQLITE_NULL; pass++)
    for (uint32_t j = 0; j < nf; j++)
      if ((s->features[j].type == RDT_FEATURE_CATEGORICAL) == (pass == 0))
        st->f[j].label_fits += (uint64_t)fits_feature(&s->features[j], lv);
  for (uint32_t j = 0; j < nf; j++) {
    sqlite3_value *v = st->copy[j] ? st->copy[j] : x[j]; /* training may have converted x[j] */
    if (sqlite3_value_type(v) == SQLITE_NULL) continue;
    column_stats *F = &st->f[j];
    F->nonnull++;
    F->fits_label += (uint64_t)fits_label(st, v);
  }
}

/* ---- the report ------------------------------------------------------------------ */

static void json_share(sqlite3_str *o, uint64_t part, uint64_t whole) {
  if (!whole) sqlite3_str_appendall(o, "null");
  else sqlite3_str_appendf(o, "%.4f", (double)part / (double)whole); /* SQLite's printf: '.' in any locale */
}

static void odd_value_json(sqlite3_str *o, const odd_value *v) {
  switch (v->type) {
    case SQLITE_INTEGER: sqlite3_str_appendf(o, "%lld", v->i); break;
    case SQLITE_FLOAT:
      if (isfinite(v->r)) rdt_sql_json_double(o, v->r);
      else sqlite3_str_appendall(o, v->r != v->r ? "\"NaN\"" : v->r > 0 ? "\"Infinity\"" : "\"-Infinity\"");
      break;
    case SQLITE_TEXT: rdt_sql_json_string(o, v->text, v->len); break;
    default: sqlite3_str_appendall(o, "null"); break;
  }
}

static const char *type_name(int t) {
  return t == SQLITE_INTEGER ? "integer" : t == SQLITE_FLOAT ? "real" : t == SQLITE_TEXT ? "text" : "blob";
}

static int odd_cmp(const void *a, const void *b) {
  const odd_value *x = a, *y = b;
  if (x->rows != y->rows) return x->rows < y->rows ? 1 : -1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "key":[{"value":v,"type":t,"rows":n},...],"key_unlisted_rows":n, most rows first. */
static void odd_list_json(sqlite3_str *o, odd_list *l, const char *key) {
  qsort(l->v, l->n, sizeof l->v[0], odd_cmp);
  sqlite3_str_appendf(o, ",\"%s\":[", key);
  for (uint32_t k = 0; k < l->n; k++) {
    sqlite3_str_appendall(o, k ? ",{\"value\":" : "{\"value\":");
    odd_value_json(o, &l->v[k]);
    sqlite3_str_appendf(o, ",\"type\":\"%s\",\"rows\":%llu}", type_name(l->v[k].type), (unsigned long long)l->v[k].rows);
  }
  sqlite3_str_appendf(o, "],\"%s_unlisted_rows\":%llu", key, (unsigned long long)l->unlisted);
}

/* ", e.g. 'v' (n rows)" for the commonest odd value (the list is sorted). */
static void example(sqlite3_str *o, const odd_list *l) {
  if (!l->n) return;
  const odd_value *v = &l->v[0];
  sqlite3_str_appendall(o, ", e.g. ");
  if (v->type == SQLITE_TEXT) sqlite3_str_appendf(o, "TEXT '%.*s'", (int)v->len, v->text);
  else if (v->type == SQLITE_INTEGER) sqlite3_str_appendf(o, "%lld", v->i);
  else if (v->type == SQLITE_FLOAT) sqlite3_str_appendf(o, "REAL %g", v->r);
  else sqlite3_str_appendall(o, "a BLOB");
  sqlite3_str_appendf(o, " (%llu row%s)", (unsigned long long)v->rows, v->rows == 1 ? "" : "s");
}

/* Appends one warning (a JSON string) built by printf-style fmt. */
static void warn(sqlite3_str *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *m = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  if (sqlite3_str_length(w)) sqlite3_str_appendchar(w, 1, ',');
  if (m) rdt_sql_json_string(w, m, strlen(m));
  else sqlite3_str_appendall(w, "\"(out of memory)\"");
  sqlite3_free(m);
}

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

/* The warning of a list of odd values, made a JSON string. */
static void warn_with_example(sqlite3_str *w, const odd_list *l, const char *fmt, ...) {
  sqlite3_str *m = sqlite3_str_new(NULL);
  va_list ap;
  va_start(ap, fmt);
  char *head = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  sqlite3_str_appendall(m, head ? head : "(out of memory)");
  sqlite3_free(head);
  example(m, l);
  char *msg = sqlite3_str_finish(m);
  warn(w, "%s", msg ? msg : "(out of memory)");
  sqlite3_free(msg);
}

/* A kind of per-feature warning, said once however many features it concerns
** (a table .import-ed as TEXT has every feature "TEXT that looks numeric"):
** one feature gets its own sentence, several one sentence naming them. */
#define GROUP_NAMED 10 /* features named in a grouped sentence; the rest counted */
typedef struct warn_group {
  const char *says;   /* the grouped sentence: "%u features " + says + the list */
  sqlite3_str *single; /* the first feature's own sentence (a JSON string) */
  sqlite3_str *items;  /* "\"name\" (detail)", ... */
  uint32_t n;
} warn_group;

/* Adds feature `name` to g: its own sentence (used when it stays alone) and
** its item (name and detail) for the grouped one. */
static void group_add(warn_group *g, const char *name, const char *detail, const char *fmt, ...) {
  if (!g->single) g->single = sqlite3_str_new(NULL);
  if (!g->items) g->items = sqlite3_str_new(NULL);
  if (g->n == 0) {
    va_list ap;
    va_start(ap, fmt);
    char *m = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    warn(g->single, "%s", m ? m : "(out of memory)");
    sqlite3_free(m);
  }
  if (g->n < GROUP_NAMED) sqlite3_str_appendf(g->items, "%s\"%s\" (%s)", g->n ? ", " : "", name, detail);
  g->n++;
}

/* Appends g's warning to w (nothing when no feature has it) and frees g. */
static void group_emit(sqlite3_str *w, warn_group *g) {
  char *single = g->single ? sqlite3_str_finish(g->single) : NULL;
  char *items = g->items ? sqlite3_str_finish(g->items) : NULL;
  if (g->n == 1 && single) {
    if (sqlite3_str_length(w)) sqlite3_str_appendchar(w, 1, ',');
    sqlite3_str_appendall(w, single);
  } else if (g->n > 1) {
    char more[64] = "";
    if (g->n > GROUP_NAMED) sqlite3_snprintf((int)sizeof more, more, ", and %u more", g->n - GROUP_NAMED);
    warn(w, "%u features %s: %s%s (each feature's counts are in \"features\")", g->n, g->says,
         items ? items : "(out of memory)", more);
  }
  sqlite3_free(single);
  sqlite3_free(items);
  memset(g, 0, sizeof *g);
}

/* The numeric features still without bounds: one warning naming them. */
static void unfilled_report(sqlite3_str *w, const check_state *st) {
  sqlite3_str *m = sqlite3_str_new(NULL);
  uint32_t n = 0;
  for (uint32_t j = 0; j < st->schema->n_features; j++)
    if (in_set(&st->unfilled, j) && n++ < 12)
      sqlite3_str_appendf(m, "%s\"%s\"", n > 1 ? ", " : "", st->schema->features[j].name);
  char *names = sqlite3_str_finish(m);
  if (n)
    warn(w, "%u numeric feature%s still without \"min\" and \"max\" (rdt_fit refuses %s): %s%s; give each its "
         "public bounds (a codebook, the instrument's range), never the data's own extremes, which are private; "
         "this report looked at the rows anyway, without clamping", n, n == 1 ? "" : "s", n == 1 ? "it" : "them",
         names ? names : "(out of memory)", n > 12 ? ", ..." : "");
  sqlite3_free(names);
}

/* The lists still as rdt_features copied them from the rows. */
static void copied_report(sqlite3_str *w, const rdt_schema *s) {
  if (!s->from_rows) return;
  sqlite3_str *m = sqlite3_str_new(NULL);
  if (s->classes_copied) sqlite3_str_appendall(m, "\"classes\"");
  for (uint32_t j = 0, n = 0; j < s->n_features; j++)
    if (s->features[j].copied)
      sqlite3_str_appendf(m, "%s\"%s\"", n++ ? ", " : s->classes_copied ? " and the \"values\" of " : "the \"values\" of ",
                          s->features[j].name);
  char *lists = sqlite3_str_finish(m);
  uint32_t n = (uint32_t)s->classes_copied;
  for (uint32_t j = 0; j < s->n_features; j++) n += (uint32_t)s->features[j].copied;
  warn(w, "%s: %s rdt_features copied from the private rows (\"copied_from_rows\"); a model trained on %s is NOT FOR "
       "RELEASE, and rdt_fit with a ledger and rdt_sign refuse it: replace %s with the public list (a codebook, the "
       "form's choices)", lists ? lists : "(out of memory)", n == 1 ? "the list" : "lists", n == 1 ? "it" : "them",
       n == 1 ? "it" : "each");
  sqlite3_free(lists);
}

/* "privacy_unit" as training applies it (unit.h): the units, the rows
** their cap drops, and the epsilon each kept row pays. */
static void unit_report(sqlite3_str *o, sqlite3_str *w, const check_state *st) {
  const rdt_unit *u = rdt_train_unit(st->session);
  if (!st->has_unit) {
    sqlite3_str_appendall(o, ",\"privacy_unit\":\"row\"");
    return;
  }
  uint64_t in_units = st->read + st->capped;
  rdt_eps row = {(u->eps_total.num - u->eps_bounds.num) / u->max_rows};
  sqlite3_str_appendall(o, ",\"privacy_unit\":{\"column\":");
  rdt_sql_json_string(o, u->column, strlen(u->column));
  sqlite3_str_appendf(o, ",\"max_rows_per_unit\":%u,\"units\":%llu,\"rows_in_units\":%llu,\"dropped_by_cap\":%llu,"
                         "\"dropped_unit_null\":%llu,\"epsilon\":%!.17g,\"epsilon_per_row\":",
                      u->max_rows, (unsigned long long)st->units, (unsigned long long)in_units,
                      (unsigned long long)st->capped, (unsigned long long)st->unit_null,
                      rdt_eps_to_double(u->eps_total));
  if (st->facts.is_private) sqlite3_str_appendf(o, "%!.17g}", rdt_eps_to_double(row));
  else sqlite3_str_appendall(o, "null}");
  if (st->capped)
    warn(w, "privacy unit \"%s\": %llu of %llu units have more than %u rows, so the cap drops %llu of their %llu "
         "rows (%.1f%%), a random subset; the rest are what \"rows\" counts, and every kept row is trained on with "
         "epsilon / %u (epsilon_per_row)",
         u->column, (unsigned long long)st->units_over, (unsigned long long)st->units, u->max_rows,
         (unsigned long long)st->capped, (unsigned long long)in_units, pct(st->capped, in_units), u->max_rows);
  if (st->unit_null)
    warn(w, "privacy unit \"%s\": %llu rows have a NULL unit and are dropped (they cannot be attributed to a unit)",
         u->column, (unsigned long long)st->unit_null);
}

/* The cell of the grid holding the row of rank q·n (q = a / 2^16). */
static uint32_t quantile_cell(const rdt_median *g, uint64_t n, uint32_t a) {
  uint64_t below = 0;
  uint32_t c = 0;
  for (; c + 1 < g->cells; c++) {
    below += (uint64_t)g->hist[c];
    if ((double)below >= (double)n * a / RDT_QUANTILE_ONE) break;
  }
  return c;
}

/* A feature with "bounds": "private": its rows with a number, the rows its
** quartiles need (bounds.h, rule 7) and where its exact quartiles lie on
** the grid: the warnings of a release that will explode or collapse
** (rule 8), said before anything is spent. */
static void private_bounds_report(sqlite3_str *o, sqlite3_str *w, const check_state *st, uint32_t j) {
  const rdt_median *g = &st->grid[j];
  const char *name = st->schema->features[j].name;
  uint64_t n = 0;
  for (uint32_t c = 0; c < g->cells; c++) n += (uint64_t)g->hist[c];
  double needed = ceil(rdt_bounds_rows_needed(rdt_train_unit(st->session)->eps_quantile));
  uint32_t lo = quantile_cell(g, n, RDT_BOUNDS_LOW), hi = quantile_cell(g, n, RDT_BOUNDS_HIGH);
  sqlite3_str_appendf(o, ",\"private_bounds\":{\"rows_with_a_number\":%llu,\"reliable_from_rows\":%.0f,"
                         "\"quartile_cells_apart\":%u}", (unsigned long long)n, needed, hi - lo);
  if ((double)n < needed)
    warn(w, "feature \"%s\": \"bounds\": \"private\" needs about %.0f rows with a number for its quartiles to stay "
         "on the data at this epsilon (95%%; ext/core/bounds.h, rule 7), and it has %llu: the bounds may explode "
         "(land anywhere from -1e14 to 1e14); declare public bounds, or raise epsilon or \"bounds_share\"", name, needed,
         (unsigned long long)n);
  else if (n && hi - lo < 2)
    warn(w, "feature \"%s\": its quartiles lie within two cells of the private bounds' grid (half its rows share "
         "about one value), so its private bounds will collapse around that value and clamp the rest onto their "
         "edges; declare public bounds", name);
}

/* The whole report as JSON text (sqlite3_malloc'd), or NULL (no memory). */
static char *check_report(check_state *st, const char *ledger) {
  const rdt_schema *s = st->schema;
  const rdt_train_facts *fa = &st->facts;
  sqlite3_str *o = sqlite3_str_new(NULL), *w = sqlite3_str_new(NULL);
  column_stats *L = &st->label;
  uint64_t dropped = st->read - st->kept;
  const char *lname = rdt_train_label_name(st->session);

  sqlite3_str_appendall(o, "{\"function\":\"rdt_check\",\"private\":false,\"releasable\":false,\"charged\":false,"
                           "\"note\":\"exact counts of the private rows, without noise: for the curator's own eyes, "
                           "never to be published; nothing was charged to any ledger\",\"form\":");
  sqlite3_str_appendall(o, st->aggregate ? "\"aggregate\"" : "\"query\"");
  sqlite3_str_appendall(o, ",\"algorithm\":");
  rdt_sql_json_string(o, fa->algorithm, strlen(fa->algorithm));
  sqlite3_str_appendf(o, ",\"task\":\"%s\",\"ignored_options\":[", fa->regression ? "regression" : "classification");
  if (ledger[0]) sqlite3_str_appendall(o, "\"ledger\"");
  if (fa->seeded) sqlite3_str_appendall(o, ledger[0] ? ",\"seed\"" : "\"seed\"");
  sqlite3_str_appendf(o, "],\"ignored_columns\":%s", st->ignored ? st->ignored : "[]");
  sqlite3_str_appendf(o, ",\"rows\":{\"read\":%llu,\"kept\":%llu,\"dropped\":%llu", (unsigned long long)st->read,
                      (unsigned long long)st->kept, (unsigned long long)dropped);
  if (fa->regression)
    sqlite3_str_appendf(o, ",\"dropped_target_null\":%llu,\"dropped_target_not_a_number\":%llu",
                        (unsigned long long)L->null, (unsigned long long)L->not_number);
  else
    sqlite3_str_appendf(o, ",\"dropped_label_null\":%llu,\"dropped_label_not_in_classes\":%llu",
                        (unsigned long long)L->null, (unsigned long long)L->other);
  if (fa->max_rows)
    sqlite3_str_appendf(o, ",\"diprime_sample\":%llu",
                        (unsigned long long)(st->kept < fa->max_rows ? st->kept : fa->max_rows));
  sqlite3_str_appendchar(o, 1, '}');
  unit_report(o, w, st);
  sqlite3_str_appendall(o, ",\"label\":{\"name\":");
  rdt_sql_json_string(o, lname, strlen(lname));
  sqlite3_str_appendf(o, ",\"null\":%llu,\"text\":%llu,\"text_numeric\":%llu", (unsigned long long)L->null,
                      (unsigned long long)L->text, (unsigned long long)L->text_numeric);
  if (fa->regression) {
    sqlite3_str_appendall(o, ",\"min\":");
    rdt_sql_json_double(o, fa->target_min);
    sqlite3_str_appendall(o, ",\"max\":");
    rdt_sql_json_double(o, fa->target_max);
    sqlite3_str_appendf(o, ",\"not_a_number\":%llu,\"below_min\":%llu,\"above_max\":%llu,\"clamped\":%llu",
                        (unsigned long long)L->not_number, (unsigned long long)L->below,
                        (unsigned long long)L->above, (unsigned long long)(L->below + L->above));
    odd_list_json(o, &L->odd, "values_not_numbers");
  } else {
    sqlite3_str_appendf(o, ",\"not_in_classes\":%llu,\"text_numeric_not_in_classes\":%llu,\"rows_per_class\":[",
                        (unsigned long long)L->other, (unsigned long long)L->text_numeric_odd);
    for (uint32_t c = 0; c < s->n_classes; c++) {
      sqlite3_str_appendall(o, c ? ",{\"class\":" : "{\"class\":");
      rdt_sql_json_value(o, &s->classes[c]);
      sqlite3_str_appendf(o, ",\"rows\":%llu}", (unsigned long long)st->per_class[c]);
    }
    sqlite3_str_appendchar(o, 1, ']');
    odd_list_json(o, &L->odd, "values_not_in_classes");
  }
  sqlite3_str_appendall(o, "},\"features\":[");

  /* Warnings about the query, the rows and the label. */
  if (st->n_ignored)
    warn(w, "%d column%s of the query %s neither the label, a feature nor the unit: training ignores %s "
         "(\"ignored_columns\": %s); add %s to \"features\" if you meant to train on %s", st->n_ignored,
         st->n_ignored == 1 ? "" : "s", st->n_ignored == 1 ? "is" : "are", st->n_ignored == 1 ? "it" : "them",
         st->ignored, st->n_ignored == 1 ? "it" : "them", st->n_ignored == 1 ? "it" : "them");
  if (st->read == 0) warn(w, "no rows were read (rdt_fit would return a model of noise alone)");
  if (fa->regression) {
    if (L->null + L->not_number)
      warn_with_example(w, &L->odd, "%llu of %llu rows (%.1f%%) are dropped: their target is NULL (%llu) or not a "
                        "number (%llu)", (unsigned long long)(L->null + L->not_number), (unsigned long long)st->read,
                        pct(L->null + L->not_number, st->read), (unsigned long long)L->null,
                        (unsigned long long)L->not_number);
    if (L->below + L->above)
      warn(w, "%llu kept rows (%.1f%%) have a target outside [min, max] of \"target\" and are clamped to it (below: "
           "%llu, above: %llu)", (unsigned long long)(L->below + L->above), pct(L->below + L->above, st->kept),
           (unsigned long long)L->below, (unsigned long long)L->above);
  } else {
    if (L->null)
      warn(w, "%llu of %llu rows (%.1f%%) are dropped: their label is NULL", (unsigned long long)L->null,
           (unsigned long long)st->read, pct(L->null, st->read));
    if (L->other)
      warn_with_example(w, &L->odd, "%llu of %llu rows (%.1f%%) are dropped: their label is not in \"classes\"",
                        (unsigned long long)L->other, (unsigned long long)st->read, pct(L->other, st->read));
    if (L->text_numeric_odd)
      warn(w, "%llu labels are TEXT that looks numeric and are not in \"classes\", not even read as numbers (TEXT "
           "'1.0' already matches the class 1): list those classes if they are classes, else the rows are dropped",
           (unsigned long long)L->text_numeric_odd);
    else if (L->text_numeric)
      warn(w, "%llu labels are TEXT that looks numeric; they matched \"classes\", but a typed column (CAST, or "
           "INTEGER in CREATE TABLE) avoids surprises", (unsigned long long)L->text_numeric);
    for (uint32_t c = 0; c < s->n_classes && st->kept; c++)
      if (st->per_class[c] == 0) {
        sqlite3_str *cv = sqlite3_str_new(NULL);
        rdt_sql_json_value(cv, &s->classes[c]);
        char *t = sqlite3_str_finish(cv);
        warn(w, "class %s has no kept row", t ? t : "?");
        sqlite3_free(t);
      }
  }

  /* Contract 7: each kind of feature warning said once. */
  enum { G_MISSING, G_CLAMPED, G_TEXT_NUMBER, G_OTHER, G_TEXT_NOT_LISTED, G_TEXT_LISTED, N_GROUPS };
  warn_group g[N_GROUPS] = {
      {"have kept rows that are NULL or not a number, which take the midpoint of [min, max]", NULL, NULL, 0},
      {"have kept rows outside [min, max], clamped to it", NULL, NULL, 0},
      {"hold TEXT that looks numeric (.import makes every column TEXT): training reads it as numbers, but SQL compares "
       "TEXT above every number, so a filter such as WHERE x > 200 keeps every such row; store them as REAL or "
       "INTEGER, or CAST them in comparisons", NULL, NULL, 0},
      {"send kept rows to the `other` bucket (NULL, or not in \"values\")", NULL, NULL, 0},
      {"hold TEXT that looks numeric and is not in \"values\", not even read as numbers (TEXT '1.0' already matches "
       "the value 1): list it if it is a category, else it goes to `other`", NULL, NULL, 0},
      {"hold TEXT that looks numeric; it matched \"values\", but a typed column or a CAST avoids surprises", NULL, NULL,
       0}};
  char detail[96];
  for (uint32_t j = 0; j < s->n_features; j++) {
    const rdt_feature *ft = &s->features[j];
    column_stats *F = &st->f[j];
    if (j) sqlite3_str_appendchar(o, 1, ',');
    sqlite3_str_appendall(o, "{\"name\":");
    rdt_sql_json_string(o, ft->name, strlen(ft->name));
    sqlite3_str_appendf(o, ",\"type\":\"%s\",\"null\":%llu,\"null_share\":",
                        ft->type == RDT_FEATURE_NUMERIC ? "numeric" : "categorical", (unsigned long long)F->null);
    json_share(o, F->null, st->kept);
    sqlite3_str_appendf(o, ",\"text\":%llu,\"text_numeric\":%llu", (unsigned long long)F->text,
                        (unsigned long long)F->text_numeric);
    if (ft->type == RDT_FEATURE_NUMERIC) {
      uint64_t clamped = in_set(&st->unfilled, j) ? 0 : F->below + F->above, missing = F->null + F->not_number;
      sqlite3_str_appendf(o, ",\"not_a_number\":%llu,\"missing_share\":", (unsigned long long)F->not_number);
      json_share(o, missing, st->kept);
      if (st->grid[j].hist) {
        sqlite3_str_appendall(o, ",\"bounds\":\"private: estimated when rdt_fit trains, so clamping is not reported "
                                 "here\",\"below_min\":null,\"above_max\":null,\"clamped\":null,\"clamped_share\":null");
        private_bounds_report(o, w, st, j);
      } else if (in_set(&st->unfilled, j)) {
        sqlite3_str_appendall(o, ",\"bounds\":\"unfilled: give min and max (public bounds) before training\","
                                 "\"below_min\":null,\"above_max\":null,\"clamped\":null,\"clamped_share\":null");
      } else {
        sqlite3_str_appendf(o, ",\"below_min\":%llu,\"above_max\":%llu,\"clamped\":%llu,\"clamped_share\":",
                            (unsigned long long)F->below, (unsigned long long)F->above, (unsigned long long)clamped);
        json_share(o, clamped, st->kept);
      }
      odd_list_json(o, &F->odd, "values_not_numbers");
      if (missing) {
        sqlite3_snprintf((int)sizeof detail, detail, "%llu row%s, %.1f%%", (unsigned long long)missing,
                         missing == 1 ? "" : "s", pct(missing, st->kept));
        sqlite3_str *e = sqlite3_str_new(NULL);
        example(e, &F->odd);
        char *ex = sqlite3_str_finish(e);
        group_add(&g[G_MISSING], ft->name, detail, "feature \"%s\": %llu kept rows (%.1f%%) are NULL (%llu) or not a "
                  "number (%llu) and take the midpoint of [min, max]%s", ft->name, (unsigned long long)missing,
                  pct(missing, st->kept), (unsigned long long)F->null, (unsigned long long)F->not_number,
                  ex ? ex : "");
        sqlite3_free(ex);
      }
      if (clamped) {
        sqlite3_snprintf((int)sizeof detail, detail, "%llu row%s, %.1f%%", (unsigned long long)clamped,
                         clamped == 1 ? "" : "s", pct(clamped, st->kept));
        group_add(&g[G_CLAMPED], ft->name, detail, "feature \"%s\": %llu kept rows (%.1f%%) lie outside [min, max] "
                  "and are clamped to it (below: %llu, above: %llu)", ft->name, (unsigned long long)clamped,
                  pct(clamped, st->kept), (unsigned long long)F->below, (unsigned long long)F->above);
      }
      if (F->text_numeric) {
        sqlite3_snprintf((int)sizeof detail, detail, "%llu value%s", (unsigned long long)F->text_numeric,
                         F->text_numeric == 1 ? "" : "s");
        group_add(&g[G_TEXT_NUMBER], ft->name, detail, "feature \"%s\": %llu values are TEXT that looks numeric "
                  "(.import makes every column TEXT): training reads them as numbers, but SQL compares TEXT above every "
                  "number, so a filter such as WHERE \"%s\" > 200 keeps every such row; store the column as REAL or "
                  "INTEGER, or CAST it in comparisons", ft->name, (unsigned long long)F->text_numeric, ft->name);
      }
    } else {
      sqlite3_str_appendf(o, ",\"not_in_values\":%llu,\"other\":%llu,\"other_share\":",
                          (unsigned long long)(F->other - F->null), (unsigned long long)F->other);
      json_share(o, F->other, st->kept);
      sqlite3_str_appendf(o, ",\"text_numeric_other\":%llu", (unsigned long long)F->text_numeric_odd);
      odd_list_json(o, &F->odd, "values_not_in_values");
      if (F->other) {
        sqlite3_snprintf((int)sizeof detail, detail, "%llu row%s, %.1f%%", (unsigned long long)F->other,
                         F->other == 1 ? "" : "s", pct(F->other, st->kept));
        sqlite3_str *e = sqlite3_str_new(NULL);
        example(e, &F->odd);
        char *ex = sqlite3_str_finish(e);
        group_add(&g[G_OTHER], ft->name, detail, "feature \"%s\": %llu kept rows (%.1f%%) go to the `other` bucket "
                  "(NULL: %llu, not in \"values\": %llu)%s", ft->name, (unsigned long long)F->other,
                  pct(F->other, st->kept), (unsigned long long)F->null, (unsigned long long)(F->other - F->null),
                  ex ? ex : "");
        sqlite3_free(ex);
      }
      if (F->text_numeric_odd) {
        sqlite3_snprintf((int)sizeof detail, detail, "%llu value%s", (unsigned long long)F->text_numeric_odd,
                         F->text_numeric_odd == 1 ? "" : "s");
        group_add(&g[G_TEXT_NOT_LISTED], ft->name, detail, "feature \"%s\": %llu values are TEXT that looks numeric "
                  "and are not in \"values\", not even read as numbers (TEXT '1.0' already matches the value 1): list "
                  "them if they are categories, else they go to `other`", ft->name,
                  (unsigned long long)F->text_numeric_odd);
      } else if (F->text_numeric) {
        sqlite3_snprintf((int)sizeof detail, detail, "%llu value%s", (unsigned long long)F->text_numeric,
                         F->text_numeric == 1 ? "" : "s");
        group_add(&g[G_TEXT_LISTED], ft->name, detail, "feature \"%s\": %llu values are TEXT that looks numeric; they "
                  "matched \"values\", but a typed column or a CAST avoids surprises", ft->name,
                  (unsigned long long)F->text_numeric);
      }
    }
    sqlite3_str_appendchar(o, 1, '}');
    /* Swapped? The label's values mostly miss its own rule but fit this
    ** feature's domain, and this feature's values fit the label's rule. */
    if (L->nonnull && F->nonnull && (double)L->fits_own < SWAP_OWN_BELOW * (double)L->nonnull &&
        (double)F->label_fits >= SWAP_FIT_ABOVE * (double)L->nonnull &&
        (double)F->fits_label >= SWAP_FIT_ABOVE * (double)F->nonnull)
      warn(w, "label \"%s\" and feature \"%s\" look swapped: %.1f%% of the labels fit %s but %.1f%% fit the "
           "feature's domain, and %.1f%% of the feature's values fit %s; check the column order (rdt_train, "
           "rdt_predict) or the names (rdt_fit)", lname, ft->name, pct(L->fits_own, L->nonnull),
           fa->regression ? "\"target\"" : "\"classes\"", pct(F->label_fits, L->nonnull),
           pct(F->fits_label, F->nonnull), fa->regression ? "\"target\"" : "\"classes\"");
  }
  sqlite3_str_appendall(o, "]");
  for (int k = 0; k < N_GROUPS; k++) group_emit(w, &g[k]);

  if (fa->max_rows && st->kept > fa->max_rows)
    warn(w, "DiPriMe trains on a uniform random sample of \"max_rows\" (%llu) of the %llu kept rows",
         (unsigned long long)fa->max_rows, (unsigned long long)st->kept);
  if (!fa->is_private) warn(w, "\"epsilon\": null trains a NOT PRIVATE model (exact counts)");
  copied_report(w, s);
  unfilled_report(w, st);
  if (st->forest_key[0])
    warn(w, "no \"algorithm\", and the forest option \"%s\" selects the RDT forest (\"algorithm\": \"rdt\"), not the "
         "default \"auto\": name \"algorithm\" to choose (with \"auto\" the option is an error)", st->forest_key);
  if (fa->seeded)
    warn(w, "\"seed\" makes the noise known to whoever knows the seed: such a model is NOT FOR RELEASE (rdt_sign "
            "refuses it); drop \"seed\" to train a model you will publish");
  if (ledger[0])
    warn(w, st->aggregate ? "\"ledger\" is ignored (rdt_check charges nothing), and the rdt_train aggregate refuses "
                            "it: train with rdt_fit(options, query), which charges before reading"
                          : "\"ledger\" is ignored: rdt_check charges nothing; rdt_fit with these options will charge it");

  int ok = sqlite3_str_errcode(w) == SQLITE_OK;
  char *warnings = sqlite3_str_finish(w); /* NULL when empty */
  sqlite3_str_appendall(o, ",\"warnings\":[");
  if (warnings) sqlite3_str_appendall(o, warnings);
  sqlite3_str_appendall(o, "]}");
  ok = ok && sqlite3_str_errcode(o) == SQLITE_OK;
  sqlite3_free(warnings);
  char *out = sqlite3_str_finish(o);
  if (!ok) {
    sqlite3_free(out);
    return NULL;
  }
  return out;
}

static void result_report(sqlite3_context *ctx, check_state *st) {
  char *json = st->oom ? NULL : check_report(st, rdt_train_ledger(st->session));
  if (json) sqlite3_result_text(ctx, json, -1, sqlite3_free);
  else sqlite3_result_error_nomem(ctx);
}

/* ---- rdt_check(options, query) ------------------------------------------------- */

char *rdt_check_run(sqlite3 *db, sqlite3_value *options, sqlite3_value *query, int *rc, char *err, size_t en) {
  sqlite3_stmt *stmt = NULL;
  sqlite3_value **vals = NULL;
  int *col = NULL, label_col = -1, ok = 0;
  char *json = NULL;
  rdt_unit_reader rd;
  memset(&rd, 0, sizeof rd);
  *rc = SQLITE_ERROR;
  check_state *st = check_new(db, options, err, en);
  if (!st || !(stmt = rdt_fit_prepare_query(db, query, err, en))) goto done;
  uint32_t nf = st->schema->n_features;
  col = malloc((nf ? nf : 1) * sizeof *col);
  vals = malloc((nf ? nf : 1) * sizeof *vals);
  if (!col || !vals) {
    *rc = SQLITE_NOMEM;
    goto done;
  }
  /* A "privacy_unit" column is bound (so the query may carry it) and not
  ** checked as a feature; the rows are read as training reads them: at
  ** most max_rows_per_unit per unit (sql_unit.c). */
  const rdt_unit *unit = rdt_train_unit(st->session);
  int unit_col = -1;
  if (!rdt_fit_bind_columns(stmt, st->schema, rdt_train_label_name(st->session), unit->column, &label_col, &unit_col,
                            col, &st->ignored, err, en) ||
      (unit_col >= 0 && !rdt_unit_count_null(db, stmt, unit_col, &st->unit_null, err, en)))
    goto done;
  st->has_unit = unit_col >= 0;
  st->n_ignored = sqlite3_column_count(stmt) - 1 - (int)nf - st->has_unit; /* each bound once */
  ok = rdt_unit_reader_open(&rd, db, stmt, unit_col, unit->max_rows, err, en);
  stmt = NULL; /* the reader's now */
  if (!ok) goto done;
  ok = 0;
  rdt_unit_reader_start(&rd, rdt_train_seed_key(st->session), "unit-bound-check");
  while (!st->oom && rdt_unit_reader_step(&rd, db, err, en)) {
    for (uint32_t j = 0; j < nf; j++) vals[j] = sqlite3_column_value(rd.stmt, col[j]);
    check_row(st, sqlite3_column_value(rd.stmt, label_col), vals);
  }
  if (!st->oom && rd.rc != SQLITE_DONE) {
    if (rd.rc == SQLITE_INTERRUPT) *rc = SQLITE_INTERRUPT;
    else snprintf(err, en, "the query failed while it ran: %s", sqlite3_errmsg(db));
    goto done;
  }
  st->units = rd.units;
  st->units_over = rd.over;
  st->capped = rd.capped;
  json = st->oom ? NULL : check_report(st, rdt_train_ledger(st->session));
  *rc = json ? SQLITE_OK : SQLITE_NOMEM;
done:
  rdt_unit_reader_close(&rd);
  sqlite3_finalize(stmt);
  free(vals);
  free(col);
  check_free(st);
  return json;
}

void rdt_check_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  char err[512] = "";
  int rc;
  char *json = rdt_check_run(sqlite3_context_db_handle(ctx), argv[0], argv[1], &rc, err, sizeof err);
  if (json) sqlite3_result_text(ctx, json, -1, sqlite3_free);
  else if (rc == SQLITE_ERROR) rdt_sql_error(ctx, "rdt_check", err);
  else if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_error_code(ctx, rc);
}

/* ---- the aggregate rdt_check(options, label, x1, ..., xk) ------------------------- */

typedef struct check_agg {
  check_state *st; /* NULL until the first row */
  int failed;
} check_agg;

void rdt_check_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  check_agg *a = sqlite3_aggregate_context(ctx, sizeof *a);
  char err[512] = "";
  if (!a) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (a->failed) return;
  if (!a->st) {
    if (argc < 2) snprintf(err, sizeof err, "expected rdt_check(options, label, x1, ..., xk) or rdt_check(options, query)");
    else if ((a->st = check_new(sqlite3_context_db_handle(ctx), argv[0], err, sizeof err)) != NULL &&
             (uint32_t)(argc - 2) != a->st->schema->n_features)
      snprintf(err, sizeof err,
               "expected %u feature arguments after options and label (one per entry of \"features\"), got %d",
               a->st->schema->n_features, argc - 2);
    else if (a->st && rdt_train_unit(a->st->session)->column[0])
      snprintf(err, sizeof err, "\"privacy_unit\" needs rdt_check(options, query): training bounds a unit's rows "
                                "after sorting the query by unit, and the report shows what that drops");
    if (err[0]) {
      rdt_sql_error(ctx, "rdt_check", err);
      a->failed = 1;
      return;
    }
    a->st->aggregate = 1;
  }
  check_row(a->st, argv[1], argv + 2);
}

void rdt_check_final(sqlite3_context *ctx) {
  check_agg *a = sqlite3_aggregate_context(ctx, 0);
  if (!a || (!a->st && !a->failed)) {
    sqlite3_result_error(ctx,
                         "rdt_check: no rows reached rdt_check, so its options were never seen; use "
                         "rdt_check(options, query), which reports on an empty input too",
                         -1);
    return;
  }
  if (!a->failed) result_report(ctx, a->st);
  check_free(a->st);
  a->st = NULL;
}
