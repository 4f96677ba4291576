/* hs_sim: the MONC halo-swap case at simulated scale (SimGrid SMPI), or on a real machine.
 *
 * One plan per transport on a 2-D decomposition of x and y (z whole), `fields` float64 fields of
 * layout field(z,y,x), depth 2, box stencil by default (8 neighbours); with --dims3 a 3-D
 * decomposition with halos on all three axes (26 neighbours). Reports per transport the time per swap
 * (max over ranks of the mean over `swaps` timed swaps, after `warmup`), and for the process
 * grid the halo bytes per swap that cross node boundaries, with or without node-aware placement.
 *
 * Two data modes:
 *  --check  real fields on every rank, filled from global coordinates; every halo cell is compared
 *           with the analytic value after every swap (tests/core/halo_check.h). For small counts.
 *  default  model mode for thousands of simulated ranks: the fields go through haloswap's pack /
 *           unpack hooks over one field-sized array shared by all ranks (SMPI_SHARED_MALLOC), and
 *           under SMPI each box copy is a sampled computation (SMPI_SAMPLE_GLOBAL_TAG): the first
 *           copies of each box shape run and are timed, the rest are charged their mean time
 *           without running; or, with --pack-rate R (GB/s), each box copy is charged
 *           bytes / R of simulated computation and not run at all (deterministic: sampling on
 *           a loaded machine measures the load). The
 *           library's message buffers are shared too when run with
 *           --cfg=smpi/auto-shared-malloc-thresh (bench/sim/study_sim.py sets it), so memory per
 *           simulated rank stays small. Halo contents are meaningless in this mode.
 *
 * Nodes: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (under SMPI: the simulated host), or virtual
 * nodes of --node-size consecutive ranks.
 *
 * Usage: hs_sim (--weak X,Y,Z | --strong X,Y,Z) [--dims3] [--fields N] [--depth D] [--star]
 *               [--transport SPEC]... [--swaps N] [--warmup N] [--check] [--place node|rank]
 *               [--node-size N] [--label TEXT] [--pack-rate GBPS] [--quick-exit]
 * Output: one JSON object per transport on stdout (rank 0), prefixed "HS_SIM ".
 * --quick-exit (SMPI): end the simulation once the last result is printed, before the plans
 * are freed. SMPI 3.32's MPI_Win_unlock_all unlocks every rank one by one, so freeing an
 * rma-passive plan costs P^2 simulated unlocks: at 4,096 ranks more than the swap itself. */
#include "../../tests/core/halo_check.h"
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SMPI_SAMPLE_GLOBAL
#define HS_SIM_SMPI 1
#else
#define HS_SIM_SMPI 0
#endif

typedef struct {
  int weak, ext[3], fields, depth, star, swaps, warmup, check, place, node_size, dims3;
  int quick_exit;
  const char *specs[16];
  int nspecs;
  const char *label;
} opts;

/* Model-mode field: its geometry and the shared array standing in for its data. */
typedef struct {
  tfield tf;
  double *data;
} model_ctx;

static void copy_all(const model_ctx *m, const hs_region *r, double *buf, int to_buf) {
  int nz = r->count[2];
  size_t ncol = (size_t)r->count[0] * (size_t)r->count[1];
  for (size_t c = 0; c < ncol; c++) {
    int i[3] = {r->lo[0] + (int)(c / (size_t)r->count[1]), r->lo[1] + (int)(c % (size_t)r->count[1]),
                r->lo[2]};
    double *cell = m->data + tfield_index(&m->tf, i), *b = buf + c * (size_t)nz;
    if (to_buf)
      memcpy(b, cell, (size_t)nz * sizeof(double));
    else
      memcpy(cell, b, (size_t)nz * sizeof(double));
  }
}

/* Under SMPI one box copy is one sampled computation, keyed by direction and box shape over all
 * ranks: the first 10 copies of each shape run and are timed, later ones are charged their mean
 * (one simulated computation per hook call, so the simulator stays fast at thousands of ranks). */
static double pack_rate = 0.0; /* --pack-rate: bytes/s of a modelled copy; 0 = sample real copies */

