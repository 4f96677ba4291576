#!/usr/bin/env python3
"""The MONC-case swap from Python, against the same swap from C and against the other
Python ways to swap halos, interleaved in one launch.

    mpiexec -n 2 python python/bench/bench_python.py          (make bench-python)

Case: local 16x16x256 per rank, z contiguous (numpy arrays [x, y, z] in C order), depth 2 in
x and y, box stencil, 30 float64 fields, periodic x and y, z whole. Methods:

  haloswap-c:T     the plan's swaps in a C loop (hs_swap, no Python in between)
  haloswap-py:T    the same plan, plan.swap() in a Python loop
  ghex-py          GHEX's Python bindings (structured regular: pattern, communication
                   object, co.exchange([...]).wait()), where the ghex package is installed
  petsc4py         PETSc's DMDA.globalToLocal (one DMDA, dof = 30), where petsc4py is
                   installed for this MPI library
  mpi4py-nbr       hand-written: a distributed graph of the 8 neighbours and one
                   Neighbor_alltoallw of struct-of-subarray datatypes over all fields

Every method's halos are checked against the analytic values once, then the methods are
timed in a new shuffled order each repetition (the same order on every rank): per
repetition a method's time is the maximum over ranks of its per-rank mean over --swaps
swaps; reported are the median over repetitions and min - max.
"""
import argparse
import importlib.util
import itertools
import random
import subprocess
import sys

import numpy as np
from mpi4py import MPI

import haloswap

COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()


def log(*a):
    if RANK == 0:
        print(*a, flush=True)


def cell_values(f, gx, gy, gz):
    return (((gx * 131 + gy * 31 + gz * 7 + f * 1009) % 8191) + 1).astype(np.float64)


class Case:
    def __init__(self, args):
        self.args = args
        nx, ny, nz = args.local
        dims = MPI.Compute_dims(COMM.Get_size(), [0, 0])
        self.d = haloswap.Decomposition(COMM, (nx * dims[0], ny * dims[1], nz),
                                        procs=(dims[0], dims[1], 1), periodic=(True, True, False))
        self.h = args.depth
        h = self.h
        self.fields = [self.d.empty(halo=(h, h, 0)) for _ in range(args.fields)]
        ox, oy, _ = self.d.offset
        gx = np.arange(ox - h, ox + nx + h) % self.d.global_shape[0]
        gy = np.arange(oy - h, oy + ny + h) % self.d.global_shape[1]
        GX, GY, GZ = np.meshgrid(gx, gy, np.arange(nz), indexing="ij")
        self.want = [cell_values(f, GX, GY, GZ) for f in range(args.fields)]
        inner = np.zeros(self.fields[0].shape, bool)
        inner[h:-h, h:-h, :] = True
        self.halo = ~inner

    def reset(self):
        for a, w in zip(self.fields, self.want):
            a[...] = np.where(self.halo, -1.0, w)

    def wrong(self):
        bad = sum(int(np.count_nonzero(a != w)) for a, w in zip(self.fields, self.want))
        return COMM.allreduce(bad)


# ---------------------------------------------------------------- methods
class Method:
    """A way to swap the case's halos: ``swap()`` once, ``run(n)``: seconds per swap over n."""
    name = "?"

    def close(self):
        """Frees what the method holds (MPI objects) before MPI ends."""

    def run(self, n):
        swap = self.swap
        t0 = MPI.Wtime()
        for _ in range(n):
            swap()
        return (MPI.Wtime() - t0) / n


class HaloswapC(Method):
    def __init__(self, case, plan, transport):
        self.name = f"haloswap-c:{transport}"
        self.plan = plan

    def swap(self):
        self.plan._core.time_swaps(1)

    def run(self, n):
        return self.plan._core.time_swaps(n)


class HaloswapPy(Method):
    def __init__(self, case, plan, transport):
        self.name = f"haloswap-py:{transport}"
        self.swap = plan.swap   # what a model's loop calls


