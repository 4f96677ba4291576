/* The offsets a plan serves and their order (hs_order, docs/design.md "Reverse exchange"):
 * which offsets some field has points to move along, a stage's faces, the sweep's axes, the
 * given offset order applied, and its description. */
#include "hs_core.h"

#include <string.h>

/* Points of field f received on halo side `side` (-1 below, +1 above) of axis a: the swap
 * depth there plus a shared node plane this rank does not own. */
int hs__side_count(const hs_plan p, const hs_fieldinfo *fi, int a, int side) {
  int extra = p->core->axis_swapped[a] && fi->node[a] && (side < 0 ? fi->owner[a] == HS_OWNER_LOWER
                                       : fi->owner[a] == HS_OWNER_UPPER);
  return (side < 0 ? fi->depth_lo[a] : fi->depth_hi[a]) + extra;
}

/* Field f has points to move for offset o (the same on both sides of the message, and on every
 * rank: only side counts, depths and owned extents enter). */
static bool field_uses(const hs_plan p, int f, const int o[HS_MAX_DIMS]) {
  if (!hs__region_flow(p, f, o)) return false;
  for (int a = 0; a < p->ndims; a++)
    if (o[a] != 0 && hs__side_count(p, &p->fields[f], a, -o[a]) == 0) return false;
  return true;
}

void hs__enumerate_offsets(hs_plan p) {
  p->core->noffsets = 0;
  for (int x = -1; x <= 1; x++)
    for (int y = -1; y <= 1; y++)
      for (int z = -1; z <= 1; z++) {
        int o[3] = {x, y, z}, nz = 0;
        bool ok = true;
        for (int a = 0; a < 3; a++) {
          if (o[a] == 0) continue;
          if (a >= p->ndims) ok = false;
          nz++;
        }
        if (!ok || nz == 0) continue;
        if (p->core->oneway != HS_ONEWAY_NONE) {
          int want = p->core->oneway == HS_ONEWAY_LOWER ? -1 : 1;
          if (nz != 1 || o[p->core->oneway_axis] != want) continue;
        }
        if (p->core->stencil == HS_STENCIL_STAR && nz > 1) continue;
        /* Kept if some field has points to move there (per-field, per-side depths). */
        bool used = false;
        for (int f = 0; f < p->nfields && !used; f++) used = field_uses(p, f, o);
        if (used) memcpy(p->core->offsets[p->core->noffsets++], o, sizeof o);
      }
}

/* A stage's plan keeps the faces of its axis; the owned ranges above came from every offset,
 * so they are the direct exchange's. */
void hs__keep_stage_offsets(hs_plan p) {
  int a = p->core->stage_axis - 1, kept = 0;
  for (int i = 0; i < p->core->noffsets; i++) {
    int nz = 0;
    for (int b = 0; b < p->ndims; b++) nz += p->core->offsets[i][b] != 0;
    if (nz == 1 && p->core->offsets[i][a] != 0)
      memcpy(p->core->offsets[kept++], p->core->offsets[i], sizeof p->core->offsets[i]);
  }
  p->core->noffsets = kept;
}

bool hs__plan_sweeps(const hs_plan p) { return p->core->order == HS_ORDER_SWEEP; }

int hs__sweep_axes(const hs_plan p, int axes[HS_MAX_DIMS]) {
  int n = 0;
  for (int k = 0; k < (p->core->nsweep ? p->core->nsweep : p->ndims); k++) {
    int a = p->core->nsweep ? p->core->sweep_axes[k] : k;
    if (p->core->axis_swapped[a]) axes[n++] = a;
  }
  return n;
}

/* HS_ORDER_OFFSETS: the offsets the plan uses, put in the given order (the others given are
 * skipped). Every offset used must be named: the order of the reverse's steps, the message
 * layout and the section order all follow this list (docs/design.md). */
int hs__apply_order(hs_plan p) {
  if (p->core->order != HS_ORDER_OFFSETS || p->core->stage_axis) return HS_OK;
  int out[HS_MAX_OFFSETS][HS_MAX_DIMS], n = 0;
  bool taken[HS_MAX_OFFSETS] = {false};
  for (int k = 0; k < p->core->norder; k++)
    for (int i = 0; i < p->core->noffsets; i++)
      if (!taken[i] &&
          !memcmp(p->core->offsets[i], p->core->order_offsets[k], sizeof p->core->offsets[i])) {
        taken[i] = true;
        memcpy(out[n++], p->core->offsets[i], sizeof out[0]);
      }
  for (int i = 0; i < p->core->noffsets; i++)
    if (!taken[i])
      return hs__error(HS_ERR_ARG, "hs_plan_create: order_offsets (%d entries) does not name "
                                   "offset (%d,%d,%d), which the plan uses; name every offset the "
                                   "plan uses once", p->core->norder, p->core->offsets[i][0],
                       p->core->offsets[i][1], p->core->offsets[i][2]);
  memcpy(p->core->offsets, out, (size_t)n * sizeof out[0]);
  return HS_OK;
}

void hs__order_describe(const hs_plan p, char *buf, size_t len, size_t *n) {
  if (p->core->order == HS_ORDER_SWEEP) {
    int axes[HS_MAX_DIMS], na = hs__sweep_axes(p, axes);
    hs__appendf(buf, len, n, "order sweep");
    for (int k = 0; k < na; k++) hs__appendf(buf, len, n, "%s%c", k ? "," : " ", "xyz"[axes[k]]);
    hs__appendf(buf, len, n, "; ");
    return;
  }
  bool given = p->core->order == HS_ORDER_OFFSETS;
  hs__appendf(buf, len, n, "order %s", given ? "offsets" : "canonical");
  for (int i = 0; given && i < p->core->noffsets; i++)
    hs__appendf(buf, len, n, " (%d,%d,%d)", p->core->offsets[i][0], p->core->offsets[i][1],
                p->core->offsets[i][2]);
  hs__appendf(buf, len, n, "; ");
}
