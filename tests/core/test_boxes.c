/* Box decompositions (hs_decomp_create_boxes): irregular layouts of uneven vertical strips,
 * the last split in y (at 3 ranks rank 0 has two neighbours on its east side), with and
 * without a gap, periodic or not, box and star stencils, every transport, forward and
 * reverse, every cell against a brute-force oracle that finds each halo cell's owner by
 * scanning the boxes; region sets (hs_plan_create_regions: BRAMS's one-sided sets, west
 * column only, east and north, ...) on the same layouts; then every validation error.
 * auto runs at 1-4 ranks only (too slow oversubscribed, as in test_halo).
 * Usage: test_boxes [--transport SPEC]... [--may-be-unusable NAME]... */
#include "halo_check.h"
#include "test_transports.h"

#define G0 40
#define G1 40
#define H 3 /* allocated halo; depth D swapped, so the outer H - D must stay untouched */
#define D 2
#define GZ 4 /* 3-D runs: z kept whole in every box, periodic, depth D: wraps onto itself */

static int boxes[64][4]; /* lo0, lo1, hi0, hi1 per rank */

static int cut(int g, int i, int n) { return (int)((long)g * i * (i + 3) / ((long)n * (n + 3))); }

static void layout(int size, int gap) {
  int s = size < 3 ? size : (size + 1) / 2, last = size - s + 1;
  for (int r = 0; r < size; r++) {
    int st = r < s - 1 ? r : s - 1, k = r - st;
    boxes[r][0] = cut(G0, st, s);
    boxes[r][2] = cut(G0, st + 1, s);
    boxes[r][1] = st < s - 1 ? 0 : cut(G1, k, last);
    boxes[r][3] = st < s - 1 ? G1 : cut(G1, k + 1, last);
  }
  if (gap) boxes[0][3] -= 2; /* two rows at the top of rank 0's strip belong to nobody */
}

static int owner(int size, int x, int y) {
  for (int r = 0; r < size; r++)
    if (x >= boxes[r][0] && x < boxes[r][2] && y >= boxes[r][1] && y < boxes[r][3]) return r;
  return -1;
}

static double value(int x, int y, int z) { return 1.0 + x * 1000.0 + y + z * 0.25; }

/* Region sets: the names given to hs_region_set_add and, for the oracle, the same sides
 * written out as (hx, hy) pairs as the receiving rank sees them (0 0 ends a list). */
static const struct {
  const char *names;
  int sides[9][2];
} region_cases[] = {
    {NULL, {{0, 0}}},                                   /* the whole halo */
    {"west", {{-1, 0}, {0, 0}}},                        /* BRAMS's U set */
    {"y-", {{0, -1}, {0, 0}}},                          /* V */
    {"x+, north", {{1, 0}, {0, 1}, {0, 0}}},            /* P: east and north, no corner */
    {"x-y- x+", {{-1, -1}, {1, 0}, {0, 0}}},            /* a corner and a face */
};
static int rcase; /* the region case of the run in progress */

static int in_regions(int hx, int hy) {
  if (!region_cases[rcase].names) return 1;
  for (int s = 0; region_cases[rcase].sides[s][0] || region_cases[rcase].sides[s][1]; s++)
    if (region_cases[rcase].sides[s][0] == hx && region_cases[rcase].sides[s][1] == hy) return 1;
  return 0;
}

/* Global cell filled in rank r's local halo cell (i, j), or 0 if none (outside the depth or
 * stencil, off a wall, or in a gap). */
static int source(int size, int r, int i, int j, int k, int nd, int star, const int per[2],
                  int *gx, int *gy, int *gz) {
  int n[3] = {boxes[r][2] - boxes[r][0], boxes[r][3] - boxes[r][1], nd == 3 ? GZ : 1};
  int l[3] = {i, j, k}, nz = 0, dz = nd == 3 ? D : 0;
  for (int a = 0; a < 3; a++) {
    if (l[a] < -(a < 2 ? D : dz) || l[a] >= n[a] + (a < 2 ? D : dz)) return 0;
    nz += l[a] < 0 || l[a] >= n[a];
  }
  if (nz == 0 || (star && nz > 1)) return 0;
  if (!in_regions(i < 0 ? -1 : i >= n[0], j < 0 ? -1 : j >= n[1])) return 0;
  *gz = (k + n[2]) % n[2]; /* z: periodic, one box */
  int g[2] = {boxes[r][0] + i, boxes[r][1] + j}, G[2] = {G0, G1};
  for (int a = 0; a < 2; a++) {
    if (g[a] >= 0 && g[a] < G[a]) continue;
    if (!per[a]) return 0;
    g[a] = (g[a] + G[a]) % G[a];
  }
  if (owner(size, g[0], g[1]) < 0) return 0;
  *gx = g[0];
  *gy = g[1];
  return 1;
}

