/* The reverse exchange's own state, shared by its two files: src/engines/reverse_steps.c (the
 * schedule: pieces and steps in the canonical order, built and destroyed) and
 * src/engines/reverse.c (running it). Private to src/engines. */
#ifndef HS_REVERSE_STATE_H
#define HS_REVERSE_STATE_H

#include "hs_core.h"

#define PIECE ((size_t)128 * 1024)
#define GROUP ((size_t)256 * 1024) /* pulled sections read at once (a system call for cma) */
#define WINDOW 4

/* ---- combining (src/geometry/combine.c) */
typedef hs_run_fn kernel; /* dst op= src, element by element, over n bytes */

/* ---- the schedule */
typedef struct {
  int peer;      /* index in p->peers */
  int j0, j1;    /* its sections [j0, j1) */
  size_t base;   /* offset of the peer's whole message in the buffer */
  size_t bytes;
  int turn;      /* its index among its peer's pieces */
} piece;

typedef struct {
  const hs_section *dst;  /* interior strip (a forward send section) */
  const hs_section *self; /* self: the halo box (a forward receive section); else NULL */
  int piece;              /* message: the incoming piece; else -1 */
  int edge, sec;          /* pulled: the edge and the index of dst in the peer's sections */
  int group;              /* pulled: sections read together from here (0: not a first) */
  size_t at;              /* message: offset of the section in ibuf */
} step;

struct hs_reverse {
  const hs_pull *pull;    /* NULL: every peer by message */
  int nin, nout, nsteps;
  piece *in, *out;
  MPI_Request *ireq, *oreq;
  int window, posted;     /* incoming pieces: receives in flight at most, and posted so far */
  size_t slot;            /* bytes of a receive slot (ibuf holds `window` of them) */
  int sent;               /* outgoing pieces packed and sent so far (in r->out order) */
  size_t oslot;           /* bytes of a send slot (oring holds WINDOW of them) */
  int user[WINDOW];       /* per send slot: the outgoing piece in it, -1: free */
  char *ibuf, *obuf, *oring, *bounce, *scratch;
  step *steps;
  int *last;              /* per edge: its last step (-1: none) */
  uint64_t *open;         /* per edge: the operation its posted counter was seen for */
  unsigned char *flagged; /* per peer: it flagged this round (its pieces hold no data) */
};

#endif
