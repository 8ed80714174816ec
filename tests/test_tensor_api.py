"""libnnopbase object API (abi.md §3.2, §5.3): every creator, getter and destroyer; NULL rules;
stale, freed, foreign and wrong-kind handles (a status, never a crash); list ownership; 4-bit units."""
from __future__ import annotations

import ctypes

import pytest

from pyaclnn import capi
from pyaclnn._loader import backend

from helpers import StubCounts as Counts

NULLPTR = capi.ACLNN_ERR_PARAM_NULLPTR       # 161001
INVALID = capi.ACLNN_ERR_PARAM_INVALID       # 161002

# free() as the process resolves it (RTLD_DEFAULT), i.e. the same allocator the stub's malloc() used,
# even under a sanitizer that interposes malloc/free.
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


def nnopbase_counts() -> Counts:
    fn = backend().symbol("pyaclnn_stub_nnopbase_counts")
    fn.argtypes, fn.restype = [ctypes.POINTER(Counts)], None
    out = Counts()
    fn(ctypes.byref(out))
    return out


def i64(*values):
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def new_tensor(shape=(2, 3), dtype=capi.ACL_FLOAT, strides=None, offset=0, fmt=capi.ACL_FORMAT_ND,
               storage=None, data=0x1000):
    storage = list(shape) if storage is None else list(storage)
    return capi.aclCreateTensor(i64(*shape), len(shape), dtype, None if strides is None else i64(*strides),
                                offset, fmt, i64(*storage), len(storage), data)


def read_dims(getter, tensor) -> list[int]:
    """Calls aclGetViewShape-style getters and frees the returned array (malloc'ed by the stub)."""
    ptr, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
    assert getter(tensor, ctypes.byref(ptr), ctypes.byref(n)) == 0
    assert ptr                                   # never NULL, even for rank 0
    values = [ptr[i] for i in range(n.value)]
    _libc.free(ctypes.cast(ptr, ctypes.c_void_p))
    return values


def get(getter, handle, ctype):
    out = ctype()
    status = getter(handle, ctypes.byref(out))
    return status, out.value


@pytest.fixture
def tensor(acl):
    t = new_tensor()
    assert t
    yield t
    capi.aclDestroyTensor(t)


# ------------------------------------------------------------------------------------------------
# aclTensor
# ------------------------------------------------------------------------------------------------

def test_create_tensor_echoes_every_field(acl):
    # a transposed view of a flat storage, as torch_npu passes it (storage rank != view rank)
    t = new_tensor(shape=(4, 2), dtype=capi.ACL_FLOAT16, strides=(1, 4), offset=3, fmt=capi.ACL_FORMAT_NCHW,
                   storage=(64,), data=0x7000)
    assert t
    try:
        assert read_dims(capi.aclGetViewShape, t) == [4, 2]
        assert read_dims(capi.aclGetViewStrides, t) == [1, 4]
        assert read_dims(capi.aclGetStorageShape, t) == [64]
        assert get(capi.aclGetViewOffset, t, ctypes.c_int64) == (0, 3)
        assert get(capi.aclGetFormat, t, ctypes.c_int) == (0, capi.ACL_FORMAT_NCHW)
        assert get(capi.aclGetDataType, t, ctypes.c_int) == (0, capi.ACL_FLOAT16)
        assert get(capi.aclGetRawTensorAddr, t, ctypes.c_void_p) == (0, 0x7000)
    finally:
        assert capi.aclDestroyTensor(t) == 0


def test_null_strides_mean_row_major_and_zero_dims_count_as_one(acl):
    t = new_tensor(shape=(2, 0, 3, 5))
    assert read_dims(capi.aclGetViewStrides, t) == [15, 15, 5, 1]
    capi.aclDestroyTensor(t)


