/* The posted / consumed protocol of the on-node engine (docs/shm.md gives the argument), both
 * halves in one place. Forward: start publishes this rank's strips and stores `posted`;
 * complete (or test) reads every on-node neighbour as soon as its `posted` reaches the
 * operation, stores `consumed` for it, and returns once every reader of this rank's data has
 * stored `consumed`. Reverse (hs_pull, run by src/engines/reverse.c): the same counters with
 * the roles swapped; the holder of a halo box posts it, the owner opens the edge before its
 * first read and releases it after its last, and the holder returns once every owner that
 * reads its halos has released them. Option sync=barrier (shm) replaces the counters by two
 * node-wide barriers per swap. A forward whose data lies in the owner's boxes only
 * (HS_NODE_BOXED) returns from complete without waiting for its readers: they are waited for
 * by the next post, before it overwrites the boxes and the control block. */
#include "node_state.h"

static int readers_done(hs_plan p, hs_node *n, uint64_t seq, int wait, int *ready);

int hs__node_settle(hs_plan p, hs_node *n) {
  struct hs_node_core *c = n->core;
  if (!c->owed) return HS_OK;
  int ready, rc = readers_done(p, n, c->owed, 1, &ready);
  c->owed = 0;
  return rc;
}

/* ------------------------------------------------------------------ operations */
static int poll_edges(hs_plan p, hs_node *n, void *const *arrays, int *progressed);

/* Forwards that do not wait for their neighbours' chunks after a wait ran out of time. */
#define LOCKSTEP_REST 16

/* Some neighbour still to be read has published fewer than `upto` chunks. */
static int lagging(const hs_node *n, int upto) {
  for (int i = 0; i < n->nedges; i++)
    if (n->edges[i].pending && n->edges[i].next_chunk < upto) return 1;
  return 0;
}

/* A chunked forward's chunk c (field c) after publishing it: field c's self copies (self:
 * the core leaves them to us), then the neighbours' chunks published so far. With lockstep,
 * it waits for their chunk c too, as long as *budget (seconds) lasts: a pair of ranks in
 * step then writes each other's field c while both still have its lines cached. A wait that
 * runs out ends the waiting for this forward and the next LOCKSTEP_REST; none ever blocks. */
static int after_chunk(hs_plan p, hs_node *n, void *const *arrays, int c, int self,
                       double *budget) {
  if (self) hs__self_copy_field(p, arrays, c);
  int progressed, rc = poll_edges(p, n, arrays, &progressed);
  if (rc != HS_OK || *budget <= 0 || c + 1 == n->nchunks || !lagging(n, c + 1)) return rc;
  double t0 = hs__wtime(), t = t0;
  while (rc == HS_OK && n->core->left && lagging(n, c + 1) && t - t0 < *budget) {
    rc = poll_edges(p, n, arrays, &progressed);
    t = hs__wtime();
  }
  *budget -= t - t0;
  if (*budget <= 0) n->core->lockstep_rest = LOCKSTEP_REST;
  return rc;
}

/* Publish operation n->seq to my on-node readers. Once they finished the previous operation
 * (its complete waited for that, or, boxed, hs__node_settle here), my control block and boxes
 * are mine to overwrite. A chunked forward publishes its chunks one by one (`progress`), and
 * after each reads what the neighbours have published so far (after_chunk): their chunk c is
 * written into my halo while the lines my own chunk c touched are still in cache. */
