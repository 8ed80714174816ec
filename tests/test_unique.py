"""aclnnUnique (native_stubs/src/ops/index/unique.toml) against torch CPU's torch._unique: sorted distinct values,
the inverse indices, NaNs, -0.0, strided views, empty input, dtypes (one list on every SoC: checked on 950 and in
the A2 child), validation codes and messages; torch_npu's torch._unique on the emulator (one call in the shared
child). Exact."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from _cnn_ops import A2, INVALID, NULLPTR, error_of, status_codes, torch_npu_run  # noqa: F401
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
NAME = {"float32": "float32", "int64": "int64", "float16": "float16", "bfloat16": "bfloat16", "uint8": "uint8",
        "bool": "bool", "int16": "int16"}


def run(x, inverse=True):
    from pyaclnn.ops._select_ops import view_shape
    v, inv = pyaclnn.zeros((x.size,), NAME[x.dtype.name]), \
        pyaclnn.zeros(x.shape if inverse else (0,), "int64")
    ops.Unique(strided(x), True, inverse, v, inv)
    return v.numpy()[:view_shape(v)[0]], inv.numpy()


@pytest.mark.parametrize("name", ["float32", "int64", "float16", "bfloat16", "uint8", "bool", "int16"])
def test_unique_matches_torch(name):
    x = R.cast(np.array([[3, -1, 3, 0], [2, 2, -1, 5]]) % (2 if name == "bool" else 7), name)
    vals, inv = run(x)
    wv, wi = torch._unique(torch.from_numpy(np.asarray(x, np.float64)), True, True)
    np.testing.assert_array_equal(np.asarray(vals, np.float64), wv.numpy())
    np.testing.assert_array_equal(inv, wi.numpy())


def test_nan_negative_zero_and_no_inverse():
    x = np.array([np.nan, 0.0, -0.0, 1.0, np.nan], np.float32)
    vals, _ = run(x, inverse=False)
    assert vals.shape == (4,) and vals[0] == 0 and vals[1] == 1 and np.isnan(vals[2:]).all()
    assert ops.Unique(np.zeros(0, np.float32), True, True, np.zeros(0, np.float32), np.zeros(0, np.int64))[1].shape == (0,)


X = np.ones((2, 3), np.float32)


@pytest.mark.parametrize("call,code,text", [
    (lambda: ops.Unique(X, True, True, None, np.zeros((2, 3), np.int64)), NULLPTR, "valueOut is NULL"),
    (lambda: ops.Unique(X, True, True, np.zeros(6, np.float32), np.zeros((2, 3), np.int32)), INVALID,
     "Tensor inverseOut expected dtype is INT64 but found INT32."),
    (lambda: ops.Unique(X, True, True, np.zeros(6, np.float32), np.zeros(6, np.int64)), INVALID,
     "Expected tensor for self to have same size as tensor for inverseOut, but [2, 3] does not equal [6]."),
])
def test_validation(call, code, text):
    got, msg = error_of(call)
    assert got == code and text in msg, msg


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_list(soc):
    cands = ["float32", "float16", "bfloat16", "float64", "int8", "uint16", "uint64", "bool", "float8_e4m3fn"]
    calls = [("Unique", [["t", d, [4]], True, False, ["t", d, [4]], ["t", "int64", [0]]]) for d in cands]
    want = [0] * 8 + [INVALID]
    assert status_codes(calls, soc) == want


_BODY = """
x = torch.tensor([[4, 1, 4], [0, 1, 7]])
v, i = torch._unique(x.npu(), True, True)
wv, wi = torch._unique(x, True, True)
OUT["unique"] = bool(torch.equal(v.cpu(), wv)) and bool(torch.equal(i.cpu(), wi))
"""


def test_torch_npu_unique():
    assert torch_npu_run(_BODY, {})["unique"]
