/* Shared machinery of the MPI-3 RMA transports (rma-fence, rma-pscw, rma-passive): one window
 * per plan over one buffer with a slot for every neighbour, offsets exchanged at plan creation,
 * origin side by packing into one staging buffer or by the plan's derived datatypes straight
 * from the fields, and unpacking straight from the window. See docs/rma.md for the
 * synchronisation argument of every mode. */
#ifndef HS_RMA_COMMON_H
#define HS_RMA_COMMON_H

#include "hs_pack.h"
#include "hs_transport.h"

#include <stddef.h>

/* Every slot of the window, and every peer's part of the staging buffer, starts with a
 * header word: 0, or 1 when the sender's swap failed (docs/design.md, "Errors during a swap":
 * in a failed round only the header moves, and the reader reports the failure instead of
 * unpacking). Packed, it travels in the same put or get as the data. */
#define RMA_HDR 8

/* What the window holds: data arriving from neighbours (put-driven) or my own outgoing data
 * that neighbours read (get-driven). */
typedef enum { RMA_WIN_RECV = 0, RMA_WIN_SEND = 1 } rma_winkind;
typedef enum { RMA_WINDOW_AUTO = 0, RMA_WINDOW_ALLOCATE = 1, RMA_WINDOW_CREATE = 2 } rma_window;

/* The options every RMA mode has; each mode's config struct starts with this. */
typedef struct {
  int dtype;      /* origin side through derived datatypes instead of a staging buffer */
  int use_assert; /* pass MPI_MODE_* assertions where they are legal */
  int window;     /* rma_window */
} rma_options;

extern const char *const hs__rma_window_vals[];
/* The common option specs, for a mode whose config struct is `type` (member `common`). */
/* The epoch option of passive and PSCW (rma_open_fn below): early (0, the default) or naive;
 * help: what early does. */
extern const char *const hs__rma_epoch_vals[];
#define RMA_EPOCH_OPTION(type, help) \
  HS_OPTION_CHOICE("epoch", "early", hs__rma_epoch_vals, type, epoch, help)

#define RMA_COMMON_OPTIONS(type)                                                            \
  HS_OPTION_BOOL("dtype", "0", type, common.dtype,                                          \
                 "origin side through derived datatypes (0: pack into a staging buffer)"),  \
      HS_OPTION_BOOL("assert", "1", type, common.use_assert,                                \
                     "pass MPI_MODE_* assertions where they are legal"),                    \
      HS_OPTION_CHOICE("window", "auto", hs__rma_window_vals, type, common.window,          \
                       "MPI_Win_allocate, or MPI_Alloc_mem + MPI_Win_create (auto: what is " \
                       "safe here)")

/* How a mode uses the window. */
typedef struct {
  rma_winkind kind;
  int nbufs;   /* 1, or 2 for parity double buffering (passive) */
  int passive; /* locks will be used (else the window is created with no_locks) */
} rma_layout;

typedef struct {
  const char *mode; /* transport name, for messages */
  rma_options o;
  rma_layout l;

  MPI_Win win;
  int have_win;
  int mem_is_ours;  /* base came from MPI_Alloc_mem (else MPI_Win_allocate owns it) */
  char *base;       /* window memory */
  size_t buf_bytes; /* bytes of one buffer; the window holds l.nbufs of them */
  int separate;     /* memory model is MPI_WIN_SEPARATE (or unknown) */

  int nout, nin;    /* peers I send to / receive from (non-zero bytes) */
  int *out, *in;    /* peer indices */
  MPI_Aint *my_off;      /* per peer: offset of its slot in my window (buffer 0) */
  MPI_Aint *their_off;   /* per peer: offset of my slot in its window (buffer 0) */
  MPI_Aint *their_bytes; /* per peer: size of one buffer of its window */

  char *stage;      /* origin staging buffer (packed mode) */
  size_t *stage_off; /* per peer */
  uint64_t *hdr;    /* per peer: a header word put or got on its own (dtype mode, failed rounds) */

  unsigned long swap; /* swaps completed: selects the buffer with nbufs == 2 */
} rma_t;

static inline int rma_assert(const rma_t *t, int a) { return t->o.use_assert ? a : 0; }

/* Allocates t, the window and the lists, exchanges offsets with every neighbour. Collective;
 * agreed on every rank. */
int hs__rma_setup(hs_plan p, const rma_options *o, const rma_layout *l, rma_t **out);
/* Frees t and then the transport's state p->impl (whose member t is). */
void hs__rma_destroy(hs_plan p, rma_t *t);

/* Put-driven origin side: pack (or use datatypes) and put my data for every out-peer into
 * buffer `buf` of its window. */
int hs__rma_put_all(hs_plan p, rma_t *t, void *const *arrays, int buf);
/* Unpack the data of in-peer index k (a peer index) from buffer `buf` of my window (or report
 * its failure flag). */
void hs__rma_unpack_from_window(hs_plan p, rma_t *t, int k, void *const *arrays, int buf);

/* Get-driven: pack my outgoing data for every out-peer into my window. */
void hs__rma_pack_into_window(hs_plan p, rma_t *t, void *const *arrays);
/* Get-driven: get every in-peer's data (into the halos with dtype, else into staging). */
int hs__rma_get_all(hs_plan p, rma_t *t, void *const *arrays);
/* Get-driven, after the epoch closed: unpack what went through staging, report failure flags. */
void hs__rma_get_finish(hs_plan p, rma_t *t, void *const *arrays);

/* The epochs of passive and PSCW, opened by open(p->impl) once at plan creation and again at
 * the end of every swap (early), or at every start (naive). The end of a mode's setup, whose
 * status so far is rc: agreed, then (early) the first epochs opened and that agreed. */
typedef int (*rma_open_fn)(void *impl);
int hs__rma_setup_epochs(hs_plan p, int rc, int early, rma_open_fn open);
/* A start's epochs (naive; nothing to open when early). */
static inline int rma_start_epochs(hs_plan p, int early, rma_open_fn open) {
  return early ? HS_OK : open(p->impl);
}

/* Group of the given peers' ranks within p->comm (for PSCW). */
int hs__rma_group(hs_plan p, const int *peers, int n, MPI_Group *out);

#endif
