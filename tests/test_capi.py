"""pyaclnn.capi against the real declarations, and a few calls on the stub.

Every function line of tests/data/real_headers.txt (the normalised real CANN declarations) must have a
binding whose restype/argtypes are the ctypes spelling of that line's C types (mapped here
independently of the code generator); every ENUM line must be a module constant of that value.
"""
from __future__ import annotations

import ctypes
import re
from ctypes import POINTER, byref, c_bool, c_char_p, c_double, c_float, c_int, c_int8, c_int32, c_int64, \
    c_size_t, c_uint16, c_uint32, c_uint64, c_void_p
from pathlib import Path

import numpy as np
import pytest

from helpers import REPO_ROOT, DeviceArray, create_tensor, destroy_tensor, int64_array, run_python
import pyaclnn
from pyaclnn import capi

REAL = Path(__file__).parent / "data" / "real_headers.txt"
LINES = REAL.read_text().splitlines()
FUNC_LINES = [ln for ln in LINES if ln.endswith(");")]
ENUM_LINES = [ln[5:] for ln in LINES if ln.startswith("ENUM ")]

# C type (normalised spelling, const removed) -> ctypes. Opaque handles travel as c_void_p.
SCALAR = {"int": c_int, "aclError": c_int, "aclnnStatus": c_int32, "int32_t": c_int32,
          "uint32_t": c_uint32, "int64_t": c_int64, "uint64_t": c_uint64, "size_t": c_size_t,
          "float": c_float, "double": c_double, "bool": c_bool, "aclFloat16": c_uint16,
          "uint16_t": c_uint16, "int8_t": c_int8}
ENUMS = {"aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy", "aclrtMemAttr",
         "aclrtRunMode", "aclrtStreamStatus", "aclrtEventStatus", "aclrtEventRecordedStatus",
         "aclrtEventWaitStatus", "aclrtLastErrLevel", "aclrtCallbackBlockType", "aclrtHostRegisterType",
         "aclrtCmoType", "aclrtDevAttr", "aclCannAttr"}
# Structures and function pointers travel as the ctypes classes of the same name (sizes checked below).
RECORDS = {"aclrtPtrAttributes", "aclrtMallocConfig", "aclrtMemUsageInfo", "aclrtMemcpyBatchAttr", "aclrtUuid",
           "aclrtCallback", "aclrtHostFunc"}
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
    elif base in RECORDS:
        t = getattr(capi, base)
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


def _bound_argtypes(line, argtypes):
    """What binding makes of the header's argtypes: `const char*` parameters also take str (a plain
    `char*`, which the callee may write, keeps c_char_p)."""
    inner = line[line.index("(") + 1:line.rindex(")")].strip()
    params = [] if inner in ("", "void") else [" ".join(a.split()) for a in inner.split(",")]
    return [capi._binding.const_char_p if t is c_char_p and p == "const char*" else t
            for p, t in zip(params, argtypes)]


def test_every_declaration_is_bound_on_the_stub():
    lines = {parse(ln)[0]: ln for ln in FUNC_LINES}
    names = list(lines)
    assert len(names) > 100
    for name in names:
        if name in capi.OPTIONAL and not capi.available(name):
            continue                              # operators: see the next test
        fn = capi.cfunc(name)
        restype, argtypes = capi.PROTOTYPES[name]
        assert isinstance(fn, ctypes._CFuncPtr), f"{name} is not exported by the stub"
        assert fn.restype is restype and list(fn.argtypes) == _bound_argtypes(lines[name], argtypes), name
        # bound once: later lookups hit the module dict (the compiled path's wrapper of fn, if built)
        assert getattr(getattr(capi, name), "ctypes_function", getattr(capi, name)) is fn
        assert capi.cfunc(name) is fn


@pytest.mark.parametrize("op", ["AmpUpdateScale", "AddRmsNormDynamicQuant", "AddRmsNormDynamicQuantV2",
                                "GroupedDynamicMxQuant", "GroupedDynamicMxQuantV2"])
def test_stub_exports_each_project_operator(op):
    for name in (f"aclnn{op}GetWorkspaceSize", f"aclnn{op}"):
        assert capi.available(name), f"{name} is not exported by the stub"
        assert isinstance(capi.cfunc(name), ctypes._CFuncPtr)


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


