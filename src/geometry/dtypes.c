/* The plan's derived datatypes, one cache for every transport: per peer, one struct type
 * over all its send sections and one over its receive sections, with absolute addresses.
 * Entry 0 holds the registered arrays for the life of the plan (persistent requests may
 * refer to its types); the others hold recent per-swap sets, replaced least recently used. */
#include "hs_core.h"

#include <stdlib.h>
#include <string.h>

#define HS_DTYPE_CACHE 4

typedef struct {
  bool valid;
  char **ptrs;        /* the resolved field pointers the types address */
  hs_dtypes t;
  hs_dtypes flagged;  /* t with a header word ahead of each peer's data, built on request */
  hs_dtypes fieldwise; /* the sections in field order, built on request */
  uint64_t stamp;
} entry;

struct hs_dtype_cache {
  entry e[HS_DTYPE_CACHE];
  uint64_t clock;
};

bool hs__arrays_registered(const hs_plan p, void *const *arrays) {
  if (!arrays) return true;
  for (int f = 0; f < p->nfields; f++)
    if (arrays[f] && arrays[f] != p->fields[f].data) return false;
  return true;
}

static void free_list(MPI_Datatype *t, int n) {
  for (int k = 0; t && k < n; k++)
    if (t[k] != MPI_DATATYPE_NULL && t[k] != MPI_BYTE) MPI_Type_free(&t[k]);
  free(t);
}

static void entry_free(hs_plan p, entry *e) {
  free_list(e->t.send, p->npeers);
  free_list(e->t.recv, p->npeers);
  free_list(e->flagged.send, p->npeers);
  free_list(e->flagged.recv, p->npeers);
  free_list(e->fieldwise.send, p->npeers);
  free_list(e->fieldwise.recv, p->npeers);
  free(e->ptrs);
  memset(e, 0, sizeof *e);
}

/* One type over n sections of one peer's message, in message order, or in the order of
 * order[] (its field-by-field index list) if not NULL. */
static int sections_type(hs_plan p, const hs_section *secs, const int *order, int n,
                         void *const *arrays, MPI_Datatype *out) {
  *out = MPI_BYTE; /* no bytes: a valid committed type for count-0 edges */
  if (n == 0) return HS_OK;
  MPI_Datatype *types = malloc((size_t)n * sizeof *types);
  MPI_Aint *disp = malloc((size_t)n * sizeof *disp);
  int *len = malloc((size_t)n * sizeof *len);
  int rc = (types && disp && len) ? HS_OK : hs__error(HS_ERR_NOMEM, "out of memory building a datatype");
  int built = 0;
  for (; rc == HS_OK && built < n; built++) {
    const hs_section *s = &secs[order ? order[built] : built];
    rc = hs__section_datatype(p, s, &types[built]);
    if (rc != HS_OK) break;
    MPI_Get_address(hs__field_ptr(p, arrays, s->box.field) + s->base, &disp[built]);
    len[built] = 1;
  }
  if (rc == HS_OK) {
    int mrc = MPI_Type_create_struct(n, len, disp, types, out);
    if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(out);
    if (mrc != MPI_SUCCESS) {
      *out = MPI_BYTE;
      rc = hs__mpi_error(mrc, "MPI_Type_create_struct");
    }
  }
  for (int i = 0; i < built; i++) MPI_Type_free(&types[i]);
  free(types);
  free(disp);
  free(len);
  return rc;
}

static int entry_build(hs_plan p, entry *e, void *const *arrays) {
  size_t np = (size_t)(p->npeers > 0 ? p->npeers : 1);
  e->ptrs = malloc((size_t)p->nfields * sizeof(char *));
  e->t.send = malloc(np * sizeof(MPI_Datatype));
  e->t.recv = malloc(np * sizeof(MPI_Datatype));
  if (!e->ptrs || !e->t.send || !e->t.recv) return hs__error(HS_ERR_NOMEM, "out of memory for datatypes");
  for (size_t k = 0; k < np; k++) e->t.send[k] = e->t.recv[k] = MPI_BYTE;
  for (int f = 0; f < p->nfields; f++) e->ptrs[f] = hs__field_ptr(p, arrays, f);
  e->valid = true;
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *pe = &p->peers[k];
    int rc = sections_type(p, pe->send, NULL, pe->nsend, arrays, &e->t.send[k]);
    if (rc == HS_OK) rc = sections_type(p, pe->recv, NULL, pe->nrecv, arrays, &e->t.recv[k]);
    if (rc != HS_OK) return rc;
  }
  return HS_OK;
}

static bool entry_matches(const hs_plan p, const entry *e, void *const *arrays) {
  if (!e->valid) return false;
  for (int f = 0; f < p->nfields; f++)
    if (e->ptrs[f] != hs__field_ptr(p, arrays, f)) return false;
  return true;
}

