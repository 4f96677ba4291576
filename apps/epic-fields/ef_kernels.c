/* epic-fields: the per-rank work of EPIC's par2grid and grid2par (parcel_interpl.f90), its
 * trilinear weights (interpl.f90) and ellipsoid support points (parcel_ellipsoid.f90), written
 * from their documented behaviour. One code path serves a rank's block and the serial
 * reference (whole grid, periodic wrap by index arithmetic), so the arithmetic per parcel and
 * per grid point is the same in both. */
#include "ef.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ef_box_init(ef_box *e, const pc_box *b, double min_vratio) {
  e->b = *b;
  for (int a = 0; a < 3; a++) e->dxi[a] = 1.0 / b->dx[a];
  e->vmin = pc_vmin(b, min_vratio);
  e->zdepth = b->origin[2] + b->dx[2]; /* the lowest grid layer, as EPIC's flux set-ups */
}

double ef_humidity(const pc_parcel *p) {
  /* Parcel files and the generator carry no humidity: derive one from the parcel. */
  return EF_Q0 * (0.8 + 0.1 * p->a[BUOY]);
}

/* Cyclic Jacobi rotations on a symmetric 3x3 matrix: eigenvalues D (descending) and unit
 * eigenvectors in the columns of V. */
static void eig3(const double A[3][3], double D[3], double V[3][3]) {
  double a[3][3];
  memcpy(a, A, sizeof a);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) V[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; sweep++) {
    int rotated = 0;
    for (int p = 0; p < 2; p++)
      for (int q = p + 1; q < 3; q++) {
        double apq = a[p][q];
        if (fabs(apq) <= 1e-18 * (fabs(a[p][p]) + fabs(a[q][q]))) continue;
        rotated = 1;
        double theta = (a[q][q] - a[p][p]) / (2.0 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        a[p][p] -= t * apq;
        a[q][q] += t * apq;
        a[p][q] = a[q][p] = 0.0;
        for (int r = 0; r < 3; r++) {
          if (r != p && r != q) {
            double arp = a[r][p], arq = a[r][q];
            a[r][p] = a[p][r] = c * arp - s * arq;
            a[r][q] = a[q][r] = s * arp + c * arq;
          }
          double vrp = V[r][p], vrq = V[r][q];
          V[r][p] = c * vrp - s * vrq;
          V[r][q] = s * vrp + c * vrq;
        }
      }
    if (!rotated) break;
  }
  for (int i = 0; i < 3; i++) D[i] = a[i][i];
  for (int i = 0; i < 2; i++) /* selection sort, descending */
    for (int j = i + 1; j < 3; j++)
      if (D[j] > D[i]) {
        double t = D[i];
        D[i] = D[j];
        D[j] = t;
        for (int r = 0; r < 3; r++) {
          t = V[r][i];
          V[r][i] = V[r][j];
          V[r][j] = t;
        }
      }
}

void ef_support_points(const pc_parcel *p, double pts[12]) {
  const double *a = p->a;
  double B[3][3] = {{a[B11], a[B12], a[B13]}, {a[B12], a[B22], a[B23]}, {a[B13], a[B23], pc_b33(p)}};
  double D[3], V[3][3];
  eig3(B, D, V);
  /* Points at angles pi/4 + j pi/2 on the ellipse of the two largest axes, scaled by
   * sqrt(2/5), with the smallest axis removed (EPIC's Veta, Vtau). */
  const double rho = sqrt(2.0 / 5.0);
  double se = sqrt(fabs(D[0] - D[2])) * rho, st = sqrt(fabs(D[1] - D[2])) * rho;
  for (int j = 0; j < 4; j++) {
    double th = (2 * j + 1) * (PC_PI / 4.0), c = cos(th), s = sin(th);
    for (int r = 0; r < 3; r++) pts[3 * j + r] = a[PX + r] + (se * V[r][0]) * c + (st * V[r][1]) * s;
  }
}

