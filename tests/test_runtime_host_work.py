"""Host work in stream order and device-memory synchronisation (docs/torch_npu.md):
aclrtLaunchHostFunc, aclrtSubscribeReport / aclrtLaunchCallback / aclrtProcessReport / aclrtUnSubscribeReport,
aclrtValueWrite / aclrtValueWait and aclrtQueryEventWaitStatus.

* tests/c/host_work.c checks the ordering (host functions and callbacks between copies and kernels, blocking
  and non-blocking callbacks on a subscribed thread, a value wait releasing a stream when another writes)
  with the hazard checker on: the correct programs have no finding, the wrong one has its cross-stream one.
* The rest checks the argument rules and codes of hicann/runtime, one by one, through pyaclnn.capi.
"""
from __future__ import annotations

import ctypes
import subprocess
import threading
import time

import numpy as np
import pytest

from helpers import REPO_ROOT, build_c_driver, run_python, subprocess_env
from pyaclnn import capi
from test_runtime_support import Gate, create_event, create_stream, download, expect_failure, free, malloc, upload

SOURCE = REPO_ROOT / "tests" / "c" / "host_work.c"
PARAM_INVALID, INVALID_PARAM, FEATURE_NOT_SUPPORT = 107000, 100000, 207000
STREAM_SUBSCRIBE, THREAD_SUBSCRIBE, STREAM_NO_CB_REG, REPORT_TIMEOUT = 107011, 107012, 107015, 507012
SYNC_TIMEOUT = 507046

# Python functions handed to the runtime must outlive the calls that may run them.
_KEEP: list = []


def host_func(fn) -> capi.aclrtHostFunc:
    f = capi.aclrtHostFunc(lambda _arg: fn())
    _KEEP.append(f)
    return f


def callback(fn) -> capi.aclrtCallback:
    f = capi.aclrtCallback(lambda _arg: fn())
    _KEEP.append(f)
    return f


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_c_driver(tmp_path_factory, SOURCE)


def _run_driver(driver, scenario: str, mode: str):
    done = subprocess.run([str(driver), scenario], capture_output=True, text=True, timeout=120,
                          env=subprocess_env({"PYACLNN_STUB_HAZARDS": mode}))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == f"ok {scenario}", done.stdout
    return int(lines[1].split()[1]), done.stderr


@pytest.mark.parametrize("scenario", ["hostfunc", "callback", "value", "destroy"])
@pytest.mark.parametrize("mode", ["report", "error", "off"])
def test_ordering_in_c(driver, scenario, mode):
    # In error mode a false report would refuse a call and fail the driver; in report mode it is counted.
    findings, err = _run_driver(driver, scenario, mode)
    assert findings == 0, err


def test_value_write_without_a_wait_is_a_cross_stream_hazard(driver):
    findings, err = _run_driver(driver, "value_bug", "report")
    assert findings == 1 and "cross-stream" in err and "aclnnInplaceCopy" in err


# ---- host functions -----------------------------------------------------------------------------

def test_host_function_runs_in_stream_order_on_another_thread(acl, stream):
    seen = []
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtLaunchHostFunc(stream, host_func(lambda: seen.append(("first", threading.get_ident()))),
                                    None) == 0
    gate2 = Gate()
    gate2.submit(stream)
    assert capi.aclrtLaunchHostFunc(stream, host_func(lambda: seen.append(("second", threading.get_ident()))),
                                    None) == 0
    time.sleep(0.05)
    assert seen == []                                   # held back by the gate
    gate.open()
    assert gate2.entered.wait(5)
    assert [s[0] for s in seen] == ["first"]            # and the second by the second gate
    gate2.open()
    assert capi.aclrtSynchronizeStream(stream) == 0
    assert [s[0] for s in seen] == ["first", "second"]
    assert seen[0][1] != threading.get_ident()


def test_host_function_argument_checks(acl, stream):
    expect_failure(capi.aclrtLaunchHostFunc(stream, None, None), PARAM_INVALID, "aclrtLaunchHostFunc", "fn is NULL")
    expect_failure(capi.aclrtLaunchHostFunc(0x1234, host_func(lambda: None), None), PARAM_INVALID,
                   "aclrtLaunchHostFunc", "not a live stream")


