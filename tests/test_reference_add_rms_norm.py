"""Tests of the NumPy reference of aclnnAddRmsNormDynamicQuant[V2] itself (tests/reference/).

Goldens here are published values (spec B.15, the vendor tiling UTs) or values worked out by hand
from the spec's reduction order; the float64 textbook RMSNorm is a sanity bound, not a golden.
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from reference import arnq_casts as casts
from reference import arnq_reduce as red
from reference import arnq_rstd as rstd_mod
from reference import arnq_tiling as tiling
from reference.add_rms_norm_dynamic_quant import (add_rms_norm_dynamic_quant, expected_status,
                                                  Tensor, textbook_rms_norm)

F16, BF16, F32 = np.float16, ml_dtypes.bfloat16, np.float32
BIG = F32(2.0 ** 25)          # float32 ulp 4 here: BIG + 1.5 -> BIG, BIG + 3 -> BIG + 4
SOCS = ("950", "a2")


def bits(a) -> list:
    return [hex(int(v)) for v in np.asarray(a, dtype=F32).ravel().view(np.uint32)]


# ---------------------------------------------------------------------------------------------
# B.15 published example values
# ---------------------------------------------------------------------------------------------

def _example(dtype=F16):
    x = np.full((2, 8), 0.5, dtype=dtype)
    g = np.full(8, 1.5, dtype=dtype)
    return x, g


@pytest.mark.parametrize("soc,template", [("950", "perf"), ("a2", "normal")])
def test_published_v1_example_with_smooth_scales(soc, template):
    x, g = _example()
    r = add_rms_norm_dynamic_quant(x, x, g, g, g, epsilon=1e-6, soc=soc, version=1)
    assert r["template"] == template
    assert r["y1"].dtype == np.int8 and (r["y1"] == 127).all() and (r["y2"] == 127).all()
    assert r["y1"].shape == (2, 8)
    assert (r["x_out"] == 1.0).all() and r["x_out"].dtype == F16
    assert bits(r["scale1"]) == ["0x3c912240"] * 2 == bits(r["scale2"])
    assert np.isclose(r["scale1"][0], 0.017716527)


@pytest.mark.parametrize("soc", SOCS)
def test_published_v1_example_without_smooth_scales(soc):
    x, g = _example()
    r = add_rms_norm_dynamic_quant(x, x, g, epsilon=1e-6, soc=soc)
    assert (r["y1"] == 127).all() and r["y2"] is None and r["scale2"] is None
    assert bits(r["scale1"]) == ["0x3c418300"] * 2


@pytest.mark.parametrize("soc", SOCS)
def test_published_v2_example_with_beta(soc):
    x, g = _example()
    r = add_rms_norm_dynamic_quant(x, x, g, g, g, beta=g, epsilon=1e-6, soc=soc, version=2)
    assert (r["y1"] == 127).all() and (r["y2"] == 127).all()
    assert bits(r["scale1"]) == ["0x3d112242"] * 2 == bits(r["scale2"])
    assert np.isclose(r["scale1"][0], 0.03543306)


# ---------------------------------------------------------------------------------------------
# template selection (B.8.1, B.9.1, appendix D) and published tiling-UT facts
# ---------------------------------------------------------------------------------------------

# configuration (out1, out2, smooth count, beta) -> first N of perf/normal/single-row/split
SWITCH_POINTS_950 = [
    ((1, 0, 0, 0), {"normal": 14065, "single_row": 14849, "split": 15873}),
    ((1, 0, 1, 0), {"normal": 12657, "single_row": 13313, "split": 15873}),
    ((1, 1, 2, 0), {"single_row": 10545, "split": 15873}),
    ((1, 1, 2, 1), {"single_row": 9729, "split": 15873}),
    ((1, 1, 0, 0), {"single_row": 12657, "split": 15873}),
]


@pytest.mark.parametrize("cfg,points", SWITCH_POINTS_950)
def test_950_switch_points(cfg, points):
    q1, q2, qb, beta = cfg
    order = ["perf"] + sorted(points, key=points.get)
    starts = [1] + [points[name] for name in order[1:]]
    for name, start, nxt in zip(order, starts, starts[1:] + [40000]):
        for n in (start, nxt - 1):
            assert tiling.template_950(n, 4, q1, q2, qb, beta) == name, (n, name)


# shape, smooth count, mask (None = no mask), beta, y dtype -> mode id (arch35 tiling UT)
UT_950 = [
    ((3, 1, 640), 2, (1, 1), 0, 0), ((4096, 1, 6144), 2, (1, 1), 0, 0),
    ((124, 1, 12699), 1, (1, 0), 0, 1), ((124, 1, 14000), 1, (1, 0), 0, 2),
    ((3, 1, 20480), 2, (1, 1), 0, 3), ((1000000, 1, 2), 2, (1, 1), 0, 0),
    ((100, 0, 1), 2, (1, 1), 0, 1), ((100, 1, 0), 2, (1, 1), 0, 4),
    ((9000, 1, 9000), 2, (1, 1), 0, 0), ((4096, 1, 9703), 2, (1, 1), 1, 0),
    ((3, 1, 640), 2, None, 0, 0), ((3, 1, 20480), 2, None, 0, 3),
]


@pytest.mark.parametrize("shape,smooth,mask,beta,mode", UT_950)
def test_950_tiling_ut_facts(shape, smooth, mask, beta, mode):
    n, m = shape[-1], int(np.prod(shape[:-1]))
    q1, q2 = mask if mask is not None else (1, int(smooth == 2))
    assert tiling.MODE_IDS_950[tiling.template_950(n, m, q1, q2, smooth, beta)] == mode


def test_950_split_chunk_and_loop():
    assert tiling.split_chunk(1, 1, 2, 0) == 8192 == tiling.split_chunk(1, 0, 0, 1)
    assert tiling.split_loop(20480, 8192) == 2
    assert tiling.split_loop(15873, 8192) == 1
    assert tiling.split_loop(65536, 8192) == 8


@pytest.mark.parametrize("y_dtype", ["int8", "int4"])
def test_a2_keys_and_switch_points(y_dtype):
    assert tiling.a2_template_key(16, y_dtype) == 1          # tiling UT [1,1,16]
    assert tiling.a2_template_key(16, y_dtype, True) == 1    # with beta
    assert tiling.a2_template_key(30000, y_dtype) == 3       # tiling UT [1,1,30000]
    for beta, last_normal in ((False, 8896), (True, 8128)):
        assert tiling.a2_template_key(last_normal, y_dtype, beta) == 1
        assert tiling.a2_template_key(last_normal + 1, y_dtype, beta) == 2
    assert tiling.a2_template_key(12224, y_dtype) == 2
    assert tiling.a2_template_key(12225, y_dtype) == 3
    assert tiling.a2_slice_len(y_dtype) == (8832 if y_dtype == "int4" else 8864)


# ---------------------------------------------------------------------------------------------
# reduction trees on hand-checkable inputs
# ---------------------------------------------------------------------------------------------

def _row(n, **at):
    q = np.zeros((1, n), dtype=F32)
    for i, v in at.items():
        q[0, int(i[1:])] = v
    return q


def test_tree64_pairs_adjacent_lanes():
    assert red.tree64(np.ones((2, 64), F32)).tolist() == [64.0, 64.0]
    q = _row(4, i0=BIG, i2=1.5, i3=1.5)          # (BIG + 0) + (1.5 + 1.5) = BIG + 3 -> BIG + 4
    assert red.tree64(q)[0] == BIG + 4
    assert red.tree64(q, order="halves")[0] == BIG   # (BIG + 1.5) + (0 + 1.5): both lost


def test_half_interval_folds_tail_then_halves():
    assert red.half_interval(np.ones((1, 300), F32))[0] == 300
    assert red.half_interval(_row(65, i0=BIG, i64=1.5, i1=1.5))[0] == BIG
    # n = 300: tail 44 folded at 256, then 256 -> 128 -> 64
    assert red.half_interval(_row(300, i0=BIG, i256=1.5, i128=1.5))[0] == BIG
    assert red.half_interval(_row(300, i0=BIG, i257=1.5, i129=1.5))[0] == BIG + 4


def test_slice_d_adds_slice_sums_one_by_one():
    n = 2 * 8864 + 100
    q = _row(n, i0=BIG, i8864=1.5, i17728=1.5)
    assert red.slice_d(q, 8864)[0] == BIG
    q = _row(n, i0=BIG, i8864=1.5, i8865=1.5)      # both in slice 1: its sum is 3
    assert red.slice_d(q, 8864)[0] == BIG + 4
    assert red.slice_d(np.ones((1, 3 * 8864), F32), 8864)[0] == 3 * 8864   # tail = L


def test_fold_reduce_perf():
    # N = 200: ceil16 = 208, fold F = 128, lanes = q[l] + q[128 + l]
    assert red.fold_reduce(_row(200, i0=BIG, i128=1.5, i1=1.5))[0] == BIG
    assert red.fold_reduce(_row(200, i0=BIG, i2=1.5, i3=1.5))[0] == BIG + 4
    # 64 < N <= 128: one fold at 64
    assert red.fold_reduce(_row(100, i0=BIG, i64=1.5, i1=1.5))[0] == BIG
    # N > 8192: F = 8192, 128 partials, lane l = P[l] + P[64 + l]
    q = _row(9000, i0=BIG, i4096=1.5, i64=1.5)      # partials 64 and 1 meet P[0] one by one
    assert red.fold_reduce(q)[0] == BIG
    q = _row(9000, i0=BIG, i4096=1.5, i4160=1.5)    # partials 64 and 65: lanes 0 and 1 -> 3
    assert red.fold_reduce(q)[0] == BIG
    for n in (1, 63, 64, 65, 128, 129, 4097, 8192, 8193, 16384):
        assert red.fold_reduce(np.ones((1, n), F32))[0] == n


def test_reduce_sum_rstd_normal():
    # N = 300 -> C = 512 = P, no remainder: lane = q[o + l] + q[o + 64 + l], o = 128 i
    assert red.normal_reduce(_row(300, i0=BIG, i64=1.5, i128=1.5))[0] == BIG
    assert red.normal_reduce(_row(300, i0=BIG, i128=1.5, i192=1.5))[0] == BIG + 4
    # N = 700 -> C = 768, P = 512, remainder 256: (q[l] + q[512+l]) + (q[64+l] + q[576+l])
    assert red.normal_reduce(_row(700, i0=BIG, i512=1.5, i576=1.5))[0] == BIG
    assert red.normal_reduce(_row(700, i0=BIG, i64=1.5, i576=1.5))[0] == BIG + 4
    for n in (1, 255, 256, 257, 5000, 15000):
        assert red.normal_reduce(np.ones((1, n), F32))[0] == n


def test_split_reduce_level_merge():
    # N = 20480, P0 = 8192, L = 2: chunk A (8192, fold 4096) + chunk B (4096) pushed as one
    # entry, then the master chunk (8192): S = f32(f32(A + B) + M)
    q = _row(20480, i0=BIG, i8192=1.5, i12288=1.5)
    assert red.split_reduce(q, 8192, 2)[0] == BIG
    q = _row(20480, i0=BIG, i12288=1.5, i12289=1.5)   # both in the master chunk
    assert red.split_reduce(q, 8192, 2)[0] == BIG + 4
    for n in (15873, 20480, 24577, 40000):
        ones = np.ones((1, n), F32)
        assert red.split_reduce(ones, 8192, tiling.split_loop(n, 8192))[0] == n


# ---------------------------------------------------------------------------------------------
# rstd arithmetic
# ---------------------------------------------------------------------------------------------

def _exact_fma(a, b, c) -> F32:
    """Correctly rounded float32 of a*b + c via exact rationals."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    lo = F32(float(exact))                       # nearest double, then nearest float: fix below
    cands = [np.nextafter(lo, F32(-np.inf)), lo, np.nextafter(lo, F32(np.inf))]
    cands = [v for v in cands if np.isfinite(v)]
    best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                     int(np.array(v, F32).view(np.uint32)) & 1))
    return F32(best)


