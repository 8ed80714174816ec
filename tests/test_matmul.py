"""aclnnMatmul, Mm, BatchMatMul and Addmm against an independent float64 NumPy reference, with the
tolerance the emulator states (mm_engine.h: fp32 operands and accumulator, k-order sums, one rounding to
out): |got - exact| <= k * 2^-24 * (|A| @ |B|) + u_out * |exact|, the classic bound of an fp32 dot
product of length k plus the final rounding (u_out = 2^-24, 2^-11, 2^-8 for fp32, fp16, bf16). The
NPU's cube unit sums in another (unpublished) order within the same bound, so this is what "class c"
means here. Also: torch.matmul shapes (1-D, broadcast batches), strided operands, cubeMathType, codes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ops
from _op_helpers import INVALID, NULLPTR, code_of, raw_null_status, strided

RNG = np.random.default_rng(2026)
U_OUT = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}
NPDT = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def rand(shape, name):
    return RNG.standard_normal(shape).astype(np.float32).astype(NPDT[name])


def check_close(got, a, b, out_name, bias=None, alpha=1.0, beta=1.0, result_name=None):
    """result_name: the dtype the cube rounds its result to before the cast to out (one more rounding)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = np.matmul(a64, b64)
    bound_terms = np.matmul(np.abs(a64), np.abs(b64))
    if bias is not None:
        exact = beta * bias.astype(np.float64) + alpha * exact
        bound_terms = np.abs(beta * bias.astype(np.float64)) + abs(alpha) * bound_terms
    k = a.shape[-1]
    u = U_OUT[out_name] + (U_OUT[result_name] if result_name not in (None, out_name) else 0.0)
    tol = (k + 2) * 2.0 ** -24 * bound_terms + u * np.abs(exact)
    err = np.abs(got.astype(np.float64) - exact)
    assert got.shape == exact.shape
    assert np.all(err <= tol), float(np.max(err - tol))


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((7,), (7, 3)), ((5, 7), (7,)), ((7,), (7,)),
                                   ((2, 5, 7), (7, 3)), ((4, 1, 5, 7), (3, 7, 2)), ((5, 7), (2, 7, 4))])
def test_matmul_shapes_every_dtype(name, sa, sb):
    a, b = rand(sa, name), rand(sb, name)
    want_shape = np.matmul(a.astype(np.float32), b.astype(np.float32)).shape
    got = ops.Matmul(a, b, np.zeros(want_shape, NPDT[name]), 0)
    check_close(got, a, b, name)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_inputs_accumulate_in_fp32_to_an_fp32_out(name):
    # k = 4096 products of 1 + 2^-9-ish terms: an fp16/bf16 accumulator would lose most of them.
    a = np.full((2, 4096), 1.0 + 2.0 ** -7, np.float32).astype(NPDT[name])
    b = np.full((4096, 1), 1.0, np.float32).astype(NPDT[name])
    got = ops.Matmul(a, b, np.zeros((2, 1), np.float32), 0)
    exact = 4096 * float(a[0, 0])
    assert np.all(np.abs(got - exact) <= 4096 * 2.0 ** -24 * exact)


def test_strided_operands_and_output():
    a, b = rand((6, 5), "float32"), rand((5, 4), "float32")
    got = ops.Mm(strided(a, transpose=True), strided(b), np.zeros((6, 4), np.float32), 0)
    check_close(got, a, b, "float32")


def test_batch_matmul_and_mm():
    a, b = rand((3, 4, 6), "bfloat16"), rand((3, 6, 2), "bfloat16")
    check_close(ops.BatchMatMul(a, b, np.zeros((3, 4, 2), NPDT["bfloat16"]), 0), a, b, "bfloat16")
    a2, b2 = rand((4, 6), "float16"), rand((6, 5), "float16")
    check_close(ops.Mm(a2, b2, np.zeros((4, 5), np.float16), 0), a2, b2, "float16")


@pytest.mark.parametrize("bias_shape", [(4, 5), (5,), (1, 5), (4, 1)])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, 2.0), (1.0, 0.0)])
def test_addmm(bias_shape, alpha, beta):
    a, b, c = rand((4, 3), "float32"), rand((3, 5), "float32"), rand(bias_shape, "float32")
    got = ops.Addmm(c, a, b, ops.Scalar(beta, "float32"), ops.Scalar(alpha, "float32"),
                    np.zeros((4, 5), np.float32), 0)
    check_close(got, a, b, "float32", bias=np.broadcast_to(c, (4, 5)), alpha=alpha, beta=beta)


