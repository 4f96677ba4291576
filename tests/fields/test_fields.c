/* Field geometry and the reverse exchange on every transport, checked against an analytic
 * oracle derived here from global coordinates (independently of the library's geometry):
 *  - forward: every owned point keeps its value; every point within the swapped depth (plus
 *    a shared node plane this rank does not own) next to an existing neighbour holds the
 *    value of the global point it mirrors (periodic wrap); every other point is untouched;
 *  - reverse: every owned point ends as op(its value, every contribution written into a halo
 *    copy of it on any rank), the contributions gathered from all ranks and combined here;
 *    halos are untouched; accumulate-then-fill leaves every halo holding the owner's total;
 *    the reverse result is bit-identical across transports (non-exact float64 sums).
 * Usage: test_fields [--group NAME] [--exclude-group NAME] [--transport SPEC]...
 *   [--may-be-unusable NAME]...
 *   [--verbose]. Groups: stagger asym fielddepth mixed2d3d component reverse ownership deep,
 *   and order: the combine orders (HS_ORDER_OFFSETS, HS_ORDER_SWEEP), where every point is
 *   checked against a serial simulation of the order from every rank's geometry and values
 *   (bit for bit; float values whose sums round differently in another order).
 * Exit 1 if something failed, 77 (skipped) if a transport was not usable here or nothing ran,
 * else 0; skips are counted and printed. */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include "haloswap.h"
#include "test_transports.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 8
#define MAXR 64 /* ranks the order oracles follow */
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
  /* order and deep groups: the combine order (hs_order), its offsets or sweep axes */
  int order, norder, offs[26][3], nsweep, sweep[3];
} config;

