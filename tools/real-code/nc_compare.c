/* nc_compare A.nc B.nc: the same variables with the same shapes and bit-identical data
 * (attributes, which hold creation times, are not compared). Prints "identical", or the
 * variables that differ with their number of differing bytes, and exits 1. Used by the
 * real-code checks (tools/real-code/*.sh), which build it with the system's NetCDF. */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, int rc) {
  fprintf(stderr, "nc_compare: %s: %s\n", what, nc_strerror(rc));
  exit(2);
}

/* Bytes of variable v of file id, read whole as raw bytes of its type. */
static unsigned char *read_var(int id, int v, size_t *bytes) {
  int nd, dims[NC_MAX_VAR_DIMS], rc;
  nc_type t;
  size_t n = 1, sz = 0;
  if ((rc = nc_inq_var(id, v, NULL, &t, &nd, dims, NULL))) die("nc_inq_var", rc);
  for (int d = 0; d < nd; d++) {
    size_t len;
    if ((rc = nc_inq_dimlen(id, dims[d], &len))) die("nc_inq_dimlen", rc);
    n *= len;
  }
  if ((rc = nc_inq_type(id, t, NULL, &sz))) die("nc_inq_type", rc);
  *bytes = n * sz;
  unsigned char *b = malloc(*bytes ? *bytes : 1);
  if (!b) die("malloc", NC_ENOMEM);
  if (*bytes && (rc = nc_get_var(id, v, b))) die("nc_get_var", rc);
  return b;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: nc_compare A.nc B.nc\n");
    return 2;
  }
  int a, b, rc, na, nb, differ = 0;
  if ((rc = nc_open(argv[1], NC_NOWRITE, &a))) die(argv[1], rc);
  if ((rc = nc_open(argv[2], NC_NOWRITE, &b))) die(argv[2], rc);
  nc_inq_nvars(a, &na);
  nc_inq_nvars(b, &nb);
  if (na != nb) {
    printf("%d variables in %s, %d in %s\n", na, argv[1], nb, argv[2]);
    return 1;
  }
  for (int v = 0; v < na; v++) {
    char name[NC_MAX_NAME + 1];
    int w;
    nc_inq_varname(a, v, name);
    if (nc_inq_varid(b, name, &w)) {
      printf("%s: missing in %s\n", name, argv[2]);
      differ++;
      continue;
    }
    size_t sa, sb, bad = 0;
    unsigned char *da = read_var(a, v, &sa), *db = read_var(b, w, &sb);
    if (sa != sb) {
      printf("%s: %zu bytes against %zu\n", name, sa, sb);
      differ++;
    } else {
      for (size_t i = 0; i < sa; i++) bad += da[i] != db[i];
      if (bad) {
        printf("%s: %zu of %zu bytes differ\n", name, bad, sa);
        differ++;
      }
    }
    free(da);
    free(db);
  }
  nc_close(a);
  nc_close(b);
  if (!differ) printf("identical (%d variables)\n", na);
  return differ ? 1 : 0;
}
