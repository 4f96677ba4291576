#include "app_common.h"

#include "haloswap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void app_init(app_ctx *a, const char *prog, MPI_Comm comm) {
  memset(a, 0, sizeof *a);
  a->prog = prog;
  a->comm = comm;
  MPI_Comm_rank(comm, &a->rank);
  MPI_Comm_size(comm, &a->size);
}

int app_parse(app_ctx *a, app_common_opts *c, int argc, char **argv, const app_int_opt *ints,
              int nints, int (*own)(app_ctx *a, void *o, const char *k, const char *v), void *o) {
  for (int i = 1; i < argc; i++) {
    if (app_common_option(a, c, argc, argv, &i)) continue;
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int t = 0;
    while (t < nints && strcmp(k, ints[t].name)) t++;
    int rc = t < nints ? app_int(a, k, v, ints[t].lo, ints[t].hi, ints[t].out) : own(a, o, k, v);
    if (rc < 0) return app_fail(a, "unknown option '%s' (see --help)", k);
    if (rc) return 1;
    i++;
  }
  return 0;
}

void app_start(app_ctx *a, const char *prog, int *argc, char ***argv) {
  MPI_Init(argc, argv);
  app_init(a, prog, MPI_COMM_WORLD);
}

int app_exit(int rc) {
  MPI_Finalize();
  return rc;
}

int app_fail(app_ctx *a, const char *fmt, ...) {
  if (a->err[0]) return 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->err, sizeof a->err, fmt, ap);
  va_end(ap);
  if (!a->err[0]) snprintf(a->err, sizeof a->err, "error");
  return 1;
}

int app_agree(app_ctx *a) {
  int mine = a->err[0] ? a->rank : a->size, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, a->comm);
  if (first == a->size) return 0;
  char msg[APP_MSG];
  memcpy(msg, a->err, sizeof msg);
  MPI_Bcast(msg, APP_MSG, MPI_CHAR, first, a->comm);
  msg[APP_MSG - 1] = 0;
  /* One line, whatever the library's message contained. */
  for (char *c = msg; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  if (a->rank == 0) {
    fprintf(stderr, "%s: %s\n", a->prog, msg);
    fflush(stderr);
  }
  if (!a->err[0]) memcpy(a->err, msg, sizeof msg);
  return 1;
}

int app_int(app_ctx *a, const char *opt, const char *val, long lo, long hi, int *out) {
  if (!val) return app_fail(a, "option %s needs a value", opt);
  char *end;
  errno = 0;
  long x = strtol(val, &end, 10);
  if (*val == 0 || *end != 0 || errno)
    return app_fail(a, "option %s: '%s' is not an integer", opt, val);
  if (x < lo || x > hi)
    return app_fail(a, "option %s = %ld is out of range: must be %ld..%ld", opt, x, lo, hi);
  *out = (int)x;
  return 0;
}

int app_triple(app_ctx *a, const char *opt, const char *val, long lo, long hi, int out[3]) {
  if (!val) return app_fail(a, "option %s needs a value NX,NY,NZ", opt);
  const char *s = val;
  for (int i = 0; i < 3; i++) {
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || errno || (i < 2 && *end != ',' && *end != 'x') || (i == 2 && *end != 0))
      return app_fail(a, "option %s: '%s' is not of the form NX,NY,NZ", opt, val);
    if (x < lo || x > hi)
      return app_fail(a, "option %s: value %ld is out of range: must be %ld..%ld", opt, x, lo,
                      hi);
    out[i] = (int)x;
    s = end + 1;
  }
  return 0;
}

int app_transport_add(app_ctx *a, app_transports *t, const char *spec) {
  if (!spec || !*spec) return app_fail(a, "option --transport needs a value");
  if (t->n == APP_MAX_RUNS)
    return app_fail(a, "option --transport given more than %d times", APP_MAX_RUNS);
  if (strlen(spec) >= sizeof t->spec[0])
    return app_fail(a, "option --transport: '%.40s...' is too long (at most %zu characters)",
                    spec, sizeof t->spec[0] - 1);
  snprintf(t->spec[t->n++], sizeof t->spec[0], "%s", spec);
  return 0;
}

