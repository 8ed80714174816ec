"""The examples run as tests: the C++ sample built with the system compiler against the stub's
headers and libraries (as a user would build it against a toolkit), and its Python port."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from helpers import REPO_ROOT, subprocess_env

import pyaclnn

# The doc example: scale 65536, tracker 900, no inf, interval 1000 -> tracker counts up to 901.
EXPECTED = re.compile(r"aclnnAmpUpdateScale result: updatedScale = 65536(\.0+)?, updatedGrowthTracker = 901$")


def _output_line(stdout: str) -> str:
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert lines, "no output"
    return lines[-1]


@pytest.fixture(scope="module")
def cpp_example(tmp_path_factory):
    compiler = shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    include, libdir = pyaclnn.get_include(), pyaclnn.get_library_dir()
    exe = tmp_path_factory.mktemp("examples") / "amp_update_scale"
    cmd = [compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
           str(REPO_ROOT / "examples" / "cpp" / "amp_update_scale.cpp"), f"-I{include}", f"-L{libdir}",
           "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert build.returncode == 0, build.stderr
    return exe


def test_cpp_example(cpp_example):
    proc = subprocess.run([str(cpp_example)], capture_output=True, text=True, timeout=60, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert EXPECTED.match(_output_line(proc.stdout)), proc.stdout


def test_python_port():
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "amp_update_scale.py")],
                          capture_output=True, text=True, timeout=60, env=subprocess_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert EXPECTED.match(_output_line(proc.stdout)), proc.stdout


def test_python_port_prints_what_the_cpp_example_prints(cpp_example):
    cpp = subprocess.run([str(cpp_example)], capture_output=True, text=True, timeout=60, env=subprocess_env())
    py = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "amp_update_scale.py")],
                        capture_output=True, text=True, timeout=60, env=subprocess_env())
    assert py.stdout == cpp.stdout
