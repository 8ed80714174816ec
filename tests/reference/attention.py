"""Float64 references of FlashAttentionScore and its gradient, written from the vendor's definition
(hicann/ops-transformer attention/flash_attention_score/docs/aclnnFlashAttentionScore*.md,
docs/en/context/sparse_mode_introduction.md):

    out = Dropout(Softmax(Mask(scale * (pse + Q K^T), atten_mask)), keep_prob) V        (pseType 1)
    out = Dropout(Softmax(Mask(scale * Q K^T + pse, atten_mask)), keep_prob) V          (pseType 0, 2, 3)

per head (GQA: query head n reads key/value head n // G), softmaxMax / softmaxSum the row max and the sum of
exp(x - max) before dropout; the gradient is the chain rule of the same formula. Everything here works on
BNSD float64 arrays; `to_bnsd` / `from_bnsd` convert the layouts (TND: one batch at a time)."""
from __future__ import annotations

import numpy as np


def to_bnsd(x, layout: str, n: int) -> np.ndarray:
    """BSH [B,S,N*D], SBH [S,B,N*D], BSND, BNSD -> [B,N,S,D] float64."""
    x = np.asarray(x, np.float64)
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return x.transpose(0, 2, 1, 3)
    if layout == "BSH":
        b, s, h = x.shape
        return x.reshape(b, s, n, h // n).transpose(0, 2, 1, 3)
    if layout == "SBH":
        s, b, h = x.shape
        return x.reshape(s, b, n, h // n).transpose(1, 2, 0, 3)
    raise ValueError(layout)


def from_bnsd(x: np.ndarray, layout: str) -> np.ndarray:
    b, n, s, d = x.shape
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return x.transpose(0, 2, 1, 3)
    if layout == "BSH":
        return x.transpose(0, 2, 1, 3).reshape(b, s, n * d)
    if layout == "SBH":
        return x.transpose(2, 0, 1, 3).reshape(s, b, n * d)
    raise ValueError(layout)


def sparse_mask(mode: int, s1: int, s2: int, pre: int = 2**31 - 1, nxt: int = 2**31 - 1, prefix: int = 0,
                band: bool = False) -> np.ndarray:
    """[S1, S2] bool, True = left out, for the compressed sparse modes (2, 3, 4, 6; 7/8 per batch: `band`
    for the band batch) -- the positions the vendor's compressed mask leaves out."""
    i, j = np.arange(s1)[:, None], np.arange(s2)[None, :]
    shift = s2 - s1
    if mode == 2 or (mode == 8 and not band):
        return j > i
    if mode == 3 or (mode == 7 and not band):
        return j - i > shift
    if mode in (4, 7, 8):
        return (j - i - shift > nxt) | (i - j + shift > pre)
    if mode == 6:
        return (j - i > shift) & ~(j < prefix)
    raise ValueError(mode)


def forward(q, k, v, scale, mask=None, pse=None, pse_type=1, keep=None, keep_prob=1.0):
    """q [B,N1,S1,D], k [B,N2,S2,D], v [B,N2,S2,Dv] (float64), mask/keep broadcastable to [B,N1,S1,S2]
    (mask True = left out, keep True = kept), pse broadcastable to the scores. (out, max, sum, P)."""
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = q @ np.swapaxes(k, -1, -2)
    if pse is None:
        x = s * scale
    else:
        x = (s + pse) * scale if pse_type == 1 else s * scale + pse
    if mask is not None:
        x = np.where(mask, -np.inf, x)
    m = x.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):   # a fully masked row: -inf - -inf is NaN, as on the NPU
        e = np.exp(x - m)
    l = e.sum(axis=-1, keepdims=True)
    p = e / l
    pd = p if keep is None else p * keep / keep_prob
    return pd @ v, m[..., 0], l[..., 0], p


def backward(q, k, v, dout, scale, mask=None, pse=None, pse_type=1, keep=None, keep_prob=1.0):
    """(dq, dk, dv, dpse) of `forward` for the output gradient dout [B,N1,S1,Dv] (dpse over the full scores)."""
    n2 = k.shape[1]
    g = q.shape[1] // n2
    out, _, _, p = forward(q, k, v, scale, mask, pse, pse_type, keep, keep_prob)
    kk, vv = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    drop = 1.0 if keep is None else keep / keep_prob
    pd = p * drop
    dv = np.swapaxes(pd, -1, -2) @ dout
    dp = dout @ np.swapaxes(vv, -1, -2) * drop
    ds = p * (dp - (dout * out).sum(axis=-1, keepdims=True))
    dq = ds @ kk * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    b, n1 = q.shape[:2]
    dk = dk.reshape(b, n2, g, *dk.shape[2:]).sum(axis=2)
    dv = dv.reshape(b, n2, g, *dv.shape[2:]).sum(axis=2)
    dpse = ds * scale if pse_type == 1 else ds
    return dq, dk, dv, dpse
