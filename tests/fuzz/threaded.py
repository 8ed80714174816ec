"""The fuzzer's multi-threaded mode (``fuzz_capi.py --threads N``): races between threads that share
device memory, streams, events and executors.

Each thread binds device 0 and loops over random actions on shared pools: allocate and free blocks,
queue memsets and copies on them, create and destroy (force or not) streams, create, record, wait
on and destroy events, build single-use executors (AmpUpdateScale, on the thread's own tensors over
shared blocks) and launch them -- two threads may take the same one -- and synchronise with a
timeout. A thread takes an object out of its pool (under a lock) before it frees or destroys it, but
other threads may have picked the same object just before and still be using it: that is the race.
The model is never consulted for the outcome, only for which calls are possible.

Promises checked (violations are printed and counted like the single-threaded fuzzer's):
* every status is 0 or one this call may return here (a freed block or a destroyed stream, event or
  executor is refused, never a crash);
* frees and destroys of objects this thread took out of the pool succeed;
* exactly the statuses a launch may give: 0, consumed/foreign executor (161002), a runtime refusal
  (361001: stream destroyed meanwhile, workspace);
* no synchronisation times out (a hang: a wait on a record that was never queued) and the final
  device synchronisation drains;
* the process survives (a heap use-after-free is a crash, or an ASan/TSan report in CI).

Calls go straight to the C functions through ctypes (which releases the GIL), so the threads' C calls
really overlap.

TSan-safe mode (``--tsan-safe``; on by itself when ThreadSanitizer is loaded): the same sharing and
the same races of frees, destroys, records and launches against each other, but the emulated
program has no data race of its own on device bytes, so a ThreadSanitizer report is always a bug of
the stub. Every block is cut into lanes of LANE bytes; a stream owns one lane (the NULL stream lane
0) and queued work writes and reads only its stream's lane of any block: memsets and copies on
stream S touch lane(S) of their blocks, and an executor is built (fresh tensors) for one stream, on
that stream's lane, and launched only on that stream. Work on one stream runs in order, so no two
tasks that may run at once touch the same bytes. A destroyed stream's lane is retired, not reused,
until the next round's drain (a stale handle may have been reused by a new stream: work on it still
writes only the retired lane, and only through that handle, whose streams run one after the other
since aclrtDestroyStream waits for its work). Executors of retired lanes are destroyed at the drain,
and tensors only at the drain (a launch racing another may still read them). The last lane is never
written by queued work: synchronous device-to-host reads (``read``) touch only it.
"""
from __future__ import annotations

import ctypes
import random
import threading
import time

from pyaclnn._loader import backend

OK = 0
PARAM_INVALID = 107000          # ACL_ERROR_RT_PARAM_INVALID: freed block, destroyed stream or event
OOM = 207001                    # ACL_ERROR_RT_MEMORY_ALLOCATION
ACLNN_PARAM_INVALID = 161002
ACLNN_RUNTIME_ERROR = 361001
STREAM_SYNC_TIMEOUT = 507046
AICORE_EXCEPTION = 507015       # a kernel found its tensor's memory freed under it (asynchronous)
SYNC_TIMEOUT_MS = 20000
BLOCK = 4096
ROUND = 32
LANE = 64                       # TSan-safe mode: bytes of a block one stream's work may touch
LANES = BLOCK // LANE           # lane 0: the NULL stream; lane LANES - 1: host reads only
HOST_LANE = LANES - 1


