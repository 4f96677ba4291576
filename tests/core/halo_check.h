/* Shared by the halo tests and the race harness: the value every cell must hold, computed
 * from its global coordinates, the field and the swap number, and a checker that walks every
 * halo cell of a field and says which ones must have been written. */
#ifndef HS_TEST_HALO_CHECK_H
#define HS_TEST_HALO_CHECK_H

#include "haloswap.h"
#include "test_transports.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL (-1)

/* CHECK(cond, format, ...): if cond is false, print this rank, the place and the message, and
 * count it in test_failures. The program sets test_rank. */
__attribute__((unused)) static int test_rank, test_failures;
#define CHECK(cond, ...)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "[rank %d] %s:%d: FAIL: ", test_rank, __FILE__, __LINE__);    \
      fprintf(stderr, __VA_ARGS__);                                                 \
      fprintf(stderr, "\n");                                                        \
      test_failures++;                                                              \
    }                                                                               \
  } while (0)

typedef struct {
  hs_type type;
  hs_layout layout;
  int halo[3];
  int alloc[3];
  ptrdiff_t stride[3]; /* elements */
  size_t n;            /* elements allocated */
} tfield;

/* Value of (global cell g, field f, swap s): exact in every element type, never negative. */
static inline int64_t cell_value(const int g[3], int f, int s, hs_type t) {
  uint64_t h = (uint64_t)(g[0] + 7) * 1000003u + (uint64_t)(g[1] + 7) * 10007u +
               (uint64_t)(g[2] + 7) * 101u + (uint64_t)f * 7919u + (uint64_t)s * 104729u;
  h ^= h >> 13;
  if (t == HS_FLOAT32 || t == HS_INT32) return (int64_t)(h % (1u << 23));
  return (int64_t)(h % ((uint64_t)1 << 52));
}

static inline void tfield_init(tfield *tf, hs_type t, hs_layout lay, const int local[3],
                               const int halo[3], int ndims) {
  memset(tf, 0, sizeof *tf);
  tf->type = t;
  tf->layout = lay;
  for (int a = 0; a < 3; a++) {
    tf->halo[a] = a < ndims ? halo[a] : 0;
    tf->alloc[a] = (a < ndims ? local[a] : 1) + 2 * tf->halo[a];
  }
  if (ndims == 2) {
    if (lay == HS_LAYOUT_ZFAST) { /* y fastest in 2D */
      tf->stride[1] = 1;
      tf->stride[0] = tf->alloc[1];
    } else {
      tf->stride[0] = 1;
      tf->stride[1] = tf->alloc[0];
    }
  } else if (lay == HS_LAYOUT_ZFAST) {
    tf->stride[2] = 1;
    tf->stride[1] = tf->alloc[2];
    tf->stride[0] = (ptrdiff_t)tf->alloc[2] * tf->alloc[1];
  } else if (lay == HS_LAYOUT_XFAST) {
    tf->stride[0] = 1;
    tf->stride[1] = tf->alloc[0];
    tf->stride[2] = (ptrdiff_t)tf->alloc[0] * tf->alloc[1];
  } else { /* STRIDED: y fastest, then z, then x, with padding between x planes */
    tf->stride[1] = 1;
    tf->stride[2] = tf->alloc[1];
    tf->stride[0] = (ptrdiff_t)tf->alloc[1] * tf->alloc[2] + 3;
  }
  tf->n = (size_t)tf->alloc[0] * tf->alloc[1] * tf->alloc[2] + 3 * (size_t)tf->alloc[0];
}

static inline size_t tfield_index(const tfield *tf, const int i[3]) {
  size_t k = 0;
  for (int a = 0; a < 3; a++) k += (size_t)((i[a] + tf->halo[a]) * tf->stride[a]);
  return k;
}

static inline void tset(void *data, hs_type t, size_t k, int64_t v) {
  switch (t) {
  case HS_FLOAT64: ((double *)data)[k] = (double)v; break;
  case HS_FLOAT32: ((float *)data)[k] = (float)v; break;
  case HS_INT32: ((int32_t *)data)[k] = (int32_t)v; break;
  default: ((int64_t *)data)[k] = v; break;
  }
}

