"""ctypes argument types for a signature, for a launcher that calls the two phases through ctypes."""

from __future__ import annotations

import ctypes

from .._exceptions import InvalidArgumentError
from .model import Kind, OpSignature, Param

# Integer spellings by value (Param.ctype of Kind.INT).
_INTS = {
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
_BY_KIND = {
    Kind.DOUBLE: ctypes.c_double, Kind.FLOAT: ctypes.c_float, Kind.BOOL: ctypes.c_bool,
    Kind.STRING: ctypes.c_char_p, Kind.DTYPE: ctypes.c_int, Kind.ENUM: ctypes.c_int,
    Kind.WORKSPACE_SIZE: ctypes.POINTER(ctypes.c_uint64), Kind.EXECUTOR: ctypes.POINTER(ctypes.c_void_p),
}
#: Phase 2 of every operator: (void* workspace, uint64_t workspaceSize, aclOpExecutor*, aclrtStream).
LAUNCH_ARGTYPES = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p)


def ctypes_type(p: Param):
    """The ctypes type to pass ``p`` as: handles and raw pointers are ``c_void_p``."""
    if p.kind in _BY_KIND:
        return _BY_KIND[p.kind]
    if p.kind is Kind.INT:
        try:
            return _INTS[p.ctype]
        except KeyError:
            raise InvalidArgumentError(f"no ctypes integer for {p.ctype!r} ({p.name})") from None
    if p.kind is Kind.UNKNOWN:
        raise InvalidArgumentError(f"parameter {p.name} has a type this parser cannot size: {p.ctype}")
    return ctypes.c_void_p  # aclTensor*, aclIntArray* ..., void*, aclrtStream


def workspace_argtypes(sig: OpSignature) -> tuple:
    """``argtypes`` of ``<name>GetWorkspaceSize`` (its ``restype`` is ``c_int32``, aclnnStatus)."""
    return tuple(ctypes_type(p) for p in sig.params)
