/* Remote access layer on its own: puts, gets, owner writes, syncs, counters and argument
 * errors, for every back end named on the command line (default: p2p rma rma-epoch).
 * "--unavailable NAME": NAME must be refused on every rank with HS_ERR_UNAVAILABLE and a
 * message naming it (a back end this build lacks, e.g. shmem without OpenSHMEM). */
#include "haloswap_ra.h"
#include "halo_check.h"

#include <stdio.h>
#include <string.h>


static void run(const char *name, int use_peers) {
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  test_rank = me;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  hs_ra_desc d;
  hs_ra_desc_init(&d);
  CHECK(hs_ra_backend_parse(name, &d.backend, &d.rma_sync) == HS_OK, "parse %s", name);
  d.narrays = 2;
  d.capacity = 16 + me; /* capacities differ per rank */
  int peers[64], np = 0;
  for (int r = 0; r < P && np < 64; r++) peers[np++] = r;
  if (use_peers) {
    d.npeers = np;
    d.peers = peers;
  }
  hs_ra ra = NULL;
  int rc = hs_ra_create(MPI_COMM_WORLD, &d, &ra);
  CHECK(rc == HS_OK, "%s: create: %s", name, hs_error_message());
  if (rc != HS_OK) return;
  CHECK(hs_ra_capacity(ra, P - 1) == 16 + P - 1, "capacity of the last rank");
  /* Every rank writes element `me` of array 0 on every other rank, and will read element `me`
   * of array 1 there. */
  int tr[128], ti[128], n = 0;
  for (int r = 0; r < P; r++)
    if (r != me) {
      tr[n] = r;
      ti[n++] = me;
      tr[n] = r; /* duplicates are allowed */
      ti[n++] = me;
    }
  CHECK(hs_ra_set_targets(ra, n, tr, ti) == HS_OK, "%s: set_targets: %s", name, hs_error_message());
  CHECK(hs_ra_clear(ra) == HS_OK, "%s: clear", name);
  hs_ra_reset_stats(ra);
  CHECK(hs_ra_epoch_begin(ra) == HS_OK, "%s: epoch_begin", name);
  for (int r = 0; r < P; r++)
    if (r != me) CHECK(hs_ra_put(ra, 0, r, me, 1000 * me + r) == HS_OK, "%s: put: %s", name, hs_error_message());
  hs_ra_put(ra, 0, me, me, -5); /* own element: a plain store */
  CHECK(hs_ra_sync(ra) == HS_OK, "%s: sync", name);
  int32_t *a0 = hs_ra_local(ra, 0), *a1 = hs_ra_local(ra, 1);
  for (int s = 0; s < P; s++) {
    int want = s == me ? -5 : 1000 * s + me;
    CHECK(a0[s] == want, "%s: element %d of array 0 is %d, expected %d", name, s, a0[s], want);
  }
  /* Owner writes, made visible by a sync, read remotely. */
  for (int k = 0; k < 16 + me; k++) a1[k] = 7 * me + k;
  CHECK(hs_ra_sync(ra) == HS_OK, "%s: sync 2", name);
  for (int r = 0; r < P; r++) {
    int32_t v = -1;
    CHECK(hs_ra_get(ra, 1, r, me, &v) == HS_OK, "%s: get: %s", name, hs_error_message());
    CHECK(v == 7 * r + me, "%s: get(1, %d, %d) = %d, expected %d", name, r, me, v, 7 * r + me);
  }
  /* complete + a collective deliver puts too. */
  for (int r = 0; r < P; r++)
    if (r != me) hs_ra_put(ra, 0, r, me, 1);
  CHECK(hs_ra_complete(ra, 1u) == HS_OK, "%s: complete", name);
  MPI_Barrier(MPI_COMM_WORLD);
  if (d.backend != HS_RA_P2P) CHECK(hs_ra_sync(ra) == HS_OK, "sync 3");
  for (int s = 0; s < P; s++)
    if (s != me) CHECK(a0[s] == 1, "%s: after complete element %d is %d", name, s, a0[s]);
  CHECK(hs_ra_epoch_end(ra) == HS_OK, "%s: epoch_end", name);
  hs_ra_stats st;
  hs_ra_get_stats(ra, &st);
  CHECK(st.puts == (uint64_t)(2 * (P - 1)), "%s: puts counted %llu, expected %d", name,
        (unsigned long long)st.puts, 2 * (P - 1));
  CHECK(st.gets == (uint64_t)(P - 1), "%s: gets counted %llu", name, (unsigned long long)st.gets);
  CHECK(st.syncs >= 2 && st.completes == 1, "%s: syncs %llu completes %llu", name,
        (unsigned long long)st.syncs, (unsigned long long)st.completes);

  /* Bad arguments are refused with a message naming the argument and the limit. */
  rc = hs_ra_put(ra, 0, P, 0, 1);
  CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "rank = "), "%s: bad rank: %s", name,
        hs_error_message());
  rc = hs_ra_put(ra, 0, me, 16 + me, 1);
  CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "capacity"), "%s: bad index: %s", name,
        hs_error_message());
  rc = hs_ra_get(ra, 2, me, 0, &(int32_t){0});
  CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "array = 2"), "%s: bad array: %s", name,
        hs_error_message());
  if (d.backend == HS_RA_P2P && P > 1) {
    rc = hs_ra_put(ra, 0, (me + 1) % P, 15, 1);
    CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "not declared"), "p2p undeclared: %s",
          hs_error_message());
  }
  /* A collective error: one rank's bad target list fails every rank. */
  int bad_idx = me == P - 1 ? 1000 : 0, bad_rank = 0;
  rc = hs_ra_set_targets(ra, 1, &bad_rank, &bad_idx);
  CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "indices[0] = 1000"),
        "%s: collective set_targets error: rc %d '%s'", name, rc, hs_error_message());
  hs_ra_free(&ra);
  CHECK(ra == NULL, "free");
}

