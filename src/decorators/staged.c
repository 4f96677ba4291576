/* The staged exchange (core option staged=1, any transport but a delegating one): exchange
 * along x, then y, then z, each stage's face sections widened on the axes exchanged before it
 * to include the halos those stages filled. Edges and corners then travel in two or three
 * hops, and a rank sends 2 messages per decomposed axis instead of up to 26 (Lare3d's own
 * scheme). Each stage is a nested plan of the same transport whose geometry holds only the
 * faces of its axis (hs__plan_nest, src/geometry/geometry.c widens the sections), so
 * every transport runs it unchanged: a stage is a whole swap with the ordinary contract, and
 * stage k+1 starts only when stage k is complete. The staged plan itself keeps the direct
 * geometry: the analytic check, auto's validation and the reverse exchange use it. Every
 * halo cell ends with the same bits as the direct exchange's: each is a copy of the owner's
 * value, carried through the intermediate ranks' halos. Pack/unpack hooks see the stages'
 * boxes, which span halo cells on the axes exchanged before (docs/design.md).
 * The sweep (combine order HS_ORDER_SWEEP) runs the same stages in the sweep order with
 * slabs over the whole swapped halo of every other axis, forward and reverse.
 * Core option stage_fields=k: the fields in groups of k, each group through every stage
 * before the next group starts (GHEX cartex's MPI runtime goes field by field so): a group's
 * halo lines are still in cache from one axis to the next, at the cost of a stage's latency
 * per group. The nested plans are then the stages of group 0, then of group 1, ... */
#include "hs_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hs_transport_ops staged_ops, sweep_ops;

struct hs_staged {
  int n;                      /* nested plans: naxes per group of fields, group by group */
  int naxes, ngroups;
  int axis[HS_MAX_DIMS];      /* the axis of stage k of every group */
  int group_fields;           /* fields per group (the last may have fewer) */
  hs_plan *stage;
  int cur;                    /* the nested plan of the swap in flight */
};

/* Nested plan k's fields' arrays: from its group's first field (NULL: registered). */
static void *const *group_arrays(const struct hs_staged *s, int k, void *const *arrays) {
  return arrays ? arrays + (size_t)(k / s->naxes) * (size_t)s->group_fields : NULL;
}

static const char axis_name[HS_MAX_DIMS] = {'x', 'y', 'z'};

/* The given options without the core's, as text for the stages' plans (values with commas
 * in brackets). */
/* Some offset moves data along two or more axes (an edge or a corner)? */
static bool has_edges(const hs_plan p) {
  for (int i = 0; i < p->core->noffsets; i++) {
    int nz = 0;
    for (int a = 0; a < p->ndims; a++) nz += p->core->offsets[i][a] != 0;
    if (nz > 1) return true;
  }
  return false;
}

/* Axis a has face offsets and some rank has a neighbour along it (itself when periodic). */
static bool axis_staged(const hs_plan p, int a) {
  const hs_decomp d = p->decomp;
  if (d->procs[a] == 1 && !d->periodic[a]) return false;
  for (int i = 0; i < p->core->noffsets; i++)
    if (p->core->offsets[i][a] != 0) return true;
  return false;
}

/* A star stencil or a one-direction swap has only faces, and with one axis to exchange the
 * edges have no neighbours: then there is nothing to carry. */
bool hs__staged_useful(const hs_plan p) {
  int naxes = 0;
  for (int a = 0; a < p->ndims; a++) naxes += axis_staged(p, a);
  return has_edges(p) && naxes >= 2;
}

/* The staged exchange's setup around the transport's: the stages, or (nothing to carry) the
 * transport set up directly. */
