/* Window set-up, offset exchange and data movement shared by the three RMA transports. */
#include "rma_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hs__rma_window_vals[] = {"auto", "allocate", "create", NULL};
const char *const hs__rma_epoch_vals[] = {"early", "naive", NULL};

/* Bytes of peer k that live in my window / that I move on the origin side. */
static size_t win_bytes(const hs_peer *pe, rma_winkind kind) {
  return kind == RMA_WIN_RECV ? pe->recv_bytes : pe->send_bytes;
}
static size_t origin_bytes(const hs_peer *pe, rma_winkind kind) {
  return kind == RMA_WIN_RECV ? pe->send_bytes : pe->recv_bytes;
}

static int alloc_lists(hs_plan p, rma_t *t) {
  int np = p->npeers;
  int rc = hs__calloc_arrays(p, (size_t)np, (void **)&t->out, sizeof(int), (void **)&t->in,
                             sizeof(int), (void **)&t->my_off, sizeof(MPI_Aint),
                             (void **)&t->their_off, sizeof(MPI_Aint), (void **)&t->their_bytes,
                             sizeof(MPI_Aint), (void **)&t->stage_off, sizeof(size_t),
                             (void **)&t->hdr, sizeof(uint64_t), (void **)NULL);
  if (rc != HS_OK) return hs__error(rc, "%s: out of memory for the peer lists", t->mode);
  size_t bytes = 0, stage = 0;
  for (int k = 0; k < np; k++) {
    const hs_peer *pe = &p->peers[k];
    if (pe->send_bytes > INT_MAX || pe->recv_bytes > INT_MAX)
      return hs__error(HS_ERR_ARG,
                       "%s: %zu bytes per swap to/from rank %d exceed the MPI count limit %d",
                       t->mode, pe->send_bytes > pe->recv_bytes ? pe->send_bytes : pe->recv_bytes,
                       pe->rank, INT_MAX);
    if (pe->send_bytes) t->out[t->nout++] = k;
    if (pe->recv_bytes) t->in[t->nin++] = k;
    t->my_off[k] = (MPI_Aint)bytes;
    if (win_bytes(pe, t->l.kind)) bytes += RMA_HDR + win_bytes(pe, t->l.kind);
    t->stage_off[k] = stage;
    if (origin_bytes(pe, t->l.kind)) stage += RMA_HDR + origin_bytes(pe, t->l.kind);
  }
  t->buf_bytes = bytes;
  if (!t->o.dtype) {
    t->stage = hs__malloc(p, stage);
    if (!t->stage)
      return hs__error(HS_ERR_NOMEM, "%s: out of memory for a %zu-byte staging buffer", t->mode,
                       stage);
  }
  return HS_OK;
}

/* MPI_Win_allocate misplaces data in MPICH before 4.1 over UCX >= 1.13 (mpich #6110, fixed
 * by PR #6140): halos arrive shifted. MPI_Alloc_mem + MPI_Win_create (the paper's IV-A) is
 * correct there; elsewhere MPI_Win_allocate lets the library pick shared-memory windows. */