/* EPIC's trilinear: lower grid point (global) and weights w[k][j][i]. */
static void trilinear(const ef_box *e, const double pos[3], long idx[3], double w[2][2][2]) {
  double f[3];
  for (int a = 0; a < 3; a++) {
    double x = (pos[a] - e->b.origin[a]) * e->dxi[a];
    idx[a] = (long)floor(x);
    f[a] = x - (double)idx[a];
  }
  double px = f[0], pxc = 1.0 - px, py = f[1], pyc = 1.0 - py, pz = f[2], pzc = 1.0 - pz;
  double w00 = pyc * pxc, w10 = pyc * px, w01 = py * pxc, w11 = py * px;
  w[0][0][0] = pzc * w00;
  w[0][0][1] = pzc * w10;
  w[0][1][0] = pzc * w01;
  w[0][1][1] = pzc * w11;
  w[1][0][0] = pz * w00;
  w[1][0][1] = pz * w10;
  w[1][1][0] = pz * w01;
  w[1][1][1] = pz * w11;
}

/* Local index of global point gi along x (axis 0) or y (1); -1 (and *out untouched) when a
 * rank's block does not hold it. */
static int map_xy(const ef_grid *g, int axis, long gi, int *out) {
  long n = axis ? g->gny : g->gnx, o = axis ? g->oy : g->ox, nl = axis ? g->ny : g->nx;
  long i = gi - o;
  if (g->wrap) {
    i %= n;
    if (i < 0) i += n;
  } else if (i < -g->hlo || i >= nl + g->hhi) {
    return -1;
  }
  *out = (int)i;
  return 0;
}

/* The 2 x 2 x 2 nodes around a support point, or -1 if they are not all held. */
static int nodes(const ef_grid *g, const long idx[3], int ix[2], int jy[2]) {
  if (idx[2] < -1 || idx[2] > g->nz) return -1;
  for (int d = 0; d < 2; d++)
    if (map_xy(g, 0, idx[0] + d, &ix[d]) || map_xy(g, 1, idx[1] + d, &jy[d])) return -1;
  return 0;
}

/* pt: support point 0..3, or -1 for the parcel's own position. */
static int too_far(const ef_grid *g, const ef_parcels *ps, int n, int pt, const long idx[3],
                   char *why, size_t len) {
  const double *x = pt < 0 ? ps->p[n].a + PX : ps->pts + 12 * n + 3 * pt;
  snprintf(why, len,
           "parcel %llu: %s at (%.6g, %.6g, %.6g) falls in cell (%ld, %ld, %ld), outside this "
           "rank's cells %d..%d x %d..%d widened by EPIC's halo (1 below, 2 above) and z "
           "-1..%d: the parcel is larger than a grid cell or not on its owner",
           (unsigned long long)ps->key[n], pt < 0 ? "its position" : "a support point", x[0],
           x[1], x[2], idx[0], idx[1], idx[2], g->ox, g->ox + g->nx - 1, g->oy,
           g->oy + g->ny - 1, g->nz);
  return -1;
}

/* Trilinear stencil of one support point: the weights w[dk][dj][di] and the k = idx[2] cells
 * c[di][dj] of its 2 x 2 columns, shared by the deposit and the interpolation. */
typedef struct {
  long idx[3];
  double w[2][2][2];
  size_t c[2][2];
} stencil;

/* Support point pt of parcel m; too_far's -1 (and why) if its nodes are not all held. */
static int point_stencil(const ef_grid *g, const ef_box *e, const ef_parcels *ps, int m, int pt,
                         stencil *st, char *why, size_t len) {
  int ix[2], jy[2];
  trilinear(e, ps->pts + 12 * m + 3 * pt, st->idx, st->w);
  if (nodes(g, st->idx, ix, jy)) return too_far(g, ps, m, pt, st->idx, why, len);
  for (int di = 0; di < 2; di++)
    for (int dj = 0; dj < 2; dj++) st->c[di][dj] = ef_at(g, ix[di], jy[dj], (int)st->idx[2]);
  return 0;
}

/* Buoyancy plus the latent heating of the condensed humidity. */
static double total_buoyancy(const ef_box *e, const double *a, double hum) {
  double qc = hum - EF_Q0 * exp(EF_LAMBDA_C * (e->b.origin[2] - a[PZ]));
  return a[BUOY] + EF_GLAT * (qc > 0.0 ? qc : 0.0);
}

