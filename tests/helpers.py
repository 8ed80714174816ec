"""Small helpers that keep tests short: subprocess runner, device buffers, aclTensor creation."""
from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from pyaclnn import capi
from pyaclnn.errors import check

REPO_ROOT = Path(__file__).resolve().parent.parent


class StubCounts(ctypes.Structure):
    """pyaclnn_stub_counts (native_stubs/src/internal/pyaclnn_stub.h), written here from the header
    (not from pyaclnn._stubinfo): a field the header gains must be added here, or the stub writes
    past this struct."""
    _fields_ = [(name, ctypes.c_int64) for name in (
        "device_allocations", "device_bytes", "host_allocations", "streams", "events", "contexts",
        "tensors", "scalars", "arrays", "tensor_lists", "scalar_lists", "executors", "host_registrations")]


def subprocess_env(env_overrides: dict | None = None) -> dict:
    """This process's environment with the repo on PYTHONPATH; a value of None removes a variable."""
    env = dict(os.environ)
    paths = [str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    for key, value in (env_overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def run_python(code: str, env_overrides: dict | None = None, timeout: float = 60,
               args: list[str] | None = None, cwd: str | os.PathLike | None = None):
    """Run ``code`` (dedented) in a fresh interpreter; return (returncode, stdout, stderr).

    The child inherits PYTHONPATH (plus the repo root), PYACLNN_STUB_LIBDIR and PYACLNN_BACKEND.
    """
    cmd = [sys.executable, "-c", textwrap.dedent(code)] + list(args or [])
    proc = subprocess.run(cmd, env=subprocess_env(env_overrides), capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def run_result_child(script: str | os.PathLike, args: list[str] | None = None, stdin: str | None = None,
                     soc: str = "Ascend950PR", timeout: float = 600, emulated: bool = True) -> dict:
    """Runs a child script (under ``python -m pyaclnn exec`` unless not `emulated`, torch_npu's warnings
    off) that prints its result as one line ``RESULT <json>``; returns that JSON. A child that fails or
    prints no result fails the test with its stderr."""
    cmd = [sys.executable, str(script), *(args or [])]
    if emulated:
        cmd = [sys.executable, "-m", "pyaclnn", "exec", "--", *cmd]
    proc = subprocess.run(cmd, input=stdin, env=subprocess_env({"PYACLNN_STUB_SOC": soc,
                                                                "TORCH_NPU_WARNING_DISABLE": "1"}),
                          capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, \
        f"{Path(script).name} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def run_module(module_args: list[str], env_overrides: dict | None = None, timeout: float = 60):
    """``python -m <module_args...>`` in a subprocess; return (returncode, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", *module_args], env=subprocess_env(env_overrides),
                          capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


# ------------------------------------------------------------------------------------------------
# Device memory
# ------------------------------------------------------------------------------------------------

def dev_malloc(nbytes: int) -> int:
    """aclrtMalloc(nbytes) -> device address (int); raises AclError on failure."""
    p = ctypes.c_void_p()
    check(capi.aclrtMalloc(ctypes.byref(p), nbytes, capi.ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    return p.value


def dev_free(ptr: int) -> None:
    check(capi.aclrtFree(ptr), "aclrtFree")


def to_device(arr: np.ndarray) -> int:
    """Copy a numpy array (made contiguous) to a new device allocation; return its address."""
    arr = np.ascontiguousarray(arr)
    ptr = dev_malloc(max(arr.nbytes, 1))
    if arr.nbytes:
        check(capi.aclrtMemcpy(ptr, arr.nbytes, arr.ctypes.data, arr.nbytes,
                               capi.ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
    return ptr


def from_device(ptr: int, shape, dtype) -> np.ndarray:
    """Copy ``prod(shape)`` elements of ``dtype`` from device address ``ptr`` into a new array."""
    out = np.empty(shape, dtype=dtype)
    if out.nbytes:
        check(capi.aclrtMemcpy(out.ctypes.data, out.nbytes, ptr, out.nbytes,
                               capi.ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
    return out


class DeviceArray:
    """A device copy of a numpy array: ``.ptr``, ``.numpy()``, ``.free()``; a context manager."""

    def __init__(self, arr: np.ndarray):
        self.shape, self.dtype = np.shape(arr), np.asarray(arr).dtype
        self.nbytes = np.asarray(arr).nbytes
        self.ptr = to_device(np.asarray(arr))

    def numpy(self) -> np.ndarray:
        return from_device(self.ptr, self.shape, self.dtype)

    def free(self) -> None:
        if self.ptr:
            dev_free(self.ptr)
            self.ptr = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


# ------------------------------------------------------------------------------------------------
# aclTensor
# ------------------------------------------------------------------------------------------------

def int64_array(values):
    values = [int(v) for v in values]
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def contiguous_strides(shape) -> list[int]:
    strides, step = [], 1
    for dim in reversed(list(shape)):
        strides.append(step)
        step *= max(int(dim), 1)
    return strides[::-1]


def create_tensor(shape, acl_dtype: int, data_ptr, strides=None, offset: int = 0,
                  fmt: int = capi.ACL_FORMAT_ND, storage_shape=None) -> int:
    """aclCreateTensor from Python sequences; returns the handle (int). Raises if NULL.

    ``strides``/``offset`` are in elements; storage shape defaults to the view shape, as in the
    vendor samples.
    """
    shape = list(shape)
    strides = contiguous_strides(shape) if strides is None else list(strides)
    storage = shape if storage_shape is None else list(storage_shape)
    handle = capi.aclCreateTensor(int64_array(shape), len(shape), acl_dtype, int64_array(strides),
                                  offset, fmt, int64_array(storage), len(storage), data_ptr)
    if not handle:
        from pyaclnn.errors import recent_error_message
        raise RuntimeError(f"aclCreateTensor returned NULL: {recent_error_message()}")
    return handle


def destroy_tensor(handle: int) -> None:
    check(capi.aclDestroyTensor(handle), "aclDestroyTensor")


class DeviceTensor:
    """A numpy array copied to the device plus an aclTensor describing it; frees both on close."""

    def __init__(self, arr: np.ndarray, acl_dtype: int | None = None):
        from pyaclnn import dtypes
        arr = np.ascontiguousarray(arr)
        self.acl_dtype = dtypes.from_numpy(arr.dtype) if acl_dtype is None else acl_dtype
        self.buffer = DeviceArray(arr)
        self.handle = create_tensor(arr.shape, self.acl_dtype, self.buffer.ptr)

    @property
    def ptr(self) -> int:
        return self.buffer.ptr

    def numpy(self) -> np.ndarray:
        return self.buffer.numpy()

    def close(self) -> None:
        if self.handle:
            destroy_tensor(self.handle)
            self.handle = 0
        self.buffer.free()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def build_c_driver(tmp_path_factory, source: Path, *flags: str) -> Path:
    """Compiles ``source`` (a program of tests/c/) against the stub's headers and libraries, with the
    warnings the tests hold them to; skips the test when there is no C compiler."""
    import shutil

    import pytest

    import pyaclnn

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler on PATH")
    include, libdir = pyaclnn.get_include(), pyaclnn.get_library_dir()
    exe = tmp_path_factory.mktemp(source.stem) / source.stem
    cmd = [compiler, "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-pthread", *flags, "-o", str(exe),
           str(source), f"-I{include}", f"-I{REPO_ROOT / 'native_stubs' / 'src' / 'internal'}",
           f"-L{libdir}", "-lascendcl", "-lnnopbase", "-lopapi", "-lm", f"-Wl,-rpath,{libdir}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return exe
