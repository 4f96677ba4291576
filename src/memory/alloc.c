/* Field memory that ranks on one node can address directly (hs_alloc / hs_free): one MPI-3
 * shared window per allocation on the node communicator, recorded in a small table so a
 * transport can find, for a field pointer, the same allocation in a neighbour's address
 * space. Falls back to plain memory when shared windows are unavailable (or when
 * HALOSWAP_ALLOC=plain), still freed by hs_free. Uses only MPI. The core option remap=1
 * (src/memory/remap.c) records the caller's own arrays, made node-shared, in the same table
 * (hs__shared_add); hs_free never frees those. */
#include "hs_core.h"

#include <stdlib.h>
#include <string.h>

typedef struct hs_shalloc {
  struct hs_shalloc *next;
  hs_decomp d;
  char *ptr;
  size_t bytes;
  uint64_t id;     /* the same on every rank of the node for this allocation */
  int shared;      /* 1: node-shared (a window, or memory shared by hs__shared_add) */
  int added;       /* 1: recorded by hs__shared_add (remap=1), not hs_alloc's */
  MPI_Win win;
  MPI_Comm node;
  int nnode;
  int *ranks;      /* decomposition rank of each node rank */
  char **bases;    /* each node rank's segment, mapped in this process */
  size_t *sizes;
} hs_shalloc;

static hs_shalloc *table;
static uint64_t next_id = 1;

static void entry_release(hs_shalloc *e) {
  if (e->shared) {
    MPI_Win_free(&e->win);
    MPI_Comm_free(&e->node);
  } else {
    free(e->ptr);
  }
  free(e->ranks);
  free(e->bases);
  free(e->sizes);
  free(e);
}

/* Undo a shared window made on this node only (the others fell back to plain memory). */
static void unshare(hs_shalloc *e) {
  MPI_Win_free(&e->win);
  MPI_Comm_free(&e->node);
  free(e->ranks);
  free(e->bases);
  free(e->sizes);
  e->ranks = NULL;
  e->bases = NULL;
  e->sizes = NULL;
}

/* Try a shared window; returns 1 on success (e filled), 0 if this rank could not. */
static int try_shared(hs_decomp d, size_t bytes, hs_shalloc *e) {
  if (hs__node_comm(d->comm, 0, &e->node) != HS_OK) return 0;
  MPI_Info info;
  MPI_Info_create(&info);
  /* Each rank's segment page-aligned and placed near that rank (first touch). */
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void *base = NULL;
  int rc = MPI_Win_allocate_shared((MPI_Aint)(bytes ? bytes : 1), 1, info, e->node, &base, &e->win);
  MPI_Info_free(&info);
  int ok = rc == MPI_SUCCESS;
  /* The allocation is collective over the node: agree before anything else collective. */
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, e->node);
  if (!all) {
    if (ok) MPI_Win_free(&e->win);
    MPI_Comm_free(&e->node);
    return 0;
  }
  MPI_Win_set_errhandler(e->win, MPI_ERRORS_RETURN);
  e->ptr = base;
  MPI_Comm_size(e->node, &e->nnode);
  e->ranks = malloc((size_t)e->nnode * sizeof *e->ranks);
  e->bases = malloc((size_t)e->nnode * sizeof *e->bases);
  e->sizes = malloc((size_t)e->nnode * sizeof *e->sizes);
  ok = e->ranks && e->bases && e->sizes;
  MPI_Group gn, gd;
  MPI_Comm_group(e->node, &gn);
  MPI_Comm_group(d->comm, &gd);
  for (int i = 0; ok && i < e->nnode; i++) {
    MPI_Aint sz;
    int du;
    void *b;
    if (MPI_Win_shared_query(e->win, i, &sz, &du, &b) != MPI_SUCCESS) ok = 0;
    if (ok) {
      e->bases[i] = b;
      e->sizes[i] = (size_t)sz;
      MPI_Group_translate_ranks(gn, 1, &i, gd, &e->ranks[i]);
    }
  }
  MPI_Group_free(&gn);
  MPI_Group_free(&gd);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, e->node);
  if (!all) {
    unshare(e);
    return 0;
  }
  /* An id every node rank agrees on, never reused by this process. */
  uint64_t mine = next_id, id = 0;
  MPI_Allreduce(&mine, &id, 1, MPI_UINT64_T, MPI_MAX, e->node);
  next_id = id + 1;
  e->id = id;
  e->shared = 1;
  return 1;
}

