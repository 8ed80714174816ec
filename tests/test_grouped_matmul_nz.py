"""aclnnGroupedMatmulWeightNz, its A8W8 path (native_stubs/src/ops/moe/grouped_matmul_nz.c; hicann/ops-transformer
gmm/grouped_matmul op_host/op_api/aclnn_grouped_matmul.cpp). The weights are handed over as FRACTAL_NZ storage, built
here by an independent NumPy re-layout (test_quant_matmul_weight_nz.nz_tiles, written from the vendor's layout
description: the stored (rows, cols) matrix as (ceil(cols/32), ceil(rows/16), 16, 32) for INT8); the arithmetic is
checked against the NumPy model of the kernel's steps of test_grouped_matmul_quant (int32 accumulation with the INT32
bias bit for bit; the fp32 epilogue bit for bit) on every y / scale / bias combination this entry takes; the entry's
own checks in its order (groupType 2 before CheckCommonParam; after V5's checks and CheckZeroShape:
ParamsWeightNzDtype, then the weights' NZ alignment); V4 / V5 reading a FRACTAL_NZ-stored weight as NZ (their
TransWeightToNz). All on Atlas A2 (in one subprocess when the tests run on the 950, whose INT8 x INT8 takes its own
checker and arch35 steps: test_grouped_matmul_quant.test_950_int8_*); torch_npu on Atlas A2 (npu_format_cast to 29, then npu_grouped_matmul, which takes the WeightNz
entry for an NZ weight: an INT8 y only that entry refuses shows it) in one child against the reference."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR
import _fused_ops as F
import test_grouped_matmul_quant as G
from test_quant_matmul_weight_nz import nz_tiles

A2_ONLY = G.A2_ONLY   # the 950's INT8 x INT8: its own checker and steps (test_grouped_matmul_quant.test_950_int8_*)

I8, I32, I64, F32 = np.int8, np.int32, np.int64, np.float32
M, K, N, COUNTS = 10, 32, 64, [3, 0, 7]
NZ = 29
BF = R.np_dtype("bfloat16")


def nz(w, fmt=NZ):
    """A device INT8 tensor of view w.shape whose bytes are w's FRACTAL_NZ tiles."""
    st = nz_tiles(w)
    mem = pyaclnn.from_numpy(st.reshape(-1).view(np.uint8))
    return pyaclnn.Tensor(mem.memory, w.shape, "int8", format=fmt, storage_dims=st.shape)


def nz_transposed(w):
    """The logical (k, n) weight w as a transposed view over its stored (n, k) matrix, that matrix in NZ."""
    stored = np.ascontiguousarray(np.swapaxes(w, -1, -2))
    st = nz_tiles(stored)
    mem = pyaclnn.from_numpy(st.reshape(-1).view(np.uint8))
    *b, k, n = w.shape
    strides = tuple(int(np.prod(w.shape[i + 1:])) for i in range(len(b))) + (1, k)
    return pyaclnn.Tensor(mem.memory, w.shape, "int8", strides=strides, format=NZ, storage_dims=st.shape)


def operands(seed, scale_name, bias_name):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (M, K)).astype(I8)
    w = rng.integers(-128, 128, (len(COUNTS), K, N)).astype(I8)
    s = rng.uniform(1e-4, 2e-3, (len(COUNTS), N))
    s = None if scale_name is None else R.cast(s, scale_name)
    b = None
    if bias_name == "int32":
        b = rng.integers(-5000, 5000, (len(COUNTS), N)).astype(I32)
    elif bias_name:
        b = R.cast(rng.uniform(-2, 2, (len(COUNTS), N)), bias_name)
    return x, w, s, b, rng.uniform(0.5, 2, M).astype(F32)


def reference(x, w, b, s, y_name, pt=None):
    """Group g's rows (COUNTS) against weight g: the kernel's steps (test_grouped_matmul_quant's model)."""
    out, s0 = [], 0
    for g, c in enumerate(COUNTS):
        acc = G.acc32(x[s0:s0 + c], w[g], b[g] if b is not None and b.dtype == I32 else None)
        if y_name == "int32":
            out.append(acc)
        else:
            bf = b[g] if b is not None and b.dtype != I32 else None
            out.append(G.epilogue(acc, s[g], y_name, None if pt is None else pt[s0:s0 + c], bf))
        s0 += c
    return np.concatenate(out)


