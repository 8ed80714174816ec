"""pyaclnn.runtime: devices (reference counted), streams, events, the stream-ordered memory pool,
deterministic release (close, context managers, finalizers at interpreter exit)."""
from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest

import pyaclnn
from helpers import run_python
from pyaclnn import _release, capi, runtime
from pyaclnn.errors import AclError
from pyaclnn.runtime import Device, Event, Stream


def _state(device_id: int = 0):
    return runtime._state_for(device_id)


@pytest.fixture(autouse=True)
def default_stream_exists():
    """Live counts below are compared with the per-device default stream already created."""
    return runtime.current_stream()


# ------------------------------------------------------------------------------------------------
# Devices
# ------------------------------------------------------------------------------------------------

def test_device_references_follow_objects():
    state = _state(0)
    base = state.refs
    d = Device(0)
    assert state.refs == base + 1
    with d:                                   # the block holds one more reference
        assert state.refs == base + 2
        assert runtime.current_device() is d
    assert state.refs == base + 1
    s = Stream(d)                             # a stream keeps the device set after d is closed
    d.close()
    d.close()                                 # idempotent
    assert d.closed and state.refs == base + 1
    s.close()
    assert state.refs == base


def test_last_release_resets_the_device():
    # A clean process: after the last object goes, the runtime's own count is back to zero, so a
    # further aclrtResetDevice finds the device not set (507007) -- our set/reset calls balanced.
    code = """
        import gc
        from pyaclnn import _release, capi
        from pyaclnn.runtime import Device, Stream, Event, _state_for
        import pyaclnn
        d = Device(0)
        s = Stream(d)
        e = Event(device=d)
        t = pyaclnn.zeros((4,), stream=s)
        with Device(0):
            pass
        _release.flush()        # the temporary Device(0) is released by the releaser thread
        assert _state_for(0).refs == 4, _state_for(0).refs
        del t, e
        d.close()               # (releases what was dropped first)
        assert _state_for(0).refs == 1
        s.close()
        assert _state_for(0).refs == 0
        print(capi.aclrtResetDevice(0))
    """
    rc, out, err = run_python(code)
    assert rc == 0, err
    assert out.strip() == str(capi.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR)


def test_invalid_device_raises_acl_error():
    with pytest.raises(AclError) as info:
        Device(7)
    assert info.value.code == capi.ACL_ERROR_RT_INVALID_DEVICEID
    assert "out of range" in str(info.value)
    assert _state(7).refs == 0


def test_two_devices_and_current_device():
    code = """
        import numpy as np, pyaclnn
        from pyaclnn.runtime import Device, current_device, current_stream
        with Device(1) as d1:
            assert current_device().id == 1
            t = pyaclnn.from_numpy(np.arange(3, dtype=np.float32))
            assert t.device_id == 1 and current_stream().device_id == 1
            with Device(0):
                assert current_device().id == 0
            assert current_device().id == 1
        print(t.numpy().tolist(), current_device().id)
    """
    rc, out, err = run_python(code, env_overrides={"PYACLNN_STUB_DEVICE_COUNT": 2})
    assert rc == 0, err
    assert out.strip() == "[0.0, 1.0, 2.0] 0"


def test_device_info():
    d = Device(0)
    free, total = d.mem_info()
    assert 0 < free <= total
    assert runtime.device_count() == Device.count() >= 1
    assert runtime.soc_name().startswith("Ascend")
    d.synchronize()
    d.close()
    with pytest.raises(RuntimeError):
        d.synchronize()


# ------------------------------------------------------------------------------------------------
# Streams
# ------------------------------------------------------------------------------------------------

