/* Cartesian decomposition of a 2D or 3D global grid (MONC's block rule for uneven splits). */
#include "hs_internal.h"

#include <stdlib.h>
#include <string.h>

void hs_decomp_desc_init(hs_decomp_desc *desc) {
  memset(desc, 0, sizeof *desc);
  desc->ndims = 3;
  desc->procs[2] = 1;
  desc->periodic[0] = desc->periodic[1] = 1;
  desc->cart = MPI_COMM_NULL;
}

/* perm[k] = axis_order[k], or the identity when axis_order is all zero. */
static int axis_perm(const hs_decomp_desc *d, int perm[HS_MAX_DIMS]) {
  int any = 0, seen = 0;
  for (int k = 0; k < HS_MAX_DIMS; k++) {
    perm[k] = k;
    any |= d->axis_order[k] != 0;
  }
  if (!any) return HS_OK;
  for (int k = 0; k < d->ndims; k++) {
    int a = d->axis_order[k];
    if (a < 0 || a >= d->ndims || (seen & (1 << a)))
      return hs__error(HS_ERR_ARG,
                       "hs_decomp_create: axis_order = {%d, %d, %d} is not an order of the %d "
                       "axes (each of 0..%d once)",
                       d->axis_order[0], d->axis_order[1], d->axis_order[2], d->ndims,
                       d->ndims - 1);
    seen |= 1 << a;
    perm[k] = a;
  }
  return HS_OK;
}

/* User-given ranges: procs[a] entries >= 1 summing to global[a]. */
static int check_ranges(const hs_decomp_desc *d, const int procs[HS_MAX_DIMS]) {
  if (d->remainder != HS_REMAINDER_LOW && d->remainder != HS_REMAINDER_HIGH)
    return hs__error(HS_ERR_ARG, "hs_decomp_create: remainder = %d is not an hs_remainder",
                     d->remainder);
  for (int a = 0; a < d->ndims; a++) {
    if (!d->ranges[a]) continue;
    if (d->procs[a] < 1)
      return hs__error(HS_ERR_ARG, "hs_decomp_create: ranges[%d] given but procs[%d] = %d; give "
                                   "the rank count of an axis whose ranges you give", a, a,
                       d->procs[a]);
    long sum = 0;
    for (int i = 0; i < procs[a]; i++) {
      if (d->ranges[a][i] < 1)
        return hs__error(HS_ERR_ARG, "hs_decomp_create: ranges[%d][%d] = %d, must be >= 1", a,
                         i, d->ranges[a][i]);
      sum += d->ranges[a][i];
    }
    if (sum != d->global[a])
      return hs__error(HS_ERR_ARG,
                       "hs_decomp_create: ranges[%d] (%d entries, one per rank on axis %d) sum "
                       "to %ld, but global[%d] = %d",
                       a, procs[a], a, sum, a, d->global[a]);
  }
  return HS_OK;
}

int hs__cart_rank(const hs_decomp d, const int c[HS_MAX_DIMS]) {
  int cc[HS_MAX_DIMS] = {0, 0, 0}, r = MPI_PROC_NULL;
  for (int k = 0; k < d->ndims; k++) cc[k] = c[d->perm[k]];
  MPI_Cart_rank(d->comm, cc, &r);
  return r;
}

/* Local checks of a decomposition description; size is the communicator size. */
static int check_desc(const hs_decomp_desc *d, int size, int procs[HS_MAX_DIMS]) {
  if (d->ndims < 2 || d->ndims > 3)
    return hs__error(HS_ERR_ARG, "hs_decomp_create: ndims = %d, must be 2 or 3", d->ndims);
  int fixed = 1;
  for (int a = 0; a < d->ndims; a++) {
    if (d->global[a] < 1)
      return hs__error(HS_ERR_ARG, "hs_decomp_create: global[%d] = %d, must be >= 1", a,
                       d->global[a]);
    if (d->procs[a] < 0)
      return hs__error(HS_ERR_ARG, "hs_decomp_create: procs[%d] = %d, must be >= 0", a,
                       d->procs[a]);
    if (d->periodic[a] != 0 && d->periodic[a] != 1)
      return hs__error(HS_ERR_ARG, "hs_decomp_create: periodic[%d] = %d, must be 0 or 1", a,
                       d->periodic[a]);
    procs[a] = d->procs[a];
    if (procs[a] > 0) fixed *= procs[a];
  }
  if (fixed < 1 || size % fixed != 0) {
    return hs__error(HS_ERR_ARG,
                     "hs_decomp_create: the fixed process counts procs = %d x %d x %d multiply "
                     "to %d, which does not divide the communicator size %d",
                     procs[0], procs[1], d->ndims > 2 ? procs[2] : 1, fixed, size);
  }
  if (MPI_Dims_create(size, d->ndims, procs) != MPI_SUCCESS)
    return hs__error(HS_ERR_ARG, "hs_decomp_create: MPI_Dims_create failed for %d ranks", size);
  long prod = 1;
  for (int a = 0; a < d->ndims; a++) prod *= procs[a];
  if (prod != size)
    return hs__error(HS_ERR_ARG,
                     "hs_decomp_create: process grid %d x %d x %d has %ld ranks but the "
                     "communicator has %d",
                     procs[0], procs[1], d->ndims > 2 ? procs[2] : 1, prod, size);
  for (int a = 0; a < d->ndims; a++)
    if (procs[a] > d->global[a])
      return hs__error(HS_ERR_ARG,
                       "hs_decomp_create: procs[%d] = %d exceeds global[%d] = %d: every rank "
                       "needs at least one point",
                       a, procs[a], a, d->global[a]);
  return HS_OK;
}