int ef_deposit_bounds(ef_grid *g, const ef_box *e, const ef_parcels *ps, int apriori,
                      double bd[EF_NBOUND], char *why, size_t len) {
  double b[EF_NBOUND]; /* local: no aliasing with the scratch arrays */
  for (int i = 0; i < EF_NBOUND; i++) b[i] = 0.0;
  memset(g->nparg, 0, g->n * sizeof(int32_t));
  memset(g->volg, 0, g->n * sizeof(double));
  b[EF_BD_VAL + EF_VOLG] = 1.0;
  int bad = -1;
  for (int m = 0; m < ps->n && bad < 0; m++) {
    const double *a = ps->p[m].a;
    double hum = ef_humidity(&ps->p[m]), v = 0.25 * a[VOL];
    double x[EF_NFLOAT] = {1.0, fabs(a[XI]), fabs(a[ETA]), fabs(a[ZETA]),
                           fabs(total_buoyancy(e, a, hum)), fabs(a[BUOY]), hum};
    /* a contribution is fl(fl(v w) x) with weight w <= 1, so at most fl(v |x|) */
    for (int f = 0; f < EF_NFLOAT; f++) {
      if (v * x[f] > b[f]) b[f] = v * x[f];
      if (x[f] > b[EF_BD_VAL + f]) b[EF_BD_VAL + f] = x[f];
    }
    /* the parcel's cell as ownership defines it (clamped), counted on its owner */
    int cell[3];
    for (int d = 0; d < 3; d++) cell[d] = pc_cell_of(&e->b, d, a[PX + d]);
    int ci = cell[0] - g->ox, cj = cell[1] - g->oy;
    if (ci < 0 || ci >= g->nx || cj < 0 || cj >= g->ny) {
      bad = m;
      break;
    }
    size_t c = ef_at(g, ci, cj, cell[2]);
    int32_t cnt = ++g->nparg[c];
    double vmax = a[VOL] > g->volg[c] ? a[VOL] : g->volg[c];
    g->volg[c] = vmax;
    if (cnt > b[EF_BD_CELL]) b[EF_BD_CELL] = cnt;
    if (cnt * vmax > b[EF_BD_VEST]) b[EF_BD_VEST] = cnt * vmax;
    for (int pt = 0; pt < 4 * apriori; pt++)
      for (int d = 0; d < 3; d++) {
        /* the cell trilinear() gives, minus the parcel's; floor inline (no libm call) */
        double y = (ps->pts[12 * m + 3 * pt + d] - e->b.origin[d]) * e->dxi[d];
        double fl = (double)(long)y, off = (fl > y ? fl - 1.0 : fl) - cell[d];
        if (-off > b[EF_BD_BELOW + d]) b[EF_BD_BELOW + d] = -off;
        if (off > b[EF_BD_ABOVE + d]) b[EF_BD_ABOVE + d] = off;
      }
  }
  memcpy(bd, b, sizeof b);
  if (bad < 0) return 0;
  snprintf(why, len, "parcel %llu: its cell is not one of this rank's",
           (unsigned long long)ps->key[bad]);
  return -1;
}

/* 2^(ceil(log2 x) - bits), at least the smallest normal double; 0 for x = 0, -1 if too large
 * (1.5 * 2^52 q, the rounding constant, must be finite). */
static double pow2_above(double x, int bits) {
  if (x == 0.0) return 0.0;
  if (!isfinite(x)) return -1.0;
  int ex;
  double fr = frexp(x, &ex); /* x = fr 2^ex, fr in [0.5, 1) */
  int e = (fr == 0.5 ? ex - 1 : ex) - bits;
  if (e < DBL_MIN_EXP - 1) e = DBL_MIN_EXP - 1; /* a larger q is as exact */
  return e > DBL_MAX_EXP - 54 ? -1.0 : ldexp(1.0, e);
}

