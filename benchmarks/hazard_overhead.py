"""Cost of the stream-hazard checker (docs/hazards.md): launch overhead and a kernel, off vs report.

    python benchmarks/hazard_overhead.py [--n 20000] [--rounds 5] [--baseline-libdir DIR] [--out FILE]

* ``launch``: the C twin of benchmarks/launch_overhead.py (benchmarks/cpp/launch_overhead.c; one-shot
  and prepared aclnnAmpUpdateScale launches, host ns per launch), run as a subprocess with
  ``PYACLNN_STUB_HAZARDS=off`` and ``=report``.
* ``kernel``: ``ops.matmul`` of two 256x256 float32 device tensors (whole launch + synchronise, us
  per call, from Python), off vs report.
* With ``--baseline-libdir`` (a build of the stub without the checker, e.g. the merge base), the same
  C twin and kernel run against it too: that is "off costs nothing" measured against "not there".

The variants alternate round by round on this shared machine; each reports the best (least
disturbed) and the median of the rounds. Prints JSON (and writes it to --out).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pyaclnn  # noqa: E402
from launch_overhead import build_c_twin  # noqa: E402

KERNEL = r"""
import sys, time, numpy as np, pyaclnn
from pyaclnn import ops
n = int(sys.argv[1])
a = pyaclnn.from_numpy(np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32))
s = pyaclnn.current_stream()
ops.matmul(a, a); s.synchronize()
t0 = time.perf_counter_ns()
for _ in range(n):
    y = ops.matmul(a, a)
s.synchronize()
print((time.perf_counter_ns() - t0) / n / 1000.0)
"""


def _env(mode: str, libdir: str | None) -> dict:
    env = dict(os.environ, PYACLNN_STUB_HAZARDS=mode)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    if libdir:
        env["PYACLNN_STUB_LIBDIR"] = libdir
        env["LD_LIBRARY_PATH"] = libdir
    return env


def _twin(exe: Path, n: int, mode: str, libdir: str | None) -> dict:
    out = subprocess.run([str(exe), str(n), "100", "1"], check=True, capture_output=True, text=True,
                         env=_env(mode, libdir))
    if "pyaclnn-stub hazard" in out.stderr:
        raise RuntimeError(f"the launch benchmark itself has a hazard:\n{out.stderr}")
    got = json.loads(out.stdout)
    return {"one_shot_ns": got["one_shot_ns"][0], "prepared_ns": got["prepared_ns"][0]}


def _kernel(n: int, mode: str, libdir: str | None) -> float:
    out = subprocess.run([sys.executable, "-c", KERNEL, str(n)], check=True, capture_output=True, text=True,
                         env=_env(mode, libdir))
    return float(out.stdout.strip())


def _summary(values: list[float]) -> dict:
    return {"best": round(min(values), 1), "median": round(statistics.median(values), 1)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="launches per launch measurement")
    ap.add_argument("--kernel-n", type=int, default=200, help="matmul calls per kernel measurement")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline-libdir", help="stub libraries built without the checker, for comparison")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        exe = build_c_twin(Path(tmp))
        configs = [("off", "off", None), ("report", "report", None)]
        if args.baseline_libdir:   # the twin links with an rpath: one more build, against the baseline
            base_dir = Path(tmp) / "baseline"
            base_dir.mkdir()
            base_exe = _build_against(base_dir, args.baseline_libdir)
            configs.insert(0, ("baseline", "off", args.baseline_libdir))
        launch = {name: {"one_shot_ns": [], "prepared_ns": []} for name, _, _ in configs}
        kernel = {name: [] for name, _, _ in configs}
        for _ in range(args.rounds):
            for name, mode, libdir in configs:
                got = _twin(base_exe if name == "baseline" else exe, args.n, mode, libdir)
                for key in got:
                    launch[name][key].append(got[key])
                kernel[name].append(_kernel(args.kernel_n, mode, libdir))

    result = {
        "n": args.n, "rounds": args.rounds, "kernel": "matmul 256x256x256 float32, us per call incl. sync share",
        "launch_ns": {name: {k: _summary(v) for k, v in d.items()} for name, d in launch.items()},
        "kernel_us": {name: _summary(v) for name, v in kernel.items()},
    }
    best = {name: {k: min(v) for k, v in d.items()} for name, d in launch.items()}
    result["ratios"] = {
        "report_vs_off_one_shot": round(best["report"]["one_shot_ns"] / best["off"]["one_shot_ns"], 3),
        "report_vs_off_prepared": round(best["report"]["prepared_ns"] / best["off"]["prepared_ns"], 3),
        "report_vs_off_kernel": round(min(kernel["report"]) / min(kernel["off"]), 3),
    }
    if "baseline" in best:
        result["ratios"].update({
            "off_vs_baseline_one_shot": round(best["off"]["one_shot_ns"] / best["baseline"]["one_shot_ns"], 3),
            "off_vs_baseline_prepared": round(best["off"]["prepared_ns"] / best["baseline"]["prepared_ns"], 3),
            "off_vs_baseline_kernel": round(min(kernel["off"]) / min(kernel["baseline"]), 3),
        })
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return result


def _build_against(workdir: Path, libdir: str) -> Path:
    cc = os.environ.get("CC") or "cc"
    exe = workdir / "launch_overhead"
    cmd = [cc, "-O2", "-std=c11", "-I", pyaclnn.get_include(), str(HERE / "cpp" / "launch_overhead.c"),
           "-o", str(exe), "-L", libdir, "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
    subprocess.run(cmd, check=True)
    return exe


if __name__ == "__main__":
    main()
