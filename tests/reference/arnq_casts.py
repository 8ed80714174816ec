"""Output casts and encodings of AddRmsNormDynamicQuant (spec B.8.3, B.9.3, B.10, Q6, Q11).

Every encoder takes the float32 quotients q and returns what the NPU writes:
* INT8: int8, round half to even, NaN -> 0, +-inf saturate (the only out-of-range values reachable);
* INT4: uint8 bytes, two elements a byte, element 2k in the low nibble; V2's INT32 output is the
  same bytes read as little-endian int32 words;
* FLOAT8_E4M3FN / FLOAT8_E5M2: uint8 codes, round to nearest even, saturating (+-inf -> +-max);
* HIFLOAT8: uint8 codes, round half away from zero, saturating (+-inf -> +-32768).
NaN -> 0x00 by default: the vendor Cast documentation for SatMode::SAT with CTRL[50] = 0, as in the
MX path (grouped_dynamic_mx_quant.md 4.6). The NaN codes spec Q11 assumed (E4M3FN 0x7F, E5M2 0x7E,
HiF8 0x80) are the alternative options.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

FP8_FORMATS = {
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 448.0),
    "float8_e5m2": (ml_dtypes.float8_e5m2, 57344.0),
}
HIF8_MAX = 32768.0
HIF8_NAN = 0x80


def to_integer(q: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Round half to even; NaN -> 0 and saturation to [lo, hi] (Q6)."""
    with np.errstate(invalid="ignore"):
        r = np.rint(np.asarray(q, dtype=np.float64))
        r = np.where(np.isnan(r), 0.0, np.clip(r, lo, hi))
    return r.astype(np.int64)


def encode_int8(q: np.ndarray) -> np.ndarray:
    return to_integer(q, -128, 127).astype(np.int8)


def pack_int4(values: np.ndarray) -> np.ndarray:
    """int4 values [..., N] (N even) -> uint8 [..., N/2], element 2k in bits 0-3."""
    if values.shape[-1] % 2:
        raise ValueError("INT4 output needs an even last dimension")
    nibbles = (values.astype(np.int64) & 0xF).astype(np.uint8)
    return (nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)).astype(np.uint8)


def encode_int4(q: np.ndarray) -> np.ndarray:
    return pack_int4(to_integer(q, -8, 7))


def int4_bytes_to_int32(packed: np.ndarray) -> np.ndarray:
    """Packed INT4 bytes [..., N/2] -> little-endian int32 words [..., N/8]."""
    if packed.shape[-1] % 4:
        raise ValueError("INT32 (packed INT4) output needs N divisible by 8")
    words = np.ascontiguousarray(packed).view("<i4")
    return words.astype(np.int32)


def unpack_int4(packed: np.ndarray) -> np.ndarray:
    """Inverse of pack_int4 (for tests): uint8 [..., N/2] -> int8 values [..., N]."""
    lo = (packed & 0xF).astype(np.int8)
    hi = (packed >> 4).astype(np.int8)
    both = np.stack([lo, hi], axis=-1).reshape(packed.shape[:-1] + (packed.shape[-1] * 2,))
    return np.where(both > 7, both - 16, both).astype(np.int8)


def encode_fp8(q: np.ndarray, fmt: str, nan_sign: str = "zero") -> np.ndarray:
    """fp32 -> FP8 code with CAST_RINT and SAT: clamp to +-max, then round to nearest even
    (clamping first is the same as saturating after rounding).

    nan_sign: "zero" writes 0x00 for NaN (default, CTRL[50] = 0); "positive" the positive NaN code,
    "keep" the NaN code with the NaN's sign (Q11's assumption)."""
    dtype, fmax = FP8_FORMATS[fmt]
    q = np.asarray(q, dtype=np.float32)
    clamped = np.clip(q, np.float32(-fmax), np.float32(fmax))     # NaN stays NaN
    if nan_sign == "positive":
        clamped = np.where(np.isnan(clamped), np.float32(np.nan), clamped)
    elif nan_sign not in ("zero", "keep"):
        raise ValueError(f"unknown nan_sign {nan_sign!r}")
    codes = clamped.astype(dtype).view(np.uint8)
    if nan_sign == "zero":
        codes = np.where(np.isnan(q), np.uint8(0), codes)
    return codes.astype(np.uint8)


def encode_hif8(q: np.ndarray, nan_code: str = "zero") -> np.ndarray:
    """fp32 -> HiFloat8 code, CAST_ROUND (ties away from zero) + SAT (B.9.3, B.10, Q11), by the
    private encoder below (a reference never asks the package under test).

    nan_code "zero" writes 0x00 for NaN (default, CTRL[50] = 0); "nan" writes 0x80 (Q11's
    assumption)."""
    codes = hif8_encode_round_sat(q)
    if nan_code == "zero":
        codes = np.where(np.isnan(np.asarray(q, dtype=np.float32)), np.uint8(0), codes)
    elif nan_code != "nan":
        raise ValueError(f"unknown nan_code {nan_code!r}")
    return codes.astype(np.uint8)


