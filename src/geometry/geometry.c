/* Plan geometry: the fields' resolved strides, the offsets a swap serves, the peers, and
 * every message section as a copy program. Sections are ordered by the sender's offset,
 * then field, so both sides of a message agree without exchanging anything. */
#include "hs_core.h"

#include <stdlib.h>
#include <string.h>

static int neighbour(const hs_decomp d, const int o[HS_MAX_DIMS]) {
  int c[HS_MAX_DIMS] = {0, 0, 0};
  for (int a = 0; a < d->ndims; a++) {
    c[a] = d->coord[a] + o[a];
    if (c[a] < 0 || c[a] >= d->procs[a]) {
      if (!d->periodic[a]) return MPI_PROC_NULL;
      c[a] = (c[a] + d->procs[a]) % d->procs[a];
    }
  }
  return hs__cart_rank(d, c);
}

/* Interval [*lo, *lo + *cnt) on axis a of field f: the halo points received on side s
 * (recv), or the interior points sent toward side s to fill the neighbour's halo on side
 * -s (send); s = 0: the owned points. A node axis has n = cells + 1 points, the shared plane
 * with the upper neighbour being index cells. A shared plane moves only on an axis the
 * plan swaps (some field has a nonzero depth there). */
static void interval(const hs_fieldinfo *fi, int a, int s, bool recv, int *lo, int *cnt) {
  int c = fi->cells[a], n = fi->n[a];
  int lo_extra = fi->node[a] && fi->owner[a] == HS_OWNER_LOWER;
  int hi_extra = fi->node[a] && fi->owner[a] == HS_OWNER_UPPER;
  int b, e;
  if (s == 0) {
    b = fi->own_lo[a];
    e = fi->own_hi[a];
  } else if (recv) {
    b = s < 0 ? -fi->depth_lo[a] : n - hi_extra;
    e = s < 0 ? lo_extra : n + fi->depth_hi[a];
  } else {
    b = s > 0 ? c - fi->depth_lo[a] : lo_extra;
    e = s > 0 ? c + lo_extra : (n - c) + fi->depth_hi[a];
  }
  *lo = b;
  *cnt = e > b ? e - b : 0;
}

/* A stage of a staged exchange, on an axis an earlier stage exchanged: the owned points
 * plus the halo points that stage filled on each side with a neighbour (the same interval
 * on both sides of a message: they share their coordinate on this axis). */
static void widened(const hs_plan p, const hs_fieldinfo *fi, int a, int *lo, int *cnt) {
  int o[3] = {0, 0, 0}, b = fi->own_lo[a], e = fi->own_hi[a];
  o[a] = -1;
  if (hs__side_count(p, fi, a, -1) > 0 && neighbour(p->decomp, o) != MPI_PROC_NULL) b = -fi->depth_lo[a];
  o[a] = 1;
  if (hs__side_count(p, fi, a, 1) > 0 && neighbour(p->decomp, o) != MPI_PROC_NULL)
    e = fi->n[a] + fi->depth_hi[a];
  *lo = b;
  *cnt = e - b;
}

/* Interior strip sent toward side o (send) or halo box on side o (recv) of field f. */
static hs_region box_for(const hs_plan p, const int o[HS_MAX_DIMS], int field, bool halo) {
  hs_region b;
  b.field = field;
  const hs_fieldinfo *fi = &p->fields[field];
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    if (a >= p->ndims) {
      b.lo[a] = 0;
      b.count[a] = fi->n[a];
      continue;
    }
    if (o[a] == 0 && p->core->stage_full) { /* a sweep: the whole swapped halo */
      b.lo[a] = -fi->depth_lo[a];
      b.count[a] = fi->depth_lo[a] + fi->n[a] + fi->depth_hi[a];
    } else if (o[a] == 0 && (p->core->stage_wide >> a & 1u))
      widened(p, fi, a, &b.lo[a], &b.count[a]);
    else
      interval(fi, a, o[a], halo, &b.lo[a], &b.count[a]);
  }
  return b;
}

