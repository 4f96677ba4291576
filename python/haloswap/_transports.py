"""The transports of this build: names, availability, options (from the library's own
listing, hs_transport_options)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional

from mpi4py import MPI

from . import _core
from ._errors import Error

__all__ = ["Option", "TransportInfo", "transports", "transport_names"]

_OPTION_LINE = re.compile(r"^  ([A-Za-z_][\w-]*)=(.*?)  \((.*?)\) (.*)$")


@dataclass(frozen=True)
class Option:
    """One option a transport accepts (``core``: accepted by every transport)."""
    name: str
    default: str
    allowed: str
    help: str
    core: bool = False


@dataclass(frozen=True)
class TransportInfo:
    """A transport: ``built`` into this library, ``available`` on the communicator asked
    about (``reason`` says why not), its one-line ``summary`` and its ``options``."""
    name: str
    built: bool
    available: bool
    reason: str = ""
    summary: str = ""
    options: List[Option] = field(default_factory=list)


def transport_names() -> List[str]:
    """Names of the transports built into this library (no MPI communication)."""
    return _core.transport_names()


def _parse_options(text: str):
    summary, opts, core = "", [], False
    for i, line in enumerate(text.splitlines()):
        if i == 0:
            summary = line.split(": ", 1)[1] if ": " in line else line
            continue
        if line.strip() == "options of every transport:":
            core = True
            continue
        m = _OPTION_LINE.match(line)
        if m:
            default = "" if m.group(2) == '""' else m.group(2)
            opts.append(Option(m.group(1), default, m.group(3), m.group(4), core))
    return summary, opts


def transports(comm: Optional[MPI.Comm] = None) -> List[TransportInfo]:
    """Every transport the library knows: the built ones in registry order, then the known
    ones this build leaves out. Collective over ``comm`` (default ``MPI.COMM_WORLD``):
    availability is decided by all its ranks together."""
    comm = MPI.COMM_WORLD if comm is None else comm
    built = _core.transport_names()
    out: List[TransportInfo] = []
    for name in built:
        ok, why = _core.transport_available(comm.py2f(), name)
        try:
            summary, opts = _parse_options(_core.transport_options(name))
        except Error:
            summary, opts = "", []
        out.append(TransportInfo(name, True, ok, why, summary, opts))
    for tid in range(1, 64):
        name = _core.transport_id_name(tid)
        if name and name not in built and all(t.name != name for t in out):
            ok, why = _core.transport_available(comm.py2f(), name)
            out.append(TransportInfo(name, False, False, why))
    return out
