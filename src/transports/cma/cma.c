/* Transport "cma": single-copy exchange between ranks of one node from ordinary memory, with
 * Linux cross-memory attach; two-sided MPI between nodes, in the same swap.
 *
 * Each rank reads its halo straight out of its on-node neighbours' field arrays, wherever
 * they were allocated, with process_vm_readv: the contiguous runs of every field as one iovec
 * list per neighbour (split at `iov` iovecs per call), copied by the kernel into this rank's
 * halos. The reverse reads a neighbour's halo boxes into a scratch buffer, a piece at a time,
 * and the core combines them in its canonical order. What a rank publishes is its pid and its
 * fields' addresses. The core's on-node engine (src/engines/node.c) does the rest (docs/cma.md);
 * plans with pack/unpack hooks, which only the owning process can run, go by message. */
#define _GNU_SOURCE
#include "hs_node.h"
#include "hs_transport.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* query.c: whether this rank can read its node neighbours' memory, and why not. */
int hs__cma_query(MPI_Comm comm, char *why, size_t n);

#define MODE_REG 0u  /* the registered arrays: addresses published at setup */
#define MODE_SWAP 1u /* per-swap arrays: addresses published with the swap */

typedef struct {
  int node_size, iov, min_run;
} cma_config;

static const hs_option_spec cma_options[] = {
    HS_OPTION_INT("node_size", "0", 0, 1 << 20, cma_config, node_size,
     "virtual nodes of N consecutive ranks (0: the physical node); other ranks are off-node"),
    HS_OPTION_INT("iov", "1024", 1, IOV_MAX, cma_config, iov,
     "most iovecs per process_vm_readv call (per side)"),
    HS_OPTION_INT("min_run", "256", 0, 1 << 30, cma_config, min_run,
     "mean contiguous run in bytes (over every rank's sections) below which every peer goes by "
     "message: the kernel pins pages per iovec, so runs of a few elements cost more than MPI's copies"),
    HS_OPTIONS_END};

typedef struct {
  int64_t pid;
  uint64_t addr[]; /* reg[nfields] (setup), then cur[nfields] (per-swap arrays) */
} cma_pub;

typedef struct {
  int field;
  ptrdiff_t off; /* bytes from the field's data pointer */
  size_t len;
} cma_run;

typedef struct {
  int n, cap;
  cma_run *r;
  struct iovec *v;
  int reg;       /* v holds the registered arrays' addresses */
} cma_runs;

typedef struct {
  cma_runs remote; /* its strips in its fields, in message order */
  cma_runs local;  /* my halo boxes in my fields: run k has remote run k's length */
  cma_runs halo;   /* the reverse: its halo boxes for me, cut at every section */
  struct iovec *hl; /* the reverse: scratch cut like halo */
  int *first;      /* first[j]: the first halo run of my send section j */
  uint64_t hseq;   /* halo.v holds the addresses of this operation */
} cma_edge;

typedef struct {
  hs_node node;    /* first: the engine's state */
  cma_edge *x;     /* per on-node edge */
  uint64_t *mine;  /* nfields: my fields' addresses for this swap */
  double short_run; /* > 0: every peer goes by message, the mean run (bytes) being this short */
} cma_t;

/* ------------------------------------------------------------------ setup */
/* Append a run, merged with the last one if it continues it and merge is set. */
static int append(hs_plan p, cma_runs *x, cma_run r, int merge) {
  cma_run *last = x->n && merge ? &x->r[x->n - 1] : NULL;
  if (last && last->field == r.field && last->off + (ptrdiff_t)last->len == r.off) {
    last->len += r.len;
    return HS_OK;
  }
  if (x->n == x->cap) {
    cma_run *b = hs__malloc(p, (size_t)(x->cap = x->cap ? 2 * x->cap : 64) * sizeof *b);
    if (!b) return hs__error(HS_ERR_NOMEM, "cma: out of memory");
    if (x->n) memcpy(b, x->r, (size_t)x->n * sizeof *b);
    hs__free(p, x->r);
    x->r = b;
  }
  x->r[x->n++] = r;
  return HS_OK;
}

