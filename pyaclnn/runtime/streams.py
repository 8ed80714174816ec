"""Streams: ordered queues of device work, each with its memory pool; the current stream."""
from __future__ import annotations

import ctypes
import weakref
from typing import Any

from .._exceptions import ClosedError

from .. import _interruptible, _release, capi
from .._cint import check as _check_cint
from .._release import finalizer as _finalizer
from ..errors import make_error, recent_error_message
from ._init import _byref, _check, _quiet, _tls
from . import devices as _devices
from .devices import (Device, _BindScope, _bind_current, _DeviceState, _drop_reference, _resolve_device,
                      check_runtime)
from .events import Event
from .pool import MemoryPool


def _release_stream(state: _DeviceState, hcell: list, pcell: list, owned: bool, ref: list,
                    plans: list) -> None:
    # Resumable (pyaclnn._release): the plans' finalizers run once each, the pool empties step by
    # step, the handle leaves its cell in the call that destroys it, the reference with its count.
    try:
        for plan in plans:
            plan()
        plans.clear()
        if hcell:
            with _BindScope(state):
                if hcell[0]:
                    _quiet(_interruptible.sync_stream(hcell[0]))
                for pool in pcell:
                    pool._close()
                if owned:
                    if _release.drain(capi_destroy_stream, hcell):
                        recent_error_message()
                else:
                    del hcell[:]            # not ours to destroy
    except Exception:       # noqa: BLE001 -- finalizers must not raise
        pass
    _drop_reference(ref)


capi_destroy_stream: Any = None   # bound on first stream creation (kept for use during shutdown)


class Stream:
    """An ordered queue of device work (``aclrtCreateStream``), with its memory pool.

    ``Stream()`` creates a stream on the current device; ``Stream.wrap(handle)`` adopts one created
    elsewhere (torch_npu's current stream) without owning it.  ``with stream:`` makes it the
    calling thread's current stream for the block.  :meth:`close` synchronises, empties the pool and
    destroys the stream; garbage collection does the same.
    """

    def __init__(self, device: "Device | int | None" = None, *, priority: int = 0, flags: int = 0):
        priority = _check_cint(priority, "uint32_t", "priority", "pyaclnn.Stream")
        flags = _check_cint(flags, "uint32_t", "flags", "pyaclnn.Stream")
        dev = _resolve_device(device)
        dev._require_open()
        check_runtime()
        self._init(dev._state, priority, flags, owned=True, counted=True, handle=None)

    @classmethod
    def _create(cls, state: _DeviceState, default: bool) -> "Stream":
        self = cls.__new__(cls)
        self._init(state, 0, 0, owned=True, counted=not default, handle=None)
        self.is_default = default
        return self

    @classmethod
    def wrap(cls, handle: int, device: "Device | int | None" = None) -> "Stream":
        """A non-owning Stream for an existing ``aclrtStream`` (not destroyed by close())."""
        dev = _resolve_device(device)
        self = cls.__new__(cls)
        self._init(dev._state, 0, 0, owned=False, counted=True, handle=int(handle))
        return self

    def _init(self, state: _DeviceState, priority: int, flags: int, owned: bool, counted: bool,
              handle: int | None) -> None:
        global capi_destroy_stream
        self.is_default = False
        self.owned = owned
        if capi_destroy_stream is None:
            capi_destroy_stream = capi.aclrtDestroyStream
        self._state = state
        self._handle: int | None = None
        self._plans: list = []            # finalizers of the plans made on it (pyaclnn.ops)
        self._users: weakref.WeakSet = weakref.WeakSet()   # prepared calls told when it closes
        self._saved: list = []
        # The finalizer owns the cells before anything is taken: an exception
        # at any point leaves the reference, the handle and the pool to it.
        hcell: list = []                  # the aclrtStream (a c_void_p aclrtCreateStream writes)
        pcell: list = []                  # its MemoryPool
        ref: list = []                    # the device reference (counted streams)
        fin = None
        try:
            fin = self._finalizer = _finalizer(self, _release_stream, state, hcell, pcell, owned, ref,
                                               self._plans)
            if counted:
                state.acquire_into(ref)
            if handle is None:
                state.bind()
                h = ctypes.c_void_p()
                hcell += (h,)
                if priority or flags:
                    _check(capi.aclrtCreateStreamWithConfig(_byref(h), priority, flags),
                           "aclrtCreateStreamWithConfig")
                else:
                    _check(capi.aclrtCreateStream(_byref(h)), "aclrtCreateStream")
                handle = hcell[0] = h.value
            else:
                hcell += (handle,)
            pcell += (MemoryPool(state, handle),)
            self.pool = pcell[0]
            self._c_handle = ctypes.c_void_p(handle)      # pre-converted for hot-path C calls
            self._handle = handle
        except BaseException:
            if fin is not None:
                fin()
            raise

    # -- identity ---------------------------------------------------------------------------------
    @property
    def handle(self) -> int:
        """The ``aclrtStream`` as an int (for capi calls)."""
        if self._handle is None:
            raise ClosedError("stream is closed")
        return self._handle

    @property
    def device_id(self) -> int:
        return self._state.id

    @property
    def closed(self) -> bool:
        return self._handle is None

    def __repr__(self) -> str:
        what = "default " if self.is_default else ("" if self.owned else "external ")
        if self._handle is None:
            return f"<pyaclnn.Stream {what}(closed) device {self._state.id}>"
        return f"<pyaclnn.Stream {what}0x{self._handle:x} device {self._state.id}>"

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Synchronise, release cached memory and destroy the stream (idempotent)."""
        if self.is_default:
            raise ClosedError("the default stream is released with its device")
        self._handle = None
        self._tell_users()
        self._finalizer()

    def _close_quietly(self) -> None:
        self._handle = None
        self._tell_users()
        self._finalizer()

    def _tell_users(self) -> None:
        """Prepared calls bound to this stream stop launching on it (their C path included)."""
        for user in list(self._users):
            user._on_stream_closed()

    def __enter__(self) -> "Stream":
        self._saved.append((getattr(_tls, "stream", None), getattr(_tls, "device", None)))
        _tls.stream = self
        return self

    def __exit__(self, *exc) -> None:
        _tls.stream, _ = self._saved.pop()

    # -- operations -------------------------------------------------------------------------------
    def synchronize(self) -> None:
        """Block until all work queued on this stream has run (``aclrtSynchronizeStream``).

        Raises the asynchronous failure of a queued task, if one happened. Ctrl-C interrupts the wait
        (``KeyboardInterrupt``); the queued work keeps running.
        """
        h = self.handle
        _bind_current(self._state)
        status = _interruptible.wait(capi.aclrtSynchronizeStreamWithTimeout, (h,),
                                     capi.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
        if status:
            raise make_error(status, "aclrtSynchronizeStream")

    def query(self) -> bool:
        """True when every queued task has run (``aclrtStreamQuery``)."""
        status = ctypes.c_int()
        _check(capi.aclrtStreamQuery(self.handle, _byref(status)), "aclrtStreamQuery")
        return status.value == capi.ACL_STREAM_STATUS_COMPLETE

    def wait_event(self, event: "Event") -> None:
        """Later work on this stream waits for ``event`` (``aclrtStreamWaitEvent``)."""
        _bind_current(self._state)
        _check(capi.aclrtStreamWaitEvent(self.handle, event.handle), "aclrtStreamWaitEvent")

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new timed one if None) on this stream and return it."""
        event = Event(device=self._state.id) if event is None else event
        event.record(self)
        return event


_devices._new_default_stream = lambda state: Stream._create(state, default=True)
