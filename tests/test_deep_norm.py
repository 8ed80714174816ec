"""Deep normalisation (native_stubs/src/ops/norm/deep_norm.toml): aclnnDeepNorm and aclnnDeepNormGrad (hicann/ops-nn
norm/deep_norm, norm/deep_norm_grad). Class c: every output within the stated ulp of a float64 NumPy model written
from the vendor's documented formulas (docs/aclnnDeepNorm.md, aclnnDeepNormGrad.md; alpha and epsilon as the
definitions' Float attrs), every dtype row of the definitions (Ascend 950 in-process, Atlas A2 in one subprocess
running the same checks), the documented examples, the tilings' shape checks in their order (561002), the dtype rows
(161002), NULL pointers (161001), and one torch_npu child (npu_deep_norm and npu_deep_norm_backward against the direct
calls)."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided
import _fused_ops as F

TILING = 561002
F32 = np.float32
RNG = np.random.default_rng(4417)
DTYPES = F.DTYPES


def _rows(a, nd):   # a as rows x the trailing nd dims
    a = F.f64(a)
    return a.reshape(-1, int(np.prod(a.shape[a.ndim - nd:])))


def _stat_shape(shape, gnd):
    return tuple(shape[:len(shape) - gnd]) + (1,) * gnd


# ---- float64 models (the vendor's documented formulas) ------------------------------------------------------------

def deep_norm64(x, gx, beta, gamma, alpha, eps):
    nd = np.ndim(gamma)
    a = float(F32(alpha))
    xp = a * _rows(x, nd) + _rows(gx, nd)
    mean = xp.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(((xp - mean) ** 2).mean(axis=1, keepdims=True) + float(F32(eps)))
    y = (xp - mean) * rstd * F.f64(gamma).reshape(-1) + F.f64(beta).reshape(-1)
    return mean, rstd, y.reshape(np.shape(x))


def deep_norm_grad64(dy, x, gx, gamma, mean, rstd, alpha):
    nd = np.ndim(gamma)
    a, n = float(F32(alpha)), int(np.prod(np.shape(gamma)))
    d, g = _rows(dy, nd), F.f64(gamma).reshape(-1)
    m, r = F.f64(mean).reshape(-1, 1), F.f64(rstd).reshape(-1, 1)
    t1, t2 = d * g, a * _rows(x, nd) + _rows(gx, nd) - m
    dvar = -(t1 * t2 * r ** 3).sum(axis=1, keepdims=True) / n
    dmean = -(t1 * r).sum(axis=1, keepdims=True) / n
    dgx = t1 * r + dvar * t2 + dmean
    shape, gshape = np.shape(x), np.shape(gamma)
    return ((a * dgx).reshape(shape), dgx.reshape(shape), d.sum(axis=0).reshape(gshape),
            (d * r * t2).sum(axis=0).reshape(gshape))


# ---- helpers ----------------------------------------------------------------------------------------------------

def _inputs(name, shape, gnd, scale=1.0):
    gshape = shape[len(shape) - gnd:]
    x = R.cast(RNG.standard_normal(shape) * scale, name)
    gx = R.cast(RNG.standard_normal(shape) * scale, name)
    beta = R.cast(RNG.standard_normal(gshape), name)
    gamma = R.cast(RNG.uniform(0.5, 1.5, gshape), name)
    return x, gx, beta, gamma


def _forward(x, gx, beta, gamma, alpha, eps, name):
    st = _stat_shape(x.shape, len(gamma.shape))
    return ops.DeepNorm(x, gx, beta, gamma, alpha, eps, F.zeros(st, "float32"), F.zeros(st, "float32"),
                        F.zeros(x.shape, name))


def _backward(dy, x, gx, gamma, mean, rstd, alpha, name):
    return ops.DeepNormGrad(dy, x, gx, gamma, mean, rstd, alpha, F.zeros(x.shape, name), F.zeros(x.shape, name),
                            F.zeros(gamma.shape, "float32"), F.zeros(gamma.shape, "float32"))


SHAPES = [((3, 8), 1), ((2, 3, 5), 2), ((4, 1, 1000), 1), ((2, 2, 33), 1)]


@pytest.mark.parametrize("name", DTYPES)
def test_deep_norm_against_float64(name):
    for (shape, gnd), scale, alpha in zip(SHAPES, [1.0, 10.0, 1e-2, 3.0], [0.3, 1.0, 2.5, 0.87]):
        x, gx, beta, gamma = _inputs(name, shape, gnd, scale)
        mean, rstd, y = _forward(x, gx, beta, gamma, alpha, 1e-6, name)
        m64, r64, y64 = deep_norm64(x, gx, beta, gamma, alpha, 1e-6)
        assert mean.shape == rstd.shape == _stat_shape(shape, gnd) and y.dtype == x.dtype
        assert F.ulps(mean.reshape(-1, 1), m64, "float32") <= 2, (name, shape)
        assert F.ulps(rstd.reshape(-1, 1), r64, "float32") <= 2, (name, shape)
        assert F.ulps(y, y64, name) <= (2 if name == "float32" else 1), (name, shape)


@pytest.mark.parametrize("name", DTYPES)
def test_deep_norm_grad_against_float64(name):
    for (shape, gnd), alpha in zip(SHAPES, [0.3, 1.0, 2.5, 0.87]):
        x, gx, _, gamma = _inputs(name, shape, gnd)
        dy = R.cast(RNG.standard_normal(shape), name)
        m64, r64, _ = deep_norm64(x, gx, gamma, gamma, alpha, 1e-6)
        mean, rstd = m64.astype(F32).reshape(_stat_shape(shape, gnd)), r64.astype(F32).reshape(_stat_shape(shape, gnd))
        got = _backward(dy, x, gx, gamma, mean, rstd, alpha, name)
        want = deep_norm_grad64(dy, x, gx, gamma, mean, rstd, alpha)
        for g, w, dt, tol in zip(got, want, [name, name, "float32", "float32"], [1, 1, 2, 2]):
            assert g.shape == w.shape and F.ulps(g, w, dt) <= tol, (name, shape)


def test_documented_examples():
    """docs/aclnnDeepNorm.md and aclnnDeepNormGrad.md: x = 1..12 as [3, 1, 4], gx = 2,2,2,4,4,4,6,6,6,8,8,8,
    beta = gamma = 0..3, alpha 0.3, eps 1e-6 (the grad: dy = x, mean = 0, 1, 2, rstd = 0, 1, 2); they print no
    results: compared with the float64 models."""
    x = np.arange(1, 13, dtype=F32).reshape(3, 1, 4)
    gx = F32([2, 2, 2, 4, 4, 4, 6, 6, 6, 8, 8, 8]).reshape(3, 1, 4)
    bg = np.arange(4, dtype=F32)
    mean, rstd, y = _forward(x, gx, bg, bg, 0.3, 1e-6, "float32")
    m64, r64, y64 = deep_norm64(x, gx, bg, bg, 0.3, 1e-6)
    assert F.ulps(mean.reshape(-1, 1), m64, "float32") <= 2 and F.ulps(rstd.reshape(-1, 1), r64, "float32") <= 2
    assert F.ulps(y, y64, "float32") <= 2
    m, r = F32([0, 1, 2]).reshape(3, 1, 1), F32([0, 1, 2]).reshape(3, 1, 1)
    got = _backward(x, x, gx, bg, m, r, 0.3, "float32")
    for g, w in zip(got, deep_norm_grad64(x, x, gx, bg, m, r, 0.3)):
        assert F.ulps(g, w, "float32") <= 2


def test_empty_outputs_and_strided_inputs():
    e = F.zeros((2, 0, 4), "float32")   # every output empty: nnopbase skips the tiling, nothing written
    assert _forward(e, e, np.ones(4, F32), np.ones(4, F32), 0.3, 1e-6, "float32")[2].shape == (2, 0, 4)
    x, gx, beta, gamma = _inputs("float16", (4, 6), 1)
    want = _forward(x, gx, beta, gamma, 0.3, 1e-6, "float16")
    got = _forward(strided(x, transpose=True), strided(gx), beta, strided(gamma), 0.3, 1e-6, "float16")
    assert all(F.bits_equal(g, w) for g, w in zip(got, want))


# ---- validation ----------------------------------------------------------------------------------------------

X, G = np.ones((2, 8), F32), np.ones(8, F32)
S, H = np.zeros((2, 1), F32), np.ones((2, 8), np.float16)
D = [X, X, G, G, 0.3, 1e-6, S, S, X]   # DeepNorm's arguments


def _dn(**kw):
    names = ["x", "gx", "beta", "gamma", "alpha", "eps", "mean", "rstd", "y"]
    return tuple(kw.get(n, a) for n, a in zip(names, D))


def _dng(**kw):
    names = ["dy", "x", "gx", "gamma", "mean", "rstd", "alpha", "dx", "dgx", "dbeta", "dgamma"]
    return tuple(kw.get(n, a) for n, a in zip(names, [X, X, X, G, S, S, 0.3, X, X, G, G]))


INVALID_CALLS = [   # operator, arguments, code, message text (the vendor's order: each also fails a later check)
    ("DeepNorm", _dn(gx=H), INVALID, "the dtype combination"),
    ("DeepNorm", _dn(mean=S.astype(np.float16)), INVALID, "the dtype combination"),
    ("DeepNorm", _dn(x=np.ones(8, F32), gx=np.ones(8, F32), y=np.ones(8, F32)), TILING,
     "x dim num 1: dim num should be in range [2, 8]"),
    ("DeepNorm", _dn(gamma=np.ones((1,) * 8, F32), beta=np.ones(3, F32)), TILING,
     "gamma dim num 8: dim num should be in range [1, 7]"),
    ("DeepNorm", _dn(gx=np.ones((1, 2, 8), F32), beta=np.ones((2, 8), F32)), TILING, "gx dim num 3: dim num should"),
    ("DeepNorm", _dn(rstd=np.zeros(2, F32), beta=np.ones((2, 8), F32)), TILING, "y/mean/rstd dim nums 2/2/1"),
    ("DeepNorm", _dn(beta=np.ones((2, 8), F32), gamma=np.ones(4, F32)), TILING, "beta dim num 2: dim num should equal"),
    ("DeepNorm", _dn(beta=np.ones((2, 8), F32), gamma=np.ones((2, 8), F32)), TILING,
     "x dim num should be greater than gamma dim num"),
    ("DeepNorm", _dn(x=np.ones((2, 0), F32), gx=np.ones((2, 4), F32)), TILING, "x [2, 0]: shape dim cannot be 0"),
    ("DeepNorm", _dn(gx=np.ones((2, 4), F32), y=np.ones((2, 4), F32)), TILING, "gx [2, 4]: shape should equal x"),
    ("DeepNorm", _dn(y=np.ones((2, 4), F32), mean=np.zeros((3, 1), F32)), TILING, "y [2, 4]: shape should equal x"),
    ("DeepNorm", _dn(mean=np.zeros((3, 1), F32), gamma=np.ones(4, F32)), TILING,
     "rstd/mean [2, 8]: shape should equal x leading dimensions"),
    ("DeepNorm", _dn(gamma=np.ones(4, F32)), TILING, "gamma/beta [2, 8]: shape should equal x trailing dimensions"),
    ("DeepNormGrad", _dng(gx=H), INVALID, "the dtype combination"),
    ("DeepNormGrad", _dng(dbeta=np.ones(8, np.float16)), INVALID, "the dtype combination"),
    ("DeepNormGrad", _dng(dy=np.ones(8, F32), gamma=np.ones((1,) * 8, F32)), TILING,
     "dy dim num 1: dim num should be in range [2, 8]"),
    ("DeepNormGrad", _dng(gamma=np.ones((1,) * 8, F32), x=np.ones(8, F32)), TILING,
     "gamma dim num 8: dim num should be in range [1, 7]"),
    ("DeepNormGrad", _dng(dgx=np.ones(8, F32), mean=np.zeros(2, F32)), TILING,
     "Input gx/x/dx/dgx shape invaild, dim num is not equal dy dim."),
    ("DeepNormGrad", _dng(mean=np.zeros(2, F32), dgamma=np.ones((1, 8), F32)), TILING,
     "Input mean/rstd shape invaild, dim num is not equal dy dim num."),
    ("DeepNormGrad", _dng(dgamma=np.ones((1, 8), F32), gamma=np.ones((2, 8), F32)), TILING,
     "Output dgamma/dbeta shape invaild"),
    ("DeepNormGrad", _dng(gamma=np.ones((2, 8), F32), dgamma=np.ones((2, 8), F32), dbeta=np.ones((2, 8), F32)), TILING,
     "dy dim num should not be smaller than gamma dim num."),
    ("DeepNormGrad", _dng(dy=np.ones((2, 0), F32), x=np.ones((2, 4), F32)), TILING, "Input dy shape can not be 0."),
    ("DeepNormGrad", _dng(x=np.ones((2, 4), F32), dx=np.ones((2, 4), F32)), TILING,
     "Input x/gx shape invaild, shape is not equal dy shape."),
    ("DeepNormGrad", _dng(dgx=np.ones((2, 4), F32), mean=np.zeros((3, 1), F32)), TILING,
     "Output dx/dgx shape invaild, shape is not equal x/gx shape."),
    ("DeepNormGrad", _dng(mean=np.zeros((3, 1), F32), gamma=np.ones(4, F32)), TILING,
     "Input rstd/mean shape invaild, shape is not equal dy first few dim."),
    ("DeepNormGrad", _dng(gamma=np.ones(4, F32), dgamma=np.ones(4, F32)), TILING,
     "Input gamma shape invaild, gamma shape is not equal dy last few dim."),
    ("DeepNormGrad", _dng(dgamma=np.ones(4, F32), dbeta=np.ones(4, F32)), TILING,
     "Output dgamma shape invaild, shape is not equal gamma shape."),
    ("DeepNormGrad", _dng(dbeta=np.ones(4, F32)), TILING,
     "Output dbeta shape invaild, dbeta shape is not equal dy last few dim."),
]


@pytest.mark.parametrize("op,args,code,text", INVALID_CALLS)
def test_invalid_arguments(op, args, code, text):
    err = pytest.raises(AclError, getattr(ops, op), *args).value
    assert (err.code, text in str(err)) == (code, True), str(err)


def test_reduced_trailing_dims_per_soc():
    """Ascend 950's arch35 tiling wants mean's and rstd's reduced dims 1 (CheckReduceOutputTail); Atlas A2's legacy
    tiling leaves them unchecked, and the emulator wants one mean and one rstd per row."""
    text = "rstd [2, 2] has 4 elements, one per row (2) needed" if F.ON_A2 else \
        "mean/rstd [2, 1] and [2, 2]: reduced trailing dimensions must be 1"
    err = pytest.raises(AclError, ops.DeepNorm, *_dn(rstd=np.zeros((2, 2), F32))).value
    assert (err.code, text in str(err)) == (TILING, True), str(err)


@pytest.mark.parametrize("op,n", [("DeepNorm", 9), ("DeepNormGrad", 11)])
def test_null_arguments(op, n):
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", n) == NULLPTR


# ---- Atlas A2: the same checks in one subprocess ----------------------------------------------------------------

A2_CALLS = """
for name in ["float32", "float16", "bfloat16"]:
    T.test_deep_norm_against_float64(name)
    T.test_deep_norm_grad_against_float64(name)
