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


# ------------------------------------------------------------------------------------------------
# examples/add_rms_norm_dynamic_quant.py: the vendor's V1 sample ported line by line with
# `from pyaclnn.capi import *` (helpers, CHECK_RET, out-parameters by byref)
# ------------------------------------------------------------------------------------------------

V1_PORT = REPO_ROOT / "examples" / "add_rms_norm_dynamic_quant.py"


def _vendor_sample_reference(soc: str) -> str:
    """What the sample prints, from the independent NumPy reference: y1 of x1 = x2 = 0.5, gamma =
    smooth1 = smooth2 = 1.5 (fp16), shape [2, 8], epsilon 1e-6."""
    import numpy as np
    from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant
    x = np.full((2, 8), 0.5, np.float16)
    g = np.full(8, 1.5, np.float16)
    y1 = add_rms_norm_dynamic_quant(x, x, g, g, g, epsilon=1e-6, soc=SOCS[soc], version=1)["y1"]
    return "".join(f"result[{i}] is: {v}\n" for i, v in enumerate(y1.ravel().tolist()))


@pytest.mark.parametrize("soc", SOCS)
def test_v1_port_prints_the_reference_values(soc):
    expected = _vendor_sample_reference(soc)
    assert expected == EXPECTED                      # the vendor's published values: 127 everywhere
    assert _run([sys.executable, str(V1_PORT)], soc) == expected


def test_v1_port_is_written_with_the_c_names():
    source = V1_PORT.read_text()
    assert "from pyaclnn.capi import *" in source
    for helper in ("def GetShapeSize(", "def Init(", "def CreateAclTensor(", "def CHECK_RET(", "def main("):
        assert helper in source
    assert "aclDataType.ACL_FLOAT16" in source and "aclFormat.ACL_FORMAT_ND" in source
    assert "capi." not in source.replace("pyaclnn.capi", "")


def test_v1_port_check_ret_returns_the_status_from_main():
    """CHECK_RET returns from the function it is in, as the macro does: Init fails at aclrtSetDevice
    (no device: 107001 ACL_ERROR_RT_INVALID_DEVICEID), main reports it and exits with it (mod 256, as a
    C main returning 107001 would)."""
    proc = subprocess.run([sys.executable, str(V1_PORT)], capture_output=True, text=True, timeout=60,
                          env=subprocess_env({"PYACLNN_STUB_DEVICE_COUNT": "0"}))
    assert proc.stdout == "aclrtSetDevice failed. ERROR: 107001\nInit acl failed. ERROR: 107001\n"
    assert proc.returncode == 107001 % 256


def test_create_acl_tensor_fills_its_out_parameters(acl):
    """The port of the vendor's CreateAclTensor(hostData, shape, void** deviceAddr, dataType,
    aclTensor** tensor): the caller passes byref(addr), byref(tensor) as C passes &addr, &tensor."""
    import ctypes
    import importlib.util
    from ctypes import byref, c_int16, c_void_p

    from pyaclnn import capi
    spec = importlib.util.spec_from_file_location("arnq_v1_port", V1_PORT)
    port = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(port)

    host = port.vector(c_int16, 6, 0x3C00)
    addr, tensor = c_void_p(), capi.aclTensor_p()
    assert port.CreateAclTensor(host, [2, 3], byref(addr), capi.aclDataType.ACL_FLOAT16, byref(tensor)) == 0
    try:
        assert addr.value and tensor.value
        dtype, fmt, raw = ctypes.c_int(), ctypes.c_int(), c_void_p()
        assert capi.aclGetDataType(tensor, byref(dtype)) == 0 and dtype.value == capi.ACL_FLOAT16
        assert capi.aclGetFormat(tensor, byref(fmt)) == 0 and fmt.value == capi.ACL_FORMAT_ND
        assert capi.aclGetRawTensorAddr(tensor, byref(raw)) == 0 and raw.value == addr.value
        back = (c_int16 * 6)()
        assert capi.aclrtMemcpy(back, 12, addr, 12, capi.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert list(back) == [0x3C00] * 6
    finally:
        assert capi.aclDestroyTensor(tensor) == 0
        assert capi.aclrtFree(addr) == 0
