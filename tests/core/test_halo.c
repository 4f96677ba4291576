/* Transport-equivalence test: every registered transport, on every configuration below, must
 * fill every halo cell with the value computed from its global coordinates, leave every other
 * cell untouched, and so give the same bits as every other transport.
 * Usage: test_halo [--transport SPEC]... [--swaps N] [--verbose] [--may-be-unusable NAME]...
 *                  [--packed-alloc] [--expect-remap] [--node-size N]
 * SPEC is a transport name with optional options, e.g. "rma-fence:drive=get"; without
 * --transport every registered transport is run with its defaults. A built transport that
 * reports itself unusable fails the test unless named by --may-be-unusable (then it is
 * counted as skipped); so does a configuration whose decomposition fails at this rank count
 * (skipped: it cannot run here), and the closing line counts passes, failures and skips.
 * Every run also checks that plan creation and plan free leave the arrays' contents as they
 * were (the core option remap=1 re-backs their pages). --packed-alloc puts the registered
 * arrays of a configuration in one malloc'd block, not page-aligned, with canaries between
 * them (pages shared by several arrays and other data), checked after every step.
 * --expect-remap: the plans must report remap=1's sharing, and once freed leave no memfd
 * mapping behind (/proc/self/maps). */
#include "halo_check.h"
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  int ndims;
  int global[3], procs[3], periodic[3];
  int depth[3];
  int halo_extra;      /* allocated halo beyond depth */
  hs_stencil stencil;
  hs_oneway oneway;
  int oneway_axis;
  int nfields;
  int types;           /* 0: all float64; 1: cycle f64,f32,i32,i64 */
  int layouts;         /* 0: ZFAST; 1: XFAST; 2: cycle ZFAST, XFAST, STRIDED */
  int per_swap_arrays; /* swap alternately with a second set of arrays (2: odd fields NULL) */
  int callbacks;       /* odd fields go through pack/unpack hooks */
} config;

