/* Plans: transport choice, creation and destruction, the swap state machine, statistics. */
#include "hs_core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The validated combine order into the plan (the description's list is read only here). */
static void copy_order(hs_plan p, const hs_plan_desc *desc) {
  p->core->order = desc->order;
  if (p->core->order == HS_ORDER_OFFSETS) {
    p->core->norder = desc->norder;
    memcpy(p->core->order_offsets, desc->order_offsets,
           (size_t)desc->norder * sizeof p->core->order_offsets[0]);
  } else if (p->core->order == HS_ORDER_SWEEP) {
    p->core->nsweep = desc->nsweep;
    memcpy(p->core->sweep_axes, desc->sweep_axes, sizeof p->core->sweep_axes);
  }
}

enum {
  HS_CREATE_NESTED = 1u << 0 /* a plan the library makes for itself (hs__plan_nest):
                                HALOSWAP_OPTIONS was meant for the outer plan, not applied */
};

/* ------------------------------------------------------------------ create / free */
static void free_core(hs_plan p) {
  hs__remap_free(p); /* after the transport let go of the neighbours' arrays */
  hs__reverse_free(p);
  hs__dtypes_free(p);
  if (p->peers)
    for (int k = 0; k < p->npeers; k++) {
      free(p->peers[k].send);
      free(p->peers[k].recv);
      free(p->peers[k].send_fm);
      free(p->peers[k].recv_fm);
    }
  free(p->peers);
  free(p->self);
  free(p->core->self_bounce);
  free(p->fields);
  free(p->core->user_fields);
  free(p->core->region_mask);
  free(p->config);
  hs__fail_free(p);
  if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
  free(p);
}

static void destroy(hs_plan p) {
  if (p->ops->destroy) p->ops->destroy(p);
}

/* stage: a stage of a staged exchange (hs__plan_nest), or NULL. parent: the plan whose
 * parsed options this one takes (hs__plan_nest), or NULL. regions, masks: a region set
 * (hs_plan_create_regions) or a parent plan's masks; NULL: the whole halo. */
static int plan_create(hs_decomp d, const hs_plan_desc *desc, unsigned flags,
                       const hs_stage *stage, const hs_plan parent, const hs_region_set regions,
                       const uint32_t *masks, hs_plan *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_plan_create: out is NULL");
  *out = NULL;
  if (!d) return hs__error(HS_ERR_ARG, "hs_plan_create: decomposition is NULL");
  int rc = desc ? hs__check_desc(d, desc) : hs__error(HS_ERR_ARG, "hs_plan_create: desc is NULL");
  rc = hs__agree(d->comm, rc);
  if (rc != HS_OK) return rc;

  /* The transport's view and the core's state in one block (free(p) frees both). */
  struct plan_block { struct hs_plan_s view; struct hs_plan_core core; } *block;
  block = hs__calloc_agreed(d->comm, sizeof *block, "hs_plan_create: out of memory", &rc);
  if (!block) return rc;
  hs_plan p = &block->view;
  p->core = &block->core;
  p->comm = MPI_COMM_NULL;
  p->decomp = d;
  p->ndims = d->ndims;
  p->rank = d->rank;
  p->size = d->size;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    p->core->local[a] = d->local[a];
    p->core->depth[a] = desc->depth[a];
  }
  p->core->stencil = desc->stencil;
  p->core->oneway = desc->oneway;
  p->core->oneway_axis = desc->oneway_axis;
  p->nfields = desc->nfields;
  p->core->stage_axis = stage ? stage->axis + 1 : 0;
  p->core->stage_wide = stage ? stage->wide : 0u;
  p->core->stage_full = stage && stage->full;
  copy_order(p, desc);
  int mrc = MPI_Comm_dup(d->comm, &p->comm);
  if (mrc != MPI_SUCCESS) {
    p->comm = MPI_COMM_NULL;
    free_core(p);
    return hs__mpi_error(mrc, "MPI_Comm_dup");
  }
  MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
  rc = hs__copy_fields(p, desc);
  if (rc == HS_OK) rc = hs__check_sweep(p);
  if (rc == HS_OK) rc = hs__transport_resolve(p, desc, flags & HS_CREATE_NESTED, parent);
  if (rc == HS_OK) rc = hs__check_boxes(p);
  if (rc == HS_OK) rc = hs__regions_apply(p, regions, masks);
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK) rc = hs__agree(p->comm, hs__regions_same(p));
  if (rc == HS_OK) rc = hs__agree(p->comm, hs__check_same(p, desc));
  if (rc == HS_OK) rc = hs__agree(p->comm, hs__check_shapes(p));
  if (rc == HS_OK) {
    char why[256] = "";
    int q = p->ops->query ? p->ops->query(p->comm, why, sizeof why) : HS_OK;
    if (q != HS_OK)
      rc = hs__error(q, "hs_plan_create: transport %s is not usable here: %s", p->transport_name,
                     why);
    rc = hs__agree(p->comm, rc);
  }
  if (rc == HS_OK) rc = hs__agree(p->comm, hs__build_geometry(p));
  if (rc == HS_OK) hs__stream_decide(p);
  /* Core option remap=1: the arrays become node-shared before the transport looks at them. */
  if (rc == HS_OK) rc = hs__agree(p->comm, hs__remap_setup(p));
  if (rc != HS_OK) {
    free_core(p);
    return rc;
  }
  for (int k = 0; k < p->npeers; k++) { /* a decorator counts its inner plans' instead */
    p->core->stats.bytes_sent_per_swap += p->peers[k].send_bytes;
    p->core->stats.bytes_recv_per_swap += p->peers[k].recv_bytes;
  }
  p->core->stats.bytes_self_per_swap = p->core->self_bytes;
  p->core->stats.npeers = p->npeers;
  rc = hs__agree(p->comm, hs__decorator.setup(p));
  if (rc != HS_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hs_error_message());
    destroy(p);
    free_core(p);
    hs__error(rc, "%s", msg);
    return rc;
  }
  *out = p;
  return HS_OK;
}

