/* Transport "auto": measured transport selection. At plan creation it builds a plan for every
 * usable candidate transport on the same decomposition and fields, checks that each fills the
 * halos with the same bytes as the first, times them interleaved on the real fields, agrees on
 * the fastest across ranks (per round the slowest rank's mean time per swap; the score is the
 * mean of the faster half of the rounds) and from then on hands every swap to that plan. The
 * caller's halo cells are saved before the trial and restored after it, so plan creation
 * leaves no trace in the fields.
 *
 * Options: candidates=a+b+c (default: every registered transport but auto; '+' separates
 * because ',' separates options), rounds=N (default 7, fewer (>= 3) for slow swaps),
 * swaps=N (per round; default: as many as fit about 4 ms, 1..50), verbose=1 (print the
 * choice and the timings on rank 0; also HALOSWAP_VERBOSE=1). */
#include "hs_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_MAX_CAND 24
#define AUTO_MAX_ROUNDS 64

typedef struct {
  char spec[64];
  hs_plan plan;      /* NULL once skipped or dropped */
  char reason[320];  /* why it was not considered */
  double score;      /* us per swap: mean of the faster half of the rounds (the choice) */
  double med, min, max; /* us per swap over rounds (max over ranks of the mean) */
  double t[AUTO_MAX_ROUNDS];
} auto_cand;

typedef struct {
  int n, chosen, rounds, swaps;
  double create_s, trial_s; /* seconds spent creating candidate plans and timing them */
  auto_cand c[AUTO_MAX_CAND];
} auto_t;

static int is_sep(char ch) { return ch == '+' || ch == ';' || ch == ' ' || ch == '/'; }

static int parse_candidates(hs_plan p, auto_t *t, const char *list) {
  if (!list) {
    for (int i = 0; i < hs_transport_count() && t->n < AUTO_MAX_CAND; i++) {
      const char *nm = hs_transport_name(i);
      if (strcmp(nm, p->transport_name) != 0) snprintf(t->c[t->n++].spec, 64, "%s", nm);
    }
    return HS_OK;
  }
  const char *s = list;
  while (*s) {
    while (is_sep(*s)) s++;
    if (!*s) break;
    size_t n = 0;
    while (s[n] && !is_sep(s[n])) n++;
    if (n >= sizeof t->c[0].spec || t->n == AUTO_MAX_CAND)
      return hs__error(HS_ERR_ARG, "auto: candidates = '%s': too many or too long entries", list);
    char spec[64];
    memcpy(spec, s, n);
    spec[n] = 0;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
    if (!strcmp(name, p->transport_name))
      return hs__error(HS_ERR_ARG, "auto: candidates = '%s' names auto itself", list);
    if (!hs__transport_find(name)) {
      char built[512] = "";
      for (int i = 0; i < hs_transport_count(); i++) {
        size_t l = strlen(built);
        snprintf(built + l, sizeof built - l, "%s%s", i ? ", " : "", hs_transport_name(i));
      }
      return hs__error(HS_ERR_ARG,
                       "auto: candidates = '%s': unknown transport '%s' (built: %s; separate "
                       "candidates with '+')",
                       list, name, built);
    }
    for (int i = 0; i < t->n; i++)
      if (!strcmp(t->c[i].spec, spec))
        return hs__error(HS_ERR_ARG, "auto: candidates = '%s' lists '%s' twice", list, spec);
    snprintf(t->c[t->n++].spec, sizeof t->c[0].spec, "%s", spec);
    s += n;
  }
  if (t->n == 0)
    return hs__error(HS_ERR_ARG, "auto: candidates = '%s' names no transport", list);
  return HS_OK;
}

/* Every byte a swap writes on this rank: the receive sections of every peer and the
 * destinations of the self copies, in plan order. */
static size_t halo_bytes(const hs_plan p) {
  size_t n = p->self_bytes;
  for (int k = 0; k < p->npeers; k++) n += p->peers[k].recv_bytes;
  return n;
}

static void snapshot(const hs_plan p, char *buf) {
  for (int k = 0; k < p->npeers; k++)
    for (int i = 0; i < p->peers[k].nrecv; i++) {
      const hs_section *s = &p->peers[k].recv[i];
      hs__pack_section(p, s, p->fields[s->box.field].data, buf);
      buf += s->bytes;
    }
  for (int i = 0; i < p->nself; i++) {
    const hs_section *s = &p->self[i].dst;
    hs__pack_section(p, s, p->fields[s->box.field].data, buf);
    buf += s->bytes;
  }
}

