"""Devices, streams, events and device memory: owning objects with deterministic release.

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

import ctypes
import threading
import weakref
from typing import Any, Iterator

from . import _interruptible, _shutdown, capi
from . import errors as _errors
from . import _release
from ._release import finalizer as _finalizer
from ._cint import check as _check_cint
from .errors import AclError, ClosedError, DeviceResetError, make_error, recent_error_message

__all__ = [
    "Device", "Stream", "Event", "MemoryPool", "Memory", "DeviceBuffer", "ExternalMemory",
    "HostRegistration",
    "init", "current_device", "current_stream", "device_count", "soc_name", "is_stub",
    "register_host_memory", "stub_live_counts", "empty_cache",
]

_tls = threading.local()
_byref = ctypes.byref


def _check(status: int, func: str) -> None:
    if status:
        raise make_error(status, func)


def _quiet(status: int) -> None:
    """For finalizers: drop the vendor message a failing release left on this thread."""
    if status:
        recent_error_message()


# ------------------------------------------------------------------------------------------------
# Process-wide initialisation
# ------------------------------------------------------------------------------------------------

_init_lock = threading.Lock()
_initialised = False


class _RuntimeReference:
    """Stands for the aclInit reference this process took; finalized last at exit."""


_runtime_reference = _RuntimeReference()


def _drop_runtime_reference(finalize_reference, finalize) -> None:
    # Runs at interpreter exit after every object created later (finalizers run the newest
    # first). aclFinalizeReference drops only our reference; older toolkits lack it.
    try:
        if finalize_reference is not None:
            _quiet(finalize_reference(None))
    except Exception:       # noqa: BLE001 -- nothing may escape a finalizer at shutdown
        pass


def init() -> None:
    """``aclInit(NULL)`` once per process (an earlier ``aclInit`` elsewhere is fine: 100002)."""
    global _initialised
    if _initialised:
        return
    with _init_lock:
        if _initialised:
            return
        status = capi.aclInit(None)
        if status not in (capi.ACL_SUCCESS, capi.ACL_ERROR_REPEAT_INITIALIZE):
            raise make_error(status, "aclInit")
        fin_ref = capi.aclFinalizeReference
        _finalizer(_runtime_reference, _drop_runtime_reference,
                   None if getattr(fin_ref, "missing", False) else fin_ref, capi.aclFinalize)
        _shutdown.install()   # after a finalizer exists: at exit, launches stop before finalizers run
        _errors._diagnose = _diagnose
        _initialised = True


def is_stub() -> bool:
    """True when the loaded libraries are pyaclnn's CPU emulator."""
    from ._loader import backend
    return backend().name == "stub"


def soc_name() -> str:
    """``aclrtGetSocName()``: e.g. ``Ascend910B4``, ``Ascend950PR``."""
    init()
    raw = capi.aclrtGetSocName()
    return raw.decode() if raw else "unknown"


def device_count() -> int:
    """``aclrtGetDeviceCount()`` (honours ``ASCEND_RT_VISIBLE_DEVICES``)."""
    init()
    n = ctypes.c_uint32()
    _check(capi.aclrtGetDeviceCount(_byref(n)), "aclrtGetDeviceCount")
    return n.value


# ------------------------------------------------------------------------------------------------
# What happened behind our back: capi resets and finalizes the Pythonic layer did not make
# ------------------------------------------------------------------------------------------------

_ADVICE = ("pyaclnn's objects on it (streams, memory pools, tensors) are gone and cannot be used any "
           "more. Release them (close() / del) before resetting or finalizing through capi, and "
           "balance each capi.aclrtResetDevice with your own capi.aclrtSetDevice: pyaclnn counts its "
           "own references and finalizes the runtime at exit")


def _context_gone(state: "_DeviceState") -> bool:
    """Does the context pyaclnn bound for ``state`` still exist? (re-binds it to find out)"""
    b = state.binding
    if b is None or state.refs <= 0:
        return False
    prev = ctypes.c_void_p()
    had = capi.aclrtGetCurrentContext(_byref(prev)) == 0 and prev.value
    if not had:
        recent_error_message()
    if capi.aclrtSetCurrentContext(b.ctx):
        recent_error_message()
        return True
    if had and prev.value != b.ctx:
        _quiet(capi.aclrtSetCurrentContext(prev.value))     # put the caller's context back
    else:
        _tls.binding = b
    return False


