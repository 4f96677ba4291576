/* Transport "shm": MPI-3 shared memory between ranks of one node, two-sided MPI between
 * nodes, in the same swap (the hybrid scheme of the BRAMS paper, seed 001).
 *
 * Within a node, each rank owns a segment of one MPI_Win_allocate_shared window: a control
 * block (counters, the swap's mode and field locations) followed by an outbox per on-node
 * peer. A sender either exposes its fields (all of them hs_alloc'd: the receiver copies the
 * strips straight from the sender's field into its own halo, one copy) or packs each strip
 * into its outbox (the receiver unpacks from there: two copies). No MPI call per message:
 * the only synchronisation is a pair of counters per directed edge, written with release
 * stores after MPI_Win_sync and read with acquire loads (docs/shm.md gives the protocol and
 * why it is race free). Option sync=barrier replaces the counters by two node-wide barriers
 * per swap, for comparison.
 *
 * The reverse exchange swaps the roles: each owner reads its on-node neighbours' halo boxes
 * (from their hs_alloc'd fields, or from the outboxes they packed them into) and the core
 * combines them in its canonical order (hs_pull, src/core/reverse.c), guarded by the same
 * counters.
 *
 * Off-node peers go through the core's two-sided engine (the same code as "p2p").
 * Options: see shm_options below (node_size, sync, noncontig, direct). */
#include "hs_internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define LINE 64
#define MODE_PACKED 0u
#define MODE_DIRECT_REG 1u  /* registered arrays, locations published at setup */
#define MODE_DIRECT_SWAP 2u /* per-swap arrays, locations published with the swap */

typedef struct {
  uint64_t id, offset;
} shm_loc;

/* Control block at the start of every rank's segment. Counters sit on their own cache
 * lines: `posted` is written by the owner and polled by its readers, consumed[j] is written
 * by the owner and polled by node rank j. */
typedef struct {
  _Atomic uint64_t posted; /* last swap whose data this rank has published */
  char pad0[LINE - sizeof(uint64_t)];
  uint32_t mode;           /* of the posted swap */
  uint32_t reg_direct;     /* registered fields all in hs_alloc memory (set at setup) */
  char pad1[LINE - 2 * sizeof(uint32_t)];
  /* followed by: consumed[nnode] (one line each), reg[nfields], cur[nfields] */
} shm_ctl;

typedef struct {
  int peer;                /* index in p->peers */
  int nrank;               /* rank in the node communicator */
  shm_ctl *ctl;            /* the peer's control block */
  char *seg;               /* the peer's segment */
  size_t my_obox;          /* offset in my segment of my outbox for this peer */
  size_t its_obox;         /* offset in its segment of its outbox for me */
  hs_section *ssec;        /* its send sections for me (nrecv of them) */
  hs_section *rsec;        /* its receive sections from me (nsend): the reverse's sources */
  char **sfield;           /* its registered field pointers in my address space, or NULL */
  char **cfield;           /* its per-swap field pointers, resolved for operation cseq */
  uint64_t cseq;
  int pending;             /* complete: its data not read yet */
} shm_edge;

typedef struct {
  int node_size, sync_barrier, noncontig, direct;
} shm_config;

static const char *const sync_vals[] = {"flags", "barrier", NULL};
static const hs_option_spec shm_options[] = {
    HS_OPTION_INT("node_size", "0", 0, 1 << 20, shm_config, node_size,
     "virtual nodes of N consecutive ranks (0: the physical node)"),
    HS_OPTION_CHOICE("sync", "flags", sync_vals, shm_config, sync_barrier,
     "neighbour-only counters, or two node-wide barriers per swap (for comparison)"),
    HS_OPTION_BOOL("noncontig", "0", shm_config, noncontig,
     "alloc_shared_noncontig for the control window"),
    HS_OPTION_BOOL("direct", "1", shm_config, direct,
     "copy straight from a neighbour's hs_alloc'd fields (one copy)"),
    HS_OPTIONS_END};

