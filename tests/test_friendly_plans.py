"""Cached prepared calls behind friendly functions (pyaclnn/ops/_friendly_plans.py):
repeated ops.add_rms_norm_dynamic_quant calls on pyaclnn tensors reuse one executor, re-pointed at
new outputs from the stream's pool on every call.  Values against the NumPy reference
(tests/reference), bit for bit.
"""
from __future__ import annotations

import gc
import sys
import threading

import ml_dtypes
import numpy as np
import pytest
from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant as reference
from reference.add_rms_norm_dynamic_quant import normalise_soc

import pyaclnn
from pyaclnn import capi, ops, runtime
from pyaclnn.errors import PyaclnnError
from pyaclnn.ops import _friendly_plans, _native

pytestmark = pytest.mark.skipif(_native.module() is None, reason="needs the C accelerator")

BF16 = ml_dtypes.bfloat16


@pytest.fixture(scope="module")
def soc(acl):
    return normalise_soc(capi.aclrtGetSocName().decode())


@pytest.fixture(autouse=True)
def fresh():
    pyaclnn.empty_cache()
    yield
    pyaclnn.empty_cache()


def _host(seed, shape=(2, 64)):
    rng = np.random.default_rng(seed)
    n = shape[-1]
    return [rng.standard_normal(shape).astype(BF16), rng.standard_normal(shape).astype(BF16),
            rng.uniform(0.5, 1.5, n).astype(BF16), rng.uniform(0.5, 2, n).astype(BF16),
            rng.uniform(0.5, 2, n).astype(BF16)]


def _call(dev, **kw):
    return ops.add_rms_norm_dynamic_quant(dev[0], dev[1], dev[2], smooth_scale1=dev[3], smooth_scale2=dev[4],
                                          **kw)


def _want(host, soc, **kw):
    w = reference(host[0], host[1], host[2], host[3], host[4], None, epsilon=kw.get("epsilon", 1e-6),
                  output_mask=None, y_dtype="int8", soc=soc, version=2)
    return [w["y1"], w["y2"], w["x_out"], w["scale1"], w["scale2"]]


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def _assert_equal(got, want):
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert _bits(g) == _bits(w)


def _plans() -> int:
    return sum(v["plans"] for v in _friendly_plans.info().values())


def test_repeated_calls_use_one_plan_and_match_the_reference(soc):
    host = _host(0)
    dev = [pyaclnn.from_numpy(a) for a in host]
    for _ in range(3):
        got = [t.numpy() for t in _call(dev)]
        _assert_equal(got, _want(host, soc))
    assert _plans() == 1


def test_results_held_by_the_caller_are_never_overwritten(soc):
    hosts = [_host(seed) for seed in range(6)]
    kept = []
    for h in hosts:                 # several calls of one plan, all results held
        kept.append(_call([pyaclnn.from_numpy(a) for a in h]))
    for h, r in zip(hosts, kept):
        _assert_equal([t.numpy() for t in r], _want(h, soc))
    ids = {id(t) for r in kept for t in r}
    assert len(ids) == 5 * len(hosts)


def test_every_call_gets_new_outputs_and_new_addresses_are_used(soc):
    first = _call([pyaclnn.from_numpy(a) for a in _host(1)])
    ids = {id(t) for t in first}
    host = _host(2)
    second = _call([pyaclnn.from_numpy(a) for a in host])       # other input memory, same layouts
    assert not ids & {id(t) for t in second}
    assert not {t.ptr for t in first} & {t.ptr for t in second}
    _assert_equal([t.numpy() for t in second], _want(host, soc))
    del first
    third = _call([pyaclnn.from_numpy(a) for a in host])        # dropped results: their blocks may return
    _assert_equal([t.numpy() for t in third], _want(host, soc))


def test_an_open_view_keeps_its_output_from_being_overwritten(soc):
    h1 = _host(3)
    y1 = _call([pyaclnn.from_numpy(a) for a in h1])[0]
    view = y1[0]
    before = view.numpy().copy()
    del y1
    _call([pyaclnn.from_numpy(a) for a in _host(4)])
    np.testing.assert_array_equal(view.numpy(), before)
    np.testing.assert_array_equal(before, _want(h1, soc)[0][0])


def _base(outs):
    return min(t._ptr for t in outs)