def test_generated_tables_are_current():
    """_constants.py / _functions.py / _enums.py are what pyaclnn.signatures makes of the header tree, byte for byte."""
    from pyaclnn.signatures import capi_mirror, declarations
    here = Path(capi.__file__).parent
    for name, text in capi_mirror.generate(declarations.read_tree(HEADERS)).items():
        assert (here / name).read_text() == text, f"{name} is stale: python -m pyaclnn.signatures capi"


def test_the_generator_refuses_headers_it_cannot_mirror(tmp_path):
    from pyaclnn.errors import PyaclnnError
    from pyaclnn.signatures import capi_mirror, declarations
    (tmp_path / "acl.h").write_text("typedef struct Thing Thing;\nint aclInit(Thing t);\n")
    with pytest.raises(PyaclnnError, match="enum typedefs"):
        capi_mirror.generate(declarations.read_tree(tmp_path))
    types = capi_mirror.CapiTypes(declarations.read_tree(tmp_path))
    with pytest.raises(ValueError, match="opaque struct by value"):
        types.expr("Thing")
    with pytest.raises(ValueError, match="unknown C type"):
        types.expr("Mystery*")
    assert types.expr("const Thing* const*") == "POINTER(c_void_p)"


# ------------------------------------------------------------------------------------------------
# Porting C++ line by line. The expectations come from the headers
# (pyaclnn.get_include(), checked against the real declarations by test_headers.py) and
# real_headers.txt, parsed here independently of the generator (pyaclnn/signatures/capi_mirror.py).
# ------------------------------------------------------------------------------------------------

HEADERS = Path(pyaclnn.get_include())   # native_stubs/include and the operator headers the build generates
TYPEDEF_ENUMS = sorted(ln[8:].split("=")[0] for ln in LINES if ln.startswith("TYPEDEF ") and ln.endswith("=enum"))


def _header_sources() -> dict[str, str]:
    out = {}
    for h in sorted(HEADERS.rglob("*.h")):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", h.read_text(), flags=re.S)
        out[h.relative_to(HEADERS).as_posix()] = " ".join(text.split())
    return out


def _header_enums() -> dict[str, list[str]]:
    enums = {}
    for text in _header_sources().values():
        for m in re.finditer(r"typedef enum\s*\w*\s*\{([^{}]*)\}\s*(\w+)\s*;", text):
            body = re.sub(r"\bACL_DEPRECATED_MESSAGE\s*\([^()]*\)", " ", m.group(1))   # deprecated members
            enums[m.group(2)] = [item.split("=")[0].strip() for item in body.split(",") if item.strip()]
    return enums


def test_star_import_then_calls_work_without_loading_anything_at_import():
    code, out, err = run_python("""
        from pyaclnn.capi import *
        import pyaclnn._loader as loader
        assert loader._backend is None, "the star import loaded the libraries"
        assert aclInit(None) == ACL_SUCCESS
        assert aclrtSetDevice(0) == ACL_SUCCESS
        assert aclrtResetDevice(0) == ACL_SUCCESS
        assert aclFinalize() == ACL_SUCCESS
        print(loader._backend.name)
    """)
    assert code == 0, err
    assert out.strip() == "stub"


def test_star_import_with_an_unavailable_toolkit_fails_at_the_first_call_not_at_import(tmp_path):
    code, out, err = run_python("""
        from pyaclnn.capi import *
        from pyaclnn._loader import BackendError
        print("imported")
        try:
            aclInit(None)
        except BackendError as exc:
            print("BackendError")
    """, env_overrides={"PYACLNN_BACKEND": "cann", "ASCEND_HOME_PATH": str(tmp_path),
                        "ASCEND_TOOLKIT_HOME": None})
    assert code == 0, err
    assert out.split() == ["imported", "BackendError"]