static const config configs[] = {
    /* MONC: 2D decomposition of x,y, z whole, box, depth 2, Fortran field(z,y,x). */
    {"monc-box-d2", 3, {13, 11, 6}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, 0, HS_STENCIL_BOX, 0, 0, 3, 0, 0, 0, 0},
    /* BRAMS: star (5-point), depth 1, many fields, C layout. */
    {"brams-star-d1", 3, {12, 9, 4}, {0, 0, 1}, {1, 1, 0}, {1, 1, 0}, 0, HS_STENCIL_STAR, 0, 0, 8, 0, 1, 0, 0},
    /* Walled x, periodic y, depth 3, mixed types. */
    {"walled-x-d3-mixed", 3, {14, 13, 3}, {0, 0, 1}, {0, 1, 0}, {3, 3, 0}, 0, HS_STENCIL_BOX, 0, 0, 4, 1, 0, 0, 0},
    /* 3D decomposition, all periodic, 26 neighbours, mixed layouts and types. */
    {"3d-box-d1-layouts", 3, {7, 6, 5}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0, HS_STENCIL_BOX, 0, 0, 3, 1, 2, 0, 0},
    /* 3D decomposition, star, walled z. */
    {"3d-star-d2-walledz", 3, {9, 8, 6}, {0, 0, 0}, {1, 1, 0}, {2, 2, 2}, 0, HS_STENCIL_STAR, 0, 0, 2, 1, 1, 0, 0},
    /* 2D grid, walled everywhere, depth 2, box. */
    {"2d-walled-box-d2", 2, {17, 15, 1}, {0, 0, 0}, {0, 0, 0}, {2, 2, 0}, 0, HS_STENCIL_BOX, 0, 0, 2, 1, 0, 0, 0},
    /* 2D grid, periodic, star, XFAST. */
    {"2d-periodic-star-d1", 2, {10, 9, 1}, {0, 0, 0}, {1, 1, 0}, {1, 1, 0}, 0, HS_STENCIL_STAR, 0, 0, 2, 0, 1, 0, 0},
    /* 1xN and Nx1 process grids (duplicate neighbours along the whole axis). */
    {"1xN-box-d2", 3, {5, 19, 4}, {1, 0, 1}, {1, 1, 0}, {2, 2, 0}, 0, HS_STENCIL_BOX, 0, 0, 2, 0, 0, 0, 0},
    {"Nx1-box-d1", 3, {19, 5, 4}, {0, 1, 1}, {1, 1, 0}, {1, 1, 0}, 0, HS_STENCIL_BOX, 0, 0, 2, 1, 1, 0, 0},
    /* MONC solver: depth 1 swap of arrays allocated with halo 2, no corners. */
    {"solver-d1-in-h2", 3, {13, 11, 5}, {0, 0, 1}, {1, 1, 0}, {1, 1, 0}, 1, HS_STENCIL_STAR, 0, 0, 1, 0, 0, 0, 0},
    /* One-direction swaps (MONC TVD). */
    {"oneway-lower-x", 3, {13, 11, 4}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, 0, HS_STENCIL_BOX, HS_ONEWAY_LOWER, 0, 2, 0, 0, 0, 0},
    {"oneway-upper-y-walled", 3, {13, 11, 4}, {0, 0, 1}, {1, 0, 0}, {1, 1, 0}, 0, HS_STENCIL_BOX, HS_ONEWAY_UPPER, 1, 2, 1, 1, 0, 0},
    /* Arrays given anew at each swap (MONC source_data). */
    {"per-swap-arrays", 3, {12, 10, 4}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, 0, HS_STENCIL_BOX, 0, 0, 2, 1, 0, 1, 0},
    /* Per-swap arrays mixing NULL (keep the registered one) and given entries. */
    {"per-swap-mixed-null", 3, {12, 10, 4}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, 0, HS_STENCIL_BOX, 0, 0, 4, 1, 2, 2, 0},
    /* MONC policy hooks: pack/unpack callbacks for some fields. */
    {"policy-callbacks", 3, {12, 10, 4}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, 0, HS_STENCIL_BOX, 0, 0, 4, 0, 0, 0, 1},
    /* 64 fields in one plan. */
    {"64-fields", 3, {9, 9, 2}, {0, 0, 1}, {1, 1, 0}, {1, 1, 0}, 0, HS_STENCIL_BOX, 0, 0, 64, 1, 0, 0, 0},
    /* Deep halos: depth 8 (every rank's extent is 8 or more at 1-9 ranks), and EPOCH's ghost
     * width 5 on a 3-D decomposition (26 neighbours), mixed types and layouts. */
    {"depth8", 3, {32, 32, 2}, {0, 0, 1}, {1, 1, 0}, {8, 8, 0}, 0, HS_STENCIL_BOX, 0, 0, 2, 1, 0, 0, 0},
    {"depth5-3d", 3, {15, 15, 10}, {0, 0, 0}, {1, 1, 1}, {5, 5, 5}, 0, HS_STENCIL_BOX, 0, 0, 3, 1, 2, 0, 0},
    /* Runs of 83 cells (332-664 B, every alignment): the streaming halo copies (stream=1)
     * write whole lines in the middle and the shared head and tail lines with memcpy. */
    {"long-runs", 3, {11, 9, 83}, {0, 0, 1}, {1, 1, 0}, {2, 2, 0}, 1, HS_STENCIL_BOX, 0, 0, 4, 1, 2, 0, 0},
    /* Runs of 20, 28, 40 and 56 bytes (depth 7 and 5 across the fastest axis, 4- and 8-byte
     * cells): the copy kernel's size classes, two overlapping copies per run. */
    {"odd-runs", 3, {30, 24, 3}, {0, 0, 1}, {1, 1, 0}, {7, 5, 0}, 0, HS_STENCIL_BOX, 0, 0, 4, 1, 2, 0, 0},
};

static const hs_type type_cycle[4] = {HS_FLOAT64, HS_FLOAT32, HS_INT32, HS_INT64};
static const hs_layout layout_cycle[3] = {HS_LAYOUT_ZFAST, HS_LAYOUT_XFAST, HS_LAYOUT_STRIDED};

/* --node-size N: node-aware placement on virtual nodes of N ranks (0: not asked). */
static int place_node_size = 0;
static int placed_configs = 0; /* configurations where the node blocks were applied */

static int packed_alloc = 0; /* --packed-alloc */
static int expect_remap = 0; /* --expect-remap */
static const char *expect_describe; /* --expect-describe TEXT: every plan's description has it */
#define CANARY 40            /* bytes before, between and after the packed arrays */

static unsigned char canary_byte(size_t i) { return (unsigned char)(0xA5 ^ (i * 31)); }

/* Canary bytes of a packed block that no longer hold their pattern; field f occupies
 * [at[2f], at[2f+1]). */
