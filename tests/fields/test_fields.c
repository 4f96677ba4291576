/* Field geometry and the reverse exchange on every transport, checked against an analytic
 * oracle derived here from global coordinates (independently of the library's geometry):
 *  - forward: every owned point keeps its value; every point within the swapped depth (plus
 *    a shared node plane this rank does not own) next to an existing neighbour holds the
 *    value of the global point it mirrors (periodic wrap); every other point is untouched;
 *  - reverse: every owned point ends as op(its value, every contribution written into a halo
 *    copy of it on any rank), the contributions gathered from all ranks and combined here;
 *    halos are untouched; accumulate-then-fill leaves every halo holding the owner's total;
 *    the reverse result is bit-identical across transports (non-exact float64 sums).
 * Usage: test_fields --group NAME [--transport SPEC]... [--may-be-unusable NAME]...
 *   [--verbose]. Groups: stagger asym fielddepth mixed2d3d component reverse ownership.
 * Exit 0 if something passed and nothing failed; skips are counted and printed. */
#include "haloswap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 8
#define SENT (-7)

typedef struct {
  hs_type type;
  hs_layout layout;
  int hl[3], hh[3];   /* allocated halo below / above */
  int dset;           /* 1: per-field depth dl/dh; 0: the plan's */
  int dl[3], dh[3];
  int node[3], owner[3];
  int extent[3];      /* own extent (axis kept whole) or 0 */
  int ncomp, order;
} fspec;

typedef struct {
  const char *group, *name;
  int ndims, global[3], procs[3], periodic[3], depth[3];
  hs_stencil stencil;
  int nfields;
  fspec f[MAXF];
  int ranges;         /* ownership group: 1 = explicit ranges, 2 = remainder to high ranks */
  int axis_order;     /* ownership group: 1 = reversed axis order for the communicator */
} config;

#define F64 HS_FLOAT64
#define F32 HS_FLOAT32
#define I32 HS_INT32
#define I64 HS_INT64
#define Z HS_LAYOUT_ZFAST
#define X HS_LAYOUT_XFAST
#define UP HS_OWNER_UPPER
#define LO HS_OWNER_LOWER