static int allocate_is_unsafe(void) {
  char s[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0, major = 0, minor = 0;
  if (MPI_Get_library_version(s, &len) != MPI_SUCCESS) return 0;
  const char *m = strstr(s, "MPICH Version:");
  if (!m) return 0;
  m += strlen("MPICH Version:");
  while (*m == ' ' || *m == '\t') m++;
  if (sscanf(m, "%d.%d", &major, &minor) != 2) return 0;
  return major < 4 || (major == 4 && minor < 1);
}

/* One attempt with MPI_Win_allocate (create == 0) or MPI_Alloc_mem + MPI_Win_create. */
static int try_window(hs_plan p, rma_t *t, int create, char *why, size_t n) {
  MPI_Info info;
  MPI_Info_create(&info);
  /* Active-target modes never lock: let the library skip its lock machinery. */
  if (!t->l.passive) MPI_Info_set(info, "no_locks", "true");
  MPI_Info_set(info, "same_disp_unit", "true");
  size_t bytes = t->buf_bytes * (size_t)t->l.nbufs;
  void *base = NULL;
  int mrc;
  if (create) {
    mrc = MPI_Alloc_mem((MPI_Aint)(bytes ? bytes : 1), MPI_INFO_NULL, &base);
    if (mrc == MPI_SUCCESS) {
      mrc = MPI_Win_create(base, (MPI_Aint)bytes, 1, info, p->comm, &t->win);
      if (mrc != MPI_SUCCESS) MPI_Free_mem(base);
    }
  } else {
    mrc = MPI_Win_allocate((MPI_Aint)bytes, 1, info, p->comm, &base, &t->win);
  }
  MPI_Info_free(&info);
  if (mrc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mrc, s, &len);
    snprintf(why, n, "%s of %zu bytes failed: %s",
             create ? "MPI_Alloc_mem + MPI_Win_create" : "MPI_Win_allocate", bytes, s);
    t->win = MPI_WIN_NULL;
    return 0;
  }
  t->have_win = 1;
  t->mem_is_ours = create;
  t->base = base;
  hs__account(p, (int64_t)bytes);
  MPI_Win_set_errhandler(t->win, MPI_ERRORS_RETURN);
  int *model = NULL, flag = 0;
  MPI_Win_get_attr(t->win, MPI_WIN_MODEL, &model, &flag);
  t->separate = !flag || !model || *model != MPI_WIN_UNIFIED;
  return 1;
}

/* Collective. With RMA_WINDOW_AUTO, the other way is tried when
 * the first fails on every rank. */
static int create_window(hs_plan p, rma_t *t, int window) {
  int create = window == RMA_WINDOW_CREATE || (window == RMA_WINDOW_AUTO && allocate_is_unsafe());
  char why[2][MPI_MAX_ERROR_STRING + 128] = {"", ""};
  for (int attempt = 0; attempt < (window == RMA_WINDOW_AUTO ? 2 : 1); attempt++) {
    int ok = try_window(p, t, create, why[attempt], sizeof why[attempt]), lo = 0, hi = 0;
    if (MPI_Allreduce(&ok, &lo, 1, MPI_INT, MPI_MIN, p->comm) != MPI_SUCCESS ||
        MPI_Allreduce(&ok, &hi, 1, MPI_INT, MPI_MAX, p->comm) != MPI_SUCCESS)
      return hs__error(HS_ERR_MPI, "%s: MPI_Allreduce failed after creating the window",
                       t->mode);
    if (lo) return HS_OK;
    if (hi) {
      /* Made on some ranks only: freeing is collective, so those are left alone rather than
       * risk a hang. */
      if (t->have_win) hs__account(p, -(int64_t)(t->buf_bytes * (size_t)t->l.nbufs));
      t->have_win = 0;
      break;
    }
    create = !create;
  }
  return hs__error(HS_ERR_UNAVAILABLE,
                   "%s: this MPI library cannot create the RMA window here (%s%s%s); Open MPI "
                   "needs a single-copy mechanism (CMA, xpmem or knem) for one-sided "
                   "communication between processes",
                   t->mode, why[0][0] ? why[0] : "failed on another rank", why[1][0] ? "; " : "",
                   why[1]);
}

