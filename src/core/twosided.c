/* The two-sided engine: one message per peer per swap, receives posted first. "p2p" is this
 * engine over every peer; a hybrid transport runs it over its off-node peers.
 * dtype=1: send and receive straight from the fields with the plan's cached derived
 * datatypes (one copy, inside MPI). dtype=0, or any field with pack/unpack hooks: pack each
 * peer's message into a buffer, unpack each as it arrives. persistent=1: persistent requests
 * for the registered arrays (per-swap arrays get ordinary ones). */
#include "hs_internal.h"

#include <string.h>

struct hs_twosided {
  hs_twosided_config c;
  int nr, ns;
  int *rpeer, *speer;        /* request index -> peer index */
  size_t *roff, *soff;       /* packed: offset of each message in rbuf/sbuf */
  char *rbuf, *sbuf;
  MPI_Request *rpers, *spers; /* persistent requests (registered arrays) */
  MPI_Request *rreq, *sreq;   /* ordinary requests */
  MPI_Request *rcur, *scur;   /* the requests of the swap in progress */
  int *done;                  /* indices from MPI_Testsome */
  int rleft;                  /* receives of the swap in progress not yet in the halos */
};

static MPI_Request *requests(hs_plan p, int n) {
  MPI_Request *r = hs__malloc(p, (size_t)(n > 0 ? n : 1) * sizeof *r);
  for (int i = 0; r && i < n; i++) r[i] = MPI_REQUEST_NULL;
  return r;
}

/* Post one swap's receives and sends into rq/sq (persistent: *_init). */
static int post(hs_plan p, hs_twosided *e, void *const *arrays, int persistent, MPI_Request *rq,
                MPI_Request *sq) {
  const hs_dtypes *t = NULL;
  if (e->c.dtype) {
    int rc = hs__dtypes_get(p, arrays, &t);
    if (rc != HS_OK) return rc;
  }
  for (int i = 0; i < e->nr; i++) {
    const hs_peer *pe = &p->peers[e->rpeer[i]];
    void *b = t ? MPI_BOTTOM : e->rbuf + e->roff[i];
    int n = t ? 1 : (int)pe->recv_bytes;
    MPI_Datatype ty = t ? t->recv[e->rpeer[i]] : MPI_BYTE;
    if (persistent)
      HS_MPI(MPI_Recv_init(b, n, ty, pe->rank, HS_TAG_DATA, p->comm, &rq[i]));
    else
      HS_MPI(MPI_Irecv(b, n, ty, pe->rank, HS_TAG_DATA, p->comm, &rq[i]));
  }
  for (int i = 0; i < e->ns; i++) {
    const hs_peer *pe = &p->peers[e->speer[i]];
    void *b = t ? MPI_BOTTOM : e->sbuf + e->soff[i];
    int n = t ? 1 : (int)pe->send_bytes;
    MPI_Datatype ty = t ? t->send[e->speer[i]] : MPI_BYTE;
    if (persistent) {
      HS_MPI(MPI_Send_init(b, n, ty, pe->rank, HS_TAG_DATA, p->comm, &sq[i]));
      continue;
    }
    if (!t) hs__pack_peer(p, pe, arrays, b);
    HS_MPI(MPI_Isend(b, n, ty, pe->rank, HS_TAG_DATA, p->comm, &sq[i]));
  }
  return HS_OK;
}

