/* Race hunting: many swaps in which every halo value encodes the swap number, with seeded
 * random delays injected before start, between start and complete, after complete (before the
 * halo is checked), and inside the pack and unpack of a hook field, on random ranks. A stale
 * read (data of swap s-1), an early read (before the neighbour's data arrived) or an overwrite
 * by a neighbour that raced ahead (data of swap s+1) is caught at the exact cell.
 *
 * For every transport spec and two geometries, one plan runs blocks of 4 swaps alternately in
 * two phases:
 *  random      random delays at every point on every rank;
 *  race-ahead  the odd ranks are slow: they sleep inside the unpack of the hook field (field 0,
 *              the first section read from the receive buffer / window in complete) on odd
 *              swaps and inside its pack (in start) on even swaps, and again after complete;
 *              the even ranks never sleep and race into the next swap's puts or gets while
 *              their neighbours are still unpacking or packing.
 *
 * Usage: test_race [--transport SPEC]... [--swaps N] [--seed S] [--soak] [--verbose]
 *                  [--expect-unavailable]
 * Without --transport every registered transport runs with its defaults. --soak runs 50 times
 * as many swaps with longer delays. --expect-unavailable checks instead that plan creation
 * fails on every rank with HS_ERR_UNAVAILABLE and a message naming the transport (run it where
 * the MPI library cannot create windows, e.g. Open MPI with OMPI_MCA_btl=self,tcp). */
#define _POSIX_C_SOURCE 200809L
#include "halo_check.h"
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const char *name;
  int global[3], procs[3], periodic[3], depth[3];
  hs_stencil stencil;
  hs_type types[3];
  hs_layout layouts[3];
} geometry;

/* Field 0 always goes through pack/unpack hooks: that is where delays inside pack and unpack
 * are injected. */
static const geometry geoms[] = {
    {"periodic-box-d2", {8, 7, 3}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, HS_STENCIL_BOX,
     {HS_INT32, HS_FLOAT64, HS_FLOAT32}, {HS_LAYOUT_ZFAST, HS_LAYOUT_ZFAST, HS_LAYOUT_XFAST}},
    {"3d-star-walled-x", {6, 6, 6}, {0, 0, 0}, {0, 1, 1}, {1, 1, 1}, HS_STENCIL_STAR,
     {HS_FLOAT64, HS_INT64, HS_FLOAT64}, {HS_LAYOUT_XFAST, HS_LAYOUT_XFAST, HS_LAYOUT_ZFAST}},
};
#define NFIELDS 3

/* ---------------------------------------------------------------- delays */
typedef struct {
  uint64_t rng;
  double prob;        /* chance of a delay at each point */
  int max_us;         /* random delays are 0..max_us */
  int pack_us, unpack_us; /* forced delay inside the next pack / unpack hook call (0: none) */
  int in_start;           /* the forced pack delay is for the transport's pack, in start */
} delays;

static uint64_t rnd(delays *d) { /* xorshift64* */
  d->rng ^= d->rng >> 12;
  d->rng ^= d->rng << 25;
  d->rng ^= d->rng >> 27;
  return d->rng * 2685821657736338717ull;
}

