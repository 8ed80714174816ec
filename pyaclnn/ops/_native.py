"""The optional accelerator ``_fastcall.c`` of prepared calls (loaded by :mod:`pyaclnn._extension`).

A prepared launch is a handful of C calls that take well under a microsecond; through ctypes each
costs 0.3-0.5 us of argument conversion, so a pure-Python prepared call is several times slower
than the C sequence.  The accelerator is a small CPython extension whose ``tp_call`` does the common
case in C (see ``_fastcall.c``); everything else stays in Python.

The package build compiles it next to the emulator's libraries (CMakeLists.txt). Search order:
``$PYACLNN_FASTCALL_LIB`` (a prebuilt module), the emulator library directory in use
(``$PYACLNN_STUB_LIBDIR`` for a development build), then ``<package>/_stub/lib/``. Not found or not
loadable means "not available" (``why_unavailable`` says why): prepared calls then run in Python,
with the same results.  ``PYACLNN_FASTPATH=0`` disables it.
"""
from __future__ import annotations

from pathlib import Path

from .._exceptions import NoAttributeError
from .._extension import OptionalExtension

MODULE = "_pyaclnn_fastcall"
ABI = 9


def _prepare(module, path: Path) -> None:
    from ..runtime import Memory
    from ..tensor import Tensor
    module.configure(Tensor, Memory)
    from .. import _shutdown
    _shutdown.on_closing(module.set_closing)


_EXTENSION = OptionalExtension(MODULE, ABI, "PYACLNN_FASTCALL_LIB", ("PYACLNN_FASTPATH",), _prepare)
module = _EXTENSION.module


status = _EXTENSION.status


def __getattr__(name: str):
    if name == "why_unavailable":       # set when module() has looked
        return _EXTENSION.why_unavailable
    raise NoAttributeError(f"module {__name__!r} has no attribute {name!r}")


def function_address(fn) -> int:
    """Address of a ctypes foreign function (to hand it to C as a pointer)."""
    import ctypes
    return ctypes.cast(fn, ctypes.c_void_p).value
