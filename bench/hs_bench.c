/* hs_bench: communication time per halo swap for every transport on one plan, measured
 * interleaved in one launch, with the memcpy limit of the same halo bytes measured alongside.
 *
 * Metric: per repetition, each method runs `swaps` timed swaps; its time is the maximum over
 * ranks of the per-rank mean time per swap. Reported: median over repetitions, min and max.
 * Methods are interleaved (in a new shuffled order each repetition) so that machine noise
 * hits them alike. "memcpy-bound" copies exactly the halo bytes of the plan as z-columns from the
 * interior strips into the halos, on every rank at once; "memcpy-1core" does the same on
 * rank 0 alone while the others wait. "monc-ref" is the swap a MONC user has today
 * (bench/monc_ref.h: MONC's halocommunication.F90 in C, same fields); "petsc" is PETSc's
 * DMDA + DMGlobalToLocal on the same grid and number of fields (built where PETSc is found);
 * "ghex" is GHEX's structured regular exchange of the same fields (bench/ghex_ref.h, built
 * where bench/ghex/build.sh built GHEX). Every transport is reported against all of them.
 *
 * Usage: hs_bench [options]   (hs_bench --help lists them) */
#define _GNU_SOURCE
#include "bench_memory.h"
#include "haloswap.h"
#include "monc_ref.h"
#ifdef HS_BENCH_PETSC
#include "petsc_ref.h"
#endif
#ifdef HS_BENCH_GHEX
#include "ghex_ref.h"
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_METHODS 64
#define MAX_REPS 1000
#define MAX_SWEEP 32

typedef struct {
  const char *mode; /* weak | strong | sweep */
  int fields;
  hs_type type;
  int local[3], global[3], procs[3], periodic[3];
  int depth[3], halo[3];
  int halo_given;
  hs_stencil stencil;
  int warmup, swaps, reps;
  int sweep_z[MAX_SWEEP], nsweep;
  const char *specs[MAX_METHODS];
  int nspecs, explicit_specs;
  const char *skip[MAX_METHODS];
  int nskip;
  const char *json, *csv, *label;
  int use_hs_alloc;
  int verify;
  int check; /* exit status 1 if any transport gave wrong halos */
  int quiet;
  int touch; /* read every halo cell after each swap (the model's use of them), timed */
  int oversub_flag; /* -1: detect */
} params;

typedef struct {
  char name[96];      /* spec as given, e.g. "p2p" or "p2p:persistent=0" */
  char transport[64]; /* name before ':' (or memcpy-bound / memcpy-1core) */
  char variant[96];   /* options after ':' or "default" */
  char selected[64];  /* for auto: the transport it chose */
  char status[512];   /* "ok" or why it was not measured */
  int kind;           /* 0 transport, 1 memcpy on all ranks, 2 memcpy on rank 0, 3 monc-ref,
                         4 petsc, 5 memcpy with streaming stores on all ranks, 6 ghex */
  hs_plan plan;
  monc_ref *mref;
#ifdef HS_BENCH_PETSC
  petsc_ref *pref;
#endif
#ifdef HS_BENCH_GHEX
  ghex_ref *gref;
#endif
  char describe[2048]; /* hs_plan_describe (auto: its choice and trial timings) */
  double t[MAX_REPS];
  double med, min, max;
  unsigned long long bytes_allocated, bytes_sent, bytes_recv, bytes_self;
  long bad_cells;
} method;

static int rank, size;

static void die(const char *msg) {
  if (rank == 0) fprintf(stderr, "hs_bench: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static int parse_ints(const char *s, int *out, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s) return -1;
    out[n++] = (int)v;
    s = end;
    if (*s == ',' || *s == 'x') s++;
    else if (*s) return -1;
  }
  return n;
}

static void usage(void) {
  if (rank != 0) return;
  printf(
      "hs_bench: communication time per halo swap, every transport interleaved in one run\n"
      "  --transport SPEC   measure SPEC (repeatable; default: every registered, usable one)\n"
      "  --add SPEC         measure SPEC as well as the default list (a named variant,\n"
      "                     e.g. p2p:persistent=0)\n"
      "  --skip NAME        leave a transport out of the default list (repeatable)\n"
      "  --mode weak|strong|sweep   weak: fixed local grid; strong: fixed global grid;\n"
      "                     sweep: local grid with z extent taken from --sweep-z\n"
      "  --local X,Y,Z      local interior grid per rank (default 16,16,256)\n"
      "  --global X,Y,Z     global interior grid (strong mode)\n"
      "  --procs PX,PY,PZ   ranks per axis, 0 = let MPI choose (default 0,0,1)\n"
      "  --periodic A,B,C   per axis 1/0 (default 1,1,0)\n"
      "  --depth D | X,Y,Z  halo depth to swap (default 2: x,y depth 2, z 0)\n"
      "  --halo H | X,Y,Z   allocated halo width (default = depth)\n"
      "  --stencil box|star (default box)\n"
      "  --fields N         fields per plan (default 30)\n"
      "  --type float64|float32|int32|int64 (default float64)\n"
      "  --warmup W --swaps S --reps R   (default 20, 20, 7)\n"
      "  --sweep-z LIST     z extents for --mode sweep (default 1,4,16,64,256,1024)\n"
      "  --alloc malloc|hs  field memory: malloc or hs_alloc (node-shared; default hs)\n"
      "  --no-verify        skip the check of every halo cell (one swap of each method\n"
      "                     after its warm-up, from halos reset)\n"
      "  --check            exit with status 1 if any transport gave wrong halos\n"
      "  --oversubscribed 0|1  mark the records (default: detected from cores per node)\n"
      "  --label TEXT       free text stored in every record\n"
      "  --json FILE --csv FILE   write the records (rank 0)\n"
      "  --quiet            no table on stdout\n"
      "  --touch            after every swap read every halo cell, inside the timing (what\n"
      "                     the model's next step pays for where the halo lines are)\n");
}

/* The X,Y,Z option a names (--local, --global, --procs, --periodic), or NULL. */
static int *grid_option(params *P, const char *a) {
  if (!strcmp(a, "--local")) return P->local;
  if (!strcmp(a, "--global")) return P->global;
  if (!strcmp(a, "--procs")) return P->procs;
  if (!strcmp(a, "--periodic")) return P->periodic;
  return NULL;
}

