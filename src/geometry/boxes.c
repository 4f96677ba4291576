/* Box decompositions (hs_decomp_create_boxes): each rank names its own box of cells; the
 * boxes must not overlap. A plan over one exchanges with every rank whose box meets its halo
 * (src/geometry/geometry.c); what such a plan cannot do, src/plan/validate.c refuses. */
#include "hs_core.h"

#include <stdlib.h>

/* Local checks of one rank's box. */
static int check_box(int rank, int ndims, const int *global, const int *periodic, const int *lo,
                     const int *hi) {
  const char *w = "hs_decomp_create_boxes";
  if (ndims < 2 || ndims > 3)
    return hs__error(HS_ERR_ARG, "%s: ndims = %d, must be 2 or 3", w, ndims);
  if (!global || !periodic || !lo || !hi)
    return hs__error(HS_ERR_ARG, "%s: %s is NULL", w,
                     !global ? "global" : !periodic ? "periodic" : !lo ? "lo" : "hi");
  for (int a = 0; a < ndims; a++) {
    if (global[a] < 1)
      return hs__error(HS_ERR_ARG, "%s: global[%d] = %d, must be >= 1", w, a, global[a]);
    if (periodic[a] != 0 && periodic[a] != 1)
      return hs__error(HS_ERR_ARG, "%s: periodic[%d] = %d, must be 0 or 1", w, a, periodic[a]);
    if (lo[a] < 0 || hi[a] > global[a] || lo[a] >= hi[a])
      return hs__error(HS_ERR_ARG, "%s: rank %d's box on axis %d is lo[%d] = %d to hi[%d] = %d "
                       "(cells lo <= i < hi); it must hold at least one cell and lie in "
                       "0..global[%d] = %d", w, rank, a, a, lo[a], a, hi[a], a, global[a]);
  }
  return HS_OK;
}

/* Every rank's box from every rank; the first overlap in rank order refuses them all (every
 * rank tests the same gathered list, so every rank gives the same verdict). */
static int gather_boxes(MPI_Comm comm, int ndims, const int *lo, const int *hi, int size,
                        int *box) {
  int mine[6] = {0, 0, 0, 1, 1, 1};
  for (int a = 0; a < ndims; a++) {
    mine[a] = lo[a];
    mine[3 + a] = hi[a];
  }
  HS_MPI(MPI_Allgather(mine, 6, MPI_INT, box, 6, MPI_INT, comm));
  for (int r = 0; r < size; r++)
    for (int q = r + 1; q < size; q++) {
      const int *b = box + 6 * r, *c = box + 6 * q;
      int meet = 1;
      for (int a = 0; a < 3; a++) meet &= b[a] < c[3 + a] && c[a] < b[3 + a];
      if (meet)
        return hs__error(HS_ERR_ARG, "hs_decomp_create_boxes: the boxes of ranks %d "
                         "([%d,%d) x [%d,%d) x [%d,%d)) and %d ([%d,%d) x [%d,%d) x [%d,%d)) "
                         "overlap; each cell has at most one owner", r, b[0], b[3], b[1], b[4],
                         b[2], b[5], q, c[0], c[3], c[1], c[4], c[2], c[5]);
    }
  return HS_OK;
}

int hs_decomp_create_boxes(MPI_Comm comm, int ndims, const int global[], const int periodic[],
                           const int lo[], const int hi[], hs_decomp *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_decomp_create_boxes: out is NULL");
  *out = NULL;
  if (comm == MPI_COMM_NULL)
    return hs__error(HS_ERR_ARG, "hs_decomp_create_boxes: comm is MPI_COMM_NULL");
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int rc = hs__agree(comm, check_box(rank, ndims, global, periodic, lo, hi));
  if (rc != HS_OK) return rc;
  hs_decomp_desc same;
  hs__decomp_desc_axes(&same, ndims, global, NULL, periodic, 1);
  rc = hs__agree(comm, hs__decomp_check_same(comm, &same, same.procs));
  if (rc != HS_OK) return rc;
  hs_decomp d = calloc(1, sizeof *d);
  int *box = malloc((size_t)size * 6 * sizeof *box);
  rc = d && box ? gather_boxes(comm, ndims, lo, hi, size, box)
                : hs__error(HS_ERR_NOMEM, "hs_decomp_create_boxes: out of memory");
  int dup = rc == HS_OK && MPI_Comm_dup(comm, &d->comm) == MPI_SUCCESS;
  if (rc == HS_OK && !dup) rc = hs__error(HS_ERR_MPI, "hs_decomp_create_boxes: MPI_Comm_dup failed");
  rc = hs__agree(comm, rc);
  if (rc != HS_OK) {
    if (dup) MPI_Comm_free(&d->comm);
    free(d);
    free(box);
    return rc;
  }
  MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
  d->box = box;
  d->ndims = ndims;
  d->rank = rank;
  d->size = size;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    d->perm[a] = a;
    d->global[a] = same.global[a];
    d->periodic[a] = same.periodic[a];
    d->offset[a] = box[6 * rank + a];
    d->local[a] = box[6 * rank + 3 + a] - box[6 * rank + a];
  }
  *out = d;
  return HS_OK;
}

int hs_decomp_is_boxes(hs_decomp d) { return d ? d->box != NULL : -1; }
