/* parcel-cluster: the parallel merge cycle (EPIC's parcel-clustering, originals.md section 2).
 * 2-D decomposition in x and y from haloswap; small parcels near an edge are copied to the
 * neighbours, nearest neighbours are found locally and resolved globally, the directed graph
 * is pruned over the remote access layer (Algorithm 1), remote sources travel to their
 * target's owner, groups merge, and parcels that left the subdomain are handed over.
 *
 * A dimension with one rank is its own periodic neighbour: instead of sending parcels to
 * itself, the rank adds periodic images of its edge parcels to the halo cells. */
#include "pc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { A_LEAF = 0, A_AVAIL = 1, A_MERGED = 2 };
#define TAG_SMALL 100
#define TAG_ANSWER 120
#define TAG_XCOUNT 140
#define TAG_XDATA 141

/* ------------------------------------------------------------------ set-up */

static int block_offset(int n, int P, int c) {
  int q = n / P, rem = n % P;
  return c * q + (c < rem ? c : rem);
}

int pc_par_init(MPI_Comm comm, const pc_box *b, pc_par *par) {
  memset(par, 0, sizeof *par);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.ndims = 2;
  dd.global[0] = b->n[0];
  dd.global[1] = b->n[1];
  dd.procs[0] = dd.procs[1] = 0;
  dd.periodic[0] = dd.periodic[1] = 1;
  int rc = hs_decomp_create(comm, &dd, &par->dec);
  if (rc != HS_OK) return rc;
  par->comm = hs_decomp_comm(par->dec);
  MPI_Comm_rank(par->comm, &par->rank);
  MPI_Comm_size(par->comm, &par->size);
  for (int a = 0; a < 2; a++) {
    par->procs[a] = hs_decomp_procs(par->dec, a);
    par->coord[a] = hs_decomp_coord(par->dec, a);
    par->lo[a] = hs_decomp_global_offset(par->dec, a);
    par->nloc[a] = hs_decomp_local_extent(par->dec, a);
  }
  par->offx = malloc((size_t)(par->procs[0] + 1) * sizeof(int));
  par->offy = malloc((size_t)(par->procs[1] + 1) * sizeof(int));
  if (!par->offx || !par->offy) return HS_ERR_NOMEM;
  for (int c = 0; c <= par->procs[0]; c++) par->offx[c] = block_offset(b->n[0], par->procs[0], c);
  for (int c = 0; c <= par->procs[1]; c++) par->offy[c] = block_offset(b->n[1], par->procs[1], c);
  if (par->offx[par->coord[0]] != par->lo[0] || par->offy[par->coord[1]] != par->lo[1])
    return HS_ERR_INTERNAL; /* the block rule must be haloswap's */
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      int c[2] = {(par->coord[0] + dx + par->procs[0]) % par->procs[0],
                  (par->coord[1] + dy + par->procs[1]) % par->procs[1]};
      int r;
      MPI_Cart_rank(par->comm, c, &r);
      par->nbr[(dy + 1) * 3 + dx + 1] = r;
      int known = r == par->rank;
      for (int k = 0; k < par->ndistinct; k++) known |= par->distinct[k] == r;
      if (!known) par->distinct[par->ndistinct++] = r;
    }
  return HS_OK;
}

void pc_par_free(pc_par *par) {
  free(par->offx);
  free(par->offy);
  hs_decomp_free(&par->dec);
  memset(par, 0, sizeof *par);
}

