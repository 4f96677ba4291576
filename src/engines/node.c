/* The on-node engine: what the transports that read their on-node neighbours' memory share
 * (shm: MPI-3 shared memory; cma: cross-memory attach). Like PETSc's PetscSF implementations,
 * which start from impls/basic and override a few operations, a transport's state begins with
 * an hs_node, it uses the engine's start, complete, reverse and destroy as its own ops, and
 * supplies only what differs (hs_node_ops): what it publishes for an operation, how it reads an
 * on-node neighbour's edge, and where the reverse finds a neighbour's halo boxes.
 *
 * The engine splits the plan's peers into on-node edges and off-node peers, runs the core's
 * two-sided engine over the off-node ones, and keeps per rank, in one MPI-3 shared window, a
 * control block (the `posted` counter, the posted operation's mode, a `consumed` counter per
 * node rank, the transport's published area) and optionally a box per on-node peer. At setup
 * it sends each on-node peer its send and receive sections. This file sets all that up and
 * tears it down; each swap runs the posted / consumed protocol (src/engines/node_protocol.c),
 * forward and, through the core's pull (hs_pull, src/engines/reverse.c), reverse. Option
 * sync=barrier (shm) keeps the core's two-sided reverse. */
#include "node_state.h"

#include <stdlib.h>
#include <string.h>

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

int hs__node_comm(MPI_Comm comm, int node_size, MPI_Comm *node) {
  int rank;
  MPI_Comm phys;
  *node = MPI_COMM_NULL;
  MPI_Comm_rank(comm, &rank);
  HS_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &phys));
  if (node_size > 0) {
    int mrc = MPI_Comm_split(phys, rank / node_size, rank, node);
    MPI_Comm_free(&phys);
    if (mrc != MPI_SUCCESS) {
      *node = MPI_COMM_NULL;
      return hs__mpi_error(mrc, "MPI_Comm_split (virtual nodes)");
    }
  } else {
    *node = phys;
  }
  MPI_Comm_set_errhandler(*node, MPI_ERRORS_RETURN);
  return HS_OK;
}

uint32_t hs__node_mode(const hs_node_edge *e) { return ctl_of(e->seg)->mode & ~HS_NODE_BOXED; }

/* ------------------------------------------------------------------ setup */
/* The node communicator; peers split into on-node edges and off-node peers. */
static int partition(hs_plan p, hs_node *n, const hs_node_config *c) {
  int rc = hs__node_comm(p->comm, c->node_size, &n->core->node);
  if (rc != HS_OK) return rc;
  MPI_Comm_rank(n->core->node, &n->core->nrank);
  MPI_Comm_size(n->core->node, &n->core->nsize);
  size_t np = (size_t)(p->npeers > 0 ? p->npeers : 1);
  n->edges = hs__calloc(p, np * sizeof *n->edges);
  n->core->remote_peers = hs__malloc(p, np * sizeof(int));
  int *prank = malloc(np * sizeof(int)), *nrank = malloc(np * sizeof(int));
  if (!n->edges || !n->core->remote_peers || !prank || !nrank) {
    free(prank);
    free(nrank);
    return hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  }
  MPI_Group gp, gn;
  MPI_Comm_group(p->comm, &gp);
  MPI_Comm_group(n->core->node, &gn);
  for (int k = 0; k < p->npeers; k++) prank[k] = p->peers[k].rank;
  if (p->npeers) MPI_Group_translate_ranks(gp, p->npeers, prank, gn, nrank);
  MPI_Group_free(&gp);
  MPI_Group_free(&gn);
  for (int k = 0; k < p->npeers; k++) {
    /* Hooks run in the owning process only: a transport that reads another process's memory
     * sends such plans by message. */
    if (nrank[k] == MPI_UNDEFINED || (c->hooks_by_message && p->has_callbacks) || c->all_by_message) {
      n->core->remote_peers[n->nremote++] = k;
    } else {
      hs_node_edge *e = &n->edges[n->nedges++];
      e->peer = k;
      e->nrank = nrank[k];
    }
  }
  free(prank);
  free(nrank);
  return HS_OK;
}

