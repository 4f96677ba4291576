/* Polling to completion: on every transport, and on its staged (staged=1) and swept
 * (HS_ORDER_SWEEP) variants, each swap is started and then driven by hs_swap_test alone, with
 * local work between the polls, until it reports done. At that point, before
 * hs_swap_complete, every halo cell the plan writes must hold the analytic value of the cell
 * it mirrors and every other halo cell its sentinel (tests/core/halo_check.h); complete must
 * then change nothing, and the statistics must count the test calls. A poll that never
 * reports done fails after --limit seconds (the swap is then completed, so nothing hangs).
 * The reverse exchange has no test call (hs_reverse_start / hs_reverse_complete only).
 * Usage: test_poll [--transport SPEC]... [--swaps N] [--limit SECONDS]
 *                  [--may-be-unusable NAME]...
 * Without --transport: every registered transport (shmem where HALOSWAP_SHMEM is set). */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include "halo_check.h"
#include "haloswap.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  int global[3], procs[3], periodic[3], depth[3];
  int nfields;
  int per_swap; /* odd swaps are given a second set of arrays */
  int hooks;    /* odd fields go through pack/unpack hooks */
} config;

/* Small grids: the polling is under test, not the sizes (test_halo covers those). Every rank
 * count of 1-9 decomposes them with every extent >= the depth. */
static const config configs[] = {
    /* MONC-like: x, y split, z whole, box, depth 2, mixed types and layouts; per-swap arrays
     * (field 0, odd swaps) and pack/unpack hooks (field 1) */
    {"xy-box-d2-hooks", {12, 10, 4}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, 2, 1, 1},
    /* every axis split, all periodic: up to 26 neighbours, the most stages to drive */
    {"3d-box-d1", {7, 6, 5}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 2, 0, 0},
};
/* The staged and swept variants run on the last configuration (the direct polling of the
 * others is the same code). */
enum { VAR_DIRECT, VAR_STAGED, VAR_SWEEP, NVAR };
static const char *const var_name[NVAR] = {"direct", "staged=1", "sweep"};

static double limit_s = 60; /* --limit: seconds one swap may poll */
static double work_sink;    /* the local work's result, so it is not optimised away */

/* A little computation between two polls, as an application overlaps its interior; every
 * 8th time it also gives up the core, as a program sharing cores with its neighbours must
 * (the launches are oversubscribed: a rank spinning through its time slice only delays the
 * neighbour it waits for). */
static void local_work(double *w, int n, long polls) {
  for (int i = 0; i < n; i++) w[i] = w[i] * 0.999 + 1.0;
  work_sink += w[n / 2];
  if (polls % 8 == 0) sched_yield();
}

typedef struct {
  long polls;         /* test calls, over every swap */
  double complete_s;  /* longest hs_swap_complete after done */
} poll_stats;

/* The spec of a variant: spec itself, or with staged=1 added to its options. */
static void variant_spec(const char *spec, int var, char *out, size_t n) {
  if (var == VAR_STAGED)
    snprintf(out, n, "%s%cstaged=1", spec, strchr(spec, ':') ? ',' : ':');
  else
    snprintf(out, n, "%s", spec);
}

/* Returns the wrong cells and failed checks over every rank (the same everywhere), or -1 if
 * the decomposition cannot be made at this rank count. */