static int coord_of(const int *off, int P, int cell) {
  int lo = 0, hi = P - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (off[mid] <= cell) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

int pc_owner(const pc_par *par, const pc_box *b, const pc_parcel *p) {
  int c[2] = {coord_of(par->offx, par->procs[0], pc_cell_of(b, 0, p->a[PX])),
              coord_of(par->offy, par->procs[1], pc_cell_of(b, 1, p->a[PY]))};
  int r;
  MPI_Cart_rank(par->comm, c, &r);
  return r;
}

int pc_prune_open(pc_par *par, pc_prune_ctx *ctx, const char *backend, int capacity) {
  int rc = hs_ra_backend_parse(backend, &ctx->backend, &ctx->mode);
  if (rc != HS_OK) return rc;
  hs_ra_desc d;
  hs_ra_desc_init(&d);
  d.backend = ctx->backend;
  d.rma_sync = ctx->mode;
  d.narrays = 3;
  d.capacity = capacity;
  d.npeers = par->ndistinct;
  d.peers = par->distinct;
  return hs_ra_create(par->comm, &d, &ctx->ra);
}

void pc_prune_close(pc_prune_ctx *ctx) { hs_ra_free(&ctx->ra); }

/* ------------------------------------------------------------------ small helpers */

typedef struct {
  double *v;
  int n, cap; /* doubles */
} dbuf;

static int dbuf_push(dbuf *b, const double *v, int k) {
  if (b->n + k > b->cap) {
    int cap = b->cap ? b->cap : 256;
    while (cap < b->n + k) cap *= 2;
    double *p = realloc(b->v, (size_t)cap * sizeof(double));
    if (!p) return -1;
    b->v = p;
    b->cap = cap;
  }
  memcpy(b->v + b->n, v, (size_t)k * sizeof(double));
  b->n += k;
  return 0;
}

static int dir_skipped(const pc_par *par, int d) {
  int dx = d % 3 - 1, dy = d / 3 - 1;
  return d == 4 || (dx && par->procs[0] == 1) || (dy && par->procs[1] == 1);
}

static int slot_of(const pc_par *par, int rank) {
  for (int k = 0; k < par->ndistinct; k++)
    if (par->distinct[k] == rank) return k;
  return -1;
}

/* Variable-size exchange of doubles with the distinct neighbours: out[k] goes to distinct[k];
 * what arrives is concatenated into *in (n_in doubles). */
static int nbr_exchange(const pc_par *par, dbuf *out, double **in, int *n_in) {
  int nd = par->ndistinct, cin[8], off[9];
  MPI_Request rq[16];
  for (int k = 0; k < nd; k++) {
    MPI_Irecv(&cin[k], 1, MPI_INT, par->distinct[k], TAG_XCOUNT, par->comm, &rq[k]);
    MPI_Isend(&out[k].n, 1, MPI_INT, par->distinct[k], TAG_XCOUNT, par->comm, &rq[nd + k]);
  }
  if (MPI_Waitall(2 * nd, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return -1;
  off[0] = 0;
  for (int k = 0; k < nd; k++) off[k + 1] = off[k] + cin[k];
  double *buf = malloc((size_t)(off[nd] ? off[nd] : 1) * sizeof(double));
  if (!buf) return -1;
  for (int k = 0; k < nd; k++) {
    MPI_Irecv(buf + off[k], cin[k], MPI_DOUBLE, par->distinct[k], TAG_XDATA, par->comm, &rq[k]);
    MPI_Isend(out[k].v, out[k].n, MPI_DOUBLE, par->distinct[k], TAG_XDATA, par->comm, &rq[nd + k]);
  }
  if (MPI_Waitall(2 * nd, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
    free(buf);
    return -1;
  }
  *in = buf;
  *n_in = off[nd];
  return 0;
}

/* ------------------------------------------------------------------ pruning (Algorithm 1) */

#define RA(call)                         \
  do {                                   \
    int ra_rc_ = (call);                 \
    if (ra_rc_ != HS_OK) return ra_rc_;  \
  } while (0)

static int prune(const pc_par *par, pc_prune_ctx *ctx, int nl, const int *is, const int *ic,
                 const int *rc, char *merge, pc_cycle_info *info) {
  hs_ra ra = ctx->ra;
  const int me = par->rank;
  const unsigned AV = 1u << A_AVAIL, LF = 1u << A_LEAF, MG = 1u << A_MERGED;
  int32_t *leaf = hs_ra_local(ra, A_LEAF), *av = hs_ra_local(ra, A_AVAIL);
  int32_t *mg = hs_ra_local(ra, A_MERGED);
  char *iso = calloc((size_t)(nl ? nl : 1), 1);
  if (!iso) return HS_ERR_NOMEM;
  RA(hs_ra_set_targets(ra, nl, rc, ic));
  RA(hs_ra_clear(ra));

  /* Stage 1: break every link between non-leaves until only dual links remain. */
  RA(hs_ra_epoch_begin(ra));
  int cont;
  do {
    cont = 0;
    for (int m = 0; m < nl; m++)
      if (!mg[is[m]]) {
        leaf[is[m]] = 1;
        RA(hs_ra_put(ra, A_AVAIL, rc[m], ic[m], 1));
      }
    RA(hs_ra_sync_arrays(ra, AV));
    for (int m = 0; m < nl; m++)
      if (!mg[is[m]]) RA(hs_ra_put(ra, A_LEAF, rc[m], ic[m], 0));
    RA(hs_ra_sync_arrays(ra, LF));
    for (int m = 0; m < nl; m++)
      if (!mg[is[m]] && !leaf[is[m]]) RA(hs_ra_put(ra, A_AVAIL, rc[m], ic[m], 0));
    RA(hs_ra_sync_arrays(ra, AV));
    for (int m = 0; m < nl; m++)
      if (!mg[is[m]] && leaf[is[m]]) {
        int32_t a = 0;
        RA(hs_ra_get(ra, A_AVAIL, rc[m], ic[m], &a));
        if (a) {
          mg[is[m]] = 1;
          RA(hs_ra_put(ra, A_MERGED, rc[m], ic[m], 1));
          cont = 1;
        }
      }
    RA(hs_ra_complete(ra, MG));
    MPI_Allreduce(MPI_IN_PLACE, &cont, 1, MPI_INT, MPI_LOR, par->comm);
    info->stage1_rounds++;
  } while (cont);
  RA(hs_ra_epoch_end(ra));

  /* Stage 2: dual links. */
  RA(hs_ra_epoch_begin(ra));
  for (int m = 0; m < nl; m++)
    if (!mg[is[m]] && leaf[is[m]]) RA(hs_ra_put(ra, A_AVAIL, rc[m], ic[m], 1));
  RA(hs_ra_sync_arrays(ra, AV));
  for (int m = 0; m < nl; m++) {
    int s = is[m];
    merge[m] = 0;
    if (mg[s] && leaf[s]) {
      merge[m] = 1;
      int32_t l = 0;
      RA(hs_ra_get(ra, A_LEAF, rc[m], ic[m], &l));
      if (l) info->chain_violations++;
    } else if (!mg[s]) {
      if (leaf[s]) {
        merge[m] = 1;
      } else if (!av[s]) {
        int32_t a = 0;
        RA(hs_ra_get(ra, A_AVAIL, rc[m], ic[m], &a));
        if (a) {
          merge[m] = 1;
        } else {
          /* Isolated dual link: the lower rank's parcel receives (loop order on one rank). */
          iso[m] = 1;
          if (me <= rc[m]) av[s] = 1;
        }
      }
    }
  }
  RA(hs_ra_sync_arrays(ra, AV));
  for (int m = 0; m < nl; m++)
    if (iso[m]) {
      int32_t a = 0;
      RA(hs_ra_get(ra, A_AVAIL, rc[m], ic[m], &a));
      if (a) merge[m] = 1;
    }
  RA(hs_ra_epoch_end(ra));
  free(iso);
  return HS_OK;
}

/* ------------------------------------------------------------------ the cycle */

typedef struct {
  int n, cap;
  double *x, *y, *z;
  int *orig;
} cands;

/* old reallocated to cap elements of size bytes, or old itself (and *fail set) when out of
 * memory. */
static void *grow(void *old, int cap, size_t size, int *fail) {
  void *p = realloc(old, (size_t)cap * size);
  if (p) return p;
  *fail = 1;
  return old;
}

static int cand_push(cands *c, double x, double y, double z, int orig) {
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 1024, fail = 0;
    c->x = grow(c->x, cap, sizeof *c->x, &fail);
    c->y = grow(c->y, cap, sizeof *c->y, &fail);
    c->z = grow(c->z, cap, sizeof *c->z, &fail);
    c->orig = grow(c->orig, cap, sizeof *c->orig, &fail);
    if (fail) return -1;
    c->cap = cap;
  }
  c->x[c->n] = x;
  c->y[c->n] = y;
  c->z[c->n] = z;
  c->orig[c->n] = orig;
  c->n++;
  return 0;
}

static int fail(MPI_Comm comm, int local, const char *what) {
  int any = local;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any && local) fprintf(stderr, "parcel-cluster: %s\n", what);
  return any;
}

int pc_cycle_parallel(pc_par *par, const pc_box *b, double vmin, pc_set *s, pc_prune_ctx *ctx,
                      pc_cycle_info *info) {
  memset(info, 0, sizeof *info);
  MPI_Comm comm = par->comm;
  const int me = par->rank, n = s->n, nz = b->n[2];
  const double L[3] = {b->extent[0], b->extent[1], b->extent[2]};
  double t0 = MPI_Wtime();
  int err = 0;

  /* Capacity of the distributed flags: grow (collectively) when a rank outgrew it. */
  int need = n, cap_now = hs_ra_capacity(ctx->ra, me);
  int grow = need > cap_now;
  MPI_Allreduce(MPI_IN_PLACE, &grow, 1, MPI_INT, MPI_MAX, comm);
  if (grow) {
    MPI_Allreduce(MPI_IN_PLACE, &need, 1, MPI_INT, MPI_MAX, comm);
    char name[32];
    snprintf(name, sizeof name, "%s", hs_ra_backend_name(ctx->backend, ctx->mode));
    pc_prune_close(ctx);
    int rc = pc_prune_open(par, ctx, name, need + need / 4 + 16);
    if (rc != HS_OK) return rc;
  }

  /* ---- search: small parcels, boundary copies, binning, local nearest neighbour */
  int *isma = malloc((size_t)(n ? n : 1) * sizeof(int));
  if (!isma) return HS_ERR_NOMEM;
  int nsma = 0;
  for (int i = 0; i < n; i++)
    if (s->p[i].a[VOL] < vmin) isma[nsma++] = i;
  info->nsmall = nsma;
  long gsmall = nsma;
  MPI_Allreduce(MPI_IN_PLACE, &gsmall, 1, MPI_LONG, MPI_SUM, comm);
  if (gsmall == 0) {
    free(isma);
    info->total = MPI_Wtime() - t0;
    return HS_OK;
  }
  dbuf sendl[9];
  memset(sendl, 0, sizeof sendl);
  const int hi[2] = {par->lo[0] + par->nloc[0], par->lo[1] + par->nloc[1]};
  for (int m = 0; m < nsma && !err; m++) {
    const double *p = s->p[isma[m]].a;
    int g[2], sd[2];
    for (int a = 0; a < 2; a++) {
      g[a] = (int)lround((p[PX + a] - b->origin[a]) / b->dx[a]);
      sd[a] = g[a] == par->lo[a] ? -1 : (g[a] == hi[a] ? 1 : 0);
    }
    const int cand[3][2] = {{sd[0], 0}, {0, sd[1]}, {sd[0], sd[1]}};
    for (int k = 0; k < 3; k++) {
      int dx = cand[k][0], dy = cand[k][1];
      if (!dx && !dy) continue;
      if (k == 2 && (!dx || !dy)) continue;
      int d = (dy + 1) * 3 + dx + 1;
      if (dir_skipped(par, d)) continue;
      double x = p[PX], y = p[PY];
      if (dx == -1 && par->coord[0] == 0) x += L[0];
      if (dx == 1 && par->coord[0] == par->procs[0] - 1) x -= L[0];
      if (dy == -1 && par->coord[1] == 0) y += L[1];
      if (dy == 1 && par->coord[1] == par->procs[1] - 1) y -= L[1];
      double rec[5] = {x, y, p[PZ], (double)isma[m], (double)m};
      if (dbuf_push(&sendl[d], rec, 5)) err = 1;
    }
  }
  if (fail(comm, err, "out of memory (boundary copies)")) return HS_ERR_NOMEM;

  /* Copies to the neighbours: the tag is the direction as the receiver sees me. */
  MPI_Request sreq[9];
  int nsreq = 0;
  for (int d = 0; d < 9; d++) {
    if (dir_skipped(par, d)) continue;
    MPI_Isend(sendl[d].v, sendl[d].n, MPI_DOUBLE, par->nbr[d], TAG_SMALL + (8 - d), comm,
              &sreq[nsreq++]);
  }
  dbuf recvl[9];
  memset(recvl, 0, sizeof recvl);
  int nr = 0, rstart[10] = {0};
  for (int d = 0; d < 9; d++) {
    rstart[d] = nr;
    if (dir_skipped(par, d)) continue;
    MPI_Status st;
    int cnt = 0;
    MPI_Probe(par->nbr[d], TAG_SMALL + d, comm, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    recvl[d].v = malloc((size_t)(cnt ? cnt : 1) * sizeof(double));
    if (!recvl[d].v) err = 1;
    recvl[d].n = cnt;
    MPI_Recv(recvl[d].v, cnt, MPI_DOUBLE, par->nbr[d], TAG_SMALL + d, comm, MPI_STATUS_IGNORE);
    nr += cnt / 5;
  }
  rstart[9] = nr;
  MPI_Waitall(nsreq, sreq, MPI_STATUSES_IGNORE);
  if (fail(comm, err, "out of memory (received copies)")) return HS_ERR_NOMEM;

  /* Candidates: local parcels, received small parcels, periodic images (self-neighbours). */
  cands c = {0};
  int *rrank = malloc((size_t)(nr ? nr : 1) * sizeof(int)), *ridx = malloc((size_t)(nr ? nr : 1) * sizeof(int));
  if (!rrank || !ridx) err = 1;
  for (int i = 0; i < n && !err; i++)
    if (cand_push(&c, s->p[i].a[PX], s->p[i].a[PY], s->p[i].a[PZ], i)) err = 1;
  for (int d = 0; d < 9 && !err; d++)
    for (int k = 0; k < recvl[d].n / 5; k++) {
      const double *r = recvl[d].v + 5 * k;
      int j = rstart[d] + k;
      rrank[j] = par->nbr[d];
      ridx[j] = (int)r[3];
      if (cand_push(&c, r[0], r[1], r[2], n + j)) err = 1;
    }
  for (int a = 0; a < 2 && !err; a++) {
    if (par->procs[a] != 1) continue;
    int upto = c.n;
    for (int k = 0; k < upto && !err; k++) {
      double x = a == 0 ? c.x[k] : c.y[k];
      int cell = (int)floor((x - b->origin[a]) / b->dx[a]);
      for (int side = 0; side < 2; side++) {
        double sh = side == 0 ? (cell == 0 ? L[a] : 0.0) : (cell == b->n[a] - 1 ? -L[a] : 0.0);
        if (sh == 0.0) continue;
        if (cand_push(&c, a == 0 ? c.x[k] + sh : c.x[k], a == 1 ? c.y[k] + sh : c.y[k], c.z[k],
                      c.orig[k]))
          err = 1;
      }
    }
  }
  if (fail(comm, err, "out of memory (candidates)")) return HS_ERR_NOMEM;

  /* Bin the candidates in the haloed box: cells lo-1 .. hi in x and y, all of z. */
  const int hx = par->nloc[0] + 2, hy = par->nloc[1] + 2, hlo[2] = {par->lo[0] - 1, par->lo[1] - 1};
  const long ncell = (long)hx * hy * nz;
  int *kc = calloc((size_t)ncell + 1, sizeof(int)), *node = malloc((size_t)(c.n ? c.n : 1) * sizeof(int));
  int *loca = malloc((size_t)(c.n ? c.n : 1) * sizeof(int));
  if (!kc || !node || !loca) return HS_ERR_NOMEM;
  for (int k = 0; k < c.n; k++) {
    int ix = (int)floor((c.x[k] - b->origin[0]) / b->dx[0]) - hlo[0];
    int iy = (int)floor((c.y[k] - b->origin[1]) / b->dx[1]) - hlo[1];
    ix = ix < 0 ? 0 : (ix >= hx ? hx - 1 : ix);
    iy = iy < 0 ? 0 : (iy >= hy ? hy - 1 : iy);
    loca[k] = ix + hx * (iy + hy * pc_cell_of(b, 2, c.z[k]));
    kc[loca[k] + 1]++;
  }
  for (long q = 0; q < ncell; q++) kc[q + 1] += kc[q];
  {
    int *fill = malloc((size_t)ncell * sizeof(int));
    if (!fill) return HS_ERR_NOMEM;
    memcpy(fill, kc, (size_t)ncell * sizeof(int));
    for (int k = 0; k < c.n; k++) node[fill[loca[k]]++] = k;
    free(fill);
  }
  /* Positions in cell order, so each cell's candidates are read contiguously. */
  double *sx = malloc((size_t)(c.n ? c.n : 1) * 3 * sizeof(double));
  int *sorig = malloc((size_t)(c.n ? c.n : 1) * sizeof(int));
  if (!sx || !sorig) return HS_ERR_NOMEM;
  for (int k = 0; k < c.n; k++) {
    int j = node[k];
    sx[3 * k] = c.x[j];
    sx[3 * k + 1] = c.y[j];
    sx[3 * k + 2] = c.z[j];
    sorig[k] = c.orig[j];
  }
  /* Nearest neighbour of every small entry: local small parcels, then received ones. */
  const int nsearch = nsma + nr;
  int *best_k = malloc((size_t)(nsearch ? nsearch : 1) * sizeof(int));
  double *best_d = malloc((size_t)(nsearch ? nsearch : 1) * sizeof(double));
  if (!best_k || !best_d) return HS_ERR_NOMEM;
  const double dinit = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
  for (int e = 0; e < nsearch; e++) {
    int self = e < nsma ? isma[e] : n + (e - nsma);
    int ck = e < nsma ? isma[e] : n + (e - nsma); /* candidate index of the entry itself */
    double x = c.x[ck], y = c.y[ck], z = c.z[ck];
    int g0 = (int)lround((x - b->origin[0]) / b->dx[0]) - hlo[0];
    int g1 = (int)lround((y - b->origin[1]) / b->dx[1]) - hlo[1];
    int g2 = (int)lround((z - b->origin[2]) / b->dx[2]);
    int x0 = g0 - 1 < 0 ? 0 : g0 - 1, x1 = g0 > hx - 1 ? hx - 1 : g0;
    int y0 = g1 - 1 < 0 ? 0 : g1 - 1, y1 = g1 > hy - 1 ? hy - 1 : g1;
    int z0 = g2 - 1 < 0 ? 0 : g2 - 1, z1 = g2 > nz - 1 ? nz - 1 : g2;
    double best = dinit;
    int bk = -1;
    for (int iz = z0; iz <= z1; iz++)
      for (int iy = y0; iy <= y1; iy++)
        for (int ix = x0; ix <= x1; ix++) {
          long q = ix + (long)hx * (iy + (long)hy * iz);
          for (int k = kc[q]; k < kc[q + 1]; k++) {
            const double *pk = sx + 3 * k;
            double dz = pk[2] - z;
            if (dz * dz >= best || sorig[k] == self) continue;
            double dx = pk[0] - x, dy = pk[1] - y;
            double dd = dx * dx + dy * dy + dz * dz;
            if (dd < best) {
              best = dd;
              bk = sorig[k];
            }
          }
        }
    best_k[e] = bk;
    best_d[e] = best;
  }
  int *iclo = malloc((size_t)(nsma ? nsma : 1) * sizeof(int)), *rclo = malloc((size_t)(nsma ? nsma : 1) * sizeof(int));
  double *dclo = malloc((size_t)(nsma ? nsma : 1) * sizeof(double));
  if (!iclo || !rclo || !dclo) return HS_ERR_NOMEM;
  for (int m = 0; m < nsma; m++) {
    int bk = best_k[m];
    dclo[m] = best_d[m];
    if (bk < 0) {
      iclo[m] = -1;
      rclo[m] = -1;
    } else if (bk >= n) {
      iclo[m] = ridx[bk - n];
      rclo[m] = rrank[bk - n];
    } else {
      iclo[m] = bk;
      rclo[m] = me;
    }
  }
  double t1 = MPI_Wtime();
  info->search = t1 - t0;

  /* ---- graph: answers for the received parcels go back to their owners */
  nsreq = 0;
  dbuf ans[9];
  memset(ans, 0, sizeof ans);
  for (int d = 0; d < 9; d++) {
    if (dir_skipped(par, d)) continue;
    for (int k = 0; k < recvl[d].n / 5; k++) {
      int j = rstart[d] + k, bk = best_k[nsma + j];
      /* A remote parcel whose nearest is remote too is decided by the owners. */
      double rec[3] = {recvl[d].v[5 * k + 4], (bk < 0 || bk >= n) ? HUGE_VAL : best_d[nsma + j],
                       (bk < 0 || bk >= n) ? -1.0 : (double)bk};
      if (dbuf_push(&ans[d], rec, 3)) err = 1;
    }
    MPI_Isend(ans[d].v, ans[d].n, MPI_DOUBLE, par->nbr[d], TAG_ANSWER + (8 - d), comm,
              &sreq[nsreq++]);
  }
  for (int d = 0; d < 9; d++) {
    if (dir_skipped(par, d)) continue;
    int cnt = sendl[d].n / 5 * 3;
    double *a = malloc((size_t)(cnt ? cnt : 1) * sizeof(double));
    if (!a) {
      err = 1;
      break;
    }
    MPI_Recv(a, cnt, MPI_DOUBLE, par->nbr[d], TAG_ANSWER + d, comm, MPI_STATUS_IGNORE);
    for (int k = 0; k < cnt / 3; k++) {
      int m = (int)a[3 * k];
      if (a[3 * k + 1] < dclo[m]) {
        dclo[m] = a[3 * k + 1];
        iclo[m] = (int)a[3 * k + 2];
        rclo[m] = par->nbr[d];
      }
    }
    free(a);
  }
  MPI_Waitall(nsreq, sreq, MPI_STATUSES_IGNORE);
  for (int m = 0; m < nsma; m++)
    if (iclo[m] < 0) err = 2;
  if (fail(comm, err, err == 2 ? "a small parcel has no neighbour within its 2x2x2 cells"
                               : "out of memory (answers)"))
    return HS_ERR_INTERNAL;
  for (int m = 0; m < nsma; m++) info->nremote_links += rclo[m] != me;
  double t2 = MPI_Wtime();
  info->graph = t2 - t1;

  /* ---- pruning over the remote access layer */
  char *merge = malloc((size_t)(nsma ? nsma : 1));
  if (!merge) return HS_ERR_NOMEM;
  int rc = prune(par, ctx, nsma, isma, iclo, rclo, merge, info);
  if (rc != HS_OK) return rc;
  double t3 = MPI_Wtime();
  info->prune = t3 - t2;

  /* ---- merge: sources whose target is remote travel to the target's owner */
  dbuf xout[8];
  memset(xout, 0, sizeof xout);
  char *gone = calloc((size_t)(n ? n : 1), 1);
  int *tcnt = calloc((size_t)n + 2, sizeof(int));
  if (!gone || !tcnt) return HS_ERR_NOMEM;
  for (int m = 0; m < nsma; m++) {
    if (!merge[m]) continue;
    info->nmerged_links++;
    gone[isma[m]] = 1;
    if (rclo[m] == me) continue;
    int k = slot_of(par, rclo[m]);
    if (k < 0) {
      err = 3;
      continue;
    }
    double rec[PC_NATTR + 1];
    memcpy(rec, s->p[isma[m]].a, sizeof s->p[0].a);
    rec[PC_NATTR] = iclo[m];
    if (dbuf_push(&xout[k], rec, PC_NATTR + 1)) err = 1;
    info->sent_for_merge++;
  }
  if (fail(comm, err, "cannot send a parcel to its merge target's owner")) return HS_ERR_INTERNAL;
  double *xin = NULL;
  int nxin = 0;
  if (nbr_exchange(par, xout, &xin, &nxin)) return HS_ERR_MPI;
  const int nrecv = nxin / (PC_NATTR + 1);
  /* Members per local target: local sources first, then received ones. */
  int nmem = 0;
  for (int m = 0; m < nsma; m++)
    if (merge[m] && rclo[m] == me) {
      tcnt[iclo[m] + 1]++;
      nmem++;
    }
  for (int k = 0; k < nrecv; k++) {
    int t = (int)xin[k * (PC_NATTR + 1) + PC_NATTR];
    if (t < 0 || t >= n) {
      err = 4;
      continue;
    }
    tcnt[t + 1]++;
    nmem++;
  }
  if (fail(comm, err, "received a merge source with a bad target index")) return HS_ERR_INTERNAL;
  for (int i = 0; i < n; i++) tcnt[i + 1] += tcnt[i];
  pc_parcel *mem = malloc((size_t)(nmem ? nmem : 1) * sizeof *mem);
  const pc_parcel **ptr = malloc((size_t)(nmem ? nmem : 1) * sizeof *ptr);
  int *fill = malloc((size_t)(n ? n : 1) * sizeof(int));
  if (!mem || !ptr || !fill) return HS_ERR_NOMEM;
  memcpy(fill, tcnt, (size_t)(n ? n : 1) * sizeof(int));
  for (int m = 0; m < nsma; m++)
    if (merge[m] && rclo[m] == me) mem[fill[iclo[m]]++] = s->p[isma[m]];
  for (int k = 0; k < nrecv; k++) {
    const double *r = xin + k * (PC_NATTR + 1);
    int t = (int)r[PC_NATTR];
    memcpy(mem[fill[t]].a, r, sizeof mem[0].a);
    fill[t]++;
  }
  for (int i = 0; i < n; i++) {
    int nm = tcnt[i + 1] - tcnt[i];
    if (!nm) continue;
    if (gone[i]) info->chain_violations++;
    for (int k = 0; k < nm; k++) ptr[k] = &mem[tcnt[i] + k];
    pc_merge_group(b, &s->p[i], ptr, nm);
  }
  for (int m = 0; m < nsma; m++) {
    int i = isma[m];
    if (!gone[i] && tcnt[i + 1] == tcnt[i]) info->unmerged_small++;
  }
  /* Removal, then hand-over of parcels that left the subdomain. */
  dbuf hout[8];
  memset(hout, 0, sizeof hout);
  int w = 0;
  for (int i = 0; i < n; i++) {
    if (gone[i]) continue;
    int r = pc_owner(par, b, &s->p[i]);
    if (r == me) {
      s->p[w++] = s->p[i];
      continue;
    }
    int k = slot_of(par, r);
    if (k < 0 || dbuf_push(&hout[k], s->p[i].a, PC_NATTR)) err = 5;
    info->handed_over++;
  }
  s->n = w;
  if (fail(comm, err, "a merged parcel left the neighbourhood of its rank")) return HS_ERR_INTERNAL;
  double *hin = NULL;
  int nhin = 0;
  if (nbr_exchange(par, hout, &hin, &nhin)) return HS_ERR_MPI;
  if (pc_set_reserve(s, s->n + nhin / PC_NATTR)) return HS_ERR_NOMEM;
  for (int k = 0; k < nhin / PC_NATTR; k++) memcpy(s->p[s->n++].a, hin + k * PC_NATTR, sizeof s->p[0].a);
  double t4 = MPI_Wtime();
  info->merge = t4 - t3;
  info->total = t4 - t0;

  for (int d = 0; d < 9; d++) {
    free(sendl[d].v);
    free(recvl[d].v);
    free(ans[d].v);
  }
  for (int k = 0; k < 8; k++) {
    free(xout[k].v);
    free(hout[k].v);
  }
  free(xin);
  free(hin);
  free(isma);
  free(c.x);
  free(c.y);
  free(c.z);
  free(c.orig);
  free(rrank);
  free(ridx);
  free(kc);
  free(node);
  free(sx);
  free(sorig);
  free(loca);
  free(best_k);
  free(best_d);
  free(iclo);
  free(rclo);
  free(dclo);
  free(merge);
  free(gone);
  free(tcnt);
  free(mem);
  free(ptr);
  free(fill);
  return HS_OK;
}

/* ------------------------------------------------------------------ gather / scatter */

int pc_gather(pc_par *par, const pc_set *s, pc_set *out) {
  int n = s->n, *cnt = NULL, *dis = NULL, tot = 0;
  if (par->rank == 0) {
    cnt = malloc((size_t)par->size * sizeof(int));
    dis = malloc((size_t)par->size * sizeof(int));
    if (!cnt || !dis) return HS_ERR_NOMEM;
  }
  MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, par->comm);
  if (par->rank == 0) {
    for (int r = 0; r < par->size; r++) {
      dis[r] = tot * PC_NATTR;
      tot += cnt[r];
      cnt[r] *= PC_NATTR;
    }
    out->n = 0;
    if (pc_set_reserve(out, tot)) return HS_ERR_NOMEM;
    out->n = tot;
  }
  MPI_Gatherv(s->p, n * PC_NATTR, MPI_DOUBLE, par->rank == 0 ? out->p : NULL, cnt, dis,
              MPI_DOUBLE, 0, par->comm);
  free(cnt);
  free(dis);
  return HS_OK;
}

int pc_scatter(pc_par *par, const pc_box *b, const pc_set *all, pc_set *mine) {
  int *cnt = NULL, *dis = NULL, n = 0;
  pc_parcel *sorted = NULL;
  if (par->rank == 0) {
    cnt = calloc((size_t)par->size, sizeof(int));
    dis = calloc((size_t)par->size + 1, sizeof(int));
    int *own = malloc((size_t)(all->n ? all->n : 1) * sizeof(int));
    sorted = malloc((size_t)(all->n ? all->n : 1) * sizeof *sorted);
    if (!cnt || !dis || !own || !sorted) return HS_ERR_NOMEM;
    for (int i = 0; i < all->n; i++) cnt[own[i] = pc_owner(par, b, &all->p[i])]++;
    for (int r = 0; r < par->size; r++) dis[r + 1] = dis[r] + cnt[r];
    int *f = calloc((size_t)par->size, sizeof(int));
    if (!f) return HS_ERR_NOMEM;
    for (int i = 0; i < all->n; i++) sorted[dis[own[i]] + f[own[i]]++] = all->p[i];
    for (int r = 0; r < par->size; r++) {
      cnt[r] *= PC_NATTR;
      dis[r] *= PC_NATTR;
    }
    free(f);
    free(own);
  }
  MPI_Scatter(cnt, 1, MPI_INT, &n, 1, MPI_INT, 0, par->comm);
  mine->n = 0;
  if (pc_set_reserve(mine, n / PC_NATTR + 1)) return HS_ERR_NOMEM;
  MPI_Scatterv(sorted, cnt, dis, MPI_DOUBLE, mine->p, n, MPI_DOUBLE, 0, par->comm);
  mine->n = n / PC_NATTR;
  free(cnt);
  free(dis);
  free(sorted);
  return HS_OK;
}
