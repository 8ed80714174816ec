"""The host-data boundary (pyaclnn._boundary) and the ownership of what it makes: every friendly output
and numpy input copy is a new tensor from the stream's pool, so a result the caller still holds -- in
any way -- is never written by a later call; large numpy calls on the emulator take no device
copies, and the pool keeps at most its high-water mark."""
from __future__ import annotations

import ctypes
import gc
import sys

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import _boundary, ops, runtime

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


def _others(n, seed, rows=1):
    """``n`` calls of the same layouts on other data (what could overwrite a recycled result)."""
    for k in range(n):
        dev = [pyaclnn.from_numpy(a) for a in _inputs(rows, seed=seed + k)]
        for _ in range(3):
            r = _arnq(*dev)
            del r                                   # dropped at once: its memory may go round
        _arnq(*_inputs(rows, seed=seed + k))        # the numpy path's copies and outputs too
    pyaclnn.current_stream().synchronize()


def _first(seed):
    """A call's device results and their expected bytes (from the numpy path)."""
    host = _inputs(1, seed=seed)
    return _arnq(*[pyaclnn.from_numpy(a) for a in host]), _host(_arnq(*host))


def test_dropped_device_outputs_go_to_the_next_call_and_results_stay_exact():
    host = _inputs(1, seed=1)
    dev = [pyaclnn.from_numpy(a) for a in host]
    want = _host(_arnq(*host))                       # numpy path
    pool = pyaclnn.current_stream().pool
    first = _arnq(*dev)
    _same(_host(first), want)
    in_use = pool.stats()["in_use_bytes"]
    del first                                        # the caller lets them go: the next call takes them
    for _ in range(3):
        _same(_host(_arnq(*dev)), want)
        assert pool.stats()["in_use_bytes"] == in_use
    pyaclnn.empty_cache()                            # the plan goes: its kept block returns to the pool
    assert pool.stats()["in_use_bytes"] <= in_use - sum(w.nbytes for w in want)


def test_each_call_returns_new_outputs():
    dev = [pyaclnn.from_numpy(a) for a in _inputs(1, seed=2)]
    a, b = _arnq(*dev), _arnq(*dev)
    ra, rb = [r for r in a if r is not None], [r for r in b if r is not None]
    assert not {id(r) for r in ra} & {id(r) for r in rb}
    assert not {r.ptr for r in ra} & {r.ptr for r in rb}


def test_a_result_held_directly_or_through_a_view_is_never_overwritten():
    kept, want = _first(3)
    y1, view = kept[0], kept[1][0]                   # a view of y2 only: y2 itself is dropped
    del kept
    _others(2, 100)
    _same([y1.numpy(), view.numpy()], [want[0], want[1][0]])


@pytest.mark.parametrize("rows", [1, 160])     # host copies; on the emulator, arrays the kernel wrote
def test_a_numpy_view_of_a_host_result_is_never_overwritten(rows):
    got = _arnq(*_inputs(rows, seed=4))
    want = [g.copy() for g in got if g is not None]
    views = [g[..., :] for g in got if g is not None]    # views only: the result arrays are dropped
    del got
    _others(2, 200, rows)
    _same(views, want)


class _Exported:
    """A zero-copy numpy view of a tensor's memory (emulator: device memory is host memory), the way
    a consumer of ``__array_interface__`` holds it: the interface's owner keeps the tensor."""
    def __init__(self, t):
        self.t = t
        host = t.numpy()
        self.__array_interface__ = {"data": (t.ptr, True), "shape": host.shape,
                                    "typestr": host.dtype.str if host.dtype.kind != "V" else f"|V{host.itemsize}",
                                    "version": 3}


@pytest.mark.skipif(not runtime.is_stub(), reason="device memory is host memory on the emulator only")
def test_a_result_held_only_through_an_array_interface_export_is_never_overwritten():
    kept, want = _first(5)
    exported = [np.asarray(_Exported(kept[i])).view(want[i].dtype) for i in (0, 1, 3)]
    del kept
    gc.collect()
    _others(2, 300)
    _same(exported, [want[i] for i in (0, 1, 3)])


@pytest.mark.skipif(not runtime.is_stub(), reason="device memory is host memory on the emulator only")
def test_a_result_held_only_through_dlpack_is_never_overwritten():
    pytest.importorskip("torch")
    if "torch_npu" in sys.modules:
        pytest.skip("to_torch copies to an NPU tensor with torch_npu loaded")
    from pyaclnn.torch import to_torch
    kept, want = _first(6)
    exported = [np.from_dlpack(to_torch(kept[i])) for i in (0, 3)]     # torch -> numpy, zero-copy
    del kept
    gc.collect()
    _others(2, 400)
    _same(exported, [want[i] for i in (0, 3)])


@pytest.mark.skipif(not runtime.is_stub(), reason="device memory is host memory on the emulator only")
def test_a_result_held_only_by_a_c_level_reference_is_never_overwritten():
    # The tensor lives on only in a ctypes py_object slot (C memory, no Python name, no weak
    # reference); its bytes are read through a raw pointer, as C code holding it would.
    kept, want = _first(7)
    holders = (ctypes.py_object * 2)(kept[0], kept[3])
    raw = [(ctypes.c_char * want[i].nbytes).from_address(kept[i].ptr) for i in (0, 3)]
    del kept
    gc.collect()
    _others(2, 500)
    assert [bytes(r) for r in raw] == [want[i].tobytes() for i in (0, 3)]
    assert holders[0].shape == want[0].shape


def test_the_package_decides_no_ownership_by_reference_count():
    import pathlib
    root = pathlib.Path(pyaclnn.__file__).parent
    for path in [*root.rglob("*.py"), *root.rglob("*.c")]:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "getrefcount" not in text and "Py_REFCNT" not in text, path


@pytest.mark.skipif(not runtime.is_stub(), reason="host memory in place is an emulator feature")
def test_large_numpy_call_takes_no_device_copies_and_matches_the_device_path():
    rows = 160                                      # y int8 [160, 8192] = 1.25 MiB: used in place
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


def test_empty_cache_drops_the_friendly_plans():
    from pyaclnn.ops import _friendly_plans
    dev = [pyaclnn.from_numpy(a) for a in _inputs(1, seed=8)]
    for _ in range(2):
        _arnq(*dev)
        assert sum(v["plans"] for v in _friendly_plans.info().values()) >= 1
        pyaclnn.empty_cache()
        assert sum(v["plans"] for v in _friendly_plans.info().values()) == 0