/* Reduce a box to a copy program: sort axes by stride, merge contiguous ones. */
static hs_section make_section(const hs_plan p, hs_region box, int comp) {
  hs_section s;
  memset(&s, 0, sizeof s);
  s.box = box;
  s.comp = comp;
  const hs_fieldinfo *fi = &p->fields[box.field];
  size_t e = fi->cell;
  size_t nelem = 1;
  for (int a = 0; a < HS_MAX_DIMS; a++) nelem *= (size_t)box.count[a];
  s.bytes = nelem * e;
  s.n1 = s.n2 = s.n3 = 1;
  if (fi->pack) {
    s.run = s.bytes;
    return s;
  }
  ptrdiff_t base = comp > 0 ? comp * fi->comp_bytes : 0;
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

static int peer_index(hs_plan p, int rank) {
  for (int i = 0; i < p->npeers; i++)
    if (p->peers[i].rank == rank) return i;
  return -1;
}

/* Owned interior points per field and axis. A shared node plane is not owned when this rank
 * receives it: the neighbour on that side exists and the plan receives on that side. */
static void owned_ranges(hs_plan p) {
  bool recv_side[HS_MAX_DIMS][2] = {{false, false}, {false, false}, {false, false}};
  for (int i = 0; i < p->core->noffsets && !p->decomp->box; i++)
    for (int a = 0; a < p->ndims; a++)
      if (p->core->offsets[i][a] != 0) recv_side[a][p->core->offsets[i][a] < 0 ? 1 : 0] = true;
  for (int a = 0; a < p->ndims; a++)
    for (int s = 0; s < 2; s++) {
      int o[3] = {0, 0, 0};
      o[a] = s ? 1 : -1;
      if (!p->decomp->box && neighbour(p->decomp, o) == MPI_PROC_NULL) recv_side[a][s] = false;
    }
  for (int f = 0; f < p->nfields; f++) {
    hs_fieldinfo *fi = &p->fields[f];
    for (int a = 0; a < HS_MAX_DIMS; a++) {
      fi->own_lo[a] = 0;
      fi->own_hi[a] = fi->n[a];
      if (a >= p->ndims || !fi->node[a]) continue;
      if (fi->owner[a] == HS_OWNER_LOWER && recv_side[a][0]) fi->own_lo[a] = 1;
      if (fi->owner[a] == HS_OWNER_UPPER && recv_side[a][1]) fi->own_hi[a] = fi->n[a] - 1;
    }
  }
}

/* Sections of field f for offset i: one per component of a slowest-component field (each a
 * copy program of its own), else one. Zero-byte boxes give none. */
static int add_sections(hs_plan p, int i, int f, bool recv, hs_section *out, size_t *bytes) {
  const int *o = p->core->offsets[i];
  int neg[3] = {-o[0], -o[1], -o[2]};
  if (!hs__region_flow(p, f, o)) return 0;
  hs_region b = box_for(p, recv ? neg : o, f, recv);
  if (b.count[0] == 0 || b.count[1] == 0 || b.count[2] == 0) return 0;
  const hs_fieldinfo *fi = &p->fields[f];
  int nc = fi->comp_fastest ? 1 : fi->ncomp;
  for (int c = 0; c < nc; c++) {
    hs_section s = make_section(p, b, fi->comp_fastest || fi->ncomp == 1 ? -1 : c);
    s.offset_index = i;
    s.msg_offset = *bytes;
    *bytes += s.bytes;
    out[c] = s;
  }
  return nc;
}

/* Indices of secs[0..n) field by field, stable (a counting sort on the field). */
static int *field_order(const hs_section *secs, int n, int nf) {
  int *order = malloc((size_t)(n + 1) * sizeof *order);
  int *start = calloc((size_t)(nf + 1), sizeof *start);
  if (!order || !start) {
    free(order);
    free(start);
    return NULL;
  }
  for (int i = 0; i < n; i++) start[secs[i].box.field + 1]++;
  for (int f = 0; f < nf; f++) start[f + 1] += start[f];
  for (int i = 0; i < n; i++) order[start[secs[i].box.field]++] = i;
  free(start);
  return order;
}

static int finish_self(hs_plan p, size_t maxself);

/* Box decomposition. The halo of rank r for field f is split by side h in {-1,0,1}^ndims
 * (h_a = -1: the depth_lo cells below r's box on axis a, 0: r's own range, +1: the depth_hi above); a
 * message from s to r carries, for each offset o of the plan (the flow direction, r's side
 * h = -o), each periodic image t (lexicographic over {-1,0,1} on periodic axes, 0 elsewhere)
 * and each field and component, the cells of that halo part inside s's box shifted by t times
 * the global extent. Both ends know every box, so both list the same sections in the same
 * order; halo cells no box owns (a gap) are in no message and stay as they were. */
static int box_part(const hs_plan p, int f, const int o[HS_MAX_DIMS], int r, int s,
                    const int t[HS_MAX_DIMS], hs_region *rb, hs_region *sb) {
  const hs_decomp d = p->decomp;
  const hs_fieldinfo *fi = &p->fields[f];
  const int *br = d->box + 6 * r, *bs = d->box + 6 * s;
  rb->field = sb->field = f;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    rb->lo[a] = sb->lo[a] = 0;
    rb->count[a] = sb->count[a] = fi->n[a];
    if (a >= p->ndims) continue;
    int lo = o[a] > 0 ? br[a] - fi->depth_lo[a] : o[a] < 0 ? br[3 + a] : br[a];
    int hi = o[a] > 0 ? br[a] : o[a] < 0 ? br[3 + a] + fi->depth_hi[a] : br[3 + a];
    int sh = t[a] * d->global[a];
    if (bs[a] + sh > lo) lo = bs[a] + sh;
    if (bs[3 + a] + sh < hi) hi = bs[3 + a] + sh;
    if (lo >= hi) return 0;
    rb->lo[a] = lo - br[a];
    sb->lo[a] = lo - sh - bs[a];
    rb->count[a] = sb->count[a] = hi - lo;
  }
  return 1;
}