def test_stream_lifecycle_and_current_stream():
    before = runtime.stub_live_counts()["streams"]
    s = Stream()
    assert runtime.stub_live_counts()["streams"] == before + 1
    assert s.query() is True
    default = runtime.current_stream()
    assert default.is_default and default is Device(0).default_stream
    with s:
        assert runtime.current_stream() is s
        t = pyaclnn.zeros((8,))
        assert t.stream is s
    assert runtime.current_stream() is default
    s.synchronize()
    del t
    s.close()
    s.close()
    assert s.closed
    assert runtime.stub_live_counts()["streams"] == before
    with pytest.raises(RuntimeError):
        s.synchronize()


def test_stream_garbage_collection_destroys_it():
    before = runtime.stub_live_counts()["streams"]
    s = Stream()
    pyaclnn.from_numpy(np.ones(3, np.float32), stream=s)
    del s
    assert runtime.stub_live_counts()["streams"] == before


def test_default_stream_cannot_be_closed():
    with pytest.raises(RuntimeError):
        Device(0).default_stream.close()


def test_wrapped_stream_is_not_destroyed():
    h = ctypes.c_void_p()
    assert capi.aclrtSetCurrentContext(runtime._state_for(0).binding.ctx) == 0
    assert capi.aclrtCreateStream(ctypes.byref(h)) == 0
    s = Stream.wrap(h.value)
    t = pyaclnn.from_numpy(np.arange(4, dtype=np.int32), stream=s)
    assert t.numpy().tolist() == [0, 1, 2, 3]
    del t
    s.close()
    assert capi.aclrtDestroyStream(h) == 0     # still alive: we did not own it


