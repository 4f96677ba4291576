/* Plans: transport choice, creation and destruction, the swap state machine, statistics. */
#include "hs_core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hs_plan_desc_init(hs_plan_desc *d) {
  memset(d, 0, sizeof *d);
  d->depth[0] = d->depth[1] = 1;
  d->stencil = HS_STENCIL_BOX;
  d->oneway = HS_ONEWAY_NONE;
  d->transport = HS_TRANSPORT_DEFAULT;
}

void hs_plan_desc_set_order_offsets(hs_plan_desc *d, int n, const int *offsets) {
  if (!d) return;
  d->order = HS_ORDER_OFFSETS;
  d->norder = n;
  d->order_offsets = offsets;
}

void hs_plan_desc_set_order_sweep(hs_plan_desc *d, int n, const int *axes) {
  if (!d) return;
  d->order = HS_ORDER_SWEEP;
  d->nsweep = n;
  for (int k = 0; k < HS_MAX_DIMS; k++) /* no axes given: -1, which validation names */
    d->sweep_axes[k] = k < n ? (axes ? axes[k] : -1) : 0;
}

/* The validated combine order into the plan (the description's list is read only here). */
static void copy_order(hs_plan p, const hs_plan_desc *desc) {
  p->order = desc->order;
  if (p->order == HS_ORDER_OFFSETS) {
    p->norder = desc->norder;
    memcpy(p->order_offsets, desc->order_offsets,
           (size_t)desc->norder * sizeof p->order_offsets[0]);
  } else if (p->order == HS_ORDER_SWEEP) {
    p->nsweep = desc->nsweep;
    memcpy(p->sweep_axes, desc->sweep_axes, sizeof p->sweep_axes);
  }
}

enum {
  HS_CREATE_NESTED = 1u << 0 /* a plan the library makes for itself (hs__plan_nest):
                                HALOSWAP_OPTIONS was meant for the outer plan, not applied */
};

/* ------------------------------------------------------------------ transport choice */
static int resolve_transport(hs_plan p, const hs_plan_desc *desc, unsigned flags,
                             const hs_plan parent) {
  const char *spec = desc->transport_name;
  if (!spec) {
    const char *why = NULL;
    spec = desc->transport == HS_TRANSPORT_DEFAULT ? hs_transport_id_name(desc->transport)
                                                   : hs__transport_known(desc->transport, &why);
    if (!spec)
      return hs__error(HS_ERR_ARG, "hs_plan_create: transport = %d is not an hs_transport_id",
                       (int)desc->transport);
    if (why) return hs__transport_unbuilt_error("hs_plan_create", spec, why);
  }
  const char *colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  if (n == 0 || n >= sizeof p->transport_name)
    return hs__error(HS_ERR_ARG, "hs_plan_create: transport name '%s' is empty or too long",
                     spec);
  memcpy(p->transport_name, spec, n);
  p->transport_name[n] = 0;
  for (char *c = p->transport_name; *c; c++)
    if (*c == '_') *c = '-';
  p->ops = hs__transport_find(p->transport_name);
  const char *why = p->ops ? NULL : hs__transport_unbuilt(p->transport_name);
  if (why) return hs__transport_unbuilt_error("hs_plan_create", p->transport_name, why);
  if (!p->ops) {
    char list[512];
    hs__transport_list(list, sizeof list);
    return hs__error(HS_ERR_ARG, "hs_plan_create: unknown transport '%s' (built: %s)",
                     p->transport_name, list);
  }
  int rc = HS_OK;
  /* A plan nested in one of the same transport takes its options as parsed, less the core's. */
  for (int i = 0; parent && i < parent->noptions; i++)
    if (!hs__core_option(parent->options[i].key)) p->options[p->noptions++] = parent->options[i];
  if (!(flags & HS_CREATE_NESTED))
    rc = hs__options_add(p, getenv("HALOSWAP_OPTIONS"), "HALOSWAP_OPTIONS");
  if (rc == HS_OK && colon) rc = hs__options_add(p, colon + 1, "the transport name");
  if (rc == HS_OK) rc = hs__options_add(p, desc->options, "hs_plan_desc.options");
  if (rc == HS_OK) rc = hs__options_resolve(p);
  return rc;
}

