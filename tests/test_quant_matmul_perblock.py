"""aclnnQuantMatmulV5 on the Ascend 950, the G-B / B-B (per-block) modes with FLOAT8 / HIFLOAT8 x1, x2
(native_stubs/src/ops/quant/quant_matmul_perblock.c; hicann/ops-nn quant_batch_matmul_v3 op_api
quant_matmul_checker.cpp: IsPerblock, InferGroupSize, CheckDoubleScaleAndFp8Hif8PertokenPerblock,
CheckNormalScaleDimRange, CheckPerblockGroupSize, CheckDimValuePerblock / CheckGroupSizeShape; the kernel
qbmm_mix_pertile_cmct.h with cmct epilogue/block_epilogue_pertile.h).

The reference, from the epilogue's AivPerTensor: per K-block of 128 the cube's sum of products (the data below keep
it exact in fp32, so the cube's order does not matter), scale = fp32(x1Scale[m / gsM, kb] * x2Scale[kb, n / 128]),
term = fp32(sum * scale), acc = term, then fp32(acc + term) block by block; the out cast rounds to nearest even.
x1Scale is [..., ceil(M/gsM), ceil(K/128)] ([..., ceil(K/128), ceil(M/gsM)] with transposeX1), x2Scale
[..., ceil(K/128), ceil(N/128)] ([..., ceil(N/128), ceil(K/128)] with transposeX2). The V5 doc has no G-B / B-B
example."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ops
from pyaclnn.tensor import from_numpy
from _op_helpers import INVALID
import _fused_ops as F
from test_quant_matmul_fp8 import codes, device, values

A2 = F.ON_A2
F32, BF16 = np.float32, ml_dtypes.bfloat16
E4, E5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
OUT_DT = {"float16": np.float16, "bfloat16": BF16, "float32": F32}
PB = 128


def group(gsm):
    return (gsm << 32) | (PB << 16) | PB


def cdiv(a, b):
    return -(-a // b)


def model(a, b, s1, s2, gsm, out):
    """a [..., M, K], b [..., K, N] float64 values (logical), s1 [..., ceil(M/gsm), ceil(K/128)], s2 [...,
    ceil(K/128), ceil(N/128)] FLOAT: the epilogue's fp32 steps."""
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    mi, nj = np.arange(M) // gsm, np.arange(N) // PB
    acc = None
    for kb in range(cdiv(K, PB)):
        blk = slice(kb * PB, kb * PB + PB)
        part = np.matmul(a[..., :, blk], b[..., blk, :]).astype(F32)          # exact: see the module's note
        sc = (s1[..., mi, kb][..., :, None] * s2[..., kb, nj][..., None, :]).astype(F32)
        term = (part * sc).astype(F32)
        acc = term if acc is None else (acc + term).astype(F32)
    return acc.astype(OUT_DT[out])


def operands(seed, f1, f2, M, K, N, gsm, b1=(), b2=()):
    rng = np.random.default_rng(seed)
    c1, c2 = codes(f1, b1 + (M, K), rng), codes(f2, b2 + (K, N), rng)
    s1 = rng.uniform(0.01, 2, b1 + (cdiv(M, gsm), cdiv(K, PB))).astype(F32)
    s2 = rng.uniform(0.01, 2, b2 + (cdiv(K, PB), cdiv(N, PB))).astype(F32)
    return c1, c2, s1, s2


def call(f1, f2, c1, c2, s1, s2, gsm, out, t1=False, t2=False, views=False, g=None):
    """With the flags: x1 / x2 and their scales stored transposed; with `views`, those as transposed views (the
    op_api folds them into the flags and reads the scales' storage)."""
    sw = lambda v: np.ascontiguousarray(np.swapaxes(v, -1, -2))
    x1, a1 = (sw(c1), sw(s1)) if t1 else (c1, s1)
    x2, a2 = (sw(c2), sw(s2)) if t2 else (c2, s2)
    x1, x2 = device(f1, x1), device(f2, x2)
    if views:
        tr = lambda v, t: (v if not isinstance(v, np.ndarray) else from_numpy(v)).transpose(-1, -2) if t else v
        x1, a1, x2, a2 = tr(x1, t1), tr(a1, t1), tr(x2, t2), tr(a2, t2)
        t1 = t2 = False
    shape = np.broadcast_shapes(c1.shape[:-2], c2.shape[:-2]) + (c1.shape[-2], c2.shape[-1])
    y = ops.QuantMatmulV5(x1, x2, a1, a2, None, None, None, None, None, t1, t2, group(gsm) if g is None else g,
                          np.zeros(shape, OUT_DT[out]))
    return np.asarray(y)


