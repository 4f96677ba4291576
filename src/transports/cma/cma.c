/* Transport "cma": single-copy exchange between ranks of one node from ordinary memory, with
 * Linux cross-memory attach; two-sided MPI between nodes, in the same swap.
 *
 * Each rank reads its halo straight out of its on-node neighbours' field arrays, wherever
 * they were allocated (malloc, Fortran allocatable, hs_alloc), with process_vm_readv: one
 * system call per neighbour carrying every contiguous run of every field as an iovec list
 * (split only at `iov` iovecs per call). The kernel copies from the neighbour's pages into
 * this rank's halos: one copy, no buffers.
 *
 * Synchronisation is neighbour-only, through a small MPI-3 shared segment per node: per rank
 * a `posted` counter (my interior of swap s may be read) and per node rank a `consumed`
 * counter (I have finished reading that rank's interior for swap s), the shm transport's
 * protocol (docs/cma.md gives it and why it is race free). The addresses to read come from
 * the same segment: the registered arrays' at setup, the per-swap arrays' with each swap.
 *
 * The reverse exchange swaps the roles: each owner reads its on-node neighbours' halo boxes
 * with process_vm_readv into a scratch buffer, a piece at a time, and the core combines them
 * in its canonical order (hs_pull, src/core/reverse.c), guarded by the same counters.
 *
 * Off-node peers (and every peer of a plan with pack/unpack hooks, which only the owning
 * process can run) go through the core's two-sided engine. query() tests at plan creation
 * that the kernel lets this rank read a node neighbour's memory and says why not otherwise.
 * Options: see cma_options below. */
#define _GNU_SOURCE
#include "hs_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

#define LINE 64
#define MODE_REG 0u  /* the registered arrays: addresses published at setup */
#define MODE_SWAP 1u /* per-swap arrays: addresses published with the swap */

typedef struct {
  int node_size, iov;
} cma_config;

static const hs_option_spec cma_options[] = {
    {"node_size", HS_OPT_INT, "0", 0, 1 << 20, NULL, offsetof(cma_config, node_size),
     "virtual nodes of N consecutive ranks (0: the physical node); other ranks are off-node"},
    {"iov", HS_OPT_INT, "1024", 1, IOV_MAX, NULL, offsetof(cma_config, iov),
     "most iovecs per process_vm_readv call (per side)"},
    {NULL, 0, NULL, 0, 0, NULL, 0, NULL}};

/* Control block at the start of every rank's segment; counters on their own cache lines. */
typedef struct {
  _Atomic uint64_t posted; /* last swap whose interior this rank lets its readers read */
  char pad0[LINE - sizeof(uint64_t)];
  int64_t pid;
  uint32_t mode;           /* of the posted swap */
  char pad1[LINE - sizeof(int64_t) - sizeof(uint32_t)];
  /* followed by: consumed[nnode] (one line each), reg[nfields], cur[nfields] (addresses) */
} cma_ctl;

typedef struct {
  int field;
  ptrdiff_t off; /* bytes from the field's data pointer */
  size_t len;
} cma_run;

typedef struct {
  int peer;             /* index in p->peers */
  int nrank;            /* rank in the node communicator */
  pid_t pid;
  cma_ctl *ctl;         /* the peer's control block */
  int nremote, nlocal;
  cma_run *remote;      /* its strips in its fields, in message order */
  cma_run *local;       /* my halo boxes in my fields, in the same byte order */
  struct iovec *riov, *liov;
  int riov_reg, liov_reg; /* riov / liov hold the registered arrays' addresses */
  int pending;
  /* the reverse: its halo boxes for me, runs cut at every section (first[j]: section j's) */
  int nhalo;
  cma_run *halo;
  int *first;
  struct iovec *hiov;
  int hiov_reg;           /* hiov holds its registered arrays' addresses */
  uint64_t hseq;          /* hiov holds the addresses of this operation */
} cma_edge;

