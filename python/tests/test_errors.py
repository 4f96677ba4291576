"""Bad input: a clear exception naming the argument, raised on every rank alike (one rank's
fault included), never a crash or a hang; the plan is usable after a refused call."""
import numpy as np
import pytest

import haloswap
from conftest import assert_all


def raises_everywhere(comm, exc, fn, *words, local=False, same=True):
    """fn raises exc on every rank, with the same message everywhere, naming ``words``.
    local: each rank found the error itself, so its message starts with "rank N: ";
    same=False: the messages may differ (each names the failure that rank saw first)."""
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    if local:
        prefix = f"rank {comm.Get_rank()}: "
        assert_all(msg.startswith(prefix), f"{msg!r} does not start with {prefix!r}")
        msg = msg[len(prefix):]
    if same:
        msgs = comm.allgather(msg)
        assert_all(all(m == msgs[0] for m in msgs), f"messages differ: {msgs}")
    for w in words:
        assert_all(w in msg, f"{w!r} not in {msg!r}")
    return info.value


@pytest.fixture
def d(comm):
    with haloswap.Decomposition(comm, (8, 6, 3)) as dec:
        yield dec


def good(d, **kw):
    return d.empty(halo=(1, 1, 0), **kw)


@pytest.mark.parametrize("dtype", [np.complex128, np.int16, np.uint32, np.bool_, ">f8"])
def test_wrong_dtype(comm, d, dtype):
    a = np.zeros(good(d).shape, dtype=dtype)
    e = raises_everywhere(comm, haloswap.ArgumentTypeError, lambda: haloswap.Plan(d, a),
                          "fields[0]", "dtype")
    assert isinstance(e, TypeError) and e.status_name == "HS_ERR_ARG"


def test_wrong_shape(comm, d):
    a = np.zeros(tuple(n + 2 for n in d.local_shape))  # z has a halo the plan does not give
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Plan(d, a, halo=(1, 1, 0)), "fields[0]", "shape")


def test_odd_halo(comm, d):
    a = np.zeros((d.local_shape[0] + 3, d.local_shape[1] + 2, d.local_shape[2]))
    raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, a),
                      "fields[0]", "axis 0", "halo=(lo, hi)")


def test_wrong_ndim(comm, d):
    a = np.zeros((4, 4))
    with haloswap.Decomposition(comm, (8, 6)) as d2:
        b = np.zeros((4,) * 3)
        raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d2, b),
                          "fields[0]", "dimensions")
    raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, [good(d), a[None]]),
                      "fields[1]")


def test_not_contiguous(comm, d):
    big = np.zeros(tuple(2 * n for n in good(d).shape))
    a = big[::2, ::2, ::2]
    raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, a),
                      "fields[0]", "not contiguous")


def test_read_only(comm, d):
    a = good(d)
    a.flags.writeable = False
    raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, a),
                      "fields[0]", "read-only")


def test_not_an_array(comm, d):
    raises_everywhere(comm, haloswap.ArgumentTypeError,
                      lambda: haloswap.Plan(d, [good(d), [[1.0]]]), "fields[1]", "list")


def test_same_array_twice(comm, d):
    a = good(d)
    raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, [a, a]),
                      "fields[1]", "fields[0]")


def test_halo_smaller_than_depth(comm, d):
    # the library's own check (the array is consistent with its halo of 1)
    raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, good(d), depth=2),
                      "fields[0]", "halo")


def test_too_small_for_its_halo(comm, d):
    a = np.zeros((1, 1, 1))
    raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, a),
                      "fields[0]", "axis 0")


def test_one_rank_wrong(comm, d):
    # only the last rank's array is wrong: every rank raises its message, none hangs
    a = good(d) if comm.Get_rank() != comm.Get_size() - 1 else good(d)[:-1]
    e = raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, a),
                          f"rank {comm.Get_size() - 1}:", "fields[0]")
    assert e.status == haloswap.ArgumentError.status


