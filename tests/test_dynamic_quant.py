"""Dynamic quantisation (native_stubs/src/ops/quant/dynamic_quant.toml): aclnnDynamicQuant, V2, V3, V4 (hicann/ops-nn
quant/dynamic_quant). Data-driven: a call is a row of CASES, checked bit for bit against the NumPy reference below,
written from the vendor's kernels (op_kernel/dynamic_quant_*.h for Atlas A2 / A3, op_kernel/arch35 for Ascend 950)
and tilings (which A2 template runs decides how the scale is computed) -- never from the emulator's C. Codes: the
independent NumPy casts of tests/reference/arnq_casts.py. Ascend 950 in-process, Atlas A2 in one subprocess, the
validation codes and messages in the op_api's order, one torch_npu child (npu_dynamic_quant,
npu_dynamic_quant_asymmetric)."""
from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import arnq_casts as casts
import _fused_ops as F

A2 = F.ON_A2
F32 = np.float32
INVALID, NULLPTR, INNER, INNER_NULLPTR = 161002, 161001, 561000, 561103
BF16 = ml_dtypes.bfloat16


# ---- reference -----------------------------------------------------------------------------------------------------

def qmax(y, dst_max=0.0):
    return {"int8": 127.0, "int4": 7.0, "int32": 7.0, "float8_e5m2": 57344.0, "float8_e4m3fn": 448.0,
            "hifloat8": dst_max if dst_max else 32768.0}[y]


def qrange(y, dst_max=0.0):
    """Ascend 950 asymmetric: the kernels' *_OFFSET_VALUE."""
    return {"int8": 255.0, "int4": 15.0, "int32": 15.0, "float8_e5m2": 114688.0, "float8_e4m3fn": 896.0,
            "hifloat8": 2 * (dst_max if dst_max else 32768.0)}[y]


def a2_scale_is_max_times_inverse(rows, n, smooth, y, group_given=False):
    """dynamic_quant_tiling.cpp: the special-last-dim (key 100), multi-row (10) and double-buffer (2/3) templates
    write scale = max * (1 / 127); the plain (0/1), large-shape (6) and MoE (7/8) ones 1 / (127 / max). A groupIndex
    (even without smooth scales) rules out keys 100 and 10."""
    if not group_given and y == "int8" and n in (4096, 5120, 10240) and 4 <= rows <= 384:
        return True
    max_ub = (196608 - 1024 - (256 + 64 + 12 * 64 * 4)) // (15 if smooth else 11) // 64 * 64
    if not group_given and 128 <= n <= min(max_ub, 255 * 64) and n % 8 == 0:
        return True
    aligned = (n + 15) // 16 * 16
    if (196608 - 1024) // ((17 if smooth else 11) * aligned) == 0:
        return False
    return (19 if smooth else 13) * aligned < 196608 - 1024


def group_of_rows(group, rows):
    """MoE: the smooth row each row uses, as GetSmoothIndex walks the cumulative ends."""
    out, idx, gv = [], 0, int(group[0])
    for r in range(rows):
        if gv < r + 1:
            found = idx + 1
            for k in range(idx + 1, len(group)):
                gv = int(group[k])
                if gv >= r + 1:
                    found = k
                    break
            idx = min(found, len(group) - 1)
        out.append(idx)
    return np.array(out)


def quant_set(v, y, asym, soc, s1, dst_max):
    """One set of values sharing a scale (fp32 steps): quantised values, scale, offset."""
    M = F32(qmax(y, dst_max))
    with np.errstate(all="ignore"):
        if soc == "950":
            if not asym:
                sc = F32(np.abs(v).max() * F32(F32(1) / M))
                return v / sc, sc, F32(0)
            sc = F32((v.max() - v.min()) * F32(F32(1) / F32(qrange(y, dst_max))))
            of = F32(M - F32(v.max() / sc))
            return (v / sc) + of, sc, of
        if not asym:
            q = F32(M / np.abs(v).max())
            sc = F32(np.abs(v).max() * F32(F32(1) / M)) if s1 else F32(F32(1) / q)
            return v * q, sc, F32(0)
        rng, o = (F32(15), F32(7)) if y in ("int4", "int32") else (F32(255), F32(127))
        sc = max(F32((v.max() - v.min()) / rng), F32(1e-12))
        of = F32(o - F32(v.max() / sc))
        return (v * F32(F32(1) / sc)) + of, sc, of


