/* The process's single OpenSHMEM runtime (see hs_shmem_runtime.h). Compiled into every
 * build; without OpenSHMEM (HS_HAVE_SHMEM unset: MPICH, or no oshcc) every call reports it
 * unavailable. */
#include "hs_shmem_runtime.h"
#include "hs_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#if defined(OPEN_MPI) && OPEN_MPI && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
/* Open MPI 4.1's shmem_finalize crashes in every process (SIGSEGV in osc/rdma's finalize,
 * after a correct run) unless the osc/rdma component is excluded. The component choice is
 * made in MPI_Init, so a library cannot make it; it reads the setting (MCA variable "osc",
 * through MPI_T: environment, mpiexec --mca and parameter files alike) and refuses with the
 * remedy instead of letting the program crash at exit. 1: osc/rdma cannot be loaded. */
static int osc_rdma_excluded(char *val, size_t n) {
  int provided, idx, count, ok = 0;
  char *buf = NULL;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
  MPI_T_cvar_handle h;
  if (MPI_T_cvar_get_index("osc", &idx) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
    buf = count > 0 ? calloc((size_t)count + 1, 1) : NULL; /* count: the string's capacity */
    if (buf && MPI_T_cvar_read(h, buf) == MPI_SUCCESS) {
      const char *list = buf[0] == '^' ? buf + 1 : buf;
      int named = 0;
      for (const char *c = list; *c;) {
        size_t len = strcspn(c, ",");
        if (len == 4 && !strncmp(c, "rdma", 4)) named = 1;
        c += len + (c[len] == ',');
      }
      /* "^a,b": a and b excluded; "a,b": only a and b may load; "": any may. */
      ok = buf[0] == '^' ? named : (buf[0] != 0 && !named);
    }
    MPI_T_cvar_handle_free(&h);
  }
  MPI_T_finalize();
  snprintf(val, n, "%s", buf ? buf : "");
  free(buf);
  return ok;
}
#endif

int hs__shmem_usable(char *why, size_t n) {
#if defined(OPEN_MPI) && OPEN_MPI && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
  char val[256];
  if (rt_state == RT_NEVER && !osc_rdma_excluded(val, sizeof val)) {
    if (why && n)
      snprintf(why, n, "Open MPI %d.%d's OpenSHMEM crashes in shmem_finalize while the osc/rdma "
                       "component is loaded (MCA osc = '%s'); run with OMPI_MCA_osc=^rdma (or "
                       "mpiexec --mca osc ^rdma)",
               OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, val);
    return HS_ERR_UNAVAILABLE;
  }
#else
  (void)why;
  (void)n;
#endif
  return HS_OK;
}

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
  if (hs__shmem_usable(why, n) != HS_OK) return HS_ERR_UNAVAILABLE;
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

int hs__shmem_usable(char *why, size_t n) {
  if (why && n) snprintf(why, n, "this haloswap was built without OpenSHMEM");
  return HS_ERR_UNAVAILABLE;
}

int hs__shmem_acquire(char *why, size_t n) {
  if (why && n) snprintf(why, n, "this haloswap was built without OpenSHMEM");
  return HS_ERR_UNAVAILABLE;
}

void hs__shmem_release(void) {}
int hs__shmem_running(void) { return 0; }
int hs__shmem_refs(void) { return 0; }
int hs__shmem_finalize_mpi(void) { return 0; }

#endif
