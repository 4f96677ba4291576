/* Region sets (hs_region_set, docs/api.md "Region sets"): which sides of each field's halo a
 * plan swaps. A side is h in {-1,0,1}^3 (not all 0) as the receiving rank sees it; a plan's
 * offset o (the flow direction) fills side -o. The plan keeps one 27-bit mask per field
 * (bit side_bit(h)); the geometry skips a field's sections for an offset whose side is not in
 * its mask, so every transport, the self copies and the reverse follow. */
#include "hs_core.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct hs_region_set_s {
  int n, cap;
  int *field;       /* per entry: field index or -1 */
  uint32_t *mask;   /* per entry: sides */
  uint32_t *named;  /* per entry: the sides named one by one (not by faces, edges, ...) */
};

static int side_bit(const int h[HS_MAX_DIMS]) { return (h[0] + 1) * 9 + (h[1] + 1) * 3 + h[2] + 1; }

/* Sides with nz nonzero components (0: any number). */
static uint32_t sides_with(int nz) {
  uint32_t m = 0;
  for (int b = 0; b < 27; b++) {
    int h[3] = {b / 9 - 1, b / 3 % 3 - 1, b % 3 - 1}, k = !!h[0] + !!h[1] + !!h[2];
    if (k > 0 && (nz == 0 || k == nz)) m |= 1u << b;
  }
  return m;
}

/* One region name to its sides; 0 if it is not one. */
static uint32_t parse_name(const char *t, size_t len) {
  static const struct { const char *name; const char *axes; } alias[] = {
      {"west", "x-"}, {"east", "x+"}, {"south", "y-"}, {"north", "y+"},
      {"bottom", "z-"}, {"top", "z+"}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (strlen(alias[i].name) == len && !strncmp(t, alias[i].name, len))
      return parse_name(alias[i].axes, 2);
  if (len == 3 && !strncmp(t, "all", 3)) return sides_with(0);
  if (len == 5 && !strncmp(t, "faces", 5)) return sides_with(1);
  if (len == 5 && !strncmp(t, "edges", 5)) return sides_with(2);
  if (len == 7 && !strncmp(t, "corners", 7)) return sides_with(3);
  int h[3] = {0, 0, 0};
  if (len == 0 || len % 2) return 0;
  for (size_t i = 0; i < len; i += 2) {
    int a = t[i] == 'x' ? 0 : t[i] == 'y' ? 1 : t[i] == 'z' ? 2 : -1;
    if (a < 0 || h[a] || (t[i + 1] != '-' && t[i + 1] != '+')) return 0;
    h[a] = t[i + 1] == '-' ? -1 : 1;
  }
  return 1u << side_bit(h);
}

int hs_region_set_create(hs_region_set *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_region_set_create: out is NULL");
  *out = calloc(1, sizeof **out);
  return *out ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_region_set_create: out of memory");
}

int hs_region_set_add(hs_region_set s, int field, const char *names) {
  if (!s) return hs__error(HS_ERR_ARG, "hs_region_set_add: region set is NULL");
  if (field < -1 || field >= HS_MAX_FIELDS)
    return hs__error(HS_ERR_ARG, "hs_region_set_add: field = %d; a field index 0..%d, or -1 "
                     "for every field", field, HS_MAX_FIELDS - 1);
  if (!names) return hs__error(HS_ERR_ARG, "hs_region_set_add: names is NULL");
  uint32_t m = 0, named = 0;
  for (const char *t = names; *t;) {
    while (*t == ',' || isspace((unsigned char)*t)) t++;
    size_t len = 0;
    while (t[len] && t[len] != ',' && !isspace((unsigned char)t[len])) len++;
    if (!len) break;
    uint32_t one = parse_name(t, len);
    if (!one)
      return hs__error(HS_ERR_ARG, "hs_region_set_add: '%.*s' in \"%s\" is not a region (x-, "
                       "x+, y-, y+, z-, z+, an edge or corner such as x-y+, west, east, south, "
                       "north, bottom, top, faces, edges, corners, all)", (int)len, t, names);
    m |= one;
    if (!(one & (one - 1))) named |= one; /* one side: named, not a group */
    t += len;
  }
  if (!m) return hs__error(HS_ERR_ARG, "hs_region_set_add: names \"%s\" names no region", names);
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    int *f = realloc(s->field, (size_t)cap * sizeof *f);
    if (f) s->field = f;
    uint32_t *mk = f ? realloc(s->mask, (size_t)cap * sizeof *mk) : NULL;
    if (mk) s->mask = mk;
    uint32_t *nm = mk ? realloc(s->named, (size_t)cap * sizeof *nm) : NULL;
    if (nm) s->named = nm;
    if (!f || !mk || !nm) return hs__error(HS_ERR_NOMEM, "hs_region_set_add: out of memory");
    s->cap = cap;
  }
  s->field[s->n] = field;
  s->named[s->n] = named;
  s->mask[s->n++] = m;
  return HS_OK;
}