static void copy_cols(const model_ctx *m, const hs_region *r, double *buf, int to_buf) {
#if HS_SIM_SMPI
  if (pack_rate > 0.0) {
    /* Modelled copy: charge bytes / rate as simulated computation, copy nothing. */
    smpi_execute((double)r->count[0] * r->count[1] * r->count[2] * sizeof(double) / pack_rate);
    return;
  }
  char tag[64];
  snprintf(tag, sizeof tag, "%s-%dx%dx%d-", to_buf ? "pack" : "unpack", r->count[0], r->count[1],
           r->count[2]);
  int once = 0;
  SMPI_SAMPLE_GLOBAL_TAG(once = 0, once < 1, once++, 10, 0.05, tag) { copy_all(m, r, buf, to_buf); }
#else
  copy_all(m, r, buf, to_buf);
#endif
}
static void model_pack(void *ctx, const hs_region *r, void *buf) { copy_cols(ctx, r, buf, 1); }
static void model_unpack(void *ctx, const hs_region *r, const void *buf) {
  copy_cols(ctx, r, (void *)buf, 0);
}

#if HS_SIM_SMPI
/* Model mode only: RMA windows in memory shared by all simulated ranks. SMPI 3.32 allocates
 * MPI_Win_allocate memory privately (xbt_malloc), which at thousands of ranks exceeds this
 * machine's memory, and SMPI's MPI_ symbols are weak, so this definition takes precedence for
 * haloswap (linked into this program). The window contents are then meaningless, as are all
 * halo values in model mode; --check keeps private windows. */
static int shared_windows = 0;
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win) {
  if (!shared_windows) return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  void *base = SMPI_SHARED_MALLOC(size > 0 ? (size_t)size : 1);
  *(void **)baseptr = base;
  return PMPI_Win_create(base, size, disp_unit, info, comm, win);
}
#endif

static int parse3(const char *s, int v[3]) { return sscanf(s, "%d,%d,%d", &v[0], &v[1], &v[2]) == 3; }

static int usage(int rank, const char *msg) {
  if (rank == 0)
    fprintf(stderr, "hs_sim: %s\nusage: hs_sim (--weak X,Y,Z | --strong X,Y,Z) [--dims3] "
                    "[--fields N] [--depth D] [--star] [--transport SPEC]... [--swaps N] [--warmup N] [--check] "
                    "[--place node|rank] [--node-size N] [--label TEXT] [--pack-rate GBPS]\n", msg);
  return 2;
}

/* Node id of this rank: the smallest world rank on its node (or rank / node_size). */
static int node_id(int node_size) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (node_size > 0) return rank / node_size;
  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  int id = rank;
  MPI_Allreduce(&rank, &id, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  return id;
}

/* Halo bytes this rank receives per swap from ranks on other nodes and in all (self copies of
 * periodic wrap-around excluded), from the neighbours' node ids exchanged over the grid. */
