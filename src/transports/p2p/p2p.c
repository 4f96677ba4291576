/* Transport "p2p": the core's two-sided engine (src/core/twosided.c) over every peer: one
 * message per peer per swap, receives posted first.
 * dtype=auto (default): the first 18 swaps alternate between derived datatypes on both sides
 * (one copy inside MPI) and packing, and all ranks keep the one whose calls took least
 * (two unmeasured rounds, then the median of 7 each, the slowest rank's). Which wins depends on the MPI library and the load:
 * on an idle machine datatypes were 2x faster than packing with Open MPI 4.1 and 1.1x with
 * MPICH 4.0 (MONC case); with more ranks than free cores, packing was 3.6x (Open MPI) and
 * 4.3x (MPICH) faster, because a large non-contiguous message moves in many fragments that
 * each need both processes running (docs/benchmarks.md). dtype=0|1|recv|send fixes the
 * choice. Fields with pack/unpack hooks always pack. persistent=1: persistent requests
 * (measured no faster here, so off by default). */
#include "hs_transport.h"

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
