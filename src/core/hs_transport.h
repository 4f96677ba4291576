/* What a transport may use: the plan as the core built it, the ops table it fills, typed
 * options, and the services it calls (errors, memory accounting, packing, the two-sided and
 * on-node engines, the datatype cache, node-shared memory, the analytic check, nested
 * plans). Not installed. What only the core uses is in hs_core.h; docs/design.md is the
 * contract both implement. */
#ifndef HS_TRANSPORT_H
#define HS_TRANSPORT_H

#include "haloswap.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define HS_MAX_OFFSETS 26
#define HS_MAX_OPTIONS 16
#define HS_OPT_KEY_LEN 32
#define HS_OPT_VAL_LEN 256 /* also the longest STRING option a transport can receive */

/* Message tags. Every plan owns a dup of the decomposition's communicator, so these never
 * collide with the application's or another plan's messages. */
enum {
  HS_TAG_DATA = 0,   /* halo data */
  HS_TAG_SETUP = 1,  /* plan-creation exchanges between neighbours */
  HS_TAG_SETUP2 = 2, /* a second plan-creation exchange in flight at the same time */
  HS_TAG_NOTIFY = 3, /* zero-byte notifications */
  HS_TAG_REVERSE = 4, /* reverse-exchange data (src/core/reverse.c) */
  HS_TAG_FAIL = 5,    /* zero bytes in place of a swap's data: this round failed here */
  HS_TAG_FAILTEXT = 6 /* the failure (hs_failure) that goes with a flag, to each out-peer */
};

/* A failure agreed among neighbours during a swap (docs/design.md, "Errors during a swap"). */
#define HS_FAIL_MSG 1024
typedef struct {
  int code;              /* HS_ERR_* */
  int origin;            /* the rank (of the plan's communicator) that detected it */
  char msg[HS_FAIL_MSG]; /* "rank R: ...", as every rank reports it */
} hs_failure;

/* A section of a message: one field's box, reduced to a copy program over bytes. */
typedef struct {
  hs_region box;          /* local indices of the box in the field */
  int offset_index;       /* index into the plan's offset list (sender's offset for sends) */
  int comp;               /* component of a HS_COMP_SLOWEST field; -1: every component */
  size_t msg_offset;      /* byte offset of this section in the peer's message */
  size_t bytes;
  /* copy program: byte offset from the field base, run length, up to three outer loops */
  ptrdiff_t base;         /* bytes from field data pointer to the box's first element */
  size_t run;             /* contiguous bytes per run */
  int n1, n2, n3;         /* outer loop counts (>= 1), n1 innermost */
  ptrdiff_t s1, s2, s3;   /* outer loop byte strides */
} hs_section;

typedef struct {
  int rank;               /* rank in plan->comm */
  size_t send_bytes, recv_bytes;
  int nsend, nrecv;
  hs_section *send, *recv;
  /* send[] and recv[] indices field by field (stable: offsets in order within a field). The
   * arrays' own order is the message layout; loops that copy sections whose order is free
   * go field by field, which stays inside one array at a time. */
  int *send_fm, *recv_fm;
} hs_peer;

typedef struct {
  hs_section src, dst;    /* same shape; src in the interior, dst in the halo */
} hs_selfcopy;

