"""KvRmsNormRopeCache, written from hicann/ops-transformer posembedding/kv_rms_norm_rope_cache (op_kernel/
kv_rms_norm_rope_cache_b16_mtp.h, _b16_pa.h: the Atlas A2 kernels; the 950 kernel is not public) and the doc's
formulas.

kv [B, 1, S, Dv + Dk]: kv[..., :Dv] is RMS-normalised (ckv rows), kv[..., Dv:] rotated (k rows):
  rope (the kernels' RopeK): real = x[0::2], imag = x[1::2] (GatherMask), widened to fp32;
       out[:Dk/2] = real * cos[:Dk/2] + (-imag) * sin[:Dk/2], out[Dk/2:] = imag * cos[Dk/2:] + real * sin[Dk/2:],
       each product rounded to fp32, then the sum; one round-to-nearest-even cast to the dtype.
  rms norm: q = x * x (fp32); the A2 sum: three Adds of adjacent 64-lane blocks (block r = blocks 2r + 2r+1,
       512 -> 256 -> 128 -> 64), then WholeReduceSum of 64 lanes (a tree of adjacent pairs: arnq_reduce.tree64);
       ms = sum * fp32(1 / Dv); ms + eps; sqrt; x / rms; * gamma; one RNE cast.
       Ascend 950 (assumed): the same, the sum in its RMS norm's CalculateSquareReduceSum order (fold_reduce).
Scatter: "Norm" row (b * Sc + index[b, s]) of the flattened cache; "PA" slot index[t]; "PA_NZ" the NZ tile
[blocks, D / 16, blockSize, 16] (16 b16 elements = 32 bytes); the block modes one index per page (block_slots);
index < 0 skips the token.
"""
from __future__ import annotations

import numpy as np

from . import elementwise as R
from .arnq_reduce import fold_reduce, tree64

F32 = np.float32


def a2_sum(q: np.ndarray) -> np.ndarray:
    """[M, 512] squares -> [M] sums in the A2 kernels' order."""
    q = np.asarray(q, F32)
    m = q.shape[0]
    while q.shape[1] > 64:
        blocks = q.reshape(m, -1, 2, 64)
        q = (blocks[:, :, 0, :] + blocks[:, :, 1, :]).reshape(m, -1)
    return tree64(q)


def rows(kv, gamma, cos, sin, eps, soc950=False):
    """k rows [B, 1, S, Dk] and ckv rows [B, 1, S, Dv] in kv's dtype (name: its numpy dtype)."""
    name = "bfloat16" if kv.dtype == R.np_dtype("bfloat16") else str(kv.dtype)
    dv, dk = gamma.shape[0], cos.shape[-1]
    x = np.asarray(kv, F32)
    b, _, s, _ = x.shape
    c = np.broadcast_to(np.asarray(cos, F32), (b, 1, s, dk))
    sn = np.broadcast_to(np.asarray(sin, F32), (b, 1, s, dk))
    r = x[..., dv:]
    real, imag = r[..., 0::2], r[..., 1::2]
    h = dk // 2
    first = real * c[..., :h] + (-imag) * sn[..., :h]
    second = imag * c[..., h:] + real * sn[..., h:]
    k = R.cast(np.concatenate([first, second], axis=-1).astype(F32), name)
    v = x[..., :dv].reshape(-1, dv)
    q = v * v
    total = fold_reduce(q) if soc950 else a2_sum(q)
    ms = total * (F32(1) / F32(dv))   # the tiling's reciprocal_ = 1.0 / float(Dv)
    rms = np.sqrt(ms + F32(eps)).astype(F32)
    y = (v / rms[:, None]) * np.asarray(gamma, F32)[None, :]
    return k, R.cast(y.astype(F32).reshape(b, 1, s, dv), name)


def block_slots(index, batch, seq, block_size):
    """PA_BLK_*: token (b, s) goes to slot index[b * pages + s // bs] // bs * bs + s % bs (-1 where that entry is < 0;
    ScatterUpdatePABlkBnsd / ScatterUpdateNZ)."""
    pages = -(-seq // block_size)
    idx = np.asarray(index).reshape(-1)
    out = []
    for b in range(batch):
        for s in range(seq):
            e = idx[b * pages + s // block_size]
            out.append(-1 if e < 0 else e // block_size * block_size + s % block_size)
    return np.array(out, np.int64)


def scatter(rows_, cache, index, mode, seq, block=16):
    """A copy of cache with each token's row written (rows_ [B, 1, S, D])."""
    out = np.array(cache, copy=True)
    flat = out.reshape(-1)
    d = rows_.shape[-1]
    tokens = rows_.reshape(-1, d)
    idx = np.asarray(index).reshape(-1)
    if mode.startswith("PA_BLK"):
        idx = block_slots(index, rows_.shape[0], seq, cache.shape[1])
        mode = "PA_NZ" if mode == "PA_BLK_NZ" else "PA"
    for t, i in enumerate(idx):
        if i < 0:
            continue
        if mode == "Norm":
            cache_len = cache.shape[2]
            flat[(t // seq * cache_len + i) * d:(t // seq * cache_len + i + 1) * d] = tokens[t]
        elif mode == "PA_NZ":
            bs = cache.shape[1]
            for hh in range(d):
                flat[((i // bs * (d // block) + hh // block) * bs + i % bs) * block + hh % block] = tokens[t, hh]
        else:
            flat[i * d:(i + 1) * d] = tokens[t]
    return out


def definition(kv, gamma, cos, sin, eps):
    """The doc's formulas in float64 (k rows, ckv rows)."""
    dv, dk = gamma.shape[0], cos.shape[-1]
    x = np.asarray(kv, np.float64)
    r = x[..., dv:]
    x1, x2 = r[..., 0::2], r[..., 1::2]
    k = np.concatenate([x1, x2], -1) * np.asarray(cos, np.float64) + np.concatenate([-x2, x1], -1) * np.asarray(sin, np.float64)
    v = x[..., :dv]
    rms = np.sqrt((v * v).mean(-1, keepdims=True) + eps)
    return k, v / rms * np.asarray(gamma, np.float64)