int hs__node_post(hs_plan p, hs_node *n, void *const *arrays, int reverse) {
  struct hs_node_core *c = n->core;
  int rc = hs__node_settle(p, n);
  if (rc != HS_OK) return rc;
  c->boxed = 0;
  n->nchunks = 0;
  node_ctl *ctl = ctl_of(n->seg);
  if (hs__failed_round(p)) { /* the flag instead of data (docs/design.md, "Errors during a swap") */
    ctl->failed = n->seq;
  } else {
    uint32_t mode = c->ops->post(p, n, arrays, reverse);
    int chunked = !reverse && n->chunk_ok && n->nchunks > 1;
    ctl->mode = mode;
    ctl->chunks = chunked ? (uint32_t)n->nchunks : 0;
    c->boxed = !reverse && !c->barrier && (mode & HS_NODE_BOXED);
    /* lockstep: the wait budget, set once chunk 0 is done; none while the ranks cannot all run */
    int step = chunked && c->lockstep > 0 && !hs__cores_contended() && c->lockstep_rest == 0;
    if (chunked && c->lockstep_rest > 0) c->lockstep_rest--;
    /* chunk k is field k (hs_node_ops): the self copies can go beside the chunks */
    int self = chunked && n->nchunks == p->nfields && hs__self_copies_mine(p);
    double budget = 0, t0 = step ? hs__wtime() : 0;
    for (int k = 0; chunked && k < n->nchunks; k++) {
      c->ops->post_chunk(p, n, arrays, k);
      int mrc = MPI_Win_sync(c->win);
      if (mrc != MPI_SUCCESS && rc == HS_OK) rc = hs__mpi_error(mrc, "MPI_Win_sync");
      atomic_store_explicit(&ctl->progress, n->seq * CHUNK_SCALE + (uint64_t)k + 1,
                            memory_order_release);
      if (k == 0 && step) budget = c->lockstep * (hs__wtime() - t0);
      int prc = after_chunk(p, n, arrays, k, self, &budget);
      if (prc != HS_OK && rc == HS_OK) rc = prc; /* posted still goes out: nobody waits for ever */
    }
    if (self) hs__self_copies_taken(p);
  }
  int mrc = MPI_Win_sync(c->win);
  if (mrc != MPI_SUCCESS && rc == HS_OK) rc = hs__mpi_error(mrc, "MPI_Win_sync");
  if (!c->barrier) atomic_store_explicit(&ctl->posted, n->seq, memory_order_release);
  if (c->boxed) c->owed = n->seq; /* whatever complete does, the next post waits */
  return rc;
}

/* Edge i's chunks up to (not including) upto that this rank has not read yet; the first
 * failed read's status. */
static int read_chunks(hs_plan p, hs_node *n, int i, void *const *arrays, int upto) {
  hs_node_edge *e = &n->edges[i];
  int rc = HS_OK;
  while (e->next_chunk < upto) {
    int crc = n->core->ops->read_chunk(p, n, i, arrays, e->next_chunk++);
    if (crc != HS_OK && rc == HS_OK) rc = crc;
  }
  return rc;
}

/* Edge i has posted operation seq: read its data (the chunks not read yet), or note its
 * failure flag. A failed round here reads nothing. */
static int read_edge(hs_plan p, hs_node *n, int i, void *const *arrays, uint64_t seq) {
  hs_node_edge *e = &n->edges[i];
  node_ctl *its = ctl_of(e->seg);
  if (its->failed == seq) {
    hs__fail_seen(p, p->peers[e->peer].rank);
    return HS_OK;
  }
  if (hs__failed_round(p)) return HS_OK;
  if (its->chunks < 2) return n->core->ops->read(p, n, i, arrays);
  return read_chunks(p, n, i, arrays, (int)its->chunks);
}

int hs__node_start(hs_plan p, void *const *arrays) {
  hs_node *n = p->impl;
  struct hs_node_core *c = n->core;
  ++n->seq;
  c->left = 0;
  c->remote_done = c->remote_complete = 0;
  c->err = HS_OK;
  c->bstep = 0;
  for (int i = 0; i < n->nedges; i++) {
    n->edges[i].pending = p->peers[n->edges[i].peer].nrecv > 0;
    n->edges[i].next_chunk = 0;
    c->left += n->edges[i].pending;
  }
  int rc = hs__twosided_start(p, c->remote, arrays);
  if (rc == HS_OK && n->nedges) rc = hs__node_post(p, n, arrays, 0);
  /* sync=barrier: the first barrier stands for posted; nonblocking, so test can poll it. */
  if (rc == HS_OK && c->barrier) HS_MPI(MPI_Ibarrier(c->node, &c->bar));
  return rc;
}

/* sync=barrier: the barrier in flight has completed (*flag); wait = 1 waits for it. */
static int barrier_done(struct hs_node_core *c, int wait, int *flag) {
  *flag = 1;
  if (wait) HS_MPI(MPI_Wait(&c->bar, MPI_STATUS_IGNORE));
  else HS_MPI(MPI_Test(&c->bar, flag, MPI_STATUS_IGNORE));
  return HS_OK;
}