typedef struct {
  hs_type type;
  size_t elem;
  MPI_Datatype mpitype;
  void *data;
  int halo[HS_MAX_DIMS];         /* allocated halo below the interior (index 0) */
  int halo_hi[HS_MAX_DIMS];      /* allocated halo above the interior */
  ptrdiff_t stride[HS_MAX_DIMS]; /* strides in cells (a cell: `cell` bytes), every layout */
  int alloc[HS_MAX_DIMS];        /* allocated extent per axis (halo + n + halo_hi) */
  /* geometry per axis (src/core/geometry.c) */
  int n[HS_MAX_DIMS];            /* interior points: cells, or cells + 1 on a node axis */
  int cells[HS_MAX_DIMS];        /* cells on this rank (the decomposition's or the field's) */
  int dlo[HS_MAX_DIMS], dhi[HS_MAX_DIMS]; /* swap depth below / above */
  int node[HS_MAX_DIMS];         /* 1: node/face-centred axis */
  int owner[HS_MAX_DIMS];        /* hs_owner of the shared plane */
  int olo[HS_MAX_DIMS], ohi[HS_MAX_DIMS]; /* owned interior points [olo, ohi) on this rank */
  int gext[HS_MAX_DIMS];         /* global cells (periodic wrap), gofs: global index of 0 */
  int gofs[HS_MAX_DIMS];
  int ncomp;                     /* >= 1 */
  int fat;                       /* 1: components fastest, one cell = ncomp elements */
  size_t cell;                   /* bytes of one cell: elem or ncomp * elem */
  ptrdiff_t comp_bytes;          /* bytes between components (fat: elem) */
  hs_pack_fn pack;
  hs_unpack_fn unpack;
  void *ctx;
} hs_fieldinfo;

/* ---- typed transport options (src/core/options.c) */
typedef enum {
  HS_OPT_BOOL = 0,   /* "0" or "1" -> int */
  HS_OPT_INT = 1,    /* decimal in [min, max] -> int */
  HS_OPT_CHOICE = 2, /* one of choices -> int (its index) */
  HS_OPT_STRING = 3  /* free text (may be [bracketed] to hold commas) -> char[HS_OPT_VAL_LEN] */
} hs_opt_kind;

/* One option a transport accepts. The core parses and range-checks every value and writes
 * it at `offset` in the transport's config struct (p->config) before setup. */
typedef struct {
  const char *key;
  hs_opt_kind kind;
  const char *def;            /* default, as the text a user would write */
  int min, max;               /* HS_OPT_INT */
  const char *const *choices; /* HS_OPT_CHOICE: NULL-terminated */
  size_t offset;              /* offsetof(config struct, member) */
  const char *help;           /* one line */
} hs_option_spec;

/* Spec entries, one per line in a transport's table. */
#define HS_OPTION_BOOL(key, def, type, member, help) \
  {key, HS_OPT_BOOL, def, 0, 0, NULL, offsetof(type, member), help}
#define HS_OPTION_INT(key, def, lo, hi, type, member, help) \
  {key, HS_OPT_INT, def, lo, hi, NULL, offsetof(type, member), help}
#define HS_OPTION_CHOICE(key, def, choices, type, member, help) \
  {key, HS_OPT_CHOICE, def, 0, 0, choices, offsetof(type, member), help}
#define HS_OPTION_STRING(key, def, type, member, help) \
  {key, HS_OPT_STRING, def, 0, 0, NULL, offsetof(type, member), help}
#define HS_OPTIONS_END {NULL, HS_OPT_BOOL, NULL, 0, 0, NULL, 0, NULL}

typedef struct {
  char key[HS_OPT_KEY_LEN];
  char val[HS_OPT_VAL_LEN];
  const char *origin;     /* where the value came from, for messages */
} hs_option;

struct hs_transport_ops;

/* Options of the core, accepted by every transport (src/core/options.c). */
typedef struct {
  int staged; /* exchange axis by axis (src/core/staged.c) */
  int remap;  /* re-back the registered arrays with node-shared memory (src/core/remap.c) */
  int stream; /* halo writes with streaming stores: 0 auto, 1 off, 2 on (src/core/pack.c) */
} hs_core_config;

struct hs_plan_s {
  hs_decomp decomp;
  MPI_Comm comm;          /* dup of the decomposition's communicator, owned */
  int rank, size, ndims;
  int local[HS_MAX_DIMS];
  int depth[HS_MAX_DIMS];
  int axis_swapped[HS_MAX_DIMS]; /* some field has a nonzero depth on the axis */
  hs_stencil stencil;
  hs_oneway oneway;
  int oneway_axis;

