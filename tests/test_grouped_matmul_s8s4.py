"""aclnnGroupedMatmulWeightNz on the Ascend 950, the S8S4 (A8W4) per-group pseudo-quant path
(native_stubs/src/ops/moe/grouped_matmul_wq950.c): INT8 x, INT4 weight packed eight to an INT32 word in FRACTAL_NZ,
a UINT64 / INT64 per-group scale (E, K / 256, N), perTokenScale (M,), bias (E, N) FLOAT, quantGroupSize 256, as
op-plugin's "A5 Support for groupmatmul s8s4" (6b256cf1) calls it.

Source: recursion-ascend/ops-transformer a093e954 (gmm/grouped_matmul/op_api/aclnn_grouped_matmul.cpp,
grouped_matmul_weight_quant_950_checker.cpp, op_kernel/arch35/int4_weight_to_int8_preprocess.h,
weight_quant_basic_block/gmm_s8s4_perchannel_tensor_api.h) and the Blaze Tensor API components it instantiates
(KernelGmmFixpipeQuant, BlockMmad ProcessPerGroup, BlockEpiloguePerTokenScale). The NumPy reference is written from
those steps: the INT4 codes as INT8; per expert, per 256-wide K group, the int32 sum of the products; the fixpipe's
FLOAT16 workspace: the product with the word's fp19 scale rounded to fp32 then to fp16, the first group written, the
others added by fp16 atomic add (the exact sum rounded once to fp16); the epilogue fp32(workspace) * perTokenScale in
fp32, cast RINT to y; the bias is not read (the kernel's BlockMmad runs isBias false). The weight storage is built by
an independent NumPy re-layout: the logical (E, K, N) INT4 matrix in (E, ceil(N / 32), ceil(K / 16), 16, 32) blocks
(the INT32 carrier's C0 4 read as INT4 C0 32, Int4WeightToInt8Preprocess's inputNzC032), two codes a byte, the first
in the low nibble."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID
import _fused_ops as F

pytestmark = pytest.mark.skipif(F.ON_A2, reason="the Ascend 950's path")

I8, I32, I64, F32, F16 = np.int8, np.int32, np.int64, np.float32, np.float16
NZ = 29
API = "aclnnGroupedMatmulWeightNzGetWorkspaceSize"


def nz_int4_storage(w):
    """(E, K, N) INT4 codes -> INT32 words of the (E, ceil(N/32), ceil(K/16), 16, 32) INT4 NZ blocks."""
    e, k, n = w.shape
    n1, k1 = -(-n // 32), -(-k // 16)
    pad = np.zeros((e, k1 * 16, n1 * 32), I8)
    pad[:, :k, :n] = w
    blocks = pad.reshape(e, k1, 16, n1, 32).transpose(0, 3, 1, 2, 4)   # (E, n1, k1, 16, 32)
    nib = (blocks.reshape(-1).astype(np.int16) & 0xF).astype(np.uint8)
    packed = (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)
    return packed.view(I32).reshape(e, n1, k1, 16, 4)


def nz_weight(w, fmt=NZ):
    st = nz_int4_storage(w)
    mem = pyaclnn.from_numpy(st.reshape(-1).view(np.uint8))
    e, k, n = w.shape
    return pyaclnn.Tensor(mem.memory, (e, k, n // 8), "int32", format=fmt, storage_dims=st.shape)


def words(scale_f32):
    """A FLOAT scale in the low 32 bits of an INT64 word (op-plugin's test: scale_fp32.view(uint32) into uint64)."""
    return np.asarray(scale_f32, F32).view(np.uint32).astype(np.uint64).view(I64)


def reference(x, w, sc_words, pt, counts, y0, y_name):
    """The kernel's steps (see the module doc); rows past the groups keep y0."""
    y = y0.astype(F32).copy()
    fp19 = (sc_words.view(np.uint64) & np.uint64(0xFFFFE000)).astype(np.uint32).view(F32).astype(np.float64)
    q = sc_words.shape[1]
    gs = x.shape[1] // q
    s0 = 0
    for e, c in enumerate(counts):
        xs = x[s0:s0 + c].astype(I64)
        ws = None
        for g in range(q):
            acc = xs[:, g * gs:(g + 1) * gs] @ w[e, g * gs:(g + 1) * gs].astype(I64)
            h = (acc.astype(np.float64) * fp19[e, g]).astype(F32).astype(F16)
            ws = h if ws is None else (ws.astype(np.float64) + h.astype(np.float64)).astype(F16)
        y[s0:s0 + c] = ws.astype(F32) * pt[s0:s0 + c, None].astype(F32)
        s0 += c
    return R.cast(y, y_name)


def operands(seed, e=3, k=768, n=64, m=12):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (m, k)).astype(I8)
    w = rng.integers(-8, 8, (e, k, n)).astype(I8)
    s = rng.uniform(1e-4, 4e-3, (e, k // 256, n)).astype(F32)
    pt = rng.uniform(0.25, 2, m).astype(F32)
    bias = rng.uniform(-1, 1, (e, n)).astype(F32)
    return x, w, s, pt, bias


def call(x, w, scale, pt, bias, y, gl, gl_type=1, qgs=256, aqs=None, tuning=None, gtype=0, split=3, off=None):
    return ops.GroupedMatmulWeightNz([x], [w], None if bias is None else [bias], None if scale is None else [scale],
                                     off, aqs, None, None if pt is None else [pt], gl, None, None, None, split, gtype,
                                     gl_type, 0, tuning, qgs, [y], None, None)[0][0]


@pytest.mark.parametrize("y_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("seed", [0, 1])
def test_against_kernel_steps(y_name, seed):
    x, w, s, pt, bias = operands(seed)
    counts = [5, 0, 4]   # 3 rows past the groups keep their values
    y0 = R.cast(np.full((x.shape[0], w.shape[2]), 7.0), y_name)
    y = ops.GroupedMatmulWeightNz([x], [nz_weight(w)], [bias], [words(s)], None, None, None, [pt],
                                  np.array(counts, I64), None, None, None, 3, 0, 1, 0, None, 256, [y0.copy()],
                                  None, None)[0][0]
    ref = reference(x, w, words(s), pt, counts, y0, y_name)
    assert F.bits_equal(y, ref)


def test_groups_are_rounded_in_fp16():
    """Per-group partials whose fp16 sum differs from the sum rounded once: the workspace's fp16 steps show."""
    k, n = 512, 64
    x = np.ones((1, k), I8)
    w = np.zeros((1, k, n), I8)
    w[0, :256, :] = 1            # group 0: 256
    w[0, 256:, :] = -1           # group 1: -256
    s = np.empty((1, 2, n), F32)
    s[0, 0] = 1.0 + 2.0 ** -10   # 256 * s0 = 256.25 -> fp16 256.25 (ulp 0.25 at 256)
    s[0, 1] = 2.0 ** -12         # -256 * s1 = -0.0625
    pt = np.ones(1, F32)
    y = call(x, nz_weight(w), words(s), pt, np.zeros((1, n), F32), np.zeros((1, n), R.BF16), np.array([1], I64))
    ref = reference(x, w, words(s), pt, [1], np.zeros((1, n), F32), "bfloat16")
    assert F.bits_equal(y, ref)
    assert float(ref[0, 0]) == 256.0   # 256.1875 to fp16: 256.25, then to bf16 256


def test_scale_keeps_19_bits():
    """The fixpipe reads the word's fp19 scale: the low 13 mantissa bits of the FLOAT make no difference."""
    x, w, s, pt, bias = operands(3, e=1, k=256, n=64, m=4)
    gl = np.array([4], I64)
    y0 = np.zeros((4, 64), R.BF16)
    a = call(x, nz_weight(w), words(s), pt, bias, y0.copy(), gl)
    s2 = (s.view(np.uint32) | np.uint32(0x1FFF)).view(F32)
    b = call(x, nz_weight(w), words(s2), pt, bias, y0.copy(), gl)
    assert F.bits_equal(a, b)


def bad(text, **kw):
    x, w, s, pt, bias = operands(5, e=2, k=512, n=64, m=6)
    a = dict(x=x, w=nz_weight(w), scale=words(s), pt=pt, bias=bias, y=np.zeros((6, 64), R.BF16),
             gl=np.array([2, 4], I64))
    a.update(kw)
    F.expect_error(lambda: call(**a), (), INVALID, text)


S4 = words(np.ones((2, 4, 64), F32))   # 4 groups of 128


@pytest.mark.parametrize("kw,text", [   # in the vendor's order
    (dict(qgs=0), "In op [grouped_matmul], when S8S4 quant through the WeightNz interface, quantGroupSize must be 0 "
     "for per-channel offset mode or 256 for symmetric per-group mode."),
    (dict(gl_type=0), f"In op [{API}], when S8S4, groupListType must be 1(count)."),
    (dict(aqs=[np.ones((2, 2, 64), F16)]), "In S8S4, antiquantScale and antiquantOffset must be null."),
    (dict(bias=None), "In S8S4, bias must not be null."),
    (dict(pt=None), "In WeightQuant case, perTokenScale must not be null when xDtype-weightDtype is "
     "float8_e4m3fn-float4_e2m1 or int8-int4."),
    (dict(y=np.zeros((6, 64), F32)), "The dtype of y must be float16 or bfloat16, when the dtype of x is INT8 and "
     "the dtype of weight is INT4"),
    (dict(pt=np.ones(6, F16)), "The dtype of pertokenScale must be float"),
    (dict(bias=np.zeros((2, 64), F16)), "The dtype of bias must be float32"),
    (dict(pt=np.ones(5, F32)), f"In op [{API}], when S8S4, perTokenScale shape must be [M]."),
    (dict(scale=words(np.ones((2, 2, 32), F32))), f"In op [{API}], when S8S4, scale shape must be [E,Q,N]."),
    (dict(bias=np.zeros((2, 32), F32)), "NDim[32] of bias must be equal to NDim[64] of weight"),
    (dict(scale=S4), f"In op [{API}], when per-group S8S4, groupSize must be 256, but got 128."),
])
def test_invalid_arguments(kw, text):
    bad(text, **kw)


def test_format_and_offset():
    x, w, s, pt, bias = operands(6, e=2, k=512, n=64, m=6)
    nd = nz_weight(w, fmt=2)   # ND
    F.expect_error(lambda: call(x, nd, words(s), pt, bias, np.zeros((6, 64), R.BF16), np.array([2, 4], I64)), (),
                   INVALID, "In S8S4 through WeightNz, weight must be in FRACTAL_NZ format.")
    # the per-channel (offset) mode passes the checks; the emulator models the per-group kernel only
    F.expect_error(lambda: call(x, nz_weight(w), words(np.ones((2, 1, 64), F32)), pt, bias,
                                np.zeros((6, 64), F16), np.array([2, 4], I64), qgs=0,
                                off=[np.zeros((2, 1, 64), F32)]), (),
                   INVALID, "the emulator models the per-group mode only")


TORCH_BODY = """
def call():
    rng = np.random.default_rng(11)
    e, m, k, n = 2, 8, 512, 64
    x = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-8, 8, (e, k, n)).astype(np.int32)
    s = rng.uniform(1e-3, 4e-3, (e, k // 256, n)).astype(np.float32)
    pt = rng.uniform(0.5, 2, m).astype(np.float32)
    scale = T(s.view(np.uint32).astype(np.uint64).view(np.int64)).npu()
    w_nz = torch_npu.npu_format_cast(T(w).npu(), 29, customize_dtype=torch.int8)
    w4 = torch_npu.npu_convert_weight_to_int4pack(w_nz)
    y = torch_npu.npu_grouped_matmul([T(x).npu()], [w4], bias=[torch.zeros((e, n)).npu()], scale=[scale],
        offset=None, antiquant_scale=None, antiquant_offset=None, per_token_scale=[T(pt).npu()],
        group_list=torch.tensor([3, 5]).npu(), split_item=3, group_type=0, group_list_type=1, act_type=0,
        output_dtype=torch.bfloat16)[0]
    return [T(x), T(w), T(s), T(pt), y]
run_arrays("a8w4", call)
"""


def test_torch_npu_a8w4_weight_nz():
    """op-plugin's test_npu_grouped_matmul_a8w4_per_group_weight_nz call, with random operands: torch_npu's
    npu_format_cast (29, INT8) and npu_convert_weight_to_int4pack make the weight; npu_grouped_matmul takes
    aclnnGroupedMatmulWeightNz with quantGroupSize 256: equal to the reference."""
    from _math_ops import torch_npu_run, dec
    r = torch_npu_run(TORCH_BODY, {}, soc="Ascend950PR")["a8w4"]
    assert not isinstance(r, dict), r
    x, w, s, pt, y = (dec(d) for d in r)
    ref = reference(x, w.astype(I8), words(s), pt, [3, 5], np.zeros((8, 64), F32), "bfloat16")
    assert F.bits_equal(y, ref)
