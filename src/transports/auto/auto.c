/* Transport "auto": measured transport selection. At plan creation it builds a plan for every
 * usable candidate transport on the same decomposition and fields, checks each against the
 * core's analytic halo check (every halo cell must hold the value computed from the global
 * coordinates of the cell it mirrors), warms every candidate up past its own start-up (p2p's
 * internal trial, datatype builds, first touch), times them interleaved on the real fields in
 * rounds of back-to-back swaps, dropping the clearly slower ones early (see trial()), agrees
 * on the fastest across ranks (per round the slowest rank's mean time per swap; the score is
 * the median of the rounds, re-measured once when the rounds disagree) and from then on hands
 * every swap to that plan. The
 * caller's fields are saved before the trial and restored after it, so plan creation leaves
 * no trace in them.
 *
 * Options (auto_options below): candidates=a+b:k=v,k=v+c (default: every registered
 * transport but auto in order of likely merit, p2p's two modes apart, and p2p, shm and cma
 * staged where the plan has edges; a candidate may carry any number of options; bracket the
 * whole list when it holds commas: candidates=[p2p:dtype=0,persistent=1+shm]), rounds, swaps,
 * budget (milliseconds for the whole choice), verbose (also HALOSWAP_VERBOSE=1). */
#include "hs_meta.h"
#include "hs_pack.h"
#include "hs_transport.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_MAX_CAND 24
#define AUTO_MAX_ROUNDS 64

typedef struct {
  char candidates[HS_OPT_VAL_LEN];
  int rounds, swaps, verbose, check, budget;
} auto_config;

enum { CHECK_AUTO = 0, CHECK_ANALYTIC = 1, CHECK_SWAP = 2 };
static const char *const check_vals[] = {"auto", "analytic", "swap", NULL};

static const hs_option_spec auto_options[] = {
    HS_OPTION_STRING("candidates", "", auto_config, candidates,
     "transports to try, '+'-separated, each with its own options (empty: every other one, "
     "p2p as dtype=1 and dtype=0, and p2p, shm, cma with staged=1 where the plan has edges or "
     "corners)"),
    HS_OPTION_INT("budget", "1500", 0, 3600000, auto_config, budget,
     "milliseconds the choice may take (0: no bound): candidates are made and checked in "
     "order of likely merit until half of it is spent (two at least), scored rounds stop once "
     "all of it is (three at least)"),
    HS_OPTION_INT("rounds", "7", 1, AUTO_MAX_ROUNDS, auto_config, rounds,
     "scored rounds per candidate (from the 3rd, one whose fastest round is over 1.5x the "
     "best median stops; as many again when the rounds disagree)"),
    HS_OPTION_INT("swaps", "0", 0, 10000, auto_config, swaps,
     "swaps per round (0: about 10 ms of the fastest candidate, 4 to 50, down to 2 to fit the "
     "budget)"),
    HS_OPTION_BOOL("verbose", "0", auto_config, verbose,
     "print the choice and every candidate's timings on rank 0"),
    HS_OPTION_CHOICE("check", "auto", check_vals, auto_config, check,
     "validate candidates by the analytic halo check, or only that the swap succeeds (auto: "
     "analytic unless a field has pack/unpack hooks, whose data may be opaque)"),
    HS_OPTIONS_END};

typedef struct {
  char spec[HS_OPT_VAL_LEN];
  hs_plan plan;      /* NULL once skipped or dropped */
  char reason[320];  /* why it was not considered */
  double score;      /* us per swap: the median of the rounds (the choice) */
  double med, min, max; /* us per swap over rounds (max over ranks of the mean) */
  double t[AUTO_MAX_ROUNDS];
  int nrounds;       /* scored rounds it ran (fewer when dropped as clearly slower) */
  double dropped;    /* > 0: dropped in warm-up, us per swap of that round */
} auto_cand;

typedef struct {
  int n, chosen, rounds, swaps;
  int scored;               /* scored rounds run (budget, re-measuring) */
  int remeasured;           /* the rounds disagreed: the candidates left ran `rounds` more */
  double create_s, trial_s; /* seconds spent creating and checking candidate plans, and timing them */
  double t0;                /* hs__wtime() when setup began (the budget counts from it) */
  double budget;            /* seconds; 0: none */
  auto_cand c[AUTO_MAX_CAND];
} auto_t;

#define CAND_SEPS "+;" /* between candidates (commas separate options) */

/* The staged exchange (core option staged=1) of these, where the plan has edges or corners
 * to carry (docs/design.md, "Staged exchange"). */
