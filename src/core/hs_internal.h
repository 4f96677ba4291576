/* Internal interface between the haloswap core and its transports. Not installed. */
#ifndef HS_INTERNAL_H
#define HS_INTERNAL_H

#include "haloswap.h"
#include <stdarg.h>
#include <stdbool.h>

#define HS_MAX_OFFSETS 26
#define HS_MAX_OPTIONS 16

struct hs_decomp_s {
  MPI_Comm comm; /* Cartesian, owned */
  int ndims, rank, size;
  int global[HS_MAX_DIMS], procs[HS_MAX_DIMS], periodic[HS_MAX_DIMS];
  int coord[HS_MAX_DIMS], local[HS_MAX_DIMS], offset[HS_MAX_DIMS];
  int place_block[HS_MAX_DIMS]; /* node block of HS_PLACE_NODE; all 0 for rank order */
};

/* A section of a message: one field's box, reduced to a copy program over bytes. */
typedef struct {
  hs_region box;          /* local indices of the box in the field */
  int offset_index;       /* index into the plan's offset list (sender's offset for sends) */
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
} hs_peer;

typedef struct {
  hs_section src, dst;    /* same shape; src in the interior, dst in the halo */
} hs_selfcopy;

typedef struct {
  hs_type type;
  size_t elem;
  MPI_Datatype mpitype;
  void *data;
  int halo[HS_MAX_DIMS];
  ptrdiff_t stride[HS_MAX_DIMS]; /* element strides, resolved for every layout */
  int alloc[HS_MAX_DIMS];        /* allocated extent per axis (interior + 2*halo) */
  hs_pack_fn pack;
  hs_unpack_fn unpack;
  void *ctx;
} hs_fieldinfo;

typedef struct {
  char key[32];
  char val[64];
  bool used;
} hs_option;

struct hs_transport_ops;

struct hs_plan_s {
  hs_decomp decomp;
  MPI_Comm comm;          /* dup of the decomposition's communicator, owned */
  int rank, size, ndims;
  int local[HS_MAX_DIMS];
  int depth[HS_MAX_DIMS];
  hs_stencil stencil;
  hs_oneway oneway;
  int oneway_axis;

  int nfields;
  hs_fieldinfo *fields;
  bool has_callbacks;     /* some field uses pack/unpack hooks (no datatypes possible) */

  int noffsets;
  int offsets[HS_MAX_OFFSETS][HS_MAX_DIMS]; /* canonical order */
  int send_to[HS_MAX_OFFSETS];   /* rank receiving my strip for offset i (or MPI_PROC_NULL) */
  int recv_from[HS_MAX_OFFSETS]; /* rank whose strip fills my halo on side i */

  int npeers;
  hs_peer *peers;
  int nself;
  hs_selfcopy *self;
  size_t self_bytes;
  char *self_bounce;      /* for self copies of callback fields */

  int tag;                /* MPI tag reserved for this plan's messages */
  char transport_name[64];
  int noptions;
  hs_option options[HS_MAX_OPTIONS];

  const struct hs_transport_ops *ops;
  void *impl;             /* transport private data */
  bool in_progress;
  bool core_self_copy;    /* core performs self copies in complete (default true) */

  hs_plan_stats stats;
  uint64_t core_bytes;    /* allocated by the core for this plan */
  uint64_t transport_bytes; /* set by the transport */
};

typedef struct hs_transport_ops {
  const char *name;
  const char *summary;
  int (*query)(MPI_Comm comm, char *why, size_t n);
  int (*setup)(hs_plan p);
  int (*start)(hs_plan p, void *const *arrays);
  int (*complete)(hs_plan p, void *const *arrays);
  void (*destroy)(hs_plan p);
  const char *const *option_keys; /* NULL-terminated list of accepted option keys */
  /* Optional. A transport that hands the swaps to another plan (auto) returns it. */
  hs_plan (*delegate)(hs_plan p);
  /* Optional. Appends what the transport decided at setup to hs_plan_describe's text. */
  void (*describe)(hs_plan p, char *buf, size_t len);
} hs_transport_ops;

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

/* ---- field data */
static inline char *hs__field_ptr(const hs_plan p, void *const *arrays, int f) {
  if (arrays && arrays[f]) return (char *)arrays[f];
  return (char *)p->fields[f].data;
}

/* ---- packing engine */
void hs__pack_section(const hs_plan p, const hs_section *s, const char *field, char *buf);
void hs__unpack_section(const hs_plan p, const hs_section *s, char *field, const char *buf);
/* Pack every send section for peer into buf (send_bytes long). */
void hs__pack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays, char *buf);
void hs__unpack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays,
                     const char *buf);
void hs__self_copy(const hs_plan p, void *const *arrays);
/* A derived datatype that addresses the section directly in the field (relative to the
 * field data pointer). Not for callback fields. Caller frees. */
int hs__section_datatype(const hs_plan p, const hs_section *s, MPI_Datatype *out);
/* A datatype describing all sections of a list, with absolute addresses (use MPI_BOTTOM).
 * Not for callback fields. Caller frees. */
int hs__sections_datatype(const hs_plan p, const hs_section *secs, int n, void *const *arrays,
                          MPI_Datatype *out);

/* ---- options */
/* Value of option key for this plan, or NULL. Marks the option used. */
const char *hs__opt_get(hs_plan p, const char *key);
/* Integer option with default; returns HS_ERR_ARG on a malformed value. */
int hs__opt_int(hs_plan p, const char *key, int def, int *out);

/* ---- memory accounting */
void *hs__malloc(hs_plan p, size_t n);   /* counted in transport_bytes */
void *hs__calloc(hs_plan p, size_t n);
void hs__free(hs_plan p, void *ptr, size_t n);

/* ---- node-shared field memory (hs_alloc, src/core/alloc.c) */
/* 1 if ptr lies inside an hs_alloc'd shared window of d: fills *id (the same on every rank
 * of the node for that allocation), *win and *offset (bytes from the start of this rank's
 * segment); 0 for any other memory (including hs_alloc's plain-memory fallback). */
int hs__shared_lookup(hs_decomp d, const void *ptr, uint64_t *id, MPI_Win *win,
                      size_t *offset);
/* Start of `rank`'s segment (rank in d's communicator) of allocation `id`, mapped in this
 * process, and its size; NULL if that rank does not share the allocation with this one. */
char *hs__shared_base(hs_decomp d, uint64_t id, int rank, size_t *bytes);

/* ---- registry */
const hs_transport_ops *hs__transport_find(const char *name);
/* hs_plan_create for a plan a transport builds for itself (auto's candidates): the same,
 * except that HALOSWAP_OPTIONS is not applied again. */
int hs__plan_create_nested(hs_decomp d, const hs_plan_desc *desc, hs_plan *out);

double hs__wtime(void);

#endif
