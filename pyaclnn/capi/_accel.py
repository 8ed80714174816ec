"""The compiled call path of the capi mirror (``_fastcapi.c``), when it was built; ctypes otherwise.

:func:`wrap` turns a bound ctypes function into a ``CFunction`` of the extension: same arguments,
results, errors and attributes (``argtypes``, ``restype``, ``__doc__`` ... come from the ctypes
function, ``ctypes_function`` is the ctypes function itself), but the common argument kinds are
converted in C. Whatever the C side does not recognise goes to the ctypes function unchanged, so
the ctypes conversion rules stay the only rules. A function whose C types the extension does not
handle (a ``bool`` by value, a plain ``char*``, more than 32 arguments) stays a ctypes function.
The C function is called through libffi, as ctypes calls it; the extension is built only where
libffi's headers are (``libffi-dev``), and ``python -m pyaclnn info`` says when it was not.

The extension is looked for where the package build installs it (the emulator's library
directory, ``$PYACLNN_STUB_LIBDIR`` for a development build, ``<package>/_stub/lib``) or at
``$PYACLNN_CAPI_FAST_LIB``. ``PYACLNN_FASTPATH=0`` (every compiled accelerator) or
``PYACLNN_CAPI_FASTPATH=0`` (this one only) keeps the plain ctypes functions.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

from .._exceptions import NoAttributeError
from .._extension import OptionalExtension

MODULE = "_pyaclnn_capi"
ABI = 3

# Called without releasing the GIL, as ctypes.PyDLL calls its functions: the aclTensor / aclScalar / array
# descriptors' constructors, destructors and getters (acl_meta.h, in libnnopbase). They work on host memory,
# take only their own short locks, never wait for a stream and never call back into Python, so holding the
# GIL cannot deadlock them; releasing and retaking it cost as much as such a call (measured: about 0.6 us of
# a line-by-line aclnn call's 4.3). Everything else (phase 1, launches, the runtime) releases it, as ctypes.
KEEP_GIL = frozenset({
    "aclCreateTensor", "aclDestroyTensor", "aclInitTensor", "aclCreateScalar", "aclDestroyScalar",
    "aclCreateIntArray", "aclDestroyIntArray", "aclCreateFloatArray", "aclDestroyFloatArray",
    "aclCreateBoolArray", "aclDestroyBoolArray", "aclCreateTensorList", "aclDestroyTensorList",
    "aclCreateScalarList", "aclDestroyScalarList", "aclGetViewShape", "aclGetStorageShape", "aclGetViewStrides",
    "aclGetViewOffset", "aclGetFormat", "aclGetDataType", "aclGetIntArraySize", "aclGetFloatArraySize",
    "aclGetBoolArraySize", "aclGetTensorListSize", "aclGetScalarListSize",
})

# ctypes type -> kind letter of _fastcapi.c (c_size_t etc. are aliases of these on LP64 Linux)
_INT_KINDS = {ctypes.c_int8: "b", ctypes.c_uint8: "B", ctypes.c_int16: "h", ctypes.c_uint16: "H",
              ctypes.c_int32: "i", ctypes.c_uint32: "I", ctypes.c_int64: "q", ctypes.c_uint64: "Q"}
_ARG_KINDS = {**_INT_KINDS, ctypes.c_double: "d", ctypes.c_float: "f", ctypes.c_void_p: "P"}
_RESULT_KINDS = {**_ARG_KINDS, None: "v", ctypes.c_bool: "?", ctypes.c_char_p: "z"}


def _prepare(module, path: Path) -> None:
    # The extension reads ctypes instances through their buffers and byref() objects through their
    # `_obj` and repr; it checks both on these samples and leaves those argument kinds to ctypes if
    # they do not read as expected.
    arr, vp, target = (ctypes.c_int64 * 3)(), ctypes.c_void_p(5), (ctypes.c_uint64 * 2)()
    ref = ctypes.byref(target, 8)
    module.setup(type(ref), ctypes.Array, ctypes._Pointer, ctypes.c_void_p,
                 ((arr, ctypes.addressof(arr)), (vp, ctypes.addressof(vp))),
                 (ref, target, ctypes.addressof(target) + 8))


_EXTENSION = OptionalExtension(MODULE, ABI, "PYACLNN_CAPI_FAST_LIB", ("PYACLNN_FASTPATH", "PYACLNN_CAPI_FASTPATH"),
                               _prepare, needs="the Python development files and libffi's headers (libffi-dev)")
module = _EXTENSION.module


status = _EXTENSION.status


def __getattr__(name: str):
    if name == "why_unavailable":       # set when module() has looked
        return _EXTENSION.why_unavailable
    raise NoAttributeError(f"module {__name__!r} has no attribute {name!r}")


def _arg_kind(argtype) -> tuple[str, object] | None:
    if argtype in _ARG_KINDS:
        return _ARG_KINDS[argtype], None
    from ._binding import const_char_p
    if argtype is const_char_p:
        return "z", None
    if isinstance(argtype, type) and issubclass(argtype, ctypes._Pointer) and argtype.__dict__.get("_type_"):
        return "T", argtype._type_
    return None


def describe(fn) -> tuple[bytes, bytes, tuple] | None:
    """(argument kinds, result kind, pointee types) of a bound ctypes function, or None if the
    compiled path cannot call it."""
    if fn.errcheck is not None or fn.restype not in _RESULT_KINDS:
        return None
    kinds, targets = [], []
    for t in fn.argtypes or ():
        kind = _arg_kind(t)
        if kind is None:
            return None
        kinds.append(kind[0])
        targets.append(kind[1])
    if len(kinds) > 32:
        return None
    return "".join(kinds).encode(), _RESULT_KINDS[fn.restype].encode(), tuple(targets)


# The common base of every ctypes function-pointer type, found through public API (ctypes names it
# only privately).
_FUNCTION_POINTER = ctypes.CFUNCTYPE(None).__mro__[1]


def wrap(fn, mod=None):
    """The compiled-path function of bound ctypes function ``fn``, or ``fn`` itself when the
    extension is unavailable or cannot call it."""
    mod = mod if mod is not None else module()
    if mod is None or not isinstance(fn, _FUNCTION_POINTER):
        return fn
    desc = describe(fn)
    if desc is None:
        return fn
    address = ctypes.cast(fn, ctypes.c_void_p).value
    return mod.function(fn, address, *desc, getattr(fn, "__name__", "") in KEEP_GIL)
