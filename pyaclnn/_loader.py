"""Find and open the CANN libraries: a real toolkit, or the bundled CPU stub.

``PYACLNN_BACKEND`` chooses:

* ``auto`` (default) -- a real toolkit when one is found and its libraries load, else the stub;
* ``cann``  -- a real toolkit, or an error listing every directory tried;
* ``stub``  -- the bundled stub (``PYACLNN_STUB_LIBDIR`` overrides where it is).

Toolkit roots are tried in order: ``$ASCEND_HOME_PATH``, ``$ASCEND_TOOLKIT_HOME``,
``/usr/local/Ascend/ascend-toolkit/latest``, ``/usr/local/Ascend/cann``; each as ``<root>/lib64`` and
``<root>/<arch>-linux/lib64``.  Base libraries (runtime, nnopbase) are opened with ``RTLD_GLOBAL`` by
absolute path (changing ``LD_LIBRARY_PATH`` inside a running process has no effect on ``dlopen``).
Operator libraries follow in the order torch_npu and nnopbase search them: custom vendors, the split
``libopapi_*.so`` of newer toolkits, ``libopapi.so``, the per-domain ``libaclnn_*.so`` of 8.x.

Symbols are resolved lazily: :meth:`Backend.symbol` returns a fresh ctypes function object from the
first library, in that order, that exports the name (``dlsym`` also searches each library's
dependencies, as CANN's own consumers rely on).  One process-wide :class:`Backend`, built on first use.
"""
from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from ._mutex import mutex as _mutex

from . import _env
from . import errors as _errors
from ._stubpaths import ENV_STUB_LIBDIR, NOT_BUILT, _package_dirs, stub_include_dir, stub_library_dir  # noqa: F401
from .errors import BackendError, MissingSymbolError

__all__ = ["Backend", "BackendError", "backend", "is_loaded", "stub_include_dir", "stub_library_dir"]

ENV_BACKEND = "PYACLNN_BACKEND"
BACKENDS = ("auto", "cann", "stub")
TOOLKIT_ENV_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
TOOLKIT_DEFAULT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")

# Runtime: CANN 9.x implements it in libacl_rt.so and keeps libascendcl.so for compatibility.
RUNTIME_LIBS = ("libacl_rt.so", "libascendcl.so")
NNOPBASE_LIB = "libnnopbase.so"
# nnopbase's own priority for the per-repository operator libraries of newer toolkits (legacy last).
SPLIT_OPAPI_ORDER = ("math", "nn", "cv", "transformer", "oam", "legacy")
OPAPI_LIB = "libopapi.so"
DOMAIN_LIBS = ("libaclnn_ops_infer.so", "libaclnn_ops_train.so", "libaclnn_math.so",
               "libaclnn_sparse.so", "libaclnn_fft.so", "libaclnn_rand.so")
STUB_LIBS = ("libascendcl.so", "libnnopbase.so", "libopapi.so")
# The file that marks a toolkit tree made by pyaclnn._toolkit (the emulator dressed as CANN).
MARKER = "pyaclnn_emulator.info"


def is_emulated_toolkit(root: str | os.PathLike) -> bool:
    """True for a tree made by :func:`pyaclnn._toolkit.toolkit_root` (not to be taken for real CANN)."""
    return (Path(root) / MARKER).is_file()