#define AT(a, i, j, k) (a)[(((i) + H) * (ny + 2 * H) + (j) + H) * (nz + 2 * hz) + (k) + hz]

static long run(const char *spec, int nd, int gap, int star, const int per[2], int reverse) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  layout(size, gap);
  int g[3] = {G0, G1, GZ}, lo[3] = {boxes[rank][0], boxes[rank][1], 0};
  int hi[3] = {boxes[rank][2], boxes[rank][3], GZ}, per3[3] = {per[0], per[1], 1};
  int nz = nd == 3 ? GZ : 1, hz = nd == 3 ? H : 0;
  hs_decomp d;
  if (hs_decomp_create_boxes(MPI_COMM_WORLD, nd, g, per3, lo, hi, &d) != HS_OK) {
    if (rank == 0) printf("decomp: %s\n", hs_error_message());
    return 1;
  }
  int nx = hi[0] - lo[0], ny = hi[1] - lo[1];
  double *a = malloc(sizeof(double) * (size_t)(nx + 2 * H) * (size_t)(ny + 2 * H) *
                     (size_t)(nz + 2 * hz));
  hs_field f = hs_field_array(HS_FLOAT64, a, HS_LAYOUT_ZFAST, H);
  f.halo[2] = hz;
  hs_plan_desc pd;
  const int depth[3] = {D, D, nd == 3 ? D : 0};
  test_plan_desc(&pd, depth, star ? HS_STENCIL_STAR : HS_STENCIL_BOX, 1, &f, spec);
  hs_plan p;
  long bad = 0;
  hs_region_set rs = NULL;
  if (region_cases[rcase].names &&
      (hs_region_set_create(&rs) != HS_OK ||
       hs_region_set_add(rs, -1, region_cases[rcase].names) != HS_OK))
    printf("rank %d: region set: %s\n", rank, hs_error_message());
  int prc = hs_plan_create_regions(d, &pd, rs, &p);
  hs_region_set_free(&rs);
  if (prc != HS_OK) {
    if (rank == 0) printf("plan on %s: %s\n", spec, hs_error_message());
    free(a);
    hs_decomp_free(&d);
    return 1;
  }
  for (int i = -H; i < nx + H; i++)
    for (int j = -H; j < ny + H; j++)
      for (int k = -hz; k < nz + hz; k++) {
        int in = i >= 0 && i < nx && j >= 0 && j < ny && k >= 0 && k < nz;
        AT(a, i, j, k) = reverse ? (in ? 0.0 : 1.0) : (in ? value(lo[0] + i, lo[1] + j, k) : -1.0);
      }
  void *arr[1] = {a};
  int rc = reverse ? hs_reverse(p, HS_OP_SUM, arr) : hs_swap(p, arr);
  if (rc != HS_OK) {
    printf("rank %d: %s on %s: %s\n", rank, reverse ? "reverse" : "swap", spec,
           hs_error_message());
    bad++;
  }
  /* Reverse: a cell's sum counts the halo cells of any rank it fills, found by walking every
   * rank's halo once (the same brute-force owner scan as forward). */
  double *hits = reverse ? calloc((size_t)G0 * G1 * GZ, sizeof *hits) : NULL;
  for (int r = 0; reverse && r < size; r++)
    for (int u = -D; u < boxes[r][2] - boxes[r][0] + D; u++)
      for (int v = -D; v < boxes[r][3] - boxes[r][1] + D; v++)
        for (int w = -hz; w < nz + hz; w++) {
          int x, y, z;
          if (source(size, r, u, v, w, nd, star, per, &x, &y, &z))
            hits[((size_t)x * G1 + (size_t)y) * GZ + (size_t)z] += 1.0;
        }
  for (int i = -H; i < nx + H && rc == HS_OK; i++)
    for (int j = -H; j < ny + H; j++)
      for (int k = -hz; k < nz + hz; k++) {
        int in = i >= 0 && i < nx && j >= 0 && j < ny && k >= 0 && k < nz, x, y, z;
        double want;
        if (reverse) {
          if (!in) continue;
          want = hits[((size_t)(lo[0] + i) * G1 + (size_t)(lo[1] + j)) * GZ + (size_t)k];
        } else if (in) {
          want = value(lo[0] + i, lo[1] + j, k);
        } else {
          want = source(size, rank, i, j, k, nd, star, per, &x, &y, &z) ? value(x, y, z) : -1.0;
        }
        if (AT(a, i, j, k) != want && bad++ < 3)
          printf("rank %d %s %dD %s: cell (%d,%d,%d) is %g, want %g\n", rank, spec, nd,
                 reverse ? "reverse" : "forward", i, j, k, AT(a, i, j, k), want);
      }
  free(hits);
  hs_plan_free(&p);
  hs_decomp_free(&d);
  free(a);
  long all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/* rc must be want on every rank and the message must hold `has`. */
