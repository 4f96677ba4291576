/* lare-mini: an ideal-MHD Lagrangian-remap solver on Lare3d's staggered layout, with Lare3d's
 * exchange pattern, swapping the model's own arrays through haloswap's staggered geometry.
 *
 * Layout (Lare3d, src/core/mpi_routines.F90; here C arrays, x fastest): per rank n cells per
 * axis, all three axes decomposed and periodic, remainder cells to the high ranks;
 *   rho, energy  cell-centred,           2 ghost cells each side       (-1:n+2 in Lare3d)
 *   vx, vy, vz   node-centred, n+1 nodes, 2 ghost nodes each side      (-2:n+2), upper rank
 *                owns the node plane two ranks share
 *   bx, by, bz   face-centred on their own axis (n+1 faces), cell-centred on the others,
 *                2 ghosts each side; the lower rank owns the shared face
 * Scheme (docs/mini-apps.md, "lare-mini"): a Lagrangian predictor-corrector step (pressure and
 * Lorentz forces at the nodes, pdV work in the cells) followed by a remap sweep per axis (mass,
 * energy and momentum fluxes, MUSCL with a monotonised-central limiter) in which B moves by
 * constrained transport: each sweep updates the face fields by the discrete curl of one part
 * of the edge EMF -v x B (half-step v and half-step B), so div B stays at round-off.
 * Exchanges per step, as Lare3d's non-CAUCHY path: bfield (half-step B), remap_v (half-step v),
 * velocity, energy+density+velocity (end of the Lagrangian step); per sweep the mass flux along
 * the sweep axis only, then every field; a final bfield.
 * Every owned value is computed by the same expression from the same inputs whatever the
 * decomposition, so results are bit-identical across transports and rank counts. */
#include "app_common.h"
#include "haloswap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROG "lare-mini"
#define H 2               /* allocated halo and swap depth (Lare3d's ng) */
#define GAMMA (5.0 / 3.0)
#define DIVB_TOL 1e-12    /* |div B| dx / max|B| allowed at every step */
#define MAX_RES 4
#define TWO_PI 6.283185307179586476925286766559

/* ------------------------------------------------------------------ arrays */
typedef struct {
  double *p, *o;   /* allocation; local point (0,0,0) */
  ptrdiff_t s[3];  /* element strides (x contiguous) */
  size_t size;     /* elements */
} arr;

#define AT(A, i, j, k) ((A).o[(ptrdiff_t)(i) + (ptrdiff_t)(j) * (A).s[1] + (ptrdiff_t)(k) * (A).s[2]])

/* The same array seen with axis a first: R(V, i, j, k) is the point i along a, j along
 * (a+1)%3, k along (a+2)%3, so one sweep routine serves the three axes. */
typedef struct {
  double *o;
  ptrdiff_t a, b, c;
} rview;
static rview rot(const arr *A, int a) {
  rview r = {A->o, A->s[a], A->s[(a + 1) % 3], A->s[(a + 2) % 3]};
  return r;
}
#define R(V, i, j, k) ((V).o[(ptrdiff_t)(i) * (V).a + (ptrdiff_t)(j) * (V).b + (ptrdiff_t)(k) * (V).c])

/* node_mask bit a: n+1 interior points on axis a (node or face), else n (cell). */
static int arr_alloc(arr *A, const int n[3], int node_mask) {
  int e[3];
  for (int a = 0; a < 3; a++) e[a] = n[a] + ((node_mask >> a) & 1) + 2 * H;
  A->s[0] = 1;
  A->s[1] = e[0];
  A->s[2] = (ptrdiff_t)e[0] * e[1];
  A->size = (size_t)e[0] * e[1] * e[2];
  A->p = calloc(A->size, sizeof(double));
  A->o = A->p ? A->p + H * (A->s[0] + A->s[1] + A->s[2]) : NULL;
  return A->p != NULL;
}

/* ------------------------------------------------------------------ state */
enum { PH_LAG, PH_DM, PH_FIELDS, PH_BFIELD, NPH };
static const char *phase_name[NPH] = {"lagrangian", "remap_dm", "remap_fields", "remap_bfield"};

typedef struct {
  int n[3], off[3], N[3];
  double dx[3], idx[3], dxmin;
  arr rho, en, v[3], v1[3], b[3], b1[3]; /* swapped: the model's own arrays */
  arr ph, cv1, cv2, rho1;                /* cell work */
  arr w1, w2, w3, dm, dmq, mv, den;      /* work with node extents */
  double t;
  int step;
  double tph[NPH]; /* seconds in each exchange phase (timed steps) */
  int timing;
} state;

typedef struct {
  double rho0, p0, b0, amp, k[3], kmag, khat[3], e1[3], e2[3], omega, period;
  double v0[3]; /* uniform background flow: the remap carries the wave (Doppler shift) */
} problem;

typedef struct {
  hs_plan all, b, v, erv, dm[3];
} plans;

static void fatal_swap(const char *what, int rc) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  fprintf(stderr, "%s: rank %d: %s swap failed (%s): %s\n", PROG, r, what, hs_status_name(rc),
          hs_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void xswap(state *S, hs_plan p, void *const *arrays, int phase, const char *what) {
  double t0 = MPI_Wtime();
  int rc = hs_swap(p, arrays);
  if (S->timing) S->tph[phase] += MPI_Wtime() - t0;
  if (rc != HS_OK) fatal_swap(what, rc);
}

/* ------------------------------------------------------------------ numerics */
/* Monotonised-central limited slope. */
static inline double mc(double dl, double dr) {
  if (dl * dr <= 0.0) return 0.0;
  double c = 0.5 * (dl + dr), m = 2.0 * fmin(fabs(dl), fabs(dr));
  return fabs(c) < m ? c : copysign(m, c);
}

/* Second-order upwind (MUSCL) value on the face between qm1 and q0 for velocity u with
 * Courant number nu: the mean of the upwind profile over the volume crossing the face. */
static inline double muscl(double qm2, double qm1, double q0, double qp1, double u, double nu) {
  if (u >= 0.0) return qm1 + 0.5 * (1.0 - nu) * mc(qm1 - qm2, q0 - qm1);
  return q0 - 0.5 * (1.0 - nu) * mc(q0 - qm1, qp1 - q0);
}

/* d v_a / d x_a in cell (i,j,k): mean over the four nodes of the upper a-face minus the lower. */
static inline double dpart(const arr *v, int a, int i, int j, int k, double ida) {
  ptrdiff_t sa = v->s[a], sb = v->s[(a + 1) % 3], sc = v->s[(a + 2) % 3];
  const double *q = &AT(*v, i, j, k);
  double hi = (q[sa] + q[sa + sb]) + (q[sa + sc] + q[sa + sb + sc]);
  double lo = (q[0] + q[sb]) + (q[sc] + q[sb + sc]);
  return (hi - lo) * (0.25 * ida);
}

/* Lagrangian step: predictor-corrector for the velocity, pdV work for the energy, the
 * Lagrangian density; B itself moves only in the remap (Lare3d's non-CAUCHY path). */
static void lagrangian(state *S, plans *P, double dt) {
  const int nx = S->n[0], ny = S->n[1], nz = S->n[2];
  const double h = 0.5 * dt, gm1 = GAMMA - 1.0;
  const double idx = S->idx[0], idy = S->idx[1], idz = S->idx[2];
  arr *vx = &S->v[0], *vy = &S->v[1], *vz = &S->v[2];
  arr *bx = &S->b[0], *by = &S->b[1], *bz = &S->b[2];

  /* Predicted (half-step) pressure in cells -1..n. */
  for (int k = -1; k <= nz; k++)
    for (int j = -1; j <= ny; j++)
      for (int i = -1; i <= nx; i++) {
        double div = (dpart(vx, 0, i, j, k, idx) + dpart(vy, 1, i, j, k, idy)) +
                     dpart(vz, 2, i, j, k, idz);
        double r = AT(S->rho, i, j, k), e = AT(S->en, i, j, k);
        double dv = h * div, e1 = e - gm1 * e * dv;
        AT(S->ph, i, j, k) = gm1 * r * e1 / (1.0 + dv);
      }

  /* Half-step B on the interior faces: B - dt/2 curl E with the edge EMF E = -v x B. */
  arr *ex = &S->w1, *ey = &S->w2, *ez = &S->w3;
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        if (i < nx) { /* Ex: x-cell i, y-node j, z-node k */
          double vye = 0.5 * (AT(*vy, i, j, k) + AT(*vy, i + 1, j, k));
          double vze = 0.5 * (AT(*vz, i, j, k) + AT(*vz, i + 1, j, k));
          double bye = 0.5 * (AT(*by, i, j, k - 1) + AT(*by, i, j, k));
          double bze = 0.5 * (AT(*bz, i, j - 1, k) + AT(*bz, i, j, k));
          AT(*ex, i, j, k) = vze * bye - vye * bze;
        }
        if (j < ny) { /* Ey: x-node i, y-cell j, z-node k */
          double vze = 0.5 * (AT(*vz, i, j, k) + AT(*vz, i, j + 1, k));
          double vxe = 0.5 * (AT(*vx, i, j, k) + AT(*vx, i, j + 1, k));
          double bxe = 0.5 * (AT(*bx, i, j, k - 1) + AT(*bx, i, j, k));
          double bze = 0.5 * (AT(*bz, i - 1, j, k) + AT(*bz, i, j, k));
          AT(*ey, i, j, k) = vxe * bze - vze * bxe;
        }
        if (k < nz) { /* Ez: x-node i, y-node j, z-cell k */
          double vxe = 0.5 * (AT(*vx, i, j, k) + AT(*vx, i, j, k + 1));
          double vye = 0.5 * (AT(*vy, i, j, k) + AT(*vy, i, j, k + 1));
          double bxe = 0.5 * (AT(*bx, i, j - 1, k) + AT(*bx, i, j, k));
          double bye = 0.5 * (AT(*by, i - 1, j, k) + AT(*by, i, j, k));
          AT(*ez, i, j, k) = vye * bxe - vxe * bye;
        }
      }
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        if (j < ny && k < nz)
          AT(S->b1[0], i, j, k) =
              AT(*bx, i, j, k) - h * ((AT(*ez, i, j + 1, k) - AT(*ez, i, j, k)) * idy -
                                      (AT(*ey, i, j, k + 1) - AT(*ey, i, j, k)) * idz);
        if (i < nx && k < nz)
          AT(S->b1[1], i, j, k) =
              AT(*by, i, j, k) - h * ((AT(*ex, i, j, k + 1) - AT(*ex, i, j, k)) * idz -
                                      (AT(*ez, i + 1, j, k) - AT(*ez, i, j, k)) * idx);
        if (i < nx && j < ny)
          AT(S->b1[2], i, j, k) =
              AT(*bz, i, j, k) - h * ((AT(*ey, i + 1, j, k) - AT(*ey, i, j, k)) * idx -
                                      (AT(*ex, i, j + 1, k) - AT(*ex, i, j, k)) * idy);
      }
  void *b1[3] = {S->b1[0].p, S->b1[1].p, S->b1[2].p};
  xswap(S, P->b, b1, PH_LAG, "bfield (half step)"); /* Lare3d: bfield_bcs after the predictor */

  /* Forces at the nodes from the half-step pressure and B: half-step and new velocity. */
  const arr *hx = &S->b1[0], *hy = &S->b1[1], *hz = &S->b1[2];
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
#define PH(ii, jj, kk) AT(S->ph, ii, jj, kk)
        double px1 = (PH(i, j - 1, k - 1) + PH(i, j, k - 1)) + (PH(i, j - 1, k) + PH(i, j, k));
        double px0 = (PH(i - 1, j - 1, k - 1) + PH(i - 1, j, k - 1)) +
                     (PH(i - 1, j - 1, k) + PH(i - 1, j, k));
        double py1 = (PH(i - 1, j, k - 1) + PH(i, j, k - 1)) + (PH(i - 1, j, k) + PH(i, j, k));
        double py0 = (PH(i - 1, j - 1, k - 1) + PH(i, j - 1, k - 1)) +
                     (PH(i - 1, j - 1, k) + PH(i, j - 1, k));
        double pz1 = (PH(i - 1, j - 1, k) + PH(i, j - 1, k)) + (PH(i - 1, j, k) + PH(i, j, k));
        double pz0 = (PH(i - 1, j - 1, k - 1) + PH(i, j - 1, k - 1)) +
                     (PH(i - 1, j, k - 1) + PH(i, j, k - 1));