static const config configs[] = {
    /* Lare3d: cell rho (2/2), node-centred v (n+1 on every axis, upper owns, 2 below +
     * shared + 2 above), face-centred bx (n+1 on x, lower owns: shared + 2 below, 2 above). */
    {"stagger", "lare3d-3d-periodic", 3, {10, 9, 6}, {0, 0, 0}, {1, 1, 1}, {2, 2, 2}, HS_STENCIL_BOX, 3,
     {{F64, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {1, 1, 1}, {UP, UP, UP}, {0}, 0, 0},
      {F32, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {1, 0, 0}, {LO, 0, 0}, {0}, 0, 0}}, 0, 0},
    /* Walled x and z (the wall rank owns its outer plane), both owner rules, star, ZFAST. */
    {"stagger", "walled-star-owners", 3, {9, 8, 5}, {0, 0, 0}, {0, 1, 0}, {1, 1, 1}, HS_STENCIL_STAR, 3,
     {{F64, Z, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 1, 1}, {LO, LO, LO}, {0}, 0, 0},
      {I64, Z, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 0, 1}, {UP, 0, UP}, {0}, 0, 0},
      {I32, Z, {2, 1, 1}, {1, 2, 1}, 0, {0}, {0}, {0, 1, 0}, {0, LO, 0}, {0}, 0, 0}}, 0, 0},
    /* 2-D grid, node fields, box. */
    {"stagger", "2d-node-box", 2, {11, 9, 1}, {0, 0, 1}, {1, 0, 0}, {2, 2, 0}, HS_STENCIL_BOX, 2,
     {{F64, Z, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {1, 1, 0}, {UP, LO, 0}, {0}, 0, 0},
      {F32, X, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {0, 1, 0}, {0, UP, 0}, {0}, 0, 0}}, 0, 0},
    /* EPIC: halo 1 below, 2 above in x and y, z whole with 1/1 (not swapped), box. */
    {"asym", "epic-1-2", 3, {10, 9, 4}, {0, 0, 1}, {1, 1, 0}, {0, 0, 0}, HS_STENCIL_BOX, 3,
     {{F64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {F32, X, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0}}, 0, 0},
    /* One side only (depth 0 below / 0 above), 3-D decomposition, walled y. */
    {"asym", "one-sided-3d", 3, {12, 10, 8}, {0, 0, 0}, {1, 0, 1}, {0, 0, 0}, HS_STENCIL_BOX, 2,
     {{F64, X, {0, 2, 1}, {2, 0, 1}, 1, {0, 2, 1}, {2, 0, 1}, {0}, {0}, {0}, 0, 0},
      {I64, Z, {3, 1, 0}, {1, 3, 2}, 1, {3, 1, 0}, {1, 3, 2}, {0}, {0}, {0}, 0, 0}}, 0, 0},
    /* MONC: prognostics depth 2, pressure depth 1 in halo-2 arrays, one plan. */
    {"fielddepth", "monc-pressure", 3, {12, 10, 4}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, HS_STENCIL_BOX, 3,
     {{F64, Z, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, Z, {2, 2, 0}, {2, 2, 0}, 1, {1, 1, 0}, {1, 1, 0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {2, 2, 0}, {2, 2, 0}, 1, {2, 0, 0}, {0, 1, 0}, {0}, {0}, {0}, 0, 0}}, 0, 0},
    /* Depths 1, 2, 3 mixed with a star stencil and a 3-D decomposition. */
    {"fielddepth", "mixed-3d-star", 3, {9, 9, 8}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_STAR, 3,
     {{F64, X, {3, 3, 3}, {3, 3, 3}, 1, {3, 1, 2}, {2, 3, 1}, {0}, {0}, {0}, 0, 0},
      {I32, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {2, 2, 2}, {2, 2, 2}, 1, {0, 0, 2}, {0, 0, 2}, {0}, {0}, {0}, 0, 0}}, 0, 0},
    /* 2-D fields (z extent 1, no z halo) and a field with its own z extent in a 3-D plan
     * swapping periodic z. */
    {"mixed2d3d", "surface-and-column", 3, {10, 9, 5}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_BOX, 3,
     {{F64, Z, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, Z, {1, 1, 0}, {1, 1, 0}, 1, {1, 1, 0}, {1, 1, 0}, {0}, {0}, {0, 0, 1}, 0, 0},
      {I32, X, {2, 1, 1}, {1, 2, 2}, 1, {1, 1, 1}, {1, 2, 2}, {0}, {0}, {0, 0, 3}, 0, 0}}, 0, 0},
    /* Vector fields: components slowest (ZFAST) and fastest (XFAST), integer and float. */
    {"component", "vectors", 3, {9, 8, 4}, {0, 0, 1}, {1, 1, 0}, {1, 1, 0}, HS_STENCIL_BOX, 3,
     {{F64, Z, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {0}, {0}, {0}, 3, HS_COMP_SLOWEST},
      {I32, X, {2, 1, 0}, {1, 2, 0}, 1, {1, 1, 0}, {1, 2, 0}, {0}, {0}, {0}, 3, HS_COMP_FASTEST},
      {F32, Z, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {1, 0, 0}, {UP, 0, 0}, {0}, 2, HS_COMP_FASTEST}}, 0, 0},
    /* EPIC's parcel-to-grid batch: 9 fields, two of them integer counts, halo 1/2. */
    {"reverse", "epic-par2grid", 3, {10, 9, 3}, {0, 0, 1}, {1, 1, 0}, {0, 0, 0}, HS_STENCIL_BOX, 6,
     {{F64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 3, HS_COMP_SLOWEST},
      {F64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 1, 0}, {UP, LO, 0}, {0}, 0, 0}}, 0, 0},
    /* Reverse over a 3-D decomposition with corners from 26 neighbours. */
    {"reverse", "3d-box-26", 3, {6, 6, 6}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_BOX, 2,
     {{F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {I64, Z, {2, 2, 2}, {2, 2, 2}, 1, {2, 1, 2}, {1, 2, 1}, {0}, {0}, {0}, 0, 0}}, 0, 0},
    /* User-given ownership: explicit per-axis ranges; remainder to the high ranks (Lare3d);
     * the reversed axis order for the Cartesian communicator. */
    {"ownership", "explicit-ranges", 3, {11, 10, 4}, {0, 0, 1}, {1, 1, 0}, {1, 1, 0}, HS_STENCIL_BOX, 2,
     {{F64, Z, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F32, X, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {1, 1, 0}, {UP, LO, 0}, {0}, 0, 0}}, 1, 0},
    {"ownership", "remainder-high", 3, {11, 10, 7}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_BOX, 2,
     {{F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 1, 1}, {UP, UP, UP}, {0}, 0, 0}}, 2, 1},
};

