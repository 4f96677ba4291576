/* Remote access layer, two-sided back end ("p2p"): this rank keeps a mirror of every remote
 * element it declared with hs_ra_set_targets, with dirty flags; a sync sends the dirty
 * (array, index, value) triples to their owners, which apply them and send back the current
 * values of every mirrored element (EPIC's original scheme). Gets never communicate. */
#include "ra_internal.h"

#include <stdlib.h>
#include <string.h>

#define TAG_COUNT 11
#define TAG_LIST 12
#define TAG_PUSH 13
#define TAG_PULL 14

/* A target: a rank whose elements this rank mirrors. */
typedef struct {
  int rank;
  int n;          /* distinct remote indices, sorted */
  int *idx;
  int32_t *val;   /* narrays * n mirror values */
  uint8_t *dirty; /* narrays * n */
  int ndirty;
} p2p_target;

/* A source: a rank that mirrors some of this rank's elements, and which ones. */
typedef struct {
  int rank;
  int n;
  int *idx;
} p2p_source;

typedef struct {
  int32_t *mem;   /* narrays * capacity: this rank's elements */
  int *tslot;     /* rank -> index in targets, or -1 */
  int ntargets, nsources;
  p2p_target *targets;
  p2p_source *sources;
} p2p_t;

/* The per-target lists built by hs_ra_set_targets (kept until the next call). */
static void free_lists(p2p_t *t) {
  for (int k = 0; k < t->ntargets; k++) {
    free(t->targets[k].idx);
    free(t->targets[k].val);
    free(t->targets[k].dirty);
    t->tslot[t->targets[k].rank] = -1;
  }
  for (int s = 0; s < t->nsources; s++) free(t->sources[s].idx);
  free(t->targets);
  free(t->sources);
  t->targets = NULL;
  t->sources = NULL;
  t->ntargets = t->nsources = 0;
}

static int p2p_create(hs_ra ra) {
  p2p_t *t = calloc(1, sizeof *t);
  ra->impl = t;
  size_t bytes = (size_t)ra->narrays * (size_t)ra->capacity * sizeof(int32_t);
  if (t) {
    t->mem = calloc(1, bytes ? bytes : 1);
    t->tslot = malloc((size_t)ra->size * sizeof(int));
  }
  int rc = (t && t->mem && t->tslot) ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  for (int r = 0; rc == HS_OK && r < ra->size; r++) t->tslot[r] = -1;
  for (int a = 0; rc == HS_OK && a < ra->narrays; a++) ra->local[a] = t->mem + (size_t)a * ra->capacity;
  return hs__agree(ra->comm, rc);
}

static void p2p_destroy(hs_ra ra) {
  p2p_t *t = ra->impl;
  if (!t) return;
  if (t->tslot) free_lists(t);
  free(t->tslot);
  free(t->mem);
  free(t);
  ra->impl = NULL;
}

/* ------------------------------------------------------------------ put / get */

static int find_index(const p2p_target *tg, int index) {
  int lo = 0, hi = tg->n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) >> 1;
    if (tg->idx[mid] < index) lo = mid + 1;
    else if (tg->idx[mid] > index) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/* Position of (rank, index) in its target's mirror, or -1 with the error set. */
static int mirror_slot(hs_ra ra, const char *fn, int rank, int index, p2p_target **tg) {
  p2p_t *t = ra->impl;
  int s = t->tslot[rank];
  int k = s >= 0 ? find_index(&t->targets[s], index) : -1;
  if (k < 0) {
    hs__error(HS_ERR_ARG,
              "%s: element %d on rank %d was not declared with hs_ra_set_targets (the p2p "
              "back end keeps mirrors of declared elements only)", fn, index, rank);
    return -1;
  }
  *tg = &t->targets[s];
  return k;
}

