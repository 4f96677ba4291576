/* haloswap remote access layer: distributed arrays of 4-byte elements with epochs of remote
 * put and remote get separated by a sync, over two-sided MPI, MPI-3 RMA or OpenSHMEM.
 * Library haloswap_ra (CMake target haloswap::haloswap_ra), on top of haloswap; docs/ra.md.
 *
 * Built for graph algorithms that flip many single flags owned by neighbouring ranks (EPIC's
 * parcel-cluster pruning), usable on its own. Every rank owns `capacity` elements of each of
 * `narrays` arrays; element (rank r, index i) of array a is written with hs_ra_put and read
 * with hs_ra_get; the owner reads and writes its own elements directly through hs_ra_local.
 *
 * Memory semantics (the same on every back end):
 *  - a put or get may be issued at any time; hs_ra_sync (collective) makes every put issued
 *    before it visible at its owner, and every owner's local writes made before it visible to
 *    gets issued after it;
 *  - within one epoch (between two syncs) do not put and get the same element: the order of
 *    the two is undefined (p2p returns the value just put, RMA/SHMEM the owner's value);
 *  - concurrent puts of different values to one element in one epoch leave one of them.
 *
 * Back ends:
 *  - "p2p": local mirrors of the remote elements this rank declared with hs_ra_set_targets,
 *    with dirty flags; a sync sends the dirty (index, value) pairs to the owners, which apply
 *    them and send back the current values of every declared element (the original EPIC
 *    two-sided scheme). Gets never communicate.
 *  - "rma": MPI-3 passive target, one window per array (MPI_Win_allocate, unified memory
 *    model required). Every remote put/get is MPI_Win_lock(shared), MPI_Put/MPI_Get,
 *    MPI_Win_flush, MPI_Win_unlock (as the original); a sync is MPI_Barrier.
 *  - "rma-epoch": the same windows, but hs_ra_epoch_begin opens one MPI_Win_lock_all epoch per
 *    array that lasts until hs_ra_epoch_end; puts are flushed together at the next sync, gets
 *    flush the one target. Outside an epoch it behaves like "rma".
 *  - "shmem": OpenSHMEM symmetric memory (shmem_malloc), shmem_put32/shmem_get32 and
 *    shmem_barrier_all. Needs a build with OpenSHMEM and a communicator that holds every PE.
 *    OpenSHMEM is started once per process, by whichever of this back end and the "shmem"
 *    transport comes first, and ended once, at MPI_Finalize (or hs_ra_finalize).
 */
#ifndef HALOSWAP_RA_H
#define HALOSWAP_RA_H

#include "haloswap.h"

HS_BEGIN_DECLS /* exported, as haloswap.h */

#define HS_RA_MAX_ARRAYS 8

typedef enum { HS_RA_P2P = 0, HS_RA_RMA = 1, HS_RA_SHMEM = 2 } hs_ra_backend;

typedef enum {
  HS_RA_RMA_PER_OP = 0, /* lock/put|get/flush/unlock per operation (the original) */
  HS_RA_RMA_EPOCH = 1   /* one lock_all epoch per stage, flushes at sync */
} hs_ra_rma_sync;

typedef struct hs_ra_s *hs_ra;

typedef struct {
  hs_ra_backend backend;
  hs_ra_rma_sync rma_sync;  /* rma only */
  int narrays;              /* 1..HS_RA_MAX_ARRAYS */
  int capacity;             /* elements per array on this rank (>= 0, may differ per rank) */
  /* p2p only: the ranks this rank may target or be targeted by (neighbours; must be
   * symmetric: r lists s iff s lists r). NULL: any rank (counts go through MPI_Alltoall). */
  int npeers;
  const int *peers;
} hs_ra_desc;

