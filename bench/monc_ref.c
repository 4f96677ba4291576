/* monc-ref: see monc_ref.h. Plain MPI; no haloswap. */
#include "monc_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int f, x0, y0, nx, ny; /* a box of whole z-columns of field f, local interior coordinates */
} box;

typedef struct {
  box *b;
  int n, cap;
  size_t bytes;
} boxlist;

typedef struct {
  int rank;
  boxlist sface, rface, scorner, rcorner;
  char *sfbuf, *rfbuf, *scbuf, *rcbuf;
} nbr;

struct monc_ref {
  int nf, n[3], h[3], d, az, ay;
  size_t elem, col;
  char **data;
  int nnb;
  nbr nb[8];
  boxlist lsrc, ldst; /* local copies (self-neighbour) */
  MPI_Request *rq, *sq;
  int nr, ns;
  MPI_Comm comm;
  size_t buffer_bytes;
};

static int push(boxlist *l, box b, size_t col) {
  if (l->n == l->cap) {
    int c = l->cap ? 2 * l->cap : 32;
    box *nb = realloc(l->b, (size_t)c * sizeof *nb);
    if (!nb) return -1;
    l->b = nb;
    l->cap = c;
  }
  l->b[l->n++] = b;
  l->bytes += (size_t)b.nx * (size_t)b.ny * col;
  return 0;
}

static char *column(const monc_ref *m, int f, int x, int y) {
  return m->data[f] + ((size_t)(x + m->h[0]) * (size_t)m->ay + (size_t)(y + m->h[1])) *
                          (size_t)m->az * m->elem;
}

static size_t pack(const monc_ref *m, const boxlist *l, char *buf) {
  size_t o = 0;
  for (int i = 0; i < l->n; i++) {
    const box *b = &l->b[i];
    for (int x = b->x0; x < b->x0 + b->nx; x++)
      for (int y = b->y0; y < b->y0 + b->ny; y++, o += m->col)
        memcpy(buf + o, column(m, b->f, x, y), m->col);
  }
  return o;
}

static void unpack(const monc_ref *m, const boxlist *l, const char *buf) {
  size_t o = 0;
  for (int i = 0; i < l->n; i++) {
    const box *b = &l->b[i];
    for (int x = b->x0; x < b->x0 + b->nx; x++)
      for (int y = b->y0; y < b->y0 + b->ny; y++, o += m->col)
        memcpy(column(m, b->f, x, y), buf + o, m->col);
  }
}

static int rank_at(MPI_Comm cart, const int coord[3], const int procs[3], int dx, int dy) {
  int c[3] = {(coord[0] + dx + procs[0]) % procs[0], (coord[1] + dy + procs[1]) % procs[1], 0};
  int r;
  MPI_Cart_rank(cart, c, &r);
  return r;
}

static nbr *find(monc_ref *m, int rank) {
  for (int i = 0; i < m->nnb; i++)
    if (m->nb[i].rank == rank) return &m->nb[i];
  if (m->nnb == 8) return NULL;
  nbr *b = &m->nb[m->nnb++];
  memset(b, 0, sizeof *b);
  b->rank = rank;
  return b;
}

