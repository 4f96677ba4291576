/* haloswap: halo exchange for structured grids over interchangeable MPI transports.
 * Public C API. Every call returns HS_OK or an HS_ERR_* code; hs_error_message() explains. */
#ifndef HALOSWAP_H
#define HALOSWAP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HS_VERSION_MAJOR 0
#define HS_VERSION_MINOR 1
#define HS_MAX_DIMS 3
#define HS_MAX_DEPTH 4
#define HS_MAX_FIELDS 1024

typedef enum {
  HS_OK = 0,
  HS_ERR_ARG = 1,         /* a bad argument on some rank */
  HS_ERR_MISMATCH = 2,    /* ranks disagree about a collective argument */
  HS_ERR_STATE = 3,       /* call out of order (complete without start, ...) */
  HS_ERR_NOMEM = 4,
  HS_ERR_MPI = 5,         /* an MPI call failed */
  HS_ERR_UNAVAILABLE = 6, /* transport not built or not usable with this MPI */
  HS_ERR_INTERNAL = 7
} hs_status;

typedef enum { HS_FLOAT64 = 0, HS_FLOAT32 = 1, HS_INT32 = 2, HS_INT64 = 3 } hs_type;

typedef enum {
  HS_LAYOUT_ZFAST = 0,  /* z contiguous, then y, then x: Fortran field(z,y,x) (MONC) */
  HS_LAYOUT_XFAST = 1,  /* x contiguous, then y, then z: C field[z][y][x] */
  HS_LAYOUT_STRIDED = 2 /* element strides given in hs_field.stride */
} hs_layout;

typedef enum { HS_STENCIL_BOX = 0, HS_STENCIL_STAR = 1 } hs_stencil;

/* One-direction swaps (MONC TVD advection): every rank sends its lowest interior strip along
 * `axis` to its lower neighbour and receives its upper halo from the upper neighbour
 * (HS_ONEWAY_LOWER), or the mirror image (HS_ONEWAY_UPPER). */
typedef enum { HS_ONEWAY_NONE = 0, HS_ONEWAY_LOWER = 1, HS_ONEWAY_UPPER = 2 } hs_oneway;

/* Transport identifiers (hs_transport_id_name gives each one's name). Not every transport is
 * built everywhere: a known but unbuilt one makes hs_plan_create fail with
 * HS_ERR_UNAVAILABLE and the reason; see also hs_transport_available. */
typedef enum {
  HS_TRANSPORT_DEFAULT = 0, /* HALOSWAP_TRANSPORT if set, else the registry's default (p2p) */
  HS_TRANSPORT_P2P,
  HS_TRANSPORT_RMA_FENCE,
  HS_TRANSPORT_RMA_PSCW,
  HS_TRANSPORT_RMA_PASSIVE,
  HS_TRANSPORT_SHM,
  HS_TRANSPORT_SHMEM,
  HS_TRANSPORT_NBR,
  HS_TRANSPORT_AUTO,
  HS_TRANSPORT_CMA
} hs_transport_id;

typedef struct hs_decomp_s *hs_decomp;
typedef struct hs_plan_s *hs_plan;

/* ---------------------------------------------------------------- errors */
/* Message of the last failed call on this thread (empty if none). */
const char *hs_error_message(void);
const char *hs_status_name(int status);

/* ---------------------------------------------------------------- decomposition */
typedef struct {
  int ndims;                  /* 2 or 3 */
  int global[HS_MAX_DIMS];    /* global interior extent per axis (x, y, z) */
  int procs[HS_MAX_DIMS];     /* ranks per axis; 0 = chosen by MPI_Dims_create; 1 = axis whole */
  int periodic[HS_MAX_DIMS];  /* 1 = periodic, 0 = walled */
  MPI_Comm cart;              /* an existing Cartesian communicator to use, or MPI_COMM_NULL */
} hs_decomp_desc;

/* Fills desc with defaults: ndims 3, all axes periodic except z, procs 0 (z: 1), no cart. */
void hs_decomp_desc_init(hs_decomp_desc *desc);
/* Collective over comm (ignored when desc->cart is given). */
int hs_decomp_create(MPI_Comm comm, const hs_decomp_desc *desc, hs_decomp *out);
int hs_decomp_free(hs_decomp *d);
/* Accessors (never fail on a valid decomposition; return -1 / MPI_COMM_NULL otherwise). */
int hs_decomp_ndims(hs_decomp d);
int hs_decomp_local_extent(hs_decomp d, int axis);
int hs_decomp_global_offset(hs_decomp d, int axis); /* global index of local interior 0 */
int hs_decomp_global_extent(hs_decomp d, int axis);
int hs_decomp_procs(hs_decomp d, int axis);
int hs_decomp_coord(hs_decomp d, int axis);
int hs_decomp_periodic(hs_decomp d, int axis);
MPI_Comm hs_decomp_comm(hs_decomp d); /* the Cartesian communicator (owned by d) */

/* ---------------------------------------------------------------- field memory */
/* Allocate `bytes` for a field in memory that ranks on the same node can address directly
 * (an MPI-3 shared window), so a transport can fill a halo with one copy straight from the
 * neighbour's field (shm does). HALOSWAP_ALLOC=plain makes it plain malloc. Collective over the decomposition's communicator; every rank calls
 * it for the same fields in the same order (sizes may differ). Free with hs_free. */
