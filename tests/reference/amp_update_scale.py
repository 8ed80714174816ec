"""NumPy reference of aclnnAmpUpdateScale, written from the spec (section A.3 of
/work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md), not from the C code.

All arithmetic is float32 (one rounding per operation, as numpy does for float32 operands); the
result is narrowed to the scale's dtype at the very end: fp16 with numpy's IEEE round-to-nearest-
even cast (or round-to-odd, the emulator's alternative), bf16 with ml_dtypes (round-to-nearest-
even). Overflow in the narrowing gives inf.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

SCALE_DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _wrap_int32(value: int) -> int:
    return (int(value) + 2**31) % 2**32 - 2**31


def _f16_round_to_odd(x: np.float32) -> np.float16:
    """float32 -> float16 rounding to odd: exact values stay, otherwise the one of the two
    neighbouring fp16 values (bracketing x) whose last mantissa bit is 1. Finite values past the
    fp16 range therefore give +-65504; inf and NaN pass through."""
    if not np.isfinite(x):
        return np.float16(x)
    with np.errstate(over="ignore"):
        nearest = np.float16(x)
    if float(nearest) == float(x):
        return nearest
    toward = -np.inf if float(nearest) > float(x) else np.inf
    other = np.nextafter(nearest, np.float16(toward), dtype=np.float16)
    return nearest if int(nearest.view(np.uint16)) & 1 else other


def narrow(value: np.float32, dtype: str, fp16_rounding: str = "rne"):
    """The final store of updatedScale."""
    with np.errstate(over="ignore"):
        return _narrow(value, dtype, fp16_rounding)


def _narrow(value, dtype, fp16_rounding):
    if dtype == "float32":
        return np.float32(value)
    if dtype == "float16":
        return _f16_round_to_odd(value) if fp16_rounding == "odd" else np.float16(value)
    if dtype == "bfloat16":
        return np.array(value, dtype=np.float32).astype(ml_dtypes.bfloat16)[()]
    raise ValueError(f"unsupported scale dtype {dtype!r}")


def amp_update_scale(current_scale, growth_tracker: int, found_inf, growth_factor: float,
                     backoff_factor: float, growth_interval: int, dtype: str = "float32",
                     fp16_rounding: str = "rne"):
    """One update step. ``current_scale`` and ``found_inf`` are values of ``dtype`` (anything
    numpy converts exactly), ``growth_tracker`` an int32 value. Returns ``(updated_scale as a
    numpy scalar of dtype, updated_growth_tracker as int)``."""
    scalar_type = SCALE_DTYPES[dtype]
    # inputs arrive in the scale dtype; widening to float32 is exact
    s = np.float32(np.array(current_scale, dtype=scalar_type))
    f = np.float32(np.array(found_inf, dtype=scalar_type))
    gf = np.float32(growth_factor)          # double -> float, round to nearest even
    bf = np.float32(backoff_factor)
    tracker = _wrap_int32(growth_tracker)

    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if f != 0:                          # NaN is "found", -0.0 is not
            s = np.float32(s * bf)
            tracker = 0
        else:
            successful = _wrap_int32(tracker + 1)
            if successful == growth_interval:
                grown = np.float32(s * gf)
                if np.isfinite(grown):      # checked in float32, before narrowing
                    s = grown
                tracker = 0
            else:
                tracker = successful
        return narrow(s, dtype, fp16_rounding), tracker