/* Is transport `name` given explicitly (as "name" or "name:options") in the list? */
static int named(const app_transports *t, const char *name) {
  size_t n = strlen(name);
  for (int i = 0; i < t->n; i++)
    if (!strncmp(t->spec[i], name, n) && (t->spec[i][n] == 0 || t->spec[i][n] == ':')) return 1;
  return 0;
}

void app_transports_expand(app_ctx *a, app_transports *t) {
  app_transports out = {0};
  for (int i = 0; i < t->n; i++) {
    if (strcmp(t->spec[i], "all") != 0) {
      snprintf(out.spec[out.n++], sizeof out.spec[0], "%s", t->spec[i]);
      continue;
    }
    for (int k = 0; k < hs_transport_count() && out.n < APP_MAX_RUNS; k++) {
      const char *name = hs_transport_name(k);
      if (named(t, name)) continue; /* "all" means all the others */
      char why[256] = "";
      if (hs_transport_available(a->comm, name, why, sizeof why) != HS_OK) {
        if (a->rank == 0) printf("transport %s skipped: %s\n", name, why);
        continue;
      }
      snprintf(out.spec[out.n++], sizeof out.spec[0], "%s", name);
    }
  }
  if (out.n == 0) snprintf(out.spec[out.n++], sizeof out.spec[0], "p2p");
  *t = out;
}

uint64_t app_checksum_add(uint64_t acc, const double *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t b;
    memcpy(&b, &x[i], sizeof b);
    acc += b;
  }
  return acc;
}

uint64_t app_checksum_reduce(MPI_Comm comm, uint64_t local) {
  uint64_t g = 0;
  MPI_Allreduce(&local, &g, 1, MPI_UINT64_T, MPI_SUM, comm);
  return g;
}

