"""Independent NumPy reference of the emulator's random-number operators (the specification in
native_stubs/src/kernels/philox.h, written again here from that text and from the Philox paper,
not from the C code): Philox4x32-10 keyed by the seed with the counter (i, offset) per element, and the
maps from its words to uniform, normal and dropout-mask values.

The NPU's own streams are not reproduced (nobody outside the vendor can); these functions let the tests
check that the emulator computes exactly the stream it documents, on top of the statistical checks.
"""
from __future__ import annotations

import numpy as np

from . import elementwise as R

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(ctr: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32 with 10 rounds (Salmon et al., SC11): ctr is an (n, 4) uint32 array of counters;
    returns the (n, 4) uint32 outputs."""
    c = [ctr[:, j].astype(np.uint64) for j in range(4)]
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]                       # exact: 32 x 32 bits fit in uint64
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & MASK32,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & MASK32]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return np.stack(c, axis=1).astype(np.uint32)


def words(seed: int, offset: int, n: int) -> np.ndarray:
    """The four words of elements 0..n-1: key (seed lo, seed hi), counter (i lo, i hi, offset lo, hi)."""
    i = np.arange(n, dtype=np.uint64)
    seed, offset = seed % 2 ** 64, offset % 2 ** 64
    ctr = np.stack([i & MASK32, i >> np.uint64(32), np.full(n, offset & 0xFFFFFFFF, np.uint64),
                    np.full(n, offset >> 32, np.uint64)], axis=1)
    return philox4x32_10(ctr, (seed & 0xFFFFFFFF, seed >> 32))


def u24(w: np.ndarray) -> np.ndarray:
    return (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


def uniform(seed: int, offset: int, n: int, frm: float, to: float, dtype: str) -> np.ndarray:
    """aclnnInplaceUniform's values in row-major order: from + u * (to - from) in fp32 (DOUBLE: 53 bits
    in double), cast to dtype; a float result equal to `to` becomes `from`."""
    w = words(seed, offset, n)
    if dtype == "float64":
        u = ((w[:, 0].astype(np.uint64) << np.uint64(21)) ^ (w[:, 1] >> np.uint32(11)).astype(np.uint64))
        v = frm + u.astype(np.float64) * 2.0 ** -53 * (to - frm)
        return np.where((v >= to) & (frm < to), frm, v)
    f, t = np.float32(frm), np.float32(to)
    v = (f + u24(w[:, 0]) * (t - f)).astype(np.float32)
    r = R.cast(v, dtype)
    if dtype in ("float16", "bfloat16", "float32"):
        top = R.cast(np.array([t]), dtype)[0]
        r = np.where((r.astype(np.float64) >= float(top)) & (f < t), R.cast(np.array([f]), dtype)[0], r)
    return r


def normal_fp32(seed: int, offset: int, n: int, mean: float, std: float) -> np.ndarray:
    """aclnnInplaceNormal's fp32 values: Box-Muller z = sqrt(-2 ln u1) cos(2 pi u2), u1 = (w0 + 1) 2^-32,
    u2 = w1 2^-32, in double, rounded to fp32, then z * std + mean in fp32. (NumPy's log/cos may differ
    from libm's in the last bit of the double, so compare within an ulp of fp32.)"""
    w = words(seed, offset, n).astype(np.float64)
    u1, u2 = (w[:, 0] + 1.0) * 2.0 ** -32, w[:, 1] * 2.0 ** -32
    z = (np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)).astype(np.float32)
    return (z * np.float32(std) + np.float32(mean)).astype(np.float32)


def dropout_mask(seed: int, offset: int, prob: float, nbytes: int) -> np.ndarray:
    """aclnnDropoutGenMaskV2's bytes: bit i (byte i // 8, low bit first) is 1 (keep) when the uniform
    number of element i is below float32(1 - prob); prob 0 gives 0xFF, prob 1 gives 0."""
    if prob == 0:
        return np.full(nbytes, 0xFF, np.uint8)
    if prob == 1:
        return np.zeros(nbytes, np.uint8)
    keep = u24(words(seed, offset, nbytes * 8)[:, 0]) < np.float32(1 - prob)
    return np.packbits(keep.reshape(nbytes, 8), axis=1, bitorder="little").reshape(nbytes)


# ---- the sampling operators (native_stubs/src/ops/random/sampling.c's maps) ----------------------------------

def r64(seed: int, offset: int, n: int) -> np.ndarray:
    """64 random bits of elements 0..n-1: word 0 << 32 | word 1."""
    w = words(seed, offset, n).astype(np.uint64)
    return (w[:, 0] << np.uint64(32)) | w[:, 1]


def u53(seed: int, offset: int, n: int) -> np.ndarray:
    w = words(seed, offset, n)
    u = (w[:, 0].astype(np.uint64) << np.uint64(21)) ^ (w[:, 1] >> np.uint32(11)).astype(np.uint64)
    return u.astype(np.float64) * 2.0 ** -53


def random_ints(seed: int, offset: int, n: int, frm: int, rng: int) -> np.ndarray:
    """aclnnInplaceRandom's integers (before the cast to the tensor's dtype): from + r64 mod range (range 0: 2^64)."""
    r = r64(seed, offset, n)
    k = r % np.uint64(rng) if rng else r
    return np.array([(frm + int(v) + 2 ** 63) % 2 ** 64 - 2 ** 63 for v in k], np.int64)


def bernoulli(seed: int, offset: int, p: np.ndarray) -> np.ndarray:
    """aclnnInplaceBernoulli(Tensor): 1 where the element's 24-bit uniform is below fp32(p) (p per element)."""
    p = np.asarray(p, np.float64).reshape(-1)
    return (u24(words(seed, offset, p.size)[:, 0]) < p.astype(np.float32)).astype(np.int64)


def randperm(seed: int, offset: int, n: int) -> np.ndarray:
    """aclnnRandperm: 0..n-1 in the order of their r64 (ties by index)."""
    return np.argsort(r64(seed, offset, n), kind="stable").astype(np.int64)


def multinomial(seed: int, offset: int, w: np.ndarray, k: int, replacement: bool) -> np.ndarray:
    """aclnnMultinomial's samples, rows of weights w (1-d or 2-d): inverse CDF on u53 with replacement, the
    exponential race -log(u53 + 2^-53) / w (smallest first, ties by index) without."""
    w2 = np.atleast_2d(np.asarray(w, np.float64))
    rows, n = w2.shape
    out = np.zeros((rows, k), np.int64)
    for b in range(rows):
        row = w2[b]
        if replacement:
            cum = np.cumsum(np.where(row > 0, row, 0.0))
            u = u53(seed, offset, (b + 1) * k)[b * k:]
            for s in range(k):
                target = u[s] * cum[-1]
                ok = np.flatnonzero((row > 0) & (cum > target))
                out[b, s] = ok[0] if ok.size else n - 1
        else:
            u = u53(seed, offset, (b + 1) * n)[b * n:] + 2.0 ** -53
            with np.errstate(divide="ignore"):
                e = np.where(row > 0, -np.log(u) / np.where(row > 0, row, 1.0), np.inf)
            out[b] = np.lexsort((np.arange(n), e))[:k]
    return out.reshape(np.shape(w)[:-1] + (k,))
