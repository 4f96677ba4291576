/* Transport "nbr": MPI neighbourhood collectives. A distributed graph with one edge per peer
 * (the core already merged duplicate neighbours into one peer per rank), and one
 * MPI_Ineighbor_alltoallw per swap whose datatypes address the fields directly (MPI_BOTTOM,
 * absolute addresses): no packing. With MPI-4 the registered arrays get a persistent
 * MPI_Neighbor_alltoallw_init request. Plans with pack/unpack hooks, or option pack=1, pack
 * into one buffer per direction and use MPI_Ineighbor_alltoallv.
 *
 * Persistent requests and per-swap arrays: a persistent collective only matches the same
 * persistent collective on the other ranks, so a swap of per-swap arrays (which needs new
 * datatypes) runs as a non-persistent MPI_Ineighbor_alltoallw. Ranks must therefore pass
 * per-swap arrays on the same swaps (MONC's source_data is passed by every rank at the same
 * point); a program that cannot promise that sets persistent=0. */
#include "hs_internal.h"

#include <limits.h>
#include <string.h>

#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define NBR_HAVE_PERSISTENT 1
#else
#define NBR_HAVE_PERSISTENT 0
#endif

/* Datatypes for one set of field arrays: entry 0 is the registered set (kept for the life
 * of the plan); the others hold recently used per-swap sets, replaced least recently used. */
#define NBR_CACHE 4

typedef struct {
  int valid;
  char **ptrs;               /* nfields resolved field pointers the types were built for */
  MPI_Datatype *stype, *rtype;
  MPI_Request preq;          /* persistent request (registered set, MPI-4), else NULL */
  uint64_t stamp;
} nbr_entry;

typedef struct {
  MPI_Comm graph;
  int active;                /* some rank of the plan has a peer: run the collectives */
  int nin, nout;            /* edges: one per peer, in and out (nin == nout == npeers) */
  int *src, *dst;            /* edge -> peer index */
  int *one;                  /* unit weights */
  int *tscount, *trcount;    /* datatype path: 1 where bytes flow, else 0 */
  MPI_Aint *zero;            /* displacements of 0 per edge */
  int packed, persistent;
  nbr_entry cache[NBR_CACHE];
  uint64_t clock;
  /* packed path */
  char *sbuf, *rbuf;
  size_t sbytes, rbytes;
  int *scount, *rcount, *sdisp, *rdisp;
  MPI_Request req;           /* the request of the swap in progress */
  int req_persistent;        /* req is cache[0].preq: do not free it in complete */
} nbr_t;

static size_t nbr_arrays_bytes(int n) { return (size_t)(n > 0 ? n : 1); }

static void entry_free(hs_plan p, nbr_t *t, nbr_entry *e) {
  if (e->preq != MPI_REQUEST_NULL) MPI_Request_free(&e->preq);
  for (int i = 0; e->stype && i < t->nout; i++)
    if (e->stype[i] != MPI_DATATYPE_NULL && e->stype[i] != MPI_BYTE) MPI_Type_free(&e->stype[i]);
  for (int i = 0; e->rtype && i < t->nin; i++)
    if (e->rtype[i] != MPI_DATATYPE_NULL && e->rtype[i] != MPI_BYTE) MPI_Type_free(&e->rtype[i]);
  hs__free(p, e->stype, nbr_arrays_bytes(t->nout) * sizeof(MPI_Datatype));
  hs__free(p, e->rtype, nbr_arrays_bytes(t->nin) * sizeof(MPI_Datatype));
  hs__free(p, e->ptrs, (size_t)p->nfields * sizeof(char *));
  memset(e, 0, sizeof *e);
  e->preq = MPI_REQUEST_NULL;
}

