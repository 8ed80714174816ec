"""Mutation check: every mutant of tests/mutation/mutants.py must make its named tests fail.

    python tests/mutation/run_mutants.py [--only NAME ...] [--shard K/N] [--list] [--keep] [--json FILE]

Steps: check that each mutant's original snippet occurs exactly once in its file; copy the
repository (sources only) to a scratch directory once; build the stub there once (CMake, Ninja when
available, a development build); run the union of the named tests unmutated (they must pass, or a
"killed" mutant would mean nothing); then for each mutant apply it, rebuild incrementally when it
touches C, run only its named tests with ``-x -q``, and restore the file. Exit status 1 if a mutant
survives (its tests pass), does not build or cannot be applied; 0 when every mutant is killed.

The scratch copy is what runs: PYACLNN_STUB_LIBDIR points at its build (so the libraries and the
_fastcall accelerator come from it), PYTHONPATH at its root, and a sitecustomize.py there removes an
editable install's import hook for pyaclnn (scikit-build-core's hook would otherwise import the
checkout's package instead of the mutated copy) -- in child processes of the tests too.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from mutants import MUTANTS, Mutant  # noqa: E402

C_SUFFIXES = (".c", ".h", ".cpp", ".txt", ".toml")   # .txt: CMakeLists; .toml: operator definitions
IGNORED = shutil.ignore_patterns(".git", "build", ".venv*", "__pycache__", "*.egg-info", ".pytest_cache",
                                 "_stub", "*.so", "dist")
TEST_TIMEOUT = 300        # seconds per mutant's test run; a hang counts as caught (and is reported)

SITECUSTOMIZE = '''"""Written by tests/mutation/run_mutants.py: import pyaclnn from this scratch copy, not through an
editable install's import hook (which would point at the original checkout)."""
import sys


def _drop_editable_hooks():
    kept = []
    for finder in sys.meta_path:
        module = getattr(type(finder), "__module__", "") or ""
        if module.startswith("_editable_") and "pyaclnn" in module:
            continue
        kept.append(finder)
    sys.meta_path[:] = kept


