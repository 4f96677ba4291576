/* Fault injection for errors during a swap (issue 28; docs/design.md, "Errors during a
 * swap"): one rank -- the first, a middle one, the last -- is wrong at each per-swap check
 * while the others swap correctly, on the transport given, at the rank count of the launch,
 * on the decomposition's own layout (periodic, box: every rank exchanges with every other up
 * to 9 ranks) and on a walled chain (star stencil: an error travels one neighbour per swap).
 * For every case:
 *   - no hang: every case runs under alarm(CASE_SECONDS), well below CTest's timeout;
 *   - the same status: each rank's first error on the plan (code and message, which names
 *     the offending rank, argument and value) is rank 0's, within the same swap for every
 *     rank that exchanges with the offender, and for the others as swaps go on;
 *   - the failed plan frees (collectively), and a fresh plan's next swap is right in every
 *     halo cell (the analytic check of tests/core/halo_check.h).
 * The reverse exchange the same way (its checks, on every transport), its later rounds reverses.
 * A second start begins no round: it is refused on the offender alone, whose round goes on,
 * and every plan stays usable (its later swaps succeed on every rank).
 * On nbr the other ranks pass per-swap arrays when the offender does (nbr's rule: ranks pass
 * them on the same swaps, which the offender's failed round relies on).
 * Prints the number of kinds (checks x offending ranks x layouts), like the bad-input matrix.
 * A transport that does not take part in failed rounds yet exits with the skip code 77. */
#define _GNU_SOURCE
#include "halo_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CASE_SECONDS 20
#define NF 2
static int rank, size, kinds, failed;
static const char *transport;
static int sweep; /* second argument "sweep": the plans sweep (HS_ORDER_SWEEP) */
static char current[160];

static void on_alarm(int sig) {
  (void)sig;
  char m[256];
  int n = snprintf(m, sizeof m, "test_faults: HANG (rank %d) in case: %s\n", rank, current);
  ssize_t w = write(2, m, (size_t)n);
  (void)w;
  _exit(2);
}

typedef struct {
  hs_decomp d;
  hs_plan_desc pd;
  hs_field fl[NF];
  tfield tf[NF];
  void *data[NF], *other[NF];
  tgeom g;
} world;

