"""aclnnQuantMatmulWeightNz, its A8W8 mode (native_stubs/src/ops/quant/quant_matmul.toml; hicann/ops-nn
matmul/quant_batch_matmul_v3 op_api/aclnn_quant_matmul_v4.cpp). The INT8 weight is handed over in FRACTAL_NZ: the
tiling is written here from the vendor's layout description (docs/zh/context/data_format.md and GetWeightNzShape):
the stored (rows, cols) matrix -- x2 (K, N), or (N, K) with transposeX2 -- padded to (16, 32) blocks and laid out as
(ceil(cols/32), ceil(rows/16), 16, 32). The arithmetic is checked against the float64 NumPy definitions of
test_quant_matmul (int32 accumulation bit for bit; the dequant within 1 ulp / 1 code), on every out / scale / bias
dtype combination V5 serves; the NZ entry's own checks in its order with its words; Atlas A2 in one subprocess; the
torch_npu call (npu_format_cast to 29, then npu_quant_matmul) in one child compared with the direct call."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
import _fused_ops as F
import test_quant_matmul as T

A2 = F.ON_A2
F32 = np.float32
INVALID, NULLPTR = 161002, 161001
NZ, ND = 29, 2


def nz_tiles(w, n0=16, c0=32):
    """w (..., rows, cols) -> its FRACTAL_NZ storage (..., ceil(cols/c0), ceil(rows/n0), n0, c0), zero padded."""
    *b, rows, cols = w.shape
    r1, c1 = -(-rows // n0), -(-cols // c0)
    pad = np.zeros((*b, r1 * n0, c1 * c0), w.dtype)
    pad[..., :rows, :cols] = w
    blocks = pad.reshape(*b, r1, n0, c1, c0)               # [r1][n0][c1][c0]
    return np.ascontiguousarray(np.moveaxis(blocks, -2, -4))   # [c1][r1][n0][c0]


def test_tiling_matches_the_layout_description():
    # element (i, j) of an (rows, cols) matrix at [j // 32][i // 16][i % 16][j % 32]
    w = np.arange(40 * 70, dtype=np.int32).reshape(40, 70)
    t = nz_tiles(w)
    assert t.shape == (3, 3, 16, 32)
    for i, j in [(0, 0), (39, 69), (17, 33), (16, 31), (5, 64)]:
        assert t[j // 32, i // 16, i % 16, j % 32] == w[i, j]
    assert t[2, 2, 15, 31] == 0   # padding


def nz_tensor(x2, fmt=NZ, storage=None):
    """A device INT8 tensor of view x2.shape holding x2 (the stored matrix: transposed callers pass it so) in NZ."""
    st = nz_tiles(x2) if storage is None else storage
    raw = np.zeros(max(st.size, x2.size), np.int8)   # a storage shape too small still holds the view
    raw[:st.size] = st.reshape(-1)
    mem = pyaclnn.from_numpy(raw.view(np.uint8))
    t = pyaclnn.Tensor(mem.memory, x2.shape, "int8", format=fmt, storage_dims=st.shape)
    return t


def check_case(case, seed=0):
    x1, x2, x1s, scale, offset, bias = T.build(case, seed)
    out_dt = {"float16": np.float16, "bfloat16": T.BF16, "int8": np.int8, "int32": np.int32}[case[8]]
    acc_shape = T.acc_ref(x1, x2, case[2], case[3]).shape
    got = np.asarray(ops.QuantMatmulWeightNz(x1, nz_tensor(x2), x1s, scale, None, None, offset, None, bias,
                                             case[2], case[3], 0, np.zeros(acc_shape, out_dt)))
    out = case[8]
    bias_i = bias if bias is not None and bias.dtype == np.int32 else None
    acc = T.acc_ref(x1, x2, case[2], case[3], bias_i)
    if out == "int32":
        assert np.array_equal(got, acc.astype(np.int32)), case
        return 0
    v = T.dequant_ref(acc, scale, out, x1s, bias if bias_i is None and bias is not None else None, offset)
    if out == "int8":
        d = int(np.abs(got.astype(np.int64) - np.clip(np.rint(v), -128, 127)).max())
    else:
        d = F.ulps(got, v, out)
    assert d <= 1, (case, d)
    return d


# V5's rows (every out / scale / bias dtype combination) with sizes that leave partial NZ blocks
CASES = T.CASES + [
    ((7, 40), (40, 24), False, False, "u64", "n", False, np.int32, "float16", False),    # K 40, N 24: padded tiles
    ((3, 50), (33, 50), False, True, "f32", "n", True, np.float16, "float16", False),    # stored (N, K) = (33, 50)
    ((2, 5, 20), (20, 40), False, False, "f32", 1, False, np.int32, "int32", False),
]


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_against_float64():
    for case in CASES:
        check_case(case)


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_transposed_view():
    """x2 a (K, N) view transposed over a stored (N, K) matrix: GetTransposeAttrValue reads it as the stored matrix
    with transposeX2 flipped, and the NZ shape is the stored matrix's."""
    x1, stored = T.rng_int8((5, 40), 7), T.rng_int8((24, 40), 8)
    st = nz_tiles(stored)
    mem = pyaclnn.from_numpy(st.reshape(-1).view(np.uint8))
    x2 = pyaclnn.Tensor(mem.memory, (40, 24), "int8", strides=(1, 40), format=NZ, storage_dims=st.shape)
    got = ops.QuantMatmulWeightNz(x1, x2, None, np.ones(24, F32), None, None, None, None, None, False, False, 0,
                                  np.zeros((5, 24), np.int32))
    assert np.array_equal(np.asarray(got), T.acc_ref(x1, stored, False, True).astype(np.int32))


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_published_example():
    """examples/test_aclnn_quant_matmul_weight_nz.cpp: x1 (5, 32) and x2 (32, 32) of ones, INT32 bias of ones, the
    TransQuantParamV2 words of scale 1 (offset 1, unused with a FLOAT16 out): every output 33. The example makes
    the NZ weight with aclnnTransMatmulWeight, which the emulator lacks; the weight is tiled here instead."""
    got = ops.QuantMatmulWeightNz(np.ones((5, 32), np.int8), nz_tensor(np.ones((32, 32), np.int8)), None,
                                  T.pack_scale(np.ones(32, F32), np.ones(32, F32)), None, None, None, None,
                                  np.ones(32, np.int32), False, False, 0, np.zeros((5, 32), np.float16))
    assert np.array_equal(np.asarray(got), np.full((5, 32), 33, np.float16))


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
def test_storage_past_its_memory():
    """Phase 1 only sees the storage shape; memory holding the view but not the padded NZ tiles fails the task with
    a message, nothing is read past the allocation."""
    mem = pyaclnn.from_numpy(np.ones(40 * 24, np.uint8))
    x2 = pyaclnn.Tensor(mem.memory, (40, 24), "int8", format=NZ, storage_dims=(1, 3, 16, 32))
    err = pytest.raises(pyaclnn.errors.AclError, ops.QuantMatmulWeightNz, np.ones((5, 40), np.int8), x2, None,
                        np.ones(24, F32), None, None, None, None, None, False, False, 0, np.zeros((5, 24), np.int32))
    assert "x2's FRACTAL_NZ storage" in str(err.value) and "is not in device memory" in str(err.value)


