/* pingwait: two processes hand a token back and forth through shared memory (about 20 us of
 * work per turn), each waiting with strategy S, bound to CPUs 0 and 1 or not: the on-node
 * waits of src/core/relax.c in miniature (docs/install.md, "A loaded machine").
 *
 *   cc -O2 -o pingwait tools/pingwait.c && build/busy -- ./pingwait S BIND ROUNDS
 *
 * S: spin | yield | sleep (nanosleep 1 ns) | futex | relaxw (yield, and sleep for the rest of
 * the wait once a yield took over 20 us: the probe at every wait) | relax (that mark kept for
 * the rest of the run; haloswap keeps it 100 ms). Prints the microseconds per round trip. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static long long nsnow(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
typedef struct { _Atomic unsigned turn; _Atomic unsigned waiters; } shr;
static const char *S;
static void waitfor(shr *s, unsigned want) {
  unsigned spins = 0;
  while (atomic_load(&s->turn) != want) {
    spins++;
    if (!strcmp(S, "spin")) continue;
    if (spins < 32) continue;
    if (!strcmp(S, "yield")) sched_yield();
    else if (!strcmp(S, "sleep")) { struct timespec ts = {0, 1}; nanosleep(&ts, NULL); }
    else if (!strcmp(S, "futex")) {
      unsigned v = atomic_load(&s->turn);
      if (v == want) break;
      atomic_fetch_add(&s->waiters, 1);
      syscall(SYS_futex, &s->turn, FUTEX_WAIT, v, NULL, NULL, 0);
      atomic_fetch_sub(&s->waiters, 1);
    } else if (!strcmp(S, "relaxw")) { /* hs__relax as is: the yield probe again every wait */
      if (spins > 100000) { struct timespec ts = {0, 1}; nanosleep(&ts, NULL); }
      else { long long t0 = nsnow(); sched_yield(); if (nsnow() - t0 > 20000) spins = 100001; }
    } else if (!strcmp(S, "relax")) { /* yield, sleep once a yield took > 20 us */
      static int sl = 0;
      if (sl) { struct timespec ts = {0, 1}; nanosleep(&ts, NULL); }
      else { long long t0 = nsnow(); sched_yield(); if (nsnow() - t0 > 20000) sl = 1; }
    }
  }
}
static void give(shr *s, unsigned v) {
  atomic_store(&s->turn, v);
  if (!strcmp(S, "futex") && atomic_load(&s->waiters)) syscall(SYS_futex, &s->turn, FUTEX_WAKE, 1, NULL, NULL, 0);
}
int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: pingwait spin|yield|sleep|futex|relaxw|relax BIND(0|1) ROUNDS\n");
    return 2;
  }
  S = argv[1]; int pin = atoi(argv[2]); int n = atoi(argv[3]);
  shr *s = mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0);
  pid_t c = fork();
  int me = c == 0;
  if (pin) { cpu_set_t m; CPU_ZERO(&m); CPU_SET(me, &m); sched_setaffinity(0, sizeof m, &m); }
  double t0 = now();
  for (int i = 0; i < n; i++) {
    /* turn 2i: parent's; 2i+1: child's */
    waitfor(s, 2u*i + me);
    /* some work: ~20 us */
    volatile double x = 0; for (int k = 0; k < 20000; k++) x += k;
    give(s, 2u*i + me + 1);
  }
  if (me) return 0;
  waitpid(c, NULL, 0);
  printf("%s pin=%d: %.1f us per round trip\n", S, pin, (now() - t0) / n * 1e6);
  return 0;
}
