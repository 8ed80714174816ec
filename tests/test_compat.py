"""The compatibility layer for torch_npu (native_stubs/src/compat/, docs/torch_npu.md), at the C ABI.

* What init needs succeeds and does what it says (values are stored and read back).
* What only has to exist fails honestly: the documented status code, a message for
  aclGetRecentErrMsg, a trace line with PYACLNN_STUB_TRACE_COMPAT=1.
* The libraries carry CANN's sonames; libacl_op_compiler depends on libascendcl, so that dlsym on its
  handle finds the *SysParamOpt functions (as torch_npu's FunctionLoader does).
* The emulated toolkit tree has CANN's layout, and `python -m pyaclnn exec` passes exit codes through.
"""
from __future__ import annotations

import ctypes
import os
import platform
from pathlib import Path

import pytest

import helpers
from pyaclnn import get_library_dir
from pyaclnn._elf import dynamic_info
from pyaclnn._toolkit import COMPAT_LIBS, EMULATOR_VERSION, environment, toolkit_root

LIBDIR = Path(get_library_dir())
FEATURE_NOT_SUPPORT = 207000           # ACL_ERROR_RT_FEATURE_NOT_SUPPORT (rt_error_codes.h)
INVALID_PARAM = 100000                 # ACL_ERROR_INVALID_PARAM
CONTEXT_NULL = 107002                  # ACL_ERROR_RT_CONTEXT_NULL


@pytest.fixture(scope="module")
def ascendcl():
    return ctypes.CDLL(str(LIBDIR / "libascendcl.so"))


def fn(lib, name, restype, *argtypes):
    f = lib[name]
    f.restype, f.argtypes = restype, list(argtypes)
    return f


def test_sonames_and_dependencies():
    for name in COMPAT_LIBS:
        info = dynamic_info(str(LIBDIR / name))
        assert (LIBDIR / name).is_file()
    assert "libascendcl.so" in dynamic_info(str(LIBDIR / "libacl_op_compiler.so")).needed


def test_sys_param_opt_found_through_the_op_compiler_handle():
    # FunctionLoader: dlopen("libacl_op_compiler.so") then dlsym(handle, "aclrtCtxSetSysParamOpt").
    handle = ctypes.CDLL(str(LIBDIR / "libacl_op_compiler.so"))
    for name in ("aclrtCtxSetSysParamOpt", "aclrtGetSysParamOpt", "aclSetCompileopt", "aclopCompileAndExecuteV2"):
        assert getattr(handle, name)
    # Present-and-wrong would break torch_npu's init; absent is what it handles.
    with pytest.raises(AttributeError):
        handle.aclGetCompileoptSize


def test_every_cann_symbol_torch_npu_binds_is_exported():
    # The 84 C symbols libtorch_npu.so binds at load time (FACTS.md), from the real wheel if present.
    torch_npu_lib = None
    try:
        import importlib.util
        spec = importlib.util.find_spec("torch_npu")
        if spec and spec.submodule_search_locations:
            torch_npu_lib = Path(list(spec.submodule_search_locations)[0]) / "lib" / "libtorch_npu.so"
    except (ImportError, ValueError):
        pass
    if not torch_npu_lib or not torch_npu_lib.is_file():
        pytest.skip("torch-npu is not installed (pip install torch==2.13.0 torch-npu==2.13.0)")
    from pyaclnn._torch_npu_check import _CANN_SYMBOL
    needed = {s for s in dynamic_info(str(torch_npu_lib)).undefined if _CANN_SYMBOL.match(s)}
    exported = set()
    for name in ("libascendcl.so", "libacl_op_compiler.so") + COMPAT_LIBS:
        exported |= dynamic_info(str(LIBDIR / name)).defined
    assert len(needed) >= 80
    assert sorted(needed - exported) == []


