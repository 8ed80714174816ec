"""pyaclnn: Python binding for Huawei Ascend CANN aclnn operators, with a bundled CPU emulator.

Importing the package opens nothing; the libraries are loaded on first use (see
:mod:`pyaclnn._loader` for ``PYACLNN_BACKEND=auto|cann|stub``).

* :mod:`pyaclnn.capi` -- the C API mirror (exact C names, status codes as ints);
* :mod:`pyaclnn.errors` -- :class:`AclError` and friends;
* :mod:`pyaclnn.dtypes` -- aclDataType <-> numpy / ml_dtypes / torch.

(PYTEST_DONT_REWRITE: with PYACLNN_EMULATE=1 the start-up hook imports pyaclnn before pytest starts; the
package has no asserts for pytest to rewrite, and this keeps pytest from warning that it cannot.)
"""
# (no ``from __future__ import annotations`` here: it would leave a public ``annotations`` name)

__version__ = "0.1.0"

from ._exceptions import MissingPathError, NoAttributeError
from .errors import AclError, MissingSymbolError, check  # noqa: E402,F401


def get_include() -> str:
    """Include directory of the bundled stub headers (CANN layout: acl/, aclnn/, aclnnop/).

    Like ``numpy.get_include()``: build a C/C++ program with ``-I$(python -c 'import pyaclnn;
    print(pyaclnn.get_include())')`` and link it against :func:`get_library_dir`.
    """
    from ._loader import stub_include_dir
    path = stub_include_dir()
    if path is None:
        raise MissingPathError("pyaclnn's stub headers are not installed (no _stub/include)")
    return path


def get_library_dir() -> str:
    """Directory holding the bundled stub's libascendcl.so, libnnopbase.so and libopapi.so."""
    from ._loader import stub_library_dir
    path = stub_library_dir()
    if path is None:
        from ._stubpaths import NOT_BUILT
        raise MissingPathError(NOT_BUILT)
    return path


def backend_name() -> str:
    """``"cann"`` or ``"stub"``: which libraries this process uses (loads them if needed)."""
    from ._loader import backend
    return backend().name


def backend_info() -> dict:
    """Backend, toolkit root, library directory and loaded library paths (loads them if needed)."""
    from ._loader import backend
    return backend().describe()


def preload_stub():
    """Put the CPU emulator in place of CANN in this process; call before ``import torch_npu``.

    Loads the emulator's libraries (CANN's sonames) with RTLD_GLOBAL and sets ``ASCEND_HOME_PATH``,
    ``ASCEND_OPP_PATH`` ... to its emulated toolkit tree; returns that tree's root. See
    :mod:`pyaclnn._preload` (and ``python -m pyaclnn exec -- CMD`` for a whole command).
    """
    from ._preload import preload_stub as _preload_stub
    return _preload_stub()


def library_paths() -> list[str]:
    """Absolute paths of the loaded libraries, in symbol search order."""
    from ._loader import backend
    return backend().library_paths


# The Pythonic layer, imported on first use (``pyaclnn.from_numpy``, ``pyaclnn.ops`` ...).
_LAZY = {
    "Tensor": "tensor", "from_numpy": "tensor", "empty": "tensor", "zeros": "tensor",
    "empty_like": "tensor", "zeros_like": "tensor",
    "Device": "runtime", "Stream": "runtime", "Event": "runtime",
    "current_device": "runtime", "current_stream": "runtime", "empty_cache": "runtime",
    "ops": None, "runtime": None, "tensor": None,
    "hazards": "_hazards", "hazard_counts": "_hazards",
}

__all__ = ["__version__", "AclError", "MissingSymbolError", "check", "get_include", "get_library_dir",
           "backend_name", "backend_info", "library_paths", *_LAZY]


def __dir__() -> list[str]:
    # the lazily imported names too (they are not in globals() until first used)
    return sorted(set(globals()) | set(_LAZY))


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        module = importlib.import_module(f".{_LAZY[name] or name}", __name__)
        return module if _LAZY[name] is None else getattr(module, name)
    raise NoAttributeError(f"module 'pyaclnn' has no attribute {name!r}")
