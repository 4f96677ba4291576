/* What only the core uses (src/plan, src/geometry, src/memory, src/engines, src/decorators
 * and the Fortran modules' C halves): the plan's own state (struct hs_plan_core), the
 * decomposition's internals, option parsing, the registry's lookups, validation and
 * geometry, the staged exchange, remapped arrays and the reverse engine. Not installed.
 * Transports include hs_transport.h and the engine headers they opt into. */
#ifndef HS_CORE_H
#define HS_CORE_H

#include "hs_meta.h"
#include "hs_node.h"
#include "hs_pack.h"
#include "hs_transport.h"
#include "hs_twosided.h"

#define HS_MAX_HALO 65536 /* allocated halo width per side (validation bound) */
#define HS_MAX_OFFSETS 26
#define HS_MAX_OPTIONS 16
#define HS_OPT_KEY_LEN 32

/* A failure agreed among neighbours during a swap (docs/design.md, "Errors during a swap"). */
#define HS_FAIL_MSG 1024
typedef struct {
  int code;              /* HS_ERR_* */
  int origin;            /* the rank (of the plan's communicator) that detected it */
  char msg[HS_FAIL_MSG]; /* "rank R: ...", as every rank reports it */
} hs_failure;

typedef struct {
  char key[HS_OPT_KEY_LEN];
  char val[HS_OPT_VAL_LEN];
  const char *origin;     /* where the value came from, for messages */
} hs_option;

/* Options of the core, accepted by every transport (src/plan/options.c). */
typedef struct {
  int staged; /* exchange axis by axis (src/decorators/staged.c) */
  int remap;  /* re-back the registered arrays with node-shared memory (src/memory/remap.c) */
  int stream; /* halo writes with streaming stores: 0 auto, 1 off, 2 on (src/geometry/pack.c) */
  int stage_fields; /* staged=1: fields per group, each group through every stage; 0: all */
} hs_core_config;

/* The core's own state of a plan (p->core; a transport sees only struct hs_plan_s). */
struct hs_plan_core {
  int local[HS_MAX_DIMS];
  int depth[HS_MAX_DIMS];
  int axis_swapped[HS_MAX_DIMS]; /* some field has a nonzero depth on the axis */
  hs_stencil stencil;
  hs_oneway oneway;
  int oneway_axis;

  int noffsets;
  int offsets[HS_MAX_OFFSETS][HS_MAX_DIMS]; /* in the plan's combine order */
  /* Combine order (hs_order, docs/design.md "Reverse exchange"), validated and copied from the
   * description: the offsets as given (HS_ORDER_OFFSETS), the sweep axes as given (HS_ORDER_SWEEP;
   * nsweep 0 = the exchanged axes). A delegating transport passes them on to its plans. */
  hs_order order;
  int norder;
  int order_offsets[HS_MAX_OFFSETS][HS_MAX_DIMS];
  int nsweep;
  int sweep_axes[HS_MAX_DIMS];
  uint32_t *region_mask;  /* per field: the halo sides swapped (geometry/regions.c); NULL: all */
  int send_to[HS_MAX_OFFSETS];   /* rank receiving my strip for offset i (or MPI_PROC_NULL) */
  int recv_from[HS_MAX_OFFSETS]; /* rank whose strip fills my halo on side i */

  size_t self_bytes;
  char *self_bounce;      /* for self copies of callback fields */

  int noptions;
  hs_option options[HS_MAX_OPTIONS]; /* as given (env, name suffix, desc->options) */
  unsigned options_given; /* bit i: spec i of the transport was given a value */
  hs_core_config config;  /* the core's options (every transport) */
  unsigned config_given;  /* bit i: core option i was given a value */

  const struct hs_transport_ops *transport; /* the named transport (its options, query) */
  bool in_progress;
  bool self_done;         /* the self copies of the swap in flight are done (by hs_swap_test,
                           * or by the transport's start: hs__self_copies_taken) */
  bool reverse_in_progress;
  hs_op reverse_op;
  struct hs_reverse *reverse; /* the core's reverse engine, built on first use */
  hs_field *user_fields;  /* the fields as the caller described them (nested plans copy) */
  double t_start;         /* hs__wtime() when the swap in flight was started */