static void unavailable(const char *name) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  test_rank = me;
  char why[256] = "";
  int rc = hs_ra_backend_available(name, why, sizeof why);
  CHECK(rc == HS_ERR_UNAVAILABLE && why[0], "%s: available: rc %d '%s'", name, rc, why);
  hs_ra_desc d;
  hs_ra_desc_init(&d);
  CHECK(hs_ra_backend_parse(name, &d.backend, &d.rma_sync) == HS_OK, "parse %s", name);
  hs_ra ra = NULL;
  rc = hs_ra_create(MPI_COMM_WORLD, &d, &ra);
  char want[64];
  snprintf(want, sizeof want, "back end '%s' is unavailable", name);
  CHECK(rc == HS_ERR_UNAVAILABLE && ra == NULL && strstr(hs_error_message(), want),
        "%s: create: rc %d '%s'", name, rc, hs_error_message());
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  test_rank = me;
  const char *def[] = {"p2p", "rma", "rma-epoch"};
  int n = argc > 1 ? argc - 1 : 3;
  if (argc == 3 && !strcmp(argv[1], "--unavailable")) {
    unavailable(argv[2]);
    n = 0;
  }
  for (int k = 0; k < n; k++) {
    const char *name = argc > 1 ? argv[k + 1] : def[k];
    run(name, 0);
    run(name, 1);
  }
  /* A bad description fails on every rank. */
  hs_ra_desc d;
  hs_ra_desc_init(&d);
  d.narrays = me == 0 ? 0 : 1;
  hs_ra ra = NULL;
  int rc = hs_ra_create(MPI_COMM_WORLD, &d, &ra);
  CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "narrays = 0"), "bad narrays: %d %s", rc,
        hs_error_message());
  int total = 0;
  MPI_Allreduce(&test_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("test_ra: %s (%d failures)\n", total ? "FAILED" : "passed", total);
  hs_ra_finalize();
  return total ? 1 : 0;
}
