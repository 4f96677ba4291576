/* C side of the haloswap_ra Fortran module (fortran/haloswap_ra.F90): the calls whose C
 * arguments Fortran cannot pass directly (communicators, strings, 1-based index lists). */
#include "haloswap_ra.h"
#include "hs_internal.h"

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

/* Fortran indices are 1-based. */
int hs_ra_f_set_targets(hs_ra ra, int n, const int *ranks, const int *indices1) {
  if (!ra || n < 0 || (n > 0 && (!ranks || !indices1)))
    return hs_ra_set_targets(ra, n, ranks, indices1); /* its own (collective) refusal */
  int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  int rc = hs__agree(hs_ra_comm(ra), idx ? HS_OK
                                         : hs__error(HS_ERR_NOMEM,
                                                     "haloswap_ra_set_targets: out of memory"));
  if (rc == HS_OK) {
    for (int k = 0; k < n; k++) idx[k] = indices1[k] - 1;
    rc = hs_ra_set_targets(ra, n, ranks, idx);
  }
  free(idx);
  return rc;
}
