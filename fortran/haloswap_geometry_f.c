/* C half of the Fortran module haloswap_geometry (fortran/haloswap_geometry.F90): scalar and
 * array arguments only. A field arrives as its declared shape and the points below the
 * interior per dimension; the axes, the points above and the components follow here from
 * the decomposition. */
#include "hs_core.h"

#include <stdlib.h>

/* Fortran layouts: 0 = field(z,y,x) (z fastest), 1 = field(x,y,z). */
static int describe(const char *who, const char *arg, hs_decomp d, int f, int kind, void *data,
                    int rank, int layout, int cfirst, const int *shp, const int *hlo,
                    const int *dset, const int *dlo, const int *dhi, const int *stag,
                    const int *own, hs_field *out) {
  if (kind == -2)
    return hs__error(HS_ERR_ARG, "%s: %s(%d) is not contiguous; pass the whole array", who, arg,
                     f + 1);
  if (kind == -3)
    return hs__error(HS_ERR_ARG, "%s: %s(%d): halo_lo needs one entry per array dimension "
                                 "(%d)", who, arg, f + 1, rank);
  if (layout != 0 && layout != 1)
    return hs__error(HS_ERR_ARG, "%s: %s(%d): layout = %d, must be HALOSWAP_LAYOUT_ZYX or "
                                 "HALOSWAP_LAYOUT_XYZ", who, arg, f + 1, layout);
  int nd = d->ndims, spatial = rank, comp_dim = -1;
  if (rank == nd + 1) {
    spatial = nd;
    comp_dim = cfirst ? 0 : rank - 1;
  } else if (rank != nd && !(nd == 3 && rank == 2)) {
    return hs__error(HS_ERR_ARG, "%s: %s(%d) has rank %d; with a %d-D grid a field has rank "
                                 "%d, %d with a component dimension%s", who, arg, f + 1, rank, nd, nd,
                     nd + 1, nd == 3 ? ", or 2 (a 2-D field)" : "");
  }
  *out = hs_field_array((hs_type)kind, data, layout ? HS_LAYOUT_XFAST : HS_LAYOUT_ZFAST, 0);
  /* declared dimension of each axis */
  int dim[3] = {-1, -1, -1}, first = comp_dim == 0 ? 1 : 0;
  for (int i = 0; i < spatial; i++) {
    int axis = layout ? i : (spatial == 3 ? 2 - i : 1 - i); /* (z,y,x) or (y,x) reversed */
    dim[axis] = first + i;
  }
  for (int a = 0; a < nd; a++) {
    if (dim[a] < 0) { /* a 2-D field in a 3-D plan: z of extent 1, not swapped */
      hs_field_set_extent(out, a, 1);
      hs_field_set_halo(out, a, 0, 0);
      hs_field_set_depth(out, a, 0, 0);
      continue;
    }
    int ext = shp[dim[a]], lo = hlo[dim[a]], n = d->local[a] + (stag[a] ? 1 : 0);
    int hi = ext - lo - n;
    if (lo < 0 || hi < 0)
      return hs__error(HS_ERR_ARG,
                       "%s: %s(%d) dimension %d (axis %d) has %d points: %d below the "
                       "interior + %d interior%s leaves %d above; must be >= 0",
                       who, arg, f + 1, dim[a] + 1, a + 1, ext, lo, n,
                       stag[a] ? " (cells + 1, staggered)" : "", hi);
    hs_field_set_halo(out, a, lo, hi);
    if (dset[a]) hs_field_set_depth(out, a, dlo[a], dhi[a]);
    if (stag[a]) hs_field_set_stagger(out, a, HS_STAGGER_NODE, (hs_owner)own[a]);
  }
  if (comp_dim >= 0)
    hs_field_set_components(out, shp[comp_dim], cfirst ? HS_COMP_FASTEST : HS_COMP_SLOWEST, 0);
  return HS_OK;
}

