"""What a device tensor points into: :class:`Memory`, pool-backed :class:`DeviceBuffer` and
:class:`ExternalMemory` owned by someone else."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._release import finalizer as _finalizer
from .._release import parked_finalizer as _parked_finalizer
from ._init import _quiet
from .devices import _BindScope, current_stream
from .host import register_host_memory

if TYPE_CHECKING:
    from .pool import MemoryPool
    from .streams import Stream

class Memory:
    """A device-addressable byte range and the streams that have used it.

    ``streams[0]`` is the stream the memory is ordered on (its allocation stream, or the first stream
    that used foreign memory); others are added when work on them touches it, and are synchronised
    before the memory is recycled.
    """
    __slots__ = ("ptr", "nbytes", "streams", "_finalizer", "views", "__weakref__")

    def __init__(self, ptr: int, nbytes: int, streams: list | None = None):
        self.ptr = ptr
        self.nbytes = nbytes
        self.streams: list = [] if streams is None else streams
        self._finalizer: Any = None
        self.views = 0              # open tensors over it (Tensor.close of the last one releases it)

    def note_stream(self, stream: Stream) -> None:
        """Record that work on ``stream`` uses this memory.

        Closed streams (other than the first, the one the memory is ordered on) are forgotten here:
        their work has run, and a tensor used on many short-lived streams must not keep them all.
        """
        streams = self.streams
        if stream not in streams:
            if len(streams) > 1:
                # in place: the release finalizer holds this very list
                streams[1:] = [s for s in streams[1:] if s._handle is not None]
            streams.append(stream)

    def wait_idle(self) -> None:
        """Synchronise every stream that used this memory."""
        for s in self.streams:
            if not s.closed:
                s.synchronize()

    @property
    def alive(self) -> bool:
        return self._finalizer is None or self._finalizer.alive

    def release(self) -> None:
        """Free now (idempotent); the memory must no longer be used."""
        if self._finalizer is not None:
            self._finalizer()


def _sync_others(streams: list) -> None:
    for s in streams[1:]:
        if s._handle is not None:
            with _BindScope(s._state):
                _quiet(s.pool._sync(s._handle))


def _release_buffer(pool: MemoryPool, cell: list, nbytes: int, streams: list, ref: list) -> None:
    # Resumable (pyaclnn._release): run again after an interrupt, it finishes what is left.
    try:
        if len(streams) > 1 and cell:
            _sync_others(streams)
        pool.free_cell(cell, nbytes)
    except Exception:       # noqa: BLE001
        pass
    streams.clear()
    if ref:
        ref[0].release_from(ref)        # (_drop_reference, inline: this runs for every dropped buffer)


class DeviceBuffer(Memory):
    """Device memory from a stream's :class:`MemoryPool`, returned to it when released."""
    __slots__ = ("size",)

    def __init__(self, nbytes: int, stream: Stream | None = None, rounded: int = 0):
        """``rounded``: the pool block's size, when the caller checked and rounded ``nbytes`` already
        (MemoryPool.allocate_rounded_into)."""
        stream = current_stream() if stream is None else stream
        state = stream._state
        pool = stream.pool
        self.ptr = None
        self.nbytes = nbytes
        self.streams = [stream]
        self._finalizer = None
        self.views = 0
        cell: list = []                 # the block's address (see MemoryPool.allocate_into)
        ref: list = []                  # the device reference (see _DeviceState.acquire_into)
        # The finalizer owns both cells before anything is taken: an exception at any point (a
        # KeyboardInterrupt included) leaves nothing unowned; this object's death, or the explicit
        # call below, gives back what the cells hold by then.
        fin = None
        try:
            # Parked with the pool when this object dies (no thread hand-off): the block goes back at
            # the pool's next allocation, which is the first that could reuse it, or at a flush.
            fin = self._finalizer = _parked_finalizer(self, pool.park, _release_buffer, pool, cell, nbytes,
                                                      self.streams, ref)
            state.acquire_into(ref)
            self.size = pool.allocate_rounded_into(rounded, cell) if rounded else pool.allocate_into(nbytes, cell)
            self.ptr = cell[0]
        except BaseException:
            if fin is not None:
                fin()
            raise


class MemoryPart(Memory):
    """A range of a :class:`DeviceBuffer` that several tensors made together share (one pool block
    for all the outputs of a call): the block goes back to its pool when every part is closed, or
    when the last of them is gone."""
    __slots__ = ("whole",)

    def __init__(self, whole: DeviceBuffer, offset: int, nbytes: int):
        super().__init__(whole.ptr + offset, nbytes, whole.streams)     # one list: any stream counts for all
        self.whole = whole

    def release(self) -> None:
        whole, self.whole = self.whole, None
        if whole is not None:
            whole.views -= 1            # (the block's views count its open parts)
            if whole.views <= 0:
                whole.release()


def _release_external(streams: list, registration, owner) -> None:
    # Resumable: syncing again is harmless, and the registration releases once.
    try:
        for s in streams:
            if s._handle is not None:
                with _BindScope(s._state):
                    _quiet(s.pool._sync(s._handle))
        if registration is not None:
            registration.release()
    except Exception:       # noqa: BLE001
        pass
    streams.clear()


class ExternalMemory(Memory):
    """Memory owned by someone else (a torch tensor, a registered host array, a raw pointer).

    ``owner`` is kept alive as long as this object; ``register=True`` makes host memory addressable
    by the emulator's kernels (:class:`HostRegistration`).  On release the streams that used it are
    synchronised first, so the owner may free it right after.
    """
    __slots__ = ()

    def __init__(self, ptr: int, nbytes: int, owner=None, register: bool = False,
                 stream: Stream | None = None):
        registration = register_host_memory(ptr, nbytes) if register and nbytes else None
        super().__init__(ptr, nbytes, [stream] if stream is not None else [])
        self._finalizer = _finalizer(self, _release_external, self.streams, registration, owner)
