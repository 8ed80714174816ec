"""aclnnGroupedMatmulFinalizeRoutingV2 / V3 on Atlas A2: the A8W4 computation of the ND-weight entries
(native_stubs/src/ops/moe/gmm_finalize_routing_a8w4.c). The reference below is written from the vendor's kernel
(hicann/ops-transformer gmm/grouped_matmul_finalize_routing/op_kernel/grouped_matmul_finalize_routing_antiquant_a8w4_msd_pre.h:
x split into hi = floor(x / 16) and lo = (x & 15) - 8, the row sum; _msd.h: the two cube passes, the fixpipe to an
fp16 workspace with the INT64 word, then fp32 lo + 16 hi, + bias, + rowsum * offset, * pertokenScale * logit, the
atomic adds into out after the shared-input prologue), the checks from its op_api (CheckShape, CheckFormat,
CheckTuningConfig) and tiling (K <= 18432); the scale words as the vendor's w4a8_gen_data.py packs them (the fp32 bits
of an fp16-rounded value in the low 32 bits). Never from our C."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID
import _fused_ops as F

A2 = pytest.mark.skipif(not F.ON_A2, reason="Atlas A2 only (test_atlas_a2 reruns these there)")
F32, I64 = np.float32, np.int64
TILING = 561002


def pack_int4(w):
    """[E, K, N] values in -8..7 as INT32 [E, K, N / 8], eight a word, lowest nibble first."""
    nib = (w.astype(np.int64) & 0xF).reshape(w.shape[0], w.shape[1], -1, 8)
    return (nib << (4 * np.arange(8))).sum(-1).astype(np.uint32).view(np.int32)


def words_of(scale, bit46=False):
    """w4a8_gen_data.py: the fp32 of the fp16-rounded scale, its bits in the low 32 bits of an INT64."""
    u = scale.astype(np.float16).astype(F32).view(np.uint32).astype(np.uint64)
    return (u | (np.uint64(1) << np.uint64(46)) if bit46 else u).view(I64)


def fp19(words):
    """The word's scale as the fixpipe reads it (aclnnTransQuantParam: the fp32's bits & 0xFFFFE000)."""
    return (words.view(np.uint64) & np.uint64(0xFFFFE000)).astype(np.uint32).view(F32)


def split(x):
    x = x.astype(np.int64)
    return np.floor(x / 16).astype(np.int64), (x & 15) - 8


def model(x, w, words, bias, off, pt, logit, rows, counts, shared, sio, siw, bs):
    """The kernel's steps, in token order."""
    hi, lo = split(x)
    s = fp19(words)[:, 0, :].astype(np.float64)                       # [E, N]
    fix = lambda acc, e: F32(acc.astype(np.float64) * s[e]).astype(np.float16).astype(F32)
    out = np.zeros((bs, w.shape[2]), F32)
    out[sio:sio + len(shared)] = shared.astype(F32) * F32(siw)
    start = 0
    for e, cnt in enumerate(counts):   # groupList: counts, in expert order
        for m in range(start, start + int(cnt)):
            c = fix(lo[m] @ w[e].astype(np.int64), e) + fix(hi[m] @ w[e].astype(np.int64), e) * F32(16)
            c = c + bias[e]
            if off is not None:
                c = F32(x[m].astype(np.int64).sum()) * off[e, 0] + c
            out[rows[m]] = out[rows[m]] + c * (pt[m] * logit[m])
        start += int(cnt)
    return out


def exact64(x, w, words, bias, off, pt, logit, rows, counts, shared, sio, siw, bs):
    """The float64 value of every out element (the fp19 scales as given) and the sum of its terms' magnitudes."""
    hi, lo = split(x)
    s = fp19(words)[:, 0, :].astype(np.float64)
    tot, mag = np.zeros((bs, w.shape[2])), np.zeros((bs, w.shape[2]))
    tot[sio:sio + len(shared)] = shared.astype(np.float64) * siw
    mag[sio:sio + len(shared)] = np.abs(tot[sio:sio + len(shared)])
    start = 0
    for e, cnt in enumerate(counts):
        for m in range(start, start + int(cnt)):
            th, tl = 16.0 * (hi[m] @ w[e].astype(np.int64)) * s[e], (lo[m] @ w[e].astype(np.int64)) * s[e]
            to = float(x[m].astype(np.int64).sum()) * off[e, 0].astype(np.float64) if off is not None else 0.0
            k = float(pt[m]) * float(logit[m])
            tot[rows[m]] += (th + tl + bias[e] + to) * k
            mag[rows[m]] += (np.abs(th) + np.abs(tl) + np.abs(bias[e]) + np.abs(to)) * abs(k)
        start += int(cnt)
    return tot, mag