static int staged_setup(hs_plan p) {
  if (p->ops->flags & HS_OPS_DELEGATES)
    return hs__error(HS_ERR_UNAVAILABLE,
                     "hs_plan_create: transport %s: staged=1 applies to the transport that "
                     "moves the data; give it to a candidate (%s:candidates=[p2p:staged=1+...])",
                     p->transport_name, p->transport_name);
  /* A sweep stages even one axis: its slabs carry the other axes' halos (walls included),
   * which the direct exchange leaves alone. */
  bool sweep = p->core->order == HS_ORDER_SWEEP;
  int axes[HS_MAX_DIMS], naxes = 0;
  if (sweep) {
    int all[HS_MAX_DIMS], n = hs__sweep_axes(p, all);
    for (int k = 0; k < n; k++)
      if (axis_staged(p, all[k])) axes[naxes++] = all[k];
  } else if (hs__staged_useful(p)) {
    for (int a = 0; a < p->ndims; a++)
      if (axis_staged(p, a)) axes[naxes++] = a;
  }
  if (naxes == 0) return p->ops->setup(p); /* nothing to carry, or no neighbour to sweep to */
  int k_fields = p->core->config.stage_fields, nf = p->nfields;
  int ngroups = k_fields > 0 && k_fields < nf ? (nf + k_fields - 1) / k_fields : 1;
  if (ngroups > 1 && sweep)
    return hs__error(HS_ERR_ARG, "hs_plan_create: core option stage_fields = %d applies to the "
                     "staged exchange (staged=1), not to HS_ORDER_SWEEP, whose stages are its "
                     "combine order", k_fields);
  if (ngroups > HS_MAX_STAGE_GROUPS)
    return hs__error(HS_ERR_ARG, "hs_plan_create: core option stage_fields = %d makes %d groups "
                     "of the plan's %d fields; at most %d groups (stage_fields >= %d)", k_fields,
                     ngroups, nf, HS_MAX_STAGE_GROUPS,
                     (nf + HS_MAX_STAGE_GROUPS - 1) / HS_MAX_STAGE_GROUPS);
  struct hs_staged *s = calloc(1, sizeof *s);
  if (s) s->stage = calloc((size_t)(ngroups * naxes), sizeof *s->stage);
  if (!s || !s->stage) {
    free(s);
    return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  }
  p->impl = s;
  p->ops = sweep ? &sweep_ops : &staged_ops; /* from here on the plan runs its stages */
  p->core->core_bytes += sizeof *s + (size_t)(ngroups * naxes) * sizeof *s->stage;
  s->naxes = naxes;
  s->ngroups = ngroups;
  s->group_fields = ngroups > 1 ? k_fields : nf;
  memcpy(s->axis, axes, sizeof axes);
  int rc = HS_OK;
  for (int g = 0; g < ngroups && rc == HS_OK; g++) {
    unsigned wide = 0u;
    int first = g * s->group_fields;
    int count = nf - first < s->group_fields ? nf - first : s->group_fields;
    for (int k = 0; k < naxes && rc == HS_OK; k++) {
      int a = axes[k];
      const hs_stage stage = {.axis = a, .wide = wide, .full = sweep, .first = first,
                              .nfields = ngroups > 1 ? count : 0};
      rc = hs__plan_nest(p, NULL, &stage, &s->stage[s->n]);
      if (rc != HS_OK) break; /* collective: failed on every rank */
      s->n++;
      if (!sweep) wide |= 1u << a;
    }
  }
  if (rc != HS_OK) return rc;
  /* Statistics: every stage's messages; peers counted once. */
  int ranks[3 * 2 * HS_MAX_DIMS], nr = 0;
  hs_plan_stats *st = &p->core->stats;
  st->bytes_sent_per_swap = st->bytes_recv_per_swap = st->bytes_self_per_swap = 0;
  for (int k = 0; k < s->n; k++) {
    const hs_plan q = s->stage[k];
    for (int j = 0; j < q->npeers; j++) {
      p->core->stats.bytes_sent_per_swap += q->peers[j].send_bytes;
      p->core->stats.bytes_recv_per_swap += q->peers[j].recv_bytes;
      bool seen = false;
      for (int i = 0; i < nr; i++) seen |= ranks[i] == q->peers[j].rank;
      if (!seen && nr < (int)(sizeof ranks / sizeof ranks[0])) ranks[nr++] = q->peers[j].rank;
    }
    p->core->stats.bytes_self_per_swap += q->core->self_bytes;
  }
  p->core->stats.npeers = nr;
  return HS_OK;
}

