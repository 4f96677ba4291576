"""pytest under mpiexec: every rank runs the same tests in the same order. Assertions are
collective (assert_all), so all ranks pass or fail a test together and none is left
waiting in a collective call; ranks other than 0 print nothing unless they fail alone."""
import os

import pytest
from mpi4py import MPI

import haloswap

COMM = MPI.COMM_WORLD


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if COMM.Get_rank() != 0:
        rep = config.pluginmanager.get_plugin("terminalreporter")
        if rep is not None:
            config.pluginmanager.unregister(rep)


def pytest_report_header(config):
    return (f"haloswap {haloswap.__version__} ({haloswap.MPI_FLAVOUR}), "
            f"{COMM.Get_size()} ranks, mpi4py {MPI.Get_library_version().splitlines()[0]}")


def assert_all(ok, what=""):
    """Assert on every rank that ``ok`` holds on every rank; the message lists the ranks
    where it does not and what each of them said."""
    bad = COMM.allgather(None if ok else (COMM.Get_rank(), str(what)))
    bad = [b for b in bad if b is not None]
    assert not bad, "; ".join(f"rank {r}: {w}" for r, w in bad)


@pytest.fixture(scope="session")
def comm():
    return COMM


_TRANSPORTS = None


def transport_table():
    global _TRANSPORTS
    if _TRANSPORTS is None:
        _TRANSPORTS = {t.name: t for t in haloswap.transports(COMM)}
    return _TRANSPORTS


def require(name):
    """Skip (on every rank: availability is collective) unless ``name`` is usable here."""
    t = transport_table().get(name)
    if t is None:
        pytest.skip(f"{name}: not a transport of this library")
    if not t.available:
        pytest.skip(f"{name}: {t.reason}")


# Every transport the library knows, built or not: an unusable one is a reported skip.
ALL_TRANSPORTS = haloswap.transport_names() + [
    t for t in ("shmem", "cma") if t not in haloswap.transport_names()]


def pytest_sessionfinish(session, exitstatus):
    # Same exit status on every rank (pytest's 5, "no tests", counts as a failure here).
    status = COMM.allreduce(int(exitstatus), op=MPI.MAX)
    session.exitstatus = status


os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