def test_fma32_single_rounding():
    rng = np.random.default_rng(7)
    a = rng.standard_normal(300).astype(F32)
    b = rng.standard_normal(300).astype(F32)
    c = (rng.standard_normal(300) * 1e-3).astype(F32)
    # cases where a*b + c lands on or next to float32 ties
    a = np.append(a, [F32(1 + 2 ** -12), F32(1 + 2 ** -23), F32(3.0)])
    b = np.append(b, [F32(1 + 2 ** -12), F32(1 - 2 ** -23), F32(1 / 3)])
    c = np.append(c, [F32(-1.0), F32(2 ** -49), F32(-1.0)])
    got = rstd_mod.fma32(a, b, c)
    want = np.array([_exact_fma(*t) for t in zip(a, b, c, strict=True)], dtype=F32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_newton_raphson_close_to_float64_and_special_values():
    s = np.array([1.0, 2.0, 3.0, 1e-30, 1e30, 12345.678], dtype=F32)
    got = rstd_mod.newton_raphson_rstd(s, F32(1.0), F32(1e-6))
    want = 1 / np.sqrt(s.astype(np.float64) + np.float64(F32(1e-6)))
    assert np.allclose(got, want, rtol=2 ** -22, atol=0)
    special = rstd_mod.newton_raphson_rstd(np.array([0.0, np.inf], F32), F32(1.0), F32(0.0))
    assert special.tolist() == [np.inf, 0.0]
    unfused = rstd_mod.newton_raphson_rstd(s, F32(1.0), F32(1e-6), mula="unfused")
    assert np.allclose(unfused, want, rtol=2 ** -21)


@pytest.mark.parametrize("mode", ["float", "fma", "double"])
def test_scalar_rstd_modes(mode):
    s = np.array([8.0, 3.0, 1e-3], dtype=F32)
    got = rstd_mod.scalar_rstd(s, F32(0.125), F32(1e-6), mode)
    want = 1 / np.sqrt(s.astype(np.float64) * 0.125 + np.float64(F32(1e-6)))
    assert got.dtype == F32 and np.allclose(got, want, rtol=2 ** -22)
    t = F32(8.0) * F32(0.125) + F32(1e-6)
    assert rstd_mod.scalar_rstd(s[:1], F32(0.125), F32(1e-6))[0] == F32(1.0) / np.sqrt(t)


# ---------------------------------------------------------------------------------------------
# output casts and encodings (B.9.3, B.10)
# ---------------------------------------------------------------------------------------------

def test_int8_and_int4_rounding_nan_and_saturation():
    q = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 126.5, np.nan, np.inf, -np.inf], F32)
    assert casts.encode_int8(q).tolist() == [0, 2, 2, 0, -2, 126, 0, 127, -128]
    q4 = np.array([0.5, 6.5, -7.5, np.inf, -np.inf, np.nan], F32)
    assert casts.unpack_int4(casts.encode_int4(q4)).tolist() == [0, 6, -8, 7, -8, 0]