typedef struct {
  MPI_Comm node;
  int nrank, nsize;
  MPI_Win win;
  int win_locked;
  char *seg;               /* my segment */
  size_t seg_bytes;
  shm_ctl *ctl;
  int barrier, noncontig, direct_ok, node_size;
  int nintra;
  shm_edge *intra;
  uint64_t seq;
  int reg_direct;          /* my registered fields are all shared (and direct allowed) */
  int ninter;
  int *inter;              /* peer indices of the off-node peers */
  hs_twosided *remote;     /* the two-sided engine over them */
  hs_pull_edge *pedge;     /* the reverse: per on-node edge (same index), its counters */
  hs_pull pull;
  struct hs_reverse *rev;  /* built on first use */
} shm_t;

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static _Atomic uint64_t *consumed_of(const shm_t *t, shm_ctl *c, int j) {
  return (_Atomic uint64_t *)((char *)c + sizeof(shm_ctl) + (size_t)j * LINE);
}
static shm_loc *reg_of(const shm_t *t, shm_ctl *c) {
  return (shm_loc *)((char *)c + sizeof(shm_ctl) + (size_t)t->nsize * LINE);
}
static shm_loc *cur_of(const shm_t *t, shm_ctl *c, int nfields) {
  return reg_of(t, c) + nfields;
}
static size_t ctl_bytes(int nsize, int nfields) {
  return align_up(sizeof(shm_ctl) + (size_t)nsize * LINE + 2 * (size_t)nfields * sizeof(shm_loc),
                  LINE);
}


/* ------------------------------------------------------------------ setup */
/* My fields for these arrays are all in hs_alloc'd shared memory: fill locs. */
static int locate_fields(hs_plan p, void *const *arrays, shm_loc *locs) {
  if (p->has_callbacks) return 0;
  for (int f = 0; f < p->nfields; f++) {
    uint64_t id;
    size_t off;
    if (!hs__shared_lookup(p->decomp, hs__field_ptr(p, arrays, f), &id, NULL, &off)) return 0;
    locs[f].id = id;
    locs[f].offset = off;
  }
  return 1;
}

/* Resolve a sender's published field locations in my address space. */
static int resolve_fields(hs_plan p, int sender_rank, const shm_loc *locs, char **out) {
  for (int f = 0; f < p->nfields; f++) {
    char *b = hs__shared_base(p->decomp, locs[f].id, sender_rank, NULL);
    if (!b)
      return hs__error(HS_ERR_STATE,
                       "shm: field %d of rank %d is in hs_alloc allocation %llu, which rank %d "
                       "does not share (freed, or allocated on another decomposition?)",
                       f, sender_rank, (unsigned long long)locs[f].id, p->rank);
    out[f] = b + locs[f].offset;
  }
  return HS_OK;
}

static void read_options(hs_plan p, shm_t *t) {
  const shm_config *c = p->config;
  t->node_size = c->node_size;
  t->barrier = c->sync_barrier;
  t->noncontig = c->noncontig;
  t->direct_ok = c->direct;
}

/* Node communicator, peers split into on-node and off-node. Local work only after the
 * collective splits, which cannot fail for a local reason. */
static int setup_node(hs_plan p, shm_t *t) {
  MPI_Comm phys;
  HS_MPI(MPI_Comm_split_type(p->comm, MPI_COMM_TYPE_SHARED, p->rank, MPI_INFO_NULL, &phys));
  if (t->node_size > 0) {
    int mrc = MPI_Comm_split(phys, p->rank / t->node_size, p->rank, &t->node);
    MPI_Comm_free(&phys);
    if (mrc != MPI_SUCCESS) {
      t->node = MPI_COMM_NULL;
      return hs__mpi_error(mrc, "MPI_Comm_split (virtual nodes)");
    }
  } else {
    t->node = phys;
  }
  MPI_Comm_set_errhandler(t->node, MPI_ERRORS_RETURN);
  MPI_Comm_rank(t->node, &t->nrank);
  MPI_Comm_size(t->node, &t->nsize);
  int np = p->npeers;
  t->intra = hs__calloc(p, (size_t)(np > 0 ? np : 1) * sizeof(shm_edge));
  t->inter = hs__malloc(p, (size_t)(np > 0 ? np : 1) * sizeof(int));
  int *prank = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
  int *nrank = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
  if (!t->intra || !t->inter || !prank || !nrank) {
    free(prank);
    free(nrank);
    return hs__error(HS_ERR_NOMEM, "shm: out of memory");
  }
  MPI_Group gp, gn;
  MPI_Comm_group(p->comm, &gp);
  MPI_Comm_group(t->node, &gn);
  for (int k = 0; k < np; k++) prank[k] = p->peers[k].rank;
  if (np) MPI_Group_translate_ranks(gp, np, prank, gn, nrank);
  MPI_Group_free(&gp);
  MPI_Group_free(&gn);
  for (int k = 0; k < np; k++) {
    if (nrank[k] == MPI_UNDEFINED) {
      t->inter[t->ninter++] = k;
    } else {
      shm_edge *e = &t->intra[t->nintra++];
      e->peer = k;
      e->nrank = nrank[k];
    }
  }
  free(prank);
  free(nrank);
  return HS_OK;
}