int ef_quanta(const double bd[EF_NBOUND], int apriori, double q[EF_NFLOAT], double *kmax) {
  /* A node takes one contribution per support point in its 8 cells: from the parcels whose
   * cells lie within (below + above + 2) cells of it per axis, 4 points each. */
  double k = 4.0 * bd[EF_BD_CELL];
  for (int d = 0; d < 3; d++) k *= bd[EF_BD_BELOW + d] + bd[EF_BD_ABOVE + d] + 2.0;
  *kmax = apriori ? k : 0.0;
  for (int f = 0; f < EF_NFLOAT; f++) {
    /* a priori: a node's sum stays below 2^53 q with room for the rounding (each |rounded|
     * <= |x| + q/2) and for k bd's own rounding. Estimate: a node's sum of |contributions|
     * is at most the largest |value| times its volg, estimated as twice the most volume in a
     * cell (a node's hat weights span 8 cells) and checked after the exchange
     * (ef_quanta_hold). */
    q[f] = apriori ? pow2_above(k * bd[f], 52)
                   : pow2_above(2.0 * bd[EF_BD_VAL + f] * bd[EF_BD_VEST], 51);
    if (q[f] < 0.0) return -1;
  }
  return 0;
}

int ef_quanta_hold(const double bd[EF_NBOUND], const double q[EF_NFLOAT], double max_volg) {
  /* A node's sum of |contributions| <= |value|max * (volg + its rounding): a little within
   * 2^51 q, every contribution was within round_to's range and every sum (< 2^53 q with the
   * rounding of every term) exact. */
  for (int f = 0; f < EF_NFLOAT; f++)
    if (!(bd[EF_BD_VAL + f] * max_volg <= 0x1.fp50 * q[f])) return 0;
  return 1;
}

double ef_max_volg(const ef_grid *g) {
  double m = 0.0;
  for (size_t i = 0; i < g->n; i++)
    if (!(g->volg[i] <= m)) m = g->volg[i];
  return m;
}

/* x rounded to a multiple of q, r = 1.5 * 2^52 q: x + r lies in [2^52 q, 2^53 q] where the
 * doubles are the multiples of q (|x| <= 2^51 q when the quanta hold); exact subtraction.
 * r = 0: x itself. Needs IEEE double arithmetic as written (no -ffast-math reassociation). */
static inline double round_to(double x, double r) { return (x + r) - r; }

int ef_par2grid_deposit(ef_grid *g, const ef_box *e, const ef_parcels *ps, int absval,
                        const double *q, char *why, size_t len) {
  const size_t n = g->n;
  double r[EF_NFLOAT];
  for (int f = 0; f < EF_NFLOAT; f++) r[f] = q && !absval ? 0x1.8p52 * q[f] : 0.0;
  memset(g->volg, 0, n * sizeof(double));
  memset(g->vortg, 0, 3 * n * sizeof(double));
  memset(g->tbuoyg, 0, n * sizeof(double));
  memset(g->dbuoyg, 0, n * sizeof(double));
  memset(g->humg, 0, n * sizeof(double));
  memset(g->nparg, 0, n * sizeof(int32_t));
  memset(g->nsparg, 0, n * sizeof(int32_t));
  double *vx = g->vortg, *vy = g->vortg + n, *vz = g->vortg + 2 * n;
  for (int m = 0; m < ps->n; m++) {
    const double *a = ps->p[m].a;
    double pvol = a[VOL], hum = ef_humidity(&ps->p[m]), btot = total_buoyancy(e, a, hum);
    /* the parcel's own cell: the counts */
    long c[3];
    for (int d = 0; d < 3; d++) c[d] = (long)floor((a[PX + d] - e->b.origin[d]) * e->dxi[d]);
    int ci, cj;
    if (c[2] < -1 || c[2] > g->nz || map_xy(g, 0, c[0], &ci) || map_xy(g, 1, c[1], &cj))
      return too_far(g, ps, m, -1, c, why, len);
    size_t cc = ef_at(g, ci, cj, (int)c[2]);
    g->nparg[cc] += 1;
    if (pvol <= e->vmin) g->nsparg[cc] += 1;
    for (int pt = 0; pt < 4; pt++) {
      stencil st;
      if (point_stencil(g, e, ps, m, pt, &st, why, len)) return -1;
      for (int di = 0; di < 2; di++)
        for (int dj = 0; dj < 2; dj++) {
          for (int dk = 0; dk < 2; dk++) {
            size_t p = st.c[di][dj] + (size_t)dk;
            double wt = (0.25 * pvol) * st.w[dk][dj][di];
            if (absval) {
              vx[p] += fabs(wt * a[XI]);
              vy[p] += fabs(wt * a[ETA]);
              vz[p] += fabs(wt * a[ZETA]);
              g->dbuoyg[p] += fabs(wt * a[BUOY]);
              g->humg[p] += wt * hum;
              g->tbuoyg[p] += fabs(wt * btot);
            } else {
              vx[p] += round_to(wt * a[XI], r[EF_VORTX]);
              vy[p] += round_to(wt * a[ETA], r[EF_VORTY]);
              vz[p] += round_to(wt * a[ZETA], r[EF_VORTZ]);
              g->dbuoyg[p] += round_to(wt * a[BUOY], r[EF_DBUOYG]);
              g->humg[p] += round_to(wt * hum, r[EF_HUMG]);
              g->tbuoyg[p] += round_to(wt * btot, r[EF_TBUOYG]);
            }
            g->volg[p] += round_to(wt, r[EF_VOLG]);
          }
        }
    }
  }
  /* EPIC folds the counts' z halo before the exchange and checks the total. */
  long total = 0;
  const int nz = g->nz;
  for (int i = -g->hlo; i < g->nx + g->hhi; i++)
    for (int j = -g->hlo; j < g->ny + g->hhi; j++) {
      int32_t *np = g->nparg + ef_at(g, i, j, -1) + 1, *ns = g->nsparg + ef_at(g, i, j, -1) + 1;
      np[0] += np[-1];
      np[nz - 1] += np[nz];
      ns[0] += ns[-1];
      ns[nz - 1] += ns[nz];
      for (int k = 0; k < nz; k++) total += np[k];
    }
  if (total != ps->n) {
    snprintf(why, len, "par2grid: %ld parcels counted on the grid, %d held", total, ps->n);
    return -1;
  }
  return 0;
}

