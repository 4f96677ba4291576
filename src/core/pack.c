/* Packing engine: sections are pre-reduced to memcpy runs inside at most three loops. */
#include "hs_internal.h"

#include <stdlib.h>
#include <string.h>

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
      const char *src = src0 + k * s->s3 + j * s->s2;
      for (int i = 0; i < s->n1; i++, buf += run) memcpy(buf, src + i * s->s1, run);
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
  for (int k = 0; k < s->n3; k++)
    for (int j = 0; j < s->n2; j++) {
      char *dst = dst0 + k * s->s3 + j * s->s2;
      for (int i = 0; i < s->n1; i++, buf += run) memcpy(dst + i * s->s1, buf, run);
    }
}

/* Sections s[0..n) of one message, packed at their message offsets relative to s[0]'s. */
void hs__pack_sections(const hs_plan p, const hs_section *s, int n, void *const *arrays,
                       char *buf) {
  for (int i = 0; i < n; i++)
    hs__pack_section(p, &s[i], hs__field_ptr(p, arrays, s[i].box.field),
                     buf + (s[i].msg_offset - s[0].msg_offset));
}

void hs__pack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays, char *buf) {
  hs__pack_sections(p, peer->send, peer->nsend, arrays, buf);
}

void hs__unpack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays,
                     const char *buf) {
  for (int i = 0; i < peer->nrecv; i++) {
    const hs_section *s = &peer->recv[i];
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

void hs__copy_sections(const hs_section *src, const char *sfield, const hs_section *dst,
                       char *dfield) {
  if (src->run == dst->run && src->n1 == dst->n1 && src->n2 == dst->n2 && src->n3 == dst->n3) {
    const size_t run = src->run;
    for (int k = 0; k < src->n3; k++)
      for (int j = 0; j < src->n2; j++) {
        const char *a = sfield + src->base + k * src->s3 + j * src->s2;
        char *b = dfield + dst->base + k * dst->s3 + j * dst->s2;
        for (int i = 0; i < src->n1; i++) memcpy(b + i * dst->s1, a + i * src->s1, run);
      }
    return;
  }
  cursor a = {src, 0, 0, 0, 0}, b = {dst, 0, 0, 0, 0};
  for (size_t left = dst->bytes; left;) {
    size_t n = src->run - a.off;
    if (dst->run - b.off < n) n = dst->run - b.off;
    memcpy((char *)cur_ptr(&b, dfield), cur_ptr(&a, sfield), n);
    cur_step(&a, n);
    cur_step(&b, n);
    left -= n;
  }
}

void hs__self_copy(const hs_plan p, void *const *arrays) {
  for (int i = 0; i < p->nself; i++) {
    const hs_selfcopy *c = &p->self[i];
    int f = c->src.box.field;
    const hs_fieldinfo *fi = &p->fields[f];
    if (fi->pack) {
      /* Policy hooks: through the plan's bounce buffer (sized at plan creation). */
      fi->pack(fi->ctx, &c->src.box, p->self_bounce);
      fi->unpack(fi->ctx, &c->dst.box, p->self_bounce);
      continue;
    }
    char *field = hs__field_ptr(p, arrays, f);
    hs__copy_sections(&c->src, field, &c->dst, field);
  }
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
