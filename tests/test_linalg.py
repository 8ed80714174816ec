"""aclnnTriangularSolve, Inverse, Slogdet, LinalgQr, Svd (src/ops/math/linalg.toml: double-precision textbook
algorithms, class c) against numpy.linalg (LAPACK) in float64, with the bounds measured for the notes (FLOAT: a few
fp32 ulp of the largest element, DOUBLE: 1e-13 relative); QR against LAPACK's signs exactly, SVD by what is unique
(singular values, the reconstruction, |u| and |v| columns of distinct values, orthonormality); batches and
broadcasting, full / reduced / r-only modes, empty inputs, the codes and messages of the op_apis' checks, the dtype
lists (tests/_linalg_cases.py) are checked on both SoCs by tests/test_blas.py. torch's solve_triangular / inverse / slogdet / qr / svd on torch_npu run
in tests/test_blas.py's torch_npu child."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from _cnn_ops import INVALID, NULLPTR, error_of, f64
from _op_helpers import strided

RNG = np.random.default_rng(11)
INNER = 561103
TOL = {"float32": 4e-7, "float64": 1e-13}
DT = {"float32": np.float32, "float64": np.float64}


def well_conditioned(shape, name):
    n = shape[-1]
    return (RNG.standard_normal(shape) + 4 * np.eye(n)).astype(DT[name])


def rel_close(got, want, name):
    scale = max(np.max(np.abs(want)), 1e-30)
    assert got.shape == want.shape and np.max(np.abs(f64(got) - want)) <= TOL[name] * scale, np.max(np.abs(f64(got) - want)) / scale


@pytest.mark.parametrize("name,upper,transpose,unit,bshape", [
    ("float32", True, False, False, (2, 5, 3)), ("float64", False, True, False, (5, 2)),
    ("float32", False, False, True, (3, 5, 4)), ("float64", True, True, False, (1, 5, 1))])
def test_triangular_solve(name, upper, transpose, unit, bshape):
    a = well_conditioned((2, 1, 5, 5) if len(bshape) == 3 else (5, 5), name)
    b = RNG.standard_normal(bshape).astype(DT[name])
    bs = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x_shape, m_shape = bs + b.shape[-2:], bs + a.shape[-2:]
    x, m = ops.TriangularSolve(strided(b), a, upper, transpose, unit, np.zeros(x_shape, DT[name]),
                               np.zeros(m_shape, DT[name]))
    t = np.triu(f64(a)) if upper else np.tril(f64(a))
    if unit:
        t = t * (1 - np.eye(5)) + np.eye(5)   # the vendor's A * (1 - I) + I
    t = np.swapaxes(t, -1, -2) if transpose else t
    rel_close(x, np.linalg.solve(np.broadcast_to(t, m_shape), np.broadcast_to(f64(b), x_shape)), name)
    assert np.array_equal(m, np.broadcast_to(a, m_shape))


def test_triangular_solve_validation():
    f = np.float32
    a, b = np.eye(3, dtype=f), np.ones((3, 2), f)
    c, msg = error_of(ops.TriangularSolve, b, np.ones((3, 4), f), True, False, False, np.zeros((3, 2), f), None)
    assert c == INVALID and "A must be batchs of square matrices, but they are 3 by 4 matrices." in msg
    c, msg = error_of(ops.TriangularSolve, np.ones((4, 2), f), a, True, False, False, np.zeros((4, 2), f), None)
    assert c == INVALID and "Incompatible matrix sizes for triangular_solve" in msg
    c, msg = error_of(ops.TriangularSolve, b.astype(np.float64), a.astype(np.float64), True, False, True,
                      np.zeros((3, 2), np.float64), None)
    assert c == INVALID and "unitriangular mode only support float." in msg
    c, msg = error_of(ops.TriangularSolve, b, a, True, False, False, np.zeros((3, 3), f), None)
    assert c == INVALID and "xOut to have same size as [3, 2]" in msg
    c, msg = error_of(ops.TriangularSolve, np.ones((2, 3, 2), f), np.ones((3, 3, 3), f), True, False, False,
                      np.zeros((3, 3, 2), f), None)
    assert c == INVALID and "Broadcast fail" in msg
    c, msg = error_of(ops.TriangularSolve, b.astype(np.float16), a.astype(np.float16), True, False, False,
                      np.zeros((3, 2), np.float16), None)
    assert c == INVALID and "not implemented for FLOAT16" in msg
    assert error_of(ops.TriangularSolve, None, a, True, False, False, np.zeros((3, 2), f), None)[0] == INNER


@pytest.mark.parametrize("name", ["float32", "float64", "float16"])
def test_inverse_and_slogdet(name):
    a = well_conditioned((3, 4, 4), "float64").astype(np.float16 if name == "float16" else DT[name])
    inv = ops.Inverse(strided(a), np.zeros(a.shape, a.dtype))
    want = np.linalg.inv(f64(a))
    if name == "float16":
        assert np.max(np.abs(f64(inv) - want)) <= 2.0 ** -10 * np.max(np.abs(want))
    else:
        rel_close(inv, want, name)
        a[1] = 0.0   # singular: sign 0, log -inf
        a[2, 0] *= -1.0
        s, lg = ops.Slogdet(a, np.zeros(3, a.dtype), np.zeros(3, a.dtype))
        rs, rl = np.linalg.slogdet(f64(a))
        assert np.array_equal(s, rs) and lg[1] == -np.inf
        assert np.max(np.abs(f64(lg[[0, 2]]) - rl[[0, 2]])) <= TOL[name] * np.max(np.abs(rl[[0, 2]]))


def test_inverse_slogdet_validation_and_empty():
    f = np.float32
    c, msg = error_of(ops.Inverse, np.ones((2, 3), f), np.zeros((2, 3), f))
    assert c == INVALID and "must be batches of square matrices, but they are 3 by 2 matrices" in msg
    c, msg = error_of(ops.Inverse, np.ones((2, 2), f), np.zeros((2, 2), np.int32))
    assert c == INVALID and "cast" in msg
    c, msg = error_of(ops.Inverse, np.ones((2, 2), f), np.zeros((3, 3), f))
    assert c == INVALID
    assert ops.Inverse(np.zeros((0, 3, 3), f), np.zeros((0, 3, 3), f)).shape == (0, 3, 3)
    c, msg = error_of(ops.Slogdet, np.ones((2, 3), f), np.zeros((), f), np.zeros((), f))
    assert c == INVALID and "The last two dimensions of self must be equal, but they are 2 by 3 matrices." in msg
    c, msg = error_of(ops.Slogdet, np.ones((2, 3, 3), f), np.zeros(3, f), np.zeros(2, f))
    assert c == INVALID and "expect shape of signOut is [2], but got [3]." in msg
    assert error_of(ops.Slogdet, None, np.zeros((), f), np.zeros((), f))[0] == NULLPTR


@pytest.mark.parametrize("name,shape,mode", [("float32", (2, 6, 4), 0), ("float64", (4, 6), 1), ("float64", (3, 5, 3), 2),
                                             ("float32", (3, 3), 1), ("float16", (5, 3), 0)])
def test_linalg_qr_lapack_signs(name, shape, mode):
    a = RNG.standard_normal(shape).astype(np.float16 if name == "float16" else DT[name])
    m, n = shape[-2:]
    k = min(m, n)
    qs = shape[:-1] + ((k,) if mode == 0 else (m,)) if mode != 2 else (0,)
    rs = shape[:-2] + ((m,) if mode == 1 else (k,)) + (n,)
    q, r = ops.LinalgQr(strided(a), mode, np.zeros(qs, a.dtype), np.zeros(rs, a.dtype))
    ref = np.linalg.qr(f64(a), mode=["reduced", "complete", "r"][mode])
    rq, rr = (None, ref) if mode == 2 else ref
    tol = 2.0 ** -10 if name == "float16" else TOL[name]
    assert np.max(np.abs(f64(r) - rr)) <= tol * np.max(np.abs(rr))
    if mode != 2:
        assert np.max(np.abs(f64(q) - rq)) <= 4 * tol


def test_linalg_qr_validation():
    f = np.float32
    c, msg = error_of(ops.LinalgQr, np.ones((4, 3), f), 0, np.zeros((4, 4), f), np.zeros((3, 3), f))
    assert c == INVALID and "The output Q should have the following shape [4, 3], but got [4, 4] instead." in msg
    c, msg = error_of(ops.LinalgQr, np.ones((4, 3), f), 2, np.zeros((0,), f), np.zeros((4, 3), f))
    assert c == INVALID and "The output R should have the following shape [3, 3]" in msg
    assert error_of(ops.LinalgQr, np.ones((4, 3), np.int32), 0, np.zeros((4, 3), np.int32), np.zeros((3, 3), np.int32))[0] == INVALID
    assert error_of(ops.LinalgQr, None, 0, np.zeros((4, 3), f), np.zeros((3, 3), f))[0] == INNER


@pytest.mark.parametrize("name,shape,full", [("float32", (2, 6, 4), False), ("float64", (4, 7), True),
                                             ("float64", (2, 3, 5, 5), False), ("float32", (3, 6), True)])
def test_svd_unique_parts(name, shape, full):
    a = RNG.standard_normal(shape).astype(DT[name])
    m, n = shape[-2:]
    k = min(m, n)
    b = shape[:-2]
    s, u, v = ops.Svd(strided(a), full, True, np.zeros(b + (k,), a.dtype), np.zeros(b + (m, m if full else k), a.dtype),
                      np.zeros(b + (n, n if full else k), a.dtype))
    ru, rs, rvh = np.linalg.svd(f64(a), full_matrices=full)
    tol = TOL[name] * 4
    assert np.max(np.abs(f64(s) - rs)) <= tol * np.max(rs)
    rec = f64(u[..., :, :k]) @ (f64(s)[..., :, None] * np.swapaxes(f64(v[..., :, :k]), -1, -2))
    assert np.max(np.abs(rec - f64(a))) <= 4 * tol * np.max(np.abs(a))
    for x in (u, v):   # orthonormal columns (the completed ones too)
        assert np.max(np.abs(np.swapaxes(f64(x), -1, -2) @ f64(x) - np.eye(x.shape[-1]))) <= 4 * tol
    assert np.max(np.abs(np.abs(f64(u[..., :, :k])) - np.abs(ru[..., :, :k]))) <= 1e3 * tol   # distinct values
    vk = f64(v[..., :, :k])
    big = np.take_along_axis(vk if m >= n else f64(u[..., :, :k]),
                             np.abs(vk if m >= n else f64(u[..., :, :k])).argmax(-2)[..., None, :], -2)
    assert (big > 0).all()   # the sign convention
    s2 = ops.Svd(a, full, False, np.zeros(b + (k,), a.dtype), np.zeros((1,), a.dtype), np.zeros((1,), a.dtype))[0]
    assert np.array_equal(s2, s)


def test_svd_validation_and_rank_deficient():
    f = np.float64
    a = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0))   # rank 1
    s, u, v = ops.Svd(a, True, True, np.zeros(3, f), np.zeros((4, 4), f), np.zeros((3, 3), f))
    assert abs(s[0] - np.linalg.norm(a, 2)) <= 1e-13 * s[0] and np.all(s[1:] <= 1e-13 * s[0])
    assert np.max(np.abs(u.T @ u - np.eye(4))) <= 1e-12 and np.max(np.abs(v.T @ v - np.eye(3))) <= 1e-12
    c, msg = error_of(ops.Svd, np.ones((4, 3), f), False, True, np.zeros(3, f), np.zeros((4, 4), f), np.zeros((3, 3), f))
    assert c == INVALID and "Shape of output tensor u is invalid." in msg
    c, msg = error_of(ops.Svd, np.ones(4, f), False, True, np.zeros(3, f), np.zeros((4, 3), f), np.zeros((3, 3), f))
    assert c == INVALID and "Input dim num should be greater than or equal to 2." in msg
    c, msg = error_of(ops.Svd, np.ones((4, 3), f), False, True, np.zeros(3, np.float32), np.zeros((4, 3), f), np.zeros((3, 3), f))
    assert c == INVALID and "same dtype" in msg
