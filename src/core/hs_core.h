/* What only the core uses (the files of src/core and the Fortran modules' C halves): the
 * decomposition's internals, option parsing, the registry's lookups, validation and
 * geometry, the staged exchange, remapped arrays and the reverse engine. Not installed.
 * Transports include hs_transport.h only. */
#ifndef HS_CORE_H
#define HS_CORE_H

#include "hs_transport.h"

#define HS_MAX_HALO 65536 /* allocated halo width per side (validation bound) */

struct hs_decomp_s {
  MPI_Comm comm; /* Cartesian, owned */
  int ndims, rank, size;
  int global[HS_MAX_DIMS], procs[HS_MAX_DIMS], periodic[HS_MAX_DIMS];
  int coord[HS_MAX_DIMS], local[HS_MAX_DIMS], offset[HS_MAX_DIMS];
  int perm[HS_MAX_DIMS];  /* perm[k]: the grid axis of Cartesian dimension k */
  int place_block[HS_MAX_DIMS]; /* node block of HS_PLACE_NODE; all 0 for rank order */
  /* Box decomposition (hs_decomp_create_boxes): comm is a plain dup, procs and coord are 0,
   * box[r * 6 + a] / box[r * 6 + 3 + a] are rank r's lo / hi on axis a; NULL: Cartesian. */
  int *box;
};
/* Rank in d->comm of the process at grid coordinates c (x, y, z order). */
int hs__cart_rank(const hs_decomp d, const int c[HS_MAX_DIMS]);

/* ---- node-shared field memory, the core's side (src/core/alloc.c) */
/* Memory made node-shared by other means than hs_alloc (src/core/remap.c), recorded in the
 * same table so hs__shared_lookup / hs__shared_base find it as if hs_alloc'd: for such an
 * array hs__shared_lookup gives *win = MPI_WIN_NULL and the offset from the array's lowest
 * byte, and finds the newest record of a pointer first. */
/* 1 if [ptr, ptr + bytes) meets an hs_alloc'd shared window (of any decomposition). */
int hs__shared_in_window(const void *ptr, size_t bytes);
/* `count` consecutive ids, the first returned, the same on every rank of node. Collective. */
uint64_t hs__shared_new_ids(MPI_Comm node, int count);
/* Record [ptr, ptr + bytes) of d as shared under id: bases[i] is ranks[i]'s copy (rank in d's
 * communicator) mapped in this process, sizes[i] its bytes. Returns a handle for
 * hs__shared_remove (NULL: out of memory). The newest record of a pointer is found first. */
struct hs_shalloc *hs__shared_add(hs_decomp d, char *ptr, size_t bytes, uint64_t id, int n,
                                  const int *ranks, char *const *bases, const size_t *sizes);
void hs__shared_remove(struct hs_shalloc *h);

/* ---- remap (src/core/remap.c): core option remap=1, Linux memfd + pidfd_getfd */
/* At plan creation, before the transport's setup: re-back every registered array that is not
 * hs_alloc'd with a memfd mapped over its pages, map the node neighbours' arrays read-only
 * and record them with hs__shared_add. Collective; HS_ERR_UNAVAILABLE with the reason when
 * the system does not permit it. Nothing when the option is off. */
int hs__remap_setup(hs_plan p);
/* Undo what the plan holds (local): unmap the neighbours' arrays, and give pages no plan
 * uses any more back private anonymous memory with their contents, if still mapped as set. */
void hs__remap_free(hs_plan p);
void hs__remap_describe(const hs_plan p, char *buf, size_t len, size_t *n);

/* ---- registry (src/core/registry.c) */
const hs_transport_ops *hs__transport_default(void);
/* Name of a known transport id whether built or not, and why it is not built (NULL if it
 * is); NULL name for an id that is not a transport. */
const char *hs__transport_known(hs_transport_id id, const char **why_unbuilt);
/* The one answer for an unbuilt transport, by name or id: HS_ERR_UNAVAILABLE and the reason
 * ("<who>: transport <name> is not built into this haloswap: <why>"; who may be NULL). */
int hs__transport_unbuilt_error(const char *who, const char *name, const char *why);

/* ---- options (src/core/options.c) */
/* Parse "key=value,key=value" (a value may be [bracketed] to contain commas) into p's
 * option list; later values of a key replace earlier ones. */
