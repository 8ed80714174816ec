"""Sum-of-squares reduction trees of AddRmsNormDynamicQuant (spec B.8.2, B.9.2), in exact order.

Every function takes the squares q = f32(x*x) of all rows at once, shape [M, n] float32, and returns
the per-row sums, shape [M] float32. Each addition is one float32 NumPy add (one rounding); the
order of additions is the vendor kernel's, row by row; rows never interact.

`tree64` is the reduce-sum of one 64-lane register. Its internal order is not published for
WholeReduceSum / Reg::ReduceSum (open question Q2): the default is the documented ReduceSum order,
a binary tree of adjacent pairs; "halves" (lane l + lane l+32, ...) is the alternative.
"""
from __future__ import annotations

import numpy as np

from .arnq_tiling import ceil_to, largest_pow2_le

LANES = 64
F32 = np.float32
LEVEL_SLOTS = 256       # entries of one level buffer of the 950 split template


def tree64(v: np.ndarray, order: str = "adjacent") -> np.ndarray:
    """Reduce the last axis (<= 64 lanes, missing lanes = +0.0) to one float32 per row."""
    v = np.asarray(v, dtype=F32)
    lanes = v.shape[-1]
    if lanes > LANES:
        raise ValueError(f"tree64 takes at most 64 lanes, got {lanes}")
    if lanes < LANES:
        pad = np.zeros(v.shape[:-1] + (LANES - lanes,), dtype=F32)
        v = np.concatenate([v, pad], axis=-1)
    width = LANES
    while width > 1:
        if order == "adjacent":
            v = v[..., 0:width:2] + v[..., 1:width:2]
        elif order == "halves":
            v = v[..., : width // 2] + v[..., width // 2: width]
        else:
            raise ValueError(f"unknown tree64 order {order!r}")
        width //= 2
    return v[..., 0]


def half_interval(q: np.ndarray, order: str = "adjacent") -> np.ndarray:
    """ReduceSumHalfInterval (910B all templates, 950 single row): fold the tail past the largest
    power of two b <= n onto the front, halve while b > 64, then one 64-lane reduce."""
    q = np.array(q, dtype=F32, copy=True)
    n = q.shape[-1]
    if n <= LANES:
        return tree64(q, order)
    body = largest_pow2_le(n)
    tail = n - body
    if tail:
        q[:, :tail] = q[:, :tail] + q[:, body:body + tail]
    while body > LANES:
        body //= 2
        q[:, :body] = q[:, :body] + q[:, body:2 * body]
    return tree64(q[:, :LANES], order)


def slice_d(q: np.ndarray, slice_len: int, order: str = "adjacent") -> np.ndarray:
    """910B slice-D: S = 0; S = f32(S + HalfInterval(slice)) over full slices, then the tail slice
    (tail = N mod L, or L when that is 0)."""
    n = q.shape[-1]
    tail = n % slice_len or slice_len
    total = np.zeros(q.shape[0], dtype=F32)
    start = 0
    for _ in range((n - tail) // slice_len):
        total = total + half_interval(q[:, start:start + slice_len], order)
        start += slice_len
    return total + half_interval(q[:, start:], order)


def fold_reduce(q: np.ndarray, order: str = "adjacent") -> np.ndarray:
    """950 perf template (CalculateSquareReduceSum): fold at F = 2^floor(log2(ceil16(N) - 1))."""
    n = q.shape[-1]
    if n <= LANES:
        return tree64(q, order)
    if n <= 2 * LANES:
        lanes = np.array(q[:, :LANES], dtype=F32, copy=True)
        lanes[:, :n - LANES] = lanes[:, :n - LANES] + q[:, LANES:n]
        return tree64(lanes, order)
    fold = largest_pow2_le(ceil_to(n, 16) - 1)
    folded = np.array(q[:, :fold], dtype=F32, copy=True)
    folded[:, :n - fold] = folded[:, :n - fold] + q[:, fold:n]
    partials = tree64(folded.reshape(q.shape[0], fold // LANES, LANES), order)
    if n <= LANES * LANES * 2:
        return tree64(partials, order)
    return tree64(partials[:, :LANES] + partials[:, LANES:2 * LANES], order)


def reduce_sum_rstd(q: np.ndarray, power_split: int, order: str = "adjacent") -> np.ndarray:
    """NormCommon ReduceSumRstd without the rstd step: q already zero-padded to C (a multiple of
    256), folded at power_split P (P <= C < 2P). Pairs of registers are summed lane-wise, each pair
    reduced to one partial, partials merged 128 at a time if there are 128 or more."""
    rows, count = q.shape
    remain = count - power_split
    if not (0 <= remain <= power_split) or count % 256 or power_split % 128:
        raise ValueError(f"bad ReduceSumRstd split: count {count}, power split {power_split}")
    parts = []
    if remain:
        summed = q[:, :remain] + q[:, power_split:power_split + remain]
        pairs = summed.reshape(rows, remain // 128, 2, LANES)
        parts.append(tree64(pairs[:, :, 0] + pairs[:, :, 1], order))
    master = q[:, remain:power_split].reshape(rows, (power_split - remain) // 128, 2, LANES)
    parts.append(tree64(master[:, :, 0] + master[:, :, 1], order))
    partials = np.concatenate(parts, axis=1)
    n_partials = power_split // 128
    if n_partials // 128 == 0:
        return tree64(partials, order)
    merged = partials.reshape(rows, n_partials // 128, 2, LANES)
    merged = tree64(merged[:, :, 0] + merged[:, :, 1], order)
    if merged.shape[1] > LANES:
        raise ValueError("ReduceSumRstd: more than 64 merged partials (power split >= 2^20)")
    return tree64(merged, order)


def normal_reduce(q: np.ndarray, order: str = "adjacent") -> np.ndarray:
    """950 normal template: x zero-padded to C = ceil256(N), P = 2^floor(log2 C)."""
    padded = pad_to(q, ceil_to(q.shape[-1], 256))
    return reduce_sum_rstd(padded, largest_pow2_le(padded.shape[-1]), order)


def pad_to(q: np.ndarray, width: int) -> np.ndarray:
    rows, n = q.shape
    if n == width:
        return np.asarray(q, dtype=F32)
    out = np.zeros((rows, width), dtype=F32)
    out[:, :n] = q
    return out


def level_merge(level: np.ndarray, order: str = "adjacent") -> np.ndarray:
    """LevelMergeRstd of one 256-slot level buffer:
    lane l = (a[l] + a[64+l]) + (a[128+l] + a[192+l]), then one 64-lane reduce."""
    a = level
    lanes = (a[:, 0:64] + a[:, 64:128]) + (a[:, 128:192] + a[:, 192:256])
    return tree64(lanes, order)


def split_reduce(q: np.ndarray, chunk: int, loop: int, order: str = "adjacent") -> np.ndarray:
    """950 split template (B.9.2): chunk sums pushed into level buffers walking the row left to
    right. As in the vendor kernel, a level buffer is not cleared after it is merged into the next
    level, and the final merge takes only the lowest non-empty level (both matter only past 256
    level-1 entries, N > 4 M columns)."""
    rows, n = q.shape
    if n < chunk * loop:
        raise ValueError(f"split template needs N >= P0 * L ({chunk} * {loop}), got {n}")
    half = chunk // 2
    tail = n - chunk * loop
    tail_loops, tail_tail = divmod(tail, chunk)
    master_loops = loop - tail_loops - (1 if tail_tail else 0)

    levels = [np.zeros((rows, LEVEL_SLOTS), dtype=F32) for _ in range(3)]
    used = [0, 0, 0]
    position = 0

    def chunk_sum(count: int, fold: int) -> np.ndarray:
        nonlocal position
        data = pad_to(q[:, position:position + count], ceil_to(count, 256))
        position += count
        return reduce_sum_rstd(data, fold, order)

    def push(value: np.ndarray) -> None:
        levels[0][:, used[0]] = value
        used[0] += 1
        for lvl in (0, 1):
            if used[lvl] == LEVEL_SLOTS:
                levels[lvl + 1][:, used[lvl + 1]] = level_merge(levels[lvl], order)
                used[lvl] = 0
                used[lvl + 1] += 1

    for _ in range(tail_loops):
        first = chunk_sum(chunk, chunk)
        push(first + chunk_sum(chunk, chunk))
    if 0 < tail_tail <= half:
        first = chunk_sum(half + tail_tail, half)
        push(first + chunk_sum(half, half))
    elif tail_tail > half:
        first = chunk_sum(chunk, chunk)
        push(first + chunk_sum(tail_tail, half))
    for _ in range(master_loops):
        push(chunk_sum(chunk, chunk))
    if position != n:
        raise AssertionError(f"split walk covered {position} of {n} columns")

    if 0 < used[0] < LEVEL_SLOTS:
        return level_merge(levels[0], order)
    if 0 < used[1] < LEVEL_SLOTS:
        return level_merge(levels[1], order)
    return level_merge(levels[2], order)
