/* Transport "shmem": OpenSHMEM (Open MPI's OSHMEM) in an MPI program. Each rank packs a
 * peer's message and shmem_putmem's it into the peer's symmetric receive buffer, then sets
 * the peer's per-sender flag (shmem_putmem_signal where the header has OpenSHMEM 1.5 signals,
 * else put, shmem_fence, flag put); the receiver polls its flags, unpacks, and returns an
 * acknowledgement flag. Receive buffers are doubled (swap s uses half s % 2), so a sender
 * only needs the acknowledgement of swap s-2 before it overwrites a half; if that has not
 * arrived when start runs, the put is deferred to complete (start never waits).
 *
 * OpenSHMEM is started by the first query, through the runtime shared with the remote access
 * layer (src/core/hs_shmem_runtime.h: one shmem_init, one shmem_finalize); PE numbers must
 * equal MPI_COMM_WORLD ranks and the plan must span MPI_COMM_WORLD (shmem_malloc is
 * collective over all PEs). The query reports the transport unusable unless HALOSWAP_SHMEM=1:
 * with Open MPI 4.1.4 the job must also run with OMPI_MCA_osc=^rdma (or under oshrun with
 * --mca osc ^rdma), or every process crashes in shmem_finalize, so a program opts in
 * explicitly. The shared runtime finalises OSHMEM at the start of MPI_Finalize, while MPI
 * still works (docs/shmem-nbr.md). */
#define _POSIX_C_SOURCE 200809L
#include "hs_pack.h"
#include "hs_transport.h"
#include "hs_shmem_runtime.h"

#include <sched.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SHMEM_SIGNAL_SET)
#define SHMEMT_HAVE_SIGNAL 1
#else
#define SHMEMT_HAVE_SIGNAL 0
#endif

typedef struct {
  int pe;
  int its_slot;          /* my index in the peer's peer list: where my flags live there */
  size_t its_off;        /* offset of my slot in the peer's receive buffer */
  size_t my_off;         /* offset of the peer's slot in my receive buffer */
  size_t soff;           /* offset of this peer's message in my send buffer */
  int send_pending;
  int recv_pending;
} shmemt_peer;

typedef struct {
  shmemt_peer *pk;
  char *rbuf;            /* symmetric: 2 halves of rhalf bytes */
  uint64_t *ready;       /* symmetric: [maxpeers] swap number whose data is in my buffer */
  uint64_t *ack;         /* symmetric: [maxpeers] swap number the peer has unpacked */
  size_t rhalf;
  size_t sym_bytes;      /* symmetric heap bytes held */
  char *sbuf;
  size_t sbytes;
  uint64_t seq;
} shmemt_t;

static int shmemt_query(MPI_Comm comm, char *why, size_t n) {
  const char *env = getenv("HALOSWAP_SHMEM");
  int ok = env && !strcmp(env, "1");
  int wsize, csize, wrank, all = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(comm, &csize);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all) {
    snprintf(why, n, "set HALOSWAP_SHMEM=1 to use it (with Open MPI 4.1.4 also "
                     "OMPI_MCA_osc=^rdma, or shmem_finalize crashes)");
    return HS_ERR_UNAVAILABLE;
  }
  if (csize != wsize) {
    snprintf(why, n, "the communicator has %d ranks; OpenSHMEM needs all %d ranks of "
                     "MPI_COMM_WORLD (shmem_malloc is collective over every PE)",
             csize, wsize);
    return HS_ERR_UNAVAILABLE;
  }
  /* Starts OpenSHMEM once per process; a plan's own reference is taken in setup. */
  int rc = hs__shmem_acquire(why, n);
  if (rc != HS_OK) return rc;
  hs__shmem_release();
  ok = shmem_n_pes() == wsize && shmem_my_pe() == wrank;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all) {
    snprintf(why, n, "OpenSHMEM PE numbers do not match MPI_COMM_WORLD ranks (this rank: PE "
                     "%d of %d, world rank %d of %d)",
             shmem_my_pe(), shmem_n_pes(), wrank, wsize);
    return HS_ERR_UNAVAILABLE;
  }
  return HS_OK;
}

