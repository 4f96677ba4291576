/* hs_osu_shmem: OSU-style OpenSHMEM put/get latency and bandwidth between two PEs, 4 B to
 * 4 MiB, on the symmetric heap. Latency: PE 0 does putmem (getmem) + quiet per iteration
 * while PE 1 waits in a barrier (as osu_oshm_put/get). Bandwidth: W operations to distinct
 * offsets, then quiet. Median of --reps repetitions with min-max. With Open MPI 4.1.4 run it
 * with OMPI_MCA_osc=^rdma (shmem_finalize crashes otherwise).
 *
 * Usage: oshrun -n 2 hs_osu_shmem [--iters default|quick|N] [--reps R] [--step 2|4]
 *        [--max-size B] [--json F] */
#define _POSIX_C_SOURCE 200809L
#include "osu_common.h"

#include <shmem.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *heap, *local;

static double measure(int get, int bw, size_t size, const osu_opts *o, int *iters_out,
                      int *window_out) {
  int me = shmem_my_pe(), large = size > OSU_LARGE;
  int iters = bw ? (large ? o->bw_iters_large : o->bw_iters)
                 : (large ? o->lat_iters_large : o->lat_iters);
  int skip = bw ? (large ? o->bw_skip_large : o->bw_skip)
                 : (large ? o->lat_skip_large : o->lat_skip);
  int W = bw ? osu_window_ops(size) : 1;
  *iters_out = iters;
  *window_out = W;
  double t0 = 0, t = 0;
  shmem_barrier_all();
  if (me == 0) {
    for (int i = 0; i < skip + iters; i++) {
      if (i == skip) t0 = now();
      for (int j = 0; j < W; j++) {
        size_t off = (size_t)j * size;
        if (get)
          shmem_getmem(local + off, heap + off, size, 1);
        else
          shmem_putmem(heap + off, local + off, size, 1);
      }
      shmem_quiet();
    }
    t = now() - t0;
  }
  shmem_barrier_all();
  if (!bw) return t * 1e6 / iters;
  return (double)size * W * iters / 1e6 / t;
}

int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe(), npes = shmem_n_pes();
  osu_opts o;
  if (osu_setup(&o, argc, argv, me, npes, "hs_osu_shmem", "needs exactly 2 PEs")) {
    shmem_finalize();
    return 2;
  }
  size_t bytes = (size_t)OSU_WINDOW_BYTES > o.max_size ? (size_t)OSU_WINDOW_BYTES : o.max_size;
  heap = shmem_malloc(bytes);
  local = malloc(bytes);
  if (!heap || !local) {
    if (me == 0) fprintf(stderr, "hs_osu_shmem: out of (symmetric) memory for %zu bytes\n", bytes);
    shmem_finalize();
    return 1;
  }
  memset(heap, 'h', bytes);
  memset(local, 'l', bytes);
  char lib[SHMEM_MAX_NAME_LEN + 64];
  int major = 0, minor = 0;
  shmem_info_get_version(&major, &minor);
  char name[SHMEM_MAX_NAME_LEN];
  shmem_info_get_name(name);
  snprintf(lib, sizeof lib, "%.200s (OpenSHMEM %d.%d)", name, major, minor);
  FILE *js = NULL;
  int first = 1;
  if (me == 0) {
    printf("# hs_osu_shmem: OSU-style OpenSHMEM tests, 2 PEs, symmetric heap, %d reps\n# %s\n",
           o.reps, lib);
    if (o.json) {
      js = fopen(o.json, "w");
      if (!js) fprintf(stderr, "hs_osu_shmem: cannot write %s\n", o.json);
      else fprintf(js, "[");
    }
  }
  double b4[2][2] = {{0, 0}, {0, 0}};
  for (int bw = 0; bw < 2; bw++)
    for (int get = 0; get < 2; get++) {
      const char *op = get ? "get" : "put", *metric = bw ? "bandwidth" : "latency";
      if (me == 0) osu_print_header("shmem", op, metric, "openshmem");
      for (size_t s = OSU_MIN_SIZE; s <= o.max_size; s *= (size_t)o.step) {
        double v[OSU_MAX_REPS];
        osu_rec r;
        memset(&r, 0, sizeof r);
        for (int k = 0; k < o.reps; k++) v[k] = measure(get, bw, s, &o, &r.iters, &r.window);
        snprintf(r.method, sizeof r.method, "shmem");
        snprintf(r.op, sizeof r.op, "%s", op);
        snprintf(r.metric, sizeof r.metric, "%s", metric);
        r.bytes = s;
        osu_summary(&r, v, o.reps);
        if (s == 4) b4[get][bw] = r.med;
        if (me == 0) {
          osu_print_row(&r);
          osu_json(js, &first, &r, lib, "openshmem", o.reps);
        }
      }
    }
  if (me == 0) {
    printf("\n# Summary (seed 002 Tables 3-4 layout, SHMEM columns, 4-byte transfers, on-node)\n");
    printf("Table 3 (MB/s):        SHMEM put %10.2f   SHMEM get %10.2f\n", b4[0][1], b4[1][1]);
    printf("Table 4 (latency, us): SHMEM put %10.2f   SHMEM get %10.2f\n", b4[0][0], b4[1][0]);
    if (js) {
      fprintf(js, "\n]\n");
      fclose(js);
    }
  }
  shmem_barrier_all();
  shmem_free(heap);
  free(local);
  shmem_finalize();
  return 0;
}