def _hif8_mantissa_bits(exp: np.ndarray) -> np.ndarray:
    """Mantissa bits kept for an unbiased exponent: |e| <= 3: 3, 4..7: 2, 8..15: 1, denormal: 0."""
    mag = np.abs(exp)
    bits = np.where(mag <= 3, 3, np.where(mag <= 7, 2, 1))
    return np.where(exp <= -16, 0, bits)


def hif8_encode_round_sat(q: np.ndarray) -> np.ndarray:
    """Private HiF8 encoder written from grouped_dynamic_mx_quant.md 5.4 and B.10 (ROUND + SAT)."""
    with np.errstate(invalid="ignore"):
        x = np.asarray(q, dtype=np.float32).astype(np.float64)
    mag = np.abs(x)
    finite_nonzero = np.isfinite(mag) & (mag > 0)
    safe = np.where(finite_nonzero, mag, 1.0)
    _, e2 = np.frexp(safe)
    exp = np.maximum(e2 - 1, -23)                       # Ev = -23 rounds on the 2^-22 grid
    ulp_exp = np.where(exp <= -16, np.maximum(exp, -22), exp - _hif8_mantissa_bits(exp))
    ulp = np.ldexp(1.0, ulp_exp)
    rounded = np.floor(safe / ulp + 0.5) * ulp          # half away from zero (magnitudes)
    rounded = np.where(finite_nonzero, rounded, np.where(np.isinf(mag), np.inf, 0.0))
    rounded = np.where(rounded >= 1.5 * HIF8_MAX, np.inf, rounded)
    rounded = np.where(np.isinf(rounded), HIF8_MAX, rounded)   # SAT: inf -> max finite

    codes = _hif8_code_of_magnitude(rounded)
    sign = np.where((x < 0) & (codes != 0), 0x80, 0)
    codes = codes | sign
    return np.where(np.isnan(x), HIF8_NAN, codes).astype(np.uint8)


def _hif8_code_of_magnitude(v: np.ndarray) -> np.ndarray:
    """Code (without sign) of an exactly representable HiF8 magnitude (0 or 2^-22 .. 2^15)."""
    nonzero = v > 0
    safe = np.where(nonzero, v, 1.0)
    frac, e2 = np.frexp(safe)
    exp = e2 - 1
    mant = frac * 2.0 - 1.0                              # in [0, 1)
    mag = np.abs(exp)
    neg = (exp < 0).astype(np.int64)
    mbits = _hif8_mantissa_bits(exp)
    m = np.round(mant * np.ldexp(1.0, mbits)).astype(np.int64)
    code = np.select(
        [exp <= -16,
         exp == 0,
         mag == 1,
         mag <= 3,
         mag <= 7],
        [exp + 23,
         0x08 | m,
         0x10 | (neg << 3) | m,
         0x20 | (neg << 4) | ((mag - 2) << 3) | m,
         0x40 | (neg << 4) | ((mag - 4) << 2) | m],
        default=0x60 | (neg << 4) | ((mag - 8) << 1) | m)
    return np.where(nonzero, code, 0).astype(np.int64)


def hif8_decode(codes: np.ndarray) -> np.ndarray:
    """HiF8 code -> float64 value (B.10 table), for tests."""
    out = np.empty(np.shape(codes), dtype=np.float64)
    flat = np.asarray(codes, dtype=np.int64).ravel()
    values = []
    for c in flat:
        values.append(_hif8_decode_one(int(c)))
    out.ravel()[:] = values
    return out


def _hif8_decode_one(code: int) -> float:
    if code == 0x80:
        return float("nan")
    sign = -1.0 if code & 0x80 else 1.0
    c = code & 0x7F
    if c == 0x6F:
        return sign * float("inf")
    if c >> 3 == 0:                                     # 0000 MMM: denormal / zero
        return 0.0 if c == 0 else sign * 2.0 ** ((c & 7) - 23)
    if c >> 3 == 1:                                     # 0001 MMM: e = 0
        return sign * (1 + (c & 7) / 8)
    if c >> 4 == 1:                                     # 001 S MMM: |e| = 1
        e = -1 if c & 0x08 else 1
        return sign * 2.0 ** e * (1 + (c & 7) / 8)
    if c >> 5 == 1:                                     # 01 S E MMM: |e| = 2, 3
        e = 2 + ((c >> 3) & 1)
        e = -e if c & 0x10 else e
        return sign * 2.0 ** e * (1 + (c & 7) / 8)
    if c >> 5 == 2:                                     # 10 S EE MM: |e| = 4..7
        e = 4 + ((c >> 2) & 3)
        e = -e if c & 0x10 else e
        return sign * 2.0 ** e * (1 + (c & 3) / 4)
    e = 8 + ((c >> 1) & 7)                              # 11 S EEE M: |e| = 8..15
    e = -e if c & 0x10 else e
    return sign * 2.0 ** e * (1 + (c & 1) / 2)
