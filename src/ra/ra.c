/* Remote access layer: argument checking, statistics and the p2p back end (mirrors of remote
 * elements with dirty flags, exchanged with the owners at sync). */
#include "ra_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_COUNT 11
#define TAG_LIST 12
#define TAG_PUSH 13
#define TAG_PULL 14

void hs_ra_desc_init(hs_ra_desc *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->backend = HS_RA_P2P;
  d->rma_sync = HS_RA_RMA_PER_OP;
  d->narrays = 1;
}

int hs_ra_backend_parse(const char *name, hs_ra_backend *b, hs_ra_rma_sync *m) {
  if (!name || !b || !m) return hs__error(HS_ERR_ARG, "hs_ra_backend_parse: NULL argument");
  *m = HS_RA_RMA_PER_OP;
  if (!strcmp(name, "p2p")) *b = HS_RA_P2P;
  else if (!strcmp(name, "rma")) *b = HS_RA_RMA;
  else if (!strcmp(name, "rma-epoch")) { *b = HS_RA_RMA; *m = HS_RA_RMA_EPOCH; }
  else if (!strcmp(name, "shmem")) *b = HS_RA_SHMEM;
  else
    return hs__error(HS_ERR_ARG,
                     "hs_ra_backend_parse: back end '%s' is unknown (known: p2p, rma, "
                     "rma-epoch, shmem)", name);
  return HS_OK;
}

const char *hs_ra_backend_name(hs_ra_backend b, hs_ra_rma_sync m) {
  switch (b) {
  case HS_RA_P2P: return "p2p";
  case HS_RA_RMA: return m == HS_RA_RMA_EPOCH ? "rma-epoch" : "rma";
  case HS_RA_SHMEM: return "shmem";
  default: return "unknown";
  }
}

int hs_ra_backend_available(const char *name, char *why, size_t len) {
  hs_ra_backend b;
  hs_ra_rma_sync m;
  int rc = hs_ra_backend_parse(name, &b, &m);
  if (rc != HS_OK) {
    if (why && len) snprintf(why, len, "%s", hs_error_message());
    return rc;
  }
  if (b == HS_RA_SHMEM && !hs__ra_shmem_built()) {
    if (why && len) snprintf(why, len, "this haloswap was built without OpenSHMEM");
    return HS_ERR_UNAVAILABLE;
  }
  if (why && len) why[0] = 0;
  return HS_OK;
}

int hs_ra_finalize(void) {
  if (hs__ra_shmem_finalize()) return HS_OK;
  return MPI_Finalize() == MPI_SUCCESS ? HS_OK : hs__error(HS_ERR_MPI, "hs_ra_finalize: MPI_Finalize failed");
}

/* ------------------------------------------------------------------ common API */

static int check_ra(hs_ra ra, const char *fn) {
  if (!ra) return hs__error(HS_ERR_ARG, "%s: ra is NULL", fn);
  return HS_OK;
}

