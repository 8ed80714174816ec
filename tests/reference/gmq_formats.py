"""Number formats used by the GroupedDynamicMxQuant reference (spec §4.5–§4.7, §5).

Encoders model what the 950 kernel does; decoders are plain lookups used by tests. Written here
rather than imported from pyaclnn.codecs so that the reference stays independent of the package
it is used to test.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

# name -> (ml_dtypes type, largest finite value). ml_dtypes decodes both exactly and, for finite
# in-range float32 input, rounds to nearest even exactly as the hardware does (spec §5.2); the
# saturation and NaN rules differ, so encode_fp8 applies them itself.
FP8_FORMATS = {
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 448.0),
    "float8_e5m2": (ml_dtypes.float8_e5m2, 57344.0),
}

# Magnitudes of FP4 codes 0..7 (bit 3 is the sign). ml_dtypes has no E1M2, and its E2M1 maps NaN to
# -0, so FP4 is handled here.
FP4_GRIDS = {
    "float4_e2m1": np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]),
    "float4_e1m2": np.arange(8) * 0.25,
}

_F32_SIGN = np.uint32(0x80000000)


# --- 16-bit inputs -------------------------------------------------------------------------------

def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """Exact float32 values of bfloat16 bit patterns."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """Exact float32 values of float16 bit patterns."""
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float32)


def f32_to_bf16_bits_rne(f: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, round to nearest even (the kernel's fp16->bf16 CAST_RINT).

    NaN keeps its sign and top mantissa bits with the quiet bit set; only its exponent field
    matters to the caller.
    """
    b = np.asarray(f, dtype=np.float32).view(np.uint32)
    rounded = (b + np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1))) >> 16
    quiet_nan = (b >> 16) | np.uint32(0x0040)
    return np.where(np.isnan(f), quiet_nan, rounded).astype(np.uint16)


# --- FP8 (spec §4.6) -----------------------------------------------------------------------------

def encode_fp8(v: np.ndarray, fmt: str) -> np.ndarray:
    """float32 -> FP8 bytes as the kernel's SAT + CAST_RINT cast: round to nearest even, overflow
    and +-Inf saturate to +-max, NaN -> 0x00 (CTRL[50] = 0), sign of zero kept."""
    np_type, max_value = FP8_FORMATS[fmt]
    v = np.asarray(v, dtype=np.float32)
    clipped = np.clip(v, np.float32(-max_value), np.float32(max_value))
    codes = clipped.astype(np_type).view(np.uint8)
    return np.where(np.isnan(v), np.uint8(0), codes)


def decode_fp8(codes: np.ndarray, fmt: str) -> np.ndarray:
    np_type, _ = FP8_FORMATS[fmt]
    return np.asarray(codes, dtype=np.uint8).view(np_type).astype(np.float64)


# --- FP4 (spec §4.7) -----------------------------------------------------------------------------

def round_integral(t: np.ndarray, mode: str) -> np.ndarray:
    """Round float32 values to integral float32 values: "rint" half to even, "round" half away
    from zero, "floor" toward -inf. NaN and +-Inf pass through."""
    t = np.asarray(t, dtype=np.float32)
    if mode == "rint":
        return np.rint(t)
    if mode == "floor":
        return np.floor(t)
    if mode == "round":
        a = np.abs(t.astype(np.float64))          # float64: a - floor(a) is exact
        whole = np.floor(a)
        r = whole + (a - whole >= 0.5)
        return np.copysign(r, t).astype(np.float32)
    raise ValueError(f"unknown round mode {mode!r}")


def _pow2_from_biased(e: np.ndarray) -> np.ndarray:
    """The float32 whose bits are e << 23 (e = 0 gives 0.0)."""
    return (e.astype(np.uint32) << 23).view(np.float32)


