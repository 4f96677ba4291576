/* The reverse exchange (halo -> owner, combined with an hs_op), served by the core for every
 * transport: the forward swap's receive sections are the reverse's send sections and vice
 * versa. Each rank sends every halo box the forward swap writes back to the rank it came
 * from, receives its neighbours' boxes into buffers and combines them into its interior in
 * one fixed order: the plan's offsets in the plan's order (p->core->offsets: canonical, or as given
 * with HS_ORDER_OFFSETS), then field, then component, periodic self contributions in their
 * place. The result therefore does not depend on
 * arrival order, transport or rank numbering.
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
#include "hs_core.h"

#include <stdlib.h>
#include <string.h>

#define PIECE ((size_t)128 * 1024)
#define GROUP ((size_t)256 * 1024) /* pulled sections read at once (a system call for cma) */
#define WINDOW 4

/* ---------------------------------------------------------------- combining (src/geometry/combine.c) */
typedef hs_run_fn kernel; /* dst op= src, element by element, over n bytes */

/* ---------------------------------------------------------------- engine */
typedef struct {
  int peer;      /* index in p->peers */
  int j0, j1;    /* its sections [j0, j1) */
  size_t base;   /* offset of the peer's whole message in the buffer */
  size_t bytes;
  int turn;      /* its index among its peer's pieces */
} piece;

typedef struct {
  const hs_section *dst;  /* interior strip (a forward send section) */
  const hs_section *self; /* self: the halo box (a forward receive section); else NULL */
  int piece;              /* message: the incoming piece; else -1 */
  int edge, sec;          /* pulled: the edge and the index of dst in the peer's sections */
  int group;              /* pulled: sections read together from here (0: not a first) */
  size_t at;              /* message: offset of the section in ibuf */
} step;

struct hs_reverse {
  const hs_pull *pull;    /* NULL: every peer by message */
  int nin, nout, nsteps;
  piece *in, *out;
  MPI_Request *ireq, *oreq;
  int window, posted;     /* incoming pieces: receives in flight at most, and posted so far */
  size_t slot;            /* bytes of a receive slot (ibuf holds `window` of them) */
  int sent;               /* outgoing pieces packed and sent so far (in r->out order) */
  size_t oslot;           /* bytes of a send slot (oring holds WINDOW of them) */
  int user[WINDOW];       /* per send slot: the outgoing piece in it, -1: free */
  char *ibuf, *obuf, *oring, *bounce, *scratch;
  step *steps;
  int *last;              /* per edge: its last step (-1: none) */
  uint64_t *open;         /* per edge: the operation its posted counter was seen for */
  unsigned char *flagged; /* per peer: it flagged this round (its pieces hold no data) */
};

/* End of the piece that starts at section j: whole sections up to about PIECE bytes. Both
 * ends of a message see the same section sizes in the same order and cut alike. */
static int piece_end(const hs_section *s, int n, int j) {
  size_t b = 0;
  int o = s[j].offset_index;
  while (j < n && s[j].offset_index == o && (b == 0 || b + s[j].bytes <= PIECE))
    b += s[j++].bytes;
  return j;
}

/* Bytes of sections [j, e) of a message. */
static size_t span(const hs_section *s, int j, int e) {
  return s[e - 1].msg_offset + s[e - 1].bytes - s[j].msg_offset;
}

/* Cut every message peer k exchanges with this rank (nothing for pulled peers); *nin and
 * *nout count the pieces, and with in/out non-NULL they are filled. */
static void cut(const hs_plan p, const int *edge_of, piece *in, piece *out, int *nin, int *nout) {
  size_t ib = 0, ob = 0;
  *nin = *nout = 0;
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *pe = &p->peers[k];
    if (edge_of[k] >= 0) continue;
    for (int j = 0; pe->send_bytes && j < pe->nsend;) { /* what I sent forward comes back */
      int e = piece_end(pe->send, pe->nsend, j);
      if (in) in[*nin] = (piece){k, j, e, ib, span(pe->send, j, e), 0};
      (*nin)++;
      j = e;
    }
    for (int j = 0, t = 0; pe->recv_bytes && j < pe->nrecv; t++) {
      int e = piece_end(pe->recv, pe->nrecv, j);
      if (out) out[*nout] = (piece){k, j, e, ob, span(pe->recv, j, e), t};
      (*nout)++;
      j = e;
    }
    ib += pe->send_bytes;
    ob += pe->recv_bytes;
  }
}

/* Within each stretch of steps that read their data where it lies (self contributions, and
 * pulled ones whose source may be read in any order), go field by field: stable, so every
 * (field, component) still sees its contributions in the step order, and the bits are the
 * same; but each field's overlapping interior strips are combined while they are cached,
 * instead of after every other field's (30 fields of the MONC case overflow the cache). */
