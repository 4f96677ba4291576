/* epic-fields: the reference exchange, written the way EPIC's field_mpi.f90 works (its
 * documented behaviour; no code taken): per call, buffers are allocated for the 8 horizontal
 * neighbours, filled, MPI_Irecv is posted from all 8, a blocking MPI_Send goes to all 8,
 * MPI_Waitall, the buffers are unpacked (summed into the interior for the reverse) and freed.
 * One message per neighbour per call, holding every array of the call; integers travel as
 * doubles. Tags name the direction so that a rank that is several neighbours at once (small
 * periodic grids) is told apart. Boxes span the whole z column, halo levels included. */
#include "ef.h"

#include <stdlib.h>
#include <string.h>

/* EPIC's neighbour order and offsets: N, S, W, E, NW, NE, SW, SE. */
static const int DX[8] = {0, 0, -1, 1, -1, 1, -1, 1};
static const int DY[8] = {1, -1, 0, 0, 1, 1, -1, -1};
static const int OPP[8] = {1, 0, 3, 2, 7, 6, 5, 4};
/* Order in which the reverse adds the received boxes (field_buffer_to_interior):
 * W, E, S, N, NE, SE, SW, NW. */
static const int ACC[8] = {2, 3, 1, 0, 5, 7, 6, 4};

void ef_ref_init(ef_ref *r, hs_decomp d, const ef_grid *g) {
  r->comm = hs_decomp_comm(d);
  r->g = g;
  for (int n = 0; n < 8; n++) {
    int c[3] = {hs_decomp_coord(d, 0) + DX[n], hs_decomp_coord(d, 1) + DY[n], 0};
    MPI_Cart_rank(r->comm, c, &r->nbr[n]); /* periodic: shifted into range */
  }
}

/* Points along one axis of extent n: halo = 1: the halo on side s (1 below, 2 above);
 * halo = 0: the interior points that fill the neighbour's halo on side -s (the upper
 * neighbour's 1-deep lower halo takes my last point, the lower one's 2-deep upper halo my
 * first two). s = 0: the whole interior. */
static void range(int s, int n, int halo, int *lo, int *cnt) {
  if (s == 0) {
    *lo = 0;
    *cnt = n;
  } else if (halo) {
    *lo = s < 0 ? -EF_HLO : n;
    *cnt = s < 0 ? EF_HLO : EF_HHI;
  } else {
    *lo = s > 0 ? n - EF_HLO : 0;
    *cnt = s > 0 ? EF_HLO : EF_HHI;
  }
}

typedef struct {
  int i0, ni, j0, nj;
} box2;

static box2 box_of(const ef_grid *g, int n, int halo) {
  box2 b;
  range(DX[n], g->nx, halo, &b.i0, &b.ni);
  range(DY[n], g->ny, halo, &b.j0, &b.nj);
  return b;
}

static size_t box_size(const ef_grid *g, const ef_arr *a, box2 b) {
  return (size_t)b.ni * (size_t)b.nj * (size_t)(a->twod ? 1 : g->Z);
}

/* mode 0: pack into buf; 1: copy buf into the field; 2: add buf into the field. */
static void copy_box(const ef_grid *g, const ef_arr *a, box2 b, double *buf, int mode) {
  const size_t zl = a->twod ? 1 : (size_t)g->Z;
  size_t k = 0;
  for (int i = b.i0; i < b.i0 + b.ni; i++)
    for (int j = b.j0; j < b.j0 + b.nj; j++) {
      size_t base = a->twod ? ef_at2(g, i, j) : ef_at(g, i, j, -1);
      if (a->is_int) {
        int32_t *f = (int32_t *)a->data + base;
        for (size_t z = 0; z < zl; z++, k++) {
          if (mode == 0) buf[k] = (double)f[z];
          else if (mode == 1) f[z] = (int32_t)buf[k];
          else f[z] = (int32_t)((double)f[z] + buf[k]);
        }
      } else {
        double *f = (double *)a->data + base;
        for (size_t z = 0; z < zl; z++, k++) {
          if (mode == 0) buf[k] = f[z];
          else if (mode == 1) f[z] = buf[k];
          else f[z] = f[z] + buf[k];
        }
      }
    }
}

int ef_ref_exchange(const ef_ref *r, const ef_arr *a, int narr, int reverse) {
  const ef_grid *g = r->g;
  double *sb[8], *rb[8];
  size_t sc[8], rc[8];
  int bad = 0;
  /* reverse: my halo box on side n goes to neighbour n, whose contribution is added to my
   * interior box toward n; forward: the other way round. */
  const int send_halo = reverse, recv_halo = !reverse;
  for (int n = 0; n < 8; n++) {
    sc[n] = rc[n] = 0;
    for (int f = 0; f < narr; f++) {
      sc[n] += box_size(g, &a[f], box_of(g, n, send_halo));
      rc[n] += box_size(g, &a[f], box_of(g, n, recv_halo));
    }
    sb[n] = malloc(sc[n] * sizeof(double) + 1);
    rb[n] = malloc(rc[n] * sizeof(double) + 1);
    if (!sb[n] || !rb[n]) bad = 1;
  }
  if (!bad) {
    for (int n = 0; n < 8; n++) {
      size_t off = 0;
      for (int f = 0; f < narr; f++) {
        box2 b = box_of(g, n, send_halo);
        copy_box(g, &a[f], b, sb[n] + off, 0);
        off += box_size(g, &a[f], b);
      }
    }
    MPI_Request req[8];
    int rc_mpi = MPI_SUCCESS;
    for (int n = 0; n < 8 && rc_mpi == MPI_SUCCESS; n++)
      rc_mpi = MPI_Irecv(rb[n], (int)rc[n], MPI_DOUBLE, r->nbr[n], n, r->comm, &req[n]);
    for (int n = 0; n < 8 && rc_mpi == MPI_SUCCESS; n++)
      rc_mpi = MPI_Send(sb[n], (int)sc[n], MPI_DOUBLE, r->nbr[n], OPP[n], r->comm);
    if (rc_mpi == MPI_SUCCESS) rc_mpi = MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    if (rc_mpi != MPI_SUCCESS) bad = 2;
    for (int f = 0; f < narr && !bad; f++)
      for (int q = 0; q < 8; q++) {
        int n = reverse ? ACC[q] : q;
        size_t off = 0;
        for (int h = 0; h < f; h++) off += box_size(g, &a[h], box_of(g, n, recv_halo));
        copy_box(g, &a[f], box_of(g, n, recv_halo), rb[n] + off, reverse ? 2 : 1);
      }
  }
  for (int n = 0; n < 8; n++) {
    free(sb[n]);
    free(rb[n]);
  }
  return bad;
}