#define CANON HS_ORDER_CANONICAL, 0, {{0}}, 0, {0}
/* EPIC's order of its 8 neighbours' buffers: W, E, S, N, NE, SE, SW, NW. */
#define EPIC_ORDER {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {1, 1, 0}, {1, -1, 0}, {-1, -1, 0}, {-1, 1, 0}}
/* The 26 offsets in reverse lexicographic order. */
#define REVERSED_ORDER                                                                          \
  {{1, 1, 1}, {1, 1, 0}, {1, 1, -1}, {1, 0, 1}, {1, 0, 0}, {1, 0, -1}, {1, -1, 1}, {1, -1, 0},  \
   {1, -1, -1}, {0, 1, 1}, {0, 1, 0}, {0, 1, -1}, {0, 0, 1}, {0, 0, -1}, {0, -1, 1},            \
   {0, -1, 0}, {0, -1, -1}, {-1, 1, 1}, {-1, 1, 0}, {-1, 1, -1}, {-1, 0, 1}, {-1, 0, 0},        \
   {-1, 0, -1}, {-1, -1, 1}, {-1, -1, 0}, {-1, -1, -1}}

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
      {F32, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {1, 0, 0}, {LO, 0, 0}, {0}, 0, 0}}, 0, 0, CANON},
    /* Walled x and z (the wall rank owns its outer plane), both owner rules, star, ZFAST. */
    {"stagger", "walled-star-owners", 3, {9, 8, 5}, {0, 0, 0}, {0, 1, 0}, {1, 1, 1}, HS_STENCIL_STAR, 3,
     {{F64, Z, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 1, 1}, {LO, LO, LO}, {0}, 0, 0},
      {I64, Z, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 0, 1}, {UP, 0, UP}, {0}, 0, 0},
      {I32, Z, {2, 1, 1}, {1, 2, 1}, 0, {0}, {0}, {0, 1, 0}, {0, LO, 0}, {0}, 0, 0}}, 0, 0, CANON},
    /* 2-D grid, node fields, box. */
    {"stagger", "2d-node-box", 2, {11, 9, 1}, {0, 0, 1}, {1, 0, 0}, {2, 2, 0}, HS_STENCIL_BOX, 2,
     {{F64, Z, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {1, 1, 0}, {UP, LO, 0}, {0}, 0, 0},
      {F32, X, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {0, 1, 0}, {0, UP, 0}, {0}, 0, 0}}, 0, 0, CANON},
    /* EPIC: halo 1 below, 2 above in x and y, z whole with 1/1 (not swapped), box. */
    {"asym", "epic-1-2", 3, {10, 9, 4}, {0, 0, 1}, {1, 1, 0}, {0, 0, 0}, HS_STENCIL_BOX, 3,
     {{F64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {F32, X, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0}}, 0, 0, CANON},
    /* One side only (depth 0 below / 0 above), 3-D decomposition, walled y. */
    {"asym", "one-sided-3d", 3, {12, 10, 8}, {0, 0, 0}, {1, 0, 1}, {0, 0, 0}, HS_STENCIL_BOX, 2,
     {{F64, X, {0, 2, 1}, {2, 0, 1}, 1, {0, 2, 1}, {2, 0, 1}, {0}, {0}, {0}, 0, 0},
      {I64, Z, {3, 1, 0}, {1, 3, 2}, 1, {3, 1, 0}, {1, 3, 2}, {0}, {0}, {0}, 0, 0}}, 0, 0, CANON},
    /* MONC: prognostics depth 2, pressure depth 1 in halo-2 arrays, one plan. */
    {"fielddepth", "monc-pressure", 3, {12, 10, 4}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, HS_STENCIL_BOX, 3,
     {{F64, Z, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, Z, {2, 2, 0}, {2, 2, 0}, 1, {1, 1, 0}, {1, 1, 0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {2, 2, 0}, {2, 2, 0}, 1, {2, 0, 0}, {0, 1, 0}, {0}, {0}, {0}, 0, 0}}, 0, 0, CANON},
    /* Depths 1, 2, 3 mixed with a star stencil and a 3-D decomposition. */
    {"fielddepth", "mixed-3d-star", 3, {9, 9, 8}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_STAR, 3,
     {{F64, X, {3, 3, 3}, {3, 3, 3}, 1, {3, 1, 2}, {2, 3, 1}, {0}, {0}, {0}, 0, 0},
      {I32, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {2, 2, 2}, {2, 2, 2}, 1, {0, 0, 2}, {0, 0, 2}, {0}, {0}, {0}, 0, 0}}, 0, 0, CANON},
    /* 2-D fields (z extent 1, no z halo) and a field with its own z extent in a 3-D plan
     * swapping periodic z. */
    {"mixed2d3d", "surface-and-column", 3, {10, 9, 5}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_BOX, 3,
     {{F64, Z, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, Z, {1, 1, 0}, {1, 1, 0}, 1, {1, 1, 0}, {1, 1, 0}, {0}, {0}, {0, 0, 1}, 0, 0},
      {I32, X, {2, 1, 1}, {1, 2, 2}, 1, {1, 1, 1}, {1, 2, 2}, {0}, {0}, {0, 0, 3}, 0, 0}}, 0, 0, CANON},
    /* Vector fields: components slowest (ZFAST) and fastest (XFAST), integer and float. */
    {"component", "vectors", 3, {9, 8, 4}, {0, 0, 1}, {1, 1, 0}, {1, 1, 0}, HS_STENCIL_BOX, 3,
     {{F64, Z, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {0}, {0}, {0}, 3, HS_COMP_SLOWEST},
      {I32, X, {2, 1, 0}, {1, 2, 0}, 1, {1, 1, 0}, {1, 2, 0}, {0}, {0}, {0}, 3, HS_COMP_FASTEST},
      {F32, Z, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {1, 0, 0}, {UP, 0, 0}, {0}, 2, HS_COMP_FASTEST}}, 0, 0, CANON},
    /* EPIC's parcel-to-grid batch: 9 fields, two of them integer counts, halo 1/2. */
    {"reverse", "epic-par2grid", 3, {10, 9, 3}, {0, 0, 1}, {1, 1, 0}, {0, 0, 0}, HS_STENCIL_BOX, 6,
     {{F64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 3, HS_COMP_SLOWEST},
      {F64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 1, 0}, {UP, LO, 0}, {0}, 0, 0}}, 0, 0, CANON},
    /* Reverse over a 3-D decomposition with corners from 26 neighbours. */
    {"reverse", "3d-box-26", 3, {6, 6, 6}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_BOX, 2,
     {{F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {I64, Z, {2, 2, 2}, {2, 2, 2}, 1, {2, 1, 2}, {1, 2, 1}, {0}, {0}, {0}, 0, 0}}, 0, 0, CANON},
    /* User-given ownership: explicit per-axis ranges; remainder to the high ranks (Lare3d);
     * the reversed axis order for the Cartesian communicator. */
    {"ownership", "explicit-ranges", 3, {11, 10, 4}, {0, 0, 1}, {1, 1, 0}, {1, 1, 0}, HS_STENCIL_BOX, 2,
     {{F64, Z, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F32, X, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {1, 1, 0}, {UP, LO, 0}, {0}, 0, 0}}, 1, 0, CANON},
    {"ownership", "remainder-high", 3, {11, 10, 7}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_BOX, 2,
     {{F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {1, 1, 1}, {UP, UP, UP}, {0}, 0, 0}}, 2, 1, CANON},
    /* Combine orders (the order group checks every cell against the test's own simulation of
     * the order: a serial fold of the mirrored contributions in that order, bit for bit).
     * EPIC: halo 1 below / 2 above, z not swapped, a 3-component vector, float32, int32 and a
     * 2-D 2-component boundary field; EPIC's neighbour order. */
    {"order", "epic-offsets", 3, {10, 9, 4}, {0, 0, 1}, {1, 1, 0}, {0, 0, 0}, HS_STENCIL_BOX, 4,
     {{F64, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 3, HS_COMP_SLOWEST},
      {F32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I32, Z, {1, 1, 1}, {2, 2, 1}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {F64, Z, {1, 1, 0}, {2, 2, 0}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0, 0, 1}, 2, HS_COMP_SLOWEST}},
     0, 0, HS_ORDER_OFFSETS, 8, EPIC_ORDER, 0, {0}},
    /* 2-D grid kept whole in x (x neighbours are this rank: self contributions in their place). */
    {"order", "epic-offsets-1xN", 2, {6, 19, 1}, {1, 0, 0}, {1, 1, 0}, {0, 0, 0}, HS_STENCIL_BOX, 2,
     {{F64, Z, {1, 1, 0}, {2, 2, 0}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0},
      {I64, X, {1, 1, 0}, {2, 2, 0}, 1, {1, 1, 0}, {2, 2, 0}, {0}, {0}, {0}, 0, 0}},
     0, 0, HS_ORDER_OFFSETS, 8, EPIC_ORDER, 0, {0}},
    {"order", "reversed-3d-box", 3, {6, 6, 6}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, HS_STENCIL_BOX, 2,
     {{F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 2, HS_COMP_FASTEST}},
     0, 0, HS_ORDER_OFFSETS, 26, REVERSED_ORDER, 0, {0}},
    /* A star plan given the 8-offset list: the corners it does not use are skipped. */
    {"order", "offsets-star-walled", 2, {11, 9, 1}, {0, 0, 0}, {0, 1, 0}, {2, 2, 0}, HS_STENCIL_STAR, 2,
     {{F64, Z, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {I32, X, {2, 2, 0}, {2, 2, 0}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0}},
     0, 0, HS_ORDER_OFFSETS, 8, EPIC_ORDER, 0, {0}},
    /* Sweeps (EPOCH, Lare3d): forward and reverse stage by stage over full transverse slabs. */
    {"order", "sweep-epoch-3d", 3, {12, 9, 8}, {0, 0, 0}, {1, 1, 1}, {2, 2, 2}, HS_STENCIL_BOX, 2,
     {{F64, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {I32, Z, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0}},
     0, 0, HS_ORDER_SWEEP, 0, {{0}}, 0, {0}},
    {"order", "sweep-zxy-walled", 3, {10, 9, 6}, {0, 0, 0}, {0, 1, 0}, {1, 1, 1}, HS_STENCIL_BOX, 2,
     {{F64, X, {1, 1, 1}, {1, 1, 1}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F32, Z, {1, 1, 1}, {2, 2, 2}, 1, {1, 1, 1}, {2, 2, 2}, {0}, {0}, {0}, 0, 0}},
     0, 0, HS_ORDER_SWEEP, 0, {{0}}, 3, {2, 0, 1}},
    /* Lare3d's fields: cell-centred, node-centred (upper rank owns the shared plane) and
     * face-centred on x (lower rank owns it), walled y. */
    {"order", "sweep-lare3d", 3, {10, 9, 6}, {0, 0, 0}, {1, 0, 1}, {2, 2, 2}, HS_STENCIL_BOX, 3,
     {{F64, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {1, 1, 1}, {UP, UP, UP}, {0}, 0, 0},
      {F32, X, {2, 2, 2}, {2, 2, 2}, 0, {0}, {0}, {1, 0, 0}, {LO, 0, 0}, {0}, 0, 0}},
     0, 0, HS_ORDER_SWEEP, 0, {{0}}, 0, {0}},
    {"order", "sweep-2d-in-3d", 3, {10, 9, 4}, {0, 0, 1}, {1, 0, 0}, {1, 1, 0}, HS_STENCIL_BOX, 2,
     {{F64, Z, {1, 1, 0}, {1, 1, 0}, 0, {0}, {0}, {0}, {0}, {0}, 3, HS_COMP_SLOWEST},
      {F64, Z, {1, 1, 0}, {1, 1, 0}, 1, {1, 1, 0}, {1, 1, 0}, {0}, {0}, {0, 0, 1}, 0, 0}},
     0, 0, HS_ORDER_SWEEP, 0, {{0}}, 2, {1, 0}},
    /* EPOCH's ghost width for its default particle shape (ng = 5). */
    {"order", "sweep-epoch-ng5", 3, {15, 15, 10}, {0, 0, 0}, {1, 1, 1}, {5, 5, 5}, HS_STENCIL_BOX, 1,
     {{F64, X, {5, 5, 5}, {5, 5, 5}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0}},
     0, 0, HS_ORDER_SWEEP, 0, {{0}}, 0, {0}},
    /* Deep halos (depth up to 8; each depth within every rank's extent at 1-9 ranks). */
    {"deep", "depth7-per-side-walled", 3, {21, 24, 4}, {0, 0, 1}, {0, 1, 0}, {0, 0, 0}, HS_STENCIL_BOX, 2,
     {{F64, Z, {7, 3, 0}, {2, 8, 0}, 1, {7, 3, 0}, {2, 8, 0}, {0}, {0}, {0}, 0, 0},
      {F32, X, {1, 7, 0}, {7, 1, 0}, 1, {1, 7, 0}, {7, 0, 0}, {0}, {0}, {0}, 2, HS_COMP_SLOWEST}}, 0, 0, CANON},
    {"deep", "deep-node-3d", 3, {15, 15, 10}, {0, 0, 0}, {1, 1, 1}, {5, 5, 5}, HS_STENCIL_BOX, 2,
     {{F64, X, {5, 5, 5}, {5, 5, 5}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0},
      {F64, Z, {4, 4, 4}, {4, 4, 4}, 1, {4, 4, 4}, {4, 4, 4}, {1, 1, 1}, {UP, LO, UP}, {0}, 0, 0}}, 0, 0, CANON},
    {"deep", "depth8-1xN", 3, {8, 72, 2}, {1, 0, 1}, {1, 1, 0}, {8, 8, 0}, HS_STENCIL_BOX, 1,
     {{F64, Z, {8, 8, 0}, {8, 8, 0}, 0, {0}, {0}, {0}, {0}, {0}, 0, 0}}, 0, 0, CANON},
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

/* Where every rank sits (gathered once per run): the combine-order oracles follow
 * contributions from one rank's halo to another rank's interior. */
typedef struct {
  int coord[3], local[3], offset[3];
} rinfo;
typedef struct {
  int size, nd, procs[3], periodic[3];
  rinfo r[MAXR];
} world;

static world world_of(hs_decomp d, int nd) {
  world w;
  memset(&w, 0, sizeof w);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  w.nd = nd;
  rinfo me;
  memset(&me, 0, sizeof me);
  for (int a = 0; a < 3; a++) {
    w.procs[a] = a < nd ? hs_decomp_procs(d, a) : 1;
    w.periodic[a] = a < nd ? hs_decomp_periodic(d, a) : 0;
    me.coord[a] = a < nd ? hs_decomp_coord(d, a) : 0;
    me.local[a] = a < nd ? hs_decomp_local_extent(d, a) : 1;
    me.offset[a] = a < nd ? hs_decomp_global_offset(d, a) : 0;
  }
  MPI_Allgather(&me, 9, MPI_INT, w.r, 9, MPI_INT, MPI_COMM_WORLD);
  return w;
}

/* The rank at offset o from rank ri (periodic wrap), or -1 past a wall; wrap[a]: -1 or +1
 * where the step wrapped around axis a, else 0. */
static int world_nbr(const world *w, int ri, const int o[3], int wrap[3]) {
  int c[3];
  for (int a = 0; a < 3; a++) {
    c[a] = w->r[ri].coord[a] + (a < w->nd ? o[a] : 0);
    wrap[a] = 0;
    if (c[a] < 0 || c[a] >= w->procs[a]) {
      if (!w->periodic[a]) return -1;
      wrap[a] = c[a] < 0 ? -1 : 1;
      c[a] = (c[a] + w->procs[a]) % w->procs[a];
    }
  }
  for (int i = 0; i < w->size; i++)
    if (!memcmp(w->r[i].coord, c, sizeof c)) return i;
  return -1;
}

/* Geometry of field s on rank ri (no data). */
static void tf_geom(tf *t, const fspec *s, const config *c, const world *w, int ri,
                    const int swapped[3]) {
  memset(t, 0, sizeof *t);
  t->s = s;
  t->nd = c->ndims;
  t->nc = s->ncomp > 1 ? s->ncomp : 1;
  t->esz = esize(s->type);
  t->ncell = 1;
  const rinfo *r = &w->r[ri];
  for (int a = 0; a < 3; a++) {
    if (a >= t->nd) {
      t->cells[a] = t->n[a] = t->alloc[a] = t->gext[a] = 1;
      continue;
    }
    t->cells[a] = s->extent[a] ? s->extent[a] : r->local[a];
    t->n[a] = t->cells[a] + s->node[a];
    t->alloc[a] = s->hl[a] + t->n[a] + s->hh[a];
    t->gext[a] = s->extent[a] ? s->extent[a] : c->global[a];
    t->gofs[a] = s->extent[a] ? 0 : r->offset[a];
    t->periodic[a] = w->periodic[a];
    t->dl[a] = s->dset ? s->dl[a] : c->depth[a];
    t->dh[a] = s->dset ? s->dh[a] : c->depth[a];
    t->nbr_lo[a] = t->periodic[a] || r->coord[a] > 0;
    t->nbr_hi[a] = t->periodic[a] || r->coord[a] < w->procs[a] - 1;
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
}

static void tf_init(tf *t, const fspec *s, const config *c, const world *w, int ri,
                    const int swapped[3]) {
  tf_geom(t, s, c, w, ri, swapped);
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

/* ------------------------------------------------------------------ combine orders */
/* The order group simulates the documented order serially from every rank's geometry and
 * analytic values, and checks every point of every field of this rank bit for bit. */

/* Points of field t on axis a received on side s (-1 below, +1 above), or sent toward side s
 * (filling the neighbour's halo on side -s): [*lo, *hi). A shared node plane belongs to its
 * owner: the other rank receives it with its halo. */
static void side_range(const tf *t, int a, int s, int recv, int *lo, int *hi) {
  int c = t->cells[a], n = t->n[a];
  int lx = t->s->node[a] && t->s->owner[a] == LO, hx = t->s->node[a] && t->s->owner[a] == UP;
  if (recv) {
    *lo = s < 0 ? -t->dl[a] : n - hx;
    *hi = s < 0 ? lx : n + t->dh[a];
  } else {
    *lo = s < 0 ? lx : c - t->dl[a];
    *hi = s < 0 ? lx + t->dh[a] + hx : c + lx;
  }
}

/* Lare3d's own index ranges (src/core/mpiboundary.f90, nx = 7, 2 ghosts), as our [lo, hi)
 * (its cell i is our point i - 1, its node i our point i), in the order: sent toward the
 * lower rank, received from the upper, sent toward the upper, received from the lower.
 *   cell-centred: 1:2, nx+1:nx+2, nx-1:nx, -1:0
 *   velocity (upper rank owns the shared node): 0:2, nx:nx+2, nx-2:nx-1, -2:-1
 *   normal B (lower rank owns the shared face): 1:2, nx+1:nx+2, nx-2:nx, -2:0
 * side_range with HS_OWNER_UPPER / HS_OWNER_LOWER must give exactly these, so the sweep
 * oracle (and the sweep it checks in sweep-lare3d) moves Lare3d's planes. Returns the number
 * of mismatches. */
static int lare3d_ranges(void) {
  static const struct { int node, owner, r[4][2]; } want[3] = {
      {0, 0, {{0, 2}, {7, 9}, {5, 7}, {-2, 0}}},
      {1, UP, {{0, 3}, {7, 10}, {5, 7}, {-2, 0}}},
      {1, LO, {{1, 3}, {8, 10}, {5, 8}, {-2, 1}}}};
  static const int side[4] = {-1, 1, 1, -1}, recv[4] = {0, 1, 0, 1};
  int bad = 0;
  for (int i = 0; i < 3; i++) {
    fspec fs;
    memset(&fs, 0, sizeof fs);
    fs.node[0] = want[i].node;
    fs.owner[0] = want[i].owner;
    tf t;
    memset(&t, 0, sizeof t);
    t.s = &fs;
    t.cells[0] = 7;
    t.n[0] = 7 + fs.node[0];
    t.dl[0] = t.dh[0] = 2;
    for (int j = 0; j < 4; j++) {
      int lo, hi;
      side_range(&t, 0, side[j], recv[j], &lo, &hi);
      bad += lo != want[i].r[j][0] || hi != want[i].r[j][1];
    }
  }
  return bad;
}

static int in_range(const tf *t, int a, int s, int recv, int v) {
  int lo, hi;
  side_range(t, a, s, recv, &lo, &hi);
  return v >= lo && v < hi;
}

/* A sweep stage's slab spans, on every other axis, the interior and the swapped halo. */
static int in_slab(const tf *t, int stage_axis, const int l[3]) {
  for (int b = 0; b < t->nd; b++)
    if (b != stage_axis && (l[b] < -t->dl[b] || l[b] >= t->n[b] + t->dh[b])) return 0;
  return 1;
}

typedef struct {
  const config *c;
  const world *w;
  tf *g;              /* [rank * MAXF + field]: every rank's geometry */
  int swapped[3];
  int reverse;        /* values: 0 forward (owned: the analytic value, others: a marker of the
                         rank and point), 1 reverse (order-sensitive floats or small integers) */
  int after_reverse;  /* base values are the reverse's results (accumulate-then-fill) */
  int swap;           /* forward round */
  hs_op op;
  int nst, axes[3];   /* sweep stages */
  int norder, list[26][3]; /* the direct plan's step order (canonical or given) */
} octx;

static const tf *og(const octx *x, int ri, int f) { return &x->g[ri * MAXF + f]; }

static uint64_t mix(uint64_t h) {
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

/* Initial value of point l (component k) of field f on rank ri. Reverse: owned points in
 * [1, 2), contributions of 53 (24) significant bits scaled by 2^-1..2^-7, so that the order
 * of the additions shows in the last bits; integers small. */
static double base0(const octx *x, int ri, int f, const int l[3], int k) {
  const tf *t = og(x, ri, f);
  int owned = in_owned(t, l);
  if (!x->reverse)
    return owned ? (double)fwd_value(gkey(t, f, l, k), x->swap)
                 : -(double)(1 + ri * 200000 + (int64_t)(tindex(t, l, k) % 200000));
  uint64_t h = mix(owned ? (uint64_t)gkey(t, f, l, k) * 2 + 1
                         : ((uint64_t)(ri + 1) << 40) ^ (uint64_t)tindex(t, l, k) * 4);
  switch (t->s->type) {
  case F64:
    return owned ? 1.0 + (double)(h >> 12) * 0x1p-52
                 : (1.0 + (double)(h >> 12) * 0x1p-52) / (double)(2 << (h % 7));
  case F32:
    return owned ? (double)(1.0f + (float)(h >> 41) * 0x1p-23f)
                 : (double)((1.0f + (float)(h >> 41) * 0x1p-23f) / (float)(2 << (h % 7)));
  default: return owned ? (double)(h % 50) : (double)(1 + h % 13);
  }
}

/* op(a, b) in the field's own arithmetic, as the library combines. */
static double comb(hs_type ty, hs_op op, double a, double b) {
  if (op == HS_OP_REPLACE) return b;
  if (op == HS_OP_MAX) return b > a ? b : a;
  if (op == HS_OP_MIN) return b < a ? b : a;
  if (ty == F64) return a + b;
  if (ty == F32) return (double)((float)a + (float)b);
  return (double)((int64_t)a + (int64_t)b); /* small values: no wrap */
}

/* l on rank ri, mapped to the local index of the same global point on rank rj, the step to
 * it being o (wrapping per wrap[]). */
static void map_point(const octx *x, int ri, int rj, int f, const int o[3], const int wrap[3],
                      const int l[3], int out[3]) {
  const tf *a = og(x, ri, f), *b = og(x, rj, f);
  for (int i = 0; i < 3; i++)
    out[i] = o[i] ? l[i] + a->gofs[i] - b->gofs[i] - wrap[i] * a->gext[i] : l[i];
}

/* The rank across side s of axis a from rank ri, l mapped to it in lj; -1 past a wall. */
static int across(const octx *x, int ri, int f, int a, int s, const int l[3], int lj[3]) {
  int o[3] = {0, 0, 0}, wrap[3];
  o[a] = s;
  int rj = world_nbr(x->w, ri, o, wrap);
  if (rj >= 0) map_point(x, ri, rj, f, o, wrap, l, lj);
  return rj;
}

static double after_fwd(const octx *x, int ri, int f, const int l[3], int k, int stage);
static double reversed(const octx *x, int ri, int f, const int l[3], int k);

static double base(const octx *x, int ri, int f, const int l[3], int k) {
  if (!x->after_reverse) return base0(x, ri, f, l, k);
  return reversed(x, ri, f, l, k);
}

/* The direct forward: the point l receives from the rank at offset o, the side it lies on
 * per axis; 0 if no swap writes it. */
static int direct_source(const octx *x, int ri, int f, const int l[3], int *rj, int lj[3]) {
  const tf *t = og(x, ri, f);
  int o[3] = {0, 0, 0}, nz = 0, wrap[3];
  for (int a = 0; a < t->nd; a++) {
    if (l[a] >= t->olo[a] && l[a] < t->ohi[a]) continue;
    if (!x->swapped[a]) return 0;
    if (in_range(t, a, -1, 1, l[a])) o[a] = -1;
    else if (in_range(t, a, 1, 1, l[a])) o[a] = 1;
    else return 0;
    nz++;
  }
  if (nz == 0 || (x->c->stencil == HS_STENCIL_STAR && nz > 1)) return 0;
  *rj = world_nbr(x->w, ri, o, wrap);
  if (*rj < 0) return 0;
  map_point(x, ri, *rj, f, o, wrap, l, lj);
  return 1;
}

/* Forward result at l after sweep stages [0, stage) (stage = nst: the whole sweep), or of the
 * direct exchange (stage < 0). */
static double after_fwd(const octx *x, int ri, int f, const int l[3], int k, int stage) {
  if (stage < 0) {
    int rj, lj[3];
    return direct_source(x, ri, f, l, &rj, lj) ? base(x, rj, f, lj, k) : base(x, ri, f, l, k);
  }
  if (stage == 0) return base(x, ri, f, l, k);
  const tf *t = og(x, ri, f);
  int a = x->axes[stage - 1];
  for (int s = -1; s <= 1 && in_slab(t, a, l); s += 2) {
    int lj[3], rj = in_range(t, a, s, 1, l[a]) ? across(x, ri, f, a, s, l, lj) : -1;
    if (rj >= 0) return after_fwd(x, rj, f, lj, k, stage - 1);
  }
  return after_fwd(x, ri, f, l, k, stage - 1);
}

/* Sweep reverse after stages [0, stage): a stage combines into its interior slabs (full
 * transverse extent) the lower neighbour's contribution, then the upper one's. */
static double sweep_rev(const octx *x, int ri, int f, const int l[3], int k, int stage) {
  if (stage == 0) return base0(x, ri, f, l, k);
  const tf *t = og(x, ri, f);
  int a = x->axes[stage - 1];
  double v = sweep_rev(x, ri, f, l, k, stage - 1);
  for (int s = -1; s <= 1 && in_slab(t, a, l); s += 2) {
    int lj[3], rj = in_range(t, a, s, 0, l[a]) ? across(x, ri, f, a, s, l, lj) : -1;
    if (rj >= 0) v = comb(t->s->type, x->op, v, sweep_rev(x, rj, f, lj, k, stage - 1));
  }
  return v;
}

/* Direct reverse at an owned point: the contributions mirrored at each side, folded in the
 * list's order (offsets the plan does not use contribute nothing). */
static double direct_rev(const octx *x, int ri, int f, const int l[3], int k, int norder,
                         const int (*list)[3], int *ncontrib) {
  const tf *t = og(x, ri, f);
  double v = base0(x, ri, f, l, k);
  *ncontrib = 0;
  for (int i = 0; i < norder; i++) {
    const int *o = list[i];
    int nz = 0, ok = 1, wrap[3], lj[3];
    for (int a = 0; a < 3; a++) {
      if (!o[a]) continue;
      nz++;
      if (a >= t->nd || !x->swapped[a]) ok = 0;
    }
    if (!ok || (x->c->stencil == HS_STENCIL_STAR && nz > 1)) continue;
    for (int a = 0; a < t->nd && ok; a++)
      ok = o[a] ? in_range(t, a, o[a], 0, l[a]) : l[a] >= t->olo[a] && l[a] < t->ohi[a];
    int rj = ok ? world_nbr(x->w, ri, o, wrap) : -1;
    if (rj < 0) continue;
    map_point(x, ri, rj, f, o, wrap, l, lj);
    v = comb(t->s->type, x->op, v, base0(x, rj, f, lj, k));
    (*ncontrib)++;
  }
  return v;
}

static double reversed(const octx *x, int ri, int f, const int l[3], int k) {
  if (x->nst) return sweep_rev(x, ri, f, l, k, x->nst);
  int n;
  if (!in_owned(og(x, ri, f), l)) return base0(x, ri, f, l, k);
  return direct_rev(x, ri, f, l, k, x->norder, x->list, &n);
}

static double dget(const tf *t, size_t i) {
  const char *p = (const char *)t->data + i * t->esz;
  switch (t->s->type) {
  case F64: { double d; memcpy(&d, p, 8); return d; }
  case F32: { float v; memcpy(&v, p, 4); return v; }
  case I32: { int32_t v; memcpy(&v, p, 4); return v; }
  default: { int64_t v; memcpy(&v, p, 8); return (double)v; }
  }
}

static void dset(const tf *t, size_t i, double v) {
  char *p = (char *)t->data + i * t->esz;
  switch (t->s->type) {
  case F64: memcpy(p, &v, 8); break;
  case F32: { float q = (float)v; memcpy(p, &q, 4); break; }
  case I32: { int32_t q = (int32_t)v; memcpy(p, &q, 4); break; }
  default: { int64_t q = (int64_t)v; memcpy(p, &q, 8); break; }
  }
}

static int same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static long order_sensitive; /* owned float64 points where the canonical order gives other bits */

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

static void ofail(run_ctx *r, const char *what, const config *c, int f, int k, const int l[3],
                  double got, double want) {
  if (r->bad++ < 5)
    fprintf(stderr, "[rank %d] FAIL %s/%s on %s: field %d comp %d point (%d,%d,%d): got %.17g, "
                    "want %.17g\n", r->rank, c->name, what, r->spec, f, k, l[0], l[1], l[2], got,
            want);
}

/* No rank has failed since b0 (collective: every rank goes on or stops together). */
static int all_ok(const run_ctx *r, long b0) {
  int mine = r->bad > b0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return !any;
}

/* The order group: forward twice, the reverse with every op, accumulate-then-fill; every
 * point of every field against the serial simulation of the plan's order. */
static void order_checks(run_ctx *r, const config *c, hs_plan p, tf *t, const world *w,
                         const int swapped[3]) {
  octx x;
  memset(&x, 0, sizeof x);
  x.c = c;
  x.w = w;
  memcpy(x.swapped, swapped, sizeof x.swapped);
  x.g = calloc((size_t)w->size * MAXF, sizeof *x.g);
  for (int ri = 0; ri < w->size; ri++)
    for (int f = 0; f < c->nfields; f++) tf_geom(&x.g[ri * MAXF + f], &c->f[f], c, w, ri, swapped);
  int canon[26][3], ncanon = 0;
  for (int i = 0; i < 27; i++) {
    int o[3] = {i / 9 - 1, i / 3 % 3 - 1, i % 3 - 1};
    if (o[0] || o[1] || o[2]) memcpy(canon[ncanon++], o, sizeof o);
  }
  if (c->order == HS_ORDER_SWEEP) {
    for (int k = 0; k < (c->nsweep ? c->nsweep : c->ndims); k++) {
      int a = c->nsweep ? c->sweep[k] : k;
      if (swapped[a]) x.axes[x.nst++] = a;
    }
  } else if (c->order == HS_ORDER_OFFSETS) {
    x.norder = c->norder;
    memcpy(x.list, c->offs, sizeof x.list);
  } else {
    x.norder = ncanon;
    memcpy(x.list, canon, sizeof x.list);
  }
  int l[3], fstage = x.nst ? x.nst : -1;
  long b0 = r->bad;
  char desc[4096];
  static const char *const said[3] = {"order canonical; ", "order offsets (", "order sweep "};
  if (hs_plan_describe(p, desc, sizeof desc) != HS_OK || !strstr(desc, said[c->order])) {
    fprintf(stderr, "[rank %d] FAIL %s on %s: hs_plan_describe does not say '%s': %s\n", r->rank,
            c->name, r->spec, said[c->order], desc);
    r->bad++;
  }
  for (int s = 0; s < 2 && all_ok(r, b0); s++) {
    x.swap = s;
    for (int f = 0; f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) dset(&t[f], tindex(&t[f], l, k), base0(&x, r->rank, f, l, k));
    int rc = s == 0 ? hs_swap(p, NULL) : hs_swap_start(p, NULL);
    int done = 0;
    for (int i = 0; s == 1 && rc == HS_OK && !done && i < 20; i++) rc = hs_swap_test(p, NULL, &done);
    if (s == 1 && rc == HS_OK) rc = hs_swap_complete(p, NULL);
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] FAIL %s on %s: swap: %s\n", r->rank, c->name, r->spec, hs_error_message());
      r->bad++;
      break;
    }
    for (int f = 0; f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) {
          double want = after_fwd(&x, r->rank, f, l, k, fstage), direct;
          double got = dget(&t[f], tindex(&t[f], l, k));
          int rj, lj[3];
          if (!same_bits(got, want)) ofail(r, "forward", c, f, k, l, got, want);
          /* the simulation's own claim: a sweep gives every point the direct exchange
           * writes the direct exchange's value */
          if (x.nst && (in_owned(&t[f], l) || direct_source(&x, r->rank, f, l, &rj, lj)) &&
              !same_bits(want, direct = after_fwd(&x, r->rank, f, l, k, -1)))
            ofail(r, "sweep oracle against the direct exchange", c, f, k, l, want, direct);
        }
  }
  static const hs_op ops[] = {HS_OP_SUM, HS_OP_MAX, HS_OP_MIN, HS_OP_REPLACE, HS_OP_SUM};
  for (int oi = 0; oi < 5 && all_ok(r, b0); oi++) {
    int fill = oi == 4;
    x.reverse = 1;
    x.op = ops[oi];
    x.after_reverse = 0;
    for (int f = 0; f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) dset(&t[f], tindex(&t[f], l, k), base0(&x, r->rank, f, l, k));
    int rc = fill ? hs_accumulate_fill(p, x.op, NULL) : hs_reverse(p, x.op, NULL);
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] FAIL %s on %s: reverse: %s\n", r->rank, c->name, r->spec, hs_error_message());
      r->bad++;
      break;
    }
    x.after_reverse = fill;
    for (int f = 0; f < c->nfields; f++)
      FOR_POINTS(&t[f], l)
        for (int k = 0; k < t[f].nc; k++) {
          double want = fill ? after_fwd(&x, r->rank, f, l, k, fstage) : reversed(&x, r->rank, f, l, k);
          double got = dget(&t[f], tindex(&t[f], l, k));
          if (!same_bits(got, want)) ofail(r, fill ? "accumulate-fill" : "reverse", c, f, k, l, got, want);
          int n;
          if (oi == 0 && t[f].s->type == F64 && in_owned(&t[f], l) &&
              !same_bits(want, direct_rev(&x, r->rank, f, l, k, ncanon, canon, &n)))
            order_sensitive++;
        }
  }
  free(x.g);
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
  world w = world_of(d, c->ndims);
  tf t[MAXF];
  hs_field fl[MAXF];
  for (int f = 0; f < c->nfields; f++) {
    tf_init(&t[f], &c->f[f], c, &w, r->rank, swapped);
    fl[f] = tf_field(&t[f]);
  }
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  for (int a = 0; a < 3; a++) pd.depth[a] = c->depth[a];
  pd.stencil = c->stencil;
  pd.nfields = c->nfields;
  pd.fields = fl;
  pd.transport_name = r->spec;
  if (c->order == HS_ORDER_OFFSETS) hs_plan_desc_set_order_offsets(&pd, c->norder, &c->offs[0][0]);
  if (c->order == HS_ORDER_SWEEP) hs_plan_desc_set_order_sweep(&pd, c->nsweep, c->sweep);
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
  if (!strcmp(c->group, "order")) {
    order_checks(r, c, p, t, &w, swapped);
    goto checked;
  }
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
      /* Every transport progresses in test: it must report the swap done without complete
       * (bounded: a test that never does fails here rather than hang). */
      double t0 = MPI_Wtime(), limit = 60.0;
      /* yielding between polls: ranks outnumber cores in these launches */
      for (long i = 1; rc == HS_OK && !done && MPI_Wtime() - t0 < limit; i++)
        if ((rc = hs_swap_test(p, NULL, &done)) == HS_OK && !done && i % 8 == 0) sched_yield();
      if (rc == HS_OK && !done) {
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
  for (int oi = 0; oi <= nops && all_ok(r, bad0); oi++) {
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
  if (all_ok(r, bad0)) {
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
checked:;
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
  const char *group = NULL, *exclude = NULL, *specs[64], *optional[16];
  int nspecs = 0, noptional = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--group") && i + 1 < argc) group = argv[++i];
    else if (!strcmp(argv[i], "--exclude-group") && i + 1 < argc) exclude = argv[++i];
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
      if (test_default_transport(hs_transport_name(i))) specs[nspecs++] = hs_transport_name(i);
    }
  int passed = 0, failed = 0, skipped = 0, unusable = 0, nusable = 0;
  for (int ti = 0; ti < nspecs; ti++)
    if (test_transport_usable(specs[ti], optional, noptional, &unusable, &failed))
      specs[nusable++] = specs[ti];
  nspecs = nusable;
  int nconf = (int)(sizeof configs / sizeof configs[0]);
  if ((!group || !strcmp(group, "order")) && lare3d_ranges()) {
    if (r.rank == 0) printf("FAIL order: the sweep oracle's planes are not Lare3d's\n");
    failed++;
  }
  for (int ci = 0; ci < nconf; ci++) {
    const config *c = &configs[ci];
    if ((group && strcmp(group, c->group)) || (exclude && !strcmp(exclude, c->group))) continue;
    uint64_t bits = 0;
    int have_bits = 0;
    for (int ti = 0; ti < nspecs; ti++) {
      /* auto: what it delegates is checked, not its choice, so one short round per
       * candidate (every candidate still passes the analytic check); in the order and deep
       * groups two candidates */
      int is_auto = !strcmp(specs[ti], "auto");
      int brief = is_auto && (!strcmp(c->group, "order") || !strcmp(c->group, "deep"));
      r.spec = brief     ? "auto:candidates=p2p+shm,rounds=1,swaps=2"
               : is_auto ? TEST_AUTO_BRIEF
                         : specs[ti];
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
  /* The order checks must be able to tell orders apart: some float64 point whose bits the
   * canonical order would change. */
  long sens = 0;
  MPI_Allreduce(&order_sensitive, &sens, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if ((!group || !strcmp(group, "order")) && passed) {
    if (r.rank == 0) printf("order: %ld float64 points where the canonical order gives other bits\n", sens);
    if (sens == 0) {
      if (r.rank == 0) printf("FAIL order: no point tells the orders apart\n");
      failed++;
    }
  }
  if (r.rank == 0)
    printf("test_fields %s at %d ranks:\n%d passed, %d failed, %d skipped, %d transports not "
           "usable here\n", group ? group : "all", r.size, passed, failed, skipped, unusable);
  MPI_Finalize();
  return test_exit_status(passed, failed, unusable, 77);
}
