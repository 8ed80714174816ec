"""SwiGlu and its backward (native_stubs/src/ops/activation/swi_glu.toml): aclnnSwiGlu, aclnnSwiGluGrad (hicann/ops-nn
activation/swi_glu, swi_glu_grad). Data-driven: an operator is a row of OPS (its float64 definition from the vendor's
documented formula, its float32 models of the vendor kernels' steps per SoC, its call). Class b: bit-exact against
the fp32 models (Exp: libm in double rounded to fp32, as the emulator's vecmath.h), within 3 ulp of float64 for SwiGlu (fp16 /
bf16: 1 ulp of the float64 value rounded to the dtype); every dtype of the definitions (Ascend 950 in-process, Atlas
A2 in one subprocess running the same checks), dims, strided views, the vendor's validation codes, and one torch_npu
child (npu_swiglu and its backward)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided
import _fused_ops as F

TILING = 561002
F32 = np.float32
RNG = np.random.default_rng(1231)
A2 = F.ON_A2
DTYPES = F.DTYPES


_f64, _z, _bits_equal, _ulp, _ulps = F.f64, F.zeros, F.bits_equal, F.ulp, F.ulps


def _exp32(v):
    with np.errstate(over="ignore"):
        return np.exp(_f64(v)).astype(F32)


def _halves(x, dim):
    """A and B as the tiling takes them: rows (dims before dim) x the tail from dim, split in the middle."""
    x = np.asarray(x)
    d = dim % x.ndim
    t = x.reshape(int(np.prod(x.shape[:d])), -1)
    h = t.shape[1] // 2
    return t[:, :h], t[:, h:]


def _out_shape(shape, dim):
    s = list(shape)
    s[dim % len(s)] //= 2
    return tuple(s)


# ---- float64 definitions ----------------------------------------------------------------------------------------

def swiglu64(x, dim):
    a, b = map(_f64, _halves(x, dim))
    return a / (1 + np.exp(-a)) * b


def swiglu_grad64(g, x, dim, magnitude=False):
    """The gradient; with `magnitude`, the same sums over |terms| (the scale of the fp32 steps' rounding errors)."""
    a, b = map(_f64, _halves(x, dim))
    g = _f64(g).reshape(a.shape)
    sig = 1 / (1 + np.exp(-a))
    if magnitude:
        a, b, g = np.abs(a), np.abs(b), np.abs(g)
    return np.concatenate([g * (sig + sig * (1 - sig) * a) * b, g * sig * a], axis=1)


# ---- float32 models of the kernels' steps -----------------------------------------------------------------------

def _sig32(a):
    return F32(1) / (_exp32(-a) + F32(1))


def swiglu32(x, dim, name):
    a, b = (v.astype(F32) for v in _halves(x, dim))
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "float32":
            return (_sig32(a) * a) * b
        return (a / (_exp32(-a) + F32(1))) * b


def swiglu_grad32(g, x, dim, name, soc950):
    a, b = (v.astype(F32) for v in _halves(x, dim))
    g = np.asarray(g).astype(F32).reshape(a.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        sig = _sig32(a)
        if soc950:
            t = ((F32(1) - sig) * a) + F32(1)
            da, db = (t * (g * sig)) * b, (sig * g) * a
        else:
            db = (sig * a) * g
            m = ((sig * (F32(1) - sig)) * a) + sig
            da = (m * b) * g if name == "float32" else (m * g) * b
    return np.concatenate([da, db], axis=1)


CASES = [((4, 16), -1), ((3, 8, 6), 1), ((2, 6, 5), 1), ((10,), 0), ((2, 3, 4, 10), -1)]


def _fwd(x, dim, name):
    return ops.SwiGlu(x, dim, _z(_out_shape(x.shape, dim), name))


def _bwd(g, x, dim, name):
    return ops.SwiGluGrad(g, x, dim, _z(x.shape, name))


OPS = {  # operator: call, fp32 model, float64 definition, result as the models' rows x cols
    "SwiGlu": dict(call=lambda g, x, dim, name: _fwd(x, dim, name),
                   m32=lambda g, x, dim, name: swiglu32(x, dim, name), f64=lambda g, x, dim: swiglu64(x, dim),
                   rows=lambda out, x, dim: np.asarray(out).reshape(_halves(x, dim)[0].shape)),
    "SwiGluGrad": dict(call=_bwd, m32=lambda g, x, dim, name: swiglu_grad32(g, x, dim, name, not A2),
                       f64=swiglu_grad64, rows=lambda out, x, dim: np.asarray(out).reshape(_halves(x, dim)[0].shape[0], -1)),
}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("name", DTYPES)
def test_kernel_steps_and_float64(op, name):
    o = OPS[op]
    for shape, dim in CASES:
        x = R.cast(RNG.standard_normal(shape) * 3, name)
        g = R.cast(RNG.standard_normal(_out_shape(shape, dim)), name)
        got = o["rows"](o["call"](g, x, dim, name), x, dim)
        assert _bits_equal(got, R.cast(o["m32"](g, x, dim, name), name)), (op, name, shape, dim)
        if op == "SwiGlu":
            assert _ulps(got, o["f64"](g, x, dim), name) <= (3 if name == "float32" else 1), (op, name, shape)
        else:   # the sum sig + sig (1 - sig) A may cancel: 1 ulp of the dtype plus 8 fp32 ulps of the terms' scale
            err = np.abs(_f64(got) - R.cast(o["f64"](g, x, dim), name))
            assert np.all(err <= _ulp(o["f64"](g, x, dim), name) +
                          8 * 2.0 ** -24 * swiglu_grad64(g, x, dim, True)), (op, name, shape)


def test_odd_dim_splits_the_flattened_tail_strided_and_extremes():
    x = R.cast(RNG.standard_normal((2, 3, 4)), "float32")   # dim 1 of size 3: the tail 3 * 4 split at 6
    got = ops.SwiGlu(x, 1, _z((2, 6), "float32"))
    assert _bits_equal(got.reshape(2, 6), swiglu32(x, 1, "float32"))
    y = R.cast(RNG.standard_normal((6, 8)), "float16")
    got = ops.SwiGlu(strided(y, transpose=True), -1, _z((6, 4), "float16"))
    assert _bits_equal(got, R.cast(swiglu32(y, -1, "float16"), "float16"))
    e = F32([[-100, 100, np.inf, -np.inf, np.nan, 1, 1, 1, 1, 1]])
    got = ops.SwiGlu(e, -1, _z((1, 5), "float32"))
    assert np.array_equal(got, swiglu32(e, -1, "float32"), equal_nan=True) and got[0, 1] == 100
    assert ops.SwiGlu(_z((0, 4), "float32"), -1, _z((0, 2), "float32")).shape == (0, 2)


def test_documented_examples():
    """docs/aclnnSwiGlu.md: x [2, 32] = 0..63, dim -1; aclnnSwiGluGrad.md: yGrad [2, 16] = -2..29, x [2, 32] = -2..61
    (no results printed): the fp32 steps and float64."""
    x = np.arange(64, dtype=F32).reshape(2, 32)
    y = ops.SwiGlu(x, -1, _z((2, 16), "float32"))
    assert _bits_equal(y, swiglu32(x, -1, "float32")) and _ulps(y, swiglu64(x, -1), "float32") <= 3
    g, x = np.arange(-2, 30, dtype=F32).reshape(2, 16), np.arange(-2, 62, dtype=F32).reshape(2, 32)
    dx = ops.SwiGluGrad(g, x, -1, _z((2, 32), "float32"))
    assert _bits_equal(dx, swiglu_grad32(g, x, -1, "float32", not A2))


X = np.ones((2, 8), F32)
INVALID_CALLS = [
    ("SwiGlu", (X, -1, np.zeros((2, 4), np.float16)), INVALID,
     "the dtype combination x FLOAT, out FLOAT16 is not supported"),
    ("SwiGlu", (X.astype(np.float64), -1, np.zeros((2, 4))), INVALID, "x DOUBLE"),
    ("SwiGlu", (X, 2, np.zeros((2, 4), F32)), TILING, "dim 2: The value of attribute dim depends on the number"),
    ("SwiGlu", (X, -3, np.zeros((2, 4), F32)), TILING, "dim -3"),
    ("SwiGlu", (np.ones((3, 5), F32), -1, np.zeros((3, 2), F32)), TILING,
     "The split axis of input x must be an even number, where split axis is the 1th axis of input x"),
    ("SwiGlu", (X, -1, np.zeros((2, 8), F32)), TILING, "y [2, 8] has 16 elements, 8 expected"),
    ("SwiGlu", (np.zeros((0, 8), F32), -1, np.zeros((2, 4), F32)), TILING, "Output y must be an empty tensor"),
    ("SwiGluGrad", (np.zeros((2, 4), F32), X, -1, np.zeros((2, 8), np.float16)), INVALID, "dtype combination"),
    ("SwiGluGrad", (np.zeros((2, 3), F32), X, -1, np.zeros((2, 8), F32)), TILING, "y_grad [2, 3] has 6 elements, 8 expected"),
    ("SwiGluGrad", (np.zeros((2, 4), F32), X, -1, np.zeros((2, 4), F32)), TILING, "x_grad [2, 4] has 8 elements, 16"),
]


@pytest.mark.parametrize("op,args,code,text", INVALID_CALLS)
def test_invalid_arguments(op, args, code, text):
    err = pytest.raises(AclError, getattr(ops, op), *args).value
    assert (err.code, text in str(err)) == (code, True), str(err)


@pytest.mark.parametrize("op,n", [("SwiGlu", 3), ("SwiGluGrad", 4)])
def test_null_arguments(op, n):
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", n) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


TORCH_BODY = """
torch.manual_seed(0)
for dt in [torch.float32, torch.float16, torch.bfloat16]:
    for shape, dim in [((4, 16), -1), ((3, 8, 6), 1)]:
        x = torch.randn(*shape).to(dt); xn = x.npu().requires_grad_(True)
        y = torch_npu.npu_swiglu(xn, dim)
        g = torch.randn(*y.shape).to(dt)
        y.backward(g.npu())
        OUT[f"{dt} {shape} {dim}"] = [enc(to_np(v)) for v in (x, g, y, xn.grad)]
"""


A2_CALLS = """
for op in T.OPS:
    for name in T.DTYPES:
        T.test_kernel_steps_and_float64(op, name)
T.test_odd_dim_splits_the_flattened_tail_strided_and_extremes()
T.test_documented_examples()
"""


def test_atlas_a2_kernel_steps():
    F.run_on_a2("test_swi_glu", A2_CALLS)


def test_torch_npu_reaches_the_operators():
    out = F.torch_npu_arrays(TORCH_BODY)
    assert len(out) == 6
    for key, (x, g, y, dx) in out.items():
        name, dim = F.TORCH_NAMES[key.split()[0]], int(key.split()[-1])
        assert _bits_equal(y.reshape(_halves(x, dim)[0].shape), R.cast(swiglu32(x, dim, name), name)), key
        want = R.cast(swiglu_grad32(g, x, dim, name, True), name)
        assert _bits_equal(dx.reshape(want.shape), want), key
        assert _ulps(y.reshape(-1), swiglu64(x, dim).reshape(-1), name) <= 3
