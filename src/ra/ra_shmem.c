/* Remote access layer, OpenSHMEM back end: one symmetric block holds every array; remote
 * elements are written with shmem_put32 and read with shmem_get32; a sync is
 * shmem_barrier_all, so the communicator must hold every PE. */
#include "ra_internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(HS_HAVE_SHMEM) && HS_HAVE_SHMEM
#include <shmem.h>

int hs__ra_shmem_built(void) { return 1; }

static int shmem_started;

int hs__ra_shmem_finalize(void) {
  if (!shmem_started) return 0;
  shmem_started = 0;
  shmem_finalize(); /* OSHMEM finalises MPI as well */
  return 1;
}

static int sh_create(hs_ra ra) {
  int rc = HS_OK;
  if (!shmem_started) {
    shmem_init();
    shmem_started = 1;
  }
  int npes = shmem_n_pes(), me = shmem_my_pe();
  if (npes != ra->size)
    rc = hs__error(HS_ERR_ARG,
                   "hs_ra_create: back end 'shmem' needs a communicator holding every PE, but it "
                   "has %d ranks and there are %d PEs", ra->size, npes);
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  ra->pe = malloc((size_t)ra->size * sizeof(int));
  rc = ra->pe ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_ra_create: out of memory");
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  MPI_Allgather(&me, 1, MPI_INT, ra->pe, 1, MPI_INT, ra->comm);
  MPI_Allreduce(&ra->capacity, &ra->maxcap, 1, MPI_INT, MPI_MAX, ra->comm);
  /* shmem_malloc is collective over all PEs and needs the same size everywhere. */
  size_t bytes = (size_t)ra->narrays * (size_t)(ra->maxcap ? ra->maxcap : 1) * sizeof(int32_t);
  ra->sym = shmem_malloc(bytes);
  rc = ra->sym ? HS_OK
               : hs__error(HS_ERR_NOMEM, "hs_ra_create: shmem_malloc of %zu bytes failed "
                                         "(symmetric heap too small? see SHMEM_SYMMETRIC_SIZE)",
                           bytes);
  for (int r = 0; rc == HS_OK && r < ra->size; r++)
    if (r != ra->rank && !shmem_addr_accessible(ra->sym, ra->pe[r]))
      rc = hs__error(HS_ERR_UNAVAILABLE, "hs_ra_create: PE %d cannot reach PE %d's symmetric heap",
                     me, ra->pe[r]);
  rc = hs__agree(ra->comm, rc);
  if (rc != HS_OK) return rc;
  memset(ra->sym, 0, bytes);
  for (int a = 0; a < ra->narrays; a++) ra->local[a] = (int32_t *)ra->sym + (size_t)a * ra->maxcap;
  shmem_barrier_all();
  return HS_OK;
}

static void sh_destroy(hs_ra ra) {
  if (ra->sym) {
    shmem_barrier_all();
    shmem_free(ra->sym);
    ra->sym = NULL;
  }
  free(ra->pe);
  ra->pe = NULL;
}

static int sh_put(hs_ra ra, int a, int rank, int index, int32_t v) {
  shmem_put32(ra->local[a] + index, &v, 1, ra->pe[rank]);
  return HS_OK;
}

static int sh_get(hs_ra ra, int a, int rank, int index, int32_t *v) {
  shmem_get32(v, ra->local[a] + index, 1, ra->pe[rank]);
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

const hs__ra_backend_ops hs__ra_shmem_ops = {
    .create = sh_create,
    .destroy = sh_destroy,
    .put = sh_put,
    .get = sh_get,
    .sync = sh_sync,
    .complete = sh_complete,
    .clear = sh_clear,
};

#else /* built without OpenSHMEM: hs_ra_create refuses the back end before using these */

int hs__ra_shmem_built(void) { return 0; }
int hs__ra_shmem_finalize(void) { return 0; }

static int sh_absent(hs_ra ra) {
  (void)ra;
  return hs__error(HS_ERR_UNAVAILABLE, "back end 'shmem': this haloswap was built without OpenSHMEM");
}
static void sh_absent_destroy(hs_ra ra) { (void)ra; }

const hs__ra_backend_ops hs__ra_shmem_ops = {.create = sh_absent, .destroy = sh_absent_destroy};

#endif
