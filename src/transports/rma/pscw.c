/* Transport "rma-pscw": MPI-3 RMA with post/start/complete/wait on the group of neighbours
 * only (seed 004, IV-B2). Put-driven: a get could read a neighbour's buffer before it packed,
 * since MPI_Win_start need not wait for the matching post.
 *
 * epoch=early (default): the exposure epoch for the next swap is posted at the end of
 * complete, after my unpack, and the access epoch started right after; start only puts.
 * epoch=naive: post + start at the beginning of start.
 *
 * Why no race (docs/rma.md): MPI delays a put to a target until the target has posted the
 * matching exposure epoch, and I post only after unpacking the previous swap, so no
 * neighbour's next put can land in my window while I read it; MPI_Win_wait returns only
 * when every neighbour's access epoch has completed, so I never read before its data is in. */
#include "rma_common.h"


typedef struct {
  rma_t *r;
  int early;
  int access, exposure; /* my access epoch (start..complete), exposure epoch (post..wait) open */
  int finished, result; /* test ended the swap in progress, with this status, for complete */
  MPI_Group gin, gout;  /* ranks that put to me / that I put to */
} pscw_t;

typedef struct {
  rma_options common;
  int epoch;
} pscw_config;

static const hs_option_spec pscw_options[] = {
    RMA_EPOCH_OPTION(pscw_config,
                     "post the next exposure epoch at the end of complete (early) or in start (naive)"),
    RMA_COMMON_OPTIONS(pscw_config),
    HS_OPTIONS_END};

static int open_epochs(void *impl) {
  pscw_t *w = impl;
  /* Post first: a neighbour blocked in its start waits for exactly this. */
  int mrc = MPI_Win_post(w->gin, rma_assert(w->r, MPI_MODE_NOSTORE), w->r->win);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Win_post");
  w->exposure = 1;
  mrc = MPI_Win_start(w->gout, 0, w->r->win);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Win_start");
  w->access = 1;
  return HS_OK;
}

/* Close what is open of the two epochs; wait = 0 polls the exposure epoch (MPI_Win_test) and
 * leaves it open if a neighbour's access epoch has not completed yet. Complete before wait:
 * waiting first could deadlock two ranks each waiting for the other's complete. */
static int close_epochs(pscw_t *w, int wait) {
  if (w->access) {
    w->access = 0;
    int mrc = MPI_Win_complete(w->r->win);
    if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Win_complete");
  }
  if (w->exposure) {
    int flag = 1, mrc = wait ? MPI_Win_wait(w->r->win) : MPI_Win_test(w->r->win, &flag);
    if (mrc != MPI_SUCCESS) {
      w->exposure = 0;
      return hs__mpi_error(mrc, wait ? "MPI_Win_wait" : "MPI_Win_test");
    }
    w->exposure = !flag;
  }
  return HS_OK;
}

static int pscw_setup(hs_plan p) {
  const pscw_config *c = p->config;
  pscw_t *w = hs__impl_new(p, sizeof *w);
  if (!w) return HS_ERR_NOMEM;
  w->gin = w->gout = MPI_GROUP_NULL;
  w->early = c->epoch == 0;
  static const rma_layout l = {RMA_WIN_RECV, 1, 0};
  int rc = hs__rma_setup(p, &c->common, &l, &w->r);
  if (rc != HS_OK) return rc;
  rc = hs__rma_group(p, w->r->in, w->r->nin, &w->gin);
  if (rc == HS_OK) rc = hs__rma_group(p, w->r->out, w->r->nout, &w->gout);
  return hs__rma_setup_epochs(p, rc, w->early, open_epochs);
}

static int pscw_start(hs_plan p, void *const *arrays) {
  pscw_t *w = p->impl;
  int rc = rma_start_epochs(p, w->early, open_epochs);
  if (rc != HS_OK) return rc;
  return hs__rma_put_all(p, w->r, arrays, 0);
}

/* Both epochs closed: the unpack, and (early) the next swap's epochs. */
static int finish(hs_plan p, pscw_t *w, void *const *arrays) {
  rma_t *r = w->r;
  for (int i = 0; i < r->nin; i++) hs__rma_unpack_from_window(p, r, r->in[i], arrays, 0);
  return w->early ? open_epochs(w) : HS_OK; /* after the unpack: see the top comment */
}

/* The first call closes the access epoch (MPI_Win_complete: my puts are done; MPI may let it
 * wait for my targets' post, which with epoch=early they issued at the end of their previous
 * swap); then MPI_Win_test polls the exposure epoch, and once it is closed the swap ends as in
 * complete. */
static int pscw_test(hs_plan p, void *const *arrays, int *done) {
  pscw_t *w = p->impl;
  if (!w->finished) {
    int rc = close_epochs(w, 0);
    if (rc == HS_OK && w->exposure) {
      *done = 0;
      return HS_OK;
    }
    w->result = rc == HS_OK ? finish(p, w, arrays) : rc;
    w->finished = 1;
  }
  *done = 1;
  return w->result;
}

static int pscw_complete(hs_plan p, void *const *arrays) {
  pscw_t *w = p->impl;
  int rc = w->finished ? w->result : close_epochs(w, 1);
  if (!w->finished && rc == HS_OK) rc = finish(p, w, arrays);
  w->finished = 0;
  return rc;
}

static void pscw_destroy(hs_plan p) {
  pscw_t *w = p->impl;
  if (!w) return;
  if (w->r && w->r->have_win) close_epochs(w, 1);
  if (w->gin != MPI_GROUP_NULL) MPI_Group_free(&w->gin);
  if (w->gout != MPI_GROUP_NULL) MPI_Group_free(&w->gout);
  hs__rma_destroy(p, w->r);
}

HS_DEFINE_TRANSPORT(hs__transport_rma_pscw, pscw, "rma-pscw", HS_TRANSPORT_RMA_PSCW,
                    HS_OPS_FAILROUND,
                    "MPI-3 RMA, post/start/complete/wait on the neighbour group, put-driven",
                    pscw_options, pscw_config, .test = pscw_test);
