/* Halo plans: validation, geometry (offsets, peers, sections), the swap state machine. */
#include "hs_internal.h"

#include <stdio.h>
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

static MPI_Datatype type_mpi(hs_type t) {
  switch (t) {
  case HS_FLOAT64: return MPI_DOUBLE;
  case HS_FLOAT32: return MPI_FLOAT;
  case HS_INT32: return MPI_INT32_T;
  default: return MPI_INT64_T;
  }
}

hs_field hs_field_array(hs_type type, void *data, hs_layout layout, int halo) {
  hs_field f;
  memset(&f, 0, sizeof f);
  f.type = type;
  f.data = data;
  f.layout = layout;
  for (int a = 0; a < HS_MAX_DIMS; a++) f.halo[a] = halo;
  return f;
}

void hs_plan_desc_init(hs_plan_desc *d) {
  memset(d, 0, sizeof *d);
  d->depth[0] = d->depth[1] = 1;
  d->stencil = HS_STENCIL_BOX;
  d->oneway = HS_ONEWAY_NONE;
  d->transport = HS_TRANSPORT_DEFAULT;
}

/* ------------------------------------------------------------------ options */
static int add_options(hs_plan p, const char *list, const char *origin) {
  if (!list) return HS_OK;
  const char *s = list;
  while (*s) {
    const char *end = strchr(s, ',');
    size_t n = end ? (size_t)(end - s) : strlen(s);
    if (n > 0) {
      const char *eq = memchr(s, '=', n);
      if (!eq || eq == s)
        return hs__error(HS_ERR_ARG, "%s: option '%.*s' is not of the form key=value", origin,
                         (int)n, s);
      size_t kl = (size_t)(eq - s), vl = n - kl - 1;
      if (kl >= sizeof p->options[0].key || vl >= sizeof p->options[0].val)
        return hs__error(HS_ERR_ARG, "%s: option '%.*s' is too long", origin, (int)n, s);
      int slot = -1;
      for (int i = 0; i < p->noptions; i++)
        if (strlen(p->options[i].key) == kl && !strncmp(p->options[i].key, s, kl)) slot = i;
      if (slot < 0) {
        if (p->noptions == HS_MAX_OPTIONS)
          return hs__error(HS_ERR_ARG, "%s: more than %d options", origin, HS_MAX_OPTIONS);
        slot = p->noptions++;
      }
      memcpy(p->options[slot].key, s, kl);
      p->options[slot].key[kl] = 0;
      memcpy(p->options[slot].val, eq + 1, vl);
      p->options[slot].val[vl] = 0;
    }
    s += n;
    if (*s == ',') s++;
  }
  return HS_OK;
}

const char *hs__opt_get(hs_plan p, const char *key) {
  for (int i = 0; i < p->noptions; i++)
    if (!strcmp(p->options[i].key, key)) {
      p->options[i].used = true;
      return p->options[i].val;
    }
  return NULL;
}

int hs__opt_int(hs_plan p, const char *key, int def, int *out) {
  const char *v = hs__opt_get(p, key);
  *out = def;
  if (!v) return HS_OK;
  char *end;
  long x = strtol(v, &end, 10);
  if (*v == 0 || *end != 0)
    return hs__error(HS_ERR_ARG, "transport %s: option %s = '%s' is not an integer",
                     p->transport_name, key, v);
  *out = (int)x;
  return HS_OK;
}

/* ------------------------------------------------------------------ memory */
void *hs__malloc(hs_plan p, size_t n) {
  void *x = malloc(n ? n : 1);
  if (x) p->transport_bytes += n;
  return x;
}
void *hs__calloc(hs_plan p, size_t n) {
  void *x = calloc(1, n ? n : 1);
  if (x) p->transport_bytes += n;
  return x;
}
void hs__free(hs_plan p, void *ptr, size_t n) {
  if (!ptr) return;
  free(ptr);
  p->transport_bytes -= n;
}

/* ------------------------------------------------------------------ validation */
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

