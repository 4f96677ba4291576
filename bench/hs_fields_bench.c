/* hs_fields_bench: the cost of the reverse exchange and of mixed-depth plans, per transport,
 * measured interleaved in one launch (issue 11's performance criteria):
 *   forward   one swap of F fields at depth D (MONC case: local 16x16x256, 30 fields, D 2, box)
 *   reverse   hs_reverse(HS_OP_SUM) of the same plan               -> ratio reverse / forward
 *   mixed     one plan with half the fields at depth D and half at depth D-1 (per-field depth)
 *   separate  the same two halves swapped by two plans, one after the other
 *                                                                   -> ratio mixed / separate
 * Metric: per repetition each method runs `swaps` timed operations; its time is the maximum
 * over ranks of the mean per operation; reported: the median over repetitions (--stat min:
 * the fastest repetition, steadier on a machine shared with other work).
 * With --orders, the combine orders instead (docs/api.md, "Combine order"): forward and
 * reverse of the plan in the canonical order, in EPIC's offset order and as a sweep (x, y),
 *                                                       -> ratios to the canonical plan's
 * Fields come from malloc, or with --alloc hs from hs_alloc (node-shared: shm's one-copy path).
 * Usage: hs_fields_bench [--local x,y,z] [--fields F] [--depth D] [--swaps N] [--reps R]
 *                        [--alloc hs|malloc] [--stat median|min] [--transport SPEC]... [--quiet]
 *                        [--orders] */
#include "bench_memory.h"
#include "haloswap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NM 6 /* methods per mode: 4 (depths), 6 (--orders) */

/* The plans of one transport and what each method runs. */
typedef struct {
  int orders;
  hs_plan p[4]; /* depths: all, mixed, even, odd; orders: canonical, offsets, sweep */
} bplans;

static void run_method(const bplans *b, int m) {
  if (b->orders) {
    if (m % 2) hs_reverse(b->p[m / 2], HS_OP_SUM, NULL);
    else hs_swap(b->p[m / 2], NULL);
  } else if (m == 0) hs_swap(b->p[0], NULL);
  else if (m == 1) hs_reverse(b->p[0], HS_OP_SUM, NULL);
  else if (m == 2) hs_swap(b->p[1], NULL);
  else {
    hs_swap(b->p[2], NULL);
    hs_swap(b->p[3], NULL);
  }
}

