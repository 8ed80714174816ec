"""aclnnGeluV2 and aclnnGeluBackwardV2 ("none" and "tanh") against a float64 reference of torch's
formulas (math.erf / math.tanh per element: an independent implementation) and torch CPU; FLOAT,
FLOAT16, BFLOAT16, strided input, the backward's broadcasting and promotion, and the vendor's
validation codes. Class (c): float64 rounded once to fp32, then to the dtype."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pyaclnn import ops
from _op_helpers import INVALID, NULLPTR, code_of, strided
from reference import elementwise as R

RNG = np.random.default_rng(1518)
K, C = math.sqrt(2 / math.pi), 0.044715


def gelu_ref(x, mode):
    f = (lambda v: 0.5 * v * (1 + math.tanh(K * (v + C * v ** 3)))) if mode == "tanh" else \
        (lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
    return np.vectorize(f, otypes=[np.float64])(np.asarray(x, np.float64))


def gelu_grad_ref(x, mode):
    def g(v):
        if mode == "tanh":
            t = math.tanh(K * (v + C * v ** 3))
            return 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * K * (1 + 3 * C * v * v)
        return 0.5 * (1 + math.erf(v / math.sqrt(2))) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
    return np.vectorize(g, otypes=[np.float64])(np.asarray(x, np.float64))


def rounded(v64, name):
    return R.cast(np.asarray(v64).astype(np.float32), name)


def within_ulp(got, want, name, ulps=1):
    got, want = np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64)
    ulp = np.spacing(np.abs(want).astype(R.np_dtype(name))).astype(np.float64)
    assert (np.abs(got - want) <= ulps * ulp).all(), np.abs(got - want).max()


def values(name, shape):
    x = RNG.standard_normal(shape) * 3
    if x.size >= 4:
        x.reshape(-1)[:4] = [0.0, -0.0, 8.0, -8.0]
    return R.cast(x, name)


@pytest.mark.parametrize("mode", ["none", "tanh"])
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_gelu_every_dtype(name, mode):
    x = values(name, (6, 40))
    got = ops.GeluV2(x, 1 if mode == "tanh" else 0, np.zeros_like(x))
    within_ulp(got, rounded(gelu_ref(x, mode), name), name)


def test_gelu_strided_and_approximate_values_other_than_one_mean_none():
    x = values("float32", (5, 8))
    got = ops.GeluV2(strided(x, transpose=True), 7, np.zeros_like(x))
    within_ulp(got, rounded(gelu_ref(x, "none"), "float32"), "float32")


@pytest.mark.parametrize("mode", ["none", "tanh"])
def test_gelu_matches_torch_cpu(mode):
    torch = pytest.importorskip("torch")
    x = values("float32", (1000,))
    want = torch.nn.functional.gelu(torch.from_numpy(x), approximate=mode).numpy()
    got = ops.GeluV2(x, int(mode == "tanh"), np.zeros_like(x))
    # torch CPU evaluates in fp32 (its own erf/tanh): a few fp32 ulps of the operands' scale
    assert (np.abs(got - want) <= 4e-7 * np.maximum(1.0, np.abs(x))).all(), np.abs(got - want).max()


@pytest.mark.parametrize("mode", ["none", "tanh"])
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_gelu_backward_every_dtype(name, mode):
    x, dy = values(name, (4, 30)), values(name, (4, 30))
    got = ops.GeluBackwardV2(dy, x, mode, np.zeros_like(x))
    want = rounded(dy.astype(np.float64) * gelu_grad_ref(x, mode), name)
    within_ulp(got, want, name)


def test_gelu_backward_broadcasts_and_promotes():
    dy = values("float32", (3, 1))
    x = values("float16", (1, 5))
    got = ops.GeluBackwardV2(dy, x, "none", np.zeros((3, 5), np.float32))
    want = rounded(dy.astype(np.float64) * gelu_grad_ref(x, "none"), "float32")
    within_ulp(got, want, "float32")


def test_gelu_backward_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(values("float32", (500,))).requires_grad_()
    dy = torch.from_numpy(values("float32", (500,)))
    torch.nn.functional.gelu(x, approximate="tanh").backward(dy)
    got = ops.GeluBackwardV2(dy.numpy(), x.detach().numpy(), "tanh", np.zeros(500, np.float32))
    scale = np.maximum(1.0, np.abs(dy.numpy()) * np.maximum(1.0, np.abs(x.detach().numpy())))
    assert (np.abs(got - x.grad.numpy()) <= 4e-7 * scale).all(), np.abs(got - x.grad.numpy()).max()


def test_gelu_validation_codes():
    x = np.zeros((2, 3), np.float32)
    assert code_of(ops.GeluV2, x, 0, np.zeros((2, 3), np.float16)) == INVALID      # y dtype != x dtype
    assert code_of(ops.GeluV2, x.astype(np.float64), 0, np.zeros((2, 3))) == INVALID
    assert code_of(ops.GeluV2, x, 0, np.zeros((3, 2), np.float32)) == INVALID       # y shape
    b = ops.GeluBackwardV2
    assert code_of(b, x, x, "none", np.zeros((2, 3), np.float32)) == 0
    assert code_of(b, x, x, "erf", np.zeros((2, 3), np.float32)) == INVALID        # approximate
    assert code_of(b, x, x, "none", np.zeros((2, 3), np.float16)) == INVALID       # promoted dtype != gradInput
    assert code_of(b, x, np.zeros((3, 3), np.float32), "none", np.zeros((2, 3), np.float32)) == INVALID
    assert code_of(b, x, x, None, np.zeros((2, 3), np.float32)) == NULLPTR