typedef struct {
  MPI_Comm node;
  int nrank, nsize;
  MPI_Win win;
  int win_locked;
  size_t seg_bytes;
  cma_ctl *ctl;
  int iov;
  int nintra;
  cma_edge *intra;
  struct iovec *lchunk, *rchunk; /* iov entries each */
  uint64_t seq;
  int ninter;
  int *inter;
  hs_twosided *remote;
  uint64_t syscalls;   /* process_vm_readv calls, for describe */
  char **base;         /* nfields: a neighbour's field addresses */
  hs_pull_edge *pedge; /* the reverse: per on-node edge (same index), its counters */
  hs_pull pull;
  struct hs_reverse *rev; /* built on first use */
} cma_t;

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static _Atomic uint64_t *consumed_of(cma_ctl *c, int j) {
  return (_Atomic uint64_t *)((char *)c + sizeof(cma_ctl) + (size_t)j * LINE);
}
static uint64_t *reg_of(const cma_t *t, cma_ctl *c) {
  return (uint64_t *)((char *)c + sizeof(cma_ctl) + (size_t)t->nsize * LINE);
}
static uint64_t *cur_of(const cma_t *t, cma_ctl *c, int nfields) {
  return reg_of(t, c) + nfields;
}
static size_t ctl_bytes(int nsize, int nfields) {
  return align_up(sizeof(cma_ctl) + (size_t)nsize * LINE + 2 * (size_t)nfields * sizeof(uint64_t),
                  LINE);
}

/* ------------------------------------------------------------------ query */
static int read_ptrace_scope(void) {
  FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  int v = -1; /* no Yama: classic ptrace rules (same user) */
  if (!f) return v;
  if (fscanf(f, "%d", &v) != 1) v = -1;
  fclose(f);
  return v;
}

/* Yama scope 1 lets a process read only its descendants unless it names a tracer; MPI ranks
 * are siblings, so each rank allows any process of its user (Open MPI's CMA does the same). */
static int allow_ptrace(int scope, char *why, size_t n) {
  if (scope == 3) {
    snprintf(why, n, "kernel.yama.ptrace_scope is 3: cross-memory attach is disabled on this "
                     "machine until reboot");
    return HS_ERR_UNAVAILABLE;
  }
#ifdef PR_SET_PTRACER
  if (scope == 1) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  return HS_OK;
}

static volatile uint64_t cma_probe;

/* Local part of the query: this rank reads its node ring successor's probe word. */
static int probe(MPI_Comm comm, char *why, size_t n) {
  int scope = read_ptrace_scope();
  int rc = allow_ptrace(scope, why, n);
  MPI_Comm node;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    snprintf(why, n, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
    return HS_ERR_MPI;
  }
  int nr, ns;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  cma_probe = 0x636d610000000000ull ^ ((uint64_t)getpid() << 8) ^ (uint64_t)nr;
  uint64_t mine[3] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)&cma_probe, cma_probe};
  uint64_t *all = malloc((size_t)ns * sizeof mine);
  if (!all) {
    MPI_Comm_free(&node);
    snprintf(why, n, "out of memory");
    return HS_ERR_NOMEM;
  }
  /* Everyone has set its probe word before anyone reads (the allgather orders it). */
  MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, node);
  if (rc == HS_OK && ns > 1) {
    int j = (nr + 1) % ns;
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got}, r = {(void *)(uintptr_t)all[3 * j + 1], sizeof got};
    ssize_t k = process_vm_readv((pid_t)all[3 * j], &l, 1, &r, 1, 0);
    int err = errno;
    if (k != (ssize_t)sizeof got) {
      const char *hint = "";
      if (err == EPERM)
        hint = scope == 2 ? " (kernel.yama.ptrace_scope is 2: only CAP_SYS_PTRACE may attach)"
                          : " (ranks of different users, or a container without "
                            "CAP_SYS_PTRACE / with a seccomp profile that forbids it)";
      else if (err == ENOSYS)
        hint = " (kernel without CONFIG_CROSS_MEMORY_ATTACH, or a seccomp filter: containers)";
      else if (err == ESRCH)
        hint = " (no such process here: ranks in different PID namespaces, e.g. containers)";
      snprintf(why, n, "process_vm_readv of node rank %d (pid %lld) by node rank %d failed: %s%s",
               j, (long long)all[3 * j], nr, k < 0 ? strerror(err) : "short read", hint);
      rc = HS_ERR_UNAVAILABLE;
    } else if (got != all[3 * j + 2]) {
      snprintf(why, n, "process_vm_readv of node rank %d (pid %lld) read another process's "
                       "memory (ranks in different PID namespaces, e.g. containers)",
               j, (long long)all[3 * j]);
      rc = HS_ERR_UNAVAILABLE;
    }
  }
  free(all);
  MPI_Comm_free(&node);
  return rc;
}

