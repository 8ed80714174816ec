"""Streams (abi.md §1.4, §5.5): in-order execution on a worker, synchronous copies that do not wait,
async copies of pageable vs pinned memory, timeouts, destruction, stale handles, asynchronous
failures, threads and process exit."""
from __future__ import annotations

import ctypes
import re
import threading
import time

import numpy as np
import pytest

from helpers import REPO_ROOT, run_python
from pyaclnn import capi
from test_runtime_support import (Gate, PythonTask, create_stream, download, elapsed, expect_failure,
                                  free, malloc, run_in_thread, stub_function, task_fail, upload)


def query(stream) -> int:
    status = ctypes.c_int(-1)
    assert capi.aclrtStreamQuery(stream, ctypes.byref(status)) == 0
    return status.value


def test_tasks_run_in_submission_order(acl, stream):
    p = malloc(4096)
    upload(p, np.zeros(4096, np.uint8))
    out = np.zeros(4096, np.uint8)
    for value in range(1, 201):                      # fill v covers bytes [0, 4096 - v)
        assert capi.aclrtMemsetAsync(p, 4096, value, 4096 - value, stream) == 0
    assert capi.aclrtMemcpyAsync(out.ctypes.data, 4096, p, 4096, capi.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert capi.aclrtSynchronizeStream(stream) == 0
    expected = np.array([min(200, 4095 - i) for i in range(4096)], np.uint8)   # the last writer wins
    np.testing.assert_array_equal(out, expected)
    free(p)


def test_work_really_is_deferred_and_memcpy_does_not_wait(acl, stream, hazards_off):
    p = malloc(64)
    upload(p, np.zeros(64, np.uint8))
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtMemsetAsync(p, 64, 0xAB, 64, stream) == 0
    assert gate.entered.wait(10)
    assert query(stream) == capi.ACL_STREAM_STATUS_NOT_READY
    # The synchronous copy runs now: the fill is still queued behind the gate.
    np.testing.assert_array_equal(download(p, 64), 0)
    gate.open()
    assert capi.aclrtSynchronizeStream(stream) == 0
    assert query(stream) == capi.ACL_STREAM_STATUS_COMPLETE
    np.testing.assert_array_equal(download(p, 64), 0xAB)
    free(p)


def test_async_copy_from_pinned_memory_returns_at_once(acl, stream):
    p = malloc(64)
    upload(p, np.full(64, 3, np.uint8))
    h = ctypes.c_void_p()
    assert capi.aclrtMallocHost(ctypes.byref(h), 64) == 0
    ctypes.memset(h, 0, 64)
    gate = Gate()
    gate.submit(stream)
    status, seconds = elapsed(lambda: capi.aclrtMemcpyAsync(h, 64, p, 64, capi.ACL_MEMCPY_DEVICE_TO_HOST, stream))
    assert status == 0 and seconds < 5
    assert ctypes.string_at(h, 64) == bytes(64)           # not copied yet: the stream is blocked
    gate.open()
    assert capi.aclrtSynchronizeStream(stream) == 0
    assert ctypes.string_at(h, 64) == bytes([3]) * 64
    assert capi.aclrtFreeHost(h) == 0
    free(p)


def test_async_copy_from_pageable_memory_returns_after_the_copy(acl, stream):
    p = malloc(64)
    upload(p, np.full(64, 5, np.uint8))
    out = np.zeros(64, np.uint8)
    gate = Gate()
    gate.submit(stream)
    timer = gate.open_after(0.3)
    status, seconds = elapsed(
        lambda: capi.aclrtMemcpyAsync(out.ctypes.data, 64, p, 64, capi.ACL_MEMCPY_DEVICE_TO_HOST, stream))
    timer.join()
    assert status == 0 and seconds >= 0.25                # it waited for the gate, in stream order
    np.testing.assert_array_equal(out, 5)                 # and the copy is done on return
    free(p)


def test_synchronize_with_timeout(acl, stream, recent_error):
    gate = Gate()
    gate.submit(stream)
    status, seconds = elapsed(lambda: capi.aclrtSynchronizeStreamWithTimeout(stream, 50))
    expect_failure(status, 507046, "aclrtSynchronizeStreamWithTimeout", "unfinished task")
    assert 0.04 <= seconds < 5
    expect_failure(capi.aclrtSynchronizeStreamWithTimeout(stream, 0), 507046, "aclrtSynchronizeStreamWithTimeout")
    expect_failure(capi.aclrtSynchronizeStreamWithTimeout(stream, -2), 107000,
                   "aclrtSynchronizeStreamWithTimeout", "timeout -2")
    gate.open()
    assert capi.aclrtSynchronizeStreamWithTimeout(stream, -1) == 0
    assert capi.aclrtSynchronizeStreamWithTimeout(stream, 0) == 0


def test_device_synchronize_waits_for_every_stream(acl, recent_error):
    streams = [create_stream() for _ in range(3)]
    gates = [Gate() for _ in streams]
    p = malloc(3)
    for i, (s, g) in enumerate(zip(streams, gates)):
        g.submit(s)
        assert capi.aclrtMemsetAsync(p + i, 1, i + 1, 1, s) == 0
    expect_failure(capi.aclrtSynchronizeDeviceWithTimeout(30), 507046, "aclrtSynchronizeDeviceWithTimeout")
    expect_failure(capi.aclrtSynchronizeDeviceWithTimeout(-5), 107000, "aclrtSynchronizeDeviceWithTimeout")
    timers = [g.open_after(0.05 * i) for i, g in enumerate(gates)]
    assert capi.aclrtSynchronizeDevice() == 0
    np.testing.assert_array_equal(download(p, 3), [1, 2, 3])
    for t in timers:
        t.join()
    for s in streams:
        assert capi.aclrtDestroyStream(s) == 0
    free(p)


def test_null_stream_is_the_default_stream(acl):
    p = malloc(16)
    gate = Gate()
    gate.submit(None)
    assert capi.aclrtMemsetAsync(p, 16, 7, 16, None) == 0
    assert query(None) == capi.ACL_STREAM_STATUS_NOT_READY
    gate.open()
    assert capi.aclrtSynchronizeStream(None) == 0
    np.testing.assert_array_equal(download(p, 16), 7)
    free(p)


def test_destroy_runs_queued_work_first(acl):
    s = create_stream()
    p = malloc(16)
    upload(p, np.zeros(16, np.uint8))
    gate = Gate()
    gate.submit(s)
    assert capi.aclrtMemsetAsync(p, 16, 1, 16, s) == 0
    timer = gate.open_after(0.1)
    assert capi.aclrtDestroyStream(s) == 0
    np.testing.assert_array_equal(download(p, 16), 1)
    timer.join()
    free(p)


def test_destroy_force_drops_work_not_started(acl):
    s = create_stream()
    p = malloc(16)
    upload(p, np.zeros(16, np.uint8))
    gate = Gate()
    gate.submit(s)
    assert capi.aclrtMemsetAsync(p, 16, 1, 16, s) == 0
    assert gate.entered.wait(10)
    timer = gate.open_after(0.1)
    assert capi.aclrtDestroyStreamForce(s) == 0
    np.testing.assert_array_equal(download(p, 16), 0)     # the fill never ran
    timer.join()
    free(p)


def test_stale_and_foreign_stream_handles(acl, recent_error):
    s = create_stream()
    assert capi.aclrtDestroyStream(s) == 0
    host = np.zeros(16, np.uint8)
    p = malloc(16)
    for handle, what in [(s, "destroyed"), (host.ctypes.data, "foreign"), (12345, "garbage")]:
        expect_failure(capi.aclrtSynchronizeStream(handle), 107000, "aclrtSynchronizeStream", "not a live stream")
        expect_failure(capi.aclrtDestroyStream(handle), 107000, "aclrtDestroyStream")
        expect_failure(capi.aclrtMemsetAsync(p, 16, 0, 16, handle), 107000, "aclrtMemsetAsync")
        expect_failure(capi.aclrtMemcpyAsync(p, 16, host.ctypes.data, 16, capi.ACL_MEMCPY_HOST_TO_DEVICE, handle),
                       107000, "aclrtMemcpyAsync")
        status = ctypes.c_int()
        expect_failure(capi.aclrtStreamQuery(handle, ctypes.byref(status)), 107000, "aclrtStreamQuery")
    expect_failure(capi.aclrtDestroyStream(None), 100000, "aclrtDestroyStream")
    expect_failure(capi.aclrtCreateStream(None), 100000, "aclrtCreateStream")
    expect_failure(capi.aclrtStreamQuery(None, None), 100000, "aclrtStreamQuery")
    free(p)


def test_create_stream_with_config(acl):
    s = ctypes.c_void_p()
    assert capi.aclrtCreateStreamWithConfig(ctypes.byref(s), 99, capi.ACL_STREAM_FAST_LAUNCH) == 0
    assert capi.aclrtSynchronizeStream(s) == 0 and capi.aclrtDestroyStream(s) == 0
    expect_failure(capi.aclrtCreateStreamWithConfig(None, 0, 0), 100000, "aclrtCreateStreamWithConfig")


def test_asynchronous_failure_surfaces_at_the_next_covering_sync(acl, stream, recent_error):
    failing = PythonTask(lambda: task_fail(507015, b"core 3 raised an exception"))
    assert failing.submit(stream) == 0
    assert recent_error() is None                         # the launch itself succeeded
    message = expect_failure(capi.aclrtSynchronizeStream(stream), 507015, "aclrtSynchronizeStream")
    assert re.search(r"\): task \d+ on stream 0x[0-9a-f]+ failed: core 3 raised an exception$", message.strip())
    assert capi.aclrtSynchronizeStream(stream) == 0       # reported once
    # Also through an event recorded after the failed task, and through the device.
    for _ in range(2):
        assert failing.submit(stream) == 0
    e = ctypes.c_void_p()
    assert capi.aclrtCreateEvent(ctypes.byref(e)) == 0 and capi.aclrtRecordEvent(e, stream) == 0
    expect_failure(capi.aclrtSynchronizeEvent(e), 507015, "aclrtSynchronizeEvent", "1 later task failure")
    assert failing.submit(stream) == 0
    expect_failure(capi.aclrtSynchronizeDevice(), 507015, "aclrtSynchronizeDevice")
    assert capi.aclrtSynchronizeDevice() == 0
    assert capi.aclrtDestroyEvent(e) == 0


def test_task_fail_outside_a_task_reports_to_the_caller(acl, recent_error):
    task_fail(561103, b"not on a stream")
    assert "pyaclnn_stub_task_fail(561103): not on a stream" in recent_error()


def test_submit_releases_its_argument_even_on_failure(acl, recent_error):
    released = []
    release = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda arg: released.append(arg))
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda arg: None)
    submit = stub_function("pyaclnn_stub_stream_submit", ctypes.c_int,
                           [ctypes.c_char_p, ctypes.c_void_p, type(run), type(release), ctypes.c_void_p])
    expect_failure(submit(b"aclnnDemo", 4242, run, release, 17), 107000, "aclnnDemo")
    assert released == [17]
    assert submit(b"aclnnDemo", None, run, release, 18) == 0
    assert capi.aclrtSynchronizeStream(None) == 0
    assert released == [17, 18]


