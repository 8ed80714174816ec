"""aclnnSoftmax and aclnnSoftmaxBackward against a float64 NumPy reference (class c: the emulator computes
each line in double and rounds once, so it is within one ulp of the exact result rounded to out's dtype;
an NPU computes in fp32 with its own exp) and torch CPU; strided inputs, every dim, validation codes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ops
from _op_helpers import INVALID, NULLPTR, code_of, raw_null_status, strided

RNG = np.random.default_rng(5)
NPDT = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float64": np.float64}
# float64: the reference is itself float64 (numpy's exp/log/sum, whose implementations differ between
# numpy releases), so it is not exact there; allow its own error (log-softmax near 0 cancels).
ULP = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float64": 2.0 ** -40}


def softmax64(x, dim):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def within_ulp(got, exact, name):
    want = exact.astype(NPDT[name]).astype(np.float64)
    assert np.all(np.abs(got.astype(np.float64) - want) <= ULP[name] * np.abs(want) + 1e-300)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_every_dtype_and_dim(name, dim):
    x = (RNG.standard_normal((3, 4, 5)) * 3).astype(np.float32).astype(NPDT[name])
    got = ops.Softmax(strided(x, transpose=True), dim, np.zeros(x.shape, NPDT[name]))
    within_ulp(got, softmax64(x, dim), name)


def test_softmax_masked_rows():
    x = np.array([[0.0, -np.inf, -np.inf], [1.0, 2.0, -np.inf]], np.float32)
    got = ops.Softmax(x, -1, np.zeros((2, 3), np.float32))
    within_ulp(got, softmax64(x, -1), "float32")
    assert got[0].tolist() == [1.0, 0.0, 0.0]


def test_softmax_fp16_in_fp32_out():
    x = RNG.standard_normal((4, 9)).astype(np.float16)
    got = ops.Softmax(x, 1, np.zeros((4, 9), np.float32))
    within_ulp(got, softmax64(x, 1), "float32")


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_softmax_backward(name):
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    y = softmax64(x, 1).astype(NPDT[name])
    g = RNG.standard_normal((5, 6)).astype(np.float32).astype(NPDT[name])
    y64, g64 = y.astype(np.float64), g.astype(np.float64)
    exact = y64 * (g64 - (g64 * y64).sum(axis=1, keepdims=True))
    got = ops.SoftmaxBackward(strided(g), y, 1, np.zeros((5, 6), NPDT[name]))
    want = exact.astype(NPDT[name]).astype(np.float64)
    # one ulp of the result, or of the terms where the subtraction cancels
    scale = np.abs(y64) * (np.abs(g64) + (np.abs(g64) * y64).sum(axis=1, keepdims=True))
    assert np.all(np.abs(got.astype(np.float64) - want) <= ULP[name] * (np.abs(want) + scale))


def test_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((6, 33)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_(True)
    ty = torch.softmax(tx, dim=1)
    g = RNG.standard_normal((6, 33)).astype(np.float32)
    ty.backward(torch.from_numpy(g))
    y = ops.Softmax(x, 1, np.zeros_like(x))
    assert np.allclose(y, ty.detach().numpy(), rtol=2e-6, atol=1e-8)
    dx = ops.SoftmaxBackward(g, y, 1, np.zeros_like(x))
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_validation_codes():
    x = np.zeros((2, 3), np.float32)
    assert code_of(ops.Softmax, x.astype(np.int32), 1, np.zeros((2, 3), np.int32)) == INVALID
    assert code_of(ops.Softmax, x, 2, np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(ops.Softmax, x, 1, np.zeros((3, 2), np.float32)) == INVALID
    assert code_of(ops.SoftmaxBackward, x, x.astype(np.float16), 1, np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(ops.SoftmaxBackward, x.astype(np.float64), x.astype(np.float64), 1,
                   np.zeros((2, 3), np.float64)) == INVALID
    assert code_of(ops.SoftmaxBackward, x, np.zeros((2, 2), np.float32), 1, np.zeros((2, 3), np.float32)) == INVALID
    assert raw_null_status("aclnnSoftmaxGetWorkspaceSize", 3) == NULLPTR
    assert raw_null_status("aclnnSoftmaxBackwardGetWorkspaceSize", 4) == NULLPTR


# ---- aclnnLogSoftmax / aclnnLogSoftmaxBackward --------------------------------------------------

def log_softmax64(x, dim):
    x = x.astype(np.float64)
    m = x.max(axis=dim, keepdims=True)
    return (x - m) - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("dim", [0, -1])
def test_log_softmax_every_dtype(name, dim):
    x = (RNG.standard_normal((3, 4, 5)) * 3).astype(np.float32).astype(NPDT[name])
    got = ops.LogSoftmax(strided(x, transpose=True), dim, np.zeros(x.shape, NPDT[name]))
    within_ulp(got, log_softmax64(x, dim), name)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_log_softmax_backward(name):
    y = log_softmax64(RNG.standard_normal((5, 6)), 1).astype(np.float32).astype(NPDT[name])
    g = RNG.standard_normal((5, 6)).astype(np.float32).astype(NPDT[name])
    y64, g64 = y.astype(np.float64), g.astype(np.float64)
    exact = g64 - np.exp(y64) * g64.sum(axis=1, keepdims=True)
    got = ops.LogSoftmaxBackward(strided(g), y, 1, np.zeros((5, 6), NPDT[name]))
    want = exact.astype(NPDT[name]).astype(np.float64)
    scale = np.abs(g64) + np.exp(y64) * np.abs(g64).sum(axis=1, keepdims=True)
    assert np.all(np.abs(got.astype(np.float64) - want) <= ULP[name] * (np.abs(want) + scale))


def test_log_softmax_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((6, 33)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_(True)
    ty = torch.log_softmax(tx, dim=1)
    g = RNG.standard_normal((6, 33)).astype(np.float32)
    ty.backward(torch.from_numpy(g))
    y = ops.LogSoftmax(x, 1, np.zeros_like(x))
    assert np.allclose(y, ty.detach().numpy(), rtol=1e-6, atol=1e-6)
    dx = ops.LogSoftmaxBackward(g, y, 1, np.zeros_like(x))
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_log_softmax_validation_codes():
    x = np.zeros((2, 3), np.float32)
    assert code_of(ops.LogSoftmax, x, 2, np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(ops.LogSoftmax, x.astype(np.int32), 1, np.zeros((2, 3), np.int32)) == INVALID
    assert code_of(ops.LogSoftmax, x, 1, np.zeros((3, 2), np.float32)) == INVALID
    assert code_of(ops.LogSoftmaxBackward, x, x.astype(np.float16), 1, np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(ops.LogSoftmaxBackward, x, x, 5, np.zeros((2, 3), np.float32)) == INVALID
    assert raw_null_status("aclnnLogSoftmaxGetWorkspaceSize", 3) == NULLPTR
    assert raw_null_status("aclnnLogSoftmaxBackwardGetWorkspaceSize", 4) == NULLPTR
