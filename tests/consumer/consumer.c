/* A program built against an installed haloswap (CMake package or pkg-config): one periodic
 * depth-1 box swap on a 2D-decomposed 3D grid; every x/y halo cell must hold the value of the
 * global cell it mirrors. Prints "consumer OK" on rank 0 on success. */
#include <haloswap.h>
#include <stdio.h>
#include <stdlib.h>

static double value(int gx, int gy, int z) { return 10000.0 * gx + 100.0 * gy + z; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd); /* periodic x and y, z whole */
  dd.global[0] = 8; dd.global[1] = 6; dd.global[2] = 3;
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    fprintf(stderr, "hs_decomp_create: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int nz = 3, h = 1;
  int nx = hs_decomp_local_extent(d, 0), ny = hs_decomp_local_extent(d, 1);
  int ox = hs_decomp_global_offset(d, 0), oy = hs_decomp_global_offset(d, 1);
  int sy = nz, sx = nz * (ny + 2 * h); /* ZFAST: z contiguous, then y, then x */
  double *u = malloc(sizeof(double) * (size_t)(nx + 2 * h) * (ny + 2 * h) * nz);
  for (int x = -h; x < nx + h; x++)
    for (int y = -h; y < ny + h; y++)
      for (int z = 0; z < nz; z++) {
        int in = x >= 0 && x < nx && y >= 0 && y < ny;
        u[(x + h) * sx + (y + h) * sy + z] = in ? value(ox + x, oy + y, z) : -1.0;
      }
  hs_field f = hs_field_array(HS_FLOAT64, u, HS_LAYOUT_ZFAST, h);
  f.halo[2] = 0; /* z is not decomposed: no halo allocated */
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.nfields = 1;
  pd.fields = &f;
  hs_plan p;
  if (hs_plan_create(d, &pd, &p) != HS_OK || hs_swap(p, NULL) != HS_OK) {
    fprintf(stderr, "haloswap: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int gx = hs_decomp_global_extent(d, 0), gy = hs_decomp_global_extent(d, 1), bad = 0;
  for (int x = -h; x < nx + h; x++)
    for (int y = -h; y < ny + h; y++)
      for (int z = 0; z < nz; z++) {
        int ex = ((ox + x) % gx + gx) % gx, ey = ((oy + y) % gy + gy) % gy;
        bad += u[(x + h) * sx + (y + h) * sy + z] != value(ex, ey, z);
      }
  int total = 0, size;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0)
    printf(total ? "consumer FAILED: %d wrong cells on %d ranks\n" : "consumer OK (%d wrong, %d ranks)\n",
           total, size);
  hs_plan_free(&p);
  hs_decomp_free(&d);
  free(u);
  MPI_Finalize();
  return total != 0;
}
