/* Which transports a test program runs, and what it reports when one cannot run here: a
 * transport not usable here is a skip (exit 77, CTest's skip), never a pass. */
#ifndef HS_TEST_TRANSPORTS_H
#define HS_TEST_TRANSPORTS_H

#include "haloswap.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* auto in tests of the plan it delegates to, not of its choice: one short round per candidate
 * (every candidate is still made and checked); tests/transports/auto tests the trial. */
#define TEST_AUTO_BRIEF "auto:rounds=1,swaps=1"

/* Whether a default transport list (every registered one) takes name: shmem opts in with an
 * environment of its own (HALOSWAP_SHMEM=1), so it runs where that is set or when named. */
static inline int test_default_transport(const char *name) {
  return strcmp(name, "shmem") || getenv("HALOSWAP_SHMEM");
}

/* Whether the transport of spec can run on MPI_COMM_WORLD (collective). If not, rank 0 prints
 * why, and it counts as not usable here (*unusable) when one of optional (--may-be-unusable)
 * names it, else as a failure (*failed). */
static inline int test_transport_usable(const char *spec, const char **optional,
                                        int noptional, int *unusable, int *failed) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char name[64], why[256] = "";
  snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
  if (hs_transport_available(MPI_COMM_WORLD, name, why, sizeof why) == HS_OK) return 1;
  int may = 0;
  for (int i = 0; i < noptional; i++) may |= !strcmp(optional[i], name);
  if (rank == 0)
    printf("%s transport %s: not usable here (%s)\n", may ? "skip" : "FAIL", name,
           why[0] ? why : hs_error_message());
  ++*(may ? unusable : failed);
  return 0;
}

/* A test program's exit status: 1 on a failure, 77 (CTest: skipped, never passed) if a
 * transport was not usable here, else 0 if something passed, else none. */
static inline int test_exit_status(int passed, int failed, int unusable, int none) {
  return failed ? 1 : unusable ? 77 : passed ? 0 : none;
}

#endif
