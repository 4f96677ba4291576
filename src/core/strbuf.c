/* Small text helpers for messages and descriptions. */
#include "hs_internal.h"

#include <stdio.h>

void hs__appendf(char *buf, size_t len, size_t *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + (*n < len ? *n : len), *n < len ? len - *n : 0, fmt, ap);
  va_end(ap);
  if (w > 0) *n += (size_t)w;
}

void hs__transport_list(char *buf, size_t len) {
  size_t n = 0;
  if (len) buf[0] = 0;
  for (int i = 0; i < hs_transport_count(); i++)
    hs__appendf(buf, len, &n, "%s%s", i ? ", " : "", hs_transport_name(i));
}
