"""aclnnQuantMatmulV5 on the Ascend 950, FLOAT8 (E4M3FN / E5M2) and HIFLOAT8 inputs (native_stubs/src/ops/quant/
quant_matmul.toml, fp8_dequant.h; hicann/ops-nn quant_batch_matmul_v4 op_api, the QuantMatmulChecker's
CheckL0c2outOrL0c2ubPertensorPerchannel / CheckDoubleScaleAndFp8Hif8PertokenPerblock, the arch35 tiling's kernel choice
and kernels qbmm_cube_on_the_fly.h / qbmm_mix_online_dynamic.h).

The reference, from the vendor's kernels: codes decoded (ml_dtypes for FP8, pyaclnn.codecs for HiFloat8), the exact
float64 matmul, then
  fixpipe (x1Scale null, UINT64 words; a FLOAT bias added in the L0C): (acc + bias) * fp19(word);
  double scale (x1Scale [1], x2Scale [1] FLOAT, no bias): the scale fp32(x2Scale * x1Scale) with its low 13 bits
    dropped (DEQ_SCALE_MUL), through the fixpipe;
  vector epilogue (per-token, double scale with x2Scale [N] or a bias): fp32 steps acc * x2Scale, * x1Scale, + bias.
The data are chosen so that the fp32 accumulation is exact (values of few significant bits, small K): the figures
then test the dequant alone (bit-exact for the vector epilogue; the fixpipe within 1 ulp, its rounding not being
published); test_measured_random_codes measures the whole path on random codes against the float64 definition."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import codecs, ops
from pyaclnn.tensor import from_numpy
import _fused_ops as F

A2 = F.ON_A2
F32, BF16 = np.float32, ml_dtypes.bfloat16
E4, E5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
INVALID = 161002
OUT_DT = {"float16": np.float16, "bfloat16": BF16, "float32": F32}


def fp19(words):
    return (np.asarray(words, np.uint64) & np.uint64(0xFFFFE000)).astype(np.uint32).view(F32)


def words(scale):
    """aclnnTransQuantParamV2's words for FLOAT scales (no offset): the fp32 bits & 0xFFFFE000, bit 46 set."""
    return (np.asarray(scale, F32).view(np.uint32).astype(np.uint64) & np.uint64(0xFFFFE000)) | np.uint64(1 << 46)


def codes(fmt, shape, rng, exact=True):
    """8-bit codes of `fmt` (a numpy fp8 dtype or "hif8"): with `exact`, values of magnitude 1/4..4 with at most
    2 significant bits (products and their K <= 64 sums exact in fp32); otherwise N(0, 2) quantised (every
    significant bit the format has)."""
    if exact:
        v = rng.choice([0.25, 0.375, 0.5, 0.75, 1, 1.5, 2, 3, 4], shape) * rng.choice([-1, 1], shape)
    else:
        v = rng.normal(0, 2, shape)
    return codecs.encode_hifloat8(v) if fmt == "hif8" else v.astype(fmt)


def values(fmt, c):
    return (codecs.decode_hifloat8(c) if fmt == "hif8" else np.asarray(c).astype(F32)).astype(np.float64)


def device(fmt, c):
    return from_numpy(c, dtype="hifloat8") if fmt == "hif8" else c


def reference(x1, x2, t1, t2, x1s, x2s, bias, out):
    """The vendor kernel's dequant of the exact product (float64 values; fp32 where its steps are fp32)."""
    a = np.swapaxes(x1, -1, -2) if t1 else x1
    b = np.swapaxes(x2, -1, -2) if t2 else x2
    acc = np.matmul(a, b)
    if np.asarray(x2s).dtype == np.uint64:                       # fixpipe, bias in the L0C
        v = (acc + (bias.astype(np.float64) if bias is not None else 0)).astype(F32).astype(np.float64)
        return (v * fp19(x2s).astype(np.float64)).astype(F32)
    if x1s.shape == (1,) and x2s.shape == (1,) and bias is None:   # double scale folded for the fixpipe
        folded = np.array([x2s[0] * x1s[0]], F32)
        return (acc.astype(F32).astype(np.float64) * fp19(folded.view(np.uint32).astype(np.uint64))[0]).astype(F32)
    f = acc.astype(F32) * x2s.astype(F32)                           # vector epilogue, fp32 steps
    f = (f * (x1s.astype(F32)[:, None] if x1s.shape[0] > 1 else x1s.astype(F32)[0])).astype(F32)
    return (f + bias.astype(F32)).astype(F32) if bias is not None else f


