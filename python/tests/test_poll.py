"""Polling to completion: on every transport (direct, staged and swept), ``start()`` and then
``test()`` with local work between the polls until it returns True. The halos are checked
against the analytic oracle at that point, before ``complete()``, and again after it. The loop
is bounded: a poll that never reports done fails, and the swap is still completed, so no rank
is left waiting."""
import os
import time

import numpy as np
import pytest

import haloswap
from conftest import assert_all, require, transport_table
from oracle import Geom, check, fill

TRANSPORTS = list(transport_table())
LIMIT_S = 60.0  # one swap's polling; far above what any transport needs
# auto's trial kept short: what is under test is its delegation, not its choice.
FAST = {"auto": {"rounds": 1, "swaps": 1, "candidates": "p2p+shm"}}
VARIANTS = ["direct", "staged", "sweep"]


def options(transport, variant):
    o = dict(FAST.get(transport, {}))
    if variant == "staged":
        o["staged"] = 1
    return o or None


def poll(plan, work):
    """test() until True or LIMIT_S; local work between polls, and every 8th time the core
    given up (the launches put more ranks than cores). Returns (done, polls)."""
    t0 = time.monotonic()
    polls = 0
    while True:
        polls += 1
        if plan.test():
            return True, polls
        if time.monotonic() - t0 > LIMIT_S:
            return False, polls
        work[:] = work * 0.999 + 1.0
        if polls % 8 == 0:
            os.sched_yield()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_poll_to_done(comm, transport, variant):
    require(transport)
    if transport == "auto" and variant == "staged":
        pytest.skip("auto refuses staged=1 (its candidates carry it)")
    with haloswap.Decomposition(comm, (10, 9, 4), periodic=(True, True, False)) as d:
        geom = Geom(d, halo=[2, 2, 0], depth=[2, 2, 0])
        arrays = [np.empty(geom.shape, dtype=t, order=o)
                  for t, o in ((np.float64, "C"), (np.int32, "F"))]
        work = np.zeros(4096)
        kw = dict(depth=(2, 2, 0), transport=transport, options=options(transport, variant),
                  axes="xyz")
        if variant == "sweep":
            kw["order"] = "sweep"
        with haloswap.Plan(d, arrays, **kw) as plan:
            for rep in range(2):
                for f, a in enumerate(arrays):
                    fill(a, geom, f)
                plan.start()
                done, polls = poll(plan, work)
                at_done = [check(a, geom, f) for f, a in enumerate(arrays)] if done else None
                plan.complete()  # always: a failed poll must not leave a neighbour waiting
                after = [check(a, geom, f) for f, a in enumerate(arrays)]
                where = f"{plan.selected_transport}, swap {rep}"
                assert_all(done, f"test() not True after {polls} polls ({where})")
                assert_all(sum(at_done) == 0, f"wrong cells at done {at_done} ({where})")
                assert_all(sum(after) == 0, f"wrong cells after complete {after} ({where})")
            test_s = plan.stats["seconds_test"]
            assert_all(test_s > 0, f"seconds_test = {test_s}: the polls were not counted")