static void make_world(world *w, int chain) {
  memset(w, 0, sizeof *w);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.global[0] = chain ? 3 * size : 6 + size;
  dd.global[1] = 5;
  dd.global[2] = 3;
  if (chain) {
    dd.procs[0] = size;
    dd.procs[1] = 1;
    dd.periodic[0] = dd.periodic[1] = 0;
  }
  if (hs_decomp_create(MPI_COMM_WORLD, &dd, &w->d) != HS_OK) {
    fprintf(stderr, "decomposition: %s\n", hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  hs_plan_desc_init(&w->pd);
  w->pd.depth[0] = w->pd.depth[1] = 1;
  w->pd.stencil = chain && !sweep ? HS_STENCIL_STAR : HS_STENCIL_BOX; /* a sweep needs box */
  w->pd.nfields = NF;
  w->pd.fields = w->fl;
  w->pd.transport_name = transport;
  if (sweep) hs_plan_desc_set_order_sweep(&w->pd, 0, NULL);
  tgeom_from(&w->g, w->d, &w->pd);
  int halo[3] = {1, 1, 0};
  for (int f = 0; f < NF; f++) {
    tfield_init(&w->tf[f], HS_FLOAT64, HS_LAYOUT_ZFAST, w->g.local, halo, 3);
    w->data[f] = calloc(w->tf[f].n + 1, 8);
    w->other[f] = calloc(w->tf[f].n + 1, 8);
    w->fl[f] = hs_field_array(HS_FLOAT64, w->data[f], HS_LAYOUT_ZFAST, 1);
  }
}

static void free_world(world *w) {
  for (int f = 0; f < NF; f++) {
    free(w->data[f]);
    free(w->other[f]);
  }
  hs_decomp_free(&w->d);
}

/* What each rank saw: its first error on the plan. */
typedef struct {
  int rc;
  char msg[1024];
} seen;

static void note(seen *s, int rc) {
  if (s->rc == HS_OK && rc != HS_OK) {
    s->rc = rc;
    snprintf(s->msg, sizeof s->msg, "%s", hs_error_message());
  }
}

enum {
  K_MISALIGNED, K_START_TWICE, K_COMPLETE_NO_START, K_COMPLETE_OTHER_ARRAYS,
  /* the reverse exchange's */
  K_REV_MISALIGNED, K_REV_BAD_OP, K_REV_START_TWICE, K_REV_COMPLETE_NO_START,
  K_REV_COMPLETE_OTHER_ARRAYS, K_N
};
#define K_REVERSE K_REV_MISALIGNED
static const char *const kname[K_N] = {
    "misaligned array", "swap started twice", "complete without start",
    "complete with other arrays", "reverse: misaligned array", "reverse: op not an hs_op",
    "reverse started twice", "reverse complete without start",
    "reverse complete with other arrays"};
static const char *const kneedle[K_N] = {
    "is not aligned to its element size", "already in progress", "no swap was started",
    "but the swap was started with", "is not aligned to its element size", "is not an hs_op",
    "already in progress", "no reverse exchange was started",
    "but the reverse exchange was started with"};
/* the offender passes per-swap arrays in its first call of the faulty round */
static const int kgiven[K_N] = {1, 0, 0, 1, 1, 0, 0, 0, 1};
static int same_kind; /* nbr: the others pass arrays when the offender does */

/* Start and complete of the forward (rev = 0) or the reverse exchange (op: the reverse's), so
 * a mistake both make is written once. */
static int start(hs_plan p, int rev, hs_op op, void *const *arrays) {
  return rev ? hs_reverse_start(p, op, arrays) : hs_swap_start(p, arrays);
}
static int complete(hs_plan p, int rev, void *const *arrays) {
  return rev ? hs_reverse_complete(p, arrays) : hs_swap_complete(p, arrays);
}

/* The faulty swap: rank bad makes mistake k, the others swap correctly. */
static void faulty_swap(world *w, hs_plan p, int k, int bad, seen *s) {
  void *arrays[NF];
  for (int f = 0; f < NF; f++) arrays[f] = w->data[f];
  void *const *mine = same_kind && kgiven[k] ? arrays : NULL;
  const int rev = k >= K_REVERSE;
  if (rank != bad) {
    note(s, start(p, rev, HS_OP_SUM, mine));
    note(s, complete(p, rev, mine));
    return;
  }
  switch (k) {
  case K_MISALIGNED:
    arrays[1] = (char *)w->data[1] + 1;
    note(s, hs_swap_start(p, arrays));
    break;
  case K_START_TWICE:
  case K_REV_START_TWICE:
    note(s, start(p, rev, HS_OP_SUM, NULL));
    note(s, start(p, rev, HS_OP_MAX, NULL));
    note(s, complete(p, rev, NULL));
    break;
  case K_COMPLETE_NO_START:
  case K_REV_COMPLETE_NO_START:
    note(s, complete(p, rev, NULL));
    break;
  case K_COMPLETE_OTHER_ARRAYS:
  case K_REV_COMPLETE_OTHER_ARRAYS:
    note(s, start(p, rev, HS_OP_SUM, arrays));
    arrays[rev] = w->other[rev]; /* forward: field 0 changes, reverse: field 1 */
    note(s, complete(p, rev, arrays));
    break;
  case K_REV_MISALIGNED:
    arrays[0] = (char *)w->data[0] + 4;
    note(s, hs_reverse_start(p, HS_OP_SUM, arrays));
    break;
  case K_REV_BAD_OP:
    note(s, hs_reverse_start(p, (hs_op)77, NULL));
    break;
  }
}

static void run_case(int chain, int k, int bad) {
  snprintf(current, sizeof current, "%s%s: %s on rank %d, %s", transport,
           sweep ? " (sweep)" : "", kname[k], bad, chain ? "walled chain" : "periodic grid");
  alarm(CASE_SECONDS);
  world w;
  make_world(&w, chain);
  hs_plan p = NULL;
  int rc = hs_plan_create(w.d, &w.pd, &p);
  if (rc != HS_OK) {
    fprintf(stderr, "[rank %d] %s: plan: %s\n", rank, current, hs_error_message());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  seen s;
  memset(&s, 0, sizeof s);
  note(&s, hs_swap(p, NULL)); /* a correct swap first (and reverse) */
  if (k >= K_REVERSE) note(&s, hs_reverse(p, HS_OP_SUM, NULL));
  int first_ok = s.rc == HS_OK;
  faulty_swap(&w, p, k, bad, &s);
  /* Within the same swap for its neighbours (all of them on the periodic grid, except for
   * the mistakes found after the round began); further swaps carry it on. */
  int within = s.rc != HS_OK;
  int rounds = chain ? size : 1;
  for (int r = 0; r < rounds; r++)
    note(&s, k < K_REVERSE ? hs_swap(p, NULL) : hs_reverse(p, HS_OP_SUM, NULL));
  int freed = hs_plan_free(&p) == HS_OK && p == NULL;
  /* A fresh plan works. */
  rc = hs_plan_create(w.d, &w.pd, &p);
  long bad_cells = 0;
  if (rc == HS_OK) {
    for (int f = 0; f < NF; f++) tfield_fill(&w.tf[f], w.data[f], &w.g, f, 3, 1);
    rc = hs_swap(p, NULL);
    for (int f = 0; rc == HS_OK && f < NF; f++)
      bad_cells += tfield_check(&w.tf[f], w.data[f], &w.g, f, 3, current, rank, 1);
    hs_plan_free(&p);
  }
  alarm(0);
  /* Compare with rank 0. */
  seen z = s;
  MPI_Bcast(&z, (int)sizeof z, MPI_BYTE, 0, MPI_COMM_WORLD);
  char want[64];
  snprintf(want, sizeof want, "rank %d: ", bad);
  int ok = first_ok && freed && rc == HS_OK && bad_cells == 0 && s.rc != HS_OK &&
           s.rc == z.rc && !strcmp(s.msg, z.msg) && strncmp(s.msg, want, strlen(want)) == 0 &&
           strstr(s.msg, kneedle[k]) != NULL;
  if (k == K_START_TWICE || k == K_REV_START_TWICE)
    ok = first_ok && freed && rc == HS_OK && bad_cells == 0 &&
         (rank == bad ? s.rc == HS_ERR_STATE && strstr(s.msg, kneedle[k]) != NULL
                      : s.rc == HS_OK);
  /* Mistakes found where a round begins reach every rank that exchanges with the offender
   * in that very round: on the periodic grid, everyone. */
  int same_round = k == K_MISALIGNED || k == K_COMPLETE_NO_START || k == K_REV_MISALIGNED ||
                   k == K_REV_BAD_OP || k == K_REV_COMPLETE_NO_START;
  if (ok && same_round && !chain && !within) ok = 0;
  if (!ok)
    fprintf(stderr, "[rank %d] FAIL %s: first swap %s, first error %s '%s' (rank 0: %s '%s'), "
                    "within the faulty swap %d, freed %d, fresh plan %s with %ld wrong cells\n",
            rank, current, first_ok ? "ok" : "failed", hs_status_name(s.rc), s.msg,
            hs_status_name(z.rc), z.msg, within, freed, hs_status_name(rc), bad_cells);
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  kinds++;
  if (!all) failed++;
  else if (rank == 0)
    printf("ok   %-70s %s: %s\n", current, hs_status_name(s.rc), s.msg);
  free_world(&w);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  signal(SIGALRM, on_alarm);
  transport = argc > 1 ? argv[1] : "p2p";
  same_kind = strncmp(transport, "nbr", 3) == 0;
  sweep = argc > 2 && strcmp(argv[2], "sweep") == 0;
  if (size < 2) {
    if (rank == 0) printf("SKIP test_faults: needs 2 or more ranks\n");
    MPI_Finalize();
    return 77;
  }
  char name[64], why[256] = "";
  snprintf(name, sizeof name, "%.*s", (int)strcspn(transport, ":"), transport);
  if (hs_transport_available(MPI_COMM_WORLD, name, why, sizeof why) != HS_OK) {
    if (rank == 0) printf("SKIP test_faults: transport %s: %s\n", transport, why);
    MPI_Finalize();
    return 77;
  }
  int bads[3] = {0, size / 2, size - 1}, nb = size > 2 ? 3 : 2;
  for (int chain = 0; chain < 2; chain++)
    for (int k = 0; k < K_N; k++)
      for (int b = 0; b < nb; b++) run_case(chain, k, bads[b]);
  /* A freed plan: hs_plan_free is collective, so no neighbour can be waiting on it; the
   * call is refused on the rank that makes it, naming the argument. */
  {
    hs_plan p = NULL;
    int rc = rank == size - 1 ? hs_swap(p, NULL) : HS_ERR_ARG;
    int ok = rc == HS_ERR_ARG && (rank != size - 1 || strstr(hs_error_message(), "plan is NULL"));
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    kinds++;
    if (!all) failed++;
  }
  if (rank == 0)
    printf("test_faults %s at %d ranks: %d kinds of fault checked, %d failed\n", transport,
           size, kinds, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
