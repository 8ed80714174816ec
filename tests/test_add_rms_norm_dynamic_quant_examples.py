"""The AddRmsNormDynamicQuant examples run as tests, on both SoC families: the C++ sample built with
the system compiler against the stub's headers and libraries (as against a toolkit), its line-by-line
Python port (pyaclnn.capi), and the short Pythonic example (pyaclnn.ops)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import REPO_ROOT, subprocess_env

import pyaclnn

SOCS = {"a2": "Ascend910B1", "950": "Ascend950PR"}
# The vendor sample's inputs: y1 = 127 everywhere (spec B.15).
EXPECTED = "".join(f"result[{i}] is: 127\n" for i in range(16))


def _run(cmd, soc):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                          env=subprocess_env({"PYACLNN_STUB_SOC": SOCS[soc]}))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def cpp_example(tmp_path_factory):
    compiler = shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    include, libdir = pyaclnn.get_include(), pyaclnn.get_library_dir()
    exe = tmp_path_factory.mktemp("examples") / "add_rms_norm_dynamic_quant_v2"
    cmd = [compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
           str(REPO_ROOT / "examples" / "cpp" / "add_rms_norm_dynamic_quant_v2.cpp"), f"-I{include}",
           f"-L{libdir}", "-lascendcl", "-lnnopbase", "-lopapi", f"-Wl,-rpath,{libdir}"]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert build.returncode == 0, build.stderr
    return exe


@pytest.mark.parametrize("soc", SOCS)
def test_cpp_example(cpp_example, soc):
    assert _run([str(cpp_example)], soc) == EXPECTED


@pytest.mark.parametrize("soc", SOCS)
def test_python_port_prints_what_the_cpp_example_prints(soc):
    out = _run([sys.executable, str(REPO_ROOT / "examples" / "add_rms_norm_dynamic_quant_v2.py")], soc)
    assert out == EXPECTED


@pytest.mark.parametrize("soc", SOCS)
def test_pythonic_example(soc):
    out = _run([sys.executable, str(REPO_ROOT / "examples" / "add_rms_norm_dynamic_quant_pythonic.py")], soc)
    lines = out.splitlines()
    assert lines[0] == "y1 = [127, 127, 127, 127, 127, 127, 127, 127] scale1 = ['0.03543306', '0.03543306']"
    assert lines[1] == "y2 = [127, 127, 127, 127, 127, 127, 127, 127] scale2 = ['0.03543306', '0.03543306']"
    assert lines[2] == "x_out = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]"
    error, half_step = (float(v.rstrip(")")) for v in lines[3].split()[5::5])
    assert 0 < error <= half_step * 1.01
