/* monc-mini: the halo-swap shape of one MONC timestep on real (if simplified) numerics.
 *
 * Per timestep, as MONC does (docs/mini-apps.md has the details):
 *  1. blocking depth-2 box swap of every prognostic field and its previous time level
 *     (u, zu, v, zv, w, zw, th, zth, q(n), zq(n): 30 fields with 11 moisture fields);
 *  2. sub-grid coefficients (viscosity, diffusivity) computed from the flow, then swapped
 *     non-blocking at depth 2 with corners while the TVD advection of every field runs;
 *     the diffusion that needs them completes the swap;
 *  3. a pressure solve: a fixed number of Jacobi iterations, each one starting a depth-1
 *     star swap of the current iterate (a different array every iteration, given per swap
 *     as MONC's source_data), computing the interior, completing, then the four edge strips,
 *     as MONC's calc_Ax; the maximum divergence is reduced non-blocking meanwhile;
 *  4. the update of every field (the old value becomes the previous time level).
 * Every point's arithmetic is the same expression whatever the decomposition, so the bits
 * are the same for every transport and process count (and for the Fortran twin). */
#include "app_common.h"
#include "haloswap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define H 2          /* allocated halo and prognostic swap depth */
#define DT 0.1       /* time step (grid spacing 1) */
#define PROG "monc-mini"

typedef struct {
  int global[3], local[3], have_global, have_local;
  int nq, steps, iters;
  app_common_opts c;
} options;

typedef struct {
  int nx, ny, nz, ox, oy;
  ptrdiff_t sx, sy; /* element strides of x and y (z is contiguous) */
  size_t n;         /* elements per array, halo included */
  int nprog;        /* 4 + nq */
  double **s, **zs, **tend; /* per prognostic: current, previous time level, tendency */
  double *visc, *diff, *rhs, *p[2];
  int pcur;
  int iters;       /* Jacobi iterations per step */
  hs_decomp d;
  int shared;      /* swapped arrays come from hs_alloc */
} state;

#define IX(S, k, j, i) ((ptrdiff_t)(k) + (S)->sy * ((j) + H) + (S)->sx * ((i) + H))
/* Every point c = IX(S, k, j, i) of the columns [i0,i1) x [j0,j1), k fastest: the sweep of
 * every kernel below (z is contiguous, so c steps with k). */
#define FOR_POINTS(S, i0, i1, j0, j1, k, c)                                                     \
  for (int i_ = (i0); i_ < (i1); i_++)                                                         \
    for (int j_ = (j0); j_ < (j1); j_++)                                                       \
      for (ptrdiff_t k = 0, c = IX(S, 0, j_, i_); k < (S)->nz; k++, c++)

static void usage(void) {
  printf(
      "Usage: monc-mini [options]\n"
      "The halo-swap pattern of a MONC timestep (prognostic swap, overlapped coefficient swap,\n"
      "iterative pressure solve with one swap per iteration) on every haloswap transport.\n"
      APP_USAGE_TRANSPORT
      "  --local NX,NY,NZ   interior points per rank (default 16,16,256); global = local x ranks\n"
      "  --global NX,NY,NZ  global grid instead (split as MONC does: first ranks get one more)\n"
      "  --nq N             moisture fields (default 11: 2*(4+N) = 30 swapped fields)\n"
      "  --steps N          timesteps (default 10; the first is not timed when N > 1)\n"
      "  --iters N          Jacobi iterations of the pressure solve per step (default 8)\n"
      APP_USAGE_COMMON);
}

static int own_option(app_ctx *a, void *opts, const char *k, const char *v) {
  options *o = opts;
  if (!strcmp(k, "--local")) {
    if (app_triple(a, k, v, 1, 1 << 20, o->local)) return 1;
    o->have_local = 1;
  } else if (!strcmp(k, "--global")) {
    if (app_triple(a, k, v, 1, 1 << 24, o->global)) return 1;
    o->have_global = 1;
  } else {
    return -1;
  }
  return 0;
}

static int parse(app_ctx *a, int argc, char **argv, options *o) {
  *o = (options){.local = {16, 16, 256}, .nq = 11, .steps = 10, .iters = 8};
  app_common_init(&o->c);
  const app_int_opt ints[] = {{"--nq", 0, 500, &o->nq},
                              {"--steps", 1, 100000000, &o->steps},
                              {"--iters", 1, 100000, &o->iters}};
  if (app_parse(a, &o->c, argc, argv, ints, 3, own_option, o)) return 1;
  if (o->have_global && o->have_local)
    return app_fail(a, "options --global and --local exclude each other");
  return 0;
}

