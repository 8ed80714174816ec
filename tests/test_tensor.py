"""pyaclnn.tensor: host round trips for every dtype, the packed 4-bit layout, non-contiguous views,
the cached aclTensor (checked with the meta API's getters) and release."""
from __future__ import annotations

import ctypes
import math

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn.errors import ClosedError
from pyaclnn import capi, codecs, runtime
from pyaclnn.tensor import Tensor, as_acl_dtype, contiguous_strides, from_numpy, wrap_pointer


@pytest.fixture(autouse=True)
def default_stream_exists():
    return runtime.current_stream()


def device_bytes(t: Tensor, nbytes: int) -> bytes:
    t.memory.wait_idle()
    out = (ctypes.c_ubyte * nbytes)()
    assert capi.aclrtMemcpy(out, nbytes, t.ptr, nbytes, capi.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return bytes(out)


RNG = np.random.default_rng(7)
VALUE_DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int16, np.int32,
                np.int64, np.uint64, np.float64, np.bool_, np.complex64, ml_dtypes.float8_e4m3fn,
                ml_dtypes.float8_e5m2]


@pytest.mark.parametrize("dtype", VALUE_DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip(dtype):
    host = (RNG.standard_normal((3, 5)) * 10).astype(dtype)
    t = from_numpy(host)
    assert t.shape == (3, 5) and t.strides == (5, 1) and t.offset == 0
    back = t.numpy()
    assert back.dtype == np.dtype(dtype)
    assert back.tobytes() == host.tobytes()
    assert device_bytes(t, host.nbytes) == host.tobytes()


def test_e8m0_and_carrier_types():
    e8 = np.array([1.0, 2.0, 0.5, 1024.0], dtype=ml_dtypes.float8_e8m0fnu)
    assert from_numpy(e8).numpy().tobytes() == e8.tobytes()
    codes = np.arange(0, 256, 17, dtype=np.uint8)
    hif8 = from_numpy(codes, dtype="hifloat8")
    assert hif8.dtype_name == "ACL_HIFLOAT8" and hif8.numpy().tobytes() == codes.tobytes()
    assert np.array_equal(codecs.decode_hifloat8(hif8.numpy()), codecs.decode_hifloat8(codes), equal_nan=True)


def expected_nibbles(codes: list[int]) -> bytes:
    """The specs' packed layout: element 2k in the low nibble of byte k, 2k+1 in the high one."""
    codes = codes + [0] * (len(codes) % 2)
    return bytes((codes[i] & 0xF) | ((codes[i + 1] & 0xF) << 4) for i in range(0, len(codes), 2))


def test_int4_is_packed_two_per_byte():
    values = [1, -2, 3, -4, 5, 7, -8]
    host = np.array(values, dtype=ml_dtypes.int4)
    t = from_numpy(host)
    assert t.dtype_name == "ACL_INT4" and t.nbytes == 4
    assert device_bytes(t, 4) == expected_nibbles(values)
    assert t.numpy().tolist() == values
    assert t[1::2].numpy().tolist() == [-2, -4, 7]          # odd offset: starts in a high nibble
    assert t[3:].numpy().tolist() == [-4, 5, 7, -8]


def test_fp4_types_are_packed():
    e2m1 = np.array([0.5, -1.0, 6.0, 0.0, -3.0], dtype=ml_dtypes.float4_e2m1fn)
    t = from_numpy(e2m1)
    codes = list(e2m1.view(np.uint8) & 0xF)
    assert device_bytes(t, 3) == expected_nibbles([int(c) for c in codes])
    assert t.numpy().tobytes() == e2m1.tobytes()
    e1m2_codes = np.array([1, 2, 3, 15, 8, 0], dtype=np.uint8)
    u = from_numpy(e1m2_codes, dtype="float4_e1m2")
    assert u.dtype_name == "ACL_FLOAT4_E1M2"
    assert device_bytes(u, 3) == expected_nibbles(e1m2_codes.tolist())
    assert u.numpy().tolist() == e1m2_codes.tolist()


def test_views_match_numpy():
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = from_numpy(host)
    cases = {
        "T": (t.T, host.T),
        "slice": (t[1:3, ::2], host[1:3, ::2]),
        "int": (t[2], host[2]),
        "scalar": (t[3, 5], host[3, 5]),
        "ellipsis": (t[..., 4], host[..., 4]),
        "newaxis": (t[None, 1], host[None, 1]),
        "permute": (t.reshape(2, 3, 4).permute(2, 0, 1), host.reshape(2, 3, 4).transpose(2, 0, 1)),
        "empty": (t[4:], host[4:]),
    }
    for name, (view, expect) in cases.items():
        got = view.numpy()
        assert got.shape == expect.shape, name
        assert np.array_equal(got, expect), name
    v = t[1:3, ::2]
    assert v.strides == (6, 2) and v.offset == 6 and not v.is_contiguous()
    assert v.memory is t.memory


@pytest.mark.parametrize("shape, strides", [
    ((2, 1, 3), (3, 99, 1)), ((1, 6), (1000, 1)), ((6, 1), (1, 0)), ((1,), (7,)), ((1, 1), (5, 3)),
    ((2, 3), (3, 1)), ((2, 3), (1, 2)), ((3, 1), (2, 1)), ((2, 1, 3), (4, 3, 1)), ((1, 2), (0, 2)),
])
def test_is_contiguous_ignores_the_strides_of_size_1_dimensions(shape, strides):
    """Row-major contiguity as NumPy (relaxed strides) and torch define it: a dimension of size 1
    is never stepped over, so its stride does not matter. NumPy's flag is the reference."""
    t = pyaclnn.zeros((64,)).as_strided(shape, strides, 0)
    itemsize = 4
    probe = np.lib.stride_tricks.as_strided(np.zeros(64, np.float32), shape,
                                            tuple(s * itemsize for s in strides))
    assert t.is_contiguous() == probe.flags.c_contiguous
    if t.is_contiguous():                    # contiguous views reshape and fill like plain tensors
        flat = t.reshape(-1)
        assert flat.shape == (math.prod(shape),) and flat.strides == (1,)
        t.copy_from(np.arange(t.size, dtype=np.float32).reshape(shape))
        assert t.numpy().ravel().tolist() == list(range(t.size))


def test_view_errors():
    t = pyaclnn.zeros((2, 3))
    with pytest.raises(IndexError):
        t[::-1]
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(ValueError):
        t.T.reshape(6)
    with pytest.raises(ValueError):
        t.as_strided((3, 3), (3, 1))                       # runs past the 6 elements
    with pytest.raises(ValueError):
        Tensor(t.memory, (2,), "float32", strides=(-1,))


def meta(handle: int) -> dict:
    def dims(getter):
        p, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
        assert getter(handle, ctypes.byref(p), ctypes.byref(n)) == 0
        return [p[i] for i in range(n.value)]
    dt, fmt, off, addr = ctypes.c_int(), ctypes.c_int(), ctypes.c_int64(), ctypes.c_void_p()
    assert capi.aclGetDataType(handle, ctypes.byref(dt)) == 0
    assert capi.aclGetFormat(handle, ctypes.byref(fmt)) == 0
    assert capi.aclGetViewOffset(handle, ctypes.byref(off)) == 0
    assert capi.aclGetRawTensorAddr(handle, ctypes.byref(addr)) == 0
    return {"shape": dims(capi.aclGetViewShape), "strides": dims(capi.aclGetViewStrides),
            "storage": dims(capi.aclGetStorageShape), "dtype": dt.value, "format": fmt.value,
            "offset": off.value, "addr": addr.value}


def test_zero_size_dimensions_count_as_1_in_contiguous_strides():
    """torch gives shape (2, 0, 3) the strides (3, 3, 1): a zero-size dimension counts as 1 in the
    strides of the dimensions before it, on the Tensor and on its aclTensor."""
    assert contiguous_strides((2, 0, 3)) == (3, 3, 1)
    assert contiguous_strides((0, 4)) == (4, 1) and contiguous_strides((3, 0)) == (1, 1)
    for shape, strides in (((2, 0, 3), (3, 3, 1)), ((0, 2, 2), (4, 2, 1)), ((4, 0), (1, 1))):
        t = pyaclnn.empty(shape, "float32")
        assert t.strides == strides and t.is_contiguous()
        assert meta(t.acl_handle())["strides"] == list(strides)
        assert t.reshape(shape).strides == strides
        t.close()


def test_acl_tensor_describes_the_view():
    t = pyaclnn.from_numpy(np.zeros((4, 6), np.float16), format="NCHW")
    h = t.acl_handle()
    assert t.acl_handle() == h                           # cached
    m = meta(h)
    assert m == {"shape": [4, 6], "strides": [6, 1], "storage": [4, 6], "dtype": capi.ACL_FLOAT16,
                 "format": capi.ACL_FORMAT_NCHW, "offset": 0, "addr": t.ptr}
    v = t[1:, 2:5].T
    m = meta(v.acl_handle())
    # views: storage = one dimension of storage elements (torch_npu's convention)
    assert m["shape"] == [3, 3] and m["strides"] == [1, 6] and m["offset"] == 8
    assert m["storage"] == [24] and m["addr"] == t.ptr
    zero_d = pyaclnn.from_numpy(np.float32(3.0))
    m = meta(zero_d.acl_handle())
    assert m["shape"] == [] and m["storage"] == []


def test_handle_released_with_the_tensor():
    before = runtime.stub_live_counts()["tensors"]
    t = pyaclnn.zeros((3,))
    t.acl_handle()
    t.T.acl_handle()
    assert runtime.stub_live_counts()["tensors"] == before + 1    # the view's handle died with it
    t.close()
    assert runtime.stub_live_counts()["tensors"] == before
    with pytest.raises(ClosedError):                             # a closed tensor is not reopened
        t.acl_handle()
    del t
    assert runtime.stub_live_counts()["tensors"] == before


def test_memory_returns_to_the_pool_after_the_last_view():
    s = runtime.Stream()
    t = pyaclnn.zeros((256,), stream=s)
    v = t[10:20]
    del t
    assert s.pool.stats()["in_use_blocks"] == 1                  # the view still uses it
    assert v.numpy().sum() == 0
    del v
    assert s.pool.stats()["in_use_blocks"] == 0
    s.close()


def test_constructors():
    z = pyaclnn.zeros((2, 3), "bfloat16")
    assert z.dtype == np.dtype(ml_dtypes.bfloat16) and not z.numpy().any()
    e = pyaclnn.empty_like(z, dtype="int32")
    assert e.shape == (2, 3) and e.dtype_name == "ACL_INT32"
    e.copy_from(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert e.numpy().ravel().tolist() == list(range(6))
    assert pyaclnn.zeros_like(e).numpy().sum() == 0
    empty = pyaclnn.from_numpy(np.zeros((0, 3), np.float32))
    assert empty.size == 0 and empty.numpy().shape == (0, 3)
    with pytest.raises(ValueError):
        e.copy_from(np.zeros(6, np.float32))                    # dtype mismatch is not silent
    with pytest.raises(ValueError):
        from_numpy(np.zeros(3, np.float32), dtype="hifloat8")


def test_dtype_spellings():
    assert as_acl_dtype("ACL_BF16") == as_acl_dtype("bf16") == as_acl_dtype("bfloat16") == capi.ACL_BF16
    assert as_acl_dtype(np.float16) == as_acl_dtype("FLOAT16") == capi.ACL_FLOAT16
    assert as_acl_dtype(capi.ACL_INT4) == as_acl_dtype(ml_dtypes.int4) == capi.ACL_INT4
    assert as_acl_dtype("float8_e8m0fnu") == capi.ACL_FLOAT8_E8M0
    with pytest.raises(ValueError):
        as_acl_dtype("no-such-type")


def test_wrap_pointer_of_device_memory():
    base = pyaclnn.from_numpy(np.arange(10, dtype=np.int32))
    w = wrap_pointer(base.ptr, (2, 3), "int32", strides=(3, 1), offset=4, owner=base)
    assert w.numpy().tolist() == [[4, 5, 6], [7, 8, 9]]
    assert contiguous_strides((2, 0, 3)) == (3, 3, 1)
