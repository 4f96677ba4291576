/* Transport "nbr": MPI neighbourhood collectives. A distributed graph with one edge per peer
 * (the core already merged duplicate neighbours into one peer per rank), and one
 * MPI_Ineighbor_alltoallw per swap whose datatypes (the plan's datatype cache) address the
 * fields directly: no packing. With MPI-4 the registered arrays get a persistent
 * MPI_Neighbor_alltoallw_init request. Plans with pack/unpack hooks, or option pack=1, pack
 * into one buffer per direction and use MPI_Ineighbor_alltoallv.
 *
 * Persistent requests and per-swap arrays: a persistent collective only matches the same
 * persistent collective on the other ranks, so a swap given per-swap arrays (arrays not NULL,
 * even if they are the registered ones: ranks cannot see each other's pointers) runs as a
 * non-persistent MPI_Ineighbor_alltoallw. Ranks must therefore pass per-swap arrays on the
 * same swaps (MONC's source_data is passed by every rank at the same point); a program that
 * cannot promise that sets persistent=0.
 *
 * Errors during a swap (docs/design.md): every rank must call the collective its neighbours
 * call, so a failing rank takes part in it with the same type signatures, and the flag rides
 * in the data: one int ahead of each peer's data (a header word in the packed buffers; with
 * datatypes, a struct of the word and the section type, hs__dtypes_get_flagged), 0 on the
 * good path, 1 from a failed round. The failing rank sends from and receives into scratch
 * (the persistent request is bound to the registered fields: through it, its own halos are
 * written, which a failed swap leaves unspecified anyway). Which collective its neighbours
 * call it knows from its own call: the same rule (per-swap arrays or not) binds every rank. */
#include "hs_pack.h"
#include "hs_transport.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define NBR_HAVE_PERSISTENT 1
#define NBR_PERSISTENT_DEFAULT "1"
#else
#define NBR_HAVE_PERSISTENT 0
#define NBR_PERSISTENT_DEFAULT "0"
#endif

typedef struct {
  int pack, persistent;
} nbr_config;

static const hs_option_spec nbr_options[] = {
    HS_OPTION_BOOL("pack", "0", nbr_config, pack,
     "pack into one buffer per direction and use MPI_Ineighbor_alltoallv"),
    HS_OPTION_BOOL("persistent", NBR_PERSISTENT_DEFAULT, nbr_config, persistent,
     "MPI_Neighbor_alltoallw_init for the registered arrays (needs MPI-4)"),
    HS_OPTIONS_END};

typedef struct {
  MPI_Comm graph;
  int active;                /* some rank of the plan has a peer: run the collectives */
  int nodata;                /* some rank registered a field without data */
  int np;                    /* edges: one per peer each way, edge k = peer k */
  int *tscount, *trcount;    /* datatype path: 1 where bytes flow, else 0 */
  MPI_Aint *zero;            /* displacements of 0 per edge */
  int packed;
  MPI_Request preq;          /* persistent request on the registered arrays, or NULL */
  /* packed path */
  char *sbuf, *rbuf;
  int *scount, *rcount, *sdisp, *rdisp;
  MPI_Request req;           /* the request of the swap in progress */
  int finished;              /* test completed the swap in progress (complete has nothing left) */
  int result;                /* ... with this status, which complete returns */
  /* failure flags (datatype paths; the packed path has a header word in its buffers) */
  int *sflag, *rflag;        /* per edge: the word ahead of its data, out and in */
  MPI_Datatype *fsend, *frecv; /* a failed round's types over scratch (built then, freed after) */
} nbr_t;

#define HDR 8 /* the packed path's header word, keeping the packed data 8-byte aligned */

static void *arr(hs_plan p, int n, size_t size) {
  return hs__calloc(p, (size_t)(n > 0 ? n : 1) * size);
}

/* One edge each way per peer, even where a one-direction plan moves bytes one way only
 * (count 0 on the other): MPICH 4.0.2 delivers nothing on a distributed graph whose in- and
 * out-degrees differ (checked with a 2-rank Neighbor_alltoallw). The peer set is symmetric,
 * so my edges to r match r's edges to me. */
