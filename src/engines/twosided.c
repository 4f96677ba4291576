/* The two-sided engine: one message per peer per swap, receives posted first. The default
 * transport is this engine over every peer; a hybrid transport runs it over its off-node
 * peers.
 *
 * How each side moves its bytes (config dtype):
 *   0     pack each peer's message into a buffer, unpack each as it arrives;
 *   1     send and receive straight from the fields with the plan's cached derived datatypes
 *         (one copy, inside MPI);
 *   2     receive with datatypes, send packed;   3  send with datatypes, receive packed;
 *   4     auto: the first 18 swaps alternate between 1 and 0 (machine noise hits them alike;
 *         two unmeasured rounds, then 7 swaps each) and the engine keeps the one with the
 *         lowest median time spent in its calls (why these modes and this trial:
 *         docs/benchmarks.md, "p2p: datatypes or packing"). Decided together: every rank of
 *         the plan runs the trial (those without peers time nothing) and the mode with the
 *         lowest maximum over ranks of the medians wins everywhere, since a packed sender
 *         facing a datatype receiver is slower than either mode alone. The bytes on the wire
 *         are the same in every mode (datatypes are built from MPI_BYTE runs in message
 *         order), so any mixture would still match.
 * Fields with pack/unpack hooks always pack. persistent=1: persistent requests for the
 * registered arrays (per-swap arrays get ordinary ones; under auto, built once decided). */
#include "hs_transport.h"
#include "hs_twosided.h"
#include "hs_pack.h"

#include <stdlib.h>
#include <string.h>

#define SEND_DT 1 /* mode bits */
#define RECV_DT 2
#define TRIAL_WARM 2 /* unmeasured rounds (datatype builds, first touch of the buffers) */
#define TRIAL_REPS 7 /* measured swaps per mode */

static const int mode_of_config[4] = {0, SEND_DT | RECV_DT, RECV_DT, SEND_DT};

/* Indices are the dtype values above. */
static const char *const dtype_vals[] = {"0", "1", "recv", "send", "auto", NULL};
const hs_option_spec hs__twosided_options[] = {
    HS_OPTION_CHOICE("dtype", "auto", dtype_vals, hs_twosided_config, dtype,
     "derived datatypes on both sides (1), packing (0), datatypes to receive only (recv) or "
     "to send only (send), or the faster of 1 and 0 over the first 18 swaps (auto)"),
    HS_OPTION_BOOL("persistent", "0", hs_twosided_config, persistent,
     "persistent requests for the registered arrays"),
    HS_OPTIONS_END};

struct hs_twosided {
  hs_twosided_config c;
  int mode;                   /* SEND_DT | RECV_DT bits of the swap in progress */
  int nr, ns;
  int *rpeer, *speer;        /* request index -> peer index */
  size_t *roff, *soff;       /* packed: offset of each message in rbuf/sbuf */
  char *rbuf, *sbuf;
  MPI_Request *rpers, *spers; /* persistent requests (registered arrays) */
  MPI_Request *rreq, *sreq;   /* ordinary requests */
  MPI_Request *rcur, *scur;   /* the requests of the swap in progress */
  int pers_cur;               /* the swap in progress uses the persistent requests */
  int *done;                  /* indices from MPI_Testsome */
  MPI_Status *st;             /* and their statuses (the tag tells a flag from data) */
  int failed;                 /* the swap in progress is a failed round (flags, no data) */
  int rleft;                  /* receives of the swap in progress not yet in the halos */
  /* auto trial */
  int trial;                  /* swaps of the trial done; -1 once decided (or not auto) */
  int ntry, tries[4];         /* modes under trial */
  double tswap;               /* seconds spent in this swap's calls so far */
  double t[4][TRIAL_REPS];
};

static MPI_Request *requests(hs_plan p, int n) {
  MPI_Request *r = hs__malloc(p, (size_t)(n > 0 ? n : 1) * sizeof *r);
  for (int i = 0; r && i < n; i++) r[i] = MPI_REQUEST_NULL;
  return r;
}

/* A failed round (hs__failed_round): every receive into scratch, a flag (zero bytes, tag
 * HS_TAG_FAIL) to every out-peer; no field touched. */