# x1 fmt, x2 fmt, x1 shape, x2 shape, t1, t2, mode ("u64" / "u64n" / "pt" / "double" / "doublen"), bias, out
CASES = [
    (E4, E4, (5, 32), (32, 8), False, False, "u64n", True, "float16"),
    (E5, E4, (32, 6), (32, 16), True, False, "u64", False, "float32"),
    ("hif8", "hif8", (4, 64), (16, 64), False, True, "u64n", False, "bfloat16"),
    (E4, E5, (6, 32), (32, 8), False, False, "pt", True, "bfloat16"),
    ("hif8", "hif8", (7, 16), (16, 8), False, False, "pt", False, "float32"),
    (E5, E5, (2, 3, 32), (32, 8), False, False, "double", False, "float32"),   # fp32 out: the folded scale shows
    (E4, E4, (5, 32), (32, 8), False, False, "double", True, "float32"),      # bias: the vector epilogue
    ("hif8", "hif8", (5, 32), (32, 8), False, False, "doublen", False, "bfloat16"),
]


def build(case, seed, exact=True):
    f1, f2, s1, s2, t1, t2, mode, with_bias, out = case
    rng = np.random.default_rng(seed)
    c1, c2 = codes(f1, s1, rng, exact), codes(f2, s2, rng, exact)
    m = s1[-1] if t1 else s1[-2]
    n = s2[-2] if t2 else s2[-1]
    sv = rng.uniform(1e-2, 1, n if mode in ("u64n", "pt", "doublen") else 1).astype(F32)
    x2s = words(sv) if mode.startswith("u64") else sv
    x1s = None if mode.startswith("u64") else rng.uniform(0.5, 2, m if mode == "pt" else 1).astype(F32)
    bias = rng.uniform(-2, 2, n).astype(F32) if with_bias else None
    return c1, c2, x1s, x2s, bias


def run(case, c1, c2, x1s, x2s, bias):
    f1, f2, s1, s2, t1, t2, _, _, out = case
    shape = np.matmul(np.zeros(s1[:-2] + ((s1[-1], s1[-2]) if t1 else s1[-2:])),
                      np.zeros(s2[:-2] + ((s2[-1], s2[-2]) if t2 else s2[-2:]))).shape
    y = ops.QuantMatmulV5(device(f1, c1), device(f2, c2), x1s, x2s, None, None, None, None, bias, t1, t2, 0,
                          np.zeros(shape, OUT_DT[out]))
    return np.asarray(y)


def distance(case, seed, exact=True):
    c1, c2, x1s, x2s, bias = build(case, seed, exact)
    got = run(case, c1, c2, x1s, x2s, bias)
    want = reference(values(case[0], c1), values(case[1], c2), case[4], case[5], x1s, x2s, bias, case[8])
    return F.ulps(got, want.astype(np.float64), case[8])


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("case", CASES, ids=[f"{c[6]}-{c[8]}-{i}" for i, c in enumerate(CASES)])
def test_against_reference(case):
    """Exact accumulation: the vector epilogue bit for bit, the fixpipe within 1 ulp (measured 0)."""
    for seed in (0, 1):
        d = distance(case, seed)
        assert d <= (0 if case[6] in ("pt", "doublen") or case[7] and case[6] == "double" else 1), (case, d)


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_measured_random_codes():
    """Values with all the formats' bits, K up to 64: the fp32 accumulation in k order against the exact float64 sum,
    fp16 / bf16 out (fp32 out shows the accumulation order itself: the note's figure). Asserted 1 ulp."""
    worst = 0
    for case in CASES:
        if case[8] == "float32":
            continue
        for seed in (5, 6, 7):
            worst = max(worst, distance(case, seed, exact=False))
    assert worst <= 1, worst


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_vendor_doc_example():
    """The V5 doc's Ascend 950 example: 16 x 16 FLOAT8_E4M3FN codes 0x01 (2^-9), x1Scale = x2Scale = [1.0], bias 16
    ones, out FLOAT16: 16 * 2^-18 + 1 through the vector epilogue (a bias), 1.0 in fp16."""
    c = np.ones((16, 16), np.uint8).view(E4)
    y = ops.QuantMatmulV5(c, c, np.ones(1, F32), np.ones(1, F32), None, None, None, None, np.ones(16, F32), False, False,
                          0, np.zeros((16, 16), np.float16))
    assert F.bits_equal(np.asarray(y), np.full((16, 16), 1 + 16 * 2.0 ** -18, np.float16))