/* col points at level 0 of a column (index -1 is the lower halo level). */
static void fold_z(double *col, int nz) {
  col[0] = 2.0 * col[0];
  col[nz] = 2.0 * col[nz];
  col[1] = col[1] + col[-1];
  col[nz - 1] = col[nz - 1] + col[nz + 1];
}

static void extrapolate_z(double *col, int nz, int absval) {
  if (absval) {
    col[-1] = 2.0 * fabs(col[0]) + fabs(col[1]);
    col[nz + 1] = 2.0 * fabs(col[nz]) + fabs(col[nz - 1]);
  } else {
    col[-1] = 2.0 * col[0] - col[1];
    col[nz + 1] = 2.0 * col[nz] - col[nz - 1];
  }
}

void ef_par2grid_finish(ef_grid *g, int absval) {
  const int nz = g->nz;
  for (int i = -g->hlo; i < g->nx + g->hhi; i++)
    for (int j = -g->hlo; j < g->ny + g->hhi; j++) {
      size_t c = ef_at(g, i, j, 0);
      double *vol = g->volg + c;
      double *q[6] = {g->vortg + c, g->vortg + g->n + c, g->vortg + 2 * g->n + c, g->tbuoyg + c,
                      g->dbuoyg + c, g->humg + c};
      fold_z(vol, nz);
      for (int f = 0; f < 6; f++) fold_z(q[f], nz);
      /* zero volume only where no parcel reaches (a sparse file): left undivided */
      for (int f = 0; f < 6; f++)
        for (int k = 0; k <= nz; k++)
          if (vol[k] != 0.0) q[f][k] = q[f][k] / vol[k];
      for (int f = 0; f < 4; f++) extrapolate_z(q[f], nz, absval); /* vortg, tbuoyg */
    }
}