int hs__plan_nest(hs_plan p, const char *spec, const hs_stage *stage, hs_plan *out) {
  hs_plan_desc d;
  hs_plan_desc_init(&d);
  for (int a = 0; a < HS_MAX_DIMS; a++) d.depth[a] = p->core->depth[a];
  d.stencil = p->core->stencil;
  d.nfields = p->nfields;
  d.fields = p->core->user_fields;
  const uint32_t *masks = p->core->region_mask;
  if (stage && stage->nfields) { /* a group of the fields */
    d.nfields = stage->nfields;
    d.fields += stage->first;
    if (masks) masks += stage->first;
  }
  d.transport_name = spec ? spec : p->transport_name;
  if (!stage) { /* a stage's geometry is its own; the combine order is the plan's */
    d.oneway = p->core->oneway;
    d.oneway_axis = p->core->oneway_axis;
    d.order = p->core->order;
    d.norder = p->core->norder;
    d.order_offsets = &p->core->order_offsets[0][0];
    d.nsweep = p->core->nsweep;
    memcpy(d.sweep_axes, p->core->sweep_axes, sizeof d.sweep_axes);
  }
  return plan_create(p->decomp, &d, HS_CREATE_NESTED, stage, spec ? NULL : p, NULL, masks, out);
}

int hs_plan_create(hs_decomp d, const hs_plan_desc *desc, hs_plan *out) {
  return plan_create(d, desc, 0, NULL, NULL, NULL, NULL, out);
}

int hs_plan_create_regions(hs_decomp d, const hs_plan_desc *desc, hs_region_set regions,
                           hs_plan *out) {
  return plan_create(d, desc, 0, NULL, NULL, regions, NULL, out);
}

int hs_plan_free(hs_plan *pp) {
  if (!pp || !*pp) return HS_OK;
  hs_plan p = *pp;
  int rc = HS_OK;
  if (p->core->in_progress || p->core->reverse_in_progress)
    rc = hs__error(HS_ERR_STATE, "hs_plan_free: a %s is in progress; complete it first",
                   p->core->in_progress ? "swap" : "reverse exchange");
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) return rc;
  destroy(p);
  free_core(p);
  *pp = NULL;
  return HS_OK;
}

/* ------------------------------------------------------------------ swaps */
/* The per-swap argument checks (docs/design.md, "Errors during a swap"). */
static int check_arrays(hs_plan p, void *const *arrays, const char *who) {
  for (int f = 0; f < p->nfields; f++) {
    const hs_fieldinfo *fi = &p->fields[f];
    if (fi->pack) continue;
    const char *a = hs__field_ptr(p, arrays, f);
    if (!a)
      return hs__error(HS_ERR_ARG, "%s: field %d has no data (registered and given both NULL)",
                       who, f);
    if ((uintptr_t)a % fi->elem)
      return hs__error(HS_ERR_ARG, "%s: arrays[%d] = %p is not aligned to its element size "
                                   "(%zu bytes)", who, f, (const void *)a, fi->elem);
  }
  return HS_OK;
}

/* The plan writes its halos itself (not a decorator, whose inner plans do), so the core does
 * its periodic self copies. */
static bool own_self_copies(const hs_plan p) { return !(p->ops->flags & HS_OPS_DELEGATES); }

bool hs__self_copies_mine(const hs_plan p) { return p->nself > 0 && own_self_copies(p); }
void hs__self_copies_taken(hs_plan p) { p->core->self_done = true; }