#undef PH
        double fx = -(px1 - px0) * (0.25 * idx);
        double fy = -(py1 - py0) * (0.25 * idy);
        double fz = -(pz1 - pz0) * (0.25 * idz);
        double bxn = 0.25 * ((AT(*hx, i, j - 1, k - 1) + AT(*hx, i, j, k - 1)) +
                             (AT(*hx, i, j - 1, k) + AT(*hx, i, j, k)));
        double byn = 0.25 * ((AT(*hy, i - 1, j, k - 1) + AT(*hy, i, j, k - 1)) +
                             (AT(*hy, i - 1, j, k) + AT(*hy, i, j, k)));
        double bzn = 0.25 * ((AT(*hz, i - 1, j - 1, k) + AT(*hz, i, j - 1, k)) +
                             (AT(*hz, i - 1, j, k) + AT(*hz, i, j, k)));
        /* current on the edges through the node, averaged to it */
        double jz0 = (AT(*hy, i, j, k - 1) - AT(*hy, i - 1, j, k - 1)) * idx -
                     (AT(*hx, i, j, k - 1) - AT(*hx, i, j - 1, k - 1)) * idy;
        double jz1 = (AT(*hy, i, j, k) - AT(*hy, i - 1, j, k)) * idx -
                     (AT(*hx, i, j, k) - AT(*hx, i, j - 1, k)) * idy;
        double jx0 = (AT(*hz, i - 1, j, k) - AT(*hz, i - 1, j - 1, k)) * idy -
                     (AT(*hy, i - 1, j, k) - AT(*hy, i - 1, j, k - 1)) * idz;
        double jx1 = (AT(*hz, i, j, k) - AT(*hz, i, j - 1, k)) * idy -
                     (AT(*hy, i, j, k) - AT(*hy, i, j, k - 1)) * idz;
        double jy0 = (AT(*hx, i, j - 1, k) - AT(*hx, i, j - 1, k - 1)) * idz -
                     (AT(*hz, i, j - 1, k) - AT(*hz, i - 1, j - 1, k)) * idx;
        double jy1 = (AT(*hx, i, j, k) - AT(*hx, i, j, k - 1)) * idz -
                     (AT(*hz, i, j, k) - AT(*hz, i - 1, j, k)) * idx;
        double jxn = 0.5 * (jx0 + jx1), jyn = 0.5 * (jy0 + jy1), jzn = 0.5 * (jz0 + jz1);
        fx += jyn * bzn - jzn * byn;
        fy += jzn * bxn - jxn * bzn;
        fz += jxn * byn - jyn * bxn;
#define RH(ii, jj, kk) AT(S->rho, ii, jj, kk)
        double rv = 0.125 * (((RH(i - 1, j - 1, k - 1) + RH(i, j - 1, k - 1)) +
                              (RH(i - 1, j, k - 1) + RH(i, j, k - 1))) +
                             ((RH(i - 1, j - 1, k) + RH(i, j - 1, k)) +
                              (RH(i - 1, j, k) + RH(i, j, k))));
#undef RH
        double ax = fx / rv, ay = fy / rv, az = fz / rv;
        AT(S->v1[0], i, j, k) = AT(*vx, i, j, k) + h * ax;
        AT(S->v1[1], i, j, k) = AT(*vy, i, j, k) + h * ay;
        AT(S->v1[2], i, j, k) = AT(*vz, i, j, k) + h * az;
        AT(*vx, i, j, k) += dt * ax;
        AT(*vy, i, j, k) += dt * ay;
        AT(*vz, i, j, k) += dt * az;
      }
  void *v1[3] = {S->v1[0].p, S->v1[1].p, S->v1[2].p};
  xswap(S, P->v, v1, PH_LAG, "remap_v");      /* Lare3d: remap_v_bcs */
  xswap(S, P->v, NULL, PH_LAG, "velocity");   /* Lare3d: velocity_bcs */

  /* Corrector: pdV work with the half-step pressure and velocity; Lagrangian density. */
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        double div = (dpart(&S->v1[0], 0, i, j, k, idx) + dpart(&S->v1[1], 1, i, j, k, idy)) +
                     dpart(&S->v1[2], 2, i, j, k, idz);
        double r = AT(S->rho, i, j, k);
        AT(S->en, i, j, k) -= dt * AT(S->ph, i, j, k) * div / r;
        AT(S->rho, i, j, k) = r / (1.0 + dt * div);
      }
  /* Lare3d: energy_bcs, density_bcs, velocity_bcs at the end of lagrangian_step */
  xswap(S, P->erv, NULL, PH_LAG, "energy+density+velocity");
}

/* One remap sweep along axis a back to the Eulerian grid. pass[p]: axis p not yet remapped
 * (its Lagrangian volume change is still in the cell volumes). Loops run over the rotated
 * axes: i along a, j along b = a+1, k along c = a+2. */