def test_int4_packing_low_nibble_first_and_int32_words():
    assert casts.encode_int4(np.array([1, -1], F32)).tolist() == [0xF1]
    packed = casts.encode_int4(np.array([[1, 2, 3, 4, 5, 6, 7, -8]], F32))
    assert packed.tolist() == [[0x21, 0x43, 0x65, 0x87]]
    words = casts.int4_bytes_to_int32(packed)
    assert words.dtype == np.int32 and words.tolist() == [[np.uint32(0x87654321).view(np.int32)]]


def test_fp8_saturating_round_to_nearest_even():
    q = np.array([1000.0, -1000.0, np.inf, -np.inf, 464.0, 0.0, np.nan, 1.0625, 2 ** -10,
                  3 * 2 ** -11], F32)
    assert casts.encode_fp8(q, "float8_e4m3fn").tolist() == \
        [0x7E, 0xFE, 0x7E, 0xFE, 0x7E, 0x00, 0x00, 0x38, 0x00, 0x01]
    assert casts.encode_fp8(q, "float8_e4m3fn", "positive")[6] == 0x7F
    q5 = np.array([1e6, -np.inf, 61440.0, np.nan, -np.nan], F32)
    # NaN -> 0x00 by default (SAT, CTRL[50] = 0); the NaN codes of Q11 as the options
    assert casts.encode_fp8(q5, "float8_e5m2").tolist() == [0x7B, 0xFB, 0x7B, 0x00, 0x00]
    assert casts.encode_fp8(q5, "float8_e5m2", "positive").tolist() == [0x7B, 0xFB, 0x7B, 0x7E, 0x7E]
    assert casts.encode_fp8(np.array([-np.nan], F32), "float8_e5m2", "keep").tolist() == [0xFE]


