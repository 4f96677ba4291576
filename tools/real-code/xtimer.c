/* xtimer: the exclusive halo-exchange timer of tools/check-real-code --bench (docs/real-codes.md,
 * "The --bench instrument"). Linked the same way into a real code's own build and into its
 * drop-in build, without changing any of the code's files:
 *
 *   cc -O2 -c -DXT_SYMS='"syms.h"' [-DXT_HS -I<haloswap>/include] xtimer.c -o xtimer.o
 *   link: ... -Wl,--wrap=SYM ... for every SYM of syms.h, and -Wl,xtimer.o
 *
 * syms.h (written by the check script) has one line per wrapped routine:
 *   XT(index, mangled_symbol, "label")
 * GNU ld's --wrap sends every call to SYM from another object file to __wrap_SYM (here), and
 * __real_SYM to the routine itself. __wrap_SYM waits in an untimed MPI_Barrier(MPI_COMM_WORLD)
 * (so a rank's wait for its neighbours' computation is not counted), then times the call
 * (clock_gettime, CLOCK_MONOTONIC) and adds it to the routine's count and seconds. A wrapped
 * routine called from inside another (nested) is neither barriered nor timed on its own: the
 * outermost call holds it. The wrappers forward 8 pointer-sized arguments: on x86-64 (SysV)
 * that passes through any routine of at most 8 integer or pointer arguments (Fortran passes
 * everything by reference, plus hidden lengths and descriptors; the script's routines take 0
 * to 5), extra ones being ignored by the callee.
 *
 * With XT_HS (the drop-in build only), the haloswap calls that complete an exchange (hs_swap,
 * hs_swap_complete, hs_reverse, hs_reverse_complete, hs_accumulate_fill) are wrapped too and,
 * when HS_XTIMER_BYTES=1, add their plan's bytes per exchange (hs_plan_get_stats: to other
 * ranks, and periodic self copies) to the totals; off (one branch) in the timed runs.
 *
 * HS_XTIMER_SKIP=K: the first K calls of each routine are made (barrier included) but not
 * counted, so a code's set-up exchanges and first step (a drop-in makes its plans there) stay
 * out of the per-step time; the rank file says how many were skipped.
 *
 * At exit (a destructor: after MPI_Finalize, no MPI call), when HS_XTIMER_DIR is set, each rank
 * writes HS_XTIMER_DIR/rank.N: one line per routine called, "label calls seconds
 * barrier_seconds", and "bytes sent self" with XT_HS.
 *
 * Built with -DXT_MEMCPY_MAIN instead, it is a program: `xtimer BYTES` prints the median
 * seconds of one memcpy of BYTES between two warm buffers (the copy floor of an exchange). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double xt_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef XT_MEMCPY_MAIN
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)strtod(argv[1], NULL) : 0, reps = 201;
  if (n == 0) { fprintf(stderr, "usage: xtimer BYTES\n"); return 2; }
  char *a = malloc(n), *b = malloc(n);
  double *t = malloc(reps * sizeof *t);
  if (!a || !b || !t) return 1;
  memset(a, 1, n);
  memset(b, 2, n);
  for (size_t r = 0; r < reps; r++) {
    double t0 = xt_now();
    memcpy(b, a, n);
    t[r] = xt_now() - t0;
    a[r % n] = b[(r * 7) % n]; /* keep the copies */
  }
  qsort(t, reps, sizeof *t, cmp);
  printf("%.9f\n", t[reps / 2]);
  return b[n / 2] == 3;
}
#else
#include <mpi.h>

#define XT_MAX 64
typedef struct {
  const char *label;
  long calls, skipped;
  double seconds, barrier;
} xt_slot;
static xt_slot xt_slots[XT_MAX];
static int xt_depth, xt_rank = -1;
static long xt_skip = -1;

/* HS_XTIMER_SKIP, read once: the calls per routine left uncounted. */
static long xt_skip_calls(void) {
  if (xt_skip < 0) {
    const char *e = getenv("HS_XTIMER_SKIP");
    xt_skip = e ? strtol(e, NULL, 10) : 0;
    if (xt_skip < 0) xt_skip = 0;
  }
  return xt_skip;
}

typedef void *xt_p;

static void xt_enter_rank(void) {
  if (xt_rank < 0) {
    int ok = 0, done = 0;
    MPI_Initialized(&ok);
    MPI_Finalized(&done);
    if (ok && !done) MPI_Comm_rank(MPI_COMM_WORLD, &xt_rank);
  }
}

