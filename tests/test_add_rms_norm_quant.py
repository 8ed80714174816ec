"""Add + RMS norm + static quantisation (native_stubs/src/ops/norm/add_rms_norm_quant.toml): aclnnAddRmsNormQuant and
aclnnAddRmsNormQuantV2 (hicann/ops-nn norm/add_rms_norm_quant, add_rms_norm_quant_v2). Golden values from the NumPy
model below, written from the vendor kernels (op_kernel/add_rms_norm_quant.h and add_rms_norm_quant_base.h for
Atlas A2, arch35/add_rms_norm_quant_regbase_common.h for Ascend 950) -- never from the emulator's C; the casts are
tests/reference/arnq_casts.py's, the 950 rstd tests/reference/arnq_rstd.py's. Ascend 950 in-process, Atlas A2 in one
subprocess, the validation codes in the op_api's order, one torch_npu child (npu_add_rms_norm_quant)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import arnq_casts as casts
from reference.arnq_rstd import newton_raphson_rstd
import _fused_ops as F

A2 = F.ON_A2
F32 = np.float32
BF16 = ml_dtypes.bfloat16
INVALID, NULLPTR, INNER_NULLPTR = 161002, 161001, 561103
NP = {"float32": F32, "float16": np.float16, "bfloat16": BF16}
Y = {"int8": np.int8, "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


# ---- reference -----------------------------------------------------------------------------------------------------

def encode(v, ydt):
    if ydt == "int8":
        return casts.encode_int8(v)
    if ydt == "hifloat8":
        return casts.encode_hif8(v, "zero")
    return casts.encode_fp8(v, ydt, "zero").view(Y[ydt])


def quant(y, s, z, div, ydt, pt=False):
    """y / s (or y * s; per-tensor on A2: y * fp32(1 / s[0])) + z, in fp32, then the output cast."""
    with np.errstate(all="ignore"):
        if pt:
            v = y * (F32(1) / s[0])
            if z is not None:
                v = v + z[0]
        else:
            v = y if s is None else (y / s if div else y * s)
            if z is not None:
                v = v + z
    return encode(v.astype(F32), ydt)


def add_rms_norm_quant_ref(x1, x2, gamma, s1, s2=None, z1=None, z2=None, beta=None, eps=1e-6, div=True,
                           ydt="int8", soc="950", pt=False, v2=False):
    """y1, y2 (None when not written), xOut, rmsNormOut (y before beta) -- the kernels' fp32 steps."""
    f = (lambda a: None if a is None else np.asarray(a).astype(F32).reshape(-1))
    n = gamma.size
    a, b = np.asarray(x1).astype(F32).reshape(-1, n), np.asarray(x2).astype(F32).reshape(-1, n)
    g, xdt = f(gamma), np.asarray(x1).dtype
    a2_half = soc == "a2" and xdt == np.float16 and not pt
    x = (a + b).astype(np.float16).astype(F32) if a2_half else a + b
    xout = x.astype(xdt)
    if soc == "a2" and not pt and xdt == BF16 and beta is not None:
        x = xout.astype(F32)                                   # re-read from its bf16 cast
    avg = F32(1) / F32(n)
    with np.errstate(all="ignore"):
        if soc == "950":
            s = (x * x).astype(np.float64).sum(-1).astype(F32)
            rstd = newton_raphson_rstd(s, avg, F32(eps))[:, None]
        else:
            s = ((x * x) * avg).astype(np.float64).sum(-1).astype(F32)
            rstd = (F32(1) / np.sqrt(s + F32(eps)))[:, None]
        t = x * rstd
        y = (g * t.astype(np.float16)).astype(np.float16).astype(F32) if a2_half else g * t
    rn = y.astype(xdt)
    if beta is not None:
        y = y + f(beta)
    s1, s2, z1, z2 = f(s1), f(s2), f(z1), f(z2)
    y2_written = (s2 is not None) or (soc == "950" and v2 and z2 is not None)
    if soc == "a2" and s2 is None:
        z2 = None
    q2 = quant(y, s2, z2, div, ydt) if y2_written else None
    q1 = quant(y, s1, z1, div, ydt, pt)
    shp = np.shape(x1)
    return (q1.reshape(shp), None if q2 is None else q2.reshape(shp), xout.reshape(shp), rn.reshape(shp))