def args(**kw):
    a = dict(x1=np.ones((4, 32), np.int8), x2=nz_tensor(np.ones((32, 16), np.int8)), x1s=None,
             s2=T.pack_scale(np.ones(16, F32)), ys=None, x1o=None, x2o=None, yo=None, bias=None, t1=False, t2=False,
             g=0, out=np.zeros((4, 16), np.float16))
    a.update(kw)
    return tuple(a.values())


def w_nz(shape, **kw):
    """An NZ weight of ones (view `shape`; nz_tensor's options)."""
    return nz_tensor(np.ones(shape, np.int8), **kw)


# In the NZ entry's order: each row also breaks a later check, so a wrong order reports the later one (made on use:
# device memory held at import would outlive the session's leak check)
INVALID_COMMON = [
    (lambda: args(x1o=np.ones(2, F32), ys=np.ones(2, np.uint64)), INVALID, "Current version do not support x1Offset."),
    (lambda: args(yo=np.ones(2, F32), ys=np.ones(2, np.uint64)), INVALID, "Current version do not support yOffset."),
    (lambda: args(ys=np.ones(2, np.uint64), g=32), INVALID, "Current version do not support yScale."),
    (lambda: args(g=32, x1=np.ones((4, 32), np.float16)), INVALID, "Current version do not support groupSize."),
    (lambda: args(x1=np.ones((4, 32), np.float16), x2=w_nz((32, 16), storage=np.ones(7, np.int8))),
     INVALID, "the emulator implements the A8W8 (INT8 x INT8) mode of aclnnQuantMatmulWeightNz only"),
    (lambda: args(x2=w_nz((32, 16), storage=np.ones((1, 1, 16, 32), np.int8)), out=np.zeros((4, 16), np.float32)),
     INVALID, "x2'format only support NZ"),
    (lambda: args(x1=np.ones((4, 24), np.int8)), INVALID, "the K dimension of x1 and x2 must be equal"),
    (lambda: args(s2=T.pack_scale(np.ones(5, F32))), INVALID, "the last dimension of x2Scale(scale) must be 16 or 1"),
    (lambda: args(out=np.zeros((4, 9), np.float16)), INVALID,
     "the N dimension of out must be equal to the N dimension of x2"),
]
INVALID_950 = [
    (lambda: args(s2=T.pack_scale(np.ones((1, 16), F32)), x2=w_nz((32, 16), fmt=ND)), INVALID,
     "x1Scale must be null or 1D and x2Scale must be 1D"),
    (lambda: args(x2=w_nz((32, 16), fmt=ND), x1=np.ones((4, 24), np.int8)), INVALID,
     "the format of x2 must be FRACTAL_NZ"),
    (lambda: args(x2=w_nz((32, 1)), out=np.zeros((4, 1), np.float16), x1=np.ones((4, 24), np.int8)),
     INVALID, "the k dimension and n dimension of x2 can not be 1"),
    (lambda: args(out=np.zeros((4, 16), np.float32)), INVALID, "the dtype of out must be in dtype support list"),
]
INVALID_A2 = [
    (lambda: args(out=np.zeros((4, 16), np.float32)), INVALID,
     "the dtype of out must be INT32, BFLOAT16, INT8 or FLOAT16"),
]