static int make_graph(hs_plan p, nbr_t *t) {
  int np = t->np;
  int *ranks = arr(p, np, sizeof(int)), *one = arr(p, np, sizeof(int));
  int rc = (ranks && one) ? HS_OK : hs__error(HS_ERR_NOMEM, "nbr: out of memory");
  for (int k = 0; rc == HS_OK && k < np; k++) {
    ranks[k] = p->peers[k].rank;
    one[k] = 1;
  }
  rc = hs__agree(p->comm, rc);
  /* some rank has a peer; some rank registered a field without data (its persistent request
   * would address nothing, so no rank makes one) */
  int any[2] = {np > 0, 0}, anyall[2] = {0, 0};
  for (int f = 0; f < p->nfields; f++) any[1] |= !p->fields[f].data;
  int mrc = rc == HS_OK ? MPI_Allreduce(any, anyall, 2, MPI_INT, MPI_MAX, p->comm) : MPI_SUCCESS;
  if (rc == HS_OK && mrc == MPI_SUCCESS)
    /* Unit weights rather than MPI_UNWEIGHTED: Open MPI's sentinel pointer trips GCC's
     * -Wstringop-overread, and weights do not matter without reordering. */
    mrc = MPI_Dist_graph_create_adjacent(p->comm, np, ranks, one, np, ranks, one, MPI_INFO_NULL,
                                         0, &t->graph);
  hs__free(p, ranks);
  hs__free(p, one);
  if (rc != HS_OK) return rc;
  if (mrc != MPI_SUCCESS) {
    t->graph = MPI_COMM_NULL;
    return hs__mpi_error(mrc, "MPI_Dist_graph_create_adjacent");
  }
  MPI_Comm_set_errhandler(t->graph, MPI_ERRORS_RETURN);
  t->active = anyall[0];
  t->nodata = anyall[1];
  return HS_OK;
}

/* Counts and displacements of the packed path (int: the alltoallv limit). */
static int setup_packed(hs_plan p, nbr_t *t) {
  t->scount = arr(p, t->np, sizeof(int));
  t->sdisp = arr(p, t->np, sizeof(int));
  t->rcount = arr(p, t->np, sizeof(int));
  t->rdisp = arr(p, t->np, sizeof(int));
  if (!t->scount || !t->sdisp || !t->rcount || !t->rdisp)
    return hs__error(HS_ERR_NOMEM, "nbr: out of memory");
  size_t sb = 0, rb = 0;
  for (int k = 0; k < t->np; k++) {
    size_t s = p->peers[k].send_bytes, r = p->peers[k].recv_bytes;
    s += s ? HDR : 0; /* a header word ahead of each peer's data */
    r += r ? HDR : 0;
    if (s > INT_MAX - HDR || r > INT_MAX - HDR || sb > (size_t)INT_MAX - s || rb > (size_t)INT_MAX - r)
      return hs__error(HS_ERR_ARG, "nbr: %zu bytes per swap exceed the int counts of "
                                   "MPI_Ineighbor_alltoallv (limit %d)",
                       (sb + s > rb + r ? sb + s : rb + r), INT_MAX);
    t->scount[k] = (int)s;
    t->sdisp[k] = (int)sb;
    t->rcount[k] = (int)r;
    t->rdisp[k] = (int)rb;
    sb += s;
    rb += r;
  }
  t->sbuf = hs__calloc(p, sb); /* the header words 0 */
  t->rbuf = hs__malloc(p, rb);
  if (!t->sbuf || !t->rbuf) return hs__error(HS_ERR_NOMEM, "nbr: out of memory for buffers");
  return HS_OK;
}

static int nbr_setup(hs_plan p) {
  const nbr_config *c = p->config;
  nbr_t *t = hs__impl_new(p, sizeof *t);
  if (!t) return HS_ERR_NOMEM;
  t->graph = MPI_COMM_NULL;
  t->req = t->preq = MPI_REQUEST_NULL;
  t->np = p->npeers;
  if (c->persistent && !NBR_HAVE_PERSISTENT)
    return hs__error(HS_ERR_UNAVAILABLE,
                     "nbr: option persistent = 1 needs MPI-4 (this MPI reports MPI_VERSION %d)",
                     MPI_VERSION);
  /* Hooks cannot be described by datatypes (the same on all ranks: the core checked). */
  t->packed = c->pack || p->has_callbacks;
  int rc = make_graph(p, t);
  if (rc != HS_OK) return rc;
  if (t->packed) return setup_packed(p, t);
  t->tscount = arr(p, t->np, sizeof(int));
  t->trcount = arr(p, t->np, sizeof(int));
  t->zero = arr(p, t->np, sizeof(MPI_Aint));
  t->sflag = arr(p, t->np, sizeof(int));
  t->rflag = arr(p, t->np, sizeof(int));
  t->fsend = arr(p, t->np, sizeof(MPI_Datatype));
  t->frecv = arr(p, t->np, sizeof(MPI_Datatype));
  if (!t->tscount || !t->trcount || !t->zero || !t->sflag || !t->rflag || !t->fsend || !t->frecv)
    return hs__error(HS_ERR_NOMEM, "nbr: out of memory");
  for (int k = 0; k < t->np; k++) {
    t->tscount[k] = p->peers[k].send_bytes ? 1 : 0;
    t->trcount[k] = p->peers[k].recv_bytes ? 1 : 0;
    t->fsend[k] = t->frecv[k] = MPI_BYTE; /* none built */
  }
#if NBR_HAVE_PERSISTENT
  if (c->persistent && t->active && !t->nodata) {
    const hs_dtypes *d;
    rc = hs__agree(p->comm, hs__dtypes_get_flagged(p, NULL, t->sflag, t->rflag, &d));
    if (rc != HS_OK) return rc;
    HS_MPI(MPI_Neighbor_alltoallw_init(MPI_BOTTOM, t->tscount, t->zero, d->send, MPI_BOTTOM,
                                       t->trcount, t->zero, d->recv, t->graph, MPI_INFO_NULL,
                                       &t->preq));
  }
#endif
  return HS_OK;
}

