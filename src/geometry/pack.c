/* Packing engine: sections are pre-reduced to memcpy runs inside at most three loops. */
#include "hs_core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Runs shorter than this are copied with memcpy even when streaming: a partly written line
 * costs the write-combining buffer more than the read it saves. */
#define STREAM_MIN 256

/* A halo run. Streaming stores write whole 64-byte lines without first reading them (a
 * cached store reads every line it overwrites); the head and tail lines, which the run may
 * share with cells it does not own, go through memcpy. */
static inline void copy_run(char *restrict d, const char *restrict s, size_t n, bool stream) {
#if defined(__SSE2__)
  if (stream && n >= STREAM_MIN) {
    size_t head = (size_t)(-(uintptr_t)d & 63);
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
      __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
      __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
      __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
      __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
      _mm_stream_si128((__m128i *)(d + i), a);
      _mm_stream_si128((__m128i *)(d + i + 16), b);
      _mm_stream_si128((__m128i *)(d + i + 32), c);
      _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    memcpy(d + body, s + body, n - body);
    return;
  }
#endif
  (void)stream;
  memcpy(d, s, n);
}

/* n runs of 4-64 bytes, each as two fixed-size copies of w bytes (the largest power of two
 * not above the run), one at each end; they overlap unless the run is 2w. Both halves are
 * loaded before either is stored. w is a constant at every call, so the copies inline to
 * register moves. */
static inline __attribute__((always_inline)) void copy_row_small(
    char *restrict d, ptrdiff_t ds, const char *restrict s, ptrdiff_t ss, int n, size_t run,
    size_t w) {
  for (int i = 0; i < n; i++) {
    char a[32], b[32];
    memcpy(a, s + i * ss, w);
    memcpy(b, s + i * ss + run - w, w);
    memcpy(d + i * ds, a, w);
    memcpy(d + i * ds + run - w, b, w);
  }
}

/* One row of n runs of `run` bytes, strides ds and ss apart (a packed buffer's stride is
 * `run`). Halo runs are often a few cells (an x face at halo 1-5): a memcpy call per run costs
 * more than the copy, so every run of 4-64 bytes is copied inline, its size class chosen once
 * per row (swaps of depth-3 faces across the fastest axis: 0.56-0.72x the time; cartex's
 * single-precision halo 5, runs of 20 bytes, had a call each: docs/design.md). */
#define ROW_CASE(N)                                                                     \
  case N:                                                                               \
    for (int i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, N);                      \
    return;
static inline void copy_row(char *restrict d, ptrdiff_t ds, const char *restrict s,
                            ptrdiff_t ss, int n, size_t run, bool stream) {
  switch (run) {
    ROW_CASE(4)
    ROW_CASE(8)
    ROW_CASE(12)
    ROW_CASE(16)
    ROW_CASE(24)
    ROW_CASE(32)
    ROW_CASE(40)
    ROW_CASE(48)
    ROW_CASE(56)
    ROW_CASE(64)
  default:
    if (run > 64 || run < 4)
      for (int i = 0; i < n; i++) copy_run(d + i * ds, s + i * ss, run, stream);
    else if (run > 32)
      copy_row_small(d, ds, s, ss, n, run, 32);
    else if (run > 16)
      copy_row_small(d, ds, s, ss, n, run, 16);
    else if (run > 8)
      copy_row_small(d, ds, s, ss, n, run, 8);
    else
      copy_row_small(d, ds, s, ss, n, run, 4);
  }
}
#undef ROW_CASE

/* Streaming stores are weakly ordered: make them visible before anything that publishes
 * the halo (a flag another process reads, the return to the caller). */
static inline void stream_fence(bool stream) {
#if defined(__SSE2__)
  if (stream) _mm_sfence();
#endif
  (void)stream;
}

