"""Host memory the emulator's kernels may address (stub only), and the emulator's live counters."""
from __future__ import annotations

import ctypes
from typing import Any

from .._exceptions import EmulatorOnlyError
from .._mutex import mutex as _mutex

from .. import _release
from .._release import finalizer as _finalizer
from ._init import _check, init, is_stub

_stub_fns: dict[str, Any] = {}


def _stub_fn(name: str, restype, argtypes):
    fn = _stub_fns.get(name)
    if fn is None:
        from .._loader import backend
        fn = backend().symbol(name)
        fn.restype = restype
        fn.argtypes = argtypes
        _stub_fns[name] = fn
    return fn


_registrations: dict[int, list] = {}      # base -> [nbytes, count]
_reg_lock = _mutex()
_to_unregister: list = []                  # bases whose last holder let go, not yet unregistered


def _drop_holds(bases: list) -> None:
    """Let go of the registrations whose bases ``bases`` holds (last first), each leaving the list
    with its count in one interrupt-free run; unregister those nobody holds."""
    with _reg_lock:
        while bases:
            base = bases[-1]
            entry = _registrations.get(base)
            del bases[-1]
            if entry is not None:
                entry[1] -= 1
                if not entry[1]:
                    del _registrations[base]
                    _to_unregister.append(base)
        # Under the lock too: the releaser thread drops holds while the caller's thread does (two
        # drains of the one list would pop past its end).
        if _to_unregister:
            unregister = _call_fns[1] if _call_fns else _stub_fns.get("pyaclnn_stub_mem_unregister")
            if unregister is not None and _release.drain(unregister, _to_unregister):
                _recent_error()


def _unregister(cell: list) -> None:
    # Resumable: the base leaves the cell with its count (see _drop_holds).
    try:
        _drop_holds(cell)
    except Exception:       # noqa: BLE001
        pass


class HostRegistration:
    """Host memory made addressable by the emulator's device code (zero-copy wrapping).

    Only the stub needs (and has) this: its "device memory" is host memory, but its kernels check
    that every address they touch is known to the runtime.  Ranges are counted by base address, so
    several tensors over one buffer share one registration.
    """

    def __init__(self, ptr: int, nbytes: int):
        if not is_stub():
            raise EmulatorOnlyError("host memory registration is an emulator feature; on a real toolkit "
                                    "copy host data to the device instead")
        register = _stub_fn("pyaclnn_stub_mem_register", ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t])
        _stub_fn("pyaclnn_stub_mem_unregister", ctypes.c_int, [ctypes.c_void_p])
        lookup = _stub_fn("pyaclnn_stub_mem_lookup", ctypes.c_int,
                          [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p])
        self.ptr, self.nbytes, self.base = ptr, nbytes, None
        cell: list = []         # the base held, owned by the finalizer before it is taken
        self._finalizer = _finalizer(self, _unregister, cell)
        if _release.pending():
            _release.flush()    # registrations of dropped wrappers (maybe of this range) go first
        with _reg_lock:
            for base, entry in _registrations.items():
                if base <= ptr and ptr + nbytes <= base + entry[0]:
                    entry[1] += 1               # inside a range registered earlier: share it
                    cell += (base,)
                    self.base = base
                    break
            else:
                if nbytes and lookup(ptr, nbytes, None, None):
                    pass                        # device memory (aclrtMalloc): nothing to do
                elif nbytes:
                    # booked before the C call (an interrupt after it finds the booking)
                    _registrations[ptr] = [nbytes, 1]
                    cell += (ptr,)
                    status = register(ptr, nbytes)
                    if status:
                        del _registrations[ptr]
                        del cell[:]
                        _check(status, "pyaclnn_stub_mem_register")
                    self.base = ptr

    def release(self) -> None:
        self._finalizer()


def register_host_memory(ptr: int, nbytes: int) -> HostRegistration:
    """Make ``nbytes`` of host memory at ``ptr`` usable by device code (stub only)."""
    init()
    return HostRegistration(ptr, nbytes)


def hold_host_ranges(ranges, held: list) -> bool:
    """Register host ranges ``(ptr, nbytes)`` for one call (stub only), appending each base to
    ``held`` as soon as it is held (the caller releases ``held`` with :func:`release_host_ranges`
    once the call's stream has run, even after an exception); False when one cannot be registered
    (it overlaps, without lying inside, memory the emulator knows): nothing is held then.

    The same bookkeeping as :class:`HostRegistration` (ranges counted by base, shared by ranges
    inside them), without its objects and finalizers: for the friendly functions' torch outputs,
    registered only while the call uses them, so that no registration outlives its torch storage.
    """
    if not _call_fns:
        if not is_stub():
            return False
        _bind_call_fns()
    register = _call_fns[0]
    pending = list(ranges)
    for attempt in (0, 1):
        with _reg_lock:                 # one acquisition for the whole call's ranges
            while pending and _hold_one(register, *pending[-1], held):
                pending.pop()
        if not pending:
            return True
        if attempt or not _release.pending():
            break
        _release.flush()        # registrations of dropped wrappers (maybe of this range) go first
    release_host_ranges(held)
    return False


_call_fns: list = []        # [register, unregister] on the compiled call path (pyaclnn.capi._accel)


def _bind_call_fns() -> None:
    from ..capi import _accel
    register = _stub_fn("pyaclnn_stub_mem_register", ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t])
    unregister = _stub_fn("pyaclnn_stub_mem_unregister", ctypes.c_int, [ctypes.c_void_p])
    _call_fns[:] = [_accel.wrap(register), _accel.wrap(unregister)]


def _hold_one(register, ptr: int, nbytes: int, held: list) -> bool:
    """Under _reg_lock."""
    if not ptr or nbytes <= 0:
        return False
    if ptr not in _registrations:
        # booked before the C call, undone if it refuses (an interrupt after it finds the booking)
        _registrations[ptr] = [nbytes, 1]
        held += (ptr,)
        if register(ptr, nbytes) == 0:
            return True
        if held and held[-1] == ptr:
            del held[-1]
            del _registrations[ptr]
    for base, entry in _registrations.items():
        if base <= ptr and ptr + nbytes <= base + entry[0]:
            entry[1] += 1                       # inside a range registered earlier: share it
            held.append(base)
            break
    else:
        base = None
    _recent_error()                             # the refusal's message is not the caller's
    return base is not None


def release_host_ranges(held: list) -> None:
    """Release what :func:`hold_host_ranges` held (after the stream that used it has run); empties
    ``held``. Resumable: what an interrupt leaves in ``held`` is released by the next call."""
    _drop_holds(held)


def _recent_error() -> None:
    from ..errors import recent_error_message
    recent_error_message()


def stub_live_counts() -> dict[str, int]:
    """The emulator's live-object counters (``pyaclnn_stub_live_counts``); stub only."""
    from .._stubinfo import live_counts
    counts = live_counts()
    if counts is None:
        raise EmulatorOnlyError("live counts are an emulator feature")
    return counts
