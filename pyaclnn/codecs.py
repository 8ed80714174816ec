"""Bit-exact host encoders and decoders for the NPU's narrow number formats.

`ml_dtypes`_ already gives NumPy value types for bfloat16, float8_e4m3fn, float8_e5m2,
float8_e8m0fnu, float4_e2m1fn and int4, and its ``astype`` rounds to nearest-even like the NPU's
``CAST_RINT``. This module adds what it lacks:

* HIFLOAT8 and FLOAT4_E1M2, which no widely used library carries (held as uint8 codes);
* the NPU's saturating casts (overflow and +-inf -> +-max) and NaN -> 0 (SAT mode, CTRL[50] = 0),
  which ``astype`` does not do (it gives inf or NaN);
* FP4 with the other round modes the NPU offers (round half away, floor, ceil, trunc), FP4 NaN -> 0
  (ml_dtypes gives -0 for E2M1);
* E8M0 encoding by exponent field (the NPU's cast), ceil or nearest, without ml_dtypes' NaN for 0;
* quantisation to int8 / int4 / int32 with a round mode and saturation (``astype`` truncates and
  wraps);
* packing of 4-bit values two per byte, element 2k in the low nibble (the device layout of INT4 and
  FLOAT4_*).

Encoders take anything convertible to float32 and return raw codes (uint8 / uint16) or integers;
decoders take codes and return float32. Each matches the C stub's ``num_*`` conversions
(native_stubs/src/numerics/) bit for bit; tests/test_numerics*.py checks both against an
independent reference.

.. _ml_dtypes: https://github.com/jax-ml/ml_dtypes
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ._exceptions import InvalidArgumentError

__all__ = [
    "ROUND_MODES", "FORMATS", "encode", "decode",
    "encode_float16", "encode_bfloat16", "encode_float8_e4m3fn", "encode_float8_e5m2",
    "encode_hifloat8", "decode_hifloat8", "encode_float4_e2m1", "decode_float4_e2m1",
    "encode_float4_e1m2", "decode_float4_e1m2", "encode_float8_e8m0", "decode_float8_e8m0",
    "encode_int8", "encode_int4", "encode_int32",
    "pack_nibbles", "unpack_nibbles", "unpack_int4",
]

#: Round-mode names, after AscendC's CAST_RINT / CAST_ROUND / CAST_FLOOR / CAST_CEIL / CAST_TRUNC.
#: "rint" = nearest, ties to even; "round" = nearest, ties away from zero; HiFloat8 also takes
#: "hybrid" (CAST_HYBRID).
ROUND_MODES = ("rint", "round", "floor", "ceil", "trunc")


def _f32(x) -> np.ndarray:
    return np.require(x, np.float32, "C")   # keeps the shape (0-d too); copies only if needed


def _check_mode(round_mode: str, allowed=ROUND_MODES) -> str:
    if round_mode not in allowed:
        raise InvalidArgumentError(f"round_mode must be one of {allowed}, got {round_mode!r}")
    return round_mode


def _round_integer(t: np.ndarray, round_mode: str) -> np.ndarray:
    """float64 -> the integer (as float64) chosen by the round mode; exact for any float32 input."""
    if round_mode == "rint":
        return np.rint(t)
    if round_mode == "round":
        return np.copysign(np.floor(np.abs(t) + 0.5), t)
    if round_mode == "floor":
        return np.floor(t)
    if round_mode == "ceil":
        return np.ceil(t)
    return np.trunc(t)


# ---------------------------------------------------------------------------------------------
# fp16, bf16, FP8: ml_dtypes / NumPy rounding (nearest-even) plus the NPU's SAT and NaN rules
# ---------------------------------------------------------------------------------------------

def _saturating_cast(x, dtype, max_value: float, saturate: bool, nan_to_zero: bool,
                     code_dtype, nan_code: int) -> np.ndarray:
    x = _f32(x)
    with np.errstate(over="ignore", invalid="ignore"):
        # every value beyond max rounds to max under SAT; np.clip keeps NaN and maps +-inf to +-max
        y = np.clip(x, -max_value, max_value) if saturate else x
        codes = y.astype(dtype).view(code_dtype)
    nan = np.isnan(x)
    if nan.any():  # the canonical quiet NaN with the sign kept (astype may keep payloads), or 0
        sign = (np.signbit(x).astype(code_dtype) << (8 * np.dtype(code_dtype).itemsize - 1))
        codes = np.where(nan, code_dtype(0) if nan_to_zero else sign | code_dtype(nan_code), codes)
    return codes


def encode_float16(x, *, saturate: bool = False, nan_to_zero: bool = False) -> np.ndarray:
    """float32 -> fp16 bit patterns (uint16), nearest-even. ``saturate``: overflow and +-inf ->
    +-65504 instead of +-inf; ``nan_to_zero``: NaN -> 0x0000, else the quiet NaN 0x7E00 with
    the sign kept."""
    return _saturating_cast(x, np.float16, 65504.0, saturate, nan_to_zero, np.uint16, 0x7E00)


def encode_bfloat16(x, *, saturate: bool = False, nan_to_zero: bool = False) -> np.ndarray:
    """float32 -> bf16 bit patterns (uint16), nearest-even; flags as :func:`encode_float16`."""
    bf16_max = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    return _saturating_cast(x, ml_dtypes.bfloat16, bf16_max, saturate, nan_to_zero, np.uint16,
                            0x7FC0)


def encode_float8_e4m3fn(x, *, saturate: bool = False, nan_to_zero: bool = False) -> np.ndarray:
    """float32 -> FLOAT8_E4M3FN codes (uint8), nearest-even.

    Without flags this is ``astype(ml_dtypes.float8_e4m3fn)`` (overflow and +-inf -> NaN 0x7F/0xFF).
    The NPU's fp32 -> fp8 cast in SAT mode (used by the MX and dynamic-quant kernels) is
    ``saturate=True`` (-> +-448, 0x7E/0xFE) with ``nan_to_zero=True`` (NaN -> 0x00, CTRL[50] = 0).
    """
    return _saturating_cast(x, ml_dtypes.float8_e4m3fn, 448.0, saturate, nan_to_zero, np.uint8,
                            0x7F)


def encode_float8_e5m2(x, *, saturate: bool = False, nan_to_zero: bool = False) -> np.ndarray:
    """float32 -> FLOAT8_E5M2 codes (uint8), nearest-even; ``saturate``: -> +-57344 (0x7B/0xFB)
    instead of +-inf; ``nan_to_zero``: NaN -> 0x00."""
    return _saturating_cast(x, ml_dtypes.float8_e5m2, 57344.0, saturate, nan_to_zero, np.uint8,
                            0x7E)


# ---------------------------------------------------------------------------------------------
# HIFLOAT8
# ---------------------------------------------------------------------------------------------

_HIF8_NAN, _HIF8_INF, _HIF8_MAX = 0x80, 0x6F, 0x6E


def _hif8_code(ev: np.ndarray, mant: np.ndarray) -> np.ndarray:
    """Magnitude code of 2^ev * (1 + mant/2^bits) for ev in -22..15 (denormals: 2^ev)."""
    neg = (ev < 0).astype(np.int64)
    a = np.abs(ev)
    return np.select(
        [ev < -15, a == 0, a == 1, a <= 3, a <= 7],
        [ev + 23,
         0x08 | mant,
         0x10 | (neg << 3) | mant,
         0x20 | (neg << 4) | ((a - 2) << 3) | mant,
         0x40 | (neg << 4) | ((a - 4) << 2) | mant],
        0x60 | (neg << 4) | ((a - 8) << 1) | mant)


def encode_hifloat8(x, round_mode: str = "round", *, saturate: bool = False,
                    nan_to_zero: bool = False) -> np.ndarray:
    """float32 -> HIFLOAT8 codes (uint8), following the AscendC Cast pseudo-code.

    ``round_mode``: "round" (CAST_ROUND, ties away from zero; equals Huawei's en_dtypes) or
    "hybrid" (CAST_HYBRID: for |exponent| >= 4 round up iff the 14 dropped bits from the rounding
    bit are >= the input's 14 least significant bits; exact values stay). Overflow (>= 1.25*2^15
    after rounding) gives inf 0x6F/0xEF, or +-32768 (0x6E/0xEE) with ``saturate``. NaN -> 0x80, or
    0x00 with ``nan_to_zero``. There is no -0: zero and |x| < 2^-23 give 0x00.
    AddRmsNormDynamicQuant on Ascend 950 uses round_mode="round", saturate=True.
    """
    _check_mode(round_mode, ("round", "hybrid"))
    x = _f32(x)
    bits = x.view(np.uint32).astype(np.int64)
    sign = (bits >> 31) << 7
    ev = ((bits >> 23) & 0xFF) - 127
    m = bits & 0x7FFFFF
    a = np.abs(ev)
    man_bits = np.select([ev < -15, a <= 3, a <= 7], [0, 3, 2], 1)
    drop = 23 - man_bits
    up = (m >> (drop - 1)) & 1                          # ties (and above) away from zero
    if round_mode == "hybrid":
        thr = m & 0x3FFF                                # the input's 14 least significant bits
        frac = (m >> (drop - 14)) & 0x3FFF              # 14 dropped bits from the rounding bit
        exact = (m & ((1 << drop) - 1)) == 0
        up = np.where(a >= 4, (frac >= thr) & ~exact, up)
    mant = (m >> drop) + up
    carry = (mant >> man_bits) != 0
    ev = ev + carry
    mant = np.where(carry, 0, mant)
    code = _hif8_code(np.clip(ev, -22, 15), mant)
    inf = _HIF8_MAX if saturate else _HIF8_INF
    code = np.where((ev > 15) | (code == _HIF8_INF), inf, code)
    # [2^-23, 2^-22): the smallest denormal (ROUND always; HYBRID when {1, m[22:10]} >= thr)
    e23 = np.ones_like(code) if round_mode == "round" else \
        ((0x2000 | (m >> 10)) >= (m & 0x3FFF)).astype(np.int64)
    orig_ev = ((bits >> 23) & 0xFF) - 127
    code = np.where(orig_ev == -23, e23, code)
    code = np.where(orig_ev < -23, 0, code)
    code = np.where(orig_ev > 15, inf, code)            # includes +-inf
    code = np.where(code == 0, 0, code | sign)          # no -0
    code = np.where(np.isnan(x), 0 if nan_to_zero else _HIF8_NAN, code)
    return code.astype(np.uint8)


def _hif8_table() -> np.ndarray:
    table = np.zeros(256, np.float32)
    for c in range(256):
        mag = c & 0x7F
        s = -1.0 if c & 0x80 else 1.0
        if c == _HIF8_NAN:
            table[c] = np.nan
        elif mag == _HIF8_INF:
            table[c] = s * np.inf
        elif mag < 0x08:
            table[c] = 0.0 if mag == 0 else s * 2.0 ** (mag - 23)
        else:
            if mag >= 0x60:
                neg, a, bits, man = (mag >> 4) & 1, 8 + ((mag >> 1) & 7), 1, mag & 1
            elif mag >= 0x40:
                neg, a, bits, man = (mag >> 4) & 1, 4 + ((mag >> 2) & 3), 2, mag & 3
            elif mag >= 0x20:
                neg, a, bits, man = (mag >> 4) & 1, 2 + ((mag >> 3) & 1), 3, mag & 7
            elif mag >= 0x10:
                neg, a, bits, man = (mag >> 3) & 1, 1, 3, mag & 7
            else:
                neg, a, bits, man = 0, 0, 3, mag & 7
            table[c] = s * 2.0 ** (-a if neg else a) * (1 + man / 2 ** bits)
    return table


_HIF8_TABLE = _hif8_table()


def decode_hifloat8(codes) -> np.ndarray:
    """HIFLOAT8 codes -> float32 (exact; 0x80 -> NaN, 0x6F/0xEF -> +-inf)."""
    return _HIF8_TABLE[np.asarray(codes, dtype=np.uint8)]


# ---------------------------------------------------------------------------------------------
# FLOAT4_E2M1 / FLOAT4_E1M2 (one code per byte, low nibble; pack with pack_nibbles)
# ---------------------------------------------------------------------------------------------

_E2M1_VALUES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
_E1M2_VALUES = np.arange(8, dtype=np.float64) * 0.25


def _fp4_encode(x, round_mode: str, values: np.ndarray, step_of) -> np.ndarray:
    _check_mode(round_mode)
    x = _f32(x)
    with np.errstate(invalid="ignore"):      # signalling NaNs raise "invalid" when widened
        x64 = x.astype(np.float64)
        step = step_of(np.abs(x64))              # the grid's spacing at |x| (a power of two)
        q = _round_integer(x64 / step, round_mode) * step
        mag = np.minimum(np.abs(q), values[-1])  # saturate (+-inf too)
    code = np.searchsorted(values, np.nan_to_num(mag))
    code = code | (np.signbit(x) << 3)           # keeps -0 and negatives that rounded to 0
    return np.where(np.isnan(x), 0, code).astype(np.uint8)


def encode_float4_e2m1(x, round_mode: str = "rint") -> np.ndarray:
    """float32 -> FLOAT4_E2M1 codes (uint8, 0..15): round onto {0, .5, 1, 1.5, 2, 3, 4, 6} with
    the mode ("floor" moves negatives away from zero: -0.3 -> -0.5), saturate to +-6 (+-inf too),
    keep the sign of zero (0x8), NaN -> 0x0 (ml_dtypes' astype gives 0x8)."""
    return _fp4_encode(x, round_mode, _E2M1_VALUES,
                       lambda a: np.where(a < 2, 0.5, np.where(a < 4, 1.0, 2.0)))


def encode_float4_e1m2(x, round_mode: str = "rint") -> np.ndarray:
    """float32 -> FLOAT4_E1M2 codes (uint8, 0..15): round onto {0, .25, ..., 1.75} (uniform step
    0.25) with the mode, saturate to +-1.75, keep the sign of zero, NaN -> 0x0."""
    return _fp4_encode(x, round_mode, _E1M2_VALUES, lambda a: np.full_like(a, 0.25))


def decode_float4_e2m1(codes) -> np.ndarray:
    """FLOAT4_E2M1 codes (low nibble of each byte) -> float32."""
    c = np.asarray(codes, dtype=np.uint8) & 0xF
    return c.view(ml_dtypes.float4_e2m1fn).astype(np.float32)


def decode_float4_e1m2(codes) -> np.ndarray:
    """FLOAT4_E1M2 codes (low nibble of each byte) -> float32."""
    c = np.asarray(codes, dtype=np.uint8) & 0xF
    value = _E1M2_VALUES[c & 7].astype(np.float32)
    return np.where(c & 8, -value, value)


# ---------------------------------------------------------------------------------------------
# FLOAT8_E8M0
# ---------------------------------------------------------------------------------------------

def encode_float8_e8m0(x, round_mode: str = "floor") -> np.ndarray:
    """float32 -> FLOAT8_E8M0 codes (2^(c-127), uint8). The sign is dropped.

    "floor"/"trunc": the fp32 exponent field (the NPU's bf16 -> e8m0 cast); "ceil": next power of
    two up; "round": nearest, ties up (= ml_dtypes for positive normal input); "rint": nearest,
    ties to the even code. Zero -> 0x00 (ml_dtypes: NaN), +-inf and overflow -> 0xFE, NaN -> 0xFF.
    """
    _check_mode(round_mode)
    x = _f32(x)
    ax = x.view(np.uint32).astype(np.int64) & 0x7FFFFFFF
    e, m = ax >> 23, ax & 0x7FFFFF
    half = 0x400000
    # fp32 subnormals lie between 2^-149 and 2^-126: candidates 2^-127 (code 0) and 2^-126
    if round_mode == "ceil":
        up = np.where(e == 0, ax > half, m != 0)
    elif round_mode == "round":
        up = np.where(e == 0, ax >= 0x600000, m >= half)
    elif round_mode == "rint":
        up = np.where(e == 0, ax > 0x600000, (m > half) | ((m == half) & (e & 1 == 1)))
    else:
        up = np.zeros(ax.shape, bool)
    code = np.minimum(e + up, 0xFE)
    code = np.where(ax == 0x7F800000, 0xFE, code)
    code = np.where(ax > 0x7F800000, 0xFF, code)
    return code.astype(np.uint8)


def decode_float8_e8m0(codes) -> np.ndarray:
    """FLOAT8_E8M0 codes -> float32 (2^(c-127); 0xFF -> NaN)."""
    return np.asarray(codes, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------

def _encode_int(x, bits: int, round_mode: str, saturate: bool, out_dtype) -> np.ndarray:
    _check_mode(round_mode)
    x = _f32(x)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    r = _round_integer(np.where(np.isfinite(x), x, 0).astype(np.float64), round_mode)
    if saturate:
        v = np.clip(r, lo, hi)
    else:                                     # keep the low `bits` bits (two's complement)
        v = np.mod(r, 2.0 ** bits)
        v = np.where(v > hi, v - 2.0 ** bits, v)
    v = np.where(np.isinf(x), np.where(x > 0, hi, lo), v)
    return np.where(np.isnan(x), 0, v).astype(out_dtype)


def encode_int8(x, round_mode: str = "rint", *, saturate: bool = True) -> np.ndarray:
    """float32 -> int8 with the round mode; ``saturate`` clamps to [-128, 127] (the NPU default),
    otherwise the low 8 bits are kept; +-inf -> 127/-128 and NaN -> 0 either way."""
    return _encode_int(x, 8, round_mode, saturate, np.int8)


def encode_int4(x, round_mode: str = "rint", *, saturate: bool = True) -> np.ndarray:
    """float32 -> int4 values -8..7 (as int8; pack with :func:`pack_nibbles`); rules as int8."""
    return _encode_int(x, 4, round_mode, saturate, np.int8)


def encode_int32(x, round_mode: str = "rint", *, saturate: bool = True) -> np.ndarray:
    """float32 -> int32 with the round mode; rules as :func:`encode_int8`."""
    return _encode_int(x, 32, round_mode, saturate, np.int32)


# ---------------------------------------------------------------------------------------------
# 4-bit packing
# ---------------------------------------------------------------------------------------------

def pack_nibbles(values) -> np.ndarray:
    """Pack 4-bit values (codes 0..15 or int4 -8..7; flattened in C order) two per byte, element
    2k in the low nibble. An odd count leaves the last byte's high nibble 0. INT4 outputs that the
    NPU hands out as INT32 are these bytes read as little-endian int32 words."""
    v = (np.ravel(np.asarray(values)).astype(np.int64) & 0xF).astype(np.uint8)
    if v.size % 2:
        v = np.append(v, np.uint8(0))
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def unpack_nibbles(packed, n: int | None = None) -> np.ndarray:
    """Inverse of :func:`pack_nibbles`: the first ``n`` (default all) 4-bit codes as uint8."""
    p = np.ravel(np.asarray(packed, dtype=np.uint8))
    out = np.empty(p.size * 2, np.uint8)
    out[0::2] = p & 0xF
    out[1::2] = p >> 4
    return out if n is None else out[:n]


def unpack_int4(packed, n: int | None = None) -> np.ndarray:
    """Packed INT4 -> int8 values -8..7 (sign-extended)."""
    c = unpack_nibbles(packed, n).astype(np.int8)
    return np.where(c >= 8, c - 16, c).astype(np.int8)


# ---------------------------------------------------------------------------------------------
# By name
# ---------------------------------------------------------------------------------------------

_ENCODERS = {
    "float16": encode_float16, "bfloat16": encode_bfloat16,
    "float8_e4m3fn": encode_float8_e4m3fn, "float8_e5m2": encode_float8_e5m2,
    "hifloat8": encode_hifloat8, "float4_e2m1": encode_float4_e2m1,
    "float4_e1m2": encode_float4_e1m2, "float8_e8m0": encode_float8_e8m0,
    "int8": encode_int8, "int4": encode_int4, "int32": encode_int32,
}
_DECODERS = {
    "float16": lambda c: np.asarray(c, np.uint16).view(np.float16).astype(np.float32),
    "bfloat16": lambda c: np.asarray(c, np.uint16).view(ml_dtypes.bfloat16).astype(np.float32),
    "float8_e4m3fn": lambda c: np.asarray(c, np.uint8).view(ml_dtypes.float8_e4m3fn)
    .astype(np.float32),
    "float8_e5m2": lambda c: np.asarray(c, np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float32),
    "hifloat8": decode_hifloat8, "float4_e2m1": decode_float4_e2m1,
    "float4_e1m2": decode_float4_e1m2, "float8_e8m0": decode_float8_e8m0,
}
#: Format names accepted by :func:`encode` / :func:`decode` (integers: encode only).
FORMATS = tuple(_ENCODERS)


def encode(x, fmt: str, **options) -> np.ndarray:
    """``encode(x, "hifloat8", round_mode="hybrid", saturate=True)`` -> codes; options are those
    of the format's encoder."""
    if fmt not in _ENCODERS:
        raise InvalidArgumentError(f"unknown format {fmt!r}; known: {FORMATS}")
    return _ENCODERS[fmt](x, **options)


def decode(codes, fmt: str) -> np.ndarray:
    """Codes of a float format -> float32."""
    if fmt not in _DECODERS:
        raise InvalidArgumentError(f"no decoder for {fmt!r}; known: {tuple(_DECODERS)}")
    return _DECODERS[fmt](codes)