static void field_major(const hs_plan p, struct hs_reverse *r) {
  step *tmp = malloc((size_t)(r->nsteps + 1) * sizeof(step));
  int *at = malloc((size_t)(p->nfields + 1) * sizeof(int));
  for (int a = 0, b; tmp && at && a < r->nsteps; a = b + 1) {
    for (b = a; b < r->nsteps; b++)
      if (!r->steps[b].self && !(r->steps[b].edge >= 0 && r->pull->any_order)) break;
    memset(at, 0, (size_t)(p->nfields + 1) * sizeof(int));
    for (int i = a; i < b; i++) at[r->steps[i].dst->box.field + 1]++;
    for (int f = 0; f < p->nfields; f++) at[f + 1] += at[f];
    for (int i = a; i < b; i++) tmp[a + at[r->steps[i].dst->box.field]++] = r->steps[i];
    memcpy(r->steps + a, tmp + a, (size_t)(b - a) * sizeof(step));
  }
  free(tmp); /* out of memory: the canonical order is as right, only slower */
  free(at);
}

/* The steps in the plan's order: offsets as p->core->offsets lists them, then (within a message or
 * the self list) field, comp. Pulled steps of one edge with consecutive sections form groups
 * of about GROUP. */
static void order_steps(const hs_plan p, struct hs_reverse *r, const int *edge_of) {
  /* Per offset: the self copies, then the peers in their order (a Cartesian plan has one of
   * these per offset, send_to[o]; a box decomposition's may have several). */
  for (int o = 0; o < p->core->noffsets; o++) {
    for (int i = 0; i < p->nself; i++)
      if (p->self[i].src.offset_index == o)
        r->steps[r->nsteps++] = (step){&p->self[i].src, &p->self[i].dst, -1, -1, -1, 0, 0};
    for (int k = 0; k < p->npeers; k++) {
      const hs_peer *pe = &p->peers[k];
      for (int i = 0; i < pe->nsend; i++) {
        if (pe->send[i].offset_index != o) continue;
        step st = {&pe->send[i], NULL, -1, edge_of[k], i, 0, 0};
        for (int q = 0; edge_of[k] < 0 && q < r->nin; q++)
          if (r->in[q].peer == k && i >= r->in[q].j0 && i < r->in[q].j1) {
            st.piece = q;
            st.at = pe->send[i].msg_offset - pe->send[r->in[q].j0].msg_offset;
          }
        r->steps[r->nsteps++] = st;
      }
    }
  }
  field_major(p, r);
  size_t b = 0;
  step *first = NULL;
  for (int i = 0; i < r->nsteps; i++) {
    step *st = &r->steps[i];
    if (st->edge < 0) {
      first = NULL;
      continue;
    }
    r->last[st->edge] = i;
    if (first && first->edge == st->edge && st->sec == (st - 1)->sec + 1 &&
        b + st->dst->bytes <= GROUP) {
      b += st->dst->bytes;
      first->group++;
      continue;
    }
    first = st;
    st->group = 1;
    b = st->dst->bytes;
  }
}

/* Number the incoming pieces in the order the steps use them, which is the order they are
 * received in: pieces never span two offsets, so each is combined completely before the next
 * one starts and a ring of `window` slots holds the ones in flight. */
static int receive_order(hs_plan p, struct hs_reverse *r) {
  int *to = malloc((size_t)(r->nin + 1) * sizeof(int));
  piece *sorted = malloc((size_t)(r->nin + 1) * sizeof(piece));
  if (!to || !sorted) {
    free(to);
    free(sorted);
    return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory");
  }
  int n = 0;
  for (int q = 0; q < r->nin; q++) to[q] = -1;
  for (int i = 0; i < r->nsteps; i++)
    if (r->steps[i].piece >= 0 && to[r->steps[i].piece] < 0) to[r->steps[i].piece] = n++;
  for (int q = 0; q < r->nin; q++)
    if (to[q] < 0) to[q] = n++;
  r->slot = 1;
  for (int q = 0; q < r->nin; q++) {
    sorted[to[q]] = r->in[q];
    if (r->in[q].bytes > r->slot) r->slot = r->in[q].bytes;
  }
  memcpy(r->in, sorted, (size_t)r->nin * sizeof(piece));
  r->window = r->nin < WINDOW ? r->nin : WINDOW;
  for (int i = 0; i < r->nsteps; i++) {
    step *st = &r->steps[i];
    if (st->piece < 0) continue;
    st->piece = to[st->piece];
    st->at += (size_t)(st->piece % r->window) * r->slot;
  }
  free(to);
  free(sorted);
  return HS_OK;
}

/* Outgoing pieces: the first of every peer, then the second, ...: each receiver gets its
 * first pieces early. */
static int by_turn(const void *a, const void *b) {
  const piece *x = a, *y = b;
  if (x->turn != y->turn) return x->turn < y->turn ? -1 : 1;
  return x->peer < y->peer ? -1 : x->peer > y->peer;
}

