"""aclnnFlashAttentionScore (V1, V2, V4, VarLen V1/V2/V4) and its gradient (Grad V1, V2, V4, UnpaddingScoreGrad
V1/V2) against the float64 reference of the vendor's definition (tests/reference/attention.py) and torch CPU's
scaled_dot_product_attention: every layout (BSH, SBH, BSND, BNSD, TND with actual sequence lengths), sparse modes
0-8, pse types 0-3, GQA/MQA ratios, fp32/fp16/bf16, strided inputs, invalid rows, dropout (statistics, per-seed
determinism, the mask tensor of Atlas A2/A3 and the Philox stream of Ascend 950 giving the same bits), the op_apis'
validation codes and messages (both SoCs), and torch_npu's SDPA and npu_fusion_attention on the emulator.

Class (c): the arch35 kernel's fp32 steps with element-order sums (flash_attention.toml's notes state the figures
measured here): |err| <= TOL * max|ref| per tensor."""
from __future__ import annotations

import numpy as np
import pytest

import helpers
import pyaclnn
from pyaclnn import ops
from _math_ops import dec, enc, torch_npu_run
from _op_helpers import INVALID, NULLPTR, strided
from reference import attention as A
from reference import elementwise as R

RNG = np.random.default_rng(2028)
BIG = 2**31 - 1
F32, F16, BF16 = "float32", "float16", "bfloat16"
TOL = {F32: 2e-6, F16: 2e-3, BF16: 1.6e-2}          # forward, of max|ref| (measured: 9e-7, 4.4e-4, 3.1e-3)
GTOL = {F32: 4e-6, F16: 4e-3, BF16: 2.4e-2}         # gradient (measured: 7e-7, 6.7e-4, 4.6e-3)
CAUSAL = np.triu(np.ones((2048, 2048), bool), 1)    # the compressed mask torch_npu passes


def rand(shape, name, scale=1.0):
    return R.cast(RNG.standard_normal(shape) * scale, name)


def lay(x, layout):
    """A BNSD array in `layout` (its dtype kept)."""
    return np.ascontiguousarray(A.from_bnsd(x, layout)).astype(x.dtype)


def n_of(x, layout, d):
    """Heads of a layout tensor whose head dim is d."""
    return x.shape[-1] // d if layout in ("BSH", "SBH") else x.shape[1 if layout == "BNSD" else 2]