def test_sat_mode_is_stored(acl, ascendcl, recent_error):
    set_mode = fn(ascendcl, "aclrtSetDeviceSatMode", ctypes.c_int, ctypes.c_int)
    get_mode = fn(ascendcl, "aclrtGetDeviceSatMode", ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    mode = ctypes.c_int(-1)
    for value in (0, 1):
        assert set_mode(value) == 0
        assert get_mode(ctypes.byref(mode)) == 0 and mode.value == value
    assert set_mode(2) == INVALID_PARAM            # ACL_RT_OVERFLOW_MODE_UNDEF is not a mode
    assert "mode 2 is not valid" in recent_error()
    assert get_mode(None) == INVALID_PARAM
    recent_error()


def test_sys_param_opts_per_process_and_per_context(acl, ascendcl, recent_error):
    i64 = ctypes.c_int64
    set_p = fn(ascendcl, "aclrtSetSysParamOpt", ctypes.c_int, ctypes.c_int, i64)
    get_p = fn(ascendcl, "aclrtGetSysParamOpt", ctypes.c_int, ctypes.c_int, ctypes.POINTER(i64))
    set_c = fn(ascendcl, "aclrtCtxSetSysParamOpt", ctypes.c_int, ctypes.c_int, i64)
    get_c = fn(ascendcl, "aclrtCtxGetSysParamOpt", ctypes.c_int, ctypes.c_int, ctypes.POINTER(i64))
    v = i64(-1)
    assert set_p(0, 1) == 0 and get_p(0, ctypes.byref(v)) == 0 and v.value == 1
    assert get_c(0, ctypes.byref(v)) == 0 and v.value == 1     # a context inherits the process value
    assert set_c(0, 0) == 0 and get_c(0, ctypes.byref(v)) == 0 and v.value == 0
    assert get_p(0, ctypes.byref(v)) == 0 and v.value == 1     # ... without changing it
    assert set_c(2, 1) == 0 and get_c(2, ctypes.byref(v)) == 0 and v.value == 1
    assert set_p(3, 0) == INVALID_PARAM and "opt 3 is not valid" in recent_error()
    assert set_c(0, 5) == INVALID_PARAM and "value 5 is not valid" in recent_error()
    set_p(0, 0)


def test_ctx_sys_param_opt_needs_a_context():
    code, out, err = helpers.run_python("""
        import ctypes, pyaclnn
        lib = ctypes.CDLL(pyaclnn.get_library_dir() + "/libascendcl.so")
        lib.aclGetRecentErrMsg.restype = ctypes.c_char_p
        print(lib.aclrtCtxSetSysParamOpt(0, ctypes.c_int64(1)), lib.aclGetRecentErrMsg().decode())
    """)
    assert code == 0, err
    assert out.startswith(f"{CONTEXT_NULL} ") and "no current context" in out


def test_timeouts_and_versions(acl, ascendcl):
    assert fn(ascendcl, "aclrtSetOpExecuteTimeOut", ctypes.c_int, ctypes.c_uint32)(547) == 0
    actual = ctypes.c_uint64()
    v2 = fn(ascendcl, "aclrtSetOpExecuteTimeOutV2", ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64))
    assert v2(1_500_000, ctypes.byref(actual)) == 0 and actual.value == 1_500_000
    assert v2(1, None) == INVALID_PARAM

    class Version(ctypes.Structure):   # aclCANNPackageVersion (acl_rt.h)
        _fields_ = [("version", ctypes.c_char * 128), ("major", ctypes.c_char * 64), ("minor", ctypes.c_char * 64),
                    ("release", ctypes.c_char * 64), ("patch", ctypes.c_char * 64), ("reserved", ctypes.c_char * 128)]
    ver = Version()
    get_cann = fn(ascendcl, "aclsysGetCANNVersion", ctypes.c_int, ctypes.c_int, ctypes.POINTER(Version))
    assert get_cann(0, ctypes.byref(ver)) == 0
    assert ver.version.decode() == EMULATOR_VERSION and (ver.major, ver.minor, ver.release) == (b"0", b"1", b"0")
    assert get_cann(8, ctypes.byref(ver)) == INVALID_PARAM
    buf = ctypes.create_string_buffer(128)
    assert fn(ascendcl, "aclsysGetVersionStr", ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p)(b"runtime", buf) == 0
    assert buf.value.decode() == EMULATOR_VERSION
    pid = ctypes.c_int32()
    assert fn(ascendcl, "aclrtDeviceGetBareTgid", ctypes.c_int, ctypes.c_void_p)(ctypes.byref(pid)) == 0
    assert pid.value == os.getpid()


@pytest.mark.parametrize("name, args, expected", [
    ("aclopSetAttrInt", (None, b"x", 1), FEATURE_NOT_SUPPORT),
    ("aclmdlInitDump", (), FEATURE_NOT_SUPPORT),
    ("aclrtReserveMemAddress", (None, 64, 0, None, 0), FEATURE_NOT_SUPPORT),
    ("aclrtMallocPhysical", (None, 64, None, 0), FEATURE_NOT_SUPPORT),
    ("aclrtIpcMemClose", (b"key",), FEATURE_NOT_SUPPORT),
    ("aclrtIpcGetEventHandle", (None, None), FEATURE_NOT_SUPPORT),
    ("aclrtDeviceTaskAbort", (0, 0), FEATURE_NOT_SUPPORT),
    ("aclrtGetHardwareSyncAddr", (None,), FEATURE_NOT_SUPPORT),
    ("aclrtDeviceCanAccessPeer", (None, 0, 1), FEATURE_NOT_SUPPORT),
    ("aclrtBinaryLoadFromData", (None, 0, None, None), FEATURE_NOT_SUPPORT),
    ("rtKernelLaunch", (None, 1, None, 0, None, None), 0x17),      # hacl_rt.h RT_ERROR_FEATURE_NOT_SUPPROT
    ("MsprofReportApi", (0, None), -1),
])
def test_unsupported_entry_points_fail_honestly(ascendcl, recent_error, name, args, expected):
    f = ascendcl[name]
    f.restype = ctypes.c_int
    recent_error()
    assert f(*args) == expected
    message = recent_error()
    assert f"{name}({expected})" in message and "not supported by the pyaclnn CPU emulator" in message


