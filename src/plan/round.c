/* Failed rounds (docs/design.md, "Errors during a swap"): how a plan's calls take part in a
 * round they cannot run, with flags in place of data, so that no neighbour waits; and the
 * plan's dispatch that these share with plan.c (inner plans, the reverse). */
#include "hs_core.h"

#include <stdbool.h>

int hs__plan_inner(hs_plan p, hs_plan plans[HS_MAX_INNER]) {
  return p->ops->inner ? p->ops->inner(p, plans, HS_MAX_INNER) : 0;
}

/* The plan's reverse: the transport's own, else the core's (docs/design.md, "Reverse
 * exchange"). */
int hs__plan_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  return p->ops->reverse_start ? p->ops->reverse_start(p, op, arrays)
                               : hs__reverse_start(p, op, arrays);
}

int hs__plan_reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  return p->ops->reverse_complete ? p->ops->reverse_complete(p, op, arrays)
                                  : hs__reverse_complete(p, op, arrays);
}

/* A whole forward round without data, from start to complete, in one call: every out-peer
 * gets a flag and the failure, every in-peer's message is received into scratch, and no
 * field is read or written. A delegating or staged plan hands the failure to the plans that
 * move its data, which do the same. A transport without failed rounds takes part in nothing
 * (the error stays on this rank). given: the caller passed per-swap arrays (nbr: which of its
 * collectives the neighbours call). */
static void flagged_round(hs_plan p, bool given) {
  p->fail_given = given; /* for the transport, the stages or the delegate; this round only */
  bool ran = p->ops->fail_inner && p->ops->fail_inner(p, 0); /* a decorator's plans ran it */
  if (!ran && (p->ops->flags & HS_OPS_FAILROUND)) {
    MPI_Request *texts = NULL;
    int ntexts = 0;
    p->round_failed = true;
    p->core->round_flagged = false;
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

/* The same for the reverse: flags in place of its pieces (and its pulled halos), every piece
 * received into scratch, nothing combined. Every transport's reverse takes part (the core's
 * and the on-node engine's); a sweep's runs in each stage, a delegating sweep's in the
 * delegate. */
static void flagged_reverse_round(hs_plan p) {
  if (p->ops->fail_inner && p->ops->fail_inner(p, 1)) return;
  MPI_Request *texts = NULL;
  int ntexts = 0;
  p->round_failed = true;
  p->core->round_flagged = false;
  if (hs__plan_reverse_start(p, HS_OP_SUM, NULL) == HS_OK) {
    hs__fail_texts_begin(p, 1, &texts, &ntexts);
    hs__plan_reverse_complete(p, HS_OP_SUM, NULL);
  }
  p->round_failed = false;
  hs__fail_texts_end(texts, ntexts);
}

/* This rank found an error (code, hs_error_message()) where a round (reverse: of the reverse)
 * begins: the plan fails and takes part in the round with flags. Returns the error every
 * flagged rank returns: of several ranks failing in the same round, the lowest one's. */
int hs__round_fail_here(hs_plan p, int code, bool reverse, bool given) {
  bool fresh = !p->core->failed;
  hs__fail_record(p, code);
  p->core->round_flagged = false;
  if (reverse)
    flagged_reverse_round(p);
  else
    flagged_round(p, given);
  if (fresh && p->core->round_flagged && p->core->round_in.origin < p->core->failure.origin)
    p->core->failure = p->core->round_in;
  p->core->round_flagged = false;
  return hs__fail_error(p);
}

int hs_round_fail(hs_plan p, int code, int reverse, int arrays_given, const char *message) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_round_fail: plan is NULL");
  if (code == HS_OK)
    return hs__error(HS_ERR_ARG, "hs_round_fail: code = HS_OK (0); a failure code is needed");
  hs__error(code, "%s", message ? message : "hs_round_fail: the caller refused this round");
  return hs__round_fail_here(p, code, reverse != 0, arrays_given != 0);
}

/* Back to usable after a misuse's failed round: the plan and the plans it runs (a delegate,
 * stages), which adopted the failure to run their rounds. */
static void clear_failure(hs_plan p) {
  p->core->failed = false;
  p->core->round_flagged = false;
  hs_plan in[HS_MAX_INNER];
  for (int k = 0, n = hs__plan_inner(p, in); k < n; k++) clear_failure(in[k]);
}

/* A complete or test with no round started (code, hs_error_message()): refused on this rank,
 * and the plan stays usable. Its neighbours may have started the round and wait for it, so it
 * takes part with flags: they return this error (their halos miss its data). Where every rank
 * made the same mistake, only flags cross and every plan stays usable. */
int hs__round_misuse(hs_plan p, int code, bool reverse, bool given) {
  hs__fail_record(p, code); /* first, so the error returned is its own, not a neighbour's */
  int rc = hs__round_fail_here(p, code, reverse, given);
  clear_failure(p);
  return rc;
}

/* A later swap of a failed plan: a failed round as well, so its neighbours learn of the
 * failure rather than wait, and HS_ERR_STATE. */
int hs__round_after_failure(hs_plan p, const char *who, bool reverse, bool given) {
  if (reverse)
    flagged_reverse_round(p);
  else
    flagged_round(p, given);
  return hs__error(HS_ERR_STATE, "%s: the plan failed in an earlier swap (%.900s); free it "
                                 "with hs_plan_free", who, p->core->failure.msg);
}

/* After the transport finished a round: a flag from an in-peer fails the swap here too. */
int hs__round_result(hs_plan p, int rc) {
  if (!p->core->round_flagged) return rc;
  p->core->round_flagged = false;
  if (!p->core->failed) {
    p->core->failure = p->core->round_in;
    p->core->failed = true;
  }
  hs__error(p->core->round_in.code, "%s", p->core->round_in.msg);
  return p->core->round_in.code;
}
