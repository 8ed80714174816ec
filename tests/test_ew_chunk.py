"""The elementwise engine's chunk conversions (native_stubs/src/kernels/ew_chunk.c) against the per-element
ones they stand for (ew_load + ew_cast, ew_cast + ew_store), through libopapi's test hooks
pyaclnn_stub_ew_chunk_load_check / _store_both: the same bytes both ways, compared bit for bit -- every
FLOAT16 and BF16 bit pattern, fp32 specials and NaN payloads of both signs, integer extremes, every byte
as a BOOL, strided and contiguous -- for the pairs with a direct loop and a few that take the fallback.
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np
import pytest

from pyaclnn.capi import _constants as K
from pyaclnn._stubpaths import stub_library_dir  # honours PYACLNN_STUB_LIBDIR

F32, F16, BF16, I32, I64, BOOL, F64, I8, U8 = (K.ACL_FLOAT, K.ACL_FLOAT16, K.ACL_BF16, K.ACL_INT32, K.ACL_INT64,
                                               K.ACL_BOOL, K.ACL_DOUBLE, K.ACL_INT8, K.ACL_UINT8)
NP = {F32: np.float32, F16: np.uint16, BF16: np.uint16, I32: np.int32, I64: np.int64, BOOL: np.uint8,
      F64: np.float64, I8: np.int8, U8: np.uint8}
FLOATS = (F32, F16, BF16, F64)


@functools.lru_cache(maxsize=None)
def lib() -> ctypes.CDLL:
    h = ctypes.CDLL(os.path.join(stub_library_dir(), "libopapi.so"))
    vp, i64, c_int = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    h.pyaclnn_stub_ew_chunk_load_check.argtypes = [vp, i64, c_int, c_int, i64]
    h.pyaclnn_stub_ew_chunk_load_check.restype = i64
    h.pyaclnn_stub_ew_chunk_store_both.argtypes = [vp, vp, c_int, c_int, i64, vp, vp]
    h.pyaclnn_stub_ew_chunk_store_both.restype = None
    return h


def _f32_specials(rng) -> np.ndarray:
    bits = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FC12345, 0x7F800000, 0xFF800000,
                     0x00000001, 0x80000001, 0x00000000, 0x80000000, 0x7F7FFFFF, 0x477FF000, 0x477FF001,
                     0x47800000, 0x33000000, 0x33000001, 0x387FE000], dtype=np.uint32)
    rand = rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits, rand]).view(np.float32)


def _source(dt, rng) -> np.ndarray:
    if dt in (F16, BF16):
        return np.arange(65536, dtype=np.uint32).astype(np.uint16)      # every bit pattern, NaNs included
    if dt == F32:
        return _f32_specials(rng)
    if dt == F64:
        with np.errstate(invalid="ignore"):                          # signalling NaN payloads widened
            return np.concatenate([_f32_specials(rng).astype(np.float64), rng.standard_normal(500) * 1e300])
    if dt == BOOL:
        return np.arange(256, dtype=np.uint16).astype(np.uint8)         # any byte, read as != 0
    info = np.iinfo(NP[dt])
    ext = np.array([info.min, info.max, 0, -1 if info.min < 0 else 1, 1], dtype=NP[dt])
    return np.concatenate([ext, rng.integers(info.min, info.max, 2000, dtype=NP[dt], endpoint=True)])


LOAD_PAIRS = [(F32, F32), (F16, F32), (BF16, F32), (F16, F16), (BF16, BF16), (I32, I32), (I64, I64),
              (BOOL, BOOL), (I32, F32), (F16, BF16), (I8, I32), (BOOL, F32), (F64, F32)]


@pytest.mark.parametrize("pair", LOAD_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_load_chunk_is_the_per_element_cast(pair):
    src_dt, to = pair
    x = np.ascontiguousarray(_source(src_dt, np.random.default_rng(src_dt * 31 + to)))
    for stride in (1, 3):
        n = (x.size + stride - 1) // stride
        bad = lib().pyaclnn_stub_ew_chunk_load_check(x.ctypes.data, stride, src_dt, to, n)
        assert bad == -1, f"element {bad} (stride {stride}): {x[bad * stride]!r}"


def _values(from_dt, rng):
    """Values of dtype from_dt as the engine holds them (doubles for floats, int64 otherwise)."""
    if from_dt == F32:
        with np.errstate(invalid="ignore"):                          # signalling NaN payloads widened
            return _f32_specials(rng).astype(np.float64), None
    if from_dt in (F16, BF16):
        import ml_dtypes
        np_dt = np.float16 if from_dt == F16 else ml_dtypes.bfloat16
        with np.errstate(invalid="ignore"):                          # the NaN patterns
            return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np_dt).astype(np.float64), None
    if from_dt == BOOL:
        return None, np.array([0, 1] * 64, dtype=np.int64)
    info = np.iinfo(NP[from_dt])
    return None, np.concatenate([np.array([info.min, info.max, 0, -1], dtype=np.int64),
                                 rng.integers(info.min, info.max, 2000, endpoint=True)]).astype(np.int64)


STORE_PAIRS = [(F32, F32), (F32, F16), (F32, BF16), (F16, F16), (BF16, BF16), (BF16, F16), (I32, I32),
               (I64, I64), (BOOL, BOOL), (F32, I32), (I64, I32), (BOOL, F32)]


@pytest.mark.parametrize("pair", STORE_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_store_chunk_is_the_per_element_cast(pair):
    from_dt, to = pair
    f, i = _values(from_dt, np.random.default_rng(from_dt * 17 + to))
    n = (f if f is not None else i).size
    f = np.ascontiguousarray(f) if f is not None else None
    i = np.ascontiguousarray(i) if i is not None else None
    a, b = np.full(n, 0xA5, dtype=NP[to]), np.full(n, 0x5A, dtype=NP[to])
    lib().pyaclnn_stub_ew_chunk_store_both(None if f is None else f.ctypes.data, None if i is None else i.ctypes.data,
                                           from_dt, to, n, a.ctypes.data, b.ctypes.data)
    diff = np.flatnonzero((a.view(np.uint8).reshape(n, -1) != b.view(np.uint8).reshape(n, -1)).any(axis=1))
    assert diff.size == 0, f"{diff.size} differ, first {diff[0]}: {a[diff[0]]!r} vs {b[diff[0]]!r}"
