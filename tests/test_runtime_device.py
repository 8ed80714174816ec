"""Devices and contexts (abi.md §1.2, §1.3, §5.2). Configuration read from the environment and the
set/reset reference counts are process-global, so those tests run in a fresh interpreter."""
from __future__ import annotations

import ctypes
import json
import os

import pytest

from helpers import REPO_ROOT, run_python
from pyaclnn import capi
from test_runtime_support import expect_failure, run_in_thread, soc_family

PRELUDE = """
import ctypes, json
from pyaclnn import capi
def count():
    n = ctypes.c_uint32(12345)
    return [capi.aclrtGetDeviceCount(ctypes.byref(n)), n.value]
def current():
    d = ctypes.c_int32(-1)
    return [capi.aclrtGetDevice(ctypes.byref(d)), d.value]
"""


def run(body: str, env: dict | None = None) -> object:
    code, out, err = run_python(PRELUDE + body, env)
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


DEVICE_ENV = ("PYACLNN_STUB_DEVICE_COUNT", "ASCEND_RT_VISIBLE_DEVICES")


@pytest.mark.parametrize("count, visible, expected", [
    (None, None, 1),          # default: one device
    ("4", None, 4),
    ("4", "1,3", 2),          # filtered and renumbered
    ("4", "0,2,9", 2),        # stops at the first id out of range
    ("4", "2,,3", 1),         # stops at a doubled comma
    ("4", "1 ,2", 1),         # stops at any other character
    ("4", "3,1", None),       # not ascending: no device at all
    ("4", "1,1", None),       # duplicated
    ("4", "abc", None),
    ("4", "", None),
    ("0", None, 0),
    ("500", None, 64),        # capped
])
def test_device_count_and_visible_devices(count, visible, expected):
    r = run("""
result = dict(count=count())
for d in range(6):
    result[d] = capi.aclrtSetDevice(d)
print(json.dumps(result))
""", {"PYACLNN_STUB_DEVICE_COUNT": count, "ASCEND_RT_VISIBLE_DEVICES": visible})
    if expected is None:
        assert r["count"][0] == capi.ACL_ERROR_RT_NO_DEVICE
        assert all(r[str(d)] == capi.ACL_ERROR_RT_INVALID_DEVICEID for d in range(6))
    else:
        assert r["count"] == [0, expected]
        usable = min(expected, 6)
        assert [r[str(d)] for d in range(6)] == [0] * usable + [107001] * (6 - usable)


def test_set_device_binds_the_thread_and_get_device_reports_it():
    r = run("""
out = [current()]
out.append(capi.aclrtSetDevice(2)); out.append(current())
out.append(capi.aclrtSetDevice(-1)); out.append(capi.aclrtSetDevice(4))
m = capi.aclGetRecentErrMsg().decode()
out.append(current())
print(json.dumps([out, m]))
""", {"PYACLNN_STUB_DEVICE_COUNT": "4"})
    out, message = r
    assert out[0] == [107002, -1]
    assert out[1:3] == [0, [0, 2]]
    assert out[3:5] == [107001, 107001]
    assert "aclrtSetDevice(107001): device id 4 is out of range [0, 4)" in message
    assert out[5] == [0, 2]                     # the failed calls changed nothing


def test_reset_device_reference_counting():
    r = run("""
out = {}
out["set"] = [capi.aclrtSetDevice(0), capi.aclrtSetDevice(0)]
s = ctypes.c_void_p()
out["stream"] = capi.aclrtCreateStream(ctypes.byref(s))
out["reset1"] = capi.aclrtResetDevice(0)
out["after_reset1"] = [current(), capi.aclrtSynchronizeStream(s)]
out["reset2"] = capi.aclrtResetDevice(0)       # count 0: default context and its streams go
out["after_reset2"] = current()
out["reset3"] = capi.aclrtResetDevice(0)
out["reset3_msg"] = capi.aclGetRecentErrMsg().decode()
capi.aclrtSetDevice(0)
out["old_stream"] = capi.aclrtSynchronizeStream(s)
out["force"] = [capi.aclrtSetDevice(0), capi.aclrtSetDevice(0), capi.aclrtResetDeviceForce(0),
                capi.aclrtResetDevice(0), capi.aclrtResetDeviceForce(0)]
out["bad_id"] = [capi.aclrtResetDevice(1), capi.aclrtResetDeviceForce(-3)]
print(json.dumps(out))
""")
    assert r["set"] == [0, 0] and r["stream"] == 0
    assert r["reset1"] == 0 and r["after_reset1"] == [[0, 0], 0]
    assert r["reset2"] == 0 and r["after_reset2"][0] == 107002
    assert r["reset3"] == 507007 and "aclrtResetDevice(507007)" in r["reset3_msg"]
    assert r["old_stream"] == 107000               # released with the default context
    assert r["force"] == [0, 0, 0, 507007, 507007]
    assert r["bad_id"] == [107001, 107001]