@dataclass
class Backend:
    """The opened libraries of this process, in symbol search order."""

    name: str                                   # "cann" or "stub"
    libdir: str                                 # directory of the base libraries
    toolkit_root: str | None                    # the toolkit root for "cann"; None for the stub
    libraries: list[tuple[str, ctypes.CDLL]]    # (absolute path, handle), base first
    skipped: list[tuple[str, str]] = field(default_factory=list)    # (path, why) not loaded
    fallback_reason: str | None = None          # why `auto` did not take a toolkit

    @property
    def library_paths(self) -> list[str]:
        return [p for p, _ in self.libraries]

    def find(self, name: str) -> str | None:
        """Path of the first library that exports ``name``, or None."""
        for path, lib in self.libraries:
            try:
                lib[name]
            except AttributeError:
                continue
            return path
        return None

    def symbol(self, name: str):
        """A new ctypes function object for ``name`` (caller sets argtypes/restype).

        Raises :class:`pyaclnn.errors.MissingSymbolError` naming the libraries searched.
        """
        for _, lib in self.libraries:
            try:
                return lib[name]        # __getitem__ builds a fresh, uncached function object
            except AttributeError:
                continue
        raise MissingSymbolError(name, self.library_paths, self.name)

    def describe(self) -> dict:
        """JSON-ready summary (used by ``python -m pyaclnn info``)."""
        return {"backend": self.name, "toolkit_root": self.toolkit_root, "libdir": self.libdir,
                "libraries": self.library_paths,
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
                "fallback_reason": self.fallback_reason}


# ------------------------------------------------------------------------------------------------
# Where things are
# ------------------------------------------------------------------------------------------------

def toolkit_candidates() -> list[tuple[str, str]]:
    """(root, lib64 dir) pairs tried for a real toolkit, in order, without duplicates."""
    roots = [r for r in map(_env.path, TOOLKIT_ENV_VARS) if r]
    roots += list(TOOLKIT_DEFAULT_ROOTS)
    arch = platform.machine()
    out, seen = [], set()
    for root in roots:
        for libdir in (Path(root) / "lib64", Path(root) / f"{arch}-linux" / "lib64"):
            key = str(libdir)
            if key not in seen:
                seen.add(key)
                out.append((root, key))
    return out


def _has_base_libs(libdir: Path) -> bool:
    return (libdir / NNOPBASE_LIB).is_file() and any((libdir / n).is_file() for n in RUNTIME_LIBS)


def _opp_path(root: str) -> Path:
    # set_env.sh exports ASCEND_OPP_PATH=<root>/opp; assume the same when it is not set.
    return Path(_env.path("ASCEND_OPP_PATH") or Path(root) / "opp")


def custom_op_libraries(root: str) -> list[Path]:
    """Vendor ``libcust_opapi.so`` files, highest priority first (torch_npu / nnopbase order)."""
    out = []
    for entry in _env.path_list("ASCEND_CUSTOM_OPP_PATH"):
        out.append(Path(entry) / "op_api" / "lib" / "libcust_opapi.so")
    vendors = _opp_path(root) / "vendors"
    config = vendors / "config.ini"
    if config.is_file():
        for line in config.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "load_priority":
                for vendor in value.split(","):
                    if vendor.strip():
                        out.append(vendors / vendor.strip() / "op_api" / "lib" / "libcust_opapi.so")
    return out


def operator_libraries(root: str, libdir: str) -> list[Path]:
    """Existing operator libraries of a toolkit, in search order (custom, split, opapi, domain)."""
    lib64 = Path(libdir)
    builtin = (_opp_path(root) / "built-in" / "op_impl" / "ai_core" / "tbe" / "op_api" / "lib"
               / "linux" / platform.machine())
    order = custom_op_libraries(root)
    order += [lib64 / f"libopapi_{n}.so" for n in SPLIT_OPAPI_ORDER]
    known = {f"libopapi_{n}.so" for n in SPLIT_OPAPI_ORDER}
    if lib64.is_dir():
        order += sorted(p for p in lib64.glob("libopapi_*.so") if p.name not in known)
    order += [lib64 / OPAPI_LIB, builtin / OPAPI_LIB]
    order += [d / n for n in DOMAIN_LIBS for d in (lib64, builtin)]
    out, seen = [], set()
    for p in order:
        if p.is_file():
            real = os.path.realpath(p)
            if real not in seen:        # lib64 entries are often symlinks into opp/
                seen.add(real)
                out.append(p)
    return out


# ------------------------------------------------------------------------------------------------
# Opening
# ------------------------------------------------------------------------------------------------

def _open(path: Path, global_: bool) -> ctypes.CDLL:
    mode = ctypes.RTLD_GLOBAL if global_ else ctypes.RTLD_LOCAL
    return ctypes.CDLL(str(path), mode=mode)


