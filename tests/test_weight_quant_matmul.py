"""aclnnWeightQuantBatchMatmulV2 / V3 (native_stubs/src/ops/quant/weight_quant_matmul.toml; hicann/ops-nn
matmul/weight_quant_batch_matmul_v2). The dequantised weight follows the kernels' steps (weight_quant_batch_matmul_v2_
common.h on Atlas A2: fp16 steps for FLOAT16 x, fp32 then one CAST_RINT for BFLOAT16; arch35 basic_block_vf_nd.h on
the Ascend 950: x's dtype each step), written here in NumPy from those sources; the product x @ weight + bias is
compared with its float64 value within 1 ulp (class c: the cube's order of partial sums is not published), INT8
weights, INT4 packed eight to an INT32 (plain and transposed), per-tensor / per-channel / per-group scales with and
without offsets, a bias, and on Atlas A2 the INT8 output of a UINT64 quantScale (1 code). The op_api's checks in
order, Atlas A2 in one subprocess, one torch_npu child (npu_weight_quant_batchmatmul: V2 and, inner_precise 1, V3)."""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
import _fused_ops as F
from _op_helpers import strided
from reference import formats as R

A2 = F.ON_A2
F16, F32, BF16 = np.float16, np.float32, ml_dtypes.bfloat16
INVALID, NULLPTR = 161002, 161001
NAME = {F16: "float16", BF16: "bfloat16"}


def tview(arr):
    """A device view of 2-D `arr` stored transposed (torch's .t() of a contiguous matrix)."""
    base = np.ascontiguousarray(arr.T)
    return pyaclnn.from_numpy(base).as_strided(arr.shape, (1, arr.shape[0]), 0)


