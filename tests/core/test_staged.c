/* The staged exchange (core option staged=1, docs/design.md "Staged exchange"): on random
 * bit patterns in every cell (halos included), a staged plan leaves every array with exactly
 * the bits the direct plan of the same transport leaves (corners and edges are copies carried
 * through the neighbours' halos), through hs_swap and through hs_swap_test polling; it sends
 * at most 2 messages per axis and, with the periodic self copies, as many bytes over all
 * ranks as the direct plan; its reverse exchange gives the direct plan's bits; a star stencil
 * runs directly; auto refuses staged=1 for itself, naming the way to ask for it; pack hooks
 * are handed boxes that span the halos of the axes exchanged before. A spec with the core
 * option stage_fields runs the staged plan in groups of fields (its direct plan ignores it);
 * stage_fields is refused for a sweep and past 64 groups.
 * Usage: test_staged [--transport SPEC]... [--may-be-unusable NAME]... (default p2p, shm). */
#include "haloswap.h"
#include "halo_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define NF 3

typedef struct {
  hs_field f[NF];
  void *data[NF];
  size_t bytes[NF];
} fieldset;

/* Field 0: float64 x-fast, depth 2 everywhere. Field 1: int32 z-fast, depth 1 below / 2
 * above on x (halo 2 / 3). Field 2: float32, node-centred on y (upper owns the plane). */
static void make_fields(fieldset *s, const int local[3]) {
  memset(s, 0, sizeof *s);
  static const hs_type types[NF] = {HS_FLOAT64, HS_INT32, HS_FLOAT32};
  static const hs_layout lay[NF] = {HS_LAYOUT_XFAST, HS_LAYOUT_ZFAST, HS_LAYOUT_XFAST};
  for (int f = 0; f < NF; f++) {
    int hl[3] = {2, 2, 2}, hh[3] = {2, 2, 2}, n = 1;
    if (f == 1) hh[0] = 3;
    for (int a = 0; a < 3; a++) n *= hl[a] + local[a] + (f == 2 && a == 1) + hh[a];
    s->bytes[f] = (size_t)n * hs_type_size(types[f]);
    s->data[f] = malloc(s->bytes[f]);
    s->f[f] = hs_field_array(types[f], s->data[f], lay[f], 2);
    for (int a = 0; a < 3; a++) hs_field_set_halo(&s->f[f], a, hl[a], hh[a]);
    if (f == 1) hs_field_set_depth(&s->f[f], 0, 1, 2);
    if (f == 2) hs_field_set_stagger(&s->f[f], 1, HS_STAGGER_NODE, HS_OWNER_UPPER);
  }
}

static void free_fields(fieldset *s) {
  for (int f = 0; f < NF; f++) free(s->data[f]);
}

/* Random bytes (seeded by rank and round), the same in both sets. */
static void fill(fieldset *a, fieldset *b, unsigned seed) {
  uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1) ^ (uint64_t)rank * 0xBF58476D1CE4E5B9ull;
  for (int f = 0; f < NF; f++)
    for (size_t i = 0; i < a->bytes[f]; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      ((unsigned char *)a->data[f])[i] = ((unsigned char *)b->data[f])[i] = (unsigned char)x;
    }
}

/* Integer values (exact sums) for the reverse exchange. */
static void fill_ints(fieldset *a, fieldset *b, int seed) {
  for (int f = 0; f < NF; f++) {
    size_t e = hs_type_size(a->f[f].type), n = a->bytes[f] / e;
    for (size_t i = 0; i < n; i++) {
      int v = (int)((i * 7 + (size_t)rank * 13 + (size_t)seed) % 101);
      if (a->f[f].type == HS_FLOAT64) ((double *)a->data[f])[i] = ((double *)b->data[f])[i] = v;
      if (a->f[f].type == HS_FLOAT32) ((float *)a->data[f])[i] = ((float *)b->data[f])[i] = (float)v;
      if (a->f[f].type == HS_INT32) ((int32_t *)a->data[f])[i] = ((int32_t *)b->data[f])[i] = v;
    }
  }
}

static long differ(const fieldset *a, const fieldset *b) {
  long bad = 0;
  for (int f = 0; f < NF; f++) bad += memcmp(a->data[f], b->data[f], a->bytes[f]) != 0;
  return bad;
}

static int swap_polling(hs_plan p) {
  int rc = hs_swap_start(p, NULL), done = 0;
  for (int i = 0; rc == HS_OK && !done && i < 100000; i++) rc = hs_swap_test(p, NULL, &done);
  return rc == HS_OK ? hs_swap_complete(p, NULL) : rc;
}