/* ------------------------------------------------------------------ create / free */
static void free_core(hs_plan p) {
  hs__staged_free(p);
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
  free(p->self_bounce);
  free(p->fields);
  free(p->user_fields);
  free(p->region_mask);
  free(p->config);
  hs__fail_free(p);
  if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
  free(p);
}

/* The transport's setup, or the staged exchange's (core option staged=1), and its undoing. */
/* A sweep is staged (staged=1 with it changes nothing), except on a delegating transport,
 * whose plans sweep themselves. */
static int setup(hs_plan p) {
  bool sweep = p->order == HS_ORDER_SWEEP && !(p->ops->flags & HS_OPS_DELEGATES);
  return p->core.staged || sweep ? hs__staged_setup(p) : p->ops->setup(p);
}
static void destroy(hs_plan p) {
  if (!p->staged && p->ops->destroy) p->ops->destroy(p);
}

/* stage_axis, wide: a stage of a staged exchange (hs__plan_nest); 0 otherwise. parent: the
 * plan whose parsed options this one takes (hs__plan_nest), or NULL. */
/* regions, masks: a region set (hs_plan_create_regions) or a parent plan's masks; NULL: none. */
static int plan_create(hs_decomp d, const hs_plan_desc *desc, unsigned flags, int stage_axis,
                       unsigned wide, const hs_plan parent, const hs_region_set regions,
                       const uint32_t *masks, hs_plan *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_plan_create: out is NULL");
  *out = NULL;
  if (!d) return hs__error(HS_ERR_ARG, "hs_plan_create: decomposition is NULL");
  int rc = desc ? hs__check_desc(d, desc) : hs__error(HS_ERR_ARG, "hs_plan_create: desc is NULL");
  rc = hs__agree(d->comm, rc);
  if (rc != HS_OK) return rc;

  hs_plan p = calloc(1, sizeof *p);
  if (!p) rc = hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  rc = hs__agree(d->comm, rc);
  if (rc != HS_OK) {
    free(p);
    return rc;
  }
  p->comm = MPI_COMM_NULL;
  p->decomp = d;
  p->ndims = d->ndims;
  p->rank = d->rank;
  p->size = d->size;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    p->local[a] = d->local[a];
    p->depth[a] = desc->depth[a];
  }
  p->stencil = desc->stencil;
  p->oneway = desc->oneway;
  p->oneway_axis = desc->oneway_axis;
  p->nfields = desc->nfields;
  p->stage_axis = stage_axis;
  p->stage_wide = wide;
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
  if (rc == HS_OK) rc = resolve_transport(p, desc, flags, parent);
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
  rc = hs__agree(p->comm, setup(p));
  if (rc != HS_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hs_error_message());
    destroy(p);
    free_core(p);
    hs__error(rc, "%s", msg);
    return rc;
  }
  if (!p->staged) { /* a staged plan's come from its stages */
    for (int k = 0; k < p->npeers; k++) {
      p->stats.bytes_sent_per_swap += p->peers[k].send_bytes;
      p->stats.bytes_recv_per_swap += p->peers[k].recv_bytes;
    }
    p->stats.bytes_self_per_swap = p->self_bytes;
    p->stats.npeers = p->npeers;
  }
  *out = p;
  return HS_OK;
}

int hs__plan_nest(hs_plan p, const char *spec, int stage_axis, unsigned wide, hs_plan *out) {
  hs_plan_desc d;
  hs_plan_desc_init(&d);
  for (int a = 0; a < HS_MAX_DIMS; a++) d.depth[a] = p->depth[a];
  d.stencil = p->stencil;
  d.nfields = p->nfields;
  d.fields = p->user_fields;
  d.transport_name = spec ? spec : p->transport_name;
  if (!stage_axis) { /* a stage's geometry is its own; the combine order is the plan's */
    d.oneway = p->oneway;
    d.oneway_axis = p->oneway_axis;
    d.order = p->order;
    d.norder = p->norder;
    d.order_offsets = &p->order_offsets[0][0];
    d.nsweep = p->nsweep;
    memcpy(d.sweep_axes, p->sweep_axes, sizeof d.sweep_axes);
  }
  return plan_create(p->decomp, &d, HS_CREATE_NESTED, stage_axis, wide, spec ? NULL : p, NULL,
                     p->region_mask, out);
}