int hs_ra_create(MPI_Comm comm, const hs_ra_desc *desc, hs_ra *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_ra_create: out is NULL");
  *out = NULL;
  if (comm == MPI_COMM_NULL) return hs__error(HS_ERR_ARG, "hs_ra_create: comm is MPI_COMM_NULL");
  int rc = HS_OK;
  if (!desc)
    rc = hs__error(HS_ERR_ARG, "hs_ra_create: desc is NULL");
  else if (desc->narrays < 1 || desc->narrays > HS_RA_MAX_ARRAYS)
    rc = hs__error(HS_ERR_ARG, "hs_ra_create: narrays = %d, must be 1..%d", desc->narrays,
                   HS_RA_MAX_ARRAYS);
  else if (desc->capacity < 0)
    rc = hs__error(HS_ERR_ARG, "hs_ra_create: capacity = %d, must be >= 0", desc->capacity);
  else if ((int)desc->backend < 0 || desc->backend > HS_RA_SHMEM)
    rc = hs__error(HS_ERR_ARG, "hs_ra_create: backend = %d, must be 0..2", (int)desc->backend);
  else if (desc->rma_sync != HS_RA_RMA_PER_OP && desc->rma_sync != HS_RA_RMA_EPOCH)
    rc = hs__error(HS_ERR_ARG, "hs_ra_create: rma_sync = %d, must be 0 or 1", (int)desc->rma_sync);
  else if (desc->npeers < 0 || (desc->npeers > 0 && !desc->peers))
    rc = hs__error(HS_ERR_ARG, "hs_ra_create: npeers = %d with peers %s", desc->npeers,
                   desc->peers ? "given" : "NULL");
  else if (desc->backend == HS_RA_SHMEM && !hs__ra_shmem_built())
    rc = hs__error(HS_ERR_UNAVAILABLE,
                   "hs_ra_create: back end 'shmem' is unavailable: this haloswap was built "
                   "without OpenSHMEM");
  rc = hs__agree(comm, rc);
  if (rc != HS_OK) return rc;
  /* Every rank must choose the same back end and array count. */
  int v[3] = {(int)desc->backend, (int)desc->rma_sync, desc->narrays}, lo[3], hi[3];
  MPI_Allreduce(v, lo, 3, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(v, hi, 3, MPI_INT, MPI_MAX, comm);
  if (lo[0] != hi[0] || lo[1] != hi[1] || lo[2] != hi[2])
    return hs__error(HS_ERR_MISMATCH,
                     "hs_ra_create: ranks disagree on backend/rma_sync/narrays (%d..%d, %d..%d, "
                     "%d..%d)", lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);

  hs_ra ra = calloc(1, sizeof *ra);
  rc = ra ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  rc = hs__agree(comm, rc);
  if (rc != HS_OK) {
    free(ra);
    return rc;
  }
  if (MPI_Comm_dup(comm, &ra->comm) != MPI_SUCCESS) {
    free(ra);
    return hs__error(HS_ERR_MPI, "hs_ra_create: MPI_Comm_dup failed");
  }
  MPI_Comm_set_errhandler(ra->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(ra->comm, &ra->rank);
  MPI_Comm_size(ra->comm, &ra->size);
  ra->backend = desc->backend;
  ra->mode = desc->backend == HS_RA_RMA ? desc->rma_sync : HS_RA_RMA_PER_OP;
  ra->narrays = desc->narrays;
  ra->capacity = desc->capacity;
  for (int a = 0; a < HS_RA_MAX_ARRAYS; a++) ra->win[a] = MPI_WIN_NULL;
  ra->caps = malloc((size_t)ra->size * sizeof(int));
  ra->tslot = malloc((size_t)ra->size * sizeof(int));
  rc = (ra->caps && ra->tslot) ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  if (rc == HS_OK && desc->npeers > 0) {
    ra->peers = malloc((size_t)desc->npeers * sizeof(int));
    if (!ra->peers) rc = hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
    for (int k = 0; rc == HS_OK && k < desc->npeers; k++) {
      int r = desc->peers[k], dup = 0;
      if (r < 0 || r >= ra->size) {
        rc = hs__error(HS_ERR_ARG, "hs_ra_create: peers[%d] = %d, must be in [0, %d)", k, r,
                       ra->size);
        break;
      }
      for (int j = 0; j < ra->npeers; j++) dup |= ra->peers[j] == r;
      if (!dup && r != ra->rank) ra->peers[ra->npeers++] = r;
    }
  }
  rc = hs__agree(ra->comm, rc);
  if (rc == HS_OK) {
    MPI_Allgather(&ra->capacity, 1, MPI_INT, ra->caps, 1, MPI_INT, ra->comm);
    for (int r = 0; r < ra->size; r++) ra->tslot[r] = -1;
    ra->ops = ra->backend == HS_RA_P2P ? &hs__ra_p2p_ops
              : ra->backend == HS_RA_RMA ? &hs__ra_rma_ops : &hs__ra_shmem_ops;
    rc = ra->ops->create(ra); /* collective; agrees internally */
  }
  if (rc != HS_OK) {
    hs_ra tmp = ra;
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", hs_error_message());
    hs_ra_free(&tmp);
    hs__error(rc, "%s", keep);
    return rc;
  }
  *out = ra;
  return HS_OK;
}

static void p2p_free_lists(hs_ra ra) {
  for (int t = 0; t < ra->ntargets; t++) {
    free(ra->targets[t].idx);
    free(ra->targets[t].val);
    free(ra->targets[t].dirty);
    ra->tslot[ra->targets[t].rank] = -1;
  }
  for (int s = 0; s < ra->nsources; s++) free(ra->sources[s].idx);
  free(ra->targets);
  free(ra->sources);
  ra->targets = NULL;
  ra->sources = NULL;
  ra->ntargets = ra->nsources = 0;
}

int hs_ra_free(hs_ra *rap) {
  if (!rap || !*rap) return HS_OK;
  hs_ra ra = *rap;
  if (ra->ops) ra->ops->destroy(ra);
  if (ra->tslot) p2p_free_lists(ra);
  free(ra->caps);
  free(ra->tslot);
  free(ra->peers);
  free(ra->stage);
  if (ra->comm != MPI_COMM_NULL) MPI_Comm_free(&ra->comm);
  free(ra);
  *rap = NULL;
  return HS_OK;
}

int32_t *hs_ra_local(hs_ra ra, int array) {
  if (!ra || array < 0 || array >= ra->narrays) {
    hs__error(HS_ERR_ARG, "hs_ra_local: array = %d, must be in [0, %d)", array,
              ra ? ra->narrays : 0);
    return NULL;
  }
  return ra->local[array];
}

int hs_ra_capacity(hs_ra ra, int rank) {
  if (!ra || rank < 0 || rank >= ra->size) return -1;
  return ra->caps[rank];
}

MPI_Comm hs_ra_comm(hs_ra ra) { return ra ? ra->comm : MPI_COMM_NULL; }
const char *hs_ra_name(hs_ra ra) { return ra ? hs_ra_backend_name(ra->backend, ra->mode) : "none"; }

static int check_elem(hs_ra ra, const char *fn, int array, int rank, int index) {
  if (array < 0 || array >= ra->narrays)
    return hs__error(HS_ERR_ARG, "%s: array = %d, must be in [0, %d)", fn, array, ra->narrays);
  if (rank < 0 || rank >= ra->size)
    return hs__error(HS_ERR_ARG, "%s: rank = %d, must be in [0, %d)", fn, rank, ra->size);
  if (index < 0 || index >= ra->caps[rank])
    return hs__error(HS_ERR_ARG, "%s: index = %d on rank %d, must be in [0, %d) (its capacity)",
                     fn, index, rank, ra->caps[rank]);
  return HS_OK;
}

int hs_ra_put(hs_ra ra, int array, int rank, int index, int32_t value) {
  int rc = check_ra(ra, "hs_ra_put");
  if (rc == HS_OK) rc = check_elem(ra, "hs_ra_put", array, rank, index);
  if (rc != HS_OK) return rc;
  if (rank == ra->rank) {
    ra->local[array][index] = value;
    return HS_OK;
  }
  double t0 = MPI_Wtime();
  rc = ra->ops->put(ra, array, rank, index, value);
  ra->stats.seconds_put += MPI_Wtime() - t0;
  ra->stats.puts++;
  return rc;
}

int hs_ra_get(hs_ra ra, int array, int rank, int index, int32_t *value) {
  int rc = check_ra(ra, "hs_ra_get");
  if (rc == HS_OK && !value) rc = hs__error(HS_ERR_ARG, "hs_ra_get: value is NULL");
  if (rc == HS_OK) rc = check_elem(ra, "hs_ra_get", array, rank, index);
  if (rc != HS_OK) return rc;
  if (rank == ra->rank) {
    *value = ra->local[array][index];
    return HS_OK;
  }
  double t0 = MPI_Wtime();
  rc = ra->ops->get(ra, array, rank, index, value);
  ra->stats.seconds_get += MPI_Wtime() - t0;
  ra->stats.gets++;
  return rc;
}

int hs_ra_sync_arrays(hs_ra ra, unsigned mask) {
  int rc = check_ra(ra, "hs_ra_sync");
  if (rc != HS_OK) return rc;
  double t0 = MPI_Wtime();
  rc = ra->ops->sync(ra, mask & ((1u << ra->narrays) - 1u));
  ra->stats.seconds_sync += MPI_Wtime() - t0;
  ra->stats.syncs++;
  return rc;
}

int hs_ra_sync(hs_ra ra) { return hs_ra_sync_arrays(ra, ~0u); }

int hs_ra_complete(hs_ra ra, unsigned mask) {
  int rc = check_ra(ra, "hs_ra_complete");
  if (rc != HS_OK) return rc;
  double t0 = MPI_Wtime();
  rc = ra->ops->complete(ra, mask & ((1u << ra->narrays) - 1u));
  ra->stats.seconds_sync += MPI_Wtime() - t0;
  ra->stats.completes++;
  return rc;
}

int hs_ra_epoch_begin(hs_ra ra) {
  int rc = check_ra(ra, "hs_ra_epoch_begin");
  if (rc != HS_OK) return rc;
  if (ra->in_epoch) return hs__error(HS_ERR_STATE, "hs_ra_epoch_begin: an epoch is already open");
  rc = ra->ops->epoch_begin ? ra->ops->epoch_begin(ra) : HS_OK;
  if (rc == HS_OK) ra->in_epoch = 1;
  return rc;
}

int hs_ra_epoch_end(hs_ra ra) {
  int rc = check_ra(ra, "hs_ra_epoch_end");
  if (rc != HS_OK) return rc;
  if (!ra->in_epoch) return hs__error(HS_ERR_STATE, "hs_ra_epoch_end: no epoch is open");
  rc = ra->ops->epoch_end ? ra->ops->epoch_end(ra) : HS_OK;
  ra->in_epoch = 0;
  return rc;
}

int hs_ra_set_targets(hs_ra ra, int n, const int *ranks, const int *indices) {
  int rc = check_ra(ra, "hs_ra_set_targets");
  if (rc != HS_OK) return rc;
  if (n < 0 || (n > 0 && (!ranks || !indices)))
    rc = hs__error(HS_ERR_ARG, "hs_ra_set_targets: n = %d with ranks/indices %s", n,
                   (ranks && indices) ? "given" : "NULL");
  for (int k = 0; rc == HS_OK && k < n; k++) {
    if (ranks[k] < 0 || ranks[k] >= ra->size)
      rc = hs__error(HS_ERR_ARG, "hs_ra_set_targets: ranks[%d] = %d, must be in [0, %d)", k,
                     ranks[k], ra->size);
    else if (indices[k] < 0 || indices[k] >= ra->caps[ranks[k]])
      rc = hs__error(HS_ERR_ARG,
                     "hs_ra_set_targets: indices[%d] = %d on rank %d, must be in [0, %d)", k,
                     indices[k], ranks[k], ra->caps[ranks[k]]);
  }
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  return ra->ops->set_targets ? ra->ops->set_targets(ra, n, ranks, indices) : HS_OK;
}

int hs_ra_clear(hs_ra ra) {
  int rc = check_ra(ra, "hs_ra_clear");
  if (rc != HS_OK) return rc;
  for (int a = 0; a < ra->narrays; a++)
    if (ra->capacity) memset(ra->local[a], 0, (size_t)ra->capacity * sizeof(int32_t));
  for (int t = 0; t < ra->ntargets; t++) {
    hs__ra_target *tg = &ra->targets[t];
    memset(tg->val, 0, (size_t)ra->narrays * tg->n * sizeof(int32_t));
    memset(tg->dirty, 0, (size_t)ra->narrays * tg->n);
    tg->ndirty = 0;
  }
  /* Nobody may put before every owner has cleared. */
  rc = ra->ops->clear ? ra->ops->clear(ra) : HS_OK;
  if (rc != HS_OK) return rc;
  if (MPI_Barrier(ra->comm) != MPI_SUCCESS)
    return hs__error(HS_ERR_MPI, "hs_ra_clear: MPI_Barrier failed");
  return HS_OK;
}

int hs_ra_get_stats(hs_ra ra, hs_ra_stats *st) {
  int rc = check_ra(ra, "hs_ra_get_stats");
  if (rc != HS_OK) return rc;
  if (!st) return hs__error(HS_ERR_ARG, "hs_ra_get_stats: st is NULL");
  *st = ra->stats;
  return HS_OK;
}

int hs_ra_reset_stats(hs_ra ra) {
  int rc = check_ra(ra, "hs_ra_reset_stats");
  if (rc != HS_OK) return rc;
  memset(&ra->stats, 0, sizeof ra->stats);
  return HS_OK;
}

/* ------------------------------------------------------------------ p2p back end */

static int p2p_create(hs_ra ra) {
  size_t bytes = (size_t)ra->narrays * (size_t)ra->capacity * sizeof(int32_t);
  ra->local_mem = calloc(1, bytes ? bytes : 1);
  int rc = ra->local_mem ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  for (int a = 0; rc == HS_OK && a < ra->narrays; a++)
    ra->local[a] = ra->local_mem + (size_t)a * ra->capacity;
  return hs__agree(ra->comm, rc);
}

static void p2p_destroy(hs_ra ra) {
  free(ra->local_mem);
  ra->local_mem = NULL;
}

static int find_index(const hs__ra_target *t, int index) {
  int lo = 0, hi = t->n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) >> 1;
    if (t->idx[mid] < index) lo = mid + 1;
    else if (t->idx[mid] > index) hi = mid - 1;
    else return mid;
  }
  return -1;
}

