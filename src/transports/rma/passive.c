/* Transport "rma-passive": MPI-3 RMA with passive target synchronisation (seed 004, IV-B3).
 *
 * epoch=early (default, the paper's adopted version): MPI_Win_lock_all(MPI_MODE_NOCHECK) once
 * at plan creation and MPI_Win_unlock_all at finalise; start puts; complete calls
 * MPI_Win_flush_all (the puts are then in the targets' memory) and sends a zero-byte
 * notification to every neighbour I put to, then unpacks each neighbour's slot as its
 * notification arrives (Waitany), with MPI_Win_sync first only if the window's memory model
 * is separate (or unknown, or winsync=always).
 * epoch=naive: lock_all in start, unlock_all in complete. notify=ibarrier: one MPI_Ibarrier
 * instead of the per-neighbour notifications. epoch=naive,notify=ibarrier is the paper's
 * first, slower version (Fig. 11).
 *
 * Why no race (docs/rma.md): the target never unpacks before the notification (or barrier),
 * which is sent after flush_all/unlock_all, i.e. after the data is in its memory. Nothing
 * tells the origin when the target has finished unpacking, so the window holds two buffers
 * and swap s uses buffer s % 2: a rank can put swap s+2 into buffer s % 2 of a neighbour only
 * after completing swap s+1, which needs that neighbour's notification (or barrier entry) of
 * swap s+1, which the neighbour sends only after it finished unpacking swap s. */
#include "rma_common.h"


typedef struct {
  rma_t *r;
  int early, ibarrier, always_sync, locked;
  int nsreq, nrreq;
  MPI_Request *sreq, *rreq; /* persistent zero-byte notifications: to out-peers, from in-peers */
  char token;
  /* The swap in progress, where test left it for complete: 0 puts issued, 1 flushed and
   * notified (left: notifications still to come), 2 every slot unpacked. */
  int step, left, result;
  int sent;                 /* step 2 and the notifications I sent have completed */
  MPI_Request bar;          /* notify=ibarrier: the barrier in flight */
  int *idx;                 /* MPI_Testsome's indices */
} passive_t;

typedef struct {
  rma_options common;
  int epoch, notify, winsync;
} passive_config;

static const char *const notify_vals[] = {"msg", "ibarrier", NULL};
static const char *const sync_vals[] = {"auto", "always", NULL};
static const hs_option_spec passive_options[] = {
    RMA_EPOCH_OPTION(passive_config, "lock_all once at plan creation (early) or per swap (naive)"),
    HS_OPTION_CHOICE("notify", "msg", notify_vals, passive_config, notify,
     "zero-byte message per neighbour, or one MPI_Ibarrier"),
    HS_OPTION_CHOICE("winsync", "auto", sync_vals, passive_config, winsync,
     "MPI_Win_sync before reading: when the memory model is separate (auto), or always"),
    RMA_COMMON_OPTIONS(passive_config),
    HS_OPTIONS_END};

static int lock_all(void *impl) {
  passive_t *a = impl;
  int mrc = MPI_Win_lock_all(rma_assert(a->r, MPI_MODE_NOCHECK), a->r->win);
  if (mrc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mrc, s, &len);
    return hs__error(HS_ERR_UNAVAILABLE,
                     "%s: passive target synchronisation is not available from this MPI "
                     "library (MPI_Win_lock_all failed: %s)",
                     a->r->mode, s);
  }
  a->locked = 1;
  return HS_OK;
}

/* Make the neighbours' puts visible to my loads (separate memory model). */
static int sync_for_read(hs_plan p, passive_t *a) {
  if (!a->r->separate && !a->always_sync) return HS_OK;
  if (a->locked) {
    HS_MPI(MPI_Win_sync(a->r->win));
    return HS_OK;
  }
  /* Outside an epoch (naive placement) a lock of my own window does the same. */
  HS_MPI(MPI_Win_lock(MPI_LOCK_SHARED, p->rank, 0, a->r->win));
  HS_MPI(MPI_Win_unlock(p->rank, a->r->win));
  return HS_OK;
}