/* sync=barrier, one step of the swap: the first barrier (posted) in flight since start, then
 * the reads and the off-node receives, then the second barrier (consumed). wait = 0 polls
 * (MPI_Test, hs__twosided_test), 1 blocks; returns with c->bstep == 3 once every halo is
 * written and the readers of my data are done. */
static int step_barrier(hs_plan p, hs_node *n, void *const *arrays, int wait) {
  struct hs_node_core *c = n->core;
  if (c->bstep == 0) {
    int flag, brc = barrier_done(c, wait, &flag);
    if (brc != HS_OK || !flag) return brc;
    HS_MPI(MPI_Win_sync(c->win));
    for (int i = 0; i < n->nedges; i++) {
      int rc = n->edges[i].pending ? read_edge(p, n, i, arrays, n->seq) : HS_OK;
      if (rc != HS_OK && c->err == HS_OK) c->err = rc;
    }
    c->left = 0;
    c->bstep = 1;
  }
  if (c->bstep == 1) {
    if (wait) {
      int rc = hs__twosided_complete(p, c->remote, arrays);
      if (rc != HS_OK) return rc;
      c->remote_done = c->remote_complete = 1;
    } else if (!c->remote_done) {
      int rc = hs__twosided_test(p, c->remote, arrays, &c->remote_done);
      if (rc != HS_OK) return rc;
    }
    if (!c->remote_done) return HS_OK;
    HS_MPI(MPI_Win_sync(c->win));
    HS_MPI(MPI_Ibarrier(c->node, &c->bar));
    c->bstep = 2;
  }
  if (c->bstep == 2) {
    int flag, brc = barrier_done(c, wait, &flag);
    if (brc != HS_OK) return brc;
    if (flag) c->bstep = 3;
  }
  return HS_OK;
}

/* Until every on-node reader of my data has stored consumed >= seq (wait = 0: *ready says
 * whether they have, without waiting). */
static int readers_done(hs_plan p, hs_node *n, uint64_t seq, int wait, int *ready) {
  *ready = 1;
  for (int i = 0; i < n->nedges; i++) {
    if (!p->peers[n->edges[i].peer].nsend) continue;
    _Atomic uint64_t *c = consumed_of(n->edges[i].seg, n->core->nrank);
    unsigned spins = 0;
    while (atomic_load_explicit(c, memory_order_acquire) < seq) {
      if (!wait) {
        *ready = 0;
        return HS_OK;
      }
      hs__relax(&spins);
    }
  }
  HS_MPI(MPI_Win_sync(n->core->win));
  return HS_OK;
}

/* Edge i is read: tell it (even after a failed read, or it would wait for ever). */
static int edge_done(hs_node *n, int i, uint64_t seq) {
  hs_node_edge *e = &n->edges[i];
  HS_MPI(MPI_Win_sync(n->core->win));
  atomic_store_explicit(consumed_of(n->seg, e->nrank), seq, memory_order_release);
  e->pending = 0;
  n->core->left--;
  return HS_OK;
}

/* One pass over the on-node neighbours without blocking: read every one that has posted, and
 * the chunks a chunked forward has published so far; *progressed: something moved. A failed
 * read is kept in c->err (the swap goes on); an MPI error is returned. */
static int poll_edges(hs_plan p, hs_node *n, void *const *arrays, int *progressed) {
  struct hs_node_core *c = n->core;
  uint64_t seq = n->seq;
  *progressed = 0;
  for (int i = 0; c->left && i < n->nedges; i++) {
    hs_node_edge *e = &n->edges[i];
    if (!e->pending) continue;
    node_ctl *its = ctl_of(e->seg);
    int rc;
    if (atomic_load_explicit(&its->posted, memory_order_acquire) >= seq) {
      HS_MPI(MPI_Win_sync(c->win));
      rc = read_edge(p, n, i, arrays, seq);
    } else {
      /* Published chunks, before posted: a failed round publishes none (read_edge's flag
       * check waits for posted), and one here reads nothing. */
      if (!n->chunk_ok || hs__failed_round(p)) continue;
      uint64_t pr = atomic_load_explicit(&its->progress, memory_order_acquire);
      if (pr <= seq * CHUNK_SCALE + (uint64_t)e->next_chunk) continue;
      HS_MPI(MPI_Win_sync(c->win));
      rc = read_chunks(p, n, i, arrays, (int)(pr - seq * CHUNK_SCALE));
      *progressed = 1;
      if (rc != HS_OK && c->err == HS_OK) c->err = rc;
      if (e->next_chunk < (int)its->chunks) continue;
      rc = HS_OK;
    }
    if (rc != HS_OK && c->err == HS_OK) c->err = rc;
    rc = edge_done(n, i, seq);
    if (rc != HS_OK) return rc;
    *progressed = 1;
  }
  return HS_OK;
}

