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
import sys
import sysconfig
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


def test_op_compiler_stores_options_and_refuses_aclop(acl, recent_error):
    lib = ctypes.CDLL(str(LIBDIR / "libacl_op_compiler.so"))
    set_opt = fn(lib, "aclSetCompileopt", ctypes.c_int, ctypes.c_int, ctypes.c_char_p)
    assert set_opt(11, b"1") == 0                      # ACL_OP_DETERMINISTIC
    assert set_opt(17, b"1") == INVALID_PARAM and "opt 17 is not valid" in recent_error()
    assert set_opt(0, None) == INVALID_PARAM and "value is NULL" in recent_error()
    run = lib.aclopCompileAndExecuteV2
    run.restype = ctypes.c_int
    assert run(b"Add", 0, None, None, 0, None, None, None, 0, 0, None, None) == FEATURE_NOT_SUPPORT
    assert "aclopCompileAndExecuteV2(207000): aclop operator Add is not emulated" in recent_error()   # test_aclop.py


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
    # the interpreter libhccl starts inside a C program (docs/hccl.md): this one, and its shared libpython
    assert env["PYACLNN_PYTHON"] == sys.executable
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        assert Path(env["PYACLNN_LIBPYTHON"]).name == sysconfig.get_config_var("LDLIBRARY"), env
    else:
        assert "PYACLNN_LIBPYTHON" not in env
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


# ------------------------------------------------------------------------------------------------
# The acl* / aclrt* names torch_npu 2.13 looks up by name: torch_npu terminates
# the process ("Failed to find function aclrtGetPrimaryCtxState") when a runtime function it reaches is
# absent. tests/data/torch_npu_2.13_acl_runtime_names.txt: every such name in the wheel's libraries
# (`strings`, measured on torch-npu 2.13.0; ../shared/torch_npu/FACTS.md).
# ------------------------------------------------------------------------------------------------

NAMES_2_13 = Path(__file__).parent / "data" / "torch_npu_2.13_acl_runtime_names.txt"
# Names of that list the emulator deliberately does not export, and why (docs/torch_npu.md).
ABSENT = {
    # torch_npu treats their absence as "no value"; present, they would have to report CANN's defaults.
    "aclGetCompileopt": "absence means no value", "aclGetCompileoptSize": "absence means no value",
    # Labels of torch_npu's call log (ACL_CALL_LOG), not functions: it binds aclprof*, aclrtQueryEvent*Status.
    "aclProfilingInit": "log label", "aclProfilingStart": "log label", "aclProfilingStop": "log label",
    "aclProfilingCreateConfig": "log label", "aclProfilingDestroyConfig": "log label",
    "aclQueryEventRecordedStatus": "log label", "aclQueryEventWaitStatus": "log label",
    "aclStressDetect": "log label (torch_npu looks up the operator StressDetect)",
    # aclnn-style operators of ops-math (libopapi), looked up like any operator: a missing one raises.
    "aclRfft1D": "operator", "aclRfft1DGetWorkspaceSize": "operator",
    "aclStft": "operator", "aclStftGetWorkspaceSize": "operator",
}


def test_every_runtime_name_torch_npu_looks_up_is_exported():
    names = {n.strip() for n in NAMES_2_13.read_text().splitlines() if n.strip()}
    assert len(names) == 161
    exported = set()
    for lib in ("libascendcl.so", "libnnopbase.so", "libacl_op_compiler.so"):
        exported |= dynamic_info(str(LIBDIR / lib)).defined
    assert sorted(names - exported - set(ABSENT)) == []
    assert sorted(set(ABSENT) & exported) == []          # the documented absences are really absent
    assert set(ABSENT) <= names


def test_op_compiler_graph_dumps_are_refused(recent_error):
    lib = ctypes.CDLL(str(LIBDIR / "libacl_op_compiler.so"))
    assert fn(lib, "aclCreateGraphDumpOpt", ctypes.c_void_p)() is None
    assert "aclCreateGraphDumpOpt(207000)" in recent_error()
    assert fn(lib, "aclDestroyGraphDumpOpt", ctypes.c_int, ctypes.c_void_p)(None) == 0    # NULL: nothing to do
    assert fn(lib, "aclDestroyGraphDumpOpt", ctypes.c_int, ctypes.c_void_p)(0x1000) == FEATURE_NOT_SUPPORT
    gen = lib.aclGenGraphAndDumpForOp
    gen.restype = ctypes.c_int
    assert gen(b"Add", 0, None, None, 0, None, None, None, 0, b"/tmp", None) == FEATURE_NOT_SUPPORT
    assert "aclGenGraphAndDumpForOp(207000)" in recent_error()


def test_op_wait_timeout_is_stored():
    code, out, err = helpers.run_python("""
        import ctypes, pyaclnn
        lib = ctypes.CDLL(pyaclnn.get_library_dir() + "/libascendcl.so")
        print(lib.aclrtSetOpWaitTimeout(ctypes.c_uint32(1868)))
    """, env_overrides={"PYACLNN_STUB_TRACE_COMPAT": "1"})
    assert code == 0 and out.strip() == "0", err
    assert "aclrtSetOpWaitTimeout: 1868 s stored" in err


