"""aclnnGroupedMatmulFinalizeRoutingV3 on the Ascend 950: the MX paths (native_stubs/src/ops/moe/
gmm_finalize_routing_mx.c, ops/quant/mx_dequant.h). The reference below is written from the vendor's steps (the
arch35 MX cube with one E8M0 scale per 32 elements of K on each side, a bfloat16 bias in the L0C, the finalize-routing
prologue and epilogue), with exact rational arithmetic for each K-group and ml_dtypes for the codes."""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import codecs, ops
from _op_helpers import INVALID, NULLPTR
import _fused_ops as F

A2 = F.ON_A2
F32, I64, I32 = np.float32, np.int64, np.int32
E4, E5, FP4, E8, BF16 = (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float4_e2m1fn,
                         ml_dtypes.float8_e8m0fnu, ml_dtypes.bfloat16)
FRAC = {E4: 9, E5: 16, FP4: 1}   # decoded values are integers times 2^-FRAC
M, N, E, BS = 7, 32, 2, 5
COUNTS = np.array([4, 3], I64)
ROWS = np.array([0, 3, 1, 1, 4, 0, 2], I64)


def codes(rng, dt, shape):
    """Finite codes of dt spread over its range."""
    if dt is FP4:
        return rng.integers(0, 16, shape).astype(np.uint8).view(FP4) if False else \
            np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0.5, -1, -2, -3, -4, -6], F32)[rng.integers(0, 14, shape)].astype(FP4)
    raw = rng.integers(0, 256, shape).astype(np.uint8).view(dt)
    bad = ~np.isfinite(raw.astype(F32))
    return np.where(bad, np.zeros((), dt), raw).astype(dt)


def scales(rng, shape, lo=112, hi=140):
    return rng.integers(lo, hi, shape).astype(np.uint8).view(E8)


def to_f32(num: int, exp: int) -> F32:
    """num * 2^exp rounded once to fp32 (nearest, ties to even): via the correctly rounded double, with the one case
    where that double is a tie between two fp32 values decided by the exact value."""
    exact = Fraction(num) * Fraction(2) ** exp
    d = float(exact)
    with np.errstate(over="ignore"):
        f = F32(d)
    if np.isfinite(f) and float(f) != d:
        lo, hi = (f, np.nextafter(f, F32(np.inf))) if float(f) < d else (np.nextafter(f, F32(-np.inf)), f)
        if (float(lo) + float(hi)) / 2 == d and exact != d:
            f = hi if exact > d else lo
    return F32(f)


def groups(gl, gl_type):
    """The kernel's GetSplitValueFromGroupList: (first token, count) per expert; groups of <= 0 tokens skipped."""
    pre, out = 0, []
    for v in gl:
        n = int(v) - pre if gl_type == 0 else int(v)
        pre = int(v) if gl_type == 0 else pre + n
        out.append((pre - n, max(n, 0)))
    return out


