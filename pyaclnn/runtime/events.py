"""Events: markers in a stream (record, wait, elapsed time)."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from .._exceptions import ClosedError
from .. import _interruptible, _release, capi
from .._release import finalizer as _finalizer
from ._init import _byref, _check
from ..errors import recent_error_message
from .devices import (Device, _BindScope, _bind_current, _DeviceState, _drop_reference, _resolve_device,
                      current_stream)

if TYPE_CHECKING:
    from .streams import Stream

def _release_event(state: _DeviceState, hcell: list, destroy, ref: list) -> None:
    # Resumable: the handle leaves its cell in the call that destroys it, the reference with its count.
    try:
        if hcell:
            with _BindScope(state):
                if _release.drain(destroy, hcell):
                    recent_error_message()
    except Exception:       # noqa: BLE001
        pass
    _drop_reference(ref)


class Event:
    """A marker in a stream: ``record``, ``synchronize``, ``query``, ``elapsed_time``.

    ``timing=True`` (default) creates it with ``ACL_EVENT_TIME_LINE`` so that
    :meth:`elapsed_time` works.  Re-recording is allowed.
    """

    def __init__(self, *, timing: bool = True, device: "Device | int | None" = None):
        dev = _resolve_device(device)
        state = dev._state
        self._state = state
        self._handle: int | None = None
        self.timing = timing
        hcell: list = []            # the aclrtEvent (a c_void_p aclrtCreateEventWithFlag writes)
        ref: list = []              # the device reference
        fin = None
        try:                        # the finalizer owns both cells first (see DeviceBuffer)
            fin = self._finalizer = _finalizer(self, _release_event, state, hcell, capi.aclrtDestroyEvent, ref)
            state.acquire_into(ref)
            state.bind()
            h = ctypes.c_void_p()
            hcell += (h,)
            flag = capi.ACL_EVENT_TIME_LINE if timing else capi.ACL_EVENT_SYNC
            _check(capi.aclrtCreateEventWithFlag(_byref(h), flag), "aclrtCreateEventWithFlag")
            self._handle = hcell[0] = h.value
        except BaseException:
            if fin is not None:
                fin()
            raise

    @property
    def handle(self) -> int:
        if self._handle is None:
            raise ClosedError("event is closed")
        return self._handle

    def close(self) -> None:
        self._handle = None
        self._finalizer()

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def record(self, stream: Stream | None = None) -> "Event":
        """Mark the work queued so far on ``stream`` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        _bind_current(stream._state)
        _check(capi.aclrtRecordEvent(self.handle, stream.handle), "aclrtRecordEvent")
        return self

    def synchronize(self) -> None:
        """Block until the recorded work has run."""
        status = _interruptible.wait(capi.aclrtSynchronizeEventWithTimeout, (self.handle,),
                                     capi.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT)   # Ctrl-C can interrupt it
        _check(status, "aclrtSynchronizeEvent")

    def query(self) -> bool:
        """True when the recorded work has run (a never-recorded event counts as complete)."""
        status = ctypes.c_int()
        _check(capi.aclrtQueryEventStatus(self.handle, _byref(status)), "aclrtQueryEventStatus")
        return status.value == capi.ACL_EVENT_RECORDED_STATUS_COMPLETE

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event to ``end`` (both recorded and completed)."""
        ms = ctypes.c_float()
        _check(capi.aclrtEventElapsedTime(_byref(ms), self.handle, end.handle), "aclrtEventElapsedTime")
        return float(ms.value)
