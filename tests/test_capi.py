"""pyaclnn.capi against the real declarations, and a few calls on the stub.

Every function line of tests/data/real_headers.txt (the normalised real CANN declarations) must have a
binding whose restype/argtypes are the ctypes spelling of that line's C types (mapped here
independently of the code generator); every ENUM line must be a module constant of that value.
"""
from __future__ import annotations

import ctypes
import re
from ctypes import POINTER, byref, c_bool, c_char_p, c_double, c_float, c_int, c_int32, c_int64, \
    c_size_t, c_uint16, c_uint32, c_uint64, c_void_p
from pathlib import Path

import numpy as np
import pytest

from helpers import DeviceArray, create_tensor, destroy_tensor, int64_array
from pyaclnn import capi

REAL = Path(__file__).parent / "data" / "real_headers.txt"
LINES = REAL.read_text().splitlines()
FUNC_LINES = [ln for ln in LINES if ln.endswith(");")]
ENUM_LINES = [ln[5:] for ln in LINES if ln.startswith("ENUM ")]

# C type (normalised spelling, const removed) -> ctypes. Opaque handles travel as c_void_p.
SCALAR = {"int": c_int, "aclError": c_int, "aclnnStatus": c_int32, "int32_t": c_int32,
          "uint32_t": c_uint32, "int64_t": c_int64, "uint64_t": c_uint64, "size_t": c_size_t,
          "float": c_float, "double": c_double, "bool": c_bool, "aclFloat16": c_uint16,
          "uint16_t": c_uint16}
ENUMS = {"aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy", "aclrtMemAttr",
         "aclrtRunMode", "aclrtStreamStatus", "aclrtEventStatus", "aclrtEventRecordedStatus",
         "aclrtLastErrLevel"}
VOID_PTR_TYPEDEFS = {"aclrtStream", "aclrtEvent", "aclrtContext"}
OPAQUE = {"aclTensor", "aclScalar", "aclIntArray", "aclFloatArray", "aclBoolArray", "aclTensorList",
          "aclScalarList", "aclOpExecutor"}


def expected_ctype(c: str):
    c = c.replace("const", " ")
    stars = c.count("*")
    base = c.replace("*", " ").split()
    assert len(base) == 1, c
    base = base[0]
    if base == "void" and stars == 0:
        return None
    if base == "char" and stars == 1:
        return c_char_p
    if base in OPAQUE or base == "void":
        t, stars = c_void_p, stars - 1
    elif base in VOID_PTR_TYPEDEFS:
        t = c_void_p
    elif base in ENUMS:
        t = c_int
    else:
        t = SCALAR[base]
    for _ in range(stars):
        t = POINTER(t)
    return t


def parse(line: str):
    m = re.match(r"^(.+?)\s*\b(\w+)\((.*)\);$", line)
    ret, name, args = m.groups()
    args = [a.strip() for a in args.split(",")] if args.strip() not in ("", "void") else []
    return name, expected_ctype(ret), [expected_ctype(a) for a in args]


@pytest.mark.parametrize("line", FUNC_LINES, ids=lambda ln: parse(ln)[0])
def test_prototype_table_matches_real_declaration(line):
    name, restype, argtypes = parse(line)
    assert name in capi.PROTOTYPES, f"{name} has no binding"
    got_restype, got_argtypes = capi.PROTOTYPES[name]
    assert got_restype is restype
    assert list(got_argtypes) == argtypes


def test_every_declaration_is_bound_on_the_stub():
    names = [parse(ln)[0] for ln in FUNC_LINES]
    assert len(names) > 100
    for name in names:
        if name in capi.OPTIONAL and not capi.available(name):
            continue                              # operators: see the next test
        fn = getattr(capi, name)
        restype, argtypes = capi.PROTOTYPES[name]
        assert isinstance(fn, ctypes._CFuncPtr), f"{name} is not exported by the stub"
        assert fn.restype is restype and list(fn.argtypes) == list(argtypes), name
        assert getattr(capi, name) is fn          # bound once: later lookups hit the module dict


@pytest.mark.parametrize("op", ["AmpUpdateScale", "AddRmsNormDynamicQuant", "AddRmsNormDynamicQuantV2",
                                "GroupedDynamicMxQuant", "GroupedDynamicMxQuantV2"])
