/* Shared machinery of the MPI-3 RMA transports (rma-fence, rma-pscw, rma-passive): one window
 * per plan over one buffer with a slot for every neighbour, offsets exchanged at plan creation,
 * origin side by packing into one staging buffer or by derived datatypes straight from the
 * fields, and unpacking straight from the window. See docs/rma.md for the synchronisation
 * argument of every mode. */
#ifndef HS_RMA_COMMON_H
#define HS_RMA_COMMON_H

#include "hs_internal.h"

/* What the window holds: data arriving from neighbours (put-driven) or my own outgoing data
 * that neighbours read (get-driven). */
typedef enum { RMA_WIN_RECV = 0, RMA_WIN_SEND = 1 } rma_winkind;

typedef struct {
  const char *mode; /* transport name, for messages */
  rma_winkind kind;
  int nbufs;        /* 1, or 2 for parity double buffering (passive) */
  int dtype;        /* origin side through derived datatypes instead of a staging buffer */
  int use_assert;   /* pass MPI_MODE_* assertions where they are legal */
  int passive;      /* locks will be used (else the window is created with no_locks) */
  int window;       /* 0 auto, 1 MPI_Win_allocate, 2 MPI_Alloc_mem + MPI_Win_create */

  MPI_Win win;
  int have_win;
  int mem_is_ours;  /* base came from MPI_Alloc_mem (else MPI_Win_allocate owns it) */
  char *base;       /* window memory */
  size_t half;      /* bytes of one buffer; the window holds nbufs of them */
  int separate;     /* memory model is MPI_WIN_SEPARATE (or unknown) */

  int nout, nin;    /* peers I send to / receive from (non-zero bytes) */
  int *out, *in;    /* peer indices */
  MPI_Aint *my_off;     /* per peer: offset of its slot in my window (buffer 0) */
  MPI_Aint *their_off;  /* per peer: offset of my slot in its window (buffer 0) */
  MPI_Aint *their_half; /* per peer: size of one buffer of its window */

  char *stage;      /* origin staging buffer (packed mode, or callback fields in dtype mode) */
  size_t stage_bytes;
  size_t *stage_off; /* per peer */

  MPI_Datatype *otype;  /* per peer: origin datatype with absolute addresses (dtype mode) */
  char **otype_ptrs;    /* field pointers the datatypes were built for */
  int otype_valid;

  unsigned long swap;   /* swaps completed: selects the buffer with nbufs == 2 */
} rma_t;

static inline int rma_assert(const rma_t *t, int a) { return t->use_assert ? a : 0; }

/* Parse a choice option: *out = index of the value in vals (default def). */
int hs__rma_opt_choice(hs_plan p, const char *key, const char *const *vals, int def, int *out);
/* Parse a 0/1 option. */
int hs__rma_opt_bool(hs_plan p, const char *key, int def, int *out);
/* The options every RMA transport reads: dtype, assert, window. */
int hs__rma_common_opts(hs_plan p, rma_t *cfg);

/* Allocates t, the window and the lists, exchanges offsets with every neighbour. Collective;
 * agreed on every rank. t->dtype, use_assert must be set by the caller through *cfg. */
int hs__rma_setup(hs_plan p, const rma_t *cfg, rma_t **out);
void hs__rma_destroy(hs_plan p, rma_t *t);

/* Put-driven origin side: pack (or build datatypes) and put my data for every out-peer into
 * buffer `buf` of its window. */
int hs__rma_put_all(hs_plan p, rma_t *t, void *const *arrays, int buf);
/* Unpack the data of in-peer index k (a peer index) from buffer `buf` of my window. */
void hs__rma_unpack_from_window(hs_plan p, rma_t *t, int k, void *const *arrays, int buf);

/* Get-driven: pack my outgoing data for every out-peer into my window. */
void hs__rma_pack_into_window(hs_plan p, rma_t *t, void *const *arrays);
/* Get-driven: get every in-peer's data (into the halos with dtype, else into staging). */
int hs__rma_get_all(hs_plan p, rma_t *t, void *const *arrays);
/* Get-driven, after the epoch closed: unpack what went through staging. */
void hs__rma_get_finish(hs_plan p, rma_t *t, void *const *arrays);

/* Group of the given peers' ranks within p->comm (for PSCW). */
int hs__rma_group(hs_plan p, const int *peers, int n, MPI_Group *out);

#endif