static int p2p_put(hs_ra ra, int a, int rank, int index, int32_t v) {
  p2p_target *tg = NULL;
  int k = mirror_slot(ra, "hs_ra_put", rank, index, &tg);
  if (k < 0) return HS_ERR_ARG;
  size_t j = (size_t)a * tg->n + k;
  tg->val[j] = v;
  if (!tg->dirty[j]) {
    tg->dirty[j] = 1;
    tg->ndirty++;
  }
  return HS_OK;
}

static int p2p_get(hs_ra ra, int a, int rank, int index, int32_t *v) {
  p2p_target *tg = NULL;
  int k = mirror_slot(ra, "hs_ra_get", rank, index, &tg);
  if (k < 0) return HS_ERR_ARG;
  *v = tg->val[(size_t)a * tg->n + k];
  return HS_OK;
}

static int p2p_clear(hs_ra ra) {
  p2p_t *t = ra->impl;
  for (int k = 0; k < t->ntargets; k++) {
    p2p_target *tg = &t->targets[k];
    memset(tg->val, 0, (size_t)ra->narrays * tg->n * sizeof(int32_t));
    memset(tg->dirty, 0, (size_t)ra->narrays * tg->n);
    tg->ndirty = 0;
  }
  return HS_OK;
}

/* ------------------------------------------------------------------ set_targets */

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Bucket the declared elements by target rank (own rank dropped): on return list[start[r]..]
 * holds cnt[r] sorted distinct indices of rank r. Fails if a target is not a peer. */
static int bucket_targets(hs_ra ra, int n, const int *ranks, const int *indices, int *cnt,
                          int *start, int *list) {
  int P = ra->size, rc = HS_OK;
  for (int k = 0; k < n; k++)
    if (ranks[k] != ra->rank) cnt[ranks[k]]++;
  for (int r = 0; r < P; r++) start[r + 1] = start[r] + cnt[r];
  for (int r = 0; r < P; r++) cnt[r] = 0;
  for (int k = 0; k < n; k++)
    if (ranks[k] != ra->rank) list[start[ranks[k]] + cnt[ranks[k]]++] = indices[k];
  for (int r = 0; r < P; r++) {
    int *l = list + start[r], m = 0;
    qsort(l, (size_t)cnt[r], sizeof(int), cmp_int);
    for (int k = 0; k < cnt[r]; k++)
      if (m == 0 || l[m - 1] != l[k]) l[m++] = l[k];
    cnt[r] = m;
    if (m && ra->peers && rc == HS_OK) {
      int ok = 0;
      for (int j = 0; j < ra->npeers; j++) ok |= ra->peers[j] == r;
      if (!ok)
        rc = hs__error(HS_ERR_ARG,
                       "hs_ra_set_targets: rank %d targets rank %d, which is not in its peer "
                       "list", ra->rank, r);
    }
  }
  return rc;
}

/* Count exchange: cnt_to[r] -> cnt_from[r] for r in the peer set (or all ranks). */
static int exchange_counts(hs_ra ra, const int *cnt_to, int *cnt_from) {
  if (!ra->peers) {
    if (MPI_Alltoall(cnt_to, 1, MPI_INT, cnt_from, 1, MPI_INT, ra->comm) != MPI_SUCCESS)
      return hs__error(HS_ERR_MPI, "hs_ra_set_targets: MPI_Alltoall failed");
    return HS_OK;
  }
  MPI_Request *rq = malloc((size_t)2 * (ra->npeers + 1) * sizeof *rq);
  if (!rq) return hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
  int nr = 0;
  for (int k = 0; k < ra->npeers; k++)
    MPI_Irecv(&cnt_from[ra->peers[k]], 1, MPI_INT, ra->peers[k], TAG_COUNT, ra->comm, &rq[nr++]);
  for (int k = 0; k < ra->npeers; k++)
    MPI_Isend(&cnt_to[ra->peers[k]], 1, MPI_INT, ra->peers[k], TAG_COUNT, ra->comm, &rq[nr++]);
  int rc = MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
  free(rq);
  ra->stats.messages += (uint64_t)ra->npeers;
  ra->stats.bytes += (uint64_t)ra->npeers * sizeof(int);
  return rc == MPI_SUCCESS ? HS_OK : hs__error(HS_ERR_MPI, "hs_ra_set_targets: count exchange failed");
}

