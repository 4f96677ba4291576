/* C side of the haloswap_ra Fortran module (fortran/haloswap_ra.F90): the calls whose C
 * arguments Fortran cannot pass directly (communicators, strings, 1-based index lists). */
#include "haloswap_ra.h"
#include "hs_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_ra_f_create(MPI_Fint fcomm, const char *backend, int narrays, int capacity, int npeers,
                   const int *peers, hs_ra *out) {
  hs_ra_desc d;
  hs_ra_desc_init(&d);
  *out = NULL;
  MPI_Comm comm = MPI_Comm_f2c(fcomm);
  if (comm == MPI_COMM_NULL) return hs_ra_create(comm, &d, out); /* its own refusal */
  /* Every rank hears about a name one rank could not parse (no rank left in create). */
  int rc = hs__agree(comm, hs_ra_backend_parse(backend, &d.backend, &d.rma_sync));
  if (rc != HS_OK) return rc;
  d.narrays = narrays;
  d.capacity = capacity;
  d.npeers = npeers;
  d.peers = npeers > 0 ? peers : NULL;
  return hs_ra_create(comm, &d, out);
}

MPI_Fint hs_ra_f_comm(hs_ra ra) { return MPI_Comm_c2f(hs_ra_comm(ra)); }

/* Copies a NUL-terminated string into a Fortran buffer; returns its length. */
static int to_fortran(const char *s, char *buf, int len) {
  int n = (int)strlen(s);
  if (n > len) n = len;
  memcpy(buf, s, (size_t)n);
  return n;
}

int hs_ra_f_name(hs_ra ra, char *buf, int len) { return to_fortran(hs_ra_name(ra), buf, len); }

int hs_ra_f_backend_available(const char *name, char *why, int len, int *why_len) {
  char text[512] = "";
  int rc = hs_ra_backend_available(name, text, sizeof text);
  *why_len = to_fortran(text, why, len);
  return rc;
}

/* Arrays this layer has (hs_ra_local refuses the others). */
static int narrays_of(hs_ra ra) {
  int n = 0;
  while (n < HS_RA_MAX_ARRAYS && hs_ra_local(ra, n)) n++;
  return n;
}

/* Fortran indices are 1-based; refusals name them so. */
int hs_ra_f_set_targets(hs_ra ra, int n, int nindices, const int *ranks, const int *indices1) {
  if (!ra) return hs_ra_set_targets(ra, n, ranks, indices1); /* its own refusal */
  int size, rc = HS_OK;
  MPI_Comm_size(hs_ra_comm(ra), &size);
  if (n != nindices) {
    rc = hs__error(HS_ERR_ARG, "haloswap_ra_set_targets: size(ranks) = %d but size(indices) = %d",
                   n, nindices);
    n = 0;
  }
  for (int k = 0; k < n && rc == HS_OK; k++) {
    if (ranks[k] < 0 || ranks[k] >= size)
      rc = hs__error(HS_ERR_ARG, "haloswap_ra_set_targets: ranks(%d) = %d, must be in [0, %d)",
                     k + 1, ranks[k], size);
    else if (indices1[k] < 1 || indices1[k] > hs_ra_capacity(ra, ranks[k]))
      rc = hs__error(HS_ERR_ARG,
                     "haloswap_ra_set_targets: indices(%d) = %d on rank %d, must be in [1, %d]",
                     k + 1, indices1[k], ranks[k], hs_ra_capacity(ra, ranks[k]));
  }
  int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  if (!idx && rc == HS_OK) rc = hs__error(HS_ERR_NOMEM, "haloswap_ra_set_targets: out of memory");
  rc = hs__agree(hs_ra_comm(ra), rc);
  if (rc == HS_OK) {
    for (int k = 0; k < n; k++) idx[k] = indices1[k] - 1;
    rc = hs_ra_set_targets(ra, n, ranks, idx);
  }
  free(idx);
  return rc;
}

/* After a refused haloswap_ra_put/get: the refusal again, in Fortran's numbering. */
int hs_ra_f_explain(hs_ra ra, int get, int array1, int rank, int index1, int status) {
  const char *fn = get ? "haloswap_ra_get" : "haloswap_ra_put";
  if (!ra) return hs__error(status, "%s: the layer is not created (or freed)", fn);
  int size, na = narrays_of(ra);
  MPI_Comm_size(hs_ra_comm(ra), &size);
  if (array1 < 1 || array1 > na)
    return hs__error(status, "%s: array = %d, must be in [1, %d]", fn, array1, na);
  if (rank < 0 || rank >= size)
    return hs__error(status, "%s: rank = %d, must be in [0, %d)", fn, rank, size);
  int cap = hs_ra_capacity(ra, rank);
  if (index1 < 1 || index1 > cap)
    return hs__error(status, "%s: index = %d on rank %d, must be in [1, %d] (its capacity)", fn,
                     index1, rank, cap);
  if (status == HS_ERR_ARG)
    return hs__error(status,
                     "%s: element %d of array %d on rank %d was not declared with "
                     "haloswap_ra_set_targets (the p2p back end mirrors declared elements only)",
                     fn, index1, array1, rank);
  return status; /* not an argument problem: keep the layer's message */
}
