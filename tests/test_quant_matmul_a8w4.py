"""aclnnQuantMatmulV5, A8W4 on Atlas A2 (native_stubs/src/ops/quant/quant_matmul.toml, quant_matmul_a8w4.c): x1 INT8,
x2 INT32 holding eight INT4 each (lowest nibble first, npu_convert_weight_to_int4pack's form), x1Scale FLOAT, x2Scale
UINT64 words per channel or per 256 of K, yOffset FLOAT, out FLOAT16 / BFLOAT16. The NumPy model is written from
hicann/ops-nn quant_batch_matmul_v4_msd.h: x split as 16 * floor(x / 16) + ((x & 15) - 8) + 8, each half's K-group sums
dequantised by the fixpipe to fp16 (the word's fp19 scale) and added in fp16 in K order, then fp32 lo + 16 hi,
+ yOffset, * x1Scale, RINT. Checked bit for bit against those steps, and measured against the float64 value
x1Scale * (sum_g s_g * (x - 8) @ w_g + yOffset). Values and the op_api's A8W4 checks in order run in
test_quant_matmul's Atlas A2 subprocess (a2_checks); here the Ascend 950's refusal (361001) and npu_quant_matmul on
the Atlas A2 emulator against the direct call."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from pyaclnn import ops
from pyaclnn.tensor import from_numpy
import _fused_ops as F
from test_quant_matmul import INVALID, NULLPTR, fp19, pack_scale

A2 = F.ON_A2
F32, BF16 = np.float32, ml_dtypes.bfloat16
OUT_DT = {"float16": np.float16, "bfloat16": BF16}
TILING, RUNTIME = 561002, 361001


def pack_int4(v):
    """Signed 4-bit values [..., 8c] -> INT32 [..., c]: value 8j + i in bits 4i..4i+3 of word j."""
    u = (np.asarray(v, np.int64) & 0xF).reshape(*v.shape[:-1], -1, 8)
    return (u << (4 * np.arange(8))).sum(-1).astype(np.uint64).astype(np.uint32).view(np.int32)


def halves(x):
    """QuantBatchMatmulV4MsdPre: hi = floor(x / 16) (CAST_FLOOR), lo = (x & 0x0F) - 8."""
    x = np.asarray(x, np.int64)
    return np.floor_divide(x, 16), (x & 15) - 8


def groups_of(words, k):
    """x2Scale as [G, N] words (per-channel: one group of all K) and the group length."""
    w = np.atleast_2d(words)
    return w, k // w.shape[0]


def model(x, w, words, yoff, x1s, out):
    """The kernel's steps: per half, fp16(fp32(acc_g * fp19(s_g))) summed in fp16 in K order; then fp32 steps."""
    sw, gs = groups_of(words, x.shape[1])
    res = []
    for h in halves(x):
        s16 = None
        for g in range(sw.shape[0]):
            acc = h[:, g * gs:(g + 1) * gs] @ w[g * gs:(g + 1) * gs].astype(np.int64)
            part = (acc * fp19(sw[g]).astype(np.float64)).astype(F32).astype(np.float16)
            s16 = part if s16 is None else (s16.astype(np.float64) + part.astype(np.float64)).astype(np.float16)
        res.append(s16.astype(F32))
    hi, lo = res
    f = (lo + hi * F32(16)) + yoff.astype(F32)
    return (f * x1s.reshape(-1, 1).astype(F32)).astype(OUT_DT[out])


def exact(x, w, words, yoff, x1s):
    """float64 value, and the magnitude of its terms: (16 |hi| + |lo|) @ |w| scaled, |yOffset|, times |x1Scale|."""
    sw, gs = groups_of(words, x.shape[1])
    hi, lo = (h.astype(np.float64) for h in halves(x))
    v, mag = 0.0, 0.0
    for g in range(sw.shape[0]):
        s, k = fp19(sw[g]).astype(np.float64), slice(g * gs, (g + 1) * gs)
        wg = w[k].astype(np.float64)
        v = v + ((hi[:, k] * 16 + lo[:, k] + 8) - 8) @ wg * s
        mag = mag + (np.abs(hi[:, k]) * 16 + np.abs(lo[:, k])) @ np.abs(wg) * s
    sc = np.asarray(x1s, np.float64).reshape(-1, 1)
    return (v + yoff) * sc, (mag + np.abs(yoff)) * np.abs(sc)


