"""The pool blocks of one kind of output set (a cached friendly plan's outputs), kept with the set.

A set's outputs share one block (:class:`~pyaclnn.runtime.memory.MemoryPart`); their ``whole`` is a
lease (the accelerator's ``SetLease``: ``_fastcall.c``), the set's hold on a
:class:`~pyaclnn.runtime.memory.DeviceBuffer`. When the last output is closed, or the lease is
deallocated with the last of them, the buffer goes to the set kind's free list -- not to the pool --
and the next set of the same kind on the same stream takes it: no pool round trip, no device
reference, no finalizer per call. No reference count is read: a block is reused only after every
output (and every view of one) is closed or gone, by later work on its own stream, as the pool would
reuse it.

* The lease's deallocation runs no Python code: it appends the buffer to the free list in C.
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


class _FreeList(list):
    __slots__ = ("__weakref__",)
    __hash__ = object.__hash__      # (identity: a WeakSet member)
    __eq__ = object.__eq__
    __ne__ = object.__ne__


_closed: "weakref.WeakSet[_FreeList]" = weakref.WeakSet()   # free lists of closed sets


class SetBlocks:
    """Buffers of ``nbytes`` (``rounded``: the pool block's size) for sets on ``stream``;
    ``new_lease(buf, free, views)`` makes a set's lease (the accelerator's)."""
    __slots__ = ("stream", "nbytes", "rounded", "free", "closed", "new_lease", "_fin", "__weakref__")

    def __init__(self, stream, nbytes: int, rounded: int, new_lease):
        self.stream = stream
        self.nbytes = nbytes
        self.rounded = rounded
        self.new_lease = new_lease
        self.free = _FreeList()     # buffers whose sets are closed or gone
        self.closed = False
        # Closed when dropped unclosed too (its owner's close cut short by an interrupt): a lease
        # still out must not land in a list nobody empties.
        self._fin = _release.finalizer(self, _close_free, self.free)

    def take(self) -> DeviceBuffer:
        """A buffer for a new set: a free one (waiting for other streams that used it), or a new
        one from the pool."""
        free = self.free
        while free:
            buf = free.pop()
            if not buf._finalizer.alive:        # (released at exit)
                continue
            streams = buf.streams
            if len(streams) > 1:
                _sync_others(streams)
                del streams[1:]
            return buf
        return DeviceBuffer(self.nbytes, self.stream, self.rounded)

    def lease(self, buf: DeviceBuffer, views: int):
        """The new set's hold on ``buf`` (its parts share it as their ``whole``)."""
        return self.new_lease(buf, self.free, views)

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
        free.pop().release()


def _drain_closed() -> None:
    for free in list(_closed):
        _drain(free)


_release.on_flush(_drain_closed)
