"""aclnnDequantBias (native_stubs/src/ops/quant/dequant_bias.toml; hicann/ops-nn quant/dequant_bias). Bit-exact rows
against a NumPy reference written from the vendor's kernels (dequant_bias_impl.h, arch35/dequant_bias_kernel.h: an
INT32 bias added in int32, fp32(x) * weightScale (* activateScale) (+ float bias), each an fp32 operation, CAST_RINT
to the output), every dtype row of the definition, the tiling's checks (561002), Atlas A2 (a2_checks) in tests/test_quant_matmul.py's subprocess, one
torch_npu child (npu_dequant_bias)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ops
import _fused_ops as F

A2 = F.ON_A2
F32 = np.float32
BF16 = ml_dtypes.bfloat16
TILING, INVALID = 561002, 161002


def dequant_bias_ref(x, ws, as_=None, bias=None, out=np.float16):
    v = np.asarray(x, np.int64)
    if bias is not None and bias.dtype == np.int32:
        v = (v + bias.astype(np.int64) + 2**31) % 2**32 - 2**31
    f = v.astype(F32)                               # RNE, as numpy's int -> float32
    f = (f * ws.astype(F32)).astype(F32)
    if as_ is not None:
        f = (f * as_.astype(F32)[:, None]).astype(F32)
    if bias is not None and bias.dtype != np.int32:
        f = (f + bias.astype(F32)).astype(F32)
    return f.astype(out)


# weightScale dtype (decides y), bias dtype, activateScale
CASES = [(BF16, None, False), (BF16, np.int32, True), (BF16, np.float16, True), (BF16, BF16, False),
         (F32, F32, True), (F32, np.int32, False), (F32, np.float16, False), (F32, BF16, True)]


def check_case(case, seed=0, m=5, n=24):
    wdt, bdt, with_as = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-2**25, 2**25, (m, n)).astype(np.int32)     # beyond 2^24: the int32 -> fp32 rounding counts
    ws = rng.uniform(1e-4, 1e-3, n).astype(wdt)
    as_ = rng.uniform(0.5, 1.5, m).astype(F32) if with_as else None
    bias = None if bdt is None else (rng.integers(-1000, 1000, n).astype(np.int32) if bdt is np.int32
                                     else rng.uniform(-4, 4, n).astype(bdt))
    out = BF16 if wdt is BF16 else np.float16
    got = ops.DequantBias(x, ws, as_, bias, 27 if out is BF16 else 1, np.zeros((m, n), out))
    assert F.bits_equal(np.asarray(got), dequant_bias_ref(x, ws, as_, bias, out)), case


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_against_reference():
    for case in CASES:
        check_case(case)


def args(**kw):
    a = dict(x=np.ones((3, 8), np.int32), ws=np.ones(8, F32), as_=None, b=None, od=1, y=np.zeros((3, 8), np.float16))
    a.update(kw)
    return tuple(a.values())


INVALID_ROWS = [
    (args(ws=np.ones(8, np.float16)), INVALID, "weightScale FLOAT16"),
    (args(y=np.zeros((3, 8), BF16)), INVALID, "out BFLOAT16"),
    (args(od=2), TILING, "Attr outputDtype should be 1 or 27."),
    (args(x=np.ones((3, 8, 1), np.int32), y=np.zeros((3, 8, 1), np.float16)), TILING, "The dim number of x should be 2."),
    (args(ws=np.ones((1, 8), F32)), TILING, "The dim number of weightScale should be 1."),
    (args(as_=np.ones((3, 1), F32)), TILING, "The dim number of activateScale should be 1."),
    (args(y=np.zeros(24, np.float16)), TILING, "The dim number of y should be 2."),
    (args(ws=np.ones(7, F32)), TILING, "dim 1 of x and weightScale should be same."),
    (args(as_=np.ones(4, F32)), TILING, "dim 0 of x and activateScale 4 and 3 should be same."),
    (args(b=np.ones(5, np.int32)), TILING, "dim 1 of x 5 and dim 0 of bias 8 should be same."),
    (args(y=np.zeros((2, 8), np.float16)), TILING, "dim 0 of input and output should be same."),
]


@pytest.mark.parametrize("a,code,text", INVALID_ROWS)
def test_invalid_arguments(a, code, text):
    F.expect_error(ops.DequantBias, a, code, text)


def test_null_and_empty():
    F.expect_error(ops.DequantBias, args(ws=None), 161001, "weightScale")
    got = ops.DequantBias(*args(x=np.ones((0, 8), np.int32), y=np.zeros((0, 8), np.float16)))
    assert np.asarray(got).shape == (0, 8)


def a2_checks():
    """Atlas A2 (run in tests/test_quant_matmul.py's one Atlas A2 subprocess)."""
    for case in CASES:
        check_case(case, 1)
    for a, code, text in INVALID_ROWS[:4]:
        test_invalid_arguments(a, code, text)


TORCH_BODY = """
torch.manual_seed(0)
x = torch.randint(-2**26, 2**26, (4, 16), dtype=torch.int32)
ws = (torch.rand(16) * 1e-2).to(torch.bfloat16)
a = torch.rand(4) + 0.5
b = (torch.rand(16) * 4 - 2).to(torch.bfloat16)
y = torch_npu.npu_dequant_bias(x.npu(), ws.npu(), a.npu(), b.npu(), output_dtype=torch.bfloat16)
OUT["v"] = [enc(to_np(v)) for v in (x, ws, a, b, y)]
"""


def test_torch_npu_reaches_the_operator():
    if A2:
        return
    x, ws, a, b, y = F.torch_npu_arrays(TORCH_BODY)["v"]
    assert F.bits_equal(y, dequant_bias_ref(x, ws, a, b, BF16))