def test_stub_exports_each_project_operator(op):
    for name in (f"aclnn{op}GetWorkspaceSize", f"aclnn{op}"):
        assert capi.available(name), f"{name} is not exported by the stub"
        assert isinstance(getattr(capi, name), ctypes._CFuncPtr)


def test_dump_op_tensors_is_declared_optional():
    name, restype, argtypes = parse(
        "aclnnStatus aclDumpOpTensors(const char*, const char*, aclTensor**, size_t, size_t, aclrtStream);")
    assert capi.PROTOTYPES[name] == (restype, tuple(argtypes))
    assert name in capi.OPTIONAL
    for op in ("AmpUpdateScale", "AddRmsNormDynamicQuant", "AddRmsNormDynamicQuantV2",
               "GroupedDynamicMxQuant", "GroupedDynamicMxQuantV2"):
        assert {f"aclnn{op}", f"aclnn{op}GetWorkspaceSize"} <= capi.OPTIONAL


@pytest.mark.parametrize("entry", ENUM_LINES, ids=lambda e: e.split("=")[0])
def test_constant_values(entry):
    name, value = entry.split("=")
    assert getattr(capi, name) == int(value)


def test_version_constants_and_enum_groups():
    assert (capi.ACL_MAJOR_VERSION, capi.ACL_MINOR_VERSION, capi.ACL_PATCH_VERSION) == (1, 17, 0)
    assert capi.ENUM_MEMBERS["aclDataType"]["ACL_BF16"] == 27
    assert capi.ENUM_MEMBERS["aclFormat"]["ACL_FRACTAL_Z_3D"] == 33
    assert capi.ENUM_MEMBERS["aclLogLevel"]["ACL_ERROR"] == 3
    assert "ACL_ERROR_GE_FAILURE" in capi.ENUM_MEMBERS["acl_error"]      # 500002, an ACL code


def test_unknown_attribute():
    with pytest.raises(AttributeError):
        capi.aclNoSuchFunction
    assert "aclrtMalloc" in dir(capi)


# ------------------------------------------------------------------------------------------------
# Calls on the stub (values from the ABI notes, not from the stub)
# ------------------------------------------------------------------------------------------------

def test_get_version(acl):
    major, minor, patch = c_int32(), c_int32(), c_int32()
    assert capi.aclrtGetVersion(byref(major), byref(minor), byref(patch)) == 0
    assert (major.value, minor.value, patch.value) == (1, 17, 0)


def test_soc_name_and_run_mode(acl):
    soc = capi.aclrtGetSocName()
    assert isinstance(soc, bytes) and soc.startswith(b"Ascend")
    mode = c_int()
    assert capi.aclrtGetRunMode(byref(mode)) == 0 and mode.value == capi.ACL_HOST


# aclDataTypeSize() of the real runtime (ABI notes §2.1), including the default-branch 8 for FP6/FP4.
VENDOR_TYPE_SIZE = {"ACL_DT_UNDEFINED": 0, "ACL_FLOAT": 4, "ACL_FLOAT16": 2, "ACL_INT8": 1,
                    "ACL_INT32": 4, "ACL_UINT8": 1, "ACL_INT16": 2, "ACL_UINT16": 2, "ACL_UINT32": 4,
                    "ACL_INT64": 8, "ACL_UINT64": 8, "ACL_DOUBLE": 8, "ACL_BOOL": 1, "ACL_STRING": 0,
                    "ACL_COMPLEX64": 8, "ACL_COMPLEX128": 16, "ACL_BF16": 2, "ACL_INT4": 1,
                    "ACL_UINT1": 1, "ACL_COMPLEX32": 4, "ACL_HIFLOAT8": 1, "ACL_FLOAT8_E5M2": 1,
                    "ACL_FLOAT8_E4M3FN": 1, "ACL_FLOAT8_E8M0": 1, "ACL_FLOAT6_E3M2": 8,
                    "ACL_FLOAT6_E2M3": 8, "ACL_FLOAT4_E2M1": 8, "ACL_FLOAT4_E1M2": 8}


@pytest.mark.parametrize("name", sorted(VENDOR_TYPE_SIZE))
def test_data_type_size(name):
    assert capi.aclDataTypeSize(getattr(capi, name)) == VENDOR_TYPE_SIZE[name]


