"""The Atlas A2 decode kernel's INT8 key/value path (per-channel antiquant), from hicann/ops-transformer
attention/incre_flash_attention/op_kernel/incre_flash_attention_split_Bbn2s2_Us2.h (DealQueryPreProcessBaseBlock,
AntiquantMatmulPreProcess, AntiquantAIterExpand, AntiquantMatmulResCombine, DealAntiqBmm1ResBaseBlock,
AntiquantSoftmaxResPreProcess, DealAntiqBmm2ResBaseBlock, SoftmaxLseCopyOut) and the tiling's msdIterNum
(incre_flash_attention_tiling.cpp SetQuantFlag: 3 for innerPrecise 0, 2 for 1), never from the emulator's C.

MSD: the fp32 left operand of each product is split into int8 pieces so that the int8 key / value go through the
int8 cube unit; every vector step in float32, CAST_ROUND = to nearest, ties away from zero. And the definition it
approximates: out = softmax(scale * q . ((k + offset) * scale_k)) . ((v + offset_v) * scale_v) in float64.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
COEFF, EXPAND = F32(127), F32(254)   # antiqCoeff1, antiquantExpandCoeff (int8)
COEFF4, EXPAND4 = F32(7.49), F32(14.98)   # the same for an int4 key/value (KVINT4: 4 pieces)


def cast_round(x):
    """float32 to the nearest integer, ties away from zero (exact through float64)."""
    x = np.asarray(x, np.float64)
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(F32)


def pieces(a, iters, expand=EXPAND):
    """AntiquantAIterExpand: a (float32) as `iters` int8 (int4) pieces."""
    a = np.asarray(a, F32).copy()
    out, r = [], None
    for i in range(iters):
        if i:
            a = ((a - r) * expand).astype(F32)
        r = cast_round(a)
        out.append(r.astype(np.int64))
    return out


def combine(products, coeff=COEFF, expand=EXPAND):
    """AntiquantMatmulResCombine: sum_i C_i / 254^i (scale updated in float32), times 1/127."""
    res, sc = products[0].astype(F32), F32(1)
    for c in products[1:]:
        sc = F32(sc / expand)
        res = (res + (c.astype(F32) * sc).astype(F32)).astype(F32)
    return (res * (F32(1) / coeff)).astype(F32)


def msd_row(q, k8, v8, ks, ko, vs, vo, scale, iters, masked=None, int4=False):
    """One query row: q [D] (the query dtype's values), k8 / v8 [S2, D] int8, ks / ko / vs / vo [D] (offsets may be
    None) as float32; masked [S2] bool. Returns (out [D] float32 before the output cast, lse float32)."""
    cf, ex = (COEFF4, EXPAND4) if int4 else (COEFF, EXPAND)
    qs = (np.asarray(q, F32) * ks).astype(F32)
    amax = np.abs(qs).max()
    a = (qs * F32(cf / amax)).astype(F32) if amax > 0 else np.zeros_like(qs)
    s = combine([p @ k8.T.astype(np.int64) for p in pieces(a, iters, ex)], cf, ex)
    s = (s * amax).astype(F32)
    x = (s * F32(scale)).astype(F32)
    if masked is not None:
        x = np.where(masked, np.finfo(F32).min, x).astype(F32)
    m = x.max()
    e = np.exp((x - m).astype(np.float64)).astype(F32)
    total = F32(np.sum(e, dtype=np.float64))   # (the vector unit's order: class c)
    o = combine([p @ v8.astype(np.int64) for p in pieces((e * cf).astype(F32), iters, ex)], cf, ex)
    o = (o / total).astype(F32)
    if vo is not None:
        o = (o + vo).astype(F32)
    o = (o * vs).astype(F32)
    lse = F32(m + F32(np.log(np.float64(total))))
    if ko is not None:
        lse = F32(lse + F32(F32(np.sum(qs * ko, dtype=np.float64)) * F32(scale)))
    return o, lse


def msd_row_per_token(q, k8, v8, ks, ko, vs, vo, scale, iters, masked=None):
    """antiquantMode 1 (DealQueryPreProcessBaseBlockPerToken, DealAntiqBmm1ResBaseBlockPerToken,
    DealAntiqBmm2ResBaseBlockPerToken): ks / ko / vs / vo float32 [S2] per key/value position (offsets may be None).
    The query is split unscaled; S_j = (aMax C_j + rowsum(q) ko_j) ks_j; P's side: p_j vs_j split against its row's
    |max|, out = (aMax2 C + rowsum(p vs vo)) / sum. softmaxLse = max + log(sum) (the offsets are inside the scores)."""
    q = np.asarray(q, F32)
    amax = np.abs(q).max()
    a = (q * F32(COEFF / amax)).astype(F32) if amax > 0 else np.zeros_like(q)
    c = combine([p @ k8.T.astype(np.int64) for p in pieces(a, iters)])
    if ko is not None:
        qsum = F32(np.sum(q, dtype=np.float64))
        s = ((amax * c).astype(F32) + (qsum * ko).astype(F32)).astype(F32)
    else:
        s = (amax * c).astype(F32)
    s = (s * ks).astype(F32)
    x = (s * F32(scale)).astype(F32)
    if masked is not None:
        x = np.where(masked, np.finfo(F32).min, x).astype(F32)
    m = x.max()
    e = np.exp((x - m).astype(np.float64)).astype(F32)
    total = F32(np.sum(e, dtype=np.float64))
    e2 = (e * vs).astype(F32)
    amax2 = np.abs(e2).max()
    a2 = (e2 * F32(COEFF / amax2)).astype(F32) if amax2 > 0 else np.zeros_like(e2)
    o = combine([p @ v8.astype(np.int64) for p in pieces(a2, iters)])
    o = (amax2 * o).astype(F32)
    if vo is not None:
        o = (o + F32(np.sum((e2 * vo).astype(F32), dtype=np.float64))).astype(F32)
    o = (o / total).astype(F32)
    return o, F32(m + F32(np.log(np.float64(total))))


def exact_row_per_token(q, k8, v8, ks, ko, vs, vo, scale):
    """The float64 definition of antiquantMode 1: position j dequantised as (x_j + offset_j) * scale_j."""
    f = np.float64
    col = lambda t: 0 if t is None else t.astype(f)[:, None]
    return exact_row(q, k8, v8, np.ones(k8.shape[1]), None, np.ones(v8.shape[1]), None, scale,
                     k_deq=(k8.astype(f) + col(ko)) * col(ks), v_deq=(v8.astype(f) + col(vo)) * col(vs))


def exact_row(q, k8, v8, ks, ko, vs, vo, scale, masked=None, k_deq=None, v_deq=None):
    """The float64 definition: dequantise ((x + offset) * scale, per channel), then attend."""
    f = np.float64
    k = (k8.astype(f) + (0 if ko is None else ko.astype(f))) * ks.astype(f) if k_deq is None else k_deq
    v = (v8.astype(f) + (0 if vo is None else vo.astype(f))) * vs.astype(f) if v_deq is None else v_deq
    x = scale * (k @ np.asarray(q, f))
    if masked is not None:
        x = np.where(masked, -np.inf, x)
    m = x.max()
    e = np.exp(x - m)
    return e @ v / e.sum(), np.log(e.sum()) + m


# ---- the post-quant INT8 attentionOut (quantScale2 / quantOffset2) -------------------------------------------------
# incre_flash_attention_split_Bbn2s2_Us2.h PostQuant: per tensor through AscendC's AscendQuant (fp32 input, Atlas A2:
# CANN 8.1.RC1 ascend_quant_pre_impl.h -- fp16(out), times fp16(scale), plus fp16(offset), each rounded to fp16
# nearest even, then int8 nearest even); per channel in fp32 (out * scale + offset), then fp16 and int8 with
# CAST_ROUND (ties away). int8 saturates.

def f16_round_away(x):
    """float32 -> float16, to nearest, ties away from zero."""
    x64 = np.asarray(x, np.float32).astype(np.float64)
    h = x64.astype(np.float16)
    hd = h.astype(np.float64)
    toward = np.where(x64 > hd, np.float16(np.inf), np.float16(-np.inf))
    other = np.nextafter(h, toward)
    tie = (x64 != hd) & (np.abs(x64 - hd) == np.abs(other.astype(np.float64) - x64))
    away = np.where(np.abs(other.astype(np.float64)) > np.abs(hd), other, h)
    return np.where(tie, away, h)


def post_quant_tensor(out32, scale, offset=0.0):
    h = np.asarray(out32, np.float32).astype(np.float16)
    h = (h.astype(np.float64) * np.float64(np.float16(scale))).astype(np.float16)
    h = (h.astype(np.float64) + np.float64(np.float16(offset))).astype(np.float16)
    return np.clip(np.rint(h.astype(np.float64)), -128, 127).astype(np.int8)


def post_quant_channel(out32, scale, offset=None):
    v = (np.asarray(out32, np.float32) * np.asarray(scale, np.float32)).astype(np.float32)
    if offset is not None:
        v = (v + np.asarray(offset, np.float32)).astype(np.float32)
    h = f16_round_away(v).astype(np.float64)
    return np.clip(np.sign(h) * np.floor(np.abs(h) + 0.5), -128, 127).astype(np.int8)