static long check_canaries(const unsigned char *block, const size_t *at, int nf, size_t total,
                           const char *when, int rank) {
  long bad = 0;
  size_t k = 0;
  for (int f = 0; f <= nf; f++) {
    size_t end = f < nf ? at[2 * f] : total;
    for (; k < end; k++)
      if (block[k] != canary_byte(k)) bad++;
    if (f < nf) k = at[2 * f + 1];
  }
  if (bad)
    fprintf(stderr, "[rank %d] FAIL %s: %ld canary bytes around the arrays changed\n", rank,
            when, bad);
  return bad;
}

/* With node placement applied, every rank of a virtual node must sit in the same block. */
static long check_placement(hs_decomp d, int rank) {
  int block[3], nd = hs_decomp_ndims(d);
  if (hs_decomp_placement(d, block) != HS_PLACE_NODE) return 0;
  MPI_Comm node;
  MPI_Comm_split(MPI_COMM_WORLD, rank / place_node_size, rank, &node);
  int v[3] = {0, 0, 0}, lo[3], hi[3];
  for (int a = 0; a < nd; a++) v[a] = hs_decomp_coord(d, a) / block[a];
  MPI_Allreduce(v, lo, 3, MPI_INT, MPI_MIN, node);
  MPI_Allreduce(v, hi, 3, MPI_INT, MPI_MAX, node);
  MPI_Comm_free(&node);
  long bad = 0;
  for (int a = 0; a < 3; a++)
    if (lo[a] != hi[a]) bad++;
  if (bad)
    fprintf(stderr, "[rank %d] FAIL placement: node %d spans blocks %d..%d on some axis\n", rank,
            rank / place_node_size, lo[0], hi[0]);
  if (rank == 0) placed_configs++;
  return bad;
}


#define SKIPPED (-1L)

/* Runs one configuration on one transport; returns the number of wrong cells (all ranks), or
 * SKIPPED when this rank count cannot decompose the grid. */