static void sweep(state *S, plans *P, int a, const int pass[3], double dt) {
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  const int na = S->n[a], nb = S->n[b], nc = S->n[c];
  const double la = dt * S->idx[a], lb = dt * S->idx[b], lc = dt * S->idx[c];

  /* Cell volumes (per Eulerian volume) before and after this sweep, cells -1..n. */
  for (int k = -1; k <= S->n[2]; k++)
    for (int j = -1; j <= S->n[1]; j++)
      for (int i = -1; i <= S->n[0]; i++) {
        double s1 = 0.0, s2 = 0.0;
        for (int p = 0; p < 3; p++) {
          if (!pass[p]) continue;
          double d = dpart(&S->v1[p], p, i, j, k, S->idx[p]);
          s1 += d;
          if (p != a) s2 += d;
        }
        AT(S->cv1, i, j, k) = 1.0 + dt * s1;
        AT(S->cv2, i, j, k) = 1.0 + dt * s2;
      }

  const rview va = rot(&S->v1[a], a);
  /* Constrained transport of B (Evans & Hawley): F = v_a B_b on the c-edges, G = v_a B_c on
   * the b-edges, with the half-step B of the predictor upwinded along a (already time-centred,
   * so no Lax-Wendroff term: with B^n here the coupling of the wave to a background flow would
   * be first order in time). Each flux enters two face fields with opposite signs, so div B
   * does not change. */
  {
    rview Ba = rot(&S->b[a], a), Bb = rot(&S->b[b], a), Bc = rot(&S->b[c], a);
    rview Hb = rot(&S->b1[b], a), Hc = rot(&S->b1[c], a); /* half-step B: time-centred */
    rview F = rot(&S->w1, a), G = rot(&S->w2, a);
    for (int k = 0; k < nc; k++)
      for (int j = 0; j <= nb; j++)
        for (int i = 0; i <= na; i++) {
          double u = 0.5 * (R(va, i, j, k) + R(va, i, j, k + 1));
          R(F, i, j, k) = u * muscl(R(Hb, i - 2, j, k), R(Hb, i - 1, j, k), R(Hb, i, j, k),
                                    R(Hb, i + 1, j, k), u, 0.0);
        }
    for (int k = 0; k <= nc; k++)
      for (int j = 0; j < nb; j++)
        for (int i = 0; i <= na; i++) {
          double u = 0.5 * (R(va, i, j, k) + R(va, i, j + 1, k));
          R(G, i, j, k) = u * muscl(R(Hc, i - 2, j, k), R(Hc, i - 1, j, k), R(Hc, i, j, k),
                                    R(Hc, i + 1, j, k), u, 0.0);
        }
    for (int k = 0; k < nc; k++)
      for (int j = 0; j <= nb; j++)
        for (int i = 0; i < na; i++) R(Bb, i, j, k) -= la * (R(F, i + 1, j, k) - R(F, i, j, k));
    for (int k = 0; k <= nc; k++)
      for (int j = 0; j < nb; j++)
        for (int i = 0; i < na; i++) R(Bc, i, j, k) -= la * (R(G, i + 1, j, k) - R(G, i, j, k));
    for (int k = 0; k < nc; k++)
      for (int j = 0; j < nb; j++)
        for (int i = 0; i <= na; i++)
          R(Ba, i, j, k) += lb * (R(F, i, j + 1, k) - R(F, i, j, k)) +
                            lc * (R(G, i, j, k + 1) - R(G, i, j, k));
  }

  /* Mass flux through the a-faces (per cell volume) and the energy carried with it; one
   * halo cell in b and c too, for the node-centred momentum fluxes. */
  rview rho = rot(&S->rho, a), en = rot(&S->en, a), DM = rot(&S->dm, a), FE = rot(&S->w3, a);
  for (int k = -1; k <= nc; k++)
    for (int j = -1; j <= nb; j++)
      for (int i = 0; i <= na; i++) {
        double u = 0.25 * ((R(va, i, j, k) + R(va, i, j + 1, k)) +
                           (R(va, i, j, k + 1) + R(va, i, j + 1, k + 1)));
        double nu = fabs(u) * la;
        double m = muscl(R(rho, i - 2, j, k), R(rho, i - 1, j, k), R(rho, i, j, k),
                         R(rho, i + 1, j, k), u, nu) * u * la;
        R(DM, i, j, k) = m;
        R(FE, i, j, k) = m * muscl(R(en, i - 2, j, k), R(en, i - 1, j, k), R(en, i, j, k),
                                   R(en, i + 1, j, k), u, nu);
      }
  /* The mass flux on the faces of the node (dual) cells along a: averaged over b and c here,
   * so the swap along a alone brings what the neighbour computed (Lare3d: dm_x_bcs). */
  rview Q = rot(&S->dmq, a);
  for (int k = 0; k <= nc; k++)
    for (int j = 0; j <= nb; j++)
      for (int i = 0; i <= na; i++)
        R(Q, i, j, k) = 0.25 * ((R(DM, i, j - 1, k - 1) + R(DM, i, j, k - 1)) +
                                (R(DM, i, j - 1, k) + R(DM, i, j, k)));
  xswap(S, P->dm[a], NULL, PH_DM, "mass flux");

  /* Density and specific energy in the cells. */
  memcpy(S->rho1.p, S->rho.p, S->rho.size * sizeof(double));
  rview r1 = rot(&S->rho1, a), c1 = rot(&S->cv1, a), c2 = rot(&S->cv2, a);
  for (int k = 0; k < nc; k++)
    for (int j = 0; j < nb; j++)
      for (int i = 0; i < na; i++) {
        double m0 = R(r1, i, j, k) * R(c1, i, j, k);
        double rn = (m0 + R(DM, i, j, k) - R(DM, i + 1, j, k)) / R(c2, i, j, k);
        R(en, i, j, k) = (R(en, i, j, k) * m0 + R(FE, i, j, k) - R(FE, i + 1, j, k)) /
                         (R(c2, i, j, k) * rn);
        R(rho, i, j, k) = rn;
      }

  /* Momentum on the node cells: their mass from the eight cells around, the mass flux
   * through their faces from the swapped dual-face flux. */
  rview DMV = rot(&S->w1, a), FM = rot(&S->w2, a), MV = rot(&S->mv, a), DEN = rot(&S->den, a);
  for (int k = 0; k <= nc; k++)
    for (int j = 0; j <= nb; j++)
      for (int i = -1; i <= na; i++) R(DMV, i, j, k) = 0.5 * (R(Q, i, j, k) + R(Q, i + 1, j, k));
  for (int k = 0; k <= nc; k++)
    for (int j = 0; j <= nb; j++)
      for (int i = 0; i <= na; i++) {
#define M8(ii, jj, kk) (R(r1, ii, jj, kk) * R(c1, ii, jj, kk))
        double m1 = 0.125 * (((M8(i - 1, j - 1, k - 1) + M8(i, j - 1, k - 1)) +
                              (M8(i - 1, j, k - 1) + M8(i, j, k - 1))) +
                             ((M8(i - 1, j - 1, k) + M8(i, j - 1, k)) +
                              (M8(i - 1, j, k) + M8(i, j, k))));
#undef M8
        R(MV, i, j, k) = m1;
        R(DEN, i, j, k) = m1 + R(DMV, i - 1, j, k) - R(DMV, i, j, k); /* the new node mass */
      }
  for (int w = 0; w < 3; w++) {
    rview W = rot(&S->v[w], a);
    for (int k = 0; k <= nc; k++)
      for (int j = 0; j <= nb; j++)
        for (int i = -1; i <= na; i++) {
          double u = 0.5 * (R(va, i, j, k) + R(va, i + 1, j, k));
          R(FM, i, j, k) = R(DMV, i, j, k) * muscl(R(W, i - 1, j, k), R(W, i, j, k),
                                                   R(W, i + 1, j, k), R(W, i + 2, j, k), u,
                                                   fabs(u) * la);
        }
    for (int k = 0; k <= nc; k++)
      for (int j = 0; j <= nb; j++)
        for (int i = 0; i <= na; i++)
          R(W, i, j, k) = (R(MV, i, j, k) * R(W, i, j, k) + R(FM, i - 1, j, k) - R(FM, i, j, k)) /
                          R(DEN, i, j, k);
  }
  xswap(S, P->all, NULL, PH_FIELDS, "all fields"); /* Lare3d: boundary_conditions */
}

/* Lare3d's six sweep orders, chosen by the step number. */
static const int sweep_order[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1},
                                      {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};

static void remap(state *S, plans *P, double dt) {
  int pass[3] = {1, 1, 1};
  for (int s = 0; s < 3; s++) {
    int a = sweep_order[S->step % 6][s];
    sweep(S, P, a, pass, dt);
    pass[a] = 0;
  }
  xswap(S, P->b, NULL, PH_BFIELD, "bfield"); /* Lare3d: bfield_bcs at the end of the remap */
}

/* Local part of the CFL limit and of the div B check over the owned cells:
 * out[0] = -min dt, out[1] = max |div B|, out[2] = max |B| (reduced with MPI_MAX). */