int hs_plan_create(hs_decomp d, const hs_plan_desc *desc, hs_plan *out) {
  return plan_create(d, desc, 0, 0, 0u, NULL, NULL, NULL, out);
}

int hs_plan_create_regions(hs_decomp d, const hs_plan_desc *desc, hs_region_set regions,
                           hs_plan *out) {
  return plan_create(d, desc, 0, 0, 0u, NULL, regions, NULL, out);
}

int hs_plan_free(hs_plan *pp) {
  if (!pp || !*pp) return HS_OK;
  hs_plan p = *pp;
  int rc = HS_OK;
  if (p->in_progress || p->reverse_in_progress)
    rc = hs__error(HS_ERR_STATE, "hs_plan_free: a %s is in progress; complete it first",
                   p->in_progress ? "swap" : "reverse exchange");
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

static hs_plan delegate_of(hs_plan p) {
  return (p->ops->flags & HS_OPS_DELEGATES) && p->ops->delegate ? p->ops->delegate(p) : NULL;
}

/* The plan writes its halos itself (not a delegating plan's delegate, not a staged plan's
 * stages), so the core does its periodic self copies. */
static bool own_self_copies(const hs_plan p) {
  return !(p->ops->flags & HS_OPS_DELEGATES) && !p->staged;
}

/* A whole forward round without data, from start to complete, in one call: every out-peer
 * gets a flag and the failure, every in-peer's message is received into scratch, and no
 * field is read or written. A delegating or staged plan hands the failure to the plans that
 * move its data, which do the same. A transport without failed rounds takes part in nothing
 * (the error stays on this rank). given: the caller passed per-swap arrays (nbr: which of its
 * collectives the neighbours call). */
static void failed_round(hs_plan p, bool given) {
  hs_plan d = delegate_of(p);
  p->fail_given = given; /* for the transport, the stages or the delegate; this round only */
  if (d) {
    hs__fail_adopt(d, p);
    d->fail_given = given;
    hs_swap_start(d, NULL);
  } else if (p->staged) {
    hs__staged_fail(p);
  } else if (p->ops->flags & HS_OPS_FAILROUND) {
    MPI_Request *texts = NULL;
    int ntexts = 0;
    p->round_failed = true;
    p->round_flagged = false;
    /* The texts after the flags: a neighbour receiving with any tag meets the flag first. */
    if (p->ops->start(p, NULL) == HS_OK) {
      hs__fail_texts_begin(p, 0, &texts, &ntexts);
      p->ops->complete(p, NULL);
    }
    p->round_failed = false;
    hs__fail_texts_end(texts, ntexts);
  }
  p->fail_given = false;
}

static int reverse_begin(hs_plan p, hs_op op, void *const *arrays);
static int reverse_end(hs_plan p, hs_op op, void *const *arrays);

/* The same for the reverse: flags in place of its pieces (and its pulled halos), every piece
 * received into scratch, nothing combined. Every transport's reverse takes part (the core's
 * and the on-node engine's); a sweep's runs in each stage, a delegating sweep's in the
 * delegate. */
static void failed_reverse_round(hs_plan p) {
  hs_plan d = p->order == HS_ORDER_SWEEP ? delegate_of(p) : NULL;
  if (d) {
    hs__fail_adopt(d, p);
    hs_reverse_start(d, HS_OP_SUM, NULL);
    return;
  }
  if (p->staged && p->order == HS_ORDER_SWEEP) {
    hs__sweep_reverse_fail(p, 0);
    return;
  }
  MPI_Request *texts = NULL;
  int ntexts = 0;
  p->round_failed = true;
  p->round_flagged = false;
  if (reverse_begin(p, HS_OP_SUM, NULL) == HS_OK) {
    hs__fail_texts_begin(p, 1, &texts, &ntexts);
    reverse_end(p, HS_OP_SUM, NULL);
  }
  p->round_failed = false;
  hs__fail_texts_end(texts, ntexts);
}

/* This rank found an error (code, hs_error_message()) where a round (reverse: of the reverse)
 * begins: the plan fails and takes part in the round with flags. Returns the error every
 * flagged rank returns: of several ranks failing in the same round, the lowest one's. */
static int fail_here(hs_plan p, int code, bool reverse, bool given) {
  bool fresh = !p->failed;
  hs__fail_local(p, code);
  p->round_flagged = false;
  if (reverse)
    failed_reverse_round(p);
  else
    failed_round(p, given);
  if (fresh && p->round_flagged && p->round_in.origin < p->failure.origin)
    p->failure = p->round_in;
  p->round_flagged = false;
  return hs__fail_return(p);
}

/* The Fortran module's source_data checks: source_data was given (per-swap arrays). */
int hs__swap_fail(hs_plan p, int code) { return fail_here(p, code, false, true); }

int hs_round_fail(hs_plan p, int code, int reverse, int arrays_given, const char *message) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_round_fail: plan is NULL");
  if (code == HS_OK)
    return hs__error(HS_ERR_ARG, "hs_round_fail: code = HS_OK (0); a failure code is needed");
  hs__error(code, "%s", message ? message : "hs_round_fail: the caller refused this round");
  return fail_here(p, code, reverse != 0, arrays_given != 0);
}