def test_get_device_without_a_device_in_a_fresh_thread(acl, recent_error):
    def body():
        d = ctypes.c_int32(-1)
        status = capi.aclrtGetDevice(ctypes.byref(d))
        return status, d.value, capi.aclGetRecentErrMsg()

    status, value, message = run_in_thread(body)
    assert (status, value) == (capi.ACL_ERROR_RT_CONTEXT_NULL, -1)
    assert b"aclrtGetDevice(107002)" in message


def test_calls_needing_a_context_fail_in_a_fresh_thread(acl):
    def body():
        p, s, e = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        return [expect_failure(capi.aclrtMalloc(ctypes.byref(p), 8, 0), 107002, "aclrtMalloc"),
                expect_failure(capi.aclrtCreateStream(ctypes.byref(s)), 107002, "aclrtCreateStream"),
                expect_failure(capi.aclrtCreateEvent(ctypes.byref(e)), 107002, "aclrtCreateEvent"),
                expect_failure(capi.aclrtSynchronizeStream(None), 107002, "aclrtSynchronizeStream"),
                expect_failure(capi.aclrtSynchronizeDevice(), 107002, "aclrtSynchronizeDevice"),
                expect_failure(capi.aclrtGetMemInfo(capi.ACL_HBM_MEM, ctypes.byref(free),
                                                    ctypes.byref(total)), 107002, "aclrtGetMemInfo")]

    run_in_thread(body)


def test_null_out_parameters(acl, recent_error):
    expect_failure(capi.aclrtGetDevice(None), 100000, "aclrtGetDevice")
    expect_failure(capi.aclrtGetDeviceCount(None), 100000, "aclrtGetDeviceCount")
    expect_failure(capi.aclrtGetRunMode(None), 100000, "aclrtGetRunMode")
    expect_failure(capi.aclrtGetVersion(None, None, None), 100000, "aclrtGetVersion")
    expect_failure(capi.aclrtGetCurrentContext(None), 100000, "aclrtGetCurrentContext")
    expect_failure(capi.aclrtCreateContext(None, 0), 100000, "aclrtCreateContext")


def test_run_mode_and_version(acl):
    mode = ctypes.c_int(-1)
    assert capi.aclrtGetRunMode(ctypes.byref(mode)) == 0 and mode.value == capi.ACL_HOST
    v = [ctypes.c_int32() for _ in range(3)]
    assert capi.aclrtGetVersion(*map(ctypes.byref, v)) == 0
    assert [x.value for x in v] == [1, 17, 0]


@pytest.mark.parametrize("soc, family, hbm_gib", [
    (None, 2, 128),                    # default Ascend950PR
    ("Ascend910B4", 1, 32),
    ("Ascend910B3", 1, 64),
    ("Ascend910_9392", 1, 64),
    ("Ascend950DT", 2, 144),
    ("Ascend310P3", 0, 24),
])
def test_soc_name_family_and_memory(soc, family, hbm_gib):
    r = run("""
from test_runtime_support import soc_family
capi.aclrtSetDevice(0)
free, total = ctypes.c_size_t(), ctypes.c_size_t()
status = capi.aclrtGetMemInfo(capi.ACL_HBM_MEM, ctypes.byref(free), ctypes.byref(total))
print(json.dumps([capi.aclrtGetSocName().decode(), soc_family(), status, total.value]))
""", {"PYACLNN_STUB_SOC": soc, "PYACLNN_STUB_DEVICE_MEMORY": None, "PYTHONPATH": _tests_pythonpath()})
    # the SoC's HBM, unless the host cannot back that much (tests/test_device_memory.py)
    from test_device_memory import expected_capacity
    assert r == [soc or "Ascend950PR", family, 0, expected_capacity(hbm=hbm_gib << 30)]


