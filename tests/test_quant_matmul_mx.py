"""aclnnQuantMatmulV5 on the Ascend 950, the MX mode (native_stubs/src/ops/quant/quant_matmul_mx.c, mx_dequant.h):
x1, x2 FLOAT8_E4M3FN / FLOAT8_E5M2 (either mix) or both FLOAT4_E2M1, x1Scale / x2Scale FLOAT8_E8M0 per 32 elements
of K (hicann/ops-nn quant_batch_matmul_v4 op_api: MxScaleContiguousProcess, the checker's InferGroupSize,
CheckMicroScaling, CheckMxScaleDimRange, CheckMxGroupSize, CheckDimValueMicroScaling; the arch35 tiling's
MxPertokenScaleShapeCheck / MxScaleShapeCheck; the kernel qbmm_mx_basic_api_cmct.h with cmct block_mmad_mx.h).

The reference below is written from those sources: the scale of row r and K-group g is byte (r, g // 2, g % 2) of
x1Scale [M, ceil(K/64), 2] ([ceil(K/64), M, 2] with transposeX1) and of x2Scale [ceil(K/64), N, 2] ([N, ceil(K/64),
2] with transposeX2); each K-group's products are summed exactly (Fractions of the codes), scaled by
2^(e1 - 127) * 2^(e2 - 127) and rounded once to fp32; the fp32 L0C starts at the FLOAT bias (the bias table) and adds
the groups in K order; the fixpipe rounds to the out dtype (RNE). The V5 doc has no MX example."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import codecs, ops
from pyaclnn.tensor import from_numpy
from _op_helpers import INVALID
import _fused_ops as F
from test_gmm_finalize_routing_mx import FRAC, codes, scales, to_f32

A2 = F.ON_A2
F32, BF16, E8 = np.float32, ml_dtypes.bfloat16, ml_dtypes.float8_e8m0fnu
E4, E5, FP4 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float4_e2m1fn
OUT_DT = {"float16": np.float16, "bfloat16": BF16, "float32": F32}
MX_GROUP = (1 << 32) | (1 << 16) | 32   # groupSize for [1, 1, 32]
TILING = 561002


def scale_layout(rows_g, kmajor):
    """Per-row scale bytes [..., R, 2 * ceil(K/64)] -> [..., R, ceil(K/64), 2] or (kmajor) [..., ceil(K/64), R, 2]."""
    r, g2 = rows_g.shape[-2], rows_g.shape[-1]
    s = rows_g.reshape(rows_g.shape[:-2] + (r, g2 // 2, 2))
    return np.ascontiguousarray(np.swapaxes(s, -3, -2)) if kmajor else s


def model(a, b, r1, r2, bias, out):
    """a [..., M, K], b [..., K, N] codes (logical), r1 [..., M, G2], r2 [..., N, G2] E8M0 bytes per row and K-group,
    bias [N] / [B, 1, N] FLOAT or None: the kernel's steps (batch dims broadcast as matmul's)."""
    K = a.shape[-1]
    ai = (a.astype(np.float64) * 2.0 ** FRAC[a.dtype.type]).astype(np.int64)
    bi = (b.astype(np.float64) * 2.0 ** FRAC[b.dtype.type]).astype(np.int64)
    shift = -FRAC[a.dtype.type] - FRAC[b.dtype.type] - 254
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    ai, bi = np.broadcast_to(ai, batch + ai.shape[-2:]), np.broadcast_to(bi, batch + bi.shape[-2:])
    e1 = np.broadcast_to(r1.view(np.uint8).astype(int), batch + r1.shape[-2:])
    e2 = np.broadcast_to(r2.view(np.uint8).astype(int), batch + r2.shape[-2:])
    M, N = a.shape[-2], b.shape[-1]
    res = np.zeros(batch + (M, N), F32)
    for idx in np.ndindex(*batch):
        bb = int(np.ravel_multi_index(idx, batch)) if batch else 0
        for m in range(M):
            for n in range(N):
                acc = F32(0) if bias is None else F32(bias.reshape(-1, N)[bb if bias.ndim == 3 else 0, n])
                for g in range((K + 31) // 32):
                    s = int(np.dot(ai[idx + (m, slice(32 * g, 32 * g + 32))].astype(object),
                                   bi[idx + (slice(32 * g, 32 * g + 32), n)].astype(object)))
                    acc = F32(acc + to_f32(s, shift + e1[idx + (m, g)] + e2[idx + (n, g)]))
                res[idx + (m, n)] = acc
    with np.errstate(over="ignore"):   # fp16 out: large values round to inf
        return res.astype(OUT_DT[out])


def exact64(a, b, r1, r2, bias):
    """The float64 value of each output and the sum of its terms' magnitudes (2-D operands)."""
    g = np.arange(a.shape[-1]) // 32
    sa = a.astype(np.float64) * 2.0 ** (r1.view(np.uint8).astype(np.float64)[:, g] - 127)
    sb = b.astype(np.float64) * 2.0 ** (r2.view(np.uint8).astype(np.float64)[:, g].T - 127)
    bb = 0 if bias is None else bias.astype(np.float64)
    return sa @ sb + bb, np.abs(sa) @ np.abs(sb) + np.abs(bb)