# (M, K, N, counts, BS, rows seed, shared rows, sharedInputOffset, offset given, bias kind)
SHAPES = [
    (7, 256, 72, [4, 3], 5, 1, 2, 1, False, "normal"),
    (8, 512, 128, [3, 0, 4], 7, 2, 3, 4, True, "normal"),
    (8, 768, 136, [2, 2, 1, 1], 8, 3, 8, 0, True, "compensate"),
    (6, 192, 256, [6], 3, 4, 1, 2, False, "compensate"),
    (9, 1024, 80, [1, 3, 2, 0, 3], 9, 5, 4, 5, True, "normal"),
]


def operands(case, seed):
    M, K, N, counts, bs, rseed, srows, sio, has_off, bias_kind = case
    rng = np.random.default_rng(seed)
    E = len(counts)
    x = rng.integers(-128, 128, (M, K)).astype(np.int8)
    w = rng.integers(-8, 8, (E, K, N)).astype(np.int8)
    words = words_of(rng.normal(0, 0.01, (E, 1, N)).astype(F32), bit46=seed % 2 == 1)
    if bias_kind == "compensate":   # the +8 of the low half given back: 8 * sum_k w * scale
        bias = (8.0 * w.astype(np.float64).sum(1) * fp19(words)[:, 0, :]).astype(F32)
    else:
        bias = rng.normal(0, 2, (E, N)).astype(F32)
    off = rng.integers(-5, 5, (E, 1, N)).astype(F32) * F32(0.01) if has_off else None
    pt, logit = rng.uniform(0.1, 1, M).astype(F32), rng.uniform(0, 1, M).astype(F32)
    rows = np.random.default_rng(rseed).integers(0, bs, M).astype(I64)
    rows[:bs] = np.random.default_rng(rseed).permutation(bs)[:min(bs, M)]
    shared = R.cast(rng.normal(0, 1, (srows, N)), "bfloat16")
    return x, w, words, bias, off, pt, logit, rows, np.array(counts, I64), shared, sio, 0.75, bs


def call(op, x, w, words, bias, off, pt, logit, rows, counts, shared, sio, siw, bs, tuning=None, out=None):
    out = np.zeros((bs, w.shape[2]), F32) if out is None else out
    a = (x, pack_int4(w), words, bias, off, None, None, pt, counts, shared, logit, rows, 0, siw, sio, False, False, 1)
    a = a + ((tuning,) if op == "V3" else ()) + (out,)
    return np.asarray(getattr(ops, f"GroupedMatmulFinalizeRouting{op}")(*a)[-1])


@A2
@pytest.mark.parametrize("op", ["V2", "V3"])
@pytest.mark.parametrize("case", SHAPES, ids=[f"k{c[1]}-e{len(c[3])}" for c in SHAPES])
def test_against_kernel_steps(case, op):
    """Bit for bit against the kernel's steps; within 2 units of 2^-11 of the float64 terms' magnitudes."""
    o = operands(case, case[1] + len(case[3]))
    got = call(op, *o, tuning=[2] if op == "V3" else None)
    assert F.bits_equal(got, model(*o)), case
    tot, mag = exact64(*o)
    assert (np.abs(got - tot) <= 2 * 2.0 ** -11 * np.maximum(mag, 1e-30)).all(), case


@A2
def test_compensated_bias_gives_the_matmul():
    """With bias = 8 * sum_k w * s (the +8 of the low half given back) and no offset, out is the dequantised matmul
    x @ (w * s) * pertokenScale * logit scattered into out: the kernel's formula read as its docs state it."""
    o = operands(SHAPES[3], 11)
    x, w, words, _, _, pt, logit, rows, counts, shared, sio, siw, bs = o
    got = call("V3", *o)
    want = np.zeros((bs, w.shape[2]))
    want[sio:sio + len(shared)] = shared.astype(np.float64) * siw
    for m in range(len(x)):
        want[rows[m]] += (x[m].astype(np.float64) @ w[0]) * fp19(words)[0, 0] * float(pt[m]) * float(logit[m])
    tot, mag = exact64(*o)
    assert np.allclose(tot, want, rtol=0, atol=1e-9 * np.abs(mag).max())
    assert (np.abs(got - want) <= 2 * 2.0 ** -11 * mag).all()


@A2
def test_measured_against_float64():
    """The figure in the note: worst |got - float64| in units of 2^-11 of the terms' magnitudes."""
    worst = 0.0
    for i, case in enumerate(SHAPES * 4):
        o = operands(case, 1000 + i)
        tot, mag = exact64(*o)
        worst = max(worst, float((np.abs(call("V3", *o) - tot) / (mag * 2.0 ** -11)).max()))
    assert worst <= 2, worst
    print("measured", worst)


