"""aclnnAddRmsNormDynamicQuantV2 on the CPU stub: kernel time against the NumPy reference and against
a plain memory copy of the same traffic, in one run.

    PYACLNN_STUB_LIBDIR=build/<dir>/lib python benchmarks/bench_add_rms_norm.py [--rows 4096 --cols 8192]

The call: x1, x2 bfloat16 [rows, cols], gamma and two smooth scales [cols], int8 y1 and y2 (Ascend 950
perf template by default; PYACLNN_STUB_SOC picks the chip). Reported as JSON:

* kernel_s: the kernel alone (stream events around the launch of a repeatable executor; best of
  --repeat), with the rows on one host thread and with the automatic thread count;
* threads: the host threads each run used (the automatic count is the kernel's rule, repeated in
  auto_threads below), cores_used: those threads' share of the cores this process may run on;
* reference_s: tests/reference's NumPy implementation on the same data (best of --ref-repeat), and
  speedup = reference_s / kernel_s;
* copy_s: memmove of (bytes read + bytes written) / 2 bytes, i.e. the same traffic, on one core
  (best of --repeat before the kernel runs and of --repeat after: the faster the copy, the
  stricter the comparison);
  bandwidth_per_core_vs_copy = (traffic / kernel_s / cores_used) / (traffic / copy_s): the
  kernel's bytes per second per core it kept busy, against one core copying;
* bit_identical: the stub's y1, y2, xOut, scale1, scale2 equal the reference's.

Not a test: numbers depend on the machine and on the build (configure the stub with
-DCMAKE_BUILD_TYPE=Release). Goals: speedup >= 10, bandwidth_per_core_vs_copy >= 0.4.
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


class Device:
    """aclrtMalloc'ed copies of host arrays and aclTensors over them; frees everything on close."""

    def __init__(self):
        self.buffers, self.tensors = [], []

    def tensor(self, array: np.ndarray, acl_dtype: int) -> int:
        ptr = ctypes.c_void_p()
        check(capi.aclrtMalloc(ctypes.byref(ptr), max(array.nbytes, 1), capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
        self.buffers.append((ptr.value, array))
        check(capi.aclrtMemcpy(ptr, array.nbytes, array.ctypes.data, array.nbytes, capi.ACL_MEMCPY_HOST_TO_DEVICE),
              "aclrtMemcpy")
        shape = array.shape
        strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
        dims = (ctypes.c_int64 * len(shape))(*shape)
        handle = capi.aclCreateTensor(dims, len(shape), acl_dtype, (ctypes.c_int64 * len(shape))(*strides), 0,
                                      capi.ACL_FORMAT_ND, dims, len(shape), ptr)
        self.tensors.append(handle)
        return handle

    def read(self, index: int) -> np.ndarray:
        ptr, like = self.buffers[index]
        out = np.empty_like(like)
        check(capi.aclrtMemcpy(out.ctypes.data, out.nbytes, ptr, out.nbytes, capi.ACL_MEMCPY_DEVICE_TO_HOST),
              "aclrtMemcpy")
        return out

    def close(self):
        for t in self.tensors:
            capi.aclDestroyTensor(t)
        for ptr, _ in self.buffers:
            capi.aclrtFree(ptr)


def kernel_time(dev: Device, handles: list, threads: int, repeat: int, stream) -> float:
    """Best elapsed time of the kernel (events recorded on the stream around the launch)."""
    os.environ["PYACLNN_STUB_ARNQ_THREADS"] = str(threads)
    reread_switches()                                            # the stub reads its switches once
    ws, executor = ctypes.c_uint64(), ctypes.c_void_p()
    check(capi.aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(*handles, ctypes.byref(ws), ctypes.byref(executor)),
          "aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize")
    check(capi.aclSetAclOpExecutorRepeatable(executor), "aclSetAclOpExecutorRepeatable")
    workspace = ctypes.c_void_p()
    check(capi.aclrtMalloc(ctypes.byref(workspace), ws.value, capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    start, stop = ctypes.c_void_p(), ctypes.c_void_p()
    check(capi.aclrtCreateEvent(ctypes.byref(start)), "aclrtCreateEvent")
    check(capi.aclrtCreateEvent(ctypes.byref(stop)), "aclrtCreateEvent")
    best = float("inf")
    for _ in range(repeat):
        check(capi.aclrtRecordEvent(start, stream), "aclrtRecordEvent")
        check(capi.aclnnAddRmsNormDynamicQuantV2(workspace, ws.value, executor, stream), "aclnnAddRmsNormDynamicQuantV2")
        check(capi.aclrtRecordEvent(stop, stream), "aclrtRecordEvent")
        check(capi.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")
        ms = ctypes.c_float()
        check(capi.aclrtEventElapsedTime(ctypes.byref(ms), start, stop), "aclrtEventElapsedTime")
        best = min(best, ms.value / 1e3)
    capi.aclrtDestroyEvent(start)
    capi.aclrtDestroyEvent(stop)
    capi.aclDestroyAclOpExecutor(executor)
    capi.aclrtFree(workspace)
    return best


def auto_threads(m: int, n: int) -> int:
    """The thread count PYACLNN_STUB_ARNQ_THREADS=0 gives without PYACLNN_STUB_KERNEL_THREADS
    (arnq_kernel.c thread_count with op_parallel.c op_thread_count, dense outputs): the online CPUs
    (at most 16), at most one per 2**18 elements and at most m, at least 1."""
    cpus = os.sysconf("SC_NPROCESSORS_ONLN") if hasattr(os, "sysconf") else (os.cpu_count() or 1)
    return max(1, min(cpus, 16, m * n // 2**18, m))


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=8192)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--ref-repeat", type=int, default=1)
    parser.add_argument("--out", help="write the JSON here instead of stdout")
    args = parser.parse_args()
    m, n = args.rows, args.cols

    rng = np.random.default_rng(0)
    bf16 = ml_dtypes.bfloat16
    x1 = rng.standard_normal((m, n), dtype=np.float32).astype(bf16)
    x2 = rng.standard_normal((m, n), dtype=np.float32).astype(bf16)
    gamma, s1, s2 = (rng.uniform(lo, hi, n).astype(bf16) for lo, hi in ((0.5, 1.5), (0.25, 2), (0.25, 2)))

    status = capi.aclInit(None)
    if status not in (0, capi.ACL_ERROR_REPEAT_INITIALIZE):
        check(status, "aclInit")
    check(capi.aclrtSetDevice(0), "aclrtSetDevice")
    stream = ctypes.c_void_p()
    check(capi.aclrtCreateStream(ctypes.byref(stream)), "aclrtCreateStream")
    soc = capi.aclrtGetSocName().decode()
    dev = Device()
    ins = [dev.tensor(a, capi.ACL_BF16) for a in (x1, x2, gamma, s1, s2)]
    outs = [dev.tensor(np.zeros((m, n), np.int8), capi.ACL_INT8), dev.tensor(np.zeros((m, n), np.int8), capi.ACL_INT8),
            dev.tensor(np.zeros((m, n), bf16), capi.ACL_BF16), dev.tensor(np.zeros(m, np.float32), capi.ACL_FLOAT),
            dev.tensor(np.zeros(m, np.float32), capi.ACL_FLOAT)]
    handles = ins + [None, 1e-6, None] + outs          # no beta, no outputMask

    read = 2 * m * n * 2 + 3 * n * 2
    written = m * n * 2 + 2 * m * n + 2 * m * 4
    traffic = read + written
    t_copy_before = copy_time(traffic // 2, args.repeat)

    cpus = os.cpu_count() or 1
    threads_auto = auto_threads(m, n)
    cores_auto = min(threads_auto, usable_cores())
    kernel_1 = kernel_time(dev, handles, 1, args.repeat, stream)
    kernel_auto = kernel_time(dev, handles, 0, args.repeat, stream)
    got = [dev.read(i) for i in range(5, 10)]

    from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant, normalise_soc
    best_ref, ref = float("inf"), None
    for _ in range(args.ref_repeat):
        t0 = time.perf_counter()
        ref = add_rms_norm_dynamic_quant(x1, x2, gamma, s1, s2, None, epsilon=1e-6, y_dtype="int8",
                                         soc=normalise_soc(soc), version=2)
        best_ref = min(best_ref, time.perf_counter() - t0)
    identical = all(np.array_equal(g.view(np.uint8), np.ascontiguousarray(ref[k]).view(np.uint8))
                    for g, k in zip(got, ("y1", "y2", "x_out", "scale1", "scale2")))

    t_copy = min(t_copy_before, copy_time(traffic // 2, args.repeat))
    copy_bw = traffic / t_copy
    result = {
        "benchmark": "aclnnAddRmsNormDynamicQuantV2, two smooth scales, bfloat16 -> int8",
        "shape": [m, n], "soc": soc, "template": ref["template"], "cpus": cpus,
        "library": os.environ.get("PYACLNN_STUB_LIBDIR", "(bundled)"), "machine": platform.machine(),
        "bytes_read": read, "bytes_written": written,
        "options": {k: v for k, v in sorted(os.environ.items())
                    if k.startswith("PYACLNN_STUB_ARNQ_") and k != "PYACLNN_STUB_ARNQ_THREADS"},
        "threads": {"1_thread": 1, "auto": threads_auto},
        "cores_used": {"1_thread": 1, "auto": cores_auto},
        "kernel_s": {"1_thread": kernel_1, "auto": kernel_auto},
        "reference_s": best_ref,
        "speedup_vs_reference": {"1_thread": best_ref / kernel_1, "auto": best_ref / kernel_auto},
        "copy_s": t_copy, "copy_GBps": copy_bw / 1e9,
        "kernel_GBps": {"1_thread": traffic / kernel_1 / 1e9, "auto": traffic / kernel_auto / 1e9},
        "bandwidth_per_core_vs_copy": {"1_thread": traffic / kernel_1 / copy_bw,
                                       "auto": traffic / kernel_auto / cores_auto / copy_bw},
        "bit_identical": bool(identical),
        "goals": {"speedup_vs_reference": 10, "bandwidth_per_core_vs_copy": 0.4},
    }
    dev.close()
    capi.aclrtDestroyStream(stream)
    capi.aclrtResetDevice(0)
    capi.aclFinalize()
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