class GhexPy(Method):
    name = "ghex-py"

    def __init__(self, case):
        from ghex.context import make_context
        from ghex.structured.cartesian_sets import ProductSet, UnitRange
        from ghex.structured.regular import (DomainDescriptor, HaloGenerator,
                                             make_communication_object, make_field_descriptor,
                                             make_pattern)
        d, h = case.d, case.h
        self.ctx = make_context(d.comm, False)
        owned = ProductSet(*(UnitRange(o, o + n) for o, n in zip(d.offset, d.local_shape)))
        glob = ProductSet(*(UnitRange(0, n) for n in d.global_shape))
        dom = DomainDescriptor(self.ctx.rank(), owned)
        gen = HaloGenerator(glob, ((h, h), (h, h), (0, 0)), (True, True, False))
        self.pattern = make_pattern(self.ctx, gen, [dom])
        self.co = make_communication_object(self.ctx)
        self.descs = [make_field_descriptor(dom, a, (h, h, 0), a.shape) for a in case.fields]
        self.infos = [self.pattern(g) for g in self.descs]

    def swap(self):
        self.co.exchange(self.infos).wait()


class Petsc4py(Method):
    """One DMDA with dof = fields (PETSc's layout for many fields on one grid: interleaved);
    PETSc's x is our z (contiguous), its z our x. Checked on its own vectors."""
    name = "petsc4py"

    def __init__(self, case):
        from petsc4py import PETSc
        d, h = case.d, case.h
        self.case = case
        nf = case.args.fields
        B = PETSc.DMDA.BoundaryType
        # ownership from haloswap's decomposition (the Cartesian order is the same)
        lx = d.comm.allgather(d.local_shape[0] if d.coords[1] == 0 else None)
        ly = d.comm.allgather(d.local_shape[1] if d.coords[0] == 0 else None)
        lx = [v for v in lx if v is not None]
        ly = [v for v in ly if v is not None]
        self.da = PETSc.DMDA().create(
            dim=3, dof=nf, sizes=(d.global_shape[2], d.global_shape[1], d.global_shape[0]),
            proc_sizes=(1, d.procs[1], d.procs[0]),
            boundary_type=(B.NONE, B.PERIODIC, B.PERIODIC),
            stencil_type=PETSc.DMDA.StencilType.BOX, stencil_width=h,
            ownership_ranges=([d.global_shape[2]], ly, lx), comm=d.comm)
        self.g = self.da.createGlobalVec()
        self.l = self.da.createLocalVec()
        (zs, ze), (ys, ye), (xs, xe) = self.da.getRanges()
        if (xs, ys) != tuple(d.offset[:2]) or (xe - xs, ye - ys) != tuple(d.local_shape[:2]):
            raise RuntimeError("PETSc split the grid differently")

    def wrong(self):
        d, h, nf = self.case.d, self.case.h, self.case.args.fields
        (zs, ze), (ys, ye), (xs, xe) = self.da.getRanges()
        ga = self.da.getVecArray(self.g)  # [z, y, x, f] in PETSc's order
        Z, Y, X = np.meshgrid(np.arange(zs, ze), np.arange(ys, ye), np.arange(xs, xe),
                              indexing="ij")
        for f in range(nf):
            ga[:, :, :, f] = cell_values(f, X, Y, Z)
        self.da.globalToLocal(self.g, self.l)
        (gzs, gze), (gys, gye), (gxs, gxe) = self.da.getGhostRanges()
        la = self.da.getVecArray(self.l)
        Z, Y, X = np.meshgrid(np.arange(gzs, gze), np.arange(gys, gye), np.arange(gxs, gxe),
                              indexing="ij")
        bad = 0
        for f in range(nf):
            want = cell_values(f, X % d.global_shape[0], Y % d.global_shape[1], Z)
            bad += int(np.count_nonzero(np.asarray(la[:, :, :, f]) != want))
        return COMM.allreduce(bad)

    def swap(self):
        self.da.globalToLocal(self.g, self.l)

    def close(self):
        for obj in (self.g, self.l, self.da):
            obj.destroy()


