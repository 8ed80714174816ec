"""Devices: one reference-counted state per device id (``aclrtSetDevice`` on the first reference,
``aclrtResetDevice`` after the last), thread bindings to its context, the :class:`Device` object,
and the diagnosis of resets and finalizes done through capi behind pyaclnn's back."""
from __future__ import annotations

import ctypes
import functools
import threading
from typing import TYPE_CHECKING, Callable, Iterator

from .._exceptions import ClosedError
from .._mutex import mutex as _mutex

from .. import _interruptible, _release, capi
from .. import errors as _errors
from .._cint import check as _check_cint
from .._release import finalizer as _finalizer
from ..errors import DeviceResetError, make_error, recent_error_message
from . import _init
from ._init import _byref, _check, _quiet, _tls, device_count, init

if TYPE_CHECKING:
    from .streams import Stream



# ------------------------------------------------------------------------------------------------
# What happened behind our back: capi resets and finalizes the Pythonic layer did not make
# ------------------------------------------------------------------------------------------------

_ADVICE = ("pyaclnn's objects on it (streams, memory pools, tensors) are gone and cannot be used any "
           "more. Release them (close() / del) before resetting or finalizing through capi, and "
           "balance each capi.aclrtResetDevice with your own capi.aclrtSetDevice: pyaclnn counts its "
           "own references and finalizes the runtime at exit")


def _context_gone(state: "_DeviceState") -> bool:
    """Does the context pyaclnn bound for ``state`` still exist? (re-binds it to find out)"""
    b = state.binding
    if b is None or state.refs <= 0:
        return False
    prev = ctypes.c_void_p()
    had = capi.aclrtGetCurrentContext(_byref(prev)) == 0 and prev.value
    if not had:
        recent_error_message()
    if capi.aclrtSetCurrentContext(b.ctx):
        recent_error_message()
        return True
    if had and prev.value != b.ctx:
        _quiet(capi.aclrtSetCurrentContext(prev.value))     # put the caller's context back
    else:
        _tls.binding = b
    return False


def _diagnose(code: int) -> str | None:
    """Explain a failing call if a device pyaclnn holds was reset, or the runtime finalized, through
    capi; None when neither happened (registered in pyaclnn.errors below)."""
    found = []
    for state in list(_states.values()):
        if state.lost is None and _context_gone(state):
            state.lost = (f"device {state.id} was reset through capi.aclrtResetDevice (or "
                          f"aclrtResetDeviceForce) behind pyaclnn's back, while pyaclnn held "
                          f"{state.refs} reference(s) on it")
        if state.lost is not None and state.refs > 0:
            found.append(state.lost)
    if _init._runtime_finalized():
        found.append("the runtime was finalized through capi.aclFinalize behind pyaclnn's back")
    if not found:
        return None
    return "; ".join(found) + ". " + _ADVICE


def check_runtime() -> None:
    """Raise :class:`~pyaclnn.errors.DeviceResetError` if the runtime was finalized, or a device
    pyaclnn holds was reset, through capi (checked where the Pythonic layer creates resources)."""
    if not _init._initialised:
        return
    why = _diagnose(0)
    if why:
        err = DeviceResetError(capi.ACL_ERROR_UNINITIALIZE if "finalized" in why
                               else capi.ACL_ERROR_RT_CONTEXT_NULL, None, None)
        err.hint = why
        err.args = (f"pyaclnn's runtime state is gone\nhint: {why}",)
        raise err


_errors._diagnose = _diagnose     # only speaks once init() ran or a device is held


# ------------------------------------------------------------------------------------------------
# Device state: one per device id, reference counted
# ------------------------------------------------------------------------------------------------

class _Binding:
    """A device context as bound to threads; a new one each time the device is set again."""
    __slots__ = ("state", "ctx")

    def __init__(self, state: "_DeviceState", ctx: int):
        self.state = state
        self.ctx = ctx


