"""Dequant + SwiGlu + quant (native_stubs/src/ops/activation/dequant_swiglu_quant.toml): aclnnDequantSwigluQuant and
aclnnDequantSwigluQuantV2 (hicann/ops-nn quant/dequant_swiglu_quant). Golden values from the NumPy model below,
written from the vendor kernels (op_kernel/dequant_swiglu_quant_dynamic_base.hpp and _static_base.hpp for Atlas A2,
arch35/dequant_swiglu_quant.h, _common.h and _static.h for Ascend 950) -- never from the emulator's C; Exp as libm
in double rounded to fp32 (the emulator's convention, tests/test_swi_glu.py). Ascend 950 in-process, Atlas A2 in
one subprocess, the validation codes in the wrapper's and tiling's order, one torch_npu child
(npu_dequant_swiglu_quant)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import arnq_casts as casts
import _fused_ops as F

A2 = F.ON_A2
F32 = np.float32
BF16 = ml_dtypes.bfloat16
INVALID, NULLPTR, TILING = 161002, 161001, 561002


# ---- reference -----------------------------------------------------------------------------------------------------

def exp32(v):
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(v, np.float64)).astype(F32)


QMAX = {"int8": 127, "float8_e4m3fn": 448, "float8_e5m2": 57344, "hifloat8": 32768}


def dsq_ref(x, w=None, act=None, bias=None, qs=None, qo=None, left=False, mode="dynamic", soc="950", ydt="int8"):
    """y (int8 values, or the FP8 / HiFloat8 codes as uint8), scale (float32 per row; None in static mode)."""
    x = np.asarray(x)
    two_h = x.shape[-1]
    h = two_h // 2
    rows = x.size // two_h
    xr = x.reshape(rows, two_h)
    with np.errstate(all="ignore"):
        if x.dtype == np.int32:
            if bias is not None and bias.dtype == np.int32:
                v = (xr.astype(np.int64) + bias.astype(np.int64)[None, :])
                v = ((v + 2**31) % 2**32 - 2**31).astype(np.int32).astype(F32)      # int32 Add wraps
            else:
                v = xr.astype(F32)
            v = v * w.astype(F32)[None, :]
            if act is not None:
                v = v * act.astype(F32).reshape(rows, 1)
            if bias is not None and bias.dtype != np.int32:
                v = v + bias.astype(F32)[None, :]
        else:
            v = xr.astype(F32)
            if soc == "950":
                if act is not None:
                    v = v * act.astype(F32).reshape(rows, 1)
                if bias is not None:
                    v = v + bias.astype(F32)[None, :]
        a, b = (v[:, :h], v[:, h:]) if left else (v[:, h:], v[:, :h])
        t = exp32(a * F32(-1)) + F32(1)
        sw = (a / t) * b
        q = None if qs is None else qs.astype(F32).reshape(-1)
        if mode == "dynamic":
            if q is not None:
                sw = sw * (q[0] if q.size == 1 else q[None, :])
            scale = (np.abs(sw).max(-1) / F32(QMAX[ydt])).astype(F32)
            yv = sw / scale[:, None] if soc == "950" else sw * (F32(1) / scale)[:, None]
        else:
            scale = None
            yv = sw
            if q is not None:
                o = qo.astype(F32).reshape(-1)
                if q.size == 1 and soc == "a2":
                    yv = yv * (F32(1) / q[0]) + o[0]
                else:
                    yv = yv / (q[0] if q.size == 1 else q[None, :]) + (o[0] if o.size == 1 else o[None, :])
    yv = yv.astype(F32)
    code = (casts.encode_int8(yv) if ydt == "int8" else casts.encode_hif8(yv, "zero") if ydt == "hifloat8"
            else casts.encode_fp8(yv, ydt, "zero"))
    y = code.reshape(x.shape[:-1] + (h,))
    return y, None if scale is None else scale.reshape(x.shape[:-1])


# ---- calls ---------------------------------------------------------------------------------------------------------

def run(x, w=None, act=None, bias=None, qs=None, qo=None, left=False, mode="dynamic", group=None, v2=None, ydt="int8"):
    shp = x.shape[:-1]
    y = np.zeros(shp + (x.shape[-1] // 2,), np.int8) if ydt == "int8" else pyaclnn.zeros(shp + (x.shape[-1] // 2,), ydt)
    sc = np.zeros(shp, F32)
    if v2 is None:
        return ops.DequantSwigluQuant(x, w, act, bias, qs, qo, group, left, mode, y, sc)
    dst, rnd, adim, swi = v2
    return ops.DequantSwigluQuantV2(x, w, act, bias, qs, qo, group, left, mode, dst, rnd, adim, swi, 7.0, 1.702, 1.0,
                                    y, sc)


def inputs(xdt, shape, bias_dt, seed, act=True):
    rng = np.random.default_rng(seed)
    two_h, rows = shape[-1], int(np.prod(shape[:-1]))
    if xdt == "int32":
        x = rng.integers(-2000, 2000, shape).astype(np.int32)
        w = rng.uniform(1e-3, 4e-3, two_h).astype(F32)
    else:
        x = (rng.standard_normal(shape) * 2).astype(F32).astype(np.float16 if xdt == "float16" else BF16)
        w = None
    a = rng.uniform(0.5, 1.5, rows).astype(F32) if act else None
    bias = None
    if bias_dt == "int32":
        bias = rng.integers(-100, 100, two_h).astype(np.int32)
    elif bias_dt is not None:
        bias = rng.standard_normal(two_h).astype(F32).astype({"float32": F32, "float16": np.float16,
                                                              "bfloat16": BF16}[bias_dt])
    return x, w, a, bias


# (x dtype, shape, bias dtype, quantScale elements (0: none), mode, activateLeft)
CASES = [
    ("int32", (4, 64), "int32", 32, "dynamic", False),
    ("int32", (2, 3, 128), "float32", 1, "dynamic", True),
    ("int32", (5, 48), "float16", 0, "dynamic", False),
    ("int32", (3, 96), "bfloat16", 48, "static", False),
    ("int32", (4, 32), None, 1, "static", True),
    ("float16", (6, 64), None, 32, "dynamic", False),
    ("bfloat16", (2, 256), "float32", 0, "dynamic", True),
    ("bfloat16", (3, 64), None, 32, "static", False),
]


def check_case(case, soc, seed=3, v2=None):
    xdt, shape, bias_dt, nqs, mode, left = case
    x, w, act, bias = inputs(xdt, shape, bias_dt, seed)
    rng = np.random.default_rng(seed + 9)
    h = shape[-1] // 2
    qs = rng.uniform(0.5, 2.0, nqs).astype(F32) if nqs else None
    if mode == "static" and qs is not None:
        qs = qs * F32(0.02)
    qo = rng.uniform(-3, 3, nqs).astype(F32) if nqs and mode == "static" else None
    got = run(x, w, act, bias, qs, qo, left, mode, v2=v2)
    want = dsq_ref(x, w, act, bias, qs, qo, left, mode, soc)
    assert np.array_equal(got[0], want[0]), (case, np.argwhere(got[0] != want[0])[:5])
    if want[1] is not None:
        assert F.bits_equal(got[1], want[1]), (case, got[1], want[1])
    assert h == got[0].shape[-1]


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}-{c[4]}-{int(c[5])}")
def test_against_reference_950(case):
    check_case(case, "950")
    check_case(case, "950", seed=4, v2=(2, "rint", -1, 0))


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
@pytest.mark.parametrize("ydt,code", [("float8_e4m3fn", 36), ("float8_e5m2", 35), ("hifloat8", 34)])
def test_950_fp8_and_hifloat8_outputs(ydt, code):
    """V2's dstType on Ascend 950: scale = max / the type's maximum, y = sw / scale cast (FP8 RINT, HiF8 ROUND)."""
    for mode, nqs in (("dynamic", 32), ("static", 1)):
        x, w, act, bias = inputs("int32", (4, 64), "float32", 8)
        qs = np.full(nqs, 0.05 if mode == "static" else 1.3, F32)
        qo = np.full(nqs, 0.5, F32) if mode == "static" else None
        y, sc = run(x, w, act, bias, qs, qo, mode=mode, v2=(code, "rint", -1, 0), ydt=ydt)
        want = dsq_ref(x, w, act, bias, qs, qo, mode=mode, ydt=ydt)
        assert np.array_equal(np.asarray(y.numpy() if hasattr(y, "numpy") else y).view(np.uint8), want[0]), (ydt, mode)
        if mode == "dynamic":
            assert F.bits_equal(sc, want[1])


def ties_row():
    """An INT32 row whose B values put sw / scale within an ulp of half-integers, where Atlas A2's sw * (1 / scale)
    and Ascend 950's sw / scale round to different codes: A = 1 * 32 (swish(32) = 32 in fp32), B = 1 * w."""
    bmax = F32(0.7734)
    sc = F32(F32(32) * bmax / F32(127))
    inv = F32(F32(1) / sc)
    ws = [bmax]
    for k in range(127):
        for o in range(-4, 5):
            w = (np.array([(k + 0.5) * float(sc) / 32], F32).view(np.int32) + o).view(F32)[0]
            if np.rint(F32(F32(32) * w) * inv) != np.rint(F32(F32(32) * w) / sc) and len(ws) < 48:
                ws.append(w)
    h = len(ws)
    x = np.ones((1, 2 * h), np.int32)
    w = np.concatenate([np.array(ws, F32), np.full(h, 32, F32)])
    return x, w


