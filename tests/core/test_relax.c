/* The on-node waits' busy-node rule (src/core/relax.c): a slow yield that ran another task
 * marks the cores busy only when another came within 200 ms before it. A lone one (a helper
 * thread or the kernel on the core) must not: in GHEX's cartex it put the next 100 ms of
 * waits to sleep and made 200 swaps 2x slower. Serial; the times are given, not waited for. */
#define _POSIX_C_SOURCE 200809L /* setenv, clock_gettime */
#include "hs_node.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int bad = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    printf("test_relax: %s\n", what);
    bad++;
  }
}

int main(void) {
  unsetenv("HALOSWAP_IDLE_SLEEP"); /* decided by the yields, not by oversubscription */
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  unsetenv("MPI_LOCALNRANKS");
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long ms = 1000000LL, t = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
  expect(!hs__cores_contended(), "contended before any slow yield");
  expect(!hs__relax_strike(t), "the first slow yield marked the cores busy");
  expect(!hs__cores_contended(), "contended after one slow yield");
  expect(hs__relax_strike(t + 1 * ms), "a second slow yield 1 ms later did not mark them busy");
  expect(hs__cores_contended(), "not contended after two slow yields 1 ms apart");
  /* one period later beside a busy process: the last one is still within the 200 ms */
  expect(hs__relax_strike(t + 101 * ms), "a slow yield 100 ms after a confirmed one did not count");
  /* quiet again: a lone slow yield 250 ms after the last does not */
  expect(!hs__relax_strike(t + 351 * ms), "a lone slow yield 250 ms after the last counted");
  expect(hs__relax_strike(t + 352 * ms), "the next one 1 ms later did not count");
  printf("test_relax: %s (%d problems)\n", bad ? "FAIL" : "ok", bad);
  return bad ? 1 : 0;
}
