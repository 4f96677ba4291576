/* Remote access layer, MPI-3 RMA passive-target back end ("rma" and "rma-epoch"). */
#include "ra_internal.h"

#include <stdlib.h>
#include <string.h>

/* Origin values of unflushed puts live here (rma-epoch): MPI may read an origin buffer until
 * the flush, so a block is only reused after one. */
#define STAGE_BLOCK 65536

typedef struct {
  MPI_Win win[HS_RA_MAX_ARRAYS];
  int locked;           /* rma-epoch: lock_all held on every window */
  int32_t *stage;       /* origin values of puts not yet flushed (rma-epoch) */
  int nstage, stage_cap;
} rma_t;

static int rma_create(hs_ra ra) {
  rma_t *t = calloc(1, sizeof *t);
  ra->impl = t;
  int rc = t ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  for (int a = 0; a < HS_RA_MAX_ARRAYS; a++) t->win[a] = MPI_WIN_NULL;
  for (int a = 0; a < ra->narrays && rc == HS_OK; a++) {
    int32_t *base = NULL;
    /* Whole cache lines: MPICH 4.0 computes the addresses of other ranks' parts of a shared
     * window wrongly when a part is not a multiple of 8 bytes. */
    MPI_Aint bytes = ((MPI_Aint)ra->capacity * (MPI_Aint)sizeof(int32_t) + 63) / 64 * 64;
    int m = MPI_Win_allocate(bytes, sizeof(int32_t),
                             MPI_INFO_NULL, ra->comm, &base, &t->win[a]);
    if (m != MPI_SUCCESS) {
      rc = hs__mpi_error(m, "hs_ra_create: MPI_Win_allocate");
      break;
    }
    MPI_Win_set_errhandler(t->win[a], MPI_ERRORS_RETURN);
    ra->local[a] = base;
    if (ra->capacity) memset(base, 0, (size_t)ra->capacity * sizeof(int32_t));
    int *model = NULL, flag = 0;
    MPI_Win_get_attr(t->win[a], MPI_WIN_MODEL, &model, &flag);
    /* Owners read and write their elements with plain loads and stores. */
    if (!flag || *model != MPI_WIN_UNIFIED)
      rc = hs__error(HS_ERR_UNAVAILABLE,
                     "hs_ra_create: back end 'rma' needs the MPI_WIN_UNIFIED memory model, but "
                     "this MPI gives windows the separate model");
  }
  if (rc == HS_OK && ra->mode == HS_RA_RMA_EPOCH) {
    t->stage = malloc(STAGE_BLOCK * sizeof(int32_t));
    t->stage_cap = STAGE_BLOCK;
    if (!t->stage) rc = hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  }
  rc = hs__agree(ra->comm, rc);
  if (rc == HS_OK) MPI_Barrier(ra->comm);
  return rc;
}

static void rma_destroy(hs_ra ra) {
  rma_t *t = ra->impl;
  if (!t) return;
  for (int a = 0; a < ra->narrays; a++)
    if (t->win[a] != MPI_WIN_NULL) {
      if (t->locked) MPI_Win_unlock_all(t->win[a]);
      MPI_Win_free(&t->win[a]);
    }
  free(t->stage);
  free(t);
  ra->impl = NULL;
}

static int flush_all(hs_ra ra) {
  rma_t *t = ra->impl;
  for (int a = 0; a < ra->narrays; a++) HS_MPI(MPI_Win_flush_all(t->win[a]));
  t->nstage = 0;
  return HS_OK;
}

static int rma_put(hs_ra ra, int a, int rank, int index, int32_t v) {
  rma_t *t = ra->impl;
  if (t->locked) {
    if (t->nstage == t->stage_cap) {
      int rc = flush_all(ra);
      if (rc != HS_OK) return rc;
    }
    int32_t *src = &t->stage[t->nstage++];
    *src = v;
    HS_MPI(MPI_Put(src, 1, MPI_INT32_T, rank, index, 1, MPI_INT32_T, t->win[a]));
    return HS_OK;
  }
  HS_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, t->win[a]));
  HS_MPI(MPI_Put(&v, 1, MPI_INT32_T, rank, index, 1, MPI_INT32_T, t->win[a]));
  HS_MPI(MPI_Win_flush(rank, t->win[a]));
  HS_MPI(MPI_Win_unlock(rank, t->win[a]));
  return HS_OK;
}

static int rma_get(hs_ra ra, int a, int rank, int index, int32_t *v) {
  rma_t *t = ra->impl;
  if (t->locked) {
    HS_MPI(MPI_Get(v, 1, MPI_INT32_T, rank, index, 1, MPI_INT32_T, t->win[a]));
    HS_MPI(MPI_Win_flush(rank, t->win[a]));
    return HS_OK;
  }
  HS_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, t->win[a]));
  HS_MPI(MPI_Get(v, 1, MPI_INT32_T, rank, index, 1, MPI_INT32_T, t->win[a]));
  HS_MPI(MPI_Win_flush(rank, t->win[a]));
  HS_MPI(MPI_Win_unlock(rank, t->win[a]));
  return HS_OK;
}

static int rma_sync(hs_ra ra, unsigned mask) {
  rma_t *t = ra->impl;
  (void)mask;
  if (t->locked) {
    /* Complete my puts, publish my local stores, wait for everyone, then see theirs. */
    int rc = flush_all(ra);
    if (rc != HS_OK) return rc;
    for (int a = 0; a < ra->narrays; a++) HS_MPI(MPI_Win_sync(t->win[a]));
    HS_MPI(MPI_Barrier(ra->comm));
    for (int a = 0; a < ra->narrays; a++) HS_MPI(MPI_Win_sync(t->win[a]));
    return HS_OK;
  }
  HS_MPI(MPI_Barrier(ra->comm));
  return HS_OK;
}

static int rma_complete(hs_ra ra, unsigned mask) {
  rma_t *t = ra->impl;
  (void)mask;
  if (!t->locked) return HS_OK; /* per-operation puts are complete when they return */
  int rc = flush_all(ra);
  if (rc != HS_OK) return rc;
  for (int a = 0; a < ra->narrays; a++) HS_MPI(MPI_Win_sync(t->win[a]));
  return HS_OK;
}

static int rma_epoch_begin(hs_ra ra) {
  rma_t *t = ra->impl;
  if (ra->mode != HS_RA_RMA_EPOCH) return HS_OK;
  for (int a = 0; a < ra->narrays; a++) HS_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win[a]));
  t->locked = 1;
  t->nstage = 0;
  ra->stats.epochs++;
  return HS_OK;
}

static int rma_epoch_end(hs_ra ra) {
  rma_t *t = ra->impl;
  if (ra->mode != HS_RA_RMA_EPOCH) return HS_OK;
  t->locked = 0;
  for (int a = 0; a < ra->narrays; a++) HS_MPI(MPI_Win_unlock_all(t->win[a]));
  t->nstage = 0;
  return HS_OK;
}

HS_DEFINE_RA_OPS(hs__ra_rma_ops, rma, .epoch_begin = rma_epoch_begin, .epoch_end = rma_epoch_end);
