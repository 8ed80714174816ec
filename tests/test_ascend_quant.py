"""aclnnAscendQuant / aclnnAscendQuantV3 (native_stubs/src/ops/quant/ascend_quant.toml; hicann/ops-nn
quant/ascend_quant_v2). Bit-exact against a NumPy reference written from the kernels (ascend_quant_v2_fp16.h / _bf16.h /
_fp32.h and CastOut on Atlas A2: (x * s) * s + o in fp32, fp32 -> int32 with the round mode -> fp16 -> int8 / int4;
quant/quantize arch35 on the Ascend 950: x * (s * s) + o, FP8 / HIFLOAT8 casts saturating) with the number formats of
tests/reference/formats.py: every x / scale dtype pair, every output dtype of the SoC's list, the four round modes
(and HIFLOAT8's hybrid), sqrtMode, offset, axis. The op_api's checks in order, Atlas A2 (V1 and V3) in one
subprocess, one torch_npu child (npu_quantize, which calls V3: qint8 and quint4x2)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import formats as R
import _fused_ops as F

A2 = F.ON_A2
F16, F32, BF16 = np.float16, np.float32, ml_dtypes.bfloat16
INVALID, NULLPTR = 161002, 161001
DST = {"int8": 2, "int4": 29, "int32": 3, "float8_e4m3fn": 36, "float8_e5m2": 35, "hifloat8": 34}
MODES = {"round": R.RINT, "floor": R.FLOOR, "ceil": R.CEIL, "trunc": R.TRUNC}


def aq_ref(x, scale, offset, sqrt_mode, round_mode, y, axis, soc950):
    """The codes: int8 / int4 values, INT32 words, FP8 / HiF8 bytes."""
    v = np.asarray(x).astype(F32)
    nd = v.ndim
    s = np.asarray(scale).astype(F32)
    o = None if offset is None else np.asarray(offset).astype(F32)
    if s.ndim == 1 and s.size > 1:    # along axis
        a = axis % nd
        s = s.reshape((-1,) + (1,) * (nd - 1 - a))
        o = None if o is None else o.reshape(s.shape)
    if not sqrt_mode:
        f = v * s
    elif soc950:
        f = v * (s * s)
    else:
        f = (v * s) * s
    if o is not None:
        f = f + o
    f = f.astype(F32)
    if y in ("int8", "int4", "int32"):
        codes = R.encode_int(f, 8 if y == "int8" else 4, MODES[round_mode] | R.SAT)
        if y == "int8":
            return codes.astype(np.int8)
        if y == "int4":
            return codes.astype(np.int8)
        nib = (codes & 0xF).astype(np.uint8).reshape(-1)
        return R.pack4(nib).view("<i4").reshape(f.shape[:-1] + (f.shape[-1] // 8,)).astype(np.int32)
    if y == "hifloat8":
        mode = (R.ROUND if round_mode == "round" else R.HYBRID) | R.SAT | R.NAN_TO_ZERO
        return R.encode_hif8(f, mode).astype(np.uint8)
    fmt = R.E4M3FN if y == "float8_e4m3fn" else R.E5M2
    return R.encode_float(fmt, f, R.RINT | R.SAT | R.NAN_TO_ZERO).astype(np.uint8)


def codes_of(t, y):
    a = t.numpy() if isinstance(t, pyaclnn.Tensor) else np.asarray(t)
    if y in ("int4",):
        return a.astype(np.int8)
    if y in ("float8_e4m3fn", "float8_e5m2", "hifloat8"):
        return a.view(np.uint8)
    return a


def out_for(shape, y):
    return pyaclnn.zeros(shape[:-1] + (shape[-1] // 8,) if y == "int32" else shape, y)


def inputs(xdt, sdt, shape, scale_shape, with_offset, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-200, 200, shape).astype(F32)
    x.flat[:4] = [0.5, -2.5, 6e4, -6e4]              # ties and saturation
    x = x.astype(xdt)
    s = rng.uniform(0.05, 1.5, scale_shape).astype(sdt)
    o = rng.uniform(-20, 20, scale_shape).astype(sdt) if with_offset else None
    return x, s, o


# xdt, scale dtype, y, roundMode, sqrtMode, offset, axis, x shape, scale shape
CASES_V3 = [
    (F32, F32, "int8", "round", False, True, -1, (4, 32), (32,)),
    (F32, F16, "int8", "floor", True, False, -1, (2, 3, 16), (16,)),
    (F32, BF16, "int4", "ceil", False, True, -2, (3, 6, 8), (6,)),
    (F16, F16, "int32", "trunc", True, True, -1, (5, 16), (1,)),
    (BF16, BF16, "int8", "round", True, True, -2, (4, 8), (4, 1)),
    (F16, F16, "int4", "round", False, False, -1, (2, 16), (1, 16)),
]
CASES_950 = [
    (F32, F32, "float8_e4m3fn", "round", False, True, -1, (4, 32), (32,)),
    (F16, F16, "float8_e5m2", "round", True, False, -1, (4, 32), (1,)),
    (BF16, BF16, "hifloat8", "round", False, True, -2, (2, 8, 16), (8,)),
    (F32, F16, "hifloat8", "hybrid", True, True, -1, (4, 32), (32,)),
]


def check_v3(case, seed=0):
    xdt, sdt, y, rm, sq, with_off, axis, shape, sshape = case
    x, s, o = inputs(xdt, sdt, shape, sshape, with_off, seed)
    got = ops.AscendQuantV3(x, s, o, sq, rm, DST[y], axis, out_for(shape, y))
    want = aq_ref(x, s, o, sq, rm, y, axis, not A2)
    assert np.array_equal(codes_of(got, y), want), case


@pytest.mark.parametrize("case", CASES_V3 + ([] if A2 else CASES_950))
def test_v3_against_reference(case):
    check_v3(case)


# V1 (Atlas A2 only): scale and offset along the last dim
CASES_V1 = [(F32, F16, "int8", "round", True, True, (4, 32), (32,)), (F16, F16, "int4", "floor", False, True, (3, 16), (1, 16)),
            (BF16, BF16, "int32", "ceil", True, False, (2, 2, 16), (1,)), (F32, BF16, "int8", "trunc", False, False, (6, 8), (8,))]


def check_v1(case, seed=0):
    xdt, sdt, y, rm, sq, with_off, shape, sshape = case
    x, s, o = inputs(xdt, sdt, shape, sshape, with_off, seed)
    got = ops.AscendQuant(x, s, o, sq, rm, DST[y], out_for(shape, y))
    assert np.array_equal(codes_of(got, y), aq_ref(x, s, o, sq, rm, y, -1, False)), case


# sqrtMode inputs whose floor differs between (x * s) * s (Atlas A2) and x * (s * s) (Ascend 950), as fp32 bit patterns
SQRT_X = np.array([1111141015, 1087920085, 1133689822, 1116423422], np.uint32).view(F32)
SQRT_S = np.array([1067599118, 1073095685, 1057658156, 1066865236], np.uint32).view(F32)


def check_sqrt_order():
    """The SoC's order of the two multiplies shows in the floor of these values (the reference of the other SoC
    differs on every element)."""
    x, s = SQRT_X.reshape(1, 4), SQRT_S
    got = codes_of(ops.AscendQuantV3(x, s, None, True, "floor", 2, -1, np.zeros((1, 4), np.int8)), "int8")
    assert np.array_equal(got, aq_ref(x, s, None, True, "floor", "int8", -1, not A2))
    assert (got != aq_ref(x, s, None, True, "floor", "int8", -1, A2)).all()


def test_sqrt_order():
    check_sqrt_order()


def check_doc_example(v3):
    """The docs' example (aclnnAscendQuant.md, aclnnAscendQuantV3.md): x [[0, 1], [2, 3], [4, 5], [6, 7]] FLOAT, scale
    and offset [1, 2], round, INT8: y = x * scale + offset by the docs' formula (they print the result unstated)."""
    x, s, o = np.arange(8, dtype=F32).reshape(4, 2), np.array([1, 2], F32), np.array([1, 2], F32)
    y = np.zeros((4, 2), np.int8)
    got = ops.AscendQuantV3(x, s, o, False, "round", 2, -1, y) if v3 else ops.AscendQuant(x, s, o, False, "round", 2, y)
    assert np.array_equal(np.asarray(got), np.array([[1, 4], [3, 8], [5, 12], [7, 16]], np.int8))


