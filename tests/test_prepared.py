"""Prepared calls: a repeatable executor re-run with new tensors gives the one-shot results and
leaks nothing; address patching, layouts, streams, threads and the pure-ctypes fallback."""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import pyaclnn
from helpers import run_python
from pyaclnn import ops, runtime
from pyaclnn.errors import AclError
from reference import amp_update_scale as ref

RUNS = 10_000
FOUND_VALUES = [0.0, 0.0, 0.0, 1.0, 0.0, float("nan"), 0.0, -0.0]   # one device tensor each


@pytest.fixture(autouse=True)
def default_stream_exists():
    return runtime.current_stream()


def chain_inputs(seed: int = 3):
    rng = np.random.default_rng(seed)
    # found_inf mostly 0, sometimes 1 / NaN, so that scale grows, backs off and the tracker wraps
    return rng.choice(len(FOUND_VALUES), size=RUNS, p=[0.3, 0.3, 0.3, 0.03, 0.02, 0.03, 0.01, 0.01])


def reference_chain(picks, start_scale=1024.0, interval=7):
    scale, tracker, states = np.float32(start_scale), 0, []
    for i, k in enumerate(picks):
        scale, tracker = ref.amp_update_scale(scale, tracker, np.float32(FOUND_VALUES[k]), 2.0, 0.5, interval)
        if (i + 1) % 1000 == 0:
            states.append((float(scale), tracker))
    return states


def test_prepared_ten_thousand_runs_match_one_shot_and_leak_nothing():
    picks = chain_inputs()
    gc.collect()                                # garbage of earlier tests must not go mid-test
    counts_before = runtime.stub_live_counts()
    s = runtime.Stream()
    found = [pyaclnn.from_numpy(np.array([v], np.float32), stream=s) for v in FOUND_VALUES]

    def state_tensors():
        return [[pyaclnn.from_numpy(np.array([1024.0], np.float32), stream=s),
                 pyaclnn.from_numpy(np.array([0], np.int32), stream=s)],
                [pyaclnn.empty((1,), "float32", stream=s), pyaclnn.empty((1,), "int32", stream=s)]]

    # one-shot chain: state ping-pongs between two tensor pairs
    st = state_tensors()
    one_shot = []
    for i, k in enumerate(picks):
        a, b = st[i & 1], st[(i & 1) ^ 1]
        ops.AmpUpdateScale(a[0], a[1], found[k], 2.0, 0.5, 7, b[0], b[1], stream=s)
        if (i + 1) % 1000 == 0:
            one_shot.append((float(b[0].numpy()[0]), int(b[1].numpy()[0])))

    # prepared chain on fresh tensors: every run re-points all five addresses
    del a, b
    st = state_tensors()
    in_use_before = s.pool.stats()["in_use_blocks"]
    plan = ops.prepare("AmpUpdateScale", st[0][0], st[0][1], found[0], 2.0, 0.5, 7, st[1][0], st[1][1],
                       stream=s)
    assert runtime.stub_live_counts()["executors"] == counts_before["executors"] + 1
    prepared = []
    for i, k in enumerate(picks):
        a, b = st[i & 1], st[(i & 1) ^ 1]
        out = plan(a[0], a[1], found[k], b[0], b[1])
        if (i + 1) % 1000 == 0:
            assert out[0] is b[0] and out[1] is b[1]
            prepared.append((float(b[0].numpy()[0]), int(b[1].numpy()[0])))

    expected = reference_chain(picks)
    assert one_shot == expected
    assert prepared == expected
    assert len({t for t in expected}) > 3                       # the chain really moved
    assert s.pool.stats()["in_use_blocks"] == in_use_before     # no workspace or temporary kept

    plan.close()
    del st, found, out, a, b
    s.close()
    counts_after = runtime.stub_live_counts()
    for key in ("executors", "tensors", "device_allocations", "device_bytes", "streams", "scalars", "arrays"):
        assert counts_after[key] == counts_before[key], key


def test_partial_and_keyword_updates():
    x = pyaclnn.from_numpy(np.array([10.0], np.float32))
    g = pyaclnn.from_numpy(np.array([0], np.int32))
    f0, f1 = pyaclnn.zeros((1,)), pyaclnn.from_numpy(np.array([1.0], np.float32))
    ys, yt = pyaclnn.empty((1,)), pyaclnn.empty((1,), "int32")
    with ops.prepare("AmpUpdateScale", x, g, f0, 2.0, 0.5, 2, ys, yt) as plan:
        assert plan.tensor_names == ("currentScale", "growthTracker", "foundInf", "updatedScaleOut",
                                     "updatedGrowthTrackerOut")
        plan()
        assert (ys.numpy()[0], yt.numpy()[0]) == (10.0, 1)
        plan(found_inf=f1)                      # snake_case name; the rest keep their tensors
        assert (ys.numpy()[0], yt.numpy()[0]) == (5.0, 0)
        plan(foundInf=f0, currentScale=ys)      # C names; ys is read and written (aliasing)
        assert (ys.numpy()[0], yt.numpy()[0]) == (5.0, 1)
        x2 = pyaclnn.from_numpy(np.array([7.0], np.float32))
        plan(x2, g, f0, ys, yt)                 # all positional (the accelerated path when there is one)
        assert (ys.numpy()[0], yt.numpy()[0]) == (7.0, 1)
        x2.copy_from(np.array([9.0], np.float32))
        plan(found_inf=f1)                      # by name (Python path): x2 must stay bound
        assert (ys.numpy()[0], yt.numpy()[0]) == (4.5, 0)
        a, b = np.zeros(1, np.float32), np.zeros(1, np.int32)
        ret = plan(np.array([3.0], np.float32), np.array([1], np.int32), f0, a, b)   # numpy: copied
        assert ret[0] is a and ret[1] is b and (a[0], b[0]) == (6.0, 0)
        with pytest.raises(TypeError, match="no tensor parameter"):
            plan(bogus=x)
        with pytest.raises(TypeError, match="expected the 5 tensor arguments"):
            plan(x, g)
    assert plan.closed
    with pytest.raises(RuntimeError, match="closed"):
        plan()