static void restore(const hs_plan p, const char *buf) {
  for (int k = 0; k < p->npeers; k++)
    for (int i = 0; i < p->peers[k].nrecv; i++) {
      const hs_section *s = &p->peers[k].recv[i];
      hs__unpack_section(p, s, p->fields[s->box.field].data, buf);
      buf += s->bytes;
    }
  for (int i = 0; i < p->nself; i++) {
    const hs_section *s = &p->self[i].dst;
    hs__unpack_section(p, s, p->fields[s->box.field].data, buf);
    buf += s->bytes;
  }
}

static int create_candidate(hs_plan p, auto_cand *c, hs_field *fl) {
  char name[64], why[256] = "";
  snprintf(name, sizeof name, "%.*s", (int)strcspn(c->spec, ":"), c->spec);
  if (hs_transport_available(p->comm, name, why, sizeof why) != HS_OK) {
    snprintf(c->reason, sizeof c->reason, "unavailable: %s", why[0] ? why : hs_error_message());
    return HS_OK;
  }
  hs_plan_desc d;
  hs_plan_desc_init(&d);
  for (int a = 0; a < HS_MAX_DIMS; a++) d.depth[a] = p->depth[a];
  d.stencil = p->stencil;
  d.oneway = p->oneway;
  d.oneway_axis = p->oneway_axis;
  d.nfields = p->nfields;
  d.fields = fl;
  d.transport_name = c->spec;
  if (hs__plan_create_nested(p->decomp, &d, &c->plan) != HS_OK) {
    c->plan = NULL;
    snprintf(c->reason, sizeof c->reason, "plan creation failed: %s", hs_error_message());
  }
  return HS_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void print_report(hs_plan p, FILE *out);

static int auto_setup(hs_plan p) {
  auto_t *t = hs__calloc(p, sizeof *t);
  if (!t) return hs__error(HS_ERR_NOMEM, "auto: out of memory");
  p->impl = t;
  t->chosen = -1;
  p->core_self_copy = false; /* the chosen plan does its own self copies */
  int verbose = 0, rc;
  const char *env = getenv("HALOSWAP_VERBOSE");
  if (env && *env && strcmp(env, "0") != 0) verbose = 1;
  if ((rc = hs__opt_int(p, "verbose", verbose, &verbose)) != HS_OK) return rc;
  int rounds_given = hs__opt_get(p, "rounds") != NULL;
  if ((rc = hs__opt_int(p, "rounds", 7, &t->rounds)) != HS_OK) return rc;
  if ((rc = hs__opt_int(p, "swaps", 0, &t->swaps)) != HS_OK) return rc;
  if (t->rounds < 1 || t->rounds > AUTO_MAX_ROUNDS)
    return hs__error(HS_ERR_ARG, "auto: rounds = %d, must be 1..%d", t->rounds,
                     AUTO_MAX_ROUNDS);
  if (t->swaps < 0 || t->swaps > 10000)
    return hs__error(HS_ERR_ARG, "auto: swaps = %d, must be 0 (adaptive)..10000", t->swaps);
  /* Options are equal on every rank (the core checks), so a bad list fails everywhere
   * before any collective call. */
  if ((rc = parse_candidates(p, t, hs__opt_get(p, "candidates"))) != HS_OK) return rc;

  /* Sub-plans see the fields through their resolved strides (or the caller's hooks). */
  hs_field *fl = calloc((size_t)p->nfields, sizeof *fl);
  size_t hb = halo_bytes(p);
  char *saved = malloc(hb ? hb : 1), *ref = malloc(hb ? hb : 1), *cur = malloc(hb ? hb : 1);
  rc = (fl && saved && ref && cur) ? HS_OK : hs__error(HS_ERR_NOMEM, "auto: out of memory");
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) goto out;
  for (int f = 0; f < p->nfields; f++) {
    const hs_fieldinfo *fi = &p->fields[f];
    fl[f].type = fi->type;
    fl[f].data = fi->data;
    fl[f].layout = HS_LAYOUT_STRIDED;
    for (int a = 0; a < HS_MAX_DIMS; a++) {
      fl[f].halo[a] = fi->halo[a];
      fl[f].stride[a] = fi->stride[a];
    }
    fl[f].pack = fi->pack;
    fl[f].unpack = fi->unpack;
    fl[f].ctx = fi->ctx;
  }
  double t_create = MPI_Wtime();
  for (int i = 0; i < t->n; i++) create_candidate(p, &t->c[i], fl);
  double t_trial = MPI_Wtime();
  t->create_s = t_trial - t_create;

  /* Same halos: one swap each from the caller's state, compared with the first. */
  snapshot(p, saved);
  int refc = -1;
  for (int i = 0; i < t->n; i++) {
    auto_cand *c = &t->c[i];
    if (!c->plan) continue;
    int lrc = hs_swap(c->plan, NULL);
    int bad = 0;
    if (lrc != HS_OK) bad = 2;
    else {
      snapshot(p, cur);
      if (refc < 0) memcpy(ref, cur, hb);
      else if (memcmp(ref, cur, hb) != 0) bad = 1;
    }
    restore(p, saved);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, p->comm);
    if (anybad) {
      if (anybad == 2)
        snprintf(c->reason, sizeof c->reason, "swap failed on some rank: %s",
                 lrc != HS_OK ? hs_error_message() : "(see that rank)");
      else
        snprintf(c->reason, sizeof c->reason, "halos differ from those of %s",
                 t->c[refc].spec);
      hs_plan_free(&c->plan);
      c->plan = NULL;
    } else if (refc < 0) {
      refc = i;
    }
  }

  /* Adaptive trial length, the same on every rank: about 4 ms per candidate and round,
   * from the slowest candidate's swap; and fewer rounds (not below 3) when slow swaps
   * (large plans, oversubscribed ranks) would make the whole trial exceed about 0.5 s. */
  double worst = 0, sum = 0;
  for (int i = 0; i < t->n; i++) {
    if (!t->c[i].plan) continue;
    double t0 = MPI_Wtime();
    hs_swap(t->c[i].plan, NULL);
    double dt = MPI_Wtime() - t0;
    sum += dt;
    if (dt > worst) worst = dt;
  }
  double w[2] = {worst, sum}, wmax[2];
  MPI_Allreduce(w, wmax, 2, MPI_DOUBLE, MPI_MAX, p->comm);
  worst = wmax[0];
  sum = wmax[1];
  int swaps = t->swaps;
  if (swaps == 0) {
    swaps = worst > 0 ? (int)(4e-3 / worst) : 50;
    if (swaps < 1) swaps = 1;
    if (swaps > 50) swaps = 50;
  }
  t->swaps = swaps;
  if (!rounds_given && sum > 0) {
    int fit = (int)(0.5 / (sum * swaps));
    if (fit < t->rounds) t->rounds = fit < 3 ? 3 : fit;
  }

  /* Interleaved rounds, the order rotated each round so no candidate always follows the
   * same one. Swap errors end the trial for that candidate on every rank. */
  double local[AUTO_MAX_CAND * AUTO_MAX_ROUNDS];
  double global[AUTO_MAX_CAND * AUTO_MAX_ROUNDS];
  memset(local, 0, sizeof local);
  for (int r = 0; r < t->rounds; r++)
    for (int k = 0; k < t->n; k++) {
      int i = (k + r) % t->n;
      auto_cand *c = &t->c[i];
      if (!c->plan) continue;
      MPI_Barrier(p->comm);
      double t0 = MPI_Wtime();
      for (int s = 0; s < swaps; s++) hs_swap(c->plan, NULL);
      local[i * AUTO_MAX_ROUNDS + r] = (MPI_Wtime() - t0) / swaps;
    }
  MPI_Allreduce(local, global, AUTO_MAX_CAND * AUTO_MAX_ROUNDS, MPI_DOUBLE, MPI_MAX, p->comm);
  restore(p, saved);
  int best = -1;
  for (int i = 0; i < t->n; i++) {
    auto_cand *c = &t->c[i];
    if (!c->plan) continue;
    double s[AUTO_MAX_ROUNDS];
    for (int r = 0; r < t->rounds; r++) s[r] = c->t[r] = global[i * AUTO_MAX_ROUNDS + r] * 1e6;
    qsort(s, (size_t)t->rounds, sizeof(double), cmp_double);
    c->min = s[0];
    c->max = s[t->rounds - 1];
    c->med = t->rounds % 2 ? s[t->rounds / 2] : 0.5 * (s[t->rounds / 2 - 1] + s[t->rounds / 2]);
    /* Interference from other processes only ever adds time, so the faster half of the
     * rounds estimates a candidate's own cost better than all of them on a busy machine. */
    int half = (t->rounds + 1) / 2;
    c->score = 0;
    for (int r = 0; r < half; r++) c->score += s[r] / half;
    if (best < 0 || c->score < t->c[best].score) best = i;
  }
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
  t->trial_s = MPI_Wtime() - t_trial;
  for (int i = 0; i < t->n; i++)
    if (i != best && t->c[i].plan) hs_plan_free(&t->c[i].plan);
  hs_plan_stats st;
  hs_plan_get_stats(t->c[best].plan, &st);
  hs_plan_reset_stats(t->c[best].plan);
  p->transport_bytes += st.bytes_allocated;
  if (verbose && p->rank == 0) print_report(p, stdout);
  rc = HS_OK;
