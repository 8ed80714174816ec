"""Stream-ordered reuse of the small device tensors the host-data boundary makes for each call.

A friendly call at decode shapes makes a handful of outputs (and, for numpy, input copies) of a few KiB
each; building each one afresh -- a pool block, a Tensor with its checks and two finalizers, an
``aclCreateTensor`` -- costs more than the kernel.  :class:`ReuseCache` keeps such tensors per stream
by layout (shape, dtype) and hands one out again once nobody else refers to it: the caller dropped
the result (numpy results are host copies, so their device tensors are always dropped) and no view
of its memory is open.  The memory and the ``aclTensor`` descriptor are then reused as they are.

Why this is safe without synchronisation: a cached tensor belongs to one stream, and everything that
wrote or read it was queued on that stream, so work queued later runs after it -- the same rule as
the stream's memory pool (:class:`pyaclnn.runtime.MemoryPool`).

Bounds: only tensors of at most :data:`MAX_BYTES` are kept (large tensors go back to the pool, which
also returns memory beyond its limit to the device), at most :data:`PER_LAYOUT` per layout and
:data:`MAX_LAYOUTS` layouts per stream, so a stream holds at most ``MAX_BYTES * PER_LAYOUT *
MAX_LAYOUTS`` (64 MiB) here.  ``pyaclnn.ops.clear_executor_cache()`` and ``pyaclnn.empty_cache()``
drop them.
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict

from .runtime import Stream, holds_forever, on_empty_cache
from .tensor import Tensor, empty

MAX_BYTES = 1 << 20         # larger tensors are not kept (their cost is the kernel's, not ours)
PER_LAYOUT = 8              # tensors kept per (shape, dtype): a call may need several alike
MAX_LAYOUTS = 8             # layouts kept per stream (least recently used go first)

_getrefcount = sys.getrefcount


def _free_refs() -> int:
    """What getrefcount reports, in ReuseCache.take's loop, for an object only the cache's list
    holds (its slot, the loop variable, the argument -- measured rather than assumed, since how the
    interpreter counts a loop variable differs between Python versions)."""
    probe = [object()]
    for t in probe:
        return _getrefcount(t)
    raise AssertionError("unreachable")


_FREE_REFS = _free_refs()


class ReuseCache:
    """The reusable tensors of one stream, by (shape, aclDataType)."""
    __slots__ = ("_layouts", "_lock", "hits", "misses")

    def __init__(self):
        self._layouts: OrderedDict[tuple, list] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    # The lock is never waited for: a call that finds it taken (another thread, or -- on CPython 3.13,
    # measured -- a KeyboardInterrupt that landed between the acquire and the block that releases it,
    # leaving it held) just does not reuse, rather than waiting forever.
    def take(self, shape: tuple, acl_dtype: int, stream: Stream) -> Tensor:
        """A contiguous tensor of this layout on ``stream``: a free cached one, else a new one."""
        key = (shape, acl_dtype)
        if self._lock.acquire(blocking=False):
            try:
                entries = self._layouts.get(key)
                if entries is not None:
                    for t in entries:
                        if _getrefcount(t) == _FREE_REFS and t._ptr is not None and t._mem.views == 1:
                            self.hits += 1
                            return t
            finally:
                self._lock.release()
        t = empty(shape, acl_dtype, stream=stream)
        if t._mem.nbytes > MAX_BYTES:
            return t
        t.acl_handle()                      # the descriptor is made once, with the tensor
        if self._lock.acquire(blocking=False):
            try:
                self.misses += 1
                entries = self._layouts.get(key)
                if entries is None:
                    entries = self._layouts[key] = []
                    while len(self._layouts) > MAX_LAYOUTS:
                        self._layouts.popitem(last=False)
                else:
                    self._layouts.move_to_end(key)
                entries[:] = [e for e in entries if e._ptr is not None]     # closed by their holder
                if len(entries) < PER_LAYOUT:
                    entries.append(t)
            finally:
                self._lock.release()
        return t

    def clear(self) -> None:
        self._layouts = OrderedDict()       # one rebinding: no lock to wait for (see take)

    def info(self) -> dict:
        layouts = self._layouts
        return {"layouts": len(layouts), "tensors": sum(len(e) for e in list(layouts.values())),
                "hits": self.hits, "misses": self.misses}


# Only the default stream of a device pyaclnn holds for the whole process (the current device when
# no ``with Device(n):`` is active: pyaclnn.runtime.current_device()) keeps a cache. Cached tensors
# hold their stream and a reference on its device, so anywhere else a cache would keep alive what
# its owner expects to be released.
_caches: dict = {}          # Stream -> ReuseCache
_caches_lock = threading.Lock()


def _cache_for(stream: Stream) -> ReuseCache | None:
    if not stream.is_default or not holds_forever(stream):
        return None
    if not _caches_lock.acquire(blocking=False):     # never waited for (see ReuseCache.take): no reuse now
        return None
    try:
        c = _caches.get(stream)
        if c is None:
            c = _caches[stream] = ReuseCache()
    finally:
        _caches_lock.release()
    return c


def take(shape: tuple, acl_dtype: int, stream: Stream) -> Tensor:
    """A contiguous tensor for this call's use on ``stream`` (reused when a free one is cached)."""
    c = _caches.get(stream)
    if c is None:
        c = _cache_for(stream)
        if c is None:
            return empty(shape, acl_dtype, stream=stream)
    return c.take(shape, acl_dtype, stream)


def clear() -> None:
    """Drop the cached tensors (their memory goes back to the streams' pools)."""
    for c in list(_caches.values()):        # one C-level copy: no lock to wait for
        c.clear()


def info() -> dict:
    """Per stream: layouts and tensors kept, hits and misses (for tests and benchmarks)."""
    return {repr(s): c.info() for s, c in list(_caches.items())}


on_empty_cache(clear)
