"""The optional compiled accelerators built with the package (``ops/_fastcall.c``,
``capi/_fastcapi.c``): where to find one, loading it once, and why it is unavailable.

An accelerator is looked for at its ``$PYACLNN_..._LIB`` override (a prebuilt module), in the
emulator's library directory in use (``$PYACLNN_STUB_LIBDIR`` for a development build), then in
``<package>/_stub/lib/``, where the package build installs it. Not found, not loadable or switched
off means "not available" (``why_unavailable`` says why): callers then take their ctypes path, with
the same results.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sysconfig
from pathlib import Path
from typing import Any, Callable

from ._exceptions import BackendError
from ._mutex import mutex as _mutex

_OFF = ("0", "off", "no", "false")
_PACKAGE = Path(__file__).resolve().parent


class OptionalExtension:
    """One accelerator module: ``module()`` loads it on first use (or returns None)."""

    def __init__(self, name: str, abi: int, lib_env: str, switches: tuple[str, ...],
                 prepare: Callable[[Any, Path], None], needs: str = ""):
        self.name = name                # the extension's module name (its PyInit_ symbol)
        self.abi = abi                  # what module.abi() must return
        self.lib_env = lib_env          # env var naming a prebuilt module
        self.switches = switches        # env vars whose "0" turns it off, in the order asked
        self.prepare = prepare          # prepare(module, path): checks and configuration; raises to refuse
        self.needs = needs              # what its build needs beyond a C compiler, for the "not built" reason
        self.why_unavailable: str | None = None
        self._module = None
        self._tried = False
        self._lock = _mutex()

    def filename(self) -> str:
        return self.name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")

    def candidates(self) -> list[Path]:
        out = []
        from . import _env
        override = _env.path(self.lib_env)
        if override:
            out.append(Path(override))
        from ._loader import stub_library_dir
        try:
            libdir = stub_library_dir()
            if libdir:
                out.append(Path(libdir) / self.filename())
        except Exception:  # noqa: BLE001 -- no emulator directory: a real toolkit may still be in use
            pass
        import pyaclnn      # an editable install's package path can have more than one entry
        for entry in getattr(pyaclnn, "__path__", [str(_PACKAGE)]):
            out.append(Path(entry) / "_stub" / "lib" / self.filename())
        return out

    def _not_built(self) -> str:
        """Why no candidate exists: often a build for another interpreter (its EXT_SUFFIX differs)."""
        others = sorted({p.name for c in self.candidates() if c.parent.is_dir()
                         for p in c.parent.glob(self.name + ".*") if p.name != self.filename()})
        if others:
            return (f"{self.filename()} was not built: only {', '.join(others)}, for another Python; reinstall "
                    f"pyaclnn with this interpreter (pip install -e .) to build it")
        return f"{self.filename()} was not built" + (f" (it needs {self.needs})" if self.needs else "")

    def status(self) -> dict:
        """{"active": bool, "path" or "why"}: loads the module if nobody has yet (for info)."""
        mod = self.module()
        if mod is None:
            return {"active": False, "why": self.why_unavailable}
        return {"active": True, "path": getattr(mod, "__file__", None)}

    def _load(self, path: Path):
        loader = importlib.machinery.ExtensionFileLoader(self.name, str(path))
        spec = importlib.util.spec_from_file_location(self.name, str(path), loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        if module.abi() != self.abi:
            raise BackendError(f"{path} has ABI {module.abi()}, expected {self.abi}")
        self.prepare(module, path)
        return module

    def module(self):
        """The extension module, or None (then ``why_unavailable`` says why)."""
        if self._tried:
            return self._module
        with self._lock:
            if self._tried:
                return self._module
            for var in self.switches:
                if os.environ.get(var, "1").strip().lower() in _OFF:
                    self.why_unavailable = f"disabled by {var}=0"
                    break
            else:
                errors = []
                for path in self.candidates():
                    if path.is_file():
                        try:
                            self._module = self._load(path)
                            break
                        except (ImportError, OSError, RuntimeError, TypeError) as exc:
                            errors.append(f"{path}: {exc}")
                if self._module is None:
                    self.why_unavailable = "; ".join(errors) or self._not_built()
            self._tried = True
            return self._module


__all__ = ["OptionalExtension"]