/* Build the per-edge datatypes of `arrays` into e (e must be empty). */
static int entry_build(hs_plan p, nbr_t *t, nbr_entry *e, void *const *arrays) {
  e->ptrs = hs__malloc(p, (size_t)p->nfields * sizeof(char *));
  e->stype = hs__malloc(p, nbr_arrays_bytes(t->nout) * sizeof(MPI_Datatype));
  e->rtype = hs__malloc(p, nbr_arrays_bytes(t->nin) * sizeof(MPI_Datatype));
  e->preq = MPI_REQUEST_NULL;
  if (!e->ptrs || !e->stype || !e->rtype) return hs__error(HS_ERR_NOMEM, "nbr: out of memory");
  for (int i = 0; i < t->nout; i++) e->stype[i] = MPI_DATATYPE_NULL;
  for (int i = 0; i < t->nin; i++) e->rtype[i] = MPI_DATATYPE_NULL;
  for (int f = 0; f < p->nfields; f++) e->ptrs[f] = hs__field_ptr(p, arrays, f);
  e->valid = 1;
  for (int i = 0; i < t->nout; i++) {
    const hs_peer *pe = &p->peers[t->dst[i]];
    if (!pe->nsend) continue;
    int rc = hs__sections_datatype(p, pe->send, pe->nsend, arrays, &e->stype[i]);
    if (rc != HS_OK) return rc;
  }
  for (int i = 0; i < t->nin; i++) {
    const hs_peer *pe = &p->peers[t->src[i]];
    if (!pe->nrecv) continue;
    int rc = hs__sections_datatype(p, pe->recv, pe->nrecv, arrays, &e->rtype[i]);
    if (rc != HS_OK) return rc;
  }
  /* Zero-count edges still need a valid committed type. */
  for (int i = 0; i < t->nout; i++)
    if (e->stype[i] == MPI_DATATYPE_NULL) e->stype[i] = MPI_BYTE;
  for (int i = 0; i < t->nin; i++)
    if (e->rtype[i] == MPI_DATATYPE_NULL) e->rtype[i] = MPI_BYTE;
  return HS_OK;
}

static int entry_matches(const hs_plan p, const nbr_entry *e, void *const *arrays) {
  if (!e->valid) return 0;
  for (int f = 0; f < p->nfields; f++)
    if (e->ptrs[f] != hs__field_ptr(p, arrays, f)) return 0;
  return 1;
}