static int shmemt_setup(hs_plan p) {
  shmemt_t *t = hs__impl_new(p, sizeof *t);
  if (!t) return HS_ERR_NOMEM;
  hs__shmem_acquire(NULL, 0); /* cannot fail after query; released in destroy */
  int np = p->npeers;
  t->pk = hs__calloc(p, (size_t)(np > 0 ? np : 1) * sizeof(shmemt_peer));
  if (!t->pk) return hs__error(HS_ERR_NOMEM, "shmem: out of memory");
  size_t rtot = 0;
  for (int k = 0; k < np; k++) {
    t->pk[k].my_off = rtot;
    rtot += p->peers[k].recv_bytes;
    t->pk[k].soff = t->sbytes;
    t->sbytes += p->peers[k].send_bytes;
  }
  t->sbuf = hs__malloc(p, t->sbytes);
  int rc = t->sbuf ? HS_OK : hs__error(HS_ERR_NOMEM, "shmem: out of memory");
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) return rc;
  /* Symmetric sizes: the largest over all ranks. */
  unsigned long long mine[2] = {rtot, (unsigned long long)np}, mx[2];
  HS_MPI(MPI_Allreduce(mine, mx, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, p->comm));
  t->rhalf = (size_t)(mx[0] + 63) / 64 * 64;
  size_t maxp = (size_t)(mx[1] > 0 ? mx[1] : 1);
  t->rbuf = shmem_malloc(2 * t->rhalf > 0 ? 2 * t->rhalf : 64);
  t->ready = shmem_malloc(maxp * sizeof(uint64_t));
  t->ack = shmem_malloc(maxp * sizeof(uint64_t));
  rc = (t->rbuf && t->ready && t->ack)
           ? HS_OK
           : hs__error(HS_ERR_NOMEM, "shmem: shmem_malloc of %zu bytes failed (symmetric heap "
                                     "too small? set SHMEM_SYMMETRIC_SIZE)",
                       2 * t->rhalf);
  rc = hs__agree(p->comm, rc);
  if (rc != HS_OK) return rc;
  t->sym_bytes = 2 * t->rhalf + 2 * maxp * sizeof(uint64_t);
  hs__account(p, (int64_t)t->sym_bytes);
  memset(t->ready, 0, maxp * sizeof(uint64_t));
  memset(t->ack, 0, maxp * sizeof(uint64_t));
  /* Where do I live in each peer's buffers? Ask the peer (MPI, once). */
  MPI_Group gp, gw;
  MPI_Comm_group(p->comm, &gp);
  MPI_Comm_group(MPI_COMM_WORLD, &gw);
  MPI_Request *rq = malloc((size_t)(4 * np + 1) * sizeof *rq);
  uint64_t *out = malloc((size_t)(2 * np + 1) * sizeof *out);
  uint64_t *in = malloc((size_t)(2 * np + 1) * sizeof *in);
  rc = (rq && out && in) ? HS_OK : hs__error(HS_ERR_NOMEM, "shmem: out of memory");
  rc = hs__agree(p->comm, rc);
  if (rc == HS_OK) {
    int nq = 0;
    for (int k = 0; k < np; k++) {
      int r = p->peers[k].rank;
      MPI_Group_translate_ranks(gp, 1, &r, gw, &t->pk[k].pe);
      out[2 * k] = (uint64_t)k;
      out[2 * k + 1] = t->pk[k].my_off;
      MPI_Irecv(&in[2 * k], 2, MPI_UINT64_T, r, HS_TAG_SETUP, p->comm, &rq[nq++]);
      MPI_Isend(&out[2 * k], 2, MPI_UINT64_T, r, HS_TAG_SETUP, p->comm, &rq[nq++]);
    }
    int mrc = MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE);
    if (mrc != MPI_SUCCESS) rc = hs__mpi_error(mrc, "MPI_Waitall (shmem setup)");
    for (int k = 0; rc == HS_OK && k < np; k++) {
      t->pk[k].its_slot = (int)in[2 * k];
      t->pk[k].its_off = (size_t)in[2 * k + 1];
    }
  }
  MPI_Group_free(&gp);
  MPI_Group_free(&gw);
  free(rq);
  free(out);
  free(in);
  rc = hs__agree(p->comm, rc);
  /* Flags zeroed everywhere before anybody can put one. */
  shmem_barrier_all();
  return rc;
}

/* The value a sender raises a flag to for swap seq: seq * 2, + 1 when its swap failed
 * (docs/design.md, "Errors during a swap"): the receiver's test (>= seq * 2) sees both, and
 * an old failure flag never passes for a later swap. */
#define FLAG(seq, failed) (((seq) << 1) | (uint64_t)((failed) ? 1 : 0))

/* Put my message for peer k of swap seq into its receive buffer and raise its flag. In a
 * failed round only the flag goes, with its failure bit. */