def check_scale_rounding(soc):
    x, w = ties_row()
    got = run(x, w)
    want = dsq_ref(x, w, soc=soc)
    assert np.array_equal(got[0], want[0]) and F.bits_equal(got[1], want[1])
    other = dsq_ref(x, w, soc="a2" if soc == "950" else "950")
    assert not np.array_equal(want[0], other[0])   # the row tells the two SoCs' steps apart


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_dynamic_scale_rounding_per_soc():
    check_scale_rounding("950")


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_documented_formula():
    """The docs' formula in float64 (dequant, swish(A) * B, per-row max / 127, round): within one code."""
    x, w, act, bias = inputs("int32", (8, 256), "float32", 21)
    y, sc = run(x, w, act, bias)
    v = x.astype(np.float64) * w * act[:, None] + bias
    a, b = v[:, 128:], v[:, :128]
    s = a / (1 + np.exp(-a)) * b
    m = np.abs(s).max(-1) / 127
    assert np.allclose(sc, m, rtol=1e-5)
    assert np.abs(y - np.rint(s / m[:, None])).max() <= 1


def args(**kw):
    a = dict(x=np.ones((2, 16), np.int32), w=np.ones(16, F32), act=None, bias=None, qs=None, qo=None, g=None,
             left=False, mode="dynamic", y=np.zeros((2, 8), np.int8), sc=np.zeros(2, F32))
    a.update(kw)
    return tuple(a.values())