def test_host_function_needs_a_context():
    code, out, err = run_python("""
        import ctypes
        from pyaclnn import capi
        f = capi.aclrtHostFunc(lambda a: None)
        print(capi.aclrtLaunchHostFunc(None, f, None), b"no current context" in capi.aclGetRecentErrMsg())
    """)
    assert code == 0, err
    assert out.split() == ["107002", "True"]


# ---- callbacks ----------------------------------------------------------------------------------

def _self_id() -> int:
    return threading.get_ident()        # pthread_self() of the calling thread, as the vendor's threadId


def test_callbacks_run_in_the_thread_that_processes_reports(acl, stream):
    me = _self_id()
    ran = []
    assert capi.aclrtSubscribeReport(me, stream) == 0
    try:
        fn = callback(lambda: ran.append(threading.get_ident()))
        assert capi.aclrtLaunchCallback(fn, None, capi.ACL_CALLBACK_NO_BLOCK, stream) == 0
        assert capi.aclrtLaunchCallback(fn, None, capi.ACL_CALLBACK_NO_BLOCK, stream) == 0
        assert capi.aclrtSynchronizeStream(stream) == 0   # non-blocking: the stream does not wait for them
        assert ran == []
        assert capi.aclrtProcessReport(2000) == 0
        while len(ran) < 2:                              # both may arrive in one report, or two
            assert capi.aclrtProcessReport(2000) == 0
        assert ran == [threading.get_ident()] * 2
        status, seconds = _timed(lambda: capi.aclrtProcessReport(30))
        expect_failure(status, REPORT_TIMEOUT, "aclrtProcessReport", "within 30 ms")
        assert seconds >= 0.025
    finally:
        assert capi.aclrtUnSubscribeReport(me, stream) == 0


def _timed(call):
    t0 = time.monotonic()
    status = call()
    return status, time.monotonic() - t0


def test_blocking_callback_holds_the_stream(acl, stream):
    me = _self_id()
    ran = []
    assert capi.aclrtSubscribeReport(me, stream) == 0
    try:
        fn = callback(lambda: ran.append("cb"))
        assert capi.aclrtLaunchCallback(fn, None, capi.ACL_CALLBACK_BLOCK, stream) == 0
        after = host_func(lambda: ran.append("after"))
        # The stream cannot run a host function (it is subscribed): queue a plain task behind the callback.
        event = create_event()
        try:
            assert capi.aclrtRecordEvent(event, stream) == 0
            expect_failure(capi.aclrtSynchronizeEventWithTimeout(event, 50), 507047,
                           "aclrtSynchronizeEventWithTimeout")
            assert capi.aclrtProcessReport(2000) == 0 and ran == ["cb"]
            assert capi.aclrtSynchronizeEvent(event) == 0
        finally:
            capi.aclrtDestroyEvent(event)
        expect_failure(capi.aclrtLaunchHostFunc(stream, after, None), STREAM_SUBSCRIBE, "aclrtLaunchHostFunc",
                       "aclrtSubscribeReport")
    finally:
        assert capi.aclrtUnSubscribeReport(me, stream) == 0