def test_all_lists_every_c_name_and_nothing_else():
    names = set(capi.__all__)
    assert set(capi.PROTOTYPES) <= names
    assert {parse(ln)[0] for ln in FUNC_LINES} <= names
    assert {e.split("=")[0] for e in ENUM_LINES} <= names
    assert set(TYPEDEF_ENUMS) <= names
    assert {"aclrtStream", "aclrtEvent", "aclrtContext"} <= names
    assert not {n for n in names if n.startswith("_")}
    assert not names & {"PROTOTYPES", "DECLARATIONS", "ENUM_MEMBERS", "OPTIONAL", "SOURCES", "cfunc",
                        "available", "bind_all", "deref", "IntEnum", "annotations"}
    namespace: dict = {}
    exec("from pyaclnn.capi import *", namespace)
    assert names <= set(namespace)
    assert namespace["aclDataType"].ACL_FLOAT16 == namespace["ACL_FLOAT16"] == 1


def test_const_char_parameters_take_str(tmp_path):
    good = tmp_path / "配置 acl.json"           # a non-ASCII path: str goes out as UTF-8
    good.write_text("{}")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = run_python(f"""
        import ctypes
        from pyaclnn import capi
        print(capi.aclInit({str(bad)!r}), "bad.json" in capi.aclGetRecentErrMsg().decode())
        print(capi.aclInit({str(good)!r}), capi.aclFinalize())
        try:
            capi.aclInit(5)
        except ctypes.ArgumentError as exc:
            print("ArgumentError:", exc)
    """)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{capi.ACL_ERROR_PARSE_FILE} True"
    assert lines[1] == "0 0"
    assert "const char*" in lines[2] and "str, bytes or None" in lines[2] and "int" in lines[2]


def test_round_mode_str_and_bytes_are_the_same_argument(acl, recent_error):
    from reference.gmq_validation import make_call
    from test_grouped_dynamic_mx_quant_validation import build_operands
    operands = build_operands(make_call(64, 5, 2))
    try:
        h = [o.handle for o in operands]
        got = {}
        for mode in ("rint", b"rint", "nearest-ish", b"nearest-ish"):
            ws, ex = c_uint64(), c_void_p()
            status = capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(
                h[0], h[1], mode, capi.ACL_FLOAT8_E4M3FN, 32, 0, 0.0, h[2], h[3], byref(ws), byref(ex))
            message = recent_error()
            got[mode] = (status, ws.value, message and message[message.index("aclnn"):])   # no timestamp
            if ex:
                assert capi.aclDestroyAclOpExecutor(ex) == 0
    finally:
        for o in operands:
            o.close()
    assert got["rint"] == got[b"rint"] and got["rint"][0] == 0
    assert got["nearest-ish"] == got[b"nearest-ish"]
    assert got["nearest-ish"][0] == capi.ACLNN_ERR_PARAM_INVALID and "nearest-ish" in got["nearest-ish"][2]


def _help_text(obj) -> str:
    import pydoc
    return pydoc.render_doc(obj, renderer=pydoc.plaintext)


def _type_skeleton(params: str) -> list[str]:
    """'const int64_t* viewDims, uint64_t n' -> ['int64_t*', 'uint64_t'] (names and const dropped)."""
    out = []
    for p in params.split(","):
        words = p.replace("*", " * ").replace("const", " ").split()
        if words and words[-1] not in ("*",) and len([w for w in words if w != "*"]) > 1:
            words = words[:-1]                      # the parameter name
        if words and words != ["void"]:
            out.append("".join(words))
    return out


@pytest.mark.parametrize("line", FUNC_LINES, ids=lambda ln: parse(ln)[0])
def test_help_shows_the_c_prototype_and_its_header(line):
    name = parse(line)[0]
    declaring = [path for path, text in _header_sources().items()
                 if re.search(rf"\b{name}\s*\([^()]*\)\s*;", text)]
    assert declaring, f"{name} is declared in no header"
    text = " ".join(_help_text(getattr(capi, name)).split())
    assert declaring[0] in text
    # the prototype shown has the real declaration's return type, name and parameter types
    ret = line.split(name + "(")[0].strip()
    m = re.search(rf"{re.escape(ret)} {name}\(([^()]*)\);", text)
    assert m, text
    assert _type_skeleton(m.group(1)) == _type_skeleton(line[line.index("(") + 1:line.rindex(")")])


