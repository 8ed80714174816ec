"""pyaclnn.dtypes: aclDataType <-> numpy/ml_dtypes, bit widths, packed sizes, lazy torch."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from helpers import run_python
from pyaclnn import capi, dtypes

ALL_DTYPES = {n: v for n, v in capi.ENUM_MEMBERS["aclDataType"].items() if n != "ACL_DT_UNDEFINED"}


def test_every_acl_data_type_is_described():
    assert set(dtypes.BY_NAME) == set(ALL_DTYPES)
    for name, value in ALL_DTYPES.items():
        assert dtypes.info(value).name == name
        assert dtypes.info(name).acl == value


@pytest.mark.parametrize("name, np_dtype", [
    ("ACL_FLOAT", np.float32), ("ACL_FLOAT16", np.float16), ("ACL_DOUBLE", np.float64),
    ("ACL_INT8", np.int8), ("ACL_UINT8", np.uint8), ("ACL_INT16", np.int16),
    ("ACL_UINT16", np.uint16), ("ACL_INT32", np.int32), ("ACL_UINT32", np.uint32),
    ("ACL_INT64", np.int64), ("ACL_UINT64", np.uint64), ("ACL_BOOL", np.bool_),
    ("ACL_COMPLEX64", np.complex64), ("ACL_COMPLEX128", np.complex128),
    ("ACL_BF16", ml_dtypes.bfloat16), ("ACL_FLOAT8_E4M3FN", ml_dtypes.float8_e4m3fn),
    ("ACL_FLOAT8_E5M2", ml_dtypes.float8_e5m2), ("ACL_FLOAT8_E8M0", ml_dtypes.float8_e8m0fnu),
    ("ACL_FLOAT4_E2M1", ml_dtypes.float4_e2m1fn), ("ACL_INT4", ml_dtypes.int4),
])
def test_value_types_roundtrip(name, np_dtype):
    acl = getattr(capi, name)
    assert dtypes.to_numpy(acl) == np.dtype(np_dtype)
    assert dtypes.from_numpy(np_dtype) == acl
    assert not dtypes.info(acl).carrier


@pytest.mark.parametrize("name", ["ACL_HIFLOAT8", "ACL_FLOAT4_E1M2", "ACL_FLOAT6_E3M2",
                                  "ACL_FLOAT6_E2M3"])
def test_types_without_numpy_home_use_a_uint8_carrier(name):
    d = dtypes.info(name)
    assert d.carrier and d.numpy == np.dtype(np.uint8)
    # A uint8 array always means ACL_UINT8, never a carrier type.
    assert dtypes.from_numpy(np.uint8) == capi.ACL_UINT8


@pytest.mark.parametrize("name, bits, packed", [
    ("ACL_INT4", 4, True), ("ACL_FLOAT4_E2M1", 4, True), ("ACL_FLOAT4_E1M2", 4, True),
    ("ACL_UINT1", 1, True), ("ACL_FLOAT6_E3M2", 6, False), ("ACL_HIFLOAT8", 8, False),
    ("ACL_FLOAT8_E8M0", 8, False), ("ACL_BF16", 16, False), ("ACL_FLOAT", 32, False),
    ("ACL_COMPLEX32", 32, False), ("ACL_COMPLEX128", 128, False),
])
def test_bit_width_and_packing(name, bits, packed):
    assert dtypes.bit_width(name) == bits
    assert dtypes.is_packed(name) is packed


@pytest.mark.parametrize("name, n, expected", [
    ("ACL_INT4", 0, 0), ("ACL_INT4", 1, 1), ("ACL_INT4", 3, 2), ("ACL_INT4", 64, 32),
    ("ACL_FLOAT4_E2M1", 5, 3), ("ACL_FLOAT4_E1M2", 32, 16), ("ACL_UINT1", 9, 2),
    ("ACL_FLOAT", 3, 12), ("ACL_BF16", 7, 14), ("ACL_FLOAT8_E4M3FN", 5, 5),
    ("ACL_HIFLOAT8", 5, 5), ("ACL_FLOAT6_E2M3", 4, 4), ("ACL_COMPLEX64", 2, 16),
])
def test_nbytes(name, n, expected):
    assert dtypes.nbytes(name, n) == expected


def test_itemsize_agrees_with_numpy_for_byte_types():
    for d in dtypes.BY_ACL.values():
        if d.numpy is not None and not d.packed and not d.carrier:
            assert d.itemsize == d.numpy.itemsize, d.name


def test_fp6_value_types_map_to_acl_fp6():
    if not hasattr(ml_dtypes, "float6_e3m2fn"):
        pytest.skip("ml_dtypes without float6")
    assert dtypes.from_numpy(ml_dtypes.float6_e3m2fn) == capi.ACL_FLOAT6_E3M2
    assert dtypes.from_numpy(ml_dtypes.float6_e2m3fn) == capi.ACL_FLOAT6_E2M3


def test_errors_for_unknown_types():
    with pytest.raises(ValueError):
        dtypes.info(5)                    # a gap in the enum
    with pytest.raises(ValueError):
        dtypes.to_numpy(capi.ACL_STRING)
    with pytest.raises(ValueError):
        dtypes.from_numpy(np.dtype("U4"))


def test_from_torch_by_name_without_torch():
    class FakeTorchDtype:                  # str() like torch.bfloat16 -> "torch.bfloat16"
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return f"torch.{self.name}"
    assert dtypes.from_torch(FakeTorchDtype("bfloat16")) == capi.ACL_BF16
    assert dtypes.from_torch(FakeTorchDtype("float8_e4m3fn")) == capi.ACL_FLOAT8_E4M3FN
    with pytest.raises(ValueError):
        dtypes.from_torch(FakeTorchDtype("qint8"))


def test_package_import_does_not_import_torch():
    rc, out, err = run_python("""
import sys, pyaclnn, pyaclnn.capi, pyaclnn.dtypes, pyaclnn.errors
print("torch" in sys.modules)
""")
    assert rc == 0, err
    assert out.strip() == "False"


def test_pack_int4_low_nibble_first():
    values = np.array([1, -1, 7, -8, 3], dtype=ml_dtypes.int4)
    packed = dtypes.pack(values, capi.ACL_INT4)
    # element 2k in the low nibble: (1, -1) -> 0xF1, (7, -8) -> 0x87, (3, pad 0) -> 0x03
    assert packed.tolist() == [0xF1, 0x87, 0x03]
    assert packed.size == dtypes.nbytes(capi.ACL_INT4, values.size)
    back = dtypes.unpack(packed, capi.ACL_INT4, 5)
    assert back.dtype == np.dtype(ml_dtypes.int4)
    np.testing.assert_array_equal(back.astype(np.int8), [1, -1, 7, -8, 3])


def test_pack_float4_e2m1_roundtrip():
    values = np.array([0.5, -6.0, 1.5, 0.0], dtype=ml_dtypes.float4_e2m1fn)
    packed = dtypes.pack(values, capi.ACL_FLOAT4_E2M1)
    # E2M1 codes: 0.5 = 0b0001, -6.0 = 0b1111, 1.5 = 0b0011, 0.0 = 0b0000
    assert packed.tolist() == [0xF1, 0x03]
    back = dtypes.unpack(packed, capi.ACL_FLOAT4_E2M1, 4)
    np.testing.assert_array_equal(back.astype(np.float32), [0.5, -6.0, 1.5, 0.0])


def test_pack_rejects_byte_types():
    with pytest.raises(ValueError):
        dtypes.pack(np.zeros(2, np.float32), capi.ACL_FLOAT)