/* Tell every neighbour where its slot in my window is; learn where mine is in its window. */
static int exchange_offsets(hs_plan p, rma_t *t) {
  int np = p->npeers;
  if (np == 0) return HS_OK;
  MPI_Aint *sv = malloc((size_t)np * 3 * sizeof *sv), *rv = malloc((size_t)np * 3 * sizeof *rv);
  MPI_Request *rq = malloc((size_t)np * 2 * sizeof *rq);
  if (!sv || !rv || !rq) {
    free(sv);
    free(rv);
    free(rq);
    return hs__error(HS_ERR_NOMEM, "%s: out of memory exchanging window offsets", t->mode);
  }
  int rc = HS_OK;
  for (int k = 0; k < np; k++) {
    const hs_peer *pe = &p->peers[k];
    sv[3 * k] = t->my_off[k];
    sv[3 * k + 1] = (MPI_Aint)t->buf_bytes;
    sv[3 * k + 2] = (MPI_Aint)win_bytes(pe, t->l.kind);
    int m1 = MPI_Irecv(&rv[3 * k], 3, MPI_AINT, pe->rank, HS_TAG_SETUP, p->comm, &rq[2 * k]);
    int m2 = MPI_Isend(&sv[3 * k], 3, MPI_AINT, pe->rank, HS_TAG_SETUP, p->comm, &rq[2 * k + 1]);
    if (m1 != MPI_SUCCESS || m2 != MPI_SUCCESS) {
      rc = hs__mpi_error(m1 != MPI_SUCCESS ? m1 : m2, "offset exchange (MPI_Isend/Irecv)");
      /* Requests already posted still match the neighbour's: complete what was posted. */
      np = k;
      break;
    }
  }
  int mrc = MPI_Waitall(2 * np, rq, MPI_STATUSES_IGNORE);
  if (rc == HS_OK && mrc != MPI_SUCCESS) rc = hs__mpi_error(mrc, "offset exchange (MPI_Waitall)");
  for (int k = 0; rc == HS_OK && k < np; k++) {
    const hs_peer *pe = &p->peers[k];
    t->their_off[k] = rv[3 * k];
    t->their_bytes[k] = rv[3 * k + 1];
    size_t want = origin_bytes(pe, t->l.kind);
    if ((size_t)rv[3 * k + 2] != want)
      rc = hs__error(HS_ERR_INTERNAL,
                     "%s: rank %d reserves %zu bytes for this rank's data, this rank moves %zu",
                     t->mode, pe->rank, (size_t)rv[3 * k + 2], want);
  }
  free(sv);
  free(rv);
  free(rq);
  return rc;
}

int hs__rma_setup(hs_plan p, const rma_options *o, const rma_layout *l, rma_t **out) {
  rma_t *t = hs__calloc(p, sizeof *t);
  *out = t;
  int rc = HS_OK;
  if (!t) rc = hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  else {
    t->mode = p->transport_name;
    t->o = *o;
    t->l = *l;
    if (p->has_callbacks) t->o.dtype = 0; /* hooks need packing */
    t->win = MPI_WIN_NULL;
    rc = alloc_lists(p, t);
  }
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) return rc;
  rc = hs__agree(p->comm, create_window(p, t, t->o.window));
  if (rc != HS_OK) return rc;
  return hs__agree(p->comm, exchange_offsets(p, t));
}

void hs__rma_destroy(hs_plan p, rma_t *t) {
  if (t && t->have_win) {
    MPI_Win_free(&t->win);
    if (t->mem_is_ours) MPI_Free_mem(t->base);
    hs__account(p, -(int64_t)(t->buf_bytes * (size_t)t->l.nbufs));
  }
  if (t) {
    void *blocks[] = {t->stage, t->out, t->in, t->my_off, t->their_off, t->their_bytes,
                      t->stage_off, t->hdr, t};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) hs__free(p, blocks[i]);
  }
  hs__free(p, p->impl);
  p->impl = NULL;
}

/* The origin side's datatypes (dtype=1), or NULL: packed, or a failed round (flags only). */
static int origin_types(hs_plan p, rma_t *t, void *const *arrays, const hs_dtypes **d) {
  *d = NULL;
  return t->o.dtype && !hs__failed_round(p) ? hs__dtypes_get(p, arrays, d) : HS_OK;
}

int hs__rma_put_all(hs_plan p, rma_t *t, void *const *arrays, int buf) {
  const hs_dtypes *d;
  int failed = hs__failed_round(p), rc = origin_types(p, t, arrays, &d);
  if (rc != HS_OK) return rc;
  for (int i = 0; i < t->nout; i++) {
    int k = t->out[i];
    const hs_peer *pe = &p->peers[k];
    MPI_Aint disp = t->their_off[k] + (MPI_Aint)buf * t->their_bytes[k];
    if (failed || d) { /* the header on its own: the flag alone, or before datatype data */
      t->hdr[k] = failed ? 1 : 0;
      HS_MPI(MPI_Put(&t->hdr[k], RMA_HDR, MPI_BYTE, pe->rank, disp, RMA_HDR, MPI_BYTE, t->win));
      if (d)
        HS_MPI(MPI_Put(MPI_BOTTOM, 1, d->send[k], pe->rank, disp + RMA_HDR, (int)pe->send_bytes,
                       MPI_BYTE, t->win));
      continue;
    }
    char *stage = t->stage + t->stage_off[k];
    memset(stage, 0, RMA_HDR);
    hs__pack_peer(p, pe, arrays, stage + RMA_HDR);
    int n = RMA_HDR + (int)pe->send_bytes;
    HS_MPI(MPI_Put(stage, n, MPI_BYTE, pe->rank, disp, n, MPI_BYTE, t->win));
  }
  return HS_OK;
}