  hs_plan_stats stats;
  uint64_t core_bytes;    /* allocated by the core for this plan (geometry) */
  bool stream;            /* halo copies use streaming stores (core option stream) */
  uint64_t transport_bytes; /* maintained by hs__malloc/hs__free/hs__account only */
  struct hs_dtype_cache *dtypes; /* built on first use (src/geometry/dtypes.c) */
  /* Staged exchange (src/decorators/staged.c). A staged plan keeps the direct geometry (the
   * reverse exchange and auto's self-check use it) and runs its stages' plans. */
  int stage_axis;            /* a stage's plan: its axis + 1 (faces +-axis only); 0: none */
  unsigned stage_wide;       /* a stage's plan: bit a = axis a was exchanged by an earlier
                                stage, so its sections include the halos filled there */
  bool stage_full;           /* a sweep's stage: its sections span the whole swapped halo on
                                every other axis */
  /* Remapped arrays (core option remap=1, src/memory/remap.c): what this plan holds. */
  struct hs_remap *remap;
  /* Errors during a swap (src/plan/fail.c). */
  bool failed;            /* a swap failed here: every later one is a failed round */
  hs_failure failure;     /* the first failure this rank saw on the plan */
  bool round_flagged;     /* an in-peer flagged the round in progress (round_in: what) */
  hs_failure round_in;    /* the lowest-origin failure received in this round */
  void **round_arrays;    /* the arrays the swap in progress was started with (nfields) */
  bool round_given;       /* ... if start was given arrays (else the registered ones) */
  char *fail_scratch;     /* where a failed round receives (hs__fail_scratch) */
  size_t fail_scratch_bytes;
};

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
/* desc initialised (hs_decomp_desc_init) and given the first ndims entries of global, procs
 * (NULL: all 0) and periodic; the axes beyond ndims get global = pad, procs = periodic = 0. */
void hs__decomp_desc_axes(hs_decomp_desc *desc, int ndims, const int *global, const int *procs,
                          const int *periodic, int pad);
/* Collective: every rank gave the same decomposition arguments (src/geometry/decomp.c). */
int hs__decomp_check_same(MPI_Comm comm, const hs_decomp_desc *d, const int procs[HS_MAX_DIMS]);
/* Rank in d->comm of the process at grid coordinates c (x, y, z order). */
int hs__cart_rank(const hs_decomp d, const int c[HS_MAX_DIMS]);

/* ---- node-shared field memory, the core's side (src/memory/alloc.c) */
/* Memory made node-shared by other means than hs_alloc (src/memory/remap.c), recorded in the
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

/* ---- remap (src/memory/remap.c): core option remap=1, Linux memfd + pidfd_getfd */
/* At plan creation, before the transport's setup: re-back every registered array that is not
 * hs_alloc'd with a memfd mapped over its pages, map the node neighbours' arrays read-only
 * and record them with hs__shared_add. Collective; HS_ERR_UNAVAILABLE with the reason when
 * the system does not permit it. Nothing when the option is off. */
int hs__remap_setup(hs_plan p);
/* Undo what the plan holds (local): unmap the neighbours' arrays, and give pages no plan
 * uses any more back private anonymous memory with their contents, if still mapped as set. */
void hs__remap_free(hs_plan p);
void hs__remap_describe(const hs_plan p, char *buf, size_t len, size_t *n);

/* ---- registry (src/plan/registry.c) */
const hs_transport_ops *hs__transport_default(void);
/* (src/plan/options.c) The plan's transport from desc (transport_name, else transport), and its options: the
 * parent plan's as parsed (less the core's), $HALOSWAP_OPTIONS unless nested, the name's
 * suffix, desc->options; resolved into p->config. Local. */
int hs__transport_resolve(hs_plan p, const hs_plan_desc *desc, bool nested,
                          const hs_plan parent);
/* Name of a known transport id whether built or not, and why it is not built (NULL if it
 * is); NULL name for an id that is not a transport. */
const char *hs__transport_known(hs_transport_id id, const char **why_unbuilt);
/* The one answer for an unbuilt transport, by name or id: HS_ERR_UNAVAILABLE and the reason
 * ("<who>: transport <name> is not built into this haloswap: <why>"; who may be NULL). */
