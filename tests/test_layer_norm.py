"""aclnnLayerNorm and aclnnLayerNormBackward against a float64 NumPy reference written from the
documented formulas and against torch CPU: FLOAT, FLOAT16, BFLOAT16 (fp32 weight with half input too),
optional weight/bias/mean/rstd, strided input, empty rows, and the vendor's validation codes.
Class (c): the emulator computes in float64 and rounds each result once, so it sits within an ulp of
the rounded float64 reference (the NPU's fp32 reduction order is not published)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from _op_helpers import INVALID, NULLPTR, code_of, strided
from reference import elementwise as R

RNG = np.random.default_rng(1517)


def ln_ref(x, ns_len, w=None, b=None, eps=1e-5):
    """Row-wise over the trailing ns_len dims, in float64: (out, mean, rstd)."""
    x = np.asarray(x, np.float64)
    axes = tuple(range(x.ndim - ns_len, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x - mean) * rstd
    if w is not None:
        y = y * np.asarray(w, np.float64)
    if b is not None:
        y = y + np.asarray(b, np.float64)
    return y, mean, rstd


def ln_backward_ref(dy, x, ns_len, mean, rstd, w=None):
    dy, x = np.asarray(dy, np.float64), np.asarray(x, np.float64)
    axes = tuple(range(x.ndim - ns_len, x.ndim))
    lead = tuple(range(x.ndim - ns_len))
    n = int(np.prod([x.shape[a] for a in axes]))
    xhat = (x - mean) * rstd
    g = dy * (np.asarray(w, np.float64) if w is not None else 1.0)
    dx = rstd * (g - g.sum(axis=axes, keepdims=True) / n - xhat * (g * xhat).sum(axis=axes, keepdims=True) / n)
    return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)


def close(got, want64, name):
    """Within one ulp of the float64 value rounded to the dtype (through fp32, as the emulator rounds)."""
    want = R.cast(np.asarray(want64, np.float64).astype(np.float32), name).astype(np.float64)
    got = np.asarray(got).astype(np.float64)
    ulp = np.spacing(np.abs(want).astype(R.np_dtype(name))).astype(np.float64)
    assert got.shape == want.shape
    assert (np.abs(got - want) <= ulp).all(), np.abs(got - want).max()


def run_ln(x, ns, w=None, b=None, eps=1e-5, stat_dtype="float32"):
    lead = x.shape[:x.ndim - len(ns)] + (1,) * len(ns)
    out = np.zeros(x.shape, x.dtype)
    mean, rstd = np.zeros(lead, R.np_dtype(stat_dtype)), np.zeros(lead, R.np_dtype(stat_dtype))
    return ops.LayerNorm(x, list(ns), w, b, eps, out, mean, rstd)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_layer_norm_every_dtype(name):
    x = R.cast(RNG.standard_normal((3, 5, 16)) * 3 + 1, name)
    w, b = R.cast(RNG.uniform(0.5, 1.5, 16), name), R.cast(RNG.uniform(-1, 1, 16), name)
    out, mean, rstd = run_ln(x, (16,), w, b)
    y, m, r = ln_ref(x, 1, w, b)
    close(out, y, name)
    close(mean, m, "float32")
    close(rstd, r, "float32")


def test_layer_norm_half_input_with_fp32_weight_and_two_normalized_dims():
    x = R.cast(RNG.standard_normal((4, 3, 8)), "float16")
    w, b = RNG.uniform(0.5, 1.5, (3, 8)).astype(np.float32), RNG.uniform(-1, 1, (3, 8)).astype(np.float32)
    out, _, _ = run_ln(x, (3, 8), w, b, eps=1e-3)
    close(out, ln_ref(x, 2, w, b, eps=1e-3)[0], "float16")


def test_layer_norm_without_weight_bias_and_statistics():
    x = RNG.standard_normal((6, 10)).astype(np.float32)
    out = ops.LayerNorm(x, [10], None, None, 1e-6, np.zeros_like(x), None, None)[0]
    close(out, ln_ref(x, 1, eps=1e-6)[0], "float32")


def test_layer_norm_strided_input():
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    out = np.zeros_like(x)
    got = ops.LayerNorm(strided(x, transpose=True), [7], None, None, 1e-5, out, None, None)[0]
    close(got, ln_ref(x, 1)[0], "float32")


def test_layer_norm_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 32)).astype(np.float32)
    w, b = RNG.uniform(0.5, 1.5, 32).astype(np.float32), RNG.uniform(-1, 1, 32).astype(np.float32)
    want = torch.nn.functional.layer_norm(torch.from_numpy(x), (32,), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    got = run_ln(x, (32,), w, b)[0]
    assert np.abs(got - want).max() <= 4 * np.spacing(np.abs(want).max())


def test_layer_norm_empty_rows_fill_mean_zero_and_rstd_nan():
    x = np.zeros((3, 0), np.float32)
    out, mean, rstd = ops.LayerNorm(x, [0], None, None, 1e-5, np.zeros_like(x), np.ones((3, 1), np.float32),
                                    np.ones((3, 1), np.float32))
    assert (mean == 0).all() and np.isnan(rstd).all()


def test_layer_norm_validation_codes():
    x, ln = np.zeros((2, 4), np.float32), ops.LayerNorm
    out = np.zeros((2, 4), np.float32)
    assert code_of(ln, x, [4], None, None, 1e-5, out, None, None) == 0
    assert code_of(ln, x.astype(np.float64), [4], None, None, 1e-5, out.astype(np.float64), None, None) == INVALID
    assert code_of(ln, x, [4], np.ones(4, np.float16), None, 1e-5, out, None, None) == INVALID   # weight != input
    assert code_of(ln, x, [4], np.ones(4, np.float32), np.ones(4, np.float16), 1e-5, out, None, None) == INVALID
    assert code_of(ln, x, [3], None, None, 1e-5, out, None, None) == INVALID              # trailing dim mismatch
    assert code_of(ln, x, [], None, None, 1e-5, out, None, None) == INVALID               # empty normalizedShape
    assert code_of(ln, x, [2, 2, 4], None, None, 1e-5, out, None, None) == INVALID        # longer than input
    assert code_of(ln, x, [4], np.ones((1, 4), np.float32), None, 1e-5, out, None, None) == INVALID   # weight rank
    assert code_of(ln, x, [4], None, None, 1e-5, np.zeros((4, 2), np.float32), None, None) == INVALID  # out shape
    assert code_of(ln, x, [4], None, None, 1e-5, out, np.zeros((2,), np.float32), None) == INVALID     # mean shape
    assert code_of(ln, np.zeros((1,) * 9, np.float32), [1], None, None, 1e-5, np.zeros((1,) * 9, np.float32),
                   None, None) == INVALID
    assert code_of(ln, x, None, None, None, 1e-5, out, None, None) == NULLPTR


# ---- backward -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_layer_norm_backward_every_dtype(name):
    x = R.cast(RNG.standard_normal((4, 3, 12)), name)
    dy = R.cast(RNG.standard_normal((4, 3, 12)), name)
    w = R.cast(RNG.uniform(0.5, 1.5, 12), name)
    _, m, r = ln_ref(x, 1, w)
    m32, r32 = m.astype(np.float32), r.astype(np.float32)
    dx, dw, db = ops.LayerNormBackward(dy, x, [12], m32, r32, w, None, [True, True, True], np.zeros_like(x),
                                       np.zeros(12, np.float32), np.zeros(12, np.float32))
    want = ln_backward_ref(dy, x, 1, m32.astype(np.float64), r32.astype(np.float64), w)
    close(dx, want[0], name)
    close(dw, want[1], "float32")
    close(db, want[2], "float32")


def test_layer_norm_backward_matches_torch_autograd_and_honours_the_mask():
    torch = pytest.importorskip("torch")
    x = torch.randn(5, 16, dtype=torch.float32, generator=torch.Generator().manual_seed(3)).requires_grad_()
    w = torch.rand(16).add_(0.5).requires_grad_()
    b = torch.rand(16).requires_grad_()
    y = torch.nn.functional.layer_norm(x, (16,), w, b)
    dy = torch.randn_like(y)
    y.backward(dy)
    xn = x.detach().numpy()
    _, m, r = ln_ref(xn, 1)
    dx, dw, db = ops.LayerNormBackward(dy.numpy(), xn, [16], m.astype(np.float32), r.astype(np.float32),
                                       w.detach().numpy(), b.detach().numpy(), [True, True, True],
                                       np.zeros_like(xn), np.zeros(16, np.float32), np.zeros(16, np.float32))
    for got, want in ((dx, x.grad), (dw, w.grad), (db, b.grad)):
        assert np.abs(got - want.numpy()).max() <= 1e-5 * max(1.0, np.abs(want.numpy()).max())
    dw_only = ops.LayerNormBackward(dy.numpy(), xn, [16], m.astype(np.float32), r.astype(np.float32), None, None,
                                    [False, True, False], None, np.zeros(16, np.float32), None)
    np.testing.assert_array_equal(dw_only[1] if isinstance(dw_only, tuple) else dw_only, dw)


def test_layer_norm_backward_validation_codes():
    x = np.zeros((2, 4), np.float32)
    st = np.zeros((2, 1), np.float32)
    bw = ops.LayerNormBackward
    z = lambda: np.zeros((2, 4), np.float32)   # noqa: E731
    assert code_of(bw, x, x, [4], st, st, None, None, [True, False, False], z(), None, None) == 0
    assert code_of(bw, x, x, [4], st, st, None, None, [True, True, False], z(), None, None) == NULLPTR  # mask vs NULL
    assert code_of(bw, x, x, [4], st, st, None, None, [True, False], z(), None, None) == INVALID      # 2-element mask
    assert code_of(bw, x.astype(np.float16), x, [4], st, st, None, None, [True, False, False], z(), None,
                   None) == INVALID                                                                   # dy dtype
    assert code_of(bw, x, x, [4], np.zeros(3, np.float32), st, None, None, [True, False, False], z(), None,
                   None) == INVALID                                                                   # mean size
    assert code_of(bw, x, x, [4], st, st, None, None, [False, True, False], None, np.zeros(3, np.float32),
                   None) == INVALID                                                                   # gradWeight shape
