/* hs_copy_bw: the floor under a peer's target. Every rank copies --mb megabytes with one
 * contiguous memcpy, from a fresh place in a working set of --ws megabytes (per rank, as large
 * as its fields), all ranks at once, --reps times after a barrier each; prints the median (and
 * min) per copy, the slowest rank's. A halo swap moves the same bytes in strided runs, each
 * line read and written at least once, so it cannot beat this on the same ranks
 * (docs/benchmarks.md, "Measured by others' harnesses": cartex at halo 5).
 *   mpiexec -n 2 hs_copy_bw --mb 9.16 --ws 26 [--reps 200] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double mb = 0, ws = 0;
  int reps = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--mb")) mb = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--ws")) ws = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
  }
  if (mb <= 0 || ws < mb || reps < 1 || reps > 100000) {
    if (rank == 0)
      fprintf(stderr, "hs_copy_bw: need --mb M > 0 (got %g), --ws W >= M (got %g), --reps 1..100000 "
              "(got %d)\n", mb, ws, reps);
    MPI_Finalize();
    return 2;
  }
  size_t n = (size_t)(mb * 1e6), w = (size_t)(ws * 1e6), slots = w / n;
  char *a = malloc(w), *b = malloc(w);
  double *t = malloc(sizeof *t * (size_t)reps), *tmax = malloc(sizeof *t * (size_t)reps);
  if (!a || !b || !t || !tmax) {
    fprintf(stderr, "hs_copy_bw: rank %d: out of memory for 2 x %zu bytes\n", rank, w);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(a, 1, w); /* first touch, outside the timing */
  memset(b, 2, w);
  for (int r = 0; r < reps; r++) {
    size_t off = (size_t)r % slots * n;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    memcpy(b + off, a + off, n);
    t[r] = MPI_Wtime() - t0;
  }
  MPI_Reduce(t, tmax, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    qsort(tmax, (size_t)reps, sizeof *tmax, cmp);
    printf("%.2f MB per rank, working set %.1f MB: median %.0f us (min %.0f), %.1f GB/s per rank\n",
           mb, ws, tmax[reps / 2] * 1e6, tmax[0] * 1e6, mb * 1e6 / tmax[reps / 2] / 1e9);
  }
  free(a);
  free(b);
  free(t);
  free(tmax);
  MPI_Finalize();
  return 0;
}