def args(**kw):
    a = dict(x1=np.ones((4, 16), E4), x2=np.ones((16, 8), E4), x1s=None, s2=words(np.ones(8, F32)), ys=None,
             x1o=None, x2o=None, yo=None, bias=None, t1=False, t2=False, g=0, out=np.zeros((4, 8), np.float16))
    a.update(kw)
    return tuple(a.values())


PT = dict(x1s=np.ones(4, F32), s2=np.ones(8, F32))
INVALID_950 = [   # in the checker's order
    (args(out=np.zeros((4, 8), np.int32)), "when the dtype of out is INT32, the dtypes of x1 and x2 must be INT8"),
    (args(s2=np.ones(8, F32)), "the dtype of x2Scale(scale) must be in dtype support list [UINT64, INT64]"),
    (args(bias=np.ones(8, BF16)), "the dtype of bias must be FLOAT"),
    (args(x2o=np.ones(8, F32)), "when x1 and x2 are FLOAT8 or HIFLOAT8, x2Offset(offset) must be null"),
    (args(out=np.zeros((4, 8), np.int8)), "the dtype of out must be in dtype support list [FLOAT16, BFLOAT16, FLOAT]"),
    (args(**{**PT, "x1s": np.ones(4, BF16)}), "the dtype of x1Scale(pertokenScale) must be FLOAT"),
    (args(**{**PT, "s2": words(np.ones(8, F32))}), "the dtype of x2Scale(scale) must be FLOAT"),
    (args(**PT, out=np.zeros((4, 8), np.int8)), "the dtype of out must be in dtype support list"),
    (args(**PT, bias=np.ones(8, np.int32)), "the dtype of bias must be FLOAT"),
    (args(**PT, x2o=np.ones(8, F32)), "when x1 and x2 are FLOAT8 or HIFLOAT8 and x1Scale(pertokenScale) and"),
    (args(**{**PT, "x1s": np.ones(3, F32)}), "the shape of x1Scale(pertokenScale) must be [4]"),
    (args(x1s=np.ones(1, F32), s2=np.ones(5, F32)),
     "when the shape of x1Scale(pertokenScale) is [1], the shape of x2Scale(scale) must be [1] or [8]"),
    (args(x1s=np.ones(1, F32), s2=np.ones(5, F32), out=np.zeros((4, 9), np.float16)),
     "the shape of x2Scale(scale) must be [1] or [8]"),                 # before the out shape
    # two faults: the earlier check answers
    (args(out=np.zeros((4, 8), np.int32), s2=np.ones(8, F32)), "the dtypes of x1 and x2 must be INT8"),
    (args(s2=np.ones(8, F32), bias=np.ones(8, BF16)), "the dtype of x2Scale(scale) must be in dtype support list"),
    (args(**{**PT, "x1s": np.ones(4, BF16)}, out=np.zeros((4, 8), np.int8)), "the dtype of x1Scale(pertokenScale)"),
    (args(**PT, out=np.zeros((4, 8), np.int8), bias=np.ones(8, np.int32)), "the dtype of out must be in dtype"),
    (args(x1=np.ones((4, 16), E4), x2=np.ones((16, 8), np.int8)), "the emulator implements the A8W8"),
    # MX (test_quant_matmul_mx.py): K 16 infers groupSizeK 16 / 2 = 8, which the MX group check refuses
    (args(x1s=np.ones((4, 1, 2), ml_dtypes.float8_e8m0fnu), s2=np.ones((1, 8, 2), ml_dtypes.float8_e8m0fnu)),
     "have incorrect values 4295032840, 1, 1, 8. Reason: when the quantization mode is mx"),
    # per-block (test_quant_matmul_perblock.py): K 16 infers groupSizeK 16, which CheckPerblockGroupSize refuses
    (args(x1s=np.ones((4, 1), F32), s2=np.ones((1, 8), F32)), "groupSizeK must be 128"),
]


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("a,text", INVALID_950, ids=range(len(INVALID_950)))
def test_invalid_arguments(a, text):
    F.expect_error(ops.QuantMatmulV5, a, INVALID, text)