def encode(q, y):
    if y == "int8":
        return casts.encode_int8(q)
    if y == "int4":
        return casts.to_integer(q, -8, 7).astype(np.int8)
    if y == "int32":
        return casts.int4_bytes_to_int32(casts.encode_int4(q))
    if y == "hifloat8":
        return casts.encode_hif8(q, "zero")
    return casts.encode_fp8(q, y, "zero")


def dynamic_quant_ref(x, smooth, group, y, asym, mode, soc, dst_max=0.0, group_given=None):
    """y codes (int8 values, INT4 values one per element, INT32 words, FP8 / HiF8 bytes), scale, offset."""
    v = np.asarray(x).astype(F32)
    shape = v.shape
    n = shape[-1]
    rows = v.size // n
    v = v.reshape(rows, n)
    if smooth is not None:
        s = np.asarray(smooth).astype(F32)
        if mode == "perchannel":
            v = v * np.tile(s, rows // s.size)[:, None]
        elif group is not None:
            v = v * s[group_of_rows(group, rows)]
        else:
            v = v * s[None, :]
    given = group is not None if group_given is None else group_given
    s1 = soc == "a2" and not asym and group is None and \
        a2_scale_is_max_times_inverse(rows, n, smooth is not None, y, given)
    q = np.empty_like(v)
    if mode == "pertoken":
        scale, offset = np.empty(rows, F32), np.empty(rows, F32)
        for r in range(rows):
            q[r], scale[r], offset[r] = quant_set(v[r], y, asym, soc, s1, dst_max)
    elif mode == "pertensor":
        qq, sc, of = quant_set(v.ravel(), y, asym, soc, s1, dst_max)
        q, scale, offset = qq.reshape(v.shape), np.array([sc]), np.array([of])
    else:
        m = shape[-2]
        b = rows // m
        vb = v.reshape(b, m, n)
        qb = np.empty_like(vb)
        scale, offset = np.empty((b, n), F32), np.empty((b, n), F32)
        for i in range(b):
            for j in range(n):
                qb[i, :, j], scale[i, j], offset[i, j] = quant_set(vb[i, :, j], y, asym, soc, False, dst_max)
        q = qb.reshape(rows, n)
    codes = encode(q.reshape(shape), y)
    sshape = scale_shape(shape, mode)
    return codes, scale.reshape(sshape), offset.reshape(sshape)


# ---- calls ---------------------------------------------------------------------------------------------------------

Y_DT = {"int8": "int8", "int4": "int4", "int32": "int32", "float8_e4m3fn": "float8_e4m3fn",
        "float8_e5m2": "float8_e5m2", "hifloat8": "hifloat8"}
DST = {"int8": 2, "int4": 29, "int32": 3, "float8_e4m3fn": 36, "float8_e5m2": 35, "hifloat8": 34}


def y_shape(shape, y):
    return shape[:-1] + (shape[-1] // 8,) if y == "int32" else shape


def scale_shape(shape, mode):
    return shape[:-1] if mode == "pertoken" else (1,) if mode == "pertensor" else shape[:-2] + shape[-1:]


def as_codes(t, y):
    a = t.numpy() if isinstance(t, pyaclnn.Tensor) else np.asarray(t)
    if y == "int4":
        return a.astype(np.int8)
    if y in ("float8_e4m3fn", "float8_e5m2", "hifloat8"):
        return a.view(np.uint8)
    return a


def run(op, x, smooth, group, y, asym, mode="pertoken", dst_max=0.0):
    shape = x.shape
    yo = pyaclnn.zeros(y_shape(shape, y), Y_DT[y])
    sc = np.zeros(scale_shape(shape, mode), F32)
    of = np.zeros(scale_shape(shape, mode), F32) if asym else None
    if op == "V1":
        got = ops.DynamicQuant(x, smooth, yo, sc)
    elif op == "V2":
        got = ops.DynamicQuantV2(x, smooth, group, DST[y], yo, sc, of)
    elif op == "V3":
        got = ops.DynamicQuantV3(x, smooth, group, DST[y], not asym, mode, yo, sc, of)
    else:
        got = ops.DynamicQuantV4(x, smooth, group, DST[y], not asym, mode, dst_max, yo, sc, of)
    return as_codes(yo, y), np.asarray(got[1]), (np.asarray(got[2]) if asym else None)


def data(shape, dt, seed, spread=3.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * spread).astype(dt)


# op, x dtype, shape, y, smooth ("row" / "group" / None), asym, mode, dstTypeMax
CASES_950 = [
    ("V1", np.float16, (5, 32), "int8", None, False, "pertoken", 0.0),
    ("V1", BF16, (2, 3, 48), "int8", "row", False, "pertoken", 0.0),
    ("V2", BF16, (4, 64), "int4", None, True, "pertoken", 0.0),
    ("V2", np.float16, (3, 64), "int32", "row", False, "pertoken", 0.0),
    ("V2", BF16, (7, 32), "int8", "group", True, "pertoken", 0.0),
    ("V2", np.float16, (4, 40), "float8_e4m3fn", "row", False, "pertoken", 0.0),
    ("V2", BF16, (4, 40), "float8_e5m2", None, True, "pertoken", 0.0),
    ("V2", np.float16, (3, 24), "hifloat8", None, False, "pertoken", 0.0),
    ("V3", np.float16, (3, 5, 16), "int8", None, True, "pertensor", 0.0),
    ("V3", BF16, (6, 16), "int4", "group", False, "pertensor", 0.0),
    ("V3", np.float16, (2, 5, 16), "int8", "row", False, "perchannel", 0.0),
    ("V3", BF16, (6, 8), "float8_e4m3fn", None, True, "perchannel", 0.0),
    ("V4", np.float16, (4, 32), "hifloat8", "row", False, "pertoken", 15.0),
    ("V4", BF16, (4, 32), "hifloat8", None, True, "pertensor", 224.0),
]
# Atlas A2: INT8 / INT4 / INT32 only, V1 / V2; the rows cover the templates whose scale arithmetic differs
CASES_A2 = [
    ("V1", np.float16, (5, 32), "int8", None, False, "pertoken", 0.0),          # double buffer: max * (1/127)
    ("V1", BF16, (6, 256), "int8", "row", False, "pertoken", 0.0),              # multi-row
    ("V2", np.float16, (3, 15049), "int8", None, False, "pertoken", 0.0),       # plain template: 1 / (127 / max)
    ("V2", BF16, (7, 32), "int8", "group", False, "pertoken", 0.0),             # MoE: 1 / (127 / max)
    ("V2", np.float16, (3, 15048), "int8", "group-only", False, "pertoken", 0.0),  # plain, not multi-row
    ("V2", np.float16, (7, 48), "int4", "group", True, "pertoken", 0.0),
    ("V2", BF16, (4, 64), "int32", None, True, "pertoken", 0.0),
    ("V2", np.float16, (4, 30), "int4", "row", False, "pertoken", 0.0),
]


def check_case(case, soc):
    op, dt, shape, y, sm, asym, mode, dmax = case
    seed = zlib.crc32(repr((op, np.dtype(dt).name, shape, y, sm, asym, mode)).encode()) % 1000   # per row, fixed
    x = data(shape, dt, seed)
    n, rows = shape[-1], int(np.prod(shape[:-1]))
    smooth = group = None
    if sm == "row":
        smooth = data(shape[-2] if mode == "perchannel" else n, dt, seed + 1, 0.5)
    elif sm == "group":
        smooth = data((3, n), dt, seed + 1, 0.5)
        group = np.array([2, 2, rows], np.int32)       # an empty group in the middle
    if sm == "group-only":                             # a groupIndex without smooth scales: ignored, but it
        got = run(op, x, None, np.array([rows], np.int32), y, asym, mode, dmax)   # changes A2's template choice
        want = dynamic_quant_ref(x, None, None, y, asym, mode, soc, dmax, group_given=True)
    else:
        got = run(op, x, smooth, group, y, asym, mode, dmax)
        want = dynamic_quant_ref(x, smooth, group, y, asym, mode, soc, dmax)
    assert F.bits_equal(got[1], want[1]), (case, got[1], want[1])
    if asym:
        assert F.bits_equal(got[2], want[2]), (case, got[2], want[2])
    assert np.array_equal(got[0], want[0]), (case, np.argwhere(got[0] != want[0])[:5])


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_against_reference_950():
    for case in CASES_950:
        check_case(case, "950")


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_documented_formula_and_specials():
    """The docs' formula (scale = row max |x| / 127, y = round(x / scale)) within one code; a row of zeros and a row
    holding inf and NaN go as the kernels' fp32 steps take them."""
    x = data((4, 32), np.float16, 7)
    y, sc, _ = run("V2", x, None, None, "int8", False)
    s64 = np.abs(x.astype(np.float64)).max(-1) / 127
    assert np.allclose(sc, s64, rtol=1e-6)
    assert np.abs(y - np.rint(x / s64[:, None])).max() <= 1
    x[1] = 0
    x[2, 3], x[3, 5] = np.inf, np.nan
    check = dynamic_quant_ref(x, None, None, "int8", False, "pertoken", "950")
    got = run("V2", x, None, None, "int8", False)
    assert np.array_equal(got[0], check[0]) and F.bits_equal(got[1], check[1])


def args_v2(**kw):
    a = dict(x=np.ones((2, 16), np.float16), s=None, g=None, dst=2, y=np.zeros((2, 16), np.int8),
             sc=np.zeros(2, F32), of=None)
    a.update(kw)
    return tuple(a.values())


def args_v3(**kw):
    a = dict(x=np.ones((2, 16), np.float16), s=None, g=None, dst=2, sym=True, mode="pertoken",
             y=np.zeros((2, 16), np.int8), sc=np.zeros(2, F32), of=None)
    a.update(kw)
    return tuple(a.values())


H16 = np.ones(16, np.float16)
V2_INVALID = [   # in the op_api's order: CheckNotNull, CheckAttr, CheckDtype, CheckShape, then the L0 tiling
    (args_v2(x=np.ones((2, 16), F32), y=np.zeros(3, np.int8)), INVALID, "Tensor x not implemented for FLOAT"),
    (args_v2(s=H16.astype(BF16)), INVALID, "The dtypes of x and smooth_scales are not equal."),
    (args_v2(s=H16, g=np.array([2], np.int8)), INVALID, "Tensor group_index not implemented for INT8"),
    (args_v2(y=np.zeros((2, 16), np.float16), sc=np.zeros(5, F32)), INVALID, "Tensor y not implemented for FLOAT16"),
    (args_v2(sc=np.zeros(2, np.float16)), INVALID, "Tensor scale expected dtype is FLOAT but found FLOAT16."),
    (args_v2(of=np.zeros(2, np.int32)), INVALID, "Tensor offset expected dtype is FLOAT but found INT32."),
    (args_v2(x=np.ones(16, np.float16), y=np.zeros(16, np.int8)), INVALID, "The dimNum[1] of x should be greater than 1"),
    (args_v2(s=np.ones(8, np.float16)), INVALID, "The last dim[16] of x and the dim[8] of smooth_scales shoule be equal."),
    (args_v2(s=np.ones((1, 16), np.float16)), INVALID, "The dimNum[2] of smooth_scales should be equal to one."),
    (args_v2(s=np.ones((1, 16), np.float16), g=np.ones((1, 1), np.int32)), INVALID,
     "The dimNum[2] of group_indexs should be equal to one."),
    (args_v2(y=np.zeros((2, 8), np.int8)), INVALID, "The shapes of x and y are inconsistent."),
    (args_v2(y=np.zeros((2, 4), np.int32)), INVALID, "the last dimension of output must be 1/8"),
    (args_v2(x=np.ones((2, 15), np.float16), y=np.zeros((2, 15), ml_dtypes.int4)), INVALID,
     "If y dtype is int4, the last dim of x must be divisible by 2"),
    (args_v2(sc=np.zeros((2, 1), F32)), INVALID, "consistent except for the last dimension of x."),
    (args_v2(of=np.zeros(3, F32)), INVALID, "Expected tensor for offset to have same size as tensor for scale"),
    (args_v2(s=H16, g=np.array([2], np.int64)), INNER_NULLPTR, "group_index dtype must be DT_INT32"),
    (args_v2(s=H16, g=np.array([2], np.int32)), INNER_NULLPTR, "the shape dim of smooth_scales must be equal to 2"),
    (args_v2(s=np.ones((2, 16), np.float16), g=np.array([2], np.int32)), INNER_NULLPTR,
     "smooth_scales first dim (2) and group_num (1)"),
    (args_v2(s=np.ones((1, 8), np.float16), g=np.array([2], np.int32)), INNER_NULLPTR, "smooth_scales on the last dim"),
]
V3_INVALID = [
    (args_v3(of=np.zeros(2, F32)), INVALID, "If isSymmetrical is True, offset must be nullptr."),
    (args_v3(sym=False), INVALID, "If isSymmetrical is False, offset can't be nullptr."),
    (args_v3(mode="perrow"), INVALID, "quantMode only support pertensor, pertoken and perchannel."),
    (args_v3(mode="perchannel", s=np.ones((1, 16), np.float16), g=np.array([2], np.int32)), INVALID,
     "If quantMode is perchannel, groupIndexOptional must be nullptr."),
    (args_v3(mode="pertensor"), INVALID, "If quantMode is pertensor, the shape of scale must be (1,)."),
    (args_v3(mode="perchannel", sc=np.zeros(2, F32)), INVALID, "the last dim of scale must be equal to the last dim"),
    (args_v3(mode="perchannel", s=H16, sc=np.zeros(16, F32)), INVALID,
     "If quantMode is perchannel, the second to last dim[2] of x and the last dim[16] of smooth_scales"),
    (args_v3(x=np.ones((2, 16), F32), mode="nope"), INVALID, "quantMode only support"),   # CheckAttr first
]


@pytest.mark.parametrize("args,code,text", V2_INVALID)
def test_v2_invalid_arguments(args, code, text):
    F.expect_error(ops.DynamicQuantV2, args, code, text)


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
@pytest.mark.parametrize("args,code,text", V3_INVALID)
def test_v3_invalid_arguments(args, code, text):
    F.expect_error(ops.DynamicQuantV3, args, code, text)


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_v4_dst_type_max_range_and_950_outputs():
    a = args_v3()
    F.expect_error(ops.DynamicQuantV4, a[:6] + (40000.0,) + a[6:], INNER_NULLPTR, "dst_type_max must be within")
    # FP8 / HiF8 y on Ascend 950 only (A2's list: INT4 INT8 INT32, in the subprocess)
    ops.DynamicQuantV2(*args_v2(y=pyaclnn.zeros((2, 16), "hifloat8")))


def test_null_and_empty():
    F.expect_error(ops.DynamicQuant, (None, None, np.zeros((2, 16), np.int8), np.zeros(2, F32)), NULLPTR,
                   "x must not be nullptr")
    F.expect_error(ops.DynamicQuantV2, args_v2(sc=None), NULLPTR, "scale must not be nullptr")
    y = np.full((0, 16), 5, np.int8)
    got = ops.DynamicQuantV2(np.ones((0, 16), np.float16), None, None, 2, y, np.zeros(0, F32), None)
    assert got[0].shape == (0, 16)


# ---- Atlas A2: one subprocess --------------------------------------------------------------------------------------

A2_CALLS = """
for case in T.CASES_A2:
    T.check_case(case, "a2")
for args, code, text in T.V2_INVALID[:5] + T.V2_INVALID[-4:]:
    T.test_v2_invalid_arguments(args, code, text)
import numpy as np, pyaclnn
a = T.args_v3()
T.F.expect_error(T.ops.DynamicQuantV3, a, T.INNER, "aclnnDynamicQuantV3 only support socVersion Ascend950")
T.F.expect_error(T.ops.DynamicQuantV2, T.args_v2(y=np.zeros((2, 16), T.ml_dtypes.float8_e4m3fn)), T.INVALID,
                 "Tensor y not implemented for FLOAT8_E4M3FN")
T.test_null_and_empty()
"""


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_dynamic_quant", A2_CALLS)


# ---- torch_npu -----------------------------------------------------------------------------------------------------

TORCH_BODY = """
torch.manual_seed(0)
x = (torch.randn(6, 32) * 3).to(torch.bfloat16)
sm = (torch.rand(32) + 0.5).to(torch.bfloat16)
gs = (torch.rand(3, 32) + 0.5).to(torch.bfloat16)
gi = torch.tensor([2, 2, 6], dtype=torch.int32)
y, s = torch_npu.npu_dynamic_quant(x.npu(), smooth_scales=sm.npu())
OUT["smooth"] = [enc(to_np(v)) for v in (x, sm, y, s)]
y, s = torch_npu.npu_dynamic_quant(x.npu(), smooth_scales=gs.npu(), group_index=gi.npu(), dst_type=torch.quint4x2)
OUT["group int32"] = [enc(to_np(v)) for v in (gs, gi, y, s)]
y, s, o = torch_npu.npu_dynamic_quant_asymmetric(x.npu())
OUT["asym"] = [enc(to_np(v)) for v in (y, s, o)]
y, s = torch_npu.npu_dynamic_quant(x.npu(), dst_type=torch.float8_e4m3fn)
OUT["fp8"] = [enc(to_np(y.view(torch.uint8))), enc(to_np(s))]
y, s = torch_npu.npu_dynamic_quant(x.npu(), quant_mode="pertensor")
OUT["pertensor"] = [enc(to_np(v)) for v in (y, s)]
y, s = torch_npu.npu_dynamic_quant(x.reshape(2, 3, 32).npu(), quant_mode="perchannel")
OUT["perchannel"] = [enc(to_np(v)) for v in (y, s)]
"""


def test_torch_npu_reaches_the_operators():
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY)
    x, sm, y, s = out["smooth"]
    want = dynamic_quant_ref(x, sm, None, "int8", False, "pertoken", "950")
    assert np.array_equal(y, want[0]) and F.bits_equal(s, want[1])
    gs, gi, y, s = out["group int32"]
    want = dynamic_quant_ref(x, gs, gi, "int32", False, "pertoken", "950")
    assert np.array_equal(y, want[0]) and F.bits_equal(s, want[1])
    y, s, o = out["asym"]
    want = dynamic_quant_ref(x, None, None, "int8", True, "pertoken", "950")
    assert np.array_equal(y, want[0]) and F.bits_equal(s, want[1]) and F.bits_equal(o, want[2])
    y, s = out["fp8"]
    want = dynamic_quant_ref(x, None, None, "float8_e4m3fn", False, "pertoken", "950")
    assert np.array_equal(y, want[0]) and F.bits_equal(s, want[1])
    y, s = out["pertensor"]
    want = dynamic_quant_ref(x, None, None, "int8", False, "pertensor", "950")
    assert np.array_equal(y, want[0]) and F.bits_equal(s, want[1])
    y, s = out["perchannel"]
    want = dynamic_quant_ref(x.reshape(2, 3, 32), None, None, "int8", False, "perchannel", "950")
    assert np.array_equal(y, want[0]) and F.bits_equal(s, want[1])