static int check_desc(const hs_decomp d, const hs_plan_desc *desc) {
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

static int check_same(hs_plan p, const hs_plan_desc *desc) {
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

/* ------------------------------------------------------------------ transport choice */
static const char *const id_names[] = {"",      "p2p",   "rma-fence", "rma-pscw", "rma-passive",
                                       "shm",   "shmem", "nbr",       "auto"};

const char *hs_transport_id_name(hs_transport_id id) {
  if ((int)id < 0 || (size_t)id >= sizeof id_names / sizeof id_names[0]) return NULL;
  if (id == HS_TRANSPORT_DEFAULT) {
    const char *env = getenv("HALOSWAP_TRANSPORT");
    return env && *env ? env : "p2p";
  }
  return id_names[id];
}

/* Set while a transport creates a plan of its own (auto's candidates): HALOSWAP_OPTIONS was
 * meant for the outer plan, whose transport has already accepted it. */
static _Thread_local int nested_create;

int hs__plan_create_nested(hs_decomp d, const hs_plan_desc *desc, hs_plan *out) {
  nested_create++;
  int rc = hs_plan_create(d, desc, out);
  nested_create--;
  return rc;
}

static int resolve_transport(hs_plan p, const hs_plan_desc *desc) {
  const char *spec = desc->transport_name;
  if (!spec) {
    spec = hs_transport_id_name(desc->transport);
    if (!spec)
      return hs__error(HS_ERR_ARG, "hs_plan_create: transport = %d is not an hs_transport_id",
                       (int)desc->transport);
  }
  const char *colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  if (n == 0 || n >= sizeof p->transport_name)
    return hs__error(HS_ERR_ARG, "hs_plan_create: transport name '%s' is empty or too long",
                     spec);
  memcpy(p->transport_name, spec, n);
  p->transport_name[n] = 0;
  for (char *c = p->transport_name; *c; c++)
    if (*c == '_') *c = '-';
  int rc = HS_OK;
  if (!nested_create) rc = add_options(p, getenv("HALOSWAP_OPTIONS"), "HALOSWAP_OPTIONS");
  if (rc == HS_OK && colon) rc = add_options(p, colon + 1, "transport name");
  if (rc == HS_OK) rc = add_options(p, desc->options, "options");
  if (rc != HS_OK) return rc;
  p->ops = hs__transport_find(p->transport_name);
  if (!p->ops) {
    char list[512] = "";
    for (int i = 0; i < hs_transport_count(); i++) {
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", hs_transport_name(i));
    }
    return hs__error(HS_ERR_ARG, "hs_plan_create: unknown transport '%s' (built: %s)",
                     p->transport_name, list);
  }
  for (int i = 0; i < p->noptions; i++) {
    bool known = false;
    for (const char *const *k = p->ops->option_keys; k && *k; k++)
      if (!strcmp(*k, p->options[i].key)) known = true;
    if (!known) {
      char list[256] = "";
      for (const char *const *k = p->ops->option_keys; k && *k; k++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", *k);
      }
      return hs__error(HS_ERR_ARG,
                       "hs_plan_create: transport %s has no option '%s' (options: %s)",
                       p->transport_name, p->options[i].key, list[0] ? list : "none");
    }
  }
  return HS_OK;
}

/* ------------------------------------------------------------------ geometry */
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

static int build_geometry(hs_plan p) {
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

/* ------------------------------------------------------------------ create / free */
static void free_core(hs_plan p) {
  if (p->peers)
    for (int k = 0; k < p->npeers; k++) {
      free(p->peers[k].send);
      free(p->peers[k].recv);
    }
  free(p->peers);
  free(p->self);
  free(p->self_bounce);
  free(p->fields);
  if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
  free(p);
}

static int copy_fields(hs_plan p, const hs_plan_desc *desc) {
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

int hs_plan_create(hs_decomp d, const hs_plan_desc *desc, hs_plan *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_plan_create: out is NULL");
  *out = NULL;
  if (!d) return hs__error(HS_ERR_ARG, "hs_plan_create: decomposition is NULL");
  int rc = desc ? check_desc(d, desc) : hs__error(HS_ERR_ARG, "hs_plan_create: desc is NULL");
  rc = hs__agree(d->comm, rc);
  if (rc != HS_OK) return rc;

  hs_plan p = calloc(1, sizeof *p);
  if (!p) rc = hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  rc = hs__agree(d->comm, rc);
  if (rc != HS_OK) {
    free(p);
    return rc;
  }
  p->comm = MPI_COMM_NULL;
  p->decomp = d;
  p->ndims = d->ndims;
  p->rank = d->rank;
  p->size = d->size;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    p->local[a] = d->local[a];
    p->depth[a] = desc->depth[a];
  }
  p->stencil = desc->stencil;
  p->oneway = desc->oneway;
  p->oneway_axis = desc->oneway_axis;
  p->nfields = desc->nfields;
  p->core_self_copy = true;
  int mrc = MPI_Comm_dup(d->comm, &p->comm);
  if (mrc != MPI_SUCCESS) {
    p->comm = MPI_COMM_NULL;
    free_core(p);
    return hs__mpi_error(mrc, "MPI_Comm_dup");
  }
  MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
  rc = copy_fields(p, desc);
  if (rc == HS_OK) rc = resolve_transport(p, desc);
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK) rc = hs__agree(p->comm, check_same(p, desc));
  if (rc == HS_OK) {
    char why[256] = "";
    int q = p->ops->query ? p->ops->query(p->comm, why, sizeof why) : HS_OK;
    if (q != HS_OK)
      rc = hs__error(q, "hs_plan_create: transport %s is not usable here: %s", p->transport_name,
                     why);
    rc = hs__agree(p->comm, rc);
  }
  if (rc == HS_OK) rc = hs__agree(p->comm, build_geometry(p));
  if (rc != HS_OK) {
    free_core(p);
    return rc;
  }
  rc = hs__agree(p->comm, p->ops->setup(p));
  if (rc == HS_OK) {
    for (int i = 0; i < p->noptions; i++)
      if (!p->options[i].used)
        rc = hs__error(HS_ERR_ARG, "hs_plan_create: transport %s ignored option '%s'",
                       p->transport_name, p->options[i].key);
    rc = hs__agree(p->comm, rc);
  }
  if (rc != HS_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hs_error_message());
    if (p->ops->destroy) p->ops->destroy(p);
    free_core(p);
    hs__error(rc, "%s", msg);
    return rc;
  }
  for (int k = 0; k < p->npeers; k++) {
    p->stats.bytes_sent_per_swap += p->peers[k].send_bytes;
    p->stats.bytes_recv_per_swap += p->peers[k].recv_bytes;
  }
  p->stats.bytes_self_per_swap = p->self_bytes;
  p->stats.npeers = p->npeers;
  *out = p;
  return HS_OK;
}

int hs_plan_free(hs_plan *pp) {
  if (!pp || !*pp) return HS_OK;
  hs_plan p = *pp;
  int rc = HS_OK;
  if (p->in_progress)
    rc = hs__error(HS_ERR_STATE, "hs_plan_free: a swap is in progress; complete it first");
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) return rc;
  if (p->ops->destroy) p->ops->destroy(p);
  free_core(p);
  *pp = NULL;
  return HS_OK;
}