def test_subscription_rules(acl, recent_error):
    me, other = _self_id(), _self_id() + 1
    s, t = create_stream(), create_stream()
    try:
        fn = callback(lambda: None)
        expect_failure(capi.aclrtLaunchCallback(fn, None, capi.ACL_CALLBACK_BLOCK, s), STREAM_NO_CB_REG,
                       "aclrtLaunchCallback", "aclrtSubscribeReport")
        expect_failure(capi.aclrtUnSubscribeReport(me, s), STREAM_SUBSCRIBE, "aclrtUnSubscribeReport")
        assert capi.aclrtSubscribeReport(me, s) == 0
        expect_failure(capi.aclrtSubscribeReport(me, s), STREAM_SUBSCRIBE, "aclrtSubscribeReport", "already")
        expect_failure(capi.aclrtSubscribeReport(other, s), STREAM_SUBSCRIBE, "aclrtSubscribeReport", "already")
        expect_failure(capi.aclrtUnSubscribeReport(other, s), THREAD_SUBSCRIBE, "aclrtUnSubscribeReport")
        assert capi.aclrtSubscribeReport(me, t) == 0             # one thread may serve several streams
        assert capi.aclrtUnSubscribeReport(me, s) == 0
        assert capi.aclrtUnSubscribeReport(me, t) == 0
        expect_failure(capi.aclrtProcessReport(10), THREAD_SUBSCRIBE, "aclrtProcessReport", "subscribed to no")
        # A stream that ran host functions belongs to the runtime's callback machinery.
        assert capi.aclrtLaunchHostFunc(s, host_func(lambda: None), None) == 0
        expect_failure(capi.aclrtSubscribeReport(me, s), STREAM_SUBSCRIBE, "aclrtSubscribeReport", "host functions")
        expect_failure(capi.aclrtLaunchCallback(fn, None, capi.ACL_CALLBACK_BLOCK, s), STREAM_SUBSCRIBE,
                       "aclrtLaunchCallback", "host functions")
        # Argument checks, in the vendor's order.
        expect_failure(capi.aclrtLaunchCallback(fn, None, 2, t), INVALID_PARAM, "aclrtLaunchCallback", "blockType")
        expect_failure(capi.aclrtLaunchCallback(None, None, capi.ACL_CALLBACK_BLOCK, t), PARAM_INVALID,
                       "aclrtLaunchCallback", "fn is NULL")
        for bad in (0, -2):
            expect_failure(capi.aclrtProcessReport(bad), INVALID_PARAM, "aclrtProcessReport", "timeout")
        expect_failure(capi.aclrtSubscribeReport(me, 0x1234), PARAM_INVALID, "aclrtSubscribeReport")
    finally:
        for x in (s, t):
            capi.aclrtSynchronizeStream(x)
            capi.aclrtDestroyStream(x)


def test_a_callback_whose_stream_was_unsubscribed_fails_its_task(acl, stream):
    me = _self_id()
    gate = Gate()
    gate.submit(stream)
    assert capi.aclrtSubscribeReport(me, stream) == 0
    assert capi.aclrtLaunchCallback(callback(lambda: None), None, capi.ACL_CALLBACK_BLOCK, stream) == 0
    assert capi.aclrtUnSubscribeReport(me, stream) == 0
    gate.open()
    expect_failure(capi.aclrtSynchronizeStream(stream), STREAM_NO_CB_REG, "aclrtSynchronizeStream",
                   "no subscribed thread")


# ---- value write / wait -------------------------------------------------------------------------

def _word(ptr) -> int:
    return int(download(ptr, 8).view(np.uint64)[0])


def _set_word(ptr, value: int) -> None:
    upload(ptr, np.array([value], np.uint64))


@pytest.mark.parametrize("flag, current, value, passes", [
    (capi.ACL_STREAM_WAIT_VALUE_GEQ, 7, 5, True),
    (capi.ACL_STREAM_WAIT_VALUE_GEQ, 3, 5, False),
    (capi.ACL_STREAM_WAIT_VALUE_GEQ, 2**64 - 1, 5, False),     # signed: -1 < 5 (the device's BGE)
    (capi.ACL_STREAM_WAIT_VALUE_EQ, 5, 5, True),
    (capi.ACL_STREAM_WAIT_VALUE_EQ, 6, 5, False),
    (capi.ACL_STREAM_WAIT_VALUE_AND, 0b0110, 0b0100, True),
    (capi.ACL_STREAM_WAIT_VALUE_AND, 0b0010, 0b0100, False),
    (capi.ACL_STREAM_WAIT_VALUE_NOR, 0b0001, 0b0010, True),     # ~(1 | 2) != 0
    (capi.ACL_STREAM_WAIT_VALUE_NOR, 2**64 - 2, 1, False),       # (*p | 1) is all ones
])
def test_value_wait_conditions(acl, stream, flag, current, value, passes):
    word = malloc(8)
    writer = create_stream()
    try:
        _set_word(word, current)
        assert capi.aclrtValueWait(word, value, flag, stream) == 0
        status = capi.aclrtSynchronizeStreamWithTimeout(stream, 40)
        if passes:
            assert status == 0
        else:
            expect_failure(status, SYNC_TIMEOUT, "aclrtSynchronizeStreamWithTimeout")
            release = {capi.ACL_STREAM_WAIT_VALUE_GEQ: value, capi.ACL_STREAM_WAIT_VALUE_EQ: value,
                       capi.ACL_STREAM_WAIT_VALUE_AND: value, capi.ACL_STREAM_WAIT_VALUE_NOR: 0}[flag]
            assert capi.aclrtValueWrite(word, release, 0, writer) == 0       # another stream releases it
            assert capi.aclrtSynchronizeStream(stream) == 0
            assert _word(word) == release
    finally:
        capi.aclrtSynchronizeStream(writer)
        capi.aclrtDestroyStream(writer)
        free(word)