  int nfields;
  hs_fieldinfo *fields;
  bool has_callbacks;     /* some field uses pack/unpack hooks (no datatypes possible) */

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
  uint32_t *region_mask;  /* per field: the halo sides swapped (src/core/regions.c); NULL: all */
  int send_to[HS_MAX_OFFSETS];   /* rank receiving my strip for offset i (or MPI_PROC_NULL) */
  int recv_from[HS_MAX_OFFSETS]; /* rank whose strip fills my halo on side i */

  int npeers;
  hs_peer *peers;
  int nself;
  hs_selfcopy *self;
  size_t self_bytes;
  char *self_bounce;      /* for self copies of callback fields */

  char transport_name[64];
  int noptions;
  hs_option options[HS_MAX_OPTIONS]; /* as given (env, name suffix, desc->options) */
  unsigned options_given; /* bit i: spec i of the transport was given a value */
  hs_core_config core;    /* the core's options (every transport) */
  unsigned core_given;    /* bit i: core option i was given a value */

  const struct hs_transport_ops *ops;
  void *config;           /* the transport's options, filled by the core (ops->config_size) */
  void *impl;             /* transport private data */
  bool in_progress;
  bool self_done;         /* hs_swap_test did the self copies of the swap in flight */
  bool reverse_in_progress;
  hs_op reverse_op;
  struct hs_reverse *reverse; /* the core's reverse engine, built on first use */
  hs_field *user_fields;  /* the fields as the caller described them (nested plans copy) */
  double t_start;         /* hs__wtime() when the swap in flight was started */

  hs_plan_stats stats;
  uint64_t core_bytes;    /* allocated by the core for this plan (geometry) */
  bool stream;            /* halo copies use streaming stores (core option stream) */
  uint64_t transport_bytes; /* maintained by hs__malloc/hs__free/hs__account only */
  struct hs_dtype_cache *dtypes; /* built on first use (src/core/dtypes.c) */
  /* Staged exchange (src/core/staged.c). A staged plan keeps the direct geometry (the
   * oracle, the reverse exchange and auto's checks use it) and runs its stages' plans. */
  struct hs_staged *staged;  /* the stages of a staged plan; NULL: direct */
  int stage_axis;            /* a stage's plan: its axis + 1 (faces +-axis only); 0: none */
  unsigned stage_wide;       /* a stage's plan: bit a = axis a was exchanged by an earlier
                                stage, so its sections include the halos filled there;
                                HS_STAGE_FULL: a sweep's stage, whose sections span the whole
                                swapped halo on every other axis */
  /* Remapped arrays (core option remap=1, src/core/remap.c): what this plan holds. */
  struct hs_remap *remap;
  /* Errors during a swap (src/core/fail.c). */
  bool failed;            /* a swap failed here: every later one is a failed round */
  hs_failure failure;     /* the first failure this rank saw on the plan */
  bool round_failed;      /* the round in progress carries failure flags, not data */
  bool round_flagged;     /* an in-peer flagged the round in progress (round_in: what) */
  hs_failure round_in;    /* the lowest-origin failure received in this round */
  void **round_arrays;    /* the arrays the swap in progress was started with (nfields) */
  bool round_given;       /* ... if start was given arrays (else the registered ones) */
  bool fail_given;        /* a failed round's caller passed per-swap arrays (nbr: which
                             collective its neighbours call) */
  char *fail_scratch;     /* where a failed round receives (hs__fail_scratch) */
  size_t fail_scratch_bytes;
};

/* Transport flags. */
enum {
  HS_OPS_DEFAULT = 1u << 0,   /* the transport HS_TRANSPORT_DEFAULT means (exactly one) */
  HS_OPS_DELEGATES = 1u << 1, /* swaps go to the plan ops->delegate returns; that plan does
                                 its own self copies, so the core does none for this one */
  HS_OPS_FAILROUND = 1u << 2, /* start/complete run failed rounds (hs__failed_round): flags
                                 instead of data; without it a swap error stays local */
};

