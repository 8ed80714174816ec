"""Tests of the NumPy reference for aclnnGroupedDynamicMxQuant(V2) (tests/reference/).

Expected values come from the spec's published numbers (§2.4, §3.4, §7), from hand calculation
(written next to each case), and from a float64 textbook MX quantiser defined in this file.
"""
from __future__ import annotations

import math
import zlib

import ml_dtypes
import numpy as np
import pytest

from gmq_hand_cases import HAND_CASES, hand_case_ids
from reference import grouped_dynamic_mx_quant as ref
from reference.gmq_formats import (decode_e8m0, decode_fp4, decode_fp8, encode_fp8,
                                   f32_to_bf16_bits_rne, fp4_grid_value_to_code,
                                   fp4_kernel_round, pack_fp4, unpack_fp4)
from reference.gmq_validation import (ACL_BF16, ACL_FLOAT, ACL_FLOAT4_E1M2, ACL_FLOAT4_E2M1,
                                      ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2, ACL_FLOAT8_E8M0,
                                      ACL_FLOAT16, ACL_INT32, ACL_INT64, TensorArg,
                                      expected_status, make_call)
from reference.grouped_dynamic_mx_quant import GmqRejected, grouped_dynamic_mx_quant as gmq

BF16 = ml_dtypes.bfloat16


def bf16(values, shape=None):
    arr = np.asarray(values, dtype=np.float32).astype(BF16)
    return arr.reshape(shape) if shape else arr


def quantize_column(values, dst="float8_e4m3fn", dtype=BF16, **kw):
    """One group holding `values` as a column. Returns (mxscale row 0 [2], element codes)."""
    col = np.asarray(values, dtype=np.float32).astype(dtype)[:, None]
    fp4 = dst.startswith("float4")
    x = np.concatenate([col, col], axis=1) if fp4 else col        # FP4 needs an even n
    y, mx, _ = gmq(x, [len(values)], dst_type=dst, **kw)
    codes = unpack_fp4(y)[:, 0] if fp4 else y[:, 0]
    return mx[0, 0].tolist(), codes.tolist()


# --- published values ----------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2])
def test_published_doc_example(version):
    """§7.1: aclnn V1/V2 and torch_npu example, x BF16 [8,1] = (0, 8, 64, 512) twice."""
    x = np.array([0, 16640, 17024, 17408] * 2, dtype=np.uint16).reshape(8, 1)
    y, mx, written = gmq(x, [4, 8], "rint", 36, 32, version=version, x_dtype="bfloat16")
    assert y.ravel().tolist() == [0, 72, 96, 120] * 2
    assert mx.tolist() == [[[128, 0]], [[128, 0]]]
    assert written.all()


def test_published_scale_alg1_example():
    """§7.2: DynamicMxQuantV3 example (scaleAlg 1), one block (0, 8, 64, 512) -> E4M3FN."""
    assert quantize_column([0, 8, 64, 512], scale_alg=1) == ([128, 0], [0, 72, 96, 120])


@pytest.mark.parametrize("dst, alg, d, inv_bits, key", [
    (ACL_FLOAT8_E4M3FN, 0, 0.0, 991054117, 256),
    (ACL_FLOAT8_E5M2, 0, 0.0, 932333861, 256),
    (ACL_FLOAT8_E5M2, 1, 0.0, 932333861, 257),
    (ACL_FLOAT4_E2M1, 0, 0.0, 1042983595, 292),
    (ACL_FLOAT4_E1M2, 2, 1.875, 1057523849, 334),
])
def test_published_tiling_parameters(dst, alg, d, inv_bits, key):
    """§7.3 / tiling UT: invDstTypeMax float bits and tiling keys."""
    assert int(ref.inv_dst_type_max(dst, d).view(np.uint32)) == inv_bits
    assert ref.tiling_key(alg, dst, "rint", d) == key


@pytest.mark.parametrize("m, n, g, rows", [
    (1843, 1514, 26, 54), (1064, 1977, 16, 32), (1061, 3825, 28, 44), (3536, 1692, 4, 59),
    (1365, 2504, 46, 67)])
def test_published_st_mxscale_shapes(m, n, g, rows):
    """§7.4: ST csv shapes -> mxscale rows = m // 64 + g, and such calls are accepted."""
    assert ref.mxscale_row_count(m, g) == rows
    assert expected_status(make_call(m, n, g)).status == 0


def _ut_call(version=1, x=(ACL_FLOAT16, (64, 5)), gi=(ACL_INT32, (2,)),
             y=(ACL_FLOAT8_E5M2, (64, 5)), mx=(ACL_FLOAT8_E8M0, (3, 5, 2)), **kw):
    return make_call(64, 5, 2, x=TensorArg(*x), group_index=TensorArg(*gi), y=TensorArg(*y),
                     mxscale=TensorArg(*mx), dst_type=kw.pop("dst_type", y[0]), version=version,
                     **kw)


