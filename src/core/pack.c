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

void hs__pack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays, char *buf) {
  for (int i = 0; i < peer->nsend; i++) {
    const hs_section *s = &peer->send[i];
    hs__pack_section(p, s, hs__field_ptr(p, arrays, s->box.field), buf + s->msg_offset);
  }
}

void hs__unpack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays,
                     const char *buf) {
  for (int i = 0; i < peer->nrecv; i++) {
    const hs_section *s = &peer->recv[i];
    hs__unpack_section(p, s, hs__field_ptr(p, arrays, s->box.field), buf + s->msg_offset);
  }
}

/* Box copy inside one field, run by run: both programs have the same shape. */
static void copy_section(const hs_selfcopy *c, char *src_field, char *dst_field) {
  const hs_section *s = &c->src, *d = &c->dst;
  for (int k = 0; k < s->n3; k++)
    for (int j = 0; j < s->n2; j++)
      for (int i = 0; i < s->n1; i++)
        memcpy(dst_field + d->base + k * d->s3 + j * d->s2 + i * d->s1,
               src_field + s->base + k * s->s3 + j * s->s2 + i * s->s1, s->run);
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
    copy_section(c, field, field);
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

int hs__sections_datatype(const hs_plan p, const hs_section *secs, int n, void *const *arrays,
                          MPI_Datatype *out) {
  if (p->has_callbacks)
    return hs__error(HS_ERR_UNAVAILABLE,
                     "derived datatypes cannot describe fields with pack/unpack hooks");
  MPI_Datatype *types = malloc((size_t)(n > 0 ? n : 1) * sizeof *types);
  MPI_Aint *disp = malloc((size_t)(n > 0 ? n : 1) * sizeof *disp);
  int *len = malloc((size_t)(n > 0 ? n : 1) * sizeof *len);
  if (!types || !disp || !len) {
    free(types);
    free(disp);
    free(len);
    return hs__error(HS_ERR_NOMEM, "out of memory building a datatype");
  }
  int rc = HS_OK;
  int built = 0;
  for (; built < n && rc == HS_OK; built++) {
    const hs_section *s = &secs[built];
    rc = hs__section_datatype(p, s, &types[built]);
    if (rc != HS_OK) break;
    MPI_Get_address(hs__field_ptr(p, arrays, s->box.field) + s->base, &disp[built]);
    len[built] = 1;
  }
  if (rc == HS_OK) {
    int mrc = MPI_Type_create_struct(n, len, disp, types, out);
    if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(out);
    if (mrc != MPI_SUCCESS) rc = hs__mpi_error(mrc, "MPI_Type_create_struct");
  }
  for (int i = 0; i < built; i++) MPI_Type_free(&types[i]);
  free(types);
  free(disp);
  free(len);
  return rc;
}