typedef struct hs_transport_ops {
  const char *name;
  hs_transport_id id;     /* its public enum value, or HS_TRANSPORT_DEFAULT (0) for none */
  unsigned flags;
  const char *summary;    /* one line, for hs_transport_options and listings */
  const hs_option_spec *options; /* terminated by an entry with key NULL; may be NULL */
  size_t config_size;     /* bytes of the struct the option offsets point into */
  /* Optional: HS_OK if usable on comm, else a reason. Collective. */
  int (*query)(MPI_Comm comm, char *why, size_t n);
  int (*setup)(hs_plan p);
  int (*start)(hs_plan p, void *const *arrays);
  int (*complete)(hs_plan p, void *const *arrays);
  void (*destroy)(hs_plan p);
  /* Optional (HS_OPS_DELEGATES): the plan that moves the data. */
  hs_plan (*delegate)(hs_plan p);
  /* Optional. Appends what the transport decided at setup to hs_plan_describe's text. */
  void (*describe)(hs_plan p, char *buf, size_t len);
  /* Optional: progress a started swap without blocking; *done = 1 once every halo cell is
   * written and nothing is left for complete to wait for (hs_swap_test; complete is still
   * called and must then return at once). Without it the core reports 0 until complete. */
  int (*test)(hs_plan p, void *const *arrays, int *done);
  /* Optional: the transport's own reverse exchange. Without them the core runs the
   * reverse over its two-sided engine (src/core/reverse.c), for every transport. */
  int (*reverse_start)(hs_plan p, hs_op op, void *const *arrays);
  int (*reverse_complete)(hs_plan p, hs_op op, void *const *arrays);
} hs_transport_ops;

/* The ops table `sym` of a transport whose options fill a `config_type`; the last arguments
 * are its operations. */
#define HS_TRANSPORT_OPS(sym, name_, id_, flags_, summary_, options_, config_type, ...)      \
  const hs_transport_ops sym = {.name = name_,                                                \
                                .id = id_,                                                    \
                                .flags = flags_,                                              \
                                .summary = summary_,                                          \
                                .options = options_,                                          \
                                .config_size = sizeof(config_type),                           \
                                __VA_ARGS__}
/* Defines transport `sym`, whose functions are prefix_setup, _start, _complete, _destroy; the
 * last arguments add optional members (HS_OPS_NO_EXTRA: none). */
