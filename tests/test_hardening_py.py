"""Hardening of the Pythonic layer: integers that would wrap in ctypes, byte sizes that
overflow, read-only arrays given for in-place results, one prepared plan called from several
threads, and the stream list of device memory.

Golden values: the AmpUpdateScale results are checked against tests/reference (written from the
spec); the ranges are those of the C types in the headers (int32_t deviceId, uint32_t priority,
int64_t growthInterval / dims, size_t sizes).
"""
from __future__ import annotations

import ctypes
import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import pyaclnn
from pyaclnn import capi, ops, runtime
from pyaclnn._cint import CIntRangeError
from pyaclnn.errors import recent_error_message
from pyaclnn.signatures.model import Kind, Param
from reference import amp_update_scale as ref

SIZE_MAX = 2**64 - 1


def amp_args(scale=1024.0, tracker=0):
    return np.float32([scale]), np.int32([tracker]), np.float32([0.0])


# ------------------------------------------------------------------------------------------------
# 5. integers crossing into C are range-checked against their C type
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("device_id", [2**32, 2**31, -2**31 - 1])
def test_device_id_outside_int32_is_refused(device_id):
    with pytest.raises(CIntRangeError) as info:
        pyaclnn.Device(device_id)
    text = str(info.value)
    assert "device_id" in text and "int32_t" in text and "2147483647" in text
    assert isinstance(info.value, OverflowError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("kwargs, name", [({"priority": 2**64 + 1}, "priority"), ({"priority": -1}, "priority"),
                                          ({"flags": 2**32}, "flags")])
def test_stream_priority_and_flags_outside_uint32_are_refused(kwargs, name):
    before = runtime.stub_live_counts()["streams"]
    with pytest.raises(CIntRangeError) as info:
        pyaclnn.Stream(**kwargs)
    assert name in str(info.value) and "uint32_t" in str(info.value) and "4294967295" in str(info.value)
    assert runtime.stub_live_counts()["streams"] == before


@pytest.mark.parametrize("interval", [2**64 + 1, 2**63, -2**63 - 1])
def test_operator_int64_attribute_outside_range_is_refused(interval):
    # 2**64 + 1 used to run with interval 1 (the scale grew at once)
    with pytest.raises(CIntRangeError) as info:
        ops.amp_update_scale(*amp_args(), growth_interval=interval)
    assert "growth_interval" in str(info.value) and "int64_t" in str(info.value)
    x = pyaclnn.from_numpy(np.float32([8.0]))
    g = pyaclnn.from_numpy(np.int32([0]))
    f = pyaclnn.zeros((1,), "float32")
    with pytest.raises(CIntRangeError):
        ops.AmpUpdateScale(x, g, f, 2.0, 0.5, interval, pyaclnn.empty((1,)), pyaclnn.empty((1,), "int32"))
    with pytest.raises(CIntRangeError):
        ops.prepare("AmpUpdateScale", x, g, f, 2.0, 0.5, interval, x, g)


def test_in_range_attribute_still_runs_with_its_value():
    scale, tracker = ops.amp_update_scale(*amp_args(1024.0, 5), growth_interval=2**31 - 1)
    want = ref.amp_update_scale(np.float32(1024.0), 5, np.float32(0.0), 2.0, 0.5, 2**31 - 1)
    assert float(scale[0]) == float(want[0]) and int(tracker[0]) == int(want[1])


def test_int_array_elements_are_range_checked():
    conv = ops._marshal.converter(Param("dims", "const aclIntArray*", Kind.INT_ARRAY))
    post: list = []
    with pytest.raises(CIntRangeError) as info:
        conv([1, 2**64], runtime.current_stream(), post)
    assert "int64_t" in str(info.value)
    assert post == []                   # nothing was created


@pytest.mark.parametrize("layout", [{"strides": (2**64,)}, {"offset": 2**64}])
def test_tensor_strides_and_offsets_outside_int64_are_refused(layout):
    t = pyaclnn.empty((1,), "float32")
    with pytest.raises(CIntRangeError) as info:
        t.as_strided((1,), layout.get("strides", (1,)), layout.get("offset"))
    assert "int64_t" in str(info.value)


# ------------------------------------------------------------------------------------------------
# 6. element and byte counts that overflow int64 / size_t
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, dtype", [((2**62 + 1,), "float32"), ((2**31, 2**31), "float32"),
                                          ((2**63,), "int8"), ((2**40, 2**40), "int4")])
def test_empty_refuses_shapes_whose_size_overflows(shape, dtype):
    before = runtime.stub_live_counts()["device_allocations"]
    with pytest.raises(CIntRangeError) as info:
        pyaclnn.empty(shape, dtype)
    assert "overflows int64" in str(info.value)
    assert runtime.stub_live_counts()["device_allocations"] == before