def test_pointer_returning_entry_points_return_null_with_a_message(ascendcl, recent_error):
    create = fn(ascendcl, "aclCreateTensorDesc", ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
    assert create(0, 0, None, 2) is None
    assert "aclCreateTensorDesc(207000)" in recent_error()
    assert fn(ascendcl, "aclopCreateAttr", ctypes.c_void_p)() is None
    assert "aclop compile-and-run path" in recent_error()
    fn(ascendcl, "aclDestroyTensorDesc", None, ctypes.c_void_p)(None)   # NULL: nothing, as in CANN
    assert recent_error() is None


def test_op_compiler_stores_options_and_refuses_aclop(acl, recent_error):
    lib = ctypes.CDLL(str(LIBDIR / "libacl_op_compiler.so"))
    set_opt = fn(lib, "aclSetCompileopt", ctypes.c_int, ctypes.c_int, ctypes.c_char_p)
    assert set_opt(11, b"1") == 0                      # ACL_OP_DETERMINISTIC
    assert set_opt(17, b"1") == INVALID_PARAM and "opt 17 is not valid" in recent_error()
    assert set_opt(0, None) == INVALID_PARAM and "value is NULL" in recent_error()
    run = lib.aclopCompileAndExecuteV2
    run.restype = ctypes.c_int
    assert run(b"Add", 0, None, None, 0, None, None, None, 0, 0, None, None) == FEATURE_NOT_SUPPORT
    assert "aclopCompileAndExecuteV2(207000)" in recent_error()


def test_trace_line_on_stderr():
    code, out, err = helpers.run_python("""
        import ctypes, pyaclnn
        lib = ctypes.CDLL(pyaclnn.get_library_dir() + "/libascendcl.so")
        print(lib.aclmdlInitDump())
    """, env_overrides={"PYACLNN_STUB_TRACE_COMPAT": "1"})
    assert code == 0 and out.strip() == "207000"
    assert "pyaclnn-stub compat: aclmdlInitDump: not supported (operator data dumps), returned 207000" in err
    code, out, err = helpers.run_python("""
        import ctypes, pyaclnn
        print(ctypes.CDLL(pyaclnn.get_library_dir() + "/libascendcl.so").aclmdlInitDump())
    """)
    assert "pyaclnn-stub compat" not in err


def test_toolkit_tree_layout(tmp_path, monkeypatch):
    monkeypatch.setenv("PYACLNN_TOOLKIT_DIR", str(tmp_path))
    root = toolkit_root()
    assert root.parent == tmp_path and toolkit_root() == root          # created once, then reused
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so") + COMPAT_LIBS:
        assert os.path.realpath(root / "lib64" / name) == os.path.realpath(LIBDIR / name)
    for part in ("opp", "runtime", "compiler", "toolkit"):
        assert f"Version={EMULATOR_VERSION}" in (root / part / "version.info").read_text()
    info = (root / f"{platform.machine()}-linux" / "ascend_toolkit_install.info").read_text()
    assert f"version={EMULATOR_VERSION}\n" in info and f"path={root}/" in info
    env = environment(root, base={"LD_LIBRARY_PATH": "/x"})
    assert env["LD_LIBRARY_PATH"] == f"{root}/lib64:/x"
    assert env["ASCEND_OPP_PATH"] == f"{root}/opp" and env["ASCEND_HOME_PATH"] == str(root)
    # The loader must not take our own tree for a real toolkit.
    code, out, err = helpers.run_python("import pyaclnn; print(pyaclnn.backend_name())",
                                        env_overrides={"PYACLNN_BACKEND": "auto", "ASCEND_HOME_PATH": root,
                                                       "PYACLNN_TOOLKIT_DIR": tmp_path})
    assert code == 0 and out.strip() == "stub", err


def test_exec_sets_the_environment_and_passes_the_exit_code(tmp_path):
    env = {"PYACLNN_TOOLKIT_DIR": tmp_path}
    code, out, err = helpers.run_module(["pyaclnn", "exec", "--", "sh", "-c",
                                         'echo "$ASCEND_HOME_PATH|$ASCEND_OPP_PATH|$LD_LIBRARY_PATH"; exit 7'],
                                        env_overrides=env)
    assert code == 7, err
    home, opp, ld = out.strip().split("|")
    assert Path(home).parent == tmp_path and opp == home + "/opp" and ld.startswith(home + "/lib64")
    code, out, err = helpers.run_module(["pyaclnn", "exec", "--", "no-such-command-xyz"], env_overrides=env)
    assert code == 127 and "cannot run 'no-such-command-xyz'" in err