/* ------------------------------------------------------------------ test-side geometry */
typedef struct {
  const fspec *s;
  int nd;
  int cells[3], n[3], alloc[3], gext[3], gofs[3], periodic[3];
  int olo[3], ohi[3];   /* owned points */
  int wlo[3], whi[3];   /* points the forward swap writes or owns: [wlo, whi) */
  int nbr_lo[3], nbr_hi[3];
  int dl[3], dh[3], nc;
  size_t ncell, nelem, esz;
  void *data;
} tf;

static size_t esize(hs_type t) { return t == F64 || t == I64 ? 8 : 4; }

static void tset(const tf *t, size_t k, int64_t v) {
  char *p = (char *)t->data + k * t->esz;
  switch (t->s->type) {
  case F64: { double d = (double)v; memcpy(p, &d, 8); break; }
  case F32: { float f = (float)v; memcpy(p, &f, 4); break; }
  case I32: { int32_t i = (int32_t)v; memcpy(p, &i, 4); break; }
  default: memcpy(p, &v, 8); break;
  }
}

static int64_t tget(const tf *t, size_t k) {
  const char *p = (const char *)t->data + k * t->esz;
  switch (t->s->type) {
  case F64: { double d; memcpy(&d, p, 8); return (int64_t)d; }
  case F32: { float f; memcpy(&f, p, 4); return (int64_t)f; }
  case I32: { int32_t i; memcpy(&i, p, 4); return i; }
  default: { int64_t v; memcpy(&v, p, 8); return v; }
  }
}

/* Element index of point l (local indices) component c. */
static size_t tindex(const tf *t, const int l[3], int c) {
  int q[3];
  for (int a = 0; a < 3; a++) q[a] = l[a] + t->s->hl[a] * (a < t->nd);
  size_t cell = t->s->layout == Z ? ((size_t)q[0] * t->alloc[1] + q[1]) * t->alloc[2] + q[2]
                                  : ((size_t)q[2] * t->alloc[1] + q[1]) * t->alloc[0] + q[0];
  if (t->nc == 1) return cell;
  return t->s->order == HS_COMP_FASTEST ? cell * t->nc + c : (size_t)c * t->ncell + cell;
}

static int in_owned(const tf *t, const int l[3]) {
  for (int a = 0; a < t->nd; a++)
    if (l[a] < t->olo[a] || l[a] >= t->ohi[a]) return 0;
  return 1;
}

/* Written by the forward swap: inside [wlo, whi) on every axis, not owned, and with a star
 * stencil outside the owned range on one axis only. */
static int written(const tf *t, const int l[3], hs_stencil st) {
  int out = 0;
  for (int a = 0; a < t->nd; a++) {
    if (l[a] < t->wlo[a] || l[a] >= t->whi[a]) return 0;
    out += l[a] < t->olo[a] || l[a] >= t->ohi[a];
  }
  return out > 0 && (st == HS_STENCIL_BOX || out == 1);
}

