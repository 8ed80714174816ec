"""pyaclnn.ops.grouped_dynamic_mx_quant (the friendly function) and its helpers
grouped_mxscale_written / unpack_float4_e1m2, against the independent NumPy reference."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from reference.gmq_formats import decode_fp4, pack_fp4
from reference.grouped_dynamic_mx_quant import grouped_dynamic_mx_quant as reference
from reference.grouped_dynamic_mx_quant import mxscale_written_mask

from pyaclnn import ops
from pyaclnn.errors import AclError

BF16 = ml_dtypes.bfloat16
Y_DTYPES = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
            "float4_e2m1": ml_dtypes.float4_e2m1fn, "float4_e1m2": np.uint8}


def y_bytes(y: np.ndarray, dst: str) -> np.ndarray:
    """The device bytes of a returned y, as the reference returns them."""
    if dst == "float4_e2m1":
        return pack_fp4(y.view(np.uint8))
    return y.view(np.uint8)


def test_published_example(acl):
    x = np.array([0, 8, 64, 512] * 2, dtype=BF16).reshape(8, 1)
    y, mxscale = ops.grouped_dynamic_mx_quant(x, [4, 8], dst_type="float8_e4m3fn")
    assert y.dtype == ml_dtypes.float8_e4m3fn and y.shape == (8, 1)
    assert y.view(np.uint8).ravel().tolist() == [0, 72, 96, 120] * 2
    assert y.astype(np.float32).ravel().tolist() == [0, 4, 32, 256] * 2
    assert mxscale.dtype == ml_dtypes.float8_e8m0fnu
    assert mxscale.view(np.uint8).tolist() == [[[128, 0]], [[128, 0]]]


@pytest.mark.parametrize("x_dtype", [BF16, np.float16])
@pytest.mark.parametrize("dst, alg, mode, dtm", [
    ("float8_e4m3fn", 0, "rint", 0.0), ("float8_e5m2", 1, "rint", 0.0),
    ("float4_e2m1", 2, "floor", 7.0), ("float4_e1m2", 0, "round", 0.0),
])
def test_numpy_results_match_reference(acl, x_dtype, dst, alg, mode, dtm):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((150, 12)) * np.exp2(rng.integers(-8, 8, (150, 12)))).astype(x_dtype)
    gi = [20, 20, 90, 140]                               # an empty group, rows 140.. untouched
    y, mxscale = ops.grouped_dynamic_mx_quant(x, gi, dst_type=dst, scale_alg=alg, round_mode=mode,
                                              dst_type_max=dtm)
    want_y, want_mx, written = reference(x, gi, mode, dst, 32, alg, dtm)
    assert y.dtype == Y_DTYPES[dst]
    assert y.shape == ((150, 6) if dst == "float4_e1m2" else (150, 12))
    assert mxscale.shape == (150 // 64 + 4, 12, 2)
    got = y_bytes(y, dst)
    assert np.array_equal(got[:140], want_y[:140]) and np.all(got[140:] == 0)
    mx = mxscale.view(np.uint8)
    assert np.array_equal(mx[written], want_mx[written]) and np.all(mx[~written] == 0)


@pytest.mark.parametrize("group_index, m", [
    ([40, 40, 170, 200], 200), ([64, 128], 128), ([0, 0, 5], 70), ([33], 100),
    ([40, 20, 100], 100), ([-5, 60, 150], 100),          # invalid ends: read as the stub clamps
])
def test_written_helper(group_index, m):
    got = ops.grouped_mxscale_written(group_index, m, 3)
    assert got.dtype == bool and got.shape == (m // 64 + len(group_index), 3, 2)
    assert np.array_equal(got, mxscale_written_mask(group_index, m, 3, "clamp"))


def test_written_helper_worked_example():
    """Spec §3.4: rows 1 (empty group) and 6 are never written."""
    rows = ops.grouped_mxscale_written([40, 40, 170, 200], 200, 1)[:, 0, 0]
    assert rows.tolist() == [True, False, True, True, True, True, False]


def test_unpack_float4_e1m2_all_bytes():
    packed = np.arange(256, dtype=np.uint8).reshape(16, 16)
    codes = ops.unpack_float4_e1m2(packed, decode=False)
    assert codes.shape == (16, 32)
    assert np.array_equal(codes[:, 0::2], packed & 0xF) and np.array_equal(codes[:, 1::2], packed >> 4)
    values = ops.unpack_float4_e1m2(packed)
    assert values.dtype == np.float32
    want = decode_fp4(codes, "float4_e1m2")
    assert np.array_equal(values, want) and np.array_equal(np.signbit(values), np.signbit(want))


def test_device_tensors_in_device_tensors_out(acl):
    import pyaclnn.tensor as T
    x = np.random.default_rng(1).standard_normal((70, 4)).astype(BF16)
    xt = T.from_numpy(x)
    gi = T.from_numpy(np.array([10, 70], np.int32))
    y, mxscale = ops.grouped_dynamic_mx_quant(xt, gi, dst_type="float4_e2m1")
    assert isinstance(y, T.Tensor) and y.shape == (70, 4) and mxscale.shape == (3, 4, 2)
    want_y, want_mx, written = reference(x, [10, 70], dst_type="float4_e2m1")
    assert np.array_equal(pack_fp4(y.numpy().view(np.uint8)), want_y)
    assert np.array_equal(mxscale.numpy().view(np.uint8)[written], want_mx[written])


def test_torch_tensors(acl):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((40, 6)).astype(BF16)
    xt = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    y, mxscale = ops.grouped_dynamic_mx_quant(xt, torch.tensor([40], dtype=torch.int32),
                                              dst_type="float4_e2m1")
    assert y.dtype == torch.uint8 and tuple(y.shape) == (40, 3)        # torch_npu's FP4 layout
    want_y, want_mx, written = reference(x, [40], dst_type="float4_e2m1")
    assert np.array_equal(y.numpy(), want_y)
    assert np.array_equal(mxscale.view(torch.uint8).numpy()[written], want_mx[written])
    y8, _ = ops.grouped_dynamic_mx_quant(xt, [40], dst_type="float8_e5m2")
    assert y8.dtype == torch.float8_e5m2


def test_bad_dst_type_and_rejected_arguments(acl):
    x = np.zeros((64, 4), BF16)
    with pytest.raises(ValueError, match="dst_type"):
        ops.grouped_dynamic_mx_quant(x, [64], dst_type="int8")
    with pytest.raises(AclError) as info:
        ops.grouped_dynamic_mx_quant(x, [64], dst_type="float8_e4m3fn", round_mode="floor")
    assert info.value.code == 561103
    with pytest.raises(AclError) as info:
        ops.grouped_dynamic_mx_quant(x, [64], blocksize=64)
    assert info.value.code == 161002


def test_invalid_group_index_raises_at_sync(acl):
    x = np.ones((64, 4), BF16)
    with pytest.raises(AclError) as info:
        ops.grouped_dynamic_mx_quant(x, [50, 10, 64])
    assert info.value.code == 507015
    assert "groupIndex[1] = 10 is below groupIndex[0] = 50" in str(info.value)
