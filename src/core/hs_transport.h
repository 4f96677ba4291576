/* The transport contract (docs/design.md, "The ops table"): the ops table, a read-only view of
 * the plan (peers, sections, fields), typed options, the failed-round calls, the services every
 * transport needs. Opt-in engines: hs_twosided.h, hs_node.h, hs_pack.h, hs_meta.h; the core's
 * own: hs_core.h. Not installed. */
#ifndef HS_TRANSPORT_H
#define HS_TRANSPORT_H

#include "haloswap.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Message tags on the plan's own communicator: halo data, plan-creation exchanges (two may be
 * in flight), zero-byte notices; 4 to 6 are the engines' (hs_twosided.h). */
enum { HS_TAG_DATA = 0, HS_TAG_SETUP = 1, HS_TAG_SETUP2 = 2, HS_TAG_NOTIFY = 3 };

/* A section of a message: one field's box, reduced to a copy program over bytes. */
typedef struct {
  hs_region box;          /* local indices of the box in the field */
  int offset_index;       /* index into the plan's offset list (sender's offset for sends) */
  int comp;               /* component of a HS_COMP_SLOWEST field; -1: every component */
  size_t msg_offset, bytes; /* where in the peer's message, and how much */
  ptrdiff_t base;         /* copy program: bytes from field data pointer to the first element, */
  size_t run;             /* contiguous bytes per run, up to three outer loops: */
  int n1, n2, n3;         /* outer loop counts (>= 1), n1 innermost */
  ptrdiff_t s1, s2, s3;   /* outer loop byte strides */
} hs_section;

typedef struct {
  int rank;               /* rank in plan->comm */
  size_t send_bytes, recv_bytes; int nsend, nrecv;
  hs_section *send, *recv; /* in message order */
  /* send[] and recv[] indices field by field (stable: offsets in order within a field), for
   * loops whose order is free: they stay inside one array at a time. */
  int *send_fm, *recv_fm;
} hs_peer;

typedef struct { hs_section src, dst; } hs_selfcopy; /* src in the interior, dst in the halo */

typedef struct { /* a field as the core resolved it (src/geometry/field.c) */
  hs_type type;
  size_t elem;                   /* bytes of one element, of MPI type mpitype */
  MPI_Datatype mpitype;
  void *data;                    /* the registered array */
  int halo[HS_MAX_DIMS], halo_hi[HS_MAX_DIMS]; /* allocated halo below / above the interior */
  ptrdiff_t stride[HS_MAX_DIMS]; /* strides in cells (a cell: `cell` bytes), every layout */
  int alloc[HS_MAX_DIMS];        /* allocated extent per axis (halo + n + halo_hi) */
  int n[HS_MAX_DIMS];            /* interior points: cells, or cells + 1 on a node axis */
  int cells[HS_MAX_DIMS];        /* cells on this rank (the decomposition's or the field's) */
  int depth_lo[HS_MAX_DIMS], depth_hi[HS_MAX_DIMS]; /* swap depth below / above */
  int node[HS_MAX_DIMS], owner[HS_MAX_DIMS]; /* 1: node/face-centred axis; hs_owner of its plane */
  int own_lo[HS_MAX_DIMS], own_hi[HS_MAX_DIMS]; /* owned interior points [own_lo, own_hi) */
  int global_cells[HS_MAX_DIMS]; /* global cells on the axis (periodic wrap) */
  int global_origin[HS_MAX_DIMS]; /* global index of local index 0 */
  int ncomp, comp_fastest;       /* components (>= 1); 1: fastest, a cell = ncomp elements */
  size_t cell;                   /* bytes of one cell: elem or ncomp * elem */
  ptrdiff_t comp_bytes;          /* bytes between components (comp_fastest: elem) */
  hs_pack_fn pack; hs_unpack_fn unpack; void *ctx; /* the caller's hooks, or NULL */
} hs_fieldinfo;

/* ---- typed transport options (src/plan/options.c). The core parses and range-checks every
 * value and writes it at `offset` in the transport's config struct (p->config) before setup:
 * BOOL "0"/"1" and INT in [min, max] as int, CHOICE as the index of one of choices, STRING
 * (may be [bracketed] to hold commas) as char[HS_OPT_VAL_LEN]. */
