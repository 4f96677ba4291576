/* hs_osu: OSU-style latency and bandwidth of two-sided MPI and MPI-3 RMA put/get between two
 * ranks, 4 B to 4 MiB, for every synchronisation mode OSU has: lock/unlock per operation
 * ("lock"), one lock with a flush per operation ("flush"), lock_all/unlock_all ("lock_all"),
 * fence and post-start-complete-wait ("pscw"). A fresh MPI_Win_allocate window per size.
 * Latency: passive modes time the origin (rank 0) while the target waits in a barrier; fence
 * and PSCW are ping-pongs (both ranks put in turn) halved, as OSU. Bandwidth: W operations to
 * distinct offsets per synchronisation. Every point is repeated (--reps) and reported as the
 * median with min-max. The summary at the end has the layout of seed 002's Tables 3-4 (4-byte
 * transfers; the RMA column is lock/unlock); OpenSHMEM columns come from hs_osu_shmem.
 *
 * Usage: mpiexec -n 2 hs_osu [--iters default|quick|N] [--reps R] [--step 2|4]
 *        [--max-size B] [--json F] */
#include "osu_common.h"

#include <mpi.h>

static int rank;
static char *sbuf, *rbuf;

enum { TWO_SIDED, LOCK, FLUSH, LOCK_ALL, FENCE, PSCW, NMODES };
static const char *mode_names[NMODES] = {"two-sided", "rma-lock", "rma-flush", "rma-lock_all",
                                         "rma-fence", "rma-pscw"};

static void rma_op(int get, void *local, size_t size, int target, MPI_Aint disp, MPI_Win win) {
  if (get)
    MPI_Get(local, (int)size, MPI_CHAR, target, disp, (int)size, MPI_CHAR, win);
  else
    MPI_Put(local, (int)size, MPI_CHAR, target, disp, (int)size, MPI_CHAR, win);
}