static void local_limits(const state *S, double out[3]) {
  double dtmin = INFINITY, divmax = 0.0, bmax = 0.0;
  for (int k = 0; k < S->n[2]; k++)
    for (int j = 0; j < S->n[1]; j++)
      for (int i = 0; i < S->n[0]; i++) {
        double bx0 = AT(S->b[0], i, j, k), bx1 = AT(S->b[0], i + 1, j, k);
        double by0 = AT(S->b[1], i, j, k), by1 = AT(S->b[1], i, j + 1, k);
        double bz0 = AT(S->b[2], i, j, k), bz1 = AT(S->b[2], i, j, k + 1);
        double div = (bx1 - bx0) * S->idx[0] + (by1 - by0) * S->idx[1] + (bz1 - bz0) * S->idx[2];
        double bxc = 0.5 * (bx0 + bx1), byc = 0.5 * (by0 + by1), bzc = 0.5 * (bz0 + bz1);
        double b2 = bxc * bxc + byc * byc + bzc * bzc;
        double r = AT(S->rho, i, j, k), e = AT(S->en, i, j, k);
        double vm = 0.0;
        for (int d = 0; d < 3; d++) {
          const arr *v = &S->v[d];
          double s = 0.125 * (((AT(*v, i, j, k) + AT(*v, i + 1, j, k)) +
                               (AT(*v, i, j + 1, k) + AT(*v, i + 1, j + 1, k))) +
                              ((AT(*v, i, j, k + 1) + AT(*v, i + 1, j, k + 1)) +
                               (AT(*v, i, j + 1, k + 1) + AT(*v, i + 1, j + 1, k + 1))));
          vm += s * s;
        }
        double cf = sqrt(GAMMA * (GAMMA - 1.0) * fabs(e) + b2 / r) + sqrt(vm);
        double d = S->dxmin / cf;
        if (d < dtmin) dtmin = d;
        if (fabs(div) > divmax) divmax = fabs(div);
        if (b2 > bmax) bmax = b2;
      }
  out[0] = -dtmin;
  out[1] = divmax;
  out[2] = sqrt(bmax);
}

/* ------------------------------------------------------------------ set-up */
static int state_alloc(app_ctx *a, state *S, hs_decomp d) {
  memset(S, 0, sizeof *S);
  for (int k = 0; k < 3; k++) {
    S->n[k] = hs_decomp_local_extent(d, k);
    S->off[k] = hs_decomp_global_offset(d, k);
    S->N[k] = hs_decomp_global_extent(d, k);
    S->dx[k] = 1.0 / S->N[k];
    S->idx[k] = (double)S->N[k];
  }
  S->dxmin = fmin(S->dx[0], fmin(S->dx[1], S->dx[2]));
  int ok = arr_alloc(&S->rho, S->n, 0) & arr_alloc(&S->en, S->n, 0) &
           arr_alloc(&S->ph, S->n, 0) & arr_alloc(&S->cv1, S->n, 0) &
           arr_alloc(&S->cv2, S->n, 0) & arr_alloc(&S->rho1, S->n, 0);
  for (int k = 0; k < 3; k++)
    ok &= arr_alloc(&S->v[k], S->n, 7) & arr_alloc(&S->v1[k], S->n, 7) &
          arr_alloc(&S->b[k], S->n, 1 << k) & arr_alloc(&S->b1[k], S->n, 1 << k);
  ok &= arr_alloc(&S->w1, S->n, 7) & arr_alloc(&S->w2, S->n, 7) & arr_alloc(&S->w3, S->n, 7) &
        arr_alloc(&S->dm, S->n, 7) & arr_alloc(&S->dmq, S->n, 7) & arr_alloc(&S->mv, S->n, 7) &
        arr_alloc(&S->den, S->n, 7);
  if (!ok) return app_fail(a, "out of memory for the fields of a %d x %d x %d block", S->n[0],
                           S->n[1], S->n[2]);
  return 0;
}

static void state_free(state *S) {
  arr *all[] = {&S->rho, &S->en, &S->ph, &S->cv1, &S->cv2, &S->rho1, &S->v[0], &S->v[1],
                &S->v[2], &S->v1[0], &S->v1[1], &S->v1[2], &S->b[0], &S->b[1], &S->b[2],
                &S->b1[0], &S->b1[1], &S->b1[2], &S->w1, &S->w2, &S->w3, &S->dm, &S->dmq,
                &S->mv, &S->den};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->p);
}

static void problem_init(problem *P, double amp, double flow) {
  memset(P, 0, sizeof *P);
  P->rho0 = 1.0;
  P->p0 = 0.1;
  P->b0 = 1.0;
  P->amp = amp;
  /* k = 2 pi (1,1,1) in the unit box; B0 along k; circular polarisation in (e1, e2). */
  double s3 = sqrt(3.0), s2 = sqrt(2.0), s6 = sqrt(6.0);
  for (int a = 0; a < 3; a++) {
    P->k[a] = TWO_PI;
    P->khat[a] = 1.0 / s3;
  }
  P->kmag = TWO_PI * s3;
  P->e1[0] = 1.0 / s2, P->e1[1] = -1.0 / s2, P->e1[2] = 0.0;
  P->e2[0] = 1.0 / s6, P->e2[1] = 1.0 / s6, P->e2[2] = -2.0 / s6;
  P->period = TWO_PI / (P->kmag * P->b0 / sqrt(P->rho0)); /* in the fluid frame */
  const double dir[3] = {1.0, 0.7, 0.4};
  for (int a = 0; a < 3; a++) P->v0[a] = flow * dir[a];
  P->omega = P->kmag * P->b0 / sqrt(P->rho0) + (P->k[0] * P->v0[0] + P->k[1] * P->v0[1]) +
             P->k[2] * P->v0[2];
}

/* Coordinate of local point i on axis a: global index wrapped into the box (so the two ranks
 * storing a shared plane compute the same bits), plus half a cell for cell positions. */
static double coord(const state *S, int a, int i, int half) {
  int g = (S->off[a] + i) % S->N[a];
  if (g < 0) g += S->N[a];
  return (2.0 * g + half) / (2.0 * S->N[a]);
}

static double phase_at(const problem *P, double x, double y, double z) {
  return P->k[0] * x + P->k[1] * y + P->k[2] * z;
}

/* Vector potential of the wave, component c, at (x,y,z): curl gives dB = -sqrt(rho) dv. */
static double apot(const problem *P, int c, double x, double y, double z) {
  double ph = phase_at(P, x, y, z), s = P->amp * sqrt(P->rho0) / P->kmag;
  return s * (P->e1[c] * cos(ph) + P->e2[c] * sin(ph));
}

/* Circularly polarised Alfven wave (an exact solution of ideal MHD): every interior point
 * including the shared planes; the halos come from a swap. */
static void state_init(state *S, const problem *P) {
  const int nx = S->n[0], ny = S->n[1], nz = S->n[2];
  double e0 = P->p0 / ((GAMMA - 1.0) * P->rho0);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        AT(S->rho, i, j, k) = P->rho0;
        AT(S->en, i, j, k) = e0;
      }
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        double x = coord(S, 0, i, 0), y = coord(S, 1, j, 0), z = coord(S, 2, k, 0);
        double ph = phase_at(P, x, y, z), cs = cos(ph), sn = sin(ph);
        for (int d = 0; d < 3; d++)
          AT(S->v[d], i, j, k) = P->v0[d] + P->amp * (P->e1[d] * cs + P->e2[d] * sn);
      }
  /* B = B0 + discrete curl of the edge vector potential: div B = 0 to round-off. */
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        double xn = coord(S, 0, i, 0), yn = coord(S, 1, j, 0), zn = coord(S, 2, k, 0);
        double xc = coord(S, 0, i, 1), yc = coord(S, 1, j, 1), zc = coord(S, 2, k, 1);
        double xn1 = coord(S, 0, i + 1, 0), yn1 = coord(S, 1, j + 1, 0), zn1 = coord(S, 2, k + 1, 0);
        if (j < ny && k < nz) /* bx at (node i, cell j, cell k) */
          AT(S->b[0], i, j, k) =
              P->b0 * P->khat[0] + (apot(P, 2, xn, yn1, zc) - apot(P, 2, xn, yn, zc)) * S->idx[1] -
              (apot(P, 1, xn, yc, zn1) - apot(P, 1, xn, yc, zn)) * S->idx[2];
        if (i < nx && k < nz) /* by at (cell i, node j, cell k) */
          AT(S->b[1], i, j, k) =
              P->b0 * P->khat[1] + (apot(P, 0, xc, yn, zn1) - apot(P, 0, xc, yn, zn)) * S->idx[2] -
              (apot(P, 2, xn1, yn, zc) - apot(P, 2, xn, yn, zc)) * S->idx[0];
        if (i < nx && j < ny) /* bz at (cell i, cell j, node k) */
          AT(S->b[2], i, j, k) =
              P->b0 * P->khat[2] + (apot(P, 1, xn1, yc, zn) - apot(P, 1, xn, yc, zn)) * S->idx[0] -
              (apot(P, 0, xc, yn1, zn) - apot(P, 0, xc, yn, zn)) * S->idx[1];
      }
  S->t = 0.0;
  S->step = 0;
}