void ef_fill_analytic(ef_grid *g, const ef_box *e, double t) {
  const int nz = g->nz, Z = g->Z;
  const double nan = NAN;
  double *all[5] = {g->velog, g->velgradg, g->vtend, g->binc, g->hinc};
  const size_t cnt[5] = {3 * g->n, 8 * g->n, 3 * g->n, g->n2, g->n2};
  if (!g->wrap)
    for (int f = 0; f < 5; f++)
      for (size_t i = 0; i < cnt[f]; i++) all[f][i] = nan;
  const double kx = 2.0 * PC_PI / e->b.extent[0], ky = 2.0 * PC_PI / e->b.extent[1];
  const double kz = PC_PI / e->b.extent[2];
  double *sz = malloc((size_t)Z * sizeof *sz), *cz = malloc((size_t)Z * sizeof *cz);
  if (!sz || !cz) abort();
  for (int k = -1; k <= nz + 1; k++) {
    double Zp = (PC_PI * k) / nz;
    sz[k + 1] = sin(Zp);
    cz[k + 1] = cos(Zp);
  }
  const size_t n = g->n;
  for (int i = 0; i < g->nx; i++) {
    long gi = g->ox + i;
    double X = (2.0 * PC_PI * (double)gi) / g->gnx + t, sx = sin(X), cx = cos(X);
    for (int j = 0; j < g->ny; j++) {
      long gj = g->oy + j;
      double Y = (2.0 * PC_PI * (double)gj) / g->gny, sy = sin(Y), cy = cos(Y);
      size_t c2 = ef_at2(g, i, j);
      g->binc[c2] = 0.1 * (1.0 + cx * cy);
      g->hinc[c2] = 0.01 * (1.0 + sx * sy);
      size_t c0 = ef_at(g, i, j, -1);
      for (int k = 0; k < Z; k++) {
        size_t c = c0 + (size_t)k;
        double u = sx * cy * cz[k], v = -(cx * sy * cz[k]), w = 0.5 * (cx * cy * sz[k]);
        g->velog[c] = u;
        g->velog[n + c] = v;
        g->velog[2 * n + c] = w;
        double *vg = g->velgradg;
        vg[c] = kx * (cx * cy * cz[k]);                  /* du/dx */
        vg[n + c] = -(ky * (sx * sy * cz[k]));           /* du/dy */
        vg[2 * n + c] = -(kz * (sx * cy * sz[k]));       /* du/dz */
        vg[3 * n + c] = kx * (sx * sy * cz[k]);          /* dv/dx */
        vg[4 * n + c] = -(ky * (cx * cy * cz[k]));       /* dv/dy */
        vg[5 * n + c] = kz * (cx * sy * sz[k]);          /* dv/dz */
        vg[6 * n + c] = -(0.5 * kx * (sx * cy * sz[k])); /* dw/dx */
        vg[7 * n + c] = -(0.5 * ky * (cx * sy * sz[k])); /* dw/dy */
        g->vtend[c] = sx * sy * cz[k];
        g->vtend[n + c] = cx * cy * sz[k];
        g->vtend[2 * n + c] = sx * cy * cz[k];
      }
    }
  }
  free(sz);
  free(cz);
}