/* The arguments every rank must give identically. */
static int check_same(MPI_Comm comm, const hs_decomp_desc *d, const int procs[HS_MAX_DIMS]) {
  int v[13] = {d->ndims};
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    v[1 + a] = d->global[a];
    v[4 + a] = d->procs[a];
    v[7 + a] = d->periodic[a];
  }
  unsigned h = 0;
  for (int a = 0; a < d->ndims; a++)
    for (int i = 0; d->ranges[a] && i < procs[a]; i++) h = h * 31u + (unsigned)d->ranges[a][i] + 1u;
  v[10] = d->remainder;
  v[11] = d->axis_order[0] * 9 + d->axis_order[1] * 3 + d->axis_order[2];
  v[12] = (int)(h & 0x7fffffff);
  int n = 13, lo[13], hi[13];
  MPI_Allreduce(v, lo, n, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(v, hi, n, MPI_INT, MPI_MAX, comm);
  static const char *names[] = {"ndims", "global[0]", "global[1]", "global[2]", "procs[0]",
                                "procs[1]", "procs[2]", "periodic[0]", "periodic[1]",
                                "periodic[2]", "remainder", "axis_order", "ranges"};
  for (int i = 0; i < n; i++)
    if (lo[i] != hi[i])
      return hs__error(HS_ERR_MISMATCH,
                       "hs_decomp_create: ranks disagree on %s (values from %d to %d)", names[i],
                       lo[i], hi[i]);
  return HS_OK;
}

