"""The reverse exchange against the serial result in the documented order (the owner's
offsets in canonical order), bit for bit: every transport, both memory orders, every dtype,
every op; accumulate_fill; the halo cells are left as they were."""
import numpy as np
import pytest

import haloswap
from conftest import assert_all, require, transport_table
from oracle import OPS, SENTINEL, Geom, expected_reverse, fill, fill_reverse, check

DTYPES = [np.float64, np.float32, np.int32, np.int64]
FAST = {"auto": {"rounds": 1, "swaps": 1, "candidates": "p2p+shm"}}


def reverse_and_check(comm, d, geom, plan_kw, ops=OPS):
    arrays = [np.empty(geom.shape, dtype=t, order=o) for t in DTYPES for o in "CF"]
    with haloswap.Plan(d, arrays, axes="xyz"[:d.ndims], **plan_kw) as plan:
        for op in ops:
            for f, a in enumerate(arrays):
                fill_reverse(a, geom, f, comm.Get_rank())
            before = [a.copy() for a in arrays]
            plan.reverse(op)
            bad = []
            for f, a in enumerate(arrays):
                want, idx = expected_reverse(geom, f, op, a.dtype)
                got = a[idx]
                wrong = int(np.count_nonzero(got.view(np.uint8) != want.view(np.uint8))
                            if got.flags.c_contiguous else
                            np.count_nonzero(np.ascontiguousarray(got).view(np.uint8) !=
                                             np.ascontiguousarray(want).view(np.uint8)))
                halo = np.ones(a.shape, bool)
                halo[idx] = False
                wrong += int(np.count_nonzero(a[halo] != before[f][halo]))
                bad.append(wrong)
            assert_all(sum(bad) == 0, f"{op}: wrong bytes/cells per field {bad} "
                                      f"({plan.selected_transport})")


@pytest.mark.parametrize("transport", list(transport_table()))
def test_every_transport(comm, transport):
    require(transport)
    with haloswap.Decomposition(comm, (9, 8, 3), periodic=(True, False, True)) as d:
        geom = Geom(d, halo=[2, 2, 1], depth=[2, 1, 1])
        reverse_and_check(comm, d, geom, dict(depth=(2, 1, 1), transport=transport,
                                              options=FAST.get(transport)))


def test_per_side_depths_star_2d(comm):
    with haloswap.Decomposition(comm, (11, 9), periodic=(True, True)) as d:
        geom = Geom(d, halo=[(1, 2), (2, 1)], depth=[(1, 2), (2, 1)], stencil="star")
        arrays = [np.empty(geom.shape, dtype=np.float64) for _ in range(2)]
        fields = [haloswap.Field(a, halo=[(1, 2), (2, 1)], depth=[(1, 2), (2, 1)])
                  for a in arrays]
        with haloswap.Plan(d, fields, axes="xyz"[:d.ndims], depth=2, stencil="star") as plan:
            for f, a in enumerate(arrays):
                fill_reverse(a, geom, f, comm.Get_rank())
            plan.reverse("sum")
            bad = 0
            for f, a in enumerate(arrays):
                want, idx = expected_reverse(geom, f, "sum", a.dtype)
                bad += int(np.count_nonzero(a[idx] != want))
            assert_all(bad == 0, f"{bad} wrong owner cells")


def test_split_phase_and_accumulate_fill(comm):
    with haloswap.Decomposition(comm, (8, 7, 2)) as d:
        geom = Geom(d, halo=[1, 1, 0], depth=[1, 1, 0])
        a = np.empty(geom.shape)
        with haloswap.Plan(d, a, axes="xyz"[:d.ndims], depth=1) as plan:
            fill_reverse(a, geom, 0, comm.Get_rank())
            plan.reverse_start("max")
            assert plan.in_progress == "reverse"
            plan.reverse_complete()
            want, idx = expected_reverse(geom, 0, "max", a.dtype)
            assert_all(np.array_equal(a[idx], want), "reverse_start/complete")
            # accumulate_fill: owners sum, then every halo holds the owners' totals
            fill_reverse(a, geom, 0, comm.Get_rank())
            plan.accumulate_fill("sum")
            want, idx = expected_reverse(geom, 0, "sum", a.dtype)
            assert_all(np.array_equal(a[idx], want), "accumulate_fill: owners")
            b = np.empty_like(a)
            with haloswap.Plan(d, b, axes="xyz"[:d.ndims], depth=1) as ref:
                b[...] = SENTINEL
                b[idx] = want
                ref.swap()
            assert_all(np.array_equal(a, b), "accumulate_fill: halos hold the owners' sums")
