/* nc_bitdiff A.nc B.nc: compares every variable of two netCDF files bit for bit (names, types,
 * shapes and the bytes of every value); attributes are ignored (they hold creation times).
 * Prints one line per differing variable and a summary; exit 0 identical, 1 different, 2 error.
 * Used by every real-code check (common.sh's hs_nc_bitdiff); cc nc_bitdiff.c -lnetcdf */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const char *file, int st) {
  fprintf(stderr, "nc_bitdiff: %s %s: %s\n", what, file, nc_strerror(st));
  return 2;
}

/* Number of values of variable v (product of its dimension lengths). */
static size_t var_len(int nc, int v) {
  int nd, dims[NC_MAX_VAR_DIMS];
  nc_inq_varndims(nc, v, &nd);
  nc_inq_vardimid(nc, v, dims);
  size_t n = 1;
  for (int d = 0; d < nd; d++) {
    size_t l;
    nc_inq_dimlen(nc, dims[d], &l);
    n *= l;
  }
  return n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: nc_bitdiff A.nc B.nc\n");
    return 2;
  }
  int a, b, st;
  if ((st = nc_open(argv[1], NC_NOWRITE, &a))) return fail("cannot open", argv[1], st);
  if ((st = nc_open(argv[2], NC_NOWRITE, &b))) return fail("cannot open", argv[2], st);
  int nva, nvb, bad = 0, checked = 0;
  nc_inq_nvars(a, &nva);
  nc_inq_nvars(b, &nvb);
  if (nva != nvb) {
    printf("variable count: %d vs %d\n", nva, nvb);
    bad++;
  }
  for (int v = 0; v < nva; v++) {
    char name[NC_MAX_NAME + 1];
    nc_type ta, tb;
    int w;
    nc_inq_varname(a, v, name);
    nc_inq_vartype(a, v, &ta);
    if (nc_inq_varid(b, name, &w)) {
      printf("%s: missing in %s\n", name, argv[2]);
      bad++;
      continue;
    }
    nc_inq_vartype(b, w, &tb);
    size_t na = var_len(a, v), nb = var_len(b, w), sz;
    nc_inq_type(a, ta, NULL, &sz);
    if (ta != tb || na != nb) {
      printf("%s: type %d/%d, %zu/%zu values\n", name, (int)ta, (int)tb, na, nb);
      bad++;
      continue;
    }
    unsigned char *pa = malloc(na * sz + 1), *pb = malloc(na * sz + 1);
    if (!pa || !pb) return fprintf(stderr, "nc_bitdiff: out of memory\n"), 2;
    if ((st = nc_get_var(a, v, pa))) return fail("cannot read", name, st);
    if ((st = nc_get_var(b, w, pb))) return fail("cannot read", name, st);
    size_t ndiff = 0, first = 0;
    for (size_t i = 0; i < na; i++)
      if (memcmp(pa + i * sz, pb + i * sz, sz)) {
        if (!ndiff) first = i;
        ndiff++;
      }
    if (ndiff) {
      printf("%s: %zu of %zu values differ (first at %zu)\n", name, ndiff, na, first);
      bad++;
    }
    checked++;
    free(pa);
    free(pb);
  }
  nc_close(a);
  nc_close(b);
  printf("%s: %d variables compared, %d differ\n", bad ? "DIFFERENT" : "identical", checked, bad);
  return bad ? 1 : 0;
}
