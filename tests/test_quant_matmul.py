"""aclnnQuantMatmulV5, A8W8 modes (native_stubs/src/ops/quant/quant_matmul.toml; hicann/ops-nn
matmul/quant_batch_matmul_v4 op_api and the QuantMatmulChecker of quant_batch_matmul_v3). Data-driven rows checked
against a float64 NumPy definition written from the vendor's docs and kernels: acc = x1 @ x2 in int32 (exact: INT32
out compared bit for bit), then the dequant -- UINT64 scale words (TransQuantParamV2: the fp19 scale in bits 13..31,
a 9-bit offset) or FLOAT / BFLOAT16 scales, per-token x1Scale, int32 or float bias -- within 1 ulp of the output
(class c: the fixpipe's rounding is not published; the vector epilogue's fp32 steps measured at <= 1 ulp) and 1
code for INT8. The op_api's checks for these modes in order, Atlas A2 in one subprocess, one torch_npu child
(npu_quant_matmul with npu_trans_quant_param's scale, per-token, bias, transposed x2)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ops
import _fused_ops as F

A2 = F.ON_A2
F32 = np.float32
BF16 = ml_dtypes.bfloat16
INVALID, NULLPTR = 161002, 161001
OUT_NAME = {np.float16: "float16", BF16: "bfloat16"}


def fp19(words):
    return (np.asarray(words).view(np.uint64) & np.uint64(0xFFFFE000)).astype(np.uint32).view(F32)


def offset9(words):
    o = ((np.asarray(words).view(np.uint64) >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
    return np.where(o >= 256, o - 512, o)


def pack_scale(scale, offset=None):
    """The TransQuantParamV2 words (scale bits & 0xFFFFE000, bit 46, RINT offset at bit 37)."""
    w = (np.asarray(scale, F32).view(np.uint32).astype(np.uint64) & np.uint64(0xFFFFE000)) | np.uint64(1 << 46)
    if offset is not None:
        o = np.clip(np.rint(np.asarray(offset, np.float64)), -256, 255).astype(np.int64)
        w = w | ((o.astype(np.uint64) & np.uint64(0x1FF)) << np.uint64(37))
    return w


def acc_ref(x1, x2, t1, t2, bias_i32=None):
    a = np.swapaxes(x1, -1, -2) if t1 else x1
    b = np.swapaxes(x2, -1, -2) if t2 else x2
    acc = np.matmul(a.astype(np.int64), b.astype(np.int64))
    if bias_i32 is not None:
        acc = acc + (bias_i32.reshape(-1, 1, bias_i32.shape[-1]) if bias_i32.ndim == 3 else bias_i32)
    return ((acc + 2**31) % 2**32 - 2**31).astype(np.int64)


def dequant_ref(acc, scale, out, x1scale=None, bias_f=None, offset=None):
    """float64 value of the vendor's formula (before the output cast)."""
    if np.asarray(scale).dtype in (np.uint64, np.int64):
        s = fp19(scale).astype(np.float64)
        v = acc.astype(np.float64) * s
        if out == "int8":
            o = offset.astype(np.float64) if offset is not None else offset9(scale)
            return v + o
        return v
    v = acc.astype(np.float64) * np.asarray(scale).astype(np.float64)
    if x1scale is not None:
        v = v * np.asarray(x1scale, np.float64)[:, None]
    if bias_f is not None:
        v = v + np.asarray(bias_f).astype(np.float64)
    return v


def rng_int8(shape, seed):
    return np.random.default_rng(seed).integers(-127, 128, shape).astype(np.int8)


# x1 shape, x2 shape, t1, t2, scale kind (u64 / f32 / bf16), scale len ("n" / 1), pertoken, bias dtype, out, offset
CASES = [
    ((5, 32), (32, 8), False, False, "u64", "n", False, None, "float16", False),
    ((3, 64), (16, 64), False, True, "u64", 1, False, np.int32, "float16", False),
    ((2, 4, 32), (32, 16), False, False, "u64", "n", False, None, "int8", True),
    ((16, 4), (16, 8), True, False, "u64", "n", False, np.int32, "int8", False),      # x1 transposed; offset from the words
    ((6, 32), (32, 8), False, False, "f32", "n", True, None, "float16", False),       # per-token
    ((6, 32), (8, 32), False, True, "f32", "n", True, F32, "bfloat16", False),
    ((2, 3, 16), (2, 16, 8), False, False, "bf16", "n", False, BF16, "bfloat16", False),
    ((3, 32), (32, 8), False, False, "f32", 1, False, np.int32, "int32", False),
]


