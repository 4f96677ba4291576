/* epic-fields: EPIC's parcel-to-grid (par2grid) and grid-to-parcel (grid2par) steps on EPIC's
 * field layout, with the exchanges done by haloswap (every transport) and by a reference
 * written the way EPIC's field_mpi.f90 does them (method "epic-ref"), all in one launch with
 * the methods interleaved step by step. docs/mini-apps.md, "epic-fields", has the details.
 *
 * One step, per method:
 *  1. par2grid: every parcel deposits volume-weighted vorticity (3), total buoyancy, dry
 *     buoyancy, humidity and volume to the 8 nodes around each of its 4 support points, and
 *     counts itself (and whether it is small) in its cell: 7 float64 + 2 int32 fields, halos
 *     included, every float contribution rounded to a power-of-two quantum fixed by global
 *     maxima so that the sums are exact in any order (--deposit plain: not); then ONE batched
 *     exchange of the 9: reverse (halo sums into the owner), then
 *     forward fill (hs_accumulate_fill); then EPIC's free-slip z folding and the division by
 *     the volume;
 *  2. grid2par inputs (velocity 3, velocity gradient 8, vorticity tendency 3) from analytic
 *     functions of global coordinates on the interior, halos poisoned with NaN, filled by a
 *     forward swap; the 2-D surface fluxes (2 fields) by a second plan;
 *  3. grid2par: trilinear interpolation at the support points; surface fluxes bilinearly on
 *     the parcels of the lowest layer.
 * Checks: every method gives the same bits (checksums every step); the last step is compared
 * with a serial reference computed on rank 0 over the whole periodic grid, no exchange: with
 * the reproducible deposit every grid value is the reference's to the bit. */
#include "app_common.h"
#include "ef.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROG "epic-fields"
#define KEY_CELL 1024 /* parcels per cell at most (key = cell * KEY_CELL + k) */

enum { DEP_REPRO, DEP_APRIORI, DEP_PLAIN }; /* --deposit */
static const char *const dep_name[3] = {"reproducible", "reproducible-apriori", "plain"};

typedef struct {
  int global[3], nppc, steps, warmup, check, mv_given, deposit;
  double min_vratio, tol;
  uint64_t seed;
  const char *read;
  app_common_opts c;
  pc_box box; /* the grid's box: --read's file's, or cells of 0.1 centred on x = y = 0 */
  pc_set all; /* --read's parcels */
} options;

static void usage(void) {
  printf(
      "Usage: epic-fields [options]\n"
      "EPIC's par2grid (deposit, then one reverse + forward exchange of 7 float64 + 2 int32\n"
      "fields) and grid2par (forward swaps, interpolation) on EPIC's layout: fields (z,y,x),\n"
      "halo 1 below and 2 above in x and y, z nodes 0..nz with one halo level each side.\n"
      "  --transport SPEC   haloswap transport, e.g. p2p or \"rma-fence:drive=get\", or\n"
      "                     epic-ref (EPIC's field_mpi.f90 way: Irecv/Send, buffers allocated\n"
      "                     per call, one message per neighbour per call) or epic-ref:perfield\n"
      "                     (one message per field component per neighbour); repeat to run\n"
      "                     several, interleaved step by step; \"all\" = every usable transport\n"
      "                     plus epic-ref (default p2p); epic-ref:noreverse skips the sum (a\n"
      "                     wrong par2grid, to show that the checks reject it)\n"
      "  --global NX,NY,NZ  grid cells (default 48,48,32); z nodes are 0..NZ\n"
      "  --nppc N           parcels per cell of the artificial set-up (default 4, at most %d)\n"
      "  --seed S           set-up seed (default 42)\n"
      "  --min-vratio R     small parcels: volume <= cell volume / R (default 40, or the\n"
      "                     value a parcel file records)\n"
      "  --read FILE        EPIC parcel file (NetCDF) instead of the artificial set-up\n"
      "  --steps N          timed steps (default 10)\n"
      "  --warmup N         untimed steps first (default 2)\n"
      "  --px N, --py N     ranks along x and y (default 0: chosen by MPI_Dims_create)\n"
      "  --alloc KIND       malloc (default) or shared (hs_alloc) field memory\n"
      "  --check 0|1        compare the last step with the serial reference (default 1)\n"
      "  --tol T            tolerance of that comparison, relative to each value (default\n"
      "                     1e-14)\n"
      "  --deposit KIND     reproducible (default: contributions rounded to a common power-of-\n"
      "                     two quantum, sums exact in any order; the quantum from a volume\n"
      "                     estimate, checked after the exchange), reproducible-apriori (the\n"
      "                     quantum from an a priori bound: coarser) or plain (EPIC's plain\n"
      "                     sums, which differ from the serial ones where contributions cancel)\n"
      "  --json FILE        write checksums, checks and timings as JSON\n"
      "  --verbose          describe the plans\n"
      "  --help             this text\n",
      KEY_CELL - 1);
}

static int parse_double(app_ctx *a, const char *opt, const char *v, double lo, double *out) {
  if (!v) return app_fail(a, "option %s needs a value", opt);
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (*v == 0 || *end != 0 || errno || !isfinite(x))
    return app_fail(a, "option %s: '%s' is not a number", opt, v);
  if (!(x > lo)) return app_fail(a, "option %s = %g is out of range: must be > %g", opt, x, lo);
  *out = x;
  return 0;
}

static int own_option(app_ctx *a, void *opts, const char *k, const char *v) {
  options *o = opts;
  if (!strcmp(k, "--global")) {
    if (app_triple(a, k, v, 1, 1 << 16, o->global)) return 1;
  } else if (!strcmp(k, "--seed")) {
    int s;
    if (app_int(a, k, v, 0, 2147483647, &s)) return 1;
    o->seed = (uint64_t)s;
  } else if (!strcmp(k, "--min-vratio")) {
    if (parse_double(a, k, v, 0.0, &o->min_vratio)) return 1;
    o->mv_given = 1;
  } else if (!strcmp(k, "--tol")) {
    if (parse_double(a, k, v, 0.0, &o->tol)) return 1;
  } else if (!strcmp(k, "--read")) {
    if (!v) return app_fail(a, "option --read needs a value");
    o->read = v;
  } else if (!strcmp(k, "--deposit")) {
    if (!v) return app_fail(a, "option --deposit needs a value");
    for (o->deposit = 0; o->deposit < 3 && strcmp(v, dep_name[o->deposit]); o->deposit++) {
    }
    if (o->deposit == 3)
      return app_fail(a, "option --deposit = '%s': must be reproducible, "
                         "reproducible-apriori or plain", v);
  } else {
    return -1;
  }
  return 0;
}

static int parse(app_ctx *a, int argc, char **argv, options *o) {
  *o = (options){.global = {48, 48, 32}, .nppc = 4, .seed = 42, .min_vratio = 40.0, .steps = 10,
                 .warmup = 2, .check = 1, .tol = 1e-14};
  app_common_init(&o->c);
  const app_int_opt ints[] = {{"--nppc", 1, KEY_CELL - 1, &o->nppc},
                              {"--steps", 1, 1000000, &o->steps},
                              {"--warmup", 0, 1000000, &o->warmup},
                              {"--check", 0, 1, &o->check}};
  return app_parse(a, &o->c, argc, argv, ints, 4, own_option, o);
}