/* A failed round's types: the flag word, then as many bytes as the data in scratch (the
 * data types' signature: an int and their bytes), in chunks for the int counts. */
static int scratch_type(const int *flag, char *buf, size_t bytes, MPI_Datatype *out) {
  enum { CHUNK = 1 << 20 };
  MPI_Datatype chunk, types[3] = {MPI_INT, MPI_BYTE, MPI_BYTE};
  int len[3] = {1, (int)(bytes / CHUNK), (int)(bytes % CHUNK)};
  MPI_Aint disp[3];
  HS_MPI(MPI_Type_contiguous(CHUNK, MPI_BYTE, &chunk));
  types[1] = chunk;
  MPI_Get_address(flag, &disp[0]);
  MPI_Get_address(buf, &disp[1]);
  MPI_Get_address(buf + bytes / CHUNK * CHUNK, &disp[2]);
  int mrc = MPI_Type_create_struct(3, len, disp, types, out);
  if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(out);
  MPI_Type_free(&chunk);
  if (mrc != MPI_SUCCESS) {
    *out = MPI_BYTE;
    return hs__mpi_error(mrc, "MPI_Type_create_struct (failed round)");
  }
  return HS_OK;
}

/* The datatype path's round: one type per peer each way, at absolute addresses. */
static int start_alltoallw(nbr_t *t, const MPI_Datatype *send, const MPI_Datatype *recv) {
  HS_MPI(MPI_Ineighbor_alltoallw(MPI_BOTTOM, t->tscount, t->zero, send, MPI_BOTTOM, t->trcount,
                                 t->zero, recv, t->graph, &t->req));
  return HS_OK;
}

/* A failed round on the datatype path, not through the persistent request: flags out, the
 * neighbours' data into scratch, no field touched. */
static int start_failed(hs_plan p, nbr_t *t) {
  size_t bytes = 0;
  for (int k = 0; k < t->np; k++) bytes += p->peers[k].send_bytes + p->peers[k].recv_bytes;
  char *b = hs__fail_scratch(p, bytes);
  if (!b) return hs__error(HS_ERR_NOMEM, "nbr: out of memory for a failed swap");
  for (int k = 0; k < t->np; k++) t->fsend[k] = t->frecv[k] = MPI_BYTE;
  for (int k = 0; k < t->np; k++) {
    size_t s = p->peers[k].send_bytes, r = p->peers[k].recv_bytes;
    int rc = s ? scratch_type(&t->sflag[k], b, s, &t->fsend[k]) : HS_OK;
    if (rc == HS_OK && r) rc = scratch_type(&t->rflag[k], b + s, r, &t->frecv[k]);
    if (rc != HS_OK) return rc;
    b += s + r;
  }
  return start_alltoallw(t, t->fsend, t->frecv);
}

