"""One rank fails inside the package's with blocks while the others swap (run by
abort_test.py): at swap 20 rank 1 writes its pid and the time to PIDFILE, then raises between
start and complete (mode "raise") or swaps on until the driver's SIGINT arrives (mode
"sigint"). The job must abort with rank 1's traceback: no rank may wait in a collective free.
Usage: abort_prog.py raise|sigint TRANSPORT PIDFILE. Exit 77: the transport is not usable."""
import os
import sys
import time

import numpy as np
from mpi4py import MPI

import haloswap

mode, transport, pidfile = sys.argv[1:4]
comm = MPI.COMM_WORLD
info = {t.name: t for t in haloswap.transports(comm)}.get(transport)
if info is None or not info.available:
    if comm.Get_rank() == 0:
        print(f"SKIP: {transport}: {info.reason if info else 'not a transport of this library'}")
    sys.exit(77)

with haloswap.Decomposition(comm, (16, 12, 4)) as d:
    u = d.empty(halo=(1, 1, 0), fill=float(d.rank))
    with haloswap.Plan(d, [u], transport=transport) as plan:
        i = 0
        deadline = time.monotonic() + 60  # a missing SIGINT ends the loop (the test fails)
        while time.monotonic() < deadline:
            plan.start()
            if d.rank == 1 and i == 20:
                with open(pidfile + ".tmp", "w") as f:  # renamed: the driver reads it whole
                    f.write(f"{os.getpid()} {time.time()!r}\n")
                os.rename(pidfile + ".tmp", pidfile)
                if mode == "raise":
                    raise RuntimeError("injected failure on rank 1 mid-swap")
            u[1:-1, 1:-1, :] += 1.0  # interior work between start and complete
            plan.complete()
            i += 1
        print(f"rank {d.rank}: no abort within 60 s", flush=True)
    sys.exit(3)
