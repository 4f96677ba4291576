/* The on-node engine (opt-in): the base of the transports that read their on-node
 * neighbours' memory (shm, cma), with node-shared field memory and the reverse's pull. */
#ifndef HS_NODE_H
#define HS_NODE_H

#include "hs_transport.h"
#include "hs_pack.h"

/* ---- node-shared field memory (hs_alloc, src/memory/alloc.c): a core service any transport
 * may use to reach a neighbour's field directly. */
/* 1 if ptr lies inside an hs_alloc'd shared window of d: fills *id (the same on every rank
 * of the node for that allocation), *win and *offset (bytes from the start of this rank's
 * segment); 0 for any other memory (including hs_alloc's plain-memory fallback). */
int hs__shared_lookup(hs_decomp d, const void *ptr, uint64_t *id, MPI_Win *win,
                      size_t *offset);
/* Start of `rank`'s segment (rank in d's communicator) of allocation `id`, mapped in this
 * process, and its size; NULL if that rank does not share the allocation with this one. */
char *hs__shared_base(hs_decomp d, uint64_t id, int rank, size_t *bytes);


/* The ranks cannot all run at once: more ranks than CPUs here, or a wait lately found the
 * cores busy (src/core/relax.c, hs__relax's test). A wait that pays only while its partner
 * runs should not be made then. */
bool hs__cores_contended(void);
/* A slow yield that ran another task, at `now` (CLOCK_MONOTONIC ns): records it, and when
 * another came within 200 ms before it marks the cores busy (hs__cores_contended) and returns
 * true: a lone one is not a busy node (src/core/relax.c). */
bool hs__relax_strike(long long now);

/* ---- the reverse's pull (src/engines/reverse.c, hs_core.h): where an on-node transport says a
 * neighbour's halo boxes are */
typedef struct {
  const char *buf;                /* the sections' bytes packed in message order, or NULL: */
  char *const *fields;            /* the peer's fields mapped here, and */
  const hs_section *sec;          /* its halo boxes for me (its forward receive sections) */
} hs_pull_src;

/* ---- on-node engine (src/engines/node.c): what transports that read their on-node neighbours'
 * memory share (shm, cma). The transport's state (p->impl) begins with an hs_node; its setup
 * calls hs__node_setup with the hs_node_ops below, and HS_DEFINE_NODE_TRANSPORT gives it the
 * engine's start, test, complete, reverse, destroy and describe. */
/* The node communicator of comm: MPI_COMM_TYPE_SHARED, split into virtual nodes of node_size
 * consecutive ranks if node_size > 0. Collective; the one node split of the library. */
int hs__node_comm(MPI_Comm comm, int node_size, MPI_Comm *node);
typedef struct {
  int peer;               /* index in p->peers */
  int nrank;              /* rank in the node communicator */
  char *seg;              /* its segment, mapped here (its control block first) */
  char *pub;              /* its published area in that segment */
  size_t my_box, its_box; /* with boxes: offsets of my box for it (mine) and its for me (its) */
  hs_section *ssec;       /* its send sections for me: where my halo is in its fields (nrecv) */
  hs_section *rsec;       /* its receive sections from me: its halo boxes of my points (nsend) */
  int pending;            /* complete: its data not read yet */
  int next_chunk;         /* a chunked forward: its chunks read so far */
} hs_node_edge;
struct hs_node;
typedef struct {
  /* After the section exchange: the transport's per-edge state and the setup part of its
   * published area (n->pub). Local; the engine agrees on the result. */
  int (*setup)(hs_plan p, struct hs_node *n);
  /* Optional. After every control block is visible: read the neighbours' published setup.
   * Local. */
  int (*connect)(hs_plan p, struct hs_node *n);
  /* Publish operation n->seq: the forward's interior strips (reverse = 0) or the reverse's
   * halo boxes (1), in n->pub or the boxes; returns the mode word readers see, with
   * HS_NODE_BOXED set where a forward's data lies in the boxes only. */
  uint32_t (*post)(hs_plan p, struct hs_node *n, void *const *arrays, int reverse);
  /* Forward: fill my halo from edge e, which has posted this operation. */
  int (*read)(hs_plan p, struct hs_node *n, int e, void *const *arrays);
  /* Optional, both or neither: a forward in chunks, chunk c being field c (n->nchunks ==
   * p->nfields, set by post, which then publishes only its mode word and locations).
   * post_chunk publishes chunk c, after chunks 0..c-1; read_chunk fills my halo's part c from
   * edge e, which has published it (instead of read). Between its own chunks the engine does
   * field c's self copies and reads what the neighbours have published (waiting a little for
   * their chunk c: hs_node_config.lockstep), so the lines a chunk's packing brought in are
   * still cached when the halo cells in them are written (docs/shm.md, "Pipelined boxes"). */
  void (*post_chunk)(hs_plan p, struct hs_node *n, void *const *arrays, int c);
  int (*read_chunk)(hs_plan p, struct hs_node *n, int e, void *const *arrays, int c);
  /* The reverse's source (hs_pull.source; ctx is the hs_node). */
  int (*source)(hs_plan p, void *ctx, int e, int j0, int j1, char *scratch, hs_pull_src *out);
  /* Optional: free the transport's per-edge state (also after a partial setup). */
  void (*release)(hs_plan p, struct hs_node *n);
  /* Optional: appended to the engine's part of hs_plan_describe. */
  void (*describe)(hs_plan p, struct hs_node *n, char *buf, size_t len);
} hs_node_ops;
/* The bit of a forward post's mode word saying its data lies in my boxes only, none in my
 * fields: complete then returns without waiting for my readers (the caller may overwrite its
 * fields at once), and the next post waits for them before it overwrites the boxes. Readers
 * never see it (hs__node_mode). */
