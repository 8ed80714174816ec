"""Throughput of the stub's float32 -> narrow conversions against ml_dtypes' astype.

    PYACLNN_STUB_LIBDIR=build/<dir>/lib python benchmarks/bench_conversions.py [--n 4194304]

For each target: the C conversion (libopapi's pyaclnn_stub_num_f32_to_*, called once over the
whole array) and, where ml_dtypes / numpy has the type, ``x.astype(dtype)`` on the same float32
data. Reports GB/s of float32 input read (best of --repeat runs) and speedup = astype time / C
time, as JSON on stdout (or --out FILE). Not a test: numbers depend on the machine and on the
build type (configure the stub with -DCMAKE_BUILD_TYPE=Release for meaningful C numbers).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import sys
import time

import ml_dtypes
import numpy as np

RINT, ROUND, SAT, NAN_TO_ZERO = 0, 1, 0x10, 0x20

# target: (C export name, C mode, output dtype, ml_dtypes/numpy dtype or None, data scale)
TARGETS = {
    "float16": ("fp16", RINT, np.uint16, np.float16, 1000.0),
    "bfloat16": ("bf16", RINT, np.uint16, ml_dtypes.bfloat16, 1000.0),
    "float8_e4m3fn": ("fp8_e4m3fn", RINT, np.uint8, ml_dtypes.float8_e4m3fn, 100.0),
    "float8_e4m3fn_sat": ("fp8_e4m3fn", RINT | SAT | NAN_TO_ZERO, np.uint8, None, 100.0),
    "float8_e5m2": ("fp8_e5m2", RINT, np.uint8, ml_dtypes.float8_e5m2, 1000.0),
    "float8_e8m0": ("e8m0", ROUND, np.uint8, ml_dtypes.float8_e8m0fnu, 1000.0),
    "float4_e2m1": ("fp4_e2m1", RINT, np.uint8, ml_dtypes.float4_e2m1fn, 3.0),
    "float4_e1m2": ("fp4_e1m2", RINT, np.uint8, None, 1.0),
    "hifloat8": ("hif8", ROUND | SAT, np.uint8, None, 1000.0),
    "int8": ("int8", RINT | SAT, np.int8, None, 50.0),
    "int4": ("int4", RINT | SAT, np.int8, ml_dtypes.int4, 4.0),
    "int32": ("int32", RINT | SAT, np.int32, None, 1e6),
}


def load_stub() -> ctypes.CDLL:
    libdir = os.environ.get("PYACLNN_STUB_LIBDIR")
    if not libdir:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        from pyaclnn import _loader
        libdir = _loader.stub_library_dir()
    if not libdir:
        sys.exit("no stub library: set PYACLNN_STUB_LIBDIR")
    return ctypes.CDLL(os.path.join(libdir, "libopapi.so"))


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64 * 1024 * 1024, help="elements (default 64 Mi)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--targets", nargs="*", default=list(TARGETS), choices=list(TARGETS))
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    args = ap.parse_args()

    lib = load_stub()
    base = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32)
    results = []
    for target in args.targets:
        c_name, mode, out_dtype, ml_dtype, scale = TARGETS[target]
        x = base * np.float32(scale)
        out = np.empty(args.n, out_dtype)
        fn = getattr(lib, f"pyaclnn_stub_num_f32_to_{c_name}")
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        fn.restype = ctypes.c_int
        px, po = x.ctypes.data, out.ctypes.data
        assert fn(px, po, args.n, mode) == 0
        c_s = best_of(lambda: fn(px, po, args.n, mode), args.repeat)
        row = {"target": target, "c_mode": mode, "c_seconds": c_s,
               "c_gb_per_s": x.nbytes / c_s / 1e9}
        if ml_dtype is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                ml_s = best_of(lambda: x.astype(ml_dtype), args.repeat)
            row.update(astype_dtype=np.dtype(ml_dtype).name, astype_seconds=ml_s,
                       astype_gb_per_s=x.nbytes / ml_s / 1e9, speedup_vs_astype=ml_s / c_s)
        results.append(row)
        del x, out
        print(f"{target:>18}: C {row['c_gb_per_s']:6.2f} GB/s"
              + (f", astype {row['astype_gb_per_s']:6.2f} GB/s, x{row['speedup_vs_astype']:.2f}"
                 if "astype_seconds" in row else ""), file=sys.stderr)

    report = {"n": args.n, "repeat": args.repeat, "input": "float32 standard normal * scale",
              "machine": platform.machine(), "python": platform.python_version(),
              "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "results": results}
    text = json.dumps(report, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
