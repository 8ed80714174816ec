"""Leniencies of the emulator, each either made faithful or shown to be the vendor's
own behaviour (then documented in the README, "Emulator behaviour worth knowing").

* ``aclFinalize`` before ``aclInit`` returns 0: the vendor's (``aclFinalizeFlag`` starts false in
  hicann/runtime src/acl/aclrt_impl/acl.cpp, so the first aclFinalize runs its teardown and succeeds);
  guarded by tests/test_runtime_init.py::test_first_finalize_without_init_succeeds_like_the_vendor.
* Calls keep working after ``aclFinalize``: the vendor's (aclFinalizeInternal tears down dump,
  profiling and registered callbacks, and resets no device; aclrt* entry points do not check the init
  state); guarded below.
* ``aclCreateIntArray(NULL, 5)`` returns an empty array: the vendor's (aclArray's constructor copies
  only when value != nullptr && size != 0, so the array has size 0); guarded by
  tests/test_tensor_api.py::test_arrays.
* A prepared call whose stream was closed launched on the NULL (default) stream, or failed with
  361001: now it raises "stream is closed" -- made faithful to the rest of the Pythonic layer; below.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import pyaclnn
from helpers import run_python
from pyaclnn import ops, runtime
from pyaclnn.ops._prepared import PreparedCall, plan_class


def _amp_args(stream):
    with stream:
        x = pyaclnn.from_numpy(np.float32([8.0]))
        g = pyaclnn.from_numpy(np.int32([0]))
        f = pyaclnn.zeros((1,), "float32")
        o, t = pyaclnn.empty((1,)), pyaclnn.empty((1,), "int32")
    return x, g, f, o, t


@pytest.mark.parametrize("cls", [plan_class(), PreparedCall], ids=["default", "python-path"])
def test_prepared_call_whose_stream_was_closed_says_so(cls):
    stream = runtime.Stream()
    x, g, f, o, t = _amp_args(stream)
    fn = ops.get("AmpUpdateScale")
    plan = cls(fn, (x, g, f, 2.0, 0.5, 5, o, t), stream)
    plan(x, g, f, o, t)
    stream.synchronize()
    assert o.numpy()[0] == 8.0 and t.numpy()[0] == 1        # no inf: scale kept, tracker + 1
    stream.close()
    for call in (lambda: plan(x, g, f, o, t), lambda: plan(), lambda: plan(currentScale=x)):
        with pytest.raises(RuntimeError, match="stream is closed") as info:
            call()
        assert "stream=" in str(info.value)                 # says what would be valid
    # another open stream still works (the plan's workspace is taken from that stream's pool)
    other = runtime.current_stream()
    for tensor in (x, f, o, t):
        tensor.memory.note_stream(other)
    g3 = pyaclnn.from_numpy(np.int32([3]))
    plan(x, g3, f, o, t, stream=other)
    other.synchronize()
    assert t.numpy()[0] == 4
    plan.close()
    for tensor in (x, g, g3, f, o, t):
        tensor.close()


def test_runtime_calls_keep_working_after_finalize_like_the_vendor():
    code, out, err = run_python("""
import ctypes, json
import numpy as np
from pyaclnn import capi
steps = [capi.aclInit(None), capi.aclrtSetDevice(0)]
p = ctypes.c_void_p()
steps.append(capi.aclrtMalloc(ctypes.byref(p), 64, capi.ACL_MEM_MALLOC_HUGE_FIRST))
s = ctypes.c_void_p()
steps.append(capi.aclrtCreateStream(ctypes.byref(s)))
steps.append(capi.aclFinalize())
host = np.arange(16, dtype=np.float32)
back = np.zeros(16, dtype=np.float32)
after = [capi.aclrtMemcpy(p, 64, host.ctypes.data, 64, capi.ACL_MEMCPY_HOST_TO_DEVICE),
         capi.aclrtMemsetAsync(p, 64, 0, 16, s), capi.aclrtSynchronizeStream(s),
         capi.aclrtMemcpy(back.ctypes.data, 64, p, 64, capi.ACL_MEMCPY_DEVICE_TO_HOST),
         capi.aclrtDestroyStream(s), capi.aclrtFree(p), capi.aclrtResetDevice(0)]
print(json.dumps(dict(steps=steps, after=after, back=back[:8].tolist(), again=capi.aclFinalize())))
""")
    assert code == 0, err
    r = json.loads(out.strip().splitlines()[-1])
    assert r["steps"] == [0, 0, 0, 0, 0]
    assert r["after"] == [0] * 7                  # the runtime does not check the init state
    assert r["back"] == [0.0, 0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 7.0]   # memset of 16 bytes, then the rest
    assert r["again"] == 100037                   # but a second aclFinalize is refused
