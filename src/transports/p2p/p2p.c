/* Transport "p2p": the core's two-sided engine (src/engines/twosided.c) over every peer: one
 * message per peer per swap, receives posted first.
 * dtype=auto (default): the first 18 swaps alternate between derived datatypes on both sides
 * (one copy inside MPI) and packing, and all ranks keep the one whose calls took least
 * (two unmeasured rounds, then the median of 7 each, the slowest rank's). Which wins depends
 * on the MPI library and the load (docs/benchmarks.md, "p2p: datatypes or packing").
 * dtype=0|1|recv|send fixes the choice. Fields with pack/unpack hooks always pack.
 * persistent=1: persistent requests (off by default). */
#include "hs_transport.h"
#include "hs_twosided.h"

static int p2p_setup(hs_plan p) {
  return hs__twosided_create(p, NULL, 0, p->config, (hs_twosided **)&p->impl);
}

static int p2p_start(hs_plan p, void *const *arrays) {
  return hs__twosided_start(p, p->impl, arrays);
}

static int p2p_complete(hs_plan p, void *const *arrays) {
  return hs__twosided_complete(p, p->impl, arrays);
}

static int p2p_test(hs_plan p, void *const *arrays, int *done) {
  return hs__twosided_test(p, p->impl, arrays, done);
}

static void p2p_destroy(hs_plan p) {
  hs__twosided_free(p, p->impl);
  p->impl = NULL;
}

HS_DEFINE_TRANSPORT(hs__transport_p2p, p2p, "p2p", HS_TRANSPORT_P2P,
                    HS_OPS_DEFAULT | HS_OPS_FAILROUND,
                    "two-sided MPI: one message per peer, derived datatypes or packed",
                    hs__twosided_options, hs_twosided_config, .test = p2p_test);
