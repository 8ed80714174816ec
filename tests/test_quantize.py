"""aclnnQuantize (native_stubs/src/ops/quant/quantize.toml; hicann/ops-nn quant/quantize): bit-exact against a NumPy
reference written from the arch35 kernel (x, scale, zero point widened to fp32, one fp32 division and one addition,
then the Cast: RINT saturating to INT8 / UINT8 / INT32 / FP8, ROUND saturating to HIFLOAT8, NaN to 0) with the number
formats of tests/reference/formats.py: every dtype of each SoC's lists, per tensor and per channel along each axis.
The op_api's checks in order (Atlas A2 in one subprocess) and the torch_npu call that reaches it (npu_quantize with
div_mode=True on the 950; Atlas A2 sends the aclop Quantize instead: tests/test_aclop_quantize.py)."""
from __future__ import annotations

import itertools

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
CODE = {"int8": 2, "uint8": 4, "int32": 3, "float8_e4m3fn": 36, "float8_e5m2": 35, "hifloat8": 34, "bfloat16": 27,
        "float16": 1, "float32": 0}
NPT = {"int8": np.int8, "uint8": np.uint8, "int32": np.int32, "bfloat16": BF16, "float16": F16, "float32": F32}
OUTS_A2 = ["int8", "uint8", "int32"]
OUTS_950 = OUTS_A2 + ["float8_e4m3fn", "float8_e5m2", "hifloat8"]


def reference(x, scales, zp, axis, y):
    v = np.asarray(x).astype(F32)
    s = np.asarray(scales).astype(F32)
    z = None if zp is None else np.asarray(zp).astype(np.float64).astype(F32)   # int32 rounds to fp32 (RNE)
    if s.size > 1:
        shape = [1] * v.ndim
        shape[axis % v.ndim] = s.size
        s = s.reshape(shape)
        z = None if z is None else z.reshape(shape)
    f = (v / s).astype(F32)
    if z is not None:
        f = (f + z).astype(F32)
    if y in ("int8", "int32"):
        return R.encode_int(f, 8 if y == "int8" else 32, R.RINT | R.SAT).astype(NPT[y])
    if y == "uint8":
        return np.clip(R.encode_int(f, 32, R.RINT | R.SAT), 0, 255).astype(np.uint8)
    if y == "hifloat8":
        return R.encode_hif8(f, R.ROUND | R.SAT | R.NAN_TO_ZERO).astype(np.uint8)
    fmt = R.E4M3FN if y == "float8_e4m3fn" else R.E5M2
    return R.encode_float(fmt, f, R.RINT | R.SAT | R.NAN_TO_ZERO).astype(np.uint8)


def run(x, scales, zp, y, axis=1, out_shape=None):
    out = pyaclnn.zeros(out_shape or x.shape, y)
    got = ops.Quantize(x, scales, zp, CODE[y], axis, out)
    a = got.numpy() if isinstance(got, pyaclnn.Tensor) else np.asarray(got)
    return a.view(np.uint8) if y.startswith(("float8", "hifloat")) else a


def rows(soc950):
    """(x, scales, zeroPoints or None, y) dtype rows of the SoC's lists, the BF16 rule kept."""
    zps = [None, "int8", "uint8", "int32", "bfloat16"] + (["float32"] if soc950 else [])
    for xd, sd, zd, y in itertools.product(["float32", "float16", "bfloat16"], ["float32", "float16", "bfloat16"],
                                           zps, OUTS_950 if soc950 else OUTS_A2):
        bf16 = sd == "bfloat16" or zd == "bfloat16"
        if bf16 and not (xd == "bfloat16" and sd == "bfloat16" and zd in (None, "bfloat16")):
            continue
        yield xd, sd, zd, y


def check_rows(soc950):
    rng = np.random.default_rng(7)
    for k, (xd, sd, zd, y) in enumerate(rows(soc950)):
        axis, per_tensor = [(1, False), (0, False), (-1, False), (1, True)][k % 4]
        x = (rng.standard_normal((3, 4, 6)) * 60).astype(NPT[xd])
        x.flat[:3] = [np.nan, np.inf, -np.inf]
        n = 1 if per_tensor else x.shape[axis]
        s = rng.uniform(0.05, 3.0, n).astype(NPT[sd])
        z = None if zd is None else rng.integers(0, 30, n).astype(NPT[zd])
        got, want = run(x, s, z, y, axis), reference(x, s, z, axis, y)
        assert np.array_equal(got, want), (xd, sd, zd, y, axis, per_tensor)


def test_950_every_dtype_row_bit_exact():
    if not A2:
        check_rows(True)


def test_halves_round_to_even_after_the_zero_point():
    x = np.array([0.5, 2.5, -0.5, 3.5, 300.0, -300.0], F32)
    zp = np.array([1], np.int32)
    assert run(x, np.ones(1, F32), zp, "int8", 0).tolist() == [2, 4, 0, 4, 127, -128]
    assert run(x, np.ones(1, F32), None, "uint8", 0).tolist() == [0, 2, 0, 4, 255, 0]


