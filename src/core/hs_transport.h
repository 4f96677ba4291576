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
  HS_TAG_REVERSE = 4, /* reverse-exchange data (src/engines/reverse.c) */
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
  /* geometry per axis (src/geometry/geometry.c) */
  int n[HS_MAX_DIMS];            /* interior points: cells, or cells + 1 on a node axis */
  int cells[HS_MAX_DIMS];        /* cells on this rank (the decomposition's or the field's) */
  int depth_lo[HS_MAX_DIMS], depth_hi[HS_MAX_DIMS]; /* swap depth below / above */
  int node[HS_MAX_DIMS];         /* 1: node/face-centred axis */
  int owner[HS_MAX_DIMS];        /* hs_owner of the shared plane */
  int own_lo[HS_MAX_DIMS], own_hi[HS_MAX_DIMS]; /* owned interior points [own_lo, own_hi) */
  int global_cells[HS_MAX_DIMS];  /* global cells on the axis (periodic wrap) */
  int global_origin[HS_MAX_DIMS]; /* global index of local index 0 */
  int ncomp;                     /* >= 1 */
  int comp_fastest;              /* 1: components fastest, one cell = ncomp elements */
  size_t cell;                   /* bytes of one cell: elem or ncomp * elem */
  ptrdiff_t comp_bytes;          /* bytes between components (comp_fastest: elem) */
  hs_pack_fn pack;
  hs_unpack_fn unpack;
  void *ctx;
} hs_fieldinfo;

/* ---- typed transport options (src/plan/options.c) */
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

/* Options of the core, accepted by every transport (src/plan/options.c). */
typedef struct {
  int staged; /* exchange axis by axis (src/decorators/staged.c) */
  int remap;  /* re-back the registered arrays with node-shared memory (src/memory/remap.c) */
  int stream; /* halo writes with streaming stores: 0 auto, 1 off, 2 on (src/geometry/pack.c) */
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
  uint32_t *region_mask;  /* per field: the halo sides swapped (src/geometry/regions.c); NULL: all */
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

  const struct hs_transport_ops *transport; /* the named transport (its options, query) */
  const struct hs_transport_ops *ops; /* what the core calls: the transport, or a decorator
                                         wrapping it (src/decorators/staged.c) */
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
  struct hs_dtype_cache *dtypes; /* built on first use (src/geometry/dtypes.c) */
  /* Staged exchange (src/decorators/staged.c). A staged plan keeps the direct geometry (the
   * oracle, the reverse exchange and auto's checks use it) and runs its stages' plans. */
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
  HS_OPS_DELEGATES = 1u << 1, /* a decorator: swaps go to the plans ops->inner lists, which do
                                 their own self copies, so the core does none for this one */
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
  /* Optional (HS_OPS_DELEGATES): the plans that move the data (auto's choice, the stages),
   * at most max into plans; returns how many. The first names hs_plan_selected_transport;
   * the statistics' bytes_allocated counts them all. */
  int (*inner)(hs_plan p, hs_plan *plans, int max);
  /* Optional (HS_OPS_DELEGATES): run a failed round (reverse: of the reverse) in the inner
   * plans, handing them p's failure; false: the core runs it on p as for any transport. */
  bool (*fail_inner)(hs_plan p, int reverse);
  /* Optional: replaces the peers in hs_plan_describe's text (a staged plan's stages). */
  void (*describe_exchange)(hs_plan p, char *buf, size_t len, size_t *n);
  /* Optional. Appends what the transport decided at setup to hs_plan_describe's text. */
  void (*describe)(hs_plan p, char *buf, size_t len);
  /* Optional: progress a started swap without blocking; *done = 1 once every halo cell is
   * written and nothing is left for complete to wait for (hs_swap_test; complete is still
   * called and must then return at once). Without it the core reports 0 until complete. */
  int (*test)(hs_plan p, void *const *arrays, int *done);
  /* Optional: the transport's own reverse exchange. Without them the core runs the
   * reverse over its two-sided engine (src/engines/reverse.c), for every transport. */
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

/* ---- errors during a swap (src/plan/fail.c; docs/design.md, "Errors during a swap") */
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
/* Take the failure of the plan `from` (a delegating or staged plan's, for the plan it runs). */
void hs__fail_adopt(hs_plan p, const hs_plan from);
/* ---- text (src/core/strbuf.c) */
/* Append printf output at *n in buf (len bytes), advancing *n even past len (truncation is
 * then visible as *n >= len). */
void hs__appendf(char *buf, size_t len, size_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* ---- field data */
static inline char *hs__field_ptr(const hs_plan p, void *const *arrays, int f) {
  if (arrays && arrays[f]) return (char *)arrays[f];
  return (char *)p->fields[f].data;
}
/* True if `arrays` selects exactly the registered fields (NULL, or every entry NULL or equal
 * to the registered pointer). The one place this is decided. */
bool hs__arrays_registered(const hs_plan p, void *const *arrays);

/* ---- memory accounting (src/memory/memory.c): every byte a transport holds for a plan */
void *hs__malloc(hs_plan p, size_t n);   /* counted in the plan's bytes_allocated */
void *hs__calloc(hs_plan p, size_t n);
void hs__free(hs_plan p, void *ptr);     /* NULL is fine; knows the size */
/* Zeroed arrays of n (at least 1) elements each, given as pairs (void **slot, size_t element
 * size) ending with NULL: HS_OK, or HS_ERR_NOMEM if any is missing (those made stay set for
 * the caller's destroy). */
int hs__calloc_arrays(hs_plan p, size_t n, ...);
/* Memory the transport holds by other means (windows, shared or symmetric segments). */
void hs__account(hs_plan p, int64_t bytes);

/* ---- options (src/plan/options.c) */
/* True if the user gave a value for key (rather than the default). */
bool hs__option_given(const hs_plan p, const char *key);

double hs__wtime(void);
/* One round of a polling loop: yields the core after a few fruitless spins. */
void hs__relax(unsigned *spins);

#endif