static int f_order(hs_decomp d, const char *who, hs_plan_desc *pd, int orows, int norder,
                   const int *offsets, int nsweep, const int *axes) {
  if (norder >= 0 && nsweep >= 0)
    return hs__error(HS_ERR_ARG, "%s: order_offsets and sweep_axes are both given; give one",
                     who);
  if (norder >= 0 && orows != 3)
    return hs__error(HS_ERR_ARG, "%s: order_offsets has %d rows; it is order_offsets(3, n), one "
                                 "offset (ox, oy, oz) per column", who, orows);
  if (norder >= 0) hs_plan_desc_set_order_offsets(pd, norder, offsets);
  if (nsweep < 0) return HS_OK;
  int ax[HS_MAX_DIMS] = {-1, -1, -1};
  for (int k = 0; k < nsweep && k < HS_MAX_DIMS; k++) {
    if (axes[k] < 1 || axes[k] > d->ndims)
      return hs__error(HS_ERR_ARG, "%s: sweep_axes(%d) = %d, must be 1..%d", who, k + 1, axes[k],
                       d->ndims);
    for (int j = 0; j < k; j++)
      if (axes[j] == axes[k])
        return hs__error(HS_ERR_ARG, "%s: sweep_axes(%d) = %d repeats sweep_axes(%d)", who, k + 1,
                         axes[k], j + 1);
    ax[k] = axes[k] - 1;
  }
  hs_plan_desc_set_order_sweep(pd, nsweep, ax);
  return HS_OK;
}

/* The region set haloswap_geometry_init's `regions` gives the plan it makes next on this
 * thread (hs_f_next_regions; taken by hs__f_plan_finish). */
static _Thread_local hs_region_set next_regions;
int hs_f_next_regions(hs_region_set s) {
  next_regions = s;
  return HS_OK;
}

int hs__f_plan_finish(hs_decomp d, const char *who, int rc, hs_plan_desc *pd, hs_field *fields,
                      int nfields, const char *transport, int orows, int norder,
                      const int *offsets, int nsweep, const int *axes, hs_plan *out) {
  hs_region_set regions = next_regions;
  next_regions = NULL;
  if (rc == HS_OK) rc = f_order(d, who, pd, orows, norder, offsets, nsweep, axes);
  rc = hs__agree(d->comm, rc);
  if (rc == HS_OK) {
    pd->nfields = nfields;
    pd->fields = fields;
    pd->transport_name = (transport && transport[0]) ? transport : NULL;
    rc = hs_plan_create_regions(d, pd, regions, out);
  }
  free(fields);
  return rc;
}

int hs_f_plan_create_geom(hs_decomp d, int nfields, const int *kinds, void *const *datas,
                          const int *ranks, const int *layouts, const int *cfirst,
                          const int *shapes, const int *hlo, const int *dset, const int *dlo,
                          const int *dhi, const int *stag, const int *own, const int *depth,
                          int stencil, const char *transport, int orows, int norder,
                          const int *offsets, int nsweep, const int *axes, hs_plan *out) {
  *out = NULL;
  if (!d) return hs__error(HS_ERR_ARG, "haloswap_geometry_init: decomposition not created");
  int rc = HS_OK;
  hs_field *fields = calloc((size_t)(nfields > 0 ? nfields : 1), sizeof *fields);
  if (!fields) rc = hs__error(HS_ERR_NOMEM, "haloswap_geometry_init: out of memory");
  for (int f = 0; f < nfields && rc == HS_OK; f++)
    rc = describe("haloswap_geometry_init", "fields", d, f, kinds[f], datas[f], ranks[f],
                  layouts[f], cfirst[f], shapes + 4 * f,
                  hlo + 4 * f, dset + 3 * f, dlo + 3 * f, dhi + 3 * f, stag + 3 * f, own + 3 * f,
                  &fields[f]);
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  for (int a = 0; a < HS_MAX_DIMS; a++) pd.depth[a] = a < d->ndims ? depth[a] : 0;
  pd.stencil = (hs_stencil)stencil;
  return hs__f_plan_finish(d, "haloswap_geometry_init", rc, &pd, fields, nfields, transport,
                           orows, norder, offsets, nsweep, axes, out);
}

static const char *const kind_name[4] = {"real(8)", "real(4)", "integer(4)", "integer(8)"};