out:
  free(fl);
  free(saved);
  free(ref);
  free(cur);
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

static void auto_destroy(hs_plan p) {
  auto_t *t = p->impl;
  if (!t) return;
  for (int i = 0; i < t->n; i++)
    if (t->c[i].plan) hs_plan_free(&t->c[i].plan);
  hs__free(p, t, sizeof *t);
  p->impl = NULL;
}

static hs_plan auto_delegate(hs_plan p) {
  auto_t *t = p->impl;
  return (t && t->chosen >= 0) ? t->c[t->chosen].plan : NULL;
}

static int report_text(hs_plan p, char *buf, size_t len) {
  auto_t *t = p->impl;
  size_t n = 0;
#define PUT(...)                                                    \
  do {                                                              \
    int w_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__); \
    if (w_ > 0) n += (size_t)w_;                                    \
  } while (0)
  if (!t || t->chosen < 0) {
    PUT("; auto: no choice made");
    return (int)n;
  }
  PUT("; auto chose %s (us per swap, faster-half mean / median [min-max] of %d rounds x %d "
      "swaps:",
      t->c[t->chosen].spec, t->rounds, t->swaps);
  for (int i = 0; i < t->n; i++) {
    const auto_cand *c = &t->c[i];
    if (c->reason[0])
      PUT(" %s skipped: %s;", c->spec, c->reason);
    else
      PUT(" %s %.1f / %.1f [%.1f-%.1f];", c->spec, c->score, c->med, c->min, c->max);
  }
  if (n > 0 && n <= len && buf[n - 1] == ';') buf[--n] = 0;
  PUT(")");