V1_UT_CASES = [  # §2.4, tests/ut/op_api/test_aclnn_grouped_dynamic_mx_quant.cpp
    (dict(x=(ACL_BF16, (64, 5)), y=(ACL_FLOAT8_E4M3FN, (64, 5))), 0),
    (dict(x=(ACL_BF16, (64, 5))), 0),
    (dict(y=(ACL_FLOAT8_E4M3FN, (64, 5))), 0),
    (dict(), 0),
    (dict(x=(ACL_FLOAT16, (64, 5, 5))), 161002),
    (dict(gi=(ACL_INT32, (2, 4))), 161002),
    (dict(y=(ACL_FLOAT8_E5M2, (64, 5, 5))), 161002),
    (dict(mx=(ACL_FLOAT8_E8M0, (3,))), 161002),
    (dict(y=(ACL_FLOAT8_E5M2, (64, 10))), 161002),
    (dict(mx=(ACL_FLOAT8_E8M0, (5, 5, 2))), 161002),
    (dict(x=(ACL_FLOAT, (64, 5))), 161002),
    (dict(gi=(ACL_INT64, (2,))), 161002),
    (dict(y=(ACL_FLOAT16, (64, 5)), dst_type=ACL_FLOAT8_E5M2), 161002),
    (dict(mx=(ACL_INT32, (3, 5, 2))), 161002),
    (dict(round_mode="floor"), 161002),
    (dict(blocksize=64), 161002),
    (dict(dst_type=ACL_FLOAT16), 161002),
    (dict(soc="Ascend910B2", blocksize=64), 161002),
]


@pytest.mark.parametrize("changes, status", V1_UT_CASES)
def test_published_v1_ut(changes, status):
    assert expected_status(_ut_call(**changes)).status == status


@pytest.mark.parametrize("changes, g2plus, g2", [  # §2.4 V2 UT (ops-nn 59f9e06) and G2 master
    (dict(x=(ACL_BF16, (64, 5)), y=(ACL_FLOAT8_E4M3FN, (64, 5))), 0, 0),
    (dict(x=(ACL_BF16, (64, 5))), 0, 0),
    (dict(y=(ACL_FLOAT8_E4M3FN, (64, 5))), 0, 0),
    (dict(dst_type_max=np.finfo(np.float64).eps), 161002, 0),   # G2 narrows: |d| <= FLT_EPSILON
    (dict(), 0, 0),                                              # odd n with FP8
    (dict(y=(ACL_FLOAT4_E2M1, (64, 4)), x=(ACL_FLOAT16, (64, 4)),
          mx=(ACL_FLOAT8_E8M0, (3, 4, 2))), 0, 0),
    (dict(y=(ACL_FLOAT4_E1M2, (64, 4)), x=(ACL_FLOAT16, (64, 4)),
          mx=(ACL_FLOAT8_E8M0, (3, 4, 2))), 0, 0),
    (dict(y=(ACL_FLOAT4_E2M1, (64, 5))), 161002, 561103),       # odd n: op_api vs tiling
    (dict(y=(ACL_FLOAT4_E1M2, (64, 5))), 161002, 561103),
])
def test_published_v2_ut(changes, g2plus, g2):
    call = _ut_call(version=2, **changes)
    assert expected_status(call, "G2+").status == g2plus
    assert expected_status(call, "G2").status == g2


# --- validation order (§2.1 – §2.3) -------------------------------------------------------------

def _call(**changes):
    return make_call(64, 4, 2, **changes)


