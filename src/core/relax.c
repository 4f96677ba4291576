/* Polite busy-waiting for the on-node waits (engine counters, shmem flags). */
#define _POSIX_C_SOURCE 200809L
#include "hs_transport.h"

#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HS_RELAX_SPINS 32       /* polls before yielding: a partner on its own core is near */
#define HS_RELAX_YIELDS 256     /* polls before sleeping, when ranks outnumber CPUs */
/* A yield that kept the core away this long ran another process: the cores are busy. */
#define HS_RELAX_BUSY_NS 20000
#define HS_RELAX_SLEEPING (UINT_MAX / 2) /* *spins from there on: this wait sleeps */

/* 1 when the waiter should sleep: HALOSWAP_IDLE_SLEEP=1/0, else whether the launcher put more
 * ranks on this node than it has CPUs (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's
 * MPI_LOCALNRANKS). There a yield mostly hands the core back to the yielder, so each hop
 * costs a time slice; without oversubscription a sleep would only add latency.
 * -1: unset and not oversubscribed, so the waits decide by what a yield costs. */
static int idle_sleep(void) {
  static atomic_int cached = -2;
  int v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (v > -2) return v;
  const char *e = getenv("HALOSWAP_IDLE_SLEEP");
  if (e && *e) {
    v = strcmp(e, "0") != 0;
  } else {
    const char *n = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!n) n = getenv("MPI_LOCALNRANKS");
    long ranks = n ? strtol(n, NULL, 10) : 0, cpus = sysconf(_SC_NPROCESSORS_ONLN);
    v = ranks > 0 && cpus > 0 && ranks > cpus ? 1 : -1;
  }
  atomic_store_explicit(&cached, v, memory_order_relaxed);
  return v;
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spin, then yield, then sleep. A yield on an idle core returns in about a microsecond; one
 * that took HS_RELAX_BUSY_NS means other processes want the cores (a shared login node),
 * where a rank that keeps yielding still runs its full share and the rank it waits for waits
 * for a time slice, while one that sleeps gives the core away and, when it wakes, is run
 * before CPU-bound processes. So the rest of that wait sleeps, as under oversubscription. */
void hs__relax(unsigned *spins) {
  unsigned s = ++*spins;
  if (s <= HS_RELAX_SPINS) return;
  int sleep = idle_sleep();
  if (s > HS_RELAX_SLEEPING || (s > HS_RELAX_SPINS + HS_RELAX_YIELDS && sleep == 1)) {
    /* The shortest sleep the kernel allows (~50 us timer slack) lets a rank with work run. */
    struct timespec ts = {0, 1};
    nanosleep(&ts, NULL);
    *spins = HS_RELAX_SLEEPING + 1; /* stay in the sleeping phase, no overflow */
    return;
  }
  if (sleep == 0) {
    sched_yield();
    return;
  }
  long long t0 = now_ns();
  sched_yield();
  if (now_ns() - t0 > HS_RELAX_BUSY_NS) *spins = HS_RELAX_SLEEPING;
}