static void put_peer(hs_plan p, shmemt_t *t, int k, void *const *arrays) {
  shmemt_peer *q = &t->pk[k];
  const hs_peer *pe = &p->peers[k];
  if (hs__failed_round(p)) {
    shmem_uint64_p(&t->ready[q->its_slot], FLAG(t->seq, 1), q->pe);
    q->send_pending = 0;
    return;
  }
  char *src = t->sbuf + q->soff;
  hs__pack_peer(p, pe, arrays, src);
  char *dst = t->rbuf + (t->seq % 2) * t->rhalf + q->its_off;
#if SHMEMT_HAVE_SIGNAL
  shmem_putmem_signal(dst, src, pe->send_bytes, &t->ready[q->its_slot], FLAG(t->seq, 0),
                      SHMEM_SIGNAL_SET, q->pe);
#else
  shmem_putmem(dst, src, pe->send_bytes, q->pe);
  shmem_fence(); /* the data before the flag */
  shmem_uint64_p(&t->ready[q->its_slot], FLAG(t->seq, 0), q->pe);
#endif
  q->send_pending = 0;
}

/* The half I am about to write was read by the peer two swaps ago. A failure flag, which
 * writes no half, waits until the peer has read the previous swap's flag instead: a later
 * flag overwrites an earlier one, and a failure must not be read as the swap before's. */
static int may_put(hs_plan p, shmemt_t *t, int k) {
  if (hs__failed_round(p)) return t->seq < 2 || shmem_uint64_test(&t->ack[k], SHMEM_CMP_GE, t->seq - 1);
  return t->seq < 3 || shmem_uint64_test(&t->ack[k], SHMEM_CMP_GE, t->seq - 2);
}

static int shmemt_start(hs_plan p, void *const *arrays) {
  shmemt_t *t = p->impl;
  t->seq++;
  for (int k = 0; k < p->npeers; k++) {
    t->pk[k].recv_pending = p->peers[k].recv_bytes > 0;
    t->pk[k].send_pending = p->peers[k].send_bytes > 0;
    if (t->pk[k].send_pending && may_put(p, t, k)) put_peer(p, t, k, arrays);
  }
  return HS_OK;
}

/* One pass over the peers without waiting: the deferred puts whose half is free, the
 * messages whose flags are up. Returns what is left; *progressed: something moved. */
static int shmemt_pass(hs_plan p, shmemt_t *t, void *const *arrays, int *progressed) {
  int left = 0;
  *progressed = 0;
  for (int k = 0; k < p->npeers; k++) {
    shmemt_peer *q = &t->pk[k];
    if (q->send_pending) {
      if (may_put(p, t, k)) {
        put_peer(p, t, k, arrays);
        *progressed = 1;
      } else {
        left++;
      }
    }
    if (q->recv_pending) {
      if (shmem_uint64_test(&t->ready[k], SHMEM_CMP_GE, FLAG(t->seq, 0))) {
        if (t->ready[k] & 1)
          hs__fail_seen(p, p->peers[k].rank);
        else if (!hs__failed_round(p))
          hs__unpack_peer(p, &p->peers[k], arrays, t->rbuf + (t->seq % 2) * t->rhalf + q->my_off);
        q->recv_pending = 0;
        shmem_uint64_p(&t->ack[q->its_slot], t->seq, q->pe);
        *progressed = 1;
      } else {
        left++;
      }
    }
  }
  return left;
}

/* Done when every message is in and every deferred put went out: complete has nothing left. */
static int shmemt_test(hs_plan p, void *const *arrays, int *done) {
  int progressed;
  *done = shmemt_pass(p, p->impl, arrays, &progressed) == 0;
  return HS_OK;
}

static int shmemt_complete(hs_plan p, void *const *arrays) {
  shmemt_t *t = p->impl;
  unsigned spins = 0;
  int progressed;
  while (shmemt_pass(p, t, arrays, &progressed))
    if (progressed)
      spins = 0;
    else
      hs__relax(&spins);
  return HS_OK;
}

static void shmemt_destroy(hs_plan p) {
  shmemt_t *t = p->impl;
  if (!t) return;
  /* shmem_free is collective; no put may still be in flight towards the buffers. */
  if (hs__shmem_running()) {
    shmem_quiet();
    shmem_barrier_all();
    if (t->rbuf) shmem_free(t->rbuf);
    if (t->ready) shmem_free(t->ready);
    if (t->ack) shmem_free(t->ack);
    hs__account(p, -(int64_t)t->sym_bytes);
  }
  hs__free(p, t->sbuf);
  hs__free(p, t->pk);
  hs__free(p, t);
  p->impl = NULL;
  hs__shmem_release();
}

HS_DEFINE_TRANSPORT(hs__transport_shmem, shmemt, "shmem", HS_TRANSPORT_SHMEM, HS_OPS_FAILROUND,
                    "OpenSHMEM: putmem into symmetric double buffers + flag per neighbour "
                    "(needs HALOSWAP_SHMEM=1)",
                    NULL, hs_no_config, .query = shmemt_query, .test = shmemt_test);