/* The box (--read's file's, or cells of 0.1), then the grid over the process grid: every rank
 * needs 2 columns per axis (EPIC's upper halo is 2 deep). */
static int check_grid(app_ctx *a, void *opts, const int procs[2]) {
  options *o = opts;
  if (o->read) {
    char err[1024];
    pc_file_info info;
    if (pc_read_netcdf(a->comm, o->read, &o->box, &o->all, &info, err, sizeof err))
      return app_fail(a, "%s", err);
    for (int d = 0; d < 3; d++) o->global[d] = o->box.n[d];
    if (!o->mv_given && isfinite(info.min_vratio)) o->min_vratio = info.min_vratio;
  } else {
    double org[3], ext[3];
    for (int d = 0; d < 3; d++) {
      ext[d] = 0.1 * o->global[d];
      org[d] = d < 2 ? -0.5 * ext[d] : 0.0;
    }
    pc_box_init(&o->box, o->global, org, ext);
  }
  if (o->global[2] < 2)
    return app_fail(a, "grid: %d cells in z, EPIC's z halo folding needs at least 2", o->global[2]);
  return app_check_columns(a, procs, o->global, EF_HHI, "EPIC's upper halo of");
}

/* ---------------------------------------------------------------- parcels */
static int parcels_alloc(ef_parcels *ps, int n) {
  ps->n = n;
  ps->key = malloc((size_t)(n ? n : 1) * sizeof *ps->key);
  ps->pts = malloc((size_t)(n ? n : 1) * 12 * sizeof(double));
  ps->out = calloc((size_t)(n ? n : 1) * EF_NOUT, sizeof(double));
  return ps->key && ps->pts && ps->out ? 0 : -1;
}

static void parcels_free(ef_parcels *ps) {
  free(ps->p);
  free(ps->key);
  free(ps->pts);
  free(ps->out);
  memset(ps, 0, sizeof *ps);
}

static uint64_t cell_of(const pc_box *b, const pc_parcel *p) {
  uint64_t c[3];
  for (int a = 0; a < 3; a++) c[a] = (uint64_t)pc_cell_of(b, a, p->a[PX + a]);
  return (c[2] * (uint64_t)b->n[1] + c[1]) * (uint64_t)b->n[0] + c[0];
}

/* The artificial set-up of the cells [c0,c1) x [d0,d1) x all z, keyed by cell and rank in
 * the cell: the same key for a parcel whatever the decomposition. */
static int generate(const pc_box *b, const pc_setup *su, int c0, int c1, int d0, int d1,
                    ef_parcels *ps) {
  pc_set s = {0, 0, NULL};
  if (pc_generate(b, su, c0, c1, d0, d1, &s)) return -1;
  ps->p = s.p;
  if (parcels_alloc(ps, s.n)) return -1;
  uint64_t prev = UINT64_MAX, k = 0;
  for (int m = 0; m < s.n; m++) {
    uint64_t c = cell_of(b, &s.p[m]);
    k = c == prev ? k + 1 : 0;
    prev = c;
    ps->key[m] = c * KEY_CELL + k;
  }
  return 0;
}

static void support_points(ef_parcels *ps) {
  for (int m = 0; m < ps->n; m++) ef_support_points(&ps->p[m], ps->pts + 12 * m);
}

