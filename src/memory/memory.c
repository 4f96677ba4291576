/* Memory a plan's transport holds, counted for hs_plan_get_stats. Each block carries its
 * size in a header, so freeing needs no bookkeeping by the caller. */
#include "hs_core.h"

#include <stdarg.h>
#include <stdlib.h>

typedef union {
  size_t n;
  max_align_t align;
} header;

void *hs__malloc(hs_plan p, size_t n) {
  header *h = malloc(sizeof(header) + n);
  if (!h) return NULL;
  h->n = n;
  p->core->transport_bytes += n;
  return h + 1;
}

void *hs__calloc(hs_plan p, size_t n) {
  header *h = calloc(1, sizeof(header) + n);
  if (!h) return NULL;
  h->n = n;
  p->core->transport_bytes += n;
  return h + 1;
}

void hs__free(hs_plan p, void *ptr) {
  if (!ptr) return;
  header *h = (header *)ptr - 1;
  p->core->transport_bytes -= h->n;
  free(h);
}

int hs__calloc_arrays(hs_plan p, size_t n, ...) {
  va_list ap;
  va_start(ap, n);
  int ok = 1;
  for (void **slot; (slot = va_arg(ap, void **));) {
    size_t elem = va_arg(ap, size_t);
    *slot = hs__calloc(p, (n ? n : 1) * elem);
    ok &= *slot != NULL;
  }
  va_end(ap);
  return ok ? HS_OK : hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
}

void hs__account(hs_plan p, int64_t bytes) { p->core->transport_bytes += (uint64_t)bytes; }

void *hs__impl_new(hs_plan p, size_t bytes) {
  p->impl = hs__calloc(p, bytes);
  if (!p->impl) hs__error(HS_ERR_NOMEM, "%s: out of memory", p->transport_name);
  return p->impl;
}