VALIDATION_CASES = [
    # (changes, version, status, rule)
    (dict(x=None, group_index=None), 2, 161001, "nullptr x"),
    (dict(group_index=None, y=None), 2, 161001, "nullptr group_index"),
    (dict(round_mode=None, soc="Ascend910B2"), 2, 161001, "nullptr round_mode"),
    (dict(y=None), 1, 161001, "nullptr y"),
    (dict(mxscale=None), 2, 161001, "nullptr mxscale"),
    (dict(soc="Ascend910B2", x=TensorArg(ACL_FLOAT, (64, 4))), 2, 161002, "platform"),
    (dict(soc="Ascend910_9392"), 1, 161002, "platform"),
    (dict(soc="Ascend310P3"), 2, 161002, "platform"),
    (dict(soc="Ascend950DT"), 2, 0, ""),
    (dict(x=TensorArg(ACL_FLOAT, (64, 4)), group_index=TensorArg(ACL_INT64, (2,))), 2, 161002,
     "dtype x"),
    (dict(group_index=TensorArg(ACL_INT64, (2,)), round_mode="ceil"), 2, 161002,
     "dtype groupIndex"),
    (dict(y=TensorArg(ACL_FLOAT16, (64, 4)), mxscale=TensorArg(ACL_INT32, (3, 4, 2))), 2, 161002,
     "dtype y"),
    (dict(y=TensorArg(ACL_FLOAT4_E2M1, (64, 4)), dst_type=ACL_FLOAT4_E2M1), 1, 161002, "dtype y"),
    (dict(mxscale=TensorArg(ACL_INT32, (3, 4, 2)), round_mode="ceil"), 2, 161002,
     "dtype mxscale"),
    (dict(round_mode="ceil", blocksize=16), 2, 161002, "roundMode"),
    (dict(round_mode="round"), 1, 161002, "roundMode"),
    (dict(round_mode="RINT"), 2, 161002, "roundMode"),
    (dict(blocksize=16, scale_alg=5), 2, 161002, "blocksize"),
    (dict(scale_alg=3, dst_type=ACL_FLOAT16), 2, 161002, "scaleAlg"),
    (dict(scale_alg=-1), 2, 161002, "scaleAlg"),
    (dict(scale_alg=3), 1, 0, ""),                             # V1 has no scaleAlg
    (dict(dst_type=ACL_FLOAT8_E5M2, x=TensorArg(ACL_BF16, (64, 4, 1))), 2, 161002, "dstType"),
    (dict(x=TensorArg(ACL_BF16, (64, 4, 1)), group_index=TensorArg(ACL_INT32, ())), 2, 161002,
     "rank x"),
    (dict(group_index=TensorArg(ACL_INT32, (2, 1)), y=TensorArg(36, (64,))), 2, 161002,
     "rank groupIndex"),
    (dict(y=TensorArg(36, (64,)), mxscale=TensorArg(37, (3, 8))), 2, 161002, "rank y"),
    (dict(mxscale=TensorArg(37, (3, 8))), 2, 161002, "rank mxscale"),
    (dict(y=TensorArg(36, (4, 64)), mxscale=TensorArg(37, (9, 9, 9))), 2, 161002, "shape y"),
    (dict(mxscale=TensorArg(37, (9, 9, 1))), 2, 161002, "shape mxscale[2]"),
    (dict(mxscale=TensorArg(37, (9, 9, 2))), 2, 161002, "shape mxscale[1]"),
    (dict(mxscale=TensorArg(37, (9, 4, 2))), 2, 161002, "shape mxscale[0]"),
    (dict(group_index=TensorArg(ACL_INT32, (0,)), mxscale=TensorArg(37, (1, 4, 2))), 2, 161002,
     "empty groupIndex"),
    (dict(x=TensorArg(ACL_BF16, (0, 4)), y=TensorArg(36, (0, 4)),
          group_index=TensorArg(ACL_INT32, (0,)), mxscale=TensorArg(37, (0, 4, 2))), 2, 161002,
     "empty groupIndex"),
    (dict(x=TensorArg(ACL_BF16, (0, 4)), y=TensorArg(36, (0, 4)), mxscale=TensorArg(37, (2, 4, 2)),
          round_mode="floor"), 2, 0, "empty x"),              # tiling never runs
    (dict(x=TensorArg(ACL_BF16, (64, 0)), y=TensorArg(36, (64, 0)),
          mxscale=TensorArg(37, (3, 0, 2), contiguous=False)), 2, 0, "empty x"),
    (dict(y=TensorArg(ACL_FLOAT4_E2M1, (64, 4), contiguous=False), dst_type=ACL_FLOAT4_E2M1,
          scale_alg=1), 2, 161002, "non-contiguous FP4 y"),
    (dict(y=TensorArg(ACL_FLOAT8_E4M3FN, (64, 4), contiguous=False)), 2, 0, ""),
    (dict(round_mode="floor", mxscale=TensorArg(37, (3, 4, 2), contiguous=False)), 2, 561103,
     "tiling roundMode for FP8"),
    (dict(round_mode="round"), 2, 561103, "tiling roundMode for FP8"),
    (dict(scale_alg=2), 2, 561103, "tiling scaleAlg 2 with FP8"),
    (dict(y=TensorArg(ACL_FLOAT4_E1M2, (64, 4)), dst_type=ACL_FLOAT4_E1M2, scale_alg=1), 2,
     561103, "tiling scaleAlg 1 with FP4"),
    (dict(mxscale=TensorArg(37, (3, 4, 2), contiguous=False)), 2, 161002,
     "non-contiguous mxscale"),
    (dict(mxscale=TensorArg(37, (3, 4, 2), contiguous=False)), 1, 161002,
     "non-contiguous mxscale"),
]


@pytest.mark.parametrize("changes, version, status, rule", VALIDATION_CASES)
def test_validation_order(changes, version, status, rule):
    verdict = expected_status(_call(version=version, **changes))
    assert (verdict.status, verdict.rule) == (status, rule)
    assert verdict.launches == (status == 0 and rule == "")