static void parse(params *P, int argc, char **argv) {
  memset(P, 0, sizeof *P);
  P->mode = "weak";
  P->fields = 30;
  P->type = HS_FLOAT64;
  P->local[0] = 16, P->local[1] = 16, P->local[2] = 256;
  P->procs[2] = 1;
  P->periodic[0] = P->periodic[1] = 1;
  P->depth[0] = P->depth[1] = 2;
  P->stencil = HS_STENCIL_BOX;
  P->warmup = 20, P->swaps = 20, P->reps = 7; /* warm-up covers p2p's 12-swap trial */
  int sz[] = {1, 4, 16, 64, 256, 1024};
  P->nsweep = 6;
  memcpy(P->sweep_z, sz, sizeof sz);
  P->use_hs_alloc = 1;
  P->verify = 1;
  P->oversub_flag = -1;
  P->label = "";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char msg[256];
#define NEED()                                                             \
  do {                                                                     \
    if (!v) {                                                              \
      snprintf(msg, sizeof msg, "option %s needs a value", a);             \
      die(msg);                                                            \
    }                                                                      \
    i++;                                                                   \
  } while (0)
#define INTS(dst, n, what)                                                           \
  do {                                                                               \
    int k_ = parse_ints(v, dst, n);                                                  \
    if (k_ < 1) {                                                                    \
      snprintf(msg, sizeof msg, "%s = '%s' is not a list of integers", what, v);     \
      die(msg);                                                                      \
    }                                                                                \
    if (k_ == 1 && n == 3) dst[1] = dst[0];                                          \
  } while (0)
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage();
      MPI_Finalize();
      exit(0);
    } else if (!strcmp(a, "--transport")) {
      NEED();
      if (!P->explicit_specs) P->nspecs = 0;
      P->explicit_specs = 1;
      if (P->nspecs < MAX_METHODS - 2) P->specs[P->nspecs++] = v;
    } else if (!strcmp(a, "--add")) {
      NEED();
      if (P->nspecs < MAX_METHODS - 2) P->specs[P->nspecs++] = v;
    } else if (!strcmp(a, "--skip")) {
      NEED();
      if (P->nskip < MAX_METHODS) P->skip[P->nskip++] = v;
    } else if (!strcmp(a, "--mode")) {
      NEED();
      if (strcmp(v, "weak") && strcmp(v, "strong") && strcmp(v, "sweep")) {
        snprintf(msg, sizeof msg, "--mode = '%s', must be weak, strong or sweep", v);
        die(msg);
      }
      P->mode = v;
    } else if (grid_option(P, a)) {
      int *dst = grid_option(P, a);
      NEED();
      INTS(dst, 3, a);
    } else if (!strcmp(a, "--depth")) {
      NEED();
      int d[3] = {0, 0, 0};
      int k = parse_ints(v, d, 3);
      if (k < 1) die("--depth must be D or X,Y,Z");
      if (k == 1) d[1] = d[0], d[2] = 0;
      memcpy(P->depth, d, sizeof d);
    } else if (!strcmp(a, "--halo")) {
      NEED();
      int h[3] = {0, 0, 0};
      int k = parse_ints(v, h, 3);
      if (k < 1) die("--halo must be H or X,Y,Z");
      if (k == 1) h[1] = h[0], h[2] = -1;
      memcpy(P->halo, h, sizeof h);
      P->halo_given = 1;
    } else if (!strcmp(a, "--stencil")) {
      NEED();
      if (!strcmp(v, "box")) P->stencil = HS_STENCIL_BOX;
      else if (!strcmp(v, "star")) P->stencil = HS_STENCIL_STAR;
      else {
        snprintf(msg, sizeof msg, "--stencil = '%s', must be box or star", v);
        die(msg);
      }
    } else if (!strcmp(a, "--fields")) {
      NEED();
      P->fields = atoi(v);
    } else if (!strcmp(a, "--type")) {
      NEED();
      if (!strcmp(v, "float64")) P->type = HS_FLOAT64;
      else if (!strcmp(v, "float32")) P->type = HS_FLOAT32;
      else if (!strcmp(v, "int32")) P->type = HS_INT32;
      else if (!strcmp(v, "int64")) P->type = HS_INT64;
      else die("--type must be float64, float32, int32 or int64");
    } else if (!strcmp(a, "--warmup")) {
      NEED();
      P->warmup = atoi(v);
    } else if (!strcmp(a, "--swaps")) {
      NEED();
      P->swaps = atoi(v);
    } else if (!strcmp(a, "--reps")) {
      NEED();
      P->reps = atoi(v);
    } else if (!strcmp(a, "--sweep-z")) {
      NEED();
      P->nsweep = parse_ints(v, P->sweep_z, MAX_SWEEP);
      if (P->nsweep < 1) die("--sweep-z must be a list of integers");
    } else if (!strcmp(a, "--alloc")) {
      NEED();
      if (!strcmp(v, "malloc")) P->use_hs_alloc = 0;
      else if (!strcmp(v, "hs")) P->use_hs_alloc = 1;
      else die("--alloc must be malloc or hs");
    } else if (!strcmp(a, "--no-verify")) {
      P->verify = 0;
    } else if (!strcmp(a, "--check")) {
      P->check = 1;
    } else if (!strcmp(a, "--oversubscribed")) {
      NEED();
      P->oversub_flag = atoi(v) != 0;
    } else if (!strcmp(a, "--label")) {
      NEED();
      P->label = v;
    } else if (!strcmp(a, "--json")) {
      NEED();
      P->json = v;
    } else if (!strcmp(a, "--csv")) {
      NEED();
      P->csv = v;
    } else if (!strcmp(a, "--touch")) {
      P->touch = 1;
    } else if (!strcmp(a, "--quiet")) {
      P->quiet = 1;
    } else {
      snprintf(msg, sizeof msg, "unknown argument '%s' (see --help)", a);
      die(msg);
    }
#undef NEED
#undef INTS
  }
  if (P->fields < 1 || P->fields > HS_MAX_FIELDS) die("--fields must be 1..HS_MAX_FIELDS");
  if (P->swaps < 1 || P->reps < 1 || P->reps > MAX_REPS || P->warmup < 0)
    die("--swaps and --reps must be >= 1 (reps <= 1000), --warmup >= 0");
  if (!strcmp(P->mode, "strong") && P->global[0] == 0)
    die("--mode strong needs --global X,Y,Z");
  if (!P->halo_given) memcpy(P->halo, P->depth, sizeof P->halo);
  if (P->halo[2] < 0) P->halo[2] = P->depth[2];
  for (int a = 0; a < 3; a++)
    if (P->halo[a] < P->depth[a]) die("--halo must be >= --depth on every axis");
}