class _DeviceState:
    """``aclrtSetDevice`` on the first reference, ``aclrtResetDevice`` when the last one goes."""

    def __init__(self, device_id: int):
        self.id = device_id
        self.lock = threading.RLock()
        self.refs = 0
        self.binding: _Binding | None = None
        self.default_stream: Stream | None = None
        self.lost: str | None = None       # what reset it behind our back (see _diagnose)
        self._closing = False              # the last reference went; _close has not finished
        # Bound once so that releases still work while modules are torn down at exit.
        self._set_ctx = capi.aclrtSetCurrentContext
        self._reset = capi.aclrtResetDevice

    def acquire(self) -> None:
        with self.lock:
            if self._closing:
                self._close()               # a close cut short by an interrupt: finish it first
            if self.refs == 0:
                self._open()
            self.refs += 1

    def release(self) -> None:
        with self.lock:
            self.refs -= 1
            if self.refs == 0:
                self._closing = True
                self._close()

    def acquire_into(self, ref: list) -> None:
        """Take a reference and put this state into ``ref`` (empty before) in one interrupt-free
        run, so an interrupt never leaves a reference that no cell holds."""
        with self.lock:
            if self._closing:
                self._close()
            if self.refs == 0:
                self._open()
            self.refs += 1
            ref += (self,)

    def release_from(self, ref: list) -> None:
        """Drop the reference :meth:`acquire_into` put into ``ref``; idempotent and resumable (the
        cell empties with the count; a close cut short is finished by the next call)."""
        with self.lock:
            if ref:
                del ref[:]
                self.refs -= 1
                if self.refs == 0:
                    self._closing = True
            if self._closing and self.refs == 0:
                self._close()

    def _open(self) -> None:
        init()
        check_runtime()
        previous = getattr(_tls, "binding", None)
        _check(capi.aclrtSetDevice(self.id), "aclrtSetDevice")
        ctx = ctypes.c_void_p()
        status = capi.aclrtGetCurrentContext(_byref(ctx))
        if status:
            err = make_error(status, "aclrtGetCurrentContext")
            _quiet(capi.aclrtResetDevice(self.id))
            raise err
        self.binding = _Binding(self, ctx.value)
        _tls.binding = self.binding
        if previous is not None and previous.state.binding is previous:
            previous.state.bind()       # aclrtSetDevice moved this thread; put it back

    def _close(self) -> None:
        # Resumable: each step finds nothing left once it has run.
        stream, self.default_stream = self.default_stream, None
        if stream is not None:
            stream._close_quietly()
        self.binding = None
        self.lost = None
        if self._closing:
            self._closing = False
            _quiet(self._reset(self.id))

    def bind(self) -> None:
        """Make this device's context current on the calling thread."""
        b = self.binding
        if b is None:
            raise ClosedError(f"device {self.id} has been released")
        if getattr(_tls, "binding", None) is not b:
            _check(self._set_ctx(b.ctx), "aclrtSetCurrentContext")
            _tls.binding = b

    def get_default_stream(self) -> "Stream":
        s = self.default_stream
        if s is None:
            with self.lock:
                if self.default_stream is None:
                    self.default_stream = _new_default_stream(self)
                s = self.default_stream
        return s


# How a device's default stream is made: installed by .streams, which builds on this module (a
# stream needs a device; a device only needs *a* stream factory).
_new_default_stream: "Callable[[_DeviceState], Stream]" = None  # type: ignore[assignment]


def _drop_saved(saved: list) -> None:
    for entry in list(saved):
        _drop_reference(entry[2])


def _undo_enter(saved: list, entry: tuple) -> None:
    """A ``with device:`` whose ``__enter__`` was cut short: forget its entry and reference."""
    try:
        saved.remove(entry)
    except ValueError:
        pass
    _drop_reference(entry[2])


def _drop_reference(ref: list) -> None:
    """Release the device reference in ``ref`` once (see ``_DeviceState.release_from``)."""
    if ref:
        ref[0].release_from(ref)


class _BindScope:
    """Bind a device for a release done from any thread, then put the thread's binding back."""
    __slots__ = ("state", "previous")

    def __init__(self, state: _DeviceState):
        self.state = state

    def __enter__(self):
        self.previous = getattr(_tls, "binding", None)
        self.state.bind()

    def __exit__(self, *exc):
        prev = self.previous
        if prev is not None and prev is not _tls.binding and prev.state.binding is prev:
            if not prev.state._set_ctx(prev.ctx):
                _tls.binding = prev


_states: dict[int, _DeviceState] = {}
_states_lock = _mutex()


def _state_for(device_id: int) -> _DeviceState:
    s = _states.get(device_id)
    if s is None:
        with _states_lock:
            s = _states.setdefault(device_id, _DeviceState(device_id))
    return s


def _bind_current(state: _DeviceState) -> None:
    """Hot-path form of ``state.bind()``."""
    if getattr(_tls, "binding", None) is not state.binding:
        state.bind()


# ------------------------------------------------------------------------------------------------
# Device
# ------------------------------------------------------------------------------------------------

