"""pyaclnn.torch on the emulator with CPU torch: zero-copy in and out (same data pointers), dtypes
including float8 and float4 pairs, views, registration lifetime; no torch import at package import."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from helpers import run_python

torch = pytest.importorskip("torch")

import pyaclnn  # noqa: E402
from pyaclnn import _release, ops, runtime  # noqa: E402
from pyaclnn import torch as pt  # noqa: E402
from reference import amp_update_scale as ref  # noqa: E402


@pytest.fixture(autouse=True)
def default_stream_exists():
    return runtime.current_stream()


def registered(ptr: int, nbytes: int) -> bool:
    lookup = runtime._stub_fn("pyaclnn_stub_mem_lookup", ctypes.c_int,
                              [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p])
    return bool(lookup(ptr, nbytes, None, None))


def test_package_import_does_not_import_torch():
    code = """
        import sys, numpy as np, pyaclnn, pyaclnn.ops, pyaclnn.tensor, pyaclnn.runtime
        s, t = pyaclnn.ops.amp_update_scale(1.0, 0, 0.0)
        print("torch" in sys.modules)
    """
    rc, out, err = run_python(code)
    assert rc == 0, err
    assert out.strip() == "False"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_torch_tensors_in_and_out_zero_copy(dtype):
    scale = torch.tensor([1024.0], dtype=dtype)
    tracker = torch.tensor([6], dtype=torch.int32)
    found = torch.zeros(1, dtype=dtype)
    ptrs = (scale.data_ptr(), tracker.data_ptr())
    # in place, as torch_npu uses the operator: the very same tensors come back, updated
    r = ops.amp_update_scale(scale, tracker, found, growth_interval=7, inplace=True)
    assert r[0] is scale and r[1] is tracker
    assert (scale.data_ptr(), tracker.data_ptr()) == ptrs
    assert scale.item() == 2048.0 and tracker.item() == 0
    # outputs allocated by torch, wrapped without a copy
    new_scale, new_tracker = ops.amp_update_scale(scale, tracker, torch.ones(1, dtype=dtype))
    assert isinstance(new_scale, torch.Tensor) and new_scale.dtype == dtype
    assert new_scale.item() == 1024.0 and new_tracker.item() == 0
    # the generic path with torch outputs
    out = (torch.empty(1, dtype=dtype), torch.empty(1, dtype=torch.int32))
    ret = ops.AmpUpdateScale(scale, tracker, found, 2.0, 0.5, 1, *out)
    assert ret[0] is out[0] and out[0].item() == 4096.0


def test_bits_match_the_reference_for_torch_bf16():
    values = torch.tensor([3.0e38], dtype=torch.bfloat16)
    tracker = torch.tensor([4], dtype=torch.int32)
    s, t = ops.amp_update_scale(values, tracker, torch.zeros(1, dtype=torch.bfloat16), growth_interval=5)
    want_s, want_t = ref.amp_update_scale(values.float().numpy()[0], 4, 0.0, 2.0, 0.5, 5, "bfloat16")
    assert s.view(torch.int16).item() == int(np.array(want_s).view(np.int16)) and t.item() == want_t


def test_from_torch_shares_memory_and_views():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    view = base.t()[1:]
    t = pt.from_torch(view)
    storage = base.untyped_storage()
    assert t.ptr == storage.data_ptr() and t.memory.nbytes == storage.nbytes()
    assert (t.shape, t.strides, t.offset) == ((3, 3), (1, 4), 1)
    assert np.array_equal(t.numpy(), view.numpy())
    assert pt.from_torch(view) is t                       # cached while the tensor lives
    back = pt.to_torch(t)
    assert back.data_ptr() == view.data_ptr() and torch.equal(back, view)
    back[0, 0] = 100.0                                    # same memory as the original
    assert base[0, 1].item() == 100.0


def test_pyaclnn_tensor_to_torch_zero_copy():
    assert not hasattr(pyaclnn.Tensor, "to_torch")      # the device tensor knows nothing of torch
    x = pyaclnn.from_numpy(np.arange(6, dtype=np.float32))
    y = pt.to_torch(x)
    assert y.data_ptr() == x.ptr and y.tolist() == [0, 1, 2, 3, 4, 5]
    del x
    assert y.sum().item() == 15.0                         # y keeps the device memory alive
    h = pt.to_torch(pyaclnn.from_numpy(np.array([1, 2], np.uint8), dtype="hifloat8"))
    assert h.dtype == torch.uint8                        # no torch HiF8: raw codes


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"])
def test_float8_round_trip(name):
    tdtype = getattr(torch, name)
    src = torch.tensor([0.5, 1.0, 2.0, 4.0]).to(tdtype)
    t = pt.from_torch(src)
    assert t.dtype_name == {"float8_e4m3fn": "ACL_FLOAT8_E4M3FN", "float8_e5m2": "ACL_FLOAT8_E5M2",
                            "float8_e8m0fnu": "ACL_FLOAT8_E8M0"}[name]
    assert t.numpy().tobytes() == src.view(torch.uint8).numpy().tobytes()
    back = pt.to_torch(pyaclnn.from_numpy(t.numpy()))
    assert back.dtype == tdtype and torch.equal(back.view(torch.uint8), src.view(torch.uint8))


def test_float4_pairs_follow_torch_npu():
    fp4x2 = getattr(torch, "float4_e2m1fn_x2", None)
    if fp4x2 is None:
        pytest.skip("torch without float4_e2m1fn_x2")
    raw = torch.tensor([[0x21, 0x43, 0x65], [0x87, 0xA9, 0xCB]], dtype=torch.uint8)
    t = pt.from_torch(raw.view(fp4x2))
    assert t.dtype_name == "ACL_FLOAT4_E2M1"
    assert (t.shape, t.strides) == ((2, 6), (6, 1))        # 4-bit units: last dim and strides doubled
    codes = t.numpy().view(np.uint8) & 0xF
    assert codes[0].tolist() == [1, 2, 3, 4, 5, 6] and codes[1].tolist() == [7, 8, 9, 10, 11, 12]
    back = pt.to_torch(t)
    assert back.dtype == fp4x2 and back.shape == (2, 3) and back.data_ptr() == raw.data_ptr()


def test_prepared_call_on_torch_cpu_tensors_waits_for_results():
    scale = torch.tensor([3.0])
    tracker = torch.tensor([0], dtype=torch.int32)
    found = torch.zeros(1)
    plan = ops.prepare("AmpUpdateScale", scale, tracker, found, 2.0, 0.5, 1, scale, tracker)
    for _ in range(20):                  # torch reads the host memory right after each call
        plan()
    assert scale.item() == 3.0 * 2**20
    other = torch.tensor([1.0])
    out = plan(other, tracker, found, other, tracker)
    assert out[0] is other and other.item() == 2.0
    plan.close()


def test_registration_lasts_as_long_as_the_torch_tensor():
    x = torch.ones(16)
    ptr, n = x.untyped_storage().data_ptr(), x.untyped_storage().nbytes()
    wrapped = pt.from_torch(x)
    assert registered(ptr, n)
    del wrapped
    _release.flush()                                      # (dropped objects: pyaclnn._release)
    assert registered(ptr, n)                             # still cached for x
    del x
    _release.flush()
    assert not registered(ptr, n)


def test_new_layouts_of_one_tensor_share_its_cache_entry():
    """A re-wrap after a resize replaces the cached wrapper; the entry goes with the tensor once."""
    x = torch.zeros(4)
    pt.from_torch(x)
    live = len(_release._live)
    for i in range(20):
        x.resize_(4 + i % 3)
        assert pt.from_torch(x).shape == tuple(x.shape)
    _release.flush()
    assert len(_release._live) <= live + 2                # no finalizer per re-wrap
    key = id(x)
    del x
    _release.flush()
    assert key not in pt._cache


def test_torch_dtype_maps():
    assert pt.from_torch_dtype(torch.bfloat16) == pyaclnn.capi.ACL_BF16
    assert pt.to_torch_dtype(pyaclnn.capi.ACL_FLOAT8_E4M3FN) == torch.float8_e4m3fn
    with pytest.raises(ValueError):
        pt.to_torch_dtype(pyaclnn.capi.ACL_INT4)
    with pytest.raises(ValueError):
        pt.from_torch(torch.zeros(2, dtype=torch.float8_e4m3fnuz))     # no aclDataType for it
