"""The GroupedDynamicMxQuant examples run as tests: examples/cpp/grouped_dynamic_mx_quant.cpp built
with the system C++ compiler against pyaclnn.get_include() / get_library_dir() (as a user would
build it against a toolkit), and its line-by-line Python port examples/grouped_dynamic_mx_quant.py.
Expected output: the published example values (spec §7.1) for both API versions."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import REPO_ROOT, subprocess_env

import pyaclnn

EXPECTED = [
    f"{api} {name}: {values}"
    for api in ("aclnnGroupedDynamicMxQuant", "aclnnGroupedDynamicMxQuantV2")
    for name, values in (("y", "0 72 96 120 0 72 96 120"), ("mxscale", "128 0 128 0"))
]
PYTHON_PORT = REPO_ROOT / "examples" / "grouped_dynamic_mx_quant.py"


@pytest.fixture(scope="module")
def cpp_example(tmp_path_factory):
    compiler = shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    include, libdir = pyaclnn.get_include(), pyaclnn.get_library_dir()
    exe = tmp_path_factory.mktemp("gmq_example") / "grouped_dynamic_mx_quant"
    cmd = [compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
           str(REPO_ROOT / "examples" / "cpp" / "grouped_dynamic_mx_quant.cpp"), f"-I{include}",
           f"-L{libdir}", "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert build.returncode == 0, build.stderr
    return exe


def run(cmd) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=subprocess_env())


def test_cpp_example(cpp_example):
    proc = run([str(cpp_example)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == EXPECTED


def test_python_port():
    proc = run([sys.executable, str(PYTHON_PORT)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == EXPECTED


def test_python_port_prints_what_the_cpp_example_prints(cpp_example):
    assert run([sys.executable, str(PYTHON_PORT)]).stdout == run([str(cpp_example)]).stdout
