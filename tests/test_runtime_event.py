"""Events (abi.md §1.5, §5.5): record captures the work queued so far, status and host waits,
cross-stream waits, elapsed time and timestamps with the vendor's error codes, stale handles."""
from __future__ import annotations

import ctypes
import time

import numpy as np
import pytest

from pyaclnn import capi
from test_runtime_support import (Gate, PythonTask, create_event, create_stream, download, elapsed,
                                  expect_failure, free, malloc, upload)


def status_of(event) -> tuple[int, int]:
    """(aclrtQueryEventStatus, aclrtQueryEvent) of an event."""
    recorded, legacy = ctypes.c_int(-1), ctypes.c_int(-1)
    assert capi.aclrtQueryEventStatus(event, ctypes.byref(recorded)) == 0
    assert capi.aclrtQueryEvent(event, ctypes.byref(legacy)) == 0
    return recorded.value, legacy.value


COMPLETE = (capi.ACL_EVENT_RECORDED_STATUS_COMPLETE, capi.ACL_EVENT_STATUS_COMPLETE)
NOT_READY = (capi.ACL_EVENT_RECORDED_STATUS_NOT_READY, capi.ACL_EVENT_STATUS_NOT_READY)


@pytest.fixture
def event(acl):
    e = create_event()
    yield e
    capi.aclrtDestroyEvent(e)


def test_record_captures_the_work_queued_so_far(acl, stream, event):
    assert status_of(event) == COMPLETE                     # never recorded counts as complete
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtRecordEvent(event, stream) == 0
    assert status_of(event) == NOT_READY
    gate.open()
    assert capi.aclrtSynchronizeEvent(event) == 0
    assert status_of(event) == COMPLETE
    # Work queued after the record does not hold it back.
    gate2 = Gate()
    assert capi.aclrtRecordEvent(event, stream) == 0
    gate2.submit(stream)
    assert capi.aclrtSynchronizeEventWithTimeout(event, 5000) == 0
    gate2.open()


def test_synchronize_event_timeout(acl, stream, event, recent_error):
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtRecordEvent(event, stream) == 0
    status, seconds = elapsed(lambda: capi.aclrtSynchronizeEventWithTimeout(event, 40))
    expect_failure(status, 507047, "aclrtSynchronizeEventWithTimeout", "not reached within 40 ms")
    assert 0.03 <= seconds < 5
    expect_failure(capi.aclrtSynchronizeEventWithTimeout(event, -2), 107000, "aclrtSynchronizeEventWithTimeout")
    gate.open()
    assert capi.aclrtSynchronizeEventWithTimeout(event, -1) == 0


def test_stream_wait_event_orders_two_streams(acl, stream, event):
    other = create_stream()
    p = malloc(16)
    upload(p, np.zeros(16, np.uint8))
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtMemsetAsync(p, 16, 1, 16, stream) == 0
    assert capi.aclrtRecordEvent(event, stream) == 0
    assert capi.aclrtStreamWaitEvent(other, event) == 0
    assert capi.aclrtMemsetAsync(p, 16, 2, 8, other) == 0       # must come after the fill to 1
    assert capi.aclrtSynchronizeStreamWithTimeout(other, 50) == 507046
    gate.open()
    assert capi.aclrtSynchronizeStream(other) == 0
    np.testing.assert_array_equal(download(p, 16), [2] * 8 + [1] * 8)
    assert capi.aclrtDestroyStream(other) == 0
    free(p)


def test_waiting_on_a_never_recorded_event_is_a_no_op(acl, stream, event):
    assert capi.aclrtStreamWaitEvent(stream, event) == 0
    assert capi.aclrtSynchronizeStreamWithTimeout(stream, 5000) == 0


def test_reset_event(acl, stream, event):
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtRecordEvent(event, stream) == 0
    assert status_of(event) == NOT_READY
    assert capi.aclrtResetEvent(event, stream) == 0
    assert status_of(event) == COMPLETE                     # back to "not recorded"
    gate.open()
    assert capi.aclrtSynchronizeStream(stream) == 0


