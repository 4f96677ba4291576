/* The reverse exchange (halo -> owner, combined with an hs_op), served by the core for every
 * transport over two-sided messages: the forward swap's receive sections are the reverse's
 * send sections and vice versa. Each rank sends every halo box the forward swap writes back
 * to the rank it came from (straight from the halos with the plan's derived datatypes, or
 * packed for hook fields), receives its neighbours' boxes into buffers, and only once all
 * have arrived combines them into its interior in one fixed order: the plan's offsets in
 * canonical order, then field, then component, periodic self contributions in their place.
 * The result therefore does not depend on arrival order, transport or rank numbering. */
#include "hs_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const hs_section *dst;  /* interior strip (a forward send section) */
  const hs_section *src;  /* self: the halo box (a forward receive section); else NULL */
  int in;                 /* else: index of the incoming message */
} step;

struct hs_reverse {
  int nin, nout;
  int *ipeer, *opeer;     /* message index -> peer index */
  size_t *ioff, *ooff;
  char *ibuf, *obuf;
  MPI_Request *ireq, *oreq;
  char *bounce;           /* one section: hook fields and mismatched self programs */
  step *steps;
  int nsteps;
  int dtype;              /* send from the halos with derived datatypes */
};

/* ---------------------------------------------------------------- combining */
#define COMBINE_LOOP(T, EXPR)                                       \
  for (size_t i = 0; i < n; i++) {                                  \
    T a, b;                                                         \
    memcpy(&a, dst + i * sizeof(T), sizeof(T));                     \
    memcpy(&b, src + i * sizeof(T), sizeof(T));                     \
    a = (EXPR);                                                     \
    memcpy(dst + i * sizeof(T), &a, sizeof(T));                     \
  }

#define COMBINE_TYPE(T, SUM)                                        \
  switch (op) {                                                     \
  case HS_OP_SUM: COMBINE_LOOP(T, SUM); break;                      \
  case HS_OP_MAX: COMBINE_LOOP(T, b > a ? b : a); break;            \
  case HS_OP_MIN: COMBINE_LOOP(T, b < a ? b : a); break;            \
  default: memcpy(dst, src, n * sizeof(T)); break;                  \
  }

void hs__combine(hs_type t, hs_op op, char *dst, const char *src, size_t n) {
  switch (t) {
  case HS_FLOAT64: COMBINE_TYPE(double, a + b); break;
  case HS_FLOAT32: COMBINE_TYPE(float, a + b); break;
  /* integer sums wrap (two's complement) instead of overflowing */
  case HS_INT32: COMBINE_TYPE(int32_t, (int32_t)((uint32_t)a + (uint32_t)b)); break;
  default: COMBINE_TYPE(int64_t, (int64_t)((uint64_t)a + (uint64_t)b)); break;
  }
}

/* Combine a packed buffer (s->bytes, in section order) into section s of the field. */
static void combine_in(const hs_plan p, const hs_section *s, char *field, const char *buf,
                       hs_op op, char *bounce) {
  const hs_fieldinfo *fi = &p->fields[s->box.field];
  if (fi->pack) { /* hooks: read the owner's box, combine, write it back */
    fi->pack(fi->ctx, &s->box, bounce);
    hs__combine(fi->type, op, bounce, buf, s->bytes / fi->elem);
    fi->unpack(fi->ctx, &s->box, bounce);
    return;
  }
  char *d0 = field + s->base;
  const size_t run = s->run, ne = run / fi->elem;
  for (int k = 0; k < s->n3; k++)
    for (int j = 0; j < s->n2; j++) {
      char *d = d0 + k * s->s3 + j * s->s2;
      for (int i = 0; i < s->n1; i++, buf += run) hs__combine(fi->type, op, d + i * s->s1, buf, ne);
    }
}