static int halo_packed; /* a pack hook was given a box with halo cells */
static void span_pack(void *ctx, const hs_region *r, void *buf) {
  (void)ctx, (void)buf;
  if (r->lo[0] < 0 || r->lo[1] < 0) halo_packed = 1;
}
static void span_unpack(void *ctx, const hs_region *r, const void *buf) {
  (void)ctx, (void)r, (void)buf;
}

static int count(const char *s, char c) {
  int n = 0;
  for (; *s; s++) n += *s == c;
  return n;
}

/* One decomposition, one transport: direct and staged plans side by side. */
static void run(const char *spec, int ndims, const int periodic[3], hs_stencil stencil) {
  hs_decomp_desc dd;
  const int global[3] = {11, 9, ndims == 3 ? 7 : 1}, procs[3] = {0, 0, 0};
  test_decomp_desc(&dd, ndims, global, procs, periodic);
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    if (rank == 0) printf("skip %s: %s\n", spec, hs_error_message());
    return;
  }
  int local[3] = {1, 1, 1};
  for (int a = 0; a < ndims; a++) local[a] = hs_decomp_local_extent(d, a);
  fieldset A, B;
  make_fields(&A, local);
  make_fields(&B, local);
  if (ndims == 2)
    for (int f = 0; f < NF; f++) {
      hs_field_set_halo(&A.f[f], 2, 0, 0);
      hs_field_set_halo(&B.f[f], 2, 0, 0);
    }
  char staged[128];
  snprintf(staged, sizeof staged, "%s%sstaged=1", spec, strchr(spec, ':') ? "," : ":");
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.depth[0] = pd.depth[1] = 2;
  pd.depth[2] = ndims == 3 ? 2 : 0;
  pd.stencil = stencil;
  pd.nfields = NF;
  pd.fields = A.f;
  pd.transport_name = spec;
  hs_plan pa = NULL, pb = NULL;
  int rc = hs_plan_create(d, &pd, &pa);
  CHECK(rc == HS_OK, "%s: direct plan: %s", spec, hs_error_message());
  pd.fields = B.f;
  pd.transport_name = staged;
  if (rc == HS_OK) {
    rc = hs_plan_create(d, &pd, &pb);
    CHECK(rc == HS_OK, "%s: staged plan: %s", staged, hs_error_message());
  }
  if (rc == HS_OK) {
    char desc[8192];
    hs_plan_describe(pb, desc, sizeof desc);
    const char *st = strstr(desc, "staged in ");
    int axes = 0;
    for (int a = 0; a < ndims; a++) axes += hs_decomp_procs(d, a) > 1 || periodic[a];
    if (stencil == HS_STENCIL_STAR || axes < 2)
      CHECK(!st, "%s: a plan without edges to carry runs directly: %s", staged, desc);
    else
      CHECK(st && count(st, '[') <= 2 * ndims, "%s: more than 2 messages per axis: %s", staged,
            desc);
    if (st && strstr(spec, "stage_fields="))
      CHECK(strstr(st, "groups of"), "%s: not run in groups of fields: %s", staged, desc);
    hs_plan_stats sa, sb;
    hs_plan_get_stats(pa, &sa);
    hs_plan_get_stats(pb, &sb);
    /* Over all ranks (a rank at a wall carries another share of its neighbours' corners). */
    unsigned long long mv[2] = {sa.bytes_sent_per_swap + sa.bytes_self_per_swap,
                                sb.bytes_sent_per_swap + sb.bytes_self_per_swap}, tot[2];
    MPI_Allreduce(mv, tot, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(tot[0] == tot[1], "%s: moves %llu bytes over all ranks, the direct plan %llu", staged,
          tot[1], tot[0]);
    CHECK(sb.npeers <= sa.npeers, "%s: %d peers, the direct plan %d", staged, sb.npeers,
          sa.npeers);
    long bad = 0;
    for (int r = 0; r < 3 && rc == HS_OK; r++) {
      fill(&A, &B, (unsigned)r);
      rc = hs_swap(pa, NULL);
      if (rc == HS_OK) rc = r == 1 ? swap_polling(pb) : hs_swap(pb, NULL);
      CHECK(rc == HS_OK, "%s: swap %d: %s", staged, r, hs_error_message());
      bad += differ(&A, &B);
    }
    CHECK(bad == 0, "%s: %ld arrays differ from the direct plan's after a swap", staged, bad);
    fill_ints(&A, &B, 3);
    if (rc == HS_OK) rc = hs_reverse(pa, HS_OP_SUM, NULL);
    if (rc == HS_OK) rc = hs_reverse(pb, HS_OP_SUM, NULL);
    CHECK(rc == HS_OK, "%s: reverse: %s", staged, hs_error_message());
    CHECK(differ(&A, &B) == 0, "%s: the reverse exchange differs from the direct plan's",
          staged);
  }
  hs_plan_free(&pa);
  hs_plan_free(&pb);
  free_fields(&A);
  free_fields(&B);
  hs_decomp_free(&d);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv, &rank, &size);
  test_opts o = {.nswaps = 1};
  for (int i = 1; i < argc; i++)
    if (!test_opt(argc, argv, &i, &o)) return test_bad_arg("test_staged", argv[i]);
  if (!o.nspecs) {
    o.specs[o.nspecs++] = "p2p";
    o.specs[o.nspecs++] = "shm";
  }
  static const int per[4][3] = {{1, 1, 1}, {0, 1, 0}, {1, 0, 1}, {0, 0, 0}};
  int runs = 0, skipped = 0;
  for (int t = 0; t < o.nspecs; t++) {
    const char *spec = o.specs[t];
    if (!test_transport_usable(spec, o.optional, o.noptional, &skipped, &test_failures)) continue;
    for (int ndims = 2; ndims <= 3; ndims++)
      for (int k = 0; k < 4; k++, runs++) run(spec, ndims, per[k], HS_STENCIL_BOX);
    run(spec, 3, per[0], HS_STENCIL_STAR);
    runs++;
  }
  /* auto: staged=1 belongs to its candidates. */
  hs_decomp d = test_small_decomp();
  if (d) {
    double *x = calloc((size_t)(hs_decomp_local_extent(d, 0) + 2) *
                           (size_t)(hs_decomp_local_extent(d, 1) + 2) * 2, sizeof *x);
    hs_field f = hs_field_array(HS_FLOAT64, x, HS_LAYOUT_ZFAST, 1);
    hs_plan_desc pd;
    test_plan_desc(&pd, NULL, HS_STENCIL_BOX, 1, &f, "auto:staged=1");
    hs_plan p = NULL;
    int rc = hs_plan_create(d, &pd, &p);
    CHECK(rc == HS_ERR_UNAVAILABLE && strstr(hs_error_message(), "candidates=[p2p:staged=1"),
          "auto:staged=1 gave %s: %s", hs_status_name(rc), hs_error_message());
    hs_plan_free(&p);
    /* Hooks: the y stage packs boxes that span the x halos (test_halo checks the values). */
    hs_field h = f;
    h.pack = span_pack;
    h.unpack = span_unpack;
    pd.fields = &h;
    pd.transport_name = "p2p:staged=1";
    rc = hs_plan_create(d, &pd, &p);
    CHECK(rc == HS_OK, "p2p:staged=1 with hooks: %s", hs_error_message());
    if (rc == HS_OK) rc = hs_swap(p, NULL);
    CHECK(rc == HS_OK && halo_packed, "p2p:staged=1 with hooks: swap %s, %s", hs_status_name(rc),
          halo_packed ? "packed halo cells" : "never packed a halo cell");
    hs_plan_free(&p);
    /* stage_fields: refused for a sweep, and past HS_MAX_STAGE_GROUPS (64) groups, naming the
     * least value that fits. */
    hs_field many[65];
    for (int i = 0; i < 65; i++) many[i] = f;
    test_plan_desc(&pd, NULL, HS_STENCIL_BOX, 65, many, "p2p:staged=1,stage_fields=1");
    rc = hs_plan_create(d, &pd, &p);
    CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "stage_fields = 1 makes 65 groups") &&
              strstr(hs_error_message(), "stage_fields >= 2"),
          "65 fields, stage_fields=1 gave %s: %s", hs_status_name(rc), hs_error_message());
    hs_plan_free(&p);
    pd.transport_name = "p2p:staged=1,stage_fields=2";
    rc = hs_plan_create(d, &pd, &p);
    CHECK(rc == HS_OK, "65 fields, stage_fields=2: %s", hs_error_message());
    hs_plan_free(&p);
    test_plan_desc(&pd, NULL, HS_STENCIL_BOX, 3, many, "p2p:stage_fields=1");
    hs_plan_desc_set_order_sweep(&pd, 0, NULL);
    rc = hs_plan_create(d, &pd, &p);
    CHECK(rc == HS_ERR_ARG && strstr(hs_error_message(), "not to HS_ORDER_SWEEP"),
          "a sweep with stage_fields=1 gave %s: %s", hs_status_name(rc), hs_error_message());
    hs_plan_free(&p);
    free(x);
    hs_decomp_free(&d);
  }
  int all = 0;
  MPI_Allreduce(&test_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_staged at %d ranks: %d configurations x transports, %d transports not usable "
           "here: %s (%d failures)\n", size, runs, skipped, all ? "FAIL" : "ok", all);
  MPI_Finalize();
  return test_exit_status(runs, all, skipped, 1);
}