#define HS_OPT_VAL_LEN 256
typedef enum { HS_OPT_BOOL = 0, HS_OPT_INT = 1, HS_OPT_CHOICE = 2, HS_OPT_STRING = 3 } hs_opt_kind;
typedef struct {
  const char *key;
  hs_opt_kind kind;
  const char *def;            /* default, as the text a user would write */
  int min, max; const char *const *choices; /* INT: the range; CHOICE: NULL-terminated */
  size_t offset;              /* offsetof(config struct, member) */
  const char *help;           /* one line */
} hs_option_spec;
/* Spec entries, one per line in a transport's table: key, default, (range or choices,) the
 * config struct's type and member, help. */
#define HS_OPTION_(k, kind, d, lo, hi, ch, t, m, h) {k, kind, d, lo, hi, ch, offsetof(t, m), h}
#define HS_OPTION_BOOL(k, d, t, m, h) HS_OPTION_(k, HS_OPT_BOOL, d, 0, 0, NULL, t, m, h)
#define HS_OPTION_INT(k, d, lo, hi, t, m, h) HS_OPTION_(k, HS_OPT_INT, d, lo, hi, NULL, t, m, h)
#define HS_OPTION_CHOICE(k, d, ch, t, m, h) HS_OPTION_(k, HS_OPT_CHOICE, d, 0, 0, ch, t, m, h)
#define HS_OPTION_STRING(k, d, t, m, h) HS_OPTION_(k, HS_OPT_STRING, d, 0, 0, NULL, t, m, h)
#define HS_OPTIONS_END {NULL, HS_OPT_BOOL, NULL, 0, 0, NULL, 0, NULL}


/* The plan as a transport sees it. The core builds it before setup and never moves it; a
 * transport reads every member and writes only `impl` (and a decorator `ops`, in setup):
 * docs/design.md lists them and tests/core/test_doc_sync.py holds both to the list. */
struct hs_plan_s {
  /* ---- read */
  MPI_Comm comm;          /* dup of the decomposition's communicator: tags are free */
  int rank, size, ndims;
  hs_decomp decomp;       /* for hs__shared_lookup (node-shared field memory) */
  int nfields; hs_fieldinfo *fields;
  bool has_callbacks;     /* some field uses pack/unpack hooks (no datatypes possible) */
  int npeers; hs_peer *peers;
  int nself; hs_selfcopy *self; /* periodic copies onto this rank (the core does them) */
  char transport_name[64]; /* for messages */
  void *config;           /* the transport's options, filled by the core (ops->config_size) */
  bool round_failed;      /* the round in progress carries failure flags (hs__failed_round) */
  bool fail_given;        /* ... and its caller passed per-swap arrays (nbr: which call) */
  /* ---- written by the transport */
  void *impl;             /* its private state */
  const struct hs_transport_ops *ops; /* what the core calls: the transport, or a decorator */
  /* ---- the core's own state (hs_core.h); a transport never touches it */
  struct hs_plan_core *core;
};

enum { /* transport flags */
  HS_OPS_DEFAULT = 1u << 0,   /* the transport HS_TRANSPORT_DEFAULT means (exactly one) */
  HS_OPS_DELEGATES = 1u << 1, /* a decorator: the plans ops->inner lists do the swaps */
  HS_OPS_FAILROUND = 1u << 2, /* start/complete run failed rounds (hs__failed_round) */
};

/* The ops table; each member's contract is in docs/design.md, "The ops table". */
typedef struct hs_transport_ops {
  const char *name;
  hs_transport_id id;     /* its public enum value, or HS_TRANSPORT_DEFAULT (0) for none */
  unsigned flags;
  const char *summary;    /* one line, for hs_transport_options and listings */
  const hs_option_spec *options; /* terminated by an entry with key NULL; may be NULL */
  size_t config_size;     /* bytes of the struct the option offsets point into */
  int (*query)(MPI_Comm comm, char *why, size_t n); /* optional; collective */
  int (*setup)(hs_plan p);
  int (*start)(hs_plan p, void *const *arrays);
  int (*complete)(hs_plan p, void *const *arrays);
  void (*destroy)(hs_plan p);
  int (*inner)(hs_plan p, hs_plan *plans, int max); /* optional: a decorator's plans */
  bool (*fail_inner)(hs_plan p, int reverse);        /* optional: ... their failed round */
  void (*describe_exchange)(hs_plan p, char *buf, size_t len, size_t *n); /* optional */
  void (*describe)(hs_plan p, char *buf, size_t len);                     /* optional */
  int (*test)(hs_plan p, void *const *arrays, int *done);                 /* optional */
  /* Optional: its own reverse exchange (else the core's, src/engines/reverse.c). */
  int (*reverse_start)(hs_plan p, hs_op op, void *const *arrays);
  int (*reverse_complete)(hs_plan p, hs_op op, void *const *arrays);
} hs_transport_ops;

