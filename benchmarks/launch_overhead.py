"""Host time per aclnnAmpUpdateScale launch: C vs Python, one-shot vs prepared, in one run.

    python benchmarks/launch_overhead.py [--n 20000] [--k 100] [--repeats 5]

Variants (each alternates two sets of device buffers, so every launch has new addresses and reads
the previous launch's results, as a training loop does):

* ``c_one_shot``      -- the C sequence: aclCreateTensor x5, GetWorkspaceSize, launch, aclDestroyTensor x5
* ``py_capi``         -- the same sequence line by line through ``pyaclnn.capi``
* ``py_friendly``     -- ``pyaclnn.ops.amp_update_scale(..., out=...)`` on device tensors
* ``py_generic``      -- ``pyaclnn.ops.AmpUpdateScale(...)`` (the launcher without the friendly layer)
* ``py_prepared``     -- ``plan(...)`` of ``pyaclnn.ops.prepare``: address setters + launch
* ``c_prepared``      -- the C twin of that (aclSet{Input,Output}TensorAddr x5 + launch)

The C twin (benchmarks/cpp/launch_overhead.c) is compiled with the system compiler against
``pyaclnn.get_include()`` / ``pyaclnn.get_library_dir()`` and run as a subprocess between the Python
repeats.  Timing covers the launch loop only; the stream is synchronised every ``k`` launches outside
the timed part.  The machine is shared, so each variant reports the best of ``repeats`` means
(the least disturbed) and the median.  Prints JSON with the ratios and whether the goals hold:
one-shot friendly call <= 10 us above the C sequence; prepared call <= 2x the C prepared call.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pyaclnn  # noqa: E402
from pyaclnn import capi, ops  # noqa: E402


def build_c_twin(workdir: Path) -> Path:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no C compiler found (set CC)")
    exe = workdir / "launch_overhead"
    libdir = pyaclnn.get_library_dir()
    cmd = [cc, "-O2", "-std=c11", "-I", pyaclnn.get_include(), str(HERE / "cpp" / "launch_overhead.c"),
           "-o", str(exe), "-L", libdir, "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
    subprocess.run(cmd, check=True)
    return exe


def run_c_twin(exe: Path, n: int, k: int) -> dict:
    env = dict(os.environ, LD_LIBRARY_PATH=pyaclnn.get_library_dir())
    out = subprocess.run([str(exe), str(n), str(k), "1"], check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def timed(loop, stream, n: int, k: int) -> float:
    """Mean host ns per launch of ``loop(i)`` over n launches, syncing every k outside the clock."""
    total = 0
    perf = time.perf_counter_ns
    for done in range(0, n, k):
        t0 = perf()
        for i in range(done, done + k):
            loop(i)
        total += perf() - t0
        stream.synchronize()
    return total / n


class Buffers:
    """Two sets (scale, tracker, found_inf) of one-element device tensors."""

    def __init__(self, stream):
        self.stream = stream
        self.sets = [[pyaclnn.empty((1,), "float32", stream=stream), pyaclnn.empty((1,), "int32", stream=stream),
                      pyaclnn.empty((1,), "float32", stream=stream)] for _ in range(2)]
        self.reset()

    def reset(self):
        for s in self.sets:
            s[0].copy_from(np.array([100.0], np.float32))
            s[1].copy_from(np.array([0], np.int32))
            s[2].copy_from(np.array([0.0], np.float32))
        self.stream.synchronize()

    def result(self, n: int):
        final = self.sets[n & 1]
        return [float(final[0].numpy()[0]), int(final[1].numpy()[0])]


def variants(buf: Buffers, stream):
    sets = buf.sets
    ptrs = [[t.ptr for t in s] for s in sets]
    fn = ops.get("AmpUpdateScale")
    one = (ctypes.c_int64 * 1)(1)
    dtypes_ = (capi.ACL_FLOAT, capi.ACL_INT32, capi.ACL_FLOAT)
    handle = stream.handle
    ws_size, executor = ctypes.c_uint64(), ctypes.c_void_p()
    # What capi.<name> is once bound (the compiled path when it was built, else the ctypes function):
    # a name taken before its function's first call is the forwarding stand-in, one Python call more.
    names = ("aclCreateTensor", "aclDestroyTensor", "aclnnAmpUpdateScaleGetWorkspaceSize", "aclnnAmpUpdateScale")
    for name in names:
        capi.cfunc(name)
    create, destroy, gws, launch = (getattr(capi, name) for name in names)
    nd = capi.ACL_FORMAT_ND
    byref = ctypes.byref

    def py_capi(i):
        a, b = ptrs[i & 1], ptrs[(i & 1) ^ 1]
        cs = create(one, 1, dtypes_[0], one, 0, nd, one, 1, a[0])
        gt = create(one, 1, dtypes_[1], one, 0, nd, one, 1, a[1])
        fi = create(one, 1, dtypes_[2], one, 0, nd, one, 1, a[2])
        ncs = create(one, 1, dtypes_[0], one, 0, nd, one, 1, b[0])
        ngt = create(one, 1, dtypes_[1], one, 0, nd, one, 1, b[1])
        status = gws(cs, gt, fi, 2.0, 0.5, 1000, ncs, ngt, byref(ws_size), byref(executor))
        assert status == 0 and ws_size.value == 0, status
        status = launch(None, 0, executor, handle)
        assert status == 0, status
        destroy(cs)
        destroy(gt)
        destroy(fi)
        destroy(ncs)
        destroy(ngt)

    # Per parity, the arguments ready to pass (the C twin indexes its buffer table the same way).
    inputs = [tuple(sets[p]) for p in (0, 1)]
    outputs = [(sets[p ^ 1][0], sets[p ^ 1][1]) for p in (0, 1)]
    full = [inputs[p] + (2.0, 0.5, 1000) + outputs[p] for p in (0, 1)]
    tensors = [inputs[p] + outputs[p] for p in (0, 1)]
    friendly = ops.amp_update_scale

    def py_friendly(i):
        p = i & 1
        friendly(*inputs[p], 2.0, 0.5, 1000, out=outputs[p], stream=stream)

    def py_generic(i):
        fn(*full[i & 1], stream=stream)

    plan = ops.prepare("AmpUpdateScale", *full[0], stream=stream)

    def py_prepared(i):
        plan(*tensors[i & 1])

    return {"py_capi": py_capi, "py_friendly": py_friendly, "py_generic": py_generic,
            "py_prepared": py_prepared}, plan


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="launches per measurement")
    ap.add_argument("--k", type=int, default=100, help="synchronise every k launches")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    n = (args.n + args.k - 1) // args.k * args.k

    results: dict[str, list[float]] = {}
    checks: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_c_twin(Path(tmp))
        stream = pyaclnn.Stream()
        buf = Buffers(stream)
        loops, plan = variants(buf, stream)
        plan_accelerated = plan.accelerated
        for _ in range(args.repeats):
            c = run_c_twin(exe, n, args.k)
            results.setdefault("c_one_shot", []).append(c["one_shot_ns"][0])
            results.setdefault("c_prepared", []).append(c["prepared_ns"][0])
            checks["c_one_shot"], checks["c_prepared"] = c["check"]["one_shot"], c["check"]["prepared"]
            for name, loop in loops.items():
                buf.reset()
                results.setdefault(name, []).append(timed(loop, stream, n, args.k))
                checks[name] = buf.result(n)
        plan.close()
        stream.close()

    best = {k: min(v) for k, v in results.items()}
    median = {k: statistics.median(v) for k, v in results.items()}
    report = {
        "operator": "aclnnAmpUpdateScale", "backend": pyaclnn.backend_name(), "n": n, "k": args.k,
        "repeats": args.repeats,
        "ns_per_launch_best": {k: round(v, 1) for k, v in best.items()},
        "ns_per_launch_median": {k: round(v, 1) for k, v in median.items()},
        "ratios_best": {
            "py_capi / c_one_shot": round(best["py_capi"] / best["c_one_shot"], 2),
            "py_friendly / c_one_shot": round(best["py_friendly"] / best["c_one_shot"], 2),
            "py_prepared / c_prepared": round(best["py_prepared"] / best["c_prepared"], 2),
            "py_prepared / py_friendly": round(best["py_prepared"] / best["py_friendly"], 2),
        },
        "friendly_minus_c_one_shot_us": round((best["py_friendly"] - best["c_one_shot"]) / 1000, 2),
        "goals": {
            "friendly <= c_one_shot + 10us": best["py_friendly"] - best["c_one_shot"] <= 10_000,
            "prepared <= 2x c_prepared": best["py_prepared"] <= 2 * best["c_prepared"],
        },
        "prepared_call_accelerated": plan_accelerated,
        "final_state_check": checks,
        "same_final_state": len({(float(v[0]), int(v[1])) for v in checks.values()}) == 1,
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
