/* auto's self-check, the analytic halo check: fill every field's interior with a value computed from the
 * cell's global coordinates and its halos with a sentinel, swap, and compare every halo
 * cell the plan writes with the value of the global cell it mirrors. Fields are read and
 * written box by box in z-fastest order, directly or through the fields' pack/unpack hooks,
 * so any layout works; the caller's data is saved first and put back at the end. */
#include "hs_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hs_selfcheck {
  char *saved;          /* every field's whole allocated box, z fastest */
  size_t *off;          /* per field: offset in saved */
  char *scratch;        /* one box of the largest field */
};

static hs_region whole_box(const hs_plan p, int f) {
  hs_region b;
  b.field = f;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    b.lo[a] = a < p->ndims ? -p->fields[f].halo[a] : 0;
    b.count[a] = a < p->ndims ? p->fields[f].alloc[a] : 1;
  }
  return b;
}

static size_t box_cells(const hs_region *b) {
  return (size_t)b->count[0] * (size_t)b->count[1] * (size_t)b->count[2];
}

/* Components stored apart (slowest, strided): each is read as a box of its own; a cell of
 * interleaved components (components fastest) is read whole. */
static int nviews(const hs_fieldinfo *fi) { return fi->comp_fastest ? 1 : fi->ncomp; }

/* Cell (x, y, z) of field f (local indices), component view c. */
static char *elem_ptr(const hs_plan p, int f, int c, int x, int y, int z) {
  const hs_fieldinfo *fi = &p->fields[f];
  int l[3] = {x, y, z};
  ptrdiff_t e = 0;
  for (int a = 0; a < p->ndims; a++) e += (ptrdiff_t)(l[a] + fi->halo[a]) * fi->stride[a];
  return (char *)fi->data + e * (ptrdiff_t)fi->cell + (c > 0 ? c * fi->comp_bytes : 0);
}

/* Box <-> buffer in z-fastest order, view c (to_buf: read the box). */
static void box_io(const hs_plan p, const hs_region *b, int c, char *buf, int to_buf) {
  const hs_fieldinfo *fi = &p->fields[b->field];
  if (fi->pack) {
    if (to_buf) fi->pack(fi->ctx, b, buf);
    else fi->unpack(fi->ctx, b, buf);
    return;
  }
  /* Along z by the z stride: the per-cell address arithmetic cost more than the copies. */
  ptrdiff_t zs = p->ndims > 2 ? fi->stride[2] * (ptrdiff_t)fi->cell : 0;
  for (int x = 0; x < b->count[0]; x++)
    for (int y = 0; y < b->count[1]; y++) {
      char *e = elem_ptr(p, b->field, c, b->lo[0] + x, b->lo[1] + y, b->lo[2]);
      for (int z = 0; z < b->count[2]; z++, buf += fi->cell, e += zs)
        memcpy(to_buf ? buf : e, to_buf ? e : buf, fi->cell);
    }
}

static void read_box(const hs_plan p, const hs_region *b, int c, char *buf) {
  box_io(p, b, c, buf, 1);
}
static void write_box(const hs_plan p, const hs_region *b, int c, char *buf) {
  box_io(p, b, c, buf, 0);
}

/* The value of component c of global cell g of field f, exact in every hs_type; -1 is the
 * sentinel. */
static void value(const hs_plan p, int f, int c, const int g[3], int sentinel, char *out) {
  const hs_fieldinfo *fi = &p->fields[f];
  uint64_t h = (uint64_t)f * 977u + (uint64_t)c;
  for (int a = 0; a < HS_MAX_DIMS; a++) h = h * (uint64_t)(fi->global_cells[a] + 2) + (uint64_t)g[a];
  int64_t v = sentinel ? -1 : (int64_t)(h % (fi->elem == 4 ? (1u << 23) : (1ull << 52))) + 1;
  switch (fi->type) {
  case HS_FLOAT64: { double d = (double)v; memcpy(out, &d, 8); break; }
  case HS_FLOAT32: { float s = (float)v; memcpy(out, &s, 4); break; }
  case HS_INT32: { int32_t i = (int32_t)v; memcpy(out, &i, 4); break; }
  default: memcpy(out, &v, 8); break;
  }
}

/* Expected contents of box b (view c), z fastest: owned points their value, other points
 * either the value of the point they mirror (mirror = 1) or the sentinel. */
static void expected_box(const hs_plan p, const hs_region *b, int c, int mirror, char *buf) {
  const hs_fieldinfo *fi = &p->fields[b->field];
  int per = fi->comp_fastest ? fi->ncomp : 1;
  for (int x = 0; x < b->count[0]; x++)
    for (int y = 0; y < b->count[1]; y++) {
      int l[3] = {b->lo[0] + x, b->lo[1] + y, 0}, g[3] = {0, 0, 0}, inside_xy = 1;
      for (int a = 0; a < p->ndims && a < 2; a++) {
        if (l[a] < fi->own_lo[a] || l[a] >= fi->own_hi[a]) inside_xy = 0;
        g[a] = hs__field_global_index(p, b->field, a, l[a]);
      }
      for (int z = 0; z < b->count[2]; z++) {
        int inside = inside_xy;
        if (p->ndims > 2) {
          l[2] = b->lo[2] + z;
          if (l[2] < fi->own_lo[2] || l[2] >= fi->own_hi[2]) inside = 0;
          g[2] = hs__field_global_index(p, b->field, 2, l[2]);
        }
        for (int k = 0; k < per; k++, buf += fi->elem)
          value(p, b->field, fi->comp_fastest ? k : (c > 0 ? c : 0), g, !inside && !mirror, buf);
      }
    }
}