static int passive_setup(hs_plan p) {
  const passive_config *c = p->config;
  passive_t *a = hs__impl_new(p, sizeof *a);
  if (!a) return HS_ERR_NOMEM;
  a->early = c->epoch == 0;
  a->ibarrier = c->notify;
  a->always_sync = c->winsync;
  static const rma_layout l = {RMA_WIN_RECV, 2, 1};
  int rc = hs__rma_setup(p, &c->common, &l, &a->r);
  if (rc != HS_OK) return rc;
  rma_t *r = a->r;
  if (!a->ibarrier) {
    size_t n = (size_t)(p->npeers > 0 ? p->npeers : 1);
    a->sreq = hs__malloc(p, n * sizeof(MPI_Request));
    a->rreq = hs__malloc(p, n * sizeof(MPI_Request));
    a->idx = hs__malloc(p, n * sizeof(int));
    if (!a->sreq || !a->rreq || !a->idx) rc = hs__error(HS_ERR_NOMEM, "rma-passive: out of memory");
    for (int i = 0; rc == HS_OK && i < r->nout; i++) {
      int mrc = MPI_Send_init(&a->token, 0, MPI_BYTE, p->peers[r->out[i]].rank, HS_TAG_NOTIFY, p->comm,
                              &a->sreq[i]);
      if (mrc != MPI_SUCCESS) rc = hs__mpi_error(mrc, "MPI_Send_init (notification)");
      else a->nsreq++;
    }
    for (int i = 0; rc == HS_OK && i < r->nin; i++) {
      int mrc = MPI_Recv_init(&a->token, 0, MPI_BYTE, p->peers[r->in[i]].rank, HS_TAG_NOTIFY, p->comm,
                              &a->rreq[i]);
      if (mrc != MPI_SUCCESS) rc = hs__mpi_error(mrc, "MPI_Recv_init (notification)");
      else a->nrreq++;
    }
  }
  return hs__rma_setup_epochs(p, rc, a->early, lock_all);
}

static int passive_start(hs_plan p, void *const *arrays) {
  passive_t *a = p->impl;
  int rc = rma_start_epochs(p, a->early, lock_all);
  if (rc != HS_OK) return rc;
  if (a->nrreq) HS_MPI(MPI_Startall(a->nrreq, a->rreq));
  a->step = a->sent = 0;
  a->left = a->nrreq;
  a->result = HS_OK;
  return hs__rma_put_all(p, a->r, arrays, (int)(a->r->swap & 1));
}

/* Step 0 -> 1: my puts are in the neighbours' memory (flush_all, or unlock_all with
 * epoch=naive: waits for my own puts only); tell them. */
static int notify(hs_plan p, passive_t *a) {
  rma_t *r = a->r;
  if (a->early) {
    HS_MPI(MPI_Win_flush_all(r->win));
  } else {
    a->locked = 0;
    HS_MPI(MPI_Win_unlock_all(r->win));
  }
  if (a->ibarrier)
    HS_MPI(MPI_Ibarrier(p->comm, &a->bar));
  else if (a->nsreq)
    HS_MPI(MPI_Startall(a->nsreq, a->sreq));
  a->step = 1;
  return HS_OK;
}

/* Step 1: unpack each neighbour's slot once its notification is in (every slot once the
 * barrier is); wait = 0 polls (MPI_Test, MPI_Testsome), 1 blocks. Step 2 when all are. */
