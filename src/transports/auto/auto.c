/* Transport "auto": measured transport selection. At plan creation it builds a plan for every
 * usable candidate transport on the same decomposition and fields, checks each against the
 * core's analytic halo check (every halo cell must hold the value computed from the global
 * coordinates of the cell it mirrors), warms every candidate up past its own start-up (p2p's
 * internal trial, datatype builds, first touch), times them interleaved on the real fields in
 * rounds of back-to-back swaps, dropping the clearly slower ones early (trial.c), agrees
 * on the fastest across ranks (per round the slowest rank's mean time per swap; the score is
 * the median of the rounds, re-measured once when the rounds disagree) and from then on hands
 * every swap to that plan. The
 * caller's fields are saved before the trial and restored after it, so plan creation leaves
 * no trace in them.
 *
 * Options (auto_options below): candidates=a+b:k=v,k=v+c (default: every registered
 * transport but auto in order of likely merit, p2p's two modes apart, and p2p, shm and cma
 * staged where the plan has edges, p2p and shm also field by field (stage_fields=1) where it
 * has two fields or more; a candidate may carry any number of options; bracket the
 * whole list when it holds commas: candidates=[p2p:dtype=0,persistent=1+shm]), rounds, swaps,
 * budget (milliseconds for the whole choice), verbose (also HALOSWAP_VERBOSE=1). */
#include "auto.h"
#include "hs_pack.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHECK_AUTO = 0, CHECK_ANALYTIC = 1, CHECK_SWAP = 2 };
static const char *const check_vals[] = {"auto", "analytic", "swap", NULL};

static const hs_option_spec auto_options[] = {
    HS_OPTION_STRING("candidates", "", auto_config, candidates,
     "transports to try, '+'-separated, each with its own options (empty: every other one, "
     "p2p as dtype=1 and dtype=0, and p2p, shm, cma with staged=1 where the plan has edges or "
     "corners, p2p and shm also with stage_fields=1 where it has two fields or more)"),
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

#define CAND_SEPS "+;" /* between candidates (commas separate options) */

/* The staged exchange (core option staged=1), where the plan has edges or corners to carry
 * (docs/design.md, "Staged exchange"); with two fields or more also a field at a time
 * (stage_fields=1), as GHEX's cartex goes. */
static const struct {
  const char *spec;
  int min_fields;
} staged_candidates[] = {{"p2p:staged=1", 1}, {"shm:staged=1", 1}, {"cma:staged=1", 1},
                         {"p2p:staged=1,stage_fields=1", 2}, {"shm:staged=1,stage_fields=1", 2}};

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
      if (p->nfields >= staged_candidates[i].min_fields)
        add_default(p, t, staged_candidates[i].spec);
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
    if (t->budget > 0 && valid >= 2 && hs__auto_elapsed(p, t) > 0.5 * t->budget) {
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
  int best = hs__auto_trial(p, t);
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
  t->all_s = hs__wtime() - t->t0;
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

/* auto's report, formatted once: the choice and every candidate's fate, as one clause of
 * hs_plan_describe's line (table = 0) or as the table rank 0 prints with verbose=1. */
static void report(hs_plan p, const auto_t *t, int table, char *buf, size_t len) {
  size_t n = 0;
  const char *again = t->remeasured ? ", re-measured: the first rounds disagreed" : "";
  if (table)
    hs__appendf(buf, len, &n, "haloswap auto: %d ranks, %d fields: chose %s (%d rounds x %d "
                "swaps%s; per round the slowest rank's mean; score = the median of the rounds; "
                "plans %.3f s (made and checked), trial %.3f s, %.3f s since setup began, budget "
                "%.3f s)\n", p->size, p->nfields, t->c[t->chosen].spec, t->scored, t->swaps,
                again, t->create_s, t->trial_s, t->all_s, t->budget);
  else if (t->rounds == 0)
    hs__appendf(buf, len, &n, "; auto chose %s (the only usable candidate, not timed:",
                t->c[t->chosen].spec);
  else
    hs__appendf(buf, len, &n, "; auto chose %s (us per swap, median [min-max] of %d rounds x %d "
                "swaps%s:", t->c[t->chosen].spec, t->scored, t->swaps, again);
  for (int i = 0; i < t->n; i++) {
    const auto_cand *c = &t->c[i];
    if (table)
      hs__appendf(buf, len, &n, "  %-22s ", c->spec);
    else
      hs__appendf(buf, len, &n, "%s %s ", i ? ";" : "", c->spec);
    if (c->reason[0])
      hs__appendf(buf, len, &n, "skipped: %s", c->reason);
    else if (c->dropped > 0)
      hs__appendf(buf, len, &n, "dropped before the scored rounds at %.1f us/swap", c->dropped);
    else if (t->rounds == 0)
      hs__appendf(buf, len, &n, "checked, not timed");
    else
      hs__appendf(buf, len, &n, "median %.1f [%.1f-%.1f] over %d rounds", c->med, c->min,
                  c->max, c->nrounds);
    if (c->fin > 0)
      hs__appendf(buf, len, &n, ", final %.1f (%d rounds x %d swaps)", c->fin, AUTO_FINAL_ROUNDS,
                  AUTO_FINAL_SWAPS);
    if (table) hs__appendf(buf, len, &n, "%s\n", i == t->chosen ? "  <- chosen" : "");
  }
  if (!table) hs__appendf(buf, len, &n, ")");
}

static void auto_describe(hs_plan p, char *buf, size_t len) {
  auto_t *t = p->impl;
  if (t && t->chosen >= 0)
    report(p, t, 0, buf, len);
  else if (len)
    snprintf(buf, len, "; auto: no choice made");
}

static void print_report(hs_plan p, FILE *out) {
  char buf[(AUTO_MAX_CAND + 2) * 1024];
  report(p, p->impl, 1, buf, sizeof buf);
  fputs(buf, out);
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