static const char *const staged_candidates[] = {"p2p", "shm", "cma"};

/* The default list in order of likely merit (what won on one node and between nodes in
 * docs/benchmarks.md), so that a budget spent early cuts the unlikely ones. p2p's two ways
 * of moving bytes are separate candidates: its own choice between them takes 18 swaps, which
 * auto would otherwise have to wait for in every warm-up. */
static const char *const preferred[] = {"p2p:dtype=1", "shm", "cma", "p2p:dtype=0", "nbr",
                                        "rma-passive", "rma-fence", "rma-pscw", "shmem"};

static void add_default(hs_plan p, auto_t *t, const char *spec) {
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
  if (t->n == AUTO_MAX_CAND || !strcmp(name, p->transport_name)) return;
  if (!hs__transport_find(name)) return; /* an unbuilt one only when asked for */
  /* Hooks are always packed: p2p's modes would be the same plan twice. */
  if (p->has_callbacks && !strcmp(name, "p2p")) spec = "p2p";
  for (int i = 0; i < t->n; i++)
    if (!strcmp(t->c[i].spec, spec)) return;
  snprintf(t->c[t->n++].spec, sizeof t->c[0].spec, "%s", spec);
}

static int parse_candidates(hs_plan p, auto_t *t, const char *list) {
  if (!*list) {
    for (size_t i = 0; i < sizeof preferred / sizeof *preferred; i++)
      add_default(p, t, preferred[i]);
    for (int i = 0; i < hs_transport_count(); i++) {
      const char *nm = hs_transport_name(i);
      int listed = 0;
      for (size_t k = 0; k < sizeof preferred / sizeof *preferred; k++)
        listed |= !strncmp(preferred[k], nm, strlen(nm)) &&
                  (preferred[k][strlen(nm)] == 0 || preferred[k][strlen(nm)] == ':');
      if (!listed) add_default(p, t, nm); /* a transport added later: after the known ones */
    }
    /* Not with hooks: they may accept only the direct boxes (the MONC drop-in's do); a sweep
     * is staged already; a region set's plan cannot be staged. */
    bool edges = hs__staged_useful(p) && !p->has_callbacks && !hs__plan_sweeps(p) &&
                 !hs__plan_has_regions(p);
    for (size_t i = 0; edges && i < sizeof staged_candidates / sizeof *staged_candidates; i++)
      if (hs__transport_find(staged_candidates[i]) && t->n < AUTO_MAX_CAND)
        snprintf(t->c[t->n++].spec, sizeof t->c[0].spec, "%s:staged=1", staged_candidates[i]);
    return HS_OK;
  }
  for (const char *s = list; *s;) {
    while (*s && strchr(CAND_SEPS " ", *s)) s++;
    if (!*s) break;
    size_t n = hs__list_item(s, CAND_SEPS);
    if (t->n == AUTO_MAX_CAND)
      return hs__error(HS_ERR_ARG, "auto: candidates = '%s': more than %d entries", list,
                       AUTO_MAX_CAND);
    char *spec = t->c[t->n].spec;
    snprintf(spec, sizeof t->c[0].spec, "%.*s", (int)n, s);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
    if (!strcmp(name, p->transport_name))
      return hs__error(HS_ERR_ARG, "auto: candidates = '%s' names auto itself", list);
    /* A known transport this build leaves out is skipped like an unusable one (with the
     * reason, create_candidate); only a name no build knows is a mistake. */
    if (!hs__transport_find(name) && !hs__transport_unbuilt(name)) {
      char built[512];
      hs__transport_list(built, sizeof built);
      return hs__error(HS_ERR_ARG,
                       "auto: candidates = '%s': unknown transport '%s' (built: %s; separate "
                       "candidates with '+')",
                       list, name, built);
    }
    for (int i = 0; i < t->n; i++)
      if (!strcmp(t->c[i].spec, spec))
        return hs__error(HS_ERR_ARG, "auto: candidates = '%s' lists '%s' twice", list, spec);
    t->n++;
    s += n;
  }
  if (t->n == 0)
    return hs__error(HS_ERR_ARG, "auto: candidates = '%s' names no transport", list);
  return HS_OK;
}