monc_ref *monc_ref_create(MPI_Comm cart, int nf, void *const *data, size_t elem, const int n[3],
                          const int h[3], int depth, int corners, char *why, size_t len) {
  int nd = 0, procs[3], per[3], coord[3], me;
  MPI_Cartdim_get(cart, &nd);
  if (nd != 3) {
    snprintf(why, len, "needs a 3-D decomposition");
    return NULL;
  }
  MPI_Cart_get(cart, 3, procs, per, coord);
  MPI_Comm_rank(cart, &me);
  if (procs[2] != 1 || h[2] != 0 || !per[0] || !per[1]) {
    snprintf(why, len, "MONC's case: one rank in z, no z halo, periodic x and y");
    return NULL;
  }
  if (depth < 1 || depth > h[0] || depth > h[1] || depth > n[0] || depth > n[1]) {
    snprintf(why, len, "depth %d does not fit the halo or the interior", depth);
    return NULL;
  }
  monc_ref *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->comm = cart;
  m->nf = nf;
  memcpy(m->n, n, sizeof m->n);
  memcpy(m->h, h, sizeof m->h);
  m->d = depth;
  m->az = n[2];
  m->ay = n[1] + 2 * h[1];
  m->elem = elem;
  m->col = (size_t)n[2] * elem;
  m->data = malloc((size_t)nf * sizeof(char *));
  for (int f = 0; f < nf; f++) m->data[f] = data[f];
  int d = depth, err = 0;
  /* Faces: MONC's dimension Y (our axis 1) then X (axis 0); slots 1..d go to the lower
   * neighbour (planes start..start+d-1), d+1..2d to the upper (planes end-d+1..end). */
  for (int dim = 1; dim >= 0; dim--) {
    int lo = dim ? rank_at(cart, coord, procs, 0, -1) : rank_at(cart, coord, procs, -1, 0);
    int hi = dim ? rank_at(cart, coord, procs, 0, 1) : rank_at(cart, coord, procs, 1, 0);
    for (int j = 1; j <= 2 * d; j++) {
      int to = j <= d ? lo : hi;
      int sp = j <= d ? j - 1 : n[dim] - 1 - (2 * d - j);    /* plane I send in slot j */
      int from = j <= d ? hi : lo;                           /* who sends me its slot j */
      int rp = j <= d ? n[dim] + (j - 1) : -1 - (2 * d - j); /* where its slot j goes */
      for (int f = 0; f < nf; f++) {
        box s = {f, 0, 0, n[0], n[1]}, r = s;
        if (dim) s.y0 = sp, s.ny = 1, r.y0 = rp, r.ny = 1;
        else s.x0 = sp, s.nx = 1, r.x0 = rp, r.nx = 1;
        if (to == me) { /* local copy (periodic self-neighbour) */
          err |= push(&m->lsrc, s, m->col) | push(&m->ldst, r, m->col);
          continue;
        }
        nbr *a = find(m, to), *b = find(m, from);
        if (!a || !b) err = 1;
        else err |= push(&a->sface, s, m->col) | push(&b->rface, r, m->col);
      }
    }
  }
  /* Corners (y, x): 1 = (-,-), 2 = (-,+), 3 = (+,-), 4 = (+,+); sent 1..4, received 4..1
   * into the opposite corner. */
  static const int cs[5][2] = {{0, 0}, {-1, -1}, {-1, 1}, {1, -1}, {1, 1}}; /* (sy, sx) */
  for (int j = 1; corners && j <= 4; j++) {
    int sy = cs[j][0], sx = cs[j][1];
    int to = rank_at(cart, coord, procs, sx, sy);
    for (int f = 0; f < nf; f++) {
      box s = {f, sx < 0 ? 0 : n[0] - d, sy < 0 ? 0 : n[1] - d, d, d};
      box r = {f, -sx < 0 ? -d : n[0], -sy < 0 ? -d : n[1], d, d};
      if (to == me) {
        err |= push(&m->lsrc, s, m->col) | push(&m->ldst, r, m->col);
        continue;
      }
      nbr *a = find(m, to);
      if (!a) err = 1;
      else err |= push(&a->scorner, s, m->col);
    }
  }
  for (int j = 4; corners && j >= 1; j--) {
    int sy = cs[j][0], sx = cs[j][1];
    int from = rank_at(cart, coord, procs, sx, sy);
    if (from == me) continue;
    for (int f = 0; f < nf; f++) {
      box r = {f, sx < 0 ? -d : n[0], sy < 0 ? -d : n[1], d, d};
      nbr *b = find(m, from);
      if (!b) err = 1;
      else err |= push(&b->rcorner, r, m->col);
    }
  }
  m->rq = malloc(16 * sizeof(MPI_Request));
  m->sq = malloc(16 * sizeof(MPI_Request));
  for (int i = 0; i < m->nnb && !err; i++) {
    nbr *b = &m->nb[i];
    b->sfbuf = malloc(b->sface.bytes + 1);
    b->rfbuf = malloc(b->rface.bytes + 1);
    b->scbuf = malloc(b->scorner.bytes + 1);
    b->rcbuf = malloc(b->rcorner.bytes + 1);
    if (!b->sfbuf || !b->rfbuf || !b->scbuf || !b->rcbuf) err = 1;
    m->buffer_bytes += b->sface.bytes + b->rface.bytes + b->scorner.bytes + b->rcorner.bytes;
  }
  if (err || !m->rq || !m->sq) {
    snprintf(why, len, "out of memory");
    monc_ref_free(m);
    return NULL;
  }
  return m;
}

