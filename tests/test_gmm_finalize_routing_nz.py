"""aclnnGroupedMatmulFinalizeRoutingWeightNz / WeightNzV2, the A8W8 path (native_stubs/src/ops/moe/
gmm_finalize_routing_nz.c; hicann/ops-transformer gmm/grouped_matmul_finalize_routing: op_api
aclnn_grouped_matmul_finalize_routing.cpp, kernel grouped_matmul_finalize_routing.h). The INT8 weight goes in as
FRACTAL_NZ storage built by the independent NumPy re-layout of test_quant_matmul_weight_nz.nz_tiles. The arithmetic is
checked against a NumPy model written from the kernel's steps (int32 accumulation; fp32 AscendDequant, the per-token
scale times the logit, the logit-weighted bias; the shared input's rows and zeros first, then the token rows added at
rowIndex in token order) bit for bit, and against the float64 sum of the same terms (rows several tokens add into:
within n * 2^-24 of the terms' magnitudes for n additions, the bound of any order the NPU's cores add them in). The entry's checks in the op_api's order; device faults for group counts and
row indices outside the tensors; Atlas A2 in one subprocess; torch_npu (npu_format_cast to 29, then
npu_grouped_matmul_finalize_routing, which takes WeightNzV2 for an NZ weight) against the direct call."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR
import _fused_ops as F
from test_quant_matmul_weight_nz import nz_tiles

I8, I32, I64, F32 = np.int8, np.int32, np.int64, np.float32
BF = R.np_dtype("bfloat16")
M, K, N, COUNTS, BS = 9, 32, 256, [3, 0, 5], 6   # 8 of the 9 tokens routed (the last row of x unused)
NZ = 29


def nz(w):
    """A device INT8 tensor of view w.shape whose bytes are w's FRACTAL_NZ tiles."""
    st = nz_tiles(w)
    mem = pyaclnn.from_numpy(st.reshape(-1).view(np.uint8))
    return pyaclnn.Tensor(mem.memory, w.shape, "int8", format=NZ, storage_dims=st.shape)


def operands(seed, scale_name="float32"):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (M, K)).astype(I8)
    w = rng.integers(-128, 128, (len(COUNTS), K, N)).astype(I8)
    s = R.cast(rng.uniform(1e-4, 2e-3, (len(COUNTS), N)), scale_name)
    b = R.cast(rng.uniform(-2, 2, (len(COUNTS), N)), "bfloat16")
    pt = rng.uniform(0.5, 2, M).astype(F32)
    logit = rng.uniform(0, 1, M).astype(F32)
    rows = np.array([0, 5, 2, 2, 4, 5, 1, 2, 3], I64)    # rows 2 and 5 take several tokens
    shared = R.cast(rng.uniform(-1, 1, (3, N)), "bfloat16")
    return x, w, s, b, pt, logit, rows, shared


def model(x, w, s, b, pt, logit, rows, shared, offset, weight, bs=BS, out0=None, counts=COUNTS):
    """The kernel's steps in fp32, token by token (the order this emulator adds them in)."""
    f32 = lambda a: np.asarray(a).astype(F32)   # noqa: E731
    if logit is not None:
        out = np.zeros((bs, N), F32)
        if shared is not None:
            out[offset:offset + len(shared)] = f32(shared) * F32(weight)
    else:
        out = out0.astype(F32).copy()
    m = 0
    for e, c in enumerate(counts):
        for _ in range(c):
            acc = (x[m].astype(I64) @ w[e].astype(I64)).astype(I32)
            tok = (F32(pt[m]) * F32(logit[m]) if pt is not None else F32(logit[m])) if logit is not None else F32(pt[m])
            y = acc.astype(F32) * f32(s[e]) * tok
            if b is not None:
                y = y + F32(logit[m]) * f32(b[e])
            if logit is not None:
                out[rows[m]] += y
            else:
                out[rows[m]] = y
            m += 1
    return out


