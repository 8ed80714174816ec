"""Where the bundled stub lies (its libraries, headers and operator catalog); imports nothing of pyaclnn
but _env, so that the modules every other one needs (capi, errors) may ask."""
from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=1)     # a metadata scan of sys.path: once per process, not per lookup
def _installed_stub() -> Path | None:
    """``_stub`` of the installed pyaclnn distribution, when this package is a source checkout without a
    built stub imported ahead of it (``python -m pyaclnn`` or ``python -c`` run inside the clone put the
    checkout first on sys.path) and the installed one is the same version."""
    package = sys.modules.get(__name__.rpartition(".")[0])
    try:
        from importlib import metadata
        dist = metadata.distribution("pyaclnn")
    except Exception:   # noqa: BLE001 -- not installed, or unreadable metadata: no fallback
        return None
    if dist.version != getattr(package, "__version__", dist.version):
        return None
    root = Path(str(dist.locate_file("pyaclnn/_stub")))
    return root if (root / "lib").is_dir() else None


def _stub_part(name: str) -> Path | None:
    """``<pkg>/_stub/<name>`` of this package, else of the installed distribution (see _installed_stub)."""
    for entry in _package_dirs():
        candidate = entry / "_stub" / name
        if candidate.is_dir():
            return candidate.resolve()
    installed = _installed_stub()
    if installed is not None and (installed / name).is_dir():
        return (installed / name).resolve()
    return None


# Said wherever a stub is needed and none is found (one line: what to do).
NOT_BUILT = ("pyaclnn's CPU stub is not built here (a source checkout without one, and no installed pyaclnn of "
             "the same version has one): run `pip install -e .` in the checkout, or set PYACLNN_STUB_LIBDIR to "
             "a build's lib directory")


def stub_library_dir() -> str | None:
    """The bundled stub's library directory: ``$PYACLNN_STUB_LIBDIR`` or ``<pkg>/_stub/lib`` (of the installed
    distribution when this is a checkout without a built stub)."""
    override = _env.path(ENV_STUB_LIBDIR)
    if override:
        return str(Path(override).resolve())
    found = _stub_part("lib")
    return str(found) if found else None


def stub_include_dir() -> str | None:
    """The stub's public headers: beside ``$PYACLNN_STUB_LIBDIR`` (a build tree's ``include``, as the build
    assembles it), else ``<pkg>/_stub/include``, else ``native_stubs/include`` of a checkout (without the
    operator headers the build generates)."""
    override = _env.path(ENV_STUB_LIBDIR)
    if override and (Path(override) / ".." / "include" / "acl").is_dir():
        return str((Path(override) / ".." / "include").resolve())
    found = _stub_part("include")
    if found:
        return str(found)
    for entry in _package_dirs():
        candidate = entry.parent / "native_stubs" / "include"
        if candidate.is_dir():
            return str(candidate.resolve())
    return None
