"""aclnnRelu, aclnnInplaceRelu and aclnnThresholdBackward (relu's backward) against NumPy and torch CPU:
every dtype of the vendor's lists, NaN and -0.0, in place, strided input, broadcasting in the backward,
float and integer thresholds, and the vendor's validation codes. Bit-exact (moves and comparisons)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from _op_helpers import INVALID, NULLPTR, code_of, strided
from reference import elementwise as R
from test_elementwise_arith import same_bits

RNG = np.random.default_rng(1520)
RELU = ["float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64"]


def sample(name, shape):
    if name in ("float32", "float16", "bfloat16"):
        x = RNG.standard_normal(shape) * 3
        if x.size >= 4:
            x.reshape(-1)[:4] = [0.0, -0.0, np.nan, -np.inf]
        return R.cast(x, name)
    info = np.iinfo(np.dtype(name))
    return RNG.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64).astype(name)


def relu_ref(x):
    f = x.astype(np.float64)
    return np.where(np.isnan(f) | (f > 0), x, np.zeros_like(x))   # +0 where not positive, NaN kept


@pytest.mark.parametrize("name", RELU)
def test_relu_every_dtype(name):
    x = sample(name, (5, 9))
    same_bits(ops.Relu(x, np.zeros_like(x)), relu_ref(x))


def test_inplace_relu_and_strided_input():
    x = sample("float32", (4, 6))
    t = pyaclnn.from_numpy(x)
    ops.InplaceRelu(t)
    same_bits(t.numpy(), relu_ref(x))
    same_bits(ops.Relu(strided(x, transpose=True), np.zeros_like(x)), relu_ref(x))


def test_relu_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(300).astype(np.float32)
    same_bits(ops.Relu(x, np.zeros_like(x)), torch.relu(torch.from_numpy(x)).numpy())


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64"])
def test_threshold_backward_every_dtype(name):
    x, dy = sample(name, (4, 7)), sample(name, (4, 7))
    got = ops.ThresholdBackward(dy, x, ops.Scalar(0, "int64"), np.zeros_like(x))
    keep = x.astype(np.float64) > 0                         # NaN > 0 is false
    same_bits(got, np.where(keep, dy, np.zeros_like(dy)))


def test_threshold_backward_broadcasts_and_nonzero_threshold():
    x = R.cast(RNG.standard_normal((3, 1)) * 2, "float32")
    dy = R.cast(RNG.standard_normal((1, 5)), "float32")
    got = ops.ThresholdBackward(dy, x, ops.Scalar(0.5, "float64"), np.zeros((3, 5), np.float32))
    same_bits(got, np.where(np.broadcast_to(x > np.float32(0.5), (3, 5)), np.broadcast_to(dy, (3, 5)),
                            np.float32(0)))


def test_threshold_backward_matches_torch_relu_autograd():
    torch = pytest.importorskip("torch")
    x = torch.randn(200, generator=torch.Generator().manual_seed(1)).requires_grad_()
    dy = torch.randn(200, generator=torch.Generator().manual_seed(2))
    y = torch.relu(x)
    y.backward(dy)
    got = ops.ThresholdBackward(dy.numpy(), y.detach().numpy(), ops.Scalar(0, "int64"), np.zeros(200, np.float32))
    same_bits(got, x.grad.numpy())


def test_relu_validation_codes():
    x = np.zeros((2, 3), np.float32)
    assert code_of(ops.Relu, x.astype(np.float64), np.zeros((2, 3))) == INVALID          # DOUBLE
    assert code_of(ops.Relu, x.astype(np.int16), np.zeros((2, 3), np.int16)) == INVALID  # INT16
    assert code_of(ops.Relu, x, np.zeros((2, 3), np.float16)) == INVALID                 # out dtype
    assert code_of(ops.Relu, x, np.zeros((3, 2), np.float32)) == INVALID                 # out shape
    tb = ops.ThresholdBackward
    zero = ops.Scalar(0, "int64")
    assert code_of(tb, x, x, zero, np.zeros((2, 3), np.float32)) == 0
    assert code_of(tb, x, x.astype(np.float16), zero, np.zeros((2, 3), np.float32)) == INVALID   # dtypes differ
    assert code_of(tb, x, x, zero, np.zeros((2, 3), np.float16)) == INVALID                       # out dtype
    assert code_of(tb, x, np.zeros((3, 3), np.float32), zero, np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(tb, x, x, zero, np.zeros((3, 2), np.float32)) == INVALID                       # out shape
    assert code_of(tb, x.astype(np.int64), x.astype(np.int64), ops.Scalar(1, "int64"),
                   np.zeros((2, 3), np.int64)) == INVALID            # INT64 only with threshold 0 (950's ReluGrad)
    assert code_of(tb, x, x, None, np.zeros((2, 3), np.float32)) == NULLPTR
