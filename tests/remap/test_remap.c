/* The core option remap=1 over the life of plans (docs/remap.md): malloc'd fields, every halo
 * cell checked with the analytic oracle (halo_check.h) after every swap.
 *  1. two plans on the same arrays (one box depth 2, one star depth 1), swapped alternately;
 *  2. the first freed, the second still swaps right (the pages stay shared while one plan
 *     uses them), then freed: no memfd mapping is left and the contents are kept;
 *  3. the arrays reused by a new plan, which remaps them again;
 *  4. an array the caller replaced by other memory while the plan lived (munmap + a new
 *     mapping at the same address): plan free must not touch the new memory;
 *  5. an array that cannot be remapped on one rank: every rank fails with
 *     HS_ERR_UNAVAILABLE and the reason, and gives back what it had remapped;
 *  6. a field hs_alloc'd on some ranks and malloc'd (remapped) on others;
 *  7. an array on the stack is refused.
 * Usage: test_remap [--transport SPEC] [--swaps N]   (default shm:remap=1) */
#define _GNU_SOURCE
#include "halo_check.h"
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NF 3

static int rank, size;
static const char *spec = "shm:remap=1";
static int nswaps = 4;
static int expect_failure; /* make_plan: a failing creation is the test's point */

typedef struct {
  hs_decomp d;
  tfield tf;
  void *data[NF];
  size_t bytes;
  int local[3];
} world;

static hs_plan make_plan(world *w, int depth, hs_stencil st, tgeom *g, long *bad) {
  hs_field fl[NF];
  for (int f = 0; f < NF; f++) {
    fl[f] = hs_field_array(HS_FLOAT64, w->data[f], HS_LAYOUT_ZFAST, 0);
    for (int a = 0; a < 3; a++) fl[f].halo[a] = w->tf.halo[a];
  }
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.depth[0] = pd.depth[1] = depth;
  pd.stencil = st;
  pd.nfields = NF;
  pd.fields = fl;
  pd.transport_name = spec;
  tgeom_from(g, w->d, &pd);
  hs_plan p = NULL;
  if (hs_plan_create(w->d, &pd, &p) != HS_OK) {
    if (rank == 0 && !expect_failure)
      fprintf(stderr, "FAIL plan creation on %s: %s\n", spec, hs_error_message());
    ++*bad;
    return NULL;
  }
  return p;
}

/* One checked swap of plan p (swap number s: the interior values). */
static long swap_check(world *w, hs_plan p, const tgeom *g, int s, const char *what) {
  long bad = 0;
  for (int f = 0; f < NF; f++) tfield_fill(&w->tf, w->data[f], g, f, s, 1);
  if (hs_swap(p, NULL) != HS_OK) {
    fprintf(stderr, "[rank %d] FAIL %s: swap %d: %s\n", rank, what, s, hs_error_message());
    return 1;
  }
  for (int f = 0; f < NF; f++) bad += tfield_check(&w->tf, w->data[f], g, f, s, what, rank, 1);
  return bad;
}