/* The global grid over the process grid; every rank needs at least H columns per axis. */
static int check_grid(app_ctx *a, void *opts, const int procs[2]) {
  options *o = opts;
  if (!o->have_global)
    for (int d = 0; d < 2; d++) {
      if (o->local[d] < H)
        return app_fail(a, "option --local: %c extent %d is smaller than the halo depth %d",
                        "xy"[d], o->local[d], H);
      o->global[d] = o->local[d] * procs[d];
    }
  if (!o->have_global) o->global[2] = o->local[2];
  return app_check_columns(a, procs, o->global, H, "the halo depth");
}

/* Frees in allocation order (hs_free is collective in that order). */
static void state_free(state *S) {
  for (int m = 0; m < S->nprog; m++) {
    if (S->s) app_array_free(S->d, S->shared, S->s[m]);
    if (S->zs) app_array_free(S->d, S->shared, S->zs[m]);
    if (S->tend) free(S->tend[m]);
  }
  app_array_free(S->d, S->shared, S->visc);
  app_array_free(S->d, S->shared, S->diff);
  app_array_free(S->d, S->shared, S->p[0]);
  app_array_free(S->d, S->shared, S->p[1]);
  free(S->s);
  free(S->zs);
  free(S->tend);
  free(S->rhs);
  memset(S, 0, sizeof *S);
}

static int state_init(app_ctx *a, state *S, hs_decomp d, int nq, int shared) {
  memset(S, 0, sizeof *S);
  S->d = d;
  S->shared = shared;
  S->nx = hs_decomp_local_extent(d, 0);
  S->ny = hs_decomp_local_extent(d, 1);
  S->nz = hs_decomp_local_extent(d, 2);
  S->ox = hs_decomp_global_offset(d, 0);
  S->oy = hs_decomp_global_offset(d, 1);
  S->sy = S->nz;
  S->sx = (ptrdiff_t)S->nz * (S->ny + 2 * H);
  S->n = (size_t)S->sx * (size_t)(S->nx + 2 * H);
  S->nprog = 4 + nq;
  S->s = calloc((size_t)S->nprog, sizeof(double *));
  S->zs = calloc((size_t)S->nprog, sizeof(double *));
  S->tend = calloc((size_t)S->nprog, sizeof(double *));
  if (!S->s || !S->zs || !S->tend) {
    S->nprog = 0;
    return app_fail(a, "out of memory");
  }
  /* Every rank makes the same sequence of (collective) allocations, failed or not. */
  for (int m = 0; m < S->nprog; m++) {
    S->s[m] = app_array(a, d, shared, S->n);
    S->zs[m] = app_array(a, d, shared, S->n);
    S->tend[m] = app_array(a, d, 0, S->n);
  }
  S->visc = app_array(a, d, shared, S->n);
  S->diff = app_array(a, d, shared, S->n);
  S->p[0] = app_array(a, d, shared, S->n);
  S->p[1] = app_array(a, d, shared, S->n);
  S->rhs = app_array(a, d, 0, S->n);
  if (a->err[0]) return 1;
  for (int m = 0; m < S->nprog; m++)
    for (int i = 0; i < S->nx; i++)
      for (int j = 0; j < S->ny; j++)
        for (int k = 0; k < S->nz; k++) {
          double r = app_init_value(S->ox + i, S->oy + j, k, m), x;
          if (m < 2)
            x = 0.6 * (r - 0.5);
          else if (m == 2)
            x = 0.2 * (r - 0.5);
          else if (m == 3)
            x = 300.0 + (r - 0.5);
          else
            x = (0.001 * (double)(m - 3)) * r;
          ptrdiff_t c = IX(S, k, j, i);
          S->s[m][c] = x;
          S->zs[m][c] = x;
        }
  return 0;
}

/* van Leer limiter of the upwind and local differences. */
static inline double vanleer(double up, double loc) {
  double ab = up * loc;
  return ab > 0.0 ? (2.0 * ab) / (up + loc) : 0.0;
}

/* TVD flux through the face between cells m (lower) and c (upper); mm is below m and cp
 * above c. Upwind value plus a limited, Courant-weighted anti-diffusive correction. */
