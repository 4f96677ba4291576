"""The Python API around the swaps: decomposition attributes, split-phase swaps and
per-swap arrays (checked by the oracle), transports(), describe/stats, lifetime."""
import gc
import warnings

import numpy as np
import pytest
from mpi4py import MPI

import haloswap
from conftest import assert_all, require
from oracle import Geom, check, fill, written


def test_decomposition_attributes(comm):
    with haloswap.Decomposition(comm, (12, 10, 4), periodic=(True, False, False)) as d:
        assert d.ndims == 3 and d.global_shape == (12, 10, 4)
        assert d.size == comm.Get_size() and isinstance(d.comm, MPI.Cartcomm)
        assert d.procs[2] == 1 and np.prod(d.procs) == d.size
        # every cell owned exactly once: the local boxes tile the global grid
        owned = np.zeros(d.global_shape, int)
        for sl in comm.allgather(d.local_slices):
            owned[sl] += 1
        assert_all((owned == 1).all(), "local boxes do not tile the grid")
        # neighbours agree with MPI's own Cartesian shifts (axis order x, y, z here)
        for a in range(3):
            src, dst = d.comm.Shift(a, 1)
            up = tuple(1 if k == a else 0 for k in range(3))
            down = tuple(-k for k in up)
            want = [None if r == MPI.PROC_NULL else r for r in (dst, src)]
            assert_all([d.neighbor(up), d.neighbor(down)] == want, f"axis {a}")
        assert len(d.neighbors) == 26
        assert "Decomposition" in repr(d)


