/* Test-launch helper (LD_PRELOAD, never linked into haloswap): MPI's waits give up the CPU.
 *
 * MPI libraries wait for a message by polling their progress engine. With more ranks than
 * cores, or with the cores busy with other work (a shared login node), a rank that polls
 * through its time slice keeps the rank it waits for off the core, so each message hop costs
 * a scheduler slice (docs/install.md, "Oversubscribed MPICH" and "A loaded machine").
 * - MPICH 4.0 (ch4:ucx) never yields (its only yield is a thread-lock yield, a no-op in
 *   single-threaded runs; 4.0 has no CVAR for it): its progress loop calls ucp_worker_progress
 *   on every iteration.
 * - Open MPI 4.1 with mpi_yield_when_idle calls sched_yield after an idle opal_progress, but
 *   a yielding rank still runs its full share against busy processes.
 * This shim wraps both progress calls and, after HS_IDLE_YIELD_SPINS consecutive idle polls
 * (default 16), sleeps for the shortest time the kernel allows (the default 50 us timer
 * slack: shorter sleeps, e.g. with a 1 us slack, wake the rank before another one ran and gain
 * nothing), handing the core to a rank that has work; a rank that sleeps when idle is also
 * the one the scheduler runs first when its message arrives, before CPU-bound processes.
 * A sleeping rank that wakes still waits for a busy process's time slice to end: the shim asks
 * the kernel for the shortest slice (HS_IDLE_SLICE_US, default 100 us, the least Linux 6.12+
 * grants; 0 keeps the default; older kernels ignore it), which lets a woken rank run first.
 * HS_IDLE_YIELD_SPINS=0 disables the sleeping. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef unsigned (*hs_ucp_progress_fn)(void *worker);
typedef int (*hs_opal_progress_fn)(void);

static long hs_spins = -1;
static __thread long hs_idle;

/* struct sched_attr of sched_setattr(2) (glibc 2.36 has no wrapper). */
typedef struct {
  uint32_t size, policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
  uint32_t util_min, util_max;
} hs_sched_attr;

/* The short slice, at load time (before MPI_Init: mpiexec's helpers and every rank). */
__attribute__((constructor)) static void hs_short_slice(void) {
  const char *e = getenv("HS_IDLE_SLICE_US");
  long us = e ? strtol(e, NULL, 10) : 100;
  hs_sched_attr a;
  memset(&a, 0, sizeof a);
  if (us <= 0 || syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0) != 0 ||
      a.policy != SCHED_OTHER)
    return;
  a.size = sizeof a;
  a.runtime = (uint64_t)us * 1000; /* a fair task's slice (Linux 6.12+); keeps its nice */
  syscall(SYS_sched_setattr, 0, &a, 0);
}

/* The wrapped function: the next definition, or (MPI loaded in a local scope, e.g. under
 * Python's dlopen) the library's own. */
static void *hs_real(const char *name, const char *lib) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    if (h) f = dlsym(h, name);
  }
  return f;
}

static long hs_spins_get(void) {
  long s = __atomic_load_n(&hs_spins, __ATOMIC_ACQUIRE);
  if (s < 0) {
    const char *e = getenv("HS_IDLE_YIELD_SPINS");
    s = e ? strtol(e, NULL, 10) : 16;
    if (s < 0) s = 0;
    __atomic_store_n(&hs_spins, s, __ATOMIC_RELEASE);
  }
  return s;
}

/* One poll of the progress engine made `events` progress. */
static void hs_after_poll(long events) {
  long spins = hs_spins_get();
  if (events != 0 || spins == 0) {
    hs_idle = 0;
  } else if (++hs_idle >= spins) {
    /* sched_yield is not enough (measured 5x slower): the kernel often picks the yielder again. */
    struct timespec ts = {0, 1};
    hs_idle = 0;
    nanosleep(&ts, NULL);
  }
}

unsigned ucp_worker_progress(void *worker) {
  static hs_ucp_progress_fn real;
  hs_ucp_progress_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (hs_ucp_progress_fn)hs_real("ucp_worker_progress", "libucp.so.0");
    __atomic_store_n(&real, f, __ATOMIC_RELEASE);
  }
  unsigned n = f(worker);
  hs_after_poll(n);
  return n;
}

int opal_progress(void) {
  static hs_opal_progress_fn real;
  hs_opal_progress_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (hs_opal_progress_fn)hs_real("opal_progress", "libopen-pal.so.40");
    __atomic_store_n(&real, f, __ATOMIC_RELEASE);
  }
  int n = f();
  hs_after_poll(n);
  return n;
}
