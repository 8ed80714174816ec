"""aclnnGroupedDynamicMxQuantV2 on the CPU stub: kernel time against the NumPy reference and against
a plain memory copy of the same traffic, in one run.

    PYACLNN_STUB_LIBDIR=build/<dir>/lib python benchmarks/bench_grouped_mx_quant.py \
        [--rows 16384 --cols 7168 --groups 8]

The call: x bfloat16 [rows, cols] (standard normal), `groups` groups of uneven sizes, quantised to
FLOAT8_E4M3FN and to FLOAT4_E2M1 (scaleAlg 0, roundMode rint). Reported as JSON, per target:

* kernel_s: the kernel alone (stream events around the launch of a repeatable executor; best of
  --repeat), with the work on one thread and with the automatic thread count
  (PYACLNN_STUB_KERNEL_THREADS unset: one thread per online CPU, at most 16);
* kernel_cpu_s: CPU time the automatic run used (all threads; process time around the launch);
* reference_s: tests/reference's NumPy implementation on the same data, and
  speedup_vs_reference = reference_s / kernel_s;
* copy_s: memmove of (bytes read + bytes written) / 2 bytes, i.e. the same traffic, on one core:
  the best of --repeat runs before and --repeat runs after the kernel's (other load on the machine
  slows a copy as much as the kernel; the fastest copy seen keeps the ratio below from flattering);
  bandwidth_per_core_vs_copy = (traffic / kernel_s / threads) / (traffic / copy_s), for one thread
  and for the automatic count (there also per CPU-second: traffic / kernel_cpu_s);
* bit_identical: the stub's y and written mxscale bytes equal the reference's.

Not a test: numbers depend on the machine, on other load (the CPU-time figure is the least
sensitive to it) and on the build (configure the stub with -DCMAKE_BUILD_TYPE=Release; the kernel's
inner loops are compiled at -O3 in every build type). Goals: speedup >= 10,
bandwidth_per_core_vs_copy >= 0.4.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import sys
import time
from pathlib import Path

# numpy's BLAS threads spin after use and would steal the cores the kernel runs on
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("PYACLNN_BACKEND", "stub")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from _common import copy_time  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

from pyaclnn import capi  # noqa: E402
from pyaclnn._switches import reread as reread_switches  # noqa: E402
from pyaclnn.errors import check  # noqa: E402

THREADS_ENV = "PYACLNN_STUB_KERNEL_THREADS"
TARGETS = {"float8_e4m3fn": capi.ACL_FLOAT8_E4M3FN, "float4_e2m1": capi.ACL_FLOAT4_E2M1}


class Device:
    """aclrtMalloc'ed buffers and aclTensors over them; frees everything on close."""

    def __init__(self):
        self.buffers, self.tensors = [], []

    def buffer(self, nbytes: int, host: np.ndarray | None = None) -> int:
        ptr = ctypes.c_void_p()
        check(capi.aclrtMalloc(ctypes.byref(ptr), max(nbytes, 1), capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
        self.buffers.append(ptr.value)
        if host is None:   # touch every page now, so first-use page faults do not count as kernel time
            check(capi.aclrtMemset(ptr, nbytes, 0x5A, nbytes), "aclrtMemset")
        else:
            check(capi.aclrtMemcpy(ptr, nbytes, host.ctypes.data, nbytes, capi.ACL_MEMCPY_HOST_TO_DEVICE),
                  "aclrtMemcpy")
        return ptr.value

    def tensor(self, shape, acl_dtype: int, ptr: int) -> int:
        strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
        dims = (ctypes.c_int64 * len(shape))(*shape)
        handle = capi.aclCreateTensor(dims, len(shape), acl_dtype, (ctypes.c_int64 * len(shape))(*strides), 0,
                                      capi.ACL_FORMAT_ND, dims, len(shape), ptr)
        self.tensors.append(handle)
        return handle

    def read(self, ptr: int, nbytes: int) -> np.ndarray:
        out = np.empty(nbytes, np.uint8)
        check(capi.aclrtMemcpy(out.ctypes.data, nbytes, ptr, nbytes, capi.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
        return out

    def close(self):
        for t in self.tensors:
            capi.aclDestroyTensor(t)
        for ptr in self.buffers:
            capi.aclrtFree(ptr)


def group_ends(m: int, groups: int) -> np.ndarray:
    """Uneven group sizes (weights 1..3, fixed seed) summing to m; ends not multiples of 64."""
    weights = np.random.default_rng(1).integers(1, 4, groups).astype(float)
    ends = np.round(np.cumsum(weights) / weights.sum() * m).astype(np.int64)
    ends[-1] = m
    return ends.astype(np.int32)


def kernel_time(handles: list, dst_acl: int, threads: int | None, repeat: int, stream) -> tuple[float, float]:
    """Best elapsed time of the kernel (stream events around the launch) and the process CPU time
    of that run."""
    if threads is None:
        os.environ.pop(THREADS_ENV, None)
    else:
        os.environ[THREADS_ENV] = str(threads)
    reread_switches()                              # the stub reads its switches once: again now
    x, gi, y, mx = handles
    ws, executor = ctypes.c_uint64(), ctypes.c_void_p()
    check(capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(x, gi, b"rint", dst_acl, 32, 0, 0.0, y, mx,
                                                            ctypes.byref(ws), ctypes.byref(executor)),
          "aclnnGroupedDynamicMxQuantV2GetWorkspaceSize")
    check(capi.aclSetAclOpExecutorRepeatable(executor), "aclSetAclOpExecutorRepeatable")
    workspace = ctypes.c_void_p()
    check(capi.aclrtMalloc(ctypes.byref(workspace), max(ws.value, 1), capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    start, stop = ctypes.c_void_p(), ctypes.c_void_p()
    check(capi.aclrtCreateEvent(ctypes.byref(start)), "aclrtCreateEvent")
    check(capi.aclrtCreateEvent(ctypes.byref(stop)), "aclrtCreateEvent")
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        cpu0 = time.process_time()
        check(capi.aclrtRecordEvent(start, stream), "aclrtRecordEvent")
        check(capi.aclnnGroupedDynamicMxQuantV2(workspace, ws.value, executor, stream), "aclnnGroupedDynamicMxQuantV2")
        check(capi.aclrtRecordEvent(stop, stream), "aclrtRecordEvent")
        check(capi.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")
        best_cpu = min(best_cpu, time.process_time() - cpu0)
        ms = ctypes.c_float()
        check(capi.aclrtEventElapsedTime(ctypes.byref(ms), start, stop), "aclrtEventElapsedTime")
        best = min(best, ms.value / 1e3)
    capi.aclrtDestroyEvent(start)
    capi.aclrtDestroyEvent(stop)
    capi.aclDestroyAclOpExecutor(executor)
    capi.aclrtFree(workspace)
    os.environ.pop(THREADS_ENV, None)
    reread_switches()
    return best, best_cpu


def default_threads(m: int, n: int) -> int:
    """What the kernel picks with PYACLNN_STUB_KERNEL_THREADS unset (gmq_parallel.c)."""
    return max(1, min(os.cpu_count() or 1, 16, m * n // (1 << 18)))


def bench_target(dst: str, x: np.ndarray, ends: np.ndarray, stream, repeat: int, run_reference: bool) -> dict:
    from reference.grouped_dynamic_mx_quant import grouped_dynamic_mx_quant, mxscale_row_count
    m, n = x.shape
    dst_acl = TARGETS[dst]
    fp4 = dst.startswith("float4")
    rows = mxscale_row_count(m, ends.size)
    y_bytes, mx_bytes = (m * n // 2 if fp4 else m * n), rows * n * 2
    traffic = x.nbytes + ends.nbytes + y_bytes + mx_bytes
    t_copy_before = copy_time(traffic // 2, repeat)
    dev = Device()
    try:
        ptrs = [dev.buffer(x.nbytes, x.view(np.uint8).reshape(-1)), dev.buffer(ends.nbytes, ends),
                dev.buffer(y_bytes), dev.buffer(mx_bytes)]
        handles = [dev.tensor([m, n], capi.ACL_BF16, ptrs[0]), dev.tensor([ends.size], capi.ACL_INT32, ptrs[1]),
                   dev.tensor([m, n], dst_acl, ptrs[2]), dev.tensor([rows, n, 2], capi.ACL_FLOAT8_E8M0, ptrs[3])]
        kernel_1, _ = kernel_time(handles, dst_acl, 1, repeat, stream)
        threads = default_threads(m, n)
        kernel_auto, cpu_auto = kernel_time(handles, dst_acl, None, repeat, stream)
        got_y, got_mx = dev.read(ptrs[2], y_bytes), dev.read(ptrs[3], mx_bytes)
    finally:
        dev.close()

    t_copy = min(t_copy_before, copy_time(traffic // 2, repeat))
    copy_bw = traffic / t_copy
    result = {
        "target": dst, "threads_auto": threads,
        "bytes_read": x.nbytes + ends.nbytes, "bytes_written": y_bytes + mx_bytes,
        "kernel_s": {"1_thread": kernel_1, "auto": kernel_auto}, "kernel_cpu_s_auto": cpu_auto,
        "copy_s": t_copy, "copy_GBps": copy_bw / 1e9,
        "kernel_GBps": {"1_thread": traffic / kernel_1 / 1e9, "auto": traffic / kernel_auto / 1e9},
        "bandwidth_per_core_vs_copy": {
            "1_thread": traffic / kernel_1 / copy_bw,
            "auto": traffic / kernel_auto / threads / copy_bw,
            "auto_per_cpu_second": traffic / cpu_auto / copy_bw,
        },
    }
    if run_reference:
        t0 = time.perf_counter()
        y, mx, written = grouped_dynamic_mx_quant(x, ends, "rint", dst, 32, 0, 0.0)
        reference_s = time.perf_counter() - t0
        result["reference_s"] = reference_s
        result["speedup_vs_reference"] = {"1_thread": reference_s / kernel_1, "auto": reference_s / kernel_auto}
        result["bit_identical"] = bool(np.array_equal(got_y, y.reshape(-1))
                                       and np.array_equal(got_mx[written.reshape(-1)], mx[written]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--cols", type=int, default=7168)
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-reference", action="store_true", help="skip the (slow) NumPy reference")
    parser.add_argument("--out", help="write the JSON here instead of stdout")
    args = parser.parse_args()
    m, n = args.rows, args.cols

    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    ends = group_ends(m, args.groups)

    status = capi.aclInit(None)
    if status not in (0, capi.ACL_ERROR_REPEAT_INITIALIZE):
        check(status, "aclInit")
    check(capi.aclrtSetDevice(0), "aclrtSetDevice")
    stream = ctypes.c_void_p()
    check(capi.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")
    results = [bench_target(dst, x, ends, stream, args.repeat, not args.no_reference) for dst in TARGETS]
    capi.aclrtDestroyStream(stream)
    capi.aclrtResetDevice(0)
    capi.aclFinalize()

    report = {
        "benchmark": "aclnnGroupedDynamicMxQuantV2, bfloat16 -> FP8 E4M3FN / FP4 E2M1, scaleAlg 0, rint",
        "shape": [m, n], "group_index": ends.tolist(), "cpus": os.cpu_count(),
        "library": os.environ.get("PYACLNN_STUB_LIBDIR", "(bundled)"), "machine": platform.machine(),
        "results": results,
        "goals": {"speedup_vs_reference": 10, "bandwidth_per_core_vs_copy": 0.4},
    }
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
