"""InplaceCopy, Cast and the fills on the elementwise engine against tests/reference/elementwise.py
and ml_dtypes (whose astype rounds to nearest even like the NPU's CAST_RINT)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from test_elementwise_arith import sample, same_bits

INVALID = 161002
DTYPES = R.ARITH


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_inplace_copy_every_pair(src, dst):
    x = sample(src, (3, 40))
    y = pyaclnn.zeros((3, 40), R.np_dtype(dst) if dst != "bfloat16" else "bfloat16")
    ops.InplaceCopy(y, x)
    same_bits(y.numpy(), R.cast(x, dst))


@pytest.mark.parametrize("dst,ml", [("float8_e4m3fn", ml_dtypes.float8_e4m3fn), ("float8_e5m2", ml_dtypes.float8_e5m2)])
@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16"])
def test_copy_to_fp8_rounds_like_ml_dtypes(src, dst, ml):
    x = sample(src, (500,))
    y = pyaclnn.zeros((500,), dst)
    ops.InplaceCopy(y, x)
    want = x.astype(np.float32).astype(ml)
    same_bits(y.numpy(), want)
    back = pyaclnn.zeros((500,), "float32")     # and back: fp8 -> fp32 is exact
    ops.InplaceCopy(back, y)
    same_bits(back.numpy(), want.astype(np.float32))


def test_copy_same_dtype_keeps_the_bits():
    x = np.array([0x7FC00001, 0xFF800000, 0x00000001], np.uint32).view(np.float32)   # NaN payload kept
    y = pyaclnn.zeros((3,), "float32")
    ops.InplaceCopy(y, x)
    assert y.numpy().view(np.uint32).tolist() == x.view(np.uint32).tolist()


def test_copy_non_contiguous_with_offsets_and_broadcast():
    src_store = pyaclnn.from_numpy(np.arange(40, dtype=np.float32))
    src = src_store.as_strided((4, 3), (1, 10), 5)                  # transposed-like, offset 5
    dst_store = pyaclnn.zeros((30,), "float16")
    dst = dst_store.as_strided((4, 3), (6, 2), 3)                   # gaps, offset 3
    ops.InplaceCopy(dst, src)
    idx_src = 5 + np.add.outer(np.arange(4), np.arange(3) * 10)
    idx_dst = 3 + np.add.outer(np.arange(4) * 6, np.arange(3) * 2)
    full = dst_store.numpy()
    assert np.array_equal(full[idx_dst], np.arange(40, dtype=np.float16)[idx_src])
    mask = np.ones(30, bool)
    mask[idx_dst.reshape(-1)] = False
    assert np.all(full[mask] == 0)
    row = pyaclnn.zeros((3, 4), "int32")                            # broadcast a row
    ops.InplaceCopy(row, np.int32([1, 2, 3, 4]))
    assert row.numpy().tolist() == [[1, 2, 3, 4]] * 3


def test_copy_overlapping_views_reads_before_writing():
    store = pyaclnn.from_numpy(np.arange(6, dtype=np.int64))
    ops.InplaceCopy(store.as_strided((5,), (1,), 1), store.as_strided((5,), (1,), 0))   # x[1:] = x[:-1]
    assert store.numpy().tolist() == [0, 0, 1, 2, 3, 4]
    sq = pyaclnn.from_numpy(np.arange(9, dtype=np.float32).reshape(3, 3))
    ops.InplaceCopy(sq, sq.transpose(0, 1))                                            # x = x.T
    assert sq.numpy().tolist() == np.arange(9, dtype=np.float32).reshape(3, 3).T.tolist()


def test_copy_validation():
    with pytest.raises(AclError) as e:   # src does not broadcast to selfRef
        ops.InplaceCopy(pyaclnn.zeros((2, 3)), np.zeros((3, 3), np.float32))
    assert e.value.code == INVALID
    with pytest.raises(AclError) as e:   # src broadcasts with selfRef but is larger than it
        ops.InplaceCopy(pyaclnn.zeros((3,)), np.zeros((2, 3), np.float32))
    assert e.value.code == INVALID
    with pytest.raises(AclError) as e:
        ops.InplaceCopy(pyaclnn.zeros((2,), "complex64"), np.zeros(2, np.float32))
    assert e.value.code == INVALID


def test_cast_float_to_int_truncates_saturates_and_maps_nan_to_zero():
    x = np.float32([1.9, -1.9, 1e10, -1e10, np.nan, np.inf, -0.5, 127.9, 300.0])
    from pyaclnn.tensor import as_acl_dtype
    got = ops.Cast(x, as_acl_dtype("int32"), np.zeros(9, np.int32))
    assert got.tolist() == [1, -1, 2**31 - 1, -2**31, 0, 2**31 - 1, 0, 127, 300]


@pytest.mark.parametrize("src,dst", [("float32", "float16"), ("float32", "bfloat16"), ("float64", "float32"),
                                     ("int64", "float32"), ("int32", "int8"), ("float16", "bool")])
def test_cast_pairs(src, dst):
    from pyaclnn.tensor import as_acl_dtype
    x = sample(src, (64,))
    got = ops.Cast(x, as_acl_dtype(dst), np.zeros(64, R.np_dtype(dst)))
    same_bits(got, R.cast(x, dst))


def test_cast_shape_mismatch_is_rejected():
    from pyaclnn.tensor import as_acl_dtype
    with pytest.raises(AclError) as e:
        ops.Cast(np.zeros(3, np.float32), as_acl_dtype("float16"), np.zeros(4, np.float16))
    assert e.value.code == INVALID


# ---- fills --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_one_zero_fill_on_a_strided_view(name):
    store = pyaclnn.from_numpy(sample(name, (5, 8)))
    before = store.numpy().copy()
    view = store.as_strided((2, 3), (16, 3), 1)
    idx = 1 + np.add.outer(np.arange(2) * 16, np.arange(3) * 3).reshape(-1)
    for fill, value in ((ops.InplaceOne, 1), (ops.InplaceZero, 0)):
        fill(view)
        flat = store.numpy().reshape(-1)
        assert np.all(flat[idx].astype(np.float64) == value)
        rest = np.ones(40, bool)
        rest[idx] = False
        same_bits(flat[rest], before.reshape(-1)[rest])


@pytest.mark.parametrize("name", ["float32", "bfloat16", "int64", "bool"])
def test_fill_a_contiguous_run_inside_a_buffer(name):
    """A contiguous fill copies its first element forward in doubling runs: exactly the view's 37
    elements change, from the third on."""
    store = pyaclnn.from_numpy(sample(name, (41,)))
    before = store.numpy().copy()
    ops.InplaceFillScalar(store.as_strided((37,), (1,), 2), ops.Scalar(1, "int64"))
    after = store.numpy()
    assert np.all(after[2:39].astype(np.float64) == 1)
    same_bits(np.concatenate([after[:2], after[39:]]), np.concatenate([before[:2], before[39:]]))


@pytest.mark.parametrize("name", ["float32", "int64", "bool", "int8"])
def test_zero_fill_a_contiguous_run_inside_a_buffer(name):
    """A fill whose value has equal bytes (zeros; bool and int8 values) is one memset over the run: exactly the
    view's 37 elements become 0; the non-zero elements on both sides keep their bits."""
    host = sample(name, (41,))
    host[[0, 1, 39, 40]] = 1
    store = pyaclnn.from_numpy(host)
    before = store.numpy().copy()
    ops.InplaceZero(store.as_strided((37,), (1,), 2))
    after = store.numpy()
    assert np.all(after[2:39].astype(np.float64) == 0)
    same_bits(np.concatenate([after[:2], after[39:]]), np.concatenate([before[:2], before[39:]]))


@pytest.mark.parametrize("name,value,dtype", [("float16", 0.1, "float64"), ("bfloat16", 3.14159, "float32"),
                                              ("int8", 300, "int64"), ("float32", 7, "int32"),
                                              ("bool", True, "bool"), ("int64", -2**40, "int64")])
def test_fill_scalar_casts_the_value(name, value, dtype):
    t = pyaclnn.zeros((3, 2), name)
    ops.InplaceFillScalar(t, ops.Scalar(value, dtype))
    want = R.cast(np.array([value] * 6, R.np_dtype(dtype)), name).reshape(3, 2)
    same_bits(t.numpy(), want)


def test_fill_zero_fp8_on_950():
    z = pyaclnn.zeros((4,), "float8_e4m3fn")
    ops.InplaceCopy(z, np.float32([1, 2, 3, 4]))
    ops.InplaceZero(z)
    assert z.numpy().view(np.uint8).tolist() == [0, 0, 0, 0]


def test_fill_validation():
    with pytest.raises(AclError) as e:
        ops.InplaceOne(pyaclnn.zeros((2,), "uint16"))
    assert e.value.code == INVALID and "UINT16" in str(e.value)
