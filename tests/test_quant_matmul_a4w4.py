"""aclnnQuantMatmulV5, A4W4 on Atlas A2 (native_stubs/src/ops/quant/quant_matmul.toml): x1 and x2 INT32 holding eight
INT4 each, lowest nibble first, which the op_api re-describes as INT4 (quant_matmul_common_check.cpp
ConvertTensorToInt4: the last dim times eight; a transposed view first folded into its flag). The NumPy model packs
signed 4-bit values itself, multiplies in int64 and applies the A8W8 dequant of test_quant_matmul (UINT64 words or
per-token FLOAT scales), within 1 ulp of the output (class c, as A8W8). The checker's A4W4 rules in its order
(CheckDtypeValidOnOnlyL0c2outForA4W4, CheckShapeInt4), and Ascend 950's refusal. Runs in test_quant_matmul's Atlas A2
subprocess (a2_checks) and in the Atlas A2 torch_npu child (npu_quantize to quint4x2, then npu_quant_matmul)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from pyaclnn import ops
from pyaclnn.tensor import from_numpy
import _fused_ops as F
from test_quant_matmul import INVALID, acc_ref, dequant_ref, pack_scale

A2 = F.ON_A2
F32, BF16 = np.float32, ml_dtypes.bfloat16
OUT_DT = {"float16": np.float16, "bfloat16": BF16}


def pack_int4(v):
    """Signed 4-bit values [..., 8c] -> INT32 [..., c]: value 8j + i in bits 4i..4i+3 of word j."""
    u = (np.asarray(v, np.int64) & 0xF).reshape(*v.shape[:-1], -1, 8)
    return (u << (4 * np.arange(8))).sum(-1).astype(np.uint64).astype(np.uint32).view(np.int32)


def rng_int4(shape, seed):
    return np.random.default_rng(seed).integers(-8, 8, shape).astype(np.int64)


# M, K, N, x2 given transposed ((N, K) storage, a transposed view), scale kind, pertoken, int32 bias, out
CASES = [
    (5, 64, 16, False, "u64-1", False, False, "float16"),
    (3, 32, 24, False, "u64-n", False, True, "bfloat16"),
    (4, 16, 8, True, "u64-n", False, False, "float16"),
    (6, 48, 16, False, "f32-n", True, False, "bfloat16"),
    (6, 48, 16, True, "f32-n", True, True, "float16"),
]


def build(case, seed=0):
    m, k, n, view, kind, pt, with_bias, out = case
    a, b = rng_int4((m, k), seed), rng_int4((k, n), seed + 1)
    rng = np.random.default_rng(seed + 2)
    sv = rng.uniform(1e-3, 1e-1, 1 if kind == "u64-1" else n).astype(F32)
    scale = pack_scale(sv) if kind.startswith("u64") else sv
    x1s = rng.uniform(0.5, 2, m).astype(F32) if pt else None
    bias = rng.integers(-500, 500, n).astype(np.int32) if with_bias else None
    return a, b, scale, x1s, bias


def call(case, a, b, scale, x1s, bias):
    x1 = pack_int4(a)
    x2 = from_numpy(pack_int4(np.ascontiguousarray(b.T))).transpose(-1, -2) if case[3] else pack_int4(b)
    out = np.zeros((case[0], case[2]), OUT_DT[case[7]])
    return np.asarray(ops.QuantMatmulV5(x1, x2, x1s, scale, None, None, None, None, bias, False, False, 0, out))


def check_case(case, seed=0):
    a, b, scale, x1s, bias = build(case, seed)
    got = call(case, a, b, scale, x1s, bias)
    acc = acc_ref(a, b, False, False, bias)
    d = F.ulps(got, dequant_ref(acc, scale, case[7], x1s), case[7])
    assert d <= 1, (case, d)
    return d


def args(**kw):
    a = dict(x1=pack_int4(np.ones((4, 16))), x2=pack_int4(np.ones((16, 8))), x1s=None, s2=pack_scale(np.ones(8, F32)),
             ys=None, x1o=None, x2o=None, yo=None, bias=None, t1=False, t2=False, g=0, out=np.zeros((4, 8), np.float16))
    a.update(kw)
    return tuple(a.values())


NULL_X1S = "in A4W4 scenario and x1Scale(pertokenScale) is null, "
INVALID_A2 = [   # the checker's A4W4 rules in its order (the first two rows break two rules each)
    (args(s2=np.ones(8, F32), out=np.zeros((4, 8), np.int8)), NULL_X1S + "the dtype of x2Scale(scale) must be UINT64 or "
     "INT64"),
    (args(bias=np.ones(8, F32), out=np.zeros((4, 8), np.int8)), NULL_X1S + "the dtype of bias must be INT32"),
    (args(out=np.zeros((4, 8), np.int8)), "in A4W4 scenario, the dtype of out must be FLOAT16 or BFLOAT16"),
    (args(x1=np.zeros((4, 0), np.int32), x2=np.zeros((0, 1), np.int32)),
     "in A4W4 scenario, the K dimension of x1 must be positive and even"),
    (args(x1=pack_int4(np.ones((16, 16))), t1=True, out=np.zeros((16, 8), np.float16)),
     "in A4W4 scenario, transposeX1 must be false"),
    (args(x2=np.ones((2, 16, 1), np.int32), out=np.zeros((2, 4, 8), np.float16)),
     "in A4W4 scenario, the shape dim of x2 must be 2D"),
    (args(bias=np.ones((1, 1, 8), np.int32)), "in A4W4 scenario, the shape dim of bias must be 1D"),
    (args(x2=pack_int4(np.ones((32, 8)))), "the K dimension of x1 and x2 must be equal"),
]


def a2_checks():
    for case in CASES:
        check_case(case, 5)
    for a, text in INVALID_A2:
        F.expect_error(ops.QuantMatmulV5, a, INVALID, text)


def test_950_refuses_a4w4():
    if A2:
        return
    F.expect_error(ops.QuantMatmulV5, args(), INVALID, "x1 INT32, x2 INT32: the emulator implements the A8W8")


TORCH_BODY = """
torch.manual_seed(0)
a = torch.randint(-8, 8, (6, 32)).float()
b = torch.randint(-8, 8, (16, 32)).float()
one = torch.ones(1).npu()
x1 = torch_npu.npu_quantize(a.npu(), one, None, torch.quint4x2, -1, False)
x2 = torch_npu.npu_quantize(b.npu(), one, None, torch.quint4x2, -1, False)
s = torch.rand(1) * 0.01 + 1e-3
pt = torch.rand(6) + 0.5
OUT["a4w4"] = [enc(to_np(v)) for v in (a, b, x1.cpu(), x2.cpu(), s, pt,
               torch_npu.npu_quant_matmul(x1, x2.t(), torch_npu.npu_trans_quant_param(s.npu()),
                                          output_dtype=torch.float16),
               torch_npu.npu_quant_matmul(x1, x2.t(), s.npu(), pertoken_scale=pt.npu(), output_dtype=torch.bfloat16))]
"""


def test_torch_npu_reaches_the_operator():
    """npu_quant_matmul with npu_quantize's quint4x2 packing and a transposed x2 view on the Atlas A2 emulator: the
    packing is pack_int4's, the results the model's (per-tensor UINT64 words, per-token FLOAT scales)."""
    if A2:
        return
    a, b, x1, x2, s, pt, y16, ybf = F.torch_npu_arrays(TORCH_BODY, soc="Ascend910B4")["a4w4"]
    a, b = a.astype(np.int64), b.astype(np.int64)
    assert np.array_equal(x1, pack_int4(a)) and np.array_equal(x2, pack_int4(b))
    acc = acc_ref(a, b.T, False, False)
    assert F.ulps(y16, dequant_ref(acc, pack_scale(s), "float16"), "float16") <= 1
    assert F.ulps(ybf, dequant_ref(acc, s, "bfloat16", pt), "bfloat16") <= 1