static int decorate(hs_plan p) {
  /* A sweep is staged (staged=1 with it changes nothing), except on a delegating transport,
   * whose plans sweep themselves. */
  bool sweep = p->core->order == HS_ORDER_SWEEP && !(p->ops->flags & HS_OPS_DELEGATES);
  return p->core->config.staged || sweep ? staged_setup(p) : p->ops->setup(p);
}

static void staged_free(hs_plan p) {
  struct hs_staged *s = p->impl;
  if (!s) return;
  for (int k = 0; k < s->n; k++) {
    s->stage[k]->core->in_progress = false; /* after a failed swap: free it all the same */
    hs_plan_free(&s->stage[k]);
  }
  free(s->stage);
  free(s);
  p->impl = NULL;
}

static int staged_start(hs_plan p, void *const *arrays) {
  struct hs_staged *s = p->impl;
  s->cur = 0;
  return hs_swap_start(s->stage[0], group_arrays(s, 0, arrays));
}

/* Stages from `from` on, as failed rounds carrying stage q's failure: every rank runs every
 * stage, so a stage's failure reaches the next stages' neighbours in the same swap. given:
 * the swap has per-swap arrays (nbr: which collective the neighbours call). */
static void run_failed_stages(struct hs_staged *s, int from, const hs_plan q, bool given) {
  for (int k = from; k < s->n; k++) {
    hs__fail_adopt(s->stage[k], q);
    s->stage[k]->fail_given = given;
    hs_swap_start(s->stage[k], NULL);
  }
  s->cur = s->n - 1;
}

/* Finish stage cur and start the next one. */
static int next_stage(struct hs_staged *s, void *const *arrays) {
  int rc = hs_swap_complete(s->stage[s->cur], group_arrays(s, s->cur, arrays));
  if (rc != HS_OK) {
    char msg[HS_FAIL_MSG];
    snprintf(msg, sizeof msg, "%s", hs_error_message());
    run_failed_stages(s, s->cur + 1, s->stage[s->cur], arrays != NULL);
    hs__error(rc, "%s", msg);
    return rc;
  }
  s->cur++;
  return hs_swap_start(s->stage[s->cur], group_arrays(s, s->cur, arrays));
}

static int staged_test(hs_plan p, void *const *arrays, int *done) {
  struct hs_staged *s = p->impl;
  for (;;) {
    int d = 0;
    int rc = hs_swap_test(s->stage[s->cur], group_arrays(s, s->cur, arrays), &d);
    if (rc != HS_OK || !d) return rc;
    if (s->cur == s->n - 1) {
      *done = 1;
      return HS_OK;
    }
    rc = next_stage(s, arrays);
    if (rc != HS_OK) return rc;
  }
}

static int staged_complete(hs_plan p, void *const *arrays) {
  struct hs_staged *s = p->impl;
  int rc = HS_OK;
  while (rc == HS_OK && s->cur < s->n - 1) rc = next_stage(s, arrays);
  if (rc == HS_OK) rc = hs_swap_complete(s->stage[s->cur], group_arrays(s, s->cur, arrays));
  s->cur = 0;
  return rc;
}

/* The sweep's reverse: each stage a whole reverse exchange of its own (the stage's offsets
 * are -e_a, then +e_a, so its canonical order adds the lower neighbour's slab first), stage
 * k + 1 started when stage k is complete on this rank. */
static int sweep_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  const struct hs_staged *s = p->impl;
  return hs_reverse_start(s->stage[0], op, arrays);
}

