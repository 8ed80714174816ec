"""Where the bundled stub lies (its libraries, headers and operator catalog); imports nothing of pyaclnn
but _env, so that the modules every other one needs (capi, errors) may ask."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from . import _env

ENV_STUB_LIBDIR = "PYACLNN_STUB_LIBDIR"


def _package_dirs() -> list[Path]:
    # pyaclnn.__path__ may hold several entries: an editable install keeps the sources in the
    # checkout and the built stub in site-packages/pyaclnn/_stub/. (The package is imported before
    # any of its modules runs: read it, do not import it.)
    package = sys.modules.get(__name__.rpartition(".")[0])
    return [Path(p) for p in getattr(package, "__path__", [Path(__file__).parent])]


def stub_library_dir() -> str | None:
    """The bundled stub's library directory: ``$PYACLNN_STUB_LIBDIR`` or ``<pkg>/_stub/lib``."""
    override = _env.path(ENV_STUB_LIBDIR)
    if override:
        return str(Path(override).resolve())
    for entry in _package_dirs():
        candidate = entry / "_stub" / "lib"
        if candidate.is_dir():
            return str(candidate.resolve())
    return None


def stub_include_dir() -> str | None:
    """The stub's public headers: beside ``$PYACLNN_STUB_LIBDIR`` (a build tree's ``include``, as the build
    assembles it), else ``<pkg>/_stub/include``, else ``native_stubs/include`` of a checkout (without the
    operator headers the build generates)."""
    override = _env.path(ENV_STUB_LIBDIR)
    if override and (Path(override) / ".." / "include" / "acl").is_dir():
        return str((Path(override) / ".." / "include").resolve())
    for entry in _package_dirs():
        candidate = entry / "_stub" / "include"
        if candidate.is_dir():
            return str(candidate.resolve())
    for entry in _package_dirs():
        candidate = entry.parent / "native_stubs" / "include"
        if candidate.is_dir():
            return str(candidate.resolve())
    return None