def model(x, w, ws, xs, bias, logit, rows, shared, offset, weight, counts=COUNTS, bs=BS, gl_type=1):
    """x [M, K], w [E, K, N] (codes), ws [E, ceil(K/64), N, 2], xs [M, ceil(K/64), 2] (E8M0), the kernel's steps."""
    K = x.shape[1]
    xi = (x.astype(np.float64) * 2.0 ** FRAC[x.dtype.type]).astype(np.int64).astype(object)
    wi = (w.astype(np.float64) * 2.0 ** FRAC[w.dtype.type]).astype(np.int64).astype(object)
    ex = xs.view(np.uint8).reshape(len(x), -1).astype(int)
    ew = ws.view(np.uint8).transpose(0, 2, 1, 3).reshape(w.shape[0], w.shape[2], -1).astype(int)   # [E, N, groups]
    shift = -FRAC[x.dtype.type] - FRAC[w.dtype.type] - 254
    out = np.zeros((bs, w.shape[2]), F32)
    if shared is not None:
        out[offset:offset + len(shared)] = shared.astype(F32) * F32(weight)
    for e, (first, cnt) in enumerate(groups(counts, gl_type)):
        for m in range(first, first + cnt):
            for n in range(w.shape[2]):
                acc = F32(bias[e, n]) if bias is not None else F32(0)
                for g in range((K + 31) // 32):
                    s = int(np.dot(xi[m, 32 * g:32 * g + 32], wi[e, 32 * g:32 * g + 32, n]))
                    acc = F32(acc + to_f32(s, shift + ex[m, g] + ew[e, n, g]))
                out[rows[m], n] = F32(out[rows[m], n] + F32(acc * logit[m]))
    return out


def exact64(x, w, ws, xs, bias, logit, rows, shared, offset, weight):
    """The float64 value of every out element and the sum of its terms' magnitudes."""
    K = x.shape[1]
    g = np.arange(K) // 32
    sx = 2.0 ** (xs.view(np.uint8).reshape(len(x), -1).astype(np.float64)[:, g] - 127)
    sw = 2.0 ** (ws.view(np.uint8).transpose(0, 2, 1, 3).reshape(w.shape[0], w.shape[2], -1)
                 .astype(np.float64)[:, :, g] - 127)
    a = x.astype(np.float64) * sx
    tot, mag = np.zeros((BS, w.shape[2])), np.zeros((BS, w.shape[2]))
    if shared is not None:
        tot[offset:offset + len(shared)] = shared.astype(np.float64) * weight
    m = 0
    for e, cnt in enumerate(COUNTS):
        b = w[e].astype(np.float64) * sw[e].T
        for m in range(m, m + cnt):
            terms = a[m][:, None] * b
            bb = bias[e].astype(np.float64) if bias is not None else 0.0
            tot[rows[m]] += (terms.sum(0) + bb) * logit[m]
            mag[rows[m]] += (np.abs(terms).sum(0) + np.abs(bb)) * abs(logit[m])
        m += 1
    return tot, mag


def operands(seed, xdt, wdt, K):
    rng = np.random.default_rng(seed)
    g = (K + 63) // 64
    x, w = codes(rng, xdt, (M, K)), codes(rng, wdt, (E, K, N))
    ws, xs = scales(rng, (E, g, N, 2)), scales(rng, (M, g, 2))
    bias = rng.normal(0, 4, (E, N)).astype(BF16)
    logit = rng.random(M).astype(F32)
    shared = rng.normal(0, 1, (2, N)).astype(BF16)
    return x, w, ws, xs, bias, logit, shared


def call(x, w, ws, xs, bias, gl, shared, logit, rows, weight=1.0, offset=0, tx1=False, tx2=False, gl_type=1,
         dtype=0, out=None, offset_t=None, aq=None):
    out = np.zeros((BS, N), F32) if out is None else out
    res = ops.GroupedMatmulFinalizeRoutingV3(x, w, ws, bias, offset_t, aq, None, xs, gl, shared, logit, rows, dtype,
                                             weight, offset, tx1, tx2, gl_type, None, out)
    return res[-1]   # x2 is a non-const aclTensor* in the vendor's prototype: returned too


# (x dtype, weight dtype, K, bias, shared, transposeX2, groupListType)
CASES = [(E4, E4, 96, True, True, False, 1), (E5, E5, 80, True, False, True, 0), (E4, E5, 64, False, True, False, 1),
         (E5, E4, 40, True, True, True, 1), (FP4, FP4, 128, True, True, False, 0), (FP4, FP4, 72, False, False, True, 1)]


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0].__name__}-{c[1].__name__}-{c[2]}" for c in CASES])
def test_against_kernel_steps(case):
    """Bit for bit against the steps; within n * 2^-24 of the float64 terms' magnitudes for n fp32 roundings."""
    xdt, wdt, K, has_bias, has_shared, tx2, gl_type = case
    x, w, ws, xs, bias, logit, shared = operands(K, xdt, wdt, K)
    bias, shared = (bias if has_bias else None), (shared if has_shared else None)
    gl = COUNTS if gl_type == 1 else np.cumsum(COUNTS)
    wa, wsa = (np.ascontiguousarray(w.transpose(0, 2, 1)), np.ascontiguousarray(ws.transpose(0, 2, 1, 3))) if tx2 \
        else (w, ws)
    got = call(x, wa, wsa, xs, bias, gl, shared, logit, ROWS, 0.75, 1 if has_shared else 0, tx2=tx2, gl_type=gl_type)
    want = model(x, w, ws, xs, bias, logit, ROWS, shared, 1 if has_shared else 0, 0.75, counts=gl, gl_type=gl_type)
    assert F.bits_equal(got, want), case
    tot, mag = exact64(x, w, ws, xs, bias, logit, ROWS, shared, 1 if has_shared else 0, 0.75)
    n = (K + 31) // 32 + 4   # groups, bias, logit, two scatter-adds
    assert (np.abs(got - tot) <= n * 2.0 ** -24 * np.maximum(mag, 1e-300)).all(), case


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_measured_against_float64():
    """The figure in the note: worst |got - float64| in units of 2^-24 of the terms' magnitudes over these cases."""
    worst = 0.0
    for case in CASES:
        xdt, wdt, K = case[:3]
        x, w, ws, xs, bias, logit, shared = operands(100 + K, xdt, wdt, K)
        got = call(x, w, ws, xs, bias, COUNTS, shared, logit, ROWS, 0.75, 1)
        tot, mag = exact64(x, w, ws, xs, bias, logit, ROWS, shared, 1, 0.75)
        worst = max(worst, float((np.abs(got - tot) / (mag * 2.0 ** -24)).max()))
    assert worst <= 4, worst
    print("measured", worst)


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_nan_scale_groups_and_empty_m():
    """E8M0 code 255 is NaN and poisons its column's group; groups of <= 0 tokens; M = 0 returns before the checker
    (out untouched)."""
    x, w, ws, xs, bias, logit, shared = operands(3, E4, E4, 64)
    # groups of <= 0 tokens are skipped: a zero count, a cumulative sum that goes back
    for gl, t in (([0, 5], 1), ([5, 3], 0)):
        got = call(x, w, ws, xs, bias, np.array(gl, I64), shared, logit, ROWS, 1.0, 0, gl_type=t)
        assert F.bits_equal(got, model(x, w, ws, xs, bias, logit, ROWS, shared, 0, 1.0, counts=gl, gl_type=t))
    ws = ws.copy()
    ws.view(np.uint8)[1, 0, 5, 1] = 255
    got = call(x, w, ws, xs, bias, COUNTS, shared, logit, ROWS, 1.0, 0)
    hit = np.unique(ROWS[COUNTS[0]:])
    assert np.isnan(got[hit, 5]).all() and not np.isnan(np.delete(got, 5, axis=1)).any()
    out = np.full((BS, N), 7, F32)
    got = call(x[:0], w, ws, xs[:0], bias, np.zeros(2, I64), None, logit[:0], ROWS[:0], out=out)
    assert (got == 7).all()


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("gl,gl_type,text", [([5, 5], 1, "takes tokens 5 .. 9, outside x1's 7 rows"),
                                             ([-1, 3], 1, "takes tokens -1 .. 1"),
                                             ([4, 3], 1, "rowIndex[6] = 9 is not a row of out")])
