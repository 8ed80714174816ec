"""Scale algorithms of GroupedDynamicMxQuant (spec §4.1–§4.4) and the tiling-derived parameters
that select them (spec §2.2, §4.3, §7.3).

Every algorithm maps one per-block statistic to (S, Rb): S is the E8M0 scale code (uint8) and Rb the
reciprocal scale as bfloat16 bits (uint16) that the kernel multiplies each element by. The
arithmetic is done on integers exactly as the kernel's 16/32-bit register code does, including its
wrap-arounds, so unusual inputs (negative dstTypeMax, huge maxima) give the kernel's answer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BF16_NAN = 0x7F81          # the kernel's NaN reciprocal
BF16_TWO_POW_M127 = 0x0040  # bf16 subnormal 2^-127: reciprocal of scale 2^127 (S = 254)
BF16_EXP_BIAS = 0x7F00      # 127 << 7
BF16_EXP_MASK = 0x7F80
FLT_EPSILON = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class DstFormat:
    name: str
    acl: int          # aclDataType
    emax: int         # exponent of the largest power of two in the format
    dmax: float       # largest finite value
    is_fp4: bool
    tpl_class: int    # tiling-key dstType: 0 FP8, 1 E2M1, 2 E1M2


DST_FORMATS = {
    f.name: f for f in (
        DstFormat("float8_e5m2", 35, 15, 57344.0, False, 0),
        DstFormat("float8_e4m3fn", 36, 8, 448.0, False, 0),
        DstFormat("float4_e2m1", 40, 2, 6.0, True, 1),
        DstFormat("float4_e1m2", 41, 0, 1.75, True, 2),
    )
}
DST_FORMATS_BY_ACL = {f.acl: f for f in DST_FORMATS.values()}


def dst_format(dst_type) -> DstFormat:
    """A DstFormat from its name ("float8_e4m3fn") or aclDataType value (36)."""
    if isinstance(dst_type, DstFormat):
        return dst_type
    if isinstance(dst_type, str):
        return DST_FORMATS[dst_type]
    return DST_FORMATS_BY_ACL[int(dst_type)]


# --- tiling-derived parameters -------------------------------------------------------------------

def narrow_to_float(value: float) -> np.float32:
    """double -> float as C does it (round to nearest; beyond FLT_MAX -> +-Inf)."""
    with np.errstate(over="ignore"):
        return np.float32(value)


def is_float_equal(a: float, b: float) -> bool:
    """Ops::Base::IsFloatEqual (opbase math_util.h): NaN never equal; if either is +-Inf, equal iff
    the signs match; else |a - b| <= FLT_EPSILON (absolute)."""
    a, b = float(a), float(b)
    if np.isnan(a) or np.isnan(b):
        return False
    if np.isinf(a) or np.isinf(b):
        return bool(np.signbit(a) == np.signbit(b))
    return abs(a - b) <= FLT_EPSILON


def inv_dst_type_max(dst_type, dst_type_max: float) -> np.float32:
    """Tiling's invDstTypeMax: float(1.0 / (double)d) with d the float-narrowed dstTypeMax, or
    1/Dmax of the format when d equals 0 in the IsFloatEqual sense (so +Inf also counts as 0)."""
    fmt = dst_format(dst_type)
    d = narrow_to_float(dst_type_max)
    divisor = fmt.dmax if is_float_equal(d, 0.0) else float(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float32(np.float64(1.0) / np.float64(divisor))


def dst_type_max_template(dst_type, dst_type_max: float) -> int:
    """Tiling template for scale_alg 2 (spec §4.3): 1 if (d == 0 and E2M1) or d == 6; 2 if d == 7;
    3 if d == 1.875; else 0 (the generic path). Equality is IsFloatEqual on the narrowed d."""
    fmt = dst_format(dst_type)
    d = narrow_to_float(dst_type_max)
    if (is_float_equal(d, 0.0) and fmt.name == "float4_e2m1") or is_float_equal(d, 6.0):
        return 1
    if is_float_equal(d, 7.0):
        return 2
    if is_float_equal(d, 1.875):
        return 3
    return 0


# Template -> value added to the bf16 max before taking its exponent (spec §4.3 step 3).
DYNAMIC_RANGE_ADD = {1: 0x3F, 2: 0x1F, 3: 0x0F}

# Index of each round mode in the kernel's declared list (FLOOR, ROUND, RINT).
_ROUND_MODE_TPL_INDEX = {"floor": 0, "round": 1, "rint": 2}


def tiling_key(scale_alg: int, dst_type, round_mode: str, dst_type_max: float = 0.0) -> int:
    """The tiling key (spec §7.3). Packing inferred from the four published keys: fields scaleAlg
    (2 bits), dstTypeMax template (3), dstType class (2), round-mode list index (3), LSB first."""
    fmt = dst_format(dst_type)
    template = dst_type_max_template(fmt, dst_type_max)
    return (scale_alg | template << 2 | fmt.tpl_class << 5
            | _ROUND_MODE_TPL_INDEX[round_mode] << 7)


# --- the three algorithms -------------------------------------------------------------------------

def scale_ocp(exp_max: np.ndarray, emax: int) -> tuple[np.ndarray, np.ndarray]:
    """scale_alg 0 (spec §4.1, G2). exp_max: per-block max of biased exponent fields (0..255)."""
    field = np.asarray(exp_max, dtype=np.int64) << 7
    emax_field = emax << 7
    finite = field != BF16_EXP_MASK
    too_small = field <= emax_field
    shifted = (field - emax_field) & 0xFFFF            # uint16 Sub wraps
    s = np.where(finite, shifted >> 7, 0xFF)
    s = np.where(too_small, 0, s) & 0xFF
    rb = (BF16_EXP_BIAS - shifted) & 0xFFFF
    rb = np.where(finite, rb, BF16_NAN)
    rb = np.where(too_small, 0, rb)
    rb = np.where(shifted == BF16_EXP_BIAS, BF16_TWO_POW_M127, rb)
    return s.astype(np.uint8), rb.astype(np.uint16)


def scale_cublas(amax: np.ndarray, inv: np.float32, subnormal_rule: bool
                 ) -> tuple[np.ndarray, np.ndarray]:
    """scale_alg 1 (subnormal_rule=True) and scale_alg 2's generic template T0 (False), spec §4.2.

    amax: per-block float32 max of |x|. The exponent is read with a logical 32-bit shift, so a
    negative product (negative dstTypeMax) carries its sign bit into the exponent, as on the NPU.
    """
    with np.errstate(all="ignore"):
        s = (np.asarray(amax, dtype=np.float32) * np.float32(inv)).astype(np.float32)
    bits = s.view(np.uint32).astype(np.int64)
    exponent = bits >> 23
    mantissa = bits & 0x7FFFFF
    bump = (exponent > 0) & (exponent < 254) & (mantissa > 0)
    if subnormal_rule:
        bump ^= (exponent == 0) & (mantissa > 0x400000)
    e = np.where(bump, exponent + 1, exponent) & 0xFFFF
    field = (e << 7) & 0xFFFF
    s_code = e & 0xFF
    rb = (BF16_EXP_BIAS - field) & 0xFFFF
    rb = np.where(field != BF16_EXP_MASK, rb, BF16_NAN)
    rb = np.where(field == BF16_EXP_BIAS, BF16_TWO_POW_M127, rb)
    return s_code.astype(np.uint8), rb.astype(np.uint16)


def scale_dynamic_range(bf16_abs_max: np.ndarray, emax: int, template: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """scale_alg 2, templates T1..T3 (spec §4.3). bf16_abs_max: per-block unsigned max of
    (bf16 bits & 0x7FFF)."""
    xm = np.asarray(bf16_abs_max, dtype=np.int64)
    emax_field = emax << 7
    field = xm & BF16_EXP_MASK
    finite = field != BF16_EXP_MASK
    nonzero = field != 0
    too_small = field < emax_field
    bumped = ((xm + DYNAMIC_RANGE_ADD[template]) & 0xFFFF) & BF16_EXP_MASK
    bumped = np.where(too_small, emax_field, bumped)
    shared = (bumped - emax_field) & 0xFFFF
    s = np.where(finite, shared, BF16_EXP_MASK)
    s = np.where(nonzero, s, 0)
    s = (s >> 7) & 0xFF
    rb = (BF16_EXP_BIAS - shared) & 0xFFFF
    rb = np.where(finite, rb, BF16_NAN)
    rb = np.where(nonzero, rb, 0)
    rb = np.where(shared == BF16_EXP_BIAS, BF16_TWO_POW_M127, rb)
    return s.astype(np.uint8), rb.astype(np.uint16)
