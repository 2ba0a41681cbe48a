/* options.c - validate rdt_train options; see options.h. */
#include "options.h"

#include <float.h>
#include <ctype.h>
#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forests/forest_kind.h"
#include "json.h"
#include "forests/matrix.h"
#include "forests/sharp.h"

static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return 0;
}

/* "structure_key" (a shard plan's): 64 hex digits, the key a structure is
** drawn from in place of the seed's or fresh OS bytes (rng.h). */
static int parse_structure_key(const rdt_json *root, int *keyed, unsigned char key[RDT_RNG_KEYBYTES], char *err,
                               size_t n) {
  const rdt_json *j = rdt_json_get(root, "structure_key");
  size_t got = 0;
  *keyed = j != NULL;
  if (j && (j->type != RDT_JSON_STRING || j->string_len != 2 * RDT_RNG_KEYBYTES ||
            sodium_hex2bin(key, RDT_RNG_KEYBYTES, j->string, j->string_len, NULL, &got, NULL) != 0 ||
            got != RDT_RNG_KEYBYTES))
    return fail(err, n, "\"structure_key\" must be %d hexadecimal digits: the key the trees are drawn from (rdt_plan "
                        "writes one into its plan)", 2 * RDT_RNG_KEYBYTES);
  return 1;
}

const char rdt_seed_with_ledger_error[] =
    "\"seed\" cannot be combined with \"ledger\": a seeded result is a deterministic function of the rows (whoever "
    "knows the seed can remove the noise), so it is not a private release and cannot be charged (seeds are for tests)";

int rdt_options_seed_key(const rdt_json *seed, const char *domain, unsigned char key[RDT_RNG_KEYBYTES]) {
  char purpose[64], num[32];
  if (seed->type == RDT_JSON_STRING) {
    snprintf(purpose, sizeof purpose, "%s-text", domain);
    rdt_rng_derive_key(key, seed->string, seed->string_len, purpose);
    return 1;
  }
  if (seed->type == RDT_JSON_NUMBER && seed->is_integer) {
    snprintf(purpose, sizeof purpose, "%s-integer", domain);
    rdt_rng_derive_key(key, num, rdt_int_text(seed->integer, num), purpose);
    return 1;
  }
  return 0;
}

int rdt_name_equal(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
    if (x >= 'A' && x <= 'Z') x = (unsigned char)(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = (unsigned char)(y - 'A' + 'a');
    if (x != y) return 0;
  }
  return *a == *b;
}

/* Edit distance between two names, case and '-' / ' ' / '_' alike (the
** nearest "algorithm" to a mistyped one). Names longer than 63 bytes are
** never near. */
static size_t name_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), row[64];
  if (la > 63 || lb > 63) return (size_t)-1;
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      char x = (char)tolower((unsigned char)a[i - 1]), y = (char)tolower((unsigned char)b[j - 1]);
      x = x == '-' || x == ' ' ? '_' : x;
      y = y == '-' || y == ' ' ? '_' : y;
      size_t up = row[j];
      size_t best = diag + (x != y);
      if (row[j] + 1 < best) best = row[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* ", did you mean \"x\"?" for the allowed name nearest to k when it is near
** (a typo), else "" (into buf). */
static const char *nearest_hint(const char *k, const char *const *allowed, const char *const *more, char *buf,
                                size_t n) {
  const char *near = NULL;
  size_t best = (size_t)-1, len = strlen(k);
  for (int list = 0; list < 2; list++)
    for (const char *const *a = list ? more : allowed; a && *a; a++) {
      size_t d = name_distance(k, *a);
      if (d < best) best = d, near = *a;
    }
  if (!near || best > (len <= 4 ? 1 : len < 8 ? 2 : len / 3)) return "";
  snprintf(buf, n, " (did you mean \"%s\"?)", near);
  return buf;
}

static int check_keys(const rdt_json *obj, const char *const *allowed, const char *where, char *err,
                      size_t n) {
  for (size_t i = 0; i < obj->n; i++) {
    const char *k = obj->items[i]->key;
    if (k[0] == '_') continue; /* a comment: JSON has none (rdt_features writes "_warning", "_note") */
    int ok = 0;
    for (const char *const *a = allowed; *a; a++) if (strcmp(k, *a) == 0) ok = 1;
    char hint[80];
    if (!ok) return fail(err, n, "unknown %s \"%.100s\"%s", where, k, nearest_hint(k, allowed, NULL, hint, sizeof hint));
    for (size_t j = 0; j < i; j++)
      if (strcmp(k, obj->items[j]->key) == 0) return fail(err, n, "duplicate %s \"%.100s\"", where, k);
  }
  return 1;
}

/* An INTEGER or TEXT JSON value -> rdt_value. what: "class" / "value". */
static int parse_value(const rdt_json *j, rdt_value *out, const char *where, char *err, size_t n) {
  if (j->type == RDT_JSON_STRING) {
    if (!rdt_value_set_text(out, j->string, j->string_len)) return fail(err, n, "out of memory");
    return 1;
  }
  if (j->type == RDT_JSON_NUMBER && j->is_integer) {
    if (!rdt_value_set_int(out, j->integer)) return fail(err, n, "out of memory");
    return 1;
  }
  return fail(err, n, "every entry of %s must be a string or an integer", where);
}

/* A list of values, or rdt_features' marked copy of one, {"copied_from_rows":
** [...]}: the same values, and *copied set, so that a model trained on it
** is flagged and can be neither charged nor signed (not for release). */
static int parse_value_list(const rdt_json *arr, rdt_value **out, uint32_t *count, uint32_t max,
                            const char *where, int *copied, char *err, size_t n) {
  *copied = arr && arr->type == RDT_JSON_OBJECT;
  if (*copied) {
    if (arr->n != 1 || strcmp(arr->items[0]->key, "copied_from_rows") != 0)
      return fail(err, n, "%s must be an array (or rdt_features' {\"copied_from_rows\": [...]})", where);
    arr = arr->items[0];
  }
  if (!arr || arr->type != RDT_JSON_ARRAY || arr->n == 0)
    return fail(err, n, "%s must be a non-empty array", where);
  if (arr->n > max) return fail(err, n, "%s has %zu entries; at most %u are allowed", where, arr->n, max);
  *out = calloc(arr->n, sizeof **out);
  if (!*out) return fail(err, n, "out of memory");
  *count = (uint32_t)arr->n;
  for (size_t i = 0; i < arr->n; i++) {
    if (!parse_value(arr->items[i], &(*out)[i], where, err, n)) {
      *count = (uint32_t)i; /* free only what was filled */
      return 0;
    }
  }
  return 1;
}

static int parse_feature(const rdt_json *j, size_t i, rdt_feature *ft, char *err, size_t n) {
  static const char *const keys[] = {"name", "type", "min", "max", "values", "bounds", NULL};
  char where[64];
  if (j->type != RDT_JSON_OBJECT) return fail(err, n, "features[%zu] must be an object", i);
  snprintf(where, sizeof where, "key in features[%zu]:", i);
  if (!check_keys(j, keys, where, err, n)) return 0;
  const rdt_json *name = rdt_json_get(j, "name"), *type = rdt_json_get(j, "type");
  if (!name || name->type != RDT_JSON_STRING || name->string_len == 0 || name->string_len > RDT_MAX_NAME)
    return fail(err, n, "features[%zu] needs a \"name\" (a non-empty string)", i);
  ft->name = strdup(name->string);
  if (!ft->name) return fail(err, n, "out of memory");
  if (!type || type->type != RDT_JSON_STRING)
    return fail(err, n, "feature \"%.100s\" needs a \"type\": \"numeric\" or \"categorical\"", ft->name);
  const rdt_json *mn = rdt_json_get(j, "min"), *mx = rdt_json_get(j, "max"), *vals = rdt_json_get(j, "values");
  const rdt_json *bounds = rdt_json_get(j, "bounds");
  if (bounds && (bounds->type != RDT_JSON_STRING || strcmp(bounds->string, "private") != 0))
    return fail(err, n, "\"bounds\" of feature \"%.100s\" must be \"private\" (or give \"min\" and \"max\")", ft->name);
  if (bounds && strcmp(type->string, "numeric") != 0)
    return fail(err, n, "\"bounds\": \"private\" applies to numeric features only (feature \"%.100s\")", ft->name);
  if (strcmp(type->string, "numeric") == 0) {
    ft->type = RDT_FEATURE_NUMERIC;
    if (vals) return fail(err, n, "numeric feature \"%.100s\" takes \"min\" and \"max\", not \"values\"", ft->name);
    if (bounds && (mn || mx))
      return fail(err, n, "numeric feature \"%.100s\" takes either \"bounds\": \"private\" or \"min\" and \"max\", "
                  "not both", ft->name);
    if (bounds) { /* placeholders: the caller estimates them before any row is trained on (unit.h, bounds.h) */
      ft->min = 0;
      ft->max = 1;
      return 1;
    }
    if (!mn || mn->type != RDT_JSON_NUMBER || !mx || mx->type != RDT_JSON_NUMBER)
      return fail(err, n, "numeric feature \"%.100s\" needs numbers \"min\" and \"max\" (its public bounds), or "
                  "\"bounds\": \"private\"", ft->name);
    if (!isfinite(mn->number) || !isfinite(mx->number) || !(mn->number < mx->number))
      return fail(err, n, "numeric feature \"%.100s\" needs finite min < max", ft->name);
    ft->min = mn->number;
    ft->max = mx->number;
    return 1;
  }
  if (strcmp(type->string, "categorical") == 0) {
    ft->type = RDT_FEATURE_CATEGORICAL;
    if (mn || mx) return fail(err, n, "categorical feature \"%.100s\" takes \"values\", not \"min\"/\"max\"", ft->name);
    char w[160];
    snprintf(w, sizeof w, "\"values\" of feature \"%.100s\"", ft->name);
    return parse_value_list(vals, &ft->values, &ft->n_values, RDT_MAX_VALUES, w, &ft->copied, err, n);
  }
  return fail(err, n, "feature \"%.100s\" has unknown type \"%.40s\" (numeric or categorical)", ft->name,
              type->string);
}

static int parse_uint(const rdt_json *j, const char *key, uint32_t lo, uint32_t hi, uint32_t dflt,
                      uint32_t *out, char *err, size_t n) {
  if (!j) { *out = dflt; return 1; }
  if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < lo || j->integer > hi)
    return fail(err, n, "\"%s\" must be an integer from %u to %u", key, lo, hi);
  *out = (uint32_t)j->integer;
  return 1;
}