def terms64(x, w, s, b, pt, logit, rows, shared, offset, weight):
    """Each out element as the float64 sum of its fp32-rounded terms (the shared row and the tokens' rows of the
    model's steps), with the sum of their magnitudes and their count: what any order of fp32 additions stays near."""
    total, mag, cnt = np.zeros((BS, N)), np.zeros((BS, N)), np.zeros((BS, 1))
    sh = (np.asarray(shared).astype(F32) * F32(weight)).astype(np.float64)
    total[offset:offset + len(shared)] += sh
    mag[offset:offset + len(shared)] += np.abs(sh)
    m = 0
    for e, c in enumerate(COUNTS):
        for _ in range(c):
            one = model(x[m:m + 1], w, s, b, None if pt is None else pt[m:m + 1], logit[m:m + 1], np.zeros(1, I64),
                        None, 0, weight, bs=1, counts=[1 if i == e else 0 for i in range(len(COUNTS))])[0]
            total[rows[m]] += one
            mag[rows[m]] += np.abs(one)
            cnt[rows[m]] += 1
            m += 1
    return total, mag, cnt


def call(x, w, s, b, pt, gl, shared, logit, rows, weight=1.0, offset=0, v2=False, out=None, tuning=None, dtype=0,
         gl_type=1, tx=False, tw=False):
    out = np.zeros((BS, N), F32) if out is None else out
    if v2:
        res = ops.GroupedMatmulFinalizeRoutingWeightNzV2(x, w, s, b, None, None, None, pt, gl, shared, logit, rows,
                                                         dtype, weight, offset, tx, tw, gl_type, tuning, out)
        return res[-1]   # x2 is a non-const aclTensor* in the vendor's prototype: returned too
    return ops.GroupedMatmulFinalizeRoutingWeightNz(x, w, s, b, pt, gl, shared, logit, rows, dtype, weight, offset,
                                                    tx, tw, gl_type, out)


GL = np.array(COUNTS, I64)
# (scale dtype, bias, per-token, rowIndex dtype, shared offset, V2)
CASES = [("float32", True, True, I64, 2, False), ("bfloat16", True, False, I32, 0, True),
         ("float32", False, True, I32, 3, True), ("bfloat16", False, False, I64, 1, False)]


def check_case(case, seed=0):
    scale_name, has_bias, has_pt, row_dt, offset, v2 = case
    x, w, s, b, pt, logit, rows, shared = operands(seed, scale_name)
    b, pt = (b if has_bias else None), (pt if has_pt else None)
    got = call(x, nz(w), s, b, pt, GL, shared, logit, rows.astype(row_dt), 0.75, offset, v2)
    want = model(x, w, s, b, pt, logit, rows, shared, offset, 0.75)
    assert F.bits_equal(got, want), case
    # rows 2 and 5 sum several tokens, in the NPU's cores' order: any order of the n fp32 additions stays within
    # n * 2^-24 of the terms' magnitudes (measured over these cases and seeds: 1.6 units, n up to 4)
    total, mag, cnt = terms64(x, w, s, b, pt, logit, rows, shared, offset, 0.75)
    units = np.abs(got - total) / np.maximum(mag * 2.0 ** -24, 1e-300)
    assert (units <= cnt).all(), (case, units.max())
    return units.max()


@pytest.mark.parametrize("case", CASES)
def test_against_kernel_steps(case):
    check_case(case)


def test_without_shared_input_and_logit_copies_rows():
    """The scene without sharedInput / logit: the kernel's plain copy, out[rowIndex[m]] = dequant * pertoken; the
    rows no token reaches keep their bytes (rowIndex without repeats here)."""
    x, w, s, _, pt, _, _, _ = operands(1)
    rows = np.array([5, 0, 3, 1, 4, 2, 7, 6, 8], I64)
    out0 = np.full((M, N), 7, F32)
    got = call(x, nz(w), s, None, pt, GL, None, None, rows, out=out0.copy())
    assert F.bits_equal(got, model(x, w, s, None, pt, None, rows, None, 0, 1.0, bs=M, out0=out0))
    assert (got[8] == 7).all()   # the 9th token is past the group list: row 8 untouched


