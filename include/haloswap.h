/* haloswap: halo exchange for structured grids over interchangeable MPI transports.
 * Public C API. Every call returns HS_OK or an HS_ERR_* code; hs_error_message() explains. */
#ifndef HALOSWAP_H
#define HALOSWAP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The API (libhaloswap is built with hidden visibility: exported is what is declared here).
 * HS_BEGIN_DECLS ... HS_END_DECLS enclose the declarations of haloswap's headers: exported,
 * and with C linkage from C++. */
#if defined(__GNUC__) && defined(__cplusplus)
#define HS_BEGIN_DECLS _Pragma("GCC visibility push(default)") extern "C" {
#define HS_END_DECLS } _Pragma("GCC visibility pop")
#elif defined(__GNUC__)
#define HS_BEGIN_DECLS _Pragma("GCC visibility push(default)")
#define HS_END_DECLS _Pragma("GCC visibility pop")
#elif defined(__cplusplus)
#define HS_BEGIN_DECLS extern "C" {
#define HS_END_DECLS }
#else
#define HS_BEGIN_DECLS
#define HS_END_DECLS
#endif
HS_BEGIN_DECLS

/* The version's one source: CMake's project(), the pkg-config files and the Python package's
 * metadata read these three lines (tests/core/test_version.py checks every place that states
 * the version). hs_version() gives the library's own, which differs only when a program runs
 * against another build of a shared libhaloswap than the one it was compiled with. */
#define HS_VERSION_MAJOR 0
#define HS_VERSION_MINOR 1
#define HS_VERSION_PATCH 0
#define HS_MAX_DIMS 3
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

/* ---------------------------------------------------------------- version */
/* The library's version as "MAJOR.MINOR.PATCH"; each non-NULL argument gets that part. */
const char *hs_version(int *major, int *minor, int *patch);

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
  /* User-given ownership (docs/api.md, "Field geometry"); all zero = the defaults. */
  const int *ranges[HS_MAX_DIMS]; /* cells of each rank along the axis (procs[a] entries,
                                     summing to global[a]; PETSc's lx/ly/lz), or NULL */
  int remainder;              /* hs_remainder: where an uneven split puts the extra cells */
  int axis_order[HS_MAX_DIMS]; /* axis_order[k]: the grid axis that is dimension k of the
                                  Cartesian communicator (rank order: the last dimension
                                  varies fastest); all zero = x, y, z */
  /* Node-aware placement (ignored when cart is given). HS_PLACE_RANK: grid coordinates follow
   * rank order (MPI_Cart_create without reordering). HS_PLACE_NODE: each node gets a compact
   * block of the process grid, so fewer halo bytes cross the network. Nodes are the groups of
   * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or, if node_size > 0, virtual nodes of node_size
   * consecutive ranks of comm. With one node, nodes of different sizes, or a node size that
   * does not tile the process grid, rank order is kept (hs_decomp_placement says which). */
  int placement;
  int node_size;
} hs_decomp_desc;

/* HS_REMAINDER_LOW: the first global % procs ranks get one cell more (MONC, MPI_Dims-style);
 * HS_REMAINDER_HIGH: the last ones do (Lare3d). */
typedef enum { HS_REMAINDER_LOW = 0, HS_REMAINDER_HIGH = 1 } hs_remainder;

enum { HS_PLACE_RANK = 0, HS_PLACE_NODE = 1 };

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
MPI_Comm hs_decomp_comm(hs_decomp d); /* Cartesian (box decomposition: a plain dup); owned by d */
/* Placement in effect: HS_PLACE_NODE if node blocks were applied, else HS_PLACE_RANK; the
 * block of the process grid each node holds goes to block[] (1 on unused axes) if not NULL. */
int hs_decomp_placement(hs_decomp d, int block[HS_MAX_DIMS]);
/* Any box decomposition (docs/api.md, "Box decompositions"): each rank passes its own box of
 * global cells lo[a] <= i < hi[a] (0-based) on a global grid of ndims (2 or 3) axes, periodic[a]
 * 0 or 1; gaps allowed, overlaps refused. Collective over comm; the same verdict on every rank.
 * Neighbours are the ranks whose boxes meet this rank's halo (docs/design.md). */
int hs_decomp_create_boxes(MPI_Comm comm, int ndims, const int global[], const int periodic[],
                           const int lo[], const int hi[], hs_decomp *out);
