/* Error messages and collective agreement on errors. */
#include "hs_core.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HS_MSG_LEN 1024
static _Thread_local char hs_msg[HS_MSG_LEN];

const char *hs_error_message(void) { return hs_msg; }

const char *hs_status_name(int status) {
  switch (status) {
  case HS_OK: return "HS_OK";
  case HS_ERR_ARG: return "HS_ERR_ARG";
  case HS_ERR_MISMATCH: return "HS_ERR_MISMATCH";
  case HS_ERR_STATE: return "HS_ERR_STATE";
  case HS_ERR_NOMEM: return "HS_ERR_NOMEM";
  case HS_ERR_MPI: return "HS_ERR_MPI";
  case HS_ERR_UNAVAILABLE: return "HS_ERR_UNAVAILABLE";
  case HS_ERR_INTERNAL: return "HS_ERR_INTERNAL";
  default: return "HS_ERR_UNKNOWN";
  }
}

int hs__error(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(hs_msg, sizeof hs_msg, fmt, ap);
  va_end(ap);
  return code;
}

int hs__mpi_error(int mpierr, const char *what) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpierr, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "code %d", mpierr);
  return hs__error(HS_ERR_MPI, "MPI call failed: %s: %s", what, s);
}

int hs__agree(MPI_Comm comm, int local) {
  int me, first, key;
  MPI_Comm_rank(comm, &me);
  key = (local != HS_OK) ? me : INT_MAX;
  if (MPI_Allreduce(&key, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    return hs__error(HS_ERR_MPI, "MPI_Allreduce failed while agreeing on an error");
  if (first == INT_MAX) return HS_OK;
  struct {
    int code;
    char msg[HS_MSG_LEN];
  } m;
  memset(&m, 0, sizeof m);
  if (me == first) {
    m.code = local;
    snprintf(m.msg, sizeof m.msg, "%s", hs_msg);
  }
  if (MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm) != MPI_SUCCESS)
    return hs__error(HS_ERR_MPI, "MPI_Bcast failed while agreeing on an error");
  if (strncmp(m.msg, "rank ", 5) == 0)
    snprintf(hs_msg, sizeof hs_msg, "%s", m.msg);
  else
    snprintf(hs_msg, sizeof hs_msg, "rank %d: %.1000s", first, m.msg);
  return m.code;
}

void *hs__calloc_agreed(MPI_Comm comm, size_t size, const char *nomem, int *rc) {
  void *p = *rc == HS_OK ? calloc(1, size) : NULL;
  if (*rc == HS_OK && !p) *rc = hs__error(HS_ERR_NOMEM, "%s", nomem);
  *rc = hs__agree(comm, *rc);
  if (*rc == HS_OK) return p;
  free(p);
  return NULL;
}

double hs__wtime(void) { return MPI_Wtime(); }
