/* Pieces shared by the mini-apps (the folders under apps/): option parsing with collective
 * error handling (the options every app takes, the start-up every app does), exact
 * order-independent checksums, the transport list, the analytic initial values, and the
 * timing summary (max and mean over ranks) printed and written as JSON. */
#ifndef HS_APP_COMMON_H
#define HS_APP_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "haloswap.h"

#define APP_MAX_RUNS 32
#define APP_MSG 512

typedef struct {
  const char *prog;
  MPI_Comm comm;
  int rank, size;
  char err[APP_MSG]; /* first local error, empty if none */
  int procs[2];       /* ranks along x and y (app_begin) */
  FILE *js;           /* the --json file on rank 0, else NULL (app_begin) */
} app_ctx;

void app_init(app_ctx *a, const char *prog, MPI_Comm comm);
/* The start of an app's main: MPI_Init, then app_init on MPI_COMM_WORLD. */
void app_start(app_ctx *a, const char *prog, int *argc, char ***argv);
/* The end of an app's main: MPI_Finalize, and rc to return. */
int app_exit(int rc);
/* Record a local error (the first one wins). Returns 1 so callers can `return app_fail(..)`. */
int app_fail(app_ctx *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Collective: if any rank recorded an error, rank 0 prints one line "prog: message" (its own
 * message, or the lowest failing rank's) to stderr and every rank gets 1; else 0. */
int app_agree(app_ctx *a);

/* "--opt VALUE": integer in [lo, hi]; records an error naming the option otherwise. */
int app_int(app_ctx *a, const char *opt, const char *val, long lo, long hi, int *out);
/* "NX,NY,NZ" (or NXxNYxNZ) with every value in [lo, hi]. */
int app_triple(app_ctx *a, const char *opt, const char *val, long lo, long hi, int out[3]);

/* Transport specs to run: "all" expands to every registered transport usable on comm that
 * the list does not name itself (so "all" plus "auto:rounds=3" runs auto with those options);
 * rank 0 notes the unusable ones on stdout. */
typedef struct {
  int n;
  char spec[APP_MAX_RUNS][128];
} app_transports;
int app_transport_add(app_ctx *a, app_transports *t, const char *spec);
void app_transports_expand(app_ctx *a, app_transports *t);

/* Options every mini-app takes: --help (-h), --verbose, --transport SPEC (repeatable; p2p
 * when none), --px N, --py N (ranks along x and y, 0: chosen), --alloc shared|malloc (fields
 * from hs_alloc, the default, or calloc), --json FILE. */
typedef struct {
  int help, verbose, px, py, shared;
  const char *json;
  app_transports tr;
} app_common_opts;
void app_common_init(app_common_opts *c);
/* If argv[*i] is one of the options above, takes it (and *i past its value) and returns 1,
 * with an error recorded if the value is bad; else 0. */
int app_common_option(app_ctx *a, app_common_opts *c, int argc, char **argv, int *i);
/* An app's integer option "--name N", N in [lo, hi]. */
typedef struct {
  const char *name;
  long lo, hi;
  int *out;
} app_int_opt;
/* The option loop of every app: the common options, the integer ones ints[0..nints), then
 * own(a, o, k, v) for option k with value v (0: taken, 1: error recorded, -1: not its option,
 * an unknown option). Returns 1 at the first error (recorded), else 0. */
int app_parse(app_ctx *a, app_common_opts *c, int argc, char **argv, const app_int_opt *ints,
              int nints, int (*own)(app_ctx *a, void *o, const char *k, const char *v), void *o);
/* The start of every app's main, after its own parsing: agree on the options, print the usage
 * for --help, make the process grid a->procs from --px/--py, run the app's own check
 * (optional: grid against procs), open the JSON file (a->js, rank 0) and expand "all".
 * Returns 0 to go on, -1 after --help, 1 on an error (printed once, the same on every rank). */
int app_begin(app_ctx *a, app_common_opts *c, void (*usage)(void),
              int (*check)(app_ctx *a, void *opts, const int procs[2]), void *opts);

/* A plan description for fields with a halo in x and y only: depth in both, none in z (the
 * mini-apps' and the MONC-case benches' plans). */
void app_plan_desc_xy(hs_plan_desc *pd, int depth, hs_stencil stencil, int nfields,
                      hs_field *fields, const char *spec);

/* A check_grid's x-y part: every rank along x and y gets at least depth of the global[0..1]
 * columns. Else records the error, which ends "fewer than <halo> <depth>", and returns 1. */
int app_check_columns(app_ctx *a, const int procs[2], const int global[3], int depth,
                      const char *halo);

/* Initial value in [0,1) from global coordinates and a field id: integer arithmetic only, so
 * every language and decomposition gets the same bits. */
double app_init_value(long gi, long gj, long k, long fid);

/* Sum of the 64-bit patterns of the doubles modulo 2^64: exact, independent of order and
 * of the decomposition. Reduced over ranks with an integer sum. */
uint64_t app_checksum_add(uint64_t acc, const double *x, size_t n);
uint64_t app_checksum_reduce(MPI_Comm comm, uint64_t local);

/* Timing of one run: per-rank totals over the timed steps for a set of named phases. */
#define APP_MAX_PHASES 8
typedef struct {
  int nphases;
  const char *phase[APP_MAX_PHASES]; /* communication phases */
  double comm[APP_MAX_PHASES];       /* seconds waiting in each phase (this rank) */
  double total;                      /* seconds of the timed steps (this rank) */
  int steps;                         /* timed steps */
} app_timing;

typedef struct {
  double step_max, compute_max, comm_max, step_mean, compute_mean, comm_mean;
  double phase_max[APP_MAX_PHASES], phase_mean[APP_MAX_PHASES];
} app_timing_summary; /* per timestep */

void app_timing_summarise(MPI_Comm comm, const app_timing *t, app_timing_summary *s);
void app_timing_print(FILE *f, const char *transport, const app_timing *t,
                      const app_timing_summary *s);
void app_timing_json(FILE *f, const app_timing *t, const app_timing_summary *s);

/* Field memory: with shared = 1 from hs_alloc (node-shared, so the shm transport copies
 * straight from a neighbour's field), else from calloc. Both are collective when shared: every
 * rank allocates and frees the same arrays in the same order. Zero-filled. NULL on failure
 * (recorded with app_fail; hs_alloc failures are already agreed by the library). */
/* 3D decomposition over comm with z whole, procs[0] x procs[1] ranks (0 = chosen), periodic
 * or walled in x and y; on failure records the message (agree with app_agree) and returns NULL. */
hs_decomp app_decomp(app_ctx *a, const int global[3], const int procs[2], int periodic_xy);
double *app_array(app_ctx *a, hs_decomp d, int shared, size_t n);
void app_array_free(hs_decomp d, int shared, double *x);

/* The --help lines of the options app_common_option parses for the halo-swap apps of one
 * pattern (brams-mini, monc-mini; docs/mini-apps.md), and of their checksum lines. */
#define APP_USAGE_TRANSPORT                                                                    \
  "  --transport SPEC   transport, e.g. p2p or \"rma-fence:drive=get\"; repeat to run several\n"  \
  "                     in turn; \"all\" = every other transport usable here (default p2p)\n"
#define APP_USAGE_COMMON                                                                       \
  "  --px N, --py N     ranks along x and y (default 0: chosen by MPI_Dims_create)\n"          \
  "  --alloc KIND       memory of the swapped fields: shared (hs_alloc, default: the shm\n"    \
  "                     transport copies straight from a neighbour's field) or malloc\n"      \
  "  --json FILE        write checksums and timings as JSON\n"                                \
  "  --verbose          describe the plans\n"                                                 \
  "  --help             this text\n"                                                          \
  "Prints one 'checksum FIELD HEX' line per field (sum of the 64-bit patterns of the\n"       \
  "interior values modulo 2^64) and per-timestep timings (max over ranks).\n"

/* Rank 0 opens the JSON file (so a bad path fails at start, on every rank). */
FILE *app_json_open(app_ctx *a, const char *path);

void app_json_string(FILE *f, const char *s);

/* A run's checksums (sums, the reduced app_checksum_add of each of nf fields, named by name):
 * "run transport=SPEC" and a "checksum NAME HEX" line per field on stdout, and their JSON
 * entry in the "runs" array of js (if any; first: the array's first entry). extra: JSON
 * members before "setup_s" ("" or "\"key\": value, "); setup_s: the plan creation's seconds. */
typedef void (*app_field_name_fn)(const void *ctx, int f, char *buf, size_t len);
void app_print_checksums(const char *spec, int nf, const uint64_t *sums, app_field_name_fn name,
                         const void *ctx);
void app_json_run(FILE *js, int first, const char *spec, const char *extra, double setup_s,
                  int nf, const uint64_t *sums, app_field_name_fn name, const void *ctx,
                  const app_timing *tm, const app_timing_summary *ts);
/* Ends a->js's "runs" array and object, and closes it (if open). */
void app_json_close(app_ctx *a);

#endif
