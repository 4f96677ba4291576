/* Small text helpers for messages and descriptions. */
#include "hs_transport.h"

#include <stdio.h>

void hs__appendf(char *buf, size_t len, size_t *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + (*n < len ? *n : len), *n < len ? len - *n : 0, fmt, ap);
  va_end(ap);
  if (w > 0) *n += (size_t)w;
}