def gmm_nz(x, ws, bs, ss, y, pts=None, gl_type=1, split=3, gtype=0, gl=None, act=0, tuning=None, qgs=0):
    if gl is None:
        gl = np.array(COUNTS if gl_type == 1 else np.cumsum(COUNTS), I64)
    return ops.GroupedMatmulWeightNz(x, ws, bs, ss, None, None, None, pts, gl, None, None, None, split, gtype,
                                     gl_type, act, tuning, qgs, y, None, None)[0]


# (y, scale, bias, per-token): what ParamsWeightNzDtype lets through of V5's combinations (no INT8 y)
COMBOS = [("int32", None, None, False), ("int32", None, "int32", False), ("float16", "float32", "int32", False),
          ("bfloat16", "bfloat16", None, False), ("float16", "float32", "bfloat16", True),
          ("bfloat16", "bfloat16", "int32", True), ("bfloat16", "bfloat16", "bfloat16", True)]


def check_combo(y_name, scale_name, bias_name, per_token, seed=0):
    """One 3-D NZ weight (cumsum group list), then a list of 2-D NZ weights (counts), then one transposed."""
    x, w, s, b, pt = operands(seed, scale_name, bias_name)
    want = reference(x, w, b, s, y_name, pt if per_token else None)
    lists = lambda a: None if a is None else list(a)   # noqa: E731
    cases = [([nz(w)], None if s is None else [s], None if b is None else [b], 0),
             ([nz(w[g]) for g in range(3)], lists(s), lists(b), 1),
             ([nz_transposed(w)], None if s is None else [s], None if b is None else [b], 1)]
    for ws, ss, bs, glt in cases:
        y0 = np.full((M, N), 7, R.np_dtype(y_name))
        got = gmm_nz([x], ws, bs, ss, [y0], [pt] if per_token else None, gl_type=glt)[0]
        assert F.bits_equal(got, want), (y_name, scale_name, bias_name, len(ws), glt)


@A2_ONLY
@pytest.mark.parametrize("combo", COMBOS)
def test_against_kernel_steps(combo):
    check_combo(*combo)


@A2_ONLY
def test_separated_and_rows_past_the_groups_keep():
    """groupType -1 (x, weight, y separated, NZ 2-D weights), then split M whose group list stops short: the rows
    past its last group keep y's bytes."""
    x, w, s, b, _ = operands(3, "float32", "int32")
    xs = [x[:4], x[4:]]
    out = ops.GroupedMatmulWeightNz(xs, [nz(w[0]), nz(w[1])], [b[0], b[1]], [s[0], s[1]], None, None, None, None,
                                    None, None, None, None, 0, -1, 0, 0, None, 0,
                                    [np.zeros((4, N), np.float16), np.zeros((6, N), np.float16)], None, None)[0]
    for g in range(2):
        assert F.bits_equal(out[g], G.epilogue(G.acc32(xs[g], w[g], b[g]), s[g], "float16"))
    got = gmm_nz([x], [nz(w)], None, None, [np.full((M, N), 5, I32)], gl=np.array([2, 2, 1], I64))[0]
    assert np.array_equal(got[:5], np.concatenate([G.acc32(x[0:2], w[0]), G.acc32(x[2:4], w[1]),
                                                   G.acc32(x[4:5], w[2])]))
    assert (got[5:] == 5).all()


@A2_ONLY
def test_empty_x_ends_before_the_nz_checks():
    """CheckZeroShape comes before ParamsWeightNzDtype and the alignment: every x empty succeeds with an INT8 y and
    an unaligned weight, and y keeps its bytes."""
    got = gmm_nz([np.zeros((M, 0), I8)], [np.zeros((3, 0, 8), I8)], None,
                 [G.word(np.ones((3, 8), F32))], [np.full((M, 8), 5, I8)])[0]
    assert np.array_equal(got, np.full((M, 8), 5, I8))