static int expect(int rc, int want, const char *has, const char *what) {
  int rank, ok = rc == want && strstr(hs_error_message(), has) != NULL, all;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s error %-28s rc %d: %s\n", all ? "ok  " : "FAIL", what, rc, hs_error_message());
  return !all;
}

static int errors(void) {
  int rank, size, bad = 0, per[2] = {1, 1}, g[2] = {G0, G1};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  hs_decomp d = NULL;
  layout(size, 0);
  int lo[2] = {boxes[rank][0], boxes[rank][1]}, hi[2] = {boxes[rank][2], boxes[rank][3]};
  int out[2] = {hi[0], rank == size - 1 ? G1 + 1 : hi[1]};
  bad += expect(hs_decomp_create_boxes(MPI_COMM_WORLD, 2, g, per, lo, out, &d), HS_ERR_ARG,
                "lie in 0..global[1] = 40", "box outside the domain");
  int empty[2] = {lo[0], rank == 0 ? hi[1] : lo[1]};
  bad += expect(hs_decomp_create_boxes(MPI_COMM_WORLD, 2, g, per, lo, rank == 0 ? empty : hi, &d),
                HS_ERR_ARG, "at least one cell", "empty box");
  int gg[2] = {G0, rank == size - 1 ? G1 + 1 : G1};
  if (size > 1)
    bad += expect(hs_decomp_create_boxes(MPI_COMM_WORLD, 2, gg, per, lo, hi, &d),
                  HS_ERR_MISMATCH, "disagree on global[1]", "ranks disagree");
  bad += expect(hs_decomp_create_boxes(MPI_COMM_WORLD, 4, g, per, lo, hi, &d), HS_ERR_ARG,
                "ndims = 4", "ndims");
  int whole_lo[2] = {0, 0};
  if (size > 1)
    bad += expect(hs_decomp_create_boxes(MPI_COMM_WORLD, 2, g, per, whole_lo, g, &d), HS_ERR_ARG,
                  "overlap", "overlapping boxes");
  if (hs_decomp_create_boxes(MPI_COMM_WORLD, 2, g, per, lo, hi, &d) != HS_OK) return bad + 1;
  double *a = malloc(sizeof(double) * (size_t)(hi[0] - lo[0] + 2 * H) * (size_t)(hi[1] - lo[1] + 2 * H));
  hs_field f = hs_field_array(HS_FLOAT64, a, HS_LAYOUT_ZFAST, H);
  hs_plan_desc pd;
  test_plan_desc(&pd, NULL, HS_STENCIL_BOX, 1, &f, "p2p:staged=1");
  hs_plan p = NULL;
  bad += expect(hs_plan_create(d, &pd, &p), HS_ERR_ARG, "staged=1", "staged refused");
  pd.transport_name = "p2p";
  hs_plan_desc_set_order_sweep(&pd, 0, NULL);
  bad += expect(hs_plan_create(d, &pd, &p), HS_ERR_ARG, "HS_ORDER_SWEEP", "sweep refused");
  hs_plan_desc_init(&pd);
  pd.nfields = 1;
  pd.fields = &f;
  hs_field_set_stagger(&f, 0, HS_STAGGER_NODE, HS_OWNER_UPPER);
  bad += expect(hs_plan_create(d, &pd, &p), HS_ERR_ARG, "HS_STAGGER_NODE", "node stagger refused");
  /* region sets */
  hs_field_set_stagger(&f, 0, HS_STAGGER_CELL, HS_OWNER_UPPER);
  hs_region_set rs = NULL;
  if (hs_region_set_create(&rs) != HS_OK) return bad + 1;
  bad += expect(hs_region_set_add(rs, 0, "west, x-x-"), HS_ERR_ARG, "'x-x-' in \"west, x-x-\"",
                "region name");
  bad += expect(hs_region_set_add(rs, -2, "west"), HS_ERR_ARG, "field = -2", "region field");
  bad += expect(hs_region_set_add(rs, 0, " , "), HS_ERR_ARG, "names no region", "no region");
  hs_region_set_add(rs, 1, "x-");
  bad += expect(hs_plan_create_regions(d, &pd, rs, &p), HS_ERR_ARG, "names field 1; the plan has 1",
                "region field past nfields");
  hs_region_set_free(&rs);
  hs_region_set_create(&rs);
  hs_region_set_add(rs, 0, "z+");
  bad += expect(hs_plan_create_regions(d, &pd, rs, &p), HS_ERR_ARG, "grid has 2 axes",
                "z region in 2-D");
  hs_region_set_free(&rs);
  hs_region_set_create(&rs);
  hs_region_set_add(rs, -1, rank == size - 1 ? "x+" : "x-");
  if (size > 1)
    bad += expect(hs_plan_create_regions(d, &pd, rs, &p), HS_ERR_MISMATCH,
                  "disagree on the regions of field 0", "regions differ");
  hs_region_set_free(&rs);
  hs_decomp_free(&d);
  free(a);
  return bad;
}