# M, K, N, per-group, x2 form ("nd": [K, N/8]; "t": [N, K/8] with transposeX2; "view": a transposed view), yOffset, out
CASES = [
    (3, 256, 16, True, "nd", True, "float16"),
    (2, 768, 24, True, "nd", False, "bfloat16"),
    (4, 512, 8, True, "nd", True, "bfloat16"),
    (5, 64, 16, False, "nd", True, "float16"),
    (3, 96, 8, False, "t", True, "bfloat16"),
    (2, 48, 16, False, "view", False, "float16"),
]


def build(case, seed):
    m, k, n, pg, form, with_yoff, out = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-8, 8, (k, n)).astype(np.int64)
    g = k // 256 if pg else 1
    s = rng.uniform(1e-3, 2e-2, (g, n)).astype(F32)
    words = pack_scale(s) if pg else pack_scale(s[0])
    yoff = rng.normal(0, 4, n).astype(F32) if with_yoff else np.zeros(n, F32)
    x1s = rng.uniform(0.5, 2, (m, 1) if pg else m).astype(F32)
    return x, w, words, yoff, x1s


def call(case, x, w, words, yoff, x1s):
    m, k, n, pg, form, _, out = case
    if form == "nd":
        x2, t2 = pack_int4(w), False
    elif form == "t":
        x2, t2 = pack_int4(np.ascontiguousarray(w.T)), True
    else:
        x2, t2 = from_numpy(pack_int4(np.ascontiguousarray(w.T))).transpose(-1, -2), False
    y = np.zeros((m, n), OUT_DT[out])
    return np.asarray(ops.QuantMatmulV5(x, x2, x1s, words, None, None, None, yoff, None, False, t2, 256 if pg else 0, y))


def check_case(case, seed):
    x, w, words, yoff, x1s = build(case, seed)
    got = call(case, x, w, words, yoff, x1s)
    want = model(x, w, words, yoff, x1s, case[6])
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), case
    v, mag = exact(x, w, words, yoff, x1s)
    unit = 2.0**-11 if case[6] == "float16" else 2.0**-8   # out's half ulp at 1
    return float((np.abs(got.astype(np.float64) - v) / (mag * unit)).max())


def args(**kw):
    """A valid per-group call: M 4, K 256, N 16."""
    a = dict(x1=np.ones((4, 256), np.int8), x2=pack_int4(np.ones((256, 16), np.int64)), x1s=np.ones((4, 1), F32),
             s2=pack_scale(np.ones((1, 16), F32)), ys=None, x1o=None, x2o=None, yo=np.zeros(16, F32), bias=None,
             t1=False, t2=False, g=256, out=np.zeros((4, 16), np.float16))
    a.update(kw)
    return tuple(a.values())