def fp4_kernel_round(v: np.ndarray, fmt: str, mode: str) -> np.ndarray:
    """The kernel's fp32 pre-rounding before its bf16 -> fp4 cast (spec §4.7, step by step).

    Returns float32 values that are on the FP4 grid, beyond it (to be saturated), +-Inf, or NaN.
    """
    v = np.asarray(v, dtype=np.float32)
    with np.errstate(all="ignore"):
        if fmt == "float4_e1m2":
            t = v * np.float32(4.0)
            negative = t < 0
            q = round_integral(t, mode) * np.float32(0.25)
        elif fmt == "float4_e2m1":
            biased = ((v.view(np.uint32) >> 23) & np.uint32(0xFF)).astype(np.int32)
            k = np.maximum(biased - 127, 0) - 1                     # -1 .. 127
            t = v * _pow2_from_biased(127 - k)                      # 127 - k = 0 makes Inf/NaN NaN
            negative = t < 0
            q = round_integral(t, mode) * _pow2_from_biased(k + 127)
        else:
            raise ValueError(f"not an FP4 format: {fmt!r}")
    minus_zero = ((q == 0) & negative) | (v.view(np.uint32) == _F32_SIGN)
    return np.where(minus_zero, np.float32(-0.0), q).astype(np.float32)


def fp4_grid_value_to_code(q: np.ndarray, fmt: str) -> np.ndarray:
    """The bf16 -> fp4 cast on values already on the grid: |q| >= max (and +-Inf) saturate,
    NaN -> 0x0, bit 3 = sign (so -0 -> 0x8). The fp32 -> bf16 step before it is exact on the grid
    and cannot move a value beyond the grid back onto it, so it is not modelled separately."""
    grid = FP4_GRIDS[fmt]
    q = np.asarray(q, dtype=np.float32)
    nan = np.isnan(q)
    magnitude = np.abs(q)
    saturated = magnitude >= grid[-1]
    steps = 4.0 if fmt == "float4_e1m2" else 2.0       # E2M1 grid * 2 is integral
    lookup = np.full(int(grid[-1] * steps) + 1, -1, dtype=np.int16)
    lookup[(grid * steps).astype(int)] = np.arange(8)
    on_grid = ~(nan | saturated)
    index = np.where(on_grid, magnitude, 0) * np.float32(steps)   # exact: |q| < max here
    index = index.astype(np.int64)
    code = np.where(saturated, 7, lookup[index])
    if np.any(on_grid & ((code < 0) | (grid[np.maximum(code, 0)] != magnitude))):
        raise AssertionError("fp4_kernel_round produced a value off the FP4 grid")
    sign = np.signbit(q) & ~nan
    code = np.where(nan, 0, code) | (sign.astype(np.int16) << 3)
    return code.astype(np.uint8)


def encode_fp4(v: np.ndarray, fmt: str, mode: str) -> np.ndarray:
    """float32 -> FP4 nibbles (uint8 0..15), one per element."""
    return fp4_grid_value_to_code(fp4_kernel_round(v, fmt, mode), fmt)


def decode_fp4(nibbles: np.ndarray, fmt: str) -> np.ndarray:
    nibbles = np.asarray(nibbles, dtype=np.uint8)
    magnitude = FP4_GRIDS[fmt][nibbles & 7]
    return np.where(nibbles & 8, -magnitude, magnitude)


def pack_fp4(nibbles: np.ndarray) -> np.ndarray:
    """[..., 2k] nibbles -> [..., k] bytes; element 2k in the low nibble (spec §3.6)."""
    nibbles = np.asarray(nibbles, dtype=np.uint8)
    return (nibbles[..., 0::2] & 0xF) | ((nibbles[..., 1::2] & 0xF) << 4)


def unpack_fp4(packed: np.ndarray) -> np.ndarray:
    packed = np.asarray(packed, dtype=np.uint8)
    out = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2] = packed & 0xF
    out[..., 1::2] = packed >> 4
    return out


# --- E8M0 (spec §5.1) ----------------------------------------------------------------------------

def decode_e8m0(codes: np.ndarray) -> np.ndarray:
    """2^(c - 127); 0xFF is NaN."""
    codes = np.asarray(codes, dtype=np.uint8)
    value = np.ldexp(1.0, codes.astype(np.int64) - 127)
    return np.where(codes == 0xFF, np.nan, value)
