/* The counted bad-input matrix (issue 16, item 5). Walks every kind of bad input a user can
 * give haloswap -- C API arguments, state errors, environment variables, option strings,
 * Fortran arguments (badinput_f.F90, through the Fortran module), EPIC NetCDF files for
 * parcel-cluster's reader, and mistakes made on one rank only -- and asserts for each kind:
 *   - the expected status and a message naming the argument/value (needles below);
 *   - the same status and the same message on every rank (compared with rank 0's, up to a
 *     rank naming itself where each rank made the mistake on its own: own_rank_dropped);
 *   - no hang: every case runs under alarm(CASE_SECONDS) (and CTest has a TIMEOUT);
 *   - no crash: a fatal signal names the case and fails the test;
 *   - nothing written where it should not be: sentinel-filled fields stay untouched.
 * Prints the number of kinds checked. */
#define _GNU_SOURCE /* memmem; includes POSIX 2008 */
#include "haloswap.h"
#ifdef BADINPUT_NETCDF
#include "pc.h"
#include <netcdf.h>
#endif

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CASE_SECONDS 30
#define SENTINEL -123.25

static int rank, size, last, kinds, controls, failed, skipped;
static char current[160] = "(setup)";

/* ---------------------------------------------------------------- time bound, crashes */
static void say(const char *a, const char *b) {
  ssize_t w = write(2, a, strlen(a));
  w = write(2, b, strlen(b));
  w = write(2, "\n", 1);
  (void)w;
}
static void on_alarm(int sig) {
  (void)sig;
  say("badinput: HANG (no return within the case time bound) in case: ", current);
  _exit(2);
}
static void on_crash(int sig) {
  say(sig == SIGSEGV ? "badinput: CRASH (SIGSEGV) in case: " : "badinput: CRASH (signal) in case: ",
      current);
  _exit(3);
}

/* Called by the Fortran part too. */
void badinput_begin(const char *name) {
  snprintf(current, sizeof current, "%s", name);
  alarm(CASE_SECONDS);
}

/* A mistake every rank makes at once in the middle of a swap stays on each rank (its
 * neighbours are not waiting on it; docs/design.md): each names itself ("rank R: ..."), so
 * messages are compared without a leading "rank R: " naming the rank itself. */
static const char *own_rank_dropped(const char *m, int r) {
  char pre[32];
  int n = snprintf(pre, sizeof pre, "rank %d: ", r);
  return strncmp(m, pre, (size_t)n) == 0 ? m + n : m;
}

/* One kind: every rank must return `want` with a message containing every needle (a NULL-
 * terminated list), the same status and message as rank 0, and leave its sentinels intact. */
static int check_msg(int rc, int want, int untouched, const char *msg,
                     const char *const *needles) {
  alarm(0);
  int ok = rc == want;
  char why[512] = "";
  if (!ok)
    snprintf(why, sizeof why, "status %s, want %s", hs_status_name(rc), hs_status_name(want));
  for (const char *const *n = needles; ok && want != HS_OK && *n; n++)
    if (!strstr(msg, *n)) {
      ok = 0;
      snprintf(why, sizeof why, "message lacks '%s'", *n);
    }
  if (!untouched) {
    ok = 0;
    snprintf(why, sizeof why, "memory that must stay untouched was written");
  }
  struct {
    int rc;
    char msg[1024];
  } m;
  memset(&m, 0, sizeof m);
  m.rc = rc;
  snprintf(m.msg, sizeof m.msg, "%s", msg);
  MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, MPI_COMM_WORLD);
  int same = strcmp(m.msg, msg) == 0 ||
             (own_rank_dropped(m.msg, 0) != m.msg && own_rank_dropped(msg, rank) != msg &&
              strcmp(own_rank_dropped(m.msg, 0), own_rank_dropped(msg, rank)) == 0);
  if (ok && (m.rc != rc || !same)) {
    ok = 0;
    snprintf(why, sizeof why, "differs from rank 0 (%s '%.400s')", hs_status_name(m.rc), m.msg);
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (want == HS_OK) controls++; /* a valid input next to the bad ones: not a kind */
  else kinds++;
  if (!ok)
    fprintf(stderr, "[rank %d] FAIL %s: %s; got %s '%s'\n", rank, current, why,
            hs_status_name(rc), msg);
  if (!all) failed++;
  else if (rank == 0)
    printf("ok   %-64s %s: %s\n", current, hs_status_name(rc), rc == HS_OK ? "(accepted)" : msg);
  strcpy(current, "(between cases)");
  return all;
}

