/* Shared by hs_osu (MPI) and hs_osu_shmem (OpenSHMEM): message sizes, iteration counts,
 * statistics and output in the OSU micro-benchmark shape. Loop shapes follow OSU's one-sided
 * tests (a fresh window per size, skip + iterations, the origin times); unlike OSU every point
 * is repeated and reported as median with min-max. */
#ifndef HS_OSU_COMMON_H
#define HS_OSU_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OSU_MIN_SIZE 4
#define OSU_MAX_SIZE (4 << 20)
#define OSU_LARGE 8192           /* above this, the "large" counts apply (as OSU) */
#define OSU_WINDOW 64            /* operations per bandwidth iteration (OSU -W default) */
#define OSU_WINDOW_BYTES (64 << 20) /* cap on window memory: W shrinks for the largest sizes */
#define OSU_MAX_REPS 31

typedef struct {
  int lat_iters, lat_skip, lat_iters_large, lat_skip_large;
  int bw_iters, bw_skip, bw_iters_large, bw_skip_large;
  int reps;
  int step; /* size factor between points: 2 as OSU; quick runs use 4 (4 B, 16 B, ... 4 MiB) */
  size_t max_size;
  const char *json;
} osu_opts;

/* "default" = OSU's counts; "quick" = short runs for make bench; or a number of latency
 * iterations (the others scaled from it). */
static inline int osu_parse(osu_opts *o, int argc, char **argv, const char **err) {
  memset(o, 0, sizeof *o);
  o->lat_iters = 10000, o->lat_skip = 100, o->lat_iters_large = 1000, o->lat_skip_large = 10;
  o->bw_iters = 100, o->bw_skip = 10, o->bw_iters_large = 20, o->bw_skip_large = 2;
  o->reps = 3;
  o->step = 2;
  o->max_size = OSU_MAX_SIZE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--iters") && v) {
      i++;
      if (!strcmp(v, "default")) continue;
      if (!strcmp(v, "quick")) {
        o->lat_iters = 200, o->lat_skip = 20, o->lat_iters_large = 40, o->lat_skip_large = 4;
        o->bw_iters = 10, o->bw_skip = 2, o->bw_iters_large = 4, o->bw_skip_large = 1;
        o->step = 4;
        continue;
      }
      int n = atoi(v);
      if (n < 1) {
        *err = "--iters must be default, quick or a positive number";
        return 1;
      }
      o->lat_iters = n, o->lat_skip = n / 10 + 1, o->lat_iters_large = n / 10 + 1;
      o->lat_skip_large = n / 100 + 1;
      o->bw_iters = n / 100 + 1, o->bw_skip = n / 1000 + 1, o->bw_iters_large = n / 500 + 1;
      o->bw_skip_large = 1;
    } else if (!strcmp(a, "--reps") && v) {
      o->reps = atoi(argv[++i]);
      if (o->reps < 1 || o->reps > OSU_MAX_REPS) {
        *err = "--reps must be 1..31";
        return 1;
      }
    } else if (!strcmp(a, "--max-size") && v) {
      long m = atol(argv[++i]);
      if (m < OSU_MIN_SIZE || m > OSU_MAX_SIZE) {
        *err = "--max-size must be 4..4194304";
        return 1;
      }
      o->max_size = (size_t)m;
    } else if (!strcmp(a, "--step") && v) {
      o->step = atoi(argv[++i]);
      if (o->step != 2 && o->step != 4) {
        *err = "--step must be 2 or 4";
        return 1;
      }
    } else if (!strcmp(a, "--json") && v) {
      o->json = argv[++i];
    } else {
      *err = "usage: [--iters default|quick|N] [--reps R] [--step 2|4] [--max-size BYTES] "
             "[--json FILE]";
      return 1;
    }
  }
  return 0;
}

static inline int osu_window_ops(size_t size) {
  size_t w = OSU_WINDOW;
  while (w > 1 && w * size > OSU_WINDOW_BYTES) w /= 2;
  return (int)w;
}

static inline int osu_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  char method[24], op[8], metric[12];
  size_t bytes;
  double med, min, max;
  int iters, window;
} osu_rec;

static inline void osu_summary(osu_rec *r, double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), osu_cmp);
  r->min = v[0];
  r->max = v[n - 1];
  r->med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline void osu_print_header(const char *method, const char *op, const char *metric,
                                    const char *lib) {
  printf("\n# %s %s %s (%s), median of repetitions [min - max]\n", method, op, metric, lib);
  printf("# %-10s %14s %26s\n", "Size", metric[0] == 'l' ? "Latency (us)" : "MB/s", "");
}

static inline void osu_print_row(const osu_rec *r) {
  printf("%-12zu %14.2f   [%10.2f - %10.2f]\n", r->bytes, r->med, r->min, r->max);
  fflush(stdout);
}

static inline void osu_json(FILE *f, int *first, const osu_rec *r, const char *lib,
                            const char *flavour, int reps) {
  if (!f) return;
  fprintf(f,
          "%s\n  {\"method\": \"%s\", \"op\": \"%s\", \"metric\": \"%s\", \"bytes\": %zu, "
          "\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"unit\": \"%s\", \"iters\": %d, "
          "\"window\": %d, \"reps\": %d, \"ranks\": 2, \"mpi\": \"",
          *first ? "" : ",", r->method, r->op, r->metric, r->bytes, r->med, r->min, r->max,
          r->metric[0] == 'l' ? "us" : "MB/s", r->iters, r->window, reps);
  for (const char *s = lib; *s; s++)
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s >= 0x20) fputc(*s, f);
  fprintf(f, "\", \"mpi_flavour\": \"%s\"}", flavour);
  *first = 0;
}

/* The options of argv for a run on nprocs processes. Nonzero when they are wrong or nprocs is
 * not 2, said by the process whose me is 0 (prog: the program's name, need: what it needs). */
static inline int osu_setup(osu_opts *o, int argc, char **argv, int me, int nprocs,
                            const char *prog, const char *need) {
  const char *err = NULL;
  if (!osu_parse(o, argc, argv, &err) && nprocs == 2) return 0;
  if (me == 0) fprintf(stderr, "%s: %s\n", prog, nprocs != 2 ? need : err);
  return 1;
}

#endif
