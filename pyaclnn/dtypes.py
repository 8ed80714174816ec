"""aclDataType <-> numpy (ml_dtypes) <-> torch, element widths and packed sizes.

Every ``aclDataType`` has a :class:`DTypeInfo`.  ``numpy`` is the dtype a host array of that type is
held in: the real value type where numpy/ml_dtypes has one (``bfloat16``, ``float8_e4m3fn``,
``int4`` ...), or a ``uint8`` *carrier* of raw bit patterns where none exists (HIFLOAT8,
FLOAT4_E1M2; FLOAT6_* too, whose byte layout on the device is not documented) -- encode/decode those
with :mod:`pyaclnn.codecs`.

Sub-byte types: INT4 and FLOAT4_* are 4-bit elements stored two per byte on the device (element
2k in the low nibble); UINT1 eight per byte.  A numpy array of ml_dtypes.int4 still spends a byte per
element, so device sizes come from :func:`nbytes`, never from ``arr.itemsize`` (nor from the
runtime's ``aclDataTypeSize``, which reports 1 for INT4 and 8 for the FP4/FP6 types).
"""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ._exceptions import ArgumentTypeError, InvalidArgumentError
from .capi import _constants as C


@dataclass(frozen=True)
class DTypeInfo:
    acl: int                # aclDataType value
    name: str               # C name, e.g. "ACL_FLOAT16"
    numpy: np.dtype | None  # host dtype (value type or carrier); None for STRING / UNDEFINED
    bits: int               # bits per element (4 for INT4/FLOAT4_*, 1 for UINT1, 6 for FLOAT6_*)
    per_byte: int = 1       # elements sharing one device byte (2 for 4-bit types, 8 for UINT1)
    carrier: bool = False   # numpy holds raw bit patterns (no native value type)
    torch: str | None = None  # torch dtype attribute name, when torch has one

    @property
    def packed(self) -> bool:
        """True for types stored several elements per byte on the device."""
        return self.per_byte > 1

    @property
    def itemsize(self) -> int:
        """Device bytes per element for byte-addressable types; 0 for packed ones."""
        return 0 if self.packed else (self.bits + 7) // 8

    def nbytes(self, n: int) -> int:
        """Device bytes needed for ``n`` elements (packed types round up to whole bytes)."""
        if self.packed:
            return -(-int(n) // self.per_byte)
        return int(n) * ((self.bits + 7) // 8)


_TABLE = [
    DTypeInfo(C.ACL_FLOAT, "ACL_FLOAT", np.dtype(np.float32), 32, torch="float32"),
    DTypeInfo(C.ACL_FLOAT16, "ACL_FLOAT16", np.dtype(np.float16), 16, torch="float16"),
    DTypeInfo(C.ACL_INT8, "ACL_INT8", np.dtype(np.int8), 8, torch="int8"),
    DTypeInfo(C.ACL_INT32, "ACL_INT32", np.dtype(np.int32), 32, torch="int32"),
    DTypeInfo(C.ACL_UINT8, "ACL_UINT8", np.dtype(np.uint8), 8, torch="uint8"),
    DTypeInfo(C.ACL_INT16, "ACL_INT16", np.dtype(np.int16), 16, torch="int16"),
    DTypeInfo(C.ACL_UINT16, "ACL_UINT16", np.dtype(np.uint16), 16, torch="uint16"),
    DTypeInfo(C.ACL_UINT32, "ACL_UINT32", np.dtype(np.uint32), 32, torch="uint32"),
    DTypeInfo(C.ACL_INT64, "ACL_INT64", np.dtype(np.int64), 64, torch="int64"),
    DTypeInfo(C.ACL_UINT64, "ACL_UINT64", np.dtype(np.uint64), 64, torch="uint64"),
    DTypeInfo(C.ACL_DOUBLE, "ACL_DOUBLE", np.dtype(np.float64), 64, torch="float64"),
    DTypeInfo(C.ACL_BOOL, "ACL_BOOL", np.dtype(np.bool_), 8, torch="bool"),
    DTypeInfo(C.ACL_STRING, "ACL_STRING", None, 0),
    DTypeInfo(C.ACL_COMPLEX64, "ACL_COMPLEX64", np.dtype(np.complex64), 64, torch="complex64"),
    DTypeInfo(C.ACL_COMPLEX128, "ACL_COMPLEX128", np.dtype(np.complex128), 128, torch="complex128"),
    DTypeInfo(C.ACL_BF16, "ACL_BF16", np.dtype(ml_dtypes.bfloat16), 16, torch="bfloat16"),
    DTypeInfo(C.ACL_INT4, "ACL_INT4", np.dtype(ml_dtypes.int4), 4, per_byte=2),
    # UINT1 and COMPLEX32 are carriers on every ml_dtypes release we allow (uint1 and complex32 only
    # exist from 0.6 on), so that the table, and what .numpy() returns, does not depend on the
    # release; ml_dtypes' value types are still accepted on the way in (_FROM_NUMPY below).
    DTypeInfo(C.ACL_UINT1, "ACL_UINT1", np.dtype(np.uint8), 1, per_byte=8, carrier=True),
    # COMPLEX32: the raw bits, real fp16 in the low half, imaginary fp16 in the high half.
    DTypeInfo(C.ACL_COMPLEX32, "ACL_COMPLEX32", np.dtype(np.uint32), 32, carrier=True,
              torch="complex32"),
    DTypeInfo(C.ACL_HIFLOAT8, "ACL_HIFLOAT8", np.dtype(np.uint8), 8, carrier=True),
    DTypeInfo(C.ACL_FLOAT8_E5M2, "ACL_FLOAT8_E5M2", np.dtype(ml_dtypes.float8_e5m2), 8,
              torch="float8_e5m2"),
    DTypeInfo(C.ACL_FLOAT8_E4M3FN, "ACL_FLOAT8_E4M3FN", np.dtype(ml_dtypes.float8_e4m3fn), 8,
              torch="float8_e4m3fn"),
    DTypeInfo(C.ACL_FLOAT8_E8M0, "ACL_FLOAT8_E8M0", np.dtype(ml_dtypes.float8_e8m0fnu), 8,
              torch="float8_e8m0fnu"),
    # FP6: one element per byte in a uint8 carrier (device layout not documented; assumed).
    DTypeInfo(C.ACL_FLOAT6_E3M2, "ACL_FLOAT6_E3M2", np.dtype(np.uint8), 6, carrier=True),
    DTypeInfo(C.ACL_FLOAT6_E2M3, "ACL_FLOAT6_E2M3", np.dtype(np.uint8), 6, carrier=True),
    DTypeInfo(C.ACL_FLOAT4_E2M1, "ACL_FLOAT4_E2M1", np.dtype(ml_dtypes.float4_e2m1fn), 4,
              per_byte=2),
    DTypeInfo(C.ACL_FLOAT4_E1M2, "ACL_FLOAT4_E1M2", np.dtype(np.uint8), 4, per_byte=2,
              carrier=True),
]

BY_ACL: dict[int, DTypeInfo] = {d.acl: d for d in _TABLE}
BY_NAME: dict[str, DTypeInfo] = {d.name: d for d in _TABLE}

# numpy -> aclDataType: value types only (a uint8 array means ACL_UINT8, never a carrier).
_FROM_NUMPY: dict[np.dtype, int] = {d.numpy: d.acl for d in _TABLE if d.numpy is not None
                                    and not d.carrier}
# ml_dtypes value types that some allowed releases lack map to the ACL codes of their carriers as
# well (same bytes per element: FP6 one per byte, complex32 four; uint1 one per byte on the host).
for _name, _acl in (("float6_e3m2fn", C.ACL_FLOAT6_E3M2), ("float6_e2m3fn", C.ACL_FLOAT6_E2M3),
                    ("complex32", C.ACL_COMPLEX32), ("uint1", C.ACL_UINT1)):
    if hasattr(ml_dtypes, _name):
        _FROM_NUMPY[np.dtype(getattr(ml_dtypes, _name))] = _acl


def info(acl_dtype: int | str) -> DTypeInfo:
    """The :class:`DTypeInfo` of an aclDataType value or C name (``"ACL_BF16"``)."""
    table = BY_NAME if isinstance(acl_dtype, str) else BY_ACL
    try:
        return table[acl_dtype]
    except KeyError:
        raise InvalidArgumentError(f"unknown aclDataType {acl_dtype!r}") from None


def acl_name(acl_dtype: int) -> str:
    return info(acl_dtype).name


def to_numpy(acl_dtype: int | str) -> np.dtype:
    """Host numpy dtype for an aclDataType (a uint8 carrier for HIFLOAT8/FLOAT4_E1M2/FLOAT6_*)."""
    d = info(acl_dtype)
    if d.numpy is None:
        raise InvalidArgumentError(f"{d.name} has no numpy representation")
    return d.numpy


def from_numpy(dtype) -> int:
    """aclDataType of a numpy / ml_dtypes dtype (``np.float32`` -> ACL_FLOAT, bfloat16 -> ACL_BF16)."""
    dt = np.dtype(dtype)
    try:
        return _FROM_NUMPY[dt]
    except KeyError:
        raise InvalidArgumentError(f"no aclDataType for numpy dtype {dt}") from None


def acl_of_value_type(dtype) -> int | None:
    """aclDataType of a numpy / ml_dtypes value type, or None (never raises)."""
    try:
        return _FROM_NUMPY.get(np.dtype(dtype))
    except TypeError:
        return None


def bit_width(acl_dtype: int | str) -> int:
    """Bits per element: 4 for INT4 and FLOAT4_*, 1 for UINT1, 6 for FLOAT6_*, else 8 * itemsize."""
    return info(acl_dtype).bits


def is_packed(acl_dtype: int | str) -> bool:
    """True for types stored several elements per byte (INT4, FLOAT4_*: two; UINT1: eight)."""
    return info(acl_dtype).packed


def nbytes(acl_dtype: int | str, n: int) -> int:
    """Device bytes needed for ``n`` elements (``nbytes(ACL_INT4, 3) == 2``)."""
    return info(acl_dtype).nbytes(n)


def to_torch(acl_dtype: int | str):
    """The torch dtype for an aclDataType (imports torch; ValueError when torch has none)."""
    import torch
    d = info(acl_dtype)
    dt = getattr(torch, d.torch, None) if d.torch else None
    if dt is None:
        raise InvalidArgumentError(f"torch has no dtype for {d.name}")
    return dt


def from_torch(torch_dtype) -> int:
    """aclDataType of a torch dtype (``torch.bfloat16`` -> ACL_BF16). Does not import torch itself."""
    name = str(torch_dtype).rsplit(".", 1)[-1]
    for d in _TABLE:
        if d.torch == name:
            return d.acl
    raise InvalidArgumentError(f"no aclDataType for torch dtype {torch_dtype}")


# ------------------------------------------------------------------------------------------------
# Device byte layout of the 4-bit types (two per byte, element 2k in the low nibble)
# ------------------------------------------------------------------------------------------------

_NIBBLE_TYPES = (C.ACL_INT4, C.ACL_FLOAT4_E2M1, C.ACL_FLOAT4_E1M2)


#: How to turn float values into each 4-bit type explicitly (named in pack's errors).
_NIBBLE_CODECS = {
    C.ACL_INT4: "pyaclnn.codecs.encode_int4(x, round_mode='rint', saturate=True)",
    C.ACL_FLOAT4_E2M1: "pyaclnn.codecs.encode_float4_e2m1(x, round_mode='rint')",
    C.ACL_FLOAT4_E1M2: "pyaclnn.codecs.encode_float4_e1m2(x, round_mode='rint')",
}


def _is_integer(dt: np.dtype) -> bool:
    """numpy integers and ml_dtypes' narrow integers (int4, uint4, int2 ...; numpy kind 'V')."""
    return dt.kind in "iu" or (dt.kind == "V" and dt.name in ("int2", "uint2", "int4", "uint4"))


def _checked_codes(arr: np.ndarray, name: str, lo: int, hi: int, what: str) -> np.ndarray:
    v = arr.astype(np.int64)    # exact for every integer type (ml_dtypes' int4 too)
    bad = (v < lo) | (v > hi)
    if bad.any():
        raise InvalidArgumentError(f"{name} takes {what} in {lo}..{hi}; got {v[bad][:4].tolist()} "
                                   f"({int(bad.sum())} out of range)")
    return v


def pack(values, acl_dtype: int | str) -> np.ndarray:
    """Host values of a 4-bit type -> the device bytes (uint8, ``nbytes(acl_dtype, size)`` long),
    two per byte, element 2k in the low nibble; flattened in C order.

    INT4 takes integers -8..7 (any numpy integer dtype, ml_dtypes.int4); FLOAT4_E2M1 takes
    ml_dtypes.float4_e2m1fn values or its codes 0..15 as uint8; FLOAT4_E1M2 takes its codes 0..15 as
    integers. Float input is refused
    (TypeError): quantise it first with the explicit codec named in the message, whose rounding,
    saturation and NaN rule are documented. A cast through ml_dtypes' ``astype`` is not used: its
    results for out-of-range or rounded values differ between ml_dtypes releases.
    """
    d = info(acl_dtype)
    if d.acl not in _NIBBLE_TYPES:
        raise InvalidArgumentError(f"{d.name} is not a 4-bit type")
    from .codecs import pack_nibbles
    arr = np.asarray(values)
    if d.acl == C.ACL_FLOAT4_E2M1 and arr.dtype == d.numpy:
        return pack_nibbles(np.ascontiguousarray(arr).view(np.uint8))
    e2m1_codes = d.acl != C.ACL_FLOAT4_E2M1 or arr.dtype == np.uint8   # ints are not values here
    if not (_is_integer(arr.dtype) and e2m1_codes):
        want = {C.ACL_INT4: "integer values -8..7 (or ml_dtypes.int4)",
                C.ACL_FLOAT4_E2M1: "ml_dtypes.float4_e2m1fn values or uint8 codes 0..15",
                C.ACL_FLOAT4_E1M2: "integer codes 0..15"}[d.acl]
        raise ArgumentTypeError(f"{d.name} packing takes {want}, not {arr.dtype}; to quantise floats use "
                                f"{_NIBBLE_CODECS[d.acl]}")
    if d.acl == C.ACL_INT4:
        return pack_nibbles(_checked_codes(arr, d.name, -8, 7, "integer values"))
    return pack_nibbles(_checked_codes(arr, d.name, 0, 15, "codes"))


def unpack(packed, acl_dtype: int | str, n: int) -> np.ndarray:
    """Inverse of :func:`pack`: the first ``n`` elements as the type's host dtype (1-D)."""
    d = info(acl_dtype)
    if d.acl not in _NIBBLE_TYPES:
        raise InvalidArgumentError(f"{d.name} is not a 4-bit type")
    from .codecs import unpack_int4, unpack_nibbles
    if d.acl == C.ACL_INT4:
        return unpack_int4(packed, n).astype(d.numpy)
    return unpack_nibbles(packed, n).view(d.numpy)