/* A string option naming one of k choices: *out gets values[i] for names[i],
** or dflt when the option is absent. */
static int parse_choice(const rdt_json *j, const char *key, const char *const *names, const int *values, size_t k,
                        int dflt, int *out, char *err, size_t n) {
  *out = dflt;
  if (!j) return 1;
  for (size_t i = 0; i < k; i++)
    if (j->type == RDT_JSON_STRING && strcmp(j->string, names[i]) == 0) {
      *out = values[i];
      return 1;
    }
  char list[256] = "";
  size_t used = 0;
  for (size_t i = 0; i < k && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"", i == 0 ? "" : i + 1 < k ? ", " : " or ",
                             names[i]);
  return fail(err, n, "\"%s\" must be %s", key, list);
}

static int parse_bool(const rdt_json *j, const char *key, int dflt, int *out, char *err, size_t n) {
  *out = dflt;
  if (!j) return 1;
  if (j->type != RDT_JSON_TRUE && j->type != RDT_JSON_FALSE) return fail(err, n, "\"%s\" must be true or false", key);
  *out = j->type == RDT_JSON_TRUE;
  return 1;
}

/* DiPriMe's own options (diprime.h). */
static int parse_diprime(const rdt_json *root, rdt_schema *s, rdt_config *c, char *err, size_t n) {
  (void)s;
  const rdt_json *j = rdt_json_get(root, "rho");
  c->rho = RDT_DIPRIME_DEFAULT_RHO;
  if (j) {
    if (j->type != RDT_JSON_NUMBER || !(j->number > 0 && j->number < 1))
      return fail(err, n, "\"rho\" must be a number strictly between 0 and 1 (the share of epsilon for splits)");
    c->rho = j->number;
  }
  if (!parse_uint(rdt_json_get(root, "candidates"), "candidates", 1, RDT_MAX_FEATURES, RDT_DIPRIME_DEFAULT_CANDIDATES,
                  &c->candidates, err, n))
    return 0;
  if (!parse_bool(rdt_json_get(root, "partition"), "partition", 1, &c->partition, err, n)) return 0;
  static const char *const task_names[] = {"classification", "regression"};
  static const int task_values[] = {RDT_TASK_CLASSIFICATION, RDT_TASK_REGRESSION};
  int choice;
  if (!parse_choice(rdt_json_get(root, "task"), "task", task_names, task_values, 2, RDT_TASK_CLASSIFICATION, &choice,
                    err, n))
    return 0;
  c->task = (rdt_task)choice;
  j = rdt_json_get(root, "target");
  if (c->task == RDT_TASK_REGRESSION) {
    const rdt_json *lo = rdt_json_get(j, "min"), *hi = rdt_json_get(j, "max");
    if (!j || j->type != RDT_JSON_OBJECT || j->n != 2 || !lo || !hi || lo->type != RDT_JSON_NUMBER ||
        hi->type != RDT_JSON_NUMBER || !isfinite(lo->number) || !isfinite(hi->number) ||
        !(lo->number < hi->number) || !isfinite(hi->number - lo->number))
      return fail(err, n, "a regression model needs \"target\": {\"min\": lo, \"max\": hi} with finite lo < hi "
                          "(the public bounds of the target)");
    /* The split utility divides by R^2 and the leaf sums count in grid units
    ** of R / 2^16 (diprime.h): R^2 must be a finite normal number, which also
    ** keeps the grid R / 2^16 (>= 2^-527) normal. */
    double r = hi->number - lo->number;
    if (!isfinite(r * r) || r * r < DBL_MIN)
      return fail(err, n, "\"target\" range max - min = %g is too %s for DiPriMe regression: its square %s; "
                  "rescale the target", r, r > 1 ? "large" : "small", r > 1 ? "overflows" : "underflows");
    c->target_min = lo->number;
    c->target_max = hi->number;
  } else if (j) {
    return fail(err, n, "\"target\" applies to \"task\": \"regression\" only");
  }
  j = rdt_json_get(root, "max_rows");
  c->max_rows = RDT_DIPRIME_DEFAULT_MAX_ROWS;
  if (j) {
    if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < 1 || j->integer > RDT_DIPRIME_MAX_ROWS)
      return fail(err, n, "\"max_rows\" must be an integer from 1 to %lld", (long long)RDT_DIPRIME_MAX_ROWS);
    c->max_rows = (uint64_t)j->integer;
  }
  return 1;
}