/* My segment: the control block, the transport's published area, the boxes. */
static int window(hs_plan p, hs_node *n, const hs_node_config *c) {
  size_t cb = align_up(sizeof(node_ctl) + (size_t)n->core->nsize * LINE + c->pub_bytes, LINE), off = cb;
  for (int i = 0; c->boxes && i < n->nedges; i++) {
    const hs_peer *pe = &p->peers[n->edges[i].peer];
    n->edges[i].my_box = off; /* forward: my strips for it; reverse: my halo boxes from it */
    off = align_up(off + (pe->send_bytes > pe->recv_bytes ? pe->send_bytes : pe->recv_bytes), LINE);
  }
  n->core->seg_bytes = off;
  MPI_Info info;
  MPI_Info_create(&info);
  if (c->noncontig) MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void *base = NULL;
  int mrc = MPI_Win_allocate_shared((MPI_Aint)n->core->seg_bytes, 1, info, n->core->node, &base, &n->core->win);
  MPI_Info_free(&info);
  if (mrc != MPI_SUCCESS) {
    n->core->win = MPI_WIN_NULL;
    return hs__mpi_error(mrc, "MPI_Win_allocate_shared");
  }
  MPI_Win_set_errhandler(n->core->win, MPI_ERRORS_RETURN);
  hs__account(p, (int64_t)n->core->seg_bytes);
  n->seg = base;
  memset(n->seg, 0, cb);
  n->pub = n->seg + sizeof(node_ctl) + (size_t)n->core->nsize * LINE;
  atomic_init(&ctl_of(n->seg)->posted, 0);
  atomic_init(&ctl_of(n->seg)->progress, 0);
  ctl_of(n->seg)->failed = 0;
  for (int j = 0; j < n->core->nsize; j++) atomic_init(consumed_of(n->seg, j), 0);
  /* One passive epoch for the life of the plan: MPI_Win_sync needs it. */
  HS_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, n->core->win));
  n->core->locked = 1;
  for (int i = 0; i < n->nedges; i++) {
    hs_node_edge *e = &n->edges[i];
    MPI_Aint sz;
    int du;
    void *b;
    HS_MPI(MPI_Win_shared_query(n->core->win, e->nrank, &sz, &du, &b));
    e->seg = b;
    e->pub = e->seg + sizeof(node_ctl) + (size_t)n->core->nsize * LINE;
  }
  return HS_OK;
}

/* Tell each on-node peer where my box for it is and what my send and receive sections look
 * like: its ssec say where my halo is in its fields, its rsec which of its halo boxes hold my
 * points (the reverse's sources). */
