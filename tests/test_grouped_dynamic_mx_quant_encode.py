"""The kernel's own element conversions (native_stubs/src/numerics/num_inline.h, specialised for
speed) against the project's general conversions (numerics.h), value by value, through the test
hooks pyaclnn_stub_gmq_encode / pyaclnn_stub_gmq_encode_pow2 and the pyaclnn_stub_num_* exports of
libopapi: every bf16 pattern, a million random float32 patterns, and the rounding boundaries of each
format (and the same inputs against the independent reference, tests/reference/formats.py); for
the 16-bit-lane conversion of a bf16 times a power of two, every bf16 pattern times
every column factor it accepts. The one intended difference: the kernel's E2M1 path turns +-Inf
into 0x0 (spec §4.7), the general cast into +-max."""
from __future__ import annotations

import ctypes
import functools
import os

import ml_dtypes
import numpy as np
import pytest
from reference import formats as R

ACL = {"float8_e4m3fn": 36, "float8_e5m2": 35, "float4_e2m1": 40, "float4_e1m2": 41}
NUM_NAME = {"float8_e4m3fn": "fp8_e4m3fn", "float8_e5m2": "fp8_e5m2", "float4_e2m1": "fp4_e2m1",
            "float4_e1m2": "fp4_e1m2"}
NUM_SAT, NUM_NAN_TO_ZERO = 0x10, 0x20
MODES = {"rint": 0, "round": 1, "floor": 2}     # GMQ_* and num_round share these values


@functools.lru_cache(maxsize=None)
def lib() -> ctypes.CDLL:
    libdir = os.environ.get("PYACLNN_STUB_LIBDIR")
    if not libdir:
        from pyaclnn import _loader
        libdir = _loader.stub_library_dir()
    if not libdir:
        pytest.skip("no stub library directory (set PYACLNN_STUB_LIBDIR)")
    handle = ctypes.CDLL(os.path.join(libdir, "libopapi.so"))
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    handle.pyaclnn_stub_gmq_encode.argtypes = [ctypes.c_int, ctypes.c_int, vp, vp, sz]
    handle.pyaclnn_stub_gmq_encode.restype = ctypes.c_int
    handle.pyaclnn_stub_gmq_encode_pow2.argtypes = [ctypes.c_int, vp, vp, vp, vp, vp, sz]
    handle.pyaclnn_stub_gmq_encode_pow2.restype = ctypes.c_int
    for name in NUM_NAME.values():
        f = getattr(handle, f"pyaclnn_stub_num_f32_to_{name}")
        f.argtypes, f.restype = [vp, vp, sz, ctypes.c_int], ctypes.c_int
    return handle


def kernel_codes(values: np.ndarray, dst: str, mode: str) -> np.ndarray:
    values = np.ascontiguousarray(values, dtype=np.float32)
    out = np.empty(values.size, np.uint8)
    assert lib().pyaclnn_stub_gmq_encode(ACL[dst], MODES[mode], values.ctypes.data, out.ctypes.data,
                                         values.size) == 0
    return out


def numerics_codes(values: np.ndarray, dst: str, mode: str) -> np.ndarray:
    values = np.ascontiguousarray(values, dtype=np.float32)
    out = np.empty(values.size, np.uint8)
    flags = NUM_SAT | NUM_NAN_TO_ZERO if dst.startswith("float8") else 0
    f = getattr(lib(), f"pyaclnn_stub_num_f32_to_{NUM_NAME[dst]}")
    assert f(values.ctypes.data, out.ctypes.data, values.size, MODES[mode] | flags) == 0
    return out


def boundaries() -> np.ndarray:
    """Every grid value of every format, the midpoints between neighbours, and one float32 ulp
    either side of each, scaled by 2^-20 ... 2^20 (covers subnormal, normal and overflow ranges)."""
    grids = [np.arange(0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32),
             np.arange(0x7C, dtype=np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float32),
             np.array([0, .5, 1, 1.5, 2, 3, 4, 6], np.float32), np.arange(8, dtype=np.float32) * 0.25]
    points = []
    for g in grids:
        g = np.unique(g)
        points += [g, (g[:-1] + g[1:]) / 2, [g[-1] * 1.0625, g[-1] * 2]]
    base = np.concatenate([np.asarray(p, np.float32) for p in points])
    base = np.concatenate([base, -base])
    scaled = np.concatenate([base * np.float32(2.0 ** k) for k in range(-20, 21)])
    bits = scaled.view(np.uint32)
    return np.concatenate([scaled, (bits + 1).view(np.float32), (bits - 1).view(np.float32)])