def test_the_scale_divides_in_one_rounding():
    # x / s is exactly 1.5 (rint: 2); x * fp32(1 / s) would be 1.4999999 (rint: 1)
    s = np.float32(3) / np.float32(7)
    x = np.float32(1.5) * s
    assert np.float32(x / s) == 1.5 and np.float32(x * np.float32(1 / s)) < 1.5
    assert run(np.array([x], F32), np.array([s], F32), None, "int8", 0).tolist() == [2]


CHECKS = [   # (arguments changed from a valid call, code, the vendor's words), in CheckParams' order
    (dict(x=np.ones((2,) * 9, F32)), INVALID, "cannot be larger than 8 dimensions"),
    (dict(out_shape=(2, 4)), INVALID, "to have same size as tensor for x"),
    (dict(s=np.ones((3, 1), F32)), INVALID, "Input scales shape only support 1 dimension."),
    (dict(z=np.ones((3, 1), np.int8)), INVALID, "Input zeroPoints shape only support 1 dimension."),
    (dict(z=np.ones(2, np.int8)), INVALID, "Scales size should be equal to zeroPoints size."),
    (dict(axis=2), INVALID, "Axis out of range (expected to be in range of [-2, 1], but got 2)"),
    (dict(axis=0), INVALID, "The size of scales must equal to 1 or the specified dimension of x, which is 2."),
    (dict(x=np.ones((2, 3), np.int32)), INVALID, "Tensor x not implemented for INT32"),
    (dict(s=np.ones(3, np.int32)), INVALID, "Tensor scales not implemented for INT32"),
    (dict(z=np.ones(3, np.int16)), INVALID, "Tensor zeroPoints not implemented for INT16"),
    (dict(dtype=CODE["float16"]), INVALID, "Param dtype FLOAT16 should be in dtype support list"),
    (dict(y="int32", dtype=CODE["int8"]), INVALID, "Tensor out expected dtype is INT8 but found INT32."),
    (dict(s=np.ones(3, BF16)), INVALID, "Tensor x expected dtype is BFLOAT16 but found FLOAT."),
    (dict(x=np.ones((2, 3), BF16), z=np.ones(3, BF16)), INVALID, "Tensor scales expected dtype is BFLOAT16 but found FLOAT."),
]


def call_with(x=None, s=None, z=None, y="int8", dtype=None, axis=1, out_shape=None):
    x = np.ones((2, 3), F32) if x is None else x
    s = np.ones(3, F32) if s is None else s
    z = np.ones(3, np.int8) if z is None else z
    return ops.Quantize, (x, s, z, CODE[y] if dtype is None else dtype, axis, pyaclnn.zeros(out_shape or x.shape, y))


@pytest.mark.parametrize("change, code, words", CHECKS, ids=[w[:40] for _, _, w in CHECKS])
def test_checks_in_the_op_api_order(change, code, words):
    fn, args = call_with(**change)
    F.expect_error(fn, args, code, words)


def test_nulls_and_empty():
    F.null_status_is_nullptr("Quantize", 6)
    got = run(np.ones((0, 3), F32), np.ones(3, F32), None, "int8")
    assert got.shape == (0, 3)


def a2_checks():
    check_rows(False)
    fn, args = call_with(y="hifloat8")
    F.expect_error(fn, args, INVALID, "Param dtype HIFLOAT8 should be in dtype support list [INT8, UINT8, INT32].")
    fn, args = call_with(z=np.ones(3, F32))
    F.expect_error(fn, args, INVALID, "Tensor zeroPoints not implemented for FLOAT")


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_quantize", "T.a2_checks()")


TORCH_BODY = """
torch.manual_seed(0)
x = torch.randn(4, 6, 5) * 50
s = torch.rand(6) + 0.1
z = (torch.rand(6) * 20).to(torch.int32)
y8 = torch_npu.npu_quantize(x.npu(), s.npu(), z.to(torch.int8).npu(), torch.qint8, 1)
yu = torch_npu.npu_quantize(x.half().npu(), s.npu(), z.to(torch.uint8).npu(), torch.quint8, 1)
y32 = torch_npu.npu_quantize(x.npu(), s.npu(), z.npu(), torch.qint32, 1)
OUT["v"] = [enc(to_np(v)) for v in (x, s, z, y8, yu, y32)]
"""


def test_torch_npu_npu_quantize_on_the_950_reaches_it():
    if A2:
        return
    x, s, z, y8, yu, y32 = F.torch_npu_arrays(TORCH_BODY)["v"]
    assert np.array_equal(y8, reference(x, s, z.astype(np.int8), 1, "int8"))
    assert np.array_equal(y8, run(x, s, z.astype(np.int8), "int8"))
    assert np.array_equal(yu, reference(x.astype(F16), s, z.astype(np.uint8), 1, "uint8"))
    assert np.array_equal(y32, reference(x, s, z, 1, "int32"))