def test_value_write_is_stream_ordered(acl, stream):
    word = malloc(8)
    try:
        _set_word(word, 1)
        gate = Gate()
        gate.submit(stream)
        assert capi.aclrtValueWrite(word, 2**63 + 5, 0, stream) == 0
        assert _word(word) == 1                             # not yet: the gate holds the stream
        gate.open()
        assert capi.aclrtSynchronizeStream(stream) == 0
        assert _word(word) == 2**63 + 5
    finally:
        free(word)


def test_value_argument_checks(acl, stream):
    word, pinned = malloc(64), ctypes.c_void_p()
    host = np.zeros(4, np.uint64)
    assert capi.aclrtMallocHost(ctypes.byref(pinned), 64) == 0
    try:
        for name in ("aclrtValueWrite", "aclrtValueWait"):
            call = getattr(capi, name)
            expect_failure(call(None, 1, 0, stream), INVALID_PARAM, name, "devAddr is NULL")
            expect_failure(call(host.ctypes.data, 1, 0, stream), PARAM_INVALID, name, "UNREGISTERED")
            expect_failure(call(pinned, 1, 0, stream), PARAM_INVALID, name, "HOST")
            expect_failure(call(word + 64 + 32 - 4, 1, 0, stream), PARAM_INVALID, name, "past the end")
            expect_failure(call(word, 1, 0, 0x1234), PARAM_INVALID, name, "not a live stream")
        expect_failure(capi.aclrtValueWrite(word, 1, 1, stream), PARAM_INVALID, "aclrtValueWrite", "must be 0")
        expect_failure(capi.aclrtValueWait(word, 1, 4, stream), PARAM_INVALID, "aclrtValueWait", "_NOR (3)")
    finally:
        capi.aclrtFreeHost(pinned)
        free(word)


def test_value_write_and_wait_need_the_feature():
    code, out, err = run_python("""
        import ctypes
        from pyaclnn import capi
        capi.aclrtSetDevice(0)
        p = ctypes.c_void_p()
        capi.aclrtMalloc(ctypes.byref(p), 64, 0)
        print(capi.aclrtValueWrite(p, 1, 0, None), capi.aclrtValueWait(p, 1, 0, None),
              b"not supported by the pyaclnn CPU emulator" in capi.aclGetRecentErrMsg())
        capi.aclrtFree(p)
    """, env_overrides={"PYACLNN_STUB_SOC": "Ascend310P3"})
    assert code == 0, err
    assert out.split() == ["207000", "207000", "True"]


def test_force_destroy_ends_a_value_wait(acl):
    word = malloc(8)
    s = create_stream()
    try:
        _set_word(word, 0)
        assert capi.aclrtValueWait(word, 1, capi.ACL_STREAM_WAIT_VALUE_EQ, s) == 0
        status, seconds = _timed(lambda: capi.aclrtDestroyStreamForce(s))
        assert status == 0 and seconds < 1.0
    finally:
        free(word)


# ---- aclrtQueryEventWaitStatus -------------------------------------------------------------------

def _wait_status(event) -> int:
    status = ctypes.c_int(-1)
    assert capi.aclrtQueryEventWaitStatus(event, ctypes.byref(status)) == 0
    return status.value


