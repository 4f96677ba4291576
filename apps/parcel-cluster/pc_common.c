/* parcel-cluster: box geometry, artificial configurations (seed Table 5), the group merge and
 * parcel checks shared by the serial and parallel paths. */
#include "pc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pc_attr_names[PC_NATTR] = {
    "x_position", "y_position", "z_position", "x_vorticity", "y_vorticity", "z_vorticity",
    "buoyancy",   "volume",     "B11",        "B12",         "B13",         "B22",
    "B23"};

void pc_box_init(pc_box *b, const int n[3], const double origin[3], const double extent[3]) {
  for (int a = 0; a < 3; a++) {
    b->n[a] = n[a];
    b->origin[a] = origin[a];
    b->extent[a] = extent[a];
    b->dx[a] = extent[a] / n[a];
  }
}

double pc_vmin(const pc_box *b, double min_vratio) {
  return b->dx[0] * b->dx[1] * b->dx[2] / min_vratio;
}

int pc_root_verdict(MPI_Comm comm, int bad, const char *msg, char *err, size_t len) {
  char buf[1024] = "";
  if (bad && msg) snprintf(buf, sizeof buf, "%s", msg);
  MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
  MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, 0, comm);
  if (bad) snprintf(err, len, "%s", buf);
  return bad;
}

int pc_set_reserve(pc_set *s, int n) {
  if (n <= s->cap) return 0;
  int cap = s->cap ? s->cap : 64;
  while (cap < n) cap *= 2;
  pc_parcel *p = realloc(s->p, (size_t)cap * sizeof *p);
  if (!p) return -1;
  s->p = p;
  s->cap = cap;
  return 0;
}

int pc_set_push(pc_set *s, const pc_parcel *p) {
  if (pc_set_reserve(s, s->n + 1)) return -1;
  s->p[s->n++] = *p;
  return 0;
}

void pc_set_free(pc_set *s) {
  free(s->p);
  s->p = NULL;
  s->n = s->cap = 0;
}

int pc_cell_of(const pc_box *b, int axis, double x) {
  int c = (int)floor((x - b->origin[axis]) / b->dx[axis]);
  if (c < 0) c = 0;
  if (c >= b->n[axis]) c = b->n[axis] - 1;
  return c;
}

double pc_wrap(const pc_box *b, int axis, double x) {
  double o = b->origin[axis], L = b->extent[axis];
  if (x < o) x += L * ceil((o - x) / L);
  if (x >= o + L) x -= L * floor((x - o) / L);
  if (x >= o + L || x < o) x = o; /* only reachable through rounding at the boundary */
  return x;
}

double pc_pdiff(const pc_box *b, int axis, double d) {
  double L = b->extent[axis];
  return d - L * floor(d / L + 0.5);
}

/* splitmix64: a counter-based generator, seeded per cell so the configuration does not
 * depend on the decomposition. */
typedef struct {
  uint64_t s;
} pc_rng;