PC = dict(x1s=np.ones(4, F32), s2=pack_scale(np.ones(16, F32)), g=0)   # a valid per-channel call with args()
INVALID_A2 = [   # PreMatmulCalcProcess's A8W4 checks, then CheckParamsA8W4Int's, then the MSD tiling, in order
    (args(x2o=np.zeros(16, F32)), NULLPTR, "The value of x2Offset must be empty tensor or nullptr"),
    (args(t1=True), INVALID, "Only support transposeX1 is false."),
    (args(g=0), INVALID, "A8W4 [int8/4] pergroup only support groupSize equal to 256."),
    (args(**{**PC, "g": 256}), INVALID, "A8W4 [int8/4] perchannel only support groupSize equal to 0."),
    (args(x1=np.ones((1, 4, 256), np.int8)), INVALID, "The dimension of x1 should be 2. Actual x1 dimension: 3."),
    (args(x2=np.ones((1, 256, 2), np.int32)), INVALID, "The dimension of x2 should be 2. Actual x2 dimension: 3."),
    (args(bias=np.ones(16, F32)), INVALID, "The dimension of bias should be 2. Actual bias dimension: 1."),
    (args(s2=pack_scale(np.ones((1, 1, 16), F32))), INVALID, "the dimension of x2Scale should be 1 or 2"),
    (args(x1s=np.ones(4, F32)), INVALID, "the dimension of x1Scale should equal to that of x2Scale"),
    (args(yo=np.zeros((1, 16), F32)), INVALID, "The dimension of yOffset should be 1. Actual yOffset dimension: 2."),
    (args(out=np.zeros((1, 4, 16), np.float16)), INVALID, "The dimension of y should be 2. Actual y dimension: 3."),
    (args(x1s=None), INVALID, "In A8W4_Int mode, x1Scale does not support empty tensor or nullptr."),
    (args(x1=np.ones((0, 256), np.int8), x1s=np.ones((0, 1), F32), out=np.zeros((0, 16), np.float16)), INVALID,
     "In A8W4_Int mode, x1Scale does not support empty tensor or nullptr."),   # before the shape checks
    (args(s2=np.zeros((0, 16), np.uint64)), INVALID, "x2Scale does not support empty tensor or nullptr."),
    (args(bias=np.ones((1, 16), F32)), INVALID, "In A8W4_Int mode, bias and yScale must be null."),
    (args(ys=np.ones((1, 16), np.uint64)), INVALID, "In A8W4_Int mode, bias and yScale must be null."),
    (args(yo=None), INVALID, "In A8W4_Int mode, yOffset does not support empty tensor or nullptr."),
    (args(x1s=np.ones((4, 1), np.float16)), INVALID, "Tensor x1Scale not implemented for"),
    (args(s2=np.ones((1, 16), F32)), INVALID, "Tensor x2Scale not implemented for"),
    (args(yo=np.zeros(16, np.float16)), INVALID, "Tensor yOffset not implemented for"),
    (args(out=np.zeros((4, 16), F32)), INVALID, "Tensor out not implemented for"),
    (args(x1=np.ones((0, 256), np.int8), out=np.zeros((0, 16), np.float16)), INVALID,   # x1Scale: [4, 1]
     "the m-dim must > 0, which is 0"),
    (args(x1=np.ones((4, 29696), np.int8), x2=np.ones((29696, 2), np.int32)), INVALID,
     "the k-dim must in [1, 29576], which is 29696"),
    (args(x2=np.ones((256, 0), np.int32)), INVALID, "the n-dim must be at least 1, which is 0"),
    (args(x2=np.ones((512, 2), np.int32)), INVALID, "the k dim of x1 and x2 must be same, which are 256 and 512"),
    (args(x1=np.ones((4, 128), np.int8), x2=np.ones((128, 2), np.int32)), INVALID,
     "the k dim must be align to 256, which is 128"),
    (args(**{**PC, "x1": np.ones((4, 63), np.int8), "x2": np.ones((63, 2), np.int32)}), INVALID,
     "the k dim must be align to 2, which is 63"),
    (args(x1s=np.ones((3, 1), F32)), INVALID, "The x1scale shape must be [4, 1] for A8W4[int8/4] pergroup, which are "
     "[3, 1]"),
    (args(**{**PC, "x1s": np.ones(5, F32)}), INVALID, "The x1scale shape must be [4] for A8W4[int8/4] perchannel"),
    (args(s2=pack_scale(np.ones((2, 16), F32))), INVALID, "The x2scale shape must be [1, 16], which are [2, 16]"),
    (args(**{**PC, "s2": pack_scale(np.ones(8, F32))}), INVALID, "The x2Scale shape must be [1, 16], which are [8, 0]"),
    (args(yo=np.zeros(8, F32)), INVALID, "The yOffset shape must be [16], which is [8]"),
    (args(out=np.zeros((4, 8), np.float16)), INVALID, "The out shape must be [4, 16], which are [4, 8]"),
    (args(x2=np.ones((16, 32), np.int32), t2=True), TILING, "Only transposeX2 = false is supported."),
]


def a2_checks():
    worst = max(check_case(case, seed) for case in CASES for seed in range(3))
    assert worst <= 2, worst
    for a, code, text in INVALID_A2:
        F.expect_error(ops.QuantMatmulV5, a, code, text)
    doc_example()
    # INT64 words are re-typed UINT64 (CheckDtypeA8W4Int): the same result
    case = CASES[0]
    x, w, words, yoff, x1s = build(case, 7)
    assert np.array_equal(call(case, x, w, words.view(np.int64), yoff, x1s), call(case, x, w, words, yoff, x1s))


def doc_example():
    """The V5 doc's A8W4 example: x1 ones (1, 8192), x2 INT32 ones (8192, 128) (weight 1 at n = 8j), x2Scale words of
    1.0 (32, 1024), x1Scale and yOffset the float of bits 1 (2^-149), groupSize 256, FLOAT16 out: all zeros."""
    tiny = np.ones(1, np.int32).view(F32)[0]
    x, x2 = np.ones((1, 8192), np.int8), np.ones((8192, 128), np.int32)
    words = np.full((32, 1024), np.float32(1).view(np.int32), np.uint64)
    x1s, yoff = np.full((1, 1), tiny, F32), np.full(1024, tiny, F32)
    got = np.asarray(ops.QuantMatmulV5(x, x2, x1s, words, None, None, None, yoff, None, False, False, 256,
                                       np.ones((1, 1024), np.float16)))
    w = np.zeros((8192, 1024), np.int64)
    w[:, ::8] = 1
    assert not got.any() and np.array_equal(got.view(np.uint16), model(x, w, words, yoff, x1s, "float16").view(np.uint16))