def test_use_fp16_rounds_fp32_operands_to_fp16_first():
    a = np.array([[1.0 + 2.0 ** -13]], np.float32)          # not representable in fp16
    b = np.array([[1.0]], np.float32)
    assert ops.Matmul(a, b, np.zeros((1, 1), np.float32), 0)[0, 0] == np.float32(1.0 + 2.0 ** -13)
    assert ops.Matmul(a, b, np.zeros((1, 1), np.float32), 2)[0, 0] == np.float32(1.0)


# Mixed operand dtypes: the vendor's Atlas A2 / Ascend 950 rule (matmul_util.cpp, Dav2201MatMulRule) does not ask
# for equal dtypes; its promotion table computes in the wider dtype (FLOAT for any mix with FLOAT, FLOAT for
# FLOAT16 + BF16), or in FLOAT16 under USE_FP16 for every pair but BF16 + BF16 (one rule class for both SoCs: the
# suite's default SoC runs it). The reference: float64 products of the operands as the table makes them (fp16
# rounding by NumPy), within the engine's stated bound.
PAIRS = [("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"), ("bfloat16", "float32"),
         ("float16", "bfloat16"), ("bfloat16", "float16")]


def as_cube_operands(a, b, cube):
    if cube == 2 and not (a.dtype == b.dtype == NPDT["bfloat16"]):
        return a.astype(np.float32).astype(np.float16), b.astype(np.float32).astype(np.float16)
    return a, b


@pytest.mark.parametrize("cube", [0, 1, 2, 3])
@pytest.mark.parametrize("na,nb", PAIRS)
def test_mixed_operand_dtypes_are_promoted(cube, na, nb):
    # fp32 values not representable in fp16 or bf16, so a missed (or an extra) fp16 rounding shows
    a = (rand((4, 33), na).astype(np.float32) * (1 + 2.0 ** -13)).astype(NPDT[na])
    b = (rand((33, 5), nb).astype(np.float32) * (1 - 2.0 ** -13)).astype(NPDT[nb])
    ra, rb = as_cube_operands(a, b, cube)
    for out_name in ("float32", "float16", "bfloat16"):
        if cube == 0 and out_name == "float16" and na == "float32":
            continue                                  # refused: FLOAT self into a FLOAT16 out under KEEP_DTYPE
        got = ops.Matmul(a, b, np.zeros((4, 5), NPDT[out_name]), cube)
        check_close(got, ra, rb, out_name, result_name="float16" if cube == 2 else None)
    ba, bb = a.reshape(2, 2, 33), np.stack([b, b])
    got = ops.BatchMatMul(ba, bb, np.zeros((2, 2, 5), np.float32), cube)
    check_close(got, *as_cube_operands(ba, bb, cube), "float32", result_name="float16" if cube == 2 else None)


# The dtype the cube writes before the cast to out (matmul_util.cpp: the promotion table's dtype, then
# NeedEnableFp32Output's FLOAT for a FLOAT out of two FLOAT16 or two BF16 operands). Two exact fp32 products per
# case: 1 + 2^-8 + 2^-9 (bf16 rounds it up, fp16 holds it) and 1 + 2^-11 + 2^-12 (fp16 rounds it up, bf16 down), so
# a missed, an extra or a wrong intermediate rounding changes one of them; want is the product rounded (by
# ml_dtypes / NumPy) first to the result dtype, then to out's.
F16, BF, F32 = "float16", "bfloat16", "float32"
RESULT_DTYPE_CASES = [
    # a dtype, b dtype, out, cube, result dtype
    (F32, F32, F32, 2, F16),      # FLOAT operands under USE_FP16: an fp16 result even into a FLOAT out
    (F32, F16, F32, 2, F16),
    (BF, F32, F32, 2, F16),
    (F16, F16, F32, 2, F32),      # two FLOAT16 into FLOAT: NeedEnableFp32Output
    (BF, BF, F32, 2, F32),
    (BF, BF, F16, 0, BF),         # two BF16 into a FLOAT16 out: the bf16 result, then the cast
    (BF, BF, F16, 1, BF),
    (F32, F32, F32, 0, F32),
    (F16, BF, F16, 0, F32),       # a FLOAT16 + BF16 mix computes in FLOAT
    (F32, F16, F16, 1, F32),
]