class StreamAttrValue(ctypes.Union):   # aclrtStreamAttrValue (acl_rt.h)
    _fields_ = [("failureMode", ctypes.c_uint64), ("overflowSwitch", ctypes.c_uint32),
                ("userCustomTag", ctypes.c_uint32), ("cacheOpInfoSwitch", ctypes.c_uint32),
                ("streamPriority", ctypes.c_uint32), ("reserve", ctypes.c_uint32 * 4)]


def test_stream_attributes_are_stored(acl, ascendcl, stream, recent_error):
    vp, u32 = ctypes.c_void_p, ctypes.c_uint32
    set_a = fn(ascendcl, "aclrtSetStreamAttribute", ctypes.c_int, vp, ctypes.c_int, ctypes.POINTER(StreamAttrValue))
    get_a = fn(ascendcl, "aclrtGetStreamAttribute", ctypes.c_int, vp, ctypes.c_int, ctypes.POINTER(StreamAttrValue))
    set_mode = fn(ascendcl, "aclrtSetStreamFailureMode", ctypes.c_int, vp, ctypes.c_uint64)
    set_ovf = fn(ascendcl, "aclrtSetStreamOverflowSwitch", ctypes.c_int, vp, u32)
    get_ovf = fn(ascendcl, "aclrtGetStreamOverflowSwitch", ctypes.c_int, vp, ctypes.POINTER(u32))

    def get(attr):
        v = StreamAttrValue()
        assert get_a(stream, attr, ctypes.byref(v)) == 0
        return v
    assert get(1).failureMode == 0                                     # ACL_CONTINUE_ON_FAILURE
    assert set_mode(stream, 1) == 0 and get(1).failureMode == 1        # ACL_STOP_ON_FAILURE, as torch_npu sets
    assert set_mode(stream, 0) == FEATURE_NOT_SUPPORT and "stop mode to continue mode" in recent_error()
    flag = u32(9)
    assert get_ovf(stream, ctypes.byref(flag)) == 0 and flag.value == 0
    assert set_ovf(stream, 1) == 0 and get_ovf(stream, ctypes.byref(flag)) == 0 and flag.value == 1
    assert get(2).overflowSwitch == 1
    assert set_ovf(stream, 2) == INVALID_PARAM and "flag 2" in recent_error()
    assert set_a(stream, 3, ctypes.byref(StreamAttrValue(userCustomTag=77))) == 0 and get(3).userCustomTag == 77
    assert set_a(stream, 4, ctypes.byref(StreamAttrValue(cacheOpInfoSwitch=1))) == 0 and get(4).cacheOpInfoSwitch == 1
    assert set_a(stream, 4, ctypes.byref(StreamAttrValue(cacheOpInfoSwitch=2))) == 107000
    assert set_a(stream, 5, ctypes.byref(StreamAttrValue(streamPriority=9))) == 0 and get(5).streamPriority == 7
    assert set_a(stream, 0, ctypes.byref(StreamAttrValue())) == 107000 and "stmAttrType 0" in recent_error()
    assert set_a(stream, 1, None) == INVALID_PARAM and get_a(stream, 1, None) == INVALID_PARAM
    assert set_mode(0x1234, 1) == 107000
    recent_error()
    # A destroyed and reused stream object starts from the defaults.
    s = ctypes.c_void_p()
    from pyaclnn import capi
    for _ in range(3):
        assert capi.aclrtCreateStream(ctypes.byref(s)) == 0
        v = StreamAttrValue()
        assert get_a(s, 1, ctypes.byref(v)) == 0 and v.failureMode == 0
        assert set_mode(s, 1) == 0
        assert capi.aclrtDestroyStream(s) == 0


