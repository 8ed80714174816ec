"""Host waits that Ctrl-C can interrupt.

A blocking ``aclrtSynchronize*`` call sits in C until the work is done, and Python runs signal handlers
only between bytecodes, so Ctrl-C would wait for the device. These helpers wait in slices of
``SLICE_MS`` with the ``...WithTimeout`` form of the call instead; between slices the interpreter runs
pending signal handlers, so Ctrl-C raises ``KeyboardInterrupt`` from the wait within one slice. The
work already queued keeps running (as after an interrupted wait on an NPU).

Calls that wait inside C for the work queued before them -- a copy from pageable host memory
(``aclrtMemcpyAsync`` returns once that copy ran), the launch of an operator whose output shape
depends on the data (its phase 2 synchronises) -- first wait here with :func:`until_idle`, so that
the C call only waits for its own task.
"""
from __future__ import annotations

import ctypes
import time

from . import capi

SLICE_MS = 50


def wait(timed_call, args: tuple, timeout_code: int) -> int:
    """Calls ``timed_call(*args, SLICE_MS)`` until it returns something other than ``timeout_code``.

    Returns that status, with its message left for ``aclGetRecentErrMsg`` as a blocking call would.
    A slice's own timeout leaves no trace: its message and last-error code are cleared.
    """
    while True:
        status = timed_call(*args, SLICE_MS)
        if status != timeout_code:
            return status
        capi.aclGetRecentErrMsg()                      # the slice's timeout message
        capi.aclrtGetLastError(capi.ACL_RT_THREAD_LEVEL)   # and its last-error code


def sync_stream(handle: int) -> int:
    """``aclrtSynchronizeStream(handle)`` in slices (the same status, failures taken as it takes them)."""
    return wait(capi.aclrtSynchronizeStreamWithTimeout, (handle,), capi.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)


_sleep = time.sleep
_COMPLETE = capi.ACL_STREAM_STATUS_COMPLETE
MAX_POLL_S = 0.005


def until_idle(handle: int) -> None:
    """Wait until the work queued on stream ``handle`` so far has run, without taking an asynchronous
    failure from it (that stays for the next synchronisation, as the C call that follows would
    leave it): ``aclrtStreamQuery`` between sleeps of at most ``MAX_POLL_S``, where Ctrl-C lands.
    Returns at once when nothing is queued (one C call); a failing query ends the wait (the C call
    that follows reports the stream's problem)."""
    query = capi.aclrtStreamQuery
    status = ctypes.c_int()
    ref = ctypes.byref(status)
    if query(handle, ref) or status.value == _COMPLETE:
        return
    delay = 0.0002
    while True:
        _sleep(delay)
        if query(handle, ref) or status.value == _COMPLETE:
            return
        if delay < MAX_POLL_S:
            delay *= 2
