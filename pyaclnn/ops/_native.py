"""Load (building it once if needed) the optional accelerator ``_fastcall.c`` of prepared calls.

A prepared launch is a handful of C calls that take well under a microsecond; through ctypes each
costs 0.3-0.5 us of argument conversion, so a pure-Python prepared call is several times slower
than the C sequence.  The accelerator is a small CPython extension whose ``tp_call`` does the common
case in C (see ``_fastcall.c``); everything else stays in Python.

The package build compiles it next to the emulator's libraries (CMakeLists.txt). Search order:
``$PYACLNN_FASTCALL_LIB`` (a prebuilt module), the emulator library directory in use
(``$PYACLNN_STUB_LIBDIR`` for a development build), then ``<package>/_stub/lib/``. Not found or not
loadable means "not available" (``why_unavailable`` says why): prepared calls then run in Python,
with the same results.  ``PYACLNN_FASTPATH=0`` disables it.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sysconfig
import threading
from pathlib import Path

MODULE = "_pyaclnn_fastcall"
ABI = 6

_lock = threading.Lock()
_module = None
_tried = False
why_unavailable: str | None = None


def _suffix() -> str:
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def _candidates() -> list[Path]:
    out = []
    if os.environ.get("PYACLNN_FASTCALL_LIB"):
        out.append(Path(os.environ["PYACLNN_FASTCALL_LIB"]))
    from .._loader import stub_library_dir
    try:
        out.append(Path(stub_library_dir()) / (MODULE + _suffix()))
    except Exception:  # no emulator directory: a real toolkit may still be in use
        pass
    import pyaclnn
    for entry in getattr(pyaclnn, "__path__", []):
        out.append(Path(entry) / "_stub" / "lib" / (MODULE + _suffix()))
    return out


def _load(path: Path):
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(path))
    spec = importlib.util.spec_from_file_location(MODULE, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    if module.abi() != ABI:
        raise RuntimeError(f"{path} has ABI {module.abi()}, expected {ABI}")
    from ..runtime import Memory
    from ..tensor import Tensor
    module.configure(Tensor, Memory)
    from .. import _shutdown
    _shutdown.on_closing(module.set_closing)
    return module


def module():
    """The accelerator module, or None (then ``why_unavailable`` says why)."""
    global _module, _tried, why_unavailable
    if _tried:
        return _module
    with _lock:
        if _tried:
            return _module
        if os.environ.get("PYACLNN_FASTPATH", "1").strip().lower() in ("0", "off", "no", "false"):
            why_unavailable = "disabled by PYACLNN_FASTPATH=0"
        else:
            errors = []
            for path in _candidates():
                if path.is_file():
                    try:
                        _module = _load(path)
                        break
                    except (ImportError, OSError, RuntimeError, TypeError) as exc:
                        errors.append(f"{path}: {exc}")
            if _module is None:
                why_unavailable = "; ".join(errors) or f"{MODULE}{_suffix()} was not built"
        _tried = True
        return _module


def function_address(fn) -> int:
    """Address of a ctypes foreign function (to hand it to C as a pointer)."""
    import ctypes
    return ctypes.cast(fn, ctypes.c_void_p).value
