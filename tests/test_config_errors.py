"""Configuration mistakes are caught (a bad PYACLNN_STUB_SOC, a failing demo)
and the package namespace lists what it offers."""
from __future__ import annotations

import json

import pytest

import pyaclnn
from helpers import run_module, run_python

BAD_SOC = {"PYACLNN_BACKEND": "stub", "PYACLNN_STUB_SOC": "foo"}
NAMES = ("Ascend950PR", "Ascend950DT", "Ascend910B4", "Ascend910_9392", "Ascend310P3")


def test_bad_soc_fails_aclinit_with_the_accepted_names():
    rc, out, err = run_python("""
import json
from pyaclnn import capi
status = capi.aclInit(None)
message = capi.aclGetRecentErrMsg().decode()
print(json.dumps([status, message, capi.aclrtGetSocName(), capi.aclrtSetDevice(0)]))
""", BAD_SOC)
    assert rc == 0, err
    status, message, soc, set_status = json.loads(out)
    assert status == 507008 and set_status == 507008          # ACL_ERROR_RT_SOC_VERSION
    assert soc is None                                        # "NULL on failure"
    assert 'PYACLNN_STUB_SOC="foo"' in message
    for name in NAMES:
        assert name in message


def test_bad_soc_raises_a_typed_error_in_python():
    rc, out, err = run_python("""
import numpy as np, pyaclnn
from pyaclnn.errors import AclRuntimeError
try:
    pyaclnn.from_numpy(np.float32([1.0]))
except AclRuntimeError as exc:
    print(exc.code, exc.name)
    print(exc)
""", BAD_SOC)
    assert rc == 0, err
    first, rest = out.split("\n", 1)
    assert first == "507008 ACL_ERROR_RT_SOC_VERSION"
    assert "aclInit failed" in rest and all(name in rest for name in NAMES)


def test_soc_variant_names_are_accepted():
    rc, out, err = run_python("""
from pyaclnn import capi
print(capi.aclInit(None), capi.aclrtGetSocName().decode())
""", {"PYACLNN_BACKEND": "stub", "PYACLNN_STUB_SOC": "Ascend950PR_9599"})
    assert rc == 0, err
    assert out.split() == ["0", "Ascend950PR_9599"]


@pytest.mark.parametrize("args", [["info"], ["info", "--json"]])
def test_info_reports_a_bad_soc_and_fails(args):
    rc, out, err = run_module(["pyaclnn", *args], BAD_SOC)
    assert rc != 0
    assert "507008" in out + err and "Ascend950PR" in out + err


def test_demo_fails_on_a_bad_soc():
    rc, out, err = run_module(["pyaclnn", "demo"], BAD_SOC)
    assert rc != 0
    assert "ACL_ERROR_RT_SOC_VERSION" in err and "Ascend910B4" in err


def test_demo_exits_non_zero_when_any_operator_fails():
    # in a child: the demo finalizes the runtime at its end
    rc, out, err = run_python("""
import sys
from pyaclnn import __main__ as cli

def broken(session):
    raise ValueError("forced failure")

cli.DEMOS = [("broken", broken), ("after", lambda s: print("  after ran"))]
sys.exit(cli.main(["demo"]))
""", {"PYACLNN_BACKEND": "stub"})
    assert rc == 1
    assert "FAILED: ValueError: forced failure" in out
    assert "after ran" in out                                 # the other demos still ran
    assert "1 of the operator demos failed" in err


def test_dir_lists_the_lazy_public_names():
    names = dir(pyaclnn)
    for name in ("from_numpy", "Tensor", "Stream", "Device", "Event", "ops", "empty", "zeros",
                 "current_stream", "empty_cache"):
        assert name in names and name in pyaclnn.__all__
    assert "annotations" not in names and "annotations" not in pyaclnn.__all__
    assert "annotations" not in dir(pyaclnn.ops)


def test_star_import_gives_the_public_names():
    rc, out, err = run_python("""
from pyaclnn import *
print(from_numpy.__name__, Tensor.__name__, ops.__name__, "annotations" in dir())
""", {"PYACLNN_BACKEND": "stub"})
    assert rc == 0, err
    assert out.split() == ["from_numpy", "Tensor", "pyaclnn.ops", "False"]


# ---- over-long path variables ---------------------------------------------------------------
# A 100k-character value made the first stat() fail with a bare "OSError: [Errno 36] File name too
# long" that named no variable; now it is a ConfigError naming the variable and what it should hold.

LONG_PATH_CASES = {
    # variable: what to run (each must reach the code that reads the variable)
    "ASCEND_HOME_PATH": "import numpy as np, pyaclnn; pyaclnn.from_numpy(np.float32([1.0]))",
    "ASCEND_TOOLKIT_HOME": "import numpy as np, pyaclnn; pyaclnn.from_numpy(np.float32([1.0]))",
    "ASCEND_CUSTOM_OPP_PATH": "from pyaclnn.signatures import toolkit_include_dirs; toolkit_include_dirs()",
    "PYACLNN_STUB_LIBDIR": "import numpy as np, pyaclnn; pyaclnn.from_numpy(np.float32([1.0]))",
    "PYACLNN_CAPI_FAST_LIB": "from pyaclnn.capi import _accel; _accel.module()",
    "PYACLNN_FASTCALL_LIB": "from pyaclnn.ops import _native; _native.module()",
    "ASCEND_OPP_PATH": "from pyaclnn._loader import custom_op_libraries; custom_op_libraries('/nonexistent')",
    "PYACLNN_TOOLKIT_DIR": "from pyaclnn._toolkit import _cache_dirs; _cache_dirs()",
    "PYACLNN_CACHE_DIR": "from pyaclnn.signatures.catalog import _cache_dir; _cache_dir()",
    "XDG_CACHE_HOME": "from pyaclnn.signatures.catalog import _cache_dir; _cache_dir()",
}


@pytest.mark.parametrize("variable", sorted(LONG_PATH_CASES))
@pytest.mark.parametrize("value", ["/x" * 50_000, "/opt/" + "y" * 300], ids=["100k", "component"])
def test_an_over_long_path_variable_raises_a_config_error_naming_it(variable, value):
    env = {variable: value}
    if variable.startswith("ASCEND_"):
        env["PYACLNN_BACKEND"] = "auto"        # (the stub backend looks for no toolkit)
    rc, out, err = run_python(f"""
import errno
from pyaclnn import _env
from pyaclnn.errors import ConfigError
try:
    {LONG_PATH_CASES[variable]}
    print("NO ERROR")
except ConfigError as exc:
    assert exc.variable == {variable!r} and exc.code == errno.ENAMETOOLONG, (exc.variable, exc.code)
    assert isinstance(exc, ValueError)
    print("CONFIG", str(exc)[:600])
""", env)
    assert rc == 0, err[-1500:]
    assert out.startswith("CONFIG"), out[:400]
    assert f"{variable} is not a usable path" in out and f"Set {variable} to" in out
    assert "File name too long" not in out and len(out) < 1000      # the value itself is not echoed


def test_a_colon_list_is_checked_entry_by_entry_and_good_paths_pass():
    from pyaclnn import _env
    assert _env.check("ASCEND_HOME_PATH", "/usr/local/Ascend/ascend-toolkit/latest")
    assert _env.check("ASCEND_HOME_PATH", "/" + "a" * _env.NAME_MAX)
    with pytest.raises(pyaclnn.errors.ConfigError, match="one of its components"):
        _env.check("ASCEND_CUSTOM_OPP_PATH", "/" + "a" * (_env.NAME_MAX + 1))