# ---- calls ---------------------------------------------------------------------------------------------------------

def data(shape, dt, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(F32).astype(NP[dt])


def zeros_y(shape, ydt):
    return pyaclnn.zeros(shape, "hifloat8") if ydt == "hifloat8" else np.zeros(shape, Y[ydt])


def as_bytes(a):
    return np.asarray(a.numpy() if hasattr(a, "numpy") else a).view(np.uint8)


def run_v1(x1, x2, g, s1, s2=None, z1=None, z2=None, eps=1e-6, div=True, ydt="int8", y2=None):
    y2 = zeros_y(x1.shape, ydt) if y2 is None else y2
    return ops.AddRmsNormQuant(x1, x2, g, s1, s2, z1, z2, -1, eps, div, zeros_y(x1.shape, ydt), y2,
                               np.zeros(x1.shape, x1.dtype))


def run_v2(x1, x2, g, s1, s2=None, z1=None, z2=None, beta=None, eps=1e-6, div=True, ydt="int8", xout=True, rn=False):
    return ops.AddRmsNormQuantV2(x1, x2, g, s1, s2, z1, z2, beta, -1, eps, div, zeros_y(x1.shape, ydt),
                                 zeros_y(x1.shape, ydt), np.zeros(x1.shape, x1.dtype) if xout else None,
                                 np.zeros(x1.shape, x1.dtype) if rn else None)


def same(got, want, what):
    assert np.array_equal(as_bytes(got), as_bytes(want)), (what, np.argwhere(as_bytes(got) != as_bytes(want))[:5])


# (x dtype, scales dtype, zero points dtype or None, y dtype, shape, divMode, scales2?, beta?)
CASES_950 = [
    ("float16", "float32", "int32", "int8", (3, 64), True, False, False),
    ("bfloat16", "float32", "int32", "int8", (2, 2, 96), True, True, False),
    ("float32", "float32", "float32", "int8", (4, 33), False, True, True),
    ("float16", "float16", "float16", "float8_e4m3fn", (2, 128), True, False, True),
    ("bfloat16", "bfloat16", "bfloat16", "float8_e5m2", (5, 40), False, False, False),
    ("float16", "float32", "float32", "hifloat8", (2, 256), True, True, False),
    ("bfloat16", "float32", None, "int8", (3, 4096), True, False, True),
]
CASES_A2 = [
    ("float16", "float32", "int32", "int8", (3, 64), True, False, False),
    ("bfloat16", "bfloat16", "bfloat16", "int8", (2, 2, 96), False, True, False),
    ("bfloat16", "float32", "int32", "int8", (4, 48), True, True, False),
    ("float16", "float32", None, "int8", (2, 1024), True, False, False),
]


def case_inputs(case, seed):
    xdt, sdt, zdt, ydt, shape, div, has_s2, has_beta = case
    n = shape[-1]
    x1, x2, g = data(shape, xdt, seed, 2), data(shape, xdt, seed + 1, 2), data(n, xdt, seed + 2)
    rng = np.random.default_rng(seed + 3)
    sc = (lambda: (rng.uniform(0.02, 0.2, n) if div else rng.uniform(5, 50, n)).astype(F32).astype(NP[sdt]))
    zp = (lambda: None if zdt is None else (rng.integers(-5, 6, n).astype(np.int32) if zdt == "int32"
                                            else rng.uniform(-3, 3, n).astype(F32).astype(NP[zdt])))
    s1, z1 = sc(), zp()
    s2, z2 = (sc(), zp()) if has_s2 else (None, None)
    beta = data(n, xdt, seed + 4) if has_beta else None
    return x1, x2, g, s1, s2, z1, z2, beta


def check_case(case, soc, seed=5):
    x1, x2, g, s1, s2, z1, z2, beta = case_inputs(case, seed)
    ydt, div = case[3], case[5]
    # V1 (no beta)
    got = run_v1(x1, x2, g, s1, s2, z1, z2, div=div, ydt=ydt)
    want = add_rms_norm_quant_ref(x1, x2, g, s1, s2, z1, z2, None, div=div, ydt=ydt, soc=soc)
    same(got[0], want[0], (case, "y1"))
    same(got[2], want[2], (case, "x"))
    if want[1] is not None:
        same(got[1], want[1], (case, "y2"))
    else:
        assert not as_bytes(got[1]).any(), "y2Out left as it was"
    if soc == "950":   # V2: beta and rmsNormOut
        got = run_v2(x1, x2, g, s1, s2, z1, z2, beta, div=div, ydt=ydt, rn=True)
        want = add_rms_norm_quant_ref(x1, x2, g, s1, s2, z1, z2, beta, div=div, ydt=ydt, soc=soc, v2=True)
        for k, name in enumerate(("y1", "y2", "x", "rmsNormOut")):
            if want[k] is not None:
                same(got[k], want[k], (case, name))


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
@pytest.mark.parametrize("case", CASES_950, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_against_reference_950(case):
    check_case(case, "950")


def check_a2_v2_paths():
    """Atlas A2 V2: the per-tensor template (scales1, zeroPoints1 one element; beta with xOut, or rmsNormOut without
    xOut) and the V1 path with per-channel scales; a FLOAT16 scales1 is cast to FLOAT first (SpecialTransform)."""
    for xdt in ("float16", "bfloat16"):
        x1, x2, g = data((3, 64), xdt, 1, 2), data((3, 64), xdt, 2, 2), data(64, xdt, 3)
        beta = data(64, xdt, 4)
        s1, z1 = np.array([0.05], F32), np.array([3], np.int32)
        got = run_v2(x1, x2, g, s1, None, z1, None, beta)
        want = add_rms_norm_quant_ref(x1, x2, g, s1, None, z1, None, beta, soc="a2", pt=True, v2=True)
        same(got[0], want[0], (xdt, "pt y1"))
        same(got[2], want[2], (xdt, "pt x"))
        got = run_v2(x1, x2, g, s1.astype(np.float16), None, z1, None, None, xout=False, rn=True)
        want = add_rms_norm_quant_ref(x1, x2, g, s1.astype(np.float16), None, z1, None, None, soc="a2", pt=True)
        same(got[0], want[0], (xdt, "pt rn y1"))
        same(got[3], want[3], (xdt, "pt rmsNormOut"))
        sc = np.full(64, 0.07, F32)
        got = run_v2(x1, x2, g, sc, None, None, None, beta)              # per-channel: the V1 path, with beta
        want = add_rms_norm_quant_ref(x1, x2, g, sc, None, None, None, beta, soc="a2", v2=True)
        same(got[0], want[0], (xdt, "v1 path y1"))


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_documented_formula():
    """The docs' formula in float64 (y = (x1 + x2) / rms * gamma, y1 = round(y / scale + zeroPoint)): within one code."""
    x1, x2, g = data((8, 512), "float32", 11), data((8, 512), "float32", 12), data(512, "float32", 13)
    s, z = np.full(512, 0.03, F32), np.full(512, 2, F32)
    got = run_v1(x1, x2, g, s, None, z, None)
    x = x1.astype(np.float64) + x2
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g
    assert np.abs(got[0].astype(np.int64) - np.clip(np.rint(y / 0.03 + 2), -128, 127)).max() <= 1


def v1_args(**kw):
    a = dict(x1=np.ones((2, 16), np.float16), x2=np.ones((2, 16), np.float16), g=np.ones(16, np.float16),
             s1=np.ones(16, F32), s2=None, z1=None, z2=None, axis=-1, eps=1e-6, div=True,
             y1=np.zeros((2, 16), np.int8), y2=np.zeros((2, 16), np.int8), x=np.zeros((2, 16), np.float16))
    a.update(kw)
    return tuple(a.values())


def v2_args(**kw):
    a = dict(x1=np.ones((2, 16), np.float16), x2=np.ones((2, 16), np.float16), g=np.ones(16, np.float16),
             s1=np.ones(16, F32), s2=None, z1=None, z2=None, beta=None, axis=-1, eps=1e-6, div=True,
             y1=np.zeros((2, 16), np.int8), y2=np.zeros((2, 16), np.int8), x=np.zeros((2, 16), np.float16), rn=None)
    a.update(kw)
    return tuple(a.values())


V1_INVALID = [   # the op_api's order: CheckNotNull, CheckDtypeValid, CheckShapeDim, then the L0 op (561103)
    (v1_args(g=None, x1=np.ones((2, 16), np.int32)), NULLPTR, "gamma"),
    (v1_args(x2=np.ones((2, 16), np.int32), y1=np.zeros((2, 16), np.int32)), INVALID, "Tensor x2 not implemented for INT32"),
    (v1_args(z1=np.ones(16, np.int8)), INVALID, "Tensor zeroPoints1Optional not implemented for INT8"),
    (v1_args(y1=np.zeros((2, 16), np.int32)), INVALID, "Tensor y1Out not implemented for INT32"),
    (v1_args(y2=np.zeros((2, 16), ml_dtypes.float8_e4m3fn)), INVALID, "y1Out"),
    (v1_args(x=np.zeros((2, 16), np.int8)), INVALID, "Tensor xOut not implemented for INT8"),
    (v1_args(x1=np.ones((1,) * 9, np.float16)), INVALID, "The x1 tensor cannot be larger than 8 dimensions."),
    (v1_args(s2=np.ones((1,) * 9, F32)), INVALID, "The scales2Optional tensor cannot be larger than 8 dimensions."),
    (v1_args(x1=np.ones((2, 16), F32)), INNER_NULLPTR, "no kernel for x1"),
    (v1_args(x2=np.ones((2, 8), np.float16)), INNER_NULLPTR, "x1 [2, 16] and x2 [2, 8]"),
    (v1_args(g=np.ones(8, np.float16)), INNER_NULLPTR, "gamma's shape must be the trailing dims"),
    (v1_args(s1=np.ones(8, F32)), INNER_NULLPTR, "scales1 [8] has 8 elements, 16 needed"),
]


@pytest.mark.parametrize("args,code,text", V1_INVALID)
def test_v1_invalid_arguments(args, code, text):
    F.expect_error(ops.AddRmsNormQuant, args, code, text)


V2_INVALID_950 = [
    (v2_args(y2=None), NULLPTR, "y2Out"),
    (v2_args(g=np.ones(16, np.int8)), INVALID, "Tensor gamma not implemented for INT8"),
    (v2_args(z2=np.ones(16, np.int8)), INVALID, "Tensor zeroPoints2Optional not implemented for INT8"),
    (v2_args(x2=np.ones((2, 16), BF16)), INVALID, "Tensor x1 dtype FLOAT16 and tensor x2 dtype BFLOAT16 should be same"),
    (v2_args(rn=np.zeros((2, 16), np.int8)), INVALID, "Tensor rmsNormOut not implemented for INT8"),
    (v2_args(y1=np.zeros((2, 8), np.int8)), INVALID, "Expected tensor for x1 to have same size as tensor for y1Out"),
    (v2_args(s1=np.ones(1, F32)), INNER_NULLPTR, "scales1 [1] has 1 elements, 16 needed"),
]


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
@pytest.mark.parametrize("args,code,text", V2_INVALID_950)
def test_v2_invalid_arguments_950(args, code, text):
    F.expect_error(ops.AddRmsNormQuantV2, args, code, text)


def test_empty_and_null():
    F.null_status_is_nullptr("AddRmsNormQuant", 13)
    x = np.ones((0, 16), np.float16)
    got = run_v1(x, x, np.ones(16, np.float16), np.ones(16, F32))
    assert got[0].shape == (0, 16)


# ---- Atlas A2: one subprocess --------------------------------------------------------------------------------------

A2_CALLS = """
import numpy as np
for case in T.CASES_A2:
    T.check_case(case, "a2")
T.check_a2_v2_paths()
for args, code, text in T.V1_INVALID:
    T.test_v1_invalid_arguments(args, code, text)
F32 = np.float32
T.F.expect_error(T.ops.AddRmsNormQuantV2, T.v2_args(x=None, rn=np.zeros((2, 16), np.float16)), T.NULLPTR,
                 "xOut must not be nullptr")                                   # per-channel: the V1 path, no xOut
T.F.expect_error(T.ops.AddRmsNormQuantV2, T.v2_args(rn=np.zeros((2, 16), np.float16)), T.NULLPTR,
                 "The rmsNormOut tensor should be nullptr in computeV1.")
T.F.expect_error(T.ops.AddRmsNormQuantV2, T.v2_args(x1=np.ones((2, 16), F32), s1=np.ones(16, np.int32)), T.INVALID,
                 "Tensor scales1 not implemented for INT32")   # the V1 path's 910B order: scales before x
T.F.expect_error(T.ops.AddRmsNormQuantV2, T.v2_args(x1=np.ones((2, 16), F32)), T.INVALID,
                 "Tensor x1 not implemented for FLOAT")
T.F.expect_error(T.ops.AddRmsNormQuantV2, T.v2_args(y1=np.zeros((2, 16), T.ml_dtypes.float8_e4m3fn)), T.INVALID,
                 "Tensor y1Out expected dtype is INT8 but found FLOAT8_E4M3FN")   # FP8 is Ascend 950's
"""


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_add_rms_norm_quant", A2_CALLS)


# ---- torch_npu -----------------------------------------------------------------------------------------------------

TORCH_BODY = """
torch.manual_seed(0)
x1 = (torch.randn(4, 64) * 2).to(torch.bfloat16)
x2 = (torch.randn(4, 64) * 2).to(torch.bfloat16)
g = torch.randn(64).to(torch.bfloat16)
s = (torch.rand(64) * 0.1 + 0.02)
z = torch.randint(-4, 5, (64,), dtype=torch.int32)
beta = torch.randn(64).to(torch.bfloat16)
y1, y2, x = torch_npu.npu_add_rms_norm_quant(x1.npu(), x2.npu(), g.npu(), s.npu(), z.npu())
OUT["v1"] = [enc(to_np(v)) for v in (x1, x2, g, s, z, y1, x)]
y1, y2, x = torch_npu.npu_add_rms_norm_quant(x1.npu(), x2.npu(), g.npu(), s.npu(), z.npu(), beta=beta.npu(),
                                             div_mode=False)
OUT["v2"] = [enc(to_np(v)) for v in (beta, y1, x)]
"""


def test_torch_npu_reaches_the_operators():
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY)
    x1, x2, g, s, z, y1, x = out["v1"]
    want = add_rms_norm_quant_ref(x1, x2, g, s, None, z, None, None)
    same(y1, want[0], "torch v1 y1")
    same(x, want[2], "torch v1 x")
    direct = run_v1(x1, x2, g, s, None, z, None)
    same(direct[0], y1, "direct v1")
    beta, y1, x = out["v2"]
    want = add_rms_norm_quant_ref(x1, x2, g, s, None, z, None, beta, div=False, v2=True)
    same(y1, want[0], "torch v2 y1")
    direct = run_v2(x1, x2, g, s, None, z, None, beta, div=False)
    same(direct[0], y1, "direct v2")