int hs_decomp_create(MPI_Comm comm, const hs_decomp_desc *desc_in, hs_decomp *out) {
  if (!out) return hs__error(HS_ERR_ARG, "hs_decomp_create: out is NULL");
  *out = NULL;
  if (!desc_in) return hs__error(HS_ERR_ARG, "hs_decomp_create: desc is NULL");
  hs_decomp_desc desc = *desc_in;
  MPI_Comm base = desc.cart != MPI_COMM_NULL ? desc.cart : comm;
  if (base == MPI_COMM_NULL) return hs__error(HS_ERR_ARG, "hs_decomp_create: comm is MPI_COMM_NULL");
  int size, rc = HS_OK, perm[HS_MAX_DIMS];
  MPI_Comm_size(base, &size);
  if (desc.ndims >= 2 && desc.ndims <= 3) rc = axis_perm(&desc, perm);

  if (rc == HS_OK && desc.cart != MPI_COMM_NULL) {
    /* Take process counts and periodicity from the caller's Cartesian communicator. */
    int topo = MPI_UNDEFINED, nd = 0;
    MPI_Topo_test(desc.cart, &topo);
    if (topo != MPI_CART) {
      rc = hs__error(HS_ERR_ARG, "hs_decomp_create: cart is not a Cartesian communicator");
    } else {
      MPI_Cartdim_get(desc.cart, &nd);
      if (nd != desc.ndims) {
        rc = hs__error(HS_ERR_ARG,
                       "hs_decomp_create: cart has %d dimensions but ndims = %d", nd, desc.ndims);
      } else {
        int dims[HS_MAX_DIMS], per[HS_MAX_DIMS], crd[HS_MAX_DIMS];
        MPI_Cart_get(desc.cart, nd, dims, per, crd);
        for (int k = 0; k < nd && rc == HS_OK; k++) {
          int a = perm[k]; /* cart dimension k is grid axis a */
          if (desc.procs[a] != 0 && desc.procs[a] != dims[k])
            rc = hs__error(HS_ERR_ARG,
                           "hs_decomp_create: procs[%d] = %d but cart has %d ranks on axis %d", a,
                           desc.procs[a], dims[k], a);
          desc.procs[a] = dims[k];
          desc.periodic[a] = per[k] ? 1 : 0;
        }
      }
    }
  }
  int procs[HS_MAX_DIMS] = {1, 1, 1};
  if (rc == HS_OK) rc = check_desc(&desc, size, procs);
  if (rc == HS_OK) rc = check_ranges(&desc, procs);
  rc = hs__agree(base, rc);
  if (rc != HS_OK) return rc;
  rc = hs__agree(base, check_same(base, &desc, procs));
  if (rc != HS_OK) return rc;

  hs_decomp d = calloc(1, sizeof *d);
  if (!d) rc = hs__error(HS_ERR_NOMEM, "hs_decomp_create: out of memory");
  rc = hs__agree(base, rc);
  if (rc != HS_OK) {
    free(d);
    return rc;
  }
  d->ndims = desc.ndims;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    d->global[a] = a < d->ndims ? desc.global[a] : 1;
    d->procs[a] = a < d->ndims ? procs[a] : 1;
    d->periodic[a] = a < d->ndims ? desc.periodic[a] : 0;
  }
  int mpirc, cdims[HS_MAX_DIMS], cper[HS_MAX_DIMS];
  for (int k = 0; k < HS_MAX_DIMS; k++) {
    d->perm[k] = perm[k];
    cdims[k] = d->procs[perm[k]];
    cper[k] = d->periodic[perm[k]];
  }
  if (desc.cart != MPI_COMM_NULL)
    mpirc = MPI_Comm_dup(desc.cart, &d->comm);
  else
    mpirc = MPI_Cart_create(comm, d->ndims, cdims, cper, 0, &d->comm);
  if (mpirc != MPI_SUCCESS) {
    free(d);
    return hs__mpi_error(mpirc, "creating the Cartesian communicator");
  }
  MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(d->comm, &d->rank);
  MPI_Comm_size(d->comm, &d->size);
  int crd[HS_MAX_DIMS] = {0, 0, 0};
  MPI_Cart_coords(d->comm, d->rank, d->ndims, crd);
  for (int k = 0; k < d->ndims; k++) d->coord[perm[k]] = crd[k];
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    int n = d->global[a], P = d->procs[a], c = a < d->ndims ? d->coord[a] : 0;
    int q = n / P, rem = n % P;
    d->coord[a] = c;
    if (a < d->ndims && desc.ranges[a]) {
      d->local[a] = desc.ranges[a][c];
      d->offset[a] = 0;
      for (int i = 0; i < c; i++) d->offset[a] += desc.ranges[a][i];
    } else if (desc.remainder == HS_REMAINDER_HIGH) { /* the last `rem` ranks get q + 1 */
      int first = P - rem;
      d->local[a] = q + (c >= first ? 1 : 0);
      d->offset[a] = c * q + (c > first ? c - first : 0);
    } else {
      d->local[a] = q + (c < rem ? 1 : 0);
      d->offset[a] = c * q + (c < rem ? c : rem);
    }
  }
  *out = d;
  return HS_OK;
}

int hs_decomp_free(hs_decomp *d) {
  if (!d || !*d) return HS_OK;
  MPI_Comm_free(&(*d)->comm);
  free(*d);
  *d = NULL;
  return HS_OK;
}

#define AXIS_OK(d, a) ((d) && (a) >= 0 && (a) < HS_MAX_DIMS)
int hs_decomp_ndims(hs_decomp d) { return d ? d->ndims : -1; }
int hs_decomp_local_extent(hs_decomp d, int a) { return AXIS_OK(d, a) ? d->local[a] : -1; }
int hs_decomp_global_offset(hs_decomp d, int a) { return AXIS_OK(d, a) ? d->offset[a] : -1; }
int hs_decomp_global_extent(hs_decomp d, int a) { return AXIS_OK(d, a) ? d->global[a] : -1; }
int hs_decomp_procs(hs_decomp d, int a) { return AXIS_OK(d, a) ? d->procs[a] : -1; }
int hs_decomp_coord(hs_decomp d, int a) { return AXIS_OK(d, a) ? d->coord[a] : -1; }
int hs_decomp_periodic(hs_decomp d, int a) { return AXIS_OK(d, a) ? d->periodic[a] : -1; }
MPI_Comm hs_decomp_comm(hs_decomp d) { return d ? d->comm : MPI_COMM_NULL; }
