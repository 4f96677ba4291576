/* Plan validation: every argument checked on every rank (then agreed by the caller), and
 * the collective arguments compared across ranks. */
#include "hs_core.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
    for (int a = 0; a < d->ndims; a++)
      if (fl->layout == HS_LAYOUT_STRIDED && fl->stride[a] == 0)
        return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].stride[%d] = 0", f, a);
    if (fl->ncomp > 1 && fl->layout == HS_LAYOUT_STRIDED && fl->comp_stride == 0)
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: fields[%d] has %d components but comp_stride = 0 "
                       "(HS_LAYOUT_STRIDED needs the element stride between components)",
                       f, fl->ncomp);
  }
  return HS_OK;
}

/* Per-field geometry (hook fields too: their boxes follow it). */
static int check_geometry(const hs_decomp d, const hs_plan_desc *desc, int f) {
  const hs_field *fl = &desc->fields[f];
  if (fl->ncomp < 0 || fl->ncomp > 65536)
    return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].ncomp = %d, must be 0..65536", f,
                     fl->ncomp);
  if (fl->ncomp > 1 && fl->comp_order != HS_COMP_SLOWEST && fl->comp_order != HS_COMP_FASTEST)
    return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].comp_order = %d is not an "
                                 "hs_comp_order", f, fl->comp_order);
  if (fl->ncomp > 1 && fl->pack)
    return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] has %d components and pack/unpack "
                                 "hooks; hooks see scalar fields only", f, fl->ncomp);
  for (int a = 0; a < d->ndims; a++) {
    int hl = fl->halo[a], hh = fl->halo_hi_set[a] ? fl->halo_hi[a] : fl->halo[a];
    if (hl < 0 || hh < 0)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] halo on axis %d is %d below, %d "
                                   "above; must be >= 0", f, a, hl, hh);
    if (fl->stagger[a] != HS_STAGGER_CELL && fl->stagger[a] != HS_STAGGER_NODE)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].stagger[%d] = %d is not an "
                                   "hs_stagger", f, a, fl->stagger[a]);
    int node = fl->stagger[a] == HS_STAGGER_NODE;
    if (node && fl->owner[a] != HS_OWNER_UPPER && fl->owner[a] != HS_OWNER_LOWER)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].owner[%d] = %d is not an "
                                   "hs_owner", f, a, fl->owner[a]);
    if (fl->extent[a] < 0)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d].extent[%d] = %d, must be >= 0",
                       f, a, fl->extent[a]);
    if (fl->extent[a] > 0 && d->procs[a] > 1)
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: fields[%d].extent[%d] = %d but axis %d is split over %d "
                       "ranks; a field's own extent is only for an axis kept whole",
                       f, a, fl->extent[a], a, d->procs[a]);
    int cells = fl->extent[a] > 0 ? fl->extent[a] : d->local[a];
    /* Allocated extents and byte offsets must fit the index types (found by fuzzing). */
    if (hl > HS_MAX_HALO || hh > HS_MAX_HALO)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] halo on axis %d is %d below, %d "
                                   "above; must be <= %d", f, a, hl, hh, HS_MAX_HALO);
    if ((long long)cells + 1 + hl + hh > INT_MAX)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] on axis %d has %d cells and a "
                                   "halo of %d + %d: more than %d points",
                       f, a, cells, hl, hh, INT_MAX);
    int lo_extra = node && fl->owner[a] == HS_OWNER_LOWER;
    int hi_extra = node && fl->owner[a] == HS_OWNER_UPPER;
    /* A box on a wall of a box decomposition receives nothing past it, so its halo there may
     * be thinner than the depth (BRAMS's arrays stop at the domain's boundary rows). */
    int wall_lo = d->box && !d->periodic[a] && d->box[6 * d->rank + a] == 0;
    int wall_hi = d->box && !d->periodic[a] && d->box[6 * d->rank + 3 + a] == d->global[a];
    if (wall_lo) hl = INT_MAX;
    if (wall_hi) hh = INT_MAX;
    if (!fl->depth_set[a]) {
      if (hl < desc->depth[a] || hh < desc->depth[a])
        return hs__error(HS_ERR_ARG,
                         "hs_plan_create: fields[%d].halo[%d] = %d is smaller than depth[%d] = %d",
                         f, a, hl < hh ? hl : hh, a, desc->depth[a]);
      if (desc->depth[a] > cells - (lo_extra | hi_extra))
        return hs__error(HS_ERR_ARG,
                         "hs_plan_create: fields[%d]: depth[%d] = %d exceeds the %d points it "
                         "owns on axis %d of rank %d",
                         f, a, desc->depth[a], cells - (lo_extra | hi_extra), a, d->rank);
      continue;
    }
    int dl = fl->depth_lo[a], dh = fl->depth_hi[a];
    if (dl < 0 || dh < 0)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] depth on axis %d is %d below, %d "
                                   "above; each must be >= 0", f, a, dl, dh);
    if (dl > hl || dh > hh)
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: fields[%d] depth on axis %d (%d below, %d above) exceeds "
                       "its allocated halo (%d below, %d above)", f, a, dl, dh, hl, hh);
    /* A depth is bounded by the points of the rank that sends it: each rank checks its own,
     * which bounds its neighbours' halos (depths are the same on every rank). */
    if (dl > cells - lo_extra || dh > cells - hi_extra)
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: fields[%d] depth on axis %d (%d below, %d above) exceeds "
                       "the points rank %d owns there (%d cells%s), which its neighbours' halos "
                       "are filled from", f, a, dl, dh, d->rank, cells,
                       node ? ", one shared plane not owned" : "");
  }
  double bytes = (double)hs_type_size(fl->type) * (fl->ncomp > 1 ? fl->ncomp : 1);
  for (int a = 0; a < d->ndims; a++) {
    int hh = fl->halo_hi_set[a] ? fl->halo_hi[a] : fl->halo[a];
    bytes *= (double)(fl->extent[a] > 0 ? fl->extent[a] : d->local[a]) + 1 + fl->halo[a] + hh;
  }
  if (bytes > (double)PTRDIFF_MAX / 2)
    return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] would span %.3g bytes: too large "
                                 "to address", f, bytes);
  for (int a = d->ndims; a < HS_MAX_DIMS; a++)
    if ((fl->depth_set[a] && (fl->depth_lo[a] || fl->depth_hi[a])) || fl->stagger[a] ||
        fl->extent[a] > 1)
      return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] sets a geometry on axis %d but "
                                   "the grid has only %d axes", f, a, d->ndims);
  return HS_OK;
}