def test_device_faults(gl, gl_type, text):
    """Tokens past x1's rows or a row index outside out: the kernel would read / write outside them."""
    from pyaclnn.errors import AclError
    x, w, ws, xs, bias, logit, shared = operands(4, E4, E4, 64)
    rows = ROWS.copy()
    rows[6] = 9
    with pytest.raises(AclError) as e:
        call(x, w, ws, xs, bias, np.array(gl, I64), shared, logit, rows if "rowIndex" in text else ROWS)
    assert text in str(e.value), str(e.value)


def args(**kw):
    x, w, ws, xs, bias, logit, shared = operands(9, E4, E4, 64)
    a = dict(x=x, w=w, ws=ws, bias=bias, offset_t=None, aq=None, xs=xs, gl=COUNTS, shared=shared, logit=logit,
             rows=ROWS, dtype=0, weight=1.0, offset=0, tx1=False, tx2=False, gl_type=1, out=np.zeros((BS, N), F32))
    a.update(kw)
    return (a["x"], a["w"], a["ws"], a["bias"], a["offset_t"], a["aq"], None, a["xs"], a["gl"], a["shared"],
            a["logit"], a["rows"], a["dtype"], a["weight"], a["offset"], a["tx1"], a["tx2"], a["gl_type"], None,
            a["out"])


