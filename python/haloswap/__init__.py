"""haloswap: halo (ghost-cell) exchange for structured grids over interchangeable MPI
transports, for numpy arrays and mpi4py communicators.

>>> from mpi4py import MPI
>>> import numpy as np, haloswap
>>> d = haloswap.Decomposition(MPI.COMM_WORLD, (64, 48, 32))   # x, y periodic; z whole
>>> u = d.empty(halo=(2, 2, 0))                                   # indexed [x, y, z]
>>> with haloswap.Plan(d, [u], depth=2, transport="p2p") as plan:
...     plan.swap()                                               # every halo cell written

The package calls the C library (include/haloswap.h) and adds no logic of its own beyond
describing arrays to it; see docs/python.md.
"""
from __future__ import annotations

from mpi4py import MPI as _MPI

from . import _core, _errors
from ._errors import *  # noqa: F401,F403  (the exception classes)
from ._errors import Error, error_class
from ._decomp import Decomposition
from ._plan import DTYPES, Field, Plan
from ._transports import Option, TransportInfo, transport_names, transports

__version__ = "%d.%d.%d" % _core.VERSION
MAX_FIELDS: int = _core.MAX_FIELDS
#: The MPI library this package was built against ("openmpi" or "mpich").
MPI_FLAVOUR: str = _core.MPI_FLAVOUR


def _check_mpi() -> None:
    vendor = _MPI.get_vendor()[0]
    used = {"Open MPI": "openmpi", "MPICH": "mpich"}.get(vendor, vendor.lower())
    if MPI_FLAVOUR != "unknown" and used != MPI_FLAVOUR:
        import os
        import sys
        raise ImportError(
            f"haloswap was built against {MPI_FLAVOUR} but mpi4py ({_MPI.__file__}) uses "
            f"{vendor}: one process cannot load two MPI libraries. Rebuild haloswap against "
            f"this mpi4py's MPI (the build finds it from mpi4py; leave MPICC unset or name "
            f"{used}'s compiler): {sys.executable} -m pip install --force-reinstall --no-deps "
            f"--no-build-isolation <haloswap checkout>/python (docs/python.md, \"Install\")"
            f"{'' if 'MPICC' not in os.environ else '; MPICC is set to ' + os.environ['MPICC']}")


_check_mpi()


def transport_options(name: str) -> str:
    """The library's listing of a transport: its summary and every option it accepts with
    default, allowed values and help (what ``hs_info`` prints)."""
    return _core.transport_options(name)


__all__ = ["Decomposition", "Plan", "Field", "DTYPES", "transports", "transport_names",
           "transport_options", "TransportInfo", "Option", "Error", "error_class",
           "MAX_FIELDS", "MPI_FLAVOUR"] + list(_errors.__all__)