static inline double tvd_flux(double vel, double smm, double sm, double sc, double scp) {
  if (vel >= 0.0) {
    double cr = vel * DT;
    return vel * (sm + (0.5 * (1.0 - cr)) * vanleer(sm - smm, sc - sm));
  }
  double cr = -(vel * DT);
  return vel * (sc - (0.5 * (1.0 - cr)) * vanleer(scp - sc, sc - sm));
}

/* Advection tendency of field s by the flow (u, v, w) at every interior point: each face
 * flux reads two cells upwind, so the x and y faces of the first and last columns read the
 * whole depth-2 halo. */
static void advect(const state *S, const double *s, double *t) {
  const double *u = S->s[0], *v = S->s[1], *w = S->s[2];
  const ptrdiff_t sx = S->sx, sy = S->sy;
  const int nz = S->nz;
  FOR_POINTS(S, 0, S->nx, 0, S->ny, k, c) {
    double fxm = tvd_flux(0.5 * (u[c - sx] + u[c]), s[c - 2 * sx], s[c - sx], s[c], s[c + sx]);
    double fxp = tvd_flux(0.5 * (u[c] + u[c + sx]), s[c - sx], s[c], s[c + sx], s[c + 2 * sx]);
    double fym = tvd_flux(0.5 * (v[c - sy] + v[c]), s[c - 2 * sy], s[c - sy], s[c], s[c + sy]);
    double fyp = tvd_flux(0.5 * (v[c] + v[c + sy]), s[c - sy], s[c], s[c + sy], s[c + 2 * sy]);
    double fzm = 0.0, fzp = 0.0;
    if (k > 0)
      fzm = tvd_flux(0.5 * (w[c - 1] + w[c]), k > 1 ? s[c - 2] : s[c - 1], s[c - 1], s[c],
                     k + 1 < nz ? s[c + 1] : s[c]);
    if (k + 1 < nz)
      fzp = tvd_flux(0.5 * (w[c] + w[c + 1]), k > 0 ? s[c - 1] : s[c], s[c], s[c + 1],
                     k + 2 < nz ? s[c + 2] : s[c + 1]);
    t[c] = -(((fxp - fxm) + (fyp - fym)) + (fzp - fzm));
  }
}

/* Smagorinsky-like coefficients from the deformation, and the divergence (pressure source).
 * Returns the local maximum |divergence|. */
static double coefficients(state *S) {
  const double *u = S->s[0], *v = S->s[1], *w = S->s[2];
  const ptrdiff_t sx = S->sx, sy = S->sy;
  const int nz = S->nz;
  double divmax = 0.0;
  FOR_POINTS(S, 0, S->nx, 0, S->ny, k, c) {
    double dudx = u[c + sx] - u[c - sx], dvdy = v[c + sy] - v[c - sy];
    double dudy = u[c + sy] - u[c - sy], dvdx = v[c + sx] - v[c - sx];
    double wp = k + 1 < nz ? w[c + 1] : 0.0, wm = k > 0 ? w[c - 1] : 0.0;
    double dwdz = wp - wm, shear = dudy + dvdx;
    double def = ((dudx * dudx + dvdy * dvdy) + dwdz * dwdz) + 0.5 * (shear * shear);
    S->visc[c] = 0.01 + 0.04 * (def / (1.0 + def));
    S->diff[c] = 0.01 + 0.05 * (def / (0.5 + def));
    double div = 0.5 * ((dudx + dvdy) + dwdz);
    S->rhs[c] = div / DT;
    double ad = fabs(div);
    if (ad > divmax) divmax = ad;
  }
  return divmax;
}

/* Diffusion of the previous time level zs with coefficient K (needs K's depth-1 halo and
 * zs's depth-1 box halo), added to the tendency. */
static void diffuse(const state *S, const double *K, const double *zs, double *t) {
  const ptrdiff_t sx = S->sx, sy = S->sy;
  const int nz = S->nz;
  FOR_POINTS(S, 0, S->nx, 0, S->ny, k, c) {
    double kb = (4.0 * K[c] + ((K[c - sx] + K[c + sx]) + (K[c - sy] + K[c + sy]))) * 0.125;
    double lap = ((4.0 * ((zs[c - sx] + zs[c + sx]) + (zs[c - sy] + zs[c + sy])) +
                   ((zs[c - sx - sy] + zs[c + sx + sy]) + (zs[c - sx + sy] + zs[c + sx - sy]))) -
                  20.0 * zs[c]) /
                 6.0;
    double zm = k > 0 ? zs[c - 1] : zs[c], zp = k + 1 < nz ? zs[c + 1] : zs[c];
    double lapz = (zm + zp) - 2.0 * zs[c];
    t[c] = t[c] + kb * (lap + lapz);
  }
}