static void create_candidate(hs_plan p, auto_cand *c) {
  char name[64], why[256] = "";
  snprintf(name, sizeof name, "%.*s", (int)strcspn(c->spec, ":"), c->spec);
  if (hs_transport_available(p->comm, name, why, sizeof why) != HS_OK) {
    snprintf(c->reason, sizeof c->reason, "unavailable: %s", why[0] ? why : hs_error_message());
    return;
  }
  /* the plan's geometry and combine order, whatever moves the data */
  if (hs__plan_nest(p, c->spec, NULL, &c->plan) != HS_OK) {
    c->plan = NULL;
    snprintf(c->reason, sizeof c->reason, "plan creation failed: %s", hs_error_message());
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void print_report(hs_plan p, FILE *out);
static const hs_transport_ops auto_sweep_ops;

/* The halo sections a swap writes, through the fields (or their hooks), in plan order: what
 * auto saves and puts back when it cannot use the analytic check. */
static size_t halo_io(hs_plan p, char *buf, int save) {
  size_t n = 0;
  for (int k = 0; k <= p->npeers; k++) {
    int ns = k < p->npeers ? p->peers[k].nrecv : p->nself;
    for (int i = 0; i < ns; i++) {
      const hs_section *s = k < p->npeers ? &p->peers[k].recv[i] : &p->self[i].dst;
      char *field = p->fields[s->box.field].data;
      if (buf && save) hs__pack_section(p, s, field, buf + n);
      else if (buf) hs__unpack_section(p, s, field, buf + n);
      n += s->bytes;
    }
  }
  return n;
}

/* One swap of candidate c from the analytic pattern (o NULL: from the caller's data); a
 * candidate that fails on any rank, or leaves any halo cell wrong on any rank, is dropped
 * everywhere. *dirty: the fields need the whole pattern again before the next check (a failed
 * candidate may have written anywhere); 0 once set up for it. */
static void validate(hs_plan p, auto_cand *c, hs_selfcheck *o, int *dirty) {
  if (o) hs__selfcheck_reset(p, o, *dirty);
  *dirty = 0;
  int lrc = hs_swap(c->plan, NULL);
  if (lrc == HS_OK && o) lrc = hs__selfcheck_compare(p, o);
  lrc = hs__agree(p->comm, lrc);
  if (lrc != HS_OK) {
    *dirty = 1;
    snprintf(c->reason, sizeof c->reason, "failed the halo check: %s", hs_error_message());
    hs_plan_free(&c->plan);
  }
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
static double elapsed(hs_plan p, const auto_t *t) {
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
 * The choice: the lowest median over the scored rounds. */
#define AUTO_WARM 4
#define AUTO_HOPELESS_FIRST 20.0
#define AUTO_HOPELESS 8.0
#define AUTO_DROP 1.5
#define AUTO_AGREE (2.0 / 3.0)

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

static int trial(hs_plan p, auto_t *t) {
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
    double left = t->budget - elapsed(p, t);
    while (t->budget > 0 && swaps > 2 &&
           ((AUTO_WARM + swaps - 1) / swaps + 3) * swaps * sum > left)
      swaps--;
  }
  t->swaps = swaps;
  int warm = (AUTO_WARM + swaps - 1) / swaps;
  /* One more entry: seconds since setup began (the slowest rank's, the same everywhere). */
  double local[AUTO_MAX_CAND + 1], global[AUTO_MAX_CAND + 1];
  int scored = 0, planned = t->rounds, best = -1, second = -1;
  double spent = elapsed(p, t);
  for (int r = 0;; r++) {
    if (scored >= planned) {
      if (t->remeasured || !disagree(t, best, second, scored) ||
          scored + t->rounds > AUTO_MAX_ROUNDS || (t->budget > 0 && spent > t->budget))
        break;
      t->remeasured = 1; /* once: `rounds` more of the candidates left */
      planned += t->rounds;
    }
    if (scored >= 3 && t->budget > 0 && spent > t->budget) break;
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
      if (alive[i] && i != best && t->c[i].min > AUTO_DROP * t->c[best].score) {
        alive[i] = 0;
        t->c[i].nrounds = scored;
      }
    best = leaders(t, alive, scored, &second);
  }
  t->scored = scored;
  for (int i = 0; i < t->n; i++) {
    auto_cand *c = &t->c[i];
    if (!c->plan) continue;
    if (!c->nrounds) c->nrounds = c->dropped > 0 ? 0 : scored;
    if (c->nrounds == 0) continue;
    c->score = c->med = median_of(c->t, c->nrounds, &c->min, &c->max);
  }
  return best;
}

static int auto_setup(hs_plan p) {
  const auto_config *cfg = p->config;
  auto_t *t = hs__impl_new(p, sizeof *t);
  if (!t) return HS_ERR_NOMEM;
  t->chosen = -1;
  t->rounds = cfg->rounds;
  t->swaps = cfg->swaps;
  t->t0 = hs__wtime();
  t->budget = cfg->budget * 1e-3;
  int verbose = cfg->verbose;
  const char *env = getenv("HALOSWAP_VERBOSE");
  if (!hs__option_given(p, "verbose") && env && *env && strcmp(env, "0") != 0) verbose = 1;
  /* Options are equal on every rank (the core checks), so a bad list fails everywhere
   * before any collective call. */
  int rc = parse_candidates(p, t, cfg->candidates);
  if (rc != HS_OK) return rc;
  hs_selfcheck *o = NULL;
  char *saved = NULL;
  int analytic = cfg->check == CHECK_ANALYTIC || (cfg->check == CHECK_AUTO && !p->has_callbacks);
  if (analytic) rc = hs__selfcheck_begin(p, &o);
  if (rc == HS_OK && !analytic) {
    size_t hb = halo_io(p, NULL, 1);
    saved = malloc(hb ? hb : 1);
    if (saved) halo_io(p, saved, 1);
    else rc = hs__error(HS_ERR_NOMEM, "auto: out of memory saving %zu halo bytes", hb);
  }
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) goto out;
  double t_create = hs__wtime();
  /* In order of merit, each made and checked; past half the budget no more are made (two
   * valid ones at least). */
  int valid = 0, dirty = 0; /* hs__selfcheck_begin filled the fields */
  for (int i = 0; i < t->n; i++) {
    if (t->budget > 0 && valid >= 2 && elapsed(p, t) > 0.5 * t->budget) {
      snprintf(t->c[i].reason, sizeof t->c[i].reason,
               "not tried: half of auto's budget of %d ms went on the candidates before it",
               cfg->budget);
      continue;
    }
    create_candidate(p, &t->c[i]);
    if (t->c[i].plan) validate(p, &t->c[i], o, &dirty);
    valid += t->c[i].plan != NULL;
  }
  double t_trial = hs__wtime();
  t->create_s = t_trial - t_create;
  int best = trial(p, t);
  /* The data are identical everywhere after the reduction; rank 0's choice is final. */
  MPI_Bcast(&best, 1, MPI_INT, 0, p->comm);
  if (best < 0) {
    char list[1024] = "";
    for (int i = 0; i < t->n; i++) {
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s%s: %s", i ? "; " : "", t->c[i].spec,
               t->c[i].reason);
    }
    rc = hs__error(HS_ERR_UNAVAILABLE, "auto: no candidate transport is usable (%s)", list);
    goto out;
  }
  t->chosen = best;
  t->trial_s = hs__wtime() - t_trial;
  for (int i = 0; i < t->n; i++)
    if (i != best && t->c[i].plan) hs_plan_free(&t->c[i].plan);
  hs_plan_reset_stats(t->c[best].plan);
  if (verbose && p->rank == 0) print_report(p, stdout);
  if (hs__plan_sweeps(p)) p->ops = &auto_sweep_ops; /* the chosen plan sweeps */
  rc = HS_OK;
out:
  hs__selfcheck_end(p, o); /* the caller's data back */
  if (saved) halo_io(p, saved, 0);
  free(saved);
  return rc;
}

static int auto_start(hs_plan p, void *const *arrays) {
  auto_t *t = p->impl;
  return hs_swap_start(t->c[t->chosen].plan, arrays);
}

static int auto_complete(hs_plan p, void *const *arrays) {
  auto_t *t = p->impl;
  return hs_swap_complete(t->c[t->chosen].plan, arrays);
}

/* The chosen plan's test (its statistics count it too, as they count its start and
 * complete). */
static int auto_test(hs_plan p, void *const *arrays, int *done) {
  auto_t *t = p->impl;
  return hs_swap_test(t->c[t->chosen].plan, arrays, done);
}

static void auto_destroy(hs_plan p) {
  auto_t *t = p->impl;
  if (!t) return;
  for (int i = 0; i < t->n; i++)
    if (t->c[i].plan) hs_plan_free(&t->c[i].plan);
  hs__free(p, t);
  p->impl = NULL;
}

static int auto_inner(hs_plan p, hs_plan *plans, int max) {
  auto_t *t = p->impl;
  if (!t || t->chosen < 0 || max < 1) return 0;
  plans[0] = t->c[t->chosen].plan;
  return 1;
}

/* A failed round runs in the chosen plan, with p's failure; the reverse's only where the
 * chosen plan runs it (a sweep; otherwise the core's reverse runs on p's own geometry). */
static bool auto_fail_inner(hs_plan p, int reverse) {
  hs_plan d;
  if ((reverse && p->ops != &auto_sweep_ops) || !auto_inner(p, &d, 1)) return false;
  hs__fail_adopt(d, p);
  if (reverse) return hs_reverse_start(d, HS_OP_SUM, NULL), true;
  d->fail_given = p->fail_given;
  hs_swap_start(d, NULL);
  return true;
}

/* A sweep's reverse: the chosen plan's, which sweeps. */
static int auto_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  auto_t *t = p->impl;
  return hs_reverse_start(t->c[t->chosen].plan, op, arrays);
}