int hs_alloc(hs_decomp d, size_t bytes, void **ptr) {
  if (!d) return hs__error(HS_ERR_ARG, "hs_alloc: decomposition is NULL");
  int rc = HS_OK;
  if (!ptr) rc = hs__error(HS_ERR_ARG, "hs_alloc: ptr is NULL");
  hs_shalloc *e = hs__calloc_agreed(d->comm, sizeof *e,
                                    "hs_alloc: out of memory for the allocation record", &rc);
  if (!e) return rc;
  *ptr = NULL;
  e->d = d;
  e->bytes = bytes;
  const char *env = getenv("HALOSWAP_ALLOC");
  int want = !(env && !strcmp(env, "plain")), all = 0;
  MPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MIN, d->comm);
  int shared = all ? try_shared(d, bytes, e) : 0;
  /* Shared on every node or plain everywhere: simpler to reason about, and the choice is
   * the same for every rank of the decomposition. */
  int allshared = 0;
  MPI_Allreduce(&shared, &allshared, 1, MPI_INT, MPI_MIN, d->comm);
  if (shared && !allshared) {
    unshare(e);
    shared = 0;
  }
  if (!shared) {
    e->shared = 0;
    e->ptr = malloc(bytes ? bytes : 1);
    rc = e->ptr ? HS_OK
                : hs__error(HS_ERR_NOMEM, "hs_alloc: out of memory for %zu bytes", bytes);
  }
  rc = hs__agree(d->comm, rc);
  if (rc != HS_OK) {
    if (!shared) free(e->ptr);
    free(e);
    return rc;
  }
  e->next = table;
  table = e;
  *ptr = e->ptr;
  return HS_OK;
}

int hs_free(hs_decomp d, void *ptr) {
  if (!d) return hs__error(HS_ERR_ARG, "hs_free: decomposition is NULL");
  hs_shalloc **pp = &table;
  while (*pp && !((*pp)->d == d && (*pp)->ptr == (char *)ptr && !(*pp)->added))
    pp = &(*pp)->next;
  int rc = HS_OK;
  if (!*pp)
    rc = hs__error(HS_ERR_ARG,
                   "hs_free: ptr = %p was not returned by hs_alloc on this decomposition", ptr);
  rc = hs__agree(d->comm, rc);
  if (rc != HS_OK) return rc;
  hs_shalloc *e = *pp;
  *pp = e->next;
  entry_release(e);
  return HS_OK;
}

int hs__shared_lookup(hs_decomp d, const void *ptr, uint64_t *id, MPI_Win *win,
                      size_t *offset) {
  const char *c = ptr;
  for (hs_shalloc *e = table; e; e = e->next)
    if (e->shared && e->ptr && e->d == d && c >= e->ptr &&
        c < e->ptr + (e->bytes ? e->bytes : 1)) {
      if (id) *id = e->id;
      if (win) *win = e->win;
      if (offset) *offset = (size_t)(c - e->ptr);
      return 1;
    }
  return 0;
}

char *hs__shared_base(hs_decomp d, uint64_t id, int rank, size_t *bytes) {
  for (hs_shalloc *e = table; e; e = e->next)
    if (e->shared && e->d == d && e->id == id) {
      for (int i = 0; i < e->nnode; i++)
        if (e->ranks[i] == rank) {
          if (bytes) *bytes = e->sizes[i];
          return e->bases[i];
        }
      return NULL;
    }
  return NULL;
}

/* ---- memory shared by other means (src/memory/remap.c records remapped arrays here) */
int hs__shared_in_window(const void *ptr, size_t bytes) {
  const char *c = ptr;
  for (hs_shalloc *e = table; e; e = e->next)
    if (e->shared && !e->added && c < e->ptr + (e->bytes ? e->bytes : 1) && e->ptr < c + bytes)
      return 1;
  return 0;
}

uint64_t hs__shared_new_ids(MPI_Comm node, int count) {
  uint64_t mine = next_id, id = mine;
  MPI_Allreduce(&mine, &id, 1, MPI_UINT64_T, MPI_MAX, node);
  next_id = id + (uint64_t)(count > 0 ? count : 1);
  return id;
}

struct hs_shalloc *hs__shared_add(hs_decomp d, char *ptr, size_t bytes, uint64_t id, int n,
                                  const int *ranks, char *const *bases, const size_t *sizes) {
  hs_shalloc *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->ranks = malloc((size_t)(n > 0 ? n : 1) * sizeof *e->ranks);
  e->bases = malloc((size_t)(n > 0 ? n : 1) * sizeof *e->bases);
  e->sizes = malloc((size_t)(n > 0 ? n : 1) * sizeof *e->sizes);
  if (!e->ranks || !e->bases || !e->sizes) {
    free(e->ranks);
    free(e->bases);
    free(e->sizes);
    free(e);
    return NULL;
  }
  e->d = d;
  e->ptr = ptr;
  e->bytes = bytes;
  e->id = id;
  e->shared = 1;
  e->added = 1;
  e->win = MPI_WIN_NULL;
  e->node = MPI_COMM_NULL;
  e->nnode = n;
  for (int i = 0; i < n; i++) {
    e->ranks[i] = ranks[i];
    e->bases[i] = bases[i];
    e->sizes[i] = sizes[i];
  }
  e->next = table;
  table = e;
  return e;
}

void hs__shared_remove(struct hs_shalloc *h) {
  hs_shalloc **pp = &table;
  while (*pp && *pp != h) pp = &(*pp)->next;
  if (!*pp) return;
  *pp = h->next;
  free(h->ranks);
  free(h->bases);
  free(h->sizes);
  free(h);
}