static int receive(hs_plan p, passive_t *a, void *const *arrays, int wait) {
  rma_t *r = a->r;
  int buf = (int)(r->swap & 1), rc = HS_OK;
  if (a->ibarrier) {
    int flag = 1;
    if (wait)
      HS_MPI(MPI_Wait(&a->bar, MPI_STATUS_IGNORE));
    else
      HS_MPI(MPI_Test(&a->bar, &flag, MPI_STATUS_IGNORE));
    if (!flag) return HS_OK;
    rc = sync_for_read(p, a);
    for (int i = 0; rc == HS_OK && i < r->nin; i++)
      hs__rma_unpack_from_window(p, r, r->in[i], arrays, buf);
    a->left = 0;
  }
  while (a->left > 0 && rc == HS_OK) {
    int m = 0;
    if (wait)
      HS_MPI(MPI_Waitsome(a->nrreq, a->rreq, &m, a->idx, MPI_STATUSES_IGNORE));
    else
      HS_MPI(MPI_Testsome(a->nrreq, a->rreq, &m, a->idx, MPI_STATUSES_IGNORE));
    if (m == MPI_UNDEFINED) { /* none active: nothing more can come */
      a->left = 0;
      break;
    }
    if (m > 0) rc = sync_for_read(p, a);
    for (int j = 0; j < m && rc == HS_OK; j++) {
      hs__rma_unpack_from_window(p, r, r->in[a->idx[j]], arrays, buf);
      a->left--;
    }
    if (!wait) break;
  }
  if (rc == HS_OK && a->left == 0) a->step = 2;
  return rc;
}

/* The swap as far as it goes: wait = 0 without blocking beyond the flush (test), 1 to the
 * end (complete). */
static int progress(hs_plan p, passive_t *a, void *const *arrays, int wait) {
  int rc = a->step == 0 ? notify(p, a) : HS_OK;
  if (rc == HS_OK && a->step == 1) rc = receive(p, a, arrays, wait);
  if (rc != HS_OK) a->step = 2; /* the swap's result: complete reports it */
  return rc;
}

/* The first call flushes my puts and notifies; every call unpacks the slots whose
 * notifications are in; done once all are and my own notifications have gone out. */
static int passive_test(hs_plan p, void *const *arrays, int *done) {
  passive_t *a = p->impl;
  if (a->step < 2) a->result = progress(p, a, arrays, 0);
  a->sent = a->step == 2 && (a->sent || !a->nsreq);
  if (a->step == 2 && !a->sent) {
    int mrc = MPI_Testall(a->nsreq, a->sreq, &a->sent, MPI_STATUSES_IGNORE);
    if (mrc != MPI_SUCCESS && a->result == HS_OK) {
      a->result = hs__mpi_error(mrc, "MPI_Testall (notifications)");
      a->sent = 1;
    }
  }
  *done = a->sent;
  return a->result;
}

static int passive_complete(hs_plan p, void *const *arrays) {
  passive_t *a = p->impl;
  if (a->step < 2) a->result = progress(p, a, arrays, 1);
  int rc = a->result;
  if (a->nsreq && a->step == 2) {
    int mrc = MPI_Waitall(a->nsreq, a->sreq, MPI_STATUSES_IGNORE);
    if (mrc != MPI_SUCCESS && rc == HS_OK) rc = hs__mpi_error(mrc, "MPI_Waitall (notifications)");
  }
  a->r->swap++;
  return rc;
}

static void passive_destroy(hs_plan p) {
  passive_t *a = p->impl;
  if (!a) return;
  if (a->locked && a->r && a->r->have_win) MPI_Win_unlock_all(a->r->win);
  for (int i = 0; i < a->nsreq; i++) MPI_Request_free(&a->sreq[i]);
  for (int i = 0; i < a->nrreq; i++) MPI_Request_free(&a->rreq[i]);
  hs__free(p, a->sreq);
  hs__free(p, a->rreq);
  hs__free(p, a->idx);
  hs__rma_destroy(p, a->r);
}

HS_DEFINE_TRANSPORT(hs__transport_rma_passive, passive, "rma-passive", HS_TRANSPORT_RMA_PASSIVE,
                    HS_OPS_FAILROUND,
                    "MPI-3 RMA, lock_all once + put + flush_all + zero-byte notifications, "
                    "double-buffered window",
                    passive_options, passive_config, .test = passive_test);