def build(case, seed=0):
    s1, s2shape, t1, t2, kind, slen, pt, bdt, out, with_off = case
    x1, x2 = rng_int8(s1, seed), rng_int8(s2shape, seed + 1)
    acc = acc_ref(x1, x2, t1, t2)
    n, m = acc.shape[-1], acc.shape[-2]
    rng = np.random.default_rng(seed + 2)
    sv = rng.uniform(1e-3, 1e-1, n if slen == "n" else 1).astype(F32)
    offset = rng.uniform(-20, 20, n).astype(F32).round() if with_off else None
    scale = pack_scale(sv, None if out != "int8" or with_off else rng.integers(-9, 9, sv.shape)) if kind == "u64" else \
        sv.astype(BF16) if kind == "bf16" else sv
    x1s = rng.uniform(0.5, 2, m).astype(F32) if pt else None
    bias = None
    if bdt is not None:
        shape = (acc.shape[0], 1, n) if len(acc.shape) == 3 and bdt is BF16 else (n,)
        bias = rng.integers(-500, 500, shape).astype(np.int32) if bdt is np.int32 else rng.uniform(-2, 2, shape).astype(bdt)
    return x1, x2, x1s, scale, offset, bias


def run(case, x1, x2, x1s, scale, offset, bias):
    out_dt = {"float16": np.float16, "bfloat16": BF16, "int8": np.int8, "int32": np.int32}[case[8]]
    acc_shape = acc_ref(x1, x2, case[2], case[3]).shape
    out = np.zeros(acc_shape, out_dt)
    return np.asarray(ops.QuantMatmulV5(x1, x2, x1s, scale, None, None, offset, None, bias, case[2], case[3], 0, out))


def check_case(case, seed=0):
    x1, x2, x1s, scale, offset, bias = build(case, seed)
    got = run(case, x1, x2, x1s, scale, offset, bias)
    out = case[8]
    bias_i = bias if bias is not None and bias.dtype == np.int32 else None
    acc = acc_ref(x1, x2, case[2], case[3], bias_i)
    if out == "int32":
        assert np.array_equal(got, acc.astype(np.int32)), case
        return 0
    v = dequant_ref(acc, scale, out, x1s, bias if bias_i is None and bias is not None else None, offset)
    if out == "int8":
        want = np.clip(np.rint(v), -128, 127)
        d = int(np.abs(got.astype(np.int64) - want).max())
        assert d <= 1, (case, d)
        return d
    d = F.ulps(got, v, out)
    assert d <= 1, (case, d)
    return d


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_against_float64():
    for case in CASES:
        check_case(case)


def args(**kw):
    a = dict(x1=np.ones((4, 16), np.int8), x2=np.ones((16, 8), np.int8), x1s=None, s2=pack_scale(np.ones(8, F32)),
             ys=None, x1o=None, x2o=None, yo=None, bias=None, t1=False, t2=False, g=0, out=np.zeros((4, 8), np.float16))
    a.update(kw)
    return tuple(a.values())


API = "aclnnQuantMatmulV5GetWorkspaceSize"
INVALID_COMMON = [   # the same on both SoCs, in the op_api's order
    (args(ys=np.ones(2, np.uint64)), NULLPTR, "The value of yScale must be empty tensor or nullptr"),
    (args(x1o=np.ones(2, F32)), NULLPTR, "The value of x1Offset must be empty tensor or nullptr"),
    (args(x1=np.ones((4, 16), np.float16)), INVALID, "the emulator implements the A8W8"),
    (args(x1=np.ones((1, 1, 1, 1, 1, 1, 4, 16), np.int8), out=np.zeros((1, 1, 1, 1, 1, 1, 4, 8), np.float16)), INVALID,
     "The shape dim of x1 can not be larger than 6D"),
    (args(s2=np.ones(8, F32)), INVALID, "the dtype of x2Scale(scale) must be in dtype support list [UINT64, INT64]"),
    (args(bias=np.ones(8, F32)), INVALID, "the dtype of bias must be INT32"),
    (args(x2o=np.ones(8, F32)), INVALID, "x2Offset(offset) must be null"),
    (args(s2=pack_scale(np.ones((1, 8), F32))), INVALID, "the shape dim of x2Scale(scale) must be 1D"),
    (args(x2=np.ones((12, 8), np.int8)), INVALID, "the K dimension of x1 and x2 must be equal"),
    (args(s2=pack_scale(np.ones(5, F32))), INVALID, "the last dimension of x2Scale(scale) must be 8 or 1"),
    (args(bias=np.ones(5, np.int32)), INVALID, "the shape of bias must be [8]"),
    (args(x1=np.ones((2, 4, 16), np.int8), x2=np.ones((3, 16, 8), np.int8), out=np.zeros((3, 4, 8), np.float16)),
     INVALID, "the batch dimensions of x1 and x2 must be broadcastable"),
    (args(out=np.zeros((4, 9), np.float16)), INVALID, "the N dimension of out must be equal to the N dimension of x2"),
    (args(out=np.zeros((2, 4, 8), np.float16)), INVALID, "the shape dim of out must be 2D"),
    (args(x1=np.ones((4, 0), np.int8), x2=np.ones((0, 8), np.int8)), INVALID, "x1 and x2 can not be empty"),
]
INVALID_A2 = [
    (args(out=np.zeros((4, 8), np.float32)), INVALID, "the dtype of out must be INT32, BFLOAT16, INT8 or FLOAT16"),
    (args(x1s=np.ones(4, F32), s2=np.ones(8, F32), out=np.zeros((4, 8), np.int8)), INVALID,
     "the dtype of out must be BFLOAT16 or FLOAT16"),
]
INVALID_950 = [
    (args(out=np.zeros((4, 8), np.float32)), INVALID, "the dtype of out must be in dtype support list"),
    (args(x1s=np.ones(4, F32), s2=np.ones(8, F32), out=np.zeros((4, 8), np.int32)), INVALID,
     "when the dtype of out is INT32, pertokenScaleOptional/x1Scale(pertokenScale) must be null"),
    (args(g=32), INVALID, "groupSize must be 0"),
    (args(x1s=np.ones(3, F32), s2=np.ones(8, F32)), INVALID, "the shape of x1Scale(pertokenScale) must be [4]"),
]


