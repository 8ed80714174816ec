"""Float64 models of the inference attention operators, from the vendor docs (hicann/ops-transformer
attention/fused_infer_attention_score/docs/aclnnFusedInferAttentionScoreV4.md, attention/scatter_pa_kv_cache/
docs/aclnnScatterPaKvCache.md), never from the emulator's C:

- attention per batch b and query head n: x = scaleValue * q_b,n @ k_b,n2^T (n2 = n // (numHeads /
  numKeyValueHeads)), masked positions out of the softmax, out = softmax(x) @ v_b,n2 over the batch's actual
  lengths; softmaxLse = log(sum(exp(x - max))) + max, +inf where the row has nothing to attend ("inf 代表无效数据");
- the paged cache: position s of batch b is row s % blockSize of block blockTable[b, s // blockSize];
- masks: a true/1 element leaves the position out; sparseMode 2 / 3 are the causal masks from the upper-left /
  lower-right corner of each batch's (S1, S2), sparseMode 0 with a mask also the preTokens / nextTokens band.
"""
from __future__ import annotations

import numpy as np


def paged_rows(cache, table, b, length, block_size, bnbsd):
    """Batch b's first `length` rows of a [blocks, blockSize, H] cache ([length, H]) or a [blocks, N2, blockSize, D]
    one ([length, N2, D])."""
    width = (cache.shape[2],) if not bnbsd else (cache.shape[1], cache.shape[3])
    out = np.zeros((length,) + tuple(width))
    for s in range(length):
        blk, r = table[b, s // block_size], s % block_size
        out[s] = cache[blk, :, r, :] if bnbsd else cache[blk, r]
    return out


def attend(q, k, v, scale, masked=None):
    """q [S1, D], k [S2, D], v [S2, Dv] in float64; masked [S1, S2] bool (True: left out). Rows with every
    position left out: out 0, lse +inf."""
    x = scale * (q @ k.T)
    if masked is not None:
        x = np.where(masked, -np.inf, x)
    out = np.zeros((q.shape[0], v.shape[1]))
    lse = np.full(q.shape[0], np.inf)
    for i in range(q.shape[0]):
        if k.shape[0] == 0 or np.all(np.isneginf(x[i])):
            continue
        m = x[i].max()
        e = np.exp(x[i] - m)
        out[i] = e @ v / e.sum()
        lse[i] = np.log(e.sum()) + m
    return out, lse


def causal(s1, s2, mode):
    """sparseMode 2 (upper-left) or 3 (lower-right) as a [s1, s2] 'left out' mask."""
    i, j = np.arange(s1)[:, None], np.arange(s2)[None, :]
    return j > i + (s2 - s1 if mode == 3 else 0)


def fia(q, kv_rows, n1, n2, scale, s1_lens, s2_lens, mask_of=None):
    """q: per batch [N1, S1max, D] (float64); kv_rows(b, length) -> (k [len, N2, D], v [len, N2, Dv]); returns per
    batch out [N1, S1max, Dv] (rows past the length 0) and lse [N1, S1max] (+inf past it)."""
    g = n1 // n2
    outs, lses = [], []
    for b in range(len(q)):
        s1, s2 = s1_lens[b], s2_lens[b]
        k, v = kv_rows(b, s2)
        out = np.zeros((n1, q[b].shape[1], v.shape[2]))
        lse = np.full((n1, q[b].shape[1]), np.inf)
        for n in range(n1):
            m = None if mask_of is None else mask_of(b, n, s1, s2)
            o, l = attend(q[b][n, :s1], k[:, n // g], v[:, n // g], scale, m)
            out[n, :s1], lse[n, :s1] = o, l
        outs.append(out)
        lses.append(lse)
    return outs, lses


def scatter_pa_kv_cache(key, cache, slots, nz=False):
    """keyCache after the tokens' rows are written at their slots (Norm: [blocks, blockSize, N, D]; PA_NZ:
    [blocks, N * D // L, blockSize, L]); slots < 0 are skipped."""
    out = cache.copy()
    tokens = key.reshape(key.shape[0], -1)
    if not nz:
        flat = out.reshape(-1, tokens.shape[1])
        for i, s in enumerate(slots):
            if s >= 0:
                flat[s] = tokens[i]
        return flat.reshape(cache.shape)
    bs, last = cache.shape[2], cache.shape[3]
    for i, s in enumerate(slots):
        if s >= 0:
            out[s // bs, :, s % bs, :] = tokens[i].reshape(-1, last)
    return out