/* Back to usable after a misuse's failed round: the plan and the plans it runs (a delegate,
 * stages), which adopted the failure to run their rounds. */
static void unfail(hs_plan p) {
  p->failed = false;
  p->round_flagged = false;
  hs_plan d = delegate_of(p);
  if (d) unfail(d);
  if (p->staged) hs__staged_each(p, unfail);
}

/* A complete or test with no round started (code, hs_error_message()): refused on this rank,
 * and the plan stays usable. Its neighbours may have started the round and wait for it, so it
 * takes part with flags: they return this error (their halos miss its data). Where every rank
 * made the same mistake, only flags cross and every plan stays usable. */
static int misuse_round(hs_plan p, int code, bool reverse, bool given) {
  hs__fail_local(p, code); /* first, so the error returned is its own, not a neighbour's */
  int rc = fail_here(p, code, reverse, given);
  unfail(p);
  return rc;
}

/* A later swap of a failed plan: a failed round as well, so its neighbours learn of the
 * failure rather than wait, and HS_ERR_STATE. */
static int failed_plan(hs_plan p, const char *who, bool reverse, bool given) {
  if (reverse)
    failed_reverse_round(p);
  else
    failed_round(p, given);
  return hs__error(HS_ERR_STATE, "%s: the plan failed in an earlier swap (%.900s); free it "
                                 "with hs_plan_free", who, p->failure.msg);
}

/* The arrays a swap was started with, for complete (which must be given the same ones). */
static void keep_arrays(hs_plan p, void *const *arrays) {
  p->round_given = false;
  if (!arrays) return;
  if (!p->round_arrays) p->round_arrays = calloc((size_t)p->nfields, sizeof *p->round_arrays);
  if (!p->round_arrays) return; /* out of memory: complete uses its own arrays, unchecked */
  for (int f = 0; f < p->nfields; f++) p->round_arrays[f] = arrays[f];
  p->round_given = true;
}

static void *const *started_arrays(const hs_plan p) {
  return p->round_given ? (void *const *)p->round_arrays : NULL;
}

/* A start in the middle of a round (forward or reverse): no round began, so it is refused on
 * this rank alone; the round in progress goes on as started and the plan stays usable. */
static int mid_round(hs_plan p, const char *who) {
  return hs__error(HS_ERR_STATE, "%s: a %s is already in progress on this plan", who,
                   p->in_progress ? "swap" : "reverse exchange");
}

