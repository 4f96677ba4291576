/* Communication time per swap on the MONC case, each transport as a ratio to p2p and to the
 * memcpy bound, all methods interleaved in one run (the machine is shared and noisy: each
 * repeat times every method back to back, ratios are taken within a repeat, and the median
 * with min-max over repeats is reported).
 *
 * MONC case: local 16 x 16 x nz (z fastest, z whole), depth 2 on x and y, box stencil,
 * 30 float64 fields, periodic x and y. The memcpy bound copies the same halo bytes (to
 * neighbours and periodic self copies) as z-columns, every rank at once: for every halo
 * column, the interior column one period away in the rank's own field (the same access
 * pattern a one-copy exchange has, without any synchronisation).
 *
 * Usage: bench_transports [--reps R] [--swaps N] [--fields F] [--local L] [--nz Z]
 *                         [--method NAME]...
 * Methods: memcpy, p2p, nbr, shm, shm-alloc (fields from hs_alloc), shm-barrier-alloc,
 * p2p-alloc, shmem (only when usable: HALOSWAP_SHMEM=1 and OMPI_MCA_osc=^rdma). */
#include "app_common.h"
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  const char *spec; /* NULL: the memcpy bound */
  int alloc;        /* fields from hs_alloc */
  hs_plan plan;
  double *t;        /* seconds per swap, per repeat */
} method;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The bound: every halo z-column of every field filled from the interior column one
 * period away, in the same field. */
