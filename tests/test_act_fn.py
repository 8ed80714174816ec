"""Activations defined by element functions (native_stubs/src/ops/activation/act_fn.toml): every dtype of the
vendor's lists (Ascend 950 here, Atlas A2 in a subprocess) against a NumPy reference written from the vendor's
kernel (bit for bit) or float64 (within the bound the fidelity note states), the in-place forms, strided views
with offsets, broadcasting (backwards), empty tensors, NaN/inf/-0.0, the validation codes, and torch_npu's
calls on the emulator against torch CPU (a call that succeeds there reached our operator: torch_npu refuses
"aclnnXxx ... not found" otherwise).

Adding an operator adds a row to ACTS (and its reference function)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _math_ops import A2, ALL, INVALID, NULLPTR, code, dec, enc, fp32_grid, names, same_bits, sample, torch_npu_run
from _op_helpers import strided
from _pointwise_calls import SOC950, TORCH_EVAL_BODY, assert_codes
from pyaclnn import ops
from reference import elementwise as R

RNG = np.random.default_rng(2032)
F = np.float32
FLOATS = ("float32", "float16", "bfloat16", "float64")


def dtype_name(a: np.ndarray) -> str:
    return "bfloat16" if a.dtype == R.BF16 else a.dtype.name


def scalar_as(v, name: str) -> np.ndarray:
    """A Python scalar converted to a dtype as the vendor's ConvertToTensor does (the NPU's Cast rules)."""
    src = np.array(v, np.int64 if isinstance(v, int) and not isinstance(v, bool) else np.float64)
    return R.cast(src, name)


def f32(v) -> F:
    """A scalar attribute as the kernels take it (aclScalar::ToFloat)."""
    return F(v)


def round_away(x32: np.ndarray, name: str) -> np.ndarray:
    """fp32 -> fp16/bf16 with CAST_ROUND: nearest, ties away from zero."""
    x32 = np.asarray(x32, F)
    r = R.cast(x32, name)                                     # ties to even
    bits = r.view(np.uint16).copy()
    up = (bits + 1).astype(np.uint16).view(r.dtype)           # the neighbour away from zero (same sign)
    with np.errstate(all="ignore"):
        d_r = np.abs(x32.astype(np.float64) - r.astype(np.float64))
        d_up = np.abs(up.astype(np.float64) - x32.astype(np.float64))
    tie = np.isfinite(r.astype(np.float64)) & (d_r == d_up) & (d_r > 0)
    return np.where(tie, up, r).astype(r.dtype)


def back(r32: np.ndarray, name: str, mode: str = "rint") -> np.ndarray:
    """A kernel's fp32 result in the compute dtype: fp32 as is, fp16/bf16 cast back RINT or CAST_ROUND."""
    r32 = np.asarray(r32, F)
    if name == "float32":
        return r32
    return round_away(r32, name) if mode == "round" else R.cast(r32, name)


