"""Host waits that Ctrl-C can interrupt.

A blocking ``aclrtSynchronize*`` call sits in C until the work is done, and Python runs signal handlers
only between bytecodes, so Ctrl-C would wait for the device. These helpers wait in slices of
``SLICE_MS`` with the ``...WithTimeout`` form of the call instead; between slices the interpreter runs
pending signal handlers, so Ctrl-C raises ``KeyboardInterrupt`` from the wait within one slice. The
work already queued keeps running (as after an interrupted wait on an NPU).
"""
from __future__ import annotations

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