def test_core_limits(acl, ascendcl, stream, recent_error):
    vp, u32, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
    set_d = fn(ascendcl, "aclrtSetDeviceResLimit", ctypes.c_int, i32, ctypes.c_int, u32)
    get_d = fn(ascendcl, "aclrtGetDeviceResLimit", ctypes.c_int, i32, ctypes.c_int, ctypes.POINTER(u32))
    reset_d = fn(ascendcl, "aclrtResetDeviceResLimit", ctypes.c_int, i32)
    set_s = fn(ascendcl, "aclrtSetStreamResLimit", ctypes.c_int, vp, ctypes.c_int, u32)
    get_s = fn(ascendcl, "aclrtGetStreamResLimit", ctypes.c_int, vp, ctypes.c_int, ctypes.POINTER(u32))
    reset_s = fn(ascendcl, "aclrtResetStreamResLimit", ctypes.c_int, vp)
    use = fn(ascendcl, "aclrtUseStreamResInCurrentThread", ctypes.c_int, vp)
    unuse = fn(ascendcl, "aclrtUnuseStreamResInCurrentThread", ctypes.c_int, vp)
    get_t = fn(ascendcl, "aclrtGetResInCurrentThread", ctypes.c_int, ctypes.c_int, ctypes.POINTER(u32))
    v = u32()

    def read(call, *args):
        assert call(*args, ctypes.byref(v)) == 0
        return v.value
    assert read(get_d, 0, 0) == 32 and read(get_d, 0, 1) == 64            # Ascend950PR: the SoC's cores
    assert set_d(0, 0, 10) == 0 and read(get_d, 0, 0) == 10
    assert set_d(0, 0, 33) == 107000 and "less than or equal to 32" in recent_error()
    assert read(get_s, stream, 0) == 10                                   # a stream without its own: the device's
    assert set_s(stream, 1, 5) == 0 and read(get_s, stream, 1) == 5
    assert read(get_t, 1) == 64
    assert use(stream) == 0 and read(get_t, 1) == 5 and read(get_t, 0) == 10
    assert unuse(stream) == 0 and read(get_t, 1) == 64
    assert reset_s(stream) == 0 and read(get_s, stream, 1) == 64
    assert reset_d(0) == 0 and read(get_d, 0, 0) == 32
    assert get_d(0, 2, ctypes.byref(v)) == 107000 and "type 2" in recent_error()
    assert get_d(0, 0, None) == INVALID_PARAM and get_t(0, None) == INVALID_PARAM
    assert set_d(7, 0, 1) == 107001 and reset_d(-1) == 107001
    assert set_s(stream, 0, 40) == 107000
    recent_error()


def test_fault_queries_report_no_fault(acl, ascendcl, recent_error):
    class MemUceInfo(ctypes.Structure):       # aclrtMemUceInfo (acl_rt.h)
        _fields_ = [("addr", ctypes.c_void_p), ("len", ctypes.c_size_t), ("reserved", ctypes.c_size_t * 14)]

    class ErrorInfo(ctypes.Structure):        # aclrtErrorInfo: the union's largest member is the UCE array
        _fields_ = [("tryRepair", ctypes.c_uint8), ("hasDetail", ctypes.c_uint8), ("reserved", ctypes.c_uint8 * 2),
                    ("errorType", ctypes.c_int), ("detail", ctypes.c_size_t * (1 + 20 * 16))]

    class Utilization(ctypes.Structure):      # aclrtUtilizationInfo
        _fields_ = [("cube", ctypes.c_int32), ("vector", ctypes.c_int32), ("aicpu", ctypes.c_int32),
                    ("memory", ctypes.c_int32), ("extend", ctypes.c_void_p)]
    info = ErrorInfo(tryRepair=1, hasDetail=1, errorType=5)
    get_err = fn(ascendcl, "aclrtGetErrorVerbose", ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ErrorInfo))
    repair = fn(ascendcl, "aclrtRepairError", ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ErrorInfo))
    assert get_err(0, ctypes.byref(info)) == 0 and (info.tryRepair, info.hasDetail, info.errorType) == (0, 0, 0)
    assert get_err(0, None) == INVALID_PARAM and get_err(4, ctypes.byref(info)) == 107001
    assert repair(0, ctypes.byref(ErrorInfo(tryRepair=0))) == 107000
    assert repair(0, ctypes.byref(ErrorInfo(tryRepair=1, errorType=0))) == 0          # nothing to repair
    assert repair(0, ctypes.byref(ErrorInfo(tryRepair=1, errorType=1))) == FEATURE_NOT_SUPPORT
    assert repair(0, ctypes.byref(ErrorInfo(tryRepair=1, errorType=4))) == 107000
    arr, n = (MemUceInfo * 4)(), ctypes.c_size_t(9)
    get_uce = fn(ascendcl, "aclrtGetMemUceInfo", ctypes.c_int, ctypes.c_int32, ctypes.POINTER(MemUceInfo),
                 ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t))
    uce_repair = fn(ascendcl, "aclrtMemUceRepair", ctypes.c_int, ctypes.c_int32, ctypes.POINTER(MemUceInfo),
                    ctypes.c_size_t)
    assert get_uce(0, arr, 4, ctypes.byref(n)) == 0 and n.value == 0
    assert get_uce(0, None, 4, ctypes.byref(n)) == INVALID_PARAM
    assert uce_repair(0, arr, 0) == 0 and uce_repair(0, arr, 1) == FEATURE_NOT_SUPPORT
    assert uce_repair(0, arr, 21) == INVALID_PARAM
    arr[0].reserved[2] = 1
    assert uce_repair(0, arr, 1) == INVALID_PARAM and "reserved" in recent_error()
    util = Utilization(1, 2, 3, 4, None)
    get_util = fn(ascendcl, "aclrtGetDeviceUtilizationRate", ctypes.c_int, ctypes.c_int32,
                  ctypes.POINTER(Utilization))
    assert get_util(0, ctypes.byref(util)) == 0 and (util.cube, util.vector, util.aicpu, util.memory) == (-1,) * 4
    assert get_util(0, ctypes.byref(Utilization(extend=8))) == INVALID_PARAM
    recent_error()
