"""Shared by the kernel benchmarks: the memory-copy baseline their bandwidth ratios are measured against."""
from __future__ import annotations

import ctypes
import time

import numpy as np


def copy_time(nbytes: int, repeat: int) -> float:
    """Best single-thread time to memmove ``nbytes`` (fresh, page-touched buffers), over ``repeat`` runs."""
    src = np.ones(nbytes, np.uint8)
    dst = np.zeros(nbytes, np.uint8)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        ctypes.memmove(dst.ctypes.data, src.ctypes.data, nbytes)
        best = min(best, time.perf_counter() - t0)
    return best
