/* The query of transport "cma" (cma.c): can this rank read its node neighbours' memory with
 * process_vm_readv? Each rank reads its node ring successor's probe word; the kernel's ptrace
 * rules (Yama), containers (seccomp, PID namespaces) and kernels without cross-memory attach
 * each give their own reason. */
#define _GNU_SOURCE
#include "hs_node.h"
#include "hs_transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

int hs__cma_query(MPI_Comm comm, char *why, size_t n);

/* Yama scope 1 lets a process read only its descendants unless it names a tracer; MPI ranks
 * are siblings, so each rank allows any process of its user (Open MPI's CMA does the same). */
static int allow_ptrace(char *why, size_t n, int *scope) {
  FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  *scope = -1; /* no Yama: classic ptrace rules (same user) */
  if (f && fscanf(f, "%d", scope) != 1) *scope = -1;
  if (f) fclose(f);
  if (*scope == 3) {
    snprintf(why, n, "kernel.yama.ptrace_scope is 3: cross-memory attach is disabled on this "
                     "machine until reboot");
    return HS_ERR_UNAVAILABLE;
  }
#ifdef PR_SET_PTRACER
  if (*scope == 1) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  return HS_OK;
}

static volatile uint64_t cma_probe;

/* Local part of the query: this rank reads its node ring successor's probe word. */
static int probe(MPI_Comm comm, char *why, size_t n) {
  int scope, rc = allow_ptrace(why, n, &scope), nr, ns;
  MPI_Comm node;
  if (hs__node_comm(comm, 0, &node) != HS_OK) {
    snprintf(why, n, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
    return HS_ERR_MPI;
  }
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  cma_probe = 0x636d610000000000ull ^ ((uint64_t)getpid() << 8) ^ (uint64_t)nr;
  uint64_t mine[3] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)&cma_probe, cma_probe};
  uint64_t *all = malloc((size_t)ns * sizeof mine);
  if (!all) {
    MPI_Comm_free(&node);
    snprintf(why, n, "out of memory");
    return HS_ERR_NOMEM;
  }
  /* Everyone has set its probe word before anyone reads (the allgather orders it). */
  MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, node);
  int j = (nr + 1) % ns;
  uint64_t got = 0;
  struct iovec l = {&got, sizeof got}, r = {(void *)(uintptr_t)all[3 * j + 1], sizeof got};
  ssize_t k = rc == HS_OK && ns > 1 ? process_vm_readv((pid_t)all[3 * j], &l, 1, &r, 1, 0) : 8;
  int err = errno;
  const char *hint = err == EPERM && scope == 2
                         ? " (kernel.yama.ptrace_scope is 2: only CAP_SYS_PTRACE may attach)"
                     : err == EPERM ? " (ranks of different users, or a container without "
                                      "CAP_SYS_PTRACE / with a seccomp profile that forbids it)"
                     : err == ENOSYS ? " (kernel without CONFIG_CROSS_MEMORY_ATTACH, or a "
                                       "seccomp filter: containers)"
                     : err == ESRCH ? " (no such process here: ranks in different PID "
                                      "namespaces, e.g. containers)"
                                    : "";
  if (k != (ssize_t)sizeof got) {
    snprintf(why, n, "process_vm_readv of node rank %d (pid %lld) by node rank %d failed: %s%s",
             j, (long long)all[3 * j], nr, k < 0 ? strerror(err) : "short read", hint);
    rc = HS_ERR_UNAVAILABLE;
  } else if (rc == HS_OK && ns > 1 && got != all[3 * j + 2]) {
    snprintf(why, n, "process_vm_readv of node rank %d (pid %lld) read another process's "
                     "memory (ranks in different PID namespaces, e.g. containers)",
             j, (long long)all[3 * j]);
    rc = HS_ERR_UNAVAILABLE;
  }
  free(all);
  MPI_Comm_free(&node);
  return rc;
}

/* Collective: the same status and reason on every rank (the lowest failing rank's). */
int hs__cma_query(MPI_Comm comm, char *why, size_t n) {
  char mine[256] = "";
  int rc = probe(comm, mine, sizeof mine);
  rc = hs__agree(comm, rc == HS_OK ? rc : hs__error(rc, "%s", mine));
  if (rc != HS_OK) snprintf(why, n, "%s", hs_error_message());
  return rc;
}
