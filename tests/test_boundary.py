"""The host-data boundary (pyaclnn._boundary) and the reuse of the friendly path's small tensors
(pyaclnn._reuse): results stay those of fresh tensors, memory is reused only once nobody holds it,
large numpy calls on the emulator take no device copies, and the pool keeps at most its high-water
mark."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import _boundary, _reuse, ops, runtime

BF16 = ml_dtypes.bfloat16


def _inputs(rows: int, cols: int = 8192, seed: int = 0):
    rng = np.random.default_rng(seed)
    x1, x2 = (rng.standard_normal((rows, cols), dtype=np.float32).astype(BF16) for _ in range(2))
    g, s1, s2 = (rng.uniform(0.5, 2.0, cols).astype(BF16) for _ in range(3))
    return x1, x2, g, s1, s2


def _arnq(x1, x2, g, s1, s2):
    return ops.add_rms_norm_dynamic_quant(x1, x2, g, smooth_scale1=s1, smooth_scale2=s2, y_dtype="int8")


def _host(results):
    return [r.numpy() if isinstance(r, pyaclnn.Tensor) else r for r in results]


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


def test_kind_of_follows_the_inputs():
    t = pyaclnn.zeros((2,))
    assert _boundary.kind_of(np.ones(2), [1.0], 3) == "numpy"
    assert _boundary.kind_of(None, np.ones(2), t) == "tensor"
    torch = pytest.importorskip("torch")
    assert _boundary.kind_of(t, torch.ones(2)) == "torch"


def test_dropped_device_outputs_are_reused_and_results_stay_exact():
    host = _inputs(1, seed=1)
    dev = [pyaclnn.from_numpy(a) for a in host]
    want = _host(_arnq(*host))                       # numpy path: fresh copies
    first = _arnq(*dev)
    ptrs = [r.ptr for r in first if r is not None]
    _same(_host(first), want)
    del first                                        # the caller lets them go
    second = _arnq(*dev)
    assert [r.ptr for r in second if r is not None] == ptrs      # the same memory, reused
    _same(_host(second), want)


def test_outputs_the_caller_keeps_are_never_reused():
    host_a, host_b = _inputs(1, seed=2), _inputs(1, seed=3)
    dev_a = [pyaclnn.from_numpy(a) for a in host_a]
    dev_b = [pyaclnn.from_numpy(a) for a in host_b]
    want_a = _host(_arnq(*host_a))
    kept = _arnq(*dev_a)
    y1 = kept[0]
    view = kept[1][0]                                # a view of y2 keeps y2's memory too
    y2_ptr = kept[1].ptr
    del kept
    other = _arnq(*dev_b)
    taken = {r.ptr for r in other if r is not None}
    assert y1.ptr not in taken and y2_ptr not in taken
    _same([y1.numpy(), view.numpy()], [want_a[0], want_a[1][0]])    # not overwritten by `other`


def _layouts(stream):
    c = _reuse._caches.get(stream)
    return list(c._layouts) if c is not None else []


def test_large_tensors_are_not_kept():
    stream = pyaclnn.current_stream()
    shape = (_reuse.MAX_BYTES + 1,)
    t = _reuse.take(shape, pyaclnn.tensor.as_acl_dtype("int8"), stream)
    assert t.shape == shape
    assert all(key[0] != shape for key in _layouts(stream))


def test_only_the_default_device_stream_keeps_a_cache():
    s = pyaclnn.Stream()
    try:
        t = _reuse.take((4,), pyaclnn.tensor.as_acl_dtype("float32"), s)
        assert s not in _reuse._caches and t.stream is s
        del t
    finally:
        s.close()


def test_empty_cache_drops_the_reused_tensors():
    dev = [pyaclnn.from_numpy(a) for a in _inputs(1, seed=4)]
    _arnq(*dev)
    stream = pyaclnn.current_stream()
    assert _layouts(stream)
    pyaclnn.empty_cache()
    assert not _layouts(stream)


@pytest.mark.skipif(not runtime.is_stub(), reason="host memory in place is an emulator feature")
def test_large_numpy_call_takes_no_device_copies_and_matches_the_device_path():
    rows = 160                                      # y int8 [160, 8192] = 1.25 MiB > MAX_BYTES
    host = _inputs(rows, seed=5)
    want = _host(_arnq(*[pyaclnn.from_numpy(a) for a in host]))
    pyaclnn.empty_cache()
    stream = pyaclnn.current_stream()
    got = _arnq(*host)
    # x1, x2 (2.5 MiB each) and y1, y2, x_out (1.25, 1.25, 2.5 MiB) used host memory in place: the
    # pool only gave the small tensors (gamma, smooth scales, row scales) and the workspace
    assert stream.pool.stats()["in_use_bytes"] < (1 << 20)
    big = {a.nbytes for a in host[:2]} | {g.nbytes for g in got if g is not None}
    assert big.isdisjoint(stream.pool._free_lists)
    _same([g for g in got if g is not None], want)
    assert isinstance(got[0], np.ndarray) and got[0].flags.owndata


def test_numpy_inputs_used_in_place_can_change_after_the_call():
    host = _inputs(160, seed=6)
    first = _arnq(*host)
    host[0][...] = 0                                # the call has finished with it
    again = _arnq(*_inputs(160, seed=6))
    _same([f for f in first if f is not None], [a for a in again if a is not None])


def test_overlapping_views_used_in_place_fall_back_to_copies():
    x1, x2, g, s1, s2 = _inputs(320, seed=7)
    a, b = x1[0:160], x1[80:240]                    # 2.5 MiB each, overlapping: one is copied
    got = _arnq(a, b, g, s1, s2)
    want = _host(_arnq(*[pyaclnn.from_numpy(v.copy()) for v in (a, b, g, s1, s2)]))
    _same([r for r in got if r is not None], want)
    rows = x1[0:160]                                # used in place; gamma is a small view inside it
    gamma = rows.reshape(-1)[:8192]
    got = _arnq(rows, x2[0:160], gamma, s1, s2)
    want = _host(_arnq(*[pyaclnn.from_numpy(v.copy()) for v in (rows, x2[0:160], gamma, s1, s2)]))
    _same([r for r in got if r is not None], want)


def test_pool_high_water_mark_is_documented_and_enforced():
    assert runtime.DEFAULT_POOL_LIMIT == 64 << 20
    s = pyaclnn.Stream()
    try:
        assert s.pool.limit == runtime.DEFAULT_POOL_LIMIT
        blocks = [s.pool.allocate(40 << 20) for _ in range(2)]
        for b in blocks:
            s.pool.free(*b)                         # 80 MiB freed: past the mark, all returned
        assert s.pool.stats()["cached_bytes"] <= runtime.DEFAULT_POOL_LIMIT
    finally:
        s.close()


def test_a_cache_lock_left_held_never_blocks_a_call():
    """A KeyboardInterrupt landing between a lock's acquire and the block that releases it leaves the lock
    held (seen on CPython 3.13 under tests/test_interrupts.py's storm, where the next call then waited
    forever): the reuse cache never waits for its locks, it just does not reuse."""
    import threading
    stream = pyaclnn.current_stream()
    acl = pyaclnn.tensor.as_acl_dtype("float32")
    _reuse.take((4,), acl, stream)                  # the stream's cache exists
    cache = _reuse._caches[stream]
    cache._lock.acquire()                           # as the interrupted call left it
    try:
        got = []
        worker = threading.Thread(target=lambda: got.append(_reuse.take((4,), acl, stream)), daemon=True)
        worker.start()
        worker.join(30)
        assert got and got[0].shape == (4,), "take() waited for a lock nobody will release"
        pyaclnn.empty_cache()                       # clearing does not wait either
        assert _reuse.info()[repr(stream)]["layouts"] == 0
    finally:
        cache._lock.release()


def test_clear_executor_cache_drops_the_reused_tensors_too():
    # _reuse's docstring promises it; it used to hold on to them until empty_cache()
    stream = pyaclnn.current_stream()
    acl = pyaclnn.tensor.as_acl_dtype("float32")
    t = _reuse.take((5,), acl, stream)
    del t                                           # back in the stream's reuse cache
    before = _reuse.info()[repr(stream)]
    pyaclnn.ops.clear_executor_cache()
    after = _reuse.info()[repr(stream)]
    assert after["layouts"] == 0, (before, after)