static int auto_reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  auto_t *t = p->impl;
  (void)op;
  return hs_reverse_complete(t->c[t->chosen].plan, arrays);
}

static void auto_describe(hs_plan p, char *buf, size_t len) {
  auto_t *t = p->impl;
  size_t n = 0;
  if (!t || t->chosen < 0) {
    hs__appendf(buf, len, &n, "; auto: no choice made");
    return;
  }
  if (t->rounds == 0)
    hs__appendf(buf, len, &n, "; auto chose %s (the only usable candidate, not timed:",
                t->c[t->chosen].spec);
  else
    hs__appendf(buf, len, &n,
                "; auto chose %s (us per swap, median [min-max] of %d rounds x %d swaps%s:",
                t->c[t->chosen].spec, t->scored, t->swaps,
                t->remeasured ? ", re-measured: the first rounds disagreed" : "");
  for (int i = 0; i < t->n; i++) {
    const auto_cand *c = &t->c[i];
    if (c->reason[0])
      hs__appendf(buf, len, &n, "%s %s skipped: %s", i ? ";" : "", c->spec, c->reason);
    else if (c->dropped > 0)
      hs__appendf(buf, len, &n, "%s %s dropped before scoring at %.1f", i ? ";" : "", c->spec,
                  c->dropped);
    else if (t->rounds == 0)
      hs__appendf(buf, len, &n, "%s %s checked", i ? ";" : "", c->spec);
    else
      hs__appendf(buf, len, &n, "%s %s %.1f [%.1f-%.1f] (%d rounds)", i ? ";" : "", c->spec,
                  c->med, c->min, c->max, c->nrounds);
  }
  hs__appendf(buf, len, &n, ")");
}

