/* nc_bitdiff A.nc B.nc: compares two netCDF files bit for bit. Scope: the root group's
 * dimensions (names and lengths) and variables (names, types, shapes and the bytes of every
 * value). Not compared: attributes (they hold creation times) and sub-groups (netCDF-4 groups
 * are named in a note; none of the codes checked writes any).
 * Prints one line per difference, for a variable how many values differ and, for a numeric
 * type, the largest difference, then a summary; exit 0 identical, 1 different, 2 error.
 * Used by every real-code check (common.sh's hs_nc_bitdiff); cc nc_bitdiff.c -lnetcdf */
#include <math.h>
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

/* Value i of a buffer of type t as a double; 0 with *ok = 0 for a non-numeric type. */
static double value(nc_type t, const unsigned char *p, size_t i, int *ok) {
  *ok = 1;
  switch (t) {
  case NC_BYTE: return ((const signed char *)p)[i];
  case NC_UBYTE: return ((const unsigned char *)p)[i];
  case NC_SHORT: return ((const short *)p)[i];
  case NC_USHORT: return ((const unsigned short *)p)[i];
  case NC_INT: return ((const int *)p)[i];
  case NC_UINT: return ((const unsigned int *)p)[i];
  case NC_INT64: return (double)((const long long *)p)[i];
  case NC_UINT64: return (double)((const unsigned long long *)p)[i];
  case NC_FLOAT: return ((const float *)p)[i];
  case NC_DOUBLE: return ((const double *)p)[i];
  default: *ok = 0; return 0;
  }
}

/* *n: how many dimensions or variables (what) a has, by inq; 1 (reported) if b has another
 * number, else 0. */
static int count_of(int a, int b, int (*inq)(int, int *), const char *what, int *n) {
  int nb;
  inq(a, n);
  inq(b, &nb);
  if (*n == nb) return 0;
  printf("%s count: %d vs %d\n", what, *n, nb);
  return 1;
}

/* Dimensions of the root group: same count, names and lengths. Returns the differences. */
static int compare_dims(int a, int b, const char *fb) {
  int nda, bad = count_of(a, b, nc_inq_ndims, "dimension", &nda);
  for (int d = 0; d < nda; d++) {
    char name[NC_MAX_NAME + 1];
    size_t la, lb;
    int e;
    nc_inq_dim(a, d, name, &la);
    if (nc_inq_dimid(b, name, &e)) {
      printf("dimension %s: missing in %s\n", name, fb);
      bad++;
      continue;
    }
    nc_inq_dimlen(b, e, &lb);
    if (la != lb) {
      printf("dimension %s: length %zu vs %zu\n", name, la, lb);
      bad++;
    }
  }
  return bad;
}

static void note_groups(int nc, const char *file) {
  int ng = 0;
  if (nc_inq_grps(nc, &ng, NULL) == NC_NOERR && ng > 0)
    printf("note: %s has %d sub-group(s); only the root group is compared\n", file, ng);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: nc_bitdiff A.nc B.nc\n");
    return 2;
  }
  int a, b, st;
  if ((st = nc_open(argv[1], NC_NOWRITE, &a))) return fail("cannot open", argv[1], st);
  if ((st = nc_open(argv[2], NC_NOWRITE, &b))) return fail("cannot open", argv[2], st);
  note_groups(a, argv[1]);
  note_groups(b, argv[2]);
  int nva, bad = compare_dims(a, b, argv[2]), checked = 0;
  bad += count_of(a, b, nc_inq_nvars, "variable", &nva);
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
    size_t ndiff = 0, first = 0, worst_at = 0;
    double worst = -1;
    int numeric = 1;
    for (size_t i = 0; i < na; i++)
      if (memcmp(pa + i * sz, pb + i * sz, sz)) {
        if (!ndiff) first = i;
        ndiff++;
        double d = fabs(value(ta, pa, i, &numeric) - value(ta, pb, i, &numeric));
        if (isnan(d)) d = INFINITY; /* a NaN on one side only */
        if (numeric && d > worst) worst = d, worst_at = i;
      }
    if (ndiff && numeric) {
      int ok;
      printf("%s: %zu of %zu values differ, largest difference %.6g (at value %zu: %.17g vs "
             "%.17g)\n", name, ndiff, na, worst, worst_at, value(ta, pa, worst_at, &ok),
             value(ta, pb, worst_at, &ok));
      bad++;
    } else if (ndiff) {
      printf("%s: %zu of %zu values differ (first at %zu)\n", name, ndiff, na, first);
      bad++;
    }
    checked++;
    free(pa);
    free(pb);
  }
  nc_close(a);
  nc_close(b);
  printf("%s: %d variables compared, %d differences\n", bad ? "DIFFERENT" : "identical", checked,
         bad);
  return bad ? 1 : 0;
}
