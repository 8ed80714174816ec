"""Range checks for Python integers crossing into C.

ctypes converts a Python int to a fixed-width C integer by wrapping it silently
(``c_int64(2**64 + 1).value == 1``), so an out-of-range argument would run with another value.
Every integer the Pythonic layer hands to C goes through :func:`check` (or a :func:`checker` made
once for a hot path): a value outside its C type raises :class:`CIntRangeError`, naming the
parameter, its C type and the valid range.  The capi mirror has no policy and is not checked.
"""
from __future__ import annotations

import ctypes
import operator

from ._exceptions import CIntRangeError

__all__ = ["CIntRangeError", "bounds", "check", "checker", "INT64_MAX"]

INT64_MAX = 2**63 - 1

# C spelling -> ctypes type, for the bounds (the widths are those of this platform's ABI).
_TYPES = {
    "int8_t": ctypes.c_int8, "int16_t": ctypes.c_int16, "int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64,
    "uint8_t": ctypes.c_uint8, "uint16_t": ctypes.c_uint16, "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64, "size_t": ctypes.c_size_t, "ssize_t": ctypes.c_ssize_t,
    "ptrdiff_t": ctypes.c_ssize_t, "intptr_t": ctypes.c_ssize_t, "uintptr_t": ctypes.c_size_t,
    "aclFloat16": ctypes.c_uint16, "char": ctypes.c_byte, "signed char": ctypes.c_byte,
    "unsigned char": ctypes.c_ubyte, "short": ctypes.c_short, "unsigned short": ctypes.c_ushort,
    "int": ctypes.c_int, "signed": ctypes.c_int, "signed int": ctypes.c_int, "unsigned": ctypes.c_uint,
    "unsigned int": ctypes.c_uint, "long": ctypes.c_long, "unsigned long": ctypes.c_ulong,
    "long long": ctypes.c_longlong, "unsigned long long": ctypes.c_ulonglong,
}
_UNSIGNED = frozenset({ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t,
                       ctypes.c_ubyte, ctypes.c_ushort, ctypes.c_uint, ctypes.c_ulong, ctypes.c_ulonglong})


def bounds(ctype: str) -> tuple[int, int]:
    """(lowest, highest) value of the C integer type ``ctype`` (enums are C ints)."""
    t = _TYPES.get(ctype.strip(), ctypes.c_int)
    bits = 8 * ctypes.sizeof(t)
    if t in _UNSIGNED:
        return 0, 2**bits - 1
    return -(2**(bits - 1)), 2**(bits - 1) - 1


def _refuse(value: int, ctype: str, param: str, func: str | None) -> CIntRangeError:
    lo, hi = bounds(ctype)
    where = f"{func}(): " if func else ""
    return CIntRangeError(f"{where}{param} = {value} does not fit its C type {ctype} "
                          f"(valid: {lo} .. {hi}); ctypes would wrap it to another value")


def check(value, ctype: str, param: str, func: str | None = None) -> int:
    """``value`` as an int, if it fits the C type ``ctype``; else :class:`CIntRangeError`."""
    v = operator.index(value)
    lo, hi = bounds(ctype)
    if lo <= v <= hi:
        return v
    raise _refuse(v, ctype, param, func)


def checker(ctype: str, param: str, func: str | None = None):
    """A fast ``check`` for one parameter: ``f(value) -> int``."""
    lo, hi = bounds(ctype)

    def f(value) -> int:
        if value.__class__ is int and lo <= value <= hi:
            return value
        v = operator.index(value)
        if lo <= v <= hi:
            return v
        raise _refuse(v, ctype, param, func)
    return f


def check_all(values, ctype: str, param: str, func: str | None = None) -> tuple[int, ...]:
    """Every element of ``values`` checked (the message gives the index)."""
    out = []
    lo, hi = bounds(ctype)
    for i, value in enumerate(values):
        v = operator.index(value)
        if not lo <= v <= hi:
            raise _refuse(v, ctype, f"{param}[{i}]", func)
        out.append(v)
    return tuple(out)