@pytest.mark.parametrize("i", range(len(INVALID_COMMON) + (0 if A2 else len(INVALID_950))))
def test_invalid_arguments(i):
    a, code, text = (INVALID_COMMON + INVALID_950)[i]
    F.expect_error(ops.QuantMatmulWeightNz, a(), code, text)


def test_nulls_and_empty_m():
    F.expect_error(ops.QuantMatmulWeightNz, args(x2=None, x1o=np.ones(2, F32)), NULLPTR, "x2 is NULL")
    F.expect_error(ops.QuantMatmulWeightNz, args(s2=None), NULLPTR, "x2Scale is NULL")
    F.null_status_is_nullptr("QuantMatmulWeightNz", 13)
    if not A2:   # Ascend 950: an empty M succeeds after the NZ entry's checks, before the scales'
        got = ops.QuantMatmulWeightNz(*args(x1=np.ones((0, 32), np.int8), s2=np.ones(3, F32),
                                            out=np.zeros((0, 16), np.float16)))
        assert np.asarray(got).shape == (0, 16)


A2_CALLS = """
for case in T.CASES:
    T.check_case(case, 5)
for a, code, text in T.INVALID_COMMON + T.INVALID_A2:
    T.F.expect_error(T.ops.QuantMatmulWeightNz, a(), code, text)
# Atlas A2 has no CheckWeightNzParamsDAV3510: an ND x2 goes on to the common checks
x = T.args(x2=T.nz_tensor(T.np.ones((32, 16), T.np.int8), fmt=T.ND), x1=T.np.ones((4, 24), T.np.int8))
T.F.expect_error(T.ops.QuantMatmulWeightNz, x, T.INVALID, "the K dimension of x1 and x2 must be equal")
"""


def test_atlas_a2():
    if A2:
        return
    F.run_on_a2("test_quant_matmul_weight_nz", A2_CALLS)


TORCH_BODY = """
torch.manual_seed(1)
x1 = torch.randint(-127, 128, (6, 40), dtype=torch.int8)
x2 = torch.randint(-127, 128, (40, 24), dtype=torch.int8)
s = torch.rand(24) * 0.01 + 1e-3
pt = torch.rand(6) + 0.5
b = torch.randint(-100, 100, (24,), dtype=torch.int32)
w = torch_npu.npu_format_cast(x2.npu(), 29)
OUT["fmt"] = [enc(to_np(torch.tensor([torch_npu.get_npu_format(w)], dtype=torch.int32)))]
OUT["fp16"] = [enc(to_np(v)) for v in (x1, x2, s, b, pt,
               torch_npu.npu_quant_matmul(x1.npu(), w, s.npu(), bias=b.npu(), output_dtype=torch.float16))]
OUT["pertoken"] = [enc(to_np(torch_npu.npu_quant_matmul(x1.npu(), w, s.npu(), pertoken_scale=pt.npu(),
                                                         output_dtype=torch.bfloat16)))]
OUT["int32"] = [enc(to_np(torch_npu.npu_quant_matmul(x1.npu(), w, s.npu(), output_dtype=torch.int32)))]
"""


def test_torch_npu_reaches_the_operator():
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY)
    assert out["fmt"][0].tolist() == [NZ]
    x1, x2, s, b, pt, y = out["fp16"]
    q = T.pack_scale(s)
    direct = ops.QuantMatmulWeightNz(x1, nz_tensor(x2), None, q, None, None, None, None, b, False, False, 0,
                                     np.zeros((6, 24), np.float16))
    assert F.bits_equal(y, np.asarray(direct))
    assert F.ulps(y, T.dequant_ref(T.acc_ref(x1, x2, False, False, b), q, "float16"), "float16") <= 1
    (y,) = out["pertoken"]
    direct = ops.QuantMatmulWeightNz(x1, nz_tensor(x2), pt, s, None, None, None, None, None, False, False, 0,
                                     np.zeros((6, 24), T.BF16))
    assert F.bits_equal(y, np.asarray(direct))
    acc = T.acc_ref(x1, x2, False, False)
    assert F.ulps(y, T.dequant_ref(acc, s, "bfloat16", pt), "bfloat16") <= 1
    (y,) = out["int32"]
    assert np.array_equal(y, acc.astype(np.int32))
