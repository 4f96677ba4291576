/* The reverse exchange's schedule (docs/design.md, "Reverse exchange"): each peer's message
 * cut into pieces of whole sections of one offset, and the owner's steps in the plan's
 * combine order (offsets in the plan's order, then field, then component, periodic self
 * contributions in their place), the receive window, the buffers; built on first use and
 * destroyed with the plan or the transport. src/engines/reverse.c runs it. */
#include "reverse_state.h"

#include <stdlib.h>
#include <string.h>

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

void hs__reverse_destroy(hs_plan p, struct hs_reverse *r) {
  if (!r) return;
  void *blocks[] = {r->in, r->out, r->ireq, r->oreq, r->ibuf, r->obuf, r->oring, r->bounce,
                    r->scratch, r->steps, r->last, r->open, r->flagged, r};
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) hs__free(p, blocks[i]);
}