/* Global key of point l component c of field f (periodic wrap). */
static int64_t gkey(const tf *t, int f, const int l[3], int c) {
  int64_t k = f * 16 + c;
  for (int a = 0; a < 3; a++) {
    int g = a < t->nd ? t->gofs[a] + l[a] : 0, n = t->gext[a];
    if (a < t->nd && t->periodic[a]) g = ((g % n) + n) % n;
    k = k * (n + 8) + g + 4;
  }
  return k;
}

static int64_t fwd_value(int64_t key, int s) { return (int64_t)((key * 2654435761u + (uint64_t)s * 97) % 1000003u) + 1; }
static int64_t contrib(int rank, const int l[3], int c) { return 1 + (rank * 31 + (l[0] + 8) * 7 + (l[1] + 8) * 3 + (l[2] + 8) + c * 5) % 13; }

#define FOR_POINTS(t, l)                                                    \
  for (l[0] = -(t)->s->hl[0] * ((t)->nd > 0); l[0] < (t)->n[0] + (t)->s->hh[0] * ((t)->nd > 0); l[0]++) \
    for (l[1] = -(t)->s->hl[1]; l[1] < (t)->n[1] + (t)->s->hh[1]; l[1]++)   \
      for (l[2] = (t)->nd > 2 ? -(t)->s->hl[2] : 0; l[2] < ((t)->nd > 2 ? (t)->n[2] + (t)->s->hh[2] : 1); l[2]++)

static void tf_init(tf *t, const fspec *s, const config *c, hs_decomp d, int swapped[3]) {
  memset(t, 0, sizeof *t);
  t->s = s;
  t->nd = c->ndims;
  t->nc = s->ncomp > 1 ? s->ncomp : 1;
  t->esz = esize(s->type);
  t->ncell = 1;
  for (int a = 0; a < 3; a++) {
    if (a >= t->nd) {
      t->cells[a] = t->n[a] = t->alloc[a] = t->gext[a] = 1;
      continue;
    }
    t->cells[a] = s->extent[a] ? s->extent[a] : hs_decomp_local_extent(d, a);
    t->n[a] = t->cells[a] + s->node[a];
    t->alloc[a] = s->hl[a] + t->n[a] + s->hh[a];
    t->gext[a] = s->extent[a] ? s->extent[a] : hs_decomp_global_extent(d, a);
    t->gofs[a] = s->extent[a] ? 0 : hs_decomp_global_offset(d, a);
    t->periodic[a] = hs_decomp_periodic(d, a);
    t->dl[a] = s->dset ? s->dl[a] : c->depth[a];
    t->dh[a] = s->dset ? s->dh[a] : c->depth[a];
    int P = hs_decomp_procs(d, a), co = hs_decomp_coord(d, a);
    t->nbr_lo[a] = t->periodic[a] || co > 0;
    t->nbr_hi[a] = t->periodic[a] || co < P - 1;
    (void)P;
    t->ncell *= (size_t)t->alloc[a];
  }
  for (int a = 0; a < 3; a++) {
    t->olo[a] = 0;
    t->ohi[a] = t->n[a];
    t->wlo[a] = 0;
    t->whi[a] = t->n[a];
    if (a >= t->nd || !swapped[a]) continue;
    int share = s->node[a];
    if (share && s->owner[a] == LO && t->nbr_lo[a]) t->olo[a] = 1;
    if (share && s->owner[a] == UP && t->nbr_hi[a]) t->ohi[a] = t->n[a] - 1;
    if (t->nbr_lo[a]) t->wlo[a] = -t->dl[a];
    if (t->nbr_hi[a]) t->whi[a] = t->n[a] + t->dh[a];
  }
  t->nelem = t->ncell * (size_t)t->nc;
  t->data = calloc(t->nelem, t->esz);
}

static hs_field tf_field(const tf *t) {
  const fspec *s = t->s;
  hs_field f = hs_field_array(s->type, t->data, s->layout, 0);
  for (int a = 0; a < t->nd; a++) {
    hs_field_set_halo(&f, a, s->hl[a], s->hh[a]);
    if (s->dset) hs_field_set_depth(&f, a, s->dl[a], s->dh[a]);
    if (s->node[a]) hs_field_set_stagger(&f, a, HS_STAGGER_NODE, (hs_owner)s->owner[a]);
    if (s->extent[a]) hs_field_set_extent(&f, a, s->extent[a]);
  }
  if (s->ncomp > 1) hs_field_set_components(&f, s->ncomp, (hs_comp_order)s->order, 0);
  return f;
}