int hs__transport_unbuilt_error(const char *who, const char *name, const char *why);

/* (src/core/error.c) A zeroed block of size bytes, agreed over comm: when *rc is not HS_OK on
 * entry, or the block cannot be had here (*rc = HS_ERR_NOMEM with message nomem), NULL on
 * every rank with *rc the first rank's failure. Collective. */
void *hs__calloc_agreed(MPI_Comm comm, size_t size, const char *nomem, int *rc);

/* ---- options (src/plan/options.c) */
/* Parse "key=value,key=value" (a value may be [bracketed] to contain commas) into p's
 * option list; later values of a key replace earlier ones. */
int hs__options_add(hs_plan p, const char *list, const char *origin);
/* Check every given option against p->transport->options and fill p->config (defaults first). */
int hs__options_resolve(hs_plan p);
/* Write the defaults of an option table into cfg (the struct its offsets point into). */
int hs__options_defaults(const hs_plan p, const hs_option_spec *table, void *cfg);
/* True if key is an option of the core (accepted by every transport). */
bool hs__core_option(const char *key);
/* Append "key=value" for every option of the transport, defaults included. */
void hs__options_describe(const hs_plan p, char *buf, size_t len, size_t *n);

/* ---- staged exchange (src/decorators/staged.c): core option staged=1, any transport; and the
 * sweep (HS_ORDER_SWEEP), the same machinery with full transverse slabs in the sweep order,
 * forward and reverse */
/* Its setup is the plan's: the transport's, or a decorator's around it: with staged=1 or
 * HS_ORDER_SWEEP the plan's ops become the staged exchange's, whose stages are plans of the
 * transport (or, with no edge or corner to carry, the transport is set up directly).
 * Collective. Called through the table, so the core's plans do not call the stages' code. */
extern const hs_transport_ops hs__decorator;
/* The plan runs stages (staged=1 or a sweep, with something to carry). */
bool hs__plan_staged(const hs_plan p);

/* ---- validation and geometry (src/plan/validate.c, src/geometry/geometry.c) */
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
/* The offsets (src/geometry/order.c): those some field has points to move along (canonical
 * order), a stage's faces only, and with HS_ORDER_OFFSETS the given order. */
void hs__enumerate_offsets(hs_plan p);
void hs__keep_stage_offsets(hs_plan p);
int hs__apply_order(hs_plan p);
/* Points of field fi received on halo side `side` (-1 below, +1 above) of axis a (geometry.c
 * sizes halos with it too). */
int hs__side_count(const hs_plan p, const hs_fieldinfo *fi, int a, int side);
/* Appends "order ...; " (the combine order, as the plan applies it) to hs_plan_describe's text. */
void hs__order_describe(const hs_plan p, char *buf, size_t len, size_t *n);
/* HS_ORDER_SWEEP: the axes swept, in order (the given ones the plan exchanges, or the
 * exchanged axes x, y, z); returns how many. */
int hs__sweep_axes(const hs_plan p, int axes[HS_MAX_DIMS]);

/* ---- region sets (src/geometry/regions.c) */
/* Store the set's masks in p (or a nested plan's parent's, masks; both NULL: nothing) and
 * check them against the plan (after its options are parsed). Local. */
int hs__regions_apply(hs_plan p, const hs_region_set s, const uint32_t *masks);
/* Collective: every rank's plan has the same masks. */
int hs__regions_same(hs_plan p);
/* Field f moves data for offset o (fills the receiver's halo side -o). */
bool hs__region_flow(const hs_plan p, int f, const int o[HS_MAX_DIMS]);
void hs__regions_describe(const hs_plan p, char *buf, size_t len, size_t *n);

/* ---- the reverse's combine (src/geometry/combine.c): dst op= src */
/* The kernel of a type and op (HS_OP_REPLACE: a copy). */
hs_run_fn hs__kernel_of(hs_type t, hs_op op);
/* Box src of sfield into box dst of dfield (the same elements in the same order). */
void hs__combine_boxes(const hs_section *src, const char *sfield, const hs_section *dst,
                       char *dfield, hs_run_fn k);
/* Packed bytes (s->bytes, section order) into section s of the field; with hooks through
 * bounce (s->bytes). */
