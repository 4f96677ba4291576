/* Test helper: is the transport HALOSWAP_TRANSPORT names (default p2p) usable on
 * MPI_COMM_WORLD? Collective. Returns 1, or 0 with the reason in why. */
#include <haloswap.h>
#include <stdio.h>
#include <string.h>

int hs_test_transport_usable(char *why, int len);

int hs_test_transport_usable(char *why, int len) {
  const char *spec = hs_transport_id_name(HS_TRANSPORT_DEFAULT);
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
  if (len > 0) why[0] = 0;
  return hs_transport_available(MPI_COMM_WORLD, name, why, (size_t)(len > 0 ? len : 0)) == HS_OK;
}
