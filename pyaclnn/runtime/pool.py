"""The caching, stream-ordered device allocator each stream owns (workspaces and tensors)."""
from __future__ import annotations

import ctypes
import threading
import weakref
from collections import defaultdict

from .._exceptions import ClosedError
from .. import _interruptible, _release, capi
from .._cint import check as _check_cint
from ..errors import make_error, recent_error_message
from ._init import _byref, _quiet, is_stub
from .devices import Device, _BindScope, _bind_current, _DeviceState, check_runtime

_ROUND = 512                      # allocation granularity of the pool (bytes)
_c_void_p = ctypes.c_void_p
_SIZE_MAX = 2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1
# The pool's high-water mark: freed bytes a stream keeps for reuse. A free that takes the cache past
# it synchronises the stream and gives every cached block back to the device (MemoryPool.limit).
# On the emulator device memory is this process's RSS, so little is kept; on a real NPU it is HBM and
# every give-back synchronises the stream, so a pool keeps more.
DEFAULT_POOL_LIMIT = 64 << 20
CANN_POOL_LIMIT = 1 << 30


def _round_up(n: int) -> int:
    return (n + _ROUND - 1) // _ROUND * _ROUND if n > 0 else _ROUND


def block_size(nbytes: int) -> int:
    """The size of the pool block that holds ``nbytes`` (checked as aclrtMalloc's ``size_t``)."""
    size = _round_up(_check_cint(nbytes, "size_t", "nbytes", "aclrtMalloc"))
    if size > _SIZE_MAX:
        _check_cint(size, "size_t", f"nbytes {nbytes} rounded up to the pool's {_ROUND}-byte blocks",
                    "aclrtMalloc")
    return size