INVALID_CALLS = [   # NULL pointers, the definition's rows, then the tiling's order
    (args(x=None), NULLPTR, "x"),
    (args(x=np.ones((2, 16), F32)), INVALID, "x FLOAT"),
    (args(bias=np.ones(16, np.int8)), INVALID, "biasOptional INT8"),
    (args(y=np.zeros((2, 8), np.int32)), INVALID, "yOut INT32"),
    (args(x=np.ones(16, np.int32), y=np.zeros(8, np.int8), sc=np.zeros(1, F32)), TILING,
     "The shape dim of x can not be less than 2"),
    (args(x=np.ones((2, 15), np.int32), w=np.ones(15, F32)), TILING, "The shape dim of x dim must be even number"),
    (args(mode="perrow"), TILING, "quant_mode should be static or dynamic"),
    (args(bias=np.ones(8, F32)), TILING, "bias has 8 elements, 16 expected"),
    (args(w=None), TILING, "weight_scale is nullptr"),
    (args(w=np.ones(8, F32)), TILING, "The shape size of weight_scale must be equal to the last dimension of x16"),
    (args(act=np.ones(3, F32)), TILING, "activation_scale has 3 elements, equal to 2 expected"),
    (args(qs=np.ones(3, F32)), TILING, "quant_scale has 3 elements, 8 or 1 expected"),
    (args(qs=np.ones(8, F32), mode="static"), TILING, "quant_offset is nullptr"),
    (args(qs=np.ones(8, F32), qo=np.ones(3, F32), mode="STATIC"), TILING, "quant_offset has 3 elements, 8 or 1"),
    (args(g=np.array([2], np.int64)), TILING, "the grouped templates are not emulated"),
    (args(y=np.zeros((2, 4), np.int8)), TILING, "The last dimension of x must be twice the last dimension of y"),
    (args(sc=np.zeros(3, F32)), TILING, "The numbers of elements in scale must be equal"),
]