/* Per-call arrays of a geometry plan: each must be what field f was registered as (kind,
 * layout, halos below and above on every axis, components), so the exchange cannot read or
 * write outside it. Collective: a mistake on one rank fails the call on every rank, and
 * nothing is started. */
static int check_arrays(hs_plan p, const char *who, int nfields, const int *kinds,
                        void *const *datas, const int *ranks, const int *layouts,
                        const int *cfirst, const int *shapes, const int *hlo) {
  int rc = HS_OK;
  if (!p) return hs__error(HS_ERR_ARG, "%s: the plan was not created", who);
  if (nfields != p->nfields)
    rc = hs__error(HS_ERR_ARG, "%s: %d arrays given, but the plan has %d fields", who, nfields,
                   p->nfields);
  for (int f = 0; f < nfields && rc == HS_OK; f++) {
    const hs_field *r = &p->core->user_fields[f];
    int zero[3] = {0, 0, 0}, stag[3], own[3];
    for (int a = 0; a < 3; a++) {
      stag[a] = r->stagger[a] == HS_STAGGER_NODE;
      own[a] = r->owner[a];
    }
    hs_field g;
    rc = describe(who, "arrays", p->decomp, f, kinds[f], datas[f], ranks[f], layouts[f],
                  cfirst[f], shapes + 4 * f, hlo + 4 * f, zero, zero, zero, stag, own, &g);
    if (rc != HS_OK) break;
    if (g.type != r->type)
      rc = hs__error(HS_ERR_ARG, "%s: arrays(%d) is %s but field %d was registered as %s", who,
                     f + 1, kind_name[g.type & 3], f + 1, kind_name[r->type & 3]);
    else if (g.layout != r->layout)
      rc = hs__error(HS_ERR_ARG, "%s: arrays(%d) has layout %s but field %d was registered with "
                     "%s", who, f + 1, g.layout == HS_LAYOUT_XFAST ? "XYZ" : "ZYX", f + 1,
                     r->layout == HS_LAYOUT_XFAST ? "XYZ" : "ZYX");
    else if ((g.ncomp > 1 ? g.ncomp : 1) != (r->ncomp > 1 ? r->ncomp : 1) ||
             (g.ncomp > 1 && g.comp_order != r->comp_order))
      rc = hs__error(HS_ERR_ARG, "%s: arrays(%d) has %d components (%s) but field %d was "
                     "registered with %d", who, f + 1, g.ncomp > 1 ? g.ncomp : 1,
                     g.comp_order == HS_COMP_FASTEST ? "first dimension" : "last dimension",
                     f + 1, r->ncomp > 1 ? r->ncomp : 1);
    for (int a = 0; a < p->decomp->ndims && rc == HS_OK; a++) {
      int rlo = r->halo[a], rhi = r->halo_hi_set[a] ? r->halo_hi[a] : r->halo[a];
      int glo = g.halo[a], ghi = g.halo_hi_set[a] ? g.halo_hi[a] : g.halo[a];
      if (g.extent[a] != r->extent[a] && !(g.extent[a] <= 1 && r->extent[a] <= 1))
        rc = hs__error(HS_ERR_ARG, "%s: arrays(%d) is %s on axis %d but field %d was "
                       "registered %s", who, f + 1, g.extent[a] == 1 ? "2-D" : "3-D", a + 1,
                       f + 1, r->extent[a] == 1 ? "2-D" : "3-D");
      else if (glo != rlo || ghi != rhi)
        rc = hs__error(HS_ERR_ARG, "%s: arrays(%d) has %d points below and %d above the "
                       "interior on axis %d, but field %d was registered with %d and %d", who,
                       f + 1, glo, ghi, a + 1, f + 1, rlo, rhi);
    }
    if (rc == HS_OK && !datas[f])
      rc = hs__error(HS_ERR_ARG, "%s: arrays(%d) has no data (an empty array)", who, f + 1);
  }
  return hs__agree(p->comm, rc);
}

#define HS_F_ARRAYS_ARGS                                                                      \
  int nfields, const int *kinds, void *const *datas, const int *ranks, const int *layouts,    \
      const int *cfirst, const int *shapes, const int *hlo
