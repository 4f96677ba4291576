/* Region sets on a Cartesian decomposition (hs_plan_create_regions; test_boxes covers box
 * decompositions): 2-D and 3-D periodic grids, two fields (the second with its own regions),
 * one-sided sets (BRAMS's U: west only; P: east and north), a corner with a face, and edges
 * under the star stencil (which drops them all), on every transport; every cell against the
 * analytic oracle (halo cells outside the regions keep their sentinel).
 * Usage: test_regions [--transport SPEC]... [--may-be-unusable NAME]... */
#include "halo_check.h"

static const struct {
  int ndims;
  hs_stencil stencil;
  const char *names[2];   /* field 0's (or every field's, if names[1] is NULL) and field 1's */
  uint32_t sides[2];      /* the same, as bits (hx+1)*9 + (hy+1)*3 + hz+1 */
} cases[] = {
    {2, HS_STENCIL_BOX, {"west", NULL}, {1u << 4, 1u << 4}},
    {2, HS_STENCIL_BOX, {"x+ y+", "all"}, {1u << 22 | 1u << 16, 0x7ffdfffu}},
    {3, HS_STENCIL_BOX, {"x-y-z+, z-", "faces"}, {1u << 2 | 1u << 12, 0x415410u}},
    {3, HS_STENCIL_STAR, {"edges", "y-"}, {0, 1u << 10}},
};

static long run(const char *spec, int c) {
  int nd = cases[c].ndims, depth[3] = {2, 2, nd == 3 ? 1 : 0}, halo[3] = {2, 2, 1};
  hs_decomp d = test_periodic_decomp(nd, 12, 10, 6);
  if (nd == 3) { /* z periodic too */
    hs_decomp_free(&d);
    hs_decomp_desc dd;
    hs_decomp_desc_init(&dd);
    dd.global[0] = 12, dd.global[1] = 10, dd.global[2] = 6;
    dd.periodic[2] = 1;
    dd.procs[2] = 1;
    hs_decomp_create(MPI_COMM_WORLD, &dd, &d);
  }
  tgeom g;
  hs_plan_desc pd;
  tfield tf;
  hs_field fields[2];
  void *data[2];
  int local[3];
  for (int a = 0; a < 3; a++) local[a] = a < nd ? hs_decomp_local_extent(d, a) : 1;
  tfield_init(&tf, HS_FLOAT64, HS_LAYOUT_ZFAST, local, halo, nd);
  for (int f = 0; f < 2; f++) {
    data[f] = calloc(tf.n, sizeof(double));
    fields[f] = hs_field_array(HS_FLOAT64, data[f], HS_LAYOUT_ZFAST, 2);
    fields[f].halo[2] = nd == 3 ? 1 : 0;
  }
  test_plan_desc(&pd, depth, cases[c].stencil, 2, fields, spec);
  hs_region_set rs;
  hs_region_set_create(&rs);
  hs_region_set_add(rs, cases[c].names[1] ? 0 : -1, cases[c].names[0]);
  if (cases[c].names[1]) hs_region_set_add(rs, 1, cases[c].names[1]);
  hs_plan p;
  long bad = 0;
  if (hs_plan_create_regions(d, &pd, rs, &p) != HS_OK) {
    if (test_rank == 0) printf("plan on %s: %s\n", spec, hs_error_message());
    bad = 1;
  }
  hs_region_set_free(&rs);
  tgeom_from(&g, d, &pd);
  for (int s = 1; s <= 2 && !bad; s++) { /* twice: the second over the first's halos */
    for (int f = 0; f < 2; f++) tfield_fill(&tf, data[f], &g, f, s, 1);
    if (hs_swap(p, NULL) != HS_OK) {
      printf("[rank %d] swap on %s: %s\n", test_rank, spec, hs_error_message());
      bad++;
      break;
    }
    for (int f = 0; f < 2; f++) {
      g.regions = cases[c].sides[f];
      g.stencil = cases[c].stencil;
      if (g.regions == 0) { /* edges under the star stencil: nothing moves (not "all") */
        g.regions = 1u << 13; /* the interior only: no halo side */
      }
      char what[96];
      snprintf(what, sizeof what, "%s case %d", spec, c);
      bad += tfield_check(&tf, data[f], &g, f, s, what, test_rank, 1);
    }
  }
  if (p) hs_plan_free(&p);
  for (int f = 0; f < 2; f++) free(data[f]);
  hs_decomp_free(&d);
  return test_worst(bad);
}

int main(int argc, char **argv) {
  int size;
  test_opts o = {.nswaps = 1};
  test_init(&argc, &argv, &test_rank, &size);
  for (int i = 1; i < argc; i++)
    if (!test_opt(argc, argv, &i, &o)) return test_bad_arg("test_regions", argv[i]);
  test_default_specs(&o, size, 4);
  int passed = 0, failed = 0, unusable = 0;
  for (int t = 0; t < o.nspecs; t++) {
    const char *spec = o.specs[t];
    if (!test_transport_usable(spec, o.optional, o.noptional, &unusable, &failed)) continue;
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
      long bad = run(spec, c);
      bad ? failed++ : passed++;
      if (test_rank == 0 && bad)
        printf("FAIL %s case %d at %d ranks: %ld wrong cells\n", spec, c, size, bad);
    }
  }
  { /* refused: the staged exchange goes axis by axis */
    hs_decomp d = test_periodic_decomp(2, 12, 10, 1);
    double a[16 * 14];
    hs_field f = hs_field_array(HS_FLOAT64, a, HS_LAYOUT_ZFAST, 2);
    hs_plan_desc pd;
    test_plan_desc(&pd, NULL, HS_STENCIL_BOX, 1, &f, "p2p:staged=1");
    hs_region_set rs;
    hs_region_set_create(&rs);
    hs_region_set_add(rs, -1, "west");
    hs_plan p = NULL;
    int ok = size > 4 || (hs_plan_create_regions(d, &pd, rs, &p) == HS_ERR_ARG &&
                          strstr(hs_error_message(), "cannot be combined with staged=1"));
    ok ? passed++ : failed++;
    if (!ok && test_rank == 0) printf("FAIL staged refused: %s\n", hs_error_message());
    hs_region_set_free(&rs);
    hs_decomp_free(&d);
  }
  if (test_rank == 0)
    printf("test_regions at %d ranks:\n%d passed, %d failed, %d transports not usable here\n",
           size, passed, failed, unusable);
  MPI_Finalize();
  return test_exit_status(passed, failed, unusable, 1);
}
