/* Internal structure of the remote access layer (haloswap_ra.h). Not installed.
 * The API (ra.c) checks arguments, keeps statistics and dispatches to a back end through
 * hs__ra_ops; each back end keeps its own state behind ra->impl, as transports do. */
#ifndef HS_RA_INTERNAL_H
#define HS_RA_INTERNAL_H

#include "haloswap_ra.h"
#include "hs_transport.h"

/* Symbols shared between the layer's files but not part of libhaloswap_ra's interface. */
#if defined(__GNUC__)
#define HS_RA_HIDDEN __attribute__((visibility("hidden")))
#else
#define HS_RA_HIDDEN
#endif

/* Every op gets a layer whose arguments the API has checked; puts and gets target another
 * rank (the API handles the caller's own elements). NULL optional ops do nothing. */
typedef struct hs__ra_ops {
  /* Optional: HS_OK if usable in this build, else HS_ERR_UNAVAILABLE and a reason. */
  int (*available)(char *why, size_t len);
  /* Collective; sets ra->impl and ra->local[]; agrees on the result. Elements start at 0. */
  int (*create)(hs_ra ra);
  void (*destroy)(hs_ra ra); /* collective; also after a failed create */
  int (*put)(hs_ra ra, int a, int rank, int index, int32_t v);
  int (*get)(hs_ra ra, int a, int rank, int index, int32_t *v);
  int (*sync)(hs_ra ra, unsigned mask);
  int (*complete)(hs_ra ra, unsigned mask);
  int (*epoch_begin)(hs_ra ra);                                        /* optional */
  int (*epoch_end)(hs_ra ra);                                          /* optional */
  int (*set_targets)(hs_ra ra, int n, const int *ranks, const int *indices); /* optional */
  /* Optional: after the API zeroed the owners' elements, before its barrier. */
  int (*clear)(hs_ra ra);
} hs__ra_ops;

/* A back end's ops table from its functions prefix_create ... prefix_complete; the last
 * arguments set the optional ops. */
#define HS_DEFINE_RA_OPS(sym, prefix, ...)                                                  \
  const hs__ra_ops sym = {.create = prefix##_create,                                        \
                          .destroy = prefix##_destroy,                                      \
                          .put = prefix##_put,                                              \
                          .get = prefix##_get,                                              \
                          .sync = prefix##_sync,                                            \
                          .complete = prefix##_complete,                                    \
                          __VA_ARGS__}

struct hs_ra_s {
  MPI_Comm comm;           /* the layer's own duplicate */
  int rank, size;
  hs_ra_backend backend;
  hs_ra_rma_sync mode;
  int narrays, capacity;
  int *caps;               /* capacity of every rank */
  int npeers;              /* distinct allowed peers other than this rank */
  int *peers;              /* or NULL for any rank */
  int in_epoch;            /* between hs_ra_epoch_begin and _end */
  int32_t *local[HS_RA_MAX_ARRAYS]; /* this rank's elements, set by the back end */
  const hs__ra_ops *ops;
  void *impl;              /* back-end state */
  hs_ra_stats stats;
};

HS_RA_HIDDEN extern const hs__ra_ops hs__ra_p2p_ops;
HS_RA_HIDDEN extern const hs__ra_ops hs__ra_rma_ops;
HS_RA_HIDDEN extern const hs__ra_ops hs__ra_shmem_ops;

#endif