/* A call of the other kind of round than the one in progress (a reverse during a swap, a
 * swap's complete or test during a reverse): no round began that anyone waits on, and the one
 * in progress goes on, so it is refused on this rank only. */
static int other_round(hs_plan p, const char *who) {
  return hs__error(HS_ERR_STATE, "%s: a %s is in progress on this plan", who,
                   p->in_progress ? "swap" : "reverse exchange");
}

int hs_swap_start(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_swap_start: plan is NULL");
  if (p->in_progress || p->reverse_in_progress) return mid_round(p, "hs_swap_start");
  /* A nested plan's failed round is started with NULL: its outer plan set fail_given. */
  if (p->failed) return failed_plan(p, "hs_swap_start", false, arrays || p->fail_given);
  int rc = check_arrays(p, arrays, "hs_swap_start");
  if (rc != HS_OK) return fail_here(p, rc, false, arrays != NULL);
  double t0 = hs__wtime();
  p->round_flagged = false;
  rc = p->staged ? hs__staged_start(p, arrays) : p->ops->start(p, arrays);
  if (rc != HS_OK) hs__fail_local(p, rc);
  double t1 = hs__wtime();
  p->stats.seconds_start += t1 - t0;
  p->stats.seconds_exposed += t1 - t0;
  p->t_start = t0;
  if (rc == HS_OK) {
    p->in_progress = true;
    keep_arrays(p, arrays);
  }
  return rc;
}