static long run(const config *c, const char *spec, int var, int nswaps, poll_stats *ps) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs_decomp_desc dd;
  test_decomp_desc(&dd, 3, c->global, c->procs, c->periodic);
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) return -1;
  int local[3], nf = c->nfields;
  for (int a = 0; a < 3; a++) local[a] = hs_decomp_local_extent(d, a);
  tfield tf[4];
  tfield_hook hooks[4];
  hs_field fields[4];
  void *data[4], *alt[4], *given[4], *cur[4];
  static const hs_type types[4] = {HS_FLOAT64, HS_INT32, HS_FLOAT32, HS_INT64};
  static const hs_layout layouts[4] = {HS_LAYOUT_ZFAST, HS_LAYOUT_XFAST, HS_LAYOUT_STRIDED,
                                       HS_LAYOUT_ZFAST};
  for (int f = 0; f < nf; f++) {
    tfield_init(&tf[f], types[f], layouts[f], local, c->depth, 3);
    data[f] = calloc(tf[f].n, hs_type_size(types[f]));
    alt[f] = calloc(tf[f].n, hs_type_size(types[f]));
    fields[f] = hs_field_array(types[f], data[f], layouts[f], 0);
    for (int a = 0; a < 3; a++) {
      fields[f].halo[a] = tf[f].halo[a];
      fields[f].stride[a] = tf[f].stride[a];
    }
    if (c->hooks && f % 2 == 1) {
      hooks[f] = (tfield_hook){&tf[f], data[f]};
      fields[f].pack = tfield_hook_pack;
      fields[f].unpack = tfield_hook_unpack;
      fields[f].ctx = &hooks[f];
    }
  }
  char vspec[256];
  variant_spec(spec, var, vspec, sizeof vspec);
  hs_plan_desc pd;
  test_plan_desc(&pd, c->depth, HS_STENCIL_BOX, nf, fields, vspec);
  if (var == VAR_SWEEP) hs_plan_desc_set_order_sweep(&pd, 0, NULL);
  tgeom g;
  tgeom_from(&g, d, &pd);
  long bad = 0;
  enum { NWORK = 2048 };
  double *w = calloc(NWORK, sizeof *w);
  hs_plan p = NULL;
  if (hs_plan_create(d, &pd, &p) != HS_OK) {
    if (rank == 0)
      fprintf(stderr, "FAIL %s/%s on %s: plan creation: %s\n", c->name, var_name[var], spec,
              hs_error_message());
    bad = 1;
    goto out;
  }
  char what[400];
  for (int s = 0; s < nswaps && bad == 0; s++) {
    /* Hooks read the registered arrays: per-swap arrays only for fields without them. */
    int use_alt = c->per_swap && s % 2 == 1;
    for (int f = 0; f < nf; f++) {
      given[f] = use_alt && !fields[f].pack ? alt[f] : NULL;
      cur[f] = given[f] ? given[f] : data[f];
      tfield_fill(&tf[f], cur[f], &g, f, s, 1); /* every halo back to the sentinel */
    }
    void *const *arrays = use_alt ? given : NULL;
    snprintf(what, sizeof what, "%s/%s on %s, swap %d%s", c->name, var_name[var], spec, s,
             use_alt ? " (per-swap arrays)" : "");
    int rc = hs_swap_start(p, arrays), done = 0;
    double t0 = MPI_Wtime();
    long polls = 0;
    while (rc == HS_OK && !done) {
      rc = hs_swap_test(p, arrays, &done);
      polls++;
      if (done || rc != HS_OK) break;
      if (MPI_Wtime() - t0 > limit_s) break;
      local_work(w, NWORK, polls);
    }
    ps->polls += polls;
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] FAIL %s: %s\n", rank, what, hs_error_message());
      bad++;
    } else if (!done) {
      fprintf(stderr, "[rank %d] FAIL %s: hs_swap_test did not report done in %ld polls "
                      "(%.0f s)\n", rank, what, polls, limit_s);
      bad++;
    } else {
      /* Done means written: checked before complete. */
      char at[440];
      snprintf(at, sizeof at, "%s, at done", what);
      for (int f = 0; f < nf; f++) bad += tfield_check(&tf[f], cur[f], &g, f, s, at, rank, 1);
    }
    /* Always completed (a failed poll too), so no neighbour is left waiting. */
    double t1 = MPI_Wtime();
    int crc = hs_swap_complete(p, arrays);
    double tc = MPI_Wtime() - t1;
    if (done && tc > ps->complete_s) ps->complete_s = tc;
    if (crc != HS_OK && rc == HS_OK) {
      fprintf(stderr, "[rank %d] FAIL %s: complete after done: %s\n", rank, what,
              hs_error_message());
      bad++;
    }
    if (crc == HS_OK)
      for (int f = 0; f < nf; f++) bad += tfield_check(&tf[f], cur[f], &g, f, s, what, rank, 1);
    /* A registered array replaced for this swap is left alone (its halos: the sentinel
     * tfield_fill put there at the previous swap, then that swap's values). */
    for (int f = 0; f < nf; f++)
      if (given[f]) bad += tfield_check(&tf[f], data[f], &g, f, s - 1, "registered arrays untouched", rank, 1);
    bad = test_worst(bad);
  }
  if (bad == 0) {
    hs_plan_stats st;
    hs_plan_get_stats(p, &st);
    /* test time is part of exposed time, which is part of total (same clock, sums) */
    int ok = st.swaps == (uint64_t)nswaps && st.seconds_test > 0 &&
             st.seconds_test <= st.seconds_exposed + 1e-9 &&
             st.seconds_exposed <= st.seconds_total + 1e-6 &&
             st.seconds_exposed >= st.seconds_start + st.seconds_complete + st.seconds_test - 1e-9;
    if (!ok) {
      fprintf(stderr, "[rank %d] FAIL %s/%s on %s: stats swaps %llu (want %d), start %g, test "
                      "%g, complete %g, exposed %g, total %g\n", rank, c->name, var_name[var],
              spec, (unsigned long long)st.swaps, nswaps, st.seconds_start, st.seconds_test,
              st.seconds_complete, st.seconds_exposed, st.seconds_total);
      bad++;
    }
    bad = test_worst(bad);
  }
  if (hs_plan_free(&p) != HS_OK) bad++;