/* ------------------------------------------------------------------ fields */
typedef struct {
  int n[3], h[3], alloc[3];
  size_t elems, elem;
  int off[3]; /* global index of local interior 0 */
  int gl[3];
} geom;

static size_t idx(const geom *g, int x, int y, int z) {
  /* ZFAST: z contiguous, then y, then x */
  return ((size_t)(x + g->h[0]) * (size_t)g->alloc[1] + (size_t)(y + g->h[1])) *
             (size_t)g->alloc[2] +
         (size_t)(z + g->h[2]);
}

static double cell(int f, int gx, int gy, int gz) {
  return (double)(((gx * 131 + gy * 31 + gz * 7 + f * 1009) % 8191) + 1);
}

static void store(void *d, hs_type t, size_t k, double v) {
  switch (t) {
  case HS_FLOAT64: ((double *)d)[k] = v; break;
  case HS_FLOAT32: ((float *)d)[k] = (float)v; break;
  case HS_INT32: ((int32_t *)d)[k] = (int32_t)v; break;
  default: ((int64_t *)d)[k] = (int64_t)v; break;
  }
}
static double load(const void *d, hs_type t, size_t k) {
  switch (t) {
  case HS_FLOAT64: return ((const double *)d)[k];
  case HS_FLOAT32: return ((const float *)d)[k];
  case HS_INT32: return ((const int32_t *)d)[k];
  default: return (double)((const int64_t *)d)[k];
  }
}

static void fill(const geom *g, void *d, hs_type t, int f) {
  for (int x = -g->h[0]; x < g->n[0] + g->h[0]; x++)
    for (int y = -g->h[1]; y < g->n[1] + g->h[1]; y++)
      for (int z = -g->h[2]; z < g->n[2] + g->h[2]; z++) {
        int in = x >= 0 && x < g->n[0] && y >= 0 && y < g->n[1] && z >= 0 && z < g->n[2];
        store(d, t, idx(g, x, y, z),
              in ? cell(f, g->off[0] + x, g->off[1] + y, g->off[2] + z) : -1.0);
      }
}

/* Halo cells the plan must fill (depth, stencil, walls) hold the neighbour's value; reset
 * them to -1 afterwards so the next method is checked from scratch. Returns wrong cells. */
static long check_and_reset(const geom *g, const params *P, const int per[3], void *d,
                            hs_type t, int f) {
  long bad = 0;
  for (int x = -P->depth[0]; x < g->n[0] + P->depth[0]; x++)
    for (int y = -P->depth[1]; y < g->n[1] + P->depth[1]; y++)
      for (int z = -P->depth[2]; z < g->n[2] + P->depth[2]; z++) {
        int i[3] = {x, y, z}, gc[3], outside = 0, skip = 0;
        for (int a = 0; a < 3; a++) {
          gc[a] = g->off[a] + i[a];
          if (i[a] < 0 || i[a] >= g->n[a]) {
            outside++;
            if (gc[a] < 0 || gc[a] >= g->gl[a]) {
              if (!per[a]) skip = 1;
              gc[a] = (gc[a] + g->gl[a]) % g->gl[a];
            }
          }
        }
        if (outside == 0 || skip) continue;
        if (P->stencil == HS_STENCIL_STAR && outside > 1) continue;
        size_t k = idx(g, x, y, z);
        if (load(d, t, k) != cell(f, gc[0], gc[1], gc[2])) bad++;
        store(d, t, k, -1.0);
      }
  return bad;
}

/* ------------------------------------------------------------------ memcpy limit */
typedef struct {
  size_t src, dst; /* element index of the first cell of the first column */
  int nx, ny;
  size_t col; /* bytes per z column */
} colcopy;

/* The exact halo this rank receives (from other ranks or itself), as z-column copies from
 * the matching interior strip: what any transport must at least move through memory. */
static int build_copies(const geom *g, const params *P, hs_decomp d, colcopy *cc,
                        size_t *bytes) {
  int n = 0;
  *bytes = 0;
  for (int ox = -1; ox <= 1; ox++)
    for (int oy = -1; oy <= 1; oy++)
      for (int oz = -1; oz <= 1; oz++) {
        int o[3] = {ox, oy, oz}, nz = 0, ok = 1;
        for (int a = 0; a < 3; a++) {
          if (!o[a]) continue;
          nz++;
          if (P->depth[a] == 0) ok = 0;
          /* the halo on side o is filled from the rank at side o: does it exist? */
          int c = hs_decomp_coord(d, a) + o[a];
          if ((c < 0 || c >= hs_decomp_procs(d, a)) && !hs_decomp_periodic(d, a)) ok = 0;
        }
        if (!ok || nz == 0 || (P->stencil == HS_STENCIL_STAR && nz > 1)) continue;
        int lo_dst[3], lo_src[3], cnt[3];
        for (int a = 0; a < 3; a++) {
          if (o[a] == 0) {
            lo_dst[a] = lo_src[a] = 0;
            cnt[a] = g->n[a];
          } else {
            cnt[a] = P->depth[a];
            lo_dst[a] = o[a] < 0 ? -P->depth[a] : g->n[a];
            lo_src[a] = o[a] < 0 ? g->n[a] - P->depth[a] : 0;
          }
        }
        colcopy c;
        c.src = idx(g, lo_src[0], lo_src[1], lo_src[2]);
        c.dst = idx(g, lo_dst[0], lo_dst[1], lo_dst[2]);
        c.nx = cnt[0];
        c.ny = cnt[1];
        c.col = (size_t)cnt[2] * g->elem;
        cc[n++] = c;
        *bytes += (size_t)c.nx * (size_t)c.ny * c.col * (size_t)P->fields;
      }
  return n;
}

/* One column; stream: streaming stores for whole lines (haloswap's core option stream=1). */
static void copy_col(char *d, const char *s, size_t n, int stream) {
#if defined(__SSE2__)
  if (stream && n >= 256) {
    size_t head = (size_t)(-(uintptr_t)d & 63), body;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 16)
      _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    memcpy(d + body, s + body, n - body);
    return;
  }
#endif
  (void)stream;
  memcpy(d, s, n);
}

