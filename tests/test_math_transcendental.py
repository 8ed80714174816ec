"""The transcendental math family (native_stubs/src/ops/math/transcendental.toml): every operator against a
NumPy reference of its vendor kernel's steps (hicann/ops-math op_kernel/arch35: fp32 steps, the hardware's
Exp/Ln as float64 libm rounded to fp32) bit for bit, and against float64 within the bound its fidelity note
states; every dtype of the vendor's lists (Ascend 950 here, Atlas A2 in a subprocess), in-place forms,
strided views, empty tensors, NaN/inf/-0.0, the validation codes, and torch_npu's calls on the emulator
against torch CPU.

Adding an operator adds a row to UNARY or BINARY (and its reference function)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _math_ops import (A2, ALL, INVALID, NULLPTR, code, dec, enc, every_value, fp32_grid, libm, names, same_bits, sample,
                       status_codes, torch_npu_run, ulp)
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R
from reference.arnq_rstd import fma32

# (NumPy warns about NaN / inf / overflow in the references; they are the values under test)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(2026)
F = np.float32
FLOATS = ("float32", "float16", "bfloat16", "float64")


def exp32(x):
    """The hardware Exp on fp32: libm in float64, rounded once."""
    with np.errstate(all="ignore"):
        return np.exp(np.asarray(x, F).astype(np.float64)).astype(F)


# ---- references of the vendor kernels (fp32 steps), written from op_kernel/arch35 ---------------------

def tanh32(x):
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        x2 = x * x
        p = x2 * F(0.0157396831) + F(-0.0523039624)
        p = fma32(p, x2, F(0.133152977))
        p = fma32(p, x2, F(-0.333327681))
        p = fma32(p * x2, x, x)
        ax = np.abs(x)
        big = F(1) / (exp32(ax * F(2)) + F(1))
        big = big * F(-2) + F(1)
        big = np.where(ax >= F(9.010913848876953125), F(1), big)
        big = np.copysign(big, x)
    return np.where(ax >= F(0.6), big, p).astype(F)


def ln32(x):
    """The hardware Ln on fp32: libm in float64, rounded once."""
    with np.errstate(all="ignore"):
        return np.log(np.asarray(x, F).astype(np.float64)).astype(F)


def log_base32(inv_ln_base):
    def f(x):
        x = np.asarray(x, F)
        with np.errstate(all="ignore"):
            return (ln32(x * F(1) + F(0)) * inv_ln_base).astype(F)
    return f


def log1p32(x):
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        u = x + F(1)
        r = ln32(u) * (x / (u - F(1)))
    return np.where(u == F(1), x, np.where(u == F(np.inf), F(np.inf), r)).astype(F)


def exp2_32(x):
    with np.errstate(all="ignore"):
        return np.exp2(np.asarray(x, F).astype(np.float64)).astype(F)


def expm1_32(x):
    """math/expm1/op_kernel/arch35/expm1_dag.h, step by step (roundf: half away from zero)."""
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        direct = np.expm1(x.astype(np.float64)).astype(F)
        v = x * F(1.4426950216293335)
        rnd = (np.sign(v.astype(np.float64)) * np.floor(np.abs(v.astype(np.float64)) + 0.5)).astype(F)
        n = np.where(np.abs(x) < F(0.4099999964237213), F(0), rnd).astype(F)
        r = fma32(-n, F(0.693145751953125), x)
        r = fma32(-n, F(0.000001428606765330187), r)
        top = n == F(128)
        e = np.where(top, n - F(1), n).astype(F)
        q = fma32(np.full_like(r, F(0.0013879507314413786)), r, F(0.008382412604987621))
        q = fma32(q, r, F(0.04166783019900322))
        q = fma32(q, r, F(0.1666639745235443))
        q = fma32(q, r, F(0.4999999403953552))
        q = fma32(r * q, r, r)
        t = np.exp2(e.astype(np.float64)).astype(F)
        v = fma32(q, t, t - F(1))
        v = np.where(top, v + v, v)
        v = np.where(e > F(128), F(np.inf), v)
        v = np.where(e < F(-25), F(-1), v)
        v = np.where(x == F(0), x + x, v)
    return np.where(np.abs(x) > F(2), direct, v).astype(F)


def _vector(f):
    def g(x):
        x = np.asarray(x, np.float64)
        return np.array([f(v) for v in x.reshape(-1)], np.float64).reshape(x.shape)
    return g


erf64, erfc64 = _vector(math.erf), _vector(math.erfc)


def erfinv64(y):
    """erfinv in float64 from Python's math.erf / math.erfc (independent of the C library's): Newton's
    method from a rough start, converged to the last bit (checked by the residual)."""
    y = np.asarray(y, np.float64)
    a = np.abs(y)
    with np.errstate(all="ignore"):
        t = np.sqrt(-np.log((1 - a) * (1 + a)))
        x = np.where(a < 0.7, a * (0.886 + 0.2 * a * a), t - 0.3)
        for _ in range(8):
            resid = np.where(a < 0.5, erf64(x) - a, (1 - a) - erfc64(x))
            step = resid / (1.1283791670955126 * np.exp(-x * x))
            x = x - np.where(np.isfinite(step), step, 0)
    x = np.where(a == 1, np.inf, np.where(a > 1, np.nan, x))
    return np.where(y == 0, y, np.copysign(x, y))


def libm32(f):
    """An unpublished device function: the float64 function, rounded to fp32."""
    def g(x):
        with np.errstate(all="ignore"):
            return f(np.asarray(x, F).astype(np.float64)).astype(F)
    return g


def nan_min(a, b):
    return np.where(np.isnan(a) | np.isnan(b), F(np.nan), np.minimum(a, b)).astype(F)


def nan_max(a, b):
    return np.where(np.isnan(a) | np.isnan(b), F(np.nan), np.maximum(a, b)).astype(F)


def round_away(v):
    v64 = np.asarray(v, F).astype(np.float64)
    return np.copysign(np.floor(np.abs(v64) + 0.5), v64).astype(F)   # roundf (half away from zero, -0 kept)


def tan32(x):
    """math/tan/op_kernel/arch35/tan_simt.h."""
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        fn = round_away(x * F(0.6366197723675814))
        # x - fn * c in one C expression: contracted to a fused multiply-add by the device compiler
        t1 = fma32(-fn, np.full_like(fn, F(1.5)), x)
        t2 = fma32(-fn, np.full_like(fn, F(0.0703125)), t1)
        s3 = fn * F(4.83826794896619e-04)
        e3 = fma32(fn, np.full_like(fn, F(4.83826794896619e-04)), -s3)
        r = (t2 - s3) - e3
        r2 = r * r
        r3 = r2 * r
        q = np.full_like(r, F(4.3763746355e-03))
        for c in (8.9335614893e-05, 1.0835969442e-02, 2.1282127874e-02, 5.4059927854e-02, 1.3332663237e-01,
                  3.3333349758e-01):
            q = fma32(q, r2, F(c))
        t = fma32(r3, q, r)
        odd = (np.nan_to_num(fn).astype(np.int64) & 1) == 1
        res = np.where(odd, F(-1) / t, t)
    special = (np.abs(x) >= F(1e7)) | ~np.isfinite(x)
    return np.where(special, F(np.nan), res).astype(F)


def sinh32(x):
    """math/sinh/op_kernel/arch35/sinh_dag.h."""
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        ax, x2 = np.abs(x), x * x
        q = F(0.0000027557319) * x2 + F(0.00019841270)
        q = q * x2 + F(0.008333347)
        q = q * x2 + F(0.16666667)
        taylor = x + q * (x2 * x)
        e = exp32(ax + F(-0.6931471805599453))
        big = e - F(0.25) / e
        big = np.where(x < 0, -big, big)
        r = np.where(ax < 1, taylor, big)
    return np.where(ax >= 90, np.where(x < 0, F(-np.inf), F(np.inf)), r).astype(F)


def cosh32(x):
    """math/cosh/op_kernel/arch35/cosh.h."""
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        n = nan_min(np.trunc(ax * F(1.442695041)), F(126))
        r = fma32(n, np.full_like(n, F(-0.6931471825)), ax)
        r = fma32(n, np.full_like(n, F(1.9046542e-9)), r)
        nn = np.where(np.isnan(n), F(0), n)
        p2 = (((nn + F(12583037.0)).view(np.uint32).astype(np.uint64) << 23) & 0xFFFFFFFF).astype(np.uint32)
        q = exp32(r) * p2.view(F)
        y = q * F(2) + (F(1) / q) * F(0.125)
    return np.where(ax >= 90, F(np.inf), y).astype(F)


def asinh32(x):
    """math/asinh/op_kernel/arch35/asinh.h, the 19 steps."""
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        b = F(1) / ax
        r = np.sqrt(b * b + F(1))
        r = ax + ax / (r + b)
        u = r + F(1)
        s = nan_min(nan_max(u + F(-1), F(1e-45)), F(3.4028235e34))
        small = ax < F(10)
        res = (ln32(u) * np.where(small, r, F(1))) / np.where(small, s, F(1))
        inv = F(1) / ax
        corr = (ln32(ax) + F(0.6931472)) + inv * inv
        c = np.where(small, corr, F(3.4028235e34))
        c = np.where((ax >= F(268435456.0)) | np.isnan(ax), corr, c)
        out = nan_min(res, c)
        out = np.where(ax < F(0.00024414063), ax, out)
    return np.where(x >= 0, out, out * F(-1)).astype(F)


def acosh32(x):
    """math/acosh/op_kernel/arch35/acosh.h, the 13 steps."""
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        lg = ln32(x) + F(0.693147180559945286227)
        t = x + F(-1)
        d = t + np.sqrt(t * t + (t + t))
        u = d + F(1)
        res = ln32(u) * d
        s = nan_min(nan_max(u + F(-1), F(1e-45)), F(3.4028235e34))
        return nan_min(res / s, lg)


def atanh32(x):
    """math/atanh/op_kernel/arch35/atanh_simt.h (the compiler's contractions fused)."""
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        sq = x * x
        q = fma32(sq, np.full_like(sq, F(1) / F(7)), F(1) / F(5))
        q = fma32(sq, q, F(1) / F(3))
        small = fma32(x * sq, q, x)
        big = np.arctanh(x.astype(np.float64)).astype(F)
    return np.where((x > F(-0.125)) & (x < F(0.125)), small, big).astype(F)


def atan2_taylor32(x):
    x2 = x * x
    y = x2 * F(1 / 13) + F(-1 / 11)                                # Axpy: Muls then Add
    for c in (F(1) / F(9), F(-1) / F(7), F(1) / F(5), F(-1) / F(3), F(1)):
        y = fma32(y, x2, c)                                           # MulDstAdd
    return y * x


def atan2_lt1_32(x):
    t = np.abs((x + F(-0.4142135623730950)) / (x * F(0.4142135623730950) + F(1)))
    return nan_min(atan2_taylor32(t) + F(0.392699081698724155), atan2_taylor32(x))


def atan2_32(x1, x2):
    """math/atan2/op_kernel/arch35/atan2_dag.h, Atan2Compute."""
    x1, x2 = np.asarray(x1, F), np.asarray(x2, F)
    with np.errstate(all="ignore"):
        x = x1 / x2
        sign = np.where(np.signbit(x), F(-1), F(1))
        a = nan_min(np.abs(x), F(1e7))
        t = np.abs((a + F(-1)) / (a + F(1)))
        y = nan_min(atan2_lt1_32(t) + F(0.78539816339744831), atan2_lt1_32(a)) * sign
        pi, pi2 = F(3.14159265358979323846), F(1.5707963267948966192313216916398)
        y = y + np.where(x2 < 0, np.where(x1 >= 0, pi, -pi), F(0))
    n1, n2, z1, z2 = np.signbit(x1), np.signbit(x2), x1 == 0, x2 == 0
    for cond, v in [(n1 & z2 & n2, -pi2), (~n1 & z2 & n2, pi2), (z1 & n1 & n2, -pi), (z1 & n1 & ~n2, F(-0.0)),
                    (z1 & ~n1 & n2, pi), (z1 & ~n1 & ~n2, F(0)), (n1 & (x2 == np.inf), F(-0.0)),
                    ((x1 == np.inf) & (x2 == np.inf), F(0.78539816339744831)),
                    ((x1 == -np.inf) & (x2 == np.inf), F(-0.78539816339744831)),
                    ((x1 == np.inf) & (x2 == -np.inf), F(2.3561944901923448)),
                    ((x1 == -np.inf) & (x2 == -np.inf), F(-2.3561944901923448))]:
        y = np.where(cond, v, y)
    return y.astype(F)


def logaddexp_steps(a, b, base2, dtype):
    """math/log_add_exp/op_kernel/arch35/log_add_exp_dag.h: each step rounded to `dtype` (float16: the base-e
    template computes fp16 in fp16), else fp32."""
    def r(v):
        return R.cast(np.asarray(v, F), dtype).astype(F) if dtype == "float16" else np.asarray(v, F)
    a, b = np.asarray(a, F), np.asarray(b, F)
    with np.errstate(all="ignore"):
        mx, mn = nan_max(a, b), nan_min(a, b)
        d = np.where((mn == np.inf) | (mx == -np.inf), F(0), r(a - b))
        t = -np.abs(d)
        if base2:
            t = (t + F(0)) * F(np.log(2))
        e = r(exp32(t))
        u = r(e + F(1))
        lg = r(r(ln32(u)) * r(e / r(u + F(-1))))
        lg = np.where(u == F(1), e, lg)
        lg = np.where(u == F(np.inf), F(np.inf), lg)
        if base2:
            lg = lg * (F(1) / F(np.log(2)))
        return r(mx + lg)


def tanh_backward32(dy, y):
    dy, y = np.asarray(dy, F), np.asarray(y, F)
    with np.errstate(all="ignore"):
        return (fma32(-y, y, F(1)) * dy).astype(F)


def tanh_backward64(dy, y):
    return dy * (1.0 - y * y)


# ---- the operators ---------------------------------------------------------------------------------

@dataclass
class Unary:
    dtypes_950: list[str]            # the vendor's support list of self (Ascend 950)
    dtypes_a2: list[str]             # ... on Atlas A2
    inplace: list[str]               # selfRef's list of the in-place form ([] if none)
    ref32: Callable                  # the kernel's fp32 steps
    f64: Callable                    # the float64 function, for the error bound
    bound32: int                     # max ulp (fp32) vs float64 rounded to fp32, measured
    bound16: int = 0                 # max ulp (fp16, bf16) vs float64 rounded to the dtype
    ref64: Callable | None = None    # DOUBLE (the AI CPU kernels): float64 reference
    out_list: list[str] = field(default_factory=lambda: ["float32", "float16", "bfloat16"])
    domain: tuple[float, float] | None = None   # where to sample (None: normal * 4)
    int_ref: Callable | None = None  # integral / BOOL inputs (the AI CPU kernel): float64 values -> fp32
    cast_out: bool = True            # out may have another float dtype than self (Log10: no)
    grid: tuple[float, float, int] = (2.0 ** -24, 128.0, 397)  # the dense fp32 check: [lo, hi), every n-th
    torch_bound: int | None = None   # fp32 ulp vs torch CPU (None: bound32 + 1)
    range16: float | None = None     # the fp16/bf16 bound holds for |x| below this (None: every value)


# The trigonometric and hyperbolic lists (the 910B / 910_93 / RegBase ones) and every float out.
TRIG = names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 UINT8 BOOL BF16")
TRIG_OUT = names("FLOAT FLOAT16 DOUBLE BF16")
FL = ["float32", "float16", "bfloat16", "float64"]

UNARY = {
    "Tanh": Unary(names("FLOAT FLOAT16 BOOL UINT8 INT8 INT16 INT32 INT64 BF16"),
                  names("FLOAT FLOAT16 BOOL UINT8 INT8 INT16 INT32 INT64 BF16"),
                  names("FLOAT FLOAT16 BF16"), tanh32, np.tanh, bound32=2),
    "Log": Unary(names("FLOAT FLOAT16 BF16 DOUBLE BOOL INT64 INT32 INT16 INT8 UINT8"),
                 names("FLOAT FLOAT16 BF16 DOUBLE BOOL INT64 INT32 INT16 INT8 UINT8"),
                 names("FLOAT FLOAT16 BF16 DOUBLE"), ln32, np.log, bound32=0, ref64=libm("log", np.log),
                 out_list=["float32", "float16", "bfloat16", "float64"], domain=(0, 50)),
    "Log2": Unary(names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 DOUBLE BF16 BOOL"),
                  names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 DOUBLE BF16 BOOL"),
                  names("FLOAT FLOAT16 BF16 DOUBLE"), log_base32(F(1) / F(np.log(2))), np.log2, bound32=1,
                  ref64=libm("log2", np.log2), out_list=["float32", "float16", "bfloat16", "float64"], domain=(0, 50),
                  int_ref=lambda v: np.log2(v).astype(F)),
    "Log10": Unary(names("BOOL UINT8 INT8 INT16 INT32 INT64 BF16 FLOAT16 FLOAT DOUBLE"),
                   names("BOOL UINT8 INT8 INT16 INT32 INT64 BF16 FLOAT16 FLOAT DOUBLE"),
                   names("BF16 FLOAT16 FLOAT DOUBLE"), log_base32(F(1) / F(np.log(10))), np.log10, bound32=2, bound16=1,
                   ref64=libm("log10", np.log10), cast_out=False, out_list=FL, domain=(0, 50),
                   int_ref=lambda v: np.log10(v).astype(F)),
    "Log1p": Unary(names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 BOOL UINT8 BF16"),
                   names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 BOOL UINT8 BF16"),
                   names("FLOAT FLOAT16 DOUBLE BF16"), log1p32, np.log1p, bound32=2, ref64=libm("log1p", np.log1p),
                   out_list=["float32", "float16", "bfloat16", "float64"], domain=(-1.5, 30)),
    "Exp2": Unary(names("FLOAT INT32 INT64 FLOAT16 INT8 UINT8 DOUBLE INT16 BOOL BF16"),
                  names("FLOAT INT32 INT64 FLOAT16 INT8 UINT8 DOUBLE INT16 BOOL BF16"),
                  names("FLOAT FLOAT16 DOUBLE BF16"), exp2_32, np.exp2, bound32=0, ref64=np.exp2,
                  out_list=["float32", "float16", "bfloat16", "float64"], domain=(-30, 30)),
    "Expm1": Unary(names("FLOAT FLOAT16 INT64 BOOL BF16"), names("FLOAT FLOAT16 INT64 BOOL BF16"),
                   names("FLOAT FLOAT16 BF16"), expm1_32, np.expm1, bound32=1, domain=(-3, 3)),
    "Erf": Unary(names("DOUBLE FLOAT FLOAT16 BF16 BOOL INT64"), names("DOUBLE FLOAT FLOAT16 BF16 BOOL INT64"),
                 names("DOUBLE FLOAT FLOAT16 BF16"), lambda x: R.cast(erf64(x), "float32"), erf64, bound32=0,
                 ref64=erf64, out_list=["float32", "float16", "bfloat16", "float64"], grid=(2.0 ** -24, 8.0, 397)),
    "Erfc": Unary(names("DOUBLE FLOAT FLOAT16 BF16 BOOL INT64"), names("DOUBLE FLOAT FLOAT16 BF16 BOOL INT64"),
                  names("DOUBLE FLOAT FLOAT16 BF16"), lambda x: R.cast(erfc64(x), "float32"), erfc64, bound32=0,
                  ref64=erfc64, out_list=["float32", "float16", "bfloat16", "float64"], grid=(2.0 ** -24, 12.0, 397)),
    "Erfinv": Unary(names("FLOAT FLOAT16 BF16 BOOL INT8 INT16 INT32 INT64 UINT8"),
                    names("FLOAT FLOAT16 BF16 BOOL INT8 INT16 INT32 INT64 UINT8"),
                    names("FLOAT FLOAT16 BF16 BOOL INT8 INT16 INT32 INT64 UINT8"),
                    lambda x: R.cast(erfinv64(x), "float32"), erfinv64, bound32=0, domain=(-1, 1),
                    grid=(2.0 ** -24, 1.0, 3989)),
    "Tan": Unary(TRIG, TRIG, TRIG, tan32, np.tan, bound32=1, ref64=libm("tan", np.tan), out_list=FL,
                 domain=(-20, 20), grid=(2.0 ** -24, 0.785, 397), range16=8, torch_bound=1000),
    "Asin": Unary(TRIG, TRIG, TRIG_OUT, libm32(libm("asin", np.arcsin)), np.arcsin, bound32=0, ref64=libm("asin", np.arcsin),
                  out_list=FL, domain=(-1.2, 1.2), grid=(2.0 ** -24, 1.0, 397)),
    "Acos": Unary(TRIG, TRIG, TRIG, libm32(libm("acos", np.arccos)), np.arccos, bound32=0, ref64=libm("acos", np.arccos),
                  out_list=FL, domain=(-1.2, 1.2), grid=(2.0 ** -24, 1.0, 397)),
    "Atan": Unary(TRIG, TRIG, TRIG_OUT, libm32(libm("atan", np.arctan)), np.arctan, bound32=0, ref64=libm("atan", np.arctan),
                  out_list=FL, domain=(-30, 30)),
    "Sinh": Unary(TRIG, TRIG, TRIG_OUT, sinh32, np.sinh, bound32=24, bound16=1, ref64=libm("sinh", np.sinh), out_list=FL,
                  domain=(-12, 12)),
    "Cosh": Unary(TRIG, TRIG, TRIG_OUT, cosh32, np.cosh, bound32=1, ref64=libm("cosh", np.cosh), out_list=FL,
                  domain=(-12, 12)),
    "Asinh": Unary(TRIG, TRIG, TRIG_OUT, asinh32, np.arcsinh, bound32=3, bound16=1, ref64=libm("asinh", np.arcsinh), out_list=FL,
                   domain=(-40, 40), grid=(2.0 ** -24, 2.0 ** 40, 397)),
    "Acosh": Unary(TRIG, TRIG, TRIG, acosh32, np.arccosh, bound32=3, ref64=libm("acosh", np.arccosh), out_list=FL,
                   domain=(0.5, 40), grid=(2.0 ** -24, 2.0 ** 40, 397)),
    "Atanh": Unary(TRIG, TRIG, TRIG_OUT, atanh32, np.arctanh, bound32=1, ref64=libm("atanh", np.arctanh), out_list=FL,
                   domain=(-1.1, 1.1), grid=(2.0 ** -24, 1.0, 397)),
}


@dataclass
class Binary:
    dtypes_950: list[str]
    dtypes_a2: list[str]
    ref: Callable                    # (a, b, compute dtype) -> the result in the compute dtype (a, b cast to it)
    args: tuple[str, str, str]       # parameter names, for the messages
    compute: Callable                # (input dtype, out dtype) -> the compute dtype
    outs: list[str] | None = None    # out dtypes the operator takes (None: the inputs' own)
    f64: Callable | None = None      # the float64 function, for the error bound
    bound32: int = 0                 # max ulp fp32 vs float64 rounded to fp32 (measured)
    bound16: int = 0                 # ... fp16 / bf16
    inplace: bool = False            # Inplace<name>(selfRef, other)
    second: tuple[float, float] | None = (-1.2, 1.2)   # where the second operand is sampled (None: like self)
    scaled: bool = False             # the bound is in ulps of max(|a|, |b|, |result|) (cancellation near 0)


def _in_compute(f32, f64):
    """A reference from its fp32 steps and its DOUBLE function."""
    def ref(a, b, c):
        with np.errstate(all="ignore"):
            if c == "float64":
                return f64(a.astype(np.float64), b.astype(np.float64))
            return R.cast(f32(a.astype(F), b.astype(F)), c)
    return ref


def _logaddexp_ref(base2):
    def ref(a, b, c):
        return R.cast(logaddexp_steps(a.astype(F), b.astype(F), base2, "float32" if base2 else c), c)
    return ref


def _logaddexp64(base2):
    def f(a, b):
        return np.logaddexp2(a, b) if base2 else np.logaddexp(a, b)
    return f


LAE = names("FLOAT FLOAT16 DOUBLE INT8 UINT8 INT16 UINT16 INT32 UINT32 INT64 UINT64 BOOL BF16")
BINARY = {
    "TanhBackward": Binary(names("FLOAT FLOAT16 DOUBLE BF16"), names("FLOAT FLOAT16 DOUBLE BF16"),
                           _in_compute(tanh_backward32, tanh_backward64), ("gradOutput", "output", "gradInput"),
                           lambda name, out: name),
    "Atan2": Binary(names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 BOOL UINT8 BF16"),
                    names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 BOOL UINT8 BF16"),
                    _in_compute(atan2_32, libm("atan2", np.arctan2)), ("self", "other", "out"),
                    lambda name, out: name if name in FLOATS else "float32", outs=ALL, f64=np.arctan2, bound32=4,
                    bound16=1, inplace=True, second=None),
    "LogAddExp": Binary(LAE, LAE, _logaddexp_ref(False), ("self", "other", "out"), lambda name, out: out,
                        outs=names("FLOAT16 FLOAT BF16"), f64=_logaddexp64(False), bound32=3, bound16=3,
                        second=None, scaled=True),
    "LogAddExp2": Binary(LAE, LAE, _logaddexp_ref(True), ("self", "other", "out"), lambda name, out: out,
                         outs=names("FLOAT16 FLOAT BF16"), f64=_logaddexp64(True), bound32=3, bound16=1,
                         second=None, scaled=True),
}


def out_for(b: Binary, name: str) -> str:
    """The out dtype the tests give inputs of dtype `name`."""
    if b.outs is None or name in b.outs and (name in FLOATS or b.outs == ALL and name in FLOATS):
        return name
    return "float32"


def check(got, want, name: str):
    """Bit for bit, but DOUBLE results within 1 ulp: the C library's double functions (the vendor's AI CPU
    kernels) and NumPy's may differ in the last bit."""
    if name == "float64":
        assert ulp(got, want, name).max() <= 1
    else:
        same_bits(got, want)


def compute_of(name: str) -> str:
    return name if name in FLOATS else "float32"


def unary_ref(op: str, x: np.ndarray, out: str) -> np.ndarray:
    """The vendor's pipeline: Cast integral/bool to FLOAT, the kernel (fp16/bf16 in fp32, Cast RINT back),
    Cast to out."""
    u, c = UNARY[op], compute_of(dtype_name(x))
    xc = R.cast(x, c)
    if u.int_ref is not None and dtype_name(x) not in FLOATS:
        with np.errstate(all="ignore"):
            return R.cast(R.cast(u.int_ref(x.astype(np.float64)), c), out)
    if c == "float64":
        with np.errstate(all="ignore"):
            r = u.ref64(xc.astype(np.float64))
    else:
        r = R.cast(u.ref32(xc.astype(F)), c)
    return R.cast(r, out)


def dtype_name(a: np.ndarray) -> str:
    return "bfloat16" if a.dtype == R.BF16 else a.dtype.name


def unary_input(op: str, name: str, shape) -> np.ndarray:
    u = UNARY[op]
    if u.domain is not None and name in FLOATS:
        lo, hi = u.domain
        x = R.cast(RNG.uniform(lo, hi, shape), name)
        x.reshape(-1)[:5] = R.cast(np.array([0.0, -0.0, np.inf, -np.inf, np.nan]), name)
        return x
    return sample(name, shape, RNG)


# Log1p computes integral inputs in out's dtype (the vendor casts them to it): int32 -> fp16 rounds first.
def test_log1p_integral_input_computes_in_out_dtype():
    x = np.int32([3001, 2049, 7, 0, -1, 65519])
    got = ops.Log1p(x, np.zeros(6, np.float16))
    same_bits(got, R.cast(log1p32(R.cast(x, "float16").astype(F)), "float16"))


UNARY_CASES = [(op, d) for op, u in UNARY.items() for d in u.dtypes_950]


@pytest.mark.parametrize("op,name", UNARY_CASES, ids=[f"{o}-{d}" for o, d in UNARY_CASES])
def test_unary_every_dtype_bit_exact(op, name):
    x = unary_input(op, name, (7, 33))
    out = compute_of(name)
    got = getattr(ops, op)(x, np.zeros(x.shape, R.np_dtype(out)))
    check(got, unary_ref(op, x, out), out)


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_within_bound_of_float64_everywhere(op):
    # fp32: a dense grid of every 97th value from 2^-24 to 2^7 (and the op's domain); fp16 / bf16: every value.
    u = UNARY[op]
    x = fp32_grid(*u.grid)
    got = getattr(ops, op)(x, np.zeros_like(x))
    same_bits(got, unary_ref(op, x, "float32"))
    with np.errstate(all="ignore"):
        want = u.f64(x.astype(np.float64))
    assert ulp(got, R.cast(want, "float32"), "float32").max() <= u.bound32
    for name in ("float16", "bfloat16"):
        if name not in u.dtypes_950:
            continue
        xs = every_value(name)
        if u.range16 is not None:
            xs = xs[np.abs(xs.astype(np.float64)) < u.range16]
        got = getattr(ops, op)(xs, np.zeros_like(xs))
        same_bits(got, unary_ref(op, xs, name))
        with np.errstate(all="ignore"):
            want = R.cast(u.f64(xs.astype(np.float64)), name)
        assert ulp(got, want, name).max() <= u.bound16, name


@pytest.mark.parametrize("op", [op for op, u in UNARY.items() if u.inplace])
def test_unary_in_place_strided_empty_and_cast_out(op):
    u = UNARY[op]
    for name in [n for n in u.inplace if n in FLOATS]:      # (Erfinv's list has integers: the CanCast fails)
        x = unary_input(op, name, (5, 12))
        t = pyaclnn.from_numpy(x.copy())
        getattr(ops, "Inplace" + op)(t)
        check(t.numpy(), unary_ref(op, x, name), name)
    x = unary_input(op, "float32", (6, 9))
    same_bits(getattr(ops, op)(strided(x, transpose=True), np.zeros((6, 9), F)), unary_ref(op, x, "float32"))
    view = strided(x)                                       # in place on a strided view with an offset
    getattr(ops, "Inplace" + op)(view)
    same_bits(view.numpy(), unary_ref(op, x, "float32"))
    x16 = unary_input(op, "float16", (40,))                 # fp16 computed, then cast to an fp32 out
    if u.cast_out:
        same_bits(getattr(ops, op)(x16, np.zeros(40, F)), unary_ref(op, x16, "float32"))
    else:
        assert code(getattr(ops, op), x16, np.zeros(40, F)) == INVALID
    empty = np.zeros((0, 3), F)
    assert getattr(ops, op)(empty, np.zeros((0, 3), F)).shape == (0, 3)
    getattr(ops, "Inplace" + op)(pyaclnn.from_numpy(empty))


def test_tanh_specials():
    x = F([0.0, -0.0, np.inf, -np.inf, np.nan, 0.6, -0.6, 9.010913848876953125, -9.010913848876953125, 1e-30, 88.0])
    got = ops.Tanh(x, np.zeros_like(x))
    same_bits(got, tanh32(x))
    assert np.signbit(got[1]) == False  # noqa: E712  (the kernel's (-0)*(-0) + (-0) = +0; torch gives -0.0)
    assert got[2] == 1 and got[3] == -1 and np.isnan(got[4]) and got[7] == 1 and got[8] == -1


def test_tan_error_beyond_pi_over_4_is_the_reduction_s():
    # Beyond pi/4 the kernel's fp32 Cody-Waite reduction dominates: |error| <= 1.3 * 2^-24 * (1 + tan^2 x) *
    # max(1, |x|) (measured), i.e. the conditioning of tan at x; bit-exact against the kernel's steps (above).
    x = fp32_grid(0.785, 1e4, 101)
    got = ops.Tan(x, np.zeros_like(x)).astype(np.float64)
    t = np.tan(x.astype(np.float64))
    assert np.all(np.abs(got - t) <= 1.3 * 2.0 ** -24 * (1 + t * t) * np.maximum(1, np.abs(x)))
    big = F([1e7, -3e7, np.inf, np.nan, 9.9999e6])        # NaN from 1e7 (the kernel's choice), fused steps below
    same_bits(ops.Tan(big, np.zeros(5, F)), tan32(big))


# ---- pair operators ------------------------------------------------------------------

BINARY_CASES = [(op, d) for op, b in BINARY.items() for d in b.dtypes_950]


def binary_ref(op: str, a: np.ndarray, b: np.ndarray, out: str) -> np.ndarray:
    spec = BINARY[op]
    c = spec.compute(dtype_name(a), out)
    aa, bb = np.broadcast_arrays(R.cast(a, c), R.cast(b, c))
    return R.cast(spec.ref(aa, bb, c), out)


def binary_inputs(op: str, name: str, shape_a, shape_b):
    b = BINARY[op]
    other = sample(name, shape_b, RNG) if b.second is None or name not in FLOATS else \
        R.cast(RNG.uniform(*b.second, shape_b), name)
    return sample(name, shape_a, RNG), other


@pytest.mark.parametrize("op,name", BINARY_CASES, ids=[f"{o}-{d}" for o, d in BINARY_CASES])
def test_binary_every_dtype_broadcast_and_strided(op, name):
    b = BINARY[op]
    a, y = binary_inputs(op, name, (4, 1, 9), (3, 1))
    out = out_for(b, name)
    got = getattr(ops, op)(a, y, np.zeros((4, 3, 9), R.np_dtype(out)))
    check(got, binary_ref(op, a, y, out), out)
    if name == "float32":
        a2, y2 = binary_inputs(op, name, (6, 8), (6, 8))
        same_bits(getattr(ops, op)(strided(a2, transpose=True), strided(y2), np.zeros((6, 8), F)),
                  binary_ref(op, a2, y2, "float32"))
        assert getattr(ops, op)(np.zeros((0, 8), F), np.zeros((1, 8), F), np.zeros((0, 8), F)).shape == (0, 8)
        if b.inplace:
            view = strided(a2)
            getattr(ops, "Inplace" + op)(view, y2[:1])                  # other broadcast to selfRef
            same_bits(view.numpy(), binary_ref(op, a2, y2[:1], "float32"))
            assert code(getattr(ops, "Inplace" + op), a2[:1], y2) == INVALID   # the result is not selfRef's shape


@pytest.mark.parametrize("op", [op for op, b in BINARY.items() if b.f64 is not None])
def test_binary_within_bound_of_float64(op):
    b = BINARY[op]
    n = 200_000
    mag = 10.0 ** RNG.uniform(-6, 6, (2, n))
    x = (RNG.choice([-1.0, 1.0], (2, n)) * mag).astype(F)
    x[1, : n // 4] = x[0, : n // 4] * F(1 + 2 ** -10)                    # near-equal pairs
    for name, bound in (("float32", b.bound32), ("float16", b.bound16), ("bfloat16", b.bound16)):
        a, y = R.cast(x[0], name), R.cast(x[1], name)
        got = getattr(ops, op)(a, y, np.zeros(n, R.np_dtype(name)))
        check(got, binary_ref(op, a, y, name), name)
        with np.errstate(all="ignore"):
            w64 = b.f64(a.astype(np.float64), y.astype(np.float64))
            if b.scaled:
                scale = np.maximum(np.maximum(np.abs(a.astype(np.float64)), np.abs(y.astype(np.float64))), np.abs(w64))
                unit = 2.0 ** (np.floor(np.log2(np.maximum(scale, 1e-30))) - {"float32": 23, "float16": 10,
                                                                                 "bfloat16": 7}[name])
                err = np.abs(got.astype(np.float64) - w64) / unit
                assert err[np.isfinite(err)].max() <= bound, name
                assert np.array_equal(np.isnan(got.astype(np.float64)), np.isnan(w64)), name
                continue
        assert ulp(got, R.cast(w64, name), name).max() <= bound, name


def test_atan2_and_logaddexp_specials():
    z = F([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan])
    a, y = [v.reshape(-1) for v in np.meshgrid(z, z)]
    same_bits(ops.Atan2(a, y, np.zeros_like(a)), atan2_32(a, y))
    torch = pytest.importorskip("torch")
    want = torch.atan2(torch.from_numpy(a), torch.from_numpy(y)).numpy()
    zero = (a == 0) & ~np.isnan(y)              # the signed-zero cases the kernel selects are IEEE's (torch's)
    same_bits(ops.Atan2(a, y, np.zeros_like(a))[zero], want[zero])
    for op, f in (("LogAddExp", np.logaddexp), ("LogAddExp2", np.logaddexp2)):
        got = getattr(ops, op)(a, y, np.zeros_like(a))
        with np.errstate(all="ignore"):
            same_bits(got[~np.isnan(got)], f(a, y)[~np.isnan(got)])
        assert np.array_equal(np.isnan(got), np.isnan(a) | np.isnan(y))
    x16 = R.cast(RNG.standard_normal(500) * 8, "float16")                  # base e in fp16 arithmetic
    y16 = R.cast(RNG.standard_normal(500) * 8, "float16")
    same_bits(ops.LogAddExp(x16, y16, np.zeros(500, np.float16)),
              R.cast(logaddexp_steps(x16.astype(F), y16.astype(F), False, "float16"), "float16"))
    same_bits(ops.Atan2(np.int32([1, -2, 0]), np.int64([0, 3, -1]), np.zeros(3, np.int32)),
              R.cast(atan2_32(F([1, -2, 0]), F([0, 3, -1])), "int32"))     # any out dtype: cast to it


def test_tanh_backward_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    x = torch.randn(500, generator=torch.Generator().manual_seed(3)) * 2
    x.requires_grad_()
    y = torch.tanh(x)
    dy = torch.randn(500, generator=torch.Generator().manual_seed(4))
    y.backward(dy)
    got = ops.TanhBackward(dy.numpy(), y.detach().numpy(), np.zeros(500, F))
    # torch computes dy * (1 - y * y) without the fused step: within 2 ulp of it
    assert ulp(got, x.grad.numpy(), "float32").max() <= 2


# ---- validation: the vendor's codes, per SoC ---------------------------------------------------------

def _unary_calls(op: str, u: Unary, soc_list: list[str]) -> list:
    calls, want = [], []
    for name in ALL:
        out = "float32" if name in ("bool",) or name not in FLOATS else name
        calls.append((op, [("t", name, [2, 3]), ("t", out, [2, 3])]))
        ok = name in soc_list and (out in u.out_list + (["float64"] if "float64" in soc_list else []))
        want.append(0 if ok else INVALID)
        if u.inplace:
            calls.append(("Inplace" + op, [("t", name, [2, 3])]))
            want.append(0 if name in u.inplace and name in soc_list and name in FLOATS else INVALID)
    return calls, want


def _binary_calls(op: str, b: Binary, soc_list: list[str]) -> list:
    calls, want = [], []
    for name in ALL:
        calls.append((op, [("t", name, [2, 3]), ("t", name, [3]), ("t", out_for(b, name), [2, 3])]))
        want.append(0 if name in soc_list else INVALID)
    return calls, want


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    calls, want = [], []
    for op, u in UNARY.items():
        c, w = _unary_calls(op, u, u.dtypes_950 if soc != A2 else u.dtypes_a2)
        calls += c
        want += w
    for op, b in BINARY.items():
        c, w = _binary_calls(op, b, b.dtypes_950 if soc != A2 else b.dtypes_a2)
        calls += c
        want += w
    got = status_codes(calls, soc)
    bad = [(c, g, w) for c, g, w in zip(calls, got, want) if g != w]
    assert bad == []


def test_catalog_lists_are_the_vendor_lists():
    from pyaclnn import _catalog
    cat = _catalog.operators()
    for op, u in UNARY.items():
        d = next(iter(cat[f"aclnn{op}"]["dtypes"].values()))          # the first checked: self / input
        assert names(" ".join(d["950"])) == u.dtypes_950 and names(" ".join(d["A2"])) == u.dtypes_a2, op
        if u.inplace:
            d = next(iter(cat[f"aclnnInplace{op}"]["dtypes"].values()))
            assert names(" ".join(d["950"])) == u.inplace, op
    for op, b in BINARY.items():
        d = next(iter(cat[f"aclnn{op}"]["dtypes"].values()))
        assert names(" ".join(d["950"])) == b.dtypes_950 and names(" ".join(d["A2"])) == b.dtypes_a2, op


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_validation_codes(op):
    f = getattr(ops, op)
    x = np.zeros((2, 3), F)
    assert code(f, None, x) == NULLPTR and code(f, x, None) == NULLPTR
    for bad in [n for n in ALL if n not in UNARY[op].dtypes_950][:1]:
        assert code(f, np.zeros((2, 3), R.np_dtype(bad)), x) == INVALID             # self dtype
    assert code(f, x, np.zeros((2, 3), np.int32)) == INVALID                           # out dtype
    assert code(f, x, np.zeros((3, 2), F)) == INVALID                                  # out shape
    assert code(f, np.zeros((1,) * 9, F), np.zeros((1,) * 9, F)) == INVALID            # more than 8 dims
    if UNARY[op].inplace:
        g = getattr(ops, "Inplace" + op)
        assert code(g, None) == NULLPTR
        assert code(g, np.zeros((2, 3), np.int32)) == INVALID
        assert code(g, np.zeros((1,) * 9, F)) == INVALID


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_validation_codes(op):
    f = getattr(ops, op)
    x = np.zeros((2, 3), F)
    assert code(f, None, x, x) == NULLPTR and code(f, x, None, x) == NULLPTR and code(f, x, x, None) == NULLPTR
    for bad in [n for n in ALL if n not in BINARY[op].dtypes_950][:1]:
        assert code(f, x.astype(R.np_dtype(bad)), x.astype(R.np_dtype(bad)), x) == INVALID
    assert code(f, x, np.zeros((4, 3), F), x) == INVALID                           # no broadcast
    assert code(f, x, np.zeros((3,), F), np.zeros((3,), F)) == INVALID             # out shape
    assert code(f, np.zeros((1,) * 9, F), np.zeros((1,) * 9, F), np.zeros((1,) * 9, F)) == INVALID


def test_binary_dtype_rules():
    x = np.zeros((2, 3), F)
    tb = ops.TanhBackward                                # one dtype for all three
    assert code(tb, x, x.astype(np.float16), x) == INVALID and code(tb, x, x, x.astype(np.float16)) == INVALID
    for op in ("LogAddExp", "LogAddExp2"):               # out in FLOAT16 / FLOAT / BF16; inputs cast to it
        assert code(getattr(ops, op), x, x, x.astype(np.float64)) == INVALID
        assert code(getattr(ops, op), x.astype(np.float64), x.astype(np.uint16), x.astype(np.float16)) == 0
    assert code(ops.Atan2, x.astype(np.uint16), x, x) == INVALID


# ---- torch_npu on the emulator: torch's calls reach these operators and match torch CPU ---------------

TORCH_X = {"float32": sample("float32", (64,), RNG), "float16": sample("float16", (64,), RNG),
           "bfloat16": sample("bfloat16", (64,), RNG)}
TORCH_Y = {"float32": sample("float32", (64,), RNG), "float16": sample("float16", (64,), RNG),
           "bfloat16": sample("bfloat16", (64,), RNG)}
TORCH_BINARY = {"Atan2": "atan2", "LogAddExp": "logaddexp", "LogAddExp2": "logaddexp2"}
TORCH_OPS = {"Tanh": "tanh", "Log": "log", "Log2": "log2", "Log10": "log10", "Log1p": "log1p", "Exp2": "exp2",
             "Expm1": "expm1", "Erf": "erf", "Erfc": "erfc", "Erfinv": "erfinv", "Tan": "tan", "Asin": "asin",
             "Acos": "acos", "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh",
             "Atanh": "atanh"}

_TORCH_BODY = """

def inplace(fn, x):
    xn = x.npu()
    getattr(xn, fn + "_")()
    return xn

for op, fn in SPEC["unary"].items():
    for name, xd in SPEC["x"].items():
        x = T(dec(xd))
        run_array(f"{op}-{name}", lambda: getattr(torch, fn)(x.npu()))
        run_array(f"{op}_-{name}", lambda: inplace(fn, x))
    run_array(f"{op}-int32", lambda: getattr(torch, fn)(torch.arange(-3, 4, dtype=torch.int32).npu()))
for op, fn in SPEC["binary"].items():
    for name, xd in SPEC["x"].items():
        x, y = T(dec(xd)), T(dec(SPEC["y"][name]))
        run_array(f"{op}-{name}", lambda: getattr(torch, fn)(x.npu(), y.npu()))
        if op == "Atan2":
            run_array(f"{op}_-{name}", lambda: x.npu().atan2_(y.npu()))
# tanh's backward: autograd on npu calls aclnnTanhBackward
x = T(dec(SPEC["x"]["float32"])).npu().requires_grad_()
y = torch.tanh(x)
y.backward(torch.ones_like(y) * 0.5)
OUT["tanh_grad"] = enc(to_np(x.grad))
OUT["tanh_y"] = enc(to_np(y))
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_TORCH_BODY, {"unary": TORCH_OPS, "binary": TORCH_BINARY,
                                       "x": {k: enc(v) for k, v in TORCH_X.items()},
                                       "y": {k: enc(v) for k, v in TORCH_Y.items()}})


@pytest.mark.parametrize("op", list(TORCH_OPS))
def test_torch_npu_calls_match_torch_cpu(on_npu, op):
    import torch
    fn = getattr(torch, TORCH_OPS[op])
    for name, x in TORCH_X.items():
        assert "error" not in on_npu[f"{op}-{name}"], on_npu[f"{op}-{name}"]
        got = dec(on_npu[f"{op}-{name}"])
        same_bits(got, unary_ref(op, x, name))                       # the emulator's operator ran
        same_bits(dec(on_npu[f"{op}_-{name}"]), got)                 # in place (aclnnInplace<op>)
        tx = torch.from_numpy(x.view(np.int16) if name == "bfloat16" else x)
        if name == "bfloat16":
            tx = tx.view(torch.bfloat16)
        want = fn(tx.float()).to(tx.dtype)
        want = want.view(torch.int16).numpy().view(R.BF16) if name == "bfloat16" else want.numpy()
        u = UNARY[op]
        bound = (u.bound32 + 1 if u.torch_bound is None else u.torch_bound) if name == "float32" else 1
        assert ulp(got, want, name).max() <= bound, name
    if "int32" in UNARY[op].dtypes_950:
        got = dec(on_npu[f"{op}-int32"])
        assert got.dtype == np.float32
        same_bits(got, unary_ref(op, np.arange(-3, 4, dtype=np.int32), "float32"))
    else:                                                            # refused as the vendor refuses it
        assert "161002" in on_npu[f"{op}-int32"]["error"]


@pytest.mark.parametrize("op", list(TORCH_BINARY))
def test_torch_npu_pair_calls(on_npu, op):
    import torch
    for name, x in TORCH_X.items():
        y = TORCH_Y[name]
        assert "error" not in on_npu[f"{op}-{name}"], on_npu[f"{op}-{name}"]
        got = dec(on_npu[f"{op}-{name}"])
        same_bits(got, binary_ref(op, x, y, name))                    # the emulator's operator ran
        if op == "Atan2":
            same_bits(dec(on_npu[f"{op}_-{name}"]), got)
        tx, ty = (torch.from_numpy(v.astype(np.float32)) for v in (x, y))
        want = R.cast(getattr(torch, TORCH_BINARY[op])(tx, ty).numpy(), name)
        # against torch CPU: within the operator's stated bound (LogAddExp: of max(|x|, |y|, |result|))
        with np.errstate(all="ignore"):
            scale = np.maximum(np.maximum(np.abs(x.astype(np.float64)), np.abs(y.astype(np.float64))),
                               np.abs(want.astype(np.float64)))
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        ok = np.isnan(got.astype(np.float64)) == np.isnan(want.astype(np.float64))
        tol = {"float32": 2.0 ** -20, "float16": 2.0 ** -8, "bfloat16": 2.0 ** -5}[name]      # a few ulp
        assert ok.all() and np.nan_to_num(err / np.maximum(scale, 1e-30), posinf=0).max() <= tol, name


def test_torch_npu_tanh_backward(on_npu):
    y = dec(on_npu["tanh_y"])
    same_bits(dec(on_npu["tanh_grad"]), tanh_backward32(np.full(y.shape, 0.5, F), y))
