/* auto's trial: the candidates' plans timed interleaved on the real fields, the clearly
 * slower dropped early, the fastest agreed across ranks (src/transports/auto/auto.c makes and
 * checks the candidates, then calls hs__auto_trial). */
#include "auto.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One round of candidate i: `swaps` back-to-back swaps after a barrier; the mean per swap
 * on this rank (seconds). Back to back, as an application swaps: a single swap after a
 * barrier measured the barrier's exit skew, not the transport. */
static double run_round(hs_plan p, auto_cand *c, int swaps) {
  MPI_Barrier(p->comm);
  double t0 = hs__wtime();
  for (int s = 0; s < swaps; s++) hs_swap(c->plan, NULL);
  return (hs__wtime() - t0) / swaps;
}

/* The median of v[0..n-1], and its minimum and maximum (n >= 1). */
static double median_of(const double *v, int n, double *min, double *max) {
  double s[AUTO_MAX_ROUNDS];
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  if (min) *min = s[0];
  if (max) *max = s[n - 1];
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Seconds since setup began, the slowest rank's: the same on every rank. */
double hs__auto_elapsed(hs_plan p, const auto_t *t) {
  double e = hs__wtime() - t->t0, m = e;
  MPI_Allreduce(&e, &m, 1, MPI_DOUBLE, MPI_MAX, p->comm);
  return m;
}

/* The trial (docs/benchmarks.md, "auto"). Every decision is taken from values reduced over
 * the ranks, so it is the same everywhere. Noise from other processes only ever adds time,
 * comes in bursts and may hit any round, so no single timing decides anything:
 * 1. Swaps per round from the FASTEST candidate's swap (about 10 ms of it, 4..50; fewer, down
 *    to 2, when the warm-up and three scored rounds would not fit in what is left of the
 *    budget). Candidates over AUTO_HOPELESS_FIRST x the fastest at this (second) swap are
 *    dropped at once.
 * 2. Warm-up rounds, unscored, until every candidate has done AUTO_WARM swaps (datatype
 *    builds, first touch of buffers and windows); one over AUTO_HOPELESS x the round's best,
 *    and at its timed swap over AUTO_HOPELESS x the fastest, is dropped (it cannot win; under
 *    load it would dominate the trial): two timings apart in time, not one stall.
 * 3. Scored rounds, interleaved with the order rotated, so that a burst of load falls on
 *    neighbours in time alike; per round the slowest rank's mean. From the third on, a
 *    candidate whose fastest round is over AUTO_DROP x the leader's median round (the lowest
 *    median) stops: even its least disturbed round loses.
 * 4. After `rounds` scored rounds the leader must have beaten the runner-up (the next median)
 *    in AUTO_AGREE of the rounds, paired round by round; if not, the rounds disagree and the
 *    candidates left run `rounds` more, once. Scored rounds stop when the budget (counted from
 *    the start of setup) is spent, three at least.
 * 5. A final, when the scored rounds were shorter than AUTO_FINAL_SWAPS (a slow swap or a
 *    tight budget) and the runner-up's median is within AUTO_FINAL_CLOSE of the
 *    leader's (step 3 then keeps the runner-up): the two run AUTO_FINAL_ROUNDS paired rounds
 *    of up to AUTO_FINAL_SWAPS swaps, order alternating. Short rounds under load can hide,
 *    even invert, a steady-state lead (MPICH, two busy loops: shm 1.5-1.7x ahead of cma in
 *    rounds of 10 swaps, 1.5x behind in rounds of 2). Scored rounds leave its time in the
 *    budget; where they could not (three rounds are the minimum), it runs past the budget
 *    with rounds of at least AUTO_FINAL_MIN swaps (and twice the scored rounds').
 * The choice: the lowest median over the scored rounds, or the final's winner (its median). */
#define AUTO_WARM 4
#define AUTO_HOPELESS_FIRST 20.0
#define AUTO_HOPELESS 8.0
#define AUTO_DROP 1.5
#define AUTO_AGREE (2.0 / 3.0)
#define AUTO_FINAL_CLOSE 2.0
#define AUTO_FINAL_SWAPS 10
#define AUTO_FINAL_MIN 5

/* Seconds the final would take: its rounds of the leader and the runner-up, from their
 * medians (us per swap). */
static double final_cost(const auto_t *t, int best, int second, int swaps) {
  if (t->swaps >= AUTO_FINAL_SWAPS || best < 0 || second < 0 ||
      t->c[second].score > AUTO_FINAL_CLOSE * t->c[best].score)
    return 0;
  return AUTO_FINAL_ROUNDS * swaps * (t->c[best].score + t->c[second].score) * 1e-6;
}

/* The final (step 5): returns the winner of best and second, each one's median of the final
 * rounds in its `fin`. */
static int final_round(hs_plan p, auto_t *t, int best, int second, int swaps) {
  double local[2 * AUTO_FINAL_ROUNDS], global[2 * AUTO_FINAL_ROUNDS];
  int who[2] = {best, second};
  for (int r = 0; r < AUTO_FINAL_ROUNDS; r++)
    for (int k = 0; k < 2; k++) {
      int c = (k + r) % 2;
      local[2 * r + c] = run_round(p, &t->c[who[c]], swaps);
    }
  MPI_Allreduce(local, global, 2 * AUTO_FINAL_ROUNDS, MPI_DOUBLE, MPI_MAX, p->comm);
  for (int c = 0; c < 2; c++) {
    double v[AUTO_FINAL_ROUNDS];
    for (int r = 0; r < AUTO_FINAL_ROUNDS; r++) v[r] = global[2 * r + c] * 1e6;
    t->c[who[c]].fin = median_of(v, AUTO_FINAL_ROUNDS, NULL, NULL);
  }
  t->final_swaps = swaps;
  return t->c[second].fin < t->c[best].fin ? second : best;
}

/* The alive candidate with the lowest median over the `scored` rounds, and the runner-up
 * (-1 if none); each candidate's score set to its median. */
static int leaders(auto_t *t, const int *alive, int scored, int *second) {
  int best = -1;
  *second = -1;
  for (int i = 0; i < t->n; i++) {
    if (!alive[i]) continue;
    t->c[i].score = median_of(t->c[i].t, scored, &t->c[i].min, &t->c[i].max);
    if (best < 0 || t->c[i].score < t->c[best].score) {
      *second = best;
      best = i;
    } else if (*second < 0 || t->c[i].score < t->c[*second].score) {
      *second = i;
    }
  }
  return best;
}

/* Whether the rounds disagree: the leader beat the runner-up in fewer than AUTO_AGREE of
 * them. */
static int disagree(const auto_t *t, int best, int second, int scored) {
  if (best < 0 || second < 0) return 0;
  int wins = 0;
  for (int r = 0; r < scored; r++) wins += t->c[best].t[r] < t->c[second].t[r];
  return wins < AUTO_AGREE * scored;
}

int hs__auto_trial(hs_plan p, auto_t *t) {
  /* One usable candidate: nothing to choose, so nothing to time (under load its rounds
   * would take the whole budget). Which candidates made it is the same on every rank. */
  int usable = 0, only = -1;
  for (int i = 0; i < t->n; i++)
    if (t->c[i].plan) usable++, only = i;
  if (usable == 1) {
    t->rounds = t->swaps = 0;
    return only;
  }
  double first[AUTO_MAX_CAND], firstmax[AUTO_MAX_CAND];
  for (int i = 0; i < t->n; i++) {
    first[i] = 0;
    if (!t->c[i].plan) continue;
    double t0 = hs__wtime();
    hs_swap(t->c[i].plan, NULL);
    first[i] = hs__wtime() - t0;
  }
  MPI_Allreduce(first, firstmax, t->n, MPI_DOUBLE, MPI_MAX, p->comm);
  double fastest = 0;
  for (int i = 0; i < t->n; i++)
    if (t->c[i].plan && (fastest == 0 || firstmax[i] < fastest)) fastest = firstmax[i];
  int alive[AUTO_MAX_CAND];
  double sum = 0; /* seconds for one swap of every candidate left */
  for (int i = 0; i < t->n; i++) {
    alive[i] = t->c[i].plan != NULL;
    if (alive[i] && firstmax[i] > AUTO_HOPELESS_FIRST * fastest) {
      alive[i] = 0;
      t->c[i].dropped = firstmax[i] * 1e6;
    }
    if (alive[i]) sum += firstmax[i];
  }
  int swaps = t->swaps;
  if (swaps == 0) {
    swaps = fastest > 0 ? (int)(10e-3 / fastest) + 1 : 50;
    if (swaps < 4) swaps = 4;
    if (swaps > 50) swaps = 50;
    /* Within the budget: the warm-up and three scored rounds of everyone left must fit in
     * what remains of it (rounds of 2 swaps at the least). */
    double left = t->budget - hs__auto_elapsed(p, t);
    while (t->budget > 0 && swaps > 2 &&
           ((AUTO_WARM + swaps - 1) / swaps + 3) * swaps * sum > left)
      swaps--;
  }
  t->swaps = swaps;
  int warm = (AUTO_WARM + swaps - 1) / swaps;
  /* One more entry: seconds since setup began (the slowest rank's, the same everywhere). */
  double local[AUTO_MAX_CAND + 1], global[AUTO_MAX_CAND + 1];
  int scored = 0, planned = t->rounds, best = -1, second = -1;
  double spent = hs__auto_elapsed(p, t);
  for (int r = 0;; r++) {
    if (scored >= planned) {
      if (t->remeasured || !disagree(t, best, second, scored) ||
          scored + t->rounds > AUTO_MAX_ROUNDS || (t->budget > 0 && spent > t->budget))
        break;
      t->remeasured = 1; /* once: `rounds` more of the candidates left */
      planned += t->rounds;
    }
    if (scored >= 3 && t->budget > 0 &&
        spent + final_cost(t, best, second, AUTO_FINAL_SWAPS) > t->budget)
      break;
    for (int i = 0; i < t->n; i++) local[i] = 0;
    for (int k = 0; k < t->n; k++) {
      int i = (k + r) % t->n;
      if (alive[i]) local[i] = run_round(p, &t->c[i], swaps);
    }
    local[t->n] = hs__wtime() - t->t0;
    MPI_Allreduce(local, global, t->n + 1, MPI_DOUBLE, MPI_MAX, p->comm);
    spent = global[t->n];
    if (r < warm) {
      double bestr = 0;
      for (int i = 0; i < t->n; i++)
        if (alive[i] && (bestr == 0 || global[i] < bestr)) bestr = global[i];
      for (int i = 0; i < t->n; i++)
        if (alive[i] && global[i] > AUTO_HOPELESS * bestr &&
            firstmax[i] > AUTO_HOPELESS * fastest) {
          alive[i] = 0;
          t->c[i].dropped = global[i] * 1e6;
        }
      continue;
    }
    for (int i = 0; i < t->n; i++)
      if (alive[i]) t->c[i].t[scored] = global[i] * 1e6;
    scored++;
    best = leaders(t, alive, scored, &second);
    if (scored < 3) continue;
    for (int i = 0; i < t->n; i++)
      if (alive[i] && i != best && !(i == second && final_cost(t, best, second, 1) > 0) &&
          t->c[i].min > AUTO_DROP * t->c[best].score) {
        alive[i] = 0;
        t->c[i].nrounds = scored;
      }
    best = leaders(t, alive, scored, &second);
  }
  t->scored = scored;
  /* The final: AUTO_FINAL_SWAPS per round, fewer if that is what the budget has left, but
   * never fewer than AUTO_FINAL_MIN: like the first three scored rounds it is part of the
   * minimum work, run past the budget if need be (with many candidates, three rounds of
   * each can spend it all), since without it short rounds decide alone. */
  if (final_cost(t, best, second, 1) > 0) {
    int fs = AUTO_FINAL_SWAPS, least = 2 * swaps > AUTO_FINAL_MIN ? 2 * swaps : AUTO_FINAL_MIN;
    double left = t->budget - hs__auto_elapsed(p, t);
    while (t->budget > 0 && fs > least && final_cost(t, best, second, fs) > left) fs--;
    best = final_round(p, t, best, second, fs);
  }
  for (int i = 0; i < t->n; i++) {
    auto_cand *c = &t->c[i];
    if (!c->plan) continue;
    if (!c->nrounds) c->nrounds = c->dropped > 0 ? 0 : scored;
    if (c->nrounds == 0) continue;
    c->score = c->med = median_of(c->t, c->nrounds, &c->min, &c->max);
  }
  return best;
}