@pytest.mark.parametrize("na,nb,out_name,cube,result_name", RESULT_DTYPE_CASES)
def test_the_result_is_rounded_to_the_cube_dtype_before_the_cast_to_out(na, nb, out_name, cube, result_name):
    for tail in (2.0 ** -8, 2.0 ** -11):
        a = np.array([[1.0, tail]], np.float32).astype(NPDT[na])          # every value exact in each dtype
        b = np.array([[1.0], [1.5]], np.float32).astype(NPDT[nb])
        exact = np.float32(1.0 + tail + tail / 2)
        want = float(exact.astype(NPDT[result_name]).astype(np.float32).astype(NPDT[out_name]))
        for op in (ops.Matmul, ops.Mm):
            got = op(a, b, np.zeros((1, 1), NPDT[out_name]), cube)
            assert got.dtype == NPDT[out_name] and float(got[0, 0]) == want, (op, tail, float(got[0, 0]), want)


def test_use_fp16_rounds_a_bf16_operand_mixed_with_fp32_and_keeps_bf16_pairs():
    big = np.array([[70000.0]], np.float32)          # a BF16 value beyond fp16's range: inf once rounded to fp16
    one = np.array([[1.0]], np.float32)
    bf = big.astype(ml_dtypes.bfloat16)
    assert np.isinf(ops.Matmul(bf, one, np.zeros((1, 1), np.float32), 2)[0, 0])
    assert ops.Matmul(bf, one.astype(ml_dtypes.bfloat16), np.zeros((1, 1), np.float32), 2)[0, 0] == np.float32(bf[0, 0])
    assert ops.Matmul(bf, one, np.zeros((1, 1), np.float32), 0)[0, 0] == np.float32(bf[0, 0])


def test_mixed_dtypes_in_addmm_and_baddbmm():
    a, b, c = rand((4, 3), "float16"), rand((3, 5), "float32"), rand((4, 5), "float32")
    got = ops.Addmm(c, a, b, ops.Scalar(1.0, "float32"), ops.Scalar(0.5, "float32"), np.zeros((4, 5), np.float32), 0)
    check_close(got, a, b, "float32", bias=c, alpha=0.5, beta=1.0)
    ba, bb, bc = rand((2, 4, 3), "bfloat16"), rand((2, 3, 5), "float16"), rand((2, 4, 5), "float32")
    got = ops.Baddbmm(bc, ba, bb, ops.Scalar(1.0, "float32"), ops.Scalar(1.0, "float32"),
                      np.zeros((2, 4, 5), np.float32), 0)
    check_close(got, ba, bb, "float32", bias=bc)


def test_matches_torch_cpu_within_the_stated_bound():
    torch = pytest.importorskip("torch")
    a, b = rand((3, 16, 64), "float32"), rand((64, 24), "float32")
    want = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    got = ops.Matmul(a, b, np.zeros(want.shape, np.float32), 0)
    bound = 66 * 2.0 ** -24 * np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    assert np.all(np.abs(got.astype(np.float64) - want) <= 2 * bound)   # both within the bound of exact


def test_validation_codes():
    a, b = np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32)
    out = np.zeros((2, 4), np.float32)
    assert code_of(ops.Matmul, a, np.zeros((2, 4), np.float32), out, 0) == INVALID          # k differs
    assert code_of(ops.Matmul, a.astype(np.int32), b, out, 0) == INVALID                     # dtype
    assert code_of(ops.Matmul, a, b, np.zeros((2, 4), np.float16), 0) == INVALID             # fp32 -> fp16 keep
    assert code_of(ops.Matmul, a, b, out, 7) == INVALID                                      # cubeMathType
    assert code_of(ops.Matmul, a, b, np.zeros((4, 2), np.float32), 0) == INVALID             # out shape
    assert code_of(ops.Matmul, np.zeros((2, 2, 3), np.float32), np.zeros((3, 3, 4), np.float32),
                   np.zeros((3, 2, 4), np.float32), 0) == INVALID                             # batch broadcast
    assert code_of(ops.Mm, np.zeros((1, 2, 3), np.float32), b, out, 0) == INVALID            # Mm needs 2-D
    assert code_of(ops.BatchMatMul, a, b, out, 0) == INVALID                                 # BMM needs 3-D
    for f, n in [("aclnnMatmulGetWorkspaceSize", 4), ("aclnnMmGetWorkspaceSize", 4),
                 ("aclnnBatchMatMulGetWorkspaceSize", 4), ("aclnnAddmmGetWorkspaceSize", 7)]:
        assert raw_null_status(f, n) == NULLPTR


def test_results_do_not_depend_on_thread_count(set_switch):
    a, b = rand((3, 64, 96), "bfloat16"), rand((96, 80), "bfloat16")
    runs = []
    for threads in ("1", "3", "8"):
        set_switch("PYACLNN_STUB_KERNEL_THREADS", threads)
        runs.append(ops.Matmul(a, b, np.zeros((3, 64, 80), np.float32), 0))
    for r in runs[1:]:
        assert r.tobytes() == runs[0].tobytes()
