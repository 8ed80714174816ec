"""Adversarial scalar values: the numbers a careless or hostile caller passes to a C API.

Every generator takes a ``random.Random`` so a run is reproducible from its seed.
"""
from __future__ import annotations

import math
import random

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
UINT32_MAX = (1 << 32) - 1

# Edges that break naive size arithmetic: overflow on multiply or add, sign flips, rounding up.
_EDGES_SIGNED = (0, 1, -1, 2, 7, 31, 32, 33, 255, 256, 4096, INT32_MAX, INT32_MIN, INT32_MAX + 1,
                 INT64_MAX, INT64_MIN, INT64_MAX - 31, INT64_MIN + 1, 1 << 31, 1 << 32, 1 << 40,
                 1 << 62, -(1 << 62), (1 << 32) + 1, 3037000500)   # 3037000500**2 > INT64_MAX
_EDGES_UNSIGNED = (0, 1, 2, 31, 32, 33, 64, 4095, 4096, 65536, UINT32_MAX, UINT32_MAX + 1,
                   UINT64_MAX, UINT64_MAX - 31, UINT64_MAX - 63, 1 << 63, (1 << 63) - 1, 1 << 48)


def int64(rng: random.Random) -> int:
    """A signed 64-bit value: an edge, a small number, or anything."""
    r = rng.random()
    if r < 0.5:
        return rng.choice(_EDGES_SIGNED)
    if r < 0.8:
        return rng.randint(-64, 64)
    return rng.randint(INT64_MIN, INT64_MAX)


def int32(rng: random.Random) -> int:
    v = int64(rng)
    return ((v - INT32_MIN) % (1 << 32)) + INT32_MIN   # wrapped into range, as C would truncate


def uint64(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.5:
        return rng.choice(_EDGES_UNSIGNED)
    if r < 0.8:
        return rng.randint(0, 128)
    return rng.randint(0, UINT64_MAX)


def uint32(rng: random.Random) -> int:
    return uint64(rng) & UINT32_MAX


def size(rng: random.Random, typical: int = 64) -> int:
    """A byte count: mostly plausible (around ``typical``), sometimes an edge or huge."""
    r = rng.random()
    if r < 0.6:
        return rng.randint(0, max(typical * 2, 1))
    return uint64(rng)


def enum(rng: random.Random, valid: range | tuple) -> int:
    """A C enum argument: usually a valid member, sometimes just outside or anything."""
    r = rng.random()
    valid = list(valid)
    if r < 0.6:
        return rng.choice(valid)
    if r < 0.8:
        return rng.choice((min(valid) - 1, max(valid) + 1, -1, 100, 255, 256))
    return int32(rng)


def double(rng: random.Random, typical: tuple = (0.0, 1.0)) -> float:
    r = rng.random()
    if r < 0.5:
        return rng.uniform(*typical)
    return rng.choice((0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, 1e-45,
                       3.4028235e38, 3.5e38, -1.0, 65504.0, 65520.0, 2.0 ** 64, 1e-6))


def dims(rng: random.Random, max_rank: int = 4) -> list[int]:
    """A shape: usually small and valid, sometimes negative, zero, huge or overflowing."""
    rank = rng.choice((0, 1, 1, 2, 2, 3, max_rank, 8, 25, 26, 32))
    r = rng.random()
    if r < 0.6:
        return [rng.randint(0, 5) for _ in range(rank)]
    return [rng.choice((rng.randint(0, 5), int64(rng), -1, 0, 1 << 31, 1 << 62, INT64_MAX)) for _ in range(rank)]


def wild_address(rng: random.Random) -> int:
    """An integer that is not any object's address: the value a random or corrupted handle holds."""
    return rng.choice((1, 8, 0x10, 0x1000, 0xDEADBEEF, 0xDEADBEEF00, 0x7FFFFFFFFFF8, 0xFFFFFFFFFFFFFFF8,
                       UINT64_MAX, 1 << 47, rng.randrange(0x1000, 1 << 47, 8), rng.randrange(1, 1 << 64)))