int hs_region_set_free(hs_region_set *s) {
  if (!s || !*s) return HS_OK;
  free((*s)->field);
  free((*s)->mask);
  free((*s)->named);
  free(*s);
  *s = NULL;
  return HS_OK;
}

int hs__regions_apply(hs_plan p, const hs_region_set s, const uint32_t *masks) {
  if (!s && !masks) return HS_OK;
  /* also for a nested plan: auto's staged candidate would swap every region */
  if (p->core->config.staged || p->core->order == HS_ORDER_SWEEP)
    return hs__error(HS_ERR_ARG, "hs_plan_create_regions: a region set cannot be combined with "
                     "%s, which exchanges axis by axis", p->core->config.staged ? "staged=1"
                                                                         : "HS_ORDER_SWEEP");
  p->core->region_mask = calloc((size_t)p->nfields, sizeof *p->core->region_mask);
  if (!p->core->region_mask)
    return hs__error(HS_ERR_NOMEM, "hs_plan_create_regions: out of memory");
  if (masks) { /* a nested plan: its parent's, already checked */
    memcpy(p->core->region_mask, masks, (size_t)p->nfields * sizeof *masks);
    return HS_OK;
  }
  uint32_t outside = 0; /* sides on axes the grid does not have */
  for (int b = 0; b < 27; b++)
    for (int a = p->ndims; a < 3; a++)
      if ((b / (a == 0 ? 9 : a == 1 ? 3 : 1)) % 3 != 1) outside |= 1u << b;
  for (int e = 0; e < s->n; e++) {
    if (s->field[e] >= p->nfields)
      return hs__error(HS_ERR_ARG, "hs_plan_create_regions: the region set names field %d; "
                       "the plan has %d fields (0..%d, or -1 for every field)", s->field[e],
                       p->nfields, p->nfields - 1);
    if (s->named[e] & outside) /* groups (faces, all, ...) mean the grid's own sides */
      return hs__error(HS_ERR_ARG, "hs_plan_create_regions: the region set names a z region "
                       "(field %d) but the grid has %d axes", s->field[e], p->ndims);
    for (int f = 0; f < p->nfields; f++)
      if (s->field[e] < 0 || s->field[e] == f) p->core->region_mask[f] |= s->mask[e] & ~outside;
  }
  return HS_OK;
}

int hs__regions_same(hs_plan p) {
  int any = p->core->region_mask != NULL, all = 0;
  MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, p->comm);
  if (!all) return HS_OK;
  int n = p->nfields;
  uint32_t *v = calloc((size_t)(2 * n + 2), sizeof *v);
  if (!v) return hs__error(HS_ERR_NOMEM, "hs_plan_create_regions: out of memory");
  for (int f = 0; f < n; f++) {
    v[f] = p->core->region_mask ? p->core->region_mask[f] : (1u << 27) - 1; /* no set: everything */
    v[n + f] = ~v[f];
  }
  MPI_Allreduce(MPI_IN_PLACE, v, 2 * n, MPI_UINT32_T, MPI_BAND, p->comm);
  int rc = HS_OK;
  for (int f = 0; f < n && rc == HS_OK; f++)
    if ((v[f] | v[n + f]) != (uint32_t)~0u)
      rc = hs__error(HS_ERR_MISMATCH, "hs_plan_create_regions: ranks disagree on the regions "
                     "of field %d (every rank must give the same region set)", f);
  free(v);
  return rc;
}

bool hs__plan_has_regions(const hs_plan p) { return p->core->region_mask != NULL; }

bool hs__region_flow(const hs_plan p, int f, const int o[HS_MAX_DIMS]) {
  if (!p->core->region_mask) return true;
  int h[3] = {-o[0], -o[1], -o[2]};
  return p->core->region_mask[f] >> side_bit(h) & 1u;
}

void hs__regions_describe(const hs_plan p, char *buf, size_t len, size_t *n) {
  if (!p->core->region_mask) return;
  hs__appendf(buf, len, n, "regions");
  for (int f = 0; f < p->nfields; f++) {
    hs__appendf(buf, len, n, " %d:", f);
    int first = 1;
    for (int b = 0; b < 27; b++) {
      if (!(p->core->region_mask[f] >> b & 1u)) continue;
      int h[3] = {b / 9 - 1, b / 3 % 3 - 1, b % 3 - 1};
      hs__appendf(buf, len, n, "%s", first ? "" : ",");
      first = 0;
      for (int a = 0; a < 3; a++)
        if (h[a]) hs__appendf(buf, len, n, "%c%c", "xyz"[a], h[a] < 0 ? '-' : '+');
    }
    if (first) hs__appendf(buf, len, n, "none");
  }
  hs__appendf(buf, len, n, "; ");
}