_X, _W, _WS, _B, _L, _SH = (operands(9, E4, E4, 64)[i] for i in (0, 1, 2, 4, 5, 6))
# In the op_api's order: the V3 entry, then the 950 checker (dtypes, dims, attrs, shapes, MXFP4, formats).
INVALID_950 = [
    (NULLPTR, dict(xs=None), "Required parameter 'pertokenScale' is null."),
    (NULLPTR, dict(aq=_B), "Required parameter 'antiquantScale' must be null."),
    (INVALID, dict(dtype=1), "dtype must be 0 (FLOAT32), but is 1"),
    (INVALID, dict(tx1=True), "must be false/false or false/true on DAV_3510"),
    (INVALID, dict(x=_X.astype(F32).astype(np.int8)), "for mx, the dtypes of x and weight must be within"),
    (INVALID, dict(x=_X.astype(FP4)), "MxA8W4"[:0] + "both MXFP4 or both MXFP8"),
    (INVALID, dict(w=_W.astype(FP4)), "MxA8W4"),
    (INVALID, dict(ws=_WS.astype(F32)), "per-token quant"),
    (INVALID, dict(ws=_WS.view(np.uint8).astype(I32)), "{FLOAT8_E8M0, FLOAT32, BFLOAT16}"),
    (INVALID, dict(offset_t=_B.astype(F32)), "Parameter offset of aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize"),
    (INVALID, dict(bias=_B.astype(F32)), "Parameter bias of"),
    (INVALID, dict(rows=ROWS.astype(I32)), "Parameter rowIndex of"),
    (INVALID, dict(out=np.zeros((BS, N), BF16)), "Parameter rowIndex of"),
    (INVALID, dict(out=np.zeros((BS, N), BF16), rows=ROWS.astype(I32)), "Parameter dtype of"),
    (INVALID, dict(ws=_WS[:, :, :, 0]), "has incorrect shape dim 3. It should be 4"),
    (INVALID, dict(gl_type=2), "Parameter groupListType"),
    (INVALID, dict(offset=-1), "must be greater than or equal to 0"),
    (INVALID, dict(x=_X[:, :32]), "axis K of x must be equal to axis K of weight"),
    (INVALID, dict(gl=COUNTS[:1]), "must be equal to the number of experts in weight [2]"),
    (INVALID, dict(ws=_WS[:, :, :16]), "Parameter scale of"),
    (INVALID, dict(bias=np.zeros((E, 2 * N), BF16)), "has incorrect shape [2, 64]. It should be [2, 32]"),
    (INVALID, dict(offset=4), "sharedInputOffset plus sharedInputLen must be less than or equal to batch(5)"),
    (INVALID, dict(shared=_SH[:, :16]), "Parameter shareInput of"),
]


@pytest.mark.skipif(A2, reason="Ascend 950 only")
@pytest.mark.parametrize("code,kw,text", INVALID_950, ids=range(len(INVALID_950)))
def test_invalid_arguments(code, kw, text):
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV3, args(**kw), code, text)


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_mxfp4_shape_rules():
    """The MXFP4 rules after the shape checks: k even (the packed pairs), k != 2."""
    rng = np.random.default_rng(1)
    x, w = codes(rng, FP4, (M, 2)), codes(rng, FP4, (E, 2, N))
    a = args(x=x, w=w, ws=scales(rng, (E, 1, N, 2)), xs=scales(rng, (M, 1, 2)))
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV3, a, INVALID, "in MXFP4, k cannot be 2")