/* ------------------------------------------------------------------ one run */
typedef struct {
  const char *spec;
  int rank, size, verbose;
  long bad;
  uint64_t sum_hash; /* bits of every reverse result of the last run (determinism) */
} run_ctx;

static void fail(run_ctx *r, const char *what, const char *cfg, const int l[3], int f, int c,
                 int64_t got, int64_t want) {
  if (r->bad++ < 5)
    fprintf(stderr, "[rank %d] FAIL %s/%s on %s: field %d comp %d point (%d,%d,%d): got %lld, "
                    "want %lld\n",
            r->rank, cfg, what, r->spec, f, c, l[0], l[1], l[2], (long long)got,
            (long long)want);
}

static int cmp_kv(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Expected reverse result at key: op over A and every gathered contribution to key. */
static int64_t reduce_expect(const int64_t *kv, long n, int64_t key, int64_t a, hs_op op,
                             int *ncontrib) {
  long lo = 0, hi = n;
  while (lo < hi) {
    long m = (lo + hi) / 2;
    if (kv[2 * m] < key) lo = m + 1;
    else hi = m;
  }
  int64_t v = a;
  *ncontrib = 0;
  for (long i = lo; i < n && kv[2 * i] == key; i++, (*ncontrib)++) {
    int64_t b = kv[2 * i + 1];
    v = op == HS_OP_SUM ? v + b : op == HS_OP_MAX ? (b > v ? b : v) : op == HS_OP_MIN ? (b < v ? b : v) : b;
  }
  return v;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

/* Returns 1 passed, 0 failed, -1 skipped. */
static int run(run_ctx *r, const config *c, int check_bits, uint64_t *bits) {
  long bad_start = r->bad;
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.ndims = c->ndims;
  int ranges[3][16];
  for (int a = 0; a < 3; a++) {
    dd.global[a] = c->global[a];
    dd.procs[a] = c->procs[a];
    dd.periodic[a] = c->periodic[a];
  }
  if (c->ranges == 1) {
    /* Explicit ranges: uneven on purpose (front-loaded on x, back-loaded on y). */
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(r->size, 2, dims);
    for (int a = 0; a < 2; a++) {
      int P = dims[a];
      dd.procs[a] = P;
      for (int i = 0; i < P; i++) ranges[a][i] = 2;
      ranges[a][a == 0 ? P - 1 : 0] = c->global[a] - 2 * (P - 1); /* the big one at an end */
      dd.ranges[a] = ranges[a];
    }
  } else if (c->ranges == 2) {
    dd.remainder = HS_REMAINDER_HIGH;
  }
  if (c->axis_order) {
    dd.axis_order[0] = 2;
    dd.axis_order[1] = 1;
    dd.axis_order[2] = 0;
  }
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    if (r->rank == 0) printf("skip %s/%s on %s: %s\n", c->group, c->name, r->spec, hs_error_message());
    return -1;
  }
  /* The ownership rules, derived here: explicit ranges, or the remainder to the last ranks. */
  for (int a = 0; a < c->ndims && c->ranges; a++) {
    int P = hs_decomp_procs(d, a), co = hs_decomp_coord(d, a), n = c->global[a];
    int want_n, want_o = 0;
    if (c->ranges == 1 && a < 2) {
      want_n = ranges[a][co];
      for (int i = 0; i < co; i++) want_o += ranges[a][i];
    } else {
      int q = n / P, first = P - n % P;
      want_n = q + (co >= first);
      for (int i = 0; i < co; i++) want_o += q + (i >= first);
    }
    if (hs_decomp_local_extent(d, a) != want_n || hs_decomp_global_offset(d, a) != want_o) {
      fprintf(stderr, "[rank %d] FAIL %s/%s: axis %d coord %d owns %d cells from %d, want %d from "
                      "%d\n", r->rank, c->group, c->name, a, co, hs_decomp_local_extent(d, a),
              hs_decomp_global_offset(d, a), want_n, want_o);
      r->bad++;
    }
  }
  if (c->axis_order) { /* x varies fastest over the ranks of the Cartesian communicator */
    int cr[3];
    MPI_Cart_coords(hs_decomp_comm(d), r->rank, 3, cr);
    for (int k = 0; k < 3; k++)
      if (cr[k] != hs_decomp_coord(d, 2 - k)) {
        fprintf(stderr, "[rank %d] FAIL %s/%s: Cartesian dimension %d is not axis %d\n", r->rank,
                c->group, c->name, k, 2 - k);
        r->bad++;
      }
  }
  int swapped[3] = {0, 0, 0};
  for (int f = 0; f < c->nfields; f++)
    for (int a = 0; a < c->ndims; a++) {
      const fspec *s = &c->f[f];
      if ((s->dset ? s->dl[a] + s->dh[a] : c->depth[a]) > 0) swapped[a] = 1;
    }
  tf t[MAXF];
  hs_field fl[MAXF];
  for (int f = 0; f < c->nfields; f++) {
    tf_init(&t[f], &c->f[f], c, d, swapped);
    fl[f] = tf_field(&t[f]);
  }
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  for (int a = 0; a < 3; a++) pd.depth[a] = c->depth[a];
  pd.stencil = c->stencil;
  pd.nfields = c->nfields;
  pd.fields = fl;
  pd.transport_name = r->spec;
  hs_plan p;
  int rc = hs_plan_create(d, &pd, &p), result = 1;
  if (rc != HS_OK) {
    if (r->rank == 0)
      printf("%s %s/%s on %s: plan creation: %s\n", rc == HS_ERR_UNAVAILABLE ? "skip" : "FAIL",
             c->group, c->name, r->spec, hs_error_message());
    result = rc == HS_ERR_UNAVAILABLE ? -1 : 0;
    goto out;
  }
  long bad0 = r->bad;
  int l[3];
  /* ---- forward, twice (the second with hs_swap_test polling) */
  for (int s = 0; s < 2; s++) {
    for (int f = 0; f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++)
          tset(&t[f], tindex(&t[f], l, k), in_owned(&t[f], l) ? fwd_value(gkey(&t[f], f, l, k), s) : SENT);
    if (s == 0) {
      rc = hs_swap(p, NULL);
    } else {
      int done = 0;
      rc = hs_swap_start(p, NULL);
      /* Only p2p progresses in test; the others report "not done" until complete, so a
       * short poll exercises their test op without waiting for nothing. */
      double t0 = MPI_Wtime(), limit = strncmp(r->spec, "p2p", 3) ? 0.02 : 5.0;
      while (rc == HS_OK && !done && MPI_Wtime() - t0 < limit) rc = hs_swap_test(p, NULL, &done);
      /* p2p tests with MPI_Testsome: it must report the swap done without complete */
      if (rc == HS_OK && !done && !strncmp(r->spec, "p2p", 3)) {
        fprintf(stderr, "[rank %d] FAIL %s/%s on %s: hs_swap_test never reported done\n",
                r->rank, c->group, c->name, r->spec);
        r->bad++;
      }
      if (rc == HS_OK) rc = hs_swap_complete(p, NULL);
    }
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] FAIL %s/%s on %s: swap: %s\n", r->rank, c->group, c->name,
              r->spec, hs_error_message());
      r->bad++;
      break;
    }
    for (int f = 0; f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) {
          int64_t want = in_owned(&t[f], l) || written(&t[f], l, c->stencil)
                             ? fwd_value(gkey(&t[f], f, l, k), s) : SENT;
          int64_t got = tget(&t[f], tindex(&t[f], l, k));
          if (got != want) fail(r, "forward", c->name, l, f, k, got, want);
        }
  }
  /* ---- reverse with every op, then accumulate-then-fill */
  static const hs_op ops[] = {HS_OP_SUM, HS_OP_MAX, HS_OP_MIN, HS_OP_REPLACE};
  int nops = strcmp(c->group, "reverse") ? 1 : 4;
  for (int oi = 0; oi <= nops && r->bad == bad0; oi++) {
    hs_op op = oi < nops ? ops[oi] : HS_OP_SUM;
    int fill = oi == nops; /* the last round: hs_accumulate_fill */
    /* my contributions (key, value) */
    long nmine = 0, cap = 1;
    for (int f = 0; f < c->nfields; f++) cap += (long)t[f].nelem;
    int64_t *mine = malloc((size_t)cap * 2 * sizeof *mine);
    for (int f = 0; f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) {
          int64_t key = gkey(&t[f], f, l, k), v = SENT;
          if (in_owned(&t[f], l)) v = fwd_value(key, 5) % 50;
          else if (written(&t[f], l, c->stencil)) {
            v = contrib(r->rank, l, k);
            mine[2 * nmine] = key;
            mine[2 * nmine++ + 1] = v;
          }
          tset(&t[f], tindex(&t[f], l, k), v);
        }
    int *counts = malloc((size_t)r->size * sizeof *counts), *displs = malloc((size_t)r->size * sizeof *displs);
    int mycount = (int)(2 * nmine);
    MPI_Allgather(&mycount, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    long total = 0;
    for (int i = 0; i < r->size; i++) {
      displs[i] = (int)total;
      total += counts[i];
    }
    int64_t *all = malloc((size_t)(total + 2) * sizeof *all);
    MPI_Allgatherv(mine, mycount, MPI_INT64_T, all, counts, displs, MPI_INT64_T, MPI_COMM_WORLD);
    qsort(all, (size_t)(total / 2), 2 * sizeof *all, cmp_kv);
    rc = fill ? hs_accumulate_fill(p, op, NULL) : hs_reverse(p, op, NULL);
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] FAIL %s/%s on %s: reverse: %s\n", r->rank, c->group, c->name,
              r->spec, hs_error_message());
      r->bad++;
    }
    for (int f = 0; rc == HS_OK && f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) {
          int64_t key = gkey(&t[f], f, l, k), got = tget(&t[f], tindex(&t[f], l, k)), want;
          int nct = 0;
          int own = in_owned(&t[f], l), wr = written(&t[f], l, c->stencil);
          if (own || (fill && wr))
            want = reduce_expect(all, total / 2, key, fwd_value(key, 5) % 50, op, &nct);
          else
            want = wr ? contrib(r->rank, l, k) : SENT;
          if (own && op == HS_OP_REPLACE && nct > 1) {
            /* the last contribution in canonical order: one of them, checked for
             * equality across transports below */
            if (got < 1 || got > 13) fail(r, "reverse replace", c->name, l, f, k, got, want);
            continue;
          }
          if (got != want) fail(r, fill ? "accumulate-fill" : "reverse", c->name, l, f, k, got, want);
        }
    free(mine);
    free(counts);
    free(displs);
    free(all);
  }
  /* ---- determinism: non-exact float64 sums, bits compared across transports */
  if (r->bad == bad0) {
    uint64_t h = 1469598103934665603ull;
    for (int f = 0; f < c->nfields; f++) {
      if (t[f].s->type != F64) continue;
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) {
          double v = in_owned(&t[f], l) ? 0.1 * (double)(gkey(&t[f], f, l, k) % 97)
                     : written(&t[f], l, c->stencil) ? 1.0 / (double)(contrib(r->rank, l, k) + 2) : 0.0;
          memcpy((char *)t[f].data + tindex(&t[f], l, k) * 8, &v, 8);
        }
    }
    rc = hs_reverse(p, HS_OP_SUM, NULL);
    for (int f = 0; f < c->nfields; f++)
      if (t[f].s->type == F64) h = fnv(h, t[f].data, t[f].nelem * 8);
    if (check_bits && h != *bits) {
      fprintf(stderr, "[rank %d] FAIL %s/%s on %s: reverse sum bits differ from the first "
                      "transport's\n", r->rank, c->group, c->name, r->spec);
      r->bad++;
    }
    *bits = h;
  }
  hs_plan_stats st;
  hs_plan_get_stats(p, &st);
  if (r->bad == bad0 && (st.swaps < 2 || st.reverses < 1)) {
    fprintf(stderr, "[rank %d] FAIL %s/%s on %s: stats swaps %llu reverses %llu\n", r->rank,
            c->group, c->name, r->spec, (unsigned long long)st.swaps, (unsigned long long)st.reverses);
    r->bad++;
  }
  if (r->verbose && r->rank == 0) {
    char buf[2048];
    hs_plan_describe(p, buf, sizeof buf);
    printf("  %s\n", buf);
  }
  hs_plan_free(&p);
  result = r->bad == bad_start;
