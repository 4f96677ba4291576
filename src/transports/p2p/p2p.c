/* Transport "p2p": two-sided MPI. Receives are posted first, each peer's message is packed
 * and sent at once, and complete unpacks each message as it arrives (Waitany). */
#include "hs_internal.h"

#include <string.h>

typedef struct {
  char *sendbuf, *recvbuf;
  size_t sendbytes, recvbytes;
  int nr, ns;
  MPI_Request *rreq, *sreq;
  int *rpeer, *speer;      /* request index -> peer index */
  size_t *roff, *soff;     /* per request: offset in recv/send buffer */
  int persistent;
} p2p_t;

static int p2p_setup(hs_plan p) {
  p2p_t *t = hs__calloc(p, sizeof *t);
  if (!t) return hs__error(HS_ERR_NOMEM, "p2p: out of memory");
  p->impl = t;
  int rc = hs__opt_int(p, "persistent", 1, &t->persistent);
  if (rc != HS_OK) return rc;
  int np = p->npeers;
  t->rreq = hs__malloc(p, (size_t)np * sizeof(MPI_Request));
  t->sreq = hs__malloc(p, (size_t)np * sizeof(MPI_Request));
  t->rpeer = hs__malloc(p, (size_t)np * sizeof(int));
  t->speer = hs__malloc(p, (size_t)np * sizeof(int));
  t->roff = hs__malloc(p, (size_t)np * sizeof(size_t));
  t->soff = hs__malloc(p, (size_t)np * sizeof(size_t));
  if (!t->rreq || !t->sreq || !t->rpeer || !t->speer || !t->roff || !t->soff)
    return hs__error(HS_ERR_NOMEM, "p2p: out of memory");
  for (int k = 0; k < np; k++) {
    const hs_peer *pe = &p->peers[k];
    if (pe->recv_bytes) {
      t->rpeer[t->nr] = k;
      t->roff[t->nr++] = t->recvbytes;
      t->recvbytes += pe->recv_bytes;
    }
    if (pe->send_bytes) {
      t->speer[t->ns] = k;
      t->soff[t->ns++] = t->sendbytes;
      t->sendbytes += pe->send_bytes;
    }
  }
  t->sendbuf = hs__malloc(p, t->sendbytes);
  t->recvbuf = hs__malloc(p, t->recvbytes);
  if (!t->sendbuf || !t->recvbuf) return hs__error(HS_ERR_NOMEM, "p2p: out of memory for buffers");
  for (int i = 0; i < t->nr; i++) t->rreq[i] = MPI_REQUEST_NULL;
  for (int i = 0; i < t->ns; i++) t->sreq[i] = MPI_REQUEST_NULL;
  if (t->persistent) {
    for (int i = 0; i < t->nr; i++) {
      const hs_peer *pe = &p->peers[t->rpeer[i]];
      HS_MPI(MPI_Recv_init(t->recvbuf + t->roff[i], (int)pe->recv_bytes, MPI_BYTE, pe->rank, 0,
                           p->comm, &t->rreq[i]));
    }
    for (int i = 0; i < t->ns; i++) {
      const hs_peer *pe = &p->peers[t->speer[i]];
      HS_MPI(MPI_Send_init(t->sendbuf + t->soff[i], (int)pe->send_bytes, MPI_BYTE, pe->rank, 0,
                           p->comm, &t->sreq[i]));
    }
  }
  return HS_OK;
}

static int p2p_start(hs_plan p, void *const *arrays) {
  p2p_t *t = p->impl;
  if (t->persistent) {
    if (t->nr) HS_MPI(MPI_Startall(t->nr, t->rreq));
  } else {
    for (int i = 0; i < t->nr; i++) {
      const hs_peer *pe = &p->peers[t->rpeer[i]];
      HS_MPI(MPI_Irecv(t->recvbuf + t->roff[i], (int)pe->recv_bytes, MPI_BYTE, pe->rank, 0,
                       p->comm, &t->rreq[i]));
    }
  }
  for (int i = 0; i < t->ns; i++) {
    const hs_peer *pe = &p->peers[t->speer[i]];
    hs__pack_peer(p, pe, arrays, t->sendbuf + t->soff[i]);
    if (t->persistent)
      HS_MPI(MPI_Start(&t->sreq[i]));
    else
      HS_MPI(MPI_Isend(t->sendbuf + t->soff[i], (int)pe->send_bytes, MPI_BYTE, pe->rank, 0,
                       p->comm, &t->sreq[i]));
  }
  return HS_OK;
}

static int p2p_complete(hs_plan p, void *const *arrays) {
  p2p_t *t = p->impl;
  for (int n = 0; n < t->nr; n++) {
    int i;
    HS_MPI(MPI_Waitany(t->nr, t->rreq, &i, MPI_STATUS_IGNORE));
    if (i == MPI_UNDEFINED) break;
    hs__unpack_peer(p, &p->peers[t->rpeer[i]], arrays, t->recvbuf + t->roff[i]);
  }
  if (t->ns) HS_MPI(MPI_Waitall(t->ns, t->sreq, MPI_STATUSES_IGNORE));
  return HS_OK;
}

static void p2p_destroy(hs_plan p) {
  p2p_t *t = p->impl;
  if (!t) return;
  int np = p->npeers;
  if (t->persistent) {
    for (int i = 0; i < t->nr; i++)
      if (t->rreq && t->rreq[i] != MPI_REQUEST_NULL) MPI_Request_free(&t->rreq[i]);
    for (int i = 0; i < t->ns; i++)
      if (t->sreq && t->sreq[i] != MPI_REQUEST_NULL) MPI_Request_free(&t->sreq[i]);
  }
  hs__free(p, t->sendbuf, t->sendbytes);
  hs__free(p, t->recvbuf, t->recvbytes);
  hs__free(p, t->rreq, (size_t)np * sizeof(MPI_Request));
  hs__free(p, t->sreq, (size_t)np * sizeof(MPI_Request));
  hs__free(p, t->rpeer, (size_t)np * sizeof(int));
  hs__free(p, t->speer, (size_t)np * sizeof(int));
  hs__free(p, t->roff, (size_t)np * sizeof(size_t));
  hs__free(p, t->soff, (size_t)np * sizeof(size_t));
  hs__free(p, t, sizeof *t);
  p->impl = NULL;
}

static const char *const p2p_keys[] = {"persistent", NULL};

const hs_transport_ops hs__transport_p2p = {
    .name = "p2p",
    .summary = "two-sided MPI: Irecv first, pack + Isend per peer, Waitany + unpack",
    .query = NULL,
    .setup = p2p_setup,
    .start = p2p_start,
    .complete = p2p_complete,
    .destroy = p2p_destroy,
    .option_keys = p2p_keys,
};