def test_zero_dim_tensor(acl):
    t = capi.aclCreateTensor(None, 0, capi.ACL_INT32, None, 0, capi.ACL_FORMAT_ND, None, 0, None)
    assert t
    assert read_dims(capi.aclGetViewShape, t) == []
    assert read_dims(capi.aclGetStorageShape, t) == []
    assert get(capi.aclGetRawTensorAddr, t, ctypes.c_void_p) == (0, None)
    assert capi.aclDestroyTensor(t) == 0


@pytest.mark.parametrize("dtype", [capi.ACL_INT4, capi.ACL_FLOAT4_E2M1, capi.ACL_FLOAT4_E1M2])
def test_four_bit_dtypes_are_described_in_four_bit_elements(acl, dtype):
    # torch_npu's layout of a [2, 8] fp4 tensor held in 8 bytes: extents and strides in nibbles
    t = new_tensor(shape=(2, 8), dtype=dtype, strides=(8, 1), storage=(16,))
    assert t
    assert read_dims(capi.aclGetViewShape, t) == [2, 8]
    assert read_dims(capi.aclGetViewStrides, t) == [8, 1]
    assert read_dims(capi.aclGetStorageShape, t) == [16]
    assert get(capi.aclGetDataType, t, ctypes.c_int) == (0, dtype)
    capi.aclDestroyTensor(t)


@pytest.mark.parametrize("case", ["null_view", "null_storage", "negative_view", "negative_storage",
                                  "rank_26", "storage_rank_26", "dtype_99", "dtype_undefined",
                                  "dtype_string"])
def test_create_tensor_rejects_bad_arguments_with_null_and_message(acl, recent_error, case):
    before = nnopbase_counts().tensors
    shape, dtype, storage = i64(2, 3), capi.ACL_FLOAT, i64(6)
    n, sn = 2, 1
    if case == "null_view":
        shape = None
    elif case == "null_storage":
        storage = None
    elif case == "negative_view":
        shape = i64(2, -3)
    elif case == "negative_storage":
        storage = i64(-6)
    elif case == "rank_26":
        shape, n = i64(*[1] * 26), 26
    elif case == "storage_rank_26":
        storage, sn = i64(*[1] * 26), 26
    elif case == "dtype_99":
        dtype = 99
    elif case == "dtype_undefined":
        dtype = capi.ACL_DT_UNDEFINED
    elif case == "dtype_string":
        dtype = capi.ACL_STRING
    assert capi.aclCreateTensor(shape, n, dtype, None, 0, capi.ACL_FORMAT_ND, storage, sn, 0x1000) is None
    message = recent_error()
    assert message and "aclCreateTensor" in message
    assert nnopbase_counts().tensors == before      # nothing leaked


def test_max_rank_is_accepted(acl):
    t = new_tensor(shape=[1] * 25)
    assert t
    assert len(read_dims(capi.aclGetViewShape, t)) == 25
    capi.aclDestroyTensor(t)


def test_init_tensor_redescribes_and_leaves_the_tensor_alone_on_error(acl, tensor, recent_error):
    assert capi.aclInitTensor(tensor, i64(5), 1, capi.ACL_BF16, None, 2, capi.ACL_FORMAT_ND, i64(7), 1,
                              0x2000) == 0
    assert read_dims(capi.aclGetViewShape, tensor) == [5]
    assert get(capi.aclGetDataType, tensor, ctypes.c_int) == (0, capi.ACL_BF16)
    assert get(capi.aclGetViewOffset, tensor, ctypes.c_int64) == (0, 2)
    assert get(capi.aclGetRawTensorAddr, tensor, ctypes.c_void_p) == (0, 0x2000)

    assert capi.aclInitTensor(tensor, i64(-1), 1, capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, i64(1), 1,
                              0x3000) == INVALID
    assert recent_error()
    assert read_dims(capi.aclGetViewShape, tensor) == [5]
    assert get(capi.aclGetRawTensorAddr, tensor, ctypes.c_void_p) == (0, 0x2000)

    assert capi.aclInitTensor(None, i64(1), 1, capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, i64(1), 1, 0) == NULLPTR
    assert recent_error()


