"""Exceptions: one class per library status, found through hs_status_name."""
from __future__ import annotations

import re
from typing import Dict, Optional, Type

from . import _core

__all__ = ["Error", "ArgumentError", "ArgumentTypeError", "MismatchError", "StateError",
           "NoMemoryError", "MPIError", "UnavailableError", "InternalError"]


class Error(Exception):
    """A haloswap call failed. ``status`` is the library's status code and ``status_name``
    its name (``"HS_ERR_ARG"``, ...); the message is the library's, the same on every rank
    of a collective call (prefixed ``rank R:`` by the rank that found the fault)."""

    status: int = -1
    status_name: str = "HS_ERR_UNKNOWN"

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        if status is not None:
            self.status = status
            self.status_name = _core.status_name(status)

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class ArgumentError(Error, ValueError):
    """A bad argument on some rank (HS_ERR_ARG)."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type or dtype (HS_ERR_ARG)."""


class MismatchError(Error, ValueError):
    """Ranks disagree about an argument that must be the same everywhere (HS_ERR_MISMATCH)."""


class StateError(Error, RuntimeError):
    """A call out of order: complete without start, start twice, free during a swap
    (HS_ERR_STATE)."""


class NoMemoryError(Error, MemoryError):
    """The library could not allocate (HS_ERR_NOMEM)."""


class MPIError(Error, RuntimeError):
    """An MPI call failed (HS_ERR_MPI); the MPI error string is in the message."""


class UnavailableError(Error, RuntimeError):
    """The transport is not built or cannot work here (HS_ERR_UNAVAILABLE)."""


class InternalError(Error, RuntimeError):
    """A bug in haloswap (HS_ERR_INTERNAL): please report it."""


_BY_NAME: Dict[str, Type[Error]] = {
    "HS_ERR_ARG": ArgumentError, "HS_ERR_MISMATCH": MismatchError,
    "HS_ERR_STATE": StateError, "HS_ERR_NOMEM": NoMemoryError, "HS_ERR_MPI": MPIError,
    "HS_ERR_UNAVAILABLE": UnavailableError, "HS_ERR_INTERNAL": InternalError,
}


def _class_name(status_name: str) -> str:
    words = status_name[len("HS_ERR_"):].split("_")
    return "".join(w.capitalize() for w in words) + "Error"


def _build_table() -> Dict[int, Type[Error]]:
    """Status code -> class, from the library's own names: a status the library adds later
    gets a class of its own (a subclass of Error named after it)."""
    table: Dict[int, Type[Error]] = {}
    for code in range(1, 64):
        name = _core.status_name(code)
        if not name.startswith("HS_ERR_") or name == "HS_ERR_UNKNOWN":
            continue
        cls = _BY_NAME.get(name)
        if cls is None:
            cls = type(_class_name(name), (Error,), {"__doc__": f"Status {name}."})
            _BY_NAME[name] = cls
            globals()[cls.__name__] = cls
            __all__.append(cls.__name__)
        table[code] = cls
    for name, cls in _BY_NAME.items():
        for code, c in table.items():
            if c is cls:
                cls.status, cls.status_name = code, name
    return table


_BY_CODE = _build_table()


def error_class(status: int) -> Type[Error]:
    """The exception class of a library status code."""
    return _BY_CODE.get(status, Error)


# The C calls a message may name, and the Python methods that make them.
_PY_NAMES = {
    "hs_swap_start": "Plan.start", "hs_swap_complete": "Plan.complete",
    "hs_swap_test": "Plan.test", "hs_swap": "Plan.swap", "hs_reverse_start":
    "Plan.reverse_start", "hs_reverse_complete": "Plan.reverse_complete",
    "hs_reverse": "Plan.reverse", "hs_accumulate_fill": "Plan.accumulate_fill",
    "hs_plan_free": "Plan.free", "hs_plan_create": "Plan", "hs_decomp_create":
    "Decomposition", "hs_decomp_free": "Decomposition.free"}
_C_NAME = re.compile(r"\b(" + "|".join(sorted(_PY_NAMES, key=len, reverse=True)) + r")\b")
# A blocking call's parts: named as the call itself (Plan.swap, not Plan.start).
_PARTS = {"Plan.swap": ("hs_swap_start", "hs_swap_complete"),
          "Plan.reverse": ("hs_reverse_start", "hs_reverse_complete"),
          "Plan.accumulate_fill": ("hs_reverse_start", "hs_reverse_complete",
                                   "hs_swap_start", "hs_swap_complete")}


def python_names(message: str, call: Optional[str] = None, rank: int = -1) -> str:
    """The library's message with the C calls it names replaced by the Python methods; call
    stands for its parts in a message of this rank's own (not one another rank sent)."""
    m = re.match(r"rank (\d+): ", message)
    parts = _PARTS.get(call or "", ()) if not m or int(m.group(1)) == rank else ()
    return _C_NAME.sub(lambda m: call if m.group(1) in parts else _PY_NAMES[m.group(1)],
                       message)


def raise_status(status: int, message: str, call: Optional[str] = None, rank: int = -1) -> None:
    raise error_class(status)(python_names(message, call, rank), status)


_core._raise_status = raise_status