static int nbr_setup(hs_plan p) {
  nbr_t *t = hs__calloc(p, sizeof *t);
  if (!t) return hs__error(HS_ERR_NOMEM, "nbr: out of memory");
  p->impl = t;
  t->graph = MPI_COMM_NULL;
  t->req = MPI_REQUEST_NULL;
  for (int c = 0; c < NBR_CACHE; c++) t->cache[c].preq = MPI_REQUEST_NULL;
  int rc = hs__opt_int(p, "pack", 0, &t->packed);
  if (rc == HS_OK) rc = hs__opt_int(p, "persistent", NBR_HAVE_PERSISTENT, &t->persistent);
  if (rc != HS_OK) return rc;
  if (t->packed != 0 && t->packed != 1)
    return hs__error(HS_ERR_ARG, "nbr: option pack = %d, must be 0 or 1", t->packed);
  if (t->persistent != 0 && t->persistent != 1)
    return hs__error(HS_ERR_ARG, "nbr: option persistent = %d, must be 0 or 1", t->persistent);
  if (t->persistent && !NBR_HAVE_PERSISTENT)
    return hs__error(HS_ERR_UNAVAILABLE,
                     "nbr: option persistent = 1 needs MPI-4 (this MPI reports MPI_VERSION %d)",
                     MPI_VERSION);
  /* Plans with hooks cannot be described by datatypes: packed path (the same on all ranks,
   * since the core checked that the ranks agree on has_callbacks). */
  if (p->has_callbacks) t->packed = 1;

  int np = p->npeers;
  t->src = hs__malloc(p, nbr_arrays_bytes(np) * sizeof(int));
  t->dst = hs__malloc(p, nbr_arrays_bytes(np) * sizeof(int));
  t->one = hs__malloc(p, nbr_arrays_bytes(np) * sizeof(int));
  t->tscount = hs__malloc(p, nbr_arrays_bytes(np) * sizeof(int));
  t->trcount = hs__malloc(p, nbr_arrays_bytes(np) * sizeof(int));
  t->zero = hs__calloc(p, nbr_arrays_bytes(np) * sizeof(MPI_Aint));
  if (!t->src || !t->dst || !t->one || !t->zero || !t->tscount || !t->trcount)
    return hs__error(HS_ERR_NOMEM, "nbr: out of memory");
  int *srank = hs__malloc(p, nbr_arrays_bytes(np) * sizeof(int));
  int *drank = hs__malloc(p, nbr_arrays_bytes(np) * sizeof(int));
  if (!srank || !drank) {
    hs__free(p, srank, nbr_arrays_bytes(np) * sizeof(int));
    hs__free(p, drank, nbr_arrays_bytes(np) * sizeof(int));
    return hs__error(HS_ERR_NOMEM, "nbr: out of memory");
  }
  /* One edge each way per peer, even where a one-direction plan moves bytes one way only
   * (count 0 on the other): MPICH 4.0.2 delivers nothing on a distributed graph whose in-
   * and out-degrees differ (checked with a 2-rank Neighbor_alltoallw). The peer set is
   * symmetric, so my edges to r match r's edges to me. */
  for (int k = 0; k < np; k++) {
    t->one[k] = 1;
    t->tscount[k] = p->peers[k].send_bytes ? 1 : 0;
    t->trcount[k] = p->peers[k].recv_bytes ? 1 : 0;
    srank[k] = drank[k] = p->peers[k].rank;
    t->src[k] = t->dst[k] = k;
  }
  t->nin = t->nout = np;
  int any = np > 0, anyall = 0;
  int mrc = MPI_Allreduce(&any, &anyall, 1, MPI_INT, MPI_MAX, p->comm);
  if (mrc == MPI_SUCCESS)
    /* Unit weights rather than MPI_UNWEIGHTED: Open MPI's sentinel pointer trips GCC's
     * -Wstringop-overread, and weights do not matter without reordering. */
    mrc = MPI_Dist_graph_create_adjacent(p->comm, t->nin, srank, t->one, t->nout, drank, t->one,
                                         MPI_INFO_NULL, 0, &t->graph);
  hs__free(p, srank, nbr_arrays_bytes(np) * sizeof(int));
  hs__free(p, drank, nbr_arrays_bytes(np) * sizeof(int));
  if (mrc != MPI_SUCCESS) {
    t->graph = MPI_COMM_NULL;
    return hs__mpi_error(mrc, "MPI_Dist_graph_create_adjacent");
  }
  MPI_Comm_set_errhandler(t->graph, MPI_ERRORS_RETURN);
  t->active = anyall;

  if (t->packed) {
    t->scount = hs__malloc(p, nbr_arrays_bytes(t->nout) * sizeof(int));
    t->sdisp = hs__malloc(p, nbr_arrays_bytes(t->nout) * sizeof(int));
    t->rcount = hs__malloc(p, nbr_arrays_bytes(t->nin) * sizeof(int));
    t->rdisp = hs__malloc(p, nbr_arrays_bytes(t->nin) * sizeof(int));
    if (!t->scount || !t->sdisp || !t->rcount || !t->rdisp)
      return hs__error(HS_ERR_NOMEM, "nbr: out of memory");
    for (int i = 0; i < t->nout; i++) {
      size_t b = p->peers[t->dst[i]].send_bytes;
      if (b > INT_MAX || t->sbytes > (size_t)INT_MAX - b)
        return hs__error(HS_ERR_ARG, "nbr: %zu bytes to send exceed the int counts of "
                                     "MPI_Ineighbor_alltoallv (limit %d)",
                         t->sbytes + b, INT_MAX);
      t->scount[i] = (int)b;
      t->sdisp[i] = (int)t->sbytes;
      t->sbytes += b;
    }
    for (int i = 0; i < t->nin; i++) {
      size_t b = p->peers[t->src[i]].recv_bytes;
      if (b > INT_MAX || t->rbytes > (size_t)INT_MAX - b)
        return hs__error(HS_ERR_ARG, "nbr: %zu bytes to receive exceed the int counts of "
                                     "MPI_Ineighbor_alltoallv (limit %d)",
                         t->rbytes + b, INT_MAX);
      t->rcount[i] = (int)b;
      t->rdisp[i] = (int)t->rbytes;
      t->rbytes += b;
    }
    t->sbuf = hs__malloc(p, t->sbytes);
    t->rbuf = hs__malloc(p, t->rbytes);
    if (!t->sbuf || !t->rbuf) return hs__error(HS_ERR_NOMEM, "nbr: out of memory for buffers");
    return HS_OK;
  }

  /* Datatype path: build the registered set now (its fields may all be given per swap, in
   * which case there is nothing to register). */
  int have_all = 1;
  for (int f = 0; f < p->nfields; f++)
    if (!p->fields[f].data) have_all = 0;
  if (have_all) {
    rc = entry_build(p, t, &t->cache[0], NULL);
    if (rc != HS_OK) return rc;
  }
#if NBR_HAVE_PERSISTENT
  /* Collective: every rank must create it, so agree on whether every rank registered. */
  int all = 0;
  HS_MPI(MPI_Allreduce(&have_all, &all, 1, MPI_INT, MPI_MIN, p->comm));
  if (t->persistent && all && t->active) {
    nbr_entry *e = &t->cache[0];
    HS_MPI(MPI_Neighbor_alltoallw_init(MPI_BOTTOM, t->tscount, t->zero, e->stype, MPI_BOTTOM,
                                       t->trcount, t->zero, e->rtype, t->graph, MPI_INFO_NULL,
                                       &e->preq));
  }
#endif
  return HS_OK;
}

