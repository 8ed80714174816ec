"""aclFloat16ToFloat / aclFloatToFloat16 / aclDataTypeSize against references written from the spec
(abi.md §1.7, §2.1): IEEE binary16 via NumPy for the ordinary range, the vendor's documented quirks
at the extremes."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import capi


def reference_half_to_float(bits: int) -> float:
    """IEEE binary16, except that exponent 31 is an ordinary exponent (no Inf/NaN)."""
    sign = -1.0 if bits & 0x8000 else 1.0
    exp, man = (bits >> 10) & 0x1F, bits & 0x3FF
    if exp == 31:
        return sign * 2.0 ** 16 * (1 + man / 1024)
    return float(np.array([bits], np.uint16).view(np.float16)[0])


def reference_float_to_half(value: np.float32) -> int:
    """Round to nearest even (NumPy); overflow, Inf and NaN saturate to +-65504 keeping the sign."""
    sign = 0x8000 if np.signbit(value) else 0
    with np.errstate(over="ignore", invalid="ignore"):
        half = np.float32(value).astype(np.float16)
    if not np.isfinite(half):
        return sign | 0x7BFF
    return int(np.array([half]).view(np.uint16)[0])


@pytest.mark.parametrize("bits, expected", [
    (0x7C00, 65536.0),      # +Inf is not Inf
    (0xFC00, -65536.0),
    (0x7E00, 98304.0),      # the canonical NaN is a number
    (0x7BFF, 65504.0),
    (0x3C00, 1.0),
    (0x0001, 2.0 ** -24),   # smallest subnormal
    (0x8000, -0.0),
])
def test_half_to_float_documented_values(bits, expected):
    got = capi.aclFloat16ToFloat(bits)
    assert got == expected and np.signbit(got) == np.signbit(expected)


def test_half_to_float_every_bit_pattern():
    got = np.array([capi.aclFloat16ToFloat(b) for b in range(1 << 16)], np.float32)
    want = np.array([reference_half_to_float(b) for b in range(1 << 16)], np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("value, bits", [
    (1.0, 0x3C00),
    (65504.0, 0x7BFF),
    (65520.0, 0x7BFF),           # IEEE would round this to +Inf
    (1e9, 0x7BFF),
    (-1e9, 0xFBFF),
    (float("inf"), 0x7BFF),
    (float("-inf"), 0xFBFF),
    (float("nan"), 0x7BFF),
    (-float("nan"), 0xFBFF),
    (2.0 ** -24, 0x0001),        # smallest subnormal
    (2.0 ** -25, 0x0000),        # exactly half of it: ties to even
    (2.0 ** -25 * 1.5, 0x0001),
    (-0.0, 0x8000),
    (1.0 + 2.0 ** -11, 0x3C00),  # tie between 1 and the next half: even
    (1.0 + 3 * 2.0 ** -11, 0x3C02),
])
def test_float_to_half_documented_values(value, bits):
    assert capi.aclFloatToFloat16(value) == bits


def test_float_to_half_random_and_boundary_patterns():
    rng = np.random.default_rng(1234)
    patterns = rng.integers(0, 1 << 32, size=60_000, dtype=np.uint64).astype(np.uint32)
    # Dense coverage of the half range: exponents 100..145 with random mantissas.
    exps = rng.integers(100, 146, size=40_000, dtype=np.uint32)
    mans = rng.integers(0, 1 << 23, size=40_000, dtype=np.uint32)
    signs = rng.integers(0, 2, size=40_000, dtype=np.uint32) << 31
    values = np.concatenate([patterns, signs | exps << 23 | mans]).view(np.float32)
    got = np.array([capi.aclFloatToFloat16(float(v)) for v in values], np.uint16)
    want = np.array([reference_float_to_half(v) for v in values], np.uint16)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(values[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


# Bytes per element as the real aclDataTypeSize reports them (abi.md §2.1).
DTYPE_SIZES = {
    "ACL_DT_UNDEFINED": 0, "ACL_FLOAT": 4, "ACL_FLOAT16": 2, "ACL_INT8": 1, "ACL_INT32": 4,
    "ACL_UINT8": 1, "ACL_INT16": 2, "ACL_UINT16": 2, "ACL_UINT32": 4, "ACL_INT64": 8,
    "ACL_UINT64": 8, "ACL_DOUBLE": 8, "ACL_BOOL": 1, "ACL_STRING": 0, "ACL_COMPLEX64": 8,
    "ACL_COMPLEX128": 16, "ACL_BF16": 2, "ACL_INT4": 1, "ACL_UINT1": 1, "ACL_COMPLEX32": 4,
    "ACL_HIFLOAT8": 1, "ACL_FLOAT8_E5M2": 1, "ACL_FLOAT8_E4M3FN": 1, "ACL_FLOAT8_E8M0": 1,
    "ACL_FLOAT6_E3M2": 8, "ACL_FLOAT6_E2M3": 8, "ACL_FLOAT4_E2M1": 8, "ACL_FLOAT4_E1M2": 8,
}


@pytest.mark.parametrize("name, size", sorted(DTYPE_SIZES.items()))
def test_data_type_size(name, size):
    assert capi.aclDataTypeSize(getattr(capi, name)) == size


@pytest.mark.parametrize("value", [5, 14, 28, 42, 1000, -2])
def test_data_type_size_of_unknown_values_is_the_default_8(value):
    assert capi.aclDataTypeSize(value) == 8
