"""aclnnConfusionTranspose (src/ops/conversion/confusion_transpose.toml): bit-exact against NumPy's reshape and
transpose in both orders, every dtype of the vendor's list, a strided input, an out with more elements than x, the
empty x, and the codes and messages of the op_api's checks (161001 / 161002) and of the tiling's (561103). The
lists are one for every SoC (no Atlas A2 child). torch_npu.npu_confusion_transpose (and its backward) runs in
tests/test_blas.py's torch_npu child."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from _cnn_ops import INVALID, NULLPTR, error_of
from _op_helpers import strided
from reference import elementwise as R

RNG = np.random.default_rng(3)
INNER = 561103
NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "bfloat16"]


def model(x, perm, shape, tf):
    return np.transpose(x, perm).reshape(shape) if tf else np.transpose(x.reshape(shape), perm)


@pytest.mark.parametrize("name,xs,perm,shape,tf", [
    ("float32", (2, 3, 4), [1, 0, 2], (3, 8), True), ("float16", (6, 4), [2, 0, 1], (2, 3, 4), False),
    ("bfloat16", (2, 3, 4, 5), [0, 2, 1, 3], (2, 4, 15), True), ("int8", (24,), [1, 0], (4, 6), False),
    ("int64", (3, 5), [1, 0], (15,), True), ("uint16", (2, 2, 3), [2, 1, 0], (3, 4), True),
    ("uint32", (12,), [0, 1, 2], (2, 3, 2), False), ("uint64", (4, 2), [1, 0], (8,), True),
    ("int16", (2, 6), [1, 0], (2, 6), False), ("int32", (3, 2, 2), [2, 0, 1], (12,), True),
    ("uint8", (5, 3), [1, 0], (3, 5), True)])
def test_confusion_transpose_bit_exact(name, xs, perm, shape, tf):
    x = (RNG.standard_normal(xs) * 50).astype(R.np_dtype(name)) if name != "bfloat16" else R.cast(RNG.standard_normal(xs), name)
    want = model(x, perm, shape, tf)
    got = ops.ConfusionTranspose(strided(x), perm, list(shape), tf, np.zeros(want.shape, x.dtype))
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def test_out_larger_than_x_and_empty():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = ops.ConfusionTranspose(x, [1, 0], [6], True, np.full(8, -1, np.float32))
    assert got.tolist() == [0, 3, 1, 4, 2, 5, -1, -1]
    assert ops.ConfusionTranspose(np.zeros((0, 3), np.float32), [1, 0], [3, 0], True, np.zeros((3, 0), np.float32)).shape == (3, 0)


@pytest.mark.parametrize("args,code,text", [
    ((np.ones((2, 3), np.float64), [1, 0], [6], True, np.zeros(6, np.float64)), INVALID, "not implemented for DOUBLE"),
    ((np.ones((2, 3), np.float32), [1, 0], [6], True, np.zeros(6, np.float16)), INVALID, "expected dtype is FLOAT but found FLOAT16"),
    ((np.ones((2, 3), np.float32), [1, 0, 2], [6], True, np.zeros(6, np.float32)), INNER, "must be the same, when input x need to be transposed first"),
    ((np.ones((2, 3), np.float32), [1, 0], [6], False, np.zeros(6, np.float32)), INNER, "perm and shape have 2 and 1 dims"),
    ((np.ones((2, 3), np.float32), [1, 1], [6], True, np.zeros(6, np.float32)), INNER, "a permutation of 0,1, ..., dim - 1"),
    ((np.ones((2, 3), np.float32), [1, 0], [7], True, np.zeros(7, np.float32)), INNER, "the shape sizes of x, y and shape are 6, 7 and 7"),
    ((np.ones((2, 3), np.float32), [1, 0], [6], True, np.zeros(5, np.float32)), INNER, "the shape sizes of x, y and shape are 6, 5 and 6"),
    ((np.ones((2, 3), np.float32), [1, 0], [], True, np.zeros(6, np.float32)), INNER, "the dim num of shape is 0"),
    ((None, [1, 0], [6], True, np.zeros(6, np.float32)), NULLPTR, "")])
def test_confusion_transpose_validation(args, code, text):
    c, msg = error_of(ops.ConfusionTranspose, *args)
    assert c == code and text in msg, msg