/* ------------------------------------------------------------------ swaps */
static int check_arrays(hs_plan p, void *const *arrays, const char *who) {
  for (int f = 0; f < p->nfields; f++)
    if (!p->fields[f].pack && !hs__field_ptr(p, arrays, f))
      return hs__error(HS_ERR_ARG, "%s: field %d has no data (registered and given both NULL)",
                       who, f);
  return HS_OK;
}

int hs_swap_start(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_swap_start: plan is NULL");
  if (p->in_progress)
    return hs__error(HS_ERR_STATE, "hs_swap_start: a swap is already in progress on this plan");
  int rc = check_arrays(p, arrays, "hs_swap_start");
  if (rc != HS_OK) return rc;
  double t0 = hs__wtime();
  rc = p->ops->start(p, arrays);
  p->stats.seconds_start += hs__wtime() - t0;
  if (rc == HS_OK) p->in_progress = true;
  return rc;
}

int hs_swap_complete(hs_plan p, void *const *arrays) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_swap_complete: plan is NULL");
  if (!p->in_progress)
    return hs__error(HS_ERR_STATE, "hs_swap_complete: no swap was started on this plan");
  double t0 = hs__wtime();
  if (p->core_self_copy) hs__self_copy(p, arrays);
  int rc = p->ops->complete(p, arrays);
  p->stats.seconds_complete += hs__wtime() - t0;
  p->in_progress = false;
  if (rc == HS_OK) p->stats.swaps++;
  return rc;
}

int hs_swap(hs_plan p, void *const *arrays) {
  int rc = hs_swap_start(p, arrays);
  return rc == HS_OK ? hs_swap_complete(p, arrays) : rc;
}

int hs_plan_get_stats(hs_plan p, hs_plan_stats *st) {
  if (!p || !st) return hs__error(HS_ERR_ARG, "hs_plan_get_stats: NULL argument");
  *st = p->stats;
  st->bytes_allocated = p->core_bytes + p->transport_bytes;
  return HS_OK;
}

int hs_plan_reset_stats(hs_plan p) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_plan_reset_stats: plan is NULL");
  p->stats.swaps = 0;
  p->stats.seconds_start = p->stats.seconds_complete = 0;
  return HS_OK;
}

const char *hs_plan_transport(hs_plan p) { return p ? p->transport_name : NULL; }

const char *hs_plan_selected_transport(hs_plan p) {
  if (!p) return NULL;
  hs_plan d = p->ops->delegate ? p->ops->delegate(p) : NULL;
  return d ? hs_plan_selected_transport(d) : p->transport_name;
}

int hs_plan_describe(hs_plan p, char *buf, size_t len) {
  if (!p || !buf) return hs__error(HS_ERR_ARG, "hs_plan_describe: NULL argument");
  size_t n = 0;
#define PUT(...)                                                             \
  do {                                                                       \
    int w_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__);          \
    if (w_ > 0) n += (size_t)w_;                                             \
  } while (0)
  PUT("transport %s", p->transport_name);
  for (int i = 0; i < p->noptions; i++)
    PUT("%s%s=%s", i ? "," : ":", p->options[i].key, p->options[i].val);
  PUT("; rank %d; %d fields; depth %d,%d,%d; %s; %d offsets; %d peers:", p->rank, p->nfields,
      p->depth[0], p->depth[1], p->depth[2], p->stencil == HS_STENCIL_BOX ? "box" : "star",
      p->noffsets, p->npeers);
  for (int k = 0; k < p->npeers; k++)
    PUT(" [%d: send %zu B, recv %zu B]", p->peers[k].rank, p->peers[k].send_bytes,
        p->peers[k].recv_bytes);
  PUT("; self %zu B; allocated %llu B", p->self_bytes,
      (unsigned long long)(p->core_bytes + p->transport_bytes));
  if (p->ops->describe && n + 1 < len) p->ops->describe(p, buf + n, len - n);
#undef PUT
  return HS_OK;
}
