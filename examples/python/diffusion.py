#!/usr/bin/env python3
"""Heat diffusion on a periodic 2-D grid, in numpy, with haloswap swapping the halos.

    mpiexec -n 4 python examples/python/diffusion.py --steps 200 --check --png heat.png

Every rank owns a block of the grid plus one halo cell per side; each step swaps the halos
(box stencil: the 9-point Laplacian reads the corners) and updates the interior. With
--check, rank 0 also runs the model alone on the whole grid in plain numpy (periodic
wrap by np.pad) and compares: the parallel result must be bit-for-bit the same. --png writes
the final field (matplotlib).
"""
import argparse
import sys
import time

import numpy as np
from mpi4py import MPI

import haloswap


def initial(x, y, nx, ny):
    """Three warm blobs, from global cell coordinates (so every decomposition agrees)."""
    u = np.zeros(np.broadcast(x, y).shape)
    for cx, cy, r in ((0.3, 0.3, 0.08), (0.7, 0.55, 0.12), (0.45, 0.8, 0.05)):
        u += np.exp(-(((x + 0.5) / nx - cx) ** 2 + ((y + 0.5) / ny - cy) ** 2) / r ** 2)
    return u


def step(u, k):
    """One explicit step on a padded array (halo 1): the new interior."""
    c = u[1:-1, 1:-1]
    lap = (4.0 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
           + (u[2:, 2:] + u[2:, :-2] + u[:-2, 2:] + u[:-2, :-2]) - 20.0 * c) / 6.0
    return c + k * lap


def serial(nx, ny, steps, k):
    x, y = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    u = initial(x, y, nx, ny)
    for _ in range(steps):
        u = step(np.pad(u, 1, mode="wrap"), k)
    return u


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nx", type=int, default=128)
    ap.add_argument("--ny", type=int, default=96)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--k", type=float, default=0.2, help="diffusion number (stable < 0.25)")
    ap.add_argument("--transport", default=None, help="haloswap transport (default p2p)")
    ap.add_argument("--check", action="store_true", help="compare with a one-rank run")
    ap.add_argument("--png", default=None, help="write the final field to this PNG")
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD

    with haloswap.Decomposition(comm, (args.nx, args.ny), periodic=True) as d:
        u = d.empty(halo=1)                          # indexed [x, y], one halo cell per side
        ox, oy = d.offset
        x, y = np.meshgrid(np.arange(ox, ox + d.local_shape[0]),
                           np.arange(oy, oy + d.local_shape[1]), indexing="ij")
        u[1:-1, 1:-1] = initial(x, y, args.nx, args.ny)
        with haloswap.Plan(d, u, depth=1, stencil="box", transport=args.transport) as plan:
            comm.Barrier()
            t0 = MPI.Wtime()
            for _ in range(args.steps):
                plan.swap()
                u[1:-1, 1:-1] = step(u, args.k)
            elapsed = comm.allreduce(MPI.Wtime() - t0, op=MPI.MAX)
            swap_s = comm.allreduce(plan.stats["seconds_total"], op=MPI.MAX)
            transport = plan.selected_transport

        pieces = comm.gather((d.local_slices, u[1:-1, 1:-1].copy()), root=0)

    status = 0
    if comm.Get_rank() == 0:
        field = np.empty((args.nx, args.ny))
        for sl, block in pieces:
            field[sl] = block
        print(f"diffusion {args.nx}x{args.ny}, {args.steps} steps on {comm.Get_size()} ranks "
              f"({transport}): {elapsed:.3f} s, of which swaps {swap_s:.3f} s; "
              f"heat {field.sum():.12g}")
        if args.check:
            ref = serial(args.nx, args.ny, args.steps, args.k)
            same = np.array_equal(field.view(np.uint64), ref.view(np.uint64))
            diff = float(np.max(np.abs(field - ref)))
            print(f"one-rank numpy run: bit-for-bit {'identical' if same else 'DIFFERENT'}"
                  f" (max difference {diff:.3g})")
            status = 0 if same else 1
        if args.png:
            try:
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt
            except ImportError:
                print("matplotlib not installed: no PNG written")
            else:
                fig, ax = plt.subplots(figsize=(6, 4.5))
                im = ax.imshow(field.T, origin="lower", cmap="inferno")
                ax.set_title(f"heat after {args.steps} steps ({comm.Get_size()} ranks, "
                             f"{transport})")
                ax.set_xlabel("x")
                ax.set_ylabel("y")
                fig.colorbar(im, ax=ax)
                fig.savefig(args.png, dpi=100, bbox_inches="tight")
                print(f"wrote {args.png}")
    return comm.bcast(status, root=0)


if __name__ == "__main__":
    sys.exit(main())