/* The ops table `sym` of a transport whose options fill a `config_type`, then its ops. */
#define HS_TRANSPORT_OPS(sym, name_, id_, flags_, summary_, options_, config_type, ...)      \
  const hs_transport_ops sym = {.name = name_, .id = id_, .flags = flags_,                    \
                                .summary = summary_, .options = options_,                     \
                                .config_size = sizeof(config_type), __VA_ARGS__}
/* The same from prefix_setup, _start, _complete, _destroy, then optional ops (or none). */
#define HS_DEFINE_TRANSPORT(sym, prefix, name_, id_, flags_, summary_, options_, cfg, ...)    \
  HS_TRANSPORT_OPS(sym, name_, id_, flags_, summary_, options_, cfg, .setup = prefix##_setup, \
                   .start = prefix##_start, .complete = prefix##_complete,                    \
                   .destroy = prefix##_destroy, __VA_ARGS__)
#define HS_OPS_NO_EXTRA .query = NULL
typedef struct { char none; } hs_no_config; /* for a transport without options */

/* The transport's private state: zeroed, accounted, stored in p->impl. */
void *hs__impl_new(hs_plan p, size_t bytes);

#if defined(__GNUC__)
#define HS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HS_PRINTF(f, a)
#endif

int hs__error(int code, const char *fmt, ...) HS_PRINTF(2, 3);
int hs__mpi_error(int mpierr, const char *what);
/* Collective: the same status on every rank (the lowest failing rank's message). */
int hs__agree(MPI_Comm comm, int local);
#define HS_MPI(call) do { int hs_mpi_rc_ = (call); \
    if (hs_mpi_rc_ != MPI_SUCCESS) return hs__mpi_error(hs_mpi_rc_, #call); } while (0)

/* ---- errors during a swap (src/plan/fail.c; docs/design.md, "Errors during a swap") */
/* True while the round in progress is a failed one: the transport takes part in every
 * exchange of the round, sends a flag in place of each message's data, reads and writes no
 * field, and receives what its in-peers send into hs__fail_scratch. */
static inline bool hs__failed_round(const hs_plan p) { return p->round_failed; }
/* In-peer `rank` (in p->comm) flagged this round: the core receives its failure. Once per flag. */
void hs__fail_seen(hs_plan p, int rank);
/* Scratch for a failed round's receives: at least `bytes`, kept by the plan (NULL: no memory). */
char *hs__fail_scratch(hs_plan p, size_t bytes);
/* printf output appended at *n in buf (len bytes); *n advances even past len (truncation). */
void hs__appendf(char *buf, size_t len, size_t *n, const char *fmt, ...) HS_PRINTF(4, 5);
static inline char *hs__field_ptr(const hs_plan p, void *const *arrays, int f) { /* data */
  return arrays && arrays[f] ? (char *)arrays[f] : (char *)p->fields[f].data;
}
/* True if `arrays` selects exactly the registered fields (NULL, or each NULL or the same). */
bool hs__arrays_registered(const hs_plan p, void *const *arrays);

/* ---- memory accounting (src/memory/memory.c): every byte a transport holds, counted in the
 * plan's bytes_allocated */
void *hs__malloc(hs_plan p, size_t n); void *hs__calloc(hs_plan p, size_t n);
void hs__free(hs_plan p, void *ptr);     /* NULL is fine; knows the size */
/* Zeroed arrays of n (>= 1) elements, as pairs (void **slot, size_t element size) ending with
 * NULL: HS_OK, or HS_ERR_NOMEM (those made stay set for the caller's destroy). */
int hs__calloc_arrays(hs_plan p, size_t n, ...);
/* Memory the transport holds by other means (windows, shared or symmetric segments). */
void hs__account(hs_plan p, int64_t bytes);

/* True if the user gave a value for option key (rather than the default). */
bool hs__option_given(const hs_plan p, const char *key);
double hs__wtime(void);
/* One round of a polling loop: yields the core after a few fruitless spins. */
void hs__relax(unsigned *spins);

#endif