static void memcpy_bound(double **f, int nf, const int loc[3], int h) {
  int ax = loc[0] + 2 * h, ay = loc[1] + 2 * h, nz = loc[2];
  (void)ax;
  size_t col = (size_t)nz * sizeof(double);
  for (int k = 0; k < nf; k++)
    for (int x = -h; x < loc[0] + h; x++)
      for (int y = -h; y < loc[1] + h; y++) {
        int inx = x >= 0 && x < loc[0], iny = y >= 0 && y < loc[1];
        if (inx && iny) continue;
        int sx = x < 0 ? x + loc[0] : x >= loc[0] ? x - loc[0] : x;
        int sy = y < 0 ? y + loc[1] : y >= loc[1] ? y - loc[1] : y;
        double *dst = f[k] + ((size_t)(x + h) * ay + (size_t)(y + h)) * nz;
        const double *src = f[k] + ((size_t)(sx + h) * ay + (size_t)(sy + h)) * nz;
        memcpy(dst, src, col);
      }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = 15, swaps = 20, nf = 30, L = 16, nz = 256;
  const char *want[16];
  int nwant = 0;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--swaps")) swaps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--fields")) nf = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--local")) L = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--nz")) nz = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--method") && nwant < 16) want[nwant++] = argv[++i];
    else {
      if (rank == 0) fprintf(stderr, "bench_transports: unknown argument '%s'\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  if (reps < 1 || swaps < 1 || nf < 1 || L < 2 || nz < 1) {
    if (rank == 0) fprintf(stderr, "bench_transports: reps, swaps, fields >= 1; local >= 2\n");
    MPI_Finalize();
    return 2;
  }
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.global[0] = L * dims[0];
  dd.global[1] = L * dims[1];
  dd.global[2] = nz;
  dd.procs[0] = dims[0];
  dd.procs[1] = dims[1];
  dd.procs[2] = 1;
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) {
    fprintf(stderr, "decomposition: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int h = 2, loc[3] = {L, L, nz};
  size_t n = (size_t)(L + 2 * h) * (L + 2 * h) * nz;
  double **plain = malloc((size_t)nf * sizeof *plain), **shared = malloc((size_t)nf * sizeof *shared);
  hs_field *fp = malloc((size_t)nf * sizeof *fp), *fs = malloc((size_t)nf * sizeof *fs);
  for (int k = 0; k < nf; k++) {
    plain[k] = malloc(n * sizeof(double));
    void *s;
    if (hs_alloc(d, n * sizeof(double), &s) != HS_OK) {
      fprintf(stderr, "hs_alloc: %s\n", hs_error_message());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    shared[k] = s;
    for (size_t i = 0; i < n; i++) plain[k][i] = shared[k][i] = (double)(rank * 1000 + k) + (double)i;
    fp[k] = hs_field_array(HS_FLOAT64, plain[k], HS_LAYOUT_ZFAST, h);
    fs[k] = hs_field_array(HS_FLOAT64, shared[k], HS_LAYOUT_ZFAST, h);
    fp[k].halo[2] = fs[k].halo[2] = 0;
  }
  method all[] = {
      {"memcpy", NULL, 0, NULL, NULL},
      {"p2p", "p2p", 0, NULL, NULL},
      {"nbr", "nbr", 0, NULL, NULL},
      {"shm", "shm", 0, NULL, NULL},
      {"shm-alloc", "shm", 1, NULL, NULL},
      {"shm-barrier-alloc", "shm:sync=barrier", 1, NULL, NULL},
      {"p2p-alloc", "p2p", 1, NULL, NULL},
      {"shmem", "shmem", 0, NULL, NULL},
  };
  int nm = (int)(sizeof all / sizeof all[0]);
  method *m[16];
  int nuse = 0;
  uint64_t halo_bytes = 0;
  for (int i = 0; i < nm; i++) {
    int keep = nwant == 0;
    for (int w = 0; w < nwant; w++)
      if (!strcmp(want[w], all[i].name)) keep = 1;
    if (i == 0 || i == 1) keep = 1; /* the references */
    if (!keep) continue;
    if (all[i].spec) {
      char tname[32], why[256];
      snprintf(tname, sizeof tname, "%.*s", (int)strcspn(all[i].spec, ":"), all[i].spec);
      if (hs_transport_available(MPI_COMM_WORLD, tname, why, sizeof why) != HS_OK) {
        if (rank == 0)
          printf("# %s: not usable here (%s)\n", all[i].name, why[0] ? why : hs_error_message());
        continue;
      }
      hs_plan_desc pd;
      app_plan_desc_xy(&pd, h, HS_STENCIL_BOX, nf, all[i].alloc ? fs : fp, all[i].spec);
      if (hs_plan_create(d, &pd, &all[i].plan) != HS_OK) {
        if (rank == 0) printf("# %s: %s\n", all[i].name, hs_error_message());
        continue;
      }
      hs_plan_stats st;
      hs_plan_get_stats(all[i].plan, &st);
      halo_bytes = st.bytes_recv_per_swap + st.bytes_self_per_swap;
    }
    all[i].t = calloc((size_t)reps, sizeof(double));
    m[nuse++] = &all[i];
  }
  if (rank == 0) {
    char mpiv[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(mpiv, &len);
    mpiv[strcspn(mpiv, "\n,")] = 0;
    printf("# MONC case: %d ranks (%d x %d), local %d x %d x %d z-fast, depth 2 box, %d float64 "
           "fields, periodic x,y\n# %s\n# halo bytes per rank per swap (to peers + self): %llu; "
           "%d repeats x %d swaps, interleaved\n",
           size, dims[0], dims[1], L, L, nz, nf, mpiv, (unsigned long long)halo_bytes, reps,
           swaps);
  }
  /* Warm-up: every method a few swaps (first touch, window mapping, lazy connections). */
  for (int i = 0; i < nuse; i++)
    for (int s = 0; s < 3; s++) {
      if (m[i]->plan) hs_swap(m[i]->plan, NULL);
      else memcpy_bound(plain, nf, loc, h);
    }
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < nuse; i++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int s = 0; s < swaps; s++) {
        if (m[i]->plan) {
          if (hs_swap(m[i]->plan, NULL) != HS_OK) {
            fprintf(stderr, "%s: %s\n", m[i]->name, hs_error_message());
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
        } else {
          memcpy_bound(plain, nf, loc, h);
        }
      }
      double dt = (MPI_Wtime() - t0) / swaps, mx;
      MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      m[i]->t[r] = mx;
    }
  if (rank == 0) {
    printf("%-18s %10s %10s %10s %16s %16s\n", "method", "us/swap", "min", "max", "x p2p", "x memcpy");
    double *rp = malloc((size_t)reps * sizeof *rp), *rb = malloc((size_t)reps * sizeof *rb);
    double *tmp = malloc((size_t)reps * sizeof *tmp);
    for (int i = 0; i < nuse; i++) {
      for (int r = 0; r < reps; r++) {
        rp[r] = m[i]->t[r] / m[1]->t[r];
        rb[r] = m[i]->t[r] / m[0]->t[r];
        tmp[r] = m[i]->t[r];
      }
      double med = median(tmp, reps), lo = tmp[0], hi = tmp[reps - 1];
      double mp = median(rp, reps), plo = rp[0], phi = rp[reps - 1];
      double mb = median(rb, reps), blo = rb[0], bhi = rb[reps - 1];
      printf("%-18s %10.1f %10.1f %10.1f %5.2f [%.2f-%.2f] %5.2f [%.2f-%.2f]\n", m[i]->name,
             med * 1e6, lo * 1e6, hi * 1e6, mp, plo, phi, mb, blo, bhi);
    }
    free(rp);
    free(rb);
    free(tmp);
  }
  for (int i = 0; i < nuse; i++) {
    if (m[i]->plan) hs_plan_free(&m[i]->plan);
    free(m[i]->t);
  }
  for (int k = 0; k < nf; k++) {
    free(plain[k]);
    hs_free(d, shared[k]);
  }
  free(plain);
  free(shared);
  free(fp);
  free(fs);
  hs_decomp_free(&d);
  MPI_Finalize();
  return 0;
}