/* The cache entry for this swap's arrays, built if missing. */
static int lookup(hs_plan p, nbr_t *t, void *const *arrays, nbr_entry **out) {
  t->clock++;
  for (int c = 0; c < NBR_CACHE; c++)
    if (entry_matches(p, &t->cache[c], arrays)) {
      t->cache[c].stamp = t->clock;
      *out = &t->cache[c];
      return HS_OK;
    }
  int victim = 1;
  for (int c = 1; c < NBR_CACHE; c++) {
    if (!t->cache[c].valid) {
      victim = c;
      break;
    }
    if (t->cache[c].stamp < t->cache[victim].stamp) victim = c;
  }
  nbr_entry *e = &t->cache[victim];
  entry_free(p, t, e);
  int rc = entry_build(p, t, e, arrays);
  if (rc != HS_OK) {
    entry_free(p, t, e);
    return rc;
  }
  e->stamp = t->clock;
  *out = e;
  return HS_OK;
}

static int nbr_start(hs_plan p, void *const *arrays) {
  nbr_t *t = p->impl;
  if (!t->active) return HS_OK;
  if (t->packed) {
    for (int i = 0; i < t->nout; i++) {
      const hs_peer *pe = &p->peers[t->dst[i]];
      hs__pack_peer(p, pe, arrays, t->sbuf + t->sdisp[i]);
    }
    HS_MPI(MPI_Ineighbor_alltoallv(t->sbuf, t->scount, t->sdisp, MPI_BYTE, t->rbuf, t->rcount,
                                   t->rdisp, MPI_BYTE, t->graph, &t->req));
    t->req_persistent = 0;
    return HS_OK;
  }
  nbr_entry *e;
  int rc = lookup(p, t, arrays, &e);
  if (rc != HS_OK) return rc;
  if (e->preq != MPI_REQUEST_NULL) {
    HS_MPI(MPI_Start(&e->preq));
    t->req = e->preq;
    t->req_persistent = 1;
    return HS_OK;
  }
  HS_MPI(MPI_Ineighbor_alltoallw(MPI_BOTTOM, t->tscount, t->zero, e->stype, MPI_BOTTOM,
                                 t->trcount, t->zero, e->rtype, t->graph, &t->req));
  t->req_persistent = 0;
  return HS_OK;
}

static int nbr_complete(hs_plan p, void *const *arrays) {
  nbr_t *t = p->impl;
  if (!t->active) return HS_OK;
  if (t->req_persistent) {
    /* MPI_Wait would set a persistent request's handle to inactive, not free it. */
    int mrc = MPI_Wait(&t->cache[0].preq, MPI_STATUS_IGNORE);
    t->req = MPI_REQUEST_NULL;
    if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Wait (persistent alltoallw)");
  } else {
    HS_MPI(MPI_Wait(&t->req, MPI_STATUS_IGNORE));
  }
  if (t->packed)
    for (int i = 0; i < t->nin; i++)
      hs__unpack_peer(p, &p->peers[t->src[i]], arrays, t->rbuf + t->rdisp[i]);
  return HS_OK;
}

static void nbr_destroy(hs_plan p) {
  nbr_t *t = p->impl;
  if (!t) return;
  for (int c = 0; c < NBR_CACHE; c++) entry_free(p, t, &t->cache[c]);
  int np = p->npeers;
  hs__free(p, t->src, nbr_arrays_bytes(np) * sizeof(int));
  hs__free(p, t->dst, nbr_arrays_bytes(np) * sizeof(int));
  hs__free(p, t->one, nbr_arrays_bytes(np) * sizeof(int));
  hs__free(p, t->tscount, nbr_arrays_bytes(np) * sizeof(int));
  hs__free(p, t->trcount, nbr_arrays_bytes(np) * sizeof(int));
  hs__free(p, t->zero, nbr_arrays_bytes(np) * sizeof(MPI_Aint));
  hs__free(p, t->scount, nbr_arrays_bytes(t->nout) * sizeof(int));
  hs__free(p, t->sdisp, nbr_arrays_bytes(t->nout) * sizeof(int));
  hs__free(p, t->rcount, nbr_arrays_bytes(t->nin) * sizeof(int));
  hs__free(p, t->rdisp, nbr_arrays_bytes(t->nin) * sizeof(int));
  hs__free(p, t->sbuf, t->sbytes);
  hs__free(p, t->rbuf, t->rbytes);
  if (t->graph != MPI_COMM_NULL) MPI_Comm_free(&t->graph);
  hs__free(p, t, sizeof *t);
  p->impl = NULL;
}

static const char *const nbr_keys[] = {"pack", "persistent", NULL};

const hs_transport_ops hs__transport_nbr = {
    .name = "nbr",
    .summary = "MPI neighbourhood collectives: dist graph + Ineighbor_alltoallw on field "
               "datatypes (persistent with MPI-4)",
    .query = NULL,
    .setup = nbr_setup,
    .start = nbr_start,
    .complete = nbr_complete,
    .destroy = nbr_destroy,
    .option_keys = nbr_keys,
};