static void sleep_us(int us) {
  if (us <= 0) return;
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void maybe_delay(delays *d) {
  if (d->prob <= 0) return;
  if ((double)(rnd(d) % 1000000) / 1e6 < d->prob)
    sleep_us((int)(rnd(d) % (uint64_t)(d->max_us + 1)));
}

/* ---------------------------------------------------------------- hook field */
typedef struct {
  const tfield *tf;
  void *data;
  delays *dl;
  int local[3], procs[3];
} hook_ctx;

/* A halo box filled from this rank itself (periodic wrap onto a whole axis): the core's self
 * copy, not a read of received data. */
static int from_self(const hook_ctx *h, const hs_region *r) {
  for (int a = 0; a < 3; a++) {
    int side = r->lo[a] < 0 ? -1 : (r->lo[a] >= h->local[a] ? 1 : 0);
    if (side != 0 && h->procs[a] > 1) return 0;
  }
  return 1;
}

static void hook_pack(void *ctx, const hs_region *r, void *buf) {
  hook_ctx *h = ctx;
  if (h->dl->pack_us && h->dl->in_start) { /* part of the data is not in buf while we sleep */
    sleep_us(h->dl->pack_us);
    h->dl->pack_us = 0;
  } else
    maybe_delay(h->dl);
  tfield_box_copy(h->tf, h->data, r, buf, 1);
}

static void hook_unpack(void *ctx, const hs_region *r, const void *buf) {
  hook_ctx *h = ctx;
  if (h->dl->unpack_us && !from_self(h, r)) { /* buf (maybe a window) is read after the sleep */
    sleep_us(h->dl->unpack_us);
    h->dl->unpack_us = 0;
  } else
    maybe_delay(h->dl);
  tfield_box_copy(h->tf, h->data, r, (void *)buf, 0);
}

/* ---------------------------------------------------------------- one run */
typedef struct {
  int swaps, soak, verbose;
  unsigned long seed;
} options;

/* Returns wrong cells + failed calls, summed over ranks. Only one collective per run (at the
 * end): per-swap collectives would keep the ranks in step and hide races. */
static long run(const geometry *gm, const char *spec, const options *o) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hs_decomp_desc dd;
  test_decomp_desc(&dd, 3, gm->global, gm->procs, gm->periodic);
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    if (rank == 0 && o->verbose) printf("  skip %s: %s\n", gm->name, hs_error_message());
    return 0;
  }
  int local[3];
  for (int a = 0; a < 3; a++) local[a] = hs_decomp_local_extent(d, a);
  int thin = 0, any_thin = 0;
  for (int a = 0; a < 3; a++) thin |= local[a] < gm->depth[a];
  MPI_Allreduce(&thin, &any_thin, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_thin) { /* too many ranks for this grid: skipped on every rank */
    hs_decomp_free(&d);
    return 0;
  }
  delays dl;
  memset(&dl, 0, sizeof dl);
  dl.rng = (o->seed + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)rank + 1) * 0xD1B54A32D192ED03ull ^
           (uint64_t)(gm - geoms) * 0x94D049BB133111EBull;
  if (!dl.rng) dl.rng = 1;
  dl.max_us = o->soak ? 3000 : 800;
  int slow_us = o->soak ? 8000 : 3000;

  tfield tf[NFIELDS];
  void *data[NFIELDS];
  hs_field fields[NFIELDS];
  hook_ctx hooks[NFIELDS];
  int halo[3] = {gm->depth[0], gm->depth[1], gm->depth[2]};
  for (int f = 0; f < NFIELDS; f++) {
    tfield_init(&tf[f], gm->types[f], gm->layouts[f], local, halo, 3);
    data[f] = calloc(tf[f].n, hs_type_size(gm->types[f]));
    fields[f] = hs_field_array(gm->types[f], data[f], gm->layouts[f], 0);
    for (int a = 0; a < 3; a++) fields[f].halo[a] = halo[a];
    if (f == 0) {
      hooks[f].tf = &tf[f];
      hooks[f].data = data[f];
      hooks[f].dl = &dl;
      for (int a = 0; a < 3; a++) {
        hooks[f].local[a] = local[a];
        hooks[f].procs[a] = hs_decomp_procs(d, a);
      }
      fields[f].pack = hook_pack;
      fields[f].unpack = hook_unpack;
      fields[f].ctx = &hooks[f];
    }
  }
  hs_plan_desc pd;
  test_plan_desc(&pd, gm->depth, gm->stencil, NFIELDS, fields, spec);
  tgeom g;
  tgeom_from(&g, d, &pd);
  for (int f = 0; f < NFIELDS; f++) tfield_fill(&tf[f], data[f], &g, f, 0, 1);
  long bad = 0;
  hs_plan p;
  if (hs_plan_create(d, &pd, &p) != HS_OK) {
    if (rank == 0) fprintf(stderr, "FAIL %s on %s: plan creation: %s\n", gm->name, spec,
                           hs_error_message());
    bad = 1;
  } else {
    int nswaps = o->swaps * (o->soak ? 50 : 1);
    char what[200];
    for (int s = 0; s < nswaps; s++) {
      int ahead = (s / 4) % 2 == 1, slow = ahead && rank % 2 == 1;
      dl.prob = ahead ? 0.0 : 0.15;
      snprintf(what, sizeof what, "%s/%s/%s", ahead ? "race-ahead" : "random", gm->name, spec);
      for (int f = 0; f < NFIELDS; f++) tfield_fill(&tf[f], data[f], &g, f, s, 0);
      if (slow) {
        if (s % 2 == 0) dl.pack_us = slow_us;
        else dl.unpack_us = slow_us;
      }
      maybe_delay(&dl);
      dl.in_start = 1;
      int rc = hs_swap_start(p, NULL);
      dl.in_start = 0;
      maybe_delay(&dl);
      if (rc == HS_OK) rc = hs_swap_complete(p, NULL);
      if (rc != HS_OK) {
        fprintf(stderr, "[rank %d] FAIL %s swap %d: %s\n", rank, what, s, hs_error_message());
        bad++;
        break; /* neighbours will time out: the test fails either way */
      }
      dl.pack_us = dl.unpack_us = 0;
      /* Late writes into my halo (a put or get still landing) show up after a pause. */
      if (slow) sleep_us(slow_us / 3);
      maybe_delay(&dl);
      for (int f = 0; f < NFIELDS; f++) {
        long b = tfield_check(&tf[f], data[f], &g, f, s, what, rank, 1);
        if (b && bad < 1000) bad += b;
      }
    }
    if (hs_plan_free(&p) != HS_OK) bad++;
  }
  for (int f = 0; f < NFIELDS; f++) free(data[f]);
  hs_decomp_free(&d);
  long all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/* Plan creation must fail cleanly, the same way on every rank. */