@A2_ONLY
def test_v5_reads_an_nz_weight_as_nz():
    """V4 / V5 run TransWeightToNz too: a weight stored FRACTAL_NZ is read as NZ (the same bytes as the WeightNz
    entry), after the alignment check; an ND weight stays ND."""
    x, w, s, b, _ = operands(6, "float32", "int32")
    gl = np.array(COUNTS, I64)
    a = lambda ws: ([x], ws, [b], [s], None, None, None, None, gl, None, None, None, 3, 0, 1, 0)   # noqa: E731
    y = lambda: [np.zeros((M, N), np.float16)]   # noqa: E731
    want = reference(x, w, b, s, "float16")
    assert F.bits_equal(ops.GroupedMatmulV5(*a([nz(w)]), None, y(), None, None)[0][0], want)
    assert F.bits_equal(ops.GroupedMatmulV4(*a([nz_transposed(w)]), y(), None, None)[0][0], want)
    assert F.bits_equal(ops.GroupedMatmulV5(*a([w]), None, y(), None, None)[0][0], want)
    w48 = np.ascontiguousarray(w[:, :, :48])
    bad = ([x], [nz(w48)], [b[:, :48]], [s[:, :48]], None, None, None, None, gl, None, None, None, 3, 0, 1, 0, None,
           [np.zeros((M, 48), np.float16)], None, None)
    F.expect_error(ops.GroupedMatmulV5, bad, INVALID, "When weight(INT8) format is FRACTAL_NZ, weight'shape(k[32], "
                   "n[48]) " + ALIGN)


X0 = np.ones((M, K), I8)
W0 = np.ones((3, K, N), I8)
S0 = np.ones((3, N), F32)
Y16 = np.zeros((M, N), np.float16)
GL = np.array(COUNTS, I64)


def nargs(**kw):
    a = dict(x=[X0], w=[W0], b=None, scale=[S0], off=None, aqs=None, aqo=None, pts=None, gl=GL, ai=None, aqsc=None,
             aqof=None, split=3, gtype=0, gltype=1, act=0, tuning=None, qgs=0, y=[Y16], afo=None, dqs=None)
    a.update(kw)
    return tuple(a.values())


ALIGN = ("should be divisible by the following shape: INT8:[16, 32],BF16/FP16[16, 16],INT4[16, 64]). If the weight "
         "is transposed,the k/n need to be reversed.")
NZ_INVALID = [   # the entry's checks in its order, V5's in between (built when called: no device memory held)
    # groupType 2 before CheckCommonParam; V5's checks before the NZ dtypes
    (lambda: nargs(gtype=2, act=-1), "Not support split k dim now, groupType can not be 2."),
    (lambda: nargs(act=-1, y=[np.zeros((M, N), I8)]), "actType must be larger or equal to 0"),
    (lambda: nargs(scale=None), "GMM: scale must not be nullptr in quant, but now is nullptr."),
    # ParamsWeightNzDtype before the alignment (n 8)
    (lambda: nargs(w=[W0[:, :, :8]], scale=[G.word(S0[:, :8])], y=[np.zeros((M, 8), I8)]),
     "The dtypes of x[INT8]-weight[INT8]-y[INT8] do not match with required dtype.The x-weight-y of the quant "
     "caseonly supports the following combinations: INT8-INT8-BF16,INT8-INT8-Fp16,INT8-INT8-INT32"),
    (lambda: nargs(x=[X0.astype(F32)], w=[W0.astype(F32)], scale=None, y=[Y16.astype(F32)]),
     "The dtypes of x[FLOAT]-weight[FLOAT] do not match with required dtype.Only supported x-weight: "
     "INT8-INT8,BF16-BF16,FP16-FP16,INT8-INT4, INT4-INT4,FP16/BF16-FP4_E2M1"),
    # TransWeightToNz: INT8 k % 16, n % 32 (reversed when transposed), every weight
    (lambda: nargs(x=[X0[:, :24]], w=[W0[:, :24]]),
     "When weight(INT8) format is FRACTAL_NZ, weight'shape(k[24], n[64]) " + ALIGN),
    (lambda: nargs(w=[W0[:, :, :48]], scale=[S0[:, :48]], y=[Y16[:, :48]]),
     "When weight(INT8) format is FRACTAL_NZ, weight'shape(k[32], n[48]) " + ALIGN),
    (lambda: nargs(x=[X0, X0], w=[W0[0], W0[1][:, :48]], y=[Y16, Y16[:, :48]], scale=[S0[0], S0[1, :48]], split=0,
                   gtype=-1, gl=None), "weight'shape(k[32], n[48]) " + ALIGN),   # weight[1]
    (lambda: nargs(x=[X0[:, :16]], w=[nz_transposed(np.ones((3, 16, N), I8))]),   # transposed: k % 32
     "When weight(INT8) format is FRACTAL_NZ, weight'shape(k[16], n[64]) " + ALIGN),
    (lambda: nargs(x=[X0.astype(np.float16)], w=[np.ones((3, K, 24), np.float16)], scale=None, y=[Y16[:, :24]]),
     "When weight(FLOAT16) format is FRACTAL_NZ, weight'shape(k[32], n[24]) " + ALIGN),
    # the emulator's limit, after the vendor's checks
    (lambda: nargs(x=[X0.astype(BF)], w=[W0.astype(BF)], scale=None, y=[Y16.astype(BF)]),
     "a FRACTAL_NZ BFLOAT16 weight is not modelled by the emulator"),
]