static void do_copies(const geom *g, const colcopy *cc, int n, void **data, int nf, int stream) {
  size_t ystride = (size_t)g->alloc[2] * g->elem;
  size_t xstride = ystride * (size_t)g->alloc[1];
  for (int f = 0; f < nf; f++) {
    char *b = data[f];
    for (int i = 0; i < n; i++) {
      const colcopy *c = &cc[i];
      char *s = b + c->src * g->elem, *d = b + c->dst * g->elem;
      for (int x = 0; x < c->nx; x++)
        for (int y = 0; y < c->ny; y++)
          copy_col(d + x * xstride + y * ystride, s + x * xstride + y * ystride, c->col, stream);
    }
  }
#if defined(__SSE2__)
  if (stream) _mm_sfence();
#endif
}

/* --touch: read every halo cell the swap wrote, as the model's next step will. */
static volatile uint64_t touch_sink;
static void touch_halos(const geom *g, const colcopy *cc, int n, void **data, int nf) {
  size_t ystride = (size_t)g->alloc[2] * g->elem;
  size_t xstride = ystride * (size_t)g->alloc[1];
  uint64_t acc = 0;
  for (int f = 0; f < nf; f++)
    for (int i = 0; i < n; i++) {
      const colcopy *c = &cc[i];
      const char *d = (const char *)data[f] + c->dst * g->elem;
      for (int x = 0; x < c->nx; x++)
        for (int y = 0; y < c->ny; y++) {
          const uint64_t *w = (const uint64_t *)(d + x * xstride + y * ystride);
          for (size_t k = 0; k < c->col / 8; k++) acc += w[k];
        }
    }
  touch_sink += acc;
}

/* ------------------------------------------------------------------ helpers */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void summarise(method *m, int reps) {
  double s[MAX_REPS];
  memcpy(s, m->t, (size_t)reps * sizeof(double));
  qsort(s, (size_t)reps, sizeof(double), cmp_double);
  m->min = s[0];
  m->max = s[reps - 1];
  m->med = reps % 2 ? s[reps / 2] : 0.5 * (s[reps / 2 - 1] + s[reps / 2]);
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

/* , "key": "val" (escaped) */
static void json_field(FILE *f, const char *key, const char *val) {
  fprintf(f, ", \"%s\": ", key);
  json_str(f, val);
}

static void first_line(char *s) {
  s[strcspn(s, "\n")] = 0;
  for (char *c = s; *c; c++)
    if (*c == '\t') *c = ' ';
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == ',')) s[--n] = 0;
}

static void cpu_model(char *out, size_t len) {
  snprintf(out, len, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "model name", 10)) {
      char *c = strchr(line, ':');
      if (c) {
        c++;
        while (*c == ' ') c++;
        snprintf(out, len, "%s", c);
        first_line(out);
      }
      break;
    }
  fclose(f);
}

static const char *type_name(hs_type t) {
  static const char *n[] = {"float64", "float32", "int32", "int64"};
  return n[t];
}

/* ------------------------------------------------------------------ one geometry */
typedef struct {
  char mpi[256], flavour[16], host[128], cpu[256], date[32];
  int cores, ranks_per_node, oversub;
} env_info;

static FILE *json_out, *csv_out;
static int json_first = 1;
static const char *field_alloc = "malloc"; /* what the fields of the current geometry use */

static double ratio_to(const method *m, const method *ref) {
  if (!ref || strcmp(ref->status, "ok") || !(ref->med > 0) || strcmp(m->status, "ok")) return NAN;
  return m->med / ref->med;
}

static void json_num(FILE *f, const char *key, double v) {
  if (isnan(v)) fprintf(f, ", \"%s\": null", key);
  else fprintf(f, ", \"%s\": %.4f", key, v);
}

