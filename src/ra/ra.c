/* Remote access layer API: back-end table, argument checking, statistics, dispatch. The back
 * ends are ra_p2p.c, ra_rma.c ("rma" and "rma-epoch") and ra_shmem.c. */
#include "ra_internal.h"
#include "hs_shmem_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The single list of back ends: name, enum values, ops. */
static const struct {
  const char *name;
  hs_ra_backend backend;
  hs_ra_rma_sync mode;
  const hs__ra_ops *ops;
} backends[] = {
    {"p2p", HS_RA_P2P, HS_RA_RMA_PER_OP, &hs__ra_p2p_ops},
    {"rma", HS_RA_RMA, HS_RA_RMA_PER_OP, &hs__ra_rma_ops},
    {"rma-epoch", HS_RA_RMA, HS_RA_RMA_EPOCH, &hs__ra_rma_ops},
    {"shmem", HS_RA_SHMEM, HS_RA_RMA_PER_OP, &hs__ra_shmem_ops},
};
#define NBACKENDS ((int)(sizeof backends / sizeof backends[0]))

/* Index in backends[], or -1. The RMA mode matters for "rma" only. */
static int backend_index(hs_ra_backend b, hs_ra_rma_sync m) {
  for (int k = 0; k < NBACKENDS; k++)
    if (backends[k].backend == b && (b != HS_RA_RMA || backends[k].mode == m)) return k;
  return -1;
}

void hs_ra_desc_init(hs_ra_desc *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->backend = HS_RA_P2P;
  d->rma_sync = HS_RA_RMA_PER_OP;
  d->narrays = 1;
}

int hs_ra_backend_parse(const char *name, hs_ra_backend *b, hs_ra_rma_sync *m) {
  if (!name || !b || !m) return hs__error(HS_ERR_ARG, "hs_ra_backend_parse: NULL argument");
  for (int k = 0; k < NBACKENDS; k++)
    if (!strcmp(name, backends[k].name)) {
      *b = backends[k].backend;
      *m = backends[k].mode;
      return HS_OK;
    }
  return hs__error(HS_ERR_ARG,
                   "hs_ra_backend_parse: back end '%s' is unknown (known: p2p, rma, rma-epoch, "
                   "shmem)", name);
}

const char *hs_ra_backend_name(hs_ra_backend b, hs_ra_rma_sync m) {
  int k = backend_index(b, m);
  return k >= 0 ? backends[k].name : "unknown";
}

int hs_ra_backend_available(const char *name, char *why, size_t len) {
  hs_ra_backend b;
  hs_ra_rma_sync m;
  int rc = hs_ra_backend_parse(name, &b, &m);
  if (rc != HS_OK) {
    if (why && len) snprintf(why, len, "%s", hs_error_message());
    return rc;
  }
  const hs__ra_ops *ops = backends[backend_index(b, m)].ops;
  char buf[256] = "";
  rc = ops->available ? ops->available(buf, sizeof buf) : HS_OK;
  if (why && len) snprintf(why, len, "%s", rc == HS_OK ? "" : buf);
  return rc;
}

int hs_ra_finalize(void) {
  /* MPI_Finalize alone is enough (the shared OpenSHMEM runtime ends OpenSHMEM inside it), but
   * Open MPI's shmem_finalize then calls MPI_Finalize a second time and prints a warning;
   * ending OpenSHMEM first, which ends MPI with it, avoids that. */
  if (hs__shmem_finalize_mpi()) return HS_OK;
  return MPI_Finalize() == MPI_SUCCESS ? HS_OK
                                       : hs__error(HS_ERR_MPI, "hs_ra_finalize: MPI_Finalize failed");
}

/* ------------------------------------------------------------------ create / free */

