"""The friendly functions of pyaclnn/ops/_decoder_ops.py: output shapes and flavours (numpy, Tensor,
torch), results against NumPy (the operators themselves are tested per family)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops

RNG = np.random.default_rng(15)


def test_numpy_in_numpy_out():
    a, b = RNG.standard_normal((2, 3, 4)).astype(np.float32), RNG.standard_normal((4, 5)).astype(np.float32)
    m = ops.matmul(a, b)
    assert isinstance(m, np.ndarray) and m.shape == (2, 3, 5) and np.allclose(m, a @ b, rtol=1e-5, atol=1e-6)
    assert ops.matmul(a[0, 0], b).shape == (5,) and ops.matmul(a, b[:, 0]).shape == (2, 3)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    assert np.allclose(ops.softmax(a, 1), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    assert np.allclose(ops.reduce_sum(a, [1]), a.sum(axis=1), rtol=1e-6)
    assert np.allclose(ops.mean(a, [-1], True), a.mean(axis=-1, keepdims=True), rtol=1e-6)
    assert ops.reduce_sum(a).shape == () and np.isclose(ops.reduce_sum(a), a.sum(), rtol=1e-6)
    assert np.array_equal(ops.cat([a, a[:, :1]], 1), np.concatenate([a, a[:, :1]], 1))
    assert np.array_equal(ops.stack([a, a], -1), np.stack([a, a], -1))
    assert np.array_equal(ops.index_select(a, 2, np.array([3, 0])), a[:, :, [3, 0]])
    assert np.array_equal(ops.embedding(b, np.array([[1, 2], [3, 3]])), b[[[1, 2], [3, 3]]])


def test_reduce_in_another_dtype():
    x = RNG.standard_normal((3, 5)).astype(np.float16)
    got = ops.reduce_sum(x, [1], dtype="float32")
    assert got.dtype == np.float32 and np.allclose(got, x.astype(np.float64).sum(axis=1), rtol=1e-6)


def test_tensor_in_tensor_out():
    t = pyaclnn.from_numpy(RNG.standard_normal((4, 6)).astype(np.float32))
    r = ops.softmax(t)
    assert isinstance(r, pyaclnn.Tensor) and r.shape == (4, 6)
    assert np.allclose(r.numpy().sum(axis=1), 1.0, rtol=1e-6)


def test_torch_in_torch_out():
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(RNG.standard_normal((3, 4)).astype(np.float32))
    r = ops.matmul(x, x.t())
    assert isinstance(r, torch.Tensor) and torch.allclose(r, x @ x.t(), rtol=1e-5, atol=1e-6)


def test_bad_dims_raise():
    with pytest.raises(IndexError):
        ops.cat([np.zeros((2, 2), np.float32)], 3)
    with pytest.raises(ValueError):
        ops.matmul(np.float32(1.0), np.zeros(3, np.float32))