def test_doc_example():
    check_doc_example(True)


def args3(**kw):
    a = dict(x=np.ones((4, 16), F32), s=np.ones(16, F32), o=None, sq=False, rm="round", dst=2, axis=-1,
             y=np.zeros((4, 16), np.int8))
    a.update(kw)
    return tuple(a.values())


INVALID_V3 = [
    (args3(s=None), NULLPTR, "scale is NULL"),
    (args3(x=np.array(1.0, F32), y=np.zeros((), np.int8)), INVALID, "input x not support scalar."),
    (args3(x=np.ones((4, 16), np.int32)), INVALID, "Tensor x not implemented for INT32"),
    (args3(y=np.zeros((4, 16), F32), dst=0), INVALID, "Tensor y not implemented for FLOAT"),
    (args3(s=np.ones(16, np.int32)), INVALID, "Tensor scale not implemented for INT32"),
    (args3(o=np.ones(16, F16)), INVALID, "Expected both tensors to have same dtype, but found scale FLOAT and offset FLOAT16."),
    (args3(x=np.ones((4, 16), F16)), INVALID, "dtype of input x:FLOAT16 is not compatible with scale:FLOAT."),
    (args3(dst=3), INVALID, "dstType:3(INT32) must be able to represent the y dtype[INT8]."),
    (args3(axis=2), INVALID, "invalid axis: 2, axis can't exceed the dimension of x: 2"),
    (args3(x=np.ones((2, 4, 16), F32), y=np.zeros((2, 4, 16), np.int8), axis=0), INVALID,
     "invalid axis: 0, axis must be one of last two dimensions of x"),
    (args3(y=np.zeros((4, 8), np.int8)), INVALID, "Expected tensor for y to have same size as tensor for x"),
    (args3(y=np.zeros((4, 3), np.int32), dst=3), INVALID, "if y dtype is int32, the y last dim must be 1/8 of x last dim, x last dim is (16), y last dim is (3)"),
    (args3(x=np.ones((4, 15), F32), s=np.ones(15, F32), y=np.zeros((4, 15), ml_dtypes.int4), dst=29), INVALID,
     "if y dtype is int4, x last dim must be divisible by 2, last dim is (15)."),
    (args3(x=np.ones((1,) * 9, F32), s=np.ones(1, F32), y=np.zeros((1,) * 9, np.int8)), INVALID,
     "The x tensor cannot be larger than 8 dimensions."),
    (args3(o=np.ones(8, F32)), INVALID, "Expected tensor for scale to have same size as tensor for offset"),
    (args3(s=np.ones((1, 1, 16), F32)), INVALID, "scale dimNum must be same as x dimNum or 1."),
    (args3(s=np.ones(8, F32)), INVALID, "scale dim(0)'s value(8) is invalid, should be same as x dim(1)'s value(16) or 1"),
    (args3(s=np.ones((2, 16), F32)), INVALID, "If scale is not 1-dimensional tensor, all dimensions except the dimension"),
    (args3(rm="half"), INVALID, "roundMode[half] not in ['round','floor','ceil','trunc'] for int8/int4/int32."),
    (args3(rm=None), INVALID, "roundMode cannot be empty"),
]
INVALID_V3_950 = [
    (args3(y=np.zeros((4, 16), ml_dtypes.float8_e4m3fn), dst=36, rm="floor"), INVALID,
     "roundMode[floor] not in ['round'] for float8_e5m2/float8_e4m3fn."),
]
INVALID_V3_A2 = [(args3(y=np.zeros((4, 16), ml_dtypes.float8_e4m3fn), dst=36), INVALID,
                  "Tensor y not implemented for FLOAT8_E4M3FN")]