static void emit(const params *P, const env_info *E, const geom *g, hs_decomp d,
                 const method *m, const method *p2p, const method *mall, const method *m1,
                 const method *mref, const method *pref, const method *gref,
                 size_t halo_bytes_max) {
  if (rank != 0) return;
  double ratio_p2p = (p2p && p2p->med > 0 && !strcmp(m->status, "ok")) ? m->med / p2p->med : NAN;
  double rb = mall->med > 0 ? m->med / mall->med : NAN;
  double r1 = m1->med > 0 ? m->med / m1->med : NAN;
  int ok = !strcmp(m->status, "ok");
  const char *stencil = P->stencil == HS_STENCIL_BOX ? "box" : "star";
  if (json_out) {
    FILE *f = json_out;
    fprintf(f, "%s\n  {", json_first ? "" : ",");
    json_first = 0;
    fprintf(f, "\"transport\": ");
    json_str(f, m->transport);
    json_field(f, "variant", m->variant);
    json_field(f, "spec", m->name);
    json_field(f, "selected", m->selected);
    json_field(f, "status", m->status);
    json_field(f, "mpi", E->mpi);
    fprintf(f, ", \"mpi_flavour\": \"%s\", \"machine\": {\"host\": ", E->flavour);
    json_str(f, E->host);
    json_field(f, "cpu", E->cpu);
    fprintf(f, ", \"cores\": %d}, \"date\": \"%s\", \"label\": ", E->cores, E->date);
    json_str(f, P->label);
    fprintf(f,
            ", \"mode\": \"%s\", \"ranks\": %d, \"ranks_per_node\": %d, \"oversubscribed\": %s"
            ", \"procs\": [%d, %d, %d], \"fields\": %d, \"type\": \"%s\""
            ", \"local_grid\": [%d, %d, %d], \"global_grid\": [%d, %d, %d]"
            ", \"periodic\": [%d, %d, %d], \"depth\": %d, \"depth_xyz\": [%d, %d, %d]"
            ", \"halo\": [%d, %d, %d], \"stencil\": \"%s\", \"layout\": \"zfast\""
            ", \"field_alloc\": \"%s\", \"warmup\": %d, \"swaps\": %d, \"reps\": %d"
            ", \"touch\": %s",
            P->mode, size, E->ranks_per_node, E->oversub ? "true" : "false",
            hs_decomp_procs(d, 0), hs_decomp_procs(d, 1), hs_decomp_procs(d, 2), P->fields,
            type_name(P->type), g->n[0], g->n[1], g->n[2], g->gl[0], g->gl[1], g->gl[2],
            hs_decomp_periodic(d, 0), hs_decomp_periodic(d, 1), hs_decomp_periodic(d, 2),
            P->depth[0] > P->depth[1] ? P->depth[0] : P->depth[1], P->depth[0], P->depth[1],
            P->depth[2], g->h[0], g->h[1], g->h[2], stencil,
            field_alloc, P->warmup, P->swaps, P->reps, P->touch ? "true" : "false");
    if (ok) {
      fprintf(f,
              ", \"us_per_swap_median\": %.3f, \"us_per_swap_min\": %.3f"
              ", \"us_per_swap_max\": %.3f, \"us_per_swap_reps\": [",
              m->med * 1e6, m->min * 1e6, m->max * 1e6);
      for (int r = 0; r < P->reps; r++) fprintf(f, "%s%.3f", r ? ", " : "", m->t[r] * 1e6);
      fprintf(f, "]");
      if (isnan(ratio_p2p)) fprintf(f, ", \"ratio_to_p2p\": null");
      else fprintf(f, ", \"ratio_to_p2p\": %.4f", ratio_p2p);
      fprintf(f, ", \"ratio_to_memcpy_bound\": %.4f, \"ratio_to_memcpy_1core\": %.4f", rb, r1);
      json_num(f, "ratio_to_monc_ref", ratio_to(m, mref));
      json_num(f, "ratio_to_petsc", ratio_to(m, pref));
      json_num(f, "ratio_to_ghex", ratio_to(m, gref));
    } else {
      fprintf(f,
              ", \"us_per_swap_median\": null, \"us_per_swap_min\": null, \"us_per_swap_max\": "
              "null, \"ratio_to_p2p\": null, \"ratio_to_memcpy_bound\": null, "
              "\"ratio_to_memcpy_1core\": null");
    }
    fprintf(f,
            ", \"memcpy_bound_us\": %.3f, \"memcpy_1core_us\": %.3f"
            ", \"halo_bytes_per_swap\": %zu, \"bytes_sent_per_swap\": %llu"
            ", \"bytes_allocated\": %llu, \"bytes_allocated_ratio\": %.4f, \"bad_cells\": %ld",
            mall->med * 1e6, m1->med * 1e6, halo_bytes_max, m->bytes_sent, m->bytes_allocated,
            halo_bytes_max ? (double)m->bytes_allocated / (double)halo_bytes_max : 0.0,
            m->bad_cells);
    json_num(f, "monc_ref_us", mref && !strcmp(mref->status, "ok") ? mref->med * 1e6 : NAN);
    json_num(f, "petsc_us", pref && !strcmp(pref->status, "ok") ? pref->med * 1e6 : NAN);
    json_num(f, "ghex_us", gref && !strcmp(gref->status, "ok") ? gref->med * 1e6 : NAN);
    json_field(f, "describe", m->describe);
    fprintf(f, "}");
  }
  if (csv_out) {
    fprintf(csv_out,
            "%s,%s,%s,%s,%s,\"%s\",%s,%s,%d,%d,%s,%d,%s,%dx%dx%d,%dx%dx%d,%d,%s,%d,%d,%d,",
            m->transport, m->variant, m->selected, m->status[0] == 'o' ? "ok" : "skipped",
            E->flavour, E->mpi, E->host, P->mode, size, E->ranks_per_node,
            E->oversub ? "1" : "0", P->fields, type_name(P->type), g->n[0], g->n[1], g->n[2],
            g->gl[0], g->gl[1], g->gl[2], P->depth[0] > P->depth[1] ? P->depth[0] : P->depth[1],
            stencil, P->warmup, P->swaps, P->reps);
    if (ok)
      fprintf(csv_out, "%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,", m->med * 1e6, m->min * 1e6,
              m->max * 1e6, ratio_p2p, rb, r1);
    else
      fprintf(csv_out, ",,,,,,");
    fprintf(csv_out, "%.3f,%.3f,%zu,%llu,%.4f,%.4f,%.4f\n", mall->med * 1e6, m1->med * 1e6,
            halo_bytes_max, m->bytes_allocated, ratio_to(m, mref), ratio_to(m, pref),
            ratio_to(m, gref));
  }
}

static long total_bad; /* wrong halo cells over all methods and geometries */

/* A reference method's setup result, the same status on every rank. */
static void agree_available(method *m, int ok, const char *why) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all)
    snprintf(m->status, sizeof m->status, "unavailable: %s", why[0] ? why : "on another rank");
}

/* One swap of a reference method (monc-ref, petsc, ghex). */
static void ref_swap(method *m) {
  if (m->kind == 3) monc_ref_swap(m->mref);
#ifdef HS_BENCH_PETSC
  if (m->kind == 4 && petsc_ref_swap(m->pref)) die("petsc: DMGlobalToLocal failed");
#endif
#ifdef HS_BENCH_GHEX
  if (m->kind == 6 && ghex_ref_swap(m->gref)) die("ghex: exchange failed");
#endif
}

/* The check's own swap of method m (a plan, or a reference method), from halos reset to -1:
 * it sees what the method writes, whatever --warmup was (0 leaves nothing written). */
static void verify_method(method *m, const geom *g, const params *P, void **data, int nf) {
  long bad = 0, allbad = 0;
  for (int f = 0; f < nf; f++) fill(g, data[f], P->type, f);
  if (!m->plan) ref_swap(m);
  else if (hs_swap(m->plan, NULL) != HS_OK) die(hs_error_message());
  for (int f = 0; f < nf; f++) bad += check_and_reset(g, P, P->periodic, data[f], P->type, f);
  MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  m->bad_cells = allbad;
  total_bad += allbad;
  if (allbad) {
    snprintf(m->status, sizeof m->status, "wrong halos: %ld cells", allbad);
    if (rank == 0)
      fprintf(stderr, "hs_bench: %s gave %ld wrong halo cells%s\n", m->name, allbad,
              m->plan ? "; not timed" : "");
  }
}