/* 1 for a box decomposition, 0 for a Cartesian one, -1 for NULL. */
int hs_decomp_is_boxes(hs_decomp d);

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
  /* Field geometry (docs/api.md, "Field geometry"). All zero = the behaviour above: halo[]
   * on both sides, the plan's depth[], cell-centred, the decomposition's extent, a scalar.
   * Set these with the hs_field_set_* calls below rather than by hand. */
  int halo_hi[HS_MAX_DIMS];   /* allocated halo above the interior, where halo_hi_set[a] */
  int depth_lo[HS_MAX_DIMS];  /* swap depth below / above, where depth_set[a] */
  int depth_hi[HS_MAX_DIMS];
  int stagger[HS_MAX_DIMS];   /* hs_stagger per axis */
  int owner[HS_MAX_DIMS];     /* hs_owner of the shared plane, for HS_STAGGER_NODE axes */
  int extent[HS_MAX_DIMS];    /* own interior cells on an axis not split over ranks; 0: the
                                 decomposition's (a 2-D field in a 3-D plan: extent 1 on z) */
  int ncomp;                  /* components of a vector/tensor field; 0 or 1: a scalar */
  int comp_order;             /* hs_comp_order */
  ptrdiff_t comp_stride;      /* element stride between components, HS_LAYOUT_STRIDED only */
  unsigned char halo_hi_set[HS_MAX_DIMS];
  unsigned char depth_set[HS_MAX_DIMS];
} hs_field;

/* Staggering along one axis: cell-centred (the decomposition's n cells), or node/face-centred
 * (n+1 points: the planes bounding the rank's cells). A node plane between two ranks is
 * stored by both; the owner's value is the truth, the other rank receives it like a halo
 * plane. On a walled boundary the rank at the wall owns its outer plane. */
typedef enum { HS_STAGGER_CELL = 0, HS_STAGGER_NODE = 1 } hs_stagger;
typedef enum { HS_OWNER_UPPER = 0, HS_OWNER_LOWER = 1 } hs_owner;
/* Where a component dimension sits: slowest varying (field(..., ncomp), C comp[n][...]) or
 * fastest varying (Fortran field(ncomp, z, y, x)). */
typedef enum { HS_COMP_SLOWEST = 0, HS_COMP_FASTEST = 1 } hs_comp_order;

/* Setters for the geometry members. They only store values; hs_plan_create checks them. */
void hs_field_set_halo(hs_field *f, int axis, int lo, int hi);   /* allocated halo */
void hs_field_set_depth(hs_field *f, int axis, int lo, int hi);  /* swapped depth <= halo */
void hs_field_set_stagger(hs_field *f, int axis, hs_stagger s, hs_owner owner);
void hs_field_set_extent(hs_field *f, int axis, int cells);
void hs_field_set_components(hs_field *f, int ncomp, hs_comp_order order,
                             ptrdiff_t comp_stride);

/* A plain array field with halo width `halo` on x and y and none on z: the common layout of
 * a model that keeps z whole. A field with a z halo (z decomposed or swapped) sets
 * halo[2] itself; plan creation rejects a halo smaller than the depth swapped. */
hs_field hs_field_array(hs_type type, void *data, hs_layout layout, int halo);

/* ---------------------------------------------------------------- plans */
/* The combine order of the reverse exchange (docs/api.md, "Combine order"), a property of the
 * plan. HS_ORDER_CANONICAL: offsets in lexicographic order. HS_ORDER_OFFSETS: offsets in the
 * order given (EPIC's W, E, S, N, NE, SE, SW, NW); the forward swap is unchanged.
 * HS_ORDER_SWEEP: forward and reverse run one stage per exchanged axis in the sweep order,
 * each over the full transverse extent including halos (Lare3d, EPOCH); afterwards the halos
 * of the other axes hold partial sums, as the sweep codes leave them. */
typedef enum { HS_ORDER_CANONICAL = 0, HS_ORDER_OFFSETS = 1, HS_ORDER_SWEEP = 2 } hs_order;

typedef struct {
  int depth[HS_MAX_DIMS];     /* halo depth to swap per axis, 0..every rank's local extent */
  hs_stencil stencil;
  hs_oneway oneway;           /* HS_ONEWAY_NONE for a full swap */
  int oneway_axis;            /* axis for a one-direction swap */
  int nfields;                /* 1..HS_MAX_FIELDS */
  const hs_field *fields;
  hs_transport_id transport;  /* used when transport_name is NULL */
  const char *transport_name; /* e.g. "p2p" or "rma-fence:drive=get"; overrides the enum */
  const char *options;        /* extra "key=value,key=value" transport options, or NULL */
  /* Combine order (zero: canonical). Set with the setters below. */
  hs_order order;
  int norder;                 /* HS_ORDER_OFFSETS: number of offsets in order_offsets */
  const int *order_offsets;   /* HS_ORDER_OFFSETS: norder triples (ox, oy, oz), each in {-1,0,1};
                                 read during hs_plan_create only */
  int nsweep;                 /* HS_ORDER_SWEEP: axes in sweep_axes; 0: the exchanged axes */
  int sweep_axes[HS_MAX_DIMS];
} hs_plan_desc;

/* Depth 1 on x and y, box stencil, HS_TRANSPORT_DEFAULT, no options, canonical order. */
void hs_plan_desc_init(hs_plan_desc *desc);
/* Store a combine order (hs_plan_create validates it, collectively): the reverse combines
 * offset by offset in the order of `offsets` (n triples; every offset the plan uses exactly
 * once, others skipped), or sweeps the n axes `axes` (0-based; n = 0: x, y, z). */
