/* parcel-cluster: EPIC parcel files (NetCDF). Layout (EPIC src/3d/parcels/parcel_netcdf.f90):
 * global attributes file_type = "parcels", ncells (3 ints), extent and origin (3 doubles);
 * dimensions t (one record) and n_parcels; one double variable per attribute over
 * (t, n_parcels); optional per-writer variables over the dimension "world%size".
 * Rank 0 reads and checks everything; every rank returns the same verdict before any work. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include "pc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifdef PC_HAVE_NETCDF
#include <netcdf.h>

int pc_have_netcdf(void) { return 1; }

/* ---- classic-format header check (CDF-1, CDF-2, CDF-5), before nc_open.
 * libnetcdf 4.9.0 (Debian 12) crashes inside nc_open on some malformed classic headers
 * (fuzz/regressions/ncread/netcdf-classic-hashmapadd-segv: a name that is not UTF-8). The
 * header grammar is small (NetCDF "Classic and 64-bit Offset File Formats", CDF-5 spec), so
 * walk it and refuse, with a reason, anything libnetcdf must not see: names that are not
 * valid netCDF names, counts or sizes beyond the file, unknown types or tags, dimension ids
 * out of range. Files that are not classic (HDF5 signature) are left to libnetcdf. */
typedef struct {
  FILE *f;
  long long left; /* bytes of the file after the cursor */
  int ver;        /* 1, 2 or 5 */
  int cut;        /* a read ran past the end of the file */
  const char *what;
} hdr_cur;

static int hdr_bytes(hdr_cur *c, void *out, long long n) {
  if (n < 0 || n > c->left) {
    c->cut = n > c->left;
    return -1;
  }
  if (out ? fread(out, 1, (size_t)n, c->f) != (size_t)n : fseek(c->f, (long)n, SEEK_CUR) != 0)
    return -1;
  c->left -= n;
  return 0;
}

/* A big-endian count: 4 bytes, or 8 in CDF-5 where `wide` (nelems, lengths, dimids, vsize). */
static int hdr_count(hdr_cur *c, int wide, unsigned long long *v) {
  unsigned char b[8];
  int n = wide && c->ver == 5 ? 8 : 4;
  if (hdr_bytes(c, b, n)) return -1;
  *v = 0;
  for (int i = 0; i < n; i++) *v = *v << 8 | b[i];
  return 0;
}

static long long hdr_pad4(unsigned long long n) { return (long long)((4 - n % 4) % 4); }

/* netCDF names: 1..NC_MAX_NAME bytes of valid UTF-8, no control characters, no '/'. */
static int hdr_name(hdr_cur *c, char *err, size_t len, const char *path) {
  unsigned long long n;
  unsigned char s[NC_MAX_NAME];
  if (hdr_count(c, 1, &n) || n < 1 || n > NC_MAX_NAME || hdr_bytes(c, s, (long long)n) ||
      hdr_bytes(c, NULL, hdr_pad4(n))) {
    snprintf(err, len, "%s: malformed classic header: a %s name has a bad length or is cut off",
             path, c->what);
    return -1;
  }
  for (unsigned long long i = 0; i < n;) {
    unsigned char u = s[i];
    int k = u < 0x80 ? 0 : (u & 0xE0) == 0xC0 ? 1 : (u & 0xF0) == 0xE0 ? 2 : (u & 0xF8) == 0xF0 ? 3 : -1;
    int ok = k >= 0 && i + (unsigned long long)k < n && (k || (u >= 0x20 && u != 0x7F && u != '/'));
    for (int j = 1; ok && j <= k; j++) ok = (s[i + (unsigned long long)j] & 0xC0) == 0x80;
    if (!ok) {
      snprintf(err, len, "%s: malformed classic header: a %s name is not a valid netCDF name "
               "(byte %llu: 0x%02x)", path, c->what, i, u);
      return -1;
    }
    i += (unsigned long long)k + 1;
  }
  return 0;
}