void app_timing_summarise(MPI_Comm comm, const app_timing *t, app_timing_summary *s) {
  int n = t->nphases, size;
  MPI_Comm_size(comm, &size);
  /* v = [total, compute, comm, phases...] */
  double v[3 + APP_MAX_PHASES], mx[3 + APP_MAX_PHASES], sm[3 + APP_MAX_PHASES];
  double comm_sum = 0;
  for (int i = 0; i < n; i++) comm_sum += t->comm[i];
  v[0] = t->total;
  v[1] = t->total - comm_sum;
  v[2] = comm_sum;
  for (int i = 0; i < n; i++) v[3 + i] = t->comm[i];
  MPI_Allreduce(v, mx, 3 + n, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(v, sm, 3 + n, MPI_DOUBLE, MPI_SUM, comm);
  double per = t->steps > 0 ? 1.0 / t->steps : 0.0;
  memset(s, 0, sizeof *s);
  s->step_max = mx[0] * per;
  s->compute_max = mx[1] * per;
  s->comm_max = mx[2] * per;
  s->step_mean = sm[0] * per / size;
  s->compute_mean = sm[1] * per / size;
  s->comm_mean = sm[2] * per / size;
  for (int i = 0; i < n; i++) {
    s->phase_max[i] = mx[3 + i] * per;
    s->phase_mean[i] = sm[3 + i] * per / size;
  }
}

void app_timing_print(FILE *f, const char *transport, const app_timing *t,
                      const app_timing_summary *s) {
  fprintf(f,
          "timing %s: per timestep over %d steps, max over ranks: step %.3e s, compute %.3e s, "
          "communication %.3e s (",
          transport, t->steps, s->step_max, s->compute_max, s->comm_max);
  for (int i = 0; i < t->nphases; i++)
    fprintf(f, "%s%s %.3e", i ? ", " : "", t->phase[i], s->phase_max[i]);
  fprintf(f, "); mean over ranks: communication %.3e s\n", s->comm_mean);
}

void app_timing_json(FILE *f, const app_timing *t, const app_timing_summary *s) {
  fprintf(f, "\"timed_steps\": %d, \"per_step_max\": {\"step\": %.6e, \"compute\": %.6e, "
             "\"comm\": %.6e",
          t->steps, s->step_max, s->compute_max, s->comm_max);
  for (int i = 0; i < t->nphases; i++) fprintf(f, ", \"comm_%s\": %.6e", t->phase[i], s->phase_max[i]);
  fprintf(f, "}, \"per_step_mean\": {\"step\": %.6e, \"compute\": %.6e, \"comm\": %.6e",
          s->step_mean, s->compute_mean, s->comm_mean);
  for (int i = 0; i < t->nphases; i++)
    fprintf(f, ", \"comm_%s\": %.6e", t->phase[i], s->phase_mean[i]);
  fprintf(f, "}");
}

FILE *app_json_open(app_ctx *a, const char *path) {
  FILE *f = NULL;
  if (path && a->rank == 0) {
    f = fopen(path, "w");
    if (!f) app_fail(a, "option --json: cannot write '%s': %s", path, strerror(errno));
  }
  return f;
}

void app_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", (unsigned)*s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

double *app_array(app_ctx *a, hs_decomp d, int shared, size_t n) {
  void *x = NULL;
  if (shared) {
    if (hs_alloc(d, n * sizeof(double), &x) != HS_OK) {
      app_fail(a, "hs_alloc of %zu bytes: %s", n * sizeof(double), hs_error_message());
      return NULL;
    }
    memset(x, 0, n * sizeof(double));
  } else {
    x = calloc(n, sizeof(double));
    if (!x) app_fail(a, "out of memory for an array of %zu points on rank %d", n, a->rank);
  }
  return x;
}

void app_array_free(hs_decomp d, int shared, double *x) {
  if (!x) return; /* a failed hs_alloc failed on every rank */
  if (shared)
    hs_free(d, x);
  else
    free(x);
}

hs_decomp app_decomp(app_ctx *a, const int global[3], const int procs[2], int periodic_xy) {
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.ndims = 3;
  for (int i = 0; i < 3; i++) dd.global[i] = global[i];
  dd.procs[0] = procs[0];
  dd.procs[1] = procs[1];
  dd.procs[2] = 1;
  dd.periodic[0] = dd.periodic[1] = periodic_xy;
  dd.periodic[2] = 0;
  hs_decomp d = NULL;
  if (hs_decomp_create(a->comm, &dd, &d) != HS_OK) {
    app_fail(a, "decomposition: %s", hs_error_message());
    return NULL;
  }
  return d;
}

void app_common_init(app_common_opts *c) {
  memset(c, 0, sizeof *c);
  c->shared = 1;
}

int app_common_option(app_ctx *a, app_common_opts *c, int argc, char **argv, int *i) {
  const char *k = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
    c->help = 1;
    return 1;
  }
  if (!strcmp(k, "--verbose")) {
    c->verbose = 1;
    return 1;
  }
  if (!strcmp(k, "--transport"))
    app_transport_add(a, &c->tr, v);
  else if (!strcmp(k, "--px"))
    app_int(a, k, v, 0, 1 << 20, &c->px);
  else if (!strcmp(k, "--py"))
    app_int(a, k, v, 0, 1 << 20, &c->py);
  else if (!strcmp(k, "--alloc") && !v)
    app_fail(a, "option --alloc needs a value");
  else if (!strcmp(k, "--alloc") && strcmp(v, "shared") && strcmp(v, "malloc"))
    app_fail(a, "option --alloc = '%s': must be shared or malloc", v);
  else if (!strcmp(k, "--alloc"))
    c->shared = !strcmp(v, "shared");
  else if (!strcmp(k, "--json") && !v)
    app_fail(a, "option --json needs a value");
  else if (!strcmp(k, "--json"))
    c->json = v;
  else
    return 0;
  (*i)++;
  return 1;
}

