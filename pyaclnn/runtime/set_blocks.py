"""The pool blocks of one kind of output set (a cached friendly plan's outputs), kept with the set.

A set's outputs share one block (:class:`~pyaclnn.runtime.memory.MemoryPart`); their ``whole`` is a
:class:`SetLease`, the set's hold on a :class:`~pyaclnn.runtime.memory.DeviceBuffer`. When the last
output is closed, or the lease dies with them, the buffer goes to the set's free list -- not to the
pool -- and the next set of the same kind on the same stream takes it: no pool round trip, no device
reference, no finalizer per call. No reference count decides anything: a block is reused only after
every output (and every view of one) is closed or gone, by later work on its own stream, as the pool
would reuse it.

* The lease's death runs no Python code: its weak reference's callback is the free list's
  ``list.append`` (C code), which appends the reference; the block rides on it (``buf``).
* The buffer itself is an ordinary pool buffer: whoever drops it (an interrupt in :meth:`SetBlocks.take`,
  a closed set, the garbage collector) gives it back to the pool through its own finalizer. So an
  interrupt anywhere loses nothing; each step that moves a buffer takes it out of its holder first.
* A buffer some output was used on another stream with waits for that stream before its reuse.
* :meth:`SetBlocks.close` (the plan dropped, ``pyaclnn.empty_cache()``, its stream closing) gives
  the free buffers back to the pool; a lease that dies later lands in a closed list, which every
  :func:`pyaclnn._release.flush` empties (or, failing that, the garbage collector).
"""
from __future__ import annotations

import weakref

from .. import _release
from .memory import DeviceBuffer, _sync_others


class _LeaseRef(weakref.ref):
    """A lease's weak reference; its death appends this to the set's free list with ``buf``."""
    __slots__ = ("buf",)


class SetLease:
    """What the parts of one set share as their ``whole``: the set's hold on its buffer."""
    __slots__ = ("ref", "free", "views", "__weakref__")

    def release(self) -> None:
        """Every part is closed: the buffer goes to the free list now (idempotent)."""
        ref = self.ref
        if ref is None:
            return
        # (no call between taking the buffer and handing it on: an interrupt cannot split them)
        buf = ref.buf
        ref.buf = None
        self.ref = None             # (the reference goes: the lease's death appends nothing)
        if buf is not None:
            self.free += (buf,)


class _FreeList(list):
    __slots__ = ("__weakref__",)
    __hash__ = object.__hash__      # (identity: a WeakSet member)
    __eq__ = object.__eq__
    __ne__ = object.__ne__


_closed: "weakref.WeakSet[_FreeList]" = weakref.WeakSet()   # free lists of closed sets


class SetBlocks:
    """Buffers of ``nbytes`` (``rounded``: the pool block's size) for sets on ``stream``."""
    __slots__ = ("stream", "nbytes", "rounded", "free", "closed", "_fin", "__weakref__")

    def __init__(self, stream, nbytes: int, rounded: int):
        self.stream = stream
        self.nbytes = nbytes
        self.rounded = rounded
        self.free = _FreeList()     # buffers (explicit releases) and dead leases' references
        self.closed = False
        # Closed when dropped unclosed too (its owner's close cut short by an interrupt): a lease
        # still out must not land in a list nobody empties.
        self._fin = _release.finalizer(self, _close_free, self.free)

    def take(self) -> DeviceBuffer:
        """A buffer for a new set: a free one (waiting for other streams that used it), or a new
        one from the pool."""
        free = self.free
        while free:
            x = free.pop()
            buf = x.buf if x.__class__ is _LeaseRef else x
            if buf is None or not buf._finalizer.alive:     # (released at exit)
                continue
            streams = buf.streams
            if len(streams) > 1:
                _sync_others(streams)
                del streams[1:]
            return buf
        return DeviceBuffer(self.nbytes, self.stream, self.rounded)

    def lease(self, buf: DeviceBuffer, views: int) -> SetLease:
        """The new set's hold on ``buf`` (its parts share it as their ``whole``)."""
        lease = SetLease()
        lease.views = views
        lease.free = free = self.free
        ref = _LeaseRef(lease, free.append)
        ref.buf = buf
        lease.ref = ref
        return lease

    def close(self) -> None:
        """Give the free buffers back to the pool; later sets come from the pool (idempotent)."""
        self.closed = True
        self._fin()


def _close_free(free: _FreeList) -> None:
    # Resumable: registered again is harmless, each buffer leaves the list before its release.
    _closed.add(free)
    _drain(free)


def _drain(free: list) -> None:
    while free:
        x = free.pop()
        buf = x.buf if x.__class__ is _LeaseRef else x
        if buf is not None:
            buf.release()


def _drain_closed() -> None:
    for free in list(_closed):
        _drain(free)


_release.on_flush(_drain_closed)
