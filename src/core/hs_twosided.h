/* The two-sided engine (opt-in): one message per peer per swap over all peers or a subset;
 * p2p is this engine, the on-node engine runs it over the off-node peers. */
#ifndef HS_TWOSIDED_H
#define HS_TWOSIDED_H

#include "hs_transport.h"

/* The engines' message tags (after hs_transport.h's). */
enum {
  HS_TAG_REVERSE = 4, /* reverse-exchange data (src/engines/reverse.c) */
  HS_TAG_FAIL = 5,    /* zero bytes in place of a swap's data: this round failed here */
  HS_TAG_FAILTEXT = 6 /* the failure that goes with a flag, to each out-peer (src/plan/fail.c) */
};

/* ---- two-sided engine (src/engines/twosided.c): the default transport is this engine over
 * every peer; any transport may run it over a subset of peers (a hybrid: the off-node ones). */
typedef struct hs_twosided hs_twosided;
/* How a two-sided part moves its bytes (option dtype; the values index its choices). */
enum {
  HS_DTYPE_PACKED = 0, /* pack each peer's message, unpack each as it arrives */
  HS_DTYPE_BOTH = 1,   /* send and receive straight from the fields with derived datatypes */
  HS_DTYPE_RECV = 2,   /* receive with datatypes, send packed */
  HS_DTYPE_SEND = 3,   /* send with datatypes, receive packed */
  HS_DTYPE_AUTO = 4    /* timed: the first swaps alternate BOTH and PACKED, the faster kept */
};
typedef struct {
  int dtype;      /* HS_DTYPE_* */
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
#endif