static int check_v(int rc, int want, int untouched, const char *const *needles) {
  return check_msg(rc, want, untouched, hs_error_message(), needles);
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define CHECK(rc, want, untouched, ...) check_v((rc), (want), (untouched), NEEDLES(__VA_ARGS__))

/* Fortran: one kind with a single needle (the message is the library's, as in C). */
int badinput_check(int rc, int want, int untouched, const char *needle) {
  return check_v(rc, want, untouched, NEEDLES(needle));
}

static void skip(const char *name, const char *why) {
  skipped++;
  if (rank == 0) printf("SKIP %-64s %s\n", name, why);
}

/* ---------------------------------------------------------------- fixtures */
static hs_decomp dec;
static int nx, ny, nz = 3;
static double *fa, *fb; /* two fields, halo 2 in x and y, none in z, ZFAST */
static size_t fn;

static void fill(void) {
  for (size_t i = 0; i < fn; i++) fa[i] = fb[i] = SENTINEL;
}
static int untouched(void) {
  for (size_t i = 0; i < fn; i++)
    if (fa[i] != SENTINEL || fb[i] != SENTINEL) return 0;
  return 1;
}

static void never_pack(void *ctx, const hs_region *r, void *buf) {
  (void)ctx, (void)r, (void)buf;
  say("badinput: a refused plan's pack hook was called in case: ", current);
  _exit(5);
}

static hs_field fields[2];
static hs_plan_desc plan_desc(int nf) {
  fields[0] = hs_field_array(HS_FLOAT64, fa, HS_LAYOUT_ZFAST, 2);
  fields[1] = hs_field_array(HS_FLOAT64, fb, HS_LAYOUT_ZFAST, 2);
  fields[0].halo[2] = fields[1].halo[2] = 0;
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.nfields = nf;
  pd.fields = fields;
  pd.transport_name = "p2p";
  return pd;
}

/* hs_plan_create of a bad descriptor: checks the error, frees a plan created by mistake. */
static int plan_case(const char *name, hs_plan_desc pd, int want, const char *const *needles) {
  badinput_begin(name);
  fill();
  hs_plan p = NULL;
  int rc = hs_plan_create(dec, &pd, &p);
  int ok = check_v(rc, want, untouched(), needles);
  if (p) {
    if (want != HS_OK && rank == 0) fprintf(stderr, "  (the plan was created; freeing it)\n");
    hs_plan_free(&p);
  }
  return ok;
}
#define PLAN_CASE(name, pd, want, ...) plan_case((name), (pd), (want), NEEDLES(__VA_ARGS__))

static hs_decomp_desc decomp_desc(void) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.global[0] = 12;
  dd.global[1] = 10;
  dd.global[2] = nz;
  return dd;
}

static void decomp_case(const char *name, MPI_Comm comm, const hs_decomp_desc *dd, int want,
                        const char *const *needles) {
  badinput_begin(name);
  hs_decomp d = NULL;
  int rc = hs_decomp_create(comm, dd, &d);
  check_v(rc, want, d == NULL || want == HS_OK, needles);
  if (d) hs_decomp_free(&d);
}
#define DECOMP_CASE(name, comm, dd, want, ...) \
  decomp_case((name), (comm), (dd), (want), NEEDLES(__VA_ARGS__))
/* The good desc dd with one member set to a bad value: rejected with HS_ERR_ARG. */
#define BAD_MEMBER(name, member, value, ...)                                                      \
  do {                                                                                           \
    dd = decomp_desc();                                                                          \
    dd.member = (value);                                                                         \
    DECOMP_CASE(name, MPI_COMM_WORLD, &dd, HS_ERR_ARG, __VA_ARGS__);                             \
  } while (0)

/* ---------------------------------------------------------------- deep halos */
/* No fixed cap: a depth is bounded by the local extent of every rank that sends it. On x,
 * split over every rank with the last one a point short (5 cells each, 4 on the last), depth
 * 5 exceeds the last rank's extent: its own on the last rank, its neighbour's on the others
 * (rank 0 is the last rank's periodic neighbour). The same for one field's depth below. */
static void deep_cases(void) {
  hs_decomp_desc dd = decomp_desc();
  dd.global[0] = 5 * size - 1;
  dd.procs[0] = size;
  dd.procs[1] = 1;
  hs_decomp d5 = NULL;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d5) != HS_OK) {
    skip("deep halos: (all kinds)", hs_error_message());
    return;
  }
  hs_decomp keep = dec;
  dec = d5;
  char s[160];
  hs_plan_desc pd = plan_desc(1);
  fields[0].halo[0] = fields[0].halo[1] = 5;
  pd.depth[0] = 5;
  snprintf(s, sizeof s, "rank %d: hs_plan_create: depth[0] = 5 is larger than the local extent 4 "
                        "on axis 0 of rank %d", last, last);
  PLAN_CASE(size > 1 ? "hs_plan_create: depth larger than a neighbour's extent"
                     : "hs_plan_create: depth larger than the own extent", pd, HS_ERR_ARG, s,
            "its neighbours' halos");
  pd = plan_desc(1);
  fields[0].halo[0] = 5;
  hs_field_set_depth(&fields[0], 0, 5, 1);
  snprintf(s, sizeof s, "rank %d: hs_plan_create: fields[0] depth on axis 0 (5 below, 1 above) "
                        "exceeds the points rank %d owns there (4 cells)", last, last);
  PLAN_CASE(size > 1 ? "hs_plan_create: field depth below larger than a neighbour's extent"
                     : "hs_plan_create: field depth below larger than the own extent", pd,
            HS_ERR_ARG, s);
  dec = keep;
  hs_decomp_free(&d5);
}