/* One pass without blocking: the on-node neighbours (poll_edges), then the off-node messages
 * that have arrived. */
static int poll_once(hs_plan p, hs_node *n, void *const *arrays, int *progressed) {
  struct hs_node_core *c = n->core;
  int rc = poll_edges(p, n, arrays, progressed);
  if (rc != HS_OK || c->remote_done) return rc;
  rc = hs__twosided_test(p, c->remote, arrays, &c->remote_done);
  *progressed |= c->remote_done;
  return rc;
}

int hs__node_test(hs_plan p, void *const *arrays, int *done) {
  hs_node *n = p->impl;
  struct hs_node_core *c = n->core;
  int rc = HS_OK;
  if (c->barrier) {
    rc = step_barrier(p, n, arrays, 0);
    *done = c->bstep == 3;
  } else {
    int progressed;
    rc = poll_once(p, n, arrays, &progressed);
    *done = !c->left && c->remote_done;
    if (rc == HS_OK && *done && !c->boxed) rc = readers_done(p, n, n->seq, 0, done);
  }
  return rc != HS_OK ? rc : c->err;
}

int hs__node_complete(hs_plan p, void *const *arrays) {
  hs_node *n = p->impl;
  struct hs_node_core *c = n->core;
  int rc = HS_OK;
  if (c->barrier) {
    rc = step_barrier(p, n, arrays, 1);
    if (rc == HS_OK && !c->remote_complete) /* the sends, after a test did the rest */
      rc = hs__twosided_complete(p, c->remote, arrays);
    return rc != HS_OK ? rc : c->err;
  }
  unsigned spins = 0;
  /* Read every on-node neighbour as soon as it has posted, and unpack off-node messages as
   * they arrive, in whatever order they become ready (test may have done some already). */
  while (c->left || !c->remote_done) {
    int progressed;
    rc = poll_once(p, n, arrays, &progressed);
    if (rc != HS_OK) return rc;
    if (progressed)
      spins = 0;
    else
      hs__relax(&spins);
  }
  rc = hs__twosided_complete(p, c->remote, arrays); /* the sends */
  if (rc != HS_OK) return rc;
  /* The caller may overwrite its interior once we return: wait for my readers, unless they
   * read my boxes only (the next post waits for them then). */
  if (c->boxed) return c->err;
  int ready;
  rc = readers_done(p, n, n->seq, 1, &ready);
  return rc != HS_OK ? rc : c->err;
}

/* ------------------------------------------------------------------ the reverse's pull */
int hs__pull_open(const hs_pull *pull, int e, uint64_t seq, bool *flagged) {
  const hs_pull_edge *pe = &pull->edges[e];
  unsigned spins = 0;
  while (atomic_load_explicit(pe->posted, memory_order_acquire) < seq) hs__relax(&spins);
  HS_MPI(MPI_Win_sync(pull->win));
  *flagged = *pe->failed == seq;
  return HS_OK;
}

void hs__pull_release(const hs_pull *pull, int e, uint64_t seq) {
  MPI_Win_sync(pull->win);
  atomic_store_explicit(pull->edges[e].consumed, seq, memory_order_release);
}

int hs__pull_wait_readers(const hs_plan p, const hs_pull *pull, uint64_t seq) {
  for (int e = 0; e < pull->nedges; e++) {
    const hs_pull_edge *pe = &pull->edges[e];
    if (!p->peers[pe->peer].nrecv) continue;
    unsigned spins = 0;
    while (atomic_load_explicit(pe->its_consumed, memory_order_acquire) < seq) hs__relax(&spins);
  }
  HS_MPI(MPI_Win_sync(pull->win));
  return HS_OK;
}