/* Sections of the message from s to r (recv: this rank is r) into out (NULL: count only). */
static int box_sections(hs_plan p, int r, int s, bool recv, hs_section *out, size_t *bytes) {
  int n = 0, t[3] = {0, 0, 0}, tl[3], th[3];
  for (int a = 0; a < 3; a++) tl[a] = -(th[a] = a < p->ndims && p->decomp->periodic[a]);
  for (int i = 0; i < p->core->noffsets; i++)
    for (t[0] = tl[0]; t[0] <= th[0]; t[0]++)
      for (t[1] = tl[1]; t[1] <= th[1]; t[1]++)
        for (t[2] = tl[2]; t[2] <= th[2]; t[2]++)
          for (int f = 0; f < p->nfields; f++) {
            hs_region rb, sb;
            if (!hs__region_flow(p, f, p->core->offsets[i]) ||
                !box_part(p, f, p->core->offsets[i], r, s, t, &rb, &sb))
              continue;
            const hs_fieldinfo *fi = &p->fields[f];
            int nc = fi->comp_fastest ? 1 : fi->ncomp;
            for (int c = 0; c < nc; c++, n++) {
              if (!out) continue;
              hs_section x = make_section(p, recv ? rb : sb, fi->comp_fastest || fi->ncomp == 1 ? -1 : c);
              x.offset_index = i;
              x.msg_offset = *bytes;
              *bytes += x.bytes;
              out[n] = x;
            }
          }
  return n;
}

