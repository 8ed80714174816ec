"""The C++ examples under valgrind memcheck: no memory errors, no definitely or possibly lost bytes.

Each ``examples/cpp/*.cpp`` is built with debug info against the stub (as a user builds it against a
toolkit) and run under ``valgrind --leak-check=full --error-exitcode=9`` with memcheck's default
leak kinds counted as errors (definite and possible). "Possibly lost" is what the stacks of stream
worker threads still running at exit look like, so this also checks that aclFinalize joins them. Skipped where valgrind or a C++ compiler is missing, and when the
stub libraries are a sanitizer build (ASan/TSan runtimes and valgrind cannot share a process).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO_ROOT, subprocess_env

import pyaclnn

# the HCCL ports (hccl_*.cpp) link libhccl and start an interpreter of their own: tests/test_hccl.py runs them
EXAMPLES = sorted(p for p in (REPO_ROOT / "examples" / "cpp").glob("*.cpp") if not p.name.startswith("hccl_"))
VALGRIND = shutil.which("valgrind")
LEAK_ERROR = 9
MEMCHECK = ["--tool=memcheck", f"--error-exitcode={LEAK_ERROR}", "--leak-check=full",
            "--errors-for-leak-kinds=definite,possible", "--show-leak-kinds=definite,possible",
            "--track-origins=yes"]


def _sanitized(libdir: str) -> bool:
    """True when the stub libraries carry a sanitizer runtime (they refuse to run under valgrind)."""
    for lib in Path(libdir).glob("lib*.so"):
        data = lib.read_bytes()
        if b"__asan_init" in data or b"__tsan_init" in data:
            return True
    return False


@pytest.fixture(scope="module")
def build_example(tmp_path_factory):
    compiler = shutil.which("c++")
    if VALGRIND is None:
        pytest.skip("valgrind is not installed")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    include, libdir = pyaclnn.get_include(), pyaclnn.get_library_dir()
    if _sanitized(libdir):
        pytest.skip("the stub in use is a sanitizer build; valgrind needs the plain one")
    out_dir = tmp_path_factory.mktemp("valgrind")

    def build(source: Path) -> Path:
        exe = out_dir / source.stem
        cmd = [compiler, "-std=c++17", "-g", "-O0", "-o", str(exe), str(source), f"-I{include}", f"-L{libdir}",
               "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        return exe
    return build


def test_there_are_examples_to_check():
    assert EXAMPLES, "examples/cpp has no .cpp file"


@pytest.mark.parametrize("source", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_is_clean_under_memcheck(build_example, source):
    exe = build_example(source)
    env = subprocess_env({"LD_PRELOAD": None})
    done = subprocess.run([VALGRIND, *MEMCHECK, str(exe)], capture_output=True, text=True, timeout=300, env=env,
                          cwd=os.fspath(exe.parent))
    report = done.stderr
    assert done.returncode != LEAK_ERROR, f"memcheck found errors or leaks:\n{report[-6000:]}"
    assert done.returncode == 0, \
        f"{source.name} failed under valgrind ({done.returncode}):\n{done.stdout}\n{report[-3000:]}"
    assert re.search(r"ERROR SUMMARY: 0 errors", report), report[-3000:]
    for kind in ("definitely", "indirectly", "possibly"):
        lost = re.search(kind + r" lost: ([\d,]+) bytes", report)
        assert lost is None or lost.group(1) == "0", report[-3000:]
