"""aclnnTransQuantParamV2 / V3 (native_stubs/src/ops/quant/trans_quant_param.toml; hicann/ops-nn
quant/trans_quant_param_v2). Bit-exact against a NumPy reference written from the vendor's kernel
(op_kernel/trans_quant_param_v2.h: the scale's fp32 bits & 0xFFFFE000, or rounded to 19 bits to nearest even with
roundMode 1; bit 46; the offset rounded half to even, clamped to [-256, 255], 9 bits at bit 37) and from the docs'
formula; the op_api's checks in order; Atlas A2 (its scale shapes: a2_checks) in tests/test_quant_matmul.py's
subprocess; one torch_npu child
(npu_trans_quant_param, which calls V3 when the library has it)."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
import _fused_ops as F

A2 = F.ON_A2
F32 = np.float32
INVALID, INNER_NULLPTR = 161002, 561103


def scale_bits(scale, round_mode):
    u = np.asarray(scale, F32).view(np.uint32).astype(np.uint64)
    if round_mode == 0:
        return (u & 0xFFFFE000) | (1 << 46)
    out = []
    for w in u.ravel().tolist():
        sign, exp, man = w >> 31 & 1, w >> 23 & 0xFF, w & 0x7FFFFF
        m19, rnd, sticky = man >> 13, man >> 12 & 1, man & 0xFFF
        if exp == 0:
            fp19 = sign << 18
        elif exp == 255:
            fp19 = sign << 18 | exp << 10 | m19
        else:
            if rnd and (sticky or m19 & 1):
                m19 += 1
                if m19 >= 1 << 10:
                    m19, exp = 0, exp + 1
            fp19 = (sign << 18 | 255 << 10) if exp > 255 else (sign << 18 | exp << 10 | m19)
        out.append(fp19 << 13 | 1 << 46)
    return np.array(out, np.uint64).reshape(u.shape)


def offset_bits(offset):
    o = np.asarray(offset, np.float64)
    with np.errstate(invalid="ignore"):
        r = np.where(np.isnan(o), 0, np.clip(np.rint(o), -256, 255)).astype(np.int64)
    return (r.astype(np.uint64) & np.uint64(0x1FF)) << np.uint64(37)


def trans_quant_param_ref(scale, offset=None, round_mode=0):
    s = scale_bits(np.asarray(scale, F32).ravel(), round_mode)
    if offset is None:
        return s
    o = offset_bits(np.asarray(offset, F32).ravel())
    n = max(s.size, o.size)
    return np.broadcast_to(s, (n,)) | np.broadcast_to(o, (n,))


SPECIALS = np.array([1.0, 0.5, 3.14159, -2.75e-3, np.inf, -np.inf, np.nan, 1e-40, 0.0, -0.0,
                     np.float32(1.9999999), 3.4e38, 1.00048828125, 1.000732421875], F32)
OFFSETS = np.array([1.4, -300, 2.5, -2.5, 255.5, -256.5, np.nan, np.inf, -np.inf, 0.0, 7.0, -1.0, 1e10, 3.5], F32)

CASES = [   # scale, offset, roundMode, out shape
    (SPECIALS, OFFSETS, 0, (14,)),
    (SPECIALS, OFFSETS, 1, (14,)),
    (SPECIALS[:1], OFFSETS, 1, (14,)),            # scale broadcast
    (SPECIALS.reshape(1, 14), OFFSETS[:1], 0, (1, 14)),   # offset broadcast, (1, n) scale
    (SPECIALS, None, 1, (14,)),
    (np.ones(3, F32), np.ones(3, F32), 0, (3,)),  # the docs' example
]


def run(scale, offset, rm, out_shape, dtype=np.uint64, v3=True):
    out = np.zeros(out_shape, dtype)
    r = ops.TransQuantParamV3(scale, offset, rm, out) if v3 else ops.TransQuantParamV2(scale, offset, out)
    return np.asarray(r).view(np.uint64).ravel()


def check_cases():
    for scale, offset, rm, shape in CASES:
        want = trans_quant_param_ref(scale, offset, rm)
        assert np.array_equal(run(scale, offset, rm, shape), want), (rm, run(scale, offset, rm, shape), want)
        if rm == 0:
            assert np.array_equal(run(scale, offset, 0, shape, np.int64, v3=False), want)
    # the docs' formula: (scale & 0xFFFFE000) | 1 << 46 | (offset & 0x1FF) << 37
    assert run(np.ones(3, F32), np.ones(3, F32), 0, (3,))[0] == 0x3F800000 | 1 << 46 | 1 << 37


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_against_reference():
    check_cases()
    # Ascend 950 takes a (g, n) scale; the words past max(scale, offset) are left alone
    got = run(np.full((2, 3), 2.0, F32), None, 0, (2, 3))
    assert np.array_equal(got, trans_quant_param_ref(np.full(6, 2.0, F32)))


V2 = (np.ones(4, F32), np.ones(4, F32), np.zeros(4, np.uint64))
INVALID_V2 = [   # in the op_api's order
    ((np.ones(4, np.float16), np.ones(4, np.int32), np.zeros(4, np.float32)), INVALID, "Tensor scale not implemented for FLOAT16"),
    ((np.ones(4, F32), np.ones(4, np.int32), np.zeros(4, np.float32)), INVALID, "Tensor offset expected dtype is FLOAT but found INT32"),
    ((np.ones(4, F32), None, np.zeros(4, np.float32)), INVALID, "Tensor out not implemented for FLOAT"),
    ((np.ones(0, F32), None, np.zeros(4, np.uint64)), INVALID, "but current is [0]"),
    ((np.ones((1, 1, 4), F32), None, np.zeros(4, np.uint64)), INVALID, "but current is [1, 1, 4]"),
    ((np.ones(4, F32), np.ones((2, 4), F32), np.zeros(4, np.uint64)), INVALID,
     "shape of offset only support (n, ) and (1, n), but current is [2, 4]"),
    ((np.ones(4, F32), np.ones(3, F32), np.zeros(4, np.uint64)), INVALID,
     "scale and offset should be same when both greater than 1, but scale is 4, offset is 3"),
    ((np.ones(4, F32), np.ones((1, 3), F32), np.zeros(4, np.uint64)), INNER_NULLPTR, "differ"),
    ((np.ones(4, F32), None, np.zeros(3, np.uint64)), INNER_NULLPTR, "out has 3 elements, the kernel writes 4"),
]


@pytest.mark.parametrize("args,code,text", INVALID_V2)
def test_invalid_arguments(args, code, text):
    F.expect_error(ops.TransQuantParamV2, args, code, text)


def test_round_mode_and_null():
    F.expect_error(ops.TransQuantParamV3, (np.ones(4, F32), None, 2, np.zeros(4, np.uint64)), INVALID,
                   "roundMode only support 0 and 1, but current is 2")
    F.expect_error(ops.TransQuantParamV2, (None, None, np.zeros(4, np.uint64)), 161001, "scale")


def a2_checks():
    """Atlas A2 (run in tests/test_quant_matmul.py's one Atlas A2 subprocess): the rows, the codes, A2's scale shapes."""
    check_cases()
    for a, code, text in INVALID_V2:
        test_invalid_arguments(a, code, text)
    F.expect_error(ops.TransQuantParamV2, (np.ones((2, 3), F32), None, np.zeros(6, np.uint64)), INVALID,
                   "shape of scale only support (n, ) and (1, n), but current is [2, 3]")


TORCH_BODY = """
s = torch.tensor([1.0, 0.5, 3.14159, 1.000732421875])
o = torch.tensor([1.4, -300.0, 2.5, -2.5])
OUT["v"] = [enc(to_np(s)), enc(to_np(o)), enc(to_np(torch_npu.npu_trans_quant_param(s.npu()))),
            enc(to_np(torch_npu.npu_trans_quant_param(s.npu(), o.npu()))),
            enc(to_np(torch_npu.npu_trans_quant_param(s.npu(), o.npu(), round_mode=1)))]
"""


def test_torch_npu_reaches_the_operator():
    if A2:
        return
    s, o, a, b, c = F.torch_npu_arrays(TORCH_BODY)["v"]
    assert np.array_equal(a.view(np.uint64), trans_quant_param_ref(s))
    assert np.array_equal(b.view(np.uint64), trans_quant_param_ref(s, o))
    assert np.array_equal(c.view(np.uint64), trans_quant_param_ref(s, o, 1))
