"""Max unpooling (native_stubs/src/ops/pool/unpool.toml): aclnnMaxUnpool2d / aclnnMaxUnpool3d against torch CPU's
max_unpool2d / max_unpool3d on the indices of a max pooling (exact: bytes moved), every dtype of the vendor's list
(one list for every SoC: 950 in process, A2 in test_spatial2_dtype_lists.py's
child), 3-D / 4-D inputs, strided views, repeated and negative
indices, an out-of-range index (a device fault), the validation codes and messages; and torch_npu's
F.max_unpool2d / F.max_unpool3d (forward and autograd's backward) on the emulator against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, NULLPTR, dec, error_of, f64, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(2911)
LIST = ["float32", "float16", "int8", "uint8", "int16", "int32", "int64", "float64"]


def pooled(shape, k, idx_dtype):
    """(x, indices) of a max pooling of a random input of `shape` with kernel = stride = k, as NumPy."""
    x = torch.from_numpy(RNG.standard_normal(shape))
    pool = F.max_pool2d if len(k) == 2 else F.max_pool3d
    y, i = pool(x, k, k, return_indices=True)
    return y.numpy(), i.numpy().astype(idx_dtype)


def values(shape, name):
    a = RNG.integers(-100, 100, shape) if name in ("int8", "int16", "int32", "int64") else \
        RNG.integers(0, 200, shape) if name == "uint8" else RNG.standard_normal(shape)
    return R.cast(a, name) if name.startswith("float") and name != "float64" else a.astype(R.np_dtype(name))


# name: self shape, kernel, outputSize
CASES = {
    "2d": ((2, 3, 3, 4), [2, 2], [6, 8]),
    "2d-chw-odd": ((3, 2, 3), [2, 3], [5, 9]),
    "3d": ((2, 2, 2, 3, 2), [2, 2, 2], [4, 6, 5]),
    "3d-cdhw": ((3, 1, 2, 2), [2, 3, 2], [3, 6, 4]),
}


@pytest.mark.parametrize("case,name,idx", [("2d", n, "int64") for n in LIST] +
                         [("2d-chw-odd", "float32", "int32"), ("3d", "float16", "int32"), ("3d", "int64", "int64"),
                          ("3d-cdhw", "float64", "int32")])
def test_unpool_matches_torch(case, name, idx):
    shape, k, osz = CASES[case]
    _, ind = pooled(shape[:-len(k)] + tuple(s * kk for s, kk in zip(shape[-len(k):], k)), k, idx)
    x = values(ind.shape, name)
    out_shape = ind.shape[:-len(k)] + tuple(osz)
    if len(k) == 2:
        got = ops.MaxUnpool2d(x, ind, osz, zeros(out_shape, name))
        want = F.max_unpool2d(torch.from_numpy(f64(x)), torch.from_numpy(ind.astype(np.int64)), k, k, 0, osz)
    else:
        got = ops.MaxUnpool3d(x, ind, osz, k, [0, 0, 0], zeros(out_shape, name))
        want = F.max_unpool3d(torch.from_numpy(f64(x)), torch.from_numpy(ind.astype(np.int64)), k, k, 0, osz)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(f64(got), want.numpy())


def test_unpool_strided_repeated_negative_and_fault():
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2)
    ind = np.array([[[[0, 3], [3, -1]], [[5, 1], [2, 0]]]], np.int64)     # 3 twice: the last write; -1: the last
    want = np.zeros((1, 2, 2, 3), np.float32).reshape(1, 2, 6)
    for c in range(2):
        for j, v in enumerate(ind[0, c].reshape(-1)):
            want[0, c, v] = x[0, c].reshape(-1)[j]
    got = ops.MaxUnpool2d(strided(x, transpose=False), strided(ind), [2, 3], zeros((1, 2, 2, 3), "float32"))
    np.testing.assert_array_equal(got, want.reshape(1, 2, 2, 3))
    # outRef of another shape but as many elements: the vendor's reshape
    np.testing.assert_array_equal(ops.MaxUnpool2d(x, ind, [2, 3], zeros((2, 6), "float32")), want.reshape(2, 6))
    out = np.full((1, 2, 2, 3), 7, np.float32)
    code, msg = error_of(ops.MaxUnpool2d, x, np.full_like(ind, 6), [2, 3], out)
    assert code != 0 and "index 6 is out of bounds for dimension 2 with size 6" in msg       # a device fault
    # an empty batch: nothing written
    e = ops.MaxUnpool2d(np.zeros((0, 2, 2, 2), np.float32), np.zeros((0, 2, 2, 2), np.int64), [3, 3],
                        np.full((0, 2, 3, 3), 1, np.float32))
    assert e.shape == (0, 2, 3, 3)


X, I = np.zeros((1, 2, 2, 2), np.float32), np.zeros((1, 2, 2, 2), np.int64)
O = np.zeros((1, 2, 3, 3), np.float32)
X5, I5, O5 = np.zeros((1, 2, 1, 2, 2), np.float32), np.zeros((1, 2, 1, 2, 2), np.int64), np.zeros((1, 2, 2, 3, 3),
                                                                                                   np.float32)


@pytest.mark.parametrize("op,args,code,text", [
    ("MaxUnpool2d", (None, I, [3, 3], O), NULLPTR, ""),
    ("MaxUnpool2d", (X.astype(np.bool_), I, [3, 3], O.astype(np.bool_)), INVALID, "not implemented for BOOL"),
    ("MaxUnpool2d", (X, I, [3, 3], O.astype(np.float16)), INVALID, "FLOAT"),
    ("MaxUnpool2d", (X, I.astype(np.int16), [3, 3], O), INVALID, "indices not implemented for INT16"),
    ("MaxUnpool2d", (X[0, 0], I[0, 0], [3, 3], O), INVALID, "Expected self to be a 3d or 4d Tensor, instead got: 2"),
    ("MaxUnpool2d", (X, I[0], [3, 3], O), INVALID, "Expected dim of self and indices to be equal, instead got self: 4, "
     "gradOutput: 3"),
    ("MaxUnpool2d", (X, I[..., :1], [3, 3], O), INVALID, "Expected tensor for self to have same size as tensor for "
     "indices"),
    ("MaxUnpool2d", (X[:, :, :0], I[:, :, :0], [3, 3], O), INVALID, "max_unpool2d():expected input to have non-empty "
     "spatiak dimensions, but input has sizes 4 with dimension 2 being empty."),
    ("MaxUnpool2d", (X, I, [3, 3, 1], O), INVALID, "outputSize length should be 2, but now is 3."),
    ("MaxUnpool2d", (X, I, [3, 0], O), INVALID, "outputSize value should greater than 0, but the sizes of 1 is 0."),
    ("MaxUnpool2d", (X, I, [1, 3], O), INVALID, "The output volums are of size 1 x 3, should greater than or equal to "
     "self of size 2 x 2."),
    ("MaxUnpool2d", (X, I, [3, 3], O[..., :2]), 561103, "outRef has 12 elements"),
    ("MaxUnpool3d", (X5, I5, [2, 3, 3], [2, 2, 2], [0, 0, 0], None), NULLPTR, ""),
    ("MaxUnpool3d", (X5, I5, [2, 3, 3], [2, 2, 2], [0, 0, 0], "strided"), INVALID, "outRef must be contiguous"),
    ("MaxUnpool3d", (X5[0, 0], I5[0, 0], [2, 3, 3], [2, 2, 2], [0, 0, 0], O5), INVALID, "Input to max_unpooling3d "
     "should be a 4d or 5d Tensor, but got a tensor with dim 3"),
    ("MaxUnpool3d", (X5, I5[0], [2, 3, 3], [2, 2, 2], [0, 0, 0], O5), INVALID, "Expected shape of indices to be: 5, "
     "but got: 4"),
    ("MaxUnpool3d", (X5[:, :0], I5[:, :0], [2, 3, 3], [2, 2, 2], [0, 0, 0], O5), INVALID, "max_unpool3d(): Expected "
     "input to have non-zero size for non-batch dimensions, but got 5 with dimension 1 being empty."),
    ("MaxUnpool3d", (X5, I5, [2, 3], [2, 2, 2], [0, 0, 0], O5), INVALID, "exactly three elements (depth, height, "
     "width) in output_size, but got 2 elements"),
    ("MaxUnpool3d", (X5, I5, [2, 3, 3], [2, 2, 2], [0, 0], O5), INVALID, "in padding, but got 2 elements"),
    ("MaxUnpool3d", (X5, I5, [2, 3, 3], [2, 0, 2], [0, 0, 0], O5), INVALID, "strides[1] shoule be greater than zero, "
     "but got 0."),
    ("MaxUnpool3d", (X5, I5, [1, 1, 3], [2, 2, 2], [0, 0, 0], O5), INVALID, "The output dimensions are of size 1 x 1 "
     "x 3, should be greater than or equal to self of size 1 x 2 x 2."),
    ("MaxUnpool3d", (X5, I5, [2, 3, 3], [2, 2, 2], [0, 0, 0], O5[0]), INVALID, "Out should be same in dimensions with "
     "self, but self is 5, outRef is 4"),
    ("MaxUnpool3d", (X5, I5, [2, 3, 3], [2, 2, 2], [0, 0, 0], O5[:, :1]), INVALID, "Out should be same in N、C "
     "dimensions with self, but self N: [1]、C:[2], outRef N: [1]、C: [1]"),
    ("MaxUnpool3d", (X5, I5, [2, 3, 4], [2, 2, 2], [0, 0, 0], O5), INVALID, "Out should be same in D、H、W dimensions "
     "with outputSize, but outputSize D: [2]、H:[3]、W:[4], outRef D: [2]、H: [3]、W:[3]"),
])
def test_unpool_validation(op, args, code, text):
    args = tuple(strided(O5) if isinstance(a, str) else a for a in args)   # made here: no device tensor at import
    got, msg = error_of(getattr(ops, op), *args)
    assert got == code and text in msg, msg


def a2_cases():
    """(calls, expected codes) of the A2 dtype list (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = LIST + ["bfloat16", "bool"]

    def calls(d):
        return [("MaxUnpool2d", [["t", d, [1, 2, 2, 2]], ["t", "int32", [1, 2, 2, 2], 0], [3, 3], ["t", d, [1, 2, 3, 3]]]),
                ("MaxUnpool3d", [["t", d, [1, 1, 2, 2]], ["t", "int64", [1, 1, 2, 2], 0], [1, 3, 3], [1, 2, 2],
                                 [0, 0, 0], ["t", d, [1, 1, 3, 3]]])]
    return [c for d in cands for c in calls(d)], [0 if d in LIST else INVALID for d in cands for _ in range(2)]


_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
for name, x, pool, unpool, k in [("max_unpool2d", torch.randn(2, 3, 6, 8), F.max_pool2d, F.max_unpool2d, 2),
                                 ("max_unpool3d", torch.randn(1, 2, 4, 6, 4), F.max_pool3d, F.max_unpool3d, 2)]:
    y, i = pool(x, k, return_indices=True)
    yc, yn = y.clone().requires_grad_(), y.npu().requires_grad_()
    try:
        oc, on = unpool(yc, i, k), unpool(yn, i.npu(), k)
        g = torch.linspace(-1, 1, oc.numel()).reshape(oc.shape)
        oc.backward(g)
        on.backward(g.npu())
        OUT[name] = {"cpu": [enc(to_np(oc)), enc(to_np(yc.grad))], "npu": [enc(to_np(on)), enc(to_np(yn.grad))]}
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("call", ["max_unpool2d", "max_unpool3d"])
def test_torch_npu_unpool_matches_cpu(on_npu, call):
    r = on_npu[call]
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        np.testing.assert_array_equal(dec(c), dec(n))
