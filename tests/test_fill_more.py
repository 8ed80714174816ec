"""aclnnInplaceFillTensor and aclnnInplaceFillDiagonal (native_stubs/src/ops/conversion/fill_more.toml) against
torch CPU's fill_ / fill_diagonal_: the vendor's dtype lists per SoC (A2 in one child), values cast to selfRef's
dtype, wrap, strided views, empty tensors, validation codes and messages; torch_npu's fill_ (tensor value) and
fill_diagonal_ on the emulator (one child). Bit-exact."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, INVALID, NULLPTR, dec, enc, error_of, status_codes, torch_npu_run  # noqa: F401
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("self_dt,value", [("float32", np.float32(1.25)), ("float16", np.array([0.8], np.float32)),
                                           ("int32", np.float32(-2.7)), ("bool", np.int64(3)),
                                           ("bfloat16", np.float64(1 / 3)), ("int8", np.int32(300))])
def test_fill_tensor(self_dt, value):
    x = np.zeros((3, 4), R.np_dtype(self_dt))
    got = ops.InplaceFillTensor(strided(x), np.asarray(value)).numpy()
    want = torch.zeros(3, 4, dtype=getattr(torch, self_dt)).fill_(torch.from_numpy(np.asarray(value)).reshape(()))
    np.testing.assert_array_equal(np.asarray(got, np.float64), want.double().numpy())


CASES = [((7, 3), False), ((7, 3), True), ((3, 7), True), ((4, 4), False), ((3, 3, 3), True), ((5, 4), True),
         ((2, 2, 2, 2), False)]


@pytest.mark.parametrize("shape,wrap", CASES)
def test_fill_diagonal_matches_torch(shape, wrap):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = ops.InplaceFillDiagonal(strided(x), ops.Scalar(-1.5, "float32"), wrap).numpy()
    want = torch.from_numpy(x.copy()).fill_diagonal_(-1.5, wrap=wrap)
    np.testing.assert_array_equal(got, want.numpy())


def test_fill_diagonal_casts_and_empty():
    got = ops.InplaceFillDiagonal(np.zeros((3, 3), np.int16), ops.Scalar(7.9, "float32"), False)
    np.testing.assert_array_equal(got, np.diag([7, 7, 7]).astype(np.int16))
    got = ops.InplaceFillDiagonal(np.zeros((2, 3), np.bool_), ops.Scalar(2, "int64"), False)
    np.testing.assert_array_equal(got, np.eye(2, 3, dtype=bool))
    assert ops.InplaceFillDiagonal(np.zeros((0, 3), np.float32), ops.Scalar(1.0, "float32"), True).shape == (0, 3)


@pytest.mark.parametrize("call,code,text", [
    (lambda: ops.InplaceFillTensor(np.zeros(3, np.float32), None), NULLPTR, "value is NULL"),
    (lambda: ops.InplaceFillTensor(np.zeros(3, np.float32), np.zeros(2, np.float32)), INVALID,
     "value shape should be 0D or 1D with size = 1, but got [2]."),
    (lambda: ops.InplaceFillTensor(np.zeros(3, np.uint16), np.float32(1)), INVALID,
     "Tensor self not implemented for UINT16"),
    (lambda: ops.InplaceFillDiagonal(np.zeros(3, np.float32), ops.Scalar(1.0, "float32"), False), INVALID,
     "The selfRef tensor must have at least 2 dimensions."),
    (lambda: ops.InplaceFillDiagonal(np.zeros((3, 3, 2), np.float32), ops.Scalar(1.0, "float32"), False), INVALID,
     "Dim of selfRef[3] greater than 2, all dimensions of input must be of equal length."),
    (lambda: ops.InplaceFillDiagonal(np.zeros((3, 3), np.int8), ops.Scalar(200, "int64"), False), INVALID,
     "value cannot be converted to type INT8 without overflow : 200."),
    (lambda: ops.InplaceFillDiagonal(np.zeros((3, 3), np.float16), ops.Scalar(1e6, "float64"), False), INVALID,
     "value cannot be converted to type FLOAT16 without overflow : 1000000.000000."),
    (lambda: ops.InplaceFillDiagonal(np.zeros((3, 3), R.np_dtype("bfloat16")), ops.Scalar(1.0, "float32"), False),
     INVALID,
     "Tensor selfRef not implemented for BFLOAT16"),                                        # Ascend 950's list
])
def test_validation(call, code, text):
    got, msg = error_of(call)
    assert got == code and text in msg, msg


CANDS = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "uint16"]
ACCEPT = {"Ascend950PR": {"InplaceFillTensor": CANDS[:-1],
                          "InplaceFillDiagonal": [d for d in CANDS[:-1] if d != "bfloat16"]},
          A2: {"InplaceFillTensor": CANDS[:-1], "InplaceFillDiagonal": CANDS[:-1]}}


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    calls = [c for d in CANDS for c in (("InplaceFillTensor", [["t", d, [2, 2]], ["t", "float32", []]]),
                                         ("InplaceFillDiagonal", [["t", d, [2, 2]], ["s", 1, "int32"], False]))]
    want = [0 if c[1][0][1] in ACCEPT[soc][c[0]] else INVALID for c in calls]
    got = status_codes(calls, soc)
    assert [(c[0], c[1][0][1], g) for c, g, w in zip(calls, got, want) if g != w] == []


_BODY = """
for shape in ([7, 3], [3, 3, 3], [3, 7]):
    for wrap in (False, True):
        a = torch.arange(float(torch.Size(shape).numel())).reshape(shape)
        b = a.npu()
        a.fill_diagonal_(-1, wrap=wrap)
        b.fill_diagonal_(-1, wrap=wrap)
        OUT[f"diag{shape}{wrap}"] = bool(torch.equal(a, b.cpu()))
x = torch.zeros(4, 8).half().npu()
x.fill_(torch.tensor(1.25).npu())
OUT["fill_tensor"] = to_np(x).tolist() == [[1.25] * 8] * 4
"""


def test_torch_npu_fills():
    r = torch_npu_run(_BODY, {})
    assert r and all(r.values()), r