/* Collective: the same status and reason on every rank (the lowest failing rank's). */
static int cma_query(MPI_Comm comm, char *why, size_t n) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  char mine[256] = "";
  int rc = probe(comm, mine, sizeof mine);
  int code[2] = {rc == HS_OK ? size : rank, rc}, low[2];
  MPI_Allreduce(code, low, 1, MPI_2INT, MPI_MINLOC, comm);
  if (low[0] == size) return HS_OK;
  MPI_Bcast(mine, (int)sizeof mine, MPI_CHAR, low[0], comm);
  snprintf(why, n, "%s", mine);
  int err = rc;
  MPI_Bcast(&err, 1, MPI_INT, low[0], comm);
  return err;
}

/* ------------------------------------------------------------------ setup */
/* Append the contiguous runs of section s to *runs, merging adjacent ones from index floor
 * on (floor = *n: the section's runs start a new one). */
static int add_runs(hs_plan p, const hs_section *s, cma_run **runs, int *n, int *cap, int floor) {
  for (int i3 = 0; i3 < s->n3; i3++)
    for (int i2 = 0; i2 < s->n2; i2++)
      for (int i1 = 0; i1 < s->n1; i1++) {
        ptrdiff_t off = s->base + i1 * s->s1 + i2 * s->s2 + i3 * s->s3;
        if (!s->run) continue;
        cma_run *last = *n > floor ? &(*runs)[*n - 1] : NULL;
        if (last && last->field == s->box.field && last->off + (ptrdiff_t)last->len == off) {
          last->len += s->run;
          continue;
        }
        if (*n == *cap) {
          int nc = *cap ? 2 * *cap : 64;
          cma_run *r = hs__malloc(p, (size_t)nc * sizeof *r);
          if (!r) return hs__error(HS_ERR_NOMEM, "cma: out of memory");
          if (*n) memcpy(r, *runs, (size_t)*n * sizeof *r);
          hs__free(p, *runs);
          *runs = r;
          *cap = nc;
        }
        (*runs)[(*n)++] = (cma_run){s->box.field, off, s->run};
      }
  return HS_OK;
}

static int setup_node(hs_plan p, cma_t *t, int node_size) {
  MPI_Comm phys;
  HS_MPI(MPI_Comm_split_type(p->comm, MPI_COMM_TYPE_SHARED, p->rank, MPI_INFO_NULL, &phys));
  if (node_size > 0) {
    int mrc = MPI_Comm_split(phys, p->rank / node_size, p->rank, &t->node);
    MPI_Comm_free(&phys);
    if (mrc != MPI_SUCCESS) {
      t->node = MPI_COMM_NULL;
      return hs__mpi_error(mrc, "MPI_Comm_split (virtual nodes)");
    }
  } else {
    t->node = phys;
  }
  MPI_Comm_set_errhandler(t->node, MPI_ERRORS_RETURN);
  MPI_Comm_rank(t->node, &t->nrank);
  MPI_Comm_size(t->node, &t->nsize);
  int np = p->npeers;
  size_t nb = (size_t)(np > 0 ? np : 1);
  t->intra = hs__calloc(p, nb * sizeof(cma_edge));
  t->inter = hs__malloc(p, nb * sizeof(int));
  int *prank = malloc(nb * sizeof(int));
  int *nrank = malloc(nb * sizeof(int));
  if (!t->intra || !t->inter || !prank || !nrank) {
    free(prank);
    free(nrank);
    return hs__error(HS_ERR_NOMEM, "cma: out of memory");
  }
  MPI_Group gp, gn;
  MPI_Comm_group(p->comm, &gp);
  MPI_Comm_group(t->node, &gn);
  for (int k = 0; k < np; k++) prank[k] = p->peers[k].rank;
  if (np) MPI_Group_translate_ranks(gp, np, prank, gn, nrank);
  MPI_Group_free(&gp);
  MPI_Group_free(&gn);
  for (int k = 0; k < np; k++) {
    /* Hooks run in the owning process only: such plans go two-sided throughout. */
    if (nrank[k] == MPI_UNDEFINED || p->has_callbacks) {
      t->inter[t->ninter++] = k;
    } else {
      cma_edge *e = &t->intra[t->nintra++];
      e->peer = k;
      e->nrank = nrank[k];
    }
  }
  free(prank);
  free(nrank);
  return HS_OK;
}

