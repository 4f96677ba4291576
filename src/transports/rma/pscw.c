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
  int early, open;
  MPI_Group gin, gout; /* ranks that put to me / that I put to */
} pscw_t;

typedef struct {
  rma_options common;
  int epoch;
} pscw_config;

static const char *const epoch_vals[] = {"early", "naive", NULL};
static const hs_option_spec pscw_options[] = {
    HS_OPTION_CHOICE("epoch", "early", epoch_vals, pscw_config, epoch,
     "post the next exposure epoch at the end of complete (early) or in start (naive)"),
    RMA_COMMON_OPTIONS(pscw_config),
    HS_OPTIONS_END};

static int open_epochs(pscw_t *w) {
  /* Post first: a neighbour blocked in its start waits for exactly this. */
  int mrc = MPI_Win_post(w->gin, rma_assert(w->r, MPI_MODE_NOSTORE), w->r->win);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Win_post");
  mrc = MPI_Win_start(w->gout, 0, w->r->win);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Win_start");
  w->open = 1;
  return HS_OK;
}

static int close_epochs(pscw_t *w) {
  w->open = 0;
  /* Complete before wait: waiting first could deadlock two ranks each waiting for the
   * other's complete. */
  int mrc = MPI_Win_complete(w->r->win);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Win_complete");
  mrc = MPI_Win_wait(w->r->win);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Win_wait");
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
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK && w->early) rc = hs__agree(p->comm, open_epochs(w));
  return rc;
}

static int pscw_start(hs_plan p, void *const *arrays) {
  pscw_t *w = p->impl;
  if (!w->early) {
    int rc = open_epochs(w);
    if (rc != HS_OK) return rc;
  }
  return hs__rma_put_all(p, w->r, arrays, 0);
}

static int pscw_complete(hs_plan p, void *const *arrays) {
  pscw_t *w = p->impl;
  rma_t *r = w->r;
  int rc = close_epochs(w);
  if (rc != HS_OK) return rc;
  for (int i = 0; i < r->nin; i++) hs__rma_unpack_from_window(p, r, r->in[i], arrays, 0);
  if (w->early) rc = open_epochs(w); /* after the unpack: see the top comment */
  return rc;
}

static void pscw_destroy(hs_plan p) {
  pscw_t *w = p->impl;
  if (!w) return;
  if (w->open && w->r && w->r->have_win) close_epochs(w);
  if (w->gin != MPI_GROUP_NULL) MPI_Group_free(&w->gin);
  if (w->gout != MPI_GROUP_NULL) MPI_Group_free(&w->gout);
  hs__rma_destroy(p, w->r);
}

HS_DEFINE_TRANSPORT(hs__transport_rma_pscw, pscw, "rma-pscw", HS_TRANSPORT_RMA_PSCW,
                    HS_OPS_FAILROUND,
                    "MPI-3 RMA, post/start/complete/wait on the neighbour group, put-driven",
                    pscw_options, pscw_config, HS_OPS_NO_EXTRA);
