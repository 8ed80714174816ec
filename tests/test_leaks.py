"""Leak accounting: the stub's live-object counts (pyaclnn._stubinfo.live_counts) and the report
aclFinalize prints on request (PYACLNN_STUB_LEAK_REPORT=1)."""
from __future__ import annotations

import ctypes

import pytest
from helpers import contiguous_strides, int64_array, run_python

from pyaclnn import capi
from pyaclnn._stubinfo import FIELDS, leaked, live_counts

C = ctypes


def _check(status, what):
    assert status == 0, f"{what} -> {status}: {capi.aclGetRecentErrMsg()}"


def _delta(before) -> dict:
    return leaked(before, live_counts())


def test_counts_have_every_field(acl):
    counts = live_counts()
    assert counts is not None
    assert set(counts) == set(FIELDS)
    assert all(isinstance(v, int) and v >= 0 for v in counts.values())


def test_device_memory_is_counted_until_freed(acl):
    before = live_counts()
    p, q = C.c_void_p(), C.c_void_p()
    _check(capi.aclrtMalloc(C.byref(p), 100, capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    _check(capi.aclrtMallocAlign32(C.byref(q), 64, capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMallocAlign32")
    assert _delta(before) == {"device_allocations": 2, "device_bytes": 164}   # bytes as requested
    _check(capi.aclrtFree(p), "aclrtFree")
    assert _delta(before) == {"device_allocations": 1, "device_bytes": 64}
    _check(capi.aclrtFree(q), "aclrtFree")
    assert _delta(before) == {}


def test_refused_calls_change_nothing(acl):
    before = live_counts()
    p = C.c_void_p()
    assert capi.aclrtMalloc(C.byref(p), 0, 0) != 0                    # size 0
    assert capi.aclrtFree(0xDEADBEEF) != 0
    assert not capi.aclCreateTensor(int64_array([-1]), 1, capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND,
                                    int64_array([1]), 1, None)          # negative dim
    assert capi.aclrtCreateEventWithFlag(C.byref(p), 0) != 0           # no flag
    capi.aclGetRecentErrMsg()
    assert _delta(before) == {}


def test_runtime_objects_are_counted(acl):
    before = live_counts()
    s, e, host = C.c_void_p(), C.c_void_p(), C.c_void_p()
    _check(capi.aclrtCreateStream(C.byref(s)), "aclrtCreateStream")
    _check(capi.aclrtCreateEvent(C.byref(e)), "aclrtCreateEvent")
    _check(capi.aclrtMallocHost(C.byref(host), 256), "aclrtMallocHost")
    assert _delta(before) == {"streams": 1, "events": 1, "host_allocations": 1}
    _check(capi.aclrtDestroyStream(s), "aclrtDestroyStream")
    _check(capi.aclrtDestroyEvent(e), "aclrtDestroyEvent")
    _check(capi.aclrtFreeHost(host), "aclrtFreeHost")
    assert _delta(before) == {}


def test_contexts_are_counted_with_their_streams(acl):
    before = live_counts()
    current = C.c_void_p()
    _check(capi.aclrtGetCurrentContext(C.byref(current)), "aclrtGetCurrentContext")
    ctx, s = C.c_void_p(), C.c_void_p()
    _check(capi.aclrtCreateContext(C.byref(ctx), 0), "aclrtCreateContext")
    _check(capi.aclrtCreateStream(C.byref(s)), "aclrtCreateStream")
    assert _delta(before) == {"contexts": 1, "streams": 1}
    _check(capi.aclrtDestroyContext(ctx), "aclrtDestroyContext")       # takes its stream along
    _check(capi.aclrtSetCurrentContext(current), "aclrtSetCurrentContext")
    assert _delta(before) == {}


def test_aclnn_objects_are_counted(acl):
    before = live_counts()
    dims = int64_array([2, 3])
    t1 = capi.aclCreateTensor(dims, 2, capi.ACL_FLOAT, int64_array(contiguous_strides([2, 3])), 0,
                              capi.ACL_FORMAT_ND, dims, 2, None)
    t2 = capi.aclCreateTensor(dims, 2, capi.ACL_FLOAT16, None, 0, capi.ACL_FORMAT_ND, dims, 2, None)
    value = C.c_float(1.5)
    scalar = capi.aclCreateScalar(C.cast(C.byref(value), C.c_void_p), capi.ACL_FLOAT)
    ints = capi.aclCreateIntArray(int64_array([1, 2]), 2)
    floats = capi.aclCreateFloatArray((C.c_float * 1)(0.5), 1)
    bools = capi.aclCreateBoolArray((C.c_bool * 2)(True, False), 2)
    assert all((t1, t2, scalar, ints, floats, bools))
    assert _delta(before) == {"tensors": 2, "scalars": 1, "arrays": 3}
    tensor_list = capi.aclCreateTensorList((C.c_void_p * 2)(t1, t2), 2)   # takes the tensors
    scalar_list = capi.aclCreateScalarList((C.c_void_p * 1)(scalar), 1)
    assert tensor_list and scalar_list
    assert _delta(before) == {"tensors": 2, "scalars": 1, "arrays": 3, "tensor_lists": 1, "scalar_lists": 1}
    _check(capi.aclDestroyTensorList(tensor_list), "aclDestroyTensorList")   # and its tensors
    _check(capi.aclDestroyScalarList(scalar_list), "aclDestroyScalarList")
    for destroy, h in ((capi.aclDestroyIntArray, ints), (capi.aclDestroyFloatArray, floats),
                       (capi.aclDestroyBoolArray, bools)):
        _check(destroy(h), destroy.__name__)
    assert _delta(before) == {}


def _amp_tensors():
    """Five one-element device tensors for aclnnAmpUpdateScale; returns (tensors, buffers)."""
    tensors, buffers = [], []
    for dtype in (capi.ACL_FLOAT, capi.ACL_INT32, capi.ACL_FLOAT, capi.ACL_FLOAT, capi.ACL_INT32):
        p = C.c_void_p()
        _check(capi.aclrtMalloc(C.byref(p), 4, 0), "aclrtMalloc")
        _check(capi.aclrtMemset(p, 4, 0, 4), "aclrtMemset")
        buffers.append(p.value)
        t = capi.aclCreateTensor(int64_array([1]), 1, dtype, None, 0, capi.ACL_FORMAT_ND, int64_array([1]), 1, p)
        assert t
        tensors.append(t)
    return tensors, buffers


def test_executors_are_counted_until_consumed_or_destroyed(acl, stream):
    before = live_counts()
    tensors, buffers = _amp_tensors()
    ws, ex = C.c_uint64(), C.c_void_p()

    def phase1():
        _check(capi.aclnnAmpUpdateScaleGetWorkspaceSize(*tensors[:3], 2.0, 0.5, 1000, *tensors[3:], C.byref(ws),
                                                        C.byref(ex)), "phase 1")
    phase1()
    assert _delta(before)["executors"] == 1
    _check(capi.aclnnAmpUpdateScale(None, 0, ex, stream), "phase 2")        # a single-use executor is consumed
    assert "executors" not in _delta(before)
    phase1()
    _check(capi.aclDestroyAclOpExecutor(ex), "aclDestroyAclOpExecutor")      # an unused one is destroyed
    phase1()
    _check(capi.aclSetAclOpExecutorRepeatable(ex), "repeatable")
    for _ in range(3):
        _check(capi.aclnnAmpUpdateScale(None, 0, ex, stream), "phase 2")
    assert _delta(before)["executors"] == 1                                 # a repeatable one survives runs
    _check(capi.aclDestroyAclOpExecutor(ex), "aclDestroyAclOpExecutor")
    _check(capi.aclrtSynchronizeStream(stream), "sync")
    for t in tensors:
        _check(capi.aclDestroyTensor(t), "aclDestroyTensor")
    for p in buffers:
        _check(capi.aclrtFree(p), "aclrtFree")
    assert _delta(before) == {}


def test_live_counts_is_none_without_the_stub():
    rc, out, err = run_python("""
        from pyaclnn._stubinfo import live_counts
        print(live_counts())
    """, env_overrides={"PYACLNN_BACKEND": "cann", "ASCEND_HOME_PATH": "/nonexistent",
                        "ASCEND_TOOLKIT_HOME": "/nonexistent"})
    assert rc == 0, err
    assert out.strip() == "None"


LEAKY_PROGRAM = """
    import ctypes
    from pyaclnn import capi
    assert capi.aclInit(None) == 0
    assert capi.aclrtSetDevice(0) == 0
    p, s = ctypes.c_void_p(), ctypes.c_void_p()
    assert capi.aclrtMalloc(ctypes.byref(p), 1000, 0) == 0
    assert capi.aclrtCreateStream(ctypes.byref(s)) == 0
    dims = (ctypes.c_int64 * 1)(4)
    assert capi.aclCreateTensor(dims, 1, capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, dims, 1, p)
    assert capi.aclFinalize() == 0
    print("finalized")
"""


def test_finalize_reports_what_is_alive_when_asked():
    rc, out, err = run_python(LEAKY_PROGRAM, env_overrides={"PYACLNN_STUB_LEAK_REPORT": "1"})
    assert rc == 0, err
    assert out.strip() == "finalized"
    report = [line for line in err.splitlines() if "aclFinalize" in line]
    assert len(report) == 1, err
    for fragment in ("live device allocations 1 (1000 bytes)", "streams 1", "tensors 1", "executors 0"):
        assert fragment in report[0], report[0]


@pytest.mark.parametrize("setting", [None, "0", ""])
def test_finalize_is_silent_by_default(setting):
    rc, out, err = run_python(LEAKY_PROGRAM, env_overrides={"PYACLNN_STUB_LEAK_REPORT": setting})
    assert rc == 0, err
    assert "live device allocations" not in err
