/* Errors during a swap (docs/design.md, "Errors during a swap"): a rank whose swap fails
 * still takes part in the round with a flag in place of its data, so no neighbour waits for
 * data that never comes; the failure's text goes to each out-peer by a message of its own,
 * and every rank that saw a flag returns the same error. */
#include "hs_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hs__fail_seen(hs_plan p, int rank) {
  hs_failure f;
  memset(&f, 0, sizeof f);
  int mrc = MPI_Recv(&f, (int)sizeof f, MPI_BYTE, rank, HS_TAG_FAILTEXT, p->comm,
                     MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS) { /* the flag alone: still a failure, named by its sender */
    f.code = HS_ERR_MPI;
    f.origin = rank;
    snprintf(f.msg, sizeof f.msg, "rank %d: its swap failed (its message was lost)", rank);
  }
  f.msg[sizeof f.msg - 1] = 0;
  if (!p->core->round_flagged || f.origin < p->core->round_in.origin) p->core->round_in = f;
  p->core->round_flagged = true;
}

char *hs__fail_scratch(hs_plan p, size_t bytes) {
  if (bytes > p->core->fail_scratch_bytes) {
    char *b = realloc(p->core->fail_scratch, bytes);
    if (!b) return NULL;
    p->core->fail_scratch = b;
    p->core->fail_scratch_bytes = bytes;
  }
  return p->core->fail_scratch ? p->core->fail_scratch : (p->core->fail_scratch = malloc(1));
}

int hs__fail_record(hs_plan p, int code) {
  if (!p->core->failed) {
    const char *m = hs_error_message();
    p->core->failure.code = code;
    p->core->failure.origin = p->rank;
    if (strncmp(m, "rank ", 5) == 0)
      snprintf(p->core->failure.msg, sizeof p->core->failure.msg, "%s", m);
    else
      snprintf(p->core->failure.msg, sizeof p->core->failure.msg, "rank %d: %.1000s", p->rank, m);
    p->core->failed = true;
  }
  return code;
}

void hs__fail_adopt(hs_plan p, const hs_plan from) {
  if (p->core->failed) return;
  p->core->failure = from->core->failure;
  p->core->failed = true;
}

int hs__fail_texts_begin(hs_plan p, int reverse, MPI_Request **reqs, int *n) {
  *n = 0;
  *reqs = malloc((size_t)(p->npeers > 0 ? p->npeers : 1) * sizeof **reqs);
  if (!*reqs) return hs__error(HS_ERR_NOMEM, "out of memory sending a swap's failure");
  for (int k = 0; k < p->npeers; k++)
    if ((reverse ? p->peers[k].recv_bytes : p->peers[k].send_bytes) &&
        MPI_Isend(&p->core->failure, (int)sizeof p->core->failure, MPI_BYTE, p->peers[k].rank,
                  HS_TAG_FAILTEXT, p->comm, &(*reqs)[*n]) == MPI_SUCCESS)
      (*n)++;
  return HS_OK;
}

void hs__fail_texts_end(MPI_Request *reqs, int n) {
  if (n) MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
  free(reqs);
}

int hs__fail_error(hs_plan p) {
  hs__error(p->core->failure.code, "%s", p->core->failure.msg);
  return p->core->failure.code;
}

void hs__fail_free(hs_plan p) {
  free(p->core->fail_scratch);
  free(p->core->round_arrays);
  p->core->fail_scratch = NULL;
  p->core->round_arrays = NULL;
}
