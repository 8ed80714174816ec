"""The fuzzer's multi-threaded mode (``fuzz_capi.py --threads N``): races between threads that share
device memory, streams, events and executors.

Each thread binds device 0 and loops over random actions on shared pools: allocate and free blocks,
queue memsets and copies on them, create and destroy (force or not) streams, create, record, wait
on and destroy events, build single-use executors (AmpUpdateScale, on the thread's own tensors over
shared blocks) and launch them -- two threads may take the same one -- and synchronise with a
timeout. A thread takes an object out of its pool (under a lock) before it frees or destroys it, but
other threads may have picked the same object just before and still be using it: that is the race.
The model is never consulted for the outcome, only for which calls are possible.

Issue 27 added three kinds of race:
* event re-recording across streams: besides records, resets and waits on shared events from any
  stream, each thread runs the issue's program on streams, an event and blocks of its own -- a busy
  stream A writes a value and records E, stream B waits for E and copies, then E is recorded again
  on a shared stream (often idle) -- and checks that B copied A's value (a wait is for the record
  latest when it was enqueued);
* tensors shared by all threads, re-described (aclInitTensor) and re-pointed (aclSetRawTensorAddr)
  while other threads run AmpUpdateScale's phase 1 on them (launched later in the normal mode,
  destroyed at once in the TSan-safe mode): phase 1 may refuse, nothing may crash;
* fork() at random points, while the other threads keep calling: the child (a few calls made with no
  Python lock, then os._exit) gets 507899 from every device call (361001 from a launch), can build
  host-side tensors, has a message naming the fork, and exits within seconds; the parent goes on.

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
import os
import random
import threading
import time

from pyaclnn._loader import backend

OK = 0
PARAM_INVALID = 107000          # ACL_ERROR_RT_PARAM_INVALID: freed block, destroyed stream or event
OOM = 207001                    # ACL_ERROR_RT_MEMORY_ALLOCATION
ACLNN_PARAM_INVALID = 161002
ACLNN_RUNTIME_ERROR = 361001
ACLNN_PARAM_NULLPTR = 161001
# phase 1 of a tensor re-described meanwhile: any of its checks may refuse (dtype, shape: 561002 tiling,
# 561003 no kernel for that dtype)
PHASE1_REFUSALS = (OK, ACLNN_PARAM_INVALID, ACLNN_PARAM_NULLPTR, 561002, 561003)
FORKED = 507899                 # ACL_ERROR_RT_DRV_INTERNAL_ERROR: a device call in a forked child
MAX_FORKS = 6                   # forks per run (each costs a few ms, more under a sanitizer)
FORK_SPACING = 3000             # calls between two forks
SHARED_TENSORS = 6
ISSUE27_ACTIONS = ["rerecord"] * 2 + ["reset"] + ["reinit"] * 4 + ["phase1_shared"] * 3 + ["fork"]
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
            "aclInitTensor": [vp, ctypes.POINTER(ctypes.c_int64), u64, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                              ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), u64, vp],
            "aclrtResetEvent": [vp, vp], "aclrtSynchronizeStream": [vp],
            "pyaclnn_stub_stream_submit": [ctypes.c_char_p, vp, vp, vp, vp],
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
        libc = ctypes.CDLL(None)
        self.usleep = ctypes.cast(libc.usleep, ctypes.c_void_p)   # a C task: usleep(arg microseconds)


class _Shared:
    """Pools of shared objects; the lock guards the lists only, never a C call."""

    def __init__(self):
        self.lock = threading.Lock()
        self.blocks: list[int] = []
        self.streams: list[int] = []
        self.events: list[int] = []
        self.executors: list = []
        self.tensors: list[int] = []    # re-described and re-pointed by any thread (never destroyed)
        self.forks = 0
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

    # ---- the races of issue 27 ---------------------------------------------------------------------
    def _own(self) -> dict | None:
        """A thread's own streams A and B, event E and blocks (the re-record check)."""
        c, p = self.c, ctypes.c_void_p()
        own: dict = {}
        for key, make in (("A", c.aclrtCreateStream), ("B", c.aclrtCreateStream), ("E", c.aclrtCreateEvent)):
            if self.check(key, make(ctypes.byref(p)), (OK,)) != OK:
                return None
            own[key] = p.value
        for key in ("src", "dst"):
            if self.check("aclrtMalloc", c.aclrtMalloc(ctypes.byref(p), BLOCK, 0), (OK, OOM)) != OK:
                return None
            own[key] = p.value
        own["host"] = ctypes.create_string_buffer(BLOCK)
        return own

    def _release_own(self, own: dict | None) -> None:
        if not own:
            return
        c = self.c
        for key, release in (("A", c.aclrtDestroyStream), ("B", c.aclrtDestroyStream), ("E", c.aclrtDestroyEvent),
                             ("src", c.aclrtFree), ("dst", c.aclrtFree)):
            if key in own:
                self.check(f"release {key}", release(own[key]), (OK,))

    def _rerecord(self, rng, own: dict | None, other) -> None:
        """The issue's program on this thread's own objects; E is recorded again on `other` (a shared
        stream, or the NULL stream) after B's wait: B must still copy what busy A wrote."""
        if not own:
            return
        c = self.c
        A, B, E = own["A"], own["B"], own["E"]
        v = rng.randrange(1, 256)
        self.check("pyaclnn_stub_stream_submit", c.pyaclnn_stub_stream_submit(b"fuzz", A, c.usleep, None,
                                                                              rng.choice((0, 300, 2000))), (OK,))
        self.check("aclrtMemsetAsync", c.aclrtMemsetAsync(own["src"], BLOCK, v, BLOCK, A), (OK,))
        self.check("aclrtRecordEvent", c.aclrtRecordEvent(E, A), (OK,))
        self.check("aclrtStreamWaitEvent", c.aclrtStreamWaitEvent(B, E), (OK,))
        self.check("aclrtMemcpyAsync", c.aclrtMemcpyAsync(own["dst"], BLOCK, own["src"], BLOCK, 3, B), (OK,))
        self.check("aclrtRecordEvent", c.aclrtRecordEvent(E, other), (OK, PARAM_INVALID))   # other destroyed
        if self.check("sync", c.aclrtSynchronizeStreamWithTimeout(B, SYNC_TIMEOUT_MS), (OK, STREAM_SYNC_TIMEOUT)):
            return
        host = own["host"]
        self.check("aclrtMemcpy", c.aclrtMemcpy(host, BLOCK, own["dst"], BLOCK, 2), (OK,))
        if host.raw != bytes([v]) * BLOCK:
            self.violate(f"stream B copied {host.raw[0]}, not the {v} busy stream A wrote before recording the "
                         "event B waited for: a later record released the wait")

    def _shared_tensors(self) -> None:
        c, sh = self.c, self.shared
        one = (ctypes.c_int64 * 1)(1)
        for i in range(SHARED_TENSORS):
            t = c.aclCreateTensor(one, 1, (0, 3, 0)[i % 3], one, 0, 2, one, 1, None)
            if t:
                sh.tensors.append(t)

    def _reinit(self, rng) -> None:
        """aclInitTensor / aclSetRawTensorAddr on a shared tensor, racing other threads' phase 1."""
        c, sh = self.c, self.shared
        t = sh.pick(rng, sh.tensors)
        if not t:
            return
        block = sh.pick(rng, sh.blocks) if rng.random() < 0.8 else None
        if rng.random() < 0.4:
            self.check("aclSetRawTensorAddr", c.aclSetRawTensorAddr(t, block), (OK,))
            return
        dims = rng.choice(((1,), (1,), (2,), (0,), (1, 1), (-1,)))   # -1: refused, the tensor stays as it was
        shape = (ctypes.c_int64 * len(dims))(*dims)
        strides = (ctypes.c_int64 * len(dims))(*([1] * len(dims)))
        dtype = rng.choice((0, 0, 3, 1))                              # float32, int32, float16
        status = c.aclInitTensor(t, shape, len(dims), dtype, strides, rng.choice((0, 0, 1)), 2, shape, len(dims),
                                 block)
        self.check("aclInitTensor", status, (OK, ACLNN_PARAM_INVALID))

    def _phase1_shared(self, rng, launchable: bool) -> None:
        """AmpUpdateScale's phase 1 on shared tensors that other threads re-describe meanwhile."""
        c, sh = self.c, self.shared
        ts = [sh.pick(rng, sh.tensors) for _ in range(3)]
        if not all(ts):
            return
        ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
        status = c.aclnnAmpUpdateScaleGetWorkspaceSize(ts[0], ts[1], ts[2], 2.0, 0.5, 10, ts[0], ts[1],
                                                       ctypes.byref(ws), ctypes.byref(ex))
        if self.check("aclnnAmpUpdateScaleGetWorkspaceSize", status, PHASE1_REFUSALS) == OK:
            if not (launchable and sh.put(sh.executors, ex.value, 8)):
                self.check("aclDestroyAclOpExecutor", c.aclDestroyAclOpExecutor(ex.value), (OK,))

    def _fork(self, rng, stream) -> None:
        """fork() now, whatever the other threads are doing; the child checks itself and leaves."""
        sh = self.shared
        with sh.lock:   # spread over the run: fork k once k * FORK_SPACING calls have been made
            if sh.forks >= MAX_FORKS or self.calls < sh.forks * FORK_SPACING:
                return
            sh.forks += 1
            block = rng.choice(sh.blocks) if sh.blocks else None
            event = rng.choice(sh.events) if sh.events else None
            executor = rng.choice(sh.executors) if sh.executors and not self.tsan_safe else None
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child: only this thread exists; no Python lock of the parent is touched
            os.close(r)
            self._child(w, block, stream, event, executor)
        os.close(w)
        deadline = time.monotonic() + 20
        status = None
        while status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
            elif time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                self.violate("a forked child did not exit within 20 s (a call waited for the parent's threads)")
                break
            else:
                time.sleep(0.005)
        report = b""
        while chunk := os.read(r, 4096):
            report += chunk
        os.close(r)
        if status is not None and (not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0):
            self.violate(f"forked child: status {status}: {report.decode(errors='replace')}")

    def _child(self, fd: int, block, stream, event, executor) -> None:
        c = self.c
        bad: list[str] = []
        started = time.monotonic()
        p = ctypes.c_void_p()

        def expect(name: str, status: int, allowed: tuple) -> None:
            if status not in allowed:
                bad.append(f"{name} returned {status}, expected {allowed}")

        try:
            expect("aclrtSynchronizeDeviceWithTimeout", c.aclrtSynchronizeDeviceWithTimeout(1000), (FORKED,))
            expect("aclrtSynchronizeStream", c.aclrtSynchronizeStream(stream), (FORKED,))
            expect("aclrtMalloc", c.aclrtMalloc(ctypes.byref(p), 64, 0), (FORKED,))
            expect("aclrtCreateStream", c.aclrtCreateStream(ctypes.byref(p)), (FORKED,))
            if block:
                expect("aclrtMemsetAsync", c.aclrtMemsetAsync(block, 64, 0, 64, stream), (FORKED,))
                expect("aclrtFree", c.aclrtFree(block), (FORKED,))
            if event:
                expect("aclrtRecordEvent", c.aclrtRecordEvent(event, stream), (FORKED,))
                expect("aclrtStreamWaitEvent", c.aclrtStreamWaitEvent(stream, event), (FORKED,))
            if executor:
                expect("aclnnAmpUpdateScale", c.aclnnAmpUpdateScale(None, 0, executor, stream), (ACLNN_RUNTIME_ERROR,))
            msg = c.aclGetRecentErrMsg() or b""
            if b"forked child" not in msg:
                bad.append(f"no message about the fork: {msg[:200]!r}")
            one = (ctypes.c_int64 * 1)(1)
            t = c.aclCreateTensor(one, 1, 0, one, 0, 2, one, 1, None)   # host-side objects still work
            if not t:
                bad.append("aclCreateTensor failed in the child")
            else:
                expect("aclDestroyTensor", c.aclDestroyTensor(t), (OK,))
            expect("aclrtResetDevice", c.aclrtResetDevice(0), (FORKED,))
            expect("aclrtSetDevice", c.aclrtSetDevice(0), (FORKED,))
            if time.monotonic() - started > 5:
                bad.append(f"the child's calls took {time.monotonic() - started:.1f} s")
        except BaseException as e:   # noqa: BLE001 -- whatever happens, the child must leave
            bad.append(f"exception {e!r}")
        os.write(fd, "\n".join(bad).encode())
        os._exit(1 if bad else 0)

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
            ["phase1"] * 3 + ["launch"] * 4 + ["sync"] + ISSUE27_ACTIONS
        own = self._own()
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
            else:
                self._issue27(a, rng, own, stream, launchable=True)
            c.aclGetRecentErrMsg()   # the next call starts clean
        status = c.aclrtSynchronizeDeviceWithTimeout(SYNC_TIMEOUT_MS)
        self.check("sync", status, (OK, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))
        self._release_own(own)
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
            ["phase1"] * 3 + ["launch"] * 4 + ["sync"] + ["read"] * 2 + ISSUE27_ACTIONS
        own = self._own()
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
            else:   # (executors of shared tensors are not launched: their bytes belong to no lane)
                self._issue27(a, rng, own, stream, launchable=False)
            c.aclGetRecentErrMsg()   # the next call starts clean
        status = c.aclrtSynchronizeDeviceWithTimeout(SYNC_TIMEOUT_MS)
        self.check("sync", status, (OK, AICORE_EXCEPTION, STREAM_SYNC_TIMEOUT))
        self._release_own(own)

    def _issue27(self, a: str, rng, own, stream, launchable: bool) -> None:
        c, sh = self.c, self.shared
        if a == "rerecord":
            self._rerecord(rng, own, stream)
        elif a == "reset":
            e = sh.pick(rng, sh.events)
            if e:
                self.check("aclrtResetEvent", c.aclrtResetEvent(e, stream), (OK, PARAM_INVALID))
        elif a == "reinit":
            self._reinit(rng)
        elif a == "phase1_shared":
            self._phase1_shared(rng, launchable)
        elif a == "fork":
            self._fork(rng, stream)

    # ---- the run -------------------------------------------------------------------------------
    def run(self) -> None:
        import sys
        sys.setswitchinterval(1e-5)   # switch threads often: more interleavings of their C calls
        self._shared_tensors()
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
        for t in sh.retired_tensors + sh.tensors:
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