static long run_config(const config *c, const char *transport, int nswaps, int verbose) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hs_decomp_desc dd;
  test_decomp_desc(&dd, c->ndims, c->global, c->procs, c->periodic);
  if (place_node_size > 0) {
    dd.placement = HS_PLACE_NODE;
    dd.node_size = place_node_size;
  }
  hs_decomp d;
  int rc = hs_decomp_create(MPI_COMM_WORLD, &dd, &d);
  if (rc != HS_OK) {
    /* A rank count that cannot decompose this grid is skipped the same way on every rank. */
    if (rank == 0) printf("skip %s on %s: %s\n", c->name, transport, hs_error_message());
    return SKIPPED;
  }
  long placement_bad = place_node_size > 0 ? check_placement(d, rank) : 0;
  int local[3], halo[3];
  for (int a = 0; a < 3; a++) {
    local[a] = a < c->ndims ? hs_decomp_local_extent(d, a) : 1;
    halo[a] = a < c->ndims ? c->depth[a] + c->halo_extra : 0;
  }
  int nf = c->nfields;
  tfield *tf = calloc((size_t)nf, sizeof *tf);
  void **data = calloc((size_t)nf, sizeof *data), **alt = calloc((size_t)nf, sizeof *alt);
  hs_field *fields = calloc((size_t)nf, sizeof *fields);
  tfield_hook *hooks = calloc((size_t)nf, sizeof *hooks);
  for (int f = 0; f < nf; f++) {
    hs_type t = c->types ? type_cycle[f % 4] : HS_FLOAT64;
    hs_layout l = c->layouts == 0 ? HS_LAYOUT_ZFAST
                  : c->layouts == 1 ? HS_LAYOUT_XFAST
                                    : layout_cycle[f % 3];
    tfield_init(&tf[f], t, l, local, halo, c->ndims);
    if (!packed_alloc) data[f] = calloc(tf[f].n, hs_type_size(t));
    alt[f] = calloc(tf[f].n, hs_type_size(t));
    fields[f] = hs_field_array(t, data[f], l, 0);
    for (int a = 0; a < 3; a++) {
      fields[f].halo[a] = tf[f].halo[a];
      fields[f].stride[a] = tf[f].stride[a];
    }
    if (c->callbacks && f % 2 == 1) {
      hooks[f].tf = &tf[f];
      hooks[f].data = data[f];
      fields[f].pack = tfield_hook_pack;
      fields[f].unpack = tfield_hook_unpack;
      fields[f].ctx = &hooks[f];
    }
  }
  /* --packed-alloc: the arrays in one block, 8-byte aligned only, canaries between. */
  unsigned char *block = NULL;
  size_t *at = calloc(2 * (size_t)nf + 1, sizeof *at), total = CANARY + 8;
  for (int f = 0; packed_alloc && f < nf; f++) {
    at[2 * f] = total;
    at[2 * f + 1] = total + tf[f].n * hs_type_size(tf[f].type);
    total = at[2 * f + 1] + CANARY;
  }
  if (packed_alloc) {
    block = malloc(total);
    for (size_t k = 0; k < total; k++) block[k] = canary_byte(k);
    for (int f = 0; f < nf; f++) {
      data[f] = block + at[2 * f];
      memset(data[f], 0, at[2 * f + 1] - at[2 * f]);
      fields[f].data = data[f];
      hooks[f].data = data[f];
    }
  }
  hs_plan_desc pd;
  test_plan_desc(&pd, c->depth, c->stencil, nf, fields, transport);
  pd.oneway = c->oneway;
  pd.oneway_axis = c->oneway_axis;
  tgeom g;
  tgeom_from(&g, d, &pd);
  for (int f = 0; f < nf; f++) {
    tfield_fill(&tf[f], data[f], &g, f, 0, 1);
    tfield_fill(&tf[f], alt[f], &g, f, 0, 1);
  }
  hs_plan p;
  long bad = placement_bad;
  void **saved = calloc((size_t)nf, sizeof *saved);
  for (int f = 0; f < nf; f++) {
    size_t bytes = tf[f].n * hs_type_size(tf[f].type);
    saved[f] = malloc(bytes);
    memcpy(saved[f], data[f], bytes);
  }
  rc = hs_plan_create(d, &pd, &p);
  if (rc != HS_OK) {
    if (rank == 0)
      fprintf(stderr, "FAIL %s on %s: plan creation: %s\n", c->name, transport,
              hs_error_message());
    bad = 1;
    goto done;
  }
  /* Plan creation leaves the arrays as they were (remap=1 moves their pages). */
  for (int f = 0; f < nf; f++)
    if (memcmp(saved[f], data[f], tf[f].n * hs_type_size(tf[f].type))) {
      fprintf(stderr, "[rank %d] FAIL %s on %s: plan creation changed array %d\n", rank,
              c->name, transport, f);
      bad++;
    }
  if (block) bad += check_canaries(block, at, nf, total, "after plan creation", rank);
  if (expect_remap) {
    char desc[4096];
    hs_plan_describe(p, desc, sizeof desc);
    if (!strstr(desc, "; remap: ")) {
      fprintf(stderr, "[rank %d] FAIL %s on %s: hs_plan_describe reports no remap: %s\n", rank,
              c->name, transport, desc);
      bad++;
    }
  }
  if (expect_describe) {
    char desc[4096];
    hs_plan_describe(p, desc, sizeof desc);
    if (!strstr(desc, expect_describe)) {
      fprintf(stderr, "[rank %d] FAIL %s on %s: hs_plan_describe lacks \"%s\": %s\n", rank,
              c->name, transport, expect_describe, desc);
      bad++;
    }
  }
  void **given = calloc((size_t)nf, sizeof *given), **cur = calloc((size_t)nf, sizeof *cur);
  for (int s = 0; s < nswaps && bad == 0; s++) {
    int use_alt = c->per_swap_arrays && (s % 2 == 1);
    for (int f = 0; f < nf; f++) {
      /* Mixed: odd fields NULL, so the registered array of that field is swapped. */
      given[f] = use_alt && !(c->per_swap_arrays == 2 && f % 2 == 1) ? alt[f] : NULL;
      cur[f] = given[f] ? given[f] : data[f];
      tfield_fill(&tf[f], cur[f], &g, f, s, 0);
    }
    rc = hs_swap_start(p, use_alt ? given : NULL);
    if (rc == HS_OK) rc = hs_swap_complete(p, use_alt ? given : NULL);
    if (rc != HS_OK) {
      fprintf(stderr, "[rank %d] FAIL %s on %s: swap %d: %s\n", rank, c->name, transport, s,
              hs_error_message());
      bad++;
      break;
    }
    char what[160];
    snprintf(what, sizeof what, "%s/%s%s", c->name, transport, use_alt ? " (per-swap arrays)" : "");
    for (int f = 0; f < nf; f++) bad += tfield_check(&tf[f], cur[f], &g, f, s, what, rank, 1);
    /* A registered array replaced for this swap must be left alone: its halos still hold
     * the previous swap's values. */
    for (int f = 0; f < nf; f++)
      if (given[f]) bad += tfield_check(&tf[f], data[f], &g, f, s - 1, "registered arrays untouched", rank, 1);
    if (block) bad += check_canaries(block, at, nf, total, what, rank);
    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    bad = all;
  }
  hs_plan_stats st;
  hs_plan_get_stats(p, &st);
  if (bad == 0 && st.swaps != (uint64_t)nswaps) {
    fprintf(stderr, "[rank %d] FAIL %s on %s: stats.swaps = %llu, want %d\n", rank, c->name,
            transport, (unsigned long long)st.swaps, nswaps);
    bad = 1;
  }
  for (int f = 0; f < nf; f++)
    memcpy(saved[f], data[f], tf[f].n * hs_type_size(tf[f].type));
  if (hs_plan_free(&p) != HS_OK || p != NULL) bad++;
  /* Plan free leaves the arrays as they were (remap=1 gives the pages back). */
  for (int f = 0; f < nf; f++)
    if (memcmp(saved[f], data[f], tf[f].n * hs_type_size(tf[f].type))) {
      fprintf(stderr, "[rank %d] FAIL %s on %s: plan free changed array %d\n", rank, c->name,
              transport, f);
      bad++;
    }
  if (block) bad += check_canaries(block, at, nf, total, "after plan free", rank);
  if (expect_remap && remap_mappings()) {
    fprintf(stderr, "[rank %d] FAIL %s on %s: %d remap mappings left after plan free\n", rank,
            c->name, transport, remap_mappings());
    bad++;
  }
  free(given);
  free(cur);