static int create(hs_plan p, const hs_pull *pull, struct hs_reverse **out) {
  struct hs_reverse *r = hs__calloc(p, sizeof *r);
  *out = r;
  if (!r) return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory");
  r->pull = pull;
  int ne = pull ? pull->nedges : 0;
  int *edge_of = malloc((size_t)(p->npeers + 1) * sizeof(int));
  if (!edge_of) return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory");
  for (int k = 0; k < p->npeers; k++) edge_of[k] = -1;
  for (int e = 0; e < ne; e++) edge_of[pull->edges[e].peer] = e;
  cut(p, edge_of, NULL, NULL, &r->nin, &r->nout);
  size_t ib = 0, ob = 0, most = 0;
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *pe = &p->peers[k];
    if (edge_of[k] < 0) ib += pe->send_bytes, ob += pe->recv_bytes;
    for (int i = 0; i < pe->nsend; i++)
      if (pe->send[i].bytes > most) most = pe->send[i].bytes;
  }
  for (int i = 0; i < p->nself; i++)
    if (p->self[i].src.bytes > most) most = p->self[i].src.bytes;
  int nsteps = p->nself;
  for (int k = 0; k < p->npeers; k++) nsteps += p->peers[k].nsend;
  r->in = hs__malloc(p, (size_t)(r->nin + 1) * sizeof(piece));
  r->out = hs__malloc(p, (size_t)(r->nout + 1) * sizeof(piece));
  r->ireq = hs__malloc(p, (size_t)(r->nin + 1) * sizeof(MPI_Request));
  r->oreq = hs__malloc(p, (size_t)(r->nout + 1) * sizeof(MPI_Request));
  r->obuf = hs__malloc(p, ob + 1);
  r->bounce = hs__malloc(p, 2 * most + 1);
  r->scratch = ne ? hs__malloc(p, (GROUP > most ? GROUP : most) + 1) : NULL;
  r->steps = hs__malloc(p, (size_t)(nsteps + 1) * sizeof(step));
  r->last = hs__malloc(p, (size_t)(ne + 1) * sizeof(int));
  r->open = hs__calloc(p, (size_t)(ne + 1) * sizeof(uint64_t));
  r->flagged = hs__calloc(p, (size_t)(p->npeers + 1));
  if (!r->in || !r->out || !r->ireq || !r->oreq || !r->obuf || !r->bounce ||
      (ne && !r->scratch) || !r->steps || !r->last || !r->open || !r->flagged) {
    free(edge_of);
    return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory for %zu bytes of buffers",
                     ib + ob + 2 * most);
  }
  for (int i = 0; i < r->nin; i++) r->ireq[i] = MPI_REQUEST_NULL;
  for (int i = 0; i < r->nout; i++) r->oreq[i] = MPI_REQUEST_NULL;
  for (int e = 0; e < ne; e++) r->last[e] = -1;
  cut(p, edge_of, r->in, r->out, &r->nin, &r->nout);
  qsort(r->out, (size_t)r->nout, sizeof(piece), by_turn);
  for (int i = 0; i < r->nout; i++)
    if (r->out[i].bytes > r->oslot) r->oslot = r->out[i].bytes;
  order_steps(p, r, edge_of);
  free(edge_of);
  int rc = receive_order(p, r);
  if (rc != HS_OK) return rc;
  r->ibuf = hs__malloc(p, (size_t)r->window * r->slot + 1);
  r->oring = hs__malloc(p, WINDOW * r->oslot + 1);
  if (!r->ibuf || !r->oring) return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory");
  /* Touched once here, not in the first exchange. */
  memset(r->ibuf, 0, (size_t)r->window * r->slot);
  memset(r->oring, 0, WINDOW * r->oslot);
  memset(r->obuf, 0, ob);
  return HS_OK;
}

int hs__reverse_create(hs_plan p, const hs_pull *pull, struct hs_reverse **r) {
  if (*r) return HS_OK;
  int rc = create(p, pull, r);
  if (rc != HS_OK) {
    hs__reverse_destroy(p, *r);
    *r = NULL;
  }
  return rc;
}

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
  unsigned spins = 0;
  while (atomic_load_explicit(pe->posted, memory_order_acquire) < seq) hs__relax(&spins);
  HS_MPI(MPI_Win_sync(r->pull->win));
  r->open[e] = seq;
  if (*pe->failed == seq && !r->flagged[pe->peer]) {
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
      if (i == r->last[st->edge]) { /* done with its halos, even after a failure */
        const hs_pull_edge *pe = &r->pull->edges[st->edge];
        MPI_Win_sync(r->pull->win);
        atomic_store_explicit(pe->consumed, seq, memory_order_release);
      }
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
  for (int e = 0; e < r->pull->nedges; e++) {
    const hs_pull_edge *pe = &r->pull->edges[e];
    if (!p->peers[pe->peer].nrecv) continue;
    unsigned spins = 0;
    while (atomic_load_explicit(pe->its_consumed, memory_order_acquire) < seq) hs__relax(&spins);
  }
  HS_MPI(MPI_Win_sync(r->pull->win));
  return err;
}

void hs__reverse_destroy(hs_plan p, struct hs_reverse *r) {
  if (!r) return;
  void *blocks[] = {r->in, r->out, r->ireq, r->oreq, r->ibuf, r->obuf, r->oring, r->bounce,
                    r->scratch, r->steps, r->last, r->open, r->flagged, r};
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) hs__free(p, blocks[i]);
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
