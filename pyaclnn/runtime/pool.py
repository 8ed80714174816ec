"""The caching, stream-ordered device allocator each stream owns (workspaces and tensors)."""
from __future__ import annotations

import ctypes
import threading
import weakref

from .. import _release, capi
from .._cint import check as _check_cint
from ..errors import make_error, recent_error_message
from ._init import _byref, _quiet, is_stub
from .devices import Device, _BindScope, _bind_current, _DeviceState, check_runtime

_ROUND = 512                      # allocation granularity of the pool (bytes)
_LAST = (-1,)                     # map(list.pop, _LAST): move the last element inside one C call
_SIZE_MAX = 2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1
# The pool's high-water mark: freed bytes a stream keeps for reuse. A free that takes the cache past
# it synchronises the stream and gives every cached block back to the device (MemoryPool.limit).
# On the emulator device memory is this process's RSS, so little is kept; on a real NPU it is HBM and
# every give-back synchronises the stream, so a pool keeps more.
DEFAULT_POOL_LIMIT = 64 << 20
CANN_POOL_LIMIT = 1 << 30


def _round_up(n: int) -> int:
    return (n + _ROUND - 1) // _ROUND * _ROUND if n > 0 else _ROUND


class MemoryPool:
    """Caching, stream-ordered device allocator of one stream (workspaces and tensors).

    ``allocate(n)`` returns ``(ptr, size)``; ``free(ptr, size)`` puts the block back for later
    allocations **on the same stream** (work queued before the free runs first, in stream order).
    Blocks are kept by rounded size up to ``limit`` cached bytes (the high-water mark, default
    :data:`DEFAULT_POOL_LIMIT` = 64 MiB per stream on the emulator, :data:`CANN_POOL_LIMIT` = 1 GiB on a
    real toolkit); a free that goes beyond it, or
    :meth:`empty_cache`, synchronises the stream and returns the cached blocks with ``aclrtFree``.
    The pool belongs to its stream: closing the stream empties it.
    """

    def __init__(self, state: _DeviceState, stream_handle: int, limit: int | None = None):
        if limit is None:
            limit = DEFAULT_POOL_LIMIT if is_stub() else CANN_POOL_LIMIT
        self._state = state
        self._stream_handle = stream_handle
        self._free_lists: dict[int, list[int]] = {}
        # Reentrant, because the garbage collector may run a buffer's finalizer (which frees into
        # this pool) inside any of our critical sections, on the same thread; such a nested free is
        # parked in _nested_frees and applied by the next call, never inside the section it hit.
        # "Nested" is "this thread owns the lock" (RLock._is_owned, what threading.Condition uses):
        # no flag of ours that an interrupt between two bytecodes could leave set.
        self._lock = threading.RLock()
        self._owned = self._lock._is_owned
        self._nested_frees: list[tuple[int, int]] = []
        self.limit = limit
        self.closed = False
        self.cached_bytes = 0
        self.in_use_blocks = 0
        self.in_use_bytes = 0
        self.device_mallocs = 0
        self.device_frees = 0
        self.reuses = 0
        self._malloc = capi.aclrtMalloc
        self._free_fn = capi.aclrtFree
        self._sync = capi.aclrtSynchronizeStream
        _pools.add(self)

    def stats(self) -> dict:
        """Counters: blocks/bytes in use, cached bytes, device mallocs/frees, reuses."""
        _release.flush()                # blocks of collected tensors are back first
        self._apply_nested_frees()
        return {"in_use_blocks": self.in_use_blocks, "in_use_bytes": self.in_use_bytes,
                "cached_bytes": self.cached_bytes,
                "cached_blocks": sum(len(v) for v in self._free_lists.values()),
                "device_mallocs": self.device_mallocs, "device_frees": self.device_frees,
                "reuses": self.reuses}

    def allocate(self, nbytes: int) -> tuple[int, int]:
        cell: list = []
        size = self.allocate_into(nbytes, cell)
        return cell[0], size

    def allocate_into(self, nbytes: int, cell: list) -> int:
        """Allocate and put the block's address into ``cell`` (empty before); returns its size.

        The address lands in ``cell`` inside the C call that takes it, so an exception raised at
        any point (a KeyboardInterrupt from a signal handler included) finds it there: the caller
        gives it back with :meth:`free_cell`.
        """
        size = _round_up(_check_cint(nbytes, "size_t", "nbytes", "aclrtMalloc"))
        if size > _SIZE_MAX:
            _check_cint(size, "size_t", f"nbytes {nbytes} rounded up to the pool's {_ROUND}-byte blocks",
                        "aclrtMalloc")
        self._apply_nested_frees()
        if self._take_cached(size, cell):
            return size
        if _release.pending():
            # blocks of collected tensors are on their way back (pyaclnn._release): wait for them
            # rather than allocate more device memory
            _release.flush()
            if self._take_cached(size, cell):
                return size
        self._device_malloc_into(size, cell)
        with self._lock:
            self.in_use_blocks += 1
            self.in_use_bytes += size
        return size

    def _apply_nested_frees(self) -> None:
        if not self._nested_frees or self._owned():   # (nested in a section: leave them parked)
            return
        while True:
            try:
                ptr, size = self._nested_frees.pop()   # one at a time: an interrupt loses none
            except IndexError:
                return
            self.free(ptr, size)

    def _take_cached(self, size: int, cell: list) -> bool:
        with self._lock:
            if self.closed:
                raise RuntimeError("the stream of this memory pool is closed")
            blocks = self._free_lists.get(size)
            if not blocks:
                return False
            cell.extend(map(blocks.pop, _LAST))     # one C call: the block is never in between
            self.cached_bytes -= size
            self.reuses += 1
            self.in_use_blocks += 1
            self.in_use_bytes += size
            return True

    def _device_malloc_into(self, size: int, cell: list) -> None:
        _bind_current(self._state)
        p = ctypes.c_void_p()
        cell.append(p)                           # aclrtMalloc writes the address into the cell
        status = self._malloc(_byref(p), size, capi.ACL_MEM_MALLOC_HUGE_FIRST)
        if status == capi.ACL_ERROR_RT_MEMORY_ALLOCATION and (self.cached_bytes or _release.pending()):
            recent_error_message()
            _release.flush()                     # blocks of collected tensors come back first
            self.empty_cache()                   # give cached blocks back, then try once more
            status = self._malloc(_byref(p), size, capi.ACL_MEM_MALLOC_HUGE_FIRST)
        if status:
            del cell[:]
            raise make_error(status, "aclrtMalloc")
        self.device_mallocs += 1
        cell[0] = p.value

    def free_cell(self, cell: list, nbytes: int) -> None:
        """Give back the block :meth:`allocate_into` put into ``cell`` (and empty it); idempotent."""
        items = cell[:]
        del cell[:]          # emptied before the call: an interrupt now cannot make it run twice
        if items and (ptr := getattr(items[0], "value", items[0])):
            self.free(ptr, _round_up(nbytes))

    def free(self, ptr: int, size: int) -> None:
        """Return a block (stream-ordered: reusable at once by later work on this stream)."""
        if self._owned():                        # a finalizer run by the GC inside our own section
            self._nested_frees.append((ptr, size))
            return
        self._apply_nested_frees()
        with self._lock:
            self.in_use_blocks -= 1
            self.in_use_bytes -= size
            if not self.closed:
                self._free_lists.setdefault(size, []).append(ptr)
                self.cached_bytes += size
                if self.cached_bytes <= self.limit:
                    return
                ptr = None
        if ptr is not None:                      # the stream is gone: nothing is queued on it
            self._release([ptr])
        else:
            self.empty_cache()

    def empty_cache(self) -> int:
        """Synchronise the stream and give every cached block back to the device; returns the bytes."""
        _release.flush()                # blocks of collected tensors are back first
        self._apply_nested_frees()
        with self._lock:
            blocks = [p for lst in self._free_lists.values() for p in lst]
            freed = self.cached_bytes
            self._free_lists.clear()
            self.cached_bytes = 0
        if blocks:
            with _BindScope(self._state):
                _quiet(self._sync(self._stream_handle))
                self._release(blocks)
        return freed if blocks else 0

    def _release(self, blocks: list[int]) -> None:
        with _BindScope(self._state):
            for p in blocks:
                _quiet(self._free_fn(p))
                self.device_frees += 1

    def _close(self) -> None:
        """Called by the stream after its final synchronisation."""
        self.empty_cache()
        with self._lock:
            self.closed = True


_pools: "weakref.WeakSet[MemoryPool]" = weakref.WeakSet()
_cache_owners: list = []          # callables dropping tensors cached above this layer (on_empty_cache)


def on_empty_cache(drop) -> None:
    """Have :func:`empty_cache` call ``drop()`` first: a layer above the runtime that keeps device
    tensors for reuse (pyaclnn._reuse) lets them go, so that their memory can be returned too."""
    _cache_owners.append(drop)


def empty_cache(device: "Device | int | None" = None) -> int:
    """Give the device memory cached by pyaclnn's pools back to the device (``aclrtFree``), like
    ``torch.cuda.empty_cache()``; returns the bytes freed.

    Memory of closed or garbage-collected tensors and of finished workspaces stays in its stream's
    pool for reuse; this trims every pool (of ``device`` only, when given), after synchronising their
    streams.  Memory still used by live tensors is not touched.
    """
    check_runtime()
    for drop in list(_cache_owners):
        drop()
    _release.flush()                # memory of objects already collected goes back to its pool first
    wanted = None if device is None else (device.id if isinstance(device, Device) else int(device))
    freed = 0
    for pool in list(_pools):
        if not pool.closed and (wanted is None or pool._state.id == wanted):
            freed += pool.empty_cache()
    return freed
