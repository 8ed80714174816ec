"""``pyaclnn.preload_stub()``: put the CPU emulator in place of CANN inside a running process.

torch_npu's ``libtorch_npu.so`` has NEEDED entries ``libascendcl.so``, ``libhccl.so`` ... and the
dynamic loader satisfies a NEEDED entry by soname from the libraries already loaded, before it
searches LD_LIBRARY_PATH (which cannot be changed for a running process anyway). So loading the
emulator's libraries with RTLD_GLOBAL first, and setting the ASCEND_* variables that torch_npu's
Python side checks, lets ``import torch_npu`` succeed afterwards in the same process.
"""
from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

from .errors import BackendError

__all__ = ["preload_stub", "loaded_libraries"]

# Base libraries first (the compatibility libraries depend on libascendcl).
_ORDER = ("libascendcl.so", "libnnopbase.so", "libopapi.so", "libacl_op_compiler.so", "libhccl.so",
          "libge_runner.so", "libgraph.so", "libacl_tdt_channel.so")
_handles: list[ctypes.CDLL] = []
_root: Path | None = None


def loaded_libraries() -> dict[str, str]:
    """soname-like basename -> real path of every shared object mapped into this process."""
    out = {}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
                    path = parts[5].strip()
                    out.setdefault(os.path.basename(path), os.path.realpath(path))
    except OSError:
        pass
    return out


def _check_not_too_late(libdir: str) -> None:
    if "torch_npu" in sys.modules:
        raise BackendError("pyaclnn.preload_stub() must run before `import torch_npu`: torch_npu is already "
                           "imported, and its libraries are bound to whatever libascendcl.so it found")
    loaded = loaded_libraries()
    if "libtorch_npu.so" in loaded:
        raise BackendError(f"pyaclnn.preload_stub(): libtorch_npu.so is already loaded ({loaded['libtorch_npu.so']}); "
                           "call preload_stub() before anything imports torch_npu")
    ours = os.path.realpath(libdir)
    for name in ("libascendcl.so", "libacl_rt.so", "libhccl.so", "libnnopbase.so", "libopapi.so"):
        path = loaded.get(name)
        if path and os.path.dirname(path) != ours:
            raise BackendError(f"pyaclnn.preload_stub(): a different {name} is already loaded ({path}); the "
                               f"emulator's ({ours}) cannot replace it in this process. Start a fresh process "
                               "(or use `python -m pyaclnn exec -- CMD`)")
    from ._loader import is_loaded, backend
    if is_loaded() and backend().name != "stub":
        raise BackendError("pyaclnn.preload_stub(): this process already uses a real CANN toolkit "
                           f"({backend().toolkit_root}); the emulator cannot replace it")


def preload_stub() -> Path:
    """Load the emulator's libraries (RTLD_GLOBAL) and set the ASCEND_* variables of its toolkit tree.

    Call it before ``import torch_npu``; afterwards torch_npu (and anything else linked against
    CANN's sonames) runs on the CPU emulator. Idempotent. Also sets ``PYACLNN_BACKEND=stub`` unless
    it is set, so that pyaclnn itself uses the same libraries.

    Returns
    -------
    pathlib.Path
        The emulated toolkit root (``ASCEND_HOME_PATH``).

    Raises
    ------
    pyaclnn.errors.BackendError
        When torch_npu or another libascendcl is already loaded, or the stub cannot be found.
    """
    global _root
    from ._toolkit import environment, toolkit_root
    root = toolkit_root()
    if _root == root:                    # already done in this process (torch_npu may be loaded now)
        return root
    libdir = os.path.realpath(root / "lib64" / "libascendcl.so")
    _check_not_too_late(os.path.dirname(libdir))
    env = environment(root)
    for key in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
                "ASCEND_RUNTIME_PATH", "ASCEND_COMPILER_PATH", "LD_LIBRARY_PATH"):
        os.environ[key] = env[key]       # LD_LIBRARY_PATH: for child processes only
    os.environ.setdefault("PYACLNN_BACKEND", "stub")
    for name in _ORDER:
        path = root / "lib64" / name
        try:
            _handles.append(ctypes.CDLL(os.path.realpath(path), mode=ctypes.RTLD_GLOBAL))
        except OSError as exc:
            raise BackendError(f"pyaclnn.preload_stub(): could not load {path}: {exc}") from None
    _root = root
    return root
