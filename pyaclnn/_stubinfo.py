"""Leak accounting of the bundled CPU stub: how many objects of each kind are alive right now.

The stub counts its live device allocations, streams, events, tensors, arrays, executors ... and
exports the totals through the internal entry point ``pyaclnn_stub_live_counts`` (libascendcl).
A real CANN toolkit has no such entry point, so :func:`live_counts` returns None there.

    >>> from pyaclnn._stubinfo import live_counts, leaked
    >>> before = live_counts()
    >>> ...                                  # code under test
    >>> leaked(before, live_counts())        # {} when everything was released
"""
from __future__ import annotations

import ctypes

from . import _release

__all__ = ["FIELDS", "live_counts", "leaked"]

# The fields of pyaclnn_stub_counts (native_stubs/src/internal/pyaclnn_stub.h), in order.
FIELDS = ("device_allocations", "device_bytes", "host_allocations", "streams", "events", "contexts",
          "tensors", "scalars", "arrays", "tensor_lists", "scalar_lists", "executors", "host_registrations")


class _Counts(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in FIELDS]


_entry = None


def _entry_point():
    """The bound C function, or None when the loaded backend is not the stub (or cannot load)."""
    global _entry
    if _entry is None:
        from ._loader import backend
        from .errors import BackendError, MissingSymbolError
        try:
            loaded = backend()
            if loaded.name != "stub":
                return None
            fn = loaded.symbol("pyaclnn_stub_live_counts")
        except (BackendError, MissingSymbolError):
            return None
        fn.argtypes = [ctypes.POINTER(_Counts)]
        fn.restype = None
        _entry = fn
    return _entry


def live_counts() -> dict[str, int] | None:
    """Live objects of the stub, by kind (see :data:`FIELDS`); None when the backend is not the stub.

    ``device_bytes`` is the byte total of the live device allocations (as requested); every other
    field counts objects. Streams, contexts and events count only those the program created, not the
    default stream and context that ``aclrtSetDevice`` makes.
    """
    fn = _entry_point()
    if fn is None:
        return None
    _release.flush()            # objects already collected are released first
    counts = _Counts()
    fn(ctypes.byref(counts))
    return {name: int(getattr(counts, name)) for name in FIELDS}


def leaked(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, int]:
    """The fields that changed between two :func:`live_counts` results (after - before); {} if none."""
    if before is None or after is None:
        return {}
    return {name: after[name] - before[name] for name in FIELDS if after[name] != before[name]}