def test_ranks_disagree(comm, d):
    if comm.Get_size() == 1:
        pytest.skip("needs two ranks to disagree")
    a = d.empty(halo=(2, 2, 0))
    depth = 1 if comm.Get_rank() == 0 else 2
    e = raises_everywhere(comm, haloswap.MismatchError, lambda: haloswap.Plan(d, a, depth=depth))
    assert e.status_name == "HS_ERR_MISMATCH"


def test_bad_transport_and_option(comm, d):
    e = raises_everywhere(comm, haloswap.Error,
                          lambda: haloswap.Plan(d, good(d), transport="carrier-pigeon"),
                          "carrier-pigeon")
    assert e.status_name in ("HS_ERR_ARG", "HS_ERR_UNAVAILABLE")
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Plan(d, good(d), transport="p2p",
                                            options={"persistent": 7}), "persistent", "7")
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Plan(d, good(d), options={"no_such_key": 1}),
                      "no_such_key")


def test_bad_keywords(comm, d):
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Plan(d, good(d), stencil="cross"), "stencil", "cross")
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Plan(d, good(d), oneway=("sideways", 0)), "oneway")
    with haloswap.Plan(d, good(d)) as p:
        raises_everywhere(comm, haloswap.ArgumentError, lambda: p.reverse("product"),
                          "op", "product")
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Decomposition(comm, (8,)), "global_shape")
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Decomposition(comm, (8, 6), periodic=(1, 1, 1)),
                      "periodic")
    raises_everywhere(comm, haloswap.ArgumentError,
                      lambda: haloswap.Decomposition(comm, (comm.Get_size() * 2, 6),
                                                     procs=(comm.Get_size() + 1, 1)), "procs")


# Transports whose swaps carry a failure to the neighbours (docs/design.md, "Errors during
# a swap"): on them a failed round leaves the plan failed until it is freed.
FAILROUND = ("p2p", "rma-fence", "rma-pscw", "rma-passive", "shmem", "shm", "cma", "nbr")


def test_state_errors(comm, d):
    a = good(d)
    with haloswap.Plan(d, a) as p:
        p.start()
        assert p.in_progress == "swap"
        raises_everywhere(comm, haloswap.StateError, lambda: p.reverse("sum"), "in progress")
        raises_everywhere(comm, haloswap.StateError, p.free, "in progress")
        p.complete()
        assert p.in_progress is None
        p.swap()  # still usable
        raises_everywhere(comm, haloswap.StateError, d.free, "not freed")
    # A call out of turn fails the swap round it is in; on the transports that carry a
    # failure, the plan then stays failed until it is freed (docs/design.md).
    with haloswap.Plan(d, a) as p:
        raises_everywhere(comm, haloswap.StateError, p.complete, "no swap was started")
        if p.selected_transport in FAILROUND:
            raises_everywhere(comm, haloswap.StateError, p.swap, "failed in an earlier swap")
    with haloswap.Plan(d, a) as p:
        p.start()
        raises_everywhere(comm, haloswap.StateError, p.start, "already in progress", local=True)
        assert p.in_progress == "swap"  # the swap started first goes on
        if p.selected_transport in FAILROUND:
            # Its completion reports the failure; the plan is failed from then on.
            raises_everywhere(comm, haloswap.StateError, p.complete, "already in progress",
                              local=True)
            assert p.in_progress is None
            raises_everywhere(comm, haloswap.StateError, p.swap, "failed in an earlier swap",
                              "already in progress", same=False)
        else:
            p.complete()


def test_per_swap_arrays_checked(comm, d):
    a = good(d)
    with haloswap.Plan(d, [a, good(d, dtype=np.float32)]) as p:
        raises_everywhere(comm, haloswap.ArgumentError, lambda: p.swap([good(d)]),
                          "arrays has 1 entries")
        raises_everywhere(comm, haloswap.ArgumentError,
                          lambda: p.swap([None, good(d)]), "arrays[1]", "float32")
        raises_everywhere(comm, haloswap.ArgumentError,
                          lambda: p.swap([good(d, order="F"), None]), "arrays[0]", "order")
        p.swap([good(d), None])


def test_freed_plan(comm, d):
    p = haloswap.Plan(d, good(d))
    p.free()
    assert p.closed
    raises_everywhere(comm, haloswap.ArgumentError, p.swap, "plan is NULL")