/* "epsilon": a number (rounded down onto the 2^-32 grid) or null. */
static int parse_epsilon(const rdt_json *j, int *is_private, rdt_eps *eps, char *err, size_t n) {
  if (!j) return fail(err, n, "\"epsilon\" is required: a number > 0, or null for a non-private model");
  *is_private = j->type != RDT_JSON_NULL;
  if (!*is_private) return 1;
  if (j->type != RDT_JSON_NUMBER || !(j->number > 0))
    return fail(err, n, "\"epsilon\" must be a number > 0, or null for a non-private model");
  if (!rdt_eps_from_double(j->number, eps))
    return fail(err, n, "\"epsilon\" must be between %g and %g", RDT_EPS_MIN, RDT_EPS_MAX);
  return 1;
}

/* "privacy_unit", "max_rows_per_unit", "bounds_share" and the features'
** "bounds": "private" (unit.h). *eps is the whole ε on entry and the
** model's per-row ε on return (unit.h, contracts 4 and 5): every budget
** derived from it later (row count, trees, tables) is per row. */
static int parse_unit(const rdt_json *root, int is_private, rdt_eps *eps, rdt_unit *u, char *err, size_t n) {
  memset(u, 0, sizeof *u);
  u->max_rows = 1;
  const rdt_json *col = rdt_json_get(root, "privacy_unit"), *k = rdt_json_get(root, "max_rows_per_unit");
  const rdt_json *share = rdt_json_get(root, "bounds_share"), *features = rdt_json_get(root, "features");
  if (col) {
    if (col->type != RDT_JSON_STRING || col->string_len == 0 || col->string_len > RDT_MAX_NAME ||
        strlen(col->string) != col->string_len)
      return fail(err, n, "\"privacy_unit\" must be the name of the column that identifies a unit (a non-empty string)");
    memcpy(u->column, col->string, col->string_len + 1);
    if (!k)
      return fail(err, n, "\"privacy_unit\" needs \"max_rows_per_unit\": the most rows one unit may contribute (rows "
                          "beyond it are dropped at random)");
  }
  if (k && !col) return fail(err, n, "\"max_rows_per_unit\" applies with \"privacy_unit\" only");
  if (k) {
    if (k->type != RDT_JSON_NUMBER || !k->is_integer || k->integer < 1 || k->integer > RDT_UNIT_MAX_ROWS)
      return fail(err, n, "\"max_rows_per_unit\" must be an integer from 1 to %d", RDT_UNIT_MAX_ROWS);
    u->max_rows = (uint32_t)k->integer;
  }
  /* Which features ask for private bounds (their values are checked by parse_feature). */
  if (features && features->type == RDT_JSON_ARRAY)
    for (size_t i = 0; i < features->n && i < RDT_MAX_FEATURES; i++)
      if (features->items[i]->type == RDT_JSON_OBJECT && rdt_json_get(features->items[i], "bounds"))
        rdt_unit_set_private(u, (uint32_t)i);
  double sh = RDT_BOUNDS_DEFAULT_SHARE;
  if (share && !u->n_private)
    return fail(err, n, "\"bounds_share\" applies only when a feature has \"bounds\": \"private\"");
  if (share) {
    if (share->type != RDT_JSON_NUMBER || !(share->number >= RDT_BOUNDS_MIN_SHARE && share->number <= RDT_BOUNDS_MAX_SHARE))
      return fail(err, n, "\"bounds_share\" must be a number from %g to %g (the share of epsilon for private bounds)",
                  RDT_BOUNDS_MIN_SHARE, RDT_BOUNDS_MAX_SHARE);
    sh = share->number;
  }
  if (!rdt_unit_active(u)) return 1;
  if (!is_private)
    return fail(err, n, "%s needs a private model (\"epsilon\" a number): %s", u->column[0] ? "\"privacy_unit\""
                : "\"bounds\": \"private\"", u->column[0] ? "a non-private model has no neighbouring relation to "
                "widen" : "private bounds are estimated with a share of epsilon");
  if (!rdt_unit_divide(u, *eps, sh, eps))
    return fail(err, n, "\"epsilon\" is too small for %u rows per unit and %u private bounds: a share rounds to 0",
                u->max_rows, u->n_private);
  return 1;
}

/* The unit column is neither the label nor a feature (rdt_fit binds columns by name). */
static int unit_column_free(const rdt_unit *u, const char *label, const rdt_schema *s, char *err, size_t n) {
  if (!u->column[0]) return 1;
  if (rdt_name_equal(u->column, label))
    return fail(err, n, "\"privacy_unit\" names the label column \"%.100s\"; the unit must be a column of its own",
                u->column);
  for (uint32_t j = 0; j < s->n_features; j++)
    if (rdt_name_equal(u->column, s->features[j].name))
      return fail(err, n, "\"privacy_unit\" names the feature \"%.100s\"; the unit column is not a feature",
                  u->column);
  return 1;
}

