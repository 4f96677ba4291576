/* Polite busy-waiting for the on-node waits (engine counters, shmem flags). */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "hs_node.h" /* hs__cores_contended; hs_transport.h */

#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define HS_RELAX_SPINS 32       /* polls before yielding: a partner on its own core is near */
#define HS_RELAX_YIELDS 256     /* polls before sleeping, when ranks outnumber CPUs */
/* Oversubscribed (more ranks than CPUs): a yield that kept the core away this long ran
 * another rank, which has work; the rest of the wait sleeps and leaves it the core. */
#define HS_RELAX_RAN_NS 20000
/* Otherwise a yield that kept the core away this long, and ran another task, gave a CPU-bound
 * process its time slice: the cores are busy. Beside one busy loop a yield comes back after
 * its slice, 0.7-8 ms (1055 of 1060 slow yields over 2 ms, Linux 6.18's EEVDF, 2-core VM); on
 * the quiet machine the longest are the VM's own pauses (20-110 us, 600 a second with nothing
 * else to run) and the launcher's or MPI's helper threads waking on the core (a few a second,
 * rarely over 200 us). */
#define HS_RELAX_BUSY_NS 500000
#define HS_RELAX_SLEEPING (UINT_MAX / 2) /* *spins from there on: this wait sleeps */
/* How long a slow yield speaks for the node: waits within this time of it sleep at once. */
#define HS_RELAX_BUSY_KEEP_NS 100000000LL
/* A slow yield counts only if another came within this time before it: on the quiet machine a
 * lone one happens (something of the process or the kernel ran on the core for 0.5 ms; in
 * GHEX cartex, once in about every other launch, during auto's trial), and its 100 ms of
 * sleeping waits made the next 200 swaps 2x slower. Beside a busy process every yield is
 * slow, so the second comes at once, and one period later the first is still in the window. */
#define HS_RELAX_STRIKE_NS (2 * HS_RELAX_BUSY_KEEP_NS)

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
/* When the last slow yield was (confirmed or not); 0: never. */
static _Atomic long long busy_strike;

/* This thread's involuntary context switches so far; -1 where the kernel does not count them
 * per thread. A yield that let another task run counts one (the yielder stays runnable). */
static long involuntary_switches(void) {
#ifdef RUSAGE_THREAD
  struct rusage r;
  if (getrusage(RUSAGE_THREAD, &r) == 0) return r.ru_nivcsw;
#endif
  return -1;
}

/* The count when this thread's current wait began to yield: a slow yield counts only if the
 * count has grown since, so a VM's vCPU that lost its core with nothing else to run (measured
 * on a quiet 2-core VM: 684 of 10 million yields over 20 us, 5 involuntary switches) is not
 * taken for a busy node; beside a CPU-bound process every slow yield is a switch (703 of 703).
 * Waits do not nest within a thread. */
static _Thread_local long wait_switches = -1;

bool hs__relax_strike(long long now) {
  long long prev = atomic_exchange_explicit(&busy_strike, now, memory_order_relaxed);
  if (!prev || now - prev > HS_RELAX_STRIKE_NS) return false; /* a lone one */
  atomic_store_explicit(&busy_seen, now, memory_order_relaxed);
  return true;
}

/* A slow yield marked the cores busy within the last HS_RELAX_BUSY_KEEP_NS. */
static bool busy_lately(void) {
  long long seen = atomic_load_explicit(&busy_seen, memory_order_relaxed);
  return seen && now_ns() - seen < HS_RELAX_BUSY_KEEP_NS;
}

bool hs__cores_contended(void) { return idle_sleep() == 1 || busy_lately(); }

/* Spin, then yield, then sleep. A yield on an idle core returns in about a microsecond; one
 * that took HS_RELAX_BUSY_NS and ran another task means other processes want the cores (a
 * shared login node), where a rank that keeps yielding still runs its full share and the rank
 * it waits for waits for a time slice, while one that sleeps gives the core away and, when it
 * wakes, is run before CPU-bound processes. So the rest of that wait sleeps, as under
 * oversubscription, and so do the waits of the next HS_RELAX_BUSY_KEEP_NS without a yield
 * first: beside a busy process that yield costs the process's whole time slice (Linux's EEVDF
 * runs it to its deadline), milliseconds per wait, a swap's two waits a rank made shm and cma
 * 9x slower than p2p on Open MPI, whose ranks are bound to a core each (docs/install.md).
 * Anything shorter, or a pause that ran nothing else, is not a busy node: at 20 us, without
 * the switch count, a quiet VM's waits slept (~50 us each) most of the time (docs/install.md).
 * Oversubscribed, a yield that ran another rank for HS_RELAX_RAN_NS ends the wait's yields. */
void hs__relax(unsigned *spins) {
  unsigned s = ++*spins;
  if (s <= HS_RELAX_SPINS) return;
  int sleep = idle_sleep();
  int sleeping = s > HS_RELAX_SLEEPING || (s > HS_RELAX_SPINS + HS_RELAX_YIELDS && sleep == 1);
  if (!sleeping && sleep == -1 && s == HS_RELAX_SPINS + 1) {
    sleeping = busy_lately();
    if (!sleeping) wait_switches = involuntary_switches();
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
  if (sleep == 1) {
    if (t1 - t0 > HS_RELAX_RAN_NS) *spins = HS_RELAX_SLEEPING;
    return;
  }
  if (t1 - t0 > HS_RELAX_BUSY_NS) {
    long now_switches = involuntary_switches();
    if (now_switches >= 0 && wait_switches >= 0 && now_switches == wait_switches) return;
    if (hs__relax_strike(t1)) *spins = HS_RELAX_SLEEPING; /* else a lone one: keep yielding */
  }
}