def test_raw_tensor_address(acl, tensor, recent_error):
    assert capi.aclSetRawTensorAddr(tensor, 0xABC0) == 0
    assert get(capi.aclGetRawTensorAddr, tensor, ctypes.c_void_p) == (0, 0xABC0)
    assert capi.aclSetRawTensorAddr(None, 0xABC0) == NULLPTR
    assert capi.aclGetRawTensorAddr(tensor, None) == NULLPTR
    assert recent_error()


@pytest.mark.parametrize("getter", ["aclGetViewShape", "aclGetViewStrides", "aclGetStorageShape"])
def test_shape_getters_null_rules(acl, tensor, recent_error, getter):
    fn = getattr(capi, getter)
    ptr, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
    assert fn(None, ctypes.byref(ptr), ctypes.byref(n)) == NULLPTR
    assert fn(tensor, None, ctypes.byref(n)) == NULLPTR
    assert fn(tensor, ctypes.byref(ptr), None) == NULLPTR
    assert recent_error()


@pytest.mark.parametrize("getter,ctype", [("aclGetViewOffset", ctypes.c_int64), ("aclGetFormat", ctypes.c_int),
                                          ("aclGetDataType", ctypes.c_int)])
def test_scalar_getters_null_rules(acl, tensor, recent_error, getter, ctype):
    fn = getattr(capi, getter)
    out = ctype()
    assert fn(None, ctypes.byref(out)) == NULLPTR
    assert fn(tensor, None) == NULLPTR
    assert recent_error()


# ------------------------------------------------------------------------------------------------
# Handles that are not live objects of the right kind
# ------------------------------------------------------------------------------------------------

def test_freed_tensor_is_refused_everywhere(acl, recent_error):
    t = new_tensor()
    assert capi.aclDestroyTensor(t) == 0
    out = ctypes.c_int()
    assert capi.aclGetDataType(t, ctypes.byref(out)) == INVALID
    assert "not a live aclTensor" in recent_error()
    assert capi.aclDestroyTensor(t) == INVALID          # double destroy: a status, not a crash
    assert recent_error()
    assert capi.aclSetRawTensorAddr(t, 0x10) == INVALID
    assert capi.aclInitTensor(t, i64(1), 1, capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, i64(1), 1, 0) == INVALID


def test_foreign_pointer_is_refused(acl, recent_error):
    foreign = ctypes.create_string_buffer(4096)          # readable memory that is no aclTensor
    addr = ctypes.addressof(foreign)
    out = ctypes.c_int()
    assert capi.aclGetDataType(addr, ctypes.byref(out)) == INVALID
    assert capi.aclDestroyTensor(addr) == INVALID
    assert capi.aclDestroyIntArray(addr) == INVALID
    assert capi.aclDestroyTensorList(addr) == INVALID
    assert capi.aclDestroyAclOpExecutor(addr) != 0
    assert recent_error()
    # unmapped addresses are not dereferenced either
    assert capi.aclGetDataType(0x10, ctypes.byref(out)) == INVALID
    assert capi.aclDestroyScalar(0xDEAD0) == INVALID


def test_wrong_kind_is_refused_and_the_object_survives(acl, tensor, recent_error):
    value = ctypes.c_float(1.5)
    scalar = capi.aclCreateScalar(ctypes.byref(value), capi.ACL_FLOAT)
    out = ctypes.c_int()
    assert capi.aclGetDataType(scalar, ctypes.byref(out)) == INVALID
    assert "aclScalar" in recent_error()
    assert capi.aclDestroyScalar(tensor) == INVALID
    assert "aclTensor" in recent_error()
    assert capi.aclDestroyIntArray(scalar) == INVALID
    size = ctypes.c_uint64()
    assert capi.aclGetBoolArraySize(tensor, ctypes.byref(size)) == INVALID
    # both are still alive and usable
    assert capi.aclGetDataType(tensor, ctypes.byref(out)) == 0
    assert capi.aclDestroyScalar(scalar) == 0