#undef PUT
  return (int)n;
}

static void auto_describe(hs_plan p, char *buf, size_t len) { report_text(p, buf, len); }

static void print_report(hs_plan p, FILE *out) {
  auto_t *t = p->impl;
  fprintf(out, "haloswap auto: %d ranks, %d fields: chose %s (%d rounds x %d swaps; per round "
               "the slowest rank's mean; score = mean of the faster half of the rounds; plans "
               "%.3f s, trial %.3f s)\n",
          p->size, p->nfields, t->c[t->chosen].spec, t->rounds, t->swaps, t->create_s,
          t->trial_s);
  for (int i = 0; i < t->n; i++) {
    const auto_cand *c = &t->c[i];
    if (c->reason[0])
      fprintf(out, "  %-22s skipped: %s\n", c->spec, c->reason);
    else
      fprintf(out, "  %-22s score %10.1f us/swap, median %.1f [%.1f - %.1f]%s\n", c->spec,
              c->score, c->med, c->min, c->max, i == t->chosen ? "  <- chosen" : "");
  }
  fflush(out);
}

static const char *const auto_keys[] = {"candidates", "rounds", "swaps", "verbose", NULL};

const hs_transport_ops hs__transport_auto = {
    .name = "auto",
    .summary = "measures every usable transport on the plan at creation and uses the fastest",
    .query = NULL,
    .setup = auto_setup,
    .start = auto_start,
    .complete = auto_complete,
    .destroy = auto_destroy,
    .option_keys = auto_keys,
    .delegate = auto_delegate,
    .describe = auto_describe,
};