/* haloswap fields describing the model's arrays as they are. */
static hs_field fld(arr *A) {
  hs_field f = hs_field_array(HS_FLOAT64, A->p, HS_LAYOUT_XFAST, H);
  for (int a = 0; a < 3; a++) hs_field_set_halo(&f, a, H, H);
  return f;
}
static hs_field fld_node(arr *A) { /* vx, vy, vz: the upper rank owns the shared node plane */
  hs_field f = fld(A);
  for (int a = 0; a < 3; a++) hs_field_set_stagger(&f, a, HS_STAGGER_NODE, HS_OWNER_UPPER);
  return f;
}
static hs_field fld_face(arr *A, int axis) { /* bx, by, bz: the lower rank owns the shared face */
  hs_field f = fld(A);
  hs_field_set_stagger(&f, axis, HS_STAGGER_NODE, HS_OWNER_LOWER);
  return f;
}

static int make_plan(hs_decomp d, const char *spec, hs_field *f, int nf, const int depth[3],
                     hs_plan *out) {
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  for (int a = 0; a < 3; a++) pd.depth[a] = depth[a];
  pd.stencil = HS_STENCIL_BOX;
  pd.nfields = nf;
  pd.fields = f;
  pd.transport_name = spec;
  return hs_plan_create(d, &pd, out);
}

static void free_plans(plans *P) {
  for (int a = 2; a >= 0; a--) hs_plan_free(&P->dm[a]);
  hs_plan_free(&P->erv);
  hs_plan_free(&P->v);
  hs_plan_free(&P->b);
  hs_plan_free(&P->all);
}

/* All plans of one transport. HS_ERR_UNAVAILABLE (the transport cannot serve one of these
 * shapes here) is returned with the reason in why; any other failure is an error. */
static int create_plans(state *S, hs_decomp d, const char *spec, plans *P, char *why, size_t n) {
  memset(P, 0, sizeof *P);
  const int d2[3] = {H, H, H};
  hs_field all[8] = {fld_face(&S->b[0], 0), fld_face(&S->b[1], 1), fld_face(&S->b[2], 2),
                     fld(&S->en), fld(&S->rho), fld_node(&S->v[0]), fld_node(&S->v[1]),
                     fld_node(&S->v[2])};
  int rc = make_plan(d, spec, all, 8, d2, &P->all);
  if (rc == HS_OK) rc = make_plan(d, spec, all, 3, d2, &P->b);
  if (rc == HS_OK) rc = make_plan(d, spec, all + 5, 3, d2, &P->v);
  if (rc == HS_OK) rc = make_plan(d, spec, all + 3, 5, d2, &P->erv);
  for (int a = 0; a < 3 && rc == HS_OK; a++) {
    /* Mass flux on the dual faces: face-centred along the sweep axis (the lower rank owns
     * the shared face, as Lare3d's dm), node-centred and not swapped along the others. */
    hs_field f = fld_node(&S->dmq);
    hs_field_set_stagger(&f, a, HS_STAGGER_NODE, HS_OWNER_LOWER);
    int dep[3] = {0, 0, 0};
    dep[a] = 1;
    for (int q = 0; q < 3; q++) hs_field_set_depth(&f, q, dep[q], dep[q]);
    rc = make_plan(d, spec, &f, 1, dep, &P->dm[a]);
  }
  if (rc != HS_OK) {
    snprintf(why, n, "%s", hs_error_message());
    free_plans(P);
  }
  return rc;
}

/* ------------------------------------------------------------------ diagnostics */
/* Rank 0 receives the owned points of A in global order (x fastest); shift[a] = 1 on a face
 * axis (owned local faces 1..n), 0 otherwise (owned 0..n-1). Periodic: global index wrapped. */
