"""Events: markers in a stream (record, wait, elapsed time)."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from .. import _interruptible, capi
from .._release import finalizer as _finalizer
from ._init import _byref, _check, _quiet
from .devices import Device, _BindScope, _bind_current, _DeviceState, _resolve_device, current_stream

if TYPE_CHECKING:
    from .streams import Stream

def _release_event(state: _DeviceState, handle: int, destroy) -> None:
    try:
        with _BindScope(state):
            _quiet(destroy(handle))
    except Exception:       # noqa: BLE001
        pass
    finally:
        state.release()


class Event:
    """A marker in a stream: ``record``, ``synchronize``, ``query``, ``elapsed_time``.

    ``timing=True`` (default) creates it with ``ACL_EVENT_TIME_LINE`` so that
    :meth:`elapsed_time` works.  Re-recording is allowed.
    """

    def __init__(self, *, timing: bool = True, device: "Device | int | None" = None):
        dev = _resolve_device(device)
        state = dev._state
        state.acquire()
        try:
            state.bind()
            h = ctypes.c_void_p()
            flag = capi.ACL_EVENT_TIME_LINE if timing else capi.ACL_EVENT_SYNC
            _check(capi.aclrtCreateEventWithFlag(_byref(h), flag), "aclrtCreateEventWithFlag")
        except BaseException:
            state.release()
            raise
        self._state = state
        self._handle: int | None = h.value
        self.timing = timing
        self._finalizer = _finalizer(self, _release_event, state, h.value, capi.aclrtDestroyEvent)

    @property
    def handle(self) -> int:
        if self._handle is None:
            raise RuntimeError("event is closed")
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