def test_layout_must_match_the_prepared_one():
    x = pyaclnn.from_numpy(np.array([1.0], np.float32))
    g = pyaclnn.from_numpy(np.array([0], np.int32))
    f = pyaclnn.zeros((1,))
    plan = ops.prepare("AmpUpdateScale", x, g, f, 2.0, 0.5, 5, x, g)
    with pytest.raises(ValueError, match=r"currentScale: layout differs .*dtype FLOAT16 != FLOAT\)"):
        plan(pyaclnn.zeros((1,), "float16"), g, f, x, g)
    with pytest.raises(ValueError, match=r"shape \(2,\) != \(1,\)"):
        plan(currentScale=pyaclnn.zeros((2,)))
    big = pyaclnn.zeros((4,))
    with pytest.raises(ValueError, match="offset 2 != 0"):
        plan(currentScale=big[2:3])
    with pytest.raises(ValueError, match="cannot become NULL"):
        plan(None, g, f, x, g)
    plan.close()


def test_prepare_reports_phase_one_errors():
    x = pyaclnn.from_numpy(np.array([1.0], np.float64))
    g = pyaclnn.from_numpy(np.array([0], np.int32))
    before = runtime.stub_live_counts()
    with pytest.raises(AclError) as info:
        ops.prepare("AmpUpdateScale", x, g, x, 2.0, 0.5, 5, x, g)
    assert info.value.code == 161002
    after = runtime.stub_live_counts()
    assert after["tensors"] == before["tensors"] and after["executors"] == before["executors"]


def test_other_stream_and_other_thread():
    s1, s2 = runtime.Stream(), runtime.Stream()
    x = pyaclnn.from_numpy(np.array([2.0], np.float32), stream=s1)
    g = pyaclnn.from_numpy(np.array([0], np.int32), stream=s1)
    f = pyaclnn.zeros((1,), stream=s1)
    y, t = pyaclnn.empty((1,), stream=s1), pyaclnn.empty((1,), "int32", stream=s1)
    s1.synchronize()
    plan = ops.prepare("AmpUpdateScale", x, g, f, 2.0, 0.5, 1, y, t, stream=s1)
    plan(stream=s2)
    s2.synchronize()
    assert y.numpy()[0] == 4.0
    assert s2 in y.memory.streams                  # s2 is now synchronised before y is recycled
    errors = []

    def worker():
        try:
            plan(y, g, f, x, t)                    # binds this thread to the device itself
            s1.synchronize()
        except Exception as exc:   # noqa: BLE001
            errors.append(exc)

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert not errors and x.numpy()[0] == 8.0
    plan.close()
    s1.close()
    s2.close()


def test_plan_keeps_its_tensors_alive():
    s = runtime.Stream()
    plan = ops.prepare("AmpUpdateScale", pyaclnn.from_numpy(np.array([3.0], np.float32), stream=s),
                       pyaclnn.from_numpy(np.array([0], np.int32), stream=s), pyaclnn.zeros((1,), stream=s),
                       2.0, 0.5, 1, pyaclnn.empty((1,), stream=s), pyaclnn.empty((1,), "int32", stream=s),
                       stream=s)
    out_scale, _ = plan()                          # the temporaries above are still bound and alive
    assert out_scale.numpy()[0] == 6.0
    in_use = s.pool.stats()["in_use_blocks"]
    assert in_use == 5
    plan.close()
    del out_scale, _
    assert s.pool.stats()["in_use_blocks"] == 0
    s.close()


def test_fallback_without_the_native_helper_gives_the_same_results():
    code = """
        import numpy as np, pyaclnn
        from pyaclnn import ops
        from pyaclnn.ops import _native
        x = [pyaclnn.from_numpy(np.array([v], np.float32)) for v in (3.0, 5.0)]
        g = pyaclnn.from_numpy(np.array([0], np.int32))
        f = pyaclnn.zeros((1,))
        y, t = pyaclnn.empty((1,)), pyaclnn.empty((1,), "int32")
        plan = ops.prepare("AmpUpdateScale", x[0], g, f, 2.0, 0.5, 1, y, t)
        got = []
        for xi in x + x:
            plan(xi, g, f, y, t)
            got.append(float(y.numpy()[0]))
        print(plan.accelerated, _native.why_unavailable, got)
    """
    rc, out, err = run_python(code, env_overrides={"PYACLNN_FASTPATH": "0"})
    assert rc == 0, err
    assert out.strip() == "False disabled by PYACLNN_FASTPATH=0 [6.0, 10.0, 6.0, 10.0]"


def test_native_helper_built_by_the_package_is_used():
    """The package build compiles the accelerator next to the emulator (CMakeLists.txt)."""
    from pyaclnn.ops import _native
    if _native.module() is None:
        pytest.skip(f"accelerator not built here: {_native.why_unavailable}")
    code = """
        import numpy as np, pyaclnn
        from pyaclnn import ops
        x = pyaclnn.from_numpy(np.array([3.0], np.float32)); g = pyaclnn.from_numpy(np.array([0], np.int32))
        plan = ops.prepare("AmpUpdateScale", x, g, pyaclnn.zeros((1,)), 2.0, 0.5, 1, x, g)
        plan(); plan()
        print(plan.accelerated, float(x.numpy()[0]))
    """
    rc, out, err = run_python(code)
    assert rc == 0, err
    assert out.strip() == "True 12.0"
