/* Cartesian decomposition of a 2D or 3D global grid: process grid, remainder rules, user
 * ranges, axis order, node placement (box decompositions: src/geometry/boxes.c). */
#include "hs_core.h"

#include <stdlib.h>
#include <string.h>

void hs_decomp_desc_init(hs_decomp_desc *desc) {
  memset(desc, 0, sizeof *desc);
  desc->ndims = 3;
  desc->procs[2] = 1;
  desc->periodic[0] = desc->periodic[1] = 1;
  desc->cart = MPI_COMM_NULL;
}

void hs__decomp_desc_axes(hs_decomp_desc *desc, int ndims, const int *global, const int *procs,
                          const int *periodic, int pad) {
  hs_decomp_desc_init(desc);
  desc->ndims = ndims;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    desc->global[a] = a < ndims ? global[a] : pad;
    desc->procs[a] = a < ndims && procs ? procs[a] : 0;
    desc->periodic[a] = a < ndims ? periodic[a] : 0;
  }
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
    if (d->procs[a] > size)
      return hs__error(HS_ERR_ARG, "hs_decomp_create: procs[%d] = %d exceeds the communicator "
                       "size %d", a, d->procs[a], size);
    procs[a] = d->procs[a];
    if (procs[a] > 0) fixed *= procs[a];
  }
  if (d->placement != HS_PLACE_RANK && d->placement != HS_PLACE_NODE)
    return hs__error(HS_ERR_ARG, "hs_decomp_create: placement = %d, must be HS_PLACE_RANK (0) "
                     "or HS_PLACE_NODE (1)", d->placement);
  if (d->node_size < 0 || (d->node_size > 0 && size % d->node_size != 0))
    return hs__error(HS_ERR_ARG, "hs_decomp_create: node_size = %d, must be 0 (nodes from "
                     "MPI_Comm_split_type) or divide the communicator size %d", d->node_size, size);
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