static int setup_window(hs_plan p, shm_t *t) {
  size_t cb = ctl_bytes(t->nsize, p->nfields);
  size_t off = cb;
  for (int i = 0; i < t->nintra; i++) {
    shm_edge *e = &t->intra[i];
    const hs_peer *pe = &p->peers[e->peer];
    e->my_obox = off; /* forward: my strips for it; reverse: my halo boxes from it */
    off = align_up(off + (pe->send_bytes > pe->recv_bytes ? pe->send_bytes : pe->recv_bytes), LINE);
  }
  t->seg_bytes = off;
  MPI_Info info;
  MPI_Info_create(&info);
  if (t->noncontig) MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void *base = NULL;
  int mrc = MPI_Win_allocate_shared((MPI_Aint)t->seg_bytes, 1, info, t->node, &base, &t->win);
  MPI_Info_free(&info);
  if (mrc != MPI_SUCCESS) {
    t->win = MPI_WIN_NULL;
    return hs__mpi_error(mrc, "MPI_Win_allocate_shared");
  }
  MPI_Win_set_errhandler(t->win, MPI_ERRORS_RETURN);
  hs__account(p, (int64_t)t->seg_bytes);
  t->seg = base;
  memset(t->seg, 0, cb);
  t->ctl = (shm_ctl *)t->seg;
  atomic_init(&t->ctl->posted, 0);
  for (int j = 0; j < t->nsize; j++) atomic_init(consumed_of(t, t->ctl, j), 0);
  /* One passive epoch for the life of the plan: MPI_Win_sync needs it. */
  HS_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win));
  t->win_locked = 1;
  for (int i = 0; i < t->nintra; i++) {
    shm_edge *e = &t->intra[i];
    MPI_Aint sz;
    int du;
    void *b;
    HS_MPI(MPI_Win_shared_query(t->win, e->nrank, &sz, &du, &b));
    e->seg = b;
    e->ctl = (shm_ctl *)b;
  }
  return HS_OK;
}