static int post_failed(hs_plan p, hs_twosided *e) {
  size_t total = 0;
  for (int i = 0; i < e->nr; i++) total += p->peers[e->rpeer[i]].recv_bytes;
  char *b = hs__fail_scratch(p, total);
  if (!b) return hs__error(HS_ERR_NOMEM, "%s: out of memory for a failed round", p->transport_name);
  for (int i = 0; i < e->nr; i++) {
    const hs_peer *pe = &p->peers[e->rpeer[i]];
    HS_MPI(MPI_Irecv(b, (int)pe->recv_bytes, MPI_BYTE, pe->rank, MPI_ANY_TAG, p->comm, &e->rreq[i]));
    b += pe->recv_bytes;
  }
  for (int i = 0; i < e->ns; i++)
    HS_MPI(MPI_Isend(NULL, 0, MPI_BYTE, p->peers[e->speer[i]].rank, HS_TAG_FAIL, p->comm,
                     &e->sreq[i]));
  return HS_OK;
}

/* Post one swap's receives and sends into rq/sq (persistent: *_init). Receives take any tag:
 * a neighbour whose swap failed sends a flag (HS_TAG_FAIL) in place of its data. */
static int post(hs_plan p, hs_twosided *e, void *const *arrays, int persistent, MPI_Request *rq,
                MPI_Request *sq) {
  const hs_dtypes *t = NULL;
  if (e->mode) { /* both sides' types: field by field (hs__dtypes_get_fieldwise) */
    int rc = e->mode == (SEND_DT | RECV_DT) ? hs__dtypes_get_fieldwise(p, arrays, &t)
                                            : hs__dtypes_get(p, arrays, &t);
    if (rc != HS_OK) return rc;
  }
  int rdt = e->mode & RECV_DT, sdt = e->mode & SEND_DT;
  for (int i = 0; i < e->nr; i++) {
    const hs_peer *pe = &p->peers[e->rpeer[i]];
    void *b = rdt ? MPI_BOTTOM : e->rbuf + e->roff[i];
    int n = rdt ? 1 : (int)pe->recv_bytes;
    MPI_Datatype ty = rdt ? t->recv[e->rpeer[i]] : MPI_BYTE;
    if (persistent)
      HS_MPI(MPI_Recv_init(b, n, ty, pe->rank, MPI_ANY_TAG, p->comm, &rq[i]));
    else
      HS_MPI(MPI_Irecv(b, n, ty, pe->rank, MPI_ANY_TAG, p->comm, &rq[i]));
  }
  for (int i = 0; i < e->ns; i++) {
    const hs_peer *pe = &p->peers[e->speer[i]];
    void *b = sdt ? MPI_BOTTOM : e->sbuf + e->soff[i];
    int n = sdt ? 1 : (int)pe->send_bytes;
    MPI_Datatype ty = sdt ? t->send[e->speer[i]] : MPI_BYTE;
    if (persistent) {
      HS_MPI(MPI_Send_init(b, n, ty, pe->rank, HS_TAG_DATA, p->comm, &sq[i]));
      continue;
    }
    if (!sdt) hs__pack_peer(p, pe, arrays, b);
    HS_MPI(MPI_Isend(b, n, ty, pe->rank, HS_TAG_DATA, p->comm, &sq[i]));
  }
  return HS_OK;
}