/* The arrays a swap was started with, for complete (which must be given the same ones). */
static void keep_arrays(hs_plan p, void *const *arrays) {
  p->core->round_given = false;
  if (!arrays) return;
  if (!p->core->round_arrays)
    p->core->round_arrays = calloc((size_t)p->nfields, sizeof *p->core->round_arrays);
  if (!p->core->round_arrays) return; /* out of memory: complete uses its own arrays, unchecked */
  for (int f = 0; f < p->nfields; f++) p->core->round_arrays[f] = arrays[f];
  p->core->round_given = true;
}

static void *const *started_arrays(const hs_plan p) {
  return p->core->round_given ? (void *const *)p->core->round_arrays : NULL;
}

/* A start in the middle of a round (forward or reverse): no round began, so it is refused on
 * this rank alone; the round in progress goes on as started and the plan stays usable. */
static int mid_round(hs_plan p, const char *who) {
  return hs__error(HS_ERR_STATE, "%s: a %s is already in progress on this plan", who,
                   p->core->in_progress ? "swap" : "reverse exchange");
}

/* A call of the other kind of round than the one in progress (a reverse during a swap, a
 * swap's complete or test during a reverse): no round began that anyone waits on, and the one
 * in progress goes on, so it is refused on this rank only. */
static int other_round(hs_plan p, const char *who) {
  return hs__error(HS_ERR_STATE, "%s: a %s is in progress on this plan", who,
                   p->core->in_progress ? "swap" : "reverse exchange");
}

/* A complete with no round of its kind in progress: the other kind's is, the plan failed,
 * or nothing was started (a misuse the plan survives). */
static int not_started(hs_plan p, const char *who, const char *what, bool reverse,
                       void *const *arrays) {
  if (p->core->in_progress || p->core->reverse_in_progress) return other_round(p, who);
  if (p->core->failed)
    return hs__error(HS_ERR_STATE, "%s: no %s is in progress (the plan failed: %.900s)", who,
                     what, p->core->failure.msg);
  hs__error(HS_ERR_STATE, "%s: no %s was started on this plan", who, what);
  return hs__round_misuse(p, HS_ERR_STATE, reverse, arrays != NULL);
}

int hs_swap_start(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_swap_start: plan is NULL");
  if (p->core->in_progress || p->core->reverse_in_progress) return mid_round(p, "hs_swap_start");
  /* A nested plan's failed round is started with NULL: its outer plan set fail_given. */
  if (p->core->failed)
    return hs__round_after_failure(p, "hs_swap_start", false, arrays || p->fail_given);
  int rc = check_arrays(p, arrays, "hs_swap_start");
  if (rc != HS_OK) return hs__round_fail_here(p, rc, false, arrays != NULL);
  double t0 = hs__wtime();
  p->core->round_flagged = false;
  p->core->self_done = false; /* a start that failed may have left it set */
  rc = p->ops->start(p, arrays);
  if (rc != HS_OK) hs__fail_record(p, rc);
  double t1 = hs__wtime();
  p->core->stats.seconds_start += t1 - t0;
  p->core->stats.seconds_exposed += t1 - t0;
  p->core->t_start = t0;
  if (rc == HS_OK) {
    p->core->in_progress = true;
    keep_arrays(p, arrays);
  }
  return rc;
}

/* Complete and test (of the reverse: complete) must be given the arrays start had. */
static int check_same_arrays(hs_plan p, void *const *arrays, const char *who) {
  void *const *s = started_arrays(p);
  const bool rev = p->core->reverse_in_progress;
  for (int f = 0; f < p->nfields; f++) {
    if (p->fields[f].pack) continue;
    const char *a = hs__field_ptr(p, arrays, f), *b = hs__field_ptr(p, s, f);
    if (a != b)
      return hs__error(HS_ERR_ARG, "%s: arrays[%d] = %p, but the %s was started with %p "
                                   "(%s the arrays start was given)",
                       who, f, (const void *)a, rev ? "reverse exchange" : "swap",
                       (const void *)b, rev ? "complete takes" : "complete and test take");
  }
  return HS_OK;
}

int hs_swap_test(hs_plan p, void *const *arrays, int *done) {
  if (!p || !done) return hs__error(HS_ERR_ARG, "hs_swap_test: %s is NULL", p ? "done" : "plan");
  *done = 0;
  if (!p->core->in_progress) {
    if (p->core->reverse_in_progress) return other_round(p, "hs_swap_test");
    if (p->core->failed) return hs__round_after_failure(p, "hs_swap_test", false, arrays != NULL);
    hs__error(HS_ERR_STATE, "hs_swap_test: no swap was started on this plan");
    return hs__round_misuse(p, HS_ERR_STATE, false, arrays != NULL);
  }
  int rc = check_same_arrays(p, arrays, "hs_swap_test");
  if (rc != HS_OK) {
    hs__fail_record(p, rc); /* completed as started, by complete */
    return hs__fail_error(p);
  }
  if (!p->ops->test) return HS_OK; /* reports done only through complete */
  double t0 = hs__wtime();
  rc = p->ops->test(p, arrays, done);
  if (rc == HS_OK && *done && !p->core->self_done && own_self_copies(p) && !p->core->failed) {
    hs__self_copy(p, arrays); /* done means every halo cell is written */
    p->core->self_done = true;
  }
  double t = hs__wtime() - t0;
  p->core->stats.seconds_test += t;
  p->core->stats.seconds_exposed += t;
  return rc;
}