def pack_bits(keep: np.ndarray) -> np.ndarray:
    """A keep array (flattened in score order) as the dropout mask bytes: bit k of byte k // 8, low bit first,
    padded to 128 bits (+32 bytes, as torch_npu allocates)."""
    bits = np.zeros(((keep.size + 127) // 128) * 128, np.uint8)
    bits[:keep.size] = keep.reshape(-1)
    return np.concatenate([np.packbits(bits, bitorder="little"), np.zeros(32, np.uint8)])


def unpack_bits(mask: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(np.asarray(mask, np.uint8), bitorder="little")[:n].astype(bool)


# ---- calling the operators -------------------------------------------------------------------------------

def fa(q, k, v, layout, n1, scale, *, version="V4", pse=None, drop=None, mask=None, prefix=None, aq=None, akv=None,
       qstart=None, kvstart=None, keep=1.0, pre=BIG, nxt=BIG, inner=0, sparse=0, pse_type=1, smlayout="", seed=0,
       offset=0, out_dtype=None):
    """(attentionOut, softmaxMax, softmaxSum) of one version's call (TND: the VarLen form of V1/V2/V4)."""
    d = q.shape[-1] // n1 if layout in ("BSH", "SBH") else q.shape[-1]
    dv = v.shape[-1] // n_of(k, layout, d) if layout in ("BSH", "SBH") else v.shape[-1]
    if layout == "TND":
        rows = (q.shape[0], n1, 8)
        oshape = (q.shape[0], n1, dv)
    else:
        b = q.shape[1] if layout == "SBH" else q.shape[0]
        s1 = q.shape[{"BSH": 1, "SBH": 0, "BSND": 1, "BNSD": 2}[layout]]
        rows = (b, n1, s1, 8)
        oshape = q.shape[:-1] + ((n1 * dv,) if layout in ("BSH", "SBH") else (dv,))
    smax, ssum = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    out, sout = np.zeros(oshape, out_dtype or q.dtype), np.zeros((0,), q.dtype)
    head = (q, k, v, pse, drop, None, mask)
    tail = (smax, ssum, sout, out)
    attrs = (scale, keep, pre, nxt, n1, layout, inner, sparse)
    if version == "V4":
        r = ops.FlashAttentionScoreV4(*head, None, None, None, None, None, None, prefix, aq, akv, qstart, kvstart, *attrs,
                                      0, pse_type, smlayout, seed, offset, *tail)
    elif version == "V1" and layout == "TND":
        r = ops.FlashAttentionVarLenScore(*head, prefix, aq, akv, *attrs, *tail)
    elif version == "V1":
        r = ops.FlashAttentionScore(*head, prefix, *attrs, *tail)
    elif version == "V2" and layout == "TND":
        r = ops.FlashAttentionVarLenScoreV2(*head, prefix, aq, akv, qstart, kvstart, *attrs, pse_type, *tail)
    elif version == "V2":
        r = ops.FlashAttentionScoreV2(*head, prefix, qstart, kvstart, *attrs, pse_type, *tail)
    else:                                                            # VarLenV4
        r = ops.FlashAttentionVarLenScoreV4(*head, prefix, aq, akv, *attrs, smlayout, *tail)
    r = [np.asarray(x) for x in r]
    return r[3], r[0], r[1]


def fag(q, k, v, dy, out, smax, ssum, layout, n1, scale, *, version="V4", pse=None, drop=None, mask=None, prefix=None,
        aq=None, akv=None, qstart=None, kvstart=None, keep=1.0, pre=BIG, nxt=BIG, inner=0, sparse=0, pse_type=1,
        smlayout="", seed=0, offset=0, want_dpse=True):
    """(dq, dk, dv, dpse) of one version's call (TND: the UnpaddingScoreGrad form of V1/V2)."""
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    dpse = np.zeros_like(pse) if pse is not None and want_dpse and pse_type < 2 else None
    head = (q, k, v, dy, pse, drop, None, mask, smax, ssum, None, out)
    attrs = (scale, keep, pre, nxt, n1, layout)
    if version == "V4":
        r = ops.FlashAttentionScoreGradV4(*head, None, None, None, None, None, None, None, None, prefix, aq, akv, qstart,
                                          kvstart, *attrs, smlayout, inner, sparse, pse_type, seed, offset, 0, dq, dk, dv,
                                          None, None, dpse, None)
        r = [r[0], r[1], r[2], r[5]]
    elif version == "V1" and layout == "TND":
        r = ops.FlashAttentionUnpaddingScoreGrad(*head, prefix, aq, akv, *attrs, inner, sparse, dq, dk, dv, dpse)
    elif version == "V1":
        r = ops.FlashAttentionScoreGrad(*head, prefix, *attrs, inner, sparse, dq, dk, dv, dpse)
    elif version == "V2" and layout == "TND":
        r = ops.FlashAttentionUnpaddingScoreGradV2(*head, prefix, aq, akv, qstart, kvstart, *attrs, inner, sparse,
                                                   pse_type, dq, dk, dv, dpse)
    else:
        r = ops.FlashAttentionScoreGradV2(*head, prefix, qstart, kvstart, *attrs, inner, sparse, pse_type, dq, dk, dv, dpse)
    return [None if x is None else np.asarray(x) for x in r]


def close(got, want, tol, what=""):
    got = np.asarray(got).astype(np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    scale = max(np.abs(want).max(initial=0.0), 1e-30)
    err = np.abs(got - want).max(initial=0.0)
    assert err <= tol * scale, f"{what}: {err / scale:.3g} > {tol}"


def stats_close(smax, ssum, m, l, what=""):
    """softmaxMax / softmaxSum rows ([B, N1, S1, 8]) against the reference's (8 equal copies)."""
    smax, ssum = np.asarray(smax), np.asarray(ssum)
    assert (smax == smax[..., :1]).all() and (ssum == ssum[..., :1]).all()
    close(smax[..., 0], m, 2e-6, what + " max")
    close(ssum[..., 0], l, 2e-6, what + " sum")


# ---- the forward against float64 --------------------------------------------------------------------------

# (layout, dtype, B, N1, N2, S1, S2, D, Dv, causal)
FWD = [("BNSD", F32, 2, 4, 4, 33, 47, 16, 16, False), ("BNSD", F16, 1, 4, 2, 130, 200, 64, 64, True),
       ("BSND", BF16, 2, 6, 3, 17, 150, 32, 32, False), ("BSND", F32, 1, 8, 1, 64, 64, 8, 8, True),
       ("BSH", F16, 2, 2, 2, 40, 40, 24, 24, True), ("BSH", F32, 1, 4, 2, 9, 300, 16, 8, False),
       ("SBH", BF16, 2, 4, 1, 21, 34, 16, 16, True), ("SBH", F32, 1, 3, 3, 5, 129, 80, 80, False)]


@pytest.mark.parametrize("layout,name,b,n1,n2,s1,s2,d,dv,causal", FWD)
def test_forward_matches_the_float64_definition(layout, name, b, n1, n2, s1, s2, d, dv, causal):
    q, k, v = rand((b, n1, s1, d), name), rand((b, n2, s2, d), name), rand((b, n2, s2, dv), name)
    scale = d ** -0.5
    kw = dict(mask=CAUSAL, sparse=2) if causal else {}
    out, smax, ssum = fa(lay(q, layout), lay(k, layout), lay(v, layout), layout, n1, scale, **kw)
    ro, m, l, _ = A.forward(*(x.astype(np.float64) for x in (q, k, v)), scale,
                            A.sparse_mask(2, s1, s2) if causal else None)
    close(A.to_bnsd(out, layout, n1), ro, TOL[name], "out")
    stats_close(smax, ssum, m, l)
    for version in ("V1", "V2"):                                   # every version runs the same kernel
        o2, mx2, sm2 = fa(lay(q, layout), lay(k, layout), lay(v, layout), layout, n1, scale, version=version, **kw)
        assert o2.tobytes() == out.tobytes() and mx2.tobytes() == smax.tobytes() and sm2.tobytes() == ssum.tobytes()


@pytest.mark.parametrize("name", [F32, F16, BF16])
def test_forward_tnd_with_actual_sequence_lengths(name):
    """TND: three batches of different lengths (one empty query batch; trailing zeros leave a batch out), GQA 2,
    every TND version, softmax max/sum per batch [N1, S1_b] or (same_as_input) [T, N1]."""
    lens_q, lens_kv, n1, n2, d = [5, 0, 37, 12], [9, 4, 37, 20], 4, 2, 16
    cq, ckv = np.cumsum(lens_q), np.cumsum(lens_kv)
    aq, akv = [int(x) for x in cq[:3]] + [0], [int(x) for x in ckv[:3]] + [0]     # the last batch left out
    tq, tkv = int(cq[-1]), int(ckv[-1])
    q, k, v = rand((tq, n1, d), name), rand((tkv, n2, d), name), rand((tkv, n2, d), name)
    out, smax, ssum = fa(q, k, v, "TND", n1, 0.25, aq=aq, akv=akv, version="V1")
    for version, sl in (("V4", ""), ("V2", ""), ("VarLenV4", "")):
        o2 = fa(q, k, v, "TND", n1, 0.25, aq=aq, akv=akv, version=version, smlayout=sl)
        assert o2[0].tobytes() == out.tobytes() and o2[1].tobytes() == smax.tobytes()
    _, smax_t, _ = fa(q, k, v, "TND", n1, 0.25, aq=aq, akv=akv, smlayout="same_as_input")
    start_q = start_kv = 0
    for b in range(3):
        sq, skv = slice(start_q, start_q + lens_q[b]), slice(start_kv, start_kv + lens_kv[b])
        if lens_q[b]:
            qb, kb, vb = (x[None].transpose(0, 2, 1, 3).astype(np.float64) for x in (q[sq], k[skv], v[skv]))
            ro, m, l, _ = A.forward(qb, kb, vb, 0.25)
            close(out[sq].transpose(1, 0, 2)[None], ro, TOL[name], f"batch {b}")
            rows = smax.reshape(-1, 8)[n1 * start_q:n1 * (start_q + lens_q[b]), 0]   # [N1, S1_b] per batch
            close(rows.reshape(n1, lens_q[b]), m[0], 2e-6, "max")
            close(smax_t[sq, :, 0].T, m[0], 2e-6, "max [T, N1]")
        start_q, start_kv = start_q + lens_q[b], start_kv + lens_kv[b]
    assert not out[start_q:].any()                                  # the left-out batch: rows never written


def full_mask(mode, b, n1, s1, s2, pre=BIG, nxt=BIG, prefix=None):
    m = np.zeros((b, n1, s1, s2), bool)
    for bb in range(b):
        m[bb] = A.sparse_mask(mode, s1, s2, pre, nxt, 0 if prefix is None else prefix[bb])
    return m


# (sparse mode, S1, S2, pre, next, how the atten mask is passed)
SPARSE = [(0, 24, 40, BIG, BIG, "S1S2"), (0, 24, 40, 5, 3, "B1S1S2"), (0, 24, 40, BIG, BIG, "BNS1S2"),
          (0, 24, 40, BIG, BIG, "11S1S2"), (1, 24, 40, 0, 0, "BNS1S2"), (2, 30, 30, 0, 0, "compressed"),
          (3, 20, 50, 0, 0, "compressed"), (3, 50, 20, 0, 0, "compressed"), (4, 40, 40, 6, 2, "compressed"),
          (4, 30, 45, 10, -4, "compressed"), (5, 24, 40, 0, 0, "B1S1S2"), (6, 20, 36, 0, 0, "prefix")]


@pytest.mark.parametrize("mode,s1,s2,pre,nxt,how", SPARSE)
def test_forward_sparse_modes_and_masks(mode, s1, s2, pre, nxt, how):
    b, n1, n2, d = 2, 4, 2, 16
    q, k, v = rand((b, n1, s1, d), F32), rand((b, n2, s2, d), F32), rand((b, n2, s2, d), F32)
    prefix = None
    if how == "compressed":
        mask, ref = CAUSAL, full_mask(mode, b, n1, s1, s2, pre, nxt)
    elif how == "prefix":
        prefix = [7, 30]
        mask, ref = np.concatenate([CAUSAL, np.zeros((1024, 2048), bool)]), full_mask(6, b, n1, s1, s2, prefix=prefix)
        mask[2048:, 1024:] = True
    else:
        base = RNG.random((b, n1, s1, s2)) < 0.3
        base[..., 0] = False                                       # no row all masked
        m = {"S1S2": base[0, 0], "11S1S2": base[:1, :1], "B1S1S2": base[:, :1], "BNS1S2": base}[how]
        ref = np.broadcast_to(m, (b, n1, s1, s2))
        mask = m.astype(np.uint8)
        if mode == 0:                                              # the band from the upper-left corner
            i, j = np.arange(s1)[:, None], np.arange(s2)[None, :]
            ref = ref | (j - i > nxt) | (i - j > pre)
    out, smax, ssum = fa(q, k, v, "BNSD", n1, 0.3, mask=mask, sparse=mode, pre=pre, nxt=nxt, prefix=prefix)
    ro, m, l, _ = A.forward(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), 0.3, ref)
    valid = ~ref.all(axis=-1)                                      # rows with a position left
    close(out[valid], ro[valid], TOL[F32], "out")
    close(smax[..., 0][valid], m[valid], 2e-6)
    if (~valid).any():                                             # rightDownCausal with S1 > S2: invalid rows -> 0
        assert mode == 3 and not out[~valid].any() and (ssum[..., 0][~valid] == np.finfo(np.float32).max).all()


def test_forward_sparse_modes_7_and_8_band_batches():
    """TND outer-split modes: 7 = rightDownCausal with the last batch a band, 8 = leftUpCausal with the first."""
    lens_q, lens_kv, n1, d = [6, 10, 4], [6, 12, 9], 2, 16
    aq, akv = [int(x) for x in np.cumsum(lens_q)], [int(x) for x in np.cumsum(lens_kv)]
    q, k, v = (rand((sum(n), n1, d), F32) for n in (lens_q, lens_kv, lens_kv))
    for mode, pre, nxt in ((7, 9, -2), (8, 6, 1)):
        out, _, _ = fa(q, k, v, "TND", n1, 0.25, aq=aq, akv=akv, mask=CAUSAL, sparse=mode, pre=pre, nxt=nxt)
        sq = skv = 0
        for b in range(3):
            band = b == (2 if mode == 7 else 0)
            mref = A.sparse_mask(mode, lens_q[b], lens_kv[b], pre, nxt, band=band)
            qb, kb, vb = (x[None].transpose(0, 2, 1, 3).astype(np.float64) for x in
                          (q[sq:sq + lens_q[b]], k[skv:skv + lens_kv[b]], v[skv:skv + lens_kv[b]]))
            ro = A.forward(qb, kb, vb, 0.25, mref)[0]
            got = out[sq:sq + lens_q[b]].transpose(1, 0, 2)[None]
            valid = ~mref.all(axis=-1)
            close(got[:, :, valid], ro[:, :, valid], TOL[F32], f"mode {mode} batch {b}")
            sq, skv = sq + lens_q[b], skv + lens_kv[b]


@pytest.mark.parametrize("pse_type,shape", [(1, "BNSS"), (0, "BNSS"), (1, "1NSS"), (0, "BN1S"), (2, "N"), (3, "BN")])
def test_forward_pse(pse_type, shape):
    b, n1, n2, s, d = 2, 4, 2, 24, 16
    q, k, v = rand((b, n1, s, d), BF16), rand((b, n2, s, d), BF16), rand((b, n2, s, d), BF16)
    if pse_type < 2:
        dims = {"BNSS": (b, n1, s, s), "1NSS": (1, n1, s, s), "BN1S": (b, n1, 1, s)}[shape]
        pse = rand(dims, BF16)
        ref_pse = pse.astype(np.float64)
        version = "V2"
    else:
        pse = -RNG.uniform(0.05, 0.5, (n1,) if shape == "N" else (b, n1)).astype(np.float32)   # alibi slopes
        pos = np.abs(np.arange(s)[None, :] + 3 - (np.arange(s)[:, None] + 1)).astype(np.float64)
        pos = np.sqrt(pos) if pse_type == 3 else pos
        sl = pse.astype(np.float64).reshape((1, n1) if shape == "N" else (b, n1))
        ref_pse = sl[:, :, None, None] * pos
        version = "V4"
    out, _, _ = fa(q, k, v, "BNSD", n1, 0.25, pse=pse, pse_type=pse_type, version=version, qstart=[1], kvstart=[3])
    ro = A.forward(*(x.astype(np.float64) for x in (q, k, v)), 0.25, pse=ref_pse, pse_type=pse_type)[0]
    close(out, ro, TOL[BF16])


def test_forward_fully_masked_rows():
    """A row with every position masked: innerPrecise 2 writes 0 (softmaxSum FLT_MAX); otherwise every score is
    -FLT_MAX and the row averages V (the vendor's arithmetic, no NaN)."""
    b, n, s, d = 1, 2, 8, 16
    q, k, v = rand((b, n, s, d), F32), rand((b, n, s, d), F32), rand((b, n, s, d), F32)
    mask = np.zeros((s, s), np.uint8)
    mask[3] = 1
    out2, _, sum2 = fa(q, k, v, "BNSD", n, 0.25, mask=mask, inner=2)
    out0, _, _ = fa(q, k, v, "BNSD", n, 0.25, mask=mask, inner=0)
    assert not out2[:, :, 3].any() and (sum2[:, :, 3] == np.finfo(np.float32).max).all()
    close(out0[:, :, 3], v.astype(np.float64).mean(axis=2), 1e-6)
    assert out0[:, :, 2].tobytes() == out2[:, :, 2].tobytes()


def test_forward_strided_inputs_and_empty_outputs():
    q, k, v = rand((2, 4, 12, 16), F32), rand((2, 4, 20, 16), F32), rand((2, 4, 20, 16), F32)
    want = fa(q, k, v, "BNSD", 4, 0.25)
    got = fa(strided(q), strided(k, transpose=True), strided(v), "BNSD", 4, 0.25)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got))
    e = np.zeros((0, 4, 12, 16), np.float32)                       # B = 0: every output empty, nothing to launch
    assert [x.size for x in fa(e, e, e, "BNSD", 4, 0.25)] == [0, 0, 0]


# ---- dropout ----------------------------------------------------------------------------------------------

def identity_case(s1=256, s2=64, n=4, name=F32):
    """Q = K = 0 (a uniform softmax) and V = I: out[i, j] = kept(i, j) / (keepProb * S2)."""
    q, k = np.zeros((1, n, s1, s2), R.np_dtype(name)), np.zeros((1, n, s2, s2), R.np_dtype(name))
    v = np.broadcast_to(np.eye(s2, dtype=R.np_dtype(name)), (1, n, s2, s2)).copy()
    return q, k, v


def test_dropout_statistics_and_determinism_per_seed():
    q, k, v = identity_case()
    out, _, ssum = fa(q, k, v, "BNSD", 4, 1.0, keep=0.8, seed=2024, offset=64)
    kept = out != 0
    assert abs(kept.mean() - 0.8) < 0.01                           # 65536 positions
    assert np.allclose(out[kept], np.float32(1 / np.float32(0.8)) / 64, rtol=1e-6)
    assert (ssum[..., 0] == 64).all()                              # the softmax sum is taken before dropout
    again = fa(q, k, v, "BNSD", 4, 1.0, keep=0.8, seed=2024, offset=64)[0]
    assert again.tobytes() == out.tobytes()
    for seed, offset in ((2025, 64), (2024, 128)):
        other = fa(q, k, v, "BNSD", 4, 1.0, keep=0.8, seed=seed, offset=offset)[0] != 0
        assert 0.2 < (other != kept).mean() < 0.45                 # another stream: independent bits
    # per head and per row: the bits of a row are not those of another
    assert (kept[0, 0] != kept[0, 1]).any() and (kept[0, 0, 0] != kept[0, 0, 1]).any()


def test_dropout_mask_tensor_and_philox_give_the_same_bits():
    """Atlas A2/A3: torch_npu makes the mask with aclnnDropoutGenMaskV2(seed, offset) and passes it (V1); Ascend 950:
    V4 makes the same bits from seed and offset itself."""
    q, k, v = rand((2, 2, 20, 16), F16), rand((2, 2, 30, 16), F16), rand((2, 2, 30, 16), F16)
    n = q.shape[0] * q.shape[1] * 20 * 30
    mask = np.asarray(ops.DropoutGenMaskV2([n], 1 - 0.7, 7, 12, 1, np.zeros(((n + 127) // 128 * 16,), np.uint8)))
    v4 = fa(q, k, v, "BNSD", 2, 0.25, keep=0.7, seed=7, offset=12)
    v1 = fa(q, k, v, "BNSD", 2, 0.25, keep=0.7, drop=mask, version="V1")
    assert all(a.tobytes() == b.tobytes() for a, b in zip(v4, v1))
    keep = unpack_bits(mask, n).reshape(2, 2, 20, 30)
    ro = A.forward(*(x.astype(np.float64) for x in (q, k, v)), 0.25, keep=keep, keep_prob=0.7)[0]
    close(v1[0], ro, TOL[F16])


# ---- the gradient against float64 ------------------------------------------------------------------------

GRAD = [("BNSD", F32, 2, 4, 2, 20, 33, 16, 16, False), ("BSND", F16, 1, 4, 4, 40, 40, 32, 32, True),
        ("BSH", BF16, 2, 6, 2, 17, 130, 16, 16, False), ("SBH", F32, 1, 4, 1, 150, 64, 8, 8, True),
        ("BNSD", F32, 1, 2, 2, 16, 24, 32, 16, False)]


@pytest.mark.parametrize("layout,name,b,n1,n2,s1,s2,d,dv,causal", GRAD)
def test_gradient_matches_the_float64_definition(layout, name, b, n1, n2, s1, s2, d, dv, causal):
    q, k, v = rand((b, n1, s1, d), name), rand((b, n2, s2, d), name), rand((b, n2, s2, dv), name)
    dy = rand((b, n1, s1, dv), name)
    kw = dict(mask=CAUSAL, sparse=2) if causal else {}
    L = [lay(x, layout) for x in (q, k, v, dy)]
    out, smax, ssum = fa(*L[:3], layout, n1, 0.2, **kw)
    res = fag(*L, out, smax, ssum, layout, n1, 0.2, **kw)
    want = A.backward(*(x.astype(np.float64) for x in (q, k, v, dy)), 0.2, A.sparse_mask(2, s1, s2) if causal else None)
    for got, ref, n, what in zip(res[:3], want[:3], (n1, n2, n2), ("dq", "dk", "dv")):
        close(A.to_bnsd(got, layout, n), ref, GTOL[name], what)
    for version in ("V1", "V2"):
        r2 = fag(*L, out, smax, ssum, layout, n1, 0.2, version=version, **kw)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(r2[:3], res[:3]))


@pytest.mark.parametrize("pse_type,shape", [(1, (2, 4, 24, 24)), (0, (1, 4, 24, 24)), (1, (2, 4, 1, 24))])
def test_gradient_with_pse_and_mask_and_dropout(pse_type, shape):
    b, n1, n2, s, d = 2, 4, 2, 24, 16
    q, k, v, dy = rand((b, n1, s, d), F32), rand((b, n2, s, d), F32), rand((b, n2, s, d), F32), rand((b, n1, s, d), F32)
    pse = rand(shape, F32)
    mask = RNG.random((b, 1, s, s)) < 0.2
    mask[..., 0] = False
    keep = RNG.random((b, n1, s, s)) < 0.75
    drop = pack_bits(keep)
    kw = dict(pse=pse, pse_type=pse_type, mask=mask.astype(np.uint8), drop=drop, keep=0.75, version="V2")
    out, smax, ssum = fa(q, k, v, "BNSD", n1, 0.25, **kw)
    dq, dk, dv, dpse = fag(q, k, v, dy, out, smax, ssum, "BNSD", n1, 0.25, **kw)
    args = [x.astype(np.float64) for x in (q, k, v)]
    ro = A.forward(*args, 0.25, mask, pse.astype(np.float64), pse_type, keep, 0.75)[0]
    close(out, ro, TOL[F32], "out")
    want = A.backward(*args, dy.astype(np.float64), 0.25, mask, pse.astype(np.float64), pse_type, keep, 0.75)
    for got, ref, what in zip((dq, dk, dv), want[:3], ("dq", "dk", "dv")):
        close(got, ref, GTOL[F32], what)
    wp = want[3]
    wp = wp.sum(axis=tuple(ax for ax in range(4) if shape[ax] == 1 and wp.shape[ax] != 1), keepdims=True)
    close(dpse, wp, GTOL[F32], "dpse")


def test_gradient_tnd_and_philox_dropout():
    lens_q, lens_kv, n1, n2, d = [7, 12], [9, 12], 4, 2, 16
    aq, akv = [int(x) for x in np.cumsum(lens_q)], [int(x) for x in np.cumsum(lens_kv)]
    q, k, v = rand((19, n1, d), BF16), rand((21, n2, d), BF16), rand((21, n2, d), BF16)
    dy = rand((19, n1, d), BF16)
    kw = dict(aq=aq, akv=akv, mask=CAUSAL, sparse=3, keep=0.9, seed=3, offset=30)
    out, smax, ssum = fa(q, k, v, "TND", n1, 0.25, **kw)
    dq, dk, dv, _ = fag(q, k, v, dy, out, smax, ssum, "TND", n1, 0.25, **kw)
    n = n1 * sum(a * b for a, b in zip(lens_q, lens_kv))
    bits = unpack_bits(np.asarray(ops.DropoutGenMaskV2([n], 1 - 0.9, 3, 30, 27, np.zeros(((n + 127) // 128 * 16,),
                                                                                           np.uint8))), n)
    sq = skv = base = 0
    for bb in range(2):
        ls, lk = lens_q[bb], lens_kv[bb]
        keep = bits[base:base + n1 * ls * lk].reshape(1, n1, ls, lk)
        base += n1 * ls * lk
        T = lambda x, sl: x[sl][None].transpose(0, 2, 1, 3).astype(np.float64)
        args = [T(q, slice(sq, sq + ls)), T(k, slice(skv, skv + lk)), T(v, slice(skv, skv + lk)), T(dy, slice(sq, sq + ls))]
        want = A.backward(*args, 0.25, A.sparse_mask(3, ls, lk), keep=keep, keep_prob=0.9)
        close(T(dq, slice(sq, sq + ls)), want[0], GTOL[BF16], "dq")
        close(T(dk, slice(skv, skv + lk)), want[1], GTOL[BF16], "dk")
        close(T(dv, slice(skv, skv + lk)), want[2], GTOL[BF16], "dv")
        sq, skv = sq + ls, skv + lk
    for version in ("V1", "V2"):                                   # UnpaddingScoreGrad with the mask tensor
        mask_t = pack_bits(bits)
        r = fag(q, k, v, dy, out, smax, ssum, "TND", n1, 0.25, version=version, drop=mask_t,
                **{a: b for a, b in kw.items() if a not in ("seed", "offset")})
        assert all(a.tobytes() == b.tobytes() for a, b in zip(r[:3], (dq, dk, dv)))


# ---- against torch CPU's scaled_dot_product_attention ----------------------------------------------------

def torch_sdpa(q, k, v, name, **kw):
    import torch
    t = [torch.from_numpy(x.astype(np.float32)).to(getattr(torch, name)) for x in (q, k, v)]
    o = torch.nn.functional.scaled_dot_product_attention(*t, **kw)
    return o.float().numpy().astype(np.float64)


@pytest.mark.parametrize("name,causal,masked,gqa,layout", [(F32, False, False, False, "BSH"),
                                                           (F32, True, False, True, "SBH"),
                                                           (F32, False, True, False, "BSND"),
                                                           (F16, True, False, False, "BNSD"),
                                                           (BF16, False, True, True, "BSH")])
def test_forward_matches_torch_cpu_sdpa(name, causal, masked, gqa, layout):
    torch = pytest.importorskip("torch")
    b, n1, s1, s2, d = 2, 4, 37, 37 if causal else 53, 32
    n2 = 2 if gqa else n1
    q, k, v = rand((b, n1, s1, d), name), rand((b, n2, s2, d), name), rand((b, n2, s2, d), name)
    allowed = RNG.random((b, 1, s1, s2)) > 0.3 if masked else None
    if masked:
        allowed[..., 0] = True
    kw = dict(mask=CAUSAL, sparse=2) if causal else dict(mask=(~allowed).astype(np.uint8)) if masked else {}
    out, _, _ = fa(lay(q, layout), lay(k, layout), lay(v, layout), layout, n1, d ** -0.5, **kw)
    want = torch_sdpa(q, k, v, name, is_causal=causal, enable_gqa=gqa,
                      attn_mask=None if allowed is None else torch.from_numpy(allowed))
    close(A.to_bnsd(out, layout, n1), want, {F32: 1e-5, F16: 2e-3, BF16: 1.6e-2}[name], "vs torch")


# ---- validation --------------------------------------------------------------------------------------------

def status(fn, *args):
    """(code, message) of a call (0, "" when it succeeds)."""
    try:
        fn(*args)
    except pyaclnn.errors.AclError as exc:
        return exc.code, str(exc)
    return 0, ""


def v1_call(q, k, v, *, out=None, smax=None, ssum=None, layout="BNSD", n1=4, head=4, pse=None, mask=None, sparse=0,
            keep=1.0, drop=None):
    smax = np.zeros((1, n1, q.shape[2], 8), np.float32) if smax is None else smax
    ssum = np.zeros_like(smax) if ssum is None else ssum
    out = np.zeros(q.shape[:-1] + v.shape[-1:], q.dtype) if out is None else out
    return lambda: ops.FlashAttentionScore(q, k, v, pse, drop, None, mask, None, 0.25, keep, BIG, BIG, head, layout, 0,
                                           sparse, smax, ssum, np.zeros(0, np.float32), out)


def test_forward_validation_codes_and_messages():
    q, k, v = rand((1, 4, 8, 16), F32), rand((1, 4, 8, 16), F32), rand((1, 4, 8, 16), F32)
    ok = v1_call(q, k, v)
    assert status(ok)[0] == 0
    sm = np.zeros((1, 4, 8, 8), np.float32)
    cases = [
        (ops.FlashAttentionScore, (None, k, v, None, None, None, None, None, 0.25, 1.0, BIG, BIG, 4, "BNSD", 0, 0, sm, sm,
                                   None, q), NULLPTR, "The query cannot be nullptr"),
        (ops.FlashAttentionScore, (q, k, v, None, None, None, None, None, 0.25, 1.0, BIG, BIG, 4, None, 0, 0, sm, sm,
                                   None, q), NULLPTR, "The inputLayout cannot be nullptr"),
        (ops.FlashAttentionScore, (q, k, v, None, None, None, None, None, 0.25, 1.0, BIG, BIG, 4, "BNSD", 0, 0, None, sm,
                                   None, q), NULLPTR, "The softmaxMaxOut cannot be nullptr"),
    ]
    for fn, args, code, text in cases:
        c, msg = status(fn, *args)
        assert c == code and text in msg, (c, msg)
    checks = [
        (v1_call(q, k.astype(np.float16), v), "The data type of query[FLOAT], key[FLOAT16], value[FLOAT] are not equal."),
        (v1_call(q, k, v, head=0), "head_num must > 0, but got 0"),
        (v1_call(q, k, v, layout="BSH"), "not support input_layout BSH with dim_num 4"),
        (v1_call(q, rand((1, 4, 8, 8), F32), v), "qD and kD should be same, but got qD=16 kD=8"),
        (v1_call(rand((1, 4, 8, 8), F32), rand((1, 4, 8, 8), F32), v), "only support kD >= vD, but got kD=8 vD=16"),
        (v1_call(rand((1, 1, 2, 800), F32), rand((1, 1, 2, 800), F32), rand((1, 1, 2, 800), F32), n1=1, head=1),
         "Head dim must <= 768, but got 800"),
        (v1_call(q, k, v, pse=rand((1, 4, 8, 8), F16)), "The data type FLOAT16 of pse is not equal to the data type "
                                                          "FLOAT of attentionOut."),
        (v1_call(q, rand((1, 3, 8, 16), F32), rand((1, 3, 8, 16), F32)), "must be a positive multiple"),
        (v1_call(q, k, v, mask=np.zeros((8, 9), np.uint8)), "attenMaskOptional shape [8, 9] is not [S1, S2]"),
        (v1_call(q, k, v, mask=np.zeros((8, 8), np.float32)), "The data type of attenMaskOptional is FLOAT"),
        (v1_call(q, k, v, mask=np.zeros((8, 8), bool), sparse=2), "must be the compressed [2048, 2048] mask"),
        (v1_call(q, k, v, sparse=3), "attenMaskOptional is required when sparseMode is 3"),
        (v1_call(q, k, v, sparse=7, mask=CAUSAL), "sparseMode 7 is not supported"),
        (v1_call(q, k, v, keep=0.0), "keepProb must be in (0, 1]"),
        (v1_call(q, k, v, keep=0.5), "dropMaskOptional is required when keepProb"),
        (v1_call(q, k, v, keep=0.5, drop=np.zeros(4, np.uint8)), "dropMaskOptional holds 4 bytes"),
        (v1_call(q, k, v, out=np.zeros((1, 4, 8, 16), np.float16)), "attentionOutOut dtype should be FLOAT"),
        (v1_call(q, k, v, smax=np.zeros((1, 4, 8, 4), np.float32)), "softmaxMaxOut must hold 256 values"),
        (v1_call(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64)),
         "The data type of query/key/value is [DOUBLE], should be fp16, bf16 or fp32."),
    ]
    for fn, text in checks:
        c, msg = status(fn)
        assert c == INVALID and text in msg, (text, c, msg)
    q3 = rand((5, 4, 16), F32)
    c, msg = status(ops.FlashAttentionVarLenScore, q3, q3, q3, None, None, None, None, None, [5], [5], 0.25, 1.0, BIG, BIG,
                    4, "BSH", 0, 0, np.zeros((5, 4, 8), np.float32), np.zeros((5, 4, 8), np.float32), None, q3)
    assert c == INVALID and "Layout BSH is not TND, invalid shape, please check" in msg
    c, msg = status(ops.FlashAttentionScoreV4, q, k, v, None, None, None, None, rand((1, 4, 8, 8), F32), None, None, None,
                    None, None, None, None, None, None, None, 0.25, 1.0, BIG, BIG, 4, "BNSD", 0, 0, 0, 1, "", 0, 0, sm, sm,
                    None, q)
    assert c == INVALID and "queryRopeOptional is not supported by the emulator" in msg
    c, msg = status(ops.FlashAttentionScoreV2, q, k, v, None, None, None, None, None, None, None, 0.25, 1.0, BIG, BIG, 4,
                    "BNSD", 0, 0, 2, sm, sm, None, q)
    assert c == INVALID and "When pseType is 2 or 3, pseShape cannot be null." in msg
    e = np.zeros((1, 4, 0, 16), np.float32)                       # every output empty: success before any check
    assert status(ops.FlashAttentionScore, e, k.astype(np.float16), v, None, None, None, None, None, 0.25, 1.0, BIG, BIG,
                  0, "XYZ", 0, 0, np.zeros((1, 4, 0, 8), np.float32), np.zeros((1, 4, 0, 8), np.float32), None, e)[0] == 0


def grad_v1(q, k, v, dy, attn, *, dq=None, layout="BNSD", head=4, smax=None):
    smax = np.zeros((1, q.shape[1], q.shape[2], 8), np.float32) if smax is None else smax
    dq = np.zeros_like(q) if dq is None else dq
    return lambda: ops.FlashAttentionScoreGrad(q, k, v, dy, None, None, None, None, smax, smax, None, attn, None, 0.25, 1.0,
                                               BIG, BIG, head, layout, 0, 0, dq, np.zeros_like(k), np.zeros_like(v), None)


def test_gradient_validation_codes_and_messages():
    q = rand((1, 4, 8, 16), F32)
    ok = grad_v1(q, q, q, q, q)
    assert status(ok)[0] == 0
    sm = np.zeros((1, 4, 8, 8), np.float32)
    c, msg = status(ops.FlashAttentionScoreGrad, q, q, q, q, None, None, None, None, sm, sm, None, None, None, 0.25, 1.0,
                    BIG, BIG, 4, "BNSD", 0, 0, q, q, q, None)
    assert c == NULLPTR and "Parameter attentionInOptional of FlashAttentionScoreGrad is required, but it is empty." in msg
    bad = [
        (grad_v1(q, q, q, q, q, head=-1), "Parameter headNum of FlashAttentionScoreGrad has incorrect value -1. Reason: "
                                          "The value of headNum must be greater than 0."),
        (grad_v1(q, q, q, q.astype(np.float16), q), "Parameters query, keyIn, value, dy of FlashAttentionScoreGrad have "
                                                    "incorrect dtypes {FLOAT, FLOAT, FLOAT, FLOAT16}."),
        (grad_v1(q, q, q, q, q, layout="BSH"), "The shape dimensions must all be 3 when inputLayout is BSH"),
        (grad_v1(q, q, q, q, q, layout="ABC"), "Parameter inputLayout of FlashAttentionScoreGrad has incorrect format ABC"),
        (grad_v1(q, q, rand((1, 4, 9, 16), F32), q, q), "The shapes of keyIn and value must be the same except for the "
                                                        "last dimension"),
        (grad_v1(q, q, q, q, rand((1, 4, 8, 8), F32)), "Expected tensor for attentionIn to have same size as "
                                                       "[1, 4, 8, 16], but got [1, 4, 8, 8]."),
        (grad_v1(q, rand((1, 4, 8, 8), F32), rand((1, 4, 8, 8), F32), q, q), "D axis of query must be equal to d axis"),
        (grad_v1(q, q, q, q, q, dq=np.zeros((1, 4, 8, 16), np.float16)), "dqOut dtype should be FLOAT"),
        (grad_v1(q, q, q, q, q, smax=np.zeros((1, 4, 8, 1), np.float32)), "softmaxMaxOptional must hold 256 values"),
    ]
    for fn, text in bad:
        c, msg = status(fn)
        assert c == INVALID and text in msg, (text, c, msg)
    t = rand((6, 4, 16), F32)
    c, msg = status(ops.FlashAttentionUnpaddingScoreGrad, t, t, t, t, None, None, None, None, sm, sm, None, t, None, [6],
                    [6], 0.25, 1.0, BIG, BIG, 4, "BSH", 0, 0, t, t, t, None)
    assert c == INVALID and "Parameter inputLayout of FlashAttentionScoreGrad has incorrect format BSH. It should be TND." in msg
    d4 = np.zeros((1, 4, 8, 8), np.float32)                        # V4: the outputs' shapes first
    c, msg = status(ops.FlashAttentionScoreGradV4, q, q, q, q, None, None, None, None, sm, sm, None, q, None, None, None,
                    None, None, None, None, None, None, None, None, None, None, 0.25, 1.0, BIG, BIG, 4, "BNSD", "", 0, 0, 1,
                    0, 0, 0, d4, q, q, None, None, None, None)
    assert c == INVALID and "Expected tensor for dqOut to have same size as [1, 4, 8, 16], but got [1, 4, 8, 8]." in msg
    c, msg = status(ops.FlashAttentionScoreGradV4, q, q, q, q, None, None, None, None, sm, sm, None, q, None, None, None,
                    None, None, None, None, None, None, None, None, None, None, 0.25, 1.0, BIG, BIG, 4, "BNSD", "xyz", 0, 0,
                    1, 0, 0, 0, q, q, q, None, None, None, None)
    assert c == INVALID and "When inputLayout is not TND, the value of softmaxInLayout must be empty string" in msg


A2_BODY = """
import numpy as np, pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
q = np.ones((1, 2, 4, 16), np.float64)
sm = np.zeros((1, 2, 4, 8), np.float32)
res = {}
try:
    ops.FlashAttentionScore(q, q, q, None, None, None, None, None, 0.25, 1.0, 2**31 - 1, 2**31 - 1, 2, "BNSD", 0, 0, sm, sm,
                            None, q)
except AclError as e:
    res["double"] = [e.code, str(e)]
x = np.random.default_rng(1).standard_normal((1, 2, 4, 16)).astype(np.float32)
out = ops.FlashAttentionScore(x, x, x, None, None, None, None, None, 0.25, 1.0, 2**31 - 1, 2**31 - 1, 2, "BNSD", 0, 0,
                              sm, sm, None, np.zeros_like(x))
res["out"] = np.asarray(out[3]).tobytes().hex()
print("RESULT", res)
"""


def test_atlas_a2_lists_and_the_same_results():
    """Atlas A2/A3: InputDtypeCheck's list is the op_api's (its message), and the V1 path computes what the 950's does."""
    rc, out, err = helpers.run_python(A2_BODY, {"PYACLNN_STUB_SOC": "Ascend910B4"})
    assert rc == 0, err
    res = eval(out.split("RESULT", 1)[1])
    assert res["double"][0] == INVALID and "The data type of query/key/value is [DOUBLE], should be fp16, bf16 or fp32." \
        in res["double"][1]
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 16)).astype(np.float32)
    assert bytes.fromhex(res["out"]) == fa(x, x, x, "BNSD", 2, 0.25, version="V1")[0].tobytes()


# ---- torch_npu on the emulator -----------------------------------------------------------------------------

_TORCH_BODY = """
import torch.nn.functional as F

def sdpa(name, causal, masked, gqa, dtype):
    def go():
        q, k, v = (T(dec(SPEC[name][x])).to(getattr(torch, dtype)).npu().requires_grad_() for x in "qkv")
        mask = T(dec(SPEC[name]["m"])).npu() if masked else None
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=gqa)
        res = {"o": enc(to_np(o))}
        if dtype == "float32":
            o.backward(T(dec(SPEC[name]["g"])).npu())
            res.update(dq=enc(to_np(q.grad)), dk=enc(to_np(k.grad)), dv=enc(to_np(v.grad)))
        return res
    run(name, go)

for name, (causal, masked, gqa, dtype) in SPEC["cases"].items():
    sdpa(name, causal, masked, gqa, dtype)

def dropout():
    x = torch.zeros(1, 4, 256, 64).npu()
    v = torch.eye(64).expand(1, 4, 64, 64).contiguous().npu()
    k = torch.zeros(1, 4, 64, 64).npu()
    v.requires_grad_()
    torch.manual_seed(11); a = F.scaled_dot_product_attention(x, k, v, dropout_p=0.25)
    a.backward(torch.ones_like(a))                                  # GradV4 regenerates the forward's bits
    torch.manual_seed(11); b = F.scaled_dot_product_attention(x, k, v, dropout_p=0.25)
    c = F.scaled_dot_product_attention(x, k, v, dropout_p=0.25)
    return {"a": enc(to_np(a)), "b": enc(to_np(b)), "c": enc(to_np(c)), "dv": enc(to_np(v.grad))}
run("dropout", dropout)

def fusion():
    q = T(dec(SPEC["nfa"]["q"])).npu().requires_grad_()
    r = torch_npu.npu_fusion_attention(q, q, q, 4, "BSH", scale=0.25)
    r[0].backward(torch.ones_like(r[0]))
    return {"o": enc(to_np(r[0])), "max": enc(to_np(r[1])), "dq": enc(to_np(q.grad))}
run("nfa", fusion)
"""

TORCH_CASES = {"plain": (False, False, False, "float32"), "causal": (True, False, False, "float32"),
               "mask": (False, True, False, "float32"), "gqa": (True, False, True, "float32"),
               "bf16": (False, True, False, "bfloat16")}


def _torch_spec():
    spec = {"cases": TORCH_CASES}
    for name, (causal, masked, gqa, _) in TORCH_CASES.items():
        b, n1, s, d = 2, 4, 24, 32
        n2 = 2 if gqa else n1
        r = np.random.default_rng(len(name))
        case = {"q": r.standard_normal((b, n1, s, d)), "k": r.standard_normal((b, n2, s, d)),
                "v": r.standard_normal((b, n2, s, d)), "g": r.standard_normal((b, n1, s, d))}
        case = {x: y.astype(np.float32) for x, y in case.items()}
        m = r.random((b, 1, s, s)) > 0.3
        m[..., 0] = True
        case["m"] = m
        spec[name] = {x: enc(y) for x, y in case.items()}
    spec["nfa"] = {"q": enc(np.random.default_rng(9).standard_normal((2, 8, 64)).astype(np.float32))}
    return spec


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_TORCH_BODY, _torch_spec())


@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_torch_npu_sdpa_matches_torch_cpu(on_npu, name):
    """Default settings: F.scaled_dot_product_attention on npu reaches aclnnFlashAttentionScoreV4 (the same bits as
    the direct call with torch_npu's arguments) and GradV4, within the issue's bounds of torch CPU (fp32 forward 1e-5
    relative, gradients 1e-4)."""
    import torch
    res = on_npu[name]
    assert "error" not in res, res
    causal, masked, gqa, dtype = TORCH_CASES[name]
    spec = _torch_spec()[name]
    q, k, v, g, m = (dec(spec[x]) for x in "qkvgm")
    o = dec(res["o"])
    # the operator ran: the direct call with torch_npu's arguments (BNSD, 1/sqrt(D), logical_not(mask) or the
    # compressed causal mask with sparse mode 2) gives the same bits
    cast = (lambda x: R.cast(x, dtype)) if dtype != "float32" else (lambda x: x)
    kw = dict(mask=CAUSAL, sparse=2, nxt=0) if causal else dict(mask=~m, inner=2) if masked else {}
    direct = fa(cast(q), cast(k), cast(v), "BNSD", 4, 32 ** -0.5, **kw)
    assert direct[0].tobytes() == np.ascontiguousarray(o).tobytes()
    t = [torch.from_numpy(x).to(getattr(torch, dtype)).requires_grad_() for x in (q, k, v)]
    want = torch.nn.functional.scaled_dot_product_attention(*t, attn_mask=torch.from_numpy(m) if masked else None,
                                                            is_causal=causal, enable_gqa=gqa)
    close(o.astype(np.float64), want.float().detach().numpy().astype(np.float64),
          1e-5 if dtype == "float32" else 1.6e-2, "forward")
    if dtype == "float32":
        want.backward(torch.from_numpy(g))
        for key, tt in zip(("dq", "dk", "dv"), t):
            close(dec(res[key]).astype(np.float64), tt.grad.numpy().astype(np.float64), 1e-4, key)


def test_torch_npu_sdpa_dropout_and_npu_fusion_attention(on_npu):
    res = on_npu["dropout"]
    assert "error" not in res, res
    a, b, c = (dec(res[x]) for x in "abc")
    assert a.tobytes() == b.tobytes() and a.tobytes() != c.tobytes()     # per seed; the generator advances
    kept = a != 0
    assert abs(kept.mean() - 0.75) < 0.015
    assert np.allclose(a[kept], 1 / 0.75 / 64, rtol=1e-6)
    # V = I: out is the dropped probabilities, and dV = out^T @ ones (the same mask in the backward)
    np.testing.assert_allclose(dec(res["dv"]), np.broadcast_to(a.sum(axis=2)[..., None], a.shape[:2] + (64, 64)),
                               rtol=1e-5)
    nfa = on_npu["nfa"]
    assert "error" not in nfa, nfa
    q = dec(_torch_spec()["nfa"]["q"])
    out, smax, ssum = fa(q, q, q, "BSH", 4, 0.25)
    assert dec(nfa["o"]).tobytes() == out.tobytes() and dec(nfa["max"]).tobytes() == smax.tobytes()
    dq = fag(q, q, q, np.ones_like(out), out, smax, ssum, "BSH", 4, 0.25)[0]
    want = sum(A.backward(*(A.to_bnsd(x, "BSH", 4) for x in (q, q, q, np.ones_like(q))), 0.25)[:3])
    close(A.to_bnsd(dec(nfa["dq"]), "BSH", 4), want, GTOL[F32], "npu_fusion_attention dq")   # q = k = v: summed
    assert dq.shape == q.shape


def test_unpadding_grad_v4_reads_the_softmax_layout_the_forward_wrote():
    """aclnnFlashAttentionUnpaddingScoreGradV4 (torch_npu's TND backward on Atlas A2 with softmax_layout="TND"):
    with "same_as_input" it reads softmax max/sum as VarLenScoreV4 wrote them ([T, N1, 8]), with "" as the V1
    forms; the gradients are UnpaddingScoreGrad's, bit for bit."""
    lens_q, lens_kv, n1, d = [5, 3], [4, 6], 2, 8
    aq, akv = [int(x) for x in np.cumsum(lens_q)], [int(x) for x in np.cumsum(lens_kv)]
    q, k, v, dy = rand((8, n1, d), F16), rand((10, n1, d), F16), rand((10, n1, d), F16), rand((8, n1, d), F16)
    out, smax, ssum = fa(q, k, v, "TND", n1, 0.25, aq=aq, akv=akv, version="V1")
    want = fag(q, k, v, dy, out, smax, ssum, "TND", n1, 0.25, version="V1", aq=aq, akv=akv)
    _, smax_t, ssum_t = fa(q, k, v, "TND", n1, 0.25, aq=aq, akv=akv, version="VarLenV4", smlayout="same_as_input")
    for sl, (mx, sm) in (("same_as_input", (smax_t, ssum_t)), ("", (smax, ssum))):
        dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
        r = ops.FlashAttentionUnpaddingScoreGradV4(q, k, v, dy, None, None, None, None, mx, sm, None, out, None, aq, akv,
                                                   0.25, 1.0, BIG, BIG, n1, "TND", 0, 0, dq, dk, dv, None, sl)
        assert all(np.asarray(a).tobytes() == b.tobytes() for a, b in zip(r[:3], want[:3])), sl
    c, msg = status(ops.FlashAttentionUnpaddingScoreGradV4, q, k, v, dy, None, None, None, None, smax, ssum, None, out,
                    None, aq, akv, 0.25, 1.0, BIG, BIG, n1, "TND", 0, 0, np.zeros_like(q), np.zeros_like(k),
                    np.zeros_like(v), None, "BSH")
    assert c == 161002 and "softmaxInLayout BSH is not same_as_input or Empty string" in msg