def _runtime_finalized() -> bool:
    """Was the runtime finalized after pyaclnn's aclInit? (an aclInit + aclFinalizeReference pair,
    which leaves the init state as it found it)"""
    fin_ref = capi.aclFinalizeReference
    if not _initialised or getattr(fin_ref, "missing", False):
        return False
    status = capi.aclInit(None)
    if status not in (capi.ACL_SUCCESS, capi.ACL_ERROR_REPEAT_INITIALIZE):
        recent_error_message()
        return False
    _quiet(fin_ref(None))
    return status == capi.ACL_SUCCESS


def _diagnose(code: int) -> str | None:
    """Explain a failing call if a device pyaclnn holds was reset, or the runtime finalized, through
    capi; None when neither happened (registered in pyaclnn.errors by init())."""
    found = []
    for state in list(_states.values()):
        if state.lost is None and _context_gone(state):
            state.lost = (f"device {state.id} was reset through capi.aclrtResetDevice (or "
                          f"aclrtResetDeviceForce) behind pyaclnn's back, while pyaclnn held "
                          f"{state.refs} reference(s) on it")
        if state.lost is not None and state.refs > 0:
            found.append(state.lost)
    if _runtime_finalized():
        found.append("the runtime was finalized through capi.aclFinalize behind pyaclnn's back")
    if not found:
        return None
    return "; ".join(found) + ". " + _ADVICE


def check_runtime() -> None:
    """Raise :class:`~pyaclnn.errors.DeviceResetError` if the runtime was finalized, or a device
    pyaclnn holds was reset, through capi (checked where the Pythonic layer creates resources)."""
    if not _initialised:
        return
    why = _diagnose(0)
    if why:
        err = DeviceResetError(capi.ACL_ERROR_UNINITIALIZE if "finalized" in why
                               else capi.ACL_ERROR_RT_CONTEXT_NULL, None, None)
        err.hint = why
        err.args = (f"pyaclnn's runtime state is gone\nhint: {why}",)
        raise err


# ------------------------------------------------------------------------------------------------
# Device state: one per device id, reference counted
# ------------------------------------------------------------------------------------------------

class _Binding:
    """A device context as bound to threads; a new one each time the device is set again."""
    __slots__ = ("state", "ctx")

    def __init__(self, state: "_DeviceState", ctx: int):
        self.state = state
        self.ctx = ctx


class _DeviceState:
    """``aclrtSetDevice`` on the first reference, ``aclrtResetDevice`` when the last one goes."""

    def __init__(self, device_id: int):
        self.id = device_id
        self.lock = threading.RLock()
        self.refs = 0
        self.binding: _Binding | None = None
        self.default_stream: Stream | None = None
        self.lost: str | None = None       # what reset it behind our back (see _diagnose)
        # Bound once so that releases still work while modules are torn down at exit.
        self._set_ctx = capi.aclrtSetCurrentContext
        self._reset = capi.aclrtResetDevice

    def acquire(self) -> None:
        with self.lock:
            if self.refs == 0:
                self._open()
            self.refs += 1

    def release(self) -> None:
        with self.lock:
            self.refs -= 1
            if self.refs == 0:
                self._close()

    def _open(self) -> None:
        init()
        check_runtime()
        previous = getattr(_tls, "binding", None)
        _check(capi.aclrtSetDevice(self.id), "aclrtSetDevice")
        ctx = ctypes.c_void_p()
        status = capi.aclrtGetCurrentContext(_byref(ctx))
        if status:
            err = make_error(status, "aclrtGetCurrentContext")
            _quiet(capi.aclrtResetDevice(self.id))
            raise err
        self.binding = _Binding(self, ctx.value)
        _tls.binding = self.binding
        if previous is not None and previous.state.binding is previous:
            previous.state.bind()       # aclrtSetDevice moved this thread; put it back

    def _close(self) -> None:
        stream, self.default_stream = self.default_stream, None
        if stream is not None:
            stream._close_quietly()
        self.binding = None
        self.lost = None
        _quiet(self._reset(self.id))

    def bind(self) -> None:
        """Make this device's context current on the calling thread."""
        b = self.binding
        if b is None:
            raise RuntimeError(f"device {self.id} has been released")
        if getattr(_tls, "binding", None) is not b:
            _check(self._set_ctx(b.ctx), "aclrtSetCurrentContext")
            _tls.binding = b

    def get_default_stream(self) -> "Stream":
        s = self.default_stream
        if s is None:
            with self.lock:
                if self.default_stream is None:
                    self.default_stream = Stream._create(self, default=True)
                s = self.default_stream
        return s


