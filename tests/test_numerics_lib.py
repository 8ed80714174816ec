"""The C number-format conversions, reached through libopapi's pyaclnn_stub_num_* exports.

This module also holds the ctypes access (``num_lib()``, ``c_encode``, ``c_decode``) that the other
test_numerics_* modules import. Here: the export layer itself (mode checks, packing, packed
encoders) and the contract functions operators link against.
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np
import pytest

from reference import formats as R

# name used in pyaclnn_stub_num_f32_to_<name> -> output dtype
ENCODED_DTYPE = {
    "fp16": np.uint16, "bf16": np.uint16, "fp8_e4m3fn": np.uint8, "fp8_e5m2": np.uint8,
    "hif8": np.uint8, "fp4_e2m1": np.uint8, "fp4_e1m2": np.uint8, "e8m0": np.uint8,
    "int32": np.int32, "int8": np.int8, "int4": np.int8,
}
DECODED_FROM = {"fp16": np.uint16, "bf16": np.uint16, "fp8_e4m3fn": np.uint8,
                "fp8_e5m2": np.uint8, "hif8": np.uint8, "fp4_e2m1": np.uint8,
                "fp4_e1m2": np.uint8, "e8m0": np.uint8}


def _stub_lib_dir() -> str:
    libdir = os.environ.get("PYACLNN_STUB_LIBDIR")
    if not libdir:
        from pyaclnn import _loader
        libdir = _loader.stub_library_dir()
    if not libdir:
        pytest.skip("no stub library directory (set PYACLNN_STUB_LIBDIR)")
    return libdir


@functools.lru_cache(maxsize=None)
def num_lib() -> ctypes.CDLL:
    """libopapi.so of the stub (its $ORIGIN rpath brings libascendcl / libnnopbase along)."""
    lib = ctypes.CDLL(os.path.join(_stub_lib_dir(), "libopapi.so"))
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    for name in ENCODED_DTYPE:
        f = getattr(lib, f"pyaclnn_stub_num_f32_to_{name}")
        f.argtypes, f.restype = [vp, vp, sz, ctypes.c_int], ctypes.c_int
    for name in ("fp4_e2m1_packed", "fp4_e1m2_packed", "int4_packed"):
        f = getattr(lib, f"pyaclnn_stub_num_f32_to_{name}")
        f.argtypes, f.restype = [vp, vp, sz, ctypes.c_int], ctypes.c_int
    for name in DECODED_FROM:
        f = getattr(lib, f"pyaclnn_stub_num_{name}_to_f32")
        f.argtypes, f.restype = [vp, vp, sz], None
    for name in ("pack4", "unpack4"):
        f = getattr(lib, f"pyaclnn_stub_num_{name}")
        f.argtypes, f.restype = [vp, vp, sz], None
    return lib


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


def c_encode(name: str, x, mode: int) -> np.ndarray:
    """float32 array -> codes via pyaclnn_stub_num_f32_to_<name> (int64 for easy comparison)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.zeros(x.shape, ENCODED_DTYPE[name])
    rc = getattr(num_lib(), f"pyaclnn_stub_num_f32_to_{name}")(_ptr(x), _ptr(out), x.size, mode)
    assert rc == 0, f"{name}: mode {mode:#x} refused"
    return out.astype(np.int64)


def c_decode(name: str, codes) -> np.ndarray:
    codes = np.ascontiguousarray(codes, dtype=DECODED_FROM[name])
    out = np.empty(codes.shape, np.float32)
    getattr(num_lib(), f"pyaclnn_stub_num_{name}_to_f32")(_ptr(codes), _ptr(out), codes.size)
    return out


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(np.asarray(a, np.float32).view(np.uint32),
                          np.asarray(b, np.float32).view(np.uint32))


# ---------------------------------------------------------------------------------------------

ACCEPTED = {  # round modes each conversion takes (flags checked separately)
    "fp16": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC, R.ODD},
    "bf16": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC, R.ODD},
    "fp8_e4m3fn": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
    "fp8_e5m2": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
    "fp4_e2m1": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
    "fp4_e1m2": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
    "hif8": {R.ROUND, R.HYBRID},
    "e8m0": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
    "int32": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
    "int8": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
    "int4": {R.RINT, R.ROUND, R.FLOOR, R.CEIL, R.TRUNC},
}


