"""Findings of the emulator's stream-hazard checker (``PYACLNN_STUB_HAZARDS=report|error``).

The checker lives in the bundled CPU emulator (docs/hazards.md): it prints each finding on stderr
as ``pyaclnn-stub hazard: <kind>: ...`` and keeps it in a list that :func:`hazards` returns.

    >>> import pyaclnn
    >>> pyaclnn.hazards()                   # [] when the program is correctly ordered
    >>> pyaclnn.hazards(clear=True)         # the same, and empties the list (and the counters)
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

from ._exceptions import EmulatorOnlyError, InvalidArgumentError

__all__ = ["Hazard", "hazards", "hazard_counts", "hazard_mode", "KINDS"]

# Kind names in the order of PYACLNN_HAZARD_* (native_stubs/src/internal/pyaclnn_stub.h).
KINDS = ("read-before-sync", "free-in-flight", "cross-stream", "bad-workspace", "uninitialized-read")
_MODES = ("off", "report", "error")


class _CHazard(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("api", ctypes.c_char * 48), ("op", ctypes.c_char * 48),
                ("stream", ctypes.c_void_p), ("other_stream", ctypes.c_void_p),
                ("other_op", ctypes.c_char * 48), ("other_api", ctypes.c_char * 48),
                ("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64), ("alloc", ctypes.c_uint64),
                ("line", ctypes.c_char * 704)]


class _CCounts(ctypes.Structure):
    _fields_ = [(name.replace("-", "_"), ctypes.c_int64) for name in KINDS]


@dataclass(frozen=True)
class Hazard:
    """One finding: what the offending call did, and which queued task it conflicts with.

    ``stream`` / ``other_stream`` are stream handles (ints; None for the host side or when there is
    no conflicting task); ``range`` is the byte range ``(lo, hi)`` concerned; ``op`` the offending
    task's operator ("Add", "memcpy", "host" ...); ``queued_by`` the conflicting task's
    ``(operator, API call)``, or None; ``message`` the stderr line without its prefix.
    """
    kind: str
    api: str
    stream: int | None
    other_stream: int | None
    range: tuple[int, int]
    allocation: int | None
    op: str
    queued_by: tuple[str, str] | None
    message: str


def _emulator_only(what: str) -> EmulatorOnlyError:
    return EmulatorOnlyError(f"{what}: the hazard checker is a feature of pyaclnn's CPU emulator (the stub backend); "
                        "the loaded backend is a real CANN toolkit, which has no such checker "
                        "(run with PYACLNN_BACKEND=stub to use it)")


def _symbol(name: str, what: str):
    from ._loader import backend
    loaded = backend()
    if loaded.name != "stub":
        raise _emulator_only(what)
    return loaded.symbol(name)


def hazard_mode() -> str:
    """The checker's mode in this process: ``"off"``, ``"report"`` or ``"error"`` (read at load)."""
    fn = _symbol("pyaclnn_stub_hazard_mode", "pyaclnn.hazard_mode")
    fn.argtypes, fn.restype = [], ctypes.c_int
    return _MODES[fn()]


def hazards(clear: bool = False) -> list[Hazard]:
    """The findings so far (oldest first; the emulator keeps the first 1024), emptied with ``clear=True``.

    Raises EmulatorOnlyError (a RuntimeError) on a real CANN backend: the checker is an emulator feature.
    """
    fn = _symbol("pyaclnn_stub_hazards", "pyaclnn.hazards")
    fn.argtypes = [ctypes.POINTER(_CHazard), ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_size_t
    n = fn(None, 0, 0)
    buf = (_CHazard * max(n, 1))()
    got = fn(buf, n, 1 if clear else 0)
    out = []
    for h in buf[:got]:
        queued = (h.other_op.decode(), h.other_api.decode()) if h.other_api else None
        out.append(Hazard(kind=KINDS[h.kind], api=h.api.decode(), stream=h.stream, other_stream=h.other_stream,
                          range=(int(h.lo), int(h.hi)), allocation=int(h.alloc) or None, op=h.op.decode(),
                          queued_by=queued, message=h.line.decode(errors="replace")))
    return out


def hazard_counts() -> dict[str, int]:
    """Findings per kind since the start (or the last ``hazards(clear=True)``), including any beyond
    the list's capacity."""
    fn = _symbol("pyaclnn_stub_hazard_counts_get", "pyaclnn.hazard_counts")
    fn.argtypes, fn.restype = [ctypes.POINTER(_CCounts)], None
    counts = _CCounts()
    fn(ctypes.byref(counts))
    return {kind: int(getattr(counts, kind.replace("-", "_"))) for kind in KINDS}


def _requested_mode() -> str:
    """What ``PYACLNN_STUB_HAZARDS`` asks for in this environment (without loading anything)."""
    return os.environ.get("PYACLNN_STUB_HAZARDS", "off") or "off"


class checker_mode:
    """Context manager: run a block with the checker in ``mode`` ("off", "report", "error"), for code
    that provokes a hazard on purpose (tests of the emulator's own semantics). What the checker had
    recorded is forgotten at each switch. A no-op on a real CANN backend."""

    def __init__(self, mode: str):
        if mode not in _MODES:
            raise InvalidArgumentError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")
        self._mode = _MODES.index(mode)
        self._old = None

    def __enter__(self) -> "checker_mode":
        from ._loader import backend
        if backend().name == "stub":
            fn = backend().symbol("pyaclnn_stub_hazard_set_mode")
            fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
            self._set = fn
            self._old = fn(self._mode)
        return self

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            self._set(self._old)