typedef struct {
  uint64_t puts;      /* remote puts (to another rank) */
  uint64_t gets;      /* remote gets */
  uint64_t syncs;     /* hs_ra_sync / hs_ra_sync_arrays calls */
  uint64_t completes; /* hs_ra_complete calls */
  uint64_t epochs;    /* hs_ra_epoch_begin calls that opened an epoch (rma-epoch) */
  uint64_t messages;  /* p2p: messages sent by syncs and hs_ra_set_targets */
  uint64_t bytes;     /* p2p: bytes sent by those messages */
  double seconds_put, seconds_get, seconds_sync; /* accumulated wall time in those calls */
} hs_ra_stats;

/* Defaults: p2p, per-op RMA, 1 array, capacity 0, no peer list. */
void hs_ra_desc_init(hs_ra_desc *desc);

/* Names "p2p", "rma", "rma-epoch", "shmem" <-> back end and RMA mode. */
int hs_ra_backend_parse(const char *name, hs_ra_backend *backend, hs_ra_rma_sync *mode);
const char *hs_ra_backend_name(hs_ra_backend backend, hs_ra_rma_sync mode);
/* HS_OK if the named back end is built into this library (shmem needs OpenSHMEM). */
int hs_ra_backend_available(const char *name, char *why, size_t len);

/* Collective over comm. Elements start at 0. */
int hs_ra_create(MPI_Comm comm, const hs_ra_desc *desc, hs_ra *out);
int hs_ra_free(hs_ra *ra); /* collective */

/* This rank's elements of `array` (capacity entries), or NULL for a bad argument. */
int32_t *hs_ra_local(hs_ra ra, int array);
int hs_ra_capacity(hs_ra ra, int rank); /* capacity of `rank`, -1 for a bad argument */
MPI_Comm hs_ra_comm(hs_ra ra);          /* the layer's own duplicate of comm */
const char *hs_ra_name(hs_ra ra);

/* Collective: declare the remote elements (ranks[k], indices[k]) this rank will put or get
 * until the next call (duplicates and own-rank entries allowed). Needed by p2p, which builds
 * its mirrors from it; checked and otherwise ignored by rma and shmem. */
int hs_ra_set_targets(hs_ra ra, int n, const int *ranks, const int *indices);

/* Collective: set every element of every array to 0 on all ranks (mirrors too). */
int hs_ra_clear(hs_ra ra);

/* Open / close an epoch of remote operations (rma-epoch: MPI_Win_lock_all on every array;
 * the other back ends: nothing). Call on every rank around a stage of the algorithm. */
int hs_ra_epoch_begin(hs_ra ra);
int hs_ra_epoch_end(hs_ra ra);

int hs_ra_put(hs_ra ra, int array, int rank, int index, int32_t value);
int hs_ra_get(hs_ra ra, int array, int rank, int index, int32_t *value);

/* Collective: complete all puts, make them and the owners' local writes visible (see top). */
int hs_ra_sync(hs_ra ra);
/* As hs_ra_sync, but p2p exchanges only the arrays whose bit is set in mask (the others'
 * dirty puts stay pending and their mirrors are not refreshed). */
int hs_ra_sync_arrays(hs_ra ra, unsigned mask);
/* Complete this rank's puts at their owners without a barrier (rma: flush; shmem:
 * shmem_quiet). p2p has no other way to deliver them, so there it is a collective
 * hs_ra_sync_arrays(mask). Visibility to the owner still needs a later synchronisation
 * (a barrier or collective). */
int hs_ra_complete(hs_ra ra, unsigned mask);

/* MPI_Finalize, ending OpenSHMEM first if it is running (its shmem_finalize then ends MPI).
 * Optional: plain MPI_Finalize also ends OpenSHMEM exactly once, but with Open MPI 4.1 it then
 * prints a harmless "MPI_FINALIZE was invoked multiple times" notice, which this avoids. */
int hs_ra_finalize(void);

int hs_ra_get_stats(hs_ra ra, hs_ra_stats *st);
int hs_ra_reset_stats(hs_ra ra);

HS_END_DECLS
#endif