int hs__twosided_create(hs_plan p, const int *peers, int npeers, const hs_twosided_config *c,
                        hs_twosided **out) {
  /* Whether any rank has a peer to time (collective, so first: nothing below may return
   * early on one rank only before it). */
  int trial_any = 0;
  if (c->dtype == HS_DTYPE_AUTO && !p->has_callbacks) {
    int mine = 0, n0 = peers ? npeers : p->npeers;
    for (int i = 0; i < n0 && !mine; i++) {
      const hs_peer *pe = &p->peers[peers ? peers[i] : i];
      mine = pe->recv_bytes || pe->send_bytes;
    }
    HS_MPI(MPI_Allreduce(&mine, &trial_any, 1, MPI_INT, MPI_MAX, p->comm));
  }
  hs_twosided *e = hs__calloc(p, sizeof *e);
  *out = e;
  if (!e) return hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  e->c = *c;
  e->trial = -1;
  if (p->has_callbacks) e->c.dtype = HS_DTYPE_PACKED; /* hooks need packing */
  if (e->c.dtype == HS_DTYPE_AUTO && !trial_any) e->c.dtype = HS_DTYPE_BOTH; /* no one sends */
  if (e->c.dtype == HS_DTYPE_AUTO) {
    /* Both datatypes on both sides first: the likeliest winner decides if the trial is cut
     * short by a plan freed early. */
    static const int order[2] = {SEND_DT | RECV_DT, 0};
    e->ntry = 2;
    memcpy(e->tries, order, sizeof order);
    e->trial = 0;
    e->mode = order[0];
  } else {
    e->mode = mode_of_config[e->c.dtype >= 0 && e->c.dtype < HS_DTYPE_AUTO ? e->c.dtype
                                                                          : HS_DTYPE_BOTH];
  }
  int n = peers ? npeers : p->npeers;
  size_t nb = (size_t)(n > 0 ? n : 1);
  int rc = hs__calloc_arrays(p, nb, (void **)&e->rpeer, sizeof(int), (void **)&e->speer,
                             sizeof(int), (void **)&e->roff, sizeof(size_t), (void **)&e->soff,
                             sizeof(size_t), (void **)&e->done, sizeof(int), (void **)&e->st,
                             sizeof(MPI_Status), (void **)NULL);
  e->rreq = requests(p, n);
  e->sreq = requests(p, n);
  if (rc != HS_OK || !e->rreq || !e->sreq)
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
  int any_rpack = e->trial >= 0 || !(e->mode & RECV_DT);
  int any_spack = e->trial >= 0 || !(e->mode & SEND_DT);
  if (any_rpack) e->rbuf = hs__malloc(p, rbytes);
  if (any_spack) e->sbuf = hs__malloc(p, sbytes);
  if ((any_rpack && !e->rbuf) || (any_spack && !e->sbuf))
    return hs__error(HS_ERR_NOMEM, "%s: out of memory for %zu bytes of message buffers",
                     p->transport_name, rbytes + sbytes);
  if (e->c.persistent) {
    e->rpers = requests(p, n);
    e->spers = requests(p, n);
    if (!e->rpers || !e->spers) return hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
    if (e->trial < 0) return post(p, e, NULL, 1, e->rpers, e->spers);
  }
  return HS_OK;
}

/* End of the trial (collective: every rank is at the same swap): keep the mode with the lowest
 * maximum over ranks of the medians, drop the buffers it does not use, and build the
 * persistent requests for it. */
static int decide(hs_plan p, hs_twosided *e) {
  double med[4] = {0}, worst[4];
  for (int m = 0; m < e->ntry; m++) {
    double s[TRIAL_REPS];
    memcpy(s, e->t[m], sizeof s);
    for (int i = 1; i < TRIAL_REPS; i++) /* insertion sort */
      for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
        double x = s[j];
        s[j] = s[j - 1];
        s[j - 1] = x;
      }
    med[m] = s[TRIAL_REPS / 2];
  }
  HS_MPI(MPI_Allreduce(med, worst, e->ntry, MPI_DOUBLE, MPI_MAX, p->comm));
  int best = 0;
  for (int m = 1; m < e->ntry; m++)
    if (worst[m] < worst[best]) best = m;
  e->mode = e->tries[best];
  e->trial = -1;
  if (e->mode & RECV_DT) {
    hs__free(p, e->rbuf);
    e->rbuf = NULL;
  }
  if (e->mode & SEND_DT) {
    hs__free(p, e->sbuf);
    e->sbuf = NULL;
  }
  if (e->c.persistent) return post(p, e, NULL, 1, e->rpers, e->spers);
  return HS_OK;
}

