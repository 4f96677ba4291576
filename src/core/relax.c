/* Polite busy-waiting for the on-node waits (engine counters, shmem flags). */
#define _POSIX_C_SOURCE 200809L
#include "hs_transport.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HS_RELAX_SPINS 32       /* polls before yielding: a partner on its own core is near */
#define HS_RELAX_YIELDS 256     /* polls before sleeping, when ranks outnumber CPUs */

/* 1 when the waiter should sleep: HALOSWAP_IDLE_SLEEP=1/0, else whether the launcher put more
 * ranks on this node than it has CPUs (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's
 * MPI_LOCALNRANKS). There a yield mostly hands the core back to the yielder, so each hop
 * costs a time slice; without oversubscription a sleep would only add latency. */
static int idle_sleep(void) {
  static atomic_int cached = -1;
  int v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (v >= 0) return v;
  const char *e = getenv("HALOSWAP_IDLE_SLEEP");
  if (e && *e) {
    v = strcmp(e, "0") != 0;
  } else {
    const char *n = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!n) n = getenv("MPI_LOCALNRANKS");
    long ranks = n ? strtol(n, NULL, 10) : 0, cpus = sysconf(_SC_NPROCESSORS_ONLN);
    v = ranks > 0 && cpus > 0 && ranks > cpus;
  }
  atomic_store_explicit(&cached, v, memory_order_relaxed);
  return v;
}

void hs__relax(unsigned *spins) {
  unsigned s = ++*spins;
  if (s <= HS_RELAX_SPINS) return;
  if (s > HS_RELAX_SPINS + HS_RELAX_YIELDS && idle_sleep()) {
    /* The shortest sleep the kernel allows (~50 us timer slack) lets a rank with work run. */
    struct timespec ts = {0, 1};
    nanosleep(&ts, NULL);
    *spins = HS_RELAX_SPINS + HS_RELAX_YIELDS;  /* stay in the sleeping phase, no overflow */
    return;
  }
  sched_yield();
}
