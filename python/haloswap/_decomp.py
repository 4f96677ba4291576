"""Decomposition: a Cartesian split of a global grid over the ranks of a communicator."""
from __future__ import annotations

import itertools
import weakref
from typing import Dict, Optional, Sequence, Tuple, Union

import numpy as np
from mpi4py import MPI

from . import _core
from ._agree import agree
from ._errors import ArgumentError, ArgumentTypeError, StateError
from ._lifetime import Collective

__all__ = ["Decomposition"]

Offset = Tuple[int, ...]

_REMAINDER = {"low": 0, "high": 1}
_PLACEMENT = {"rank": 0, "node": 1}


def _per_axis(name: str, value, nd: int, kind, default) -> list:
    """A scalar for every axis, or one value per axis."""
    if value is None:
        return list(default)
    if isinstance(value, (bool, int, np.integer)) or kind is bool and isinstance(value, np.bool_):
        return [kind(value)] * nd
    try:
        vals = list(value)
    except TypeError:
        raise ArgumentTypeError(f"{name} = {value!r}: give one value or {nd} (one per axis)") from None
    if len(vals) != nd:
        raise ArgumentError(f"{name} = {value!r} has {len(vals)} entries; the grid has {nd} "
                            f"axes")
    for v in vals:
        if not isinstance(v, (bool, int, np.integer, np.bool_)):
            raise ArgumentTypeError(f"{name} = {value!r}: entry {v!r} is not an integer")
    return [kind(v) for v in vals]