def test_many_threads_share_streams_and_devices(acl, hazards_off):
    """Several threads submit to their own and to a shared stream concurrently (the two streams write
    the same bytes unordered, on purpose: a cross-stream hazard)."""
    shared = create_stream()
    p = malloc(8 * 1024)
    errors = []

    def worker(i):
        try:
            assert capi.aclrtSetDevice(0) == 0
            own = create_stream()
            host = np.zeros(1024, np.uint8)
            for k in range(200):
                assert capi.aclrtMemsetAsync(p + i * 1024, 1024, (i + k) % 256, 1024, own) == 0
                assert capi.aclrtMemsetAsync(p + i * 1024, 1024, (i + k) % 256, 512, shared) == 0
            assert capi.aclrtSynchronizeStream(own) == 0
            assert capi.aclrtSynchronizeStream(shared) == 0
            assert capi.aclrtMemcpy(host.ctypes.data, 1024, p + i * 1024, 1024, capi.ACL_MEMCPY_DEVICE_TO_HOST) == 0
            assert (host == (i + 199) % 256).all()
            assert capi.aclrtDestroyStream(own) == 0
            assert capi.aclrtResetDevice(0) == 0
        except BaseException as exc:   # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert capi.aclrtDestroyStream(shared) == 0
    free(p)


