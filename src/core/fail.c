/* Errors during a swap (docs/design.md, "Errors during a swap"): a rank whose swap fails
 * still takes part in the round with a flag in place of its data, so no neighbour waits for
 * data that never comes; the failure's text goes to each out-peer by a message of its own,
 * and every rank that saw a flag returns the same error. */
#include "hs_core.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hs__fail_seen(hs_plan p, int rank) {
  hs_failure f;
  memset(&f, 0, sizeof f);
  int mrc = MPI_Recv(&f, (int)sizeof f, MPI_BYTE, rank, HS_TAG_FAILTEXT, p->comm,
                     MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS) { /* the flag alone: still a failure, named by its sender */
    f.code = HS_ERR_MPI;
    f.origin = rank;
    snprintf(f.msg, sizeof f.msg, "rank %d: its swap failed (its message was lost)", rank);
  }
  f.msg[sizeof f.msg - 1] = 0;
  if (!p->round_flagged || f.origin < p->round_in.origin) p->round_in = f;
  p->round_flagged = true;
}

char *hs__fail_scratch(hs_plan p, size_t bytes) {
  if (bytes > p->fail_scratch_bytes) {
    char *b = realloc(p->fail_scratch, bytes);
    if (!b) return NULL;
    p->fail_scratch = b;
    p->fail_scratch_bytes = bytes;
  }
  return p->fail_scratch ? p->fail_scratch : (p->fail_scratch = malloc(1));
}

int hs__fail_local(hs_plan p, int code) {
  if (!p->failed) {
    const char *m = hs_error_message();
    p->failure.code = code;
    p->failure.origin = p->rank;
    if (strncmp(m, "rank ", 5) == 0)
      snprintf(p->failure.msg, sizeof p->failure.msg, "%s", m);
    else
      snprintf(p->failure.msg, sizeof p->failure.msg, "rank %d: %.1000s", p->rank, m);
    p->failed = true;
  }
  return code;
}

void hs__fail_adopt(hs_plan p, const hs_plan from) {
  if (p->failed) return;
  p->failure = from->failure;
  p->failed = true;
}

int hs__fail_texts_begin(hs_plan p, int reverse, MPI_Request **reqs, int *n) {
  *n = 0;
  *reqs = malloc((size_t)(p->npeers > 0 ? p->npeers : 1) * sizeof **reqs);
  if (!*reqs) return hs__error(HS_ERR_NOMEM, "out of memory sending a swap's failure");
  for (int k = 0; k < p->npeers; k++)
    if ((reverse ? p->peers[k].recv_bytes : p->peers[k].send_bytes) &&
        MPI_Isend(&p->failure, (int)sizeof p->failure, MPI_BYTE, p->peers[k].rank,
                  HS_TAG_FAILTEXT, p->comm, &(*reqs)[*n]) == MPI_SUCCESS)
      (*n)++;
  return HS_OK;
}

void hs__fail_texts_end(MPI_Request *reqs, int n) {
  if (n) MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
  free(reqs);
}

int hs__fail_return(hs_plan p) {
  hs__error(p->failure.code, "%s", p->failure.msg);
  return p->failure.code;
}

void hs__fail_free(hs_plan p) {
  free(p->fail_scratch);
  free(p->round_arrays);
  p->fail_scratch = NULL;
  p->round_arrays = NULL;
}

/* ------------------------------------------------------------------ failed rounds */
/* A whole forward round without data, from start to complete, in one call: every out-peer
 * gets a flag and the failure, every in-peer's message is received into scratch, and no
 * field is read or written. A delegating or staged plan hands the failure to the plans that
 * move its data, which do the same. A transport without failed rounds takes part in nothing
 * (the error stays on this rank). given: the caller passed per-swap arrays (nbr: which of its
 * collectives the neighbours call). */
static void failed_round(hs_plan p, bool given) {
  p->fail_given = given; /* for the transport, the stages or the delegate; this round only */
  bool ran = p->ops->fail_inner && p->ops->fail_inner(p, 0); /* a decorator's plans ran it */
  if (!ran && (p->ops->flags & HS_OPS_FAILROUND)) {
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

/* The same for the reverse: flags in place of its pieces (and its pulled halos), every piece
 * received into scratch, nothing combined. Every transport's reverse takes part (the core's
 * and the on-node engine's); a sweep's runs in each stage, a delegating sweep's in the
 * delegate. */
static void failed_reverse_round(hs_plan p) {
  if (p->ops->fail_inner && p->ops->fail_inner(p, 1)) return;
  MPI_Request *texts = NULL;
  int ntexts = 0;
  p->round_failed = true;
  p->round_flagged = false;
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
int hs__swap_fail(hs_plan p, int code) { return hs__round_fail_here(p, code, false, true); }

int hs_round_fail(hs_plan p, int code, int reverse, int arrays_given, const char *message) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_round_fail: plan is NULL");
  if (code == HS_OK)
    return hs__error(HS_ERR_ARG, "hs_round_fail: code = HS_OK (0); a failure code is needed");
  hs__error(code, "%s", message ? message : "hs_round_fail: the caller refused this round");
  return hs__round_fail_here(p, code, reverse != 0, arrays_given != 0);
}

/* Back to usable after a misuse's failed round: the plan and the plans it runs (a delegate,
 * stages), which adopted the failure to run their rounds. */
static void unfail(hs_plan p) {
  p->failed = false;
  p->round_flagged = false;
  hs_plan in[HS_MAX_DIMS];
  for (int k = 0, n = hs__plan_inner(p, in); k < n; k++) unfail(in[k]);
}

/* A complete or test with no round started (code, hs_error_message()): refused on this rank,
 * and the plan stays usable. Its neighbours may have started the round and wait for it, so it
 * takes part with flags: they return this error (their halos miss its data). Where every rank
 * made the same mistake, only flags cross and every plan stays usable. */
int hs__round_misuse(hs_plan p, int code, bool reverse, bool given) {
  hs__fail_local(p, code); /* first, so the error returned is its own, not a neighbour's */
  int rc = hs__round_fail_here(p, code, reverse, given);
  unfail(p);
  return rc;
}

/* A later swap of a failed plan: a failed round as well, so its neighbours learn of the
 * failure rather than wait, and HS_ERR_STATE. */
int hs__round_after_failure(hs_plan p, const char *who, bool reverse, bool given) {
  if (reverse)
    failed_reverse_round(p);
  else
    failed_round(p, given);
  return hs__error(HS_ERR_STATE, "%s: the plan failed in an earlier swap (%.900s); free it "
                                 "with hs_plan_free", who, p->failure.msg);
}

/* After the transport finished a round: a flag from an in-peer fails the swap here too. */
int hs__round_result(hs_plan p, int rc) {
  if (!p->round_flagged) return rc;
  p->round_flagged = false;
  if (!p->failed) {
    p->failure = p->round_in;
    p->failed = true;
  }
  hs__error(p->round_in.code, "%s", p->round_in.msg);
  return p->round_in.code;
}