class _BindScope:
    """Bind a device for a release done from any thread, then put the thread's binding back."""
    __slots__ = ("state", "previous")

    def __init__(self, state: _DeviceState):
        self.state = state

    def __enter__(self):
        self.previous = getattr(_tls, "binding", None)
        self.state.bind()

    def __exit__(self, *exc):
        prev = self.previous
        if prev is not None and prev is not _tls.binding and prev.state.binding is prev:
            if not prev.state._set_ctx(prev.ctx):
                _tls.binding = prev


_states: dict[int, _DeviceState] = {}
_states_lock = threading.Lock()


def _state_for(device_id: int) -> _DeviceState:
    s = _states.get(device_id)
    if s is None:
        with _states_lock:
            s = _states.setdefault(device_id, _DeviceState(device_id))
    return s


def _bind_current(state: _DeviceState) -> None:
    """Hot-path form of ``state.bind()``."""
    if getattr(_tls, "binding", None) is not state.binding:
        state.bind()


# ------------------------------------------------------------------------------------------------
# Device
# ------------------------------------------------------------------------------------------------

class Device:
    """A reference on one device (``aclrtSetDevice`` / ``aclrtResetDevice`` counted for you).

    ``Device(1)`` holds a reference until :meth:`close` (or garbage collection); ``with device:``
    takes another one for the block, binds the calling thread to the device and makes it the
    thread's current device, and restores the previous device on exit.  The device is really reset
    when no Device object, stream, event or buffer refers to it any more.
    """

    def __init__(self, device_id: int = 0):
        if isinstance(device_id, Device):
            device_id = device_id.id
        device_id = _check_cint(int(device_id), "int32_t", "device_id", "pyaclnn.Device")
        self._state = _state_for(device_id)
        self._state.acquire()
        self._finalizer = _finalizer(self, self._state.release)
        self._saved: list = []

    # -- identity ---------------------------------------------------------------------------------
    @property
    def id(self) -> int:
        return self._state.id

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __repr__(self) -> str:
        return f"<pyaclnn.Device {self.id}{' (closed)' if self.closed else ''}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("pyaclnn.Device", self.id))

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Drop this object's reference (idempotent).

        Objects already dropped are released first (:mod:`pyaclnn._release`), so when this is the
        last reference the device is reset before ``close`` returns.
        """
        _release.flush()
        self._finalizer()

    def __enter__(self) -> "Device":
        self._require_open()
        self._state.acquire()
        self._saved.append((getattr(_tls, "device", None), getattr(_tls, "stream", None)))
        _tls.device = self
        _tls.stream = None
        self._state.bind()
        return self

    def __exit__(self, *exc) -> None:
        device, stream = self._saved.pop()
        _tls.device, _tls.stream = device, stream
        if device is not None and not device.closed:
            device._state.bind()
        self._state.release()

    def _require_open(self) -> None:
        if self.closed:
            raise RuntimeError(f"{self!r} is closed")

    # -- operations -------------------------------------------------------------------------------
    @property
    def default_stream(self) -> "Stream":
        """The per-device default stream (created on first use, released with the device)."""
        self._require_open()
        return self._state.get_default_stream()

    def synchronize(self) -> None:
        """``aclrtSynchronizeDevice``: wait for every stream of this device."""
        self._require_open()
        self._state.bind()
        status = _interruptible.wait(capi.aclrtSynchronizeDeviceWithTimeout, (),
                                     capi.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)   # Ctrl-C can interrupt it
        _check(status, "aclrtSynchronizeDevice")

    def mem_info(self, attr: int = capi.ACL_HBM_MEM) -> tuple[int, int]:
        """(free, total) bytes of device memory (``aclrtGetMemInfo``)."""
        self._require_open()
        self._state.bind()
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        _check(capi.aclrtGetMemInfo(attr, _byref(free), _byref(total)), "aclrtGetMemInfo")
        return free.value, total.value

    @staticmethod
    def count() -> int:
        return device_count()


_default_devices: dict[int, Device] = {}


def current_device() -> Device:
    """The calling thread's current device (``with Device(n):`` sets it); device 0 by default."""
    d = getattr(_tls, "device", None)
    if d is not None:
        return d
    d = _default_devices.get(0)
    if d is None:
        with _states_lock:
            d = _default_devices.get(0)
        if d is None:
            d = Device(0)
            _default_devices.setdefault(0, d)
            d = _default_devices[0]
    return d


