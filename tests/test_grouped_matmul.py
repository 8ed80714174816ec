"""Grouped matmul (native_stubs/src/ops/moe/grouped_matmul.toml): aclnnGroupedMatmulV4 / V5, the float paths
(hicann/ops-transformer gmm/grouped_matmul). Class c: against a float64 NumPy model of the docs' definition (y_g =
x_g @ weight_g + bias_g, the groups by separated lists or by the group list's cumsum / counts over x's rows), within
8 / 1 / 1 ulp (fp32 / fp16 / bf16) of the float64 value rounded to the dtype; the op_api's checks in its order and
words (161001 / 161002). Ascend 950 in-process, Atlas A2 in one subprocess, one torch_npu child
(npu_grouped_matmul: split_item 3 / group_type 0 with both group list types and a bias, split_item 0 / group_type -1);
split K (groupType 2: x transposed, y per group) in-process and on Atlas A2."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID
import _fused_ops as F

F32, I64 = np.float32, np.int64
ULPS = {"float32": 8, "float16": 1, "bfloat16": 1}


def bounds(gl, gl_type, rows):
    out, start = [], 0
    for v in gl:
        end = int(v) if gl_type == 0 else start + int(v)
        out.append((start, end))
        start = end
    return out


def gmm64_split_m(x, ws, bs, gl, gl_type):
    """y rows of group g = x rows of g @ weight g (+ bias g), in float64; rows past the last group: None."""
    y = np.full((x.shape[0], ws[0].shape[-1]), np.nan)
    for g, (s, e) in enumerate(bounds(gl, gl_type, x.shape[0]) if gl is not None else [(0, x.shape[0])]):
        y[s:e] = F.f64(x[s:e]) @ F.f64(ws[g]) + (F.f64(bs[g]) if bs is not None else 0)
    return y


def call(version, xs, ws, bs, gl, split, gtype, gl_type, ys, tuning=None):
    args = (xs, ws, bs, None, None, None, None, None, gl, None, None, None, split, gtype, gl_type, 0)
    if version == 5:
        return ops.GroupedMatmulV5(*args, tuning, ys, None, None)[0][0]
    return ops.GroupedMatmulV4(*args, ys, None, None)[0][0]


def bias_dtype(name):
    return "float32" if name == "bfloat16" else name


# (rows, k, n, group rows, group list type, bias, weight as one 3-D tensor)
SPLIT_M_CASES = [(10, 16, 8, [3, 4, 3], 0, True, True), (13, 32, 5, [5, 0, 6], 1, False, True),
                 (9, 24, 12, [2, 7], 1, True, False), (6, 96, 4, None, 0, False, True)]


def check_split_m(case, name, version=4, seed=0):
    m, k, n, counts, gl_type, with_bias, single = case
    rng = np.random.default_rng(seed)
    groups = len(counts) if counts else 1
    x = R.cast(rng.uniform(0, 1, (m, k)), name)
    w = R.cast(rng.uniform(0, 1, (groups, k, n)), name)
    b = R.cast(rng.uniform(0, 1, (groups, n)), bias_dtype(name)) if with_bias else None
    gl = None
    if counts:
        gl = np.array(np.cumsum(counts) if gl_type == 0 else counts, I64)
    ws = [w] if single else list(w)
    bs = ([b] if single else list(b)) if with_bias else None
    y0 = np.full((m, n), 7, R.np_dtype(name))
    got = call(version, [x], ws, bs, gl, 3, 0, gl_type, [y0.copy()], [0] if version == 5 else None)
    want = gmm64_split_m(x, list(w), list(b) if with_bias else None, counts and np.array(counts), 1)
    rows = ~np.isnan(want[:, 0])
    assert F.bits_equal(got[~rows], y0[~rows]), (case, name)   # rows no group covers keep their bytes
    return F.ulps(got[rows], want[rows], name)


@pytest.mark.parametrize("name", F.DTYPES)
def test_split_m_against_float64(name):
    for i, case in enumerate(SPLIT_M_CASES):
        assert check_split_m(case, name, 4 + i % 2) <= ULPS[name], case


def check_separated(name, seed=0):
    """groupType -1: x, weight, y separated lists (x of 2 to 3 dims), with a bias."""
    rng = np.random.default_rng(seed)
    shapes = [((4, 16), (16, 8)), ((2, 3, 8), (8, 5))]
    xs = [R.cast(rng.uniform(0, 1, sx), name) for sx, _ in shapes]
    ws = [R.cast(rng.uniform(0, 1, sw), name) for _, sw in shapes]
    bs = [R.cast(rng.uniform(0, 1, sw[1]), bias_dtype(name)) for _, sw in shapes]
    ys = [np.zeros(sx[:-1] + (sw[1],), R.np_dtype(name)) for sx, sw in shapes]
    out = ops.GroupedMatmulV4(xs, ws, bs, None, None, None, None, None, None, None, None, None, 0, -1, 0, 0, ys, None,
                              None)[0]
    worst = 0
    for g, x, w, b in zip(out, xs, ws, bs):
        worst = max(worst, F.ulps(g, F.f64(x) @ F.f64(w) + F.f64(b), name))
    return worst


@pytest.mark.parametrize("name", F.DTYPES)
def test_separated_lists_against_float64(name):
    assert check_separated(name) <= ULPS[name]


def tview(arr):
    """A device view of `arr` with its last two dims transposed in memory (torch's .T / .transpose(-1, -2))."""
    base = np.ascontiguousarray(np.swapaxes(arr, -1, -2))
    st = [0] * arr.ndim
    st[-1], st[-2] = arr.shape[-2], 1
    for d in range(arr.ndim - 3, -1, -1):
        st[d] = arr.shape[-1] * arr.shape[-2] * (int(np.prod(arr.shape[d + 1:-2])) if d + 1 < arr.ndim - 2 else 1)
    return pyaclnn.from_numpy(base).as_strided(arr.shape, tuple(st), 0)


def check_split_k(name, gl_type=0, seed=0):
    """groupType 2: x (m, k) given transposed, weight (k, n), y (groups, m, n): y[g] = x[:, k range g] @ w[k range g]."""
    rng = np.random.default_rng(seed)
    m, k, n, counts = 5, 24, 6, [8, 0, 16]
    x = np.ascontiguousarray(R.cast(rng.uniform(0, 1, (k, m)), name)).T
    w = R.cast(rng.uniform(0, 1, (k, n)), name)
    gl = np.array(np.cumsum(counts) if gl_type == 0 else counts, I64)
    got = call(4, [tview(x)], [w], None, gl, 3, 2, gl_type, [np.full((3, m, n), 7, R.np_dtype(name))])
    want = np.stack([F.f64(x[:, s:e]) @ F.f64(w[s:e]) for s, e in bounds(counts, 1, k)])
    return F.ulps(got, want, name)


@pytest.mark.parametrize("name", F.DTYPES)
def test_split_k_against_float64(name):
    assert max(check_split_k(name, 0), check_split_k(name, 1, 1)) <= ULPS[name]


def test_transposed_weight_view():
    """A weight given as the transpose of a contiguous (n, k) matrix (torch_npu's weight.t()) is read as (k, n)."""
    rng = np.random.default_rng(3)
    x, wt = rng.uniform(0, 1, (6, 8)).astype(F32), rng.uniform(0, 1, (2, 5, 8)).astype(F32)
    w = np.swapaxes(wt, 1, 2)   # a view with the last two strides swapped
    got = call(4, [x], [tview(w)], None, np.array([2, 6], I64), 3, 0, 0, [np.zeros((6, 5), F32)])
    want = np.concatenate([F.f64(x[:2]) @ F.f64(w[0]), F.f64(x[2:]) @ F.f64(w[1])])
    assert F.ulps(got, want, "float32") <= ULPS["float32"]


X, W = np.ones((6, 8), F32), np.ones((2, 8, 4), F32)
GL, Y = np.array([2, 6], I64), [np.zeros((6, 4), F32)]


def args(**kw):
    a = dict(x=[X], w=[W], b=None, scale=None, off=None, aqs=None, aqo=None, pts=None, gl=GL, ai=None, aqsc=None,
             aqof=None, split=3, gtype=0, gltype=0, act=0, y=Y, afo=None, dqs=None)
    a.update(kw)
    return tuple(a.values())


INVALID_CASES = [   # arguments (V4), code, message text: the op_api's checks in its order
    (args(x=[]), INVALID, "x must not be empty tensorlist."),
    (args(gtype=1), INVALID, "Not support split n dim now, groupType can not be 1."),
    (args(gtype=-1), INVALID, "When splitItem is 2/3, groupType can not be -1."),
    (args(gl=GL.reshape(2, 1)), INVALID, "groupList dim only support 1 or 2"),
    (args(gltype=3), INVALID, "groupListType shoule be 0 or 1."),
    (args(ai=[X]), INVALID, "activationInputOptional must be nullptr."),
    (args(x=[X.astype(np.float16)]), INVALID,   # the 950 sends x / weight of different sizes to its weight-quant checker
     "GMM: there is no matching xDtype and weightDtype pattern. case with x dtype FLOAT16 and weight dtype FLOAT"
     if F.ON_A2 else "Weight quant case with x dtype [FLOAT16] and weight dtype [FLOAT] is not supported."),
    (args(y=[np.zeros((6, 4), np.float16)]), INVALID, "GMM: y dtype does not match with required dtype[FLOAT]."),
    (args(act=1), INVALID, "non quant case dose not support activation."),
    (args(scale=[np.ones((2, 4), F32)]), INVALID, "Detected nonquant, but quant inputs is not empty!"),
    (args(split=0), INVALID, "When y is not separated, splitItem should be 2/3, but current splitItem is 0."),
    (args(w=[np.ones((2, 7, 4), F32)]), INVALID,
     "Dim 1 value of x[0] should be equal with dim 1 value of weight[0], but now is 8 and 7 respectively."),
    (args(gl=None), INVALID, "groupListOptional(tensor) is required in this case, but get nullptr."),
    (args(gl=np.array([2, 4, 6], I64)), INVALID,
     "size of groupList(tensor) 3 should be equal to weight dim 0 2 with groupType 0."),
    (args(gl=GL.astype(np.int32)), INVALID, "Invalid dtype: Only int64 is supported for groupList."),
    (args(b=[np.ones((2, 5), F32)]), INVALID, "NDim[5] of bias should be equal with NDim[4] of weight."),
    (args(x=[X, X], w=[W[0], W[1]], y=[Y[0], Y[0]], split=0, gtype=-1, gl=GL), INVALID,
     "groupListOptional should be nullptr when groupType is -1."),
    (args(x=[X.astype(np.int8)], w=[W.astype(np.int8)]), INVALID,   # the 950: its quant checker's first words
     "Expect yDtype is int8, int32, float16 or bfloat16 in quant case, but now y[0] dtype is FLOAT"
     if F.ON_A2 else "In quant case, scaleOptional should not be nullptr."),
    (args(gtype=2), INVALID, "When groupType is 2 and x is not separated, tensor in x should be transposed."),
    (args(gtype=2, b=[np.ones((2, 4), F32)]), INVALID, "When groupType is 2, bias must be empty."),
]


@pytest.mark.parametrize("a,code,text", INVALID_CASES)
def test_invalid_arguments(a, code, text):
    F.expect_error(ops.GroupedMatmulV4, a, code, text)


def test_null_lists_and_tuning_config():
    from _op_helpers import NULLPTR
    F.expect_error(ops.GroupedMatmulV4, args(x=None), NULLPTR, "x must not be nullptr.")
    a = args()
    F.expect_error(ops.GroupedMatmulV5, a[:16] + ([7],) + a[16:], INVALID,
                   "Invalid tuningConfigOptional (7)! It should be a non-negative num, and less than or equal to maxM: 6")
    if not F.ON_A2:
        F.expect_error(ops.GroupedMatmulV4, args(gltype=2, gl=np.array([[0, 2], [1, 4]], I64)), INVALID,
                       "This platform not support groupListType is 2.")


A2_CALLS = """
for name in ["float32", "float16", "bfloat16"]:
    for i, case in enumerate(T.SPLIT_M_CASES):
        assert T.check_split_m(case, name, 4 + i % 2, 1) <= T.ULPS[name], case
    assert T.check_separated(name, 1) <= T.ULPS[name]
    assert T.check_split_k(name, 1, 2) <= T.ULPS[name]
for a, code, text in T.INVALID_CASES:
    T.test_invalid_arguments(a, code, text)
T.test_null_lists_and_tuning_config()
import test_grouped_matmul_quant as Q   # the A8W8 path's checks on Atlas A2 in the same subprocess
for combo in Q.COMBOS:
    Q.test_against_kernel_steps(*combo)
for a, text in Q.QUANT_INVALID:
    Q.test_invalid_arguments(a, text)
for t in (Q.test_per_token_with_weight_list, Q.test_per_token_no_split, Q.test_epilogue_against_float64,
          Q.test_int32_accumulation_wraps_and_rows_past_the_groups_keep, Q.test_empty_x_leaves_y,
          Q.test_separated_lists, Q.test_int32_y_skips_the_scale_checks):
    t()
Q.fp8_on_a2()
"""


def test_atlas_a2():
    F.run_on_a2("test_grouped_matmul", A2_CALLS)


TORCH_BODY = """
torch.manual_seed(0)
for dt in [torch.float32, torch.float16, torch.bfloat16]:
    x = torch.rand(10, 16).to(dt); w = torch.rand(3, 16, 8).to(dt)
    b = torch.rand(3, 8).to(torch.float32 if dt == torch.bfloat16 else dt)
    y0 = torch_npu.npu_grouped_matmul([x.npu()], [w.npu()], bias=[b.npu()], group_list=torch.tensor([3, 7, 10]).npu(),
                                      split_item=3, group_type=0, group_list_type=0)[0]
    y1 = torch_npu.npu_grouped_matmul([x.npu()], [w.npu()], group_list=torch.tensor([3, 4, 3]).npu(), split_item=3,
                                      group_type=0, group_list_type=1)[0]
    ys = torch_npu.npu_grouped_matmul([x[:4].npu(), x[4:].npu()], [w[0].npu(), w[1].npu()], split_item=0,
                                      group_type=-1)
    OUT[str(dt)] = [enc(to_np(v)) for v in (x, w, b, y0, y1, ys[0], ys[1])]
"""


def test_torch_npu_grouped_matmul():
    out = F.torch_npu_arrays(TORCH_BODY, soc="Ascend910B4")
    for dt, name in F.TORCH_NAMES.items():
        x, w, b, y0, y1, s0, s1 = out[dt]
        want0 = gmm64_split_m(x, list(w), list(b), np.array([3, 4, 3]), 1)
        want1 = gmm64_split_m(x, list(w), None, np.array([3, 4, 3]), 1)
        assert F.ulps(y0, want0, name) <= ULPS[name] and F.ulps(y1, want1, name) <= ULPS[name], dt
        assert F.ulps(s0, F.f64(x[:4]) @ F.f64(w[0]), name) <= ULPS[name]
        assert F.ulps(s1, F.f64(x[4:]) @ F.f64(w[1]), name) <= ULPS[name]