def test_every_destroyer_accepts_null(acl):
    for name in ("aclDestroyTensor", "aclDestroyScalar", "aclDestroyIntArray", "aclDestroyFloatArray",
                 "aclDestroyBoolArray", "aclDestroyTensorList", "aclDestroyScalarList"):
        assert getattr(capi, name)(None) == 0, name


# ------------------------------------------------------------------------------------------------
# Scalars and arrays
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,ctype", [(capi.ACL_FLOAT, ctypes.c_float), (capi.ACL_FLOAT16, ctypes.c_uint16),
                                         (capi.ACL_BF16, ctypes.c_uint16), (capi.ACL_INT8, ctypes.c_int8),
                                         (capi.ACL_INT32, ctypes.c_int32), (capi.ACL_INT64, ctypes.c_int64),
                                         (capi.ACL_DOUBLE, ctypes.c_double), (capi.ACL_BOOL, ctypes.c_bool),
                                         (capi.ACL_COMPLEX128, ctypes.c_double * 2)])
def test_scalar_create_destroy(acl, dtype, ctype):
    before = nnopbase_counts().scalars
    value = ctype()
    scalar = capi.aclCreateScalar(ctypes.byref(value), dtype)
    assert scalar
    assert nnopbase_counts().scalars == before + 1
    assert capi.aclDestroyScalar(scalar) == 0
    assert nnopbase_counts().scalars == before
    assert capi.aclDestroyScalar(scalar) == INVALID


def test_scalar_bad_arguments(acl, recent_error):
    value = ctypes.c_double(1.0)
    assert capi.aclCreateScalar(None, capi.ACL_FLOAT) is None
    assert recent_error()
    assert capi.aclCreateScalar(ctypes.byref(value), 77) is None
    assert recent_error()


@pytest.mark.parametrize("create,get_size,destroy,ctype", [
    ("aclCreateIntArray", "aclGetIntArraySize", "aclDestroyIntArray", ctypes.c_int64),
    ("aclCreateFloatArray", "aclGetFloatArraySize", "aclDestroyFloatArray", ctypes.c_float),
    ("aclCreateBoolArray", "aclGetBoolArraySize", "aclDestroyBoolArray", ctypes.c_bool),
])
def test_arrays(acl, recent_error, create, get_size, destroy, ctype):
    create, get_size, destroy = getattr(capi, create), getattr(capi, get_size), getattr(capi, destroy)
    before = nnopbase_counts().arrays
    values = (ctype * 3)(1, 0, 1)
    arrays = [create(values, 3), create(None, 0), create(values, 0), create(None, 5)]
    assert all(arrays)                                   # NULL / size 0 give empty objects, not NULL
    assert [get(get_size, a, ctypes.c_uint64) for a in arrays] == [(0, 3), (0, 0), (0, 0), (0, 0)]
    assert nnopbase_counts().arrays == before + 4
    assert get_size(None, ctypes.byref(ctypes.c_uint64())) == NULLPTR
    assert get_size(arrays[0], None) == NULLPTR
    for a in arrays:
        assert destroy(a) == 0
    assert nnopbase_counts().arrays == before
    assert destroy(arrays[0]) == INVALID
    assert get_size(arrays[0], ctypes.byref(ctypes.c_uint64())) == INVALID
    assert recent_error()


# ------------------------------------------------------------------------------------------------
# Lists own their elements
# ------------------------------------------------------------------------------------------------

def handles(*items):
    return (ctypes.c_void_p * max(len(items), 1))(*items)