/* One measurement: returns us (latency) or MB/s (bandwidth) on rank 0. */
static double measure(int mode, int get, int bw, size_t size, const osu_opts *o, int *iters_out,
                      int *window_out) {
  int large = size > OSU_LARGE;
  int iters = bw ? (large ? o->bw_iters_large : o->bw_iters)
                 : (large ? o->lat_iters_large : o->lat_iters);
  int skip = bw ? (large ? o->bw_skip_large : o->bw_skip)
                 : (large ? o->lat_skip_large : o->lat_skip);
  int W = bw ? osu_window_ops(size) : 1;
  *iters_out = iters;
  *window_out = W;
  int peer = 1 - rank;
  double t0 = 0, t = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (mode == TWO_SIDED) {
    MPI_Request req[OSU_WINDOW];
    char ack = 0;
    for (int i = 0; i < skip + iters; i++) {
      if (i == skip) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
      }
      if (!bw) {
        if (rank == 0) {
          MPI_Send(sbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(sbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
      } else if (rank == 0) {
        for (int j = 0; j < W; j++)
          MPI_Isend(sbuf + (size_t)j * size, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(W, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        for (int j = 0; j < W; j++)
          MPI_Irecv(rbuf + (size_t)j * size, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(W, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
      }
    }
    t = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (!bw) return t * 1e6 / iters / 2;
    return (double)size * W * iters / 1e6 / t;
  }

  size_t wbytes = size * (size_t)W;
  char *base = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  memset(base, rank, wbytes);
  MPI_Group world, peer_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &peer, &peer_group);
  MPI_Barrier(MPI_COMM_WORLD);

  if (mode == LOCK || mode == FLUSH || mode == LOCK_ALL) {
    if (rank == 0) {
      if (mode == FLUSH) MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
      for (int i = 0; i < skip + iters; i++) {
        if (i == skip) t0 = MPI_Wtime();
        if (mode == LOCK) MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        if (mode == LOCK_ALL) MPI_Win_lock_all(0, win);
        for (int j = 0; j < W; j++)
          rma_op(get, (get ? rbuf : sbuf) + (size_t)j * size, size, peer,
                 (MPI_Aint)j * (MPI_Aint)size, win);
        if (mode == LOCK) MPI_Win_unlock(peer, win);
        if (mode == LOCK_ALL) MPI_Win_unlock_all(win);
        if (mode == FLUSH) MPI_Win_flush(peer, win);
      }
      t = MPI_Wtime() - t0;
      if (mode == FLUSH) MPI_Win_unlock(peer, win);
    }
    /* The target makes progress only here, as in OSU. */
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (mode == FENCE) {
    MPI_Win_fence(0, win);
    for (int i = 0; i < skip + iters; i++) {
      if (i == skip) t0 = MPI_Wtime();
      if (bw) {
        if (rank == 0)
          for (int j = 0; j < W; j++)
            rma_op(get, (get ? rbuf : sbuf) + (size_t)j * size, size, peer,
                   (MPI_Aint)j * (MPI_Aint)size, win);
        MPI_Win_fence(0, win);
      } else {
        if (rank == 0) rma_op(get, get ? rbuf : sbuf, size, peer, 0, win);
        MPI_Win_fence(0, win);
        if (rank == 1) rma_op(get, get ? rbuf : sbuf, size, peer, 0, win);
        MPI_Win_fence(0, win);
      }
    }
    t = MPI_Wtime() - t0;
    MPI_Win_fence(0, win);
  } else { /* PSCW */
    for (int i = 0; i < skip + iters; i++) {
      if (i == skip) t0 = MPI_Wtime();
      if (bw) {
        if (rank == 0) {
          MPI_Win_start(peer_group, 0, win);
          for (int j = 0; j < W; j++)
            rma_op(get, (get ? rbuf : sbuf) + (size_t)j * size, size, peer,
                   (MPI_Aint)j * (MPI_Aint)size, win);
          MPI_Win_complete(win);
        } else {
          MPI_Win_post(peer_group, 0, win);
          MPI_Win_wait(win);
        }
      } else if (rank == 0) {
        MPI_Win_start(peer_group, 0, win);
        rma_op(get, get ? rbuf : sbuf, size, peer, 0, win);
        MPI_Win_complete(win);
        MPI_Win_post(peer_group, 0, win);
        MPI_Win_wait(win);
      } else {
        MPI_Win_post(peer_group, 0, win);
        MPI_Win_wait(win);
        MPI_Win_start(peer_group, 0, win);
        rma_op(get, get ? rbuf : sbuf, size, peer, 0, win);
        MPI_Win_complete(win);
      }
    }
    t = MPI_Wtime() - t0;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Group_free(&peer_group);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  if (!bw) {
    int pingpong = mode == FENCE || mode == PSCW;
    return t * 1e6 / iters / (pingpong ? 2 : 1);
  }
  return (double)size * W * iters / 1e6 / t;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  osu_opts o;
  if (osu_setup(&o, argc, argv, rank, size, "hs_osu", "needs exactly 2 ranks (mpiexec -n 2)")) {
    MPI_Finalize();
    return 2;
  }
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(lib, &len);
  lib[strcspn(lib, "\n")] = 0;
  for (char *c = lib; *c; c++)
    if (*c == '\t') *c = ' ';
  const char *flavour = strstr(lib, "Open MPI") ? "openmpi"
                        : strstr(lib, "MPICH")  ? "mpich"
                                                : "other";
  size_t bufbytes = (size_t)OSU_WINDOW_BYTES > o.max_size ? (size_t)OSU_WINDOW_BYTES : o.max_size;
  sbuf = malloc(bufbytes);
  rbuf = malloc(bufbytes);
  if (!sbuf || !rbuf) {
    fprintf(stderr, "hs_osu: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(sbuf, 'a', bufbytes);
  memset(rbuf, 'b', bufbytes);
  FILE *js = NULL;
  int first = 1;
  if (rank == 0 && o.json) {
    js = fopen(o.json, "w");
    if (!js) fprintf(stderr, "hs_osu: cannot write %s\n", o.json);
    else fprintf(js, "[");
  }
  if (rank == 0)
    printf("# hs_osu: OSU-style one-sided tests, 2 ranks, MPI_Win_allocate windows, %d reps\n"
           "# %s\n",
           o.reps, lib);
  double b4[NMODES][2][2]; /* [mode][get][bw] at 4 bytes */
  memset(b4, 0, sizeof b4);
  for (int bw = 0; bw < 2; bw++)
    for (int mode = 0; mode < NMODES; mode++)
      for (int get = 0; get < (mode == TWO_SIDED ? 1 : 2); get++) {
        const char *op = mode == TWO_SIDED ? "send" : get ? "get" : "put";
        const char *metric = bw ? "bandwidth" : "latency";
        if (rank == 0) osu_print_header(mode_names[mode], op, metric, flavour);
        for (size_t s = OSU_MIN_SIZE; s <= o.max_size; s *= (size_t)o.step) {
          double v[OSU_MAX_REPS];
          osu_rec r;
          memset(&r, 0, sizeof r);
          for (int k = 0; k < o.reps; k++)
            v[k] = measure(mode, get, bw, s, &o, &r.iters, &r.window);
          snprintf(r.method, sizeof r.method, "%s", mode_names[mode]);
          snprintf(r.op, sizeof r.op, "%s", mode == TWO_SIDED ? "put" : op);
          snprintf(r.metric, sizeof r.metric, "%s", metric);
          r.bytes = s;
          osu_summary(&r, v, o.reps);
          if (s == 4) b4[mode][get][bw] = r.med;
          if (rank == 0) {
            osu_print_row(&r);
            osu_json(js, &first, &r, lib, flavour, o.reps);
          }
        }
      }
  if (rank == 0) {
    printf("\n# Summary in the layout of seed 002, Tables 3-4 (4-byte transfers, on-node; MPI-3 "
           "RMA = lock/unlock; SHMEM: see hs_osu_shmem)\n");
    printf("%-22s %-14s %10s %10s %10s %10s %10s\n", "", "", "MPI P2P", "RMA put", "RMA get",
           "SHMEM put", "SHMEM get");
    printf("%-22s %-14s %10.2f %10.2f %10.2f %10s %10s\n", "Table 3: MB/s", flavour,
           b4[TWO_SIDED][0][1], b4[LOCK][0][1], b4[LOCK][1][1], "-", "-");
    printf("%-22s %-14s %10.2f %10.2f %10.2f %10s %10s\n", "Table 4: latency (us)", flavour,
           b4[TWO_SIDED][0][0], b4[LOCK][0][0], b4[LOCK][1][0], "-", "-");
    if (js) {
      fprintf(js, "\n]\n");
      fclose(js);
    }
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
