/* One OpenSHMEM runtime for the shmem transport and the remote access layer's shmem back end.
 * A program that uses both, in either order, and ends with MPI_Finalize or hs_ra_finalize
 * must call shmem_init exactly once and shmem_finalize exactly once; every live plan or layer
 * holds one reference on the runtime; OpenSHMEM stays usable after all users were freed (it
 * cannot be restarted). shmem_init and shmem_finalize are intercepted here through OSHMEM's
 * profiling names (pshmem_*), so every call the library makes is counted.
 * Usage: test_shmem_runtime --order plan-first|ra-first --end mpi|ra
 * Run like the shmem transport's tests: HALOSWAP_SHMEM=1, OMPI_MCA_osc=^rdma. */
#include "halo_check.h"
#include "haloswap.h"
#include "haloswap_ra.h"

#include <pshmem.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n_init, n_fini;
void shmem_init(void) {
  n_init++;
  pshmem_init();
}
void shmem_finalize(void) {
  n_fini++;
  pshmem_finalize();
}

int hs__shmem_refs(void); /* internal (src/core/hs_shmem_runtime.h) */

static int me, P;

/* A shmem-transport plan on one int32 field with its oracle. */
typedef struct {
  hs_decomp d;
  hs_plan p;
  tfield tf;
  tgeom g;
  void *data;
  int swaps;
} plan_case;

static void plan_open(plan_case *c) {
  memset(c, 0, sizeof *c);
  c->d = test_periodic_decomp(2, 10, 9, 1);
  int local[3] = {hs_decomp_local_extent(c->d, 0), hs_decomp_local_extent(c->d, 1), 1};
  int halo[3] = {1, 1, 0};
  tfield_init(&c->tf, HS_INT32, HS_LAYOUT_XFAST, local, halo, 2);
  c->data = calloc(c->tf.n, sizeof(int32_t));
  hs_field f = hs_field_array(HS_INT32, c->data, HS_LAYOUT_XFAST, 1);
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.nfields = 1;
  pd.fields = &f;
  pd.transport_name = "shmem";
  tgeom_from(&c->g, c->d, &pd);
  CHECK(hs_plan_create(c->d, &pd, &c->p) == HS_OK, "plan (shmem transport): %s",
        hs_error_message());
}

/* One swap, every cell checked against the analytic oracle. */
static void plan_swap(plan_case *c) {
  if (!c->p) return;
  int s = c->swaps++;
  tfield_fill(&c->tf, c->data, &c->g, 0, s, 1);
  CHECK(hs_swap(c->p, NULL) == HS_OK, "swap %d: %s", s, hs_error_message());
  long bad = tfield_check(&c->tf, c->data, &c->g, 0, s, "shmem transport", me, 1);
  CHECK(bad == 0, "swap %d: %ld wrong cells", s, bad);
}

static void plan_close(plan_case *c) {
  CHECK(hs_plan_free(&c->p) == HS_OK, "plan free: %s", hs_error_message());
  hs_decomp_free(&c->d);
  free(c->data);
}

static hs_ra ra_open(void) {
  hs_ra_desc d;
  hs_ra_desc_init(&d);
  d.backend = HS_RA_SHMEM;
  d.capacity = 4;
  hs_ra ra = NULL;
  CHECK(hs_ra_create(MPI_COMM_WORLD, &d, &ra) == HS_OK, "ra (shmem back end): %s",
        hs_error_message());
  return ra;
}

/* A ring of puts and gets: each rank writes element 0 of its right neighbour and reads
 * element 1 of it, which its owner wrote locally. */
static void ra_round(hs_ra ra, int round) {
  if (!ra) return;
  int right = (me + 1) % P, left = (me + P - 1) % P;
  hs_ra_local(ra, 0)[1] = 1000 * me + round;
  CHECK(hs_ra_put(ra, 0, right, 0, 100 * me + round) == HS_OK, "put: %s", hs_error_message());
  CHECK(hs_ra_sync(ra) == HS_OK, "sync: %s", hs_error_message());
  int32_t v = -1;
  CHECK(hs_ra_get(ra, 0, right, 1, &v) == HS_OK, "get: %s", hs_error_message());
  CHECK(v == 1000 * right + round, "round %d: get = %d, expected %d", round, v,
        1000 * right + round);
  int32_t mine = hs_ra_local(ra, 0)[0];
  CHECK(mine == 100 * left + round, "round %d: element 0 = %d, expected %d", round, mine,
        100 * left + round);
  CHECK(hs_ra_sync(ra) == HS_OK, "sync: %s", hs_error_message());
}

static void expect_refs(int want, const char *when) {
  CHECK(hs__shmem_refs() == want, "%s: %d runtime references, expected %d", when,
        hs__shmem_refs(), want);
  CHECK(n_init == 1, "%s: shmem_init called %d times", when, n_init);
  CHECK(n_fini == 0, "%s: shmem_finalize called %d times", when, n_fini);
}

int main(int argc, char **argv) {
  const char *order = "plan-first", *end = "mpi";
  for (int k = 1; k + 1 < argc; k += 2) {
    if (!strcmp(argv[k], "--order")) order = argv[k + 1];
    else if (!strcmp(argv[k], "--end")) end = argv[k + 1];
  }
  int plan_first = !strcmp(order, "plan-first"), end_ra = !strcmp(end, "ra");
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  test_rank = me;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  CHECK(n_init == 0 && hs__shmem_refs() == 0, "OpenSHMEM started before any user");

  plan_case pc;
  hs_ra ra = NULL;
  if (plan_first) {
    plan_open(&pc);
    expect_refs(1, "plan created");
    plan_swap(&pc);
    ra = ra_open();
    expect_refs(2, "plan and layer created");
  } else {
    ra = ra_open();
    expect_refs(1, "layer created");
    ra_round(ra, 0);
    plan_open(&pc);
    expect_refs(2, "layer and plan created");
  }
  /* Both in use, interleaved. */
  plan_swap(&pc);
  ra_round(ra, 1);
  plan_swap(&pc);
  /* Free one; the other keeps working. */
  if (plan_first) {
    plan_close(&pc);
    expect_refs(1, "plan freed");
    ra_round(ra, 2);
    hs_ra_free(&ra);
  } else {
    hs_ra_free(&ra);
    expect_refs(1, "layer freed");
    plan_swap(&pc);
    plan_close(&pc);
  }
  expect_refs(0, "both freed");
  /* No user left: OpenSHMEM must still be up (it cannot restart) and be reused. */
  ra = ra_open();
  plan_open(&pc);
  expect_refs(2, "both created again");
  ra_round(ra, 3);
  plan_swap(&pc);
  plan_close(&pc);
  hs_ra_free(&ra);
  expect_refs(0, "both freed again");

  int total = 0;
  MPI_Allreduce(&test_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (end_ra)
    CHECK(hs_ra_finalize() == HS_OK, "hs_ra_finalize failed");
  else
    MPI_Finalize();
  /* MPI is gone: each rank judges its own counts. */
  int fin = 0;
  MPI_Finalized(&fin);
  CHECK(fin, "MPI is not finalised after %s", end_ra ? "hs_ra_finalize" : "MPI_Finalize");
  CHECK(n_init == 1 && n_fini == 1, "shmem_init called %d times, shmem_finalize %d times", n_init,
        n_fini);
  total += test_failures;
  if (me == 0)
    printf("test_shmem_runtime --order %s --end %s: %s (shmem_init x%d, shmem_finalize x%d)\n",
           order, end, total ? "FAILED" : "passed", n_init, n_fini);
  return total ? 1 : 0;
}