static void print_report(hs_plan p, FILE *out) {
  auto_t *t = p->impl;
  fprintf(out, "haloswap auto: %d ranks, %d fields: chose %s (%d rounds x %d swaps%s; per "
               "round the slowest rank's mean; score = the median of the rounds; plans "
               "%.3f s (made and checked), trial %.3f s, budget %.3f s)\n",
          p->size, p->nfields, t->c[t->chosen].spec, t->scored, t->swaps,
          t->remeasured ? ", re-measured: the first rounds disagreed" : "", t->create_s,
          t->trial_s, t->budget);
  for (int i = 0; i < t->n; i++) {
    const auto_cand *c = &t->c[i];
    if (c->reason[0])
      fprintf(out, "  %-22s skipped: %s\n", c->spec, c->reason);
    else if (c->dropped > 0)
      fprintf(out, "  %-22s dropped before the scored rounds: %.1f us/swap (hopeless)\n",
              c->spec, c->dropped);
    else if (t->rounds == 0)
      fprintf(out, "  %-22s the only usable candidate: checked, not timed  <- chosen\n",
              c->spec);
    else
      fprintf(out, "  %-22s median %10.1f us/swap [%.1f - %.1f] over %d rounds%s\n",
              c->spec, c->med, c->min, c->max, c->nrounds,
              i == t->chosen ? "  <- chosen" : "");
  }
  fflush(out);
}

#define AUTO_SUMMARY "measures every usable transport on the plan at creation and uses the fastest"
#define AUTO_OPS .inner = auto_inner, .fail_inner = auto_fail_inner, .describe = auto_describe, \
                 .test = auto_test
HS_DEFINE_TRANSPORT(hs__transport_auto, auto, "auto", HS_TRANSPORT_AUTO, HS_OPS_DELEGATES,
                    AUTO_SUMMARY, auto_options, auto_config, AUTO_OPS);
/* With HS_ORDER_SWEEP the reverse is the chosen plan's as well (setup switches to this). */
static HS_DEFINE_TRANSPORT(auto_sweep_ops, auto, "auto", HS_TRANSPORT_AUTO, HS_OPS_DELEGATES,
                           AUTO_SUMMARY, auto_options, auto_config, AUTO_OPS,
                           .reverse_start = auto_reverse_start,
                           .reverse_complete = auto_reverse_complete);