/* This rank's view of desc: HS_OK or an error naming the bad member. */
static int check_desc(MPI_Comm comm, const hs_ra_desc *desc) {
  if (!desc) return hs__error(HS_ERR_ARG, "hs_ra_create: desc is NULL");
  if (desc->narrays < 1 || desc->narrays > HS_RA_MAX_ARRAYS)
    return hs__error(HS_ERR_ARG, "hs_ra_create: narrays = %d, must be 1..%d", desc->narrays,
                     HS_RA_MAX_ARRAYS);
  if (desc->capacity < 0)
    return hs__error(HS_ERR_ARG, "hs_ra_create: capacity = %d, must be >= 0", desc->capacity);
  if ((int)desc->backend < 0 || desc->backend > HS_RA_SHMEM)
    return hs__error(HS_ERR_ARG, "hs_ra_create: backend = %d, must be 0..2", (int)desc->backend);
  if (desc->rma_sync != HS_RA_RMA_PER_OP && desc->rma_sync != HS_RA_RMA_EPOCH)
    return hs__error(HS_ERR_ARG, "hs_ra_create: rma_sync = %d, must be 0 or 1",
                     (int)desc->rma_sync);
  int size;
  MPI_Comm_size(comm, &size);
  if (desc->npeers < 0 || (desc->npeers > 0 && !desc->peers))
    return hs__error(HS_ERR_ARG, "hs_ra_create: npeers = %d with peers %s", desc->npeers,
                     desc->peers ? "given" : "NULL");
  for (int k = 0; k < desc->npeers; k++)
    if (desc->peers[k] < 0 || desc->peers[k] >= size)
      return hs__error(HS_ERR_ARG, "hs_ra_create: peers[%d] = %d, must be in [0, %d)", k,
                       desc->peers[k], size);
  const hs__ra_ops *ops = backends[backend_index(desc->backend, desc->rma_sync)].ops;
  char why[256] = "";
  if (ops->available && ops->available(why, sizeof why) != HS_OK)
    return hs__error(HS_ERR_UNAVAILABLE, "hs_ra_create: back end '%s' is unavailable: %s",
                     hs_ra_backend_name(desc->backend, desc->rma_sync), why);
  return HS_OK;
}