int hs__options_add(hs_plan p, const char *list, const char *origin);
/* Check every given option against p->ops->options and fill p->config (defaults first). */
int hs__options_resolve(hs_plan p);
/* Write the defaults of an option table into cfg (the struct its offsets point into). */
int hs__options_defaults(const hs_plan p, const hs_option_spec *table, void *cfg);
/* True if key is an option of the core (accepted by every transport). */
bool hs__core_option(const char *key);
/* Append "key=value" for every option of the transport, defaults included. */
void hs__options_describe(const hs_plan p, char *buf, size_t len, size_t *n);

/* ---- staged exchange (src/core/staged.c): core option staged=1, any transport; and the
 * sweep (HS_ORDER_SWEEP), the same machinery with full transverse slabs in the sweep order,
 * forward and reverse */
#define HS_STAGE_FULL 0x100u
/* Instead of the transport's setup: build the stages (or, with no edge or corner to carry,
 * set the transport up directly). Collective. */
int hs__staged_setup(hs_plan p);
void hs__staged_free(hs_plan p);
int hs__staged_start(hs_plan p, void *const *arrays);
int hs__staged_test(hs_plan p, void *const *arrays, int *done);
int hs__staged_complete(hs_plan p, void *const *arrays);
/* A sweep's reverse: each stage's own reverse, in the sweep order. */
int hs__sweep_reverse_start(hs_plan p, hs_op op, void *const *arrays);
int hs__sweep_reverse_complete(hs_plan p, hs_op op, void *const *arrays);
/* A failed reverse round of every stage from `from` on, carrying p's failure. */
void hs__sweep_reverse_fail(hs_plan p, int from);
/* Appends the stages and their peers to hs_plan_describe's text. */
/* A failed round of every stage, carrying p's failure (src/core/fail.c's rule). */
void hs__staged_fail(hs_plan p);
/* fn on every stage's plan. */
void hs__staged_each(hs_plan p, void (*fn)(hs_plan));
void hs__staged_describe(hs_plan p, char *buf, size_t len, size_t *n);
uint64_t hs__staged_bytes(hs_plan p); /* bytes_allocated of the stages' plans */
/* HS_ORDER_SWEEP: the axes swept, in order (the given ones the plan exchanges, or the
 * exchanged axes x, y, z); returns how many. */
int hs__sweep_axes(const hs_plan p, int axes[HS_MAX_DIMS]);

/* ---- validation and geometry (src/core/validate.c, src/core/geometry.c) */
int hs__check_desc(const hs_decomp d, const hs_plan_desc *desc);
/* What a box decomposition's plan cannot do (after the options are parsed). */
int hs__check_boxes(const hs_plan p);
int hs__check_same(hs_plan p, const hs_plan_desc *desc);
/* HS_ORDER_SWEEP with given axes: every axis the plan exchanges is named (after the fields'
 * geometry is known). */
int hs__check_sweep(const hs_plan p);
/* Collective (agreed inside): every field's allocated shape on each axis kept whole is rank 0's. */
int hs__check_shapes(hs_plan p);
int hs__copy_fields(hs_plan p, const hs_plan_desc *desc);
int hs__build_geometry(hs_plan p);
/* Appends "order ...; " (the combine order, as the plan applies it) to hs_plan_describe's text. */
void hs__order_describe(const hs_plan p, char *buf, size_t len, size_t *n);
/* Global index of local index i on axis a of field f (wrapped on periodic axes). */
int hs__field_global_index(const hs_plan p, int f, int axis, int i);

/* ---- region sets (src/core/regions.c) */
/* Store the set's masks in p (or a nested plan's parent's, masks; both NULL: nothing) and
 * check them against the plan (after its options are parsed). Local. */
int hs__regions_apply(hs_plan p, const hs_region_set s, const uint32_t *masks);
/* Collective: every rank's plan has the same masks. */
int hs__regions_same(hs_plan p);
/* Field f moves data for offset o (fills the receiver's halo side -o). */
bool hs__region_flow(const hs_plan p, int f, const int o[HS_MAX_DIMS]);
void hs__regions_describe(const hs_plan p, char *buf, size_t len, size_t *n);