@pytest.mark.parametrize("a,code,text", INVALID_CALLS)
def test_invalid_arguments(a, code, text):
    F.expect_error(ops.DequantSwigluQuant, a, code, text)


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_v2_limits_and_950_rows():
    a = args()
    v2 = (lambda dst, rnd, adim, swi, y=a[9]: a[:9] + (dst, rnd, adim, swi, 7.0, 1.702, 1.0, y, a[10]))
    F.expect_error(ops.DequantSwigluQuantV2, v2(2, "rint", -1, 1), TILING, "only swigluMode 0 is emulated")
    F.expect_error(ops.DequantSwigluQuantV2, v2(2, "rint", 0, 0), TILING, "only the last dim is emulated")
    F.expect_error(ops.DequantSwigluQuantV2, v2(2, "floor", -1, 0), TILING, "only rint is emulated")
    F.expect_error(ops.DequantSwigluQuantV2, v2(40, "rint", -1, 0, pyaclnn.zeros((2, 8), "float4_e2m1")), TILING,
                   "are emulated")                 # a 950 row (FP4 y), not emulated
    F.expect_error(ops.DequantSwigluQuantV2, v2(36, "rint", -1, 0), TILING, "y must be of dstType")
    F.expect_error(ops.DequantSwigluQuant, args(g=np.array([2], np.int32)), TILING, "not emulated")  # INT32: a 950 row


def test_null_quant_mode_is_the_definitions_static():
    x, w, act, bias = inputs("int32", (2, 32), None, 5)
    qs, qo = np.full(16, 0.1, F32), np.full(16, 1.0, F32)
    got = run(x, w, act, None, qs, qo, mode=None)
    assert np.array_equal(got[0], dsq_ref(x, w, act, None, qs, qo, mode="static", soc="a2" if A2 else "950")[0])


def test_null_status_and_empty():
    F.null_status_is_nullptr("DequantSwigluQuant", 11)
    got = run(np.ones((0, 16), np.int32), np.ones(16, F32))
    assert got[0].shape == (0, 8)


# ---- Atlas A2: one subprocess --------------------------------------------------------------------------------------

A2_CALLS = """
import numpy as np
for case in T.CASES:
    T.check_case(case, "a2")
    T.check_case(case, "a2", seed=4, v2=(2, "rint", -1, 0))
for a, code, text in T.INVALID_CALLS:
    T.test_invalid_arguments(a, code, text)
T.F.expect_error(T.ops.DequantSwigluQuant, T.args(g=np.array([2], np.int32)), T.INVALID, "groupIndexOptional INT32")
T.test_null_status_and_empty()
T.test_null_quant_mode_is_the_definitions_static()
T.check_scale_rounding("a2")
"""


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_dequant_swiglu_quant", A2_CALLS)


# ---- torch_npu -----------------------------------------------------------------------------------------------------

TORCH_BODY = """
torch.manual_seed(0)
x = torch.randint(-2000, 2000, (4, 64), dtype=torch.int32)
w = torch.rand(64) * 3e-3 + 1e-3
a = torch.rand(4) + 0.5
b = torch.randn(64)
qs = torch.rand(32) + 0.5
y, s = torch_npu.npu_dequant_swiglu_quant(x.npu(), weight_scale=w.npu(), activation_scale=a.npu(), bias=b.npu(),
                                          quant_scale=qs.npu(), quant_mode=1)
OUT["dynamic"] = [enc(to_np(v)) for v in (x, w, a, b, qs, y, s)]
xb = torch.randn(3, 64).to(torch.bfloat16)
qo = torch.rand(32)
y, s = torch_npu.npu_dequant_swiglu_quant(xb.npu(), quant_scale=(qs * 0.02).npu(), quant_offset=qo.npu(),
                                          activate_left=True, quant_mode=0)
OUT["static"] = [enc(to_np(v)) for v in (xb, (qs * 0.02), qo, y)]
"""


def test_torch_npu_reaches_the_operators():
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY)
    x, w, a, b, qs, y, s = out["dynamic"]
    want = dsq_ref(x, w, a, b, qs)
    assert np.array_equal(y, want[0]) and F.bits_equal(s, want[1])
    direct = run(x, w, a, b, qs)
    assert np.array_equal(direct[0], y) and F.bits_equal(direct[1], s)
    xb, qs2, qo, y = out["static"]
    want = dsq_ref(xb, None, None, None, qs2, qo, True, "static")
    assert np.array_equal(y, want[0])
    assert np.array_equal(run(xb, None, None, None, qs2, qo, True, "static")[0], y)