/* The combine order's own arguments (what needs the plan's offsets or axes is checked when
 * they are known: hs__order_offsets, hs__check_sweep). */
static int check_order(const hs_decomp d, const hs_plan_desc *desc) {
  if (desc->order == HS_ORDER_CANONICAL) return HS_OK;
  if (desc->order == HS_ORDER_OFFSETS) {
    if (desc->norder < 1 || desc->norder > HS_MAX_OFFSETS)
      return hs__error(HS_ERR_ARG, "hs_plan_create: norder = %d, must be 1..%d (HS_ORDER_OFFSETS "
                                   "names each offset the plan uses once)", desc->norder,
                       HS_MAX_OFFSETS);
    if (!desc->order_offsets)
      return hs__error(HS_ERR_ARG, "hs_plan_create: order_offsets is NULL with norder = %d",
                       desc->norder);
    for (int k = 0; k < desc->norder; k++) {
      const int *o = desc->order_offsets + 3 * k;
      bool ok = o[0] || o[1] || o[2];
      for (int a = 0; a < 3; a++) ok &= o[a] >= -1 && o[a] <= 1;
      if (!ok)
        return hs__error(HS_ERR_ARG, "hs_plan_create: order_offsets[%d] = (%d,%d,%d): each "
                                     "component must be -1, 0 or 1, not all 0",
                         k, o[0], o[1], o[2]);
      for (int j = 0; j < k; j++)
        if (!memcmp(o, desc->order_offsets + 3 * j, 3 * sizeof *o))
          return hs__error(HS_ERR_ARG, "hs_plan_create: order_offsets[%d] = (%d,%d,%d) repeats "
                                       "order_offsets[%d]; name each offset once", k, o[0], o[1],
                           o[2], j);
    }
    return HS_OK;
  }
  if (desc->order != HS_ORDER_SWEEP)
    return hs__error(HS_ERR_ARG, "hs_plan_create: order = %d is not an hs_order", (int)desc->order);
  if (desc->nsweep < 0 || desc->nsweep > d->ndims)
    return hs__error(HS_ERR_ARG, "hs_plan_create: nsweep = %d, must be 0..%d (0: the exchanged "
                                 "axes x, y, z)", desc->nsweep, d->ndims);
  for (int k = 0; k < desc->nsweep; k++) {
    int a = desc->sweep_axes[k];
    if (a < 0 || a >= d->ndims)
      return hs__error(HS_ERR_ARG, "hs_plan_create: sweep_axes[%d] = %d, must be 0..%d", k, a,
                       d->ndims - 1);
    for (int j = 0; j < k; j++)
      if (desc->sweep_axes[j] == a)
        return hs__error(HS_ERR_ARG, "hs_plan_create: sweep_axes[%d] = %d repeats "
                                     "sweep_axes[%d]; name each axis once", k, a, j);
  }
  if (desc->oneway != HS_ONEWAY_NONE)
    return hs__error(HS_ERR_ARG, "hs_plan_create: HS_ORDER_SWEEP with oneway = %d: a sweep "
                                 "exchanges both faces of every axis; use HS_ONEWAY_NONE",
                     (int)desc->oneway);
  if (desc->stencil == HS_STENCIL_STAR)
    return hs__error(HS_ERR_ARG, "hs_plan_create: HS_ORDER_SWEEP with stencil = "
                                 "HS_STENCIL_STAR: a sweep carries edges and corners through the "
                                 "faces (full transverse slabs); use HS_STENCIL_BOX");
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
    if (dp < 0)
      return hs__error(HS_ERR_ARG, "hs_plan_create: depth[%d] = %d, must be >= 0", a, dp);
    /* A box decomposition's halo may reach past its neighbours, not past one global wrap. */
    if (d->box && dp > d->global[a])
      return hs__error(HS_ERR_ARG, "hs_plan_create: depth[%d] = %d is larger than the global "
                       "extent %d on axis %d of the box decomposition", a, dp, d->global[a], a);
    /* Bounded by the sender's extent: each rank checks its own (see check_geometry). */
    if (!d->box && dp > d->local[a])
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: depth[%d] = %d is larger than the local extent %d on "
                       "axis %d of rank %d (global %d over %d ranks), which its neighbours' "
                       "halos are filled from",
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
  int rc = check_order(d, desc);
  if (rc == HS_OK) rc = check_fields(d, desc);
  for (int f = 0; rc == HS_OK && f < desc->nfields; f++) rc = check_geometry(d, desc, f);
  return rc;
}