def _resolve_device(device: "Device | int | None") -> Device:
    if device is None:
        return current_device()
    if isinstance(device, Device):
        return device
    return Device(int(device))


def current_stream() -> "Stream":
    """The calling thread's current stream: set by ``with stream:``, else the current device's
    default stream."""
    s = getattr(_tls, "stream", None)
    if s is not None and s._handle is not None:
        return s
    return current_device().default_stream


# ------------------------------------------------------------------------------------------------
# Memory pool (one per stream)
# ------------------------------------------------------------------------------------------------

_ROUND = 512                      # allocation granularity of the pool (bytes)
_LAST = (-1,)                     # map(list.pop, _LAST): move the last element inside one C call
_SIZE_MAX = 2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1
DEFAULT_POOL_LIMIT = 1 << 30      # cached bytes kept per stream before blocks go back to the device


def _round_up(n: int) -> int:
    return (n + _ROUND - 1) // _ROUND * _ROUND if n > 0 else _ROUND


class MemoryPool:
    """Caching, stream-ordered device allocator of one stream (workspaces and tensors).

    ``allocate(n)`` returns ``(ptr, size)``; ``free(ptr, size)`` puts the block back for later
    allocations **on the same stream** (work queued before the free runs first, in stream order).
    Blocks are kept by rounded size up to ``limit`` cached bytes; beyond that, or on
    :meth:`empty_cache`, the stream is synchronised and cached blocks are returned with ``aclrtFree``.
    The pool belongs to its stream: closing the stream empties it.
    """

    def __init__(self, state: _DeviceState, stream_handle: int, limit: int = DEFAULT_POOL_LIMIT):
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


def empty_cache(device: "Device | int | None" = None) -> int:
    """Give the device memory cached by pyaclnn's pools back to the device (``aclrtFree``), like
    ``torch.cuda.empty_cache()``; returns the bytes freed.

    Memory of closed or garbage-collected tensors and of finished workspaces stays in its stream's
    pool for reuse; this trims every pool (of ``device`` only, when given), after synchronising their
    streams.  Memory still used by live tensors is not touched.
    """
    check_runtime()
    _release.flush()                # memory of objects already collected goes back to its pool first
    wanted = None if device is None else (device.id if isinstance(device, Device) else int(device))
    freed = 0
    for pool in list(_pools):
        if not pool.closed and (wanted is None or pool._state.id == wanted):
            freed += pool.empty_cache()
    return freed


# ------------------------------------------------------------------------------------------------
# Stream
# ------------------------------------------------------------------------------------------------

def _release_stream(state: _DeviceState, handle: int, pool: MemoryPool, owned: bool, counted: bool,
                    plans: list) -> None:
    try:
        for plan in plans:
            plan()
        plans.clear()
        with _BindScope(state):
            _quiet(pool._sync(handle))
            pool._close()
            if owned:
                _quiet(capi_destroy_stream(handle))
    except Exception:       # noqa: BLE001 -- finalizers must not raise
        pass
    finally:
        if counted:
            state.release()


capi_destroy_stream: Any = None   # bound on first stream creation (kept for use during shutdown)


