/* brams-mini: the ghost-zone exchange of BRAMS' long timestep on simple numerics.
 *
 * A limited-area grid (walls in x and y, no periodicity), nz vertical levels, many fields
 * (u, v, w and scalars) stored as BRAMS does, a(z,x,y): z fastest, then x, then y. Per step:
 *  1. physics: column-local (vertical mixing, relaxation) on the interior;
 *  2. the ghost-zone exchange of every field is posted (depth 1, 5-point star);
 *  3. column-local dynamics overlap it: Coriolis, vertical advection, Rayleigh friction;
 *  4. the exchange is completed (walls get a zero-gradient ghost zone);
 *  5. horizontal advection and diffusion on the 5-point stencil, then the update.
 * Every point's arithmetic is the same whatever the decomposition, so checksums are the same
 * bits for every transport and process count. */
#include "app_common.h"
#include "haloswap.h"

#include <stdlib.h>
#include <string.h>

#define PROG "brams-mini"
#define DT 0.2
#define KH 0.1   /* horizontal diffusivity */
#define FCOR 0.05

typedef struct {
  int global[3], nfields, steps;
  app_common_opts c;
} options;

typedef struct {
  int nx, ny, nz, ox, oy;
  int wall[4];            /* this rank touches the west, east, south, north wall */
  ptrdiff_t sx, sy;       /* element strides: z contiguous, then x, then y */
  size_t n;
  int nf;
  double **a, **t;        /* fields (with ghost zone) and tendencies */
  double *col;            /* one column of scratch */
  hs_decomp d;
  int shared;             /* fields come from hs_alloc */
} state;

#define IX(S, k, i, j) ((ptrdiff_t)(k) + (S)->sx * ((i) + 1) + (S)->sy * ((j) + 1))

static void usage(void) {
  printf(
      "Usage: brams-mini [options]\n"
      "The ghost-zone exchange of a BRAMS long timestep (posted after the physics, completed\n"
      "before the diffusion) on every haloswap transport.\n"
      APP_USAGE_TRANSPORT
      "  --global NX,NY,NZ  horizontal points and vertical levels (default 100,100,32)\n"
      "  --fields N         fields exchanged (default 20, at least 3: u, v, w, scalars)\n"
      "  --steps N          timesteps (default 1440 = 24 h; the first is not timed when N > 1)\n"
      APP_USAGE_COMMON);
}

static int own_option(app_ctx *a, void *opts, const char *k, const char *v) {
  options *o = opts;
  if (!strcmp(k, "--global")) return app_triple(a, k, v, 1, 1 << 24, o->global);
  return -1;
}

static int parse(app_ctx *a, int argc, char **argv, options *o) {
  *o = (options){.global = {100, 100, 32}, .nfields = 20, .steps = 1440};
  app_common_init(&o->c);
  const app_int_opt ints[] = {{"--fields", 3, 1024, &o->nfields},
                              {"--steps", 1, 100000000, &o->steps}};
  return app_parse(a, &o->c, argc, argv, ints, 2, own_option, o);
}

static int check_grid(app_ctx *a, void *opts, const int procs[2]) {
  const options *o = opts;
  for (int d = 0; d < 2; d++)
    if (procs[d] > o->global[d])
      return app_fail(a,
                      "%d ranks along %c but the grid has only %d columns in %c: grid smaller "
                      "than the ghost zone of depth 1 on some rank",
                      procs[d], "xy"[d], o->global[d], "xy"[d]);
  return 0;
}

static void state_free(state *S) {
  for (int m = 0; m < S->nf; m++) {
    if (S->a) app_array_free(S->d, S->shared, S->a[m]);
    if (S->t) free(S->t[m]);
  }
  free(S->a);
  free(S->t);
  free(S->col);
  memset(S, 0, sizeof *S);
}

