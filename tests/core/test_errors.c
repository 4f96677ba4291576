/* Error paths: every bad input returns its error code on every rank (no hang), with a message
 * that names the argument, its value and the limit. Inputs that are bad on one rank only must
 * fail on all ranks. */
#define _POSIX_C_SOURCE 200809L
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, passed, failed;

/* Every rank must see `want` and a message containing `needle`. */
static void expect(const char *what, int rc, int want, const char *needle) {
  int ok = (rc == want) && (!needle || strstr(hs_error_message(), needle) != NULL);
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok)
    fprintf(stderr, "[rank %d] %s: got %s '%s', want %s containing '%s'\n", rank, what,
            hs_status_name(rc), hs_error_message(), hs_status_name(want), needle ? needle : "");
  if (all) passed++;
  else failed++;
}

/* The 8 x 8 x 2 grid the decomposition cases start from, the rest defaults. */
static hs_decomp_desc grid_desc(void) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.global[0] = dd.global[1] = 8;
  dd.global[2] = 2;
  return dd;
}

/* A plan description of the first n fields of f, the rest defaults. */
static hs_plan_desc fields_desc(int n, hs_field *f) {
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.nfields = n;
  pd.fields = f;
  return pd;
}

/* A one-field plan naming transport spec must fail with HS_ERR_ARG, the message containing
 * needle. */
static void expect_bad_spec(hs_decomp d, hs_field *f, const char *what, const char *spec,
                            const char *needle) {
  hs_plan_desc pd = fields_desc(1, f);
  hs_plan p = NULL;
  pd.transport_name = spec;
  expect(what, hs_plan_create(d, &pd, &p), HS_ERR_ARG, needle);
}

