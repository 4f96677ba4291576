/* Plan geometry: the fields' resolved strides, the offsets a swap serves, the peers, and
 * every message section as a copy program. Sections are ordered by the sender's offset,
 * then field, so both sides of a message agree without exchanging anything. */
#include "hs_internal.h"

#include <stdlib.h>
#include <string.h>

static MPI_Datatype type_mpi(hs_type t) {
  switch (t) {
  case HS_FLOAT64: return MPI_DOUBLE;
  case HS_FLOAT32: return MPI_FLOAT;
  case HS_INT32: return MPI_INT32_T;
  default: return MPI_INT64_T;
  }
}

static int neighbour(const hs_decomp d, const int o[HS_MAX_DIMS]) {
  int c[HS_MAX_DIMS] = {0, 0, 0};
  for (int a = 0; a < d->ndims; a++) {
    c[a] = d->coord[a] + o[a];
    if (c[a] < 0 || c[a] >= d->procs[a]) {
      if (!d->periodic[a]) return MPI_PROC_NULL;
      c[a] = (c[a] + d->procs[a]) % d->procs[a];
    }
  }
  int r;
  MPI_Cart_rank(d->comm, c, &r);
  return r;
}

/* Interior strip next to side o (send) or halo box on side o (recv). */
static hs_region box_for(const hs_plan p, const int o[HS_MAX_DIMS], int field, bool halo) {
  hs_region b;
  b.field = field;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    int n = p->local[a], dp = p->depth[a];
    if (a >= p->ndims) {
      b.lo[a] = 0;
      b.count[a] = 1;
    } else if (o[a] == 0) {
      b.lo[a] = 0;
      b.count[a] = n;
    } else {
      b.count[a] = dp;
      if (halo)
        b.lo[a] = o[a] < 0 ? -dp : n;
      else
        b.lo[a] = o[a] < 0 ? 0 : n - dp;
    }
  }
  return b;
}

/* Reduce a box to a copy program: sort axes by stride, merge contiguous ones. */
static hs_section make_section(const hs_plan p, hs_region box) {
  hs_section s;
  memset(&s, 0, sizeof s);
  s.box = box;
  const hs_fieldinfo *fi = &p->fields[box.field];
  size_t e = fi->elem;
  size_t nelem = 1;
  for (int a = 0; a < HS_MAX_DIMS; a++) nelem *= (size_t)box.count[a];
  s.bytes = nelem * e;
  s.n1 = s.n2 = s.n3 = 1;
  if (fi->pack) {
    s.run = s.bytes;
    return s;
  }
  ptrdiff_t base = 0;
  int cnt[HS_MAX_DIMS], nd = 0;
  ptrdiff_t str[HS_MAX_DIMS];
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    base += (ptrdiff_t)(box.lo[a] + fi->halo[a]) * fi->stride[a] * (ptrdiff_t)e;
    if (box.count[a] > 1) {
      cnt[nd] = box.count[a];
      str[nd] = fi->stride[a] * (ptrdiff_t)e;
      nd++;
    }
  }
  s.base = base;
  for (int i = 1; i < nd; i++) /* insertion sort by |stride| */
    for (int j = i; j > 0 && labs((long)str[j]) < labs((long)str[j - 1]); j--) {
      int tc = cnt[j];
      cnt[j] = cnt[j - 1];
      cnt[j - 1] = tc;
      ptrdiff_t ts = str[j];
      str[j] = str[j - 1];
      str[j - 1] = ts;
    }
  size_t run = e;
  int first = 0;
  while (first < nd && str[first] == (ptrdiff_t)run) {
    run *= (size_t)cnt[first];
    first++;
  }
  s.run = run;
  int n[3] = {1, 1, 1};
  ptrdiff_t st[3] = {0, 0, 0};
  for (int i = first, k = 0; i < nd; i++, k++) {
    n[k] = cnt[i];
    st[k] = str[i];
  }
  s.n1 = n[0];
  s.n2 = n[1];
  s.n3 = n[2];
  s.s1 = st[0];
  s.s2 = st[1];
  s.s3 = st[2];
  return s;
}

static void enumerate_offsets(hs_plan p) {
  p->noffsets = 0;
  if (p->oneway != HS_ONEWAY_NONE) {
    int *o = p->offsets[p->noffsets++];
    o[0] = o[1] = o[2] = 0;
    o[p->oneway_axis] = p->oneway == HS_ONEWAY_LOWER ? -1 : 1;
    return;
  }
  for (int x = -1; x <= 1; x++)
    for (int y = -1; y <= 1; y++)
      for (int z = -1; z <= 1; z++) {
        int o[3] = {x, y, z}, nz = 0;
        bool ok = true;
        for (int a = 0; a < 3; a++) {
          if (o[a] == 0) continue;
          if (a >= p->ndims || p->depth[a] == 0) ok = false;
          nz++;
        }
        if (!ok || nz == 0) continue;
        if (p->stencil == HS_STENCIL_STAR && nz > 1) continue;
        memcpy(p->offsets[p->noffsets++], o, sizeof o);
      }
}

