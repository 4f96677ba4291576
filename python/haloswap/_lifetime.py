"""Objects the library frees collectively: never by the garbage collector."""
from __future__ import annotations

import sys
import warnings


class Collective:
    """Base of Decomposition and Plan: ``free()`` (alias ``close()``) is collective, so it is
    called explicitly or by leaving a ``with`` block, on every rank; an object dropped
    without it warns (ResourceWarning) and is leaked rather than freed on one rank alone.
    Subclasses keep their library handle in ``_core`` (with ``alive`` and ``free()``)."""

    _core = None

    @property
    def closed(self) -> bool:
        return self._core is None or not self._core.alive

    def free(self) -> None:
        self._core.free()

    def close(self) -> None:
        self.free()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if not self.closed:
            self.free()

    def __del__(self):
        if not self.closed and not sys.is_finalizing():
            warnings.warn(f"haloswap.{type(self).__name__} was not freed (free() is collective: "
                          f"call it, or use 'with')", ResourceWarning, stacklevel=2)