static void internode_bytes(hs_decomp d, const opts *o, int my_node, double *inter, double *total) {
  MPI_Comm cart = hs_decomp_comm(d);
  int me, crd[3] = {0, 0, 0}, P[3], nd = o->dims3 ? 3 : 2;
  MPI_Comm_rank(cart, &me);
  for (int a = 0; a < 3; a++) {
    P[a] = hs_decomp_procs(d, a);
    crd[a] = a < nd ? hs_decomp_coord(d, a) : 0;
  }
  int nb[26], their[26];
  MPI_Request rq[52];
  int n = 0;
  double box[26];
  for (int dx = -1; dx <= 1; dx++)
    for (int dy = -1; dy <= 1; dy++)
      for (int dz = (nd == 3 ? -1 : 0); dz <= (nd == 3 ? 1 : 0); dz++) {
        int off[3] = {dx, dy, dz}, nnz = (dx != 0) + (dy != 0) + (dz != 0);
        if (!nnz || (o->star && nnz > 1)) continue;
        int c[3];
        for (int a = 0; a < 3; a++) c[a] = a < nd ? (crd[a] + off[a] + P[a]) % P[a] : 0;
        MPI_Cart_rank(cart, c, &nb[n]);
        box[n] = o->fields * (double)sizeof(double);
        for (int a = 0; a < 3; a++)
          box[n] *= (double)(off[a] ? o->depth : hs_decomp_local_extent(d, a));
        n++;
      }
  for (int k = 0; k < n; k++) {
    MPI_Irecv(&their[k], 1, MPI_INT, nb[k], 77, cart, &rq[k]);
    MPI_Isend(&my_node, 1, MPI_INT, nb[k], 77, cart, &rq[n + k]);
  }
  MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE);
  *inter = *total = 0.0;
  for (int k = 0; k < n; k++) {
    if (nb[k] == me) continue;
    *total += box[k];
    if (their[k] != my_node) *inter += box[k];
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  opts o = {.weak = -1, .fields = 30, .depth = 2, .swaps = 10, .warmup = 2, .label = ""};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if ((!strcmp(a, "--weak") || !strcmp(a, "--strong")) && v && parse3(v, o.ext)) {
      o.weak = !strcmp(a, "--weak");
      i++;
    } else if (!strcmp(a, "--fields") && v) o.fields = atoi(argv[++i]);
    else if (!strcmp(a, "--depth") && v) o.depth = atoi(argv[++i]);
    else if (!strcmp(a, "--star")) o.star = 1;
    else if (!strcmp(a, "--dims3")) o.dims3 = 1;
    else if (!strcmp(a, "--swaps") && v) o.swaps = atoi(argv[++i]);
    else if (!strcmp(a, "--warmup") && v) o.warmup = atoi(argv[++i]);
    else if (!strcmp(a, "--check")) o.check = 1;
    else if (!strcmp(a, "--quick-exit")) o.quick_exit = 1;
    else if (!strcmp(a, "--place") && v) o.place = !strcmp(argv[++i], "node");
    else if (!strcmp(a, "--node-size") && v) o.node_size = atoi(argv[++i]);
    else if (!strcmp(a, "--label") && v) o.label = argv[++i];
    else if (!strcmp(a, "--pack-rate") && v) pack_rate = atof(argv[++i]) * 1e9;
    else if (!strcmp(a, "--transport") && v && o.nspecs < 16) o.specs[o.nspecs++] = argv[++i];
    else {
      int rc = usage(rank, "unknown or incomplete argument");
      MPI_Finalize();
      return rc;
    }
  }
  if (o.weak < 0 || o.fields < 1 || o.depth < 1 || o.swaps < 1 || o.warmup < 0) {
    int rc = usage(rank, "need --weak or --strong, fields >= 1, depth >= 1, swaps >= 1");
    MPI_Finalize();
    return rc;
  }
  if (o.nspecs == 0) o.specs[o.nspecs++] = "p2p";

  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  int nd = o.dims3 ? 3 : 2;
  dd.procs[2] = o.dims3 ? 0 : 1;
  dd.periodic[2] = o.dims3; /* 3-D: periodic on every axis, so every rank has 26 neighbours */
  if (!o.weak) {
    for (int a = 0; a < 3; a++) dd.global[a] = o.ext[a];
  } else {
    int P[3] = {0, 0, 0};
    MPI_Dims_create(size, nd, P);
    for (int a = 0; a < 3; a++) dd.global[a] = o.ext[a] * (a < nd ? P[a] : 1);
    if (o.dims3)
      for (int a = 0; a < 3; a++) dd.procs[a] = P[a];
  }
  dd.placement = o.place ? HS_PLACE_NODE : HS_PLACE_RANK;
  dd.node_size = o.node_size;
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    if (rank == 0) fprintf(stderr, "hs_sim: %s\n", hs_error_message());
    MPI_Finalize();
    return 1;
  }
  int block[3];
  int placed = hs_decomp_placement(d, block);
  int my_node = node_id(o.node_size);
  double inter, total, sum[2], mine[2];
  internode_bytes(d, &o, my_node, &inter, &total);
  mine[0] = inter;
  mine[1] = total;
  MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

  int local[3], halo[3] = {o.depth, o.depth, o.dims3 ? o.depth : 0}, maxl[3];
  for (int a = 0; a < 3; a++) local[a] = hs_decomp_local_extent(d, a);
  MPI_Allreduce(local, maxl, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  tfield tf;
  tfield_init(&tf, HS_FLOAT64, HS_LAYOUT_ZFAST, local, halo, 3);
  hs_field *fields = calloc((size_t)o.fields, sizeof *fields);
  void **data = calloc((size_t)o.fields, sizeof *data);
  model_ctx mc;
  mc.tf = tf;
  mc.data = NULL;
  if (!o.check) {
#if HS_SIM_SMPI
    shared_windows = 1;
#endif
    /* One array for all fields and all ranks, sized for the largest local block. */
    tfield big;
    tfield_init(&big, HS_FLOAT64, HS_LAYOUT_ZFAST, maxl, halo, 3);
#if HS_SIM_SMPI
    if (pack_rate <= 0.0) mc.data = SMPI_SHARED_MALLOC(big.n * sizeof(double)); /* else unused */
#else
    mc.data = calloc(big.n, sizeof(double));
#endif
  }
  for (int f = 0; f < o.fields; f++) {
    if (o.check) {
      data[f] = malloc(tf.n * sizeof(double));
      fields[f] = hs_field_array(HS_FLOAT64, data[f], HS_LAYOUT_ZFAST, 0);
      for (int a = 0; a < 3; a++) fields[f].halo[a] = halo[a];
    } else {
      fields[f] = hs_field_array(HS_FLOAT64, NULL, HS_LAYOUT_ZFAST, 0);
      for (int a = 0; a < 3; a++) fields[f].halo[a] = halo[a];
      fields[f].pack = model_pack;
      fields[f].unpack = model_unpack;
      fields[f].ctx = &mc;
    }
  }
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.depth[0] = pd.depth[1] = o.depth;
  pd.depth[2] = o.dims3 ? o.depth : 0;
  pd.stencil = o.star ? HS_STENCIL_STAR : HS_STENCIL_BOX;
  pd.nfields = o.fields;
  pd.fields = fields;
  tgeom g;
  tgeom_from(&g, d, &pd);
  int failed = 0;
  for (int t = 0; t < o.nspecs; t++) {
    pd.transport_name = o.specs[t];
    char status[300] = "ok";
    double tswap = -1.0;
    long bad = 0;
    hs_plan p = NULL;
    if (hs_plan_create(d, &pd, &p) != HS_OK) {
      snprintf(status, sizeof status, "%s", hs_error_message());
      for (char *c = status; *c; c++)
        if (*c == '"' || *c == '\\') *c = '\'';
    } else {
      int s = 0;
      for (int it = 0; it < o.warmup + o.swaps; it++, s++) {
        if (it == o.warmup) {
          MPI_Barrier(MPI_COMM_WORLD);
          tswap = MPI_Wtime();
        }
        if (o.check)
          for (int f = 0; f < o.fields; f++) tfield_fill(&tf, data[f], &g, f, s, it == 0);
        if (hs_swap(p, NULL) != HS_OK) {
          bad++;
          break;
        }
        if (o.check)
          for (int f = 0; f < o.fields; f++) bad += tfield_check(&tf, data[f], &g, f, s, o.specs[t], rank, 1);
      }
      double mean = (MPI_Wtime() - tswap) / o.swaps;
      MPI_Allreduce(&mean, &tswap, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      long all = 0;
      MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      bad = all;
      if (bad) {
        snprintf(status, sizeof status, "%ld wrong halo cells", bad);
        failed = 1;
      }
    }
    if (rank == 0)
      printf("HS_SIM {\"label\": \"%s\", \"transport\": \"%s\", \"ranks\": %d, \"mode\": \"%s\", "
             "\"global\": [%d, %d, %d], \"procs\": [%d, %d, %d], \"dims\": %d, \"fields\": %d, \"depth\": %d, "
             "\"stencil\": \"%s\", \"placement\": \"%s\", \"asked_placement\": \"%s\", "
             "\"node_block\": [%d, %d], \"node_size\": %d, \"swaps\": %d, \"checked\": %s, "
             "\"smpi\": %s, \"pack_rate_gbps\": %g, \"seconds_per_swap\": %.9g, \"halo_bytes_per_swap\": %.0f, "
             "\"internode_bytes_per_swap\": %.0f, \"status\": \"%s\"}\n",
             o.label, o.specs[t], size, o.weak ? "weak" : "strong", dd.global[0], dd.global[1],
             dd.global[2], hs_decomp_procs(d, 0), hs_decomp_procs(d, 1), hs_decomp_procs(d, 2), nd, o.fields, o.depth,
             o.star ? "star" : "box", placed == HS_PLACE_NODE ? "node" : "rank",
             o.place ? "node" : "rank", block[0], block[1], o.node_size, o.swaps,
             o.check ? "true" : "false", HS_SIM_SMPI ? "true" : "false", pack_rate / 1e9, tswap, sum[1], sum[0],
             status);
    fflush(stdout);
#if HS_SIM_SMPI
    /* rank 0 only: another rank ending the process first would lose the printed line */
    if (o.quick_exit && rank == 0 && t == o.nspecs - 1) _exit(failed);
#endif
    hs_plan_free(&p);
  }
  for (int f = 0; f < o.fields; f++) free(data[f]);
  free(data);
  free(fields);
#if HS_SIM_SMPI
  if (mc.data) SMPI_SHARED_FREE(mc.data);
#else
  free(mc.data);
#endif
  hs_decomp_free(&d);
  MPI_Finalize();
  return failed;
}