/* Every numeric feature still without its bounds, named in one message
** (rdt_features' skeleton leaves them null): one round of filling in, not
** one per feature. A single one is parse_feature's to report. */
static int all_bounds_given(const rdt_json *features, char *err, size_t n) {
  char names[400] = "";
  size_t missing = 0, used = 0;
  for (size_t i = 0; i < features->n; i++) {
    const rdt_json *f = features->items[i];
    if (f->type != RDT_JSON_OBJECT) continue;
    const rdt_json *type = rdt_json_get(f, "type"), *name = rdt_json_get(f, "name");
    const rdt_json *mn = rdt_json_get(f, "min"), *mx = rdt_json_get(f, "max");
    if (!type || type->type != RDT_JSON_STRING || strcmp(type->string, "numeric") != 0 || rdt_json_get(f, "bounds") ||
        !name || name->type != RDT_JSON_STRING || (mn && mn->type == RDT_JSON_NUMBER && mx && mx->type == RDT_JSON_NUMBER))
      continue;
    if (missing++ < 12 && used < sizeof names)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s\"%.40s\"", missing > 1 ? ", " : "", name->string);
  }
  if (missing < 2) return 1;
  return fail(err, n, "%zu numeric features need numbers \"min\" and \"max\" (their public bounds), or \"bounds\": "
              "\"private\": %s%s", missing, names, missing > 12 ? ", ..." : "");
}

/* An "algorithm" that names nothing: every name there is, the default
** first, and the nearest one when it is near (a typo, another spelling). */
static int unknown_algorithm(const char *given, const char *const *forests, size_t n_forests, char *err, size_t n) {
  const char *names[32], *near = NULL;
  size_t k = 0, best = (size_t)-1;
  names[k++] = "auto";
  for (size_t i = 0; rdt_learner_at(i) && k < 24; i++)
    if (strcmp(rdt_learner_at(i)->name, "auto") != 0) names[k++] = rdt_learner_at(i)->name;
  for (size_t i = 0; i < n_forests && k < 32; i++) names[k++] = forests[i];
  for (size_t i = 0; i < k; i++) {
    size_t d = name_distance(given, names[i]);
    if (d < best) best = d, near = names[i];
  }
  size_t len = strlen(given);
  char list[512] = "";
  for (size_t i = 0, used = 0; i < k && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"%s", i ? ", " : "", names[i],
                             i == 0 ? " (the default: it picks one of the others privately)" : "");
  if (near && best <= (len < 6 ? 2 : len / 3))
    return fail(err, n, "unknown \"algorithm\" \"%.100s\": did you mean \"%s\"? It is one of %s", given, near, list);
  return fail(err, n, "unknown \"algorithm\" \"%.100s\": it is one of %s", given, list);
}

/* "classes" (or none for regression) and "features" -> the schema, with its
** indexes; no feature may carry the label column's name. */
/* A list copied from the rows cannot be charged: a ledger is the curator's
** way of releasing, and that list would be released with the model. */
static int copied_not_charged(const rdt_schema *s, const char *ledger, char *err, size_t n) {
  if (!s->from_rows || !ledger[0]) return 1;
  char what[160] = "\"classes\"";
  for (uint32_t f = 0; !s->classes_copied && f < s->n_features; f++)
    if (s->features[f].copied) {
      snprintf(what, sizeof what, "\"values\" of feature \"%.100s\"", s->features[f].name);
      break;
    }
  return fail(err, n, "%s is the list rdt_features copied from the private rows (\"copied_from_rows\"), which would "
              "be released with the model: a charged release needs the public domain; replace it with the public list "
              "(a codebook, the form's choices)", what);
}

static int parse_schema(const rdt_json *root, int regression, const char *label, const char *ledger, rdt_schema *s,
                        char *err, size_t n) {
  const rdt_json *j;
  j = rdt_json_get(root, "classes");
  if (regression) {
    if (j) return fail(err, n, "a regression model takes \"target\": {\"min\": lo, \"max\": hi}, not \"classes\"");
  } else {
    if (!j) return fail(err, n, "\"classes\" is required: the public list of labels");
    if (!parse_value_list(j, &s->classes, &s->n_classes, RDT_MAX_CLASSES, "\"classes\"", &s->classes_copied, err, n))
      return 0;
  }

  j = rdt_json_get(root, "features");
  if (!j) return fail(err, n, "\"features\" is required: the public domain of every feature argument");
  if (j->type != RDT_JSON_ARRAY || j->n == 0) return fail(err, n, "\"features\" must be a non-empty array");
  if (j->n > RDT_MAX_FEATURES) return fail(err, n, "at most %d features are allowed", RDT_MAX_FEATURES);
  if (!all_bounds_given(j, err, n)) return 0;
  s->features = calloc(j->n, sizeof *s->features);
  if (!s->features) return fail(err, n, "out of memory");
  s->n_features = (uint32_t)j->n;
  for (size_t i = 0; i < j->n; i++) {
    if (!parse_feature(j->items[i], i, &s->features[i], err, n)) return 0;
    /* rdt_fit binds result columns by name, and SQL names ignore case. */
    for (size_t k = 0; k < i; k++)
      if (rdt_name_equal(s->features[k].name, s->features[i].name))
        return fail(err, n, "duplicate feature name \"%.100s\" (names match without regard to case)",
                    s->features[i].name);
    if (rdt_name_equal(s->features[i].name, label))
      return fail(err, n, "feature \"%.100s\" has the label column's name; name the label with \"label\"",
                  s->features[i].name);
    s->from_rows |= s->features[i].copied;
  }
  s->from_rows |= s->classes_copied;

  long what;
  uint32_t dup;
  int rc = rdt_schema_build_indexes(s, &what, &dup);
  if (rc == 0) return fail(err, n, "out of memory");
  if (rc < 0) {
    if (what < 0) return fail(err, n, "\"classes\" lists \"%.100s\" twice (labels match by text)", s->classes[dup].text);
    return fail(err, n, "\"values\" of feature \"%.100s\" lists \"%.100s\" twice", s->features[what].name,
                s->features[what].values[dup].text);
  }
  return copied_not_charged(s, ledger, err, n);
}