static int setup_window(hs_plan p, cma_t *t) {
  t->seg_bytes = ctl_bytes(t->nsize, p->nfields);
  void *base = NULL;
  int mrc = MPI_Win_allocate_shared((MPI_Aint)t->seg_bytes, 1, MPI_INFO_NULL, t->node, &base,
                                    &t->win);
  if (mrc != MPI_SUCCESS) {
    t->win = MPI_WIN_NULL;
    return hs__mpi_error(mrc, "MPI_Win_allocate_shared");
  }
  MPI_Win_set_errhandler(t->win, MPI_ERRORS_RETURN);
  hs__account(p, (int64_t)t->seg_bytes);
  memset(base, 0, t->seg_bytes);
  t->ctl = base;
  atomic_init(&t->ctl->posted, 0);
  for (int j = 0; j < t->nsize; j++) atomic_init(consumed_of(t->ctl, j), 0);
  t->ctl->pid = (int64_t)getpid();
  uint64_t *reg = reg_of(t, t->ctl);
  for (int f = 0; f < p->nfields; f++) reg[f] = (uint64_t)(uintptr_t)p->fields[f].data;
  /* One passive epoch for the life of the plan: MPI_Win_sync needs it. */
  HS_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win));
  t->win_locked = 1;
  for (int i = 0; i < t->nintra; i++) {
    MPI_Aint sz;
    int du;
    void *b;
    HS_MPI(MPI_Win_shared_query(t->win, t->intra[i].nrank, &sz, &du, &b));
    t->intra[i].ctl = b;
  }
  return HS_OK;
}

/* Receive each on-node peer's send sections (where my halo comes from in its fields) and turn
 * both sides into run lists. */