static void gather(const state *S, const arr *A, const int shift[3], double *out, int rank,
                   int size) {
  int box[6];
  for (int a = 0; a < 3; a++) {
    box[a] = S->off[a] + shift[a];
    box[3 + a] = S->n[a];
  }
  int cnt = S->n[0] * S->n[1] * S->n[2];
  double *mine = malloc((size_t)cnt * sizeof *mine);
  if (!mine) MPI_Abort(MPI_COMM_WORLD, 2);
  size_t q = 0;
  for (int k = 0; k < S->n[2]; k++)
    for (int j = 0; j < S->n[1]; j++)
      for (int i = 0; i < S->n[0]; i++) mine[q++] = AT(*A, i + shift[0], j + shift[1], k + shift[2]);
  int *boxes = NULL, *counts = NULL, *displs = NULL;
  double *all = NULL;
  if (rank == 0) {
    boxes = malloc((size_t)size * 6 * sizeof *boxes);
    counts = malloc((size_t)size * sizeof *counts);
    displs = malloc((size_t)size * sizeof *displs);
    if (!boxes || !counts || !displs) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Gather(box, 6, MPI_INT, boxes, 6, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int tot = 0;
    for (int r = 0; r < size; r++) {
      counts[r] = boxes[6 * r + 3] * boxes[6 * r + 4] * boxes[6 * r + 5];
      displs[r] = tot;
      tot += counts[r];
    }
    all = malloc((size_t)tot * sizeof *all);
    if (!all) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Gatherv(mine, cnt, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; r++) {
      const int *bx = boxes + 6 * r;
      size_t p = (size_t)displs[r];
      for (int k = 0; k < bx[5]; k++)
        for (int j = 0; j < bx[4]; j++)
          for (int i = 0; i < bx[3]; i++) {
            int g[3] = {(bx[0] + i) % S->N[0], (bx[1] + j) % S->N[1], (bx[2] + k) % S->N[2]};
            out[g[0] + (size_t)S->N[0] * (g[1] + (size_t)S->N[1] * g[2])] = all[p++];
          }
    }
  }
  free(mine);
  free(boxes);
  free(counts);
  free(displs);
  free(all);
}

typedef struct {
  double mass, ekin, emag, eint; /* sums in global index order on rank 0 */
  double phase_err;              /* (numerical - analytic) phase speed / analytic */
  double amp_ratio;              /* |Z(t)| / amplitude */
  double l1;                     /* mean |v - v_exact| over nodes and components / amplitude */
} diag;

/* Energies and the wave's phase and error, from the gathered fields (rank 0). */
static void diagnose(const state *S, const problem *P, int rank, int size, diag *D) {
  const int *N = S->N;
  size_t tot = (size_t)N[0] * N[1] * N[2];
  double *g[8];
  for (int f = 0; f < 8; f++) {
    g[f] = rank == 0 ? malloc(tot * sizeof(double)) : NULL;
    if (rank == 0 && !g[f]) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int none[3] = {0, 0, 0}, fx[3] = {1, 0, 0}, fy[3] = {0, 1, 0}, fz[3] = {0, 0, 1};
  gather(S, &S->rho, none, g[0], rank, size);
  gather(S, &S->en, none, g[1], rank, size);
  for (int d = 0; d < 3; d++) gather(S, &S->v[d], none, g[2 + d], rank, size);
  gather(S, &S->b[0], fx, g[5], rank, size);
  gather(S, &S->b[1], fy, g[6], rank, size);
  gather(S, &S->b[2], fz, g[7], rank, size);
  memset(D, 0, sizeof *D);
  if (rank == 0) {
    double dv = S->dx[0] * S->dx[1] * S->dx[2];
    double zr = 0.0, zi = 0.0, l1 = 0.0, mass = 0.0, ekin = 0.0, emag = 0.0, eint = 0.0;
#define G(f, i, j, k) g[f][(size_t)(i) + (size_t)N[0] * ((size_t)(j) + (size_t)N[1] * (size_t)(k))]
    for (int k = 0; k < N[2]; k++)
      for (int j = 0; j < N[1]; j++)
        for (int i = 0; i < N[0]; i++) {
          mass += G(0, i, j, k);
          eint += G(0, i, j, k) * G(1, i, j, k);
          emag += (G(5, i, j, k) * G(5, i, j, k) + G(6, i, j, k) * G(6, i, j, k)) +
                  G(7, i, j, k) * G(7, i, j, k);
          int im = (i + N[0] - 1) % N[0], jm = (j + N[1] - 1) % N[1], km = (k + N[2] - 1) % N[2];
          double rv = 0.125 * (((G(0, im, jm, km) + G(0, i, jm, km)) + (G(0, im, j, km) + G(0, i, j, km))) +
                               ((G(0, im, jm, k) + G(0, i, jm, k)) + (G(0, im, j, k) + G(0, i, j, k))));
          double vx = G(2, i, j, k), vy = G(3, i, j, k), vz = G(4, i, j, k);
          ekin += rv * ((vx * vx + vy * vy) + vz * vz);
          vx -= P->v0[0], vy -= P->v0[1], vz -= P->v0[2]; /* the wave */
          /* wave diagnostics at the node (x, y, z) */
          double x = (double)i / N[0], y = (double)j / N[1], z = (double)k / N[2];
          double ph = phase_at(P, x, y, z);
          double a1 = (vx * P->e1[0] + vy * P->e1[1]) + vz * P->e1[2];
          double a2 = (vx * P->e2[0] + vy * P->e2[1]) + vz * P->e2[2];
          zr += a1 * cos(ph) + a2 * sin(ph); /* (a1 + i a2) e^{-i ph} */
          zi += a2 * cos(ph) - a1 * sin(ph);
          double pe = ph - P->omega * S->t, ce = cos(pe), se = sin(pe);
          double v[3] = {vx, vy, vz};
          for (int d = 0; d < 3; d++) l1 += fabs(v[d] - P->amp * (P->e1[d] * ce + P->e2[d] * se));
        }
#undef G
    D->mass = mass * dv;
    D->eint = eint * dv;
    D->emag = 0.5 * emag * dv;
    D->ekin = 0.5 * ekin * dv;
    zr /= (double)tot;
    zi /= (double)tot;
    D->amp_ratio = sqrt(zr * zr + zi * zi) / P->amp;
    /* Z = A e^{-i w t}: the phase lag behind the exact wave, over the time run */
    double lag = atan2(zi, zr) + P->omega * S->t;
    lag = remainder(lag, TWO_PI);
    D->phase_err = S->t > 0.0 ? -lag / (P->omega * S->t) : 0.0;
    D->l1 = l1 / (3.0 * (double)tot * P->amp);
  }
  for (int f = 0; f < 8; f++) free(g[f]);
}

/* Owned points of every swapped field, as exact sums of their bit patterns. */
static void checksums(const state *S, uint64_t out[8]) {
  const arr *f[8] = {&S->rho, &S->en, &S->v[0], &S->v[1], &S->v[2], &S->b[0], &S->b[1], &S->b[2]};
  uint64_t loc[8];
  for (int q = 0; q < 8; q++) {
    int sh[3] = {0, 0, 0};
    if (q >= 5) sh[q - 5] = 1; /* faces: the lower rank owns the shared one */
    uint64_t acc = 0;
    for (int k = 0; k < S->n[2]; k++)
      for (int j = 0; j < S->n[1]; j++)
        acc = app_checksum_add(acc, &AT(*f[q], sh[0], j + sh[1], k + sh[2]), (size_t)S->n[0]);
    loc[q] = acc;
  }
  MPI_Allreduce(loc, out, 8, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}
static const char *field_names[8] = {"rho", "energy", "vx", "vy", "vz", "bx", "by", "bz"};

static uint64_t bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

/* ------------------------------------------------------------------ runs */
typedef struct {
  int steps;        /* fixed number of steps, or 0: run to tend */
  double tend, cfl;
  int warmup;
} runcfg;

typedef struct {
  int steps, timed;
  double divb;      /* max over the run of |div B| dx / max|B| */
  double t;
  double step_max;  /* per step, max over ranks of the per-rank mean */
  double ph_max[NPH], comm_max;
  uint64_t sums[8];
  diag D;
} result;

/* Initial state, then steps; returns the results (diagnostics on rank 0). */
static void run(state *S, plans *P, const problem *Pb, const runcfg *C, int rank, int size,
                result *out) {
  memset(out, 0, sizeof *out);
  state_init(S, Pb);
  S->timing = 0;
  xswap(S, P->all, NULL, PH_FIELDS, "initial");
  memset(S->tph, 0, sizeof S->tph);
  double tstart = 0.0, divb = 0.0;
  int st = 0;
  for (;;) {
    double lim[3], g[3];
    local_limits(S, lim);
    MPI_Allreduce(lim, g, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double rel = g[2] > 0.0 ? g[1] * S->dxmin / g[2] : g[1];
    if (rel > divb) divb = rel;
    if (C->steps ? st >= C->steps : S->t >= C->tend * (1.0 - 1e-14)) break;
    double dt = C->cfl * -g[0];
    if (!C->steps && S->t + dt > C->tend) dt = C->tend - S->t;
    if (st == C->warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      S->timing = 1;
      tstart = MPI_Wtime();
    }
    lagrangian(S, P, dt);
    remap(S, P, dt);
    S->t += dt;
    S->step++;
    st++;
  }
  double total = S->timing ? MPI_Wtime() - tstart : 0.0;
  out->steps = st;
  out->timed = S->timing ? st - C->warmup : 0;
  out->divb = divb;
  out->t = S->t;
  double v[2 + NPH], mx[2 + NPH];
  double per = out->timed > 0 ? 1.0 / out->timed : 0.0;
  v[0] = total * per;
  v[1] = 0.0;
  for (int p = 0; p < NPH; p++) {
    v[2 + p] = S->tph[p] * per;
    v[1] += v[2 + p];
  }
  MPI_Allreduce(v, mx, 2 + NPH, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  out->step_max = mx[0];
  out->comm_max = mx[1];
  for (int p = 0; p < NPH; p++) out->ph_max[p] = mx[2 + p];
  checksums(S, out->sums);
  diagnose(S, Pb, rank, size, &out->D);
}

/* ------------------------------------------------------------------ options */
typedef struct {
  int global[3], procs[3], steps, rounds, warmup, verbose, nres, res[MAX_RES];
  double periods, amp, flow, cfl, expect_phase, expect_order;
  const char *json;
  app_transports tr;
} options;

static void usage(void) {
  printf(
      "Usage: lare-mini [options]\n"
      "Ideal MHD (Lagrangian predictor-corrector step + remap per axis, constrained transport)\n"
      "on Lare3d's staggered layout and exchange pattern, on every haloswap transport. The\n"
      "problem is a circularly polarised Alfven wave along (1,1,1) in the periodic unit box.\n"
      "  --transport SPEC    transport, e.g. p2p or \"rma-fence:drive=get\"; repeat to run several;\n"
      "                      \"all\" = every other transport usable here (default p2p)\n"
      "  --global NX,NY,NZ   global cells (default 32,32,32); all axes split, periodic,\n"
      "                      remainder cells to the high ranks (Lare3d)\n"
      "  --procs PX,PY,PZ    ranks per axis (default 0,0,0: chosen by MPI_Dims_create)\n"
      "  --steps N           run N steps (default: run --periods wave periods)\n"
      "  --periods P         simulated time in wave periods when --steps is not given (default 1)\n"
      "  --amp A             wave amplitude, velocity over Alfven speed (default 0.01)\n"
      "  --flow U            background flow U*(1, 0.7, 0.4) carrying the wave (default 0)\n"
      "  --cfl C             Courant number on the fast speed (default 0.4)\n"
      "  --rounds R          runs per transport, transports interleaved (default 1)\n"
      "  --warmup W          untimed steps at the start of every run (default 1)\n"
      "  --converge N1,N2..  accuracy study: N^3 grids in turn (first transport), prints the\n"
      "                      phase-speed error and the convergence order of the L1 error\n"
      "  --expect-phase E    with --converge: fail unless |phase-speed error| <= E on the finest\n"
      "  --expect-order Q    with --converge: fail unless every order >= Q\n"
      "  --json FILE         write checksums and timings as JSON\n"
      "  --verbose           describe the plans\n"
      "  --help              this text\n"
      "Prints one 'checksum NAME HEX' line per field (sum of the 64-bit patterns of the owned\n"
      "values) and per global sum (bits of the double, summed on rank 0 in global order), the\n"
      "exchange time per step per transport, and the max of |div B| dx / max|B| over the run\n"
      "(checked every step; the run fails above 1e-12).\n");
}

static int parse_list(app_ctx *a, const char *opt, const char *val, int out[MAX_RES], int *n) {
  if (!val) return app_fail(a, "option %s needs a value N1,N2,...", opt);
  *n = 0;
  const char *s = val;
  for (;;) {
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || (*end != ',' && *end != 0))
      return app_fail(a, "option %s: '%s' is not a list of integers", opt, val);
    if (x < 4 || x > 512)
      return app_fail(a, "option %s: value %ld is out of range: must be 4..512", opt, x);
    if (*n == MAX_RES) return app_fail(a, "option %s: at most %d values", opt, MAX_RES);
    out[(*n)++] = (int)x;
    if (*end == 0) return 0;
    s = end + 1;
  }
}

static int parse_double(app_ctx *a, const char *opt, const char *val, double lo, double hi,
                        double *out) {
  if (!val) return app_fail(a, "option %s needs a value", opt);
  char *end;
  double x = strtod(val, &end);
  if (*val == 0 || *end != 0) return app_fail(a, "option %s: '%s' is not a number", opt, val);
  if (!(x >= lo && x <= hi))
    return app_fail(a, "option %s = %s is out of range: must be %g..%g", opt, val, lo, hi);
  *out = x;
  return 0;
}

static int parse(app_ctx *a, int argc, char **argv, options *o, int *help) {
  memset(o, 0, sizeof *o);
  o->global[0] = o->global[1] = o->global[2] = 32;
  o->rounds = 1;
  o->warmup = 1;
  o->periods = 1.0;
  o->amp = 0.01;
  o->cfl = 0.4;
  o->expect_phase = -1.0;
  o->expect_order = -1.0;
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int r = 0;
    if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
      *help = 1;
      continue;
    } else if (!strcmp(k, "--verbose")) {
      o->verbose = 1;
      continue;
    } else if (!strcmp(k, "--transport"))
      r = app_transport_add(a, &o->tr, v);
    else if (!strcmp(k, "--global"))
      r = app_triple(a, k, v, 2, 4096, o->global);
    else if (!strcmp(k, "--procs"))
      r = app_triple(a, k, v, 0, 4096, o->procs);
    else if (!strcmp(k, "--steps"))
      r = app_int(a, k, v, 1, 1000000, &o->steps);
    else if (!strcmp(k, "--rounds"))
      r = app_int(a, k, v, 1, 1000, &o->rounds);
    else if (!strcmp(k, "--warmup"))
      r = app_int(a, k, v, 0, 1000, &o->warmup);
    else if (!strcmp(k, "--periods"))
      r = parse_double(a, k, v, 1e-6, 1e3, &o->periods);
    else if (!strcmp(k, "--amp"))
      r = parse_double(a, k, v, 0.0, 0.5, &o->amp);
    else if (!strcmp(k, "--flow"))
      r = parse_double(a, k, v, -2.0, 2.0, &o->flow);
    else if (!strcmp(k, "--cfl"))
      r = parse_double(a, k, v, 1e-3, 1.0, &o->cfl);
    else if (!strcmp(k, "--converge"))
      r = parse_list(a, k, v, o->res, &o->nres);
    else if (!strcmp(k, "--expect-phase"))
      r = parse_double(a, k, v, 0.0, 1.0, &o->expect_phase);
    else if (!strcmp(k, "--expect-order"))
      r = parse_double(a, k, v, 0.0, 10.0, &o->expect_order);
    else if (!strcmp(k, "--json")) {
      if (!v) r = app_fail(a, "option --json needs a file name");
      o->json = v;
    } else
      return app_fail(a, "unknown option '%s' (see --help)", k);
    if (r) return 1;
    i++;
  }
  if (o->tr.n == 0) app_transport_add(a, &o->tr, "p2p");
  if (o->steps && o->warmup >= o->steps) o->warmup = o->steps > 1 ? 1 : 0;
  if (o->amp == 0.0 && o->nres) return app_fail(a, "option --converge needs --amp > 0");
  return 0;
}

static hs_decomp make_decomp(app_ctx *a, const int global[3], const int procs[3]) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.ndims = 3;
  for (int k = 0; k < 3; k++) {
    dd.global[k] = global[k];
    dd.procs[k] = procs[k];
    dd.periodic[k] = 1;
  }
  dd.remainder = HS_REMAINDER_HIGH;  /* Lare3d: the last ranks take the extra cells */
  dd.axis_order[0] = 2;              /* Lare3d: dims = (nprocz, nprocy, nprocx) */
  dd.axis_order[1] = 1;
  dd.axis_order[2] = 0;
  hs_decomp d = NULL;
  if (hs_decomp_create(a->comm, &dd, &d) != HS_OK) {
    app_fail(a, "decomposition: %s", hs_error_message());
    return NULL;
  }
  for (int k = 0; k < 3; k++) {
    int n = hs_decomp_local_extent(d, k);
    if (n < H + 1) /* a face field sends 2 ghost faces beyond the shared one */
      app_fail(a, "grid smaller than the halo: %d cells in %c over %d ranks leave rank %d "
                  "with %d, fewer than %d (2 ghost faces and the shared face of bx, by, bz)",
               global[k], "xyz"[k], hs_decomp_procs(d, k), a->rank, n, H + 1);
  }
  return d;
}

/* ------------------------------------------------------------------ accuracy study */
static int converge(app_ctx *a, const options *o) {
  problem Pb;
  problem_init(&Pb, o->amp, o->flow);
  runcfg C = {0, o->periods * Pb.period, o->cfl, 0};
  double err[MAX_RES] = {0}, ph[MAX_RES] = {0};
  int bad = 0;
  for (int r = 0; r < o->nres; r++) {
    int g[3] = {o->res[r], o->res[r], o->res[r]};
    hs_decomp d = make_decomp(a, g, o->procs);
    if (app_agree(a)) return 1;
    state S;
    state_alloc(a, &S, d);
    if (app_agree(a)) return 1;
    plans P;
    char why[1024];
    if (create_plans(&S, d, o->tr.spec[0], &P, why, sizeof why) != HS_OK) {
      app_fail(a, "transport '%s': %s", o->tr.spec[0], why);
      app_agree(a);
      return 1;
    }
    result res;
    run(&S, &P, &Pb, &C, a->rank, a->size, &res);
    err[r] = res.D.l1;
    ph[r] = res.D.phase_err;
    if (a->rank == 0) {
      printf("alfven %d^3: %d steps to t = %.6f (%.3g periods), phase speed error %+.3e, "
             "amplitude ratio %.6f, L1 error %.4e, max div B %.2e\n",
             o->res[r], res.steps, res.t, res.t / Pb.period, res.D.phase_err, res.D.amp_ratio,
             res.D.l1, res.divb);
      if (r > 0)
        printf("alfven order %d^3 -> %d^3: %.3f\n", o->res[r - 1], o->res[r],
               log(err[r - 1] / err[r]) / log((double)o->res[r] / o->res[r - 1]));
      fflush(stdout);
    }
    if (res.divb > DIVB_TOL) bad = 1;
    if (r > 0 && o->expect_order >= 0 &&
        log(err[r - 1] / err[r]) / log((double)o->res[r] / o->res[r - 1]) < o->expect_order)
      bad = 1;
    free_plans(&P);
    state_free(&S);
    hs_decomp_free(&d);
  }
  if (o->expect_phase >= 0 && fabs(ph[o->nres - 1]) > o->expect_phase) bad = 1;
  if (bad) {
    app_fail(a, "accuracy check failed: phase speed error %.3e on %d^3 (limit %g), order limit %g, "
                "div B limit %g (numbers above)",
             ph[o->nres - 1], o->res[o->nres - 1], o->expect_phase, o->expect_order, DIVB_TOL);
    app_agree(a);
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------------------ main */
static int cmpd(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
  int ok;
  char why[1024];
  plans P;
  double setup;
  result first;     /* checksums and diagnostics of the first round */
  double *comm, *step, *ph[NPH]; /* per round */
} trun;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  app_ctx a;
  app_init(&a, PROG, MPI_COMM_WORLD);
  options o;
  int help = 0, status = 0;
  parse(&a, argc, argv, &o, &help);
  if (app_agree(&a)) goto fail;
  if (help) {
    if (a.rank == 0) usage();
    MPI_Finalize();
    return 0;
  }
  if (o.nres) {
    status = converge(&a, &o);
    MPI_Finalize();
    return status;
  }
  FILE *js = app_json_open(&a, o.json);
  if (app_agree(&a)) goto fail;
  app_transports_expand(&a, &o.tr);
  hs_decomp d = make_decomp(&a, o.global, o.procs);
  if (app_agree(&a)) goto fail;
  state S;
  state_alloc(&a, &S, d);
  if (app_agree(&a)) goto fail;
  problem Pb;
  problem_init(&Pb, o.amp, o.flow);
  runcfg C = {o.steps, o.periods * Pb.period, o.cfl, o.warmup};
  int nt = o.tr.n;
  trun *T = calloc((size_t)nt, sizeof *T);
  if (!T) app_fail(&a, "out of memory");
  if (app_agree(&a)) goto fail;
  if (a.rank == 0) {
    int n0[3] = {S.n[0], S.n[1], S.n[2]};
    printf("lare-mini: %d ranks (%d x %d x %d), global %d x %d x %d, local %d x %d x %d (rank 0), "
           "Alfven wave amplitude %g, %s, %d round%s, %d warm-up step%s\n",
           a.size, hs_decomp_procs(d, 0), hs_decomp_procs(d, 1), hs_decomp_procs(d, 2),
           o.global[0], o.global[1], o.global[2], n0[0], n0[1], n0[2], o.amp,
           o.steps ? "fixed steps" : "to a time", o.rounds, o.rounds > 1 ? "s" : "", o.warmup,
           o.warmup == 1 ? "" : "s");
    fflush(stdout);
  }
  /* Plans of every transport first, so the rounds can interleave them. */
  for (int t = 0; t < nt; t++) {
    double t0 = MPI_Wtime();
    int rc = create_plans(&S, d, o.tr.spec[t], &T[t].P, T[t].why, sizeof T[t].why);
    T[t].setup = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &T[t].setup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rc == HS_ERR_UNAVAILABLE) {
      if (a.rank == 0) printf("transport %s unavailable for lare-mini's fields: %s\n", o.tr.spec[t], T[t].why);
      continue;
    }
    if (rc != HS_OK) {
      app_fail(&a, "transport '%s': %s", o.tr.spec[t], T[t].why);
      break;
    }
    T[t].ok = 1;
    T[t].comm = calloc((size_t)o.rounds, sizeof(double));
    T[t].step = calloc((size_t)o.rounds, sizeof(double));
    for (int p = 0; p < NPH; p++) T[t].ph[p] = calloc((size_t)o.rounds, sizeof(double));
    if (o.verbose) {
      hs_plan pl[4] = {T[t].P.all, T[t].P.v, T[t].P.erv, T[t].P.dm[0]};
      const char *nm[4] = {"all fields", "velocity", "energy+density+velocity", "mass flux x"};
      for (int q = 0; q < 4; q++) {
        char buf[4096];
        if (hs_plan_describe(pl[q], buf, sizeof buf) == HS_OK && a.rank == 0)
          printf("plan %s (%s): %s\n", nm[q], o.tr.spec[t], buf);
      }
    }
  }
  if (app_agree(&a)) goto fail;
  int nok = 0;
  for (int t = 0; t < nt; t++) nok += T[t].ok;
  if (nok == 0) {
    app_fail(&a, "no transport could serve the plans (reasons above)");
    app_agree(&a);
    goto fail;
  }
  for (int r = 0; r < o.rounds; r++)
    for (int q = 0; q < nt; q++) {
      int t = (q + r) % nt;
      if (!T[t].ok) continue;
      result res;
      run(&S, &T[t].P, &Pb, &C, a.rank, a.size, &res);
      if (r == 0)
        T[t].first = res;
      else if (memcmp(res.sums, T[t].first.sums, sizeof res.sums)) {
        app_fail(&a, "transport %s: round %d gave other bits than round 1", o.tr.spec[t], r + 1);
        status = 1;
      }
      T[t].comm[r] = res.comm_max;
      T[t].step[r] = res.step_max;
      for (int p = 0; p < NPH; p++) T[t].ph[p][r] = res.ph_max[p];
    }
  if (app_agree(&a)) goto fail;
  int nsteps = 0;
  for (int t = nt - 1; t >= 0; t--)
    if (T[t].ok) nsteps = T[t].first.steps;

  if (a.rank == 0 && js)
    fprintf(js, "{\"app\": \"lare-mini\", \"language\": \"C\", \"ranks\": %d, \"procs\": [%d, %d, %d], "
                "\"global\": [%d, %d, %d], \"amp\": %g, \"steps\": %d, \"rounds\": %d, \"warmup\": %d,\n"
                " \"unavailable\": [",
            a.size, hs_decomp_procs(d, 0), hs_decomp_procs(d, 1), hs_decomp_procs(d, 2),
            o.global[0], o.global[1], o.global[2], o.amp, nsteps, o.rounds, o.warmup);
  int first = 1;
  for (int t = 0; t < nt && a.rank == 0 && js; t++)
    if (!T[t].ok) {
      fprintf(js, "%s{\"transport\": ", first ? "" : ", ");
      app_json_string(js, o.tr.spec[t]);
      fprintf(js, ", \"reason\": ");
      app_json_string(js, T[t].why);
      fprintf(js, "}");
      first = 0;
    }
  if (a.rank == 0 && js) fprintf(js, "],\n \"runs\": [");
  first = 1;
  for (int t = 0; t < nt; t++) {
    if (!T[t].ok) continue;
    result *res = &T[t].first;
    if (res->divb > DIVB_TOL) {
      status = 1;
      app_fail(&a, "transport %s: |div B| dx / max|B| reached %.3e, above %g", o.tr.spec[t],
               res->divb, DIVB_TOL);
    }
    if (a.rank != 0) continue;
    double cm[3], sm, phm[NPH];
    double *tmp = malloc((size_t)o.rounds * sizeof *tmp);
    if (!tmp) MPI_Abort(MPI_COMM_WORLD, 2);
    memcpy(tmp, T[t].comm, (size_t)o.rounds * sizeof *tmp);
    cm[1] = median(tmp, o.rounds);
    cm[0] = tmp[0];
    cm[2] = tmp[o.rounds - 1];
    memcpy(tmp, T[t].step, (size_t)o.rounds * sizeof *tmp);
    sm = median(tmp, o.rounds);
    for (int p = 0; p < NPH; p++) {
      memcpy(tmp, T[t].ph[p], (size_t)o.rounds * sizeof *tmp);
      phm[p] = median(tmp, o.rounds);
    }
    free(tmp);
    const char *sel = hs_plan_selected_transport(T[t].P.all);
    printf("run transport=%s\n", o.tr.spec[t]);
    for (int f = 0; f < 8; f++)
      printf("checksum %s %016llX\n", field_names[f], (unsigned long long)res->sums[f]);
    const double gs[4] = {res->D.mass, res->D.ekin, res->D.emag, res->D.eint};
    const char *gn[4] = {"mass", "kinetic_energy", "magnetic_energy", "internal_energy"};
    for (int q = 0; q < 4; q++) printf("checksum %s %016llX\n", gn[q], (unsigned long long)bits(gs[q]));
    printf("energy: mass %.17g kinetic %.17g magnetic %.17g internal %.17g\n", gs[0], gs[1],
           gs[2], gs[3]);
    printf("alfven: %d steps to t = %.6f (%.3g periods): phase speed error %+.3e, amplitude "
           "ratio %.6f, L1 error %.4e\n",
           res->steps, res->t, res->t / Pb.period, res->D.phase_err, res->D.amp_ratio, res->D.l1);
    printf("divb: max |div B| dx / max|B| over the run %.3e (checked every step, limit %g)\n",
           res->divb, DIVB_TOL);
    printf("setup %s: plans created in %.3e s (max over ranks)%s%s\n", o.tr.spec[t], T[t].setup,
           strcmp(sel, o.tr.spec[t]) ? ", selected " : "", strcmp(sel, o.tr.spec[t]) ? sel : "");
    printf("timing %s: per step over %d timed steps x %d rounds, max over ranks of the per-rank "
           "mean: exchange %.3e s (median; min %.3e, max %.3e) = lagrangian %.3e + remap_dm "
           "%.3e + remap_fields %.3e + remap_bfield %.3e; step %.3e s\n",
           o.tr.spec[t], res->timed, o.rounds, cm[1], cm[0], cm[2], phm[0], phm[1], phm[2],
           phm[3], sm);
    if (js) {
      fprintf(js, "%s\n  {\"transport\": ", first ? "" : ",");
      app_json_string(js, o.tr.spec[t]);
      fprintf(js, ", \"selected\": ");
      app_json_string(js, sel);
      fprintf(js, ", \"status\": \"ok\", \"setup_s\": %.6e, \"timed_steps\": %d, \"divb\": %.3e, "
                  "\"phase_speed_error\": %.6e, \"l1_error\": %.6e, \"checksums\": {",
              T[t].setup, res->timed, res->divb, res->D.phase_err, res->D.l1);
      for (int f = 0; f < 8; f++)
        fprintf(js, "%s\"%s\": \"%016llX\"", f ? ", " : "", field_names[f],
                (unsigned long long)res->sums[f]);
      for (int q = 0; q < 4; q++)
        fprintf(js, ", \"%s\": \"%016llX\"", gn[q], (unsigned long long)bits(gs[q]));
      fprintf(js, "},\n   \"per_step_max\": {\"step\": %.6e, \"compute\": %.6e, \"comm\": %.6e",
              sm, sm - cm[1], cm[1]);
      for (int p = 0; p < NPH; p++) fprintf(js, ", \"comm_%s\": %.6e", phase_name[p], phm[p]);
      fprintf(js, "},\n   \"exchange_rounds\": [");
      for (int r = 0; r < o.rounds; r++) fprintf(js, "%s%.6e", r ? ", " : "", T[t].comm[r]);
      fprintf(js, "], \"exchange_median\": %.6e, \"exchange_min\": %.6e, \"exchange_max\": %.6e}",
              cm[1], cm[0], cm[2]);
    }
    first = 0;
    fflush(stdout);
  }
  if (a.rank == 0 && js) {
    fprintf(js, "\n ]}\n");
    fclose(js);
  }
  if (app_agree(&a)) status = 1;
  for (int t = 0; t < nt; t++) {
    if (!T[t].ok) continue;
    free_plans(&T[t].P);
    free(T[t].comm);
    free(T[t].step);
    for (int p = 0; p < NPH; p++) free(T[t].ph[p]);
  }
  free(T);
  state_free(&S);
  hs_decomp_free(&d);
  MPI_Finalize();
  return status;
fail:
  MPI_Finalize();
  return 1;
}
