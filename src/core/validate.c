/* Plan validation: every argument checked on every rank (then agreed by the caller), and
 * the collective arguments compared across ranks. */
#include "hs_internal.h"

#include <stdio.h>
#include <string.h>

static int check_fields(const hs_decomp d, const hs_plan_desc *desc) {
  if (desc->nfields < 1 || desc->nfields > HS_MAX_FIELDS)
    return hs__error(HS_ERR_ARG, "hs_plan_create: nfields = %d, must be 1..%d", desc->nfields,
                     HS_MAX_FIELDS);
  if (!desc->fields) return hs__error(HS_ERR_ARG, "hs_plan_create: fields is NULL");
  for (int f = 0; f < desc->nfields; f++) {
    const hs_field *fl = &desc->fields[f];
    if (hs_type_size(fl->type) == 0)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].type = %d is not an hs_type", f,
                       (int)fl->type);
    if ((fl->pack == NULL) != (fl->unpack == NULL))
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: fields[%d] has only one of pack/unpack; give both or "
                       "neither",
                       f);
    if (fl->pack) continue;
    if (!fl->data)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].data is NULL", f);
    if (fl->layout != HS_LAYOUT_ZFAST && fl->layout != HS_LAYOUT_XFAST &&
        fl->layout != HS_LAYOUT_STRIDED)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].layout = %d is not an hs_layout",
                       f, (int)fl->layout);
    for (int a = 0; a < d->ndims; a++) {
      if (fl->halo[a] < desc->depth[a] || fl->halo[a] < 0)
        return hs__error(HS_ERR_ARG,
                         "hs_plan_create: fields[%d].halo[%d] = %d is smaller than depth[%d] = %d",
                         f, a, fl->halo[a], a, desc->depth[a]);
      if (fl->layout == HS_LAYOUT_STRIDED && fl->stride[a] == 0)
        return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].stride[%d] = 0", f, a);
    }
  }
  return HS_OK;
}

int hs__check_desc(const hs_decomp d, const hs_plan_desc *desc) {
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    int dp = desc->depth[a];
    if (a >= d->ndims) {
      if (dp != 0)
        return hs__error(HS_ERR_ARG,
                         "hs_plan_create: depth[%d] = %d but the grid has only %d axes", a, dp,
                         d->ndims);
      continue;
    }
    if (dp < 0 || dp > HS_MAX_DEPTH)
      return hs__error(HS_ERR_ARG, "hs_plan_create: depth[%d] = %d, must be 0..%d", a, dp,
                       HS_MAX_DEPTH);
    if (dp > d->local[a])
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: depth[%d] = %d is larger than the local extent %d on "
                       "axis %d of rank %d (global %d over %d ranks)",
                       a, dp, d->local[a], a, d->rank, d->global[a], d->procs[a]);
  }
  if (desc->stencil != HS_STENCIL_BOX && desc->stencil != HS_STENCIL_STAR)
    return hs__error(HS_ERR_ARG, "hs_plan_create: stencil = %d is not an hs_stencil",
                     (int)desc->stencil);
  if (desc->oneway != HS_ONEWAY_NONE) {
    if (desc->oneway != HS_ONEWAY_LOWER && desc->oneway != HS_ONEWAY_UPPER)
      return hs__error(HS_ERR_ARG, "hs_plan_create: oneway = %d is not an hs_oneway",
                       (int)desc->oneway);
    if (desc->oneway_axis < 0 || desc->oneway_axis >= d->ndims)
      return hs__error(HS_ERR_ARG, "hs_plan_create: oneway_axis = %d, must be 0..%d",
                       desc->oneway_axis, d->ndims - 1);
    if (desc->depth[desc->oneway_axis] == 0)
      return hs__error(HS_ERR_ARG, "hs_plan_create: oneway_axis = %d has depth 0",
                       desc->oneway_axis);
  }
  return check_fields(d, desc);
}

/* 32-bit FNV-1a, for comparing strings across ranks. */
static int hash_str(const char *s) {
  unsigned h = 2166136261u;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return (int)(h & 0x7fffffff);
}

int hs__check_same(hs_plan p, const hs_plan_desc *desc) {
  enum { N = 11 };
  int v[N] = {desc->nfields, desc->depth[0], desc->depth[1], desc->depth[2],
              (int)desc->stencil, (int)desc->oneway, desc->oneway_axis, 0,
              hash_str(p->transport_name), 0, 0};
  unsigned th = 0;
  for (int f = 0; f < desc->nfields; f++)
    th = th * 31u + (unsigned)desc->fields[f].type * 7u + (desc->fields[f].pack ? 1u : 0u);
  v[7] = (int)(th & 0x7fffffff);
  unsigned oh = 0;
  for (int i = 0; i < p->noptions; i++)
    oh ^= (unsigned)hash_str(p->options[i].key) * 3u + (unsigned)hash_str(p->options[i].val);
  v[9] = (int)(oh & 0x7fffffff);
  v[10] = p->has_callbacks;
  int lo[N], hi[N];
  MPI_Allreduce(v, lo, N, MPI_INT, MPI_MIN, p->comm);
  MPI_Allreduce(v, hi, N, MPI_INT, MPI_MAX, p->comm);
  static const char *names[N] = {"nfields", "depth[0]", "depth[1]", "depth[2]", "stencil",
                                 "oneway", "oneway_axis", "field types", "transport",
                                 "transport options", "pack/unpack hooks"};
  for (int i = 0; i < N; i++)
    if (lo[i] != hi[i]) {
      if (i == 7 || i == 8 || i == 9)
        return hs__error(HS_ERR_MISMATCH, "hs_plan_create: ranks disagree on the %s (this rank: "
                                          "%s)",
                         names[i], i == 8 ? p->transport_name : "see the plan description");
      return hs__error(HS_ERR_MISMATCH,
                       "hs_plan_create: ranks disagree on %s (values from %d to %d)", names[i],
                       lo[i], hi[i]);
    }
  return HS_OK;
}