static uint64_t rng_next(pc_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rng_u(pc_rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

static pc_rng rng_seed(uint64_t seed, uint64_t stream) {
  pc_rng r = {seed * 0xD1B54A32D192ED03ull ^ (stream + 1) * 0x9E3779B97F4A7C15ull};
  for (int k = 0; k < 4; k++) rng_next(&r);
  return r;
}

static void make_parcel(const pc_box *b, const pc_setup *su, double vmin, int ix, int iy, int iz,
                        pc_rng *r, pc_parcel *p) {
  const int c[3] = {ix, iy, iz};
  for (int a = 0; a < 3; a++) {
    double lo = b->origin[a] + c[a] * b->dx[a];
    double x = lo + b->dx[a] * rng_u(r);
    if (pc_cell_of(b, a, x) != c[a]) x = nextafter(lo + b->dx[a], lo);
    p->a[PX + a] = x;
  }
  p->a[XI] = -10.0 + 20.0 * rng_u(r);
  p->a[ETA] = -10.0 + 20.0 * rng_u(r);
  p->a[ZETA] = -10.0 + 20.0 * rng_u(r);
  p->a[BUOY] = -1.0 + 2.0 * rng_u(r);
  double v = vmin * rng_u(r) + (1.0 - su->small_fraction) * vmin;
  if (v < 0.25 * vmin) v = 0.25 * vmin;
  p->a[VOL] = v;
  double lam = 1.0 + 3.0 * rng_u(r), mu = 1.0 + 3.0 * rng_u(r);
  double theta = 2.0 * PC_PI * rng_u(r), phi = PC_PI * rng_u(r);
  double abc = 0.75 * v / PC_PI;
  double a2 = pow(abc * lam * mu, 2.0 / 3.0), b2 = a2 / (mu * mu), c2 = a2 / (lam * lam);
  /* a along (theta, phi); b and c complete a right-handed orthonormal frame. */
  double e1[3] = {sin(phi) * cos(theta), sin(phi) * sin(theta), cos(phi)};
  double e2[3] = {cos(phi) * cos(theta), cos(phi) * sin(theta), -sin(phi)};
  double e3[3] = {-sin(theta), cos(theta), 0.0};
  double B[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) B[i][j] = a2 * e1[i] * e1[j] + b2 * e2[i] * e2[j] + c2 * e3[i] * e3[j];
  p->a[B11] = B[0][0];
  p->a[B12] = B[0][1];
  p->a[B13] = B[0][2];
  p->a[B22] = B[1][1];
  p->a[B23] = B[1][2];
}

int pc_generate(const pc_box *b, const pc_setup *su, int c0, int c1, int d0, int d1, pc_set *out) {
  double vmin = pc_vmin(b, su->min_vratio);
  for (int iz = 0; iz < b->n[2]; iz++)
    for (int iy = d0; iy < d1; iy++)
      for (int ix = c0; ix < c1; ix++) {
        uint64_t cell = (uint64_t)ix + (uint64_t)b->n[0] * ((uint64_t)iy + (uint64_t)b->n[1] * iz);
        pc_rng r = rng_seed(su->seed, cell);
        int npp = su->nppc;
        if (su->variable_nppc) {
          int hi = (su->nppc - 10 > 10 ? su->nppc - 10 : 10) + 9;
          npp = 10 + (int)(rng_u(&r) * (hi - 10 + 1));
        }
        if (pc_set_reserve(out, out->n + npp)) return -1;
        for (int k = 0; k < npp; k++) make_parcel(b, su, vmin, ix, iy, iz, &r, &out->p[out->n++]);
      }
  return 0;
}

void pc_shuffle(pc_set *s, uint64_t seed) {
  pc_rng r = rng_seed(seed, 0xFFFFFFFFull);
  for (int i = s->n - 1; i > 0; i--) {
    int j = (int)(rng_u(&r) * (i + 1));
    pc_parcel t = s->p[i];
    s->p[i] = s->p[j];
    s->p[j] = t;
  }
}

double pc_b33(const pc_parcel *p) {
  const double *a = p->a;
  double abc = 0.75 * a[VOL] / PC_PI;
  double minor = a[B11] * a[B22] - a[B12] * a[B12];
  return (abc * abc + a[B11] * a[B23] * a[B23] - 2.0 * a[B12] * a[B13] * a[B23] +
          a[B22] * a[B13] * a[B13]) / minor;
}

static int cmp_parcel(const void *x, const void *y) {
  const pc_parcel *p = x, *q = y;
  static const int order[PC_NATTR] = {PZ, PY, PX, VOL, BUOY, XI, ETA, ZETA, B11, B12, B13, B22, B23};
  for (int k = 0; k < PC_NATTR; k++) {
    double u = p->a[order[k]], v = q->a[order[k]];
    if (u < v) return -1;
    if (u > v) return 1;
  }
  return 0;
}

static int cmp_parcel_ptr(const void *x, const void *y) {
  return cmp_parcel(*(const pc_parcel *const *)x, *(const pc_parcel *const *)y);
}

void pc_sort(pc_parcel *p, int n) { qsort(p, (size_t)n, sizeof *p, cmp_parcel); }

void pc_merge_group(const pc_box *b, pc_parcel *t, const pc_parcel **m, int nm) {
  /* A canonical member order makes the sums independent of where the members came from. */
  qsort(m, (size_t)nm, sizeof *m, cmp_parcel_ptr);
  double vt = t->a[VOL], V = vt;
  for (int k = 0; k < nm; k++) V += m[k]->a[VOL];
  double sx = 0, sy = 0, sz = vt * t->a[PZ];
  double q[4] = {vt * t->a[XI], vt * t->a[ETA], vt * t->a[ZETA], vt * t->a[BUOY]};
  for (int k = 0; k < nm; k++) {
    double v = m[k]->a[VOL];
    sx += v * pc_pdiff(b, 0, m[k]->a[PX] - t->a[PX]);
    sy += v * pc_pdiff(b, 1, m[k]->a[PY] - t->a[PY]);
    sz += v * m[k]->a[PZ];
    q[0] += v * m[k]->a[XI];
    q[1] += v * m[k]->a[ETA];
    q[2] += v * m[k]->a[ZETA];
    q[3] += v * m[k]->a[BUOY];
  }
  double cx = t->a[PX] + sx / V, cy = t->a[PY] + sy / V, cz = sz / V;
  /* Second moments about the merged centroid: B/5 per member plus its offset. */
  double M[6] = {0, 0, 0, 0, 0, 0}; /* 11 12 13 22 23 33 */
  for (int k = -1; k < nm; k++) {
    const pc_parcel *p = k < 0 ? t : m[k];
    double w = p->a[VOL] / V;
    double d[3] = {pc_pdiff(b, 0, p->a[PX] - cx), pc_pdiff(b, 1, p->a[PY] - cy), p->a[PZ] - cz};
    double B33 = pc_b33(p);
    M[0] += w * (5.0 * d[0] * d[0] + p->a[B11]);
    M[1] += w * (5.0 * d[0] * d[1] + p->a[B12]);
    M[2] += w * (5.0 * d[0] * d[2] + p->a[B13]);
    M[3] += w * (5.0 * d[1] * d[1] + p->a[B22]);
    M[4] += w * (5.0 * d[1] * d[2] + p->a[B23]);
    M[5] += w * (5.0 * d[2] * d[2] + B33);
  }
  double det = M[0] * (M[3] * M[5] - M[4] * M[4]) - M[1] * (M[1] * M[5] - M[4] * M[2]) +
               M[2] * (M[1] * M[4] - M[3] * M[2]);
  double abc = 0.75 * V / PC_PI;
  double f = cbrt(abc * abc / det);
  t->a[PX] = pc_wrap(b, 0, cx);
  t->a[PY] = pc_wrap(b, 1, cy);
  t->a[PZ] = cz;
  t->a[XI] = q[0] / V;
  t->a[ETA] = q[1] / V;
  t->a[ZETA] = q[2] / V;
  t->a[BUOY] = q[3] / V;
  t->a[VOL] = V;
  t->a[B11] = f * M[0];
  t->a[B12] = f * M[1];
  t->a[B13] = f * M[2];
  t->a[B22] = f * M[3];
  t->a[B23] = f * M[4];
}

int pc_check_parcel(const pc_box *b, const pc_parcel *p, const char **var, char *why, size_t len) {
  for (int k = 0; k < PC_NATTR; k++)
    if (!isfinite(p->a[k])) {
      *var = pc_attr_names[k];
      snprintf(why, len, "value %g is not finite", p->a[k]);
      return -1;
    }
  for (int a = 0; a < 3; a++) {
    double x = p->a[PX + a], lo = b->origin[a], hi = lo + b->extent[a];
    if (x < lo || x > hi) {
      *var = pc_attr_names[PX + a];
      snprintf(why, len, "position %.17g is outside the box [%g, %g]", x, lo, hi);
      return -1;
    }
  }
  if (!(p->a[VOL] > 0)) {
    *var = "volume";
    snprintf(why, len, "volume %g is not positive", p->a[VOL]);
    return -1;
  }
  double minor = p->a[B11] * p->a[B22] - p->a[B12] * p->a[B12];
  double scale = fabs(p->a[B11]) + fabs(p->a[B22]) + fabs(p->a[B12]);
  if (!(p->a[B11] > 0) || !(p->a[B22] > 0) || !(minor > 1e-12 * scale * scale)) {
    *var = !(p->a[B11] > 0) ? "B11" : !(p->a[B22] > 0) ? "B22" : "B12";
    snprintf(why, len,
             "degenerate shape matrix: B11 = %g, B22 = %g, B11*B22 - B12^2 = %g (must be > 0)",
             p->a[B11], p->a[B22], minor);
    return -1;
  }
  double b33 = pc_b33(p);
  if (!isfinite(b33) || !(b33 > 0)) {
    *var = "B23";
    snprintf(why, len, "degenerate shape matrix: B33 from det B = (3V/4pi)^2 is %g", b33);
    return -1;
  }
  return 0;
}