def test_device_buffer_size_outside_size_t_is_refused():
    with pytest.raises(CIntRangeError) as info:
        runtime.DeviceBuffer(2**64 + 5)
    assert "size_t" in str(info.value)


def _create(dims, storage):
    d = (ctypes.c_int64 * len(dims))(*dims)
    s = (ctypes.c_int64 * len(storage))(*storage)
    return capi.aclCreateTensor(d, len(dims), capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, s, len(storage), None)


@pytest.mark.parametrize("dims, storage", [((2**62 + 1,), (1,)), ((2**61, 2), (1,)), ((1,), (2**62, 4)),
                                           ((1,), (2**61 + 1,))])
def test_acl_create_tensor_refuses_byte_sizes_that_overflow(acl, dims, storage):
    recent_error_message()
    h = _create(dims, storage)
    if h:
        capi.aclDestroyTensor(h)
    assert not h
    assert "overflows int64" in (recent_error_message() or "")


def test_acl_rt_malloc_refuses_sizes_whose_rounding_overflows(acl):
    recent_error_message()
    p = ctypes.c_void_p()
    status = capi.aclrtMalloc(ctypes.byref(p), SIZE_MAX - 100, capi.ACL_MEM_MALLOC_HUGE_FIRST)
    if status == 0:
        capi.aclrtFree(p)
    assert status == capi.ACL_ERROR_INVALID_PARAM
    assert "overflows size_t" in (recent_error_message() or "")


# ------------------------------------------------------------------------------------------------
# 7. inplace=True with read-only numpy arrays
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("which", [0, 1])
def test_inplace_with_read_only_arrays_raises(which):
    args = list(amp_args(65536.0, 1))
    args[which].flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ops.amp_update_scale(*args, growth_interval=2, inplace=True)
    assert float(args[0][0]) == 65536.0 and int(args[1][0]) == 1


def test_inplace_with_writeable_arrays_still_updates_them():
    s, t, f = amp_args(65536.0, 1)
    out = ops.amp_update_scale(s, t, f, growth_interval=2, inplace=True)
    assert out[0] is s and out[1] is t
    want = ref.amp_update_scale(np.float32(65536.0), 1, np.float32(0.0), 2.0, 0.5, 2)
    assert float(s[0]) == float(want[0]) and int(t[0]) == int(want[1])


# ------------------------------------------------------------------------------------------------
# 10. one prepared plan called from several threads
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("keywords", [True, False])
def test_prepared_plan_shared_by_threads_gives_each_call_its_own_results(keywords):
    stream = runtime.current_stream()
    n_threads, calls = 4, 400

    def tensors(k):
        return (pyaclnn.from_numpy(np.float32([2.0 ** k])), pyaclnn.from_numpy(np.int32([k])),
                pyaclnn.empty((1,), "float32"), pyaclnn.empty((1,), "int32"))

    found = pyaclnn.zeros((1,), "float32")
    plan = ops.prepare("AmpUpdateScale", *tensors(0)[:2], found, 2.0, 0.5, 1000, *tensors(0)[2:])
    mine = [tensors(k + 1) for k in range(n_threads)]
    errors: list = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def worker(k):
        try:
            s, g, o, t = mine[k]
            for i in range(calls):
                if keywords:
                    out = plan(current_scale=s, growth_tracker=g, updated_scale_out=o,
                               updated_growth_tracker_out=t)
                else:
                    out = plan(s, g, found, o, t)
                if out[0] is not o or out[1] is not t:
                    errors.append(f"thread {k}: call {i} returned another call's output tensors")
                    return
                if i % 50 == 0:
                    got = (float(o.numpy()[0]), int(t.numpy()[0]))
                    # reference: found_inf 0, tracker k+1 < 1000 -> scale kept, tracker + 1
                    want = ref.amp_update_scale(np.float32(2.0 ** (k + 1)), k + 1, np.float32(0.0), 2.0, 0.5, 1000)
                    if got != (float(want[0]), int(want[1])):
                        errors.append(f"thread {k}: call {i} wrote {got}, not its own {want}")
                        return
        except Exception as exc:       # noqa: BLE001
            errors.append(f"thread {k}: {exc!r}")

    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    stream.synchronize()
    plan.close()
    assert errors == []


# ------------------------------------------------------------------------------------------------
# 13. device memory forgets the closed streams that used it
# ------------------------------------------------------------------------------------------------

def test_memory_forgets_closed_streams():
    t = pyaclnn.from_numpy(np.float32([1.0, 2.0]))
    refs = []
    for i in range(300):
        s = runtime.Stream()
        t.copy_from(np.float32([i, i + 1]), stream=s)
        refs.append(weakref.ref(s))
        s.close()
        del s
    gc.collect()
    assert len(t.memory.streams) <= 2
    assert sum(r() is not None for r in refs) <= 1
    np.testing.assert_array_equal(t.numpy(), np.float32([299, 300]))