_drop_editable_hooks()
'''


def log(msg: str) -> None:
    print(msg, flush=True)


def check_snippets(mutants: list[Mutant], root: Path) -> list[str]:
    problems = []
    names = set()
    for m in mutants:
        if m.name in names:
            problems.append(f"{m.name}: duplicate name")
        names.add(m.name)
        path = root / m.file
        if not path.is_file():
            problems.append(f"{m.name}: no file {m.file}")
            continue
        count = path.read_text().count(m.original)
        if count != 1:
            problems.append(f"{m.name}: the original snippet occurs {count} times in {m.file} (must be 1)")
        if m.original == m.replacement:
            problems.append(f"{m.name}: the replacement equals the original")
        for t in m.tests:
            if not (root / t.split("::")[0]).is_file():
                problems.append(f"{m.name}: no test file {t}")
    return problems


def copy_repo(dest: Path) -> None:
    shutil.copytree(REPO, dest, ignore=IGNORED, symlinks=True, dirs_exist_ok=True)
    (dest / "sitecustomize.py").write_text(SITECUSTOMIZE)


def run(cmd: list[str], cwd: Path, env: dict | None = None, timeout: float | None = None):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def configure(scratch: Path, build: Path, jobs: int, build_type: str = "") -> None:
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    proc = run(["cmake", "-S", str(scratch), "-B", str(build), *gen, f"-DPython_EXECUTABLE={sys.executable}",
                f"-DCMAKE_BUILD_TYPE={build_type}"], scratch)
    if proc.returncode:
        sys.exit(f"mutation: cmake configure failed:\n{proc.stdout}\n{proc.stderr}")
    build_stub(build, jobs, must=True)


def build_stub(build: Path, jobs: int, must: bool = False) -> subprocess.CompletedProcess:
    proc = run(["cmake", "--build", str(build), "-j", str(jobs)], build)
    if must and proc.returncode:
        sys.exit(f"mutation: the unmutated build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def test_env(scratch: Path, build: Path) -> dict:
    env = dict(os.environ)
    env["PYACLNN_STUB_LIBDIR"] = str(build / "lib")
    env["PYTHONPATH"] = os.pathsep.join([str(scratch)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                          if p])
    env["PYACLNN_BACKEND"] = "stub"
    env.pop("PYACLNN_FASTCALL_LIB", None)
    return env


def check_isolation(scratch: Path, env: dict) -> None:
    """The tests must import the scratch pyaclnn and load the scratch libraries and accelerator."""
    code = ("import pyaclnn, pyaclnn._loader as L, pyaclnn.ops._native as N; "
            "m = N.module(); "
            "print(pyaclnn.__file__); print(*pyaclnn.__path__, sep='|'); print(L.stub_library_dir()); "
            "print(getattr(m, '__file__', '') if m else 'none: ' + str(N.why_unavailable))")
    proc = run([sys.executable, "-c", code], scratch, env)
    if proc.returncode:
        sys.exit(f"mutation: cannot import pyaclnn from the scratch copy:\n{proc.stderr}")
    lines = proc.stdout.splitlines()
    where = [lines[0], *lines[1].split("|"), lines[2]] + ([lines[3]] if not lines[3].startswith("none") else [])
    outside = [p for p in where if not Path(p).resolve().is_relative_to(scratch.resolve())]
    if outside:
        sys.exit(f"mutation: the tests would use code outside the scratch copy: {outside}")
    log(f"mutation: pyaclnn from {lines[0]}; libraries {lines[2]}; accelerator {lines[3]}")


def pytest_cmd(tests: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]


def first_failure(output: str) -> str:
    for line in output.splitlines():
        m = re.match(r"(FAILED|ERROR) (\S+)", line)
        if m:
            return m.group(2)
    return ""


def run_tests(tests: list[str], scratch: Path, env: dict):
    start = time.monotonic()
    try:
        proc = run(pytest_cmd(tests), scratch, env, timeout=TEST_TIMEOUT)
        return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return "timeout", out, time.monotonic() - start


def apply(m: Mutant, scratch: Path) -> str:
    path = scratch / m.file
    original = path.read_text()
    path.write_text(original.replace(m.original, m.replacement, 1))
    return original


def shard_of(text: str) -> tuple[int, int]:
    """"K/N" -> (K mod N, N); K may be any integer (a commit hash read as hex, say)."""
    k, _, n = text.partition("/")
    try:
        kk, nn = int(k, 0), int(n)
    except ValueError:
        kk, nn = -1, 0
    if nn < 1:
        sys.exit(f"mutation: --shard takes K/N with N >= 1 (e.g. 0/4 or 0x1f3a/4), not {text!r}")
    return kk % nn, nn


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", help="run these mutants (names) only")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--scratch", type=Path, help="scratch directory (default: a new temporary one)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--build-type", default="", help="CMAKE_BUILD_TYPE of the scratch build (default: none, the "
                    "quickest to compile; CI uses Release, whose objects a compiler cache already holds from "
                    "the package's own build)")
    ap.add_argument("--json", type=Path, help="also write the summary here")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run of the named tests")
    ap.add_argument("--shard", metavar="K/N", help="run the mutants whose position in the list is K modulo N "
                    "(CI runs one shard a commit: K from the commit's hash; every snippet is still checked)")
    args = ap.parse_args(argv)

    mutants = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.only and len(mutants) != len(set(args.only)):
        sys.exit(f"mutation: unknown mutant(s): {sorted(set(args.only) - {m.name for m in MUTANTS})}")
    if args.shard:
        k, n = shard_of(args.shard)
        mutants = [m for i, m in enumerate(mutants) if i % n == k]
        log(f"mutation: shard {k}/{n}: {len(mutants)} of {len(MUTANTS)} mutants")
    if args.list:
        for m in mutants:
            log(f"{m.name:34s} {m.file}  -> {' '.join(m.tests)}")
        return 0
    problems = check_snippets(MUTANTS, REPO)   # all of them: a stale snippet fails whichever shard runs
    if problems:
        log("\n".join(f"mutation: {p}" for p in problems))
        return 1

    t0 = time.monotonic()
    made_scratch = args.scratch is None
    scratch = Path(tempfile.mkdtemp(prefix="pyaclnn-mutants-")) if made_scratch else args.scratch.resolve()
    if not made_scratch and scratch.exists():
        shutil.rmtree(scratch)
    results = []
    try:
        copy_repo(scratch)
        build = scratch / "build" / "dev"
        configure(scratch, build, args.jobs, args.build_type)
        env = test_env(scratch, build)
        check_isolation(scratch, env)
        t_setup = time.monotonic() - t0
        log(f"mutation: scratch {scratch}, built in {t_setup:.1f} s")

        if not args.no_baseline:
            union = sorted({t for m in mutants for t in m.tests})
            code, out, secs = run_tests(union, scratch, env)
            if code != 0:
                log(out[-5000:])
                log(f"mutation: the named tests fail WITHOUT any mutant ({first_failure(out)}); fix that first")
                return 1
            log(f"mutation: baseline: the {len(union)} named test files/ids pass unmutated ({secs:.1f} s)")

        dirty_c = False          # a C file was restored: the next run needs a rebuild first
        for m in mutants:
            is_c = m.file.endswith(C_SUFFIXES)
            original = apply(m, scratch)
            status, detail, secs, build_secs = "", "", 0.0, 0.0
            try:
                if is_c or dirty_c:
                    b0 = time.monotonic()
                    proc = build_stub(build, args.jobs)
                    build_secs = time.monotonic() - b0
                    if proc.returncode:
                        status, detail = "NOBUILD", (proc.stdout + proc.stderr)[-800:]
                    dirty_c = False
                if not status:
                    code, out, secs = run_tests(list(m.tests), scratch, env)
                    if code == "timeout":
                        status, detail = "KILLED", f"timeout after {TEST_TIMEOUT} s"
                    elif code == 0:
                        status, detail = "SURVIVED", "all named tests passed"
                    elif code in (2, 3, 4, 5):      # interrupted / internal error / usage / no tests
                        status, detail = "ERROR", f"pytest exit {code}: " + out[-800:]
                    else:
                        status, detail = "KILLED", first_failure(out) or f"exit {code}"
            finally:
                (scratch / m.file).write_text(original)
                dirty_c = dirty_c or is_c
            results.append({"name": m.name, "file": m.file, "status": status, "caught_by": detail,
                            "build_s": round(build_secs, 1), "test_s": round(secs, 1)})
            log(f"{status:8s} {m.name:34s} build {build_secs:5.1f} s  tests {secs:5.1f} s  {detail}")
    finally:
        if made_scratch and not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)

    bad = [r for r in results if r["status"] != "KILLED"]
    summary = {"mutants": len(results), "killed": len(results) - len(bad),
               "not_killed": [{"name": r["name"], "status": r["status"]} for r in bad],
               "seconds": round(time.monotonic() - t0, 1)}
    log("mutation: " + json.dumps(summary))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "results": results}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