static int peer_index(hs_plan p, int rank) {
  for (int i = 0; i < p->npeers; i++)
    if (p->peers[i].rank == rank) return i;
  return -1;
}

int hs__build_geometry(hs_plan p) {
  enumerate_offsets(p);
  for (int i = 0; i < p->noffsets; i++) {
    int neg[3] = {-p->offsets[i][0], -p->offsets[i][1], -p->offsets[i][2]};
    p->send_to[i] = neighbour(p->decomp, p->offsets[i]);
    p->recv_from[i] = neighbour(p->decomp, neg);
  }
  /* Distinct peers in order of first appearance. */
  p->peers = calloc((size_t)(2 * p->noffsets + 1), sizeof *p->peers);
  if (!p->peers) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < p->noffsets; i++) {
      int r = pass == 0 ? p->send_to[i] : p->recv_from[i];
      if (r == MPI_PROC_NULL || r == p->rank || peer_index(p, r) >= 0) continue;
      p->peers[p->npeers++].rank = r;
    }
  int nf = p->nfields;
  for (int k = 0; k < p->npeers; k++) {
    hs_peer *pe = &p->peers[k];
    int ns = 0, nr = 0;
    for (int i = 0; i < p->noffsets; i++) {
      if (p->send_to[i] == pe->rank) ns++;
      if (p->recv_from[i] == pe->rank) nr++;
    }
    pe->send = calloc((size_t)(ns * nf + 1), sizeof *pe->send);
    pe->recv = calloc((size_t)(nr * nf + 1), sizeof *pe->recv);
    if (!pe->send || !pe->recv) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
    p->core_bytes += (uint64_t)(ns + nr) * (uint64_t)nf * sizeof(hs_section);
    /* Sections ordered by the sender's offset, then field: both sides agree (design.md). */
    for (int i = 0; i < p->noffsets; i++) {
      int neg[3] = {-p->offsets[i][0], -p->offsets[i][1], -p->offsets[i][2]};
      for (int f = 0; f < nf; f++) {
        if (p->send_to[i] == pe->rank) {
          hs_section s = make_section(p, box_for(p, p->offsets[i], f, false));
          s.offset_index = i;
          s.msg_offset = pe->send_bytes;
          pe->send_bytes += s.bytes;
          pe->send[pe->nsend++] = s;
        }
        if (p->recv_from[i] == pe->rank) {
          hs_section s = make_section(p, box_for(p, neg, f, true));
          s.offset_index = i;
          s.msg_offset = pe->recv_bytes;
          pe->recv_bytes += s.bytes;
          pe->recv[pe->nrecv++] = s;
        }
      }
    }
  }
  int nself = 0;
  for (int i = 0; i < p->noffsets; i++)
    if (p->send_to[i] == p->rank) nself++;
  p->self = calloc((size_t)(nself * nf + 1), sizeof *p->self);
  if (!p->self) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  size_t maxself = 0;
  for (int i = 0; i < p->noffsets; i++) {
    if (p->send_to[i] != p->rank) continue;
    int neg[3] = {-p->offsets[i][0], -p->offsets[i][1], -p->offsets[i][2]};
    for (int f = 0; f < nf; f++) {
      hs_selfcopy c;
      c.src = make_section(p, box_for(p, p->offsets[i], f, false));
      c.dst = make_section(p, box_for(p, neg, f, true));
      c.src.offset_index = c.dst.offset_index = i;
      p->self_bytes += c.src.bytes;
      if (c.src.bytes > maxself) maxself = c.src.bytes;
      p->self[p->nself++] = c;
    }
  }
  if (p->has_callbacks && maxself > 0) {
    p->self_bounce = malloc(maxself);
    if (!p->self_bounce) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
    p->core_bytes += maxself;
  }
  return HS_OK;
}

int hs__copy_fields(hs_plan p, const hs_plan_desc *desc) {
  p->fields = calloc((size_t)desc->nfields, sizeof *p->fields);
  if (!p->fields) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
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
    for (int a = 0; a < HS_MAX_DIMS; a++) {
      fi->halo[a] = a < p->ndims ? in->halo[a] : 0;
      fi->alloc[a] = p->local[a] + 2 * fi->halo[a];
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
  }
  return HS_OK;
}

int hs__global_index(const hs_plan p, int axis, int i) {
  const hs_decomp d = p->decomp;
  int g = d->offset[axis] + i;
  if (d->periodic[axis]) g = ((g % d->global[axis]) + d->global[axis]) % d->global[axis];
  return g;
}