out:
  for (int f = 0; f < nf; f++) {
    free(data[f]);
    free(alt[f]);
  }
  free(w);
  hs_decomp_free(&d);
  return test_worst(bad);
}

int main(int argc, char **argv) {
  int rank, size;
  test_init(&argc, &argv, &rank, &size);
  test_opts o = {.nswaps = 3};
  for (int i = 1; i < argc; i++) {
    if (test_opt(argc, argv, &i, &o))
      continue;
    else if (!strcmp(argv[i], "--limit") && i + 1 < argc)
      limit_s = atof(argv[++i]);
    else
      return test_bad_arg("test_poll", argv[i]);
  }
  test_default_specs(&o, size, 64);
  int passed = 0, failed = 0, skipped = 0, unusable = 0;
  int nconf = (int)(sizeof configs / sizeof configs[0]);
  for (int t = 0; t < o.nspecs; t++) {
    const char *spec = o.specs[t];
    if (!test_transport_usable(spec, o.optional, o.noptional, &unusable, &failed)) continue;
    /* auto delegates and refuses staged=1 (its candidates carry it); its default candidates
     * include the staged ones, and it sweeps through the plan it chose. */
    int is_auto = !strncmp(spec, "auto", 4) && (spec[4] == 0 || spec[4] == ':');
    for (int c = 0; c < nconf; c++)
      for (int var = 0; var < NVAR; var++) {
        if ((is_auto && var == VAR_STAGED) || (var != VAR_DIRECT && c < nconf - 1)) continue;
        poll_stats ps = {0, 0};
        double t0 = MPI_Wtime();
        long bad = run(&configs[c], spec, var, o.nswaps, &ps);
        double secs = MPI_Wtime() - t0;
        if (bad < 0) {
          skipped++;
          if (rank == 0) printf("skip %s/%s on %s: no decomposition at %d ranks\n",
                                configs[c].name, var_name[var], spec, size);
          continue;
        }
        bad ? failed++ : passed++;
        long polls = 0;
        double cmax = 0;
        MPI_Reduce(&ps.polls, &polls, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&ps.complete_s, &cmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
          printf("%s %-15s %-8s on %-12s at %d ranks: %ld polls (most on a rank, %d swaps), "
                 "complete after done <= %.1f us; %.2f s with plan creation\n",
                 bad ? "FAIL" : "ok  ", configs[c].name, var_name[var], spec, size, polls,
                 o.nswaps, cmax * 1e6, secs);
      }
  }
  if (rank == 0)
    printf("test_poll at %d ranks:\n%d passed, %d failed, %d skipped, %d transports not usable "
           "here\n", size, passed, failed, skipped, unusable);
  if (work_sink < 0) printf("(unreachable)\n");
  MPI_Finalize();
  return test_exit_status(passed, failed, unusable, 1);
}