def _open_toolkit(root: str, libdir: str) -> Backend:
    lib64 = Path(libdir)
    libs, skipped = [], []
    runtime = [lib64 / n for n in RUNTIME_LIBS if (lib64 / n).is_file()]
    for path in runtime + [lib64 / NNOPBASE_LIB]:       # failures here are fatal (OSError)
        libs.append((str(path), _open(path, True)))
    for path in operator_libraries(root, libdir):
        try:
            libs.append((str(path), _open(path, False)))
        except OSError as exc:                          # one broken op library is not fatal
            skipped.append((str(path), str(exc)))
    return Backend("cann", libdir, root, libs, skipped)


def _open_stub() -> Backend:
    libdir = stub_library_dir()
    if libdir is None:
        raise BackendError(NOT_BUILT + " (looked for _stub/lib under "
                           + ", ".join(str(p) for p in _package_dirs()) + ")")
    missing = [n for n in STUB_LIBS if not (Path(libdir) / n).is_file()]
    if missing:
        raise BackendError(f"stub library directory {libdir} lacks {', '.join(missing)}")
    libs = [(str(Path(libdir) / n), _open(Path(libdir) / n, True)) for n in STUB_LIBS]
    return Backend("stub", libdir, None, libs)


def _find_toolkit() -> tuple[Backend | None, list[str]]:
    """First toolkit whose libraries load; plus a log of what was tried and why it failed."""
    tried = []
    for root, libdir in toolkit_candidates():
        if is_emulated_toolkit(root):   # exec / preload_stub point ASCEND_HOME_PATH at our own tree
            tried.append(f"{root}: pyaclnn's emulated toolkit (the stub), not CANN")
            continue
        if not Path(libdir).is_dir():
            tried.append(f"{libdir}: no such directory")
            continue
        if not _has_base_libs(Path(libdir)):
            tried.append(f"{libdir}: no {NNOPBASE_LIB} + {' or '.join(RUNTIME_LIBS)}")
            continue
        try:
            return _open_toolkit(root, libdir), tried
        except OSError as exc:
            tried.append(f"{libdir}: {exc}")
    return None, tried


def requested_backend() -> str:
    value = os.environ.get(ENV_BACKEND, "auto").strip().lower() or "auto"
    if value not in BACKENDS:
        raise BackendError(f"{ENV_BACKEND}={value!r}: expected one of {', '.join(BACKENDS)}")
    return value


def _load() -> Backend:
    wanted = requested_backend()
    if wanted == "stub":
        return _open_stub()
    toolkit, tried = _find_toolkit()
    if toolkit is not None:
        return toolkit
    if wanted == "cann":
        raise BackendError(f"{ENV_BACKEND}=cann but no CANN toolkit could be loaded; tried:\n  "
                           + "\n  ".join(tried)
                           + "\nSet ASCEND_HOME_PATH (source the toolkit's set_env.sh).")
    reason = "no CANN toolkit found (" + "; ".join(tried) + ")"
    try:
        backend = _open_stub()
    except BackendError as exc:
        raise BackendError(f"{exc}\nand {reason}") from None
    backend.fallback_reason = reason
    return backend


_lock = _mutex()
_backend: Backend | None = None


def backend() -> Backend:
    """The process-wide loaded backend (opened on first call; thread-safe)."""
    b = _backend
    if b is not None:
        return b
    return _load_once()


def _load_once() -> Backend:
    global _backend
    with _lock:
        if _backend is None:
            b = _load()
            _errors.read_recent_message = _recent_message_reader(b)
            _backend = b
        return _backend


def _recent_message_reader(b: Backend):
    """``aclGetRecentErrMsg`` of the loaded libraries, for pyaclnn.errors (which does not import
    capi: capi's bindings raise pyaclnn.errors' exceptions)."""
    try:
        fn = b.symbol("aclGetRecentErrMsg")
    except MissingSymbolError:
        return None
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    return fn


def is_loaded() -> bool:
    return _backend is not None
