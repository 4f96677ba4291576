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


def test_state_errors(comm, d):
    a = good(d)
    with haloswap.Plan(d, a) as p:
        p.start()
        assert p.in_progress == "swap"
        raises_everywhere(comm, haloswap.StateError, lambda: p.reverse("sum"),
                          "Plan.reverse: a swap is in progress")
        raises_everywhere(comm, haloswap.StateError, p.free, "Plan.free", "in progress")
        p.complete()
        assert p.in_progress is None
        p.swap()  # still usable
        raises_everywhere(comm, haloswap.StateError, d.free, "not freed")
    # A misuse that begins no round is refused on the rank that makes it, in a message naming
    # the Python method, and leaves the plan usable (docs/design.md, "Errors during a swap").
    with haloswap.Plan(d, a) as p:
        raises_everywhere(comm, haloswap.StateError, p.complete, "Plan.complete",
                          "no swap was started", local=True)
        raises_everywhere(comm, haloswap.StateError, p.test, "Plan.test",
                          "no swap was started", local=True)
        raises_everywhere(comm, haloswap.StateError, p.reverse_complete,
                          "Plan.reverse_complete", "no reverse exchange was started", local=True)
        p.swap()
        p.start()
        raises_everywhere(comm, haloswap.StateError, p.start,
                          "Plan.start: a swap is already in progress")
        raises_everywhere(comm, haloswap.StateError, lambda: p.swap([a]),
                          "Plan.swap: a swap is already in progress")
        assert p.in_progress == "swap"  # the swap started first goes on
        p.complete()
        p.reverse_start()
        raises_everywhere(comm, haloswap.StateError, p.reverse_start,
                          "Plan.reverse_start: a reverse exchange is already in progress")
        p.reverse_complete()
        p.swap()
        assert p.stats["swaps"] == 3 and p.stats["reverses"] == 1


def test_misuse_on_one_rank(comm, d):
    # One rank completes a swap it never started while the others swap: its neighbours get
    # its error in that very swap (they waited for its data), and it keeps a usable plan.
    if comm.Get_size() == 1:
        pytest.skip("needs two ranks")
    last = comm.Get_size() - 1
    with haloswap.Plan(d, good(d)) as p:
        fn = p.complete if comm.Get_rank() == last else p.swap
        raises_everywhere(comm, haloswap.StateError, fn, f"rank {last}:",
                          "no swap was started")


def test_per_swap_arrays_checked(comm, d):
    # A per-swap array that does not match the registered one fails that swap's round on
    # every rank (no collective call): the plan is failed then, as in C.
    a = good(d)
    for arrays, words in (([good(d)], ("Plan.swap: arrays has 1 entries",)),
                          ([None, good(d)], ("Plan.swap: arrays[1]", "float32")),
                          ([good(d, order="F"), None], ("Plan.swap: arrays[0]", "order"))):
        with haloswap.Plan(d, [a, good(d, dtype=np.float32)]) as p:
            raises_everywhere(comm, haloswap.ArgumentError, lambda: p.swap(arrays), *words)
            raises_everywhere(comm, haloswap.StateError, p.swap, "failed in an earlier swap",
                              "Plan.free")
    with haloswap.Plan(d, [a, good(d, dtype=np.float32)]) as p:
        p.swap([good(d), None])
        raises_everywhere(comm, haloswap.ArgumentError, lambda: p.reverse("product"),
                          "Plan.reverse: op = 'product'")


def test_one_rank_per_swap_arrays_wrong(comm, d):
    # Only the last rank passes a wrong array: its start raises (its failed round is whole),
    # and every neighbour's complete of that swap raises its error.
    last = comm.Get_size() - 1
    with haloswap.Plan(d, good(d)) as p:
        b = good(d)[:-1] if comm.Get_rank() == last else good(d)
        raises_everywhere(comm, haloswap.ArgumentError, lambda: p.start([b]).complete(),
                          f"rank {last}:", "Plan.start: arrays[0]")
        assert p.in_progress is None


def test_registered_array_resize_refused(comm, d):
    # numpy's resize(..., refcheck=False) would free the memory the plan registered: numpy
    # itself refuses it while the plan lives (the plan holds a weak reference to the array).
    a = np.zeros(good(d).shape)
    with haloswap.Plan(d, a, axes="xyz") as p:
        p.swap()
        with pytest.raises(ValueError, match="cannot resize"):
            a.resize((a.shape[0] + 8,) + a.shape[1:], refcheck=False)
        p.swap()
    a.resize((a.shape[0] + 8,) + a.shape[1:], refcheck=False)  # the plan is gone


def test_registered_array_changed(comm, d):
    # An array whose layout changed under the plan (here its shape; a buffer moved the same)
    # is refused at the next operation, on every rank through the round, never written.
    a = good(d)
    last = comm.Get_size() - 1
    with haloswap.Plan(d, a) as p:
        p.swap()
        if comm.Get_rank() == last:
            a.shape = (a.shape[0] * a.shape[1], a.shape[2])
        raises_everywhere(comm, haloswap.ArgumentError, p.swap, f"rank {last}:",
                          "Plan.swap: fields[0] was resized or moved", "never resize")


def test_axis_order(comm):
    # A square block indexed [y, x] would fit as [x, y]: refused without axes=, and with
    # axes="yx" swapped as the [x, y] array's transpose.
    n = comm.Get_size()
    with haloswap.Decomposition(comm, (4 * n, 4), procs=(n, 1)) as d:
        nx, ny = d.local_shape
        assert nx == ny == 4
        yx = np.zeros((ny + 2, nx + 2))
        raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, yx),
                          "same extent (6) on dimensions 0 and 1", "axes='xy'", "'yx'")
        xy = d.empty(halo=1)
        xy[1:-1, 1:-1] = np.arange(nx)[:, None] * 10 + np.arange(ny)[None, :] + 100 * d.rank
        yx[...] = xy.T
        with haloswap.Plan(d, [xy, haloswap.Field(yx, axes="yx")]) as p:
            p.swap()
        assert_all(np.array_equal(yx, xy.T), "the [y, x] array swapped otherwise")
    with haloswap.Decomposition(comm, (8, 6, 3)) as d:
        nx, ny, nz = d.local_shape
        zyx = np.zeros((nz, ny + 4, nx + 4))
        raises_everywhere(comm, haloswap.ArgumentError, lambda: haloswap.Plan(d, zyx, depth=2),
                          "indexed [z, y, x] it does", "axes='zyx'")
        with haloswap.Plan(d, zyx, depth=2, axes="zyx") as p:
            p.swap()


def test_freed_plan(comm, d):
    p = haloswap.Plan(d, good(d))
    p.free()
    assert p.closed
    raises_everywhere(comm, haloswap.ArgumentError, p.swap, "Plan.swap: plan is NULL")
