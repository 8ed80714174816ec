"""ctypes mirror of the CANN C API: C names, exact argtypes/restype, status codes returned as ints.

A C++ sample ports line by line::

    from ctypes import byref, c_void_p
    from pyaclnn.capi import *

    aclInit(None)                                        # aclInit(nullptr);
    aclrtSetDevice(0)                                    # aclrtSetDevice(0);
    stream = aclrtStream()                               # aclrtStream stream;
    aclrtCreateStream(byref(stream))                     # aclrtCreateStream(&stream);
    dev = c_void_p()                                     # void* dev = nullptr;
    aclrtMalloc(byref(dev), 64, ACL_MEM_MALLOC_HUGE_FIRST)
    aclDataType.ACL_FLOAT16 == ACL_FLOAT16               # aclDataType::ACL_FLOAT16

No policy: functions behave as in C.

* Out-parameters (``T*``, ``void**``, ``aclTensor**``, ``uint64_t*``): where C passes ``&x``, pass
  ``ctypes.byref(x)``, ``x`` being a ctypes object of the pointee type (``c_void_p()`` for ``void*`` and
  every handle, ``c_uint64()``, ``c_int()`` for enums); read ``x.value`` afterwards. A helper of your
  own that takes such an out-parameter passes it on unchanged and writes ``*p`` as ``deref(p)``
  (see :func:`deref` and ``examples/add_rms_norm_dynamic_quant.py``).
* ``const char*`` parameters take ``str`` (sent as UTF-8), ``bytes`` or ``None``; ``const char*``
  results come back as ``bytes`` or ``None``. Pointers are ints, ``None``, ctypes objects or arrays.
* Constants are plain ints (``ACL_FLOAT16``); each C enum is also an ``IntEnum`` class of the same
  members (``aclDataType.ACL_FLOAT16``), as C++ spells ``aclDataType::ACL_FLOAT16``.
* ``help(aclCreateTensor)`` shows the C prototype and the header that declares it.

Every C function exists from import on, so ``from pyaclnn.capi import *`` and ``dir()`` load
nothing: the symbol is looked up in the loaded libraries (:mod:`pyaclnn._loader`) on a function's
first call. Binding then replaces the module attribute by the bound function, so
``capi.aclrtMalloc(...)`` costs one call; a name star-imported earlier keeps forwarding (one
Python call more). The bound function is the ctypes function (:func:`cfunc`), or, when the small
compiled extension ``_fastcapi.c`` was built, a ``CFunction`` that converts the common arguments
in C and hands everything else to that ctypes function: same results, errors and attributes,
a fraction of the cost (:mod:`pyaclnn.capi._accel`; ``PYACLNN_CAPI_FASTPATH=0`` turns it off). A function the loaded libraries lack raises
:class:`~pyaclnn.errors.MissingSymbolError` when called, never at import.
"""
from __future__ import annotations

from .._exceptions import NoAttributeError
from .._mutex import mutex as _mutex

from . import _accel, _constants, _enums, _types
from ._binding import bind as _bind
from ._binding import docstring as _docstring
from ._binding import signature as _signature
from ._constants import *  # noqa: F401,F403
from ._constants import ENUM_MEMBERS  # noqa: F401
from ._enums import *  # noqa: F401,F403
from ._functions import DECLARATIONS, PROTOTYPES, SOURCES  # noqa: F401
from ._operators import declare as _declare_operator
from ._operators import extend as _extend_with_operators

OPTIONAL = _extend_with_operators()     # + the emulated operators of the catalog (native_stubs/src/ops)
from ._outparams import deref  # noqa: F401
from ._types import *  # noqa: F401,F403

_globals = globals()
_bound: dict = {}                       # name -> bound ctypes function (or missing-symbol raiser)
_calls: dict = {}                       # name -> what capi.<name> is once bound (compiled path or _bound)
_bind_lock = _mutex()


def cfunc(name: str):
    """The ctypes function of C function ``name``, bound now if it was not yet (restype, argtypes set).

    ``capi.<name>`` is this function or, with the compiled path, a ``CFunction`` calling it.
    """
    fn = _bound.get(name)
    if fn is None:
        if name not in PROTOTYPES:
            raise NoAttributeError(f"module 'pyaclnn.capi' has no C function {name!r}")
        with _bind_lock:
            fn = _bound.get(name)
            if fn is None:
                fn = _bind(name)
                _calls[name] = _accel.wrap(fn)
                _bound[name] = fn
                _globals[name] = _calls[name]    # later capi.<name> lookups get it directly
    return fn


def c_function(name: str):
    """What ``capi.<name>`` becomes once bound (bound now): the compiled or ctypes function. Unlike the
    module's stand-in before the first call, calling it runs no Python code, so a signal handler
    cannot raise between the C call and its result reaching the C code that called it (the
    interrupt-safe idioms of pyaclnn._release rely on that)."""
    fn = _calls.get(name)
    if fn is None:
        cfunc(name)
        fn = _calls[name]
    return fn


def _unbound(name: str):
    """The module-level stand-in of C function ``name`` until its first call: binds, then forwards."""
    def call(*args):
        fn = _calls.get(name)
        if fn is None:
            cfunc(name)
            fn = _calls[name]
        return fn(*args)
    call.__name__ = call.__qualname__ = name
    call.__module__ = __name__
    call._capi_stand_in = True
    call.__doc__ = _docstring(name)
    call.__signature__ = _signature(name)
    return call


for _name in PROTOTYPES:
    _globals[_name] = _unbound(_name)
del _name


def operator_functions(sig) -> tuple:
    """The phase-1 and phase-2 ctypes functions of an operator signature of :mod:`pyaclnn.ops`' registry
    (what :mod:`pyaclnn.ops` launches through), each None where the loaded libraries lack it. A signature
    the tables lack or declare otherwise (a header read by ``pyaclnn.ops.load_headers``) is declared first,
    so ``capi.<name>`` and the operator launcher call the same function."""
    with _bind_lock:
        for name in _declare_operator(sig):
            _bound.pop(name, None)
            _calls.pop(name, None)
            _globals[name] = _unbound(name)
            if name not in __all__:
                __all__.append(name)
    fns = (cfunc(sig.workspace_function), cfunc(sig.name))
    return tuple(None if getattr(fn, "missing", False) else fn for fn in fns)


def available(name: str) -> bool:
    """True when the loaded libraries export C function ``name``."""
    from .._loader import backend
    return backend().find(name) is not None


def bind_all() -> list[str]:
    """Bind every function now; return the names the loaded libraries lack."""
    return [name for name in PROTOTYPES if getattr(cfunc(name), "missing", False)]


#: What ``from pyaclnn.capi import *`` brings: the C names only (functions, constants, enums, typedefs).
__all__ = sorted({*PROTOTYPES, *(n for n in vars(_constants) if n.isupper()),
                  *_enums.__all__, *_types.__all__} - {"ENUM_MEMBERS"})