def test_elapsed_time_between_two_timed_events(acl, stream):
    start, end = create_event(), create_event()
    assert capi.aclrtRecordEvent(start, stream) == 0
    assert PythonTask(lambda: time.sleep(0.05)).submit(stream) == 0
    assert capi.aclrtRecordEvent(end, stream) == 0
    assert capi.aclrtSynchronizeEvent(end) == 0
    ms = ctypes.c_float()
    assert capi.aclrtEventElapsedTime(ctypes.byref(ms), start, end) == 0
    assert 45 <= ms.value < 5000
    stamp_start, stamp_end = ctypes.c_uint64(), ctypes.c_uint64()
    assert capi.aclrtEventGetTimestamp(start, ctypes.byref(stamp_start)) == 0
    assert capi.aclrtEventGetTimestamp(end, ctypes.byref(stamp_end)) == 0
    assert abs((stamp_end.value - stamp_start.value) / 1000 - ms.value) < 0.01   # microseconds
    for e in (start, end):
        assert capi.aclrtDestroyEvent(e) == 0


def test_elapsed_time_errors(acl, stream, recent_error):
    timed, never, untimed = create_event(), create_event(), create_event(capi.ACL_EVENT_SYNC)
    ms = ctypes.c_float()
    assert capi.aclrtRecordEvent(timed, stream) == 0
    assert capi.aclrtRecordEvent(untimed, stream) == 0
    assert capi.aclrtSynchronizeStream(stream) == 0
    expect_failure(capi.aclrtEventElapsedTime(None, timed, timed), 100000, "aclrtEventElapsedTime")
    expect_failure(capi.aclrtEventElapsedTime(ctypes.byref(ms), None, timed), 100000, "aclrtEventElapsedTime")
    expect_failure(capi.aclrtEventElapsedTime(ctypes.byref(ms), timed, never), 507000,
                   "aclrtEventElapsedTime", "has not been recorded")
    expect_failure(capi.aclrtEventElapsedTime(ctypes.byref(ms), untimed, timed), 107006,
                   "aclrtEventElapsedTime", "without ACL_EVENT_TIME_LINE")
    gate = Gate()
    gate.submit(stream)
    pending = create_event(capi.ACL_EVENT_TIME_LINE)
    assert capi.aclrtRecordEvent(pending, stream) == 0
    expect_failure(capi.aclrtEventElapsedTime(ctypes.byref(ms), timed, pending), 107006,
                   "aclrtEventElapsedTime", "has not completed")
    stamp = ctypes.c_uint64()
    expect_failure(capi.aclrtEventGetTimestamp(pending, ctypes.byref(stamp)), 107006, "aclrtEventGetTimestamp")
    expect_failure(capi.aclrtEventGetTimestamp(never, ctypes.byref(stamp)), 507000, "aclrtEventGetTimestamp")
    expect_failure(capi.aclrtEventGetTimestamp(timed, None), 100000, "aclrtEventGetTimestamp")
    gate.open()
    assert capi.aclrtSynchronizeEvent(pending) == 0
    assert capi.aclrtEventElapsedTime(ctypes.byref(ms), timed, pending) == 0 and ms.value >= 0
    for e in (timed, never, untimed, pending):
        assert capi.aclrtDestroyEvent(e) == 0


@pytest.mark.parametrize("flag, ok", [
    (capi.ACL_EVENT_SYNC, True), (capi.ACL_EVENT_TIME_LINE, True),
    (capi.ACL_EVENT_SYNC | capi.ACL_EVENT_CAPTURE_STREAM_PROGRESS | capi.ACL_EVENT_TIME_LINE, True),
    (capi.ACL_EVENT_EXTERNAL, True), (capi.ACL_EVENT_DEVICE_USE_ONLY, True),
    (0, False), (0x80, False), (capi.ACL_EVENT_EXTERNAL | capi.ACL_EVENT_SYNC, False),
    (capi.ACL_EVENT_IPC, False),
])
def test_create_event_with_flag(acl, recent_error, flag, ok):
    e = ctypes.c_void_p()
    status = capi.aclrtCreateEventWithFlag(ctypes.byref(e), flag)
    if ok:
        assert status == 0
        assert capi.aclrtDestroyEvent(e) == 0
    else:
        expect_failure(status, 107000, "aclrtCreateEventWithFlag", f"flag {flag:#x}" if flag else "flag 0")


