"""aclnnIndexCopy and aclnnInplaceIndexCopy (native_stubs/src/ops/index/index_copy.toml) against torch CPU's
index_copy: every dim, negative dims and indices, INT32 / INT64 index, the vendor's dtype lists per SoC (A2 in one
child), strided views, empty index, validation codes and messages; torch_npu's index_copy / index_copy_ on the
emulator (one call in the shared child). Bit-exact."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, INVALID, NULLPTR, error_of, status_codes, torch_npu_run  # noqa: F401
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(4242)


@pytest.mark.parametrize("shape,dim,idx,name", [((5, 3), 0, [4, 0, 2], "float32"), ((2, 6, 3), 1, [5, -1], "int64"),
                                                ((2, 3, 4), -1, [3, 1, 0, 2], "bfloat16"), ((4,), 0, [2], "bool"),
                                                ((3, 4), 1, [0, 3], "float16")])
def test_index_copy_matches_torch(shape, dim, idx, name):
    self = R.cast(RNG.uniform(-5, 5, shape), name)
    sshape = list(shape)
    sshape[dim] = len(idx)
    src = R.cast(RNG.uniform(-5, 5, sshape), name)
    ix = np.array(idx, np.int32 if name == "float16" else np.int64)
    want = torch.from_numpy(np.asarray(self, np.float64)).index_copy(dim, torch.from_numpy(ix).long() % shape[dim],
                                                                   torch.from_numpy(np.asarray(src, np.float64)))
    out = ops.IndexCopy(strided(self), dim, ix, src, np.zeros(shape, self.dtype))[-1]
    np.testing.assert_array_equal(np.asarray(out, np.float64), want.numpy())
    inplace = ops.InplaceIndexCopy(self.copy(), dim, ix, strided(src))
    np.testing.assert_array_equal(np.asarray(inplace, np.float64), want.numpy())


def test_repeated_index_last_wins_and_empty_index():
    out = ops.InplaceIndexCopy(np.zeros(3, np.float32), 0, np.array([1, 1]), np.array([5, 7], np.float32))
    np.testing.assert_array_equal(out, [0, 7, 0])
    self = np.ones((2, 2), np.float32)
    np.testing.assert_array_equal(ops.InplaceIndexCopy(self, 0, np.zeros(0, np.int64), np.zeros((0, 2), np.float32)),
                                  self)


S = np.zeros((3, 4), np.float32)


@pytest.mark.parametrize("call,code,text", [
    (lambda: ops.IndexCopy(S, 0, None, S[:1], S), NULLPTR, "index is NULL"),
    (lambda: ops.IndexCopy(S, 0, np.array([0.0]), S[:1], S), INVALID, "Tensor index not implemented for DOUBLE"),
    (lambda: ops.IndexCopy(S, 0, np.array([0]), S[:1].astype(np.float16), S), INVALID,
     "Expected both tensors to have same dtype, but found self FLOAT and source FLOAT16."),
    (lambda: ops.IndexCopy(S, 2, np.array([0]), S[:1], S), INVALID,
     "Dimension out of range (expected to be in range of [-2, 1],but got 2)"),
    (lambda: ops.IndexCopy(S, 0, np.array([0]), np.zeros((1, 3), np.float32), S), INVALID,
     "Self and source must have same slice shapes"),
    (lambda: ops.IndexCopy(S, 0, np.array([0, 1]), S[:1], S), INVALID,
     "The element num of index (2) should be equal to source size in dimension 0, actual is 1"),
    (lambda: ops.IndexCopy(S, 0, np.array([[0]]), S[:1], S), INVALID, "The index tensor cannot be larger than 1"),
    (lambda: ops.IndexCopy(S, 0, np.array([0]), np.zeros((1, 4, 1), np.float32), S), INVALID,
     "their dimensionality must match"),
])
def test_validation(call, code, text):
    got, msg = error_of(call)
    assert got == code and text in msg, msg


CANDS = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "uint32",
         "uint64", "uint16"]
ACCEPT = {"Ascend950PR": CANDS[:-1], A2: CANDS[:-3]}


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    calls = [("InplaceIndexCopy", [["t", d, [3, 2]], 0, ["t", "int64", [1], 0], ["t", d, [1, 2]]]) for d in CANDS]
    want = [0 if c[1][0][1] in ACCEPT[soc] else INVALID for c in calls]
    got = status_codes(calls, soc)
    assert [(c[1][0][1], g) for c, g, w in zip(calls, got, want) if g != w] == []


_BODY = """
x = torch.arange(12.).reshape(3, 4)
ix = torch.tensor([2, 0])
src = -torch.arange(6.).reshape(3, 2)
want = x.index_copy(1, ix, src)
got = x.npu().index_copy(1, ix.npu(), src.npu()).cpu()
y = x.npu()
y.index_copy_(1, ix.npu(), src.npu())
OUT["index_copy"] = bool(torch.equal(want, got)) and bool(torch.equal(want, y.cpu()))
"""


def test_torch_npu_index_copy():
    assert torch_npu_run(_BODY, {})["index_copy"]