static inline int64_t tget(const void *data, hs_type t, size_t k) {
  switch (t) {
  case HS_FLOAT64: return (int64_t)((const double *)data)[k];
  case HS_FLOAT32: return (int64_t)((const float *)data)[k];
  case HS_INT32: return ((const int32_t *)data)[k];
  default: return ((const int64_t *)data)[k];
  }
}

/* Copy box r of a field to (to_buf) or from a contiguous buffer, z fastest then y then x: the
 * order haloswap's policy hooks use. */
static inline void tfield_box_copy(const tfield *tf, void *data, const hs_region *r, void *buf,
                                   int to_buf) {
  size_t e = hs_type_size(tf->type), n = 0;
  int i[3];
  for (i[0] = r->lo[0]; i[0] < r->lo[0] + r->count[0]; i[0]++)
    for (i[1] = r->lo[1]; i[1] < r->lo[1] + r->count[1]; i[1]++)
      for (i[2] = r->lo[2]; i[2] < r->lo[2] + r->count[2]; i[2]++, n++) {
        char *cell = (char *)data + tfield_index(tf, i) * e, *b = (char *)buf + n * e;
        if (to_buf)
          memcpy(b, cell, e);
        else
          memcpy(cell, b, e);
      }
}

/* Policy-hook fields whose data lives in an array the core does not see: the hooks copy whole
 * boxes, z fastest (tfield_box_copy). */
typedef struct {
  const tfield *tf;
  void *data;
} tfield_hook;
__attribute__((unused)) static void tfield_hook_pack(void *ctx, const hs_region *r, void *buf) {
  tfield_hook *h = ctx;
  tfield_box_copy(h->tf, h->data, r, buf, 1);
}
__attribute__((unused)) static void tfield_hook_unpack(void *ctx, const hs_region *r,
                                                   const void *buf) {
  tfield_hook *h = ctx;
  tfield_box_copy(h->tf, h->data, r, (void *)buf, 0);
}

/* MPI_Init, this rank (also test_rank) and the number of ranks. */
static inline void test_init(int *argc, char ***argv, int *rank, int *size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  test_rank = *rank;
}

/* The largest of every rank's count (of wrong cells, failed checks): collective. */
static inline long test_worst(long bad) {
  long all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

/* The arguments the test programs share: --transport SPEC (repeatable, at most max) and
 * --swaps N. Returns 1 if argv[*i] was one of them (taken, with its value). */
static inline int test_arg(int argc, char **argv, int *i, const char **specs, int *nspecs,
                           int max, int *nswaps) {
  if (!strcmp(argv[*i], "--transport") && *i + 1 < argc && *nspecs < max)
    specs[(*nspecs)++] = argv[++*i];
  else if (!strcmp(argv[*i], "--swaps") && *i + 1 < argc)
    *nswaps = atoi(argv[++*i]);
  else
    return 0;
  return 1;
}

/* What the transport tests' command lines share: test_arg's options and --may-be-unusable
 * NAME (repeatable: that transport may report itself not usable here, a skip). */
typedef struct {
  const char *specs[64];
  int nspecs, nswaps;
  const char *optional[16];
  int noptional;
} test_opts;

/* Returns 1 if argv[*i] was one of test_opts' options (taken, with its value). */
static inline int test_opt(int argc, char **argv, int *i, test_opts *o) {
  if (test_arg(argc, argv, i, o->specs, &o->nspecs, 64, &o->nswaps)) return 1;
  if (strcmp(argv[*i], "--may-be-unusable") || *i + 1 >= argc || o->noptional >= 16) return 0;
  o->optional[o->noptional++] = argv[++*i];
  return 1;
}

/* An argument no option of prog takes: rank 0 names it; MPI is finalized. Returns the exit
 * status (2). */
static inline int test_bad_arg(const char *prog, const char *arg) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) fprintf(stderr, "%s: unknown argument '%s'\n", prog, arg);
  MPI_Finalize();
  return 2;
}

/* Without --transport: every registered transport test_default_transport takes, auto only
 * at up to max_auto ranks (it builds and times a plan of every candidate per plan: too slow
 * oversubscribed; tests/transports/auto covers it at 1-4 ranks). auto gets one short round
 * per candidate: these tests check the plan it delegates to, not its timing (tests/transports/
 * auto does; the full trial cost these launches three quarters of their CPU time). Returns 1
 * if auto was left out. */