def test_help_of_aclCreateTensor():
    expected = ("aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType, "
                "const int64_t* stride, int64_t offset, aclFormat format, const int64_t* storageDims, "
                "uint64_t storageDimsNum, void* tensorData)")
    for state in ("as imported", "bound"):
        text = " ".join(_help_text(capi.aclCreateTensor).split())
        assert expected in text, state
        assert "aclnn/acl_meta.h" in text, state
        capi.cfunc("aclCreateTensor")
    import inspect
    assert list(inspect.signature(capi._unbound("aclCreateTensor")).parameters)[:3] == \
        ["viewDims", "viewDimsNum", "dataType"]


@pytest.mark.parametrize("enum_name", TYPEDEF_ENUMS)
def test_each_c_enum_is_an_int_enum_of_its_header_members(enum_name):
    import enum
    members = _header_enums()[enum_name]
    real = dict(e.split("=") for e in ENUM_LINES)
    cls = getattr(capi, enum_name)
    assert issubclass(cls, enum.IntEnum)
    assert list(cls.__members__) == members          # aliases (deprecated spellings) included
    for m in members:
        assert getattr(cls, m) == getattr(capi, m) == int(real[m])
        assert type(getattr(capi, m)) is int              # the plain constant stays an int


def test_cpp_enum_spelling():
    assert capi.aclDataType.ACL_FLOAT16 == capi.ACL_FLOAT16 == 1
    assert capi.aclFormat.ACL_FORMAT_ND == capi.ACL_FORMAT_ND == 2
    assert capi.aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST == 2
    assert capi.aclDataType(27) is capi.aclDataType.ACL_BF16
    assert capi.aclDataTypeSize(capi.aclDataType.ACL_BF16) == 2     # members go to C as ints


def test_out_parameters_by_byref_and_deref(acl):
    from pyaclnn.capi import deref
    addr = c_void_p()
    p = byref(addr)
    assert deref(p) is addr
    assert capi.aclrtMalloc(p, 64, capi.ACL_MEM_MALLOC_HUGE_FIRST) == 0       # void** passed on
    assert deref(p).value and deref(p).value == addr.value
    size = c_uint64(7)
    deref(byref(size)).value = 9                                             # *size = 9
    assert size.value == 9
    assert deref(ctypes.pointer(size)) .value == 9
    with pytest.raises(TypeError, match="byref"):
        deref(addr.value)
    with pytest.raises(TypeError, match="offset"):
        deref(byref(size, 4))
    assert capi.aclrtFree(addr) == 0


def test_operator_functions_come_from_the_one_operator_registry():
    """capi's aclnn functions, the ops registry and the support table's catalog name the same operators:
    each operator of the signature registry (the catalog the build writes from the operator definitions)
    is exactly its two C functions in capi, with the registry's prototype; the static tables hold none.
    The only others are those of the test headers that ops.load_headers may have read earlier in this
    process: capi declares an operator the registry gained when ops binds it (next test)."""
    from pyaclnn import _catalog, signatures
    from pyaclnn.ops import _registry
    builtin = signatures.builtin()
    assert len(builtin) > 100
    assert set(builtin) == set(_catalog.operators()) == set(signatures.registry([]))
    assert set(builtin) <= set(_registry.signatures())
    from pyaclnn.signatures import capi_mirror
    assert {n for n in capi_mirror.MIRRORED if n.startswith("aclnn")} == {"aclnnInit", "aclnnFinalize", "aclnnStatus"}
    c_operators = {n for n in capi.PROTOTYPES if n.startswith("aclnn")} - {"aclnnInit", "aclnnFinalize"}
    of = lambda sigs: {f for sig in sigs for f in (sig.name, sig.workspace_function)}   # noqa: E731
    loaded = signatures.parse_dir_cached(Path(__file__).parent / "data" / "signature_headers").values()
    assert of(builtin.values()) <= c_operators <= of(builtin.values()) | of(loaded)
    for sig in builtin.values():
        params = ", ".join(p.ctype for p in sig.params)
        assert capi.DECLARATIONS[sig.workspace_function] == f"aclnnStatus {sig.workspace_function}({params});"
        assert capi.SOURCES[sig.workspace_function][1] in (sig.header, f"aclnnop/{sig.header}")
        assert capi.OPTIONAL >= {sig.name, sig.workspace_function}