#define HS_NODE_BOXED 0x80000000u

typedef struct {
  int node_size;       /* virtual nodes of this many ranks; 0: the physical node */
  int barrier;         /* two node-wide barriers per swap instead of the counters */
  int noncontig;       /* alloc_shared_noncontig for the window */
  int boxes;           /* a box per on-node peer in my segment (max of send and receive bytes) */
  int hooks_by_message; /* a plan with pack/unpack hooks sends every peer by message */
  int all_by_message;  /* every peer by message (the transport judged its reads too costly) */
  int pull_any_order;  /* the reverse's source reads sections where they lie (hs_pull) */
  size_t pub_bytes;    /* the transport's published area in the control block */
  int lockstep;        /* a chunked forward waits for its neighbours' chunk c after its own, at
                        * most this many times its first chunk's time per swap (0: never;
                        * docs/shm.md, "Pipelined boxes") */
} hs_node_config;
typedef struct hs_node {
  int nedges, nremote;
  hs_node_edge *edges;    /* the on-node peers */
  char *seg;              /* my segment (my boxes at edges[i].my_box) */
  char *pub;              /* my published area */
  uint64_t seq;           /* operations so far, forward and reverse */
  int chunk_ok;           /* the engine can run a forward in chunks (sync=flags, chunk ops) */
  int nchunks;            /* the forward just posted: its chunks (0 or 1: none), set by post */
  struct hs_node_core *core; /* the engine's own state (src/engines/node.c) */
} hs_node;
/* Allocates p->impl (bytes: the transport's state, an hs_node first) and sets the plan up. */
int hs__node_setup(hs_plan p, const hs_node_ops *ops, const hs_node_config *c, size_t bytes);
int hs__node_start(hs_plan p, void *const *arrays);
int hs__node_complete(hs_plan p, void *const *arrays);
/* Progress without blocking: reads the neighbours that have posted, unpacks the off-node
 * messages that arrived (sync=barrier: polls its MPI_Ibarrier); *done = 1 once the halos are
 * written and my readers are done with my data. Complete goes on from where it left. */
int hs__node_test(hs_plan p, void *const *arrays, int *done);
int hs__node_reverse_start(hs_plan p, hs_op op, void *const *arrays);
int hs__node_reverse_complete(hs_plan p, hs_op op, void *const *arrays);
void hs__node_destroy(hs_plan p);
void hs__node_describe(hs_plan p, char *buf, size_t len);
/* An on-node transport's ops table: the engine's operations around the transport's setup. */
#define HS_DEFINE_NODE_TRANSPORT(sym, setup_, name_, id_, summary_, options_, config_type, ...) \
  HS_TRANSPORT_OPS(sym, name_, id_, HS_OPS_FAILROUND, summary_, options_, config_type,          \
                   .setup = setup_, .start = hs__node_start, .complete = hs__node_complete,     \
                   .test = hs__node_test, .destroy = hs__node_destroy,                         \
                   .describe = hs__node_describe,                                              \
                   .reverse_start = hs__node_reverse_start,                                    \
                   .reverse_complete = hs__node_reverse_complete, __VA_ARGS__)
/* The mode word of the operation edge e has posted. */
uint32_t hs__node_mode(const hs_node_edge *e);
#endif