def test_hif8_codes_from_the_spec():
    values = [1.0, 2.0, 0.5, 14.0, 256.0, 2 ** -15, 32768.0, 2 ** -22, 0.0, -0.0]
    codes = [0x08, 0x10, 0x18, 0x2E, 0x60, 0x7E, 0x6E, 0x01, 0x00, 0x00]
    assert casts.hif8_encode_round_sat(np.array(values, F32)).tolist() == codes
    # ties away from zero; SAT clamps inf and values past 1.25 * 2^15 to +-32768; NaN -> 0x80 in
    # the bare encoder, 0x00 in the operator's default (CTRL[50] = 0)
    special = np.array([1.0625, -1.0625, 2 ** -23, 2 ** -24, np.inf, -np.inf, 40960.0, np.nan], F32)
    assert casts.hif8_encode_round_sat(special).tolist() == \
        [0x09, 0x89, 0x01, 0x00, 0x6E, 0xEE, 0x6E, 0x80]
    assert casts.encode_hif8(special).tolist() == [0x09, 0x89, 0x01, 0x00, 0x6E, 0xEE, 0x6E, 0x00]
    assert casts.encode_hif8(np.array([np.nan], F32), nan_code="nan").tolist() == [0x80]


def test_hif8_round_trip_of_every_finite_code():
    codes = np.array([c for c in range(256) if c not in (0x80, 0x6F, 0xEF)])
    values = casts.hif8_decode(codes).astype(F32)
    back = casts.hif8_encode_round_sat(values)
    assert back.tolist() == [0 if c == 0 else c for c in codes.tolist()]


@pytest.mark.parametrize("inputs", ["fp16", "random_f32", "boundaries"])
def test_hif8_private_encoder_matches_the_format_reference(inputs):
    """The ARNQ reference's own HiF8 encoder (ROUND + SAT) against reference/formats.py, a second
    encoder written independently (table lookup instead of exponent arithmetic): every fp16
    value, random float32 bit patterns (the operator encodes float32 quotients) and the float32
    values around every HiF8 grid point and midpoint, with the specials."""
    from reference import formats
    x = {"fp16": lambda: np.arange(65536, dtype=np.uint16).view(F16).astype(F32),
         "random_f32": lambda: formats.random_f32(400_000, seed=16),
         "boundaries": lambda: np.concatenate([formats.boundary_sweep(formats.HIF8_GRID, ulps=3),
                                               formats.specials()])}[inputs]()
    mine = casts.hif8_encode_round_sat(x)
    other = formats.encode_hif8(x, formats.ROUND | formats.SAT)
    bad = np.flatnonzero(mine != other)
    assert bad.size == 0, [(hex(int(x[i:i + 1].view(np.uint32)[0])), int(mine[i]), int(other[i]))
                           for i in bad[:5]]
    zero_nan = casts.encode_hif8(x)
    assert np.array_equal(zero_nan, formats.encode_hif8(x, formats.ROUND | formats.SAT
                                                        | formats.NAN_TO_ZERO))