@pytest.mark.parametrize("name", sorted(ENCODED_DTYPE))
def test_unsupported_modes_are_refused_without_writing(name):
    f = getattr(num_lib(), f"pyaclnn_stub_num_f32_to_{name}")
    x = np.ones(4, np.float32)
    flags_ok = {"e8m0": 0, "int32": R.SAT, "int8": R.SAT, "int4": R.SAT}.get(
        name, R.SAT | R.NAN_TO_ZERO)
    for rnd in range(16):
        for flags in (0, R.SAT, R.NAN_TO_ZERO, 0x40, 0x100):
            out = np.full(4, 0x5A, ENCODED_DTYPE[name])
            rc = f(_ptr(x), _ptr(out), 4, rnd | flags)
            expect_ok = rnd in ACCEPTED[name] and (flags & ~flags_ok) == 0
            assert rc == (0 if expect_ok else -1), (rnd, flags)
            if not expect_ok:
                assert (out == 0x5A).all()


def test_zero_length_is_fine():
    f = num_lib().pyaclnn_stub_num_f32_to_fp8_e4m3fn
    assert f(None, None, 0, R.RINT) == 0


@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 1001])
def test_pack_unpack_roundtrip_low_nibble_first(n):
    rng = np.random.default_rng(n)
    nib = rng.integers(0, 16, n).astype(np.uint8)
    packed = np.zeros((n + 1) // 2, np.uint8)
    num_lib().pyaclnn_stub_num_pack4(_ptr(nib), _ptr(packed), n)
    assert np.array_equal(packed, R.pack4(nib))
    back = np.zeros(n, np.uint8)
    num_lib().pyaclnn_stub_num_unpack4(_ptr(packed), _ptr(back), n)
    assert np.array_equal(back, nib)


def test_pack_layout_example():
    # elements [1, 2, 3] -> bytes 0x21, 0x03 (element 2k low nibble, odd tail's high nibble 0)
    nib = np.array([1, 2, 3], np.uint8)
    packed = np.zeros(2, np.uint8)
    num_lib().pyaclnn_stub_num_pack4(_ptr(nib), _ptr(packed), 3)
    assert packed.tolist() == [0x21, 0x03]


@pytest.mark.parametrize("name,single", [("fp4_e2m1_packed", "fp4_e2m1"),
                                         ("fp4_e1m2_packed", "fp4_e1m2"),
                                         ("int4_packed", "int4")])
@pytest.mark.parametrize("n", [1, 2, 9, 1000])
@pytest.mark.parametrize("rnd", [R.RINT, R.FLOOR])
def test_packed_encoders_equal_encode_then_pack(name, single, n, rnd):
    mode = rnd | (R.SAT if single == "int4" else 0)
    x = np.random.default_rng(n).normal(0, 3, n).astype(np.float32)
    packed = np.zeros((n + 1) // 2, np.uint8)
    f = getattr(num_lib(), f"pyaclnn_stub_num_f32_to_{name}")
    assert f(_ptr(x), _ptr(packed), n, mode) == 0
    assert np.array_equal(packed, R.pack4(c_encode(single, x, mode) & 0xF))


def test_contract_conversions_are_rint():
    """num_f32_to_f16 / num_f32_to_bf16 (what operators link against) are the NUM_RINT mode:
    nearest-even, overflow -> +-inf, NaN -> the canonical quiet NaN with the sign kept."""
    x = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 65519.0, 65520.0, np.inf, -0.0],
                 np.float32)
    assert c_encode("fp16", x, R.RINT).tolist() == [0x3C00, 0x3C02, 0x7BFF, 0x7C00, 0x7C00,
                                                    0x8000]
    nan = np.array([0xFFC12345, 0x7F800001], np.uint32).view(np.float32)
    assert c_encode("bf16", nan, R.RINT).tolist() == [0xFFC0, 0x7FC0]
    assert c_encode("fp16", nan, R.RINT).tolist() == [0xFE00, 0x7E00]