/* The receives (recv) or the sends of every neighbour's non-empty buffers, its face's then its
 * corners'. */
static void post(monc_ref *m, int recv) {
  for (int i = 0; i < m->nnb; i++) {
    nbr *b = &m->nb[i];
    const boxlist *lists[2] = {recv ? &b->rface : &b->sface, recv ? &b->rcorner : &b->scorner};
    char *bufs[2] = {recv ? b->rfbuf : b->sfbuf, recv ? b->rcbuf : b->scbuf};
    for (int k = 0; k < 2; k++) {
      if (!lists[k]->bytes) continue;
      int bytes = (int)lists[k]->bytes;
      if (recv) MPI_Irecv(bufs[k], bytes, MPI_BYTE, b->rank, 0, m->comm, &m->rq[m->nr++]);
      else MPI_Isend(bufs[k], bytes, MPI_BYTE, b->rank, 0, m->comm, &m->sq[m->ns++]);
    }
  }
}

void monc_ref_swap(monc_ref *m) {
  /* initiate_nonblocking_halo_swap */
  m->nr = m->ns = 0;
  post(m, 1);
  for (int i = 0; i < m->nnb; i++) {
    pack(m, &m->nb[i].sface, m->nb[i].sfbuf);
    pack(m, &m->nb[i].scorner, m->nb[i].scbuf);
  }
  post(m, 0);
  /* complete_nonblocking_halo_swap: local copy, wait, unpack, wait for the sends */
  for (int i = 0; i < m->lsrc.n; i++) {
    const box *s = &m->lsrc.b[i], *r = &m->ldst.b[i];
    for (int x = 0; x < s->nx; x++)
      for (int y = 0; y < s->ny; y++)
        memcpy(column(m, r->f, r->x0 + x, r->y0 + y), column(m, s->f, s->x0 + x, s->y0 + y),
               m->col);
  }
  MPI_Waitall(m->nr, m->rq, MPI_STATUSES_IGNORE);
  for (int i = 0; i < m->nnb; i++) {
    unpack(m, &m->nb[i].rface, m->nb[i].rfbuf);
    unpack(m, &m->nb[i].rcorner, m->nb[i].rcbuf);
  }
  MPI_Waitall(m->ns, m->sq, MPI_STATUSES_IGNORE);
}

size_t monc_ref_buffer_bytes(const monc_ref *m) { return m->buffer_bytes; }

void monc_ref_free(monc_ref *m) {
  if (!m) return;
  for (int i = 0; i < m->nnb; i++) {
    nbr *b = &m->nb[i];
    free(b->sfbuf);
    free(b->rfbuf);
    free(b->scbuf);
    free(b->rcbuf);
    free(b->sface.b);
    free(b->rface.b);
    free(b->scorner.b);
    free(b->rcorner.b);
  }
  free(m->lsrc.b);
  free(m->ldst.b);
  free(m->rq);
  free(m->sq);
  free(m->data);
  free(m);
}