static int parse_all(const rdt_json *root, rdt_schema *s, rdt_config *c, char *err, size_t n) {
  static const char *const keys[] = {"epsilon", "trees", "depth", "vote", "classes", "features",
                                     "seed", "algorithm", "splits", "categorical", "rho", "candidates",
                                     "partition", "task", "target", "max_rows", "ledger", "rows", "noise",
                                     "strategy", "bins", "public_query", "secondary_trees", "cells", "keep_trees",
                                     "threads", "label", "public_tables", "privacy_unit", "max_rows_per_unit",
                                     "bounds_share", "note", "structure_key", NULL};
  static const char *const diprime_only[] = {"rho", "candidates", "partition", "task", "target", "max_rows", NULL};
  static const char *const matrix_only[] = {"strategy", NULL};
  static const char *const sharp_only[] = {"public_query", "public_tables", "secondary_trees", "cells", NULL};
  if (root->type != RDT_JSON_OBJECT) return fail(err, n, "options must be a JSON object");
  if (!check_keys(root, keys, "option", err, n)) return 0;

  /* The "algorithm" names are the forest kinds' options (forest_kind.h),
  ** in the table's order, without a "noise" (matrix is "rdt" with "noise":
  ** "matrix"); the table's first kind, RDT, is the default. */
  const char *algorithm_names[8];
  int algorithm_values[8];
  size_t n_algorithms = 0;
  for (size_t i = 0; rdt_forest_kind_at(i) && n_algorithms < 8; i++)
    if (!rdt_forest_kind_at(i)->noise) {
      algorithm_names[n_algorithms] = rdt_forest_kind_at(i)->option;
      algorithm_values[n_algorithms++] = (int)rdt_forest_kind_at(i)->algorithm;
    }
  int choice;
  const rdt_json *alg = rdt_json_get(root, "algorithm");
  if (alg && alg->type == RDT_JSON_STRING) {
    int known = 0;
    for (size_t i = 0; i < n_algorithms; i++) known |= strcmp(alg->string, algorithm_names[i]) == 0;
    if (!known) return unknown_algorithm(alg->string, algorithm_names, n_algorithms, err, n);
  }
  if (!parse_choice(alg, "algorithm", algorithm_names, algorithm_values, n_algorithms,
                    (int)rdt_forest_kind_at(0)->algorithm, &choice, err, n))
    return 0;
  c->algorithm = (rdt_algorithm)choice;
  const rdt_forest_kind *kind = rdt_forest_kind_of(c->algorithm);
  int sharp = kind->reads_public_rows; /* RDT#'s options: where its public rows come from */
  uint32_t secondary = 0;
  if (!sharp)
    for (const char *const *k = sharp_only; *k; k++)
      if (rdt_json_get(root, *k)) return fail(err, n, "option \"%s\" applies to \"algorithm\": \"rdt#\" only", *k);
  c->task = RDT_TASK_CLASSIFICATION;
  const rdt_json *j;
  static const char *const rdt_only[] = {"splits", "categorical", NULL};
  /* "noise": "leaf" (per-leaf Laplace on complete binary trees, the
  ** default) or "matrix" (multiway trees, matrix mechanism: matrix.h). */
  static const char *const noise_names[] = {"leaf", "matrix"};
  static const int noise_values[] = {0, 1};
  int matrix;
  if (!parse_choice(rdt_json_get(root, "noise"), "noise", noise_names, noise_values, 2, 0, &matrix, err, n)) return 0;
  if (matrix) { /* the kind of this "algorithm" with "noise": "matrix" */
    kind = rdt_forest_kind_with_noise(kind->option, "matrix");
    if (!kind) return fail(err, n, "\"noise\": \"matrix\" applies to \"algorithm\": \"rdt\" only");
  }
  if (!matrix)
    for (const char *const *k = matrix_only; *k; k++)
      if (rdt_json_get(root, *k)) return fail(err, n, "option \"%s\" applies to \"noise\": \"matrix\" only", *k);
  if (!matrix && !sharp && rdt_json_get(root, "bins"))
    return fail(err, n, "option \"bins\" applies to \"noise\": \"matrix\" and \"algorithm\": \"rdt#\" only");
  if (sharp) {
    /* RDT# (sharp.h): the public rows come from "public_query". */
    static const char *const sharp_refuses[] = {"splits", "categorical", "rho", "candidates", "task", "target",
                                                "max_rows", "partition", NULL};
    for (const char *const *k = sharp_refuses; *k; k++)
      if (rdt_json_get(root, *k)) return fail(err, n, "option \"%s\" does not apply to \"algorithm\": \"rdt#\"", *k);
    j = rdt_json_get(root, "public_query");
    if (!j || j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len >= sizeof c->public_query)
      return fail(err, n, "\"algorithm\": \"rdt#\" needs \"public_query\": a SELECT of the public unlabeled rows, "
                          "one column per feature in order (at most %d bytes)", RDT_SHARP_MAX_QUERY - 1);
    memcpy(c->public_query, j->string, j->string_len + 1);
    /* The tables public_query may read, each declared public by the curator
    ** (sql_train.c, contract 4, checks both on its compiled program): a
    ** query of the private table would publish private rows verbatim as
    ** centres. */
    j = rdt_json_get(root, "public_tables");
    if (!j || j->type != RDT_JSON_ARRAY)
      return fail(err, n, "\"algorithm\": \"rdt#\" needs \"public_tables\": the list of the tables \"public_query\" "
                          "reads (it may read no other)");
    c->public_tables_len = 0;
    for (size_t i = 0; i < j->n; i++) {
      const rdt_json *t = j->items[i];
      if (t->type != RDT_JSON_STRING || t->string_len == 0 || strlen(t->string) != t->string_len)
        return fail(err, n, "every entry of \"public_tables\" must be a table name (a non-empty string)");
      if (c->public_tables_len + t->string_len + 1 > sizeof c->public_tables)
        return fail(err, n, "\"public_tables\" is too long (at most %zu bytes of names)", sizeof c->public_tables - 1);
      memcpy(c->public_tables + c->public_tables_len, t->string, t->string_len + 1);
      c->public_tables_len += (uint32_t)t->string_len + 1;
    }
    if (!parse_uint(rdt_json_get(root, "secondary_trees"), "secondary_trees", 0, RDT_MAX_TREES - 1,
                    RDT_SHARP_DEFAULT_SECONDARY, &secondary, err, n) ||
        !parse_uint(rdt_json_get(root, "cells"), "cells", 1, RDT_SHARP_MAX_CELLS, RDT_SHARP_DEFAULT_CELLS, &c->cells,
                    err, n))
      return 0;
    if (!parse_uint(rdt_json_get(root, "bins"), "bins", 2, RDT_MATRIX_MAX_BINS, RDT_MATRIX_DEFAULT_BINS, &c->bins,
                    err, n))
      return 0;
  }
  if (matrix) {
    c->algorithm = kind->algorithm;
    static const char *const matrix_refuses[] = {"splits", "categorical", "rows", "rho", "candidates", "task", "target",
                                                 "max_rows", NULL};
    for (const char *const *k = matrix_refuses; *k; k++)
      if (rdt_json_get(root, *k)) return fail(err, n, "option \"%s\" does not apply to \"noise\": \"matrix\"", *k);
    static const char *const strategy_names[] = {"auto", "leaf", "identity", "marginals", "grouped"};
    static const int strategy_values[] = {RDT_STRATEGY_AUTO, RDT_STRATEGY_LEAF, RDT_STRATEGY_IDENTITY,
                                          RDT_STRATEGY_MARGINALS, RDT_STRATEGY_GROUPED};
    if (!parse_choice(rdt_json_get(root, "strategy"), "strategy", strategy_names, strategy_values, 5,
                      RDT_STRATEGY_AUTO, &choice, err, n))
      return 0;
    c->strategy = (uint32_t)choice;
    if (!parse_uint(rdt_json_get(root, "bins"), "bins", 2, RDT_MATRIX_MAX_BINS, RDT_MATRIX_DEFAULT_BINS, &c->bins,
                    err, n))
      return 0;
    if (!parse_bool(rdt_json_get(root, "partition"), "partition", 0, &c->partition, err, n)) return 0;
    if (c->partition && c->strategy != RDT_STRATEGY_AUTO && c->strategy != RDT_STRATEGY_LEAF)
      return fail(err, n, "\"partition\" applies to the \"leaf\" strategy only");
  } else if (c->algorithm == RDT_ALGO_RDT || sharp) { /* else DiPriMe: its options, as the messages name it */
    for (const char *const *k = diprime_only; *k; k++)
      if (rdt_json_get(root, *k)) return fail(err, n, "option \"%s\" applies to \"algorithm\": \"diprime\" only", *k);
  } else {
    for (const char *const *k = rdt_only; *k; k++)
      if (rdt_json_get(root, *k)) return fail(err, n, "option \"%s\" applies to \"algorithm\": \"rdt\" only", *k);
    if (!parse_diprime(root, s, c, err, n)) return 0;
  }

  if (!parse_epsilon(rdt_json_get(root, "epsilon"), &c->is_private, &c->eps, err, n) ||
      !parse_unit(root, c->is_private, &c->eps, &c->unit, err, n))
    return 0;
  if (!parse_uint(rdt_json_get(root, "trees"), "trees", 1, RDT_MAX_TREES,
                  matrix ? RDT_MATRIX_DEFAULT_TREES : sharp ? RDT_SHARP_DEFAULT_TREES : RDT_DEFAULT_TREES, &c->trees,
                  err, n))
    return 0;
  c->trees_auto = matrix && !rdt_json_get(root, "trees") && c->is_private;
  if (sharp) { /* "trees" is p; the model holds p + secondary trees */
    if ((uint64_t)c->trees + secondary > RDT_MAX_TREES ||
        (!rdt_json_get(root, "trees") && secondary + RDT_SHARP_MAX_AUTO_TREES > RDT_MAX_TREES))
      return fail(err, n, "\"trees\" + \"secondary_trees\" must be at most %d", RDT_MAX_TREES);
    /* Without "trees", p is chosen once the depth is known (rdt_sharp_primary): 0 here. */
    c->primary_trees = rdt_json_get(root, "trees") || !c->is_private ? c->trees : 0;
    c->trees = c->primary_trees + secondary;
  }
  /* RDT# without "depth": 0 here, the paper's rule once the public rows are
  ** counted (rdt_sharp_depth). */
  if (!parse_uint(rdt_json_get(root, "depth"), "depth", 1, RDT_MAX_DEPTH,
                  matrix ? RDT_MATRIX_DEFAULT_DEPTH : RDT_DEFAULT_DEPTH, &c->depth, err, n))
    return 0;
  if (sharp && !rdt_json_get(root, "depth")) c->depth = 0;
  j = rdt_json_get(root, "rows");
  long long rows_hint = 0;
  c->auto_depth = 0;
  c->eps_count.num = 0;
  if (!j && !rdt_json_get(root, "depth") && kind->auto_depth && !c->is_private) {
    /* A non-private model's structure never depends on the rows (issue 19:
    ** an exact count choosing the depth made rdt_predict_batch leak): a
    ** fixed depth, so batch prediction's proof holds. */
    c->depth = RDT_NONPRIVATE_DEFAULT_DEPTH;
  } else if (!j && !rdt_json_get(root, "depth") && kind->auto_depth) {
    /* Neither a depth nor a public row estimate: grow to RDT_AUTO_MAX_DEPTH
    ** and choose the depth after the pass from a noisy row count paid with
    ** 1/RDT_AUTO_COUNT_SHARE of epsilon (forest.h). */
    c->auto_depth = 1;
    c->depth = RDT_AUTO_MAX_DEPTH;
    c->eps_count.num = c->eps.num / RDT_AUTO_COUNT_SHARE;
    if (c->eps_count.num == 0) c->eps_count.num = 1;
    if (c->eps_count.num >= c->eps.num)
      return fail(err, n, "\"epsilon\" is too small to pay for the noisy row count; give \"depth\" or \"rows\"");
  }
  if (j) {
    if (j->type != RDT_JSON_NUMBER || !j->is_integer || j->integer < 1 || j->integer > ((long long)1 << 50))
      return fail(err, n, "\"rows\" must be a positive integer: a public estimate of the number of rows");
    /* The depth itself is chosen once the classes are known (below). */
    rows_hint = j->integer;
    if (sharp) c->public_n = (uint64_t)j->integer; /* RDT#: the public n of the depth rule */
  }

  static const char *const vote_names[] = {"majority", "threshold", "probabilistic", "weight"};
  static const int vote_values[] = {RDT_VOTE_MAJORITY, RDT_VOTE_THRESHOLD, RDT_VOTE_PROBABILISTIC, RDT_VOTE_WEIGHT};
  if (!parse_choice(rdt_json_get(root, "vote"), "vote", vote_names, vote_values, 4,
                    sharp ? RDT_VOTE_WEIGHT : RDT_VOTE_THRESHOLD, &choice, err, n))
    return 0;
  c->vote = (rdt_vote)choice;

  /* "keep_trees": the share of trees that vote, the best by their released
  ** counters (tree_selection.h); post-processing, so any share is free. */
  j = rdt_json_get(root, "keep_trees");
  c->keep_trees = 1;
  if (j) {
    if (j->type != RDT_JSON_NUMBER || !(j->number > 0 && j->number <= 1))
      return fail(err, n, "\"keep_trees\" must be a number in (0, 1]: the share of trees that vote");
    if (c->task == RDT_TASK_REGRESSION) return fail(err, n, "\"keep_trees\" does not apply to a regression model");
    c->keep_trees = j->number;
  }

  /* "threads": 2 counts the rows on a second thread while SQLite reads the
  ** next ones (train_worker.h); the model is the same either way. */
  if (!parse_uint(rdt_json_get(root, "threads"), "threads", 1, 2, 2, &c->threads, err, n)) return 0;

  static const char *const split_names[] = {"reachable", "global"};
  static const int split_values[] = {RDT_SPLITS_REACHABLE, RDT_SPLITS_GLOBAL};
  if (!parse_choice(rdt_json_get(root, "splits"), "splits", split_names, split_values, 2, RDT_SPLITS_REACHABLE, &choice,
                    err, n))
    return 0;
  c->splits = (rdt_split_domain)choice;

  static const char *const categorical_names[] = {"subset", "one_vs_rest"};
  static const int categorical_values[] = {RDT_CATEGORICAL_SUBSET, RDT_CATEGORICAL_ONE_VS_REST};
  if (!parse_choice(rdt_json_get(root, "categorical"), "categorical", categorical_names, categorical_values, 2,
                    RDT_CATEGORICAL_SUBSET, &choice, err, n))
    return 0;
  c->categorical = (rdt_categorical)choice;

  j = rdt_json_get(root, "ledger");
  c->ledger[0] = 0;
  if (j) {
    if (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len >= sizeof c->ledger)
      return fail(err, n, "\"ledger\" must be the name of an rdt_ledger table (1 to 128 characters)");
    memcpy(c->ledger, j->string, j->string_len + 1);
  }

  j = rdt_json_get(root, "seed");
  c->seeded = j != NULL;
  if (j && !rdt_options_seed_key(j, "seed", c->seed_key))
    return fail(err, n, "\"seed\" must be an integer or a string");
  /* A chosen seed fixes the noise: the result is then a deterministic
  ** function of the rows, so it cannot be charged as a private release. */
  if (!rdt_options_note(root, NULL, 0, err, n) || !parse_structure_key(root, &c->keyed, c->structure_key, err, n))
    return 0;
  if (c->seeded && c->ledger[0])
    return fail(err, n, "%s", rdt_seed_with_ledger_error);
  j = rdt_json_get(root, "label");
  c->label[0] = 0;
  if (j && (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len > RDT_MAX_NAME ||
            strlen(j->string) != j->string_len))
    return fail(err, n, "\"label\" must be the name of the label column (a non-empty string)");
  memcpy(c->label, j ? j->string : "label", j ? j->string_len + 1 : sizeof "label");

  if (!parse_schema(root, c->task == RDT_TASK_REGRESSION, c->label, c->ledger, s, err, n) ||
      !unit_column_free(&c->unit, c->label, s, err, n))
    return 0;
  if (c->task == RDT_TASK_REGRESSION && rdt_json_get(root, "vote"))
    return fail(err, n, "\"vote\" does not apply to a regression model");
  /* Default depth from public facts only (the user's row estimate, trees,
  ** epsilon, classes): the rule of rdt_depth_for_rows (forest.h). */
  if (rows_hint && !rdt_json_get(root, "depth") && kind->auto_depth)
    c->depth = rdt_depth_for_rows(c, (double)rows_hint, s->n_classes, RDT_AUTO_MAX_DEPTH);
  if (!matrix && !sharp && rdt_forest_counters(c, rdt_config_slots(c, s->n_classes)) == 0)
    return fail(err, n, "model too large: %u trees x 2^%u leaves x %u values per leaf exceeds %llu counters",
                c->trees, c->depth, rdt_config_slots(c, s->n_classes), (unsigned long long)RDT_MAX_COUNTERS);
  return 1;
}