/* --px and --py against the ranks, then the rest chosen by MPI_Dims_create. */
static int app_procs(app_ctx *a, const app_common_opts *c, int procs[2]) {
  procs[0] = c->px;
  procs[1] = c->py;
  const char *nm[2] = {"--px", "--py"};
  for (int d = 0; d < 2; d++)
    if (procs[d] > 0 && a->size % procs[d] != 0)
      return app_fail(a, "option %s = %d does not divide the %d ranks", nm[d], procs[d], a->size);
  if (procs[0] > 0 && procs[1] > 0 && procs[0] * procs[1] != a->size)
    return app_fail(a, "options --px %d --py %d make %d ranks but %d are running", procs[0],
                    procs[1], procs[0] * procs[1], a->size);
  MPI_Dims_create(a->size, 2, procs);
  return 0;
}

int app_begin(app_ctx *a, app_common_opts *c, void (*usage)(void),
              int (*check)(app_ctx *a, void *opts, const int procs[2]), void *opts) {
  int *procs = a->procs;
  a->js = NULL;
  if (c->tr.n == 0 && !a->err[0]) app_transport_add(a, &c->tr, "p2p");
  if (app_agree(a)) return 1;
  if (c->help) {
    if (a->rank == 0) usage();
    return -1;
  }
  if (!app_procs(a, c, procs) && check) check(a, opts, procs);
  if (app_agree(a)) return 1;
  a->js = app_json_open(a, c->json);
  if (app_agree(a)) return 1;
  app_transports_expand(a, &c->tr);
  return 0;
}

void app_plan_desc_xy(hs_plan_desc *pd, int depth, hs_stencil stencil, int nfields,
                      hs_field *fields, const char *spec) {
  hs_plan_desc_init(pd);
  pd->depth[0] = pd->depth[1] = depth;
  pd->depth[2] = 0;
  pd->stencil = stencil;
  pd->nfields = nfields;
  pd->fields = fields;
  pd->transport_name = spec;
}

int app_check_columns(app_ctx *a, const int procs[2], const int global[3], int depth,
                      const char *halo) {
  for (int d = 0; d < 2; d++) {
    if (procs[d] > global[d])
      return app_fail(a, "%d ranks along %c but the grid has only %d columns in %c", procs[d],
                      "xy"[d], global[d], "xy"[d]);
    if (global[d] / procs[d] < depth)
      return app_fail(a,
                      "grid smaller than the halo: %d points in %c over %d ranks leave %d on "
                      "some rank, fewer than %s %d",
                      global[d], "xy"[d], procs[d], global[d] / procs[d], halo, depth);
  }
  return 0;
}

double app_init_value(long gi, long gj, long k, long fid) {
  int64_t x = (gi * 7919 + gj * 104729 + k * 1299709 + fid * 15485863) % 2147483647;
  for (int r = 0; r < 3; r++) x = (48271 * x + 11) % 2147483647;
  return (double)x / 2147483647.0;
}

void app_print_checksums(const char *spec, int nf, const uint64_t *sums, app_field_name_fn name,
                         const void *ctx) {
  printf("run transport=%s\n", spec);
  for (int f = 0; f < nf; f++) {
    char nm[32];
    name(ctx, f, nm, sizeof nm);
    printf("checksum %s %016llX\n", nm, (unsigned long long)sums[f]);
  }
}

void app_json_run(FILE *js, int first, const char *spec, const char *extra, double setup_s,
                  int nf, const uint64_t *sums, app_field_name_fn name, const void *ctx,
                  const app_timing *tm, const app_timing_summary *ts) {
  if (!js) return;
  fprintf(js, "%s\n  {\"transport\": ", first ? "" : ",");
  app_json_string(js, spec);
  fprintf(js, ", %s\"setup_s\": %.6e, \"checksums\": {", extra, setup_s);
  for (int f = 0; f < nf; f++) {
    char nm[32];
    name(ctx, f, nm, sizeof nm);
    fprintf(js, "%s\"%s\": \"%016llX\"", f ? ", " : "", nm, (unsigned long long)sums[f]);
  }
  fprintf(js, "},\n   ");
  app_timing_json(js, tm, ts);
  fprintf(js, "}");
}

void app_json_close(app_ctx *a) {
  if (!a->js) return;
  fprintf(a->js, "\n ]}\n");
  fclose(a->js);
  a->js = NULL;
}
