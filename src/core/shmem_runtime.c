/* The process's single OpenSHMEM runtime (see hs_shmem_runtime.h). Compiled into every
 * build; without OpenSHMEM (HS_HAVE_SHMEM unset: MPICH, or no oshcc) every call reports it
 * unavailable. */
#include "hs_shmem_runtime.h"
#include "hs_internal.h"

#include <stdio.h>

#if defined(HS_HAVE_SHMEM) && HS_HAVE_SHMEM
#include <shmem.h>

enum { RT_NEVER = 0, RT_RUNNING = 1, RT_ENDED = 2 };
static int rt_state = RT_NEVER;
static int rt_refs;

/* Runs at the start of MPI_Finalize (MPI_COMM_SELF's attributes are deleted first). Open MPI's
 * shmem_finalize then calls MPI_Finalize again, which only prints a warning and returns;
 * hs__shmem_finalize_mpi avoids that by ending OpenSHMEM first. */
static int rt_self_delete(MPI_Comm c, int key, void *val, void *extra) {
  (void)c;
  (void)key;
  (void)val;
  (void)extra;
  if (rt_state == RT_RUNNING) {
    rt_state = RT_ENDED;
    shmem_finalize();
  }
  return MPI_SUCCESS;
}

int hs__shmem_built(void) { return 1; }

int hs__shmem_acquire(char *why, size_t n) {
  int init = 0, fini = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fini);
  if (rt_state == RT_ENDED || !init || fini) {
    if (why && n)
      snprintf(why, n, "%s", rt_state == RT_ENDED
                                 ? "OpenSHMEM has been finalised in this process and cannot "
                                   "be started again"
                                 : "OpenSHMEM is started between MPI_Init and MPI_Finalize");
    return HS_ERR_UNAVAILABLE;
  }
  if (rt_state == RT_NEVER) {
    shmem_init();
    rt_state = RT_RUNNING;
    int key;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, rt_self_delete, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
  }
  rt_refs++;
  return HS_OK;
}

void hs__shmem_release(void) {
  if (rt_refs > 0) rt_refs--;
}

int hs__shmem_running(void) { return rt_state == RT_RUNNING; }
int hs__shmem_refs(void) { return rt_refs; }

int hs__shmem_finalize_mpi(void) {
  if (rt_state != RT_RUNNING) return 0;
  rt_state = RT_ENDED; /* the MPI_COMM_SELF callback, run inside, must not finalise again */
  shmem_finalize();
  return 1;
}

#else /* built without OpenSHMEM */

int hs__shmem_built(void) { return 0; }

int hs__shmem_acquire(char *why, size_t n) {
  if (why && n) snprintf(why, n, "this haloswap was built without OpenSHMEM");
  return HS_ERR_UNAVAILABLE;
}

void hs__shmem_release(void) {}
int hs__shmem_running(void) { return 0; }
int hs__shmem_refs(void) { return 0; }
int hs__shmem_finalize_mpi(void) { return 0; }

#endif
