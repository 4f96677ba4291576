/* The library's version (include/haloswap.h's HS_VERSION_*), for programs and bindings that
 * need the one they run against rather than the one they were compiled with. */
#include "haloswap.h"

#define HS__STR(x) #x
#define HS__XSTR(x) HS__STR(x)

const char *hs_version(int *major, int *minor, int *patch) {
  if (major) *major = HS_VERSION_MAJOR;
  if (minor) *minor = HS_VERSION_MINOR;
  if (patch) *patch = HS_VERSION_PATCH;
  return HS__XSTR(HS_VERSION_MAJOR) "." HS__XSTR(HS_VERSION_MINOR) "." HS__XSTR(HS_VERSION_PATCH);
}