/* ---- reverse exchange (src/core/reverse.c) */
/* The core's own, over messages to every peer (p->reverse, built on first use). */
int hs__reverse_start(hs_plan p, hs_op op, void *const *arrays);
int hs__reverse_complete(hs_plan p, hs_op op, void *const *arrays);
void hs__reverse_free(hs_plan p);
/* A transport that reads on-node neighbours' memory may let each owner read those
 * neighbours' halo boxes itself (a pull): the core runs the steps in the canonical order and
 * the transport's counter protocol with the forward roles swapped (docs/design.md), the
 * transport says where the bytes are. Off-node peers go by message as above. */
typedef struct {
  int peer;                       /* index in p->peers */
  _Atomic uint64_t *posted;       /* its: the last operation whose data it has published */
  _Atomic uint64_t *consumed;     /* mine for it: the last operation of its data I have read */
  _Atomic uint64_t *its_consumed; /* its for me: the last operation of my data it has read */
  const uint64_t *failed;         /* its: the last operation that was a failed round there
                                     (written before posted) */
} hs_pull_edge;
typedef struct {
  MPI_Win win;                    /* MPI_Win_sync around the counters (in a passive epoch) */
  int any_order;                  /* source reads sections where they lie, in any order */
  int nedges;
  const hs_pull_edge *edges;
  void *ctx;
  /* Where edge e's halo boxes matching my forward send sections [j0, j1) are for this
   * operation (after its posted counter has reached it); scratch has room for them packed. */
  int (*source)(hs_plan p, void *ctx, int e, int j0, int j1, char *scratch, hs_pull_src *out);
} hs_pull;
/* Build *r unless it is built (pull NULL: every peer by message); on failure *r stays NULL.
 * Local. The transport keeps pull alive. */
int hs__reverse_create(hs_plan p, const hs_pull *pull, struct hs_reverse **r);
/* Post the pieces of the messages (never waits). A pulling transport first publishes its
 * halos and stores its posted counter = the operation's number. */
int hs__reverse_begin(hs_plan p, struct hs_reverse *r, void *const *arrays);
/* Combine everything in canonical order; with a pull, wait until every neighbour reading
 * this rank's halos has stored consumed >= seq. */
int hs__reverse_finish(hs_plan p, struct hs_reverse *r, hs_op op, void *const *arrays,
                       uint64_t seq);
void hs__reverse_destroy(hs_plan p, struct hs_reverse *r);

/* ---- errors during a swap, the core's side (src/core/fail.c) */
/* For the core (plan.c): record a failure found on this rank (code, hs_error_message()) as
 * the plan's if it has none yet; the plan is failed from now on. Returns code. */
int hs__fail_local(hs_plan p, int code);
/* Take the failure of the plan `from` (a delegating or staged plan's, for the plan it runs). */
void hs__fail_adopt(hs_plan p, const hs_plan from);
/* Send the plan's failure to each peer that gets data from this rank in a forward round
 * (send_bytes > 0), or in a reverse one (recv_bytes > 0); reqs and n receive the requests,
 * for hs__fail_texts_end. */
int hs__fail_texts_begin(hs_plan p, int reverse, MPI_Request **reqs, int *n);
void hs__fail_texts_end(MPI_Request *reqs, int n);
/* The error the plan's failure gives: its code and message (hs_error_message). */
int hs__fail_return(hs_plan p);
void hs__fail_free(hs_plan p);
/* A layer above the C API (Fortran, the drop-ins) found a per-swap mistake where a swap
 * begins (code, hs_error_message()): the plan fails and takes part in the round with flags,
 * as hs_swap_start does for its own checks. Returns the error every flagged rank returns. */
int hs__swap_fail(hs_plan p, int code);
/* The same for any round: the reverse (reverse != 0) or the forward one, with per-swap arrays
 * (given != 0) or the registered ones (the Python package's checks). */

/* ---- the Fortran modules' C halves (fortran/haloswap_f.c, fortran/haloswap_geometry_f.c) */
/* How both plan constructors end, given rc so far, pd (depth, stencil... set) and their
 * fields: the optional combine-order arguments into pd (order_offsets(orows = 3, norder) or
 * sweep_axes(nsweep), 1-based axes checked and named as the Fortran caller wrote them;
 * norder, nsweep -1: absent), agreement on rc, the plan. Frees fields. Collective. */
int hs__f_plan_finish(hs_decomp d, const char *who, int rc, hs_plan_desc *pd, hs_field *fields,
                      int nfields, const char *transport, int orows, int norder,
                      const int *offsets, int nsweep, const int *axes, hs_plan *out);

#endif