class Stream:
    """An ordered queue of device work (``aclrtCreateStream``), with its memory pool.

    ``Stream()`` creates a stream on the current device; ``Stream.wrap(handle)`` adopts one created
    elsewhere (torch_npu's current stream) without owning it.  ``with stream:`` makes it the
    calling thread's current stream for the block.  :meth:`close` synchronises, empties the pool and
    destroys the stream; garbage collection does the same.
    """

    def __init__(self, device: "Device | int | None" = None, *, priority: int = 0, flags: int = 0):
        priority = _check_cint(priority, "uint32_t", "priority", "pyaclnn.Stream")
        flags = _check_cint(flags, "uint32_t", "flags", "pyaclnn.Stream")
        dev = _resolve_device(device)
        dev._require_open()
        check_runtime()
        self._init(dev._state, priority, flags, owned=True, counted=True, handle=None)

    @classmethod
    def _create(cls, state: _DeviceState, default: bool) -> "Stream":
        self = cls.__new__(cls)
        self._init(state, 0, 0, owned=True, counted=not default, handle=None)
        self.is_default = default
        return self

    @classmethod
    def wrap(cls, handle: int, device: "Device | int | None" = None) -> "Stream":
        """A non-owning Stream for an existing ``aclrtStream`` (not destroyed by close())."""
        dev = _resolve_device(device)
        self = cls.__new__(cls)
        self._init(dev._state, 0, 0, owned=False, counted=True, handle=int(handle))
        return self

    def _init(self, state: _DeviceState, priority: int, flags: int, owned: bool, counted: bool,
              handle: int | None) -> None:
        global capi_destroy_stream
        self.is_default = False
        self.owned = owned
        if counted:
            state.acquire()
        try:
            if handle is None:
                state.bind()
                h = ctypes.c_void_p()
                if priority or flags:
                    _check(capi.aclrtCreateStreamWithConfig(_byref(h), priority, flags),
                           "aclrtCreateStreamWithConfig")
                else:
                    _check(capi.aclrtCreateStream(_byref(h)), "aclrtCreateStream")
                handle = h.value
        except BaseException:
            if counted:
                state.release()
            raise
        if capi_destroy_stream is None:
            capi_destroy_stream = capi.aclrtDestroyStream
        self._state = state
        self._handle: int | None = handle
        self._c_handle = ctypes.c_void_p(handle)      # pre-converted for hot-path C calls
        self.pool = MemoryPool(state, handle)
        self._plans: list = []            # finalizers of cached prepared calls (ops executor cache)
        self._users: weakref.WeakSet = weakref.WeakSet()   # prepared calls told when it closes
        self.exec_cache = None            # pyaclnn.ops executor cache of this stream, if enabled
        self.lock = threading.Lock()
        self._saved: list = []
        self._finalizer = _finalizer(self, _release_stream, state, handle, self.pool, owned,
                                           counted, self._plans)

    # -- identity ---------------------------------------------------------------------------------
    @property
    def handle(self) -> int:
        """The ``aclrtStream`` as an int (for capi calls)."""
        if self._handle is None:
            raise RuntimeError("stream is closed")
        return self._handle

    @property
    def device_id(self) -> int:
        return self._state.id

    @property
    def closed(self) -> bool:
        return self._handle is None

    def __repr__(self) -> str:
        what = "default " if self.is_default else ("" if self.owned else "external ")
        if self._handle is None:
            return f"<pyaclnn.Stream {what}(closed) device {self._state.id}>"
        return f"<pyaclnn.Stream {what}0x{self._handle:x} device {self._state.id}>"

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Synchronise, release cached memory and destroy the stream (idempotent)."""
        if self.is_default:
            raise RuntimeError("the default stream is released with its device")
        self._handle = None
        self._tell_users()
        self._finalizer()

    def _close_quietly(self) -> None:
        self._handle = None
        self._tell_users()
        self._finalizer()

    def _tell_users(self) -> None:
        """Prepared calls bound to this stream stop launching on it (their C path included)."""
        for user in list(self._users):
            user._on_stream_closed()

    def __enter__(self) -> "Stream":
        self._saved.append((getattr(_tls, "stream", None), getattr(_tls, "device", None)))
        _tls.stream = self
        return self

    def __exit__(self, *exc) -> None:
        _tls.stream, _ = self._saved.pop()

    # -- operations -------------------------------------------------------------------------------
    def synchronize(self) -> None:
        """Block until all work queued on this stream has run (``aclrtSynchronizeStream``).

        Raises the asynchronous failure of a queued task, if one happened. Ctrl-C interrupts the wait
        (``KeyboardInterrupt``); the queued work keeps running.
        """
        h = self.handle
        _bind_current(self._state)
        status = _interruptible.wait(capi.aclrtSynchronizeStreamWithTimeout, (h,),
                                     capi.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
        if status:
            raise make_error(status, "aclrtSynchronizeStream")

    def query(self) -> bool:
        """True when every queued task has run (``aclrtStreamQuery``)."""
        status = ctypes.c_int()
        _check(capi.aclrtStreamQuery(self.handle, _byref(status)), "aclrtStreamQuery")
        return status.value == capi.ACL_STREAM_STATUS_COMPLETE

    def wait_event(self, event: "Event") -> None:
        """Later work on this stream waits for ``event`` (``aclrtStreamWaitEvent``)."""
        _bind_current(self._state)
        _check(capi.aclrtStreamWaitEvent(self.handle, event.handle), "aclrtStreamWaitEvent")

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new timed one if None) on this stream and return it."""
        event = Event(device=self._state.id) if event is None else event
        event.record(self)
        return event