/* Barrier (untimed), then the call, timed. Nested calls go straight through. */
#define XT(i, sym, lab)                                                                     \
  extern void __real_##sym(xt_p, xt_p, xt_p, xt_p, xt_p, xt_p, xt_p, xt_p);              \
  void __wrap_##sym(xt_p a, xt_p b, xt_p c, xt_p d, xt_p e, xt_p f, xt_p g, xt_p h);     \
  void __wrap_##sym(xt_p a, xt_p b, xt_p c, xt_p d, xt_p e, xt_p f, xt_p g, xt_p h) {    \
    if (xt_depth++) {                                                                     \
      __real_##sym(a, b, c, d, e, f, g, h);                                               \
      xt_depth--;                                                                         \
      return;                                                                             \
    }                                                                                     \
    xt_enter_rank();                                                                      \
    double t0 = xt_now();                                                                 \
    MPI_Barrier(MPI_COMM_WORLD);                                                          \
    double t1 = xt_now();                                                                 \
    __real_##sym(a, b, c, d, e, f, g, h);                                                 \
    double t2 = xt_now();                                                                 \
    xt_slots[i].label = lab;                                                              \
    if (xt_slots[i].skipped < xt_skip_calls()) {                                          \
      xt_slots[i].skipped++;                                                              \
      xt_depth--;                                                                         \
      return;                                                                             \
    }                                                                                     \
    xt_slots[i].calls++;                                                                  \
    xt_slots[i].seconds += t2 - t1;                                                       \
    xt_slots[i].barrier += t1 - t0;                                                       \
    xt_depth--;                                                                           \
  }
#include XT_SYMS
#undef XT

#ifdef XT_HS
#include <haloswap.h>
static int xt_bytes_on = -1;
static uint64_t xt_sent, xt_self;
static void xt_count(hs_plan p, int times) {
  if (xt_bytes_on < 0) {
    const char *e = getenv("HS_XTIMER_BYTES");
    xt_bytes_on = e && e[0] == '1';
  }
  if (!xt_bytes_on) return;
  hs_plan_stats st;
  if (hs_plan_get_stats(p, &st) != HS_OK) return;
  xt_sent += (uint64_t)times * st.bytes_sent_per_swap;
  xt_self += (uint64_t)times * st.bytes_self_per_swap;
}
/* __wrap_name: the real call, then `times` exchanges of plan p counted. */
#define XT_COUNTED(name, times, params, args)                                               \
  int __real_##name params;                                                                 \
  int __wrap_##name params;                                                                 \
  int __wrap_##name params {                                                                \
    int rc = __real_##name args;                                                            \
    xt_count(p, times);                                                                     \
    return rc;                                                                              \
  }
XT_COUNTED(hs_swap, 1, (hs_plan p, void *const *a), (p, a))
XT_COUNTED(hs_swap_complete, 1, (hs_plan p, void *const *a), (p, a))
XT_COUNTED(hs_reverse, 1, (hs_plan p, hs_op op, void *const *a), (p, op, a))
XT_COUNTED(hs_reverse_complete, 1, (hs_plan p, void *const *a), (p, a))
XT_COUNTED(hs_accumulate_fill, 2, (hs_plan p, hs_op op, void *const *a), (p, op, a))
#undef XT_COUNTED
#endif

__attribute__((destructor)) static void xt_write(void) {
  const char *dir = getenv("HS_XTIMER_DIR");
  if (!dir || !*dir) return;
  int r = xt_rank;
  if (r < 0) {
    const char *e = getenv("OMPI_COMM_WORLD_RANK");
    if (!e) e = getenv("PMI_RANK");
    r = e ? atoi(e) : 0;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/rank.%d", dir, r);
  FILE *f = fopen(path, "w");
  if (!f) return;
  for (int i = 0; i < XT_MAX; i++)
    if (xt_slots[i].calls)
      fprintf(f, "%s %ld %.9f %.9f\n", xt_slots[i].label, xt_slots[i].calls, xt_slots[i].seconds,
              xt_slots[i].barrier);
  for (int i = 0; i < XT_MAX; i++)
    if (xt_slots[i].skipped)
      fprintf(f, "skipped %s %ld\n", xt_slots[i].label, xt_slots[i].skipped);
#ifdef XT_HS
  if (xt_bytes_on > 0)
    fprintf(f, "bytes %llu %llu\n", (unsigned long long)xt_sent, (unsigned long long)xt_self);
#endif
  fclose(f);
}
#endif