static int exchange_edges(hs_plan p, cma_t *t) {
  int n = t->nintra;
  MPI_Request *rq = malloc((size_t)(4 * n + 1) * sizeof *rq);
  hs_section **ssec = calloc((size_t)n + 1, sizeof *ssec);
  hs_section **hsec = calloc((size_t)n + 1, sizeof *hsec);
  int rc = (rq && ssec && hsec) ? HS_OK : hs__error(HS_ERR_NOMEM, "cma: out of memory");
  for (int i = 0; rc == HS_OK && i < n; i++) {
    const hs_peer *pe = &p->peers[t->intra[i].peer];
    ssec[i] = malloc((size_t)(pe->nrecv + 1) * sizeof(hs_section));
    hsec[i] = malloc((size_t)(pe->nsend + 1) * sizeof(hs_section));
    if (!ssec[i] || !hsec[i]) rc = hs__error(HS_ERR_NOMEM, "cma: out of memory");
  }
  rc = hs__agree(p->comm, rc);
  int nq = 0;
  for (int i = 0; rc == HS_OK && i < n; i++) {
    const hs_peer *pe = &p->peers[t->intra[i].peer];
    MPI_Irecv(ssec[i], (int)(pe->nrecv * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP,
              p->comm, &rq[nq++]);
    MPI_Isend(pe->send, (int)(pe->nsend * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP,
              p->comm, &rq[nq++]);
    /* Second on the same tag (matched in order): its halo boxes, which the reverse reads. */
    MPI_Irecv(hsec[i], (int)(pe->nsend * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP,
              p->comm, &rq[nq++]);
    MPI_Isend(pe->recv, (int)(pe->nrecv * sizeof(hs_section)), MPI_BYTE, pe->rank, HS_TAG_SETUP,
              p->comm, &rq[nq++]);
  }
  if (rc == HS_OK && MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    rc = hs__error(HS_ERR_MPI, "cma: MPI_Waitall (setup exchange) failed");
  for (int i = 0; rc == HS_OK && i < n; i++) {
    cma_edge *e = &t->intra[i];
    const hs_peer *pe = &p->peers[e->peer];
    int rcap = 0, lcap = 0;
    size_t rb = 0, lb = 0;
    for (int j = 0; rc == HS_OK && j < pe->nrecv; j++) {
      if (ssec[i][j].bytes != pe->recv[j].bytes)
        rc = hs__error(HS_ERR_INTERNAL,
                       "cma: section %d from rank %d has %zu bytes, this rank expects %zu", j,
                       pe->rank, ssec[i][j].bytes, pe->recv[j].bytes);
      if (rc == HS_OK) rc = add_runs(p, &ssec[i][j], &e->remote, &e->nremote, &rcap, 0);
      if (rc == HS_OK) rc = add_runs(p, &pe->recv[j], &e->local, &e->nlocal, &lcap, 0);
      rb += ssec[i][j].bytes;
      lb += pe->recv[j].bytes;
    }
    if (rc == HS_OK && rb != lb)
      rc = hs__error(HS_ERR_INTERNAL, "cma: rank %d sends %zu bytes, this rank expects %zu",
                     pe->rank, rb, lb);
    if (rc == HS_OK && pe->nrecv) {
      e->riov = hs__malloc(p, (size_t)e->nremote * sizeof(struct iovec));
      e->liov = hs__malloc(p, (size_t)e->nlocal * sizeof(struct iovec));
      if (!e->riov || !e->liov) rc = hs__error(HS_ERR_NOMEM, "cma: out of memory");
    }
    int hcap = 0;
    e->first = hs__malloc(p, (size_t)(pe->nsend + 1) * sizeof(int));
    if (rc == HS_OK && !e->first) rc = hs__error(HS_ERR_NOMEM, "cma: out of memory");
    for (int j = 0; rc == HS_OK && j < pe->nsend; j++) {
      if (hsec[i][j].bytes != pe->send[j].bytes)
        rc = hs__error(HS_ERR_INTERNAL, "cma: rank %d's halo box %d has %zu bytes, not %zu",
                       pe->rank, j, hsec[i][j].bytes, pe->send[j].bytes);
      e->first[j] = e->nhalo;
      if (rc == HS_OK) rc = add_runs(p, &hsec[i][j], &e->halo, &e->nhalo, &hcap, e->nhalo);
    }
    if (rc == HS_OK) {
      e->first[pe->nsend] = e->nhalo;
      e->hiov = hs__malloc(p, (size_t)(e->nhalo + 1) * sizeof(struct iovec));
      if (!e->hiov) rc = hs__error(HS_ERR_NOMEM, "cma: out of memory");
    }
  }
  for (int i = 0; ssec && i < n; i++) free(ssec[i]);
  for (int i = 0; hsec && i < n; i++) free(hsec[i]);
  free(ssec);
  free(hsec);
  free(rq);
  return rc;
}

static int cma_source(hs_plan p, void *ctx, int i, int j0, int j1, char *scratch,
                      hs_pull_src *out);

static int cma_setup(hs_plan p) {
  const cma_config *c = p->config;
  cma_t *t = hs__calloc(p, sizeof *t);
  if (!t) return hs__error(HS_ERR_NOMEM, "cma: out of memory");
  p->impl = t;
  t->node = MPI_COMM_NULL;
  t->win = MPI_WIN_NULL;
  t->iov = c->iov;
  int rc = hs__agree(p->comm, setup_node(p, t, c->node_size));
  if (rc != HS_OK) return rc;
  static const hs_twosided_config remote = {.dtype = 4, .persistent = 0}; /* p2p's defaults */
  rc = hs__agree(p->comm, hs__twosided_create(p, t->inter, t->ninter, &remote, &t->remote));
  if (rc != HS_OK) return rc;
  t->lchunk = hs__malloc(p, (size_t)t->iov * sizeof(struct iovec));
  t->rchunk = hs__malloc(p, (size_t)t->iov * sizeof(struct iovec));
  rc = (t->lchunk && t->rchunk) ? HS_OK : hs__error(HS_ERR_NOMEM, "cma: out of memory");
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) return rc;
  rc = hs__agree(p->comm, setup_window(p, t));
  if (rc != HS_OK) return rc;
  rc = hs__agree(p->comm, exchange_edges(p, t));
  if (rc != HS_OK) return rc;
  /* Make the control blocks visible to the node before anyone reads them. */
  HS_MPI(MPI_Win_sync(t->win));
  HS_MPI(MPI_Barrier(t->node));
  HS_MPI(MPI_Win_sync(t->win));
  for (int i = 0; i < t->nintra; i++) t->intra[i].pid = (pid_t)t->intra[i].ctl->pid;
  t->base = hs__malloc(p, (size_t)(p->nfields + 1) * sizeof(char *));
  t->pedge = hs__malloc(p, (size_t)(t->nintra + 1) * sizeof(hs_pull_edge));
  if (!t->base || !t->pedge) return hs__error(HS_ERR_NOMEM, "cma: out of memory");
  for (int i = 0; i < t->nintra; i++) {
    cma_edge *e = &t->intra[i];
    t->pedge[i] = (hs_pull_edge){e->peer, &e->ctl->posted, consumed_of(t->ctl, e->nrank),
                                 consumed_of(e->ctl, t->nrank)};
  }
  t->pull = (hs_pull){t->win, t->nintra, t->pedge, t, cma_source};
  return HS_OK;
}

/* ------------------------------------------------------------------ swaps */
static void fill_iov(struct iovec *v, const cma_run *r, int n, char *const *base) {
  for (int k = 0; k < n; k++) {
    v[k].iov_base = base[r[k].field] + r[k].off;
    v[k].iov_len = r[k].len;
  }
}

/* Bytes in the next `max` iovecs of v from cursor (i, off). */
static size_t reach(const struct iovec *v, int n, int i, size_t off, int max) {
  size_t b = 0;
  for (int k = 0; k < max && i < n; k++, i++, off = 0) b += v[i].iov_len - off;
  return b;
}

/* Exactly c bytes of v from cursor (i, off) as iovecs in out; advances the cursor. */
static int take(const struct iovec *v, int *i, size_t *off, size_t c, struct iovec *out) {
  int k = 0;
  while (c > 0) {
    size_t avail = v[*i].iov_len - *off, m = avail < c ? avail : c;
    out[k].iov_base = (char *)v[*i].iov_base + *off;
    out[k++].iov_len = m;
    c -= m;
    *off += m;
    if (*off == v[*i].iov_len) {
      (*i)++;
      *off = 0;
    }
  }
  return k;
}

/* Copy the remote runs rv (e's memory) into the local runs lv, the same bytes: one
 * process_vm_readv per `iov` iovecs. */
static int pull(hs_plan p, cma_t *t, cma_edge *e, const struct iovec *lv, int nlv,
                const struct iovec *rv, int nrv) {
  int li = 0, ri = 0;
  size_t lo = 0, ro = 0;
  while (ri < nrv) {
    size_t c = reach(rv, nrv, ri, ro, t->iov);
    size_t cl = reach(lv, nlv, li, lo, t->iov);
    if (cl < c) c = cl;
    int nr = take(rv, &ri, &ro, c, t->rchunk);
    int nl = take(lv, &li, &lo, c, t->lchunk);
    ssize_t got = process_vm_readv(e->pid, t->lchunk, (unsigned long)nl, t->rchunk,
                                   (unsigned long)nr, 0);
    t->syscalls++;
    if (got != (ssize_t)c)
      return hs__error(HS_ERR_STATE,
                       "cma: process_vm_readv of %zu bytes from rank %d (pid %d) %s%s "
                       "(were its arrays freed or resized while in use?)",
                       c, p->peers[e->peer].rank, (int)e->pid, got < 0 ? "failed: " : "was short",
                       got < 0 ? strerror(errno) : "");
  }
  return HS_OK;
}

/* Point v at runs r of e's fields for the posted operation, unless it holds them already
 * (*reg: v holds the registered arrays'). */
static void remote_iov(hs_plan p, cma_t *t, cma_edge *e, struct iovec *v, const cma_run *r,
                       int n, int *reg) {
  int reg_remote = e->ctl->mode == MODE_REG;
  if (reg_remote && *reg) return;
  const uint64_t *a = reg_remote ? reg_of(t, e->ctl) : cur_of(t, e->ctl, p->nfields);
  for (int f = 0; f < p->nfields; f++) t->base[f] = (char *)(uintptr_t)a[f];
  fill_iov(v, r, n, t->base);
  *reg = reg_remote;
}

static int read_edge(hs_plan p, cma_t *t, cma_edge *e, void *const *arrays) {
  remote_iov(p, t, e, e->riov, e->remote, e->nremote, &e->riov_reg);
  int reg_local = hs__arrays_registered(p, arrays);
  if (!reg_local || !e->liov_reg) {
    for (int f = 0; f < p->nfields; f++) t->base[f] = hs__field_ptr(p, arrays, f);
    fill_iov(e->liov, e->local, e->nlocal, t->base);
    e->liov_reg = reg_local;
  }
  return pull(p, t, e, e->liov, e->nlocal, e->riov, e->nremote);
}

/* The reverse's source for my sections [j0, j1) of edge i: its halo boxes, read into
 * scratch. */
static int cma_source(hs_plan p, void *ctx, int i, int j0, int j1, char *scratch,
                      hs_pull_src *out) {
  cma_t *t = ctx;
  cma_edge *e = &t->intra[i];
  const hs_section *s = p->peers[e->peer].send;
  if (e->hseq != t->seq) {
    remote_iov(p, t, e, e->hiov, e->halo, e->nhalo, &e->hiov_reg);
    e->hseq = t->seq;
  }
  struct iovec l = {scratch, s[j1 - 1].msg_offset + s[j1 - 1].bytes - s[j0].msg_offset};
  *out = (hs_pull_src){scratch, NULL, NULL};
  return pull(p, t, e, &l, 1, e->hiov + e->first[j0], e->first[j1] - e->first[j0]);
}

/* Publish operation t->seq to my on-node readers: where my arrays are. My readers finished
 * the previous operation (complete waited for that): the control block is mine to rewrite. */
static int post(hs_plan p, cma_t *t, void *const *arrays) {
  if (hs__arrays_registered(p, arrays)) {
    t->ctl->mode = MODE_REG;
  } else {
    uint64_t *cur = cur_of(t, t->ctl, p->nfields);
    for (int f = 0; f < p->nfields; f++) cur[f] = (uint64_t)(uintptr_t)hs__field_ptr(p, arrays, f);
    t->ctl->mode = MODE_SWAP;
  }
  HS_MPI(MPI_Win_sync(t->win));
  atomic_store_explicit(&t->ctl->posted, t->seq, memory_order_release);
  return HS_OK;
}

static int cma_start(hs_plan p, void *const *arrays) {
  cma_t *t = p->impl;
  ++t->seq;
  int rc = hs__twosided_start(p, t->remote, arrays);
  if (rc != HS_OK) return rc;
  return t->nintra ? post(p, t, arrays) : HS_OK;
}

static int cma_complete(hs_plan p, void *const *arrays) {
  cma_t *t = p->impl;
  uint64_t seq = t->seq;
  int err = HS_OK, left = 0, remote_done = 0;
  for (int i = 0; i < t->nintra; i++) {
    t->intra[i].pending = p->peers[t->intra[i].peer].nrecv > 0;
    left += t->intra[i].pending;
  }
  unsigned spins = 0;
  /* Read each on-node neighbour as soon as it has posted; unpack off-node messages as they
   * arrive. */
  while (left || !remote_done) {
    int progressed = 0;
    for (int i = 0; i < t->nintra; i++) {
      cma_edge *e = &t->intra[i];
      if (!e->pending) continue;
      if (atomic_load_explicit(&e->ctl->posted, memory_order_acquire) < seq) continue;
      HS_MPI(MPI_Win_sync(t->win));
      int rc = read_edge(p, t, e, arrays);
      if (rc != HS_OK && err == HS_OK) err = rc;
      /* Even after a failed read, or the neighbour would wait for ever. */
      atomic_store_explicit(consumed_of(t->ctl, e->nrank), seq, memory_order_release);
      e->pending = 0;
      left--;
      progressed = 1;
    }
    if (!remote_done) {
      int rc = hs__twosided_test(p, t->remote, arrays, &remote_done);
      if (rc != HS_OK) return rc;
      progressed |= remote_done;
    }
    if (progressed)
      spins = 0;
    else
      hs__relax(&spins);
  }
  int rc = hs__twosided_complete(p, t->remote, arrays); /* the sends */
  if (rc != HS_OK) return rc;
  /* The caller may overwrite its interior once we return: wait until every on-node reader
   * of this swap has finished. */
  for (int i = 0; i < t->nintra; i++) {
    cma_edge *e = &t->intra[i];
    if (!p->peers[e->peer].nsend) continue;
    _Atomic uint64_t *c = consumed_of(e->ctl, t->nrank);
    spins = 0;
    while (atomic_load_explicit(c, memory_order_acquire) < seq) hs__relax(&spins);
  }
  HS_MPI(MPI_Win_sync(t->win));
  return err;
}

static int cma_reverse_start(hs_plan p, hs_op op, void *const *arrays) {
  cma_t *t = p->impl;
  int rc = hs__reverse_create(p, &t->pull, &t->rev);
  if (rc != HS_OK) return rc;
  ++t->seq;
  rc = t->nintra ? post(p, t, arrays) : HS_OK;
  return rc == HS_OK ? hs__reverse_begin(p, t->rev, arrays) : rc;
}

static int cma_reverse_complete(hs_plan p, hs_op op, void *const *arrays) {
  cma_t *t = p->impl;
  return hs__reverse_finish(p, t->rev, op, arrays, t->seq);
}

static void cma_destroy(hs_plan p) {
  cma_t *t = p->impl;
  if (!t) return;
  hs__twosided_free(p, t->remote);
  hs__reverse_destroy(p, t->rev);
  hs__free(p, t->pedge);
  hs__free(p, t->base);
  for (int i = 0; t->intra && i < t->nintra; i++) {
    cma_edge *e = &t->intra[i];
    void *b[] = {e->remote, e->local, e->riov, e->liov, e->halo, e->first, e->hiov};
    for (size_t k = 0; k < sizeof b / sizeof b[0]; k++) hs__free(p, b[k]);
  }
  hs__free(p, t->intra);
  hs__free(p, t->inter);
  hs__free(p, t->lchunk);
  hs__free(p, t->rchunk);
  if (t->win != MPI_WIN_NULL) {
    if (t->win_locked) MPI_Win_unlock_all(t->win);
    MPI_Win_free(&t->win);
    hs__account(p, -(int64_t)t->seg_bytes);
  }
  if (t->node != MPI_COMM_NULL) MPI_Comm_free(&t->node);
  hs__free(p, t);
  p->impl = NULL;
}

static void cma_describe(hs_plan p, char *buf, size_t len) {
  cma_t *t = p->impl;
  if (!t) return;
  size_t n = 0;
  int runs = 0;
  for (int i = 0; i < t->nintra; i++) runs += t->intra[i].nremote;
  hs__appendf(buf, len, &n,
              "; cma: %d on-node peers read with process_vm_readv (%d remote runs, at most %d "
              "iovecs per call), %d peers two-sided%s",
              t->nintra, runs, t->iov, t->ninter,
              p->has_callbacks ? " (pack/unpack hooks: every peer two-sided)" : "");
}

const hs_transport_ops hs__transport_cma = {
    .name = "cma",
    .id = HS_TRANSPORT_CMA,
    .summary = "one copy from on-node neighbours' fields wherever allocated (Linux "
               "cross-memory attach, process_vm_readv), two-sided MPI between nodes",
    .options = cma_options,
    .config_size = sizeof(cma_config),
    .query = cma_query,
    .setup = cma_setup,
    .start = cma_start,
    .complete = cma_complete,
    .destroy = cma_destroy,
    .describe = cma_describe,
    .reverse_start = cma_reverse_start,
    .reverse_complete = cma_reverse_complete,
};