def operands(seed, xdt, wdt, M, K, N, b1=(), b2=()):
    rng = np.random.default_rng(seed)
    g2 = (K + 63) // 64 * 2
    a, b = codes(rng, xdt, b1 + (M, K)), codes(rng, wdt, b2 + (K, N))
    r1, r2 = scales(rng, b1 + (M, g2)), scales(rng, b2 + (N, g2))
    bias = rng.normal(0, 8, N).astype(F32)
    return a, b, r1, r2, bias


def call(a, b, r1, r2, bias, out, t1=False, t2=False, group=MX_GROUP, views=False):
    """The direct call with the operands laid out as transposeX1 / transposeX2 ask (with `views`, as transposed views
    of that storage and the flags false: the op_api folds them back)."""
    x1 = np.ascontiguousarray(np.swapaxes(a, -1, -2)) if t1 else a
    x2 = np.ascontiguousarray(np.swapaxes(b, -1, -2)) if t2 else b
    s1, s2 = scale_layout(r1, t1), scale_layout(r2, not t2)
    if views:
        x1, x2 = (from_numpy(x1).transpose(-1, -2) if t1 else x1), (from_numpy(x2).transpose(-1, -2) if t2 else x2)
        s1, s2 = (from_numpy(s1).transpose(-3, -2) if t1 else s1), (from_numpy(s2).transpose(-3, -2) if t2 else s2)
        t1 = t2 = False
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    y = ops.QuantMatmulV5(x1, x2, s1, s2, None, None, None, None, bias, t1, t2, group, np.zeros(shape, OUT_DT[out]))
    return np.asarray(y)


# x1 dtype, x2 dtype, M, K, N, x1 batch, x2 batch, transposeX1, transposeX2, bias, out
CASES = [
    (E4, E4, 5, 64, 16, (), (), False, False, True, "bfloat16"),
    (E5, E4, 3, 96, 8, (), (), True, False, False, "float16"),      # 3 K-groups: ceil(K/64) = 2, a byte unused
    (E4, E5, 4, 80, 12, (), (), False, True, True, "float32"),      # a partial last group
    (E5, E5, 2, 160, 8, (2,), (2,), True, True, False, "float32"),
    (E4, E4, 3, 64, 8, (2, 1), (), False, False, False, "float16"),   # x1 batch dims, x2 without
    (FP4, FP4, 4, 128, 16, (), (), False, False, True, "bfloat16"),
    (FP4, FP4, 4, 72, 10, (), (), True, True, False, "float32"),   # inner axes M, K even
    (FP4, FP4, 2, 4, 6, (), (), False, True, True, "float16"),      # K = 4: one partial group
]


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0].__name__}-{c[1].__name__}-{c[3]}-{c[10]}" for c in CASES])
def test_against_kernel_steps(case):
    """Bit for bit against the steps, the flags and the same layouts as transposed views."""
    xdt, wdt, M, K, N, b1, b2, t1, t2, with_bias, out = case
    a, b, r1, r2, bias = operands(K + M, xdt, wdt, M, K, N, b1, b2)
    bias = bias if with_bias else None
    want = model(a, b, r1, r2, bias, out)
    assert F.bits_equal(call(a, b, r1, r2, bias, out, t1, t2), want), case
    if t1 or t2:
        assert F.bits_equal(call(a, b, r1, r2, bias, out, t1, t2, views=True), want), case


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_bias_3d_and_inferred_group():
    """A [batch, 1, N] bias per batch; groupSize 0 with K a multiple of 64 infers [1, 1, 32] (InferGroupSize)."""
    a, b, r1, r2, _ = operands(11, E4, E5, 3, 128, 8, (2,), (2,))
    bias = np.random.default_rng(1).normal(0, 4, (2, 1, 8)).astype(F32)
    want = model(a, b, r1, r2, bias, "float32")
    assert F.bits_equal(call(a, b, r1, r2, bias, "float32", group=0), want)


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_measured_against_float64():
    """The note's figure: fp32 out against the float64 value, in units of 2^-24 of the terms' magnitudes (one
    rounding per K-group and per addition: at most 2 * groups + 1)."""
    worst = 0.0
    for case in CASES:
        xdt, wdt, M, K, N = case[:5]
        if case[5] or case[6]:
            continue
        a, b, r1, r2, bias = operands(100 + K, xdt, wdt, M, K, N)
        got = call(a, b, r1, r2, bias, "float32").astype(np.float64)
        tot, mag = exact64(a, b, r1, r2, bias)
        worst = max(worst, float((np.abs(got - tot) / (mag * 2.0 ** -24)).max()))
    assert worst <= 4, worst
    print("measured", worst)


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_nan_scale():
    """E8M0 code 255 is NaN: it poisons the outputs of its row (x1Scale) or column (x2Scale) only."""
    a, b, r1, r2, bias = operands(5, E4, E4, 4, 64, 8)
    r1 = r1.copy()
    r1.view(np.uint8)[2, 1] = 255
    got = call(a, b, r1, r2, bias, "float32")
    assert np.isnan(got[2]).all() and not np.isnan(np.delete(got, 2, axis=0)).any()


