"""The emulator's elementwise, softmax and norm engines: microseconds per call on device tensors.

    python benchmarks/engines.py [--repeats 5] [--sizes 4096 1048576] [--libdir DIR] [--cases add_f16 ...]

Each case is one operator launched with pyaclnn's generic call on device tensors and synchronised, timed in a
child process per kernel-thread count (``PYACLNN_STUB_KERNEL_THREADS`` 1 and 2): the best of ``repeats``
means. ``--libdir`` runs the same cases on other emulator libraries (``PYACLNN_STUB_LIBDIR``: e.g. a build of
an older commit, for before/after figures). Prints JSON: per case and size, us per call with 1 and 2 threads,
their ratio, and elements per ns on one thread. The tests never assert on it.
"""
from __future__ import annotations

import argparse
import json
import os
import time

from _common import print_result, run_result_child  # (benchmarks/ is on sys.path when run as a script)

CASES = ("add_f32", "add_f16", "mul_bf16", "add_i32", "add_i64", "addcdiv_f32", "sqrt_f32", "cast_f32_f16",
         "copy_f32", "one_bool", "softmax_f32", "layer_norm_f32", "layer_norm_bwd_f32", "rms_norm_f32")
ROW = 1024   # the last dim of the softmax / norm cases


def build(case: str, n: int):
    """A callable running the case once on n elements (launch only)."""
    import ml_dtypes
    import numpy as np

    import pyaclnn
    from pyaclnn import ops

    rng = np.random.default_rng(0)
    S = ops.Scalar

    def dev(dtype, shape=(n,), low=None):
        x = rng.standard_normal(shape).astype(np.float32)
        if low is not None:
            x = np.abs(x) + low
        if dtype == "bfloat16":
            return pyaclnn.from_numpy(x.astype(ml_dtypes.bfloat16))
        if dtype in ("int32", "int64"):
            return pyaclnn.from_numpy((x * 1000).astype(dtype))
        if dtype == "bool":
            return pyaclnn.from_numpy(x > 0)
        return pyaclnn.from_numpy(x.astype(dtype))

    one = S(1, "int64")
    rows = (max(1, n // ROW), ROW)
    if case.startswith("add_") or case == "mul_bf16":
        dt = {"add_f32": "float32", "add_f16": "float16", "mul_bf16": "bfloat16", "add_i32": "int32",
              "add_i64": "int64"}[case]
        a, b, o = dev(dt), dev(dt), dev(dt)
        return (lambda: ops.Mul(a, b, o)) if case == "mul_bf16" else (lambda: ops.Add(a, b, one, o))
    if case == "addcdiv_f32":
        a, b, c, o = dev("float32"), dev("float32"), dev("float32", low=0.5), dev("float32")
        return lambda: ops.Addcdiv(a, b, c, S(0.5, "float32"), o)
    if case == "sqrt_f32":
        a, o = dev("float32", low=0.0), dev("float32")
        return lambda: ops.Sqrt(a, o)
    if case == "cast_f32_f16":
        a, o = dev("float32"), dev("float16")
        return lambda: ops.Cast(a, "float16", o)
    if case == "copy_f32":
        a, o = dev("float32"), dev("float32")
        return lambda: ops.InplaceCopy(o, a)
    if case == "one_bool":
        o = dev("bool")
        return lambda: ops.InplaceOne(o)
    if case == "softmax_f32":
        a, o = dev("float32", rows), dev("float32", rows)
        return lambda: ops.Softmax(a, -1, o)
    if case in ("layer_norm_f32", "layer_norm_bwd_f32"):
        x, w, b, o = dev("float32", rows), dev("float32", (ROW,)), dev("float32", (ROW,)), dev("float32", rows)
        mean, rstd = dev("float32", (rows[0], 1)), dev("float32", (rows[0], 1))
        if case == "layer_norm_f32":
            return lambda: ops.LayerNorm(x, [ROW], w, b, 1e-5, o, mean, rstd)
        ops.LayerNorm(x, [ROW], w, b, 1e-5, o, mean, rstd)
        g, dx, dw, db = dev("float32", rows), dev("float32", rows), dev("float32", (ROW,)), dev("float32", (ROW,))
        return lambda: ops.LayerNormBackward(g, x, [ROW], mean, rstd, w, b, [True, True, True], dx, dw, db)
    if case == "rms_norm_f32":
        x, g, o, r = dev("float32", rows), dev("float32", (ROW,)), dev("float32", rows), dev("float32", (rows[0], 1))
        return lambda: ops.RmsNorm(x, g, 1e-6, o, r)
    raise ValueError(case)


def child(cases: list[str], sizes: list[int], repeats: int) -> None:
    import pyaclnn

    stream = pyaclnn.current_stream()
    out = {}
    for case in cases:
        for n in sizes:
            run = build(case, n)
            calls = max(3, min(2000, 2_000_000 // n))
            for _ in range(max(2, calls // 10)):   # warm up
                run()
            stream.synchronize()
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter_ns()
                for _ in range(calls):
                    run()
                stream.synchronize()
                best = min(best, (time.perf_counter_ns() - t0) / calls)
            out[f"{case}/{n}"] = round(best / 1e3, 2)
    print_result(out)


def run_child(cases, sizes, repeats, threads: int, libdir: str | None) -> dict:
    env = dict(os.environ, PYACLNN_STUB_KERNEL_THREADS=str(threads))
    if libdir:
        env["PYACLNN_STUB_LIBDIR"] = libdir
    return run_result_child([__file__, "--child", "--repeats", str(repeats), "--cases", *cases,
                             "--sizes", *map(str, sizes)], env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 1 << 20])
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    ap.add_argument("--libdir", help="emulator libraries to time instead of the installed ones")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.cases, args.sizes, args.repeats)
        return
    res = {"machine": {"cpus": os.cpu_count(), "loadavg_start": os.getloadavg(), "libdir": args.libdir}}
    t1 = run_child(args.cases, args.sizes, args.repeats, 1, args.libdir)
    t2 = run_child(args.cases, args.sizes, args.repeats, 2, args.libdir)
    res["us_per_call"] = {k: {"threads_1": t1[k], "threads_2": t2[k], "speedup_2_threads": round(t1[k] / t2[k], 2),
                              "elements_per_ns_1": round(int(k.split("/")[1]) / (t1[k] * 1e3), 3)} for k in t1}
    res["machine"]["loadavg_end"] = os.getloadavg()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
