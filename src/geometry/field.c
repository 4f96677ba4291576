/* Field descriptions (hs_field): element sizes, the array constructor and the setters of the
 * public API, and the plan's copy of them (hs__copy_fields: resolved strides, depths, global
 * extents). The plan's validation, geometry and packing read what these write. */
#include "hs_core.h"

#include <stdlib.h>
#include <string.h>

size_t hs_type_size(hs_type t) {
  switch (t) {
  case HS_FLOAT64: return 8;
  case HS_FLOAT32: return 4;
  case HS_INT32: return 4;
  case HS_INT64: return 8;
  default: return 0;
  }
}

hs_field hs_field_array(hs_type type, void *data, hs_layout layout, int halo) {
  hs_field f;
  memset(&f, 0, sizeof f);
  f.type = type;
  f.data = data;
  f.layout = layout;
  f.halo[0] = f.halo[1] = halo; /* z: none unless the caller sets halo[2] */
  return f;
}

static bool axis_ok(const hs_field *f, int axis) { return f && axis >= 0 && axis < HS_MAX_DIMS; }

void hs_field_set_halo(hs_field *f, int axis, int lo, int hi) {
  if (!axis_ok(f, axis)) return;
  f->halo[axis] = lo;
  f->halo_hi[axis] = hi;
  f->halo_hi_set[axis] = 1;
}

void hs_field_set_depth(hs_field *f, int axis, int lo, int hi) {
  if (!axis_ok(f, axis)) return;
  f->depth_lo[axis] = lo;
  f->depth_hi[axis] = hi;
  f->depth_set[axis] = 1;
}

void hs_field_set_stagger(hs_field *f, int axis, hs_stagger s, hs_owner owner) {
  if (!axis_ok(f, axis)) return;
  f->stagger[axis] = (int)s;
  f->owner[axis] = (int)owner;
}

void hs_field_set_extent(hs_field *f, int axis, int cells) {
  if (axis_ok(f, axis)) f->extent[axis] = cells;
}

void hs_field_set_components(hs_field *f, int ncomp, hs_comp_order order, ptrdiff_t comp_stride) {
  if (!f) return;
  f->ncomp = ncomp;
  f->comp_order = (int)order;
  f->comp_stride = comp_stride;
}

static MPI_Datatype type_mpi(hs_type t) {
  switch (t) {
  case HS_FLOAT64: return MPI_DOUBLE;
  case HS_FLOAT32: return MPI_FLOAT;
  case HS_INT32: return MPI_INT32_T;
  default: return MPI_INT64_T;
  }
}

int hs__copy_fields(hs_plan p, const hs_plan_desc *desc) {
  const hs_decomp d = p->decomp;
  p->fields = calloc((size_t)desc->nfields, sizeof *p->fields);
  p->core->user_fields = calloc((size_t)desc->nfields, sizeof *p->core->user_fields);
  if (!p->fields || !p->core->user_fields)
    return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  memcpy(p->core->user_fields, desc->fields, (size_t)desc->nfields * sizeof *p->core->user_fields);
  for (int f = 0; f < desc->nfields; f++) {
    const hs_field *in = &desc->fields[f];
    hs_fieldinfo *fi = &p->fields[f];
    fi->type = in->type;
    fi->elem = hs_type_size(in->type);
    fi->mpitype = type_mpi(in->type);
    fi->data = in->data;
    fi->pack = in->pack;
    fi->unpack = in->unpack;
    fi->ctx = in->ctx;
    if (in->pack) p->has_callbacks = true;
    fi->ncomp = in->ncomp > 1 ? in->ncomp : 1;
    fi->comp_fastest = fi->ncomp > 1 && in->comp_order == HS_COMP_FASTEST && in->layout != HS_LAYOUT_STRIDED;
    fi->cell = fi->comp_fastest ? (size_t)fi->ncomp * fi->elem : fi->elem;
    for (int a = 0; a < HS_MAX_DIMS; a++) {
      if (a >= p->ndims) {
        fi->n[a] = fi->cells[a] = fi->alloc[a] = fi->global_cells[a] = 1;
        continue;
      }
      fi->halo[a] = in->halo[a];
      fi->halo_hi[a] = in->halo_hi_set[a] ? in->halo_hi[a] : in->halo[a];
      fi->depth_lo[a] = in->depth_set[a] ? in->depth_lo[a] : desc->depth[a];
      fi->depth_hi[a] = in->depth_set[a] ? in->depth_hi[a] : desc->depth[a];
      fi->node[a] = in->stagger[a] == HS_STAGGER_NODE;
      fi->owner[a] = in->owner[a];
      bool own = in->extent[a] > 0;
      fi->cells[a] = own ? in->extent[a] : p->core->local[a];
      fi->global_cells[a] = own ? in->extent[a] : d->global[a];
      fi->global_origin[a] = own ? 0 : d->offset[a];
      fi->n[a] = fi->cells[a] + fi->node[a];
      fi->alloc[a] = fi->halo[a] + fi->n[a] + fi->halo_hi[a];
    }
    if (in->layout == HS_LAYOUT_ZFAST) {
      fi->stride[2] = 1;
      fi->stride[1] = fi->alloc[2];
      fi->stride[0] = (ptrdiff_t)fi->alloc[2] * fi->alloc[1];
    } else if (in->layout == HS_LAYOUT_XFAST) {
      fi->stride[0] = 1;
      fi->stride[1] = fi->alloc[0];
      fi->stride[2] = (ptrdiff_t)fi->alloc[0] * fi->alloc[1];
    } else {
      for (int a = 0; a < HS_MAX_DIMS; a++) fi->stride[a] = a < p->ndims ? in->stride[a] : 0;
    }
    if (p->ndims == 2) {
      /* A 2D grid: ZFAST means y contiguous then x; XFAST means x then y. */
      if (in->layout == HS_LAYOUT_ZFAST) {
        fi->stride[1] = 1;
        fi->stride[0] = fi->alloc[1];
      }
      fi->stride[2] = 0;
    }
    for (int a = 0; a < p->ndims; a++)
      if (fi->depth_lo[a] > 0 || fi->depth_hi[a] > 0) p->core->axis_swapped[a] = 1;
    /* Components: fastest = one cell of ncomp elements; slowest = whole copies of the array,
     * one after the other; strided = the caller's element stride. */
    if (fi->comp_fastest)
      fi->comp_bytes = (ptrdiff_t)fi->elem;
    else if (in->layout == HS_LAYOUT_STRIDED)
      fi->comp_bytes = in->comp_stride * (ptrdiff_t)fi->elem;
    else
      fi->comp_bytes = (ptrdiff_t)fi->alloc[0] * fi->alloc[1] * fi->alloc[2] * (ptrdiff_t)fi->elem;
  }
  return HS_OK;
}

int hs__field_global_index(const hs_plan p, int f, int axis, int i) {
  const hs_fieldinfo *fi = &p->fields[f];
  int g = fi->global_origin[axis] + i, n = fi->global_cells[axis];
  if (p->decomp->periodic[axis]) g = ((g % n) + n) % n;
  return g;
}