def args(**kw):
    a, b, r1, r2, _ = operands(9, E4, E4, 4, 64, 8)
    d = dict(x1=a, x2=b, s1=scale_layout(r1, False), s2=scale_layout(r2, True), ys=None, x1o=None, x2o=None,
             yo=None, bias=None, t1=False, t2=False, g=MX_GROUP, out=np.zeros((4, 8), np.float16))
    d.update(kw)
    return tuple(d.values())


_A, _B, _R1, _R2, _ = operands(9, E4, E4, 4, 64, 8)
_S1, _S2 = scale_layout(_R1, False), scale_layout(_R2, True)
_A98, _B98 = operands(9, E4, E4, 4, 98, 8)[:2]
_F4 = codes(np.random.default_rng(2), FP4, (4, 64))
# In the op_api's order: InferGroupSize, CheckMicroScaling, CheckMxScaleDimRange, CheckMxGroupSize, K,
# CheckDimValueMicroScaling, bias / out shapes, then the tiling's scale checks (561002).
INVALID_950 = [
    (INVALID, dict(g=0, x1=_A98, x2=_B98, s1=np.ones((4, 2, 2), E8), s2=np.ones((2, 8, 2), E8)),
     "incorrect values 0, 98, 4. Reason: when groupSize in k dimension is 0, the k dimension of x1 must be divisible "
     "by the k dimension of x1Scale(pertokenScale)"),
    (INVALID, dict(s1=_S1[:, :0]), "the k dimension of x1Scale(pertokenScale) must be positive"),
    (INVALID, dict(out=np.zeros((4, 8), np.int32)), "when the dtype of out is INT32, pertokenScaleOptional/x1Scale"),
    (INVALID, dict(x1=_F4), "when x1Scale(pertokenScale) and x2Scale(scale) are FLOAT8_E8M0, the dtypes of x1 and "
                            "x2 must be FLOAT4_E2M1 or FLOAT8"),
    (INVALID, dict(x1=_A.astype(F32).astype(np.int8), x2=_B.astype(F32).astype(np.int8)), "must be FLOAT4_E2M1 or"),
    (INVALID, dict(bias=np.ones(8, BF16)), "the dtype of bias must be FLOAT"),
    (INVALID, dict(out=np.zeros((4, 8), np.int8)), "the dtype of out must be in dtype support list [FLOAT16, "
                                                   "BFLOAT16, FLOAT]"),
    (INVALID, dict(x2o=np.ones(8, F32)), "are FLOAT8_E8M0, x2Offset(offset) must be null"),
    (INVALID, dict(s1=_S1.reshape(4, 2)), "the shape dim of x1Scale(pertokenScale) must be at least 3D"),
    (INVALID, dict(s2=_S2[None]), "incorrect values 1, 0. Reason: when the quantization mode is mx, the batch "
                                  "dimension num of x2Scale must be equal to that of x2"),
    (INVALID, dict(x1=np.stack([_A, _A]), s1=np.stack([_S1] * 3), out=np.zeros((2, 4, 8), np.float16)),
     "incorrect values 0, 2, 3. Reason: when the quantization mode is mx, the batch dimension of x1Scale"),
    # groupSize 32 alone is [0, 0, 32]: M and N are inferred (1, 1) and it passes; a given groupSizeM 2 does not
    (INVALID, dict(g=(2 << 32) | (1 << 16) | 32), "incorrect values 8590000160, 2, 1, 32. Reason: when the "
     "quantization mode is mx, groupSize must be 4295032864 and Torch API group_sizes must be [1, 1, 32]"),
    (INVALID, dict(x2=_B[:32]), "the K dimension of x1 and x2 must be equal"),
    (INVALID, dict(s1=np.concatenate([_S1, _S1[:1]])), "incorrect values 4, 5, 8, 8. Reason: when the quantization "
                                                       "mode is mx, the M dimension of x1 and x1Scale"),
    (INVALID, dict(s2=np.concatenate([_S2, _S2], axis=0)), "incorrect values 64, 1, 64, 2. Reason: when the "
                                                           "quantization mode is mx, the K dimension of x1Scale"),
    (INVALID, dict(s1=np.ones((4, 1, 3), E8)), "the last dimension of x1Scale(pertokenScale) and x2Scale(scale) "
                                               "must be 2"),
    (INVALID, dict(x1=_F4, x2=codes(np.random.default_rng(3), FP4, (64, 7)), s2=_S2[:, :7],
                   out=np.zeros((4, 7), np.float16)), "incorrect values 64, 7. Reason: when the quantization mode "
                                                      "is mx and x1 and x2 are FLOAT4_E2M1, the inner axes"),
    (INVALID, dict(x1=_F4[:, :2], x2=codes(np.random.default_rng(3), FP4, (2, 8))),
     "the K dimension of x1 and x2 must be greater than 2"),
    (INVALID, dict(bias=np.ones(9, F32)), "the shape of bias must be [8]"),
    (INVALID, dict(out=np.zeros((4, 9), np.float16)), "the N dimension of out must be equal to the N dimension of x2"),
    # a dim of 1 lets the op_api take the other layout; the tiling holds x1Scale to [M, ceil(K/64), 2]
    (TILING, dict(s1=np.swapaxes(_S1, 0, 1).copy()), "Parameters x1K, pertokenScaleK of QuantBatchMatmulV3 have "
                                                     "incorrect values 64, 4. Reason: when the quantization mode is"),
    # two faults: the earlier check answers
    (INVALID, dict(bias=np.ones(8, BF16), g=1 << 33), "the dtype of bias must be FLOAT"),
    (INVALID, dict(s1=np.ones((4, 1, 3), E8), x2=_B[:32]), "the K dimension of x1 and x2 must be equal"),
    # the emulator's limits, after the vendor's checks that precede them
    (INVALID, dict(x2=codes(np.random.default_rng(3), FP4, (64, 8))), "the emulator implements the A8W8"),   # MxA8W4
]


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("code,kw,text", INVALID_950, ids=range(len(INVALID_950)))
def test_invalid_arguments(code, kw, text):
    F.expect_error(ops.QuantMatmulV5, args(**kw), code, text)


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_short_x2_scale_is_refused():
    """N = 4, K = 128: x2Scale [1, 4, 2] passes the op_api and the tiling (a dim of 1 with N) but holds 8 of the
    16 bytes the kernel reads: the emulator refuses it instead of reading past it."""
    a, b, r1, r2, _ = operands(4, E4, E4, 4, 128, 4)
    F.expect_error(ops.QuantMatmulV5, args(x1=a, x2=b, s1=scale_layout(r1, False), s2=np.ones((1, 4, 2), E8),
                                           out=np.zeros((4, 4), np.float16)), INVALID, "holds fewer than the 4 x 4")