int hs__selfcheck_begin(hs_plan p, hs_selfcheck **out) {
  hs_selfcheck *o = calloc(1, sizeof *o);
  *out = o;
  if (!o) return hs__error(HS_ERR_NOMEM, "out of memory for the halo check");
  o->off = malloc((size_t)p->nfields * sizeof *o->off);
  size_t total = 0, most = 0;
  for (int f = 0; o->off && f < p->nfields; f++) {
    hs_region b = whole_box(p, f);
    size_t n = box_cells(&b) * p->fields[f].cell;
    o->off[f] = total;
    total += n * (size_t)nviews(&p->fields[f]); /* every component view */
    if (n > most) most = n;
  }
  o->saved = o->off ? malloc(total ? total : 1) : NULL;
  o->scratch = o->off ? malloc(most ? most : 1) : NULL;
  if (!o->saved || !o->scratch) return hs__error(HS_ERR_NOMEM, "out of memory for the halo check (%zu bytes)", total + most);
  for (int f = 0; f < p->nfields; f++) {
    hs_region b = whole_box(p, f);
    size_t n = box_cells(&b) * p->fields[f].cell;
    for (int c = 0; c < nviews(&p->fields[f]); c++) read_box(p, &b, c, o->saved + o->off[f] + c * n);
  }
  hs__selfcheck_reset(p, o, 1);
  return HS_OK;
}

/* The sentinel into box b of view c. */
static void sentinel_box(const hs_plan p, const hs_region *b, int c, char *buf) {
  const hs_fieldinfo *fi = &p->fields[b->field];
  size_t n = box_cells(b) * (fi->comp_fastest ? (size_t)fi->ncomp : 1);
  int g[3] = {0, 0, 0};
  value(p, b->field, 0, g, 1, buf);
  for (size_t i = 1; i < n; i++) memcpy(buf + i * fi->elem, buf, fi->elem);
  write_box(p, b, c, buf);
}

void hs__selfcheck_reset(hs_plan p, hs_selfcheck *o, int full) {
  if (!full) {
    /* A swap writes only these; the rest still holds the pattern. */
    for (int k = 0; k < p->npeers; k++)
      for (int i = 0; i < p->peers[k].nrecv; i++)
        sentinel_box(p, &p->peers[k].recv[i].box, p->peers[k].recv[i].comp, o->scratch);
    for (int i = 0; i < p->nself; i++) sentinel_box(p, &p->self[i].dst.box, p->self[i].dst.comp, o->scratch);
    return;
  }
  for (int f = 0; f < p->nfields; f++) {
    hs_region b = whole_box(p, f);
    for (int c = 0; c < nviews(&p->fields[f]); c++) {
      expected_box(p, &b, c, 0, o->scratch);
      write_box(p, &b, c, o->scratch);
    }
  }
}

static int check_section(hs_plan p, hs_selfcheck *o, const hs_section *s, const char *from) {
  const hs_region *b = &s->box;
  size_t e = p->fields[b->field].cell, n = box_cells(b);
  char *got = o->scratch, *want = malloc(n * e > 0 ? n * e : 1);
  if (!want) return hs__error(HS_ERR_NOMEM, "out of memory for the halo check");
  read_box(p, b, s->comp, got);
  expected_box(p, b, s->comp, 1, want);
  int rc = HS_OK;
  for (size_t i = 0; i < n; i++)
    if (memcmp(got + i * e, want + i * e, e)) {
      size_t zc = (size_t)b->count[2], yc = (size_t)b->count[1];
      rc = hs__error(HS_ERR_INTERNAL, "field %d (component %d), halo cell (%d,%d,%d) filled from "
                     "%s is wrong", b->field, s->comp, b->lo[0] + (int)(i / (zc * yc)), b->lo[1] + (int)(i / zc % yc),
                     b->lo[2] + (int)(i % zc), from);
      break;
    }
  free(want);
  return rc;
}

int hs__selfcheck_compare(hs_plan p, hs_selfcheck *o) {
  char from[64];
  for (int k = 0; k < p->npeers; k++)
    for (int i = 0; i < p->peers[k].nrecv; i++) {
      snprintf(from, sizeof from, "rank %d", p->peers[k].rank);
      int rc = check_section(p, o, &p->peers[k].recv[i], from);
      if (rc != HS_OK) return rc;
    }
  for (int i = 0; i < p->nself; i++) {
    int rc = check_section(p, o, &p->self[i].dst, "this rank (periodic self copy)");
    if (rc != HS_OK) return rc;
  }
  return HS_OK;
}

void hs__selfcheck_end(hs_plan p, hs_selfcheck *o) {
  if (!o) return;
  if (o->saved && o->scratch)
    for (int f = 0; f < p->nfields; f++) {
      hs_region b = whole_box(p, f);
      size_t n = box_cells(&b) * p->fields[f].cell;
      for (int c = 0; c < nviews(&p->fields[f]); c++)
        write_box(p, &b, c, o->saved + o->off[f] + c * n);
    }
  free(o->saved);
  free(o->scratch);
  free(o->off);
  free(o);
}
