"""aclGetRecentErrMsg and aclrtGetLastError semantics (abi.md §5.6): vendor line layout, newest first,
cleared on read, NULL when empty, untouched by successful calls, per thread."""
from __future__ import annotations

import ctypes
import os

import numpy as np

from pyaclnn import capi
from test_runtime_support import MESSAGE_LINE, run_in_thread


def fail_memcpy() -> int:
    """A copy whose count exceeds destMax: 107000."""
    src = np.zeros(64, np.uint8)
    dst = np.zeros(64, np.uint8)
    return capi.aclrtMemcpy(dst.ctypes.data, 32, src.ctypes.data, 64, capi.ACL_MEMCPY_HOST_TO_HOST)


def test_message_layout(acl, recent_error):
    assert fail_memcpy() == capi.ACL_ERROR_RT_PARAM_INVALID
    message = recent_error()
    assert message.endswith("\n") and message.count("\n") == 1
    line = MESSAGE_LINE.match(message.rstrip("\n"))
    assert line, message
    assert int(line["pid"]) == os.getpid()
    assert line["func"] == "aclrtMemcpy" and line["code"] == "107000"
    assert line["text"] == "count 64 > destMax 32"


def test_null_when_nothing_pending_and_cleared_on_read(acl, recent_error):
    assert capi.aclGetRecentErrMsg() is None
    assert fail_memcpy() != 0
    assert capi.aclGetRecentErrMsg() is not None
    assert capi.aclGetRecentErrMsg() is None


def test_newest_first(acl, recent_error):
    assert fail_memcpy() == capi.ACL_ERROR_RT_PARAM_INVALID
    assert capi.aclrtFree(None) == capi.ACL_ERROR_INVALID_PARAM
    lines = recent_error().splitlines()
    assert [MESSAGE_LINE.match(line)["func"] for line in lines] == ["aclrtFree", "aclrtMemcpy"]


def test_success_does_not_clear_pending_messages(acl, recent_error):
    assert fail_memcpy() != 0
    device = ctypes.c_int32()
    assert capi.aclrtGetDevice(ctypes.byref(device)) == 0
    message = recent_error()
    assert message and "aclrtMemcpy(107000)" in message


def test_messages_are_per_thread(acl, recent_error):
    assert fail_memcpy() != 0

    def other_thread():
        seen_before = capi.aclGetRecentErrMsg()
        assert capi.aclrtFree(None) == capi.ACL_ERROR_INVALID_PARAM
        return seen_before, capi.aclGetRecentErrMsg()

    seen_before, own = run_in_thread(other_thread)
    assert seen_before is None
    assert b"aclrtFree(100000)" in own and b"aclrtMemcpy" not in own
    mine = recent_error()
    assert "aclrtMemcpy(107000)" in mine and "aclrtFree" not in mine


def test_last_error_get_clears_peek_does_not(acl, recent_error):
    capi.aclrtGetLastError(capi.ACL_RT_THREAD_LEVEL)
    assert capi.aclrtGetLastError(capi.ACL_RT_THREAD_LEVEL) == 0
    assert fail_memcpy() == capi.ACL_ERROR_RT_PARAM_INVALID
    assert capi.aclrtPeekAtLastError(capi.ACL_RT_THREAD_LEVEL) == capi.ACL_ERROR_RT_PARAM_INVALID
    assert capi.aclrtPeekAtLastError(capi.ACL_RT_THREAD_LEVEL) == capi.ACL_ERROR_RT_PARAM_INVALID
    assert capi.aclrtGetLastError(capi.ACL_RT_THREAD_LEVEL) == capi.ACL_ERROR_RT_PARAM_INVALID
    assert capi.aclrtGetLastError(capi.ACL_RT_THREAD_LEVEL) == 0
    # Per thread as well.
    assert fail_memcpy() != 0
    assert run_in_thread(lambda: capi.aclrtGetLastError(capi.ACL_RT_THREAD_LEVEL)) == 0


def test_last_error_rejects_other_levels(acl, recent_error):
    assert capi.aclrtGetLastError(1) == capi.ACL_ERROR_INVALID_PARAM
    assert "aclrtGetLastError(100000)" in recent_error()
    assert capi.aclrtPeekAtLastError(7) == capi.ACL_ERROR_INVALID_PARAM
    assert "aclrtPeekAtLastError(100000)" in recent_error()


def test_pending_text_is_bounded(acl, recent_error):
    for _ in range(5000):
        fail_memcpy()
    message = recent_error()
    assert len(message) <= 64 * 1024
    lines = message.splitlines()
    assert all(MESSAGE_LINE.match(line) for line in lines)   # only whole lines were dropped