/* One Jacobi sweep for lap(p) = rhs over columns [i0,i1) x [j0,j1). */
static void jacobi(const state *S, const double *p, double *q, int i0, int i1, int j0, int j1) {
  const ptrdiff_t sx = S->sx, sy = S->sy;
  const int nz = S->nz;
  FOR_POINTS(S, i0, i1, j0, j1, k, c) {
    double pm = k > 0 ? p[c - 1] : p[c], pp = k + 1 < nz ? p[c + 1] : p[c];
    q[c] = ((((p[c - sx] + p[c + sx]) + (p[c - sy] + p[c + sy])) + (pm + pp)) - S->rhs[c]) /
           6.0;
  }
}

/* Update: new = old + dt*tendency (- dt*grad p for the flow); old becomes the previous level. */
static void update(state *S) {
  const double *p = S->p[S->pcur];
  const ptrdiff_t sx = S->sx, sy = S->sy;
  const int nz = S->nz;
  for (int m = 0; m < S->nprog; m++) {
    double *s = S->s[m], *zs = S->zs[m];
    const double *t = S->tend[m];
    FOR_POINTS(S, 0, S->nx, 0, S->ny, k, c) {
      double g = 0.0;
      if (m == 0)
        g = 0.5 * (p[c + sx] - p[c - sx]);
      else if (m == 1)
        g = 0.5 * (p[c + sy] - p[c - sy]);
      else if (m == 2)
        g = 0.5 * ((k + 1 < nz ? p[c + 1] : p[c]) - (k > 0 ? p[c - 1] : p[c]));
      double old = s[c];
      s[c] = (old + DT * t[c]) - DT * g;
      zs[c] = old;
    }
  }
}

enum { PH_PROG, PH_COEF, PH_PRES, PH_REDUCE, NPH };

typedef struct {
  hs_plan prog, coef, pres;
} plans;

#define TIMED(tm, ph, call)            \
  do {                                 \
    double t0_ = MPI_Wtime();          \
    rc = (call);                       \
    (tm)->comm[ph] += MPI_Wtime() - t0_; \
  } while (0)

static int run_step(state *S, plans *P, app_timing *tm, MPI_Comm comm, double *divmax) {
  int rc;
  /* 1. all prognostics and their previous levels, depth 2 with corners */
  TIMED(tm, PH_PROG, hs_swap(P->prog, NULL));
  if (rc != HS_OK) return rc;
  /* 2. coefficients, swapped while advection runs */
  double dloc = coefficients(S);
  TIMED(tm, PH_COEF, hs_swap_start(P->coef, NULL));
  if (rc != HS_OK) return rc;
  MPI_Request red;
  double t0 = MPI_Wtime();
  MPI_Iallreduce(&dloc, divmax, 1, MPI_DOUBLE, MPI_MAX, comm, &red);
  tm->comm[PH_REDUCE] += MPI_Wtime() - t0;
  for (int m = 0; m < S->nprog; m++) advect(S, S->s[m], S->tend[m]);
  TIMED(tm, PH_COEF, hs_swap_complete(P->coef, NULL));
  if (rc != HS_OK) return rc;
  for (int m = 0; m < S->nprog; m++) diffuse(S, m < 3 ? S->visc : S->diff, S->zs[m], S->tend[m]);
  /* 3. pressure: per iteration a depth-1 star swap of the current iterate (calc_Ax) */
  const int nx = S->nx, ny = S->ny;
  for (int it = 0; it < S->iters; it++) {
    double *p = S->p[S->pcur], *q = S->p[1 - S->pcur];
    void *arrays[1] = {p};
    TIMED(tm, PH_PRES, hs_swap_start(P->pres, arrays));
    if (rc != HS_OK) return rc;
    jacobi(S, p, q, 1, nx - 1, 1, ny - 1); /* reads no halo */
    TIMED(tm, PH_PRES, hs_swap_complete(P->pres, arrays));
    if (rc != HS_OK) return rc;
    jacobi(S, p, q, 0, nx, 0, 1);
    jacobi(S, p, q, 0, nx, ny - 1, ny);
    jacobi(S, p, q, 0, 1, 1, ny - 1);
    jacobi(S, p, q, nx - 1, nx, 1, ny - 1);
    S->pcur = 1 - S->pcur;
  }
  void *final[1] = {S->p[S->pcur]};
  TIMED(tm, PH_PRES, hs_swap(P->pres, final));
  if (rc != HS_OK) return rc;
  t0 = MPI_Wtime();
  MPI_Wait(&red, MPI_STATUS_IGNORE);
  tm->comm[PH_REDUCE] += MPI_Wtime() - t0;
  /* 4. update */
  update(S);
  return HS_OK;
}