@pytest.mark.parametrize("a,code,text", INVALID_V3 + (INVALID_V3_A2 if A2 else INVALID_V3_950))
def test_v3_invalid_arguments(a, code, text):
    F.expect_error(ops.AscendQuantV3, a, code, text)


def args1(**kw):
    a = dict(x=np.ones((4, 16), F32), s=np.ones(16, F32), o=None, sq=False, rm="round", dst=2, y=np.zeros((4, 16), np.int8))
    a.update(kw)
    return tuple(a.values())


INVALID_V1_A2 = [
    (args1(x=np.ones((4, 16), np.int32)), INVALID, "Tensor x not implemented for INT32"),
    (args1(x=np.ones((4, 16), BF16)), INVALID, "input x:BFLOAT16 not compatible with scale:FLOAT."),
    (args1(dst=29), INVALID, "dstType:29(INT4) must be able to represent the y dtype[INT8]."),
    (args1(y=np.zeros((4, 3), np.int32), dst=3), INVALID, "the y last dim must be 1/8 of input last dim, input last dim is (16)"),
    (args1(o=np.ones(8, F32)), INVALID, "dim of scale must be the same as dim of offset"),
    (args1(s=np.ones(8, F32)), INVALID, "the last dim size(16) of x must be same as scale and offset(8)."),
    (args1(s=np.ones((2, 16), F32)), INVALID, "the dim(0) of scale or offset must be 1, but it is(2)."),
    (args1(s=np.ones((1, 1, 1, 16), F32)), INVALID, "The size of tensor scale [1, 1, 1, 16] must match the size [4, 16]."),
    (args1(rm="hybrid"), INVALID, "roundMode[hybrid] not in ['round','floor','ceil','trunc']."),
]