def up(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(F)


# ---- references, written from the vendor's kernels -------------------------------------------------

@np.errstate(invalid="ignore")   # NaN inputs are part of the test data
def clamp_ref(x: np.ndarray, lo, hi) -> np.ndarray:
    """ClipByValueV2: Max(x, lo) then Min(., hi) in x's dtype; NaN in x or a bound gives NaN; ties keep x."""
    name = dtype_name(x)
    lo, hi = scalar_as(lo, name), scalar_as(hi, name)
    r = np.where(x < lo, lo, x)
    r = np.where(hi < r, hi, r).astype(x.dtype)
    if name in FLOATS:
        nan = np.isnan(x.astype(np.float64)) | np.isnan(float(lo)) | np.isnan(float(hi))
        r = np.where(nan, np.array(np.nan, x.dtype), r).astype(x.dtype)
    return r


def leaky_relu_ref(x, slope):
    name = dtype_name(x)
    if name == "float64":
        return np.where(x > 0, x, x * float(f32(slope)))
    v = up(x)
    with np.errstate(all="ignore"):
        return back(np.where(v > 0, v, v * f32(slope)), name)


def hardswish_ref(x):
    v = up(x)
    with np.errstate(all="ignore"):
        t = np.maximum(np.minimum(v + F(3), F(6)), F(0))
        return back(np.maximum(v, F(-3)) * t * F(1.0 / 6.0), dtype_name(x), "round")


def hardsigmoid_ref(x):
    name = dtype_name(x)
    if name == "int32":
        t = np.maximum(np.minimum(x.astype(F) * F(1 / 6) + F(0.5), F(1)), F(0))
        return np.trunc(t).astype(np.int32)
    t = up(x) * F(1 / 6) + F(0.5)
    if name == "float32":
        return np.maximum(np.minimum(t, F(1)), F(0))
    r = back(t, name, "round" if name == "bfloat16" else "rint")
    return np.maximum(np.minimum(r, np.array(1, r.dtype)), np.array(0, r.dtype)).astype(r.dtype)


def softshrink_ref(x, lambd):
    v, l = up(x), f32(lambd)
    r = np.where(v > l, v - l, F(0))
    return back(np.where(v < -l, v + l, r), dtype_name(x))


def hardshrink_ref(x, lambd):
    l = max(f32(lambd), F(0))
    return np.where(np.abs(up(x)) <= l, np.zeros((), x.dtype), x).astype(x.dtype)


@np.errstate(invalid="ignore")   # NaN inputs are part of the test data
def threshold_ref(x, threshold, value):
    name = dtype_name(x)
    t, v = scalar_as(threshold, name), scalar_as(value, name)
    return np.where(x <= t, v, x).astype(x.dtype)


def exp32(x):
    """The hardware Exp on fp32: libm in float64, rounded once."""
    with np.errstate(all="ignore"):
        return np.exp(np.asarray(x, F).astype(np.float64)).astype(F)


def ln32(x):
    """The hardware Ln on fp32: libm in float64, rounded once."""
    with np.errstate(all="ignore"):
        return np.log(np.asarray(x, F).astype(np.float64)).astype(F)


def exp64(x):
    """exp in float64 by the C library (the AI CPU kernels' Eigen exp of double is libm's)."""
    with np.errstate(all="ignore"):
        return np.vectorize(lambda v: math.inf if v > 709.78 else math.exp(v), otypes=[np.float64])(
            np.asarray(x, np.float64))


def aicpu_attr(v) -> float:
    """The AI CPU kernels' float attribute in double: std::stod(std::to_string(float))."""
    return float("%f" % float(f32(v)))


def elu_ref(x, alpha, scale, iscale):
    name = dtype_name(x)
    a, s, i = f32(alpha), f32(scale), f32(iscale)
    with np.errstate(all="ignore"):
        if not (np.isfinite(a) and np.isfinite(i)):       # the op_api's Threshold route, in fp32
            r = np.where(x.astype(F) <= 0, -a, x.astype(F)) * s
            return r.astype(np.float64) if name == "float64" else back(r, name)
        if name == "float64":
            eps = np.finfo(F).eps
            if abs(a - 1) < eps and abs(s - 1) < eps and abs(i - 1) < eps:
                return np.where(x >= 0, x, exp64(x) - 1.0)
            A, S, I = aicpu_attr(alpha), aicpu_attr(scale), aicpu_attr(iscale)
            if abs(s - 1) < eps and abs(i - 1) < eps:
                return np.where(x >= 0, x, A * (exp64(x) - 1.0))
            return np.where(x >= 0, x * S, A * S * (exp64(x * I) - 1.0))
        v = up(x)
        z = v * i
        t = (z * F(1 / 120) + F(1 / 24)) * z if name == "float32" else z * F(1 / 24)
        t = ((t + F(1 / 6)) * z + F(0.5)) * z
        poly = (t + F(1)) * z
        em1 = exp32(z) - F(1)
        neg = np.where(np.abs(z) < F(0.1), poly, em1) * a
        return back(np.where(v > 0, v, neg) * s, name)


def celu_ref(x, alpha):
    name = dtype_name(x)
    a = f32(alpha)
    inv = F(1) / a
    with np.errstate(all="ignore"):
        v = up(x)
        if name == "float32":
            v = v + F(0)
        u = v * inv
        e = exp32(u)
        naive = e - F(1)
        ln = ln32(e)
        kahan = np.where(ln == 0, u, u * (e - F(1)) / ln)
        r = np.maximum(v, F(0)) + np.minimum(np.where(np.abs(u) < F(0.5), kahan, naive) * a, F(0))
        return r + F(0) if name == "float32" else back(r, name, "round")


def softplus_ref(x, beta, threshold):
    name = dtype_name(x)
    b, th = f32(beta), f32(threshold)
    inv = F(np.inf) if abs(b) <= np.finfo(F).eps else F(1) / b
    with np.errstate(all="ignore"):
        v = up(x)
        t = v * b
        above = t > th
        e = exp32(np.where(above, F(0), t))
        u = e + F(1)
        l1p = np.where(u == 1, e, ln32(u) * (e / (u - F(1))))
        l1p = np.where(e + F(1) == np.inf, F(np.inf), l1p)
        return back(np.where(above, v, l1p * inv), name, "round")


def tanh_softplus32(v):
    with np.errstate(all="ignore"):
        a = exp32(v * F(-1)) * F(2) + F(1)
        b = a + exp32(v * F(-2)) * F(2)
        pos = a / b
        n = exp32(v * F(2)) + exp32(v) * F(2)      # Axpy: e^x * 2 is exact, so fused or not is the same
        neg = n / (n + F(2))
        return np.where(v < 0, neg, pos)


def mish_ref(x):
    v = up(x)
    with np.errstate(all="ignore"):
        return back(tanh_softplus32(v) * v, dtype_name(x))


def log_sigmoid_ref(x):
    v = up(x)
    with np.errstate(all="ignore"):
        e = exp32(np.abs(v) * F(-1))
        u = e + F(1)
        l1p = np.where(u != 1, ln32(u) * (e / (u - F(1))), e)
        return back(np.minimum(v, F(0)) - l1p, dtype_name(x))


def logit_ref(x, eps):
    v = x.astype(np.float64)
    if eps >= 0:
        v = np.where(v < eps, eps, np.where(v > 1 - eps, 1 - eps, v))
    with np.errstate(all="ignore"):
        return back(np.log(v / (1 - v)).astype(F), dtype_name(x))


GELU_K, GELU_C = math.sqrt(2 / math.pi), 0.044715


@np.errstate(invalid="ignore")   # NaN / inf inputs are part of the test data
def gelu_tanh64(x):
    """GeluV2's tanh form in float64 with the C library's tanh (gelu.c's arithmetic)."""
    return np.vectorize(lambda v: 0.5 * v * (1.0 + math.tanh(GELU_K * (v + GELU_C * v * v * v))),
                        otypes=[np.float64])(np.asarray(x, np.float64))


def gelu_ref(x):
    return back(gelu_tanh64(x).astype(F), dtype_name(x))


# ---- the operators ---------------------------------------------------------------------------------

@dataclass
class Act:
    ref: Callable                    # reference(x, *attrs) -> result in self's dtype (bit for bit)
    dtypes_950: list[str]            # the vendor's support list of self (Ascend 950)
    dtypes_a2: list[str]             # ... on Atlas A2
    attrs: tuple = ()                # the scalar arguments after the tensors (Python values)
    inplace: bool = False            # has aclnnInplace<name>(selfRef, *attrs)
    bad_attrs: list = field(default_factory=list)   # attribute tuples that phase 1 refuses (161002)
    scale: float = 4.0               # input samples: normal * scale
    rank_checked: bool = True        # more than 8 dimensions are refused
    out_f16: int = 0                 # the code of an FLOAT16 out for an FLOAT self (a different dtype)
    out_i32: int | dict = INVALID    # ... of an INT32 out (per SoC when a dict)
    by_value: bool = False           # the attributes are doubles by value (Logit's eps), not aclScalars
    f64: Callable | None = None      # the float64 function (tolerance-class and transcendental operators)
    ulp: tuple = (0, 0)              # max ulp vs f64 rounded to the dtype: (fp32, fp16/bf16), measured
    domain: tuple | None = None      # where the float64 comparison samples (lo, hi)
    tiny: float | None = None        # results below this magnitude are left out of the ulp figure (default: the
                                     # dtype's smallest normal)


HARDTANH = names("FLOAT16 FLOAT INT32 INT64 INT16 INT8 UINT8 DOUBLE BF16")
LEAKY = names("FLOAT FLOAT16 DOUBLE BF16")
F3 = names("FLOAT FLOAT16 BF16")
THRESH = names("FLOAT INT32 FLOAT16 INT8 UINT8 INT16 INT64 BF16")

ACTS = {
    "Hardtanh": Act(clamp_ref, HARDTANH, HARDTANH, attrs=(-1.5, 2.25), inplace=True, bad_attrs=[(2.0, 1.0), (3, -3)],
                    out_f16=INVALID),
    "LeakyRelu": Act(leaky_relu_ref, LEAKY, LEAKY, attrs=(0.1,), inplace=True),
    "Hardswish": Act(hardswish_ref, F3, F3, inplace=True, rank_checked=False),
    "Hardsigmoid": Act(hardsigmoid_ref, names("FLOAT FLOAT16 INT32 BF16"), names("FLOAT FLOAT16 INT32 BF16"),
                       inplace=True, out_f16=INVALID),
    "Softshrink": Act(softshrink_ref, F3, F3, attrs=(0.5,), bad_attrs=[(-0.25,)]),
    "Hardshrink": Act(hardshrink_ref, F3, F3, attrs=(0.5,)),
    "Threshold": Act(threshold_ref, THRESH, THRESH, attrs=(0.25, -2.0), inplace=True,
                     out_i32={SOC950: 0, A2: INVALID}),
    "Elu": Act(elu_ref, names("FLOAT FLOAT16 DOUBLE BF16"), names("FLOAT FLOAT16 DOUBLE BF16"), attrs=(1.5, 1.25, 0.75),
               inplace=True, f64=lambda x: 1.25 * np.where(x > 0, x, 1.5 * np.expm1(0.75 * x)), ulp=(5, 1)),
    "Celu": Act(celu_ref, F3, F3, attrs=(1.5,), inplace=True, bad_attrs=[(0.0,)],
                f64=lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * np.expm1(x / 1.5)), ulp=(3, 1)),
    "Softplus": Act(softplus_ref, F3, F3, attrs=(2.0, 10.0),
                    f64=lambda x: np.where(2 * x > 10, x, np.log1p(np.exp(2 * x)) / 2), ulp=(3, 0)),
    "Mish": Act(mish_ref, F3, F3, inplace=True, out_f16=INVALID,
                f64=lambda x: x * np.tanh(np.log1p(np.exp(x))), ulp=(4, 1), tiny=1e-30),
    "LogSigmoid": Act(log_sigmoid_ref, F3, F3, rank_checked=False, out_f16=INVALID,
                      f64=lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), ulp=(3, 0)),
    "Logit": Act(logit_ref, names("BF16 FLOAT16 FLOAT"), names("BF16 FLOAT16 FLOAT"), attrs=(1e-3,), out_f16=INVALID,
                 by_value=True,
                 scale=0.5, f64=lambda x: np.log(np.clip(x, 1e-3, 1 - 1e-3) / (1 - np.clip(x, 1e-3, 1 - 1e-3))),
                 ulp=(0, 0), domain=(0.0, 1.0)),
    "Gelu": Act(gelu_ref, F3, F3, out_f16=INVALID, f64=gelu_tanh64, ulp=(0, 1)),
}


