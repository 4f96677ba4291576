/* One OpenSHMEM runtime per process, shared by the OpenSHMEM transport and the remote access
 * layer's OpenSHMEM back end (src/memory/shmem_runtime.c). Internal; not installed.
 *
 * The first hs__shmem_acquire starts OpenSHMEM (shmem_init, after MPI_Init); it then stays
 * up until MPI ends, whatever the reference count does: Open MPI's shmem_finalize also ends
 * MPI, and OpenSHMEM cannot be started again. It is finalised exactly once, by whichever
 * comes first:
 *  - hs__shmem_finalize_mpi (hs_ra_finalize): shmem_finalize, which finalises MPI too;
 *  - MPI_Finalize: an MPI_COMM_SELF attribute callback calls shmem_finalize at its start,
 *    while MPI still works (OSHMEM left running past MPI_Finalize crashes at exit).
 * References are held by whoever holds symmetric memory (each RA layer; OpenSHMEM plans through
 * their transport) and say whether freeing it is still allowed (hs__shmem_running). */
#ifndef HS_SHMEM_RUNTIME_H
#define HS_SHMEM_RUNTIME_H

#include <stddef.h>

/* 1 if this library was built with OpenSHMEM. */
int hs__shmem_built(void);
/* HS_OK if OpenSHMEM can be started here and ended without a crash; else HS_ERR_UNAVAILABLE
 * with the reason and the remedy (not built; Open MPI 4.1 with osc/rdma loadable: set
 * OMPI_MCA_osc=^rdma). Local; starts nothing. */
int hs__shmem_usable(char *why, size_t n);
/* Take a reference, starting OpenSHMEM on first use. Local, not collective: callers agree
 * on the result themselves. HS_OK, or HS_ERR_UNAVAILABLE with the reason in why (not built,
 * MPI not running, OpenSHMEM already finalised, or not usable: hs__shmem_usable). */
int hs__shmem_acquire(char *why, size_t n);
/* Drop a reference (OpenSHMEM keeps running; see above). */
void hs__shmem_release(void);
/* 1 while OpenSHMEM is started and not yet being finalised: symmetric memory may be used
 * and freed. */
int hs__shmem_running(void);
/* References currently held (for tests and diagnostics). */
int hs__shmem_refs(void);
/* End OpenSHMEM and MPI together: if the runtime is running, shmem_finalize (which also
 * finalises MPI) and return 1; otherwise return 0 and leave MPI to the caller. */
int hs__shmem_finalize_mpi(void);

#endif