int rdt_options_parse(const char *json, size_t len, rdt_schema *schema, rdt_config *config, char *err,
                      size_t err_size) {
  char jerr[128];
  memset(schema, 0, sizeof *schema);
  memset(config, 0, sizeof *config);
  rdt_json *root = rdt_json_parse(json, len, jerr, sizeof jerr);
  if (!root) {
    snprintf(err, err_size, "options are not valid JSON: %s", jerr);
    return 0;
  }
  int ok = rdt_options_parse_tree(root, schema, config, err, err_size);
  rdt_json_free(root);
  return ok;
}

int rdt_options_parse_tree(const rdt_json *root, rdt_schema *schema, rdt_config *config, char *err,
                           size_t err_size) {
  memset(schema, 0, sizeof *schema);
  memset(config, 0, sizeof *config);
  int ok = parse_all(root, schema, config, err, err_size);
  if (!ok) rdt_schema_free(schema);
  return ok;
}

int rdt_options_note(const rdt_json *root, char *out, size_t size, char *err, size_t n) {
  const rdt_json *j = rdt_json_get(root, "note");
  if (out && size) out[0] = 0;
  if (!j) return 1;
  /* The JSON reader refuses a NUL in a string, so the note is a C string. */
  if (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len > RDT_NOTE_MAX)
    return fail(err, n, "\"note\" must be a string of 1 to %d bytes: it is recorded with the ledger charge",
                RDT_NOTE_MAX);
  if (!rdt_json_get(root, "ledger"))
    return fail(err, n, "\"note\" is recorded with a ledger charge: it needs \"ledger\"");
  if (out && size > j->string_len) memcpy(out, j->string, j->string_len + 1);
  return 1;
}

