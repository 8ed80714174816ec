"""The Tensor forms of the random operators (aclnnInplaceNormalTensor, aclnnInplaceUniformTensor,
aclnnDropoutGenMaskV2Tensor; src/ops/random/random_tensor.toml): seed and base offset are INT64 device
tensors read when the kernel runs, plus the host offset. torch_npu calls them under torch.npu.graph; a
replay then draws from what its prologue wrote into those tensors (tests/test_torch_npu.py's graph check
replays torch.randn). Given the same (seed, base + offset) they draw bit for bit the non-Tensor form's
numbers (whose distributions tests/test_random.py checks)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from _op_helpers import INVALID, NULLPTR, code_of, raw_null_status

SEED, BASE = 2 ** 40 + 9, 1234


def seeds(seed=SEED, base=BASE, dtype=np.int64, n=1):
    return np.full(n, seed, dtype), np.full(n, base, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_normal_tensor_is_normal_at_base_plus_offset(dtype):
    s, o = seeds()
    a, b = pyaclnn.empty((64, 33), dtype), pyaclnn.empty((64, 33), dtype)
    ops.InplaceNormalTensor(a, 0.5, 2.0, s, o, 16)
    ops.InplaceNormal(b, 0.5, 2.0, SEED, BASE + 16)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = pyaclnn.empty((64, 33), dtype)
    ops.InplaceNormalTensor(c, 0.5, 2.0, *seeds(base=BASE + 4), 12)   # only the sum matters
    np.testing.assert_array_equal(c.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_uniform_tensor_is_uniform_at_base_plus_offset(dtype):
    a, b = pyaclnn.empty((257,), dtype), pyaclnn.empty((257,), dtype)
    ops.InplaceUniformTensor(a, -1.0, 3.0, *seeds(), 8)
    ops.InplaceUniform(b, -1.0, 3.0, SEED, BASE + 8)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("prob", [0.0, 0.3, 1.0])
def test_gen_mask_tensor_is_gen_mask_at_base_plus_offset(prob):
    a, b = pyaclnn.empty((64,), "uint8"), pyaclnn.empty((64,), "uint8")
    ops.DropoutGenMaskV2Tensor([500], prob, *seeds(), 4, "float16", a)
    ops.DropoutGenMaskV2([500], prob, SEED, BASE + 4, "float16", b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_validation_codes():
    f32 = pyaclnn.empty((8,), "float32")
    s, o = seeds()
    n, u, g = ops.InplaceNormalTensor, ops.InplaceUniformTensor, ops.DropoutGenMaskV2Tensor
    # seed / offset: INT64 (all three), shape [1] (Normal), at least one element (the others)
    assert code_of(n, f32, 0.0, 1.0, s.astype(np.int32), o, 0) == INVALID
    assert code_of(n, f32, 0.0, 1.0, s, np.zeros(2, np.int64), 0) == INVALID
    assert code_of(n, f32, 0.0, 1.0, s, o.reshape(()), 0) == INVALID
    assert code_of(u, f32, 0.0, 1.0, s, o.astype(np.float64), 0) == INVALID
    assert code_of(u, f32, 0.0, 1.0, s, np.zeros(0, np.int64), 0) == INVALID
    assert code_of(u, f32, 0.0, 1.0, *seeds(n=3), 0) == 0
    assert code_of(g, [100], 0.5, s.astype(np.uint64), o, 0, "float32", pyaclnn.empty((16,), "uint8")) == INVALID
    # the non-Tensor forms' own checks, in the vendor's order
    assert code_of(n, f32, 0.0, -1.0, s, o, 0) == NULLPTR                      # std < 0: 161001 as InplaceNormal
    assert code_of(n, pyaclnn.empty((4,), "uint16"), 0.0, 1.0, s, o, 0) == INVALID
    assert code_of(u, f32, 2.0, 1.0, s, o, 0) == INVALID                       # from > to
    assert code_of(u, pyaclnn.empty((0,), "float32"), 0.0, 1.0, s, np.zeros(0, np.int64), 0) == 0   # empty first
    assert code_of(g, [100], 1.5, s, o, 0, "float32", pyaclnn.empty((16,), "uint8")) == INVALID
    assert code_of(g, [100], 0.5, s, o, 0, "float32", pyaclnn.empty((15,), "uint8")) == INVALID
    assert raw_null_status("aclnnInplaceNormalTensorGetWorkspaceSize", 6) == NULLPTR
    assert raw_null_status("aclnnInplaceUniformTensorGetWorkspaceSize", 6) == NULLPTR
    assert raw_null_status("aclnnDropoutGenMaskV2TensorGetWorkspaceSize", 7) == NULLPTR