def _tests_pythonpath() -> str:
    """PYTHONPATH for a child that imports test_runtime_support."""
    return os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")])


def test_soc_name_is_static_and_family_consistent(acl):
    name = capi.aclrtGetSocName()
    assert name and capi.aclrtGetSocName() == name
    expected = 1 if name.startswith((b"Ascend910B", b"Ascend910_93")) else 2 if name.startswith(b"Ascend950") else 0
    assert soc_family() == expected


# ---- contexts ----------------------------------------------------------------------------------

def current_context() -> int | None:
    c = ctypes.c_void_p()
    assert capi.aclrtGetCurrentContext(ctypes.byref(c)) == 0
    return c.value


def test_contexts_create_set_destroy(acl, recent_error):
    def body():
        assert capi.aclrtSetDevice(0) == 0
        default = current_context()
        ctx = ctypes.c_void_p()
        assert capi.aclrtCreateContext(ctypes.byref(ctx), 0) == 0
        assert current_context() == ctx.value != default          # the new one becomes current
        s = ctypes.c_void_p()
        assert capi.aclrtCreateStream(ctypes.byref(s)) == 0
        assert capi.aclrtSetCurrentContext(default) == 0
        # Submitting to a stream of another context is refused, as on the NPU.
        event = _event()
        expect_failure(capi.aclrtRecordEvent(event, s), 107003, "aclrtRecordEvent")
        assert capi.aclrtDestroyEvent(event) == 0
        expect_failure(capi.aclrtDestroyStream(s), 107003, "aclrtDestroyStream")
        assert capi.aclrtSynchronizeStream(s) == 0               # synchronising it is fine
        expect_failure(capi.aclrtDestroyContext(default), 107000, "aclrtDestroyContext", "default context")
        assert capi.aclrtDestroyContext(ctx) == 0                 # takes its streams with it
        expect_failure(capi.aclrtDestroyContext(ctx), 107000, "aclrtDestroyContext")
        expect_failure(capi.aclrtSetCurrentContext(ctx), 107000, "aclrtSetCurrentContext")
        expect_failure(capi.aclrtSynchronizeStream(s), 107000, "aclrtSynchronizeStream")
        expect_failure(capi.aclrtDestroyContext(None), 100000, "aclrtDestroyContext")
        expect_failure(capi.aclrtSetCurrentContext(None), 100000, "aclrtSetCurrentContext")
        expect_failure(capi.aclrtCreateContext(ctypes.byref(ctx), 5), 107001, "aclrtCreateContext")
        assert current_context() == default
        assert capi.aclrtResetDevice(0) == 0

    run_in_thread(body)


def _event() -> int:
    e = ctypes.c_void_p()
    assert capi.aclrtCreateEvent(ctypes.byref(e)) == 0
    return e.value


def test_destroying_the_current_context_leaves_the_thread_without_one(acl):
    def body():
        ctx = ctypes.c_void_p()
        assert capi.aclrtCreateContext(ctypes.byref(ctx), 0) == 0
        assert capi.aclrtDestroyContext(ctx) == 0
        c = ctypes.c_void_p()
        return capi.aclrtGetCurrentContext(ctypes.byref(c)), capi.aclrtGetDevice(ctypes.byref(ctypes.c_int32()))

    assert run_in_thread(body) == (107002, 107002)


def test_threads_share_the_default_context_of_a_device(acl):
    main_ctx = current_context()

    def body():
        assert capi.aclrtSetDevice(0) == 0
        try:
            return current_context()
        finally:
            capi.aclrtResetDevice(0)

    assert run_in_thread(body) == main_ctx
