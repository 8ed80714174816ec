"""Where a trivial torch_npu op's time goes on the emulator: torch_npu's own host work against ours.

    python benchmarks/launch_split.py [--n 20000] [--repeats 5]

One op, ``z = x + y`` on 8 fp32 elements, three ways in one run:

* ``c_twin``   -- benchmarks/cpp/launch_split.c: exactly what torch_npu asks of the emulator per op (as
  op-plugin's EXEC_NPU_CMD does for aclnnAdd: aclCreateTensor x3 + aclCreateScalar, aclnnAddGetWorkspaceSize,
  aclnnAdd, the destroys), each step timed, a sync per op timed too; and the same ops back to back with one
  sync at the end (``stream``).
* ``torch_npu`` -- the real torch_npu on the emulator (a child process under ``PYACLNN_EMULATE=1``), N ops
  back to back, one sync, mean per op; with benchmarks/cpp/launch_split_probe.c preloaded, which times the
  emulator's entry points inside that process (op-plugin binds them with dlsym, which the probe interposes).
  Run with torch_npu's task queue (the default: the launch runs on its queue thread) and without it
  (``TASK_QUEUE_ENABLE=0``: everything on the calling thread, so the op's time is torch_npu's plus ours).
* ``torch_cpu`` -- the same op on torch CPU tensors in the same child, for scale.

The child also runs N / 10 ops each followed by ``torch.npu.synchronize()`` (``op_with_sync_ns``; the sync
alone, as the probe times it, in ``sync_ns_per_synced_op``): there the host also waits for the hand-off to
the stream worker and the kernel.

``torch_npu_no_task_queue_no_cache`` is the same with the executor cache off (``PYACLNN_STUB_PTA_CACHE=0``).

Ours per op = the probe's create + phase 1 + launch + destroy + executor-cache hook time per op (plus, with a sync per op, the
worker hand-off and the kernel, which the host waits for); torch_npu's own = the op's time minus ours (on
the calling thread). The machine is shared: each figure is the best of ``repeats`` (the least disturbed)
and the median. Prints JSON. Nothing here is asserted by the tests.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from _common import print_result, run_result_child  # (benchmarks/ is on sys.path when run as a script)

HERE = Path(__file__).resolve().parent


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no C compiler found (set CC)")
    return cc


def build(workdir: Path) -> tuple[Path, Path]:
    import pyaclnn
    cc, libdir = compiler(), pyaclnn.get_library_dir()
    twin, probe = workdir / "launch_split", workdir / "liblaunch_split_probe.so"
    subprocess.run([cc, "-O2", "-std=c11", "-I", pyaclnn.get_include(), str(HERE / "cpp" / "launch_split.c"),
                    "-o", str(twin), "-L", libdir, "-lascendcl", "-lnnopbase", "-lopapi",
                    f"-Wl,-rpath,{libdir}"], check=True)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", str(HERE / "cpp" / "launch_split_probe.c"), "-o", str(probe),
                    "-ldl"], check=True)
    return twin, probe


def summary(values: list[float]) -> dict:
    return {"best": round(min(values), 1), "median": round(statistics.median(values), 1)}


def run_twin(twin: Path, n: int, repeats: int) -> dict:
    import pyaclnn
    env = dict(os.environ, LD_LIBRARY_PATH=pyaclnn.get_library_dir())
    out = json.loads(subprocess.run([str(twin), str(n), str(repeats)], check=True, capture_output=True,
                                    text=True, env=env).stdout)
    if out["check"] != [1.5 * i for i in range(8)]:
        raise RuntimeError(f"C twin computed {out['check']}")
    res = {k: summary(out[k]) for k in ("create", "phase1", "launch", "destroy", "sync", "total", "stream")}
    res["ours_host_ns"] = round(sum(min(out[k]) for k in ("create", "phase1", "launch", "destroy")), 1)
    return res


# ---- the torch_npu child ---------------------------------------------------------------------------------

def child(n: int, repeats: int) -> None:
    import ctypes
    import time

    import torch
    import torch_npu  # noqa: F401

    lib = ctypes.CDLL(None)
    probe = getattr(lib, "launch_split_probe_read", None)
    if probe is not None:
        probe.restype = ctypes.c_char_p
        probe.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64)]

    def counters() -> dict:
        out, i = {}, 0
        calls, ns = ctypes.c_uint64(), ctypes.c_uint64()
        while probe is not None:
            name = probe(i, ctypes.byref(calls), ctypes.byref(ns))
            if name is None:
                break
            out[name.decode()] = (calls.value, ns.value)
            i += 1
        return out

    def loop(x, y, sync) -> tuple[float, dict]:
        before = counters()
        t0 = time.perf_counter_ns()
        for _ in range(n):
            x + y
        sync()
        wall = (time.perf_counter_ns() - t0) / n
        after = counters()
        return wall, {k: ((after[k][0] - before[k][0]) / n, (after[k][1] - before[k][1]) / n) for k in after}

    x = torch.arange(8, dtype=torch.float32)
    y = x * 0.5
    xn, yn = x.npu(), y.npu()
    assert (xn + yn).cpu().tolist() == (x + y).tolist()
    torch.set_num_threads(1)                                      # an 8-element op: one thread either way
    for _ in range(500):
        xn + yn
    torch.npu.synchronize()
    def loop_synced(m) -> tuple[float, dict]:
        """m ops, each followed by a sync: the host also waits for the worker hand-off and the kernel."""
        before = counters()
        t0 = time.perf_counter_ns()
        for _ in range(m):
            xn + yn
            torch.npu.synchronize()
        wall = (time.perf_counter_ns() - t0) / m
        after = counters()
        return wall, {k: ((after[k][0] - before[k][0]) / m, (after[k][1] - before[k][1]) / m) for k in after}

    npu, cpu, synced = [], [], []
    for _ in range(repeats):
        npu.append(loop(xn, yn, torch.npu.synchronize))
        cpu.append(loop(x, y, lambda: None)[0])
        synced.append(loop_synced(max(1, n // 10)))
    print_result({"npu": npu, "cpu": cpu, "synced": synced})


def run_child(probe: Path, n: int, repeats: int, task_queue: bool, cache: bool = True) -> dict:
    env = dict(os.environ, PYACLNN_EMULATE="1", LD_PRELOAD=str(probe))
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    if not task_queue:
        env["TASK_QUEUE_ENABLE"] = "0"
    if not cache:
        env["PYACLNN_STUB_PTA_CACHE"] = "0"
    data = run_result_child([__file__, "--child", "--n", str(n), "--repeats", str(repeats)], env, "torch_npu child")
    best = min(range(repeats), key=lambda i: data["npu"][i][0])    # the least disturbed repeat
    wall, probes = data["npu"][best]
    steps = {
        "create": ("aclCreateTensor", "aclCreateScalar"),
        "phase1": ("aclnnAddGetWorkspaceSize",),
        "launch": ("aclnnAdd",),
        "destroy": ("aclDestroyTensor", "aclDestroyScalar"),
        "sync": ("aclrtSynchronizeStream", "aclrtSynchronizeDevice"),
        "cache": ("CanUsePTACache", "InitPTACacheThreadLocal", "UnInitPTACacheThreadLocal",
                  "AddTensorAddrToCachedList", "SetPTAHashKey", "SetPTACacheHashKey", "PTAGetExecCache",
                  "PTAFindExecCache"),
    }
    split = {k: round(sum(probes.get(name, (0, 0))[1] for name in names), 1) for k, names in steps.items()}
    calls = {name: round(c, 3) for name, (c, _) in probes.items() if c}
    ours = sum(split[k] for k in ("create", "phase1", "launch", "destroy", "cache"))
    best_synced = min(data["synced"], key=lambda r: r[0])
    sync_ns = sum(best_synced[1].get(name, (0, 0))[1] for name in steps["sync"])
    return {
        "op_ns": summary([w for w, _ in data["npu"]]),
        "op_with_sync_ns": summary([w for w, _ in data["synced"]]),
        "sync_ns_per_synced_op": round(sync_ns, 1),
        "torch_cpu_op_ns": summary(data["cpu"]),
        "ours_ns_per_op": split,
        "ours_host_ns": round(ours, 1),
        "torch_npu_own_ns": round(wall - ours - split["sync"], 1) if not task_queue else None,
        "calls_per_op": calls,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.n, args.repeats)
        return
    with tempfile.TemporaryDirectory() as tmp:
        twin, probe = build(Path(tmp))
        out = {"op": "x + y, fp32 [8]", "n": args.n, "repeats": args.repeats,
               "load_average": os.getloadavg()[0],
               "c_twin": run_twin(twin, args.n, args.repeats),
               "torch_npu": run_child(probe, args.n, args.repeats, task_queue=True),
               "torch_npu_no_task_queue": run_child(probe, args.n, args.repeats, task_queue=False),
               "torch_npu_no_task_queue_no_cache": run_child(probe, args.n, args.repeats, task_queue=False,
                                                             cache=False)}
    out["goal_ours_le_3us"] = out["torch_npu_no_task_queue"]["ours_host_ns"] <= 3000
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
