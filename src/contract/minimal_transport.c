/* The contract's proof (docs/design.md, "Adding a transport"): a whole transport written
 * against hs_transport.h alone, compiled in every build (not registered). One packed message
 * per peer per swap, each section copied by its copy program (run, three outer loops). */
#include "hs_transport.h"

#include <string.h>

typedef struct {
  int tag; /* the message tag: any value the plan's communicator leaves free */
} minimal_config;

static const hs_option_spec minimal_options[] = {
    HS_OPTION_INT("tag", "0", 0, 32767, minimal_config, tag, "the tag of the halo messages"),
    HS_OPTIONS_END};

typedef struct {
  char **sbuf, **rbuf;
  MPI_Request *req; /* receives first, then sends */
} minimal_t;

/* Section s of field data <-> buf; out = 1: field to buf. */
static void copy_section(const hs_section *s, char *field, char *buf, int out) {
  for (int k = 0; k < s->n3; k++)
    for (int j = 0; j < s->n2; j++)
      for (int i = 0; i < s->n1; i++, buf += s->run) {
        char *f = field + s->base + k * s->s3 + j * s->s2 + i * s->s1;
        memcpy(out ? buf : f, out ? f : buf, s->run);
      }
}

static int minimal_setup(hs_plan p) {
  if (p->has_callbacks)
    return hs__error(HS_ERR_UNAVAILABLE, "minimal: fields with pack/unpack hooks");
  minimal_t *t = hs__impl_new(p, sizeof *t);
  if (!t) return HS_ERR_NOMEM;
  int rc = hs__calloc_arrays(p, (size_t)p->npeers, &t->sbuf, sizeof *t->sbuf, &t->rbuf,
                             sizeof *t->rbuf, NULL);
  if (rc == HS_OK) rc = hs__calloc_arrays(p, 2 * (size_t)p->npeers, &t->req, sizeof *t->req, NULL);
  for (int k = 0; k < p->npeers && rc == HS_OK; k++) {
    t->sbuf[k] = hs__malloc(p, p->peers[k].send_bytes + 1);
    t->rbuf[k] = hs__malloc(p, p->peers[k].recv_bytes + 1);
    if (!t->sbuf[k] || !t->rbuf[k]) rc = hs__error(HS_ERR_NOMEM, "minimal: out of memory");
  }
  return rc;
}

static int minimal_start(hs_plan p, void *const *arrays) {
  minimal_t *t = p->impl;
  const minimal_config *c = p->config;
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *q = &p->peers[k];
    HS_MPI(MPI_Irecv(t->rbuf[k], (int)q->recv_bytes, MPI_BYTE, q->rank, c->tag, p->comm,
                     &t->req[k]));
  }
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *q = &p->peers[k];
    for (int i = 0; i < q->nsend; i++)
      copy_section(&q->send[i], hs__field_ptr(p, arrays, q->send[i].box.field),
                   t->sbuf[k] + q->send[i].msg_offset, 1);
    HS_MPI(MPI_Isend(t->sbuf[k], (int)q->send_bytes, MPI_BYTE, q->rank, c->tag, p->comm,
                     &t->req[p->npeers + k]));
  }
  return HS_OK;
}

static int minimal_complete(hs_plan p, void *const *arrays) {
  minimal_t *t = p->impl;
  HS_MPI(MPI_Waitall(2 * p->npeers, t->req, MPI_STATUSES_IGNORE));
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *q = &p->peers[k];
    for (int i = 0; i < q->nrecv; i++)
      copy_section(&q->recv[i], hs__field_ptr(p, arrays, q->recv[i].box.field),
                   t->rbuf[k] + q->recv[i].msg_offset, 0);
  }
  return HS_OK;
}

static void minimal_destroy(hs_plan p) {
  minimal_t *t = p->impl;
  if (!t) return;
  for (int k = 0; k < p->npeers && t->sbuf && t->rbuf; k++) {
    hs__free(p, t->sbuf[k]);
    hs__free(p, t->rbuf[k]);
  }
  hs__free(p, t->sbuf);
  hs__free(p, t->rbuf);
  hs__free(p, t->req);
  hs__free(p, t);
  p->impl = NULL;
}

HS_DEFINE_TRANSPORT(hs__transport_minimal, minimal, "minimal", 0, 0,
                    "one packed message per peer (the contract's example)", minimal_options,
                    minimal_config, HS_OPS_NO_EXTRA);