static void field_name(const void *ctx, int f, char *buf, size_t len) {
  const state *S = ctx;
  static const char *base[4] = {"u", "v", "w", "th"};
  if (f == 2 * S->nprog) {
    snprintf(buf, len, "p");
    return;
  }
  int m = f / 2;
  const char *z = (f % 2) ? "z" : "";
  if (m < 4)
    snprintf(buf, len, "%s%s", z, base[m]);
  else
    snprintf(buf, len, "%sq%d", z, m - 3);
}

static hs_field field_of(double *x) {
  hs_field f = hs_field_array(HS_FLOAT64, x, HS_LAYOUT_ZFAST, H);
  f.halo[2] = 0; /* no halo in z */
  return f;
}

static int create_plans(app_ctx *a, state *S, hs_decomp d, const char *spec, plans *P) {
  memset(P, 0, sizeof *P);
  int nf = 2 * S->nprog;
  hs_field *f = calloc((size_t)nf, sizeof *f);
  if (!f) app_fail(a, "out of memory");
  if (app_agree(a)) return 1;
  for (int m = 0; m < S->nprog; m++) {
    f[2 * m] = field_of(S->s[m]);
    f[2 * m + 1] = field_of(S->zs[m]);
  }
  hs_plan_desc pd;
  app_plan_desc_xy(&pd, H, HS_STENCIL_BOX, nf, f, spec);
  int rc = hs_plan_create(d, &pd, &P->prog);
  free(f);
  if (rc == HS_OK) {
    hs_field cf[2] = {field_of(S->visc), field_of(S->diff)};
    pd.nfields = 2;
    pd.fields = cf;
    rc = hs_plan_create(d, &pd, &P->coef);
  }
  if (rc == HS_OK) {
    hs_field pf[1] = {field_of(S->p[0])};
    pd.nfields = 1;
    pd.fields = pf;
    pd.depth[0] = pd.depth[1] = 1;
    pd.stencil = HS_STENCIL_STAR;
    rc = hs_plan_create(d, &pd, &P->pres);
  }
  if (rc != HS_OK) app_fail(a, "transport '%s': %s", spec, hs_error_message());
  return app_agree(a);
}

static void free_plans(plans *P) {
  hs_plan_free(&P->pres);
  hs_plan_free(&P->coef);
  hs_plan_free(&P->prog);
}

static void describe(app_ctx *a, plans *P) {
  hs_plan pl[3] = {P->prog, P->coef, P->pres};
  const char *what[3] = {"prognostic", "coefficients", "pressure"};
  for (int i = 0; i < 3; i++) {
    char buf[2048];
    if (hs_plan_describe(pl[i], buf, sizeof buf) == HS_OK && a->rank == 0)
      printf("plan %s: %s\n", what[i], buf);
  }
}

