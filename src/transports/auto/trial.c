/* auto's trial: the candidates' plans timed interleaved on the real fields, the clearly
 * slower dropped early, the fastest agreed across ranks (src/transports/auto/auto.c makes and
 * checks the candidates, then calls hs__auto_trial). */
#include "auto.h"

#include <stdio.h>
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
 * 3. Before them, from the last warm-up round: fewer swaps per round (2 at the least), then
 *    fewer candidates from the end of the list (not its first AUTO_KEEP_FIRST nor the
 *    warm-up's fastest), until three scored rounds and the final fit in what is left of the
 *    budget (fit_budget).
 *    Scored rounds, interleaved with the order rotated, so that a burst of load falls on
 *    neighbours in time alike; per round the slowest rank's mean. From the third on, a
 *    candidate whose fastest round is over AUTO_DROP x the leader's median round (the lowest
 *    median) stops: even its least disturbed round loses.
 * 4. After `rounds` scored rounds the leader must have beaten the runner-up (the next median)
 *    in AUTO_AGREE of the rounds, paired round by round; if not, the rounds disagree and the
 *    candidates left run `rounds` more, once. Scored rounds stop when the budget (counted from
 *    the start of setup) is spent, three at least.
 * 5. A final, when the scored rounds were shorter than AUTO_FINAL_SWAPS (a slow swap or a
 *    tight budget) and others are within AUTO_FINAL_CLOSE of the leader's median: the
 *    fastest AUTO_FINAL_MAX of those (step 3 keeps them) run AUTO_FINAL_ROUNDS rounds of
 *    AUTO_FINAL_SWAPS swaps each, the order rotated. Short rounds right after a barrier can
 *    invert a steady-state order (MPICH, two busy loops: in rounds of 2 swaps `cma` and
 *    `p2p` look 1.5-2x faster than they run, `shm` 1.7x slower). Step 3 and the scored
 *    rounds leave its time in the budget; it never shortens (a final of 5-6 swaps chose
 *    `cma` at 1.5x `shm`, quiet), nor leaves out any of the three (the third has been the
 *    fastest), so where the estimates fall short it runs past the budget.
 * The choice: the lowest median over the scored rounds, or the final's winner (its median). */
#define AUTO_WARM 4
#define AUTO_HOPELESS_FIRST 20.0
#define AUTO_HOPELESS 8.0
#define AUTO_DROP 1.5
#define AUTO_AGREE (2.0 / 3.0)
#define AUTO_FINAL_CLOSE 2.0
#define AUTO_KEEP_FIRST 2
/* A warm-up round's time is a guess: under load, fitted to no margin, the final ran 0.14 s over. */
#define AUTO_FIT_MARGIN 1.25
#define AUTO_FINAL_MAX 3

static int in_set(const int *set, int n, int i) {
  for (int k = 0; k < n; k++)
    if (set[k] == i) return 1;
  return 0;
}

/* The final's candidates (step 5), fastest first: up to AUTO_FINAL_MAX alive ones within
 * AUTO_FINAL_CLOSE of the leader's median; none (0) when the rounds were long enough or only
 * the leader is that close. */
static int final_set(const auto_t *t, const int *alive, int best, int *set) {
  if (t->swaps >= AUTO_FINAL_SWAPS || best < 0) return 0;
  int close[AUTO_MAX_CAND], n = 0;
  for (int i = 0; i < t->n; i++) {
    if (!alive[i] || t->c[i].score > AUTO_FINAL_CLOSE * t->c[best].score) continue;
    int k = n++;
    for (; k > 0 && t->c[close[k - 1]].score > t->c[i].score; k--) close[k] = close[k - 1];
    close[k] = i;
  }
  if (n > AUTO_FINAL_MAX) n = AUTO_FINAL_MAX;
  memcpy(set, close, (size_t)n * sizeof *set);
  return n > 1 ? n : 0;
}

/* Seconds the final would take, from its candidates' medians (us per swap). */
static double final_cost(const auto_t *t, const int *alive, int best) {
  int set[AUTO_FINAL_MAX], n = final_set(t, alive, best, set);
  double s = 0;
  for (int k = 0; k < n; k++) s += t->c[set[k]].score;
  return AUTO_FINAL_ROUNDS * AUTO_FINAL_SWAPS * s * 1e-6;
}

/* Seconds the scored rounds' minimum (three of `swaps` swaps) and, when those are short, the
 * final would take, from est[] (seconds per swap): the final counted as if among the fastest
 * AUTO_FINAL_MAX. */
static double minimum_cost(const auto_t *t, const int *alive, const double *est, int swaps) {
  double v[AUTO_MAX_CAND], sum = 0, fin = 0;
  int n = 0;
  for (int i = 0; i < t->n; i++)
    if (alive[i]) sum += v[n++] = est[i];
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  for (int k = 0; k < n && k < AUTO_FINAL_MAX && n > 1; k++) fin += v[k];
  double final = swaps < AUTO_FINAL_SWAPS ? AUTO_FINAL_ROUNDS * AUTO_FINAL_SWAPS * fin : 0;
  return 3 * swaps * sum + final;
}

