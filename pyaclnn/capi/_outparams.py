"""``*p`` for out-parameters handed around in Python as C hands ``T*`` around.

C++ helpers such as the vendor samples' ``CreateAclTensor(..., void** deviceAddr, ..., aclTensor** tensor)``
receive ``&x`` from their caller, pass it on to the runtime unchanged and write ``*tensor = ...``.
In Python the caller passes ``ctypes.byref(x)``; the helper passes that on unchanged too, and
``deref(p)`` is ``*p``: the ctypes object ``x`` itself (read ``deref(p).value``, assign
``deref(p).value = ...``).
"""
from __future__ import annotations

import ctypes

from .._exceptions import ArgumentTypeError

_CData = ctypes.c_int.__mro__[-2]           # the base of every ctypes object (not exported by ctypes)


def deref(p):
    """``*p``: the ctypes object that ``p = ctypes.byref(x)`` (or ``ctypes.pointer(x)``) points to.

    Raises TypeError for anything else, and for ``byref(x, offset)`` with a non-zero offset (that
    points inside ``x``, not at it).
    """
    if isinstance(p, ctypes._Pointer):
        return p.contents
    target = getattr(p, "_obj", None)           # what ctypes.byref(x) wraps (CPython's CArgObject)
    if not isinstance(target, _CData):
        raise ArgumentTypeError(f"deref() takes ctypes.byref(x) or ctypes.pointer(x), not {type(p).__name__}")
    if ctypes.cast(p, ctypes.c_void_p).value != ctypes.addressof(target):
        raise ArgumentTypeError("deref() of ctypes.byref(x, offset) with a non-zero offset is not supported")
    return target