/* 32-bit FNV-1a, for comparing strings across ranks. */
static int hash_str(const char *s) {
  unsigned h = 2166136261u;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return (int)(h & 0x7fffffff);
}

int hs__check_same(hs_plan p, const hs_plan_desc *desc) {
  enum { N = 13 };
  int v[N] = {desc->nfields, desc->depth[0], desc->depth[1], desc->depth[2],
              (int)desc->stencil, (int)desc->oneway, desc->oneway_axis, 0,
              hash_str(p->transport_name), 0, 0, 0, 0};
  unsigned th = 0;
  for (int f = 0; f < desc->nfields; f++)
    th = th * 31u + (unsigned)desc->fields[f].type * 7u + (desc->fields[f].pack ? 1u : 0u);
  v[7] = (int)(th & 0x7fffffff);
  unsigned oh = 0;
  for (int i = 0; i < p->core->noptions; i++)
    oh ^= (unsigned)hash_str(p->core->options[i].key) * 3u +
          (unsigned)hash_str(p->core->options[i].val);
  v[9] = (int)(oh & 0x7fffffff);
  v[10] = p->has_callbacks;
  /* Geometry that decides which offsets and sections exist (not the halos or extents a
   * rank allocates for itself). */
  unsigned gh = 0;
  for (int f = 0; f < p->nfields; f++) {
    const hs_fieldinfo *fi = &p->fields[f];
    for (int a = 0; a < HS_MAX_DIMS; a++)
      gh = gh * 131u + (unsigned)(fi->depth_lo[a] * 7 + fi->depth_hi[a] * 61 + fi->node[a] * 977 +
                                  fi->owner[a] * 3001 + fi->global_cells[a] * 17);
    gh = gh * 31u + (unsigned)(fi->ncomp * 2 + fi->comp_fastest);
  }
  v[11] = (int)(gh & 0x7fffffff);
  unsigned rh = (unsigned)p->core->order * 7919u + (unsigned)p->core->norder * 31u +
                (unsigned)p->core->nsweep;
  for (int k = 0; k < p->core->norder; k++)
    for (int a = 0; a < 3; a++) rh = rh * 3u + (unsigned)(p->core->order_offsets[k][a] + 1);
  for (int k = 0; k < p->core->nsweep; k++) rh = rh * 5u + (unsigned)p->core->sweep_axes[k];
  v[12] = (int)(rh & 0x7fffffff);
  int lo[N], hi[N];
  MPI_Allreduce(v, lo, N, MPI_INT, MPI_MIN, p->comm);
  MPI_Allreduce(v, hi, N, MPI_INT, MPI_MAX, p->comm);
  static const char *names[N] = {"nfields", "depth[0]", "depth[1]", "depth[2]", "stencil",
                                 "oneway", "oneway_axis", "field types", "transport",
                                 "transport options", "pack/unpack hooks",
                                 "field geometry (depths, staggering, extents, components)",
                                 "combine order (order, order_offsets, sweep_axes)"};
  for (int i = 0; i < N; i++)
    if (lo[i] != hi[i]) {
      if (i == 7 || i == 8 || i == 9 || i == 11 || i == 12)
        return hs__error(HS_ERR_MISMATCH, "hs_plan_create: ranks disagree on the %s (this rank: "
                                          "%s)",
                         names[i], i == 8 ? p->transport_name : "see the plan description");
      return hs__error(HS_ERR_MISMATCH,
                       "hs_plan_create: ranks disagree on %s (values from %d to %d)", names[i],
                       lo[i], hi[i]);
    }
  return HS_OK;
}