T.test_documented_examples()
T.test_reduced_trailing_dims_per_soc()
"""


def test_atlas_a2_dtype_rows():
    F.run_on_a2("test_deep_norm", A2_CALLS)


# ---- torch_npu ---------------------------------------------------------------------------------------------------

TORCH_BODY = """
torch.manual_seed(0)
for dt in [torch.float32, torch.float16, torch.bfloat16]:
    x = torch.randn(2, 3, 16).to(dt); gx = torch.randn(2, 3, 16).to(dt); dy = torch.randn(2, 3, 16).to(dt)
    b = torch.randn(16).to(dt); g = (torch.rand(16) + 0.5).to(dt)
    mean, rstd, y = torch_npu.npu_deep_norm(x.npu(), gx.npu(), b.npu(), g.npu(), alpha=0.87, epsilon=1e-6)
    grads = torch_npu.npu_deep_norm_backward(dy.npu(), x.npu(), gx.npu(), g.npu(), mean, rstd, alpha=0.87)
    OUT[str(dt)] = [enc(to_np(v)) for v in (x, gx, b, g, dy, mean, rstd, y) + tuple(grads)]
"""


def test_torch_npu_reaches_the_operators():
    out = F.torch_npu_arrays(TORCH_BODY)
    for dt, name in F.TORCH_NAMES.items():
        x, gx, b, g, dy, mean, rstd, y, dx, dgx, db, dg = out[dt]
        assert mean.shape == rstd.shape == (2, 3, 1)
        dm, dr, dyy = _forward(x, gx, b, g, 0.87, 1e-6, name)
        assert F.bits_equal(mean, dm) and F.bits_equal(rstd, dr) and F.bits_equal(y, dyy), name
        direct = _backward(dy, x, gx, g, mean, rstd, 0.87, name)
        for got, want in zip((dx, dgx, db, dg), direct):   # dbeta and dgamma FLOAT (the meta function says gamma's)
            assert F.bits_equal(got, want), name