static int lookup(hs_plan p, void *const *arrays, entry **out) {
  if (p->has_callbacks)
    return hs__error(HS_ERR_INTERNAL, "transport %s: derived datatypes cannot describe fields "
                                      "with pack/unpack hooks",
                     p->transport_name);
  if (!p->core->dtypes) {
    p->core->dtypes = calloc(1, sizeof *p->core->dtypes);
    if (!p->core->dtypes) return hs__error(HS_ERR_NOMEM, "out of memory for datatypes");
  }
  struct hs_dtype_cache *c = p->core->dtypes;
  c->clock++;
  int slot = -1;
  if (hs__arrays_registered(p, arrays)) {
    slot = 0;
  } else {
    for (int i = 1; i < HS_DTYPE_CACHE && slot < 0; i++)
      if (entry_matches(p, &c->e[i], arrays)) slot = i;
  }
  if (slot < 0) {
    slot = 1;
    for (int i = 1; i < HS_DTYPE_CACHE; i++) {
      if (!c->e[i].valid) {
        slot = i;
        break;
      }
      if (c->e[i].stamp < c->e[slot].stamp) slot = i;
    }
    entry_free(p, &c->e[slot]);
  }
  entry *e = &c->e[slot];
  if (!e->valid) {
    int rc = entry_build(p, e, arrays);
    if (rc != HS_OK) {
      entry_free(p, e);
      return rc;
    }
  }
  e->stamp = c->clock;
  *out = e;
  return HS_OK;
}

int hs__dtypes_get(hs_plan p, void *const *arrays, const hs_dtypes **out) {
  entry *e;
  int rc = lookup(p, arrays, &e);
  if (rc == HS_OK) *out = &e->t;
  return rc;
}

/* A per-peer set derived from an entry's sections, built into *slot on first use: fn gives
 * peer k's send and receive types (ctx: what it needs). */
typedef int (*peer_types_fn)(hs_plan p, int k, const void *ctx, MPI_Datatype *send,
                             MPI_Datatype *recv);
static int derived(hs_plan p, hs_dtypes *slot, peer_types_fn fn, const void *ctx,
                   const hs_dtypes **out) {
  int rc = HS_OK;
  if (!slot->send) {
    size_t np = (size_t)(p->npeers > 0 ? p->npeers : 1);
    hs_dtypes f = {malloc(np * sizeof(MPI_Datatype)), malloc(np * sizeof(MPI_Datatype))};
    if (!f.send || !f.recv) rc = hs__error(HS_ERR_NOMEM, "out of memory for datatypes");
    for (size_t k = 0; rc == HS_OK && k < np; k++) f.send[k] = f.recv[k] = MPI_BYTE;
    for (int k = 0; rc == HS_OK && k < p->npeers; k++) rc = fn(p, k, ctx, &f.send[k], &f.recv[k]);
    if (rc != HS_OK) {
      free_list(f.send, p->npeers);
      free_list(f.recv, p->npeers);
      return rc;
    }
    *slot = f;
  }
  *out = slot;
  return HS_OK;
}

static int fieldwise_peer(hs_plan p, int k, const void *ctx, MPI_Datatype *send,
                          MPI_Datatype *recv) {
  const hs_peer *pe = &p->peers[k];
  void *const *arrays = ctx;
  int rc = sections_type(p, pe->send, pe->send_fm, pe->nsend, arrays, send);
  return rc == HS_OK ? sections_type(p, pe->recv, pe->recv_fm, pe->nrecv, arrays, recv) : rc;
}

int hs__dtypes_get_fieldwise(hs_plan p, void *const *arrays, const hs_dtypes **out) {
  entry *e;
  int rc = lookup(p, arrays, &e);
  return rc == HS_OK ? derived(p, &e->fieldwise, fieldwise_peer, arrays, out) : rc;
}

/* {the word at flag, then t} (t's displacements are absolute); MPI_BYTE stays (no data). */
static int with_header(const int *flag, MPI_Datatype t, MPI_Datatype *out) {
  *out = MPI_BYTE;
  if (t == MPI_BYTE) return HS_OK;
  int len[2] = {1, 1};
  MPI_Aint disp[2] = {0, 0};
  MPI_Datatype types[2] = {MPI_INT, t};
  MPI_Get_address(flag, &disp[0]);
  int mrc = MPI_Type_create_struct(2, len, disp, types, out);
  if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(out);
  if (mrc != MPI_SUCCESS) {
    *out = MPI_BYTE;
    return hs__mpi_error(mrc, "MPI_Type_create_struct (header word)");
  }
  return HS_OK;
}

typedef struct {
  const int *sflag;
  int *rflag;
  const hs_dtypes *fw;
} flag_ctx;

static int flagged_peer(hs_plan p, int k, const void *ctx, MPI_Datatype *send,
                        MPI_Datatype *recv) {
  const flag_ctx *c = ctx;
  (void)p;
  int rc = with_header(&c->sflag[k], c->fw->send[k], send);
  return rc == HS_OK ? with_header(&c->rflag[k], c->fw->recv[k], recv) : rc;
}

int hs__dtypes_get_flagged(hs_plan p, void *const *arrays, const int *sflag, int *rflag,
                           const hs_dtypes **out) {
  entry *e;
  flag_ctx c = {sflag, rflag, NULL};
  int rc = lookup(p, arrays, &e);
  /* both sides have the field-by-field types: nbr's only way */
  if (rc == HS_OK && !e->flagged.send) rc = hs__dtypes_get_fieldwise(p, arrays, &c.fw);
  return rc == HS_OK ? derived(p, &e->flagged, flagged_peer, &c, out) : rc;
}

void hs__dtypes_free(hs_plan p) {
  if (!p->core->dtypes) return;
  for (int i = 0; i < HS_DTYPE_CACHE; i++) entry_free(p, &p->core->dtypes->e[i]);
  free(p->core->dtypes);
  p->core->dtypes = NULL;
}
