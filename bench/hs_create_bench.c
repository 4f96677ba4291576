/* hs_create_bench: seconds to create (and free) a plan, the slowest rank's, median [min-max]
 * over --reps creations, for each --transport given (default: auto), on the MONC case or a
 * given grid. Run at 1..9 ranks by bench/auto-create.sh (docs/benchmarks.md, "Creation time of
 * an auto plan").
 *   hs_create_bench [--local X,Y,Z] [--fields N] [--depth D] [--reps R] [--transport SPEC]... */
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, local[3] = {16, 16, 256}, nf = 30, depth = 2, reps = 3, ns = 0;
  const char *specs[16];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--local")) sscanf(argv[i + 1], "%d,%d,%d", &local[0], &local[1], &local[2]);
    else if (!strcmp(argv[i], "--fields")) nf = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--depth")) depth = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--transport") && ns < 16) specs[ns++] = argv[i + 1];
    else {
      if (rank == 0) fprintf(stderr, "hs_create_bench: unknown option %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (!ns) specs[ns++] = "auto";
  if (nf < 1 || reps < 1 || reps > 100 || depth < 1) MPI_Abort(MPI_COMM_WORLD, 2);
  int dims[3] = {0, 0, 1};
  MPI_Dims_create(size, 3, dims);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  for (int a = 0; a < 3; a++) dd.global[a] = local[a] * dims[a];
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    fprintf(stderr, "hs_create_bench: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int nx = hs_decomp_local_extent(d, 0), ny = hs_decomp_local_extent(d, 1), nz = local[2];
  hs_field *fl = calloc((size_t)nf, sizeof *fl);
  for (int f = 0; f < nf; f++) {
    double *u = calloc((size_t)(nx + 2 * depth) * (ny + 2 * depth) * nz, sizeof *u);
    if (!u) MPI_Abort(MPI_COMM_WORLD, 1);
    fl[f] = hs_field_array(HS_FLOAT64, u, HS_LAYOUT_ZFAST, depth);
  }
  if (rank == 0)
    printf("%d ranks, local %dx%dx%d, %d fields, depth %d: plan creation seconds, slowest rank, "
           "median [min-max] of %d\n", size, local[0], local[1], local[2], nf, depth, reps);
  for (int s = 0; s < ns; s++) {
    double t[100], chosen_ok = 1;
    char chosen[64] = "";
    for (int r = 0; r < reps; r++) {
      hs_plan_desc pd;
      hs_plan_desc_init(&pd);
      pd.depth[0] = pd.depth[1] = depth;
      pd.nfields = nf;
      pd.fields = fl;
      pd.transport_name = specs[s];
      hs_plan p;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      int rc = hs_plan_create(d, &pd, &p);
      double e = MPI_Wtime() - t0;
      MPI_Allreduce(&e, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rc != HS_OK) {
        if (rank == 0) printf("  %-20s failed: %s\n", specs[s], hs_error_message());
        chosen_ok = 0;
        break;
      }
      snprintf(chosen, sizeof chosen, "%s", hs_plan_selected_transport(p));
      hs_plan_free(&p);
    }
    if (!chosen_ok) continue;
    qsort(t, (size_t)reps, sizeof *t, cmp);
    if (rank == 0)
      printf("  %-20s %8.3f [%.3f-%.3f] s   (last choice: %s)\n", specs[s], t[reps / 2], t[0],
             t[reps - 1], chosen);
  }
  hs_decomp_free(&d);
  MPI_Finalize();
  return 0;
}