# ------------------------------------------------------------------------------------------------
# Event
# ------------------------------------------------------------------------------------------------

def _release_event(state: _DeviceState, handle: int, destroy) -> None:
    try:
        with _BindScope(state):
            _quiet(destroy(handle))
    except Exception:       # noqa: BLE001
        pass
    finally:
        state.release()


class Event:
    """A marker in a stream: ``record``, ``synchronize``, ``query``, ``elapsed_time``.

    ``timing=True`` (default) creates it with ``ACL_EVENT_TIME_LINE`` so that
    :meth:`elapsed_time` works.  Re-recording is allowed.
    """

    def __init__(self, *, timing: bool = True, device: "Device | int | None" = None):
        dev = _resolve_device(device)
        state = dev._state
        state.acquire()
        try:
            state.bind()
            h = ctypes.c_void_p()
            flag = capi.ACL_EVENT_TIME_LINE if timing else capi.ACL_EVENT_SYNC
            _check(capi.aclrtCreateEventWithFlag(_byref(h), flag), "aclrtCreateEventWithFlag")
        except BaseException:
            state.release()
            raise
        self._state = state
        self._handle: int | None = h.value
        self.timing = timing
        self._finalizer = _finalizer(self, _release_event, state, h.value, capi.aclrtDestroyEvent)

    @property
    def handle(self) -> int:
        if self._handle is None:
            raise RuntimeError("event is closed")
        return self._handle

    def close(self) -> None:
        self._handle = None
        self._finalizer()

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def record(self, stream: Stream | None = None) -> "Event":
        """Mark the work queued so far on ``stream`` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        _bind_current(stream._state)
        _check(capi.aclrtRecordEvent(self.handle, stream.handle), "aclrtRecordEvent")
        return self

    def synchronize(self) -> None:
        """Block until the recorded work has run."""
        status = _interruptible.wait(capi.aclrtSynchronizeEventWithTimeout, (self.handle,),
                                     capi.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT)   # Ctrl-C can interrupt it
        _check(status, "aclrtSynchronizeEvent")

    def query(self) -> bool:
        """True when the recorded work has run (a never-recorded event counts as complete)."""
        status = ctypes.c_int()
        _check(capi.aclrtQueryEventStatus(self.handle, _byref(status)), "aclrtQueryEventStatus")
        return status.value == capi.ACL_EVENT_RECORDED_STATUS_COMPLETE

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event to ``end`` (both recorded and completed)."""
        ms = ctypes.c_float()
        _check(capi.aclrtEventElapsedTime(_byref(ms), self.handle, end.handle), "aclrtEventElapsedTime")
        return float(ms.value)


# ------------------------------------------------------------------------------------------------
# Memory: what a device tensor points into
# ------------------------------------------------------------------------------------------------

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


def _drop_reference(ref: list) -> None:
    """Release the device state in ``ref`` once, however many paths try (emptied before use)."""
    items = ref[:]
    del ref[:]
    if items:
        items[0].release()


def _release_buffer(pool: MemoryPool, cell: list, size: int, streams: list, ref: list) -> None:
    try:
        if len(streams) > 1 and cell:
            _sync_others(streams)
        pool.free_cell(cell, size)
    except Exception:       # noqa: BLE001
        pass
    finally:
        streams.clear()
        _drop_reference(ref)