def call(op: str, xs, attrs, out: str | None = None):
    out = out or dtype_name(xs[0])
    shape = np.broadcast_shapes(*[np.shape(a) for a in xs])
    return getattr(ops, op)(*xs, *attrs, np.zeros(shape, R.np_dtype(out)))


def inputs(op: str, name: str, shape=(7, 19)) -> np.ndarray:
    return sample(name, shape, RNG, scale=ACTS[op].scale if op in ACTS else 4.0)


def attrs_for(a: Act, name: str) -> tuple:
    """The row's attributes, as integers for an integral self (whose lists take integral scalars)."""
    return a.attrs if name in FLOATS else tuple(int(v) if isinstance(v, float) else v for v in a.attrs)


def check(got, want, name: str):
    """Bit for bit, but DOUBLE results within 1 ulp: the C library's exp (the vendor's AI CPU kernels) and
    NumPy's may differ in the last bit."""
    if name == "float64":
        assert R.ulp_distance(got, want, name).max() <= 1
    else:
        same_bits(got, want)


CASES = [(op, d) for op, a in ACTS.items() for d in a.dtypes_950]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_bit_exact(op, name):
    a = ACTS[op]
    x = inputs(op, name)
    attrs = attrs_for(a, name)
    check(call(op, [x], attrs), a.ref(x, *attrs), name)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_fp16_bf16_every_value():
    # every fp16 / bf16 value through the kernels' fp32 steps and their closing casts (RINT or CAST_ROUND)
    for name in ("float16", "bfloat16"):
        bits = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
        x = bits.view(R.np_dtype(name))
        for op, a in ACTS.items():
            if name in a.dtypes_950:
                same_bits(call(op, [x], a.attrs), a.ref(x, *a.attrs))