static long sum(long v) {
  long all = 0;
  MPI_Allreduce(&v, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--transport") && i + 1 < argc) spec = argv[++i];
    else if (!strcmp(argv[i], "--swaps") && i + 1 < argc) nswaps = atoi(argv[++i]);
  }
  world w;
  memset(&w, 0, sizeof w);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  int gl[3] = {6 * size, 10, 7};
  for (int a = 0; a < 3; a++) {
    dd.global[a] = gl[a];
    dd.periodic[a] = a < 2;
  }
  dd.procs[2] = 1;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &w.d) != HS_OK) {
    fprintf(stderr, "hs_decomp_create: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int halo[3] = {2, 2, 0};
  for (int a = 0; a < 3; a++) w.local[a] = hs_decomp_local_extent(w.d, a);
  tfield_init(&w.tf, HS_FLOAT64, HS_LAYOUT_ZFAST, w.local, halo, 3);
  w.bytes = w.tf.n * sizeof(double);
  /* Small arrays from malloc: they share pages with each other and with malloc's own data. */
  for (int f = 0; f < NF; f++) w.data[f] = malloc(w.bytes);
  long bad = 0;
  int expect_shared = 0; /* this rank has a neighbour on the node (one node here) */
  tgeom g1, g2;

  /* 1. two plans on the same arrays */
  hs_plan p1 = make_plan(&w, 2, HS_STENCIL_BOX, &g1, &bad);
  hs_plan p2 = make_plan(&w, 1, HS_STENCIL_STAR, &g2, &bad);
  if (p1 && p2) {
    char desc[4096];
    hs_plan_describe(p1, desc, sizeof desc);
    expect_shared = strstr(desc, "arrays node-shared") != NULL;
    if (size > 1 && !expect_shared) {
      fprintf(stderr, "[rank %d] FAIL: %d ranks on one node but nothing shared: %s\n", rank,
              size, desc);
      bad++;
    }
    if (expect_shared && !remap_mappings()) {
      fprintf(stderr, "[rank %d] FAIL: arrays shared but no memfd mapping\n", rank);
      bad++;
    }
    for (int s = 0; s < nswaps; s++) {
      bad += swap_check(&w, p1, &g1, 2 * s, "plan 1 (box, depth 2)");
      bad += swap_check(&w, p2, &g2, 2 * s + 1, "plan 2 (star, depth 1)");
    }
  }
  bad = sum(bad);
  /* 2. free one, the other still swaps right; then free it too */
  hs_plan_free(&p1);
  for (int s = 0; bad == 0 && p2 && s < nswaps; s++)
    bad += sum(swap_check(&w, p2, &g2, 100 + s, "plan 2 after plan 1 was freed"));
  if (expect_shared && !remap_mappings()) {
    fprintf(stderr, "[rank %d] FAIL: plan 2 lives but its arrays are no longer shared\n", rank);
    bad++;
  }
  double *keep = malloc(NF * w.bytes);
  for (int f = 0; f < NF; f++) memcpy((char *)keep + f * w.bytes, w.data[f], w.bytes);
  hs_plan_free(&p2);
  if (remap_mappings()) {
    fprintf(stderr, "[rank %d] FAIL: %d memfd mappings left after both plans were freed\n",
            rank, remap_mappings());
    bad++;
  }
  for (int f = 0; f < NF; f++)
    if (memcmp((char *)keep + f * w.bytes, w.data[f], w.bytes)) {
      fprintf(stderr, "[rank %d] FAIL: plan free changed array %d\n", rank, f);
      bad++;
    }
  free(keep);
  bad = sum(bad);

  /* 3. the arrays reused by a new plan */
  hs_plan p3 = make_plan(&w, 2, HS_STENCIL_BOX, &g1, &bad);
  for (int s = 0; bad == 0 && p3 && s < nswaps; s++)
    bad += sum(swap_check(&w, p3, &g1, 200 + s, "plan 3 on the reused arrays"));
  hs_plan_free(&p3);
  bad = sum(bad);

  /* 4. arrays of their own pages, one replaced by the caller while the plan lives */
  size_t pg = 4096, span = (w.bytes + pg - 1) / pg * pg;
  void *own[NF];
  for (int f = 0; f < NF; f++) {
    own[f] = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    w.data[f] = own[f];
  }
  hs_plan p4 = make_plan(&w, 2, HS_STENCIL_BOX, &g1, &bad);
  for (int s = 0; bad == 0 && p4 && s < nswaps; s++)
    bad += sum(swap_check(&w, p4, &g1, 300 + s, "plan 4 on mmap'd arrays"));
  /* The caller swaps field 0's memory for other memory at the same address: a shared
   * mapping of its own, also mapped at a second address. */
  int fd = memfd_create("caller-memory", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)span) != 0) bad++;
  void *again = mmap(own[0], span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  unsigned char *alias = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (again != own[0] || alias == MAP_FAILED) bad++;
  memset(own[0], 0x5a, span);
  hs_plan_free(&p4);
  /* Still the caller's mapping: a write through it shows through the alias. */
  memset(own[0], 0x3c, span);
  for (size_t k = 0; bad == 0 && k < span; k++)
    if (alias[k] != 0x3c) {
      fprintf(stderr, "[rank %d] FAIL: plan free replaced memory that was no longer its\n",
              rank);
      bad++;
    }
  if (alias != MAP_FAILED) munmap(alias, span);
  if (fd >= 0) close(fd);
  if (remap_mappings()) {
    fprintf(stderr, "[rank %d] FAIL: %d memfd mappings left after plan 4\n", rank,
            remap_mappings());
    bad++;
  }
  for (int f = 0; f < NF; f++) munmap(own[f], span);
  bad = sum(bad);

  /* 5. an array that cannot be remapped (rank 0's field 1 lies in a shared mapping): every
   * rank fails with HS_ERR_UNAVAILABLE and the reason, and what was remapped is given back. */
  for (int f = 0; f < NF; f++) {
    int shared = rank == 0 && f == 1;
    own[f] = mmap(NULL, span, PROT_READ | PROT_WRITE,
                  (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
    memset(own[f], 0x11 * (f + 1), span);
    w.data[f] = own[f];
  }
  long ignored = 0;
  expect_failure = 1;
  hs_plan p5 = make_plan(&w, 2, HS_STENCIL_BOX, &g1, &ignored);
  expect_failure = 0;
  if (rank == 0 && getenv("TEST_REMAP_VERBOSE")) printf("expected failure: %s\n", hs_error_message());
  const char *msg = hs_error_message();
  if (size > 1 && (p5 || !strstr(msg, "cannot be remapped"))) {
    fprintf(stderr, "[rank %d] FAIL: plan over a shared mapping: %s (%s)\n", rank,
            p5 ? "created" : "wrong error", msg);
    bad++;
  }
  hs_plan_free(&p5);
  if (remap_mappings()) {
    fprintf(stderr, "[rank %d] FAIL: %d memfd mappings left after a failed creation\n", rank,
            remap_mappings());
    bad++;
  }
  for (int f = 0; f < NF; f++) {
    for (size_t k = 0; k < span; k++)
      if (((unsigned char *)own[f])[k] != 0x11 * (f + 1)) {
        fprintf(stderr, "[rank %d] FAIL: a failed creation changed array %d\n", rank, f);
        bad++;
        break;
      }
    munmap(own[f], span);
  }
  bad = sum(bad);

  /* 6. field 0 hs_alloc'd on even ranks, malloc'd (so remapped) on odd ones: each rank
   * still finds its neighbour's field 0, under the window's id or the remap's. */
  void *win0 = NULL, *heap[NF];
  if (hs_alloc(w.d, w.bytes, &win0) != HS_OK) bad++;
  for (int f = 0; f < NF; f++) {
    heap[f] = malloc(w.bytes);
    w.data[f] = f == 0 && rank % 2 == 0 ? win0 : heap[f];
  }
  hs_plan p6 = make_plan(&w, 2, HS_STENCIL_BOX, &g1, &bad);
  for (int s = 0; bad == 0 && p6 && s < nswaps; s++)
    bad += sum(swap_check(&w, p6, &g1, 400 + s, "plan 6, field 0 hs_alloc'd on even ranks"));
  hs_plan_free(&p6);
  for (int f = 0; f < NF; f++) free(heap[f]);
  hs_free(w.d, win0);
  bad = sum(bad);

  /* 7. an array on the stack is refused (its pages hold live frames). */
  if (w.bytes <= 65536) {
    double stackarr[8192];
    for (int f = 0; f < NF; f++) w.data[f] = f == 0 ? (void *)stackarr : malloc(w.bytes);
    memset(stackarr, 0, w.bytes);
    expect_failure = 1;
    hs_plan p7 = make_plan(&w, 2, HS_STENCIL_BOX, &g1, &ignored);
    expect_failure = 0;
    if (size > 1 && (p7 || !strstr(hs_error_message(), "stack"))) {
      fprintf(stderr, "[rank %d] FAIL: plan over a stack array: %s\n", rank,
              p7 ? "created" : hs_error_message());
      bad++;
    }
    hs_plan_free(&p7);
    for (int f = 1; f < NF; f++) free(w.data[f]);
    if (remap_mappings()) bad++;
    bad = sum(bad);
  }

  hs_decomp_free(&w.d);
  if (rank == 0) printf("test_remap on %s at %d ranks: %s\n", spec, size, bad ? "FAIL" : "ok");
  MPI_Finalize();
  return bad ? 1 : 0;
}