static int state_init(app_ctx *a, state *S, hs_decomp d, int nf, int shared) {
  memset(S, 0, sizeof *S);
  S->d = d;
  S->shared = shared;
  S->nx = hs_decomp_local_extent(d, 0);
  S->ny = hs_decomp_local_extent(d, 1);
  S->nz = hs_decomp_local_extent(d, 2);
  S->ox = hs_decomp_global_offset(d, 0);
  S->oy = hs_decomp_global_offset(d, 1);
  S->wall[0] = hs_decomp_coord(d, 0) == 0;
  S->wall[1] = hs_decomp_coord(d, 0) == hs_decomp_procs(d, 0) - 1;
  S->wall[2] = hs_decomp_coord(d, 1) == 0;
  S->wall[3] = hs_decomp_coord(d, 1) == hs_decomp_procs(d, 1) - 1;
  S->sx = S->nz;
  S->sy = (ptrdiff_t)S->nz * (S->nx + 2);
  S->n = (size_t)S->sy * (size_t)(S->ny + 2);
  S->nf = nf;
  S->a = calloc((size_t)nf, sizeof(double *));
  S->t = calloc((size_t)nf, sizeof(double *));
  S->col = calloc((size_t)S->nz, sizeof(double));
  if (!S->a || !S->t || !S->col) {
    S->nf = 0;
    return app_fail(a, "out of memory");
  }
  /* Every rank makes the same sequence of (collective) allocations, failed or not. */
  for (int m = 0; m < nf; m++) {
    S->a[m] = app_array(a, d, shared, S->n);
    S->t[m] = app_array(a, d, 0, S->n);
  }
  if (a->err[0]) return 1;
  for (int m = 0; m < nf; m++)
    for (int j = 0; j < S->ny; j++)
      for (int i = 0; i < S->nx; i++)
        for (int k = 0; k < S->nz; k++) {
          double r = app_init_value(S->ox + i, S->oy + j, k, m), x;
          if (m < 2)
            x = r - 0.5;
          else if (m == 2)
            x = 0.2 * (r - 0.5);
          else
            x = (double)(m - 2) + r;
          S->a[m][IX(S, k, i, j)] = x;
        }
  return 0;
}

/* Calls col(S, m, c0) for every field m and interior column (c0: its k = 0 cell), in the
 * order every kernel below sweeps the grid. */
static void for_columns(state *S, void (*col)(state *S, int m, ptrdiff_t c0)) {
  for (int m = 0; m < S->nf; m++)
    for (int j = 0; j < S->ny; j++)
      for (int i = 0; i < S->nx; i++) col(S, m, IX(S, 0, i, j));
}

/* 1. Physics: vertical mixing in every column, and relaxation of the scalars. */
static void physics_column(state *S, int m, ptrdiff_t c0) {
  const int nz = S->nz;
  double *a = S->a[m];
  for (int k = 0; k < nz; k++) S->col[k] = a[c0 + k];
  for (int k = 0; k < nz; k++) {
    double lo = k > 0 ? S->col[k - 1] : S->col[k];
    double hi = k + 1 < nz ? S->col[k + 1] : S->col[k];
    double x = S->col[k] + 0.1 * ((lo + hi) - 2.0 * S->col[k]);
    if (m >= 3) x = x + 0.01 * (((double)(m - 2) + 0.5 / (double)(k + 1)) - x);
    a[c0 + k] = x;
  }
}

static void physics(state *S) { for_columns(S, physics_column); }

/* 3. Column-local dynamics, overlapping the exchange: reads interior values only. */
static void dynamics_column(state *S, int m, ptrdiff_t c0) {
  const int nz = S->nz, rayleigh = nz - nz / 4;
  const double *u = S->a[0], *v = S->a[1], *w = S->a[2];
  const double *a = S->a[m];
  double *t = S->t[m];
  for (int k = 0; k < nz; k++) {
    const ptrdiff_t c = c0 + k;
    double x = 0.0;
    if (m == 0) x = FCOR * v[c];
    if (m == 1) x = -(FCOR * u[c]);
    double wc = w[c];
    if (wc > 0.0 && k > 0) x = x - wc * (a[c] - a[c - 1]);
    if (wc < 0.0 && k + 1 < nz) x = x - wc * (a[c + 1] - a[c]);
    if (m < 2 && k >= rayleigh) x = x - 0.01 * a[c];
    t[c] = x;
  }
}

static void column_dynamics(state *S) { for_columns(S, dynamics_column); }