int hs_alloc(hs_decomp d, size_t bytes, void **ptr);
int hs_free(hs_decomp d, void *ptr); /* collective, in the same order as hs_alloc */

/* ---------------------------------------------------------------- fields */
typedef struct {
  int field;                  /* index in the plan */
  int lo[HS_MAX_DIMS];        /* first local index of the box (may be negative: halo) */
  int count[HS_MAX_DIMS];     /* box extent per axis (1 on absent axes) */
} hs_region;

/* MONC-style policy hooks: copy one box of field data to/from a contiguous buffer, in the
 * order z fastest, then y, then x (ZFAST), whatever the field's own layout. */
typedef void (*hs_pack_fn)(void *ctx, const hs_region *region, void *buf);
typedef void (*hs_unpack_fn)(void *ctx, const hs_region *region, const void *buf);

typedef struct {
  hs_type type;
  void *data;                 /* array including its halo; may be NULL if given per swap */
  int halo[HS_MAX_DIMS];      /* allocated halo width per axis (>= plan depth on that axis) */
  hs_layout layout;
  ptrdiff_t stride[HS_MAX_DIMS]; /* element strides, HS_LAYOUT_STRIDED only */
  hs_pack_fn pack;            /* optional: both or neither; then data/layout are unused */
  hs_unpack_fn unpack;
  void *ctx;
} hs_field;

/* A plain array field with halo width `halo` on x and y and none on z: the common layout of
 * a model that keeps z whole. A field with a z halo (z decomposed or swapped) sets
 * halo[2] itself; plan creation rejects a halo smaller than the depth swapped. */
hs_field hs_field_array(hs_type type, void *data, hs_layout layout, int halo);

/* ---------------------------------------------------------------- plans */
typedef struct {
  int depth[HS_MAX_DIMS];     /* halo depth to swap per axis, 0..HS_MAX_DEPTH */
  hs_stencil stencil;
  hs_oneway oneway;           /* HS_ONEWAY_NONE for a full swap */
  int oneway_axis;            /* axis for a one-direction swap */
  int nfields;                /* 1..HS_MAX_FIELDS */
  const hs_field *fields;
  hs_transport_id transport;  /* used when transport_name is NULL */
  const char *transport_name; /* e.g. "p2p" or "rma-fence:drive=get"; overrides the enum */
  const char *options;        /* extra "key=value,key=value" transport options, or NULL */
} hs_plan_desc;

/* Depth 1 on x and y, box stencil, HS_TRANSPORT_DEFAULT, no options. */
void hs_plan_desc_init(hs_plan_desc *desc);

/* Collective over the decomposition's communicator. Validates every argument on every rank
 * and fails on all ranks with the same message if any rank's input is bad. */
int hs_plan_create(hs_decomp d, const hs_plan_desc *desc, hs_plan *out);
/* Start a swap: returns without waiting for any neighbour. arrays == NULL: registered ones;
 * otherwise arrays[f] replaces field f's data (NULL entries keep the registered one). */
int hs_swap_start(hs_plan p, void *const *arrays);
/* Block until every halo cell of the started swap is written. Same arrays as start. */
int hs_swap_complete(hs_plan p, void *const *arrays);
int hs_swap(hs_plan p, void *const *arrays); /* start + complete */
int hs_plan_free(hs_plan *p);                 /* collective; frees everything */

typedef struct {
  uint64_t swaps;
  uint64_t bytes_sent_per_swap;   /* to other ranks */
  uint64_t bytes_recv_per_swap;
  uint64_t bytes_self_per_swap;   /* periodic self copies */
  double seconds_start;           /* accumulated wall time in start */
  double seconds_complete;        /* accumulated wall time in complete */
  uint64_t bytes_allocated;       /* buffers the library holds for this plan on this rank */
  int npeers;                     /* distinct neighbour ranks other than self */
} hs_plan_stats;

int hs_plan_get_stats(hs_plan p, hs_plan_stats *st);
int hs_plan_reset_stats(hs_plan p);
const char *hs_plan_transport(hs_plan p);     /* name of the transport in use */
/* Describe the plan (transport, options, peers, bytes) into buf; for --verbose output.
 * A transport that decides something at plan creation (auto: its choice and the timings of
 * every candidate) appends that too. */
int hs_plan_describe(hs_plan p, char *buf, size_t len);
/* Name of the transport that actually moves the data: for "auto" the one it selected,
 * otherwise the same as hs_plan_transport. NULL for a NULL plan. */
const char *hs_plan_selected_transport(hs_plan p);

/* ---------------------------------------------------------------- transports */
int hs_transport_count(void);
const char *hs_transport_name(int i);          /* registered name, i in [0, count) */
const char *hs_transport_id_name(hs_transport_id id);
/* HS_OK if the named transport is built and usable on comm; else the reason in why.
 * Collective over comm. */
int hs_transport_available(MPI_Comm comm, const char *name, char *why, size_t len);
/* The named transport's summary and every option it accepts, one per line, with its
 * default, its allowed values and a line of help. HS_ERR_UNAVAILABLE if not built. */
int hs_transport_options(const char *name, char *buf, size_t len);

size_t hs_type_size(hs_type t);

#ifdef __cplusplus
}
#endif
#endif