/* Allocate the targets (with their sorted indices and zeroed mirrors) and the sources. */
static int build_lists(hs_ra ra, const int *cnt, const int *cfrom, const int *start,
                       const int *list) {
  p2p_t *t = ra->impl;
  int P = ra->size, nt = 0, ns = 0;
  for (int r = 0; r < P; r++) {
    nt += cnt[r] > 0;
    ns += cfrom[r] > 0;
  }
  t->targets = calloc((size_t)(nt ? nt : 1), sizeof *t->targets);
  t->sources = calloc((size_t)(ns ? ns : 1), sizeof *t->sources);
  if (!t->targets || !t->sources) return hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
  for (int r = 0; r < P; r++) {
    if (cnt[r] > 0) {
      p2p_target *tg = &t->targets[t->ntargets];
      tg->rank = r;
      tg->n = cnt[r];
      tg->idx = malloc((size_t)tg->n * sizeof(int));
      tg->val = calloc((size_t)ra->narrays * tg->n, sizeof(int32_t));
      tg->dirty = calloc((size_t)ra->narrays * tg->n, 1);
      t->tslot[r] = t->ntargets++; /* counted before the check: free_lists frees it */
      if (!tg->idx || !tg->val || !tg->dirty)
        return hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
      memcpy(tg->idx, list + start[r], (size_t)tg->n * sizeof(int));
    }
    if (cfrom[r] > 0) {
      p2p_source *s = &t->sources[t->nsources++];
      s->rank = r;
      s->n = cfrom[r];
      s->idx = malloc((size_t)s->n * sizeof(int));
      if (!s->idx) return hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
    }
  }
  return HS_OK;
}

