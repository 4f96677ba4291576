"""The combine order (Plan(order=...)): a list of offsets against the serial fold in that
order; the sweep, forward and reverse, against the sweep done serially over every rank's
array; every point, bit for bit."""
import numpy as np
import pytest

import haloswap
from conftest import assert_all, require, transport_table
from oracle import Geom, expected_reverse, fill, fill_reverse, sweep_emulate

FAST = {"auto": {"rounds": 1, "swaps": 1, "candidates": "p2p+shm"}}
EPIC = [(-1, 0), (1, 0), (0, -1), (0, 1), (1, 1), (1, -1), (-1, -1), (-1, 1)]


@pytest.mark.parametrize("order", [EPIC, "reversed"])
@pytest.mark.parametrize("transport", ["p2p", "shm", "nbr"])
def test_offsets_order(comm, transport, order):
    require(transport)
    with haloswap.Decomposition(comm, (9, 8), periodic=(True, True)) as d:
        if order == "reversed":
            order = [o for o in reversed(
                [(x, y) for x in (-1, 0, 1) for y in (-1, 0, 1) if x or y])]
        geom = Geom(d, halo=[2, 2], depth=[2, 1])
        arrays = [np.empty(geom.shape, dtype=t) for t in (np.float64, np.float32)]
        with haloswap.Plan(d, arrays, axes="xyz"[:d.ndims], depth=(2, 1), order=order, transport=transport) as plan:
            assert plan.order is order
            for f, a in enumerate(arrays):
                fill_reverse(a, geom, f, comm.Get_rank())
            plan.reverse("sum")
            bad = 0
            for f, a in enumerate(arrays):
                want, idx = expected_reverse(geom, f, "sum", a.dtype, order=order)
                bad += int(np.count_nonzero(a[idx].view(np.uint8) != want.view(np.uint8)))
            assert_all(bad == 0, f"{bad} wrong bytes")


@pytest.mark.parametrize("transport", list(transport_table()))
def test_sweep(comm, transport):
    require(transport)
    halo, depth = (2, 2, 1), (2, 1, 1)
    with haloswap.Decomposition(comm, (9, 8, 4), procs=0, periodic=(True, False, True)) as d:
        for axes in (None, (2, 0, 1)):
            order = "sweep" if axes is None else ("sweep", axes)
            geom = Geom(d, halo=list(halo), depth=list(depth))
            a = np.empty(geom.shape)
            with haloswap.Plan(d, a, axes="xyz"[:d.ndims], depth=depth, halo=halo, order=order, transport=transport,
                               options=FAST.get(transport)) as plan:
                fill(a, geom, 0)
                want = sweep_emulate(comm, d, a, halo, depth, axes or (0, 1, 2))
                plan.swap()
                assert_all(np.array_equal(a, want),
                           f"forward {order}: {np.count_nonzero(a != want)} points differ")
                for op in ("sum", "replace"):
                    fill_reverse(a, geom, 0, comm.Get_rank())
                    want = sweep_emulate(comm, d, a, halo, depth, axes or (0, 1, 2), op)
                    plan.reverse(op)
                    same = np.array_equal(a.view(np.uint64), want.view(np.uint64))
                    assert_all(same, f"reverse {op} {order}: "
                                     f"{np.count_nonzero(a != want)} points differ")


def test_bad_order(comm):
    with haloswap.Decomposition(comm, (8, 6)) as d:
        a = d.empty(halo=1)
        for order, words in ((["north"], "order"), ("diagonal", "order"),
                             ([(1, 0, 0)], "offset"), ([(0, 2)], "offsets"),
                             (("sweep", (0, 0)), "repeats"), ([(1, 0)], "offset")):
            with pytest.raises(haloswap.Error) as info:
                haloswap.Plan(d, a, axes="xyz"[:d.ndims], order=order)
            msgs = comm.allgather(str(info.value))
            assert_all(len(set(msgs)) == 1 and any(w in msgs[0].lower() for w in [words]),
                       f"{order!r}: {msgs[0]}")
        with pytest.raises(haloswap.Error):
            haloswap.Plan(d, a, axes="xyz"[:d.ndims], order="sweep", stencil="star")