def test_event_wait_status_follows_the_streams_waiting_on_it(acl):
    a, b = create_stream(), create_stream()
    event = create_event()
    try:
        assert _wait_status(event) == capi.ACL_EVENT_WAIT_STATUS_COMPLETE        # nobody waits on it
        gate_a, gate_b = Gate(), Gate()
        gate_a.submit(a)
        assert capi.aclrtRecordEvent(event, a) == 0
        gate_b.submit(b)
        assert capi.aclrtStreamWaitEvent(b, event) == 0                          # queued behind gate_b
        assert _wait_status(event) == capi.ACL_EVENT_WAIT_STATUS_NOT_READY
        gate_b.open()
        time.sleep(0.05)                                                         # b now blocks in the wait
        assert _wait_status(event) == capi.ACL_EVENT_WAIT_STATUS_NOT_READY
        gate_a.open()
        assert capi.aclrtSynchronizeStream(b) == 0
        assert _wait_status(event) == capi.ACL_EVENT_WAIT_STATUS_COMPLETE
    finally:
        for s in (a, b):
            capi.aclrtSynchronizeStream(s)
            capi.aclrtDestroyStream(s)
        capi.aclrtDestroyEvent(event)


def test_event_wait_status_argument_checks(acl):
    status = ctypes.c_int()
    event = create_event()
    external = ctypes.c_void_p()
    assert capi.aclrtCreateEventWithFlag(ctypes.byref(external), capi.ACL_EVENT_EXTERNAL) == 0
    try:
        expect_failure(capi.aclrtQueryEventWaitStatus(None, ctypes.byref(status)), INVALID_PARAM,
                       "aclrtQueryEventWaitStatus", "event is NULL")
        expect_failure(capi.aclrtQueryEventWaitStatus(event, None), INVALID_PARAM, "aclrtQueryEventWaitStatus",
                       "status is NULL")
        expect_failure(capi.aclrtQueryEventWaitStatus(external, ctypes.byref(status)), FEATURE_NOT_SUPPORT,
                       "aclrtQueryEventWaitStatus", "external")
    finally:
        capi.aclrtDestroyEvent(external)
        capi.aclrtDestroyEvent(event)
    expect_failure(capi.aclrtQueryEventWaitStatus(event, ctypes.byref(status)), PARAM_INVALID,
                   "aclrtQueryEventWaitStatus", "not a live event")


def test_forked_child_gets_507899_from_the_new_entry_points():
    code, out, err = run_python("""
        import ctypes, os, signal
        from pyaclnn import capi
        assert capi.aclrtSetDevice(0) == 0
        s = ctypes.c_void_p()
        assert capi.aclrtCreateStream(ctypes.byref(s)) == 0           # starts a stream worker: the runtime is up
        p = ctypes.c_void_p()
        assert capi.aclrtMalloc(ctypes.byref(p), 64, 0) == 0
        f = capi.aclrtHostFunc(lambda a: None)
        pid = os.fork()
        if pid == 0:
            signal.alarm(10)
            v, i = ctypes.c_int64(), ctypes.c_int32()
            codes = [capi.aclrtLaunchHostFunc(s, f, None), capi.aclrtValueWrite(p, 1, 0, s),
                     capi.aclrtValueWait(p, 1, 0, s), capi.aclrtProcessReport(10),
                     capi.aclrtSubscribeReport(1, s), capi.aclrtGetDeviceInfo(0, 101, ctypes.byref(v)),
                     capi.aclrtGetPrimaryCtxState(0, None, ctypes.byref(i)), capi.aclrtStreamGetId(s, ctypes.byref(i)),
                     capi.aclrtHostRegisterV2(p, 64, 2), capi.aclrtCmoAsync(p, 8, 0, s)]
            os.write(1, (" ".join(map(str, codes)) + "\\n").encode())
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert capi.aclrtLaunchHostFunc(s, f, None) == 0 and capi.aclrtSynchronizeStream(s) == 0
        capi.aclrtFree(p)
        capi.aclrtDestroyStream(s)
    """, timeout=60)
    assert code == 0, err
    assert out.split() == ["507899"] * 10