# ---------------------------------------------------------------------------------------------
# sanity against a float64 textbook RMSNorm (bounds, not goldens)
# ---------------------------------------------------------------------------------------------

CASES = [("950", 200, "perf"), ("950", 9000, "perf"), ("950", 13000, "normal"),
         ("950", 15000, "single_row"), ("950", 20000, "split"),
         ("a2", 300, "normal"), ("a2", 10000, "single_row"), ("a2", 20000, "slice_d")]


@pytest.mark.parametrize("soc,n,template", CASES)
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_close_to_textbook_rms_norm(soc, n, template, dtype):
    rng = np.random.default_rng(n)
    m = 3
    x1 = rng.standard_normal((m, n)).astype(dtype)
    x2 = rng.standard_normal((m, n)).astype(dtype)
    g = rng.uniform(0.5, 1.5, n).astype(dtype)
    s1 = rng.uniform(0.5, 2.0, n).astype(dtype)
    mask = (1, 0) if template == "normal" and soc == "950" else None
    version = 2 if mask else 1
    r = add_rms_norm_dynamic_quant(x1, x2, g, s1, None, output_mask=mask, version=version,
                                   soc=soc)
    assert r["template"] == template
    ref = textbook_rms_norm(x1, x2, g) * s1.astype(np.float64)
    x = x1.astype(np.float64) + x2.astype(np.float64)
    want_rstd = 1 / np.sqrt(np.mean(x * x, axis=-1) + np.float64(F32(1e-6)))
    assert np.allclose(r["rstd"], want_rstd, rtol=1e-6)
    deq = r["y1"].astype(np.float64) * r["scale1"][:, None]
    assert np.all(np.abs(deq - ref) <= r["scale1"][:, None] * 0.5 * (1 + 1e-4))
    assert np.allclose(r["scale1"], np.abs(ref).max(axis=1) / 127, rtol=1e-5)
    assert np.array_equal(r["x_out"].astype(np.float64), x.astype(dtype).astype(np.float64))


def test_templates_agree_to_a_few_ulp():
    rng = np.random.default_rng(3)
    n = 2000
    x1 = rng.standard_normal((4, n)).astype(F16)
    g = np.ones(n, F16)
    rstds = [add_rms_norm_dynamic_quant(x1, x1, g, soc="950", force_template=t)["rstd"]
             for t in ("perf", "normal", "single_row")]
    rstds.append(add_rms_norm_dynamic_quant(x1, x1, g, soc="a2")["rstd"])
    ref = rstds[0].view(np.int32).astype(np.int64)
    for other in rstds[1:]:
        assert np.abs(other.view(np.int32).astype(np.int64) - ref).max() <= 4