@pytest.mark.parametrize("dst, d, g2, g2plus", [
    (ACL_FLOAT4_E2M1, 0.0, 0, 0), (ACL_FLOAT4_E2M1, -0.0, 0, 0), (ACL_FLOAT4_E2M1, 6.0, 0, 0),
    (ACL_FLOAT4_E2M1, 12.0, 0, 0), (ACL_FLOAT4_E2M1, 5.99, 561103, 161002),
    (ACL_FLOAT4_E2M1, 12.01, 561103, 161002), (ACL_FLOAT4_E2M1, -1.0, 561103, 161002),
    (ACL_FLOAT4_E2M1, math.inf, 561103, 161002), (ACL_FLOAT4_E2M1, math.nan, 0, 161002),
    (ACL_FLOAT4_E2M1, 1e-50, 0, 161002),                       # narrows to 0.0f
    (ACL_FLOAT4_E1M2, 1.75, 0, 0), (ACL_FLOAT4_E1M2, 3.5, 0, 161002),
    (ACL_FLOAT4_E1M2, 1.7, 561103, 161002), (ACL_FLOAT4_E1M2, 3.6, 561103, 161002),
    (ACL_FLOAT8_E4M3FN, -5.0, 0, 161002), (ACL_FLOAT8_E5M2, 1e300, 0, 161002),
])
def test_dst_type_max_rules(dst, d, g2, g2plus):
    """§2.2 tiling (float-narrowed d) vs §2.3 G2+ op_api (double d), scale_alg 2 / 1."""
    alg = 2 if dst in (ACL_FLOAT4_E2M1, ACL_FLOAT4_E1M2) else 1
    call = _call(y=TensorArg(dst, (64, 4)), dst_type=dst, scale_alg=alg, dst_type_max=d)
    assert expected_status(call, "G2").status == g2
    assert expected_status(call, "G2+").status == g2plus


def test_validation_groupindex_values_are_not_checked():
    """Host validation only sees shapes: invalid groupIndex values are still status 0."""
    x = bf16(np.ones((64, 2)))
    for gi in ([64, 0], [-7, 64], [1000, 64], [10, 20]):
        y, mx, written = gmq(x, gi)
        assert y.shape == (64, 2) and mx.shape == (3, 2, 2)


def test_g2plus_int64_group_index_passes_op_api_but_not_g2_tiling():
    call = _call(group_index=TensorArg(ACL_INT64, (2,)))
    assert expected_status(call, "G2").rule == "dtype groupIndex"
    assert expected_status(call, "G2+").status == 561103     # open question §9.8


@pytest.mark.parametrize("kwargs, status, rule", [
    (dict(dst_type="float4_e2m1", version=1), 161002, "dtype y"),
    (dict(round_mode="floor"), 561103, "tiling roundMode for FP8"),
    (dict(blocksize=64), 161002, "blocksize"),
    (dict(dst_type="float4_e2m1", scale_alg=1), 561103, "tiling scaleAlg 1 with FP4"),
])
def test_reference_refuses_rejected_arguments(kwargs, status, rule):
    with pytest.raises(GmqRejected) as info:
        gmq(bf16(np.ones((64, 4))), [64], **kwargs)
    assert (info.value.status, info.value.rule) == (status, rule)


def test_reference_rejects_int64_group_index_and_odd_fp4_width():
    with pytest.raises(GmqRejected) as info:
        gmq(bf16(np.ones((64, 4))), np.array([64], dtype=np.int64))
    assert info.value.rule == "dtype groupIndex"
    with pytest.raises(GmqRejected) as info:
        gmq(bf16(np.ones((64, 3))), [64], dst_type="float4_e1m2")
    assert info.value.status == 561103


def test_empty_x_writes_nothing():
    y, mx, written = gmq(bf16(np.zeros((0, 6))), [0, 0, 0])
    assert y.shape == (0, 6) and mx.shape == (3, 6, 2) and not written.any()
    y, mx, written = gmq(bf16(np.zeros((100, 0))), [100])
    assert y.shape == (100, 0) and mx.shape == (2, 0, 2)


# --- layout (§3) ---------------------------------------------------------------------------------

def spike_column(m, spikes):
    """bf16 [m, 1] zeros with 2^exp at the given rows: alg 0 / E4M3 gives S = exp + 119 for the
    block holding the spike."""
    x = np.zeros((m, 1), dtype=np.float32)
    for row, exp in spikes.items():
        x[row, 0] = 2.0 ** exp
    return x.astype(BF16)


def test_worked_layout_example_m200():
    """§3.4: m=200, groupIndex [40, 40, 170, 200] -> R = 7, rows 1 and 6 never written."""
    blocks = {  # (first row, last row) -> (mxscale row, slot)
        (0, 31): (0, 0), (32, 39): (0, 1),                       # g0
        (40, 71): (2, 0), (72, 103): (2, 1), (104, 135): (3, 0), (136, 167): (3, 1),
        (168, 169): (4, 0),                                      # g2 (s=40, L=130)
        (170, 199): (5, 0),                                      # g3 (s=170, L=30)
    }
    spikes = {last: i for i, (_, last) in enumerate(blocks)}    # one spike per block, distinct
    y, mx, written = gmq(spike_column(200, spikes), [40, 40, 170, 200])
    assert mx.shape == (7, 1, 2)
    assert written[:, 0, 0].tolist() == [True, False, True, True, True, True, False]
    expected = np.zeros((7, 1, 2), dtype=np.uint8)
    for i, (row, slot) in enumerate(blocks.values()):
        expected[row, 0, slot] = i + 119
    assert np.array_equal(mx[written], expected[written])
    assert mx[4, 0, 1] == 0 and mx[5, 0, 1] == 0                # pads
    assert y[list(spikes)].ravel().tolist() == [0x78] * len(spikes)   # each spike -> 256