def test_other_threads_bind_themselves():
    s = Stream()
    x = pyaclnn.from_numpy(np.arange(5, dtype=np.float32), stream=s)
    out = {}

    def worker():
        # a fresh thread has no current context; pyaclnn binds it before any call that needs one
        y = pyaclnn.from_numpy(np.full(5, 2, np.float32), stream=s)
        e = Event()
        e.record(s)
        e.synchronize()
        out["y"] = y.numpy()
        out["x"] = x.numpy()

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert out["y"].tolist() == [2.0] * 5
    assert out["x"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    s.close()


# ------------------------------------------------------------------------------------------------
# Events
# ------------------------------------------------------------------------------------------------

def test_event_record_query_elapsed():
    s = Stream()
    with Event() as start, Event() as end:
        assert start.query() is True            # never recorded: complete
        start.record(s)
        pyaclnn.zeros((1024,), stream=s)
        end.record(s)
        end.synchronize()
        assert end.query() is True
        ms = start.elapsed_time(end)
        assert isinstance(ms, float) and ms >= 0.0
        other = Stream()
        other.wait_event(end)
        other.synchronize()
        other.close()
    with pytest.raises(RuntimeError):
        start.record(s)
    ev = s.record_event()
    ev.synchronize()
    s.close()


def test_untimed_event_has_no_elapsed_time():
    s = Stream()
    a, b = Event(timing=False), Event(timing=False)
    a.record(s)
    b.record(s)
    s.synchronize()
    with pytest.raises(AclError) as info:
        a.elapsed_time(b)
    assert info.value.code == capi.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    s.close()


def test_event_release_counts():
    before = runtime.stub_live_counts()["events"]
    e = Event()
    assert runtime.stub_live_counts()["events"] == before + 1
    del e
    assert runtime.stub_live_counts()["events"] == before


# ------------------------------------------------------------------------------------------------
# Memory pool
# ------------------------------------------------------------------------------------------------

def test_pool_reuses_blocks_on_the_same_stream_only():
    a, b = Stream(), Stream()
    ptr, size = a.pool.allocate(1000)
    assert size == 1024 and a.pool.stats()["in_use_blocks"] == 1
    a.pool.free(ptr, size)
    again, _ = a.pool.allocate(900)            # same rounded size, same stream: the cached block
    assert again == ptr and a.pool.stats()["reuses"] == 1
    other, other_size = b.pool.allocate(1000)  # another stream never gets a's block
    assert other != ptr
    a.pool.free(again, size)
    b.pool.free(other, other_size)
    assert a.pool.stats()["cached_bytes"] == 1024
    a.close()
    b.close()


def test_pool_empty_cache_returns_memory_to_the_device():
    s = Stream()
    before = runtime.stub_live_counts()["device_allocations"]
    blocks = [s.pool.allocate(n) for n in (100, 5000, 70000)]
    assert runtime.stub_live_counts()["device_allocations"] == before + 3
    for p, size in blocks:
        s.pool.free(p, size)
    assert runtime.stub_live_counts()["device_allocations"] == before + 3     # cached
    s.pool.empty_cache()
    assert runtime.stub_live_counts()["device_allocations"] == before
    assert s.pool.stats()["cached_bytes"] == 0
    s.close()


def test_pool_limit_trims_the_cache():
    s = Stream()
    s.pool.limit = 4096
    a = s.pool.allocate(4096)
    b = s.pool.allocate(4096)
    s.pool.free(*a)
    s.pool.free(*b)                            # over the limit: the cache is emptied
    assert s.pool.stats()["cached_bytes"] == 0
    s.close()


def test_buffer_freed_after_stream_closed_goes_to_the_device():
    s = Stream()
    before = runtime.stub_live_counts()["device_allocations"]
    t = pyaclnn.zeros((16,), stream=s)
    s.close()                                  # t keeps its memory; the pool is closed
    assert t.numpy().sum() == 0
    del t
    assert runtime.stub_live_counts()["device_allocations"] == before


def test_memory_used_on_another_stream_is_recorded():
    a, b = Stream(), Stream()
    t = pyaclnn.zeros((4,), stream=a)
    t.memory.note_stream(b)
    assert t.memory.streams == [a, b]
    t.memory.wait_idle()
    del t
    a.close()
    b.close()


def test_host_registration_is_shared_and_released():
    arr = np.arange(64, dtype=np.float32)
    from pyaclnn.tensor import wrap_pointer
    t1 = wrap_pointer(arr.ctypes.data, (64,), "float32", owner=arr, register=True)
    t2 = wrap_pointer(arr.ctypes.data + 16, (4,), "float32", owner=arr, register=True)
    assert runtime._registrations[arr.ctypes.data][1] == 2
    assert t2.numpy().tolist() == [4.0, 5.0, 6.0, 7.0]
    # A dropped tensor is released by the releaser thread (pyaclnn._release), a moment after `del`
    del t1
    _release.flush()
    assert runtime._registrations[arr.ctypes.data][1] == 1
    del t2
    _release.flush()
    assert arr.ctypes.data not in runtime._registrations


# ------------------------------------------------------------------------------------------------
# Release at interpreter exit
# ------------------------------------------------------------------------------------------------

def test_objects_left_alive_are_released_at_exit():
    code = """
        import numpy as np, pyaclnn
        from pyaclnn import ops
        from pyaclnn.runtime import Device, Stream, Event
        s = Stream()
        e = Event(); e.record(s)
        x = pyaclnn.from_numpy(np.array([1.0], np.float32), stream=s)
        g = pyaclnn.from_numpy(np.array([0], np.int32), stream=s)
        plan = ops.prepare("AmpUpdateScale", x, g, pyaclnn.zeros((1,), stream=s), 2.0, 0.5, 10, x, g,
                           stream=s)
        plan()
        x.acl_handle()
        cycle = [x]; cycle.append(cycle)          # in a reference cycle: no refcount release
        d = Device(0)
        globals()["keep"] = (s, e, plan, d)
    """
    rc, out, err = run_python(code, env_overrides={"PYACLNN_STUB_LEAK_REPORT": 1})
    assert rc == 0, err
    report = [line for line in err.splitlines() if line.startswith("pyaclnn stub (aclFinalizeReference)")]
    assert report, err
    assert "live device allocations 0 (0 bytes)" in report[-1], report
    for what in ("streams 0", "events 0", "tensors 0", "executors 0"):
        assert what in report[-1], report
    assert "Traceback" not in err and "Exception ignored" not in err, err