def float64_grid(a: Act, name: str) -> np.ndarray:
    """fp32: every 97th value of [2^-24, 2^7) both signs (or of the operator's domain); fp16/bf16: every value."""
    if name == "float32":
        if a.domain is not None:
            return np.linspace(*a.domain, 200001, dtype=np.float64).astype(F)
        return fp32_grid(2.0 ** -24, 128.0)
    bits = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
    return bits.view(R.np_dtype(name))


def max_ulp_vs_float64(op: str, name: str) -> int:
    a = ACTS[op]
    x = float64_grid(a, name)
    got = call(op, [x], a.attrs)
    with np.errstate(all="ignore"):
        w64 = a.f64(x.astype(np.float64))
    want = R.cast(w64, name)
    # normal results only: below the dtype's smallest normal the fp32 steps underflow and ulps mean little
    tiny = a.tiny if a.tiny is not None else float(np.finfo(F if name != "float16" else np.float16).tiny)
    normal = ~(np.abs(w64) < tiny)
    return int(R.ulp_distance(got, want, name)[normal].max())


@pytest.mark.parametrize("op", [op for op, a in ACTS.items() if a.f64 is not None])
def test_within_bound_of_float64(op):
    # the bound each operator's fidelity note states, measured on these grids
    a = ACTS[op]
    assert max_ulp_vs_float64(op, "float32") <= a.ulp[0]
    for name in ("float16", "bfloat16"):
        if name in a.dtypes_950:
            assert max_ulp_vs_float64(op, name) <= a.ulp[1], name