def test_gap_rows_example():
    """§3.4: groups [64, 128], m = 128 -> R = 4, written rows 0 and 2."""
    mask = ref.mxscale_written_mask([64, 128], 128, 3)
    assert mask.shape == (4, 3, 2)
    assert mask[:, 0, 0].tolist() == [True, False, True, False]
    assert mask.all(axis=(1, 2)).tolist() == mask.any(axis=(1, 2)).tolist()


def test_blocks_count_from_group_start():
    """§3.2: a group starting at row 40 has blocks [40, 72), [72, 104): a spike at row 71 only
    affects the first, one at row 72 only the second."""
    x = spike_column(104, {71: 10, 72: 3, 50: 1})
    y, mx, _ = gmq(x, [40, 104])
    assert mx[0 // 64 + 1, 0].tolist() == [10 + 119, 3 + 119]
    assert mx[0, 0].tolist() == [0, 0]                         # group 0 is all zeros
    assert y[50, 0] == decode_index(2.0 ** 1 / 2.0 ** 2)        # 2 / 2^(10-8)


def decode_index(value, fmt="float8_e4m3fn"):
    return int(np.float32(value).astype(getattr(ml_dtypes, fmt)).view(np.uint8))


def test_partial_block_ignores_rows_of_next_group():
    """Block B of group 0 (rows 32..39) must not see row 40, which belongs to group 1."""
    x = spike_column(80, {39: 0, 40: 20})
    y, mx, _ = gmq(x, [40, 80])
    assert mx[0, 0].tolist() == [0, 119]                      # group 0: A all zeros, B max 1
    assert mx[1, 0].tolist() == [139, 0]                      # group 1 (s=40): one block + pad


def test_group_of_96_rows_pads_second_chunk():
    x = spike_column(96, {0: 1, 40: 2, 70: 3})
    _, mx, written = gmq(x, [96])
    assert mx.shape == (2, 1, 2) and written.all()
    assert mx[:, 0].tolist() == [[120, 121], [122, 0]]


def test_columns_are_independent_and_slicing_does_not_matter(monkeypatch):
    rng = np.random.default_rng(7)
    x = bf16(rng.standard_normal((150, 256)) * 2.0 ** rng.integers(-30, 30, 256))
    for kw in (dict(), dict(dst_type="float4_e2m1", scale_alg=2, round_mode="round")):
        full = gmq(x, [33, 33, 150], **kw)
        monkeypatch.setattr(ref, "_CHUNK_ELEMENTS", 64)      # one 64-column slice at a time
        sliced = gmq(x, [33, 33, 150], **kw)
        monkeypatch.undo()
        assert all(np.array_equal(a, b) for a, b in zip(full, sliced, strict=True))
        one = gmq(x[:, 64:128], [33, 33, 150], **kw)
        width = slice(32, 64) if kw else slice(64, 128)
        assert np.array_equal(one[0], full[0][:, width])
        assert np.array_equal(one[1], full[1][:, 64:128])


def test_bits_input_equals_typed_input():
    rng = np.random.default_rng(3)
    xf = rng.standard_normal((70, 4)).astype(np.float32)
    for typed, name in ((xf.astype(BF16), "bfloat16"), (xf.astype(np.float16), "float16")):
        a = gmq(typed, [70], dst_type="float8_e5m2")
        b = gmq(typed.view(np.uint16), [70], dst_type="float8_e5m2", x_dtype=name)
        assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))


# --- hand-checked blocks (§4) --------------------------------------------------------------------
# HAND_CASES live in gmq_hand_cases.py: test_grouped_dynamic_mx_quant.py runs them through C too.

@pytest.mark.parametrize("values, dtype, dst, kwargs, scales, codes", HAND_CASES, ids=hand_case_ids())
def test_hand_checked_block(values, dtype, dst, kwargs, scales, codes):
    assert quantize_column(values, dst, dtype, **kwargs) == (scales, codes)


@pytest.mark.parametrize("dst, kwargs", [
    ("float8_e4m3fn", {}), ("float8_e5m2", dict(scale_alg=1)), ("float4_e2m1", {}),
    ("float4_e2m1", dict(scale_alg=2)), ("float4_e1m2", dict(scale_alg=2)),
    ("float4_e1m2", dict(scale_alg=2, dst_type_max=1.875))])
@pytest.mark.parametrize("special", [math.inf, -math.inf, math.nan])
def test_inf_or_nan_poisons_the_block(dst, kwargs, special):
    """§4.8: S = 0xFF and every element of that block -> 0x00; the other block is unaffected."""
    values = [1.0, -2.0, special] + [0.5] * 29 + [4.0]
    scales, codes = quantize_column(values, dst, **kwargs)
    assert scales[0] == 0xFF and codes[:32] == [0] * 32
    assert scales[1] != 0xFF and codes[32] != 0