done:
  for (int f = 0; f < nf; f++) {
    if (!block) free(data[f]);
    free(alt[f]);
    free(saved[f]);
  }
  free(saved);
  free(block);
  free(at);
  free(tf);
  free(data);
  free(alt);
  free(fields);
  free(hooks);
  hs_decomp_free(&d);
  return test_worst(bad);
}

int main(int argc, char **argv) {
  int rank, size;
  test_init(&argc, &argv, &rank, &size);
  test_opts o = {.nswaps = 4};
  int verbose = 0;
  for (int i = 1; i < argc; i++) {
    if (test_opt(argc, argv, &i, &o))
      continue;
    else if (!strcmp(argv[i], "--verbose"))
      verbose = 1;
    else if (!strcmp(argv[i], "--packed-alloc"))
      packed_alloc = 1;
    else if (!strcmp(argv[i], "--expect-remap"))
      expect_remap = 1;
    else if (!strcmp(argv[i], "--expect-describe") && i + 1 < argc)
      expect_describe = argv[++i];
    else if (!strcmp(argv[i], "--node-size") && i + 1 < argc)
      place_node_size = atoi(argv[++i]);
    else
      return test_bad_arg("test_halo", argv[i]);
  }
  int passed = 0, failed = 0, skipped = 0;
  int nconf = (int)(sizeof configs / sizeof configs[0]);
  if (test_default_specs(&o, size, 4)) {
    if (rank == 0) printf("skip transport auto above 4 ranks (too slow oversubscribed)\n");
    skipped += nconf;
  }
  int unusable = 0;
  for (int t = 0; t < o.nspecs; t++) {
    const char *spec = o.specs[t];
    if (!test_transport_usable(spec, o.optional, o.noptional, &unusable, &failed)) continue;
    for (int c = 0; c < nconf; c++) {
      long bad = run_config(&configs[c], spec, o.nswaps, verbose);
      if (bad == SKIPPED) skipped++;
      else if (bad) failed++;
      else passed++;
      if (rank == 0 && (bad || verbose))
        printf("%s %-24s on %-12s at %d ranks (%ld wrong cells)\n", bad ? "FAIL" : "ok  ",
               configs[c].name, spec, size, bad);
    }
  }
  if (place_node_size > 0 && size > place_node_size && placed_configs == 0 && rank == 0) {
    fprintf(stderr, "FAIL: --node-size %d: node placement applied to no configuration\n",
            place_node_size);
    failed++;
  }
  if (place_node_size > 0 && rank == 0)
    printf("node placement (virtual nodes of %d ranks) applied in %d runs\n", place_node_size,
           placed_configs);
  if (rank == 0)
    printf("test_halo at %d ranks:\n%d passed, %d failed, %d skipped, %d transports not usable "
           "here\n", size, passed, failed, skipped, unusable);
  MPI_Finalize();
  return test_exit_status(passed, failed, unusable, 1);
}
