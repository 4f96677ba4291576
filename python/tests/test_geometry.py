"""The other field shapes of the C API, from numpy: per-side halos and depths, staggered
(node/face-centred) axes with either owner, components anywhere, 2-D fields and fields with
their own number of levels in 3-D plans; every halo cell against the analytic oracle."""
import numpy as np
import pytest

import haloswap
from conftest import assert_all, require
from oracle import Geom, check, fill

TRANSPORTS = ["p2p", "shm"]


def run(d, specs, plan_kw, transport, reps=2):
    """specs: (Field, Geom, comp_axis) per field; fills, swaps, checks every cell."""
    require(transport)
    with haloswap.Plan(d, [s[0] for s in specs], axes="xyz"[:d.ndims], transport=transport, **plan_kw) as plan:
        for _ in range(reps):
            for f, (fld, geom, cax) in enumerate(specs):
                fill(fld.array, geom, f, cax)
            plan.swap()
            bad = [check(fld.array, geom, f, cax) for f, (fld, geom, cax) in enumerate(specs)]
            assert_all(sum(bad) == 0, f"wrong cells per field {bad}")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_per_side_halos_and_depths(comm, transport):
    # EPIC's fields: halo 1 below and 2 above in x and y, z kept whole with 1 each side
    with haloswap.Decomposition(comm, (10, 9, 5)) as d:
        specs = []
        for k, order in enumerate("CFC"):
            halo = [(1, 2), (1, 2), (1, 1)]
            depth = [(1, 2), (1, 2), (0, 0)] if k < 2 else [(1, 0), (0, 2), (0, 0)]
            geom = Geom(d, halo=halo, depth=depth)
            a = np.empty(geom.shape, dtype=[np.float64, np.float32, np.int64][k], order=order)
            specs.append((haloswap.Field(a, halo=halo, depth=depth), geom, None))
        run(d, specs, dict(depth=(2, 2, 0)), transport)


@pytest.mark.parametrize("owner", ["upper", "lower"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_staggered(comm, transport, owner):
    # Lare3d: every axis split; a cell-centred field, one node-centred on every axis, one
    # face-centred on x only; periodic x, walled y and z
    with haloswap.Decomposition(comm, (9, 8, 7), procs=0, periodic=(True, False, False),
                                remainder="high") as d:
        specs = []
        for k, stag in enumerate([["cell"] * 3, ["node"] * 3, ["node", "cell", "cell"]]):
            geom = Geom(d, halo=[2, 2, 2], depth=[(2, 2)] * 3, stagger=stag, owner=[owner] * 3)
            a = np.empty(geom.shape, dtype=np.float64, order="CF"[k % 2])
            specs.append((haloswap.Field(a, halo=2, stagger=stag, owner=owner), geom, None))
        run(d, specs, dict(depth=2), transport)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_components(comm, transport):
    # vectors of 3 components in the first, last and a middle dimension, both orders
    with haloswap.Decomposition(comm, (8, 7, 3)) as d:
        geom = Geom(d, halo=[1, 1, 0], depth=[1, 1, 0], ncomp=3)
        specs = []
        for order in "CF":
            for cax in (0, 3, 1):
                shape = list(geom.shape)
                shape.insert(cax, 3)
                a = np.empty(shape, dtype=np.float32, order=order)
                specs.append((haloswap.Field(a, components=cax), geom, cax))
        run(d, specs, dict(depth=1), transport)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_surface_and_own_levels(comm, transport):
    # BRAMS: 3-D fields, a 2-D surface field, and a field with its own number of levels
    # (z whole and periodic, swapped with depth 1)
    with haloswap.Decomposition(comm, (9, 8, 4), periodic=(True, True, True)) as d:
        g3 = Geom(d, halo=[2, 2, 1], depth=[2, 2, 1])
        g_own = Geom(d, halo=[2, 2, 1], depth=[2, 2, 1], extent=[0, 0, 6])
        d2 = _Surface(d)
        g2 = Geom(d2, halo=[2, 2], depth=[2, 2])
        a3 = np.empty(g3.shape, dtype=np.float64)
        a_own = np.empty(g_own.shape, dtype=np.int32, order="F")
        a2 = np.empty(g2.shape, dtype=np.float64)
        specs = [(haloswap.Field(a3), g3, None),
                 (haloswap.Field(a_own, extent=(None, None, 6)), g_own, None),
                 (haloswap.Field(a2), g2, None)]
        run(d, specs, dict(depth=(2, 2, 1)), transport)


class _Surface:
    """The x-y part of a 3-D decomposition, for the oracle of a surface field."""

    def __init__(self, d):
        self.ndims = 2
        for k in ("local_shape", "offset", "global_shape", "periodic", "procs", "coords"):
            setattr(self, k, getattr(d, k)[:2])


def test_oneway(comm):
    # MONC's TVD advection: lower strips go to the lower neighbour only
    with haloswap.Decomposition(comm, (10, 6, 2), procs=(0, 1, 1)) as d:
        for direction in ("lower", "upper"):
            geom = Geom(d, halo=[2, 0, 0], depth=[(0, 2) if direction == "lower" else (2, 0),
                                                 0, 0])
            a = np.empty(geom.shape)
            with haloswap.Plan(d, a, axes="xyz"[:d.ndims], depth=(2, 0, 0), oneway=(direction, 0)) as plan:
                fill(a, geom, 0)
                plan.swap()
                assert_all(check(a, geom, 0) == 0, f"oneway {direction}: wrong cells")