/* Each owner learns which of its elements every source mirrors. */
static int exchange_indices(hs_ra ra) {
  p2p_t *t = ra->impl;
  int nreq = t->ntargets + t->nsources;
  MPI_Request *rq = malloc((size_t)(nreq ? nreq : 1) * sizeof *rq);
  if (!rq) return hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
  int q = 0;
  for (int s = 0; s < t->nsources; s++)
    MPI_Irecv(t->sources[s].idx, t->sources[s].n, MPI_INT, t->sources[s].rank, TAG_LIST,
              ra->comm, &rq[q++]);
  for (int k = 0; k < t->ntargets; k++) {
    MPI_Isend(t->targets[k].idx, t->targets[k].n, MPI_INT, t->targets[k].rank, TAG_LIST,
              ra->comm, &rq[q++]);
    ra->stats.messages++;
    ra->stats.bytes += (uint64_t)t->targets[k].n * sizeof(int);
  }
  int rc = MPI_Waitall(q, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS
               ? HS_OK
               : hs__error(HS_ERR_MPI, "hs_ra_set_targets: index exchange failed");
  free(rq);
  return rc;
}

static int p2p_set_targets(hs_ra ra, int n, const int *ranks, const int *indices) {
  free_lists(ra->impl);
  int P = ra->size, rc = HS_OK;
  int *cnt = calloc((size_t)P, sizeof(int)), *cfrom = calloc((size_t)P, sizeof(int));
  int *start = calloc((size_t)P + 1, sizeof(int));
  int *list = malloc((size_t)(n ? n : 1) * sizeof(int));
  if (!cnt || !cfrom || !start || !list) rc = hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
  if (rc == HS_OK) rc = bucket_targets(ra, n, ranks, indices, cnt, start, list);
  rc = hs__agree(ra->comm, rc);
  if (rc == HS_OK) rc = hs__agree(ra->comm, exchange_counts(ra, cnt, cfrom));
  if (rc == HS_OK) rc = hs__agree(ra->comm, build_lists(ra, cnt, cfrom, start, list));
  if (rc == HS_OK) rc = hs__agree(ra->comm, exchange_indices(ra));
  if (rc != HS_OK) free_lists(ra->impl); /* no half-built mirrors */
  free(cnt);
  free(cfrom);
  free(start);
  free(list);
  return rc;
}

/* ------------------------------------------------------------------ sync */

/* Buffers and requests of one sync. Push: (array, index, value) triples of the dirty mirror
 * entries of the masked arrays, to the owners. Pull: the owners' values of every mirrored
 * element of the masked arrays, back to the mirrors. */
typedef struct {
  unsigned mask;
  int na;                          /* arrays in the mask */
  int32_t *pout, *pin, *lout, *lin; /* push out/in, pull out/in */
  MPI_Request *rin, *rout, *lrq, *lsq;
} p2p_round;

static int round_alloc(hs_ra ra, p2p_round *x, unsigned mask) {
  p2p_t *t = ra->impl;
  int nt = t->ntargets, ns = t->nsources;
  memset(x, 0, sizeof *x);
  x->mask = mask;
  for (int a = 0; a < ra->narrays; a++) x->na += (mask >> a) & 1u;
  size_t push_out = 0, push_in = 0, pull_out = 0, pull_in = 0;
  for (int k = 0; k < nt; k++) {
    push_out += (size_t)3 * ra->narrays * t->targets[k].n;
    pull_in += (size_t)x->na * t->targets[k].n;
  }
  for (int s = 0; s < ns; s++) {
    push_in += (size_t)3 * ra->narrays * t->sources[s].n;
    pull_out += (size_t)x->na * t->sources[s].n;
  }
  x->pout = malloc((push_out + push_in + pull_out + pull_in + 1) * sizeof(int32_t));
  x->rin = malloc((size_t)2 * (nt + ns) * sizeof(MPI_Request));
  if (!x->pout || !x->rin) return hs__error(HS_ERR_NOMEM, "hs_ra_sync: out of memory");
  x->pin = x->pout + push_out;
  x->lout = x->pin + push_in;
  x->lin = x->lout + pull_out;
  x->rout = x->rin + ns;
  x->lrq = x->rout + nt;
  x->lsq = x->lrq + nt;
  return HS_OK;
}

/* Post the receives of the sources' puts and send the dirty entries to every target. */
static void push_start(hs_ra ra, p2p_round *x) {
  p2p_t *t = ra->impl;
  size_t off = 0;
  for (int s = 0; s < t->nsources; s++) {
    MPI_Irecv(x->pin + off, 3 * ra->narrays * t->sources[s].n, MPI_INT32_T, t->sources[s].rank,
              TAG_PUSH, ra->comm, &x->rin[s]);
    off += (size_t)3 * ra->narrays * t->sources[s].n;
  }
  off = 0;
  for (int k = 0; k < t->ntargets; k++) {
    p2p_target *tg = &t->targets[k];
    int32_t *p = x->pout + off;
    int m = 0;
    for (int a = 0; a < ra->narrays; a++) {
      if (!((x->mask >> a) & 1u)) continue;
      uint8_t *d = tg->dirty + (size_t)a * tg->n;
      int32_t *v = tg->val + (size_t)a * tg->n;
      for (int i = 0; i < tg->n; i++)
        if (d[i]) {
          p[3 * m] = a;
          p[3 * m + 1] = tg->idx[i];
          p[3 * m + 2] = v[i];
          m++;
          d[i] = 0;
          tg->ndirty--;
        }
    }
    MPI_Isend(p, 3 * m, MPI_INT32_T, tg->rank, TAG_PUSH, ra->comm, &x->rout[k]);
    ra->stats.messages++;
    ra->stats.bytes += (uint64_t)3 * m * sizeof(int32_t);
    off += (size_t)3 * ra->narrays * tg->n;
  }
}

/* Apply the sources' puts to this rank's elements as they arrive. */
static int push_apply(hs_ra ra, p2p_round *x) {
  p2p_t *t = ra->impl;
  for (int done = 0; done < t->nsources; done++) {
    int s, cnt = 0;
    MPI_Status st;
    if (MPI_Waitany(t->nsources, x->rin, &s, &st) != MPI_SUCCESS)
      return hs__error(HS_ERR_MPI, "hs_ra_sync: receiving puts failed");
    MPI_Get_count(&st, MPI_INT32_T, &cnt);
    size_t o = 0;
    for (int j = 0; j < s; j++) o += (size_t)3 * ra->narrays * t->sources[j].n;
    const int32_t *p = x->pin + o;
    for (int m = 0; m < cnt / 3; m++) {
      int a = p[3 * m], i = p[3 * m + 1];
      if (a >= 0 && a < ra->narrays && i >= 0 && i < ra->capacity) ra->local[a][i] = p[3 * m + 2];
    }
  }
  return HS_OK;
}

/* Send every source the current values of the elements it mirrors; refresh the mirrors from
 * the targets' answers. */
static int pull(hs_ra ra, p2p_round *x) {
  p2p_t *t = ra->impl;
  size_t off = 0;
  for (int k = 0; k < t->ntargets; k++) {
    MPI_Irecv(x->lin + off, x->na * t->targets[k].n, MPI_INT32_T, t->targets[k].rank, TAG_PULL,
              ra->comm, &x->lrq[k]);
    off += (size_t)x->na * t->targets[k].n;
  }
  off = 0;
  for (int s = 0; s < t->nsources; s++) {
    const p2p_source *sr = &t->sources[s];
    int32_t *p = x->lout + off;
    int m = 0;
    for (int a = 0; a < ra->narrays; a++) {
      if (!((x->mask >> a) & 1u)) continue;
      for (int i = 0; i < sr->n; i++) p[m++] = ra->local[a][sr->idx[i]];
    }
    MPI_Isend(p, m, MPI_INT32_T, sr->rank, TAG_PULL, ra->comm, &x->lsq[s]);
    ra->stats.messages++;
    ra->stats.bytes += (uint64_t)m * sizeof(int32_t);
    off += (size_t)m;
  }
  int rc = HS_OK;
  if (MPI_Waitall(t->ntargets, x->lrq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    rc = hs__error(HS_ERR_MPI, "hs_ra_sync: receiving values failed");
  off = 0;
  for (int k = 0; rc == HS_OK && k < t->ntargets; k++) {
    p2p_target *tg = &t->targets[k];
    for (int a = 0; a < ra->narrays; a++) {
      if (!((x->mask >> a) & 1u)) continue;
      memcpy(tg->val + (size_t)a * tg->n, x->lin + off, (size_t)tg->n * sizeof(int32_t));
      off += (size_t)tg->n;
    }
  }
  if (MPI_Waitall(t->nsources, x->lsq, MPI_STATUSES_IGNORE) != MPI_SUCCESS && rc == HS_OK)
    rc = hs__error(HS_ERR_MPI, "hs_ra_sync: sending values failed");
  return rc;
}

static int p2p_sync(hs_ra ra, unsigned mask) {
  p2p_t *t = ra->impl;
  if (t->ntargets + t->nsources == 0) return HS_OK;
  p2p_round x;
  int rc = round_alloc(ra, &x, mask);
  if (rc == HS_OK) {
    push_start(ra, &x);
    rc = push_apply(ra, &x);
    if (rc == HS_OK) rc = pull(ra, &x);
    if (MPI_Waitall(t->ntargets, x.rout, MPI_STATUSES_IGNORE) != MPI_SUCCESS && rc == HS_OK)
      rc = hs__error(HS_ERR_MPI, "hs_ra_sync: sending puts failed");
  }
  free(x.pout);
  free(x.rin);
  return rc;
}

/* p2p has no other way to deliver puts than a sync of the mask. */
static int p2p_complete(hs_ra ra, unsigned mask) { return p2p_sync(ra, mask); }

HS_DEFINE_RA_OPS(hs__ra_p2p_ops, p2p, .set_targets = p2p_set_targets, .clear = p2p_clear);