/* Zero-gradient ghost zone on the walls (the exchange leaves it untouched). */
static void wall_ghosts(state *S) {
  const int nz = S->nz;
  const size_t zb = (size_t)nz * sizeof(double);
  for (int m = 0; m < S->nf; m++) {
    double *a = S->a[m];
    for (int j = 0; j < S->ny; j++) {
      if (S->wall[0]) memcpy(a + IX(S, 0, -1, j), a + IX(S, 0, 0, j), zb);
      if (S->wall[1]) memcpy(a + IX(S, 0, S->nx, j), a + IX(S, 0, S->nx - 1, j), zb);
    }
    for (int i = 0; i < S->nx; i++) {
      if (S->wall[2]) memcpy(a + IX(S, 0, i, -1), a + IX(S, 0, i, 0), zb);
      if (S->wall[3]) memcpy(a + IX(S, 0, i, S->ny), a + IX(S, 0, i, S->ny - 1), zb);
    }
  }
}

/* 5. Horizontal upwind advection and diffusion on the 5-point stencil, then the update. */
static void horizontal_column(state *S, int m, ptrdiff_t c0) {
  const ptrdiff_t sx = S->sx, sy = S->sy;
  const double *u = S->a[0], *v = S->a[1];
  const double *a = S->a[m];
  double *t = S->t[m];
  for (int k = 0; k < S->nz; k++) {
    const ptrdiff_t c = c0 + k;
    double uc = u[c], vc = v[c];
    double ax = uc > 0.0 ? uc * (a[c] - a[c - sx]) : uc * (a[c + sx] - a[c]);
    double ay = vc > 0.0 ? vc * (a[c] - a[c - sy]) : vc * (a[c + sy] - a[c]);
    double lap = ((a[c - sx] + a[c + sx]) + (a[c - sy] + a[c + sy])) - 4.0 * a[c];
    t[c] = (t[c] - (ax + ay)) + KH * lap;
  }
}

static void update_column(state *S, int m, ptrdiff_t c0) {
  double *a = S->a[m];
  const double *t = S->t[m];
  for (int k = 0; k < S->nz; k++) a[c0 + k] = a[c0 + k] + DT * t[c0 + k];
}

/* Every tendency first, then the update: u and v advect every field. */
static void horizontal_and_update(state *S) {
  for_columns(S, horizontal_column);
  for_columns(S, update_column);
}

static void field_name(const void *ctx, int m, char *buf, size_t len) {
  (void)ctx;
  static const char *base[3] = {"u", "v", "w"};
  if (m < 3)
    snprintf(buf, len, "%s", base[m]);
  else
    snprintf(buf, len, "s%d", m - 2);
}