def test_950_refuses_a8w4():
    """CheckParamsA8W4Int: Atlas A2 / A3 only (361001), after the checks before it."""
    if A2:
        return
    F.expect_error(ops.QuantMatmulV5, args(), RUNTIME, "A8W4Int only Support socversion A2 or A3")
    F.expect_error(ops.QuantMatmulV5, args(t1=True), INVALID, "Only support transposeX1 is false.")


TORCH_BODY = """
import torch
g = torch.Generator().manual_seed(0)
x = torch.randint(-128, 128, (3, 512), dtype=torch.int8, generator=g)
w = torch.randint(-8, 8, (512, 16), dtype=torch.int32, generator=g)
s = torch.rand(2, 16, generator=g) * 0.02 + 1e-3
yo = torch.randn(16, generator=g)
pt = torch.rand(3, 1, generator=g) + 0.5
x2 = torch_npu.npu_convert_weight_to_int4pack(w.npu()).cpu()
q = torch_npu.npu_trans_quant_param(s.reshape(-1).npu()).reshape(2, 16)
OUT["pg"] = [enc(to_np(v)) for v in (x, w, x2, q.view(torch.int64), yo, pt, torch_npu.npu_quant_matmul(
    x.npu(), x2.npu(), q, offset=yo.npu(), pertoken_scale=pt.npu(), output_dtype=torch.bfloat16,
    group_sizes=[0, 0, 256]))]
qc = torch_npu.npu_trans_quant_param(s[0].npu())
OUT["pc"] = [enc(to_np(v)) for v in (qc.view(torch.int64), torch_npu.npu_quant_matmul(
    x.npu(), x2.npu(), qc, offset=yo.npu(), pertoken_scale=pt.reshape(-1).npu(), output_dtype=torch.float16))]
"""


def test_torch_npu_reaches_the_operator():
    """npu_quant_matmul (npu_convert_weight_to_int4pack's weight, npu_trans_quant_param words, offset as yOffset)
    on the Atlas A2 emulator: the direct call's results, and the model's."""
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY, soc="Ascend910B4")
    x, w, x2, q, yo, pt, y = out["pg"]
    assert np.array_equal(x2, pack_int4(w))   # npu_convert_weight_to_int4pack's packing is pack_int4's
    qc, yc = out["pc"]
    F.run_on_a2("test_quant_matmul_a8w4", f"T.compare_torch({enc_all(x, x2, q, yo, pt, y, qc, yc)!r})")


def enc_all(*arrays):
    return [(a.dtype.str if a.dtype != BF16 else "bf16", a.shape, a.tobytes().hex()) for a in arrays]


def compare_torch(items):
    """(in the Atlas A2 subprocess) torch_npu's outputs against the direct call and the model."""
    def dec(dt, shape, hexs):
        return np.frombuffer(bytes.fromhex(hexs), BF16 if dt == "bf16" else np.dtype(dt)).reshape(shape)
    x, x2, q, yo, pt, y, qc, yc = (dec(*i) for i in items)
    q, qc = q.view(np.uint64), qc.view(np.uint64)
    w = np.stack([(x2.view(np.uint32).astype(np.int64) >> (4 * i)) & 15 for i in range(8)], -1).reshape(512, 16)
    w = np.where(w >= 8, w - 16, w)
    assert np.array_equal(pack_int4(w), x2) and np.array_equal(q.reshape(-1), pack_scale(fp19(q).reshape(-1)))
    direct = ops.QuantMatmulV5(x, x2, pt, q, None, None, None, yo, None, False, False, 256, np.zeros((3, 16), BF16))
    assert np.array_equal(np.asarray(direct).view(np.uint16), y.view(np.uint16))
    assert np.array_equal(y.view(np.uint16), model(x, w, q, yo, pt, "bfloat16").view(np.uint16))
    direct = ops.QuantMatmulV5(x, x2, pt.reshape(-1), qc, None, None, None, yo, None, False, False, 0,
                               np.zeros((3, 16), np.float16))
    assert np.array_equal(np.asarray(direct), yc) and np.array_equal(yc, model(x, w, qc, yo, pt, "float16"))
