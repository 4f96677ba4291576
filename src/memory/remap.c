/* Core option remap=1: make the registered arrays of a plan node-shareable in place, so a
 * transport that reads a neighbour's field directly (through hs__shared_lookup /
 * hs__shared_base, the table hs_alloc fills) serves malloc'd and Fortran allocatable arrays
 * as it serves hs_alloc'd ones. Linux only (memfd_create, pidfd_open, pidfd_getfd: Linux >=
 * 5.6); elsewhere the option reports itself unavailable. docs/remap.md gives the design.
 *
 * At plan creation, collectively on each physical node:
 *  1. every rank with a decomposition neighbour on its node re-backs the pages of each
 *     registered array that is not hs_alloc'd (the whole pages the array touches) with a
 *     memfd: copy the pages into it, then mmap(MAP_SHARED | MAP_FIXED) it over them. The
 *     contents and the caller's pointer stay; pages already re-backed (another plan, or a
 *     field sharing a page) are reused, so the pages of a process form disjoint *regions*,
 *     each one memfd, reference-counted by the plans that use them;
 *  2. the ranks exchange (allgather on the node) their pid, and per field the array's address,
 *     span and the pieces (memfd number, offset, address, length) that back it;
 *  3. each rank maps every decomposition neighbour's arrays read-only, piece by piece into one
 *     reserved range per array, taking the memfds with pidfd_open + pidfd_getfd (ptrace
 *     permission), and records them with hs__shared_add under ids the node agrees on.
 * At plan free: unmap the neighbours' arrays; a region no plan uses any more gets private
 * anonymous memory back with its contents (mremap of a copy over it), but only if
 * /proc/self/maps still shows our memfd there (the caller may have freed the array). */
#define _GNU_SOURCE
#include "hs_core.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HS_HAVE_REMAP
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "remap_pages.h"

typedef struct {
  char *addr;
  size_t len;
} view;

struct hs_remap {
  int arrays;          /* my arrays recorded as shared */
  int created;         /* regions this plan created */
  int neighbours;      /* node neighbours whose arrays are mapped here */
  region **refs;       /* one reference per entry */
  int nrefs, maxrefs;
  struct hs_shalloc **entries;
  int nentries;
  view *views;
  int nviews, maxviews;
};

/* What a rank publishes per field: its array and the pieces backing it. */
typedef struct {
  uint64_t ptr, bytes, lo, hi; /* array's lowest byte, its span; its page range [lo, hi) */
  uint64_t npieces;
} pub_field;
typedef struct {
  uint64_t fd, off, addr, len;
} pub_piece;

static int push_ref(struct hs_remap *m, region *r) {
  if (m->nrefs == m->maxrefs) {
    int n = m->maxrefs ? 2 * m->maxrefs : 16;
    region **nr = realloc(m->refs, (size_t)n * sizeof *nr);
    if (!nr) return hs__error(HS_ERR_NOMEM, "remap: out of memory");
    m->refs = nr;
    m->maxrefs = n;
  }
  m->refs[m->nrefs++] = r;
  r->refs++;
  return HS_OK;
}

static int push_view(struct hs_remap *m, char *addr, size_t len) {
  if (m->nviews == m->maxviews) {
    int n = m->maxviews ? 2 * m->maxviews : 16;
    view *nv = realloc(m->views, (size_t)n * sizeof *nv);
    if (!nv) return hs__error(HS_ERR_NOMEM, "remap: out of memory");
    m->views = nv;
    m->maxviews = n;
  }
  m->views[m->nviews].addr = addr;
  m->views[m->nviews++].len = len;
  return HS_OK;
}

