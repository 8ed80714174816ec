"""``python -m pyaclnn suite op-plugin PATH [options]``: run op-plugin's test files on the emulator."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from . import baseline, report, upstream
from .runner import run_files


def _commit(path: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pyaclnn suite",
                                description="Run a peer's test suite, unchanged, on the emulator.")
    p.add_argument("suite", choices=["op-plugin"], help="which suite (op-plugin: Ascend/op-plugin's tests)")
    p.add_argument("path", type=Path, help="the test directory of your checkout, e.g. op-plugin/test/test_base_ops")
    p.add_argument("files", nargs="*", help="only these files (names or globs, e.g. 'test_add*.py')")
    p.add_argument("--soc", default=os.environ.get("PYACLNN_STUB_SOC", "Ascend950PR"),
                   help="the emulated SoC (PYACLNN_STUB_SOC): Ascend950PR (default) or Ascend910B4")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes at once (default: the cores)")
    p.add_argument("--chunk", type=int, default=8, help="files per process (a crashing chunk is re-run a file at a time)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds a file may take (default 300)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    p.add_argument("--baseline", type=Path, default=baseline.DEFAULT,
                   help="the baseline of all-green files (default: the one shipped with pyaclnn)")
    p.add_argument("--check-baseline", action="store_true",
                   help="fail (exit 1) when a file of the baseline is not all green")
    p.add_argument("--write-baseline", action="store_true", help="record this run's green files in the baseline")
    p.add_argument("--faults", type=Path, default=upstream.DEFAULT,
                   help="the list of tests that fail on any device by their own fault, each with its reason "
                        "(default: the one shipped with pyaclnn); their failures count as upstream, not failed")
    p.add_argument("--no-faults", action="store_true", help="count every failure as failed")
    args = p.parse_args(argv)

    suite_dir = args.path.resolve()
    if not suite_dir.is_dir():
        print(f"pyaclnn suite: {args.path} is not a directory (give your checkout's test/test_base_ops)", file=sys.stderr)
        return 2
    patterns = args.files or ["test_*.py"]
    files = sorted({f for pat in patterns for f in suite_dir.glob(pat) if f.is_file()})
    if not files:
        print(f"pyaclnn suite: no test files matching {' '.join(patterns)} in {suite_dir}", file=sys.stderr)
        return 2
    from .._toolkit import environment, toolkit_root
    from ..errors import PyaclnnError
    try:
        env = environment(toolkit_root())
    except PyaclnnError as exc:
        print(f"pyaclnn suite: {exc}", file=sys.stderr)
        return 2
    env = {**env, "PYACLNN_STUB_SOC": args.soc, "TORCH_NPU_WARNING_DISABLE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = [0]

    def progress(r):
        done[0] += 1
        print(f"[{done[0]}/{len(files)}] {r.file}: {'green' if r.green else r.ended if r.ended != 'ok' else 'not green'}",
              file=sys.stderr, flush=True)

    faults = {} if args.no_faults else upstream.load(args.faults, baseline.key(suite_dir))
    results = run_files(files, suite_dir, env, timeout=args.timeout, chunk=args.chunk, jobs=args.jobs,
                        progress=progress, faults=faults)
    commit = _commit(suite_dir)
    print(report.table(results, args.soc))
    passing = sorted(t for r in results for t, outcome in r.tests.items() if t in faults and outcome == "passed")
    if passing:
        print(f"listed as failing by their own fault, but passed ({len(passing)}; the list can drop them): "
              f"{' '.join(passing)}")
    if args.json:
        args.json.write_text(json.dumps(report.as_json(results, args.soc, commit), indent=1) + "\n", encoding="utf-8")
    doc, suite = baseline.load(args.baseline), baseline.key(suite_dir)
    rc = 0
    if args.check_baseline:
        lost, gained, note = baseline.check(doc, suite, args.soc, commit, results)
        if note:
            print(f"note: {note}")
        if gained:
            print(f"green and not in the baseline yet ({len(gained)}; --write-baseline records them): {' '.join(gained)}")
        if lost:
            print(f"BASELINE: {len(lost)} file(s) of the baseline are no longer all green on {args.soc}: {' '.join(lost)}")
            rc = 1
        else:
            print(f"baseline holds: every baseline file that ran is all green on {args.soc}")
    if args.write_baseline:
        baseline.write(baseline.update(doc, suite, args.soc, commit, results), args.baseline)
        print(f"baseline written: {args.baseline}")
    return rc