/* Before the scored rounds (step 3), from the last warm-up round (est[], seconds per swap):
 * fewer swaps per round, then fewer candidates, until the scored rounds' minimum and the
 * final fit in what is left of the budget, with AUTO_FIT_MARGIN to spare. Candidates leave
 * from the end of the list (the order of merit); the list's first AUTO_KEEP_FIRST and the
 * warm-up's fastest stay: under load a short round's order is the least trusted thing there
 * is (MPICH beside busy loops: `cma` fastest in the warm-up, `shm` in fact). */
static void fit_budget(auto_t *t, int *alive, const double *est, double left, int *swaps) {
  left /= AUTO_FIT_MARGIN;
  while (*swaps > 2 && minimum_cost(t, alive, est, *swaps) > left) (*swaps)--;
  int fastest = -1, nalive = 0;
  for (int i = 0; i < t->n; i++)
    if (alive[i]) {
      nalive++;
      if (fastest < 0 || est[i] < est[fastest]) fastest = i;
    }
  int out[AUTO_MAX_CAND] = {0};
  for (int i = t->n - 1; i >= 0 && nalive > 2 && minimum_cost(t, alive, est, *swaps) > left; i--) {
    if (!alive[i] || i == fastest || i < AUTO_KEEP_FIRST) continue;
    alive[i] = 0;
    out[i] = 1;
    nalive--;
  }
  for (int i = 0; i < t->n; i++) {
    if (!out[i]) continue;
    t->c[i].dropped = est[i] * 1e6;
    snprintf(t->c[i].reason, sizeof t->c[i].reason,
             "not timed past the warm-up (%.1f us/swap): the budget left room for the "
             "rounds of %d candidates", est[i] * 1e6, nalive);
  }
}

/* The final (step 5): rounds of AUTO_FINAL_SWAPS swaps of each of set[0..n), the order
 * rotated; returns the one with the lowest median, each one's median in its `fin`. */
static int final_round(hs_plan p, auto_t *t, const int *set, int n) {
  double local[AUTO_FINAL_ROUNDS * AUTO_FINAL_MAX], global[AUTO_FINAL_ROUNDS * AUTO_FINAL_MAX];
  for (int r = 0; r < AUTO_FINAL_ROUNDS; r++)
    for (int k = 0; k < n; k++) {
      int c = (k + r) % n;
      local[r * n + c] = run_round(p, &t->c[set[c]], AUTO_FINAL_SWAPS);
    }
  MPI_Allreduce(local, global, AUTO_FINAL_ROUNDS * n, MPI_DOUBLE, MPI_MAX, p->comm);
  int won = set[0];
  for (int c = 0; c < n; c++) {
    double v[AUTO_FINAL_ROUNDS];
    for (int r = 0; r < AUTO_FINAL_ROUNDS; r++) v[r] = global[r * n + c] * 1e6;
    t->c[set[c]].fin = median_of(v, AUTO_FINAL_ROUNDS, NULL, NULL);
    if (t->c[set[c]].fin < t->c[won].fin) won = set[c];
  }
  return won;
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
  int swaps = t->swaps, fixed = swaps != 0; /* swaps given: the budget does not change them */
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
  double local[AUTO_MAX_CAND + 1], global[AUTO_MAX_CAND + 1], est[AUTO_MAX_CAND] = {0};
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
    if (scored >= 3 && t->budget > 0 && spent + final_cost(t, alive, best) > t->budget) break;
    if (r == warm && t->budget > 0 && !fixed) {
      fit_budget(t, alive, est, t->budget - spent, &swaps);
      t->swaps = swaps;
    }
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
      for (int i = 0; i < t->n; i++) est[i] = global[i];
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
    int keep[AUTO_FINAL_MAX], nkeep = final_set(t, alive, best, keep);
    for (int i = 0; i < t->n; i++)
      if (alive[i] && i != best && !in_set(keep, nkeep, i) &&
          t->c[i].min > AUTO_DROP * t->c[best].score) {
        alive[i] = 0;
        t->c[i].nrounds = scored;
      }
    best = leaders(t, alive, scored, &second);
  }
  t->scored = scored;
  /* The final: like the first three scored rounds it is part of the minimum work, run past
   * the budget if need be (with many candidates, three rounds of each can spend it all):
   * without it short rounds decide alone. */
  int set[AUTO_FINAL_MAX], nfinal = final_set(t, alive, best, set);
  if (nfinal) best = final_round(p, t, set, nfinal);
  for (int i = 0; i < t->n; i++) {
    auto_cand *c = &t->c[i];
    if (!c->plan) continue;
    if (!c->nrounds) c->nrounds = c->dropped > 0 ? 0 : scored;
    if (c->nrounds == 0) continue;
    c->score = c->med = median_of(c->t, c->nrounds, &c->min, &c->max);
  }
  return best;
}