class Device:
    """A reference on one device (``aclrtSetDevice`` / ``aclrtResetDevice`` counted for you).

    ``Device(1)`` holds a reference until :meth:`close` (or garbage collection); ``with device:``
    takes another one for the block, binds the calling thread to the device and makes it the
    thread's current device, and restores the previous device on exit.  The device is really reset
    when no Device object, stream, event or buffer refers to it any more.
    """

    def __init__(self, device_id: int = 0):
        if isinstance(device_id, Device):
            device_id = device_id.id
        device_id = _check_cint(int(device_id), "int32_t", "device_id", "pyaclnn.Device")
        self._state = _state_for(device_id)
        self._saved: list = []
        # References of `with` blocks whose __exit__ an interrupt cut short stay in _saved: they go
        # when this object dies (a second finalizer: close() must not drop an open block's).
        _finalizer(self, _drop_saved, self._saved)
        ref: list = []          # the reference, owned by the finalizer before it is taken
        self._finalizer = _finalizer(self, _drop_reference, ref)
        self._state.acquire_into(ref)

    # -- identity ---------------------------------------------------------------------------------
    @property
    def id(self) -> int:
        return self._state.id

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __repr__(self) -> str:
        return f"<pyaclnn.Device {self.id}{' (closed)' if self.closed else ''}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("pyaclnn.Device", self.id))

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Drop this object's reference (idempotent).

        Objects already dropped are released first (:mod:`pyaclnn._release`), so when this is the
        last reference the device is reset before ``close`` returns.
        """
        _release.flush()
        self._finalizer()

    def __enter__(self) -> "Device":
        self._require_open()
        ref: list = []          # the block's reference (see _DeviceState.acquire_into)
        entry = (getattr(_tls, "device", None), getattr(_tls, "stream", None), ref)
        undo = functools.partial(_undo_enter, self._saved, entry)
        self._saved.append(entry)
        try:
            self._state.acquire_into(ref)
            _tls.device = self
            _tls.stream = None
            self._state.bind()
        except BaseException:
            # (no __exit__ follows) The first call: the releaser forgets the entry and its reference.
            _release._put(undo)
            _tls.device, _tls.stream = entry[0], entry[1]
            raise
        return self

    def __exit__(self, *exc) -> None:
        # The entry leaves _saved only after its reference was dropped (see __init__).
        device, stream, ref = self._saved[-1]
        _tls.device, _tls.stream = device, stream
        if device is not None and not device.closed:
            device._state.bind()
        _drop_reference(ref)
        self._saved.pop()

    def _require_open(self) -> None:
        if self.closed:
            raise ClosedError(f"{self!r} is closed")

    # -- operations -------------------------------------------------------------------------------
    @property
    def default_stream(self) -> "Stream":
        """The per-device default stream (created on first use, released with the device)."""
        self._require_open()
        return self._state.get_default_stream()

    def synchronize(self) -> None:
        """``aclrtSynchronizeDevice``: wait for every stream of this device."""
        self._require_open()
        self._state.bind()
        status = _interruptible.wait(capi.aclrtSynchronizeDeviceWithTimeout, (),
                                     capi.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)   # Ctrl-C can interrupt it
        _check(status, "aclrtSynchronizeDevice")

    def mem_info(self, attr: int = capi.ACL_HBM_MEM) -> tuple[int, int]:
        """(free, total) bytes of device memory (``aclrtGetMemInfo``)."""
        self._require_open()
        self._state.bind()
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        _check(capi.aclrtGetMemInfo(attr, _byref(free), _byref(total)), "aclrtGetMemInfo")
        return free.value, total.value

    @staticmethod
    def count() -> int:
        return device_count()


_default_devices: dict[int, Device] = {}


def current_device() -> Device:
    """The calling thread's current device (``with Device(n):`` sets it); device 0 by default."""
    d = getattr(_tls, "device", None)
    if d is not None:
        return d
    d = _default_devices.get(0)
    if d is None:
        with _states_lock:
            d = _default_devices.get(0)
        if d is None:
            d = Device(0)
            _default_devices.setdefault(0, d)
            d = _default_devices[0]
    return d


def holds_forever(stream) -> bool:
    """Is ``stream``'s device one pyaclnn holds for the whole process (the default device that
    :func:`current_device` made)? Caches on such a stream change no lifetime."""
    d = _default_devices.get(stream._state.id)
    return d is not None and d._state is stream._state and not d.closed


def _resolve_device(device: "Device | int | None") -> Device:
    if device is None:
        return current_device()
    if isinstance(device, Device):
        return device
    return Device(int(device))


def iter_states() -> Iterator[_DeviceState]:
    """Device states known to this process (for diagnostics and tests)."""
    return iter(list(_states.values()))


def current_stream() -> "Stream":
    """The calling thread's current stream: set by ``with stream:``, else the current device's
    default stream."""
    s = getattr(_tls, "stream", None)
    if s is not None and s._handle is not None:
        return s
    # What current_device().default_stream gives, without its calls when the device is open and its
    # default stream exists (every launch asks).
    d = getattr(_tls, "device", None)
    if d is None:
        d = _default_devices.get(0)
    if d is not None:
        s = d._state.default_stream
        if s is not None and d._finalizer.alive:
            return s
    return current_device().default_stream