def test_ranges_and_remainder(comm):
    n = comm.Get_size()
    ranges = [list(range(1, n + 1)), None]
    with haloswap.Decomposition(comm, (n * (n + 1) // 2, 3), procs=(n, 1),
                                ranges=ranges) as d:
        assert_all(d.local_shape[0] == d.coords[0] + 1, f"ranges: {d.local_shape}")
    with haloswap.Decomposition(comm, (2 * n + 1, 3), procs=(n, 1), remainder="high") as d:
        last = d.coords[0] == n - 1
        assert_all(d.local_shape[0] == 2 + (1 if last else 0), f"high: {d.local_shape}")


def test_adopts_cartcomm(comm):
    cart = comm.Create_cart([comm.Get_size(), 1], periods=[True, False])
    with haloswap.Decomposition(cart, (comm.Get_size() * 3, 4)) as d:
        assert d.procs == (comm.Get_size(), 1) and d.periodic == (True, False)
    cart.Free()


def test_split_phase_and_per_swap_arrays(comm):
    with haloswap.Decomposition(comm, (10, 8, 3)) as d:
        geom = Geom(d, halo=[2, 2, 0], depth=[2, 2, 0])
        a, b = d.empty(halo=(2, 2, 0)), d.empty(halo=(2, 2, 0), dtype=np.int32, order="F")
        with haloswap.Plan(d, [a, b], depth=2) as plan:
            fill(a, geom, 0)
            fill(b, geom, 1)
            plan.start()
            while not plan.test():  # the swap progresses; complete is still required
                pass
            plan.complete()
            assert_all(check(a, geom, 0) + check(b, geom, 1) == 0, "start/test/complete")
            assert_all(comm.allreduce(written(geom)) > 0, "nothing to check")
            # another pair of arrays for one swap (MONC's source_data); the registered ones
            # are not touched
            a2, b2 = np.empty_like(a), np.empty_like(b)
            fill(a2, geom, 0)
            fill(b2, geom, 1)
            fill(a, geom, 0)
            plan.start([a2, b2]).complete()
            assert_all(check(a2, geom, 0) + check(b2, geom, 1) == 0, "per-swap arrays")
            assert_all(check(a, geom, 0) > 0 or written(geom) == 0, "registered a swapped")
            # the plan holds its arrays: they cannot be resized under it
            with pytest.raises(ValueError):
                a.resize(3)
            assert plan.fields[0] is a and plan.fields[1] is b


def test_oracle_sees_a_wrong_cell(comm):
    with haloswap.Decomposition(comm, (8, 6, 2)) as d:
        geom = Geom(d, halo=[1, 1, 0], depth=[1, 1, 0])
        a = d.empty(halo=(1, 1, 0))
        with haloswap.Plan(d, a, depth=1) as plan:
            fill(a, geom, 0)
            plan.swap()
            a[0, 0, 0] += 1  # a corner halo cell (written on every rank of this periodic grid)
            assert_all(check(a, geom, 0) == 1, "the oracle missed a wrong halo cell")


def test_transports_listing(comm):
    ts = haloswap.transports(comm)
    names = [t.name for t in ts]
    assert names[:len(haloswap.transport_names())] == haloswap.transport_names()
    assert "p2p" in names and "auto" in names
    p2p = next(t for t in ts if t.name == "p2p")
    assert p2p.built and p2p.available and p2p.summary
    keys = {o.name: o for o in p2p.options}
    assert "persistent" in keys and not keys["persistent"].core
    assert keys["staged"].core and keys["staged"].default == "0"
    for t in ts:
        assert t.available or t.reason, t
        if not t.built:
            assert not t.available
    assert "persistent" in haloswap.transport_options("p2p")


def test_describe_stats_selected(comm):
    require("auto")
    with haloswap.Decomposition(comm, (8, 6, 2)) as d:
        a = d.empty(halo=(1, 1, 0), fill=0.0)
        with haloswap.Plan(d, a, transport="auto", options={"rounds": 1, "swaps": 1,
                                                       "candidates": "p2p+nbr"}) as p:
            assert p.transport == "auto" and p.selected_transport in haloswap.transport_names()
            text = p.describe()
            assert text.startswith("transport auto") and "peers" in text
            p.reset_stats()
            p.swap()
            p.swap()
            st = p.stats
            assert st["swaps"] == 2 and st["bytes_allocated"] > 0
            assert "auto" in repr(p)
    assert "freed" in repr(p)


def test_lifetime_and_warnings(comm):
    d = haloswap.Decomposition(comm, (6, 4))
    p = haloswap.Plan(d, d.empty(halo=1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        p2 = haloswap.Plan(d, d.empty(halo=1))
        p2.free()
        del p2
        gc.collect()
        assert not [x for x in w if issubclass(x.category, ResourceWarning)]
    p.close()
    d.close()
    assert d.closed and p.closed


def test_error_classes():
    # every status the library names has a class; the names come from hs_status_name
    for cls in (haloswap.ArgumentError, haloswap.MismatchError, haloswap.StateError,
                haloswap.NoMemoryError, haloswap.MPIError, haloswap.UnavailableError,
                haloswap.InternalError):
        assert issubclass(cls, haloswap.Error)
        assert haloswap.error_class(cls.status) is cls
        assert cls.status_name.startswith("HS_ERR_")
    assert haloswap.error_class(999) is haloswap.Error


def test_docs_read_well():
    for obj in (haloswap, haloswap.Plan, haloswap.Decomposition, haloswap.Field,
                haloswap.Plan.swap, haloswap.Plan.reverse, haloswap.transports):
        assert obj.__doc__ and len(obj.__doc__.strip()) > 40, obj


@pytest.mark.parametrize("transport", ["shm", "cma"])
def test_remap_option(comm, transport):
    # numpy memory made node-shared in place: shm and cma read it directly
    require(transport)
    with haloswap.Decomposition(comm, (10, 6, 3)) as d:
        geom = Geom(d, halo=[2, 2, 0], depth=[2, 2, 0])
        a = d.empty(halo=(2, 2, 0))
        fill(a, geom, 0)
        try:
            plan = haloswap.Plan(d, a, depth=2, transport=transport, options={"remap": 1})
        except haloswap.UnavailableError as e:
            pytest.skip(str(e))
        with plan:
            plan.swap()
            assert_all(check(a, geom, 0) == 0, "remap swap")


def test_version_is_the_libraries(comm):
    # __version__ comes from the C library (hs_version); the installed distribution's version
    # from pyproject.toml's reading of haloswap.h. An install from a checkout or an sdist whose
    # C sources say another version than its metadata fails here.
    from importlib.metadata import version
    assert version("haloswap") == haloswap.__version__, (version("haloswap"), haloswap.__version__)