def a2_checks():
    """Run by test_quant_matmul's Atlas A2 subprocess: FLOAT8 stays refused there (DAV_2201's CheckDtypeOnlyL0c2out
    has no FLOAT8 path; the emulator names its limit)."""
    F.expect_error(ops.QuantMatmulV5, args(), INVALID, "the emulator implements the A8W8")


TORCH_BODY = """
torch.manual_seed(0)
vals = torch.tensor([0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, -0.5, -1.0, -2.0])
x1 = vals[torch.randint(0, 10, (6, 32))].to(torch.float8_e4m3fn)
x2 = vals[torch.randint(0, 10, (32, 16))].to(torch.float8_e4m3fn)
s = torch.rand(16) * 0.5 + 0.01
pt = torch.rand(6) + 0.5
# HiF8 codes of either sign with magnitude codes 1..0x5F: finite, not NaN (0x80), not large (no fp32 overflow)
h1 = (torch.randint(1, 0x60, (6, 32)) | torch.randint(0, 2, (6, 32)) << 7).to(torch.uint8)
h2 = (torch.randint(1, 0x60, (32, 16)) | torch.randint(0, 2, (32, 16)) << 7).to(torch.uint8)
OUT["fp8"] = [enc(to_np(v)) for v in (x1.view(torch.uint8), x2.view(torch.uint8), s,
              torch_npu.npu_quant_matmul(x1.npu(), x2.npu(), s.npu(), output_dtype=torch.float16))]
OUT["pt"] = [enc(to_np(v)) for v in (pt, torch_npu.npu_quant_matmul(x1.npu(), x2.t().contiguous().npu().t(), s.npu(),
             pertoken_scale=pt.npu(), output_dtype=torch.bfloat16))]
OUT["hif8"] = [enc(to_np(v)) for v in (h1, h2, torch_npu.npu_quant_matmul(h1.npu(), h2.npu(), s.npu(),
               pertoken_scale=pt.npu(), x1_dtype=torch_npu.hifloat8, x2_dtype=torch_npu.hifloat8,
               output_dtype=torch.float32))]
"""


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_torch_npu_matches_direct_call():
    """npu_quant_matmul with FLOAT8 tensors (its float scale through npu_trans_quant_param: the fixpipe) and with
    HiFloat8 codes (x1_dtype / x2_dtype), per-token: the same bytes as the direct call."""
    out = F.torch_npu_arrays(TORCH_BODY)
    c1, c2, s, y = out["fp8"]
    c1, c2 = c1.view(E4), c2.view(E4)
    want = ops.QuantMatmulV5(c1, c2, None, words(s), None, None, None, None, None, False, False, 0,
                             np.zeros((6, 16), np.float16))
    assert F.bits_equal(y, np.asarray(want))
    pt, y = out["pt"]
    want = ops.QuantMatmulV5(c1, np.ascontiguousarray(c2.T), pt, s, None, None, None, None, None, False, True, 0,
                             np.zeros((6, 16), BF16))
    assert F.bits_equal(y, np.asarray(want))
    h1, h2, y = out["hif8"]
    want = ops.QuantMatmulV5(device("hif8", h1), device("hif8", h2), pt, s, None, None, None, None, None, False, False,
                             0, np.zeros((6, 16), F32))
    assert F.bits_equal(y, np.asarray(want))
    a, b = values("hif8", h1), values("hif8", h2)
    ref = reference(a, b, False, False, pt, s, None, "float32").astype(np.float64)
    bound = 32 * 2.0 ** -23 * (np.abs(a) @ np.abs(b)) * s * pt[:, None] + np.abs(ref) * 2.0 ** -22   # fp32 sum order
    assert (np.abs(y - ref) <= bound).all()
