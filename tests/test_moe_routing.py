"""MoE routing (native_stubs/src/ops/moe/routing.toml): aclnnMoeInitRouting, aclnnMoeComputeExpertTokens,
aclnnMoeTokenPermute, aclnnMoeTokenUnpermute and aclnnMoeFinalizeRoutingV2 (hicann/ops-transformer
moe/moe_init_routing, moe_compute_expert_tokens, moe_token_permute, moe_token_unpermute, moe_finalize_routing_v2).
Integer work and row copies, class a:
bit-exact against NumPy models written from the definitions (keyValueSort stable in the flattened order,
expandedRowIdx[sortedRowIdx[i]] = i, expandedX[i] = x[sortedRowIdx[i] % rows]; the docs' binary search for the
tokens per expert; op-plugin's permute reference for MoeTokenPermute, whose Ascend 950 path is MoeInitRoutingV2's
checks). aclnnMoeFinalizeRoutingV2 (class b): bit-exact against a NumPy model of the Atlas A2 kernels'
steps, and within 3 / 3 / 1 ulp (fp32 / fp16 / bf16; measured 2 / 2 / 0 over positive terms) of the docs' formula
in float64; MoeTokenUnpermute likewise (Atlas A2: its kernel's fp32 steps; Ascend 950: MoeFinalizeRoutingV2's;
measured 1 / 1 / 0). MoeInitRouting on Ascend 950 in-process and Atlas A2 in one subprocess (MoeComputeExpertTokens
exists on Atlas A2 / A3 only); one torch_npu child on Atlas A2 (npu_moe_init_routing, npu_moe_compute_expert_tokens,
npu_moe_finalize_routing, npu_moe_token_permute, npu_moe_token_unpermute)."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID
import _fused_ops as F

TILING = 561002
F32, I32 = np.float32, np.int32
A2 = F.ON_A2


# ---- NumPy models of the definitions -------------------------------------------------------------------------------

def init_routing_ref(x, row_idx, expert_idx, active_num):
    n, k = expert_idx.shape
    order = np.argsort(expert_idx.reshape(-1), kind="stable")
    sorted_rows = row_idx.reshape(-1)[order]
    expanded_row_idx = np.zeros(n * k, I32)
    expanded_row_idx[sorted_rows] = np.arange(n * k)
    active = min(active_num, n) * k
    return x[sorted_rows[:active] % n], expanded_row_idx, expert_idx.reshape(-1)[order].astype(I32)


def expert_tokens_ref(sorted_experts, num_experts):
    """The docs' binary search: the position after the last entry <= e."""
    out = np.zeros(num_experts, I32)
    for e in range(num_experts):
        lo, hi, at = 0, len(sorted_experts) - 1, -1
        while lo <= hi:
            mid = (lo + hi) // 2
            if sorted_experts[mid] > e:
                hi = mid - 1
            else:
                lo, at = mid + 1, mid
        out[e] = at + 1
    return out


# (n, k, cols, experts, activeNum): row_idx as the gating operators give it (r + j * n)
CASES = [(6, 2, 8, 4, 6), (37, 4, 16, 8, 20), (5, 3, 33, 2, 0), (130, 9, 4, 100, 200)]


def routing_inputs(case, name, seed):
    n, k, cols, experts, active = case
    rng = np.random.default_rng(seed)
    x = R.cast(rng.standard_normal((n, cols)), name)
    expert = rng.integers(0, experts, (n, k)).astype(I32)   # few experts: many equal keys
    row = np.arange(n * k, dtype=I32).reshape(k, n).T.copy()
    return x, row, expert, active


def check_init_routing(case, name, seed=0):
    x, row, expert, active = routing_inputs(case, name, seed)
    n, k = expert.shape
    rows = min(active, n) * k
    got = ops.MoeInitRouting(x, row, expert, active, np.zeros((rows, x.shape[1]), x.dtype), np.zeros(n * k, I32),
                             np.zeros(n * k, I32))
    for g, w in zip(got, init_routing_ref(x, row, expert, active)):
        assert F.bits_equal(g, w), (case, name)


@pytest.mark.parametrize("name", F.DTYPES)
def test_init_routing_against_the_model(name):
    for case in CASES:
        check_init_routing(case, name)


def test_init_routing_documented_example():
    """The docs' example (x 3 x 4, expertIdx [[1, 2], [0, 1], [0, 2]], rowIdx [[0, 3], [1, 4], [2, 5]], activeNum 3)."""
    x = np.repeat(F32([0.1, 0.2, 0.3]), 4).reshape(3, 4)
    ex, er, ee = ops.MoeInitRouting(x, I32([[0, 3], [1, 4], [2, 5]]), I32([[1, 2], [0, 1], [0, 2]]), 3,
                                    np.zeros((6, 4), F32), np.zeros(6, I32), np.zeros(6, I32))
    assert er.tolist() == [2, 0, 1, 4, 3, 5] and ee.tolist() == [0, 0, 1, 1, 2, 2]
    assert F.bits_equal(ex, x[[1, 2, 0, 1, 0, 2]])


def test_init_routing_large_expert_ids_round_as_fp32_keys():
    """The kernels sort fp32 keys (CAST_ROUND from int32): ids beyond 2^24 round, ties away from zero."""
    big = 2 ** 24 + 1   # halfway between 2^24 and 2^24 + 2: rounds away to 2^24 + 2
    _, _, ee = ops.MoeInitRouting(np.ones((2, 2), F32), I32([[0], [1]]), I32([[big], [2 ** 24 + 2]]), 2,
                                  np.zeros((2, 2), F32), np.zeros(2, I32), np.zeros(2, I32))
    assert ee.tolist() == [2 ** 24 + 2] * 2


def check_expert_tokens():   # Atlas A2 only
    rng = np.random.default_rng(3)
    for length, experts in [(302, 31), (6, 3), (1000, 2048), (0, 4)]:
        v = np.sort(rng.integers(0, experts + 1, length)).astype(I32)
        got = ops.MoeComputeExpertTokens(v, experts, np.zeros(experts, I32))
        assert np.array_equal(got, expert_tokens_ref(v, experts)), (length, experts)
    assert ops.MoeComputeExpertTokens(I32([0, 0, 1, 1, 2, 2]), 3, np.zeros(3, I32)).tolist() == [2, 4, 6]   # docs


def test_compute_expert_tokens_not_on_ascend_950():
    if A2:
        return
    err = pytest.raises(AclError, ops.MoeComputeExpertTokens, I32([0, 1]), 2, np.zeros(2, I32)).value
    assert err.code == INVALID and "dtype combination sortedExperts INT32" in str(err), str(err)


# ---- MoeTokenPermute -------------------------------------------------------------------------------------------------

