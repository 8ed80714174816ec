"""Shared by the benchmarks: the memory-copy baseline the kernel benchmarks' bandwidth ratios are measured against,
and the one-line protocol of the benchmarks that time in a child process (torch_npu, another library)."""
from __future__ import annotations

import ctypes
import json
import subprocess
import sys
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


def print_result(data) -> None:
    """A child's result: one line on stdout that run_result_child finds among whatever else the child prints."""
    print("RESULT " + json.dumps(data))


def run_result_child(args: list[str], env: dict, what: str = "child"):
    """Runs ``python <args>`` with ``env`` and returns the data its print_result line carries."""
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"{what} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return json.loads(line[len("RESULT "):])