X0, W0 = np.ones((M, K), I8), np.ones((3, K, N), I8)
S0, PT0, LG0 = np.ones((3, N), F32), np.ones(M, F32), np.ones(M, F32)
R0, SH0 = np.zeros(M, I64), np.zeros((2, N), BF)


def args(**kw):
    a = dict(x=X0, w=None, s=S0, b=None, pt=PT0, gl=GL, shared=SH0, logit=LG0, rows=R0, weight=1.0, offset=0)
    a.update(kw)
    return a


INVALID_CASES = [   # (keyword changes, code, message text) in the op_api's order
    (dict(logit=None), NULLPTR, "GroupedMatmulFinalizeRoutingWeightNz do not support input nullptr."),
    (dict(rows=None), NULLPTR, "do not support input nullptr."),
    (dict(dtype=1), INVALID, "GroupedMatmulFinalizeRoutingWeightNz dtype must be 0, but is 1."),
    (dict(tw=True), INVALID, "GroupedMatmulFinalizeRoutingWeightNz transpose should be false"),
    (dict(w="nd"), INVALID, "Only support x1: ND, x2: NZ"),
    (dict(s=np.ones((3, 1, N), F32)), INVALID, "Expected 2 dimension input, but got params.scale with sizes [3, 1, 256]."),
    (dict(rows=np.zeros((M, 1), I64)), INVALID, "got params.rowIndex with sizes [9, 1]"),
    (dict(s=S0.astype(np.float16)), INVALID, "Tensor params.scale not implemented for FLOAT16"),
    (dict(b=np.ones((3, N), F32)), INVALID, "Tensor params.bias not implemented for FLOAT"),
    (dict(gl=GL.astype(I32)), INVALID, "Tensor params.groupList not implemented for INT32"),
    (dict(x=np.ones((M, 48), I8)), INVALID, "AlignedK1 value 48 is not matched with k1 value times aligneValue, which "
     "is 32."),
    (dict(gl_type=0), INVALID, "groupListType is 1, but is 0"),
    (dict(s=np.ones((3, 128), F32)), INVALID, "Scale fisrt dim should equal to weight EDim 3, but actual is 3."
     "            Scale last dim should equal to weight NDim 256 or 1, but actual is 128."),
    (dict(pt=np.ones(4, F32)), INVALID, "pertokenScale fisrt dim should equal to x MDim 9, but actual is 4."),
    (dict(gl=np.ones(2, I64)), INVALID, "groupList fisrt dim should equal to weight EDim 3, but actual is 2."),
    (dict(logit=np.ones(4, F32)), INVALID, "logit fisrt dim should equal to x MDim 9, but actual is 4."),
    (dict(offset=5), INVALID, "shareInputOffset add shareInputDim should be less than or equal to outputBS, but "
     "shareInputOffset is 7, weight is 6."),
    (dict(s=np.ones((3, N), I64)), INVALID, "scale INT64: no kernel template"),
    (dict(shared=None, logit=None), INVALID, "given a bias"),   # with b (set below)
]


@pytest.mark.parametrize("i", range(len(INVALID_CASES)))
def test_invalid_arguments(i):
    kw, code, text = INVALID_CASES[i]
    a = args(**{k: v for k, v in kw.items() if k not in ("dtype", "tw", "gl_type")})
    w = np.ones((3, K, N), I8) if a["w"] == "nd" else nz(W0)
    if "shared" in kw and kw["shared"] is None:
        a["b"] = np.ones((3, N), BF)
    extra = {k: kw[k] for k in ("dtype", "tw", "gl_type") if k in kw}
    F.expect_error(call, (a["x"], w, a["s"], a["b"], a["pt"], a["gl"], a["shared"], a["logit"], a["rows"],
                          a["weight"], a["offset"]), code, text) if not extra else \
        F.expect_error(lambda *p: call(*p, **extra), (a["x"], w, a["s"], a["b"], a["pt"], a["gl"], a["shared"],
                                                      a["logit"], a["rows"]), code, text)