/* auto: stream when the plan's own fields exceed this core's share of the last-level cache.
 * Then the model's next reads of the halo come from memory whether or not the copy read each
 * line first. When the fields fit, a streamed halo is evicted and the model reads it back
 * from memory: on a 260 MB-L3 machine copy + read costs 1.2x with streaming (docs/design.md). */
void hs__stream_decide(hs_plan p) {
  double field_bytes = 0;
  for (int f = 0; f < p->nfields; f++) {
    const hs_fieldinfo *fi = &p->fields[f];
    double n = (double)fi->cell * (fi->comp_fastest ? 1 : fi->ncomp);
    for (int a = 0; a < p->ndims; a++) n *= fi->alloc[a];
    field_bytes += n;
  }
  long llc = -1, cores = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (llc <= 0) llc = 1 << 20;
  if (cores <= 0) cores = 1;
#if defined(__SSE2__)
  int opt = p->core->config.stream;
  p->core->stream = opt == 2 || (opt == 0 && field_bytes > (double)llc / cores);
#else
  p->core->stream = false;
#endif
}

void hs__pack_section(const hs_plan p, const hs_section *s, const char *field, char *buf) {
  const hs_fieldinfo *fi = &p->fields[s->box.field];
  if (fi->pack) {
    fi->pack(fi->ctx, &s->box, buf);
    return;
  }
  const char *src0 = field + s->base;
  const size_t run = s->run;
  for (int k = 0; k < s->n3; k++)
    for (int j = 0; j < s->n2; j++) {
      copy_row(buf, (ptrdiff_t)run, src0 + k * s->s3 + j * s->s2, s->s1, s->n1, run, false);
      buf += run * (size_t)s->n1;
    }
}

void hs__unpack_section(const hs_plan p, const hs_section *s, char *field, const char *buf) {
  const hs_fieldinfo *fi = &p->fields[s->box.field];
  if (fi->unpack) {
    fi->unpack(fi->ctx, &s->box, buf);
    return;
  }
  char *dst0 = field + s->base;
  const size_t run = s->run;
  const bool stream = p->core->stream;
  for (int k = 0; k < s->n3; k++)
    for (int j = 0; j < s->n2; j++) {
      copy_row(dst0 + k * s->s3 + j * s->s2, s->s1, buf, (ptrdiff_t)run, s->n1, run, stream);
      buf += run * (size_t)s->n1;
    }
  stream_fence(stream);
}

/* Sections s[0..n) of one message, packed at their message offsets relative to s[0]'s. */
void hs__pack_sections(const hs_plan p, const hs_section *s, int n, void *const *arrays,
                       char *buf) {
  for (int i = 0; i < n; i++)
    hs__pack_section(p, &s[i], hs__field_ptr(p, arrays, s[i].box.field),
                     buf + (s[i].msg_offset - s[0].msg_offset));
}

void hs__pack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays, char *buf) {
  for (int i = 0; i < peer->nsend; i++) {
    const hs_section *s = &peer->send[peer->send_fm[i]];
    hs__pack_section(p, s, hs__field_ptr(p, arrays, s->box.field),
                     buf + (s->msg_offset - peer->send[0].msg_offset));
  }
}

void hs__unpack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays,
                     const char *buf) {
  for (int i = 0; i < peer->nrecv; i++) {
    const hs_section *s = &peer->recv[peer->recv_fm[i]];
    hs__unpack_section(p, s, hs__field_ptr(p, arrays, s->box.field), buf + s->msg_offset);
  }
}

/* A position in a copy program, for copies between programs whose runs differ. */
typedef struct {
  const hs_section *s;
  int i, j, k;
  size_t off;
} cursor;

static inline const char *cur_ptr(const cursor *c, const char *field) {
  const hs_section *s = c->s;
  return field + s->base + c->k * s->s3 + c->j * s->s2 + c->i * s->s1 + (ptrdiff_t)c->off;
}