static inline int test_default_specs(test_opts *o, int size, int max_auto) {
  int left_out = 0;
  if (o->nspecs) return 0;
  for (int t = 0; t < hs_transport_count() && o->nspecs < 64; t++) {
    const char *name = hs_transport_name(t);
    if (size > max_auto && !strcmp(name, "auto")) left_out = 1;
    else if (test_default_transport(name))
      o->specs[o->nspecs++] = strcmp(name, "auto") ? name : TEST_AUTO_BRIEF;
  }
  return left_out;
}

/* A decomposition description: ndims axes, global extents, process grid (NULL: the
 * library's default) and periodicity per axis. */
static inline void test_decomp_desc(hs_decomp_desc *dd, int ndims, const int global[3],
                                    const int procs[3], const int periodic[3]) {
  hs_decomp_desc_init(dd);
  dd->ndims = ndims;
  for (int a = 0; a < 3; a++) {
    dd->global[a] = global[a];
    if (procs) dd->procs[a] = procs[a];
    dd->periodic[a] = periodic[a];
  }
}

/* A small default decomposition (8 x 8 x 2) of MPI_COMM_WORLD, or NULL. */
static inline hs_decomp test_small_decomp(void) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.global[0] = dd.global[1] = 8;
  dd.global[2] = 2;
  hs_decomp d;
  return hs_decomp_create(MPI_COMM_WORLD, &dd, &d) == HS_OK ? d : NULL;
}

/* A decomposition of MPI_COMM_WORLD over ndims axes of global, periodic in x and y; aborts
 * with the library's message if it cannot be made. */
static inline hs_decomp test_periodic_decomp(int ndims, int gx, int gy, int gz) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.ndims = ndims;
  dd.global[0] = gx, dd.global[1] = gy, dd.global[2] = gz;
  dd.periodic[0] = dd.periodic[1] = 1;
  hs_decomp d = NULL;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    fprintf(stderr, "decomposition: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return d;
}

/* A plan description: depth per axis (NULL: the default), stencil, fields, transport spec. */
static inline void test_plan_desc(hs_plan_desc *pd, const int depth[3], hs_stencil stencil,
                                  int nfields, hs_field *fields, const char *spec) {
  hs_plan_desc_init(pd);
  for (int a = 0; depth && a < 3; a++) pd->depth[a] = depth[a];
  pd->stencil = stencil;
  pd->nfields = nfields;
  pd->fields = fields;
  pd->transport_name = spec;
}

/* Geometry a checker needs: the decomposition and what the plan swaps. */
typedef struct {
  int ndims;
  int local[3], offset[3], global[3], periodic[3];
  int depth[3];
  hs_stencil stencil;
  hs_oneway oneway;
  int oneway_axis;
  /* A region set's sides (bit (hx+1)*9 + (hy+1)*3 + hz+1 for halo side h); 0: every side. */
  uint32_t regions;
} tgeom;

static inline void tgeom_from(tgeom *g, hs_decomp d, const hs_plan_desc *pd) {
  memset(g, 0, sizeof *g);
  g->ndims = hs_decomp_ndims(d);
  for (int a = 0; a < 3; a++) {
    g->local[a] = a < g->ndims ? hs_decomp_local_extent(d, a) : 1;
    g->offset[a] = a < g->ndims ? hs_decomp_global_offset(d, a) : 0;
    g->global[a] = a < g->ndims ? hs_decomp_global_extent(d, a) : 1;
    g->periodic[a] = a < g->ndims ? hs_decomp_periodic(d, a) : 0;
    g->depth[a] = pd->depth[a];
  }
  g->stencil = pd->stencil;
  g->oneway = pd->oneway;
  g->oneway_axis = pd->oneway_axis;
}