TORCH_BODY = """
torch.manual_seed(3)
def fp8(shape):
    c = torch.randint(0, 256, shape, dtype=torch.int32).to(torch.uint8)
    c[(c & 0x7F) == 0x7F] = 0   # no E4M3FN NaN
    return c.view(torch.float8_e4m3fn)
E, M, K, N, B = 2, 6, 64, 32, 4
x, w, wt = fp8((M, K)), fp8((E, K, N)), fp8((E, N, K))
ws = torch.randint(118, 136, (E, 1, N, 2), dtype=torch.int32).to(torch.uint8)
wst = torch.randint(118, 136, (E, N, 1, 2), dtype=torch.int32).to(torch.uint8)
xs = torch.randint(118, 136, (M, 1, 2), dtype=torch.int32).to(torch.uint8)
gl = torch.tensor([4, 2], dtype=torch.int64)
rows = torch.tensor([0, 1, 3, 2, 1, 0], dtype=torch.int64)
logit = torch.rand(M)
bias = (torch.rand(E, N) * 4 - 2).to(torch.bfloat16)
shared = (torch.rand(2, N) * 2 - 1).to(torch.bfloat16)
e8 = torch_npu.float8_e8m0fnu
y = torch_npu.npu_grouped_matmul_finalize_routing(x.npu(), w.npu(), gl.npu(), scale=ws.npu(), bias=bias.npu(),
    pertoken_scale=xs.npu(), shared_input=shared.npu(), logit=logit.npu(), row_index=rows.npu(),
    shared_input_weight=0.5, shared_input_offset=1, output_bs=B, scale_dtype=e8, pertoken_scale_dtype=e8)
yt = torch_npu.npu_grouped_matmul_finalize_routing(x.npu(), wt.npu().transpose(1, 2), gl.npu(),
    scale=wst.npu().transpose(1, 2), pertoken_scale=xs.npu(), logit=logit.npu(), row_index=rows.npu(), output_bs=B,
    group_list_type=1, scale_dtype=e8, pertoken_scale_dtype=e8)
OUT["y"] = [enc(to_np(v)) for v in (x.view(torch.uint8), w.view(torch.uint8), wt.view(torch.uint8), ws, wst, xs,
            logit, rows, bias, shared, y, yt)]
# FP4: int8 tensors holding two E2M1 codes a byte, named by x_dtype / w_dtype (op-plugin's mxfp4 call)
x4 = torch.randint(-128, 128, (M, K // 2), dtype=torch.int8)
w4 = torch.randint(-128, 128, (E, K, N // 2), dtype=torch.int8)
y4 = torch_npu.npu_grouped_matmul_finalize_routing(x4.npu(), w4.npu(), gl.npu(), scale=ws.npu(), bias=bias.npu(),
    pertoken_scale=xs.npu(), logit=logit.npu(), row_index=rows.npu(), output_bs=B, x_dtype=torch_npu.float4_e2m1fn_x2,
    w_dtype=torch_npu.float4_e2m1fn_x2, scale_dtype=e8, pertoken_scale_dtype=e8)
OUT["fp4"] = [enc(to_np(v)) for v in (x4, w4, y4)]
"""


@pytest.mark.skipif(A2, reason="Ascend 950 only")
def test_torch_npu_matches_direct_call():
    """npu_grouped_matmul_finalize_routing with FLOAT8_E4M3FN tensors and uint8 scales as float8_e8m0fnu (op-plugin's
    V3 call), the weight and its scale also given as transposed views (the op_api reads the strides), and int8 tensors
    of E2M1 pairs (x_dtype / w_dtype float4_e2m1fn_x2): the bytes of the direct call and of the model."""
    res = F.torch_npu_arrays(TORCH_BODY)
    x, w, wt, ws, wst, xs, logit, rows, bias, shared, y, yt = res["y"]
    x, w, wt, ws, wst, xs = x.view(E4), w.view(E4).copy(), wt.view(E4).copy(), ws.view(E8), wst.view(E8), xs.view(E8)
    gl, out = np.array([4, 2], I64), np.zeros((4, N), F32)
    want = ops.GroupedMatmulFinalizeRoutingV3(x, w, ws, bias, None, None, None, xs, gl, shared, logit, rows, 0, 0.5,
                                              1, False, False, 1, None, out)[-1]
    assert F.bits_equal(y, np.asarray(want))
    assert F.bits_equal(y, model(x, w, ws, xs, bias, logit, rows, shared, 1, 0.5, counts=gl, bs=4))
    want_t = ops.GroupedMatmulFinalizeRoutingV3(x, wt, wst, None, None, None, None, xs, gl, None, logit, rows, 0, 1.0,
                                                0, False, True, 1, None, np.zeros((4, N), F32))[-1]
    assert F.bits_equal(yt, np.asarray(want_t))
    x4, w4, y4 = res["fp4"]
    e2m1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], F32)
    fp4 = lambda b: e2m1[codecs.unpack_nibbles(b.view(np.uint8)).reshape(b.shape[:-1] + (-1,))].astype(FP4)
    x4, w4 = fp4(x4), fp4(w4)   # the low nibble is the first element
    want4 = ops.GroupedMatmulFinalizeRoutingV3(x4, w4, ws, bias, None, None, None, xs, gl, None, logit, rows, 0, 1.0, 0,
                                               False, False, 1, None, np.zeros((4, N), F32))[-1]
    assert F.bits_equal(y4, np.asarray(want4))
    assert F.bits_equal(y4, model(x4, w4, ws, xs, bias, logit, rows, None, 0, 1.0, counts=gl, bs=4))


def a2_checks():
    """Atlas A2 keeps its V3 entry: an FP8 weight is refused as not the packed INT4 one."""
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV3, args(), INVALID, "weight type should be INT_32")


def test_atlas_a2():
    if A2:
        a2_checks()
        return
    F.run_on_a2("test_gmm_finalize_routing_mx", "T.a2_checks()")
