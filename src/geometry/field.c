/* Field descriptions (hs_field): element sizes, the array constructor and the setters of the
 * public API. The plan's validation, geometry and packing read what these write. */
#include "hs_transport.h"

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