class _C:
    """The C functions used, with their ctypes signatures."""

    def __init__(self):
        vp, sz, i32, u64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32, ctypes.c_uint64
        b = backend()
        spec = {
            "aclrtSetDevice": [i32], "aclrtResetDevice": [i32],
            "aclrtMalloc": [ctypes.POINTER(vp), sz, ctypes.c_int], "aclrtFree": [vp],
            "aclrtMemsetAsync": [vp, sz, i32, sz, vp],
            "aclrtMemcpyAsync": [vp, sz, vp, sz, ctypes.c_int, vp],
            "aclrtMemcpy": [vp, sz, vp, sz, ctypes.c_int],
            "aclrtCreateStream": [ctypes.POINTER(vp)], "aclrtDestroyStream": [vp],
            "aclrtDestroyStreamForce": [vp], "aclrtSynchronizeStreamWithTimeout": [vp, i32],
            "aclrtSynchronizeDeviceWithTimeout": [i32],
            "aclrtCreateEvent": [ctypes.POINTER(vp)], "aclrtDestroyEvent": [vp],
            "aclrtRecordEvent": [vp, vp], "aclrtStreamWaitEvent": [vp, vp],
            "aclCreateTensor": [ctypes.POINTER(ctypes.c_int64), u64, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                                ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), u64, vp],
            "aclDestroyTensor": [vp], "aclSetRawTensorAddr": [vp, vp],
            "aclnnAmpUpdateScaleGetWorkspaceSize": [vp, vp, vp, ctypes.c_double, ctypes.c_double, ctypes.c_int64,
                                                    vp, vp, ctypes.POINTER(u64), ctypes.POINTER(vp)],
            "aclnnAmpUpdateScale": [vp, u64, vp, vp],
            "aclDestroyAclOpExecutor": [vp],
            "aclGetRecentErrMsg": [],
        }
        for name, args in spec.items():
            fn = b.symbol(name)
            fn.argtypes = args
            fn.restype = ctypes.c_char_p if name == "aclGetRecentErrMsg" else \
                (vp if name == "aclCreateTensor" else ctypes.c_int)
            setattr(self, name, fn)


class _Shared:
    """Pools of shared objects; the lock guards the lists only, never a C call."""

    def __init__(self):
        self.lock = threading.Lock()
        self.blocks: list[int] = []
        self.streams: list[int] = []
        self.events: list[int] = []
        self.executors: list = []
        # TSan-safe mode: streams are (handle, lane), executors (handle, stream, lane, tensors)
        self.free_lanes = list(range(HOST_LANE - 1, 0, -1))
        self.retired_lanes: list[int] = []
        self.retired_tensors: list[int] = []

    def pick(self, rng, pool):
        with self.lock:
            return rng.choice(pool) if pool else None

    def take(self, rng, pool):
        with self.lock:
            return pool.pop(rng.randrange(len(pool))) if pool else None

    def put(self, pool, item, cap):
        with self.lock:
            if len(pool) < cap:
                pool.append(item)
                return True
        return False