int hs__twosided_start(hs_plan p, hs_twosided *e, void *const *arrays) {
  double t0 = e->trial >= 0 ? hs__wtime() : 0;
  if (e->trial >= 0) e->mode = e->tries[e->trial % e->ntry];
  e->rleft = e->nr;
  e->failed = hs__failed_round(p);
  e->pers_cur = e->c.persistent && e->trial < 0 && !e->failed && hs__arrays_registered(p, arrays);
  int rc = HS_OK;
  if (e->failed) {
    e->rcur = e->rreq;
    e->scur = e->sreq;
    rc = post_failed(p, e);
  } else if (!e->pers_cur) {
    e->rcur = e->rreq;
    e->scur = e->sreq;
    rc = post(p, e, arrays, 0, e->rreq, e->sreq);
  } else {
    e->rcur = e->rpers;
    e->scur = e->spers;
    if (e->nr) HS_MPI(MPI_Startall(e->nr, e->rpers));
    for (int i = 0; i < e->ns; i++) {
      if (!(e->mode & SEND_DT)) hs__pack_peer(p, &p->peers[e->speer[i]], arrays, e->sbuf + e->soff[i]);
      HS_MPI(MPI_Start(&e->spers[i]));
    }
  }
  if (e->trial >= 0) e->tswap = hs__wtime() - t0;
  return rc;
}

static void arrived(hs_plan p, hs_twosided *e, void *const *arrays, int i, int tag) {
  if (tag == HS_TAG_FAIL) hs__fail_seen(p, p->peers[e->rpeer[i]].rank);
  else if (!(e->mode & RECV_DT) && !e->failed)
    hs__unpack_peer(p, &p->peers[e->rpeer[i]], arrays, e->rbuf + e->roff[i]);
  e->rleft--;
}

int hs__twosided_test(hs_plan p, hs_twosided *e, void *const *arrays, int *done) {
  double t0 = e->trial >= 0 ? hs__wtime() : 0;
  if (e->rleft > 0) {
    int m = 0;
    HS_MPI(MPI_Testsome(e->nr, e->rcur, &m, e->done, e->st));
    for (int j = 0; m != MPI_UNDEFINED && j < m; j++)
      arrived(p, e, arrays, e->done[j], e->st[j].MPI_TAG);
  }
  /* Then the sends: done leaves complete nothing to wait for. */
  *done = e->rleft == 0;
  if (*done && e->ns) HS_MPI(MPI_Testall(e->ns, e->scur, done, MPI_STATUSES_IGNORE));
  if (e->trial >= 0) e->tswap += hs__wtime() - t0;
  return HS_OK;
}

int hs__twosided_complete(hs_plan p, hs_twosided *e, void *const *arrays) {
  double t0 = e->trial >= 0 ? hs__wtime() : 0;
  while (e->rleft > 0) { /* unpack in arrival order */
    int i;
    MPI_Status st;
    HS_MPI(MPI_Waitany(e->nr, e->rcur, &i, &st));
    if (i == MPI_UNDEFINED) break;
    arrived(p, e, arrays, i, st.MPI_TAG);
  }
  if (e->ns) HS_MPI(MPI_Waitall(e->ns, e->scur, MPI_STATUSES_IGNORE));
  if (e->trial >= 0) {
    int round = e->trial / e->ntry, m = e->trial % e->ntry;
    if (round >= TRIAL_WARM) e->t[m][round - TRIAL_WARM] = e->tswap + hs__wtime() - t0;
    if (++e->trial == (TRIAL_WARM + TRIAL_REPS) * e->ntry) return decide(p, e);
  }
  return HS_OK;
}

void hs__twosided_free(hs_plan p, hs_twosided *e) {
  if (!e) return;
  for (int i = 0; e->rpers && i < e->nr; i++)
    if (e->rpers[i] != MPI_REQUEST_NULL) MPI_Request_free(&e->rpers[i]);
  for (int i = 0; e->spers && i < e->ns; i++)
    if (e->spers[i] != MPI_REQUEST_NULL) MPI_Request_free(&e->spers[i]);
  void *blocks[] = {e->rpeer, e->speer, e->roff, e->soff, e->done, e->st, e->rbuf, e->sbuf,
                    e->rpers, e->spers, e->rreq, e->sreq, e};
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) hs__free(p, blocks[i]);
}
