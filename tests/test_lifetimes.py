"""Tensor.close() / ``with tensor:`` release what they promise; empty_cache()
returns pooled memory to the device; resets and finalizes done through capi behind the Pythonic
layer's back are named as such."""
from __future__ import annotations

import json

import numpy as np
import pytest

import pyaclnn
from helpers import run_python
from pyaclnn import ops
from pyaclnn import errors

STUB = {"PYACLNN_BACKEND": "stub"}


def test_closed_tensor_refuses_every_use():
    x = pyaclnn.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    view = x[:, 1:]
    x.close()
    assert x.closed and "closed" in repr(x)
    assert x.shape == (2, 3) and x.dtype_name == "ACL_FLOAT"      # metadata stays readable
    for use in (x.numpy, lambda: x.ptr, lambda: x[0], lambda: x.T, x.acl_handle,
                lambda: x.copy_from(np.zeros((2, 3), np.float32)),
                lambda: ops.AmpUpdateScale(x, x, x, 2.0, 0.5, 1, x, x)):
        with pytest.raises(errors.ClosedError, match="was closed"):
            use()
    x.close()                                   # idempotent
    assert view.numpy().tolist() == [[1.0, 2.0], [4.0, 5.0]]   # another open view keeps the memory


def test_closed_tensor_in_a_prepared_call_is_refused():
    s, t, f = (pyaclnn.from_numpy(np.float32([8.0])), pyaclnn.from_numpy(np.int32([0])),
               pyaclnn.from_numpy(np.float32([0.0])))
    plan = ops.prepare("AmpUpdateScale", s, t, f, 2.0, 0.5, 1000, s, t)
    s2 = pyaclnn.from_numpy(np.float32([8.0]))
    s2.close()
    with pytest.raises(errors.ClosedError):
        plan(s2, t, f, s, t)
    plan.close()


LIFETIME_SCRIPT = """
import json, numpy as np, pyaclnn
from pyaclnn._stubinfo import live_counts
pyaclnn.zeros(1)                    # warm up: device, default stream and its pool
pyaclnn.empty_cache()
base = live_counts()
n = 3 * 2**20 + 4096
x = pyaclnn.from_numpy(np.ones(n // 4, np.float32))
held = live_counts()
v = x[1:]                           # a second view of the same memory
x.close()
after_one = live_counts()
with v:
    pass
after_with = live_counts()
freed = pyaclnn.empty_cache()
trimmed = live_counts()
print(json.dumps(dict(n=n, base=base, held=held, after_one=after_one, after_with=after_with,
                      freed=freed, trimmed=trimmed)))
"""


def test_close_returns_memory_to_the_pool_and_empty_cache_to_the_device():
    rc, out, err = run_python(LIFETIME_SCRIPT, STUB)
    assert rc == 0, err
    r = json.loads(out)
    n, base = r["n"], r["base"]
    grown = r["held"]["device_bytes"] - base["device_bytes"]
    assert n <= grown < n + 4096                                   # one block (pool rounding)
    assert r["after_one"]["device_bytes"] == r["held"]["device_bytes"]    # the view still uses it
    assert r["after_with"]["device_bytes"] == r["held"]["device_bytes"]   # pooled, not yet freed
    assert r["freed"] == grown
    assert r["trimmed"]["device_bytes"] == base["device_bytes"]
    assert r["trimmed"]["device_allocations"] == base["device_allocations"]


def test_empty_cache_is_public_and_documented():
    assert "empty_cache" in dir(pyaclnn) and callable(pyaclnn.empty_cache)
    assert "torch.cuda.empty_cache" in pyaclnn.empty_cache.__doc__


RESET_SCRIPT = """
import numpy as np, pyaclnn
from pyaclnn import capi
from pyaclnn.errors import DeviceResetError
y = pyaclnn.from_numpy(np.float32([1.0]))
assert capi.aclrtResetDevice(0) == 0          # behind the Pythonic layer's back
try:
    y.numpy()
except DeviceResetError as exc:
    print(exc.hint)
"""


def test_device_reset_through_capi_is_named():
    rc, out, err = run_python(RESET_SCRIPT, STUB)
    assert rc == 0, err
    assert "device 0 was reset through capi.aclrtResetDevice" in out
    assert "behind pyaclnn's back" in out
    assert "call aclrtSetDevice()" not in out


FINALIZE_SCRIPT = """
import numpy as np, pyaclnn
from pyaclnn import capi
from pyaclnn.errors import DeviceResetError
y = pyaclnn.from_numpy(np.float32([1.0]))
assert capi.aclrtResetDevice(0) == 0
assert capi.aclFinalize() == 0
for use in (y.numpy, pyaclnn.Stream, pyaclnn.empty_cache):
    try:
        use()
        print("no error")
    except DeviceResetError as exc:
        print(exc.hint.split(". ")[0])
"""


def test_finalize_through_capi_is_named():
    rc, out, err = run_python(FINALIZE_SCRIPT, STUB)
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 3 and "no error" not in out
    assert "device 0 was reset through capi.aclrtResetDevice" in lines[0]
    assert all("the runtime was finalized through capi.aclFinalize behind pyaclnn's back" in ln
               for ln in lines)


def test_torch_view_survives_closing_its_source():
    torch = pytest.importorskip("torch")
    from pyaclnn.torch import to_torch
    x = pyaclnn.from_numpy(np.arange(4, dtype=np.float32))
    t = to_torch(x)
    x.close()
    pyaclnn.empty_cache()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0] and isinstance(t, torch.Tensor)