class ThreadedRun:
    def __init__(self, seed: int, threads: int, calls: int | None, seconds: float | None, tsan_safe: bool = False):
        self.seed, self.n_threads, self.limit, self.seconds = seed, threads, calls, seconds
        self.tsan_safe = tsan_safe
        self.c = _C()
        self.shared = _Shared()
        self.calls = 0
        self.violations: list[str] = []
        self._count_lock = threading.Lock()
        self._deadline = time.monotonic() + seconds if seconds else None
        # Rounds: every ROUND calls a thread waits for the others and the device is drained, so the
        # next calls race on idle streams (where a free is not held back by queued work).
        self._round = threading.Barrier(threads, action=self._drain, timeout=SYNC_TIMEOUT_MS / 1000 + 60)
        self._stopping = threading.Event()

    def _drain(self) -> None:
        self.check("sync", self.c.aclrtSynchronizeDeviceWithTimeout(SYNC_TIMEOUT_MS),
                   (OK, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))
        if self.tsan_safe:
            self._recycle_lanes()
        self.c.aclGetRecentErrMsg()

    def _recycle_lanes(self) -> None:
        """TSan-safe mode, at a drain (every thread waits at the barrier, the device is idle):
        executors bound to retired lanes go, retired lanes are free again, retired tensors go."""
        c, sh = self.c, self.shared
        with sh.lock:
            retired = set(sh.retired_lanes)
            gone = [x for x in sh.executors if x[2] in retired]
            sh.executors = [x for x in sh.executors if x[2] not in retired]
            sh.free_lanes.extend(sh.retired_lanes)
            sh.retired_lanes.clear()
            tensors, sh.retired_tensors = sh.retired_tensors, []
        for ex, _s, _lane, ts in gone:
            c.aclDestroyAclOpExecutor(ex)
            tensors.extend(ts)
        for t in tensors:
            c.aclDestroyTensor(t)

    # ---- checking ----------------------------------------------------------------------------
    def violate(self, what: str) -> None:
        with self._count_lock:
            self.violations.append(f"[{threading.current_thread().name}] {what}")

    def check(self, name: str, status: int, allowed: tuple) -> int:
        if status not in allowed:
            msg = self.c.aclGetRecentErrMsg()
            self.violate(f"{name} returned {status} (allowed here: {allowed}): {msg!r}")
        elif name == "sync" and status == STREAM_SYNC_TIMEOUT:
            self.violate("a synchronisation timed out: a stream never drained (hang)")
        return status

    def _more(self) -> bool:
        with self._count_lock:
            self.calls += 1
            n = self.calls
        if self.violations:
            return False
        if self.limit is not None and n > self.limit:
            return False
        return self._deadline is None or time.monotonic() < self._deadline

    # ---- one thread ----------------------------------------------------------------------------
    def _next_round(self, n: int) -> bool:
        """Meet the others every ROUND calls (the drain); False when this thread is done."""
        if n % ROUND == 0 and not self._stopping.is_set():
            try:
                self._round.wait()
            except threading.BrokenBarrierError:
                pass
        if not self._more():
            self._stopping.set()
            self._round.abort()   # the others are not waiting for this thread any more
            return False
        return True

    def _worker(self, index: int) -> None:
        if self.tsan_safe:
            return self._worker_tsan_safe(index)
        c, sh = self.c, self.shared
        rng = random.Random(self.seed * 1000 + index)
        self.check("aclrtSetDevice", c.aclrtSetDevice(0), (OK,))
        shape = (ctypes.c_int64 * 1)(1)
        strides = (ctypes.c_int64 * 1)(1)
        tensors = [c.aclCreateTensor(shape, 1, dt, strides, 0, 2, shape, 1, None) for dt in (0, 3, 0)]
        p = ctypes.c_void_p()
        ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
        actions = ["malloc"] * 3 + ["free"] * 3 + ["memset"] * 6 + ["copy"] * 4 + ["stream"] * 2 + \
            ["destroy_stream"] * 2 + ["event"] + ["record"] * 4 + ["wait"] * 4 + ["destroy_event"] + \
            ["phase1"] * 3 + ["launch"] * 4 + ["sync"]
        n = 0
        while True:
            n += 1
            if not self._next_round(n):
                break
            a = rng.choice(actions)
            stream = sh.pick(rng, sh.streams)          # None: the default stream
            if a == "malloc":
                if self.check("aclrtMalloc", c.aclrtMalloc(ctypes.byref(p), BLOCK, 0), (OK, OOM)) == OK:
                    if not sh.put(sh.blocks, p.value, 32):
                        self.check("aclrtFree", c.aclrtFree(p.value), (OK,))
            elif a == "free":
                block = sh.take(rng, sh.blocks)
                if block:
                    self.check("aclrtFree", c.aclrtFree(block), (OK,))
            elif a == "memset":
                block = sh.pick(rng, sh.blocks)
                if block:
                    self.check("aclrtMemsetAsync", c.aclrtMemsetAsync(block, BLOCK, rng.randrange(256), BLOCK, stream),
                               (OK, PARAM_INVALID))
            elif a == "copy":
                dst, src = sh.pick(rng, sh.blocks), sh.pick(rng, sh.blocks)
                if dst and src:
                    self.check("aclrtMemcpyAsync", c.aclrtMemcpyAsync(dst, BLOCK, src, BLOCK, 3, stream),
                               (OK, PARAM_INVALID))
            elif a == "stream":
                if self.check("aclrtCreateStream", c.aclrtCreateStream(ctypes.byref(p)), (OK,)) == OK:
                    if not sh.put(sh.streams, p.value, 6):
                        self.check("aclrtDestroyStream", c.aclrtDestroyStream(p.value), (OK,))
            elif a == "destroy_stream":
                s = sh.take(rng, sh.streams)
                if s:
                    destroy = c.aclrtDestroyStreamForce if rng.random() < 0.5 else c.aclrtDestroyStream
                    self.check("aclrtDestroyStream", destroy(s), (OK,))
            elif a == "event":
                if self.check("aclrtCreateEvent", c.aclrtCreateEvent(ctypes.byref(p)), (OK,)) == OK:
                    if not sh.put(sh.events, p.value, 8):
                        self.check("aclrtDestroyEvent", c.aclrtDestroyEvent(p.value), (OK,))
            elif a == "destroy_event":
                e = sh.take(rng, sh.events)
                if e:
                    self.check("aclrtDestroyEvent", c.aclrtDestroyEvent(e), (OK,))
            elif a in ("record", "wait"):
                e = sh.pick(rng, sh.events)
                if e:
                    status = c.aclrtRecordEvent(e, stream) if a == "record" else c.aclrtStreamWaitEvent(stream, e)
                    self.check(a, status, (OK, PARAM_INVALID))
            elif a == "phase1":
                for t in tensors:
                    block = sh.pick(rng, sh.blocks)
                    c.aclSetRawTensorAddr(t, block)
                status = c.aclnnAmpUpdateScaleGetWorkspaceSize(tensors[0], tensors[1], tensors[2], 2.0, 0.5, 10,
                                                               tensors[0], tensors[1], ctypes.byref(ws),
                                                               ctypes.byref(ex))
                if self.check("aclnnAmpUpdateScaleGetWorkspaceSize", status,
                              (OK, ACLNN_PARAM_INVALID, 161001)) == OK:
                    if not sh.put(sh.executors, ex.value, 8):
                        self.check("aclDestroyAclOpExecutor", c.aclDestroyAclOpExecutor(ex.value), (OK,))
            elif a == "launch":
                # Picked, not taken: another thread may launch (or destroy) the same executor now.
                e = sh.pick(rng, sh.executors)
                if e:
                    status = c.aclnnAmpUpdateScale(None, 0, e, stream)
                    self.check("aclnnAmpUpdateScale", status, (OK, ACLNN_PARAM_INVALID, ACLNN_RUNTIME_ERROR))
                    with sh.lock:
                        if e in sh.executors:
                            sh.executors.remove(e)   # consumed (by this launch or a concurrent one)
            elif a == "sync":
                status = c.aclrtSynchronizeStreamWithTimeout(stream, SYNC_TIMEOUT_MS)
                self.check("sync", status, (OK, PARAM_INVALID, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))
            c.aclGetRecentErrMsg()   # the next call starts clean
        status = c.aclrtSynchronizeDeviceWithTimeout(SYNC_TIMEOUT_MS)
        self.check("sync", status, (OK, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))
        for t in tensors:
            c.aclDestroyTensor(t)

    def _worker_tsan_safe(self, index: int) -> None:
        """The same races, with every device byte touched by one stream's work only (see the module
        docstring)."""
        c, sh = self.c, self.shared
        rng = random.Random(self.seed * 1000 + index)
        self.check("aclrtSetDevice", c.aclrtSetDevice(0), (OK,))
        shape = (ctypes.c_int64 * 1)(1)
        p = ctypes.c_void_p()
        ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
        host = ctypes.create_string_buffer(LANE)
        actions = ["malloc"] * 3 + ["free"] * 3 + ["memset"] * 6 + ["copy"] * 4 + ["stream"] * 2 + \
            ["destroy_stream"] * 2 + ["event"] + ["record"] * 4 + ["wait"] * 4 + ["destroy_event"] + \
            ["phase1"] * 3 + ["launch"] * 4 + ["sync"] + ["read"] * 2
        n = 0
        while True:
            n += 1
            if not self._next_round(n):
                break
            a = rng.choice(actions)
            picked = sh.pick(rng, sh.streams)            # (handle, lane); None: the NULL stream, lane 0
            stream, lane = picked if picked else (None, 0)
            off = lane * LANE
            if a == "malloc":
                if self.check("aclrtMalloc", c.aclrtMalloc(ctypes.byref(p), BLOCK, 0), (OK, OOM)) == OK:
                    if not sh.put(sh.blocks, p.value, 32):
                        self.check("aclrtFree", c.aclrtFree(p.value), (OK,))
            elif a == "free":
                block = sh.take(rng, sh.blocks)
                if block:
                    self.check("aclrtFree", c.aclrtFree(block), (OK,))
            elif a == "memset":
                block = sh.pick(rng, sh.blocks)
                if block:
                    self.check("aclrtMemsetAsync", c.aclrtMemsetAsync(block + off, LANE, rng.randrange(256), LANE,
                                                                      stream), (OK, PARAM_INVALID))
            elif a == "copy":
                dst, src = sh.pick(rng, sh.blocks), sh.pick(rng, sh.blocks)
                if dst and src:
                    self.check("aclrtMemcpyAsync", c.aclrtMemcpyAsync(dst + off, LANE, src + off, LANE, 3, stream),
                               (OK, PARAM_INVALID))
            elif a == "read":       # synchronous, of the lane no queued work writes
                block = sh.pick(rng, sh.blocks)
                if block:
                    self.check("aclrtMemcpy", c.aclrtMemcpy(host, LANE, block + HOST_LANE * LANE, LANE, 2),
                               (OK, PARAM_INVALID))
            elif a == "stream":
                with sh.lock:
                    new_lane = sh.free_lanes.pop() if sh.free_lanes else None
                if new_lane is not None:
                    if self.check("aclrtCreateStream", c.aclrtCreateStream(ctypes.byref(p)), (OK,)) == OK:
                        if sh.put(sh.streams, (p.value, new_lane), 6):
                            new_lane = None
                        else:       # never shared, no work queued: its lane is free at once
                            self.check("aclrtDestroyStream", c.aclrtDestroyStream(p.value), (OK,))
                    if new_lane is not None:
                        with sh.lock:
                            sh.free_lanes.append(new_lane)
            elif a == "destroy_stream":
                taken = sh.take(rng, sh.streams)
                if taken:
                    destroy = c.aclrtDestroyStreamForce if rng.random() < 0.5 else c.aclrtDestroyStream
                    self.check("aclrtDestroyStream", destroy(taken[0]), (OK,))
                    with sh.lock:
                        sh.retired_lanes.append(taken[1])
            elif a == "event":
                if self.check("aclrtCreateEvent", c.aclrtCreateEvent(ctypes.byref(p)), (OK,)) == OK:
                    if not sh.put(sh.events, p.value, 8):
                        self.check("aclrtDestroyEvent", c.aclrtDestroyEvent(p.value), (OK,))
            elif a == "destroy_event":
                e = sh.take(rng, sh.events)
                if e:
                    self.check("aclrtDestroyEvent", c.aclrtDestroyEvent(e), (OK,))
            elif a in ("record", "wait"):
                e = sh.pick(rng, sh.events)
                if e:
                    status = c.aclrtRecordEvent(e, stream) if a == "record" else c.aclrtStreamWaitEvent(stream, e)
                    self.check(a, status, (OK, PARAM_INVALID))
            elif a == "phase1":     # an executor for `stream`, on its lane, with tensors of its own
                tensors = []
                for dt in (0, 3, 0):
                    block = sh.pick(rng, sh.blocks)
                    tensors.append(c.aclCreateTensor(shape, 1, dt, shape, 0, 2, shape, 1,
                                                     block + off if block else None))
                status = c.aclnnAmpUpdateScaleGetWorkspaceSize(tensors[0], tensors[1], tensors[2], 2.0, 0.5, 10,
                                                               tensors[0], tensors[1], ctypes.byref(ws),
                                                               ctypes.byref(ex))
                if self.check("aclnnAmpUpdateScaleGetWorkspaceSize", status,
                              (OK, ACLNN_PARAM_INVALID, 161001)) == OK:
                    if sh.put(sh.executors, (ex.value, stream, lane, tensors), 8):
                        tensors = []
                    else:
                        self.check("aclDestroyAclOpExecutor", c.aclDestroyAclOpExecutor(ex.value), (OK,))
                for t in tensors:
                    c.aclDestroyTensor(t)
            elif a == "launch":
                # Picked, not taken: another thread may launch (or destroy) the same executor now,
                # always on the stream it was built for.
                x = sh.pick(rng, sh.executors)
                if x:
                    status = c.aclnnAmpUpdateScale(None, 0, x[0], x[1])
                    self.check("aclnnAmpUpdateScale", status, (OK, ACLNN_PARAM_INVALID, ACLNN_RUNTIME_ERROR))
                    with sh.lock:
                        if x in sh.executors:
                            sh.executors.remove(x)   # consumed (by this launch or a concurrent one)
                            sh.retired_tensors.extend(x[3])
            elif a == "sync":
                status = c.aclrtSynchronizeStreamWithTimeout(stream, SYNC_TIMEOUT_MS)
                self.check("sync", status, (OK, PARAM_INVALID, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))
            c.aclGetRecentErrMsg()   # the next call starts clean
        status = c.aclrtSynchronizeDeviceWithTimeout(SYNC_TIMEOUT_MS)
        self.check("sync", status, (OK, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))

    # ---- the run -------------------------------------------------------------------------------
    def run(self) -> None:
        import sys
        sys.setswitchinterval(1e-5)   # switch threads often: more interleavings of their C calls
        threads = [threading.Thread(target=self._worker, args=(i,), name=f"fuzz-{i}", daemon=True)
                   for i in range(self.n_threads)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + (self.seconds or 0) + 2 * SYNC_TIMEOUT_MS / 1000 + 30
        for t in threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                self.violate(f"{t.name} is still running: a call hangs (a stream that never drains)")
        if not self.violations:   # (after a hang, releasing could block on the stuck stream too)
            self._release()

    def _release(self) -> None:
        c, sh = self.c, self.shared
        c.aclrtSetDevice(0)
        self.check("sync", c.aclrtSynchronizeDeviceWithTimeout(SYNC_TIMEOUT_MS),
                   (OK, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))
        for e in sh.executors:
            # may have been consumed by a launch racing the pool update
            c.aclDestroyAclOpExecutor(e[0] if self.tsan_safe else e)
            if self.tsan_safe:
                sh.retired_tensors.extend(e[3])
        for t in sh.retired_tensors:
            c.aclDestroyTensor(t)
        for s in sh.streams:
            self.check("aclrtDestroyStream", c.aclrtDestroyStream(s[0] if self.tsan_safe else s), (OK,))
        for e in sh.events:
            self.check("aclrtDestroyEvent", c.aclrtDestroyEvent(e), (OK,))
        for b in sh.blocks:
            self.check("aclrtFree", c.aclrtFree(b), (OK,))
        c.aclGetRecentErrMsg()


def tsan_loaded() -> bool:
    """Is ThreadSanitizer's runtime mapped into this process (LD_PRELOAD'ed or linked)?"""
    try:
        with open("/proc/self/maps") as maps:
            return any("libtsan" in line for line in maps)
    except OSError:
        return False