class Mpi4pyNbr(Method):
    """MPI_Neighbor_alltoallw over a distributed graph of the 8 x-y neighbours (duplicates
    and self included, in canonical offset order on both sides), one struct datatype per
    neighbour spanning the 30 fields' boxes by absolute address."""
    name = "mpi4py-nbr"

    def __init__(self, case):
        d, h = case.d, case.h
        nx, ny, nz = d.local_shape
        offs = [o for o in itertools.product((-1, 0, 1), repeat=2) if any(o)]
        dests = [d.neighbor((ox, oy, 0)) for ox, oy in offs]
        srcs = [d.neighbor((-ox, -oy, 0)) for ox, oy in offs]
        self.comm = d.comm.Create_dist_graph_adjacent(srcs, dests, reorder=False)
        shape = list(case.fields[0].shape)
        addrs = [MPI.Get_address(a) for a in case.fields]

        def box(o, recv):
            start, sub = [], []
            for a, n in ((0, nx), (1, ny)):
                if o[a] == 0:
                    start.append(h)
                    sub.append(n)
                elif recv:  # the halo on side o
                    start.append(0 if o[a] < 0 else h + n)
                    sub.append(h)
                else:       # the interior strip next to side o
                    start.append(h if o[a] < 0 else n)
                    sub.append(h)
            t = MPI.DOUBLE.Create_subarray(shape, sub + [nz], start + [0])
            s = MPI.Datatype.Create_struct([1] * len(addrs), addrs, [t] * len(addrs))
            t.Free()
            return s.Commit()

        self.stypes = [box(o, False) for o in offs]
        # receive from the neighbour at -o into the halo on side -o
        self.rtypes = [box((-o[0], -o[1]), True) for o in offs]
        k = len(offs)
        self.sbuf = [MPI.BOTTOM, [1] * k, [0] * k, self.stypes]
        self.rbuf = [MPI.BOTTOM, [1] * k, [0] * k, self.rtypes]

    def swap(self):
        self.comm.Neighbor_alltoallw(self.sbuf, self.rbuf)

    def close(self):
        for t in self.stypes + self.rtypes:
            t.Free()
        self.comm.Free()


