/* The reverse exchange (halo -> owner, combined with an hs_op), served by the core for every
 * transport: the forward swap's receive sections are the reverse's send sections and vice
 * versa. Each rank sends every halo box the forward swap writes back to the rank it came
 * from, receives its neighbours' boxes into buffers and combines them into its interior in
 * one fixed order: the plan's offsets in the plan's order (p->core->offsets: canonical, or as given
 * with HS_ORDER_OFFSETS), then field, then component, periodic self contributions in their
 * place. The result therefore does not depend on
 * arrival order, transport or rank numbering. src/engines/reverse_steps.c builds that
 * schedule; this file runs it.
 *
 * Messages move in pieces of whole sections of one offset (about PIECE bytes). The owner
 * receives at most WINDOW pieces at a time into a ring of slots, in the order the steps use
 * them, and posts the next receive when a piece is combined: the slots stay cache-warm, and a
 * receive posted early would only make the first wait copy every message at once (the
 * library copies a large message when it matches it). The sender packs a piece into a ring
 * slot of its own once the piece that used the slot has gone, between its steps; while it
 * waits for a piece of its own and every slot is busy it packs the next piece into a buffer
 * of its own (`obuf`), so no rank ever waits for a slot and none can wait for another in a
 * circle.
 *
 * A transport that reads its on-node neighbours' memory (hs_pull) lets the owner read those
 * neighbours' halo boxes itself instead: the same steps in the same order, each edge guarded
 * by the transport's posted/consumed counters with the roles of the forward swap swapped
 * (docs/design.md, "Reverse exchange"). Off-node peers still go by message.
 *
 * A failed round (hs__failed_round; docs/design.md, "Errors during a swap") sends a zero-byte
 * flag tagged HS_TAG_FAIL in place of every piece, receives every piece into the ring and
 * combines nothing; a pulling transport publishes its failure word instead of its halos.
 * Receives take any tag: a peer's pieces, or its flags, arrive in the order it sent them, and
 * nothing else it sends this rank on the plan's communicator can come before its last piece. */
#include "reverse_state.h"

#include <stdlib.h>
#include <string.h>

/* Post the receives of the incoming pieces below `upto` (each into its ring slot). */
static int post_upto(hs_plan p, struct hs_reverse *r, int upto) {
  for (; r->posted < r->nin && r->posted < upto; r->posted++) {
    const piece *q = &r->in[r->posted];
    HS_MPI(MPI_Irecv(r->ibuf + (size_t)(r->posted % r->window) * r->slot, (int)q->bytes,
                     MPI_BYTE, p->peers[q->peer].rank, MPI_ANY_TAG, p->comm,
                     &r->ireq[r->posted]));
  }
  return HS_OK;
}

/* Pack and send the next outgoing piece into a free send slot, or (force) into its place in
 * obuf; *sent = 0 if it has to wait for a slot. */
static int send_next(hs_plan p, struct hs_reverse *r, void *const *arrays, int force, int *sent) {
  const piece *q = &r->out[r->sent];
  const hs_peer *pe = &p->peers[q->peer];
  int u = r->sent % WINDOW, done = 1;
  *sent = 0;
  if (r->user[u] >= 0) HS_MPI(MPI_Test(&r->oreq[r->user[u]], &done, MPI_STATUS_IGNORE));
  if (!done && !force) return HS_OK;
  char *b = done ? r->oring + (size_t)u * r->oslot
                  : r->obuf + q->base + pe->recv[q->j0].msg_offset;
  if (done) r->user[u] = r->sent;
  hs__pack_sections(p, pe->recv + q->j0, q->j1 - q->j0, arrays, b);
  HS_MPI(MPI_Isend(b, (int)q->bytes, MPI_BYTE, pe->rank, HS_TAG_REVERSE, p->comm,
                   &r->oreq[r->sent]));
  r->sent++;
  *sent = 1;
  return HS_OK;
}

/* Send what the slots allow; with force at least one more piece if any is left. */
static int send_more(hs_plan p, struct hs_reverse *r, void *const *arrays, int force) {
  for (int sent = 1; sent && r->sent < r->nout;) {
    int rc = send_next(p, r, arrays, force, &sent);
    if (rc != HS_OK) return rc;
    force = 0;
  }
  return HS_OK;
}

int hs__reverse_begin(hs_plan p, struct hs_reverse *r, void *const *arrays) {
  r->posted = 0;
  r->sent = 0;
  for (int u = 0; u < WINDOW; u++) r->user[u] = -1;
  memset(r->flagged, 0, (size_t)p->npeers);
  int rc = post_upto(p, r, r->window);
  if (rc != HS_OK || !hs__failed_round(p)) return rc == HS_OK ? send_more(p, r, arrays, 0) : rc;
  for (; r->sent < r->nout; r->sent++) /* a flag in place of every piece */
    HS_MPI(MPI_Isend(NULL, 0, MPI_BYTE, p->peers[r->out[r->sent].peer].rank, HS_TAG_FAIL,
                     p->comm, &r->oreq[r->sent]));
  return HS_OK;
}

/* Piece q has arrived: a flag fails the round here (the peer's failure, once per peer). */
static void arrived(hs_plan p, struct hs_reverse *r, int q, const MPI_Status *st) {
  int k = r->in[q].peer;
  if (st->MPI_TAG != HS_TAG_FAIL || r->flagged[k]) return;
  r->flagged[k] = 1;
  hs__fail_seen(p, p->peers[k].rank);
}

/* Wait for incoming piece q, sending my own pieces meanwhile (the peer may be waiting for
 * them before it can free what I wait for). */
