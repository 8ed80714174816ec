"""Encoding float32 -> every narrow format, every round mode and flag: C == reference == codecs.
Both the C conversions and pyaclnn.codecs are compared with the independent reference
(tests/reference/formats.py); codecs is also compared with C, so a difference names its side.

Inputs for each format: every fp16 and every bf16 bit pattern (131072 float32 values), the
float32 values at and +-2 ulps around every representable value and every midpoint between
neighbours of the target (both signs, the overflow point included), specials (+-0, +-inf, NaNs
with payloads, float32 subnormals and extremes) and random float32 bit patterns.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from pyaclnn import codecs
from reference import formats as R
from test_numerics_lib import c_encode

FLAG_SETS = (0, R.SAT, R.NAN_TO_ZERO, R.SAT | R.NAN_TO_ZERO)
FLOAT_ROUNDS = {
    "fp16": (R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC, R.ODD),
    "bf16": (R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC, R.ODD),
    "fp8_e4m3fn": (R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC),
    "fp8_e5m2": (R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC),
    "fp4_e2m1": (R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC),
    "fp4_e1m2": (R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC),
}
INT_BITS = {"int32": 32, "int8": 8, "int4": 4}
ROUNDS5 = (R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC)


@functools.lru_cache(maxsize=None)
def inputs(grid_name: str | None = None) -> np.ndarray:
    parts = [R.all_fp16_and_bf16_as_f32(), R.specials(), R.random_f32(50_000)]
    if grid_name is not None:
        grid = {"hif8": R.HIF8_GRID, "e8m0": R.E8M0_GRID}.get(grid_name)
        grid = grid if grid is not None else R.FLOAT_FORMATS[grid_name].grid
        parts.append(R.boundary_sweep(grid, max_points=20_000))
    return np.concatenate(parts)


def _mismatch_report(x, got, want):
    bad = np.nonzero(got != want)[0]
    return [(float(x[i]), hex(int(x[i:i + 1].view(np.uint32)[0])), hex(int(got[i])),
             hex(int(want[i]))) for i in bad[:5]], len(bad)


def _assert_same(x, got, want):
    got, want = np.asarray(got, np.int64), np.asarray(want, np.int64)
    if not np.array_equal(got, want):
        first, count = _mismatch_report(x, got, want)
        pytest.fail(f"{count} mismatches, first (x, bits, got, want): {first}")


# ---- C against the reference -----------------------------------------------------------------

@pytest.mark.parametrize("name,rnd", [(n, r) for n, rs in FLOAT_ROUNDS.items() for r in rs])
def test_float_formats_c_matches_reference(name, rnd):
    fmt = R.FLOAT_FORMATS[name]
    x = inputs(name)
    for flags in FLAG_SETS:
        _assert_same(x, c_encode(name, x, rnd | flags), R.encode_float(fmt, x, rnd | flags))


@pytest.mark.parametrize("rnd", [R.ROUND, R.HYBRID], ids=["round", "hybrid"])
def test_hifloat8_c_matches_reference(rnd):
    x = inputs("hif8")
    for flags in FLAG_SETS:
        _assert_same(x, c_encode("hif8", x, rnd | flags), R.encode_hif8(x, rnd | flags))


@pytest.mark.parametrize("rnd", ROUNDS5, ids=[R.ROUND_NAMES[r] for r in ROUNDS5])
def test_e8m0_c_matches_reference(rnd):
    x = inputs("e8m0")
    _assert_same(x, c_encode("e8m0", x, rnd), R.encode_e8m0(x, rnd))


@pytest.mark.parametrize("name", sorted(INT_BITS))
@pytest.mark.parametrize("rnd", ROUNDS5, ids=[R.ROUND_NAMES[r] for r in ROUNDS5])
def test_integers_c_matches_reference(name, rnd):
    bits = INT_BITS[name]
    # around every integer and half-integer of the range and its edges, plus the usual inputs
    k = np.arange(-(2 ** min(bits, 12)) - 4, 2 ** min(bits, 12) + 4, dtype=np.float64)
    edges = np.array([2.0 ** (bits - 1), 2.0 ** 31, 2.0 ** 32, 2.0 ** 40, 2.0 ** 63, 2.0 ** 64])
    pts = np.concatenate([k, k + 0.5, edges, edges - 0.5, -edges, 0.5 - edges]).astype(np.float32)
    near = [pts, np.nextafter(pts, np.float32(np.inf)), np.nextafter(pts, np.float32(-np.inf))]
    x = np.concatenate([inputs()] + near)
    for flags in (0, R.SAT):
        _assert_same(x, c_encode(name, x, rnd | flags), R.encode_int(x, bits, rnd | flags))


# ---- pyaclnn.codecs against the reference and C -----------------------------------------------------------------

@pytest.mark.parametrize("name,py_name", [("fp16", "float16"), ("bf16", "bfloat16"),
                                          ("fp8_e4m3fn", "float8_e4m3fn"),
                                          ("fp8_e5m2", "float8_e5m2")])
def test_codecs_rint_formats_match_reference_and_c(name, py_name):
    x = inputs(name)
    for saturate in (False, True):
        for nan_to_zero in (False, True):
            mode = R.RINT | (R.SAT if saturate else 0) | (R.NAN_TO_ZERO if nan_to_zero else 0)
            got = codecs.encode(x, py_name, saturate=saturate, nan_to_zero=nan_to_zero)
            _assert_same(x, got, R.encode_float(R.FLOAT_FORMATS[name], x, mode))
            _assert_same(x, got, c_encode(name, x, mode))


@pytest.mark.parametrize("name,py_name", [("fp4_e2m1", "float4_e2m1"),
                                          ("fp4_e1m2", "float4_e1m2")])
@pytest.mark.parametrize("rnd", ROUNDS5, ids=[R.ROUND_NAMES[r] for r in ROUNDS5])
def test_codecs_fp4_match_reference_and_c(name, py_name, rnd):
    x = inputs(name)
    got = codecs.encode(x, py_name, round_mode=R.ROUND_NAMES[rnd])
    _assert_same(x, got, R.encode_float(R.FLOAT_FORMATS[name], x, rnd))
    _assert_same(x, got, c_encode(name, x, rnd))


@pytest.mark.parametrize("rnd", [R.ROUND, R.HYBRID], ids=["round", "hybrid"])
def test_codecs_hifloat8_matches_reference_and_c(rnd):
    x = inputs("hif8")
    for saturate in (False, True):
        for nan_to_zero in (False, True):
            mode = rnd | (R.SAT if saturate else 0) | (R.NAN_TO_ZERO if nan_to_zero else 0)
            got = codecs.encode_hifloat8(x, R.ROUND_NAMES[rnd], saturate=saturate,
                                         nan_to_zero=nan_to_zero)
            _assert_same(x, got, R.encode_hif8(x, mode))
            _assert_same(x, got, c_encode("hif8", x, mode))


@pytest.mark.parametrize("rnd", ROUNDS5, ids=[R.ROUND_NAMES[r] for r in ROUNDS5])
def test_codecs_e8m0_matches_reference_and_c(rnd):
    x = inputs("e8m0")
    got = codecs.encode_float8_e8m0(x, R.ROUND_NAMES[rnd])
    _assert_same(x, got, R.encode_e8m0(x, rnd))
    _assert_same(x, got, c_encode("e8m0", x, rnd))


@pytest.mark.parametrize("name", sorted(INT_BITS))
@pytest.mark.parametrize("rnd", ROUNDS5, ids=[R.ROUND_NAMES[r] for r in ROUNDS5])
def test_codecs_integers_match_reference_and_c(name, rnd):
    x = np.concatenate([inputs(), np.arange(-300, 300, 0.25, dtype=np.float32)])
    for saturate in (False, True):
        got = codecs.encode(x, name, round_mode=R.ROUND_NAMES[rnd],
                            saturate=saturate)
        mode = rnd | (R.SAT if saturate else 0)
        _assert_same(x, got, R.encode_int(x, INT_BITS[name], mode))
        _assert_same(x, got, c_encode(name, x, mode))


def test_codecs_pack_matches_reference_and_roundtrips():
    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 5, 64):
        v = rng.integers(-8, 8, n)
        packed = codecs.pack_nibbles(v)
        assert np.array_equal(packed, R.pack4(v & 0xF))
        assert np.array_equal(codecs.unpack_int4(packed, n), v)
        assert np.array_equal(codecs.unpack_nibbles(packed, n), v & 0xF)


@pytest.mark.parametrize("fmt", codecs.FORMATS)
def test_codecs_keep_shapes_and_accept_scalars(fmt):
    x = (np.arange(12, dtype=np.float32).reshape(3, 4).T - 5) * 0.3   # not C-contiguous
    codes = codecs.encode(x, fmt)
    assert codes.shape == (4, 3)
    assert np.array_equal(codes, codecs.encode(np.ascontiguousarray(x), fmt))
    assert codecs.encode(2.5, fmt).shape == ()
    if not fmt.startswith("int"):
        assert codecs.decode(codes, fmt).shape == (4, 3)


def test_codecs_reject_unknown_names_and_modes():
    with pytest.raises(ValueError):
        codecs.encode([1.0], "float7")
    with pytest.raises(ValueError):
        codecs.encode_float4_e2m1([1.0], "hybrid")
    with pytest.raises(ValueError):
        codecs.encode_hifloat8([1.0], "rint")


def test_codecs_e8m0_rint_ties_go_to_the_even_code():
    """1.5 * 2^k lies halfway between 2^k (code 127 + k) and 2^(k+1): "rint" keeps the even code of
    the two, "round" always goes up (3.0 = 1.5 * 2^1 is code 128, not 129). Down
    to the fp32 subnormal tie 1.5 * 2^-127 (between code 0 = 2^-127 and code 1), which stays at 0."""
    k = np.arange(-127, 128)
    x = (1.5 * 2.0 ** k).astype(np.float32)
    lower = 127 + k
    even = np.where(lower % 2 == 0, lower, lower + 1)
    assert codecs.encode_float8_e8m0(np.float32([3.0]), "rint").tolist() == [128]
    assert codecs.encode_float8_e8m0(np.float32([6.0]), "rint").tolist() == [130]   # 1.5 * 2^2: 129 is odd
    np.testing.assert_array_equal(codecs.encode_float8_e8m0(x, "rint"), even)
    np.testing.assert_array_equal(codecs.encode_float8_e8m0(-x, "rint"), even)      # the sign is dropped
    np.testing.assert_array_equal(codecs.encode_float8_e8m0(x[1:], "round"), np.minimum(lower[1:] + 1, 0xFE))
    # just off the tie, both go to the nearer code
    above = np.nextafter(x[1:-1], np.float32(np.inf))
    np.testing.assert_array_equal(codecs.encode_float8_e8m0(above, "rint"), lower[1:-1] + 1)