static int hdr_type_size(int ver, unsigned long long t) {
  static const int sz[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
  return t >= 1 && t <= (ver == 5 ? 11u : 6u) ? sz[t] : 0;
}

/* A list header: its tag must be `tag` or absent (ZERO ZERO); *n its element count, bounded by
 * the bytes left (every element takes at least 4). */
static int hdr_list(hdr_cur *c, unsigned tag, unsigned long long *n, char *err, size_t len,
                    const char *path) {
  unsigned long long t;
  if (hdr_count(c, 0, &t) || hdr_count(c, 1, n) || (t != tag && (t != 0 || *n != 0)) ||
      *n > (unsigned long long)c->left / 4) {
    snprintf(err, len, "%s: malformed classic header: bad %s list", path, c->what);
    return -1;
  }
  return 0;
}

static int hdr_atts(hdr_cur *c, char *err, size_t len, const char *path) {
  unsigned long long n, t, m;
  const char *was = c->what;
  c->what = "attribute";
  if (hdr_list(c, 0x0C, &n, err, len, path)) return -1;
  for (unsigned long long i = 0; i < n; i++) {
    if (hdr_name(c, err, len, path)) return -1;
    int ts;
    if (hdr_count(c, 0, &t) || !(ts = hdr_type_size(c->ver, t)) || hdr_count(c, 1, &m) ||
        m > (unsigned long long)c->left / (unsigned)ts ||
        hdr_bytes(c, NULL, (long long)(m * (unsigned)ts) + hdr_pad4(m * (unsigned)ts))) {
      snprintf(err, len, "%s: malformed classic header: an attribute has a bad type or size",
               path);
      return -1;
    }
  }
  c->what = was;
  return 0;
}

static int check_classic_header(const char *path, char *err, size_t len) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0; /* nc_open reports it */
  struct stat st;
  unsigned char m[4];
  hdr_cur c = {f, 0, 0, 0, "dimension"};
  int rc = 0;
  if (fstat(fileno(f), &st) != 0 || fread(m, 1, 4, f) != 4 || memcmp(m, "CDF", 3) ||
      (m[3] != 1 && m[3] != 2 && m[3] != 5))
    goto done; /* not classic: libnetcdf's own checks */
  c.left = (long long)st.st_size - 4;
  c.ver = m[3];
  rc = -1;
  unsigned long long numrecs, ndims, nvars, v;
  if (hdr_count(&c, 1, &numrecs)) {
    snprintf(err, len, "%s: malformed classic header: cut off after the magic number", path);
    goto done;
  }
  if (hdr_list(&c, 0x0A, &ndims, err, len, path)) goto done;
  for (unsigned long long i = 0; i < ndims; i++)
    if (hdr_name(&c, err, len, path) || hdr_count(&c, 1, &v)) {
      if (!*err) snprintf(err, len, "%s: malformed classic header: a dimension is cut off", path);
      goto done;
    }
  if (hdr_atts(&c, err, len, path)) goto done;
  c.what = "variable";
  if (hdr_list(&c, 0x0B, &nvars, err, len, path)) goto done;
  for (unsigned long long i = 0; i < nvars; i++) {
    unsigned long long nd, t;
    if (hdr_name(&c, err, len, path)) goto done;
    if (hdr_count(&c, 1, &nd) || nd > NC_MAX_VAR_DIMS) {
      snprintf(err, len, "%s: malformed classic header: a variable has a bad dimension count",
               path);
      goto done;
    }
    for (unsigned long long j = 0; j < nd; j++)
      if (hdr_count(&c, 1, &v) || v >= ndims) {
        snprintf(err, len, "%s: malformed classic header: a variable names dimension id %llu "
                 "of %llu", path, v, ndims);
        goto done;
      }
    if (hdr_atts(&c, err, len, path)) goto done;
    if (hdr_count(&c, 0, &t) || !hdr_type_size(c.ver, t) || hdr_count(&c, 1, &v) ||
        hdr_bytes(&c, NULL, c.ver == 1 ? 4 : 8)) {
      snprintf(err, len, "%s: malformed classic header: a variable has a bad type or is cut off",
               path);
      goto done;
    }
  }
  rc = 0;
done:
  if (rc && c.cut) /* the same words as libnetcdf's refusal of a short file */
    snprintf(err, len, "%s: cannot open: truncated: its classic header runs past the end of "
             "the file (%lld bytes)", path, (long long)st.st_size);
  fclose(f);
  return rc;
}