/* Collective: every rank must choose the same back end and array count. */
static int check_same(MPI_Comm comm, const hs_ra_desc *desc) {
  int v[3] = {(int)desc->backend, (int)desc->rma_sync, desc->narrays}, lo[3], hi[3];
  MPI_Allreduce(v, lo, 3, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(v, hi, 3, MPI_INT, MPI_MAX, comm);
  if (lo[0] != hi[0] || lo[1] != hi[1] || lo[2] != hi[2])
    return hs__error(HS_ERR_MISMATCH,
                     "hs_ra_create: ranks disagree on backend/rma_sync/narrays (%d..%d, %d..%d, "
                     "%d..%d)", lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
  return HS_OK;
}

/* The back-end-independent part of a layer: communicator, capacities, peer list. */
static int init_common(hs_ra ra, MPI_Comm comm, const hs_ra_desc *desc) {
  if (MPI_Comm_dup(comm, &ra->comm) != MPI_SUCCESS) {
    ra->comm = MPI_COMM_NULL;
    return hs__error(HS_ERR_MPI, "hs_ra_create: MPI_Comm_dup failed");
  }
  MPI_Comm_set_errhandler(ra->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(ra->comm, &ra->rank);
  MPI_Comm_size(ra->comm, &ra->size);
  ra->backend = desc->backend;
  ra->mode = desc->backend == HS_RA_RMA ? desc->rma_sync : HS_RA_RMA_PER_OP;
  ra->ops = backends[backend_index(ra->backend, ra->mode)].ops;
  ra->narrays = desc->narrays;
  ra->capacity = desc->capacity;
  ra->caps = malloc((size_t)ra->size * sizeof(int));
  if (desc->npeers > 0) ra->peers = malloc((size_t)desc->npeers * sizeof(int));
  if (!ra->caps || (desc->npeers > 0 && !ra->peers))
    return hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  for (int k = 0; k < desc->npeers; k++) { /* distinct, without this rank */
    int r = desc->peers[k], dup = r == ra->rank;
    for (int j = 0; j < ra->npeers; j++) dup |= ra->peers[j] == r;
    if (!dup) ra->peers[ra->npeers++] = r;
  }
  return HS_OK;
}

int hs_ra_create(MPI_Comm comm, const hs_ra_desc *desc, hs_ra *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_ra_create: out is NULL");
  *out = NULL;
  if (comm == MPI_COMM_NULL) return hs__error(HS_ERR_ARG, "hs_ra_create: comm is MPI_COMM_NULL");
  int rc = hs__agree(comm, check_desc(comm, desc));
  if (rc == HS_OK) rc = check_same(comm, desc);
  if (rc != HS_OK) return rc;
  hs_ra ra = calloc(1, sizeof *ra);
  rc = hs__agree(comm, ra ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory"));
  if (rc != HS_OK) {
    free(ra);
    return rc;
  }
  ra->comm = MPI_COMM_NULL;
  rc = hs__agree(comm, init_common(ra, comm, desc));
  if (rc == HS_OK) {
    MPI_Allgather(&ra->capacity, 1, MPI_INT, ra->caps, 1, MPI_INT, ra->comm);
    rc = ra->ops->create(ra); /* collective; agrees internally */
  }
  if (rc != HS_OK) {
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", hs_error_message());
    hs_ra_free(&ra);
    return hs__error(rc, "%s", keep);
  }
  *out = ra;
  return HS_OK;
}

int hs_ra_free(hs_ra *rap) {
  if (!rap || !*rap) return HS_OK;
  hs_ra ra = *rap;
  if (ra->ops && ra->ops->destroy && ra->comm != MPI_COMM_NULL) ra->ops->destroy(ra);
  free(ra->caps);
  free(ra->peers);
  if (ra->comm != MPI_COMM_NULL) MPI_Comm_free(&ra->comm);
  free(ra);
  *rap = NULL;
  return HS_OK;
}

/* ------------------------------------------------------------------ accessors */

static int check_ra(hs_ra ra, const char *fn) {
  if (!ra) return hs__error(HS_ERR_ARG, "%s: ra is NULL", fn);
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

/* ------------------------------------------------------------------ operations */

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

/* A checked put (put = 1) or get of one element: this rank's own directly, another rank's by
 * the backend, timed and counted. */
static int access_elem(hs_ra ra, int put, int array, int rank, int index, int32_t *value) {
  if (rank == ra->rank) {
    if (put) ra->local[array][index] = *value;
    else *value = ra->local[array][index];
    return HS_OK;
  }
  double t0 = MPI_Wtime();
  int rc = put ? ra->ops->put(ra, array, rank, index, *value)
               : ra->ops->get(ra, array, rank, index, value);
  double dt = MPI_Wtime() - t0;
  if (put) {
    ra->stats.seconds_put += dt;
    ra->stats.puts++;
  } else {
    ra->stats.seconds_get += dt;
    ra->stats.gets++;
  }
  return rc;
}

int hs_ra_put(hs_ra ra, int array, int rank, int index, int32_t value) {
  int rc = check_ra(ra, "hs_ra_put");
  if (rc == HS_OK) rc = check_elem(ra, "hs_ra_put", array, rank, index);
  return rc == HS_OK ? access_elem(ra, 1, array, rank, index, &value) : rc;
}

int hs_ra_get(hs_ra ra, int array, int rank, int index, int32_t *value) {
  int rc = check_ra(ra, "hs_ra_get");
  if (rc == HS_OK && !value) rc = hs__error(HS_ERR_ARG, "hs_ra_get: value is NULL");
  if (rc == HS_OK) rc = check_elem(ra, "hs_ra_get", array, rank, index);
  return rc == HS_OK ? access_elem(ra, 0, array, rank, index, value) : rc;
}

/* hs_ra_sync_arrays, or with complete set hs_ra_complete: timed as sync time. */
static int sync_or_complete(hs_ra ra, unsigned mask, int complete) {
  int rc = check_ra(ra, complete ? "hs_ra_complete" : "hs_ra_sync");
  if (rc != HS_OK) return rc;
  double t0 = MPI_Wtime();
  rc = (complete ? ra->ops->complete : ra->ops->sync)(ra, mask & ((1u << ra->narrays) - 1u));
  ra->stats.seconds_sync += MPI_Wtime() - t0;
  if (complete) ra->stats.completes++;
  else ra->stats.syncs++;
  return rc;
}

int hs_ra_sync_arrays(hs_ra ra, unsigned mask) { return sync_or_complete(ra, mask, 0); }

int hs_ra_sync(hs_ra ra) { return hs_ra_sync_arrays(ra, ~0u); }

int hs_ra_complete(hs_ra ra, unsigned mask) { return sync_or_complete(ra, mask, 1); }

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
  rc = ra->ops->clear ? ra->ops->clear(ra) : HS_OK;
  if (rc != HS_OK) return rc;
  /* Nobody may put before every owner has cleared. */
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
