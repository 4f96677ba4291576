"""A program using an installed haloswap Python package (tools/check-spack's +python
consumer): the swap of consumer.c from Python, one periodic depth-1 swap on a 2D-decomposed 3D
grid; every x/y halo cell must hold the value of the global cell it mirrors. Prints
"consumer OK" on rank 0 on success."""
import sys

import numpy as np
from mpi4py import MPI

import haloswap

comm = MPI.COMM_WORLD
g = (8, 6, 3)
with haloswap.Decomposition(comm, g) as d:   # x, y periodic and split; z whole
    u = d.empty(halo=(1, 1, 0))
    x = np.arange(-1, d.local_shape[0] + 1) + d.offset[0]
    y = np.arange(-1, d.local_shape[1] + 1) + d.offset[1]
    z = np.arange(g[2])
    # the oracle, from global coordinates (periodic in x and y)
    want = (10000.0 * (x % g[0])[:, None, None] + 100.0 * (y % g[1])[None, :, None]
            + z[None, None, :])
    u[...] = -1.0
    u[1:-1, 1:-1, :] = want[1:-1, 1:-1, :]
    with haloswap.Plan(d, [u], depth=1) as plan:
        plan.swap()
    bad = comm.allreduce(int(np.count_nonzero(u != want)))
if comm.rank == 0:
    print(f"consumer FAILED: {bad} wrong cells on {comm.size} ranks" if bad else
          f"consumer OK ({bad} wrong, {comm.size} ranks, haloswap {haloswap.__version__})")
sys.exit(1 if bad else 0)