#define HS_F_ARRAYS_PASS nfields, kinds, datas, ranks, layouts, cfirst, shapes, hlo

/* haloswap_reverse_start (what 0), haloswap_reverse_complete (1), haloswap_accumulate_fill
 * (2): over the registered arrays (nfields < 0) or this call's, checked first. */
int hs_f_reverse_call(hs_plan p, int what, int op, HS_F_ARRAYS_ARGS) {
  static const char *const who[3] = {"haloswap_reverse_start", "haloswap_reverse_complete",
                                     "haloswap_accumulate_fill"};
  void *const *arrays = NULL;
  if (what < 0 || what > 2) return hs__error(HS_ERR_INTERNAL, "reverse call %d", what);
  if (nfields >= 0) {
    int rc = check_arrays(p, who[what], HS_F_ARRAYS_PASS);
    if (rc != HS_OK) return rc;
    arrays = datas;
  }
  if (what == 0) return hs_reverse_start(p, (hs_op)op, arrays);
  if (what == 1) return hs_reverse_complete(p, arrays);
  return hs_accumulate_fill(p, (hs_op)op, arrays);
}
int hs_f_swap_test(hs_plan p, int *done) { return hs_swap_test(p, NULL, done); }

int hs_f_overlap_stats(hs_plan p, double *total, double *exposed, double *test) {
  hs_plan_stats st;
  int rc = hs_plan_get_stats(p, &st);
  if (rc != HS_OK) return rc;
  *total = st.seconds_total;
  *exposed = st.seconds_exposed;
  *test = st.seconds_test;
  return HS_OK;
}

/* ranges: the given axes' entries one after the other; have[a]: how many for axis a (0: none).
 * fcart: an existing Cartesian communicator (Fortran handle) or -1. */
int hs_f_decomp_create_ex(MPI_Fint fcomm, int ndims, const int *global, const int *procs,
                          const int *periodic, int remainder, const int *axis_order,
                          const int *ranges, const int *have, MPI_Fint fcart, hs_decomp *out) {
  hs_decomp_desc desc;
  hs__decomp_desc_axes(&desc, ndims, global, procs, periodic, 0);
  int at = 0, rc = HS_OK;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    desc.axis_order[a] = axis_order[a];
    if (a < ndims && have[a] > 0) {
      if (procs[a] != have[a] && rc == HS_OK)
        rc = hs__error(HS_ERR_ARG, "haloswap_decomposition_create_ex: ranges for axis %d have "
                                   "%d entries but procs(%d) = %d",
                       a + 1, have[a], a + 1, procs[a]);
      desc.ranges[a] = ranges + at;
      at += have[a];
    }
  }
  desc.remainder = remainder;
  desc.cart = fcart == -1 ? MPI_COMM_NULL : MPI_Comm_f2c(fcart);
  MPI_Comm base = desc.cart != MPI_COMM_NULL ? desc.cart : MPI_Comm_f2c(fcomm);
  *out = NULL;
  rc = hs__agree(base, rc);
  return rc == HS_OK ? hs_decomp_create(MPI_Comm_f2c(fcomm), &desc, out) : rc;
}

/* haloswap_decomposition_create_boxes: lo, hi are 0-based, hi exclusive (the Fortran side
 * converts its 1-based inclusive bounds). */
int hs_f_decomp_create_boxes(MPI_Fint fcomm, int ndims, const int *global, const int *periodic,
                             const int *lo, const int *hi, hs_decomp *out) {
  return hs_decomp_create_boxes(MPI_Comm_f2c(fcomm), ndims, global, periodic, lo, hi, out);
}


/* haloswap_get_bytes: what a plan moves per swap on this rank (hs_plan_stats). */
int hs_f_plan_bytes(hs_plan p, double *sent, double *recv, double *self) {
  hs_plan_stats st;
  int rc = hs_plan_get_stats(p, &st);
  if (rc != HS_OK) return rc;
  *sent = (double)st.bytes_sent_per_swap;
  *recv = (double)st.bytes_recv_per_swap;
  *self = (double)st.bytes_self_per_swap;
  return HS_OK;
}