def test_v1_on_the_950_refuses_every_x():
    """The V1 op_api has no Ascend 950 dtype list (source over docs): x fails against an empty list."""
    if A2:
        return
    F.expect_error(ops.AscendQuant, args1(), INVALID, "Tensor x not implemented for FLOAT, should be in dtype support list [].")


def test_nulls_and_empty():
    F.null_status_is_nullptr("AscendQuantV3", 8)
    F.null_status_is_nullptr("AscendQuant", 7)
    got = ops.AscendQuantV3(*args3(x=np.ones((0, 16), F32), y=np.zeros((0, 16), np.int8)))
    assert np.asarray(got).shape == (0, 16)


def a2_checks():
    """Atlas A2 (one subprocess): V3's rows and checks, V1's rows and checks."""
    for case in CASES_V3:
        check_v3(case, 1)
    for case in CASES_V1:
        check_v1(case)
    check_sqrt_order()
    check_doc_example(True)
    check_doc_example(False)
    for a, code, text in INVALID_V3[:8] + INVALID_V3_A2:
        test_v3_invalid_arguments(a, code, text)
    for a, code, text in INVALID_V1_A2:
        F.expect_error(ops.AscendQuant, a, code, text)


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_ascend_quant", "T.a2_checks()")


TORCH_BODY = """
torch.manual_seed(0)
x = (torch.rand(4, 32) * 400 - 200)
s = torch.rand(32) + 0.05
o = torch.rand(32) * 40 - 20
y8 = torch_npu.npu_quantize(x.npu(), s.npu(), o.npu(), torch.qint8, -1, False)
xh = x.half()
y4 = torch_npu.npu_quantize(xh.npu(), s.half().npu(), None, torch.quint4x2, -1, False)
OUT["v"] = [enc(to_np(v)) for v in (x, s, o, y8, xh, s.half(), y4)]
"""


def test_torch_npu_reaches_the_operator():
    if A2:
        return
    x, s, o, y8, xh, sh, y4 = F.torch_npu_arrays(TORCH_BODY)["v"]
    assert np.array_equal(y8, codes_of(ops.AscendQuantV3(x, s, o, False, "round", 2, -1, np.zeros((4, 32), np.int8)), "int8"))
    assert np.array_equal(y8, aq_ref(x, s, o, False, "round", "int8", -1, True))
    assert np.array_equal(y4, aq_ref(xh, sh, None, False, "round", "int32", -1, True))
