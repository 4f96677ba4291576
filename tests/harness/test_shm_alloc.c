/* Fields allocated with hs_alloc (node-shared windows): halos must be exact on every
 * transport spec given, with registered arrays, with per-swap arrays that are also
 * hs_alloc'd, and with a plan that mixes hs_alloc'd and malloc'd fields (the shm transport
 * then falls back to its packed path). Also checks hs_free's error path.
 * --race injects seeded random sleeps before a rank writes its interior, between start and
 * complete, and after complete, so a rank that reads a neighbour's field too early (the
 * neighbour is still writing swap s) or lets its own field be overwritten too early (it
 * returns from complete while a neighbour still copies swap s) shows wrong cells.
 * Every swap is followed by a reverse exchange (sum): each written halo cell holds a
 * contribution (the holder's weight times a value of the cell and swap), and every owned
 * cell must end as its value plus the weighted contributions of all its halo copies (the
 * weights summed over all ranks once, before the swaps). Right after the reverse a rank sets
 * its halos to the sentinel, so an owner that reads a neighbour's halos before they hold
 * this swap's contributions, or after the neighbour returned, shows wrong cells.
 * Usage: test_shm_alloc [--transport SPEC]... [--swaps N] [--race] [--seed S] */
#define _POSIX_C_SOURCE 200809L
#include "halo_check.h"
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int race;
static uint64_t rng;

/* Sleep 0..400 us with probability 1/3 (race mode only). */
static void maybe_sleep(void) {
  if (!race) return;
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  uint64_t r = rng * 2685821657736338717ull;
  if (r % 3) return;
  struct timespec ts = {0, (long)((r >> 8) % 400) * 1000L};
  nanosleep(&ts, NULL);
}

typedef struct {
  const char *name;
  int global[3], periodic[3], depth[3];
  hs_stencil stencil;
  hs_layout layout;
  int nfields;
  int types;      /* cycle f64, f32, i32, i64 */
  int per_swap;   /* alternate with a second set of hs_alloc'd arrays */
  int one_malloc; /* field 0 comes from malloc, not hs_alloc */
} config;

static const config configs[] = {
    {"monc-box-d2", {14, 12, 8}, {1, 1, 0}, {2, 2, 0}, HS_STENCIL_BOX, HS_LAYOUT_ZFAST, 5, 0, 0, 0},
    {"brams-star-d1-xfast", {13, 11, 3}, {1, 1, 0}, {1, 1, 0}, HS_STENCIL_STAR, HS_LAYOUT_XFAST, 3, 1, 0, 0},
    {"walled-box-d3-mixed", {15, 14, 2}, {0, 1, 0}, {3, 3, 0}, HS_STENCIL_BOX, HS_LAYOUT_ZFAST, 4, 1, 0, 0},
    {"per-swap-alloc", {12, 10, 4}, {1, 1, 0}, {2, 2, 0}, HS_STENCIL_BOX, HS_LAYOUT_ZFAST, 3, 1, 1, 0},
    {"one-malloc-field", {12, 10, 4}, {1, 1, 0}, {1, 1, 0}, HS_STENCIL_BOX, HS_LAYOUT_XFAST, 3, 0, 0, 1},
};

/* The global cell a halo cell i mirrors, if the forward swap writes it (else 0). */
static int halo_source(const tgeom *g, const int i[3], int gc[3]) {
  int64_t unused, inside = 1;
  for (int a = 0; a < 3; a++) inside &= i[a] >= 0 && i[a] < g->local[a];
  if (inside || !expected(g, i, 0, 0, HS_FLOAT64, &unused)) return 0;
  for (int a = 0; a < 3; a++)
    gc[a] = ((g->offset[a] + i[a]) % g->global[a] + g->global[a]) % g->global[a];
  return 1;
}

static size_t gindex(const tgeom *g, const int gc[3]) {
  return ((size_t)gc[0] * (size_t)g->global[1] + (size_t)gc[1]) * (size_t)g->global[2] + (size_t)gc[2];
}

static int64_t weight(int rank) { return 1 + rank % 3; }
static int64_t contribution(const int gc[3], int f, int s) {
  return 1 + (gc[0] * 3 + gc[1] * 5 + gc[2] * 7 + f + s) % 5;
}

/* Every halo cell the forward swap writes: set to its contribution (set = 1) or to the
 * sentinel (set = 0). */
static void set_halos(const tfield *tf, void *data, const tgeom *g, int f, int s, int rank,
                      int set) {
  int i[3], gc[3];
  for (i[0] = -tf->halo[0]; i[0] < g->local[0] + tf->halo[0]; i[0]++)
    for (i[1] = -tf->halo[1]; i[1] < g->local[1] + tf->halo[1]; i[1]++)
      for (i[2] = -tf->halo[2]; i[2] < g->local[2] + tf->halo[2]; i[2]++)
        if (halo_source(g, i, gc))
          tset(data, tf->type, tfield_index(tf, i),
               set ? weight(rank) * contribution(gc, f, s) : SENTINEL);
}