/* Self contribution: halo box src into interior strip dst of the same field. */
static void combine_self(const hs_plan p, const hs_section *dst, const hs_section *src,
                         char *field, hs_op op, char *bounce) {
  const hs_fieldinfo *fi = &p->fields[dst->box.field];
  if (!fi->pack && src->run == dst->run && src->n1 == dst->n1 && src->n2 == dst->n2 &&
      src->n3 == dst->n3) {
    const size_t ne = src->run / fi->elem;
    for (int k = 0; k < src->n3; k++)
      for (int j = 0; j < src->n2; j++) {
        const char *a = field + src->base + k * src->s3 + j * src->s2;
        char *b = field + dst->base + k * dst->s3 + j * dst->s2;
        for (int i = 0; i < src->n1; i++) hs__combine(fi->type, op, b + i * dst->s1, a + i * src->s1, ne);
      }
    return;
  }
  /* The halo first (bounce holds two sections: halo, then the owner's box for hooks). */
  hs__pack_section(p, src, field, bounce);
  combine_in(p, dst, field, bounce, op, bounce + src->bytes);
}

/* ---------------------------------------------------------------- engine */
static int peer_of(const hs_plan p, int rank) {
  for (int k = 0; k < p->npeers; k++)
    if (p->peers[k].rank == rank) return k;
  return -1;
}

static int create(hs_plan p, struct hs_reverse **out) {
  struct hs_reverse *r = hs__calloc(p, sizeof *r);
  *out = r;
  if (!r) return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory");
  r->dtype = !p->has_callbacks;
  size_t nb = (size_t)(p->npeers > 0 ? p->npeers : 1);
  r->ipeer = hs__malloc(p, nb * sizeof(int));
  r->opeer = hs__malloc(p, nb * sizeof(int));
  r->ioff = hs__malloc(p, nb * sizeof(size_t));
  r->ooff = hs__malloc(p, nb * sizeof(size_t));
  r->ireq = hs__malloc(p, nb * sizeof(MPI_Request));
  r->oreq = hs__malloc(p, nb * sizeof(MPI_Request));
  if (!r->ipeer || !r->opeer || !r->ioff || !r->ooff || !r->ireq || !r->oreq)
    return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory");
  size_t ib = 0, ob = 0, most = 0;
  int in_of_peer[HS_MAX_OFFSETS * 2 + 1];
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *pe = &p->peers[k];
    in_of_peer[k] = -1;
    if (pe->send_bytes) { /* what I sent forward comes back */
      in_of_peer[k] = r->nin;
      r->ipeer[r->nin] = k;
      r->ioff[r->nin++] = ib;
      ib += pe->send_bytes;
    }
    if (pe->recv_bytes) {
      r->opeer[r->nout] = k;
      r->ooff[r->nout++] = ob;
      ob += pe->recv_bytes;
    }
    for (int i = 0; i < pe->nsend; i++)
      if (pe->send[i].bytes > most) most = pe->send[i].bytes;
  }
  for (int i = 0; i < p->nself; i++)
    if (p->self[i].src.bytes > most) most = p->self[i].src.bytes;
  r->ibuf = hs__malloc(p, ib);
  r->obuf = r->dtype ? NULL : hs__malloc(p, ob);
  r->bounce = hs__malloc(p, 2 * most);
  /* The canonical order: offsets, then (within a message or the self list) field, comp. */
  int nsteps = p->nself;
  for (int k = 0; k < p->npeers; k++) nsteps += p->peers[k].nsend;
  r->steps = hs__malloc(p, (size_t)(nsteps > 0 ? nsteps : 1) * sizeof(step));
  if (!r->ibuf || (!r->dtype && !r->obuf) || !r->bounce || !r->steps)
    return hs__error(HS_ERR_NOMEM, "hs_reverse_start: out of memory for %zu bytes of buffers",
                     ib + ob + 2 * most);
  for (int o = 0; o < p->noffsets; o++) {
    if (p->send_to[o] == MPI_PROC_NULL) continue;
    if (p->send_to[o] == p->rank) {
      for (int i = 0; i < p->nself; i++)
        if (p->self[i].src.offset_index == o)
          r->steps[r->nsteps++] = (step){&p->self[i].src, &p->self[i].dst, -1};
      continue;
    }
    int k = peer_of(p, p->send_to[o]);
    if (k < 0) continue; /* nothing to move toward it */
    const hs_peer *pe = &p->peers[k];
    for (int i = 0; i < pe->nsend; i++)
      if (pe->send[i].offset_index == o)
        r->steps[r->nsteps++] = (step){&pe->send[i], NULL, in_of_peer[k]};
  }
  return HS_OK;
}