@A2_ONLY
@pytest.mark.parametrize("i", range(len(NZ_INVALID)))
def test_invalid_arguments(i):
    a, text = NZ_INVALID[i]
    F.expect_error(ops.GroupedMatmulWeightNz, a(), INVALID, text)


def test_nulls():
    F.expect_error(ops.GroupedMatmulWeightNz, nargs(x=None, gtype=2), NULLPTR, "x must not be nullptr.")
    F.expect_error(ops.GroupedMatmulWeightNz, nargs(y=None), NULLPTR, "y must not be nullptr.")


A2_CALLS = """
for combo in T.COMBOS:
    T.check_combo(*combo, seed=4)
for a, text in T.NZ_INVALID:
    T.F.expect_error(T.ops.GroupedMatmulWeightNz, a(), T.INVALID, text)
T.test_separated_and_rows_past_the_groups_keep()
T.test_empty_x_ends_before_the_nz_checks()
T.test_v5_reads_an_nz_weight_as_nz()
"""


def test_atlas_a2():
    if F.ON_A2:
        return
    F.run_on_a2("test_grouped_matmul_nz", A2_CALLS)


TORCH_BODY = """
torch.manual_seed(2)
x = torch.randint(-128, 128, (10, 32), dtype=torch.int8)
w = torch.randint(-128, 128, (3, 32, 64), dtype=torch.int8)
f = torch.rand(3, 64) * 2e-3 + 1e-4
wn = torch_npu.npu_format_cast(w.npu(), 29)
OUT["fmt"] = [enc(to_np(torch.tensor([torch_npu.get_npu_format(wn)], dtype=torch.int32)))]
try:
    torch_npu.npu_grouped_matmul([x.npu()], [wn], scale=[f.npu()], group_list=torch.tensor([3, 0, 7]).npu(),
                                 split_item=3, group_type=0, group_list_type=1, output_dtype=torch.float16)
    msg = ""
except RuntimeError as e:
    msg = str(e)
OUT["refused"] = [enc(to_np(torch.tensor([int("call aclnnGroupedMatmulWeightNz failed, error code is 161002" in msg
                                               and "The format of weight[0] FRACTAL_NZ is invalid" in msg)])))]
"""


def test_torch_npu_format_cast_then_grouped_matmul():
    """npu_format_cast(w, 29) then npu_grouped_matmul (op-plugin's is_weight_nz branch) on the Ascend 950: the
    WeightNz entry, whose 950 checker (the Dec-2025 tree's CheckQuantCasesFormat, before the entry relabels its
    weights NZ) refuses the FRACTAL_NZ INT8 weight. (The A8W8 arithmetic on NZ weights: Atlas A2, above.)"""
    out = F.torch_npu_arrays(TORCH_BODY)
    assert out["fmt"][0].tolist() == [NZ]
    assert out["refused"][0].tolist() == [1]