out:
  for (int f = 0; f < c->nfields; f++) free(t[f].data);
  hs_decomp_free(&d);
  int all = result, lo;
  MPI_Allreduce(&all, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return lo;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  run_ctx r;
  memset(&r, 0, sizeof r);
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  const char *group = NULL, *specs[64], *optional[16];
  int nspecs = 0, noptional = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--group") && i + 1 < argc) group = argv[++i];
    else if (!strcmp(argv[i], "--transport") && i + 1 < argc && nspecs < 64) specs[nspecs++] = argv[++i];
    else if (!strcmp(argv[i], "--may-be-unusable") && i + 1 < argc && noptional < 16) optional[noptional++] = argv[++i];
    else if (!strcmp(argv[i], "--verbose")) r.verbose = 1;
    else {
      if (r.rank == 0) fprintf(stderr, "test_fields: unknown argument '%s'\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  if (nspecs == 0)
    for (int i = 0; i < hs_transport_count() && nspecs < 64; i++) {
      /* auto builds and times a plan of every candidate per configuration: too slow
       * oversubscribed; at 1-2 ranks it shows auto accepts every geometry. */
      if (r.size > 2 && !strcmp(hs_transport_name(i), "auto")) {
        if (r.rank == 0) printf("skip transport auto above 2 ranks (too slow oversubscribed)\n");
        continue;
      }
      specs[nspecs++] = hs_transport_name(i);
    }
  int passed = 0, failed = 0, skipped = 0;
  int nconf = (int)(sizeof configs / sizeof configs[0]);
  for (int ci = 0; ci < nconf; ci++) {
    const config *c = &configs[ci];
    if (group && strcmp(group, c->group)) continue;
    uint64_t bits = 0;
    int have_bits = 0;
    for (int ti = 0; ti < nspecs; ti++) {
      char name[64], why[256] = "";
      snprintf(name, sizeof name, "%.*s", (int)strcspn(specs[ti], ":"), specs[ti]);
      if (hs_transport_available(MPI_COMM_WORLD, name, why, sizeof why) != HS_OK) {
        int may = 0;
        for (int i = 0; i < noptional; i++) may |= !strcmp(optional[i], name);
        if (r.rank == 0 && ci == 0)
          printf("%s transport %s: not usable here (%s)\n", may ? "skip" : "FAIL", name, why);
        if (may) skipped++;
        else failed++;
        continue;
      }
      r.spec = specs[ti];
      long before = r.bad;
      int res = run(&r, c, have_bits, &bits);
      if (res == 1) have_bits = 1;
      if (res < 0) skipped++;
      else if (res == 0) failed++;
      else passed++;
      if (r.rank == 0 && (res == 0 || r.verbose))
        printf("%s %s/%s on %s at %d ranks\n", res > 0 ? "ok  " : res < 0 ? "skip" : "FAIL",
               c->group, c->name, r.spec, r.size);
      (void)before;
    }
  }
  if (r.rank == 0)
    printf("test_fields %s at %d ranks:\n%d passed, %d failed, %d skipped\n", group ? group : "all",
           r.size, passed, failed, skipped);
  MPI_Finalize();
  return failed ? 1 : (passed ? 0 : 77);
}