def test_amax_nan_ignore_option():
    """§9.1 alternative: scale_alg 1 float max ignoring NaN; the NaN element alone becomes 0."""
    scales, codes = quantize_column([math.nan, 1.0], scale_alg=1, amax_nan="ignore")
    assert scales == [119, 0] and codes == [0x00, 0x78]       # 1*fl(1/448): exp 118 -> 119
    assert quantize_column([math.nan, 1.0], scale_alg=1)[0] == [0xFF, 0]


def test_fp4_packing_low_nibble_first():
    """§3.6: byte k = element 2k (bits 0-3) | element 2k+1 << 4."""
    x = bf16([[1.0, -0.5, 0.0, -0.0]])
    y, mx, _ = gmq(x, [1], dst_type="float4_e2m1")
    # each column is its own block: 1 -> S 125, R 4 -> 4.0 (6); -0.5 -> S 124 -> -4.0 (0xE)
    assert y.tolist() == [[0xE6, 0x80]]
    assert mx[0, :, 0].tolist() == [125, 124, 0, 0]


# --- number formats -------------------------------------------------------------------------------

FP4_TEXTBOOK_GRIDS = {"float4_e2m1": [0, 0.5, 1, 1.5, 2, 3, 4, 6],
                      "float4_e1m2": [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75]}


def positive_grid(fmt):
    if fmt in FP4_TEXTBOOK_GRIDS:
        return np.array(FP4_TEXTBOOK_GRIDS[fmt], dtype=np.float64)
    top = {"float8_e4m3fn": 0x7E, "float8_e5m2": 0x7B}[fmt]
    return np.arange(top + 1, dtype=np.uint8).view(getattr(ml_dtypes, fmt)).astype(np.float64)


def textbook_round(u, fmt, mode="rint"):
    """float64 values onto the format's grid: rint (ties to the even code), round (ties away),
    floor; saturating at +-max; sign of zero kept."""
    grid = positive_grid(fmt)
    u = np.asarray(u, dtype=np.float64)
    a = np.abs(u)
    hi = np.minimum(np.searchsorted(grid, a, side="left"), grid.size - 1)
    lo = np.where(grid[hi] <= a, hi, hi - 1)
    lo_v, hi_v = grid[lo], grid[hi]
    d_lo, d_hi = a - lo_v, hi_v - a
    if mode == "rint":
        pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    elif mode == "round":
        pick_hi = d_hi <= d_lo
    else:
        pick_hi = np.signbit(u) & (a > lo_v)
    mag = np.where(a >= grid[-1], grid[-1], np.where(pick_hi, hi_v, lo_v))
    return np.copysign(mag, u)


def fp8_edge_values(fmt):
    grid = positive_grid(fmt)
    mids = (grid[:-1] + grid[1:]) / 2
    base = np.concatenate([grid, mids, mids * (1 + 2.0 ** -20), mids * (1 - 2.0 ** -20),
                           grid[-1] * np.array([1.01, 1.07, 2.0, 1e30])]).astype(np.float32)
    return np.concatenate([base, -base, np.float32([np.inf, -np.inf, 1e-45, -1e-45])])


@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
def test_encode_fp8_matches_textbook_on_edges(fmt):
    """§4.6: RNE incl. subnormals and ties, saturation (also of Inf), sign of zero, NaN -> 0."""
    v = fp8_edge_values(fmt)
    got = encode_fp8(v, fmt)
    want = textbook_round(v, fmt)
    assert np.array_equal(decode_fp8(got, fmt), want)
    assert np.array_equal(np.signbit(decode_fp8(got, fmt)), np.signbit(want))
    assert encode_fp8(np.float32([np.nan, -np.nan]), fmt).tolist() == [0, 0]


@pytest.mark.parametrize("fmt", ["float4_e2m1", "float4_e1m2"])
@pytest.mark.parametrize("mode", ["rint", "round", "floor"])
def test_fp4_kernel_steps_equal_grid_rounding(fmt, mode):
    """§4.7 claim: the kernel's pre-rounding + saturating cast = rounding onto the grid with the
    mode, saturating, keeping the sign of zero."""
    rng = np.random.default_rng(11)
    grid = positive_grid(fmt)
    mids = (grid[:-1] + grid[1:]) / 2
    v = np.concatenate([rng.standard_normal(20000) * 3, rng.uniform(-8, 8, 20000), grid, mids,
                        np.ldexp(1.0, rng.integers(-149, 127, 2000)), [1e38, 3e38]])
    v = np.concatenate([v, -v]).astype(np.float32)
    codes = fp4_grid_value_to_code(fp4_kernel_round(v, fmt, mode), fmt)
    want = textbook_round(v.astype(np.float64), fmt, mode)
    assert np.array_equal(decode_fp4(codes, fmt), want)
    assert np.array_equal(np.signbit(decode_fp4(codes, fmt)), np.signbit(want))