static const int epic_order[8][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0},
                                     {1, 1, 0},  {1, -1, 0}, {-1, -1, 0}, {-1, 1, 0}};

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int parse3(const char *s, int v[3]) { return sscanf(s, "%d,%d,%d", &v[0], &v[1], &v[2]) == 3; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int local[3] = {16, 16, 256}, nf = 30, depth = 2, swaps = 20, reps = 15, quiet = 0, nspec = 0;
  int use_hs = 0, use_min = 0, orders = 0;
  const char *specs[32];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--local") && i + 1 < argc && parse3(argv[i + 1], local)) i++;
    else if (!strcmp(argv[i], "--fields") && i + 1 < argc) nf = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--depth") && i + 1 < argc) depth = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--swaps") && i + 1 < argc) swaps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--transport") && i + 1 < argc && nspec < 32) specs[nspec++] = argv[++i];
    else if (!strcmp(argv[i], "--quiet")) quiet = 1;
    else if (!strcmp(argv[i], "--orders")) orders = 1;
    else if (!strcmp(argv[i], "--alloc") && i + 1 < argc &&
             (!strcmp(argv[i + 1], "hs") || !strcmp(argv[i + 1], "malloc")))
      use_hs = !strcmp(argv[++i], "hs");
    else if (!strcmp(argv[i], "--stat") && i + 1 < argc &&
             (!strcmp(argv[i + 1], "median") || !strcmp(argv[i + 1], "min")))
      use_min = !strcmp(argv[++i], "min");
    else {
      if (rank == 0) fprintf(stderr, "hs_fields_bench: unknown or bad argument '%s'\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  int deepest = local[0] < local[1] ? local[0] : local[1];
  if (nf < 2 || depth < 2 || depth > deepest || swaps < 1 || reps < 1) {
    if (rank == 0)
      fprintf(stderr, "hs_fields_bench: need --fields >= 2, --depth 2..%d (the local extent)\n",
              deepest);
    MPI_Finalize();
    return 2;
  }
  if (nspec == 0)
    for (int t = 0; t < hs_transport_count() && nspec < 32; t++) {
      char why[256];
      if (!strcmp(hs_transport_name(t), "auto")) continue; /* it runs one of the others */
      if (hs_transport_available(MPI_COMM_WORLD, hs_transport_name(t), why, sizeof why) != HS_OK) {
        if (rank == 0 && !quiet) printf("# skip %s: %s\n", hs_transport_name(t), why);
        continue;
      }
      specs[nspec++] = hs_transport_name(t);
    }
  /* MONC: x and y split, z whole; the global grid is the local one times the process grid */
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  dd.global[0] = local[0] * dims[0];
  dd.global[1] = local[1] * dims[1];
  dd.global[2] = local[2];
  dd.procs[0] = dims[0];
  dd.procs[1] = dims[1];
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    if (rank == 0) fprintf(stderr, "hs_fields_bench: %s\n", hs_error_message());
    MPI_Finalize();
    return 1;
  }
  size_t n = (size_t)(local[0] + 2 * depth) * (size_t)(local[1] + 2 * depth) * (size_t)local[2];
  double **data = malloc((size_t)nf * sizeof *data);
  hs_field *all = calloc((size_t)nf, sizeof *all), *mixed = calloc((size_t)nf, sizeof *mixed);
  for (int f = 0; f < nf; f++) {
    if (!use_hs) {
      data[f] = malloc(n * sizeof(double));
    } else if (hs_alloc(d, n * sizeof(double), (void **)&data[f]) != HS_OK) {
      if (rank == 0) fprintf(stderr, "hs_fields_bench: hs_alloc: %s\n", hs_error_message());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < n; i++) data[f][i] = (double)(i % 97) * 0.5;
    all[f] = hs_field_array(HS_FLOAT64, data[f], HS_LAYOUT_ZFAST, depth);
    mixed[f] = all[f];
    if (f % 2) { /* MONC pressure-like: depth D-1 inside halo-D arrays */
      hs_field_set_depth(&mixed[f], 0, depth - 1, depth - 1);
      hs_field_set_depth(&mixed[f], 1, depth - 1, depth - 1);
    }
  }
  /* the two halves as separate plans: even fields at D, odd fields at D-1 */
  int nev = (nf + 1) / 2, nod = nf / 2;
  hs_field *ev = calloc((size_t)nev, sizeof *ev), *od = calloc((size_t)nod, sizeof *od);
  for (int f = 0; f < nf; f++) {
    if (f % 2) od[f / 2] = all[f];
    else ev[f / 2] = all[f];
  }
  if (rank == 0)
    printf("# hs_fields_bench: %d ranks (%d x %d), local %dx%dx%d, %d float64 fields from %s, "
           "depth %d (%s), box; %s over %d reps of %d ops; microseconds per op\n", size,
           dims[0], dims[1], local[0], local[1], local[2], nf, use_hs ? "hs_alloc" : "malloc",
           depth,
           orders ? "combine orders: canonical, EPIC's offsets, sweep x,y"
                  : "mixed: half at depth - 1",
           use_min ? "minimum" : "median", reps, swaps);
  int nm = orders ? 6 : 4;
  if (rank == 0 && orders)
    printf("%-14s %9s %9s %9s %9s %9s %9s  %s\n", "transport", "fwd", "rev", "fwd-offs",
           "rev-offs", "fwd-sweep", "rev-sweep",
           "ratios to canonical: fwd, rev offsets; fwd, rev sweep");
  else if (rank == 0)
    printf("%-14s %10s %10s %8s %10s %10s %8s\n", "transport", "forward", "reverse", "rev/fwd",
           "mixed", "separate", "mix/sep");
  double *times = malloc((size_t)reps * NM * sizeof *times);
  for (int t = 0; t < nspec; t++) {
    hs_plan_desc pd;
    hs_plan_desc_init(&pd);
    pd.depth[0] = pd.depth[1] = depth;
    pd.transport_name = specs[t];
    bplans b = {orders, {NULL, NULL, NULL, NULL}};
    pd.nfields = nf;
    pd.fields = all;
    int rc = hs_plan_create(d, &pd, &b.p[0]);
    if (orders) {
      hs_plan_desc_set_order_offsets(&pd, 8, &epic_order[0][0]);
      if (rc == HS_OK) rc = hs_plan_create(d, &pd, &b.p[1]);
      hs_plan_desc_set_order_sweep(&pd, 0, NULL);
      if (rc == HS_OK) rc = hs_plan_create(d, &pd, &b.p[2]);
    } else {
      pd.fields = mixed;
      if (rc == HS_OK) rc = hs_plan_create(d, &pd, &b.p[1]);
      pd.nfields = nev;
      pd.fields = ev;
      if (rc == HS_OK) rc = hs_plan_create(d, &pd, &b.p[2]);
      pd.nfields = nod;
      pd.fields = od;
      pd.depth[0] = pd.depth[1] = depth - 1;
      if (rc == HS_OK) rc = hs_plan_create(d, &pd, &b.p[3]);
    }
    if (rc != HS_OK) {
      if (rank == 0) printf("%-14s plan creation failed: %s\n", specs[t], hs_error_message());
      for (int k = 0; k < 4; k++) hs_plan_free(&b.p[k]);
      continue;
    }
    for (int w = 0; w < 3; w++) /* warm-up: buffers, datatypes, windows */
      for (int m = 0; m < nm; m++) run_method(&b, m);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    double t0 = 0;
    for (int r = 0; r < reps; r++) {
      /* A new order each repetition (a seeded shuffle, the same on every rank): a rotation
       * kept each method behind the same predecessor, whose cache state its first
       * operation inherited. */
      int order[NM];
      for (int k = 0; k < nm; k++) order[k] = k;
      for (int k = nm - 1; k > 0; k--) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((seed >> 33) % (uint64_t)(k + 1)), x = order[k];
        order[k] = order[j];
        order[j] = x;
      }
      for (int k = 0; k < nm; k++) {
        int m = order[k];
        for (int s = 0; s <= swaps; s++) { /* one untimed operation first (no petsc here) */
          if (s == 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
          }
          run_method(&b, m);
        }
        double mine = (MPI_Wtime() - t0) / swaps, most;
        MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        times[m * reps + r] = most;
      }
    }
    double med[NM];
    for (int m = 0; m < nm; m++) {
      qsort(times + m * reps, (size_t)reps, sizeof(double), cmp_d);
      med[m] = times[m * reps + (use_min ? 0 : reps / 2)] * 1e6;
    }
    if (rank == 0 && orders)
      printf("%-14s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f  %.2f %.2f; %.2f %.2f\n", specs[t],
             med[0], med[1], med[2], med[3], med[4], med[5], med[2] / med[0], med[3] / med[1],
             med[4] / med[0], med[5] / med[1]);
    else if (rank == 0)
      printf("%-14s %10.1f %10.1f %8.2f %10.1f %10.1f %8.2f\n", specs[t], med[0], med[1],
             med[1] / med[0], med[2], med[3], med[2] / med[3]);
    for (int k = 0; k < 4; k++) hs_plan_free(&b.p[k]);
  }
  for (int f = 0; f < nf; f++) bench_field_free(d, use_hs, data[f]);
  free(data);
  free(all);
  free(mixed);
  free(ev);
  free(od);
  free(times);
  hs_decomp_free(&d);
  MPI_Finalize();
  return 0;
}