/* Append the contiguous runs of section s (merge 0: its first run starts a new one). */
static int add_runs(hs_plan p, const hs_section *s, cma_runs *x, int merge) {
  int rc = HS_OK;
  for (int i3 = 0; i3 < s->n3; i3++)
    for (int i2 = 0; i2 < s->n2; i2++)
      for (int i1 = 0; rc == HS_OK && i1 < s->n1 && s->run; i1++, merge = 1)
        rc = append(p, x, (cma_run){s->box.field, s->base + i1 * s->s1 + i2 * s->s2 + i3 * s->s3,
                                    s->run}, merge);
  return rc;
}

/* Cut runs a and b at each other's boundaries: then run k of both has the same length. */
static int pair(hs_plan p, cma_runs *a, cma_runs *b) {
  cma_runs x = {0}, y = {0};
  size_t oa = 0, ob = 0;
  int rc = HS_OK;
  for (int i = 0, j = 0; rc == HS_OK && i < a->n && j < b->n;) {
    size_t m = a->r[i].len - oa < b->r[j].len - ob ? a->r[i].len - oa : b->r[j].len - ob;
    rc = append(p, &x, (cma_run){a->r[i].field, a->r[i].off + (ptrdiff_t)oa, m}, 0);
    if (rc == HS_OK) rc = append(p, &y, (cma_run){b->r[j].field, b->r[j].off + (ptrdiff_t)ob, m}, 0);
    if ((oa += m) == a->r[i].len) i++, oa = 0;
    if ((ob += m) == b->r[j].len) j++, ob = 0;
  }
  hs__free(p, a->r);
  hs__free(p, b->r);
  *a = x;
  *b = y;
  return rc;
}

/* An edge's run lists: forward (its strips, my halo boxes) and reverse (its halo boxes). */
static int edge_runs(hs_plan p, const hs_node_edge *e, cma_edge *x) {
  const hs_peer *pe = &p->peers[e->peer];
  int rc = HS_OK;
  for (int j = 0; rc == HS_OK && j < pe->nrecv; j++) {
    rc = add_runs(p, &e->ssec[j], &x->remote, 1);
    if (rc == HS_OK) rc = add_runs(p, &pe->recv[j], &x->local, 1);
  }
  if (rc == HS_OK) rc = pair(p, &x->remote, &x->local);
  x->first = hs__malloc(p, (size_t)(pe->nsend + 1) * sizeof(int));
  if (rc == HS_OK && !x->first) rc = hs__error(HS_ERR_NOMEM, "cma: out of memory");
  for (int j = 0; rc == HS_OK && j <= pe->nsend; j++) {
    x->first[j] = x->halo.n;
    if (j < pe->nsend) rc = add_runs(p, &e->rsec[j], &x->halo, 0);
  }
  x->hl = hs__malloc(p, (size_t)(x->halo.n + 1) * sizeof(struct iovec));
  cma_runs *all[3] = {&x->remote, &x->local, &x->halo};
  for (int k = 0; k < 3; k++) all[k]->v = hs__malloc(p, (size_t)(all[k]->n + 1) * sizeof(struct iovec));
  if (rc == HS_OK && (!x->hl || !x->remote.v || !x->local.v || !x->halo.v))
    rc = hs__error(HS_ERR_NOMEM, "cma: out of memory");
  return rc;
}

static int cma_edges(hs_plan p, hs_node *n) {
  cma_t *t = (cma_t *)n;
  cma_pub *mine = (cma_pub *)n->pub;
  mine->pid = (int64_t)getpid();
  for (int f = 0; f < p->nfields; f++) mine->addr[f] = (uint64_t)(uintptr_t)p->fields[f].data;
  t->x = hs__calloc(p, (size_t)(n->nedges + 1) * sizeof *t->x);
  t->mine = hs__malloc(p, (size_t)(p->nfields + 1) * sizeof(uint64_t));
  if (!t->x || !t->mine) return hs__error(HS_ERR_NOMEM, "cma: out of memory");
  int rc = HS_OK;
  for (int i = 0; rc == HS_OK && i < n->nedges; i++) rc = edge_runs(p, &n->edges[i], &t->x[i]);
  return rc;
}