/* A file's parcels: rank 0 read them; every rank keeps those in its cells (key = index). */
static int distribute(app_ctx *a, const pc_box *b, pc_set *all, int ox, int nx, int oy, int ny,
                      ef_parcels *ps) {
  int n = all->n;
  MPI_Bcast(&n, 1, MPI_INT, 0, a->comm);
  if (a->rank != 0) {
    all->p = malloc((size_t)(n ? n : 1) * sizeof(pc_parcel));
    all->n = all->cap = n;
    if (!all->p) return app_fail(a, "out of memory for %d parcels", n);
  }
  for (long off = 0; off < (long)n; off += 1 << 20) {
    int cnt = n - off < (1 << 20) ? (int)(n - off) : 1 << 20;
    MPI_Bcast(all->p + off, cnt * PC_NATTR, MPI_DOUBLE, 0, a->comm);
  }
  int mine = 0;
  for (int m = 0; m < n; m++) {
    pc_parcel *p = &all->p[m];
    p->a[PX] = pc_wrap(b, 0, p->a[PX]); /* x = upper edge belongs to cell 0 */
    p->a[PY] = pc_wrap(b, 1, p->a[PY]);
    int cx = pc_cell_of(b, 0, p->a[PX]), cy = pc_cell_of(b, 1, p->a[PY]);
    if (cx >= ox && cx < ox + nx && cy >= oy && cy < oy + ny) mine++;
  }
  ps->p = malloc((size_t)(mine ? mine : 1) * sizeof(pc_parcel));
  if (!ps->p || parcels_alloc(ps, mine)) return app_fail(a, "out of memory for %d parcels", mine);
  int k = 0;
  for (int m = 0; m < n; m++) {
    const pc_parcel *p = &all->p[m];
    int cx = pc_cell_of(b, 0, p->a[PX]), cy = pc_cell_of(b, 1, p->a[PY]);
    if (cx >= ox && cx < ox + nx && cy >= oy && cy < oy + ny) {
      ps->p[k] = *p;
      ps->key[k++] = (uint64_t)m;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- methods */
enum { PH_P2G, PH_G2P, PH_SURF, PH_STEP, NPH };
static const char *const phase_name[3] = {"par2grid", "grid2par", "surface"};

enum { M_HS, M_REF, M_REF_PERFIELD, M_REF_NOREVERSE };

#define NSUM 14
static const char *const sum_name[NSUM] = {"volg",  "vortx", "vorty",  "vortz", "tbuoyg",
                                           "dbuoyg", "humg", "nparg",  "nsparg", "halos",
                                           "dpos",  "strain", "dvor",  "surface"};

typedef struct {
  char spec[128];
  int kind, ok;
  char reason[APP_MSG];
  hs_plan p2g, g2p, surf;
  double *t;      /* [timed step][NPH] on this rank */
  uint64_t *sums; /* [step][NSUM], global (rank 0) */
  /* serial check of the last step: max |err| / bound, max |err| / |value| on the grid,
   * max relative error on the parcels; counts of mismatching integers / parcels; whether the
   * last step's quanta were the reference's */
  double grid_bound, grid_rel, parcel_rel;
  long int_bad, grid_same, grid_total, parcel_same, parcel_total;
  int q_same;
} method;

static hs_field epic_field(hs_type t, void *data, int zext, int ncomp) {
  hs_field f = hs_field_array(t, data, HS_LAYOUT_ZFAST, 0);
  for (int a = 0; a < 2; a++) {
    hs_field_set_halo(&f, a, EF_HLO, EF_HHI);
    hs_field_set_depth(&f, a, EF_HLO, EF_HHI);
  }
  /* z: the whole column -1..nz+1 (or one level for a surface field) is the field's own
   * interior, so the x-y exchange carries the z halo levels as EPIC's buffers do. */
  hs_field_set_extent(&f, 2, zext);
  if (ncomp > 1) hs_field_set_components(&f, ncomp, HS_COMP_SLOWEST, 0);
  return f;
}

/* The three plans of a transport; HS_ERR_UNAVAILABLE leaves the method unavailable with the
 * library's reason (every rank gets the same status); other errors are fatal. */
static int create_plans(app_ctx *a, hs_decomp d, ef_grid *g, method *m) {
  hs_field p2g[7] = {epic_field(HS_FLOAT64, g->volg, g->Z, 1),
                     epic_field(HS_FLOAT64, g->vortg, g->Z, 3),
                     epic_field(HS_FLOAT64, g->tbuoyg, g->Z, 1),
                     epic_field(HS_FLOAT64, g->dbuoyg, g->Z, 1),
                     epic_field(HS_FLOAT64, g->humg, g->Z, 1),
                     epic_field(HS_INT32, g->nparg, g->Z, 1),
                     epic_field(HS_INT32, g->nsparg, g->Z, 1)};
  hs_field g2p[3] = {epic_field(HS_FLOAT64, g->velog, g->Z, 3),
                     epic_field(HS_FLOAT64, g->velgradg, g->Z, 8),
                     epic_field(HS_FLOAT64, g->vtend, g->Z, 3)};
  hs_field surf[2] = {epic_field(HS_FLOAT64, g->binc, 1, 1), epic_field(HS_FLOAT64, g->hinc, 1, 1)};
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.depth[0] = pd.depth[1] = EF_HHI;
  pd.depth[2] = 0;
  pd.stencil = HS_STENCIL_BOX;
  pd.transport_name = m->spec;
  const hs_field *fs[3] = {p2g, g2p, surf};
  const int nf[3] = {7, 3, 2};
  hs_plan *pl[3] = {&m->p2g, &m->g2p, &m->surf};
  const char *what[3] = {"par2grid", "grid2par", "surface"};
  for (int i = 0; i < 3; i++) {
    pd.fields = fs[i];
    pd.nfields = nf[i];
    int rc = hs_plan_create(d, &pd, pl[i]);
    if (rc == HS_ERR_UNAVAILABLE) {
      snprintf(m->reason, sizeof m->reason, "%s plan: %s", what[i], hs_error_message());
      for (int k = 0; k < i; k++) hs_plan_free(pl[k]);
      m->ok = 0;
      return 0;
    }
    if (rc != HS_OK) {
      app_fail(a, "transport '%s', %s plan: %s", m->spec, what[i], hs_error_message());
      for (int k = 0; k < i; k++) hs_plan_free(pl[k]);
      return app_agree(a);
    }
  }
  m->ok = 1;
  return app_agree(a);
}

typedef struct {
  ef_grid *g;
  const ef_box *e;
  ef_parcels *ps;
  ef_ref ref;
  ef_arr p2g[9], g2p[14], surf[2];
  int deposit;                     /* --deposit */
  double bd[EF_NBOUND];            /* the last step's global bounds, quanta and */
  double q[EF_NFLOAT], kmax;       /* contributions-per-node bound (a priori) */
  long deposits, redone;           /* reproducible deposits, those redone a priori */
} world;

static void world_arrays(world *w) {
  ef_grid *g = w->g;
  for (int f = 0; f < EF_NFLOAT; f++) w->p2g[f] = (ef_arr){ef_float_field(g, f), 0, 0};
  w->p2g[7] = (ef_arr){g->nparg, 1, 0};
  w->p2g[8] = (ef_arr){g->nsparg, 1, 0};
  for (int c = 0; c < 3; c++) w->g2p[c] = (ef_arr){g->velog + c * g->n, 0, 0};
  for (int c = 0; c < 8; c++) w->g2p[3 + c] = (ef_arr){g->velgradg + c * g->n, 0, 0};
  for (int c = 0; c < 3; c++) w->g2p[11 + c] = (ef_arr){g->vtend + c * g->n, 0, 0};
  w->surf[0] = (ef_arr){g->binc, 0, 1};
  w->surf[1] = (ef_arr){g->hinc, 0, 1};
}

/* EPIC's calls: par2grid one batched call each way; grid2par one call per vector field
 * (field_halo_fill_vector of velog, velgradg, vtend); the two surface fluxes in one call.
 * perfield: every array (component) in a call of its own. */
static int ref_exchange(const world *w, int kind, int phase) {
  int perfield = kind == M_REF_PERFIELD;
  const ef_arr *arr = phase == PH_P2G ? w->p2g : phase == PH_G2P ? w->g2p : w->surf;
  int n = phase == PH_P2G ? 9 : phase == PH_G2P ? 14 : 2;
  int bad = 0;
  if (perfield) {
    for (int rev = phase == PH_P2G ? 1 : 0; rev >= 0; rev--)
      for (int i = 0; i < n && !bad; i++) bad = ef_ref_exchange(&w->ref, arr + i, 1, rev);
    return bad;
  }
  if (phase == PH_P2G) {
    /* noreverse: the fill without the sum, a wrong par2grid the checks must reject */
    bad = kind == M_REF_NOREVERSE ? 0 : ef_ref_exchange(&w->ref, arr, n, 1);
    return bad ? bad : ef_ref_exchange(&w->ref, arr, n, 0);
  }
  if (phase == PH_G2P) {
    const int grp[3][2] = {{0, 3}, {3, 8}, {11, 3}};
    for (int i = 0; i < 3 && !bad; i++) bad = ef_ref_exchange(&w->ref, arr + grp[i][0], grp[i][1], 0);
    return bad;
  }
  return ef_ref_exchange(&w->ref, arr, n, 0);
}

static void fatal(app_ctx *a, const char *spec, const char *what, const char *msg) {
  fprintf(stderr, "%s: rank %d: method '%s': %s: %s\n", PROG, a->rank, spec, what, msg);
  fflush(stderr);
  MPI_Abort(a->comm, 1);
}

static int exchange(app_ctx *a, world *w, method *m, int phase) {
  int rc;
  if (m->kind != M_HS) {
    rc = ref_exchange(w, m->kind, phase);
    if (rc) fatal(a, m->spec, phase_name[phase], rc == 1 ? "out of memory" : "MPI error");
    return 0;
  }
  if (phase == PH_P2G)
    rc = hs_accumulate_fill(m->p2g, HS_OP_SUM, NULL);
  else
    rc = hs_swap(phase == PH_G2P ? m->g2p : m->surf, NULL);
  if (rc != HS_OK) fatal(a, m->spec, phase_name[phase], hs_error_message());
  return 0;
}

/* One exchange, timed from a barrier so that a neighbour still computing is not counted. */
static double timed_exchange(app_ctx *a, world *w, method *m, int phase) {
  MPI_Barrier(a->comm);
  double t0 = MPI_Wtime();
  exchange(a, w, m, phase);
  return MPI_Wtime() - t0;
}

/* The reproducible deposit's quanta from this rank's bounds reduced by MAX (exact, so the
 * same at any rank count). Collective; -1 on every rank if any fails (why: this rank's). */
static int step_quanta(app_ctx *a, world *w, int apriori, char *why, size_t len) {
  double bd[EF_NBOUND + 1];
  why[0] = 0;
  bd[EF_NBOUND] = ef_deposit_bounds(w->g, w->e, w->ps, apriori, bd, why, len) ? 1.0 : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, bd, EF_NBOUND + 1, MPI_DOUBLE, MPI_MAX, a->comm);
  memcpy(w->bd, bd, sizeof w->bd);
  if (bd[EF_NBOUND] == 0.0 && ef_quanta(bd, apriori, w->q, &w->kmax) == 0) return 0;
  if (!why[0])
    snprintf(why, len, "%s", bd[EF_NBOUND] != 0.0 ? "a parcel is not on the rank of its cell"
             : "a field's contributions are too large for a power-of-two quantum");
  return -1;
}

/* One step of one method; tm[NPH]: seconds in each exchange and the whole step. */
static void run_step(app_ctx *a, world *w, method *m, double t, double tm[NPH]) {
  char why[512];
  MPI_Barrier(a->comm);
  double t0 = MPI_Wtime();
  const int plain = w->deposit == DEP_PLAIN;
  if (!plain && step_quanta(a, w, w->deposit == DEP_APRIORI, why, sizeof why))
    fatal(a, m->spec, "par2grid", why);
  if (ef_par2grid_deposit(w->g, w->e, w->ps, 0, plain ? NULL : w->q, why, sizeof why))
    fatal(a, m->spec, "par2grid", why);
  tm[PH_P2G] = timed_exchange(a, w, m, PH_P2G);
  w->deposits += !plain;
  if (w->deposit == DEP_REPRO) {
    /* the estimated quanta: confirm them from the largest volg, or redo a priori */
    double mv = ef_max_volg(w->g);
    MPI_Allreduce(MPI_IN_PLACE, &mv, 1, MPI_DOUBLE, MPI_MAX, a->comm);
    if (!ef_quanta_hold(w->bd, w->q, mv)) {
      if (step_quanta(a, w, 1, why, sizeof why) ||
          ef_par2grid_deposit(w->g, w->e, w->ps, 0, w->q, why, sizeof why))
        fatal(a, m->spec, "par2grid", why);
      tm[PH_P2G] += timed_exchange(a, w, m, PH_P2G);
      w->redone++;
    }
  }
  ef_par2grid_finish(w->g, 0);
  ef_fill_analytic(w->g, w->e, t);
  tm[PH_G2P] = timed_exchange(a, w, m, PH_G2P);
  tm[PH_SURF] = timed_exchange(a, w, m, PH_SURF);
  if (ef_grid2par(w->g, w->e, w->ps, why, sizeof why)) fatal(a, m->spec, "grid2par", why);
  tm[PH_STEP] = MPI_Wtime() - t0;
}

static void checksums(app_ctx *a, const world *w, uint64_t out[NSUM]) {
  const ef_grid *g = w->g;
  uint64_t s[NSUM];
  memset(s, 0, sizeof s);
  for (int i = -g->hlo; i < g->nx + g->hhi; i++)
    for (int j = -g->hlo; j < g->ny + g->hhi; j++) {
      int own = i >= 0 && i < g->nx && j >= 0 && j < g->ny;
      size_t c = ef_at(g, i, j, -1);
      uint64_t *acc;
      for (int f = 0; f < EF_NFLOAT; f++) {
        acc = own ? &s[f] : &s[9];
        *acc = app_checksum_add(*acc, ef_float_field(g, f) + c, (size_t)g->Z);
      }
      for (int f = 0; f < 2; f++) {
        const int32_t *x = (f ? g->nsparg : g->nparg) + c;
        acc = own ? &s[7 + f] : &s[9];
        for (int k = 0; k < g->Z; k++) *acc += (uint64_t)(uint32_t)x[k];
      }
    }
  const int grp[4][2] = {{EF_DPOS, 3}, {EF_STRAIN, 8}, {EF_DVOR, 3}, {EF_DBUOY, 2}};
  for (int m = 0; m < w->ps->n; m++)
    for (int q = 0; q < 4; q++)
      s[10 + q] = app_checksum_add(s[10 + q], w->ps->out + (size_t)EF_NOUT * m + grp[q][0],
                                   (size_t)grp[q][1]);
  MPI_Reduce(s, out, NSUM, MPI_UINT64_T, MPI_SUM, 0, a->comm);
}

/* ---------------------------------------------------------------- serial reference */
/* Grid differences: max |x - y| / b (b: the summed |contributions|), max |x - y| / |y| (y = 0
 * needs x = 0), and how many values are the same bits. NaN propagates (and fails). */
typedef struct {
  double bound, rel;
  long same, total;
} gdiff;

static void gdiff_add(gdiff *d, double x, double y, double b) {
  d->total++;
  if (memcmp(&x, &y, sizeof x) == 0) {
    d->same++;
    return;
  }
  double err = fabs(x - y);
  double eb = err == 0 ? 0 : b > 0 ? err / b : INFINITY;
  double er = err == 0 ? 0 : y != 0 ? err / fabs(y) : INFINITY;
  if (!(eb <= d->bound)) d->bound = eb;
  if (!(er <= d->rel)) d->rel = er;
}

typedef struct {
  ef_grid g, bound;  /* the whole grid; bound: the same sums of |contributions| */
  ef_parcels ps;     /* every parcel, sorted by key (rank 0) */
  double bd[EF_NBOUND], q[EF_NFLOAT], kmax; /* as in world */
  int redone;        /* the estimated quanta did not hold */
  gdiff cost[2];     /* rank 0: the rounded deposit against the plain serial sums, levels
                      * 0..nz and the z halo levels -1, nz+1 */
} serial;

static int key_cmp(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

/* The reproducible deposit's cost: the serial rounded grid against the plain serial sums
 * (rank 0; an extra whole grid while it runs). */
static int rounding_cost(serial *S, const ef_box *e, char *why, size_t len) {
  ef_grid P = S->g;
  if (ef_grid_alloc(&P, NULL, 0)) {
    ef_grid_free(&P, NULL);
    snprintf(why, len, "out of memory for the plain serial grid");
    return -1;
  }
  int bad = ef_par2grid_deposit(&P, e, &S->ps, 0, NULL, why, len);
  if (!bad) {
    ef_par2grid_finish(&P, 0);
    for (int f = 0; f < EF_NFLOAT; f++) {
      const double *x = ef_float_field(&S->g, f), *y = ef_float_field(&P, f);
      const double *b = ef_float_field(&S->bound, f);
      for (size_t i = 0; i < P.n; i++) {
        int k = (int)(i % (size_t)P.Z) - 1;
        gdiff_add(&S->cost[k < 0 || k > P.nz], x[i], y[i], b[i]);
      }
    }
  }
  ef_grid_free(&P, NULL);
  return bad;
}

static int serial_quanta(serial *S, const ef_box *e, int apriori, char *why, size_t len) {
  if (ef_deposit_bounds(&S->g, e, &S->ps, apriori, S->bd, why, len)) return -1;
  if (ef_quanta(S->bd, apriori, S->q, &S->kmax) == 0) return 0;
  snprintf(why, len, "a field's contributions are too large for a power-of-two quantum");
  return -1;
}

/* Rank 0 computes the reference for time t; the grid results and the quanta go to every
 * rank. */
static int serial_run(app_ctx *a, serial *S, const ef_box *e, double t, int deposit) {
  char why[512] = "";
  int bad = 0;
  const int plain = deposit == DEP_PLAIN;
  if (a->rank == 0) {
    if (!plain && serial_quanta(S, e, deposit == DEP_APRIORI, why, sizeof why)) {
      bad = 1;
    } else {
      bad = ef_par2grid_deposit(&S->g, e, &S->ps, 0, plain ? NULL : S->q, why, sizeof why);
      if (!bad && deposit == DEP_REPRO && !ef_quanta_hold(S->bd, S->q, ef_max_volg(&S->g))) {
        S->redone = 1;
        bad = serial_quanta(S, e, 1, why, sizeof why) ||
              ef_par2grid_deposit(&S->g, e, &S->ps, 0, S->q, why, sizeof why);
      }
      if (!bad) bad = ef_par2grid_deposit(&S->bound, e, &S->ps, 1, NULL, why, sizeof why);
    }
    if (!bad) {
      ef_par2grid_finish(&S->g, 0);
      ef_par2grid_finish(&S->bound, 1);
      if (!plain && rounding_cost(S, e, why, sizeof why)) bad = 1;
      ef_fill_analytic(&S->g, e, t);
      if (!bad && ef_grid2par(&S->g, e, &S->ps, why, sizeof why)) bad = 1;
    }
    if (bad) app_fail(a, "serial reference: %s", why);
  }
  if (app_agree(a)) return 1;
  MPI_Bcast(S->q, EF_NFLOAT, MPI_DOUBLE, 0, a->comm);
  const size_t n = S->g.n;
  ef_grid *gs[2] = {&S->g, &S->bound};
  for (int q = 0; q < 2; q++)
    for (int f = 0; f < EF_NFLOAT; f++) MPI_Bcast(ef_float_field(gs[q], f), (int)n, MPI_DOUBLE, 0, a->comm);
  MPI_Bcast(S->g.nparg, (int)n, MPI_INT32_T, 0, a->comm);
  MPI_Bcast(S->g.nsparg, (int)n, MPI_INT32_T, 0, a->comm);
  return 0;
}

static void compare_serial(app_ctx *a, const world *w, const serial *S, method *m) {
  const ef_grid *g = w->g, *r = &S->g, *rb = &S->bound;
  gdiff d = {0.0, 0.0, 0, 0};
  long ibad = 0;
  for (int i = -g->hlo; i < g->nx + g->hhi; i++)
    for (int j = -g->hlo; j < g->ny + g->hhi; j++) {
      int gi = ((g->ox + i) % g->gnx + g->gnx) % g->gnx, gj = ((g->oy + j) % g->gny + g->gny) % g->gny;
      size_t c = ef_at(g, i, j, -1), cr = ef_at(r, gi, gj, -1);
      for (int k = 0; k < g->Z; k++) {
        for (int f = 0; f < EF_NFLOAT; f++)
          gdiff_add(&d, ef_float_field(g, f)[c + k], ef_float_field(r, f)[cr + k],
                    ef_float_field(rb, f)[cr + k]);
        ibad += g->nparg[c + k] != r->nparg[cr + k];
        ibad += g->nsparg[c + k] != r->nsparg[cr + k];
      }
    }
  double vin[2] = {d.bound, d.rel}, vout[2];
  long lin[3] = {d.same, d.total, ibad}, lout[3];
  MPI_Allreduce(vin, vout, 2, MPI_DOUBLE, MPI_MAX, a->comm);
  MPI_Allreduce(lin, lout, 3, MPI_LONG, MPI_SUM, a->comm);
  m->grid_bound = vout[0];
  m->grid_rel = vout[1];
  m->grid_same = lout[0];
  m->grid_total = lout[1];
  m->int_bad = lout[2];
  m->q_same = w->deposit == DEP_PLAIN || memcmp(w->q, S->q, sizeof w->q) == 0;

  /* parcels: gather (key, outputs) to rank 0 */
  int n = w->ps->n, *cnt = NULL, *disp = NULL, *cnt2 = NULL, *disp2 = NULL, N = 0;
  uint64_t *keys = NULL;
  double *outs = NULL;
  if (a->rank == 0) {
    cnt = malloc((size_t)a->size * sizeof *cnt);
    disp = malloc((size_t)a->size * sizeof *disp);
    cnt2 = malloc((size_t)a->size * sizeof *cnt2);
    disp2 = malloc((size_t)a->size * sizeof *disp2);
    if (!cnt || !disp || !cnt2 || !disp2) abort();
  }
  MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, a->comm);
  if (a->rank == 0) {
    for (int q = 0; q < a->size; q++) {
      disp[q] = N;
      cnt2[q] = cnt[q] * EF_NOUT;
      disp2[q] = N * EF_NOUT;
      N += cnt[q];
    }
    keys = malloc((size_t)(N ? N : 1) * sizeof *keys);
    outs = malloc((size_t)(N ? N : 1) * EF_NOUT * sizeof *outs);
    if (!keys || !outs) abort();
  }
  MPI_Gatherv(w->ps->key, n, MPI_UINT64_T, keys, cnt, disp, MPI_UINT64_T, 0, a->comm);
  MPI_Gatherv(w->ps->out, n * EF_NOUT, MPI_DOUBLE, outs, cnt2, disp2, MPI_DOUBLE, 0, a->comm);
  double pr = 0.0;
  long psame = 0, ptotal = 0;
  if (a->rank == 0) {
    /* sort (key, index) pairs by key */
    uint64_t *kv = malloc((size_t)(N ? N : 1) * 2 * sizeof *kv);
    if (!kv) abort();
    for (int q = 0; q < N; q++) {
      kv[2 * q] = keys[q];
      kv[2 * q + 1] = (uint64_t)q;
    }
    qsort(kv, (size_t)N, 2 * sizeof *kv, key_cmp);
    if (N != S->ps.n) pr = INFINITY;
    for (int q = 0; q < N && q < S->ps.n; q++) {
      const double *x = outs + (size_t)EF_NOUT * kv[2 * q + 1], *y = S->ps.out + (size_t)EF_NOUT * q;
      if (kv[2 * q] != S->ps.key[q]) {
        pr = INFINITY;
        break;
      }
      ptotal++;
      if (memcmp(x, y, EF_NOUT * sizeof *x) == 0) {
        psame++;
        continue;
      }
      for (int v = 0; v < EF_NOUT; v++) {
        double err = fabs(x[v] - y[v]), er = err == 0 ? 0 : y[v] != 0 ? err / fabs(y[v]) : INFINITY;
        if (!(er <= pr)) pr = er;
      }
    }
    free(kv);
  }
  free(cnt);
  free(disp);
  free(cnt2);
  free(disp2);
  free(keys);
  free(outs);
  m->parcel_rel = pr;
  m->parcel_same = psame;
  m->parcel_total = ptotal;
}

/* ---------------------------------------------------------------- reporting */
static int dcmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

typedef struct {
  double mean_max[NPH];  /* max over ranks of the per-rank mean per step */
  double exch_max;       /* the same for the sum of the three exchanges */
  double med, lo, hi;    /* per-step max over ranks of the exchange: median, min, max */
} summary;

static void summarise(app_ctx *a, const method *m, int steps, summary *s) {
  double mean[NPH + 1] = {0}, mx[NPH + 1];
  double *per = malloc((size_t)steps * sizeof *per), *permax = malloc((size_t)steps * sizeof *per);
  if (!per || !permax) abort();
  for (int st = 0; st < steps; st++) {
    const double *t = m->t + (size_t)st * NPH;
    for (int p = 0; p < NPH; p++) mean[p] += t[p] / steps;
    per[st] = t[PH_P2G] + t[PH_G2P] + t[PH_SURF];
    mean[NPH] += per[st] / steps;
  }
  MPI_Allreduce(mean, mx, NPH + 1, MPI_DOUBLE, MPI_MAX, a->comm);
  MPI_Allreduce(per, permax, steps, MPI_DOUBLE, MPI_MAX, a->comm);
  qsort(permax, (size_t)steps, sizeof *permax, dcmp);
  for (int p = 0; p < NPH; p++) s->mean_max[p] = mx[p];
  s->exch_max = mx[NPH];
  s->lo = permax[0];
  s->hi = permax[steps - 1];
  s->med = steps % 2 ? permax[steps / 2] : 0.5 * (permax[steps / 2 - 1] + permax[steps / 2]);
  free(per);
  free(permax);
}

/* Every grid value and parcel output within tol of the reference, relative to itself. */
static int serial_pass(const method *m, double tol) {
  return m->int_bad == 0 && m->grid_rel <= tol && m->parcel_rel <= tol && m->q_same &&
         m->parcel_total > 0;
}

int main(int argc, char **argv) {
  app_ctx a;
  app_start(&a, PROG, &argc, &argv);
  options o;
  parse(&a, argc, argv, &o);
  /* methods: "all" = every usable transport and epic-ref */
  int want_ref = 0;
  for (int i = 0; i < o.c.tr.n; i++)
    if (!strcmp(o.c.tr.spec[i], "all")) want_ref = 1;
  for (int i = 0; i < o.c.tr.n; i++)
    if (!strcmp(o.c.tr.spec[i], "epic-ref")) want_ref = 0;
  int go = app_begin(&a, &o.c, usage, check_grid, &o);
  if (go) return app_exit(go > 0);
  pc_box box = o.box;
  pc_set all = o.all;
  if (want_ref) app_transport_add(&a, &o.c.tr, "epic-ref");
  if (app_agree(&a)) goto fail;

  int gz[3] = {o.global[0], o.global[1], o.global[2] + 1}; /* z: nodes 0..nz */
  hs_decomp d = app_decomp(&a, gz, a.procs, 1);
  if (app_agree(&a)) goto fail;
  ef_box e;
  ef_box_init(&e, &box, o.min_vratio);
  ef_grid g;
  memset(&g, 0, sizeof g);
  g.nx = hs_decomp_local_extent(d, 0);
  g.ny = hs_decomp_local_extent(d, 1);
  g.nz = o.global[2];
  g.hlo = EF_HLO;
  g.hhi = EF_HHI;
  g.ox = hs_decomp_global_offset(d, 0);
  g.oy = hs_decomp_global_offset(d, 1);
  g.gnx = o.global[0];
  g.gny = o.global[1];
  if (ef_grid_alloc(&g, d, o.c.shared)) app_fail(&a, "out of memory for the fields");
  if (app_agree(&a)) goto fail;

  /* parcels: this rank's, and on rank 0 every one for the serial reference */
  pc_setup su;
  memset(&su, 0, sizeof su);
  su.nppc = o.nppc;
  su.min_vratio = o.min_vratio;
  su.small_fraction = 0.5;
  su.seed = o.seed;
  ef_parcels ps;
  memset(&ps, 0, sizeof ps);
  serial S;
  memset(&S, 0, sizeof S);
  if (o.read) {
    distribute(&a, &box, &all, g.ox, g.nx, g.oy, g.ny, &ps);
  } else if (generate(&box, &su, g.ox, g.ox + g.nx, g.oy, g.oy + g.ny, &ps)) {
    app_fail(&a, "out of memory for the parcels");
  }
  if (app_agree(&a)) goto fail;
  support_points(&ps);
  long nglobal = ps.n;
  MPI_Allreduce(MPI_IN_PLACE, &nglobal, 1, MPI_LONG, MPI_SUM, a.comm);
  if (o.check) {
    S.g.nx = S.bound.nx = o.global[0];
    S.g.ny = S.bound.ny = o.global[1];
    S.g.nz = S.bound.nz = o.global[2];
    S.g.gnx = S.bound.gnx = o.global[0];
    S.g.gny = S.bound.gny = o.global[1];
    S.g.wrap = S.bound.wrap = 1;
    if (ef_grid_alloc(&S.g, NULL, 0) || ef_grid_alloc(&S.bound, NULL, 0))
      app_fail(&a, "out of memory for the serial reference grid");
    if (a.rank == 0 && !a.err[0]) {
      if (o.read) {
        S.ps.p = all.p;
        all.p = NULL;
        if (parcels_alloc(&S.ps, all.n)) app_fail(&a, "out of memory for the parcels");
        else
          for (int m = 0; m < S.ps.n; m++) S.ps.key[m] = (uint64_t)m;
      } else if (generate(&box, &su, 0, o.global[0], 0, o.global[1], &S.ps)) {
        app_fail(&a, "out of memory for the serial parcels");
      }
      if (!a.err[0]) support_points(&S.ps);
    }
    if (app_agree(&a)) goto fail;
  }
  free(all.p);
  all.p = NULL;
  /* the parcels must fit EPIC's halo (and give quanta): one deposit, agreed, before anything
   * is timed */
  world w;
  memset(&w, 0, sizeof w);
  w.g = &g;
  w.e = &e;
  w.ps = &ps;
  w.deposit = o.deposit;
  double safe[EF_NFLOAT] = {0}, kmax = 0;
  {
    char why[512];
    int bad = 0;
    if (o.deposit != DEP_PLAIN) { /* the a priori quanta too, for the report */
      bad = step_quanta(&a, &w, 1, why, sizeof why);
      memcpy(safe, w.q, sizeof safe);
      kmax = w.kmax;
      if (!bad) bad = step_quanta(&a, &w, o.deposit == DEP_APRIORI, why, sizeof why);
    }
    if (bad) app_fail(&a, "%s", why);
    else if (ef_par2grid_deposit(&g, &e, &ps, 0, NULL, why, sizeof why)) app_fail(&a, "%s", why);
    if (app_agree(&a)) goto fail;
  }

  int nm = o.c.tr.n, total = o.warmup + o.steps;
  method *M = calloc((size_t)nm, sizeof *M);
  if (!M) app_fail(&a, "out of memory");
  if (app_agree(&a)) goto fail;
  ef_ref_init(&w.ref, d, &g);
  world_arrays(&w);
  if (a.rank == 0) {
    printf("%s: %d ranks (%d x %d), grid %d x %d x %d cells (z nodes 0..%d, stored -1..%d), "
           "local %d x %d (rank 0), %ld parcels (%s), %d warm-up + %d timed steps, %s fields\n",
           PROG, a.size, a.procs[0], a.procs[1], o.global[0], o.global[1], o.global[2], o.global[2],
           o.global[2] + 1, g.nx, g.ny, nglobal, o.read ? o.read : "artificial set-up",
           o.warmup, o.steps, o.c.shared ? "hs_alloc" : "malloc");
    fflush(stdout);
  }
  for (int i = 0; i < nm; i++) {
    method *m = &M[i];
    snprintf(m->spec, sizeof m->spec, "%s", o.c.tr.spec[i]);
    m->t = calloc((size_t)o.steps * NPH, sizeof(double));
    m->sums = calloc((size_t)total * NSUM, sizeof(uint64_t));
    if (!m->t || !m->sums) app_fail(&a, "out of memory");
    if (app_agree(&a)) goto fail;
    if (!strncmp(m->spec, "epic-ref", 8)) {
      if (!strcmp(m->spec, "epic-ref"))
        m->kind = M_REF;
      else if (!strcmp(m->spec, "epic-ref:perfield"))
        m->kind = M_REF_PERFIELD;
      else if (!strcmp(m->spec, "epic-ref:noreverse"))
        m->kind = M_REF_NOREVERSE;
      else
        app_fail(&a, "method '%s': unknown (epic-ref, epic-ref:perfield or epic-ref:noreverse)",
                 m->spec);
      m->ok = 1;
      if (app_agree(&a)) goto fail;
      continue;
    }
    double ts = MPI_Wtime();
    if (create_plans(&a, d, &g, m)) goto fail;
    ts = MPI_Wtime() - ts;
    if (a.rank == 0) {
      if (m->ok)
        printf("plans %s: created in %.3e s%s%s\n", m->spec, ts,
               strcmp(hs_plan_selected_transport(m->p2g), m->spec) ? ", selected " : "",
               strcmp(hs_plan_selected_transport(m->p2g), m->spec)
                   ? hs_plan_selected_transport(m->p2g) : "");
      else
        printf("transport %s unavailable: %s\n", m->spec, m->reason);
      fflush(stdout);
    }
    if (m->ok && o.c.verbose) {
      hs_plan pl[3] = {m->p2g, m->g2p, m->surf};
      for (int k = 0; k < 3; k++) {
        char buf[2048];
        if (hs_plan_describe(pl[k], buf, sizeof buf) == HS_OK && a.rank == 0)
          printf("plan %s %s: %s\n", m->spec, phase_name[k], buf);
      }
    }
  }

  /* the serial reference for the last step's time */
  const double dtime = 0.05;
  if (o.check && serial_run(&a, &S, &e, dtime * (total - 1), o.deposit)) goto fail;
  const int plain = o.deposit == DEP_PLAIN;
  if (a.rank == 0) {
    if (plain) {
      printf("deposit: plain sums (--deposit plain), grouped differently at every rank count\n");
    } else {
      printf("deposit: %s, contributions rounded to a power-of-two quantum q; q / "
             "max|contribution| per field:", dep_name[o.deposit]);
      for (int f = 0; f < EF_NFLOAT; f++)
        printf(" %s %.3g", sum_name[f], w.q[f] > 0 ? w.q[f] / w.bd[f] : 0.0);
      double coarse = 0.0;
      for (int f = 0; f < EF_NFLOAT; f++)
        if (w.q[f] > 0 && safe[f] / w.q[f] > coarse) coarse = safe[f] / w.q[f];
      printf("; the a priori bound (at most %.0f contributions per node) gives up to %.0f times "
             "coarser\n", kmax, coarse);
      if (o.check)
        printf("deposit cost: rounded serial grid vs plain serial sums: levels 0..nz: %ld of %ld "
               "values bit-identical, max |diff| / sum|contributions| %.3g, max |diff| / |value| "
               "%.3g; z halo levels: max |diff| / sum|contributions| %.3g%s\n",
               S.cost[0].same, S.cost[0].total, S.cost[0].bound, S.cost[0].rel, S.cost[1].bound,
               S.redone ? " (estimated quanta did not hold: a priori ones)" : "");
    }
    fflush(stdout);
  }

  /* the steps, every method in turn */
  for (int st = 0; st < total; st++)
    for (int i = 0; i < nm; i++) {
      method *m = &M[i];
      if (!m->ok) continue;
      double tm[NPH];
      run_step(&a, &w, m, dtime * st, tm);
      if (st >= o.warmup) memcpy(m->t + (size_t)(st - o.warmup) * NPH, tm, sizeof tm);
      checksums(&a, &w, m->sums + (size_t)st * NSUM);
      if (st == total - 1 && o.check) compare_serial(&a, &w, &S, m);
    }

  /* bit identity: every method against the first available one, every step */
  int first = -1, bits_same = 1, nhs = 0, nref = 0, failed = 0;
  for (int i = 0; i < nm; i++) /* p2p if it ran, else the first haloswap transport */
    if (M[i].ok && M[i].kind == M_HS && (first < 0 || !strcmp(M[i].spec, "p2p"))) first = i;
  if (first < 0)
    for (int i = 0; i < nm; i++)
      if (M[i].ok && first < 0) first = i;
  summary *sm = calloc((size_t)nm, sizeof *sm);
  if (!sm) abort();
  int iref = -1;
  for (int i = 0; i < nm; i++) {
    if (!M[i].ok) continue;
    summarise(&a, &M[i], o.steps, &sm[i]);
    if (M[i].kind == M_REF && iref < 0) iref = i;
  }
  if (a.rank == 0) {
    for (int i = 0; i < nm; i++) {
      method *m = &M[i];
      printf("run transport=%s\n", m->spec);
      if (!m->ok) {
        printf("unavailable: %s\n", m->reason);
        continue;
      }
      const uint64_t *s = m->sums + (size_t)(total - 1) * NSUM;
      for (int q = 0; q < NSUM; q++) printf("checksum %s %016llX\n", sum_name[q], (unsigned long long)s[q]);
      int same = 1;
      char diff[256] = "";
      for (int st = 0; st < total; st++)
        for (int q = 0; q < NSUM; q++)
          if (m->sums[(size_t)st * NSUM + q] != M[first].sums[(size_t)st * NSUM + q]) {
            if (same || !strstr(diff, sum_name[q]))
              snprintf(diff + strlen(diff), sizeof diff - strlen(diff), "%s%s", same ? "" : ",",
                       sum_name[q]);
            same = 0;
          }
      /* order-independent sums: epic-ref's order must give the same bits too */
      if (m->kind == M_HS || (!plain && m->kind != M_REF_NOREVERSE)) {
        if (m->kind == M_HS) nhs++;
        else nref++;
        if (!same) bits_same = 0;
      }
      printf("bits %s: %s %s\n", m->spec, same ? "identical to" : "DIFFER from",
             M[first].spec);
      if (!same) printf("bits %s: differing checksums: %s\n", m->spec, diff);
      if (o.check) {
        int pass = serial_pass(m, o.tol);
        if (!pass) failed = 1;
        printf("serial %s: %s: grid %ld of %ld bit-identical, max relative error %.3g (max "
               "|err| / sum|contributions| %.3g)%s; integer counts %s; parcels %ld of %ld "
               "bit-identical, max relative error %.3g\n",
               m->spec, pass ? "pass" : "FAIL", m->grid_same, m->grid_total, m->grid_rel,
               m->grid_bound, m->q_same ? "" : ", quanta DIFFER", m->int_bad ? "DIFFER" : "exact",
               m->parcel_same, m->parcel_total, m->parcel_rel);
      }
      summary *s2 = &sm[i];
      printf("timing %s: exchange per step %.3e s (par2grid %.3e, grid2par %.3e, surface %.3e), "
             "per-step max median %.3e [%.3e - %.3e], step %.3e s\n",
             m->spec, s2->exch_max, s2->mean_max[PH_P2G], s2->mean_max[PH_G2P],
             s2->mean_max[PH_SURF], s2->med, s2->lo, s2->hi, s2->mean_max[PH_STEP]);
    }
    if (!bits_same) failed = 1;
    printf("\n%s: exchange time per step in seconds: max over ranks of the per-rank mean over "
           "%d timed steps (after %d warm-up), methods interleaved step by step; median "
           "[min - max] over the steps of the per-step max over ranks\n",
           PROG, o.steps, o.warmup);
    int wid = 8;
    for (int i = 0; i < nm; i++)
      if ((int)strlen(M[i].spec) > wid) wid = (int)strlen(M[i].spec);
    printf("%-*s %10s %10s %10s %10s   %-33s %s\n", wid, "method", "par2grid", "grid2par", "surface",
           "total", "median [min - max]", "vs epic-ref: total (median)");
    for (int i = 0; i < nm; i++) {
      method *m = &M[i];
      if (!m->ok) {
        printf("%-*s unavailable: %s\n", wid, m->spec, m->reason);
        continue;
      }
      summary *s2 = &sm[i];
      char ratio[32] = "-";
      if (iref >= 0)
        snprintf(ratio, sizeof ratio, "%.2f (%.2f)", s2->exch_max / sm[iref].exch_max,
                 s2->med / sm[iref].med);
      char range[64];
      snprintf(range, sizeof range, "%.3e [%.3e - %.3e]", s2->med, s2->lo, s2->hi);
      printf("%-*s %10.3e %10.3e %10.3e %10.3e   %-33s %s\n", wid, m->spec, s2->mean_max[PH_P2G],
             s2->mean_max[PH_G2P], s2->mean_max[PH_SURF], s2->exch_max, range, ratio);
    }
    if (!plain)
      printf("\n%s: deposit: %ld of %ld deposits redone with the a priori quanta\n", PROG,
             w.redone, w.deposits);
    char refs[64] = "";
    if (nref) snprintf(refs, sizeof refs, " and %d epic-ref method(s)", nref);
    printf("\n%s: bit identity: %d haloswap transport(s)%s %s at every one of %d steps (%d "
           "checksums each)\n",
           PROG, nhs, refs, bits_same ? "gave the same bits" : "DIFFER", total, NSUM);
    if (a.js) {
      fprintf(a.js, "{\"app\": \"epic-fields\", \"ranks\": %d, \"procs\": [%d, %d], "
                  "\"global\": [%d, %d, %d], \"parcels\": %ld, \"input\": ",
              a.size, a.procs[0], a.procs[1], o.global[0], o.global[1], o.global[2], nglobal);
      app_json_string(a.js, o.read ? o.read : "artificial");
      fprintf(a.js, ", \"steps\": %d, \"warmup\": %d, \"alloc\": \"%s\", \"tol\": %.3g, "
                  "\"haloswap_bits_identical\": %s, \"bits_identical_methods\": %d,\n "
                  "\"deposit\": \"%s\"",
              o.steps, o.warmup, o.c.shared ? "shared" : "malloc", o.tol, bits_same ? "true" : "false",
              nhs + nref, dep_name[o.deposit]);
      if (!plain) {
        fprintf(a.js, ", \"kmax_apriori\": %.0f, \"redone\": %ld, \"quanta\": {", kmax, w.redone);
        for (int f = 0; f < EF_NFLOAT; f++)
          fprintf(a.js, "%s\"%s\": %.17g", f ? ", " : "", sum_name[f], w.q[f]);
        fprintf(a.js, "}");
        if (o.check)
          fprintf(a.js, ",\n \"rounding_cost\": {\"grid_bit_identical\": %ld, \"grid_values\": %ld, "
                      "\"err_over_sum_abs\": %.3e, \"rel_err\": %.3e, "
                      "\"z_halo_err_over_sum_abs\": %.3e}",
                  S.cost[0].same, S.cost[0].total, S.cost[0].bound,
                  isfinite(S.cost[0].rel) ? S.cost[0].rel : -1.0, S.cost[1].bound);
      }
      fprintf(a.js, ",\n \"runs\": [");
      for (int i = 0; i < nm; i++) {
        method *m = &M[i];
        fprintf(a.js, "%s\n  {\"transport\": ", i ? "," : "");
        app_json_string(a.js, m->spec);
        if (!m->ok) {
          fprintf(a.js, ", \"status\": \"unavailable\", \"reason\": ");
          app_json_string(a.js, m->reason);
          fprintf(a.js, ", \"per_step_max\": {}}");
          continue;
        }
        summary *s2 = &sm[i];
        fprintf(a.js, ", \"status\": \"ok\", \"method\": \"%s\", \"checksums\": {",
                m->kind == M_HS ? "haloswap" : "epic-ref");
        const uint64_t *s = m->sums + (size_t)(total - 1) * NSUM;
        for (int q = 0; q < NSUM; q++)
          fprintf(a.js, "%s\"%s\": \"%016llX\"", q ? ", " : "", sum_name[q], (unsigned long long)s[q]);
        fprintf(a.js, "},\n   \"per_step_max\": {\"step\": %.6e, \"comm\": %.6e, "
                    "\"comm_par2grid\": %.6e, \"comm_grid2par\": %.6e, \"comm_surface\": %.6e}, "
                    "\"exchange_per_step\": {\"median\": %.6e, \"min\": %.6e, \"max\": %.6e}",
                s2->mean_max[PH_STEP], s2->exch_max, s2->mean_max[PH_P2G], s2->mean_max[PH_G2P],
                s2->mean_max[PH_SURF], s2->med, s2->lo, s2->hi);
        if (iref >= 0)
          fprintf(a.js, ", \"vs_epic_ref\": %.4f, \"vs_epic_ref_median\": %.4f",
                  s2->exch_max / sm[iref].exch_max, s2->med / sm[iref].med);
        if (o.check)
          fprintf(a.js, ",\n   \"serial\": {\"pass\": %s, \"grid_err_over_bound\": %.3e, "
                      "\"grid_rel_err\": %.3e, \"grid_bit_identical\": %ld, \"grid_values\": %ld, "
                      "\"int_mismatches\": %ld, \"parcel_rel_err\": %.3e, "
                      "\"parcels_bit_identical\": %ld, \"parcels\": %ld, \"quanta_identical\": %s}",
                  serial_pass(m, o.tol) ? "true" : "false", m->grid_bound,
                  isfinite(m->grid_rel) ? m->grid_rel : -1.0, m->grid_same, m->grid_total,
                  m->int_bad, m->parcel_rel, m->parcel_same, m->parcel_total,
                  m->q_same ? "true" : "false");
        fprintf(a.js, "}");
      }
      fprintf(a.js, "\n ]}\n");
      fclose(a.js);
    }
    printf("%s: %s\n", PROG, failed ? "FAIL" : "PASS");
    fflush(stdout);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, a.comm);
  for (int i = 0; i < nm; i++) {
    if (M[i].ok && M[i].kind == M_HS) {
      hs_plan_free(&M[i].surf);
      hs_plan_free(&M[i].g2p);
      hs_plan_free(&M[i].p2g);
    }
    free(M[i].t);
    free(M[i].sums);
  }
  free(M);
  free(sm);
  parcels_free(&ps);
  parcels_free(&S.ps);
  ef_grid_free(&S.g, NULL);
  ef_grid_free(&S.bound, NULL);
  ef_grid_free(&g, d);
  hs_decomp_free(&d);
  return app_exit(failed ? 1 : 0);
fail:
  return app_exit(1);
}