@A2
def test_uncovered_tokens_and_out_reset():
    """Tokens past the group list's sum are not read; out is rewritten whole (zeros outside the shared rows)."""
    case = (8, 256, 72, [2, 3], 6, 7, 2, 3, False, "normal")
    o = list(operands(case, 5))
    o[7] = o[7].copy()
    o[7][5:] = 99   # rowIndex of tokens 5.. is never read
    got = call("V2", *o, out=np.full((6, 72), 7, F32))
    assert F.bits_equal(got, model(*o))


@A2
@pytest.mark.parametrize("counts,text", [([5, 4], "groupList[1] = 4 takes the tokens past x1's 7 rows"),
                                         ([-1, 3], "groupList[0] = -1"),
                                         ([4, 3], "rowIndex[6] = 9 is not a row of out")])
def test_device_faults(counts, text):
    """Negative counts, tokens past x1's rows or a row index outside out: the kernel would read / write outside them."""
    from pyaclnn.errors import AclError
    o = list(operands(SHAPES[0], 3))
    o[8] = np.array(counts, I64)
    if "rowIndex" in text:
        o[7] = o[7].copy()
        o[7][6] = 9
    with pytest.raises(AclError) as e:
        call("V3", *o)
    assert text in str(e.value), str(e.value)


def args(**kw):
    """V3's arguments, a valid call: M 6, K 256, N 72, E 2, BS 4."""
    x, w, words, bias, off, pt, logit, rows, counts, shared, sio, siw, bs = operands(
        (6, 256, 72, [3, 3], 4, 1, 2, 1, True, "normal"), 1)
    a = dict(x1=x, x2=pack_int4(w), scale=words, bias=bias, offset=off, aqs=None, aqo=None, pts=pt, gl=counts,
             shared=shared, logit=logit, row=rows, dtype=0, siw=siw, sio=sio, t1=False, t2=False, glt=1, tuning=None,
             out=np.zeros((bs, 72), F32))
    a.update(kw)
    return tuple(a.values())


_A = args()
# (kwargs, code, message): one fault each, in the op_api's order (CheckShape, CheckDimValue, empty tensors, CheckFormat,
# CheckTuningConfig), then the tiling's K limit
CASES = [
    (dict(x1=_A[0][:, :192]), INVALID, "x1 k dim and x2 k dim should be same, but x1 is 192, x2 is 256."),
    (dict(x1=_A[0][:, :128], x2=_A[1][:, :128]), INVALID,
     "Weight k dim 128 and n dim 72 do not support. In W4A8 mode, only support k mod 64 equal 0, n mod 8 equal 0, k "
     "should bigger than 128, n should bigger than 64."),
    (dict(x1=np.zeros((6, 224), np.int8), x2=np.zeros((2, 224, 9), np.int32)), INVALID,
     "Weight k dim 224 and n dim 72 do not support."),
    (dict(x2=_A[1][:, :, :8], scale=_A[2][:, :, :64]), INVALID, "Weight k dim 256 and n dim 64 do not support."),
    (dict(out=np.zeros((1, 4, 72), F32)), INVALID, "Out dim num should be equal to 2, but is 3."),
    (dict(out=np.zeros((7, 72), F32)), INVALID,
     "Out 1st dim should be less than or equal to x MDim , but out 1st dim is 7"),
    (dict(out=np.zeros((4, 80), F32)), INVALID,
     "Out 2nd dim should be equal to weight NDim, but out 2nd dim is 80, weight NDim is 72."),
    (dict(sio=-1), INVALID, "sharedInputOffset should bigger than or equal to 0"),
    (dict(glt=0), INVALID, "groupListType is 1, but is 0"),
    (dict(scale=np.concatenate([_A[2], _A[2]], 1)), INVALID,
     "Scale fisrt dim should equal to weight EDim 2, but actual is 2, Scale second dim should be 1, but actual is 2, "
     "Scale last dim should equal to weight NDim 72 or 1, but actual is 72."),
    (dict(offset=np.zeros((2, 1, 64), F32)), INVALID, "w4a8 offset's dim value should equal scale, which is (2, 1, 64)"),
    (dict(bias=np.zeros((3, 72), F32)), INVALID, "w4a8 bias's dim value should be (e, n), which is (3, 72)"),
    (dict(pts=np.ones(5, F32)), INVALID, "pertokenScale fisrt dim should equal to x MDim 6, but actual is 5."),
    (dict(gl=np.array([6], I64)), INVALID, "groupList fisrt dim should equal to weight EDim 2, but actual is 1."),
    (dict(shared=R.cast(np.zeros((5, 72)), "bfloat16")), INVALID,
     "shareInput fisrt dim should less than or equal to outputBS 4, but actual is 5.        shareInput last dim "
     "should equal to weight NDim 72, but actual is 72."),
    (dict(logit=np.ones(7, F32)), INVALID, "logit fisrt dim should equal to x MDim 6, but actual is 7."),
    (dict(row=np.zeros(5, I64)), INVALID, "rowIndex fisrt dim should equal to x MDim 6, but actual is 5."),
    (dict(sio=3), INVALID, "shareInputOffset add shareInputDim should be less than or equal to outputBS, but "
     "shareInputOffset is 5, weight is 4."),
    (dict(x1=np.zeros((0, 256), np.int8), pts=np.ones(0, F32), logit=np.ones(0, F32), row=np.zeros(0, I64),
          out=np.zeros((0, 72), F32), shared=R.cast(np.zeros((0, 72)), "bfloat16"), sio=0), INVALID,
     "GroupedMatmulFinalizeRouting do not support pertokenScaleOptional size is 0."),
    (dict(shared=R.cast(np.zeros((0, 72)), "bfloat16")), INVALID,
     "GroupedMatmulFinalizeRouting WeightNz do not support input tensor size is 0."),
    (dict(tuning=[7]), INVALID, "GroupedMatmulFinalizeRouting Invalid tuningConfigOptional (7)! It should be a "
     "non-negative num and smaller than (6)"),
    (dict(tuning=[-1]), INVALID, "Invalid tuningConfigOptional (-1)!"),
    (dict(x1=np.zeros((6, 18496), np.int8), x2=np.zeros((2, 18496, 9), np.int32)), TILING,
     "GMM_tiling: K should be less than 18432 on the A8W4 scenario, but now is 18496"),
]