/* On failure neither *b nor the parcels in *all are changed (all->n stays 0). */
static int read_file(const char *path, pc_box *b_out, pc_set *all, double *min_vratio, char *err,
                     size_t len) {
  pc_box box, *b = &box;
  all->n = 0;
  *min_vratio = NAN;
  if (len) err[0] = '\0';
  if (check_classic_header(path, err, len)) return -1;
  int nc, rc = nc_open(path, NC_NOWRITE, &nc);
  if (rc != NC_NOERR) {
    snprintf(err, len, "%s: cannot open: %s", path, nc_strerror(rc));
    return -1;
  }
  int ret = -1;
  char ft[64] = "";
  size_t alen = 0;
  nc_type at;
  if (nc_inq_att(nc, NC_GLOBAL, "file_type", &at, &alen) != NC_NOERR) {
    snprintf(err, len, "%s: global attribute 'file_type': missing (EPIC parcel files have "
             "file_type = \"parcels\")", path);
    goto out;
  }
  if (at != NC_CHAR || alen >= sizeof ft || nc_get_att_text(nc, NC_GLOBAL, "file_type", ft) != NC_NOERR ||
      strncmp(ft, "parcels", alen) != 0 || alen != 7) {
    snprintf(err, len, "%s: global attribute 'file_type': is not \"parcels\"", path);
    goto out;
  }
  int ncells[3];
  double ext[3], org[3];
  const char *names[3] = {"ncells", "extent", "origin"};
  for (int k = 0; k < 3; k++) {
    if (nc_inq_att(nc, NC_GLOBAL, names[k], &at, &alen) != NC_NOERR) {
      snprintf(err, len, "%s: global attribute '%s': missing", path, names[k]);
      goto out;
    }
    if (alen != 3) {
      snprintf(err, len, "%s: global attribute '%s': has %zu values, must have 3", path,
               names[k], alen);
      goto out;
    }
    rc = k == 0 ? nc_get_att_int(nc, NC_GLOBAL, names[k], ncells)
                : nc_get_att_double(nc, NC_GLOBAL, names[k], k == 1 ? ext : org);
    if (rc != NC_NOERR) {
      snprintf(err, len, "%s: global attribute '%s': cannot be read as numbers: %s", path,
               names[k], nc_strerror(rc));
      goto out;
    }
  }
  for (int a = 0; a < 3; a++) {
    if (ncells[a] < (a < 2 ? 2 : 1)) {
      snprintf(err, len, "%s: global attribute 'ncells': ncells[%d] = %d, must be >= %d", path,
               a, ncells[a], a < 2 ? 2 : 1);
      goto out;
    }
    if (!(ext[a] > 0) || !isfinite(ext[a])) {
      snprintf(err, len, "%s: global attribute 'extent': extent[%d] = %g, must be finite and > 0",
               path, a, ext[a]);
      goto out;
    }
    if (!isfinite(org[a])) {
      snprintf(err, len, "%s: global attribute 'origin': origin[%d] = %g, must be finite", path,
               a, org[a]);
      goto out;
    }
  }
  pc_box_init(b, ncells, org, ext);
  int dim;
  size_t np = 0;
  if (nc_inq_dimid(nc, "n_parcels", &dim) != NC_NOERR || nc_inq_dimlen(nc, dim, &np) != NC_NOERR) {
    snprintf(err, len, "%s: dimension 'n_parcels': missing", path);
    goto out;
  }
  if (np > (size_t)1 << 30) {
    snprintf(err, len, "%s: dimension 'n_parcels': %zu parcels, more than this tool reads", path, np);
    goto out;
  }
  /* A classic-format file stores every value: one whose size cannot hold n_parcels values of
   * each variable present is truncated (it would read as fill values), and its header must
   * not make us allocate for parcels it does not have. */
  int fmt = 0;
  struct stat st;
  if (nc_inq_format(nc, &fmt) == NC_NOERR &&
      (fmt == NC_FORMAT_CLASSIC || fmt == NC_FORMAT_64BIT_OFFSET || fmt == NC_FORMAT_CDF5) &&
      stat(path, &st) == 0) {
    double need = 0;
    for (int k = 0; k < PC_NATTR; k++) {
      int var;
      nc_type vt;
      size_t tsize = 0;
      if (nc_inq_varid(nc, pc_attr_names[k], &var) == NC_NOERR &&
          nc_inq_vartype(nc, var, &vt) == NC_NOERR && nc_inq_type(nc, vt, NULL, &tsize) == NC_NOERR)
        need += (double)tsize * (double)np;
    }
    if ((double)st.st_size < need) {
      snprintf(err, len, "%s: is truncated: n_parcels = %zu needs at least %.0f bytes of "
               "parcel data, the file has %lld bytes", path, np, need, (long long)st.st_size);
      goto out;
    }
  }
  all->n = 0;
  if (pc_set_reserve(all, (int)np + 1)) {
    snprintf(err, len, "%s: out of memory for %zu parcels", path, np);
    goto out;
  }
  double *buf = malloc((np ? np : 1) * sizeof(double));
  if (!buf) {
    snprintf(err, len, "%s: out of memory for %zu parcels", path, np);
    goto out;
  }
  for (int k = 0; k < PC_NATTR; k++) {
    int var, nd, dims[NC_MAX_VAR_DIMS];
    nc_type vt;
    if (nc_inq_varid(nc, pc_attr_names[k], &var) != NC_NOERR) {
      snprintf(err, len, "%s: variable '%s': missing", path, pc_attr_names[k]);
      free(buf);
      goto out;
    }
    nc_inq_var(nc, var, NULL, &vt, &nd, dims, NULL);
    size_t last = 0, first = 1;
    if (nd >= 1) nc_inq_dimlen(nc, dims[nd - 1], &last);
    if (nd == 2) nc_inq_dimlen(nc, dims[0], &first);
    if (nd < 1 || nd > 2 || last != np || first < 1) {
      snprintf(err, len,
               "%s: variable '%s': has %d dimension(s) with %zu values per record, but "
               "n_parcels = %zu (mismatched lengths)", path, pc_attr_names[k], nd, last, np);
      free(buf);
      goto out;
    }
    size_t start[2] = {0, 0}, count[2] = {1, np};
    if (nd == 1) count[0] = np;
    rc = nc_get_vara_double(nc, var, start, count, buf);
    if (rc != NC_NOERR) {
      snprintf(err, len, "%s: variable '%s': cannot be read: %s", path, pc_attr_names[k],
               nc_strerror(rc));
      free(buf);
      goto out;
    }
    for (size_t i = 0; i < np; i++) all->p[i].a[k] = buf[i];
  }
  free(buf);
  all->n = (int)np;
  for (int i = 0; i < all->n; i++) {
    const char *var = "";
    char why[256];
    if (pc_check_parcel(b, &all->p[i], &var, why, sizeof why)) {
      snprintf(err, len, "%s: variable '%s': parcel %d: %s", path, var, i, why);
      goto out;
    }
    /* The upper periodic faces belong to the lower ones. */
    all->p[i].a[PX] = pc_wrap(b, 0, all->p[i].a[PX]);
    all->p[i].a[PY] = pc_wrap(b, 1, all->p[i].a[PY]);
  }
  /* Our own files record the run's min_vratio; EPIC's do not (optional). */
  double mv;
  if (nc_inq_att(nc, NC_GLOBAL, "parcel_cluster_min_vratio", &at, &alen) == NC_NOERR &&
      alen == 1 && nc_get_att_double(nc, NC_GLOBAL, "parcel_cluster_min_vratio", &mv) == NC_NOERR &&
      isfinite(mv) && mv > 0)
    *min_vratio = mv;
  ret = 0;
  *b_out = box;
out:
  if (ret != 0) all->n = 0;
  nc_close(nc);
  return ret;
}

