/* Communication time per swap of every RMA variant as a ratio to p2p on the MONC case of
 * seed 004 (local 16x16x256 per rank, z fastest, depth 2, box stencil, 30 float64 fields,
 * z whole, periodic x and y). All plans share the fields and run interleaved, repetition by
 * repetition, in a rotating order; reported: median over repetitions with min-max, of the
 * time per swap (start + complete, slowest rank) and of its ratio to p2p in the same
 * repetition.
 * Usage: bench_rma [--reps R] [--swaps K] [--transport SPEC]... (default: p2p + every variant) */
#include "app_common.h"
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NF 30
#define MAXSPEC 32

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void stats3(double *v, int n, double *med, double *lo, double *hi) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  *lo = v[0];
  *hi = v[n - 1];
  *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = 15, swaps = 40, nspec = 0;
  const char *specs[MAXSPEC];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--swaps") && i + 1 < argc) swaps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--transport") && i + 1 < argc && nspec < MAXSPEC)
      specs[nspec++] = argv[++i];
    else {
      if (rank == 0) fprintf(stderr, "bench_rma: unknown argument '%s'\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (swaps < 1) swaps = 1;
  if (nspec == 0) {
    static const char *const defaults[] = {
        "p2p", "rma-fence", "rma-fence:epoch=naive", "rma-fence:dtype=1",
        "rma-fence:drive=get", "rma-fence:drive=get,dtype=1", "rma-pscw",
        "rma-pscw:epoch=naive", "rma-pscw:dtype=1", "rma-passive", "rma-passive:epoch=naive",
        "rma-passive:notify=ibarrier", "rma-passive:epoch=naive,notify=ibarrier",
        "rma-passive:dtype=1"};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) specs[nspec++] = defaults[i];
  }
  if (strcmp(specs[0], "p2p") != 0) {
    if (rank == 0) fprintf(stderr, "bench_rma: the first --transport must be p2p (the baseline)\n");
    MPI_Finalize();
    return 2;
  }
  /* MONC: 16x16x256 per rank; ranks spread over x and y. */
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  dd.procs[0] = dims[0];
  dd.procs[1] = dims[1];
  dd.procs[2] = 1;
  dd.global[0] = 16 * dims[0];
  dd.global[1] = 16 * dims[1];
  dd.global[2] = 256;
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    if (rank == 0) fprintf(stderr, "bench_rma: %s\n", hs_error_message());
    MPI_Finalize();
    return 1;
  }
  size_t n = (size_t)(16 + 4) * (16 + 4) * 256;
  hs_field fields[NF];
  double *data[NF];
  for (int f = 0; f < NF; f++) {
    data[f] = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) data[f][i] = (double)(i + (size_t)f);
    fields[f] = hs_field_array(HS_FLOAT64, data[f], HS_LAYOUT_ZFAST, 2);
    fields[f].halo[2] = 0;
  }
  hs_plan_desc pd;
  app_plan_desc_xy(&pd, 2, HS_STENCIL_BOX, NF, fields, NULL);
  hs_plan plans[MAXSPEC];
  for (int s = 0; s < nspec; s++) {
    pd.transport_name = specs[s];
    if (hs_plan_create(d, &pd, &plans[s]) != HS_OK) {
      if (rank == 0) fprintf(stderr, "bench_rma: %s: %s\n", specs[s], hs_error_message());
      MPI_Finalize();
      return 1;
    }
    for (int w = 0; w < 5; w++) hs_swap(plans[s], NULL); /* warm-up */
  }
  double *t = calloc((size_t)(nspec * reps), sizeof *t);
  for (int r = 0; r < reps; r++)
    for (int j = 0; j < nspec; j++) {
      int s = (j + r) % nspec; /* rotate the order so no variant always follows another */
      MPI_Barrier(MPI_COMM_WORLD);
      hs_plan_reset_stats(plans[s]);
      for (int k = 0; k < swaps; k++) hs_swap(plans[s], NULL);
      hs_plan_stats st;
      hs_plan_get_stats(plans[s], &st);
      double mine = (st.seconds_start + st.seconds_complete) / (double)swaps, worst;
      MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t[s * reps + r] = worst;
    }
  if (rank == 0) {
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, "\n,")] = 0;
    hs_plan_stats st;
    hs_plan_get_stats(plans[0], &st);
    printf("# MONC case: %d ranks, local 16x16x256 z-fast, depth 2, box, %d float64 fields, "
           "%.2f MB sent per rank per swap; %s\n# %d reps x %d swaps, interleaved; median "
           "[min-max]\n",
           size, NF, (double)st.bytes_sent_per_swap / 1e6, mpi, reps, swaps);
    printf("%-40s %24s %24s\n", "transport", "ms per swap", "ratio to p2p");
    double *v = malloc((size_t)reps * sizeof *v);
    for (int s = 0; s < nspec; s++) {
      double med, lo, hi, rmed, rlo, rhi;
      for (int r = 0; r < reps; r++) v[r] = t[s * reps + r] * 1e3;
      stats3(v, reps, &med, &lo, &hi);
      for (int r = 0; r < reps; r++) v[r] = t[s * reps + r] / t[r];
      stats3(v, reps, &rmed, &rlo, &rhi);
      printf("%-40s %7.3f [%6.3f-%7.3f] %7.2f [%5.2f-%6.2f]\n", specs[s], med, lo, hi, rmed, rlo,
             rhi);
    }
    free(v);
  }
  for (int s = 0; s < nspec; s++) hs_plan_free(&plans[s]);
  for (int f = 0; f < NF; f++) free(data[f]);
  free(t);
  hs_decomp_free(&d);
  MPI_Finalize();
  return 0;
}