/* Peers in ascending rank; self copies (periodic images of this rank) in message order. */
static int box_geometry(hs_plan p, size_t *maxself_out) {
  int me = p->rank;
  for (int i = 0; i < p->core->noffsets; i++)
    p->core->send_to[i] = p->core->recv_from[i] = MPI_PROC_NULL;
  p->peers = calloc((size_t)p->size + 1, sizeof *p->peers);
  if (!p->peers) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  for (int q = 0; q < p->size; q++) {
    if (q == me) continue;
    int ns = box_sections(p, q, me, false, NULL, NULL);
    int nr = box_sections(p, me, q, true, NULL, NULL);
    if (ns + nr == 0) continue;
    hs_peer *pe = &p->peers[p->npeers++];
    pe->rank = q;
    pe->send = calloc((size_t)ns + 1, sizeof *pe->send);
    pe->recv = calloc((size_t)nr + 1, sizeof *pe->recv);
    if (!pe->send || !pe->recv) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
    pe->nsend = box_sections(p, q, me, false, pe->send, &pe->send_bytes);
    pe->nrecv = box_sections(p, me, q, true, pe->recv, &pe->recv_bytes);
    p->core->core_bytes += (uint64_t)(ns + nr) * (sizeof(hs_section) + sizeof(int));
    pe->send_fm = field_order(pe->send, pe->nsend, p->nfields);
    pe->recv_fm = field_order(pe->recv, pe->nrecv, p->nfields);
    if (!pe->send_fm || !pe->recv_fm)
      return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  }
  int n = box_sections(p, me, me, true, NULL, NULL);
  p->self = calloc((size_t)n + 1, sizeof *p->self);
  hs_section *src = calloc((size_t)n + 1, sizeof *src), *dst = calloc((size_t)n + 1, sizeof *dst);
  if (!p->self || !src || !dst) {
    free(src);
    free(dst);
    return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  }
  size_t sb = 0, db = 0, maxself = 0;
  box_sections(p, me, me, false, src, &sb);
  box_sections(p, me, me, true, dst, &db);
  for (int i = 0; i < n; i++) {
    src[i].msg_offset = dst[i].msg_offset = 0;
    p->self[p->nself++] = (hs_selfcopy){src[i], dst[i]};
    p->core->self_bytes += src[i].bytes;
    if (src[i].bytes > maxself) maxself = src[i].bytes;
  }
  free(src);
  free(dst);
  *maxself_out = maxself;
  return HS_OK;
}

