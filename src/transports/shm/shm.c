/* Transport "shm": MPI-3 shared memory between ranks of one node, two-sided MPI between
 * nodes, in the same swap (the hybrid scheme of the BRAMS paper, seed 001).
 *
 * The core's on-node engine (src/engines/node.c) does the node split, the control blocks in one
 * MPI_Win_allocate_shared window, the section exchange, the off-node messages and the
 * posted/consumed protocol (docs/shm.md). This file says what a rank publishes and how a
 * neighbour's edge is copied. A sender either exposes its fields (all of them node-shared:
 * hs_alloc'd, or remapped with remap=1; the receiver copies the strips straight from the
 * sender's field into its own halo, one copy) or packs each strip into its box for that peer
 * in the window (the receiver unpacks from there: two copies). Strips of short runs go through
 * the box either way (box_run). The reverse swaps the roles:
 * each owner reads its on-node neighbours' halo boxes from their fields or boxes, and the core
 * combines them in its canonical order (hs_pull). Options: see shm_options below. */
#include "hs_node.h"
#include "hs_transport.h"

#include <stddef.h>

#define MODE_PACKED 0u
#define MODE_DIRECT_REG 1u  /* registered arrays, locations published at setup */
#define MODE_DIRECT_SWAP 2u /* per-swap arrays, locations published with the swap */

typedef struct {
  uint64_t id, offset;
} shm_loc;

/* Published area of the control block. */
typedef struct {
  uint32_t reg_direct; /* my registered fields are all node-shared (set at setup) */
  uint32_t pad;
  shm_loc loc[];       /* reg[nfields] (setup), then cur[nfields] (per-swap arrays) */
} shm_pub;

typedef struct {
  char **sfield; /* its registered field pointers in my address space, or NULL */
  char **cfield; /* its per-swap field pointers, resolved for operation cseq */
  uint64_t cseq;
  int *sfirst, *rfirst; /* field f's sections for it: send_fm[sfirst[f] .. sfirst[f+1]), recv_fm likewise */
} shm_edge;

typedef struct {
  int node_size, sync_barrier, noncontig, direct, box_run, pipeline, lockstep;
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
    HS_OPTION_INT("box_run", "64", 0, 1 << 30, shm_config, box_run,
     "with direct copies, strips whose runs are shorter (bytes) still go through the box"),
    HS_OPTION_BOOL("pipeline", "1", shm_config, pipeline,
     "publish and read a forward's boxes field by field, each read while its lines are cached"),
    HS_OPTION_INT("lockstep", "4", 0, 64, shm_config, lockstep,
     "pipelined: after each field, wait for the neighbours' same field, at most N times the "
     "first field's packing per swap (0: read only what is there)"),
    HS_OPTIONS_END};

typedef struct {
  hs_node node;     /* first: the engine's state */
  shm_edge *x;      /* per on-node edge */
  int short_strips; /* some strip of mine goes through a box even when my fields are shared */
  uint32_t mode;    /* the forward just posted */
} shm_t;

/* A strip of the sender's (its send section) read from its box even in a direct forward: a
 * run shorter than a cache line shares its lines with cells the sender writes (its own halo),
 * so read in place every run costs a line from the sender's core. Packed by the sender, the
 * same bytes cross in whole lines: x faces of 64^3 single-precision fields, 2 ranks, runs of
 * 4-32 bytes, read 1.2-2.2x slower in place than through the box (docs/shm.md). Sender and
 * reader decide alike from the sender's section. */
static bool boxed_strip(const hs_plan p, const hs_section *sender_send) {
  return sender_send->run < (size_t)((shm_config *)p->config)->box_run;
}