class Decomposition(Collective):
    """A global grid of 2 or 3 axes (x, y[, z]) split over the ranks of ``comm``.

    Collective: every rank of ``comm`` creates it with the same arguments.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The ranks to split over. An ``mpi4py.MPI.Cartcomm`` is adopted as it is: its
        dimensions and periods are used (``procs`` and ``periodic``, if given, must agree).
    global_shape : (nx, ny) or (nx, ny, nz)
        Interior cells of the global grid per axis.
    periodic : bool or sequence of bool, optional
        Per axis; default x and y periodic, z walled.
    procs : int or sequence of int, optional
        Ranks per axis; 0 lets MPI choose, 1 keeps the axis whole. Default: x and y chosen,
        z whole.
    ranges : sequence of (sequence of int or None), optional
        Cells of each rank along an axis (PETSc's ``lx/ly/lz``); needs ``procs`` on that axis.
    remainder : "low" or "high"
        Which ranks get the extra cells of an uneven split: the first ones (MONC, the
        default) or the last ones (Lare3d).
    axis_order : sequence of int, optional
        ``axis_order[k]`` is the grid axis that is dimension k of the Cartesian
        communicator (MPI varies the last dimension fastest in rank order).
    placement : "rank" or "node"
        ``"node"`` gives every node a compact block of the process grid.
    node_size : int
        With ``placement="node"``: virtual nodes of this many consecutive ranks (0: the real
        nodes).

    Attributes
    ----------
    ndims, global_shape, local_shape, offset (global index of local interior cell 0 per
    axis), procs, coords, periodic, rank, size, comm (the Cartesian communicator, an
    ``mpi4py.MPI.Cartcomm`` owned by the decomposition), neighbors (offset -> rank or
    ``None`` at a wall), placement, node_block.
    """

    def __init__(self, comm: MPI.Intracomm, global_shape: Sequence[int], *,
                 periodic: Union[bool, Sequence[bool], None] = None,
                 procs: Union[int, Sequence[int], None] = None,
                 ranges: Optional[Sequence[Optional[Sequence[int]]]] = None,
                 remainder: str = "low", axis_order: Optional[Sequence[int]] = None,
                 placement: str = "rank", node_size: int = 0):
        if not isinstance(comm, MPI.Intracomm):
            raise ArgumentTypeError(f"comm = {comm!r} is not an mpi4py intracommunicator")
        self._core = _core.DecompCore()
        self._plans: "weakref.WeakSet" = weakref.WeakSet()
        args: dict = {}

        def check() -> None:
            try:
                shape = [int(n) for n in global_shape]
            except (TypeError, ValueError):
                raise ArgumentTypeError(f"global_shape = {global_shape!r} is not a sequence of "
                                        f"integers") from None
            nd = len(shape)
            if nd not in (2, 3):
                raise ArgumentError(f"global_shape = {tuple(global_shape)!r} has {nd} axes; "
                                    f"must be 2 or 3 (x, y[, z])")
            per = _per_axis("periodic", periodic, nd, bool, [True, True, False][:nd])
            pr = _per_axis("procs", procs, nd, int, [0, 0, 1][:nd])
            order = _per_axis("axis_order", axis_order, nd, int, [0] * nd)
            if remainder not in _REMAINDER:
                raise ArgumentError(f"remainder = {remainder!r}, must be 'low' or 'high'")
            if placement not in _PLACEMENT:
                raise ArgumentError(f"placement = {placement!r}, must be 'rank' or 'node'")
            rg = [None] * 3
            if ranges is not None:
                if len(ranges) != nd:
                    raise ArgumentError(f"ranges has {len(ranges)} entries; the grid has {nd} "
                                        f"axes (None for an axis split by the library)")
                for a, r in enumerate(ranges):
                    if r is not None:
                        try:
                            rg[a] = [int(v) for v in r]
                        except (TypeError, ValueError):
                            raise ArgumentTypeError(f"ranges[{a}] = {r!r} is not a sequence of "
                                                    f"integers") from None
            have_cart = isinstance(comm, MPI.Cartcomm)
            if have_cart:
                cdims = list(comm.Get_topo()[0])
                cper = [bool(p) for p in comm.Get_topo()[1]]
                if len(cdims) != nd:
                    raise ArgumentError(f"comm is a Cartesian communicator of {len(cdims)} "
                                        f"dimensions; global_shape has {nd} axes")
                if periodic is not None:
                    ax = order if any(order) else list(range(nd))
                    want = [cper[ax.index(a)] for a in range(nd)]
                    if want != per:
                        raise ArgumentError(f"periodic = {tuple(per)!r} but the Cartesian "
                                            f"communicator's periods give {tuple(want)!r}")
            args.update(shape=shape, per=per + [False] * (3 - nd), pr=pr + [1] * (3 - nd),
                        order=order + [0] * (3 - nd), rg=rg, have_cart=have_cart)

        agree(comm, check)
        cart_f = comm.py2f() if args["have_cart"] else 0
        self._core.create(comm.py2f(), args["shape"], args["pr"], [int(p) for p in args["per"]],
                          args["rg"], _REMAINDER[remainder], args["order"],
                          _PLACEMENT[placement], int(node_size), cart_f, args["have_cart"])
        (self.ndims, self.local_shape, self.offset, self.global_shape, self.procs, self.coords,
         self.periodic, place, self.node_block) = self._core.info()
        self.placement = "node" if place == 1 else "rank"
        self.comm: MPI.Cartcomm = MPI.Cartcomm.f2py(self._core.comm_f())
        self.rank: int = self.comm.Get_rank()
        self.size: int = self.comm.Get_size()
        # Every rank's grid coordinates: the neighbour of any offset, whatever the axis order.
        self._rank_of: Dict[Tuple[int, ...], int] = {
            tuple(c): r for r, c in enumerate(self.comm.allgather(self.coords))}
        self.neighbors: Dict[Offset, Optional[int]] = {
            o: self.neighbor(o) for o in itertools.product((-1, 0, 1), repeat=self.ndims)
            if any(o)}

    # ------------------------------------------------------------------ queries
    def neighbor(self, offset: Sequence[int]) -> Optional[int]:
        """Rank of the neighbour at ``offset`` (each entry -1, 0 or 1 per axis), with
        periodic wrap; ``None`` beyond a wall. May be this rank itself."""
        if len(offset) != self.ndims or any(o not in (-1, 0, 1) for o in offset):
            raise ArgumentError(f"offset = {tuple(offset)!r}: one of -1, 0, 1 per axis "
                                f"({self.ndims} axes)")
        c = []
        for a, o in enumerate(offset):
            v = self.coords[a] + o
            if v < 0 or v >= self.procs[a]:
                if not self.periodic[a]:
                    return None
                v %= self.procs[a]
            c.append(v)
        return self._rank_of[tuple(c)]

    @property
    def local_slices(self) -> Tuple[slice, ...]:
        """The global index range of this rank's interior, per axis (for a global array)."""
        return tuple(slice(o, o + n) for o, n in zip(self.offset, self.local_shape))

    def empty(self, halo: Union[int, Sequence] = 1, dtype=np.float64, order: str = "C", *,
              fill=None) -> np.ndarray:
        """A local array of interior plus ``halo`` cells per side (an int, or per axis an
        int or (lo, hi)), indexed [x, y(, z)]; ``fill`` sets every cell if given."""
        h = _per_axis_pairs("halo", halo, self.ndims)
        shape = tuple(lo + n + hi for (lo, hi), n in zip(h, self.local_shape))
        a = np.empty(shape, dtype=dtype, order=order)
        if fill is not None:
            a[...] = fill
        _MADE_XYZ[id(a)] = a
        return a

    # ------------------------------------------------------------------ lifetime
    def free(self) -> None:
        """Collective: frees the decomposition (and its communicator). Plans made on it must
        be freed first."""
        live = [p for p in self._plans if not p.closed]
        if live:
            raise StateError(f"Decomposition.free: {len(live)} plan(s) made on this "
                             f"decomposition are not freed; free them first")
        self._core.free()

    def __repr__(self) -> str:
        return (f"<haloswap.Decomposition global {self.global_shape} procs {self.procs} "
                f"rank {self.rank} coords {self.coords} local {self.local_shape} "
                f"offset {self.offset} periodic {self.periodic}>")


# Arrays empty() made, indexed [x, y(, z)] by construction: a plan needs no axes= for them.
_MADE_XYZ: "weakref.WeakValueDictionary[int, np.ndarray]" = weakref.WeakValueDictionary()


def made_xyz(a: np.ndarray) -> bool:
    """``a`` (or the array it views) came from Decomposition.empty, unreshaped."""
    for x in (a, a.base):
        if isinstance(x, np.ndarray) and _MADE_XYZ.get(id(x)) is x and x.shape == a.shape:
            return True
    return False


def _per_axis_pairs(name: str, value, nd: int) -> list:
    """int -> (v, v) on every axis; per axis: int or (lo, hi)."""
    if isinstance(value, (int, np.integer)):
        return [(int(value), int(value))] * nd
    try:
        vals = list(value)
    except TypeError:
        raise ArgumentTypeError(f"{name} = {value!r}: give an int, or per axis an int or "
                                f"(lo, hi)") from None
    if len(vals) != nd:
        raise ArgumentError(f"{name} = {value!r} has {len(vals)} entries for {nd} axes")
    out = []
    for v in vals:
        if isinstance(v, (int, np.integer)):
            out.append((int(v), int(v)))
        else:
            try:
                lo, hi = v
                out.append((int(lo), int(hi)))
            except (TypeError, ValueError):
                raise ArgumentTypeError(f"{name} = {value!r}: entry {v!r} is neither an int "
                                        f"nor (lo, hi)") from None
    return out