static hs_decomp make_decomp(int nx, int ny) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.global[0] = nx;
  dd.global[1] = ny;
  dd.global[2] = 4;
  hs_decomp d = NULL;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    fprintf(stderr, "make_decomp failed: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return d;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int last = size - 1;
  hs_decomp_desc dd;
  hs_decomp d;

  /* ---- decomposition */
  dd = grid_desc();
  dd.procs[0] = size + 1;
  dd.procs[1] = 1;
  expect("procs do not match the communicator", hs_decomp_create(MPI_COMM_WORLD, &dd, &d),
         HS_ERR_ARG, "communicator size");

  dd = grid_desc();
  dd.placement = 7;
  expect("placement out of range", hs_decomp_create(MPI_COMM_WORLD, &dd, &d), HS_ERR_ARG,
         "placement = 7, must be HS_PLACE_RANK (0) or HS_PLACE_NODE (1)");
  dd.placement = HS_PLACE_NODE;
  dd.node_size = -2;
  expect("negative node_size", hs_decomp_create(MPI_COMM_WORLD, &dd, &d), HS_ERR_ARG,
         "node_size = -2, must be 0");

  hs_decomp_desc_init(&dd);
  dd.ndims = 4;
  expect("ndims out of range", hs_decomp_create(MPI_COMM_WORLD, &dd, &d), HS_ERR_ARG,
         "ndims = 4, must be 2 or 3");

  hs_decomp_desc_init(&dd);
  dd.global[0] = 1;
  dd.global[1] = 8;
  dd.global[2] = 2;
  dd.procs[0] = size;
  dd.procs[1] = 1;
  expect("more ranks than points", hs_decomp_create(MPI_COMM_WORLD, &dd, &d),
         size > 1 ? HS_ERR_ARG : HS_OK, size > 1 ? "exceeds global[0] = 1" : NULL);
  if (size == 1) hs_decomp_free(&d);

  dd = grid_desc();
  if (rank == last) dd.global[2] = 0; /* bad on one rank only */
  expect("bad extent on one rank", hs_decomp_create(MPI_COMM_WORLD, &dd, &d), HS_ERR_ARG,
         "global[2] = 0, must be >= 1");

  dd = grid_desc();
  if (rank == last) dd.global[0] = 9; /* valid alone, inconsistent across ranks */
  expect("ranks disagree on the grid", hs_decomp_create(MPI_COMM_WORLD, &dd, &d),
         size > 1 ? HS_ERR_MISMATCH : HS_OK, size > 1 ? "disagree on global[0]" : NULL);
  if (size == 1) hs_decomp_free(&d);

  dd = grid_desc();
  dd.cart = MPI_COMM_WORLD;
  expect("cart is not Cartesian", hs_decomp_create(MPI_COMM_WORLD, &dd, &d), HS_ERR_ARG,
         "not a Cartesian communicator");

  /* An existing Cartesian communicator is accepted and its shape used. */
  {
    int dims[2] = {0, 0}, per[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
    hs_decomp_desc_init(&dd);
    dd.ndims = 2;
    dd.global[0] = dd.global[1] = 12;
    dd.cart = cart;
    int rc = hs_decomp_create(MPI_COMM_WORLD, &dd, &d);
    expect("existing Cartesian communicator", rc, HS_OK, NULL);
    if (rc == HS_OK) {
      int ok = hs_decomp_procs(d, 0) == dims[0] && hs_decomp_periodic(d, 1) == 0;
      expect("existing Cartesian communicator: shape", ok ? HS_OK : HS_ERR_INTERNAL, HS_OK, NULL);
      hs_decomp_free(&d);
    }
    MPI_Comm_free(&cart);
  }

  /* ---- plans */
  d = make_decomp(16, 12);
  int nx = hs_decomp_local_extent(d, 0), ny = hs_decomp_local_extent(d, 1);
  size_t n = (size_t)(nx + 4) * (ny + 4) * 4;
  double *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
  hs_field f[2] = {hs_field_array(HS_FLOAT64, a, HS_LAYOUT_ZFAST, 2),
                   hs_field_array(HS_FLOAT64, b, HS_LAYOUT_ZFAST, 2)};
  f[0].halo[2] = f[1].halo[2] = 0;
  hs_plan_desc pd;
  hs_plan p = NULL;

  pd = fields_desc(0, f);
  expect("zero fields", hs_plan_create(d, &pd, &p), HS_ERR_ARG, "nfields = 0, must be 1..");

  pd = fields_desc(1, f);
  pd.depth[0] = -5;
  expect("negative depth", hs_plan_create(d, &pd, &p), HS_ERR_ARG,
         "depth[0] = -5, must be >= 0");

  pd = fields_desc(1, f);
  pd.depth[2] = 1;
  expect("depth on an axis with no halo", hs_plan_create(d, &pd, &p), HS_ERR_ARG,
         "fields[0].halo[2] = 0 is smaller than depth[2] = 1");

  {
    hs_decomp thin;
    hs_decomp_desc_init(&dd);
    dd.global[0] = 2 * size;
    dd.global[1] = 8;
    dd.global[2] = 2;
    dd.procs[0] = size;
    dd.procs[1] = 1;
    hs_decomp_create(MPI_COMM_WORLD, &dd, &thin);
    double *t = calloc((size_t)(2 + 8) * (8 + 8) * 2, sizeof *t);
    hs_field tf = hs_field_array(HS_FLOAT64, t, HS_LAYOUT_ZFAST, 4);
    tf.halo[2] = 0;
    hs_plan_desc_init(&pd);
    pd.nfields = 1;
    pd.fields = &tf;
    pd.depth[0] = pd.depth[1] = 3;
    expect("depth larger than a local extent", hs_plan_create(thin, &pd, &p), HS_ERR_ARG,
           "depth[0] = 3 is larger than the local extent 2");
    free(t);
    hs_decomp_free(&thin);
  }

  pd = fields_desc(2, f);
  hs_field fnull[2] = {f[0], f[1]};
  if (rank == last) fnull[1].data = NULL;
  pd.fields = fnull;
  expect("NULL array on one rank", hs_plan_create(d, &pd, &p), HS_ERR_ARG,
         "fields[1].data is NULL");

  expect_bad_spec(d, f, "unknown transport name", "nosuch", "unknown transport 'nosuch' (built: ");

  pd = fields_desc(1, f);
  pd.transport = (hs_transport_id)99;
  expect("transport enum out of range", hs_plan_create(d, &pd, &p), HS_ERR_ARG,
         "transport = 99 is not an hs_transport_id");

  expect_bad_spec(d, f, "unknown transport option", "p2p:persistnet=1",
                  "has no option 'persistnet' (from the transport name; its options: dtype, persistent)");

  /* Every transport's values are range-checked by the core, with the same message. */
  const struct {
    const char *spec, *needle;
  } bad_values[] = {
      {"p2p:dtype=7", "transport p2p: option dtype = '7' is not allowed (allowed: one of 0|1|recv|send|auto"},
      {"p2p:persistent=-1", "option persistent = '-1' is not allowed (allowed: 0 or 1"},
      {"auto:rounds=65", "option rounds = '65' is not allowed (allowed: an integer in [1, 64]"},
      {"rma-fence:drive=sideways", "option drive = 'sideways' is not allowed (allowed: one of put|get"},
      {"shm:node_size=x", "option node_size = 'x' is not allowed"},
  };
  for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(bad_values[i].spec, ":"), bad_values[i].spec);
    char why[256];
    if (hs_transport_available(MPI_COMM_WORLD, name, why, sizeof why) != HS_OK &&
        !strstr(hs_error_message(), "usable"))
      continue; /* not built here: its options cannot be checked */
    expect_bad_spec(d, f, bad_values[i].spec, bad_values[i].spec, bad_values[i].needle);
  }

  /* A known transport that this build leaves out is unavailable, not an unknown id. */
  pd = fields_desc(1, f);
  pd.transport = HS_TRANSPORT_SHMEM;
  {
    int rc = hs_plan_create(d, &pd, &p);
    expect("HS_TRANSPORT_SHMEM where it is not usable", rc, HS_ERR_UNAVAILABLE, "shmem");
    if (rc == HS_OK) hs_plan_free(&p);
    pd.transport = HS_TRANSPORT_DEFAULT;
    pd.transport_name = "shmem"; /* by name: the same, with the reason */
    rc = hs_plan_create(d, &pd, &p);
    expect("transport name shmem where it is not usable", rc, HS_ERR_UNAVAILABLE, "shmem");
    if (rc == HS_OK) hs_plan_free(&p);
  }

  pd = fields_desc(1, f);
  setenv("HALOSWAP_TRANSPORT", "nosuch-env", 1);
  expect("HALOSWAP_TRANSPORT names an unknown transport", hs_plan_create(d, &pd, &p),
         HS_ERR_ARG, "unknown transport 'nosuch-env'");
  unsetenv("HALOSWAP_TRANSPORT");

  if (size > 1) {
    hs_plan_desc_init(&pd);
    pd.fields = f;
    pd.nfields = rank == 0 ? 2 : 1;
    expect("plans differ across ranks (nfields)", hs_plan_create(d, &pd, &p), HS_ERR_MISMATCH,
           "disagree on nfields (values from 1 to 2)");

    hs_plan_desc_init(&pd);
    pd.fields = f;
    pd.nfields = 1;
    pd.stencil = rank == 0 ? HS_STENCIL_STAR : HS_STENCIL_BOX;
    expect("plans differ across ranks (stencil)", hs_plan_create(d, &pd, &p), HS_ERR_MISMATCH,
           "disagree on stencil");

    hs_plan_desc_init(&pd);
    pd.fields = f;
    pd.nfields = 1;
    pd.transport_name = rank == 0 ? "p2p:persistent=0" : "p2p";
    expect("plans differ across ranks (options)", hs_plan_create(d, &pd, &p), HS_ERR_MISMATCH,
           "disagree on the transport options");
  }

  /* ---- swap state */
  pd = fields_desc(2, f);
  pd.depth[0] = pd.depth[1] = 2;
  int rc = hs_plan_create(d, &pd, &p);
  expect("valid plan", rc, HS_OK, NULL);
  if (rc == HS_OK) {
    /* A misuse that begins no round is refused on this rank and leaves the plan usable
     * (docs/design.md, "Errors during a swap"), on every rank alike here. */
    expect("complete without start", hs_swap_complete(p, NULL), HS_ERR_STATE,
           "no swap was started");
    expect("a swap after complete without start", hs_swap(p, NULL), HS_OK, NULL);
    int done = 0;
    expect("test without start", hs_swap_test(p, NULL, &done), HS_ERR_STATE,
           "no swap was started");
    expect("a swap after test without start", hs_swap(p, NULL), HS_OK, NULL);
    expect("reverse complete without start", hs_reverse_complete(p, NULL), HS_ERR_STATE,
           "no reverse exchange was started");
    expect("a reverse after reverse complete without start", hs_reverse(p, HS_OP_SUM, NULL),
           HS_OK, NULL);
    expect("start", hs_swap_start(p, NULL), HS_OK, NULL);
    expect("start twice", hs_swap_start(p, NULL), HS_ERR_STATE, "already in progress");
    expect("free during a swap", hs_plan_free(&p), HS_ERR_STATE, "in progress");
    expect("complete of the swap started twice: completes as started",
           hs_swap_complete(p, NULL), HS_OK, NULL);
    expect("reverse start", hs_reverse_start(p, HS_OP_SUM, NULL), HS_OK, NULL);
    expect("reverse start twice", hs_reverse_start(p, HS_OP_SUM, NULL), HS_ERR_STATE,
           "already in progress");
    expect("reverse complete of the reverse started twice", hs_reverse_complete(p, NULL), HS_OK,
           NULL);
    expect("a swap after the misuses", hs_swap(p, NULL), HS_OK, NULL);
    /* A mistake where a round begins fails the plan: its later swaps say so, it frees, and a
     * new plan works. */
    void *bad[2] = {(char *)a + 1, NULL};
    expect("misaligned per-swap array", hs_swap(p, bad), HS_ERR_ARG, "is not aligned");
    expect("a swap of a failed plan", hs_swap(p, NULL), HS_ERR_STATE,
           "the plan failed in an earlier swap");
    expect("free", hs_plan_free(&p), HS_OK, NULL);
    expect("a new plan", hs_plan_create(d, &pd, &p), HS_OK, NULL);
    void *arrays[2] = {NULL, NULL};
    expect("per-swap arrays with NULL entries keep the registered ones", hs_swap(p, arrays),
           HS_OK, NULL);
    expect("a swap", hs_swap(p, NULL), HS_OK, NULL);
    hs_plan_stats st;
    hs_plan_get_stats(p, &st);
    expect("stats count swaps", st.swaps == 2 ? HS_OK : HS_ERR_INTERNAL, HS_OK, NULL);
    expect("free", hs_plan_free(&p), HS_OK, NULL);
    expect("free sets the handle to NULL", p == NULL ? HS_OK : HS_ERR_INTERNAL, HS_OK, NULL);
  }
  expect("NULL plan", hs_swap_start(NULL, NULL), HS_ERR_ARG, "plan is NULL");

  free(a);
  free(b);
  hs_decomp_free(&d);
  if (rank == 0) printf("test_errors at %d ranks: %d passed, %d failed\n", size, passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
