"""RMS normalisation (native_stubs/src/ops/norm/rms_norm.toml): aclnnRmsNorm, aclnnRmsNormGrad, aclnnAddRmsNorm,
aclnnInplaceAddRmsNorm, aclnnGemmaRmsNorm (hicann/ops-nn norm/rms_norm, rms_norm_grad, add_rms_norm,
inplace_add_rms_norm, gemma_rms_norm). Data-driven: an operator is a row of CASES (its argument builder, its float64
definition written from the vendor's documented formula, its float32 model of the vendor kernel's element steps).
On Ascend 950's full-load templates RmsNorm, GemmaRmsNorm, AddRmsNorm and InplaceAddRmsNorm are bit-exact
against NumPy models of the vendor's reduction (NormCommon's CalculateSquareReduceSum) and Newton-Raphson rstd.
Class c elsewhere: results within the stated ulp of the float64 definition (fp32 y: 3 ulp, rstd 2; fp16/bf16: 1 ulp of the float64
value rounded to the dtype); the element steps bit-exact against the fp32 models (with the sum of squares in
float64 rounded once to fp32, as the emulator documents); every dtype combination of the definitions (Ascend 950
in-process, Atlas A2 in one subprocess running the same checks), the validation codes in the vendor's order, and one
torch_npu child (npu_rms_norm and its backward, npu_add_rms_norm, npu_add_rms_norm_v2, npu_gemma_rms_norm)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INNER_NULLPTR, INVALID, NULLPTR, raw_null_status, strided
import _fused_ops as F

TILING = 561002
F32 = np.float32
RNG = np.random.default_rng(2231)
A2 = F.ON_A2


_f64, _ulps, _bits_equal = F.f64, F.ulps, F.bits_equal


def _rows(a, nd):   # a as rows x the trailing nd dims
    a = np.asarray(a)
    return a.reshape(-1, int(np.prod(a.shape[a.ndim - nd:])))


# ---- float64 definitions (the vendor's documented formulas) ------------------------------------------------------

def rms64(x, g, eps, gemma=False):
    xr, gr = _rows(_f64(x), np.ndim(g)), _f64(g).reshape(-1) + (1.0 if gemma else 0.0)
    rstd = 1.0 / np.sqrt(np.mean(xr * xr, axis=1, keepdims=True) + eps)
    return (xr * rstd * gr).reshape(np.shape(x)), rstd


def rms_grad64(dy, x, rstd, g):
    nd = np.ndim(g)
    a, b, gr, r = _rows(_f64(dy), nd), _rows(_f64(x), nd), _f64(g).reshape(-1), _f64(rstd).reshape(-1, 1)
    mean = np.mean(a * gr * b * r, axis=1, keepdims=True)
    return ((a * gr - r * b * mean) * r).reshape(np.shape(x)), (r * b * a).sum(axis=0).reshape(np.shape(g))


# ---- float32 models of the kernels' element steps (S: float64 sum of the fp32 terms, rounded once) ---------------

def _s32(q):
    return q.astype(np.float64).sum(axis=1, keepdims=True).astype(F32)


def _full_load_950(n, xbytes, gbytes=None):
    """The arch35 tilings' full-load template: numColAlign (n padded to 32 bytes) <= 16384 and one row fits the UB
    (254976 bytes, the vendor's arch35 tiling UT value, less 1024): RmsNorm's formula (gbytes) or AddRmsNorm's."""
    nca = -(-n * xbytes // 32) * 32 // xbytes
    fold = 1 << ((nca - 1).bit_length() - 1)
    ub = 254976 - 1024
    if nca > 16384:
        return False
    if gbytes:
        tmp = ub - 2048 - nca * gbytes
        return tmp > 0 and tmp // (nca * xbytes * 4 + 12 + -(-(-(-fold // 64)) // 32) * 32) >= 1
    tmp = ub - 1024 - nca * xbytes
    return tmp > 0 and tmp // (nca * xbytes * 8 + nca * 4 + 12 + -(-(-(-fold // 64)) // 8) * 8 * 4) >= 1


def _bytes(a):
    return 4 if np.asarray(a).dtype == F32 else 2


def rms32(x, g, eps, name, gemma=False):
    xr, gr = _rows(x, np.ndim(g)).astype(F32), np.asarray(g).astype(F32).reshape(-1)
    if gemma:
        gr = gr + F32(1)
    avg = F32(1) / F32(xr.shape[1])
    if not A2 and _full_load_950(xr.shape[1], _bytes(x), _bytes(g)):   # rms_norm_regbase_perf.h
        rstd = np.array([[_newton_rstd(_square_reduce_sum(row, _bytes(x)), avg, eps)] for row in xr], F32)
    else:
        rstd = F32(1) / np.sqrt(_s32(xr * xr) * avg + F32(eps))
    return R.cast((xr * rstd) * gr, name).reshape(np.shape(x)), rstd


def add_rms32_a2(x1, x2, g, eps, name):   # Atlas A2 add_rms_norm.h
    nd = np.ndim(g)
    a, b, gr = _rows(x1, nd).astype(F32), _rows(x2, nd).astype(F32), np.asarray(g).astype(F32).reshape(-1)
    x = a + b
    if name == "float16":
        x = R.cast(x, name).astype(F32)
    avg = F32(1) / F32(x.shape[1])
    rstd = F32(1) / np.sqrt(_s32((x * x) * avg) + F32(eps))
    t = x * rstd
    if name != "float32":
        t = R.cast(t, name).astype(F32)
    return R.cast(t * gr, name).reshape(np.shape(x1)), rstd, R.cast(x, name).reshape(np.shape(x1))


# Ascend 950 AddRmsNorm, full-load template (arch35 add_rms_norm_regbase.h): NormCommon's CalculateSquareReduceSum
# and ComputeRstdNewtonRaphson<true, true>, written from reduce_common_regbase.h. ReduceSum of one 64-lane register:
# adjacent pairs (the seed operator's default for the unpublished lane order).

def _tree64(v):
    a = np.zeros(64, F32)
    a[:len(v)] = v
    while len(a) > 1:
        a = a[0::2] + a[1::2]
    return a[0]


def _square_reduce_sum(x, elem):
    """x: one row in fp32; the fold point is the tiling's binAddQuotient of numColAlign (n padded to 32 bytes)."""
    q, n = x * x, len(x)
    if n <= 64:
        return _tree64(q)
    if n <= 128:
        lanes = q[:64].copy()
        lanes[:n - 64] += q[64:]
        return _tree64(lanes)
    nca = -(-n * elem // 32) * 32 // elem
    fold = 1 << (nca.bit_length() - 1)
    fold = fold // 2 if fold == nca else fold
    w = q[:fold].copy()
    w[:n - fold] += q[fold:]
    partials = np.array([_tree64(w[c:c + 64]) for c in range(0, fold, 64)], F32)
    if len(partials) <= 64:
        return _tree64(partials)
    return _tree64(partials[:64] + np.pad(partials[64:], (0, 128 - len(partials))))


def _mula(acc, a, b):   # acc + a * b, one rounding (a * b is exact in float64; the sum's double rounding is ignored)
    return F32(np.float64(acc) + np.float64(a) * np.float64(b))


def _newton_rstd(s, avg, eps):
    v = F32(F32(s * avg) + F32(eps))
    v = max(v, F32(-99.99))
    r = F32(1) / v
    y = np.sqrt(r)
    t = F32(F32(v * F32(-0.5)) * y)
    rstd = F32(y * _mula(F32(1.5), t, y))
    s1 = _mula(F32(1), F32(-v), r)
    r = _mula(r, F32(-rstd), rstd)
    s1 = F32(_mula(s1, v, r) * rstd)
    rstd = _mula(rstd, s1, F32(0.5))
    return F32(0) if np.isinf(v) else F32(np.inf) if v == 0 else rstd


def add_rms32_950(x1, x2, g, eps, name):
    x = _rows(x1, 1).astype(F32) + _rows(x2, 1).astype(F32)
    elem = 4 if name == "float32" else 2
    rstd = np.array([[_newton_rstd(_square_reduce_sum(row, elem), F32(1) / F32(x.shape[1]), eps)] for row in x], F32)
    return R.cast((x * rstd) * np.asarray(g).astype(F32), name).reshape(np.shape(x1)), rstd


# ---- the operators as rows ---------------------------------------------------------------------------------------

def _args(xname, gname, shape, gnd, eps=1e-6):
    x = R.cast(RNG.standard_normal(shape) * 2, xname)
    g = R.cast(RNG.uniform(-1.5, 1.5, shape[len(shape) - gnd:]), gname)
    return x, g, eps


def _rstd_shape(shape, gnd):
    return shape[:len(shape) - gnd] + (1,) * gnd


_z = F.zeros


def call_rms(x, g, eps, gemma=False):
    op = ops.GemmaRmsNorm if gemma else ops.RmsNorm
    return op(x, g, eps, _z(x.shape, _name(x)), _z(_rstd_shape(x.shape, g.ndim), "float32"))


def _name(a):
    return {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}[str(np.asarray(a).dtype)]


# RmsNorm's definition rows (x, gamma): y x's dtype, rstd FLOAT
RMS_ROWS = [("float16", "float32"), ("bfloat16", "float32"), ("float16", "float16"), ("float32", "float32"),
            ("bfloat16", "bfloat16")]
SHAPES = [((3, 16), 1), ((2, 3, 5), 2), ((4, 37), 1), ((1, 300), 1), ((2, 5000), 1), ((1, 17000), 1)]


def _check_y(y, y64, name):
    assert _ulps(y, y64, name) <= (3 if name == "float32" else 1), (name, y, y64)


@pytest.mark.parametrize("xname,gname,gemma", [r + (False,) for r in RMS_ROWS] +
                         [(n, n, True) for n in ("float16", "bfloat16", "float32")])
def test_rms_norm_against_float64_and_the_kernel_steps(xname, gname, gemma):
    for shape, gnd in SHAPES:
        x, g, eps = _args(xname, gname, shape, gnd)
        y, rstd = call_rms(x, g, eps, gemma)
        y64, r64 = rms64(x, g, eps, gemma)
        _check_y(y, y64, xname)
        assert _ulps(rstd.reshape(-1, 1), r64, "float32") <= 2
        y32, r32 = rms32(x, g, eps, xname, gemma)
        assert _bits_equal(y, y32) and _bits_equal(rstd.reshape(-1, 1), r32), (xname, gname, shape)


def test_rms_norm_strided_inf_nan_and_empty():
    x, g, eps = _args("float32", "float32", (4, 8), 1)
    y, rstd = ops.RmsNorm(strided(x, transpose=True), g, eps, _z((4, 8), "float32"), _z((4, 1), "float32"))
    assert _bits_equal(y, rms32(x, g, eps, "float32")[0])
    # the docs: "Inf in, Inf out; NaN in, NaN out". The kernel's steps: an Inf makes S Inf and rstd 0, then
    # Inf * 0 = NaN at the Inf and 0 elsewhere in its row (followed: the source's arithmetic); a NaN: all NaN
    x[1, 2], x[2, 3] = np.inf, np.nan
    y, rstd = call_rms(x, g, eps)
    assert np.isnan(y[2]).all() and np.isnan(rstd[2]).all() and rstd[1, 0] == 0 and np.isfinite(y[0]).all()
    assert np.isnan(y[1, 2]) and (y[1, np.arange(8) != 2] == 0).all()
    e = ops.RmsNorm(_z((0, 8), "float32"), g, eps, _z((0, 8), "float32"), _z((0, 1), "float32"))   # every output empty
    assert e[0].shape == (0, 8)


def _add_case(name, shape, gnd, mode):
    x1, g, eps = _args(name, name, shape, gnd)
    x2 = R.cast(RNG.standard_normal(shape), name)
    y, r, xo = _z(shape, name), _z(_rstd_shape(shape, gnd), "float32"), _z(shape, name)
    outs = {"add": (y, r, xo), "pre": (y, None, xo), "post": (y, None, None)}[mode]
    got = ops.AddRmsNorm(x1, x2, g, eps, *outs)
    got = got if isinstance(got, tuple) else (got,)
    return x1, x2, g, eps, got


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_add_rms_norm_modes_against_float64(name):
    for (shape, gnd), mode in zip(SHAPES, ["add", "pre", "add", "post"]):
        if mode != "add" and name == "float32":
            mode = "add"   # the Pre / Post modes take FLOAT16 and BF16 only
        x1, x2, g, eps, got = _add_case(name, shape, gnd, mode)
        xs = _f64(x1) + _f64(x2)
        x64 = _f64(R.cast(xs, name)) if (A2 and name == "float16") else xs
        y64, r64 = rms64(x64, g, eps)
        _check_y(got[0], y64, name)
        if A2:
            y32, r32, xo32 = add_rms32_a2(x1, x2, g, eps, name)
            assert _bits_equal(got[0], y32), (name, shape, mode)
        if mode == "add":
            assert _ulps(got[1].reshape(-1, 1), r64, "float32") <= 2
        if mode != "post":
            assert _bits_equal(got[-1], R.cast(xs, name))   # x = x1 + x2, one rounding


@pytest.mark.skipif(A2, reason="Ascend 950's kernel")
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_add_rms_norm_950_full_load_is_the_vendors_reduction(name):
    for n in (7, 64, 100, 129, 200, 1000, 4100, 6000 if name == "float32" else 11000):   # the largest full-load rows
        assert _full_load_950(n, 4 if name == "float32" else 2)
        x1, g, eps = _args(name, name, (2, n), 1)
        x2 = R.cast(RNG.standard_normal((2, n)), name)
        y, r, _ = ops.AddRmsNorm(x1, x2, g, eps, _z((2, n), name), _z((2, 1), "float32"), _z((2, n), name))
        y32, r32 = add_rms32_950(x1, x2, g, eps, name)
        assert _bits_equal(r, r32) and _bits_equal(y, y32), (name, n)
    assert not _full_load_950(16000, 4 if name == "float32" else 2)
    x1, g, eps = _args(name, name, (1, 16000), 1)   # split-D: the float64 sum (class c)
    y, r, _ = ops.AddRmsNorm(x1, x1, g, eps, _z((1, 16000), name), _z((1, 1), "float32"), _z((1, 16000), name))
    assert _ulps(r, rms64(2 * _f64(x1), g, eps)[1], "float32") <= 2


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_inplace_add_rms_norm_writes_y_and_x_into_the_inputs(name):
    x1, g, eps = _args(name, name, (3, 24), 1)
    x2 = R.cast(RNG.standard_normal((3, 24)), name)
    ref = ops.AddRmsNorm(x1, x2, g, eps, _z((3, 24), name), _z((3, 1), "float32"), _z((3, 24), name))
    t1, t2 = pyaclnn.from_numpy(x1.copy()), pyaclnn.from_numpy(x2.copy())
    r = ops.InplaceAddRmsNorm(t1, t2, g, eps, _z((3, 1), "float32"))
    r = r[-1] if isinstance(r, tuple) else r
    assert _bits_equal(t1.numpy(), ref[0]) and _bits_equal(t2.numpy(), ref[2]) and _bits_equal(np.asarray(r), ref[1])


GRAD_ROWS = [("float16", "float32"), ("bfloat16", "float32"), ("float16", "float16"), ("float32", "float32"),
             ("bfloat16", "bfloat16")]


@pytest.mark.parametrize("xname,gname", GRAD_ROWS)
def test_rms_norm_grad_against_float64(xname, gname):
    # (the docs give x 2-8 dims; the tiling's MIN_DIM_X is 1: a 1-dim x is one row, followed)
    for shape, gnd in [((3, 16), 1), ((2, 3, 5), 2), ((5, 33), 1), ((12,), 1)]:
        x, g, eps = _args(xname, gname, shape, gnd)
        dy = R.cast(RNG.standard_normal(shape), xname)
        rstd = rms32(x, g, eps, xname)[1].reshape(_rstd_shape(shape, gnd))
        dx, dg = ops.RmsNormGrad(dy, x, rstd, g, _z(shape, xname), _z(g.shape, "float32"))
        dx64, dg64 = rms_grad64(dy, x, rstd, g)
        assert _ulps(dx, dx64, xname) <= 1 and _ulps(dg, dg64, "float32") <= 1, (xname, gname, shape)


def test_documented_examples():
    """The calls of the documentation's examples (docs/aclnnRmsNorm.md, aclnnAddRmsNorm.md, aclnnInplaceAddRmsNorm.md,
    aclnnGemmaRmsNorm.md: x [2, 16] = 0..7 four times, gamma the same, eps 1e-6; aclnnRmsNormGrad.md: dy = x =
    1..32 as [2, 1, 16], rstd [2] = 1, 2, gamma 1..16); they print no results: compared with the float64 definition."""
    x = np.tile(np.arange(8, dtype=F32), 4).reshape(2, 16)
    g = np.tile(np.arange(8, dtype=F32), 2)
    y, rstd = ops.RmsNorm(x, g, 1e-6, _z((2, 16), "float32"), _z((2, 1), "float32"))
    y64, r64 = rms64(x, g, 1e-6)
    assert _ulps(y, y64, "float32") <= 3 and _ulps(rstd, r64, "float32") <= 2
    assert _ulps(ops.GemmaRmsNorm(x, g, 1e-6, _z((2, 16), "float32"), _z((2, 1), "float32"))[0],
                 rms64(x, g, 1e-6, gemma=True)[0], "float32") <= 3
    ay, ar, ax = ops.AddRmsNorm(x, x, g, 1e-6, _z((2, 16), "float32"), _z((2, 1), "float32"), _z((2, 16), "float32"))
    assert _ulps(ay, rms64(2 * _f64(x), g, 1e-6)[0], "float32") <= 3 and np.array_equal(ax, 2 * x)
    t1, t2 = pyaclnn.from_numpy(x.copy()), pyaclnn.from_numpy(x.copy())
    ops.InplaceAddRmsNorm(t1, t2, g, 1e-6, _z((2, 1), "float32"))
    assert _bits_equal(t1.numpy(), ay) and _bits_equal(t2.numpy(), ax)
    d = np.arange(1, 33, dtype=F32).reshape(2, 1, 16)
    r, gg = F32([1, 2]), np.arange(1, 17, dtype=F32)
    dx, dg = ops.RmsNormGrad(d, d, r, gg, _z((2, 1, 16), "float32"), _z(16, "float32"))
    dx64, dg64 = rms_grad64(d, d, r, gg)
    assert _ulps(dx, dx64, "float32") <= 1 and _ulps(dg, dg64, "float32") <= 1


# ---- validation ----------------------------------------------------------------------------------------------

X = np.ones((2, 8), F32)
G = np.ones(8, F32)
Y, RS = np.zeros((2, 8), F32), np.zeros((2, 1), F32)
H = np.ones((2, 8), np.float16)

INVALID_CALLS = [   # operator, arguments, code, message text
    ("RmsNorm", (H, np.ones(8, np.float16), 1e-6, Y, RS), INVALID,
     "the dtype combination x FLOAT16, gamma FLOAT16, yOut FLOAT, rstdOut FLOAT is not supported"),
    ("RmsNorm", (X, G, 1e-6, Y, np.zeros((2, 1), np.float16)), INVALID, "rstdOut FLOAT16 is not supported"),
    ("RmsNorm", (X, np.ones(4, F32), 1e-6, Y, RS), TILING,
     "gamma and x [4] and [2, 8]: The shape of input gamma must be the same as the shape consisting of the last 1 axes"),
    ("RmsNorm", (X, np.ones((1, 2, 8), F32), 1e-6, Y, RS), TILING,
     "gamma and x dims 3 and 2: The shape dim of input gamma must be less than or equal to that of input x"),
    ("RmsNorm", (X, G, 1e-6, np.zeros((2, 4), F32), RS), TILING, "y and x [2, 4] and [2, 8]: The shapes of output y and"),
    ("RmsNorm", (X, G, 1e-6, np.zeros((2, 0), F32), RS), TILING, "y [2, 0]: Output y cannot be an empty tensor"),
    ("RmsNorm", (np.zeros((2, 0), F32), np.zeros(0, F32), 1e-6, np.zeros((2, 0), F32), RS), TILING,
     "gamma [0]: Input gamma cannot be an empty tensor"),
    ("RmsNorm", (X, G, 1e-6, Y, np.zeros((1, 2, 1), F32)), TILING, "rstd [1, 2, 1]: The 1th axis of output rstd must be 1"),
    ("RmsNorm", (X, G, 1e-6, Y, np.zeros((1, 1), F32)), TILING, "rstd [1, 1] has 1 elements, one per row (2) needed"),
    ("RmsNorm", (X, G, 1e-6, Y, np.zeros((3, 1), F32)), TILING,
     "rstd [3, 1]: The 0th axis of output rstd must be 1 or equal to the 0th axis of input x"),
    ("RmsNorm", (X, G, -1.0, Y, RS), TILING, "Epsilon less than zero"),
    ("RmsNormGrad", (np.ones((1,) * 9, F32),) * 2 + (np.ones(1, F32), np.ones(1, F32), np.ones((1,) * 9, F32),
                     np.zeros(1, F32)), TILING, "x has 9 dims, it must be in the range of [1, 8]"),
    ("RmsNormGrad", (X, X, np.ones((3, 1), F32), G, Y, np.zeros(8, F32)), TILING,
     "rstd and x [3, 1] and [2, 8]: The shape of input rstd must be the same as the shape consisting of the first 1"),
    ("RmsNormGrad", (X, X, RS, G, Y, np.zeros(4, F32)), TILING, "dgamma and dy [4] and [2, 8]: The shape of output dgamma"),
    ("RmsNormGrad", (X, X, RS, np.ones(8, np.float16), Y, np.zeros(8, F32)), INVALID, "dtype combination"),
    ("RmsNormGrad", (Y[:, :4], X, RS, G, Y, np.zeros(8, F32)), TILING, "x and dy [2, 8] and [2, 4]: The shapes of input x"),
    ("AddRmsNorm", (X, X, G, 1e-6, Y, None, None), INVALID,
     "Tensor x1 not implemented for FLOAT, should be in dtype support list [FLOAT16, BFLOAT16]."),
    ("AddRmsNorm", (X, H, G, 1e-6, Y, RS, Y), INVALID,
     "Expected both tensors to have same dtype, but found x1 FLOAT and x2 FLOAT16."),
    ("AddRmsNorm", (X, X.astype(np.float64), G, 1e-6, Y, RS, Y), INVALID, "Tensor x2 not implemented for DOUBLE"),
    ("AddRmsNorm", (X, X, np.ones(8, np.int32), 1e-6, Y, RS, Y), INVALID, "Tensor gamma not implemented for INT32"),
    ("AddRmsNorm", (X, X, G, 1e-6, Y, np.zeros((2, 1), np.float16), Y), INVALID, "Tensor rstdOut not implemented"),
    ("AddRmsNorm", (X, np.ones((8, 2), F32), G, 1e-6, Y, RS, Y), INVALID,
     "Expected tensor for x1 to have same size as tensor for x2"),
    ("AddRmsNorm", (H, H, np.ones((2, 2, 8), np.float16), 1e-6, H, None, H), INVALID,
     "The gamma tensor cannot be larger than 2 dimensions."),
]


@pytest.mark.parametrize("op,args,code,text", INVALID_CALLS)
def test_invalid_arguments(op, args, code, text):
    err = pytest.raises(AclError, getattr(ops, op), *args).value
    assert (err.code, text in str(err)) == (code, True), str(err)


def test_add_rms_norm_tiling_rejections_surface_at_the_run():
    for args in [(X, X, np.ones(4, F32), 1e-6, Y, RS, Y), (X, X, G, -1.0, Y, RS, Y)]:
        err = pytest.raises(AclError, ops.AddRmsNorm, *args).value
        assert err.code == INNER_NULLPTR and "AddRmsNorm tiling failed" in str(err), str(err)
    e = _z((0, 8), "float32")   # the op_api returns at once on an empty x1 or gamma: nothing written
    assert ops.AddRmsNorm(e, e, G, 1e-6, e, _z((0, 1), "float32"), e)[0].shape == (0, 8)
    e3, r = _z((2, 0, 2), "float32"), np.full((2, 1, 2), 7, F32)
    assert (ops.AddRmsNorm(e3, e3, e3, 1e-6, e3, r, e3)[1] == 7).all()


# operator: (parameters before workspaceSize, status of all-NULL arguments)
NULL_STATUS = {"RmsNorm": 5, "RmsNormGrad": 6, "AddRmsNorm": 7, "InplaceAddRmsNorm": 5, "GemmaRmsNorm": 5}


@pytest.mark.parametrize("op", list(NULL_STATUS))
def test_null_arguments(op):
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", NULL_STATUS[op]) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


def test_add_rms_norm_needs_xout_with_rstd():
    err = pytest.raises(AclError, ops.AddRmsNorm, X, X, G, 1e-6, Y, RS, None).value
    assert err.code == NULLPTR and "xOut is NULL" in str(err)


# ---- Atlas A2: the same checks in one subprocess ----------------------------------------------------------------

A2_CALLS = """
for name in ["float32", "float16", "bfloat16"]:
    T.test_add_rms_norm_modes_against_float64(name)
    T.test_inplace_add_rms_norm_writes_y_and_x_into_the_inputs(name)
for xn, gn in T.RMS_ROWS:
    T.test_rms_norm_against_float64_and_the_kernel_steps(xn, gn, False)
    T.test_rms_norm_grad_against_float64(xn, gn)
T.test_rms_norm_against_float64_and_the_kernel_steps("bfloat16", "bfloat16", True)
T.test_documented_examples()
"""


def test_atlas_a2_dtype_rows_and_kernel_steps():
    F.run_on_a2("test_rms_norm", A2_CALLS)


# ---- torch_npu ---------------------------------------------------------------------------------------------------

TORCH_BODY = """
torch.manual_seed(0)
for dt in [torch.float32, torch.float16, torch.bfloat16]:
    x = torch.randn(2, 3, 16).to(dt); g = (torch.rand(16) + 0.5).to(dt); dy = torch.randn(2, 3, 16).to(dt)
    xn = x.npu().requires_grad_(True); gn = g.npu().requires_grad_(True)
    y, rstd = torch_npu.npu_rms_norm(xn, gn, 1e-6)
    y.backward(dy.npu())
    OUT["rms " + str(dt)] = [enc(to_np(v)) for v in (x, g, dy, y, rstd, xn.grad, gn.grad)]
    x2 = torch.randn(2, 3, 16).to(dt)
    a = torch_npu.npu_add_rms_norm(x.npu(), x2.npu(), g.npu(), 1e-6)
    OUT["add " + str(dt)] = [enc(to_np(v)) for v in (x2,) + tuple(a)]
    a1, a2 = x.npu().clone(), x2.npu().clone()
    r2 = torch_npu.npu_add_rms_norm_v2(a1, a2, g.npu(), 1e-6)
    OUT["v2 " + str(dt)] = [enc(to_np(v)) for v in (r2, a1, a2)]
    gy, gr = torch_npu.npu_gemma_rms_norm(x.npu(), g.npu(), 1e-6)
    OUT["gemma " + str(dt)] = [enc(to_np(v)) for v in (gy, gr)]
"""


def test_torch_npu_reaches_the_operators():
    out = F.torch_npu_arrays(TORCH_BODY)
    for dt, name in [("torch.float32", "float32"), ("torch.float16", "float16"), ("torch.bfloat16", "bfloat16")]:
        x, g, dy, y, rstd, dx, dg = out["rms " + dt]
        y64, r64 = rms64(x, g, 1e-6)
        _check_y(y, y64, name)
        assert _bits_equal(y, rms32(x, g, 1e-6, name)[0]) and _bits_equal(rstd.reshape(-1, 1), rms32(x, g, 1e-6, name)[1])
        assert _ulps(rstd.reshape(-1, 1), r64, "float32") <= 2
        dx64, dg64 = rms_grad64(dy, x, rstd, g)
        assert _ulps(dx, dx64, name) <= 1
        # torch_npu's backward returns dgamma in FLOAT and casts it to gamma's dtype
        assert _ulps(dg, dg64, name) <= 1, (name, dg, dg64)
        x2, ay, ar, ax = out["add " + dt]
        assert _bits_equal(ax, R.cast(_f64(x) + _f64(x2), name))
        _check_y(ay, rms64(_f64(x) + _f64(x2), g, 1e-6)[0], name)   # Ascend 950: the fp32 sum x1 + x2
        assert _bits_equal(ay, add_rms32_950(x.reshape(6, 16), x2.reshape(6, 16), g, 1e-6, name)[0].reshape(ay.shape))
        r2, a1, a2 = out["v2 " + dt]
        assert _bits_equal(a1, ay) and _bits_equal(a2, ax) and _bits_equal(r2, ar)
        gy, gr = out["gemma " + dt]
        _check_y(gy, rms64(x, g, 1e-6, gemma=True)[0], name)
        assert _bits_equal(gy, rms32(x, g, 1e-6, name, gemma=True)[0])