def all_inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    bf16 = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32)
    random = rng.integers(0, 1 << 32, size=1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([bf16, random, boundaries()])


CASES = [("float8_e4m3fn", "rint"), ("float8_e5m2", "rint")] + [
    (dst, mode) for dst in ("float4_e2m1", "float4_e1m2") for mode in MODES]


@pytest.mark.parametrize("dst, mode", CASES)
def test_kernel_conversion_equals_numerics(dst, mode):
    values = all_inputs()
    got, want = kernel_codes(values, dst, mode), numerics_codes(values, dst, mode)
    infinite = np.isinf(values)
    if dst == "float4_e2m1":
        assert np.all(got[infinite] == 0)             # the kernel's pre-rounding: Inf -> NaN -> 0x0
        got, want, values = got[~infinite], want[~infinite], values[~infinite]
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(float(values[i]), hex(values[i:i + 1].view(np.uint32)[0]), int(got[i]),
                            int(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("dst, mode", CASES)
def test_kernel_conversion_equals_reference(dst, mode):
    """The same inputs against the independent reference (tests/reference/formats.py), so the
    kernel's conversions are not only compared with other code under test."""
    values = all_inputs()
    got = kernel_codes(values, dst, mode)
    flags = R.SAT | R.NAN_TO_ZERO if dst.startswith("float8") else 0
    want = R.encode_float(R.FLOAT_FORMATS[NUM_NAME[dst]], values, MODES[mode] | flags)
    if dst == "float4_e2m1":                          # spec §4.7: +-Inf -> NaN -> 0x0 in the kernel
        want = np.where(np.isinf(values), 0, want)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(float(values[i]), hex(values[i:i + 1].view(np.uint32)[0]), int(got[i]),
                            int(want[i])) for i in bad[:5]]


def test_hook_rejects_bad_arguments():
    x = np.zeros(1, np.float32)
    out = np.zeros(1, np.uint8)
    assert lib().pyaclnn_stub_gmq_encode(1, 0, x.ctypes.data, out.ctypes.data, 1) == -1
    assert lib().pyaclnn_stub_gmq_encode(36, 3, x.ctypes.data, out.ctypes.data, 1) == -1


# ---- bf16 x times a column factor r, in 16-bit lanes (num_inl_pow2_*) ---------------------------

# Largest accepted exponent R of r = 2^R (num_inline.h: e0 - man - 2, e0 the float32 exponent field
# of the format's smallest normal).
POW2_MAX_R = {"float8_e4m3fn": 121 - 3 - 2, "float8_e5m2": 113 - 2 - 2, "float4_e2m1": 127 - 1 - 2,
              "float4_e1m2": 127 - 2 - 2}


def pow2_codes(x: np.ndarray, r: np.ndarray, dst: str):
    """The hook treats each element as a column of its own (x[i] is the column's largest value)."""
    x, r = np.ascontiguousarray(x, np.uint16), np.ascontiguousarray(r, np.uint16)
    codes, accepted, exact = (np.empty(x.size, np.uint8) for _ in range(3))
    assert lib().pyaclnn_stub_gmq_encode_pow2(ACL[dst], x.ctypes.data, r.ctypes.data, codes.ctypes.data,
                                              accepted.ctypes.data, exact.ctypes.data, x.size) == 0
    return codes, accepted.astype(bool), exact.astype(bool)


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def pow2_factor(R: int) -> int:
    """bf16 bits of 2^R, R in [-127, 127] (2^-127 is the subnormal 0x0040)."""
    return 0x0040 if R == -127 else (R + 127) << 7


@pytest.mark.parametrize("dst", list(ACL))
def test_pow2_conversion_accepts_the_documented_column_factors(dst):
    factors = np.arange(1 << 16, dtype=np.uint16)
    _, accepted, _ = pow2_codes(np.zeros(factors.size, np.uint16), factors, dst)
    values = bf16_to_f32(factors)
    with np.errstate(divide="ignore"):
        exponent = np.where(values > 0, np.floor(np.log2(np.where(values > 0, values, 1))), 0)
    power = (values > 0) & np.isfinite(values) & (np.exp2(exponent) == values) & (exponent >= -127)
    want = (factors == 0) | (power & (exponent <= POW2_MAX_R[dst]))     # +0 and small powers of two
    assert np.array_equal(accepted, want), factors[accepted != want][:8]


@pytest.mark.parametrize("dst", list(ACL))
def test_pow2_conversion_equals_numerics_where_reported_exact(dst):
    x = np.arange(1 << 16, dtype=np.uint16)
    factors = [pow2_factor(e) for e in range(-127, POW2_MAX_R[dst] + 1)] + [0x0000]
    sampled = set(factors[::8]) | {factors[-2], 0x0000}
    exact_share = []
    for r in factors:
        got, accepted, exact = pow2_codes(x, np.full(x.size, r, np.uint16), dst)
        with np.errstate(invalid="ignore", over="ignore"):
            product = bf16_to_f32(x) * bf16_to_f32(np.array([r], np.uint16))[0]
        # columns are refused only for |x| >= 2^127 (Inf and NaN included) and, E2M1, float32 overflow
        refused = (x & 0x7FFF) >= 0x7F00
        if dst == "float4_e2m1":
            refused |= np.isinf(product)
        assert np.array_equal(accepted, ~refused), (hex(r), x[accepted == refused][:5])
        want = numerics_codes(product, dst, "rint")
        bad = np.flatnonzero(exact & (got != want))
        assert bad.size == 0, [(hex(r), hex(int(x[i])), int(got[i]), int(want[i])) for i in bad[:5]]
        if r in sampled:    # and against the independent reference, on a sample of the factors
            flags = R.SAT | R.NAN_TO_ZERO if dst.startswith("float8") else 0
            ref = R.encode_float(R.FLOAT_FORMATS[NUM_NAME[dst]], product, R.RINT | flags)
            bad = np.flatnonzero(exact & (got != ref))
            assert bad.size == 0, [(hex(r), hex(int(x[i])), int(got[i]), int(ref[i])) for i in bad[:5]]
        assert exact[(x & 0x7FFF) == 0].all()          # x = +-0 never needs the exact loop
        if dst.startswith("float4"):
            assert np.array_equal(exact, accepted)      # FP4 codes of accepted columns are exact
        exact_share.append(exact[accepted].mean())
    # what FP8 reports (sent to the exact loop) is a narrow band: the speed of the kernel rests on it
    assert min(exact_share) > 0.95, min(exact_share)
