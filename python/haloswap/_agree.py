"""Collective agreement on the package's own argument checks, as the library does for its
own: the lowest rank with a fault tells its exception to every rank, and every rank raises
it, so no rank is left waiting in a collective call the others never make."""
from __future__ import annotations

from typing import Callable, Optional

from mpi4py import MPI

from ._errors import Error, error_class


def agree(comm: MPI.Comm, check: Callable[[], None]) -> None:
    """Runs ``check`` (which raises haloswap.Error on a bad argument) on every rank of
    ``comm`` and raises the lowest failing rank's error everywhere."""
    local: Optional[Error] = None
    try:
        check()
    except Error as e:
        local = e
    rank = comm.Get_rank()
    first = comm.allreduce(rank if local is not None else comm.Get_size(), op=MPI.MIN)
    if first == comm.Get_size():
        return
    info = None
    if rank == first:
        assert local is not None
        info = (local.status, type(local).__name__, local.message)
    status, clsname, message = comm.bcast(info, root=first)
    if local is not None and rank == first:
        cls = type(local)
    else:
        cls = error_class(status)
        for sub in cls.__subclasses__():
            if sub.__name__ == clsname:
                cls = sub
    if not message.startswith("rank "):
        message = f"rank {first}: {message}"
    raise cls(message, status)
