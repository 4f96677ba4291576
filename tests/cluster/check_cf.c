/* Checks a parcel file written by parcel-cluster for the metadata EPIC writes: per variable
 * units and long_name (EPIC's values), the time variable's CF attributes, global Conventions,
 * version, creation date/time/zone, file_type, box, and the run's recorded parameters.
 * Usage: check_cf FILE STAGE MIN_VRATIO [FILE STAGE MIN_VRATIO ...] */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void fail(const char *file, const char *what) {
  fprintf(stderr, "check_cf: %s: %s\n", file, what);
  failures++;
}

/* Text attribute `name` of `var` equals `want` (want NULL: exists and is non-empty). */
static void text(int nc, int var, const char *name, const char *want, const char *file,
                 const char *vname) {
  char buf[256] = "", what[512];
  size_t n = 0;
  nc_type t;
  if (nc_inq_att(nc, var, name, &t, &n) != NC_NOERR || t != NC_CHAR || n == 0 ||
      n >= sizeof buf || nc_get_att_text(nc, var, name, buf) != NC_NOERR) {
    snprintf(what, sizeof what, "%s: text attribute '%s' missing", vname, name);
    fail(file, what);
    return;
  }
  buf[n] = 0;
  if (want && strcmp(buf, want)) {
    snprintf(what, sizeof what, "%s: %s = '%s', want '%s'", vname, name, buf, want);
    fail(file, what);
  }
}

static void check(const char *file, const char *stage, double min_vratio) {
  static const char *const names[13] = {"x_position", "y_position", "z_position", "x_vorticity",
                                        "y_vorticity", "z_vorticity", "buoyancy", "volume",
                                        "B11", "B12", "B13", "B22", "B23"};
  static const char *const units[13] = {"m",   "m",   "m",   "1/s", "1/s", "1/s", "m/s^2",
                                        "m^3", "m^2", "m^2", "m^2", "m^2", "m^2"};
  int nc;
  if (nc_open(file, NC_NOWRITE, &nc) != NC_NOERR) {
    fail(file, "cannot open");
    return;
  }
  text(nc, NC_GLOBAL, "Conventions", "CF-1.9", file, "global");
  text(nc, NC_GLOBAL, "file_type", "parcels", file, "global");
  text(nc, NC_GLOBAL, "haloswap_version", NULL, file, "global");
  text(nc, NC_GLOBAL, "creation_date", NULL, file, "global");
  text(nc, NC_GLOBAL, "creation_time", NULL, file, "global");
  text(nc, NC_GLOBAL, "creation_zone", "UTC+00:00", file, "global");
  text(nc, NC_GLOBAL, "parcel_cluster_stage", stage, file, "global");
  text(nc, NC_GLOBAL, "parcel_cluster_input", NULL, file, "global");
  double mv = 0;
  if (nc_get_att_double(nc, NC_GLOBAL, "parcel_cluster_min_vratio", &mv) != NC_NOERR ||
      mv != min_vratio)
    fail(file, "parcel_cluster_min_vratio missing or not the run's value");
  int nppc = 0;
  if (nc_get_att_int(nc, NC_GLOBAL, "parcel_cluster_nppc", &nppc) != NC_NOERR || nppc < 1)
    fail(file, "parcel_cluster_nppc missing");
  for (int k = 0; k < 13; k++) {
    int v;
    if (nc_inq_varid(nc, names[k], &v) != NC_NOERR) {
      fail(file, names[k]);
      continue;
    }
    text(nc, v, "units", units[k], file, names[k]);
    text(nc, v, "long_name", NULL, file, names[k]);
  }
  int t;
  if (nc_inq_varid(nc, "t", &t) != NC_NOERR) {
    fail(file, "variable 't' missing");
  } else {
    text(nc, t, "units", "seconds since 1970-01-01", file, "t");
    text(nc, t, "standard_name", "time", file, "t");
    text(nc, t, "axis", "T", file, "t");
  }
  nc_close(nc);
  if (!failures) printf("check_cf: %s: CF and run attributes present\n", file);
}

int main(int argc, char **argv) {
  if (argc < 4 || (argc - 1) % 3) {
    fprintf(stderr, "usage: check_cf FILE STAGE MIN_VRATIO [...]\n");
    return 2;
  }
  for (int i = 1; i + 2 < argc; i += 3) check(argv[i], argv[i + 1], atof(argv[i + 2]));
  return failures ? 1 : 0;
}