@pytest.mark.parametrize("value, bits", [(1.0, 0x3C00), (-2.5, 0xC100), (65504.0, 0x7BFF),
                                         (1e6, 0x7BFF), (float("inf"), 0x7BFF),
                                         (float("-inf"), 0xFBFF), (2.0 ** -24, 0x0001)])
def test_float_to_float16_saturates(value, bits):
    assert capi.aclFloatToFloat16(value) == bits


@pytest.mark.parametrize("bits, value", [(0x3C00, 1.0), (0x7C00, 65536.0), (0xFC00, -65536.0),
                                         (0x7E00, 98304.0), (0x0001, 2.0 ** -24)])
def test_float16_to_float_is_not_ieee_at_exponent_31(bits, value):
    assert capi.aclFloat16ToFloat(bits) == value


def test_malloc_memcpy_roundtrip(acl):
    data = np.arange(37, dtype=np.float32)
    with DeviceArray(data) as buf:
        np.testing.assert_array_equal(buf.numpy(), data)
        assert capi.aclrtMemset(buf.ptr, buf.nbytes, 0x7F, 4) == 0
        assert buf.numpy().view(np.uint32)[0] == 0x7F7F7F7F


def test_failures_return_codes_and_leave_a_message(acl, recent_error):
    assert capi.aclrtFree(None) == capi.ACL_ERROR_INVALID_PARAM
    msg = recent_error()
    assert msg and "aclrtFree" in msg
    assert recent_error() is None                      # read-and-clear
    p = c_void_p()
    assert capi.aclrtMalloc(byref(p), 0, capi.ACL_MEM_MALLOC_HUGE_FIRST) == capi.ACL_ERROR_INVALID_PARAM


def test_tensor_metadata_roundtrip(acl):
    with DeviceArray(np.zeros(24, np.float16)) as buf:
        t = create_tensor([2, 3], capi.ACL_FLOAT16, buf.ptr, strides=[1, 2], offset=5,
                          fmt=capi.ACL_FORMAT_NCHW, storage_shape=[24])
        try:
            dtype, fmt, offset, addr = c_int(), c_int(), c_int64(), c_void_p()
            assert capi.aclGetDataType(t, byref(dtype)) == 0 and dtype.value == capi.ACL_FLOAT16
            assert capi.aclGetFormat(t, byref(fmt)) == 0 and fmt.value == capi.ACL_FORMAT_NCHW
            assert capi.aclGetViewOffset(t, byref(offset)) == 0 and offset.value == 5
            assert capi.aclGetRawTensorAddr(t, byref(addr)) == 0 and addr.value == buf.ptr
        finally:
            destroy_tensor(t)


def test_meta_api_null_handles(acl):
    dtype = c_int()
    assert capi.aclGetDataType(None, byref(dtype)) == capi.ACLNN_ERR_PARAM_NULLPTR
    assert capi.aclDestroyTensor(None) == 0
    assert capi.aclCreateTensor(None, 2, capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND,
                                int64_array([2]), 1, None) is None


def test_arrays_copy_their_input(acl):
    values = (c_bool * 3)(True, False, True)
    arr = capi.aclCreateBoolArray(values, 3)
    assert arr
    size = c_uint64()
    assert capi.aclGetBoolArraySize(arr, byref(size)) == 0 and size.value == 3
    assert capi.aclDestroyBoolArray(arr) == 0
    farr = capi.aclCreateFloatArray((c_float * 2)(1.5, 2.5), 2)
    assert capi.aclGetFloatArraySize(farr, byref(size)) == 0 and size.value == 2
    assert capi.aclDestroyFloatArray(farr) == 0


def test_generated_tables_are_current(tmp_path):
    """_constants.py / _functions.py match what _codegen.py makes of real_headers.txt (comments aside)."""
    from pyaclnn.capi import _codegen
    _codegen.main([str(REAL), "--out", str(tmp_path)])
    here = Path(capi.__file__).parent

    def code_lines(p: Path):
        return [ln for ln in p.read_text().splitlines() if not ln.lstrip().startswith("#")]
    for name in ("_constants.py", "_functions.py"):
        assert code_lines(tmp_path / name) == code_lines(here / name), name