def test_tensor_list_owns_its_tensors(acl, recent_error):
    before = nnopbase_counts()
    a, b, c = new_tensor(), new_tensor(), new_tensor()
    lst = capi.aclCreateTensorList(handles(a, None, b, c), 4)      # NULL elements are tolerated
    assert lst
    assert get(capi.aclGetTensorListSize, lst, ctypes.c_uint64) == (0, 4)
    counts = nnopbase_counts()
    assert (counts.tensors, counts.tensor_lists) == (before.tensors + 3, before.tensor_lists + 1)

    assert capi.aclDestroyTensor(b) == INVALID                     # owned: would be a double free
    assert "aclTensorList" in recent_error()
    assert get(capi.aclGetDataType, b, ctypes.c_int) == (0, capi.ACL_FLOAT)

    assert capi.aclDestroyTensorList(lst) == 0
    counts = nnopbase_counts()
    assert (counts.tensors, counts.tensor_lists) == (before.tensors, before.tensor_lists)
    assert get(capi.aclGetDataType, a, ctypes.c_int)[0] == INVALID     # destroyed with the list
    assert capi.aclDestroyTensorList(lst) == INVALID
    assert recent_error()


def test_tensor_list_refuses_shared_stale_or_duplicate_elements(acl, recent_error):
    before = nnopbase_counts()
    a, b = new_tensor(), new_tensor()
    first = capi.aclCreateTensorList(handles(a), 1)
    assert first
    assert capi.aclCreateTensorList(handles(b, a), 2) is None       # a already belongs to `first`
    assert recent_error()
    assert capi.aclCreateTensorList(handles(b, b), 2) is None       # the same tensor twice
    assert recent_error()
    stale = new_tensor()
    capi.aclDestroyTensor(stale)
    assert capi.aclCreateTensorList(handles(b, stale), 2) is None
    assert recent_error()
    assert capi.aclCreateTensorList(None, 2) is None
    assert recent_error()
    # the failed attempts took nothing: b is still the caller's to destroy
    assert capi.aclDestroyTensor(b) == 0
    assert capi.aclDestroyTensorList(first) == 0
    counts = nnopbase_counts()
    assert (counts.tensors, counts.tensor_lists) == (before.tensors, before.tensor_lists)


def test_empty_lists(acl):
    for create, destroy in (("aclCreateTensorList", "aclDestroyTensorList"),
                            ("aclCreateScalarList", "aclDestroyScalarList")):
        lst = getattr(capi, create)(None, 0)
        assert lst
        assert getattr(capi, destroy)(lst) == 0


def test_scalar_list_owns_its_scalars(acl, recent_error):
    before = nnopbase_counts()
    values = [ctypes.c_int32(i) for i in range(3)]
    scalars = [capi.aclCreateScalar(ctypes.byref(v), capi.ACL_INT32) for v in values]
    lst = capi.aclCreateScalarList(handles(*scalars), 3)
    assert lst
    assert get(capi.aclGetScalarListSize, lst, ctypes.c_uint64) == (0, 3)
    assert capi.aclDestroyScalar(scalars[1]) == INVALID
    assert recent_error()
    assert capi.aclCreateScalarList(handles(scalars[0]), 1) is None   # already owned
    assert recent_error()
    assert capi.aclDestroyScalarList(lst) == 0
    counts = nnopbase_counts()
    assert (counts.scalars, counts.scalar_lists) == (before.scalars, before.scalar_lists)
    assert capi.aclGetScalarListSize(None, ctypes.byref(ctypes.c_uint64())) == NULLPTR


# ------------------------------------------------------------------------------------------------
# Library-level calls
# ------------------------------------------------------------------------------------------------

def test_aclnn_init_and_finalize(acl):
    assert capi.aclnnInit(None) == 0
    assert capi.aclnnFinalize() == 0


def test_dump_op_tensors_checks_its_pointers(acl, stream, tensor, recent_error):
    tensors = (ctypes.c_void_p * 2)(tensor, tensor)
    assert capi.aclDumpOpTensors(b"Add", b"add0", tensors, 1, 1, stream) == 0
    assert capi.aclDumpOpTensors(None, b"add0", tensors, 1, 1, stream) == NULLPTR
    assert capi.aclDumpOpTensors(b"Add", b"add0", None, 1, 1, stream) == NULLPTR
    assert capi.aclDumpOpTensors(b"Add", b"add0", tensors, 1, 1, None) == NULLPTR
    assert recent_error()