/* Bytes of field f below its data pointer (*lo <= 0) and the span of all its bytes. */
static void field_span(const hs_plan p, int f, ptrdiff_t *lo, size_t *bytes) {
  const hs_fieldinfo *fi = &p->fields[f];
  ptrdiff_t l = 0, h = 0;
  for (int a = 0; a < p->ndims; a++) {
    ptrdiff_t x = (ptrdiff_t)(fi->alloc[a] - 1) * fi->stride[a] * (ptrdiff_t)fi->cell;
    if (x < 0) l += x;
    else h += x;
  }
  if (!fi->comp_fastest && fi->ncomp > 1) {
    ptrdiff_t x = (ptrdiff_t)(fi->ncomp - 1) * fi->comp_bytes;
    if (x < 0) l += x;
    else h += x;
  }
  *lo = l;
  *bytes = (size_t)(h - l) + fi->cell;
}

/* Back the pages [a, b) with regions, creating them where there are none; one piece each. */
static int cover(struct hs_remap *m, uintptr_t a, uintptr_t b, const char *maps,
                 pub_piece **pieces, int *np, int *maxp) {
  for (uintptr_t cur = a; cur < b;) {
    region *r = hs__regions;
    while (r && r->end <= cur) r = r->next;
    region *use = r;
    if (!r || r->start > cur) {
      int rc = hs__region_create(cur, r && r->start < b ? r->start : b, maps, &use);
      if (rc != HS_OK) return rc;
      m->created++;
    }
    int rc = push_ref(m, use);
    if (rc != HS_OK) return rc;
    if (*np == *maxp) {
      int n = *maxp ? 2 * *maxp : 16;
      pub_piece *nq = realloc(*pieces, (size_t)n * sizeof *nq);
      if (!nq) return hs__error(HS_ERR_NOMEM, "remap: out of memory");
      *pieces = nq;
      *maxp = n;
    }
    uintptr_t end = use->end < b ? use->end : b;
    pub_piece *q = &(*pieces)[(*np)++];
    q->fd = (uint64_t)use->fd;
    q->off = cur - use->start;
    q->addr = cur;
    q->len = end - cur;
    cur = end;
  }
  return HS_OK;
}

/* Node ranks (flags in nbr) that are decomposition neighbours of this rank: every offset in
 * {-1,0,1}^ndims, so every plan of the decomposition finds its on-node peers. */
static int node_neighbours(const hs_plan p, const int *comm_of, int nsize, char *nbr) {
  const hs_decomp d = p->decomp;
  int n = 0, o[3];
  for (o[0] = -1; o[0] <= 1; o[0]++)
    for (o[1] = -1; o[1] <= 1; o[1]++)
      for (o[2] = -1; o[2] <= 1; o[2]++) {
        int c[HS_MAX_DIMS] = {0, 0, 0}, ok = o[0] || o[1] || o[2];
        for (int a = 0; a < HS_MAX_DIMS && ok; a++) {
          if (a >= d->ndims) {
            ok = o[a] == 0;
            continue;
          }
          c[a] = d->coord[a] + o[a];
          if (c[a] < 0 || c[a] >= d->procs[a]) {
            if (!d->periodic[a]) ok = 0;
            c[a] = (c[a] + d->procs[a]) % d->procs[a];
          }
        }
        if (!ok) continue;
        int r = hs__cart_rank(d, c);
        for (int i = 0; i < nsize; i++)
          if (comm_of[i] == r && r != p->rank && !nbr[i]) {
            nbr[i] = 1;
            n++;
          }
      }
  return n;
}

static const char *getfd_hint(int err) {
  switch (err) {
  case EPERM:
  case EACCES:
    return " (pidfd_getfd needs ptrace permission over the neighbour: the same user and "
           "kernel.yama.ptrace_scope <= 1, or CAP_SYS_PTRACE; a container's seccomp profile "
           "may forbid it)";
  case ENOSYS: return " (kernel older than 5.6, or a seccomp filter forbids the call)";
  case ESRCH: return " (the neighbour is not visible: another PID namespace, e.g. a separate "
                     "container)";
  default: return "";
  }
}