int hs__twosided_create(hs_plan p, const int *peers, int npeers, const hs_twosided_config *c,
                        hs_twosided **out) {
  hs_twosided *e = hs__calloc(p, sizeof *e);
  *out = e;
  if (!e) return hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  e->c = *c;
  if (p->has_callbacks) e->c.dtype = 0; /* hooks need packing */
  int n = peers ? npeers : p->npeers;
  size_t nb = (size_t)(n > 0 ? n : 1);
  e->rpeer = hs__malloc(p, nb * sizeof(int));
  e->speer = hs__malloc(p, nb * sizeof(int));
  e->roff = hs__malloc(p, nb * sizeof(size_t));
  e->soff = hs__malloc(p, nb * sizeof(size_t));
  e->done = hs__malloc(p, nb * sizeof(int));
  e->rreq = requests(p, n);
  e->sreq = requests(p, n);
  if (!e->rpeer || !e->speer || !e->roff || !e->soff || !e->done || !e->rreq || !e->sreq)
    return hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  size_t rbytes = 0, sbytes = 0;
  for (int i = 0; i < n; i++) {
    int k = peers ? peers[i] : i;
    const hs_peer *pe = &p->peers[k];
    if (pe->recv_bytes) {
      e->rpeer[e->nr] = k;
      e->roff[e->nr++] = rbytes;
      rbytes += pe->recv_bytes;
    }
    if (pe->send_bytes) {
      e->speer[e->ns] = k;
      e->soff[e->ns++] = sbytes;
      sbytes += pe->send_bytes;
    }
  }
  if (!e->c.dtype) {
    e->rbuf = hs__malloc(p, rbytes);
    e->sbuf = hs__malloc(p, sbytes);
    if (!e->rbuf || !e->sbuf)
      return hs__error(HS_ERR_NOMEM, "%s: out of memory for %zu bytes of message buffers",
                       p->transport_name, rbytes + sbytes);
  }
  if (e->c.persistent) {
    e->rpers = requests(p, n);
    e->spers = requests(p, n);
    if (!e->rpers || !e->spers) return hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
    return post(p, e, NULL, 1, e->rpers, e->spers);
  }
  return HS_OK;
}

int hs__twosided_start(hs_plan p, hs_twosided *e, void *const *arrays) {
  e->rleft = e->nr;
  if (!e->c.persistent || !hs__arrays_registered(p, arrays)) {
    e->rcur = e->rreq;
    e->scur = e->sreq;
    return post(p, e, arrays, 0, e->rreq, e->sreq);
  }
  e->rcur = e->rpers;
  e->scur = e->spers;
  if (e->nr) HS_MPI(MPI_Startall(e->nr, e->rpers));
  for (int i = 0; i < e->ns; i++) {
    if (!e->c.dtype) hs__pack_peer(p, &p->peers[e->speer[i]], arrays, e->sbuf + e->soff[i]);
    HS_MPI(MPI_Start(&e->spers[i]));
  }
  return HS_OK;
}

static void arrived(hs_plan p, hs_twosided *e, void *const *arrays, int i) {
  if (!e->c.dtype) hs__unpack_peer(p, &p->peers[e->rpeer[i]], arrays, e->rbuf + e->roff[i]);
  e->rleft--;
}

int hs__twosided_test(hs_plan p, hs_twosided *e, void *const *arrays, int *done) {
  if (e->rleft > 0) {
    int m = 0;
    HS_MPI(MPI_Testsome(e->nr, e->rcur, &m, e->done, MPI_STATUSES_IGNORE));
    for (int j = 0; m != MPI_UNDEFINED && j < m; j++) arrived(p, e, arrays, e->done[j]);
  }
  *done = e->rleft == 0;
  return HS_OK;
}

int hs__twosided_complete(hs_plan p, hs_twosided *e, void *const *arrays) {
  while (e->rleft > 0) { /* unpack in arrival order */
    int i;
    HS_MPI(MPI_Waitany(e->nr, e->rcur, &i, MPI_STATUS_IGNORE));
    if (i == MPI_UNDEFINED) break;
    arrived(p, e, arrays, i);
  }
  if (e->ns) HS_MPI(MPI_Waitall(e->ns, e->scur, MPI_STATUSES_IGNORE));
  return HS_OK;
}

void hs__twosided_free(hs_plan p, hs_twosided *e) {
  if (!e) return;
  for (int i = 0; e->rpers && i < e->nr; i++)
    if (e->rpers[i] != MPI_REQUEST_NULL) MPI_Request_free(&e->rpers[i]);
  for (int i = 0; e->spers && i < e->ns; i++)
    if (e->spers[i] != MPI_REQUEST_NULL) MPI_Request_free(&e->spers[i]);
  void *blocks[] = {e->rpeer, e->speer, e->roff, e->soff, e->done, e->rbuf, e->sbuf,
                    e->rpers, e->spers, e->rreq, e->sreq, e};
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) hs__free(p, blocks[i]);
}