def test_destroying_a_stream_while_another_thread_uses_it_never_crashes(acl):
    p = malloc(64)
    for _ in range(20):
        s = create_stream()
        stop = threading.Event()
        codes = set()

        def hammer():
            capi.aclrtSetDevice(0)
            while not stop.is_set():
                codes.add(capi.aclrtMemsetAsync(p, 64, 1, 64, s))
                codes.add(capi.aclrtSynchronizeStream(s))
            capi.aclrtResetDevice(0)

        t = threading.Thread(target=hammer)
        t.start()
        time.sleep(0.005)
        assert capi.aclrtDestroyStream(s) == 0
        stop.set()
        t.join(10)
        assert codes <= {0, 107000}
    free(p)


def test_submission_is_cheap(acl, stream):
    p = malloc(64)
    n = 20000
    _, seconds = elapsed(lambda: [capi.aclrtMemsetAsync(p, 64, 1, 1, stream) for _ in range(n)])
    assert capi.aclrtSynchronizeStream(stream) == 0
    assert seconds / n < 200e-6, f"{seconds / n * 1e6:.1f} us per submission"
    free(p)


@pytest.mark.parametrize("ending", ["queued work", "blocked stream"])
def test_process_exits_with_streams_still_busy(ending):
    code, out, err = run_python(f"""
import ctypes, sys
from pyaclnn import capi
sys.path.insert(0, {str(REPO_ROOT / 'tests')!r})
from test_runtime_support import Gate
capi.aclrtSetDevice(0)
s = ctypes.c_void_p(); capi.aclrtCreateStream(ctypes.byref(s))
p = ctypes.c_void_p(); capi.aclrtMalloc(ctypes.byref(p), 1 << 24, 0)
if {ending!r} == "blocked stream":
    gate = Gate(); gate.submit(s)
for _ in range(200):
    capi.aclrtMemsetAsync(p, 1 << 24, 1, 1 << 24, s)
print("bye", flush=True)
""", timeout=30)
    assert code == 0, err
    assert out.strip() == "bye"


def test_stream_calls_from_a_thread_without_context(acl, stream):
    def body():
        return [capi.aclrtSynchronizeStream(stream), capi.aclrtMemsetAsync(0, 0, 0, 0, stream)]

    # Synchronising needs a current context, as on the NPU; an empty fill needs nothing.
    assert run_in_thread(body) == [107002, 0]