static void run_geometry(const params *P, const env_info *E, const int local_or_global[3],
                         int is_global) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.ndims = 3;
  int dims[3] = {P->procs[0], P->procs[1], P->procs[2]};
  if (MPI_Dims_create(size, 3, dims) != MPI_SUCCESS) die("MPI_Dims_create failed for --procs");
  for (int a = 0; a < 3; a++) {
    dd.procs[a] = dims[a];
    dd.periodic[a] = P->periodic[a];
    dd.global[a] = is_global ? local_or_global[a] : local_or_global[a] * dims[a];
  }
  hs_decomp d;
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &d) != HS_OK) die(hs_error_message());

  geom g;
  memset(&g, 0, sizeof g);
  g.elem = hs_type_size(P->type);
  for (int a = 0; a < 3; a++) {
    g.n[a] = hs_decomp_local_extent(d, a);
    g.h[a] = P->halo[a];
    g.alloc[a] = g.n[a] + 2 * g.h[a];
    g.off[a] = hs_decomp_global_offset(d, a);
    g.gl[a] = hs_decomp_global_extent(d, a);
  }
  g.elems = (size_t)g.alloc[0] * g.alloc[1] * g.alloc[2];
  int nf = P->fields;
  void **data = calloc((size_t)nf, sizeof *data);
  hs_field *fl = calloc((size_t)nf, sizeof *fl);
  if (!data || !fl) die("out of memory");
  int use_hs = P->use_hs_alloc;
  for (int f = 0; f < nf; f++) {
    if (use_hs) {
      if (hs_alloc(d, g.elems * g.elem, &data[f]) != HS_OK) {
        if (rank == 0)
          fprintf(stderr, "hs_bench: hs_alloc failed (%s); using malloc\n", hs_error_message());
        for (int k = 0; k < f; k++) hs_free(d, data[k]);
        use_hs = 0;
        f = -1;
        continue;
      }
    } else {
      data[f] = malloc(g.elems * g.elem);
      if (!data[f]) die("out of memory for fields");
    }
  }
  field_alloc = use_hs ? "hs_alloc" : "malloc";
  for (int f = 0; f < nf; f++) {
    fill(&g, data[f], P->type, f);
    fl[f] = hs_field_array(P->type, data[f], HS_LAYOUT_ZFAST, 0);
    for (int a = 0; a < 3; a++) fl[f].halo[a] = g.h[a];
  }

  /* ---- methods */
  method *M = calloc(MAX_METHODS, sizeof *M);
  if (!M) die("out of memory");
  int nm = 0;
  snprintf(M[nm].name, sizeof M[nm].name, "memcpy-bound");
  M[nm].kind = 1;
  nm++;
  snprintf(M[nm].name, sizeof M[nm].name, "memcpy-1core");
  M[nm].kind = 2;
  nm++;
#if defined(__SSE2__)
  snprintf(M[nm].name, sizeof M[nm].name, "memcpy-stream");
  M[nm].kind = 5;
  nm++;