static int exchange(hs_plan p, hs_node *n) {
  int ne = n->nedges, nq = 0;
  MPI_Request *rq = malloc((size_t)(6 * ne + 1) * sizeof *rq);
  uint64_t *mine = malloc((size_t)(2 * ne + 1) * sizeof *mine), *its = mine + ne;
  int rc = rq && mine ? HS_OK : hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  for (int i = 0; rc == HS_OK && i < ne; i++) {
    const hs_peer *pe = &p->peers[n->edges[i].peer];
    n->edges[i].ssec = hs__malloc(p, (size_t)(pe->nrecv + 1) * sizeof(hs_section));
    n->edges[i].rsec = hs__malloc(p, (size_t)(pe->nsend + 1) * sizeof(hs_section));
    if (!n->edges[i].ssec || !n->edges[i].rsec)
      rc = hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  }
  rc = hs__agree(p->comm, rc);
  for (int i = 0; rc == HS_OK && i < ne; i++) {
    hs_node_edge *e = &n->edges[i];
    const hs_peer *pe = &p->peers[e->peer];
    int nr = (int)(pe->nrecv * sizeof(hs_section)), ns = (int)(pe->nsend * sizeof(hs_section));
    mine[i] = e->my_box;
    MPI_Irecv(&its[i], 1, MPI_UINT64_T, pe->rank, HS_TAG_SETUP, p->comm, &rq[nq++]);
    MPI_Isend(&mine[i], 1, MPI_UINT64_T, pe->rank, HS_TAG_SETUP, p->comm, &rq[nq++]);
    /* Two messages each way on one tag, matched in order: send sections, then receive ones. */
    MPI_Irecv(e->ssec, nr, MPI_BYTE, pe->rank, HS_TAG_SETUP2, p->comm, &rq[nq++]);
    MPI_Irecv(e->rsec, ns, MPI_BYTE, pe->rank, HS_TAG_SETUP2, p->comm, &rq[nq++]);
    MPI_Isend(pe->send, ns, MPI_BYTE, pe->rank, HS_TAG_SETUP2, p->comm, &rq[nq++]);
    MPI_Isend(pe->recv, nr, MPI_BYTE, pe->rank, HS_TAG_SETUP2, p->comm, &rq[nq++]);
  }
  if (rc == HS_OK) {
    int mrc = MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE);
    rc = mrc == MPI_SUCCESS ? HS_OK : hs__mpi_error(mrc, "MPI_Waitall (setup exchange)");
  }
  for (int i = 0; rc == HS_OK && i < ne; i++) {
    hs_node_edge *e = &n->edges[i];
    const hs_peer *pe = &p->peers[e->peer];
    e->its_box = (size_t)its[i];
    for (int j = 0; rc == HS_OK && j < pe->nrecv; j++)
      if (e->ssec[j].bytes != pe->recv[j].bytes)
        rc = hs__error(HS_ERR_INTERNAL, "%s: section %d from rank %d has %zu bytes, this rank "
                       "expects %zu", p->transport_name, j, pe->rank, e->ssec[j].bytes,
                       pe->recv[j].bytes);
    for (int j = 0; rc == HS_OK && j < pe->nsend; j++)
      if (e->rsec[j].bytes != pe->send[j].bytes)
        rc = hs__error(HS_ERR_INTERNAL, "%s: rank %d's halo box %d has %zu bytes, not %zu",
                       p->transport_name, pe->rank, j, e->rsec[j].bytes, pe->send[j].bytes);
  }
  free(rq);
  free(mine);
  return hs__agree(p->comm, rc);
}

int hs__node_setup(hs_plan p, const hs_node_ops *ops, const hs_node_config *c, size_t bytes) {
  hs_node *n = hs__impl_new(p, bytes);
  if (n) n->core = hs__calloc(p, sizeof *n->core);
  int rc = n && n->core ? HS_OK : hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  rc = hs__agree(p->comm, rc); /* before any collective call */
  if (rc != HS_OK) return rc;
  n->core->ops = ops;
  n->core->node = MPI_COMM_NULL;
  n->core->win = MPI_WIN_NULL;
  n->core->barrier = c->barrier;
  n->core->lockstep = c->lockstep;
  n->chunk_ok = !c->barrier && ops->post_chunk && ops->read_chunk;
  rc = hs__agree(p->comm, partition(p, n, c));
  if (rc != HS_OK) return rc;
  hs_twosided_config remote; /* the two-sided engine's defaults (p2p's) */
  rc = hs__options_defaults(p, hs__twosided_options, &remote);
  if (rc == HS_OK)
    rc = hs__twosided_create(p, n->core->remote_peers, n->nremote, &remote, &n->core->remote);
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) return rc;
  rc = hs__agree(p->comm, window(p, n, c));
  if (rc != HS_OK) return rc;
  rc = exchange(p, n);
  if (rc != HS_OK) return rc;
  rc = hs__agree(p->comm, ops->setup(p, n));
  if (rc != HS_OK) return rc;
  /* Make the control blocks visible to the node before anyone reads them. */
  HS_MPI(MPI_Win_sync(n->core->win));
  HS_MPI(MPI_Barrier(n->core->node));
  HS_MPI(MPI_Win_sync(n->core->win));
  rc = ops->connect ? ops->connect(p, n) : HS_OK;
  n->core->pedge = hs__malloc(p, (size_t)(n->nedges + 1) * sizeof(hs_pull_edge));
  if (rc == HS_OK && !n->core->pedge) rc = hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  for (int i = 0; rc == HS_OK && i < n->nedges; i++) {
    hs_node_edge *e = &n->edges[i];
    n->core->pedge[i] = (hs_pull_edge){e->peer, &ctl_of(e->seg)->posted, consumed_of(n->seg, e->nrank),
                                 consumed_of(e->seg, n->core->nrank), &ctl_of(e->seg)->failed};
  }
  n->core->pull = (hs_pull){.win = n->core->win, .any_order = c->pull_any_order, .nedges = n->nedges,
                      .edges = n->core->pedge, .ctx = n, .source = ops->source};
  return rc;
}

