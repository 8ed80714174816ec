"""The kernels' persistent worker pool (native_stubs/src/ops/common/op_parallel.c).

Driven directly through its test hooks (pyaclnn_stub_pool_selftest / _workers in libopapi) and through
the AddRmsNormDynamicQuant kernel: every item runs once in its documented part whatever the threads,
workers are reused across launches, concurrent submitters are served, a forked child gets a working
pool of its own, workers never keep a process alive, small launches stay on their stream's thread, and
the bytes never depend on the thread count (compared with tests/reference's NumPy implementation).
"""
from __future__ import annotations

import ctypes
import functools
import os
import threading

import ml_dtypes
import numpy as np
import pytest

from helpers import run_python
from pyaclnn._stubpaths import stub_library_dir  # honours PYACLNN_STUB_LIBDIR

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")


@functools.lru_cache(maxsize=None)
def lib() -> ctypes.CDLL:
    handle = ctypes.CDLL(os.path.join(stub_library_dir(), "libopapi.so"))
    handle.pyaclnn_stub_pool_selftest.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p,
                                                  ctypes.c_uint64]
    handle.pyaclnn_stub_pool_selftest.restype = ctypes.c_int
    handle.pyaclnn_stub_pool_workers.restype = ctypes.c_int
    return handle


def expected_marks(count: int, parts: int) -> np.ndarray:
    """Item i belongs to part p when count*p//parts <= i < count*(p+1)//parts (op_parallel.h), with
    parts capped at count; the hook marks it p + 1."""
    parts = min(parts, count)
    marks = np.zeros(count, np.uint32)
    for p in range(parts):
        marks[count * p // parts:count * (p + 1) // parts] = p + 1
    return marks


def selftest(count: int, parts: int, spin_ns: int = 0) -> tuple[np.ndarray, int]:
    marks = np.zeros(max(count, 1), np.uint32)
    distinct = lib().pyaclnn_stub_pool_selftest(count, parts, marks.ctypes.data, spin_ns)
    return marks[:count], distinct


@pytest.mark.parametrize("count, parts", [(0, 3), (1, 1), (1, 4), (5, 8), (10, 3), (1000, 7), (257, 256),
                                          (100_000, 2)])
def test_every_item_runs_once_in_its_part(count, parts):
    marks, distinct = selftest(count, parts, spin_ns=20_000)
    assert np.array_equal(marks, expected_marks(count, parts))
    assert 0 <= distinct <= max(min(parts, count), 0)


def test_bad_arguments_are_refused():
    assert lib().pyaclnn_stub_pool_selftest(10, 0, None, 0) == -1
    assert lib().pyaclnn_stub_pool_selftest(10, 257, None, 0) == -1
    assert lib().pyaclnn_stub_pool_selftest(10, 2, None, 0) == -1


def _task_count() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_workers_are_created_once_and_reused():
    code = """
        import ctypes, os, sys
        lib = ctypes.CDLL(os.path.join(sys.argv[1], "libopapi.so"))
        tasks = lambda: len(os.listdir("/proc/self/task"))
        marks = (ctypes.c_uint32 * 64)()
        before, workers0 = tasks(), lib.pyaclnn_stub_pool_workers()
        assert lib.pyaclnn_stub_pool_selftest(64, 4, marks, 100000) >= 1
        after_first = tasks()
        for _ in range(200):
            assert lib.pyaclnn_stub_pool_selftest(64, 4, marks, 0) >= 1
        print(workers0, lib.pyaclnn_stub_pool_workers(), after_first - before, tasks() - after_first)
    """
    rc, out, err = run_python(code, args=[stub_library_dir()])
    assert rc == 0, err
    workers0, workers, started, later = map(int, out.split())
    assert (workers0, workers, started, later) == (0, 3, 3, 0)


def test_concurrent_submitters_get_every_item_done():
    """Several threads submit at once (ctypes releases the GIL): one job has the pool, the others
    run their parts on their own thread; every job's items are done once, in their parts."""
    errors = []

    def submit(seed):
        rng = np.random.default_rng(seed)
        for _ in range(100):
            count, parts = int(rng.integers(1, 3000)), int(rng.integers(1, 9))
            marks, _ = selftest(count, parts)
            if not np.array_equal(marks, expected_marks(count, parts)):
                errors.append((count, parts))

    threads = [threading.Thread(target=submit, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_forked_child_gets_a_fresh_pool():
    code = """
        import ctypes, os, sys
        lib = ctypes.CDLL(os.path.join(sys.argv[1], "libopapi.so"))
        def run(count, parts):
            marks = (ctypes.c_uint32 * count)()
            lib.pyaclnn_stub_pool_selftest(count, parts, marks, 200000)
            want = [p + 1 for p in range(parts) for _ in range(count * p // parts, count * (p + 1) // parts)]
            return list(marks) == want
        assert run(1000, 3) and lib.pyaclnn_stub_pool_workers() == 2
        pid = os.fork()
        if pid == 0:
            ok = lib.pyaclnn_stub_pool_workers() == 0 and run(999, 5) and lib.pyaclnn_stub_pool_workers() == 4
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), run(500, 3), lib.pyaclnn_stub_pool_workers())
    """
    rc, out, err = run_python(code, args=[stub_library_dir()], timeout=60)
    assert rc == 0, err
    assert out.split() == ["0", "True", "2"]


def test_parked_workers_do_not_keep_the_process_alive():
    code = """
        import ctypes, os, sys
        lib = ctypes.CDLL(os.path.join(sys.argv[1], "libopapi.so"))
        marks = (ctypes.c_uint32 * 100)()
        lib.pyaclnn_stub_pool_selftest(100, 8, marks, 100000)
        print(lib.pyaclnn_stub_pool_workers())
    """
    rc, out, err = run_python(code, args=[stub_library_dir()], timeout=30)
    assert (rc, out.split()) == (0, ["7"]), err


def test_exit_while_a_parallel_kernel_runs():
    """The interpreter exits right after queueing a large launch spread over the pool: the process ends
    normally (no hang on the workers, no crash in them)."""
    code = """
        import ml_dtypes, numpy as np, pyaclnn
        from pyaclnn import ops
        bf16 = ml_dtypes.bfloat16
        x = pyaclnn.from_numpy(np.ones((1024, 8192), bf16))
        g = pyaclnn.from_numpy(np.ones(8192, bf16))
        ops.add_rms_norm_dynamic_quant(x, x, g, y_dtype="int8")   # asynchronous: still running below
        print("queued", flush=True)
    """
    rc, out, err = run_python(code, env_overrides={"PYACLNN_STUB_KERNEL_THREADS": "3"}, timeout=60)
    assert (rc, out.split()) == (0, ["queued"]), err


# ---- through the AddRmsNormDynamicQuant kernel ---------------------------------------------------

def _arnq_inputs(m, n, seed=3):
    rng = np.random.default_rng(seed)
    bf16 = ml_dtypes.bfloat16
    x1 = rng.standard_normal((m, n), dtype=np.float32).astype(bf16)
    x2 = rng.standard_normal((m, n), dtype=np.float32).astype(bf16)
    gamma, s1, s2 = (rng.uniform(0.25, 2.0, n).astype(bf16) for _ in range(3))
    return x1, x2, gamma, s1, s2


def _reference(x1, x2, gamma, s1, s2, soc):
    from reference.add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant, normalise_soc
    ref = add_rms_norm_dynamic_quant(x1, x2, gamma, s1, s2, None, epsilon=1e-6, y_dtype="int8",
                                     soc=normalise_soc(soc), version=2)
    return [np.ascontiguousarray(ref[k]) for k in ("y1", "y2", "x_out", "scale1", "scale2")]


def _arnq(x1, x2, gamma, s1, s2, stream=None):
    from pyaclnn import ops
    out = ops.add_rms_norm_dynamic_quant(x1, x2, gamma, smooth_scale1=s1, smooth_scale2=s2, y_dtype="int8",
                                         stream=stream)
    return [np.asarray(o) for o in out]


def _same(got, want):
    return all(np.array_equal(g.reshape(-1).view(np.uint8), w.reshape(-1).view(np.uint8))
               for g, w in zip(got, want))


def test_arnq_bytes_do_not_depend_on_the_pool(acl, set_switch):
    """The general knob (PYACLNN_STUB_KERNEL_THREADS) and the automatic rule, with more
    parts than CPUs and than rows: the reference's bytes every time."""
    from pyaclnn import capi
    soc = capi.aclrtGetSocName().decode()
    args = _arnq_inputs(37, 320)
    want = _reference(*args, soc)
    set_switch("PYACLNN_STUB_ARNQ_THREADS", None)
    for threads in ("", "1", "2", "3", "5", "64"):
        set_switch("PYACLNN_STUB_KERNEL_THREADS", threads)
        assert _same(_arnq(*args), want), threads


def test_arnq_on_several_streams_at_once(acl, set_switch):
    """Streams run kernels concurrently: one launch has the pool, the others run their parts on their
    stream's thread; every result is the reference's."""
    import pyaclnn
    from pyaclnn import capi
    soc = capi.aclrtGetSocName().decode()
    set_switch("PYACLNN_STUB_KERNEL_THREADS", "3")
    cases = [_arnq_inputs(24 + 5 * i, 256, seed=i) for i in range(3)]
    wants = [_reference(*c, soc) for c in cases]
    errors = []

    def work(i):
        with pyaclnn.Stream() as s:
            for _ in range(8):
                if not _same(_arnq(*cases[i], stream=s), wants[i]):
                    errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_small_launches_stay_on_one_thread():
    """Decode shapes (16 rows of 8192) never wake the pool under the automatic rule; a large launch
    does, where there is more than one CPU."""
    code = """
        import ctypes, os, sys
        import numpy as np, ml_dtypes
        from pyaclnn import ops
        lib = ctypes.CDLL(os.path.join(sys.argv[1], "libopapi.so"))
        def call(m):
            x = np.ones((m, 8192), ml_dtypes.bfloat16)
            ops.add_rms_norm_dynamic_quant(x, x, np.ones(8192, ml_dtypes.bfloat16), y_dtype="int8")
            return lib.pyaclnn_stub_pool_workers()
        print(call(1), call(8), call(16), call(512), os.sysconf("SC_NPROCESSORS_ONLN"))
    """
    env = {"PYACLNN_STUB_KERNEL_THREADS": None, "PYACLNN_STUB_ARNQ_THREADS": None}
    rc, out, err = run_python(code, env_overrides=env, args=[stub_library_dir()], timeout=120)
    assert rc == 0, err
    w1, w8, w16, w512, cpus = map(int, out.split())
    assert (w1, w8, w16) == (0, 0, 0)
    assert w512 == (min(cpus, 16) - 1 if cpus > 1 else 0)


# ---- the row kernels: softmax, layer norm, rms norm, and the elementwise engine's chunks -------------

def _row_kernels(x, g, w, b):
    """Softmax (in place too), LayerNorm forward and backward, RmsNorm, and an fp16 Add / fp32 Addcdiv over
    x's rows: every output's bytes."""
    import pyaclnn
    from pyaclnn import ops
    m, n = x.shape
    dev = pyaclnn.from_numpy

    def z(shape, dtype=np.float32):
        return dev(np.zeros(shape, dtype))

    outs = []
    sm, inplace = z((m, n)), dev(x.copy())
    ops.Softmax(dev(x), -1, sm)
    ops.Softmax(inplace, -1, inplace)
    y, mean, rstd = z((m, n)), z((m, 1)), z((m, 1))
    ops.LayerNorm(dev(x), [n], dev(w), dev(b), 1e-5, y, mean, rstd)
    dx, dw, db = z((m, n)), z((n,)), z((n,))
    ops.LayerNormBackward(dev(g), dev(x), [n], mean, rstd, dev(w), dev(b), [True, True, True], dx, dw, db)
    ry, rr = z((m, n)), z((m, 1))
    ops.RmsNorm(dev(x), dev(w), 1e-6, ry, rr)
    h = z((m, n), np.float16)
    ops.Add(dev(x.astype(np.float16)), dev(g.astype(np.float16)), ops.Scalar(1, "int64"), h)
    acd = z((m, n))
    ops.Addcdiv(dev(x), dev(g), dev(np.abs(x) + 0.5), ops.Scalar(0.5, "float32"), acd)
    for t in (sm, inplace, y, mean, rstd, dx, dw, db, ry, rr, h, acd):
        outs.append(np.asarray(t.numpy()))
    return outs


def test_row_kernels_bytes_do_not_depend_on_the_pool(acl, set_switch):
    """Softmax's lines, the norms' rows (layer norm backward's dw / db: its columns, each summed in row order)
    and the elementwise engine's ranges split over 1 to 64 parts: the same bytes every time (NaN rows too)."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((67, 96)) * 3).astype(np.float32)
    x[5, 7] = np.nan
    g, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((67, 96), (96,), (96,)))
    set_switch("PYACLNN_STUB_KERNEL_THREADS", "1")
    want = _row_kernels(x, g, w, b)
    for threads in ("2", "3", "64", ""):
        set_switch("PYACLNN_STUB_KERNEL_THREADS", threads)
        assert _same(_row_kernels(x, g, w, b), want), threads
