/* Transport "rma-fence": MPI-3 RMA with MPI_Win_fence synchronisation (seed 004, IV-B1).
 *
 * drive=put (default): neighbours put into my window; after the closing fence I unpack
 * straight from the window. epoch=early (default) opens the next epoch with a fence at the
 * end of complete, after my unpack, so start never blocks; epoch=naive opens it in start.
 * drive=get: I pack my outgoing data into my own window in start, fence, and neighbours get
 * it (into their halos directly with dtype=1). The fence after packing must be in start.
 *
 * Why no race (docs/rma.md): a fence that opens an epoch after a local access to the window
 * (unpack for put, pack for get) never carries MPI_MODE_NOPRECEDE, so it closes a (possibly
 * empty) epoch and the library must hear from every rank before it returns; operations a rank
 * issues after it returns reach a target only after the target has entered the same fence,
 * i.e. after the target's local access. The paper's intermittent get-driven failures came
 * from libraries that skip that synchronisation on NOPRECEDE fences. */
#include "rma_common.h"


typedef struct {
  rma_options common;
  int drive, epoch;
} fence_config;

enum { DRIVE_PUT = 0, DRIVE_GET = 1 };
enum { EPOCH_AUTO = 0, EPOCH_EARLY = 1, EPOCH_NAIVE = 2 };
static const char *const drive_vals[] = {"put", "get", NULL};
static const char *const epoch_vals[] = {"auto", "early", "naive", NULL};

static const hs_option_spec fence_options[] = {
    HS_OPTION_CHOICE("drive", "put", drive_vals, fence_config, drive,
     "neighbours put into my window, or get from theirs"),
    HS_OPTION_CHOICE("epoch", "auto", epoch_vals, fence_config, epoch,
     "open the next epoch at the end of complete (early) or in start (naive); auto: early "
     "for put, naive for get"),
    RMA_COMMON_OPTIONS(fence_config),
    HS_OPTIONS_END};

typedef struct {
  rma_t *r;
  int get, early, open;
  int finished, result; /* test closed the swap's epoch, with this status, for complete */
} fence_t;

static int fence(fence_t *f, int assert_bits, const char *what) {
  int mrc = MPI_Win_fence(rma_assert(f->r, assert_bits), f->r->win);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, what);
  return HS_OK;
}

static int fence_setup(hs_plan p) {
  const fence_config *c = p->config;
  fence_t *f = hs__impl_new(p, sizeof *f);
  if (!f) return HS_ERR_NOMEM;
  f->get = c->drive == DRIVE_GET;
  if (f->get && c->epoch == EPOCH_EARLY)
    return hs__error(HS_ERR_ARG,
                     "rma-fence: epoch=early needs drive=put: a get-driven swap must fence after "
                     "packing, in start (use epoch=naive or leave epoch unset)");
  f->early = !f->get && c->epoch != EPOCH_NAIVE;
  rma_layout l = {f->get ? RMA_WIN_SEND : RMA_WIN_RECV, 1, 0};
  int rc = hs__rma_setup(p, &c->common, &l, &f->r);
  if (rc != HS_OK) return rc;
  if (f->early) {
    /* The very first epoch: the window has never been read, nothing to order. */
    rc = fence(f, MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, "MPI_Win_fence (first epoch)");
    if (rc == HS_OK) f->open = 1;
  }
  return hs__agree(p->comm, rc);
}

static int fence_start(hs_plan p, void *const *arrays) {
  fence_t *f = p->impl;
  int rc;
  if (f->get) {
    hs__rma_pack_into_window(p, f->r, arrays);
    /* Orders my packing before the neighbours' gets: no NOPRECEDE (see the top comment). */
    rc = fence(f, MPI_MODE_NOPUT, "MPI_Win_fence (open, get-driven)");
    if (rc != HS_OK) return rc;
    return hs__rma_get_all(p, f->r, arrays);
  }
  if (!f->early) {
    rc = fence(f, MPI_MODE_NOSTORE, "MPI_Win_fence (open)");
    if (rc != HS_OK) return rc;
  }
  return hs__rma_put_all(p, f->r, arrays, 0);
}

/* The end of a swap: the closing fence, the unpack, the next epoch's fence (early). */
static int close_swap(hs_plan p, fence_t *f, void *const *arrays) {
  rma_t *r = f->r;
  /* Closes the epoch: every put to me / get by me is complete. Nothing is issued before the
   * next fence, no local store touched the window, and nobody puts until the next fence. */
  int rc = fence(f, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED,
                 "MPI_Win_fence (close)");
  if (rc != HS_OK) return rc;
  if (f->get) {
    hs__rma_get_finish(p, r, arrays);
    return HS_OK;
  }
  for (int i = 0; i < r->nin; i++) hs__rma_unpack_from_window(p, r, r->in[i], arrays, 0);
  if (f->early) {
    /* Opens the next swap's epoch only after my unpack: a neighbour's next puts reach my
     * window after I enter this fence. No NOPRECEDE on purpose (see the top comment). */
    rc = fence(f, MPI_MODE_NOSTORE, "MPI_Win_fence (open next epoch)");
  }
  return rc;
}

/* No nonblocking fence exists, and only a fence completes the epoch's puts and gets: test
 * closes the swap as complete would, waiting in MPI_Win_fence for every rank of the plan to
 * reach its own test or complete (docs/rma.md), and reports done at its first call. */
static int fence_test(hs_plan p, void *const *arrays, int *done) {
  fence_t *f = p->impl;
  if (!f->finished) {
    f->result = close_swap(p, f, arrays);
    f->finished = 1;
  }
  *done = 1;
  return f->result;
}

static int fence_complete(hs_plan p, void *const *arrays) {
  fence_t *f = p->impl;
  int rc = f->finished ? f->result : close_swap(p, f, arrays);
  f->finished = 0;
  return rc;
}

static void fence_destroy(hs_plan p) {
  fence_t *f = p->impl;
  if (!f) return;
  if (f->open && f->r && f->r->have_win)
    MPI_Win_fence(rma_assert(f->r, MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED), f->r->win);
  hs__rma_destroy(p, f->r);
}

HS_DEFINE_TRANSPORT(hs__transport_rma_fence, fence, "rma-fence", HS_TRANSPORT_RMA_FENCE,
                    HS_OPS_FAILROUND,
                    "MPI-3 RMA, MPI_Win_fence epochs; put-driven (default) or get-driven",
                    fence_options, fence_config, .test = fence_test);