#define HS_DEFINE_TRANSPORT(sym, prefix, name_, id_, flags_, summary_, options_, config_type, \
                            ...)                                                              \
  HS_TRANSPORT_OPS(sym, name_, id_, flags_, summary_, options_, config_type,                  \
                   .setup = prefix##_setup, .start = prefix##_start,                          \
                   .complete = prefix##_complete, .destroy = prefix##_destroy, __VA_ARGS__)
#define HS_OPS_NO_EXTRA .query = NULL
typedef struct {
  char none;
} hs_no_config; /* for a transport without options */

/* The transport's private state: zeroed, accounted, stored in p->impl. */
void *hs__impl_new(hs_plan p, size_t bytes);

/* ---- errors */
int hs__error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int hs__mpi_error(int mpierr, const char *what);
/* Collective agreement: returns the same status on every rank of comm. If any rank's
 * `local` is not HS_OK, the message of the lowest failing rank becomes everyone's. */
int hs__agree(MPI_Comm comm, int local);
#define HS_MPI(call)                                         \
  do {                                                       \
    int hs_mpi_rc_ = (call);                                 \
    if (hs_mpi_rc_ != MPI_SUCCESS) return hs__mpi_error(hs_mpi_rc_, #call); \
  } while (0)

/* ---- errors during a swap (src/core/fail.c; docs/design.md, "Errors during a swap") */
/* True while the round in progress is a failed one: the transport takes part in every
 * exchange and collective of the round as usual, but sends a failure flag in place of each
 * message's data (its own channel: a tag, a header word, a counter bit), reads and writes no
 * field, and receives what its in-peers send into scratch memory. */
static inline bool hs__failed_round(const hs_plan p) { return p->round_failed; }
/* A transport saw in-peer `rank`'s flag in this round (rank in p->comm): the core receives
 * the failure that goes with it. Call once per flag, whatever the round. */
void hs__fail_seen(hs_plan p, int rank);
/* Scratch for a failed round's receives: at least `bytes`, kept by the plan (grown on demand;
 * NULL if out of memory). */
char *hs__fail_scratch(hs_plan p, size_t bytes);
/* ---- text (src/core/strbuf.c) */
/* Append printf output at *n in buf (len bytes), advancing *n even past len (truncation is
 * then visible as *n >= len). */
void hs__appendf(char *buf, size_t len, size_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* ---- registry (src/core/registry.c) */
/* The built transport of that name, or NULL. */
const hs_transport_ops *hs__transport_find(const char *name);
/* "a, b, c": the names of every built transport. */
void hs__transport_list(char *buf, size_t len);
/* Why a known transport called `name` is not in this build, or NULL (built, or unknown). */
const char *hs__transport_unbuilt(const char *name);

/* ---- field data */
static inline char *hs__field_ptr(const hs_plan p, void *const *arrays, int f) {
  if (arrays && arrays[f]) return (char *)arrays[f];
  return (char *)p->fields[f].data;
}
/* True if `arrays` selects exactly the registered fields (NULL, or every entry NULL or equal
 * to the registered pointer). The one place this is decided. */
bool hs__arrays_registered(const hs_plan p, void *const *arrays);

/* ---- packing engine (src/core/pack.c) */
void hs__pack_section(const hs_plan p, const hs_section *s, const char *field, char *buf);
void hs__unpack_section(const hs_plan p, const hs_section *s, char *field, const char *buf);
/* Pack every send section for peer into buf (send_bytes long). */
void hs__pack_sections(const hs_plan p, const hs_section *s, int n, void *const *arrays,
                       char *buf);
void hs__pack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays, char *buf);
void hs__unpack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays,
                     const char *buf);
void hs__self_copy(const hs_plan p, void *const *arrays);
/* Copy between two copy programs with the same bytes in the same order (a sender's strip in
 * its field, the receiver's halo box in its own field, possibly with other halo widths). */
void hs__copy_sections(const hs_plan p, const hs_section *src, const char *sfield,
                       const hs_section *dst, char *dfield);
/* Decide p->stream from the core option and the plan's halo bytes (after the geometry). */
void hs__stream_decide(hs_plan p);
/* A derived datatype that addresses the section relative to the field data pointer. Not
 * for callback fields. Caller frees. */
int hs__section_datatype(const hs_plan p, const hs_section *s, MPI_Datatype *out);

/* ---- datatype cache (src/core/dtypes.c): one per plan, shared by every transport */
typedef struct {
  MPI_Datatype *send, *recv; /* per peer index: all its sections, absolute addresses
                                (use MPI_BOTTOM); MPI_DATATYPE_NULL where it has none */
} hs_dtypes;
/* The datatypes for these arrays, built on first use and kept: the registered set for the
 * life of the plan, per-swap sets in a small least-recently-used cache (MONC's solver
 * passes the same source arrays every iteration). Not for plans with callback fields. */
int hs__dtypes_get(hs_plan p, void *const *arrays, const hs_dtypes **out);
/* The same types with one int ahead of each peer's data: sflag[k] in what goes to peer k,
 * rflag[k] in what comes from it (arrays that live as long as the plan; nbr's failure flag).
 * Peers without data keep MPI_BYTE. Built on first use and kept with the set's entry. */
int hs__dtypes_get_flagged(hs_plan p, void *const *arrays, const int *sflag, int *rflag,
                           const hs_dtypes **out);
void hs__dtypes_free(hs_plan p);

/* ---- two-sided engine (src/core/twosided.c): the default transport is this engine over
 * every peer; any transport may run it over a subset of peers (a hybrid: the off-node ones). */
typedef struct hs_twosided hs_twosided;
typedef struct {
  int dtype;      /* send/receive straight from the fields with derived datatypes */
  int persistent; /* persistent requests */
} hs_twosided_config;
/* peers: indices into p->peers, or NULL for all of them. Local (no collective calls). */
int hs__twosided_create(hs_plan p, const int *peers, int npeers, const hs_twosided_config *c,
                        hs_twosided **out);
int hs__twosided_start(hs_plan p, hs_twosided *e, void *const *arrays);
/* Progress without blocking: unpacks what has arrived; *done = 1 when every receive of the
 * swap is in the halos and every send has completed (complete then waits for nothing). */
int hs__twosided_test(hs_plan p, hs_twosided *e, void *const *arrays, int *done);
/* Block until every receive is in the halos and every send buffer is free. */
int hs__twosided_complete(hs_plan p, hs_twosided *e, void *const *arrays);
void hs__twosided_free(hs_plan p, hs_twosided *e);
/* Its options (dtype, persistent; p2p's), and so the defaults of every two-sided part. */
extern const hs_option_spec hs__twosided_options[];

/* ---- memory accounting (src/core/memory.c): every byte a transport holds for a plan */
void *hs__malloc(hs_plan p, size_t n);   /* counted in the plan's bytes_allocated */
void *hs__calloc(hs_plan p, size_t n);
void hs__free(hs_plan p, void *ptr);     /* NULL is fine; knows the size */
/* Zeroed arrays of n (at least 1) elements each, given as pairs (void **slot, size_t element
 * size) ending with NULL: HS_OK, or HS_ERR_NOMEM if any is missing (those made stay set for
 * the caller's destroy). */
int hs__calloc_arrays(hs_plan p, size_t n, ...);
/* Memory the transport holds by other means (windows, shared or symmetric segments). */
void hs__account(hs_plan p, int64_t bytes);

/* ---- node-shared field memory (hs_alloc, src/core/alloc.c): a core service any transport
 * may use to reach a neighbour's field directly. */
/* 1 if ptr lies inside an hs_alloc'd shared window of d: fills *id (the same on every rank
 * of the node for that allocation), *win and *offset (bytes from the start of this rank's
 * segment); 0 for any other memory (including hs_alloc's plain-memory fallback). */
int hs__shared_lookup(hs_decomp d, const void *ptr, uint64_t *id, MPI_Win *win,
                      size_t *offset);
/* Start of `rank`'s segment (rank in d's communicator) of allocation `id`, mapped in this
 * process, and its size; NULL if that rank does not share the allocation with this one. */
char *hs__shared_base(hs_decomp d, uint64_t id, int rank, size_t *bytes);

/* ---- options (src/core/options.c) */
/* Length of the next item of a list whose items are separated by any of seps; separators
 * inside [...] do not count. The one list splitter (options, auto's candidates). */
size_t hs__list_item(const char *s, const char *seps);
/* True if the user gave a value for key (rather than the default). */
bool hs__option_given(const hs_plan p, const char *key);

/* ---- plans (src/core/plan.c) */
/* A plan nested in p, the one way to make one (auto's candidates, a staged plan's stages):
 * p's geometry (depths, stencil, the fields as the caller described them, and unless it is a
 * stage the one-way direction and the combine order), transport `spec` with the options it
 * carries, or (spec NULL) p's transport with p's options as parsed, less the core's.
 * $HALOSWAP_OPTIONS, meant for the outer plan, is not applied again. stage_axis: a stage of a
 * staged exchange, axis + 1, whose geometry holds the faces of that axis only, its sections
 * widened on the axes in `wide` (src/core/staged.c); 0: not a stage. Collective. */
int hs__plan_nest(hs_plan p, const char *spec, int stage_axis, unsigned wide, hs_plan *out);
/* The plan has edges or corners to carry between two or more exchanged axes (else a staged
 * plan runs its transport directly). */
bool hs__staged_useful(const hs_plan p);

/* ---- analytic halo check (src/core/oracle.c): how a measuring transport validates a candidate */
/* Fill every field with a value computed from its global coordinates (halos: a sentinel),
 * saving the fields' contents first into a buffer the caller frees with hs__oracle_end. */
typedef struct hs_oracle hs_oracle;
int hs__oracle_begin(hs_plan p, hs_oracle **out);
/* HS_OK if every halo cell the plan writes holds the value of the cell it mirrors; else
 * HS_ERR_INTERNAL with the first wrong cell in the message. Local. */
int hs__oracle_check(hs_plan p, hs_oracle *o);
/* Ready for the next candidate: the sentinel back in every halo cell the plan writes (full
 * = 0: a swap writes nothing else), or the whole pattern again (full = 1: after a candidate
 * that failed, which may have written anywhere). */
void hs__oracle_reset(hs_plan p, hs_oracle *o, int full);
/* Put the fields' saved contents back and free o. */
void hs__oracle_end(hs_plan p, hs_oracle *o);

/* ---- the reverse's pull (src/core/reverse.c, hs_core.h): where an on-node transport says a
 * neighbour's halo boxes are */
typedef struct {
  const char *buf;                /* the sections' bytes packed in message order, or NULL: */
  char *const *fields;            /* the peer's fields mapped here, and */
  const hs_section *sec;          /* its halo boxes for me (its forward receive sections) */
} hs_pull_src;

/* ---- on-node engine (src/core/node.c): what transports that read their on-node neighbours'
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
   * halo boxes (1), in n->pub or the boxes; returns the mode word readers see. */
  uint32_t (*post)(hs_plan p, struct hs_node *n, void *const *arrays, int reverse);
  /* Forward: fill my halo from edge e, which has posted this operation. */
  int (*read)(hs_plan p, struct hs_node *n, int e, void *const *arrays);
  /* The reverse's source (hs_pull.source; ctx is the hs_node). */
  int (*source)(hs_plan p, void *ctx, int e, int j0, int j1, char *scratch, hs_pull_src *out);
  /* Optional: free the transport's per-edge state (also after a partial setup). */
  void (*release)(hs_plan p, struct hs_node *n);
  /* Optional: appended to the engine's part of hs_plan_describe. */
  void (*describe)(hs_plan p, struct hs_node *n, char *buf, size_t len);
} hs_node_ops;
typedef struct {
  int node_size;       /* virtual nodes of this many ranks; 0: the physical node */
  int barrier;         /* two node-wide barriers per swap instead of the counters */
  int noncontig;       /* alloc_shared_noncontig for the window */
  int boxes;           /* a box per on-node peer in my segment (max of send and receive bytes) */
  int hooks_by_message; /* a plan with pack/unpack hooks sends every peer by message */
  int pull_any_order;  /* the reverse's source reads sections where they lie (hs_pull) */
  size_t pub_bytes;    /* the transport's published area in the control block */
} hs_node_config;
typedef struct hs_node {
  int nedges, nremote;
  hs_node_edge *edges;    /* the on-node peers */
  char *seg;              /* my segment (my boxes at edges[i].my_box) */
  char *pub;              /* my published area */
  uint64_t seq;           /* operations so far, forward and reverse */
  struct hs_node_core *core; /* the engine's own state (src/core/node.c) */
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

double hs__wtime(void);
/* One round of a polling loop: yields the core after a few fruitless spins. */
void hs__relax(unsigned *spins);

#endif
