"""aclnnGroupedDynamicMxQuant[V2] results against the spec (/work/shared/spec/grouped_dynamic_mx_
quant.md, generation G2): the published values (§7, §3.4), and bit-identical y / written mxscale
bytes against the independent NumPy reference (tests/reference/grouped_dynamic_mx_quant.py) for
every legal (scaleAlg, roundMode, dstTypeMax) combination, fp16 and bf16 inputs, awkward group
layouts and special values; bytes the kernel must not write keep their sentinel.

Validation codes: test_grouped_dynamic_mx_quant_validation.py; examples: ..._examples.py.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from gmq_hand_cases import HAND_CASES, hand_case_ids
from reference.grouped_dynamic_mx_quant import (dst_format, grouped_dynamic_mx_quant,
                                                mxscale_written_mask, y_written_mask)
from test_grouped_dynamic_mx_quant_harness import DST_NAMES, SENTINEL, quantize

BF16 = ml_dtypes.bfloat16
X_TYPES = {"bfloat16": BF16, "float16": np.float16}
AICORE_EXCEPTION = 507015


# ------------------------------------------------------------------------------------------------
# Legal argument combinations (spec §2.2: the G2 tiling accepts exactly these)
# ------------------------------------------------------------------------------------------------

def legal_combinations():
    """(dst, scale_alg, round_mode, dst_type_max) accepted by the G2 op_api and tiling, with
    every dstTypeMax template of scale_alg 2 (T1 6/0-for-E2M1, T2 7, T3 1.875, T0 otherwise)."""
    combos = []
    for dst in ("float8_e4m3fn", "float8_e5m2"):
        combos += [(dst, 0, "rint", 0.0), (dst, 1, "rint", 0.0),
                   (dst, 1, "rint", 300.0)]        # G2 master: FP8 dstTypeMax is used as Amax
    for dst, dtms in (("float4_e2m1", (0.0, 6.0, 7.0, 9.5, 12.0)),
                      ("float4_e1m2", (0.0, 1.75, 1.875, 2.5, 3.5))):
        for mode in ("rint", "round", "floor"):
            combos.append((dst, 0, mode, 0.0))
            combos += [(dst, 2, mode, d) for d in dtms]
    return combos


COMBOS = legal_combinations()


def combo_id(c):
    return f"{c[0]}-alg{c[1]}-{c[2]}-dtm{c[3]:g}"


# ------------------------------------------------------------------------------------------------
# Test data
# ------------------------------------------------------------------------------------------------

def mixed_data(m: int, n: int, dtype, seed: int) -> np.ndarray:
    """Blocks of very different magnitudes (each column a random power-of-two scale, changing
    every 16 rows) plus special values: zero / -0 columns, subnormals, NaN, +-Inf, values at the
    type's maximum, exact powers of two and rounding ties. n >= 10."""
    rng = np.random.default_rng(seed)
    finfo_max = float(np.finfo(np.float16).max) if dtype == np.float16 else 3.3e38
    exps = rng.integers(-30, 16, size=(m // 16 + 1, n)).repeat(16, axis=0)[:m]
    x = rng.standard_normal((m, n)) * np.exp2(exps)
    x[:, 0] = 0.0
    x[:, 1] = -0.0
    tiny = float(np.finfo(np.float16).smallest_subnormal) if dtype == np.float16 else 9.2e-41
    x[:, 2] = rng.integers(-5, 6, m) * tiny                         # subnormal inputs only
    x[5, 3] = np.nan
    x[40, 4] = np.inf
    x[m - 3, 5] = -np.inf
    x[:, 6] = rng.choice([-1, 1], m) * finfo_max                   # overflow candidates
    x[:, 7] = np.exp2(rng.integers(-20, 10, m).astype(float))      # powers of two
    x[:, 8] = (rng.integers(0, 64, m) + 0.5) * 0.25                 # halves: rounding ties
    x[:, 9] = (rng.integers(-64, 64, m) + 0.5) * np.exp2(-12)
    with np.errstate(over="ignore"):
        return x.astype(dtype)


# Group layouts: empty groups, groups shorter than a block, odd block counts, m % 64 != 0, the
# last end below m (rows after it untouched), several groups inside one 64-row chunk.
LAYOUTS = {
    "mixed": (200, [0, 40, 40, 57, 170, 200]),
    "short": (70, [3, 3, 31, 33, 65]),
}


def check_against_reference(stream, x, group_index, dst, alg, mode, dtm, version=2, **kw):
    got = quantize(stream, x, group_index, dst_type=dst, round_mode=mode, scale_alg=alg,
                   dst_type_max=dtm, version=version, **kw)
    case = f"{x.dtype} {list(group_index)} {dst} alg{alg} {mode} dtm={dtm}"
    assert (got.outcome.status, got.outcome.launch, got.outcome.sync) == (0, 0, 0), \
        (case, got.outcome)
    y, mx, written = grouped_dynamic_mx_quant(x, group_index, mode, dst, 32, alg, dtm, version)
    m, n = x.shape
    y_mask = y_written_mask(group_index, m, n, dst)
    bad_y = np.argwhere(y_mask & (got.y != y))
    assert bad_y.size == 0, f"{case}: y differs at {bad_y[:5].tolist()}: got " \
        f"{got.y[tuple(bad_y[0])]:#04x} want {y[tuple(bad_y[0])]:#04x}"
    assert np.all(got.y[~y_mask] == SENTINEL), f"{case}: y rows outside the groups were written"
    bad_s = np.argwhere(written & (got.mxscale != mx))
    assert bad_s.size == 0, f"{case}: mxscale differs at {bad_s[:5].tolist()}"
    assert np.all(got.mxscale[~written] == kw.get("fill_mxscale", SENTINEL)), \
        f"{case}: unwritten mxscale bytes changed"
    return got


# ------------------------------------------------------------------------------------------------
# Published values
# ------------------------------------------------------------------------------------------------

EXAMPLE_X = np.array([0, 16640, 17024, 17408] * 2, dtype=np.uint16).view(BF16).reshape(8, 1)


@pytest.mark.parametrize("version", [1, 2])
def test_published_example(stream, version):
    """§7.1: the aclnn V1/V2 and torch_npu example."""
    got = quantize(stream, EXAMPLE_X, [4, 8], dst_type="float8_e4m3fn", version=version)
    assert got.outcome.status == 0 and got.outcome.workspace_size == 32
    assert (got.outcome.launch, got.outcome.sync) == (0, 0)
    assert got.y.ravel().tolist() == [0, 72, 96, 120, 0, 72, 96, 120]
    assert got.mxscale.tolist() == [[[128, 0]], [[128, 0]]]


def test_published_scale_alg_1_example(stream):
    """§7.2: scaleAlg 1 on one block (0, 8, 64, 512): 512 * fl32(1/448) = 1.14 -> code 128."""
    got = quantize(stream, EXAMPLE_X[:4], [4], scale_alg=1)
    assert got.y.ravel().tolist() == [0, 72, 96, 120]
    assert got.mxscale.tolist() == [[[128, 0]]]


def test_scale_alg_1_amax_equal_to_dmax_gives_scale_one(stream):
    """§4.2 note: 448 * fl32(1/448) == 1.0 exactly, so amax 448 -> S = 127 and y = 448 (0x7E)."""
    x = np.array([[448.0], [1.0]], dtype=BF16)
    got = quantize(stream, x, [2], scale_alg=1)
    assert got.mxscale[0, 0].tolist() == [127, 0]
    assert got.y.ravel().tolist() == [0x7E, 0x38]


def test_worked_layout_example(stream):
    """§3.4: m = 200, groupIndex [40, 40, 170, 200] -> R = 7 rows; rows 1 (the empty group) and 6
    are never written; row 4 holds rows 168-169 of group 2 plus a 0 pad, row 5 group 3 plus pad."""
    x = np.ones((200, 2), dtype=BF16)
    got = quantize(stream, x, [40, 40, 170, 200], fill_mxscale=0xEE)
    assert got.mxscale.shape == (7, 2, 2)
    written_rows = [r for r in range(7) if not np.all(got.mxscale[r] == 0xEE)]
    assert written_rows == [0, 2, 3, 4, 5]
    # blocks of ones: scale_alg 0 gives S = 127 - emax(E4M3FN) = 119, i.e. scale 2^-8
    assert np.all(got.mxscale[[0, 2, 3], :, :] == 119)
    assert got.mxscale[4].tolist() == [[119, 0], [119, 0]]
    assert got.mxscale[5].tolist() == [[119, 0], [119, 0]]
    assert np.all(got.y == 0x78)   # 1.0 * 2^8 = 256 in E4M3FN


@pytest.mark.parametrize("values, dtype, dst, kwargs, scales, codes", HAND_CASES, ids=hand_case_ids())
def test_hand_checked_block(stream, values, dtype, dst, kwargs, scales, codes):
    """The blocks worked out by hand from spec §4 (gmq_hand_cases.py), through the C library: one
    group holding `values` as a column (FP4: the column twice, as FP4 needs an even width)."""
    col = np.asarray(values, dtype=np.float32).astype(dtype)[:, None]
    fp4 = dst.startswith("float4")
    x = np.concatenate([col, col], axis=1) if fp4 else col
    got = quantize(stream, x, [len(values)], dst_type=dst, **kwargs)
    assert (got.outcome.status, got.outcome.launch, got.outcome.sync) == (0, 0, 0), got.outcome
    column = (got.y[:, 0] & 0xF) if fp4 else got.y[:, 0]
    assert (got.mxscale[0, 0].tolist(), column.tolist()) == (scales, codes)


# ------------------------------------------------------------------------------------------------
# Against the NumPy reference: every legal combination, both input types
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("x_type", list(X_TYPES))
@pytest.mark.parametrize("combo", COMBOS, ids=combo_id)
def test_matches_reference(stream, combo, x_type):
    dst, alg, mode, dtm = combo
    for seed, (m, gi) in enumerate(LAYOUTS.values()):
        x = mixed_data(m, 34, X_TYPES[x_type], seed)
        check_against_reference(stream, x, gi, dst, alg, mode, dtm)


@pytest.mark.parametrize("dst", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("x_type", list(X_TYPES))
def test_v1_matches_reference(stream, dst, x_type):
    x = mixed_data(200, 17, X_TYPES[x_type], 7)
    check_against_reference(stream, x, [33, 100, 100, 190], dst, 0, "rint", 0.0, version=1)


def all_finite_patterns(x_type: str) -> np.ndarray:
    """Every finite 16-bit pattern of the type, as values of the type."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    values = bits.view(X_TYPES[x_type])
    return values[np.isfinite(values.astype(np.float32))]


def anchored_columns(x_type: str, seed: int) -> np.ndarray:
    """All finite patterns, 31 per column (sorted by magnitude), each column topped by an anchor
    2^0 ... 2^13 times its largest magnitude: every element meets every scale offset, so the
    element conversion is exercised on its whole range (subnormal targets, ties, saturation)."""
    rng = np.random.default_rng(seed)
    values = all_finite_patterns(x_type)
    values = values[np.argsort(np.abs(values.astype(np.float32)), kind="stable")]
    cols = -(-values.size // 31)
    body = np.zeros(cols * 31, dtype=np.float32)
    body[:values.size] = values.astype(np.float32)
    body = body.reshape(cols, 31)
    peak = np.abs(body).max(axis=1)
    limit = 65504.0 if x_type == "float16" else 3.3e38
    anchor = np.minimum(peak * np.exp2(np.arange(cols) % 14), limit) * rng.choice([-1, 1], cols)
    x = np.concatenate([anchor[:, None], body], axis=1).T       # [32, cols]
    rng.shuffle(x, axis=0)                                       # anchor anywhere in the block
    if cols % 2:
        x = np.concatenate([x, x[:, :1]], axis=1)               # FP4 needs an even n
    return x.astype(X_TYPES[x_type])


@pytest.mark.parametrize("x_type", list(X_TYPES))
@pytest.mark.parametrize("dst, alg, mode, dtm", [
    ("float8_e4m3fn", 0, "rint", 0.0), ("float8_e5m2", 0, "rint", 0.0),
    ("float8_e4m3fn", 1, "rint", 0.0), ("float8_e5m2", 1, "rint", 0.0),
    ("float4_e2m1", 0, "rint", 0.0), ("float4_e2m1", 0, "round", 0.0),
    ("float4_e2m1", 0, "floor", 0.0), ("float4_e2m1", 2, "rint", 7.0),
    ("float4_e1m2", 0, "rint", 0.0), ("float4_e1m2", 0, "round", 0.0),
    ("float4_e1m2", 0, "floor", 0.0), ("float4_e1m2", 2, "floor", 1.875),
])
def test_every_input_pattern(stream, x_type, dst, alg, mode, dtm):
    """All 63k+ finite fp16 / bf16 patterns through each element conversion."""
    x = anchored_columns(x_type, 3)
    check_against_reference(stream, x, [32], dst, alg, mode, dtm)


# ------------------------------------------------------------------------------------------------
# Special blocks and layouts
# ------------------------------------------------------------------------------------------------

EMAX = {"float8_e4m3fn": 8, "float8_e5m2": 15, "float4_e2m1": 2, "float4_e1m2": 0}


@pytest.mark.parametrize("dst", DST_NAMES)
def test_special_blocks(stream, dst):
    """§4.8: all-zero block -> S 0 and +-0 codes; Inf or NaN -> S 0xFF and all codes 0; a block
    whose max has a bf16 exponent field <= emax (scale_alg 0) -> S 0 and +-0."""
    x = np.zeros((32, 6), dtype=np.float32)
    x[:, 1] = -0.0
    x[:, 2] = 1.0
    x[7, 2] = np.inf
    x[:, 3] = -2.0
    x[9, 3] = np.nan
    x[:, 4] = 2.0 ** -126        # bf16 exponent field 1 <= emax
    x[:, 5] = -(2.0 ** -125)
    xb = x.astype(BF16)
    got = check_against_reference(stream, xb, [32], dst, 0, "rint", 0.0)
    fp4 = dst_format(dst).is_fp4
    tiny = [0 if field <= EMAX[dst] else field - EMAX[dst] for field in (1, 2)]   # columns 4, 5
    assert got.mxscale[0, :, 0].tolist() == [0, 0, 0xFF, 0xFF] + tiny
    codes = got.y if not fp4 else np.stack([got.y & 0xF, got.y >> 4], axis=-1).reshape(32, 6)
    negative_zero = 0x8 if fp4 else 0x80
    assert np.all(codes[:, 0] == 0) and np.all(codes[:, 1] == negative_zero)
    assert np.all(codes[:, 2:4] == 0)
    if tiny == [0, 0]:
        assert np.all(codes[:, 4] == 0) and np.all(codes[:, 5] == negative_zero)


@pytest.mark.parametrize("dst", ["float4_e2m1", "float4_e1m2"])
def test_floor_of_products_that_underflow(stream, dst):
    """§4.7 floor moves negative values away from zero (-tiny -> -0.5 / -0.25), but only when the
    fp32 product x * R is non-zero: with R = 2^-98 (block max 2^(98 + emax)), -2^-52 * R = -2^-150
    rounds to -0 (tie to even), -1.5 * 2^-52 * R to -2^-149, -2^-60 * R to -0."""
    col = [2.0 ** (98 + EMAX[dst]), -(2.0 ** -60), -(2.0 ** -50), -(2.0 ** -52), -1.5 * 2.0 ** -52, -(2.0 ** -53)]
    x = np.tile(np.array(col + [0.0] * (32 - len(col)))[:, None], (1, 64)).astype(BF16)
    got = check_against_reference(stream, x, [32], dst, 0, "floor", 0.0)
    low = (got.y[:6, 0] & 0xF).tolist()
    assert low[1:] == [0x8, 0x9, 0x8, 0x9, 0x8]


@pytest.mark.parametrize("n", [2, 64, 66, 1024, 1088])
@pytest.mark.parametrize("dst", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_products_in_the_subnormal_binades(stream, dst, n):
    """Every row holds products in the FP8 subnormal range (x / block max near 2^-15 ... 2^-24): the
    kernel's 16-bit-lane loop reports those and recomputes them in float32; rows as wide as one
    recomputed piece (64 columns) and wider than a column tile (1024) included."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((64, n)).astype(np.float32)
    x[0] = 4.0                                                   # the block max: scale exponent fixed
    tiny = rng.random((64, n)) < 0.25
    x[tiny] *= np.exp2(-rng.integers(13, 26, tiny.sum()))        # products at 2^-17 ... 2^-4 of 448
    check_against_reference(stream, x.astype(BF16), [64], dst, 0, "rint", 0.0)


@pytest.mark.parametrize("layout", [
    [64, 128],                 # gap rows 1 and 3 (§3.4)
    [0, 0, 5, 5, 96],          # leading empty groups, a 5-row group, odd block counts
    [33],                      # one group; rows 33.. untouched (groupIndex[-1] < m)
    [1, 2, 3, 4, 100],         # several one-row groups in one chunk
])
def test_group_layouts(stream, layout):
    x = mixed_data(130, 12, BF16, 11)
    check_against_reference(stream, x, layout, "float8_e4m3fn", 0, "rint", 0.0)
    check_against_reference(stream, x, layout, "float4_e2m1", 2, "floor", 0.0)


def test_empty_x_writes_nothing(stream):
    """§2.1 row 15: m = 0 -> success, workspace 0, nothing launched: mxscale [g, n, 2] keeps its
    content."""
    got = quantize(stream, np.zeros((0, 4), dtype=BF16), [0, 0])
    assert got.outcome.status == 0 and got.outcome.workspace_size == 0
    assert (got.outcome.launch, got.outcome.sync) == (0, 0)
    assert got.mxscale.shape == (2, 4, 2) and np.all(got.mxscale == SENTINEL)


# ------------------------------------------------------------------------------------------------
# Views, threads
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dst", ["float8_e5m2", "float4_e1m2"])
def test_strided_x_and_offset_views(stream, dst):
    """Non-contiguous x (the vendor makes it contiguous first), a strided FP8 y (ViewCopy) and
    views with offsets (for FP4 an odd offset: the first element sits in a high nibble)."""
    x = mixed_data(100, 10, np.float16, 5)
    fp4 = dst_format(dst).is_fp4
    check_against_reference(stream, x, [17, 60, 100], dst, 0, "rint", 0.0, x_step=2,
                            y_step=1 if fp4 else 3, y_offset=5)


def test_results_do_not_depend_on_thread_count(stream, set_switch):
    """PYACLNN_STUB_KERNEL_THREADS splits the work items over that many threads (here more
    threads than items too); every count gives the reference's bytes."""
    x = mixed_data(600, 130, BF16, 9)
    gi = [100, 100, 333, 512, 600]
    y, mx, written = grouped_dynamic_mx_quant(x, gi, "rint", "float4_e2m1", 32, 2, 0.0)
    for threads in ("1", "2", "3", "8", "64"):
        set_switch("PYACLNN_STUB_KERNEL_THREADS", threads)
        got = quantize(stream, x, gi, dst_type="float4_e2m1", scale_alg=2)
        assert got.outcome.sync == 0
        assert np.array_equal(got.y, y), threads
        assert np.array_equal(got.mxscale[written], mx[written]), threads


# ------------------------------------------------------------------------------------------------
# Invalid groupIndex values (never validated on the host; spec §3.5): clamp + device error
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gi, words", [
    ([40, 20, 100], ["groupIndex[1] = 20 is below groupIndex[0] = 40"]),
    ([-5, 60, 100], ["groupIndex[0] = -5 is negative"]),
    ([40, 150], ["groupIndex[1] = 150 exceeds m = 100"]),
    ([2**31 - 1, -2**31, 7], ["exceeds m", "is negative", "is below"]),
])
def test_invalid_group_index_is_clamped_and_reported(stream, gi, words):
    """Ends are clamped to [previous end, m]: no write outside y / mxscale, results equal the
    reference's "clamp" policy, and the sync reports a device error naming the entries."""
    x = mixed_data(100, 10, BF16, 2)
    got = quantize(stream, x, gi)
    assert (got.outcome.status, got.outcome.launch) == (0, 0)
    assert got.outcome.sync == AICORE_EXCEPTION
    assert all(w in got.outcome.message for w in words), got.outcome.message
    y, mx, written = grouped_dynamic_mx_quant(x, gi, group_index_policy="clamp")
    y_mask = y_written_mask(gi, 100, 10, group_index_policy="clamp")
    assert np.array_equal(got.y[y_mask], y[y_mask]) and np.all(got.y[~y_mask] == SENTINEL)
    assert np.array_equal(got.mxscale[written], mx[written])
    assert np.all(got.mxscale[~written] == SENTINEL)
    assert np.array_equal(written, mxscale_written_mask(gi, 100, 10, "clamp"))


def test_last_group_end_below_m_is_valid(stream):
    """groupIndex[-1] < m is no error: the rows after it are simply not processed."""
    x = mixed_data(100, 10, BF16, 4)
    got = check_against_reference(stream, x, [10, 60], "float8_e4m3fn", 0, "rint", 0.0)
    assert got.outcome.message is None
