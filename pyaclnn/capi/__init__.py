"""ctypes mirror of the CANN C API: C names, exact argtypes/restype, status codes returned as ints.

    from pyaclnn import capi
    dev = ctypes.c_void_p()
    status = capi.aclrtMalloc(ctypes.byref(dev), 64, capi.ACL_MEM_MALLOC_HUGE_FIRST)

No policy: functions behave as in C (out-parameters through ``ctypes.byref``, pointers as ints or
ctypes objects, ``const char*`` results as ``bytes``/``None``).  Constants are plain module ints.

Functions are bound on first access: the symbol is looked up in the loaded libraries
(:mod:`pyaclnn._loader`), its prototype set once from :data:`PROTOTYPES`, and the ctypes function
object stored as a module global, so later calls go straight to it.  A function the loaded
libraries lack is bound to a callable that raises :class:`~pyaclnn.errors.MissingSymbolError` when
called (so merely importing or listing it does not fail).
"""
from __future__ import annotations

from ._constants import *  # noqa: F401,F403
from ._constants import ENUM_MEMBERS  # noqa: F401
from ._functions import DECLARATIONS, OPTIONAL, PROTOTYPES  # noqa: F401
from ._types import *  # noqa: F401,F403

_globals = globals()


def _bind(name: str):
    from .._loader import backend
    from ..errors import MissingSymbolError
    restype, argtypes = PROTOTYPES[name]
    try:
        fn = backend().symbol(name)
    except MissingSymbolError as exc:
        missing = exc

        def fn(*args, _exc=missing):
            raise _exc
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"{DECLARATIONS[name]}  -- not exported by the loaded libraries"
        fn.missing = True
        return fn
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


def __getattr__(name: str):
    if name in PROTOTYPES:
        fn = _bind(name)
        _globals[name] = fn         # later lookups are plain module-dict hits
        return fn
    raise AttributeError(f"module 'pyaclnn.capi' has no attribute {name!r}")


def __dir__():
    return sorted(set(_globals) | set(PROTOTYPES))


def available(name: str) -> bool:
    """True when the loaded libraries export C function ``name``."""
    from .._loader import backend
    return backend().find(name) is not None


def bind_all() -> list[str]:
    """Bind every function now; return the names the loaded libraries lack."""
    missing = []
    for name in PROTOTYPES:
        fn = __getattr__(name) if name not in _globals else _globals[name]
        if getattr(fn, "missing", False):
            missing.append(name)
    return missing