static inline void cur_step(cursor *c, size_t n) {
  const hs_section *s = c->s;
  c->off += n;
  if (c->off < s->run) return;
  c->off = 0;
  if (++c->i < s->n1) return;
  c->i = 0;
  if (++c->j < s->n2) return;
  c->j = 0;
  c->k++;
}

void hs__walk_runs(const hs_section *src, const char *sfield, const hs_section *dst,
                   char *dfield, hs_run_fn fn) {
  cursor a = {src, 0, 0, 0, 0}, b = {dst, 0, 0, 0, 0};
  for (size_t left = dst->bytes; left;) {
    size_t n = src->run - a.off;
    if (dst->run - b.off < n) n = dst->run - b.off;
    fn((char *)cur_ptr(&b, dfield), cur_ptr(&a, sfield), n);
    cur_step(&a, n);
    cur_step(&b, n);
    left -= n;
  }
}

static void copy_bytes(char *restrict dst, const char *restrict src, size_t n) {
  memcpy(dst, src, n);
}

void hs__copy_sections(const hs_plan p, const hs_section *src, const char *sfield,
                       const hs_section *dst, char *dfield) {
  const bool stream = p->core->stream;
  if (src->run == dst->run && src->n1 == dst->n1 && src->n2 == dst->n2 && src->n3 == dst->n3) {
    const size_t run = src->run;
    for (int k = 0; k < src->n3; k++)
      for (int j = 0; j < src->n2; j++) {
        const char *a = sfield + src->base + k * src->s3 + j * src->s2;
        char *b = dfield + dst->base + k * dst->s3 + j * dst->s2;
        copy_row(b, dst->s1, a, src->s1, src->n1, run, stream);
      }
    stream_fence(stream);
    return;
  }
  hs__walk_runs(src, sfield, dst, dfield, copy_bytes);
}

static void self_copies(const hs_plan p, void *const *arrays, int i0, int i1) {
  for (int i = i0; i < i1; i++) {
    const hs_selfcopy *c = &p->self[i];
    int f = c->src.box.field;
    const hs_fieldinfo *fi = &p->fields[f];
    if (fi->pack) {
      /* Policy hooks: through the plan's bounce buffer (sized at plan creation). */
      fi->pack(fi->ctx, &c->src.box, p->core->self_bounce);
      fi->unpack(fi->ctx, &c->dst.box, p->core->self_bounce);
      continue;
    }
    char *field = hs__field_ptr(p, arrays, f);
    hs__copy_sections(p, &c->src, field, &c->dst, field);
  }
}

void hs__self_copy(const hs_plan p, void *const *arrays) { self_copies(p, arrays, 0, p->nself); }

/* p->self is sorted by field (finish_self in src/geometry/geometry.c): f's are one stretch. */
void hs__self_copy_field(const hs_plan p, void *const *arrays, int f) {
  int lo = 0, hi = p->nself;
  while (lo < hi) {
    int m = lo + (hi - lo) / 2;
    if (p->self[m].src.box.field < f) lo = m + 1;
    else hi = m;
  }
  hi = lo;
  while (hi < p->nself && p->self[hi].src.box.field == f) hi++;
  self_copies(p, arrays, lo, hi);
}

int hs__section_datatype(const hs_plan p, const hs_section *s, MPI_Datatype *out) {
  (void)p;
  MPI_Datatype t0, t1, t2, t3;
  HS_MPI(MPI_Type_contiguous((int)s->run, MPI_BYTE, &t0));
  HS_MPI(MPI_Type_create_hvector(s->n1, 1, s->s1, t0, &t1));
  HS_MPI(MPI_Type_create_hvector(s->n2, 1, s->s2, t1, &t2));
  HS_MPI(MPI_Type_create_hvector(s->n3, 1, s->s3, t2, &t3));
  MPI_Type_free(&t0);
  MPI_Type_free(&t1);
  MPI_Type_free(&t2);
  *out = t3;
  return HS_OK;
}