@A2
@pytest.mark.parametrize("kw,code,text", CASES, ids=range(len(CASES)))
def test_checks_in_order(kw, code, text):
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV3, args(**kw), code, text)


@A2
def test_v2_checks_and_limits():
    """V2 runs the same steps (no tuningConfig); the earlier checks keep their codes; what stays undefined is refused."""
    v2 = lambda a: a[:18] + a[19:]
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args(glt=0)), INVALID, "groupListType is 1, but is 0")
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args(scale=_A[2].astype(F32))), INVALID,
                   "Tensor params.scale not implemented for FLOAT, should be in dtype support list [INT64].")
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args(bias=None)), 161001,
                   "GroupedMatmulFinalizeRoutingV2 weightNd do not support input nullptr.")
    # the weight handed as a transposed view: the op_api flips transposeX2, which the A8W4 tiling never reads
    import pyaclnn
    wt = pyaclnn.from_numpy(np.zeros((2, 9, 256), np.int32)).transpose(1, 2)
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args(x2=wt)), INVALID, "x2 given transposed by its strides")
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, v2(args(x1=np.zeros((1, 6, 256), np.int8))), INVALID,
                   "the emulator models x1 [M, K] and x2 [E, K, N / 8] only")


def test_v2_on_950_refused():
    """Ascend 950: V2's A8W4 kernel is an Atlas A2 / A3 one; the emulator refuses after the checks."""
    if F.ON_A2:
        pytest.skip("Ascend 950 only")
    F.expect_error(ops.GroupedMatmulFinalizeRoutingV2, args()[:18] + args()[19:], INVALID,
                   "the emulator does not implement the A8W4 computation of GroupedMatmulFinalizeRoutingV2 on Ascend 950")


A2_CALLS = """
import numpy as np
for c in T.SHAPES:
    for op in ("V2", "V3"):
        T.test_against_kernel_steps(c, op)
T.test_compensated_bias_gives_the_matmul()
T.test_measured_against_float64()
T.test_uncovered_tokens_and_out_reset()
for counts, text in [([5, 4], "groupList[1] = 4 takes the tokens past x1's 7 rows"), ([-1, 3], "groupList[0] = -1"),
                     ([4, 3], "rowIndex[6] = 9 is not a row of out")]:
    T.test_device_faults(counts, text)
for kw, code, text in T.CASES:
    T.test_checks_in_order(kw, code, text)
T.test_v2_checks_and_limits()
"""


def test_atlas_a2():
    if F.ON_A2:
        pytest.skip("runs in-process here")
    F.run_on_a2("test_gmmfr_a8w4", A2_CALLS)
