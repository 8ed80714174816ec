"""Grouped matmul, the A8W8 path (native_stubs/src/ops/moe/grouped_matmul_quant.c): aclnnGroupedMatmulV4 / V5 with
INT8 x and weight. The NumPy reference follows the vendor kernel's steps (hicann/ops-transformer
gmm/grouped_matmul/op_kernel: grouped_matmul.cpp's QUANT_A8W8O8 / O32 cube paths, grouped_matmul_quant_mixcore.h's
epilogue): int32 accumulation with the INT32 bias (exact, class a for y INT32); y INT8: the fixpipe's
(acc + bias) * fp19(word) + offset9(word), rounded to nearest even and saturated (class c: the fixpipe's internal
rounding is not published; 1 code asserted); y FLOAT16 / BFLOAT16: fp32(acc) * scale (* perTokenScale) (+ a
BFLOAT16 bias), each step in fp32, one RINT (class b: bit-exact). Every y / scale / bias dtype of the op_api's lists,
the op_api's quant checks in its order and words (Atlas A2 only: run in test_grouped_matmul.py's A2 subprocess; the
Ascend 950 sends INT8 x INT8 to its own checker and arch35 steps, test_950_int8_*), and
torch_npu.npu_grouped_matmul on Atlas A2 (the quantised case of op-plugin's test_npu_grouped_matmul.py and a
per-token case) against the direct call and the reference."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID
import _fused_ops as F

I8, I32, I64, F32 = np.int8, np.int32, np.int64, np.float32
M, K, N, COUNTS = 10, 24, 8, [3, 0, 7]
# the Atlas A2's A8W8 path: the Ascend 950 sends INT8 x INT8 to its own checker (test_950_int8_*); these run in
# test_grouped_matmul.py's Atlas A2 subprocess
A2_ONLY = pytest.mark.skipif(not F.ON_A2, reason="the Atlas A2's A8W8 path (run in test_grouped_matmul.py's A2 "
                             "subprocess)")


def acc32(x, w, b=None):
    """x (m, k) @ w (k, n) in int32 as the cube's L0C (wrapping), + an INT32 bias there."""
    a = x.astype(I64) @ w.astype(I64) + (b.astype(I64) if b is not None else 0)
    return ((a + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(I32)


def word(f32):
    """aclnnTransQuantParamV2's word of an fp32 scale: the fp19 bits, bit 46 set (op-plugin's deq_scale_generate)."""
    return ((np.asarray(f32, F32).view(np.uint32).astype(np.uint64) & 0xFFFFE000) | np.uint64(1 << 46)).view(I64)


def fixpipe_int8(acc, words):
    w = words.view(np.uint64)
    fp19 = (w & np.uint64(0xFFFFE000)).astype(np.uint32).view(F32).astype(np.float64)
    off = ((w >> np.uint64(37)) & np.uint64(0x1FF)).astype(I64)
    off = np.where(off >= 256, off - 512, off)
    return np.clip(np.rint(acc.astype(np.float64) * fp19 + off), -128, 127).astype(I8)


def epilogue(acc, scale, y_name, pt=None, bias=None):
    """AscendDequant then Mul / Add in fp32, Cast RINT to y."""
    f = acc.astype(F32) * scale.astype(F32)
    if pt is not None:
        f = f * pt.astype(F32)[:, None]
    if bias is not None:
        f = f + bias.astype(F32)
    return R.cast(f, y_name)


def reference(x, ws, bs, ss, y_name, pt=None):
    """Group g's rows of x (COUNTS) against weight g: the kernel's steps per y dtype."""
    out, s0 = [], 0
    for g, c in enumerate(COUNTS):
        xs = x[s0:s0 + c]
        acc = acc32(xs, ws[g], bs[g] if bs is not None and bs[g].dtype == I32 else None)
        if y_name == "int32":
            out.append(acc)
        elif y_name == "int8":
            out.append(fixpipe_int8(acc, ss[g]))
        else:
            bf = bs[g] if bs is not None and bs[g].dtype != I32 else None
            out.append(epilogue(acc, ss[g], y_name, None if pt is None else pt[s0:s0 + c], bf))
        s0 += c
    return np.concatenate(out)


def operands(seed, scale_name, bias_name):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (M, K)).astype(I8)
    w = rng.integers(-128, 128, (len(COUNTS), K, N)).astype(I8)
    s = rng.uniform(1e-4, 2e-3, (len(COUNTS), N))
    s = None if scale_name is None else word(s) if scale_name in ("int64", "uint64") else R.cast(s, scale_name)
    if scale_name == "uint64":
        s = s.view(np.uint64)
    b = None
    if bias_name == "int32":
        b = rng.integers(-5000, 5000, (len(COUNTS), N)).astype(I32)
    elif bias_name:
        b = R.cast(rng.uniform(-2, 2, (len(COUNTS), N)), bias_name)
    pt = rng.uniform(0.5, 2, M).astype(F32)
    return x, w, s, b, pt


def gmm(x, ws, bs, ss, y, pts=None, version=5, gl_type=1, act=0, offset=None, aq=None):
    gl = np.array(COUNTS if gl_type == 1 else np.cumsum(COUNTS), I64)
    a = (x, ws, bs, ss, offset, aq, aq, pts, gl, None, None, None, 3, 0, gl_type, act)
    if version == 5:
        return ops.GroupedMatmulV5(*a, None, y, None, None)[0][0]
    return ops.GroupedMatmulV4(*a, y, None, None)[0][0]


# (y, scale, bias, per-token): every combination the op_api's CheckQuantParamsDtype / bias check lets through
COMBOS = [("int32", None, None, False), ("int32", None, "int32", False), ("int8", "int64", "int32", False),
          ("int8", "uint64", None, False), ("float16", "float32", "int32", False),
          ("bfloat16", "bfloat16", None, False),
          ("float16", "float32", "bfloat16", True), ("bfloat16", "bfloat16", "int32", True),
          ("bfloat16", "bfloat16", "bfloat16", True)]


@A2_ONLY
@pytest.mark.parametrize("y_name,scale_name,bias_name,per_token", COMBOS)
def test_against_kernel_steps(y_name, scale_name, bias_name, per_token):
    for seed, single in ((0, True), (1, False)):
        x, w, s, b, pt = operands(seed, scale_name, bias_name)
        ws = [w] if single else list(w)
        ss = None if s is None else ([s] if single else list(s))
        bs = None if b is None else ([b] if single else list(b))
        if per_token and not single:
            continue   # per token with a weight list: test_per_token_with_weight_list
        y0 = np.full((M, N), 7, R.np_dtype(y_name))
        got = gmm([x], ws, bs, ss, [y0], [pt] if per_token else None, 4 + seed)
        want = reference(x, list(w), None if b is None else list(b), None if s is None else list(s), y_name,
                         pt if per_token else None)
        if y_name == "int8":   # class c: the fixpipe's rounding; measured 0 codes
            assert np.abs(got.astype(I64) - want).max() <= 1, (seed, single)
        else:
            assert F.bits_equal(got, want), (y_name, scale_name, bias_name, seed, single)


@A2_ONLY
def test_per_token_with_weight_list():
    x, w, s, b, pt = operands(2, "bfloat16", "bfloat16")
    got = gmm([x], list(w), list(b), list(s), [np.zeros((M, N), R.np_dtype("bfloat16"))], [pt], gl_type=0)
    assert F.bits_equal(got, reference(x, list(w), list(b), list(s), "bfloat16", pt))


@A2_ONLY
def test_per_token_no_split():
    """groupType -1 with one x, weight and y: the per-token scale indexes x's rows."""
    x, w, s, b, pt = operands(5, "float32", "bfloat16")
    got = ops.GroupedMatmulV4([x], [w[0]], [b[0]], [s[0]], None, None, None, [pt], None, None, None, None, 0, -1, 0,
                              0, [np.zeros((M, N), np.float16)], None, None)[0][0]
    assert F.bits_equal(got, epilogue(acc32(x, w[0]), s[0], "float16", pt, b[0]))


@A2_ONLY
def test_epilogue_against_float64():
    """The fp32 steps against the float64 definition (acc * scale * pertoken + bias) rounded once: the figure the
    note states (fp16 / bf16 within 1 ulp)."""
    worst = {}
    for seed in range(4):
        for y_name, s_name in (("float16", "float32"), ("bfloat16", "bfloat16")):
            x, w, s, b, pt = operands(10 + seed, s_name, "bfloat16")
            got = gmm([x], [w], [b], [s], [np.zeros((M, N), R.np_dtype(y_name))], [pt])
            want, s0 = [], 0
            for g, c in enumerate(COUNTS):
                a = acc32(x[s0:s0 + c], w[g]).astype(np.float64)
                want.append(a * F.f64(s[g]) * F.f64(pt[s0:s0 + c])[:, None] + F.f64(b[g]))
                s0 += c
            worst[y_name] = max(worst.get(y_name, 0), F.ulps(got, np.concatenate(want), y_name))
    assert worst["float16"] <= 1 and worst["bfloat16"] <= 1, worst


@A2_ONLY
def test_int32_accumulation_wraps_and_rows_past_the_groups_keep():
    """|acc + bias| > 2^31 (K 65535, the op_api's largest): the L0C's int32 wraps; rows past the group list keep
    y's bytes."""
    k = 65535
    x, w = np.full((3, k), -128, I8), np.full((1, k, 3), -128, I8)
    b = np.full((1, 3), 2 ** 31 - 1, I32)
    got = ops.GroupedMatmulV4([x], [w], [b], None, None, None, None, None, np.array([2], I64), None, None, None, 3,
                              0, 1, 0, [np.full((3, 3), 5, I32)], None, None)[0][0]
    want = acc32(x[:2], w[0], b[0])
    assert want.min() < 0 and np.array_equal(got[:2], want) and np.array_equal(got[2], [5, 5, 5])


@A2_ONLY
def test_empty_x_leaves_y():
    """CheckZeroShape: every x empty (K 0) -> no kernel; y keeps its bytes (not the bias, not zeros)."""
    got = gmm([np.zeros((M, 0), I8)], [np.zeros((3, 0, N), I8)], [np.ones((3, N), I32)], None,
              [np.full((M, N), 5, I32)])
    assert np.array_equal(got, np.full((M, N), 5, I32))


@A2_ONLY
def test_separated_lists():
    """groupType -1: x, weight, y separated (x of 3 dims), INT8 y with per-channel words."""
    x, w, s, b, _ = operands(3, "int64", "int32")
    xs = [x[:4], x[4:].reshape(2, 3, K)]
    ys = [np.zeros((4, N), I8), np.zeros((2, 3, N), I8)]
    out = ops.GroupedMatmulV4(xs, [w[0], w[1]], [b[0], b[1]], [s[0], s[1]], None, None, None, None, None, None, None,
                              None, 0, -1, 0, 0, ys, None, None)[0]
    for g in range(2):
        want = fixpipe_int8(acc32(xs[g].reshape(-1, K), w[g], b[g]), s[g])
        assert np.abs(out[g].reshape(-1, N).astype(I64) - want).max() <= 1


X0 = np.ones((M, K), I8)
W0 = np.ones((3, K, N), I8)
S0 = np.ones((3, N), F32)
Y16 = np.zeros((M, N), np.float16)
GL = np.array(COUNTS, I64)


def qargs(**kw):
    a = dict(x=[X0], w=[W0], b=None, scale=[S0], off=None, aqs=None, aqo=None, pts=None, gl=GL, ai=None, aqsc=None,
             aqof=None, split=3, gtype=0, gltype=1, act=0, y=[Y16], afo=None, dqs=None)
    a.update(kw)
    return tuple(a.values())


BF = R.np_dtype("bfloat16")
SEP = dict(x=[X0, X0], w=[W0[0], W0[1]], y=[Y16, Y16], split=0, gtype=-1, gl=None, scale=[S0[0], S0[1]])
QUANT_INVALID = [   # the op_api's checks in its order (CheckFunctionQuantParams, CheckGroupedMatmulQuant)
    (qargs(**{**SEP, "y": [Y16, np.zeros((M, N), I8)]}),
     "output tensorlist has different data type, y[0] data type is FLOAT16, and y[1] data type id INT8."),
    (qargs(y=[np.zeros((M, N), F32)], b=[np.ones((3, N), F32)]),   # y before bias
     "Expect yDtype is int8, int32, float16 or bfloat16 in quant case, but now y[0] dtype is FLOAT"),
    (qargs(b=[np.ones((3, N), F32)]), "GMM: bias dtype does not match with required dtype int32 or bfloat16."),
    (qargs(gtype=2), "GMM: quant cases do not support splited axis is K."),
    (qargs(off=[S0], scale=None), "GMM: offset must be nullptr in quant, but now is not nullptr."),
    (qargs(scale=None), "GMM: scale must not be nullptr in quant, but now is nullptr."),
    (qargs(scale=[S0, S0]), "scale size[2] must be equal with weight size[1]."),
    (qargs(scale=[S0[0]]), "scale Dim must be 2, but now is 1."),
    (qargs(scale=[S0[:2]]), "scale batch size[2] should be euqal with groupList length[3]."),
    (qargs(scale=[np.ones((3, 5), F32)]), "NDim[5] of scale should be equal with NDim[8] of weight."),
    (qargs(**{**SEP, "scale": [S0[0], S0[0, :5]]}), "NDim[5] of scale[1] should be equal with NDim[8] of weight[1]."),
    (qargs(**{**SEP, "scale": [S0[:1], S0[:1]]}), "scale Dim must be 1, but now is 2."),
    (qargs(y=[np.zeros((M, N), BF)]), "per-channel quant case only supports scale with data type int64/uint64 when "
     "output is int8, or data type bfloat16 when output is bfloat16, or data type float32 when output is float16, "
     "but scale[0] has data type FLOAT and output has data type BFLOAT16!"),
    (qargs(scale=[S0.astype(I64)]), "but scale[0] has data type UINT64 and output has data type FLOAT16!"),
    (qargs(scale=[S0.astype(I64)], y=[np.zeros((M, N), I8)], pts=[np.ones(M, F32)]),
     "per-token quant case only supports scale data type bfloat16 with output data type bfloat16,or scale with data "
     "type float32 when output is float16, but now scale[0] has data type UINT64 and output has data type INT8!"),
    (qargs(pts=[np.ones(M, np.float16)]), "per-token quant case only support perTokenScale with data type float32, "
     "but perTokenScale[0] has data type FLOAT16!"),
    (qargs(x=[X0[:4], X0[4:]], w=[W0[0], W0[1]], scale=[S0[0], S0[1]], pts=[np.ones(M, F32)], split=2, gl=None),
     "per-token quant case is only supported when x, weight and y are all single tensor, but now x size is 2, weight "
     "size is 2, y size is 1"),
    (qargs(pts=[np.ones(M, F32), np.ones(M, F32)]),
     "perTokenScaleOptional size[2] must be 1 and equal with x size[1]."),
    (qargs(pts=[np.ones((M, 1), F32)]),
     "perTokenScaleOptional dim num must be 1 when x is single tensor, but now is 2."),
    (qargs(pts=[np.ones(M - 1, F32)]), "MDim[9] of perTokenScaleOptional should be equal with MDim[10] of x."),
    (qargs(aqs=[S0.astype(np.float16)]), "Detected quant, but antiquant inputs is not empty!"),
    # after the quant checks, the group-type checks
    (qargs(split=0), "When y is not separated, splitItem should be 2/3, but current splitItem is 0."),
    (qargs(b=[np.ones((3, 5), I32)]), "NDim[5] of bias should be equal with NDim[8] of weight."),
    # the emulator's limits, after the vendor's checks
    (qargs(act=1), "the A8W8 path's activation (actType 1) is not modelled by the emulator"),
    (qargs(b=[np.ones((3, N), BF)]), "a BFLOAT16 bias with y FLOAT16 and no per-token scale is not modelled"),
    (qargs(w=[W0.astype(np.int32)]), "the A8W4, A4W4 and weight-quantised paths are not modelled by the emulator"),
    (qargs(x=[X0.astype(np.float16)]), "the A8W4, A4W4 and weight-quantised paths are not modelled by the emulator"),
]


@A2_ONLY
@pytest.mark.parametrize("a,text", QUANT_INVALID)
def test_invalid_arguments(a, text):
    F.expect_error(ops.GroupedMatmulV4, a, INVALID, text)


@A2_ONLY
def test_int32_y_skips_the_scale_checks():
    """CheckFunctionQuantParams returns before CheckGroupedMatmulQuant when y is INT32: an offset, a scale of any
    shape and a per-token scale pass, and are not applied."""
    x, w, _, b, _ = operands(4, None, "int32")
    got = gmm([x], [w], [b], [np.ones(3, F32)], [np.zeros((M, N), I32)], [np.ones(2, np.float16)],
              offset=[np.ones(1, F32)])
    assert np.array_equal(got, reference(x, list(w), list(b), None, "int32"))


TORCH_BODY = """
import numpy as np
torch.manual_seed(0)
x = torch.randint(-128, 128, (10, 24), dtype=torch.int8)
w = torch.randint(-128, 128, (3, 24, 8), dtype=torch.int8)
b = torch.randint(-5000, 5000, (3, 8), dtype=torch.int32)
f = torch.rand(3, 8) * 2e-3 + 1e-4
words = (f.view(torch.int32).to(torch.int64) & 0xFFFFE000) | (1 << 46)
gl = torch.tensor([3, 3, 10]).npu()
xs, ws, bs = [x.npu()], [w[g].npu() for g in range(3)], [b[g].npu() for g in range(3)]
for sc, dt in ((words, None), (f, torch.float16), (f.to(torch.bfloat16), torch.bfloat16)):
    y = torch_npu.npu_grouped_matmul(xs, ws, bias=bs, scale=[sc[g].npu() for g in range(3)], group_list=gl,
                                     split_item=3, group_type=0, output_dtype=dt)[0]
    OUT[str(dt)] = [enc(to_np(v)) for v in (x, w, b, sc, y)]
pt = torch.rand(10) + 0.5
bb = (torch.rand(3, 8) * 4 - 2).to(torch.bfloat16)
y = torch_npu.npu_grouped_matmul([x.npu()], [w.npu()], bias=[bb.npu()], scale=[f.to(torch.bfloat16).npu()],
                                 per_token_scale=[pt.npu()], group_list=torch.tensor([3, 0, 7]).npu(), split_item=3,
                                 group_type=0, group_list_type=1, output_dtype=torch.bfloat16)[0]
OUT["pertoken"] = [enc(to_np(v)) for v in (bb, f.to(torch.bfloat16), pt, y)]
"""


def test_torch_npu_grouped_matmul_quant():
    """op-plugin's quantised case (x INT8, three weights, INT32 bias, cumsum group list; INT64 words with y INT8,
    FLOAT with FLOAT16, BFLOAT16 with BFLOAT16) and a per-token one, on Atlas A2: equal to the direct call and to the
    reference."""
    out = F.torch_npu_arrays(TORCH_BODY, soc="Ascend910B4")
    for key, y_name in (("None", "int8"), ("torch.float16", "float16"), ("torch.bfloat16", "bfloat16")):
        x, w, b, sc, y = out[key]
        assert y.dtype == R.np_dtype(y_name), key
        if F.ON_A2:   # the direct call in this process (the 950's A8W8 differs: y INT8 refused there)
            direct = gmm([x], list(w), list(b), list(sc), [np.zeros((M, N), R.np_dtype(y_name))], gl_type=0)
            assert F.bits_equal(y, direct), key
        ref = reference(x, list(w), list(b), list(sc), y_name)
        assert np.abs(y.astype(np.float64) - ref.astype(np.float64)).max() == 0 if y_name != "int8" else \
            np.abs(y.astype(I64) - ref).max() <= 1, key
    x, w, b, _, _ = out["None"]
    bb, s, pt, y = out["pertoken"]
    if F.ON_A2:
        assert F.bits_equal(y, gmm([x], [w], [bb], [s], [np.zeros((M, N), BF)], [pt]))
    assert F.bits_equal(y, reference(x, list(w), list(bb), list(s), "bfloat16", pt))


# ---- the Ascend 950's FLOAT8 / HIFLOAT8 static quant (grouped_matmul_fp8.c) --------------------------------------
# The reference follows the arch35 kernel's steps (gqmm_cube_on_the_fly.h, the tiling's SetQuantMode /
# SetKernelType): the 8-bit codes' values, their K-sum exact here (few significant bits, K <= 64); a per-tensor scale
# ((g,) or (g, 1)) or a per-channel (g, N) UINT64 / INT64 word: the fixpipe, fp32(acc) * fp19(scale) rounded once;
# a per-channel FLOAT scale: the vector epilogue fp32(acc) * scale in fp32; then RINT to y. Class b (bit-exact).
import ml_dtypes  # noqa: E402

E4, E5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
FP8_COUNTS = [4, 0, 5]   # groups; rows past their sum keep y's bytes


def fp8_codes(fmt, shape, rng):
    v = rng.choice([0.25, 0.5, 0.75, 1, 1.5, 2, 3], shape) * rng.choice([-1, 1], shape)
    from pyaclnn import codecs
    return codecs.encode_hifloat8(v) if fmt == "hif8" else v.astype(fmt)


def fp8_values(fmt, c):
    from pyaclnn import codecs
    return (codecs.decode_hifloat8(c) if fmt == "hif8" else np.asarray(c).astype(F32)).astype(np.float64)


def fp19_of(bits_u32):
    return (np.asarray(bits_u32, np.uint32) & np.uint32(0xFFFFE000)).view(F32).astype(np.float64)


def fp8_reference(xv, wv, scale, y0, y_name, gl, gl_type=1):
    """Group g's rows of x against weight g, dequantised as the tiling picks from the scale's shape and dtype."""
    y = y0.copy()
    n = wv.shape[2]
    per_channel = scale.ndim == 2 and scale.shape[1] == n and n != 1
    start = 0
    for g in range(len(gl)):
        end = gl[g] if gl_type == 0 else start + gl[g]
        acc = (xv[start:end] @ wv[g]).astype(F32).astype(np.float64)   # exact here, then the fp32 L0C
        s = scale[g] if per_channel else scale.reshape(len(gl), -1)[g, 0]
        if scale.dtype in (np.int64, np.uint64):
            f = (acc * fp19_of(np.asarray(s).view(np.uint64).astype(np.uint32))).astype(F32)
        elif not per_channel:
            f = (acc * fp19_of(np.asarray(s, F32).view(np.uint32))).astype(F32)
        else:
            f = acc.astype(F32) * s.astype(F32)
        y[start:end] = R.cast(f, y_name)
        start = end
    return y


def fp8_device(fmt, c):
    from pyaclnn.tensor import from_numpy
    return from_numpy(c, dtype="hifloat8") if fmt == "hif8" else c


def fp8_gmm(x, w, scale, y0, gl, gl_type=1, version=5, fx=None, fw=None, **kw):
    a = dict(x=[fp8_device(fx, x)], w=[fp8_device(fw, w)], b=None, scale=[scale], off=None, aqs=None, aqo=None,
             pts=None, gl=np.asarray(gl, I64), ai=None, aqsc=None, aqof=None, split=3, gtype=0, gltype=gl_type, act=0)
    a.update(kw)
    a = tuple(a.values())
    if version == 5:
        return ops.GroupedMatmulV5(*a, None, [y0], None, None)[0][0]
    return ops.GroupedMatmulV4(*a, [y0], None, None)[0][0]


# x fmt, weight fmt, scale kind ("f_chan" (g, N) FLOAT, "f_tensor" (g,) FLOAT, "f_tensor1" (g, 1) FLOAT, "i64_chan",
# "u64_tensor"), y
FP8_CASES = [(E4, E4, "f_chan", "float32"), (E5, E4, "i64_chan", "bfloat16"), ("hif8", "hif8", "f_tensor", "float16"),
             (E4, E5, "u64_tensor", "float32"), (E5, E5, "f_tensor1", "bfloat16"), ("hif8", "hif8", "i64_chan", "float32"),
             (E4, E4, "f_chan", "float16")]


def fp8_scale(kind, rng, g, n):
    s = rng.uniform(-2, 2, (g, n) if kind.endswith("chan") else (g,) if kind == "f_tensor" else (g, 1)).astype(F32)
    if kind.startswith("f"):
        return s
    words = s.view(np.uint32).astype(np.uint64)   # the fp32 bits in the low word (op-plugin's 950 case)
    return words.view(I64) if kind.startswith("i64") else words


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path (refused on Atlas A2: fp8_on_a2)")
@pytest.mark.parametrize("fx,fw,kind,y_name", FP8_CASES)
def test_fp8_against_kernel_steps(fx, fw, kind, y_name):
    rng = np.random.default_rng(len(kind) + len(y_name))
    m, k, n = sum(FP8_COUNTS) + 2, 48, 16
    x, w = fp8_codes(fx, (m, k), rng), fp8_codes(fw, (3, k, n), rng)
    s = fp8_scale(kind, rng, 3, n)
    y0 = np.full((m, n), 7, R.np_dtype(y_name))
    for gl_type, gl in ((1, FP8_COUNTS), (0, list(np.cumsum(FP8_COUNTS)))):
        got = fp8_gmm(x, w, s, y0, gl, gl_type, version=4 + gl_type, fx=fx, fw=fw)
        want = fp8_reference(fp8_values(fx, x), fp8_values(fw, w), s, y0, y_name, gl, gl_type)
        assert F.bits_equal(got, want), (fx, fw, kind, y_name, gl_type)


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path")
def test_fp8_fixpipe_keeps_19_bits():
    """A per-tensor FLOAT scale goes to the fixpipe as its bits: the low 13 mantissa bits are dropped (a per-channel
    FLOAT scale, the vector epilogue, keeps them)."""
    x, w = np.ones((2, 32), E4), np.ones((1, 32, 2), E4)
    s = np.array([1 + 2.0 ** -20], F32)
    y = fp8_gmm(x, w, s, np.zeros((2, 2), F32), [2])
    assert np.array_equal(y, np.full((2, 2), 32, F32))
    y = fp8_gmm(x, w, np.full((1, 2), s[0], F32), np.zeros((2, 2), F32), [2])
    assert np.array_equal(y, np.full((2, 2), np.float32(32 * (1 + 2.0 ** -20)), F32))


XE = np.ones((6, 32), E4)
WE = np.ones((2, 32, 8), E4)
SE = np.ones((2, 8), F32)
YE = np.zeros((6, 8), F32)
SE8M0 = np.ones((2, 1, 8, 2), ml_dtypes.float8_e8m0fnu)   # MX scales: (E, K / 64, N, 2), (M, K / 64, 2)
PE8M0 = np.ones((6, 1, 2), ml_dtypes.float8_e8m0fnu)
XF4, WF4 = np.ones((6, 32), ml_dtypes.float4_e2m1fn), np.ones((2, 32, 8), ml_dtypes.float4_e2m1fn)


def fp8_args(**kw):
    return qargs(**{"x": [XE], "w": [WE], "scale": [SE], "gl": np.array([2, 4], I64), "y": [YE], **kw})


FP8_INVALID = [   # the 950's CheckFunctionParams / CheckGroupedMatmul91095 in its order, then the emulator's limits
    (fp8_args(act=1, scale=None), "Activation is not supported on Ascend910_95 platforms."),
    (fp8_args(scale=None, gl=None), "In quant case, scaleOptional should not be nullptr."),
    (fp8_args(gl=None, off=[SE]), "In quant case, groupListOptional should not be nullptr."),
    (fp8_args(off=[SE], b=[SE]), "Quant case does not support offset."),
    (fp8_args(w=[WE[0], WE[1]], scale=[SE[0], SE[1]]),
     "In quant case, the size of x, weight and y should all be 1, but actual sizes are 1, 2 and 1."),
    (fp8_args(scale=[SE, SE]), "the scale / perTokenScale lists must hold as many tensors as x"),
    (fp8_args(w=[np.ones((2, 32, 0), E4)], scale=[np.ones((2, 0), F32)], y=[np.zeros((6, 0), F32)]),
     "In quant case, the N value[0] should be positive."),
    (fp8_args(w=[WE.astype(np.float32).astype(I8)]),
     "Quant case with x dtype FLOAT8_E4M3FN and weight dtype INT8 is not supported."),
    (fp8_args(scale=[SE.astype(np.float16)]), "Unsupported quant scale dtype FLOAT16 with float8 case"),
    (fp8_args(b=[SE]), "Float8/hifloat8 does not support bias."),
    (fp8_args(pts=[np.ones(6, np.float16)]),
     "The perTokenScale dtype should be float32 in float8/hifloat8 case, but actual dtype is FLOAT16"),
    (fp8_args(pts=[np.ones(6, F32)], scale=[SE.view(I64)[:, :4]]),
     "The scale dtype should be float32 when perTokenScale is not nullptr in float8/hifloat8 case, but actual dtype "
     "is UINT64"),
    (fp8_args(y=[np.zeros((6, 8), I8)]), "Expect y dtype to be float32, float16 or bfloat16 in float8/hifloat8 quant "
     "case, but actual dtype is INT8"),
    (fp8_args(scale=[np.ones((2, 1, 1), F32)]), "the dim num of scale should be 1 or 2, but actual dim num is 3"),
    (fp8_args(scale=[np.ones((3, 8), F32)]), "the first dim of scale[3] should be equal to that of groupTensor[2]."),
    (fp8_args(scale=[np.ones((2, 5), F32)]), "the N dim of scale[5] should be 1 or equal to that of weight[8]."),
    # the group-type checks after the function checks
    (fp8_args(split=0), "When y is not separated, splitItem should be 2/3, but current splitItem is 0."),
    # the MX modes (FLOAT8_E8M0 scales): CheckGroupedMatmulMxfp8 / CheckGroupedMatmulMxfp4's first checks
    (fp8_args(scale=[SE8M0], b=[SE.astype(ml_dtypes.bfloat16)]), "mxfp8 does not support bias."),
    (fp8_args(scale=[SE8M0]), "perTokenScale should not be nullptr in mx case."),
    (fp8_args(x=[XF4], w=[WF4], scale=[SE8M0]), "perTokenScale should not be nullptr in mx case."),
    # the emulator's limits, after the vendor's checks
    (fp8_args(pts=[np.ones(6, F32)]), "per-token and per-tile modes are not modelled by the emulator"),
    (fp8_args(scale=[SE8M0], pts=[PE8M0]), "the MX FLOAT8 mode (FLOAT8_E8M0 scales) of the 950 is not modelled"),
    (fp8_args(x=[XF4], w=[WF4], scale=[SE8M0], pts=[PE8M0]), "the MX FLOAT4 mode of the 950 is not modelled"),
]


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
@pytest.mark.parametrize("a,text", FP8_INVALID)
def test_fp8_invalid_arguments(a, text):
    F.expect_error(ops.GroupedMatmulV4, a, INVALID, text)


def fp8_on_a2():
    """Atlas A2's op_api has no 8-bit float quant: CheckFunctionParams' last words (run in test_grouped_matmul.py's
    Atlas A2 subprocess)."""
    F.expect_error(ops.GroupedMatmulV4, fp8_args(), INVALID, "GMM: there is no matching xDtype and weightDtype "
                   "pattern. case with x dtype FLOAT8_E4M3FN and weight dtype FLOAT8_E4M3FN is not supported.")


FP8_TORCH_BODY = """
import numpy as np
torch.manual_seed(0)
vals = torch.tensor([0.25, 0.5, 1.0, 1.5, 2.0, -1.0, -0.5, 3.0])
x = vals[torch.randint(0, 8, (16, 256))].to(torch.float8_e4m3fn)
w = vals[torch.randint(0, 8, (1, 256, 32))].to(torch.float8_e4m3fn)
f = (torch.rand(1, 32) * 10 - 5)
words = (f.view(torch.int32).to(torch.int64) & 0xFFFFE000) & 0xFFFFFFFF   # op-plugin's 950 case: the fp32 bits
for key, sc in (("int64", words), ("float32", f)):
    y = torch_npu.npu_grouped_matmul([x.npu()], [w.npu()], scale=[sc.npu()], group_list=torch.tensor([16]).npu(),
                                     split_item=2, group_type=0, output_dtype=torch.float32)[0]
    OUT[key] = [enc(to_np(v)) for v in (x.view(torch.int8), w.view(torch.int8), sc, y)]
"""


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path")
def test_torch_npu_grouped_matmul_fp8():
    """op-plugin's test_npu_grouped_matmul_quant_950 call (FLOAT8_E4M3FN x and weight, a (1, 32) INT64 or FLOAT
    scale, y FLOAT32, one group) on the 950: equal to the direct call and to the reference."""
    out = F.torch_npu_arrays(FP8_TORCH_BODY, soc="Ascend950PR")
    for key in ("int64", "float32"):
        x, w, sc, y = out[key]
        x, w = x.view(E4), w.view(E4)
        direct = fp8_gmm(x, w, sc, np.zeros((16, 32), F32), [16], version=4)
        assert F.bits_equal(y, direct), key
        assert F.bits_equal(y, fp8_reference(fp8_values(E4, x), fp8_values(E4, w), sc, np.zeros((16, 32), F32),
                                             "float32", [16])), key


# ---- the Ascend 950's weight-quant checker (grouped_matmul_wq950.c): its first checks, then the emulator's refusal --
W4 = np.zeros((2, 32, 1), np.int32)   # INT4 packed in INT32 words of eight: (E, K, N / 8)
PT = np.ones(6, F32)
NZ_PARAMS = (None, 256)   # tuningConfig, quantGroupSize


def nz_call(**kw):
    a = dict(x=[XE.astype(np.float32).astype(I8)], w=[W4], b=None, scale=[np.ones((2, 8), F32)], off=None,
             aqs=[np.ones((2, 1, 8), F32)], aqo=None, pts=[PT], gl=np.array([2, 4], I64), ai=None, aqsc=None, aqof=None,
             split=3, gtype=0, gltype=1, act=0)
    a.update(kw)
    return (*a.values(), *NZ_PARAMS, [np.zeros((6, 8), np.float16)], None, None)


WQ950_INVALID = [   # CheckGroupedMatmulWeightQuant91095's first checks, in its order (aclnnGroupedMatmulWeightNz)
    (nz_call(act=1, gtype=-1, split=0, gl=None), "Activation is not supported on Ascend910_95 platforms."),
    (nz_call(gtype=-1, split=0, gl=None),
     "Weight quant cases with x dtype [INT8] and weight dtype [INT4] only support groupType 0 (split M), but the "
     "actual groupType is [-1]."),
    (nz_call(w=[W4, W4]), "When groupType is 0 (split M), the sizes of x, weight and y should all be 1, but the "
     "actual sizes are [1], [2] and [1]."),
    (nz_call(gl=None), "GroupListOptional should not be nullptr when groupType is 0."),
    (nz_call(aqs=None, scale=None), "AntiquantScale must not be nullptr in antiquant, but now is nullptr."),
    (nz_call(aqo=[np.ones((2, 1, 8), F32)], scale=None),
     "antiquantOffsetOptional is not supported when weightDtype is fp8/fp4 or xDtype-weightDtype is int8-int4."),
    (nz_call(scale=None, off=[SE]), "In weight quant case, scale must not be null when xDtype-weightDtype is int8-int4."),
    (nz_call(off=[SE], pts=None), "In WeightQuant case, offset must be null."),
    (nz_call(pts=None), "In WeightQuant case, perTokenScale must not be null when xDtype-weightDtype is "
     "float8_e4m3fn-float4_e2m1 or int8-int4."),
    (nz_call(), "x INT8 with weight INT4: the 950's weight-quantised paths are not modelled by the emulator"),
]


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
@pytest.mark.parametrize("a,text", WQ950_INVALID)
def test_950_weight_quant_checks(a, text):
    F.expect_error(ops.GroupedMatmulWeightNz, a, INVALID, text)


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
def test_950_weight_quant_entries():
    """V4 / V5 keep an INT32 weight INT32 (not a weight-quant pair the 950 takes); fp16 x with an INT8 weight through
    the WeightNz entry: CheckUnsupportedApi's words."""
    F.expect_error(ops.GroupedMatmulV4, qargs(w=[W0.astype(np.int32)], x=[X0.astype(np.float16)]), INVALID,
                   "Weight quant case with x dtype [FLOAT16] and weight dtype [INT32] is not supported.")
    F.expect_error(ops.GroupedMatmulWeightNz, nz_call(x=[XE.astype(np.float32).astype(np.float16)],
                                                      w=[np.zeros((2, 32, 8), I8)], aqs=None, scale=None, pts=None),
                   INVALID, "When xDtype-weightDtype is fp16/bf16-int8, only aclnnGroupedMatmul V2/V3/V4/V5 support "
                   "single-single-single scenario.")


A8W4_NZ_TORCH_BODY = """
def call():
    x = torch.zeros((8, 512), dtype=torch.int8).npu()
    w = torch_npu.npu_format_cast(torch.zeros((2, 512, 64), dtype=torch.int32).npu(), 29, customize_dtype=torch.int8)
    w4 = torch_npu.npu_convert_weight_to_int4pack(w)
    scale = torch.zeros((2, 2, 64), dtype=torch.int64).npu()
    return torch_npu.npu_grouped_matmul([x], [w4], bias=[torch.zeros((2, 64)).npu()], scale=[scale],
        per_token_scale=[torch.ones(8).npu()], group_list=torch.tensor([4, 8]).npu(), split_item=3, group_type=0,
        group_list_type=1, output_dtype=torch.bfloat16)[0]
run_array("a8w4", call)
"""


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path")
def test_torch_npu_a8w4_weight_nz_on_950():
    """op-plugin's test_npu_grouped_matmul_a8w4_per_group_weight_nz call (an INT4-packed FRACTAL_NZ weight, a UINT64
    per-group scale, no antiquantScale: torch_npu's aclnnGroupedMatmulWeightNz with quantGroupSize 256) on the 950:
    the S8S4 per-group path (test_grouped_matmul_s8s4.py checks its arithmetic): zero operands give zeros."""
    from _math_ops import torch_npu_run, dec
    r = torch_npu_run(A8W4_NZ_TORCH_BODY, {}, soc="Ascend950PR")["a8w4"]
    assert "error" not in r, r
    y = dec(r)
    assert y.shape == (8, 64) and not np.any(y.astype(F32))


# ---- the Ascend 950's INT8 x INT8 and A4W4 (grouped_matmul_fp8.c: CheckGroupedMatmul91095) ------------------------
# The 950's CheckFunctionParams sends INT8 x INT8 to its own checker (aclnn_grouped_matmul_910_95_checker.cpp): the
# shared first checks, split M only, CheckInt8QuantParams (y FLOAT16 / BFLOAT16 only, then the bias, scale and
# per-token dtypes, CheckNonPerGroupQuantDim / Shape, a 1-D per-token scale of x's M); calls that pass run the arch35
# A8W8 steps (test_950_int8_against_kernel_steps) except a UINT64 / INT64 scale with a float bias (refused). INT4 x
# (INT32 x read as packed INT4) ends in the checker's last words after the shared checks.
PT10 = np.ones(M, F32)
S_BF = S0.astype(BF)
Y_BF = np.zeros((M, N), BF)
A8W8_950 = ("x and weight INT8 on the Ascend 950 with a UINT64 / INT64 scale and a float bias: the arch35 vector "
            "epilogue (GQmmMixRegbaseKernel) reads the 64-bit word as a number; not modelled by the emulator")
NPG = "In non-pergroup quantification mode, "
INT8_950_INVALID = [   # in the checker's order (each row would pass every check before its own)
    (qargs(act=1, scale=None), "Activation is not supported on Ascend910_95 platforms."),
    (qargs(scale=None, gl=None), "In quant case, scaleOptional should not be nullptr."),
    (qargs(gl=None, off=[S0]), "In quant case, groupListOptional should not be nullptr."),
    (qargs(off=[S0], y=[np.zeros((M, N), I32)]), "Quant case does not support offset."),
    (qargs(w=[W0[0], W0[1], W0[2]], scale=[S0[0], S0[1], S0[2]]),
     "In quant case, the size of x, weight and y should all be 1, but actual sizes are 1, 3 and 1."),
    (qargs(scale=[S0, S0]), "the scale / perTokenScale lists must hold as many tensors as x"),
    (qargs(w=[np.ones((3, K, 0), I8)], scale=[np.ones((3, 0), F32)], y=[np.zeros((M, 0), np.float16)]),
     "In quant case, the N value[0] should be positive."),
    (qargs(gtype=-1, split=0, w=[W0[0]], scale=[S0[0]], y=[np.zeros((M, N), I32)]),
     "Int8 case only supports groupType 0 (split M), but actual groupType is -1"),
    # CheckInt8QuantDtype: y before bias before scale before the per-token scale
    (qargs(y=[np.zeros((M, N), I32)], b=[np.ones((3, N), BF)]),
     "Expect y dtype to be float16 or bfloat16 in int8 quant case, but actual dtype is INT32"),
    (qargs(y=[np.zeros((M, N), I8)], scale=[S0.view(I32).astype(I64)]),
     "Expect y dtype to be float16 or bfloat16 in int8 quant case, but actual dtype is INT8"),
    (qargs(b=[np.ones((3, N), BF)], scale=[S_BF]),
     "When y dtype is float16, the bias dtype should be int32, float16 or float32, but actual dtype is BFLOAT16"),
    (qargs(y=[Y_BF], b=[np.ones((3, N), np.float16)], scale=[S0.astype(np.float16)]),
     "When y dtype is bfloat16, the bias dtype should be int32, bfloat16 or float32, but actual dtype is FLOAT16"),
    (qargs(scale=[S_BF], pts=[np.ones(M, np.float16)]),
     "When y dtype is float16, the scale dtype should be uint64, int64 or float32, but actual dtype is BFLOAT16"),
    (qargs(y=[Y_BF], scale=[S0.astype(np.float16)]), "When y dtype is bfloat16, the scale dtype should be bfloat16, "
     "uint64, int64 or float32, but actual dtype is FLOAT16"),
    (qargs(pts=[np.ones(M, np.float16)], scale=[S0.view(I32).astype(I64)]),
     "The perTokenScaleOptional dtype should be float32 in int8 quant case, but actual dtype is FLOAT16"),
    (qargs(pts=[PT10], scale=[S0.view(I32).astype(I64)]), "When perTokenScaleOptional is not nullptr and y dtype is "
     "float16, the scale dtype should be float32, but actual dtype is UINT64"),
    (qargs(y=[Y_BF], pts=[PT10], scale=[S0.view(I32).astype(I64)]), "When perTokenScaleOptional is not nullptr and "
     "y dtype is bfloat16, the scale dtype should be bfloat16 or float32, but actual dtype is UINT64"),
    # CheckNonPerGroupQuantDim, CheckNonPerGroupQuantShape, then the per-token scale's rank and M
    (qargs(scale=[np.ones((3, 1, N), F32)], pts=[np.ones((M, 1, 1), F32)]),
     NPG + "the dim num of scale should be 1 or 2, but actual dim num is 3"),
    (qargs(scale=[np.ones((2, N), F32)], pts=[np.ones((M, 1, 1), F32)]),
     NPG + "the dim num of perTokenScale should be 1 or 2, but actual dim num is 3."),
    (qargs(scale=[np.ones((2, N), F32)], pts=[np.ones(4, F32)]),
     NPG + "the first dim of scale[2] should be equal to that of groupTensor[3]."),
    (qargs(scale=[np.ones((3, 5), F32)], pts=[np.ones(4, F32)]),
     NPG + "the N dim of scale[5] should be 1 or equal to that of weight[8]."),
    (qargs(pts=[np.ones(4, F32)]), NPG + "when groupType is 0 (split M) and perTokenScale has 1 dim, the first dim of "
     "perTokenScale[4] should be equal to that of x[10] or that of groupTensor[3]."),
    (qargs(pts=[np.ones((4, 1), F32)]), NPG + "when groupType is 0 (split M) and perTokenScale has 2 dims, the first "
     "dim of perTokenScale[4] should be equal to that of groupTensor[3]."),
    (qargs(pts=[np.ones((3, 2), F32)]), NPG + "when groupType is 0 (split M) and perTokenScale has 2 dims, the second "
     "dim of perTokenScale[2] should be equal to 1."),
    (qargs(pts=[np.ones((3, 1), F32)]),
     "In int8 quant case, the dim num of perTokenScaleOptional should be 1, but actual dim num is 2"),
    (qargs(pts=[np.ones(3, F32)]),
     "In int8 quant case, the M dim[3] of perTokenScaleOptional should be equal to that of x[10]"),
    # then CheckParamDifferentGroupType, then the emulator's refusal
    (qargs(split=0), "When y is not separated, splitItem should be 2/3, but current splitItem is 0."),
    (qargs(y=[Y_BF], scale=[S0.view(I32).astype(I64)], b=[np.ones((3, N), F32)]), A8W8_950),
    (qargs(scale=[np.ones((3, 1), F32).view(I32).astype(np.uint64)], b=[np.ones((3, N), np.float16)]), A8W8_950),
    # an INT32 weight with INT8 x: the weight-quant checker (grouped_matmul_wq950.c)
    (qargs(w=[W0.astype(np.int32)]), "Weight quant case with x dtype [INT8] and weight dtype [INT32] is not supported."),
]


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
@pytest.mark.parametrize("a,text", INT8_950_INVALID)
def test_950_int8_checks(a, text):
    F.expect_error(ops.GroupedMatmulV4, a, INVALID, text)


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
def test_950_int8_entries():
    """V5 and WeightNz: the same checker; CheckQuantCasesFormat refuses a FRACTAL_NZ weight (the Dec-2025 tree's
    words: the WeightNz entry relabels its weights NZ only after the checks); WeightNz's NZ alignment comes before
    the refusal; an empty x succeeds (CheckZeroShape; K 0 is refused by CheckGeneralQuantShape)."""
    from test_grouped_matmul_nz import nz
    a = qargs()
    got = ops.GroupedMatmulV5(*a[:16], None, *a[16:])[0][0]
    assert np.array_equal(np.asarray(got), np.full((M, N), K, np.float16))
    nz_a = lambda **kw: (*qargs(**kw)[:16], None, 0, *qargs(**kw)[16:])   # noqa: E731
    w32 = np.ones((3, 32, 32), I8)
    F.expect_error(ops.GroupedMatmulWeightNz, nz_a(w=[nz(w32)], x=[np.ones((M, 32), I8)], scale=[np.ones((3, 32),
                   F32)], y=[np.zeros((M, 32), np.float16)]), INVALID,
                   "The format of weight[0] FRACTAL_NZ is invalid. It should only be ND.")
    F.expect_error(ops.GroupedMatmulWeightNz, nz_a(), INVALID, "When weight(INT8) format is FRACTAL_NZ, weight'shape("
                   "k[24], n[8]) should be divisible by the following shape")
    got = gmm([np.zeros((0, K), I8)], [W0], None, [S0], [np.zeros((0, N), np.float16)])   # M 0 (K 0: refused)
    assert got.shape == (0, N)


# ---- the Ascend 950's INT8 x INT8 arithmetic (arch35, recursion-ascend/ops-transformer a093e954) ------------------
# The tiling's SetKernelType (grouped_quant_matmul_tiling.cpp): a per-tensor scale ((g,) or (g, 1)) without a
# per-token scale or a FLOAT / FLOAT16 / BFLOAT16 bias, or a UINT64 / INT64 scale, takes the fixpipe template
# (gqmm_cube_on_the_fly.h GmmASWKernel: a FLOAT scale's bits & 0xFFFFE000, a BFLOAT16 one's bits << 16 first, or the
# word itself, to SetQuantScalar / SetQuantVector); the rest the vector template (gqmm_mix_online_dynamic.h
# VFDoDequant: int32 L0C cast to fp32 RINT, * scale, * perTokenScale, + the float bias widened, CAST_RINT). An INT32
# bias goes to the Matmul API's SetBias in both (added to the int32 L0C).

def wrap32(v):
    return ((np.asarray(v, np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int64)


def i8_950_reference(x, w, scale, y0, y_name, gl, gl_type=1, bias=None, pt=None):
    y = y0.copy()
    g_n, n = w.shape[0], w.shape[2]
    per_channel = scale.ndim == 2 and scale.shape[1] == n and n != 1
    word = scale.dtype in (np.int64, np.uint64)
    fbias = bias is not None and bias.dtype != np.int32
    fixpipe = (word or not per_channel) and pt is None and not fbias
    sc = scale.reshape(g_n, -1)
    start = 0
    for g in range(len(gl)):
        end = gl[g] if gl_type == 0 else start + gl[g]
        acc = x[start:end].astype(np.int64) @ w[g].astype(np.int64)
        if bias is not None and not fbias:
            acc = acc + bias[g].astype(np.int64)
        acc = wrap32(acc)
        s = sc[g] if per_channel else sc[g, :1]
        if fixpipe:
            bits = (s.view(np.uint64) & 0xFFFFFFFF).astype(np.uint32) if word else s.astype(F32).view(np.uint32)
            f = (acc.astype(np.float64) * fp19_of(bits)).astype(F32)   # exact product (< 2^53), rounded once
        else:
            f = acc.astype(F32) * s.astype(F32)
            if pt is not None:
                f = f * pt[start:end, None]
            if fbias:
                f = f + bias[g].astype(F32)
        y[start:end] = R.cast(f, y_name)
        start = end
    return y


# scale kind, y, bias dtype (None: no bias), per-token scale
I8_950_CASES = [("f_tensor", "float16", None, False), ("f_tensor1", "bfloat16", "int32", False),
                ("bf_tensor", "bfloat16", None, False), ("f_chan", "float16", "int32", False),
                ("bf_chan", "bfloat16", "int32", False), ("u64_chan", "float16", "int32", False),
                ("i64_tensor", "bfloat16", None, False), ("f_tensor", "float16", "float32", False),
                ("f_chan", "bfloat16", "bfloat16", True), ("f_tensor1", "float16", "float16", True),
                ("bf_tensor", "bfloat16", None, True)]


def i8_950_scale(kind, rng, g, n):
    shape = (g, n) if kind.endswith("chan") else (g,) if kind.endswith("tensor") else (g, 1)
    s = rng.uniform(-0.02, 0.02, shape).astype(F32)   # random low mantissa bits: the 19-bit cut shows
    if kind.startswith("bf"):
        return s.astype(BF)
    if kind.startswith("f"):
        return s
    words = s.view(np.uint32).astype(np.uint64)   # the fp32 bits in the low word (as the fp8 tests)
    return words.view(I64) if kind.startswith("i64") else words


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path")
@pytest.mark.parametrize("kind,y_name,bias_name,per_token", I8_950_CASES)
def test_950_int8_against_kernel_steps(kind, y_name, bias_name, per_token):
    rng = np.random.default_rng(len(kind) * 7 + len(y_name) + (len(bias_name) if bias_name else 0) + per_token)
    counts = [4, 0, 9, 3]
    m, k, n, g = sum(counts) + 2, 40, 16, len(counts)
    x = rng.integers(-128, 128, (m, k)).astype(I8)
    w = rng.integers(-128, 128, (g, k, n)).astype(I8)
    s = i8_950_scale(kind, rng, g, n)
    bias = None
    if bias_name == "int32":
        bias = rng.integers(-2 ** 31, 2 ** 31, (g, n), dtype=np.int64).astype(I32)   # wraps with the sum
    elif bias_name:
        bias = rng.uniform(-300, 300, (g, n)).astype(R.np_dtype(bias_name))
    pt = rng.uniform(0.5, 2, m).astype(F32) if per_token else None
    y0 = np.full((m, n), 7, R.np_dtype(y_name))
    for gl_type, gl in ((1, counts), (0, list(np.cumsum(counts)))):
        a = dict(x=[x], w=[w], b=None if bias is None else [bias], scale=[s], pts=None if pt is None else [pt],
                 gl=np.asarray(gl, I64), gltype=gl_type, y=[y0])
        got = gmm950(version=4 + gl_type, **a)
        want = i8_950_reference(x, w, s, y0, y_name, gl, gl_type, bias, pt)
        assert F.bits_equal(got, want), (kind, y_name, bias_name, per_token, gl_type)


def gmm950(version=5, **kw):
    a = qargs(**kw)
    if version == 5:
        return ops.GroupedMatmulV5(*a[:16], None, *a[16:])[0][0]
    return ops.GroupedMatmulV4(*a[:16], a[16], None, None)[0][0]


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path")
def test_950_int8_fixpipe_keeps_19_bits():
    """A per-tensor FLOAT scale goes to the fixpipe cut to 19 bits (its 2^-11, 2^-12 bits dropped: 3 * 1 = 3); with a
    FLOAT bias (the vector template: fp32 steps) or per channel it keeps them (3 * s rounds up to 3 + 2^-9 in fp16)."""
    x, w = np.ones((2, 3), I8), np.ones((1, 3, 2), I8)
    s = np.float32(1 + 2.0 ** -11 + 2.0 ** -12)
    a = dict(x=[x], w=[w], gl=np.array([2], I64), y=[np.zeros((2, 2), np.float16)])
    assert np.array_equal(gmm950(scale=[np.array([s], F32)], **a), np.full((2, 2), 3, np.float16))
    assert np.array_equal(gmm950(scale=[np.array([[s]], F32)], **a), np.full((2, 2), 3, np.float16))
    up = np.full((2, 2), 3 + 2.0 ** -9, np.float16)
    assert np.array_equal(gmm950(scale=[np.array([s], F32)], b=[np.zeros((1, 2), F32)], **a), up)
    assert np.array_equal(gmm950(scale=[np.full((1, 2), s, F32)], **a), up)
    # BFLOAT16 y, a BFLOAT16 scale: its bits << 16 (7 mantissa bits, nothing to cut)
    sb = np.array([1 + 2.0 ** -7], BF)
    got = gmm950(scale=[sb], **{**a, "y": [np.zeros((2, 2), BF)]})
    assert np.array_equal(got.astype(F32), np.full((2, 2), 3 + 2.0 ** -5, F32))   # 3 + 3 * 2^-7: a tie, to even


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path")
def test_950_int8_weight_nz_storage():
    """WeightNz on the 950: the checker sees the ND label, the kernel reads the weight's NZ storage (16 x 32 blocks)."""
    from test_grouped_matmul_nz import nz
    rng = np.random.default_rng(5)
    counts, k, n = [3, 5], 32, 64
    x = rng.integers(-128, 128, (sum(counts), k)).astype(I8)
    w = rng.integers(-128, 128, (2, k, n)).astype(I8)
    s = rng.uniform(-0.02, 0.02, (2,)).astype(F32)
    y0 = np.zeros((sum(counts), n), np.float16)
    a = qargs(x=[x], w=[nz(w, fmt=2)], scale=[s], gl=np.array(counts, I64), y=[y0])
    got = ops.GroupedMatmulWeightNz(*a[:16], None, 0, *a[16:])[0][0]
    assert F.bits_equal(got, i8_950_reference(x, w, s, y0, "float16", counts))


X4 = np.ones((M, 64), ml_dtypes.int4)
W4_4 = np.ones((3, 64, N), ml_dtypes.int4)
A4W4_950_INVALID = [   # INT4 x, or INT32 x / weight read as packed INT4: the shared checks, then the last words
    (qargs(x=[X4], w=[W4_4], scale=None), "In quant case, scaleOptional should not be nullptr."),
    (qargs(x=[X4], w=[W4_4], gl=None), "In quant case, groupListOptional should not be nullptr."),
    (qargs(x=[X4], w=[W4_4], off=[S0]), "Quant case does not support offset."),
    (qargs(x=[X4], w=[W4_4]), "Quant case with x dtype INT4 and weight dtype INT4 is not supported."),
    (qargs(x=[np.ones((M, 8), np.int32)], w=[np.ones((3, 64, 1), np.int32)], scale=None),
     "In quant case, scaleOptional should not be nullptr."),
    (qargs(x=[np.ones((M, 8), np.int32)], w=[np.ones((3, 64, 1), np.int32)]),
     "Quant case with x dtype INT4 and weight dtype INT4 is not supported."),
    (qargs(x=[np.ones((M, 8), np.int32)], w=[np.ones((3, 64, N), I8)]),
     "Quant case with x dtype INT4 and weight dtype INT8 is not supported."),
]


@pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's checks")
@pytest.mark.parametrize("a,text", A4W4_950_INVALID)
def test_950_a4w4_checks(a, text):
    for fn in (ops.GroupedMatmulV4, ops.GroupedMatmulV5, ops.GroupedMatmulWeightNz):
        b = a if fn is ops.GroupedMatmulV4 else a[:16] + (None,) + a[16:]
        if fn is ops.GroupedMatmulWeightNz:
            b = a[:16] + (None, 0) + a[16:]
        F.expect_error(fn, b, INVALID, text)