/* Complete and test (of the reverse: complete) must be given the arrays start had. */
static int check_same_arrays(hs_plan p, void *const *arrays, const char *who) {
  void *const *s = started_arrays(p);
  const bool rev = p->reverse_in_progress;
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

/* After the transport finished a round: a flag from an in-peer fails the swap here too. */
static int round_result(hs_plan p, int rc) {
  if (!p->round_flagged) return rc;
  p->round_flagged = false;
  if (!p->failed) {
    p->failure = p->round_in;
    p->failed = true;
  }
  hs__error(p->round_in.code, "%s", p->round_in.msg);
  return p->round_in.code;
}

int hs_swap_test(hs_plan p, void *const *arrays, int *done) {
  if (!p || !done) return hs__error(HS_ERR_ARG, "hs_swap_test: %s is NULL", p ? "done" : "plan");
  *done = 0;
  if (!p->in_progress) {
    if (p->reverse_in_progress) return other_round(p, "hs_swap_test");
    if (p->failed) return failed_plan(p, "hs_swap_test", false, arrays != NULL);
    hs__error(HS_ERR_STATE, "hs_swap_test: no swap was started on this plan");
    return misuse_round(p, HS_ERR_STATE, false, arrays != NULL);
  }
  int rc = check_same_arrays(p, arrays, "hs_swap_test");
  if (rc != HS_OK) {
    hs__fail_local(p, rc); /* completed as started, by complete */
    return hs__fail_return(p);
  }
  if (!p->staged && !p->ops->test) return HS_OK; /* reports done only through complete */
  double t0 = hs__wtime();
  rc = p->staged ? hs__staged_test(p, arrays, done) : p->ops->test(p, arrays, done);
  if (rc == HS_OK && *done && !p->self_done && own_self_copies(p) && !p->failed) {
    hs__self_copy(p, arrays); /* done means every halo cell is written */
    p->self_done = true;
  }
  double t = hs__wtime() - t0;
  p->stats.seconds_test += t;
  p->stats.seconds_exposed += t;
  return rc;
}

int hs_swap_complete(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_swap_complete: plan is NULL");
  if (!p->in_progress) {
    if (p->reverse_in_progress) return other_round(p, "hs_swap_complete");
    if (p->failed) return hs__error(HS_ERR_STATE, "hs_swap_complete: no swap is in progress "
                                                  "(the plan failed: %.900s)", p->failure.msg);
    hs__error(HS_ERR_STATE, "hs_swap_complete: no swap was started on this plan");
    return misuse_round(p, HS_ERR_STATE, false, arrays != NULL);
  }
  /* Wrong arrays: the round is completed with the ones it was started with. */
  int arc = check_same_arrays(p, arrays, "hs_swap_complete");
  if (arc != HS_OK) hs__fail_local(p, arc);
  arrays = started_arrays(p);
  double t0 = hs__wtime();
  if (own_self_copies(p) && !p->self_done) hs__self_copy(p, arrays);
  p->self_done = false;
  int rc = p->staged ? hs__staged_complete(p, arrays) : p->ops->complete(p, arrays);
  rc = round_result(p, rc);
  if (rc != HS_OK) hs__fail_local(p, rc); /* from a stage or a delegate, or MPI */
  double t1 = hs__wtime();
  p->stats.seconds_complete += t1 - t0;
  p->stats.seconds_exposed += t1 - t0;
  p->stats.seconds_total += t1 - p->t_start;
  p->in_progress = false;
  if (rc == HS_OK && p->failed) return hs__fail_return(p); /* it failed during this swap */
  if (rc == HS_OK) p->stats.swaps++;
  return rc;
}

int hs_swap(hs_plan p, void *const *arrays) {
  int rc = hs_swap_start(p, arrays);
  return rc == HS_OK ? hs_swap_complete(p, arrays) : rc;
}

/* ------------------------------------------------------------------ reverse exchange */
/* The plan's reverse: a staged plan reverses directly (docs/design.md, "Staged exchange"); a
 * sweep reverses stage by stage, a delegating one through the plan that sweeps. */
static int reverse_begin(hs_plan p, hs_op op, void *const *arrays) {
  hs_plan dl = p->order == HS_ORDER_SWEEP ? delegate_of(p) : NULL;
  if (dl) return hs_reverse_start(dl, op, arrays);
  if (p->staged && p->order == HS_ORDER_SWEEP) return hs__sweep_reverse_start(p, op, arrays);
  return p->ops->reverse_start && !p->staged ? p->ops->reverse_start(p, op, arrays)
                                             : hs__reverse_start(p, op, arrays);
}

static int reverse_end(hs_plan p, hs_op op, void *const *arrays) {
  hs_plan dl = p->order == HS_ORDER_SWEEP ? delegate_of(p) : NULL;
  if (dl) return hs_reverse_complete(dl, arrays);
  if (p->staged && p->order == HS_ORDER_SWEEP) return hs__sweep_reverse_complete(p, op, arrays);
  return p->ops->reverse_complete && !p->staged ? p->ops->reverse_complete(p, op, arrays)
                                                : hs__reverse_complete(p, op, arrays);
}

int hs_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_reverse_start: plan is NULL");
  if (p->in_progress) return other_round(p, "hs_reverse_start");
  if (p->reverse_in_progress) return mid_round(p, "hs_reverse_start");
  if (p->failed) return failed_plan(p, "hs_reverse_start", true, arrays != NULL);
  int rc = HS_OK;
  if (op != HS_OP_SUM && op != HS_OP_MAX && op != HS_OP_MIN && op != HS_OP_REPLACE)
    rc = hs__error(HS_ERR_ARG, "hs_reverse_start: op = %d is not an hs_op", (int)op);
  if (rc == HS_OK) rc = check_arrays(p, arrays, "hs_reverse_start");
  if (rc != HS_OK) return fail_here(p, rc, true, arrays != NULL);
  double t0 = hs__wtime();
  p->round_flagged = false;
  rc = reverse_begin(p, op, arrays);
  if (rc != HS_OK) hs__fail_local(p, rc);
  p->stats.seconds_reverse += hs__wtime() - t0;
  if (rc == HS_OK) {
    p->reverse_in_progress = true;
    p->reverse_op = op;
    keep_arrays(p, arrays);
  }
  return rc;
}

