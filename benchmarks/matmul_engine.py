"""The emulator's matmul engines against torch CPU: GFLOP/s of a square [n, n] @ [n, n] product, in one run.

    python benchmarks/matmul_engine.py [--repeats 3] [--threads N] [--sizes 256 512 1024 2048]

For each size and dtype (float32 at every size; bfloat16 up to 1024): ``aclnnMatmul`` on pyaclnn device
tensors (launch + synchronize; the emulator's device memory is host memory, so no copy is timed) with the
default engine (OpenBLAS, when the build found scipy-openblas32) and with ``PYACLNN_STUB_MATMUL=portable``
(the hand-written loop), and ``torch.matmul`` on CPU tensors of the same dtype with the same thread count
(``torch.set_num_threads``; the emulator's kernel pool gets it through PYACLNN_STUB_KERNEL_THREADS). Ratios
are over torch's figure; the goals (``goals``): fp32 at 1024 >= 0.6x torch, bf16 >= 0.4x.

Each figure is the best of ``--repeats`` blocks of calls (the least disturbed: the machine may be shared), the
three contenders of a row taking turns within every repeat;
``machine`` reports the CPUs and the load average at the start. Prints JSON; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402

import pyaclnn  # noqa: E402
from pyaclnn import ops  # noqa: E402
from pyaclnn._switches import switches  # noqa: E402


def timed_block(call, min_time: float) -> float:
    """Mean seconds per call over a block of calls lasting at least ``min_time``."""
    n, t0 = 0, time.perf_counter()
    while True:
        call()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= min_time:
            return dt / n


def best_interleaved(calls: dict, repeats: int, min_time: float = 0.2) -> dict:
    """Best mean seconds per call of each callable; the callables take turns within every repeat, so a
    disturbance of the shared machine hits them alike rather than one figure alone."""
    best = {name: float("inf") for name in calls}
    for name, call in calls.items():
        call()                                # warm up (loads OpenBLAS, grows the pool)
    for _ in range(repeats):
        for name, call in calls.items():
            best[name] = min(best[name], timed_block(call, min_time))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    ap.add_argument("--bf16-max", type=int, default=1024, help="largest bf16 size")
    args = ap.parse_args()
    import ml_dtypes
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")   # torch CPU only: torch_npu is not needed
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    stream = pyaclnn.current_stream()
    from pyaclnn.__main__ import _matmul_engine
    from pyaclnn._loader import backend
    engine = _matmul_engine(backend())
    rows = []
    for dtype in ("float32", "bfloat16"):
        for n in args.sizes:
            if dtype == "bfloat16" and n > args.bf16_max:
                continue
            npdt = np.float32 if dtype == "float32" else ml_dtypes.bfloat16
            a = rng.standard_normal((n, n), dtype=np.float32).astype(npdt)
            b = rng.standard_normal((n, n), dtype=np.float32).astype(npdt)
            da, db = pyaclnn.from_numpy(a), pyaclnn.from_numpy(b)
            flops = 2.0 * n ** 3
            row = {"dtype": dtype, "n": n}

            def engine_call(value):
                def call():
                    with switches({"PYACLNN_STUB_MATMUL": value, "PYACLNN_STUB_KERNEL_THREADS": args.threads}):
                        ops.matmul(da, db)
                        stream.synchronize()
                return call

            calls = {"blas": engine_call(None), "portable": engine_call("portable")}
            if torch is not None:
                ta = torch.from_numpy(a.astype(np.float32)).to(getattr(torch, dtype))
                tb = torch.from_numpy(b.astype(np.float32)).to(getattr(torch, dtype))
                calls["torch"] = lambda: torch.matmul(ta, tb)
            best = best_interleaved(calls, args.repeats)
            for name, sec in best.items():
                row[f"{name}_gflops"] = round(flops / sec / 1e9, 2)
            for name in ("blas", "portable"):
                if "torch" in best:
                    row[f"{name}_over_torch"] = round(row[f"{name}_gflops"] / row["torch_gflops"], 2)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    goals = {}
    for r in rows:
        if r["n"] == 1024 and "blas_over_torch" in r:
            target = 0.6 if r["dtype"] == "float32" else 0.4
            goals[f"{r['dtype']}_1024_vs_torch"] = {"value": r["blas_over_torch"], "goal": f">= {target}",
                                                     "met": r["blas_over_torch"] >= target}
    print(json.dumps({"machine": {"cpus": os.cpu_count(), "loadavg": os.getloadavg(), "threads": args.threads},
                      "matmul_engine": engine, "torch": None if torch is None else torch.__version__,
                      "rows": rows, "goals": goals}, indent=1))


if __name__ == "__main__":
    main()