/* CF metadata of a variable (EPIC's parcel_netcdf names, units and long names). */
static int put_meta(int nc, int var, const char *units, const char *long_name) {
  int rc = nc_put_att_text(nc, var, "units", strlen(units), units);
  if (rc == NC_NOERR) rc = nc_put_att_text(nc, var, "long_name", strlen(long_name), long_name);
  return rc;
}

static int put_text(int nc, const char *name, const char *v) {
  return nc_put_att_text(nc, NC_GLOBAL, name, strlen(v), v);
}

int pc_write_netcdf(const char *path, const pc_box *b, const pc_set *all, int nwriters,
                    const pc_run_info *run, char *err, size_t len) {
  (void)nwriters; /* everything is written by one rank */
  static const char *const units[PC_NATTR] = {"m",   "m",   "m",   "1/s", "1/s", "1/s", "m/s^2",
                                              "m^3", "m^2", "m^2", "m^2", "m^2", "m^2"};
  static const char *const long_names[PC_NATTR] = {
      "x position component", "y position component", "z position component",
      "x vorticity component", "y vorticity component", "z vorticity component",
      "parcel buoyancy", "parcel volume", "B11 element of shape matrix",
      "B12 element of shape matrix", "B13 element of shape matrix",
      "B22 element of shape matrix", "B23 element of shape matrix"};
  int nc, rc = nc_create(path, NC_CLOBBER | NC_NETCDF4, &nc);
  if (rc != NC_NOERR) {
    snprintf(err, len, "%s: cannot create: %s", path, nc_strerror(rc));
    return -1;
  }
  int dt, dn, dw, var[PC_NATTR], vt, vw[5];
  const char *wnames[5] = {"start_index", "xlo", "xhi", "ylo", "yhi"};
  const char *wlong[5] = {"MPI rank start index", "lower box boundary in x",
                          "upper box boundary in x", "lower box boundary in y",
                          "upper box boundary in y"};
#define NCW(call)                                                              \
  do {                                                                         \
    if ((rc = (call)) != NC_NOERR) {                                           \
      snprintf(err, len, "%s: writing failed: %s", path, nc_strerror(rc));     \
      nc_close(nc);                                                            \
      return -1;                                                               \
    }                                                                          \
  } while (0)
  /* Global attributes as EPIC writes them: version, file type, conventions, creation time. */
  char text[64];
  snprintf(text, sizeof text, "%d.%d", HS_VERSION_MAJOR, HS_VERSION_MINOR);
  NCW(put_text(nc, "haloswap_version", text));
  NCW(put_text(nc, "file_type", "parcels"));
  NCW(put_text(nc, "Conventions", "CF-1.9"));
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(text, sizeof text, "%Y/%m/%d", &tm);
  NCW(put_text(nc, "creation_date", text));
  strftime(text, sizeof text, "%H:%M:%S", &tm);
  NCW(put_text(nc, "creation_time", text));
  NCW(put_text(nc, "creation_zone", "UTC+00:00"));
  NCW(put_text(nc, "source", "haloswap parcel-cluster (EPIC parcel merging)"));
  NCW(nc_put_att_int(nc, NC_GLOBAL, "ncells", NC_INT, 3, b->n));
  NCW(nc_put_att_double(nc, NC_GLOBAL, "extent", NC_DOUBLE, 3, b->extent));
  NCW(nc_put_att_double(nc, NC_GLOBAL, "origin", NC_DOUBLE, 3, b->origin));
  if (run) { /* the run's parameters, so a file says how it was made */
    const pc_setup *su = run->su;
    NCW(put_text(nc, "parcel_cluster_stage", run->stage ? run->stage : "initial"));
    NCW(put_text(nc, "parcel_cluster_input", run->input ? run->input : "artificial set-up"));
    if (run->backend) NCW(put_text(nc, "parcel_cluster_backend", run->backend));
    NCW(nc_put_att_double(nc, NC_GLOBAL, "parcel_cluster_min_vratio", NC_DOUBLE, 1,
                          &su->min_vratio));
    double vmin = pc_vmin(b, su->min_vratio);
    NCW(nc_put_att_double(nc, NC_GLOBAL, "parcel_cluster_vmin", NC_DOUBLE, 1, &vmin));
    NCW(nc_put_att_int(nc, NC_GLOBAL, "parcel_cluster_cycles", NC_INT, 1, &run->cycles));
    NCW(nc_put_att_int(nc, NC_GLOBAL, "parcel_cluster_ranks", NC_INT, 1, &run->nranks));
    if (!run->input) {
      NCW(nc_put_att_int(nc, NC_GLOBAL, "parcel_cluster_nppc", NC_INT, 1, &su->nppc));
      NCW(nc_put_att_double(nc, NC_GLOBAL, "parcel_cluster_small_parcel_fraction", NC_DOUBLE, 1,
                            &su->small_fraction));
      unsigned long long seed = run->seed;
      NCW(nc_put_att_ulonglong(nc, NC_GLOBAL, "parcel_cluster_seed", NC_UINT64, 1, &seed));
      NCW(nc_put_att_int(nc, NC_GLOBAL, "parcel_cluster_shuffle", NC_INT, 1, &su->shuffle));
      NCW(nc_put_att_int(nc, NC_GLOBAL, "parcel_cluster_variable_nppc", NC_INT, 1,
                         &su->variable_nppc));
    }
  }
  NCW(nc_def_dim(nc, "t", NC_UNLIMITED, &dt));
  NCW(nc_def_dim(nc, "n_parcels", (size_t)all->n, &dn));
  NCW(nc_def_dim(nc, "world%size", 1, &dw));
  NCW(nc_def_var(nc, "t", NC_DOUBLE, 1, &dt, &vt));
  NCW(put_meta(nc, vt, "seconds since 1970-01-01", "time"));
  NCW(nc_put_att_text(nc, vt, "standard_name", 4, "time"));
  NCW(nc_put_att_text(nc, vt, "axis", 1, "T"));
  int d2[2] = {dt, dn};
  for (int k = 0; k < PC_NATTR; k++) {
    NCW(nc_def_var(nc, pc_attr_names[k], NC_DOUBLE, 2, d2, &var[k]));
    NCW(put_meta(nc, var[k], units[k], long_names[k]));
  }
  for (int k = 0; k < 5; k++) {
    NCW(nc_def_var(nc, wnames[k], NC_INT, 1, &dw, &vw[k]));
    NCW(put_meta(nc, vw[k], "1", wlong[k]));
  }
  NCW(nc_enddef(nc));
  size_t s0 = 0, c1 = 1;
  double t0 = 0.0;
  NCW(nc_put_vara_double(nc, vt, &s0, &c1, &t0));
  double *buf = malloc((size_t)(all->n ? all->n : 1) * sizeof(double));
  if (!buf) {
    snprintf(err, len, "%s: out of memory", path);
    nc_close(nc);
    return -1;
  }
  for (int k = 0; k < PC_NATTR; k++) {
    for (int i = 0; i < all->n; i++) buf[i] = all->p[i].a[k];
    size_t start[2] = {0, 0}, count[2] = {1, (size_t)all->n};
    rc = nc_put_vara_double(nc, var[k], start, count, buf);
    if (rc != NC_NOERR) {
      free(buf);
      NCW(rc);
    }
  }
  free(buf);
  int wv[5] = {0, 0, b->n[0] - 1, 0, b->n[1] - 1};
  for (int k = 0; k < 5; k++) NCW(nc_put_var_int(nc, vw[k], &wv[k]));
  NCW(nc_close(nc));
#undef NCW
  return 0;
}