/* Tell each on-node peer where my outbox for it is and what my send sections look like. */
static int exchange_edges(hs_plan p, shm_t *t) {
  int n = t->nintra;
  MPI_Request *rq = malloc((size_t)(6 * n + 1) * sizeof *rq);
  uint64_t *myoff = malloc((size_t)(n + 1) * sizeof *myoff);
  uint64_t *itsoff = malloc((size_t)(n + 1) * sizeof *itsoff);
  int rc = (rq && myoff && itsoff) ? HS_OK : hs__error(HS_ERR_NOMEM, "shm: out of memory");
  for (int i = 0; rc == HS_OK && i < n; i++) {
    shm_edge *e = &t->intra[i];
    const hs_peer *pe = &p->peers[e->peer];
    e->ssec = hs__malloc(p, (size_t)(pe->nrecv + 1) * sizeof(hs_section));
    e->rsec = hs__malloc(p, (size_t)(pe->nsend + 1) * sizeof(hs_section));
    e->cfield = hs__malloc(p, (size_t)(p->nfields + 1) * sizeof(char *));
    if (!e->ssec || !e->rsec || !e->cfield) rc = hs__error(HS_ERR_NOMEM, "shm: out of memory");
  }
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) {
    free(rq);
    free(myoff);
    free(itsoff);
    return rc;
  }
  int nq = 0;
  for (int i = 0; i < n; i++) {
    shm_edge *e = &t->intra[i];
    const hs_peer *pe = &p->peers[e->peer];
    myoff[i] = e->my_obox;
    MPI_Irecv(&itsoff[i], 1, MPI_UINT64_T, pe->rank, HS_TAG_SETUP, p->comm, &rq[nq++]);
    MPI_Irecv(e->ssec, (int)(pe->nrecv * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP2, p->comm,
              &rq[nq++]);
    MPI_Isend(&myoff[i], 1, MPI_UINT64_T, pe->rank, HS_TAG_SETUP, p->comm, &rq[nq++]);
    MPI_Isend(pe->send, (int)(pe->nsend * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP2,
              p->comm, &rq[nq++]);
    /* Second on the same tag (matched in order): the halo boxes the reverse reads. */
    MPI_Irecv(e->rsec, (int)(pe->nsend * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP2,
              p->comm, &rq[nq++]);
    MPI_Isend(pe->recv, (int)(pe->nrecv * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP2,
              p->comm, &rq[nq++]);
  }
  int mrc = MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE);
  rc = mrc == MPI_SUCCESS ? HS_OK : hs__mpi_error(mrc, "MPI_Waitall (shm setup exchange)");
  for (int i = 0; rc == HS_OK && i < n; i++) {
    shm_edge *e = &t->intra[i];
    const hs_peer *pe = &p->peers[e->peer];
    e->its_obox = (size_t)itsoff[i];
    for (int j = 0; j < pe->nrecv; j++)
      if (e->ssec[j].bytes != pe->recv[j].bytes) {
        rc = hs__error(HS_ERR_INTERNAL,
                       "shm: section %d from rank %d has %zu bytes, this rank expects %zu", j,
                       pe->rank, e->ssec[j].bytes, pe->recv[j].bytes);
        break;
      }
    for (int j = 0; rc == HS_OK && j < pe->nsend; j++)
      if (e->rsec[j].bytes != pe->send[j].bytes)
        rc = hs__error(HS_ERR_INTERNAL, "shm: rank %d's halo box %d has %zu bytes, not %zu",
                       pe->rank, j, e->rsec[j].bytes, pe->send[j].bytes);
  }
  free(rq);
  free(myoff);
  free(itsoff);
  return rc;
}

static int shm_source(hs_plan p, void *ctx, int i, int j0, int j1, char *scratch,
                      hs_pull_src *out);

static int shm_setup(hs_plan p) {
  shm_t *t = hs__impl_new(p, sizeof *t);
  if (!t) return HS_ERR_NOMEM;
  t->node = MPI_COMM_NULL;
  t->win = MPI_WIN_NULL;
  read_options(p, t);
  int rc = hs__agree(p->comm, setup_node(p, t));
  if (rc != HS_OK) return rc;
  static const hs_twosided_config remote = {.dtype = 1, .persistent = 0}; /* p2p's defaults */
  rc = hs__agree(p->comm, hs__twosided_create(p, t->inter, t->ninter, &remote, &t->remote));
  if (rc != HS_OK) return rc;
  rc = hs__agree(p->comm, setup_window(p, t));
  if (rc != HS_OK) return rc;
  rc = exchange_edges(p, t);
  if (rc != HS_OK) return rc;
  /* Publish where my registered fields live, if they are all hs_alloc'd. */
  int have_all = 1;
  for (int f = 0; f < p->nfields; f++)
    if (!p->fields[f].data) have_all = 0;
  t->reg_direct = t->direct_ok && have_all && locate_fields(p, NULL, reg_of(t, t->ctl));
  t->ctl->reg_direct = (uint32_t)t->reg_direct;
  /* Make the control blocks visible to the node before anyone reads them. */
  HS_MPI(MPI_Win_sync(t->win));
  HS_MPI(MPI_Barrier(t->node));
  HS_MPI(MPI_Win_sync(t->win));
  for (int i = 0; rc == HS_OK && i < t->nintra; i++) {
    shm_edge *e = &t->intra[i];
    const hs_peer *pe = &p->peers[e->peer];
    if (!e->ctl->reg_direct || !(pe->nrecv || pe->nsend)) continue;
    e->sfield = hs__malloc(p, (size_t)p->nfields * sizeof(char *));
    if (!e->sfield)
      rc = hs__error(HS_ERR_NOMEM, "shm: out of memory");
    else
      rc = resolve_fields(p, p->peers[e->peer].rank, reg_of(t, e->ctl), e->sfield);
  }
  t->pedge = hs__malloc(p, (size_t)(t->nintra + 1) * sizeof(hs_pull_edge));
  if (rc == HS_OK && !t->pedge) rc = hs__error(HS_ERR_NOMEM, "shm: out of memory");
  for (int i = 0; rc == HS_OK && i < t->nintra; i++) {
    shm_edge *e = &t->intra[i];
    t->pedge[i] = (hs_pull_edge){e->peer, &e->ctl->posted, consumed_of(t, t->ctl, e->nrank),
                                 consumed_of(t, e->ctl, t->nrank)};
  }
  t->pull = (hs_pull){t->win, t->nintra, t->pedge, t, shm_source};
  return rc;
}

/* ------------------------------------------------------------------ swaps */
/* A direct-mode neighbour's fields for the posted operation, in my address space; NULL (an
 * error is set) if its per-swap arrays are not shared with me. */
static char **fields_of(hs_plan p, shm_t *t, shm_edge *e) {
  if (e->ctl->mode == MODE_DIRECT_REG) return e->sfield;
  if (e->cseq != t->seq) {
    const shm_loc *cur = cur_of(t, e->ctl, p->nfields);
    if (resolve_fields(p, p->peers[e->peer].rank, cur, e->cfield) != HS_OK) return NULL;
    e->cseq = t->seq;
  }
  return e->cfield;
}

static void read_edge(hs_plan p, shm_t *t, shm_edge *e, void *const *arrays, int *err) {
  const hs_peer *pe = &p->peers[e->peer];
  if (e->ctl->mode == MODE_PACKED) {
    hs__unpack_peer(p, pe, arrays, e->seg + e->its_obox);
    return;
  }
  char **sf = fields_of(p, t, e);
  if (!sf) {
    *err = HS_ERR_STATE;
    return;
  }
  for (int i = 0; i < pe->nrecv; i++) {
    int j = pe->recv_fm[i];
    const hs_section *d = &pe->recv[j];
    const hs_section *s = &e->ssec[j];
    hs__copy_sections(p, s, sf[s->box.field], d, hs__field_ptr(p, arrays, d->box.field));
  }
}

/* The reverse's source for my sections [j0, j1) of edge i: its outbox, or its fields. */
static int shm_source(hs_plan p, void *ctx, int i, int j0, int j1, char *scratch,
                      hs_pull_src *out) {
  shm_t *t = ctx;
  shm_edge *e = &t->intra[i];
  (void)j1;
  (void)scratch;
  *out = (hs_pull_src){NULL, NULL, e->rsec};
  if (e->ctl->mode == MODE_PACKED) {
    out->buf = e->seg + e->its_obox + p->peers[e->peer].send[j0].msg_offset;
    return HS_OK;
  }
  out->fields = fields_of(p, t, e);
  return out->fields ? HS_OK : HS_ERR_STATE;
}

/* Publish operation t->seq to my on-node readers: my interior strips (forward) or my halo
 * boxes (reverse), as field locations or packed into the outboxes. The readers finished
 * with the previous operation (its complete waited for that), so the outboxes and the
 * control block are mine to overwrite. */
static int post(hs_plan p, shm_t *t, void *const *arrays, int reverse) {
  uint32_t mode = MODE_PACKED;
  bool registered = hs__arrays_registered(p, arrays);
  if (registered && t->reg_direct)
    mode = MODE_DIRECT_REG;
  else if (!registered && t->direct_ok && locate_fields(p, arrays, cur_of(t, t->ctl, p->nfields)))
    mode = MODE_DIRECT_SWAP;
  t->ctl->mode = mode;
  for (int i = 0; mode == MODE_PACKED && i < t->nintra; i++) {
    const hs_peer *pe = &p->peers[t->intra[i].peer];
    char *box = t->seg + t->intra[i].my_obox;
    if (reverse)
      hs__pack_sections(p, pe->recv, pe->nrecv, arrays, box); /* my halo boxes from it */
    else
      hs__pack_peer(p, pe, arrays, box);
  }
  HS_MPI(MPI_Win_sync(t->win));
  if (!t->barrier) atomic_store_explicit(&t->ctl->posted, t->seq, memory_order_release);
  return HS_OK;
}

static int shm_start(hs_plan p, void *const *arrays) {
  shm_t *t = p->impl;
  ++t->seq;
  int rc = hs__twosided_start(p, t->remote, arrays);
  if (rc != HS_OK) return rc;
  return t->nintra ? post(p, t, arrays, 0) : HS_OK;
}

static int complete_barrier(hs_plan p, shm_t *t, void *const *arrays) {
  int err = HS_OK;
  HS_MPI(MPI_Barrier(t->node));
  HS_MPI(MPI_Win_sync(t->win));
  for (int i = 0; i < t->nintra; i++)
    if (p->peers[t->intra[i].peer].nrecv) read_edge(p, t, &t->intra[i], arrays, &err);
  int rc = hs__twosided_complete(p, t->remote, arrays);
  if (rc != HS_OK) return rc;
  /* Nobody may overwrite what a neighbour is still reading. */
  HS_MPI(MPI_Win_sync(t->win));
  HS_MPI(MPI_Barrier(t->node));
  return err;
}

static int shm_complete(hs_plan p, void *const *arrays) {
  shm_t *t = p->impl;
  if (t->barrier) return complete_barrier(p, t, arrays);
  uint64_t seq = t->seq;
  int err = HS_OK;
  int left = 0;
  for (int i = 0; i < t->nintra; i++) {
    t->intra[i].pending = p->peers[t->intra[i].peer].nrecv > 0;
    left += t->intra[i].pending;
  }
  int remote_done = 0;
  unsigned spins = 0;
  /* Read every on-node neighbour as soon as it has posted, and unpack off-node messages as
   * they arrive, in whatever order they become ready. */
  while (left || !remote_done) {
    int progressed = 0;
    for (int i = 0; i < t->nintra; i++) {
      shm_edge *e = &t->intra[i];
      if (!e->pending) continue;
      if (atomic_load_explicit(&e->ctl->posted, memory_order_acquire) < seq) continue;
      HS_MPI(MPI_Win_sync(t->win));
      read_edge(p, t, e, arrays, &err);
      HS_MPI(MPI_Win_sync(t->win));
      atomic_store_explicit(consumed_of(t, t->ctl, e->nrank), seq, memory_order_release);
      e->pending = 0;
      left--;
      progressed = 1;
    }
    if (!remote_done) {
      int rc = hs__twosided_test(p, t->remote, arrays, &remote_done);
      if (rc != HS_OK) return rc;
      progressed |= remote_done;
    }
    if (progressed)
      spins = 0;
    else
      hs__relax(&spins);
  }
  int rc = hs__twosided_complete(p, t->remote, arrays); /* the sends */
  if (rc != HS_OK) return rc;
  /* The caller may overwrite its interior (or I my outboxes) once we return: wait until
   * every on-node reader of this swap has finished. */
  for (int i = 0; i < t->nintra; i++) {
    shm_edge *e = &t->intra[i];
    if (!p->peers[e->peer].nsend) continue;
    _Atomic uint64_t *c = consumed_of(t, e->ctl, t->nrank);
    spins = 0;
    while (atomic_load_explicit(c, memory_order_acquire) < seq) hs__relax(&spins);
  }
  HS_MPI(MPI_Win_sync(t->win));
  return err;
}

/* The reverse: sync=barrier keeps the core's two-sided one. */
static int shm_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  shm_t *t = p->impl;
  if (t->barrier) return hs__reverse_start(p, op, arrays);
  int rc = hs__reverse_create(p, &t->pull, &t->rev);
  if (rc != HS_OK) return rc;
  ++t->seq;
  rc = post(p, t, arrays, 1);
  return rc == HS_OK ? hs__reverse_begin(p, t->rev, arrays) : rc;
}

static int shm_reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  shm_t *t = p->impl;
  if (t->barrier) return hs__reverse_complete(p, op, arrays);
  return hs__reverse_finish(p, t->rev, op, arrays, t->seq);
}