/* ---- options of a registered learner (learner.h) ------------------------- */

/* The options every learner reads (learner_parse); "algorithm" among them. */
static const char *const learner_common[] = {"epsilon", "algorithm", "classes", "features", "seed", "ledger",
                                             "label", "task", "target", "threads", "privacy_unit",
                                             "max_rows_per_unit", "bounds_share", "note", "structure_key", NULL};

static int is_learner_common(const char *k) {
  for (const char *const *a = learner_common; *a; a++)
    if (strcmp(k, *a) == 0) return 1;
  return 0;
}

int rdt_options_forest_key(const rdt_json *root, char *key, size_t n) {
  if (root->type != RDT_JSON_OBJECT || rdt_json_get(root, "algorithm")) return 0;
  for (size_t i = 0; i < root->n; i++) {
    const char *k = root->items[i]->key;
    if (k[0] != '_' && !is_learner_common(k)) {
      snprintf(key, n, "%s", k);
      return 1;
    }
  }
  return 0;
}

int rdt_options_learner(const char *json, size_t len, const rdt_learner **out) {
  char jerr[16];
  rdt_json *root = rdt_json_parse(json, len, jerr, sizeof jerr);
  *out = NULL;
  int found = root && rdt_options_learner_of(root, out);
  rdt_json_free(root);
  return found;
}

