/* Field memory of the benchmarks that measure hs_alloc against malloc (hs_bench,
 * hs_fields_bench): one release for either. */
#ifndef HS_BENCH_MEMORY_H
#define HS_BENCH_MEMORY_H

#include "haloswap.h"

#include <stdlib.h>

/* A field's memory, from hs_alloc on d (use_hs) or malloc. */
static inline void bench_field_free(hs_decomp d, int use_hs, void *field) {
  if (use_hs) hs_free(d, field);
  else free(field);
}

#endif
