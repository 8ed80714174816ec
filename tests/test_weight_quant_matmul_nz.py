"""aclnnWeightQuantBatchMatmulNz (native_stubs/src/ops/quant/weight_quant_matmul.toml; hicann/ops-nn
matmul/weight_quant_batch_matmul_v2 op_api aclnn_weight_quant_batch_matmul_v2.cpp, its Nz entry; kernel
arch35/n_first/basic_block_vf_nz.h). The weight is handed over in FRACTAL_NZ, tiled here from the layout description
(docs/zh/context/data_format.md): the (k, n) matrix in (ceil(n / C0), ceil(k / 16), 16, C0) blocks, C0 = 32 bytes
(32 INT8, 64 INT4; INT4 two a byte, the low nibble first; an INT32 weight is those bytes read as int32, its storage's
last dim 8). The product is checked against the float64 product of the dequantised weight made by
test_weight_quant_matmul's NumPy reference (V2's Ascend 950 steps) within 1 ulp; the Nz entry's checks in its order;
Atlas A2 (where the entry is refused) in one subprocess; the torch_npu call on a weight cast to NZ (npu_format_cast 29)
compared with the direct call and with the ND call, in the family's torch_npu child."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
import _fused_ops as F
import test_weight_quant_matmul as T

A2 = F.ON_A2
F16, F32, BF16 = np.float16, np.float32, ml_dtypes.bfloat16
INVALID, NULLPTR, RUNTIME = 161002, 161001, 361001
NZ = 29
NAME = {F16: "float16", BF16: "bfloat16"}


def nz_blocks(w, c0):
    """w (k, n) -> (ceil(n / c0), ceil(k / 16), 16, c0): element (i, j) at [j // c0][i // 16][i % 16][j % c0]."""
    k, n = w.shape
    k1, n1 = -(-k // 16), -(-n // c0)
    pad = np.zeros((k1 * 16, n1 * c0), w.dtype)
    pad[:k, :n] = w
    return np.ascontiguousarray(pad.reshape(k1, 16, n1, c0).transpose(2, 0, 1, 3))


def test_blocks_match_the_layout_description():
    w = np.arange(40 * 70).reshape(40, 70)
    t = nz_blocks(w, 32)
    assert t.shape == (3, 3, 16, 32)
    for i, j in [(0, 0), (39, 69), (17, 33), (16, 31), (5, 64)]:
        assert t[j // 32, i // 16, i % 16, j % 32] == w[i, j]
    assert t[2, 2, 15, 31] == 0


def nz_weight(w, kind, storage=None, c0=None, fmt=NZ):
    """A device weight of values w (k, n) in FRACTAL_NZ blocks c0 codes wide (the docs' 32 INT8, 16 INT4):
    kind "int8", "int4" (view (k, n)) or "packed" (INT32, view (k, n / 8), storage last dim c0 / 8)."""
    k, n = w.shape
    if kind == "int8":
        st = nz_blocks(w.astype(np.int8), c0 or 32)
        raw, view, dt, dims = st.reshape(-1).view(np.uint8), (k, n), "int8", st.shape
    else:
        c0 = c0 or 16
        st = nz_blocks(w.astype(np.int64) & 0xF, c0).reshape(-1).astype(np.uint8)
        raw = st[0::2] | (st[1::2] << 4)      # two codes a byte, element 2i in the low nibble
        dims = nz_blocks(w, c0).shape
        view, dt = ((k, n), "int4") if kind == "int4" else ((k, n // 8), "int32")
        if kind == "packed":
            dims = dims[:-1] + (c0 // 8,)
    if storage is not None:
        dims = storage
    mem = pyaclnn.from_numpy(np.ascontiguousarray(raw))
    return pyaclnn.Tensor(mem.memory, view, dt, format=fmt, storage_dims=dims)


# xdt, weight kind, offset, bias, (m, k, n): shapes leaving partial NZ blocks (k not a multiple of 16, n of C0)
CASES = [(F16, "int8", False, False, (5, 40, 48)), (F16, "int8", True, True, (3, 64, 32)),
         (BF16, "int8", True, True, (4, 40, 48)), (BF16, "int8", False, False, (2, 128, 96)),
         (F16, "int4", True, True, (5, 40, 72)), (BF16, "int4", False, True, (3, 64, 128)),
         (F16, "packed", False, True, (4, 48, 64)), (BF16, "packed", True, False, (6, 40, 72)),
         (F16, "packed", True, True, (1, 128, 256)), (BF16, "int4", True, True, (3, 40, 40)),
         # npu_convert_weight_to_int4pack's INT32 weight: FRACTAL_NZ_C0_2, relabelled FRACTAL_NZ by the op_api
         (F16, "packed_c0_2", True, False, (3, 40, 48)), (BF16, "packed_c0_2", False, True, (2, 128, 256))]
C0_2 = 52   # ACL_FORMAT_FRACTAL_NZ_C0_2
KIND = {"packed_c0_2": ("packed", 16, C0_2)}


def weight_of(w, kind):
    base, c0, fmt = KIND.get(kind, (kind, None, NZ))
    return nz_weight(w, base, c0=c0, fmt=fmt)


def make(case, seed):
    xdt, kind, with_off, with_bias, (m, k, n) = case
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (m, k)).astype(xdt)
    lo, hi = (-128, 128) if kind.startswith("int8") else (-8, 8)
    w = rng.integers(lo, hi, (k, n)).astype(np.int8)
    shape = (n,) if seed % 2 else (1, n)
    s = rng.uniform(2e-3, 2e-2, shape).astype(xdt)
    o = rng.uniform(-4, 4, shape).astype(xdt) if with_off else None
    bdt = F16 if xdt is F16 else (F32 if kind.startswith("int8") else BF16)   # an INT8 NZ weight takes a FLOAT bias
    b = rng.uniform(-1, 1, n).astype(bdt) if with_bias else None
    return x, w, s, o, b


def check_case(case, seed):
    x, w, s, o, b = make(case, seed)
    xdt = case[0]
    got = ops.WeightQuantBatchMatmulNz(x, weight_of(w, case[1]), s, o, None, None, b, 0,
                                       np.zeros((x.shape[0], w.shape[1]), xdt))
    wd = T.antiquant_ref(w, s, o, 0, xdt, False)
    want = F.f64(x) @ F.f64(wd) + (0 if b is None else F.f64(b))
    return F.ulps(got, want, NAME[xdt])


def test_against_reference():
    if A2:
        return
    worst = max(check_case(case, i) for i, case in enumerate(CASES))
    assert worst <= 1, worst


def test_equals_the_nd_call():
    """The NZ weight gives V2's result on the same values bit for bit (one dequant, one product)."""
    if A2:
        return
    for i, case in enumerate(CASES[:6]):
        x, w, s, o, b = make(case, i)
        y = np.zeros((x.shape[0], w.shape[1]), case[0])
        nz = ops.WeightQuantBatchMatmulNz(x, weight_of(w, case[1]), s, o, None, None, b, 0, y)
        wnd = w if case[1] == "int8" else pyaclnn.from_numpy(w, dtype="int4")
        nd = ops.WeightQuantBatchMatmulV2(x, wnd, s, o, None, None, b, 0, y)
        assert F.bits_equal(np.asarray(nz), np.asarray(nd)), case


def test_doc_example():
    """aclnnWeightQuantBatchMatmulNz.md's INT8 example: m 2, k 16, n 8, x and the scale 1.0, weight 1 (given through
    aclnnTransMatmulWeight): every y is 16."""
    if A2:
        return
    w = np.ones((16, 8), np.int8)
    y = ops.WeightQuantBatchMatmulNz(np.ones((2, 16), F16), nz_weight(w, "int8"), np.ones(8, F16), None, None, None,
                                     None, 0, np.zeros((2, 8), F16))
    assert np.array_equal(np.asarray(y), np.full((2, 8), 16, F16))


def args(x=None, w=None, s=None, o=None, qs=None, qo=None, b=None, g=0, y=None, kind="int8"):
    """Valid Ascend 950 arguments (x (4, 64) fp16, an INT8 NZ weight (64, 32), per-channel scale) with replacements."""
    x = np.ones((4, 64), F16) if x is None else x
    w = nz_weight(np.ones((64, 32), np.int8), kind) if w is None else w
    s = np.ones(32, F16) if s is None else s
    y = np.zeros((4, 32), F16) if y is None else y
    return (x, w, s, o, qs, qo, b, g, y)


ND_W = np.ones((64, 32), np.int8)
INVALID_950 = [
    # CheckNotNull, then CheckOptionalNotNull before IsNzFormat
    (lambda: args()[:2] + (None,) + args()[3:], NULLPTR, "antiquantScale is NULL"),
    (lambda: args(w=ND_W, qs=np.ones(32, np.uint64)), NULLPTR, "Current Soc do not support quantScaleOptional"),
    (lambda: args(w=ND_W), INVALID, "has incorrect format ND. It should be FORMAT_FRACTAL_NZ"),
    (lambda: args(w=pyaclnn.Tensor(pyaclnn.from_numpy(np.zeros(2048, np.uint8)).memory, (64, 32), "float8_e4m3fn",
                                   format=NZ, storage_dims=(1, 4, 16, 32))),
     INVALID, "the dtype of weight must be INT4, FLOAT4_E2M1, or INT8"),
    (lambda: args(x=np.ones((4, 64), BF16), s=np.ones(32, BF16), y=np.zeros((4, 32), BF16), b=np.ones(32, BF16)),
     INVALID, "incorrect dtype BFLOAT16. It should be FLOAT"),
    (lambda: args(s=np.ones((2, 32), F16), g=32), INVALID,
     "When the dtype of weight is INT8 and the format of weight is FRACTAL_NZ, the value of antiquantGroupSize must be 0"),
    (lambda: args(s=np.ones(1, F16)), INVALID, "the value of antiquantScale can not be per-tensor"),
    (lambda: args(kind="int4", s=np.ones(1, F16)), INVALID,
     "weight's format is [FRACTAL_NZ], antiquant mode should not be per-tensor."),
    (lambda: args(kind="packed", s=np.ones((2, 32), F16), g=32), INVALID,
     "weight FRACTAL_NZ per-group: the emulator implements the per-channel antiquant"),
    (lambda: args(w=nz_weight(np.ones((64, 32), np.int8), "int8", storage=(1, 2, 16, 32))), INVALID,
     "weight FRACTAL_NZ: its storage holds 1024 elements, the (64, 32) weight's NZ blocks 2048"),
    (lambda: args(w=nz_weight(np.ones((64, 32), np.int8), "int8", fmt=C0_2)), INVALID,
     "weight FRACTAL_NZ_C0_2: the emulator implements the per-channel antiquant"),
    (lambda: args(w=nz_weight(np.ones((64, 32), np.int8), "int8", c0=16)), INVALID,
     "blocks are 16 elements wide: the emulator reads (n1, k1, 16, C0) blocks of C0 32 (INT8) or 16 (INT4)"),
    (lambda: args(w=nz_weight(np.ones((64, 32), np.int8), "packed", c0=64)), INVALID,
     "blocks are 64 elements wide: the emulator reads (n1, k1, 16, C0) blocks of C0 32 (INT8) or 16 (INT4)"),
]


@pytest.mark.parametrize("i", range(len(INVALID_950)))
def test_invalid_arguments(i):
    if A2:
        return
    a, code, text = INVALID_950[i]
    F.expect_error(ops.WeightQuantBatchMatmulNz, a(), code, text)


def test_nulls():
    if not A2:
        F.null_status_is_nullptr("WeightQuantBatchMatmulNz", 8)


def a2_checks():
    """Atlas A2: the Nz entry is refused first (CheckNzSocValid), NULL arguments included; V2 with an NZ weight is the
    emulator's limit."""
    F.expect_error(ops.WeightQuantBatchMatmulNz, args(), RUNTIME, "aclnn nz support for Ascend910B is not implemented")
    F.expect_error(ops.WeightQuantBatchMatmulNz, args()[:2] + (None,) + args()[3:], RUNTIME, "aclnn nz support")
    F.expect_error(ops.WeightQuantBatchMatmulV2, args(), INVALID, "weight FRACTAL_NZ: the emulator implements the ND")


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_weight_quant_matmul_nz", "T.a2_checks()")


def test_torch_npu_reaches_the_operator():
    if A2:
        return
    out = T.torch_out()   # test_weight_quant_matmul's TORCH_BODY: npu_format_cast to 29, then the NZ and ND calls
    x, w, s, o, y_nz, y_nd = out["nz"]
    assert int(out["nz_format"][0][0]) == NZ
    want = ops.WeightQuantBatchMatmulNz(x, nz_weight(w, "int8"), s, o, None, None, None, 0, np.zeros((5, 48), F16))
    assert F.bits_equal(y_nz, np.asarray(want))
    assert F.bits_equal(y_nz, y_nd)
