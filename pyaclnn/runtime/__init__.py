"""Devices, streams, events and device memory: owning objects with deterministic release.

One module per concept: :mod:`._init` (aclInit, thread state), :mod:`.devices`, :mod:`.streams`,
:mod:`.events`, :mod:`.pool` (the stream-ordered caching allocator), :mod:`.memory` (what tensors
point into) and :mod:`.host` (host memory the emulator may address).

    import pyaclnn
    from pyaclnn.runtime import Device, Stream, Event

    with Device(0):                      # binds this thread to device 0 (aclrtSetDevice, counted)
        s = Stream()                     # aclrtCreateStream; s.close() or GC destroys it
        start, end = Event(), Event()
        start.record(s); ...; end.record(s)
        s.synchronize()
        print(start.elapsed_time(end), "ms")

Lifetimes (the capi layer has no policy; this layer owns it):

* ``aclInit`` is called once, on first use; the reference it takes is dropped at interpreter exit
  (``aclFinalizeReference``), after every object below has been released.
* A device is set (``aclrtSetDevice``) when the first object needing it appears and reset
  (``aclrtResetDevice``) when the last one is released: each :class:`Device` object, stream, event
  and device buffer holds one reference on its device.  Threads are bound to a device's context with
  ``aclrtSetCurrentContext`` (no reference change), lazily, before any call that needs one.
* Every object has ``close()``; those that hold nothing else also release on garbage collection and
  at interpreter exit through finalizers (:mod:`pyaclnn._release`, a ``weakref.finalize`` whose
  releases run on a releaser thread, so that a KeyboardInterrupt cannot cut them short), which never
  raise and hold only ctypes function objects (safe while modules are being torn down).
* Device memory comes from a caching pool owned by a stream (:class:`MemoryPool`).  A block freed
  after work was queued on that stream is reused only by later allocations on the same stream, so
  stream order keeps it safe without synchronisation; memory used on other streams waits for them
  before it is recycled.

Each thread has a current device (default: device 0) and a current stream (default: the current
device's default stream, one created stream per device).  ``with device:`` and ``with stream:``
change them for the duration of the block.
"""
from __future__ import annotations

from ..errors import AclError  # noqa: F401 -- re-exported for callers' type hints
from ._init import _byref, _check, _quiet, _tls, device_count, init, is_stub, soc_name  # noqa: F401
from .devices import (Device, _BindScope, _bind_current, _Binding, _DeviceState, _diagnose,  # noqa: F401
                      _resolve_device, _state_for, _states, check_runtime, current_device, current_stream,
                      holds_forever, iter_states)
from .events import Event  # noqa: F401
from .host import (HostRegistration, _registrations, _stub_fn, register_host_memory,  # noqa: F401
                   stub_live_counts)
from .memory import DeviceBuffer, ExternalMemory, Memory  # noqa: F401
from .pool import CANN_POOL_LIMIT, DEFAULT_POOL_LIMIT, MemoryPool, _round_up, empty_cache, on_empty_cache  # noqa: F401
from .streams import Stream  # noqa: F401

__all__ = [
    "Device", "Stream", "Event", "MemoryPool", "Memory", "DeviceBuffer", "ExternalMemory",
    "HostRegistration",
    "init", "current_device", "current_stream", "device_count", "soc_name", "is_stub",
    "register_host_memory", "stub_live_counts", "empty_cache",
]
