"""aclnnCdist, CdistBackward, Pdist (class c: against float64 references of the fp32-difference inputs, with the
bound distance.toml states) and LinalgCross (bit-exact against a float32 NumPy model of the arch35 kernel; integers
wrapping, DOUBLE in double) (src/ops/math/distance.toml): every dtype of the vendor's lists (Ascend 950 here, Atlas A2
in one child), batch broadcasting, strided views, empty operands, the validation codes and messages. torch's cdist
(and its backward), pdist and cross on torch_npu run in tests/test_blas.py's torch_npu child (one child for both
files)."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from _cnn_ops import INVALID, NULLPTR, error_of, f64
from _op_helpers import strided
from reference import elementwise as R

RNG = np.random.default_rng(7)
U = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}
FLOATS = ["float32", "float16", "bfloat16"]
INF = float("inf")


def rand(shape, name, scale=1.0):
    dt = R.np_dtype(name)
    if dt.kind in "iu":
        return RNG.integers(-50 if dt.kind == "i" else 0, 50, shape).astype(dt)
    return R.cast(RNG.standard_normal(shape) * scale, name)


def dist_ref(a, b, p):
    """[..., r1, r2] p-norm distances in float64 of the fp32 differences."""
    d = np.abs(f64(a.astype(np.float32)[..., :, None, :] - b.astype(np.float32)[..., None, :, :]))
    if p == 0:
        return (d != 0).sum(-1).astype(np.float64)
    if p == INF:
        return d.max(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


def close(got, want, name, rel=2.0 ** -22):
    tol = rel * np.abs(want) + 2 * U[name] * np.abs(want) + 1e-30
    assert got.shape == want.shape and np.all(np.abs(f64(got) - want) <= tol), np.max(np.abs(f64(got) - want) - tol)


@pytest.mark.parametrize("name,p,s1,s2", [("float32", 2.0, (2, 5, 4), (2, 3, 4)), ("float16", 1.0, (5, 4), (1, 3, 4)),
                                          ("bfloat16", 0.0, (3, 1, 4, 6), (2, 3, 6)), ("float32", INF, (4, 3), (6, 3)),
                                          ("float32", 1.5, (1, 4, 7), (3, 2, 7)), ("float16", 3.0, (4, 5), (4, 5))])
def test_cdist(name, p, s1, s2):
    a, b = rand(s1, name), rand(s2, name)
    if p == 0:
        a[..., 0, :2] = b[..., 0, :2].max()   # some equal coordinates
    want = dist_ref(a, b, p)
    got = ops.Cdist(strided(a), b, p, 2 if p == 2.0 else 0, np.zeros(want.shape, R.np_dtype(name)))
    close(got, want, name)


def test_cdist_empty_and_zero_columns():
    assert ops.Cdist(np.ones((0, 3), np.float32), np.ones((2, 3), np.float32), 1.0, 0, np.zeros((0, 2), np.float32)).shape == (0, 2)
    got = ops.Cdist(np.ones((2, 0), np.float32), np.ones((3, 0), np.float32), 1.0, 0, np.full((2, 3), 5, np.float32))
    assert (got == 0).all()


@pytest.mark.parametrize("args,text", [
    ((np.ones((2, 3), np.float32), np.ones((2, 4), np.float32), 1.0, 0, np.zeros((2, 2), np.float32)),
     "The dim num of X1 and X2 must be the same. X1 got: 3, X2 got: 4."),
    ((np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), -1.0, 0, np.zeros((2, 2), np.float32)),
     "cdist only supports non-negative p values."),
    ((np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), 2.0, 0, np.zeros((2, 2), np.float32)),
     "compute_mode 0 is not supported, only support 2 when pValue equals 2.0"),
    ((np.ones((2, 2, 3), np.float32), np.ones((3, 2, 3), np.float32), 1.0, 0, np.zeros((2, 2, 2), np.float32)),
     "cannot broadcast!"),
    ((np.ones(3, np.float32), np.ones((2, 3), np.float32), 1.0, 0, np.zeros((2, 2), np.float32)),
     "must have at least 2 dimensions"),
    ((np.ones((2, 3), np.float32), np.ones((2, 3), np.float16), 1.0, 0, np.zeros((2, 2), np.float32)), "same dtype"),
    ((np.ones((2, 3), np.int32), np.ones((2, 3), np.int32), 1.0, 0, np.zeros((2, 2), np.int32)), "not implemented for INT32")])
def test_cdist_validation(args, text):
    c, msg = error_of(ops.Cdist, *args)
    assert c == INVALID and text in msg, msg


def cdist_grad_ref(g, a, b, dist, p):
    d = f64(a.astype(np.float32)[..., :, None, :] - b.astype(np.float32)[..., None, :, :])   # fp32 differences
    dist = f64(dist)[..., None]
    g = f64(g)[..., None]
    sg = np.sign(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            t = 0 * d
        elif p == 1:
            t = sg
        elif p == INF:
            t = sg * (np.abs(d) >= dist)
        elif p < 2:
            t = np.where((dist == 0) | ((d == 0) & (p < 1)), 0, sg * np.abs(d) ** (p - 1) / dist ** (p - 1))
        elif p == 2:
            t = np.where(dist == 0, 0, d / dist)
        else:
            t = np.where(dist == 0, 0, d * np.abs(d) ** (p - 2) / dist ** (p - 1))
    return (g * t).sum(-2), (np.abs(g * t)).sum(-2)


@pytest.mark.parametrize("name,p", [("float32", 0.5), ("float32", 2.0), ("float16", 1.0), ("bfloat16", 2.5),
                                    ("float32", -1.0), ("float32", 0.0)])
def test_cdist_backward(name, p):
    a, b = rand((2, 4, 5), name), rand((2, 3, 5), name)
    pp = INF if p == -1.0 else p
    dist = R.cast(dist_ref(a, b, pp), name)
    g = rand((2, 4, 3), name)
    got = ops.CdistBackward(g, strided(a), b, dist, p, np.zeros(a.shape, R.np_dtype(name)))
    want, terms = cdist_grad_ref(g, a, b, dist, pp)
    assert np.all(np.abs(f64(got) - want) <= 1e-6 * terms + 2 * U[name] * np.abs(want)), np.max(np.abs(f64(got) - want))


def test_cdist_backward_validation():
    f = np.float32
    g, a, b, d = np.ones((4, 3), f), np.ones((4, 5), f), np.ones((3, 5), f), np.ones((4, 3), f)
    c, msg = error_of(ops.CdistBackward, g, a, b, d, -2.0, np.zeros((4, 5), f))
    assert c == INVALID and "aclnnCdistBackward only supports non-negative p values." in msg
    c, msg = error_of(ops.CdistBackward, g, a, b, np.ones((4, 2), f), 1.0, np.zeros((4, 5), f))
    assert c == INVALID and "cdist[1] : 2 should be equal to 3 ." in msg
    c, msg = error_of(ops.CdistBackward, g.astype(np.float16), a, b, d, 1.0, np.zeros((4, 5), f))
    assert c == INVALID and "All tensors are expected to share the same datatype." in msg
    c, msg = error_of(ops.CdistBackward, g, a, b, d, 1.0, np.zeros((4, 4), f))
    assert c == INVALID and "for out to have same size as tensor for x1" in msg
    c, msg = error_of(ops.CdistBackward, g, np.ones((1, 4, 5), f), b, d, 1.0, np.zeros((1, 4, 5), f))
    assert c == INVALID and "All tensors are expected to share the same dim num." in msg
    assert error_of(ops.CdistBackward, g, None, b, d, 1.0, np.zeros((4, 5), f))[0] == NULLPTR


@pytest.mark.parametrize("name,p", [("float32", 2.0), ("float16", 1.0), ("float32", INF), ("float32", 0.7),
                                    ("float16", 0.0)])
def test_pdist(name, p):
    x = rand((6, 4), name)
    x[1] = x[0]                              # a zero distance
    full = dist_ref(x, x, p)
    want = full[np.triu_indices(6, 1)]
    close(ops.Pdist(strided(x), p, np.zeros(15, R.np_dtype(name))), want, name)


def test_pdist_edges_and_validation():
    f = np.float32
    assert ops.Pdist(np.ones((1, 3), f), 2.0, np.zeros(0, f)).shape == (0,)
    assert (ops.Pdist(np.ones((3, 0), f), 2.0, np.full(3, 7, f)) == 0).all()
    c, msg = error_of(ops.Pdist, np.ones((3, 2), f), 2.0, np.zeros(4, f))
    assert c == INVALID and "to have same size as [3]" in msg
    c, msg = error_of(ops.Pdist, np.ones((3, 2), f), -1.0, np.zeros(3, f))
    assert c == INVALID and "pdist only supports non-negative p values." in msg
    c, msg = error_of(ops.Pdist, np.ones(3, f), 2.0, np.zeros(3, f))
    assert c == INVALID and "self dim should be 2, but got 1." in msg
    c, msg = error_of(ops.Pdist, np.ones((3, 2), np.float64), 2.0, np.zeros(3, np.float64))
    assert c == INVALID and "not implemented for DOUBLE" in msg


def cross_model(a, b, dim):
    a, b = np.broadcast_arrays(a, b)
    a, b = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    name = "bfloat16" if a.dtype == R.np_dtype("bfloat16") else str(a.dtype)
    if a.dtype.kind in "iu":
        a64, b64 = a.astype(np.int64), b.astype(np.int64)
        r = np.stack([a64[..., (k + 1) % 3] * b64[..., (k + 2) % 3] - a64[..., (k + 2) % 3] * b64[..., (k + 1) % 3]
                      for k in range(3)], -1).astype(a.dtype)
    else:
        w = np.float64 if name == "float64" else np.float32
        a32, b32 = a.astype(w), b.astype(w)
        r = np.stack([a32[..., (k + 1) % 3] * b32[..., (k + 2) % 3] - a32[..., (k + 2) % 3] * b32[..., (k + 1) % 3]
                      for k in range(3)], -1)
        r = R.cast(r.astype(np.float64), name)
    return np.moveaxis(r, -1, dim)


@pytest.mark.parametrize("name,sa,sb,dim", [("float32", (4, 3), (4, 3), 1), ("float16", (3, 5), (3, 1), 0),
                                            ("bfloat16", (2, 3, 2), (3, 2), -2), ("float64", (3,), (3,), 0),
                                            ("int8", (5, 3), (5, 3), -1), ("int64", (2, 3), (2, 3), 1),
                                            ("uint8", (3, 2), (3, 2), 0), ("int16", (3,), (3,), 0),
                                            ("int32", (2, 3), (2, 3), 1)])
def test_linalg_cross_bit_exact(name, sa, sb, dim):
    a, b = rand(sa, name, 3.0), rand(sb, name, 3.0)
    want = cross_model(a, b, dim)
    got = ops.LinalgCross(strided(a), b, dim, np.zeros(want.shape, a.dtype))
    assert np.array_equal(f64(got), f64(want)), (got, want)


def test_linalg_cross_validation():
    f = np.float32
    c, msg = error_of(ops.LinalgCross, np.ones((2, 4), f), np.ones((2, 4), f), 1, np.zeros((2, 4), f))
    assert c == INVALID and "dimension 1 does not have size 3." in msg
    c, msg = error_of(ops.LinalgCross, np.ones((2, 3), f), np.ones((2, 3), f), 2, np.zeros((2, 3), f))
    assert c == INVALID and "Dimension out of range(expected to be in range of [-2, 1], but got 2." in msg
    c, msg = error_of(ops.LinalgCross, np.ones((2, 3), f), np.ones((2, 3), f), 1, np.zeros((3, 3), f))
    assert c == INVALID and "expected consistent tensor shape for the broadcast shape and out" in msg
    c, msg = error_of(ops.LinalgCross, np.ones((2, 3), f), np.ones((2, 3), np.float16), 1, np.zeros((2, 3), f))
    assert c == INVALID and "Tensor self expected dtype is FLOAT16 but found FLOAT." in msg
    assert ops.LinalgCross(np.ones((0, 3), f), np.ones((0, 3), f), 1, np.zeros((0, 3), f)).shape == (0, 3)