int hs__check_sweep(const hs_plan p) {
  if (p->core->order != HS_ORDER_SWEEP || p->core->nsweep == 0) return HS_OK;
  for (int a = 0; a < p->ndims; a++) {
    bool named = false;
    for (int k = 0; k < p->core->nsweep; k++) named |= p->core->sweep_axes[k] == a;
    if (p->core->axis_swapped[a] && !named)
      return hs__error(HS_ERR_ARG, "hs_plan_create: sweep_axes (%d entries) does not name axis "
                                   "%d, which the plan exchanges; name every exchanged axis once",
                       p->core->nsweep, a);
  }
  return HS_OK;
}

/* An axis kept whole (one rank along it) has the same points on every rank, so a field's
 * allocated shape there must be the same everywhere: a rank whose array differs (a z extent
 * one level off, read as a halo) would swap the wrong cells without a word. Split axes may
 * legitimately differ (uneven splits, per-rank halo widths). Compared with rank 0. */
int hs__check_shapes(hs_plan p) {
  const hs_decomp d = p->decomp;
  int n = 2 * p->nfields * p->ndims;
  int *mine = malloc((size_t)n * sizeof *mine), *zero = malloc((size_t)n * sizeof *zero);
  int rc = (mine && zero) ? HS_OK : hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  for (int f = 0; rc == HS_OK && f < p->nfields; f++)
    for (int a = 0; a < p->ndims; a++) {
      mine[2 * (f * p->ndims + a)] = p->fields[f].halo[a];
      mine[2 * (f * p->ndims + a) + 1] = p->fields[f].halo_hi[a];
    }
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK) {
    memcpy(zero, mine, (size_t)n * sizeof *zero);
    int mrc = MPI_Bcast(zero, n, MPI_INT, 0, p->comm);
    if (mrc != MPI_SUCCESS) rc = hs__mpi_error(mrc, "MPI_Bcast (field shapes)");
  }
  for (int f = 0; rc == HS_OK && f < p->nfields; f++) {
    const hs_fieldinfo *fi = &p->fields[f];
    for (int a = 0; rc == HS_OK && a < p->ndims; a++) {
      const int *z = &zero[2 * (f * p->ndims + a)];
      if (fi->pack || d->box || d->procs[a] > 1 || (z[0] == fi->halo[a] && z[1] == fi->halo_hi[a]))
        continue;
      rc = hs__error(HS_ERR_MISMATCH,
                     "hs_plan_create: fields[%d] has %d points allocated on axis %d on rank %d "
                     "(halo %d below, %d above) but %d on rank 0 (halo %d below, %d above); "
                     "axis %d is kept whole, so every rank holds the same %d points there and "
                     "allocates the same shape",
                     f, fi->alloc[a], a, p->rank, fi->halo[a], fi->halo_hi[a],
                     z[0] + fi->n[a] + z[1], z[0], z[1], a, fi->n[a]);
    }
  }
  free(mine);
  free(zero);
  return rc;
}