def permute_ref(tokens, indices, num_out):
    """op-plugin's reference (Megatron's permute): argsort stable, tokens[sorted / topK]; the fused operator returns the
    inverse permutation as its sorted indices."""
    flat = indices.reshape(-1)
    topk = indices.shape[1] if indices.ndim == 2 else 1
    order = np.argsort(flat, kind="stable")
    total = flat.size
    num = min(num_out if num_out > 0 else num_out + total, total)
    inverse = np.empty(total, I32)
    inverse[order] = np.arange(total)
    return tokens.reshape(tokens.shape[0], -1)[order[:max(num, 0)] // topk], inverse


# tokens, topK (0: 1-D indices), experts, numOutTokens, indices dtype
PERMUTE_CASES = [((9, 16), 2, 4, 0, I32), ((12, 8), 3, 5, 20, np.int64), ((7, 5), 0, 3, -2, I32),
                 ((40, 4), 8, 64, 0, I32)]


def check_permute(case, name, seed=0):
    shape, topk, experts, num_out, idt = case
    rng = np.random.default_rng(seed)
    if name == "int8":
        tokens = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        tokens = R.cast(rng.standard_normal(shape), name)
    idx = rng.integers(0, experts, (shape[0], topk) if topk else shape[0]).astype(idt)
    want_t, want_i = permute_ref(tokens, idx, num_out)
    got_t, got_i = ops.MoeTokenPermute(tokens, idx, num_out, False, np.zeros((want_t.shape[0], shape[1]), tokens.dtype),
                                       np.zeros(idx.size, I32))
    assert F.bits_equal(got_t, want_t) and np.array_equal(got_i, want_i), (case, name)


@pytest.mark.parametrize("name", F.DTYPES)
def test_token_permute_against_the_reference(name):
    for case in PERMUTE_CASES:
        check_permute(case, name)


# ---- MoeTokenUnpermute -----------------------------------------------------------------------------------------------

def unpermute64(pt, si, probs):
    k = probs.shape[1] if probs is not None else 1
    n = len(si) // k
    out = np.zeros((n, pt.shape[1]))
    for t in range(n):
        for j in range(k):
            out[t] += (F.f64(probs)[t, j] if probs is not None else 1.0) * F.f64(pt)[si[t * k + j]]
    return out


def unpermute_steps(pt, si, probs, name, soc950):
    """Atlas A2's kernel: fp32 steps (token * prob, summed in k order, a zero prob skips its token), one cast;
    Ascend 950: MoeFinalizeRoutingV2's steps with dropPadMode 2 (fp16 rounded at every step)."""
    if soc950:
        return finalize_steps(pt, si, None, None, None, probs, None, 2, name)
    k = probs.shape[1] if probs is not None else 1
    n = len(si) // k
    out = np.zeros((n, pt.shape[1]), F32)
    for t in range(n):
        first = True
        for j in range(k):
            p = F32(F.f64(probs)[t, j]) if probs is not None else F32(1)
            if probs is not None and p == 0:
                first = False if first else first
                continue
            v = pt[si[t * k + j]].astype(F32) * p if probs is not None else pt[si[t * k + j]].astype(F32)
            out[t] = v if first else out[t] + v
            first = False
    return R.cast(out, name)


# tokens, topK (0: no probs), hidden, prob dtype (None: the tokens')
UNPERMUTE_CASES = [(6, 2, 16, None), (5, 3, 8, "float32"), (9, 0, 12, None), (4, 4, 5, "bfloat16")]


def check_unpermute(case, name, seed=0):
    n, k, h, pname = case
    rng = np.random.default_rng(seed)
    total = n * max(k, 1)
    pt = R.cast(rng.uniform(0.5, 2, (total, h)), name)
    si = rng.permutation(total).astype(I32)
    probs = R.cast(rng.uniform(0, 1, (n, k)), pname or name) if k else None
    if probs is not None:
        probs[0, 0] = 0   # a zero prob: skipped on Atlas A2
    got = ops.MoeTokenUnpermute(pt, si, probs, False, None, np.zeros((n, h), pt.dtype))
    assert F.bits_equal(got, unpermute_steps(pt, si, probs, name, not A2)), (case, name)
    return F.ulps(got, unpermute64(pt, si, probs), name)


def check_unpermute_skips_zero_probs():   # Atlas A2: the kernel skips a token whose prob is 0 (no 0 * inf = NaN)
    pt = np.ones((4, 3), F32)
    pt[2] = np.inf
    got = ops.MoeTokenUnpermute(pt, I32([2, 0, 1, 3]), F32([[0, 0.5], [0.25, 0.75]]), False, None, np.zeros((2, 3), F32))
    assert got.tolist() == [[0.5] * 3, [1.0] * 3], got


UNPERMUTE_ULPS = {"float32": 3, "float16": 3, "bfloat16": 1}


@pytest.mark.parametrize("name", F.DTYPES)
def test_token_unpermute_against_the_kernel_steps(name):
    for case in UNPERMUTE_CASES:
        assert check_unpermute(case, name) <= UNPERMUTE_ULPS[name]


# ---- MoeFinalizeRoutingV2 ------------------------------------------------------------------------------------------

def finalize64(ex, ri, x1, x2, bias, scales, ei, mode):
    """The docs' formula in float64 (dropPadMode 1 / 3: expandedX is E x C x H, a row index -1 adds nothing)."""
    k = scales.shape[1] if scales is not None else 1
    n = len(ri) // k
    rows = F.f64(ex).reshape(-1, ex.shape[-1])
    out = np.zeros((n, rows.shape[1]))
    if x1 is not None:
        out += F.f64(x1) + (F.f64(x2) if x2 is not None else 0)
    for i in range(n):
        for j in range(k):
            r = ri[i + j * n] if mode < 2 else ri[i * k + j]
            if r < 0:
                continue
            t = rows[r] + (F.f64(bias)[ei[i, j]] if bias is not None else 0)
            out[i] += (F.f64(scales)[i, j] if scales is not None else 1.0) * t
    return out


def finalize_steps(ex, ri, x1, x2, bias, scales, ei, mode, name):
    """The Atlas A2 kernels' steps: each Add / Muls rounded to the dtype (fp16, fp32), in fp32 for bf16 (one cast)."""
    step = (lambda v: R.cast(v, "float16")) if name == "float16" else (lambda v: np.float32(v))
    k = scales.shape[1] if scales is not None else 1
    n = len(ri) // k
    rows = F.f64(ex).reshape(-1, ex.shape[-1])
    h = rows.shape[1]
    out = np.zeros((n, h), F32)
    for i in range(n):
        init = x1 is not None
        acc = (F.f64(step(F.f64(x1[i]) + F.f64(x2[i]))) if x2 is not None else F.f64(x1[i])) if init else np.zeros(h)
        for j in range(k):
            r = ri[i + j * n] if mode < 2 else ri[i * k + j]
            if r < 0:
                init = init or mode in (1, 3)
                continue
            t = F.f64(step(rows[r] + F.f64(bias)[ei[i, j]])) if bias is not None else rows[r]
            m = F.f64(step(t * (F.f64(scales)[i, j] if scales is not None else 1.0)))
            acc = F.f64(step(acc + m)) if init else m
            init = True
        out[i] = acc
    return R.cast(out, name)


# n, k, h, experts, mode, x1, x2, bias, scales
FIN_CASES = [(5, 2, 16, 4, 0, True, True, True, True), (7, 3, 8, 6, 2, True, False, True, True),
             (4, 1, 12, 3, 0, False, False, False, False), (6, 2, 8, 3, 1, True, True, True, True),
             (3, 4, 5, 5, 3, False, False, True, True)]


def finalize_inputs(case, name, seed=0, scale_name=None):
    """Positive terms (no cancellation: the ulp figures measure the roundings, not a difference's condition)."""
    n, k, h, e, mode, has_x1, has_x2, has_bias, has_scales = case
    rng = np.random.default_rng(seed)
    c = R.cast
    x1 = c(rng.uniform(0.5, 2, (n, h)), name) if has_x1 else None
    x2 = c(rng.uniform(0.5, 2, (n, h)), name) if has_x2 else None
    bias = c(rng.uniform(0.5, 2, (e, h)), name) if has_bias else None
    scales = c(rng.uniform(0, 1, (n, k)), scale_name or name) if has_scales else None
    ei = rng.integers(0, e, (n, k)).astype(I32)
    if mode in (1, 3):   # drop / pad: E x C x H, each token's slot or -1 when dropped
        cap = 3
        ex = c(rng.uniform(0.5, 2, (e, cap, h)), name)
        ri = rng.integers(0, e * cap, n * k).astype(I32)
        ri[::4] = -1
    else:
        ex = c(rng.uniform(0.5, 2, (n * k, h)), name)
        ri = rng.permutation(n * k).astype(I32)
    return ex, ri, x1, x2, bias, scales, ei if has_bias else None, mode


def check_finalize(case, name, seed=0, scale_name=None):
    args = finalize_inputs(case, name, seed, scale_name)
    ex, ri, x1, x2, bias, scales, ei, mode = args
    n = len(ri) // (scales.shape[1] if scales is not None else 1)
    got = ops.MoeFinalizeRoutingV2(ex, ri, x1, x2, bias, scales, ei, mode, np.zeros((n, ex.shape[-1]), ex.dtype))
    assert F.bits_equal(got, finalize_steps(*args, name)), (case, name)
    return F.ulps(got, finalize64(*args), name)


FIN_ULPS = {"float32": 3, "bfloat16": 1, "float16": 3}


@pytest.mark.parametrize("name", F.DTYPES)
def test_finalize_routing_against_the_kernel_steps(name):
    for case in FIN_CASES:
        assert check_finalize(case, name) <= FIN_ULPS[name]
    if not A2:   # the regbase Ascend 950 also takes scales of another float dtype
        assert check_finalize(FIN_CASES[0], name, 3, "float32" if name != "float32" else "float16") <= FIN_ULPS[name]


def test_finalize_routing_documented_example():
    """The docs' example (expandedX 6 x 4 = 0.1 .. 23.1, x1 = x2 = 0.2 .. 11.2, bias rows [0.2, 0.4, 0.2, 0.4], scales,
    expertIdx [[0, 1]] * 3, expandedRowIdx [2, 1, 4, 3, 0, 5], dropPadMode 0)."""
    ex = (np.arange(24, dtype=F32) + F32(0.1)).reshape(6, 4)
    x1 = (np.arange(12, dtype=F32) + F32(0.2)).reshape(3, 4)
    bias = np.tile(F32([0.2, 0.4]), 4).reshape(2, 4)
    sc = F32([[1.3, 1.6], [1.2, 1.8], [1.2, 2.3]])
    ei, ri = I32([[0, 1]] * 3), I32([2, 1, 4, 3, 0, 5])
    got = ops.MoeFinalizeRoutingV2(ex, ri, x1, x1, bias, sc, ei, 0, np.zeros((3, 4), F32))
    assert F.ulps(got, finalize64(ex, ri, x1, x1, bias, sc, ei, 0), "float32") <= 1


# ---- validation ----------------------------------------------------------------------------------------------------

X, RI, EI = np.ones((3, 4), F32), np.zeros((3, 2), I32), np.zeros((3, 2), I32)
OUT = (np.zeros((6, 4), F32), np.zeros(6, I32), np.zeros(6, I32))

INIT_INVALID = [   # arguments, code, message text
    ((X.astype(np.float64), RI, EI, 3) + OUT, INVALID, "dtype combination x DOUBLE"),
    ((X, RI.astype(np.int64), EI, 3) + OUT, INVALID, "rowIdx INT64"),
    ((X, RI, EI, 3, OUT[0].astype(np.float16)) + OUT[1:], INVALID, "expandedXOut FLOAT16"),
    ((np.ones((3, 4, 1), F32), RI, EI, 3) + OUT, TILING, "The dim number of x should be 2."),
    ((X, np.zeros(6, I32), EI, 3) + OUT, TILING, "The dim number of row_idx should be 2."),
    ((X, RI, np.zeros((3, 3), I32), 3) + OUT, TILING, "The shape of row_idx and expert_idx should be same."),
    ((np.ones((4, 4), F32), RI, EI, 3) + OUT, TILING, "Input rows should be same."),
    ((X, RI, EI, -1) + OUT, TILING, "active_num must be a non-negative number."),
    ((X, RI, EI, 3, np.zeros(24, F32)) + OUT[1:], TILING, "The dim number of expanded_x should be 2."),
    ((X, RI, EI, 3, OUT[0], np.zeros((6, 1), I32), OUT[2]), TILING, "The dim number of expanded_row_idx should be 1."),
    ((X, RI, EI, 3, OUT[0], OUT[1], np.zeros(5, I32)), TILING,
     "The shape of expanded_row_idx and expanded_expert_idx should be same."),
    ((X, RI, EI, 2) + OUT, TILING, "The first dim of expanded_x should be 4."),
    ((X, RI, EI, 3, np.zeros((6, 5), F32)) + OUT[1:], TILING, "The second dim of expanded_x should be 4."),
    ((X, RI, EI, 3, OUT[0], np.zeros(5, I32), np.zeros(5, I32)), TILING,
     "The first dim of expanded_row_idx and expanded_expert_idx should be 6."),
]

TOKENS_INVALID = [
    ((I32([0, 1]), 2, np.zeros(2, np.int64)), INVALID, "out INT64"),
    ((I32([[0, 1]]), 2, np.zeros(2, I32)), TILING,
     "the sorted_expert of input should be 1D tensor. Tiling4MoeComputeExpertTokens check shape fail."),
    ((I32([0, 1]), 2, np.zeros((2, 1), I32)), TILING, "the output should be 1D tensor."),
    ((I32([0, 1]), 0, np.zeros(1, I32)), TILING, "the numOfExpert of attr should not be 0."),
    ((I32([0, 1]), 4096, np.zeros(4096, I32)), TILING, "Number of expert should not larger than 2048"),
    ((I32([0, 1]), 3, np.zeros(2, I32)), INVALID, "out [2]: numExperts (3) counts needed"),
]


EX, RIX = np.ones((6, 4), F32), np.arange(6, dtype=I32)
X1, BI, SC, EIX = np.ones((3, 4), F32), np.ones((2, 4), F32), np.ones((3, 2), F32), np.zeros((3, 2), I32)
Y3 = np.zeros((3, 4), F32)

FIN_INVALID = [   # arguments, code, message text
    ((EX.astype(np.float64), RIX, X1, X1, BI, SC, EIX, 0, Y3), INVALID, "dtype combination expandedX DOUBLE"),
    ((EX, RIX, X1, X1, BI, SC.astype(I32), EIX, 0, Y3), INVALID,
     "the dtype combination expandedX FLOAT, scalesOptional INT32 is not supported"),
    ((EX, RIX, X1, X1, BI, SC, EIX, 4, Y3), TILING, "the value of drop_pad_mode should be [0,3]."),
    ((EX, RIX.reshape(3, 2), X1, X1, BI, SC, EIX, 0, Y3), TILING, "the expanded_row_idx of input should be 1D tensor."),
    ((EX, RIX, X1, X1, BI, SC.reshape(6), EIX, 0, Y3), TILING, "the scales of input should be 2D tensor."),
    ((EX, RIX, X1, X1, BI, np.ones((3, 0), F32), EIX, 0, Y3), TILING, "K can not be 0."),
    ((EX, RIX, X1, X1, BI, SC, EIX, 1, Y3), TILING,
     "the expanded_x of input should be 3D tensor when drop_pad_mode is 1"),
    ((EX, RIX, np.ones((2, 4), F32), None, BI, SC, EIX, 0, Y3), TILING, "the dim 0 of x1 should be 3."),
    ((EX, RIX, None, X1, BI, SC, EIX, 0, Y3), TILING, "In the case of x1 parameter is not input, x2 parameter"),
    ((EX, RIX, X1, X1, BI, SC, None, 0, Y3), TILING, "the expert_idx must exist when bias exist."),
    ((EX, RIX, X1, X1, np.ones((2, 5), F32), SC, EIX, 0, Y3), TILING, "the dim 1 of bias should be 4."),
    ((EX, RIX, X1, X1, BI, SC, np.zeros((3, 3), I32), 0, Y3), TILING, "the dim 1 of expert_idx should be 2."),
    ((EX, RIX, X1, X1, np.ones((1, 4), F32), SC, EIX, 0, Y3), TILING, "E should be larger than or equal to K."),
    ((EX, RIX, X1, X1, BI, SC, EIX, 0, np.zeros(12, F32)), TILING, "the y should be 2D tensor."),
    ((EX, RIX, X1, X1, BI, SC, EIX, 0, np.zeros((3, 5), F32)), TILING, "the dim 1 of output should be 4."),
    ((EX, np.arange(7, dtype=I32), X1, X1, BI, SC, EIX, 0, Y3), INVALID,
     "expandedRowIdx has 7 entries, n * K = 6 read"),
]


@pytest.mark.parametrize("args,code,text", FIN_INVALID)
def test_finalize_routing_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeFinalizeRoutingV2, args, code, text)