/* After the reverse of swap s: every interior cell holds its value plus its contributions. */
static long check_reverse(const tfield *tf, const void *data, const tgeom *g, int f, int s,
                          const int64_t *wsum, const char *what, int rank) {
  long bad = 0;
  int i[3];
  for (i[0] = 0; i[0] < g->local[0]; i[0]++)
    for (i[1] = 0; i[1] < g->local[1]; i[1]++)
      for (i[2] = 0; i[2] < g->local[2]; i[2]++) {
        int gc[3];
        for (int a = 0; a < 3; a++) gc[a] = g->offset[a] + i[a];
        int64_t want =
            cell_value(gc, f, s, tf->type) + contribution(gc, f, s) * wsum[gindex(g, gc)];
        int64_t got = tget(data, tf->type, tfield_index(tf, i));
        if (got != want && bad++ < 5)
          fprintf(stderr, "[rank %d] %s: reverse of swap %d, field %d cell (%d,%d,%d): got %lld "
                          "want %lld\n", rank, what, s, f, i[0], i[1], i[2], (long long)got,
                  (long long)want);
      }
  return bad;
}

static long run(const config *c, const char *spec, int nswaps) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs_decomp_desc dd;
  test_decomp_desc(&dd, 3, c->global, NULL, c->periodic);
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) return 0; /* too many ranks */
  int local[3], halo[3];
  for (int a = 0; a < 3; a++) {
    local[a] = hs_decomp_local_extent(d, a);
    halo[a] = c->depth[a];
  }
  int nf = c->nfields;
  tfield *tf = calloc((size_t)nf, sizeof *tf);
  void **data = calloc((size_t)nf, sizeof *data), **alt = calloc((size_t)nf, sizeof *alt);
  hs_field *fields = calloc((size_t)nf, sizeof *fields);
  long bad = 0;
  for (int f = 0; f < nf; f++) {
    static const hs_type cyc[4] = {HS_FLOAT64, HS_FLOAT32, HS_INT32, HS_INT64};
    hs_type t = c->types ? cyc[f % 4] : HS_FLOAT64;
    tfield_init(&tf[f], t, c->layout, local, halo, 3);
    size_t bytes = tf[f].n * hs_type_size(t);
    if (c->one_malloc && f == 0)
      data[f] = calloc(tf[f].n, hs_type_size(t));
    else if (hs_alloc(d, bytes, &data[f]) != HS_OK) {
      fprintf(stderr, "[rank %d] hs_alloc: %s\n", rank, hs_error_message());
      bad++;
    }
    if (c->per_swap && hs_alloc(d, bytes, &alt[f]) != HS_OK) {
      fprintf(stderr, "[rank %d] hs_alloc: %s\n", rank, hs_error_message());
      bad++;
    }
    fields[f] = hs_field_array(t, data[f], c->layout, 0);
    for (int a = 0; a < 3; a++) fields[f].halo[a] = tf[f].halo[a];
  }
  hs_plan_desc pd;
  test_plan_desc(&pd, c->depth, c->stencil, nf, fields, spec);
  tgeom g;
  tgeom_from(&g, d, &pd);
  for (int f = 0; f < nf; f++) {
    tfield_fill(&tf[f], data[f], &g, f, 0, 1);
    if (alt[f]) tfield_fill(&tf[f], alt[f], &g, f, 0, 1);
  }
  /* The weights of every cell's halo copies, summed over all ranks (once: the race mode
   * runs no collective between swaps). */
  size_t ncells = (size_t)g.global[0] * (size_t)g.global[1] * (size_t)g.global[2];
  int64_t *wsum = calloc(ncells, sizeof *wsum), *wmine = calloc(ncells, sizeof *wmine);
  {
    int i[3], gc[3];
    for (i[0] = -halo[0]; i[0] < g.local[0] + halo[0]; i[0]++)
      for (i[1] = -halo[1]; i[1] < g.local[1] + halo[1]; i[1]++)
        for (i[2] = -halo[2]; i[2] < g.local[2] + halo[2]; i[2]++)
          if (halo_source(&g, i, gc)) wmine[gindex(&g, gc)] += weight(rank);
  }
  MPI_Allreduce(wmine, wsum, (int)ncells, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  free(wmine);
  hs_plan p = NULL;
  if (bad == 0 && hs_plan_create(d, &pd, &p) != HS_OK) {
    if (rank == 0) fprintf(stderr, "FAIL %s on %s: %s\n", c->name, spec, hs_error_message());
    bad++;
  }
  /* Race mode checks without a per-swap allreduce, which would keep the ranks in step. */
  for (int s = 0; p && s < nswaps && (race || bad == 0); s++) {
    int use_alt = c->per_swap && s % 2 == 1;
    void **cur = use_alt ? alt : data;
    maybe_sleep();
    for (int f = 0; f < nf; f++) tfield_fill(&tf[f], cur[f], &g, f, s, 0);
    int rc = hs_swap_start(p, use_alt ? alt : NULL);
    maybe_sleep();
    if (rc == HS_OK) rc = hs_swap_complete(p, use_alt ? alt : NULL);
    maybe_sleep();
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] %s on %s swap %d: %s\n", rank, c->name, spec, s,
              hs_error_message());
      bad++;
    }
    char what[128];
    snprintf(what, sizeof what, "%s/%s", c->name, spec);
    for (int f = 0; f < nf; f++) bad += tfield_check(&tf[f], cur[f], &g, f, s, what, rank, 1);
    /* the reverse of this swap (the interior still holds swap s's values) */
    for (int f = 0; f < nf; f++) set_halos(&tf[f], cur[f], &g, f, s, rank, 1);
    maybe_sleep();
    rc = hs_reverse_start(p, HS_OP_SUM, use_alt ? alt : NULL);
    maybe_sleep();
    if (rc == HS_OK) rc = hs_reverse_complete(p, use_alt ? alt : NULL);
    for (int f = 0; f < nf; f++) set_halos(&tf[f], cur[f], &g, f, s, rank, 0);
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] %s on %s reverse %d: %s\n", rank, c->name, spec, s,
              hs_error_message());
      bad++;
    }
    for (int f = 0; f < nf; f++) bad += check_reverse(&tf[f], cur[f], &g, f, s, wsum, what, rank);
    if (race) continue;
    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    bad = all;
  }
  if (p && hs_plan_free(&p) != HS_OK) bad++;
  for (int f = 0; f < nf; f++) {
    if (c->one_malloc && f == 0)
      free(data[f]);
    else if (data[f] && hs_free(d, data[f]) != HS_OK)
      bad++;
    if (alt[f] && hs_free(d, alt[f]) != HS_OK) bad++;
  }
  free(tf);
  free(data);
  free(alt);
  free(fields);
  free(wsum);
  hs_decomp_free(&d);
  long all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

