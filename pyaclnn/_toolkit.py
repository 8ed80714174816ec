"""The emulated CANN toolkit tree: a directory in CANN's install layout whose lib64/ holds the
emulator's libraries, so that programs written for a real toolkit (torch_npu first of all) find
what they look for.

Layout (the parts of ``/usr/local/Ascend/ascend-toolkit/latest`` that torch_npu and set_env.sh use)::

    <root>/lib64/                        symlinks to every library of the stub library directory:
                                         libascendcl, libnnopbase, libopapi, and the compatibility
                                         libraries (libhccl, libacl_op_compiler, libge_runner,
                                         libgraph, libacl_tdt_channel)
    <root>/include                       symlink to the stub's headers
    <root>/opp/        version.info, vendors/        ASCEND_OPP_PATH
    <root>/runtime/    version.info, lib64 -> ../lib64   ASCEND_RUNTIME_PATH
    <root>/compiler/   version.info, lib64 -> ../lib64   ASCEND_COMPILER_PATH
    <root>/toolkit/    version.info
    <root>/<arch>-linux/ascend_toolkit_install.info  (torch_npu's get_cann_version() reads it)
    <root>/version.cfg
    <root>/pyaclnn_emulator.info         marker: this is pyaclnn's emulator, not a real toolkit

Where: created lazily, on first use, in a cache directory (``$PYACLNN_TOOLKIT_DIR``, else
``$XDG_CACHE_HOME/pyaclnn`` or ``~/.cache/pyaclnn``, else the temp directory), one tree per stub
library directory. Why not at install time: an editable install rebuilds the libraries elsewhere,
``PYACLNN_STUB_LIBDIR`` (a sanitizer build) must get its own tree, and site-packages may be
read-only. A tree is built in a temporary directory and renamed into place, so concurrent first uses
are safe. The version string is the one the emulator's ``aclsysGetCANNVersion`` reports.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

from ._loader import MARKER, NOT_BUILT, is_emulated_toolkit, stub_include_dir, stub_library_dir  # noqa: F401
from . import _env
from .errors import BackendError

__all__ = ["EMULATOR_VERSION", "MARKER", "COMPAT_LIBS", "toolkit_root", "environment", "is_emulated_toolkit"]

# Must equal PYACLNN_COMPAT_CANN_VERSION (native_stubs/src/compat/compat.h). Deliberately not a
# CANN release number: torch_npu enables version-gated features only for versions it can parse.
EMULATOR_VERSION = "pyaclnn-emulator-0.1.0"
LAYOUT_VERSION = "1"      # bump when the layout changes: old cached trees are then ignored
COMPAT_LIBS = ("libhccl.so", "libacl_op_compiler.so", "libge_runner.so", "libgraph.so",
               "libacl_tdt_channel.so")
ENV_TOOLKIT_DIR = "PYACLNN_TOOLKIT_DIR"


def _cache_dirs() -> list[Path]:
    out = []
    if _env.path(ENV_TOOLKIT_DIR):
        out.append(Path(os.environ[ENV_TOOLKIT_DIR]))
    xdg = _env.path("XDG_CACHE_HOME")
    out.append(Path(xdg) / "pyaclnn" if xdg else Path.home() / ".cache" / "pyaclnn")
    out.append(Path(tempfile.gettempdir()) / f"pyaclnn-{os.getuid()}")
    return out


def _stub_dirs() -> tuple[str, str | None]:
    libdir = stub_library_dir()
    if libdir is None:
        raise BackendError("the emulated toolkit needs the stub libraries: " + NOT_BUILT)
    missing = [n for n in ("libascendcl.so", "libnnopbase.so", "libopapi.so") + COMPAT_LIBS
               if not os.path.isfile(os.path.join(libdir, n))]
    if missing:
        raise BackendError(f"stub library directory {libdir} lacks {', '.join(missing)}: rebuild pyaclnn "
                           "(pip install -e .) so that the compatibility libraries are built")
    return libdir, stub_include_dir()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _populate(root: Path, libdir: str, include: str | None) -> None:
    arch = platform.machine()
    lib64 = root / "lib64"
    lib64.mkdir(parents=True)
    for name in sorted(os.listdir(libdir)):
        if name.startswith("lib") and name.endswith(".so"):
            (lib64 / name).symlink_to(os.path.join(libdir, name))
    if include:
        (root / "include").symlink_to(include)
    version_info = f"Version={EMULATOR_VERSION}\nversion_dir={EMULATOR_VERSION}\n"
    for part in ("opp", "runtime", "compiler", "toolkit"):
        _write(root / part / "version.info", version_info)
    for part in ("runtime", "compiler"):
        (root / part / "lib64").symlink_to("../lib64")
    (root / "opp" / "vendors").mkdir()
    _write(root / f"{arch}-linux" / "ascend_toolkit_install.info",
           f"package_name=Ascend-cann-toolkit\nversion={EMULATOR_VERSION}\n"
           f"innerversion={EMULATOR_VERSION}\narch={arch}\nos=linux\npath={root}/{arch}-linux\n")
    _write(root / "version.cfg", f"# pyaclnn CPU emulator\nversion={EMULATOR_VERSION}\n")
    _write(root / MARKER, f"pyaclnn CPU emulator of CANN (not a real toolkit)\nlayout={LAYOUT_VERSION}\n"
                          f"version={EMULATOR_VERSION}\nlibdir={libdir}\n")


def _tree_name(libdir: str) -> str:
    key = f"{LAYOUT_VERSION}\0{EMULATOR_VERSION}\0{libdir}".encode()
    return "toolkit-" + hashlib.sha256(key).hexdigest()[:16]


def _is_complete(root: Path, libdir: str) -> bool:
    marker = root / MARKER
    return marker.is_file() and f"libdir={libdir}\n" in marker.read_text() and all(
        (root / "lib64" / n).exists() for n in ("libascendcl.so",) + COMPAT_LIBS)


def toolkit_root() -> Path:
    """The emulated toolkit tree for the current stub library directory (created on first use)."""
    libdir, include = _stub_dirs()
    name = _tree_name(libdir)
    errors = []
    for base in _cache_dirs():
        root = base / name
        if _is_complete(root, libdir):
            return root
        try:
            base.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=base))
        except OSError as exc:
            errors.append(f"{base}: {exc}")
            continue
        try:
            staging.chmod(0o755)          # mkdtemp makes it private; the tree is for everyone
            _populate(staging, libdir, include)
            # Paths written into the tree must name the final location.
            info = staging / f"{platform.machine()}-linux" / "ascend_toolkit_install.info"
            info.write_text(info.read_text().replace(str(staging), str(root)))
            try:
                staging.rename(root)
            except OSError:               # another process won the race, or a stale tree is there
                if not _is_complete(root, libdir):
                    shutil.rmtree(root, ignore_errors=True)
                    staging.rename(root)
        except OSError as exc:
            errors.append(f"{base}: {exc}")
            continue
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if _is_complete(root, libdir):
            return root
    raise BackendError("could not create the emulated toolkit tree; tried " + "; ".join(errors)
                       + f" (set {ENV_TOOLKIT_DIR} to a writable directory)")


def environment(root: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The variables CANN's set_env.sh would set for ``root``, plus the loader path and the interpreter the emulated
    libhccl starts inside a program without Python (a new dict)."""
    env = dict(os.environ if base is None else base)
    lib64 = str(root / "lib64")
    old = env.get("LD_LIBRARY_PATH", "")
    env["LD_LIBRARY_PATH"] = lib64 + (":" + old if old else "")
    env.update({
        "ASCEND_HOME_PATH": str(root),
        "ASCEND_TOOLKIT_HOME": str(root),
        "ASCEND_OPP_PATH": str(root / "opp"),
        "ASCEND_AICPU_PATH": str(root),
        "ASCEND_RUNTIME_PATH": str(root / "runtime"),
        "ASCEND_COMPILER_PATH": str(root / "compiler"),
    })
    env.setdefault("PYACLNN_BACKEND", "stub")
    # a program without Python (a C++ HCCL sample) gets this interpreter started inside it by libhccl
    env.setdefault("PYACLNN_PYTHON", sys.executable)
    libpython = _libpython()
    if libpython:
        env.setdefault("PYACLNN_LIBPYTHON", libpython)
    return env


def _libpython() -> str | None:
    """This interpreter's shared libpython, or None (a static build cannot be started inside another program)."""
    import sysconfig
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return None
    path = Path(sysconfig.get_config_var("LIBDIR") or "") / (sysconfig.get_config_var("LDLIBRARY") or "")
    return str(path) if path.is_file() else None