#endif
  int want_mref = 1, want_petsc = 1, want_ghex = 1;
  for (int s = 0; s < P->nskip; s++) {
    if (!strcmp(P->skip[s], "monc-ref")) want_mref = 0;
    if (!strcmp(P->skip[s], "petsc")) want_petsc = 0;
    if (!strcmp(P->skip[s], "ghex")) want_ghex = 0;
  }
  if (want_mref) {
    snprintf(M[nm].name, sizeof M[nm].name, "monc-ref");
    M[nm].kind = 3;
    nm++;
  }
  if (want_petsc) {
    snprintf(M[nm].name, sizeof M[nm].name, "petsc");
    M[nm].kind = 4;
    nm++;
  }
  if (want_ghex) {
    snprintf(M[nm].name, sizeof M[nm].name, "ghex");
    M[nm].kind = 6;
    nm++;
  }
  const char *specs[MAX_METHODS];
  int nspecs = 0;
  if (!P->explicit_specs)
    for (int t = 0; t < hs_transport_count() && nspecs < MAX_METHODS - 4; t++) {
      int skip = 0;
      for (int s = 0; s < P->nskip; s++)
        if (!strcmp(P->skip[s], hs_transport_name(t))) skip = 1;
      if (!skip) specs[nspecs++] = hs_transport_name(t);
    }
  for (int s = 0; s < P->nspecs && nspecs < MAX_METHODS - 2; s++) specs[nspecs++] = P->specs[s];
  for (int s = 0; s < nspecs; s++) {
    method *m = &M[nm++];
    snprintf(m->name, sizeof m->name, "%s", specs[s]);
  }
  for (int i = 0; i < nm; i++) {
    method *m = &M[i];
    const char *colon = strchr(m->name, ':');
    snprintf(m->transport, sizeof m->transport, "%.*s",
             (int)(colon ? (size_t)(colon - m->name) : strlen(m->name)), m->name);
    snprintf(m->variant, sizeof m->variant, "%s", colon ? colon + 1 : "default");
    snprintf(m->status, sizeof m->status, "ok");
    if (m->kind == 6) {
      char why[256] = "";
      int ok = 0;
#ifdef HS_BENCH_GHEX
      if (P->stencil != HS_STENCIL_BOX) {
        snprintf(why, sizeof why, "GHEX's regular halos include edges and corners: box only");
      } else {
        int per[3];
        for (int a = 0; a < 3; a++) per[a] = hs_decomp_periodic(d, a);
        m->gref = ghex_ref_create(hs_decomp_comm(d), (int)P->type, nf, data, g.n, g.h, g.off,
                                  g.gl, per, P->depth, why, sizeof why);
        ok = m->gref != NULL;
        if (ok) snprintf(m->variant, sizeof m->variant, "%s", ghex_ref_version());
      }
#else
      snprintf(why, sizeof why, "hs_bench was built without GHEX (bench/ghex/build.sh builds it; "
                                "make bench runs that)");
#endif
      agree_available(m, ok, why);
      continue;
    }
    if (m->kind == 3 || m->kind == 4) {
      char why[256] = "";
      int depth = P->depth[0] > P->depth[1] ? P->depth[0] : P->depth[1];
      int ok = P->depth[0] == P->depth[1] && P->depth[2] == 0 && g.h[2] == 0;
      if (!ok) snprintf(why, sizeof why, "MONC's case: equal x and y depth, no z halo");
      if (ok && m->kind == 3) {
        m->mref = monc_ref_create(hs_decomp_comm(d), nf, data, g.elem, g.n, g.h, depth,
                                  P->stencil == HS_STENCIL_BOX, why, sizeof why);
        ok = m->mref != NULL;
        if (ok) m->bytes_allocated = monc_ref_buffer_bytes(m->mref);
      }
#ifdef HS_BENCH_PETSC
      if (ok && m->kind == 4) {
        if (P->type != HS_FLOAT64) {
          ok = 0;
          snprintf(why, sizeof why, "PETSc's scalars are float64 here");
        } else {
          m->pref = petsc_ref_create(hs_decomp_comm(d), nf, g.n, g.gl, depth,
                                     P->stencil == HS_STENCIL_BOX, why, sizeof why);
          ok = m->pref != NULL;
          if (ok) m->bytes_allocated = petsc_ref_bytes(m->pref);
        }
      }
#else
      if (m->kind == 4) {
        ok = 0;
        snprintf(why, sizeof why, "hs_bench was built without PETSc (libpetsc-real-dev for "
                                  "this MPI library)");
      }
#endif
      agree_available(m, ok, why);
      continue;
    }
    if (m->kind) continue;
    char why[256] = "";
    if (hs_transport_available(hs_decomp_comm(d), m->transport, why, sizeof why) != HS_OK) {
      snprintf(m->status, sizeof m->status, "unavailable: %s",
               why[0] ? why : hs_error_message());
      continue;
    }
    hs_plan_desc pd;
    hs_plan_desc_init(&pd);
    for (int a = 0; a < 3; a++) pd.depth[a] = P->depth[a];
    pd.stencil = P->stencil;
    pd.nfields = nf;
    pd.fields = fl;
    pd.transport_name = m->name;
    if (hs_plan_create(d, &pd, &m->plan) != HS_OK) {
      snprintf(m->status, sizeof m->status, "plan creation failed: %s", hs_error_message());
      m->plan = NULL;
      continue;
    }
    snprintf(m->selected, sizeof m->selected, "%s", hs_plan_selected_transport(m->plan));
    hs_plan_describe(m->plan, m->describe, sizeof m->describe);
    hs_plan_stats st;
    hs_plan_get_stats(m->plan, &st);
    unsigned long long v[4] = {st.bytes_allocated, st.bytes_sent_per_swap, st.bytes_recv_per_swap,
                               st.bytes_self_per_swap},
                       mx[4];
    MPI_Allreduce(v, mx, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    m->bytes_allocated = mx[0];
    m->bytes_sent = mx[1];
    m->bytes_recv = mx[2];
    m->bytes_self = mx[3];
  }

  colcopy cc[32];
  size_t halo_bytes = 0, halo_bytes_max = 0;
  int ncc = build_copies(&g, P, d, cc, &halo_bytes);
  unsigned long long hb = halo_bytes, hbm;
  MPI_Allreduce(&hb, &hbm, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  halo_bytes_max = (size_t)hbm;

  /* ---- warm-up and correctness of every method */
  for (int i = 0; i < nm; i++) {
    method *m = &M[i];
    if (m->kind == 4) {
#ifdef HS_BENCH_PETSC
      if (strcmp(m->status, "ok")) continue;
      long bad = 0, allbad = 0;
      if (P->verify && P->stencil == HS_STENCIL_BOX) bad = petsc_ref_check(m->pref, cell);
      for (int w = 0; w < P->warmup; w++) petsc_ref_swap(m->pref);
      MPI_Allreduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      m->bad_cells = allbad;
      total_bad += allbad;
      if (allbad) snprintf(m->status, sizeof m->status, "wrong halos: %ld cells", allbad);
#endif
      continue;
    }
    if (m->kind == 3 || m->kind == 6) {
      if (strcmp(m->status, "ok")) continue;
      for (int w = 0; w < P->warmup; w++) ref_swap(m);
      if (P->verify) verify_method(m, &g, P, data, nf);
      continue;
    }
    if (m->kind) {
      for (int w = 0; w < P->warmup; w++) do_copies(&g, cc, ncc, data, nf, m->kind == 5);
      for (int f = 0; f < nf; f++) fill(&g, data[f], P->type, f);
      continue;
    }
    if (!m->plan) continue;
    for (int w = 0; w < P->warmup; w++)
      if (hs_swap(m->plan, NULL) != HS_OK) die(hs_error_message());
    if (P->verify) verify_method(m, &g, P, data, nf);
  }

  /* ---- timed, interleaved: a new order every repetition (a seeded shuffle, the same on
   * every rank). A rotation kept each method behind the same predecessor, and with fewer
   * repetitions than methods in the same few places of the round: a method measured right
   * after petsc (24 MB of buffers) ran up to 1.04x slower than the same plan measured after
   * cma, in one launch. */
  int *perm = malloc((size_t)nm * sizeof *perm);
  if (!perm) die("out of memory");
  /* Untimed swaps of each method right before its timed ones. One was too few: petsc's swap
   * copies whole vectors (15 MB a rank in the MONC case), and the 5 timed swaps of a `shm`
   * plan right after it ran 1.35x slower than the same plan's elsewhere in the round (Open
   * MPI, 2026-12-02); 3 removed most of it, 10 all (docs/benchmarks.md). */
  int prewarm = P->swaps / 2 < 3 ? 3 : P->swaps / 2;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int r = 0; r < P->reps; r++) {
    for (int k = 0; k < nm; k++) perm[k] = k;
    for (int k = nm - 1; k > 0; k--) {
      seed ^= seed >> 12;
      seed ^= seed << 25;
      seed ^= seed >> 27;
      int j = (int)((seed * 2685821657736338717ull >> 33) % (uint64_t)(k + 1));
      int x = perm[k];
      perm[k] = perm[j];
      perm[j] = x;
    }
    for (int k = 0; k < nm; k++) {
      method *m = &M[perm[k]];
      if (strcmp(m->status, "ok")) continue;
      double t = 0;
      if (m->kind == 3 || m->kind == 4 || m->kind == 6) {
        for (int w = 0; w < prewarm; w++) ref_swap(m);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int s = 0; s < P->swaps; s++) {
          ref_swap(m);
          if (P->touch) touch_halos(&g, cc, ncc, data, nf);
        }
        t = (MPI_Wtime() - t0) / P->swaps;
      } else if (m->kind) {
        for (int w = 0; w < prewarm; w++) do_copies(&g, cc, ncc, data, nf, m->kind == 5);
        MPI_Barrier(MPI_COMM_WORLD);
        if (m->kind != 2 || rank == 0) {
          double t0 = MPI_Wtime();
          for (int s = 0; s < P->swaps; s++) {
            do_copies(&g, cc, ncc, data, nf, m->kind == 5);
            if (P->touch) touch_halos(&g, cc, ncc, data, nf);
          }
          t = (MPI_Wtime() - t0) / P->swaps;
        }
        MPI_Barrier(MPI_COMM_WORLD);
      } else {
        for (int w = 0; w < prewarm; w++)
          if (hs_swap(m->plan, NULL) != HS_OK) die(hs_error_message());
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int s = 0; s < P->swaps; s++) {
          if (hs_swap(m->plan, NULL) != HS_OK) die(hs_error_message());
          if (P->touch) touch_halos(&g, cc, ncc, data, nf);
        }
        t = (MPI_Wtime() - t0) / P->swaps;
      }
      MPI_Allreduce(&t, &m->t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
  }
  free(perm);
  for (int i = 0; i < nm; i++)
    if (!strcmp(M[i].status, "ok")) summarise(&M[i], P->reps);

  /* ---- report */
  const method *p2p = NULL, *mall = &M[0], *m1 = &M[1], *mref = NULL, *pref = NULL, *gref = NULL;
  for (int i = 2; i < nm; i++) {
    if (!M[i].kind && !strcmp(M[i].name, "p2p") && !strcmp(M[i].status, "ok")) p2p = &M[i];
    if (M[i].kind == 3) mref = &M[i];
    if (M[i].kind == 4) pref = &M[i];
    if (M[i].kind == 6) gref = &M[i];
  }
  M[0].bytes_sent = M[1].bytes_sent = 0;
  if (rank == 0 && !P->quiet) {
    printf("\n%s | %d ranks%s | %s | local %dx%dx%d z-fast | %d x %s | depth %d,%d,%d | %s"
           " | halo %.2f MB/swap/rank | %d swaps x %d reps\n",
           E->mpi, size, E->oversub ? " (oversubscribed)" : "", P->mode, g.n[0], g.n[1], g.n[2],
           nf, type_name(P->type), P->depth[0], P->depth[1], P->depth[2],
           P->stencil == HS_STENCIL_BOX ? "box" : "star", halo_bytes_max / 1e6, P->swaps,
           P->reps);
    printf("%-28s %12s %25s %8s %9s %9s %9s %9s %9s %11s\n", "method", "us/swap med",
           "(min - max)", "vs p2p", "vs memcpy", "vs 1core", "vs mref", "vs petsc", "vs ghex",
           "alloc MB");
    for (int i = 0; i < nm; i++) {
      const method *m = &M[i];
      char nm_[128];
      if (m->selected[0] && strcmp(m->selected, m->transport))
        snprintf(nm_, sizeof nm_, "%s -> %s", m->name, m->selected);
      else
        snprintf(nm_, sizeof nm_, "%s", m->name);
      if (strcmp(m->status, "ok")) {
        printf("%-28s %s\n", nm_, m->status);
        continue;
      }
      char rng[64];
      snprintf(rng, sizeof rng, "(%.1f - %.1f)", m->min * 1e6, m->max * 1e6);
      char rp[16] = "-";
      if (p2p && !m->kind) snprintf(rp, sizeof rp, "%.2f", m->med / p2p->med);
      char rm[16] = "-", rpe[16] = "-", rg[16] = "-";
      if (!isnan(ratio_to(m, mref))) snprintf(rm, sizeof rm, "%.2f", ratio_to(m, mref));
      if (!isnan(ratio_to(m, pref))) snprintf(rpe, sizeof rpe, "%.2f", ratio_to(m, pref));
      if (!isnan(ratio_to(m, gref))) snprintf(rg, sizeof rg, "%.2f", ratio_to(m, gref));
      printf("%-28s %12.1f %25s %8s %9.2f %9.2f %9s %9s %9s %11.2f\n", nm_, m->med * 1e6, rng,
             rp, m->med / mall->med, m->med / m1->med, rm, rpe, rg, m->bytes_allocated / 1e6);
    }
    fflush(stdout);
  }
  for (int i = 0; i < nm; i++)
    emit(P, E, &g, d, &M[i], p2p, mall, m1, mref, pref, gref, halo_bytes_max);

  for (int i = 0; i < nm; i++) {
    if (M[i].plan) hs_plan_free(&M[i].plan);
    monc_ref_free(M[i].mref);
#ifdef HS_BENCH_PETSC
    petsc_ref_free(M[i].pref);
#endif
#ifdef HS_BENCH_GHEX
    ghex_ref_free(M[i].gref);
#endif
  }
  for (int f = 0; f < nf; f++) bench_field_free(d, use_hs, data[f]);
  free(M);
  free(data);
  free(fl);
  hs_decomp_free(&d);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  params P;
  parse(&P, argc, argv);

  env_info E;
  memset(&E, 0, sizeof E);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  snprintf(E.mpi, sizeof E.mpi, "%.255s", lib);
  first_line(E.mpi);
  snprintf(E.flavour, sizeof E.flavour, "%s",
           strstr(lib, "Open MPI") ? "openmpi" : (strstr(lib, "MPICH") ? "mpich" : "other"));
  gethostname(E.host, sizeof E.host - 1);
  cpu_model(E.cpu, sizeof E.cpu);
  E.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nl = 1, mx = 1;
  MPI_Comm_size(node, &nl);
  MPI_Allreduce(&nl, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Comm_free(&node);
  E.ranks_per_node = mx;
  E.oversub = P.oversub_flag >= 0 ? P.oversub_flag : mx > E.cores;
  time_t now = time(NULL);
  strftime(E.date, sizeof E.date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

  if (rank == 0) {
    if (P.json) {
      json_out = fopen(P.json, "w");
      if (!json_out) die("cannot open the --json file");
      fprintf(json_out, "[");
    }
    if (P.csv) {
      csv_out = fopen(P.csv, "w");
      if (!csv_out) die("cannot open the --csv file");
      fprintf(csv_out,
              "transport,variant,selected,status,mpi_flavour,mpi,host,mode,ranks,ranks_per_node,"
              "oversubscribed,fields,type,local_grid,global_grid,depth,stencil,warmup,swaps,reps,"
              "us_per_swap_median,us_per_swap_min,us_per_swap_max,ratio_to_p2p,"
              "ratio_to_memcpy_bound,ratio_to_memcpy_1core,memcpy_bound_us,memcpy_1core_us,"
              "halo_bytes_per_swap,bytes_allocated,ratio_to_monc_ref,ratio_to_petsc,ratio_to_ghex\n");
    }
  }
  if (!strcmp(P.mode, "sweep")) {
    for (int s = 0; s < P.nsweep; s++) {
      int l[3] = {P.local[0], P.local[1], P.sweep_z[s]};
      run_geometry(&P, &E, l, 0);
    }
  } else if (!strcmp(P.mode, "strong")) {
    run_geometry(&P, &E, P.global, 1);
  } else {
    run_geometry(&P, &E, P.local, 0);
  }
  if (rank == 0) {
    if (json_out) {
      fprintf(json_out, "\n]\n");
      fclose(json_out);
    }
    if (csv_out) fclose(csv_out);
  }
#ifdef HS_BENCH_PETSC
  petsc_ref_finalize();
#endif
  MPI_Finalize();
  return (P.check && total_bad) ? 1 : 0;
}