@pytest.mark.parametrize("a,code,text", INVALID_COMMON + ([] if A2 else INVALID_950))
def test_invalid_arguments(a, code, text):
    F.expect_error(ops.QuantMatmulV5, a, code, text)


def test_null_and_950_empty_m():
    F.expect_error(ops.QuantMatmulV5, args(x2=None), NULLPTR, "x2 is NULL")
    if not A2:   # Ascend 950: an empty M succeeds before any check of the scales
        got = ops.QuantMatmulV5(*args(x1=np.ones((0, 16), np.int8), s2=np.ones(3, F32), out=np.zeros((0, 8), np.float16)))
        assert np.asarray(got).shape == (0, 8)


A2_CALLS = """
for case in T.CASES:
    T.check_case(case, 3)
for a, code, text in T.INVALID_COMMON[:6] + T.INVALID_A2:
    T.test_invalid_arguments(a, code, text)
T.test_null_and_950_empty_m()
import test_trans_quant_param, test_dequant_bias, test_quant_matmul_fp8, test_quant_matmul_mx, test_quant_matmul_a4w4
import test_quant_matmul_a8w4
test_trans_quant_param.a2_checks()
test_quant_matmul_a4w4.a2_checks()
test_quant_matmul_a8w4.a2_checks()
test_dequant_bias.a2_checks()
test_quant_matmul_fp8.a2_checks()
test_quant_matmul_mx.a2_checks()
"""


def test_atlas_a2():
    """Also TransQuantParamV2 / V3, DequantBias, the FLOAT8 and MX refusals, A4W4 and A8W4 on Atlas A2 (their
    files' a2_checks): one subprocess for seven."""
    if A2:
        return
    F.run_on_a2("test_quant_matmul", A2_CALLS)


TORCH_BODY = """
torch.manual_seed(0)
x1 = torch.randint(-127, 128, (6, 64), dtype=torch.int8)
x2 = torch.randint(-127, 128, (64, 16), dtype=torch.int8)
s = torch.rand(16) * 0.01 + 1e-3
pt = torch.rand(6) + 0.5
b = torch.randint(-100, 100, (16,), dtype=torch.int32)
q = torch_npu.npu_trans_quant_param(s.npu())
OUT["fp16"] = [enc(to_np(v)) for v in (x1, x2, s, b, q.view(torch.int64),
               torch_npu.npu_quant_matmul(x1.npu(), x2.npu(), s.npu(), bias=b.npu(), output_dtype=torch.float16))]
OUT["pertoken"] = [enc(to_np(v)) for v in (pt, torch_npu.npu_quant_matmul(x1.npu(), x2.t().contiguous().npu().t(),
               s.npu(), pertoken_scale=pt.npu(), output_dtype=torch.bfloat16))]
OUT["int32"] = [enc(to_np(torch_npu.npu_quant_matmul(x1.npu(), x2.npu(), s.npu(), output_dtype=torch.int32)))]
"""


def test_torch_npu_reaches_the_operator():
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY)
    x1, x2, s, b, q, y = out["fp16"]
    assert np.array_equal(q.view(np.uint64), pack_scale(s))
    acc = acc_ref(x1, x2, False, False, b)
    assert F.ulps(y, dequant_ref(acc, q.view(np.uint64), "float16"), "float16") <= 1
    pt, y = out["pertoken"]
    acc = acc_ref(x1, x2, False, False)
    assert F.ulps(y, dequant_ref(acc, s, "bfloat16", pt), "bfloat16") <= 1
    (y,) = out["int32"]
    assert np.array_equal(y, acc.astype(np.int32))