def test_a_call_s_outputs_share_one_block_the_next_call_takes_once_every_output_is_closed(soc):
    host = _host(8)
    dev = [pyaclnn.from_numpy(a) for a in host]
    pool = pyaclnn.current_stream().pool
    start = pool.stats()["in_use_blocks"]
    _call(dev)                                  # the plan exists: later outputs come as one set
    r = _call(dev)
    held = pool.stats()["in_use_blocks"]
    base = _base(r)
    r[0].close()
    r2 = _call(dev)                             # the others still use r's block: a new one
    assert _base(r2) != base and pool.stats()["in_use_blocks"] == held + 1
    _assert_equal([t.numpy() for t in r[1:]], _want(host, soc)[1:])
    for t in r[1:]:
        t.close()
    assert pool.stats()["in_use_blocks"] == held + 1        # kept with the plan, not the pool's
    r3 = _call(dev)
    assert _base(r3) == base and pool.stats()["in_use_blocks"] == held + 1
    _assert_equal([t.numpy() for t in r3], _want(host, soc))
    del r2, r3
    pyaclnn.empty_cache()                  # the plan goes: every kept block back to the pool
    assert pool.stats()["in_use_blocks"] == start


def test_a_dropped_set_s_block_goes_to_the_next_call_and_its_tensors_are_as_empty_makes_them(soc):
    host = _host(11)
    dev = [pyaclnn.from_numpy(a) for a in host]
    _call(dev)
    r = _call(dev)
    base = _base(r)
    for t in r:                     # made in C (make_kept): the slots empty() would have set
        e = pyaclnn.empty(t.shape, t.acl_dtype)
        for name in ("shape", "strides", "offset", "acl_dtype", "format", "_info", "storage_dims", "_key",
                     "_handle", "_handle_fin"):
            assert getattr(t, name) == getattr(e, name), name
        assert t._mem.__class__ is runtime.memory.MemoryPart and t._mem.views == 1
        assert t._mem.nbytes == e._mem.nbytes and t._ptr == t._mem.ptr
        assert t._mem.streams is r[0]._mem.streams and t._mem.whole is r[0]._mem.whole
    assert r[0]._mem.whole.views == 5
    del t, e
    view = r[1][0]                  # a view of one output holds the whole set's block
    del r
    r2 = _call(dev)
    assert _base(r2) != base
    del view                        # nothing refers to the set any more: its lease hands the block on
    r3 = _call(dev)
    assert _base(r3) == base
    _assert_equal([t.numpy() for t in r3], _want(host, soc))


def test_a_set_dropped_after_its_plan_went_returns_its_block_at_the_next_flush(soc):
    dev = [pyaclnn.from_numpy(a) for a in _host(10)]
    pool = pyaclnn.current_stream().pool
    start = pool.stats()["in_use_blocks"]
    _call(dev)
    r = _call(dev)
    pyaclnn.empty_cache()
    assert pool.stats()["in_use_blocks"] == start + 1         # r still holds its block
    del r
    assert pool.stats()["in_use_blocks"] == start             # (stats flushes first)


def test_an_output_used_on_another_stream_orders_the_whole_set_on_it(soc):
    dev = [pyaclnn.from_numpy(a) for a in _host(9)]
    _call(dev)
    r = _call(dev)
    other = pyaclnn.Stream()
    try:
        r[2]._mem.note_stream(other)            # as an operator launched there would
        assert all(other in t._mem.streams for t in r)      # the block is synced with it before reuse
        base = _base(r)
        del r
        r = _call(dev)                          # the same block, once the other stream is done with it
        assert _base(r) == base and r[0]._mem.streams == [pyaclnn.current_stream()]
    finally:
        del r
        other.close()


def test_calls_alternating_between_layouts_each_take_their_own_plan(soc):
    # The plan of the last call of a kind is tried first; C refuses inputs of another layout, and the
    # call then finds its own plan by its full key.
    narrow, wide = _host(12), _host(13, shape=(1, 128))
    devs = [[pyaclnn.from_numpy(a) for a in h] for h in (narrow, wide)]
    for _ in range(3):
        for h, dev in zip((narrow, wide), devs):
            _assert_equal([t.numpy() for t in _call(dev)], _want(h, soc))
    assert _plans() == 2
    pyaclnn.empty_cache()
    assert all(not sp.last for sp in _friendly_plans._streams.values())     # nothing closed is tried
    _assert_equal([t.numpy() for t in _call(devs[0])], _want(narrow, soc))