/* Stages from `from` on, as failed reverse rounds carrying q's failure (every rank runs
 * every stage). */
static void run_failed_reverse_stages(struct hs_staged *s, int from, const hs_plan q) {
  for (int k = from; k < s->n; k++) {
    hs__fail_adopt(s->stage[k], q);
    hs_reverse_start(s->stage[k], HS_OP_SUM, NULL);
  }
}

/* A failed round of every stage, carrying p's failure (src/plan/fail.c's rule): forward, or
 * a sweep's reverse; a staged plan's reverse is the core's, over the direct geometry. */
static bool staged_fail_inner(hs_plan p, int reverse) {
  struct hs_staged *s = p->impl;
  if (reverse && p->ops != &sweep_ops) return false;
  if (reverse) {
    run_failed_reverse_stages(s, 0, p);
  } else {
    run_failed_stages(s, 0, p, p->fail_given);
    s->cur = 0;
  }
  return true;
}

static int staged_inner(hs_plan p, hs_plan *plans, int max) {
  const struct hs_staged *s = p->impl;
  int n = 0;
  for (int k = 0; s && k < s->n && n < max; k++) plans[n++] = s->stage[k];
  return n;
}

static int sweep_reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  struct hs_staged *s = p->impl;
  int rc = hs_reverse_complete(s->stage[0], arrays), k = 1;
  for (; k < s->n && rc == HS_OK; k++) rc = hs_reverse(s->stage[k], op, arrays);
  if (rc != HS_OK && k < s->n) { /* stage k - 1 failed: the later ones still run, flagged */
    char msg[HS_FAIL_MSG];
    snprintf(msg, sizeof msg, "%s", hs_error_message());
    run_failed_reverse_stages(s, k, s->stage[k - 1]);
    hs__error(rc, "%s", msg);
  }
  return rc;
}

static void staged_describe(hs_plan p, char *buf, size_t len, size_t *n) {
  const struct hs_staged *s = p->impl;
  hs__appendf(buf, len, n, "%s in %d stages:", hs__plan_sweeps(p) ? "swept" : "staged", s->naxes);
  if (s->ngroups > 1)
    hs__appendf(buf, len, n, " %d groups of %d fields (stage_fields), each through them all; "
                "group 0:", s->ngroups, s->group_fields);
  for (int k = 0; k < s->naxes; k++) { /* group 0's stages */
    const hs_plan q = s->stage[k];
    hs__appendf(buf, len, n, "%s stage %c: %d peers", k ? ";" : "", axis_name[s->axis[k]],
                q->npeers);
    for (int j = 0; j < q->npeers; j++)
      hs__appendf(buf, len, n, " [%d: send %zu B, recv %zu B]", q->peers[j].rank,
                  q->peers[j].send_bytes, q->peers[j].recv_bytes);
    hs__appendf(buf, len, n, ", self %zu B", q->core->self_bytes);
  }
}

bool hs__plan_staged(const hs_plan p) { return p->ops == &staged_ops || p->ops == &sweep_ops; }

/* The decorators: the stages move the data and do their own self copies. */
#define STAGED_OPS(sym, name_, ...)                                                           \
  static const hs_transport_ops sym = {                                                       \
      .name = name_, .flags = HS_OPS_DELEGATES, .summary = "the transport, axis by axis",     \
      .start = staged_start, .complete = staged_complete, .test = staged_test,                \
      .destroy = staged_free, .inner = staged_inner, .fail_inner = staged_fail_inner,        \
      .describe_exchange = staged_describe, __VA_ARGS__}
STAGED_OPS(staged_ops, "staged", .reverse_start = NULL);
STAGED_OPS(sweep_ops, "sweep", .reverse_start = sweep_reverse_start,
           .reverse_complete = sweep_reverse_complete);

const hs_transport_ops hs__decorator = {.name = "decorator", .setup = decorate};
