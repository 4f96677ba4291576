/* Test-launch helper for MPICH ch4:ucx (LD_PRELOAD, never linked into haloswap).
 *
 * MPICH 4.0's ch4 progress engine waits by calling MPID_Progress_test in a loop and never gives
 * up the CPU (its only yield is a thread-lock yield, a no-op in single-threaded runs; 4.0 has no
 * CVAR for it). With more ranks than cores every waiting rank spins through its whole time
 * slice, so each message hop costs a scheduler slice: 9 ranks on 2 cores run ~100x slower than
 * Open MPI with mpi_yield_when_idle. This shim wraps ucp_worker_progress, which that loop calls
 * on every iteration, and after HS_IDLE_YIELD_SPINS consecutive idle polls (default 16) sleeps
 * for the shortest time the kernel allows (the default 50 us timer slack: shorter sleeps, e.g.
 * with a 1 us slack, wake the rank before another one ran and gain nothing), handing the core
 * to a rank that has work.
 * HS_IDLE_YIELD_SPINS=0 disables it. See docs/install.md ("Oversubscribed MPICH"). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned (*hs_progress_fn)(void *worker);

static hs_progress_fn hs_real_progress;
static long hs_spins = -1;
static __thread long hs_idle;

static void hs_idle_init(void) {
  hs_real_progress = (hs_progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
  if (!hs_real_progress) {
    /* UCX loaded in a local scope (MPI under Python's dlopen): ask the library itself. */
    void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (ucp) hs_real_progress = (hs_progress_fn)dlsym(ucp, "ucp_worker_progress");
  }
  const char *e = getenv("HS_IDLE_YIELD_SPINS");
  long s = e ? strtol(e, NULL, 10) : 16;
  __atomic_store_n(&hs_spins, s < 0 ? 0 : s, __ATOMIC_RELEASE);
}

unsigned ucp_worker_progress(void *worker) {
  if (__atomic_load_n(&hs_spins, __ATOMIC_ACQUIRE) < 0)
    hs_idle_init();
  unsigned n = hs_real_progress(worker);
  if (n != 0 || hs_spins == 0) {
    hs_idle = 0;
  } else if (++hs_idle >= hs_spins) {
    /* sched_yield is not enough (measured 5x slower): the kernel often picks the yielder again. */
    struct timespec ts = {0, 1};
    hs_idle = 0;
    nanosleep(&ts, NULL);
  }
  return n;
}