static int nbr_start(hs_plan p, void *const *arrays) {
  nbr_t *t = p->impl;
  if (!t->active) return HS_OK;
  const bool failed = hs__failed_round(p);
  if (t->packed) {
    const int one = 1;
    for (int k = 0; k < t->np; k++) {
      if (!t->scount[k]) continue;
      if (failed) /* the flag, and no field read */
        memcpy(t->sbuf + t->sdisp[k], &one, sizeof one);
      else
        hs__pack_peer(p, &p->peers[k], arrays, t->sbuf + t->sdisp[k] + HDR);
    }
    HS_MPI(MPI_Ineighbor_alltoallv(t->sbuf, t->scount, t->sdisp, MPI_BYTE, t->rbuf, t->rcount,
                                   t->rdisp, MPI_BYTE, t->graph, &t->req));
    return HS_OK;
  }
  for (int k = 0; failed && k < t->np; k++) t->sflag[k] = 1;
  /* Failed: the collective the neighbours call, by the rule its own call shows. */
  if (t->preq != MPI_REQUEST_NULL && (failed ? !p->fail_given : !arrays)) {
    HS_MPI(MPI_Start(&t->preq));
    return HS_OK;
  }
  if (failed) return start_failed(p, t);
  const hs_dtypes *d;
  int rc = hs__dtypes_get_flagged(p, arrays, t->sflag, t->rflag, &d);
  if (rc != HS_OK) return rc;
  return start_alltoallw(t, d->send, d->recv);
}

/* The request of the swap in progress: a started persistent request becomes inactive when
 * it completes (not freed), an ordinary one MPI_REQUEST_NULL. */
static MPI_Request *current(nbr_t *t) { return t->req != MPI_REQUEST_NULL ? &t->req : &t->preq; }

/* After the collective completed (mrc: how): the failure flags, the packed unpack. */
static int finish(hs_plan p, nbr_t *t, void *const *arrays, int mrc) {
  const bool failed = hs__failed_round(p);
  t->finished = 1;
  for (int k = 0; failed && !t->packed && k < t->np; k++) {
    t->sflag[k] = 0;
    if (t->fsend[k] != MPI_BYTE) MPI_Type_free(&t->fsend[k]);
    if (t->frecv[k] != MPI_BYTE) MPI_Type_free(&t->frecv[k]);
    t->fsend[k] = t->frecv[k] = MPI_BYTE;
  }
  if (mrc != MPI_SUCCESS) return t->result = hs__mpi_error(mrc, "MPI_Wait (nbr)");
  t->result = HS_OK;
  for (int k = 0; k < t->np; k++) {
    int flag = 0;
    if (t->packed && t->rcount[k])
      memcpy(&flag, t->rbuf + t->rdisp[k], sizeof flag);
    else if (!t->packed && t->trcount[k])
      flag = t->rflag[k];
    if (flag) /* its data is no data: the failure that goes with it */
      hs__fail_seen(p, p->peers[k].rank);
    else if (t->packed && t->rcount[k] && !failed)
      hs__unpack_peer(p, &p->peers[k], arrays, t->rbuf + t->rdisp[k] + HDR);
  }
  if (failed && t->packed) {
    const int zero = 0;
    for (int k = 0; k < t->np; k++)
      if (t->scount[k]) memcpy(t->sbuf + t->sdisp[k], &zero, sizeof zero);
  }
  return HS_OK;
}

/* MPI_Test on the collective's request; done, it finishes the swap as complete would. */
static int nbr_test(hs_plan p, void *const *arrays, int *done) {
  nbr_t *t = p->impl;
  *done = 1;
  if (!t->active || t->finished) return HS_OK;
  int mrc = MPI_Test(current(t), done, MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS) *done = 1; /* the error is the swap's result: finish reports it */
  return *done ? finish(p, t, arrays, mrc) : HS_OK;
}

static int nbr_complete(hs_plan p, void *const *arrays) {
  nbr_t *t = p->impl;
  if (!t->active) return HS_OK;
  if (t->finished) { /* by test */
    t->finished = 0;
    return t->result;
  }
  int rc = finish(p, t, arrays, MPI_Wait(current(t), MPI_STATUS_IGNORE));
  t->finished = 0;
  return rc;
}

static void nbr_destroy(hs_plan p) {
  nbr_t *t = p->impl;
  if (!t) return;
  if (t->preq != MPI_REQUEST_NULL) MPI_Request_free(&t->preq);
  void *blocks[] = {t->tscount, t->trcount, t->zero,  t->scount, t->sdisp, t->rcount, t->rdisp,
                    t->sbuf,    t->rbuf,    t->sflag, t->rflag,  t->fsend, t->frecv, t};
  if (t->graph != MPI_COMM_NULL) MPI_Comm_free(&t->graph);
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) hs__free(p, blocks[i]);
  p->impl = NULL;
}

HS_DEFINE_TRANSPORT(hs__transport_nbr, nbr, "nbr", HS_TRANSPORT_NBR, HS_OPS_FAILROUND,
                    "MPI neighbourhood collectives: dist graph + Ineighbor_alltoallw on field "
                    "datatypes (persistent with MPI-4)",
                    nbr_options, nbr_config, .test = nbr_test);