static int expect_unavailable(const char *spec) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs_decomp d = test_small_decomp();
  if (!d) return 1;
  int local[3], halo[3] = {1, 1, 0};
  for (int a = 0; a < 3; a++) local[a] = hs_decomp_local_extent(d, a);
  tfield tf;
  tfield_init(&tf, HS_FLOAT64, HS_LAYOUT_ZFAST, local, halo, 3);
  double *x = calloc(tf.n, sizeof *x);
  hs_field f = hs_field_array(HS_FLOAT64, x, HS_LAYOUT_ZFAST, 1);
  f.halo[2] = 0;
  hs_plan_desc pd;
  test_plan_desc(&pd, NULL, HS_STENCIL_BOX, 1, &f, spec);
  hs_plan p = NULL;
  int rc = hs_plan_create(d, &pd, &p);
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
  int ok = rc == HS_ERR_UNAVAILABLE && p == NULL && strstr(hs_error_message(), name) != NULL;
  if (!ok)
    fprintf(stderr, "[rank %d] %s: want HS_ERR_UNAVAILABLE naming %s, got %s: '%s'\n", rank, spec,
            name, hs_status_name(rc), hs_error_message());
  else if (rank == 0)
    printf("ok   %s fails cleanly: %s\n", spec, hs_error_message());
  if (p) hs_plan_free(&p);
  free(x);
  hs_decomp_free(&d);
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return !all;
}

int main(int argc, char **argv) {
  int rank, size;
  test_init(&argc, &argv, &rank, &size);
  const char *specs[64];
  int nspecs = 0, want_unavailable = 0;
  options o = {30, 0, 0, 12345};
  for (int i = 1; i < argc; i++) {
    if (test_arg(argc, argv, &i, specs, &nspecs, 64, &o.swaps))
      continue;
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      o.seed = strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--soak"))
      o.soak = 1;
    else if (!strcmp(argv[i], "--verbose"))
      o.verbose = 1;
    else if (!strcmp(argv[i], "--expect-unavailable"))
      want_unavailable = 1;
    else {
      if (rank == 0)
        fprintf(stderr, "test_race: unknown argument '%s'\nusage: test_race [--transport SPEC]... "
                        "[--swaps N] [--seed S] [--soak] [--verbose] [--expect-unavailable]\n",
                argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  if (o.swaps < 1) o.swaps = 1;
  if (nspecs == 0)
    for (int t = 0; t < hs_transport_count() && nspecs < 64; t++)
      if (test_default_transport(hs_transport_name(t))) specs[nspecs++] = hs_transport_name(t);
  int passed = 0, failed = 0;
  for (int t = 0; want_unavailable && t < nspecs; t++) {
    if (expect_unavailable(specs[t])) failed++;
    else passed++;
  }
  int unusable = 0;
  for (int t = 0; !want_unavailable && t < nspecs; t++) {
    if (!test_transport_usable(specs[t], NULL, 0, &unusable, &failed)) continue;
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++) {
      double t0 = MPI_Wtime();
      long bad = run(&geoms[gi], specs[t], &o);
      if (bad) failed++;
      else passed++;
      if (rank == 0 && (bad || o.verbose))
        printf("%s %-18s on %-40s at %d ranks (%ld wrong, %.2f s)\n", bad ? "FAIL" : "ok  ",
               geoms[gi].name, specs[t], size, bad, MPI_Wtime() - t0);
    }
  }
  if (rank == 0)
    printf("test_race at %d ranks, seed %lu, %d swaps%s: %d passed, %d failed, %d transports "
           "not usable here\n", size, o.seed, o.swaps, o.soak ? " x50 (soak)" : "", passed, failed,
           unusable);
  MPI_Finalize();
  return test_exit_status(passed, failed, unusable, 1);
}
