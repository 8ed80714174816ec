"""Load (building it once if needed) the optional accelerator ``_fastcall.c`` of prepared calls.

A prepared launch is a handful of C calls that take well under a microsecond; through ctypes each
costs 0.3-0.5 us of argument conversion, so a pure-Python prepared call is several times slower
than the C sequence.  The accelerator is a small CPython extension whose ``tp_call`` does the common
case in C (see ``_fastcall.c``); everything else stays in Python.

Search order: ``$PYACLNN_FASTCALL_LIB`` (a prebuilt module), ``<package>/_stub/lib/`` (if the package
build made one), then a copy compiled from ``_fastcall.c`` with the system C compiler (``$CC``,
``cc``, ``gcc``, ``clang``) and this interpreter's headers into the cache directory
(``$PYACLNN_CACHE_DIR`` or ``~/.cache/pyaclnn``), keyed by the source's hash and the interpreter.
Any failure means "not available" (``why_unavailable`` says why): prepared calls then run in Python,
with the same results.  ``PYACLNN_FASTPATH=0`` disables it.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

SOURCE = Path(__file__).with_name("_fastcall.c")
MODULE = "_pyaclnn_fastcall"
ABI = 4

_lock = threading.Lock()
_module = None
_tried = False
why_unavailable: str | None = None


def _cache_dir() -> Path:
    if os.environ.get("PYACLNN_CACHE_DIR"):
        return Path(os.environ["PYACLNN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyaclnn"


def _suffix() -> str:
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def _candidates() -> list[Path]:
    out = []
    if os.environ.get("PYACLNN_FASTCALL_LIB"):
        out.append(Path(os.environ["PYACLNN_FASTCALL_LIB"]))
    import pyaclnn
    for entry in getattr(pyaclnn, "__path__", []):
        out.append(Path(entry) / "_stub" / "lib" / (MODULE + _suffix()))
    return out


def _compile() -> Path:
    source = SOURCE.read_bytes()
    include = sysconfig.get_paths().get("include", "")
    tag = hashlib.sha256(source + sys.version.encode() + include.encode()).hexdigest()[:16]
    target = _cache_dir() / f"{MODULE}-{tag}{_suffix()}"
    if target.is_file():
        return target
    if not Path(include, "Python.h").is_file():
        raise RuntimeError(f"no Python.h in {include!r} (install the interpreter's development headers)")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no C compiler (set CC)")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=_suffix())
    os.close(fd)
    try:
        subprocess.run([*cc.split(), "-O2", "-shared", "-fPIC", f"-I{include}", "-o", tmp, str(SOURCE)],
                       check=True, capture_output=True, timeout=120)
        os.replace(tmp, target)          # atomic: concurrent processes never load half a file
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"{' '.join(exc.cmd[:2])} failed: {exc.stderr.decode(errors='replace')[-500:]}") \
            from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


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
                try:
                    _module = _load(_compile())
                except (ImportError, OSError, RuntimeError, TypeError, subprocess.SubprocessError) as exc:
                    errors.append(f"building {SOURCE.name}: {exc}")
                    why_unavailable = "; ".join(errors)
        _tried = True
        return _module


def function_address(fn) -> int:
    """Address of a ctypes foreign function (to hand it to C as a pointer)."""
    import ctypes
    return ctypes.cast(fn, ctypes.c_void_p).value