int ef_grid2par(const ef_grid *g, const ef_box *e, ef_parcels *ps, char *why, size_t len) {
  const size_t n = g->n;
  for (int m = 0; m < ps->n; m++) {
    double *out = ps->out + (size_t)EF_NOUT * m;
    for (int q = 0; q < EF_NOUT; q++) out[q] = 0.0;
    for (int pt = 0; pt < 4; pt++) {
      stencil st;
      if (point_stencil(g, e, ps, m, pt, &st, why, len)) return -1;
      /* sum(weights * f(ks:ks+1, js:js+1, is:is+1)) in Fortran element order */
#define EF_SUM(F, s)                                                                           \
  do {                                                                                         \
    s = 0.0;                                                                                   \
    for (int di = 0; di < 2; di++)                                                             \
      for (int dj = 0; dj < 2; dj++)                                                           \
        for (int dk = 0; dk < 2; dk++) s += st.w[dk][dj][di] * (F)[st.c[di][dj] + (size_t)dk]; \
  } while (0)
      double s;
      for (int l = 0; l < 3; l++) {
        EF_SUM(g->velog + l * n, s);
        out[EF_DPOS + l] += 0.25 * s;
      }
      for (int l = 0; l < 8; l++) {
        EF_SUM(g->velgradg + l * n, s);
        out[EF_STRAIN + l] += 0.25 * s;
      }
      for (int l = 0; l < 3; l++) {
        EF_SUM(g->vtend + l * n, s);
        out[EF_DVOR + l] += 0.25 * s;
      }
#undef EF_SUM
    }
    /* Surface fluxes on parcels in the lowest layer: bilinear in x and y. */
    const double *a = ps->p[m].a;
    if (a[PZ] < e->zdepth) {
      long idx[2];
      double f[2];
      for (int d = 0; d < 2; d++) {
        double x = (a[PX + d] - e->b.origin[d]) * e->dxi[d];
        idx[d] = (long)floor(x);
        f[d] = x - (double)idx[d];
      }
      double px = f[0], pxc = 1.0 - px, py = f[1], pyc = 1.0 - py;
      double ww[2][2] = {{pyc * pxc, pyc * px}, {py * pxc, py * px}}; /* [j][i] */
      int ix[2], jy[2];
      for (int d = 0; d < 2; d++)
        if (map_xy(g, 0, idx[0] + d, &ix[d]) || map_xy(g, 1, idx[1] + d, &jy[d])) {
          long id3[3] = {idx[0], idx[1], 0};
          return too_far(g, ps, m, -1, id3, why, len);
        }
      double fac = ((e->zdepth - a[PZ]) * e->dxi[2]) * EF_DT, sb = 0.0, sh = 0.0;
      for (int di = 0; di < 2; di++)
        for (int dj = 0; dj < 2; dj++) {
          size_t c2 = ef_at2(g, ix[di], jy[dj]);
          sb += ww[dj][di] * g->binc[c2];
          sh += ww[dj][di] * g->hinc[c2];
        }
      out[EF_DBUOY] = fac * sb;
      out[EF_DHUM] = fac * sh;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- memory */
static void *grab(ef_grid *g, hs_decomp d, size_t bytes, int *bad) {
  void *x = NULL;
  if (g->shared && d) {
    if (hs_alloc(d, bytes, &x) != HS_OK) *bad = 1;
    else memset(x, 0, bytes);
  } else {
    x = calloc(1, bytes ? bytes : 1);
    if (!x) *bad = 1;
  }
  return x;
}

int ef_grid_alloc(ef_grid *g, hs_decomp d, int shared) {
  g->shared = shared;
  g->X = g->nx + g->hlo + g->hhi;
  g->Y = g->ny + g->hlo + g->hhi;
  g->Z = g->nz + 3;
  g->n2 = (size_t)g->X * (size_t)g->Y;
  g->n = g->n2 * (size_t)g->Z;
  const size_t n = g->n, D = sizeof(double);
  int bad = 0; /* hs_alloc is collective: every rank makes every call */
  g->volg = grab(g, d, n * D, &bad);
  g->vortg = grab(g, d, 3 * n * D, &bad);
  g->tbuoyg = grab(g, d, n * D, &bad);
  g->dbuoyg = grab(g, d, n * D, &bad);
  g->humg = grab(g, d, n * D, &bad);
  g->nparg = grab(g, d, n * sizeof(int32_t), &bad);
  g->nsparg = grab(g, d, n * sizeof(int32_t), &bad);
  g->velog = grab(g, d, 3 * n * D, &bad);
  g->velgradg = grab(g, d, 8 * n * D, &bad);
  g->vtend = grab(g, d, 3 * n * D, &bad);
  g->binc = grab(g, d, g->n2 * D, &bad);
  g->hinc = grab(g, d, g->n2 * D, &bad);
  return bad ? -1 : 0;
}

void ef_grid_free(ef_grid *g, hs_decomp d) {
  void *all[12] = {g->volg, g->vortg, g->tbuoyg, g->dbuoyg, g->humg, g->nparg,
                   g->nsparg, g->velog, g->velgradg, g->vtend, g->binc, g->hinc};
  for (int i = 0; i < 12; i++) {
    if (g->shared && d) {
      if (all[i]) hs_free(d, all[i]);
    } else {
      free(all[i]);
    }
  }
  g->volg = g->vortg = g->tbuoyg = g->dbuoyg = g->humg = NULL;
  g->nparg = g->nsparg = NULL;
  g->velog = g->velgradg = g->vtend = g->binc = g->hinc = NULL;
}