static int wait_piece(hs_plan p, struct hs_reverse *r, void *const *arrays, int q) {
  int done = 0;
  MPI_Status st;
  while (r->ireq[q] != MPI_REQUEST_NULL) {
    HS_MPI(MPI_Test(&r->ireq[q], &done, &st));
    if (done) {
      arrived(p, r, q, &st);
      break;
    }
    if (r->sent == r->nout) {
      HS_MPI(MPI_Wait(&r->ireq[q], &st));
      arrived(p, r, q, &st);
      break;
    }
    int rc = send_more(p, r, arrays, 1);
    if (rc != HS_OK) return rc;
  }
  return HS_OK;
}

/* Wait until edge e has published operation seq; its failure word set to seq is a flag. */
static int open_edge(hs_plan p, struct hs_reverse *r, int e, uint64_t seq) {
  const hs_pull_edge *pe = &r->pull->edges[e];
  bool flag;
  int rc = hs__pull_open(r->pull, e, seq, &flag);
  if (rc != HS_OK) return rc;
  r->open[e] = seq;
  if (flag && !r->flagged[pe->peer]) {
    r->flagged[pe->peer] = 1;
    hs__fail_seen(p, p->peers[pe->peer].rank);
  }
  return HS_OK;
}

/* Pulled step i: read its group if it starts one, then combine it. */
static int pull_step(hs_plan p, struct hs_reverse *r, int i, kernel k, char *field,
                     uint64_t seq, hs_pull_src *src, size_t *from, int *ok) {
  const step *st = &r->steps[i];
  int rc = HS_OK;
  if (st->group) {
    if (r->open[st->edge] != seq) rc = open_edge(p, r, st->edge, seq);
    /* a failed round here or there: nothing to read */
    *ok = rc == HS_OK && !hs__failed_round(p) && !r->flagged[r->pull->edges[st->edge].peer];
    if (*ok) rc = r->pull->source(p, r->pull->ctx, st->edge, st->sec, st->sec + st->group,
                                  r->scratch, src);
    *ok = *ok && rc == HS_OK;
    *from = st->dst->msg_offset; /* src->buf holds the group from here */
  }
  if (*ok && src->buf)
    hs__combine_in(p, st->dst, field, src->buf + (st->dst->msg_offset - *from), k, r->bounce);
  else if (*ok)
    hs__combine_boxes(&src->sec[st->sec], src->fields[src->sec[st->sec].box.field], st->dst, field, k);
  return rc;
}

int hs__reverse_finish(hs_plan p, struct hs_reverse *r, hs_op op, void *const *arrays,
                       uint64_t seq) {
  int err = HS_OK, ok = 0;
  hs_pull_src src = {NULL, NULL, NULL};
  size_t from = 0;
  const bool failed = hs__failed_round(p); /* nothing combined, every piece received */
  for (int i = 0; i < r->nsteps; i++) {
    const step *st = &r->steps[i];
    char *field = hs__field_ptr(p, arrays, st->dst->box.field);
    kernel k = hs__kernel_of(p->fields[st->dst->box.field].type, op);
    if (st->self) {
      if (!failed) hs__combine_self(p, st->dst, st->self, field, k, r->bounce);
    } else if (st->piece >= 0) {
      /* pieces before this one are combined: their slots take the next receives */
      if (r->posted < st->piece + r->window) {
        int rc = post_upto(p, r, st->piece + r->window);
        if (rc != HS_OK && err == HS_OK) err = rc;
      }
      int rc = wait_piece(p, r, arrays, st->piece);
      if (rc != HS_OK && err == HS_OK) err = rc;
      if (err == HS_OK && !failed && !r->flagged[r->in[st->piece].peer])
        hs__combine_in(p, st->dst, field, r->ibuf + st->at, k, r->bounce);
    } else {
      int rc = pull_step(p, r, i, k, field, seq, &src, &from, &ok);
      if (rc != HS_OK && err == HS_OK) err = rc;
      if (i == r->last[st->edge]) /* done with its halos, even after a failure */
        hs__pull_release(r->pull, st->edge, seq);
    }
    if (r->sent < r->nout && err == HS_OK) err = send_more(p, r, arrays, 0);
  }
  while (r->sent < r->nout && err == HS_OK) err = send_more(p, r, arrays, 1);
  while (r->posted < r->nin) { /* pieces no step used (none: every section is a step) */
    int rc = post_upto(p, r, r->posted + 1);
    if (rc != HS_OK) return rc;
    MPI_Status st;
    HS_MPI(MPI_Wait(&r->ireq[r->posted - 1], &st));
    arrived(p, r, r->posted - 1, &st);
  }
  if (r->nout) HS_MPI(MPI_Waitall(r->nout, r->oreq, MPI_STATUSES_IGNORE));
  if (!r->pull) return err;
  /* The caller may overwrite its halos once we return: wait until every neighbour that
   * reads them has finished. */
  int rc = hs__pull_wait_readers(p, r->pull, seq);
  return rc != HS_OK ? rc : err;
}

/* ---------------------------------------------------------------- the core's own */
int hs__reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  (void)op;
  int rc = hs__reverse_create(p, NULL, &p->core->reverse);
  return rc == HS_OK ? hs__reverse_begin(p, p->core->reverse, arrays) : rc;
}

int hs__reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  return hs__reverse_finish(p, p->core->reverse, op, arrays, 0);
}

void hs__reverse_free(hs_plan p) {
  hs__reverse_destroy(p, p->core->reverse);
  p->core->reverse = NULL;
}