void hs__combine_in(const hs_plan p, const hs_section *s, char *field, const char *buf,
                    hs_run_fn k, char *bounce);
/* Self contribution: halo box src into interior strip dst of the same field (bounce: both
 * sections' bytes, for hooks). */
void hs__combine_self(const hs_plan p, const hs_section *dst, const hs_section *src,
                      char *field, hs_run_fn k, char *bounce);

/* ---- reverse exchange (src/engines/reverse.c) */
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
/* The pull's counters (src/engines/node_protocol.c, with the forward's): wait until edge e
 * has posted operation seq (*flagged: as a failed round); release its halos after the last
 * read; wait until every owner reading this rank's halos has released them. */
int hs__pull_open(const hs_pull *pull, int e, uint64_t seq, bool *flagged);
void hs__pull_release(const hs_pull *pull, int e, uint64_t seq);
int hs__pull_wait_readers(const hs_plan p, const hs_pull *pull, uint64_t seq);
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

/* ---- plans (src/plan/round.c) */
/* The plans p runs (a decorator's inner plans: a staged plan's stage per axis for each group
 * of fields, stage_fields): at most HS_MAX_INNER; returns how many. */
#define HS_MAX_STAGE_GROUPS 64
#define HS_MAX_INNER (HS_MAX_DIMS * HS_MAX_STAGE_GROUPS)
int hs__plan_inner(hs_plan p, hs_plan plans[HS_MAX_INNER]);
/* The plan's reverse: the transport's own (ops->reverse_*), else the core's. */
int hs__plan_reverse_start(hs_plan p, hs_op op, void *const *arrays);
int hs__plan_reverse_complete(hs_plan p, hs_op op, void *const *arrays);

/* ---- errors during a swap, the core's side (src/plan/fail.c) */
/* For the core (plan.c, round.c): record a failure found on this rank (code, hs_error_message()) as
 * the plan's if it has none yet; the plan is failed from now on. Returns code. */
int hs__fail_record(hs_plan p, int code);
/* Send the plan's failure to each peer that gets data from this rank in a forward round
 * (send_bytes > 0), or in a reverse one (recv_bytes > 0); reqs and n receive the requests,
 * for hs__fail_texts_end. */
int hs__fail_texts_begin(hs_plan p, int reverse, MPI_Request **reqs, int *n);
void hs__fail_texts_end(MPI_Request *reqs, int n);
/* The error the plan's failure gives: its code and message (hs_error_message). */
int hs__fail_error(hs_plan p);
void hs__fail_free(hs_plan p);
/* The rounds a plan's calls end in when they cannot run one (src/plan/round.c): this rank
 * found an error (code, hs_error_message()) where a round begins (hs__round_fail_here; also
 * the Fortran module's and the drop-ins' per-swap checks), a complete or
 * test found no round started (hs__round_misuse: the plan stays usable), a round of a plan
 * that failed earlier (hs__round_after_failure: HS_ERR_STATE). Each takes part in the round
 * with flags, so no neighbour waits; reverse: the reverse's round; given: per-swap arrays. */
int hs__round_fail_here(hs_plan p, int code, bool reverse, bool given);
int hs__round_misuse(hs_plan p, int code, bool reverse, bool given);
int hs__round_after_failure(hs_plan p, const char *who, bool reverse, bool given);
/* After the transport finished a round (rc): an in-peer's flag fails the plan here too. */
int hs__round_result(hs_plan p, int rc);

/* ---- the Fortran modules' C halves (fortran/haloswap_f.c, fortran/haloswap_geometry_f.c) */
/* How both plan constructors end, given rc so far, pd (depth, stencil... set) and their
 * fields: the optional combine-order arguments into pd (order_offsets(orows = 3, norder) or
 * sweep_axes(nsweep), 1-based axes checked and named as the Fortran caller wrote them;
 * norder, nsweep -1: absent), agreement on rc, the plan. Frees fields. Collective. */
int hs__f_plan_finish(hs_decomp d, const char *who, int rc, hs_plan_desc *pd, hs_field *fields,
                      int nfields, const char *transport, int orows, int norder,
                      const int *offsets, int nsweep, const int *axes, hs_plan *out);

#endif
