"""MoE routing (native_stubs/src/ops/moe/routing.toml): aclnnMoeInitRouting and aclnnMoeComputeExpertTokens
(hicann/ops-transformer moe/moe_init_routing, moe/moe_compute_expert_tokens). Integer work and row copies, class a:
bit-exact against NumPy models written from the definitions (keyValueSort stable in the flattened order,
expandedRowIdx[sortedRowIdx[i]] = i, expandedX[i] = x[sortedRowIdx[i] % rows]; the docs' binary search for the
tokens per expert). MoeInitRouting on Ascend 950 in-process and Atlas A2 in one subprocess (MoeComputeExpertTokens
exists on Atlas A2 / A3 only); one torch_npu child on Atlas A2 (npu_moe_init_routing, npu_moe_compute_expert_tokens)."""
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


@pytest.mark.parametrize("args,code,text", INIT_INVALID)
def test_init_routing_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeInitRouting, args, code, text)


def check_tokens_invalid():   # Atlas A2 only
    for args, code, text in TOKENS_INVALID:
        F.expect_error(ops.MoeComputeExpertTokens, args, code, text)


@pytest.mark.parametrize("op,n", [("MoeInitRouting", 7), ("MoeComputeExpertTokens", 3)])
def test_null_arguments(op, n):
    F.null_status_is_nullptr(op, n)


# ---- Atlas A2: the same checks and MoeComputeExpertTokens in one subprocess ----------------------------------------

A2_CALLS = """
for name in ["float32", "float16", "bfloat16"]:
    for case in T.CASES:
        T.check_init_routing(case, name, 1)
T.test_init_routing_documented_example()
T.check_expert_tokens()
T.check_tokens_invalid()
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
