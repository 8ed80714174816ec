"""pyaclnn._release: objects dropped without close() are released by the releaser thread; the calls
whose result depends on those releases wait for them (flush points); a forked child and interpreter
exit release too; PYACLNN_RELEASE_THREAD=0 restores inline releases."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import pyaclnn
from helpers import run_python
from pyaclnn import _release
from pyaclnn.runtime.memory import DeviceBuffer
from pyaclnn.tensor import wrap_pointer


class _Owner:
    pass


def test_a_dropped_object_is_released_on_the_releaser_thread_and_flush_waits_for_it():
    seen = []
    obj = _Owner()
    f = _release.finalizer(obj, lambda: seen.append(threading.current_thread().name))
    del obj
    assert _release.flush()
    assert seen == ["pyaclnn-releaser"] and not f.alive
    assert not _release._visible()      # (pending() is conservative from Python 3.13: see _HANDOFF)


def test_close_releases_at_once_on_the_calling_thread():
    seen = []
    obj = _Owner()
    f = _release.finalizer(obj, lambda: seen.append(threading.current_thread().name))
    f()
    assert seen == [threading.current_thread().name]
    f()                                             # once
    del obj
    _release.flush()
    assert len(seen) == 1


def test_flush_waits_for_releases_that_a_release_queues():
    # The wrapper's release drops the last reference to its owner tensor, whose block is queued
    # behind flush()'s first marker: flush must wait for it as well.
    pool = pyaclnn.runtime.current_stream().pool
    before = pool.stats()["in_use_blocks"]
    base = pyaclnn.from_numpy(np.arange(10, dtype=np.int32))
    w = wrap_pointer(base.ptr, (2, 3), "int32", strides=(3, 1), offset=4, owner=base)
    assert w.numpy().tolist() == [[4, 5, 6], [7, 8, 9]]
    del base, w
    assert _release.flush()
    assert pool.in_use_blocks == before


def test_forked_child_runs_its_own_releaser():
    code = """
        import gc, os, threading, numpy as np, pyaclnn
        from pyaclnn import _release, runtime
        from pyaclnn._stubinfo import live_counts
        runtime.init()                          # the parent's releaser is running
        assert _release._releaser.is_alive()
        pid = os.fork()
        if pid == 0:                            # forked before any stream: may use the device
            code = 1
            try:
                base = live_counts()
                for _ in range(50):
                    t = pyaclnn.from_numpy(np.arange(8, dtype=np.float32)); t.acl_handle()
                    del t
                gc.collect(); pyaclnn.empty_cache()
                now = live_counts()
                r = _release._releaser
                code = 0 if (r.is_alive() and r is not threading.main_thread()
                             and now["tensors"] == base["tensors"]
                             and now["device_allocations"] <= base["device_allocations"]) else 3
            finally:
                os._exit(code)
        print(os.waitpid(pid, 0)[1])
    """
    rc, out, err = run_python(code, timeout=120)
    assert rc == 0, err
    assert out.strip() == "0"


def test_objects_dropped_just_before_exit_are_released():
    code = """
        import numpy as np, pyaclnn
        ts = [pyaclnn.from_numpy(np.arange(100, dtype=np.float32)) for _ in range(20)]
        for t in ts:
            t.acl_handle()
        del t, ts                               # queued for the releaser as the script ends
    """
    rc, out, err = run_python(code, {"PYACLNN_STUB_LEAK_REPORT": "1"})
    assert rc == 0, err
    report = [line for line in err.splitlines() if line.startswith("pyaclnn stub (")]
    assert report and "live device allocations 0 (0 bytes)" in report[-1] and " tensors 0," in report[-1], err


def test_release_thread_opt_out_releases_inline():
    code = """
        import threading, pyaclnn
        from pyaclnn import _release
        class O: pass
        seen = []
        o = O()
        _release.finalizer(o, lambda: seen.append(threading.current_thread().name))
        del o
        print(_release.THREADED, seen)
    """
    rc, out, err = run_python(code, {"PYACLNN_RELEASE_THREAD": "0"})
    assert rc == 0, err
    assert out.strip() == "False ['MainThread']"


EXIT_WHILE_A_STREAM_IS_RELEASED = """
import numpy as np
import pyaclnn
t = pyaclnn.empty((4,), "float32", stream=pyaclnn.Stream(0))
try:
    t.copy_from(np.ones(5, np.float32), stream=pyaclnn.Stream(0))   # refused; the traceback keeps the stream
