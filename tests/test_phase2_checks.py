"""Phase-2 workspace checks and device mismatches.

Today's main accepted a 64-byte block claiming 16 MiB of workspace, a freed block, host memory and a
wild address as the workspace of a launch (an NPU would fault), and accepted tensors and copies of
another device on a stream of this device. Now phase 2 refuses such a workspace with
ACLNN_ERR_RUNTIME_ERROR (361001, "a runtime call failed") and a message, and tensors of another
device are refused the same way; an asynchronous copy whose device memory belongs to another device
than its stream gets ACL_ERROR_RT_PARAM_INVALID (107000); messages name both devices.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest
from helpers import dev_free, dev_malloc, run_python
from test_executor import AmpCall

from pyaclnn import capi

RUNTIME_ERROR = capi.ACLNN_ERR_RUNTIME_ERROR   # 361001


def launch(executor, workspace, size):
    return capi.aclnnAmpUpdateScale(workspace, size, executor, None)


@pytest.fixture
def amp(acl):
    call = AmpCall()
    yield call
    assert capi.aclrtSynchronizeStream(None) == 0
    call.close()


def test_workspace_block_smaller_than_the_size_given_is_refused(amp, recent_error):
    block = dev_malloc(64)
    try:
        assert launch(amp.phase1(), block, 16 << 20) == RUNTIME_ERROR
        msg = recent_error()
        assert "aclnnAmpUpdateScale" in msg and "fewer than the workspaceSize 16777216" in msg, msg
        assert launch(amp.phase1(), block, 64) == 0   # what the block really holds is fine
    finally:
        assert capi.aclrtSynchronizeStream(None) == 0
        dev_free(block)


def test_freed_workspace_is_refused(amp, recent_error):
    block = dev_malloc(4096)
    dev_free(block)
    assert launch(amp.phase1(), block, 4096) == RUNTIME_ERROR
    assert "is not live device memory" in recent_error()


@pytest.mark.parametrize("where", ["host array", "wild address"])
def test_workspace_outside_device_memory_is_refused(amp, recent_error, where):
    host = np.zeros(1024, np.uint8)
    pointer = host.ctypes.data if where == "host array" else 0xDEAD000
    assert launch(amp.phase1(), pointer, 1024) == RUNTIME_ERROR
    assert f"workspace {pointer:#x}" in recent_error()


CROSS_DEVICE = """
import sys
sys.path.insert(0, TESTS)
import ctypes, numpy as np
from pyaclnn import capi
import pyaclnn
from helpers import create_tensor
assert capi.aclInit(None) in (0, capi.ACL_ERROR_REPEAT_INITIALIZE)

def malloc(n):
    p = ctypes.c_void_p()
    assert capi.aclrtMalloc(ctypes.byref(p), n, 0) == 0
    return p.value

assert capi.aclrtSetDevice(1) == 0
on_1 = [malloc(64) for _ in range(5)]
for p in on_1:
    assert capi.aclrtMemset(p, 64, 0, 64) == 0
assert capi.aclrtSetDevice(0) == 0
dts = [capi.ACL_FLOAT, capi.ACL_INT32, capi.ACL_FLOAT, capi.ACL_FLOAT, capi.ACL_INT32]
ts = [create_tensor([1], dt, p) for dt, p in zip(dts, on_1)]
ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
assert capi.aclnnAmpUpdateScaleGetWorkspaceSize(*ts[:3], 2.0, 0.5, 5, *ts[3:], ctypes.byref(ws), ctypes.byref(ex)) == 0
print("LAUNCH", capi.aclnnAmpUpdateScale(None, 0, ex.value, None))
print("MSG", capi.aclGetRecentErrMsg().decode())
host = np.ones(16, np.uint8)
print("COPY", capi.aclrtMemcpyAsync(on_1[0], 64, host.ctypes.data, 16, capi.ACL_MEMCPY_HOST_TO_DEVICE, None))
print("MSG", capi.aclGetRecentErrMsg().decode())
print("SET", capi.aclrtMemsetAsync(on_1[0], 64, 1, 64, None))
capi.aclGetRecentErrMsg()
assert capi.aclrtSynchronizeDevice() == 0

t = pyaclnn.empty((4,), "float32", stream=pyaclnn.Stream(1))
try:
    t.copy_from(np.ones(4, np.float32), stream=pyaclnn.Stream(0))
    print("PY accepted")
except (ValueError, pyaclnn.AclError) as e:
    print("PY", str(e).replace(chr(10), " "))
"""


def test_tensors_and_copies_of_another_device_are_refused_on_this_devices_stream():
    rc, out, err = run_python(CROSS_DEVICE.replace("TESTS", repr(str(Path(__file__).parent))), env_overrides={"PYACLNN_STUB_DEVICE_COUNT": "2"})
    assert rc == 0, err
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert lines["LAUNCH"] == str(RUNTIME_ERROR), out
    assert "memory of device 1" in out and "belongs to device 0" in out, out
    assert lines["COPY"] == str(capi.ACL_ERROR_RT_PARAM_INVALID), out
    assert lines["SET"] == str(capi.ACL_ERROR_RT_PARAM_INVALID), out
    assert "device 1" in lines["PY"] and "device 0" in lines["PY"], out
