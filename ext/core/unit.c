/* unit.c - the privacy unit: contribution bounding and the division of ε; see unit.h. */
#include "unit.h"

#include <math.h>
#include <string.h>

int rdt_unit_active(const rdt_unit *u) { return u->column[0] != 0 || u->n_private != 0; }

int rdt_unit_is_private(const rdt_unit *u, uint32_t feature) {
  return feature < RDT_MAX_FEATURES && (u->private_bounds[feature / 8] >> (feature % 8) & 1);
}

void rdt_unit_set_private(rdt_unit *u, uint32_t feature) {
  if (feature < RDT_MAX_FEATURES && !rdt_unit_is_private(u, feature)) {
    u->private_bounds[feature / 8] |= (uint8_t)(1u << (feature % 8));
    u->n_private++;
  }
}

int rdt_unit_divide(rdt_unit *u, rdt_eps total, double share, rdt_eps *model_row) {
  uint64_t k = u->max_rows, m = u->n_private;
  if (k < 1 || k > RDT_UNIT_MAX_ROWS || m > RDT_MAX_FEATURES || total.num == 0) return 0;
  uint64_t budget = 0;
  if (m) {
    if (!(share >= RDT_BOUNDS_MIN_SHARE && share <= RDT_BOUNDS_MAX_SHARE)) return 0;
    /* Rounded down; total.num < 2^53 (noise.h), so the product is exact
    ** enough and below total.num. Only what is spent (below) is stored. */
    double b = floor((double)total.num * share);
    budget = b >= (double)total.num ? total.num - 1 : (uint64_t)b;
  }
  u->eps_total = total;
  u->eps_quantile.num = m ? budget / (2 * m * k) : 0;
  u->eps_bounds.num = u->eps_quantile.num * 2 * m * k;
  model_row->num = (total.num - u->eps_bounds.num) / k;
  return (m == 0 || u->eps_quantile.num > 0) && model_row->num > 0;
}

int rdt_unit_check(const rdt_unit *u, rdt_eps model_row, const rdt_schema *s) {
  uint64_t k = u->max_rows, m = u->n_private, seen = 0;
  if (!rdt_unit_active(u) || k < 1 || k > RDT_UNIT_MAX_ROWS || (!u->column[0] && k != 1) ||
      m > s->n_features || u->eps_total.num == 0 || rdt_eps_to_double(u->eps_total) > RDT_EPS_MAX ||
      model_row.num == 0)
    return 0;
  for (uint32_t j = 0; j < RDT_MAX_FEATURES; j++) {
    if (!rdt_unit_is_private(u, j)) continue;
    if (j >= s->n_features || s->features[j].type != RDT_FEATURE_NUMERIC) return 0;
    seen++;
  }
  if (seen != m || (m == 0) != (u->eps_quantile.num == 0)) return 0;
  /* eps_bounds = 2mk·eps_quantile without overflow, below the total; the
  ** model's per-row ε is what is left, divided by k, rounded down. */
  if (m && u->eps_quantile.num > u->eps_total.num / (2 * m * k)) return 0;
  if (u->eps_bounds.num != u->eps_quantile.num * 2 * m * k || u->eps_bounds.num >= u->eps_total.num) return 0;
  return model_row.num == (u->eps_total.num - u->eps_bounds.num) / k;
}

void rdt_unit_bound_init(rdt_unit_bound *b, uint64_t k, const unsigned char *seed_key, const char *purpose) {
  memset(b, 0, sizeof *b);
  b->k = k ? k : 1;
  rdt_rng_init_for(&b->rng, seed_key, purpose, 0);
}

int rdt_unit_bound_row(rdt_unit_bound *b, uint64_t position, uint64_t rows) {
  if (b->left == 0) { /* the first row of the next unit */
    if (position != 1 || rows < 1) return -1;
    b->rows = b->left = rows;
    b->room = rows < b->k ? rows : b->k;
  } else if (rows != b->rows || position != b->rows - b->left + 1) {
    return -1;
  }
  /* Algorithm S: P(keep) = room / left, so every subset of min(n, k) of the
  ** unit's rows is equally likely. No coin is drawn while every remaining
  ** row must be kept (room == left), which depends only on n and k. */
  int keep = b->room > 0 && rdt_bernoulli_rational(&b->rng, b->room, b->left);
  b->left--;
  b->room -= (uint64_t)keep;
  return keep;
}

void rdt_unit_bound_clear(rdt_unit_bound *b) { rdt_rng_clear(&b->rng); }