/* Map node rank r's published arrays (blob) read-only; bases[f] = its field f here. */
static int map_neighbour(struct hs_remap *m, const uint64_t *blob, int nf, int comm_rank,
                         char **bases, size_t *sizes) {
  int pid = (int)blob[0];
  const pub_field *pf = (const pub_field *)(blob + 2);
  const pub_piece *pc = (const pub_piece *)(pf + nf);
  int pidfd = -1;
  for (int f = 0; f < nf; f++) {
    if (!pf[f].npieces) continue;
    if (pidfd < 0) {
      pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
      if (pidfd < 0)
        return hs__error(HS_ERR_UNAVAILABLE, "remap: pidfd_open(rank %d, pid %d): %s%s",
                         comm_rank, pid, strerror(errno), getfd_hint(errno));
    }
    size_t len = (size_t)(pf[f].hi - pf[f].lo);
    char *v = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int rc = v == MAP_FAILED ? hs__error(HS_ERR_NOMEM, "remap: reserving %zu bytes: %s", len,
                                         strerror(errno))
                             : push_view(m, v, len);
    for (uint64_t k = 0; rc == HS_OK && k < pf[f].npieces; k++, pc++) {
      int fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)pc->fd, 0);
      if (fd < 0) {
        rc = hs__error(HS_ERR_UNAVAILABLE, "remap: pidfd_getfd(rank %d, pid %d): %s%s",
                       comm_rank, pid, strerror(errno), getfd_hint(errno));
        break;
      }
      if (mmap(v + (pc->addr - pf[f].lo), (size_t)pc->len, PROT_READ, MAP_SHARED | MAP_FIXED,
               fd, (off_t)pc->off) == MAP_FAILED)
        rc = hs__error(HS_ERR_NOMEM, "remap: mapping rank %d's array: %s", comm_rank,
                       strerror(errno));
      close(fd);
    }
    if (rc != HS_OK) {
      close(pidfd);
      return rc;
    }
    bases[f] = v + (pf[f].ptr - pf[f].lo);
    sizes[f] = (size_t)pf[f].bytes;
  }
  if (pidfd >= 0) close(pidfd);
  return HS_OK;
}

/* My arrays: regions over their pages; the blob other ranks read (pid, nf, fields, pieces). */
static int publish(hs_plan p, struct hs_remap *m, uint64_t **blob, int *words) {
  int nf = p->nfields, np = 0, maxp = 0, rc = HS_OK;
  pub_field *pf = calloc((size_t)(nf > 0 ? nf : 1), sizeof *pf);
  pub_piece *pieces = NULL;
  char *maps = hs__read_maps();
  size_t pg = hs__page_size();
  if (!pf) rc = hs__error(HS_ERR_NOMEM, "remap: out of memory");
  else if (!maps)
    rc = hs__error(HS_ERR_UNAVAILABLE, "remap: cannot read /proc/self/maps: %s", strerror(errno));
  for (int f = 0; rc == HS_OK && f < nf; f++) {
    const hs_fieldinfo *fi = &p->fields[f];
    if (!fi->data || fi->pack) continue; /* hooks: the data is the caller's business */
    ptrdiff_t lo;
    size_t bytes;
    field_span(p, f, &lo, &bytes);
    char *ptr = (char *)fi->data + lo;
    if (hs__shared_in_window(ptr, bytes)) continue; /* hs_alloc'd: shared already */
    uintptr_t a = (uintptr_t)ptr / pg * pg, b = ((uintptr_t)ptr + bytes + pg - 1) / pg * pg;
    int first = np;
    rc = cover(m, a, b, maps, &pieces, &np, &maxp);
    pf[f] = (pub_field){(uint64_t)(uintptr_t)ptr, bytes, a, b, (uint64_t)(np - first)};
  }
  free(maps);
  if (rc == HS_OK) {
    *words = 2 + nf * (int)(sizeof *pf / 8) + np * (int)(sizeof *pieces / 8);
    *blob = malloc((size_t)*words * 8);
    if (!*blob) rc = hs__error(HS_ERR_NOMEM, "remap: out of memory");
  }
  if (rc == HS_OK) {
    (*blob)[0] = (uint64_t)getpid();
    (*blob)[1] = (uint64_t)nf;
    memcpy(*blob + 2, pf, (size_t)nf * sizeof *pf);
    if (np) memcpy(*blob + 2 + nf * (sizeof *pf / 8), pieces, (size_t)np * sizeof *pieces);
  }
  free(pf);
  free(pieces);
  return rc;
}