@pytest.mark.parametrize("y_dtype", ["int4", "int32", "float8_e4m3fn", "float8_e5m2", "hifloat8"])
def test_other_output_types_dequantise_close(y_dtype):
    rng = np.random.default_rng(5)
    n = 256
    x1 = rng.standard_normal((2, n)).astype(F16)
    g = np.ones(n, F16)
    r = add_rms_norm_dynamic_quant(x1, x1, g, y_dtype=y_dtype, soc="950", version=2)
    ref = textbook_rms_norm(x1, x1, g)
    if y_dtype in ("int4", "int32"):
        packed = r["y1"].view(np.uint8) if y_dtype == "int32" else r["y1"]
        assert r["y1"].shape == ((2, n // 8) if y_dtype == "int32" else (2, n // 2))
        vals = casts.unpack_int4(packed.reshape(2, n // 2)).astype(np.float64)
        tol = 0.5
    elif y_dtype == "hifloat8":
        vals, tol = casts.hif8_decode(r["y1"]), None
    else:
        dt = casts.FP8_FORMATS[y_dtype][0]
        vals, tol = r["y1"].view(dt).astype(np.float64), None
    deq = vals * r["scale1"][:, None]
    if tol is not None:
        assert np.all(np.abs(deq - ref) <= r["scale1"][:, None] * tol * (1 + 1e-4))
    else:           # half a step of the format's coarsest mantissa in the range used
        rel = {"float8_e4m3fn": 2 ** -4, "float8_e5m2": 2 ** -3, "hifloat8": 2 ** -2}[y_dtype]
        subnormal_step = r["scale1"][:, None] * 2.0 ** -9
        assert np.all(np.abs(deq - ref) <= rel * np.abs(ref) * (1 + 1e-3) + subnormal_step)


# ---------------------------------------------------------------------------------------------
# active outputs, the 950 single-row quirk, edge cases (B.2, B.9.3, B.11, B.12)
# ---------------------------------------------------------------------------------------------

def test_mask_without_smooth_scales_gives_identical_outputs():
    rng = np.random.default_rng(11)
    x1 = rng.standard_normal((3, 512)).astype(F16)
    g = np.ones(512, F16)
    for soc in SOCS:
        r = add_rms_norm_dynamic_quant(x1, x1, g, output_mask=(1, 1), version=2, soc=soc)
        assert np.array_equal(r["y1"], r["y2"]) and np.array_equal(r["scale1"], r["scale2"])


def test_950_single_row_quirk_rescales_y_for_quant1():
    rng = np.random.default_rng(12)
    n = 15000                                   # single row for two outputs, no smooth
    x1 = rng.standard_normal((2, n)).astype(F16)
    g = np.full(n, 3.0, F16)
    r = add_rms_norm_dynamic_quant(x1, x1, g, output_mask=(1, 1), version=2, soc="950")
    assert r["template"] == "single_row"
    assert np.all(r["scale2"] > 0.05)           # ~ max|y| / 127 with |y| up to ~12
    assert np.allclose(r["scale1"], 1.0, atol=1e-6)   # max|y / scale2| / 127
    assert np.array_equal(r["y1"], r["y2"])


def test_active_outputs_follow_b2():
    x, g = _example()
    r = add_rms_norm_dynamic_quant(x, x, g, g, None, soc="950")       # V1, smooth1 only
    assert r["y2"] is None and r["scale2"] is None and r["y1"] is not None
    r = add_rms_norm_dynamic_quant(x, x, g, None, g, output_mask=(0, 1), version=2, soc="a2")
    assert r["y1"] is None and r["scale1"] is None and (r["y2"] == 127).all()
    with pytest.raises(ValueError):
        add_rms_norm_dynamic_quant(x, x, g, None, g, version=2)       # smooth2 without smooth1


@pytest.mark.parametrize("soc", SOCS)
def test_zero_row(soc):
    x = np.zeros((1, 64), F16)
    g = np.ones(64, F16)
    r = add_rms_norm_dynamic_quant(x, x, g, soc=soc)
    assert r["scale1"].tolist() == [0.0] and (r["y1"] == 0).all()
    if soc == "950":    # q = 0/0 = NaN: 0x00 (SAT, CTRL[50] = 0), or Q11's NaN code as the option
        for y_dtype, code in (("float8_e4m3fn", 0x7F), ("float8_e5m2", 0x7E), ("hifloat8", 0x80)):
            r = add_rms_norm_dynamic_quant(x, x, g, y_dtype=y_dtype, soc=soc)
            assert (r["y1"] == 0x00).all() and r["scale1"].tolist() == [0.0]
            r = add_rms_norm_dynamic_quant(x, x, g, y_dtype=y_dtype, soc=soc,
                                           fp8_nan_sign="positive", hif8_nan="nan")
            assert (r["y1"] == code).all() and r["scale1"].tolist() == [0.0]


@pytest.mark.parametrize("y_dtype,codes", [("float8_e4m3fn", [0x7E, 0xFE, 0x00, 0x7E]),
                                           ("float8_e5m2", [0x7B, 0xFB, 0x00, 0x7B]),
                                           ("hifloat8", [0x6E, 0xEE, 0x00, 0x6E])])
def test_950_scale_underflow_saturates_inf_quotients(y_dtype, codes):
    """A huge epsilon and the smallest bf16 gamma make y so tiny that scale = m*D rounds to 0:
    q = +-y/0 = +-inf -> +-max (SAT), and the zero element's 0/0 -> 0x00."""
    x = np.array([[1.0, -1.0, 0.0, 0.5]], BF16)
    g = np.full(4, 2.0 ** -133, BF16)
    r = add_rms_norm_dynamic_quant(x, x, g, epsilon=1e8, y_dtype=y_dtype, soc="950")
    assert r["scale1"].tolist() == [0.0]
    assert r["y1"].tolist() == [codes]


def test_a2_tiny_max_saturates():
    x = np.array([[1.0, -1.0, 0.0, 0.5]], BF16)
    g = np.full(4, 1e-38, BF16)
    r = add_rms_norm_dynamic_quant(x, x, g, soc="a2")
    assert r["scale1"].tolist() == [0.0]
    assert r["y1"].tolist() == [[127, -128, 0, 127]]


def test_epsilon_rules_and_fp16_overflow():
    x, g = _example()
    with pytest.raises(ValueError):
        add_rms_norm_dynamic_quant(x, x, g, epsilon=0.0, soc="a2")
    zero = np.zeros((1, 8), F16)
    r = add_rms_norm_dynamic_quant(zero, zero, g, epsilon=0.0, soc="950")
    assert r["rstd"].tolist() == [np.inf]
    big = np.full((1, 8), 60000.0, F16)
    r = add_rms_norm_dynamic_quant(big, big, g, soc="950")
    assert np.isinf(r["x_out"]).all() and (r["y1"] == 127).all()
    r = add_rms_norm_dynamic_quant(big, big, g, soc="950", overflow_mode="saturation")
    assert (r["x_out"] == 65504).all()


def test_empty_tensors_b11():
    g0 = np.zeros(0, F16)
    x0 = np.zeros((3, 0), F16)
    r = add_rms_norm_dynamic_quant(x0, x0, g0, version=2, output_mask=(1, 1), soc="950")
    assert r["template"] == "reduce_empty" and r["written"]
    assert r["scale1"].tolist() == [-np.inf] * 3 == r["scale2"].tolist() and r["y1"] is None
    for soc, version in (("a2", 2), ("950", 1), ("a2", 1)):
        r = add_rms_norm_dynamic_quant(x0, x0, g0, version=version, soc=soc)
        assert not r["written"] and r["scale1"] is None
    rows0 = np.zeros((0, 8), F16)
    r = add_rms_norm_dynamic_quant(rows0, rows0, np.ones(8, F16), soc="950", version=2)
    assert not r["written"]


# ---------------------------------------------------------------------------------------------
# validation table (B.3, B.4, B.5, corrections box)
# ---------------------------------------------------------------------------------------------

def T(shape, dtype="float16"):
    return Tensor(tuple(shape), dtype)


def call(version=1, soc="950", n=8, y="int8", smooth=(False, False), beta=False, mask=None,
         **over):
    args = dict(x1=T((2, n)), x2=T((2, n)), gamma=T((n,)),
                y1=T((2, n), y), y2=T((2, n), y), x_out=T((2, n)),
                scale1=T((2,), "float32"), scale2=T((2,), "float32"),
                smooth1=T((n,)) if smooth[0] else None, smooth2=T((n,)) if smooth[1] else None,
                beta=beta if isinstance(beta, Tensor) else (T((n,)) if beta else None),
                output_mask=mask)
    if version == 1:
        args.pop("beta")
        args.pop("output_mask")
    args.update(over)
    return expected_status(version, soc, **args)


TABLE = [
    # V1 phase 1
    (dict(x1=None), 1, 161001),
    (dict(scale2=None), 1, 161001),
    (dict(x1=T((2, 8), "float32")), 1, 161002),
    (dict(y="int4"), 1, 161002),
    (dict(y2=T((2, 8), "hifloat8")), 1, 161002),
    (dict(scale1=T((2,), "float16")), 1, 161002),
    (dict(x_out=T((2, 8), "float32")), 1, 161002),
    (dict(x2=T((4, 4))), 1, 561002),
    (dict(gamma=T((1, 8))), 1, 561002),
    (dict(gamma=T((4,))), 1, 561002),
    (dict(smooth1=T((4,)), smooth2=T((8,))), 1, 561002),
    # V1 phase 2 (kernel selection / tiling)
    (dict(soc="a2", epsilon=0.0), 2, 561103),
    (dict(soc="a2", epsilon=1e-50), 2, 561103),
    (dict(soc="a2", epsilon=float("nan")), 0, 0),
    (dict(soc="950", epsilon=-1.0), 0, 0),
    (dict(soc="a2", y="float8_e4m3fn"), 2, 561103),
    (dict(soc="950", y="float8_e4m3fn"), 0, 0),
    (dict(soc="a2", smooth=(False, True)), 2, 561103),
    (dict(soc="950", smooth=(False, True)), 2, 561103),
    (dict(x2=T((2, 8), "bfloat16")), 2, 561103),
    (dict(x_out=T((2, 8), "bfloat16")), 2, 561103),
    (dict(soc="950", x1=T((8,)), x2=T((8,)), y1=T((8,), "int8"), y2=T((8,), "int8"),
          x_out=T((8,)), scale1=T((1,), "float32")), 2, 561103),
    (dict(soc="a2", x1=T((8,)), x2=T((8,)), y1=T((8,), "int8"), y2=T((8,), "int8"),
          x_out=T((8,)), scale1=T((1,), "float32")), 0, 0),
    (dict(soc="950", x_out=T((1, 16))), 2, 561103),
    (dict(soc="950", scale1=T((3,), "float32")), 2, 561103),
    (dict(soc="950", scale1=T((2, 1), "float32")), 0, 0),
    (dict(smooth=(True, True)), 0, 0),
]


@pytest.mark.parametrize("over,phase,status", TABLE)
def test_v1_validation_table(over, phase, status):
    v = call(1, **over)
    assert (v.phase, v.status) == (phase, status), v.rule


TABLE_V2 = [
    (dict(mask=(1, 1, 1)), 1, 161002),
    (dict(mask=(0, 0)), 1, 161002),
    (dict(mask=(0, 1), smooth=(True, False)), 1, 161002),
    (dict(mask=(1, 0), smooth=(True, True)), 1, 161002),
    (dict(smooth=(False, True)), 1, 161002),
    (dict(mask=(1, 1), y2=None), 1, 161001),
    (dict(mask=(1, 1), y1=T((2, 8), "int8"), y2=T((2, 8), "int4")), 1, 161002),
    (dict(y="int32", y1=T((2, 2), "int32")), 1, 161002),
    (dict(y="int32", y1=T((2, 1), "int32")), 0, 0),
    (dict(soc="a2", y="int32", y1=T((2, 1), "int32")), 0, 0),
    (dict(y1=T((2, 9), "int8")), 1, 561002),
    (dict(y="int4", n=7, y1=T((2, 7), "int4")), 2, 561103),
    (dict(soc="a2", y="int4", n=7, y1=T((2, 7), "int4")), 2, 561103),
    (dict(soc="a2", y="int4"), 0, 0),
    (dict(soc="a2", y="hifloat8"), 2, 561103),
    (dict(soc="950", y="hifloat8"), 0, 0),
    (dict(y="float16"), 2, 561103),
    (dict(beta=T((8,), "bfloat16")), 2, 561103),
    (dict(x2=T((4, 4))), 2, 561103),
    (dict(soc="a2", gamma=T((0,)), x1=T((2, 0)), x2=T((2, 0))), 0, 0),
]


@pytest.mark.parametrize("over,phase,status", TABLE_V2)
def test_v2_validation_table(over, phase, status):
    v = call(2, **over)
    assert (v.phase, v.status) == (phase, status), v.rule


def test_v2_inactive_null_output_is_flagged_undefined():
    v = call(2, y2=None, scale2=None)
    assert (v.phase, v.status, v.vendor_undefined) == (1, 161001, True)


def test_empty_early_returns_and_950_reduce_empty():
    v = call(1, x1=T((0, 8)), x2=T((0, 8)))
    assert v.early_return and (v.phase, v.status) == (0, 0)
    v = call(1, y2=T((0,), "int8"))
    assert v.early_return
    e = dict(gamma=T((0,)), x1=T((2, 0)), x2=T((2, 0)), y1=T((2, 0), "int8"),
             y2=T((2, 0), "int8"), x_out=T((2, 0)))
    assert call(2, soc="a2", **e).early_return
    v = call(2, soc="950", **e)
    assert (v.phase, v.status, v.early_return) == (0, 0, False)


def test_q8_alternative_reports_tiling_rejections_in_phase_1():
    v = expected_status(1, "a2", T((2, 8)), T((2, 8)), T((8,)), T((2, 8), "int8"),
                        T((2, 8), "int8"), T((2, 8)), T((2,), "float32"), T((2,), "float32"),
                        epsilon=0.0, tiling_reject="phase1")
    assert (v.phase, v.status) == (1, 561002)


def test_accepted_calls_compute_and_phase2_rejections_raise():
    x, g = _example()
    assert call(1, soc="950", epsilon=-1.0).status == 0
    add_rms_norm_dynamic_quant(x, x, g, epsilon=-1.0, soc="950")
    assert call(1, soc="a2", smooth=(False, True)).phase == 2
    with pytest.raises(ValueError):
        add_rms_norm_dynamic_quant(x, x, g, None, g, soc="a2")
    with pytest.raises(ValueError):
        add_rms_norm_dynamic_quant(x, x.astype(BF16), g, soc="950")


def test_nan_in_a_smooth_scale_follows_q7_and_the_slice_d_combine():
    rng = np.random.default_rng(21)
    x1 = rng.standard_normal((2, 64)).astype(F16)
    g = np.ones(64, F16)
    s = np.ones(64, F16)
    s[5] = np.nan
    r = add_rms_norm_dynamic_quant(x1, x1, g, s, None, soc="950")
    assert np.isnan(r["scale1"]).all() and (r["y1"] == 0).all()          # NaN max propagates
    r = add_rms_norm_dynamic_quant(x1, x1, g, s, None, soc="950", max_nan="ignore")
    assert np.isfinite(r["scale1"]).all() and (r["y1"][:, 5] == 0).all()
    assert (np.abs(r["y1"]).max(axis=1) == 127).all()
    # 910B slice-D: a NaN slice max is dropped by the scalar `tmp > local` combine
    n = 20000
    x1 = rng.standard_normal((2, n)).astype(F16)
    s = np.ones(n, F16)
    s[0] = np.nan
    r = add_rms_norm_dynamic_quant(x1, x1, np.ones(n, F16), s, None, soc="a2")
    assert r["template"] == "slice_d"
    assert np.isfinite(r["scale1"]).all() and (r["y1"][:, 0] == 0).all()
    assert (np.abs(r["y1"]).max(axis=1) == 127).all()


@pytest.mark.parametrize("soc", SOCS)
def test_large_tensor_is_vectorised(soc):
    rng = np.random.default_rng(22)
    x1 = rng.standard_normal((64, 30000)).astype(BF16)
    g = np.ones(30000, BF16)
    r = add_rms_norm_dynamic_quant(x1, x1, g, g, g, soc=soc)
    assert r["template"] == ("split" if soc == "950" else "slice_d")
    assert r["y1"].shape == (64, 30000) and r["scale2"].shape == (64,)
    ref = textbook_rms_norm(x1, x1, g)
    assert np.allclose(r["scale1"], np.abs(ref).max(axis=1) / 127, rtol=1e-5)


@pytest.mark.parametrize("name,soc", [("Ascend910B1", "a2"), ("ascend910_9391", "a2"),
                                      ("Ascend950PR", "950"), ("950", "950"), ("a2", "a2")])
def test_soc_names(name, soc):
    assert tiling.normalise_soc(name) == soc