/* ---------------------------------------------------------------- C API */
static void c_api_cases(void) {
  hs_decomp_desc dd;
  char s[64];

  badinput_begin("hs_decomp_create: out is NULL");
  dd = decomp_desc();
  CHECK(hs_decomp_create(MPI_COMM_WORLD, &dd, NULL), HS_ERR_ARG, 1, "out is NULL");
  badinput_begin("hs_decomp_create: desc is NULL");
  {
    hs_decomp d = NULL;
    CHECK(hs_decomp_create(MPI_COMM_WORLD, NULL, &d), HS_ERR_ARG, d == NULL, "desc is NULL");
  }
  DECOMP_CASE("hs_decomp_create: comm is MPI_COMM_NULL", MPI_COMM_NULL, &dd, HS_ERR_ARG,
              "MPI_COMM_NULL");
  BAD_MEMBER("hs_decomp_create: ndims out of range", ndims, 4, "ndims = 4", "2 or 3");
  BAD_MEMBER("hs_decomp_create: global extent 0", global[1], 0, "global[1] = 0", ">= 1");
  BAD_MEMBER("hs_decomp_create: negative procs", procs[0], -1, "procs[0] = -1", ">= 0");
  BAD_MEMBER("hs_decomp_create: periodic not 0/1", periodic[0], 2, "periodic[0] = 2", "0 or 1");
  dd = decomp_desc();
  dd.procs[0] = size + 1;
  dd.procs[1] = 1;
  DECOMP_CASE("hs_decomp_create: procs do not multiply to the ranks", MPI_COMM_WORLD, &dd,
              HS_ERR_ARG, "communicator size");
  BAD_MEMBER("hs_decomp_create: cart is not Cartesian", cart, MPI_COMM_WORLD,
             "not a Cartesian communicator");
  if (size > 1) {
    dd = decomp_desc();
    dd.global[0] = size - 1;
    dd.procs[0] = size;
    dd.procs[1] = 1;
    snprintf(s, sizeof s, "global[0] = %d", size - 1);
    DECOMP_CASE("hs_decomp_create: more ranks than points", MPI_COMM_WORLD, &dd, HS_ERR_ARG,
                "exceeds", s);
  } else {
    skip("hs_decomp_create: more ranks than points", "needs 2 or more ranks");
  }

  hs_plan_desc pd;
  badinput_begin("hs_plan_create: out is NULL");
  pd = plan_desc(1);
  fill();
  CHECK(hs_plan_create(dec, &pd, NULL), HS_ERR_ARG, untouched(), "out is NULL");
  badinput_begin("hs_plan_create: decomposition is NULL");
  {
    hs_plan p = NULL;
    CHECK(hs_plan_create(NULL, &pd, &p), HS_ERR_ARG, p == NULL, "decomposition is NULL");
    badinput_begin("hs_plan_create: desc is NULL");
    CHECK(hs_plan_create(dec, NULL, &p), HS_ERR_ARG, p == NULL, "desc is NULL");
  }
  pd = plan_desc(0);
  PLAN_CASE("hs_plan_create: nfields = 0", pd, HS_ERR_ARG, "nfields = 0", "1..1024");
  pd = plan_desc(1);
  pd.nfields = HS_MAX_FIELDS + 1;
  PLAN_CASE("hs_plan_create: nfields above the maximum", pd, HS_ERR_ARG, "nfields = 1025");
  pd = plan_desc(1);
  pd.fields = NULL;
  PLAN_CASE("hs_plan_create: fields is NULL", pd, HS_ERR_ARG, "fields is NULL");
  pd = plan_desc(1);
  pd.depth[0] = -1;
  PLAN_CASE("hs_plan_create: negative depth", pd, HS_ERR_ARG, "depth[0] = -1", ">= 0");
  pd = plan_desc(1);
  hs_field_set_depth(&fields[0], 1, 0, -2);
  PLAN_CASE("hs_plan_create: negative field depth", pd, HS_ERR_ARG,
            "fields[0] depth on axis 1 is 0 below, -2 above", ">= 0");
  pd = plan_desc(1);
  pd.depth[0] = pd.depth[1] = 2;
  pd.depth[2] = 1;
  PLAN_CASE("hs_plan_create: halo smaller than depth (z)", pd, HS_ERR_ARG,
            "fields[0].halo[2] = 0 is smaller than depth[2] = 1");
  pd = plan_desc(2);
  fields[1].halo[0] = 1; /* plan_desc filled fields; override after */
  pd.depth[0] = 2;
  badinput_begin("hs_plan_create: halo smaller than depth (second field, x)");
  fill();
  {
    hs_plan p = NULL;
    CHECK(hs_plan_create(dec, &pd, &p), HS_ERR_ARG, untouched() && !p,
          "fields[1].halo[0] = 1 is smaller than depth[0] = 2");
    if (p) hs_plan_free(&p);
  }
  deep_cases();
  /* A depth larger than the interior (nz = 3 < 4), with a halo that large. */
  pd = plan_desc(1);
  fields[0].halo[2] = 4;
  pd.depth[2] = 4;
  snprintf(s, sizeof s, "depth[2] = 4 is larger than the local extent %d", nz);
  PLAN_CASE("hs_plan_create: depth larger than the local extent", pd, HS_ERR_ARG, s);
  pd = plan_desc(1);
  fields[0].type = (hs_type)9;
  PLAN_CASE("hs_plan_create: type not an hs_type", pd, HS_ERR_ARG,
            "fields[0].type = 9 is not an hs_type");
  pd = plan_desc(1);
  fields[0].layout = (hs_layout)7;
  PLAN_CASE("hs_plan_create: layout not an hs_layout", pd, HS_ERR_ARG,
            "fields[0].layout = 7 is not an hs_layout");
  pd = plan_desc(1);
  fields[0].layout = HS_LAYOUT_STRIDED;
  fields[0].stride[0] = 1;
  fields[0].stride[1] = 0;
  fields[0].stride[2] = 1;
  PLAN_CASE("hs_plan_create: strided layout with a zero stride", pd, HS_ERR_ARG,
            "fields[0].stride[1] = 0");
  pd = plan_desc(1);
  pd.stencil = (hs_stencil)5;
  PLAN_CASE("hs_plan_create: stencil not an hs_stencil", pd, HS_ERR_ARG,
            "stencil = 5 is not an hs_stencil");
  pd = plan_desc(1);
  pd.oneway = (hs_oneway)3;
  PLAN_CASE("hs_plan_create: oneway not an hs_oneway", pd, HS_ERR_ARG,
            "oneway = 3 is not an hs_oneway");
  pd = plan_desc(1);
  pd.oneway = HS_ONEWAY_LOWER;
  pd.oneway_axis = 3;
  PLAN_CASE("hs_plan_create: oneway_axis out of range", pd, HS_ERR_ARG, "oneway_axis = 3",
            "0..2");
  pd = plan_desc(1);
  fields[0].data = NULL;
  PLAN_CASE("hs_plan_create: field data is NULL", pd, HS_ERR_ARG, "fields[0].data is NULL");
  pd = plan_desc(1);
  fields[0].pack = never_pack; /* refused before it could be called */
  PLAN_CASE("hs_plan_create: pack without unpack", pd, HS_ERR_ARG, "only one of pack/unpack");
  pd = plan_desc(1);
  pd.transport_name = NULL;
  pd.transport = (hs_transport_id)99;
  PLAN_CASE("hs_plan_create: transport id out of range", pd, HS_ERR_ARG,
            "transport = 99 is not an hs_transport_id");

  /* ---- combine order */
  static const int epic[8][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0},
                                 {1, 1, 0},  {1, -1, 0}, {-1, -1, 0}, {-1, 1, 0}};
  int offs[8][3];
  pd = plan_desc(1);
  pd.order = (hs_order)7;
  PLAN_CASE("hs_plan_create: order not an hs_order", pd, HS_ERR_ARG, "order = 7 is not an hs_order");
  pd = plan_desc(1);
  hs_plan_desc_set_order_offsets(&pd, 0, &epic[0][0]);
  PLAN_CASE("hs_plan_create: norder = 0", pd, HS_ERR_ARG, "norder = 0", "1..26");
  pd = plan_desc(1);
  hs_plan_desc_set_order_offsets(&pd, 27, &epic[0][0]);
  PLAN_CASE("hs_plan_create: norder above 26", pd, HS_ERR_ARG, "norder = 27", "1..26");
  pd = plan_desc(1);
  hs_plan_desc_set_order_offsets(&pd, 8, NULL);
  PLAN_CASE("hs_plan_create: order_offsets NULL", pd, HS_ERR_ARG, "order_offsets is NULL",
            "norder = 8");
  memcpy(offs, epic, sizeof offs);
  offs[1][0] = 2;
  pd = plan_desc(1);
  hs_plan_desc_set_order_offsets(&pd, 8, &offs[0][0]);
  PLAN_CASE("hs_plan_create: order offset component out of range", pd, HS_ERR_ARG,
            "order_offsets[1] = (2,0,0)", "-1, 0 or 1");
  memcpy(offs, epic, sizeof offs);
  offs[0][0] = 0;
  PLAN_CASE("hs_plan_create: the zero order offset", pd, HS_ERR_ARG, "order_offsets[0] = (0,0,0)");
  memcpy(offs, epic, sizeof offs);
  offs[3][1] = 0, offs[3][0] = -1;
  PLAN_CASE("hs_plan_create: an order offset listed twice", pd, HS_ERR_ARG,
            "order_offsets[3] = (-1,0,0) repeats order_offsets[0]");
  pd = plan_desc(1);
  hs_plan_desc_set_order_offsets(&pd, 7, &epic[0][0]);
  PLAN_CASE("hs_plan_create: an offset the plan uses missing from the order", pd, HS_ERR_ARG,
            "does not name offset (-1,1,0)", "which the plan uses");
  pd = plan_desc(1);
  int axes[3] = {0, 1, 2};
  hs_plan_desc_set_order_sweep(&pd, 4, axes);
  PLAN_CASE("hs_plan_create: nsweep above the axes", pd, HS_ERR_ARG, "nsweep = 4", "0..3");
  axes[0] = 3;
  hs_plan_desc_set_order_sweep(&pd, 1, axes);
  PLAN_CASE("hs_plan_create: sweep axis out of range", pd, HS_ERR_ARG, "sweep_axes[0] = 3", "0..2");
  axes[0] = axes[1] = 0;
  hs_plan_desc_set_order_sweep(&pd, 2, axes);
  PLAN_CASE("hs_plan_create: sweep axis twice", pd, HS_ERR_ARG,
            "sweep_axes[1] = 0 repeats sweep_axes[0]");
  hs_plan_desc_set_order_sweep(&pd, 1, axes);
  PLAN_CASE("hs_plan_create: sweep without an exchanged axis", pd, HS_ERR_ARG,
            "does not name axis 1", "which the plan exchanges");
  hs_plan_desc_set_order_sweep(&pd, 2, NULL);
  PLAN_CASE("hs_plan_create: sweep axes NULL", pd, HS_ERR_ARG, "sweep_axes[0] = -1");
  pd = plan_desc(1);
  hs_plan_desc_set_order_sweep(&pd, 0, NULL);
  pd.stencil = HS_STENCIL_STAR;
  PLAN_CASE("hs_plan_create: sweep with a star stencil", pd, HS_ERR_ARG, "HS_ORDER_SWEEP",
            "HS_STENCIL_STAR");
  pd.stencil = HS_STENCIL_BOX;
  pd.oneway = HS_ONEWAY_LOWER;
  PLAN_CASE("hs_plan_create: sweep with a one-direction swap", pd, HS_ERR_ARG,
            "HS_ORDER_SWEEP with oneway = 1");
  /* One answer for a transport this build leaves out, by enum, by name, from the environment
   * and from hs_transport_available: HS_ERR_UNAVAILABLE with the reason (issue 28). */
  int unbuilt = 0;
  for (int id = 1; id < 64; id++) {
    const char *name = hs_transport_id_name((hs_transport_id)id);
    char why[256] = "", cname[96];
    if (!name || hs_transport_available(MPI_COMM_WORLD, name, why, sizeof why) == HS_OK ||
        !strstr(why, "not built into this haloswap"))
      continue;
    unbuilt++;
    snprintf(cname, sizeof cname, "unbuilt transport %s by enum", name);
    pd = plan_desc(1);
    pd.transport_name = NULL;
    pd.transport = (hs_transport_id)id;
    PLAN_CASE(cname, pd, HS_ERR_UNAVAILABLE, "transport", name, "is not built into this haloswap");
    snprintf(cname, sizeof cname, "unbuilt transport %s by name", name);
    pd = plan_desc(1);
    pd.transport_name = name;
    PLAN_CASE(cname, pd, HS_ERR_UNAVAILABLE, "transport", name, "is not built into this haloswap");
    snprintf(cname, sizeof cname, "unbuilt transport %s from HALOSWAP_TRANSPORT", name);
    setenv("HALOSWAP_TRANSPORT", name, 1);
    pd = plan_desc(1);
    pd.transport_name = NULL;
    PLAN_CASE(cname, pd, HS_ERR_UNAVAILABLE, "transport", name, "is not built into this haloswap");
    unsetenv("HALOSWAP_TRANSPORT");
    snprintf(cname, sizeof cname, "unbuilt transport %s: hs_transport_available", name);
    badinput_begin(cname);
    CHECK(hs_transport_available(MPI_COMM_WORLD, name, NULL, 0), HS_ERR_UNAVAILABLE, 1,
          "is not built into this haloswap");
  }
  if (!unbuilt) skip("unbuilt transport: (all kinds)", "every known transport is built here");
  /* Open MPI 4.1's OpenSHMEM crashes at shmem_finalize with osc/rdma: the library refuses to
   * start it, with the remedy (run only without an osc setting: then it is never started). */
  char swhy[256] = "";
  int shmem_built = hs_transport_available(MPI_COMM_WORLD, "shmem", swhy, sizeof swhy) == HS_OK ||
                    !strstr(swhy, "not built");
  if (!getenv("OMPI_MCA_osc") && shmem_built) {
    setenv("HALOSWAP_SHMEM", "1", 1);
    pd = plan_desc(1);
    pd.transport_name = "shmem";
    PLAN_CASE("shmem with Open MPI's osc/rdma loadable", pd, HS_ERR_UNAVAILABLE,
              "OMPI_MCA_osc=^rdma");
    unsetenv("HALOSWAP_SHMEM");
  } else {
    skip("shmem with Open MPI's osc/rdma loadable", "shmem not built, or osc set here");
  }

  /* ---- option strings */
  pd = plan_desc(1);
  pd.transport_name = "nosuch";
  PLAN_CASE("option string: unknown transport name", pd, HS_ERR_ARG,
            "unknown transport 'nosuch'", "built:", "p2p");
  pd = plan_desc(1);
  pd.transport_name = ":dtype=1";
  PLAN_CASE("option string: empty transport name", pd, HS_ERR_ARG, "empty or too long");
  pd = plan_desc(1);
  pd.transport_name = "p2p:persistent";
  PLAN_CASE("option string: option without '='", pd, HS_ERR_ARG,
            "option 'persistent' is not of the form key=value");
  pd = plan_desc(1);
  pd.transport_name = "p2p:persistnet=1";
  PLAN_CASE("option string: unknown key", pd, HS_ERR_ARG, "no option 'persistnet'",
            "persistent");
  pd = plan_desc(1);
  pd.options = "dtype=abc";
  PLAN_CASE("option string: value not an integer", pd, HS_ERR_ARG, "dtype", "'abc'");
  /* Out of range: the consolidated option handling names the option, value and the allowed
   * values (issue 16: p2p accepted anything). */
  pd = plan_desc(1);
  pd.transport_name = "p2p:dtype=7";
  PLAN_CASE("option string: out-of-range value p2p:dtype=7", pd, HS_ERR_ARG, "dtype", "'7'",
            "allowed: one of 0|1|recv|send|auto");
  pd = plan_desc(1);
  pd.transport_name = "rma-fence:drive=sideways";
  PLAN_CASE("option string: value not among the allowed words", pd, HS_ERR_ARG, "drive",
            "sideways");
  {
    char longopt[200];
    memset(longopt, 'k', sizeof longopt);
    memcpy(longopt + 150, "=1", 3);
    pd = plan_desc(1);
    pd.options = longopt;
    PLAN_CASE("option string: key too long", pd, HS_ERR_ARG, "is too long");
  }

  /* ---- environment */
  setenv("HALOSWAP_TRANSPORT", "nosuch-env", 1);
  pd = plan_desc(1);
  pd.transport_name = NULL;
  PLAN_CASE("environment: HALOSWAP_TRANSPORT unknown", pd, HS_ERR_ARG,
            "unknown transport 'nosuch-env'");
  unsetenv("HALOSWAP_TRANSPORT");
  setenv("HALOSWAP_OPTIONS", "=1", 1);
  pd = plan_desc(1);
  PLAN_CASE("environment: HALOSWAP_OPTIONS malformed", pd, HS_ERR_ARG, "HALOSWAP_OPTIONS",
            "not of the form key=value");
  setenv("HALOSWAP_OPTIONS", "colour=blue", 1);
  pd = plan_desc(1);
  PLAN_CASE("environment: HALOSWAP_OPTIONS unknown key", pd, HS_ERR_ARG, "no option 'colour'");
  unsetenv("HALOSWAP_OPTIONS");

  /* ---- state errors, on a valid plan */
  pd = plan_desc(2);
  pd.depth[0] = pd.depth[1] = 2;
  hs_plan p = NULL;
  fill();
  if (hs_plan_create(dec, &pd, &p) != HS_OK) {
    fprintf(stderr, "badinput: valid plan refused: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  badinput_begin("state: complete without start");
  CHECK(hs_swap_complete(p, NULL), HS_ERR_STATE, untouched(), "no swap was started");
  /* A misuse that begins no round leaves the plan usable (docs/design.md). */
  badinput_begin("state: start twice");
  int rc = hs_swap_start(p, NULL);
  if (rc == HS_OK) rc = hs_swap_start(p, NULL);
  CHECK(rc, HS_ERR_STATE, 1, "already in progress");
  badinput_begin("state: free during a swap");
  CHECK(hs_plan_free(&p), HS_ERR_STATE, p != NULL, "in progress");
  badinput_begin("state: the swap started twice completes");
  CHECK(hs_swap_complete(p, NULL), HS_OK, 1, "");
  badinput_begin("hs_swap: plan is NULL");
  CHECK(hs_swap(NULL, NULL), HS_ERR_ARG, 1, "plan is NULL");
  badinput_begin("hs_plan_get_stats: NULL stats");
  CHECK(hs_plan_get_stats(p, NULL), HS_ERR_ARG, 1, "NULL argument");
  hs_plan_free(&p);

  badinput_begin("hs_alloc: ptr is NULL");
  CHECK(hs_alloc(dec, 64, NULL), HS_ERR_ARG, 1, "ptr is NULL");
  badinput_begin("hs_free: pointer not from hs_alloc");
  CHECK(hs_free(dec, fa), HS_ERR_ARG, untouched(), "was not returned by hs_alloc");
  badinput_begin("hs_transport_available: unknown transport");
  CHECK(hs_transport_available(MPI_COMM_WORLD, "nosuch", NULL, 0), HS_ERR_UNAVAILABLE, 1,
        "transport 'nosuch' is not built");
}

/* ---------------------------------------------------------------- one rank only */
static void one_rank_cases(void) {
  if (size == 1) {
    skip("one rank only: (all kinds)", "needs 2 or more ranks");
    return;
  }
  hs_decomp_desc dd = decomp_desc();
  if (rank == last) dd.global[2] = 0;
  DECOMP_CASE("one rank only: decomposition extent 0 on the last rank", MPI_COMM_WORLD, &dd,
              HS_ERR_ARG, "global[2] = 0");
  dd = decomp_desc();
  if (rank == last) dd.global[0] = 24;
  DECOMP_CASE("one rank only: grid differs on the last rank", MPI_COMM_WORLD, &dd,
              HS_ERR_MISMATCH, "disagree on global[0]");
  hs_plan_desc pd = plan_desc(1);
  if (rank == last) pd.depth[0] = 7;
  PLAN_CASE("one rank only: depth out of range on the last rank", pd, HS_ERR_ARG,
            "depth[0] = 7");
  pd = plan_desc(2);
  pd.depth[0] = pd.depth[1] = 2;
  if (rank == last) fields[1].halo[1] = 1;
  PLAN_CASE("one rank only: halo smaller than depth on the last rank", pd, HS_ERR_ARG,
            "fields[1].halo[1] = 1 is smaller than depth[1] = 2");
  pd = plan_desc(1);
  if (rank == last) fields[0].data = NULL;
  PLAN_CASE("one rank only: NULL field data on the last rank", pd, HS_ERR_ARG,
            "fields[0].data is NULL");
  pd = plan_desc(2);
  if (rank == last) fields[1].halo[2] = 1; /* z: one level more on each side */
  PLAN_CASE("one rank only: z extent (an axis kept whole) differs on the last rank", pd,
            HS_ERR_MISMATCH, "fields[1] has 5 points allocated on axis 2", "but 3 on rank 0",
            "kept whole");
  pd = plan_desc(1);
  if (rank == last) pd.transport_name = "nosuch";
  PLAN_CASE("one rank only: unknown transport on the last rank", pd, HS_ERR_ARG,
            "unknown transport 'nosuch'");
  pd = plan_desc(1);
  if (rank == last) hs_plan_desc_set_order_sweep(&pd, 0, NULL);
  PLAN_CASE("one rank only: combine order differs on the last rank", pd, HS_ERR_MISMATCH,
            "disagree on the combine order");
  pd = plan_desc(1);
  pd.nfields = rank == 0 ? 2 : 1;
  PLAN_CASE("one rank only: nfields differs on rank 0", pd, HS_ERR_MISMATCH,
            "disagree on nfields");
  if (rank == last) setenv("HALOSWAP_OPTIONS", "dtype=0", 1);
  pd = plan_desc(1);
  PLAN_CASE("one rank only: HALOSWAP_OPTIONS set on the last rank", pd, HS_ERR_MISMATCH,
            "disagree on the transport options");
  unsetenv("HALOSWAP_OPTIONS");
  if (rank == last) setenv("HALOSWAP_OPTIONS", "dtype", 1);
  pd = plan_desc(1);
  PLAN_CASE("one rank only: HALOSWAP_OPTIONS malformed on the last rank", pd, HS_ERR_ARG,
            "HALOSWAP_OPTIONS", "not of the form key=value");
  unsetenv("HALOSWAP_OPTIONS");
}

/* ---------------------------------------------------------------- NetCDF */
#ifdef BADINPUT_NETCDF
static const char *const vnames[PC_NATTR] = {
    "x_position", "y_position", "z_position", "x_vorticity", "y_vorticity", "z_vorticity",
    "buoyancy",   "volume",     "B11",        "B12",         "B13",         "B22",
    "B23"};
enum { NC_GOOD, NC_NAN_POS, NC_CHAR_VAR, NC_MISSING, NC_TEXT_EXTENT, NC_INF_EXTENT, NC_NKIND };

/* A small valid EPIC parcel file (classic format), or one with a single defect. */
static int write_nc(const char *path, int kind) {
  int nc, dt, dn, var[PC_NATTR];
  const int np = 8;
  if (nc_create(path, NC_CLOBBER, &nc) != NC_NOERR) return -1;
  int ncells[3] = {2, 2, 1};
  double ext[3] = {1, 1, 1}, org[3] = {0, 0, 0};
  if (kind == NC_INF_EXTENT) ext[1] = INFINITY;
  nc_put_att_text(nc, NC_GLOBAL, "file_type", 7, "parcels");
  nc_put_att_int(nc, NC_GLOBAL, "ncells", NC_INT, 3, ncells);
  if (kind == NC_TEXT_EXTENT) nc_put_att_text(nc, NC_GLOBAL, "extent", 3, "1 1");
  else nc_put_att_double(nc, NC_GLOBAL, "extent", NC_DOUBLE, 3, ext);
  nc_put_att_double(nc, NC_GLOBAL, "origin", NC_DOUBLE, 3, org);
  nc_def_dim(nc, "t", NC_UNLIMITED, &dt);
  nc_def_dim(nc, "n_parcels", np, &dn);
  for (int k = 0; k < PC_NATTR; k++) {
    if (kind == NC_MISSING && k == VOL) continue;
    int dims[2] = {dt, dn};
    nc_def_var(nc, vnames[k], kind == NC_CHAR_VAR && k == BUOY ? NC_CHAR : NC_DOUBLE, 2, dims,
               &var[k]);
  }
  nc_enddef(nc);
  for (int k = 0; k < PC_NATTR; k++) {
    if ((kind == NC_MISSING && k == VOL) || (kind == NC_CHAR_VAR && k == BUOY)) continue;
    double v[8];
    for (int i = 0; i < np; i++) {
      v[i] = k <= PZ ? (i + 0.5) / np : k == VOL ? 0.01 : (k == B11 || k == B22) ? 0.01 : 0.0;
      if (kind == NC_NAN_POS && k == PY && i == 3) v[i] = NAN;
    }
    size_t start[2] = {0, 0}, count[2] = {1, (size_t)np};
    nc_put_vara_double(nc, var[k], start, count, v);
  }
  return nc_close(nc) == NC_NOERR ? 0 : -1;
}

static void nc_case(const char *name, const char *path, int want_fail, const char *const *needles) {
  badinput_begin(name);
  pc_box b, b0;
  memset(&b, 0x5a, sizeof b);
  b0 = b;
  pc_set all = {0, 0, NULL};
  char err[1024] = "";
  int rc = pc_read_netcdf(MPI_COMM_WORLD, path, &b, &all, NULL, err, sizeof err);
  /* The reader reports through err, not hs_error_message: feed it through the same check. */
  int code = rc == 0 ? HS_OK : HS_ERR_ARG;
  int clean = rc == 0 || (all.n == 0 && memcmp(&b, &b0, sizeof b) == 0);
  check_msg(code, want_fail ? HS_ERR_ARG : HS_OK, clean, rc == 0 ? "" : err, needles);
  pc_set_free(&all);
}
#define NC_CASE(name, path, fail, ...) nc_case((name), (path), (fail), NEEDLES(__VA_ARGS__))

static void netcdf_cases(const char *dir) {
  char p[NC_NKIND + 4][512];
  const char *nm[] = {"good", "nanpos", "charvar", "missing", "textext", "infext"};
  for (int k = 0; k < NC_NKIND; k++) snprintf(p[k], sizeof p[k], "%s/%s.nc", dir, nm[k]);
  char trunc[512], trunc_h[512], empty[512], nofile[512], badname[512], baddim[512];
  snprintf(trunc, sizeof trunc, "%s/truncated.nc", dir);
  snprintf(trunc_h, sizeof trunc_h, "%s/truncated_header.nc", dir);
  snprintf(empty, sizeof empty, "%s/notnetcdf.nc", dir);
  snprintf(nofile, sizeof nofile, "%s/does-not-exist.nc", dir);
  snprintf(badname, sizeof badname, "%s/badname.nc", dir);
  snprintf(baddim, sizeof baddim, "%s/baddimid.nc", dir);
  int ok = 0;
  if (rank == 0) {
    ok = 1;
    for (int k = 0; k < NC_NKIND; k++) ok &= write_nc(p[k], k) == 0;
    FILE *in = fopen(p[NC_GOOD], "rb"), *out = fopen(trunc, "wb");
    char buf[4096];
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (out) fwrite(buf, 1, n / 2, out);
    if (in) fclose(in);
    if (out) fclose(out);
    out = fopen(trunc_h, "wb");
    if (out) fwrite(buf, 1, 100, out);
    if (out) fclose(out);
    /* Header defects libnetcdf 4.9.0 can crash on (fuzz/regressions/ncread): a dimension name
     * that is not UTF-8, and a variable naming dimension id 7 of 2. */
    char *nm_at = memmem(buf, n, "n_parcels", 9), *dim_at = memmem(buf, n, "x_position", 10);
    out = fopen(badname, "wb");
    if (out && nm_at) {
      nm_at[2] = (char)0xF3;
      fwrite(buf, 1, n, out);
      nm_at[2] = 'p';
    }
    if (out) fclose(out);
    out = fopen(baddim, "wb");
    if (out && dim_at) { /* name (padded to 12), then ndims = 2, then dimids 0 and 1 */
      dim_at[12 + 4 + 4 + 3] = 7;
      fwrite(buf, 1, n, out);
    }
    if (out) fclose(out);
    ok &= nm_at && dim_at;
    out = fopen(empty, "wb");
    if (out) {
      fputs("this is not a NetCDF file\n", out);
      fclose(out);
    }
    ok &= n > 0;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) {
    skip("NetCDF: (all kinds)", "could not write the test files");
    return;
  }
  NC_CASE("NetCDF: a good file is read (control)", p[NC_GOOD], 0, "");
  NC_CASE("NetCDF: truncated in the header", trunc_h, 1, "truncated_header.nc", "cannot open");
  NC_CASE("NetCDF: truncated in the data", trunc, 1, "truncated.nc: is truncated",
          "n_parcels = 8");
  NC_CASE("NetCDF: not a NetCDF file", empty, 1, "notnetcdf.nc", "cannot open");
  NC_CASE("NetCDF: header name not UTF-8", badname, 1, "badname.nc", "not a valid netCDF name");
  NC_CASE("NetCDF: header dimension id out of range", baddim, 1, "baddimid.nc",
          "dimension id 7 of 2");
  NC_CASE("NetCDF: file does not exist", nofile, 1, "does-not-exist.nc", "cannot open");
  NC_CASE("NetCDF: NaN position", p[NC_NAN_POS], 1, "variable 'y_position'", "parcel 3",
          "not finite");
  NC_CASE("NetCDF: variable of the wrong type (char)", p[NC_CHAR_VAR], 1,
          "variable 'buoyancy'", "cannot be read");
  NC_CASE("NetCDF: missing variable", p[NC_MISSING], 1, "variable 'volume': missing");
  NC_CASE("NetCDF: attribute of the wrong type (text extent)", p[NC_TEXT_EXTENT], 1,
          "global attribute 'extent'");
  NC_CASE("NetCDF: non-finite extent", p[NC_INF_EXTENT], 1, "global attribute 'extent'",
          "extent[1] = inf");
  if (rank == 0) {
    for (int k = 0; k < NC_NKIND; k++) unlink(p[k]);
    unlink(trunc);
    unlink(trunc_h);
    unlink(empty);
    unlink(badname);
    unlink(baddim);
  }
}
#endif

#ifdef BADINPUT_FORTRAN
void badinput_fortran(int fcomm); /* badinput_f.F90 */
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  last = size - 1;
  signal(SIGALRM, on_alarm);
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGFPE, on_crash);
  signal(SIGABRT, on_crash);
  unsetenv("HALOSWAP_TRANSPORT");
  unsetenv("HALOSWAP_OPTIONS");

  hs_decomp_desc dd = decomp_desc();
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &dec) != HS_OK) {
    fprintf(stderr, "badinput: decomposition: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  nx = hs_decomp_local_extent(dec, 0);
  ny = hs_decomp_local_extent(dec, 1);
  fn = (size_t)(nx + 4) * (ny + 4) * (nz + 8);
  fa = malloc(fn * sizeof *fa);
  fb = malloc(fn * sizeof *fb);

  c_api_cases();
  one_rank_cases();
#ifdef BADINPUT_FORTRAN
  badinput_fortran((int)MPI_Comm_c2f(MPI_COMM_WORLD));
#else
  skip("Fortran: (all kinds)", "built without the Fortran module");
#endif
#ifdef BADINPUT_NETCDF
  netcdf_cases(argc > 1 ? argv[1] : ".");
#else
  skip("NetCDF: (all kinds)", "built without NetCDF");
#endif

  free(fa);
  free(fb);
  hs_decomp_free(&dec);
  if (rank == 0)
    printf("badinput at %d ranks: %d kinds of bad input checked (+%d controls), %d failed, "
           "%d skipped\n", size, kinds, controls, failed, skipped);
  MPI_Finalize();
  return failed ? 1 : 0;
}