class DeviceBuffer(Memory):
    """Device memory from a stream's :class:`MemoryPool`, returned to it when released."""
    __slots__ = ("size",)

    def __init__(self, nbytes: int, stream: Stream | None = None):
        stream = current_stream() if stream is None else stream
        state = stream._state
        pool = stream.pool
        cell: list = []                 # the block's address (see MemoryPool.allocate_into)
        ref: list = []                  # the device reference, dropped once by whoever empties it
        self._finalizer = None
        try:
            state.acquire()
            ref.append(state)
            size = pool.allocate_into(nbytes, cell)
            super().__init__(cell[0], nbytes, [stream])
            self.size = size
            self._finalizer = _finalizer(self, _release_buffer, pool, cell, size, self.streams, ref)
        except BaseException:
            # Any exception, KeyboardInterrupt included. Both cells are emptied before use, so a
            # finalizer registered just before the interrupt finds nothing left to release.
            pool.free_cell(cell, nbytes)
            _drop_reference(ref)
            raise


def _release_external(streams: list, registration, owner) -> None:
    try:
        for s in streams:
            if s._handle is not None:
                with _BindScope(s._state):
                    _quiet(s.pool._sync(s._handle))
        if registration is not None:
            registration.release()
    except Exception:       # noqa: BLE001
        pass
    finally:
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


# ------------------------------------------------------------------------------------------------
# Host memory the emulator's kernels may address (stub only)
# ------------------------------------------------------------------------------------------------

_stub_fns: dict[str, Any] = {}


def _stub_fn(name: str, restype, argtypes):
    fn = _stub_fns.get(name)
    if fn is None:
        from ._loader import backend
        fn = backend().symbol(name)
        fn.restype = restype
        fn.argtypes = argtypes
        _stub_fns[name] = fn
    return fn


_registrations: dict[int, list] = {}      # base -> [nbytes, count]
_reg_lock = threading.Lock()


def _unregister(base: int) -> None:
    try:
        with _reg_lock:
            entry = _registrations.get(base)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1]:
                return
            del _registrations[base]
        _quiet(_stub_fns["pyaclnn_stub_mem_unregister"](base))
    except Exception:       # noqa: BLE001
        pass


class HostRegistration:
    """Host memory made addressable by the emulator's device code (zero-copy wrapping).

    Only the stub needs (and has) this: its "device memory" is host memory, but its kernels check
    that every address they touch is known to the runtime.  Ranges are counted by base address, so
    several tensors over one buffer share one registration.
    """

    def __init__(self, ptr: int, nbytes: int):
        if not is_stub():
            raise RuntimeError("host memory registration is an emulator feature; on a real toolkit "
                               "copy host data to the device instead")
        register = _stub_fn("pyaclnn_stub_mem_register", ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t])
        _stub_fn("pyaclnn_stub_mem_unregister", ctypes.c_int, [ctypes.c_void_p])
        lookup = _stub_fn("pyaclnn_stub_mem_lookup", ctypes.c_int,
                          [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p])
        self.ptr, self.nbytes, self.base = ptr, nbytes, None
        if _release.pending():
            _release.flush()    # registrations of dropped wrappers (maybe of this range) go first
        with _reg_lock:
            for base, entry in _registrations.items():
                if base <= ptr and ptr + nbytes <= base + entry[0]:
                    entry[1] += 1               # inside a range registered earlier: share it
                    self.base = base
                    break
            else:
                if nbytes and lookup(ptr, nbytes, None, None):
                    pass                        # device memory (aclrtMalloc): nothing to do
                elif nbytes:
                    _check(register(ptr, nbytes), "pyaclnn_stub_mem_register")
                    _registrations[ptr] = [nbytes, 1]
                    self.base = ptr
        self._finalizer = _finalizer(self, _unregister, self.base) if self.base else None

    def release(self) -> None:
        if self._finalizer is not None:
            self._finalizer()


def register_host_memory(ptr: int, nbytes: int) -> HostRegistration:
    """Make ``nbytes`` of host memory at ``ptr`` usable by device code (stub only)."""
    init()
    return HostRegistration(ptr, nbytes)


def stub_live_counts() -> dict[str, int]:
    """The emulator's live-object counters (``pyaclnn_stub_live_counts``); stub only."""
    from ._stubinfo import live_counts
    counts = live_counts()
    if counts is None:
        raise RuntimeError("live counts are an emulator feature")
    return counts


def iter_states() -> Iterator[_DeviceState]:
    """Device states known to this process (for diagnostics and tests)."""
    return iter(list(_states.values()))


_ = AclError   # re-exported for convenience in type hints of callers