TK, IXK = np.ones((4, 8), F32), np.zeros((4, 2), I32)
PT, SI = np.zeros((8, 8), F32), np.zeros(8, I32)

PERMUTE_INVALID = [   # arguments, code, message text (Ascend 950: MoeInitRoutingV2's tiling)
    ((TK.astype(np.float64), IXK, 0, False, PT, SI), INVALID, "dtype combination tokens DOUBLE"),
    ((TK, IXK.astype(np.int16), 0, False, PT, SI), INVALID, "indices INT16"),
    ((TK, IXK, 0, True, PT, SI), INVALID, "paddedMode must be false"),
    ((np.ones((4, 2, 4), F32), IXK, 0, False, PT, SI), TILING, "The dim number of x should be 2."),
    ((np.ones((5, 8), F32), IXK, 0, False, PT, SI), TILING, "The first dim of x and expertIdx should be equal."),
    ((TK, IXK, 6, False, PT, SI), TILING, "The first dim of expandedX should be 6."),
    ((TK, IXK, 0, False, np.zeros((8, 4), F32), SI), TILING, "The second dim of expandedX should be 8."),
    ((TK, IXK, 0, False, PT, np.zeros(7, I32)), TILING, "The first dim of expandedRowIdx should be 8."),
]
PERMUTE_INVALID_A2 = [
    ((TK, IXK, 0, True, PT, SI), TILING, "Currently only support padded_mode is false"),
    ((TK, np.zeros((4, 2, 1), I32), 0, False, PT, SI), TILING,
     "The dim number of indices should be 2 or 1 but got [3]."),
    ((np.ones((5, 8), F32), IXK, 0, False, PT, SI), TILING,
     "Input token's dim 0 [5] should be same with indices' dim 0 [4]."),
    ((np.ones((1, 8), F32), np.zeros((1, 513), I32), 0, False, np.zeros((513, 8), F32), np.zeros(513, I32)), TILING,
     "Input indices's dim 1 [513] should not large than max topK[512]."),
    ((TK, IXK, 0, False, np.zeros(8, F32), SI), TILING,
     "The dim number of Output permute_tokens should be greater than 1"),
    ((TK, IXK, 0, False, PT, np.zeros(7, I32)), TILING, "The size of Output sort_indices should be [8]."),
    ((TK, IXK, 0, False, np.zeros((8, 4), F32), SI), TILING,
     "The hidden_size of output permuteTokens should be 8 but got 4."),
    ((TK, IXK, 6, False, PT, SI), TILING, "The dim 0 of output permuteTokens should be 6 but got 8."),
]


@pytest.mark.parametrize("args,code,text", PERMUTE_INVALID_A2 if A2 else PERMUTE_INVALID)
def test_token_permute_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeTokenPermute, args, code, text)


UNPERMUTE_INVALID = [   # arguments, code, message text (Ascend 950: MoeFinalizeRoutingV2's checks)
    ((PT.astype(np.float64), SI, None, False, None, np.zeros((8, 8), F32)), INVALID,
     "dtype combination permutedTokens DOUBLE"),
    ((PT, SI, None, True, None, np.zeros((8, 8), F32)), INVALID, "paddedMode must be false"),
    ((PT, SI, np.ones((4, 2), F32), False, None, np.zeros((4, 5), F32)), TILING, "the dim 1 of output should be 8."),
    ((PT, SI, np.ones(8, F32), False, None, np.zeros((8, 8), F32)), TILING, "the scales of input should be 2D tensor."),
]
UNPERMUTE_INVALID_A2 = [
    ((PT, SI, np.ones((4, 2), F32), False, None, np.zeros((4, 5), F32)), INVALID, "out must be (tokens, hidden)"),
    ((PT, SI, np.ones((3, 2), F32), False, None, np.zeros((3, 8), F32)), INVALID,
     "probsOptional must be 2-D (tokens, topK) with tokens * topK = sortedIndices' size"),
    ((PT, SI.reshape(4, 2), None, False, None, np.zeros((8, 8), F32)), INVALID, "sortedIndices must be 1-D"),
]


@pytest.mark.parametrize("args,code,text", UNPERMUTE_INVALID_A2 if A2 else UNPERMUTE_INVALID)
def test_token_unpermute_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeTokenUnpermute, args, code, text)


@pytest.mark.parametrize("args,code,text", INIT_INVALID)
def test_init_routing_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeInitRouting, args, code, text)


def check_tokens_invalid():   # Atlas A2 only
    for args, code, text in TOKENS_INVALID:
        F.expect_error(ops.MoeComputeExpertTokens, args, code, text)


@pytest.mark.parametrize("op,n", [("MoeInitRouting", 7), ("MoeComputeExpertTokens", 3), ("MoeFinalizeRoutingV2", 8),
                                  ("MoeTokenPermute", 6), ("MoeTokenUnpermute", 6),
                                  ("MoeInitRoutingV3", 17), ("MoeTokenPermuteGrad", 5),
                                  ("MoeFinalizeRouting", 8), ("MoeInitRoutingV2", 12),
                                  ("MoeInitRoutingQuantV2", 16)])
def test_null_arguments(op, n):
    F.null_status_is_nullptr(op, n)


# ---- MoeInitRoutingV2 ------------------------------------------------------------------------------------------------

