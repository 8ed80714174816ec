"""The aclop path at the C ABI (native_stubs/src/compat/ascendcl/aclop_objects.c, src/compat/acl_op_compiler.c):
tensor descriptions, data buffers and attributes as acl_base_mdl.h / acl_base_rt.h / acl_op.h define them, every
handle checked (NULL, destroyed, foreign, of another kind: ACL_ERROR_INVALID_PARAM and a message), and
aclopCompileAndExecute(V2) running Identity -- what torch_npu sends for npu_format_cast on Atlas A2 -- on the
stream, any other operator refused with 207000 and its name."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import pyaclnn
from _math_ops import torch_npu_run
from pyaclnn import capi, get_library_dir

INVALID_PARAM, NOT_SUPPORTED = 100000, 207000
FLOAT, FLOAT16, INT8 = 0, 1, 2
ND, NCHW = 2, 0
I64P = ctypes.POINTER(ctypes.c_int64)


def _lib(name):
    lib = ctypes.CDLL(f"{get_library_dir()}/{name}")
    sigs = {
        "aclCreateTensorDesc": (ctypes.c_void_p, [ctypes.c_int, ctypes.c_int, I64P, ctypes.c_int]),
        "aclDestroyTensorDesc": (None, [ctypes.c_void_p]),
        "aclGetTensorDescType": (ctypes.c_int, [ctypes.c_void_p]),
        "aclGetTensorDescFormat": (ctypes.c_int, [ctypes.c_void_p]),
        "aclGetTensorDescNumDims": (ctypes.c_size_t, [ctypes.c_void_p]),
        "aclGetTensorDescDimV2": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, I64P]),
        "aclSetTensorFormat": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
        "aclSetTensorShape": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, I64P]),
        "aclSetTensorPlaceMent": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
        "aclSetTensorDescName": (None, [ctypes.c_void_p, ctypes.c_char_p]),
        "aclCreateDataBuffer": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]),
        "aclDestroyDataBuffer": (ctypes.c_int, [ctypes.c_void_p]),
        "aclopCreateAttr": (ctypes.c_void_p, []),
        "aclopDestroyAttr": (None, [ctypes.c_void_p]),
        "aclopSetAttrInt": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]),
        "aclopSetAttrString": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
        "aclopSetAttrListInt": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, I64P]),
    }
    for fname, (res, args) in sigs.items():
        if hasattr(lib, fname):
            getattr(lib, fname).restype, getattr(lib, fname).argtypes = res, args
    return lib


@pytest.fixture(scope="module")
def acl():
    return _lib("libascendcl.so")


@pytest.fixture(scope="module")
def run():
    f = ctypes.CDLL(f"{get_library_dir()}/libacl_op_compiler.so").aclopCompileAndExecute
    P = ctypes.POINTER(ctypes.c_void_p)
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_char_p, ctypes.c_int, P, P, ctypes.c_int, P, P, ctypes.c_void_p, ctypes.c_int,
                  ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p]

    def call(op, descs_in, bufs_in, descs_out, bufs_out, attr=None, stream=None):
        arr = lambda xs: (ctypes.c_void_p * max(len(xs), 1))(*xs) if xs is not None else None  # noqa: E731
        return f(op, len(descs_in or []), arr(descs_in), arr(bufs_in), len(descs_out or []), arr(descs_out),
                 arr(bufs_out), attr, 0, 0, None, stream)
    return call


def dims(*d):
    return (ctypes.c_int64 * max(len(d), 1))(*d)


def message():
    m = capi.aclGetRecentErrMsg()
    return m.decode() if m else ""


def test_descriptions_keep_shape_format_and_origin(acl):
    capi.aclGetRecentErrMsg()
    d = acl.aclCreateTensorDesc(FLOAT16, 3, dims(2, 3, 4), NCHW)
    assert d and acl.aclGetTensorDescType(d) == FLOAT16 and acl.aclGetTensorDescFormat(d) == NCHW
    assert acl.aclGetTensorDescNumDims(d) == 3
    v = ctypes.c_int64()
    assert acl.aclGetTensorDescDimV2(d, 2, ctypes.byref(v)) == 0 and v.value == 4
    # torch_npu: the origin shape at creation, then the storage format and shape
    assert acl.aclSetTensorFormat(d, ND) == 0 and acl.aclSetTensorShape(d, 1, dims(24)) == 0
    assert acl.aclGetTensorDescFormat(d) == ND and acl.aclGetTensorDescNumDims(d) == 1
    assert acl.aclGetTensorDescDimV2(d, 0, ctypes.byref(v)) == 0 and v.value == 24
    assert acl.aclGetTensorDescDimV2(d, 1, ctypes.byref(v)) == INVALID_PARAM and "index 1 is not below" in message()
    acl.aclSetTensorDescName(d, b"x")
    assert acl.aclSetTensorPlaceMent(d, 1) == 0
    assert acl.aclSetTensorPlaceMent(d, 3) == INVALID_PARAM and "memType 3" in message()
    assert acl.aclGetTensorDescNumDims(acl.aclCreateTensorDesc(FLOAT, 1, dims(-2), ND)) == 2 ** 64 - 2   # unknown rank
    acl.aclDestroyTensorDesc(d)
    assert message() == ""


@pytest.mark.parametrize("ndim, shape, why", [(-1, (1,), "numDims -1"), (26, (1,) * 26, "numDims 26"),
                                              (2, None, "dims is NULL"), (2, (3, -3), "dims[1] = -3")])
def test_a_bad_shape_creates_nothing(acl, ndim, shape, why):
    assert acl.aclCreateTensorDesc(FLOAT, ndim, dims(*shape) if shape else None, ND) is None
    assert f"aclCreateTensorDesc({INVALID_PARAM})" in (m := message()) and why in m


def test_every_handle_is_checked_before_use(acl):
    d = acl.aclCreateTensorDesc(FLOAT, 1, dims(4), ND)
    b = acl.aclCreateDataBuffer(None, 0)
    a = acl.aclopCreateAttr()
    assert acl.aclDestroyDataBuffer(b) == 0
    assert acl.aclDestroyDataBuffer(b) == INVALID_PARAM and "is not a live aclDataBuffer" in message()
    assert acl.aclDestroyDataBuffer(None) == INVALID_PARAM and "dataBuffer is NULL" in message()
    assert acl.aclSetTensorFormat(a, ND) == INVALID_PARAM and "is an aclopAttr, not an aclTensorDesc" in message()
    assert acl.aclGetTensorDescType(None) == -1 and acl.aclGetTensorDescFormat(None) == -1   # UNDEFINED
    assert acl.aclGetTensorDescNumDims(None) == 0
    acl.aclDestroyTensorDesc(d)
    assert acl.aclGetTensorDescType(d) == -1 and "is not a live aclTensorDesc" in message()
    acl.aclDestroyTensorDesc(d)                                      # twice: reported, nothing freed twice
    assert "aclDestroyTensorDesc" in message()
    acl.aclDestroyTensorDesc(None)                                   # NULL: nothing, as in CANN
    assert acl.aclopSetAttrInt(a, None, 1) == INVALID_PARAM and "attrName is NULL" in message()
    acl.aclopDestroyAttr(a)
    assert acl.aclopSetAttrInt(a, b"k", 1) == INVALID_PARAM and "is not a live aclopAttr" in message()


def test_attributes_store_and_replace(acl):
    a = acl.aclopCreateAttr()
    assert acl.aclopSetAttrInt(a, b"axis", 1) == 0 and acl.aclopSetAttrInt(a, b"axis", 2) == 0   # replaced
    assert acl.aclopSetAttrString(a, b"src_format", b"NCHW") == 0
    assert acl.aclopSetAttrListInt(a, b"perm", 3, dims(2, 0, 1)) == 0
    assert acl.aclopSetAttrListInt(a, b"perm", -1, None) == INVALID_PARAM and "numValues -1" in message()
    assert acl.aclopSetAttrString(a, b"s", None) == INVALID_PARAM
    for i in range(40):                                              # the table grows
        assert acl.aclopSetAttrInt(a, f"k{i}".encode(), i) == 0
    acl.aclopDestroyAttr(a)


def _device(arr):
    return pyaclnn.from_numpy(np.ascontiguousarray(arr))


def test_identity_copies_on_the_stream(acl, run):
    x = np.arange(24, dtype=np.float16).reshape(2, 3, 4)
    src, dst = _device(x), _device(np.zeros_like(x))
    dx, dy = (acl.aclCreateTensorDesc(FLOAT16, 3, dims(2, 3, 4), NCHW) for _ in range(2))
    bx = acl.aclCreateDataBuffer(src.data_ptr, x.nbytes)
    by = acl.aclCreateDataBuffer(dst.data_ptr, x.nbytes)
    attr = acl.aclopCreateAttr()
    stream = pyaclnn.Stream()
    assert run(b"Identity", [dx], [bx], [dy], [by], attr, stream.handle) == 0
    stream.synchronize()
    assert np.array_equal(dst.numpy(), x)
    # storage shape: what torch_npu sets with aclSetTensorShape; one element count, any view of it
    assert acl.aclSetTensorShape(dy, 1, dims(24)) == 0
    assert run(b"Identity", [dx], [bx], [dy], [by]) == 0             # the default stream
    assert capi.aclrtSynchronizeDevice() == 0
    assert np.array_equal(dst.numpy(), x)
    # the refusals, each with its reason
    assert run(b"Identity", [dx], [bx], [dx, dy], [bx, by]) == INVALID_PARAM and "takes 1 input(s) and 1" in message()
    d8 = acl.aclCreateTensorDesc(INT8, 3, dims(2, 3, 4), ND)
    assert run(b"Identity", [dx], [bx], [d8], [by]) == INVALID_PARAM and "one dtype and element count" in message()
    small = acl.aclCreateDataBuffer(dst.data_ptr, 8)
    assert run(b"Identity", [dx], [bx], [dy], [small]) == INVALID_PARAM and "do not fit the data buffers" in message()
    assert acl.aclDestroyDataBuffer(small) == 0
    assert run(b"Identity", [dx], [small], [dy], [by]) == INVALID_PARAM and "is not live" in message()
    assert run(b"Identity", [dx], [bx], [dy], [by], attr=dx) == INVALID_PARAM and "not a live aclopAttr" in message()
    assert run(None, [], [], [], []) == INVALID_PARAM and "opType is NULL" in message()
    assert run(b"Identity", [dx], None, [dy], [by]) == INVALID_PARAM and "numInputs 1" in message()
    assert run(b"TransData", [dx], [bx], [dy], [by]) == NOT_SUPPORTED
    assert "aclop operator TransData is not emulated" in message()
    for d in (dx, dy, d8):
        acl.aclDestroyTensorDesc(d)
    for b in (bx, by):
        assert acl.aclDestroyDataBuffer(b) == 0
    acl.aclopDestroyAttr(attr)


TORCH_A2 = r'''
import torch, torch_npu
x = torch.randn(5, 33).half()
for fmt in (29, 3, 4, 0):
    y = torch_npu.npu_format_cast(x.npu(), fmt)       # A2 without internal formats: aclop Identity
    OUT[str(fmt)] = [torch_npu.get_npu_format(y), bool(torch.equal(y.cpu(), x))]
'''


def test_torch_npu_format_cast_on_atlas_a2_goes_through_identity():
    out = torch_npu_run(TORCH_A2, {}, soc="Ascend910B4")
    # a base format (torch_npu picks ND or NCHW) holding the same values
    assert all(fmt in (ND, NCHW) and same for fmt, same in out.values()) and len(out) == 4, out