/* Fill the interior with the values of swap s; optionally set every halo cell to SENTINEL. */
static inline void tfield_fill(const tfield *tf, void *data, const tgeom *g, int f, int s,
                               int reset_halo) {
  int i[3];
  for (i[0] = -tf->halo[0]; i[0] < g->local[0] + tf->halo[0]; i[0]++)
    for (i[1] = -tf->halo[1]; i[1] < g->local[1] + tf->halo[1]; i[1]++)
      for (i[2] = -tf->halo[2]; i[2] < g->local[2] + tf->halo[2]; i[2]++) {
        int interior = 1, gc[3];
        for (int a = 0; a < 3; a++) {
          if (i[a] < 0 || i[a] >= g->local[a]) interior = 0;
          gc[a] = g->offset[a] + i[a];
        }
        size_t k = tfield_index(tf, i);
        if (interior)
          tset(data, tf->type, k, cell_value(gc, f, s, tf->type));
        else if (reset_halo)
          tset(data, tf->type, k, SENTINEL);
      }
}

/* Expected value of local cell i after swap s: returns 1 and sets *want if the swap must
 * have written it (interior cells: their own value), 0 if it must be left untouched. */
static inline int expected(const tgeom *g, const int i[3], int f, int s, hs_type t,
                           int64_t *want) {
  int gc[3], outside = 0, interior = 1;
  for (int a = 0; a < 3; a++) {
    gc[a] = g->offset[a] + i[a];
    int lo = i[a] < 0, hi = i[a] >= g->local[a];
    if (lo || hi) {
      interior = 0;
      outside++;
      if (a >= g->ndims) return 0;
      int d = lo ? -i[a] : i[a] - g->local[a] + 1; /* 1..halo */
      if (d > g->depth[a]) return 0;
      if (g->oneway != HS_ONEWAY_NONE) {
        if (a != g->oneway_axis) return 0;
        if (g->oneway == HS_ONEWAY_LOWER && !hi) return 0;
        if (g->oneway == HS_ONEWAY_UPPER && !lo) return 0;
      }
      if (gc[a] < 0 || gc[a] >= g->global[a]) {
        if (!g->periodic[a]) return 0;
        gc[a] = (gc[a] + g->global[a]) % g->global[a];
      }
    }
  }
  if (!interior && g->stencil == HS_STENCIL_STAR && outside > 1) return 0;
  if (!interior && g->regions) {
    int b = 0;
    for (int a = 0; a < 3; a++) b = 3 * b + (i[a] < 0 ? 0 : i[a] >= g->local[a] ? 2 : 1);
    if (!(g->regions >> b & 1u)) return 0;
  }
  *want = cell_value(gc, f, s, t);
  return 1;
}

/* Check every cell of a field after swap s; prev_s is what an untouched halo cell may hold
 * (SENTINEL or an older swap's value is wrong only where the cell must be written).
 * Returns the number of wrong cells and prints the first few. */
static inline long tfield_check(const tfield *tf, const void *data, const tgeom *g, int f, int s,
                                const char *what, int rank, int untouched_sentinel) {
  long bad = 0;
  int i[3];
  for (i[0] = -tf->halo[0]; i[0] < g->local[0] + tf->halo[0]; i[0]++)
    for (i[1] = -tf->halo[1]; i[1] < g->local[1] + tf->halo[1]; i[1]++)
      for (i[2] = -tf->halo[2]; i[2] < g->local[2] + tf->halo[2]; i[2]++) {
        int64_t want = 0, got = tget(data, tf->type, tfield_index(tf, i));
        int must = expected(g, i, f, s, tf->type, &want);
        if (!must) {
          if (!untouched_sentinel) continue;
          want = SENTINEL;
        }
        if (got != want) {
          if (bad < 5)
            fprintf(stderr,
                    "[rank %d] %s: field %d swap %d cell (%d,%d,%d) global (%d,%d,%d): got %lld "
                    "want %lld%s\n",
                    rank, what, f, s, i[0], i[1], i[2], g->offset[0] + i[0],
                    g->offset[1] + i[1], g->offset[2] + i[2], (long long)got, (long long)want,
                    must ? "" : " (must stay untouched)");
          bad++;
        }
      }
  return bad;
}

/* Mappings of the core option remap=1's memfds in this process (lines of /proc/self/maps;
 * 0 where there is none). */
static inline int remap_mappings(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  int n = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "haloswap-remap")) n++;
  if (f) fclose(f);
  return n;
}

#endif