def test_numpy_calls_take_a_plan_with_its_own_input_tensors(soc):
    hosts = [_host(seed) for seed in (14, 15, 16)]
    got = []
    for h in hosts * 2:                 # new data each call: the plan's input tensors are overwritten
        r = _call(h)
        assert all(isinstance(a, np.ndarray) for a in r)
        _assert_equal(r, _want(h, soc))
        got.append(r)
    assert _plans() == 1
    assert len({id(a) for r in got for a in r}) == 5 * len(got)      # new host arrays every call
    _assert_equal(got[0], _want(hosts[0], soc))                        # earlier results unchanged
    with pytest.raises(PyaclnnError):                                  # the ordinary path's refusal
        _call([a.astype(np.float32) for a in hosts[0]])
    big = _host(17, shape=(1, 1 << 17))                                # large: the ordinary path
    _assert_equal(_call(big), _want(big, soc))
    assert _plans() == 1


def test_attributes_and_layouts_make_separate_plans(soc):
    host = _host(6)
    dev = [pyaclnn.from_numpy(a) for a in host]
    _assert_equal([t.numpy() for t in _call(dev, epsilon=1e-3)], _want(host, soc, epsilon=1e-3))
    _assert_equal([t.numpy() for t in _call(dev)], _want(host, soc))
    wide = _host(7, shape=(1, 128))
    _assert_equal([t.numpy() for t in _call([pyaclnn.from_numpy(a) for a in wide])], _want(wide, soc))
    assert _plans() == 3


def test_inactive_outputs_are_none():
    host = _host(8)
    dev = [pyaclnn.from_numpy(a) for a in host]
    for _ in range(2):
        y1, y2, x_out, s1, s2 = ops.add_rms_norm_dynamic_quant(dev[0], dev[1], dev[2])
        assert y2 is None and s2 is None and y1.shape == (2, 64) and s1.shape == (2,)
    assert _plans() == 1


def test_errors_are_those_of_the_ordinary_path():
    dev = [pyaclnn.from_numpy(a) for a in _host(9)]
    with pytest.raises(ValueError, match="y_dtype"):
        _call(dev, y_dtype="float32")
    bad_gamma = pyaclnn.from_numpy(np.ones(32, BF16))
    with pytest.raises(pyaclnn.AclError):
        ops.add_rms_norm_dynamic_quant(dev[0], dev[1], bad_gamma)
    assert _plans() == 0


def test_a_bug_while_building_a_plan_is_not_swallowed():
    # Only what phase 1 refuses sends the call down the ordinary path; any other exception of a plan's
    # builder is a bug and propagates (it used to be swallowed with every other Exception).
    dev = [pyaclnn.from_numpy(a) for a in _host(11)]

    def broken(*inputs):
        raise ZeroDivisionError("a bug in a plan builder")

    with pytest.raises(ZeroDivisionError, match="a bug in a plan builder"):
        _friendly_plans.run(("test-broken-builder",), (dev[0],), broken)

    def refused(*inputs):
        raise pyaclnn.errors.InvalidArgumentError("phase 1 would refuse this")

    assert _friendly_plans.run(("test-refused-builder",), (dev[0],), refused) is None


def test_clear_and_empty_cache_destroy_the_plans():
    dev = [pyaclnn.from_numpy(a) for a in _host(10)]
    before = runtime.stub_live_counts()["executors"]
    r = _call(dev)
    del r
    assert _plans() == 1 and runtime.stub_live_counts()["executors"] == before + 1
    pyaclnn.empty_cache()
    assert _plans() == 0 and runtime.stub_live_counts()["executors"] == before
    _call(dev)
    pyaclnn.empty_cache()
    assert _plans() == 0 and runtime.stub_live_counts()["executors"] == before


def test_threads_get_their_own_results(soc):
    hosts = [_host(20 + k) for k in range(4)]
    devs = [[pyaclnn.from_numpy(a) for a in h] for h in hosts]
    wants = [_want(h, soc) for h in hosts]
    errors = []

    def work(k):
        try:
            for _ in range(30):
                r = _call(devs[k])
                _assert_equal([t.numpy() for t in r], wants[k])
        except BaseException as exc:    # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_other_streams_take_the_ordinary_path(soc):
    host = _host(11)
    s = pyaclnn.Stream()
    with s:
        dev = [pyaclnn.from_numpy(a) for a in host]
        got = [t.numpy() for t in _call(dev)]
    _assert_equal(got, _want(host, soc))
    assert _plans() == 0
    del dev
    gc.collect()
    s.close()