/* The arguments every rank must give identically (box decompositions check them too). */
int hs__decomp_check_same(MPI_Comm comm, const hs_decomp_desc *d, const int procs[HS_MAX_DIMS]) {
  int v[15] = {d->ndims};
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
  v[13] = d->placement;
  v[14] = d->node_size;
  int n = 15, lo[15], hi[15];
  MPI_Allreduce(v, lo, n, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(v, hi, n, MPI_INT, MPI_MAX, comm);
  static const char *names[] = {"ndims", "global[0]", "global[1]", "global[2]", "procs[0]",
                                "procs[1]", "procs[2]", "periodic[0]", "periodic[1]",
                                "periodic[2]", "remainder", "axis_order", "ranges",
                                "placement", "node_size"};
  for (int i = 0; i < n; i++)
    if (lo[i] != hi[i])
      return hs__error(HS_ERR_MISMATCH,
                       "hs_decomp_create: ranks disagree on %s (values from %d to %d)", names[i],
                       lo[i], hi[i]);
  return HS_OK;
}

/* Node-aware placement. Each node (a group of n ranks) takes a block b[0] x b[1] (x b[2]) of
 * the process grid, b[a] dividing procs[a], chosen to minimise the halo surface the block
 * exposes on decomposed axes; nodes are laid out over the grid of blocks in node order and
 * ranks inside a block in node-local rank order (both row-major, as MPI_Cart_create numbers
 * ranks). The result is a communicator whose rank order is that Cartesian order, so
 * MPI_Cart_create without reordering gives every node its block. When no block fits (nodes of
 * different sizes, or n does not tile the grid) *out stays MPI_COMM_NULL: rank order. */
static int place_on_nodes(MPI_Comm comm, const hs_decomp_desc *desc, const int procs[HS_MAX_DIMS],
                          int block[HS_MAX_DIMS], MPI_Comm *out) {
  int rank, size, nd = desc->ndims;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int node = 0, lrank = 0, n = 0, nodes = 0, nmin = 0, nmax = 0;
  if (desc->node_size > 0) {
    n = desc->node_size;
    node = rank / n;
    lrank = rank % n;
    nodes = size / n;
    nmin = nmax = n;
  } else {
    MPI_Comm shared, leaders;
    int rc = hs__node_comm(comm, 0, &shared);
    if (rc != HS_OK) return rc;
    MPI_Comm_rank(shared, &lrank);
    MPI_Comm_size(shared, &n);
    /* Node index: rank of the node's first rank among all first ranks. */
    HS_MPI(MPI_Comm_split(comm, lrank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders));
    if (lrank == 0) {
      MPI_Comm_rank(leaders, &node);
      MPI_Comm_size(leaders, &nodes);
      MPI_Comm_free(&leaders);
    }
    int nn[2] = {node, nodes};
    HS_MPI(MPI_Bcast(nn, 2, MPI_INT, 0, shared));
    node = nn[0];
    nodes = nn[1];
    MPI_Comm_free(&shared);
    HS_MPI(MPI_Allreduce(&n, &nmin, 1, MPI_INT, MPI_MIN, comm));
    HS_MPI(MPI_Allreduce(&n, &nmax, 1, MPI_INT, MPI_MAX, comm));
  }
  for (int a = 0; a < HS_MAX_DIMS; a++) block[a] = 0;
  if (nmin != nmax || nodes < 2) return HS_OK; /* uneven nodes, or one node: nothing to gain */
  /* Halo area per rank face across axis a ~ product of the local extents on the other axes. */
  double face[HS_MAX_DIMS];
  for (int a = 0; a < nd; a++) {
    face[a] = 1.0;
    for (int o = 0; o < nd; o++)
      if (o != a) face[a] *= (double)desc->global[o] / procs[o];
  }
  int best[HS_MAX_DIMS] = {0, 0, 0}, b[HS_MAX_DIMS] = {1, 1, 1};
  double best_cost = -1.0;
  for (b[0] = 1; b[0] <= procs[0]; b[0]++) {
    if (procs[0] % b[0] || n % b[0]) continue;
    for (b[1] = 1; b[1] <= procs[1]; b[1]++) {
      if (procs[1] % b[1] || (n / b[0]) % b[1]) continue;
      b[2] = nd > 2 ? n / (b[0] * b[1]) : 1;
      if (b[0] * b[1] * b[2] != n || (nd > 2 && procs[2] % b[2])) continue;
      /* Inter-node halo cells of one block: faces on axes the block does not span whole. */
      double cost = 0.0;
      for (int a = 0; a < nd; a++)
        if (b[a] < procs[a]) cost += (double)(n / b[a]) * face[a];
      if (best_cost < 0.0 || cost < best_cost - 1e-9) {
        best_cost = cost;
        memcpy(best, b, sizeof best);
      }
    }
  }
  if (best_cost < 0.0) return HS_OK;
  int nb[HS_MAX_DIMS] = {1, 1, 1}, bc[HS_MAX_DIMS] = {0, 0, 0}, lc[HS_MAX_DIMS] = {0, 0, 0};
  for (int a = 0; a < nd; a++) nb[a] = procs[a] / best[a];
  /* Row-major (last axis fastest) coordinates of the node in the block grid and of the rank in
   * its block; the Cartesian rank of the sum is this rank's new position. */
  for (int a = nd - 1, k = node, l = lrank; a >= 0; a--) {
    bc[a] = k % nb[a];
    k /= nb[a];
    lc[a] = l % best[a];
    l /= best[a];
  }
  int key = 0;
  for (int a = 0; a < nd; a++) key = key * procs[a] + bc[a] * best[a] + lc[a];
  HS_MPI(MPI_Comm_split(comm, 0, key, out));
  for (int a = 0; a < HS_MAX_DIMS; a++) block[a] = a < nd ? best[a] : 1;
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
  rc = hs__agree(base, hs__decomp_check_same(base, &desc, procs));
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
  /* Node blocks are chosen over the Cartesian dimensions, then reported per grid axis. */
  MPI_Comm placed = MPI_COMM_NULL;
  if (desc.cart == MPI_COMM_NULL && desc.placement == HS_PLACE_NODE) {
    int block[HS_MAX_DIMS] = {0, 0, 0};
    rc = hs__agree(comm, place_on_nodes(comm, &desc, cdims, block, &placed));
    if (rc != HS_OK) {
      free(d);
      return rc;
    }
    for (int k = 0; k < HS_MAX_DIMS; k++) d->place_block[perm[k]] = block[k];
  }
  if (desc.cart != MPI_COMM_NULL)
    mpirc = MPI_Comm_dup(desc.cart, &d->comm);
  else
    mpirc = MPI_Cart_create(placed != MPI_COMM_NULL ? placed : comm, d->ndims, cdims, cper, 0,
                            &d->comm);
  if (placed != MPI_COMM_NULL) MPI_Comm_free(&placed);
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
  free((*d)->box);
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

int hs_decomp_placement(hs_decomp d, int block[HS_MAX_DIMS]) {
  if (!d) return -1;
  if (block)
    for (int a = 0; a < HS_MAX_DIMS; a++) block[a] = d->place_block[a] ? d->place_block[a] : 1;
  return d->place_block[0] ? HS_PLACE_NODE : HS_PLACE_RANK;
}