def petsc4py_usable():
    """petsc4py is importable and built on this process's MPI library (Debian's is Open MPI's:
    loading it under MPICH would put two MPI libraries in one process)."""
    spec = importlib.util.find_spec("petsc4py")
    if spec is None:
        return "petsc4py not installed (Debian: python3-petsc4py-real, Open MPI)"
    import glob
    import os
    libs = glob.glob(os.path.join(os.path.dirname(spec.origin), "lib", "**", "PETSc*.so"),
                     recursive=True)
    if not libs:
        return "petsc4py's extension not found"
    ldd = subprocess.run(["ldd", libs[0]], capture_output=True, text=True).stdout
    flavour = "mpich" if "libmpich" in ldd else "openmpi" if "libmpi.so" in ldd else "?"
    if flavour != haloswap.MPI_FLAVOUR:
        return f"petsc4py here is built with {flavour}, this run uses {haloswap.MPI_FLAVOUR}"
    return None


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--local", type=lambda s: tuple(int(v) for v in s.split(",")),
                    default=(16, 16, 256))
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--fields", type=int, default=30)
    ap.add_argument("--transport", action="append",
                    help="haloswap transports (default p2p, shm, shm:remap=1)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--swaps", type=int, default=20)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--skip", action="append", default=[], help="leave a method out")
    args = ap.parse_args()
    case = Case(args)
    transports = args.transport or ["p2p", "shm", "shm:remap=1"]

    methods, plans, notes = [], [], []
    for t in transports:
        name = t.split(":")[0]
        info = next((x for x in haloswap.transports(COMM) if x.name == name), None)
        if info is None or not info.available:
            notes.append(f"haloswap {t}: {info.reason if info else 'unknown transport'}")
            continue
        plan = haloswap.Plan(case.d, case.fields, depth=(case.h, case.h, 0), transport=t)
        plans.append(plan)
        methods += [HaloswapC(case, plan, t), HaloswapPy(case, plan, t)]
    for cls, why in ((GhexPy, None if importlib.util.find_spec("ghex") else
                      "the ghex package is not installed (make bench-python builds it)"),
                     (Petsc4py, petsc4py_usable()), (Mpi4pyNbr, None)):
        if cls.name in args.skip:
            continue
        why = next((w for w in COMM.allgather(why) if w), None)  # the same on every rank
        if why:
            notes.append(f"{cls.name}: {why}")
            continue
        try:
            methods.append(cls(case))
        except Exception as e:  # a reference that cannot be set up is reported, not fatal
            notes.append(f"{cls.name}: {type(e).__name__}: {e}")

    # every method's halos against the analytic values
    for m in methods:
        if isinstance(m, Petsc4py):
            bad = m.wrong()
        else:
            case.reset()
            m.swap()
            bad = case.wrong()
        if bad:
            raise SystemExit(f"{m.name}: {bad} wrong halo cells")
    for m in methods:
        for _ in range(args.warmup):
            m.swap()

    times = {m.name: [] for m in methods}
    rng = random.Random(12345)
    for _ in range(args.reps):
        order = list(methods)
        rng.shuffle(order)
        for m in order:
            COMM.Barrier()
            t = m.run(args.swaps)
            times[m.name].append(COMM.allreduce(t, op=MPI.MAX))

    med = {k: float(np.median(v)) for k, v in times.items()}
    log(f"\n{MPI.Get_library_version().splitlines()[0].strip()} | {COMM.Get_size()} ranks | "
        f"local {'x'.join(map(str, args.local))} z-fast | {args.fields} x float64 | depth "
        f"{args.depth} | box | {args.swaps} swaps x {args.reps} reps, interleaved")
    ref = med.get("haloswap-c:p2p")
    log(f"{'method':24s} {'us/swap med':>12s} {'(min - max)':>22s} {'py / c':>8s} "
        f"{'vs c:p2p':>9s} {'vs ghex-py':>10s}")
    for m in methods:
        v = times[m.name]
        pyc = "-"
        if m.name.startswith("haloswap-py:"):
            pyc = "%.3f" % (med[m.name] / med["haloswap-c:" + m.name.split(":", 1)[1]])
        vs = "%.2f" % (med[m.name] / ref) if ref else "-"
        vg = "%.2f" % (med[m.name] / med["ghex-py"]) if "ghex-py" in med else "-"
        log(f"{m.name:24s} {med[m.name] * 1e6:12.1f} "
            f"{'(%.1f - %.1f)' % (min(v) * 1e6, max(v) * 1e6):>22s} {pyc:>8s} {vs:>9s} {vg:>10s}")
    for n in notes:
        log(f"not measured: {n}")
    for m in methods:
        m.close()
    for p in plans:
        p.free()
    case.d.free()
    binding_overhead(args.reps)


def binding_overhead(reps, n=20000):
    """The binding's own cost per call: a swap that moves almost nothing (one 2x2 field on
    one rank, periodic: two self copies), from C and from Python, interleaved."""
    with haloswap.Decomposition(MPI.COMM_SELF, (2, 2)) as d:
        a = d.empty(halo=1, fill=1.0)
        with haloswap.Plan(d, a, depth=1) as plan:
            c, py = HaloswapC(None, plan, "p2p"), HaloswapPy(None, plan, "p2p")
            tc, tp = [], []
            for _ in range(reps):
                tc.append(c.run(n))
                tp.append(py.run(n))
            mc, mp = float(np.median(tc)), float(np.median(tp))
    log(f"binding overhead (rank 0, a swap of 2 self copies, {n} calls x {reps} reps): "
        f"C {mc * 1e9:.0f} ns, Python {mp * 1e9:.0f} ns per swap: +{(mp - mc) * 1e9:.0f} ns "
        f"per plan.swap() call")


if __name__ == "__main__":
    sys.exit(main())