int hs__check_boxes(const hs_plan p) {
  const hs_decomp d = p->decomp;
  if (!d->box) return HS_OK;
  const char *no = p->core->config.staged ? "the staged exchange (core option staged=1)"
                   : p->core->order == HS_ORDER_SWEEP ? "order = HS_ORDER_SWEEP"
                   : p->core->config.remap ? "core option remap=1" : NULL;
  if (no)
    return hs__error(HS_ERR_ARG, "hs_plan_create: %s goes axis by axis over a Cartesian process "
                     "grid; a box decomposition (hs_decomp_create_boxes) has none: exchange "
                     "directly", no);
  for (int f = 0; f < p->nfields; f++)
    for (int a = 0; a < p->ndims; a++) {
      const hs_field *fl = &p->core->user_fields[f];
      int dl = fl->depth_set[a] ? fl->depth_lo[a] : p->core->depth[a];
      int dh = fl->depth_set[a] ? fl->depth_hi[a] : p->core->depth[a];
      if (fl->stagger[a] != HS_STAGGER_CELL || fl->extent[a] > 0)
        return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] has %s on axis %d; a box "
                         "decomposition takes cell-centred fields on the boxes only", f,
                         fl->extent[a] > 0 ? "its own extent" : "stagger HS_STAGGER_NODE", a);
      if (dl > d->global[a] || dh > d->global[a])
        return hs__error(HS_ERR_ARG, "hs_plan_create: fields[%d] depth on axis %d is %d below, "
                         "%d above; a box decomposition's halo reaches at most the global "
                         "extent %d", f, a, dl, dh, d->global[a]);
    }
  return HS_OK;
}

/* ------------------------------------------------------------------ the description */
void hs_plan_desc_init(hs_plan_desc *d) {
  memset(d, 0, sizeof *d);
  d->depth[0] = d->depth[1] = 1;
  d->stencil = HS_STENCIL_BOX;
  d->oneway = HS_ONEWAY_NONE;
  d->transport = HS_TRANSPORT_DEFAULT;
}

void hs_plan_desc_set_order_offsets(hs_plan_desc *d, int n, const int *offsets) {
  if (!d) return;
  d->order = HS_ORDER_OFFSETS;
  d->norder = n;
  d->order_offsets = offsets;
}

void hs_plan_desc_set_order_sweep(hs_plan_desc *d, int n, const int *axes) {
  if (!d) return;
  d->order = HS_ORDER_SWEEP;
  d->nsweep = n;
  for (int k = 0; k < HS_MAX_DIMS; k++) /* no axes given: -1, which validation names */
    d->sweep_axes[k] = k < n ? (axes ? axes[k] : -1) : 0;
}