/* My fields for these arrays are all in node-shared memory: fill locs. */
static int locate_fields(hs_plan p, void *const *arrays, shm_loc *locs) {
  if (p->has_callbacks) return 0;
  for (int f = 0; f < p->nfields; f++) {
    uint64_t id;
    size_t off;
    if (!hs__shared_lookup(p->decomp, hs__field_ptr(p, arrays, f), &id, NULL, &off)) return 0;
    locs[f] = (shm_loc){id, off};
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

/* first[f]: where field f's sections begin in fm (n of them, sorted by field). */
static void field_ranges(hs_plan p, const hs_section *sec, const int *fm, int n, int *first) {
  for (int f = 0, k = 0; f <= p->nfields; f++) {
    while (k < n && sec[fm[k]].box.field < f) k++;
    first[f] = k;
  }
}

static int shm_edges(hs_plan p, hs_node *n) {
  shm_t *t = (shm_t *)n;
  shm_pub *mine = (shm_pub *)n->pub;
  t->x = hs__calloc(p, (size_t)(n->nedges + 1) * sizeof *t->x);
  if (!t->x) return hs__error(HS_ERR_NOMEM, "shm: out of memory");
  for (int i = 0; i < n->nedges; i++) {
    shm_edge *x = &t->x[i];
    const hs_peer *pe = &p->peers[n->edges[i].peer];
    x->cfield = hs__malloc(p, (size_t)(p->nfields + 1) * sizeof(char *));
    x->sfirst = hs__malloc(p, 2 * (size_t)(p->nfields + 1) * sizeof(int));
    if (!x->cfield || !x->sfirst) return hs__error(HS_ERR_NOMEM, "shm: out of memory");
    x->rfirst = x->sfirst + p->nfields + 1;
    field_ranges(p, pe->send, pe->send_fm, pe->nsend, x->sfirst);
    field_ranges(p, pe->recv, pe->recv_fm, pe->nrecv, x->rfirst);
    for (int k = 0; k < pe->nsend; k++) t->short_strips |= boxed_strip(p, &pe->send[k]);
  }
  mine->reg_direct = (uint32_t)(((shm_config *)p->config)->direct && locate_fields(p, NULL, mine->loc));
  return HS_OK;
}

/* Where the neighbours' registered fields are, for those that publish them. */
static int shm_connect(hs_plan p, hs_node *n) {
  shm_t *t = (shm_t *)n;
  for (int i = 0; i < n->nedges; i++) {
    const hs_node_edge *e = &n->edges[i];
    const hs_peer *pe = &p->peers[e->peer];
    if (!((shm_pub *)e->pub)->reg_direct || !(pe->nrecv || pe->nsend)) continue;
    t->x[i].sfield = hs__malloc(p, (size_t)p->nfields * sizeof(char *));
    if (!t->x[i].sfield) return hs__error(HS_ERR_NOMEM, "shm: out of memory");
    int rc = resolve_fields(p, pe->rank, ((shm_pub *)e->pub)->loc, t->x[i].sfield);
    if (rc != HS_OK) return rc;
  }
  return HS_OK;
}

/* Chunk c of a forward: field c's strips for every on-node peer that go through my boxes
 * (all of them, or the short ones when my fields are shared). */
static void shm_post_chunk(hs_plan p, hs_node *n, void *const *arrays, int c) {
  shm_t *t = (shm_t *)n;
  char *field = hs__field_ptr(p, arrays, c);
  for (int i = 0; i < n->nedges; i++) {
    const hs_peer *pe = &p->peers[n->edges[i].peer];
    char *box = n->seg + n->edges[i].my_box;
    for (int k = t->x[i].sfirst[c]; k < t->x[i].sfirst[c + 1]; k++) {
      const hs_section *sec = &pe->send[pe->send_fm[k]];
      if (t->mode == MODE_PACKED || boxed_strip(p, sec))
        hs__pack_section(p, sec, field, box + (sec->msg_offset - pe->send[0].msg_offset));
    }
  }
}

/* Publish: where my fields are, or my strips (forward) / halo boxes (reverse) packed. A
 * forward with boxes is published field by field where the engine can (n->nchunks); else its
 * chunks all go at once. */
static uint32_t shm_post(hs_plan p, hs_node *n, void *const *arrays, int reverse) {
  shm_t *t = (shm_t *)n;
  shm_pub *mine = (shm_pub *)n->pub;
  bool registered = hs__arrays_registered(p, arrays);
  uint32_t mode = MODE_PACKED;
  if (registered && mine->reg_direct)
    mode = MODE_DIRECT_REG;
  else if (!registered && ((shm_config *)p->config)->direct &&
           locate_fields(p, arrays, mine->loc + p->nfields))
    mode = MODE_DIRECT_SWAP;
  if (reverse) {
    for (int i = 0; mode == MODE_PACKED && i < n->nedges; i++) /* my halo boxes from it */
      hs__pack_sections(p, p->peers[n->edges[i].peer].recv, p->peers[n->edges[i].peer].nrecv,
                        arrays, n->seg + n->edges[i].my_box);
    return mode;
  }
  t->mode = mode;
  if (mode == MODE_PACKED || t->short_strips) {
    if (n->chunk_ok && ((shm_config *)p->config)->pipeline && p->nfields > 1)
      n->nchunks = p->nfields;
    else
      for (int c = 0; c < p->nfields; c++) shm_post_chunk(p, n, arrays, c);
  }
  return mode == MODE_PACKED ? mode | HS_NODE_BOXED : mode;
}

/* A direct-mode neighbour's fields for the posted operation, in my address space; NULL (an
 * error is set) if its per-swap arrays are not shared with me. */
static char **fields_of(hs_plan p, hs_node *n, int i) {
  const hs_node_edge *e = &n->edges[i];
  shm_edge *x = &((shm_t *)n)->x[i];
  if (hs__node_mode(e) == MODE_DIRECT_REG) return x->sfield;
  if (x->cseq != n->seq) {
    const shm_loc *cur = ((shm_pub *)e->pub)->loc + p->nfields;
    if (resolve_fields(p, p->peers[e->peer].rank, cur, x->cfield) != HS_OK) return NULL;
    x->cseq = n->seq;
  }
  return x->cfield;
}

/* My halo's sections recv_fm[k0 .. k1) from edge i: from its box, or from its field. */
static int read_range(hs_plan p, hs_node *n, int i, void *const *arrays, int k0, int k1) {
  const hs_node_edge *e = &n->edges[i];
  const hs_peer *pe = &p->peers[e->peer];
  if (hs__node_mode(e) == MODE_PACKED) {
    for (int k = k0; k < k1; k++) {
      const hs_section *d = &pe->recv[pe->recv_fm[k]];
      hs__unpack_section(p, d, hs__field_ptr(p, arrays, d->box.field),
                         e->seg + e->its_box + d->msg_offset);
    }
    return HS_OK;
  }
  char **sf = fields_of(p, n, i);
  if (!sf) return HS_ERR_STATE;
  for (int k = k0; k < k1; k++) {
    int j = pe->recv_fm[k];
    const hs_section *d = &pe->recv[j], *s = &e->ssec[j];
    char *field = hs__field_ptr(p, arrays, d->box.field);
    if (boxed_strip(p, s))
      hs__unpack_section(p, d, field, e->seg + e->its_box + d->msg_offset);
    else
      hs__copy_sections(p, s, sf[s->box.field], d, field);
  }
  return HS_OK;
}

static int shm_read(hs_plan p, hs_node *n, int i, void *const *arrays) {
  return read_range(p, n, i, arrays, 0, p->peers[n->edges[i].peer].nrecv);
}

/* Chunk c of edge i's pipelined forward: my halo's sections of field c. */
static int shm_read_chunk(hs_plan p, hs_node *n, int i, void *const *arrays, int c) {
  const shm_edge *x = &((shm_t *)n)->x[i];
  return read_range(p, n, i, arrays, x->rfirst[c], x->rfirst[c + 1]);
}

/* The reverse's source for my sections [j0, j1) of edge i: its box, or its fields. */
static int shm_source(hs_plan p, void *ctx, int i, int j0, int j1, char *scratch,
                      hs_pull_src *out) {
  hs_node *n = ctx;
  const hs_node_edge *e = &n->edges[i];
  (void)j1;
  (void)scratch;
  *out = (hs_pull_src){NULL, NULL, e->rsec};
  if (hs__node_mode(e) == MODE_PACKED) {
    out->buf = e->seg + e->its_box + p->peers[e->peer].send[j0].msg_offset;
    return HS_OK;
  }
  out->fields = fields_of(p, n, i);
  return out->fields ? HS_OK : HS_ERR_STATE;
}

static void shm_free(hs_plan p, hs_node *n) {
  shm_t *t = (shm_t *)n;
  for (int i = 0; t->x && i < n->nedges; i++) {
    hs__free(p, t->x[i].sfield);
    hs__free(p, t->x[i].cfield);
    hs__free(p, t->x[i].sfirst);
  }
  hs__free(p, t->x);
}

static const hs_node_ops shm_node_ops = {
    .setup = shm_edges, .connect = shm_connect, .post = shm_post, .read = shm_read,
    .post_chunk = shm_post_chunk, .read_chunk = shm_read_chunk, .source = shm_source,
    .release = shm_free};

/* A box per on-node peer; the reverse reads sections where they lie, in any order. */
static int shm_setup(hs_plan p) {
  const shm_config *c = p->config;
  hs_node_config nc = {.node_size = c->node_size, .barrier = c->sync_barrier,
                       .noncontig = c->noncontig, .boxes = 1, .pull_any_order = 1,
                       .lockstep = c->lockstep};
  nc.pub_bytes = sizeof(shm_pub) + 2 * (size_t)p->nfields * sizeof(shm_loc);
  return hs__node_setup(p, &shm_node_ops, &nc, sizeof(shm_t));
}

HS_DEFINE_NODE_TRANSPORT(hs__transport_shm, shm_setup, "shm", HS_TRANSPORT_SHM,
                         "MPI-3 shared memory on the node (one copy from hs_alloc'd fields, else "
                         "pack/unpack through shared outboxes), two-sided MPI between nodes",
                         shm_options, shm_config, HS_OPS_NO_EXTRA);