def test_v2_tuning_config_and_int4_weight():
    a = (X0, nz(W0), S0, None, PT0, GL, SH0, LG0, R0)
    F.expect_error(lambda *p: call(*p, v2=True, tuning=[10]), a, INVALID,
                   "GroupedMatmulFinalizeRouting Invalid tuningConfigOptional (10)! It should be a non-negative num "
                   "and smaller than (9)")
    packed = pyaclnn.Tensor(pyaclnn.from_numpy(np.zeros(3 * 32 * 256 // 2, np.uint8)).memory, (3, K, N // 8), "int32",
                            format=NZ, storage_dims=(3, 4, 2, 16, 64))
    F.expect_error(lambda *p: call(*p, v2=True), (X0, packed, S0, None, None, GL, SH0, LG0, R0), NULLPTR,
                   "does not support nullptr for pertokenScale")
    F.expect_error(lambda *p: call(*p, v2=True), (X0, packed, S0, None, PT0, GL, SH0, LG0, R0), INVALID,
                   "the emulator does not implement the A8W4 computation")


@pytest.mark.parametrize("gl,rows,text", [
    (np.array([3, 4, 3], I64), R0, "groupList[2] = 3 takes the tokens past x1's 9 rows"),
    (np.array([-1, 0, 0], I64), R0, "groupList[0] = -1"),
    (GL, np.array([0, 1, 2, 6, 0, 0, 0, 0, 0], I64), "rowIndex[3] = 6 is not a row of out (0 .. 5)"),
])
def test_indices_outside_are_a_device_fault(gl, rows, text):
    from pyaclnn.errors import AclError
    err = pytest.raises(AclError, call, X0, nz(W0), S0, None, PT0, gl, SH0, LG0, rows).value
    assert err.code == 507015 and text in str(err), str(err)


A2_CALLS = """
for case in T.CASES:
    T.check_case(case, seed=3)
T.test_without_shared_input_and_logit_copies_rows()
"""


def test_atlas_a2():
    if F.ON_A2:
        return
    F.run_on_a2("test_gmm_finalize_routing_nz", A2_CALLS)


TORCH_BODY = """
torch.manual_seed(5)
x = torch.randint(-128, 128, (9, 32), dtype=torch.int8)
w = torch.randint(-128, 128, (3, 32, 256), dtype=torch.int8)
s = torch.rand(3, 256) * 2e-3 + 1e-4
b = (torch.rand(3, 256) * 4 - 2).to(torch.bfloat16)
pt = torch.rand(9) + 0.5
logit = torch.rand(9)
rows = torch.tensor([0, 5, 2, 2, 4, 5, 1, 2, 3], dtype=torch.int64)
shared = (torch.rand(3, 256) * 2 - 1).to(torch.bfloat16)
gl = torch.tensor([3, 0, 5], dtype=torch.int64)
wn = torch_npu.npu_format_cast(w.npu(), 29)
y = torch_npu.npu_grouped_matmul_finalize_routing(x.npu(), wn, gl.npu(), scale=s.npu(), bias=b.npu(),
                                                  pertoken_scale=pt.npu(), shared_input=shared.npu(),
                                                  logit=logit.npu(), row_index=rows.npu(), shared_input_weight=0.75,
                                                  shared_input_offset=2, output_bs=6)
OUT["y"] = [enc(to_np(v)) for v in (x, w, s, b, pt, logit, rows, shared, y)]
"""


def test_torch_npu_format_cast_then_finalize_routing():
    """npu_format_cast(w, 29), then npu_grouped_matmul_finalize_routing (op-plugin's is_weight_nz branch:
    WeightNzV2): the bytes of the direct call and of the model."""
    out = F.torch_npu_arrays(TORCH_BODY)
    x, w, s, b, pt, logit, rows, shared, y = out["y"]
    assert F.bits_equal(y, call(x, nz(w), s, b, pt, GL, shared, logit, rows, 0.75, 2, v2=True))
    assert F.bits_equal(y, model(x, w, s, b, pt, logit, rows, shared, 2, 0.75))
