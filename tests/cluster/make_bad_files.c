/* Writes small EPIC parcel files into a directory: good.nc and one file per kind of bad
 * input the parcel-cluster reader must refuse. */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *names[13] = {"x_position", "y_position", "z_position", "x_vorticity",
                                "y_vorticity", "z_vorticity", "buoyancy", "volume",
                                "B11", "B12", "B13", "B22", "B23"};

enum { GOOD, MISSING_VAR, MISSING_ATTR, MISMATCH, OUTSIDE, NONPOS_VOLUME, DEGENERATE, NKIND };
static const char *files[NKIND] = {"good.nc", "missing_var.nc", "missing_attr.nc", "mismatch.nc",
                                   "outside.nc", "nonpos_volume.nc", "degenerate.nc"};

#define NC(call)                                                                 \
  do {                                                                           \
    int rc_ = (call);                                                            \
    if (rc_ != NC_NOERR) {                                                       \
      fprintf(stderr, "make_bad_files: %s: %s\n", #call, nc_strerror(rc_));      \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static void write_kind(const char *dir, int kind) {
  const int nx = 4, ny = 4, nz = 2, np = nx * ny * nz * 4;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, files[kind]);
  int nc, dt, dn, dn2, var[13];
  NC(nc_create(path, NC_CLOBBER | NC_NETCDF4, &nc));
  int ncells[3] = {nx, ny, nz};
  double ext[3] = {1, 1, 0.5}, org[3] = {0, 0, 0};
  NC(nc_put_att_text(nc, NC_GLOBAL, "file_type", 7, "parcels"));
  NC(nc_put_att_int(nc, NC_GLOBAL, "ncells", NC_INT, 3, ncells));
  if (kind != MISSING_ATTR) NC(nc_put_att_double(nc, NC_GLOBAL, "extent", NC_DOUBLE, 3, ext));
  NC(nc_put_att_double(nc, NC_GLOBAL, "origin", NC_DOUBLE, 3, org));
  NC(nc_def_dim(nc, "t", NC_UNLIMITED, &dt));
  NC(nc_def_dim(nc, "n_parcels", (size_t)np, &dn));
  NC(nc_def_dim(nc, "n_short", (size_t)np - 3, &dn2));
  for (int k = 0; k < 13; k++) {
    if (kind == MISSING_VAR && !strcmp(names[k], "buoyancy")) continue;
    int dims[2] = {dt, (kind == MISMATCH && !strcmp(names[k], "volume")) ? dn2 : dn};
    NC(nc_def_var(nc, names[k], NC_DOUBLE, 2, dims, &var[k]));
  }
  NC(nc_enddef(nc));
  double *v = malloc((size_t)np * 13 * sizeof(double));
  const double dx = 1.0 / nx, dy = 1.0 / ny, dz = 0.5 / nz, vcell = dx * dy * dz;
  for (int i = 0; i < np; i++) {
    double *a = v + 13 * i;
    int c = i / 4, q = i % 4;
    int ix = c % nx, iy = (c / nx) % ny, iz = c / (nx * ny);
    a[0] = (ix + 0.2 + 0.2 * q) * dx;
    a[1] = (iy + 0.3 + 0.15 * q) * dy;
    a[2] = (iz + 0.25 + 0.17 * q) * dz;
    a[3] = q - 1.5;
    a[4] = 0.5 * q;
    a[5] = -q;
    a[6] = 0.1 * q - 0.2;
    a[7] = vcell / 40 * (0.6 + 0.3 * q); /* small and large at EPIC's min_vratio 40 */
    double r2 = 0.01 * dx * dx;
    a[8] = r2;
    a[9] = 0.1 * r2;
    a[10] = 0.0;
    a[11] = r2;
    a[12] = 0.0;
  }
  if (kind == OUTSIDE) v[13 * 17 + 2] = 0.9; /* z above the lid at 0.5 */
  if (kind == NONPOS_VOLUME) v[13 * 5 + 7] = -1e-3;
  if (kind == DEGENERATE) {
    v[13 * 9 + 8] = 1e-4;
    v[13 * 9 + 9] = 1e-4;
    v[13 * 9 + 11] = 1e-4; /* B11*B22 - B12^2 = 0 */
  }
  double *col = malloc((size_t)np * sizeof(double));
  for (int k = 0; k < 13; k++) {
    if (kind == MISSING_VAR && !strcmp(names[k], "buoyancy")) continue;
    int n = (kind == MISMATCH && !strcmp(names[k], "volume")) ? np - 3 : np;
    for (int i = 0; i < n; i++) col[i] = v[13 * i + k];
    size_t start[2] = {0, 0}, count[2] = {1, (size_t)n};
    NC(nc_put_vara_double(nc, var[k], start, count, col));
  }
  NC(nc_close(nc));
  free(v);
  free(col);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_bad_files DIR\n");
    return 2;
  }
  for (int k = 0; k < NKIND; k++) write_kind(argv[1], k);
  printf("make_bad_files: wrote %d files to %s\n", NKIND, argv[1]);
  return 0;
}