TORCH_BODY = """
torch.manual_seed(5)
def fp8(shape, dt):
    c = torch.randint(0, 256, shape, dtype=torch.int32).to(torch.uint8)
    c[(c & 0x7F) >= 0x7C] = 0   # finite codes of either format
    return c.view(dt)
e8, f4 = torch_npu.float8_e8m0fnu, torch_npu.float4_e2m1fn_x2
M, K, N = 6, 96, 16
x1, x2t = fp8((M, K), torch.float8_e4m3fn), fp8((N, K), torch.float8_e5m2)
s1 = torch.randint(118, 136, (M, 2, 2), dtype=torch.int32).to(torch.uint8)
s2t = torch.randint(118, 136, (N, 2, 2), dtype=torch.int32).to(torch.uint8)
bias = torch.rand(N) * 4 - 2
y = torch_npu.npu_quant_matmul(x1.npu(), x2t.npu().t(), s2t.npu().transpose(0, 1), pertoken_scale=s1.npu(),
    bias=bias.npu(), output_dtype=torch.bfloat16, scale_dtype=e8, pertoken_scale_dtype=e8, group_sizes=[1, 1, 32])
OUT["fp8"] = [enc(to_np(v)) for v in (x1.view(torch.uint8), x2t.view(torch.uint8), s1, s2t, bias, y)]
# FP4: int8 tensors of E2M1 pairs (the low nibble first), named by x1_dtype / x2_dtype
a4 = torch.randint(-128, 128, (M, 32), dtype=torch.int8)
b4 = torch.randint(-128, 128, (64, N // 2), dtype=torch.int8)
s1b = torch.randint(118, 136, (M, 1, 2), dtype=torch.int32).to(torch.uint8)
s2b = torch.randint(118, 136, (1, N, 2), dtype=torch.int32).to(torch.uint8)
y4 = torch_npu.npu_quant_matmul(a4.npu(), b4.npu(), s2b.npu(), pertoken_scale=s1b.npu(), output_dtype=torch.float32,
    x1_dtype=f4, x2_dtype=f4, scale_dtype=e8, pertoken_scale_dtype=e8, group_sizes=[1, 1, 32])
OUT["fp4"] = [enc(to_np(v)) for v in (a4, b4, s1b, s2b, y4)]
"""


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_torch_npu_matches_direct_call():
    """npu_quant_matmul with float8 tensors and uint8 scales named float8_e8m0fnu (x2 and its scale as transposed
    views, which the op_api folds into transposeX2), and int8 tensors of E2M1 pairs (x1_dtype / x2_dtype
    float4_e2m1fn_x2): the bytes of the direct call and of the model."""
    res = F.torch_npu_arrays(TORCH_BODY)
    x1, x2t, s1, s2t, bias, y = res["fp8"]
    x1, x2t = x1.view(E4), x2t.view(E5)
    want = ops.QuantMatmulV5(x1, x2t, s1.view(E8), s2t.view(E8), None, None, None, None, bias, False, True, MX_GROUP,
                             np.zeros((6, 16), BF16))
    assert F.bits_equal(y, np.asarray(want))
    assert F.bits_equal(y, model(x1, np.ascontiguousarray(x2t.T), s1.reshape(6, 4).view(E8), s2t.reshape(16, 4)
                                 .view(E8), bias, "bfloat16"))
    a4, b4, s1b, s2b, y4 = res["fp4"]
    e2m1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], F32)
    fp4 = lambda v: e2m1[codecs.unpack_nibbles(v.view(np.uint8)).reshape(v.shape[:-1] + (-1,))].astype(FP4)
    a4, b4 = fp4(a4), fp4(b4)
    want4 = ops.QuantMatmulV5(a4, b4, s1b.view(E8), s2b.view(E8), None, None, None, None, None, False, False,
                              MX_GROUP, np.zeros((6, 16), F32))
    assert F.bits_equal(y4, np.asarray(want4))
    assert F.bits_equal(y4, model(a4, b4, s1b.reshape(6, 2).view(E8), s2b.reshape(16, 2).view(E8), None, "float32"))


def a2_checks():
    """Run by test_quant_matmul's Atlas A2 subprocess: MX stays refused there (DAV_2201 has no MX path; the
    emulator names its limit)."""
    F.expect_error(ops.QuantMatmulV5, args(), INVALID, "the emulator implements the A8W8")
