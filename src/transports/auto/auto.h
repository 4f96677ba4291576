/* auto's own types, shared by src/transports/auto/auto.c (options, candidates, setup, ops,
 * report) and src/transports/auto/trial.c (the timed trial). Private to auto. */
#ifndef HS_AUTO_H
#define HS_AUTO_H

#include "hs_meta.h"

#define AUTO_MAX_CAND 24
#define AUTO_MAX_ROUNDS 64
#define AUTO_FINAL_ROUNDS 3 /* the final among the closest (trial.c): rounds of */
#define AUTO_FINAL_SWAPS 10 /* swaps each, run only after scored rounds shorter than that */

typedef struct {
  char candidates[HS_OPT_VAL_LEN];
  int rounds, swaps, verbose, check, budget;
} auto_config;

typedef struct {
  char spec[HS_OPT_VAL_LEN];
  hs_plan plan;      /* NULL once skipped or dropped */
  char reason[320];  /* why it was not considered */
  double score;      /* us per swap: the median of the rounds (the choice) */
  double med, min, max; /* us per swap over rounds (max over ranks of the mean) */
  double t[AUTO_MAX_ROUNDS];
  int nrounds;       /* scored rounds it ran (fewer when dropped as clearly slower) */
  double dropped;    /* > 0: dropped in warm-up, us per swap of that round */
  double fin;        /* > 0: us per swap in the final (the median of its rounds) */
} auto_cand;

typedef struct {
  int n, chosen, rounds, swaps;
  int scored;               /* scored rounds run (budget, re-measuring) */
  int remeasured;           /* the rounds disagreed: the candidates left ran `rounds` more */
  double create_s, trial_s; /* seconds spent creating and checking candidate plans, and timing them */
  double all_s;             /* seconds from setup's start to the choice (what the budget bounds) */
  double t0;                /* hs__wtime() when setup began (the budget counts from it) */
  double budget;            /* seconds; 0: none */
  auto_cand c[AUTO_MAX_CAND];
} auto_t;

/* Seconds since setup began, the slowest rank's: the same on every rank. */
double hs__auto_elapsed(hs_plan p, const auto_t *t);
/* Time the candidates left (docs/benchmarks.md, "auto"); returns the chosen one's index, the
 * same on every rank (-1: none). */
int hs__auto_trial(hs_plan p, auto_t *t);

#endif