#else

int pc_have_netcdf(void) { return 0; }

static int read_file(const char *path, pc_box *b, pc_set *all, double *min_vratio, char *err,
                     size_t len) {
  (void)b;
  (void)all;
  (void)min_vratio;
  snprintf(err, len, "%s: cannot read: parcel-cluster was built without NetCDF (install "
           "libnetcdf-dev and reconfigure)", path);
  return -1;
}

int pc_write_netcdf(const char *path, const pc_box *b, const pc_set *all, int nwriters,
                    const pc_run_info *run, char *err, size_t len) {
  (void)b;
  (void)all;
  (void)nwriters;
  (void)run;
  snprintf(err, len, "%s: cannot write: parcel-cluster was built without NetCDF", path);
  return -1;
}

#endif

int pc_read_netcdf(MPI_Comm comm, const char *path, pc_box *b, pc_set *all, pc_file_info *info,
                   char *err, size_t len) {
  int rank, bad = 0;
  double mv = NAN;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) bad = read_file(path, b, all, &mv, err, len) != 0;
  if (pc_root_verdict(comm, bad, err, err, len)) return -1;
  /* Every rank needs the box to build the decomposition. */
  double bx[9];
  if (rank == 0)
    for (int a = 0; a < 3; a++) {
      bx[a] = b->n[a];
      bx[3 + a] = b->origin[a];
      bx[6 + a] = b->extent[a];
    }
  MPI_Bcast(bx, 9, MPI_DOUBLE, 0, comm);
  MPI_Bcast(&mv, 1, MPI_DOUBLE, 0, comm);
  if (info) info->min_vratio = mv;
  int n[3] = {(int)bx[0], (int)bx[1], (int)bx[2]};
  pc_box_init(b, n, bx + 3, bx + 6);
  return 0;
}