except ValueError:
    print("refused")
"""


def test_exit_does_not_wait_on_a_release_that_flushes():
    # A stream whose last reference goes at exit is released by the releaser; its pool's close
    # flushes. Once exit had stopped naming the releaser, that flush waited for the releaser itself,
    # and the process hung for flush's 30 s timeout before exiting.
    code, out, err = run_python(EXIT_WHILE_A_STREAM_IS_RELEASED, timeout=15)
    assert code == 0 and out.strip() == "refused", err


# -- parked releases: pool blocks go back at their pool's next allocation, with no thread hand-off --

def _quiet_pool():
    stream = pyaclnn.runtime.current_stream()
    stream.pool.stats()                         # (a flush: nothing parked or queued from before)
    return stream, stream.pool


_ODD = 7 * 4096 + 512          # a block size no other test leaves in the pool's cache


def test_a_dropped_pool_block_is_parked_and_the_next_allocation_takes_it_back():
    stream, pool = _quiet_pool()
    buf = DeviceBuffer(_ODD, stream)
    ptr, fin, before = buf.ptr, buf._finalizer, pool.in_use_blocks
    del buf
    assert pool._dropped == [fin] and fin.alive     # parked with its pool: nothing ran yet
    assert not _release._visible()                  # and nothing went to the releaser thread
    again = DeviceBuffer(_ODD, stream)              # the allocation releases it first, then reuses it
    assert again.ptr == ptr and not fin.alive and pool._dropped == []
    assert pool.in_use_blocks == before


def test_a_block_dropped_on_another_thread_comes_back_at_the_next_allocation():
    stream, pool = _quiet_pool()
    box = [DeviceBuffer(_ODD, stream)]
    ptr = box[0].ptr
    t = threading.Thread(target=box.clear)          # the last reference dies on that thread
    t.start()
    t.join()
    assert len(pool._dropped) == 1
    assert DeviceBuffer(_ODD, stream).ptr == ptr


def test_flush_and_stats_run_parked_releases():
    stream, pool = _quiet_pool()
    before = pool.in_use_blocks
    bufs = [DeviceBuffer(4096, stream) for _ in range(3)]
    del bufs
    assert pool.in_use_blocks == before + 3         # parked: still counted in use
    assert _release.flush()
    assert pool.in_use_blocks == before and pool._dropped == []
    bufs = [DeviceBuffer(4096, stream) for _ in range(3)]
    del bufs
    assert pool.stats()["in_use_blocks"] == before


def test_a_parked_release_cut_short_is_finished_and_leaves_the_list():
    parked, calls = [], []

    def release():
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise KeyboardInterrupt                 # as a signal handler would, inside the release

    obj = _Owner()
    f = _release.parked_finalizer(obj, parked.append, release)
    del obj
    assert parked == [f] and calls == []
    with pytest.raises(KeyboardInterrupt):
        _release.run_parked(parked)
    assert parked == [f]                            # still listed; the releaser has the release
    assert _release.flush()
    assert calls == ["MainThread", "pyaclnn-releaser"] and not f.alive
    _release.run_parked(parked)                     # runs nothing again, and forgets it
    assert parked == [] and len(calls) == 2


def test_run_parked_leaves_a_finalizer_whose_call_never_started():
    # An interrupt at the entry of the call (before its claim) must not lose the release.
    parked, calls = [], []
    obj = _Owner()
    f = _release.parked_finalizer(obj, parked.append, calls.append, 1)
    del obj
    state = {"n": 0}

    class Boom:
        def __call__(self):
            state["n"] += 1
            raise KeyboardInterrupt

    parked.insert(0, Boom())                         # a call that is cut short before anything ran
    with pytest.raises(KeyboardInterrupt):
        _release.run_parked(parked)
    assert parked[1:] == [f] and f.alive and calls == []
    del parked[0]
    _release.run_parked(parked)
    assert calls == [1] and parked == [] and not f.alive