static void shm_destroy(hs_plan p) {
  shm_t *t = p->impl;
  if (!t) return;
  hs__twosided_free(p, t->remote);
  hs__reverse_destroy(p, t->rev);
  hs__free(p, t->pedge);
  if (t->intra)
    for (int i = 0; i < t->nintra; i++) {
      hs__free(p, t->intra[i].ssec);
      hs__free(p, t->intra[i].rsec);
      hs__free(p, t->intra[i].sfield);
      hs__free(p, t->intra[i].cfield);
    }
  hs__free(p, t->intra);
  hs__free(p, t->inter);
  if (t->win != MPI_WIN_NULL) {
    if (t->win_locked) MPI_Win_unlock_all(t->win);
    MPI_Win_free(&t->win);
    hs__account(p, -(int64_t)t->seg_bytes);
  }
  if (t->node != MPI_COMM_NULL) MPI_Comm_free(&t->node);
  hs__free(p, t);
  p->impl = NULL;
}

HS_DEFINE_TRANSPORT(hs__transport_shm, shm, "shm", HS_TRANSPORT_SHM, 0,
                    "MPI-3 shared memory on the node (one copy from hs_alloc'd fields, else "
                    "pack/unpack through shared outboxes), two-sided MPI between nodes",
                    shm_options, shm_config, .reverse_start = shm_reverse_start,
                    .reverse_complete = shm_reverse_complete);