@pytest.mark.parametrize("fmt, inf_code", [("float4_e2m1", 0x0), ("float4_e1m2", 0x7)])
def test_fp4_nan_and_inf(fmt, inf_code):
    """§4.7: NaN -> 0x0; +Inf -> E2M1 0x0 (the kernel's 0 * Inf), E1M2 +max."""
    v = np.float32([np.nan, np.inf, -np.inf])
    codes = fp4_grid_value_to_code(fp4_kernel_round(v, fmt, "rint"), fmt).tolist()
    assert codes == [0, inf_code, inf_code | (8 if inf_code else 0)]


def test_doc_round_mode_example():
    """§5.3 doc example: 2.5 -> RINT 2, FLOOR 2, ROUND 3 (E2M1)."""
    got = [decode_fp4(fp4_grid_value_to_code(fp4_kernel_round(np.float32([2.5]), "float4_e2m1",
                                                              m), "float4_e2m1"), "float4_e2m1")[0]
           for m in ("rint", "floor", "round")]
    assert got == [2.0, 2.0, 3.0]


def test_bf16_rne_matches_ml_dtypes():
    rng = np.random.default_rng(5)
    f = (rng.standard_normal(50000) * 10.0 ** rng.integers(-5, 5, 50000)).astype(np.float32)
    assert np.array_equal(f32_to_bf16_bits_rne(f), f.astype(BF16).view(np.uint16))


def test_pack_unpack_roundtrip_and_e8m0_decode():
    nib = np.arange(16, dtype=np.uint8).reshape(2, 8)
    assert np.array_equal(unpack_fp4(pack_fp4(nib)), nib)
    assert pack_fp4(np.array([[0x1, 0xA]], dtype=np.uint8)).tolist() == [[0xA1]]
    assert decode_e8m0(np.array([0, 127, 128, 254])).tolist() == [2.0 ** -127, 1, 2, 2.0 ** 127]
    assert np.isnan(decode_e8m0(np.array([255]))[0])


# --- sanity against a float64 textbook MX quantiser ---------------------------------------------

DYNAMIC_THRESHOLD = {1: 0.5, 2: 0.75, 3: 0.875}


def textbook_scale_exponent(amax, fmt, scale_alg, d):
    """Unbiased shared exponent (spec §4.4) computed in float64 from the block max."""
    spec = ref.dst_format(fmt)
    e = math.floor(math.log2(amax))
    if scale_alg == 0:
        return e - spec.emax
    template = ref.dst_type_max_template(fmt, d) if scale_alg == 2 else 0
    if template:
        mantissa = amax / 2.0 ** e - 1.0
        return e + (mantissa > DYNAMIC_THRESHOLD[template]) - spec.emax
    return math.ceil(math.log2(amax / (d or spec.dmax)))


