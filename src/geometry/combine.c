/* The reverse's combine (docs/design.md, "Reverse exchange"): one kernel per type and op,
 * applied run by run to a section from packed bytes, from another box (through the packing
 * engine's walker, hs__walk_runs), or through the fields' hooks. */
#include "hs_core.h"

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
/* -O2's "very cheap" cost model leaves these loops scalar (they have a remainder); and one
 * clone per vector width, chosen at load time: AVX2 halves SSE2's instructions per byte. Each
 * element's operation is the same in every clone, so are the bits. */
#define VECTORISE                                                                  \
  __attribute__((optimize("vect-cost-model=dynamic"),                              \
                 target_clones("avx512f", "avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
#define VECTORISE __attribute__((optimize("vect-cost-model=dynamic")))
#else
#define VECTORISE
#endif

/* dst = op(dst, src) over whole elements; memcpy loads: message buffers may be unaligned. */
#define KERNEL(name, T, EXPR)                                                       \
  VECTORISE static void name(char *restrict dst, const char *restrict src, size_t bytes) { \
    const size_t n = bytes / sizeof(T);                                             \
    for (size_t i = 0; i < n; i++) {                                                \
      T a, b;                                                                       \
      memcpy(&a, dst + i * sizeof(T), sizeof(T));                                   \
      memcpy(&b, src + i * sizeof(T), sizeof(T));                                   \
      a = (EXPR);                                                                   \
      memcpy(dst + i * sizeof(T), &a, sizeof(T));                                   \
    }                                                                               \
  }
#define KERNELS(T, tag, SUM)            \
  KERNEL(sum_##tag, T, SUM)             \
  KERNEL(max_##tag, T, b > a ? b : a)   \
  KERNEL(min_##tag, T, b < a ? b : a)
KERNELS(double, f64, a + b)
KERNELS(float, f32, a + b)
/* integer sums wrap (two's complement) instead of overflowing */
KERNELS(int32_t, i32, (int32_t)((uint32_t)a + (uint32_t)b))
KERNELS(int64_t, i64, (int64_t)((uint64_t)a + (uint64_t)b))

static void replace(char *restrict dst, const char *restrict src, size_t bytes) {
  memcpy(dst, src, bytes);
}

hs_run_fn hs__kernel_of(hs_type t, hs_op op) {
  static const hs_run_fn k[4][3] = {{sum_f64, max_f64, min_f64}, {sum_f32, max_f32, min_f32},
                                 {sum_i32, max_i32, min_i32}, {sum_i64, max_i64, min_i64}};
  if (op == HS_OP_REPLACE || (unsigned)t > 3u || (unsigned)op > 2u) return replace;
  return k[t][op];
}

/* Combine box `src` of sfield into box `dst` of dfield: the same elements in the same order,
 * the runs possibly cut differently (other halo widths), walked by the packing engine's one
 * walker. Runs hold whole elements, so every common stretch does too. */
void hs__combine_boxes(const hs_section *src, const char *sfield, const hs_section *dst,
                          char *dfield, hs_run_fn k) {
  hs__walk_runs(src, sfield, dst, dfield, k);
}

/* Combine packed bytes (s->bytes, section order) into section s of the field. */
void hs__combine_in(const hs_plan p, const hs_section *s, char *field, const char *buf,
                       hs_run_fn k, char *bounce) {
  const hs_fieldinfo *fi = &p->fields[s->box.field];
  if (fi->pack) { /* hooks: read the owner's box, combine, write it back */
    fi->pack(fi->ctx, &s->box, bounce);
    k(bounce, buf, s->bytes);
    fi->unpack(fi->ctx, &s->box, bounce);
    return;
  }
  for (int c = 0; c < s->n3; c++)
    for (int j = 0; j < s->n2; j++) {
      char *d = field + s->base + c * s->s3 + j * s->s2;
      for (int i = 0; i < s->n1; i++, buf += s->run) k(d + i * s->s1, buf, s->run);
    }
}

/* Self contribution: halo box src into interior strip dst of the same field. */
void hs__combine_self(const hs_plan p, const hs_section *dst, const hs_section *src,
                         char *field, hs_run_fn k, char *bounce) {
  if (!p->fields[dst->box.field].pack) {
    hs__combine_boxes(src, field, dst, field, k);
    return;
  }
  /* The halo first (bounce holds two sections: halo, then the owner's box). */
  hs__pack_section(p, src, field, bounce);
  hs__combine_in(p, dst, field, bounce, k, bounce + src->bytes);
}
