"""What start(arrays) costs the other ranks when one rank arrives late (issue 33): rank 1
sleeps LATE seconds before each start, the others time their start(arrays) (per-operation
arrays). The package's per-operation checks travel in the swap's round, so no rank waits in
start for a late one. Usage: mpiexec -n 4 python late_start.py [LATE [TRANSPORT]]"""
import sys
import time

from mpi4py import MPI

import haloswap

late = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
transport = sys.argv[2] if len(sys.argv) > 2 else "p2p"
comm = MPI.COMM_WORLD
with haloswap.Decomposition(comm, (64, 48, 8)) as d:
    a = d.empty(halo=(1, 1, 0), fill=1.0)
    b = d.empty(halo=(1, 1, 0), fill=2.0)
    with haloswap.Plan(d, a, transport=transport) as p:
        for _ in range(40):  # past the transport's start-up trials (p2p times its dtype modes)
            p.swap([b])
        times = []
        for _ in range(5):
            comm.Barrier()
            if d.rank == 1:
                time.sleep(late)
            t0 = time.perf_counter()
            p.start([b])
            times.append(time.perf_counter() - t0)
            p.complete()
worst = comm.gather(max(times) if comm.Get_rank() != 1 else 0.0, root=0)
if comm.Get_rank() == 0:
    print(f"{transport}: rank 1 {late:.2f} s late: the others' start(arrays) takes at most "
          f"{max(worst) * 1e3:.3f} ms (5 swaps, {comm.Get_size()} ranks)")