int hs_reverse_complete(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_reverse_complete: plan is NULL");
  if (!p->reverse_in_progress) {
    if (p->in_progress) return other_round(p, "hs_reverse_complete");
    if (p->failed)
      return hs__error(HS_ERR_STATE, "hs_reverse_complete: no reverse exchange is in progress "
                                     "(the plan failed: %.900s)", p->failure.msg);
    hs__error(HS_ERR_STATE, "hs_reverse_complete: no reverse exchange was started on this "
                            "plan");
    return misuse_round(p, HS_ERR_STATE, true, arrays != NULL);
  }
  /* Wrong arrays: the reverse is completed with the ones it was started with. */
  int arc = check_same_arrays(p, arrays, "hs_reverse_complete");
  if (arc != HS_OK) hs__fail_local(p, arc);
  arrays = started_arrays(p);
  double t0 = hs__wtime();
  int rc = round_result(p, reverse_end(p, p->reverse_op, arrays));
  if (rc != HS_OK) hs__fail_local(p, rc); /* from a stage or a delegate, or MPI */
  p->stats.seconds_reverse += hs__wtime() - t0;
  p->reverse_in_progress = false;
  if (rc == HS_OK && p->failed) return hs__fail_return(p); /* it failed during this reverse */
  if (rc == HS_OK) p->stats.reverses++;
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

static uint64_t bytes_allocated(hs_plan p) {
  hs_plan d = delegate_of(p);
  return p->core_bytes + p->transport_bytes + (d ? bytes_allocated(d) : 0) +
         hs__staged_bytes(p);
}

int hs_plan_get_stats(hs_plan p, hs_plan_stats *st) {
  if (!p || !st) return hs__error(HS_ERR_ARG, "hs_plan_get_stats: NULL argument");
  *st = p->stats;
  st->bytes_allocated = bytes_allocated(p);
  return HS_OK;
}

int hs_plan_reset_stats(hs_plan p) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_plan_reset_stats: plan is NULL");
  p->stats.swaps = 0;
  p->stats.seconds_start = p->stats.seconds_complete = 0;
  p->stats.seconds_total = p->stats.seconds_exposed = p->stats.seconds_test = 0;
  p->stats.reverses = 0;
  p->stats.seconds_reverse = 0;
  return HS_OK;
}

const char *hs_plan_transport(hs_plan p) { return p ? p->transport_name : NULL; }

const char *hs_plan_selected_transport(hs_plan p) {
  if (!p) return NULL;
  hs_plan d = delegate_of(p);
  return d ? hs_plan_selected_transport(d) : p->transport_name;
}

int hs_plan_describe(hs_plan p, char *buf, size_t len) {
  if (!p || !buf || !len) return hs__error(HS_ERR_ARG, "hs_plan_describe: NULL argument");
  size_t n = 0;
  buf[0] = 0;
  hs__appendf(buf, len, &n, "transport %s", p->transport_name);
  hs__options_describe(p, buf, len, &n);
  hs__remap_describe(p, buf, len, &n);
  hs__appendf(buf, len, &n, "; rank %d; %d fields; depth %d,%d,%d; %s; %d offsets; ", p->rank,
              p->nfields, p->depth[0], p->depth[1], p->depth[2],
              p->stencil == HS_STENCIL_BOX ? "box" : "star", p->noffsets);
  hs__order_describe(p, buf, len, &n);
  hs__regions_describe(p, buf, len, &n);
  if (p->staged) {
    hs__staged_describe(p, buf, len, &n);
  } else {
    hs__appendf(buf, len, &n, "%d peers:", p->npeers);
    for (int k = 0; k < p->npeers; k++)
      hs__appendf(buf, len, &n, " [%d: send %zu B, recv %zu B]", p->peers[k].rank,
                  p->peers[k].send_bytes, p->peers[k].recv_bytes);
    hs__appendf(buf, len, &n, "; self %zu B", p->self_bytes);
  }
  hs__appendf(buf, len, &n, "; halo stores %s", p->stream ? "streaming" : "cached");
  hs__appendf(buf, len, &n, "; allocated %llu B", (unsigned long long)bytes_allocated(p));
  if (p->ops->describe && !p->staged && n + 1 < len) p->ops->describe(p, buf + n, len - n);
  return HS_OK;
}