/* A header word read from memory (the window, a staging buffer): non-zero is a failure. */
static int flagged(const char *h) {
  uint64_t v;
  memcpy(&v, h, sizeof v);
  return v != 0;
}

void hs__rma_unpack_from_window(hs_plan p, rma_t *t, int k, void *const *arrays, int buf) {
  const char *slot = t->base + (size_t)buf * t->buf_bytes + (size_t)t->my_off[k];
  if (flagged(slot))
    hs__fail_seen(p, p->peers[k].rank);
  else if (!hs__failed_round(p))
    hs__unpack_peer(p, &p->peers[k], arrays, slot + RMA_HDR);
}

void hs__rma_pack_into_window(hs_plan p, rma_t *t, void *const *arrays) {
  uint64_t h = hs__failed_round(p) ? 1 : 0;
  for (int i = 0; i < t->nout; i++) {
    int k = t->out[i];
    char *slot = t->base + (size_t)t->my_off[k];
    memcpy(slot, &h, sizeof h);
    if (!h) hs__pack_peer(p, &p->peers[k], arrays, slot + RMA_HDR);
  }
}

int hs__rma_get_all(hs_plan p, rma_t *t, void *const *arrays) {
  const hs_dtypes *d;
  int rc = origin_types(p, t, arrays, &d);
  for (int i = 0; i < t->nin && rc == HS_OK; i++) {
    const hs_peer *pe = &p->peers[t->in[i]];
    const int k = t->in[i];
    if (hs__failed_round(p) || d) { /* the header alone: a failed round's, or beside datatypes */
      HS_MPI(MPI_Get(&t->hdr[k], RMA_HDR, MPI_BYTE, pe->rank, t->their_off[k], RMA_HDR, MPI_BYTE,
                     t->win));
      if (d)
        HS_MPI(MPI_Get(MPI_BOTTOM, 1, d->recv[k], pe->rank, t->their_off[k] + RMA_HDR,
                       (int)pe->recv_bytes, MPI_BYTE, t->win));
      continue;
    }
    int n = RMA_HDR + (int)pe->recv_bytes;
    HS_MPI(MPI_Get(t->stage + t->stage_off[k], n, MPI_BYTE, pe->rank, t->their_off[k], n,
                   MPI_BYTE, t->win));
  }
  return rc;
}

void hs__rma_get_finish(hs_plan p, rma_t *t, void *const *arrays) {
  int failed = hs__failed_round(p);
  for (int i = 0; i < t->nin; i++) {
    int k = t->in[i];
    const char *got = failed || t->o.dtype ? (const char *)&t->hdr[k] : t->stage + t->stage_off[k];
    if (flagged(got))
      hs__fail_seen(p, p->peers[k].rank);
    else if (!failed && !t->o.dtype) /* with datatypes the gets landed in the halos */
      hs__unpack_peer(p, &p->peers[k], arrays, got + RMA_HDR);
  }
}

int hs__rma_group(hs_plan p, const int *peers, int n, MPI_Group *out) {
  MPI_Group all;
  HS_MPI(MPI_Comm_group(p->comm, &all));
  int *ranks = malloc((size_t)(n > 0 ? n : 1) * sizeof *ranks);
  if (!ranks) {
    MPI_Group_free(&all);
    return hs__error(HS_ERR_NOMEM, "out of memory building a group");
  }
  for (int i = 0; i < n; i++) ranks[i] = p->peers[peers[i]].rank;
  int mrc = MPI_Group_incl(all, n, ranks, out);
  free(ranks);
  MPI_Group_free(&all);
  if (mrc != MPI_SUCCESS) return hs__mpi_error(mrc, "MPI_Group_incl");
  return HS_OK;
}

int hs__rma_setup_epochs(hs_plan p, int rc, int early, rma_open_fn open) {
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK && early) rc = hs__agree(p->comm, open(p->impl));
  return rc;
}