/* ------------------------------------------------------------------ operations */
/* Point x->v at its runs in the fields whose addresses are a[], unless it holds them already
 * (x->reg: v holds the registered arrays'). */
static void point(cma_runs *x, const uint64_t *a, int reg) {
  if (reg && x->reg) return;
  for (int k = 0; k < x->n; k++) {
    x->v[k].iov_base = (char *)(uintptr_t)a[x->r[k].field] + x->r[k].off;
    x->v[k].iov_len = x->r[k].len;
  }
  x->reg = reg;
}

/* The addresses of edge e's fields for the operation it posted, and whether registered. */
static const uint64_t *its_fields(hs_plan p, const hs_node_edge *e, int *reg) {
  *reg = hs__node_mode(e) == MODE_REG;
  return ((cma_pub *)e->pub)->addr + (*reg ? 0 : p->nfields);
}

/* Copy remote runs rv (edge i's memory) into local runs lv of the same lengths: one
 * process_vm_readv per `iov` of them. */
static int copy_in(hs_plan p, cma_t *t, int i, const struct iovec *lv, const struct iovec *rv,
                   int n) {
  const int iov = ((cma_config *)p->config)->iov;
  for (int k = 0; k < n; k += iov) {
    int m = n - k < iov ? n - k : iov;
    size_t c = 0;
    for (int j = k; j < k + m; j++) c += rv[j].iov_len;
    pid_t pid = (pid_t)((const cma_pub *)t->node.edges[i].pub)->pid;
    ssize_t got = process_vm_readv(pid, lv + k, (unsigned long)m, rv + k, (unsigned long)m, 0);
    if (got != (ssize_t)c)
      return hs__error(HS_ERR_STATE, "cma: process_vm_readv of %zu bytes from rank %d (pid %d) "
                       "%s%s (were its arrays freed or resized while in use?)", c,
                       p->peers[t->node.edges[i].peer].rank, (int)pid,
                       got < 0 ? "failed: " : "was short", got < 0 ? strerror(errno) : "");
  }
  return HS_OK;
}

static uint32_t cma_post(hs_plan p, hs_node *n, void *const *arrays, int reverse) {
  (void)reverse;
  if (hs__arrays_registered(p, arrays)) return MODE_REG;
  uint64_t *cur = ((cma_pub *)n->pub)->addr + p->nfields;
  for (int f = 0; f < p->nfields; f++) cur[f] = (uint64_t)(uintptr_t)hs__field_ptr(p, arrays, f);
  return MODE_SWAP;
}

static int cma_read(hs_plan p, hs_node *n, int i, void *const *arrays) {
  cma_t *t = (cma_t *)n;
  cma_edge *x = &t->x[i];
  int reg;
  const uint64_t *a = its_fields(p, &n->edges[i], &reg);
  point(&x->remote, a, reg);
  int reg_local = hs__arrays_registered(p, arrays);
  for (int f = 0; !(reg_local && x->local.reg) && f < p->nfields; f++)
    t->mine[f] = (uint64_t)(uintptr_t)hs__field_ptr(p, arrays, f);
  point(&x->local, t->mine, reg_local);
  return copy_in(p, t, i, x->local.v, x->remote.v, x->remote.n);
}

/* The reverse's source for my sections [j0, j1) of edge i: its halo boxes, read into
 * scratch. */