# x1 fmt, x2 fmt, M, K, N, gsM, x1 batch, x2 batch, transposeX1, transposeX2, out
CASES = [
    (E4, E4, 5, 300, 200, 1, (), (), False, False, "bfloat16"),      # G-B, partial K and N blocks
    (E5, E4, 130, 256, 72, 128, (), (), True, False, "float16"),     # B-B, two M blocks
    ("hif8", "hif8", 3, 160, 136, 1, (), (), False, True, "float32"),
    (E4, E5, 4, 200, 40, 128, (2,), (2,), True, True, "float32"),
    ("hif8", "hif8", 6, 128, 16, 1, (2,), (), False, False, "bfloat16"),
]


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("case", CASES, ids=[f"{i}-gsm{c[5]}-{c[10]}" for i, c in enumerate(CASES)])
def test_against_epilogue_steps(case):
    """Bit for bit against the steps (the flags, and the same storage as transposed views)."""
    f1, f2, M, K, N, gsm, b1, b2, t1, t2, out = case
    c1, c2, s1, s2 = operands(M + K, f1, f2, M, K, N, gsm, b1, b2)
    want = model(values(f1, c1), values(f2, c2), s1, s2, gsm, out)
    assert F.bits_equal(call(f1, f2, c1, c2, s1, s2, gsm, out, t1, t2), want), case
    if t1 or t2:
        assert F.bits_equal(call(f1, f2, c1, c2, s1, s2, gsm, out, t1, t2, views=True), want), case


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_inferred_group_size():
    """groupSize 0: InferGroupSize takes M / N / K over the scale dims (here 1, 128, 128: G-B)."""
    c1, c2, s1, s2 = operands(3, E4, E4, 4, 256, 128, 1)
    want = model(values(E4, c1), values(E4, c2), s1, s2, 1, "float32")
    assert F.bits_equal(call(E4, E4, c1, c2, s1, s2, 1, "float32", g=0), want)


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_measured_against_float64():
    """The note's figure: codes with every bit of their format (block sums no longer exact), fp32 out, against the
    float64 value, in units of 2^-24 of the scaled terms' magnitudes (measured 0.97 over 90 calls; asserted 2)."""
    worst = 0.0
    for seed, (f1, f2, gsm) in enumerate([(E4, E4, 1), (E5, E4, 128), ("hif8", "hif8", 1), (E4, E5, 128)]):
        rng = np.random.default_rng(seed)
        M, K, N = 5, 300, 140
        c1, c2 = codes(f1, (M, K), rng, exact=False), codes(f2, (K, N), rng, exact=False)
        s1 = rng.uniform(0.01, 2, (cdiv(M, gsm), cdiv(K, PB))).astype(F32)
        s2 = rng.uniform(0.01, 2, (cdiv(K, PB), cdiv(N, PB))).astype(F32)
        got = call(f1, f2, c1, c2, s1, s2, gsm, "float32").astype(np.float64)
        kb = np.arange(K) // PB
        a = values(f1, c1) * s1[np.arange(M) // gsm][:, kb]
        b = values(f2, c2) * s2[kb][:, np.arange(N) // PB]
        worst = max(worst, float((np.abs(got - a @ b) / ((np.abs(a) @ np.abs(b)) * 2.0 ** -24)).max()))
    assert worst <= 2, worst


def args(**kw):
    c1, c2, s1, s2 = operands(9, E4, E4, 4, 256, 136, 1)
    d = dict(x1=c1, x2=c2, s1=s1, s2=s2, ys=None, x1o=None, x2o=None, yo=None, bias=None, t1=False, t2=False,
             g=group(1), out=np.zeros((4, 136), np.float16))
    d.update(kw)
    return tuple(d.values())


_C1, _C2, _S1, _S2 = operands(9, E4, E4, 4, 256, 136, 1)
# In the op_api's order: InferGroupSize, CheckDoubleScaleAndFp8Hif8PertokenPerblock, CheckNormalScaleDimRange,
# CheckPerblockGroupSize, K, CheckDimValuePerblock, the out shape.
INVALID_950 = [
    (dict(g=0, s1=_S1[:3]), "when groupSize in m dimension is 0, the m dimension of x1 must be divisible by the m "
                            "dimension of x1Scale(pertokenScale)"),
    (dict(out=np.zeros((4, 136), np.int8)), "the dtype of out must be in dtype support list [FLOAT16, BFLOAT16, FLOAT]"),
    (dict(bias=np.ones(136, F32)), "when the quantization mode is G-B or B-B, bias must be null"),
    (dict(x2o=np.ones(136, F32)), "x1Scale(pertokenScale) and x2Scale(scale) are FLOAT, x2Offset(offset) must be null"),
    (dict(s1=_S1[None]), "incorrect shape dims 3D, 2D. Reason: when the quantization mode is G-B or B-B, the shape dim "
                         "of x1Scale(pertokenScale) must be the same as the shape dim of x1"),
    (dict(g=group(1) & ~0xFFFF | 64), "Parameter groupSizeK of aclnnQuantMatmulV5GetWorkspaceSize has incorrect value "
                                      "64. Reason: when the quantization mode is G-B or B-B, groupSizeK must be 128"),
    (dict(g=(1 << 32) | (64 << 16) | PB), "groupSizeN must be 128"),
    (dict(g=(2 << 32) | (PB << 16) | PB), "incorrect value 2. Reason: when the quantization mode is G-B or B-B, "
                                          "groupSizeM must be 128 or 1"),
    (dict(x2=_C2[:128]), "the K dimension of x1 and x2 must be equal"),
    (dict(s1=np.concatenate([_S1, _S1[:1]])), "incorrect values 4, 5, 1. Reason: when the quantization mode is G-B or "
                                              "B-B, the m dimension of x1Scale(pertokenScale) must be equal to"),
    (dict(s1=_S1[:, :1]), "the k dimension of x1Scale(pertokenScale) must be equal to ceil(k_x1 / 128)"),
    (dict(s2=_S2[:, :1]), "incorrect values 136, 1. Reason: when the quantization mode is G-B or B-B, the n dimension "
                          "of x2Scale(scale) must be equal to ceil(n_x2 / 128)"),
    (dict(s2=_S2[:1]), "the k dimension of x2Scale(scale) must be equal to ceil(k_x2 / 128)"),
    (dict(x1=np.stack([_C1] * 2), s1=np.stack([_S1] * 3), out=np.zeros((2, 4, 136), np.float16)),
     "incorrect values 2, 3. Reason: when the quantization mode is G-B or B-B, the batch dimensions of x1Scale"),
    (dict(out=np.zeros((4, 8), np.float16)), "the N dimension of out must be equal to the N dimension of x2"),
    # two faults: the earlier check answers
    (dict(bias=np.ones(136, F32), s1=_S1[:, :1]), "bias must be null"),
    (dict(s1=_S1[:, :1], g=(1 << 32) | (64 << 16) | PB), "groupSizeN must be 128"),
]


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("kw,text", INVALID_950, ids=range(len(INVALID_950)))
def test_invalid_arguments(kw, text):
    F.expect_error(ops.QuantMatmulV5, args(**kw), INVALID, text)


TORCH_BODY = """
torch.manual_seed(7)
vals = torch.tensor([0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, -0.5, -1.0, -2.0])
M, K, N = 6, 256, 136
x1 = vals[torch.randint(0, 10, (M, K))].to(torch.float8_e4m3fn)
x2t = vals[torch.randint(0, 10, (N, K))].to(torch.float8_e4m3fn)
s1 = torch.rand(M, 2) + 0.25
s2t = torch.rand(2, 2) + 0.25
y = torch_npu.npu_quant_matmul(x1.npu(), x2t.npu().t(), s2t.npu().t(), pertoken_scale=s1.npu(),
    output_dtype=torch.bfloat16, group_sizes=[1, 128, 128])
OUT["pb"] = [enc(to_np(v)) for v in (x1.view(torch.uint8), x2t.view(torch.uint8), s1, s2t, y)]
"""


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_torch_npu_matches_direct_call():
    """npu_quant_matmul with 2-D FLOAT scales and group_sizes [1, 128, 128] (G-B), x2 and its scale as transposed
    views: the bytes of the direct call and of the model."""
    c1, c2t, s1, s2t, y = F.torch_npu_arrays(TORCH_BODY)["pb"]
    c1, c2t = c1.view(E4), c2t.view(E4)
    want = ops.QuantMatmulV5(c1, c2t, s1, s2t, None, None, None, None, None, False, True, group(1),
                             np.zeros((6, 136), BF16))
    assert F.bits_equal(y, np.asarray(want))
    assert F.bits_equal(y, model(values(E4, c1), values(E4, c2t).T, s1, s2t.T, 1, "bfloat16"))
