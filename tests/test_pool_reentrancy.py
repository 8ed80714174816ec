"""A buffer's finalizer may run inside the memory pool's own critical section (the garbage collector
runs finalizers at any allocation, e.g. while ``allocate_into`` extends its cell). Such a nested free
must neither deadlock on the pool's lock nor touch the free lists mid-section; it is applied by the
pool's next call. (Seen as a hang of the whole suite: MemoryPool.free inside allocate_into.)
"""
from __future__ import annotations

import threading

import pyaclnn
from pyaclnn.runtime import current_stream


def test_free_from_inside_a_pool_section_is_parked_then_applied():
    pool = current_stream().pool
    cell: list = []
    size = pool.allocate_into(4096, cell)
    ptr = cell[0]
    cell2: list = []
    pool.allocate_into(4096, cell2)
    ptr2 = cell2[0]
    before = pool.stats()      # (both blocks in use)
    finished = threading.Event()

    def nested():
        with pool._lock:               # what a GC-run finalizer meets inside allocate_into
            pool.free(ptr, size)       # must return at once, not wait for the lock it holds
            pool.free(ptr2, size)      # a second nested free while one is parked: no livelock
            assert pool.stats()["in_use_blocks"] == before["in_use_blocks"]   # not applied yet
        finished.set()

    worker = threading.Thread(target=nested, daemon=True)
    worker.start()
    worker.join(10)
    assert finished.is_set(), "a free nested in the pool's section deadlocked"
    t = pyaclnn.empty((4,), "float32")           # the next call applies the parked free
    after = pool.stats()
    assert after["in_use_blocks"] == before["in_use_blocks"] - 1   # -2 parked frees, +1 for t
    t.close()