int main(int argc, char **argv) {
  app_ctx a;
  app_start(&a, PROG, &argc, &argv);
  options o;
  parse(&a, argc, argv, &o);
  int go = app_begin(&a, &o.c, usage, check_grid, &o);
  if (go) return app_exit(go > 0);

  hs_decomp d = app_decomp(&a, o.global, a.procs, 0); /* a limited-area model: walled */
  if (app_agree(&a)) goto fail;

  const int nf = o.nfields, timed = o.steps > 1 ? o.steps - 1 : 1;
  if (a.rank == 0) {
    printf("brams-mini: %d ranks (%d x %d), global %d x %d x %d, local %d x %d x %d (rank 0), "
           "%d fields, %d steps, %s fields\n",
           a.size, a.procs[0], a.procs[1], o.global[0], o.global[1], o.global[2],
           hs_decomp_local_extent(d, 0), hs_decomp_local_extent(d, 1),
           hs_decomp_local_extent(d, 2), nf, o.steps, o.c.shared ? "hs_alloc" : "malloc");
    if (a.js)
      fprintf(a.js, "{\"app\": \"brams-mini\", \"language\": \"C\", \"ranks\": %d, "
                  "\"procs\": [%d, %d], \"global\": [%d, %d, %d], \"fields\": %d, "
                  "\"steps\": %d, \"alloc\": \"%s\",\n \"runs\": [",
              a.size, a.procs[0], a.procs[1], o.global[0], o.global[1], o.global[2], nf, o.steps,
              o.c.shared ? "shared" : "malloc");
  }
  uint64_t *sums = malloc((size_t)nf * sizeof *sums), *gsums = malloc((size_t)nf * sizeof *gsums);
  hs_field *fl = calloc((size_t)nf, sizeof *fl);
  if (!sums || !gsums || !fl) app_fail(&a, "out of memory");
  if (app_agree(&a)) goto fail;

  for (int r = 0; r < o.c.tr.n; r++) {
    const char *spec = o.c.tr.spec[r];
    state S;
    state_init(&a, &S, d, nf, o.c.shared);
    if (app_agree(&a)) {
      state_free(&S);
      goto fail;
    }
    /* BRAMS' a(z,x,y): strided layout, ghost zone 1 in x and y, none in z. */
    for (int m = 0; m < nf; m++) {
      hs_field f = hs_field_array(HS_FLOAT64, S.a[m], HS_LAYOUT_STRIDED, 1);
      f.halo[2] = 0;
      f.stride[0] = S.sx;
      f.stride[1] = S.sy;
      f.stride[2] = 1;
      fl[m] = f;
    }
    hs_plan_desc pd;
    app_plan_desc_xy(&pd, 1, HS_STENCIL_STAR, nf, fl, spec);
    hs_plan plan = NULL;
    double tsetup = MPI_Wtime();
    if (hs_plan_create(d, &pd, &plan) != HS_OK)
      app_fail(&a, "transport '%s': %s", spec, hs_error_message());
    if (app_agree(&a)) {
      state_free(&S);
      goto fail;
    }
    tsetup = MPI_Wtime() - tsetup;
    MPI_Allreduce(MPI_IN_PLACE, &tsetup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (o.c.verbose) {
      char buf[2048];
      if (hs_plan_describe(plan, buf, sizeof buf) == HS_OK && a.rank == 0) printf("plan: %s\n", buf);
    }
    app_timing tm;
    memset(&tm, 0, sizeof tm);
    tm.nphases = 1;
    tm.phase[0] = "exchange";
    double tstart = 0.0;
    for (int st = 0; st < o.steps; st++) {
      if (st == o.steps - timed) {
        MPI_Barrier(MPI_COMM_WORLD);
        tm.comm[0] = 0.0;
        tstart = MPI_Wtime();
      }
      physics(&S);
      double t0 = MPI_Wtime();
      int rc = hs_swap_start(plan, NULL);
      tm.comm[0] += MPI_Wtime() - t0;
      if (rc == HS_OK) {
        column_dynamics(&S);
        t0 = MPI_Wtime();
        rc = hs_swap_complete(plan, NULL);
        tm.comm[0] += MPI_Wtime() - t0;
      }
      if (rc != HS_OK) {
        fprintf(stderr, "%s: rank %d: step %d with transport '%s': %s\n", PROG, a.rank, st + 1,
                spec, hs_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      wall_ghosts(&S);
      horizontal_and_update(&S);
    }
    tm.total = MPI_Wtime() - tstart;
    tm.steps = timed;
    for (int m = 0; m < nf; m++) {
      uint64_t acc = 0;
      for (int j = 0; j < S.ny; j++)
        for (int i = 0; i < S.nx; i++)
          acc = app_checksum_add(acc, S.a[m] + IX(&S, 0, i, j), (size_t)S.nz);
      sums[m] = acc;
    }
    MPI_Allreduce(sums, gsums, nf, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    app_timing_summary ts;
    app_timing_summarise(MPI_COMM_WORLD, &tm, &ts);
    if (a.rank == 0) {
      app_print_checksums(spec, nf, gsums, field_name, NULL);
      printf("setup %s: plan created in %.3e s (max over ranks)\n", spec, tsetup);
      app_timing_print(stdout, spec, &tm, &ts);
      app_json_run(a.js, r == 0, spec, "", tsetup, nf, gsums, field_name, NULL, &tm, &ts);
      fflush(stdout);
    }
    hs_plan_free(&plan);
    state_free(&S);
  }
  app_json_close(&a);
  free(fl);
  free(sums);
  free(gsums);
  hs_decomp_free(&d);
  return app_exit(0);
fail:
  return app_exit(1);
}
