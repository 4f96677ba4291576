/* Internal structure of the remote access layer (haloswap_ra.h). Not installed. */
#ifndef HS_RA_INTERNAL_H
#define HS_RA_INTERNAL_H

#include "haloswap_ra.h"
#include "hs_internal.h"

/* p2p: one mirror per target peer (a rank whose elements this rank accesses). */
typedef struct {
  int rank;
  int n;          /* distinct remote indices, sorted */
  int *idx;
  int32_t *val;   /* narrays * n mirror values */
  uint8_t *dirty; /* narrays * n */
  int ndirty;
} hs__ra_target;

/* p2p: a source peer (a rank that accesses this rank's elements) and the indices it holds. */
typedef struct {
  int rank;
  int n;
  int *idx;
} hs__ra_source;

typedef struct hs__ra_backend_ops {
  int (*create)(hs_ra ra);
  void (*destroy)(hs_ra ra);
  int (*put)(hs_ra ra, int a, int rank, int index, int32_t v);
  int (*get)(hs_ra ra, int a, int rank, int index, int32_t *v);
  int (*sync)(hs_ra ra, unsigned mask);
  int (*complete)(hs_ra ra, unsigned mask);
  int (*epoch_begin)(hs_ra ra);
  int (*epoch_end)(hs_ra ra);
  int (*set_targets)(hs_ra ra, int n, const int *ranks, const int *indices);
  int (*clear)(hs_ra ra);
} hs__ra_backend_ops;

struct hs_ra_s {
  MPI_Comm comm;
  int rank, size;
  hs_ra_backend backend;
  hs_ra_rma_sync mode;
  int narrays, capacity;
  int *caps;             /* capacity of every rank */
  int32_t *local[HS_RA_MAX_ARRAYS];
  const hs__ra_backend_ops *ops;
  hs_ra_stats stats;

  /* p2p */
  int npeers;
  int *peers;            /* distinct allowed peers, or NULL for any */
  int *tslot;            /* rank -> target slot or -1 (size entries) */
  int ntargets, nsources;
  hs__ra_target *targets;
  hs__ra_source *sources;
  int32_t *local_mem;

  /* rma */
  MPI_Win win[HS_RA_MAX_ARRAYS];
  int in_epoch;          /* between hs_ra_epoch_begin and _end (any back end) */
  int locked;            /* rma-epoch: lock_all held on every window */
  int32_t *stage;        /* origin values of puts not yet flushed (rma-epoch) */
  int nstage, stage_cap;

  /* shmem */
  void *sym;
  int *pe;               /* comm rank -> PE */
  int maxcap;
};

extern const hs__ra_backend_ops hs__ra_p2p_ops;
extern const hs__ra_backend_ops hs__ra_rma_ops;
extern const hs__ra_backend_ops hs__ra_shmem_ops;
int hs__ra_shmem_built(void);
/* Finalises OpenSHMEM (and with it MPI) if this process started it; 1 if it did. */
int hs__ra_shmem_finalize(void);

#endif