def test_one_c_call_per_repeated_call():
    """The hit path launches through the accelerator: no Python-level launcher frame runs."""
    dev = [pyaclnn.from_numpy(a) for a in _host(12)]
    _call(dev)
    seen = []

    def prof(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(prof)
    try:
        _call(dev)
    finally:
        sys.setprofile(None)
    assert "one_shot" not in seen and "_call_slow" not in seen and "begin" not in seen


# ---- torch CPU tensors (the emulator's device memory is host memory) -------------------------------

def _registered(ptr: int, nbytes: int) -> bool:
    import ctypes
    lookup = runtime._stub_fn("pyaclnn_stub_mem_lookup", ctypes.c_int,
                              [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p])
    return bool(lookup(ptr, nbytes, None, None))


def _torch_inputs(host):
    torch = pytest.importorskip("torch")
    return [torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) for a in host]


def test_torch_cpu_calls_match_the_reference_and_leave_no_registration(soc):
    torch = pytest.importorskip("torch")
    host = _host(30)
    tin = _torch_inputs(host)
    kept = []
    for _ in range(3):
        r = _call(tin)
        assert all(isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in r)
        got = [t.view(torch.int16).numpy().view(BF16) if t.dtype == torch.bfloat16 else t.numpy() for t in r]
        _assert_equal(got, _want(host, soc))
        # the outputs were registered with the emulator for the call only
        assert not any(_registered(t.data_ptr(), t.untyped_storage().nbytes()) for t in r)
        kept.append(r)
    assert len({t.data_ptr() for r in kept for t in r}) == 15       # fresh torch outputs, all held
    assert [t.dtype for t in kept[0]] == [torch.int8, torch.int8, torch.bfloat16, torch.float32, torch.float32]
    assert _plans() == 1


def test_torch_results_held_are_never_overwritten(soc):
    pytest.importorskip("torch")
    hosts = [_host(40 + k) for k in range(3)]
    results = [_call(_torch_inputs(h)) for h in hosts]
    for h, r in zip(hosts, results):
        assert _bits(r[0].numpy()) == _bits(_want(h, soc)[0])
        assert _bits(r[4].numpy()) == _bits(_want(h, soc)[4])


def test_torch_and_tensor_calls_share_one_plan_per_layout(soc):
    pytest.importorskip("torch")
    host = _host(50)
    _call(_torch_inputs(host))
    _call([pyaclnn.from_numpy(a) for a in host])
    assert _plans() == 1


def test_large_outputs_take_the_plan_too(soc):
    big = _host(61, shape=(65, 8192))         # x_out above 1 MiB
    dev = [pyaclnn.from_numpy(a) for a in big]
    for _ in range(2):
        got = [t.numpy() for t in _call(dev)]
    _assert_equal(got, _want(big, soc))
    assert _plans() == 1


def test_plans_survive_the_layout_intern_table_being_emptied(soc):
    from pyaclnn import tensor as tensor_module
    host = _host(70)
    dev = [pyaclnn.from_numpy(a) for a in host]
    _call(dev)
    tensor_module._keys.clear()         # (emptied when full): new tensors get new, equal key objects
    dev = [pyaclnn.from_numpy(a) for a in host]
    got = [t.numpy() for t in _call(dev)]
    _assert_equal(got, _want(host, soc))
    assert _plans() == 1
    seen = []
    sys.setprofile(lambda frame, event, arg: seen.append(frame.f_code.co_name) if event == "call" else None)
    try:
        _call(dev)
    finally:
        sys.setprofile(None)
    assert "one_shot" not in seen          # still the cached plan, not the ordinary path


def test_fresh_ranges_are_registered_all_or_none():
    """The torch path registers its new outputs in one C call; a range the emulator already knows
    makes it register none (the call then takes the shared bookkeeping, which can share it)."""
    from pyaclnn.runtime import register_host_memory
    known = np.zeros(4096, np.uint8)
    fresh = np.zeros(4096, np.uint8)
    flag = []
    assert _friendly_plans._fast_host([fresh.ctypes.data], [fresh.nbytes], flag)   # sets the functions up
    assert flag == [True] and _registered(fresh.ctypes.data, fresh.nbytes)
    _friendly_plans._native_mod[0].unregister_ranges([fresh.ctypes.data], [])      # no flag: not ours
    assert _registered(fresh.ctypes.data, fresh.nbytes)
    _friendly_plans._native_mod[0].unregister_ranges([fresh.ctypes.data], flag)
    assert flag == [] and not _registered(fresh.ctypes.data, fresh.nbytes)         # released once
    reg = register_host_memory(known.ctypes.data, known.nbytes)
    try:
        ok = _friendly_plans._fast_host([fresh.ctypes.data, known.ctypes.data + 64], [fresh.nbytes, 64])
        assert not ok
        assert not _registered(fresh.ctypes.data, fresh.nbytes)     # undone
        assert pyaclnn.errors.recent_error_message() in ("", None)   # the refusal left no message
    finally:
        reg.release()