def pack_int4(w, along_k):
    """INT4 values (k, n) packed eight to an int32, element 8j + q in bits 4q..4q+3: along n -> (k, n / 8), along k ->
    the (k / 8, n) matrix whose transpose the caller stores."""
    v = (np.asarray(w, np.int64) & 0xF).astype(np.uint32)
    if along_k:
        v = v.reshape(v.shape[0] // 8, 8, v.shape[1]).transpose(0, 2, 1)
    else:
        v = v.reshape(v.shape[0], v.shape[1] // 8, 8)
    return (v << (4 * np.arange(8, dtype=np.uint32))).sum(-1, dtype=np.uint32).view(np.int32)


def unpack_int4_k(pk):
    """(k / 8, n) int32 words -> the (k, n) INT4 values (eight along k per word)."""
    nib = (pk.view(np.uint32)[..., None] >> (4 * np.arange(8, dtype=np.uint32))) & 0xF
    v = nib.transpose(0, 2, 1).reshape(-1, pk.shape[1]).astype(np.int64)
    return np.where(v >= 8, v - 16, v).astype(np.int8)


def antiquant_ref(w, scale, offset, group, xdt, a2):
    """The dequantised weight (k, n) as the kernel makes it. Every intermediate is exact in fp32 for the test's values
    (|w| <= 127, scales and offsets of x's dtype), so each step below is one rounding, as the vector unit's."""
    k, n = w.shape
    s = np.asarray(scale, F32).reshape(-1, np.asarray(scale).shape[-1])
    o = None if offset is None else np.asarray(offset, F32).reshape(s.shape)
    if group:
        idx = np.arange(k) // group
        s = s[idx]
        o = None if o is None else o[idx]
    v = w.astype(F32)
    if xdt is BF16 and a2:           # fp32 steps, one CAST_RINT
        if o is not None:
            v = (v + o).astype(F32)
        return (v * s).astype(F32).astype(BF16)
    if o is not None:
        v = (v + o).astype(F32).astype(xdt).astype(F32)
    return (v * s).astype(F32).astype(xdt)


def fp19(words):
    return (np.asarray(words).view(np.uint64) & np.uint64(0xFFFFE000)).astype(np.uint32).view(F32)


# xdt, weight ("int8" | "packed" | "packed_t" | "int8_t"), mode ("tensor" | "channel" | "group"), offset, bias, x transposed
CASES = [(F16, "int8", "channel", False, False, False), (F16, "int8", "group", True, True, False),
         (F16, "packed", "tensor", True, False, False), (F16, "packed_t", "channel", True, True, False),
         (BF16, "int8", "group", True, True, False), (BF16, "int8_t", "channel", True, False, False),
         (BF16, "packed", "group", False, True, False), (BF16, "packed_t", "tensor", True, True, False),
         (F16, "int8_t", "group", False, False, True), (BF16, "int8", "channel", False, True, True),
         (F16, "int4", "group", True, True, False), (BF16, "int4", "channel", True, False, False)]


def make(case, seed, m=5, k=128, n=48, group=32):
    xdt, wk, mode, with_off, with_bias, tx = case
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (m, k)).astype(xdt)
    lo, hi = (-8, 8) if wk.startswith(("packed", "int4")) else (-128, 128)
    w = rng.integers(lo, hi, (k, n)).astype(np.int8)
    shape = {"tensor": (1,), "channel": (n,), "group": (k // group, n)}[mode]
    scale = rng.uniform(2e-3, 2e-2, shape).astype(xdt)
    off = rng.uniform(-4, 4, shape).astype(xdt) if with_off else None
    bias = rng.uniform(-1, 1, n).astype(F16 if xdt is F16 else F32) if with_bias else None
    if wk == "int8":
        wt = w
    elif wk == "int8_t":
        wt = tview(w)
    elif wk == "int4":                # an INT4 tensor (two codes a byte)
        wt = pyaclnn.from_numpy(w, dtype="int4")
    elif wk == "packed":
        wt = pack_int4(w, False)
    else:
        wt = tview(pack_int4(w, True))
    xt = tview(x) if tx and A2 else x   # the Ascend 950 refuses a transposed x
    # with a transposed weight the 2-D scale and offset are given transposed too (the op_api reads them so)
    dev = (lambda a: tview(a) if a is not None and a.ndim == 2 and wk.endswith("_t") else a)
    return x, xt, w, wt, scale, off, bias, (group if mode == "group" else 0), dev(scale), dev(off)


def check_case(case, seed=0, v3=False):
    """ulp distance of y from the float64 product of the reference dequantised weight."""
    xdt = case[0]
    x, xt, w, wt, scale, off, bias, group, ds, do = make(case, seed)
    y = np.zeros((x.shape[0], w.shape[1]), xdt)
    got = (ops.WeightQuantBatchMatmulV3(xt, wt, ds, do, None, None, bias, group, 1, y) if v3 else
           ops.WeightQuantBatchMatmulV2(xt, wt, ds, do, None, None, bias, group, y))
    wd = antiquant_ref(w, scale, off, group, xdt, A2)
    want = F.f64(x) @ F.f64(wd) + (0 if bias is None else F.f64(bias))
    return F.ulps(got, want, NAME[xdt])


def test_against_reference():
    worst = max(check_case(case, i, v3=i % 3 == 2) for i, case in enumerate(CASES))
    assert worst <= 1, worst


def test_dequantised_weight_exact():
    """With x the identity the product is the dequantised weight itself: bit-exact."""
    for xdt, wk, mode in ((F16, "int8", "group"), (BF16, "packed", "channel"), (BF16, "int8", "group")):
        x, xt, w, wt, scale, off, _, group, _, _ = make((xdt, wk, mode, True, False, False), 7, m=128)
        eye = np.eye(128, dtype=xdt)
        got = ops.WeightQuantBatchMatmulV2(eye, wt, scale, off, None, None, None, group, np.zeros((128, 48), xdt))
        assert F.bits_equal(np.asarray(got), antiquant_ref(w, scale, off, group, xdt, A2)), (xdt, wk, mode)


def check_fp8_weight(xdt, wname, seed=0, m=4, k=96, n=40):
    """Ascend 950: a FLOAT8_E4M3FN / HIFLOAT8 weight, per-channel scale (n) or (1, n): w' = x_dtype(fp32(w) * scale),
    the code widened exactly (arch35 AntiQuantFP8 functions); bias of BF16 for BFLOAT16 x."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (m, k)).astype(xdt)
    vals = rng.uniform(-6, 6, (k, n)).astype(F32)
    if wname == "hifloat8":
        codes = R.encode_hif8(vals, R.ROUND | R.SAT).astype(np.uint8)
        w = R.decode_hif8(codes)
    else:
        codes = vals.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        w = codes.view(ml_dtypes.float8_e4m3fn).astype(F32)
    s = rng.uniform(2e-2, 2e-1, (1, n)).astype(xdt)
    b = rng.uniform(-1, 1, n).astype(xdt)
    wt = pyaclnn.from_numpy(codes, dtype=wname) if wname == "hifloat8" else codes.view(ml_dtypes.float8_e4m3fn)
    got = ops.WeightQuantBatchMatmulV2(x, wt, s, None, None, None, b, 0,
                                       np.zeros((m, n), xdt))
    wd = (w * s.astype(F32)).astype(F32).astype(xdt)
    return F.ulps(got, F.f64(x) @ F.f64(wd) + F.f64(b), NAME[xdt])


def test_fp8_weights_950():
    if A2:
        return
    worst = max(check_fp8_weight(xdt, wn, i) for i, (xdt, wn) in
                enumerate([(F16, "hifloat8"), (BF16, "hifloat8"), (F16, "float8_e4m3fn"), (BF16, "float8_e4m3fn")]))
    assert worst <= 1, worst


def test_doc_example():
    """aclnnWeightQuantBatchMatmulV2.md's example: m 16, k 32, n 16, x and antiquantScale fp16 1.0, weight INT8 1:
    y = 32 everywhere (the doc's formula; the doc prints the result without stating it)."""
    got = ops.WeightQuantBatchMatmulV2(np.ones((16, 32), F16), np.ones((32, 16), np.int8), np.ones(16, F16), None, None,
                                       None, None, 0, np.zeros((16, 16), F16))
    assert F.bits_equal(np.asarray(got), np.full((16, 16), 32, F16))


def args(**kw):
    a = dict(x=np.ones((4, 64), F16), w=np.ones((64, 16), np.int8), s=np.ones(16, F16), o=None, qs=None, qo=None,
             b=None, g=0, y=np.zeros((4, 16), F16))
    a.update(kw)
    return tuple(a.values())


INVALID_COMMON = [
    (args(s=None), NULLPTR, "antiquantScale is NULL"),
    (lambda: args(x=strided(np.ones((4, 64), F16))), INVALID, "only support x tensor is contiguous or transpose last two dims."),
    (lambda: args(y=strided(np.zeros((4, 16), F16))), INVALID, "The value of y must be contiguous"),
    (args(x=np.ones((4, 64), F32)), INVALID, "Tensor x not implemented for FLOAT, should be in dtype support list"),
    (args(w=np.ones((64, 16), np.int16)), INVALID, "Tensor weight not implemented for INT16"),
    (args(s=np.ones(16, F32)), INVALID, "Tensor antiquantScale not implemented for FLOAT,"),
    (args(y=np.zeros((4, 16), F32)), INVALID, "Tensor y not implemented for FLOAT,"),
    (args(y=np.zeros((4, 16), BF16)), INVALID, "when quantScaleOptional is null, y's dtype should be same as x"),
    (args(x=np.ones((1, 4, 64), F16), y=np.zeros((1, 4, 16), F16)), INVALID, "x's dim should be in range [2, 2]. actual is [3]."),
    (args(s=np.ones(16, BF16)), INVALID, "x's dtype must be same as antiquantScale's dtype"),
    (args(o=np.ones(16, BF16)), INVALID, "antiquantOffsetOptional's dtype must be same as antiquantScale's dtype"),
    (args(b=np.ones(16, F32)), INVALID, "biasOptional's dtype should be [DT_FLOAT16]"),
    (args(b=np.ones((1, 1, 16), F16)), INVALID, "biasOptional's dim should be in range [1, 2]. actual is [3]."),
    (args(s=np.ones((1, 1, 16), F16)), INVALID, "antiquantScale's dim should be in range [1, 2]. actual is [3]."),
    (args(w=np.ones((32, 16), np.int8)), INVALID, "x's k and weight's k should be equal, actual x'k is 64, weight's k is 32."),
    (args(y=np.zeros((3, 16), F16)), INVALID, "y's m and x's m should be equal"),
    (args(y=np.zeros((4, 8), F16)), INVALID, "y's n and weight's n should be equal"),
    (args(g=48), INVALID, "antiquantGroupSize should be an integer multiple of 32, actual is 48."),
    (args(g=64), INVALID, "antiquantGroupSize should not be greater than k-1, which is 63."),
    (args(s=np.ones(3, F16)), INVALID, "antiquantScale shape must be [1] or [16] and group size is 0"),
    (args(s=np.ones((2, 16), F16)), INVALID, "antiquantScale shape must be [1, 16] or [1, 1]"),
    (args(s=np.ones((3, 16), F16), g=32), INVALID, "antiquantScale shape must be [2, 16] when the size is 2 and with group"),
    (args(o=np.ones(1, F16)), INVALID, "Expected tensor for antiquantOffsetOptional to have same size"),
    (args(b=np.ones(5, F16)), INVALID, "when bias's shape size is 1, it's shape should be [0], or [16], actual is [5]."),
]
INVALID_950 = [
    (args(qs=np.ones(16, np.uint64), y=np.zeros((4, 16), np.int8)), NULLPTR, "Current Soc do not support quantScaleOptional"),
    (lambda: args(x=tview(np.ones((4, 64), F16))), INVALID, "On DAV3510, the value of x can not be transposed"),
    (lambda: args(w=pyaclnn.from_numpy(np.zeros((64, 16), np.uint8), dtype="float4_e2m1"), s=np.ones((2, 16), F16),
                  g=32), INVALID, "weight FLOAT4_E2M1: the emulator implements INT8, INT4, FLOAT8_E4M3FN and HIFLOAT8"),
    (lambda: args(w=pyaclnn.from_numpy(np.zeros((64, 16), np.uint8), dtype="float4_e2m1"), s=np.ones((1, 16), F16)),
     INVALID, "When the dtype of weight is FLOAT4_E2M1, quantization mode perchannel/pertensor is not supported"),
    (args(s=np.ones(16, ml_dtypes.float8_e8m0fnu)), INVALID,
     "antiquantScale FLOAT8_E8M0: the emulator implements FLOAT16 / BFLOAT16 antiquant scales"),
    (args(w=np.ones((64, 16), ml_dtypes.float8_e4m3fn), o=np.ones(16, F16)), INVALID,
     "When the weight dtype is FP32/FP4_E2M1/FP8_E4M3/HIFLOAT8, the value of antiquantOffsetOptional must be null"),
    (args(w=np.ones((64, 16), ml_dtypes.float8_e4m3fn), s=np.ones((2, 16), F16), g=32), INVALID,
     "only perchannel quantization is supported, antiquantGroupSize must be 0"),
    (args(w=np.ones((64, 16), ml_dtypes.float8_e4m3fn), s=np.ones(1, F16)), INVALID,
     "only perchannel quantization is supported, pertensor is not supported"),
]
INVALID_A2 = [
    (args(qs=np.ones(16, F32), y=np.zeros((4, 16), np.int8)), INVALID, "The type of quantScaleOptional only supports [UINT64]"),
    (args(qs=np.ones(16, np.uint64)), INVALID, "when quantScaleOptional is not null, y's dtype should be [DT_INT8]"),
    (args(qo=np.ones(16, F32), y=np.zeros((4, 16), np.int8)), INVALID, "y's dtype should be same as x"),
    (args(x=np.ones((4, 64), BF16), s=np.ones(16, BF16), y=np.zeros((4, 16), BF16), b=np.ones(16, BF16)), INVALID,
     "biasOptional's dtype should be [DT_FLOAT], actual is [BFLOAT16]."),
    (args(s=np.ones(16, np.uint64), o=np.ones(16, F16)), INVALID, "antiquantOffset's dtype must be DT_INT32"),
    (args(s=np.ones(16, np.uint64)), INVALID, "antiquantScale UINT64: the emulator implements FLOAT16 / BFLOAT16"),
]


@pytest.mark.parametrize("a,code,text", INVALID_COMMON + (INVALID_A2 if A2 else INVALID_950))
def test_invalid_arguments(a, code, text):
    a = a() if callable(a) else a   # device views are made per call (none outlives its test)
    F.expect_error(ops.WeightQuantBatchMatmulV2, a, code, text)


def test_v3_inner_precise_and_nulls():
    F.expect_error(ops.WeightQuantBatchMatmulV3, args()[:8] + (2,) + args()[8:], INVALID, "cannot support innerPrecise[2]")
    F.null_status_is_nullptr("WeightQuantBatchMatmulV2", 8)
    F.null_status_is_nullptr("WeightQuantBatchMatmulV3", 9)


def quant_case(seed=0, m=6, k=64, n=32):
    """Atlas A2, y INT8: (x @ w' + bias) * fp19(quantScale) + the words' offset, rounded once, saturated. quantOffset
    is given as op-plugin gives it (the same offsets, which the kernel does not read: a different one changes nothing)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (m, k)).astype(F16)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    s = rng.uniform(1e-3, 1e-2, n).astype(F16)
    b = rng.uniform(-1, 1, n).astype(F16)
    q = rng.uniform(0.5, 4, n).astype(F32)
    off = rng.integers(-20, 20, n)
    words = ((q.view(np.uint32).astype(np.uint64) & np.uint64(0xFFFFE000)) | np.uint64(1 << 46) |
             ((off.astype(np.uint64) & np.uint64(0x1FF)) << np.uint64(37)))
    qo = (off + 0.25).astype(F32)    # not read by the kernel
    got = ops.WeightQuantBatchMatmulV2(x, w, s, None, words, qo, b, 0, np.zeros((m, n), np.int8))
    v = (F.f64(x) @ F.f64(antiquant_ref(w, s, None, 0, F16, True)) + F.f64(b)) * F.f64(fp19(words)) + off
    want = np.clip(np.rint(v), -128, 127)
    return int(np.abs(np.asarray(got).astype(np.int64) - want).max())


def a2_checks():
    """Atlas A2 (one subprocess): the reference rows (bf16 in fp32 steps), the INT8 output, the A2 checks."""
    test_against_reference()
    test_dequantised_weight_exact()
    test_doc_example()
    assert quant_case() <= 1
    for a, code, text in INVALID_COMMON[:3] + INVALID_A2:
        test_invalid_arguments(a, code, text)


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_weight_quant_matmul", "T.a2_checks()")


TORCH_BODY = """
torch.manual_seed(0)
x = (torch.rand(6, 64) * 2 - 1).half()
w = torch.randint(-128, 128, (64, 32), dtype=torch.int8)
s = (torch.rand(2, 32) * 0.01 + 1e-3).half()
o = (torch.rand(2, 32) * 4 - 2).half()
b = (torch.rand(32) * 2 - 1).half()
y = torch_npu.npu_weight_quant_batchmatmul(x.npu(), w.npu(), s.npu(), antiquant_offset=o.npu(), bias=b.npu(),
                                           antiquant_group_size=32)
OUT["v2"] = [enc(to_np(v)) for v in (x, w, s, o, b, y)]
p = torch.randint(-2**31, 2**31 - 1, (32, 8), dtype=torch.int32)       # (n, k / 8): eight INT4 along k
xb = (torch.rand(6, 64) * 2 - 1).bfloat16()
sb = (torch.rand(32) * 0.01 + 1e-3).bfloat16()
y3 = torch_npu.npu_weight_quant_batchmatmul(xb.npu(), p.npu().t(), sb.npu(), inner_precise=1)
OUT["v3"] = [enc(to_np(v)) for v in (p, xb, sb, y3)]
x = (torch.rand(5, 64) * 2 - 1).half()                                  # aclnnWeightQuantBatchMatmulNz
w = torch.randint(-128, 128, (64, 48), dtype=torch.int8)
s = (torch.rand(48) * 0.01 + 1e-3).half()
o = (torch.rand(48) * 4 - 2).half()
wn = torch_npu.npu_format_cast(w.npu(), 29)
y_nz = torch_npu.npu_weight_quant_batchmatmul(x.npu(), wn, s.npu(), antiquant_offset=o.npu())
y_nd = torch_npu.npu_weight_quant_batchmatmul(x.npu(), w.npu(), s.npu(), antiquant_offset=o.npu())
OUT["nz"] = [enc(to_np(v)) for v in (x, w, s, o, y_nz, y_nd)]
OUT["nz_format"] = [enc(np.array([torch_npu.get_npu_format(wn)], np.int64))]
"""


@functools.lru_cache(maxsize=None)
def torch_out() -> dict:
    """The family's torch_npu results (one run of TORCH_BODY, shared with test_weight_quant_matmul_nz)."""
    return F.torch_npu_arrays(TORCH_BODY)


def test_torch_npu_reaches_the_operator():
    if A2:
        return
    out = torch_out()
    x, w, s, o, b, y = out["v2"]
    want = ops.WeightQuantBatchMatmulV2(x, w, s, o, None, None, b, 32, np.zeros((6, 32), F16))
    assert F.bits_equal(y, np.asarray(want))
    p, xb, sb, y3 = out["v3"]
    want = ops.WeightQuantBatchMatmulV3(xb, tview(p.T), sb, None, None, None, None, 0, 1, np.zeros((6, 32), BF16))
    assert F.bits_equal(y3, np.asarray(want))
    wd = antiquant_ref(unpack_int4_k(p.T), sb, None, 0, BF16, False)
    assert F.ulps(y3, F.f64(xb) @ F.f64(wd), "bfloat16") <= 1


HIF8_TORCH_BODY = """
torch.manual_seed(0)
x = torch.randn((96, 320), dtype=torch.float16)
w = torch.randn((320, 256), dtype=torch.float32)
s = torch.randn((1, 256), dtype=torch.float16)
wh = torch_npu.npu_dtype_cast(w.npu(), torch_npu.hifloat8)
y = torch_npu.npu_weight_quant_batchmatmul(x.npu(), wh, s.npu(), None, weight_dtype=torch_npu.hifloat8)
OUT["hif8"] = [enc(to_np(v)) for v in (x, w, s, wh.view(torch.uint8), y)]
"""


def test_torch_npu_hifloat8_weight_950():
    """op-plugin's test_npu_weight_quant_batchmatmul2_with_hifloat8 call on the 950 (an fp32 weight cast to HIFLOAT8 by
    npu_dtype_cast, per-channel FLOAT16 scale (1, n), no offset): the codes are HiF8's round-half-away encoding and y
    is x @ fp16(fp32(w) * scale) within the fp32 accumulation's bound and 1 ulp (arch35 AntiQuantFP8 steps, as check_fp8_weight). op-plugin's own
    golden, x @ (w * scale) with the unrounded fp32 weight, misses by HiF8's rounding (3 mantissa bits at most): far
    beyond its 0.001 on most elements, on any device: that test's failure is its own."""
    if A2:
        return
    x, w, s, codes, y = F.torch_npu_arrays(HIF8_TORCH_BODY)["hif8"]
    assert np.array_equal(codes, R.encode_hif8(w, R.ROUND | R.SAT).astype(np.uint8))
    wd = (R.decode_hif8(codes) * s.astype(F32)).astype(F32).astype(F16)
    exact = F.f64(x) @ F.f64(wd)
    # the fp32 accumulation's bound over k = 320 products (order not published), then the fp16 rounding (1 ulp)
    acc = x.shape[1] * 2.0 ** -24 * (np.abs(F.f64(x)) @ np.abs(F.f64(wd)))
    ulp = np.spacing(np.abs(exact).astype(F16)).astype(np.float64)
    assert (np.abs(F.f64(y) - exact) <= acc + ulp).all()
    golden = F.f64(x) @ (F.f64(w) * F.f64(s))
    rel = np.abs(F.f64(y) - golden) / np.maximum(np.abs(golden), np.abs(F.f64(y)))
    assert (rel > 1e-3).mean() > 0.5
