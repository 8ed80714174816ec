"""Per-template rstd = 1/sqrt(S*avg + eps) of AddRmsNormDynamicQuant (spec B.8.2, B.9.2, Q4, Q5).

All inputs and outputs are float32 arrays of one value per row; every step is one float32
operation (one rounding) unless an option asks for fused or double evaluation.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
_ONE = F32(1.0)


def fma32(a, b, c) -> np.ndarray:
    """Fused multiply-add a*b + c with a single rounding to float32, exact for every input.

    a*b is exact in float64; the float64 sum is made round-to-odd (from its exact TwoSum error),
    and rounding a round-to-odd float64 to float32 is correctly rounded (53 >= 24 + 2 bits)."""
    a64 = np.asarray(a, dtype=F32).astype(np.float64)
    b64 = np.asarray(b, dtype=F32).astype(np.float64)
    c64 = np.asarray(c, dtype=F32).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        p = a64 * b64
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
    inexact = np.isfinite(s) & (err != 0)
    toward_zero = inexact & (np.signbit(err) != np.signbit(s))
    t = np.where(toward_zero, np.nextafter(s, 0.0), s)
    bits = np.atleast_1d(t).view(np.uint64).copy()
    make_odd = np.atleast_1d(inexact) & ((bits & np.uint64(1)) == 0)
    bits[make_odd] |= np.uint64(1)
    t = bits.view(np.float64).reshape(np.shape(t))
    with np.errstate(over="ignore"):
        return t.astype(F32)


def scalar_rstd(s, avg, eps, mode: str = "float") -> np.ndarray:
    """Scalar-unit `1 / sqrt(S * avg + eps)` (910B all templates, 950 single row), Q4:
    "float" (default): f32(1 / f32(sqrt(f32(f32(S*avg) + eps))));
    "fma":    S*avg + eps contracted to one fused multiply-add, then float sqrt and division;
    "double": the whole expression evaluated in double from the float operands, rounded once."""
    s = np.asarray(s, dtype=F32)
    avg, eps = F32(avg), F32(eps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if mode == "double":
            t64 = s.astype(np.float64) * np.float64(avg) + np.float64(eps)
            return (1.0 / np.sqrt(t64)).astype(F32)
        if mode == "fma":
            t = fma32(s, avg, eps)
        elif mode == "float":
            t = s * avg + eps
        else:
            raise ValueError(f"unknown scalar rstd mode {mode!r}")
        return _ONE / np.sqrt(t)


def vector_rstd(s, avg, eps) -> np.ndarray:
    """950 normal / split: vector Muls, Adds, Sqrt, then Div(1, .)."""
    s = np.asarray(s, dtype=F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _ONE / np.sqrt(s * F32(avg) + F32(eps))


def newton_raphson_rstd(s, avg, eps, mula: str = "fused") -> np.ndarray:
    """950 perf: NormCommon ComputeRstdNewtonRaphson (NEED_MAX, NEED_AVG_FACTOR). MULA(acc, a, b)
    = acc + a*b, fused by default (Q5); "unfused" rounds the product first."""
    if mula == "fused":
        def mla(acc, a, b):
            return fma32(a, b, acc)
    elif mula == "unfused":
        def mla(acc, a, b):
            return np.asarray(acc, dtype=F32) + np.asarray(a, dtype=F32) * np.asarray(b, dtype=F32)
    else:
        raise ValueError(f"unknown mula mode {mula!r}")

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        v = np.asarray(s, dtype=F32) * F32(avg)
        v = v + F32(eps)
        v = np.maximum(v, F32(-99.99))
        r = _ONE / v
        y = np.sqrt(r)
        t = (v * F32(-0.5)) * y
        t1 = mla(F32(1.5), t, y)
        rstd = y * t1
        s_ = mla(_ONE, v * F32(-1.0), r)
        r = mla(r, rstd * F32(-1.0), rstd)
        s_ = mla(s_, v, r)
        s_ = s_ * rstd
        rstd = mla(rstd, s_, F32(0.5))
        rstd = np.where(v == F32(np.inf), F32(0.0), rstd)
        rstd = np.where(v == F32(0.0), F32(np.inf), rstd)
    return np.asarray(rstd, dtype=F32)