/* hs_free of memory hs_alloc did not return fails on every rank, even if only one rank is
 * wrong, and frees nothing. */
static int check_errors(void) {
  int rank, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs_decomp d = test_small_decomp();
  if (!d) return 1;
  void *a = NULL;
  if (hs_alloc(d, 64, &a) != HS_OK || !a) bad++;
  int other;
  int rc = hs_free(d, rank == 0 ? (void *)&other : a);
  if (rc != HS_ERR_ARG || !strstr(hs_error_message(), "hs_free")) {
    fprintf(stderr, "[rank %d] hs_free of a foreign pointer: got %s '%s'\n", rank,
            hs_status_name(rc), hs_error_message());
    bad++;
  }
  if (hs_free(d, a) != HS_OK) bad++; /* still allocated: the failed call freed nothing */
  if (hs_alloc(d, 16, NULL) != HS_ERR_ARG) bad++;
  /* Zero bytes is a valid request (a rank with nothing to hold). */
  void *z = NULL;
  if (hs_alloc(d, rank % 2 ? 0 : 32, &z) != HS_OK || !z) bad++;
  if (hs_free(d, z) != HS_OK) bad++;
  hs_decomp_free(&d);
  return (int)test_worst(bad);
}

int main(int argc, char **argv) {
  int rank, size;
  test_init(&argc, &argv, &rank, &size);
  const char *specs[16];
  int nspecs = 0, nswaps = 4;
  uint64_t seed = 0;
  for (int i = 1; i < argc; i++) {
    if (test_arg(argc, argv, &i, specs, &nspecs, 16, &nswaps))
      continue;
    else if (!strcmp(argv[i], "--race"))
      race = 1;
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else
      return test_bad_arg("test_shm_alloc", argv[i]);
  }
  if (nspecs == 0) specs[nspecs++] = "shm";
  rng = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1) + seed * 0xbf58476d1ce4e5b9ull;
  if (!rng) rng = 1; /* xorshift state must not be 0 */
  int passed = 0, failed = 0;
  if (check_errors()) {
    failed++;
    if (rank == 0) printf("FAIL hs_alloc/hs_free error paths\n");
  } else {
    passed++;
  }
  for (int t = 0; t < nspecs; t++)
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
      long bad = run(&configs[c], specs[t], nswaps);
      if (bad) failed++;
      else passed++;
      if (rank == 0)
        printf("%s %-22s on %-24s at %d ranks (%ld wrong cells)\n", bad ? "FAIL" : "ok  ",
               configs[c].name, specs[t], size, bad);
    }
  if (rank == 0) printf("test_shm_alloc at %d ranks: %d passed, %d failed\n", size, passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
