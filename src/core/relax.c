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
/* How long a slow yield speaks for the node: waits within this time of it sleep at once. */
#define HS_RELAX_BUSY_KEEP_NS 100000000LL

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

/* When (now_ns) a yield last found the cores busy; 0: never. Shared by every wait of the
 * process: a busy node stays busy for longer than one wait. */
static _Atomic long long busy_seen;

/* Spin, then yield, then sleep. A yield on an idle core returns in about a microsecond; one
 * that took HS_RELAX_BUSY_NS means other processes want the cores (a shared login node),
 * where a rank that keeps yielding still runs its full share and the rank it waits for waits
 * for a time slice, while one that sleeps gives the core away and, when it wakes, is run
 * before CPU-bound processes. So the rest of that wait sleeps, as under oversubscription, and
 * so do the waits of the next HS_RELAX_BUSY_KEEP_NS without a yield first: beside a busy
 * process that yield costs the process's whole time slice (Linux's EEVDF runs it to its
 * deadline), milliseconds per wait, a swap's two waits a rank made shm and cma 9x slower
 * than p2p on Open MPI, whose ranks are bound to a core each (docs/install.md). */
void hs__relax(unsigned *spins) {
  unsigned s = ++*spins;
  if (s <= HS_RELAX_SPINS) return;
  int sleep = idle_sleep();
  int sleeping = s > HS_RELAX_SLEEPING || (s > HS_RELAX_SPINS + HS_RELAX_YIELDS && sleep == 1);
  if (!sleeping && sleep == -1 && s == HS_RELAX_SPINS + 1) {
    long long seen = atomic_load_explicit(&busy_seen, memory_order_relaxed);
    sleeping = seen && now_ns() - seen < HS_RELAX_BUSY_KEEP_NS;
  }
  if (sleeping) {
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
  long long t1 = now_ns();
  if (t1 - t0 > HS_RELAX_BUSY_NS) {
    *spins = HS_RELAX_SLEEPING;
    atomic_store_explicit(&busy_seen, t1, memory_order_relaxed);
  }
}