/* ------------------------------------------------------------------ reverse, destroy */
int hs__node_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  hs_node *n = p->impl;
  if (n->core->barrier) return hs__reverse_start(p, op, arrays);
  int rc = hs__reverse_create(p, &n->core->pull, &n->core->rev);
  if (rc != HS_OK) return rc;
  ++n->seq;
  rc = n->nedges ? hs__node_post(p, n, arrays, 1) : HS_OK;
  return rc == HS_OK ? hs__reverse_begin(p, n->core->rev, arrays) : rc;
}

int hs__node_reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  hs_node *n = p->impl;
  if (n->core->barrier) return hs__reverse_complete(p, op, arrays);
  /* It also waits for this rank's readers (hs_pull's its_consumed) before returning. */
  return hs__reverse_finish(p, n->core->rev, op, arrays, n->seq);
}

void hs__node_destroy(hs_plan p) {
  hs_node *n = p->impl;
  if (!n || !n->core) {
    hs__free(p, n);
    p->impl = NULL;
    return;
  }
  hs__node_settle(p, n); /* readers of my boxes, before the window goes */
  if (n->core->ops->release) n->core->ops->release(p, n);
  hs__twosided_free(p, n->core->remote);
  hs__reverse_destroy(p, n->core->rev);
  hs__free(p, n->core->pedge);
  for (int i = 0; n->edges && i < n->nedges; i++) {
    hs__free(p, n->edges[i].ssec);
    hs__free(p, n->edges[i].rsec);
  }
  hs__free(p, n->edges);
  hs__free(p, n->core->remote_peers);
  if (n->core->win != MPI_WIN_NULL) {
    if (n->core->locked) MPI_Win_unlock_all(n->core->win);
    MPI_Win_free(&n->core->win);
    hs__account(p, -(int64_t)n->core->seg_bytes);
  }
  if (n->core->node != MPI_COMM_NULL) MPI_Comm_free(&n->core->node);
  hs__free(p, n->core);
  hs__free(p, n);
  p->impl = NULL;
}

void hs__node_describe(hs_plan p, char *buf, size_t len) {
  hs_node *n = p->impl;
  size_t k = 0;
  if (!n || !n->core) return;
  hs__appendf(buf, len, &k, "; %s: %d on-node peers (node of %d ranks%s), %d peers by message%s",
              p->ops->name, n->nedges, n->core->nsize,
              n->core->barrier ? ", two barriers per swap" : "", n->nremote, p->has_callbacks && n->nremote && !n->nedges
                              ? " (pack/unpack hooks run only in their own process)" : "");
  if (n->core->ops->describe && k + 1 < len) n->core->ops->describe(p, n, buf + k, len - k);
}