@pytest.mark.parametrize("flag, code", [
    (capi.ACL_EVENT_SYNC | capi.ACL_EVENT_TIME_LINE, 0), (capi.ACL_EVENT_IPC, 207000),
    (capi.ACL_EVENT_EXTERNAL, 107000), (capi.ACL_EVENT_IPC | capi.ACL_EVENT_SYNC, 107000), (0, 107000),
])
def test_create_event_ex_with_flag(acl, recent_error, flag, code):
    e = ctypes.c_void_p()
    status = capi.aclrtCreateEventExWithFlag(ctypes.byref(e), flag)
    if code == 0:
        assert status == 0 and capi.aclrtDestroyEvent(e) == 0
    else:
        expect_failure(status, code, "aclrtCreateEventExWithFlag")


def test_external_events_have_no_time(acl, stream, recent_error):
    e = create_event(capi.ACL_EVENT_EXTERNAL)
    assert capi.aclrtRecordEvent(e, stream) == 0 and capi.aclrtSynchronizeEvent(e) == 0
    stamp = ctypes.c_uint64()
    expect_failure(capi.aclrtEventGetTimestamp(e, ctypes.byref(stamp)), 207000, "aclrtEventGetTimestamp")
    assert capi.aclrtDestroyEvent(e) == 0


def test_stale_and_foreign_event_handles(acl, stream, recent_error):
    e = create_event()
    assert capi.aclrtDestroyEvent(e) == 0
    host = np.zeros(8, np.uint8)
    status = ctypes.c_int()
    for handle in (e, host.ctypes.data):
        expect_failure(capi.aclrtRecordEvent(handle, stream), 107000, "aclrtRecordEvent", "not a live event")
        expect_failure(capi.aclrtSynchronizeEvent(handle), 107000, "aclrtSynchronizeEvent")
        expect_failure(capi.aclrtQueryEventStatus(handle, ctypes.byref(status)), 107000, "aclrtQueryEventStatus")
        expect_failure(capi.aclrtStreamWaitEvent(stream, handle), 107000, "aclrtStreamWaitEvent")
        expect_failure(capi.aclrtDestroyEvent(handle), 107000, "aclrtDestroyEvent")
        expect_failure(capi.aclrtResetEvent(handle, stream), 107000, "aclrtResetEvent")
    for call, name in [(lambda: capi.aclrtDestroyEvent(None), "aclrtDestroyEvent"),
                       (lambda: capi.aclrtRecordEvent(None, stream), "aclrtRecordEvent"),
                       (lambda: capi.aclrtSynchronizeEvent(None), "aclrtSynchronizeEvent"),
                       (lambda: capi.aclrtStreamWaitEvent(stream, None), "aclrtStreamWaitEvent"),
                       (lambda: capi.aclrtCreateEvent(None), "aclrtCreateEvent"),
                       (lambda: capi.aclrtCreateEventWithFlag(None, 8), "aclrtCreateEventWithFlag")]:
        expect_failure(call(), 100000, name)
    live = create_event()
    expect_failure(capi.aclrtQueryEventStatus(live, None), 100000, "aclrtQueryEventStatus")
    expect_failure(capi.aclrtRecordEvent(live, 4242), 107000, "aclrtRecordEvent", "not a live stream")
    assert capi.aclrtDestroyEvent(live) == 0


def test_destroying_a_recorded_event_with_pending_work_is_safe(acl, stream):
    waiter = create_stream()
    gate = Gate()
    gate.submit(stream)
    e = create_event()
    assert capi.aclrtRecordEvent(e, stream) == 0
    assert capi.aclrtStreamWaitEvent(waiter, e) == 0
    assert capi.aclrtDestroyEvent(e) == 0            # the queued wait still completes
    gate.open()
    assert capi.aclrtSynchronizeStreamWithTimeout(waiter, 5000) == 0
    assert capi.aclrtDestroyStream(waiter) == 0