int hs__build_geometry(hs_plan p) {
  hs__enumerate_offsets(p);
  int rc = hs__apply_order(p);
  if (rc != HS_OK) return rc;
  owned_ranges(p);
  size_t maxself = 0;
  if (p->decomp->box) {
    rc = box_geometry(p, &maxself);
    return rc != HS_OK ? rc : finish_self(p, maxself);
  }
  if (p->core->stage_axis) hs__keep_stage_offsets(p);
  for (int i = 0; i < p->core->noffsets; i++) {
    int neg[3] = {-p->core->offsets[i][0], -p->core->offsets[i][1], -p->core->offsets[i][2]};
    p->core->send_to[i] = neighbour(p->decomp, p->core->offsets[i]);
    p->core->recv_from[i] = neighbour(p->decomp, neg);
  }
  /* Distinct peers in order of first appearance. */
  p->peers = calloc((size_t)(2 * p->core->noffsets + 1), sizeof *p->peers);
  if (!p->peers) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < p->core->noffsets; i++) {
      int r = pass == 0 ? p->core->send_to[i] : p->core->recv_from[i];
      if (r == MPI_PROC_NULL || r == p->rank || peer_index(p, r) >= 0) continue;
      p->peers[p->npeers++].rank = r;
    }
  int nf = p->nfields, nsec = 0; /* sections per offset: every component of every field */
  for (int f = 0; f < nf; f++) nsec += p->fields[f].comp_fastest ? 1 : p->fields[f].ncomp;
  for (int k = 0; k < p->npeers; k++) {
    hs_peer *pe = &p->peers[k];
    int ns = 0, nr = 0;
    for (int i = 0; i < p->core->noffsets; i++) {
      if (p->core->send_to[i] == pe->rank) ns++;
      if (p->core->recv_from[i] == pe->rank) nr++;
    }
    pe->send = calloc((size_t)(ns * nsec + 1), sizeof *pe->send);
    pe->recv = calloc((size_t)(nr * nsec + 1), sizeof *pe->recv);
    if (!pe->send || !pe->recv) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
    p->core->core_bytes += (uint64_t)(ns + nr) * (uint64_t)nsec * sizeof(hs_section);
    /* Sections ordered by the sender's offset, then field, then component: both sides agree
     * (design.md). Empty boxes (a field with depth 0 on that side) have no section. */
    for (int i = 0; i < p->core->noffsets; i++)
      for (int f = 0; f < nf; f++) {
        if (p->core->send_to[i] == pe->rank)
          pe->nsend += add_sections(p, i, f, false, pe->send + pe->nsend, &pe->send_bytes);
        if (p->core->recv_from[i] == pe->rank)
          pe->nrecv += add_sections(p, i, f, true, pe->recv + pe->nrecv, &pe->recv_bytes);
      }
  }
  /* A neighbour with nothing to move either way is no peer (symmetric on both sides). */
  int kept = 0;
  for (int k = 0; k < p->npeers; k++) {
    if (p->peers[k].nsend == 0 && p->peers[k].nrecv == 0) {
      free(p->peers[k].send);
      free(p->peers[k].recv);
      continue;
    }
    p->peers[kept++] = p->peers[k];
  }
  p->npeers = kept;
  for (int k = 0; k < p->npeers; k++) {
    hs_peer *pe = &p->peers[k];
    pe->send_fm = field_order(pe->send, pe->nsend, nf);
    pe->recv_fm = field_order(pe->recv, pe->nrecv, nf);
    if (!pe->send_fm || !pe->recv_fm)
      return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
    p->core->core_bytes += (uint64_t)(pe->nsend + pe->nrecv) * sizeof(int);
  }
  int nself = 0;
  for (int i = 0; i < p->core->noffsets; i++)
    if (p->core->send_to[i] == p->rank) nself++;
  p->self = calloc((size_t)(nself * nsec + 1), sizeof *p->self);
  if (!p->self) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  hs_section *tmp = calloc((size_t)(2 * nsec + 2), sizeof *tmp);
  if (!tmp) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  for (int i = 0; i < p->core->noffsets; i++) {
    if (p->core->send_to[i] != p->rank) continue;
    for (int f = 0; f < nf; f++) {
      size_t sb = 0, db = 0;
      int n = add_sections(p, i, f, false, tmp, &sb);
      add_sections(p, i, f, true, tmp + nsec + 1, &db);
      for (int c = 0; c < n; c++) {
        hs_selfcopy sc;
        sc.src = tmp[c];
        sc.dst = tmp[nsec + 1 + c];
        sc.src.msg_offset = sc.dst.msg_offset = 0;
        p->core->self_bytes += sc.src.bytes;
        if (sc.src.bytes > maxself) maxself = sc.src.bytes;
        p->self[p->nself++] = sc;
      }
    }
  }
  free(tmp);
  return finish_self(p, maxself);
}

/* Self copies field by field (stable): their order is free, and the reverse picks them by
 * offset, so within a field they stay in offset order. */
static int finish_self(hs_plan p, size_t maxself) {
  for (int i = 1; i < p->nself; i++) {
    hs_selfcopy c = p->self[i];
    int j = i;
    for (; j > 0 && p->self[j - 1].src.box.field > c.src.box.field; j--) p->self[j] = p->self[j - 1];
    p->self[j] = c;
  }
  if (p->has_callbacks && maxself > 0) {
    p->core->self_bounce = malloc(maxself);
    if (!p->core->self_bounce) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
    p->core->core_bytes += maxself;
  }
  return HS_OK;
}