int hs__reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  (void)op;
  if (!p->reverse) {
    int rc = create(p, &p->reverse);
    if (rc != HS_OK) {
      hs__reverse_free(p);
      return rc;
    }
  }
  struct hs_reverse *r = p->reverse;
  const hs_dtypes *t = NULL;
  if (r->dtype) {
    int rc = hs__dtypes_get(p, arrays, &t);
    if (rc != HS_OK) return rc;
  }
  for (int i = 0; i < r->nin; i++) {
    const hs_peer *pe = &p->peers[r->ipeer[i]];
    HS_MPI(MPI_Irecv(r->ibuf + r->ioff[i], (int)pe->send_bytes, MPI_BYTE, pe->rank,
                     HS_TAG_REVERSE, p->comm, &r->ireq[i]));
  }
  for (int i = 0; i < r->nout; i++) {
    int k = r->opeer[i];
    const hs_peer *pe = &p->peers[k];
    if (t) { /* straight from the halo boxes: the forward receive types */
      HS_MPI(MPI_Isend(MPI_BOTTOM, 1, t->recv[k], pe->rank, HS_TAG_REVERSE, p->comm, &r->oreq[i]));
      continue;
    }
    char *b = r->obuf + r->ooff[i];
    for (int j = 0; j < pe->nrecv; j++) {
      const hs_section *s = &pe->recv[j];
      hs__pack_section(p, s, hs__field_ptr(p, arrays, s->box.field), b + s->msg_offset);
    }
    HS_MPI(MPI_Isend(b, (int)pe->recv_bytes, MPI_BYTE, pe->rank, HS_TAG_REVERSE, p->comm,
                     &r->oreq[i]));
  }
  return HS_OK;
}

int hs__reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  struct hs_reverse *r = p->reverse;
  /* Steps in canonical order; a message is waited for only when its first step comes, so
   * the self contributions and earlier messages are combined while later ones still move. */
  for (int i = 0; i < r->nsteps; i++) {
    const step *st = &r->steps[i];
    char *field = hs__field_ptr(p, arrays, st->dst->box.field);
    if (!st->src && r->ireq[st->in] != MPI_REQUEST_NULL)
      HS_MPI(MPI_Wait(&r->ireq[st->in], MPI_STATUS_IGNORE));
    if (st->src)
      combine_self(p, st->dst, st->src, field, op, r->bounce);
    else
      combine_in(p, st->dst, field, r->ibuf + r->ioff[st->in] + st->dst->msg_offset, op,
                 r->bounce);
  }
  if (r->nin) HS_MPI(MPI_Waitall(r->nin, r->ireq, MPI_STATUSES_IGNORE)); /* messages no step used */
  if (r->nout) HS_MPI(MPI_Waitall(r->nout, r->oreq, MPI_STATUSES_IGNORE));
  return HS_OK;
}

void hs__reverse_free(hs_plan p) {
  struct hs_reverse *r = p->reverse;
  if (!r) return;
  void *blocks[] = {r->ipeer, r->opeer, r->ioff, r->ooff, r->ibuf, r->obuf,
                    r->ireq, r->oreq, r->bounce, r->steps, r};
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) hs__free(p, blocks[i]);
  p->reverse = NULL;
}