int rdt_options_learner_of(const rdt_json *root, const rdt_learner **out) {
  *out = NULL;
  if (root->type == RDT_JSON_OBJECT) {
    const rdt_json *a = rdt_json_get(root, "algorithm");
    if (a) {
      *out = a->type == RDT_JSON_STRING ? rdt_learner_find(a->string) : NULL;
    } else {
      /* No "algorithm": "auto", unless a forest option (trees, depth, vote,
      ** noise, ...) asks for the RDT forest, as before auto was the default. */
      int forest = 0;
      for (size_t i = 0; i < root->n && !forest; i++)
        forest = root->items[i]->key[0] != '_' && !is_learner_common(root->items[i]->key);
      if (!forest) *out = rdt_learner_find("auto");
    }
  }
  return *out != NULL;
}

static int learner_parse(const rdt_json *root, const rdt_learner *l, rdt_schema *s, rdt_learn_common *c,
                         char *ledger, size_t ledger_size, char *label, char *err, size_t n) {
  if (root->type != RDT_JSON_OBJECT) return fail(err, n, "options must be a JSON object");
  for (size_t i = 0; i < root->n; i++) {
    const char *k = root->items[i]->key;
    if (k[0] == '_') continue; /* a comment, as in check_keys */
    int known = is_learner_common(k);
    for (const char *const *a = l->options; *a && !known; a++) known = strcmp(k, *a) == 0;
    char hint[80];
    if (!known)
      return fail(err, n, "option \"%.100s\" does not apply to \"algorithm\": \"%s\"%s", k, l->name,
                  nearest_hint(k, learner_common, l->options, hint, sizeof hint));
    for (size_t j = 0; j < i; j++)
      if (strcmp(k, root->items[j]->key) == 0) return fail(err, n, "duplicate option \"%.100s\"", k);
  }
  if (!parse_epsilon(rdt_json_get(root, "epsilon"), &c->is_private, &c->eps, err, n) ||
      !parse_unit(root, c->is_private, &c->eps, &c->unit, err, n))
    return 0;
  const rdt_json *j;
  static const char *const task_names[] = {"classification", "regression"};
  static const int task_values[] = {0, 1};
  if (!parse_choice(rdt_json_get(root, "task"), "task", task_names, task_values, 2, 0, &c->regression, err, n))
    return 0;
  if (!(l->tasks & (c->regression ? RDT_LEARN_REGRESSION : RDT_LEARN_CLASSIFICATION)))
    return fail(err, n, "\"algorithm\": \"%s\" does not do %s", l->name, c->regression ? "regression" : "classification");
  j = rdt_json_get(root, "target");
  if (c->regression) {
    const rdt_json *lo = rdt_json_get(j, "min"), *hi = rdt_json_get(j, "max");
    if (!j || j->type != RDT_JSON_OBJECT || j->n != 2 || !lo || !hi || lo->type != RDT_JSON_NUMBER ||
        hi->type != RDT_JSON_NUMBER || !isfinite(lo->number) || !isfinite(hi->number) || !(lo->number < hi->number) ||
        !isfinite(hi->number - lo->number))
      return fail(err, n, "a regression model needs \"target\": {\"min\": lo, \"max\": hi} with finite lo < hi "
                          "(the public bounds of the target)");
    c->target_min = lo->number;
    c->target_max = hi->number;
  } else if (j) {
    return fail(err, n, "\"target\" applies to \"task\": \"regression\" only");
  }
  uint32_t threads;
  if (!parse_uint(rdt_json_get(root, "threads"), "threads", 1, 2, 2, &threads, err, n)) return 0;
  j = rdt_json_get(root, "ledger");
  ledger[0] = 0;
  if (j) {
    if (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len >= ledger_size)
      return fail(err, n, "\"ledger\" must be the name of an rdt_ledger table (1 to 128 characters)");
    memcpy(ledger, j->string, j->string_len + 1);
  }
  j = rdt_json_get(root, "seed");
  c->seeded = j != NULL;
  if (j && !rdt_options_seed_key(j, "seed", c->seed_key)) return fail(err, n, "\"seed\" must be an integer or a string");
  if (!rdt_options_note(root, NULL, 0, err, n) || !parse_structure_key(root, &c->keyed, c->structure_key, err, n))
    return 0;
  if (c->seeded && ledger[0])
    return fail(err, n, "%s", rdt_seed_with_ledger_error);
  j = rdt_json_get(root, "label");
  if (j && (j->type != RDT_JSON_STRING || j->string_len == 0 || j->string_len > RDT_MAX_NAME ||
            strlen(j->string) != j->string_len))
    return fail(err, n, "\"label\" must be the name of the label column (a non-empty string)");
  memcpy(label, j ? j->string : "label", j ? j->string_len + 1 : sizeof "label");
  return parse_schema(root, c->regression, label, ledger, s, err, n) && unit_column_free(&c->unit, label, s, err, n);
}

int rdt_options_parse_learner(const char *json, size_t len, const rdt_learner *l, rdt_json **opts,
                              rdt_schema *schema, rdt_learn_common *common, char *ledger, size_t ledger_size,
                              char *label, char *err, size_t err_size) {
  char jerr[128];
  memset(schema, 0, sizeof *schema);
  memset(common, 0, sizeof *common);
  *opts = rdt_json_parse(json, len, jerr, sizeof jerr);
  if (!*opts) {
    snprintf(err, err_size, "options are not valid JSON: %s", jerr);
    return 0;
  }
  if (!rdt_options_parse_learner_tree(*opts, l, schema, common, ledger, ledger_size, label, err, err_size)) {
    rdt_json_free(*opts);
    *opts = NULL;
    return 0;
  }
  return 1;
}

int rdt_options_parse_learner_tree(const rdt_json *root, const rdt_learner *l, rdt_schema *schema,
                                   rdt_learn_common *common, char *ledger, size_t ledger_size, char *label, char *err,
                                   size_t err_size) {
  memset(schema, 0, sizeof *schema);
  memset(common, 0, sizeof *common);
  if (!learner_parse(root, l, schema, common, ledger, ledger_size, label, err, err_size)) {
    rdt_schema_free(schema);
    return 0;
  }
  return 1;
}