class MemoryPool:
    """Caching, stream-ordered device allocator of one stream (workspaces and tensors).

    ``allocate(n)`` returns ``(ptr, size)``; ``free(ptr, size)`` puts the block back for later
    allocations **on the same stream** (work queued before the free runs first, in stream order).
    Blocks are kept by rounded size up to ``limit`` cached bytes (the high-water mark, default
    :data:`DEFAULT_POOL_LIMIT` = 64 MiB per stream on the emulator, :data:`CANN_POOL_LIMIT` = 1 GiB on a
    real toolkit); a free that goes beyond it, or
    :meth:`empty_cache`, synchronises the stream and returns the cached blocks with ``aclrtFree``.
    The pool belongs to its stream: closing the stream empties it.

    Interrupts: a KeyboardInterrupt may land wherever the interpreter checks
    for signals -- a function's entry, the end of a call, a loop's back edge -- but never inside a
    run of other bytecodes. Every step that moves a block between owners (a caller's cell, the
    returns list, a free list, the list of blocks going back to the device) and updates the
    counters is such a run, so each block always has exactly one owner and the counters match:
    ``in_use`` counts the blocks in cells and in the returns list.

    A buffer dropped without ``close()`` (``DeviceBuffer``) is parked here (``_dropped``: its death
    appends its finalizer, see :func:`pyaclnn._release.parked_finalizer`) and its block comes back at
    the pool's next allocation -- the first that could reuse it -- or at a flush, on that thread:
    no thread hand-off per dropped result.
    """

    def __init__(self, state: _DeviceState, stream_handle: int, limit: int | None = None):
        if limit is None:
            limit = DEFAULT_POOL_LIMIT if is_stub() else CANN_POOL_LIMIT
        self._state = state
        self._stream_handle = stream_handle
        self._free_lists: defaultdict[int, list] = defaultdict(list)
        # Reentrant, because the garbage collector may run a buffer's finalizer (which frees into
        # this pool) inside any of our critical sections, on the same thread. Every free first goes
        # to _returns (one interrupt-free step), which the pool applies under its lock -- never
        # inside the section such a nested free hit. "Nested" is "this thread owns the lock"
        # (RLock._is_owned, what threading.Condition uses): no flag an interrupt could leave set.
        self._lock = threading.RLock()
        self._owned = self._lock._is_owned
        self._returns: list[tuple] = []           # (ptr or c_void_p, size) given back, not yet applied
        # Finalizers of dropped buffers of this pool (pyaclnn._release.parked_finalizer: the buffer's
        # death appends, a C call, so no thread hand-off), run by the next allocation or flush.
        self._dropped: list = []
        self.park = self._dropped.append
        self._doomed: list[dict] = []             # free lists on their way back to the device
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
        self._sync = _interruptible.sync_stream       # (Ctrl-C can interrupt it)
        _pools.add(self)

    def stats(self) -> dict:
        """Counters: blocks/bytes in use, cached bytes, device mallocs/frees, reuses."""
        _release.flush()                # blocks of collected tensors are back first
        self._apply_returns()
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

        The address lands in ``cell`` in the same step that counts the block in use (for a new
        block: a ``c_void_p`` that ``aclrtMalloc`` writes, made an int afterwards), so an exception
        raised at any point (a KeyboardInterrupt from a signal handler included) finds it there:
        the caller gives it back with :meth:`free_cell`.
        """
        return self.allocate_rounded_into(block_size(nbytes), cell)

    def allocate_rounded_into(self, size: int, cell: list) -> int:
        """:meth:`allocate_into` of a size that is already a multiple of the pool's granularity and
        within ``size_t`` (checked once by a caller that allocates it again and again)."""
        if self._dropped:
            _release.run_parked(self._dropped)     # blocks of dropped buffers come back first
        if self._returns:
            self._apply_returns()
        if self._take_cached(size, cell):
            return size
        if _release.pending():
            # blocks of collected tensors are on their way back (pyaclnn._release): wait for them
            # rather than allocate more device memory
            _release.flush()
            self._apply_returns()
            if self._take_cached(size, cell):
                return size
        self._device_malloc_into(size, cell)
        return size

    def _apply_returns(self) -> None:
        """Move returned blocks to the free lists (not inside a section of this thread: they wait)."""
        if not self._returns or self._owned():
            return
        with self._lock:
            returns = self._returns
            free_lists = self._free_lists
            while returns:                  # (the back edge is the only interrupt point: between blocks)
                ptr, size = returns[0]      # the oldest: a nested free only appends
                if ptr.__class__ is _c_void_p:
                    ptr = ptr.value         # a block aclrtMalloc wrote into a cell (or NULL: none)
                blocks = free_lists[size]
                if ptr:
                    blocks += (ptr,)
                    self.cached_bytes += size
                del returns[0]
                self.in_use_blocks -= 1
                self.in_use_bytes -= size
            over = self.closed or self.cached_bytes > self.limit
        if over:                            # (a closed pool keeps nothing)
            self.empty_cache()

    def _take_cached(self, size: int, cell: list) -> bool:
        with self._lock:
            if self.closed:
                raise ClosedError("the stream of this memory pool is closed")
            blocks = self._free_lists.get(size)
            if not blocks:
                return False
            # one interrupt-free run: the block moves into the cell with the counters
            cell += blocks[-1:]
            del blocks[-1]
            self.cached_bytes -= size
            self.reuses += 1
            self.in_use_blocks += 1
            self.in_use_bytes += size
            return True

    def _device_malloc_into(self, size: int, cell: list) -> None:
        _bind_current(self._state)
        p = _c_void_p()
        ref = _byref(p)
        # one interrupt-free run: the cell owns p (and what aclrtMalloc writes into it), counted in use
        cell += (p,)
        self.in_use_blocks += 1
        self.in_use_bytes += size
        self.device_mallocs += 1
        status = self._malloc(ref, size, capi.ACL_MEM_MALLOC_HUGE_FIRST)
        if status == capi.ACL_ERROR_RT_MEMORY_ALLOCATION and (self.cached_bytes or _release.pending()):
            recent_error_message()
            _release.flush()                     # blocks of collected tensors come back first
            self.empty_cache()                   # give cached blocks back, then try once more
            status = self._malloc(ref, size, capi.ACL_MEM_MALLOC_HUGE_FIRST)
        if status:
            err = make_error(status, "aclrtMalloc")
            if cell and cell[-1] is p:           # (one interrupt-free run, as above)
                del cell[-1]
                self.in_use_blocks -= 1
                self.in_use_bytes -= size
                self.device_mallocs -= 1
            raise err
        cell[-1] = p.value

    def free_cell(self, cell: list, nbytes: int) -> None:
        """Give back the block :meth:`allocate_into` put into ``cell`` (and empty it); idempotent.

        The block leaves the cell and enters the pool in one interrupt-free run."""
        if cell:
            size = (nbytes + _ROUND - 1) // _ROUND * _ROUND if nbytes > 0 else _ROUND    # (_round_up)
            if cell:
                self._returns += ((cell[0], size),)
                del cell[:]
            self._apply_returns()

    def free(self, ptr: int, size: int) -> None:
        """Return a block (stream-ordered: reusable at once by later work on this stream)."""
        self._returns += ((ptr, size),)
        self._apply_returns()

    def empty_cache(self) -> int:
        """Synchronise the stream and give every cached block back to the device; returns the bytes.

        Resumable: the blocks move to the pool's list of blocks going back to the device in one
        interrupt-free run, and each leaves it in the C call that frees it, so a call cut short by
        an interrupt leaves the rest to the next one."""
        _release.flush()                # blocks of collected tensors are back first
        self._apply_returns()
        fresh: defaultdict = defaultdict(list)
        freed = 0
        with self._lock:
            if any(self._free_lists.values()):
                # one interrupt-free run: the free lists become blocks on their way to the device
                old = self._free_lists
                self._free_lists = fresh
                self._doomed += (old,)
                freed = self.cached_bytes
                self.cached_bytes = 0
        self._give_back()
        return freed

    def _give_back(self) -> None:
        doomed = self._doomed
        if not doomed:
            return
        with _BindScope(self._state):
            if not self.closed:
                # (its work may still use them; a closed pool's stream was synchronised and destroyed)
                _quiet(self._sync(self._stream_handle))
            while doomed:
                lists = doomed[0]
                for blocks in list(lists.values()):
                    n = len(blocks)
                    if _release.drain(self._free_fn, blocks):
                        recent_error_message()
                    self.device_frees += n
                if doomed and doomed[0] is lists:     # (another thread may have finished it)
                    del doomed[0]

    def _release(self, blocks: list[int]) -> None:
        with _BindScope(self._state):
            _release.drain(self._free_fn, blocks)

    def _close(self) -> None:
        """Called by the stream after its final synchronisation."""
        if self._dropped:
            _release.run_parked(self._dropped)     # (on the releaser thread a flush runs none)
        self.empty_cache()
        with self._lock:
            self.closed = True
        # Again: a free on another thread may have cached a block between the first empty_cache and
        # `closed` (a later one finds the pool closed and gives its block back itself).
        self.empty_cache()


_pools: "weakref.WeakSet[MemoryPool]" = weakref.WeakSet()


def _run_dropped() -> None:
    """Every pool's parked releases (a flush: pyaclnn._release.on_flush)."""
    for pool in list(_pools):
        if pool._dropped:
            _release.run_parked(pool._dropped)


_release.on_flush(_run_dropped)
_cache_owners: list = []          # callables dropping tensors cached above this layer (on_empty_cache)


def on_empty_cache(drop) -> None:
    """Have :func:`empty_cache` call ``drop()`` first: a layer above the runtime that keeps device
    memory (the friendly functions' cached plans and their workspaces) lets it go, so that it can be
    returned too."""
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