/* Everything after the node communicator and the neighbour flags exist. */
static int remap_node(hs_plan p, struct hs_remap *m, MPI_Comm node, int nsize,
                      const int *comm_of, const char *nbr, int nn) {
  int nf = p->nfields, words = 2 + nf * (int)(sizeof(pub_field) / 8), rc = HS_OK;
  uint64_t *blob = NULL, *all = NULL;
  int *counts = malloc((size_t)nsize * sizeof *counts), *displs = malloc((size_t)nsize * sizeof *displs);
  char **bases = calloc((size_t)nsize * (size_t)(nf > 0 ? nf : 1), sizeof *bases);
  size_t *sizes = calloc((size_t)nsize * (size_t)(nf > 0 ? nf : 1), sizeof *sizes);
  if (!counts || !displs || !bases || !sizes) rc = hs__error(HS_ERR_NOMEM, "remap: out of memory");
  if (rc == HS_OK && nn) {
#ifdef PR_SET_PTRACER
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama scope 1: ranks are siblings */
#endif
    rc = publish(p, m, &blob, &words);
  }
  if (rc == HS_OK && !blob) {
    blob = calloc((size_t)words, 8); /* nothing of mine is shared */
    if (!blob) rc = hs__error(HS_ERR_NOMEM, "remap: out of memory");
    else blob[1] = (uint64_t)nf;
  }
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK) {
    HS_MPI(MPI_Allgather(&words, 1, MPI_INT, counts, 1, MPI_INT, node));
    long total = 0;
    for (int i = 0; i < nsize; i++) {
      displs[i] = (int)total;
      total += counts[i];
    }
    all = malloc((size_t)total * 8);
    rc = hs__agree(p->comm, all ? HS_OK : hs__error(HS_ERR_NOMEM, "remap: out of memory"));
  }
  if (rc == HS_OK)
    HS_MPI(MPI_Allgatherv(blob, words, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, node));
  for (int i = 0; rc == HS_OK && i < nsize; i++)
    if (nbr[i]) {
      rc = map_neighbour(m, all + displs[i], nf, comm_of[i], bases + (size_t)i * nf,
                         sizes + (size_t)i * nf);
      if (rc == HS_OK) m->neighbours++;
    }
  rc = hs__agree(p->comm, rc);
  uint64_t id = rc == HS_OK ? hs__shared_new_ids(node, nf) : 0;
  int *ranks = rc == HS_OK ? malloc((size_t)(nsize + 1) * sizeof *ranks) : NULL;
  char **eb = rc == HS_OK ? malloc((size_t)(nsize + 1) * sizeof *eb) : NULL;
  size_t *es = rc == HS_OK ? malloc((size_t)(nsize + 1) * sizeof *es) : NULL;
  m->entries = rc == HS_OK ? calloc((size_t)(nf > 0 ? nf : 1), sizeof *m->entries) : NULL;
  if (rc == HS_OK && (!ranks || !eb || !es || !m->entries))
    rc = hs__error(HS_ERR_NOMEM, "remap: out of memory");
  const pub_field *me = blob ? (const pub_field *)(blob + 2) : NULL;
  for (int f = 0; rc == HS_OK && f < nf; f++) {
    /* A record when any of us shares field f: my own array if remapped (else a record no
     * pointer of mine matches: NULL, 0 bytes), so a neighbour whose array is shared while
     * mine is not (hs_alloc'd here, malloc'd there) is still found under its id. */
    int n = 0;
    if (me[f].npieces) {
      ranks[n] = p->rank;
      eb[n] = (char *)(uintptr_t)me[f].ptr;
      es[n++] = (size_t)me[f].bytes;
    }
    for (int i = 0; i < nsize; i++)
      if (bases[(size_t)i * nf + f]) {
        ranks[n] = comm_of[i];
        eb[n] = bases[(size_t)i * nf + f];
        es[n++] = sizes[(size_t)i * nf + f];
      }
    if (!n) continue;
    int mine = me[f].npieces > 0;
    struct hs_shalloc *e = hs__shared_add(p->decomp, mine ? eb[0] : NULL, mine ? es[0] : 0,
                                          id + (uint64_t)f, n, ranks, eb, es);
    if (!e) rc = hs__error(HS_ERR_NOMEM, "remap: out of memory");
    else {
      m->entries[m->nentries++] = e;
      m->arrays += mine;
    }
  }
  free(ranks);
  free(eb);
  free(es);
  free(blob);
  free(all);
  free(counts);
  free(displs);
  free(bases);
  free(sizes);
  return rc;
}