def textbook_blocks(group_index):
    """(first row, last row + 1, mxscale row, slot) of every block, from the spec's formula."""
    out, start = [], 0
    for g, end in enumerate(group_index):
        for k, s in enumerate(range(start, end, 32)):
            out.append((s, min(s + 32, end), start // 64 + g + k // 2, k % 2))
        start = end
    return out


TEXTBOOK_CONFIGS = [
    ("float8_e4m3fn", 0, 0.0, "rint"), ("float8_e5m2", 0, 0.0, "rint"),
    ("float8_e4m3fn", 1, 0.0, "rint"), ("float8_e5m2", 1, 0.0, "rint"),
    ("float8_e4m3fn", 1, 300.0, "rint"),
    ("float4_e2m1", 0, 0.0, "rint"), ("float4_e2m1", 0, 0.0, "floor"),
    ("float4_e1m2", 0, 0.0, "round"),
    ("float4_e2m1", 2, 0.0, "rint"), ("float4_e2m1", 2, 7.0, "floor"),
    ("float4_e2m1", 2, 9.0, "round"), ("float4_e1m2", 2, 1.875, "rint"),
    ("float4_e1m2", 2, 0.0, "floor"), ("float4_e1m2", 2, 2.5, "rint"),
]


@pytest.mark.parametrize("x_type", [BF16, np.float16])
@pytest.mark.parametrize("fmt, scale_alg, d, mode", TEXTBOOK_CONFIGS)
def test_against_textbook_mx_quantiser(x_type, fmt, scale_alg, d, mode):
    rng = np.random.default_rng(zlib.crc32(repr((fmt, scale_alg, d, mode)).encode()))
    group_index = [37, 37, 200, 245, 300]
    spread = (-12, 12) if x_type is np.float16 else (-60, 60)
    x = (rng.standard_normal((300, 24)) * 2.0 ** rng.integers(*spread, 24)).astype(x_type)
    y, mx, written = gmq(x, group_index, mode, fmt, scale_alg=scale_alg, dst_type_max=d)
    x64 = x.astype(np.float64)
    reads_bf16 = scale_alg == 2 and ref.dst_type_max_template(fmt, d) != 0
    scale_x = x.astype(np.float32).astype(BF16).astype(np.float64) if reads_bf16 else x64
    codes = unpack_fp4(y) if fmt.startswith("float4") else y
    decoded = decode_fp4(codes, fmt) if fmt.startswith("float4") else decode_fp8(codes, fmt)
    seen_rows = set()
    for first, stop, row, slot in textbook_blocks(group_index):
        seen_rows.add(row)
        for col in range(x.shape[1]):
            amax = float(np.max(np.abs(scale_x[first:stop, col])))
            want = textbook_scale_exponent(amax, fmt, scale_alg, d)
            assert int(mx[row, col, slot]) == want + 127, (first, col)
        scale = decode_e8m0(mx[row, :, slot])
        want_q = textbook_round(x64[first:stop] / scale, fmt, mode)
        assert np.array_equal(decoded[first:stop], want_q), (first, row, slot)
    assert set(np.flatnonzero(written[:, 0, 0])) == seen_rows


# --- invalid groupIndex (§3.5) -------------------------------------------------------------------

def test_policies_agree_on_valid_group_index():
    rng = np.random.default_rng(9)
    x = bf16(rng.standard_normal((130, 8)))
    results = [gmq(x, [0, 50, 50, 130], group_index_policy=p) for p in ref.GROUP_INDEX_POLICIES]
    for other in results[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(results[0], other, strict=True))
    assert ref.group_index_notes([0, 50, 50, 130], 130) == ()


def test_decreasing_group_index():
    m = 128
    clamp = ref.plan_groups([100, 50, 128], m, "clamp")
    assert [(s.group, s.start, s.end) for s in clamp.segments] == [(0, 0, 100), (2, 100, 128)]
    assert not clamp.overlapping and any("below" in n for n in clamp.notes)
    kernel = ref.plan_groups([100, 50, 128], m, "kernel")
    assert [(s.group, s.start, s.end) for s in kernel.segments] == [(0, 0, 100), (2, 50, 128)]
    assert kernel.overlapping
    with pytest.raises(ValueError, match="below"):
        ref.plan_groups([100, 50, 128], m, "strict")


def test_kernel_policy_later_group_wins():
    """Under "kernel", group 2 re-quantises rows 50..127 from its own start and overwrites."""
    rng = np.random.default_rng(4)
    x = bf16(rng.standard_normal((128, 6)) * 100)
    y, mx, written = gmq(x, [100, 50, 128], group_index_policy="kernel")
    alone_y, alone_mx, _ = gmq(x[50:], [78])
    assert np.array_equal(y[50:], alone_y)
    assert np.array_equal(mx[2:4], alone_mx[0:2])            # rows 50 // 64 + 2 + c
    head_y, head_mx, _ = gmq(x[:100], [100])
    assert np.array_equal(y[:50], head_y[:50]) and np.array_equal(mx[:2], head_mx)
    assert written[:, 0, 0].tolist() == [True, True, True, True, False]


def test_clamp_policy_outputs():
    rng = np.random.default_rng(8)
    x = bf16(rng.standard_normal((128, 4)))
    y, mx, written = gmq(x, [100, 50, 128])                    # clamp: groups [0,100), [100,128)
    assert np.array_equal(y, np.concatenate([gmq(x[:100], [100])[0], gmq(x[100:], [28])[0]]))
    assert written[:, 0, 0].tolist() == [True, True, False, True, False]   # g2 row 100//64+2
    assert np.array_equal(mx[3], gmq(x[100:], [28])[1][0])


@pytest.mark.parametrize("group_index, m, segments, y_rows", [
    ([64], 128, [(0, 0, 64)], 64),                     # last < m: tail rows never written
    ([-5, 64], 64, [(1, 0, 64)], 64),                  # negative -> empty group
    ([300], 128, [(0, 0, 128)], 128),                  # beyond m -> ends at m
    ([30, -10, 20, 64], 64, [(0, 0, 30), (3, 30, 64)], 64),
])
def test_clamp_policy_plans(group_index, m, segments, y_rows):
    plan = ref.plan_groups(group_index, m)
    assert [(s.group, s.start, s.end) for s in plan.segments] == segments
    assert plan.notes
    mask = ref.y_written_mask(group_index, m, 4)
    assert mask[:y_rows].all() and not mask[y_rows:].any()


@pytest.mark.parametrize("policy", ["clamp", "kernel"])
def test_random_invalid_group_indices_stay_in_bounds(policy):
    rng = np.random.default_rng(21)
    for _ in range(60):
        m = int(rng.integers(1, 200))
        gi = rng.integers(-50, m + 80, int(rng.integers(1, 7))).astype(np.int32)
        x = bf16(rng.standard_normal((m, 2)))
        y, mx, written = gmq(x, gi, dst_type="float4_e2m1", group_index_policy=policy)
        plan = ref.plan_groups(gi, m, policy)
        assert all(0 <= s.start < s.end <= m for s in plan.segments)
        rows = ref.y_written_rows(plan)
        assert not y[~rows].any()
        assert not mx[~written].any()
        for seg in plan.segments:                      # every write lands inside mxscale
            assert seg.start // 64 + seg.group + (seg.end - seg.start - 1) // 64 < mx.shape[0]