int main(int argc, char **argv) {
  int rank, size;
  test_opts o = {.nswaps = 1};
  test_init(&argc, &argv, &rank, &size);
  for (int i = 1; i < argc; i++)
    if (!test_opt(argc, argv, &i, &o)) return test_bad_arg("test_boxes", argv[i]);
  if (size > 64) {
    if (rank == 0) printf("test_boxes: at most 64 ranks\n");
    MPI_Finalize();
    return 77;
  }
  test_default_specs(&o, size, 4);
  int passed = 0, failed = 0, unusable = 0;
  for (int t = 0; t < o.nspecs; t++) {
    const char *spec = o.specs[t];
    if (!test_transport_usable(spec, o.optional, o.noptional, &unusable, &failed)) continue;
    /* 2-D: every combination; 3-D: gap, forward and reverse; then the region sets (2-D),
     * forward or reverse, periodic or walled, the corner one with the star stencil (which
     * drops its corner) */
    for (int c = 0; c < 24; c++) {
      int nd = c < 16 || c >= 20 ? 2 : 3, gap = c < 16 ? c & 1 : 1, star = c < 16 ? c >> 1 & 1 : c & 1;
      int per[2] = {c >> 2 & 1, c >> 2 & 1}, rev = c < 16 ? c >> 3 & 1 : c >> 1 & 1;
      if (c >= 16) per[0] = per[1] = 1;
      rcase = c < 20 ? 0 : c - 19;
      if (rcase) {
        rev = c & 1;
        per[0] = per[1] = rcase & 1;
        gap = rcase == 2;
        star = rcase == 4;
      }
      if (size == 1 && gap) gap = 0;
      long bad = run(spec, nd, gap, star, per, rev);
      bad ? failed++ : passed++;
      if (rank == 0 && bad)
        printf("FAIL %s %dD gap %d star %d periodic %d %s regions %s at %d ranks: %ld wrong "
               "cells\n", spec, nd, gap, star, per[0], rev ? "reverse" : "forward",
               region_cases[rcase].names ? region_cases[rcase].names : "all", size, bad);
    }
  }
  int eb = errors();
  failed += eb;
  if (!eb) passed++;
  if (rank == 0)
    printf("test_boxes at %d ranks:\n%d passed, %d failed, %d transports not usable here\n", size,
           passed, failed, unusable);
  MPI_Finalize();
  return test_exit_status(passed, failed, unusable, 1);
}
