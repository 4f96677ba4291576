/* Remote access layer, OpenSHMEM back end ("shmem"): one symmetric block holds every array;
 * remote elements are written with shmem_put32 and read with shmem_get32; a sync is
 * shmem_barrier_all, so the communicator must hold every PE. OpenSHMEM itself is started and
 * ended by the runtime shared with the shmem transport (src/core/hs_shmem_runtime.h). */
#include "ra_internal.h"
#include "hs_shmem_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sh_available(char *why, size_t len) { return hs__shmem_usable(why, len); }

#if defined(HS_HAVE_SHMEM) && HS_HAVE_SHMEM
#include <shmem.h>

typedef struct {
  int acquired;   /* holds a reference on the OpenSHMEM runtime */
  void *sym;      /* narrays * maxcap elements, symmetric */
  int *pe;        /* comm rank -> PE */
  int maxcap;
} sh_t;

/* Start (or join) OpenSHMEM and check that the communicator holds every PE. */
static int sh_start(hs_ra ra, sh_t *t) {
  char why[256] = "";
  int rc = hs__shmem_acquire(why, sizeof why);
  t->acquired = rc == HS_OK;
  if (rc != HS_OK)
    rc = hs__error(rc, "hs_ra_create: back end 'shmem' is unavailable: %s", why);
  else if (shmem_n_pes() != ra->size)
    rc = hs__error(HS_ERR_ARG,
                   "hs_ra_create: back end 'shmem' needs a communicator holding every PE, but it "
                   "has %d ranks and there are %d PEs", ra->size, shmem_n_pes());
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  t->pe = malloc((size_t)ra->size * sizeof(int));
  rc = t->pe ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  int me = shmem_my_pe();
  MPI_Allgather(&me, 1, MPI_INT, t->pe, 1, MPI_INT, ra->comm);
  return HS_OK;
}

static int sh_create(hs_ra ra) {
  sh_t *t = calloc(1, sizeof *t);
  ra->impl = t;
  int rc = hs__agree(ra->comm, t ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory"));
  if (rc == HS_OK) rc = sh_start(ra, t);
  if (rc != HS_OK) return rc;
  MPI_Allreduce(&ra->capacity, &t->maxcap, 1, MPI_INT, MPI_MAX, ra->comm);
  /* shmem_malloc is collective over all PEs and needs the same size everywhere. */
  size_t bytes = (size_t)ra->narrays * (size_t)(t->maxcap ? t->maxcap : 1) * sizeof(int32_t);
  t->sym = shmem_malloc(bytes);
  rc = t->sym ? HS_OK
              : hs__error(HS_ERR_NOMEM, "hs_ra_create: shmem_malloc of %zu bytes failed "
                                        "(symmetric heap too small? see SHMEM_SYMMETRIC_SIZE)",
                          bytes);
  for (int r = 0; rc == HS_OK && r < ra->size; r++)
    if (r != ra->rank && !shmem_addr_accessible(t->sym, t->pe[r]))
      rc = hs__error(HS_ERR_UNAVAILABLE, "hs_ra_create: PE %d cannot reach PE %d's symmetric heap",
                     t->pe[ra->rank], t->pe[r]);
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  memset(t->sym, 0, bytes);
  for (int a = 0; a < ra->narrays; a++) ra->local[a] = (int32_t *)t->sym + (size_t)a * t->maxcap;
  shmem_barrier_all();
  return HS_OK;
}

static void sh_destroy(hs_ra ra) {
  sh_t *t = ra->impl;
  if (!t) return;
  /* shmem_free is collective; after OpenSHMEM has ended the heap is gone already. */
  if (t->sym && hs__shmem_running()) {
    shmem_barrier_all();
    shmem_free(t->sym);
  }
  if (t->acquired) hs__shmem_release();
  free(t->pe);
  free(t);
  ra->impl = NULL;
}

static int sh_put(hs_ra ra, int a, int rank, int index, int32_t v) {
  sh_t *t = ra->impl;
  shmem_put32(ra->local[a] + index, &v, 1, t->pe[rank]);
  return HS_OK;
}

static int sh_get(hs_ra ra, int a, int rank, int index, int32_t *v) {
  sh_t *t = ra->impl;
  shmem_get32(v, ra->local[a] + index, 1, t->pe[rank]);
  return HS_OK;
}

static int sh_sync(hs_ra ra, unsigned mask) {
  (void)ra;
  (void)mask;
  shmem_barrier_all(); /* completes outstanding puts too */
  return HS_OK;
}

static int sh_complete(hs_ra ra, unsigned mask) {
  (void)ra;
  (void)mask;
  shmem_quiet();
  return HS_OK;
}

static int sh_clear(hs_ra ra) {
  (void)ra;
  shmem_barrier_all();
  return HS_OK;
}

HS_DEFINE_RA_OPS(hs__ra_shmem_ops, sh, .available = sh_available, .clear = sh_clear);

#else /* built without OpenSHMEM: hs_ra_create asks sh_available and refuses the back end */

const hs__ra_ops hs__ra_shmem_ops = {.available = sh_available};

#endif