int hs_swap_complete(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_swap_complete: plan is NULL");
  if (!p->core->in_progress) return not_started(p, "hs_swap_complete", "swap", false, arrays);
  /* Wrong arrays: the round is completed with the ones it was started with. */
  int arc = check_same_arrays(p, arrays, "hs_swap_complete");
  if (arc != HS_OK) hs__fail_record(p, arc);
  arrays = started_arrays(p);
  double t0 = hs__wtime();
  if (own_self_copies(p) && !p->core->self_done) hs__self_copy(p, arrays);
  p->core->self_done = false;
  int rc = p->ops->complete(p, arrays);
  rc = hs__round_result(p, rc);
  if (rc != HS_OK) hs__fail_record(p, rc); /* from a stage or a delegate, or MPI */
  double t1 = hs__wtime();
  p->core->stats.seconds_complete += t1 - t0;
  p->core->stats.seconds_exposed += t1 - t0;
  p->core->stats.seconds_total += t1 - p->core->t_start;
  p->core->in_progress = false;
  if (rc == HS_OK && p->core->failed) return hs__fail_error(p); /* it failed during this swap */
  if (rc == HS_OK) p->core->stats.swaps++;
  return rc;
}

int hs_swap(hs_plan p, void *const *arrays) {
  int rc = hs_swap_start(p, arrays);
  return rc == HS_OK ? hs_swap_complete(p, arrays) : rc;
}

/* ------------------------------------------------------------------ reverse exchange */
int hs_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_reverse_start: plan is NULL");
  if (p->core->in_progress) return other_round(p, "hs_reverse_start");
  if (p->core->reverse_in_progress) return mid_round(p, "hs_reverse_start");
  if (p->core->failed) return hs__round_after_failure(p, "hs_reverse_start", true, arrays != NULL);
  int rc = HS_OK;
  if (op != HS_OP_SUM && op != HS_OP_MAX && op != HS_OP_MIN && op != HS_OP_REPLACE)
    rc = hs__error(HS_ERR_ARG, "hs_reverse_start: op = %d is not an hs_op", (int)op);
  if (rc == HS_OK) rc = check_arrays(p, arrays, "hs_reverse_start");
  if (rc != HS_OK) return hs__round_fail_here(p, rc, true, arrays != NULL);
  double t0 = hs__wtime();
  p->core->round_flagged = false;
  rc = hs__plan_reverse_start(p, op, arrays);
  if (rc != HS_OK) hs__fail_record(p, rc);
  p->core->stats.seconds_reverse += hs__wtime() - t0;
  if (rc == HS_OK) {
    p->core->reverse_in_progress = true;
    p->core->reverse_op = op;
    keep_arrays(p, arrays);
  }
  return rc;
}

int hs_reverse_complete(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_reverse_complete: plan is NULL");
  if (!p->core->reverse_in_progress)
    return not_started(p, "hs_reverse_complete", "reverse exchange", true, arrays);
  /* Wrong arrays: the reverse is completed with the ones it was started with. */
  int arc = check_same_arrays(p, arrays, "hs_reverse_complete");
  if (arc != HS_OK) hs__fail_record(p, arc);
  arrays = started_arrays(p);
  double t0 = hs__wtime();
  int rc = hs__round_result(p, hs__plan_reverse_complete(p, p->core->reverse_op, arrays));
  if (rc != HS_OK) hs__fail_record(p, rc); /* from a stage or a delegate, or MPI */
  p->core->stats.seconds_reverse += hs__wtime() - t0;
  p->core->reverse_in_progress = false;
  if (rc == HS_OK && p->core->failed) return hs__fail_error(p); /* it failed during this reverse */
  if (rc == HS_OK) p->core->stats.reverses++;
  return rc;
}

int hs_reverse(hs_plan p, hs_op op, void *const *arrays) {
  int rc = hs_reverse_start(p, op, arrays);
  return rc == HS_OK ? hs_reverse_complete(p, arrays) : rc;
}

int hs_accumulate_fill(hs_plan p, hs_op op, void *const *arrays) {
  int rc = hs_reverse(p, op, arrays);
  return rc == HS_OK ? hs_swap(p, arrays) : rc;
}