def init_routing_v2_ref(x, eidx, active, capacity, experts, drop, flag, fill):
    """The docs' definition: experts sorted ascending (stable); dropless: rows of the first `active` sorted entries,
    expandedRowIdx the inverse permutation, the tokens per expert as a cumsum (1) or counts (2); drop-pad: the j-th
    token of expert e in slot (e, j) while j < capacity, other slots zero, expandedRowIdx e * capacity + j or -1."""
    flat = eidx.reshape(-1).astype(np.int64)
    k = 1 if eidx.ndim == 1 else eidx.shape[1]
    order = np.argsort(flat, kind="stable")
    inside = (flat >= 0) & (flat < experts)
    counts = np.bincount(flat[inside], minlength=experts).astype(I32) if experts > 0 else np.zeros(0, I32)
    if not drop:
        er = np.empty(flat.size, I32)
        er[order] = np.arange(flat.size)
        tok = counts.cumsum().astype(I32) if flag == 1 else counts
        return x[order[:active] // k], er, tok if flag else None, None
    ex = np.zeros((experts, capacity, x.shape[1]), x.dtype)
    er = np.full(flat.size, -1, I32)
    for e in range(experts):
        srcs = order[flat[order] == e][:capacity]
        ex[e, :len(srcs)] = x[srcs // k]
        er[srcs] = e * capacity + np.arange(len(srcs))
    return ex, er, None, counts


# (n, k, cols, experts, activeNum, capacity, dropPadMode, count flag)
V2_CASES = [(6, 2, 8, 4, 0, 0, 0, 1), (9, 3, 5, 10, 11, 0, 0, 2), (17, 4, 33, 6, 0, 5, 1, 0), (5, 3, 12, 3, 0, 2, 1, 0),
            (40, 8, 4, 64, 100, 0, 0, 0)]


def check_init_routing_v2(case, name, seed=0):
    n, k, cols, E, active, C, drop, flag = case
    rng = np.random.default_rng(seed)
    x = R.cast(rng.standard_normal((n, cols)), name)
    eidx = rng.integers(0, E, (n, k)).astype(I32)
    act = n * k if active == 0 else min(active, n * k)
    fill = 7
    outs = (np.full((E, C, cols) if drop else (act, cols), fill, x.dtype), np.zeros(n * k, I32),
            np.full(E, fill, I32) if flag else None, np.full(E, fill, I32) if drop else None)
    got = ops.MoeInitRoutingV2(x, eidx, active, C, E, drop, flag, bool(drop), *outs)
    want = init_routing_v2_ref(x, eidx, act, C, E, drop, flag, fill)
    for g, w, what in zip(got, want, ("expandedX", "expandedRowIdx", "countOrCumsum", "beforeCapacity")):
        assert w is None or F.bits_equal(g, w), (case, name, what)


@pytest.mark.parametrize("name", F.DTYPES)
def test_init_routing_v2_against_the_model(name):
    for case in V2_CASES:
        check_init_routing_v2(case, name)


XV2, EV2 = np.ones((4, 8), F32), np.zeros((4, 2), I32)
V2_INVALID = [   # arguments, code, message text (both SoCs)
    ((XV2.astype(np.float64), EV2, 0, 0, 4, 0, 0, False, np.zeros((8, 8), F32), np.zeros(8, I32), None, None), INVALID,
     "dtype combination x DOUBLE"),
    ((XV2, EV2, 0, 0, 4, 0, 1, False, np.zeros((8, 8), F32), np.zeros(8, I32), np.zeros(4, np.int64), None), INVALID,
     "expertTokensCountOrCumsumOutOptional INT64"),
    ((np.ones((4, 2, 4), F32), EV2, 0, 0, 4, 0, 0, False, np.zeros((8, 8), F32), np.zeros(8, I32), None, None), TILING,
     "The dim number of x should be 2."),
    ((XV2, EV2, 0, 0, 4, 2, 0, False, np.zeros((8, 8), F32), np.zeros(8, I32), None, None), TILING,
     "The dropPadMode should be 0 or 1."),
    ((XV2, EV2, 0, 5, 4, 1, 0, False, np.zeros((4, 5, 8), F32), np.zeros(8, I32), None, None), TILING,
     "The first dim of x cannot be less than expertCapacity"),
    ((XV2, EV2, 0, 0, 4, 0, 1, False, np.zeros((8, 8), F32), np.zeros(8, I32), None, None), TILING,
     "expertTokensCountOrCumsum is nullptr!"),
    ((XV2, EV2, 0, 2, 4, 1, 0, True, np.zeros((4, 3, 8), F32), np.zeros(8, I32), None, np.zeros(4, I32)), TILING,
     "The second dim of expandedX should be 2."),
    ((XV2, EV2, 5, 0, 4, 0, 0, False, np.zeros((8, 8), F32), np.zeros(8, I32), None, None), TILING,
     "The first dim of expandedX should be 5."),
    ((XV2, EV2, 0, 0, 4, 0, 2, False, np.zeros((8, 8), F32), np.zeros(8, I32), np.zeros(3, I32), None), TILING,
     "The first dim of expertTokensCountOrCumsum should be 4."),
]


@pytest.mark.parametrize("args,code,text", V2_INVALID)
def test_init_routing_v2_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeInitRoutingV2, args, code, text)


# ---- MoeInitRoutingQuantV2 -------------------------------------------------------------------------------------------

def f16(v):
    return np.asarray(v, np.float32).astype(np.float16).astype(np.float32)


def static_quant_ref(rows, scale, offset):
    """The kernel's fp16 steps: x to fp16 (RINT), * fp16(scale) and + fp16(offset) each rounded to fp16, RINT to int8."""
    h = f16(f16(f16(rows) * f16(scale)) + f16(offset))
    return np.clip(np.rint(h), -128, 127).astype(np.int8)


def dynamic_quant_ref(rows, smooth):
    v = rows.astype(F32) * smooth if smooth is not None else rows.astype(F32)
    s = np.abs(v).max(axis=1) / F32(127)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = f16_trunc((v / s[:, None]).astype(F32)).astype(np.float64)
    return np.clip(np.nan_to_num(np.sign(h) * np.floor(np.abs(h) + 0.5)), -128, 127).astype(np.int8), s


# (n, k, cols, experts, activeNum, capacity, dropPadMode, count flag, quant mode, smooth rows (dynamic))
QV2_CASES = [(6, 2, 8, 4, 0, 0, 0, 2, 0, 0), (9, 3, 16, 5, 20, 0, 0, 1, 1, 5), (7, 2, 12, 3, 0, 0, 0, 0, 1, 1),
             (8, 2, 8, 4, 0, 3, 1, 0, 0, 0), (5, 2, 4, 3, 0, 0, 0, 2, 1, 0)]


def check_init_routing_quant_v2(case, name, seed=0):
    n, k, cols, E, active, C, drop, flag, quant, smooth_rows = case
    rng = np.random.default_rng(seed)
    x = R.cast(rng.standard_normal((n, cols)) * 3, name)
    eidx = rng.integers(0, E, (n, k)).astype(I32)
    act = n * k if active == 0 else min(active, n * k)
    scale = offset = None
    if quant == 0:
        scale, offset = F32([rng.uniform(5, 20)]), F32([rng.uniform(-3, 3)])
    elif smooth_rows:
        scale = rng.uniform(0.5, 2, (smooth_rows, cols)).astype(F32)
    rows = E * C if drop else act
    outs = (np.full((E, C, cols) if drop else (act, cols), 7, np.int8), np.zeros(n * k, I32),
            np.full(E, 7, I32) if flag else None, np.full(E, 7, I32) if drop else None,
            np.full(rows, 7, F32) if quant == 1 else None)
    got = ops.MoeInitRoutingQuantV2(x, eidx, scale, offset, active, C, E, drop, flag, bool(drop), quant, *outs)
    ex, er, tok, before = init_routing_v2_ref(x.astype(F32), eidx, act, C, E, drop, flag, 7)
    assert np.array_equal(got[1], er) and (tok is None or np.array_equal(got[2], tok)), (case, name)
    assert before is None or np.array_equal(got[3], before), (case, name)
    order = np.argsort(eidx.reshape(-1), kind="stable")
    if drop:   # the routed slots: (e, j) for the j-th token of e while j < C
        slots = [(e * C + j, src) for e in range(E) for j, src in enumerate(order[eidx.reshape(-1)[order] == e][:C])]
    else:
        slots = [(i, order[i]) for i in range(act)]
    dst = np.array([d for d, _ in slots], np.int64)
    src_rows = x[np.array([src // k for _, src in slots])]
    flat_out = got[0].reshape(-1, cols)
    if quant == 0:
        want = static_quant_ref(src_rows.astype(F32), scale[0], offset[0])
    else:
        ids = eidx.reshape(-1)[np.array([src for _, src in slots])]
        smooth = scale[ids if smooth_rows > 1 else np.zeros_like(ids)] if smooth_rows else None
        want, s = dynamic_quant_ref(src_rows.astype(F32), smooth)
        assert F.bits_equal(got[4][dst], s), (case, name)
    assert F.bits_equal(flat_out[dst], want), (case, name)
    if drop:
        rest = np.setdiff1d(np.arange(E * C), dst)
        assert not flat_out[rest].any(), (case, name)   # the padding slots are zero


@pytest.mark.parametrize("name", F.DTYPES)
def test_init_routing_quant_v2_against_the_model(name):
    for case in QV2_CASES:
        check_init_routing_quant_v2(case, name)


QV2_INVALID = [   # arguments, code, message text (both SoCs)
    ((XV2, EV2, None, None, 0, 0, 4, 0, 0, False, 2, np.zeros((8, 8), np.int8), np.zeros(8, I32), None, None, None),
     TILING, "The quantMode should be 0 or 1."),
    ((XV2, EV2, None, None, 0, 0, 4, 0, 0, False, 0, np.zeros((8, 8), np.int8), np.zeros(8, I32), None, None, None),
     TILING, "scale is nullptr!"),
    ((XV2, EV2, F32([1]), None, 0, 0, 4, 0, 0, False, 0, np.zeros((8, 8), np.int8), np.zeros(8, I32), None, None, None),
     TILING, "offset is nullptr!"),
    ((XV2, EV2, None, None, 0, 0, 4, 0, 0, False, 1, np.zeros((8, 8), np.int8), np.zeros(8, I32), None, None,
      np.zeros(7, F32)), TILING, "The first dim of dynamicQuantScale should be 8."),
    ((XV2, EV2, np.ones((2, 8), F32), None, 0, 0, 4, 0, 0, False, 1, np.zeros((8, 8), np.int8), np.zeros(8, I32), None,
      None, np.zeros(8, F32)), TILING, "The first dim of scale should be 1 or expert_num."),
    ((XV2, EV2, None, None, 0, 0, 4, 0, 0, False, 1, np.zeros((8, 8), F32), np.zeros(8, I32), None, None,
      np.zeros(8, F32)), INVALID, "expandedXOut FLOAT"),
]


@pytest.mark.parametrize("args,code,text", QV2_INVALID)
def test_init_routing_quant_v2_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeInitRoutingQuantV2, args, code, text)


# ---- MoeFinalizeRouting (V1: Atlas A2 / A3 only) --------------------------------------------------------------------

def check_finalize_v1(case, name, seed=0):
    """V1 takes V2's dropPadMode 0 steps with x1, bias, scales and the expert ids required."""
    ex, ri, x1, x2, bias, scales, ei, _ = finalize_inputs(case, name, seed)
    got = ops.MoeFinalizeRouting(ex, x1, x2, bias, scales, ri, ei, np.zeros_like(x1))
    assert F.bits_equal(got, finalize_steps(ex, ri, x1, x2, bias, scales, ei, 0, name)), (case, name)
    return F.ulps(got, finalize64(ex, ri, x1, x2, bias, scales, ei, 0), name)


def check_finalize_v1_documented_example():
    """examples/test_aclnn_moe_finalize_routing.cpp's inputs."""
    ex = (np.arange(24, dtype=F32) + F32(0.1)).reshape(6, 4)
    x1 = (np.arange(12, dtype=F32) + F32(0.2)).reshape(3, 4)
    bias = np.tile(F32([0.2, 0.4]), 4).reshape(2, 4)
    sc, ei, ri = F32([[1.3, 1.6], [1.2, 1.8], [1.2, 2.3]]), I32([[0, 1], [0, 1], [0, 1]]), I32([2, 1, 4, 3, 0, 5])
    got = ops.MoeFinalizeRouting(ex, x1, x1, bias, sc, ri, ei, np.zeros((3, 4), F32))
    assert F.bits_equal(got, finalize_steps(ex, ri, x1, x1, bias, sc, ei, 0, "float32"))


FIN1_INVALID_A2 = [   # V1 on Atlas A2: the tiling's checks
    ((EX, X1, None, BI, SC, RIX, EIX, np.zeros(12, F32)), TILING, "The y should be 2D tensor."),
    ((EX, X1, None, BI, np.ones((3, 3), F32), RIX, EIX, Y3), TILING,
     "the The 1 of scales and expanded_expert_idx should be same."),
    ((EX, X1, None, np.ones((0, 4), F32), SC, RIX, EIX, Y3), TILING, "E can not be 0."),
]


def test_finalize_routing_v1():
    if A2:
        return
    err = pytest.raises(AclError, ops.MoeFinalizeRouting, EX, X1, None, BI, SC, RIX, EIX, Y3).value
    assert err.code == INVALID and "dtype combination expandedX FLOAT" in str(err), str(err)


# ---- MoeTokenPermuteGrad / MoeTokenUnpermuteGrad -------------------------------------------------------------------

def permute_grad_steps(gp, si, k, name):
    """The kernels' steps: the rows named by sortedIndices widened to fp32, added in k order (an index past the rows
    skipped), one cast to the dtype."""
    n = len(si) // k
    out = np.zeros((n, gp.shape[1]), F32)
    for t in range(n):
        for j in range(k):
            r = si[t * k + j]
            if 0 <= r < gp.shape[0]:
                out[t] = out[t] + gp[r].astype(F32)
    return R.cast(out, name)


def permute_grad64(gp, si, k):
    n = len(si) // k
    return np.array([sum((F.f64(gp)[r] for r in si[t * k:(t + 1) * k] if 0 <= r < gp.shape[0]), np.zeros(gp.shape[1]))
                     for t in range(n)])


def unpermute_grad_ref(pt, g, si, probs, name, pname):
    """permutedTokensGrad[si[t * K + k]] = fp32(grad[t] * prob) rounded to the dtype; probsGrad[t][k] = the fp32
    products pt[r] * grad[t] summed exactly (float64), rounded to fp32 then the probs' dtype (class c)."""
    k = probs.shape[1] if probs is not None else 1
    pg = np.zeros((pt.shape[0], g.shape[1]), F32)
    gp, gp64 = np.zeros((g.shape[0], k)), np.zeros((g.shape[0], k))
    for t in range(g.shape[0]):
        for j in range(k):
            r = si[t * k + j]
            p = F32(F.f64(probs)[t, j]) if probs is not None else F32(1)
            pg[r] = g[t].astype(F32) * p
            gp[t, j] = np.sum((pt[r].astype(F32) * g[t].astype(F32)).astype(np.float64))
            gp64[t, j] = np.sum(F.f64(pt[r]) * F.f64(g[t]))
    return R.cast(pg, name), (R.cast(gp.astype(F32), pname) if probs is not None else None), gp64


# tokens, topK, hidden, rows dropped (numOutTokens = tokens * topK - dropped)
PERMUTE_GRAD_CASES = [(6, 2, 16, 0), (5, 3, 8, 4), (9, 1, 12, 0), (4, 4, 5, 3)]
PERMUTE_GRAD_ULPS = {"float32": 2, "float16": 1, "bfloat16": 1}


def check_permute_grad(case, name, seed=0):
    n, k, h, drop = case
    rng = np.random.default_rng(seed)
    si = rng.permutation(n * k).astype(I32)
    gp = R.cast(rng.uniform(0.5, 2, (n * k - drop, h)), name)
    got = ops.MoeTokenPermuteGrad(gp, si, k, False, np.zeros((n, h), gp.dtype))
    assert F.bits_equal(got, permute_grad_steps(gp, si, k, name)), (case, name)
    return F.ulps(got, permute_grad64(gp, si, k), name)


@pytest.mark.parametrize("name", F.DTYPES)
def test_token_permute_grad_against_the_kernel_steps(name):
    for case in PERMUTE_GRAD_CASES:
        if A2 or case[3] == 0:   # Ascend 950 (MoeInitRoutingV2Grad dropless): grad rows = sortedIndices' size
            assert check_permute_grad(case, name) <= PERMUTE_GRAD_ULPS[name]


# tokens, topK (0: no probs), hidden, probs dtype (None: the tokens')
UNPERMUTE_GRAD_CASES = [(6, 2, 16, None), (5, 3, 64, "float32"), (9, 0, 12, None), (4, 4, 5, "bfloat16")]


def check_unpermute_grad(case, name, seed=0):
    n, k, h, pname = case
    rng = np.random.default_rng(seed)
    kk = max(k, 1)
    si = rng.permutation(n * kk).astype(I32)
    pt = R.cast(rng.uniform(0.5, 2, (n * kk, h)), name)
    g = R.cast(rng.uniform(0.5, 2, (n, h)), name)
    pname = pname or name
    probs = R.cast(rng.uniform(0.1, 1, (n, k)), pname) if k else None
    outs = (np.zeros((n * kk, h), pt.dtype), np.zeros((n, kk), R.np_dtype(pname)) if k else np.zeros((n, 1), pt.dtype))
    got_pg, got_gp = ops.MoeTokenUnpermuteGrad(pt, g, si, probs, False, None, *outs)
    want_pg, want_gp, gp64 = unpermute_grad_ref(pt, g, si, probs, name, pname)
    assert F.bits_equal(got_pg, want_pg), (case, name)
    if probs is None:
        return 0
    assert F.bits_equal(got_gp, want_gp), (case, name)
    return F.ulps(got_gp, gp64, pname)


@pytest.mark.parametrize("name", F.DTYPES)
def test_token_unpermute_grad_against_the_model(name):
    for case in UNPERMUTE_GRAD_CASES:
        assert check_unpermute_grad(case, name) <= PERMUTE_GRAD_ULPS[case[3] or name]


GPG, SIG = np.ones((8, 4), F32), np.arange(8, dtype=I32)
GRAD_INVALID = [   # function, arguments, code, message text (both SoCs)
    ("MoeTokenPermuteGrad", (GPG.astype(np.float64), SIG, 2, False, np.zeros((4, 4), F32)), INVALID,
     "dtype combination permutedOutputGrad DOUBLE"),
    ("MoeTokenPermuteGrad", (GPG, SIG, 2, False, np.zeros((4, 4), np.float16)), INVALID, "out FLOAT16"),
    ("MoeTokenUnpermuteGrad", (GPG, np.ones((4, 4), F32), SIG, np.ones((4, 2), F32), False, None,
                               np.zeros((8, 4), np.float16), np.zeros((4, 2), F32)), INVALID,
     "permutedTokensGradOut FLOAT16"),
]
GRAD_INVALID_950 = [
    ("MoeTokenPermuteGrad", (GPG, SIG, 2, True, np.zeros((4, 4), F32)), INVALID, "paddedMode must be false"),
    ("MoeTokenPermuteGrad", (GPG, SIG, 0, False, np.zeros((4, 4), F32)), TILING, "Attr top_k must be larger than zero."),
    ("MoeTokenPermuteGrad", (GPG, SIG, 2, False, np.zeros((4, 5), F32)), TILING,
     "Tail dim size of input and output should be same."),
    ("MoeTokenPermuteGrad", (GPG, SIG, 2, False, np.zeros((3, 4), F32)), TILING, "dim 0 of output gradX should be"),
    ("MoeTokenUnpermuteGrad", (GPG, np.ones((4, 4), F32), SIG, np.ones((4, 2), F32), True, None,
                               np.zeros((8, 4), F32), np.zeros((4, 2), F32)), INVALID, "paddedMode must be false"),
    ("MoeTokenUnpermuteGrad", (GPG, np.ones((4, 5), F32), SIG, np.ones((4, 2), F32), False, None,
                               np.zeros((8, 4), F32), np.zeros((4, 2), F32)), TILING,
     "expanded_x last dim and grad_y dim1 must be same, but got 4, 5."),
    ("MoeTokenUnpermuteGrad", (GPG, np.ones((4, 4), F32), SIG, np.ones((4, 2), F32), False, None,
                               np.zeros((7, 4), F32), np.zeros((4, 2), F32)), TILING,
     "grad_expanded_x dim0 must be equal to 8, but got 7."),
]
GRAD_INVALID_A2 = [
    ("MoeTokenPermuteGrad", (GPG, SIG, 0, False, np.zeros((4, 4), F32)), INVALID, "numTopk must be positive or -1"),
    ("MoeTokenPermuteGrad", (GPG, SIG, 2, False, np.zeros((4, 5), F32)), INVALID, "out must be (tokens, hidden)"),
    ("MoeTokenUnpermuteGrad", (GPG, np.ones((4, 0), F32), SIG, np.ones((4, 2), F32), False, None,
                               np.zeros((8, 0), F32), np.zeros((4, 2), F32)), TILING,
     "[MoeTokenUnpermuteGrad] input shape has 0."),
    ("MoeTokenUnpermuteGrad", (GPG, np.ones((4, 4), F32), SIG, np.ones((4, 2), F32), False, None,
                               np.zeros((7, 4), F32), np.zeros((4, 2), F32)), INVALID,
     "permutedTokensGradOut must be (permuteTokens' rows, hidden)"),
]


@pytest.mark.parametrize("fn,args,code,text", GRAD_INVALID + (GRAD_INVALID_A2 if A2 else GRAD_INVALID_950))
def test_token_permute_grads_invalid_arguments(fn, args, code, text):
    F.expect_error(getattr(ops, fn), args, code, text)


# ---- MoeInitRoutingV3 ------------------------------------------------------------------------------------------------

def f16_trunc(v):
    """fp32 -> fp16 with CAST_TRUNC (toward zero)."""
    h = v.astype(np.float16)
    over = np.abs(h.astype(F32)) > np.abs(v)
    h[over] = np.nextafter(h[over], np.float16(0))
    return h


def init_routing_v3_ref(x, eidx, scale, rng_, num_experts, count_type, quant, row_type, fill):
    """The docs' definition with the kernels' orders: experts sorted ascending and stable, those below the range last,
    the m in [start, end) routed; dynamic quant: v = x (* smooth), scale = max|v| / 127, int8(round(fp16_trunc(v /
    scale)))."""
    start, end = rng_
    n, k = eidx.shape
    flat = eidx.reshape(-1).astype(np.int64)
    order = np.argsort(np.where(flat < start, np.inf, flat.astype(np.float64)), kind="stable")
    inside = (flat >= start) & (flat < end)
    m = int(inside.sum())
    counts = np.bincount(flat[inside] - start, minlength=end - start).astype(np.int64)
    if count_type == 1:
        cnt = counts
    else:
        cnt = np.full((num_experts, 2), fill, np.int64)
        w = min(end - start + 1, num_experts) * 2
        cnt.reshape(-1)[:w] = 0
        nz = np.nonzero(counts)[0]
        cnt[:len(nz), 0], cnt[:len(nz), 1] = nz + start, counts[nz]
    if row_type == 1:
        er = order.astype(I32)
    else:
        er = np.full(n * k, -1, I32)
        er[order[:m]] = np.arange(m)
    src = order[:m] // k
    es = np.full(n * k, fill, F32)
    if quant == -1:
        ex = np.full((n * k, x.shape[1]), fill, x.dtype)
        ex[:m] = x[src]
        if scale is not None:
            es[:m] = scale[src]
        return ex, er, cnt, es
    ex = np.full((n * k, x.shape[1]), fill, np.int8)
    v = x[src].astype(F32)
    if scale is not None:
        v = v * scale[flat[order[:m]] - start]
    s = np.abs(v).max(axis=1) / F32(127)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = f16_trunc((v / s[:, None]).astype(F32)).astype(np.float64)
    q = np.nan_to_num(np.sign(h) * np.floor(np.abs(h) + 0.5))
    ex[:m] = np.clip(q, -128, 127).astype(np.int8)
    es[:m] = s
    return ex, er, cnt, es


# (n, k, cols, experts, [start, end), count type, quant, row type, scale)
V3_CASES = [(6, 2, 8, 8, [0, 8], 1, -1, 0, False), (9, 3, 5, 10, [2, 7], 2, -1, 1, True),
            (17, 4, 33, 16, [3, 16], 1, 1, 1, True), (5, 3, 12, 6, [1, 4], 2, 1, 0, False),
            (40, 8, 4, 64, [8, 40], 2, -1, 0, False)]


def check_init_routing_v3(case, name, seed=0):
    n, k, cols, E, rg, ctype, quant, rowt, with_scale = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (n, cols)).astype(np.int8) if name == "int8" else R.cast(rng.standard_normal((n, cols)), name)
    eidx = rng.integers(0, E, (n, k)).astype(I32)
    scale = None
    if with_scale:
        scale = (rng.uniform(0.5, 2, (rg[1] - rg[0], cols)) if quant == 1 else rng.standard_normal(n)).astype(F32)
    fill = 7
    outs = (np.full((n * k, cols), fill, np.int8 if quant == 1 else x.dtype), np.zeros(n * k, I32),
            np.full((E, 2) if ctype == 2 else rg[1] - rg[0], fill, np.int64), np.full(n * k, fill, F32))
    got = ops.MoeInitRoutingV3(x, eidx, scale, None, -1 if seed % 2 else n * k, 0, E, 0, ctype, True, quant, rg, rowt,
                               *outs)
    want = init_routing_v3_ref(x, eidx, scale, rg, E, ctype, quant, rowt, fill)
    for g, w, what in zip(got, want, ("expandedX", "expandedRowIdx", "counts", "expandedScale")):
        assert F.bits_equal(g, w), (case, name, what)


@pytest.mark.parametrize("name", F.DTYPES + ["int8"])
def test_init_routing_v3_against_the_model(name):
    for case in V3_CASES:
        if name != "int8" or case[6] == -1:
            check_init_routing_v3(case, name)


def test_init_routing_v3_documented_example():
    """The docs' example: x 3 x 4 of 0.1 .. 1.2, expertIdx [[1, 2], [0, 1], [0, 2]] (printed rows of the README)."""
    x = (np.arange(12, dtype=F32) / 10 + F32(0.1)).reshape(3, 4)
    ex, er, cnt, es = ops.MoeInitRoutingV3(x, I32([[1, 2], [0, 1], [0, 2]]), None, None, -1, 0, 4, 0, 1, True, -1,
                                           [0, 4], 0, np.zeros((6, 4), F32), np.zeros(6, I32), np.zeros(4, np.int64),
                                           np.zeros(6, F32))
    assert er.tolist() == [2, 4, 0, 3, 1, 5] and cnt.tolist() == [2, 2, 2, 0]
    assert F.bits_equal(ex, x[[1, 2, 0, 1, 0, 2]])


XV, EV = np.ones((4, 8), F32), np.zeros((4, 2), I32)
OV = (np.zeros((8, 8), F32), np.zeros(8, I32), np.zeros(4, np.int64), np.zeros(8, F32))
DEFER = 561103


def v3_args(**kw):
    a = dict(x=XV, e=EV, scale=None, offset=None, active=-1, cap=0, E=4, drop=0, ctype=1, flag=True, quant=-1,
             rg=[0, 4], rowt=0, ex=OV[0], er=OV[1], cnt=OV[2], es=OV[3])
    a.update(kw)
    return tuple(a.values())


V3_INVALID = [   # arguments, code, message text (the op_api's, then the L0 op's: 561103 at the run)
    (v3_args(x=XV.astype(np.float64)), INVALID, "x dtype DOUBLE is not supported"),
    (v3_args(e=EV.astype(np.int64)), INVALID, "expertIdx dtype INT64"),
    (v3_args(cnt=OV[2].astype(I32)), INVALID, "expertTokensCountOrCumsumOut dtype INT32"),
    (v3_args(rg=[0]), INVALID, "activeExpertRangeOptional holds 1 values"),
    (v3_args(e=np.zeros((5, 2), I32)), INVALID, "expertIdx shape error"),
    (v3_args(ex=np.zeros((6, 8), F32)), INVALID, "expandedXOut shape error"),
    (v3_args(cnt=np.zeros(3, np.int64)), INVALID, "expertTokensCountOrCumsumOut shape error"),
    (v3_args(scale=np.ones(3, F32)), INVALID, "scale shape error"),
    (v3_args(ex=OV[0].astype(np.float16)), DEFER, "no kernel for x FLOAT, expanded_x FLOAT16"),
]
V3_INVALID_950 = [
    (v3_args(ctype=0), DEFER, "Attr expert_tokens_num_type currently supports: 1 or 2, but got 0."),
    (v3_args(flag=False), DEFER, "Attr expert_tokens_num_flag currently supports True, but got False"),
    (v3_args(rg=[2, 2], ctype=2, cnt=np.zeros((4, 2), np.int64)), DEFER,
     "Extracted attr expert_start should be less than expert_end, current [expert_start, expert_end) is [2, 2)."),
    (v3_args(active=5), DEFER, "Attr active_num should equal to bs*k(8), current is 5."),
    (v3_args(drop=1), DEFER, "Attr drop_pad_mode currently supports 0, but got 1."),
    (v3_args(quant=0), DEFER, "Attr quant_mode currently supports -1 or 1, but got 0"),
]
V3_INVALID_A2 = [
    (v3_args(ctype=0), DEFER, "expert_tokens_num_type currently not support 0"),
    (v3_args(flag=False), DEFER, "expert_tokens_num_flag currently support True"),
    (v3_args(rg=[2, 2], ctype=2, cnt=np.zeros((4, 2), np.int64)), DEFER, "expert_start should be less than expert_end"),
    (v3_args(active=5), DEFER, "active_num currently should equal to 8(bs*k)"),
    (v3_args(drop=1), DEFER, "drop_pad_mode currently support 0"),
    (v3_args(rg=[], ctype=2, cnt=np.zeros((4, 2), np.int64)), DEFER, "The dim number of expert_range should be 2."),
]


@pytest.mark.parametrize("args,code,text", V3_INVALID + (V3_INVALID_A2 if A2 else V3_INVALID_950))
def test_init_routing_v3_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeInitRoutingV3, args, code, text)


# ---- MoeInitRoutingV3 quantMode 13 (Ascend 950: INT4 dynamic quant) -------------------------------------------------

def int4_quant_ref(rows, smooth):
    """The arch35 gather's INT4 steps (moe_v3_gather_dynamic_quant_arch35.h): v = rows (* smooth), amax = max|v|,
    factor = 7 / amax (0 when amax is 0), scale = amax * (1 / 7) in fp32, codes = round-half-away(fp16_trunc(v *
    factor)) in [-8, 7]. Returns the codes (int8) and the scales."""
    v = rows.astype(F32) * (smooth.astype(F32) if smooth is not None else F32(1))
    amax = np.abs(v).max(axis=1)
    with np.errstate(divide="ignore"):
        factor = np.where(amax == 0, F32(0), F32(7) / amax).astype(F32)
    h = f16_trunc((v * factor[:, None]).astype(F32)).astype(np.float64)
    q = np.clip(np.sign(h) * np.floor(np.abs(h) + 0.5), -8, 7).astype(np.int8)
    return q, (amax * F32(np.float32(1) / np.float32(7))).astype(F32)


def pack_int4(codes):
    """Two codes a byte, the even column in the low nibble (int4 as torch_npu's uint8 holds it)."""
    u = codes.astype(np.uint8) & 0xF
    return (u[:, 0::2] | (u[:, 1::2] << 4)).astype(np.uint8)


# (n, k, cols, experts, [start, end), count type, row type, smooth)
INT4_CASES = [(6, 2, 8, 8, [0, 8], 1, 0, False), (9, 3, 70, 10, [2, 7], 2, 1, True), (5, 4, 132, 6, [0, 6], 1, 1, True)]


def check_init_routing_v3_int4(case, name, seed=0):
    import ml_dtypes
    n, k, cols, E, rg, ctype, rowt, with_smooth = case
    rng = np.random.default_rng(seed)
    x = R.cast(rng.standard_normal((n, cols)) * 3, name)
    x[0] = 0   # a row of zeros: factor 0, codes 0, scale 0
    eidx = rng.integers(0, E, (n, k)).astype(I32)
    smooth = rng.uniform(0.5, 2, (1, cols)).astype(F32) if with_smooth else None
    fill = 7
    outs = (np.zeros((n * k, cols), ml_dtypes.int4), np.zeros(n * k, I32),
            np.full((E, 2) if ctype == 2 else rg[1] - rg[0], fill, np.int64), np.full(n * k, fill, F32))
    got = ops.MoeInitRoutingV3(x, eidx, smooth, None, -1, 0, E, 0, ctype, True, 13, rg, rowt, *outs)
    want = init_routing_v3_ref(x.astype(F32), eidx, None, rg, E, ctype, -1, rowt, fill)
    flat = eidx.reshape(-1)
    order = np.argsort(np.where(flat < rg[0], np.inf, flat.astype(np.float64)), kind="stable")
    m = int(((flat >= rg[0]) & (flat < rg[1])).sum())
    q, s = int4_quant_ref(x[order[:m] // k], smooth)
    assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2]), (case, name)
    assert np.array_equal(got[0][:m].astype(np.int8), q), (case, name)
    assert np.all(got[0][m:].astype(np.int8) == 0), (case, name)   # unrouted rows keep their bytes
    assert F.bits_equal(got[3][:m], s) and np.all(got[3][m:] == fill), (case, name)


@pytest.mark.skipif(A2, reason="quantMode 13 is the Ascend 950's")
@pytest.mark.parametrize("name", ["float32", "bfloat16"])
def test_init_routing_v3_int4_against_the_kernel_steps(name):
    for case in INT4_CASES:
        check_init_routing_v3_int4(case, name)


def int4_args(**kw):
    import ml_dtypes
    a = dict(x=XV, e=EV, scale=None, offset=None, active=-1, cap=0, E=4, drop=0, ctype=1, flag=True, quant=13,
             rg=[0, 4], rowt=0, ex=np.zeros((8, 8), ml_dtypes.int4), er=OV[1], cnt=OV[2], es=OV[3])
    a.update(kw)
    return tuple(a.values())


def int4_invalid_950():   # the newer Ascend 950 tiling's checks for quantMode 13, in its order (561103 at the run)
    x16 = XV.astype(np.float16)
    return [
        (int4_args(x=x16, ex=OV[0].astype(np.float16)), DEFER, "dtype of x FLOAT16: unsupported under quant_mode 13"),
        (int4_args(x=x16), DEFER, "no kernel for x FLOAT16, expanded_x INT4"),
        (int4_args(ex=OV[0].astype(np.int8)), DEFER, "expanded_x INT8: expected INT4 under quant_mode 13"),
        (int4_args(scale=np.ones((2, 8), F32)), DEFER, "scale dim[0] 2, expected 1"),
        (int4_args(scale=np.ones((1, 6), F32)), DEFER, "scale dim[1] 6, expected 8"),
        (int4_args(scale=np.ones((1, 8), F32), es=np.zeros(7, F32)), INVALID, "expandedScaleOut shape error"),
        (int4_args(x=np.ones((4, 7), F32), ex=np.zeros((8, 7), __import__("ml_dtypes").int4)), DEFER,
         "cols 7: For INT4 dynamic quantization, cols must be even."),
        (int4_args(quant=2), DEFER, "Attr quant_mode currently supports -1 or 1, but got 2"),
    ]


def test_init_routing_v3_int4_invalid_arguments():
    if A2:   # Atlas A2: INT4 is not in expandedXOut's list
        F.expect_error(ops.MoeInitRoutingV3, int4_args(), INVALID, "expandedXOut dtype INT4 is not supported")
        return
    for args, code, text in int4_invalid_950():
        F.expect_error(ops.MoeInitRoutingV3, args, code, text)


# ---- MoeInitRoutingV3 MX no-quant rows (Ascend 950: FLOAT8 x with FLOAT8_E8M0 scales) ---------------------------------

def check_init_routing_v3_mx(name, cols, seed=0):
    """quantMode -1 with FLOAT8 x and an E8M0 scale [n, ceil(h / 64), 2]: the routed rows of x and of the scale moved
    byte for byte (the newer arch35 gather), the rows past m keep their bytes."""
    import ml_dtypes
    n, k, E, rg = 7, 3, 8, [1, 7]
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (n, cols)).astype(np.uint8).view(getattr(ml_dtypes, name))
    sc = rng.integers(0, 256, (n, -(-cols // 64), 2)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    eidx = rng.integers(0, E, (n, k)).astype(I32)
    fx, fs = np.full((n * k, cols), 0x55, np.uint8), np.full((n * k,) + sc.shape[1:], 0x66, np.uint8)
    got = ops.MoeInitRoutingV3(x, eidx, sc, None, -1, 0, E, 0, 1, True, -1, rg, 0, fx.view(x.dtype), np.zeros(n * k, I32),
                               np.zeros(6, np.int64), fs.view(sc.dtype))
    flat = eidx.reshape(-1)
    order = np.argsort(np.where(flat < rg[0], np.inf, flat.astype(np.float64)), kind="stable")
    m = int(((flat >= rg[0]) & (flat < rg[1])).sum())
    want_x, want_s = fx.copy(), fs.copy()
    want_x[:m] = x.view(np.uint8)[order[:m] // k]
    want_s[:m] = sc.view(np.uint8)[order[:m] // k]
    want = init_routing_v3_ref(x.view(np.uint8), eidx, None, rg, E, 1, -1, 0, 0)
    assert np.array_equal(got[0].view(np.uint8), want_x) and np.array_equal(got[3].view(np.uint8), want_s), name
    assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2]), name


@pytest.mark.skipif(A2, reason="the MX no-quant rows are the Ascend 950's")
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_init_routing_v3_mx_no_quant_moves_the_bytes(name):
    for cols in (64, 70):
        check_init_routing_v3_mx(name, cols)


def mx_invalid_950():   # the newer Ascend 950 tiling's checks (561103 at the run)
    import ml_dtypes
    x8 = XV.astype(ml_dtypes.float8_e4m3fn)
    e8 = np.ones((4, 1, 2), ml_dtypes.float8_e8m0fnu)
    es8 = np.zeros((8, 1, 2), ml_dtypes.float8_e8m0fnu)
    return [
        (v3_args(x=x8, ex=OV[0].astype(x8.dtype), scale=np.ones((4, 2, 2), e8.dtype), es=es8), DEFER,
         "scale dim[1] 2, expected 1"),
        (v3_args(x=x8, ex=OV[0].astype(x8.dtype), scale=np.ones((4, 1, 2), F32), es=es8), DEFER,
         "x, scale FLOAT8_E4M3FN, FLOAT: scale should be DT_FLOAT8_E8M0 in no quant case"),
        (v3_args(x=x8, ex=OV[0].astype(np.int8), quant=1), DEFER, "dtype of x FLOAT8_E4M3FN: unsupported under quant_mode 1"),
        (v3_args(scale=np.ones(4, e8.dtype)), DEFER, "scale dtype FLOAT8_E8M0, expected DT_FLOAT"),
        (v3_args(x=x8, ex=OV[0].astype(x8.dtype), scale=e8, es=np.zeros((8, 2), ml_dtypes.float8_e8m0fnu)), DEFER,
         "expandedScaleOut must be FLOAT8_E8M0 [n * k = 8, 1, 2]"),
    ]


def test_init_routing_v3_mx_invalid_arguments():
    import ml_dtypes
    if A2:   # Atlas A2: FLOAT8 x is not in x's list
        F.expect_error(ops.MoeInitRoutingV3, v3_args(x=XV.astype(ml_dtypes.float8_e4m3fn)), INVALID,
                       "x dtype FLOAT8_E4M3FN is not supported")
        return
    for args, code, text in mx_invalid_950():
        F.expect_error(ops.MoeInitRoutingV3, args, code, text)


# ---- Atlas A2: the same checks and MoeComputeExpertTokens in one subprocess ----------------------------------------

A2_CALLS = """
for name in ["float32", "float16", "bfloat16"]:
    for case in T.CASES:
        T.check_init_routing(case, name, 1)
    for case in T.FIN_CASES:
        T.check_finalize(case, name, 1)
for name in ["float32", "float16", "bfloat16", "int8"]:
    for case in T.PERMUTE_CASES:
        T.check_permute(case, name, 1)
for args, code, text in T.PERMUTE_INVALID_A2:
    T.test_token_permute_invalid_arguments(args, code, text)
for name in ["float32", "float16", "bfloat16"]:
    for case in T.UNPERMUTE_CASES:
        assert T.check_unpermute(case, name, 1) <= T.UNPERMUTE_ULPS[name]
for args, code, text in T.UNPERMUTE_INVALID_A2:
    T.test_token_unpermute_invalid_arguments(args, code, text)
T.check_unpermute_skips_zero_probs()
T.check_finalize(T.FIN_CASES[0], "bfloat16", 2, "float32")   # the A2 row BFLOAT16 x, FLOAT scales
F = T.F
F.expect_error(T.ops.MoeFinalizeRoutingV2, (T.EX, T.RIX, T.X1, T.X1, T.BI, T.SC.astype(T.np.float16), T.EIX, 0, T.Y3),
               T.INVALID, "the dtype combination expandedX FLOAT, scalesOptional FLOAT16 is not supported")
T.test_init_routing_documented_example()
T.test_finalize_routing_documented_example()
T.check_expert_tokens()
T.check_tokens_invalid()
for name in ["float32", "float16", "bfloat16", "int8"]:
    for case in T.V3_CASES:
        if name != "int8" or case[6] == -1:
            T.check_init_routing_v3(case, name, 1)
for name in ["float32", "float16", "bfloat16"]:
    for case in T.PERMUTE_GRAD_CASES:
        assert T.check_permute_grad(case, name, 1) <= T.PERMUTE_GRAD_ULPS[name]
    for case in T.UNPERMUTE_GRAD_CASES:
        assert T.check_unpermute_grad(case, name, 1) <= T.PERMUTE_GRAD_ULPS[case[3] or name]
for name in ["float32", "float16", "bfloat16"]:
    for case in T.FIN_CASES:
        if case[4] == 0 and case[5] and case[7] and case[8]:
            assert T.check_finalize_v1(case, name, 1) <= T.FIN_ULPS[name]
T.check_finalize_v1_documented_example()
for args, code, text in T.FIN1_INVALID_A2:
    F.expect_error(T.ops.MoeFinalizeRouting, args, code, text)
for name in ["float32", "float16", "bfloat16"]:
    for case in T.V2_CASES:
        T.check_init_routing_v2(case, name, 1)
for args, code, text in T.V2_INVALID:
    T.test_init_routing_v2_invalid_arguments(args, code, text)
for name in ["float32", "float16", "bfloat16"]:
    for case in T.QV2_CASES:
        T.check_init_routing_quant_v2(case, name, 1)
for args, code, text in T.QV2_INVALID:
    T.test_init_routing_quant_v2_invalid_arguments(args, code, text)
F.expect_error(T.ops.MoeInitRoutingV2, (T.XV2, T.EV2, -1, 0, 4, 0, 0, False, T.np.zeros((8, 8), T.F32),
                                        T.np.zeros(8, T.I32), None, None), T.TILING, "The activeNum cannot be less than 0.")
for fn, args, code, text in T.GRAD_INVALID + T.GRAD_INVALID_A2:
    T.test_token_permute_grads_invalid_arguments(fn, args, code, text)
for args, code, text in T.V3_INVALID + T.V3_INVALID_A2:
    T.test_init_routing_v3_invalid_arguments(args, code, text)
T.test_init_routing_v3_int4_invalid_arguments()
T.test_init_routing_v3_mx_invalid_arguments()
for args, code, text in T.INIT_INVALID[:4]:
    T.test_init_routing_invalid_arguments(args, code, text)
"""


def test_atlas_a2():
    F.run_on_a2("test_moe_routing", A2_CALLS)


# ---- torch_npu -----------------------------------------------------------------------------------------------------

TORCH_BODY = """
torch.manual_seed(0)
n, k = 10, 3
for dt in [torch.float32, torch.float16, torch.bfloat16]:
    x = torch.randn(n, 16).to(dt)
    row = torch.arange(n * k, dtype=torch.int32).reshape(k, n).t().contiguous()
    expert = torch.randint(0, 5, (n, k), dtype=torch.int32)
    ex, er, ee = torch_npu.npu_moe_init_routing(x.npu(), row.npu(), expert.npu(), 7)
    tokens = torch_npu.npu_moe_compute_expert_tokens(ee, 5)
    OUT[str(dt)] = [enc(to_np(v)) for v in (x, row, expert, ex, er, ee, tokens)]
    exf = (torch.rand(n * k, 16) + 0.5).to(dt); skip = (torch.rand(n, 16) + 0.5).to(dt)
    bias = (torch.rand(5, 16) + 0.5).to(dt)
    scales = torch.rand(n, k).to(dt); perm = torch.randperm(n * k).to(torch.int32)
    fin = torch_npu.npu_moe_finalize_routing(exf.npu(), skip.npu(), skip.npu(), bias.npu(), scales.npu(), perm.npu(),
                                             expert.npu())
    OUT["fin " + str(dt)] = [enc(to_np(v)) for v in (exf, skip, bias, scales, perm, fin)]
    pt, si = torch_npu.npu_moe_token_permute(x.npu(), expert.to(torch.int64).npu(), num_out_tokens=20)
    OUT["perm " + str(dt)] = [enc(to_np(v)) for v in (pt, si)]
    probs = (torch.rand(n, k) + 0.1).to(dt)
    un = torch_npu.npu_moe_token_unpermute(exf.npu(), perm.npu(), probs=probs.npu())
    OUT["unperm " + str(dt)] = [enc(to_np(v)) for v in (probs, un)]
    xg = x.npu().requires_grad_()
    pt2, si2 = torch_npu.npu_moe_token_permute(xg, expert.to(torch.int64).npu())
    gpt = (torch.rand(n * k, 16) + 0.5).to(dt)
    pt2.backward(gpt.npu())
    ptk = exf.npu().requires_grad_(); pr = probs.npu().requires_grad_()
    un2 = torch_npu.npu_moe_token_unpermute(ptk, si2, probs=pr)
    gun = (torch.rand(n, 16) + 0.5).to(dt)
    un2.backward(gun.npu())
    OUT["grads " + str(dt)] = [enc(to_np(v)) for v in (si2, gpt, xg.grad, gun, ptk.grad, pr.grad)]
    if dt == torch.float32:   # the "v2 case": aclnnMoeInitRoutingV2, whose definition takes INT32 counts
        try:
            torch_npu.npu_moe_init_routing_v2(torch.randn(4, 2048).npu(), torch.zeros(4, 2, dtype=torch.int32).npu(),
                                              active_num=8, expert_num=128, expert_tokens_num_type=1,
                                              expert_tokens_num_flag=True, active_expert_range=[0, 128])
            OUT["v2 case"] = [enc(np.zeros(1))]
        except RuntimeError as e:
            OUT["v2 case"] = [enc(np.frombuffer(str(e).encode()[:2000], np.uint8))]
    sm = (torch.rand(5, 16) + 0.5).float()
    rq = torch_npu.npu_moe_init_routing_quant(x.npu(), expert.npu(), scale=sm.npu(), active_num=0, expert_capacity=0,
                                              expert_num=5, drop_pad_mode=0, expert_tokens_num_mode=2,
                                              expert_tokens_before_capacity_flag=False, quant_mode=1)
    OUT["quant " + str(dt)] = [enc(to_np(v)) for v in (sm, rq[0], rq[1], rq[2], rq[4])]
    e8 = torch.randint(0, 8, (n, k), dtype=torch.int32)
    smooth = (torch.rand(6, 16) + 0.5).float()
    for quant, ctype, rowt in [(-1, 1, 0), (1, 2, 1)]:
        r = torch_npu.npu_moe_init_routing_v2(x.npu(), e8.npu(), scale=smooth.npu() if quant == 1 else None,
                                              active_num=n * k, expert_num=8, expert_tokens_num_type=ctype,
                                              expert_tokens_num_flag=True, quant_mode=quant, active_expert_range=[1, 7],
                                              row_idx_type=rowt)
        OUT[f"v3 {quant} " + str(dt)] = [enc(to_np(v)) for v in (e8, smooth) + tuple(r)]
"""


def test_torch_npu_reaches_the_operators():
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY, soc="Ascend910B4")   # MoeComputeExpertTokens: Atlas A2 / A3 only
    for dt in F.TORCH_NAMES:
        x, row, expert, ex, er, ee, tokens = out[dt]
        for g, w in zip((ex, er, ee), init_routing_ref(x, row, expert, 7)):
            assert F.bits_equal(g, w), dt
        assert np.array_equal(tokens, expert_tokens_ref(ee, 5))
        exf, skip, bias, scales, perm, fin = out["fin " + dt]
        args = (exf, perm, skip, skip, bias, scales, expert, 0)
        name = F.TORCH_NAMES[dt]
        assert F.bits_equal(fin, finalize_steps(*args, name)) and F.ulps(fin, finalize64(*args), name) <= FIN_ULPS[name]
        pt, si = out["perm " + dt]
        want_t, want_i = permute_ref(x, expert, 20)
        assert F.bits_equal(pt, want_t) and np.array_equal(si, want_i), dt
        probs, un = out["unperm " + dt]
        assert F.bits_equal(un, unpermute_steps(exf, perm, probs, name, False))
        assert F.ulps(un, unpermute64(exf, perm, probs), name) <= UNPERMUTE_ULPS[name]
        sm, qx, qr, qc, qs = out["quant " + dt]   # npu_moe_init_routing_quant -> aclnnMoeInitRoutingQuantV2
        _, er2, tok2, _ = init_routing_v2_ref(x.astype(F32), expert, expert.size, 0, 5, 0, 2, 0)
        order = np.argsort(expert.reshape(-1), kind="stable")
        wq, ws = dynamic_quant_ref(x[order // 3].astype(F32), sm[expert.reshape(-1)[order]])
        assert np.array_equal(qr, er2) and np.array_equal(qc, tok2), dt
        assert F.bits_equal(qx, wq) and F.bits_equal(qs, ws), dt
        msg = bytes(out["v2 case"][0]).decode(errors="replace")   # torch_npu passes int64 counts: 161002 as on the NPU
        assert "aclnnMoeInitRoutingV2GetWorkspaceSize(161002)" in msg and "Optional INT64" in msg, msg[-500:]
        si2, gpt, xgrad, gun, ptgrad, prgrad = out["grads " + dt]   # the backward of permute / unpermute
        assert F.bits_equal(xgrad, permute_grad_steps(gpt, si2, 3, name)), dt
        want_pg, want_gp, _ = unpermute_grad_ref(exf, gun, si2, probs, name, name)
        assert F.bits_equal(ptgrad, want_pg) and F.bits_equal(prgrad, want_gp), dt
        for quant, ctype, rowt in [(-1, 1, 0), (1, 2, 1)]:   # npu_moe_init_routing_v2 -> aclnnMoeInitRoutingV3
            e8, smooth, ex3, er3, cnt3, es3 = out[f"v3 {quant} " + dt]
            want = init_routing_v3_ref(x, e8, smooth if quant == 1 else None, [1, 7], 8, ctype, quant, rowt, 0)
            m = int(((e8 >= 1) & (e8 < 7)).sum())   # the rows past m are torch_npu's uninitialised memory
            assert F.bits_equal(ex3[:m], want[0][:m]) and np.array_equal(er3, want[1]), (dt, quant)
            assert np.array_equal(cnt3.reshape(-1)[:14 if ctype == 2 else 6], want[2].reshape(-1)[:14 if ctype == 2 else 6])
            assert quant == -1 or F.bits_equal(es3[:m], want[3][:m]), dt


TORCH_950_BODY = """
torch.manual_seed(1)
n, k, h, E = 6, 2, 16, 8
e = torch.randint(0, E, (n, k), dtype=torch.int32)
for dt in [torch.float32, torch.bfloat16]:
    x = torch.randn(n, h).to(dt) * 3
    for with_scale in (False, True):
        sm = (torch.rand(1, h) + 0.5).float()
        r = torch_npu.npu_moe_init_routing_v2(x.npu(), e.npu(), scale=sm.npu() if with_scale else None,
                                              active_num=-1, expert_num=E, expert_tokens_num_type=1,
                                              expert_tokens_num_flag=True, quant_mode=13, active_expert_range=[0, E],
                                              row_idx_type=0, x_dtype=torch_npu.int4)
        OUT[f"int4 {with_scale} " + str(dt)] = [enc(to_np(v)) for v in (x.float(), e, sm) + tuple(r)]
"""


def test_torch_npu_int4_dynamic_quant_on_ascend_950():
    """npu_moe_init_routing_v2(quant_mode=13, x_dtype=torch_npu.int4) -> aclnnMoeInitRoutingV3 with an INT4
    expandedXOut (torch_npu's uint8 tensor of n * k x h / 2 bytes): the packed codes and scales of the kernel steps."""
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_950_BODY, soc="Ascend950PR")
    for key, (x, e, sm, ex, er, cnt, es) in out.items():
        smooth = sm if key.startswith("int4 True") else None
        want = init_routing_v3_ref(x, e, None, [0, 8], 8, 1, -1, 0, 0)
        order = np.argsort(e.reshape(-1), kind="stable")
        q, s = int4_quant_ref(x[order // 2], smooth)
        assert ex.dtype == np.uint8 and ex.shape == (12, 8), key
        assert np.array_equal(ex, pack_int4(q)) and F.bits_equal(es, s), key
        assert np.array_equal(er, want[1]) and np.array_equal(cnt, want[2]), key