void hs_plan_desc_set_order_offsets(hs_plan_desc *d, int n, const int *offsets);
void hs_plan_desc_set_order_sweep(hs_plan_desc *d, int n, const int *axes);

/* Collective over the decomposition's communicator. Validates every argument on every rank
 * and fails on all ranks with the same message if any rank's input is bad. */
int hs_plan_create(hs_decomp d, const hs_plan_desc *desc, hs_plan *out);
/* Start a swap: returns without waiting for any neighbour. arrays == NULL: registered ones;
 * otherwise arrays[f] replaces field f's data (NULL entries keep the registered one). */
int hs_swap_start(hs_plan p, void *const *arrays);
/* Block until every halo cell of the started swap is written. Same arrays as start. */
int hs_swap_complete(hs_plan p, void *const *arrays);
int hs_swap(hs_plan p, void *const *arrays); /* start + complete */
/* Progress a started swap without blocking; *done = 1 once every halo cell is written (the
 * swap must still be completed with hs_swap_complete, which then returns at once). Polling
 * it ends on every transport; rma-fence, having no nonblocking fence, waits in its first
 * call for every rank's test or complete (docs/api.md). */
int hs_swap_test(hs_plan p, void *const *arrays, int *done);
/* Refuses the round a start would begin, for a binding's or wrapper's own argument check: the
 * round runs with failure flags (no collective), so each neighbour's complete returns `code`
 * and `message` instead of waiting; the plan then fails as after any failed round. reverse: the
 * reverse round; arrays_given: per-swap arrays would have been passed. Returns `code`. */
int hs_round_fail(hs_plan p, int code, int reverse, int arrays_given, const char *message);

/* ---------------------------------------------------------------- region sets */
/* A region set makes a plan swap only named parts of its fields' halos (docs/api.md, "Region
 * sets"): BRAMS's acoustic sets, which fill the west column only, the south row only, or the
 * east column and north row. A region is one side of the halo as the receiving rank sees it:
 * "x-" (below x: a west column, also "west"), "x+" ("east"), "y-" ("south"), "y+" ("north"),
 * "z-" ("bottom"), "z+" ("top"), an edge or corner by its axes ("x-y-": the lower-left
 * corner), or "faces", "edges", "corners", "all". A face region is the face part only, not
 * its corners. Local objects (no communication); every rank gives the plan the same set. */
typedef struct hs_region_set_s *hs_region_set;
int hs_region_set_create(hs_region_set *out);
/* Add regions to field `field` of the plan (its index in hs_plan_desc.fields), or to every
 * field (-1). names: one or more region names separated by commas or blanks. A field the set
 * never names moves nothing. */
int hs_region_set_add(hs_region_set s, int field, const char *names);
int hs_region_set_free(hs_region_set *s);
/* hs_plan_create, swapping only the regions of `regions` (NULL: the whole halo). Collective;
 * the set is read during the call only. Refused with staged=1 and HS_ORDER_SWEEP (they go
 * axis by axis); combined with the stencil and a one-direction swap, all three must allow a
 * part. The reverse exchange returns what the forward one fills. */
int hs_plan_create_regions(hs_decomp d, const hs_plan_desc *desc, hs_region_set regions,
                           hs_plan *out);

/* ---------------------------------------------------------------- reverse exchange */
/* Every halo cell the plan's forward swap writes is sent back to the rank that owns the
 * cell it mirrors and combined into that interior cell: sum (deposition/accumulation), max,
 * min or replace. Contributions are combined after all have arrived, in the plan's combine
 * order (hs_order; periodic self contributions in their place), so results are bit-identical
 * across transports, process placements and runs. Halo cells are left as they were, except
 * with HS_ORDER_SWEEP (the halos of the other axes then hold partial sums). */
typedef enum { HS_OP_SUM = 0, HS_OP_MAX = 1, HS_OP_MIN = 2, HS_OP_REPLACE = 3 } hs_op;
int hs_reverse_start(hs_plan p, hs_op op, void *const *arrays);
int hs_reverse_complete(hs_plan p, void *const *arrays);
int hs_reverse(hs_plan p, hs_op op, void *const *arrays); /* start + complete */
/* Reverse then forward: owners accumulate their halo contributions, then every halo gets
 * the owners' combined values (EPIC's parcel-to-grid step). */
int hs_accumulate_fill(hs_plan p, hs_op op, void *const *arrays);
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
  /* Overlap accounting: total = wall time from entering start to leaving complete (the
   * swap in flight); exposed = time spent inside start, test and complete (not overlapped
   * with the caller's work); test: the part of exposed spent in hs_swap_test. */
  double seconds_total;
  double seconds_exposed;
  double seconds_test;
  uint64_t reverses;              /* completed reverse exchanges */
  double seconds_reverse;         /* accumulated wall time in reverse start + complete */
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

HS_END_DECLS
#endif