static int cma_source(hs_plan p, void *ctx, int i, int j0, int j1, char *scratch,
                      hs_pull_src *out) {
  hs_node *n = ctx;
  cma_edge *x = &((cma_t *)n)->x[i];
  if (x->hseq != n->seq) {
    int reg;
    const uint64_t *a = its_fields(p, &n->edges[i], &reg);
    point(&x->halo, a, reg);
    x->hseq = n->seq;
  }
  char *at = scratch;
  for (int k = x->first[j0]; k < x->first[j1]; at += x->halo.r[k++].len)
    x->hl[k] = (struct iovec){at, x->halo.r[k].len};
  *out = (hs_pull_src){scratch, NULL, NULL};
  return copy_in(p, (cma_t *)n, i, x->hl + x->first[j0], x->halo.v + x->first[j0],
                 x->first[j1] - x->first[j0]);
}

static void cma_free(hs_plan p, hs_node *n) {
  cma_t *t = (cma_t *)n;
  for (int i = 0; t->x && i < n->nedges; i++) {
    cma_runs *all[3] = {&t->x[i].remote, &t->x[i].local, &t->x[i].halo};
    for (int k = 0; k < 3; k++) {
      hs__free(p, all[k]->r);
      hs__free(p, all[k]->v);
    }
    hs__free(p, t->x[i].first);
    hs__free(p, t->x[i].hl);
  }
  hs__free(p, t->x);
  hs__free(p, t->mine);
}

/* The engine's description goes on with this. */
static void cma_describe(hs_plan p, hs_node *n, char *buf, size_t len) {
  size_t k = 0;
  int runs = 0;
  for (int i = 0; ((cma_t *)n)->x && i < n->nedges; i++) runs += ((cma_t *)n)->x[i].remote.n;
  const cma_config *cf = p->config;
  if (((cma_t *)n)->short_run > 0)
    hs__appendf(buf, len, &k, " (every peer by message: the mean contiguous run, %.0f bytes, is "
                "below min_run=%d)", ((cma_t *)n)->short_run, cf->min_run);
  else
    hs__appendf(buf, len, &k, " (read with process_vm_readv: %d remote runs, at most %d iovecs "
                "per call)", runs, cf->iov);
}

static const hs_node_ops cma_node_ops = {.setup = cma_edges, .post = cma_post, .read = cma_read,
                                         .source = cma_source, .release = cma_free,
                                         .describe = cma_describe};

/* The mean contiguous run in bytes of every rank's send and receive sections (collective:
 * every rank decides alike whether its reads would be mostly per-iovec cost). */
static int mean_run(hs_plan p, double *mean) {
  double v[2] = {0, 0}; /* bytes, runs */
  for (int k = 0; k < p->npeers; k++) {
    const hs_peer *pe = &p->peers[k];
    for (int j = 0; j < pe->nsend + pe->nrecv; j++) {
      const hs_section *s = j < pe->nsend ? &pe->send[j] : &pe->recv[j - pe->nsend];
      if (!s->run) continue;
      v[0] += (double)s->bytes;
      v[1] += (double)s->n1 * s->n2 * s->n3;
    }
  }
  HS_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, p->comm));
  *mean = v[1] > 0 ? v[0] / v[1] : 0;
  return HS_OK;
}

/* No boxes (cma reads the fields where they lie); a plan with hooks, or whose runs are short,
 * sends by message. */
static int cma_setup(hs_plan p) {
  const cma_config *cf = p->config;
  double mean = 0;
  int rc = mean_run(p, &mean);
  if (rc != HS_OK) return rc;
  hs_node_config nc = {.node_size = cf->node_size, .hooks_by_message = 1,
                       .all_by_message = mean > 0 && mean < cf->min_run};
  nc.pub_bytes = sizeof(cma_pub) + 2 * (size_t)p->nfields * sizeof(uint64_t);
  rc = hs__node_setup(p, &cma_node_ops, &nc, sizeof(cma_t));
  if (rc == HS_OK && nc.all_by_message) ((cma_t *)p->impl)->short_run = mean;
  return rc;
}

HS_DEFINE_NODE_TRANSPORT(hs__transport_cma, cma_setup, "cma", HS_TRANSPORT_CMA,
                         "one copy from on-node neighbours' fields wherever allocated (Linux "
                         "cross-memory attach, process_vm_readv), two-sided MPI between nodes",
                         cma_options, cma_config, .query = hs__cma_query);