int hs__remap_setup(hs_plan p) {
  /* A stage of a staged plan swaps the staged plan's arrays, which that plan remapped. */
  if (!p->core->config.remap || p->core->stage_axis) return HS_OK;
  struct hs_remap *m = calloc(1, sizeof *m);
  p->core->remap = m;
  int rc = hs__agree(p->comm, m ? HS_OK : hs__error(HS_ERR_NOMEM, "remap: out of memory"));
  if (rc != HS_OK) return rc;
  MPI_Comm node;
  rc = hs__node_comm(p->comm, 0, &node);
  if (rc != HS_OK) return rc;
  int nsize;
  MPI_Comm_size(node, &nsize);
  int *comm_of = malloc((size_t)nsize * sizeof *comm_of);
  char *nbr = calloc((size_t)nsize, 1);
  rc = comm_of && nbr ? HS_OK : hs__error(HS_ERR_NOMEM, "remap: out of memory");
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK) {
    int mrc = MPI_Allgather(&p->rank, 1, MPI_INT, comm_of, 1, MPI_INT, node);
    rc = mrc == MPI_SUCCESS ? HS_OK : hs__mpi_error(mrc, "MPI_Allgather (remap)");
  }
  if (rc == HS_OK) {
    int nn = node_neighbours(p, comm_of, nsize, nbr);
    rc = remap_node(p, m, node, nsize, comm_of, nbr, nn);
  }
  free(comm_of);
  free(nbr);
  MPI_Comm_free(&node);
  return rc;
}

void hs__remap_free(hs_plan p) {
  struct hs_remap *m = p->core->remap;
  if (!m) return;
  for (int i = 0; i < m->nentries; i++) hs__shared_remove(m->entries[i]);
  for (int i = 0; i < m->nviews; i++) munmap(m->views[i].addr, m->views[i].len);
  for (int i = m->nrefs - 1; i >= 0; i--) hs__region_release(m->refs[i]);
  free(m->entries);
  free(m->views);
  free(m->refs);
  free(m);
  p->core->remap = NULL;
}

void hs__remap_describe(const hs_plan p, char *buf, size_t len, size_t *n) {
  const struct hs_remap *m = p->core->remap;
  if (!m) return;
  if (!m->neighbours && !m->arrays)
    hs__appendf(buf, len, n, "; remap: nothing shared (no decomposition neighbour on this node)");
  else
    hs__appendf(buf, len, n, "; remap: %d arrays node-shared (%d new memfd regions), the arrays "
                "of %d node neighbour%s mapped", m->arrays, m->created, m->neighbours,
                m->neighbours == 1 ? "" : "s");
}

#else /* no memfd / pidfd_getfd */

int hs__remap_setup(hs_plan p) {
  if (!p->core->config.remap || p->core->stage_axis) return HS_OK;
  return hs__error(HS_ERR_UNAVAILABLE, "hs_plan_create: option remap=1 needs Linux memfd_create "
                                       "and pidfd_getfd (Linux >= 5.6), not found when haloswap "
                                       "was built");
}
void hs__remap_free(hs_plan p) { (void)p; }
void hs__remap_describe(const hs_plan p, char *buf, size_t len, size_t *n) {
  (void)p, (void)buf, (void)len, (void)n;
}
#endif
