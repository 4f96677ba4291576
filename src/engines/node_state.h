/* The on-node engine's own state, shared by its two files: src/engines/node.c (the node
 * split, the segment, the section exchange, destroy) and src/engines/node_protocol.c (the
 * posted / consumed protocol, forward and the reverse's pull). Private to src/engines. */
#ifndef HS_NODE_STATE_H
#define HS_NODE_STATE_H

#include "hs_core.h"

#include <stdatomic.h>

#define LINE 64

/* Control block at the start of every rank's segment. Counters sit on their own cache
 * lines: `posted` is written by the owner and polled by its readers; consumed[j] is written
 * by the owner and polled by node rank j. */
typedef struct {
  _Atomic uint64_t posted; /* the last operation whose data this rank has published */
  char pad0[LINE - sizeof(uint64_t)];
  uint64_t failed;         /* the last operation that was a failed round here (no data) */
  uint32_t mode;           /* the transport's word for that operation */
  uint32_t chunks;         /* a chunked forward's chunks (written with mode) */
  char pad1[LINE - sizeof(uint64_t) - 2 * sizeof(uint32_t)];
  /* A chunked forward s: s * CHUNK_SCALE + the chunks published so far (before posted). */
  _Atomic uint64_t progress;
  char pad2[LINE - sizeof(uint64_t)];
  /* followed by: consumed[nsize] (one line each), the transport's published area */
} node_ctl;

#define CHUNK_SCALE 4096 /* > HS_MAX_FIELDS: chunks are at most one per field */

/* The engine's own state; the transport sees the hs_node head. */
struct hs_node_core {
  const hs_node_ops *ops;
  MPI_Comm node;
  int nrank, nsize;
  MPI_Win win;
  int locked, barrier;
  size_t seg_bytes;
  int *remote_peers;      /* the off-node peers (indices), by message */
  hs_twosided *remote;
  hs_pull_edge *pedge;
  hs_pull pull;
  struct hs_reverse *rev; /* built on first use */
  /* The swap in flight, where test left it for complete (or the next test). */
  int left;               /* on-node edges not read yet */
  int remote_done;        /* every off-node message is in the halos, every send complete */
  int remote_complete;    /* hs__twosided_complete ran (the sends too): once per swap */
  int err;                /* the first failed read */
  int boxed;              /* this forward's data lies in my boxes only (HS_NODE_BOXED) */
  uint64_t owed;          /* an operation whose readers complete did not wait for (boxed) */
  MPI_Request bar;        /* sync=barrier: the barrier in flight (MPI_Ibarrier) */
  int bstep;              /* sync=barrier: 0 posted-barrier, 1 reads, 2 consumed-barrier, 3 done */
  int lockstep;           /* hs_node_config.lockstep */
  int lockstep_rest;      /* forwards left that do not wait for their neighbours' chunks (a
                           * wait ran out of time: they were not publishing alongside) */
};

static inline node_ctl *ctl_of(char *seg) { return (node_ctl *)seg; }
static inline _Atomic uint64_t *consumed_of(char *seg, int j) {
  return (_Atomic uint64_t *)(seg + sizeof(node_ctl) + (size_t)j * LINE);
}

/* Publish operation n->seq to my on-node readers: the forward's strips (reverse = 0) or the
 * reverse's halo boxes (src/engines/node_protocol.c). */
int hs__node_post(hs_plan p, hs_node *n, void *const *arrays, int reverse);
/* Wait for the readers of a boxed operation complete left (HS_NODE_BOXED), if any. */
int hs__node_settle(hs_plan p, hs_node *n);

#endif