int main(int argc, char **argv) {
  app_ctx a;
  app_start(&a, PROG, &argc, &argv);
  options o;
  parse(&a, argc, argv, &o);
  int go = app_begin(&a, &o.c, usage, check_grid, &o);
  if (go) return app_exit(go > 0);

  hs_decomp d = app_decomp(&a, o.global, a.procs, 1);
  if (app_agree(&a)) goto fail;

  int nprog = 4 + o.nq, nf = 2 * nprog + 1;
  int timed = o.steps > 1 ? o.steps - 1 : 1;
  if (a.rank == 0) {
    printf("monc-mini: %d ranks (%d x %d), global %d x %d x %d, local %d x %d x %d (rank 0), "
           "%d prognostics + previous levels = %d fields swapped, %d steps, %d Jacobi "
           "iterations, %s fields\n",
           a.size, a.procs[0], a.procs[1], o.global[0], o.global[1], o.global[2],
           hs_decomp_local_extent(d, 0), hs_decomp_local_extent(d, 1),
           hs_decomp_local_extent(d, 2), nprog, 2 * nprog, o.steps, o.iters,
           o.c.shared ? "hs_alloc" : "malloc");
    if (a.js) {
      fprintf(a.js, "{\"app\": \"monc-mini\", \"language\": \"C\", \"ranks\": %d, "
                  "\"procs\": [%d, %d], \"global\": [%d, %d, %d], \"nq\": %d, "
                  "\"fields_swapped\": %d, \"steps\": %d, \"iters\": %d, \"alloc\": \"%s\",\n \"runs\": [",
              a.size, a.procs[0], a.procs[1], o.global[0], o.global[1], o.global[2], o.nq,
              2 * nprog, o.steps, o.iters, o.c.shared ? "shared" : "malloc");
    }
  }
  uint64_t *sums = malloc((size_t)nf * sizeof *sums), *gsums = malloc((size_t)nf * sizeof *gsums);
  if (!sums || !gsums) app_fail(&a, "out of memory");
  if (app_agree(&a)) goto fail;

  for (int r = 0; r < o.c.tr.n; r++) {
    const char *spec = o.c.tr.spec[r];
    state S;
    state_init(&a, &S, d, o.nq, o.c.shared);
    S.iters = o.iters;
    if (app_agree(&a)) {
      state_free(&S);
      goto fail;
    }
    plans P;
    double tsetup = MPI_Wtime();
    if (create_plans(&a, &S, d, spec, &P)) {
      state_free(&S);
      goto fail;
    }
    tsetup = MPI_Wtime() - tsetup;
    MPI_Allreduce(MPI_IN_PLACE, &tsetup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (o.c.verbose) describe(&a, &P);
    app_timing tm;
    memset(&tm, 0, sizeof tm);
    tm.nphases = NPH;
    tm.phase[PH_PROG] = "prognostic";
    tm.phase[PH_COEF] = "coefficients";
    tm.phase[PH_PRES] = "pressure";
    tm.phase[PH_REDUCE] = "reduction";
    double divmax = 0.0, tstart = 0.0;
    for (int st = 0; st < o.steps; st++) {
      if (st == o.steps - timed) {
        MPI_Barrier(MPI_COMM_WORLD);
        memset(tm.comm, 0, sizeof tm.comm);
        tstart = MPI_Wtime();
      }
      int rc = run_step(&S, &P, &tm, MPI_COMM_WORLD, &divmax);
      if (rc != HS_OK) {
        fprintf(stderr, "%s: rank %d: step %d with transport '%s': %s\n", PROG, a.rank, st + 1,
                spec, hs_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    tm.total = MPI_Wtime() - tstart;
    tm.steps = timed;

    for (int f = 0; f < nf; f++) {
      const double *x = f < 2 * nprog ? ((f % 2) ? S.zs[f / 2] : S.s[f / 2]) : S.p[S.pcur];
      uint64_t acc = 0;
      for (int i = 0; i < S.nx; i++)
        for (int j = 0; j < S.ny; j++) acc = app_checksum_add(acc, x + IX(&S, 0, j, i), (size_t)S.nz);
      sums[f] = acc;
    }
    MPI_Allreduce(sums, gsums, nf, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    app_timing_summary ts;
    app_timing_summarise(MPI_COMM_WORLD, &tm, &ts);
    if (a.rank == 0) {
      app_print_checksums(spec, nf, gsums, field_name, &S);
      printf("divmax %.17g\n", divmax);
      printf("setup %s: plans created in %.3e s (max over ranks)\n", spec, tsetup);
      app_timing_print(stdout, spec, &tm, &ts);
      char extra[64];
      snprintf(extra, sizeof extra, "\"divmax\": %.17g, ", divmax);
      app_json_run(a.js, r == 0, spec, extra, tsetup, nf, gsums, field_name, &S, &tm, &ts);
      fflush(stdout);
    }
    free_plans(&P);
    state_free(&S);
  }
  app_json_close(&a);
  free(sums);
  free(gsums);
  hs_decomp_free(&d);
  return app_exit(0);
fail:
  return app_exit(1);
}
