"""Forward swaps against the analytic oracle: every transport, both memory orders, every
dtype, 2-D and 3-D grids, box and star, periodic and walled axes."""
import time

import numpy as np
import pytest

import haloswap
from conftest import assert_all, require, transport_table
from oracle import Geom, check, fill

DTYPES = [np.float64, np.float32, np.int32, np.int64]
TRANSPORTS = list(transport_table())


# auto's trial kept short: the test is of its plumbing, not of its choice.
FAST = {"auto": {"rounds": 1, "swaps": 1, "candidates": "p2p+shm"}}


def make_fields(geom, orders):
    """One array per dtype and memory order, all in one plan."""
    return [np.empty(geom.shape, dtype=t, order=o) for t in DTYPES for o in orders]


def swap_and_check(d, plan_kw, geom, orders="CF", reps=2):
    arrays = make_fields(geom, orders)
    with haloswap.Plan(d, arrays, axes="xyz"[:d.ndims], **plan_kw) as plan:
        for _ in range(reps):
            for f, a in enumerate(arrays):
                fill(a, geom, f)
            plan.swap()
            bad = [check(a, geom, f) for f, a in enumerate(arrays)]
            assert_all(sum(bad) == 0, f"wrong cells per dtype {bad} ({plan.selected_transport})")
    return arrays


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_transport_3d(comm, transport):
    require(transport)
    # x, y split (z whole and periodic: a self wrap), walled y.
    with haloswap.Decomposition(comm, (10, 9, 4), periodic=(True, False, True)) as d:
        geom = Geom(d, halo=[2, 2, 1], depth=[2, 2, 1])
        swap_and_check(d, dict(depth=(2, 2, 1), transport=transport,
                               options=FAST.get(transport)), geom)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_transport_2d_star(comm, transport):
    require(transport)
    with haloswap.Decomposition(comm, (11, 7), periodic=(False, True)) as d:
        geom = Geom(d, halo=[3, 2], depth=[1, 2], stencil="star")
        swap_and_check(d, dict(depth=(1, 2), halo=(3, 2), stencil="star", transport=transport,
                               options=FAST.get(transport)), geom)


def test_all_split_walled(comm):
    # every axis split over the ranks MPI chooses, nothing periodic: the walls stay untouched
    with haloswap.Decomposition(comm, (8, 7, 6), procs=0, periodic=False) as d:
        geom = Geom(d, halo=[1, 2, 1], depth=[1, 2, 1])
        swap_and_check(d, dict(depth=(1, 2, 1)), geom, "C")


def test_halo_wider_than_depth(comm):
    # MONC's pressure: allocated with halo 2, swapped at depth 1 (the outer cells untouched)
    with haloswap.Decomposition(comm, (9, 8, 5)) as d:
        geom = Geom(d, halo=[2, 2, 0], depth=[1, 1, 0])
        swap_and_check(d, dict(depth=1, halo=(2, 2, 0)), geom, "F")


@pytest.mark.parametrize("options", [{"persistent": 1}, {"dtype": 0}, "staged=1"])
def test_options(comm, options):
    with haloswap.Decomposition(comm, (9, 8, 3)) as d:
        geom = Geom(d, halo=[1, 1, 0], depth=[1, 1, 0])
        swap_and_check(d, dict(depth=1, transport="p2p", options=options), geom, reps=3)


def test_late_rank_does_not_delay_start_arrays_timing(comm):
    # start(arrays) makes no collective call: with rank 1 arriving 1 s late, the other ranks'
    # start(arrays) returns at once (bound 0.5 s: timing under load). After 40 swaps, past
    # the transport's start-up trials (p2p times its datatype modes over the first swaps).
    if comm.Get_size() < 2:
        pytest.skip("needs a late rank and another")
    with haloswap.Decomposition(comm, (16, 12, 4)) as d:
        took = late_start(comm, d)
    assert_all(comm.Get_rank() == 1 or took < 0.5, f"start(arrays) took {took:.3f} s")


def late_start(comm, d):
    a, b = d.empty(halo=(1, 1, 0), fill=1.0), d.empty(halo=(1, 1, 0), fill=2.0)
    with haloswap.Plan(d, a, transport="p2p") as p:
        for _ in range(40):
            p.swap([b])
        comm.Barrier()
        if comm.Get_rank() == 1:
            time.sleep(1.0)
        t0 = time.perf_counter()
        p.start([b])
        took = time.perf_counter() - t0
        p.complete()
    return took
