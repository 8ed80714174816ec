"""Fast at decode shapes: the ratios of its goals, measured in one run, each next to its goal.

    python benchmarks/decode_shapes.py [--repeats 5] [--calls 2000] [--large-rows 4096] [--no-python]

C figures come from the C twin (benchmarks/cpp/decode_shapes.c), compiled with the system compiler
against ``pyaclnn.get_include()`` / ``pyaclnn.get_library_dir()`` and run as a subprocess:

* ``arnq_c_vs_amp_c``: aclnnAddRmsNormDynamicQuantV2 on bf16 [1, 8192] (gamma, both smooth scales,
  int8 y1 and y2), the whole C one-shot sequence (tensors, phase 1, launch, sync, destroy), over the
  same sequence of a trivial aclnnAmpUpdateScale on [1]; both sync after every call. Goal <= 8.
* ``<kernel>_2_threads_speedup``: a large kernel (ARNQ V2 [4096, 8192], GroupedDynamicMxQuant bf16
  [4096, 4096] -> FP8, Add float32 [2048, 2048]) with PYACLNN_STUB_KERNEL_THREADS=1 over =2, one
  repeatable executor, launch + sync. Goal >= 1.7. Meaningless on a machine with fewer than 2 free
  cores: ``machine`` reports the CPUs and the load average at the start, and ``c_<kernel>_cpu_2_over_1``
  the process CPU time of the 2-thread launch over the 1-thread one (the work the split adds; about
  2 / that is the speed-up two idle cores would give).

Also reported: both operators' prepared launches (one repeatable executor, launch + sync per call), whose
difference is about what the [1, 8192] ARNQ kernel costs beyond a trivial one.

Python figures (same shapes, sync after every call), skipped with --no-python:

* ``friendly_device_vs_c``: ``ops.add_rms_norm_dynamic_quant`` on pyaclnn device tensors over the C
  one-shot. Goal <= 1.5.
* ``friendly_numpy_vs_c``: the same with numpy arrays in and out (no goal of its own; the memory goal of
  the numpy path is measured by benchmarks/numpy_path_memory.py; one host copy in ``Tensor.numpy()`` is a
  test: tests/test_tensor_numpy.py).
* ``capi_vs_c``: the ``pyaclnn.capi`` line-by-line AmpUpdateScale sequence over the C one, sync every
  100 calls: taken from benchmarks/launch_overhead.py (``py_capi / c_one_shot``), calling what
  ``capi.<name>`` is once bound (the compiled call path when it was built). Goal <= 4.
* ``friendly_torch_vs_torch_eager``: the friendly call on torch CPU tensors (the emulator's device
  memory is host memory) over torch eager computing the same math (fp32 add, RMS norm, two dynamic
  int8 quantisations) on the same tensors; null without torch. Goal <= 1.0.

Each figure is the best of ``--repeats`` repeats (the least disturbed; the machine may be shared), the
ratios are taken between figures of the same run. Prints JSON; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import pyaclnn  # noqa: E402

LARGE = ("arnq_v2_large", "gmq_large", "add_large")


def build_c_twin(workdir: Path) -> Path:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no C compiler found (set CC)")
    exe = workdir / "decode_shapes"
    libdir = pyaclnn.get_library_dir()
    cmd = [cc, "-O2", "-std=c11", "-I", pyaclnn.get_include(), str(HERE / "cpp" / "decode_shapes.c"),
           "-o", str(exe), "-L", libdir, "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
    subprocess.run(cmd, check=True)
    return exe


def run_c_twin(exe: Path, repeats: int, calls: int, large_rows: int) -> dict:
    env = dict(os.environ, LD_LIBRARY_PATH=pyaclnn.get_library_dir())
    out = subprocess.run([str(exe), str(repeats), str(calls), "1", "8192", str(large_rows)], check=True,
                         capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def goal(value, op: str, target: float) -> dict:
    met = None if value is None else (value <= target if op == "<=" else value >= target)
    return {"value": None if value is None else round(value, 2), "goal": f"{op} {target}", "met": met}


# ---- Python paths -----------------------------------------------------------------------------

def python_friendly(calls: int, repeats: int) -> dict:
    """Best mean ns per friendly ARNQ V2 [1, 8192] call, device tensors and numpy arrays."""
    import ml_dtypes
    import numpy as np
    from pyaclnn import ops

    rng = np.random.default_rng(0)
    bf16 = ml_dtypes.bfloat16
    host = [rng.standard_normal((1, 8192), dtype=np.float32).astype(bf16) for _ in range(2)]
    host += [rng.uniform(0.5, 2.0, 8192).astype(bf16) for _ in range(3)]
    dev = [pyaclnn.from_numpy(a) for a in host]
    stream = pyaclnn.current_stream()
    fn = ops.add_rms_norm_dynamic_quant

    def device_call():
        fn(dev[0], dev[1], dev[2], smooth_scale1=dev[3], smooth_scale2=dev[4], y_dtype="int8")
        stream.synchronize()

    def numpy_call():
        fn(host[0], host[1], host[2], smooth_scale1=host[3], smooth_scale2=host[4], y_dtype="int8")

    best = {}
    for name, call in (("friendly_device", device_call), ("friendly_numpy", numpy_call)):
        for _ in range(calls // 10 + 1):   # warm up
            call()
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                call()
            best[name] = min(best.get(name, float("inf")), (time.perf_counter_ns() - t0) / calls)
    return best


def python_torch(calls: int, repeats: int) -> dict | None:
    """Best mean ns per call: the friendly ARNQ V2 [1, 8192] on torch CPU tensors (the emulator's
    device memory is host memory), and torch eager computing the same math on the same tensors."""
    # An installed torch-npu is autoloaded by `import torch` and fails outside `pyaclnn exec`; the
    # torch CPU figures do not need it.
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    try:
        import torch
    except Exception:       # noqa: BLE001 -- torch absent or unloadable
        return None
    from pyaclnn import ops

    g = torch.Generator().manual_seed(0)
    x1, x2 = (torch.randn((1, 8192), generator=g).to(torch.bfloat16) for _ in range(2))
    gamma, s1, s2 = (torch.empty(8192).uniform_(0.5, 2.0, generator=g).to(torch.bfloat16) for _ in range(3))
    fn = ops.add_rms_norm_dynamic_quant

    def friendly_call():
        fn(x1, x2, gamma, smooth_scale1=s1, smooth_scale2=s2, y_dtype="int8")

    def eager_call(eps=1e-6):
        # The operator's math in torch ops: fp32 add, RMS norm with gamma, then per row and per
        # smooth scale a dynamic int8 quantisation (scale = max|z| / 127).
        x = x1.float() + x2.float()
        x_out = x.to(torch.bfloat16)
        y = x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * gamma.float()
        outs = [x_out]
        for s in (s1, s2):
            z = y * s.float()
            scale = z.abs().amax(-1, keepdim=True) / 127.0
            outs += [torch.round(z / scale).clamp_(-128, 127).to(torch.int8), scale.squeeze(-1)]
        return outs

    best = {}
    for name, call in (("friendly_torch_cpu", friendly_call), ("torch_eager_cpu", eager_call)):
        for _ in range(calls // 10 + 1):   # warm up
            call()
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                call()
            best[name] = min(best.get(name, float("inf")), (time.perf_counter_ns() - t0) / calls)
    return best


def capi_line_by_line(repeats: int) -> dict | None:
    """launch_overhead.py's capi sequence vs its C twin (sync every 100), best of repeats."""
    try:
        import launch_overhead
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        exe = launch_overhead.build_c_twin(Path(tmp))
        stream = pyaclnn.Stream()
        buf = launch_overhead.Buffers(stream)
        loops, plan = launch_overhead.variants(buf, stream)
        c_best = py_best = float("inf")
        n, k = 5000, 100
        for _ in range(repeats):
            c_best = min(c_best, launch_overhead.run_c_twin(exe, n, k)["one_shot_ns"][0])
            buf.reset()
            py_best = min(py_best, launch_overhead.timed(loops["py_capi"], stream, n, k))
        plan.close()
        stream.close()
    return {"c_one_shot": c_best, "py_capi": py_best}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000, help="one-shot calls per repeat")
    ap.add_argument("--large-rows", type=int, default=4096, help="rows of the large ARNQ call (8192 columns)")
    ap.add_argument("--no-python", action="store_true", help="C figures only")
    args = ap.parse_args(argv)
    for var in ("PYACLNN_STUB_KERNEL_THREADS", "PYACLNN_STUB_ARNQ_THREADS"):
        os.environ.pop(var, None)   # the automatic rule for the one-shot calls; the twin sets 1 / 2 itself

    machine = {"cpus": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
               "backend": pyaclnn.backend_name()}
    with tempfile.TemporaryDirectory() as tmp:
        c = run_c_twin(build_c_twin(Path(tmp)), args.repeats, args.calls, args.large_rows)
    amp_c = min(c["one_shot_ns"]["amp_update_scale"])
    arnq_c = min(c["one_shot_ns"]["arnq_v2_decode"])
    amp_p, arnq_p = min(c["prepared_ns"]["amp_update_scale"]), min(c["prepared_ns"]["arnq_v2_decode"])
    figures = {"c_amp_one_shot_us": amp_c / 1e3, "c_arnq_v2_decode_one_shot_us": arnq_c / 1e3,
               "c_amp_prepared_us": amp_p / 1e3, "c_arnq_v2_decode_prepared_us": arnq_p / 1e3,
               "c_arnq_v2_decode_kernel_above_amp_us": (arnq_p - amp_p) / 1e3}
    ratios = {"arnq_c_vs_amp_c": goal(arnq_c / amp_c, "<=", 8)}
    for name in LARGE:
        t1, t2 = min(c["kernel_ns"][name]["1"]), min(c["kernel_ns"][name]["2"])
        figures[f"c_{name}_1_thread_ms"] = t1 / 1e6
        figures[f"c_{name}_2_threads_ms"] = t2 / 1e6
        ratios[f"{name}_2_threads_speedup"] = goal(t1 / t2, ">=", 1.7)
        # CPU time of the 2-thread launch over the 1-thread one: the work the split adds. With two idle
        # cores the speed-up is about 2 / this (for balanced parts); a busy machine hides that.
        cpu1, cpu2 = min(c["kernel_ns"][name]["cpu_1"]), min(c["kernel_ns"][name]["cpu_2"])
        figures[f"c_{name}_cpu_2_over_1"] = cpu2 / cpu1

    py = {} if args.no_python else python_friendly(max(args.calls // 4, 50), args.repeats)
    capi = None if args.no_python else capi_line_by_line(args.repeats)
    torch_figs = None if args.no_python else python_torch(max(args.calls // 4, 50), args.repeats)
    for name, value in (torch_figs or {}).items():
        figures[f"py_{name}_us"] = value / 1e3
    for name, value in py.items():
        figures[f"py_{name}_us"] = value / 1e3
    ratios["friendly_device_vs_c"] = goal(py["friendly_device"] / arnq_c if py else None, "<=", 1.5)
    ratios["friendly_numpy_vs_c"] = {"value": round(py["friendly_numpy"] / arnq_c, 2) if py else None,
                                     "goal": None, "met": None}
    ratios["friendly_torch_vs_torch_eager"] = goal(
        torch_figs["friendly_torch_cpu"] / torch_figs["torch_eager_cpu"] if torch_figs else None, "<=", 1.0)
    if capi:
        figures["c_amp_sync_every_100_us"] = capi["c_one_shot"] / 1e3
        figures["py_capi_amp_sync_every_100_us"] = capi["py_capi"] / 1e3
    ratios["capi_vs_c"] = goal(capi["py_capi"] / capi["c_one_shot"] if capi else None, "<=", 4)

    report = {
        "benchmark": "decode shapes", "machine": machine, "repeats": args.repeats,
        "decode_shape": c["decode_shape"], "large_shapes": {n: c[f"large_{n.split('_')[0]}_shape"] for n in
                                                            ("arnq", "gmq", "add")},
        "ratios": ratios, "figures": {k: round(v, 3) for k, v in figures.items()},
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
