// The C++ consumer: haloswap.h from C++ (extern "C"), a std::vector field, one depth-1 swap.
#include <haloswap.h>

#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.ndims = 2;
  dd.global[0] = 10; dd.global[1] = 7; dd.global[2] = 1;
  dd.procs[2] = 0;
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    std::fprintf(stderr, "hs_decomp_create: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int h = 1;
  const int nx = hs_decomp_local_extent(d, 0), ny = hs_decomp_local_extent(d, 1);
  const int ox = hs_decomp_global_offset(d, 0), oy = hs_decomp_global_offset(d, 1);
  const int gx = hs_decomp_global_extent(d, 0), gy = hs_decomp_global_extent(d, 1);
  // ZFAST in 2D: y contiguous, then x.
  const int sx = ny + 2 * h;
  std::vector<int> u(static_cast<size_t>((nx + 2 * h) * sx), -1);
  for (int x = 0; x < nx; x++)
    for (int y = 0; y < ny; y++)
      u[(x + h) * sx + y + h] = 1000 * (ox + x) + oy + y;
  hs_field f = hs_field_array(HS_INT32, u.data(), HS_LAYOUT_ZFAST, h);
  f.halo[2] = 0;
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.nfields = 1;
  pd.fields = &f;
  hs_plan p;
  if (hs_plan_create(d, &pd, &p) != HS_OK || hs_swap(p, nullptr) != HS_OK) {
    std::fprintf(stderr, "haloswap: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int bad = 0;
  for (int x = -h; x < nx + h; x++)
    for (int y = -h; y < ny + h; y++) {
      const int ex = ((ox + x) % gx + gx) % gx, ey = ((oy + y) % gy + gy) % gy;
      bad += u[(x + h) * sx + y + h] != 1000 * ex + ey;
    }
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(total ? "consumer FAILED: %d wrong cells\n" : "consumer OK (%d wrong)\n", total);
  hs_plan_free(&p);
  hs_decomp_free(&d);
  MPI_Finalize();
  return total != 0;
}