def test_hardtanh_bounds_in_self_dtype_and_specials():
    x = F([-3, -1.5, -0.0, 0.0, 1, 2.5, np.nan, np.inf, -np.inf])
    same_bits(call("Hardtanh", [x], (-1.0, 2.0)), F([-1, -1, -0.0, 0, 1, 2, np.nan, 2, -1]))
    assert np.signbit(call("Hardtanh", [x], (0.0, 1.0))[2])               # ties keep self: -0.0
    assert np.isnan(call("Hardtanh", [x], (float("nan"), 1.0))).all()     # a NaN bound gives NaN (min <= max passes)
    # bounds converted to self's dtype: 1.7 -> int 1; an INT64 bound out of INT8's range wraps (-300 -> -44)
    same_bits(call("Hardtanh", [np.int8([-100, 5, 100])], (ops.Scalar(-300, "int64"), 1.7)), np.int8([-44, 1, 1]))
    i64 = np.int64([2**62 + 3, -(2**62), 5])                               # exact beyond 2^53
    same_bits(call("Hardtanh", [i64], (ops.Scalar(-(2**62) + 1, "int64"), ops.Scalar(2**62 + 1, "int64"))),
              np.int64([2**62 + 1, -(2**62) + 1, 5]))
    same_bits(call("Hardtanh", [np.float16([0.1, 70000 // 2])], (0.1, 1e5)), np.float16([0.1, 35000]))


def test_piecewise_specials():
    x = F([-4, -3, -1.5, -0.0, 0.0, 1, 2.5, 3, 5, np.nan, np.inf, -np.inf])
    same_bits(call("LeakyRelu", [x], (0.1,)), leaky_relu_ref(x, 0.1))
    assert np.signbit(call("LeakyRelu", [x], (0.1,))[3])                   # -0.0 * slope
    same_bits(call("Hardswish", [x], ()), hardswish_ref(x))
    assert np.isnan(call("Hardswish", [x], ())[9])
    same_bits(call("Softshrink", [x], (0.5,))[9:], F([0, np.inf, -np.inf]))   # NaN -> 0 (the kernel's compares)
    same_bits(call("Hardshrink", [x], (-1.0,)), hardshrink_ref(x, 0.0))   # a negative lambd counts as 0 (-0.0 -> +0)
    assert np.isnan(call("Threshold", [x], (1.0, -7.0))[9])                # NaN <= threshold is false: kept
    same_bits(call("Threshold", [np.int8([1, 5, -3])], (2, 100)), np.int8([100, 5, 100]))
    same_bits(call("Hardsigmoid", [np.int32([-5, 0, 2, 3, 4])], ()), np.int32([0, 0, 0, 1, 1]))
    # CAST_ROUND: a tie rounds away from zero (RINT would give the even neighbour)
    h = np.float16([2.0 ** -10 * 3])            # hardswish of a tiny positive value: x * 3 / 6 in fp32
    assert call("Hardswish", [h], ()).tobytes() == hardswish_ref(h).tobytes()


def test_gelu_is_gelu_v2_tanh():
    # the vendor's Gelu kernel is its GeluV2 tanh kernel: the same values, every fp16/bf16 input
    for name in ("float16", "bfloat16"):
        x = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16).view(R.np_dtype(name))
        same_bits(call("Gelu", [x], ()), ops.GeluV2(x, 1, np.zeros_like(x)))
    x = sample("float32", (50, 50), RNG)
    same_bits(call("Gelu", [x], ()), ops.GeluV2(x, 1, np.zeros_like(x)))


def test_transcendental_specials():
    x = F([-100, -20, -1, -0.0, 0.0, 1e-30, 0.5, 20, 100, np.nan, np.inf, -np.inf])
    # Elu: an inf/NaN alpha or inputScale takes the op_api's other route, scale * (x > 0 ? x : -alpha)
    same_bits(call("Elu", [x], (float("inf"), 2.0, 1.0)), elu_ref(x, float("inf"), 2.0, 1.0))
    assert call("Elu", [x], (float("inf"), 2.0, 1.0))[2] == -np.inf
    for op, a in ACTS.items():
        if a.f64 is not None and op != "Logit":
            same_bits(call(op, [x], a.attrs), a.ref(x, *a.attrs))
            assert np.isnan(call(op, [x], a.attrs)[9]), op
    # Softplus with beta 0: 1 / beta is inf (the tiling's SafeInvBeta): inf everywhere below the threshold
    same_bits(call("Softplus", [x], (0.0, 20.0)), softplus_ref(x, 0.0, 20.0))
    # Logit: no clamp for a negative eps (NaN outside [0, 1], -inf at 0, inf at 1); eps clamps otherwise
    p = F([-0.5, 0.0, 0.25, 1.0, 1.5, np.nan])
    got = call("Logit", [p], (-1.0,))
    assert np.isnan(got[[0, 4, 5]]).all() and got[1] == -np.inf and got[3] == np.inf
    same_bits(call("Logit", [p], (0.1,)), logit_ref(p, 0.1))
    # LogSigmoidForward: the buffer is neither checked nor written
    buf = np.full((12,), 7, F)
    out, buf_after = ops.LogSigmoidForward(x, np.zeros_like(x), buf)
    same_bits(out, log_sigmoid_ref(x))
    same_bits(buf_after, np.full((12,), 7, F))
    got = ops.LogSigmoidForward(x, np.zeros_like(x), None)
    same_bits(got[0] if isinstance(got, tuple) else got, log_sigmoid_ref(x))


@pytest.mark.parametrize("op", [op for op, a in ACTS.items() if a.inplace])
def test_in_place_strided_and_empty(op):
    a = ACTS[op]
    for name in a.dtypes_950:
        x = inputs(op, name, (5, 12))
        attrs = attrs_for(a, name)
        t = pyaclnn.from_numpy(x.copy())
        getattr(ops, "Inplace" + op)(t, *attrs)
        check(t.numpy(), a.ref(x, *attrs), name)
    x = inputs(op, "float32", (6, 9))
    same_bits(getattr(ops, op)(strided(x, transpose=True), *a.attrs, np.zeros((6, 9), F)), a.ref(x, *a.attrs))
    view = strided(x)
    getattr(ops, "Inplace" + op)(view, *a.attrs)
    same_bits(view.numpy(), a.ref(x, *a.attrs))
    empty = np.zeros((0, 3), F)
    assert call(op, [empty], a.attrs).shape == (0, 3)
    getattr(ops, "Inplace" + op)(pyaclnn.from_numpy(empty), *a.attrs)


@pytest.mark.parametrize("op", [op for op, a in ACTS.items() if not a.inplace])
def test_strided_empty_and_cast_out(op):
    a = ACTS[op]
    x = inputs(op, "float32", (6, 9))
    same_bits(getattr(ops, op)(strided(x, transpose=True), *a.attrs, np.zeros((6, 9), F)), a.ref(x, *a.attrs))
    assert call(op, [np.zeros((0, 3), F)], a.attrs).shape == (0, 3)
    x16 = inputs(op, "float16", (40,))
    if a.out_f16 == 0:   # computed in fp16, cast to the FLOAT out
        same_bits(call(op, [x16], a.attrs, "float32"), R.cast(a.ref(x16, *a.attrs), "float32"))


# ---- validation ------------------------------------------------------------------------------------

def calls_and_codes(soc: str) -> list[tuple]:
    """(operator, args, expected code): NULL operands, every dtype in and out of the lists, out's dtype and
    shape, 9 dimensions, refused attributes."""
    out = []
    t = lambda d, s=(2, 3): ("t", d, list(s))   # noqa: E731
    s = lambda v: ("s", v, "float64")            # noqa: E731
    for op, a in ACTS.items():
        ins = a.dtypes_950 if soc != A2 else a.dtypes_a2
        attrs = [("v", v) if a.by_value else s(v) for v in a.attrs]
        args = [t("float32")] + attrs + [t("float32")]
        for k in range(len(args)):
            if args[k][0] != "v":
                out.append((op, args[:k] + [("n",)] + args[k + 1:], NULLPTR))
        for d in ALL:
            out.append((op, [t(d)] + attrs + [t(d)], 0 if d in ins else INVALID))
        out.append((op, [t("float32")] + attrs + [t("float16")], a.out_f16))
        i32 = a.out_i32[soc] if isinstance(a.out_i32, dict) else a.out_i32
        out.append((op, [t("float32")] + attrs + [t("int32")], i32))
        out.append((op, [t("float32")] + attrs + [t("float32", (3, 2))], INVALID))
        out.append((op, [t("float32", [1] * 9)] + attrs + [t("float32", [1] * 9)], INVALID if a.rank_checked else 0))
        for bad in a.bad_attrs:
            out.append((op, [t("float32")] + [("s", v, "int64" if isinstance(v, int) else "float64") for v in bad]
                        + [t("float32")], INVALID))
        if a.inplace:
            out.append(("Inplace" + op, [("n",)] + attrs, NULLPTR))
            for d in ALL:
                out.append(("Inplace" + op, [t(d)] + attrs, 0 if d in ins else INVALID))
    return out


@pytest.mark.parametrize("soc", [SOC950, A2])
def test_validation_codes(soc):
    assert_codes(calls_and_codes(soc), soc)


# ---- torch_npu on the emulator -------------------------------------------------------------------

# (torch call, input dtypes, bound against torch CPU: 0 bit for bit, an int a max ulp distance, a float an absolute
# error (where the vendor's formula differs from torch's: Hardsigmoid's x/6 + 1/2 against (x + 3) / 6 cancels
# near x = -3))
TORCH_CASES = [
    ("lambda x: Fn.hardtanh(x, -1.5, 2.25)", ["float32"], 0),
    ("lambda x: Fn.hardtanh(x, -2, 3)", ["int32"], 0),
    ("lambda x: Fn.hardtanh_(x, -0.5, 0.5)", ["bfloat16"], 0),
    ("lambda x: Fn.leaky_relu(x, 0.2)", ["float32"], 0),
    ("lambda x: Fn.leaky_relu_(x, 0.01)", ["float16"], 0),
    ("lambda x: Fn.hardswish(x)", ["float32"], 1),
    ("lambda x: Fn.hardswish(x, inplace=True)", ["bfloat16"], 1),
    ("lambda x: Fn.hardsigmoid(x)", ["float32"], 2.0 ** -23),
    ("lambda x: Fn.hardsigmoid(x, inplace=True)", ["float16"], 2.0 ** -11),
    ("lambda x: Fn.softshrink(x, 0.5)", ["float32"], 0),
    ("lambda x: Fn.hardshrink(x, 0.5)", ["bfloat16"], 0),
    ("lambda x: Fn.threshold(x, 0.25, -2.0)", ["float32"], 0),
    ("lambda x: Fn.threshold(x, 1, 7, inplace=True)", ["int64"], 0),
    ("lambda x: Fn.elu(x, 1.5)", ["float32"], 8),
    ("lambda x: Fn.elu(x, inplace=True)", ["bfloat16"], 1),
    ("lambda x: Fn.celu(x, 0.7)", ["float32"], 8),
    ("lambda x: Fn.celu(x, 1.0, inplace=True)", ["float16"], 1),
    ("lambda x: Fn.softplus(x, 2.0, 10.0)", ["float32"], 8),
    ("lambda x: Fn.mish(x)", ["float32"], 8),
    ("lambda x: Fn.mish(x, inplace=True)", ["bfloat16"], 1),
    ("lambda x: Fn.logsigmoid(x)", ["float32"], 8),
    ("lambda x: torch.logit(x.sigmoid(), 1e-3)", ["float32"], 1e-4),   # torch clamps to fp32 1 - eps
]


def test_torch_npu_calls_match_torch_cpu():
    rng = np.random.default_rng(78)   # its own: the inputs do not depend on which tests ran before
    spec = {"cases": []}
    for k, (fn, dts, _) in enumerate(TORCH_CASES):
        spec["cases"].append({"id": str(k), "fn": fn,
                              "args": [enc(sample(d, (3, 17), rng, specials=False)) for d in dts]})
    res = torch_npu_run(TORCH_EVAL_BODY, spec)
    for k, (fn, dts, bound) in enumerate(TORCH_CASES):
        got, want = (dec(v) for v in res[str(k)])
        if bound == 0 or dts[0] not in FLOATS:
            same_bits(got, want)
        elif isinstance(bound, float):
            assert np.nanmax(np.abs(got.astype(np.float64) - want.astype(np.float64))) <= bound, fn
        else:
            assert R.ulp_distance(got, want, dts[0]).max() <= bound, fn