static int p2p_slot(hs_ra ra, const char *fn, int rank, int index, hs__ra_target **tg) {
  int s = ra->tslot[rank];
  int k = s >= 0 ? find_index(&ra->targets[s], index) : -1;
  if (k < 0) {
    hs__error(HS_ERR_ARG,
              "%s: element %d on rank %d was not declared with hs_ra_set_targets (the p2p "
              "back end keeps mirrors of declared elements only)", fn, index, rank);
    return -1;
  }
  *tg = &ra->targets[s];
  return k;
}

static int p2p_put(hs_ra ra, int a, int rank, int index, int32_t v) {
  hs__ra_target *tg = NULL;
  int k = p2p_slot(ra, "hs_ra_put", rank, index, &tg);
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
  hs__ra_target *tg = NULL;
  int k = p2p_slot(ra, "hs_ra_get", rank, index, &tg);
  if (k < 0) return HS_ERR_ARG;
  *v = tg->val[(size_t)a * tg->n + k];
  return HS_OK;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
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

static int p2p_set_targets(hs_ra ra, int n, const int *ranks, const int *indices) {
  p2p_free_lists(ra);
  int P = ra->size, rc = HS_OK;
  int *cnt = calloc((size_t)P, sizeof(int)), *cfrom = calloc((size_t)P, sizeof(int));
  int *start = calloc((size_t)P + 1, sizeof(int));
  int *list = malloc((size_t)(n ? n : 1) * sizeof(int));
  if (!cnt || !cfrom || !start || !list) rc = hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
  if (rc == HS_OK) {
    for (int k = 0; k < n; k++)
      if (ranks[k] != ra->rank) cnt[ranks[k]]++;
    for (int r = 0; r < P; r++) start[r + 1] = start[r] + cnt[r];
    for (int r = 0; r < P; r++) cnt[r] = 0;
    for (int k = 0; k < n; k++)
      if (ranks[k] != ra->rank) list[start[ranks[k]] + cnt[ranks[k]]++] = indices[k];
    /* Sorted, distinct indices per target rank. */
    for (int r = 0; r < P; r++) {
      int *l = list + start[r], m = 0;
      qsort(l, (size_t)cnt[r], sizeof(int), cmp_int);
      for (int k = 0; k < cnt[r]; k++)
        if (m == 0 || l[m - 1] != l[k]) l[m++] = l[k];
      cnt[r] = m;
      if (m && ra->peers) {
        int ok = 0;
        for (int j = 0; j < ra->npeers; j++) ok |= ra->peers[j] == r;
        if (!ok && rc == HS_OK)
          rc = hs__error(HS_ERR_ARG,
                         "hs_ra_set_targets: rank %d targets rank %d, which is not in its peer "
                         "list", ra->rank, r);
      }
    }
  }
  rc = hs__agree(ra->comm, rc);
  if (rc == HS_OK) rc = hs__agree(ra->comm, exchange_counts(ra, cnt, cfrom));
  if (rc == HS_OK) {
    int nt = 0, ns = 0;
    for (int r = 0; r < P; r++) {
      nt += cnt[r] > 0;
      ns += cfrom[r] > 0;
    }
    ra->targets = calloc((size_t)(nt ? nt : 1), sizeof *ra->targets);
    ra->sources = calloc((size_t)(ns ? ns : 1), sizeof *ra->sources);
    if (!ra->targets || !ra->sources) rc = hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
    for (int r = 0; rc == HS_OK && r < P; r++) {
      if (cnt[r] > 0) {
        hs__ra_target *t = &ra->targets[ra->ntargets];
        t->rank = r;
        t->n = cnt[r];
        t->idx = malloc((size_t)t->n * sizeof(int));
        t->val = calloc((size_t)ra->narrays * t->n, sizeof(int32_t));
        t->dirty = calloc((size_t)ra->narrays * t->n, 1);
        if (!t->idx || !t->val || !t->dirty) {
          rc = hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
          break;
        }
        memcpy(t->idx, list + start[r], (size_t)t->n * sizeof(int));
        ra->tslot[r] = ra->ntargets++;
      }
      if (cfrom[r] > 0) {
        hs__ra_source *s = &ra->sources[ra->nsources++];
        s->rank = r;
        s->n = cfrom[r];
        s->idx = malloc((size_t)s->n * sizeof(int));
        if (!s->idx) rc = hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
      }
    }
  }
  rc = hs__agree(ra->comm, rc);
  if (rc == HS_OK) {
    /* Each owner learns which of its elements every source mirrors. */
    int nreq = ra->ntargets + ra->nsources;
    MPI_Request *rq = malloc((size_t)(nreq ? nreq : 1) * sizeof *rq);
    if (!rq) rc = hs__error(HS_ERR_NOMEM, "hs_ra_set_targets: out of memory");
    else {
      int q = 0;
      for (int s = 0; s < ra->nsources; s++)
        MPI_Irecv(ra->sources[s].idx, ra->sources[s].n, MPI_INT, ra->sources[s].rank, TAG_LIST,
                  ra->comm, &rq[q++]);
      for (int t = 0; t < ra->ntargets; t++) {
        MPI_Isend(ra->targets[t].idx, ra->targets[t].n, MPI_INT, ra->targets[t].rank, TAG_LIST,
                  ra->comm, &rq[q++]);
        ra->stats.messages++;
        ra->stats.bytes += (uint64_t)ra->targets[t].n * sizeof(int);
      }
      if (MPI_Waitall(q, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        rc = hs__error(HS_ERR_MPI, "hs_ra_set_targets: index exchange failed");
      free(rq);
    }
    rc = hs__agree(ra->comm, rc);
  }
  free(cnt);
  free(cfrom);
  free(start);
  free(list);
  return rc;
}

static int p2p_sync(hs_ra ra, unsigned mask) {
  int na = 0;
  for (int a = 0; a < ra->narrays; a++) na += (mask >> a) & 1u;
  int nt = ra->ntargets, ns = ra->nsources, rc = HS_OK;
  if (nt + ns == 0) return HS_OK;
  /* Push: (array, index, value) triples of the dirty mirror entries of the masked arrays.
   * Pull: the owner's values of every mirrored element of the masked arrays. */
  size_t push_out = 0, push_in = 0, pull_out = 0, pull_in = 0;
  for (int t = 0; t < nt; t++) {
    push_out += (size_t)3 * ra->narrays * ra->targets[t].n;
    pull_in += (size_t)na * ra->targets[t].n;
  }
  for (int s = 0; s < ns; s++) {
    push_in += (size_t)3 * ra->narrays * ra->sources[s].n;
    pull_out += (size_t)na * ra->sources[s].n;
  }
  int32_t *buf = malloc((push_out + push_in + pull_out + pull_in + 1) * sizeof(int32_t));
  MPI_Request *rq = malloc((size_t)2 * (nt + ns) * sizeof *rq);
  if (!buf || !rq) {
    free(buf);
    free(rq);
    return hs__error(HS_ERR_NOMEM, "hs_ra_sync: out of memory");
  }
  int32_t *pout = buf, *pin = pout + push_out, *lout = pin + push_in, *lin = lout + pull_out;
  MPI_Request *rin = rq, *rout = rq + ns, *lrq = rq + ns + nt;
  size_t off = 0;
  for (int s = 0; s < ns; s++) {
    MPI_Irecv(pin + off, 3 * ra->narrays * ra->sources[s].n, MPI_INT32_T, ra->sources[s].rank,
              TAG_PUSH, ra->comm, &rin[s]);
    off += (size_t)3 * ra->narrays * ra->sources[s].n;
  }
  off = 0;
  for (int t = 0; t < nt; t++) {
    hs__ra_target *tg = &ra->targets[t];
    int32_t *p = pout + off;
    int m = 0;
    for (int a = 0; a < ra->narrays; a++) {
      if (!((mask >> a) & 1u)) continue;
      uint8_t *d = tg->dirty + (size_t)a * tg->n;
      int32_t *v = tg->val + (size_t)a * tg->n;
      for (int k = 0; k < tg->n; k++)
        if (d[k]) {
          p[3 * m] = a;
          p[3 * m + 1] = tg->idx[k];
          p[3 * m + 2] = v[k];
          m++;
          d[k] = 0;
          tg->ndirty--;
        }
    }
    MPI_Isend(p, 3 * m, MPI_INT32_T, tg->rank, TAG_PUSH, ra->comm, &rout[t]);
    ra->stats.messages++;
    ra->stats.bytes += (uint64_t)3 * m * sizeof(int32_t);
    off += (size_t)3 * ra->narrays * tg->n;
  }
  /* Apply the sources' puts as they arrive. */
  for (int done = 0; done < ns; done++) {
    int s;
    MPI_Status st;
    if (MPI_Waitany(ns, rin, &s, &st) != MPI_SUCCESS) {
      rc = hs__error(HS_ERR_MPI, "hs_ra_sync: receiving puts failed");
      break;
    }
    int cnt = 0;
    MPI_Get_count(&st, MPI_INT32_T, &cnt);
    size_t o = 0;
    for (int j = 0; j < s; j++) o += (size_t)3 * ra->narrays * ra->sources[j].n;
    const int32_t *p = pin + o;
    for (int m = 0; m < cnt / 3; m++) {
      int a = p[3 * m], i = p[3 * m + 1];
      if (a >= 0 && a < ra->narrays && i >= 0 && i < ra->capacity) ra->local[a][i] = p[3 * m + 2];
    }
  }
  if (rc == HS_OK) {
    off = 0;
    for (int t = 0; t < nt; t++) {
      MPI_Irecv(lin + off, na * ra->targets[t].n, MPI_INT32_T, ra->targets[t].rank, TAG_PULL,
                ra->comm, &lrq[t]);
      off += (size_t)na * ra->targets[t].n;
    }
    MPI_Request *lsq = malloc((size_t)(ns ? ns : 1) * sizeof *lsq);
    if (!lsq) rc = hs__error(HS_ERR_NOMEM, "hs_ra_sync: out of memory");
    off = 0;
    for (int s = 0; rc == HS_OK && s < ns; s++) {
      const hs__ra_source *sr = &ra->sources[s];
      int32_t *p = lout + off;
      int m = 0;
      for (int a = 0; a < ra->narrays; a++) {
        if (!((mask >> a) & 1u)) continue;
        for (int k = 0; k < sr->n; k++) p[m++] = ra->local[a][sr->idx[k]];
      }
      MPI_Isend(p, m, MPI_INT32_T, sr->rank, TAG_PULL, ra->comm, &lsq[s]);
      ra->stats.messages++;
      ra->stats.bytes += (uint64_t)m * sizeof(int32_t);
      off += (size_t)m;
    }
    if (rc == HS_OK && MPI_Waitall(nt, lrq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      rc = hs__error(HS_ERR_MPI, "hs_ra_sync: receiving values failed");
    off = 0;
    for (int t = 0; rc == HS_OK && t < nt; t++) {
      hs__ra_target *tg = &ra->targets[t];
      const int32_t *p = lin + off;
      int m = 0;
      for (int a = 0; a < ra->narrays; a++) {
        if (!((mask >> a) & 1u)) continue;
        memcpy(tg->val + (size_t)a * tg->n, p + m, (size_t)tg->n * sizeof(int32_t));
        m += tg->n;
      }
      off += (size_t)m;
    }
    if (rc == HS_OK && MPI_Waitall(ns, lsq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      rc = hs__error(HS_ERR_MPI, "hs_ra_sync: sending values failed");
    free(lsq);
  }
  if (MPI_Waitall(nt, rout, MPI_STATUSES_IGNORE) != MPI_SUCCESS && rc == HS_OK)
    rc = hs__error(HS_ERR_MPI, "hs_ra_sync: sending puts failed");
  free(buf);
  free(rq);
  return rc;
}

static int p2p_complete(hs_ra ra, unsigned mask) { return p2p_sync(ra, mask); }

const hs__ra_backend_ops hs__ra_p2p_ops = {
    .create = p2p_create,
    .destroy = p2p_destroy,
    .put = p2p_put,
    .get = p2p_get,
    .sync = p2p_sync,
    .complete = p2p_complete,
    .set_targets = p2p_set_targets,
};
